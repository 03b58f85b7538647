"""Issue 33: long steps say what they do on a standard error that is not a terminal (fault 6),
and the scored margins of a whole graph take one attractor sweep per side (fault 8)."""

from __future__ import annotations

import numpy as np
import pytest

from solver.engines import _retro_jit
from solver.engines import retrograde as R
from solver.engines.enumerate import enumerate_positions
from solver.engines.pipeline import solve_graph
from solver.games import make_game


# --- fault 8: margins by one sweep per side ------------------------------------------------------

def _counting(monkeypatch) -> list[int]:
    """Count the threshold passes (:func:`_retro_jit.can_force_at_least`) run from now on."""
    calls: list[int] = []
    real = _retro_jit.can_force_at_least

    def counted(*args):
        calls.append(int(args[-1]))
        return real(*args)

    monkeypatch.setattr(_retro_jit, "can_force_at_least", counted)
    return calls


@pytest.mark.parametrize("params", [
    {"rows": 3, "cols": 3, "per_size": 1},  # two players, cyclic (pyramids return to their owner)
    {"rows": 2, "cols": 3, "players": 3, "per_size": 1},  # paranoid: each seat's two-sided view
])
def test_blam_margins_take_no_threshold_pass_and_equal_the_passes(monkeypatch, params):
    """Blam! 3x3-3p spent 43 of its 60 s of solving in 72 threshold passes (3 seats x 24
    candidate margins). The solve now runs none, and its margins are those of the passes."""
    game = make_game("blam", **params)
    graph = enumerate_positions(game)
    calls = _counting(monkeypatch)
    cols, _, _ = solve_graph(game, graph)
    assert calls == []
    margin_cols = sorted(c for c in cols if c.endswith("margin"))
    assert margin_cols, cols.keys()

    def by_passes(graph, same, roffsets, redge, src, terminal):
        return R._threshold_margins(graph, same, roffsets, redge, src, terminal)

    monkeypatch.setattr(R, "_margins_sweep", by_passes)
    reference, _, _ = solve_graph(game, graph)
    assert len(calls) > 2 * len(margin_cols)  # the reference did run its passes
    for c in margin_cols:
        assert np.array_equal(cols[c], reference[c]), c
