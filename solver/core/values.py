"""The value vocabulary (GAMESMAN's), shared by every engine, table and report.

Values are from the side to move, ordered ``lose < draw < tie < win``: **tie** = the game ended
level; **draw** = endless play, neither side can force a win.
"""

from __future__ import annotations

import numpy as np

LOSE, DRAW, TIE, WIN = 0, 1, 2, 3
#: value code -> name, as stored in tables and printed by the CLI
VALUE_NAMES: tuple[str, ...] = ("lose", "draw", "tie", "win")
VALUE_CODES: dict[str, int] = {name: code for code, name in enumerate(VALUE_NAMES)}
#: remoteness stored for draws (no remoteness); tables write it as null
NO_REMOTENESS = np.uint16(0xFFFF)

#: value of a position for the player who moved into it (the opponent of its side to move)
FLIP = np.array([WIN, DRAW, TIE, LOSE], dtype=np.int8)

