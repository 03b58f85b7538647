"""The report of a self-play estimate (:func:`solver.players.selfplay.estimate`): every number in
it is **estimated** (a sample of self-play games, with 95% intervals) and says so; the
calibration of the player on an exactly solved preset is quoted when one is on file
(``pyramids calibrate`` writes it).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from analysis import plots
from analysis.report import Document, Section, save_document
from solver.core.game import Result


def _safe(text: str, limit: int | None = 40) -> str:
    """``text`` made safe for a file name (cut at ``limit`` characters unless ``None``)."""
    return re.sub(r"[^A-Za-z0-9.+=-]+", "-", text).strip("-")[:limit]


def estimate_dir(reports: Path, game: Any, est: Any, compared: list[str] | None = None) -> Path:
    """``<reports>/<game>/estimate-<player1>-vs-<player2>-<hash>/``: the hash covers the variant,
    the players with their options, the number of games, the seed, the move cap and the players
    compared with them (``--compare-budget``, ``--compare-depth``), if any."""
    ident = json.dumps([game.variant.as_text(), est.player1, est.player2, est.games, est.seed, est.max_moves]
                       + ([list(compared)] if compared else []), sort_keys=True)
    h = hashlib.sha1(ident.encode()).hexdigest()[:6]
    name = f"estimate-{_safe(est.player1.split('(')[0])}-vs-{_safe(est.player2.split('(')[0])}-{h}"
    return Path(reports) / game.name / name


def calibration_path(reports: Path, game: Any, player: str) -> Path:
    """Where ``pyramids calibrate`` keeps a player's calibration on ``game``'s exact presets: the
    player's description made safe for a file name; past 40 characters its first 32 and a hash of
    the whole description (cut alone, ``simultaneous=uniform`` and ``simultaneous=ucb`` shared a
    file)."""
    name = _safe(player, None)
    if len(name) > 40:
        name = f"{name[:32]}-{hashlib.sha1(player.encode()).hexdigest()[:7]}"
    return Path(reports) / game.name / "calibrations" / f"{name}.json"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _strength_section(game: Any, est: Any, compared: list[Any], calibrations: dict[str, dict[str, Any]],
                      first: str) -> Section:
    """The estimate beside the same games played at other budgets (``--compare-budget``) or depths
    (``--compare-depth``), weakest first, with each player's calibration when one is on file."""
    rows = sorted([est, *compared], key=lambda e: _strength(e.player1))
    depths = all(_strength(e.player1)[0] == "depth" for e in rows)
    unit = "plies searched" if depths else "playouts a move"
    sec = Section("How the verdict moves with the player's strength (estimated)",
                  f"The same {est.games:,} games (seeds) played by the same players at each "
                  f"{'depth' if depths else 'budget'} ({unit}), weakest first: {first}'s results with 95% "
                  "intervals, and how often the player keeps the exact value on a solved preset (its "
                  "calibration, where one is on file).")
    table = []
    for e in rows:
        cal = calibrations.get(e.player1)
        kept = f"{_pct(cal['share_kept'][0])} of {cal['moves']:,} moves" if cal else "not on file"
        w, wlo, whi = e.shares["win"]
        l, llo, lhi = e.shares["loss"]
        who = e.player1 if e.player1 == e.player2 else f"{e.player1} vs {e.player2}"
        table.append([who + (" (this report)" if e is est else ""),
                      f"{_pct(w)} [{_pct(wlo)}, {_pct(whi)}]", f"{_pct(l)} [{_pct(llo)}, {_pct(lhi)}]",
                      _pct(e.shares["tie"][0]), _pct(e.shares["unfinished"][0]), f"{e.seconds / 60:.1f}", kept])
    sec.table(["players", f"{first} wins", f"{first} loses", "ties", "unfinished", "minutes", "calibration: kept"],
              table)
    on = sorted({c["label"] for c in calibrations.values()})
    if on:
        sec.note("Calibrations on " + ", ".join(f"`{x}`" for x in on) + " (solved exactly; `pyramids calibrate`).")
    weak, strong = rows[0], rows[-1]
    (a, alo, ahi), (b, blo, bhi) = weak.shares["win"], strong.shares["win"]
    overlap = alo <= bhi and blo <= ahi
    sec.note(f"From {_strength(weak.player1)[1]:,} to {_strength(strong.player1)[1]:,} {unit} {first}'s win "
             f"share moves by {100 * (b - a):+.1f} points; the two 95% intervals "
             + (f"overlap: these {'depths' if depths else 'budgets'} do not tell the verdicts apart." if overlap else
                "do not overlap: the verdict depends on the player's strength."))
    return sec


def _strength(player: str) -> tuple[str, int]:
    """What makes a player's description stronger: the playouts a move (``mcts(budget=500,
    ...)``) or the plies searched (``alphabeta(depth=4)``), ``("", 0)`` if neither."""
    for what in ("budget", "depth"):
        m = re.search(rf"\b{what}=(\d+)", player)
        if m:
            return what, int(m.group(1))
    return "", 0


def build_estimate_report(game: Any, est: Any, *, command: str, calibration: dict[str, Any] | None,
                          compared: list[Any] | None = None,
                          calibrations: dict[str, dict[str, Any]] | None = None) -> Document:
    from solver.core.stats import wilson

    seats = tuple(getattr(game, "seat_names", None) or ("player 1", "player 2"))
    first = seats[0]
    label = game.variant.label()
    doc = Document(
        f"Balance estimate (ESTIMATED, self-play): {game.display_name()}",
        f"{getattr(game, 'title', '') or game.name}. Variant: `{label}`. **Estimated** by self-play, "
        f"not solved: {est.games:,} "
        f"games of {est.player1} (first seat) against {est.player2}, seed {est.seed}, at most "
        f"{est.max_moves} choices a game. Every share below is a sample estimate with its 95% "
        f"interval (Wilson); it describes these players, and perfect play only as far as the "
        f"players are strong (see the calibration). Made with `{command}`.")
    sh = est.shares
    w, wlo, whi = sh["win"]
    l, llo, lhi = sh["loss"]
    sec = Section("Verdict (estimated)",
                  f"**Estimated**: {first} (moves first) wins {_pct(w)} of the games, 95% interval "
                  f"[{_pct(wlo)}, {_pct(whi)}]; loses {_pct(l)} [{_pct(llo)}, {_pct(lhi)}].")
    rows = []
    for k, name in (("win", f"{first} wins"), ("loss", f"{seats[1] if len(seats) > 1 else 'other'} wins"),
                    ("tie", "tie"), ("unfinished", f"unfinished (move cap {est.max_moves})")):
        s, lo, hi = sh[k]
        rows.append([name, est.counts()[k], _pct(s), f"[{_pct(lo)}, {_pct(hi)}]"])
    sec.table(["result", "games", "estimated share", "95% interval"], rows)
    if est.mean_margin is not None and est.margin_interval is not None:
        lo, hi = est.margin_interval
        sec.note(f"Estimated score margin of {first}: {est.mean_margin:+.2f}, 95% interval [{lo:+.2f}, {hi:+.2f}].")
    doc.sections.append(sec)

    records = est.records
    if len(records) >= 2:
        won = np.array([r.first_result == Result.WIN for r in records], dtype=float)
        n = np.arange(1, len(won) + 1)
        cum = np.cumsum(won)
        bands = np.array([wilson(int(c), int(k)) for c, k in zip(cum, n)])
        sec = Section("How the interval narrows",
                      f"{first}'s win share after each number of games, with its 95% interval: the "
                      "width falls like one over the square root of the games.")

        def draw(ax):
            ax.fill_between(n, bands[:, 0], bands[:, 1], alpha=0.3, color=plots.VALUE_COLOURS["win"],
                            label="95% interval (Wilson)")
            ax.plot(n, cum / n, color=plots.VALUE_COLOURS["win"], label="estimate")
            ax.set_xscale("log")
            ax.set_ylim(0, 1)
            ax.legend(loc="lower right", fontsize=8)
            return plots._finish(ax, f"Estimated share of games {first} wins", "games played",
                                 "share of games")

        doc.new_figure("estimate_narrowing", draw)
        sec.figure("estimate_narrowing", "The estimate and its 95% interval as games are added.")
        sec.note(f"Interval width after {len(won):,} games: {100 * (whi - wlo):.1f} points.")
        doc.sections.append(sec)

    sec = Section("Game length and openings (estimated)",
                  (f"Finished games last {est.mean_plies:.1f} choices on average (sd {est.sd_plies:.1f})."
                   if est.mean_plies is not None else "No game finished within the move cap."))
    if est.openings:
        sec.table(["first move", "games", f"{first} wins in them"],
                  [[o.move, o.games, _pct(o.win_share)] for o in est.openings])
    doc.sections.append(sec)

    cal = Section("Strength of the player (calibration)", "")
    if calibration is None:
        cal.reading = (f"No calibration of {est.player1} is on file: `pyramids calibrate {game.name} --preset "
                       f"<an exactly solved preset> --player ...` measures how often its moves keep the exact "
                       "value on a small board.")
    else:
        s, lo, hi = calibration["share_kept"]
        cal.reading = (f"On {calibration['label']} (solved exactly), {calibration['player']} kept the exact "
                       f"value with {_pct(s)} of its moves [{_pct(lo)}, {_pct(hi)}] over {calibration['games']} "
                       f"self-play games ({calibration['blunders']} blunders of {calibration['moves']} moves).")
        if calibration.get("decisive"):  # files written before the decisive count have none
            d, dlo, dhi = calibration["share_decisive"]
            cal.reading += (f" Counting only the {calibration['decisive']} decisive moves (where some move would "
                            f"lose value): {_pct(d)} [{_pct(dlo)}, {_pct(dhi)}]; "
                            f"{calibration['clean_games']} of its {calibration['games']} games had no blunder.")
        if calibration.get("secret_choices"):  # games with secret choices, files written since they are measured
            cal.reading += (f" At the {calibration['secret_choices']} secret choices met, its mixes put "
                            f"{_pct(calibration['secret_support_share'])} of their mass on the exact optimal supports, "
                            f"and a best reply would take {calibration['secret_exploitability']:.3f} on average (at "
                            f"most {calibration['secret_exploitability_max']:.3f}) off the exact expected result.")
    doc.sections.append(cal)
    if compared:
        doc.sections.append(_strength_section(game, est, compared, calibrations or {}, first))
    sec = Section("Words used", "")
    sec.terms([("estimated", "from a sample of self-play games, with a 95% interval; not exact."),
               ("exact", "from a solved table (none in this report but the calibration's reference)."),
               ("Wilson interval", "a 95% confidence interval for a proportion, reliable for small samples.")])
    doc.sections.append(sec)
    return doc


def _calibration(reports: Path, game: Any, player: str) -> dict[str, Any] | None:
    path = calibration_path(reports, game, player)
    if path.exists():
        try:
            data = json.loads(path.read_text())
        except ValueError:
            return None
        return data if data.get("player") == player else None  # (never another player's numbers)
    return None


def write_estimate_report(game: Any, est: Any, out_dir: Path, *, command: str,
                          reports: Path | None = None, compared: list[Any] | None = None) -> Path:
    """Write the estimate's report into ``out_dir`` (and ``estimate.json`` with its numbers);
    ``compared``: the same games at other budgets (``strengths`` in the JSON)."""
    out_dir = Path(out_dir)
    root = reports or out_dir.parent.parent
    cal = _calibration(root, game, est.player1)
    compared = list(compared or [])
    cals = {e.player1: c for e in [est, *compared] if (c := _calibration(root, game, e.player1)) is not None}
    doc = build_estimate_report(game, est, command=command, calibration=cal, compared=compared, calibrations=cals)
    md = save_document(doc, out_dir)
    data = {**est.to_dict(), "label": game.variant.label(), "variant": game.variant.as_text(),
            "estimated": True, "command": command}
    if compared:
        data["strengths"] = [e.to_dict() for e in compared]
    (out_dir / "estimate.json").write_text(json.dumps(data, indent=1, sort_keys=True))
    return md


def write_estimate_sweep(game_name: str, names: list[str], results: list[tuple[Any, Any]], reports: Path, *,
                         command: str) -> tuple[Path, str]:
    """``tune --estimate``: the variants' self-play estimates side by side, every number marked
    estimated with its 95% interval; a figure of the first player's win share with intervals.
    Returns the report's path and the comparison as text."""
    ident = json.dumps([[g.variant.as_text(), e.player1, e.player2, e.games, e.seed] for g, e in results],
                       sort_keys=True)
    out_dir = Path(reports) / game_name / f"tune-estimate-{'+'.join(names)}-{hashlib.sha1(ident.encode()).hexdigest()[:6]}"
    game0, est0 = results[0]
    seats = tuple(getattr(game0, "seat_names", None) or ("player 1", "player 2"))
    rows, text = [], []
    head = [*names, f"{seats[0]} wins (est.)", "95% interval", "loses (est.)", "95% interval", "ties",
            "unfinished", "mean length"]
    for g, e in results:
        w, wlo, whi = e.shares["win"]
        l, llo, lhi = e.shares["loss"]
        row = [g.variant.as_text()[n] for n in names] + [
            _pct(w), f"[{_pct(wlo)}, {_pct(whi)}]", _pct(l), f"[{_pct(llo)}, {_pct(lhi)}]",
            _pct(e.shares["tie"][0]), _pct(e.shares["unfinished"][0]),
            "-" if e.mean_plies is None else f"{e.mean_plies:.1f}"]
        rows.append(row)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    for r in [head, *rows]:
        text.append("  ".join(str(x).ljust(wd) for x, wd in zip(r, widths)))
    doc = Document(
        f"Rules tuning (ESTIMATED, self-play): {game0.short_title}, varying {', '.join(names)}",
        f"Each variant **estimated** by {est0.games:,} self-play games of {est0.player1} against "
        f"{est0.player2} (seed {est0.seed}, at most {est0.max_moves} choices a game); nothing here "
        f"is exact. Every share carries its 95% Wilson interval: two variants differ only where "
        f"their intervals do not overlap. Made with `{command}`.")
    sec = Section("The variants side by side (estimated)",
                  f"{seats[0]} moves first; shares of the self-play games.")
    sec.table(head, rows)

    def draw(ax):
        x = np.arange(len(results))
        mid = np.array([e.shares["win"][0] for _, e in results])
        lo = np.array([e.shares["win"][1] for _, e in results])
        hi = np.array([e.shares["win"][2] for _, e in results])
        ax.errorbar(x, mid, yerr=[mid - lo, hi - mid], fmt="o", color=plots.VALUE_COLOURS["win"], capsize=4)
        ax.set_xticks(x, [", ".join(f"{n}={g.variant.as_text()[n]}" for n in names) for g, _ in results],
                      rotation=20, ha="right", fontsize=8)
        ax.set_ylim(0, 1)
        return plots._finish(ax, f"Estimated share of games {seats[0]} wins (95% intervals)", "variant",
                             "share of games")

    doc.new_figure("tune_estimate", draw)
    sec.figure("tune_estimate", f"{seats[0]}'s estimated win share per variant with its 95% interval.")
    doc.sections.append(sec)
    path = save_document(doc, out_dir)
    return path, "\n".join(text)
