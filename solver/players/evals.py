"""Evaluations: how good a position looks for one player, a number in [-1, 1], without search.

One small function per built-in game (what it counts is in its docstring), used by the greedy
player, by alpha-beta at its horizon and by MCTS when a playout reaches its move cap. Each is
antisymmetric for two players (``f(state, 0) == -f(state, 1)``) and cheap; none is tuned, they
only have to point the right way. A finished game is worth its result (+1 win, 0 tie, -1 loss)
whatever the game. Games without an evaluation here (plug-ins) get 0.0 for every unfinished
position: search then plays for forced results only and MCTS relies on finished playouts. A
plug-in can register its own function in :data:`EVALUATIONS` (``name -> f(game, state, player)``)
or define a method ``evaluate(state, player)`` on its game class. A game may also offer other
evaluations by name (:data:`STYLES`), which the greedy player takes as ``evaluation=NAME``.
"""

from __future__ import annotations

from typing import Any, Callable

from solver.core.game import Game, NodeKind
from solver.errors import VariantError

Evaluation = Callable[[Game, Any, int], float]


def _clamp(x: float) -> float:
    return -1.0 if x < -1.0 else 1.0 if x > 1.0 else x


def override_eval(game: Game, state: Any, player: int) -> float:
    """Override: lines close to being made.

    For each colour, over every winning line: the squares of the line topped by that colour,
    a Large top counting 1, a Medium 2/3, a Small 1/3 (a smaller top can still be covered), as a
    share of the line, squared (a nearly full line counts much more than two half lines); the
    sum is divided by the number of lines. The value is the player's colour minus the other's.
    """
    n_lines = len(game.lines)  # type: ignore[attr-defined]
    if n_lines == 0:
        return 0.0
    stacks = state.stacks
    weight = []  # per square: (colour of the top or -1, weight of the top)
    for st in stacks:
        if st:
            top = st[-1]
            weight.append((top // 3, (top % 3 + 1) / 3.0))
        else:
            weight.append((-1, 0.0))
    size = float(game.line)  # type: ignore[attr-defined]
    score = [0.0, 0.0]
    for cells in game.lines:  # type: ignore[attr-defined]
        tops = [0.0, 0.0]
        for x in cells:
            c, w = weight[x]
            if c >= 0:
                tops[c] += w
        score[0] += (tops[0] / size) ** 2
        score[1] += (tops[1] / size) ** 2
    return _clamp((score[player] - score[1 - player]) / n_lines)


def greener_eval(game: Game, state: Any, player: int) -> float:
    """Greener: the score so far.

    Greens in the stacks each player controls (what the final score counts), the player's minus
    the opponent's, as a share of all green pyramids. Before the setup (the chance root) it is 0.
    """
    if getattr(state, "root", False):
        return 0.0
    scores = game.scores(state)  # type: ignore[attr-defined]
    greens = max(1, game.green)  # type: ignore[attr-defined]
    return _clamp((scores[player] - scores[1 - player]) / greens)


def blam_eval(game: Game, state: Any, player: int) -> float:
    """Blam!: pips captured so far.

    The player's treasure in pips (S=1, M=2, L=3) minus the best of the other players', as a
    share of the pips one opponent owns (6 per trio).
    """
    scores = game.scores(state)  # type: ignore[attr-defined]
    best_other = max(s for p, s in enumerate(scores) if p != player)
    return _clamp((scores[player] - best_other) / (6.0 * game.per_size))  # type: ignore[attr-defined]


def _carrots_progress(game: Game, board: tuple[int, ...], player: int, stranded: bool = False) -> float:
    corner = game.corner[player]  # type: ignore[attr-defined]
    side = game.side[player]  # type: ignore[attr-defined]
    owner = game.owner  # type: ignore[attr-defined]
    n = game.n  # type: ignore[attr-defined]
    group: set[int] = set()
    code = board[corner]
    if code and owner.get((code - 1) // 3) == player:
        group = {corner}
        todo = [corner]
        while todo:
            sq = todo.pop()
            for nb in game.neighbours[sq]:  # type: ignore[attr-defined]
                if nb in group or nb not in side:
                    continue
                c = board[nb]
                if c and owner.get((c - 1) // 3) == player:
                    group.add(nb)
                    todo.append(nb)
    # every other pyramid of the player's colours on their side counts by how near it is to the
    # group (to the corner while there is none): 1/4 next to it, 1/8 two squares away, ... (a
    # slope to climb: with a flat quarter, greedy self-play on 8x8 ended 18 of 30 games within
    # 500 choices, now 29 of 40). Pyramids off the side count nothing: crediting them too ended
    # every 8x8 game but made greedy and MCTS worse on the solved 3x3 (greedy kept the exact value
    # in 80.8% of its moves instead of 90.9%, MCTS 92.6% instead of 95.5%): stranding the other
    # player's pyramids off their side is a good move there. On 3x3 this is the flat quarter.
    # ``stranded``: pyramids off the side count too, by the same slope (the racing evaluation).
    anchor = [divmod(sq, n) for sq in (group or {corner})]
    near = 0.0
    for sq in (set(range(n * n)) if stranded else side) - group:
        code = board[sq]
        if code and owner.get((code - 1) // 3) == player:
            r, c = divmod(sq, n)
            near += 0.25 / max(1, min(abs(r - ar) + abs(c - ac) for ar, ac in anchor))
    return min(1.0, (len(group) + near) / game.group)  # type: ignore[attr-defined]


def carrots_eval(game: Game, state: Any, player: int) -> float:
    """Carrots and Broccoli: how far each garden has grown.

    For each player: the pyramids of their colours connected to their corner on their side (the
    group that wins at ``group``), plus, for each other pyramid of theirs on their side, a quarter
    divided by its distance (orthogonal steps) to the nearest pyramid of that group (to the
    corner while there is no group), as a share of ``group`` (at most 1). The player's share
    minus the opponent's.
    """
    board = state.board
    if not any(board):
        return 0.0
    return _clamp(_carrots_progress(game, board, player) - _carrots_progress(game, board, 1 - player))


def carrots_race_eval(game: Game, state: Any, player: int) -> float:
    """Carrots and Broccoli, racing (``--option evaluation=race``): as :func:`carrots_eval`, but
    every pyramid of a player's colours counts by its distance to their group wherever it stands,
    off their side too. A player with it grows its own garden and gains nothing by stranding the
    other's pyramids off their side (the default evaluation's blocking play)."""
    board = state.board
    if not any(board):
        return 0.0
    return _clamp(_carrots_progress(game, board, player, True) - _carrots_progress(game, board, 1 - player, True))


def petal_eval(game: Game, state: Any, player: int) -> float:
    """Petal Battle: runs and material.

    Half the value is the longest run of adjacent petals each player holds, as a share of the
    ``run`` that wins; half is the pyramids each player has on the board, counted S=1, M=2, L=3,
    as a share of all their board pyramids (6 per size set). Both the player's minus the
    opponent's.
    """
    board = state.board
    n = len(board)
    need = float(game.run)  # type: ignore[attr-defined]
    total = 6.0 * game.per_size  # type: ignore[attr-defined]
    runs, material = [0, 0], [0, 0]
    for p in (0, 1):
        mine = [c != 0 and (c - 1) // 3 == p for c in board]
        if all(mine):
            runs[p] = n
        elif any(mine):
            start = mine.index(False)
            length = best = 0
            for k in range(1, n + 1):
                if mine[(start + k) % n]:
                    length += 1
                    best = max(best, length)
                else:
                    length = 0
            runs[p] = best
        material[p] = sum((c - 1) % 3 + 1 for c in board if c and (c - 1) // 3 == p)
    q = 1 - player
    value = 0.5 * (min(runs[player], need) - min(runs[q], need)) / need
    value += 0.5 * (material[player] - material[q]) / total
    return _clamp(value)


def zero_eval(game: Game, state: Any, player: int) -> float:
    """Any other game: 0.0 (nothing known about unfinished positions)."""
    return 0.0


#: game name -> evaluation
EVALUATIONS: dict[str, Evaluation] = {
    "override": override_eval,
    "greener": greener_eval,
    "blam": blam_eval,
    "carrots": carrots_eval,
    "petal": petal_eval,
}


#: game name -> other evaluations a player may be asked for by name (``evaluation=NAME``)
STYLES: dict[str, dict[str, Evaluation]] = {
    "carrots": {"race": carrots_race_eval},
}


def evaluation_names(game: Game) -> list[str]:
    """The evaluations a player may use on ``game``: ``default`` and the game's :data:`STYLES`."""
    return ["default", *STYLES.get(game.name, {})]


def evaluation_for(game: Game, name: str = "default") -> Evaluation:
    """The evaluation of ``game``: its own ``evaluate(state, player)`` method, else the one in
    :data:`EVALUATIONS` for its name, else :func:`zero_eval`; ``name`` other than ``default``:
    one of the game's :data:`STYLES` (a one-line error naming them otherwise)."""
    if name != "default":
        styles = STYLES.get(game.name, {})
        if name not in styles:
            raise VariantError(f"{game.name} has no evaluation {name!r}; its evaluations: "
                               f"{', '.join(evaluation_names(game))} (e.g. --option evaluation=default)")
        return styles[name]
    own = getattr(game, "evaluate", None)
    if callable(own):
        return lambda g, s, p: float(own(s, p))
    return EVALUATIONS.get(game.name, zero_eval)


def evaluate(game: Game, state: Any, player: int, name: str = "default") -> float:
    """How good ``state`` is for ``player``, in [-1, 1]: the result at a finished game (+1 win,
    0 tie, -1 loss), else the game's evaluation (``name``: see :func:`evaluation_for`)."""
    if game.node_kind(state) == NodeKind.TERMINAL:
        return float(int(game.outcome(state).results[player]))
    return _clamp(evaluation_for(game, name)(game, state, player))
