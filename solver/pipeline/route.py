"""Routing: the one place that decides how a variant is solved (issue 31, item 2).

:func:`route` answers two questions from the game's declared capabilities (``Game.chance``,
``Game.secret_choices``, ``Game.has_tiers``), its measured size (:mod:`.measured`), the work on
disk and what the caller asked for:

* **kind**: the whole graph in memory (:func:`solver.pipeline.whole.solve_variant`), tier by tier
  out of core (:mod:`.tiered`), a sweep of setup classes as Dask tasks (:mod:`.tasks`), or, for
  a game whose rounds start with a secret choice and that names its round phases, round by
  round from its keys (:mod:`.roundwise`);
* **engine**: retrograde, value iteration (dice during play) or the secret-choice engine (value
  iteration with a matrix game at each simultaneous node).

:mod:`solver.api` (``solve``) and the CLI call it; the whole-graph solver runs the engine it names
(:func:`solver.pipeline.whole.solve_graph`). A request that cannot be met (``--tiered`` on a
game without tiers, task options on a game that cannot be swept) is refused here, in one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from solver.core.game import Game
from solver.errors import VariantError
from solver.pipeline import measured, roundwise, tasks, tiered
from solver.pipeline.capabilities import ENGINES, KINDS, Engine, Kind, engine_of  # noqa: F401 - public here too
from solver.pipeline.measured import large_reason


#: the options that run a sweep of setups (their CLI flags, for messages)
SWEEP_FLAGS = {"jobs": "--jobs", "scheduler": "--scheduler", "setup_limit": "--setup-limit",
               "batch": "--batch"}
#: the options only a sweep takes (``jobs``/``scheduler`` also run the tiers of a tiered solve)
SWEEP_ONLY = ("setup_limit", "batch")


@dataclass(frozen=True)
class Route:
    """How a variant is solved.

    ``kind``: ``"whole"`` (the whole graph in memory), ``"tiers"`` (tier by tier, out of core),
    ``"sweep"`` (one Dask task per batch of setup classes) or ``"rounds"`` (secret-choice games
    that name round phases: round by round from their keys, :mod:`solver.pipeline.roundwise`). ``engine``: ``"retrograde"``,
    ``"value-iteration"`` or ``"secret-choice"``, from the game's declaration: the most general
    engine its variants need (a variant whose graph turns out to have none of the nodes a
    stochastic engine is for, e.g. Petal Battle with open sequencing, is solved by retrograde, the
    special case that also gives remoteness). ``why``: one sentence for people.
    """

    kind: Kind
    engine: Engine
    why: str


def route(game: Game, *, tiered: bool | None = None, folder: Path | None = None,
          sweep_options: Mapping[str, Any] | None = None, sweep: bool | None = None) -> Route:
    """Decide how ``game`` is solved.

    Parameters
    ----------
    tiered : bool, optional
        ``True``: tier by tier (an error when the game cannot be); ``False``: never; ``None``
        (default): when the game names tiers and the variant is too large for the whole graph
        (measured, :func:`solver.pipeline.measured.large_reason`), or an unfinished tiered solve
        of it is in ``folder`` (it is resumed).
    folder : path, optional
        The variant's table folder (to find an unfinished tiered solve).
    sweep_options : mapping, optional
        Task options as given (``jobs``, ``scheduler``, ``setup_limit``, ``batch``; ``None``
        values are not given). Any of them given on a random-setup variant asks for a sweep;
        ``setup_limit``/``batch`` on a variant that cannot be swept are refused; ``jobs``/
        ``scheduler`` otherwise run the tiers of a tiered solve and are refused for a whole one.
    sweep : bool, optional
        ``True``: sweep (an error when the variant cannot be swept); ``False``: never sweep (callers that need a :class:`solver.api.Solution`); ``None``
        (default): sweep a random-setup variant when a task option asks for it or it has more
        arrangements than :data:`solver.pipeline.tasks.SWEEP_MIN_ARRANGEMENTS`.

    Raises
    ------
    VariantError
        When what is asked cannot be done, with the fix, in one line.
    """
    given = {k: v for k, v in (sweep_options or {}).items() if v is not None}
    unknown = set(given) - set(SWEEP_FLAGS)
    if unknown:
        raise TypeError(f"unknown sweep options: {', '.join(sorted(unknown))}")
    if sweep:
        cannot = tasks.sweepable(game) or game.too_big()
        if cannot is not None:
            raise VariantError(f"{game.variant.label()} cannot be swept by setups: {cannot}; solve it "
                               "without a sweep")
        setups = getattr(game, "num_setups", 0) or 0
        return Route("sweep", engine_of(game, "sweep"),
                     f"setup sweep: {f'{setups:,} arrangements' if setups else 'a random setup'}, asked for")
    # --tiered (without options only a sweep takes): every setup's positions together, tier by tier
    if sweep is None and (tiered is not True or any(k in given for k in SWEEP_ONLY)):
        chosen = _sweep_reason(game, given)
        if chosen is not None:
            return Route("sweep", engine_of(game, "sweep"), chosen)
    if any(k in given for k in SWEEP_ONLY):
        raise VariantError(f"--setup-limit and --batch are for random setups; {game.variant.label()} "
                           f"cannot be swept: {tasks.sweepable(game)}")
    why = _rounds_reason(game, tiered, folder)
    if why is not None:
        if "jobs" in given or "scheduler" in given:
            raise VariantError(f"--jobs and --scheduler run tasks of tiered solves and of random setups; "
                               f"{game.variant.label()} is solved round by round in this process: drop them")
        return Route("rounds", "secret-choice", why)
    why = _tiers_reason(game, tiered, folder)
    if why is not None:
        return Route("tiers", engine_of(game, "tiers"), why)
    if "jobs" in given or "scheduler" in given:
        raise VariantError(f"--jobs and --scheduler run tasks of tiered solves and of random setups "
                           f"(setup=all); {game.variant.label()} is solved whole, in this process: drop "
                           "them (or add --tiered if the game names tiers)")
    return Route("whole", engine_of(game, "whole"), "whole graph in memory" + (
        ": tiers not asked for" if tiered is False else ""))


def _sweep_reason(game: Game, given: Mapping[str, Any]) -> str | None:
    """Why ``game`` is swept by setups (``None``: it is not): a task option asks for it, or it
    has too many setups for the whole graph."""
    if tasks.sweepable(game) is not None or game.too_big() is not None:
        return None  # (too big: the whole-graph path refuses it in one line, naming a preset)
    setups = getattr(game, "num_setups", 0) or 0
    count = f"{setups:,} arrangements" if setups else "a random setup"
    if given:
        flags = " ".join(SWEEP_FLAGS[k] for k in SWEEP_FLAGS if k in given)
        return f"setup sweep: {count}, asked for by {flags}"
    if setups > tasks.SWEEP_MIN_ARRANGEMENTS:
        return (f"setup sweep: {count}, more than the whole graph takes "
                f"({tasks.SWEEP_MIN_ARRANGEMENTS:,})")
    return None


def _rounds_reason(game: Game, asked: bool | None, folder: Path | None) -> str | None:
    """Why ``game`` is solved round by round from its keys (``None``: it is not): a secret-choice
    game that names its round phases, asked for with ``--tiered``, a preset measured too large for
    the whole graph, or with an unfinished round-by-round solve in ``folder``'s work folder (a
    variant only estimated large by formula is refused by the whole-graph path, at once)."""
    if not (game.secret_choices and game.has_round_phases) or asked is False:
        return None
    if asked:
        return "round by round from the keys (the phases of a round as tiers): asked for (--tiered)"
    entry = measured.of_game(game)
    if entry is not None and entry.too_large is not None:  # (measured; a formula's estimate alone is refused)
        return f"round by round from the keys: too large for the whole graph ({entry.too_large.split(' (')[0]})"
    if folder is not None and roundwise.unfinished(folder) is not None:
        return f"round by round: resuming the unfinished solve in {roundwise.work_dir(Path(folder))}"
    return None


def _tiers_reason(game: Game, asked: bool | None, folder: Path | None) -> str | None:
    """Why ``game`` is solved tier by tier (``None``: it is not); an error when ``asked`` and it
    cannot be."""
    if asked is None:
        if not tiered.supports_tiers(game):
            return None
        large = large_reason(game)
        if large is not None:
            return f"tier by tier: too large for the whole graph ({large.split(' (')[0]})"
        if folder is not None and tiered.unfinished(folder) is not None:
            return f"tier by tier: resuming the unfinished tiered solve in {tiered.work_dir(Path(folder))}"
        return None
    if asked and not tiered.supports_tiers(game):
        why = ("does not name tiers" if not game.has_tiers
               else f"has {game.num_players} players (each seat against the others together is solved on "
                    "the whole graph)" if game.num_players > 2
               else "has secret simultaneous choices, which the tiered solver does not handle yet")
        raise VariantError(f"{game.variant.label()} {why}, so it cannot be solved tier by tier; "
                           "solve it without --tiered")
    return "tier by tier: asked for (--tiered)" if asked else None
