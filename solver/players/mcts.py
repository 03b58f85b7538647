"""The MCTS player: UCT with random playouts; chance nodes sampled; secret simultaneous choices by
regret matching (or decoupled UCT).

Every move runs ``budget`` iterations from the current position, each one: **select** down the
tree, **expand** one new position, **play out** at random to the end of the game (or for at most
``playout_moves`` choices, then score the position with the game's evaluation,
:mod:`solver.players.evals`), and **back up** the result. The tree is built afresh for each move
(no reuse) and is keyed by the path of actions (no transpositions); a node's actions are listed
when a search first passes through it, not when it is created for a playout. Playouts run in the
game's compiled kernel (:meth:`solver.core.game.Game.random_playout`, every built-in game) where
it has one, proven equal to the rules by ``tests/test_playouts.py``; ``playouts="rules"`` forces
the readable rules. Where a two-player game also gives its rules compiled
(:meth:`solver.core.game.Game.compiled_rules`), :meth:`MCTSPlayer.choose` runs the same search on
a compiled tree (:mod:`solver.core.uct_jit`: arrays instead of a Python object per node; Blam!
8x8 at 100 playouts a move plays 4-5 times as many games a second); ``tree="python"`` keeps it
in this module (:meth:`MCTSPlayer.run` and :meth:`MCTSPlayer.strategies` always build the Python
tree). At a position that a symmetry of the game maps onto itself (``symmetry="on"``, the
default), one move of each class of symmetric moves is searched.

* Decision node: UCB1 over the node's actions, every untried action first (in random order), then
  the largest ``mean + c * sqrt(ln N / n)``, the mean being the mover's result rescaled to [0, 1]
  (``c`` = 1.4, about sqrt(2), the textbook constant for [0, 1] rewards). The move played is the
  most visited action (ties: the better mean, then at random).
* **MCTS-Solver** (Winands, Bjoernsson and Saito, "Monte-Carlo tree search solver", 2008;
  ``solver="on"``, the default): final positions are *proven* (their result is exact), and a
  decision node is proven as soon as one child is a proven win for its mover, or every child is
  proven (its mover's best of them). A search reaching a proven node backs up its exact result
  without a playout; a proven child's statistics become its exact result; a move proven to lose
  is never selected again (plain UCB's exploration would keep returning to it, wasting playouts
  and dragging the parent's mean toward the loss); the move played is a
  proven win when there is one and never a proven loss while other moves remain. Proofs stop at
  chance and secret simultaneous nodes (their results are expectations). Tested: every proof
  agrees with the exact table (``tests/test_players.py``).
* Chance node: an outcome drawn with the game's probabilities on every visit.
* Simultaneous node, ``simultaneous="rm"`` (the default): **regret matching** (SM-MCTS with
  regret matching, Lanctot et al. 2013; Lisy et al., "Convergence of Monte Carlo tree search in
  simultaneous move games", NIPS 2013). Each player keeps a regret per own action at the node and
  plays the positive regrets' shares (uniform while none is positive) mixed with ``gamma``
  uniform exploration; after the playout, every action's regret grows by its importance-weighted
  estimated result (the result divided by the probability of the action played, for that action;
  0 for the others) minus the result obtained. The strategy returned is the **average** of the
  strategies played, which converges to an equilibrium mix as the tree's values become exact
  (tested against the exact LP mixes). ``simultaneous="ucb"``: **decoupled UCT** (each player
  runs UCB1 over their own actions as if alone; the strategy is the visit shares), which is
  simple but does not converge to a mixed equilibrium (it drifts toward a pure best response).
  ``simultaneous="lp"``: at the root every joint choice is sampled alike (deeper secret choices
  by regret matching) and the mixes returned are the optimal ones of the matrix game of the joint
  choices' mean results (a linear program; a joint choice never sampled gets the root's mean).
  With exact values below (a one-shot Petal round start) it is about three times less
  exploitable than regret matching at the same budget; in the full tree, where the values below
  come from random playouts, it is not better (``pyramids calibrate`` measures both).
  ``simultaneous="uniform"``: every player's actions alike, at the root (no search there) and
  inside the tree. At the budgets the estimates use the searched mixes are *more* exploitable
  than this one, measured against the exact tables of Petal Battle 6 and 6-2 (their values come
  from random playouts below; README, *Full-size games*), so it is the safer choice there.
  :meth:`MCTSPlayer.strategies` gives the distributions; :meth:`MCTSPlayer.choose_joint` draws
  the players' actions from them.
* Results are per player (+1 win, 0 tie, -1 loss; an evaluation in between at a playout's cap),
  and each node's statistics use the result of the player choosing there, so 3-4 player games
  work with each seat maximising its own result.

Reproducible: every random choice uses the generator given to the call.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from solver.core.game import Game, NodeKind
from solver.engines.matrix_game import solve_matrix_game
from solver.errors import VariantError
from solver.players.base import (Action, Player, chance_list, check_decision, float_option, int_option, pick,
                                 sample_chance, terminal_values)
from solver.players.evals import evaluation_for

_DECISION, _CHANCE, _SIMULTANEOUS, _TERMINAL = (int(NodeKind.DECISION), int(NodeKind.CHANCE),
                                                int(NodeKind.SIMULTANEOUS), int(NodeKind.TERMINAL))


class _Node:
    """One position of the search tree (see the module docstring). Its actions (or outcomes) are
    listed only when a search first passes through it (:meth:`expand`), not when it is created
    for a playout."""

    __slots__ = ("state", "kind", "player", "actions", "children", "n", "w", "untried", "visits",
                 "outcomes", "cum", "lists", "pn", "pw", "puntried", "values", "reg", "avg", "ready", "proven",
                 "lost", "joint")

    def __init__(self, game: Game, state: Any, rng: np.random.Generator) -> None:
        self.state = state
        self.visits = 0
        kind = int(game.node_kind(state))
        self.kind = kind
        self.player = game.to_move(state)
        self.ready = kind == _TERMINAL
        self.proven: tuple[float, ...] | None = None  # every player's exact result, once proven
        self.lost: list[bool] | None = None  # decision: the actions proven to lose (MCTS-Solver)
        if kind == _TERMINAL:
            self.values = self.proven = terminal_values(game, state)

    def expand(self, game: Game, rng: np.random.Generator) -> None:
        """List the node's actions, outcomes or both players' actions (once)."""
        self.ready = True
        kind, state = self.kind, self.state
        if kind == _DECISION:
            self.actions = game.legal_actions(state)
            k = len(self.actions)
            self.children: Any = [None] * k
            self.n = [0] * k
            self.w = [0.0] * k
            self.untried = [int(i) for i in rng.permutation(k)] if k > 1 else [0]
        elif kind == _CHANCE:
            self.outcomes = chance_list(game, state)
            if self.outcomes is not None:
                total, cum = 0.0, []
                for _, p in self.outcomes:
                    total += p
                    cum.append(total)
                self.cum = cum
            self.children = {}
        elif kind == _SIMULTANEOUS:
            self.lists = [game.player_actions(state, p) for p in range(game.num_players)]
            self.pn = [[0] * len(acts) for acts in self.lists]
            self.pw = [[0.0] * len(acts) for acts in self.lists]
            self.puntried = [[int(i) for i in rng.permutation(len(acts))] for acts in self.lists]
            self.reg = [[0.0] * len(acts) for acts in self.lists]  # regret matching: regrets
            self.avg = [[0.0] * len(acts) for acts in self.lists]  # and the summed strategies
            self.joint: dict[tuple[int, ...], tuple[float, int]] = {}  # per joint choice: player 1's summed results, visits
            self.children = {}


def _symmetry_classes(game: Game, state: Any, actions: list[Any]) -> list[int]:
    """At a position that some symmetry of the game maps onto itself (the start of most games),
    one action (its index) of each class of moves whose positions are images of each other under
    those symmetries (they have the same value); elsewhere every action. Positions without such a
    symmetry cost one call of :meth:`Game.symmetries`."""
    images = game.symmetries(state)
    fixed = [g for g in range(1, len(images)) if images[g] == state]
    if not fixed:
        return list(range(len(actions)))
    seen: set[Any] = set()
    keep = []
    for i, a in enumerate(actions):
        child = game.apply(state, a)
        if child in seen:
            continue
        keep.append(i)
        seen.add(child)
        child_images = game.symmetries(child)
        seen.update(child_images[g] for g in fixed)
    return keep


def _merge_symmetric(game: Game, node: _Node, rng: np.random.Generator) -> None:
    """Keep one action of each class of symmetric moves at ``node`` (:func:`_symmetry_classes`),
    so the search's playouts are shared among the classes instead of spread over every copy."""
    keep = _symmetry_classes(game, node.state, node.actions)
    if len(keep) < len(node.actions):
        node.actions = [node.actions[i] for i in keep]
        k = len(keep)
        node.children = [None] * k
        node.n = [0] * k
        node.w = [0.0] * k
        node.untried = [int(i) for i in rng.permutation(k)] if k > 1 else [0]


def _matrix_mixes(node: _Node) -> list[tuple[list[Action], np.ndarray]]:
    """``simultaneous="lp"``: both players' optimal mixes of the matrix game whose cells are the
    mean results of the joint choices sampled at ``node`` (a cell never sampled gets the node's
    mean result)."""
    rows, cols = node.lists
    total = np.zeros((len(rows), len(cols)))
    count = np.zeros((len(rows), len(cols)))
    for key, (got, visits) in node.joint.items():
        total[key] = got
        count[key] = visits
    mean = total.sum() / max(1.0, count.sum())
    payoff = np.where(count > 0, total / np.maximum(count, 1.0), mean)
    sol = solve_matrix_game(payoff)
    return [(list(rows), sol.row), (list(cols), sol.col)]


def _rm_pick(reg: list[float], avg: list[float], gamma: float, rng: np.random.Generator) -> tuple[int, float]:
    """Regret matching: the strategy of positive regrets (uniform while none is positive) is
    added to ``avg``; an action is drawn from it mixed with ``gamma`` uniform exploration.
    Returns the action and the probability it was drawn with."""
    k = len(reg)
    pos = [r if r > 0.0 else 0.0 for r in reg]
    total = sum(pos)
    sigma = [x / total for x in pos] if total > 0.0 else [1.0 / k] * k
    for i, x in enumerate(sigma):
        avg[i] += x
    u = float(rng.random())
    acc = 0.0
    for i, x in enumerate(sigma):
        acc += (1.0 - gamma) * x + gamma / k
        if u < acc:
            return i, (1.0 - gamma) * x + gamma / k
    return k - 1, (1.0 - gamma) * sigma[-1] + gamma / k


def _switch(name: str, value: Any, what: str) -> bool:
    """An on/off option (also true/false, 1/0)."""
    text = str(value).strip().lower()
    if text not in ("on", "off", "true", "false", "1", "0"):
        raise VariantError(f"mcts: {name} must be 'on' ({what}) or 'off', not {value!r} (e.g. {name}=off)")
    return text in ("on", "true", "1")


def _prove(path: list[tuple[_Node, Any]]) -> None:
    """MCTS-Solver (Winands, Bjoernsson and Saito 2008), from the leaf up: a decision node is
    proven once one child is a proven win for its mover (+1, the best result there is) or every
    child is proven (then it takes its mover's best of them); a proven child's statistics become
    its exact result, and a child proven to lose is marked in ``lost`` (never selected again).
    Chance and secret simultaneous nodes are never proven (their result is an
    expectation), so the proof stops there."""
    for node, choice in reversed(path):
        if choice is None:  # the new leaf (nothing to prove from) or a chance node (stop)
            if node.kind == _CHANCE:
                return
            continue
        if node.kind != _DECISION or node.proven is not None:
            return
        child = node.children[choice]
        if child.proven is None:
            return
        p = node.player
        exact = child.proven[p]
        node.w[choice] = exact * node.n[choice]
        if exact <= -1.0:  # never selected again
            if node.lost is None:
                node.lost = [False] * len(node.children)
            node.lost[choice] = True
        if exact >= 1.0:
            node.proven = child.proven
        elif not node.untried and all(c is not None and c.proven is not None for c in node.children):
            node.proven = max((c.proven for c in node.children), key=lambda v: v[p])
        else:
            return


def _ucb_pick(n: list[int], w: list[float], total: int, c: float, rng: np.random.Generator,
              skip: list[bool] | None = None) -> int:
    """The action with the largest UCB1 score (rewards in [-1, 1] rescaled to [0, 1]), leaving
    out the actions marked in ``skip`` (proven losses; at least one action is not marked)."""
    log_total = math.log(max(total, 1))
    best, best_i = -math.inf, []
    for i, (ni, wi) in enumerate(zip(n, w)):
        if skip is not None and skip[i]:
            continue
        score = 0.5 * (wi / ni + 1.0) + c * math.sqrt(log_total / ni)
        if score > best + 1e-12:
            best, best_i = score, [i]
        elif score > best - 1e-12:
            best_i.append(i)
    return best_i[0] if len(best_i) == 1 else pick(rng, best_i)


@dataclass(repr=False)
class MCTSPlayer(Player):
    """UCT with ``budget`` playouts per move (default 2000) and exploration constant ``c``
    (default 1.4); random playouts stop after ``playout_moves`` choices (default 200) and are
    then scored by the game's evaluation; they run in the game's compiled kernel
    (:meth:`Game.random_playout`) where it has one, or with ``playouts="rules"`` always through
    the readable rules (the same distribution of play, another stream of random numbers). Secret simultaneous choices: ``simultaneous`` =
    ``"rm"`` (regret matching with exploration ``gamma``, default 0.1), ``"ucb"`` (decoupled
    UCT), ``"lp"`` (the matrix game of the root's sampled joint results) or ``"uniform"`` (every
    action alike, no search at the node). ``solver`` (``"on"``, default, or ``"off"``): prove wins and losses in the tree
    (MCTS-Solver). ``symmetry`` (``"on"``, default, or ``"off"``): at a position a symmetry maps
    onto itself, search one move of each class of symmetric moves. ``tree`` (``"compiled"``,
    default, or ``"python"``): the compiled search tree where the game gives compiled rules."""

    name = "mcts"
    budget: int = 2000
    c: float = 1.4
    playout_moves: int = 200
    simultaneous: str = "rm"
    gamma: float = 0.1
    playouts: str = "compiled"
    solver: bool = True
    symmetry: bool = True
    tree: str = "compiled"
    _evaluate: Any = field(default=None, compare=False)

    def __post_init__(self) -> None:
        self.budget = int_option(self.name, "budget", self.budget, minimum=1, example=2000, what="playouts per move")
        self.c = float_option(self.name, "c", self.c, minimum=0.0, example=1.4, what="UCB exploration constant")
        self.playout_moves = int_option(self.name, "playout_moves", self.playout_moves, minimum=1, example=200,
                                        what="choices per random playout before the evaluation decides")
        method = str(self.simultaneous).strip().lower()
        if method not in ("rm", "ucb", "lp", "uniform"):
            raise VariantError(f"mcts: simultaneous must be 'rm' (regret matching), 'ucb' (decoupled UCT), 'lp' "
                               f"(the matrix game of the root's sampled joint results) or 'uniform' (every action "
                               f"alike, no search), not {self.simultaneous!r} (e.g. simultaneous=rm)")
        self.simultaneous = method
        self.gamma = float_option(self.name, "gamma", self.gamma, minimum=0.0, example=0.1,
                                  what="regret matching's share of uniform exploration")
        if not 0.0 < self.gamma <= 1.0:
            raise VariantError(f"mcts: gamma must be in (0, 1], not {self.gamma} (e.g. gamma=0.1)")
        way = str(self.playouts).strip().lower()
        if way not in ("compiled", "rules"):
            raise VariantError(f"mcts: playouts must be 'compiled' (the game's compiled random playout where it "
                               f"has one) or 'rules' (the readable rules), not {self.playouts!r} (e.g. playouts=rules)")
        self.playouts = way
        self.solver = _switch("solver", self.solver, "prove wins and losses in the tree, MCTS-Solver")
        self.symmetry = _switch("symmetry", self.symmetry, "search one move of each class of symmetric moves at the root")
        shape = str(self.tree).strip().lower()
        if shape not in ("compiled", "python"):
            raise VariantError(f"mcts: tree must be 'compiled' (the compiled search tree where the game has one) or "
                               f"'python', not {self.tree!r} (e.g. tree=python)")
        self.tree = shape

    def options(self) -> dict[str, Any]:
        out: dict[str, Any] = {"budget": self.budget, "c": self.c, "playout_moves": self.playout_moves}
        if self.simultaneous == "uniform":  # no regret matching: gamma plays no part
            out["simultaneous"] = "uniform"
        elif self.simultaneous != "rm" or self.gamma != 0.1:
            out.update(simultaneous=self.simultaneous, gamma=self.gamma)
        if self.playouts != "compiled":
            out["playouts"] = self.playouts
        if not self.solver:
            out["solver"] = "off"
        if not self.symmetry:
            out["symmetry"] = "off"
        if self.tree != "compiled":
            out["tree"] = self.tree
        return out

    # --- the interface --------------------------------------------------------------------
    def choose(self, game: Game, state: Any, rng: np.random.Generator) -> Action:
        check_decision(game, state, self.name)
        rules = self._compiled_rules(game)
        if rules is not None:
            return self._choose_compiled(game, state, rng, rules)
        root = self.run(game, state, rng)
        if len(root.actions) == 1:
            return root.actions[0]
        p = root.player
        proven = [None if c is None or c.proven is None else c.proven[p] for c in root.children]
        return root.actions[self._most_visited(root.n, root.w, proven, rng)]

    def _most_visited(self, n: Any, w: Any, proven: list[float | None], rng: np.random.Generator) -> int:
        """The move played: the most visited (ties: the better mean, then at random); with the
        solver, a proven win if there is one and never a proven loss while other moves remain
        (``proven``: each move's proven result for the mover, or None)."""
        cands = list(range(len(n)))
        if self.solver:
            wins = [i for i in cands if proven[i] is not None and proven[i] >= 1.0]
            alive = [i for i in cands if proven[i] is None or proven[i] > -1.0]
            cands = wins or alive or cands
        top = max(n[i] for i in cands)
        best = [i for i in cands if n[i] == top]
        if len(best) > 1:
            means = {i: w[i] / max(1, n[i]) for i in best}
            m = max(means.values())
            best = [i for i in best if means[i] >= m - 1e-12]
        return best[0] if len(best) == 1 else pick(rng, best)

    def _compiled_rules(self, game: Game) -> Any:
        """The game's compiled rules when this search runs on the compiled tree: ``tree`` and
        ``playouts`` compiled, the game's own evaluation, two players, and rules given."""
        if self.tree != "compiled" or self.playouts != "compiled" or self._evaluate is not None:
            return None
        if game.num_players != 2:
            return None
        return game.compiled_rules()

    def _choose_compiled(self, game: Game, state: Any, rng: np.random.Generator, rules: Any) -> Action:
        """:meth:`choose` on the compiled tree (:mod:`solver.core.uct_jit`): the same search
        (:meth:`run`), its tree held in arrays."""
        actions = game.legal_actions(state)
        if len(actions) == 1:
            return actions[0]
        if self.symmetry:
            actions = [actions[i] for i in _symmetry_classes(game, state, actions)]
        codes = np.array([rules.code(state, a) for a in actions], dtype=np.int64)
        got, n, w, proven = rules.search(rules.encode(state), rules.params, codes, self.budget, self.c,
                                         self.playout_moves, int(rng.integers(2**31)), self.solver,
                                         rules.max_branch)
        i = self._most_visited(n, w, [None if math.isnan(x) else float(x) for x in proven], rng)
        return rules.action(state, int(got[i]))

    def choose_joint(self, game: Game, state: Any, rng: np.random.Generator) -> tuple[Action, ...]:
        mixes = self.strategies(game, state, rng)
        out = []
        for acts, probs in mixes:
            out.append(acts[int(rng.choice(len(acts), p=probs))])
        return tuple(out)

    def strategies(self, game: Game, state: Any, rng: np.random.Generator) -> list[tuple[list[Action], np.ndarray]]:
        """At a simultaneous node: after the search, each player's actions and their mixed
        strategy (:meth:`choose_joint` draws from it): regret matching's average strategy, or the
        shares of the root's visits with ``simultaneous="ucb"``; every action alike with
        ``"uniform"`` (no search)."""
        if game.node_kind(state) != NodeKind.SIMULTANEOUS:
            raise VariantError("strategies() is for secret simultaneous choices; use choose() here")
        if self.simultaneous == "uniform":
            lists = [game.player_actions(state, p) for p in range(game.num_players)]
            return [(list(acts), np.full(len(acts), 1.0 / len(acts))) for acts in lists]
        root = self.run(game, state, rng)
        if self.simultaneous == "lp" and len(root.lists) == 2:
            return _matrix_mixes(root)
        out = []
        for acts, n, avg in zip(root.lists, root.pn, root.avg):
            counts = np.array(avg if self.simultaneous == "rm" else n, dtype=np.float64)
            probs = counts / counts.sum() if counts.sum() > 0 else np.full(len(acts), 1.0 / len(acts))
            out.append((list(acts), probs))
        return out

    # --- the search -----------------------------------------------------------------------
    def run(self, game: Game, state: Any, rng: np.random.Generator) -> _Node:
        """Build the tree of ``budget`` iterations from ``state``; returns its root."""
        root = _Node(game, state, rng)
        root.expand(game, rng)
        if self.symmetry and root.kind == _DECISION and len(root.actions) > 1:
            _merge_symmetric(game, root, rng)
        if root.kind == _DECISION and len(root.actions) == 1:
            return root
        evaluate = self._evaluate or evaluation_for(game)
        players = game.num_players
        for _ in range(self.budget):
            self._iterate(game, root, rng, evaluate, players)
        return root

    def _iterate(self, game: Game, root: _Node, rng: np.random.Generator, evaluate: Any, players: int) -> None:
        path: list[tuple[_Node, Any]] = []
        node = root
        c = self.c
        while True:
            if node.proven is not None:  # a final position, or a decision proven by the tree
                values = node.proven
                break
            kind = node.kind
            if not node.ready:
                node.expand(game, rng)
            if kind == _DECISION:
                if node.untried:
                    i = node.untried.pop()
                    child = _Node(game, game.apply(node.state, node.actions[i]), rng)
                    node.children[i] = child
                    path.append((node, i))
                    values = self._playout(game, child, rng, evaluate, players)
                    path.append((child, None))
                    break
                # a proven loss for the mover is never chosen again (marked by _prove)
                i = _ucb_pick(node.n, node.w, node.visits, c, rng, node.lost)
                path.append((node, i))
                node = node.children[i]
                continue
            if kind == _CHANCE:
                path.append((node, None))
                if node.outcomes is None:  # outcomes too many to list: sample, then play out
                    a = sample_chance(game, node.state, rng)
                    values = self._playout(game, _Node(game, game.apply(node.state, a), rng), rng, evaluate, players)
                    break
                j = bisect_right(node.cum, float(rng.random()) * node.cum[-1])
                j = min(j, len(node.outcomes) - 1)
                child = node.children.get(j)
                if child is None:
                    child = node.children[j] = _Node(game, game.apply(node.state, node.outcomes[j][0]), rng)
                node = child
                continue
            # simultaneous: every player picks by regret matching, or by their own UCB statistics
            picks = []
            drawn: list[float] | None = None  # regret matching: the probabilities of the actions drawn
            if self.simultaneous == "uniform" or (self.simultaneous == "lp" and node is root):  # all alike
                picks = [int(rng.random() * len(acts)) for acts in node.lists]
            elif self.simultaneous in ("rm", "lp"):
                drawn = []
                for p in range(len(node.lists)):
                    i, prob = _rm_pick(node.reg[p], node.avg[p], self.gamma, rng)
                    picks.append(i)
                    drawn.append(prob)
            else:
                for p in range(len(node.lists)):
                    untried = node.puntried[p]
                    if untried:
                        picks.append(untried.pop())
                    else:
                        picks.append(_ucb_pick(node.pn[p], node.pw[p], node.visits, c, rng))
            key = tuple(picks)
            path.append((node, (key, drawn)))
            child = node.children.get(key)
            if child is None:
                joint = tuple(acts[i] for acts, i in zip(node.lists, picks))
                child = node.children[key] = _Node(game, game.apply_joint(node.state, joint), rng)
                values = self._playout(game, child, rng, evaluate, players)
                path.append((child, None))
                break
            node = child
        for n, choice in path:
            n.visits += 1
            if choice is None:
                continue
            if n.kind == _DECISION:
                n.n[choice] += 1
                n.w[choice] += values[n.player]
            else:  # simultaneous
                key, drawn = choice
                got = n.joint.get(key)
                n.joint[key] = (values[0], 1) if got is None else (got[0] + values[0], got[1] + 1)
                for p, i in enumerate(key):
                    n.pn[p][i] += 1
                    n.pw[p][i] += values[p]
                    if drawn is not None:  # every regret: estimated result of the action - result
                        v = values[p]
                        reg = n.reg[p]
                        for b in range(len(reg)):
                            reg[b] -= v
                        reg[i] += v / drawn[p]
        if self.solver:
            _prove(path)

    def _playout(self, game: Game, node: _Node, rng: np.random.Generator, evaluate: Any,
                 players: int) -> tuple[float, ...]:
        """Random play from ``node`` to the end, or for ``playout_moves`` choices then the
        evaluation; every player's result."""
        if node.kind == _TERMINAL:
            return node.values
        state = node.state
        moves = 0
        if self.playouts == "compiled":
            fast = game.random_playout(state, self.playout_moves, int(rng.integers(2**32)))
            if fast is not None:
                if fast.values is not None:  # the kernel ended the game and says who won
                    return fast.values
                state, moves = fast.state, fast.choices  # the rules go on from where it stopped
        node_kind, legal, apply = game.node_kind, game.legal_actions, game.apply
        while True:
            kind = node_kind(state)
            if kind == NodeKind.TERMINAL:
                return terminal_values(game, state)
            if moves >= self.playout_moves:
                return _evaluations(game, state, evaluate, players)
            if kind == NodeKind.DECISION:
                acts = legal(state)
                state = apply(state, acts[int(rng.random() * len(acts))] if len(acts) > 1 else acts[0])
                moves += 1
            elif kind == NodeKind.CHANCE:
                state = apply(state, sample_chance(game, state, rng))
            else:
                joint = []
                for p in range(players):
                    acts = game.player_actions(state, p)
                    joint.append(acts[int(rng.random() * len(acts))])
                state = game.apply_joint(state, tuple(joint))
                moves += 1


def _evaluations(game: Game, state: Any, evaluate: Any, players: int) -> tuple[float, ...]:
    def clamp(v: float) -> float:
        return -1.0 if v < -1.0 else 1.0 if v > 1.0 else float(v)

    if players == 2:
        v = clamp(evaluate(game, state, 0))
        return (v, -v)
    return tuple(clamp(evaluate(game, state, p)) for p in range(players))
