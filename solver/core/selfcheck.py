"""The self-check that runs on any game (``pyramids check``): every rule of the game protocol.

Positions are visited two ways: every position reachable from the start, breadth first through
the readable per-state rules, up to a limit (so small variants are checked exhaustively), and
random playouts to the end (so deep positions of large variants are reached too). At every
visited position:

* ``encode``/``decode`` round-trip and keys are integers in ``[0, 2**64)``;
* the node kind is consistent with the methods it offers; a decision node has legal moves (a
  position where the player cannot move must be declared terminal or offer a pass);
* every legal action applies, and its readable name is unique and parses back to it;
* chance probabilities are exact fractions that sum to 1;
* at simultaneous nodes every player has actions with unique names, ``joint_actions`` is their
  row-major product and every joint action applies;
* terminal outcomes give a result to every player; with two players they are zero-sum;
* the rules are deterministic: the same position gives the same kind, player, moves and children
  when asked twice;
* every symmetry image has the same canonical form, node kind, player to move, number of legal
  moves and outcome (a symmetry that swaps the colours changes the player to move and would
  corrupt every value);
* the tier hook, when a game has one, never decreases along a move;
* the declared capabilities hold: no chance node in a game that declares ``chance = "never"``,
  no move into a chance node (dice during play) in one that declares ``"setup"``, no
  simultaneous node in one that declares ``secret_choices = False`` (the solver routes games by
  these declarations, so a wrong one would pick the wrong solver);
* the ranking hook, when a game has one (:mod:`solver.core.ranking`), is a bijection between
  each tier's positions and ``0 .. tier_size - 1`` that agrees with ``tier_of``, on the checked
  positions and random ranks of their tiers;
* a batch :meth:`Game.expand` of the game's own gives exactly the arrays of the per-state rules
  (:func:`compare_expand`, also the helper to prove a hand-written ``expand``), and its
  optional ``child_tier`` equals ``tier_of`` of its children.

Any exception a game method raises is reported as a problem at the position that raised it.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from solver.core.game import Game, NodeKind, Outcome, Result

#: joint actions applied per simultaneous node (all of them in every game so far)
_MAX_JOINT_CHECKS = 400
#: the arrays of an :class:`Expansion` compared by :func:`compare_expand`
EXPANSION_FIELDS = ("kind", "to_move", "offsets", "children", "probs", "result", "margin", "sim_rows")


@dataclass(frozen=True)
class Problem:
    """One broken protocol rule, at one position."""

    rule: str  # a short name, e.g. "symmetry-to-move"
    message: str  # one line: what is wrong and what the rule is
    key: int | None = None
    position: str | None = None  # the position in one line (``describe_state``)

    def __str__(self) -> str:
        where = ""
        if self.key is not None:
            where = f" (e.g. at key {self.key}" + (f": {self.position}" if self.position else "") + ")"
        return f"{self.message}{where}"


@dataclass
class CheckResult:
    """What :func:`check_game` did and found."""

    problems: list[Problem] = field(default_factory=list)
    positions: int = 0  # distinct positions checked in all
    from_start: int = 0  # of them, checked breadth first from the start (at most ``--positions``)
    exhaustive: bool = False  # every position reachable from the start was checked
    playouts: int = 0
    expand_checked: int = 0  # positions whose batch expansion was compared with the rules
    ranking_checked: int = 0  # positions whose rank was checked (games that rank their tiers)
    counts: dict[str, int] = field(default_factory=dict)  # rule -> number of positions breaking it

    @property
    def ok(self) -> bool:
        return not self.problems


class _Collector:
    """Keeps the first example of each broken rule and counts the rest."""

    def __init__(self, game: Game, result: CheckResult, limit: int = 40) -> None:
        self.game = game
        self.result = result
        self.limit = limit

    def __call__(self, rule: str, message: str, key: int | None = None, state: Any = None) -> None:
        counts = self.result.counts
        counts[rule] = counts.get(rule, 0) + 1
        if counts[rule] > 1 or len(self.result.problems) >= self.limit:
            return
        position = None
        if state is not None:
            try:
                position = " ".join(self.game.describe_state(state).split())[:160]
            except Exception:  # noqa: BLE001 - a broken render must not hide the problem found
                position = None
        self.result.problems.append(Problem(rule, message, key, position))


def check_game(game: Game, *, playouts: int = 20, max_plies: int = 200, positions: int = 20_000,
               seed: int = 0, expand_sample: int = 2_000,
               progress: Callable[[int], None] | None = None) -> CheckResult:
    """Check every protocol rule on up to ``positions`` positions reachable from the start
    (breadth first; all of them when there are no more) and on ``playouts`` random games."""
    result = CheckResult()
    fail = _Collector(game, result)
    seen: dict[int, Any] = {}

    def encode(state: Any) -> int | None:
        key = _safe(fail, "exception", lambda: game.encode(state), None, state)
        if key is not None and not isinstance(key, int):
            fail("key", f"encode gave {key!r} ({type(key).__name__}), not a Python int in [0, 2**64)",
                 None, state)
            return None
        return key

    def visit(state: Any) -> list[tuple[Any, int]]:
        """Check ``state`` once; its children with their keys (``[]`` when already checked or
        unreadable)."""
        key = encode(state)
        if key is None or key in seen:
            return []
        seen[key] = state

        def bad(rule: str, message: str) -> None:
            fail(rule, message, key, state)

        children = _safe(fail, "exception", lambda: _check_state(game, state, key, bad), None, state, key)
        if children is not None:  # the node was readable: tiers and symmetry, each on its own
            _safe(fail, "exception", lambda: _check_tiers(game, key, children, bad), None, state, key)
            _safe(fail, "exception", lambda: _check_declared(game, state, children, bad), None, state, key)
            _safe(fail, "exception", lambda: _check_symmetry(game, state, key, bad), None, state, key)
        if progress is not None and len(seen) % 1000 == 0:
            progress(len(seen))
        return children or []

    # breadth first from the start: each position is checked when it leaves the queue, and its
    # children (generated by that check) join the queue while fewer than ``positions`` have
    try:
        start = game.initial_state()
    except Exception as exc:  # noqa: BLE001
        fail("exception", f"initial_state raised {type(exc).__name__}: {exc}")
        return result
    queue = deque([start])
    queued = {encode(start)}
    complete = True
    while queue:
        for child, key in visit(queue.popleft()):
            if key in queued:
                continue
            if len(queued) >= positions:
                complete = False
                continue
            queued.add(key)
            queue.append(child)
    result.exhaustive = complete
    result.from_start = len(seen)

    # random games to the end (deep positions of large variants)
    rng = random.Random(seed)
    for _ in range(playouts):
        result.playouts += 1
        state = start
        for _ply in range(max_plies):
            visit(state)
            nxt = _safe(fail, "exception", lambda: _random_child(game, state, rng), None, state)
            if nxt is None:
                break
            state = nxt

    # the batch path against the rules
    if type(game).expand is not Game.expand and seen:
        keys = list(seen)
        if len(keys) > expand_sample:
            keys = random.Random(seed + 1).sample(keys, expand_sample)
        arr = np.array(sorted(keys), dtype=np.uint64)
        for canonical in (False, True):
            diffs = _safe(fail, "exception", lambda: compare_expand(game, arr, canonical=canonical), [])
            for msg, key in diffs or []:
                fail("expand", msg, key, seen.get(key))
        result.expand_checked = len(arr)
    # the ranking hook: a bijection on every tier the checked positions lie in
    if game.has_tiers and game.has_ranking and seen and _safe(fail, "exception", game.ranked, False):
        from solver.core.ranking import check_ranking

        arr = np.array(sorted(seen), dtype=np.uint64)
        for msg, key in _safe(fail, "exception", lambda: check_ranking(game, arr, seed=seed), []) or []:
            fail("ranking", msg, key, seen.get(key))
        result.ranking_checked = len(arr)
    result.positions = len(seen)
    return result


def selfcheck(game: Game, *, playouts: int = 20, max_plies: int = 200, seed: int = 0,
              positions: int = 0) -> list[str]:
    """Problems found (one line each; an empty list means the game passed): ``playouts``
    random games, plus up to ``positions`` positions breadth first from the start."""
    res = check_game(game, playouts=playouts, max_plies=max_plies, seed=seed, positions=max(positions, 1))
    return [str(p) for p in res.problems]


def compare_expand(game: Game, keys: np.ndarray, *, canonical: bool = False) -> list[tuple[str, int | None]]:
    """Where ``game.expand`` (a batch path of the game's own) differs from the per-state rules
    (:meth:`Game.expand`) on ``keys``: a list of ``(message, key)``, empty when they agree
    exactly, array by array and dtype by dtype. The helper to prove a hand-written ``expand``:

    >>> assert compare_expand(game, keys) == []          # doctest: +SKIP
    """
    keys = np.asarray(keys, dtype=np.uint64)
    fast = game.expand(keys, canonical=canonical)
    ref = Game.expand(game, keys, canonical=canonical)
    how = "canonical=True" if canonical else "canonical=False"
    out: list[tuple[str, int | None]] = []
    for name in EXPANSION_FIELDS:
        a, b = getattr(ref, name, None), getattr(fast, name, None)
        if name in ("probs", "sim_rows") and (a is None or b is None):
            # optional arrays: None and all-default are the same statement
            default = 1.0 if name == "probs" else 0
            a_ok = a is None or bool(np.all(a == default))
            b_ok = b is None or bool(np.all(b == default))
            if a is None and b is None or (a_ok and b_ok):
                continue
            out.append((f"expand ({how}) gives {name} {'None' if b is None else 'values'} where the "
                        f"rules give {'None' if a is None else 'values'}", None))
            continue
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype != b.dtype:
            out.append((f"expand ({how}) gives {name} as {b.dtype}; the protocol says {a.dtype}", None))
            continue
        if a.shape != b.shape or not np.array_equal(a, b):
            out.append((f"expand ({how}) disagrees with the per-state rules in {name}",
                        _first_bad_key(ref, fast, keys)))
    if fast.child_tier is not None:  # optional: the children's tiers, read off the parents
        want = np.asarray(game.tier_of(np.asarray(fast.children, dtype=np.uint64)), dtype=np.int64)
        got = np.asarray(fast.child_tier)
        if got.shape != want.shape or not np.array_equal(got.astype(np.int64), want):
            bad = np.flatnonzero(got != want) if got.shape == want.shape else np.zeros(1, np.int64)
            parent = int(np.searchsorted(fast.offsets, int(bad[0]), side="right")) - 1
            out.append((f"expand ({how}) gives child_tier that differs from tier_of of its children "
                        f"(first at child {int(bad[0])})", int(keys[max(parent, 0)])))
    return out


def _first_bad_key(ref, fast, keys: np.ndarray) -> int | None:
    """The first parent whose expansion differs (kind, player, result, margin or children)."""
    for i, key in enumerate(keys.tolist()):
        try:
            same = (ref.kind[i] == fast.kind[i] and ref.to_move[i] == fast.to_move[i]
                    and ref.result[i] == fast.result[i] and ref.margin[i] == fast.margin[i]
                    and np.array_equal(ref.children[ref.offsets[i]:ref.offsets[i + 1]],
                                       fast.children[fast.offsets[i]:fast.offsets[i + 1]]))
        except (IndexError, ValueError):
            return int(key)
        if not same:
            return int(key)
    return None


def _safe(fail, rule: str, fn: Callable[[], Any], default: Any, state: Any = None, key: int | None = None) -> Any:
    """``fn()``, or ``default`` after reporting the exception it raised as a problem."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - a game's bug is a finding, not a crash
        fail(rule, f"a game method raised {type(exc).__name__}: {exc}", key, state)
        return default


def _random_child(game: Game, state: Any, rng: random.Random) -> Any:
    kind = game.node_kind(state)
    if kind == NodeKind.CHANCE:
        outcomes = game.chance_outcomes(state)
        if not outcomes:
            return None
        return game.apply(state, rng.choices([a for a, _ in outcomes], [float(p) for _, p in outcomes])[0])
    if kind == NodeKind.SIMULTANEOUS:
        lists = [game.player_actions(state, p) for p in range(game.num_players)]
        if not all(lists):
            return None
        return game.apply_joint(state, tuple(rng.choice(acts) for acts in lists))
    if kind == NodeKind.DECISION:
        actions = game.legal_actions(state)
        return game.apply(state, rng.choice(actions)) if actions else None
    return None


def _check_state(game: Game, state: Any, key: int, bad) -> list[tuple[Any, int]] | None:
    """The checks of one position but symmetry and tiers; its children with their keys (those
    that have one), or ``None`` when the position itself is unreadable (bad key or kind)."""
    if not 0 <= key < 2**64:
        bad("key", f"key {key} is outside [0, 2**64): tables store keys as 64-bit integers")
        return None
    back = game.decode(key)
    if back != state or game.encode(back) != key:
        bad("key", "decode(encode(s)) != s: keys must round-trip exactly")
    kind = game.node_kind(state)
    player = game.to_move(state)
    if not isinstance(kind, NodeKind) and kind not in tuple(NodeKind):
        bad("kind", f"node_kind gave {kind!r}, not a NodeKind")
        return None
    kind = NodeKind(kind)
    if not 0 <= player < game.num_players:
        bad("to-move", f"to_move gave {player}, outside 0..{game.num_players - 1}")
    if game.node_kind(state) != kind or game.to_move(state) != player:
        bad("deterministic", "node_kind or to_move gave another answer when asked again")
    children: list[Any] = []
    if kind == NodeKind.DECISION:
        actions = game.legal_actions(state)
        if not actions:
            bad("dead-end", "a decision position with no legal moves: declare it terminal (node_kind "
                            "TERMINAL with an outcome) or give the player a pass move")
        if list(game.legal_actions(state)) != list(actions):
            bad("deterministic", "legal_actions gave another list when asked again")
        names = [game.action_name(state, a) for a in actions]
        if len(set(n.lower() for n in names)) != len(names):
            bad("action-names", f"action names are not unique (case-insensitively): {names[:12]}")
        for a, name in zip(actions, names):
            if game.parse_action(state, name) != a:
                bad("action-names", f"parse_action({name!r}) does not give back the action")
            child = game.apply(state, a)
            if game.encode(game.apply(state, a)) != game.encode(child):
                bad("deterministic", f"apply(state, {name!r}) gave another position when applied again")
            children.append(child)
    elif kind == NodeKind.CHANCE:
        outcomes = game.chance_outcomes(state)
        probs = [p for _, p in outcomes]
        if not outcomes:
            bad("dead-end", "a chance node with no outcomes")
        if not all(isinstance(p, (Fraction, int)) and not isinstance(p, bool) for p in probs):
            bad("chance", "chance probabilities must be exact (fractions.Fraction), not floats")
        elif sum(Fraction(p) for p in probs) != 1:
            bad("chance", f"chance probabilities sum to {sum(Fraction(p) for p in probs)}, not 1")
        if any(p <= 0 for p in probs):
            bad("chance", "a chance outcome with probability 0 or less")
        children = [game.apply(state, a) for a, _ in outcomes]
    elif kind == NodeKind.SIMULTANEOUS:
        lists = [game.player_actions(state, p) for p in range(game.num_players)]
        for p, acts in enumerate(lists):
            if not acts:
                bad("dead-end", f"player {p + 1} has no action at this simultaneous node")
            names = [game.action_name(state, a).lower() for a in acts]
            if len(set(names)) != len(names):
                bad("action-names", f"player {p + 1}'s action names are not unique at simultaneous "
                                    f"node: {names[:12]}")
        joints = game.joint_actions(state)
        expected = 1
        for acts in lists:
            expected *= len(acts)
        if len(joints) != expected or (joints and tuple(a[0] for a in lists) != joints[0]):
            bad("joint", "joint_actions is not the row-major product of the players' player_actions")
        children = [game.apply_joint(state, j) for j in joints[:_MAX_JOINT_CHECKS]]
    elif kind == NodeKind.TERMINAL:
        out = game.outcome(state)
        if not isinstance(out, Outcome) or len(out.results) != game.num_players:
            bad("outcome", "outcome must be an Outcome with a result for every player")
        elif game.num_players == 2:
            r0, r1 = out.results
            if int(r0) != -int(r1):
                bad("outcome", f"a two-player result must be zero-sum (win/loss or tie/tie), got "
                               f"{Result(r0).name}/{Result(r1).name}")
            if (out.scores is None) == bool(game.scored):
                bad("outcome", "scored games must give scores at every end, unscored games none "
                               f"(the class says scored={bool(game.scored)})")
            if out.payoffs is not None:
                from solver.core.game import terminal_payoff
                from solver.errors import ProtocolError

                try:
                    terminal_payoff(out, 0, key)
                except ProtocolError as exc:
                    bad("payoff", str(exc))
    keyed = []
    for child in children:
        ckey = game.encode(child)
        if not isinstance(ckey, int) or not 0 <= ckey < 2**64:
            bad("key", f"a child's key {ckey!r} is not an integer in [0, 2**64)")
        else:
            keyed.append((child, ckey))
    return keyed


def _check_tiers(game: Game, key: int, children: list[tuple[Any, int]], bad) -> None:
    if not game.has_tiers or not children:
        return
    keys = np.array([key] + [k for _, k in children], dtype=np.uint64)  # tiers: symmetry-invariant
    tiers = np.asarray(game.tier_of(keys))
    if (tiers[1:] < tiers[0]).any():
        bad("tier", "a move leads to a lower tier: tier_of must never decrease along a move (the "
                    "tiered solver solves higher tiers first)")
    elif game.tiers_rise_strictly and (tiers[1:] == tiers[0]).any():
        bad("tier", f"a move stays in its tier, but {type(game).__qualname__} declares tiers_rise_strictly = "
                    "True (every move leaves its tier): set it to False")


def _check_declared(game: Game, state: Any, children: list[tuple[Any, int]], bad) -> None:
    """The node kinds the class declares (``chance``, ``secret_choices``) against this position
    and its children; each broken declaration names the class attribute to set."""
    kind = game.node_kind(state)
    cls = type(game).__qualname__
    if kind == NodeKind.SIMULTANEOUS and not game.secret_choices:
        bad("declared-secret", f"a simultaneous node (secret choices), but {cls} declares secret_choices = "
                               f"False: set secret_choices = True on {cls}")
    if kind == NodeKind.CHANCE and game.chance == "never":
        bad("declared-chance", f"a chance node, but {cls} declares chance = 'never': set chance = 'setup' on "
                               f"{cls} (a random start only) or chance = 'in-play' (dice during play)")
    if (kind in (NodeKind.DECISION, NodeKind.SIMULTANEOUS) and game.chance == "setup"
            and any(game.node_kind(child) == NodeKind.CHANCE for child, _ in children)):
        bad("declared-chance", f"a move leads to a chance node (dice during play), but {cls} declares "
                               f"chance = 'setup' (a random start only): set chance = 'in-play' on {cls}")


def _check_symmetry(game: Game, state: Any, key: int, bad) -> None:
    kind, player = game.node_kind(state), game.to_move(state)
    canon_key = game.encode(game.canonical(state))
    images = game.symmetries(state)
    if not images or game.encode(images[0]) != key:
        bad("symmetry", "symmetries(s) must list s itself first")
    for image in images:
        if game.encode(game.canonical(image)) != canon_key:
            bad("symmetry-canonical", "a symmetry image has another canonical form: canonical must "
                                      "pick the same representative from every image")
        if game.node_kind(image) != kind:
            bad("symmetry-kind", "a symmetry image has another node kind")
        if game.to_move(image) != player:
            bad("symmetry-to-move", "a symmetry image has another player to move: symmetries must "
                                    "keep the side to move (a colour swap is not a symmetry of the "
                                    "table; it makes values wrong)")
        if kind == NodeKind.DECISION and len(game.legal_actions(image)) != len(game.legal_actions(state)):
            bad("symmetry-moves", "a symmetry image has another number of legal actions")
        if kind == NodeKind.SIMULTANEOUS and any(
            len(game.player_actions(image, p)) != len(game.player_actions(state, p))
            for p in range(game.num_players)
        ):
            bad("symmetry-moves", "a symmetry image has another number of simultaneous actions")
        if kind == NodeKind.TERMINAL and game.outcome(image).results != game.outcome(state).results:
            bad("symmetry-outcome", "a symmetry image has another outcome")
