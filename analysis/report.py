"""Balance reports: Markdown + self-contained HTML + PNG figures, computed from the tables only.

>>> from solver.api import make_game, solve
>>> from analysis.report import write_report
>>> write_report(solve(make_game("override", size=3, line=3, per_size=1)))
PosixPath('reports/override/size=3,line=3,per_size=1,centre_rule=on,no_undo=on/report.md')

A report answers a game designer first. Its sections, each with a short plain-language reading on
top: verdict (who wins, the seats named as the game names them, e.g. "Black (player 1, moves
first)", and the rulebook's warning when the variant is outside its recommended range), opening
moves (random setups: the setups that do not go the favoured way, drawn as boards; an opening
where every move is a draw: one sentence), the opening line (the principal variation as a strip
of boards and as text), value and remoteness, positions by ply (plies holding only finished games
left out), decision difficulty, game length, structure, provenance and a glossary of the
technical words the report uses. Every number is computed from the tables by
:mod:`analysis.metrics`; the texts are generated from those numbers. The same document model
renders to Markdown (charts as PNG files, board pictures as SVG files in ``figures/``) and to one
HTML file with the charts embedded as base64 PNG and the boards as inline SVG (opens offline;
wide tables scroll inside the page).
"""

from __future__ import annotations

import base64
import html
import io
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from analysis import metrics as M
from analysis import plots
from solver.api import SAME_PROBABILITY
from solver.core.game import NodeKind
from solver.core.progress import Task
from solver.errors import TableError

__all__ = ["write_report", "build_report", "report_variant", "report_presets", "Document", "Section",
           "save_document", "glossary_section", "DEFAULT_ROOT"]

#: where reports go: ``reports/<game>/<variant-id>/``
DEFAULT_ROOT = Path("reports")
DPI = 110
MAX_PNG_BYTES = 80_000
#: at most this many rows in a long table of the report (the rest is summarised)
MAX_ROWS = 40


# --- document model -----------------------------------------------------------------------

@dataclass
class Block:
    """One piece of a section: ``text``, ``note``, ``table``, ``figure`` (a PNG chart),
    ``boards`` (an SVG picture of board positions), ``terms`` (a glossary) or ``links`` (rows of
    ``(words, address)``: pages of the explorer, which is not part of the report)."""

    kind: str
    text: str = ""
    headers: Sequence[str] = ()
    rows: Sequence[Sequence[Any]] = ()
    figure: str = ""


@dataclass
class Section:
    """A titled section: a plain-language reading, then tables, figures and notes."""

    title: str
    reading: str
    blocks: list[Block] = field(default_factory=list)

    def table(self, headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        self.blocks.append(Block("table", headers=list(headers), rows=[list(r) for r in rows]))

    def figure(self, name: str, caption: str) -> None:
        self.blocks.append(Block("figure", text=caption, figure=name))

    def boards(self, name: str, caption: str) -> None:
        """Board pictures (the document's SVG ``name``): a file beside the Markdown, inline in HTML."""
        self.blocks.append(Block("boards", text=caption, figure=name))

    def note(self, text: str) -> None:
        self.blocks.append(Block("note", text=text))

    def text(self, text: str) -> None:
        self.blocks.append(Block("text", text=text))

    def links(self, entries: Iterable[tuple[str, str]]) -> None:
        """A list of links, ``(words, address)`` each."""
        self.blocks.append(Block("links", rows=[list(e) for e in entries]))

    def terms(self, entries: Iterable[tuple[str, str]]) -> None:
        """A list of words and their meanings (a glossary)."""
        self.blocks.append(Block("terms", rows=[list(e) for e in entries]))


@dataclass
class Document:
    """A report: title, introduction, sections and the figures they refer to (name -> Figure)
    and board pictures (name -> SVG text)."""

    title: str
    intro: str
    sections: list[Section] = field(default_factory=list)
    figures: dict[str, Figure] = field(default_factory=dict)
    svgs: dict[str, str] = field(default_factory=dict)

    def new_figure(self, name: str, draw: Callable[[Axes], Any], *, size: tuple[float, float] = (7.0, 3.8)) -> str:
        """Create a figure called ``name`` (file ``figures/<name>.png``) drawn by ``draw(ax)``."""
        fig = Figure(figsize=size, layout="constrained")
        FigureCanvasAgg(fig)  # the Agg backend, without pyplot's global state
        ax = fig.subplots()
        draw(ax)
        self.figures[name] = fig
        return name


def _png_bytes(fig: Figure) -> bytes:
    """The figure as PNG, at most ~80 KB (lower resolution if needed)."""
    for dpi in (DPI, 90, 72, 60):
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
        data = buf.getvalue()
        if len(data) < MAX_PNG_BYTES:
            return data
    return data


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, float):
        if np.isnan(x):
            return "-"
        return f"{x:.3f}" if abs(x) < 1000 else f"{x:,.0f}"
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    return str(x)


def _md_cell(x: Any) -> str:
    return _fmt(x).replace("|", "\\|").replace("\n", " ")


def render_markdown(doc: Document) -> str:
    """The document as Markdown (figures as ``figures/<name>.png``)."""
    out = [f"# {doc.title}", "", doc.intro, ""]
    for i, sec in enumerate(doc.sections, 1):
        out += [f"## {i}. {sec.title}", "", sec.reading, ""]
        for b in sec.blocks:
            if b.kind == "text":
                out += [b.text, ""]
            elif b.kind == "note":
                out += [f"> Note: {b.text}", ""]
            elif b.kind == "table":
                out.append("| " + " | ".join(_md_cell(h) for h in b.headers) + " |")
                out.append("|" + "|".join(" --- " for _ in b.headers) + "|")
                out += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in b.rows]
                out.append("")
            elif b.kind == "figure":
                out += [f"![{b.text}](figures/{b.figure}.png)", "", f"*{b.text}*", ""]
            elif b.kind == "boards":
                out += [f"![{b.text}](figures/{b.figure}.svg)", "", f"*{b.text}*", ""]
            elif b.kind == "terms":
                out += [f"- **{term}**: {meaning}" for term, meaning in b.rows] + [""]
            elif b.kind == "links":
                out += [f"- [{words}]({address})" for words, address in b.rows] + [""]
    return "\n".join(out).rstrip() + "\n"


_CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:60rem;margin:2rem auto;
padding:0 1rem;color:#222;line-height:1.45}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd}
p.reading{background:#f5f7fa;border-left:4px solid #1f5fbf;padding:.5rem .8rem}
p.note{color:#555;font-style:italic}
div.wide{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.6rem 0;font-size:.9rem}
th,td{border:1px solid #ccc;padding:.2rem .5rem;text-align:right}
th{background:#eef1f5}td:first-child,th:first-child,td.t{text-align:left}
figure{margin:1rem 0}figure img{max-width:100%}figcaption{font-size:.85rem;color:#555}
figure.boards svg{max-width:100%;height:auto}
dt{font-weight:bold;margin-top:.4rem}dd{margin-left:1.5rem}
code{background:#f0f2f5;padding:0 .2rem;border-radius:3px;font-size:.9em}
"""


#: a table cell that is a number (right-aligned in HTML; words are left-aligned)
_NUMBER = re.compile(r"^[+-]?[\d,.]+(?:%| pts)?$|^-$")


def _inline_svg(text: str) -> str:
    """A standalone SVG document as an element inside HTML5 (no XML declaration; HTML needs no
    namespace attribute, so the page names no outside address)."""
    text = text.strip()
    if text.startswith("<?xml"):
        text = text[text.index("?>") + 2:].lstrip()
    return text.replace(' xmlns="http://www.w3.org/2000/svg"', "", 1)


#: the Markdown the reports' words use inside a line: **strong** and `code`
_STRONG = re.compile(r"\*\*(.+?)\*\*")
_CODE = re.compile(r"`([^`]+)`")


def _inline(text: str) -> str:
    """``text`` (a line of the report's Markdown) as HTML: escaped, then its ``**strong**`` and
    ```code``` spans as elements, so the page shows what the Markdown shows instead of the marks."""
    out = html.escape(text)
    out = _CODE.sub(r"<code>\1</code>", out)
    return _STRONG.sub(r"<strong>\1</strong>", out)


def render_html(doc: Document, pngs: Mapping[str, bytes]) -> str:
    """The document as one self-contained HTML page (figures embedded as base64 PNG, board
    pictures as inline SVG; wide tables scroll inside the page instead of widening it; the
    words' inline Markdown, bold and code, as HTML elements)."""
    e = html.escape
    m = _inline
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{e(doc.title)}</title><style>{_CSS}</style></head><body>",
           f"<h1>{e(doc.title)}</h1>", f"<p>{m(doc.intro)}</p>"]
    for i, sec in enumerate(doc.sections, 1):
        out.append(f"<h2>{i}. {e(sec.title)}</h2>")
        out.append(f'<p class="reading">{m(sec.reading)}</p>')
        for b in sec.blocks:
            if b.kind == "text":
                out.append(f"<p>{m(b.text)}</p>")
            elif b.kind == "note":
                out.append(f'<p class="note">Note: {m(b.text)}</p>')
            elif b.kind == "table":
                out.append('<div class="wide"><table><thead><tr>'
                           + "".join(f"<th>{e(_fmt(h))}</th>" for h in b.headers) + "</tr></thead><tbody>")
                for row in b.rows:
                    out.append("<tr>" + "".join(f"<td>{e(_fmt(c))}</td>" if _NUMBER.match(_fmt(c))
                                                else f'<td class="t">{m(_fmt(c))}</td>' for c in row) + "</tr>")
                out.append("</tbody></table></div>")
            elif b.kind == "figure":
                data = base64.b64encode(pngs[b.figure]).decode("ascii")
                out.append(f'<figure><img alt="{e(b.text)}" src="data:image/png;base64,{data}">'
                           f"<figcaption>{e(b.text)}</figcaption></figure>")
            elif b.kind == "boards":
                out.append(f'<figure class="boards">{_inline_svg(doc.svgs[b.figure])}'
                           f"<figcaption>{e(b.text)}</figcaption></figure>")
            elif b.kind == "links":
                out.append("<ul>" + "".join(f'<li><a href="{e(address)}">{e(words)}</a></li>'
                                            for words, address in b.rows) + "</ul>")
            elif b.kind == "terms":
                out.append("<dl>" + "".join(f"<dt>{e(term)}</dt><dd>{m(meaning)}</dd>" for term, meaning in b.rows)
                           + "</dl>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def save_document(doc: Document, out_dir: Path) -> Path:
    """Write ``report.md``, ``report.html``, ``figures/*.png`` (charts) and ``figures/*.svg``
    (board pictures) into ``out_dir``.

    Files left in ``figures/`` by an earlier run that this report no longer draws are removed.
    Returns the path of ``report.md``.
    """
    out_dir = Path(out_dir)
    fig_dir = out_dir / "figures"
    fig_dir.mkdir(parents=True, exist_ok=True)
    pngs = {name: _png_bytes(fig) for name, fig in doc.figures.items()}
    for old in fig_dir.glob("*.png"):
        if old.stem not in pngs:
            old.unlink()
    for old in fig_dir.glob("*.svg"):
        if old.stem not in doc.svgs:
            old.unlink()
    for name, data in pngs.items():
        _write_atomic(fig_dir / f"{name}.png", data)
    for name, text in doc.svgs.items():
        _write_atomic(fig_dir / f"{name}.svg", text.encode("utf-8"))
    _write_atomic(out_dir / "report.html", render_html(doc, pngs).encode("utf-8"))
    md = out_dir / "report.md"
    _write_atomic(md, render_markdown(doc).encode("utf-8"))
    return md


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name("." + path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


# --- glossary -----------------------------------------------------------------------------

#: the technical words reports use: (word, what in a report's text shows it is used, meaning)
GLOSSARY: tuple[tuple[str, str, str], ...] = (
    ("ply", r"\bpl(?:y|ies)\b",
     "One move by one player. Game lengths count plies only: chance events (a dice roll, the deal "
     "of a setup) are not plies."),
    ("perfect play", r"\bperfect(?:ly)? (?:play|player)",
     "Both sides always choose a best move: a win if there is one (the fastest), else a tie, else a "
     "draw, else the slowest loss (then the best score margin). Every value in the report assumes it; "
     "a 'perfect player' picks uniformly among such best moves."),
    ("draw vs tie", r"\b(?:draw|tie)s?\b",
     "A tie is a game that ends level; a draw is a game that never ends: neither side can force a "
     "win and play can go round for ever. A player who cannot win prefers a tie to a draw, and a "
     "draw to a loss."),
    ("remoteness", r"\bremoteness\b",
     "How many plies are left from a position with perfect play: the winner hurries, the loser "
     "holds out as long as it can. Draws have no remoteness."),
    ("margin", r"\bmargins?\b",
     "The difference between the scores at the end of a scored game (a side's score minus its "
     "opponent's). The best forced margin is the largest one a side can guarantee with perfect "
     "play; it is a separate goal from winning."),
    ("symmetry class", r"symmetr",
     "Positions that are rotations or reflections of each other have the same value, so the "
     "tables store one position per symmetry class ('up to symmetry'), and moves that lead to "
     "symmetric positions are counted as one class."),
    ("random setup", r"\bsetups?\b",
     "The game starts with a chance deal of the pieces. Setups that are symmetric images of each "
     "other are counted once, weighted by how many arrangements they stand for."),
    ("chance step", r"\bchance\b|\bdice\b|\broll\b",
     "A step where nature picks an outcome with fixed probabilities (dice, the deal of a setup); "
     "values there are expectations over the outcomes."),
    ("expected result", r"expected result",
     "The average result from a side's point of view, counting a win as +1, a loss as -1 and a tie "
     "or endless play as 0."),
    ("expected payoff", r"expected payoff",
     "In a game whose ends pay real amounts (points, stakes): the average amount a side is paid, "
     "the other side paying it; endless play pays nothing."),
    ("first-player advantage", r"\badvantage\b",
     "The first player's expected result with perfect play: +1 always wins, -1 always loses, 0 even."),
    ("random play", r"\brandom(?:ly)? (?:play|player|players|games?)\b|uniformly at random",
     "A random player picks uniformly among the legal moves. Games between random and perfect "
     "players show how much skill the game rewards."),
    ("absorbing Markov chain", r"markov chain",
     "How the random-play statistics are computed exactly, without sampling: every position is a "
     "state, the players' choices give the probabilities of the moves, and finished positions "
     "absorb play; solving the chain gives the probability of each result and of each game length."),
    ("principal variation", r"principal variation",
     "The line of play in which both sides always play a best move (the first of equally good "
     "ones): one way the game goes with perfect play."),
    ("only move", r"only[- ]move",
     "A winning position where exactly one legal move keeps the win. Many of them make a game "
     "hard to play well."),
    ("branching factor", r"\bbranching\b",
     "The number of legal moves in a position."),
    ("cycle", r"\bcycl(?:e|es|ic)\b",
     "Positions that play can come back to (a strongly connected part of the position graph). "
     "Where there are cycles, a game can go on for ever."),
    ("GAMESMAN", r"\bgamesman\b",
     "The GAMESMAN project (UC Berkeley), which solves small games exactly; the values win, lose, "
     "tie and draw, remoteness, and the value-by-remoteness table come from it."),
    ("Ludii clarity, decisiveness and balance", r"\bclarity\b|\bdecisiveness\b",
     "Measures of game quality from the Ludii game system: clarity (how clearly the good moves "
     "stand out: the share of moves that keep a win), decisiveness (how reliably the better player "
     "wins: random against perfect) and balance (how even the seats are: random against random). "
     "Here they are computed exactly from the tables."),
    ("mixed strategy", r"\bmixed\b",
     "At a secret simultaneous choice the best play is a random mix of actions with fixed "
     "probabilities; the tables hold each side's optimal mix."),
    ("exploitability", r"exploitab",
     "How much a player gives away by committing to a simple strategy when the opponent knows it "
     "and answers with the best reply."),
    ("paranoid view", r"\bparanoid\b",
     "With more than two players, each seat's question is answered as if all the other players "
     "played together against it."),
    ("tier", r"\btiers?\b",
     "Large tables are solved and stored in parts (tiers) by a quantity that only changes one way, "
     "such as the number of pieces placed."),
    ("baseline", r"\bbaseline\b",
     "The first variant of a sweep: every other variant is compared with it."),
)


def _document_text(doc: Document) -> str:
    """Everything a reader sees in ``doc`` as plain text (to find the words it uses)."""
    parts = [doc.title, doc.intro]
    for sec in doc.sections:
        parts += [sec.title, sec.reading]
        for b in sec.blocks:
            parts.append(b.text)
            parts += [str(h) for h in b.headers]
            parts += [str(c) for row in b.rows for c in row]
    return "\n".join(parts)


def glossary_section(doc: Document) -> Section | None:
    """A glossary of the technical words that ``doc`` uses (only those), or ``None``."""
    text = _document_text(doc)
    used = [(word, meaning) for word, pattern, meaning in GLOSSARY
            if re.search(pattern, text, flags=re.IGNORECASE)]
    if not used:
        return None
    sec = Section("Glossary", "The technical words of this report, in plain terms.")
    sec.terms(used)
    return sec


# --- the balance report -------------------------------------------------------------------

def _pct(x: float | None) -> str:
    return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{100.0 * x:.1f}%"


def _prob(x: float | None) -> str:
    """A probability as a percentage, with significant digits kept below 0.1%."""
    if x is None or (isinstance(x, float) and np.isnan(x)) or x == 0 or x >= 0.001:
        return _pct(x)
    return f"{100.0 * x:.2g}%"


def _plies(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


@dataclass
class _Tables:
    """The tables and facts every section needs (read once). ``positions`` is a lazy scan (and
    ``root`` None) for a tiered table too large to load: only aggregates and lookups apply then;
    ``start`` is the start position's row."""

    positions: M.Frame
    edges: pl.DataFrame | None
    setups: pl.DataFrame | None
    meta: dict[str, Any]
    kind: str
    root: int | None
    players: int
    verdict: M.Verdict
    seats: M.Seats = field(default_factory=M.Seats)
    start: dict[str, Any] = field(default_factory=dict)

    @property
    def first(self) -> int:
        """The player index that moves first."""
        return self.seats.first

    def who(self, p: int) -> str:
        """The seat in running text: ``Black``, or ``the first player`` for unnamed seats."""
        return self.seats.who(p)

    @property
    def payoff(self) -> bool:
        """The game's ends pay real amounts (not win +1, loss -1, tie 0)."""
        return self.meta.get("payoffs") == "real"

    @property
    def expect(self) -> str:
        """What a stochastic value is called: ``expected payoff`` or ``expected result``."""
        return "expected payoff" if self.payoff else "expected result"

    def bare(self, p: int) -> str:
        """The seat without an article: ``Black`` or ``first player`` / ``second player``."""
        text = self.seats.who(p)
        return text[4:] if text.startswith("the ") else text


def build_report(solution: Any, *, exact_limit: int = M.EXACT_LIMIT, progress: bool | str = False) -> Document:
    """The balance report of a solved variant as a :class:`Document` (nothing written).

    Parameters
    ----------
    solution : solver.api.Solution
        A solved variant (its ``positions``, ``edges``, ``setups``, ``meta`` and ``game``).
    exact_limit : int
        Random play is computed exactly up to this many positions, else simulated.
    progress : bool or "lines"
        Show a progress bar over the report's steps on standard error (``"lines"``: a line every
        10 s, :mod:`solver.core.progress`).
    """
    with Task("report", progress, unit="steps", note_first=True) as task:
        return _build_report(solution, exact_limit, task)


def _build_report(solution: Any, exact_limit: int, bar: Task, more_steps: int = 0) -> Document:
    """:func:`build_report`, its steps counted by ``bar`` (reading the tables, random and perfect
    play, each section, the glossary, and ``more_steps`` the caller does after)."""
    bar.update(note="reading the tables")
    pos = M.positions_of(solution)  # a streaming scan for a tiered table too large for its moves
    lazy = isinstance(pos, pl.LazyFrame)
    meta = M.reading_meta(solution, pos)
    if meta.get("solution") == "paranoid":  # 3-4 players: the first seat's question, two-sided
        pos = M.paranoid_view(pos, 0)
    names = getattr(solution.game, "seat_names", None)
    try:
        kind = M.solution_kind(pos, meta)
        root = None if lazy else M.root_row(pos, meta)
        start = M.root_values(pos, meta)
        v = M.verdict(pos, meta, setups=solution.setups, edges=solution.edges, seat_names=names)
    except (*_MISSING, ValueError) as exc:
        raise TableError(f"{getattr(solution, 'path', 'the table')} cannot be read as a solved variant "
                         f"({exc}); solve the variant again with --force") from None
    players = M.num_players(pos, meta)
    t = _Tables(pos, solution.edges, solution.setups, meta, kind, root, players, v,
                M.Seats.of(names, v.first_player, players), start)
    label = meta.get("label", getattr(solution.game, "name", "game"))
    title = f"Balance report: {solution.game.display_name()}"
    title_game = getattr(solution.game, "title", "") or label
    intro = (f"{title_game}. Variant: `{label}`. Exact analysis of every position reachable from the start "
             f"({M.count(pos):,} positions{' up to symmetry' if meta.get('symmetry', True) else ''}), "
             f"computed from the solved tables. Values are from the side to move: win, lose, tie "
             f"(the game ends level) or draw (endless play, neither side can force a win). "
             f"A ply is one move by one player.")
    doc = Document(title, intro)
    builders: list[tuple[str, Callable[[], Section]]] = [
        ("Verdict", lambda: _verdict_section(doc, t, solution)),
        ("Opening moves", lambda: (_secret_section(doc, t, solution) if _secret_start(t)
                                   else _openings_section(doc, t, solution))),
        ("Opening line", lambda: _line_section(doc, t, solution)),
        ("Value and remoteness", lambda: _histogram_section(doc, t)),
        ("Positions by ply", lambda: _ply_section(doc, t)),
        ("Decision difficulty", lambda: _difficulty_section(doc, t, play)),
        ("Game length", lambda: _length_section(doc, t, play)),
        ("Structure", lambda: _structure_section(doc, t)),
        ("Provenance", lambda: _provenance_section(t, solution)),
    ]
    bar.update(total=3 + len(builders) + more_steps)
    bar.advance(note="random and perfect play")
    try:
        play = _play_stats(t, exact_limit, lambda i, n, key: bar.update(
            note=f"random and perfect play, matchup {i} of {n}: {key}"))
    except _MISSING as exc:
        play = f"random play needs a column this table does not have ({exc})"
    for title_, build in builders:
        bar.advance(note=title_.lower())
        try:
            doc.sections.append(build())
        except _MISSING as exc:  # e.g. per-seat multi-player tables: skip with a note
            sec = Section(title_, "This section cannot be computed from this table.")
            what = str(exc).strip().splitlines()[0].split("; valid columns")[0] if str(exc).strip() else ""
            column = re.search(r'unable to find column "([^"]+)"', what)
            sec.note(f"the table has no {column.group(1)!r} column, which this section reads" if column
                     else f"the table lacks what the section needs ({type(exc).__name__}: {what})")
            doc.sections.append(sec)
    bar.advance(note="glossary")
    glossary = glossary_section(doc)
    if glossary is not None:
        doc.sections.append(glossary)
    bar.advance()
    return doc


def optimal_set_sentence(ranges: dict[str, list[float]], who: str) -> str:
    """What every optimal strategy of ``who`` does at a secret choice, from each action's
    ``[lowest, highest]`` probability over the optimal strategies: the actions it plays with one
    probability, those it never plays, those whose probability varies."""
    never = [n for n, (lo, hi) in ranges.items() if hi <= SAME_PROBABILITY]
    forced = [n for n, (lo, hi) in ranges.items() if lo > SAME_PROBABILITY and hi - lo <= SAME_PROBABILITY]
    free = [n for n, (lo, hi) in ranges.items() if hi - lo > SAME_PROBABILITY]
    parts = ([f"plays {', '.join(forced)} with the probability shown"] if forced else []) + (
        [f"never plays {', '.join(never)}"] if never else [])
    varies = f"{', '.join(free)} vary between optimal strategies, each within its range"
    if not parts:
        return f"for {who}, {varies}"
    text = f"every optimal strategy of {who} " + " and ".join(parts)
    return text + (f", while {varies}" if free else " (its optimal mix is unique)")


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _secret_start(t: _Tables) -> bool:
    """The start is a secret simultaneous choice whose mixed strategies the table holds."""
    return "strategy_1" in t.start and int(t.start["kind"]) == int(NodeKind.SIMULTANEOUS)


def _secret_section(doc: Document, t: _Tables, solution: Any) -> Section:
    """The first secret choice: its payoff matrix, both optimal mixes (table + bar chart), how
    often each action is played over all secret choices, and what simple strategies lose."""
    g = solution.game
    p1, p2 = t.seats.name(0), t.seats.name(1)
    state = g.initial_state()
    pv = solution.lookup(state)
    mix = pv.strategies or {}
    matrix = solution.payoff_matrix(state)
    rows, cols, A = matrix  # the first seat's view
    ranges = solution.strategy_ranges(state, matrix)
    x = np.array([mix.get("1", {}).get(n, 0.0) for n in rows])
    y = np.array([mix.get("2", {}).get(n, 0.0) for n in cols])
    v = float(x @ A @ y)
    sec = Section("Opening: the first secret choice",
                  f"The game opens with a secret simultaneous choice: both players pick one of "
                  f"{len(rows)} actions without seeing the other's. With optimal (mixed) play its value "
                  f"for {p1} is {v:+.3f}; the table holds each player's optimal mix at every such "
                  f"choice.")
    def span(r: dict[str, list[float]], n: str) -> str:
        if n not in r:
            return "-"
        lo, hi = r[n]
        return f"{lo:.3f}" if hi - lo <= SAME_PROBABILITY else f"{lo:.3f} to {hi:.3f}"

    unique = all(hi - lo <= SAME_PROBABILITY for r in ranges.values() for lo, hi in r.values())
    if unique:
        sec.table(["action", f"{p1} plays it", f"{p2} plays it"],
                  [[n, f"{x[i]:.3f}", f"{y[cols.index(n)]:.3f}" if n in cols else "-"] for i, n in enumerate(rows)])
        sec.note("Each player's optimal mix here is unique: over all optimal strategies every "
                 "probability in the table is the same.")
    else:
        sec.table(["action", f"{p1} plays it", f"{p1}: over all optimal mixes", f"{p2} plays it",
                   f"{p2}: over all optimal mixes"],
                  [[n, f"{x[i]:.3f}", span(ranges["1"], n), f"{y[cols.index(n)]:.3f}" if n in cols else "-",
                    span(ranges["2"], n)] for i, n in enumerate(rows)])
        sec.note(f"The optimal mix is **not unique**: the mix in the table is one of many (the one the "
                 f"solver stored). {_capital(optimal_set_sentence(ranges['1'], p1))}; "
                 f"{optimal_set_sentence(ranges['2'], p2)}. (Each bound is one linear program over "
                 "the optimal strategies of this payoff matrix; not every combination of values within "
                 "the ranges is optimal.)")
    doc.new_figure("secret_strategies", lambda ax: plots.mixed_strategies(
        ax, rows, {p1: x, p2: [y[cols.index(n)] if n in cols else 0.0 for n in rows]},
        title="Optimal mixed strategies at the first secret choice"))
    sec.figure("secret_strategies", "The probability with which each player picks each action at the "
               "first secret choice, under optimal play.")
    sec.table([f"{p1} \\ {p2}"] + cols,
              [[r] + [f"{A[i, j]:+.3f}" for j in range(len(cols))] for i, r in enumerate(rows)])
    sec.note(f"The matrix gives {p1}'s {t.expect} for each pair of choices when both play "
             "perfectly afterwards (+1 = win, -1 = loss).")
    doc.new_figure("secret_matrix", lambda ax: plots.payoff_matrix(
        ax, rows, cols, A, x, y, row_label=p1, col_label=p2), size=(7.0, 4.6))
    sec.figure("secret_matrix", f"The first secret choice as a matrix game: each cell {p1}'s expected "
               "result (green: win, red: loss), each player's optimal mix beside its choices, the cells "
               "both mixes play outlined.")
    # how much simple strategies give away at this choice (the opponent answers with its best reply)
    common1, common2 = int(np.argmax(x)), int(np.argmax(y))
    p1_pure = float(A[common1].min())
    p1_uniform = float(A.mean(axis=0).min())
    p2_pure = float(A[:, common2].max())
    p2_uniform = float(A.mean(axis=1).max())
    sec.table(["strategy at the first secret choice", f"value for {p1} against a best reply",
               "what it gives away"],
              [["optimal mix (both)", f"{v:+.3f}", "-"],
               [f"{p1} always {rows[common1]} (its most likely action)", f"{p1_pure:+.3f}", f"{v - p1_pure:.3f}"],
               [f"{p1} uniformly at random", f"{p1_uniform:+.3f}", f"{v - p1_uniform:.3f}"],
               [f"{p2} always {cols[common2]} (its most likely action)", f"{p2_pure:+.3f}", f"{p2_pure - v:.3f}"],
               [f"{p2} uniformly at random", f"{p2_uniform:+.3f}", f"{p2_uniform - v:.3f}"]])
    sec.note("Exploitability: a player who commits to the simple strategy at the first secret choice "
             "(and plays perfectly afterwards) against an opponent who knows it and answers with the "
             "best reply.")
    # how often each action is played over all secret choices in the table
    # (a query: a tiered table's scan streams through its files instead of loading them)
    sims = M.collect(t.positions, t.positions.lazy().filter(pl.col("kind") == int(NodeKind.SIMULTANEOUS))
                     .select("strategy_1", "strategy_2"))
    table_rows = []
    for p, names in ((1, rows), (2, cols)):
        who = p1 if p == 1 else p2
        lists = sims[f"strategy_{p}"].drop_nulls()
        same = lists.filter(lists.list.len() == len(names))
        if len(same):
            mean = same.explode().to_numpy().reshape(-1, len(names)).mean(axis=0)
            table_rows.append([who] + [f"{m:.3f}" for m in mean])
    if table_rows and len(rows) == len(cols):
        sec.table(["mean probability over all secret choices"] + rows, table_rows)
        sec.note(f"Averaged over the {sims.height:,} secret choices in the table (each counted once, "
                 "not weighted by how often play reaches it).")
    return sec


#: what a table without the expected columns raises
_MISSING = (KeyError, pl.exceptions.ColumnNotFoundError)


def write_report(solution: Any, out_dir: Path | None = None, *, exact_limit: int = M.EXACT_LIMIT,
                 progress: bool | str = False) -> Path:
    """Write the balance report of ``solution``: ``report.md``, ``report.html``, ``figures/``.

    Parameters
    ----------
    solution : solver.api.Solution
        A solved variant (from :func:`solver.api.solve` or :func:`solver.api.load`).
    out_dir : Path, optional
        Output folder; default ``reports/<game>/<variant-id>/``.

    progress : bool or "lines"
        As :func:`build_report`, with writing the files as one more step.

    Returns
    -------
    Path
        The path of ``report.md`` (``report.html`` and ``figures/*.png`` sit beside it).
    """
    if out_dir is None:
        game = solution.meta.get("game") or solution.game.name
        vid = solution.meta.get("variant_id") or solution.game.variant.variant_id()
        out_dir = DEFAULT_ROOT / game / vid
    with Task("report", progress, unit="steps", note_first=True) as task:
        doc = _build_report(solution, exact_limit, task, more_steps=1)
        task.update(note="writing report.md, report.html and the figures")
        path = save_document(doc, Path(out_dir))
        task.advance()
        return path


def report_variant(game_name: str, params: Mapping[str, Any], *, out: str | Path | None = None,
                   reports_root: Path = DEFAULT_ROOT, progress: bool = False) -> Path:
    """``pyramids report``: solve the variant if its table is missing (else read it) and write
    its report under ``reports_root/<game>/<variant-id>/``. Returns the report.md path."""
    from solver.api import make_game, solve

    game = make_game(game_name, dict(params))
    sol = solve(game, out=out, progress=progress, sweep=False)
    return write_report(sol, Path(reports_root) / game.name / game.variant.variant_id())


def report_presets(games: Sequence[str] | None = None, *, out: str | Path | None = None,
                   reports_root: Path = DEFAULT_ROOT, progress: bool = False,
                   log: Callable[[str], None] | None = print) -> list[Path]:
    """``make reports``: the report of every preset of every registered game (or of ``games``)."""
    from solver.games import available_games, game_class

    paths = []
    for name in games or available_games():
        cls = game_class(name)
        for preset, params in cls.presets.items():
            t0 = time.perf_counter()
            path = report_variant(name, params, out=out, reports_root=reports_root, progress=progress)
            if log:
                log(f"{name} {preset}: {path} ({time.perf_counter() - t0:.1f} s)")
            paths.append(path)
    return paths


# --- sections -----------------------------------------------------------------------------

def _rulebook_warnings(solution: Any) -> list[str]:
    """What the game said about unusual parameter values (``game.warnings``, e.g. outside the
    rulebook's recommended range), worded for a report."""
    out = []
    for w in getattr(getattr(solution, "game", None), "warnings", None) or []:
        text = str(w).strip()
        if text:
            out.append(text + ("" if text.endswith(".") else "."))
    return out


def _result_label(t: _Tables, value: str) -> str:
    """A result of the whole game (first player's view) in the seats' words."""
    s = t.seats
    return {"win": f"{s.short(s.first)} wins", "lose": f"{s.short(s.second)} wins",
            "tie": "tie (ends level)", "draw": "draw (never ends)"}.get(value, value)


def _verdict_section(doc: Document, t: _Tables, solution: Any = None) -> Section:
    v = t.verdict
    sec = Section("Verdict", v.text)
    for w in _rulebook_warnings(solution):
        sec.text(f"Rulebook warning: {w} The numbers in this report are exact for this variant, but "
                 "the rules do not recommend it.")
    s = t.seats
    first = s.name(s.first) if not s.named else f"{s.name(s.first)} (player {s.first + 1})"
    if t.kind == "deterministic":
        rows = [["first player", first], [f"value for {t.who(t.first)}", v.value],
                ["remoteness (plies)", v.remoteness if v.remoteness is not None else "- (draw)"]]
        if v.margin is not None:
            rows.append(["best forced score margin", f"{v.margin:+.0f}"])
        sec.table(["", "perfect play"], rows)
        if t.players > 2:
            sec.note(f"This variant has {t.players} players; the value is the first player's "
                     "result against the others playing together (paranoid view).")
            seats = t.meta.get("seats") or {}
            if seats:
                answer = {"win": "yes", "lose": "no", "draw": "no (endless play)", "tie": "no"}
                sec.table(["seat", "can it force the strictly highest score against all others?",
                           "plies", "margin"],
                          [[s.name(int(k) - 1) if str(k).isdigit() else f"Player {k}",
                            answer.get(v["value"], v["value"]),
                            "-" if v["remoteness"] is None else v["remoteness"],
                            "-" if v.get("margin") is None else f"{v['margin']:+d}"]
                           for k, v in seats.items()])
                sec.note(f"The sections below follow the first seat's question ({s.name(s.first)} "
                         "against the others playing together).")
    elif t.kind == "setups":
        table = t.setups if t.setups is not None else (
            M.setups_from_tables(t.positions, t.edges, t.root) if t.edges is not None else None)
        summ = M.setup_summary(table)
        rows = [[_result_label(t, k), summ["counts"][k], _pct(summ["shares"][k])] for k in M.SHOWN_VALUES]
        sec.table(["result with perfect play", "setups", "share (by probability)"], rows)
        sec.table(["", "value"], [[f"expected result of {t.who(t.first)}", f"{summ['expected']:+.3f}"]]
                  + ([[f"expected score margin of {t.who(t.first)}", f"{summ['expected_margin']:+.2f}"]]
                     if summ["expected_margin"] is not None else []))
        doc.new_figure("setup_outcomes", lambda ax: plots.setup_outcomes(
            ax, summ["shares"], names=(s.short(s.first), s.short(s.second))))
        sec.figure("setup_outcomes", "Share of random setups won by each side with perfect play.")
        if summ["margins"] is not None and summ["margins"].height:
            doc.new_figure("setup_margins", lambda ax: plots.margin_distribution(
                ax, summ["margins"], who=s.short(s.first)))
            sec.figure("setup_margins", f"Distribution of the final score margin over the setups "
                                        f"({t.who(t.first)}'s view, perfect play).")
            sec.note("the margin is the best score margin each side can force, a separate objective "
                     "from winning (a tie-break can decide a game with level scores), so margins and "
                     "results need not match setup by setup.")
    elif v.payoff:
        sec.table(["", "perfect play"], [["first player", first], ["expected payoff", f"{v.advantage:+.3f}"]])
    else:
        sec.table(["", "perfect play"], [
            ["first player", first], ["expected result", f"{v.advantage:+.3f}"],
            [f"{t.bare(t.first)} wins", _pct(v.p_win)], [f"{t.bare(t.first)} loses", _pct(v.p_loss)],
            ["neither", _pct(max(0.0, 1 - v.p_win - v.p_loss))]])
    proof = _proof_sentence(t.meta)
    if proof:
        sec.note(proof)
    return sec


def _proof_sentence(meta: dict[str, Any]) -> str | None:
    """What the table's proven bounds (secret-choice games) say about every position, not only
    the start: certified (every interval within the tolerance) or the widest interval left."""
    b = meta.get("bounds")
    if not b or not b.get("proven"):
        return None
    if "rounds" not in b:  # (round by round: the game cut off as a loss, and as a win, for Player 1)
        how = (f"the game cut off after {b['sweeps_lower']:,} rounds as a loss for Player 1 and after "
               f"{b['sweeps_upper']:,} as a win; each end of an interval is what one player guarantees in "
               "such a cut-off game")
        more = ("" if b.get("converged_lower") and b.get("converged_upper") else
                "; more rounds may narrow it (`pyramids solve` with a larger --bound-rounds resumes the "
                "solve's work folder)")
        closed = (f"; {int(b['closed']):,} positions closed within {float(b['tolerance']):.0e}"
                  if "closed" in b else "")
    else:
        how = (f"{b['rounds']} round{'s' if b['rounds'] != 1 else ''} of better strategies"
               + (" in exact rational arithmetic" if b.get("exact") else "")
               + "; each end of an interval is what one player's stationary strategy guarantees against "
                 "every reply of the other")
        more, closed = "; more rounds (--bound-rounds) may narrow it", ""
    if meta.get("certified"):
        return (f"Certified: every position's value is proven to lie in an interval at most "
                f"{max(float(b['width']), 1e-300):.1e} wide ({how}).")
    return (f"Not certified everywhere: the widest proven interval is {float(b['width']):.1e} wide, more "
            f"than {float(b['tolerance']):.0e} ({how}{closed}){more}.")


def _move_names(solution: Any) -> dict[int, list[str]]:
    """Readable names of the first moves (or chance outcomes), by the key of where they lead."""
    from solver.core.game import NodeKind

    g = solution.game
    st = g.initial_state()
    kind = g.node_kind(st)
    if kind == NodeKind.DECISION:
        actions = list(g.legal_actions(st))
    elif kind == NodeKind.CHANCE:
        actions = [a for a, _ in g.chance_outcomes(st)]
    else:
        return {}
    names: dict[int, list[str]] = defaultdict(list)
    for a in actions:
        names[solution.key_of(g.apply(st, a))].append(g.action_name(st, a))
    return names


def _join_names(names: list[str], most: int = 4) -> str:
    if not names:
        return "?"
    shown = ", ".join(names[:most])
    return shown + (f" (+{len(names) - most} more)" if len(names) > most else "")


def _no_edges(t: _Tables) -> tuple[str, str]:
    """Why the moves are not available, and the fix (tiered tables regenerate them from the
    rules only up to a size)."""
    if t.meta.get("layout") == "tiered":
        from solver.api import EDGES_ON_DEMAND

        moves = int((t.meta.get("counts") or {}).get("edges", 0))
        return (f"This table is stored tier by tier and has {moves:,} moves, more than the "
                f"{EDGES_ON_DEMAND:,} regenerated for a report",
                "`pyramids show` lists the moves of any position with their values")
    return "The edges table is missing", "solve the variant with edges (the default) to get this section"


def _openings_section(doc: Document, t: _Tables, solution: Any) -> Section:
    if t.kind == "setups":
        return _setups_list_section(doc, t, solution)
    if t.edges is None:
        why, fix = _no_edges(t)
        looked_up = _openings_by_lookup(t, solution) if t.kind == "deterministic" else None
        if looked_up is not None:
            looked_up.note(f"{why}; the first moves were looked up one by one instead (moves that "
                           "lead to the same position up to symmetry are grouped).")
            return looked_up
        sec = Section("Opening moves", f"{why}, so the opening moves are not listed.")
        sec.note(fix)
        return sec
    table = M.opening_moves(t.positions, t.edges, t.root)
    keys = t.positions["key"].to_numpy()
    try:
        names = _move_names(solution)
        name_err = None
    except Exception as exc:  # a game whose rules cannot be replayed still gets its table
        names, name_err = {}, f"{type(exc).__name__}: {exc}"
    groups = [names.get(int(keys[d]), []) for d in table["dst"].to_list()]
    if not t.meta.get("symmetry", True) and names:
        table, groups = _merge_symmetric(table, groups, keys, solution)
    labels = [_join_names(g) if names else f"to row {d}" for g, d in zip(groups, table["dst"].to_list())]
    n_moves = int(table["moves"].sum())
    stochastic = t.kind == "stochastic"
    chance = int(t.start["kind"]) == M.CHANCE
    what = ("chance outcome" if n_moves == 1 else "chance outcomes") if chance else ("move" if n_moves == 1 else "moves")
    if stochastic:
        exp = table["expected"].to_numpy()
        best = labels[0] if len(labels) else "-"
        reading = (f"The start has {n_moves} legal {what} ({table.height} up to symmetry). "
                   + (f"The best is {best} with an {t.expect} of {exp[0]:+.3f} for the mover; "
                      f"the worst gives {exp[-1]:+.3f}." if len(exp) else ""))
        rows = [[lbl, m, f"{e:+.3f}"] + ([_pct(p)] if chance else [])
                for lbl, m, e, p in zip(labels, table["moves"], exp, table["probability"])]
        sec = Section("Opening moves", reading)
        sec.table(["move(s)", "moves", f"{t.expect} (mover)"] + (["probability"] if chance else []), rows[:MAX_ROWS])
        lengths: list[float | None] = list(exp)
        vals: list[str | None] = [None] * len(exp)
        xlabel = f"{t.expect} for the mover"
    else:
        vals = table["value"].to_list()
        rems = table["remoteness"].to_list()
        counts = defaultdict(int)
        for v, m in zip(vals, table["moves"].to_list()):
            counts[v] += m
        plural = {"win": ("win", "wins"), "tie": ("tie", "ties"), "draw": ("draw", "draws"), "lose": ("loss", "losses")}
        parts = [f"{counts[v]} {plural[v][0] if counts[v] == 1 else plural[v][1]}"
                 for v in ("win", "tie", "draw", "lose") if counts[v]]
        if len(parts) == 1:
            parts = [f"all {'are' if n_moves > 1 else 'is'} {plural[v][0] + 's' if v != 'lose' else 'losses'}"
                     if n_moves > 1 else f"it is a {plural[v][0]}" for v in ("win", "tie", "draw", "lose") if counts[v]]
        reading = f"The start has {n_moves} legal {what} ({table.height} up to symmetry): " + ", ".join(parts) + "."
        if counts["draw"] == n_moves and n_moves:
            return _all_draw_section(t, n_moves, table.height, labels, bool(names), name_err)
        if counts["win"]:
            reading += (f" The fastest win is {labels[0]} (the opponent is lost, game over in "
                        f"{rems[0] + 1} plies).")
            if counts["lose"] or counts["draw"] or counts["tie"]:
                lost = n_moves - counts["win"]
                reading += f" {lost} of the {n_moves} moves {'throws' if lost == 1 else 'throw'} the win away."
        elif counts["tie"] or counts["draw"]:
            best_v = "tie" if counts["tie"] else "draw"
            lose_txt = ("no move loses" if counts["lose"] == 0 else
                        f"{counts['lose']} {'move loses' if counts['lose'] == 1 else 'moves lose'}")
            reading += f" The best {t.who(t.first)} can do is a {best_v}; {lose_txt}."
        else:
            reading += f" Every move loses; the longest resistance is {labels[0]} ({rems[0] + 1} plies)."
        has_margin = "margin" in table.columns
        rows = []
        for i, (lbl, m, v, r) in enumerate(zip(labels, table["moves"], vals, rems)):
            row = [lbl, m, v, "-" if r is None else r + 1]
            if has_margin:
                row.append(f"{table['margin'][i]:+d}")
            rows.append(row)
        sec = Section("Opening moves", reading)
        sec.table(["move(s)", "moves", "value for the mover", "plies to the end"]
                  + (["margin"] if has_margin else []), rows[:MAX_ROWS])
        lengths = [None if r is None else r + 1 for r in rems]
        xlabel = "plies to the end after this move (perfect play)"
    if table.height > MAX_ROWS:
        sec.note(f"{table.height - MAX_ROWS} more classes of moves are not listed.")
    sec.note("moves that lead to symmetric positions are grouped (one row per resulting position "
             "up to symmetry); 'moves' counts the legal moves in the group.")
    if not t.meta.get("symmetry", True) and not names:
        sec.note("the table was solved without symmetry and the game's rules were not available, so "
                 "symmetric moves are listed separately.")
    if name_err:
        sec.note(f"move names unavailable ({name_err})")
    shown = min(table.height, 24)
    doc.new_figure("opening_moves", lambda ax: plots.opening_moves(
        ax, labels[:shown], vals[:shown], lengths[:shown], xlabel=xlabel,
        title="Opening moves (best first)"), size=(7.0, max(2.4, 0.32 * shown + 1.2)))
    if stochastic:
        sec.figure("opening_moves", f"Each opening move (up to symmetry): bar length = {t.expect} "
                                    f"for {t.who(t.first)} after the move (green: favourable, red: unfavourable).")
    else:
        sec.figure("opening_moves", "Each opening move (up to symmetry), coloured by its value for "
                                    f"{t.who(t.first)}; bar length = plies to the end with perfect play"
                   + (" (hatched: draw, no end)." if "draw" in vals else "."))
    return sec


def _all_draw_section(t: _Tables, n_moves: int, classes: int, labels: Sequence[str],
                      named: bool, name_err: str | None) -> Section:
    """Every first move is a draw: one sentence (a chart of identical bars would say no more)."""
    sym = f" ({classes} up to symmetry)" if classes != n_moves else ""
    reading = (f"Every one of the {n_moves} first moves{sym} is a draw: whatever {t.who(t.first)} "
               "plays, neither side can force a win afterwards, and with perfect play the game "
               "never ends.")
    sec = Section("Opening moves", reading)
    if named:
        shown = list(labels[:MAX_ROWS])
        more = f"; and {len(labels) - MAX_ROWS} more groups." if len(labels) > MAX_ROWS else "."
        sec.text("The moves" + (", grouped by symmetry" if classes != n_moves else "") + ": "
                 + "; ".join(shown) + more)
    if name_err:
        sec.note(f"move names unavailable ({name_err})")
    return sec


def _openings_by_lookup(t: _Tables, solution: Any, most: int = 400) -> Section | None:
    """The opening moves from per-position lookups (:meth:`solver.api.Solution.moves`) when the
    table has no edges (a tiered table too large to regenerate them), moves that lead to the same
    position up to symmetry grouped as in the edges' section (:meth:`solver.api.Solution.
    symmetric_moves`): ``None`` when the start has more than ``most`` moves or the rules cannot
    be replayed."""
    try:
        g = solution.game
        state = g.initial_state()
        if g.node_kind(state) != NodeKind.DECISION or len(list(g.legal_actions(state))) > most:
            return None
        moves = solution.moves(state)
        grouped = solution.move_groups(state, moves)
    except Exception:  # lookups need the game's rules and every child row
        return None
    if not moves or any(m.value is None for m in moves):
        return None
    n = len(moves)
    labels = [_join_names([m.move, *others]) for m, others in grouped]
    counts = defaultdict(int)
    for m in moves:
        counts[m.value] += 1
    if counts["draw"] == n:
        return _all_draw_section(t, n, len(grouped), labels, True, None)
    plural = {"win": "wins", "tie": "ties", "draw": "draws", "lose": "losses"}
    sym = f" ({len(grouped)} up to symmetry)" if len(grouped) != n else ""
    reading = (f"The start has {n} legal move{'s' if n != 1 else ''}{sym}: "
               + ", ".join(f"{counts[v]} {plural[v]}" for v in ("win", "tie", "draw", "lose") if counts[v]) + ".")
    sec = Section("Opening moves", reading)
    sec.table(["move(s)", "moves", "value for the mover", "plies to the end"],
              [[lbl, 1 + len(others), m.value, "-" if m.remoteness is None else m.remoteness + 1]
               for lbl, (m, others) in zip(labels, grouped)][:MAX_ROWS])
    if len(grouped) > MAX_ROWS:
        sec.note(f"{len(grouped) - MAX_ROWS} more classes of moves are not listed.")
    return sec


#: plies of the opening line drawn as boards (after the start position)
LINE_BOARDS = 10
#: the opening line is followed at most this many plies (tables stored tier by tier, whose
#: lookups read from disk: ``LINE_MAX_PLIES_TIERED``)
LINE_MAX_PLIES = 200
LINE_MAX_PLIES_TIERED = 30


def _step_text(t: _Tables, i: int, step: Any) -> str:
    """``3. White: a1-a2`` (a chance step: ``1. chance: BWW/GGB/GGG``)."""
    who = "chance" if step.why == "most likely roll" else t.seats.name(int(step.player))
    return f"{i}. {who}: {step.move}"


def _line_end(t: _Tables, g: Any, state: Any, ending: str, plies: int, chance: bool = False) -> str:
    """How the opening line ends, in words (the winner from the game's own outcome)."""
    if ending == "repeats" and chance:
        return ("a position comes back: with the same most likely outcomes every time, play would go "
                "round for ever (other outcomes lead elsewhere)")
    if ending == "repeats":
        return "a position comes back, so play goes round for ever: a draw"
    if ending == "limit":
        return f"it is still going after {plies} plies (only that much is followed here)"
    try:
        out = g.outcome(state)
    except Exception:  # the rules cannot say: the line still ended
        return "game over"
    from solver.core.game import Result

    winners = [p for p, r in enumerate(out.results) if r == Result.WIN]
    text = (f"{t.seats.name(winners[0])} wins" if len(winners) == 1 else "a tie (the game ends level)")
    margin = out.margin(winners[0] if len(winners) == 1 else t.first)
    if margin is not None:
        text += f", score margin {margin:+d}" + ("" if len(winners) == 1 else f" for {t.seats.name(t.first)}")
    return "game over: " + text


def _line_section(doc: Document, t: _Tables, solution: Any) -> Section:
    """The principal variation from the start: a strip of boards for its first plies, then the
    whole line as text."""
    title = "Opening line (principal variation)"
    try:
        g = solution.game
        most = LINE_MAX_PLIES_TIERED if t.meta.get("layout") == "tiered" else LINE_MAX_PLIES
        steps, ending = solution.line(max_plies=most)
        states = [g.initial_state()]
        for st in steps:
            states.append(g.play([st.move], states[-1]))
    except Exception as exc:  # a table without rules, a game that cannot replay its moves
        sec = Section(title, "The principal variation could not be replayed from the game's rules.")
        sec.note(f"{type(exc).__name__}: {exc}")
        return sec
    chance = sum(1 for st in steps if st.why == "most likely roll")
    plies = len(steps) - chance
    end = _line_end(t, g, states[-1], ending, len(steps), chance=chance > 0)
    how = (f"both sides play a best move at every turn (the largest {t.expect})" if t.kind == "stochastic" else
           "both sides play a best move at every turn (the fastest win, the slowest loss"
           + (", then the best score margin)" if "margin" in t.start else ")"))
    if chance:
        how += "; chance steps take their most likely outcome (the first of equally likely ones)"
    if any(st.why == "most likely choices" for st in steps):
        how += "; secret choices take the likeliest pair under the optimal mixed strategies"
    reading = (f"The principal variation: {how}. From the start it lasts {plies} pl{'y' if plies == 1 else 'ies'}"
               + (f" and {chance} chance step{'s' if chance != 1 else ''}" if chance else "")
               + f", and then {end}.")
    sec = Section(title, reading)
    if not steps:
        return sec
    shown = min(len(steps), LINE_BOARDS)
    try:
        pictures = [g.picture(st) for st in states[:shown + 1]]
        captions = ["start"] + [_step_text(t, i, st) for i, st in enumerate(steps[:shown], 1)]
        _strips(doc, sec, "line", pictures, captions,
                f"The start and the first {shown} steps of the principal variation" if shown > 1 else
                "The start and the first step of the principal variation")
    except Exception as exc:  # drawing is a bonus: the text below still gives the line
        sec.note(f"the positions could not be drawn ({type(exc).__name__}: {exc})")
    sec.text("The whole line: " + "; ".join(_step_text(t, i, st) for i, st in enumerate(steps, 1))
             + f" ({end}).")
    return sec


def _merge_symmetric(table: pl.DataFrame, groups: list[list[str]], keys: np.ndarray,
                     solution: Any) -> tuple[pl.DataFrame, list[list[str]]]:
    """Tables solved without symmetry: merge opening moves whose results are symmetric images
    (same canonical key); symmetric positions have the same value, so the first row is kept."""
    g = solution.game
    canon = [int(g.encode(g.canonical(g.decode(int(keys[d]))))) for d in table["dst"].to_list()]
    first: dict[int, int] = {}
    keep: list[int] = []
    merged: list[list[str]] = []
    moves = table["moves"].to_list()
    total: list[int] = []
    for i, c in enumerate(canon):
        if c in first:
            j = first[c]
            merged[j] = merged[j] + groups[i]
            total[j] += moves[i]
        else:
            first[c] = len(keep)
            keep.append(i)
            merged.append(list(groups[i]))
            total.append(moves[i])
    out = table[keep].with_columns(moves=pl.Series(total, dtype=pl.Int64))
    return out, merged


#: at most this many exceptional setups are drawn as boards (the rest are counted)
MAX_SETUP_PICTURES = 30
#: boards per picture strip
STRIP_BOARDS = 6


def _setup_result(t: _Tables, value: str, remoteness: Any, margin: Any = None) -> str:
    """One setup's result in words: ``White wins in 12 plies``, ``a tie after 9 plies``."""
    s = t.seats
    plies = "" if remoteness is None else f" {'in' if value in ('win', 'lose') else 'after'} {int(remoteness)} " \
                                          f"pl{'y' if int(remoteness) == 1 else 'ies'}"
    text = {"win": f"{s.short(s.first)} wins", "lose": f"{s.short(s.second)} wins", "tie": "a tie",
            "draw": "a draw (never ends)"}.get(value, str(value))
    return text + ("" if value == "draw" else plies)


def _strips(doc: Document, sec: Section, stem: str, pictures: Sequence[Any], captions: Sequence[str],
            caption: str) -> None:
    """Board pictures in strips of :data:`STRIP_BOARDS`, each an SVG of the document."""
    from analysis.boards import svg_strip

    total = len(pictures)
    strips = -(-total // STRIP_BOARDS)
    sizes = [total // strips + (1 if k < total % strips else 0) for k in range(strips)] if total else []
    i = 0
    for k, size in enumerate(sizes, 1):
        name = f"{stem}_{k}"
        doc.svgs[name] = svg_strip(list(pictures[i:i + size]), list(captions[i:i + size]), with_legend=True)
        part = "" if strips == 1 else f" ({i + 1} of {total})" if size == 1 else f" ({i + 1}-{i + size} of {total})"
        sec.boards(name, caption + part)
        i += size


def _setups_list_section(doc: Document, t: _Tables, solution: Any = None) -> Section:
    """The setups, designer first: the ones that do not go the way most setups go, drawn as
    boards, then one line on the rest."""
    table = t.setups if t.setups is not None else M.setups_from_tables(t.positions, t.edges, t.root)
    n = table.height
    summ = M.setup_summary(table)
    shares, counts = summ["shares"], summ["counts"]
    # the result most setups go to (by probability, then by count)
    common = max(M.SHOWN_VALUES, key=lambda v: (shares[v], counts[v]))
    s = t.seats
    goes = {"win": f"go to {t.who(s.first)}", "lose": f"go to {t.who(s.second)}",
            "tie": "end in a tie", "draw": "lead to a draw (endless play)"}[common]
    has_layout = "layout" in table.columns
    has_margin = "margin" in table.columns
    order = {"lose": 0, "win": 0, "tie": 1, "draw": 2}
    others = table.filter(pl.col("value") != common)
    others = others.with_columns(_order=pl.col("value").replace_strict(order, default=3)).sort(
        ["_order", "probability"], descending=[False, True], maintain_order=True).drop("_order")
    rest = table.filter(pl.col("value") == common)
    k = others.height
    reading = (f"The game starts with a random setup: {n:,} distinct setups up to symmetry. "
               f"{counts[common]:,} of them ({_pct(shares[common])} by probability) {goes}")
    if k == 0:
        reading += "; every setup does, so no setup is an exception."
    else:
        parts = []
        for v in M.SHOWN_VALUES:
            c = counts[v]
            if v == common or not c:
                continue
            parts.append(f"{t.who(s.first if v == 'win' else s.second)} wins {c:,}" if v in ("win", "lose")
                         else f"{c:,} {'is a' if c == 1 else 'are'} {v}{'' if c == 1 else 's'}")
        reading += (f". The {k:,} setup{'s' if k != 1 else ''} that do{'es' if k == 1 else ''} not "
                    f"{goes} {'are' if k != 1 else 'is'} shown first: " + ", ".join(parts) + ".")
    sec = Section("Opening moves: the setups", reading)
    if k:
        shown = others.head(MAX_SETUP_PICTURES)
        equal_p = table["probability"].n_unique() == 1
        pictures, captions, failed = [], [], None
        if solution is not None:
            try:
                g = solution.game
                keys = shown["key"].to_list() if "key" in shown.columns else \
                    [int(t.positions["key"][d]) for d in shown["dst"].to_list()]
                for key, r in zip(keys, shown.iter_rows(named=True)):
                    pictures.append(g.picture(g.decode(int(key))))
                    lines = [_setup_result(t, r["value"], r["remoteness"])]
                    if has_margin and r.get("margin") is not None:
                        lines.append(f"margin {int(r['margin']):+d} for {s.short(s.first)}")
                    if not equal_p:
                        lines.append(f"probability {_prob(r['probability'])}")
                    captions.append("\n".join(lines))
            except Exception as exc:  # a game whose positions cannot be drawn still gets its table
                pictures, failed = [], f"{type(exc).__name__}: {exc}"
        if pictures:
            _strips(doc, sec, "setups", pictures, captions,
                    f"Setups that do not {goes}, as dealt (perfect play from there)")
        rows = []
        for r in shown.iter_rows(named=True):
            row = ([" ".join(str(r["layout"]).split())] if has_layout else []) + [
                _prob(r["probability"]), _setup_result(t, r["value"], r["remoteness"])]
            if has_margin:
                row.append(f"{r['margin']:+d}")
            rows.append(row)
        sec.table((["setup"] if has_layout else []) + ["probability", "result with perfect play"]
                  + ([f"margin ({s.short(s.first)})"] if has_margin else []), rows)
        if k > MAX_SETUP_PICTURES:
            sec.note(f"the first {MAX_SETUP_PICTURES} of these {k:,} setups are shown; "
                     f"{k - MAX_SETUP_PICTURES:,} more are in the setups table.")
        if failed:
            sec.note(f"the setups could not be drawn ({failed})")
    if rest.height:
        rem = rest["remoteness"].drop_nulls()
        line = (f"The other {rest.height:,} setup{'s' if rest.height != 1 else ''} "
                f"({_pct(shares[common])} by probability) "
                + ("all " if rest.height > 1 else "") + f"{goes}")
        if rem.len():
            lo, hi = int(rem.min()), int(rem.max())
            span = f"{lo} to {hi} plies" if lo != hi else f"{lo} pl{'y' if lo == 1 else 'ies'}"
            line += f", {'in' if common in ('win', 'lose') else 'after'} {span}"
        if has_margin and rest["margin"].len():
            mlo, mhi = int(rest["margin"].min()), int(rest["margin"].max())
            line += (f", with margins from {mlo:+d} to {mhi:+d}" if mlo != mhi else f", with margin {mlo:+d}") \
                + f" for {t.who(s.first)}"
        sec.text(line + ".")
    return sec


def _histogram_section(doc: Document, t: _Tables) -> Section:
    if t.kind == "stochastic":
        span = float(t.meta.get("payoff_scale") or 1.0) if t.payoff else 1.0
        hist = M.expected_histogram(t.positions, span=span)
        n, mean, positive = M.expected_summary(t.positions)
        reading = (f"With chance in play there is no remoteness. Across the {n:,} positions "
                   f"the side to move expects on average {mean:+.3f}; "
                   f"{_pct(float(positive))} of positions favour the side to move.")
        sec = Section(f"{t.expect.capitalize()}s of all positions", reading)
        digits = 1 if span == 1.0 else 3
        sec.table([f"{t.expect} from", "to", "positions"],
                  [[f"{lo:+.{digits}f}", f"{hi:+.{digits}f}", c] for lo, hi, c in hist.iter_rows() if c])
        sec.note("empty ranges are left out of the table.")
        doc.new_figure("value_histogram", lambda ax: plots.expected_histogram(
            ax, hist, xlabel=f"{t.expect} of the side to move"
            + ("" if t.payoff else " (-1 loss ... +1 win)")))
        sec.figure("value_histogram", f"Positions by the {t.expect} of the side to move.")
        sec.note("remoteness-based sections (the GAMESMAN value/remoteness table) need a game "
                 f"without chance; they are replaced by the distribution of {t.expect}s.")
        return sec
    table = M.value_remoteness_table(t.positions)
    tot = {v: int(table[v].sum()) for v in M.SHOWN_VALUES}
    n = sum(tot.values())
    finite = table.filter(pl.col("remoteness").is_not_null())
    max_win = finite.filter(pl.col("win") > 0)["remoteness"].max()
    max_lose = finite.filter(pl.col("lose") > 0)["remoteness"].max()
    parts = [f"{_pct(tot[v] / n)} {name}" for v, name in
             (("win", "are wins"), ("lose", "losses"), ("tie", "ties"), ("draw", "draws")) if tot[v]]
    reading = f"Of the {n:,} positions, " + ", ".join(parts) + " for the side to move."
    if max_win is not None:
        reading += f" The longest forced win takes {max_win} plies"
        reading += f"; the longest a lost side can hold out is {max_lose} plies." if max_lose is not None else "."
    sec = Section("Value and remoteness", reading)
    rows = [["draw" if r["remoteness"] is None else r["remoteness"], r["win"], r["lose"], r["tie"], r["draw"], r["total"]]
            for r in table.iter_rows(named=True)]
    rows.append(["total", tot["win"], tot["lose"], tot["tie"], tot["draw"], n])
    sec.table(["remoteness", "win", "lose", "tie", "draw", "total"], rows)
    doc.new_figure("value_remoteness", lambda ax: plots.remoteness_histogram(ax, table))
    sec.figure("value_remoteness", "Positions by value of the side to move for each remoteness "
                                   "(GAMESMAN's analyzer); draws have no remoteness.")
    if t.kind == "setups":
        sec.note("the chance node that deals the setup is left out (its value is an expectation).")
    return sec


def _ply_list(plies: Sequence[int]) -> str:
    """``3``, ``3 and 5``, ``the odd plies from 3 to 17``, ``2, 5, 9 and 12``."""
    plies = [int(p) for p in plies]
    if len(plies) == 1:
        return f"ply {plies[0]}"
    steps = {b - a for a, b in zip(plies, plies[1:])}
    if len(plies) > 3 and steps == {2}:
        return f"the {'odd' if plies[0] % 2 else 'even'} plies from {plies[0]} to {plies[-1]}"
    if len(plies) > 3 and steps == {1}:
        return f"plies {plies[0]} to {plies[-1]}"
    shown = plies if len(plies) <= 12 else plies[:12]
    text = ", ".join(map(str, shown[:-1])) + f" and {shown[-1]}" if len(shown) == len(plies) else \
        ", ".join(map(str, shown)) + f" and {len(plies) - len(shown)} more"
    return "plies " + text


def _without_finished_plies(table: pl.DataFrame) -> tuple[pl.DataFrame, str | None]:
    """Leave out the plies whose positions are all final (the game is over there: a final
    position's value says who won, not who is winning); returns the rest and a note saying so."""
    done = table.filter(pl.col("finished") == pl.col("positions"))
    note = None
    if done.height:
        n = int(done["positions"].sum())
        note = (f"{_ply_list(done['ply'].to_list()).capitalize()} "
                f"{'holds' if done.height == 1 else 'hold'} only finished games ({n:,} final "
                f"position{'s' if n != 1 else ''}) and {'is' if done.height == 1 else 'are'} left out of "
                "the table and the figure: there the game is over, so the value says who won, not who "
                "is winning.")
    return table.filter(pl.col("finished") < pl.col("positions")), note


#: what "ply" means in the by-ply tables of games with chance
_CHANCE_PLIES = ("here a position's ply counts every step from the start, chance steps (the deal of "
                 "a setup, dice rolls) included; game lengths elsewhere count moves only.")


def _ply_section(doc: Document, t: _Tables) -> Section:
    if t.kind == "stochastic":
        full = M.expected_by_ply(t.positions)
        sec = Section("Positions by ply", ("Mean expected payoff" if t.payoff else "Mean win and loss probability")
                      + " of the side to move at each ply from the start (positions counted once, at the "
                      "fewest moves that reach them).")
        table, note = _without_finished_plies(full)
        cols = [c for c in ("mean_p_win", "mean_p_loss", "mean_expected") if c in table.columns
                and not (t.payoff and c != "mean_expected")]
        sec.table(["ply", "positions"] + [c.replace("mean_", "mean ").replace("_", " ") for c in cols],
                  [[r["ply"], r["positions"]] + [f"{r[c]:+.3f}" if c == "mean_expected" else _pct(r[c]) for c in cols]
                   for r in table.head(MAX_ROWS).iter_rows(named=True)])
        return _ply_notes_and_figure(doc, sec, t, table, note, table.height - MAX_ROWS, plots.expected_by_ply,
                                     ("Mean expected payoff" if t.payoff else "Mean win / loss probability "
                                      "and expected result") + " of the side to move by ply.")
    full = M.value_by_ply(t.positions)
    table, note = _without_finished_plies(full)
    plies = table["ply"].to_numpy()
    ws = table["win_share"].to_numpy()
    ds = table["draw_share"].to_numpy()
    reading = (f"Positions first reached at each ply (fewest moves from the start), by the value for "
               f"the side to move; there are {full.height} plies")
    reading += (f", {full.height - table.height} of them with finished games only. " if table.height < full.height
                else ". ")
    parts = []
    if len(plies) and ws.any():
        k = int(np.argmax(ws))
        parts.append(f"the side to move is winning most often at ply {plies[k]} ({_pct(ws[k])} of its positions)")
    if len(plies) and ds.any():
        j = int(np.argmax(ds))
        parts.append(f"draws are most common at ply {plies[j]} ({_pct(ds[j])})")
    if parts:
        text = "; ".join(parts)
        reading += text[0].upper() + text[1:] + "."
    sec = Section("Positions by ply", reading)
    rows = [[r["ply"], r["positions"], _pct(r["win_share"]), _pct(r["lose_share"]), _pct(r["tie_share"]),
             _pct(r["draw_share"])] for r in table.iter_rows(named=True)]
    sec.table(["ply", "positions", "win", "lose", "tie", "draw"], rows[:MAX_ROWS * 2])
    return _ply_notes_and_figure(doc, sec, t, table, note, len(rows) - MAX_ROWS * 2, plots.value_by_ply,
                                 "Share of wins / losses / ties / draws for the side to move at each ply.")


def _ply_notes_and_figure(doc: Document, sec: Section, t: _Tables, table: pl.DataFrame, note: str | None,
                          hidden: int, draw: Callable[[Axes, pl.DataFrame], Any], caption: str) -> Section:
    """The end of the per-ply section: what the table leaves out, and the figure."""
    if hidden > 0:
        sec.note(f"{hidden} later plies are in the figure only.")
    if note:
        sec.note(note)
    if M.has_chance(t.positions):
        sec.note(_CHANCE_PLIES)
    if table.height:
        doc.new_figure("value_by_ply", lambda ax: draw(ax, table))
        sec.figure("value_by_ply", caption)
    return sec


def _play_stats(t: _Tables, exact_limit: int,
                on_matchup: Callable[[int, int, str], None] | None = None) -> dict[str, M.PlayStats] | str:
    """Random / perfect matchups, or the reason they are skipped. ``on_matchup(i, n, name)``
    before each (progress: each can take half a minute on a million positions)."""
    if t.edges is None:
        why, fix = _no_edges(t)
        return f"{why[0].lower() + why[1:]} ({fix})" if t.meta.get("layout") == "tiered" else \
            "the edges table is missing (solve with edges to get random-play figures)"
    if t.players != 2:
        return f"random-play figures need two-player tables; this variant has {t.players} players"
    out: dict[str, M.PlayStats] = {}
    pairs = [("random", "random"), ("random", "perfect"), ("perfect", "random"), ("perfect", "perfect")]
    for i, (first, second) in enumerate(pairs, 1):
        if on_matchup is not None:
            on_matchup(i, len(pairs), f"{first} vs {second}")
        try:
            out[f"{first} vs {second}"] = M.play_statistics(
                t.positions, t.edges, first=first, second=second, meta=t.meta, exact_limit=exact_limit)
        except ValueError as exc:  # e.g. perfect play at simultaneous nodes
            out.setdefault("_skipped", str(exc))  # type: ignore[arg-type]
    return out


def _matchup_label(key: str, t: _Tables | None = None) -> str:
    """``random (1st) vs perfect (2nd)``; with named seats ``random (Black) vs perfect (White)``."""
    first, second = key.split(" vs ")
    if t is not None and t.seats.named:
        return f"{first} ({t.seats.name(t.first)}) vs {second} ({t.seats.name(t.seats.second)})"
    return f"{first} (1st) vs {second} (2nd)"


def _difficulty_section(doc: Document, t: _Tables, play: dict[str, M.PlayStats] | str) -> Section:
    if t.edges is None:
        why, fix = _no_edges(t)
        sec = Section("Decision difficulty", f"{why}, so moves cannot be compared.")
        sec.note(fix)
        return sec
    d = M.decision_difficulty(t.positions, t.edges)
    if t.kind == "stochastic":
        reading = (f"Over the {d.positions:,} decision position{'s' if d.positions != 1 else ''}, on average {_pct(d.good_move_share)} of the "
                   f"legal moves are optimal (reach the best {t.expect}); in {_pct(d.only_move_share)} "
                   f"only one move is. A uniformly random move gives away {d.mean_loss:.3f} of "
                   f"{t.expect} on average." if d.positions else "There are no decision positions.")
        rows = [["decision positions", d.positions], ["only one optimal move", _pct(d.only_move_share)],
                ["average share of optimal moves", _pct(d.good_move_share)],
                ["single legal move (forced)", _pct(d.forced_share)],
                [f"{t.expect} lost by a random move", _fmt(d.mean_loss)]]
    elif d.positions:
        reading = (f"In the {d.positions:,} positions where the side to move can force a win, on average "
                   f"{_pct(d.good_move_share)} of the legal moves keep the win, and in {_pct(d.only_move_share)} "
                   f"exactly one move does (an 'only move'; {_pct(d.forced_share)} have a single legal move).")
        rows = [["winning positions", d.positions], ["only one winning move", _pct(d.only_move_share)],
                ["average share of winning moves", _pct(d.good_move_share)],
                ["single legal move (forced)", _pct(d.forced_share)]]
        for v in ("tie", "draw"):
            if v in d.keep_share:
                rows.append([f"average share of moves that keep a {v}", _pct(d.keep_share[v])])
    else:
        reading = "No position with a legal move is a win for the side to move."
        rows = [["winning positions", 0]]
    if isinstance(play, dict) and "random vs perfect" in play:
        rp, pr, rr = play["random vs perfect"], play["perfect vs random"], play["random vs random"]
        reading += (f" A player choosing uniformly at random among the legal moves wins "
                    f"{_pct(rp.p_first)} of games as {t.bare(t.first)} and {_pct(pr.p_second)} as "
                    f"{t.bare(t.seats.second)} against a perfect player; two random players: "
                    f"{t.bare(t.first) if t.seats.named else 'the first'} wins {_pct(rr.p_first)}, "
                    f"{t.bare(t.seats.second) if t.seats.named else 'the second'} {_pct(rr.p_second)}.")
        a, b = ((t.seats.name(t.first), t.seats.name(t.seats.second)) if t.seats.named else ("1st", "2nd"))
        rows += [[f"random ({a}) beats perfect ({b})", _pct(rp.p_first)],
                 [f"random ({b}) beats perfect ({a})", _pct(pr.p_second)],
                 [f"random vs random: {t.bare(t.first)} wins", _pct(rr.p_first)],
                 [f"random vs random: {t.bare(t.seats.second)} wins", _pct(rr.p_second)],
                 ["random vs random: tied end", _pct(rr.p_tie)],
                 ["random vs random: never ends" if rr.exact else
                  f"random vs random: not over after {rr.max_plies:,} plies", _pct(rr.p_unfinished)]]
    sec = Section("Decision difficulty", reading)
    sec.table(["measure", "value"], rows)
    if len(d.shares):
        what = "optimal" if t.kind == "stochastic" else "winning"
        doc.new_figure("good_moves", lambda ax: plots.good_move_shares(
            ax, d.shares, what=what, title="How many moves are optimal" if what == "optimal" else
            "How many moves keep the win"))
        sec.figure("good_moves", f"Share of legal moves that are {what}, over the "
                                 f"{'decision' if what == 'optimal' else 'winning'} positions.")
    if isinstance(play, dict) and "random vs random" in play:
        keys = [k for k in play if not k.startswith("_")]
        doc.new_figure("play_outcomes", lambda ax: plots.play_outcomes(
            ax, [_matchup_label(k, t) for k in keys],
            [{"first": play[k].p_first, "second": play[k].p_second, "tie": play[k].p_tie,
              "unfinished": play[k].p_unfinished} for k in keys],
            names=(t.seats.short(t.first), t.seats.short(t.seats.second)) if t.seats.named else None),
            size=(7.0, 3.2))
        sec.figure("play_outcomes", "Results of games between random and perfect players "
                                    f"(colours from {t.who(t.first)}'s point of view).")
        methods = sorted({play[k].method for k in keys})
        best = (f"the largest {t.expect}" + ("" if t.payoff else ", then the largest win probability")
                if t.kind == "stochastic"
                else "win fastest, tie, draw, lose slowest")
        exact = all(play[k].exact for k in keys)
        if t.payoff:
            sec.note("the game's ends pay real amounts: here a game is won by the side its end pays "
                     "more than nothing, lost by the side it pays less, and tied when it pays nothing.")
        sec.note("how random play was computed: " + "; ".join(methods) + ". The perfect player picks "
                 f"uniformly among the best moves ({best}). These are {'exact ' if exact else ''}"
                 "versions of Ludii's clarity (share of winning moves), decisiveness (random vs perfect) "
                 "and balance (random vs random) measures.")
        if "_skipped" in play:
            sec.note(f"some matchups were skipped: {play['_skipped']}")
    elif isinstance(play, str):
        sec.note(play)
    return sec


def _length_section(doc: Document, t: _Tables, play: dict[str, M.PlayStats] | str) -> Section:
    v = t.verdict
    if isinstance(play, str) or "random vs random" not in play:
        if t.kind == "deterministic":
            reading = (f"With perfect play the game lasts {v.remoteness} plies." if v.remoteness is not None
                       else "With perfect play the game never ends (a draw).")
        else:
            reading = "Game lengths need the edges table of a two-player variant."
        sec = Section("Game length", reading)
        sec.note(play if isinstance(play, str) else "random play could not be computed")
        return sec
    rr = play["random vs random"]
    pp = play.get("perfect vs perfect")
    if t.kind == "deterministic":
        perfect_txt = (f"With perfect play the game lasts exactly {v.remoteness} plies (the winner "
                       f"hurries, the loser holds out)." if v.remoteness is not None
                       else "With perfect play the game never ends (a draw).")
        perfect_line = v.remoteness
    else:
        perfect_line = None
        never = "never end" if pp is None or pp.exact else f"are not over after {pp.max_plies:,} plies"
        perfect_txt = (f"With perfect play a game lasts {_plies(pp.expected_length)} plies on average"
                       + (f" ({_pct(pp.p_unfinished)} {never})" if pp.p_unfinished >= 5e-4 else "") + "."
                       if pp is not None and pp.expected_length is not None
                       else "With perfect play the game never ends." if pp is not None
                       else "The perfect-play length is not computed (perfect play is not in the table).")
    reading = perfect_txt + (f" Two random players take {_plies(rr.expected_length)} plies on average"
                             if rr.expected_length is not None else " Random play never ends")
    if len(rr.lengths):
        reading += f" (from {int(rr.lengths.min())} to {int(rr.lengths.max())} plies with non-zero probability)"
    reading += "."
    if rr.p_unfinished >= 5e-4:
        reading += (f" {_pct(rr.p_unfinished)} of random games never end." if rr.exact else
                    f" {_pct(rr.p_unfinished)} of the simulated random games were still running after "
                    f"{rr.max_plies:,} plies.")
    sec = Section("Game length", reading)
    rows = []
    keys = [k for k in play if not k.startswith("_")]
    for k in keys:
        s = play[k]
        rows.append([_matchup_label(k, t), _plies(s.expected_length), _pct(1 - s.p_unfinished),
                     int(s.lengths.min()) if len(s.lengths) else "-", int(s.lengths.max()) if len(s.lengths) else "-"])
    sec.table(["players", "mean plies (games that end)", "games that end", "shortest", "longest"], rows)
    series = {_matchup_label(k, t): (play[k].lengths, play[k].length_probs) for k in keys
              if k != "perfect vs perfect" or t.kind != "deterministic"}
    doc.new_figure("game_length", lambda ax: plots.length_distribution(
        ax, series, perfect=perfect_line, title="Game length: perfect vs random play"))
    sec.figure("game_length", "Share of games over after at most k plies, for each pair of players "
                              "(exact distribution); dashed line: the perfect-play length.")
    if not rr.exact:
        sec.note(rr.method)
    return sec


def _structure_section(doc: Document, t: _Tables) -> Section:
    s = M.structure(t.positions, t.edges)
    reading = (f"{s.positions:,} positions{' (one per symmetry class)' if t.meta.get('symmetry', True) else ''}, "
               f"{s.terminal:,} of them final.")
    if s.branching_mean is not None:
        reading += f" A player has {s.branching_mean:.1f} legal moves on average (at most {s.branching_max})."
    if s.cyclic_share is not None:
        reading += (f" {_pct(s.cyclic_share)} of positions lie on a cycle (play can return to them), "
                    f"so endless play is possible." if s.cyclic_share > 0
                    else " No position can repeat: every game ends.")
    sec = Section("Structure", reading)
    rows = [["positions", s.positions], ["terminal positions", s.terminal],
            ["decision positions", s.decision]]
    if s.chance:
        rows.append(["chance positions", s.chance])
    if s.moves is not None:
        rows.append(["moves (edges)", s.moves])
    rows += [["branching factor: mean", _fmt(s.branching_mean)], ["branching factor: max", s.branching_max]]
    if s.cyclic_share is not None:
        rows += [["positions on a cycle", _pct(s.cyclic_share)], ["cyclic components", s.cycles],
                 ["largest cyclic component", s.largest_cycle]]
    for v, c in s.by_value.items():
        rows.append([f"positions: {v}", c])
    sec.table(["", "count"], rows)
    nm = M.branching_counts(t.positions)
    if nm.height:
        doc.new_figure("branching", lambda ax: plots.branching(ax, nm["num_moves"].to_numpy(),
                                                             weights=nm["positions"].to_numpy()))
        sec.figure("branching", "Number of legal moves over the non-terminal decision positions.")
    if s.cycle_method:
        sec.note(f"cycles: positions in a strongly connected component of more than one position (or "
                 f"with a move back to itself) of the stored position graph, found with {s.cycle_method}"
                 f"{'; with symmetry a cycle may pass through symmetric images of a position' if t.meta.get('symmetry', True) else ''}.")
    else:
        sec.note("cycles need every move: " + _no_edges(t)[0][0].lower() + _no_edges(t)[0][1:] + ".")
    return sec


def _provenance_section(t: _Tables, solution: Any) -> Section:
    m = t.meta
    variant = getattr(getattr(solution, "game", None), "variant", None)
    given = variant.as_text() if variant is not None and variant.as_text() == m.get("variant") else m.get("variant")
    params = ", ".join(f"{k}={v}" for k, v in (given or {}).items()) or "-"
    sec = Section("Provenance", "Where the numbers come from: the table this report was computed from.")
    secs = m.get("solve_seconds")
    took = f"{secs:.2f}" if isinstance(secs, (int, float)) else "-"
    tiers = m.get("tiers")
    if isinstance(tiers, list) and tiers and isinstance(secs, (int, float)):
        # a tiered solve can resume over several runs: its metadata's time is the last run's
        summed = sum(float(x.get("seconds") or 0.0) for x in tiers)
        took += (f" (the last run; all runs, each part's own time summed: {summed:,.0f})" if summed > 0
                 else " (the last run)")
    rows = [["game", m.get("game")], ["variant", m.get("label")], ["parameters", params],
            ["variant id", m.get("variant_id")], ["rules version", m.get("rules_version")],
            ["toolkit version", m.get("toolkit_version")], ["solver", m.get("solver")],
            ["solution", m.get("solution")], ["symmetry", m.get("symmetry")],
            ["table", str(getattr(solution, "path", "-"))],
            ["solve time (s)", took],
            ["solved at", m.get("created")]]
    sec.table(["", ""], rows)
    return sec


if __name__ == "__main__":  # python -m analysis.report [game ...]: reports of the presets
    import sys

    report_presets(sys.argv[1:] or None)
