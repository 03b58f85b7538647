"""Override (Kat Costa, 2019): make a line of your colour with pyramids that both players control.

Rules: /work/shared/rules/override.md (authoritative). In short: on an ``size`` x ``size`` grid,
each turn the player to move either **places** a pyramid of either colour from the shared supply
on an empty square (never on the centre of an odd board with ``centre_rule``), or **moves** a top
pyramid of either colour one square orthogonally onto an empty square or onto a stack whose top is
strictly smaller. With ``no_undo`` the pyramid the opponent just moved from ``a`` to ``b`` may not
go straight back from ``b`` to ``a``. After every action, a player whose colour tops every square
of a line of ``line`` consecutive squares (row, column or diagonal) has a line: the player who just
acted wins if they have one, otherwise the opponent wins if they have one. A player with no legal
action passes. Player index 0 (shown to people as player 1) owns colour A and moves first;
index 1 (player 2) owns colour B.

Representation
--------------
* A **piece** is an ``int`` ``3 * colour + size`` (colour 0 = A, 1 = B; size 0 = S, 1 = M,
  2 = L). A **stack** is a tuple of pieces bottom to top; sizes strictly increase upwards, so its
  top is its largest pyramid.
* :class:`OverrideState` holds the stacks of all squares (row-major, ``a1`` = cell 0 at the bottom
  left), the player to move and the last move ``(from, to)`` (``None`` after a place or a pass).
  The supply is derived from the board; whether the game is over is derived from the lines.
* Actions: :class:`Place` ``(colour, size, cell)`` written ``AL@b2``; :class:`Move` ``(src, dst)``
  written ``b2-b3``; :data:`PASS` written ``pass``.

Key encoding (exact, reversible; see :meth:`Override.encode`)
-------------------------------------------------------------
``key = board * 2 * (E + 1) + player * (E + 1) + last`` where ``E = 4 * n * (n - 1)`` is the number
of directed orthogonal steps and ``last`` is ``0`` (no last move) or ``1 +`` the index of the step
in :attr:`Override.edges`. ``board`` is a sum of one weight per pyramid on the board:

* ``per_size == 1`` (every pyramid unique): "pieces" scheme, each of the 6 pyramids has a location
  digit ``0`` (in the supply) or ``1 + cell`` in base ``n*n + 1``; weight of piece ``p`` on ``x`` is
  ``(x + 1) * (n*n + 1) ** p``.
* otherwise: "squares" scheme, each square is a base-27 digit ``sum(colour_s * 3**s)`` over the
  sizes ``s`` in its stack (``colour_s`` = 0 absent, 1 A, 2 B); weight of piece ``(c, s)`` on ``x``
  is ``(c + 1) * 3**s * 27**x``.

Both fit in 64 bits for every preset and for ``size=5, per_size=1`` (about ``5.0e10``). Larger
variants (e.g. the default 5x5 with 5 of each) still get exact keys, but as Python ints beyond 64
bits: such variants can be played and searched, not enumerated into tables (a warning says so).

Because the board part is linear in the pyramids, the batch path :meth:`Override.expand` computes
child keys (and their images under the 8 symmetries) by adding weight differences, without
building child boards.
"""

from __future__ import annotations

import re
from functools import cached_property
from math import prod
from dataclasses import dataclass
from typing import ClassVar, NamedTuple, Union

import numpy as np

from solver.core.game import Chance, Expansion, Game, NodeKind, Outcome, Playout
from solver.core.picture import Piece, Picture
from solver.core.ranking import BoardRanking
from solver.core.symmetry import cell_name, grid_symmetries, parse_cell
from solver.core.variant import Param, Variant
from solver.errors import IllegalMoveError, VariantError
from solver.core.uct_jit import CompiledRules
from solver.games._override_jit import (TREE_PARTS, board_codes_kernel, expand_kernel, layers_kernel, playout_kernel, winner_of,
                                        tier_kernel)

COLOURS = "AB"
SIZES = "SML"
NUM_SIZES = 3
NUM_PIECES = 2 * NUM_SIZES
#: zeros that pad a stack of 0-3 pyramids to the compiled kernel's three levels
_PAD = ((0, 0, 0), (0, 0), (0,), ())
#: the largest board side: columns are named by the letters a..z
MAX_SIZE = 26


def piece(colour: int, size: int) -> int:
    """The piece code of a pyramid of ``colour`` (0 = A, 1 = B) and ``size`` (0 = S .. 2 = L)."""
    return NUM_SIZES * colour + size


def piece_colour(p: int) -> int:
    return p // NUM_SIZES


def piece_size(p: int) -> int:
    return p % NUM_SIZES


def piece_name(p: int) -> str:
    """``AS`` .. ``BL``."""
    return COLOURS[piece_colour(p)] + SIZES[piece_size(p)]


Stack = tuple[int, ...]


def override_key_bound(size: int, per_size: int) -> int:
    """Every key of a ``size`` x ``size`` board is below this (see the module docstring):
    ``board_bound * 2 * (E + 1)``."""
    cells = size * size
    stride = 2 * (4 * size * (size - 1) + 1)
    return ((cells + 1) ** NUM_PIECES if per_size == 1 else 27**cells) * stride


def override_position_bound(size: int, per_size: int) -> int:
    """An upper bound of the positions of Override on ``size`` x ``size`` with ``per_size``
    pyramids of each size per colour (see :meth:`Override.position_bound`)."""
    from math import comb

    cells = size * size
    k = min(per_size, cells)
    # per size: sum over a <= k of C(cells, a) * S(cells - a), S(m) = sum_{b <= k} C(m, b), with
    # S(m + 1) = 2 S(m) - C(m, k): linear in k, not quadratic (k may be 676)
    partial = sum(comb(cells - k, b) for b in range(min(k, cells - k) + 1))
    ways = 0
    for a in range(k, -1, -1):
        ways += comb(cells, a) * partial
        partial = 2 * partial - comb(cells - a, k)
    return ways**NUM_SIZES * 2 * (4 * size * (size - 1) + 1)


#: the largest board side whose keys fit 64 bits: (with per_size=1, with per_size >= 2)
MAX_SIZE_64: tuple[int, int] = tuple(  # type: ignore[assignment]
    max(n for n in range(2, MAX_SIZE + 1) if override_key_bound(n, k) <= 2**64) for k in (1, 2))


@dataclass(frozen=True, slots=True)
class OverrideState:
    """A position: stacks of all squares (row-major, bottom to top), player to move, last move.

    ``last`` is ``(from, to)`` when the previous action was a move (it drives ``no_undo``),
    ``None`` after a place, a pass, or at the start.
    """

    stacks: tuple[Stack, ...]
    player: int
    last: tuple[int, int] | None = None


class Place(NamedTuple):
    """Put a pyramid of ``colour`` and ``size`` from the supply on the empty square ``cell``."""

    colour: int
    size: int
    cell: int


class Move(NamedTuple):
    """Move the top pyramid of ``src`` one square orthogonally to ``dst``."""

    src: int
    dst: int


#: the action of a player who has no legal action
PASS = "pass"

Action = Union[Place, Move, str]

_PLACE_RE = re.compile(r"^(?:place)?([ab])-?([sml])(?:@|on)?([a-z]\d+)$")
_MOVE_RE = re.compile(r"^([a-z]\d+)(?:-|>|to)?([a-z]\d+)$")


class Override(Game[OverrideState]):
    """Override on an ``size`` x ``size`` board; see the module docstring and the rules file."""

    name: ClassVar[str] = "override"
    title: ClassVar[str] = "Override (Kat Costa): place or move pyramids of either colour to make a line of yours"
    params: ClassVar[tuple[Param, ...]] = (
        Param("size", "int", 5, "board side n (n x n squares)", min=2, max=MAX_SIZE,
              bounds="from 2x2, the smallest board with a line, to 26x26: columns are named a..z"),
        Param("line", "int", 5, "squares in a winning line (at most size)", min=2, max=MAX_SIZE,
              bounds="a line of 1 would be won by the first place, and a line fits on the board"),
        Param("per_size", "int", 5, "pyramids of each size per colour (at most size*size)", min=1,
              max=MAX_SIZE**2, bounds="one of each size at least, and no more of a size than a 26x26 board holds"),
        Param(
            "centre_rule",
            "bool",
            True,
            "the centre square cannot be placed on (odd sizes only; no effect on even boards)",
        ),
        Param("no_undo", "bool", True, "a move may not be undone straight away by the opponent"),
    )
    presets: ClassVar[dict[str, dict[str, int]]] = {
        "3x3": {"size": 3, "line": 3, "per_size": 1},
        "3x3-2": {"size": 3, "line": 3, "per_size": 2},
        "4x4": {"size": 4, "line": 4, "per_size": 1},
        # 4x4 where three in a row wins: on 4x4 with line=4 no line of four can be made with
        # three pyramids a player, so this is the non-degenerate 4x4 game
        "4x4-3": {"size": 4, "line": 3, "per_size": 1},
    }
    largest_preset: ClassVar[str] = "3x3"
    #: no dice, no secret choices (declared: ``pyramids check`` proves it)
    chance: ClassVar[Chance] = "never"
    secret_choices: ClassVar[bool] = False
    #: colour A is player 1 (moves first), colour B player 2, as in render()
    seat_names: ClassVar[tuple[str, ...]] = ("A", "B")
    rules_version: ClassVar[str] = "1"
    scored: ClassVar[bool] = False
    num_players: int = 2
    #: the batch path is a compiled kernel without the GIL: enumeration expands chunks in threads
    expand_releases_gil: ClassVar[bool] = True

    def __init__(self, variant: Variant) -> None:
        super().__init__(variant)
        n = self.size = int(variant.size)
        self.line = int(variant.line)
        self.per_size = int(variant.per_size)
        self.no_undo = bool(variant.no_undo)
        self.cells = n * n
        #: the centre square when the centre rule is active (odd board), else ``None``
        self.centre: int | None = (n * n) // 2 if (variant.centre_rule and n % 2 == 1) else None
        self._build_geometry()
        self._build_encoding()
        self._playout_geometry: tuple[np.ndarray, np.ndarray] | None = None

    def too_big(self) -> str | None:
        if self.fits_64:
            return None
        bits = (self.key_bound - 1).bit_length()
        return (f"its position keys need {bits} bits (keys exceed 64 bits beyond size={MAX_SIZE_64[0]} with "
                f"per_size=1 and beyond size={MAX_SIZE_64[1]} with more pyramids of each size)")

    def check_variant(self, variant: Variant) -> None:
        """``line`` must fit on the board, and ``per_size`` pyramids of one size on its squares
        (more is the same game: the supply of a size never runs out). ``centre_rule`` on an even
        board is simply inactive. Checked before the constructor builds anything."""
        if variant.line > variant.size:
            raise VariantError(
                f"line ({variant.line}) cannot exceed size ({variant.size}); "
                f"use --set line={variant.size} or a larger size"
            )
        squares = variant.size**2
        if variant.per_size > squares:
            raise VariantError(
                f"per_size={variant.per_size} is more pyramids of one size than the {squares} squares of a "
                f"{variant.size}x{variant.size} board hold (a square takes one of each size); "
                f"use --set per_size={squares} (the same game: the supply never runs out) or fewer"
            )

    def position_bound(self) -> int:
        """Every board times both players to move times every last move (none or a step).

        A square holds at most one pyramid of each size, so the three sizes are placed
        independently: per size, the ways to put ``a`` pyramids of A and ``b`` of B (each at most
        ``per_size``) on distinct squares, ``cells! / (a! b! (cells-a-b)!)``, summed; the board
        count is the cube of that sum. Measured: 3x3 1,683,045 positions up to symmetry (bound
        3.8e7, 4.7e6 up to symmetry); 4x4 68,675,533 (2.0e9; 2.5e8); 3x3-2 4,053,004,965 (1.4e11;
        1.8e10)."""
        return override_position_bound(self.size, self.per_size)

    # --- geometry ---------------------------------------------------------------------
    def _build_geometry(self) -> None:
        n = self.size
        edges: list[tuple[int, int]] = []
        for u in range(self.cells):
            r, c = divmod(u, n)
            nbrs = []
            if r > 0:
                nbrs.append(u - n)
            if c > 0:
                nbrs.append(u - 1)
            if c < n - 1:
                nbrs.append(u + 1)
            if r < n - 1:
                nbrs.append(u + n)
            edges.extend((u, v) for v in nbrs)
        #: every directed orthogonal step ``(from, to)``, sorted; ``last`` keys index this list
        self.edges: tuple[tuple[int, int], ...] = tuple(edges)
        self.edge_index: dict[tuple[int, int], int] = {e: i for i, e in enumerate(edges)}
        lines: list[tuple[int, ...]] = []
        k = self.line
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            for r in range(n):
                for c in range(n):
                    r_end, c_end = r + dr * (k - 1), c + dc * (k - 1)
                    if 0 <= r_end < n and 0 <= c_end < n:
                        lines.append(tuple((r + dr * i) * n + (c + dc * i) for i in range(k)))
        #: every winning line, as a tuple of cells
        self.lines: tuple[tuple[int, ...], ...] = tuple(lines)
        self.perms: tuple[tuple[int, ...], ...] = grid_symmetries(n, n)

    def _build_encoding(self) -> None:
        n_cells = self.cells
        self.num_edges = len(self.edges)
        self._last_base = self.num_edges + 1
        self._stride = 2 * self._last_base
        self.scheme = "pieces" if self.per_size == 1 else "squares"
        weights = [[0] * n_cells for _ in range(NUM_PIECES)]
        for p in range(NUM_PIECES):
            c, s = piece_colour(p), piece_size(p)
            for x in range(n_cells):
                if self.scheme == "pieces":
                    weights[p][x] = (x + 1) * (n_cells + 1) ** p
                else:
                    weights[p][x] = (c + 1) * 3**s * 27**x
        #: ``weights[p][x]``: the part of the board code of piece ``p`` standing on cell ``x``
        self.weights: list[list[int]] = weights
        # per symmetry: the weights of the image cells, and the last-move digit of the image
        self._sym_weights = [
            (
                [[weights[p][perm[x]] for x in range(n_cells)] for p in range(NUM_PIECES)],
                [0] + [self.edge_index[(perm[a], perm[b])] + 1 for a, b in self.edges],
            )
            for perm in self.perms
        ]
        #: every key is below this bound
        self.key_bound: int = override_key_bound(self.size, self.per_size)
        self.fits_64: bool = self.key_bound <= 2**64

    # --- the protocol -----------------------------------------------------------------
    def initial_state(self) -> OverrideState:
        return OverrideState(tuple(() for _ in range(self.cells)), 0, None)

    def has_line(self, state: OverrideState, colour: int) -> bool:
        """Whether ``colour`` tops every square of some winning line."""
        stacks = state.stacks
        for cells in self.lines:
            for x in cells:
                st = stacks[x]
                if not st or piece_colour(st[-1]) != colour:
                    break
            else:
                return True
        return False

    def winner(self, state: OverrideState) -> int | None:
        """The winner of a finished game, else ``None``.

        The player who just acted (the opponent of ``state.player``) wins if they have a line;
        otherwise the player to move wins if they have one.
        """
        mover = 1 - state.player
        if self.has_line(state, mover):
            return mover
        if self.has_line(state, state.player):
            return state.player
        return None

    def node_kind(self, state: OverrideState) -> NodeKind:
        return NodeKind.TERMINAL if self.winner(state) is not None else NodeKind.DECISION

    def to_move(self, state: OverrideState) -> int:
        return state.player

    def supply(self, state: OverrideState) -> list[int]:
        """Pyramids left in the supply, indexed by piece code (``per_size`` minus those on board)."""
        left = [self.per_size] * NUM_PIECES
        for st in state.stacks:
            for p in st:
                left[p] -= 1
        return left

    def legal_actions(self, state: OverrideState) -> list[Action]:
        """Places (colour A then B, sizes S, M, L, cells ascending), then moves (by step in
        :attr:`edges`); ``[PASS]`` when there is none; ``[]`` when the game is over."""
        if self.node_kind(state) == NodeKind.TERMINAL:
            return []
        stacks = state.stacks
        actions: list[Action] = []
        left = self.supply(state)
        empty = [x for x in range(self.cells) if not stacks[x] and x != self.centre]
        for p in range(NUM_PIECES):
            if left[p] > 0:
                c, s = piece_colour(p), piece_size(p)
                actions.extend(Place(c, s, x) for x in empty)
        banned = None
        if self.no_undo and state.last is not None:
            banned = (state.last[1], state.last[0])
        for u, v in self.edges:
            src = stacks[u]
            if not src:
                continue
            dst = stacks[v]
            if dst and piece_size(dst[-1]) >= piece_size(src[-1]):
                continue
            if (u, v) == banned:
                continue
            actions.append(Move(u, v))
        return actions or [PASS]

    def apply(self, state: OverrideState, action: Action) -> OverrideState:
        nxt = 1 - state.player
        if action == PASS:
            return OverrideState(state.stacks, nxt, None)
        stacks = list(state.stacks)
        if isinstance(action, Place):
            stacks[action.cell] = (piece(action.colour, action.size),)
            return OverrideState(tuple(stacks), nxt, None)
        if isinstance(action, Move):
            top = stacks[action.src][-1]
            stacks[action.src] = stacks[action.src][:-1]
            stacks[action.dst] = stacks[action.dst] + (top,)
            return OverrideState(tuple(stacks), nxt, (action.src, action.dst))
        raise IllegalMoveError(f"not an Override action: {action!r}")

    def outcome(self, state: OverrideState) -> Outcome:
        w = self.winner(state)
        if w is None:
            raise ValueError("outcome() of a position where the game is not over")
        return Outcome.win_for(w)

    # --- compiled random play ----------------------------------------------------------
    def random_playout(self, state: OverrideState, max_choices: int, seed: int) -> Playout:
        """Random actions from ``state`` in the compiled kernel
        (:func:`solver.games._override_jit.playout_kernel`), any board size."""
        n = self.cells
        edges, lines = self._geometry()
        stacks = state.stacks  # one array each, built from lists (faster than filling cell by cell)
        stack = np.array([st + _PAD[len(st)] for st in stacks], dtype=np.int64).reshape(n, 3)
        height = np.array([len(st) for st in stacks], dtype=np.int64)
        src, dst = state.last if state.last is not None else (-1, -1)
        cap, seed, taken, counts = Playout.buffers(max_choices, seed)
        centre = -1 if self.centre is None else self.centre
        player, src, dst, moves = playout_kernel(stack, height, state.player, src, dst, cap, seed,
                                                 self.per_size, centre, self.no_undo, edges, lines, taken, counts)
        winner = winner_of(stack, height, lines, player)
        values = None if winner < 0 else Outcome.win_for(int(winner)).values

        def end() -> OverrideState:
            rows = stack.tolist()
            stacks = tuple(tuple(rows[x][:h]) for x, h in enumerate(height.tolist()))
            return OverrideState(stacks, int(player), None if src < 0 else (int(src), int(dst)))

        return Playout.lazy(end, moves, taken, counts, values=values)

    def _geometry(self) -> tuple[np.ndarray, np.ndarray]:
        """The steps and lines as arrays for the compiled kernels (built once)."""
        if self._playout_geometry is None:
            self._playout_geometry = (np.array(self.edges, dtype=np.int64).reshape(-1, 2),
                                      np.array(self.lines, dtype=np.int64).reshape(-1, self.line))
        return self._playout_geometry

    def compiled_rules(self) -> CompiledRules:
        """The compiled parts of the rules for MCTS's compiled tree: the position as the stacks,
        heights, player and last move; move codes ``piece * n + cell`` (a place), ``6 * n + e``
        (a move along step ``e`` of :attr:`edges`), ``-1`` (the pass)."""
        return self._tree_rules

    @cached_property
    def _tree_rules(self) -> CompiledRules:
        """:meth:`compiled_rules`, built once."""
        n = self.cells
        edges, lines = self._geometry()
        params = (int(self.per_size), -1 if self.centre is None else int(self.centre), bool(self.no_undo),
                  edges, lines)
        step = {(int(u), int(v)): e for e, (u, v) in enumerate(self.edges)}

        def encode(state: OverrideState) -> np.ndarray:
            src, dst = state.last if state.last is not None else (-1, -1)
            return np.array([*(x for st in state.stacks for x in st + _PAD[len(st)]),
                             *(len(st) for st in state.stacks), state.player, src, dst], dtype=np.int64)

        def code(state: OverrideState, action: Action) -> int:
            if action == PASS:
                return -1
            if isinstance(action, Place):
                return piece(action.colour, action.size) * n + action.cell
            return 6 * n + step[(action.src, action.dst)]

        def action(state: OverrideState, c: int) -> Action:
            if c < 0:
                return PASS
            if c < 6 * n:
                return Place(piece_colour(c // n), piece_size(c // n), c % n)
            u, v = self.edges[c - 6 * n]
            return Move(int(u), int(v))

        return CompiledRules(parts=TREE_PARTS, params=params, encode=encode, max_branch=6 * n + len(self.edges),
                             code=code, action=action)

    # --- keys -------------------------------------------------------------------------
    def encode(self, state: OverrideState) -> int:
        """``board * 2 * (E + 1) + player * (E + 1) + last`` (see the module docstring)."""
        w = self.weights
        board = 0
        for x, st in enumerate(state.stacks):
            for p in st:
                board += w[p][x]
        last = 0 if state.last is None else self.edge_index[state.last] + 1
        return board * self._stride + state.player * self._last_base + last

    def decode(self, key: int) -> OverrideState:
        key = int(key)
        if not 0 <= key < self.key_bound:
            raise ValueError(f"key {key} out of range for {self.variant.label()}")
        board, rest = divmod(key, self._stride)
        player, last = divmod(rest, self._last_base)
        cells: list[list[int]] = [[] for _ in range(self.cells)]
        if self.scheme == "pieces":
            base = self.cells + 1
            for p in range(NUM_PIECES):
                board, loc = divmod(board, base)
                if loc:
                    cells[loc - 1].append(p)
        else:
            for x in range(self.cells):
                board, q = divmod(board, 27)
                for s in range(NUM_SIZES):
                    q, c = divmod(q, 3)
                    if c:
                        cells[x].append(piece(c - 1, s))
        stacks = []
        for st in cells:
            st.sort(key=piece_size)
            if len({piece_size(p) for p in st}) != len(st):
                raise ValueError(f"key {key} is not an Override position (two pyramids of one size)")
            stacks.append(tuple(st))
        state = OverrideState(tuple(stacks), player, None if last == 0 else self.edges[last - 1])
        if min(self.supply(state)) < 0:
            raise ValueError(f"key {key} is not an Override position (too many pyramids)")
        return state

    # --- tiers ------------------------------------------------------------------------
    # A placed pyramid never leaves the board (rules: "No pyramid ever leaves the board once
    # placed"; ``apply`` only adds pyramids or moves them between squares), so the number of
    # pyramids of every colour and size on the board never falls. The tier is those six counts
    # as a mixed-radix number (radix ``per_size + 1``, piece code ``p`` = digit ``p``): a place
    # raises one digit, a move or a pass changes none. With ``per_size == 1`` it is the bitmask
    # of the pieces on the board. Symmetries only move squares, so images share a tier.

    def tier_of(self, keys: np.ndarray) -> np.ndarray:
        """``int64[len(keys)]``: the pyramids placed per colour and size, as the mixed-radix number
        ``sum(count[p] * (per_size + 1) ** p)`` over piece codes ``p`` (never falls along a move).

        Compiled (:func:`solver.games._override_jit.tier_kernel`: ``per_size == 1`` reads the six
        location digits, otherwise the base-27 square digits through a 27-entry table of each
        square's contribution; tests/test_tiers.py checks it against the decoded states)."""
        if not self.fits_64:
            raise ValueError(f"{self.variant.label()} has keys beyond 64 bits; tiers need uint64 keys")
        keys = np.ascontiguousarray(keys, dtype=np.uint64)
        out = np.empty(len(keys), dtype=np.int64)
        tier_kernel(keys, np.uint64(self._stride), self.scheme == "pieces", self.cells, self._square_tiers, out)
        return out

    @cached_property
    def _square_tiers(self) -> np.ndarray:
        """What a square's base-27 code (``sum(colour_s * 3**s)``) adds to the tier id."""
        radix = self.per_size + 1
        add = np.zeros(27, dtype=np.int64)
        for q in range(27):
            for s in range(NUM_SIZES):
                c = (q // 3**s) % 3
                if c:
                    add[q] += radix ** piece(c - 1, s)
        return add

    def tier_counts(self, tier: int) -> list[int]:
        """The pyramids on the board per piece code (``AS .. BL``) of a tier id."""
        radix = self.per_size + 1
        return [(int(tier) // radix**p) % radix for p in range(NUM_PIECES)]

    # --- ranks (issue 34: tiers stored by rank, without keys) -----------------------------
    # A tier fixes how many pyramids of each colour and size are on the board, and a square holds
    # at most one pyramid of each size (sorted by size, so the set is the stack). So the board is
    # three independent layers, one per size, each a board of the squares holding A, B or nothing
    # with known counts: ranked by :class:`~solver.core.ranking.BoardRanking`, the three ranks
    # mixed-radix (small size most significant), then the key's player and last-move digits.

    def _rankings(self, tier: int) -> list[BoardRanking]:
        tier = int(tier)
        cache = self.__dict__.setdefault("_ranking_cache", {})
        if tier not in cache:
            counts = self.tier_counts(tier)
            cache[tier] = [BoardRanking(self.cells, 3, [(counts[piece(0, s)], counts[piece(1, s)])])
                           for s in range(NUM_SIZES)]
        return cache[tier]

    def tier_size(self, tier: int) -> int:
        """Boards of the tier's counts (a product of multinomials, one per size) times the
        player and last-move digits."""
        return prod(r.size for r in self._rankings(tier)) * self._stride

    def rank(self, tier: int, keys: np.ndarray) -> np.ndarray:
        """Each key's rank in ``tier`` (the three size layers ranked, then player and last move);
        ``ValueError`` naming a key that is not in the tier."""
        keys = np.ascontiguousarray(keys, dtype=np.uint64)
        stride = np.uint64(self._stride)
        layers = np.empty((len(keys), NUM_SIZES, self.cells), np.int8)
        layers_kernel(keys, stride, self.scheme == "pieces", self.cells, layers)
        out = np.zeros(len(keys), np.int64)
        for s, ranking in enumerate(self._rankings(tier)):
            r = ranking.rank(layers[:, s, :])
            if len(r) and r.min() < 0:
                raise ValueError(f"key {int(keys[np.argmin(r)])} is not in tier {self.tier_name(tier)}")
            out = out * ranking.size + r
        return out * self._stride + (keys % stride).astype(np.int64)

    def unrank(self, tier: int, ranks: np.ndarray) -> np.ndarray:
        """The keys of ``ranks`` of ``tier`` (the inverse of :meth:`rank`)."""
        ranks = np.ascontiguousarray(ranks, dtype=np.int64)
        low, board = ranks % self._stride, ranks // self._stride
        layers = np.empty((len(ranks), NUM_SIZES, self.cells), np.int8)
        for s, ranking in reversed(list(enumerate(self._rankings(tier)))):
            layers[:, s, :] = ranking.unrank(board % ranking.size)
            board = board // ranking.size
        codes = np.empty(len(ranks), np.uint64)
        board_codes_kernel(layers, self.scheme == "pieces", self.cells, codes)
        return codes * np.uint64(self._stride) + low.astype(np.uint64)

    def tier_name(self, tier: int) -> str:
        """``placed A:SM B:L`` (a letter per pyramid on the board; ``-``: none of that colour)."""
        counts = self.tier_counts(tier)
        parts = []
        for c in range(2):
            letters = "".join(SIZES[s] * counts[piece(c, s)] for s in range(NUM_SIZES))
            parts.append(f"{COLOURS[c]}:{letters or '-'}")
        return "placed " + " ".join(parts)

    # --- symmetry ---------------------------------------------------------------------
    def symmetries(self, state: OverrideState) -> list[OverrideState]:
        """The 8 images under the square's symmetries (identity first); the last move is mapped
        too. The centre rule is symmetric, so every image is a position of the same variant."""
        return [self.image(state, g) for g in range(len(self.perms))]

    def image(self, state: OverrideState, g: int) -> OverrideState:
        """The image of ``state`` under symmetry ``g`` (cell ``x`` goes to ``perms[g][x]``)."""
        perm = self.perms[g]
        stacks: list[Stack] = [()] * self.cells
        for x, st in enumerate(state.stacks):
            stacks[perm[x]] = st
        last = None if state.last is None else (perm[state.last[0]], perm[state.last[1]])
        return OverrideState(tuple(stacks), state.player, last)

    def canonical(self, state: OverrideState) -> OverrideState:
        """The image with the smallest key, as in :meth:`Game.canonical`, but computing the 8
        image keys from the pyramids' weights first and building only the winning image."""
        placed = [(p, x) for x, st in enumerate(state.stacks) for p in st]
        turn = state.player * self._last_base
        last = 0 if state.last is None else self.edge_index[state.last] + 1
        best_key, best = -1, 0
        for g, (w, last_map) in enumerate(self._sym_weights):
            board = 0
            for p, x in placed:
                board += w[p][x]
            key = board * self._stride + turn + last_map[last]
            if best_key < 0 or key < best_key:
                best_key, best = key, g
        return state if best == 0 else self.image(state, best)

    # --- people -----------------------------------------------------------------------
    def cell_name(self, cell: int) -> str:
        return cell_name(cell, self.size)

    def action_name(self, state: OverrideState, action: Action) -> str:
        """``AL@b2`` (place A's large on b2), ``b2-b3`` (move the top of b2), ``pass``."""
        if isinstance(action, Place):
            return f"{COLOURS[action.colour]}{SIZES[action.size]}@{self.cell_name(action.cell)}"
        if isinstance(action, Move):
            return f"{self.cell_name(action.src)}-{self.cell_name(action.dst)}"
        return str(action)

    def parse_action(self, state: OverrideState, text: str) -> Action:
        """The legal action named ``text`` (``AL@b2``, ``al b2``, ``b2-b3``, ``b2b3``, ``pass``;
        any case); an :class:`IllegalMoveError` saying why and listing the legal moves otherwise."""
        if self.node_kind(state) == NodeKind.TERMINAL:
            raise IllegalMoveError(f"{text!r}: the game is already over")
        actions = self.legal_actions(state)
        wanted = re.sub(r"\s+", "", text.strip().lower())
        for a in actions:
            if self.action_name(state, a).lower() == wanted:
                return a
        candidate: Action | None = None
        m = _PLACE_RE.match(wanted)
        if m:
            cell = parse_cell(m.group(3), self.size, self.size)
            if cell is not None:
                candidate = Place(COLOURS.lower().index(m.group(1)), SIZES.lower().index(m.group(2)), cell)
        m = _MOVE_RE.match(wanted)
        if m:
            u = parse_cell(m.group(1), self.size, self.size)
            v = parse_cell(m.group(2), self.size, self.size)
            if u is not None and v is not None:
                candidate = Move(u, v)
        if candidate is not None and candidate in actions:
            return candidate
        reason = self._why_illegal(state, candidate, wanted)
        names = ", ".join(self.action_name(state, a) for a in actions[:40])
        more = " ..." if len(actions) > 40 else ""
        raise IllegalMoveError(f"{text!r} is not a legal move here ({reason}); legal: {names}{more}")

    def _why_illegal(self, state: OverrideState, action: Action | None, text: str) -> str:
        """A short reason why ``action`` (parsed from ``text``) cannot be played."""
        if action is None:
            if text == PASS:
                return "you may pass only when no other action is legal"
            return (
                f"write a place as colour+size@cell (e.g. AL@{self.cell_name(0)}), a move as "
                f"from-to (e.g. {self.cell_name(0)}-{self.cell_name(1)}) or pass; cells a1.."
                f"{self.cell_name(self.cells - 1)}"
            )
        stacks = state.stacks
        if isinstance(action, Place):
            if self.supply(state)[piece(action.colour, action.size)] <= 0:
                return f"no {COLOURS[action.colour]}-{SIZES[action.size]} is left in the supply"
            if stacks[action.cell]:
                return "pyramids can only be placed on an empty square"
            if action.cell == self.centre:
                return "the centre square cannot be placed on (centre_rule)"
            return "not allowed"
        u, v = action  # type: ignore[misc]
        if not stacks[u]:
            return f"{self.cell_name(u)} is empty"
        if v not in {b for a, b in self.edges if a == u}:
            return "a pyramid moves one square orthogonally"
        if stacks[v] and piece_size(stacks[v][-1]) >= piece_size(stacks[u][-1]):
            return "a pyramid can only cover a strictly smaller top"
        if self.no_undo and state.last == (v, u):
            return "that would undo the opponent's last move (no_undo)"
        return "not allowed"

    def stack_text(self, stack: Stack) -> str:
        """``AS,BM`` (bottom to top), ``.`` for an empty square."""
        return ",".join(piece_name(p) for p in stack) if stack else "."

    def render(self, state: OverrideState) -> str:
        """The board (row ``n`` on top, ``a1`` bottom left; stacks bottom to top, ``+`` marks the
        centre that cannot be placed on), the supply, the last move and who is to move."""
        n = self.size
        texts = [self.stack_text(st) for st in state.stacks]
        if self.centre is not None and not state.stacks[self.centre]:
            texts[self.centre] = "+"
        width = max(2, max(len(t) for t in texts))
        label_w = len(str(n))
        rows = []
        for r in range(n - 1, -1, -1):
            cells = "  ".join(texts[r * n + c].ljust(width) for c in range(n)).rstrip()
            rows.append(f"{str(r + 1).rjust(label_w)} | {cells}")
        rows.append(" " * label_w + "   " + "  ".join(chr(ord("a") + c).ljust(width) for c in range(n)).rstrip())
        left = self.supply(state)
        supply = ", ".join(
            f"{COLOURS[c]}: " + " ".join(f"{SIZES[s]}{left[piece(c, s)]}" for s in range(NUM_SIZES))
            for c in range(2)
        )
        last = "-" if state.last is None else f"{self.cell_name(state.last[0])}-{self.cell_name(state.last[1])}"
        w = self.winner(state)
        if w is None:
            status = f"{COLOURS[state.player]} (player {state.player + 1}) to move"
        else:
            status = f"game over: {COLOURS[w]} (player {w + 1}) wins"
        rows.append(f"supply {supply}; last move {last}; {status}")
        return "\n".join(rows)

    def picture(self, state: OverrideState) -> Picture:
        """The board for drawing: stacks bottom to top in colours ``A``/``B``, ``+`` on the empty
        centre that cannot be placed on, the last move's squares highlighted; the caption holds
        the supply and who is to move (or who won)."""
        n = self.size
        cells = tuple(
            tuple(Piece(COLOURS[piece_colour(p)], piece_size(p), COLOURS[piece_colour(p)]) for p in st)
            for st in state.stacks
        )
        labels = [""] * self.cells
        if self.centre is not None and not state.stacks[self.centre]:
            labels[self.centre] = "+"
        left = self.supply(state)
        caption = ["supply " + ", ".join(
            f"{COLOURS[c]}: " + " ".join(f"{SIZES[s]}{left[piece(c, s)]}" for s in range(NUM_SIZES))
            for c in range(2)
        )]
        if state.last is not None:
            caption.append(f"last move {self.cell_name(state.last[0])}-{self.cell_name(state.last[1])}")
        w = self.winner(state)
        if w is None:
            caption.append(f"{COLOURS[state.player]} (player {state.player + 1}) to move")
        else:
            caption.append(f"game over: {COLOURS[w]} (player {w + 1}) wins")
        key = [("A, B on a pyramid", "its owner; the sizes are drawn small, medium, large")]
        if "+" in labels:
            key.append(("+", "the empty centre: no pyramid may be placed on it (centre_rule)"))
        return Picture("grid", n, n, cells, tuple(labels),
                       highlight=() if state.last is None else tuple(state.last), caption=tuple(caption),
                       key=tuple(key))

    # --- the batch path ---------------------------------------------------------------
    def _tables(self) -> dict[str, np.ndarray]:
        """Lookup tables of the batch path, built once.

        Child keys are ``A[g][parent] + T[g][slot]``: ``A`` holds the parent's board code under
        symmetry ``g`` times the stride plus the child's turn digit, ``T`` the change of the board
        code (times the stride) plus the last-move digit of one kind of action, both under ``g``.
        Action slots: place piece ``p`` on cell ``x`` -> ``p * cells + x``; move piece ``p`` along
        step ``e`` -> ``6 * cells + p * E + e``; pass -> ``6 * (cells + E)``. uint64 arithmetic
        wraps, which is harmless since every true key is below ``2**64``.
        """
        cached = getattr(self, "_np_tables", None)
        if cached is not None:
            return cached
        n_cells, n_edges = self.cells, self.num_edges
        n_sym = len(self.perms)
        t: dict[str, np.ndarray] = {}
        # per square code q = sum(colour_s * 3**s): top size (-1 empty) and top colour (0/1/2)
        digits = np.array([[(q // 3**s) % 3 for s in range(NUM_SIZES)] for q in range(27)], dtype=np.int8)
        top_size = np.full(27, -1, dtype=np.int8)
        top_col = np.zeros(27, dtype=np.int8)
        for q in range(27):
            for s in range(NUM_SIZES):
                if digits[q, s]:
                    top_size[q], top_col[q] = s, digits[q, s]
        t["digits"], t["top_size"], t["top_col"] = digits, top_size, top_col
        stride, last_base = self._stride, self._last_base
        mask = 2**64 - 1
        # square weights under g: sq_w[g, x, q] = board code of square code q standing on g(x)
        sq_w = np.zeros((n_sym, n_cells, 27), dtype=np.uint64)
        # slot table under g (Python ints reduced mod 2**64, then uint64)
        slots = np.zeros((n_sym, NUM_PIECES * (n_cells + n_edges) + 1), dtype=np.uint64)
        for g, perm in enumerate(self.perms):
            for x in range(n_cells):
                for q in range(27):
                    code = 0
                    for s in range(NUM_SIZES):
                        if digits[q, s]:
                            code += self.weights[piece(int(digits[q, s]) - 1, s)][perm[x]]
                    sq_w[g, x, q] = code
            row = [0] * slots.shape[1]
            for p in range(NUM_PIECES):
                w = self.weights[p]
                for x in range(n_cells):
                    row[p * n_cells + x] = (w[perm[x]] * stride) & mask
                for e, (a, b) in enumerate(self.edges):
                    last = self.edge_index[(perm[a], perm[b])] + 1
                    delta = w[perm[b]] - w[perm[a]]
                    row[NUM_PIECES * n_cells + p * n_edges + e] = (delta * stride + last) & mask
            slots[g] = np.array(row, dtype=np.uint64)
        t["sq_w"], t["slots"] = sq_w, slots
        t["eu"] = np.array([a for a, _ in self.edges], dtype=np.int64)
        t["ev"] = np.array([b for _, b in self.edges], dtype=np.int64)
        t["rev1"] = np.array([self.edge_index[(b, a)] + 1 for a, b in self.edges], dtype=np.int64)
        t["lines"] = np.array(self.lines, dtype=np.int64).reshape(len(self.lines), self.line)
        placeable = np.ones(n_cells, dtype=bool)
        if self.centre is not None:
            placeable[self.centre] = False
        t["placeable"] = placeable
        t["pow_pieces"] = np.array([(n_cells + 1) ** p for p in range(NUM_PIECES)], dtype=np.uint64)
        if self.scheme == "squares":
            t["pow_squares"] = np.array([27**x for x in range(n_cells)], dtype=np.uint64)
        self._np_tables = t
        return t

    def _decode_squares(self, board: np.ndarray) -> np.ndarray:
        """``uint64[m]`` board codes -> ``int64[m, cells]`` square codes ``sum(colour_s * 3**s)``."""
        t = self._tables()
        m, n_cells = len(board), self.cells
        if self.scheme == "squares":
            return ((board[:, None] // t["pow_squares"][None, :]) % np.uint64(27)).astype(np.int64)
        base = np.uint64(n_cells + 1)
        loc = ((board[:, None] // t["pow_pieces"][None, :]) % base).astype(np.int64)  # 0 = supply
        sq = np.zeros((m, n_cells + 1), dtype=np.int64)
        rows = np.arange(m)
        for p in range(NUM_PIECES):
            sq[rows, loc[:, p]] += (piece_colour(p) + 1) * 3 ** piece_size(p)
        return sq[:, 1:]

    def expand(self, keys: np.ndarray, *, canonical: bool = False) -> Expansion:
        """Compiled :meth:`Game.expand` (:func:`solver.games._override_jit.expand_kernel`):
        exactly the same arrays (tested), much faster.

        Decodes each key into square codes, lists its legal places and moves, and builds child
        keys from precomputed per-slot key changes (under every symmetry when ``canonical``,
        keeping the smallest), without building child boards.
        """
        if not self.fits_64:
            return super().expand(keys, canonical=canonical)
        t = self._tables()
        keys = np.ascontiguousarray(keys, dtype=np.uint64)
        pieces = self.scheme == "pieces"
        kind, to_move, offsets, children, result, child_tier = expand_kernel(
            keys, bool(canonical), np.uint64(self._last_base), np.uint64(self._stride), self.cells, self.per_size,
            self.no_undo, pieces, t["pow_pieces"], t.get("pow_squares", t["pow_pieces"]), t["digits"], t["top_size"],
            t["top_col"], t["sq_w"], t["slots"], t["eu"], t["ev"], t["rev1"], t["lines"], t["placeable"])
        return Expansion(
            kind=kind,
            to_move=to_move,
            offsets=offsets,
            children=children,
            probs=None,
            result=result,
            margin=np.zeros(len(keys), dtype=np.int32),
            child_tier=child_tier,
        )
