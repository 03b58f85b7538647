"""Measured sizes of presets: the one data file ``measured.toml`` beside this module, read once.

What a solve of a preset was measured to hold (its positions, its largest tier and the positions
of other tiers that tier reads, why the whole-graph solver cannot hold it) is data about solves
on a machine, not a rule of the game, so it is kept here and not on the game classes. The memory
plan of a tiered solve (:func:`solver.pipeline.tiered.estimate`), the whole-graph solver's
refusal of known-large presets (:mod:`solver.api`) and ``pyramids list`` read it through the
functions below. A game or preset without an entry (every plug-in) has no measured size: no
estimate, and the game's own :meth:`~solver.core.game.Game.known_large` alone says whether it is
too large. The file's header says what each field means, on which machine the sizes were measured
and the command that measures them again (:mod:`solver.pipeline.remeasure`).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path
from typing import Any

from solver.core.game import Game

#: the data file (package data: pyproject.toml ships it with the package)
DATA = Path(__file__).with_name("measured.toml")


@dataclass(frozen=True)
class Measured:
    """What was measured of one preset (the fields of its table in ``measured.toml``)."""

    #: positions of the variant (up to symmetry)
    positions: int | None = None
    #: positions of its largest tier
    largest_tier: int | None = None
    #: positions of the other tiers that the largest tier's moves reach (``None``: not measured)
    largest_tier_children: int | None = None
    #: the sizes are lower bounds (a discovery stopped before its end)
    at_least: bool = False
    #: how many tiers, where every tier was discovered
    tiers: int | None = None
    #: the most disk a tiered solve's work folder was seen to hold (sampled while it ran; what the
    #: disk estimate is checked against)
    peak_disk_bytes: int | None = None
    #: why the whole-graph (in-memory) solver cannot hold the preset (``None``: it can)
    too_large: str | None = None
    #: why a tiered solve of the preset is not expected to finish on this machine, from what was
    #: measured (``None``: nothing says so); the tiered solver refuses it with this reason unless
    #: told to try (``--ignore-estimate``), and ``pyramids list`` says it
    not_here: str | None = None
    #: what was measured, how and when
    measured: str = ""

    @property
    def has_tier_sizes(self) -> bool:
        """Whether the tiered solver's estimate can be made from this entry."""
        return self.positions is not None and self.largest_tier is not None


_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "positions": (int,), "largest_tier": (int,), "largest_tier_children": (int,), "at_least": (bool,),
    "tiers": (int,), "peak_disk_bytes": (int,), "too_large": (str,), "not_here": (str,), "measured": (str,),
}


def read(path: Path) -> dict[tuple[str, str], Measured]:
    """The entries of a data file in the format of ``measured.toml``, by ``(game, preset)``;
    a :class:`ValueError` naming the entry and field when one is not of that format."""
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    return {(str(game), str(preset)): _entry(f"{path}: [games.{game}.{preset!r}]", values)
            for game, presets in data.get("games", {}).items() for preset, values in presets.items()}


def _entry(where: str, values: dict[str, Any]) -> Measured:
    """One table of the data file as a :class:`Measured`; a :class:`ValueError` naming ``where``
    and the field when a field is unknown or of another type."""
    names = {f.name for f in fields(Measured)}
    for key, value in values.items():
        if key not in names:
            raise ValueError(f"{where} has an unknown field {key!r}; the fields are {', '.join(sorted(names))}")
        wanted = _FIELD_TYPES[key]
        if not isinstance(value, wanted) or (wanted == (int,) and isinstance(value, bool)):
            raise ValueError(f"{where}: {key} = {value!r} is not of type {wanted[0].__name__}")
    return Measured(**values)


def read_unions(path: Path) -> dict[tuple[str, str], Measured]:
    """The ``[unions.<game>."<variant-id>"]`` entries of a data file: what the union of every
    setup of a random-setup variant (solved together, tier by tier) was measured or projected
    to hold, by ``(game, variant id)``; the fields of :class:`Measured` (``positions``,
    ``at_least``, ``not_here``, ``measured``)."""
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    return {(str(game), str(vid)): _entry(f"{path}: [unions.{game}.{vid!r}]", values)
            for game, variants in data.get("unions", {}).items() for vid, values in variants.items()}


@cache
def unions() -> dict[tuple[str, str], Measured]:
    """Every ``[unions...]`` entry of ``measured.toml`` (read once)."""
    return read_unions(DATA)


def union_of(game: Game) -> Measured | None:
    """What the union of every setup of ``game``'s variant was measured to hold, or ``None``."""
    return unions().get((game.name, game.variant.variant_id()))


@cache
def entries() -> dict[tuple[str, str], Measured]:
    """Every entry of ``measured.toml`` by ``(game name, preset name)`` (read once)."""
    return read(DATA)


@cache
def about() -> dict[str, Any]:
    """The ``[about]`` table of ``measured.toml``: the machine and the command that re-measures."""
    with open(DATA, "rb") as fh:
        return dict(tomllib.load(fh).get("about", {}))


def of(game_name: str, preset: str | None) -> Measured | None:
    """The entry of ``preset`` of the game named ``game_name``, or ``None``."""
    if preset is None:
        return None
    return entries().get((game_name, preset))


def of_game(game: Game) -> Measured | None:
    """The entry of the preset that ``game``'s variant is, or ``None`` (not a preset, or not
    measured). Games without entries are answered without building their presets."""
    if not any(name == game.name for name, _ in entries()):
        return None
    return of(game.name, game.preset_name())


def too_large(game_name: str, preset: str) -> str | None:
    """Why the whole-graph solver cannot hold this preset (measured), or ``None``."""
    entry = of(game_name, preset)
    return entry.too_large if entry is not None else None


def large_presets(game_name: str) -> dict[str, str]:
    """The presets of ``game_name`` measured past the whole-graph solver: preset -> reason."""
    return {preset: m.too_large for (name, preset), m in entries().items()
            if name == game_name and m.too_large is not None}


def large_reason(game: Game) -> str | None:
    """Why ``game``'s variant is past the whole-graph solver: the measured reason when it is a
    preset measured too large, else the game's own formula (:meth:`Game.known_large`), else
    ``None``."""
    entry = of_game(game)
    if entry is not None and entry.too_large is not None:
        return entry.too_large
    return game.known_large()
