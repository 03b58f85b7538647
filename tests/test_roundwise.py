"""Secret-choice games solved round by round from keys (solver.pipeline.roundwise) against the
round engine on the whole graph (solver.engines.rounds), which the suite checks against the
general secret-choice engine: the same values, sweeps and optimal mixes."""

from __future__ import annotations

import functools
import random

import numpy as np
import polars as pl
import pytest

from solver.api import make_game
from solver.core.game import Expansion, Game, NodeKind, Outcome, Result
from solver.core.variant import make_variant
from solver.engines.enumerate import enumerate_positions, reachable
from solver.engines.matrix_game import solve_matrix_game
from solver.engines.rounds import solve_rounds
from solver.games.petal import Petal
from solver.pipeline.roundwise import solve_by_rounds
from tests.toygames import DiceRace
from tests.test_simultaneous import C, D, S, T, Node, build, round_game
from tests.budget import seeds


def graph_arrays(graph):
    kind = np.asarray(graph.kind)
    offsets = np.asarray(graph.offsets)
    child = np.asarray(graph.child)
    parent = np.repeat(np.arange(graph.n), np.diff(offsets))
    return kind, offsets, child, parent


def root_matrix(graph, value, row: int) -> np.ndarray:
    """Player 1's matrix game at round start ``row`` from the whole graph's values."""
    kind, offsets, child, _ = graph_arrays(graph)
    kids = child[offsets[row] : offsets[row + 1]]
    r = int(np.asarray(graph.sim_rows)[row])
    to_move = np.asarray(graph.to_move)
    return (value[kids] * np.where(to_move[kids] == 0, 1.0, -1.0)).reshape(r, -1)


def assert_same(graph, ref, rw) -> None:
    assert np.array_equal(graph.keys, rw.keys)
    assert np.array_equal(np.asarray(graph.kind), rw.kind)
    assert np.array_equal(np.asarray(graph.to_move), rw.to_move)
    np.testing.assert_allclose(rw.value, ref.value, rtol=0, atol=1e-9)
    # every round start's mixes are optimal in its matrix game at the values
    for at, row in enumerate(rw.sims.tolist()):
        a = root_matrix(graph, ref.value, row)
        v = solve_matrix_game(a).value
        x, y = rw.mixes[0][at, : a.shape[0]], rw.mixes[1][at, : a.shape[1]]
        assert x.sum() == pytest.approx(1) and y.sum() == pytest.approx(1)
        assert (x @ a).min() >= v - 1e-7 and (a @ y).max() <= v + 1e-7


@pytest.mark.parametrize("params", [
    dict(petals=4, run=2, per_size=1),
    dict(petals=4, run=2, per_size=2),
    dict(petals=4, run=2, per_size=1, actions="exactly", tie_start="player1"),
    dict(petals=4, run=2, per_size=1, opening="enter-large"),
])
def test_petal_equals_the_round_engine(params) -> None:
    game = make_game("petal", params)
    graph = enumerate_positions(game)
    ref = solve_rounds(graph, tol=1e-12)
    rw = solve_by_rounds(game, tol=1e-12)
    assert_same(graph, ref, rw)
    assert rw.stats["sweeps"] == ref.stats["sweeps"]
    assert rw.converged and rw.stats["certified"]
    assert rw.start_value == pytest.approx(ref.value[graph.root] * (1 if graph.to_move[graph.root] == 0 else -1))


@pytest.mark.slow
def test_petal_6_equals_the_round_engine() -> None:
    game = make_game("petal", dict(petals=6, run=3, per_size=1))
    graph = enumerate_positions(game)
    ref = solve_rounds(graph, tol=1e-12)
    rw = solve_by_rounds(game, tol=1e-12)
    assert_same(graph, ref, rw)
    assert rw.stats["sweeps"] == ref.stats["sweeps"]
    np.testing.assert_allclose(rw.p_win, ref.p_win, rtol=0, atol=1e-7)
    np.testing.assert_allclose(rw.p_loss, ref.p_loss, rtol=0, atol=1e-7)
    assert rw.start_value == pytest.approx(1 / 3, abs=1e-9)


@pytest.mark.parametrize("params", [dict(petals=4, run=2, per_size=1), dict(petals=6, run=3, per_size=1)])
def test_petal_round_phase_rises_along_every_move_inside_a_round(params) -> None:
    """Checked on the whole graph, independently of the solver's own check."""
    game = make_game("petal", params)
    graph = enumerate_positions(game)
    kind, _, child, parent = graph_arrays(graph)
    phase = game.round_phase(graph.keys).astype(int)
    plain = (kind == int(NodeKind.DECISION)) | (kind == int(NodeKind.CHANCE))
    inside = plain[parent] & plain[child]
    assert inside.sum() > 1000
    assert np.all(phase[child[inside]] > phase[parent[inside]])
    # and the round starts are what closes the loops: every move into them comes from play
    sim = kind == int(NodeKind.SIMULTANEOUS)
    assert np.all(phase[sim] == 0) and np.any(plain[parent] & sim[child])


def test_reachable_equals_the_enumeration() -> None:
    for game in [make_game("petal", dict(petals=4, run=2, per_size=1)),
                 make_game("override", dict(size=2, line=2, per_size=2)), DiceRace.from_params({"target": 4})]:
        graph = enumerate_positions(game, workers=1)
        found = reachable(game, workers=1)
        assert np.array_equal(graph.keys, found.keys)
        assert np.array_equal(np.asarray(graph.kind), found.kind)
        assert np.array_equal(np.asarray(graph.to_move), found.to_move)
        terminal = found.kind == int(NodeKind.TERMINAL)
        assert np.array_equal(np.asarray(graph.result)[terminal], found.result[terminal])
        assert np.all(found.result[~terminal] == 0)
        assert found.root == graph.root
        assert np.array_equal(np.asarray(graph.ply), found.ply)


class _WrongPhases(Petal):
    name = "petal"

    def round_phase(self, keys: np.ndarray) -> np.ndarray:
        return np.zeros(len(keys), np.uint8)


def test_a_phase_that_does_not_rise_is_refused_in_one_line() -> None:
    game = _WrongPhases(make_game("petal", dict(petals=4, run=2, per_size=1)).variant)
    with pytest.raises(ValueError, match="does not raise the round phase") as err:
        solve_by_rounds(game)
    assert "\n" not in str(err.value)


def test_open_bids_have_no_rounds_to_solve_this_way() -> None:
    """With the bid made in view, the ordering nodes are decisions at phase 0 that play reaches:
    the check refuses them (the game is solved by retrograde analysis instead)."""
    game = make_game("petal", dict(petals=4, run=2, per_size=1, sequencing="open"))
    with pytest.raises(ValueError, match="does not raise the round phase"):
        solve_by_rounds(game)


def test_a_game_without_phases_is_refused() -> None:
    with pytest.raises(ValueError, match="names no round phases"):
        solve_by_rounds(make_game("override", dict(size=2, line=2, per_size=1)))


def test_one_sweep_is_not_converged() -> None:
    game = make_game("petal", dict(petals=4, run=2, per_size=2))
    rw = solve_by_rounds(game, max_sweeps=1)
    assert rw.stats["sweeps"] == 1 and not rw.converged


# --- random round games: cycles only through the secret choices -----------------------------

class NodeGame(Game):
    """A game given by :class:`tests.test_simultaneous.Node` rows (key = row), expanded in batch;
    its round phase is the row itself, which rises along every move between decision and chance
    nodes of :func:`round_game`."""

    name = "nodes"
    params = ()
    secret_choices = True
    chance = "in-play"

    def __init__(self, nodes: list[Node]) -> None:
        self.nodes = nodes
        super().__init__(make_variant("nodes", (), {}))

    def initial_state(self) -> int:
        return 0

    def node_kind(self, state: int) -> NodeKind:
        return NodeKind(self.nodes[state].kind)

    def to_move(self, state: int) -> int:
        return self.nodes[state].to_move

    def legal_actions(self, state: int) -> list[int]:
        return list(range(len(self.nodes[state].edges)))

    def apply(self, state: int, action: int) -> int:
        return self.nodes[state].edges[action][0]

    def outcome(self, state: int) -> Outcome:
        r = self.nodes[state].result
        mine = Result.WIN if r > 0 else Result.LOSS if r < 0 else Result.TIE
        other = {Result.WIN: Result.LOSS, Result.LOSS: Result.WIN, Result.TIE: Result.TIE}[mine]
        return Outcome((mine, other) if self.nodes[state].to_move == 0 else (other, mine))

    def encode(self, state: int) -> int:
        return state

    def decode(self, key: int) -> int:
        return key

    def expand(self, keys: np.ndarray, *, canonical: bool = False) -> Expansion:
        rows = [self.nodes[int(k)] for k in keys]
        offsets = np.zeros(len(rows) + 1, np.int64)
        offsets[1:] = np.cumsum([len(x.edges) for x in rows])
        return Expansion(
            kind=np.array([x.kind for x in rows], np.int8),
            to_move=np.array([x.to_move for x in rows], np.int8),
            offsets=offsets,
            children=np.array([c for x in rows for c, _ in x.edges], np.uint64),
            probs=np.array([p for x in rows for _, p in x.edges], np.float64),
            result=np.array([x.result if x.kind == T else 0 for x in rows], np.int8),
            margin=np.zeros(len(rows), np.int32),
            sim_rows=np.array([x.rows if x.kind == S else 0 for x in rows], np.int32),
        )

    def round_phase(self, keys: np.ndarray) -> np.ndarray:
        return np.asarray(keys, dtype=np.int64)


# (the seeds whose games take longest, and two thirds of the rest, are larger checks: make test-all)
@pytest.mark.parametrize("seed", seeds(12, slow=(3, 6, 10)))
def test_random_round_games_equal_the_round_engine(seed: int) -> None:
    rng = random.Random(seed)
    nodes = round_game(rng, 40)
    nodes[0] = Node(S, 0, edges=tuple((k, 1.0) for k in (1, 5, 9, 13)), rows=2) if nodes[0].kind != S else nodes[0]
    graph = build(nodes)
    ref = solve_rounds(graph, tol=1e-12)
    rw = solve_by_rounds(NodeGame(nodes), tol=1e-12, symmetry=False)
    assert rw.converged
    np.testing.assert_allclose(rw.value, ref.value[rw.keys.astype(np.int64)], rtol=0, atol=1e-8)
    for at, row in enumerate(rw.sims.tolist()):
        node = int(rw.keys[row])
        a = root_matrix(graph, ref.value, node)
        v = solve_matrix_game(a).value
        x, y = rw.mixes[0][at, : a.shape[0]], rw.mixes[1][at, : a.shape[1]]
        assert (x @ a).min() >= v - 1e-7 and (a @ y).max() <= v + 1e-7


# --- the work folder, the table, the commands -------------------------------------------------

P4 = dict(petals=4, run=2, per_size=2)
P4_MIXED = dict(petals=4, run=3, per_size=1)  # 534 round starts, 48 different mixes, value +0.300


@functools.lru_cache(maxsize=None)
def p4_mixed_whole(hold_moves: bool = True):
    """P4_MIXED solved round by round in one run (no work folder), once for the file's tests,
    which only read it (about 5 s a solve)."""
    return solve_by_rounds(make_game("petal", P4_MIXED), hold_moves=hold_moves)


def test_a_stopped_run_resumes_to_the_same_values(tmp_path) -> None:
    game = make_game("petal", P4)
    whole = solve_by_rounds(game)
    first = solve_by_rounds(game, max_sweeps=1, work=tmp_path / "w")
    assert first.stats["sweeps"] == 1 and not first.converged
    again = solve_by_rounds(game, work=tmp_path / "w")
    assert again.stats["resumed_at_sweep"] == 1 and again.stats["sweeps"] == whole.stats["sweeps"]
    assert np.array_equal(again.value, whole.value)
    assert sorted(p.name for p in (tmp_path / "w").glob("values.*.npy")) == [f"values.{whole.stats['sweeps']}.npy"]
    other = make_game("petal", dict(petals=4, run=2, per_size=1))
    with pytest.raises(ValueError, match="belongs to petal") as err:
        solve_by_rounds(other, work=tmp_path / "w")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("params", [P4, pytest.param(P4_MIXED, marks=pytest.mark.slow),
                                    dict(petals=4, run=2, per_size=1, opening="enter-large")])
def test_win_probabilities_equal_the_round_engine(params) -> None:
    """Under the stored strategies (mixes at the round starts, first best moves), from the round
    starts' own linear system: every position's win and loss probabilities as the round engine's
    exact solve finds them (its strategies earn the value here, endless play nowhere)."""
    game = make_game("petal", params)
    graph = enumerate_positions(game)
    ref = solve_rounds(graph, tol=1e-12)
    rw = solve_by_rounds(game, tol=1e-12)
    assert ref.stats["policy_gap"] < 1e-7  # (so the win probabilities do not depend on the tie-break)
    np.testing.assert_allclose(rw.p_win, ref.p_win, rtol=0, atol=1e-7)
    np.testing.assert_allclose(rw.p_loss, ref.p_loss, rtol=0, atol=1e-7)
    assert rw.stats["policy_gap"] < 1e-7
    assert solve_by_rounds(game, win_probabilities=False).p_win is None


def test_win_probabilities_count_endless_play_as_neither() -> None:
    """A round start whose every joint choice leads to a choice between coming back and a tie
    (the first of equal moves comes back): endless play, value 0 and no win or loss; a round
    start whose player to choose can win instead wins with probability 1, and one where the
    loser chooses comes back for ever."""
    loop = [Node(S, 0, edges=((1, 1.0),) * 4, rows=2), Node(D, 0, edges=((0, 1.0), (2, 1.0))), Node(T, 0, result=0)]
    rw = solve_by_rounds(NodeGame(loop), symmetry=False)
    assert rw.p_win is not None and rw.p_loss is not None
    assert rw.p_win[rw.root] == 0 and rw.p_loss[rw.root] == 0 and rw.value[rw.root] == 0
    assert rw.stats["policy_gap"] == 0
    won = [Node(S, 0, edges=((1, 1.0),) * 4, rows=2), Node(D, 0, edges=((0, 1.0), (2, 1.0))), Node(T, 0, result=1)]
    rw = solve_by_rounds(NodeGame(won), symmetry=False)
    assert rw.value[rw.root] == 1 and rw.p_win[rw.root] == 1 and rw.p_loss[rw.root] == 0
    held_off = [Node(S, 0, edges=((1, 1.0),) * 4, rows=2), Node(D, 1, edges=((2, 1.0), (0, 1.0))),
                Node(T, 1, result=-1)]
    rw = solve_by_rounds(NodeGame(held_off), symmetry=False)
    assert rw.value[rw.root] == 0 and rw.p_win[rw.root] == 0 and rw.p_loss[rw.root] == 0


@pytest.mark.slow  # (held moves on disk are also read by the resumed-run test below, against expanding)
def test_held_moves_give_the_same_iterates(tmp_path) -> None:
    """The moves kept by a run's first sweep (in memory, or in the work folder) and read by the
    others instead of expanding again: every value, move count and sweep count the same to the
    last bit as expanding every sweep."""
    game = make_game("petal", P4_MIXED)
    expanded = solve_by_rounds(game, hold_moves=False, chunk=700)
    assert expanded.stats["held_moves"] is None
    in_memory = solve_by_rounds(game, chunk=700)
    on_disk = solve_by_rounds(game, chunk=700, work=tmp_path / "w")
    for held in (in_memory, on_disk):
        assert held.stats["held_moves"] == expanded.stats["moves"] - sum(
            int(held.num_moves[r]) for r in held.sims.tolist())
        assert held.stats["sweeps"] == expanded.stats["sweeps"]
        assert np.array_equal(held.value, expanded.value)
        assert np.array_equal(held.num_moves, expanded.num_moves)
        assert held.stats["residual"] == expanded.stats["residual"]
    # the files are where the docstring says, and a run that finds them reads them
    assert (tmp_path / "w" / "moves.json").exists()
    assert not list((tmp_path / "w").glob(".*.tmp"))


@pytest.mark.slow  # (held moves in memory and on disk, equal to expanding, stay in make test)
def test_a_resumed_run_reads_the_held_moves_and_a_stale_set_is_rebuilt(tmp_path) -> None:
    import json

    game = make_game("petal", P4_MIXED)
    whole = p4_mixed_whole(False)
    first = solve_by_rounds(game, max_sweeps=2, work=tmp_path / "w")
    assert first.stats["held_moves"] > 0 and (tmp_path / "w" / "moves.json").exists()
    again = solve_by_rounds(game, work=tmp_path / "w")
    assert again.stats["resumed_at_sweep"] == 2 and np.array_equal(again.value, whole.value)
    # moves that do not match the sweeps' rows are not read: kept again, the same values
    meta = json.loads((tmp_path / "w" / "moves.json").read_text())
    (tmp_path / "w" / "moves.json").write_text(json.dumps({**meta, "rows": meta["rows"] + 1}))
    (tmp_path / "w" / "values.json").unlink()
    rebuilt = solve_by_rounds(game, work=tmp_path / "w")
    assert rebuilt.stats["resumed_at_sweep"] is None and np.array_equal(rebuilt.value, whole.value)
    assert json.loads((tmp_path / "w" / "moves.json").read_text())["rows"] == meta["rows"]
    # a run stopped while it kept the moves leaves no moves.json: the next run keeps them again
    calls = []

    def stop(stage, done, total, change):
        calls.append(stage)
        if stage == "sweep" and len(calls) > 3:
            raise KeyboardInterrupt

    (tmp_path / "w" / "values.json").unlink()
    (tmp_path / "w" / "moves.json").unlink()
    with pytest.raises(KeyboardInterrupt):
        solve_by_rounds(game, work=tmp_path / "w", progress=stop, chunk=500)
    assert not (tmp_path / "w" / "moves.json").exists()
    assert np.array_equal(solve_by_rounds(game, work=tmp_path / "w", chunk=500).value, whole.value)


@pytest.mark.parametrize("params", [P4_MIXED, pytest.param(dict(petals=6, run=3, per_size=1),
                                                          marks=pytest.mark.slow)])
def test_active_sweeps_give_the_same_iterates(params) -> None:
    """Sweeps through the parents of the positions that moved only (leaving that part, and
    finding it again, when a position outside it moves): every value, win probability and
    sweep count the same to the last bit as full sweeps, at several thresholds."""
    game = make_game("petal", params)
    full = solve_by_rounds(game, active_share=0)
    assert full.stats["active_sweeps"] == 0
    left = 0
    for share in (0.1, 0.3, 1.0):
        rw = solve_by_rounds(game, active_share=share)
        assert rw.stats["sweeps"] == full.stats["sweeps"]
        assert np.array_equal(rw.value, full.value) and np.array_equal(rw.p_win, full.p_win)
        assert rw.stats["full_sweeps"] + rw.stats["active_sweeps"] == rw.stats["sweeps"]
        left += rw.stats["active_left"]
    assert left > 0  # (the way out of the active part was taken)


@pytest.mark.slow  # (a stopped run resuming, and --bound-rounds resuming, stay in make test)
def test_an_unconverged_solve_keeps_its_work_folder_and_more_sweeps_resume(tmp_path) -> None:
    """A solve stopped by --max-sweeps writes its table (not converged, saying how to go on) and
    keeps the work folder: the same command with more sweeps resumes from the last sweep, ends
    with the same values as one run, and then removes it."""
    import json

    from solver.pipeline.roundwise import solve_variant, work_dir

    game = make_game("petal", P4_MIXED)
    whole = p4_mixed_whole()
    folder = tmp_path / "t"
    solve_variant(game, folder, max_sweeps=3)
    meta = json.loads((folder / "tiers.json").read_text())
    assert not meta["converged"] and "the same command resumes" in meta["not_certified_because"]
    assert json.loads((work_dir(folder) / "values.json").read_text())["sweeps"] == 3
    solve_variant(game, folder)
    meta = json.loads((folder / "tiers.json").read_text())
    assert meta["converged"] and meta["sweeps"] == whole.stats["sweeps"] and not work_dir(folder).exists()
    # through the API (as `pyramids solve`): the table on disk is not reused while its work folder is there
    from solver.api import solve

    out = tmp_path / "api"
    first = solve(game, out=out, tiered=True, max_sweeps=3)
    assert not first.meta["converged"]
    again = solve(game, out=out, tiered=True)
    assert again.meta["converged"] and again.meta["sweeps"] == whole.stats["sweeps"]
    assert not work_dir(again.path).exists()


def test_a_cycling_iteration_stops_and_says_so(tmp_path) -> None:
    """Two round starts whose one joint choice leads to each other: from iterates that differ
    there (as Petal Battle 8-2's sweeps reached them), the round starts' values swap every sweep
    for ever. The sweeps stop after CYCLE_SWEEPS equal largest changes, not converged, not
    certified, and the table says why."""
    import json

    from solver.pipeline import roundwise

    nodes = [Node(S, 0, edges=((1, 1.0),), rows=1), Node(S, 0, edges=((0, 1.0),), rows=1)]
    game = NodeGame(nodes)
    work = tmp_path / "t.roundwise"
    first = solve_by_rounds(game, symmetry=False, work=work)
    assert first.converged and first.stats["sweeps"] == 1 and not first.stats["cycling"]
    np.save(work / "values.1.npy", np.array([0.5, -0.5]))  # (iterates that differ on the loop)
    (work / "values.json").write_text(json.dumps({"positions": 2, "sweeps": 1, "file": "values.1.npy",
                                                  "change": 1.0}))
    rw = solve_by_rounds(game, symmetry=False, work=work)
    assert rw.stats["cycling"] and not rw.converged and not rw.stats["certified"]
    assert rw.stats["sweeps"] == 1 + roundwise.CYCLE_SWEEPS and rw.stats["last_sweep_change"] == 1.0
    roundwise.write_table(game, rw, tmp_path / "table", symmetry=False, run_id="x", seconds=0.0)
    meta = json.loads((tmp_path / "table" / "tiers.json").read_text())
    assert "value iteration cycles" in meta["not_certified_because"] and not meta["converged"]


def test_without_disk_room_every_sweep_expands(tmp_path, monkeypatch) -> None:
    from solver.pipeline import roundwise

    game = make_game("petal", P4)
    held = solve_by_rounds(game, work=tmp_path / "a")
    monkeypatch.setattr(roundwise, "MOVES_DISK_BYTES", 1 << 60)
    expanded = solve_by_rounds(game, work=tmp_path / "b")
    assert held.stats["held_moves"] > 0 and expanded.stats["held_moves"] is None
    assert not (tmp_path / "b" / "moves.bin").exists()
    assert np.array_equal(held.value, expanded.value)


def test_the_work_folder_keeps_how_the_iteration_converges(tmp_path) -> None:
    """``values.json`` keeps each sweep's largest change and the start's iterate, and the
    unfinished solve's message quotes the last ones (how far a long solve is, between runs)."""
    import json

    from solver.pipeline.roundwise import unfinished

    game = make_game("petal", P4_MIXED)
    whole = p4_mixed_whole(False)
    solve_by_rounds(game, max_sweeps=3, work=tmp_path / "t.roundwise")
    solve_by_rounds(game, max_sweeps=5, work=tmp_path / "t.roundwise")
    meta = json.loads((tmp_path / "t.roundwise" / "values.json").read_text())
    assert [h[0] for h in meta["history"]] == [1, 2, 3, 4, 5]
    assert all(h[1] > 0 for h in meta["history"]) and meta["change"] == meta["history"][-1][1]
    assert meta["start"] == meta["history"][-1][2] and abs(meta["start"] - whole.start_value) < 0.3
    text = unfinished(tmp_path / "t")
    assert "5 sweeps done" in text and f"{meta['start']:+.6f} for Player 1" in text and "\n" not in text


def test_the_table_answers_as_the_whole_graph_table(tmp_path) -> None:
    """`solve(..., tiered=True)` writes one file a round phase; every position looked up in it
    (a row at a time, as show and play read it) has the whole-graph table's value, and the round
    starts' mixes are optimal."""
    from solver.api import TieredSolution, solve

    game = make_game("petal", P4_MIXED)
    whole = solve(game, out=tmp_path / "whole", bounds=False)
    sol = solve(game, out=tmp_path / "rounds", tiered=True, bounds=False)  # (certified: a fixed point)
    assert isinstance(sol, TieredSolution)
    meta = sol.meta
    assert meta["tier_function"] == "round_phase" and meta["certified"] and meta["solver"] == "value_iteration (by rounds)"
    assert meta["counts"]["positions"] == whole.meta["counts"]["positions"]
    assert meta["counts"]["edges"] == whole.meta["counts"]["edges"]
    assert not (tmp_path / "rounds" / "petal" / (sol.path.name + ".roundwise")).exists()
    keys = whole.column("key")
    rng = np.random.default_rng(1)
    for i in rng.choice(len(keys), 60, replace=False).tolist() + [int(whole.row(game.initial_state()))]:
        state = game.decode(int(keys[i]))
        got, ref = sol.lookup(state), whole.value_at(i)
        assert got.expected == pytest.approx(ref.expected, abs=1e-9) and got.to_move == ref.to_move
        assert got.kind == ref.kind
    root = sol.root
    assert root.kind == "simultaneous" and root.strategies is not None
    rw = p4_mixed_whole()
    x, y = rw.mix_at(rw.root)
    assert list(root.strategies["1"].values()) == pytest.approx(x.tolist())
    assert list(root.strategies["2"].values()) == pytest.approx(y.tolist())
    table = sol.positions
    sim = table["kind"].to_numpy() == int(NodeKind.SIMULTANEOUS)
    assert np.array_equal(table["strategy_1"].is_not_null().to_numpy(), sim)
    stored = np.array(table.filter(pl.col("kind") == int(NodeKind.SIMULTANEOUS))["strategy_2"].to_list())
    assert np.allclose(stored, rw.mixes[1][:, : stored.shape[1]])
    assert root.expected == pytest.approx(whole.root.expected, abs=1e-9)
    assert root.p_win == pytest.approx(whole.root.p_win, abs=1e-7)
    assert root.p_loss == pytest.approx(whole.root.p_loss, abs=1e-7)
    assert meta["policy"]["policy_gap"] < 1e-7 and "win_probabilities" not in meta
    # the whole table read at once, as reports read it
    assert sol.positions.height == whole.positions.height
    assert np.array_equal(sol.positions["key"].to_numpy(), keys)
    for col in ("ply", "num_moves", "player", "kind"):
        assert np.array_equal(sol.positions[col].to_numpy().astype(np.int64),
                              whole.positions[col].to_numpy().astype(np.int64)), col


def test_the_commands_solve_show_and_report_the_table(tmp_path) -> None:
    import json
    import subprocess
    import sys

    sets = ["--set", "petals=4", "--set", "run=2", "--set", "per_size=1"]
    out = str(tmp_path / "t")
    run = lambda *a: subprocess.run([sys.executable, "-m", "solver.cli", *a], capture_output=True, text=True,  # noqa: E731
                                    timeout=600, cwd=str(tmp_path))
    r = run("solve", "petal", *sets, "--tiered", "--out", out, "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["solver"] == "value_iteration (by rounds)" and summary["certified"]
    assert summary["start"]["expected"] == pytest.approx(1.0) and summary["start"]["p_win"] == pytest.approx(1.0)
    assert summary["start"]["p_loss"] == pytest.approx(0.0) and "win_probabilities" not in summary
    assert summary["value_interval"] == [1.0, 1.0] and summary["bounds"]["closed"] == summary["positions"]
    r = run("solve", "petal", *sets, "--tiered", "--out", out)  # (the table reused, as text)
    assert r.returncode == 0 and "proven         the value lies in [+1.000000000, +1.000000000]" in r.stdout
    assert "cut off as a loss for player 1 after 2 rounds" in r.stdout
    r = run("show", "petal", *sets, "--out", out, "--json")
    assert r.returncode == 0, r.stderr
    shown = json.loads(r.stdout)
    assert shown["kind"] == "simultaneous" and len(shown["moves"]) == 36 and shown["value_interval"] == [1.0, 1.0]
    r = run("report", "petal", *sets, "--out", out, "--reports", str(tmp_path / "r"))
    assert r.returncode == 0, r.stderr
    text = next((tmp_path / "r").rglob("report.md")).read_text()
    assert "wins with probability 100" in text and "first secret choice" in text
    assert "cannot be computed" not in text and "Certified: every position's value is proven" in text
    assert "cut off after 2 rounds as a loss for Player 1" in text


def test_a_report_streams_through_the_phase_files(tmp_path, monkeypatch) -> None:
    """A table with too many moves to regenerate (Petal 8-2's 2.6e9) is read by the report as a
    scan of its files: every section still computes, the first secret choice included."""
    import solver.api as api
    from analysis.report import write_report

    monkeypatch.setattr(api, "EDGES_ON_DEMAND", 0)
    sol = api.solve(make_game("petal", P4), out=tmp_path / "t", tiered=True)
    assert sol.edges is None
    text = write_report(sol, tmp_path / "r").read_text()
    assert "first secret choice" in text and "Positions by ply" in text and "cannot be computed" not in text


def test_max_positions_refuses_a_large_round_by_round_solve_at_once(capsys, tmp_path) -> None:
    """Found by the fuzz test: `--max-positions` must hold round by round too (Petal 8-2's
    368M measured positions are refused before any work; an unmeasured variant's search stops)."""
    from solver.cli import main

    for argv, text in [(["--preset", "8-2"], "has 368,197,732 positions (measured), more than --max-positions"),
                       (["--preset", "6-2", "--tiered"], "has more than 20,000 positions")]:
        code = main(["solve", "petal", *argv, "--max-positions", "20000", "--out", str(tmp_path)])
        err = capsys.readouterr().err
        assert code == 2 and text in err and len(err.strip().splitlines()) == 1, err
    assert not any(tmp_path.rglob("*.npy"))


def test_petal_10_2_is_refused_at_once_saying_what_it_would_take(capsys, tmp_path) -> None:
    """Issue 31's preset ``10-2`` does not fit here: the whole-graph solver refuses it naming the
    round-by-round way, which refuses it too, in one line, with the memory, disk and time scaled
    from Petal Battle 8-2 against the free memory; nothing is written."""
    import time

    from solver.cli import main

    t0 = time.perf_counter()
    code = main(["solve", "petal", "--preset", "10-2", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "beyond exact solving here" in err and "--tiered solves it round by round" in err
    code = main(["solve", "petal", "--preset", "10-2", "--tiered", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    n = Petal.from_params(Petal.presets["10-2"]).estimated_positions()
    gb = 60 * n / 2**30
    assert f"about {gb:,.0f} GB of memory at its peak" in err and "GB of memory is free" in err
    assert "min a sweep" in err and "--ignore-estimate" in err
    assert time.perf_counter() - t0 < 30
    assert not any(p for p in tmp_path.rglob("*") if p.is_file())


def test_the_position_formula_errs_high_on_the_measured_presets() -> None:
    """``Petal.estimated_positions`` (what the refusals scale) is at least each preset's measured
    count, within a factor 2.5 (the measured counts are independent: breadth-first searches)."""
    from solver.pipeline import measured

    checked = 0
    for preset in Petal.presets:
        entry = measured.of("petal", preset)
        if entry is None or entry.positions is None:
            continue
        est = Petal.from_params(Petal.presets[preset]).estimated_positions()
        assert entry.positions <= est <= 2.5 * entry.positions, preset
        checked += 1
    assert checked >= 1


def test_needs_scales_petal_8_2s_measured_run() -> None:
    from solver.pipeline import roundwise

    text = roundwise.needs(368_197_732)  # Petal 8-2 itself: about its measured sweep and memory
    assert "about 1 min a sweep" in text and "about 21 GB of memory" in text
    assert "about 20 min a sweep" in roundwise.needs(24 * 368_197_732)  # (50 s x 24)


# --- proven bounds: the game cut off as a loss, and as a win, for Player 1 -------------------

def _interval(rw) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = rw.interval()
    return np.asarray(lo), np.asarray(hi)


def test_the_guaranteed_values_bracket_each_matrix_games_value() -> None:
    """``guarantee``: what player 0's optimal mix guarantees against every column is at most the
    game's value, what player 1's concedes at least, both equal to it within the LP's precision."""
    from solver.engines.simultaneous import Counters, SimBlock

    rng = np.random.default_rng(3)
    k, r, c = 200, 3, 4
    values = rng.normal(size=k * r * c)
    child = np.arange(k * r * c) + k  # (node i's moves: its r x c matrix's entries)
    value = np.concatenate([np.zeros(k), values])
    to_move = np.zeros(len(value), np.int8)
    offsets = np.arange(k + 1) * r * c
    block = SimBlock(np.arange(k), offsets, np.full(k, r), np.full(k, r * c))
    exact = np.array([solve_matrix_game(values[i * r * c:(i + 1) * r * c].reshape(r, c)).value for i in range(k)])
    got = {g: block.solve(value, child, to_move, Counters(), guarantee=g) for g in (None, "lower", "upper")}
    assert np.all(got["lower"] <= exact + 1e-12) and np.all(got["upper"] >= exact - 1e-12)
    np.testing.assert_allclose(got["lower"], exact, atol=1e-9)
    np.testing.assert_allclose(got["upper"], exact, atol=1e-9)
    np.testing.assert_allclose(got[None], exact, atol=1e-12)


def test_bounds_on_hand_built_games_where_endless_play_counts() -> None:
    """Endless play counts 0 in the game: a side that can keep play going makes the game cut off
    as a loss and as a win differ, and the interval says so; where play must end, it closes."""
    won = [Node(S, 0, edges=((1, 1.0),) * 4, rows=2), Node(D, 0, edges=((0, 1.0), (2, 1.0))), Node(T, 0, result=1)]
    rw = solve_by_rounds(NodeGame(won), symmetry=False, bounds=True)
    assert _interval(rw)[0][rw.root] == 1 and _interval(rw)[1][rw.root] == 1
    assert rw.stats["bounds"]["width"] == 0 and rw.stats["bounds"]["crossed"] == 0
    # Player 2 can stay away from his loss for ever: the value is 0; cut off as Player 1's loss,
    # Player 2 stays (-1); as his win, Player 2 is indifferent (+1)
    held_off = [Node(S, 0, edges=((1, 1.0),) * 4, rows=2), Node(D, 1, edges=((2, 1.0), (0, 1.0))),
                Node(T, 1, result=-1)]
    rw = solve_by_rounds(NodeGame(held_off), symmetry=False, bounds=True)
    lo, hi = _interval(rw)
    assert (lo[rw.root], hi[rw.root]) == (-1.0, 1.0) and rw.value[rw.root] == 0
    assert rw.stats["bounds"]["start_player1"] == [-1.0, 1.0]
    # Player 1 chooses between a tie and coming back: the value is 0 (the tie, or endless play);
    # cut off as his loss he takes the tie (0), as his win he comes back (+1)
    loop = [Node(S, 0, edges=((1, 1.0),) * 4, rows=2), Node(D, 0, edges=((0, 1.0), (2, 1.0))), Node(T, 0, result=0)]
    rw = solve_by_rounds(NodeGame(loop), symmetry=False, bounds=True)
    lo, hi = _interval(rw)
    assert (lo[rw.root], hi[rw.root]) == (0.0, 1.0)
    # a decision node of Player 2 (own view): its interval is the side to move's, Player 1's negated
    row = int(np.flatnonzero(rw.keys == 1)[0])
    lo2, hi2 = _interval(solve_by_rounds(NodeGame(held_off), symmetry=False, bounds=True))
    assert (lo2[row], hi2[row]) == (-1.0, 1.0)


@pytest.mark.parametrize("seed", seeds(8, slow=(2, 3)))
def test_bounds_meet_the_whole_graph_proven_bounds(seed: int) -> None:
    """Two independent proofs of the same values: the cut-off bounds round by round and the
    whole graph's best-reply bounds (solver.engines.bounds) must overlap at every position, and
    each iteration's lower bound lies below its upper bound."""
    from solver.pipeline.whole import solve_graph

    rng = random.Random(100 + seed)
    nodes = round_game(rng, 40)
    nodes[0] = Node(S, 0, edges=tuple((k, 1.0) for k in (1, 5, 9, 13)), rows=2) if nodes[0].kind != S else nodes[0]
    game = NodeGame(nodes)
    graph = enumerate_positions(game, symmetry=False)
    cols, extra, _ = solve_graph(game, graph, bound_rounds=4)
    rw = solve_by_rounds(game, symmetry=False, bounds=True)
    assert np.array_equal(rw.keys, np.asarray(graph.keys))
    lo, hi = _interval(rw)
    assert rw.stats["bounds"]["crossed"] == 0 and np.all(lo <= hi + 1e-12)
    assert np.all(np.maximum(lo, cols["value_lo"]) <= np.minimum(hi, cols["value_hi"]) + 1e-9)
    # where the whole graph's interval closed, ours holds that value
    shut = cols["value_hi"] - cols["value_lo"] <= 1e-9
    assert np.all(lo[shut] <= cols["value_hi"][shut] + 1e-9) and np.all(hi[shut] >= cols["value_lo"][shut] - 1e-9)


def test_petal_4_bounds_hold_the_whole_graph_bounds_and_the_table_keeps_them(tmp_path) -> None:
    """Petal Battle 4 (run 3: players can keep play going): the intervals overlap the whole
    graph's proven ones at every position; the table stores them (``value_lo``/``value_hi``, the
    value moved into them), says how wide they are, and ``show`` and the report quote them."""
    import json

    from solver.api import TieredSolution, solve

    game = make_game("petal", P4_MIXED)
    whole = solve(game, out=tmp_path / "whole")  # (with its own proven bounds)
    sol = solve(game, out=tmp_path / "rounds", tiered=True)
    assert isinstance(sol, TieredSolution)
    table = sol.positions.sort("key")
    assert np.array_equal(table["key"].to_numpy(), whole.column("key"))
    lo, hi = table["value_lo"].to_numpy(), table["value_hi"].to_numpy()
    wlo, whi = whole.column("value_lo"), whole.column("value_hi")
    assert np.all(lo <= hi) and np.all(np.maximum(lo, wlo) <= np.minimum(hi, whi) + 1e-9)
    value = table["value"].to_numpy()
    assert np.all((value >= lo) & (value <= hi))
    meta = sol.meta
    assert not meta["certified"] and "the proven intervals are up to" in meta["not_certified_because"]
    assert meta["bounds"]["proven"] and meta["value_interval"][0] < sol.root.expected < meta["value_interval"][1]
    assert sol.root.value_interval == pytest.approx(tuple(meta["value_interval"]))
    assert not (tmp_path / "rounds" / "petal" / (sol.path.name + ".roundwise")).exists()  # (both converged)
    from analysis.report import _proof_sentence

    text = _proof_sentence(meta)
    assert text.startswith("Not certified everywhere") and "cut off after" in text and "--bound-rounds" not in text
    assert json.loads((sol.path / "tiers.json").read_text())["bounds"]["method"].startswith("truncation")


@pytest.mark.slow  # (Petal 4's bounds against the whole graph's stay in make test)
def test_petal_6_bounds_close_everywhere() -> None:
    """Petal Battle 6: both cut-off games converge to one value at every position, the value
    iteration's, +1/3 at the start (as the whole graph's best-reply bounds prove it, in the
    shipped report): proven round by round in seconds."""
    rw = solve_by_rounds(make_game("petal", petals=6, run=3, per_size=1), bounds=True)
    lo, hi = _interval(rw)
    b = rw.stats["bounds"]
    assert b["closed"] == len(rw.keys) and b["width"] <= 1e-9 and b["converged_lower"] and b["converged_upper"]
    assert np.all(np.abs(rw.value - lo) <= 1e-9) and np.all(np.abs(rw.value - hi) <= 1e-9)
    assert b["start_player1"] == pytest.approx([1 / 3, 1 / 3], abs=1e-9)


@pytest.mark.slow  # (a larger --bound-rounds resuming the bounds stays in make test)
def test_stopped_bounds_resume_to_the_same_bounds(tmp_path) -> None:
    """The bounds' sweeps are kept in the work folder like the values' (``lower``/``upper``): a
    run stopped after 3 sweeps of each resumes to the bounds of a run never stopped."""
    import json

    game = make_game("petal", P4_MIXED)
    whole = solve_by_rounds(game, bounds=True)
    work = tmp_path / "t.roundwise"
    first = solve_by_rounds(game, bounds=True, max_sweeps=3, work=work)
    assert first.stats["bounds"]["sweeps_lower"] == 3 and not first.stats["bounds"]["converged_lower"]
    assert json.loads((work / "upper.json").read_text())["sweeps"] == 3
    rw = solve_by_rounds(game, bounds=True, work=work)
    assert rw.stats["bounds"]["converged_lower"] and rw.stats["bounds"]["converged_upper"]
    for a, b in zip(_interval(rw), _interval(whole)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-8)


def test_a_killed_runs_temporary_files_go(tmp_path) -> None:
    """A run killed while writing its values leaves ``.values.<k>.npy.<pid>.tmp`` (2.9 GB on Petal
    8-2): the next run on the folder removes it, not one of a process still running."""
    import os
    import subprocess
    import sys

    work = tmp_path / "t.roundwise"
    work.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    stale, live = work / f".values.3.npy.{dead}.tmp", work / f".values.3.npy.{os.getpid()}.tmp"
    stale.write_bytes(b"x")
    live.write_bytes(b"x")
    solve_by_rounds(make_game("petal", P4), work=work, max_sweeps=1)
    assert not stale.exists() and live.exists()


def test_a_table_without_bounds_is_solved_again_when_they_are_asked(tmp_path) -> None:
    """`--no-bounds` then the default: the table on disk has no proven bounds, so it is not
    reused (a note says why) and the new one has them; asked without bounds again, it is reused."""
    from solver.api import solve

    game = make_game("petal", P4)
    first = solve(game, out=tmp_path, tiered=True, bounds=False)
    assert "bounds" not in first.meta and "value_lo" not in first.positions.columns
    notes: list[str] = []
    second = solve(game, out=tmp_path, tiered=True, notes=notes)
    assert any("no proven bounds" in n for n in notes) and second.meta["bounds"]["proven"]
    assert second.meta["solve_id"] != first.meta["solve_id"]
    third = solve(game, out=tmp_path, tiered=True, bounds=False)
    assert third.meta["solve_id"] == second.meta["solve_id"]


def test_bound_rounds_caps_the_bounds_sweeps_and_a_larger_cap_resumes(tmp_path) -> None:
    """Round by round, `--bound-rounds N` is the most rounds each bound cuts the game off after:
    stopped there the table says to raise it, and the same command with a larger N resumes."""
    from solver.api import solve

    game = make_game("petal", P4_MIXED)
    first = solve(game, out=tmp_path, tiered=True, bound_rounds=5)
    b = first.meta["bounds"]
    assert b["sweeps_lower"] == 5 and b["sweeps_upper"] == 5 and not b["converged_lower"]
    assert "raise --bound-rounds" in first.meta["not_certified_because"]
    work = first.path.with_name(first.path.name + ".roundwise")
    assert work.exists()
    # the same cap again adds nothing: the table is used as it is, not solved again
    notes: list[str] = []
    same = solve(game, out=tmp_path, tiered=True, bound_rounds=5, notes=notes)
    assert same.meta["solve_id"] == first.meta["solve_id"], notes
    # looking at it (show, play, report: resume=False) never sweeps on, and says how to go on
    notes = []
    looked = solve(game, out=tmp_path, tiered=True, resume=False, notes=notes)
    assert looked.meta["solve_id"] == first.meta["solve_id"]
    assert any("the lower bound stopped at 5 rounds, fewer than the 100 asked" in n
               and "resumes its work folder" in n for n in notes), notes
    # the same through `pyramids show` (a user looking at the table)
    import contextlib
    import io
    import json

    from solver.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main(["show", "petal", *[f"--set={k}={v}" for k, v in P4_MIXED.items()], "--out", str(tmp_path)]) == 0
    assert "the table on disk is used as it is" in err.getvalue()
    assert json.loads((first.path / "tiers.json").read_text())["solve_id"] == first.meta["solve_id"]
    second = solve(game, out=tmp_path, tiered=True, bound_rounds=500)
    b = second.meta["bounds"]
    assert b["converged_lower"] and b["converged_upper"] and 5 < b["sweeps_lower"] < 500
    assert not work.exists()


def test_to_resume_says_what_the_work_folder_would_add(tmp_path) -> None:
    """``to_resume`` compares the work folder's sweeps with the table's: nothing to add at the
    limits the table stopped at; more values or bound sweeps in the folder than in the table (a
    run killed after a sweep, before its table) or a larger limit are named."""
    import json

    from solver.pipeline.roundwise import solve_variant, to_resume

    game = make_game("petal", P4_MIXED)
    folder = tmp_path / "t"
    solve_variant(game, folder, max_sweeps=3, bound_sweeps=2)
    meta = json.loads((folder / "tiers.json").read_text())
    assert to_resume(folder, meta, tol=1e-12, max_sweeps=3, bound_sweeps=2) is None
    assert "the values stopped at 3 sweeps" in to_resume(folder, meta, tol=1e-12, max_sweeps=4, bound_sweeps=2)
    assert to_resume(folder, meta, tol=1e-12, max_sweeps=3, bounds=False) is None
    assert "lower bound stopped at 2 rounds, fewer than the 3 asked" in to_resume(folder, meta, tol=1e-12,
                                                                                   max_sweeps=3, bound_sweeps=3)
    older = {**meta, "sweeps": 2}
    assert "holds 3 sweeps of the values, the table 2" in to_resume(folder, older, tol=1e-12, max_sweeps=3,
                                                                    bound_sweeps=2)
    older = {**meta, "bounds": {**meta["bounds"], "sweeps_upper": 1}}
    assert "holds 2 sweeps of the upper bound, the table 1" in to_resume(folder, older, tol=1e-12, max_sweeps=3,
                                                                          bound_sweeps=2)
