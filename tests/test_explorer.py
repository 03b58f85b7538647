"""The explorer (`pyramids serve`): pages from the tables, bad input as 4xx pages, and a real
headless Chromium clicking through a game (the screenshot is kept in .artifacts/)."""

from __future__ import annotations

import contextlib
import re
import shutil
import threading
from html.parser import HTMLParser
from pathlib import Path

import pytest

from solver.api import make_game, solve

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / ".artifacts"
BLAM = dict(rows=3, cols=3, per_size=1)
BLAM_ID = "rows=3,cols=3,players=2,per_size=1,chain=on,push_smaller_only=off,tiebreak=none"


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    root = tmp_path_factory.mktemp("tables")
    solve(make_game("blam", **BLAM), out=root)
    solve(make_game("petal", petals=4, run=2, per_size=1), out=root)
    return root


@pytest.fixture(scope="module")
def client(tables):
    from analysis.explorer import create_app

    return create_app(tables).test_client()


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.moves: list[dict[str, str]] = []
        self.srcs: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and "move" in (a.get("class") or ""):
            self.moves.append(a)
        for key in ("src", "href"):
            if key in a and tag in ("script", "img", "link", "iframe"):
                self.srcs.append(a[key])


def test_index_lists_the_solved_variants(client):
    html = client.get("/").get_data(as_text=True)
    assert "blam(rows=3, cols=3" in html and "petal(petals=4" in html
    # named as people name them: the game and its preset (or a custom variant), parameters beside
    assert "Blam! (preset 3x3)" in html and "Petal Battle (custom variant)" in html
    assert f"href='/v/blam/{BLAM_ID}'" in html


def test_variant_page_shows_values_from_the_table(client, tables):
    sol = solve(make_game("blam", **BLAM), out=tables)
    r = client.get(f"/v/blam/{BLAM_ID}")
    assert r.status_code == 200
    html = r.get_data(as_text=True)
    assert "player 1 to move: win in 9, margin +6" in html  # the table's root
    parser = _Links()
    parser.feed(html)
    expected = sol.moves(sol.game.initial_state())
    # moves to the same position up to symmetry are one row (27 first moves, 9 rows) ...
    alike = sol.symmetric_moves(sol.game.initial_state())
    hidden = {n for others in alike.values() for n in others}
    shown = [m for m in expected if m.move not in hidden]
    assert len(shown) == 9 and [m["data-value"] for m in parser.moves] == [m.value for m in shown]
    assert "(and 3 symmetric)" in html and "id='all-moves'" in html
    assert not parser.srcs  # nothing is loaded from anywhere
    # ... and the page's "list every move" shows each one, with its value and remoteness
    parser = _Links()
    parser.feed(client.get(f"/v/blam/{BLAM_ID}?moves=&all=1").get_data(as_text=True))
    assert [m["data-value"] for m in parser.moves] == [m.value for m in expected]
    assert [m["data-remoteness"] for m in parser.moves] == [str(m.remoteness) for m in expected]
    # each move is also a dot on the square it places on, in its value's colour
    from analysis.explorer import COLOURS

    marks = re.findall(r'<circle class="mark" data-cell="([a-z]\d)"[^>]*fill="(#[0-9A-Fa-f]{6})"', html)
    assert sorted(marks) == sorted((m.move.split("@")[1], COLOURS[m.value]) for m in expected)
    assert "<svg" in html and 'class="history"' in html
    # after a move, the page follows it; undo and redo links carry the moves
    first = expected[0].move
    html = client.get(f"/v/blam/{BLAM_ID}?moves={first}").get_data(as_text=True)
    assert "player 2 to move: lose in 8" in html
    assert re.search(r"id='undo' href='[^']*redo=" + re.escape(first.replace("@", "%40")), html)


def test_simultaneous_page_shows_the_mixed_strategies(client):
    html = client.get("/v/petal/" + "petals=4,run=2,per_size=1,opening=large-opposite,tie_start=alternate,"
                      "actions=up-to,sequencing=secret,bump_origin=occupied").get_data(as_text=True)
    assert "Optimal mixed strategies" in html and "Joint choices" in html
    assert "<h1>Petal Battle (custom variant)</h1>" in html and "petal(petals=4, run=2" in html
    # Petal 4 (run 2) opens with a choice whose optimal mixes are many (player 2: any order is
    # optimal): the page says the mix shown is one of many and gives each action's range
    assert "The optimal mix is not unique" in html and "SML 0.000&ndash;1.000" in html


@pytest.mark.parametrize("url,status,words", [
    ("/v/blam/no-such-variant", 404, "no solved variant"),
    ("/v/nogame/x", 404, "there is no game"),
    (f"/v/blam/{BLAM_ID}?moves=Z@z9", 400, "cannot be played"),
    ("/nowhere", 404, "no such page"),
])
def test_bad_urls_are_short_4xx_pages(client, url, status, words):
    r = client.get(url)
    assert r.status_code == status
    html = r.get_data(as_text=True)
    assert words in html and "Traceback" not in html and "href='/'" in html


def test_no_tables_says_how_to_solve_one(tmp_path):
    from analysis.explorer import create_app

    html = create_app(tmp_path / "empty").test_client().get("/").get_data(as_text=True)
    assert "pyramids solve override --preset 3x3" in html


def test_port_in_use_is_one_line(capsys, tmp_path):
    import socket

    from tests.clirun import run

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        code, _, err = run(capsys, "serve", "--port", str(port), "--tables", str(tmp_path))
    assert code == 2 and f"port {port}" in err and "--port" in err and err.count("\n") == 1


# --- a real browser ---------------------------------------------------------------------------
def _chrome(tables: Path):
    """Headless Chromium whose temporary files (its singleton socket folder) go to a folder of
    the test run, not the machine's temporary folder (each run left four there)."""
    import os

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    assert binary and driver, ("the browser test needs Debian's chromium and chromium-driver: "
                               "apt-get install chromium chromium-driver (.ci/run does)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", "--disable-quic", "--window-size=1200,1400"):
        opts.add_argument(flag)
    scratch = tables.parent / "chromium"
    scratch.mkdir(exist_ok=True)
    return webdriver.Chrome(service=Service(driver, env={**os.environ, "TMPDIR": str(scratch)}), options=opts)


def test_browser_plays_a_line_by_clicking(tables):
    from selenium.webdriver.common.by import By

    sol = solve(make_game("blam", **BLAM), out=tables)
    game = sol.game
    with explorer_running(tables) as base:
        driver = _chrome(tables)
        try:
            driver.get(base + "/")
            driver.find_element(By.CSS_SELECTOR, "a.variant[href*='blam']").click()
            states = [game.initial_state()]

            def check_value_shown(state):
                pv = sol.lookup(state)
                shown = driver.find_element(By.ID, "value").text
                assert shown.startswith(f"player {pv.to_move + 1} to move: {pv.value} in {pv.remoteness}"), shown

            for _ in range(4):  # click the best move four times, checking the values shown
                check_value_shown(states[-1])
                first = driver.find_elements(By.CSS_SELECTOR, "#moves a.move")[0]
                best = sol.moves(states[-1])[0]
                assert first.text == best.move and first.get_attribute("data-value") == best.value
                first.click()
                states.append(game.play([best.move], states[-1]))
            check_value_shown(states[4])
            driver.find_element(By.ID, "undo").click()
            check_value_shown(states[3])
            assert driver.find_element(By.ID, "redo").tag_name == "a"  # a link now: the move undone
            # every resource the page loaded came from this machine
            names = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
            assert all(n.startswith(base) for n in names), names
            assert driver.find_elements(By.CSS_SELECTOR, ".board svg")
            assert len(driver.find_elements(By.CSS_SELECTOR, "svg.history circle.point")) == 4  # 0..3 after undo
            ARTIFACTS.mkdir(exist_ok=True)
            assert driver.save_screenshot(str(ARTIFACTS / "explorer-blam-3x3.png"))
        finally:
            driver.quit()


def test_browser_renders_a_report(tables, tmp_path):
    """A report's HTML in the browser: it renders, every image loads, nothing leaves the machine."""
    from selenium.webdriver.common.by import By

    from analysis.report import write_report

    sol = solve(make_game("blam", **BLAM), out=tables)
    path = write_report(sol, tmp_path / "report")
    html = Path(path).with_suffix(".html")
    assert html.exists()
    driver = _chrome(tables)
    try:
        driver.get(html.as_uri())
        assert "Blam" in driver.title or "blam" in driver.title
        images = driver.find_elements(By.TAG_NAME, "img")
        assert images, "the report has figures"
        for img in images:
            loaded = driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", img)
            assert loaded, img.get_attribute("src")[:80]
        names = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
        assert all(n.startswith(("file:", "data:")) for n in names), names
        ARTIFACTS.mkdir(exist_ok=True)
        assert driver.save_screenshot(str(ARTIFACTS / "report-blam-3x3.png"))
    finally:
        driver.quit()


def test_secret_choice_is_a_payoff_matrix_with_the_mixes_on_its_margins(client, tables):
    """Issue 37, item 1: rows player 1's orders, columns player 2's, each cell player 1's expected
    result linking to that joint choice; the margins hold each player's stored mix (summing to 1),
    equal to the table's strategies."""
    import html as html_lib
    from urllib.parse import quote_plus

    from solver.api import load

    vid = ("petals=4,run=2,per_size=1,opening=large-opposite,tie_start=alternate,actions=up-to,"
           "sequencing=secret,bump_origin=occupied")
    page = client.get("/v/petal/" + vid).get_data(as_text=True)
    table = re.search(r"<table id='matrix'.*?</table>", page, re.S).group(0)
    body_rows = re.findall(r"<tr><th>(\w+)</th>(.*?)</tr>", table, re.S)
    assert [r for r, _ in body_rows] == ["SML", "SLM", "MSL", "MLS", "LSM", "LMS"]
    game = make_game("petal", petals=4, run=2, per_size=1)
    sol = load(game, out=tables)
    rows, cols, a = sol.payoff_matrix(game.initial_state())
    mix = sol.lookup(game.initial_state()).strategies
    for i, (r, cells) in enumerate(body_rows):
        values = [float(v) for v in re.findall(r">([+-]\d\.\d{3})</a>", cells)]
        assert values == pytest.approx(a[i], abs=5e-4)
        links = [html_lib.unescape(h) for h in re.findall(r"href='([^']*)'", cells)]
        assert links[0].endswith("moves=" + quote_plus(f"{r}/SML"))
        shown = float(re.search(r"<td class='mix'>([\d.]+)", cells).group(1))
        assert shown == pytest.approx(mix["1"][r], abs=5e-4)
    foot = re.findall(r"<td class='mix'>([\d.]+)", table.split("player 2's mix")[1])
    assert sum(float(v) for v in foot) == pytest.approx(1.0, abs=2e-3)
    assert [float(v) for v in foot] == pytest.approx([mix["2"][c] for c in cols], abs=5e-4)
    # a cell's link plays that joint choice: the next page is inside the round
    nxt = client.get(html_lib.unescape(re.search(r"href='([^']*)'", body_rows[0][1]).group(1)))
    assert nxt.status_code == 200 and "id='matrix'" not in nxt.get_data(as_text=True)


def test_browser_shows_the_secret_choice_matrix_and_a_cell_click_plays_it(tables, capsys):
    """Issue 37, item 6: in Chromium the matrix renders, each player's margin sums to 1 and equals
    what `pyramids show --json` gives, and clicking a cell plays that joint choice."""
    import json

    from selenium.webdriver.common.by import By

    from tests.clirun import run

    code, out, err = run(capsys, "show", "petal", "--set", "petals=4", "--set", "run=2", "--set", "per_size=1",
                         "--out", str(tables), "--json")
    assert code == 0, err
    shown = json.loads(out)["strategies"]
    with explorer_running(tables) as base:
        driver = _chrome(tables)
        try:
            driver.get(base + "/")
            driver.find_element(By.CSS_SELECTOR, "a.variant[href*='petal']").click()
            matrix = driver.find_element(By.ID, "matrix")
            rows = matrix.find_elements(By.TAG_NAME, "tr")
            names2 = [th.text for th in rows[0].find_elements(By.TAG_NAME, "th")[1:-1]]
            p1 = {r.find_element(By.TAG_NAME, "th").text: float(r.find_elements(By.CSS_SELECTOR, "td.mix")[0].text.split()[0])
                  for r in rows[1:-1]}
            p2 = [float(td.text.split()[0]) for td in rows[-1].find_elements(By.CSS_SELECTOR, "td.mix")]
            assert sum(p1.values()) == pytest.approx(1, abs=2e-3) and sum(p2) == pytest.approx(1, abs=2e-3)
            assert p1 == pytest.approx(shown["1"], abs=5e-4)
            assert dict(zip(names2, p2)) == pytest.approx(shown["2"], abs=5e-4)
            before = driver.find_element(By.ID, "value").text
            cell = matrix.find_elements(By.CSS_SELECTOR, "td.cell a")[0]
            joint = cell.get_attribute("title")
            cell.click()
            assert driver.find_elements(By.ID, "matrix") == []  # inside the round now
            assert joint in driver.find_element(By.ID, "played").text
            assert driver.find_element(By.ID, "value").text != before
            ARTIFACTS.mkdir(exist_ok=True)
            assert driver.save_screenshot(str(ARTIFACTS / "explorer-petal-after-a-matrix-click.png"))
        finally:
            driver.quit()


def test_board_has_a_legend_of_what_its_colours_and_dots_mean(client):
    # issue 37, item 2: Blam!'s board showed coloured dots with nothing saying what they are
    start = client.get(f"/v/blam/{BLAM_ID}").get_data(as_text=True)
    assert "<p class='legend'>" in start and "dots: a legal move into that cell" in start
    assert "pyramid</span>" not in start.split("<p class='legend'>")[1].split("</p>")[0]  # empty board
    after = client.get(f"/v/blam/{BLAM_ID}?moves=S@b2").get_data(as_text=True)
    legend = after.split("<p class='legend'>")[1].split("</p>")[0]
    assert "player 1 pyramid" in legend and "player 2 pyramid" not in legend and "lose</span>" in legend


def test_compare_shows_two_variants_after_the_same_moves(client, tables):
    """Issue 37, item 4: /compare?a=...&b=...&moves=... puts two variants of one game side by side,
    each position's value read from its own table; bad requests are short 400 pages."""
    other = dict(BLAM, chain=False)
    sol_b = solve(make_game("blam", **other), out=tables)
    b_id = sol_b.game.variant.variant_id()
    sol_a = solve(make_game("blam", **BLAM), out=tables)
    html = client.get(f"/compare?a=blam/{BLAM_ID}&b=blam/{b_id}&moves=S@b2").get_data(as_text=True)
    for sol in (sol_a, sol_b):
        state = sol.game.play(["S@b2"], sol.game.initial_state())
        assert sol.lookup(state).describe(4) in html
    assert html.count("<div class='side'>") == 2 and "chain=off" in html
    assert client.get(f"/compare?a=blam/{BLAM_ID}").status_code == 400
    r = client.get(f"/compare?a=blam/{BLAM_ID}&b=petal/x")
    assert r.status_code == 400 and "different games" in r.get_data(as_text=True)
    r = client.get(f"/compare?a=blam/{BLAM_ID}&b=blam/{b_id}&moves=Z@z9")
    assert r.status_code == 200 and r.get_data(as_text=True).count("cannot be played here") == 2


def test_browser_compare_page_shows_both_values(tables):
    """Issue 37, item 6: the compare page in Chromium shows both variants' values after the moves,
    as their tables say, and each column's link walks on in its own variant."""
    from selenium.webdriver.common.by import By

    other = dict(BLAM, chain=False)
    sols = [solve(make_game("blam", **BLAM), out=tables), solve(make_game("blam", **other), out=tables)]
    ids = [s.game.variant.variant_id() for s in sols]
    with explorer_running(tables) as base:
        driver = _chrome(tables)
        try:
            driver.get(f"{base}/compare?a=blam/{ids[0]}&b=blam/{ids[1]}&moves=S@b2,M@a1")
            shown = [p.text for p in driver.find_elements(By.CSS_SELECTOR, ".side p.value")]
            expected = [s.lookup(s.game.play(["S@b2", "M@a1"], s.game.initial_state())).describe(4) for s in sols]
            assert shown == expected
            ARTIFACTS.mkdir(exist_ok=True)
            assert driver.save_screenshot(str(ARTIFACTS / "explorer-compare-blam.png"))
            driver.find_elements(By.LINK_TEXT, "walk on from here")[1].click()
            assert "chain=off" in driver.current_url and driver.find_element(By.ID, "value").text == expected[1]
        finally:
            driver.quit()


@contextlib.contextmanager
def explorer_running(tables):
    """The explorer served on a free port in a thread; yields its base URL, then stops it."""
    from analysis.explorer import serve

    started = threading.Event()
    holder = {}

    def ready(server):
        holder["server"] = server
        started.set()

    threading.Thread(target=serve, kwargs={"port": 0, "tables": tables, "ready": ready}, daemon=True).start()
    assert started.wait(30)
    try:
        yield f"http://127.0.0.1:{holder['server'].server_port}"
    finally:
        holder["server"].shutdown()


def test_tune_report_links_each_variant_to_the_compare_page(tables, tmp_path):
    """Issue 37, item 4: a tuning report links every variant beside the baseline to the explorer's
    /compare page on the sweep's tables; each link, followed in the explorer, shows both
    variants' start values as their tables give them."""
    from urllib.parse import urlsplit

    from analysis.explorer import create_app
    from analysis.tuning import EXPLORER, run_sweep

    md, df = run_sweep("blam", {"rows": "3", "cols": "3", "per_size": "1"}, {"chain": ["on", "off"]},
                       out=tables, reports_root=tmp_path / "reports")
    text = md.read_text()
    assert "Side by side in the explorer" in text and f"pyramids serve --tables {tables}" in text
    links = re.findall(r"\]\((" + re.escape(EXPLORER) + r"/compare\?[^)]*)\)", text)
    assert len(links) == df.height - 1 == 1
    page = (md.parent / "report.html").read_text()
    assert page.count('<a href="' + EXPLORER + "/compare?") == 1
    client = create_app(tables).test_client()
    url = urlsplit(links[0])
    html = client.get(f"{url.path}?{url.query}").get_data(as_text=True)
    assert html.count("<div class='side'>") == 2
    for chain in ("on", "off"):
        sol = solve(make_game("blam", **dict(BLAM, chain=chain == "on")), out=tables)
        assert sol.root.describe(4) in html
