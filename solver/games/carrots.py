"""Carrots and Broccoli (Shane Tilton, 2011): plant vegetables by the dice, grow a garden.

Rules: /work/shared/rules/carrots-and-broccoli.md (authoritative). Two players: Carrots
(player 0, red and yellow, corner a1, moves first) and Broccoli (player 1, green and blue, the
opposite corner). Every turn is a **chance node** (roll the Pyramid die and the Colour die,
:mod:`solver.core.dice`) followed by a **decision node** of the same player (plant, move, move a
black wall pyramid, or pass). With ``wall=random`` the root is a chance node over the wall
arrangements.

Rulings of this implementation (where the rules file leaves a detail open)
--------------------------------------------------------------------------
* **Last-moved restriction**: it applies to the pyramid the previous player *moved* (a move or a
  black move), black pyramids included; a plant or a pass moves nothing, so after it every
  pyramid may be moved.
* **Black moves** need *another* black pyramid within king distance 2 after the move; on a 3x3
  board the single wall pyramid therefore never moves.
* **Winning group**: the pyramids of the player's colours that lie strictly on their side and are
  orthogonally connected to a pyramid on their corner square; the player has won when there are
  at least ``group`` of them (any connected set that large contains a connected subset of exactly
  ``group`` pyramids that keeps the corner).
* **Both groups complete at once**: the player who just moved wins. This cannot actually happen:
  a turn changes the pyramids of one colour only (a black move changes no group), so only that
  colour's owner can complete a group; the ruling is kept for safety.
* **Dice outcomes are grouped**: two rolls that allow exactly the same useful choices lead to the
  same decision node, so the chance node lists each distinct *effective roll* once with the summed
  probability (exact ``Fraction``). The effective roll drops the colours and sizes with which
  nothing can be done in the position (the allowed choices are always ``colours x sizes``).
  A roll that allows nothing is ``roll none`` (only ``pass``).
* **Pass**: with ``pass=on`` a player may always decline; with ``pass=off`` only when no option is
  legal (then the turn passes anyway).
* **Symmetry**: only the reflection along the main diagonal a1-h8 (keeps both sides). The
  reflection across the wall line swaps the players and colours and is left out.

Notation
--------
Pieces: colour letter ``r y g b`` (``k`` = black) + size ``S M L``, e.g. ``rS``, ``kM``.
Squares: ``a1`` is Carrots' corner (bottom left), Broccoli's corner is the top right.
Actions: ``plant rS@b2``, ``move gM b2-b3``, ``black M c1-c2``, ``pass``.
Chance outcomes: ``wall SML`` (root), ``roll r+g S/M`` (an effective roll: the colours, then the
sizes it allows), ``roll none``; a raw roll such as ``atom S/M`` or ``red L`` is accepted as well.
One-word forms for command lines that split moves on spaces: ``:`` or ``_`` stands for a space
(``wall:SM``, ``atom:S/M``, ``roll:r:S``), ``rS@b2`` = ``plant rS@b2``, ``gM:b2-b3`` =
``move gM b2-b3``, ``kM:c1-c2`` = ``black M c1-c2``.
The ``wall`` parameter: the sizes of the n-2 wall pyramids along the anti-diagonal from the
square next to the top-left corner down to the square next to the bottom-right corner, e.g.
``SML`` on a 5x5 board puts S on b4, M on c3 and L on d2.

Key (exact, reversible; mixed radix, least significant digit first)
-------------------------------------------------------------------
``node`` (258 values: 0 = root before the wall is set up, 1 = dice to roll or terminal,
``2 + (cmask << 3 | smask)`` = decision after an effective roll with colour mask ``cmask`` and
size mask ``smask``), ``to_move`` (2), ``last`` (n*n + 1: 0 = none, else 1 + square),
one digit per wall pyramid (n*n: its square; copies of a size sorted), then one digit per
coloured pyramid of every colour in play (n*n + 1: 0 = off the board, else 1 + square; copies
sorted). Squares are numbered row-major from a1 (``rank * n + file``). The root key is 0.
The 3x3 preset needs 36 bits, the 4x4 preset 46; variants whose key needs more than 64 bits can be
played but not solved (a warning says so).
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any, ClassVar, Iterator, Mapping

import numpy as np

from solver.core import dice
from solver.core.dice import (BLACK, BLUE, COLOUR_LETTERS, COLOUR_NAMES, GREEN, RED, SIZE_LETTERS,
                              YELLOW)
from solver.core.game import Chance, Expansion, Game, NodeKind, Outcome, Playout
from solver.core.picture import Piece, Picture
from solver.core.arrays import ranges as _ranges
from solver.games._carrots_jit import decision_kernel, playout_kernel
from solver.core.symmetry import cell_name, parse_cell
from solver.core.variant import Param, Variant
from solver.errors import IllegalMoveError, VariantError

#: special values of ``CarrotsState.roll``
SETUP = -2  # root: the wall is not set up yet (chance over arrangements)
TO_ROLL = -1  # the dice are still to be rolled (chance), or the game is over (terminal)

#: action types: an action is ``(type, colour, size, from_square, to_square)``
PLANT, MOVE, BLACK_MOVE, PASS = 0, 1, 2, 3
PASS_ACTION: tuple[int, int, int, int, int] = (PASS, -1, -1, -1, -1)

#: base of the node digit of the key
NODE_BASE = 2 + 256

PLAYER_NAMES = ("Carrots", "Broccoli")


def multinomial_denominator(counts: list[int]) -> int:
    """The product of the factorials of ``counts``."""
    from math import factorial

    out = 1
    for c in counts:
        out *= factorial(c)
    return out


def multinomial(counts: list[int]) -> int:
    """How many distinct orders a multiset with these multiplicities has."""
    from math import factorial

    return factorial(sum(counts)) // multinomial_denominator(counts)


def multiset_permutations(items: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    """The distinct orders of ``items``, in increasing order, each once (the next-permutation
    step): as many as their :func:`multinomial`, where ``itertools.permutations`` would list
    ``len(items)!`` of them (14! = 8.7e10 for the 16x16 wall)."""
    a = sorted(items)
    while True:
        yield tuple(a)
        i = len(a) - 2
        while i >= 0 and a[i] >= a[i + 1]:
            i -= 1
        if i < 0:
            return
        j = len(a) - 1
        while a[j] <= a[i]:
            j -= 1
        a[i], a[j] = a[j], a[i]
        a[i + 1:] = reversed(a[i + 1:])


def piece_code(colour: int, size: int) -> int:
    """Board code of a pyramid: ``1 + 3 * colour + size`` (0 = empty square)."""
    return 1 + 3 * colour + size


def piece_colour(code: int) -> int:
    return (code - 1) // 3


def piece_size(code: int) -> int:
    return (code - 1) % 3


def piece_name(code: int) -> str:
    return COLOUR_LETTERS[piece_colour(code)] + SIZE_LETTERS[piece_size(code)]


@dataclass(frozen=True, slots=True)
class CarrotsState:
    """A position.

    ``board``: ``n*n`` codes row-major from a1 (0 empty, else :func:`piece_code`);
    ``to_move``: the player whose turn it is (0 Carrots, 1 Broccoli); ``last``: the square of the
    pyramid the previous player moved (-1 none); ``roll``: ``SETUP``, ``TO_ROLL`` or the effective
    roll ``cmask << 3 | smask`` of a decision node. Off-board pyramids are implied by the board.
    """

    board: tuple[int, ...]
    to_move: int
    last: int = -1
    roll: int = TO_ROLL


Action = tuple[int, int, int, int, int]


class Carrots(Game[CarrotsState]):
    """Carrots and Broccoli for two players (see the module docstring for rulings and keys)."""

    name: ClassVar[str] = "carrots"
    title: ClassVar[str] = "Carrots and Broccoli: dice tell you what to plant; grow a garden of ten"
    params: ClassVar[tuple[Param, ...]] = (
        Param("size", "int", 8, "board side n (wall on the anti-diagonal)", min=3, max=16,
              bounds="from 3x3, where a wall square stands between the corners, to twice the rules' 8x8"),
        Param("colours", "int", 2, "colours per player: 2 (rules) or 1 (red vs green)", min=1, max=2,
              bounds="the colour die has 2 colours a player"),
        Param("per_colour", "int", 2, "trios of each player colour", min=1, max=4,
              bounds="1 to twice the rules' 2 trios"),
        Param("group", "int", 10, "pyramids in the winning group", min=1, max=24,
              bounds="1 to 24: a player owns at most 2 colours x 3 sizes x 4 trios = 24 pyramids"),
        Param(
            "wall",
            "str",
            "random",
            "random (chance at the root) or the n-2 wall sizes from the square next to the "
            "top-left corner down the anti-diagonal, e.g. SML for n=5",
            choices=("random",),
            free=True,
        ),
        Param("atom_black", "bool", True, "the atom may be taken as black"),
        Param("pass", "bool", True, "a player may decline to act"),
    )
    presets: ClassVar[Mapping[str, Mapping[str, Any]]] = {
        "3x3": {"size": 3, "colours": 1, "per_colour": 1, "group": 2},
        "4x4": {"size": 4, "colours": 1, "per_colour": 1, "group": 3},
        # the rules' two colours per player on the 3x3 board (beyond this machine: measured.toml)
        "3x3-2c": {"size": 3, "colours": 2, "per_colour": 1, "group": 2},
    }
    largest_preset: ClassVar[str] = "3x3"
    seat_names: ClassVar[tuple[str, ...]] = ("Carrots", "Broccoli")
    #: the dice are rolled during play (and the wall is a random setup unless given)
    chance: ClassVar[Chance] = "in-play"
    secret_choices: ClassVar[bool] = False
    rules_version: ClassVar[str] = "1"
    scored: ClassVar[bool] = False
    num_players: int = 2

    def __init__(self, variant: Variant) -> None:
        super().__init__(variant)
        n = variant.size
        self.n = n
        self.cells = n * n
        self.atom_black: bool = bool(variant.atom_black)
        self.may_pass: bool = bool(variant["pass"])
        self.group: int = variant.group
        self.per_colour: int = variant.per_colour
        # colours in play and who owns them
        if variant.colours == 1:
            self.player_colours: tuple[tuple[int, ...], ...] = ((RED,), (GREEN,))
        else:
            self.player_colours = ((RED, YELLOW), (GREEN, BLUE))
        self.colours_in_play: tuple[int, ...] = tuple(sorted(c for pc in self.player_colours for c in pc))
        self.owner = {c: p for p, pc in enumerate(self.player_colours) for c in pc}
        # geometry
        self.neighbours: tuple[tuple[int, ...], ...] = tuple(
            tuple(
                (r + dr) * n + (c + dc)
                for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
                if 0 <= r + dr < n and 0 <= c + dc < n
            )
            for r in range(n)
            for c in range(n)
        )
        self.side: tuple[frozenset[int], frozenset[int]] = (
            frozenset(r * n + c for r in range(n) for c in range(n) if r + c < n - 1),
            frozenset(r * n + c for r in range(n) for c in range(n) if r + c > n - 1),
        )
        self.corner = (0, n * n - 1)
        #: wall squares from the one next to the top-left corner down to the bottom right
        self.wall_squares: tuple[int, ...] = tuple((n - 1 - c) * n + c for c in range(1, n - 1))
        self.wall_sizes: tuple[int, ...] = tuple(sorted(i % 3 for i in range(n - 2)))
        #: how many orders the wall pyramids can stand in (the multinomial of their sizes; 90 on 8x8)
        self.num_arrangements: int = multinomial([self.wall_sizes.count(s) for s in range(3)])
        self.fixed_wall: tuple[int, ...] | None = None
        if variant.wall != "random":
            self.fixed_wall = self._parse_wall(variant.wall)
        # key layout
        self.piece_types: tuple[int, ...] = tuple(
            piece_code(c, s) for c in self.colours_in_play for s in range(3)
        )
        self.black_types: tuple[tuple[int, int], ...] = tuple(
            (piece_code(BLACK, s), self.wall_sizes.count(s)) for s in range(3) if s in self.wall_sizes
        )
        bits = NODE_BASE * 2 * (self.cells + 1)
        bits *= self.cells ** len(self.wall_sizes)
        bits *= (self.cells + 1) ** (len(self.piece_types) * self.per_colour)
        self.key_space: int = bits
        self._rolls: list[tuple[dice.Roll, Fraction]] = dice.all_rolls()
        self._roll_masks: dict[dice.Roll, tuple[int, int]] = {
            roll: dice.roll_masks(roll, self.colours_in_play, atom_black=self.atom_black)
            for roll, _ in self._rolls
        }
        self._complete = lru_cache(maxsize=1 << 20)(self._complete_uncached)
        self._options = lru_cache(maxsize=1 << 18)(self._options_uncached)
        self._playout_tables: tuple | None = None

    def too_big(self) -> str | None:
        bits = (self.key_space - 1).bit_length()
        return f"its position keys need {bits} bits" if self.key_space > 2**64 else None

    @cached_property
    def arrangements(self) -> list[tuple[int, ...]]:
        """Every order of the wall pyramids' sizes, sorted (:attr:`num_arrangements` of them;
        listed when first asked: 252,252 on the largest board)."""
        return list(multiset_permutations(self.wall_sizes))

    def position_bound(self) -> int:
        """The root, plus every board times the player to move, the last-moved pyramid (none or
        one on the board) and the node (dice to roll, or an effective roll to act on).

        Boards: the wall pyramids on any squares, and per coloured type ``m <= per_colour``
        pyramids on others, at most one a square (an exponential generating function over the
        types). Effective rolls: every pair of a non-empty part of a roll's colours and of its
        sizes, plus ``roll none``. Measured: 3x3 3,894,185 positions up to symmetry (bound 5.0e8,
        2.5e8 up to symmetry)."""
        from math import factorial

        cells, walls = self.cells, len(self.wall_sizes)
        poly = [Fraction(1)]
        for _ in self.piece_types:
            out = [Fraction(0)] * min(len(poly) + self.per_colour, cells - walls + 1)
            for i, a in enumerate(poly):
                for m in range(min(self.per_colour, len(out) - 1 - i) + 1):
                    out[i + m] += a / factorial(m)
            poly = out
        wall_ways = factorial(cells) // multinomial_denominator([self.wall_sizes.count(s) for s in range(3)])
        boards = [poly[t] * wall_ways / factorial(cells - walls - t) for t in range(len(poly))]
        rolls = {(cm, sm) for cmask, smask in self._roll_masks.values()
                 for cm in range(1, cmask + 1) if cm & cmask == cm
                 for sm in range(1, smask + 1) if sm & smask == sm}
        nodes = 1 + len(rolls) + 1  # to roll (or over), the effective rolls, roll none
        total = sum(b * (1 + walls + t) for t, b in enumerate(boards)) * 2 * nodes
        return 1 + int(total)

    # --- variant checks -------------------------------------------------------------------
    def check_variant(self, variant: Variant) -> None:
        n = variant.size
        own = variant.colours * 3 * variant.per_colour
        if variant.group > own:
            raise VariantError(
                f"group={variant.group} can never be completed: a player has only {own} pyramids; "
                "lower group or raise per_colour/colours"
            )
        side = n * (n - 1) // 2
        if variant.group > side:
            raise VariantError(
                f"group={variant.group} does not fit on a side of {side} squares of a {n}x{n} "
                "board; lower group or raise size"
            )
        if variant.wall != "random":
            self._parse_wall_text(variant.wall, n)

    @staticmethod
    def _parse_wall_text(text: str, n: int) -> tuple[int, ...]:
        letters = text.strip().upper()
        want = sorted(i % 3 for i in range(n - 2))
        want_text = "".join(SIZE_LETTERS[s] for s in want)
        if len(letters) != n - 2 or any(ch not in SIZE_LETTERS for ch in letters):
            raise VariantError(
                f"wall={text!r}: give the {n - 2} wall sizes as letters S/M/L (an arrangement of "
                f"{want_text}), or wall=random"
            )
        sizes = tuple(SIZE_LETTERS.index(ch) for ch in letters)
        if sorted(sizes) != want:
            raise VariantError(
                f"wall={text!r} is not an arrangement of the wall pyramids {want_text}; "
                "reorder those letters or use wall=random"
            )
        return sizes

    def _parse_wall(self, text: str) -> tuple[int, ...]:
        return self._parse_wall_text(text, self.n)

    # --- geometry helpers -----------------------------------------------------------------
    def wall_board(self, arrangement: tuple[int, ...]) -> tuple[int, ...]:
        """The starting board with the wall pyramids in the given order of sizes."""
        board = [0] * self.cells
        for sq, s in zip(self.wall_squares, arrangement):
            board[sq] = piece_code(BLACK, s)
        return tuple(board)

    def _complete_uncached(self, board: tuple[int, ...], player: int) -> bool:
        """Whether ``player``'s group is complete on ``board``."""
        corner = self.corner[player]
        code = board[corner]
        if code == 0 or self.owner.get(piece_colour(code)) != player:
            return False
        side = self.side[player]
        seen = {corner}
        todo = [corner]
        while todo:
            sq = todo.pop()
            for nb in self.neighbours[sq]:
                if nb in seen or nb not in side:
                    continue
                code = board[nb]
                if code and self.owner.get(piece_colour(code)) == player:
                    seen.add(nb)
                    todo.append(nb)
        return len(seen) >= self.group

    def winner(self, state: CarrotsState) -> int:
        """The winner of a finished game, or -1 (only meaningful after a turn)."""
        if state.roll != TO_ROLL:
            return -1
        c0 = self._complete(state.board, 0)
        c1 = self._complete(state.board, 1)
        if c0 and c1:  # cannot happen (see module docstring): the player who just moved wins
            return 1 - state.to_move
        if c0:
            return 0
        if c1:
            return 1
        return -1

    def off_board(self, board: tuple[int, ...], code: int) -> int:
        """How many pyramids of the type ``code`` are off the board."""
        return self.per_colour - board.count(code)

    def _black_ok(self, board: tuple[int, ...], frm: int, to: int) -> bool:
        """After moving the black pyramid ``frm -> to``: another black within king distance 2."""
        n = self.n
        r, c = divmod(to, n)
        for sq, code in enumerate(board):
            if sq == frm or code == 0 or piece_colour(code) != BLACK:
                continue
            r2, c2 = divmod(sq, n)
            if max(abs(r - r2), abs(c - c2)) <= 2:
                return True
        return False

    def _actions_for(self, board: tuple[int, ...], last: int, colour: int, size: int) -> list[Action]:
        """Every plant/move/black action with the chosen ``(colour, size)``."""
        code = piece_code(colour, size)
        out: list[Action] = []
        if colour == BLACK:
            for sq, v in enumerate(board):
                if v != code or sq == last:
                    continue
                for nb in self.neighbours[sq]:
                    if board[nb] == 0 and self._black_ok(board, sq, nb):
                        out.append((BLACK_MOVE, colour, size, sq, nb))
            return out
        if self.off_board(board, code) > 0:
            out.extend((PLANT, colour, size, -1, sq) for sq, v in enumerate(board) if v == 0)
        for sq, v in enumerate(board):
            if v != code or sq == last:
                continue
            for nb in self.neighbours[sq]:
                if board[nb] == 0:
                    out.append((MOVE, colour, size, sq, nb))
        return out

    def _options_uncached(self, board: tuple[int, ...], last: int) -> tuple[tuple[bool, bool, bool], ...]:
        """``options[colour][size]``: whether that choice allows any action (colour 0..4)."""
        return tuple(
            tuple(
                (c == BLACK or c in self.colours_in_play) and bool(self._actions_for(board, last, c, s))
                for s in range(3)
            )
            for c in range(5)
        )

    def effective_roll(self, state: CarrotsState, roll: dice.Roll) -> int:
        """The effective roll code ``cmask << 3 | smask`` of a raw roll in a position.

        Drops colours and sizes with which nothing can be done; 0 when nothing can be done.
        """
        cmask, smask = dice.roll_masks(roll, self.colours_in_play, atom_black=self.atom_black)
        return self._effective(self._options(state.board, state.last), cmask, smask)

    @staticmethod
    def _effective(options: tuple[tuple[bool, bool, bool], ...], cmask: int, smask: int) -> int:
        sizes = dice.mask_bits(smask)
        colours = [c for c in dice.mask_bits(cmask) if any(options[c][s] for s in sizes)]
        sizes = [s for s in sizes if any(options[c][s] for c in colours)]
        if not colours:
            return 0
        cm = sum(1 << c for c in colours)
        sm = sum(1 << s for s in sizes)
        return cm << 3 | sm

    # --- the protocol ---------------------------------------------------------------------
    def initial_state(self) -> CarrotsState:
        if self.fixed_wall is not None:
            return CarrotsState(self.wall_board(self.fixed_wall), 0, -1, TO_ROLL)
        return CarrotsState(tuple([0] * self.cells), 0, -1, SETUP)

    def node_kind(self, state: CarrotsState) -> NodeKind:
        if state.roll == SETUP:
            return NodeKind.CHANCE
        if state.roll == TO_ROLL:
            return NodeKind.TERMINAL if self.winner(state) >= 0 else NodeKind.CHANCE
        return NodeKind.DECISION

    def to_move(self, state: CarrotsState) -> int:
        return state.to_move

    def chance_outcomes(self, state: CarrotsState) -> list[tuple[Any, Fraction]]:
        """Root: the wall arrangements (equally likely); else the effective rolls (grouped)."""
        if state.roll == SETUP:
            p = Fraction(1, self.num_arrangements)
            return [(arr, p) for arr in self.arrangements]
        if state.roll != TO_ROLL or self.winner(state) >= 0:
            raise IllegalMoveError("the dice are rolled only at the start of a turn")
        options = self._options(state.board, state.last)
        return dice.group_outcomes(
            self._rolls, lambda roll: self._effective(options, *self._roll_masks[roll])
        )

    def legal_actions(self, state: CarrotsState) -> list[Action]:
        if state.roll < 0:
            return []
        cmask, smask = state.roll >> 3, state.roll & 7
        out: list[Action] = []
        for c in dice.mask_bits(cmask):
            for s in dice.mask_bits(smask):
                out.extend(self._actions_for(state.board, state.last, c, s))
        if self.may_pass or not out:
            out.append(PASS_ACTION)
        return out

    def apply(self, state: CarrotsState, action: Any) -> CarrotsState:
        if state.roll == SETUP:
            return CarrotsState(self.wall_board(tuple(action)), 0, -1, TO_ROLL)
        if state.roll == TO_ROLL:
            if self.winner(state) >= 0:
                raise IllegalMoveError("the game is over")
            return CarrotsState(state.board, state.to_move, state.last, int(action))
        kind, colour, size, frm, to = action
        nxt = 1 - state.to_move
        if kind == PASS:
            return CarrotsState(state.board, nxt, -1, TO_ROLL)
        board = list(state.board)
        if kind == PLANT:
            board[to] = piece_code(colour, size)
            return CarrotsState(tuple(board), nxt, -1, TO_ROLL)
        board[to] = board[frm]
        board[frm] = 0
        return CarrotsState(tuple(board), nxt, to, TO_ROLL)

    def outcome(self, state: CarrotsState) -> Outcome:
        w = self.winner(state)
        if w < 0:
            raise ValueError("outcome() of a game that is not over")
        return Outcome.win_for(w)

    # --- compiled random play ----------------------------------------------------------------
    def random_playout(self, state: CarrotsState, max_choices: int, seed: int) -> Playout | None:
        """Random play from ``state`` in the compiled kernel
        (:func:`solver.games._carrots_jit.playout_kernel`): the dice rolled (raw rolls, reduced to
        their effective roll as :meth:`chance_outcomes` groups them), actions drawn uniformly;
        any board size. ``None`` at the root before the wall is set up."""
        if state.roll == SETUP:
            return None
        if self._playout_tables is None:
            cells = self.cells
            lay = self._layout()
            side = np.zeros((2, cells), dtype=np.bool_)
            for p in range(2):
                side[p, sorted(self.side[p])] = True
            owner = np.array([self.owner.get(c, -1) for c in range(5)], dtype=np.int64)
            masks = [self._roll_masks[roll] for roll, _ in self._rolls]
            self._playout_tables = (
                np.array([m[0] for m in masks], dtype=np.int64), np.array([m[1] for m in masks], dtype=np.int64),
                np.array([c in self.colours_in_play for c in range(5)], dtype=np.bool_), self.per_colour,
                self.may_pass, self.group, np.array(self.corner, dtype=np.int64), side, owner, lay["nbr"],
                np.ascontiguousarray(lay["cheb"], dtype=np.int64),
            )
        cap, seed, taken, counts = Playout.buffers(max_choices, seed)
        rolls = np.zeros(cap + 1, dtype=np.int64)
        board = np.array(state.board, dtype=np.int64)
        to_move, last, roll, moves, nrolls = playout_kernel(board, state.to_move, state.last, state.roll, cap,
                                                            seed, *self._playout_tables,
                                                            taken, counts, rolls)
        end = CarrotsState(tuple(board.tolist()), int(to_move), int(last), int(roll))
        return Playout.of(end, moves, taken, counts, tuple(rolls[:nrolls].tolist()))

    # --- keys -----------------------------------------------------------------------------
    def encode(self, state: CarrotsState) -> int:
        if state.roll == SETUP:
            return 0
        cells = self.cells
        where: dict[int, list[int]] = {}
        for sq, code in enumerate(state.board):
            if code:
                where.setdefault(code, []).append(sq)  # squares ascending
        # Horner's rule from the most significant digit down (see the key layout above)
        key = 0
        for code in reversed(self.piece_types):
            squares = where.get(code, [])
            if len(squares) > self.per_colour:
                raise ValueError(f"more than {self.per_colour} pyramids {piece_name(code)} on the board")
            for sq in reversed(squares):
                key = key * (cells + 1) + sq + 1
            for _ in range(self.per_colour - len(squares)):
                key *= cells + 1
        for code, count in reversed(self.black_types):
            squares = where.get(code, [])
            if len(squares) != count:
                raise ValueError("a wall pyramid is missing from the board")
            for sq in reversed(squares):
                key = key * cells + sq
        key = key * (cells + 1) + state.last + 1
        key = key * 2 + state.to_move
        return key * NODE_BASE + (2 + state.roll if state.roll >= 0 else 1)

    def decode(self, key: int) -> CarrotsState:
        key = int(key)
        cells = self.cells
        node, key = key % NODE_BASE, key // NODE_BASE
        if node == 0:
            return CarrotsState(tuple([0] * cells), 0, -1, SETUP)
        to_move, key = key % 2, key // 2
        last, key = key % (cells + 1) - 1, key // (cells + 1)
        board = [0] * cells
        for code, count in self.black_types:
            for _ in range(count):
                sq, key = key % cells, key // cells
                board[sq] = code
        for code in self.piece_types:
            for _ in range(self.per_colour):
                d, key = key % (cells + 1), key // (cells + 1)
                if d:
                    board[d - 1] = code
        roll = TO_ROLL if node == 1 else node - 2
        return CarrotsState(tuple(board), to_move, last, roll)

    def tier_of(self, keys: np.ndarray) -> np.ndarray:
        """``int64[len(keys)]``: coloured pyramids on the board (never falls along a move)."""
        keys = np.asarray(keys, dtype=np.uint64)
        place = NODE_BASE * 2 * (self.cells + 1) * self.cells ** len(self.wall_sizes)
        out = np.zeros(len(keys), dtype=np.int64)
        base = self.cells + 1
        for _ in range(len(self.piece_types) * self.per_colour):
            if place >= 2**64:
                break
            digit = (keys // np.uint64(place)) % np.uint64(base)
            out += digit != 0
            place *= base
        return out

    def tier_name(self, tier: int) -> str:
        """``5 planted``: the coloured pyramids on the board."""
        return f"{int(tier)} planted"

    # --- the batch path (numpy; decision nodes by the numba kernel in _carrots_jit.py) ----------
    # Same arrays as the per-state rules (Game.expand); tests/test_carrots.py proves it on many
    # keys. Positions are handled as digit matrices of the key (see the key layout above).

    def _layout(self) -> dict[str, Any]:
        """Digit bases, place values, column groups and lookup tables of the batch path."""
        cached = getattr(self, "_layout_cache", None)
        if cached is not None:
            return cached
        n, cells = self.n, self.cells
        bases = [NODE_BASE, 2, cells + 1]
        black_cols: list[tuple[int, int, list[int]]] = []  # (code, size, columns)
        for code, count in self.black_types:
            cols = list(range(len(bases), len(bases) + count))
            bases.extend([cells] * count)
            black_cols.append((code, piece_size(code), cols))
        piece_cols: list[tuple[int, list[int]]] = []  # (code, columns)
        for code in self.piece_types:
            cols = list(range(len(bases), len(bases) + self.per_colour))
            bases.extend([cells + 1] * self.per_colour)
            piece_cols.append((code, cols))
        places, p = [], 1
        for b in bases:
            places.append(p)
            p *= b
        nbr = np.full((cells + 1, 4), cells, dtype=np.int64)  # padded: cells = no square
        for sq in range(cells):
            r, c = divmod(sq, n)
            for k, (dr, dc) in enumerate(((-1, 0), (1, 0), (0, -1), (0, 1))):
                if 0 <= r + dr < n and 0 <= c + dc < n:
                    nbr[sq, k] = (r + dr) * n + c + dc
        rr, cc = np.divmod(np.arange(cells + 1), n)
        cheb = np.maximum(np.abs(rr[:, None] - rr[None, :]), np.abs(cc[:, None] - cc[None, :]))
        cheb[cells, :] = 99
        cheb[:, cells] = 99
        mirror = np.array([(sq % n) * n + sq // n for sq in range(cells)] + [cells], dtype=np.int64)
        mirror1 = np.concatenate([[0], mirror[:cells] + 1])  # on "0 = none, 1 + square" digits
        roll_c = np.zeros((36, 5), dtype=bool)
        roll_s = np.zeros((36, 3), dtype=bool)
        for i, (roll, _) in enumerate(self._rolls):
            cm, sm = self._roll_masks[roll]
            roll_c[i] = [cm >> c & 1 for c in range(5)]
            roll_s[i] = [sm >> s & 1 for s in range(3)]
        # decision slots in the order of legal_actions: per (colour, size) ascending, plants on
        # every square, then moves per copy (squares ascending) and direction; pass last
        slots: list[tuple[int, int, int, int, int]] = []  # (kind, colour, size, cell/col, dir)
        for c in list(self.colours_in_play) + [BLACK]:
            for s in range(3):
                if c == BLACK:
                    for code, size, cols in black_cols:
                        if size == s:
                            slots.extend((BLACK_MOVE, c, s, col, k) for col in cols for k in range(4))
                else:
                    code = piece_code(c, s)
                    cols = dict(piece_cols)[code]
                    slots.extend((PLANT, c, s, sq, -1) for sq in range(cells))
                    slots.extend((MOVE, c, s, col, k) for col in cols for k in range(4))
        slots.append(PASS_ACTION)
        own = np.zeros((2, 16), dtype=bool)  # own[player, code]
        for code in range(1, 16):
            colour = piece_colour(code)
            if colour in self.owner:
                own[self.owner[colour], code] = True
        side = np.zeros((2, cells), dtype=bool)
        for pl in range(2):
            side[pl, list(self.side[pl])] = True
        layout = {
            "bases": bases, "places": places, "black_cols": black_cols, "piece_cols": piece_cols,
            "nbr": nbr, "cheb": cheb, "mirror": mirror, "mirror1": mirror1,
            "roll_c": roll_c, "roll_s": roll_s, "slots": np.array(slots, dtype=np.int64),
            "own": own, "side": side,
        }
        self._layout_cache = layout
        return layout

    def _vdecode(self, keys: np.ndarray) -> np.ndarray:
        """``int64[N, digits]``: the key digits, least significant first."""
        lay = self._layout()
        rest = np.asarray(keys, dtype=np.uint64).copy()
        out = np.empty((len(rest), len(lay["bases"])), dtype=np.int64)
        for j, b in enumerate(lay["bases"]):
            out[:, j] = (rest % np.uint64(b)).astype(np.int64)
            rest //= np.uint64(b)
        return out

    def _vencode(self, digits: np.ndarray) -> np.ndarray:
        lay = self._layout()
        key = np.zeros(len(digits), dtype=np.uint64)
        for j, p in enumerate(lay["places"]):
            key += digits[:, j].astype(np.uint64) * np.uint64(p)
        return key

    def _vsort(self, digits: np.ndarray) -> None:
        """Sort the copies of every piece type in place (keys list copies ascending)."""
        lay = self._layout()
        groups = [cols for _, _, cols in lay["black_cols"]] + [cols for _, cols in lay["piece_cols"]]
        for cols in groups:
            if len(cols) > 1:
                digits[:, cols[0] : cols[-1] + 1] = np.sort(digits[:, cols[0] : cols[-1] + 1], axis=1)

    def _vmirror_keys(self, digits: np.ndarray) -> np.ndarray:
        """Keys of the images of the positions under the a1-h8 reflection."""
        lay = self._layout()
        m = digits.copy()
        m[:, 2] = lay["mirror1"][digits[:, 2]]
        for _, _, cols in lay["black_cols"]:
            m[:, cols] = lay["mirror"][digits[:, cols]]
        for _, cols in lay["piece_cols"]:
            m[:, cols] = lay["mirror1"][digits[:, cols]]
        self._vsort(m)
        return self._vencode(m)

    def _vboard(self, digits: np.ndarray) -> np.ndarray:
        """``int8[N, cells + 1]`` board codes; the extra last column (-1) stands for "no square"."""
        lay = self._layout()
        n_rows = len(digits)
        board = np.zeros((n_rows, self.cells + 1), dtype=np.int8)
        rows = np.arange(n_rows)
        for code, _, cols in lay["black_cols"]:
            for col in cols:
                board[rows, digits[:, col]] = code
        for code, cols in lay["piece_cols"]:
            for col in cols:
                d = digits[:, col]
                on = d > 0
                board[rows[on], d[on] - 1] = code
        board[:, self.cells] = -1
        return board

    def _vcomplete(self, board: np.ndarray, player: int) -> np.ndarray:
        """``bool[N]``: whether ``player``'s group is complete (flood fill from the corner)."""
        lay = self._layout()
        cells = self.cells
        own = lay["own"][player][board[:, :cells]] & lay["side"][player][None, :]
        own = np.concatenate([own, np.zeros((len(board), 1), dtype=bool)], axis=1)
        reach = np.zeros_like(own)
        corner = self.corner[player]
        reach[:, corner] = own[:, corner]
        while True:
            grown = own & reach[:, lay["nbr"]].any(axis=2)
            grown |= reach
            if np.array_equal(grown, reach):
                break
            reach = grown
        return reach.sum(axis=1) >= self.group

    def _vblack_ok(self, digits: np.ndarray, col: int, target: np.ndarray) -> np.ndarray:
        """Distance rule: another black pyramid within king distance 2 of ``target``."""
        lay = self._layout()
        ok = np.zeros(len(digits), dtype=bool)
        for _, _, cols in lay["black_cols"]:
            for other in cols:
                if other != col:
                    ok |= lay["cheb"][target, digits[:, other]] <= 2
        return ok

    def _voptions(self, digits: np.ndarray, board: np.ndarray) -> np.ndarray:
        """``bool[N, 5, 3]``: whether a (colour, size) choice allows any action."""
        lay = self._layout()
        nbr = lay["nbr"]
        n_rows = len(digits)
        empty = board == 0
        any_empty = empty[:, : self.cells].any(axis=1)
        last = digits[:, 2]
        opt = np.zeros((n_rows, 5, 3), dtype=bool)
        rows = np.arange(n_rows)
        for code, cols in lay["piece_cols"]:
            c, s = piece_colour(code), piece_size(code)
            off = (digits[:, cols] == 0).sum(axis=1)
            ok = (off > 0) & any_empty
            for col in cols:
                d = digits[:, col]
                sq = np.where(d > 0, d - 1, self.cells)
                movable = (d > 0) & (d != last)
                ok |= movable & empty[rows[:, None], nbr[sq]].any(axis=1)
            opt[:, c, s] = ok
        for code, s, cols in lay["black_cols"]:
            ok = np.zeros(n_rows, dtype=bool)
            for col in cols:
                sq = digits[:, col]
                movable = sq + 1 != last
                for k in range(4):
                    nb = nbr[sq, k]
                    ok |= movable & empty[rows, nb] & (nb < self.cells) & self._vblack_ok(digits, col, nb)
            opt[:, BLACK, s] = ok
        return opt

    def expand(self, keys: np.ndarray, *, canonical: bool = False) -> Expansion:
        """Vectorised batch path: exactly the arrays of :meth:`Game.expand` (tested)."""
        keys = np.asarray(keys, dtype=np.uint64)
        n_rows = len(keys)
        if self.key_space > 2**64:
            return Game.expand(self, keys, canonical=canonical)
        digits = self._vdecode(keys)
        node = digits[:, 0]
        kind = np.full(n_rows, NodeKind.DECISION, dtype=np.int8)
        kind[node <= 1] = NodeKind.CHANCE
        to_move = digits[:, 1].astype(np.int8)
        result = np.zeros(n_rows, dtype=np.int8)
        margin = np.zeros(n_rows, dtype=np.int32)
        counts = np.zeros(n_rows, dtype=np.int64)
        parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []  # rows, counts, kids, probs

        setup = np.flatnonzero(node == 0)
        if len(setup):
            sub = Game.expand(self, keys[setup], canonical=canonical)
            to_move[setup] = sub.to_move
            parts.append((setup, np.diff(sub.offsets), sub.children, sub.probs))

        turn = np.flatnonzero(node == 1)
        if len(turn):
            d = digits[turn]
            board = self._vboard(d)
            c0 = self._vcomplete(board, 0)
            c1 = self._vcomplete(board, 1)
            tm = d[:, 1]
            winner = np.where(c0 & c1, 1 - tm, np.where(c0, 0, 1))
            over = c0 | c1
            kind[turn[over]] = NodeKind.TERMINAL
            result[turn[over]] = np.where(winner[over] == tm[over], 1, -1)
            live = ~over
            if live.any():
                parts.append(self._vexpand_roll(turn[live], d[live], board[live], keys[turn[live]], canonical))

        dec = np.flatnonzero(node >= 2)
        if len(dec):
            parts.append(self._vexpand_decision(dec, digits[dec], canonical))

        for rows, cnt, _, _ in parts:
            counts[rows] = cnt
        offsets = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        children = np.zeros(int(offsets[-1]), dtype=np.uint64)
        any_chance = bool((kind == NodeKind.CHANCE).any())
        probs = np.ones(len(children), dtype=np.float64) if any_chance else None
        for rows, cnt, kids, pr in parts:
            dest = _ranges(offsets[rows], cnt)
            children[dest] = kids
            if probs is not None and pr is not None:
                probs[dest] = pr
        return Expansion(kind=kind, to_move=to_move, offsets=offsets, children=children,
                         probs=probs, result=result, margin=margin)

    def _vexpand_roll(
        self, rows: np.ndarray, digits: np.ndarray, board: np.ndarray, keys: np.ndarray, canonical: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Children of live chance nodes: the distinct effective rolls, in order of first roll."""
        lay = self._layout()
        opt = self._voptions(digits, board)
        n_rows = len(rows)
        codes = np.empty((n_rows, 36), dtype=np.int64)
        cweights = 1 << np.arange(5)
        sweights = 1 << np.arange(3)
        for r in range(36):
            sel = opt & lay["roll_c"][r][None, :, None] & lay["roll_s"][r][None, None, :]
            cm = sel.any(axis=2) @ cweights
            sm = sel.any(axis=1) @ sweights
            codes[:, r] = np.where(cm > 0, cm << 3 | sm, 0)
        flat = (np.arange(n_rows)[:, None] * 256 + codes).ravel()
        # distinct (row, code) pairs with counts, in order of their first roll (np.unique is slow)
        by_value = np.argsort(flat, kind="stable")
        ordered = flat[by_value]
        start = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        cnt = np.diff(np.r_[start, len(ordered)])
        first = by_value[start]  # stable sort: the first occurrence of each pair
        order = np.argsort(first)
        uniq, cnt = ordered[start][order], cnt[order]
        parent = uniq // 256
        code = uniq % 256
        per_row = np.bincount(parent, minlength=n_rows)
        kids = keys[parent] + (code + 1).astype(np.uint64)  # node digit 1 -> 2 + code
        if canonical:
            mk = self._vmirror_keys(digits)[parent] + (code + 1).astype(np.uint64)
            kids = np.minimum(kids, mk)
        return rows, per_row, kids, cnt / 36.0

    def _vexpand_decision(
        self, rows: np.ndarray, digits: np.ndarray, canonical: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """Children of decision nodes, in the order of :meth:`legal_actions` (compiled kernel)."""
        t = self._kernel_tables()
        per_row, keys = decision_kernel(
            np.ascontiguousarray(digits, dtype=np.int64), t["slots"], t["plant_col"], t["nbr"],
            t["cheb"], t["black_cols"], t["col_is_black"], t["mirror"], t["mirror1"],
            t["group_start"], t["group_len"], t["places"], self.cells, self.may_pass, canonical,
        )
        return rows, per_row, keys, None

    def _kernel_tables(self) -> dict[str, Any]:
        """Arrays of :func:`decision_kernel`, from the batch layout."""
        cached = getattr(self, "_kernel_cache", None)
        if cached is not None:
            return cached
        lay = self._layout()
        slots = lay["slots"]
        col_of_type = {code: cols for code, cols in lay["piece_cols"]}
        plant_col = np.array([col_of_type[piece_code(c, s)][0] if kd == PLANT else 0
                              for kd, c, s, _, _ in slots.tolist()], dtype=np.int64)
        groups = [cols for _, _, cols in lay["black_cols"]] + [cols for _, cols in lay["piece_cols"]]
        col_is_black = np.zeros(len(lay["bases"]), dtype=np.bool_)
        for _, _, cols in lay["black_cols"]:
            col_is_black[cols] = True
        tables = {
            "slots": np.ascontiguousarray(slots, dtype=np.int64),
            "plant_col": plant_col,
            "nbr": np.ascontiguousarray(lay["nbr"], dtype=np.int64),
            "cheb": np.ascontiguousarray(lay["cheb"], dtype=np.int64),
            "black_cols": np.array([c for _, _, cols in lay["black_cols"] for c in cols], dtype=np.int64),
            "col_is_black": col_is_black,
            "mirror": lay["mirror"].astype(np.int64),
            "mirror1": lay["mirror1"].astype(np.int64),
            "group_start": np.array([cols[0] for cols in groups], dtype=np.int64),
            "group_len": np.array([len(cols) for cols in groups], dtype=np.int64),
            "places": np.array(lay["places"], dtype=np.uint64),
        }
        self._kernel_cache = tables
        return tables

    # --- symmetry -------------------------------------------------------------------------
    def symmetries(self, state: CarrotsState) -> list[CarrotsState]:
        """The state and its reflection along the main diagonal a1-h8 (both sides kept)."""
        n = self.n
        board = state.board
        mirrored = tuple(board[(sq % n) * n + sq // n] for sq in range(self.cells))
        last = -1 if state.last < 0 else (state.last % n) * n + state.last // n
        return [state, CarrotsState(mirrored, state.to_move, last, state.roll)]

    # --- people ---------------------------------------------------------------------------
    def roll_label(self, roll: int) -> str:
        """``r+g S/M`` for an effective roll code, ``none`` for 0."""
        if roll == 0:
            return "none"
        colours = "+".join(COLOUR_LETTERS[c] for c in dice.mask_bits(roll >> 3))
        sizes = "/".join(SIZE_LETTERS[s] for s in dice.mask_bits(roll & 7))
        return f"{colours} {sizes}"

    def action_name(self, state: CarrotsState, action: Any) -> str:
        if state.roll == SETUP:
            return "wall " + "".join(SIZE_LETTERS[s] for s in action)
        if state.roll == TO_ROLL:
            return "roll " + self.roll_label(int(action))
        kind, colour, size, frm, to = action
        n = self.n
        if kind == PASS:
            return "pass"
        piece = COLOUR_LETTERS[colour] + SIZE_LETTERS[size]
        if kind == PLANT:
            return f"plant {piece}@{cell_name(to, n)}"
        if kind == MOVE:
            return f"move {piece} {cell_name(frm, n)}-{cell_name(to, n)}"
        return f"black {SIZE_LETTERS[size]} {cell_name(frm, n)}-{cell_name(to, n)}"

    def parse_action(self, state: CarrotsState, text: str) -> Any:
        """As the default, plus: raw dice at a roll (``atom S/M``, ``red L``), ``SML`` for a wall
        arrangement, and one-word forms for command lines that split moves on spaces:
        ``:`` or ``_`` for a space (``roll:r+g:S/M``, ``atom:S/M``, ``wall:SM``), ``rS@b2`` for
        ``plant rS@b2``, ``gM:b2-b3`` for ``move gM b2-b3`` and ``kM:c1-c2`` for
        ``black M c1-c2``."""
        try:
            return super().parse_action(state, text)
        except IllegalMoveError as err:
            first_error = err
        body = re.sub(r"[:_]", " ", text).strip()
        if re.fullmatch(r"[rygb][SMLsml]@[a-zA-Z]\d+", body):
            body = "plant " + body
        elif m := re.fullmatch(r"([rygbkRYGBK])([SMLsml]) +([a-zA-Z]\d+-[a-zA-Z]\d+)", body):
            colour, size, squares = m.groups()
            body = f"black {size} {squares}" if colour.lower() == "k" else f"move {colour}{size} {squares}"
        if body != text.strip():
            try:
                return super().parse_action(state, body)
            except IllegalMoveError:
                pass
        if state.roll == SETUP:
            wall = body[5:] if body.lower().startswith("wall ") else body
            try:
                return super().parse_action(state, "wall " + wall.strip())
            except IllegalMoveError:
                raise first_error from None
        if state.roll != TO_ROLL:
            raise first_error
        if body.lower().startswith("roll "):
            body = body[5:].strip()
        if body.lower() == "none":
            return 0
        try:
            roll = dice.parse_roll(body)
        except IllegalMoveError:
            raise first_error from None
        return self.effective_roll(state, roll)

    def _status_lines(self, state: CarrotsState) -> list[str]:
        """Whose turn it is and the roll (or the winner, or the wall still to set up), then the
        square of the pyramid last moved."""
        if state.roll == SETUP:
            return ["wall not set up yet (chance: the wall arrangement)"]
        lines: list[str] = []
        who = PLAYER_NAMES[state.to_move]
        if self.node_kind(state) == NodeKind.TERMINAL:
            lines.append(f"game over: {PLAYER_NAMES[self.winner(state)]} win")
        elif state.roll == TO_ROLL:
            lines.append(f"{who} to roll")
        else:
            lines.append(f"{who} to move, roll {self.roll_label(state.roll)}")
        if state.last >= 0:
            lines.append(f"last moved: {cell_name(state.last, self.n)}")
        return lines

    def _off_board_line(self, state: CarrotsState) -> str:
        """The pyramids of the players' colours that are not on the board."""
        off = [
            f"{piece_name(code)}x{k}"
            for code in self.piece_types
            if (k := self.off_board(state.board, code)) > 0
        ]
        return "off board: " + (" ".join(off) if off else "none")

    def picture(self, state: CarrotsState) -> Picture:
        """The board for drawing: pyramids in their dice colours (``red``, ``yellow``, ``green``,
        ``blue``; the wall pyramids ``black``), labelled with the colour letter; ``\\`` on the
        empty squares of the anti-diagonal (the wall line); the square of the pyramid last
        moved highlighted. The caption says whose turn it is and the roll, the pyramids off the
        board, and which colours each player grows."""
        n = self.n
        cells: list[tuple[Piece, ...]] = []
        labels: list[str] = []
        for sq, code in enumerate(state.board):
            if code:
                colour = piece_colour(code)
                cells.append((Piece(COLOUR_NAMES[colour], piece_size(code), COLOUR_LETTERS[colour]),))
                labels.append("")
            else:
                cells.append(())
                r, c = divmod(sq, n)
                labels.append("\\" if r + c == n - 1 else "")
        caption = self._status_lines(state)
        if state.roll != SETUP:
            caption.append(self._off_board_line(state))
        caption.append("; ".join(
            f"{PLAYER_NAMES[p]} ({cell_name(self.corner[p], n)}): "
            + "+".join(COLOUR_NAMES[c] for c in self.player_colours[p])
            for p in range(2)
        ))
        key = (("letter on a pyramid", "its colour; the sizes are drawn small, medium, large"),
               ("\\", "an empty square of the wall line (the anti-diagonal)"))
        return Picture("grid", n, n, tuple(cells), tuple(labels),
                       highlight=(state.last,) if state.last >= 0 else (), caption=tuple(caption),
                       key=key)

    def render(self, state: CarrotsState) -> str:
        n = self.n
        lines = self._status_lines(state)
        for r in range(n - 1, -1, -1):
            row = []
            for c in range(n):
                code = state.board[r * n + c]
                if code:
                    row.append(piece_name(code))
                else:
                    row.append(" \\" if r + c == n - 1 else " .")
            lines.append(f"{r + 1:>2} " + " ".join(row))
        lines.append("   " + " ".join(f" {chr(ord('a') + c)}" for c in range(n)))
        if state.roll != SETUP:
            lines.append(self._off_board_line(state))
        return "\n".join(lines)

    def describe_state(self, state: CarrotsState) -> str:
        return self.render(state).replace("\n", " / ")

    def parse_square(self, text: str) -> int:
        """A square name such as ``b2`` (for tools that build positions by hand)."""
        sq = parse_cell(text, self.n, self.n)
        if sq is None:
            raise IllegalMoveError(f"{text!r} is not a square of the {self.n}x{self.n} board")
        return sq

    def state_from(
        self,
        pieces: Mapping[str, str],
        *,
        to_move: int = 0,
        last: str | None = None,
        roll: int = TO_ROLL,
        wall: str | None = None,
    ) -> CarrotsState:
        """Build a position by hand: ``pieces`` maps squares to pieces (``{"a1": "rS"}``).

        Wall pyramids (``kS`` ...) are given like any piece, or with ``wall="SML"`` to put them
        on their starting squares. For tests and tools; not validated beyond the piece names.
        """
        board = [0] * self.cells
        if wall is not None:
            board = list(self.wall_board(self._parse_wall(wall)))
        for sq_text, piece in pieces.items():
            sq = self.parse_square(sq_text)
            colour = COLOUR_LETTERS.index(piece[0].lower())
            size = SIZE_LETTERS.index(piece[1].upper())
            board[sq] = piece_code(colour, size)
        last_sq = -1 if last is None else self.parse_square(last)
        return CarrotsState(tuple(board), to_move, last_sq, roll)

    def roll_code(self, colours: str, sizes: str) -> int:
        """Roll code from letters, e.g. ``roll_code("rg", "SM")`` (for tests and tools)."""
        cm = sum(1 << COLOUR_LETTERS.index(ch) for ch in colours)
        sm = sum(1 << SIZE_LETTERS.index(ch) for ch in sizes.upper())
        return cm << 3 | sm

