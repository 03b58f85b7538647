"""A random setup solved tier by tier: the **union** of every setup's positions (issue 35).

A game whose only chance is its setup (``Game.chance == "setup"``, e.g. Greener with
``setup=all``) starts at a chance node whose outcomes are the setups (one per symmetry class,
with its probability). Solving each setup alone (the sweep, :mod:`.tasks`) repeats the positions
that setups share; here the setups' start positions seed the tiered discovery together, so every
position reached from any setup is found and solved once, tier by tier, as a deterministic game.
The start itself is then the **setup tier** (the root's tier, below every setup's): one chance
row whose expected result, expected margin and win/loss probabilities are the setups' values
weighted by their probabilities, and the companion ``setups.parquet`` (one row per setup, the
same table the whole-graph solve writes: :func:`solver.pipeline.setups.setups_frame`).

Nothing here is a new engine: the setups' values are read from the finished tier files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from solver.core.arrays import lookup_sorted, unique
from solver.core.game import Game, NodeKind
from solver.core.values import DRAW, FLIP, LOSE, NO_REMOTENESS, WIN
from solver.pipeline.setups import setup_multiplicities, setups_frame
from solver.pipeline.tierwork import tiers_of
from solver.tables import positions_frames, read_columns, read_parquet, scan_keyed, write_parquet

#: the companion table of a tiered solve of a random setup (as the whole-graph table's)
SETUPS_FILE = "setups.parquet"
#: a stored expected result must equal the one recomputed from the setups' rows to this much
EXPECTED_TOL = 1e-9


@dataclass(frozen=True)
class SetupRoot:
    """The start of a random-setup game: its key, player to move, and its outcomes (the setups'
    start keys, in the order the game lists them, with probabilities and, when the game counts
    them, arrangements)."""

    key: int
    player: int
    keys: np.ndarray
    probs: np.ndarray
    mult: list[int | None]


def is_setup_root(game: Game) -> bool:
    """The game's only chance is a random setup and its start is that chance node."""
    return (game.chance == "setup" and not game.secret_choices
            and game.node_kind(game.initial_state()) == NodeKind.CHANCE)


def setup_root(game: Game, symmetry: bool, only: np.ndarray | None = None) -> SetupRoot:
    """The start's outcomes, as :func:`solver.pipeline.whole` lists them for the setups table
    (the batch expansion's children and probabilities; the game's arrangement counts when it
    gives one per outcome, else the smallest integers proportional to the probabilities).
    ``only``: just the setups whose start keys it holds (a batch of a sweep, in the root's order,
    their probabilities unchanged: they no longer sum to 1)."""
    start = game.initial_state()
    key = int(game.encode(game.canonical(start) if symmetry else start))
    exp = game.expand(np.array([key], dtype=np.uint64), canonical=symmetry)
    keys = np.asarray(exp.children, dtype=np.uint64)
    probs = (np.asarray(exp.probs, dtype=np.float64) if exp.probs is not None
             else np.full(len(keys), 1.0 / max(1, len(keys))))
    mult = setup_multiplicities(game, game.decode(key), len(keys))
    if only is not None:
        keep = np.flatnonzero(np.isin(keys, np.asarray(only, dtype=np.uint64)))
        keys, probs, mult = keys[keep], probs[keep], [mult[i] for i in keep.tolist()]
    return SetupRoot(key, int(exp.to_move[0]), keys, probs, mult)


def digest(keys: np.ndarray) -> str:
    """A short fingerprint of a set of setup keys (a resumed run must be of the same setups)."""
    import hashlib

    return hashlib.sha256(np.sort(np.asarray(keys, dtype=np.uint64)).tobytes()).hexdigest()[:16]


def seeds(game: Game, root: SetupRoot, slices: int = 1) -> dict[int, np.ndarray]:
    """The setups' distinct start keys by tier (tiers cut in ``slices``,
    :func:`~solver.pipeline.tierwork.tiers_of`): where the discovery starts (at ply 1)."""
    keys = unique(root.keys)
    tiers = tiers_of(game, keys, slices)
    return {int(t): keys[tiers == t] for t in unique(tiers).tolist()}


def _setup_rows(root: SetupRoot, tier_of: Any, files: dict[int, Path], scored: bool) -> dict[str, np.ndarray]:
    """Player, value, remoteness (and margin) of every setup's start, read from its tier file."""
    n = len(root.keys)
    # the dtypes of the tier files' columns (as the whole-graph solve and the sweep's tasks give them)
    out = {"player": np.zeros(n, np.int8), "value": np.zeros(n, np.uint8),
           "remoteness": np.zeros(n, np.uint16)}
    if scored:
        out["margin"] = np.zeros(n, np.int16)
    tiers = np.asarray(tier_of(root.keys), dtype=np.int64)
    cols = ["key", "player", "value", "remoteness"] + (["margin"] if scored else [])
    for t in unique(tiers).tolist():
        sel = np.flatnonzero(tiers == t)
        want = root.keys[sel]
        df = (scan_keyed(files[int(t)]).select(cols)
              .filter(pl.col("key").is_in(unique(want).tolist())).collect().sort("key"))
        have = df["key"].to_numpy()
        idx = lookup_sorted(have, want)
        if len(have) == 0 or not np.array_equal(have[np.minimum(idx, len(have) - 1)], want):
            raise RuntimeError(f"a setup's start is missing from tier {t}'s file")
        out["player"][sel] = df["player"].to_numpy()[idx]
        out["value"][sel] = df["value"].to_numpy()[idx]
        out["remoteness"][sel] = df["remoteness"].fill_null(int(NO_REMOTENESS)).to_numpy()[idx]
        if scored:
            out["margin"][sel] = df["margin"].to_numpy()[idx]
    return out


def root_summary(root: SetupRoot, rows: dict[str, np.ndarray]) -> dict[str, float]:
    """Expected result, P(win), P(loss) (and expected margin) of the root's player, as
    :func:`solver.pipeline.whole._solve_setups` computes them."""
    same = rows["player"] == root.player
    code = np.where(same, rows["value"], FLIP[rows["value"]])
    score = np.array([-1.0, 0.0, 0.0, 1.0])[code]  # lose, draw, tie, win
    out = {"expected": float(np.dot(root.probs, score)),
           "p_win": float(root.probs[code == WIN].sum()), "p_loss": float(root.probs[code == LOSE].sum())}
    if "margin" in rows:
        out["expected_margin"] = float(np.dot(root.probs, np.where(same, 1, -1) * rows["margin"].astype(np.int64)))
    return out


def _setups_table(game: Game, root: SetupRoot, rows: dict[str, np.ndarray]) -> pl.DataFrame:
    """The setups table (the whole-graph solve's, :func:`setups_frame`) from the setups' rows."""
    return setups_frame(game, root.keys, root.probs, root.mult, root.player, rows["player"], rows["value"],
                        rows["remoteness"], rows.get("margin"))


def solve_root_tier(game: Game, root: SetupRoot, tier: int, files: dict[int, Path], out_dir: Path,
                    meta: dict[str, Any], slices: int = 1) -> dict[str, Any]:
    """Write the setup tier (the start's one chance row) to ``files[tier]`` and the setups table
    to ``out_dir / SETUPS_FILE``, from the finished tiers of the setups (cut in ``slices``);
    return the start's summary (:func:`root_summary`) and its child tiers."""
    scored = bool(game.scored)
    rows = _setup_rows(root, lambda keys: tiers_of(game, keys, slices), files, scored)
    summary = root_summary(root, rows)
    write_parquet(_setups_table(game, root, rows), out_dir / SETUPS_FILE, {**meta, "table": "setups"})
    cols: dict[str, Any] = {"value": np.array([DRAW], np.uint8),  # placeholder: see ``expected``
                            "remoteness": np.array([NO_REMOTENESS], np.uint16)}
    if scored:
        cols["margin"] = np.zeros(1, np.int16)
    frame = next(positions_frames(np.array([root.key], np.uint64), np.array([root.player]),
                                  np.array([NodeKind.CHANCE]), np.zeros(1, np.uint16),
                                  np.array([len(root.keys)]), cols))
    frame = frame.with_columns(
        pl.lit(summary["expected"], pl.Float64).alias("expected"),
        pl.lit(summary["p_win"], pl.Float64).alias("p_win"),
        pl.lit(summary["p_loss"], pl.Float64).alias("p_loss"),
        *([pl.lit(summary["expected_margin"], pl.Float64).alias("expected_margin")] if scored else []))
    write_parquet([frame], files[tier], {**meta, "positions": 1, "moves": int(len(root.keys)),
                                         "inside_moves": 0, "chance": 1})
    child_tiers = sorted(int(t) for t in unique(tiers_of(game, root.keys, slices)).tolist())
    return {**summary, "children": child_tiers, "setups": int(len(root.keys))}


def read_setups(folder: Path) -> pl.DataFrame | None:
    """The setups table of a tiered table (``None`` when it has none)."""
    path = Path(folder) / SETUPS_FILE
    if not path.exists():
        return None
    df, _ = read_parquet(path)
    return df


def verify_root(game: Game, folder: Path, meta: dict[str, Any], files: dict[int, Path]) -> list[str]:
    """Check the setup tier against the tiers of the setups: the setups table lists the root's
    outcomes with the values of their rows, and the start's expected result, probabilities and
    expected margin are their weighted sums."""
    root = setup_root(game, bool(meta.get("symmetry", True)))
    problems: list[str] = []
    slices = int(meta.get("tier_slices", 1))
    rows = _setup_rows(root, lambda keys: tiers_of(game, keys, slices), files, bool(game.scored))
    want = root_summary(root, rows)
    tier = int(meta["root_tier"])
    got = read_columns(files[tier]).row(0, named=True)
    if int(got["key"]) != root.key or int(got["kind"]) != int(NodeKind.CHANCE):
        return [f"tier {tier} (setup): its row is not the start's chance node"]
    for name, value in want.items():
        if abs(float(got[name]) - value) > EXPECTED_TOL:
            problems.append(f"tier {tier} (setup): stored {name} {got[name]!r} but its setups give {value!r}")
    table = read_setups(folder)
    if table is None:
        return problems + [f"{Path(folder) / SETUPS_FILE} is missing"]
    if not table.equals(_setups_table(game, root, rows)):
        problems.append(f"{SETUPS_FILE}: its rows differ from the setups' rows in their tiers")
    return problems
