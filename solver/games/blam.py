"""Blam! (Jon Eargle, 2005): place a pyramid, push every neighbour one square away, score what
you push off the board.

Rules: /work/shared/rules/blam.md. In short: the player to move places a pyramid from their own
stash on an empty square; every pyramid on the 8 neighbouring squares (any owner, own included)
is pushed one square straight away from it. With ``chain=on`` (the rules) the whole contiguous
run of pyramids along each of the 8 rays moves one square outward (the run ends at the first
empty square; pushes are never blocked); with ``chain=off`` only the adjacent pyramid moves, and
not at all when the square beyond it is occupied. A pyramid pushed off the board goes back to the
placer's stash when it is the placer's own colour, else into the placer's treasure for good. A
player whose stash is empty passes. Score = pips in the treasure (S=1, M=2, L=3).

Rulings (the text is silent; documented here and in the tests):

* ``push_smaller_only`` with ``chain=on``: the placed pyramid is what pushes the whole run along a
  ray, so it must be able to push every pyramid of the run. A pyramid larger than the placed one
  anywhere in the run **blocks the whole ray** (nothing on that ray moves): the pyramids in
  front of it cannot enter its square, and a push never "stops half-way" (it is one square for
  the whole run or nothing, exactly like a blocked push with ``chain=off``).
* The game ends when **no player can place**: every stash is empty (the rules' end), or the
  board is full. A full board cannot occur with ``chain=on`` and ``push_smaller_only=off`` (a
  placement with any neighbour always empties the neighbouring square); with ``chain=off`` or
  ``push_smaller_only=on`` it can, and then nobody could ever place again (everybody would pass
  for ever), so the game ends there and is scored as usual.
* Terminal ``to_move`` is the next seat in order after the last mover (passes included).
* ``tiebreak=captures``: among the players with the top score, the one with more captured
  pyramids wins; still level is a tie.

Players are numbered 0..P-1 in the API (seat order); the board picture writes them as digits
1..P, as the rules number seats 1..4.

Keys (exact, reversible; ``key_scheme``/``key_bits`` tell which one a variant uses): a mixed-radix
integer whose lowest digit is the player to move, then (3+ players only) the treasure of players
0..P-2 per size (radix ``(P-1)*per_size+1``; the last player's treasure and, with 2 players, both
treasures follow from the conservation of pieces), then either

* ``"piece"``: per colour and size, the set of squares holding such pyramids (colex rank of the
  subset) together with how many are in the owner's stash: ``sum_m C(n, m) * (per_size-m+1)``
  values per class. With ``per_size=1`` this is simply "which square, in the stash, or captured"
  (``n+2`` values). Budgets (2 players): 3x3 per_size=1: 11**6*2 ~ 2**21.8; 4x4 per_size=1:
  18**6*2 ~ 2**26.0; 5x5 per_size=1: 27**6*2 ~ 2**29.5; 4x4 per_size=2: 155**6*2 ~ 2**44.7;
  3 players 3x3 per_size=1: 11**9*3**6*3 ~ 2**42.2; 4 players 3x3 per_size=1 ~ 2**61.5.
* ``"square"``: per square base ``1+3P`` (empty or owner and size), then every stash count
  (radix ``per_size+1``); smaller when many pyramids share a small board (e.g. 3x3 per_size=5).

The smaller of the two is used. Variants whose key space exceeds 64 bits (the full 8x8 game)
still have exact keys (Python ints) and can be played and searched, but not enumerated into
tables; a warning says so.

A compiled :meth:`Blam.expand` (numba, :func:`solver.games._blam_jit.expand_kernel`) is used for
the ``"piece"`` scheme when keys fit in 64 bits; ``tests/test_blam.py`` proves it equals the
per-state reference (``Game.expand``).
"""

from __future__ import annotations

import itertools
from functools import cached_property
from math import comb, prod
from typing import Any, NamedTuple, Sequence

import numpy as np
from numba import njit

from solver.core.game import Expansion, Game, NodeKind, Outcome, Playout, Result
from solver.core.picture import Piece, Picture
from solver.core.ranking import BoardRanking
from solver.core.symmetry import cell_name, grid_rays, grid_symmetries, parse_cell
from solver.core.variant import Param, Variant
from solver.errors import IllegalMoveError, TooBigError, VariantError
from solver.games._blam_jit import TREE_PARTS, expand_kernel, playout_kernel
from solver.core.uct_jit import CompiledRules

#: the pass action (a player whose stash is empty)
PASS = -1
SIZE_LETTERS = "SML"
#: pips of S, M, L
PIPS = (1, 2, 3)
_DIRECTIONS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))


def _same_code(state: Any, action: int) -> int:
    """Blam!'s move codes are its actions."""
    return int(action)


def _pips(treasure: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """Pips in every player's treasure (counts of S, M, L captured)."""
    return tuple(sum(c * pip for c, pip in zip(t, PIPS)) for t in treasure)


class BlamState(NamedTuple):
    """A Blam! position.

    ``board``: per square (row-major, row 0 at the bottom) 0 when empty, else
    ``1 + 3 * owner + size`` (size 0/1/2 = S/M/L). ``stash[p][size]``: pyramids player ``p`` can
    still place. ``treasure[p][size]``: pyramids (of other colours) player ``p`` has pushed off.
    ``mover``: the player to move (at the end: the next seat after the last mover).
    """

    board: tuple[int, ...]
    stash: tuple[tuple[int, int, int], ...]
    treasure: tuple[tuple[int, int, int], ...]
    mover: int


def piece_code(owner: int, size: int) -> int:
    """The board value of a pyramid of ``owner`` and ``size`` (0 = S, 1 = M, 2 = L)."""
    return 1 + 3 * owner + size


def blam_position_bound(squares: int, players: int, per_size: int) -> int:
    """An upper bound of Blam!'s positions (see :meth:`Blam.position_bound`); exact integers."""
    from fractions import Fraction
    from math import factorial

    top = min(per_size, squares)
    ways = [Fraction(sum(comb(per_size - m - t + players - 2, players - 2) for t in range(per_size - m + 1)),
                     factorial(m)) for m in range(top + 1)]
    poly = [Fraction(1)]
    for _ in range(3 * players):  # one factor per colour and size
        out = [Fraction(0)] * min(len(poly) + top, squares + 1)
        for i, a in enumerate(poly):
            for j, b in enumerate(ways):
                if i + j <= squares:
                    out[i + j] += a * b
        poly = out
    arrangements = sum(poly[t] * factorial(squares) / factorial(squares - t) for t in range(len(poly)))
    return players * int(arrangements)


_SIDE_BOUNDS = "boards have 1 to 26 rows and columns: columns are named by the letters a..z"


class Blam(Game[BlamState]):
    """Blam! on a ``rows`` x ``cols`` board for 2-4 players (see the module docstring)."""

    name = "blam"
    title = "Blam! (Jon Eargle): place a pyramid, push its neighbours, score what falls off"
    params = (
        Param("rows", "int", 8, "board rows", min=1, max=26, bounds=_SIDE_BOUNDS),
        Param("cols", "int", 8, "board columns (letters a..)", min=1, max=26, bounds=_SIDE_BOUNDS),
        Param("players", "int", 2, "number of players (3-4: solved per seat vs the rest)", min=2, max=4,
              bounds="the rules are for 2 to 4 players"),
        Param("per_size", "int", 5, "pyramids of each size per player", min=1, max=15,
              bounds="1 to three times the rules' 5 (three colour sets a player)"),
        Param("chain", "bool", True, "pushes chain along the ray (off: only the adjacent pyramid moves)"),
        Param("push_smaller_only", "bool", False, "a placed pyramid pushes only equal or smaller ones"),
        Param("tiebreak", "str", "none", "equal top scores: tie, or more captured pyramids wins",
              choices=("none", "captures")),
    )
    presets = {
        "3x3": {"rows": 3, "cols": 3, "per_size": 1},
        "4x4": {"rows": 4, "cols": 4, "per_size": 1},
        "3x3-3p": {"rows": 3, "cols": 3, "per_size": 1, "players": 3},
        "4x4-2": {"rows": 4, "cols": 4, "per_size": 2},
        # 6x6 with one pyramid of each size a player (175M positions: tier by tier)
        "6x6": {"rows": 6, "cols": 6, "per_size": 1},
    }
    largest_preset = "4x4"
    #: no dice, no secret choices (declared: ``pyramids check`` proves it)
    chance = "never"
    secret_choices = False
    #: seats in order; a game of 2 or 3 players uses the first 2 or 3
    seat_names = ("Player 1", "Player 2", "Player 3", "Player 4")
    rules_version = "1"
    scored = True

    def __init__(self, variant: Variant) -> None:
        super().__init__(variant)
        v = self.variant
        self.rows: int = v.rows
        self.cols: int = v.cols
        self.n: int = self.rows * self.cols
        self.num_players = v.players
        self.per_size: int = v.per_size
        self.chain: bool = v.chain
        self.smaller_only: bool = v.push_smaller_only
        self.captures_tiebreak: bool = v.tiebreak == "captures"
        self._rays = self._make_rays()
        self._playout_rays: tuple[np.ndarray, ...] | None = None
        self._perms = grid_symmetries(self.rows, self.cols)
        self._setup_keys()

    def too_big(self) -> str | None:
        return f"its position keys need {self.key_bits} bits" if self.key_space > 2**64 else None

    def position_bound(self) -> int:
        """The player to move times every way the pyramids can be split among the squares (at
        most one a square), the stashes and the treasures.

        Per colour and size (a class), ``m`` pyramids stand on the board, ``t`` are in the owner's
        stash and the other ``per_size - m - t`` were captured, shared among the ``P - 1`` other
        players (``C(gone + P - 2, P - 2)`` ways). Summed over the numbers on the board, the
        squares are chosen by the exponential generating function ``prod_c sum_m w(m) z**m / m!``
        (coefficient of ``z**t`` times ``n! / (n - t)!``). Measured: 3x3 3,724 positions up to
        symmetry (bound 1.0e6, 1.3e5 up to symmetry), 4x4 637,102 (3.1e7; 3.8e6), 4x4-2
        2,240,771,209 (9.2e11; 1.2e11)."""
        return blam_position_bound(self.rows * self.cols, self.num_players, self.per_size)

    def check_variant(self, variant: Variant) -> None:
        if variant.rows * variant.cols < 2:
            raise VariantError(
                "a 1x1 board has no neighbours to push; use at least 2 squares, e.g. --set rows=3 --set cols=3"
            )

    # --- geometry ---------------------------------------------------------------------
    def _make_rays(self) -> tuple[tuple[tuple[int, ...], ...], ...]:
        """Per square, the non-empty rays (cells outward, nearest first) in the 8 directions."""
        return grid_rays(self.rows, self.cols, _DIRECTIONS)

    # --- the protocol -----------------------------------------------------------------
    def initial_state(self) -> BlamState:
        P, k = self.num_players, self.per_size
        return BlamState(
            board=(0,) * self.n,
            stash=tuple((k, k, k) for _ in range(P)),
            treasure=tuple((0, 0, 0) for _ in range(P)),
            mover=0,
        )

    def node_kind(self, state: BlamState) -> NodeKind:
        if 0 not in state.board or not any(any(s) for s in state.stash):
            return NodeKind.TERMINAL
        return NodeKind.DECISION

    def to_move(self, state: BlamState) -> int:
        return state.mover

    def legal_actions(self, state: BlamState) -> list[int]:
        """Placements ``size * n + cell`` (sizes S, M, L; cells ascending), or ``[PASS]``."""
        if self.node_kind(state) == NodeKind.TERMINAL:
            return []
        stash = state.stash[state.mover]
        if not any(stash):
            return [PASS]
        empty = [c for c, v in enumerate(state.board) if v == 0]
        return [s * self.n + c for s in range(3) if stash[s] for c in empty]

    def apply(self, state: BlamState, action: int) -> BlamState:
        P = self.num_players
        p = state.mover
        nxt = (p + 1) % P
        if action == PASS:
            if any(state.stash[p]):
                raise IllegalMoveError("you can pass only with an empty stash; place a pyramid")
            return state._replace(mover=nxt)
        size, cell = divmod(action, self.n)
        if not (0 <= size < 3) or state.stash[p][size] == 0 or state.board[cell] != 0:
            raise IllegalMoveError(f"{self.action_name(state, action)} is not legal here")
        board = list(state.board)
        stash = [list(s) for s in state.stash]
        treasure = [list(t) for t in state.treasure]
        stash[p][size] -= 1
        board[cell] = piece_code(p, size)

        def fall(code: int) -> None:
            owner, sz = divmod(code - 1, 3)
            if owner == p:
                stash[p][sz] += 1
            else:
                treasure[p][sz] += 1

        for ray in self._rays[cell]:
            if self.chain:
                run = 0
                while run < len(ray) and board[ray[run]]:
                    run += 1
                if run == 0:
                    continue
                if self.smaller_only and any((board[x] - 1) % 3 > size for x in ray[:run]):
                    continue  # ruling: a larger pyramid in the run blocks the whole ray
                if run == len(ray):
                    fall(board[ray[run - 1]])
                else:
                    board[ray[run]] = board[ray[run - 1]]
                for j in range(run - 1, 0, -1):
                    board[ray[j]] = board[ray[j - 1]]
                board[ray[0]] = 0
            else:
                first = board[ray[0]]
                if not first:
                    continue
                if self.smaller_only and (first - 1) % 3 > size:
                    continue
                if len(ray) == 1:
                    fall(first)
                    board[ray[0]] = 0
                elif board[ray[1]] == 0:
                    board[ray[1]] = first
                    board[ray[0]] = 0
                # else: blocked, nothing moves
        return BlamState(
            board=tuple(board),
            stash=tuple(tuple(s) for s in stash),  # type: ignore[misc]
            treasure=tuple(tuple(t) for t in treasure),  # type: ignore[misc]
            mover=nxt,
        )

    def scores(self, state: BlamState) -> tuple[int, ...]:
        """Pips in every player's treasure."""
        return _pips(state.treasure)

    def outcome(self, state: BlamState) -> Outcome:
        return self._outcome(state.treasure)

    def _outcome(self, treasure: Sequence[Sequence[int]]) -> Outcome:
        """The end by the treasures: the one top scorer wins, several tie, the rest lose (with
        ``tiebreak=captures``, more pyramids captured breaks a tie of scores)."""
        scores = _pips(treasure)
        if self.captures_tiebreak:
            rank = [(s, sum(t)) for s, t in zip(scores, treasure)]
        else:
            rank = [(s, 0) for s in scores]
        top = max(rank)
        winners = [p for p, r in enumerate(rank) if r == top]
        if len(winners) == 1:
            results = tuple(Result.WIN if p == winners[0] else Result.LOSS for p in range(len(rank)))
        else:
            results = tuple(Result.TIE if p in winners else Result.LOSS for p in range(len(rank)))
        return Outcome(results, scores)

    # --- compiled random play ----------------------------------------------------------
    def playout_rays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rays of every square flattened for the compiled kernels: ``cell_off`` (each
        square's first ray), ``ray_off`` (each ray's first cell) and ``ray_cells``."""
        if self._playout_rays is None:
            cell_off, ray_off, cells = [0], [0], []
            for rays in self._rays:
                for ray in rays:
                    cells.extend(ray)
                    ray_off.append(len(cells))
                cell_off.append(len(ray_off) - 1)
            self._playout_rays = tuple(np.array(a, dtype=np.int64) for a in (cell_off, ray_off, cells))
        return self._playout_rays

    def random_playout(self, state: BlamState, max_choices: int, seed: int) -> Playout:
        """Random placements from ``state`` in the compiled kernel
        (:func:`solver.games._blam_jit.playout_kernel`), any board size and number of players."""
        cap, seed, taken, counts = Playout.buffers(max_choices, seed)
        board = np.array(state.board, dtype=np.int64)
        stash = np.array(state.stash, dtype=np.int64)
        treasure = np.array(state.treasure, dtype=np.int64)
        mover, moves = playout_kernel(board, stash, treasure, state.mover, cap, seed, self.chain,
                                      self.smaller_only, *self.playout_rays(), taken, counts)
        values = None
        if board.all() or not stash.any():  # the game ended (as node_kind says), not the cap
            values = self._outcome(treasure.tolist()).values

        def end() -> BlamState:
            return BlamState(board=tuple(board.tolist()), stash=tuple(map(tuple, stash.tolist())),
                             treasure=tuple(map(tuple, treasure.tolist())), mover=int(mover))

        return Playout.lazy(end, moves, taken, counts, values=values)

    def compiled_rules(self) -> CompiledRules | None:
        """The compiled parts of the rules for MCTS's compiled tree (two players; more players
        search through the readable rules). Move codes are the actions (``size * n + cell``,
        ``-1`` the pass); the position is the board, the stashes, the treasures and the mover."""
        return self._tree_rules

    @cached_property
    def _tree_rules(self) -> CompiledRules | None:
        """:meth:`compiled_rules`, built once."""
        if self.num_players != 2:
            return None
        cell_off, ray_off, ray_cells = self.playout_rays()
        params = (cell_off, ray_off, ray_cells, bool(self.chain), bool(self.smaller_only),
                  bool(self.captures_tiebreak), int(self.per_size))

        def encode(state: BlamState) -> np.ndarray:
            return np.array([*state.board, *state.stash[0], *state.stash[1], *state.treasure[0],
                             *state.treasure[1], state.mover], dtype=np.int64)

        return CompiledRules(parts=TREE_PARTS, params=params, encode=encode, max_branch=3 * self.n,
                             code=_same_code, action=_same_code)

    # --- keys -------------------------------------------------------------------------
    def _setup_keys(self) -> None:
        """Choose the smaller of the two key schemes and its digit radices (see module doc)."""
        P, k, n = self.num_players, self.per_size, self.n
        mmax = min(k, n)
        self._class_offsets = [0]
        for m in range(mmax + 1):
            self._class_offsets.append(self._class_offsets[-1] + comb(n, m) * (k - m + 1))
        class_radix = self._class_offsets[-1]
        head = [P] + ([(P - 1) * k + 1] * (3 * (P - 1)) if P >= 3 else [])
        piece = head + [class_radix] * (3 * P)
        square = head + [k + 1] * (3 * P) + [1 + 3 * P] * n
        if prod(piece) <= prod(square):
            self.key_scheme = "piece"
            self._radices = piece
        else:
            self.key_scheme = "square"
            self._radices = square
        self._head = len(head)
        self.key_space: int = prod(self._radices)
        self.key_bits: int = (self.key_space - 1).bit_length()

    def _class_digit(self, cells: list[int], in_stash: int) -> int:
        m = len(cells)
        rank = sum(comb(c, i + 1) for i, c in enumerate(cells))
        return self._class_offsets[m] + rank * (self.per_size - m + 1) + in_stash

    def _class_undigit(self, digit: int) -> tuple[list[int], int]:
        m = 0
        while self._class_offsets[m + 1] <= digit:
            m += 1
        rank, in_stash = divmod(digit - self._class_offsets[m], self.per_size - m + 1)
        cells = []
        for i in range(m, 0, -1):
            c = i - 1
            while comb(c + 1, i) <= rank:
                c += 1
            cells.append(c)
            rank -= comb(c, i)
        cells.reverse()
        return cells, in_stash

    def encode(self, state: BlamState) -> int:
        P = self.num_players
        digits = [state.mover]
        if P >= 3:
            digits += [state.treasure[p][s] for p in range(P - 1) for s in range(3)]
        if self.key_scheme == "piece":
            where: dict[int, list[int]] = {}
            for c, v in enumerate(state.board):
                if v:
                    where.setdefault(v, []).append(c)
            for q in range(P):
                for s in range(3):
                    digits.append(self._class_digit(where.get(piece_code(q, s), []), state.stash[q][s]))
        else:
            digits += [state.stash[q][s] for q in range(P) for s in range(3)]
            digits += list(state.board)
        key = 0
        for d, r in zip(reversed(digits), reversed(self._radices)):
            key = key * r + d
        return key

    def decode(self, key: int) -> BlamState:
        P, k, n = self.num_players, self.per_size, self.n
        key = int(key)
        digits = []
        for r in self._radices:
            key, d = divmod(key, r)
            digits.append(d)
        mover = digits[0]
        stored = digits[1 : self._head]
        rest = digits[self._head :]
        if self.key_scheme == "piece":
            board = [0] * n
            stash_flat = []
            for j, d in enumerate(rest):
                cells, t = self._class_undigit(d)
                for c in cells:
                    board[c] = j + 1
                stash_flat.append(t)
        else:
            stash_flat = rest[: 3 * P]
            board = rest[3 * P :]
        stash = tuple(tuple(stash_flat[3 * q : 3 * q + 3]) for q in range(P))
        on_board = [0] * (3 * P)
        for v in board:
            if v:
                on_board[v - 1] += 1
        # pyramids of colour q and size s no longer in play = captured by someone
        gone = [[k - on_board[3 * q + s] - stash[q][s] for s in range(3)] for q in range(P)]
        if P == 2:
            treasure = (tuple(gone[1]), tuple(gone[0]))
        else:
            rows = [tuple(stored[3 * p : 3 * p + 3]) for p in range(P - 1)]
            last = tuple(sum(gone[q][s] for q in range(P)) - sum(t[s] for t in rows) for s in range(3))
            treasure = tuple(rows) + (last,)
        return BlamState(tuple(board), stash, treasure, mover)  # type: ignore[arg-type]

    # --- tiers ------------------------------------------------------------------------
    # What only moves one way (checked against ``apply``; the stashes do NOT: a placer's own
    # pyramid pushed off the board returns to their stash and may be placed again):
    # * a pyramid pushed off the board of another colour goes into the placer's treasure for
    #   good, so every treasure count ``treasure[p][s]`` never falls, and neither does the count
    #   of pyramids of each colour and size out of play (``gone[q][s]``: neither on the board nor
    #   in the stash; its sum over q is the sum of the treasures per size);
    # * an empty stash stays empty: a stash only grows when its owner pushes their own pyramid
    #   off while placing, and a player with an empty stash cannot place (they pass).
    # The tier is the mixed-radix number of: the treasures of players 0..P-2 (3+ players only,
    # radix ``(P-1)*per_size + 1``, most significant), ``gone`` per colour and size (radix
    # ``per_size + 1``) and one "stash empty" bit per player (least significant). With two
    # players ``gone`` is the treasures (player p's treasure is the opponent's colour gone).
    # Every component never falls, so the tier never falls; a capture or a stash running dry
    # raises it, other placements (and passes) stay in the tier: endless play (refilling a stash
    # by pushing your own pyramids off) lives inside one tier. Symmetries only move squares.

    def _tier_radices(self) -> list[int]:
        """Radices of the tier digits, least significant first (empty bits, gone, treasures)."""
        P, k = self.num_players, self.per_size
        return [2] * P + [k + 1] * (3 * P) + ([(P - 1) * k + 1] * (3 * (P - 1)) if P >= 3 else [])

    def tier_of(self, keys: np.ndarray) -> np.ndarray:
        """``int64[len(keys)]``: the captures and emptied stashes of each key as a mixed-radix
        number (see the comment above); never falls along a move. Compiled (numba) on the key
        digits of both key schemes, no Python per key."""
        if self.key_space > 2**64:
            raise TooBigError(f"{self.variant.label()} needs {self.key_bits}-bit keys; tiers need uint64 keys")
        keys = np.asarray(keys, dtype=np.uint64)
        out = np.empty(len(keys), dtype=np.int64)
        _tier_kernel(
            keys, np.array(self._radices, dtype=np.uint64), self._head, self.num_players, self.per_size,
            self.n, self.key_scheme == "piece", np.array(self._class_offsets, dtype=np.int64),
            np.array(self._tier_radices(), dtype=np.int64), out,
        )
        return out

    def tier_parts(
        self, tier: int
    ) -> tuple[tuple[tuple[int, int, int], ...], tuple[tuple[int, int, int], ...], tuple[bool, ...]]:
        """``(treasure per player per size, lost per colour per size, stash empty per player)``
        of a tier id."""
        P = self.num_players
        digits = []
        t = int(tier)
        for r in self._tier_radices():
            t, d = divmod(t, r)
            digits.append(d)
        empty = tuple(bool(d) for d in digits[:P])
        gone = digits[P : 4 * P]
        if P == 2:
            treasure = (tuple(gone[3:6]), tuple(gone[0:3]))
        else:
            rows = [tuple(digits[4 * P + 3 * p : 4 * P + 3 * p + 3]) for p in range(P - 1)]
            last = tuple(sum(gone[3 * q + s] for q in range(P)) - sum(row[s] for row in rows) for s in range(3))
            treasure = tuple(rows) + (last,)
        lost = tuple(tuple(gone[3 * q : 3 * q + 3]) for q in range(P))
        return treasure, lost, empty  # type: ignore[return-value]

    def tier_name(self, tier: int) -> str:
        """``took 1:SM 2:- | empty 2``: each player's treasure (a letter per pyramid), with 3+
        players each colour's pyramids lost (``lost 1:S 2:- 3:M``), and the players whose stash
        is empty for good."""
        treasure, lost, empty = self.tier_parts(tier)
        took = " ".join(
            f"{p + 1}:" + ("".join(SIZE_LETTERS[s] * c for s, c in enumerate(t)) or "-")
            for p, t in enumerate(treasure)
        )
        text = f"took {took}"
        if self.num_players >= 3:  # who lost what is not implied by the treasures
            text += " | lost " + " ".join(
                f"{q + 1}:" + ("".join(SIZE_LETTERS[s] * c for s, c in enumerate(g)) or "-")
                for q, g in enumerate(lost)
            )
        dry = [str(p + 1) for p, e in enumerate(empty) if e]
        return text + (f" | empty {','.join(dry)}" if dry else "")

    # --- ranks (issue 34: tiers stored by rank, without keys) -----------------------------
    # A tier fixes each colour and size's pyramids out of play (``gone``), which stashes are empty
    # and (3+ players) the stored treasures; the rest of a key is the mover and the board (a
    # square holds nothing or one pyramid: symbol ``3 * colour + size + 1``), and the stashes
    # follow from the board (``per_size - gone - on board``). The board's counts vary inside a
    # tier (a pyramid pushed back to its stash), so every count vector the tier allows gets a
    # block of ranks (:class:`~solver.core.ranking.BoardRanking`): at most ``per_size - gone`` on
    # the board, all of them for a player whose stash is empty, fewer for one whose is not.
    # Rank = board rank * players + mover. Only the ``"piece"`` key scheme (every 2-player
    # variant that fits 64 bits but the crowded small boards) is ranked (:meth:`ranked`).

    def ranked(self) -> bool:
        return self.key_scheme == "piece" and self.key_space <= 2**64

    def _ranking(self, tier: int) -> tuple[BoardRanking, list[int], list[int]]:
        """The tier's board ranking, ``gone`` per class and the stored head digits."""
        tier = int(tier)
        cache = self.__dict__.setdefault("_ranking_cache", {})
        if tier not in cache:
            if not self.ranked():
                raise ValueError(f"{self.variant.label()} uses the {self.key_scheme!r} key scheme; only "
                                 "the 'piece' scheme (64-bit keys) is ranked")
            treasure, lost, empty = self.tier_parts(tier)
            P, k = self.num_players, self.per_size
            gone = [lost[q][s] for q in range(P) for s in range(3)]
            ranges = []
            for j in range(3 * P):
                top = k - gone[j]
                ranges.append([top] if empty[j // 3] else list(range(top + 1)))
            vectors = [v for v in itertools.product(*ranges) if sum(v) <= self.n
                       and all(empty[q] or sum(k - gone[j] - v[j] for j in range(3 * q, 3 * q + 3)) > 0
                               for q in range(P))]
            head = [d for p in range(P - 1) for d in treasure[p]] if P >= 3 else []
            cache[tier] = (BoardRanking(self.n, 3 * P + 1, vectors), gone, head)
        return cache[tier]

    def tier_size(self, tier: int) -> int:
        """The tier's boards (every count vector it allows) times the movers."""
        return self._ranking(tier)[0].size * self.num_players

    @cached_property
    def _class_tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per class digit: its squares (``-1`` past its level) and its level; ``C(c, i)``."""
        R, width = self._class_offsets[-1], max(1, min(self.per_size, self.n))
        cells = np.full((R, width), -1, np.int64)
        level = np.zeros(R, np.int64)
        for d in range(R):
            found, _ = self._class_undigit(d)
            level[d] = len(found)
            cells[d, : len(found)] = found
        table = np.array([[comb(c, i) for i in range(width + 2)] for c in range(self.n)], np.int64)
        return cells, level, table

    def rank(self, tier: int, keys: np.ndarray) -> np.ndarray:
        """Each key's rank in ``tier``; ``ValueError`` naming a key not in the tier."""
        ranking, _, _ = self._ranking(tier)
        keys = np.ascontiguousarray(keys, dtype=np.uint64)
        cells, level, _ = self._class_tables
        rest = keys.copy()
        mover = (rest % np.uint64(self._radices[0])).astype(np.int64)
        for r in self._radices[: self._head]:
            rest //= np.uint64(r)
        board = np.zeros((len(keys), self.n), np.int64)
        rows = np.arange(len(keys))
        radix = np.uint64(self._class_offsets[-1])
        for j in range(3 * self.num_players):
            d = (rest % radix).astype(np.int64)
            rest //= radix
            for i in range(cells.shape[1]):
                on = i < level[d]
                board[rows[on], cells[d[on], i]] = j + 1
        r = ranking.rank(board)
        if len(r) and r.min() < 0:
            raise ValueError(f"key {int(keys[np.argmin(r)])} is not in tier {self.tier_name(tier)}")
        return r * self.num_players + mover

    def unrank(self, tier: int, ranks: np.ndarray) -> np.ndarray:
        """The keys of ``ranks`` of ``tier`` (the inverse of :meth:`rank`)."""
        ranking, gone, head = self._ranking(tier)
        ranks = np.ascontiguousarray(ranks, dtype=np.int64)
        P, k = self.num_players, self.per_size
        board = ranking.unrank(ranks // P)
        _, _, table = self._class_tables
        cols = np.arange(self.n)
        digits = [(ranks % P).astype(np.uint64)] + [np.full(len(ranks), d, np.uint64) for d in head]
        for j in range(3 * P):
            mask = board == j + 1
            m = mask.sum(axis=1)
            index = np.cumsum(mask, axis=1)  # (the i-th square of the class, from 1)
            colex = np.where(mask, table[cols[None, :], index], 0).sum(axis=1)
            offsets = np.asarray(self._class_offsets, np.int64)[m]
            digits.append((offsets + colex * (k - m + 1) + (k - gone[j] - m)).astype(np.uint64))
        key = np.zeros(len(ranks), np.uint64)
        for d, r in zip(reversed(digits), reversed(self._radices)):
            key = key * np.uint64(r) + d
        return key

    # --- symmetry ---------------------------------------------------------------------
    def symmetries(self, state: BlamState) -> list[BlamState]:
        out = [state]
        for perm in self._perms[1:]:
            board = [0] * self.n
            for i, v in enumerate(state.board):
                board[perm[i]] = v
            out.append(state._replace(board=tuple(board)))
        return out

    # --- people -----------------------------------------------------------------------
    def action_name(self, state: BlamState, action: int) -> str:
        if action == PASS:
            return "pass"
        size, cell = divmod(action, self.n)
        return f"{SIZE_LETTERS[size]}@{cell_name(cell, self.cols)}"

    def parse_action(self, state: BlamState, text: str) -> int:
        """``S@b2`` / ``place S@b2`` / ``pass`` (case-insensitive), checked for legality."""
        raw = text.strip()
        words = raw.lower().split()
        if len(words) == 2 and words[0] == "place":
            raw = words[1]
        if raw.lower() == "pass":
            action = PASS
        else:
            size_text, at, cell_text = raw.partition("@")
            cell = parse_cell(cell_text, self.rows, self.cols) if at else None
            if size_text.upper() not in ("S", "M", "L") or cell is None:
                raise IllegalMoveError(
                    f"{text!r} is not a Blam! move; write size@cell like S@b2, M@a1, L@c3, or pass"
                )
            action = SIZE_LETTERS.index(size_text.upper()) * self.n + cell
        if self.node_kind(state) == NodeKind.TERMINAL or action not in self.legal_actions(state):
            legal = ", ".join(self.action_name(state, a) for a in self.legal_actions(state)[:40])
            raise IllegalMoveError(f"{text!r} is not a legal move here; legal: {legal or 'none (game over)'}")
        return action

    def render(self, state: BlamState) -> str:
        lines = []
        for r in range(self.rows - 1, -1, -1):
            cells = []
            for c in range(self.cols):
                v = state.board[r * self.cols + c]
                if v:
                    owner, size = divmod(v - 1, 3)
                    cells.append(f"{owner + 1}{SIZE_LETTERS[size]}")
                else:
                    cells.append(" .")
            lines.append(f"{r + 1:>2} " + " ".join(cells))
        lines.append("   " + " ".join(f" {chr(ord('a') + c)}" for c in range(self.cols)))
        lines.extend(self._status_lines(state))
        return "\n".join(lines)

    def _status_lines(self, state: BlamState) -> list[str]:
        """Each player's stash, treasure and score, then who is to move (or the results)."""
        lines: list[str] = []
        scores = self.scores(state)
        for p in range(self.num_players):
            st = " ".join(f"{n}{l}" for n, l in zip(state.stash[p], SIZE_LETTERS))
            tr = " ".join(f"{n}{l}" for n, l in zip(state.treasure[p], SIZE_LETTERS))
            lines.append(f"player {p + 1}: stash {st} | treasure {tr} | score {scores[p]}")
        if self.node_kind(state) == NodeKind.TERMINAL:
            out = self.outcome(state)
            lines.append("game over: " + ", ".join(
                f"player {p + 1} {res.name.lower()}" for p, res in enumerate(out.results)))
        else:
            lines.append(f"to move: player {state.mover + 1}")
        return lines

    def picture(self, state: BlamState) -> Picture:
        """The board for drawing: each pyramid in its owner's colour ``p1``..``p4`` (labelled
        with the player's number); the caption holds every stash, treasure and score and who is
        to move."""
        cells: list[tuple[Piece, ...]] = []
        for v in state.board:
            if v:
                owner, size = divmod(v - 1, 3)
                cells.append((Piece(f"p{owner + 1}", size, str(owner + 1)),))
            else:
                cells.append(())
        return Picture("grid", self.rows, self.cols, tuple(cells),
                       caption=tuple(self._status_lines(state)),
                       key=(("number on a pyramid", "its owner; the sizes are drawn small, medium, large"),
                            ("caption", "stashes, treasure (pyramids pushed off) and scores")))

    # --- the compiled path ---------------------------------------------------------------
    @cached_property
    def _fast(self) -> "_BlamBatch | None":
        """The compiled expander, when the variant allows it (piece keys within 64 bits)."""
        if self.key_scheme != "piece" or self.key_space > 2**64:
            return None
        if self._class_offsets[-1] * self.n > 5_000_000:
            return None
        return _BlamBatch(self)

    def expand(self, keys: np.ndarray, *, canonical: bool = False) -> Expansion:
        """Compiled children of many keys; equal to ``Game.expand`` (proved in the tests)."""
        if self.key_space > 2**64:
            raise TooBigError(
                f"{self.variant.label()} needs {self.key_bits}-bit keys, tables take 64: "
                "pick a smaller board or per_size (e.g. --set rows=4 --set cols=4 --set per_size=1)"
            )
        fast = self._fast
        if fast is None:
            return super().expand(keys, canonical=canonical)
        return fast.expand(np.ascontiguousarray(keys, dtype=np.uint64), canonical)


class _BlamBatch:
    """The compiled :meth:`Blam.expand` for the ``"piece"`` key scheme
    (:func:`solver.games._blam_jit.expand_kernel`): decode each key, one child per legal action
    (placements in ``legal_actions`` order, or the pass), pushes along the rays of the compiled
    playouts, and the children folded back into keys. The canonical key uses per-class digit
    tables: a symmetry only permutes the squares of each colour-and-size class, so its image
    digit is a table lookup.
    """

    def __init__(self, game: Blam) -> None:
        self.g = game
        P, k, n = game.num_players, game.per_size, game.n
        R = game._class_offsets[-1]
        # class digit -> (its squares, how many in the stash); and its images under every symmetry
        self.level_of = np.zeros(R, dtype=np.int64)
        self.stash_of = np.zeros(R, dtype=np.int64)
        self.cells_of = np.zeros((R, max(1, min(k, n))), dtype=np.int64)
        self.sym_digit = np.zeros((len(game._perms), R), dtype=np.uint64)
        for d in range(R):
            cells, t = game._class_undigit(d)
            self.level_of[d], self.stash_of[d] = len(cells), t
            self.cells_of[d, : len(cells)] = cells
            for g, perm in enumerate(game._perms):
                self.sym_digit[g, d] = game._class_digit(sorted(perm[c] for c in cells), t)
        # comb[c, i] = C(c, i) for the colex rank; i never exceeds min(per_size, n)
        self.comb = np.array([[comb(c, i) for i in range(min(k, n) + 1)] for c in range(n)], dtype=np.int64)
        self.radices = np.array(game._radices, dtype=np.uint64)
        self.class_offsets = np.array(game._class_offsets, dtype=np.int64)
        self.rays = game.playout_rays()

    def expand(self, keys: np.ndarray, canonical: bool) -> Expansion:
        g = self.g
        kind, to_move, offsets, children, result, margin = expand_kernel(
            keys, self.radices, g._head, g.num_players, g.per_size, g.n, self.class_offsets, self.level_of,
            self.stash_of, self.cells_of, self.comb, self.sym_digit, len(self.sym_digit) if canonical else 1,
            g.chain, g.smaller_only, g.captures_tiebreak, *self.rays,
        )
        return Expansion(kind=kind, to_move=to_move, offsets=offsets, children=children, probs=None,
                         result=result, margin=margin)


@njit(cache=True, nogil=True)
def _tier_kernel(keys, radices, head, P, k, n, piece, class_offsets, tier_radices, out):
    """:meth:`Blam.tier_of` of ``keys`` (uint64) into ``out``: read the key digits (mover,
    stored treasures, then the piece classes or the stashes and squares), count every colour and
    size on the board and in the stash, and fold (empty stashes, pyramids out of play, stored
    treasures) into the mixed-radix tier, most significant digit first."""
    C = 3 * P
    stash = np.zeros(C, dtype=np.int64)
    on_board = np.zeros(C, dtype=np.int64)
    stored = np.zeros(max(head - 1, 1), dtype=np.int64)
    class_radix = np.uint64(class_offsets[-1])
    stash_radix = np.uint64(k + 1)
    square_radix = np.uint64(1 + C)
    levels = len(class_offsets) - 1
    for i in range(len(keys)):
        rest = keys[i] // radices[0]  # the mover
        for h in range(1, head):
            stored[h - 1] = np.int64(rest % radices[h])
            rest = rest // radices[h]
        if piece:
            for j in range(C):
                d = np.int64(rest % class_radix)
                rest = rest // class_radix
                m = 0
                while m + 1 < levels and class_offsets[m + 1] <= d:
                    m += 1
                on_board[j] = m
                stash[j] = (d - class_offsets[m]) % (k - m + 1)
        else:
            for j in range(C):
                stash[j] = np.int64(rest % stash_radix)
                rest = rest // stash_radix
                on_board[j] = 0
            for _ in range(n):
                code = np.int64(rest % square_radix)
                rest = rest // square_radix
                if code:
                    on_board[code - 1] += 1
        # digits least significant first: P empty bits, C out-of-play counts, head-1 treasures
        tier = np.int64(0)
        for h in range(head - 2, -1, -1):
            tier = tier * tier_radices[P + C + h] + stored[h]
        for j in range(C - 1, -1, -1):
            tier = tier * tier_radices[P + j] + (k - on_board[j] - stash[j])
        for p in range(P - 1, -1, -1):
            dry = 1 if stash[3 * p] + stash[3 * p + 1] + stash[3 * p + 2] == 0 else 0
            tier = tier * 2 + dry
        out[i] = tier
