"""Petal Battle (Andrew Looney, 2016): two insect swarms fight over a ring of petals.

Rules: ``../shared/rules/petal-battle.md`` (beside the repository), implemented exactly; every ruling is a parameter.

The board is a ring of ``petals`` petals numbered ``0..petals-1``: petal ``i`` is adjacent to
``i-1`` and ``i+1`` (mod ``petals``), its opposite is ``i + petals/2``. Each player owns
``per_size`` pyramids of each size (S, M, L) for the board; the pieces not on the board are the
owner's supply (derived from the board, never stored). Play goes in rounds: at a round start both
players order their sequencing trio S/M/L (6 orders); the player with the smaller top pyramid takes
the first turn, then turns alternate, each turn spending the player's next sequencing pyramid for
S=1, M=2, L=3 actions; after 6 turns a new round starts. Players are 0 (Player 1) and 1 (Player 2)
in the API, written 1/2 on the board picture.

Actions and their names (what ``action_name`` prints and ``parse_action`` reads):

* ``spawn@3``: a Small from the supply onto empty petal 3, next to one of your Larges.
* ``grow@2``: swap your S (or M) on petal 2 for an M (or L) from the supply.
* ``2-3``: slide (to a neighbour) or flip (to the opposite petal) your pyramid from 2 to empty 3.
* ``2-3>4``: a bump from 2 onto occupied 3 that sends the bumped pyramid to empty petal 4 (one
  empty neighbour: the only choice; two: both are listed).
* ``2-3x``: a bump onto 3 whose pyramid has no empty neighbour: it is squished or reduced (the
  rules decide which; the bumper stays on 2 when it is reduced). ``2-3`` is also accepted for a
  bump when only one move goes from 2 to 3.
* ``enter@3`` (``opening=enter-large`` only): a Large from the supply onto empty petal 3 when you
  have no Large on the board.
* ``end``: end the turn early (``actions=up-to``); ``pass``: the forced end of a turn with no
  legal action (``actions=exactly``).
* ``SML``: a sequencing order, top first (the first letter is the pyramid used on the player's
  first turn of the round). At a simultaneous round start, :meth:`Petal.parse_joint` reads
  ``"SML/LMS"`` (Player 1's order / Player 2's).

Rulings beyond the rules file (each documented where it acts, tested in tests/test_petal.py):

* ``opening=enter-large``: the "opponent has no pyramid on the board" win needs an opponent who
  *had* one before the action (the action removed their last pyramid). Otherwise Player 1's first
  Enter would win at once, the opponent never having entered. Under ``large-opposite`` this is the
  same as the plain rule (your own actions never take your own pyramids off the board).
* ``sequencing=open``: the player who would start on equal tops (``tie_start``) orders first, in
  view, then the other; ``p1-first``/``p2-first``: that player always orders first.
* ``actions=up-to``: ``end`` is legal from the first action of a turn on (zero actions is allowed).
  ``actions=exactly``: a turn in which no action is legal ends at once by ``pass`` (the rest of
  the turn is lost: with nothing legal now, nothing changes until the opponent plays).
* A finished game forgets the round state (the key holds the board and the winner only); the
  terminal ``to_move`` is the loser.
* ``bump_origin``: the rules' ruling (``occupied``: the bumper still stands on its starting petal
  while the empty neighbours are counted) or ``empty`` (the starting petal counts as empty, so a
  slide-bump may send the bumped pyramid back onto it: a swap).

State and key: ``PetalState(board, stacks, left, lead, winner)``. ``board[i]`` is 0 (empty) or
``1 + 3 * owner + size`` (size 0/1/2 = S/M/L). ``stacks[p]`` is ``None`` before player ``p`` has
ordered this round, else the tuple of sizes *still to use*, top first (spent pyramids are dropped:
positions differing only in spent pyramids have the same future, so they are one position).
During a turn the mover's current pyramid is already spent; ``left`` is the actions left in it.
``lead``: before the round's orders are both known, the player who starts on equal tops; after,
the player who started the round. ``winner``: -1, or the winner. Key, lowest digit first: one
base-7 digit per petal, then each stack (base 17: 16 remaining-stacks + "not ordered"), ``left``
(base 4), ``lead`` (base 2), ``winner + 1`` (base 3): ``7**petals * 6936`` keys, 2**40.9 for
the full 10-petal game, below 2**64 up to 18 petals.

Sizes (reachable positions with symmetry, ``enumerate_positions``, compiled batch path in
``_petal_jit.py``, one process): preset ``6`` 1,617,556 (9,496 simultaneous round starts, 9 s);
``6-2`` 6,946,316 (48 s); ``8`` 15,302,776 (70 s). The per-state rules run about 2,400
positions/s, so they would need about 11 minutes for ``6``. Note that in preset ``8`` a player has
only 3 pyramids, fewer than ``run=4``: only the elimination win can happen there.
"""

from __future__ import annotations

import re
from dataclasses import fields
from functools import cached_property
from itertools import permutations
from typing import NamedTuple, Sequence

import numpy as np

from solver.core.game import Expansion, Game, NodeKind, Outcome, Playout
from solver.core.picture import Piece, Picture
from solver.core.variant import Param, Variant
from solver.errors import IllegalMoveError, VariantError
from solver.games._petal_jit import expand_kernel, playout_kernel

SIZE_LETTERS = "SML"
#: the 6 sequencing orders, top first, in the order of the order actions (index 0..5)
ORDERS: tuple[tuple[int, int, int], ...] = tuple(permutations(range(3)))  # type: ignore[assignment]
#: every stack of sequencing pyramids still to use (top first): its index is its key digit
STACKS: tuple[tuple[int, ...], ...] = (
    ((),) + tuple((s,) for s in range(3)) + tuple(permutations(range(3), 2)) + ORDERS
)
_STACK_INDEX = {s: i for i, s in enumerate(STACKS)}
UNSET = len(STACKS)  # key digit of "not ordered yet"
STACK_RADIX = UNSET + 1

#: move targets: a plain slide/flip, or the bump "no empty neighbour" (squish or reduce)
PLAIN = -1
CRUSH = -2

Action = tuple


def piece_code(owner: int, size: int) -> int:
    """The board value of a pyramid of ``owner`` (0/1) and ``size`` (0 = S, 1 = M, 2 = L)."""
    return 1 + 3 * owner + size


def order_name(order: Sequence[int]) -> str:
    return "".join(SIZE_LETTERS[s] for s in order)


class PetalState(NamedTuple):
    """A Petal Battle position (see the module docstring for the fields)."""

    board: tuple[int, ...]
    stacks: tuple[tuple[int, ...] | None, tuple[int, ...] | None]
    left: int
    lead: int
    winner: int


class Petal(Game[PetalState]):
    """Petal Battle on a ring of ``petals`` petals (see the module docstring)."""

    name = "petal"
    title = "Petal Battle"
    params = (
        Param("petals", "int", 10, "petals in the ring (even)", min=4, max=18,
              bounds="from 4, the smallest ring where neighbours and opposites differ, to 18, the "
                     "largest with 64-bit keys"),
        Param("run", "int", "petals/2", "adjacent petals of your colour that win", min=1, max=18,
              derive=lambda v: v["petals"] // 2, bounds="1 to 18: a run fits on the ring"),
        Param("per_size", "int", 3, "board pyramids of each size per player", min=1, max=9,
              bounds="1 to three times the rules' 3: both players' 9 of a size fill the largest ring"),
        Param("opening", "str", "large-opposite",
              "start with a Large each on petals 0 and petals/2, or an empty board and Enter",
              choices=("large-opposite", "enter-large")),
        Param("tie_start", "str", "alternate",
              "equal tops: the second player of the last round starts, or always Player 1",
              choices=("alternate", "player1")),
        Param("actions", "str", "up-to", "a turn uses up to N actions, or exactly N when legal",
              choices=("up-to", "exactly")),
        Param("sequencing", "str", "secret",
              "orders chosen secretly (simultaneous) or in view: tie-starter / Player 1 / Player 2 first",
              choices=("secret", "open", "p1-first", "p2-first")),
        Param("bump_origin", "str", "occupied",
              "while a bump counts empty neighbours the bumper's start petal is occupied, or empty",
              choices=("occupied", "empty")),
    )
    presets = {
        "6": {"petals": 6, "run": 3, "per_size": 1},
        "6-2": {"petals": 6, "run": 3, "per_size": 2},
        "8": {"petals": 8, "run": 4, "per_size": 1},
        "8-2": {"petals": 8, "run": 4, "per_size": 2},
        "10-2": {"petals": 10, "run": 5, "per_size": 2},
    }
    seat_names = ("Player 1", "Player 2")
    rules_version = "1"
    largest_preset = "6"
    #: the orders of a round are chosen in secret (sequencing=secret, the rules): simultaneous
    #: nodes; no dice
    chance = "never"
    secret_choices = True

    def known_large(self) -> str | None:
        """Variants estimated beyond the in-memory solver: the board arrangements (counted
        exactly) times the most positions per arrangement measured on a preset of the same
        ``per_size`` (up to symmetry: 121 on ``6``, 164 on ``8``; 78 on ``6-2`` and 132.3 on
        ``8-2``, whose 368,197,732 positions the enumeration's discovery counted on 2026-12-05: with
        78 this said "about 2.2e8"; 133 now), so the estimate errs high on the presets. With the
        earlier factor of 50, ``petals=10 per_size=1`` (424,051 arrangements, "about 2.1e7") was
        enumerated for 42 s and 4.7 GB before the 40M limit stopped it."""
        boards = self.board_arrangements()
        per = self._positions_per_arrangement()
        estimate = boards * per
        if estimate > 40_000_000:
            return (f"about {estimate:.1e} positions (estimated: {boards:,} board arrangements times "
                    f"about {per} positions each, as measured on the presets), past what the "
                    "in-memory solver holds in 24 GiB")
        return None

    def _positions_per_arrangement(self) -> int:
        return 164 if self.variant.per_size == 1 else 133

    def estimated_positions(self) -> int:
        """Board arrangements times the positions per arrangement measured on the presets (see
        :meth:`known_large`): an upper estimate on the presets."""
        return self.board_arrangements() * self._positions_per_arrangement()

    def board_arrangements(self) -> int:
        """How many ways the pyramids can stand on the ring (each of the 6 kinds 0..per_size
        times, at most one pyramid a petal): ``n! / (n - t)!`` times the coefficient of ``z**t``
        in ``(sum_{c <= per_size} z**c / c!) ** 6``, summed over ``t`` (exact, no listing)."""
        from fractions import Fraction
        from math import factorial

        n, k = self.variant.petals, self.variant.per_size
        poly = [Fraction(1)]
        for _ in range(6):
            out = [Fraction(0)] * min(len(poly) + k, n + 1)
            for i, a in enumerate(poly):
                for c in range(min(k, len(out) - 1 - i) + 1):
                    out[i + c] += a / factorial(c)
            poly = out
        return int(sum(poly[t] * factorial(n) / factorial(n - t) for t in range(len(poly))))

    def position_bound(self) -> int:
        """Every board arrangement times every value of the rest of the key (both sequencing
        stacks, the actions left, the round's lead, the acting phase): the key space restricted
        to real boards. Measured: the presets have 78-164 positions per arrangement, against
        the bound's 6,144."""
        return self.board_arrangements() * STACK_RADIX**2 * 4 * 2 * 3

    def __init__(self, variant: Variant) -> None:
        super().__init__(variant)
        v = self.variant
        self.n: int = v.petals
        self.half: int = v.petals // 2
        self.run: int = v.run
        self.per_size: int = v.per_size
        self.enter: bool = v.opening == "enter-large"
        self.alternate: bool = v.tie_start == "alternate"
        self.exactly: bool = v.actions == "exactly"
        self.secret: bool = v.sequencing == "secret"
        self.origin_empty: bool = v.bump_origin == "empty"
        n = self.n
        #: per petal, the three move targets (neighbours and opposite), ascending
        self.targets: tuple[tuple[int, ...], ...] = tuple(
            tuple(sorted({(i - 1) % n, (i + 1) % n, (i + self.half) % n})) for i in range(n)
        )
        self.mirror: tuple[int, ...] = tuple((-i) % n for i in range(n))
        self._radices = [7] * n + [STACK_RADIX, STACK_RADIX, 4, 2, 3]
        self.key_space: int = 7**n * STACK_RADIX**2 * 4 * 2 * 3
        self._legal_cache: tuple[PetalState | None, frozenset] = (None, frozenset())
        self._playout_tables: tuple | None = None

    def check_variant(self, variant: Variant) -> None:
        n = variant.petals
        if n % 2:
            raise VariantError(
                f"petals must be even (every petal needs an opposite), got {n}; "
                f"use e.g. --set petals={n + 1}"
            )
        if not 1 <= variant.run <= n:
            raise VariantError(
                f"run must be between 1 and petals={n}, got {variant.run}; use e.g. --set run={n // 2}"
            )

    # --- round bookkeeping ------------------------------------------------------------
    def first_orderer(self, state: PetalState) -> int:
        """Under open sequencing: who orders first this round."""
        seq = self.variant.sequencing
        if seq == "p1-first":
            return 0
        if seq == "p2-first":
            return 1
        return state.lead

    def mover(self, state: PetalState) -> int:
        """The player whose turn it is (in play: both stacks known)."""
        s0, s1 = state.stacks
        turns_started = 6 - len(s0) - len(s1)  # type: ignore[arg-type]
        return state.lead if turns_started % 2 == 1 else 1 - state.lead

    def _start_round(self, board: tuple[int, ...], o0: tuple[int, ...], o1: tuple[int, ...],
                     tie: int) -> PetalState:
        """Both orders known: the smaller top starts (equal tops: ``tie``); its turn begins."""
        first = 0 if o0[0] < o1[0] else 1 if o1[0] < o0[0] else tie
        stacks = [o0, o1]
        left = stacks[first][0] + 1
        stacks[first] = stacks[first][1:]
        return PetalState(board, (stacks[0], stacks[1]), left, first, -1)

    def _end_turn(self, state: PetalState, board: tuple[int, ...]) -> PetalState:
        """The state after the current turn ends: the next turn, or a new round."""
        s0, s1 = state.stacks
        assert s0 is not None and s1 is not None
        if not s0 and not s1:
            lead = 1 - state.lead if self.alternate else 0
            return PetalState(board, (None, None), 0, lead, -1)
        nxt = 1 - self.mover(state)
        stacks = [s0, s1]
        left = stacks[nxt][0] + 1
        stacks[nxt] = stacks[nxt][1:]
        return PetalState(board, (stacks[0], stacks[1]), left, state.lead, -1)

    # --- the protocol -----------------------------------------------------------------
    def initial_state(self) -> PetalState:
        board = [0] * self.n
        if not self.enter:
            board[0] = piece_code(0, 2)
            board[self.half] = piece_code(1, 2)
        return PetalState(tuple(board), (None, None), 0, 0, -1)

    def node_kind(self, state: PetalState) -> NodeKind:
        if state.winner >= 0:
            return NodeKind.TERMINAL
        if state.stacks[0] is None or state.stacks[1] is None:
            return NodeKind.SIMULTANEOUS if self.secret else NodeKind.DECISION
        return NodeKind.DECISION

    def to_move(self, state: PetalState) -> int:
        if state.winner >= 0:
            return 1 - state.winner
        s0, s1 = state.stacks
        if s0 is None or s1 is None:
            if self.secret:
                return 0
            first = self.first_orderer(state)
            return first if state.stacks[first] is None else 1 - first
        return self.mover(state)

    def supply(self, board: Sequence[int], owner: int, size: int) -> int:
        """Pyramids of ``owner`` and ``size`` not on the board."""
        return self.per_size - board.count(piece_code(owner, size))  # type: ignore[attr-defined]

    def play_actions(self, board: tuple[int, ...], p: int) -> list[Action]:
        """The board actions of player ``p`` (spawn, grow, enter, moves), without end/pass."""
        n = self.n
        out: list[Action] = []
        large = piece_code(p, 2)
        if self.supply(board, p, 0) > 0:
            for i in range(n):
                if board[i] == 0 and (board[(i - 1) % n] == large or board[(i + 1) % n] == large):
                    out.append(("spawn", i))
        for i in range(n):
            c = board[i]
            if c and (c - 1) // 3 == p and (c - 1) % 3 < 2 and self.supply(board, p, (c - 1) % 3 + 1) > 0:
                out.append(("grow", i))
        if self.enter and large not in board:
            out.extend(("enter", i) for i in range(n) if board[i] == 0)
        for i in range(n):
            c = board[i]
            if not c or (c - 1) // 3 != p:
                continue
            size = (c - 1) % 3
            for j in self.targets[i]:
                d = board[j]
                if d == 0:
                    out.append(("move", i, j, PLAIN))
                    continue
                if (d - 1) % 3 > size:
                    continue  # a bump needs a bumper of the same size or larger
                empties = [
                    e for e in sorted({(j - 1) % n, (j + 1) % n})
                    if board[e] == 0 or (self.origin_empty and e == i)
                ]
                if empties:
                    out.extend(("move", i, j, e) for e in empties)
                elif (d - 1) // 3 != p:
                    out.append(("move", i, j, CRUSH))  # never squish your own
        return out

    def legal_actions(self, state: PetalState) -> list[Action]:
        kind = self.node_kind(state)
        if kind == NodeKind.TERMINAL:
            return []
        if kind == NodeKind.SIMULTANEOUS:
            raise IllegalMoveError("the round start is simultaneous: both players order (player_actions)")
        if state.stacks[0] is None or state.stacks[1] is None:
            return [("order", k) for k in range(6)]
        acts = self.play_actions(state.board, self.mover(state))
        if self.exactly:
            return acts or [("pass",)]
        return acts + [("end",)]

    def player_actions(self, state: PetalState, player: int) -> list[Action]:
        if self.node_kind(state) != NodeKind.SIMULTANEOUS:
            raise IllegalMoveError("not a simultaneous node")
        return [("order", k) for k in range(6)]

    def apply_joint(self, state: PetalState, actions: Sequence[Action]) -> PetalState:
        if self.node_kind(state) != NodeKind.SIMULTANEOUS:
            raise IllegalMoveError("not a simultaneous node")
        a0, a1 = actions
        if a0[0] != "order" or a1[0] != "order":
            raise IllegalMoveError(f"both players must order their trio, got {actions!r}")
        return self._start_round(state.board, ORDERS[a0[1]], ORDERS[a1[1]], state.lead)

    def move_board(self, board: tuple[int, ...], p: int, action: Action) -> tuple[int, ...]:
        """The board after board action ``action`` of player ``p`` (assumed legal)."""
        b = list(board)
        tag = action[0]
        if tag == "spawn":
            b[action[1]] = piece_code(p, 0)
        elif tag == "grow":
            b[action[1]] += 1
        elif tag == "enter":
            b[action[1]] = piece_code(p, 2)
        else:
            _, i, j, e = action
            bumper, bumped = b[i], b[j]
            if e == PLAIN:
                b[j], b[i] = bumper, 0
            elif e >= 0:
                b[j], b[i] = bumper, 0
                b[e] = bumped
            else:
                owner, size = divmod(bumped - 1, 3)
                if size < (bumper - 1) % 3:
                    b[j], b[i] = bumper, 0  # squish a smaller enemy
                else:
                    for down in (size - 1, size - 2):  # reduce a same-size enemy
                        if down >= 0 and self.supply(board, owner, down) > 0:
                            b[j] = piece_code(owner, down)
                            break
                    else:
                        b[j], b[i] = bumper, 0  # nothing smaller in supply: squish
        return tuple(b)

    def has_run(self, board: Sequence[int], p: int) -> bool:
        """``run`` adjacent petals (around the ring) hold pyramids of ``p``."""
        n, need = self.n, self.run
        mine = [c != 0 and (c - 1) // 3 == p for c in board]
        if all(mine):
            return True
        # longest circular run: start counting after a petal that is not mine
        start = mine.index(False)
        length = 0
        for k in range(1, n + 1):
            if mine[(start + k) % n]:
                length += 1
                if length >= need:
                    return True
            else:
                length = 0
        return False

    def winner_after(self, before: Sequence[int], after: Sequence[int], p: int) -> int:
        """Who wins after player ``p`` turned ``before`` into ``after`` (-1: nobody yet)."""
        q = 1 - p

        def count(b: Sequence[int], owner: int) -> int:
            return sum(1 for c in b if c and (c - 1) // 3 == owner)

        eliminated = count(before, q) > 0 and count(after, q) == 0
        if eliminated or self.has_run(after, p):
            return p  # both at once: the acting player wins
        if self.has_run(after, q):
            return q
        return -1

    def apply(self, state: PetalState, action: Action) -> PetalState:
        kind = self.node_kind(state)
        if kind != NodeKind.DECISION:
            raise IllegalMoveError("no single move can be played here (terminal or simultaneous node)")
        if self._legal_cache[0] != state:  # Game.expand applies every action of one state
            self._legal_cache = (state, frozenset(self.legal_actions(state)))
        if action not in self._legal_cache[1]:
            raise IllegalMoveError(f"{action!r} is not legal here")
        if action[0] == "order":
            who = self.to_move(state)
            stacks = list(state.stacks)
            stacks[who] = ORDERS[action[1]]
            if stacks[1 - who] is None:
                return state._replace(stacks=(stacks[0], stacks[1]))
            return self._start_round(state.board, stacks[0], stacks[1], state.lead)  # type: ignore[arg-type]
        if action[0] in ("end", "pass"):
            return self._end_turn(state, state.board)
        p = self.mover(state)
        board = self.move_board(state.board, p, action)
        won = self.winner_after(state.board, board, p)
        if won >= 0:
            return PetalState(board, ((), ()), 0, 0, won)
        if state.left > 1:
            return state._replace(board=board, left=state.left - 1)
        return self._end_turn(state, board)

    def outcome(self, state: PetalState) -> Outcome:
        if state.winner < 0:
            raise ValueError("the game is not over")
        return Outcome.win_for(state.winner)

    # --- compiled random play ----------------------------------------------------------
    def random_playout(self, state: PetalState, max_choices: int, seed: int) -> Playout:
        """Random play from ``state`` in the compiled kernel
        (:func:`solver.games._petal_jit.playout_kernel`), any ring. At a secret round start one
        choice draws both orders: its index is ``order0 * 6 + order1`` (row-major over the
        players' lists, as :meth:`joint_actions` orders them)."""
        if self._playout_tables is None:
            targets = np.full((self.n, 3), -1, dtype=np.int64)
            for i, ts in enumerate(self.targets):
                targets[i, :len(ts)] = ts
            seq = self.variant.sequencing
            first = 0 if seq == "p1-first" else 1 if seq == "p2-first" else -1
            self._playout_tables = (self.per_size, self.run, self.secret, self.alternate, self.exactly, self.enter,
                                    self.origin_empty, first, np.array(ORDERS, dtype=np.int64), targets)
        stacks = np.zeros((2, 3), dtype=np.int64)
        slen = np.full(2, -1, dtype=np.int64)
        for p, st in enumerate(state.stacks):
            if st is not None:
                slen[p] = len(st)
                stacks[p, :len(st)] = st
        cap, seed, taken, counts = Playout.buffers(max_choices, seed)
        board = np.array(state.board, dtype=np.int64)
        left, lead, winner, moves = playout_kernel(board, stacks, slen, state.left, state.lead, state.winner, cap,
                                                   seed, *self._playout_tables, taken, counts)
        values = None if winner < 0 else Outcome.win_for(int(winner)).values

        def end() -> PetalState:
            rows = stacks.tolist()
            return PetalState(tuple(board.tolist()),
                              tuple(None if k < 0 else tuple(rows[p][:k]) for p, k in enumerate(slen.tolist())),
                              int(left), int(lead), int(winner))

        return Playout.lazy(end, moves, taken, counts, values=values)

    # --- keys -------------------------------------------------------------------------
    def encode(self, state: PetalState) -> int:
        digits = list(state.board) + [
            UNSET if s is None else _STACK_INDEX[s] for s in state.stacks
        ] + [state.left, state.lead, state.winner + 1]
        key = 0
        for d, r in zip(reversed(digits), reversed(self._radices)):
            key = key * r + d
        return key

    def decode(self, key: int) -> PetalState:
        digits = []
        for r in self._radices:
            key, d = divmod(key, r)
            digits.append(d)
        if key:
            raise ValueError("key out of range")
        n = self.n
        stacks = tuple(None if d == UNSET else STACKS[d] for d in digits[n : n + 2])
        return PetalState(tuple(digits[:n]), stacks, digits[n + 2], digits[n + 3], digits[n + 4] - 1)  # type: ignore[arg-type]

    # --- round phases ---------------------------------------------------------------
    def round_phase(self, keys: np.ndarray) -> np.ndarray:
        """The phase within its round: ``4 * t + 4 - left`` while a round is played, where ``t``
        (1-6) is the turns begun (the sequencing pyramids spent) and ``left`` (1-3) the actions
        left in the current turn; 0 at round starts and ends. An action lowers ``left`` (+1); a
        turn's end spends one more pyramid (+4) and sets ``left`` to the next top's 1-3 (at least
        +2 in all): every move inside a round raises it, so only the round starts close loops.
        Read from the key's digits (``uint8``)."""
        k = np.asarray(keys, dtype=np.uint64)
        rest = k // np.uint64(7**self.n)
        s0 = (rest % np.uint64(STACK_RADIX)).astype(np.int64)
        rest = rest // np.uint64(STACK_RADIX)
        s1 = (rest % np.uint64(STACK_RADIX)).astype(np.int64)
        rest = rest // np.uint64(STACK_RADIX)
        left = (rest % np.uint64(4)).astype(np.int64)
        winner = (rest // np.uint64(8)).astype(np.int64)
        length = np.array([len(st) for st in STACKS] + [0], dtype=np.int64)
        playing = (s0 != UNSET) & (s1 != UNSET) & (winner == 0) & (left > 0)
        phase = 4 * (6 - length[s0] - length[s1]) + 4 - left
        return np.where(playing, phase, 0).astype(np.uint8)

    # --- symmetry ---------------------------------------------------------------------
    def reflect(self, state: PetalState) -> PetalState:
        """The mirror image through petals 0 and petals/2 (petal i -> -i)."""
        board = [0] * self.n
        for i, c in enumerate(state.board):
            board[self.mirror[i]] = c
        return state._replace(board=tuple(board))

    def symmetries(self, state: PetalState) -> list[PetalState]:
        return [state, self.reflect(state)]

    # --- people -----------------------------------------------------------------------
    def action_name(self, state: PetalState, action: Action) -> str:
        tag = action[0]
        if tag == "order":
            return order_name(ORDERS[action[1]])
        if tag in ("spawn", "grow", "enter"):
            return f"{tag}@{action[1]}"
        if tag in ("end", "pass"):
            return tag
        _, i, j, e = action
        if e == PLAIN:
            return f"{i}-{j}"
        if e == CRUSH:
            return f"{i}-{j}x"
        return f"{i}-{j}>{e}"

    def parse_order(self, text: str) -> int:
        """The index in :data:`ORDERS` of an order written like ``SML`` (top first)."""
        t = text.strip().upper()
        for k, order in enumerate(ORDERS):
            if order_name(order) == t:
                return k
        raise IllegalMoveError(
            f"{text!r} is not an order of the sequencing trio; write a permutation of S, M, L "
            "(top first), e.g. SML or LMS"
        )

    def parse_action(self, state: PetalState, text: str) -> Action:
        kind = self.node_kind(state)
        if kind == NodeKind.TERMINAL:
            raise IllegalMoveError(f"{text!r}: the game is over")
        if kind == NodeKind.SIMULTANEOUS:
            raise IllegalMoveError(
                "both players order their trio at once here; write the joint order like SML/LMS "
                "(Player 1's / Player 2's)"
            )
        legal = self.legal_actions(state)
        if legal[0][0] == "order":
            return ("order", self.parse_order(text))
        wanted = re.sub(r"\s+", "", text.lower())
        for a in legal:
            if self.action_name(state, a) == wanted:
                return a
        m = re.fullmatch(r"(\d+)-(\d+)", wanted)
        if m:
            i, j = int(m.group(1)), int(m.group(2))
            same = [a for a in legal if a[0] == "move" and a[1] == i and a[2] == j]
            if len(same) == 1:
                return same[0]
        names = ", ".join(self.action_name(state, a) for a in legal[:40])
        more = " ..." if len(legal) > 40 else ""
        raise IllegalMoveError(f"{text!r} is not a legal move here; legal: {names}{more}")

    def parse_joint(self, state: PetalState, text: str) -> tuple[Action, Action]:
        """The joint action written ``"SML/LMS"`` (Player 1's order / Player 2's)."""
        if self.node_kind(state) != NodeKind.SIMULTANEOUS:
            raise IllegalMoveError("not a simultaneous round start: play single moves here")
        parts = text.split("/")
        if len(parts) != 2:
            raise IllegalMoveError(
                f"{text!r}: write both orders as Player 1's/Player 2's, e.g. SML/LMS"
            )
        return (("order", self.parse_order(parts[0])), ("order", self.parse_order(parts[1])))

    def render(self, state: PetalState) -> str:
        n = self.n
        cells = []
        for c in state.board:
            if c:
                owner, size = divmod(c - 1, 3)
                cells.append(f"{owner + 1}{SIZE_LETTERS[size]}")
            else:
                cells.append(" .")
        lines = [
            "petal " + " ".join(f"{i:>2}" for i in range(n)),
            "      " + " ".join(cells) + "   (ring: petal "
            + f"{n - 1} touches 0; opposite = +{self.half})",
        ]
        lines.extend(self._status_lines(state))
        return "\n".join(lines)

    def _status_lines(self, state: PetalState) -> list[str]:
        """Each player's supply and sequencing stack, then who is to move (or the winner)."""
        lines: list[str] = []
        for p in range(2):
            sup = " ".join(f"{self.supply(state.board, p, s)}{SIZE_LETTERS[s]}" for s in range(3))
            st = state.stacks[p]
            stack = "not ordered" if st is None else (order_name(st) or "spent") + " (top first)"
            lines.append(f"player {p + 1}: supply {sup} | sequencing {stack}")
        kind = self.node_kind(state)
        if kind == NodeKind.TERMINAL:
            lines.append(f"game over: player {state.winner + 1} wins")
        elif state.stacks[0] is None or state.stacks[1] is None:
            if self.secret:
                lines.append(f"round start: both players order S/M/L in secret (tie: player {state.lead + 1} starts)")
            else:
                lines.append(f"round start: player {self.to_move(state) + 1} orders in view "
                             f"(tie: player {state.lead + 1} starts)")
        else:
            lines.append(f"to move: player {self.mover(state) + 1}, {state.left} action(s) left this turn "
                         f"(round started by player {state.lead + 1})")
        return lines

    def picture(self, state: PetalState) -> Picture:
        """The ring for drawing: petal ``i`` is cell ``i``, each pyramid in its owner's colour
        ``p1``/``p2`` (labelled with the player's number); the caption holds the supplies, the
        sequencing stacks and who is to move."""
        cells: list[tuple[Piece, ...]] = []
        for c in state.board:
            if c:
                owner, size = divmod(c - 1, 3)
                cells.append((Piece(f"p{owner + 1}", size, str(owner + 1)),))
            else:
                cells.append(())
        return Picture("ring", 1, self.n, tuple(cells), caption=tuple(self._status_lines(state)),
                       key=(("number on a pyramid", "its owner; the sizes are drawn small, medium, large"),
                            ("number by a petal", "the petal's place on the ring, 0 to n - 1")))

    # --- the batch path (compiled) ----------------------------------------------------
    @cached_property
    def _batch_tables(self) -> dict[str, np.ndarray]:
        """Arrays of the compiled kernel in ``_petal_jit.py``, built once."""
        n = self.n
        return {
            "targets": np.array(self.targets, dtype=np.int64),
            "mirror": np.array(self.mirror, dtype=np.int64),
            "pow7": np.array([7**i for i in range(n + 1)], dtype=np.uint64),
            "top": np.array([s[0] if s else -1 for s in STACKS] + [-1], dtype=np.int64),
            "pop": np.array([_STACK_INDEX[s[1:]] if s else 0 for s in STACKS] + [0], dtype=np.int64),
            "length": np.array([len(s) for s in STACKS] + [0], dtype=np.int64),
        }

    def expand(self, keys: np.ndarray, *, canonical: bool = False) -> Expansion:
        """Children of many positions at once, by the numba kernel in ``_petal_jit.py``.

        Gives exactly the arrays of the per-state rules (:meth:`Game.expand`), which
        ``tests/test_petal.py`` checks; key spaces beyond ``2**63`` (more than 16 petals) go
        through the per-state rules. At simultaneous nodes ``sim_rows`` (when
        :class:`Expansion` has that field) is 6, the number of Player 1's orders.
        """
        keys = np.asarray(keys, dtype=np.uint64)
        if len(keys) == 0 or self.key_space >= 2**63:
            return Game.expand(self, keys, canonical=canonical)
        if int(keys.max()) >= self.key_space:
            raise ValueError("key out of range for this variant")
        t = self._batch_tables
        seq = self.variant.sequencing
        seq_first = {"p1-first": 0, "p2-first": 1}.get(seq, -1)
        kind, to_move, offsets, children, result, margin, sim_rows = expand_kernel(
            keys, self.n, self.half, self.run, self.per_size, self.enter, self.alternate,
            self.exactly, self.secret, self.origin_empty, seq_first, t["targets"], t["mirror"],
            t["pow7"], t["top"], t["pop"], t["length"], canonical,
        )
        extra = {"sim_rows": sim_rows} if "sim_rows" in {f.name for f in fields(Expansion)} else {}
        return Expansion(
            kind=kind, to_move=to_move, offsets=offsets, children=children, probs=None,
            result=result, margin=margin, **extra,
        )
