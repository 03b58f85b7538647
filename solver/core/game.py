"""The game protocol every game implements and every engine relies on.

Modelled on OpenSpiel's State API, made pure and keyed: states are immutable values, applying an
action returns a new state, and every state has an exact integer key (``encode``/``decode``) that
fits in 64 bits. Engines see only this API (plus the optional batch path :meth:`Game.expand`).

Node kinds
    * ``DECISION``: one player (``to_move``) picks one of ``legal_actions``.
    * ``CHANCE``: nature picks an outcome from ``chance_outcomes`` (exact ``Fraction`` weights).
    * ``SIMULTANEOUS``: every player picks one of ``player_actions(state, p)`` secretly, then
      ``apply_joint`` resolves them.
    * ``TERMINAL``: the game is over; ``outcome`` tells who won.

Declared capabilities (class attributes, so the solver routes a game without looking at its
positions, and ``pyramids check`` proves the declaration against them)
    * ``chance``: ``"never"``, ``"setup"`` (chance nodes only before the first choice: a random
      start) or ``"in-play"`` (dice during play).
    * ``secret_choices``: whether simultaneous nodes occur (in some variant).
    * ``has_tiers``: whether the game overrides the optional :meth:`Game.tier_of` hook
      (derived, never set).
    * ``has_round_phases``: whether the game overrides the optional :meth:`Game.round_phase`
      hook (derived, never set): rounds that each start with a secret choice, solved from keys
      round by round (:mod:`solver.pipeline.roundwise`).
    * ``has_ranking``: whether the game overrides the optional :meth:`Game.rank` hook (with
      :meth:`Game.unrank` and :meth:`Game.tier_size`: a bijection between each tier's positions
      and ``0 .. size - 1``, :mod:`solver.core.ranking`; derived, never set).

Even at terminal and chance nodes ``to_move`` names a player (the one whose turn it would be, or
whose perspective the stored value takes), so that every row of a table has a ``player``.
"""

from __future__ import annotations

import inspect
import math
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass
from enum import IntEnum
from fractions import Fraction
from typing import (TYPE_CHECKING, Any, Callable, ClassVar, Generic, Hashable, Literal, Mapping, Sequence, TypeVar,
                    get_args)

import numpy as np

from solver.core.variant import Param, Variant, make_variant
from solver.errors import IllegalMoveError, ProtocolError

if TYPE_CHECKING:
    from solver.core.picture import Picture

State = TypeVar("State", bound=Hashable)
Action = Hashable
#: when chance nodes occur: never, only before the first choice (a random setup), or in play
Chance = Literal["never", "setup", "in-play"]
CHANCE_LEVELS: tuple[str, ...] = get_args(Chance)


class NodeKind(IntEnum):
    """What happens at a state."""

    DECISION = 0
    CHANCE = 1
    SIMULTANEOUS = 2
    TERMINAL = 3


class Result(IntEnum):
    """The result of a finished game for one player."""

    LOSS = -1
    TIE = 0
    WIN = 1


@dataclass(frozen=True)
class Outcome:
    """How a finished game ended: a result per player and, in scored games, a score per player.

    ``margin(p)`` is player ``p``'s score minus the best score among the others (two players:
    own score minus the opponent's).
    """

    results: tuple[Result, ...]
    scores: tuple[int, ...] | None = None
    #: two players, games with dice or secret choices: a real payoff per player at this end, in
    #: place of +1 / -1 / 0 from ``results`` (zero-sum: the two must add up to 0; finite). The
    #: chance and secret-choice engines then maximise its expectation, and the table's value is
    #: the expected payoff (``pyramids check`` refuses NaN, infinite or non-zero-sum payoffs)
    payoffs: tuple[float, ...] | None = None

    @property
    def values(self) -> tuple[float, ...]:
        """Every player's result as a number: +1 win, 0 tie, -1 loss."""
        return tuple(float(int(r)) for r in self.results)

    def margin(self, player: int) -> int | None:
        if self.scores is None:
            return None
        others = [s for i, s in enumerate(self.scores) if i != player]
        return self.scores[player] - max(others)

    @classmethod
    def win_for(cls, winner: int, players: int = 2, scores: tuple[int, ...] | None = None) -> "Outcome":
        return cls(tuple(Result.WIN if p == winner else Result.LOSS for p in range(players)), scores)

    @classmethod
    def tie(cls, players: int = 2, scores: tuple[int, ...] | None = None) -> "Outcome":
        return cls(tuple(Result.TIE for _ in range(players)), scores)


def terminal_payoff(out: Outcome, player: int, key: int) -> float:
    """``player``'s real payoff at an end (:attr:`Outcome.payoffs`), checked: two players,
    finite, zero-sum; else :class:`~solver.errors.ProtocolError` naming the position's key."""
    from solver.errors import ProtocolError

    pay = tuple(float(x) for x in out.payoffs)
    if len(pay) != 2:
        raise ProtocolError(f"position {key}: payoffs are for two-player zero-sum games, got {len(pay)} "
                            "(give one per player)")
    if not all(math.isfinite(x) for x in pay):
        raise ProtocolError(f"position {key}: payoff {pay} is not finite; give real numbers")
    if abs(pay[0] + pay[1]) > 1e-9 * max(1.0, abs(pay[0])):
        raise ProtocolError(f"position {key}: payoffs {pay} do not add up to 0; the engines solve "
                            "zero-sum games (give Player 2 the negative of Player 1's payoff)")
    return pay[player]


@dataclass
class Expansion:
    """The batch view of a set of positions given by key (what :meth:`Game.expand` returns).

    For ``n`` parent keys:

    * ``kind``: ``int8[n]`` node kind; ``to_move``: ``int8[n]`` player (see module docstring).
    * ``offsets``: ``int64[n + 1]``; the children of parent ``i`` are
      ``children[offsets[i]:offsets[i + 1]]`` (keys), one per legal action, in the order of
      ``legal_actions`` (chance: of ``chance_outcomes``; simultaneous: of the joint actions in
      row-major order of the players' action lists).
    * ``probs``: ``float64[len(children)]`` chance probabilities (1.0 on other edges), or ``None``
      when no parent is a chance node.
    * ``result``: ``int8[n]`` at terminals the :class:`Result` of the player ``to_move`` (0 else).
    * ``margin``: ``int32[n]`` at terminals the score margin of ``to_move`` (0 in unscored games).
    * ``payoff``: ``float64[n]`` at terminals the real payoff of ``to_move``
      (:attr:`Outcome.payoffs`), or ``None`` when no end of these positions carries one.
    * ``sim_rows``: ``int32[n]`` at simultaneous nodes the number of actions of player 0 (the
      rows of the node's matrix game; its columns are the degree divided by it), 0 elsewhere;
      or ``None`` when no parent is a simultaneous node.
    * ``child_tier``: optional, ``int64[len(children)]`` each child's tier
      (:meth:`Game.tier_of` of ``children``), for a game whose expansion knows it without
      decoding the child again; ``None`` (the default): the tier solvers call ``tier_of``.
      ``pyramids check`` compares it with ``tier_of``.
    """

    kind: np.ndarray
    to_move: np.ndarray
    offsets: np.ndarray
    children: np.ndarray
    probs: np.ndarray | None
    result: np.ndarray
    margin: np.ndarray
    sim_rows: np.ndarray | None = None
    payoff: np.ndarray | None = None
    child_tier: np.ndarray | None = None


class Playout:
    """What :meth:`Game.random_playout` returns: the position reached, the choices made, and,
    per choice, the index of the action taken in ``legal_actions`` and how many there were, and
    the chance outcomes drawn in order (so a test can replay the playout with the readable
    rules).

    ``values``: every player's result at the end (+1 win, 0 tie, -1 loss, as
    :func:`solver.players.base.terminal_values` gives them), when the playout ended the game and
    the kernel knows who won; ``None`` otherwise (stopped at the cap, or a game that does not
    say). A player that only needs the result then never builds the end position: a kernel may
    hand over a function that builds it (:meth:`lazy`), called the first time ``state`` is read.
    ``tests/test_playouts.py`` checks ``values`` against the rules' outcome of ``state``.
    """

    __slots__ = ("_state", "_build", "choices", "taken", "counts", "outcomes", "values")

    def __init__(self, state: Any, choices: int, taken: np.ndarray, counts: np.ndarray, outcomes: tuple = (),
                 values: tuple[float, ...] | None = None) -> None:
        self._state = state
        self._build: Callable[[], Any] | None = None
        self.choices = int(choices)
        self.taken = taken
        self.counts = counts
        self.outcomes = outcomes
        self.values = values

    @property
    def state(self) -> Any:
        """The position the playout reached (built on first use when the kernel gave a builder)."""
        if self._build is not None:
            self._state, self._build = self._build(), None
        return self._state

    @staticmethod
    def buffers(max_choices: int, seed: int) -> tuple[int, int, np.ndarray, np.ndarray]:
        """What a kernel is given: ``(cap, seed, taken, counts)``: the choice cap (at least 0),
        the seed reduced to numba's 32-bit seeds, and the arrays the kernel fills per choice."""
        cap = max(0, int(max_choices))
        return cap, int(seed) % 2**32, np.zeros(cap, dtype=np.int64), np.zeros(cap, dtype=np.int64)

    @classmethod
    def of(cls, state: Any, choices: int, taken: np.ndarray, counts: np.ndarray, outcomes: tuple = (),
           values: tuple[float, ...] | None = None) -> "Playout":
        """The playout that reached ``state`` after ``choices`` choices of the filled buffers."""
        choices = int(choices)
        return cls(state, choices, taken[:choices], counts[:choices], outcomes, values)

    @classmethod
    def lazy(cls, build: Callable[[], Any], choices: int, taken: np.ndarray, counts: np.ndarray,
             outcomes: tuple = (), values: tuple[float, ...] | None = None) -> "Playout":
        """As :meth:`of`, the end position made by ``build()`` only when ``state`` is read."""
        out = cls.of(None, choices, taken, counts, outcomes, values)
        out._build = build
        return out

    def __repr__(self) -> str:
        return f"Playout(choices={self.choices}, values={self.values})"


class _ClassProperty:
    """A read-only property computed from the class, readable on the class and on its games."""

    def __init__(self, fget: Callable[[type], Any]) -> None:
        self.fget = fget
        self.__doc__ = fget.__doc__

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        return self.fget(type(obj) if owner is None else owner)

    def __set__(self, obj: Any, value: Any) -> None:
        raise AttributeError(f"{self.fget.__name__} is derived from the class's declarations; it cannot be set")


class Game(ABC, Generic[State]):
    """Base class of every game. Subclasses set the class attributes and the abstract methods.

    Construct a game with :meth:`from_params` (validates text or Python values) or directly from
    a :class:`Variant`. The variant is available as ``self.variant``.

    Capabilities are declared, never guessed from positions: :attr:`chance` (``"never"``,
    ``"setup"`` or ``"in-play"``) and :attr:`secret_choices` are class attributes, checked
    against the positions by ``pyramids check``; :attr:`has_tiers` is read from whether the
    class overrides the optional hook :meth:`tier_of` (with :meth:`tier_name`). Callers ask
    these, not ``getattr``.
    """

    #: registry name, e.g. ``"override"`` (default: the class name in lower case)
    name: ClassVar[str]
    #: one line for ``pyramids list``
    title: ClassVar[str] = ""
    #: the variant parameters, in the order they are shown (none by default)
    params: ClassVar[tuple[Param, ...]] = ()
    #: named small variants that can be solved exactly: preset name -> parameter values
    presets: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    #: bump when the rules implementation changes, so stale tables are refused
    rules_version: ClassVar[str] = "1"
    #: True when terminal outcomes carry scores (tables then have a ``margin`` column)
    scored: ClassVar[bool] = False
    #: number of players
    num_players: int = 2
    #: what people call each seat, by player index (0 moves first unless the game says
    #: otherwise): colours, sides or "Player n". Reports name the seats with these words, tied to
    #: the player number once ("Black (player 1, moves first)"); games with more seats than names
    #: fall back to "Player n"
    seat_names: ClassVar[tuple[str, ...]] = ("Player 1", "Player 2")
    #: True when :meth:`expand` is a compiled kernel that releases the GIL, so enumeration can
    #: expand chunks in threads (no copies between processes) instead of forked processes
    expand_releases_gil: ClassVar[bool] = False
    #: the largest preset that solves exactly on this project's 24 GiB machine (named in the
    #: error a too-large variant gives); the game's own recommendation. Measured sizes of presets
    #: are not kept on the class: they live in ``solver/pipeline/measured.toml``
    largest_preset: ClassVar[str | None] = None
    #: when chance nodes occur (in any variant of the game): ``"never"``; ``"setup"``, only
    #: before the first choice (a random start: the setups are swept, each solved by
    #: retrograde); ``"in-play"``, dice during play (values are expected results; a game that
    #: also names tiers is solved tier by tier by value iteration,
    #: :mod:`solver.pipeline.tiered_chance`). ``pyramids check`` refuses a chance node the
    #: declaration does not allow
    chance: ClassVar[Chance] = "never"
    #: True when simultaneous nodes (secret choices, solved as matrix games) occur in some
    #: variant; ``pyramids check`` refuses a simultaneous node of a game that says False
    secret_choices: ClassVar[bool] = False
    #: True when every move leads to a **higher** tier (:meth:`tier_of` strictly rises; no move
    #: stays in its tier): the tier solver may then cut each tier into slices solved apart
    #: (``pyramids solve --tiered --tier-slices N``). ``pyramids check`` refuses a move that stays
    #: in its tier when this says True
    tiers_rise_strictly: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not isinstance(getattr(cls, "name", None), str):
            cls.name = cls.__name__.lower()
        _declare_chance(cls)
        moved = [a for a in ("tier_sizes", "tier_children", "large_presets") if a in vars(cls)]
        if moved:  # read from the class before 2026-12-03; a silent no-op now would mislead
            warnings.warn(f"{cls.__name__}: {', '.join(moved)} {'is' if len(moved) == 1 else 'are'} no longer "
                          "read from a game class; measured preset sizes live in "
                          "solver/pipeline/measured.toml (a game without an entry has no size estimate)",
                          FutureWarning, stacklevel=2)

    @_ClassProperty
    def has_tiers(cls) -> bool:
        """Whether the game names tiers: its class overrides :meth:`tier_of` (read on the class
        or on a game; derived, so it cannot disagree with the hook)."""
        return cls.tier_of is not Game.tier_of

    @_ClassProperty
    def has_ranking(cls) -> bool:
        """Whether the game ranks the positions of its tiers: its class overrides :meth:`rank`
        (derived, as :attr:`has_tiers`); :meth:`ranked` says whether a given variant does."""
        return cls.rank is not Game.rank

    @_ClassProperty
    def has_round_phases(cls) -> bool:
        """Whether the game names phases within its rounds: its class overrides
        :meth:`round_phase` (derived, so it cannot disagree with the hook)."""
        return cls.round_phase is not Game.round_phase

    @_ClassProperty
    def chance_in_play(cls) -> bool:
        """``chance == "in-play"`` (read-only; the flag older games set, still accepted in a
        class body: ``chance_in_play = True`` declares ``chance = "in-play"``)."""
        return cls.chance == "in-play"

    def __init__(self, variant: Variant | None = None) -> None:
        if variant is None:  # a game without parameters (or with every default) needs no boilerplate
            variant = make_variant(self.name, self.params, {})
        if variant.game != self.name:
            raise ValueError(f"variant of {variant.game!r} given to {self.name!r}")
        self.variant = variant
        self.warnings: list[str] = []
        self.check_variant(variant)

    @classmethod
    def from_params(cls, params: Mapping[str, Any] | None = None, **kwargs: Any) -> "Game":
        """The game of the variant ``params`` (text or Python values, validated). A class whose
        constructor breaks the protocol (``cls(variant)``, then ``Game.__init__`` run) is named
        in one line, not left to a traceback."""
        given = dict(params or {})
        given.update(kwargs)
        variant = make_variant(cls.name, cls.params, given)
        _check_constructor(cls)
        game = cls(variant)
        if getattr(game, "variant", None) is None:
            raise ProtocolError(f"game {cls.name!r}: {_where(cls)}.__init__ does not call "
                                f"super().__init__(variant), so the game has no variant; call it first "
                                "in __init__ (see the README, 'Your own game')")
        return game

    def check_variant(self, variant: Variant) -> None:
        """Check combinations of parameters; raise :class:`VariantError`, or append to
        ``self.warnings`` for allowed-but-unusual values. Override in games."""

    def too_big(self) -> str | None:
        """Why this variant cannot be stored in a table at all (e.g. "its keys need 90 bits"),
        or ``None``. Such variants can still be played and searched. Override in games; it must
        be cheap (a formula), as it is asked before every solve."""
        return None

    def position_bound(self) -> int | None:
        """An upper bound of this variant's positions (before symmetry), counted by a formula from
        its board and pieces, never by listing them; ``None`` (the default) when not known.

        It counts every arrangement of the pieces, reachable or not, so it is loose (the measured
        presets reach between a third and a 160th of it, up to symmetry); it lets a variant far
        past the position limit be refused at once instead of after minutes of enumeration
        (:func:`solver.engines.enumerate.check_position_bound`). Must be cheap."""
        return None

    @property
    def short_title(self) -> str:
        """A short name of the game for titles and messages: its :attr:`title` up to the first
        colon or bracket (``"Blam!"``, ``"Petal Battle"``), else its registry name."""
        return (self.title or "").split(":")[0].split(" (")[0].strip() or self.name

    def display_name(self) -> str:
        """How pages and reports name this variant: the short title and the preset it is
        (``"Blam! (preset 3x3)"``), ``"Blam! (full game)"`` for the default variant (the game as
        published: every parameter at its default), or ``"Blam! (custom variant)"``; the full
        parameters (:meth:`Variant.label`) go beside it."""
        preset = self.preset_name()
        if preset:
            return f"{self.short_title} (preset {preset})"
        return f"{self.short_title} ({'full game' if self.is_default() else 'custom variant'})"

    def is_default(self) -> bool:
        """Whether this is the game's default variant (every parameter at its default)."""
        try:
            return make_variant(self.name, self.params, {}) == self.variant
        except Exception:  # a plug-in whose defaults do not validate has no default variant
            return False

    def preset_name(self) -> str | None:
        """The name of the preset this variant is, if any."""
        for name, values in self.presets.items():
            try:
                if type(self).from_params(values).variant == self.variant:
                    return name
            except Exception:  # a preset that no longer builds is simply not this variant
                continue
        return None

    def known_large(self) -> str | None:
        """Why this variant is past the in-memory solver by a formula of the game's own (Petal
        Battle counts its board arrangements), or ``None`` (the default). Must be cheap. The
        measured sizes of presets are data, not rules: ``solver/pipeline/measured.toml``, read by
        :func:`solver.pipeline.measured.large_reason`, which asks this hook for the rest."""
        return None

    def estimated_positions(self) -> int | None:
        """The positions of this variant by the same formula as :meth:`known_large` (``None``:
        the game has none, the default), so that the out-of-core solvers can say what a variant
        they refuse would take (memory, disk, time) before any work. Must be cheap."""
        return None

    # --- the core protocol ------------------------------------------------------------
    @abstractmethod
    def initial_state(self) -> State: ...

    @abstractmethod
    def node_kind(self, state: State) -> NodeKind: ...

    @abstractmethod
    def to_move(self, state: State) -> int:
        """The player to move (at terminal/chance nodes: whose perspective the value takes)."""

    def legal_actions(self, state: State) -> list[Action]:
        """Legal actions at a decision node, in a fixed order."""
        raise NotImplementedError

    def apply(self, state: State, action: Action) -> State:
        """The state after ``action`` at a decision or chance node."""
        raise NotImplementedError

    def player_actions(self, state: State, player: int) -> list[Action]:
        """At a simultaneous node: the actions available to ``player``."""
        raise NotImplementedError

    def apply_joint(self, state: State, actions: Sequence[Action]) -> State:
        """At a simultaneous node: the state after every player's action (one per player)."""
        raise NotImplementedError

    def chance_outcomes(self, state: State) -> list[tuple[Action, Fraction]]:
        """At a chance node: ``(outcome, probability)`` pairs, exact, summing to 1."""
        raise NotImplementedError

    def chance_counts(self, state: State) -> list[int] | None:
        """Optional: at a chance node whose outcomes stand for equally likely arrangements
        grouped into classes (e.g. setups up to symmetry), each outcome's number of
        arrangements, in the order of :meth:`chance_outcomes`. ``None`` when not meaningful."""
        return None

    def outcome(self, state: State) -> Outcome:
        """At a terminal node: the result per player (and scores in scored games)."""
        raise NotImplementedError

    @abstractmethod
    def encode(self, state: State) -> int:
        """An exact, reversible key in ``[0, 2**64)``."""

    @abstractmethod
    def decode(self, key: int) -> State: ...

    # --- symmetry ---------------------------------------------------------------------
    def symmetries(self, state: State) -> list[State]:
        """Images of ``state`` under the game's symmetries (the state itself first)."""
        return [state]

    def canonical(self, state: State) -> State:
        """The representative of ``state``'s symmetry class: the image with the smallest key."""
        images = self.symmetries(state)
        return min(images, key=self.encode)

    # --- tiers (optional) ---------------------------------------------------------------
    def tier_of(self, keys: np.ndarray) -> np.ndarray:
        """Optional: the tier of every position in ``keys`` (uint64), as an integer array of the
        same length. A tier is a quantity that never decreases along a move (pieces placed,
        captures made), so large variants are solved tier by tier, highest first
        (:mod:`solver.pipeline.tiered`). It must be the same for a position and its symmetry
        images. A game that overrides it has :attr:`has_tiers`; this default names none."""
        raise NotImplementedError(f"game {self.name!r} names no tiers (has_tiers is False)")

    def ranked(self) -> bool:
        """Whether this variant's tiers are ranked (:meth:`rank`); by default every variant of a
        game with :attr:`has_ranking` (a game ranks only some key schemes: it says so here)."""
        return self.has_ranking

    def tier_size(self, tier: int) -> int:
        """Optional, with :meth:`rank`: the number of ranks of ``tier`` (every position of the
        tier, reachable or not; at least the tier's reachable positions)."""
        raise NotImplementedError(f"game {self.name!r} does not rank its tiers (has_ranking is False)")

    def rank(self, tier: int, keys: np.ndarray) -> np.ndarray:
        """Optional: a bijection between the positions of ``tier`` and ``0 .. tier_size(tier) - 1``,
        here from keys (uint64, all of that tier) to ranks (int64 array of the same length), so
        that a tier can be stored by rank without its keys (:mod:`solver.core.ranking`, whose
        :class:`~solver.core.ranking.BoardRanking` ranks the common case: a board with known
        counts of each symbol). A game that overrides it has :attr:`has_ranking` and overrides
        :meth:`unrank` and :meth:`tier_size` too; ``pyramids check`` checks the three agree
        with each other and with :meth:`tier_of` (:func:`solver.core.ranking.check_ranking`)."""
        raise NotImplementedError(f"game {self.name!r} does not rank its tiers (has_ranking is False)")

    def unrank(self, tier: int, ranks: np.ndarray) -> np.ndarray:
        """Optional, with :meth:`rank`: the keys (uint64) of ``ranks`` of ``tier``."""
        raise NotImplementedError(f"game {self.name!r} does not rank its tiers (has_ranking is False)")

    def round_phase(self, keys: np.ndarray) -> np.ndarray:
        """Optional: the phase within its round of every position in ``keys`` (uint64), as a
        small non-negative integer array of the same length. For a game whose rounds each start
        with a secret simultaneous choice (Petal Battle), a phase strictly increases along every
        move from a decision or chance node to another decision or chance node (so the moves of
        a round form no cycle: every loop of play passes a round start); phases of simultaneous
        and terminal nodes are not read. Such a game is solved from its keys alone, phase by
        phase, without holding its moves (:mod:`solver.pipeline.roundwise`), which checks the
        rule at every move it reads. It must be the same for a position and its symmetry
        images. A game that overrides it has :attr:`has_round_phases`."""
        raise NotImplementedError(f"game {self.name!r} names no round phases (has_round_phases is False)")

    def tier_name(self, tier: int) -> str:
        """Optional: a readable name of ``tier`` for progress lines and the table's metadata
        (e.g. ``"placed A:S B:L"``); by default ``"tier <n>"``."""
        return f"tier {int(tier)}"

    # --- people -----------------------------------------------------------------------
    def render(self, state: State) -> str:
        """A text picture of the position (default: the state's ``repr``)."""
        return repr(state)

    def picture(self, state: State) -> "Picture":
        """A game-independent description of the position for drawing (``analysis.boards``).

        This default holds only the text of :meth:`render`, drawn as monospace lines; games
        override it with their board (see :mod:`solver.core.picture`)."""
        from solver.core.picture import Picture  # lazy: keeps this module free of import cycles

        return Picture.of_text(self.render(state))

    def action_name(self, state: State, action: Action) -> str:
        """A readable, typeable name for ``action`` in ``state`` (e.g. ``b2-b3``)."""
        return str(action)

    def parse_action(self, state: State, text: str) -> Action:
        """The legal action named ``text`` in ``state``; a clear error otherwise."""
        wanted = text.strip().lower()
        kind = self.node_kind(state)
        if kind == NodeKind.CHANCE:
            actions = [a for a, _ in self.chance_outcomes(state)]
        elif kind == NodeKind.DECISION:
            actions = self.legal_actions(state)
        else:
            raise IllegalMoveError("no single move can be played here (terminal or simultaneous node)")
        for a in actions:
            if self.action_name(state, a).lower() == wanted:
                return a
        names = ", ".join(self.action_name(state, a) for a in actions[:40])
        more = " ..." if len(actions) > 40 else ""
        raise IllegalMoveError(f"{text!r} is not a legal move here; legal: {names}{more}")

    def parse_joint(self, state: State, text: str) -> tuple[Action, ...]:
        """At a simultaneous node: the joint action written as each player's action name joined
        by ``/`` in player order (e.g. ``SML/LMS``); a clear error otherwise."""
        if self.node_kind(state) != NodeKind.SIMULTANEOUS:
            raise IllegalMoveError("not a simultaneous node: play single moves here")
        parts = [t.strip().lower() for t in text.split("/")]
        if len(parts) != self.num_players:
            raise IllegalMoveError(f"{text!r}: give one action per player joined by '/', "
                                   f"e.g. {self.joint_name(state, self.joint_actions(state)[0])}")
        joint = []
        for p, wanted in enumerate(parts):
            acts = self.player_actions(state, p)
            for a in acts:
                if self.action_name(state, a).lower() == wanted:
                    joint.append(a)
                    break
            else:
                names = ", ".join(self.action_name(state, a) for a in acts)
                raise IllegalMoveError(f"{wanted!r} is not an action of player {p + 1} here; legal: {names}")
        return tuple(joint)

    def joint_name(self, state: State, joint: Sequence[Action]) -> str:
        """The readable name of a joint action: the players' action names joined by ``/``."""
        return "/".join(self.action_name(state, a) for a in joint)

    def describe_state(self, state: State) -> str:
        """A one-line, machine-friendly description of the position (used in JSON output)."""
        return self.render(state).replace("\n", "/")

    # --- the batch path ---------------------------------------------------------------
    def expand(self, keys: np.ndarray, *, canonical: bool = False) -> Expansion:
        """Children (and node information) of many positions at once, as arrays.

        This default runs the readable per-state rules; a game may override it with a
        vectorised or compiled version, which a test must prove gives exactly the same arrays.
        With ``canonical=True`` child keys are those of canonical representatives.
        """
        n = len(keys)
        kind = np.empty(n, dtype=np.int8)
        to_move = np.empty(n, dtype=np.int8)
        result = np.zeros(n, dtype=np.int8)
        margin = np.zeros(n, dtype=np.int32)
        payoff = np.zeros(n, dtype=np.float64)
        any_payoff = False
        offsets = np.zeros(n + 1, dtype=np.int64)
        children: list[int] = []
        probs: list[float] = []
        any_chance = False
        sim_rows = np.zeros(n, dtype=np.int32)
        any_simultaneous = False
        enc = self.encode
        canon = self.canonical
        for i, key in enumerate(keys.tolist()):
            state = self.decode(key)
            k = self.node_kind(state)
            kind[i] = k
            player = self.to_move(state)
            to_move[i] = player
            if k == NodeKind.DECISION:
                for a in self.legal_actions(state):
                    child = self.apply(state, a)
                    children.append(enc(canon(child)) if canonical else enc(child))
                    probs.append(1.0)
            elif k == NodeKind.CHANCE:
                any_chance = True
                for a, p in self.chance_outcomes(state):
                    child = self.apply(state, a)
                    children.append(enc(canon(child)) if canonical else enc(child))
                    probs.append(float(p))
            elif k == NodeKind.SIMULTANEOUS:
                any_simultaneous = True
                sim_rows[i] = len(self.player_actions(state, 0))
                for joint in self.joint_actions(state):
                    child = self.apply_joint(state, joint)
                    children.append(enc(canon(child)) if canonical else enc(child))
                    probs.append(1.0)
            else:
                out = self.outcome(state)
                result[i] = int(out.results[player])
                m = out.margin(player)
                margin[i] = 0 if m is None else m
                if out.payoffs is not None:
                    any_payoff = True
                    payoff[i] = terminal_payoff(out, player, key)
                else:
                    payoff[i] = float(result[i])
            offsets[i + 1] = len(children)
        return Expansion(
            kind=kind,
            to_move=to_move,
            offsets=offsets,
            children=np.array(children, dtype=np.uint64),
            probs=np.array(probs, dtype=np.float64) if any_chance else None,
            result=result,
            margin=margin,
            sim_rows=sim_rows if any_simultaneous else None,
            payoff=payoff if any_payoff else None,
        )

    def joint_actions(self, state: State) -> list[tuple[Action, ...]]:
        """All joint actions at a simultaneous node, row-major over the players' action lists."""
        lists = [self.player_actions(state, p) for p in range(self.num_players)]
        out: list[tuple[Action, ...]] = [()]
        for acts in lists:
            out = [prefix + (a,) for prefix in out for a in acts]
        return out

    # --- compiled random play -----------------------------------------------------------
    def random_playout(self, state: State, max_choices: int, seed: int) -> Playout | None:
        """A compiled random playout from ``state``: at every decision an action drawn uniformly
        from :meth:`legal_actions` (at a chance node an outcome with the game's probabilities),
        until the game ends or ``max_choices`` choices were made;
        reproducible from ``seed``. ``None`` (the default) when the game (or this position) has
        none: players then play out with the readable rules. A game that overrides this must be
        proven equal to its rules by replaying the ``taken`` indices (``tests/test_playouts.py``).
        """
        return None

    def compiled_rules(self) -> Any:
        """Optional: the compiled parts of the rules that the MCTS player's compiled search tree
        runs on (:class:`solver.core.uct_jit.CompiledRules`), for two-player games of
        decisions only, or ``None`` (the default: the search runs through the readable rules).
        A game that gives them must be proven equal to its rules (``tests/test_compiled_tree.py``)."""
        return None

    # --- conveniences -----------------------------------------------------------------
    def is_terminal(self, state: State) -> bool:
        return self.node_kind(state) == NodeKind.TERMINAL

    def play(self, moves: Sequence[str], state: State | None = None) -> State:
        """The state after the given moves in readable notation (from the start by default)."""
        state = self.initial_state() if state is None else state
        for i, text in enumerate(moves):
            if self.is_terminal(state):
                raise IllegalMoveError(f"move {i + 1} ({text!r}): the game is already over")
            if self.node_kind(state) == NodeKind.SIMULTANEOUS:
                state = self.apply_joint(state, self.parse_joint(state, text))
                continue
            action = self.parse_action(state, text)
            state = self.apply(state, action)
        return state

    def __repr__(self) -> str:
        return self.variant.label()


def _declare_chance(cls: type) -> None:
    """Map a class body's ``chance_in_play = True/False`` (the older flag) onto ``chance`` and
    check ``chance`` and ``secret_choices``; a wrong declaration is named in one line."""
    own = cls.__dict__
    if "chance_in_play" in own and not isinstance(own["chance_in_play"], _ClassProperty):
        flag = own["chance_in_play"]
        delattr(cls, "chance_in_play")  # the derived, read-only property answers from now on
        wanted = "in-play" if flag else ("setup" if cls.chance == "in-play" else cls.chance)
        if "chance" in own and own["chance"] != wanted:
            raise ProtocolError(f"game class {_where(cls)} sets chance = {own['chance']!r} and "
                                f"chance_in_play = {flag!r}, which disagree; set chance alone")
        cls.chance = wanted
    if cls.chance not in CHANCE_LEVELS:
        raise ProtocolError(f"game class {_where(cls)} sets chance = {cls.chance!r}; it must be one of "
                            f"{', '.join(repr(c) for c in CHANCE_LEVELS)}")
    if not isinstance(cls.secret_choices, bool):
        raise ProtocolError(f"game class {_where(cls)} sets secret_choices = {cls.secret_choices!r}; it "
                            "must be True or False")


def _where(cls: type) -> str:
    """``MyGame`` (with its module when it is not a built-in game: ``mypkg.games.MyGame``)."""
    module = getattr(cls, "__module__", "")
    return cls.__qualname__ if module.startswith("solver.") else f"{module}.{cls.__qualname__}"


def _check_constructor(cls: type) -> None:
    """Refuse, in one line naming the class, a game whose constructor cannot be called as the
    protocol calls it: ``cls(variant)``."""
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):  # a signature Python cannot read: let the call itself tell
        return
    try:
        signature.bind(object())
    except TypeError:
        name = getattr(cls, "name", cls.__name__.lower())
        shown = signature.replace(return_annotation=inspect.Signature.empty)
        what = "takes no variant" if not signature.parameters else "cannot be called with the variant alone"
        raise ProtocolError(
            f"game {name!r}: {_where(cls)}.__init__{shown} {what}; the protocol calls "
            f"{cls.__qualname__}(variant): define __init__(self, variant) and call "
            "super().__init__(variant) (see the README, 'Your own game')") from None

