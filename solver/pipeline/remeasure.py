"""Measure a preset again for ``measured.toml``, from the files of its tiered solve.

``python -m solver.pipeline.remeasure tables/<game>/<variant-id>`` prints the preset's entry in
the data file's format: the positions of the variant, of its largest tier and of the other tiers
that tier reads, and how many tiers, read from the finished table's ``tiers.json``; or, from an
unfinished run (its ``.tiered`` work folder), the tiers discovered so far, marked ``at_least``.
Paste it into ``solver/pipeline/measured.toml`` (with a ``too_large`` reason where the whole-graph
solver cannot hold the preset, and what was measured, when, in ``measured``).
"""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path
from typing import Any

from solver.errors import PyramidsError, TableError
from solver.games import make_game
from solver.pipeline import tiered, workfiles


def tier_sizes(folder: Path) -> dict[str, Any]:
    """``game``, ``variant``, ``positions``, ``largest_tier``, ``largest_tier_children``,
    ``tiers`` and ``at_least`` of the tiered solve in ``folder`` (a finished table, or the
    discovery so far of an unfinished run)."""
    folder = Path(folder)
    meta = workfiles.read_json(folder / tiered.MANIFEST)
    if meta is not None:
        sizes = {int(t["tier"]): int(t["positions"]) for t in meta.get("tiers", [])}
        children = {int(t["tier"]): list(t.get("children", [])) for t in meta.get("tiers", [])}
        at_least = False
    else:
        work = folder if folder.name.endswith(tiered.WORK_SUFFIX) else tiered.work_dir(folder)
        meta = workfiles.read_json(work / "run.json")
        found = [workfiles.read_json(p) or {} for p in sorted(work.glob("discover/tier-*.json"))]
        sizes = {int(f["tier"]): int(f["positions"]) for f in found if "tier" in f}
        children = {int(f["tier"]): list(f.get("children", [])) for f in found if "tier" in f}
        at_least = True
    if meta is None or not sizes:
        raise TableError(f"{folder} holds neither a tiered table nor a tiered run with a discovered tier",
                         fix="give the folder of a tiered solve, e.g. tables/<game>/<variant-id>")
    largest = max(sizes, key=lambda t: sizes[t])
    return {"game": meta.get("game"), "variant": meta.get("variant", {}),
            "positions": sum(sizes.values()), "largest_tier": sizes[largest],
            "largest_tier_children": tiered.reached_positions(largest, children.get(largest, []), sizes),
            "tiers": len(sizes), "at_least": at_least}


def entry_text(folder: Path) -> str:
    """The entry of ``measured.toml`` for the tiered solve in ``folder``."""
    got = tier_sizes(folder)
    try:
        preset = make_game(got["game"], got["variant"]).preset_name() or "<not a preset>"
    except PyramidsError:
        preset = "<preset>"
    lines = [f'[games.{got["game"]}."{preset}"]',
             f'positions = {got["positions"]:_}',
             f'largest_tier = {got["largest_tier"]:_}',
             f'largest_tier_children = {got["largest_tier_children"]:_}']
    if got["at_least"]:
        lines.append("at_least = true")
        what = f'{got["tiers"]:,} tiers discovered by the tiered solver (unfinished: lower bounds)'
    else:
        lines.append(f'tiers = {got["tiers"]:_}')
        what = "every tier discovered by the tiered solver"
    lines.append(f'measured = "{what} ({date.today().isoformat()})"')
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m solver.pipeline.remeasure", description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path, help="tables/<game>/<variant-id> of a tiered solve (or its .tiered run)")
    args = parser.parse_args(argv)
    try:
        print(entry_text(args.folder))
    except PyramidsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
