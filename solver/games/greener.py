"""Greener (Néstor Romeral Andrés, 2017): two players capture stacks, greens are the prize.

Rules: /work/shared/rules/greener.md. The board starts full (one pyramid per cell: ``black``
black, ``white`` white, the rest green). A stack is controlled by the colour of its top pyramid.
The only move is a capture: a stack you control moves, whole, onto the first stack met in one of
the four orthogonal directions (any distance, empty cells crossed), of any colour. Capturing is
compulsory; with no capture you pass; two passes in succession end the game. Each player scores
the greens in the stacks they control; more wins, then (``tiebreak=tallest``) the player with the
tallest stack; still level is a tie.

Representation
    A cell is an ``int`` *code* (:func:`stack_code`): 0 empty, 1 a single green pyramid, 2/3 a
    single black/white pyramid, and from 4 on a black- or white-topped stack of height ``h >= 2``
    holding ``g <= h - 1`` greens, ordered by ``(h, g, colour)``. That is all the rules need: only
    top colours, heights and green counts matter, and a green-topped stack is always one original
    green pyramid (greens never move; a capture puts the mover's colour on top).
    A :class:`GreenerState` is the row-major tuple of codes (row 0 at the bottom, so cell 0 is
    ``a1``), the player to move, and the number of passes just played in succession (2 = over).
    With ``setup=all`` the start is a chance node (``root=True``) whose outcomes are the setups,
    one per symmetry class, weighted by class size.

Keys
    Heights always sum to the number of cells ``n`` and greens to the number of green pyramids
    ``G``, so the board is ranked exactly among all code sequences with those two totals
    (a lexicographic ranking by dynamic programming over "cells left, height left, greens left").
    ``key = (rank * 2 + to_move) * 3 + passes``; the setup=all chance root is the next integer
    after the largest board key. Ranking is lexicographic in the codes, so the canonical image
    (smallest key) is simply the smallest code tuple among the images.
"""

from __future__ import annotations

import itertools
import math
import random
from bisect import bisect_right
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, lru_cache
from operator import itemgetter
from typing import Any, Callable, ClassVar, Mapping, Union

import numpy as np
from numba import njit

from solver.core.game import Chance, Expansion, Game, NodeKind, Outcome, Playout, Result
from solver.core.picture import Piece, Picture
from solver.core.arrays import unique_counts
from solver.core.symmetry import cell_name, grid_rays, grid_symmetry_array, parse_cell
from solver.core.variant import Param, Variant
from solver.games._greener_jit import (board_tier_parts, expand_kernel, playout_kernel, tier_id, unrank_memory,
                                      unrank_sorted)
from solver.errors import IllegalMoveError, TooBigError, VariantError
from solver.core.uct_jit import CompiledRules
from solver.games._greener_jit import TREE_PARTS

BLACK, WHITE, GREEN = 0, 1, 2
#: cell codes of the simple cells (see the module docstring)
EMPTY, GREEN_PYRAMID, BLACK_PYRAMID, WHITE_PYRAMID = 0, 1, 2, 3
#: the action of a player without a capture
PASS = "pass"
#: most arrangements ``setup=all`` will list (the 4x4 4+4+8 board has 900,900)
MAX_SETUPS = 5_000_000

#: the largest board (in cells) that gets keys. The ranker's counting tables take time growing as
#: cells**5 (36 cells: 1.4 s to build, 40: 2.2 s), and past 36 cells only variants with at most 3
#: black and white pyramids in all (a game with next to nothing to capture) would fit 64 bits
MAX_KEY_CELLS = 36

#: the largest board side: columns are named by the letters a..z
MAX_SIDE = 26
SIDE_BOUNDS = "boards have 1 to 26 rows and columns: columns are named by the letters a..z"
_COUNT_BOUNDS = "none to 676: the board starts full, one pyramid a cell, and a 26x26 board has 676"

_LETTER = {BLACK: "B", WHITE: "W", GREEN: "G"}
#: colour keys of :class:`solver.core.picture.Piece`
_COLOUR_KEY = {BLACK: "black", WHITE: "white", GREEN: "green"}
_LAYOUT_CODE = {"B": BLACK_PYRAMID, "W": WHITE_PYRAMID, "G": GREEN_PYRAMID}
_LAYOUT_LETTER = {code: letter for letter, code in _LAYOUT_CODE.items()}

#: a capture ``(from_cell, to_cell)``, ``PASS``, or (at the setup=all root) a layout tuple of codes
Action = Union[tuple[int, ...], str]


class GreenerTooBigError(TooBigError, VariantError):
    """The variant is valid, but its positions (or setups) cannot be keyed or listed exactly."""


# --- cell codes -----------------------------------------------------------------------------
def stack_code(colour: int, height: int, greens: int) -> int:
    """The cell code of a stack with top ``colour``, ``height`` pyramids and ``greens`` greens.

    Parameters
    ----------
    colour : int
        ``BLACK``, ``WHITE`` or ``GREEN`` (green only as a single pyramid).
    height, greens : int
        Pyramids in the stack and green pyramids among them (a black/white top is not green,
        so ``greens <= height - 1``).
    """
    if colour == GREEN:
        if (height, greens) != (1, 1):
            raise ValueError("a green-topped stack is always a single green pyramid")
        return GREEN_PYRAMID
    if colour not in (BLACK, WHITE) or height < 1 or not 0 <= greens <= height - 1:
        raise ValueError(f"no stack with colour={colour}, height={height}, greens={greens}")
    if height == 1:
        return BLACK_PYRAMID if colour == BLACK else WHITE_PYRAMID
    return height * height - height + 2 + 2 * greens + colour


@lru_cache(maxsize=None)
def stack_parts(code: int) -> tuple[int, int, int] | None:
    """Inverse of :func:`stack_code`: ``(colour, height, greens)``, or ``None`` for an empty cell."""
    if code < 0:
        raise ValueError(f"bad cell code {code}")
    if code == EMPTY:
        return None
    if code == GREEN_PYRAMID:
        return (GREEN, 1, 1)
    if code in (BLACK_PYRAMID, WHITE_PYRAMID):
        return (code - BLACK_PYRAMID, 1, 0)
    h = 2
    while (h + 1) * (h + 1) - (h + 1) + 2 <= code:
        h += 1
    offset = code - (h * h - h + 2)
    return (offset % 2, h, offset // 2)


def codes_up_to_height(height: int) -> int:
    """How many cell codes have a height ``<= height`` (codes are ordered by height)."""
    return 1 if height <= 0 else height * height + height + 2


# --- states ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class GreenerState:
    """A position: cell codes (row-major, row 0 at the bottom), side to move, passes in a row.

    ``passes`` is 0 after a capture, 1 after a single pass and 2 after two passes in succession
    (the game is over). ``root=True`` marks the setup=all chance node (``board`` is then empty).
    """

    board: tuple[int, ...]
    to_move: int = BLACK
    passes: int = 0
    root: bool = False


# --- exact ranking of boards ----------------------------------------------------------------
class BoardRanker:
    """Exact lexicographic ranking of cell-code sequences with fixed height and green totals.

    ``count(m, H, Gr)`` is the number of ways to fill ``m`` cells with codes whose heights sum to
    ``H`` and whose greens sum to ``Gr``; the rank of a board adds, cell by cell, the number of
    completions that start with a smaller code. Cells are interchangeable here, so every table
    depends only on how many cells are left.
    """

    def __init__(self, cells: int, greens: int) -> None:
        self.cells = cells
        self.greens = greens
        n = cells
        # options by (height, greens) with their multiplicity (black and white tops count twice)
        self._weights: list[tuple[int, int, int]] = [(0, 0, 1), (1, 1, 1), (1, 0, 2)]
        self._weights += [(h, g, 2) for h in range(2, n + 1) for g in range(h)]
        counts = [[[0] * (greens + 1) for _ in range(n + 1)]]
        counts[0][0][0] = 1
        for m in range(1, n + 1):
            prev = counts[-1]
            cur = [[0] * (greens + 1) for _ in range(n + 1)]
            for big_h in range(n + 1):
                row = cur[big_h]
                for h, g, w in self._weights:
                    if h > big_h:
                        break
                    src = prev[big_h - h]
                    for gr in range(g, greens + 1):
                        v = src[gr - g]
                        if v:
                            row[gr] += w * v
            counts.append(cur)
        self._counts = counts
        self._cum: dict[tuple[int, int, int], list[int]] = {}
        self._heights = [0] * codes_up_to_height(n)
        self._greens = [0] * codes_up_to_height(n)
        for code in range(1, codes_up_to_height(n)):
            _, h, g = stack_parts(code)  # type: ignore[misc]
            self._heights[code] = h
            self._greens[code] = g

    @property
    def size(self) -> int:
        """Number of boards of ``cells`` cells with total height ``cells`` and ``greens`` greens."""
        return self._counts[self.cells][self.cells][self.greens]

    def _cumulative(self, m: int, big_h: int, gr: int) -> list[int]:
        """``cum[c]`` = completions of ``m`` cells (``big_h`` height, ``gr`` greens left) whose
        first code is smaller than ``c``; one entry per code of height <= ``big_h``, plus the total."""
        key = (m, big_h, gr)
        cum = self._cum.get(key)
        if cum is None:
            rest = self._counts[m - 1]
            cum = [0]
            total = 0
            for code in range(codes_up_to_height(big_h)):
                g = self._greens[code]
                if g <= gr:
                    total += rest[big_h - self._heights[code]][gr - g]
                cum.append(total)
            self._cum[key] = cum
        return cum

    def rank(self, board: tuple[int, ...]) -> int:
        """The index of ``board`` among all valid boards in lexicographic order of codes."""
        if len(board) != self.cells:
            raise ValueError(f"board has {len(board)} cells, expected {self.cells}")
        big_h, gr, r = self.cells, self.greens, 0
        m = self.cells
        for code in board:
            cum = self._cumulative(m, big_h, gr)
            if not 0 <= code < len(cum) - 1:
                raise ValueError(f"cell code {code} does not fit the remaining height {big_h}")
            r += cum[code]
            big_h -= self._heights[code]
            gr -= self._greens[code]
            if gr < 0:
                raise ValueError("board holds more greens than the variant has")
            m -= 1
        if big_h or gr:
            raise ValueError("board heights/greens do not add up to the variant's pyramids")
        return r

    def unrank(self, r: int) -> tuple[int, ...]:
        """Inverse of :meth:`rank`."""
        if not 0 <= r < self.size:
            raise ValueError(f"board rank {r} out of range [0, {self.size})")
        big_h, gr = self.cells, self.greens
        out = []
        for m in range(self.cells, 0, -1):
            cum = self._cumulative(m, big_h, gr)
            code = bisect_right(cum, r) - 1
            r -= cum[code]
            out.append(code)
            big_h -= self._heights[code]
            gr -= self._greens[code]
        return tuple(out)


def board_lower_bound(cells: int, greens: int) -> int:
    """A lower bound of :attr:`BoardRanker.size`, exact and cheap (to refuse keys that cannot fit
    before any table is built).

    Two families of boards are counted: every cell a single pyramid (the greens on any
    ``greens`` cells, black or white on the others); and, when there is a non-green pyramid,
    ``j <= greens`` empty cells (any of them) with one black or white pyramid on ``j`` greens and
    every other cell a single pyramid."""
    coloured = cells - greens
    singles = math.comb(cells, greens) * 2**coloured
    if coloured == 0:
        return singles
    return max(singles, sum(math.comb(cells, j) for j in range(greens + 1)))


def estimate_boards(cells: int, greens: int) -> float:
    """Floating-point :attr:`BoardRanker.size` (fast; used to refuse keys that cannot fit)."""
    table = np.zeros((cells + 1, greens + 1))
    table[0, 0] = 1.0
    weights = np.zeros((cells + 1, greens + 1))
    weights[0, 0] = 1.0
    if greens >= 1:
        weights[1, 1] = 1.0
    weights[1, 0] = 2.0
    for h in range(2, cells + 1):
        weights[h, : min(h, greens + 1)] = 2.0
    nz = [(h, g, weights[h, g]) for h in range(cells + 1) for g in range(greens + 1) if weights[h, g]]
    for _ in range(cells):
        new = np.zeros_like(table)
        for h, g, w in nz:
            new[h:, g:] += w * table[: cells + 1 - h, : greens + 1 - g]
        table = new
    return float(table[cells, greens])


# --- layouts --------------------------------------------------------------------------------
def parse_layout(text: str, rows: int, cols: int) -> tuple[int, ...]:
    """A layout like ``"BWG/GGB/WGG"`` (rows top first, letters B/W/G) as a row-major board.

    Raises :class:`VariantError` with the fix when the text has the wrong shape or letters.
    """
    parts = [p.strip().upper() for p in text.strip().split("/")]
    example = "/".join(["BWG"[: min(cols, 3)].ljust(cols, "G")] * rows)
    if len(parts) != rows:
        raise VariantError(
            f"setup layout {text!r} has {len(parts)} rows but the board has rows={rows}; "
            f"write {rows} rows of {cols} letters separated by '/', e.g. setup={example}"
        )
    board = [EMPTY] * (rows * cols)
    for i, part in enumerate(parts):
        r = rows - 1 - i  # the first row written is the top row
        if len(part) != cols:
            raise VariantError(
                f"setup layout row {i + 1} ({part!r}) has {len(part)} cells but cols={cols}; "
                f"e.g. setup={example}"
            )
        for c, letter in enumerate(part):
            if letter not in _LAYOUT_CODE:
                raise VariantError(
                    f"setup layout {text!r} has the letter {letter!r}; use only B, W and G"
                )
            board[r * cols + c] = _LAYOUT_CODE[letter]
    return tuple(board)


def layout_text(board: tuple[int, ...], rows: int, cols: int) -> str:
    """Inverse of :func:`parse_layout` for a full board of single pyramids."""
    out = []
    for r in range(rows - 1, -1, -1):
        out.append("".join(_LAYOUT_LETTER[board[r * cols + c]] for c in range(cols)))
    return "/".join(out)


# --- the game -------------------------------------------------------------------------------
class Greener(Game[GreenerState]):
    """Greener on a ``rows`` x ``cols`` board, from one setup or over all setups (chance root)."""

    name: ClassVar[str] = "greener"
    title: ClassVar[str] = "Greener: capture onto any stack in line; score the greens you control"
    params: ClassVar[tuple[Param, ...]] = (
        Param("rows", "int", 6, "board rows", min=1, max=MAX_SIDE, bounds=SIDE_BOUNDS),
        Param("cols", "int", 6, "board columns", min=1, max=MAX_SIDE, bounds=SIDE_BOUNDS),
        Param("black", "int", 9, "black pyramids (Black's colour)", min=0, max=MAX_SIDE**2,
              bounds=_COUNT_BOUNDS),
        Param("white", "int", 9, "white pyramids (White's colour)", min=0, max=MAX_SIDE**2,
              bounds=_COUNT_BOUNDS),
        Param(
            "setup",
            "str",
            "all",
            "all (chance over every setup), random (with seed) or a layout like BWG/GGB/WGG "
            "(rows top first)",
            choices=("all", "random"),
            free=True,
        ),
        Param("seed", "int", 0, "random seed for setup=random", min=0, max=2**64 - 1,
              bounds="a 64-bit seed, not negative: a negative one deals the setup of its absolute value"),
        Param(
            "tiebreak",
            "str",
            "tallest",
            "level greens: tallest stack wins (tallest) or tie (none)",
            choices=("tallest", "none"),
        ),
    )
    presets: ClassVar[Mapping[str, Mapping[str, Any]]] = {
        "3x3": {"rows": 3, "cols": 3, "black": 2, "white": 2, "setup": "all"},
        "3x3-3": {"rows": 3, "cols": 3, "black": 3, "white": 3, "setup": "all"},
        "3x4": {"rows": 3, "cols": 4, "black": 3, "white": 3, "setup": "all"},
    }
    largest_preset: ClassVar[str] = "3x4"
    #: the start is a random layout (setup=random/all) unless given: chance before the first
    #: move only; no secret choices
    chance: ClassVar[Chance] = "setup"
    secret_choices: ClassVar[bool] = False
    #: a capture adds one to the captures, a pass one to the passes: every move leaves its tier
    tiers_rise_strictly: ClassVar[bool] = True
    seat_names: ClassVar[tuple[str, ...]] = ("Black", "White")
    rules_version: ClassVar[str] = "1"
    scored: ClassVar[bool] = True
    num_players = 2
    expand_releases_gil: ClassVar[bool] = True

    def __init__(self, variant: Variant) -> None:
        super().__init__(variant)
        self.rows: int = variant.rows
        self.cols: int = variant.cols
        self.cells: int = self.rows * self.cols
        self.black: int = variant.black
        self.white: int = variant.white
        self.green: int = self.cells - self.black - self.white
        self.tiebreak: str = variant.tiebreak
        mode = variant.setup.strip().lower()
        self.setup_mode: str = mode if mode in ("all", "random") else "layout"
        self.layout: tuple[int, ...] | None = None
        if self.setup_mode == "layout":
            self.layout = parse_layout(variant.setup, self.rows, self.cols)
        elif self.setup_mode == "random":
            pool = (
                [BLACK_PYRAMID] * self.black
                + [WHITE_PYRAMID] * self.white
                + [GREEN_PYRAMID] * self.green
            )
            random.Random(variant.seed).shuffle(pool)
            self.layout = tuple(pool)
        self._rays = self._build_rays()
        gathers = grid_symmetry_array(self.rows, self.cols)
        self._sym_gathers: list[Callable[[tuple[int, ...]], tuple[int, ...]]] = [
            _gatherer(row.tolist()) for row in gathers
        ]
        self._ranker: BoardRanker | None = None
        self._key_refusal: str | None = None  # why keys do not fit (found once, by _key_problem)
        self._setups: list[tuple[tuple[int, ...], Fraction]] | None = None
        self._tables: dict[str, Any] | None = None
        self._playout_tables: tuple[np.ndarray, ...] | None = None

    # --- variant checks ----------------------------------------------------------------
    def check_variant(self, variant: Variant) -> None:
        """Refuse impossible counts and bad layouts; warn outside the rulebook's range."""
        cells = variant.rows * variant.cols
        black, white = variant.black, variant.white
        if black + white > cells:
            raise VariantError(
                f"black={black} + white={white} pyramids do not fit on a "
                f"{variant.rows}x{variant.cols} board ({cells} cells); lower black/white "
                "or enlarge the board"
            )
        green = cells - black - white
        mode = variant.setup.strip().lower()
        if mode not in ("all", "random"):
            board = parse_layout(variant.setup, variant.rows, variant.cols)
            nb, nw = board.count(BLACK_PYRAMID), board.count(WHITE_PYRAMID)
            if (nb, nw) != (black, white):
                raise VariantError(
                    f"setup layout has {nb} B and {nw} W but black={black}, white={white}; "
                    f"add --set black={nb} --set white={nw} (or fix the layout)"
                )
        if not (black == white and 4 * black >= cells and 3 * black <= cells and green >= black):
            self.warnings.append(
                f"black={black}, white={white} on {variant.rows}x{variant.cols} is outside the "
                f"rulebook's range (black = white = n with {cells}/4 <= n <= {cells}/3 and "
                f"green >= n); allowed, but not the game as published"
            )

    def _build_rays(self) -> list[tuple[tuple[int, ...], ...]]:
        """For every cell, the cells met going north, east, south and west (nearest first)."""
        return list(grid_rays(self.rows, self.cols, ((1, 0), (0, 1), (-1, 0), (0, -1))))

    # --- setups ------------------------------------------------------------------------
    @property
    def num_setups(self) -> int:
        """Number of distinct starting arrangements (the multinomial cells! / (b! w! g!))."""
        return math.factorial(self.cells) // (
            math.factorial(self.black) * math.factorial(self.white) * math.factorial(self.green)
        )

    def setup_classes(self) -> list[tuple[tuple[int, ...], int]]:
        """Every setup symmetry class once: ``(canonical board, multiplicity)``, sorted by key.

        The multiplicities sum to :attr:`num_setups`. Computed with numpy over all arrangements
        (each board written as a base-4 number, most significant cell first, so the smallest
        number is the smallest code tuple, i.e. the canonical image).
        """
        total = self.num_setups
        if total > MAX_SETUPS or self.cells > 31:
            raise GreenerTooBigError(
                f"setup=all on {self.rows}x{self.cols} with {self.black}+{self.white} has "
                f"{total:,} setups, too many to list (limit {MAX_SETUPS:,}); use an explicit "
                "layout or setup=random with a seed"
            )
        n = self.cells
        boards = np.full((total, n), GREEN_PYRAMID, dtype=np.int8)
        combos = list(itertools.combinations(range(n - self.black), self.white))
        rest_combos = np.array(combos, dtype=np.int64).reshape(len(combos), self.white)
        row = 0
        all_cells = np.arange(n)
        for blacks in itertools.combinations(range(n), self.black):
            rest = np.delete(all_cells, list(blacks))
            k = len(rest_combos)
            block = boards[row : row + k]
            block[:, list(blacks)] = BLACK_PYRAMID
            if self.white:
                rows_idx = np.repeat(np.arange(k), self.white)
                block[rows_idx, rest[rest_combos].ravel()] = WHITE_PYRAMID
            row += k
        assert row == total
        weights = 4 ** np.arange(n - 1, -1, -1, dtype=np.int64)
        best = None
        for gather in grid_symmetry_array(self.rows, self.cols):
            value = np.zeros(total, dtype=np.int64)
            for cell in range(n):  # column by column keeps the temporaries small
                value += boards[:, gather[cell]].astype(np.int64) * weights[cell]
            best = value if best is None else np.minimum(best, value)
        uniq, counts = unique_counts(best)
        out = []
        for value, count in zip(uniq.tolist(), counts.tolist()):
            digits = []
            for _ in range(n):
                value, d = divmod(value, 4)
                digits.append(d)
            out.append((tuple(reversed(digits)), int(count)))
        return out

    def too_big(self) -> str | None:
        why = self._key_problem()
        if why is not None:
            return why
        if self.setup_mode == "all" and self.num_setups > MAX_SETUPS:
            return f"its {self.num_setups:,} setups are too many to list (limit {MAX_SETUPS:,})"
        if self.setup_mode == "all" and self.cells > 31:
            return (f"setup=all lists the setups of boards of at most 31 cells (a {self.rows}x{self.cols} "
                    f"board has {self.cells})")
        return None

    # --- keys --------------------------------------------------------------------------
    def _key_problem(self) -> str | None:
        """Why the positions get no 64-bit keys, or ``None`` (then :attr:`ranker` is built). The
        checks go from cheap to dear: the board's size, an exact lower bound of the boards, the
        float estimate (under a second up to 36 cells), the exact count (1.4 s at 36 cells)."""
        if self._ranker is not None or self._key_refusal is not None:
            return self._key_refusal
        too_many = f"a {self.rows}x{self.cols} board with {self.green} greens has too many positions for 64-bit keys"
        if self.cells > MAX_KEY_CELLS:
            self._key_refusal = (f"a {self.rows}x{self.cols} board has {self.cells} cells, and keys are made for "
                                 f"boards of at most {MAX_KEY_CELLS}")
        elif board_lower_bound(self.cells, self.green) * 6 + 1 > 2**64 or (
                estimate_boards(self.cells, self.green) * 6 > 2.0**64 * 1.001):
            self._key_refusal = too_many
        else:
            ranker = BoardRanker(self.cells, self.green)
            if ranker.size * 6 + 1 > 2**64:
                self._key_refusal = too_many
            else:
                self._ranker = ranker
        return self._key_refusal

    @property
    def ranker(self) -> BoardRanker:
        """The board ranker; raises :class:`GreenerTooBigError` when keys cannot fit 64 bits."""
        why = self._key_problem()
        if why is not None:
            raise GreenerTooBigError(f"{why}; pick a board of at most about 20 cells")
        assert self._ranker is not None
        return self._ranker

    @property
    def root_key(self) -> int:
        """The key of the setup=all chance root (one past the largest position key)."""
        return self.ranker.size * 6

    def encode(self, state: GreenerState) -> int:
        if state.root:
            return self.root_key
        return (self.ranker.rank(state.board) * 2 + state.to_move) * 3 + state.passes

    def decode(self, key: int) -> GreenerState:
        key = int(key)
        if key == self.root_key and self.setup_mode == "all":
            return GreenerState((), BLACK, 0, True)
        if not 0 <= key < self.root_key:
            raise ValueError(f"{key} is not a greener key of {self.variant.label()}")
        rest, passes = divmod(key, 3)
        rank, to_move = divmod(rest, 2)
        return GreenerState(self.ranker.unrank(rank), to_move, passes)

    # --- the rules ---------------------------------------------------------------------
    def initial_state(self) -> GreenerState:
        if self.layout is None:
            return GreenerState((), BLACK, 0, True)
        return GreenerState(self.layout, BLACK, 0)

    def node_kind(self, state: GreenerState) -> NodeKind:
        if state.root:
            return NodeKind.CHANCE
        if state.passes >= 2:
            return NodeKind.TERMINAL
        return NodeKind.DECISION

    def to_move(self, state: GreenerState) -> int:
        return state.to_move

    def captures(self, state: GreenerState) -> list[tuple[int, int]]:
        """Every capture of the side to move: ``(from, to)`` with ``to`` the first stack met in
        one of the four directions from a stack the mover controls (ordered by from-cell, then
        north, east, south, west)."""
        board = state.board
        player = state.to_move
        own = BLACK_PYRAMID if player == BLACK else WHITE_PYRAMID
        out = []
        for src, code in enumerate(board):
            if code < 2 or (code - own) % 2:  # empty, green, or the opponent's top
                continue
            for ray in self._rays[src]:
                for dst in ray:
                    if board[dst]:
                        out.append((src, dst))
                        break
        return out

    def legal_actions(self, state: GreenerState) -> list[Action]:
        if state.root or state.passes >= 2:
            return []
        caps: list[Action] = list(self.captures(state))
        return caps if caps else [PASS]

    def apply(self, state: GreenerState, action: Action) -> GreenerState:
        if state.root:
            board = tuple(action)  # type: ignore[arg-type]
            self._check_setup_board(board)
            return GreenerState(board, BLACK, 0)
        if state.passes >= 2:
            raise IllegalMoveError("the game is over; no move can be played")
        if action == PASS:
            if self.captures(state):
                raise IllegalMoveError("capturing is compulsory: you cannot pass while a capture exists")
            return GreenerState(state.board, 1 - state.to_move, state.passes + 1)
        src, dst = action  # type: ignore[misc]
        if (src, dst) not in self.captures(state):
            raise IllegalMoveError(
                f"{self.action_name(state, action)} is not a capture here; see the legal moves"
            )
        board = list(state.board)
        c1, h1, g1 = stack_parts(board[src])  # type: ignore[misc]
        _, h2, g2 = stack_parts(board[dst])  # type: ignore[misc]
        board[src] = EMPTY
        board[dst] = stack_code(c1, h1 + h2, g1 + g2)
        return GreenerState(tuple(board), 1 - state.to_move, 0)

    def _check_setup_board(self, board: tuple[int, ...]) -> None:
        """A chance outcome must be a full board of single pyramids with the variant's counts."""
        if (
            len(board) != self.cells
            or any(code not in (GREEN_PYRAMID, BLACK_PYRAMID, WHITE_PYRAMID) for code in board)
            or board.count(BLACK_PYRAMID) != self.black
            or board.count(WHITE_PYRAMID) != self.white
        ):
            raise IllegalMoveError(
                f"not a setup of this variant: need {self.black} B, {self.white} W and "
                f"{self.green} G on {self.rows}x{self.cols}"
            )

    def chance_outcomes(self, state: GreenerState) -> list[tuple[Action, Fraction]]:
        if not state.root:
            raise ValueError("only the setup=all root is a chance node")
        if self._setups is None:
            total = self.num_setups
            self._setups = [
                (board, Fraction(count, total)) for board, count in self.setup_classes()
            ]
        return list(self._setups)  # type: ignore[arg-type]

    def chance_counts(self, state: GreenerState) -> list[int] | None:
        """Arrangements in each setup class, in the order of :meth:`chance_outcomes`."""
        return [int(p * self.num_setups) for _, p in self.chance_outcomes(state)]

    def scores(self, state: GreenerState) -> tuple[int, int]:
        """Greens in the stacks each player controls: ``(black, white)``."""
        score = [0, 0]
        for code in state.board:
            if code >= 2:
                colour, _, greens = stack_parts(code)  # type: ignore[misc]
                score[colour] += greens
        return score[0], score[1]

    def tallest(self, state: GreenerState) -> tuple[int, int]:
        """Height of the tallest stack each player controls (0 with none): ``(black, white)``."""
        tall = [0, 0]
        for code in state.board:
            if code >= 2:
                colour, height, _ = stack_parts(code)  # type: ignore[misc]
                tall[colour] = max(tall[colour], height)
        return tall[0], tall[1]

    def outcome(self, state: GreenerState) -> Outcome:
        scores = self.scores(state)
        b, w = scores
        if b == w and self.tiebreak == "tallest":
            b, w = self.tallest(state)
        if b > w:
            return Outcome.win_for(BLACK, 2, scores)
        if w > b:
            return Outcome.win_for(WHITE, 2, scores)
        return Outcome((Result.TIE, Result.TIE), scores)

    # --- compiled random play ----------------------------------------------------------
    def random_playout(self, state: GreenerState, max_choices: int, seed: int) -> Playout | None:
        """Random captures (and passes) from ``state`` in the compiled kernel
        (:func:`solver.games._greener_jit.playout_kernel`), any board size; ``None`` at the
        setup=all root (a chance node)."""
        if state.root:
            return None
        self._playout_arrays()
        cap, seed, taken, counts = Playout.buffers(max_choices, seed)
        board = np.array(state.board, dtype=np.int64)
        player, passes, moves = playout_kernel(board, state.to_move, state.passes, cap, seed,
                                               *self._playout_tables, taken, counts)
        return Playout.of(GreenerState(tuple(board.tolist()), int(player), int(passes)), moves, taken, counts)

    def _playout_arrays(self) -> tuple[np.ndarray, ...]:
        """Each code's colour, height and greens, and the capture rays, as arrays (built once)."""
        if self._playout_tables is None:
            parts = [stack_parts(code) or (-1, 0, 0) for code in range(codes_up_to_height(self.cells))]
            self._playout_tables = (*(np.array(column, dtype=np.int64) for column in zip(*parts)),
                                    *self._capture_rays())
        return self._playout_tables

    def compiled_rules(self) -> CompiledRules:
        """The compiled parts of the rules for MCTS's compiled tree (below the setup, every
        position is a decision or the end): the position as the board, the side to move and the
        passes; move codes: the capture along ray ``i`` of :meth:`_capture_rays` (a ray gives at
        most one capture), ``-1`` the pass."""
        return self._tree_rules

    @cached_property
    def _tree_rules(self) -> CompiledRules:
        """:meth:`compiled_rules`, built once."""
        tables = self._playout_arrays()
        pair_src, pair_off, pair_cells = tables[3:]
        params = (*tables, self.tiebreak == "tallest", int(self.green))
        ray_of = {}
        for i, src in enumerate(pair_src.tolist()):
            for dst in pair_cells[pair_off[i]:pair_off[i + 1]].tolist():
                ray_of[(src, dst)] = i

        def encode(state: GreenerState) -> np.ndarray:
            return np.array([*state.board, state.to_move, state.passes], dtype=np.int64)

        def code(state: GreenerState, action: Action) -> int:
            return -1 if action == PASS else ray_of[tuple(action)]  # type: ignore[arg-type]

        def action(state: GreenerState, c: int) -> Action:
            if c < 0:
                return PASS
            src = int(pair_src[c])
            dst = next(x for x in pair_cells[pair_off[c]:pair_off[c + 1]].tolist() if state.board[x])
            return (src, dst)

        return CompiledRules(parts=TREE_PARTS, params=params, encode=encode, max_branch=max(1, len(pair_src)),
                             code=code, action=action)

    # --- tiers -------------------------------------------------------------------------
    # Every capture merges two stacks (one more empty cell), and nothing ever splits a stack or
    # uncovers a green, so four quantities never fall along a move: the captures made ``c``
    # (empty cells), the green pyramids captured ``x`` (single greens gone; at most one per
    # capture), the height ``h`` of the tallest stack, and the passes in a row ``p`` (a pass
    # raises it, a capture resets it but raises ``c``, the major digit). The tier is the
    # mixed-radix number ``((c * (G + 1) + x) * (cells + 1) + h) * 3 + p``: a capture raises
    # it, a pass raises it, so **no move stays inside a tier** (the game is acyclic anyway).
    # The setup=all root (no board: every quantity 0) is tier 0, below every setup (tier 3).
    # Symmetries only move cells, so images share a tier.

    def tier_of(self, keys: np.ndarray) -> np.ndarray:
        """``int64[len(keys)]``: ``((captures * (G + 1) + greens captured) * (cells + 1) + tallest
        stack) * 3 + passes`` of each key (0 for the setup=all root); strictly rises along every
        move. Compiled (numba): unranks each board once, no Python per key."""
        keys = np.asarray(keys, dtype=np.uint64)
        out = np.zeros(len(keys), dtype=np.int64)
        if len(keys) == 0:
            return out
        root = self.root_key
        if int(keys.max()) > root or (self.setup_mode != "all" and int(keys.max()) == root):
            raise ValueError("key out of range for this variant")
        t = self._batch_tables()
        s_gr, s_h, s_m = t["stride"]
        _tier_kernel(keys, np.uint64(root), self.cells, self.green, t["ncodes"], t["cum"], s_m, s_h,
                     s_gr, t["heights"], t["greens"], out)
        return out

    def tier_parts(self, tier: int) -> tuple[int, int, int, int]:
        """``(captures, greens captured, tallest stack, passes)`` of a tier id (all 0: the root)."""
        rest, passes = divmod(int(tier), 3)
        rest, tallest = divmod(rest, self.cells + 1)
        captures, greens = divmod(rest, self.green + 1)
        return captures, greens, tallest, passes

    def tier_name(self, tier: int) -> str:
        """``6 stacks left, 1 green captured, tallest 3`` (plus ``, 1 pass`` / ``, over``), or
        ``setup`` for the setup=all root."""
        if tier == 0:
            return "setup"
        captures, greens, tallest, passes = self.tier_parts(tier)
        text = (f"{self.cells - captures} stacks left, {greens} green{'s' * (greens != 1)} captured, "
                f"tallest {tallest}")
        return text + ("", ", 1 pass", ", over")[passes]

    # --- symmetry ----------------------------------------------------------------------
    def symmetries(self, state: GreenerState) -> list[GreenerState]:
        if state.root:
            return [state]
        return [GreenerState(g(state.board), state.to_move, state.passes) for g in self._sym_gathers]

    def canonical(self, state: GreenerState) -> GreenerState:
        """The image with the smallest key: the smallest code tuple (keys rank boards
        lexicographically, and images share the side to move and the passes)."""
        if state.root:
            return state
        board = min(g(state.board) for g in self._sym_gathers)
        return GreenerState(board, state.to_move, state.passes)

    # --- the batch path (compiled) ----------------------------------------------------
    def expand(self, keys: np.ndarray, *, canonical: bool = False) -> Expansion:
        """Children of many positions at once, by the numba kernel in ``_greener_jit.py``.

        Gives exactly the arrays of the per-state default (:meth:`Game.expand`), which
        ``tests/test_greener.py`` checks on many keys; the setup=all root (a chance node) and
        key spaces too large for ``int64`` arithmetic go through the default.
        """
        keys = np.asarray(keys, dtype=np.uint64)
        if (
            len(keys) == 0
            or self.ranker.size * 6 >= 2**63
            or (self.setup_mode == "all" and bool((keys == np.uint64(self.root_key)).any()))
        ):
            return Game.expand(self, keys, canonical=canonical)
        t = self._batch_tables()
        if int(keys.max()) >= self.root_key:
            raise ValueError("key out of range for this variant")
        s_gr, s_h, s_m = t["stride"]
        kind, to_move, offsets, children, result, margin, child_tier = expand_kernel(
            keys.astype(np.int64), self.cells, self.green, t["ncodes"], t["cum"], s_m, s_h, s_gr,
            t["heights"], t["greens"], t["colour"], t["combine"], t["pair_src"], t["pair_off"],
            t["pair_cells"], t["gather_array"], canonical, self.tiebreak == "tallest",
        )
        return Expansion(
            kind=kind,
            to_move=to_move,
            offsets=offsets,
            children=children,
            probs=None,
            result=result,
            margin=margin,
            child_tier=child_tier,
        )

    def _capture_rays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(src, off, cells)``: every non-empty ray of every cell, in the order of
        :meth:`captures` (from-cell, then north, east, south, west); ray ``i`` starts at ``src[i]``
        and crosses ``cells[off[i]:off[i + 1]]`` (for the compiled kernels)."""
        pairs = [(src, ray) for src in range(self.cells) for ray in self._rays[src] if ray]
        off = np.zeros(len(pairs) + 1, dtype=np.int64)
        np.cumsum([len(ray) for _, ray in pairs], out=off[1:])
        return (np.array([src for src, _ in pairs], dtype=np.int64), off,
                np.array([c for _, ray in pairs for c in ray], dtype=np.int64))

    def _batch_tables(self) -> dict[str, Any]:
        """Lookup tables of the batch path (arrays for the compiled kernel), built once."""
        if self._tables is not None:
            return self._tables
        ranker = self.ranker
        n, greens = self.cells, self.green
        ncodes = codes_up_to_height(n)
        heights = np.array(ranker._heights, dtype=np.int64)
        green_of = np.array(ranker._greens, dtype=np.int64)
        colour = np.full(ncodes, -1, dtype=np.int64)
        for code in range(1, ncodes):
            colour[code] = stack_parts(code)[0]  # type: ignore[index]
        combine = np.zeros((ncodes, ncodes), dtype=np.int64)
        for a in range(2, ncodes):
            ca, ha, ga = stack_parts(a)  # type: ignore[misc]
            for b in range(1, ncodes):
                _, hb, gb = stack_parts(b)  # type: ignore[misc]
                if ha + hb <= n:
                    combine[a, b] = stack_code(ca, ha + hb, ga + gb)
        counts = np.array(ranker._counts, dtype=np.int64)  # [m, H, Gr]
        cum = np.zeros((n + 1, n + 1, greens + 1, ncodes + 1), dtype=np.int64)
        big_h = np.arange(n + 1)[:, None, None]
        gr = np.arange(greens + 1)[None, :, None]
        hh = heights[None, None, :]
        gg = green_of[None, None, :]
        ok = (hh <= big_h) & (gg <= gr)
        for m in range(1, n + 1):
            vals = counts[m - 1][np.clip(big_h - hh, 0, n), np.clip(gr - gg, 0, greens)]
            cum[m, :, :, 1:] = np.cumsum(np.where(ok, vals, 0), axis=2)
        pair_src, pair_off, pair_cells = self._capture_rays()
        self._tables = {
            "heights": heights,
            "greens": green_of,
            "colour": colour,
            "combine": combine,
            "cum": cum.reshape(-1),
            "stride": (ncodes + 1, (greens + 1) * (ncodes + 1), (n + 1) * (greens + 1) * (ncodes + 1)),
            "ncodes": ncodes,
            "pair_src": pair_src,
            "pair_off": pair_off,
            "pair_cells": pair_cells,
            "gather_array": np.ascontiguousarray(grid_symmetry_array(self.rows, self.cols), dtype=np.int64),
        }
        return self._tables

    # --- people ------------------------------------------------------------------------
    def cell_text(self, code: int) -> str:
        """``B3g1`` (top black, height 3, one green), ``G1g1`` (a green pyramid) or ``.``."""
        parts = stack_parts(code)
        if parts is None:
            return "."
        colour, height, greens = parts
        return f"{_LETTER[colour]}{height}g{greens}"

    def describe_state(self, state: GreenerState) -> str:
        """A start position as its layout (``BWG/GGB/WGG``, the form ``setup=`` takes), any
        other position as its one-line rendering."""
        if (not state.root and state.passes == 0 and state.board
                and all(code in _LAYOUT_LETTER for code in state.board)):
            return layout_text(state.board, self.rows, self.cols)
        return super().describe_state(state)

    def render(self, state: GreenerState) -> str:
        if state.root:
            text = (
                f"setup=all: chance picks one of {self.num_setups:,} setups of "
                f"{self.black} B, {self.white} W, {self.green} G on {self.rows}x{self.cols}"
            )
            if self.num_setups <= MAX_SETUPS and self.cells <= 31:
                text += f" ({len(self.chance_outcomes(state)):,} symmetry classes)"
            return text
        texts = [self.cell_text(code) for code in state.board]
        width = max(len(t) for t in texts)
        lines = []
        for r in range(self.rows - 1, -1, -1):
            cells = " ".join(texts[r * self.cols + c].rjust(width) for c in range(self.cols))
            lines.append(f"{r + 1:>2} {cells}")
        lines.append("   " + " ".join(chr(ord("a") + c).rjust(width) for c in range(self.cols)))
        lines.append(self._status_line(state))
        return "\n".join(lines)

    def _status_line(self, state: GreenerState) -> str:
        """Who is to move (or that the game is over) and the greens each side holds."""
        b, w = self.scores(state)
        who = "Black" if state.to_move == BLACK else "White"
        if state.passes >= 2:
            return f"game over (both passed); greens Black {b}, White {w}"
        note = " (the previous player passed)" if state.passes == 1 else ""
        return f"{who} to move{note}; greens Black {b}, White {w}"

    def picture(self, state: GreenerState) -> Picture:
        """The board for drawing: each stack as its top pyramid (``black``/``white``/``green``,
        drawn large: sizes do not matter in Greener) labelled ``h3 g1`` (height, greens) when it
        is taller than one; the caption says who is to move and the greens each side holds.
        The setup=all chance root has no board: a text picture of :meth:`render`."""
        if state.root:
            return Picture.of_text(self.render(state))
        cells: list[tuple[Piece, ...]] = []
        labels: list[str] = []
        for code in state.board:
            parts = stack_parts(code)
            if parts is None:
                cells.append(())
                labels.append("")
                continue
            colour, height, greens = parts
            cells.append((Piece(_COLOUR_KEY[colour], 2, _LETTER[colour]),))
            labels.append(f"h{height} g{greens}" if height > 1 else "")
        key = (("a stack", "drawn as its top pyramid (sizes do not matter in Greener)"),
               ("h3 g1", "a stack 3 pyramids high holding 1 green"))
        return Picture("grid", self.rows, self.cols, tuple(cells), tuple(labels),
                       caption=(self._status_line(state),), key=key)

    def action_name(self, state: GreenerState, action: Action) -> str:
        if state.root:
            return layout_text(tuple(action), self.rows, self.cols)  # type: ignore[arg-type]
        if action == PASS:
            return PASS
        src, dst = action  # type: ignore[misc]
        return f"{cell_name(src, self.cols)}-{cell_name(dst, self.cols)}"

    def parse_action(self, state: GreenerState, text: str) -> Action:
        """``b1-b3``, ``pass``, or at the setup=all root any layout such as ``BWG/GGB/WGG``."""
        if state.root:
            try:
                board = parse_layout(text, self.rows, self.cols)
            except VariantError as err:
                raise IllegalMoveError(str(err)) from None
            self._check_setup_board(board)
            return board
        wanted = text.strip().lower()
        if "-" in wanted:
            a, _, b = wanted.partition("-")
            src, dst = parse_cell(a, self.rows, self.cols), parse_cell(b, self.rows, self.cols)
            if src is not None and dst is not None and (src, dst) in self.legal_actions(state):
                return (src, dst)
        return super().parse_action(state, text)


def _gatherer(index: list[int]) -> Callable[[tuple[int, ...]], tuple[int, ...]]:
    """A fast ``board -> tuple(board[i] for i in index)``."""
    if len(index) == 1:
        only = index[0]
        return lambda board: (board[only],)
    return itemgetter(*index)  # type: ignore[return-value]


@njit(cache=True, nogil=True)
def _tier_kernel(keys, root, n, green, ncodes, cum, s_m, s_h, s_gr, heights, greens, out):
    """:meth:`Greener.tier_of` of ``keys`` (uint64, kept unsigned so keys up to ``2**64`` work)
    into ``out``."""
    board = np.empty(n, dtype=np.int64)
    acc, span, left_h, left_g = unrank_memory(n, green)
    six = np.uint64(6)
    three = np.uint64(3)
    for i in range(len(keys)):
        k = keys[i]
        if k == root:
            out[i] = 0
            continue
        unrank_sorted(np.int64(k // six), board, acc, span, left_h, left_g, n, green, ncodes, cum, s_m, s_h,
                      s_gr, heights, greens)
        empty, singles, tallest = board_tier_parts(board, n, heights)
        out[i] = tier_id(empty, green - singles, tallest, np.int64(k % three), n, green)
