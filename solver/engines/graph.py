"""The graph of a variant as arrays: every position and the moves between them.

:class:`Graph` is what :func:`~solver.engines.enumerate.enumerate_positions` builds and every
engine (retrograde, value iteration, simultaneous, verify, the tiered solvers) reads; it lives
here, apart from any engine, so that the engines import it and never each other for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from solver.core.arrays import group_by
from solver.core.game import NodeKind


@dataclass
class Graph:
    """Every reachable position of a variant and the moves between them.

    Arrays are indexed by row ``i`` (positions sorted by ``keys``):

    * ``keys``: ``uint64[n]`` sorted position keys (canonical keys when ``symmetry``).
    * ``kind``: ``int8[n]`` :class:`NodeKind`; ``to_move``: ``int8[n]`` player.
    * ``ply``: ``uint16[n]`` breadth-first depth (fewest moves from the start).
    * ``offsets``: ``int64[n + 1]``, ``child``: ``int32[E]`` rows of each position's children
      (``int64`` from 2**31 - 1 positions on; engines read either).
    * ``probs``: ``float64[E]`` chance probabilities (1.0 elsewhere) or ``None``.
    * ``result``/``margin``: terminal result and score margin for ``to_move`` (see Expansion).
    * ``root``: row of the start position.
    * ``sim_rows``: ``int32[n]`` at simultaneous nodes the number of actions of player 0 (0
      elsewhere; see :class:`~solver.core.game.Expansion`), or ``None`` without simultaneous
      nodes. A simultaneous node's edges are its joint actions, row-major: ``sim_rows`` rows of
      ``degree // sim_rows`` columns.
    """

    keys: np.ndarray
    kind: np.ndarray
    to_move: np.ndarray
    ply: np.ndarray
    offsets: np.ndarray
    child: np.ndarray
    probs: np.ndarray | None
    result: np.ndarray
    margin: np.ndarray
    root: int
    symmetry: bool
    stats: dict = field(default_factory=dict)
    sim_rows: np.ndarray | None = None
    #: ``float64[n]``: at terminals the real payoff of ``to_move`` (:attr:`Outcome.payoffs`), or
    #: ``None`` when every end pays +1 / -1 / 0 by ``result``
    payoff: np.ndarray | None = None

    @property
    def n(self) -> int:
        return len(self.keys)

    @property
    def num_edges(self) -> int:
        return len(self.child)

    def parent_of_edge(self) -> np.ndarray:
        """``int64[E]``: the row each edge starts from."""
        return np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.offsets))

    def reverse(self) -> tuple[np.ndarray, np.ndarray]:
        """Parents in CSR form: ``(roffsets int64[n+1], redge int64[E])`` where
        ``redge[roffsets[c]:roffsets[c+1]]`` are the edge ids ending at row ``c``."""
        return group_by(self.child, self.n)

    def row_of(self, key: int) -> int:
        """Row of ``key``; a :class:`KeyError` when it is not a position of the graph (with
        symmetry, give the key of the canonical representative: ``game.encode(game.canonical(s))``)."""
        i = int(np.searchsorted(self.keys, np.uint64(key)))
        if i < self.n and int(self.keys[i]) == int(key):
            return i
        raise KeyError(f"key {key} is not a position of this graph (not reachable, or not the key of "
                       "a canonical representative when the graph was enumerated with symmetry)")

    def has(self, key: int) -> bool:
        """True when ``key`` is a position of the graph."""
        i = int(np.searchsorted(self.keys, np.uint64(key)))
        return i < self.n and int(self.keys[i]) == int(key)

    def nbytes(self) -> int:
        total = 0
        for name in ("keys", "kind", "to_move", "ply", "offsets", "child", "probs", "result", "margin",
                     "sim_rows"):
            arr = getattr(self, name)
            if arr is not None:
                total += arr.nbytes
        return total



def dead_end_message(key: int, kind: NodeKind, where: str = "") -> str:
    """The one-line refusal of a non-terminal position without moves."""
    return (f"position {key}{where} is a {kind.name.lower()} node with no moves: the game must "
            "declare it terminal (with an outcome) or give the player a pass move; `pyramids check` "
            "lists every protocol problem")
