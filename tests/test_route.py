"""Routing (issue 31, item 2): one function, :func:`solver.pipeline.route.route`, decides whole
graph, tiers or setup sweep and the engine, for ``pyramids solve`` and :func:`solver.api.solve`
alike; the whole-graph solver runs the engine it names and refuses a graph its game's
declaration does not cover."""

from __future__ import annotations

import numpy as np
import pytest

from solver import api
from solver.api import make_game, solve
from solver.engines.enumerate import enumerate_positions
from solver.errors import ProtocolError, VariantError
from solver.games import game_class
from solver.pipeline import tasks
from solver.pipeline.route import ENGINES, KINDS, Route, engine_of, route
from solver.pipeline.whole import graph_engine, solve_graph
from tests.test_tasks import G33_3, _same_setups, _same_summary
from tests.toygames import DiceRace


def preset(name: str, which: str):
    return make_game(name, game_class(name).presets[which])


#: (game, preset) -> (kind, engine) of a default solve
EXPECTED = {
    ("override", "3x3"): ("whole", "retrograde"),
    ("override", "3x3-2"): ("tiers", "retrograde"),
    ("greener", "3x3"): ("whole", "retrograde"),
    ("blam", "3x3"): ("whole", "retrograde"),
    ("blam", "3x3-3p"): ("whole", "retrograde"),
    ("blam", "4x4-2"): ("tiers", "retrograde"),
    ("petal", "6"): ("whole", "secret-choice"),
    ("petal", "8"): ("whole", "secret-choice"),
    ("petal", "8-2"): ("rounds", "secret-choice"),
    ("carrots", "3x3"): ("whole", "value-iteration"),
    ("carrots", "4x4"): ("tiers", "value-iteration"),
}


@pytest.mark.parametrize("name,which", sorted(EXPECTED))
def test_presets_route_by_declaration_and_measured_size(name, which):
    r = route(preset(name, which))
    assert isinstance(r, Route) and r.kind in KINDS and r.engine in ENGINES
    assert (r.kind, r.engine) == EXPECTED[name, which]
    assert r.why and "\n" not in r.why and len(r.why) < 120


def test_why_names_the_reason():
    assert route(preset("override", "3x3-2")).why.startswith("tier by tier: too large for the whole graph (")
    assert route(preset("override", "3x3")).why == "whole graph in memory"


def test_greener_4x4_random_setup_is_a_sweep():
    g = make_game("greener", rows=4, cols=4, black=4, white=4, setup="all")
    r = route(g)
    assert (r.kind, r.engine) == ("sweep", "retrograde")
    assert "900,900 arrangements" in r.why
    # a caller that needs a Solution does not sweep
    assert route(g, sweep=False).kind == "whole"


def test_small_random_setup_sweeps_only_when_asked():
    g = make_game("greener", G33_3)
    assert route(g).kind == "whole"
    r = route(g, sweep_options={"jobs": 1, "scheduler": None})
    assert r.kind == "sweep" and r.why.endswith("asked for by --jobs")
    assert route(g, sweep_options={"setup_limit": 3}).kind == "sweep"
    assert route(g, tiered=True, sweep_options={"batch": 2}).kind == "sweep"  # as the CLI did
    assert route(g, sweep=True).kind == "sweep"


def test_carrots_tiered_is_value_iteration_tiers():
    r = route(preset("carrots", "3x3"), tiered=True)
    assert (r.kind, r.engine) == ("tiers", "value-iteration")
    assert route(preset("override", "3x3-2"), tiered=False).kind == "whole"


def test_tiered_on_petal_is_round_by_round():
    """Petal Battle names its round phases: --tiered solves it round by round from its keys,
    one table file a phase; a secret-choice game without phases is refused."""
    r = route(preset("petal", "6"), tiered=True)
    assert (r.kind, r.engine) == ("rounds", "secret-choice") and "asked for (--tiered)" in r.why
    assert route(preset("petal", "8-2")).why.startswith("round by round from the keys: too large")
    assert route(preset("petal", "8-2"), tiered=False).kind == "whole"
    with pytest.raises(VariantError, match="drop them"):
        route(preset("petal", "6"), tiered=True, sweep_options={"jobs": 2})

def test_tiered_random_setup_is_the_union_of_its_setups():
    """--tiered on a random setup solves every setup's positions together, tier by tier, by
    retrograde (issue 35), even where the default is a sweep; options only a sweep takes still
    ask for the sweep."""
    r = route(make_game("greener", G33_3), tiered=True)
    assert (r.kind, r.engine) == ("tiers", "retrograde")
    g44 = make_game("greener", rows=4, cols=4, black=4, white=4, setup="all")
    assert route(g44).kind == "sweep" and route(g44, tiered=True).kind == "tiers"
    assert route(g44, tiered=True, sweep_options={"jobs": 2}).kind == "tiers"
    assert route(g44, tiered=True, sweep_options={"setup_limit": 5}).kind == "sweep"


def test_sweep_options_on_override_are_refused():
    g = preset("override", "3x3")
    with pytest.raises(VariantError, match="--setup-limit and --batch are for random setups"):
        route(g, sweep_options={"setup_limit": 2})
    with pytest.raises(VariantError, match="is solved whole, in this process"):
        route(g, sweep_options={"jobs": 2})
    with pytest.raises(VariantError, match="cannot be swept by setups"):
        route(g, sweep=True)
    # jobs run the tiers of a tiered solve
    assert route(g, tiered=True, sweep_options={"jobs": 2}).kind == "tiers"
    with pytest.raises(TypeError):
        route(g, sweep_options={"job": 2})


def test_want_tiered_is_the_routes_answer():
    for name, which in EXPECTED:
        g = preset(name, which)
        assert api.want_tiered(g, None) == (route(g).kind in ("tiers", "rounds"))  # (out of core)


def test_engine_of_follows_the_declarations():
    assert engine_of(preset("petal", "6")) == "secret-choice"
    assert engine_of(preset("carrots", "3x3"), "tiers") == "value-iteration"
    assert engine_of(make_game("greener", G33_3)) == "retrograde"  # below the setups
    assert engine_of(DiceRace.from_params({})) == "value-iteration"


def test_solve_graph_refuses_a_graph_its_declaration_does_not_cover():
    g = DiceRace.from_params({})
    graph = enumerate_positions(g)
    assert graph_engine(graph) == "value-iteration"
    with pytest.raises(ProtocolError, match=r"dice during play.*set chance = 'in-play' on the class"):
        solve_graph(g, graph, engine="retrograde")
    cols, meta, _ = solve_graph(g, graph, engine="value-iteration")
    assert meta["solver"] == "value_iteration"
    with pytest.raises(ValueError, match="unknown engine"):
        solve_graph(g, graph, engine="alpha-beta")


def test_a_variant_without_the_declared_nodes_is_solved_by_retrograde():
    """Petal Battle declares secret choices; with open sequencing it has none: retrograde."""
    g = make_game("petal", petals=4, run=2, per_size=1, sequencing="open")
    graph = enumerate_positions(g)
    assert route(g).engine == "secret-choice" and graph_engine(graph) == "retrograde"
    _, meta, _ = solve_graph(g, graph, engine="secret-choice")
    assert meta["solver"] == "retrograde"


def test_api_solve_sweeps_a_random_setup_as_the_whole_graph_solve_does(tmp_path):
    game = make_game("greener", G33_3)
    whole = solve(game, out=tmp_path / "whole")
    assert isinstance(whole, api.Solution)
    notes: list[str] = []
    res = solve(game, out=tmp_path / "sweep", jobs=1, notes=notes)
    assert isinstance(res, tasks.SweepResult)
    assert res.solved_now == tasks.setup_classes(game).classes
    table, meta = api.read_sweep(game, out=tmp_path / "sweep")
    assert meta["complete"]
    _same_setups(table, whole.setups)
    _same_summary(table, whole.setups)
    assert meta["summary"]["expected"] == pytest.approx(whole.meta["expected_result"], abs=1e-12)
    # sweep=False: the whole graph, as before (a Solution)
    again = solve(game, out=tmp_path / "whole", sweep=False)
    assert isinstance(again, api.Solution) and np.array_equal(again.column("key"), whole.column("key"))


def test_one_tier_worker_dispatches_on_the_declared_engine(tmp_path, monkeypatch):
    """solve_tier_task runs the worker of the engine the declarations name, and refuses in one
    line an engine without one (secret choices: Petal Battle is one strongly connected
    component, which no tier can split)."""
    from solver.errors import ProtocolError
    from solver.pipeline import tiered
    from solver.pipeline.capabilities import engine_of

    assert set(tiered.TIER_WORKERS) == {"retrograde", "value-iteration"}
    assert engine_of(preset("petal", "6"), "tiers") == "secret-choice"
    calls = []
    monkeypatch.setitem(tiered.TIER_WORKERS, "value-iteration", lambda run, info: calls.append(info) or {})
    game = DiceRace.from_params({})
    run = tiered.Run(game, tmp_path / "v", tmp_path / "w", True, "id")
    info = tiered.TierInfo(0, 1, [])
    assert tiered.solve_tier_task(run, info) == {} and calls == [info]
    run = tiered.Run(preset("petal", "6"), tmp_path / "v", tmp_path / "w", True, "id")
    with pytest.raises(ProtocolError, match="secret-choice engine has no tier worker"):
        tiered.solve_tier_task(run, info)
