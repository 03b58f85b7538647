"""Reports that answer a game designer first (issue 13): seats by name, the setups that go the
other way drawn as boards, an all-draw opening in one sentence, what a rule change changes in a
sweep, per-ply tables without finished-only plies, a glossary, the rulebook's warnings, the
opening line as boards and text, and wide tables kept inside the HTML page.

Every check ties the text to a number read from the tables (or from the solution's own lookups),
never to a number typed in by hand alone.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import polars as pl
import pytest

import analysis.report as R
from analysis import metrics as M
from analysis.report import GLOSSARY, write_report
from analysis.tuning import run_sweep
from solver.api import Solution, make_game, solve
from solver.core.game import Game
from solver.games import game_class
from tests.toygames import W0, DiceRace, Explicit

NS = "{http://www.w3.org/2000/svg}"


# --- shared solves and reports (each solved and written once per module) ---------------------

@pytest.fixture(scope="module")
def override(tmp_path_factory: pytest.TempPathFactory) -> tuple[Solution, str, str, Path]:
    """Override 2x2, lines of 2, one pyramid of each size: a first-player (A) win in 3 plies."""
    root = tmp_path_factory.mktemp("override")
    sol = solve(make_game("override", size=2, line=2, per_size=1), out=root / "tables")
    md = write_report(sol, root / "report")
    return sol, md.read_text(), (md.parent / "report.html").read_text(), md.parent


@pytest.fixture(scope="module")
def greener(tmp_path_factory: pytest.TempPathFactory) -> tuple[Solution, str, str, Path]:
    """Greener 3x3 with 2 black and 2 white pyramids over every setup (outside the rulebook)."""
    root = tmp_path_factory.mktemp("greener")
    sol = solve(make_game("greener", rows=3, cols=3, black=2, white=2, setup="all"), out=root / "tables")
    md = write_report(sol, root / "report")
    return sol, md.read_text(), (md.parent / "report.html").read_text(), md.parent


def section(text: str, title: str) -> str:
    """The Markdown of the section called ``title`` (up to the next section)."""
    m = re.search(rf"^## \d+\. {re.escape(title)}\n(.*?)(?=^## \d+\. |\Z)", text, flags=re.M | re.S)
    assert m, f"no section {title!r}"
    return m.group(1)


def boards_in(folder: Path, stem: str) -> list[ET.Element]:
    """The drawn boards of the SVG strips ``figures/<stem>_<k>.svg``, in order."""
    out = []
    for path in sorted((folder / "figures").glob(f"{stem}_*.svg"), key=lambda p: int(p.stem.split("_")[-1])):
        root = ET.fromstring(path.read_text())
        out += [g for g in root.iter(NS + "g") if g.get("class") == "board"]
    return out


def captions(board: ET.Element) -> list[str]:
    return [el.text or "" for el in board.iter(NS + "text") if el.get("class") == "caption"]


# --- 1. seat names ----------------------------------------------------------------------------

def test_games_declare_their_seat_names():
    assert Game.seat_names == ("Player 1", "Player 2")
    assert game_class("override").seat_names == ("A", "B")  # render(): A is player 1
    assert game_class("greener").seat_names == ("Black", "White")
    assert game_class("carrots").seat_names == ("Carrots", "Broccoli")
    assert game_class("petal").seat_names == ("Player 1", "Player 2")
    assert game_class("blam").seat_names[:4] == ("Player 1", "Player 2", "Player 3", "Player 4")


def test_verdict_names_the_seats_once_with_their_number(override, greener):
    sol, text, page, _ = override
    rem = sol.root.remoteness  # the start's remoteness from the table
    assert sol.root.value == "win" and sol.root.to_move == 0
    sentence = f"With perfect play A (player 1, moves first) wins in {rem} plies."
    assert sentence in text and sentence in page
    assert text.count("(player 1, moves first)") == 1  # the name is tied to the number once
    assert "| first player | A (player 1) |" in text
    assert "| value for A | win |" in text
    # the random-play rows name the seats too (numbers from the edges table)
    rr = M.play_statistics(sol.positions, sol.edges, first="random", second="random", meta=sol.meta)
    assert f"| random vs random: A wins | {100 * rr.p_first:.1f}% |" in text
    assert f"| random vs random: B wins | {100 * rr.p_second:.1f}% |" in text

    gsol, gtext, _, _ = greener
    s = gsol.setups
    win = float(s.filter(pl.col("value") == "win")["probability"].sum())
    lose = float(s.filter(pl.col("value") == "lose")["probability"].sum())
    assert (f"Black (player 1, moves first) wins {100 * win:.1f}% of setups and White (player 2) "
            f"wins {100 * lose:.1f}%") in gtext
    assert gtext.count("(player 1, moves first)") == 1
    n_win = s.filter(pl.col("value") == "win").height
    assert f"| Black wins | {n_win} | {100 * win:.1f}% |" in gtext


def test_unnamed_seats_keep_the_role_words(tmp_path: Path):
    # A game whose seats are "Player n": the verdict says "the first player (Player 1)".
    game = Explicit({0: (0, [1], None), 1: (1, [], W0)})
    text = write_report(solve(game, out=tmp_path / "t"), tmp_path / "r").read_text()
    assert "With perfect play the first player (Player 1) wins in 1 ply." in text


# --- 2. random setups: the exceptions first, as boards -----------------------------------------

def test_setups_that_do_not_go_to_the_favoured_side_are_drawn_first(greener):
    sol, text, page, folder = greener
    s = sol.setups
    shares = {v: float(s.filter(pl.col("value") == v)["probability"].sum()) for v in M.SHOWN_VALUES}
    assert max(shares, key=shares.get) == "win"  # Black is favoured
    others = s.filter(pl.col("value") != "win")
    k = others.height
    assert 0 < k <= R.MAX_SETUP_PICTURES
    sec = section(text, "Opening moves: the setups")
    n_white = s.filter(pl.col("value") == "lose").height
    n_tie = s.filter(pl.col("value") == "tie").height
    assert f"The {k} setups that do not go to Black are shown first: White wins {n_white}" in sec
    assert f"{n_tie} is a tie" in sec
    # one board per exceptional setup, in SVG files beside the Markdown and inline in the HTML
    boards = boards_in(folder, "setups")
    assert len(boards) == k
    assert "figures/setups_1.svg" in sec
    assert page.count('class="board-strip"') >= len(list((folder / "figures").glob("setups_*.svg")))
    # every exceptional setup is listed by layout, and no setup Black wins is
    for layout in others["layout"].to_list():
        assert f"| {layout} |" in sec
    for layout in s.filter(pl.col("value") == "win")["layout"].to_list():
        assert f"| {layout} |" not in sec
    # the captions give each drawn setup's result from the table (in the listed order)
    results = [R._setup_result(_tables_of(sol), r["value"], r["remoteness"]) for r in
               others.with_columns(o=pl.col("value").replace_strict({"lose": 0, "tie": 1, "draw": 2}))
               .sort(["o", "probability"], descending=[False, True], maintain_order=True).iter_rows(named=True)]
    assert [captions(b)[0] for b in boards] == results
    # then one line on the rest, with the numbers of the table
    rest = s.filter(pl.col("value") == "win")
    rem, mar = rest["remoteness"], rest["margin"]
    assert (f"The other {rest.height} setups ({100 * shares['win']:.1f}% by probability) all go to Black, "
            f"in {rem.min()} to {rem.max()} plies, with margins from {mar.min():+d} to {mar.max():+d} "
            f"for Black.") in sec


def test_many_exceptional_setups_are_cut_and_counted(greener, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    sol = greener[0]
    k = sol.setups.filter(pl.col("value") != "win").height
    monkeypatch.setattr(R, "MAX_SETUP_PICTURES", 10)
    md = write_report(sol, tmp_path / "r")
    assert len(boards_in(md.parent, "setups")) == 10
    assert f"the first 10 of these {k} setups are shown; {k - 10} more are in the setups table." in md.read_text()


def _tables_of(sol: Solution) -> R._Tables:
    """The report's view of a solution (for the caption helper)."""
    v = M.verdict(sol.positions, sol.meta, setups=sol.setups, edges=sol.edges, seat_names=sol.game.seat_names)
    return R._Tables(sol.positions, sol.edges, sol.setups, sol.meta, M.solution_kind(sol.positions, sol.meta),
                     M.root_row(sol.positions, sol.meta), 2, v, M.Seats.of(sol.game.seat_names, v.first_player))


# --- 3. an all-draw opening ---------------------------------------------------------------------

#: Player 1 picks node 1 or 2; from either, Player 2 can only go back (node 2 also has a move
#: that hands Player 1 the win, which Player 2 avoids): every first move is a draw.
ALL_DRAW = {0: (0, [1, 2], None), 1: (1, [0], None), 2: (1, [0, 3], None), 3: (0, [], W0)}


@pytest.mark.parametrize("edges", [True, False])
def test_all_draw_opening_is_one_sentence(tmp_path: Path, edges: bool):
    sol = solve(Explicit(ALL_DRAW), out=tmp_path / "t", symmetry=False)
    moves = sol.moves(sol.game.initial_state())
    assert {m.value for m in moves} == {"draw"}
    if not edges:  # e.g. a tiered table too large to regenerate its moves: looked up one by one
        sol = Solution(game=sol.game, positions=sol.positions, meta=sol.meta, path=sol.path, edges=None)
    md = write_report(sol, tmp_path / "r")
    sec = section(md.read_text(), "Opening moves")
    assert f"Every one of the {len(moves)} first moves is a draw" in sec
    assert sec.count("draw") == 1  # said once, no table or chart of identical rows
    assert "opening_moves.png" not in sec
    assert not (md.parent / "figures" / "opening_moves.png").exists()


# --- 4. tune: what changes against the baseline ---------------------------------------------------

def test_tune_says_when_a_rule_change_changes_nothing(tmp_path: Path):
    md, df = run_sweep("blam", {"rows": "3", "cols": "3", "per_size": "1"}, {"chain": ["on", "off"]},
                       out=tmp_path / "tables", reports_root=tmp_path / "reports")
    text = md.read_text()
    # the two tables really are identical (read them back)
    on = solve(make_game("blam", rows=3, cols=3, per_size=1, chain="on"), out=tmp_path / "tables")
    off = solve(make_game("blam", rows=3, cols=3, per_size=1, chain="off"), out=tmp_path / "tables")
    assert on.positions.equals(off.positions)
    assert df["digest"][0] == df["digest"][1] and df["value_counts"][0] == df["value_counts"][1]
    n = on.positions.height
    assert text.index("## 1. What changes") < text.index("## 2. Answer")
    sec = section(text, "What changes")
    assert "Baseline: chain=on (the first variant of the sweep)" in sec
    assert (f"With chain=off, nothing changes: the tables are identical (the same {n:,} positions with "
            "the same values).") in sec
    assert "No rule change in this sweep changes anything." in sec
    assert "| chain=off | identical tables |" in sec


def test_tune_tells_a_same_result_from_other_tables(tmp_path: Path):
    # Override 2x2: one or two pyramids of each size both give a first-player win in 3, but the
    # tables differ in size.
    md, df = run_sweep("override", {"size": "2", "line": "2"}, {"per_size": ["1", "2"]},
                       out=tmp_path / "tables", reports_root=tmp_path / "reports")
    sec = section(md.read_text(), "What changes")
    a, b = df["positions"].to_list()
    r = df["remoteness"][0]
    assert a != b and df["remoteness"][1] == r and df["value"].to_list() == ["win", "win"]
    assert (f"With per_size=2, the result at the start stays a win for A in {r}, but the tables differ "
            f"(from {a:,} to {b:,} positions).") in sec
    assert f"| per_size=2 | same start, other tables | a win for A in {r} | 0 | 0 | 0 | 0 |" in sec
    assert f"+{b - a:,} |" in sec


# --- 5. per-ply tables without finished-only plies ------------------------------------------------

def test_plies_of_finished_games_only_are_left_out(tmp_path: Path, override):
    # Dice race to 2: every ply after a decision holds only finished games (like Carrots).
    sol = solve(DiceRace.from_params(target=2), out=tmp_path / "t")
    by = M.expected_by_ply(sol.positions)
    done = by.filter(pl.col("finished") == pl.col("positions"))["ply"].to_list()
    kept = by.filter(pl.col("finished") < pl.col("positions"))["ply"].to_list()
    assert done and kept
    sec = section(write_report(sol, tmp_path / "r").read_text(), "Positions by ply")
    rows = [int(m) for m in re.findall(r"^\| (\d+) \|", sec, flags=re.M)]
    assert rows == kept
    n = int(by.filter(pl.col("ply").is_in(done))["positions"].sum())
    assert (f"{R._ply_list(done).capitalize()} hold only finished games ({n} final positions)") in sec

    # a deterministic game: the same rule (Override 2x2 ends with a ply of final positions only)
    osol, text, _, _ = override
    vb = M.value_by_ply(osol.positions)
    done = vb.filter(pl.col("finished") == pl.col("positions"))["ply"].to_list()
    assert done
    sec = section(text, "Positions by ply")
    rows = [int(m) for m in re.findall(r"^\| (\d+) \|", sec, flags=re.M)]
    assert rows == vb.filter(pl.col("finished") < pl.col("positions"))["ply"].to_list()
    assert f"there are {vb.height} plies, {len(done)} of them with finished games only" in sec


# --- 6. glossary ------------------------------------------------------------------------------------

def test_glossary_explains_exactly_the_words_used(override, greener, tmp_path: Path):
    for _, text, page, _ in (override, greener):
        body, glossary = text.split("Glossary\n", 1)
        assert text.rstrip().splitlines()[-1].startswith("- **")  # the glossary is last
        listed = re.findall(r"^- \*\*(.+?)\*\*: ", glossary, flags=re.M)
        for word, pattern, _meaning in GLOSSARY:
            used = re.search(pattern, body, flags=re.I) is not None
            assert (word in listed) == used, word
        for word in ("remoteness", "draw vs tie", "perfect play", "principal variation", "GAMESMAN",
                     "absorbing Markov chain", "symmetry class", "Ludii clarity, decisiveness and balance"):
            assert word in listed, word
        assert "<dt>remoteness</dt>" in page
    assert "margin" not in re.findall(r"^- \*\*(.+?)\*\*", override[1], flags=re.M)  # Override has no scores
    assert "margin" in re.findall(r"^- \*\*(.+?)\*\*", greener[1], flags=re.M)
    assert "random setup" in re.findall(r"^- \*\*(.+?)\*\*", greener[1], flags=re.M)
    md, _ = run_sweep("override", {"size": "2", "line": "2"}, {"per_size": ["1", "2"]},
                      out=tmp_path / "tables", reports_root=tmp_path / "reports")
    tune = md.read_text()
    assert "- **baseline**: " in tune.split("Glossary\n", 1)[1]


# --- 7. the rulebook's warning ------------------------------------------------------------------------

def test_rulebook_warning_is_in_the_report(greener, override, tmp_path: Path):
    sol, text, page, _ = greener
    assert len(sol.game.warnings) == 1
    warning = sol.game.warnings[0]
    assert "solving it anyway" not in warning  # `status` and `show` print it too, where nothing is solved
    assert "outside the rulebook's range" in warning
    verdict = section(text, "Verdict")
    assert f"Rulebook warning: {warning}." in verdict
    assert "Rulebook warning: black=2, white=2 on 3x3" in page
    assert not override[0].game.warnings and "Rulebook warning" not in override[1]
    md, _ = run_sweep("greener", {"rows": "3", "cols": "3", "white": "2"}, {"black": ["2", "3"]},
                      out=tmp_path / "tables", reports_root=tmp_path / "reports")
    tune = section(md.read_text(), "What changes")
    assert f"Rulebook warning (black=2): {warning}." in tune
    assert "Rulebook warning (black=3)" in tune  # 3 black and 2 white: unequal, also outside


# --- 8. the opening line --------------------------------------------------------------------------------

def test_opening_line_as_boards_and_text(override, greener):
    sol, text, page, folder = override
    steps, ending = sol.line()
    assert ending == "game over" and len(steps) == sol.root.remoteness
    sec = section(text, "Opening line (principal variation)")
    assert f"From the start it lasts {len(steps)} plies, and then game over: A wins." in sec
    names = {0: "A", 1: "B"}
    whole = "; ".join(f"{i}. {names[st.player]}: {st.move}" for i, st in enumerate(steps, 1))
    assert f"The whole line: {whole} (game over: A wins)." in sec
    boards = boards_in(folder, "line")
    assert len(boards) == min(len(steps), R.LINE_BOARDS) + 1
    assert [captions(b) for b in boards] == [["start"]] + [
        [f"{i}. {names[st.player]}: {st.move}"] for i, st in enumerate(steps[:R.LINE_BOARDS], 1)]
    # the last board shows the final position: pyramids where the line put them
    assert len([el for el in boards[-1].iter(NS + "polygon") if el.get("class") == "piece"]) == len(steps)
    assert page.count('<figure class="boards"><svg') >= 1 and "<?xml" not in page

    gsol, gtext, _, gfolder = greener
    gsteps, gend = gsol.line()
    assert gsteps[0].why == "most likely roll"  # the deal of a setup is a chance step
    gsec = section(gtext, "Opening line (principal variation)")
    assert f"1. chance: {gsteps[0].move}" in gsec
    assert f"lasts {len(gsteps) - 1} plies and 1 chance step" in gsec
    assert len(boards_in(gfolder, "line")) == min(len(gsteps), R.LINE_BOARDS) + 1


# --- 9. wide tables stay inside the HTML page -----------------------------------------------------------

def test_html_tables_scroll_inside_the_page(greener):
    page = greener[2]
    assert page.count("<table>") == page.count('<div class="wide"><table>') > 0
    assert page.count("</table></div>") == page.count("<table>")
    css = page[page.index("<style>"):page.index("</style>")]
    assert "div.wide{overflow-x:auto;max-width:100%}" in css
    assert "http://" not in page and "https://" not in page  # inline SVG without its namespace URL


def test_html_shows_the_markdown_spans_as_elements_not_marks(greener):
    page = greener[2]
    body = page[page.index("<body>"):]
    md = (greener[3] / "report.md").read_text()
    assert "`greener(rows=3" in md  # the Markdown names the variant as code...
    assert "**" not in body and "`" not in body  # ...the page shows no mark
    assert "<code>greener(rows=3" in body and body.count("<code>") == body.count("</code>")


def test_html_inline_spans_escape_first():
    doc = R.Document("t", "A **bold** claim about `a < b` & **x<y**; 2 * 3 stays.")
    sec = R.Section("s", "the `reading`")
    sec.table(["what"], [["**strong** cell"], ["1,234"]])
    sec.note("a note with `pyramids show`")
    doc.sections.append(sec)
    page = R.render_html(doc, {})
    assert "<p>A <strong>bold</strong> claim about <code>a &lt; b</code> &amp; <strong>x&lt;y</strong>; 2 * 3 stays.</p>" in page
    assert '<p class="reading">the <code>reading</code></p>' in page
    assert '<td class="t"><strong>strong</strong> cell</td>' in page and "<td>1,234</td>" in page
    assert '<p class="note">Note: a note with <code>pyramids show</code></p>' in page


def test_the_change_in_advantage_is_an_interval_where_a_value_is_only_proven_in_one():
    from analysis.tuning import _delta_advantage, what_changes

    # Petal 6's numbers: the baseline proven within 1e-8 of 1/3, the other only in [-1, -0.68]
    # (its iterate -0.999); the change lies in [-1 - 0.33334, -0.68 - 0.33333], rounded outward
    base = {"advantage": 0.333333, "value_lo": 0.33333, "value_hi": 0.33334}
    wide = {"advantage": -0.999, "value_lo": -1.0, "value_hi": -0.68}
    assert _delta_advantage(base, wide) == "in [-1.334, -1.013]"
    # a deterministic loss against the proven baseline: a number (both known to 1e-5)
    assert _delta_advantage(base, {"advantage": -1.0}) == "-1.333"
    assert _delta_advantage({"advantage": 0.5}, {"advantage": None}) == "-"
    rows = [{**base, "kind": "stochastic", "p_first_wins": None, "sequencing": "secret"},
            {**wide, "kind": "stochastic", "p_first_wins": None, "sequencing": "open"}]
    _, headers, table, _ = what_changes(["sequencing"], rows)
    assert table[1][headers.index("change in 1st-player advantage")] == "in [-1.334, -1.013]"


def test_the_report_says_whether_every_position_is_proven():
    certified = {"certified": True, "bounds": {"proven": True, "rounds": 17, "width": 6.7e-10,
                                               "tolerance": 1e-9, "exact": False}}
    assert R._proof_sentence(certified) == (
        "Certified: every position's value is proven to lie in an interval at most 6.7e-10 wide (17 rounds "
        "of better strategies; each end of an interval is what one player's stationary strategy "
        "guarantees against every reply of the other).")
    wide = {"certified": False, "bounds": {"proven": True, "rounds": 1, "width": 0.5, "tolerance": 1e-9,
                                           "exact": True}}
    assert R._proof_sentence(wide).startswith(
        "Not certified everywhere: the widest proven interval is 5.0e-01 wide, more than 1e-09 (1 round of "
        "better strategies in exact rational arithmetic;")
    # nothing proven (bounds crossed, or none computed): nothing said
    assert R._proof_sentence({"bounds": {"proven": False}}) is None and R._proof_sentence({}) is None
