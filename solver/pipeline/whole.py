"""The solve pipeline: choose an engine (tiered or whole-graph; retrograde, value iteration, the
secret-choice engine), run it, and write the variant's tables. :mod:`solver.api` (``solve``), the
CLI and the benchmark all go through here; ``solver.api`` keeps the checks (tolerance, size,
reuse of a table on disk) and the lookups.

* :func:`solve_variant`: the whole graph in memory (enumerate, :func:`solve_graph`, write the
  positions/edges/setups tables atomically).
* :func:`solve_tiered_variant`: tier by tier, out of core (:mod:`solver.pipeline.tiered`).
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import numpy as np
import polars as pl

import solver
from solver.core.arrays import ranges
from solver.core.game import Game, NodeKind, Result
from solver.core.progress import Task, session
from solver.core.values import DRAW, FLIP, NO_REMOTENESS, VALUE_NAMES
from solver.engines.enumerate import Graph, enumerate_positions
from solver.errors import ProtocolError, TooBigError
from solver.faults import fault_point
from solver.pipeline.setups import setup_multiplicities, setups_frame
from solver.tables import EDGES, POSITIONS, mix_column, positions_frame, write_variant

SETUPS = "setups.parquet"

#: win probabilities further than this from the value are not earned by the stored strategies
P_WIN_GAP = 1e-6

#: default sweep limit of value iteration with secret simultaneous choices: their values can
#: converge like 1/n (Everett's recursive games), so an unbounded run could take hours; a run
#: stopped here is stored as not certified (the proven bounds say what is known)
MAX_SWEEPS_SIMULTANEOUS = 2_000

#: rounds of better strategies the secret-choice engine tries, after evaluating value
#: iteration's, to narrow the proven intervals (``None``: no bounds, the iterate only)
BOUND_ROUNDS = 4


def solve_variant(
    game: Game, folder: Path, *, symmetry: bool = True, max_positions: int | None = None,
    progress: bool | str = False, write_edges: bool = True, tol: float = 1e-12, max_sweeps: int | None = None,
    engine: str | None = None, bound_rounds: int | None = BOUND_ROUNDS,
) -> tuple[pl.DataFrame, dict[str, Any], pl.DataFrame | None, pl.DataFrame | None]:
    """Enumerate, solve and write ``game``'s tables into ``folder`` (atomically); returns
    ``(positions, meta, edges or None, setups or None)``. ``progress``: ``True`` tqdm bars,
    ``"lines"`` a line every 10 s on standard error (:mod:`solver.core.progress`), ``False``
    nothing. ``engine``: the route's (:func:`solver.pipeline.route.route`), see
    :func:`solve_graph`; ``bound_rounds`` as there."""
    with session(progress):
        t0 = time.perf_counter()
        with Task("enumerate", progress, done=0, unit="positions", unit_scale=True) as found:
            def on_ply(ply: int, total: int, frontier: int) -> None:
                found.update(total, note=f"ply {ply}, frontier {frontier:,}")

            def on_assembly(done: int, total: int) -> None:
                found.update(total, note=f"moves linked for {done:,} of {total:,} positions")

            graph = enumerate_positions(game, symmetry=symmetry, max_positions=max_positions,
                                        progress=on_ply if progress else None,
                                        assembling=on_assembly if progress else None)
        t_enum = time.perf_counter() - t0
        fault_point("solve")
        columns, extra_meta, setups = solve_graph(game, graph, progress=progress, tol=tol,
                                                  max_sweeps=max_sweeps, engine=engine,
                                                  bound_rounds=bound_rounds)
        t_solve = time.perf_counter() - t0 - t_enum
        fault_point("solved")
        elapsed = time.perf_counter() - t0
        with Task("write tables", progress, note=f"{graph.n:,} positions", bar=False):
            positions = positions_frame_of(graph, columns)
            edges = edges_frame(graph) if write_edges else None
            meta = table_meta(game, graph, positions, symmetry=symmetry, elapsed=elapsed,
                              timings={"enumerate": t_enum, "solve": t_solve}, extra=extra_meta)
            frames = {POSITIONS: positions}
            if edges is not None:
                frames[EDGES] = edges
            if setups is not None:
                frames[SETUPS] = setups
            write_variant(folder, frames, meta)
        meta["write_seconds"] = time.perf_counter() - t0 - elapsed
        return positions, meta, edges, setups


def solve_tiered_variant(game: Game, *, out: str | Path | None, symmetry: bool, force: bool,
                         max_positions: int | None, workers: int | None, progress: bool | str,
                         notes: list[str], check: bool = True,
                         announce: Callable[[str], None] | None = None,
                         low_memory: bool | None = None, jobs: int | None = None,
                         scheduler: str | None = None, tol: float = 1e-12,
                         max_sweeps: int | None = None, tier_slices: int = 1) -> Path:
    """Solve ``game`` tier by tier (resuming an unfinished run); returns its table folder.
    ``check``: refuse at once when the size estimate does not fit the machine. A game that ranks
    its tiers has the hook checked on sampled positions first (:func:`solver.core.ranking.refuse_broken_ranking`). With ``jobs`` or
    ``scheduler`` the tiers of each height are Dask tasks (:mod:`solver.pipeline.tasks`)."""
    from solver.core.ranking import refuse_broken_ranking
    from solver.pipeline.tiered import solve_tiered

    refuse_broken_ranking(game)  # (a game whose tiers are ranked: the hook checked before any work)
    cluster = None
    if jobs is not None or scheduler is not None:
        from solver.pipeline import tasks

        cluster = tasks.connect(scheduler, jobs, spec=tasks.game_spec(game))
    try:
        return solve_tiered(game, out=out, symmetry=symmetry, force=force, max_positions=max_positions,
                            workers=workers, progress=progress, notes=notes, check=check,
                            announce=announce, low_memory=low_memory, cluster=cluster, tol=tol,
                            max_sweeps=max_sweeps, tier_slices=tier_slices)
    finally:
        if cluster is not None:
            cluster.close()


def solve_rounds_variant(game: Game, folder: Path, *, symmetry: bool, force: bool, tol: float,
                         max_sweeps: int | None, workers: int | None, progress: bool | str,
                         announce: Callable[[str], None] | None = None, notes: list[str] | None = None,
                         check: bool = True, max_positions: int | None = None, bounds: bool = True,
                         bound_sweeps: int | None = None) -> Path:
    """Solve a secret-choice game round by round from its keys (:mod:`solver.pipeline.roundwise`)
    into the table ``folder``, resuming its work folder; the size estimate is announced first
    (measured presets) and, with ``check``, a variant whose estimate does not fit the free memory
    is refused in one line before any work."""
    from solver.errors import TooBigError
    from solver.pipeline import memory, roundwise
    from solver.pipeline.measured import of_game

    entry = of_game(game)
    if max_positions and entry is not None and entry.positions is not None and entry.positions > max_positions:
        raise TooBigError(f"{game.variant.label()} has {entry.positions:,} positions (measured), more than "
                          f"--max-positions {max_positions:,}; raise it, or give 0 for no limit")
    if entry is not None and entry.positions is not None:
        need = roundwise.estimate_bytes(entry.positions)
        line = (f"{game.variant.label()}: {entry.positions:,} positions (measured); solved round by round "
                f"from its keys: about {need / 2**30:.1f} GB at the search's peak, "
                f"{roundwise.SWEEP_BYTES * entry.positions / 2**30:.1f} GB while it sweeps; the first sweep keeps "
                f"every move in the work folder (up to {roundwise.MOVES_DISK_BYTES * entry.positions / 2**30:.1f} GB "
                "of disk; without the room every sweep expands again), the others read them (resumable after "
                "each sweep)")
        (announce or (notes.append if notes is not None else (lambda _: None)))(line)
        free = memory.available_memory()
        if check and free is not None and need > free:
            raise TooBigError(f"{game.variant.label()} needs about {need / 2**30:.1f} GB round by round and "
                              f"{free / 2**30:.1f} GB is free; free memory or add --ignore-estimate to try anyway")
    elif check and game.known_large() is not None and roundwise.unfinished(folder) is None:
        n = game.estimated_positions()
        free = memory.available_memory()
        need = (roundwise.needs(n) + (f"; {free / 2**30:.1f} GB of memory is free" if free else "")
                if n else f"round by round it needs about {roundwise.SEARCH_BYTES} bytes a position at the "
                "search's peak")
        raise TooBigError(f"{game.variant.label()} has {game.known_large().split(', past')[0]}, not measured; "
                          f"{need}: add --ignore-estimate to try anyway")
    tasks: dict[str, Task] = {}

    def shown(stage: str, done: int, total: int, change: float) -> None:
        if stage == "find":
            if "find" not in tasks:
                tasks["find"] = Task("finding positions", progress, unit="plies")
            tasks["find"].update(done + 1, note=f"{total:,} positions")
        elif stage == "sweep":
            if "find" in tasks:
                tasks.pop("find").close()
            if "sweep" not in tasks:
                tasks["sweep"] = Task("sweeping", progress, total=total, unit="positions", percent=True,
                                      unit_scale=True)
            done_ = bound[-1][1:] if bound else sweeps[-1] if sweeps else None
            last = f", last change {done_[1]:.2g}" if done_ is not None and np.isfinite(done_[1]) else ""
            what = f"sweep {done_[0] + 1 if done_ is not None else 1}"
            if certifying:
                what = "the certificate's sweep"
            elif bound:
                what = f"{bound[-1][0]} bound, {what}"
            tasks["sweep"].update(done, total=total, note=what + last)
        elif stage == "certify":
            certifying.append(True)
            if "sweep" in tasks:
                tasks.pop("sweep").close()
        elif stage == "policy":  # (the win probabilities: two passes and the round starts' system)
            if "sweep" in tasks:
                tasks.pop("sweep").close()
            tasks["policy"] = Task("win probabilities", progress, note="under the stored strategies")
            tasks["policy"].update(0)
        elif stage in ("value", "lower", "upper"):  # (sweeps done, also where a resumed run starts)
            if stage == "value":
                sweeps.append((done, change))
            else:
                bound.append((stage, done, change))
            if "sweep" in tasks:
                tasks.pop("sweep").close()

    sweeps: list[tuple[int, float]] = []
    bound: list[tuple[str, int, float]] = []
    certifying: list[bool] = []
    try:
        return roundwise.solve_variant(game, folder, symmetry=symmetry, tol=tol, max_sweeps=max_sweeps,
                                       workers=workers, progress=shown if progress else None, force=force,
                                       max_positions=max_positions or None, bounds=bounds,
                                       bound_sweeps=bound_sweeps)
    except ValueError as exc:  # a game whose phases do not rise, a work folder of another variant
        from solver.errors import VariantError

        raise VariantError(str(exc)) from None
    finally:
        for task in tasks.values():
            task.close()


def solve_graph(
    game: Game, graph: Graph, *, progress: bool | str = False, tol: float = 1e-12,
    max_sweeps: int | None = None, engine: str | None = None, bound_rounds: int | None = BOUND_ROUNDS,
) -> tuple[dict[str, np.ndarray], dict[str, Any], pl.DataFrame | None]:
    """Solve ``graph`` with ``engine`` and return the table columns, extra metadata, setups table.

    ``engine`` is the route's (:func:`solver.pipeline.route.route`, from the game's declared
    capabilities; ``None``: :func:`solver.pipeline.capabilities.engine_of` the game, the same choice):

    * ``"retrograde"``: value, remoteness, margin; chance nodes only at the start (random setups):
      retrograde below them, the expected result at each chance node (column ``expected``) and a
      table of the setups;
    * ``"value-iteration"``: dice during play (expected result and win probabilities);
    * ``"secret-choice"``: value iteration with a matrix game at each simultaneous node, then
      proven bounds on every value (:mod:`solver.engines.bounds`: each player's strategy against
      the other's exact best reply) with up to ``bound_rounds`` rounds of better strategies
      (``None``: no bounds; the table then holds the iterate and its error estimate only).

    The engines are ordered, each the special case of the next: a variant whose graph has none of
    the nodes its engine is for (a game with secret choices in some variants, not this one) is
    solved by the simplest engine that solves it (retrograde also gives remoteness), as
    :func:`graph_engine` names it. A graph with nodes its engine cannot solve means the game's declaration
    (``chance``, ``secret_choices``) is wrong: :class:`~solver.errors.ProtocolError`, naming it.

    ``progress`` as :func:`solve_variant`: the step at work (the engine's passes are single
    compiled calls; a log gets the step's line while they run).
    """
    if engine is None:
        from solver.pipeline.capabilities import engine_of

        engine = engine_of(game)
    needed = graph_engine(graph)
    check_engine(game, engine, needed)
    with session(progress), Task("solve", progress, note=f"{graph.n:,} positions", bar=False) as step:
        return _solve_graph(game, graph, step, progress, tol, max_sweeps, needed, bound_rounds)


#: engines in order of generality: each solves what the ones before it solve
ENGINE_ORDER = ("retrograde", "value-iteration", "secret-choice")


def graph_engine(graph: Graph) -> str:
    """The simplest engine that solves ``graph``: ``"secret-choice"`` with simultaneous nodes,
    ``"value-iteration"`` with chance nodes after a choice (dice during play), else
    ``"retrograde"`` (chance nodes only at the start are random setups, solved below)."""
    if (graph.kind == NodeKind.SIMULTANEOUS).any():
        return "secret-choice"
    if (graph.kind == NodeKind.CHANCE).any() and not _chance_only_at_start(graph):
        return "value-iteration"
    return "retrograde"


def check_engine(game: Game, engine: str, needed: str) -> None:
    """Refuse, in one line, a graph that needs a more general engine than ``game`` declares."""
    if engine not in ENGINE_ORDER:
        raise ValueError(f"unknown engine {engine!r}; one of {', '.join(ENGINE_ORDER)}")
    if ENGINE_ORDER.index(needed) <= ENGINE_ORDER.index(engine):
        return
    found, fix = (("secret simultaneous choices", "secret_choices = True") if needed == "secret-choice"
                  else ("dice during play", "chance = 'in-play'"))
    raise ProtocolError(f"{game.variant.label()} has {found}, which its class {type(game).__name__} does "
                        f"not declare, so it was routed to the {engine} engine; set {fix} on the class "
                        "(`pyramids check` proves the declaration)")


#: positions of the whole graph solved at once by the chance engine (whole components: a cycle
#: is never cut); about 450 bytes each while solved
WHOLE_CHUNK = 1 << 18


def _solve_chance(graph: Graph, step: Task, progress: bool | str, tol: float, max_sweeps: int | None
                  ) -> tuple[dict[str, np.ndarray], dict[str, Any], None]:
    """Dice during play, no secret choices: the chance engine on the whole graph, which is the
    case of :func:`solver.engines.components.solve_chance` with no outside boundary (the same
    engine the tiers use): components children first, chunks of whole components through the
    value-iteration core, the certificate per chunk."""
    from solver.engines.components import solve_chance

    step.update(note=f"value iteration of {graph.n:,} positions, component by component")
    with Task("value iteration", progress, done=0, unit="chunks") as chunks:
        def on_chunk(done: int, total: int, sweeps: int) -> None:
            chunks.update(done, total=total, note=f"{sweeps:,} sweeps")

        sol = solve_chance(graph.kind, graph.to_move, graph.result, graph.offsets, graph.child, graph.probs,
                           keys=graph.keys, chunk=WHOLE_CHUNK, tol=tol,
                           max_sweeps=100_000 if max_sweeps is None else max_sweeps,
                           progress=on_chunk if progress else None)
    cols: dict[str, Any] = {"value": sol.value, "p_win": sol.p_win, "p_loss": sol.p_loss}
    certified = sol.certified and sol.converged
    extra: dict[str, Any] = {"solver": "value_iteration", "solution": "stochastic", "sweeps": int(sol.sweeps),
                             "residual": float(sol.residual), "tolerance": tol, "converged": bool(sol.converged),
                             "certified": certified, "chunks": int(sol.stats["chunks"]),
                             "largest_component": int(sol.stats["largest_component"])}
    if not certified:
        extra["not_certified_because"] = (f"value iteration did not certify every component ({sol.sweeps:,} "
                                          "sweeps); raise --max-sweeps")
    return cols, extra, None


def _solve_payoffs(graph: Graph, step: Task, progress: bool | str, tol: float, max_sweeps: int | None
                   ) -> tuple[dict[str, Any], dict[str, Any], None]:
    """Ends with real payoffs (:attr:`~solver.core.game.Outcome.payoffs`), no secret choices:
    value iteration on the whole graph for the expected payoff of the side to move (column
    ``value``; ``p_win``/``p_loss`` null: they mean nothing here)."""
    from solver.engines.value_iteration import value_iteration

    step.update(note=f"value iteration of {graph.n:,} positions (real payoffs)")
    sol = value_iteration(graph, tol=tol, max_sweeps=100_000 if max_sweeps is None else max_sweeps)
    certified = bool(sol.stats.get("certified")) and bool(sol.converged)
    extra: dict[str, Any] = {"solver": "value_iteration", "solution": "stochastic", "payoffs": "real",
                             "payoff_scale": float(sol.stats["payoff_scale"]), "sweeps": int(sol.sweeps),
                             "residual": float(sol.residual), "tolerance": tol,
                             "converged": bool(sol.converged), "certified": certified}
    if not certified:
        extra["not_certified_because"] = f"value iteration did not certify its values ({sol.sweeps:,} sweeps)"
    return {"value": sol.value, "p_win": sol.p_win, "p_loss": sol.p_loss}, extra, None


def _solve_graph(game: Game, graph: Graph, step: Task, progress: bool | str, tol: float,
                 max_sweeps: int | None, engine: str, bound_rounds: int | None = BOUND_ROUNDS) -> tuple[dict[str, np.ndarray], dict[str, Any], pl.DataFrame | None]:
    from solver.engines.retrograde import retrograde

    chance = graph.kind == NodeKind.CHANCE
    simultaneous = graph.kind == NodeKind.SIMULTANEOUS
    if game.num_players > 2:
        if chance.any() or simultaneous.any():
            raise TooBigError("3-4 player games with chance or hidden choices are not supported yet")
        return _solve_paranoid(game, graph, step)
    if graph.payoff is not None and not simultaneous.any():
        # real payoffs at the ends (Outcome.payoffs): the expected payoff, even without dice
        return _solve_payoffs(graph, step, progress, tol, max_sweeps)
    if engine == "retrograde" and not chance.any():
        step.update(note=f"retrograde: values, remoteness{', margins' if game.scored else ''} of "
                         f"{graph.n:,} positions")
        solved = retrograde(graph, scored=game.scored)
        cols = {"value": solved.value.astype(np.uint8), "remoteness": solved.remoteness}
        if solved.margin is not None:
            cols["margin"] = solved.margin
        return cols, {"solver": "retrograde", "solution": "deterministic"}, None
    if engine == "retrograde":
        step.update(note=f"retrograde below the setups: {graph.n:,} positions")
        return _solve_setups(game, graph)
    if not simultaneous.any():
        return _solve_chance(graph, step, progress, tol, max_sweeps)
    from solver.engines.rounds import rounds_order, solve_rounds
    from solver.engines.value_iteration import value_iteration

    # secret choices: value iteration with a matrix game at each simultaneous node
    tiers = game.tier_of(graph.keys) if game.has_tiers else None
    if max_sweeps is None:
        max_sweeps = MAX_SWEEPS_SIMULTANEOUS
    step.update(note=f"value iteration of {graph.n:,} positions")
    with Task("value iteration", progress, done=0, unit="sweeps") as sweeps:
        def on_sweeps(stage: str, tier: int, done: int, residual: float) -> None:
            sweeps.update(done, note=f"{stage}, tier {tier}, residual {residual:.1e}")

        # every cycle through a round start (Petal Battle): the compact round-level engine
        order = rounds_order(graph) if tiers is None else None
        if order is not None:
            sol = solve_rounds(graph, tol=tol, max_sweeps=max_sweeps, order=order,
                               progress=on_sweeps if progress else None)
        else:
            sol = value_iteration(graph, tiers=tiers, tol=tol, max_sweeps=max_sweeps,
                                  progress=on_sweeps if progress else None)
        del order
    cols: dict[str, Any] = {"value": sol.value, "p_win": sol.p_win, "p_loss": sol.p_loss}
    strategies = getattr(sol, "strategies", None) or {}
    extra: dict[str, Any] = {}
    fixed_point = bool(sol.stats.get("certified", False)) and bool(sol.converged)
    for k in ("lp_solves", "lp_seconds", "sweeps", "certified", "residual"):
        if k in sol.stats:
            extra[f"simultaneous_{k}"] = sol.stats[k]
    extra["simultaneous_nodes"] = int(simultaneous.sum())
    # which engine: "rounds" (every cycle passes a round start; solver.engines.rounds) or
    # "components" (the general engine, solver.engines.simultaneous)
    extra["simultaneous_engine"] = str(sol.stats.get("engine", "components"))
    extra["max_sweeps"] = int(max_sweeps)
    if graph.payoff is not None:
        extra["payoffs"] = "real"
        extra["payoff_scale"] = float(sol.stats["payoff_scale"])
    extra["fixed_point_certified"] = fixed_point
    value, proof = sol.value, {}
    if bound_rounds is None:
        # no proof asked: the iterate and its fixed-point certificate are all there is
        extra["error_estimate"] = float(sol.stats.get("error_estimate", 0.0))
        certified = fixed_point
        if not certified:
            extra["not_certified_because"] = (
                "decision cycles beside simultaneous nodes" if sol.stats.get("plain_cycles")
                else f"value iteration stopped after {sol.sweeps:,} sweeps with a last change of "
                     f"{sol.stats.get('last_sweep_change', float('nan')):.1e} (error estimate "
                     f"{sol.stats.get('error_estimate', float('nan')):.1e}); raise --max-sweeps")
    else:
        certified, value, proof = _prove(graph, sol, strategies, extra, step, progress, tol, bound_rounds)
    # Win probabilities are those the stored (stationary) strategies earn. In recursive games
    # optimal stationary strategies need not exist: only play that changes over time gets
    # within any margin of the value. Where the strategies found do not earn the value, the
    # win probability is left undefined (null) rather than stated wrongly.
    undefined = np.abs(sol.p_win - sol.p_loss - value) > P_WIN_GAP
    cols["value"] = value
    cols["p_win"] = np.where(undefined, np.nan, sol.p_win)
    cols["p_loss"] = np.where(undefined, np.nan, sol.p_loss)
    extra["p_win_undefined"] = int(undefined.sum())
    # the same expected result from Player 1's point of view (two players, zero-sum)
    cols["value_player1"] = np.where(np.asarray(graph.to_move) == 0, value, -value)
    for p in range(game.num_players):
        cols[f"strategy_{p + 1}"] = mix_column(graph.n, {row: mixes[p] for row, mixes in strategies.items()})
    cols.update(proof)
    return cols, {**extra, "solver": "value_iteration+matrix games (LP)", "solution": "stochastic",
                  "sweeps": int(sol.sweeps), "residual": float(sol.residual), "tolerance": tol,
                  "converged": bool(sol.converged), "certified": certified}, None


def _prove(graph: Graph, sol, strategies, extra: dict[str, Any], step: Task, progress: bool | str,
           tol: float, rounds: int) -> tuple[bool, np.ndarray, dict[str, Any]]:
    """Proven bounds (:func:`solver.engines.bounds.prove_bounds`) from value iteration's
    strategies: the columns ``value_lo``/``value_hi`` (side to move), the proving strategies
    (``proof_mix_1``/``proof_mix_2`` at simultaneous nodes, ``proof_move`` at decision nodes:
    the index of the move the mover's proving strategy plays), metadata ``value_interval`` (the
    start's) and ``bounds``. Returns whether every interval is at most the bound tolerance wide,
    the value to store, and those columns. The value to store is the iterate moved into the
    proven interval (its limit can be a fixed point that is not the value: a side that can stay
    in a loop keeps an early over-estimate; tests/test_bounds.py)."""
    from solver.engines.bounds import BOUND_TOL, prove_bounds

    scale = float(extra.get("payoff_scale", 1.0))
    bound_tol = max(tol, BOUND_TOL) * scale
    t0 = time.perf_counter()
    step.update(note=f"proven bounds: best replies to both players' strategies ({graph.n:,} positions)")
    with Task("proven bounds", progress, done=0, total=rounds, unit="rounds") as done:
        def on_round(r: int, width: float) -> None:
            done.update(r, note=f"widest interval {width:.1e}")

        b = prove_bounds(graph, strategies, sol.best, tol=bound_tol, max_rounds=rounds,
                         terminal_value=graph.payoff, progress=on_round if progress else None)
    cols: dict[str, Any] = {"value_lo": b.lo, "value_hi": b.hi}
    value = np.clip(sol.value, b.lo, b.hi)
    extra["iterate_outside_bounds"] = int(np.count_nonzero(np.abs(value - sol.value) > 1e-9))
    cols["proof_mix_1"], cols["proof_mix_2"] = mix_column(graph.n, b.lower), mix_column(graph.n, b.upper)
    offsets = np.asarray(graph.offsets, dtype=np.int64)
    to_move = np.asarray(graph.to_move)
    moves = np.where(to_move == 0, b.lower_moves, b.upper_moves)
    decision = (np.asarray(graph.kind) == NodeKind.DECISION) & (moves >= 0)
    cols["proof_move"] = np.where(decision, moves - offsets[:-1], -1).astype(np.int32)
    r = graph.root
    width = b.width
    extra["value_interval"] = [float(b.lo[r]), float(b.hi[r])]
    extra["bounds"] = {"tolerance": bound_tol, "width": width, "rounds": int(b.stats["rounds"]),
                       "max_rounds": int(rounds), "evaluations": int(b.stats["evaluations"]),
                       "proven": bool(b.stats["proven"]), "exact": bool(b.stats["exact"]),
                       "seconds": round(time.perf_counter() - t0, 3)}
    if not b.certified:
        extra["not_certified_because"] = (
            "the two bounds crossed beyond rounding, so nothing is proven" if not b.stats["proven"]
            else f"the proven intervals are up to {width:.1e} wide (the start's [{b.lo[r]:+.6f}, "
                 f"{b.hi[r]:+.6f}]), more than {bound_tol:.0e}, after {b.stats['rounds']} rounds of better "
                 "strategies; raise --bound-rounds")
    return bool(b.certified), value, cols


def _solve_paranoid(game: Game, graph: Graph, step: Task | None = None):
    """3-4 players: for each seat, the two-sided question "can this seat force the strictly
    highest score against all other seats together?" (the paranoid reduction), by retrograde.

    Columns ``seat<i>_value``/``seat<i>_remoteness``/``seat<i>_margin`` (seats numbered from 1)
    are from **seat i's** point of view wherever it is: win = seat i can force the strictly
    highest score, lose = the others can stop it, draw = endless play; the margin is seat i's
    score minus the best other score under margin-optimal play of both sides.
    """
    from solver.engines.retrograde import retrograde

    terminal_rows = np.flatnonzero(graph.kind == NodeKind.TERMINAL)
    if step is not None:
        step.update(note=f"the outcomes of {len(terminal_rows):,} finished games (every seat's score)")
    outcomes = [game.outcome(game.decode(int(k))) for k in graph.keys[terminal_rows].tolist()]
    cols: dict[str, np.ndarray] = {}
    starts: dict[str, Any] = {}
    for seat in range(game.num_players):
        if step is not None:
            step.update(note=f"retrograde for seat {seat + 1} of {game.num_players} (paranoid) of "
                             f"{graph.n:,} positions")
        side = np.where(graph.to_move == seat, 0, 1).astype(np.int8)
        result = np.zeros(graph.n, dtype=np.int8)
        margin = np.zeros(graph.n, dtype=np.int32)
        for row, out in zip(terminal_rows.tolist(), outcomes):
            won = out.results[seat] == Result.WIN
            seat_margin = out.margin(seat) if out.scores is not None else 0
            if side[row] == 0:
                result[row], margin[row] = (1 if won else -1), seat_margin
            else:
                result[row], margin[row] = (-1 if won else 1), -seat_margin
        view = Graph(keys=graph.keys, kind=graph.kind, to_move=side, ply=graph.ply,
                     offsets=graph.offsets, child=graph.child, probs=None, result=result,
                     margin=margin, root=graph.root, symmetry=graph.symmetry)
        solved = retrograde(view, scored=game.scored)
        mine = side == 0
        value = np.where(mine, solved.value, FLIP[solved.value]).astype(np.uint8)
        cols[f"seat{seat + 1}_value"] = value
        cols[f"seat{seat + 1}_remoteness"] = solved.remoteness
        if solved.margin is not None:
            cols[f"seat{seat + 1}_margin"] = np.where(mine, solved.margin, -solved.margin).astype(np.int16)
        r = graph.root
        rem = int(solved.remoteness[r])
        starts[str(seat + 1)] = {
            "value": VALUE_NAMES[int(value[r])],
            "remoteness": None if rem == NO_REMOTENESS else rem,
            "margin": int(cols[f"seat{seat + 1}_margin"][r]) if solved.margin is not None else None,
        }
    extra = {"solver": "retrograde (paranoid, per seat)", "solution": "paranoid",
             "question": "can this seat force the strictly highest score against all other seats together?",
             "seats": starts}
    return cols, extra, None


def _chance_only_at_start(graph: Graph) -> bool:
    """No decision or terminal node leads to a chance node (chance = random setup only)."""
    chance = graph.kind == NodeKind.CHANCE
    src = graph.parent_of_edge()
    into_chance = chance[graph.child]
    return not bool((into_chance & ~chance[src]).any())


def decision_part(graph: Graph) -> Graph:
    """The graph below random setups (chance at the start only): chance rows given no edges and
    made terminal, so that retrograde (or its check) sees them as isolated."""
    chance = graph.kind == NodeKind.CHANCE
    counts = np.diff(graph.offsets)
    keep = np.repeat(~chance, counts)
    return Graph(
        keys=graph.keys, kind=np.where(chance, NodeKind.TERMINAL, graph.kind).astype(np.int8),
        to_move=graph.to_move, ply=graph.ply,
        offsets=np.concatenate([[0], np.cumsum(np.where(chance, 0, counts))]).astype(np.int64),
        child=graph.child[keep], probs=None, result=graph.result, margin=graph.margin,
        root=graph.root, symmetry=graph.symmetry,
    )


def _solve_setups(game: Game, graph: Graph):
    """Retrograde below setup chance nodes; expected result (+1/0/-1 per setup) at the chance nodes."""
    from solver.engines.retrograde import retrograde

    chance = graph.kind == NodeKind.CHANCE
    counts = np.diff(graph.offsets)
    solved = retrograde(decision_part(graph), scored=game.scored)
    value = solved.value.astype(np.uint8)
    remoteness = solved.remoteness.copy()
    # chance nodes only lead to decision nodes here (one level of chance): their expectations
    # need only their own (few) edges
    crow = np.flatnonzero(chance)
    cedge = ranges(graph.offsets[crow], counts[crow])
    src = np.repeat(crow, counts[crow])
    kids = graph.child[cedge]
    probs = graph.probs[cedge] if graph.probs is not None else np.ones(len(cedge))
    score = np.array([-1.0, 0.0, 0.0, 1.0])  # lose, draw, tie, win for the side to move
    same = graph.to_move[kids] == graph.to_move[src]
    child_score = np.where(same, 1.0, -1.0) * score[value[kids]]
    expected = np.bincount(src, weights=probs * child_score, minlength=graph.n)
    value[chance] = DRAW  # placeholder code for chance rows (their value is in `expected`)
    remoteness[chance] = NO_REMOTENESS
    cols: dict[str, np.ndarray] = {"value": value, "remoteness": remoteness, "expected": expected}
    margin_exp = None
    if solved.margin is not None:
        margin = solved.margin.copy()
        child_margin = np.where(same, 1, -1) * margin[kids].astype(np.float64)
        margin_exp = np.bincount(src, weights=probs * child_margin, minlength=graph.n)
        margin[chance] = 0
        cols["margin"] = margin
        cols["expected_margin"] = margin_exp
    # The setups table: one row per outcome of the start's chance node.
    root = graph.root
    lo, hi = graph.offsets[root], graph.offsets[root + 1]
    rows = graph.child[lo:hi]
    root_probs = graph.probs[lo:hi] if graph.probs is not None else np.ones(hi - lo)
    root_state = game.decode(int(graph.keys[root]))
    mult = setup_multiplicities(game, root_state, len(rows)) if chance[root] else [None] * len(rows)
    root_player = int(graph.to_move[root])
    setups = setups_frame(game, graph.keys[rows], root_probs, mult, root_player, graph.to_move[rows],
                          value[rows], remoteness[rows],
                          cols["margin"][rows] if "margin" in cols else None)
    extra = {"solver": "retrograde+setups", "solution": "deterministic",
             "setup_player": root_player,
             "expected_result": float(expected[root]) if chance[root] else None}
    if margin_exp is not None and chance[root]:
        extra["expected_margin"] = float(margin_exp[root])
    return cols, extra, setups


def positions_frame_of(graph: Graph, cols: dict[str, np.ndarray]) -> pl.DataFrame:
    """The positions table of a solved whole graph."""
    return positions_frame(graph.keys, graph.to_move, graph.kind, graph.ply, np.diff(graph.offsets), cols)


def edges_frame(graph: Graph) -> pl.DataFrame:
    """The edges table (row indices of each move) of a whole graph."""
    data: dict[str, Any] = {
        # (built as uint32 straight away: the int64 parents were 8 bytes a move more at the peak)
        "src": pl.Series(np.repeat(np.arange(graph.n, dtype=np.uint32), np.diff(graph.offsets)), dtype=pl.UInt32),
        "dst": pl.Series(graph.child.astype(np.uint32), dtype=pl.UInt32),
    }
    if graph.probs is not None:
        data["prob"] = pl.Series(graph.probs, dtype=pl.Float64)
    return pl.DataFrame(data)


def table_meta(game: Game, graph: Graph, positions: pl.DataFrame, *, symmetry: bool, elapsed: float,
          timings: dict[str, float], extra: dict[str, Any]) -> dict[str, Any]:
    counts: dict[str, Any] = {
        "positions": graph.n,
        "edges": graph.num_edges,
        "terminal": int((graph.kind == NodeKind.TERMINAL).sum()),
        "chance": int((graph.kind == NodeKind.CHANCE).sum()),
    }
    if extra.get("solution") == "deterministic":
        det = graph.kind != NodeKind.CHANCE
        codes = positions["value"].to_numpy()[det]
        counts["by_value"] = {name: int((codes == i).sum()) for i, name in enumerate(VALUE_NAMES)}
    meta = {
        "game": game.name,
        "variant": game.variant.as_text(),
        "variant_id": game.variant.variant_id(),
        "label": game.variant.label(),
        "rules_version": game.rules_version,
        "toolkit_version": solver.__version__,
        "symmetry": symmetry,
        "counts": counts,
        "root_key": int(graph.keys[graph.root]),
        "root_row": graph.root,
        "solve_seconds": elapsed,
        "timings": timings,
        "graph_bytes": int(graph.nbytes()),
        "scored": bool(game.scored),
        "players": game.num_players,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    meta.update(extra)
    return meta
