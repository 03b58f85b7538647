"""The explorer: a local web page to walk the game tree of any solved variant (``pyramids serve``).

Built on Flask (the Pallets project's small, well-kept WSGI framework: routing, escaping templates
and a test client, with nothing to configure). Pages are rendered on the server, so every state is
a plain link: the board as a picture (:mod:`analysis.boards`), every legal move coloured by its
value for the mover (win green, tie yellow, draw blue, lose red; expected results and
probabilities in chance games; the optimal mixed strategies at secret choices), undo / redo /
start, the value history of the moves played, the principal variation from here, and a link that
reproduces the position (``?moves=...``). It reads tables and never writes them; it serves only
its own page (no script, font or image is loaded from anywhere).
"""

from __future__ import annotations

import dataclasses
import json
import re
from functools import lru_cache
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from flask import Flask, Response, request

from solver.errors import PyramidsError

#: value -> colour of the explorer and the value history
COLOURS = {"win": "#1a9641", "tie": "#d9b300", "draw": "#2c7bb6", "lose": "#d7191c", None: "#777777"}

CSS = """
body { font-family: system-ui, sans-serif; margin: 1.2em; color: #222; max-width: 72em; }
a { color: #14509e; }
.row { display: flex; flex-wrap: wrap; gap: 2em; align-items: flex-start; }
.board svg { width: 26em; height: auto; border: 1px solid #ccc; background: #fff; }
table { border-collapse: collapse; }
td, th { padding: 0.15em 0.6em; text-align: left; }
.move { font-family: monospace; font-weight: bold; text-decoration: none; padding: 0.1em 0.4em;
        border-radius: 0.3em; color: #fff; }
.value-win { background: #1a9641; } .value-tie { background: #b89600; }
.value-draw { background: #2c7bb6; } .value-lose { background: #d7191c; }
.value-none { background: #555; }
.nav a, .nav span { margin-right: 1em; }
.muted { color: #777; }
.error { color: #b00; font-weight: bold; }
pre { background: #f6f6f6; padding: 0.5em; overflow-x: auto; }
.matrix td, .matrix th { text-align: center; border: 1px solid #ddd; font-family: monospace; }
.matrix td.cell a { color: #111; text-decoration: none; display: block; }
.matrix td.support { outline: 3px solid #222; outline-offset: -3px; font-weight: bold; }
.matrix .mix { background: #f3f3f3; }
.side { flex: 1 1 0; min-width: 22em; }
.side .board svg { width: 100%; max-width: 26em; }
.legend { font-size: 0.85em; color: #444; max-width: 26em; }
.legend .key { white-space: nowrap; margin-right: 0.8em; }
.legend i { display: inline-block; width: 0.9em; height: 0.9em; border: 1px solid #555;
            vertical-align: -0.1em; margin-right: 0.3em; }
.legend i.dot { border-radius: 50%; }
"""


#: characters of a variant id kept as they are in links (its parameters stay readable)
_SAFE = "=,+~.-_"


class ExplorerError(Exception):
    """A bad request: shown as a short page with ``status`` and a link back."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def find_tables(root: Path) -> list[dict[str, Any]]:
    """The solved variants under ``root``: ``{"game", "variant_id", "label", "meta"}`` each
    (whole-graph tables and finished tiered tables; work folders and damaged files are skipped)."""
    from solver.tables import read_meta

    out = []
    if not root.is_dir():
        return out
    for game_dir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for folder in sorted(p for p in game_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
            if folder.name.endswith(".tiered"):
                continue
            try:
                if (folder / "tiers.json").exists():
                    meta = json.loads((folder / "tiers.json").read_text())
                elif (folder / "positions.parquet").exists():
                    meta = read_meta(folder / "positions.parquet")
                else:
                    continue
            except (OSError, ValueError, PyramidsError):
                continue
            if meta.get("game") != game_dir.name:
                continue
            out.append({"game": game_dir.name, "variant_id": folder.name,
                        "label": meta.get("label") or folder.name, "meta": meta})
    return out


def _value_class(value: str | None) -> str:
    return f"value-{value}" if value else "value-none"


def _move_text(m: Any) -> str:
    if m.value is None:
        prob = f"p={m.probability:.3f} " if m.probability is not None else ""
        return f"{prob}expected {m.expected:+.4f}"
    rem = "" if m.remoteness is None else f" in {m.remoteness}"
    margin = "" if m.margin is None else f", margin {m.margin:+d}"
    prob = f" (p={m.probability:.3f})" if m.probability is not None else ""
    return f"{m.value}{rem}{margin}{prob}"


def target_cell(picture: Any, move: str) -> int | None:
    """The cell a move's name leads to, when it names one: the last square (``AL@b2``,
    ``b2-b3``, ``plant rS@b2``) on a grid, the petal after ``@`` or ``-`` (``spawn@3``, ``2-3>4``)
    on a ring; ``None`` otherwise (``pass``, rolls, orders)."""
    if picture.layout == "grid":
        found = re.findall(r"(?<![A-Za-z])([a-z])(\d+)(?!\d)", move)
        if not found:
            return None
        letter, digits = found[-1]
        col, row = ord(letter) - ord("a"), int(digits) - 1
        return row * picture.cols + col if 0 <= col < picture.cols and 0 <= row < picture.rows else None
    if picture.layout == "ring":
        m = re.search(r"[@-](\d+)", move)
        return int(m.group(1)) if m and int(m.group(1)) < picture.cols else None
    return None


def history_svg(points: list[tuple[int, Any]]) -> str:
    """The value history: for each position along the moves played (x: move number), its
    remoteness (y; draws at the top, marked) coloured by its value for the side to move; chance
    games plot the expected result of the side to move instead."""
    w, h, pad = 520, 170, 28
    n = max(len(points) - 1, 1)
    stochastic = any(pv.value is None and pv.expected is not None for _, pv in points)
    rems = [pv.remoteness for _, pv in points if pv.remoteness is not None]
    top = max(rems, default=1) or 1

    def y_of(pv: Any) -> float:
        if stochastic:
            e = pv.expected if pv.expected is not None else 0.0
            return pad + (1 - (e + 1) / 2) * (h - 2 * pad)
        if pv.remoteness is None:  # endless play: drawn on the top line
            return pad - 12
        return pad + (1 - pv.remoteness / top) * (h - 2 * pad)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="history" viewBox="0 0 {w} {h}" '
             f'width="{w}" height="{h}" role="img" aria-label="value history">',
             f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="#999"/>',
             f'<text x="{pad}" y="{h - 8}" font-size="11">move 0</text>',
             f'<text x="{w - pad - 50}" y="{h - 8}" font-size="11">move {len(points) - 1}</text>',
             f'<text x="2" y="{pad}" font-size="11">{"+1" if stochastic else f"{top}"}</text>']
    prev = None
    for i, pv in points:
        x = pad + (w - 2 * pad) * (i / n)
        y = y_of(pv)
        colour = COLOURS.get(pv.value, COLOURS[None])
        if prev is not None:
            parts.append(f'<line x1="{prev[0]:.1f}" y1="{prev[1]:.1f}" x2="{x:.1f}" y2="{y:.1f}" '
                         'stroke="#bbb"/>')
        label = pv.value or f"{pv.expected:+.3f}"
        parts.append(f'<circle class="point" data-move="{i}" data-value="{escape(str(label))}" '
                     f'cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{colour}"><title>move {i}: '
                     f'{escape(pv.describe(4))}</title></circle>')
        prev = (x, y)
    parts.append("</svg>")
    return "".join(parts)


def _with_moves(picture: Any, options: list[Any]) -> Any:
    """The picture with a dot per legal move on the cell it leads to, coloured by its value."""
    marks = []
    for m in options:
        cell = target_cell(picture, m.move)
        if cell is not None and m.value is not None:
            marks.append((cell, COLOURS[m.value], f"{m.move}: {_move_text(m)}"))
    return dataclasses.replace(picture, marks=tuple(marks)) if marks else picture


def _legend_html(picture: Any) -> str:
    """The legend under the board: the pyramids' colours (each pyramid also carries its owner's
    number or letter), the last move's outline, and the dots of the legal moves by value."""
    from analysis.boards import legend

    def swatch(fill: str) -> str:  # no swatch for a symbol said in words
        return f"<i style='background:{fill}'></i>" if fill else ""

    items = [f"<span class='key'>{swatch(fill)}{escape(words)}</span>" for fill, words in legend(picture)]
    if picture.marks:
        shown = {c for _, c, _ in picture.marks}
        items.append("dots: a legal move into that cell, by its value for the mover: " + " ".join(
            f"<span class='key'><i class='dot' style='background:{c}'></i>{v}</span>"
            for v, c in COLOURS.items() if v is not None and c in shown))
    return f"<p class='legend'>{' '.join(items)}</p>" if items else ""


def _result_colour(v: float) -> str:
    """A background for an expected result in [-1, 1] (player 1's view): red, white, green."""
    t = max(-1.0, min(1.0, float(v)))
    lose, win = (215, 25, 28), (26, 150, 65)
    end = win if t >= 0 else lose
    rgb = [round(255 + (c - 255) * abs(t) * 0.75) for c in end]
    return "#" + "".join(f"{c:02x}" for c in rgb)


def payoff_matrix_html(sol: Any, state: Any, href: Any, ranges: dict | None) -> str:
    """A secret simultaneous choice as its payoff matrix: rows player 1's actions, columns player
    2's, each cell player 1's expected result (coloured) linking to ``href(joint move name)``; each
    player's stored optimal mix on the margins with its range over all optimal strategies
    (``ranges``: :meth:`Solution.strategy_ranges`, computed once by the page); the cells both
    stored mixes play outlined."""
    from solver.api import SAME_PROBABILITY as same

    rows, cols, a = sol.payoff_matrix(state)
    mix = sol.lookup(state).strategies or {}
    ranges = ranges or {}
    x = [mix.get("1", {}).get(n, 0.0) for n in rows]
    y = [mix.get("2", {}).get(n, 0.0) for n in cols]
    names = [m.move for m in sol.moves(state)]  # joint choices, row-major

    def share(p: str, n: str, v: float) -> str:
        lo, hi = ranges.get(p, {}).get(n, (v, v))
        extra = "" if hi - lo <= same else f"<br><small>{lo:.2f}&ndash;{hi:.2f}</small>"
        return f"{v:.3f}{extra}"

    head = ("<tr><th>player 1 \\ player 2</th>" + "".join(f"<th>{escape(c)}</th>" for c in cols)
            + "<th class='mix'>player 1's mix</th></tr>")
    body = []
    for i, r in enumerate(rows):
        cells = []
        for j in range(len(cols)):
            support = x[i] > same and y[j] > same
            cells.append(f"<td class='cell{' support' if support else ''}' style='background:"
                         f"{_result_colour(a[i, j])}'><a href='{href(names[i * len(cols) + j])}' "
                         f"title='{escape(names[i * len(cols) + j])}'>{a[i, j]:+.3f}</a></td>")
        body.append(f"<tr><th>{escape(r)}</th>{''.join(cells)}<td class='mix'>{share('1', r, x[i])}</td></tr>")
    foot = ("<tr><th class='mix'>player 2's mix</th>"
            + "".join(f"<td class='mix'>{share('2', c, y[j])}</td>" for j, c in enumerate(cols)) + "<td></td></tr>")
    return (f"<table id='matrix' class='matrix'>{head}{''.join(body)}{foot}</table>"
            "<p class='muted'>Each cell: player 1's expected result when both play these orders and "
            "then perfectly (green +1 win, red -1 loss); click a cell to play it. Outlined: the cells "
            "the stored optimal mixes play. Margins: each player's optimal mix"
            + (" (and, in small type, each order's range over all optimal mixes, which are not unique here)"
               if any(hi - lo > same for rr in ranges.values() for lo, hi in rr.values()) else "")
            + ".</p>")


def create_app(tables: str | Path = "tables") -> Flask:
    """The explorer's Flask app over the tables under ``tables`` (read-only)."""
    root = Path(tables)
    app = Flask(__name__)

    @lru_cache(maxsize=8)
    def solution(game_name: str, variant_id: str):
        from solver.api import load
        from solver.games import make_game

        entry = next((e for e in find_tables(root) if e["game"] == game_name and e["variant_id"] == variant_id),
                     None)
        if entry is None:
            from solver.games import list_games

            games = [e.name for e in list_games() if e.cls is not None]
            if game_name not in games:
                raise ExplorerError(f"there is no game {game_name!r}; the games are {', '.join(games)}", 404)
            raise ExplorerError(f"no solved variant {game_name}/{variant_id} under {root}; "
                                f"solve it with `pyramids solve {game_name} --set ...` first", 404)
        meta = entry["meta"]
        game = make_game(game_name, meta["variant"])
        return load(game, out=root, symmetry=bool(meta.get("symmetry", True)))

    def page(title: str, body: str, status: int = 200) -> Response:
        html = (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{escape(title)}</title>"
                f"<style>{CSS}</style></head><body>{body}</body></html>")
        return Response(html, status=status, mimetype="text/html")

    @app.errorhandler(ExplorerError)
    def explorer_error(exc: ExplorerError):
        return page("pyramids explorer: error", f"<p class='error'>{escape(str(exc))}</p>"
                    "<p><a href='/'>back to the solved variants</a></p>", exc.status)

    @app.errorhandler(404)
    def not_found(_exc):
        return page("pyramids explorer: not found", "<p class='error'>no such page</p>"
                    "<p><a href='/'>back to the solved variants</a></p>", 404)

    @app.errorhandler(Exception)
    def any_error(exc: Exception):  # never a traceback page
        if isinstance(exc, ExplorerError):
            return explorer_error(exc)
        status = getattr(exc, "code", 500) if isinstance(getattr(exc, "code", None), int) else 500
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return page("pyramids explorer: error", f"<p class='error'>{escape(msg)}</p>"
                    "<p><a href='/'>back to the solved variants</a></p>", status)

    @app.route("/")
    def index():
        from solver.errors import PyramidsError
        from solver.games import make_game

        entries = find_tables(root)
        if not entries:
            body = (f"<h1>pyramids explorer</h1><p>No solved tables under <code>{escape(str(root))}</code>. "
                    "Solve a variant first, for example <code>pyramids solve override --preset 3x3</code>, "
                    "then reload this page (or start the explorer with <code>--tables DIR</code>).</p>")
            return page("pyramids explorer", body)
        rows = []
        for e in entries:
            counts = e["meta"].get("counts", {})
            href = f"/v/{quote(e['game'])}/{quote(e['variant_id'], safe=_SAFE)}"
            try:
                name = make_game(e["game"], e["meta"]["variant"]).display_name()
            except PyramidsError:  # a plug-in no longer installed, or parameters since renamed
                name = e["game"]
            rows.append(f"<tr><td><a class='variant' href='{href}'>{escape(name)}</a></td>"
                        f"<td class='muted'>{escape(e['label'])}</td>"
                        f"<td>{counts.get('positions', 0):,} positions</td></tr>")
        body = ("<h1>pyramids explorer</h1><p>Solved variants (pick one to walk its game tree):</p>"
                f"<table>{''.join(rows)}</table>")
        return page("pyramids explorer", body)

    @app.route("/compare")
    def compare():
        """Two variants of one game side by side after the same moves (a rules change: what does
        it do to this position?): ``/compare?a=<game>/<variant-id>&b=<game>/<variant-id>&moves=...``."""
        from analysis.boards import svg

        specs = [request.args.get(k, "") for k in ("a", "b")]
        if not all(specs):
            raise ExplorerError("compare needs two variants: /compare?a=<game>/<variant-id>&"
                                "b=<game>/<variant-id> (the paths of two variant pages)", 400)
        parts = [spec.strip("/").removeprefix("v/").split("/", 1) for spec in specs]
        if any(len(pt) != 2 for pt in parts):
            raise ExplorerError(f"a variant is <game>/<variant-id>, got {specs[0]!r} and {specs[1]!r}", 400)
        if parts[0][0] != parts[1][0]:
            raise ExplorerError(f"{parts[0][0]} and {parts[1][0]} are different games: compare two variants "
                                "of one game", 400)
        moves = [m for m in request.args.get("moves", "").split(",") if m.strip()]
        columns = []
        for game_name, variant_id in parts:
            sol = solution(game_name, variant_id)
            game = sol.game
            head = (f"<h2>{escape(game.display_name())}</h2><p class='muted'>{escape(game.variant.label())}</p>")
            try:
                state = game.play(moves, game.initial_state()) if moves else game.initial_state()
            except PyramidsError as exc:
                columns.append(f"<div class='side'>{head}<p class='error'>these moves cannot be played "
                               f"here: {escape(str(exc))}</p></div>")
                continue
            pv = sol.lookup(state)
            best = sol.moves(state)[:8]
            items = "".join(f"<li><span class='move {_value_class(m.value)}'>{escape(m.move)}</span> "
                            f"{escape(_move_text(m))}</li>" for m in best)
            page_link = (f"/v/{quote(game_name)}/{quote(variant_id, safe=_SAFE)}?"
                         f"{urlencode({'moves': ','.join(moves)})}")
            columns.append(f"<div class='side'>{head}<div class='board'>{svg(game.picture(state))}</div>"
                           f"<p class='value {_value_class(pv.value)}' style='color:#fff;padding:0.3em'>"
                           f"{escape(pv.describe(4))}</p><h3>Best moves</h3><ol>{items}</ol>"
                           f"<p><a href='{page_link}'>walk on from here</a></p></div>")
        body = (f"<h1>Two variants side by side</h1><p class='nav'><a href='/'>all variants</a></p>"
                f"<p>After {escape(', '.join(moves)) if moves else 'no moves (the start)'}:</p>"
                f"<div class='row'>{''.join(columns)}</div>")
        return page("compare - pyramids explorer", body)

    @app.route("/v/<game_name>/<variant_id>")
    def variant(game_name: str, variant_id: str):
        from analysis.boards import svg

        sol = solution(game_name, variant_id)
        game = sol.game
        moves = [m for m in request.args.get("moves", "").split(",") if m.strip()]
        redo = [m for m in request.args.get("redo", "").split(",") if m.strip()]
        base = f"/v/{quote(game_name)}/{quote(variant_id, safe=_SAFE)}"

        def link(ms: list[str], rd: list[str] | None = None) -> str:
            q = {"moves": ",".join(ms)}
            if rd:
                q["redo"] = ",".join(rd)
            return f"{base}?{urlencode(q)}"

        states = [game.initial_state()]
        for i, text in enumerate(moves):
            try:
                states.append(game.play([text], states[-1]))
            except PyramidsError as exc:
                raise ExplorerError(f"move {i + 1} ({text!r}) cannot be played: {exc}", 400) from None
        state = states[-1]
        pv = sol.lookup(state)
        options = sol.moves(state)
        nav = [f"<a id='start' href='{link([])}'>&laquo; start</a>"]
        nav.append(f"<a id='undo' href='{link(moves[:-1], moves[-1:] + redo)}'>&#9664; undo</a>" if moves
                   else "<span class='muted'>&#9664; undo</span>")
        nav.append(f"<a id='redo' href='{link(moves + redo[:1], redo[1:])}'>redo &#9654;</a>" if redo
                   else "<span class='muted'>redo &#9654;</span>")
        nav.append(f"<a id='permalink' href='{link(moves)}'>link to this position</a>")
        nav.append("<a href='/'>all variants</a>")
        rows = []
        grouped = [(m, []) for m in options] if request.args.get("all") else sol.move_groups(state, options)
        hidden = len(options) - len(grouped)
        for m, others in grouped:
            cls = _value_class(m.value)
            same = (f" <span class='muted' title='{escape(', '.join(others))}'>(and "
                    f"{len(others)} symmetric)</span>" if others else "")
            rows.append(f"<tr><td><a class='move {cls}' data-value='{escape(str(m.value))}' "
                        f"data-remoteness='{'' if m.remoteness is None else m.remoteness}' "
                        f"href='{link(moves + [m.move])}'>{escape(m.move)}</a></td>"
                        f"<td>{escape(_move_text(m))}{same}</td></tr>")
        if hidden:
            rows.append(f"<tr><td colspan='2' class='muted'>{hidden} moves that lead to the same "
                        f"positions as others (up to symmetry) are counted beside them: <a id='all-moves' "
                        f"href='{link(moves)}&amp;all=1'>list every move</a></td></tr>")
        kind_title = {"chance": "Outcomes (probability; value for the side to move)",
                      "simultaneous": "Joint choices (player 1's / player 2's; probability under optimal play)",
                      }.get(pv.kind, "Moves (value for the mover after playing it, best first)")
        strategies = ""
        ranges = sol.strategy_ranges(state) if pv.kind == "simultaneous" else None
        if pv.strategies:
            strategies = "<h3>Optimal mixed strategies</h3><table>" + "".join(
                f"<tr><th>player {p}</th><td>" + ", ".join(f"{escape(a)} {x:.3f}" for a, x in mix.items())
                + "</td></tr>" for p, mix in pv.strategies.items()) + "</table>"
            from solver.api import SAME_PROBABILITY as same

            if ranges and any(hi - lo > same for r in ranges.values() for lo, hi in r.values()):
                strategies += ("<p class='note'>The optimal mix is not unique: the one above is one of many. "
                               "Over all optimal strategies each action's probability lies in:</p><table "
                               "class='ranges'>" + "".join(
                                   f"<tr><th>player {p}</th><td>" + ", ".join(
                                       f"{escape(a)} {lo:.3f}" + ("" if hi - lo <= same else f"&ndash;{hi:.3f}")
                                       for a, (lo, hi) in r.items()) + "</td></tr>" for p, r in ranges.items())
                               + "</table>")
        from solver.api import TieredSolution

        # every step of the line looks up each move's child: on a tiered table that reads tier
        # files, so the line shown is shorter there
        line, ending = sol.line(state, max_plies=8 if isinstance(sol, TieredSolution) else 60)
        pv_items = "".join(
            f"<li><span class='move {_value_class(st.value)}'>{escape(st.move)}</span> player "
            f"{st.player + 1}: {escape(_move_text(st))}"
            + ("" if st.why == "best" else f" <i>({escape(st.why)})</i>") + "</li>" for st in line)
        end_text = {"game over": "the game is over", "repeats": "a position repeats: endless play",
                    "limit": "(the line continues: play its moves to follow it)"}[ending]
        history = history_svg([(i, sol.lookup(s)) for i, s in enumerate(states)])
        played = " ".join(f"<a href='{link(moves[:i + 1])}'>{i + 1}.&nbsp;{escape(m)}</a>"
                          for i, m in enumerate(moves)) or "<span class='muted'>none yet</span>"
        shown = _with_moves(game.picture(state), options)
        body = (
            f"<h1>{escape(game.display_name())}</h1>"
            f"<p class='muted'>{escape(sol.meta.get('label', game.variant.label()))}</p>"
            f"<p class='nav'>{''.join(nav)}</p>"
            f"<div class='row'><div class='board'>{svg(shown)}{_legend_html(shown)}</div>"
            f"<div><p id='value' class='{_value_class(pv.value)}' style='color:#fff;padding:0.3em'>"
            f"{escape(pv.describe(4))}</p>"
            + (f"<h3>The secret choice as a matrix game</h3>{payoff_matrix_html(sol, state, lambda m: link(moves + [m]), ranges)}"
               f"<details><summary>{kind_title}, as a list</summary><table id='moves'>{''.join(rows)}</table></details>"
               if pv.kind == "simultaneous" else
               f"<h3>{kind_title}</h3><table id='moves'>{''.join(rows) or '<tr><td>none</td></tr>'}</table>")
            + f"{strategies}</div></div>"
            f"<h3>Moves played</h3><p id='played'>{played}</p>"
            f"<h3>Value history</h3>{history}"
            f"<h3>Perfect play from here</h3><ol id='line'>{pv_items}</ol><p class='muted'>{end_text}</p>"
            f"<details><summary>position as text</summary><pre>{escape(game.render(state))}</pre></details>"
        )
        return page(f"{game.display_name()} - pyramids explorer", body)

    return app


def serve(port: int = 8765, tables: str | Path = "tables", host: str = "127.0.0.1",
          ready: Any = None) -> None:
    """Serve the explorer until interrupted (one line names the address). ``ready``: called with
    the server once it listens (tests)."""
    from werkzeug.serving import make_server

    import socket
    import socketserver

    app = create_app(tables)
    try:  # werkzeug exits the process on a port in use: ask first, and say it in one line
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.bind((host, port))
        server = make_server(host, port, app, threaded=True)
    except (OSError, SystemExit) as exc:
        why = getattr(exc, "strerror", None) or "in use"
        raise PyramidsError(f"port {port} on {host} is not free ({why}); pick another with --port") from None
    print(f"explorer at http://{host}:{server.server_port}/ (tables: {tables}); Ctrl-C stops", flush=True)
    if ready is not None:
        ready(server)
    try:  # socketserver's loop: werkzeug's own serve_forever swallows Ctrl-C (the command exits 130)
        socketserver.BaseServer.serve_forever(server)
    finally:
        server.server_close()
