"""End-to-end balance reports and tuning sweeps on toy games with hand-known answers."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest

import solver.games
from analysis.report import write_report
from analysis.tuning import answer, format_table, run_sweep
from solver.api import Solution, solve
from solver.core.game import Game, NodeKind, Outcome, Result
from solver.core.variant import make_variant
from solver.errors import VariantError
from tests.toygames import W0, W1, Explicit, Subtraction


def check_files(md: Path) -> tuple[str, str]:
    """The report's Markdown and HTML; every figure exists, is small and is embedded; no links."""
    folder = md.parent
    html_path = folder / "report.html"
    assert md.exists() and html_path.exists()
    text, page = md.read_text(), html_path.read_text()
    figures = sorted((folder / "figures").glob("*.png"))
    assert figures, "a report has figures"
    for fig in figures:
        assert fig.stat().st_size < 80_000, fig
        assert f"figures/{fig.name}" in text
    # self-contained: every image is inline base64, nothing is fetched from the network
    assert page.count('src="data:image/png;base64,') == len(figures)
    assert not re.search(r'src="(?!data:)', page)
    # the only links out: a tuning report's to the local explorer's compare page
    outside = page.replace('<a href="http://127.0.0.1:8765/compare?', "")
    assert "http://" not in outside and "https://" not in outside
    assert "<link" not in page and "<script" not in page
    return text, page


def test_subtraction_report_end_to_end(tmp_path: Path):
    # Take 1 or 2, last counter wins, n = 7: the first player moves to 6 (a multiple of 3) and
    # wins; the loser stretches the game, so it ends after 7 -> 6 -> (5 or 4) -> 3 -> ... in
    # 5 plies. Of the two first moves, "take 1" wins and "take 2" (to 5) loses.
    sol = solve(Subtraction.from_params(n=7), out=tmp_path / "tables")
    md = write_report(sol, tmp_path / "report")
    assert md == tmp_path / "report" / "report.md"
    text, page = check_files(md)
    assert "first player (Player 1) wins in 5 plies" in text
    assert "first player (Player 1) wins in 5 plies" in page
    assert re.search(r"\| 1 \| 1 \| win \| 5 \|", text)    # take 1: win, game over in 5 plies
    assert re.search(r"\| 2 \| 1 \| lose \| 4 \|", text)   # take 2: pile 5, lost in 4 plies
    for title in ("Verdict", "Opening moves", "Value and remoteness", "Positions by ply",
                  "Decision difficulty", "Game length", "Structure", "Provenance"):
        assert title in text
    # 14 positions: piles 0..7 with either player to move (16), minus the two unreachable ones:
    # pile 7 with Player 2 (nothing taken after an odd number of moves) and pile 6 with Player 1
    # (one counter taken after an even number >= 2 of moves, each taking at least one).
    assert "| positions | 14 |" in text


def test_report_default_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Without out_dir the report goes to reports/<game>/<variant-id>/ under the working folder.
    monkeypatch.chdir(tmp_path)
    sol = solve(Subtraction.from_params(n=4), out=tmp_path / "tables")
    md = write_report(sol)
    assert md == Path("reports") / "subtraction" / "n=4" / "report.md"
    text, _ = check_files(md)
    # n = 4: take 1 to leave 3 (lost for the opponent in 2): a win in 3 plies.
    assert "first player (Player 1) wins in 3 plies" in text


def test_draw_report_has_cycles(tmp_path: Path):
    # Each side avoids its loss by going round 0 -> 1 -> 0: a draw; the two decision positions of
    # the four lie on a cycle (50%); random play: P1 wins 1/3 (see test_analysis).
    game = Explicit({0: (0, [1, 2], None), 1: (1, [0, 3], None), 2: (0, [], W1), 3: (1, [], W0)})
    sol = solve(game, out=tmp_path / "tables")
    text, _ = check_files(write_report(sol, tmp_path / "r"))
    assert "a draw (endless play)" in text
    assert "| positions on a cycle | 50.0% |" in text
    assert "| random vs random: first player wins | 33.3% |" in text


class DealtSubtraction(Game):
    """Subtraction with a random pile: 3 counters with probability 1/4, 4 with 1/2, 5 with 1/4."""

    name = "dealt"
    params = ()

    def __init__(self) -> None:
        super().__init__(make_variant("dealt", (), {}))

    def initial_state(self) -> tuple[int, int]:
        return (-1, 0)

    def node_kind(self, s: tuple[int, int]) -> NodeKind:
        return NodeKind.CHANCE if s[0] < 0 else NodeKind.TERMINAL if s[0] == 0 else NodeKind.DECISION

    def to_move(self, s: tuple[int, int]) -> int:
        return s[1]

    def chance_outcomes(self, s: tuple[int, int]) -> list[tuple[int, Fraction]]:
        return [(3, Fraction(1, 4)), (4, Fraction(1, 2)), (5, Fraction(1, 4))]

    def legal_actions(self, s: tuple[int, int]) -> list[int]:
        return [t for t in (1, 2) if t <= s[0]]

    def apply(self, s: tuple[int, int], a: int) -> tuple[int, int]:
        return (a, 0) if s[0] < 0 else (s[0] - a, 1 - s[1])

    def outcome(self, s: tuple[int, int]) -> Outcome:
        return Outcome.win_for(1 - s[1])

    def encode(self, s: tuple[int, int]) -> int:
        return (s[0] + 1) * 2 + s[1]

    def decode(self, key: int) -> tuple[int, int]:
        return (key // 2 - 1, key % 2)

    def render(self, s: tuple[int, int]) -> str:
        return "dealing" if s[0] < 0 else f"{s[0]} counters, player {s[1] + 1} to move"


def test_random_setup_report(tmp_path: Path):
    # Pile 3 (prob 1/4) is lost for the first player; piles 4 and 5 (1/2 + 1/4) are won (move to
    # 3). So the first player wins 75% of the setups (by probability), loses 25%, and its expected
    # result is 3/4 - 1/4 = +0.5. The three setups are listed as the "opening moves".
    sol = solve(DealtSubtraction(), out=tmp_path / "tables")
    assert sol.meta["solver"] == "retrograde+setups"
    text, _ = check_files(write_report(sol, tmp_path / "r"))
    assert "first player (Player 1) wins 75.0% of setups and Player 2 wins 25.0%" in text
    assert "+0.500" in text
    assert "Opening moves: the setups" in text
    assert (tmp_path / "r" / "figures" / "setup_outcomes.png").exists()


class RiskOrSafe(Game):
    """Player 1 chooses "risk" (a die: 2/3 Player 1 wins, 1/3 Player 2 wins) or "safe" (a tie)."""

    name = "risk"
    params = ()

    def __init__(self) -> None:
        super().__init__(make_variant("risk", (), {}))

    def initial_state(self) -> int:
        return 0

    def node_kind(self, s: int) -> NodeKind:
        return {0: NodeKind.DECISION, 1: NodeKind.CHANCE}.get(s, NodeKind.TERMINAL)

    def to_move(self, s: int) -> int:
        return {2: 1, 3: 0, 4: 1}.get(s, 0)

    def legal_actions(self, s: int) -> list[str]:
        return ["risk", "safe"]

    def chance_outcomes(self, s: int) -> list[tuple[str, Fraction]]:
        return [("good", Fraction(2, 3)), ("bad", Fraction(1, 3))]

    def apply(self, s: int, a: str) -> int:
        return {"risk": 1, "safe": 4, "good": 2, "bad": 3}[a]

    def outcome(self, s: int) -> Outcome:
        return {2: Outcome.win_for(0), 3: Outcome.win_for(1)}.get(s, Outcome((Result.TIE, Result.TIE)))

    def encode(self, s: int) -> int:
        return s

    def decode(self, key: int) -> int:
        return key

    def render(self, s: int) -> str:
        return f"node {s}"


def test_stochastic_report_from_hand_built_tables(tmp_path: Path):
    # Hand-solved (no engine needed): the die node is worth 2/3 - 1/3 = +1/3 for Player 1, "safe"
    # is a tie (0), so the start is worth +1/3 with win probability 2/3 and loss probability 1/3.
    pos = pl.DataFrame({
        "key": pl.Series(range(5), dtype=pl.UInt64),
        "player": pl.Series([0, 0, 1, 0, 1], dtype=pl.UInt8),
        "kind": pl.Series([0, 1, 3, 3, 3], dtype=pl.UInt8),
        "ply": pl.Series([0, 1, 1, 1, 1], dtype=pl.UInt16),
        "num_moves": pl.Series([2, 2, 0, 0, 0], dtype=pl.UInt16),
        "value": [1 / 3, 1 / 3, -1.0, -1.0, 0.0],
        "p_win": [2 / 3, 2 / 3, 0.0, 0.0, 0.0],
        "p_loss": [1 / 3, 1 / 3, 1.0, 1.0, 0.0],
    })
    edges = pl.DataFrame({"src": pl.Series([0, 0, 1, 1], dtype=pl.UInt32),
                          "dst": pl.Series([1, 4, 2, 3], dtype=pl.UInt32),
                          "prob": [1.0, 1.0, 2 / 3, 1 / 3]})
    meta = {"game": "risk", "variant": {}, "variant_id": "default", "label": "risk()",
            "rules_version": "1", "toolkit_version": "test", "solver": "value_iteration",
            "solution": "stochastic", "symmetry": False, "root_key": 0, "players": 2,
            "solve_seconds": 0.0}
    sol = Solution(game=RiskOrSafe(), positions=pos, meta=meta, path=tmp_path / "positions.parquet", edges=edges)
    text, _ = check_files(write_report(sol, tmp_path / "r"))
    assert "expected result of +0.333" in text and "wins with probability 66.7%" in text
    assert "there is no remoteness" in text  # remoteness sections replaced by a note
    # the opening moves by name: risk (+0.333 for the mover) before safe (+0.000)
    assert text.index("| risk | 1 | +0.333 |") < text.index("| safe | 1 | +0.000 |")
    # random Player 1: half the time risk (2/3 win), half safe: wins 1/3 of games
    assert "| random vs random: first player wins | 33.3% |" in text


# --- tuning ---------------------------------------------------------------------------------

@pytest.fixture
def subtraction_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the toy game reachable by name, as run_sweep builds games with make_game."""
    monkeypatch.setitem(solver.games.REGISTRY, "subtraction", "tests.toygames:Subtraction")


def test_tuning_sweep_on_subtraction(tmp_path: Path, subtraction_registered: None):
    # n = 3 is a multiple of 3: the first player loses, the second wins in 2 plies (3 -> 2 or 1
    # -> taken). n = 4: take 1 leaving 3, a first-player win in 3 plies.
    md, df = run_sweep("subtraction", {}, {"n": ["3", "4"]}, out=tmp_path / "tables",
                       reports_root=tmp_path / "reports")
    assert md.parent.parent == tmp_path / "reports" / "subtraction"
    assert md.parent.name.startswith("tune-n-")
    text, _ = check_files(md)
    assert df["n"].to_list() == ["3", "4"]
    assert df["verdict"].to_list() == ["second player wins in 2", "first player wins in 3"]
    assert df["value"].to_list() == ["lose", "win"]
    assert df["remoteness"].to_list() == [2, 3]
    assert df["advantage"].to_list() == [-1.0, 1.0]
    # n = 3 has 6 positions: (3,P1), (2,P2), (1,P2), (1,P1), (0,P1), (0,P2)
    assert df["positions"].to_list()[0] == 6
    # random first vs perfect at n = 3: 0 (see test_analysis); random second vs perfect first:
    # 3/4. The column is the mean over the two seats: 3/8.
    assert df["random_vs_perfect"].to_list()[0] == pytest.approx(0.375)
    sentence = "changing n from 3 to 4 turns the game from a second-player win in 2 to a first-player win in 3"
    assert sentence in text.lower()
    table = format_table(df)
    assert "second player wins in 2" in table and "first player wins in 3" in table
    assert len(table.splitlines()) == 4  # header, rule, two variants
    assert "margin" not in table  # not a scored game


def test_tuning_sweep_shows_margins_of_scored_games(tmp_path: Path):
    # Greener on one row of three, worked by hand (captures go onto the first stack in line):
    # WBG: Black takes W (a1), White has no stack and passes, Black's stack takes the green,
    #   White and Black pass: Black +1 in 5 plies (taking the green first lets White's W
    #   capture it: -1).
    # BGW: Black's only capture takes the green; White's W takes that stack (1 green); both
    #   pass: White +1 after 4 plies.
    md, df = run_sweep("greener", {"rows": "1", "cols": "3", "black": "1", "white": "1", "tiebreak": "none"},
                       {"setup": ["WBG", "BGW"]}, out=tmp_path / "tables", reports_root=tmp_path / "reports")
    assert df["verdict"].to_list() == ["first player wins in 5", "second player wins in 4"]
    assert df["margin"].to_list() == [1.0, -1.0]
    table = format_table(df)
    assert "1st-player margin" in table and "+1.00" in table and "-1.00" in table
    text, _ = check_files(md)
    assert "1st-player margin" in text


def test_tuning_reuses_tables(tmp_path: Path, subtraction_registered: None):
    # A second sweep over the same variant reads the table on disk instead of solving again.
    run_sweep("subtraction", {}, {"n": ["5"]}, out=tmp_path / "tables", reports_root=tmp_path / "r")
    table = tmp_path / "tables" / "subtraction" / "n=5" / "positions.parquet"
    before = table.stat().st_mtime_ns
    _, df = run_sweep("subtraction", {}, {"n": ["5"]}, out=tmp_path / "tables", reports_root=tmp_path / "r")
    assert table.stat().st_mtime_ns == before
    # n = 5: take 2 leaving 3: a first-player win in 3 plies
    assert df["verdict"].to_list() == ["first player wins in 3"]


def test_answer_when_nothing_changes():
    # Two variants with the same verdict: the answer says the result does not change.
    df = pl.DataFrame({"n": ["4", "5"], "kind": ["deterministic"] * 2, "value": ["win", "win"],
                       "remoteness": [3, 3], "advantage": [1.0, 1.0], "p_first_wins": [1.0, 1.0],
                       "positions": [8, 10]})
    text = answer("subtraction", {}, {"n": ["4", "5"]}, df)
    assert "does not change" in text and "a first-player win in 3" in text


def test_answer_names_switches():
    # A switch going from on to off is described as switching it off.
    df = pl.DataFrame({"centre_rule": ["on", "off"], "kind": ["deterministic"] * 2,
                       "value": ["win", "draw"], "remoteness": [9, None], "advantage": [1.0, 0.0],
                       "p_first_wins": [1.0, 0.0], "positions": [100, 120]})
    text = answer("override", {"size": "3"}, {"centre_rule": ["on", "off"]}, df)
    assert "Switching centre_rule off turns the game from a first-player win in 9 to a draw" in text


def test_sweep_errors_say_how_to_fix(tmp_path: Path, subtraction_registered: None):
    with pytest.raises(VariantError, match="--vary"):
        run_sweep("subtraction", {}, {}, out=tmp_path)
    with pytest.raises(VariantError, match="both set and varied"):
        run_sweep("subtraction", {"n": "3"}, {"n": ["3", "4"]}, out=tmp_path)


def test_three_player_table_degrades_with_notes(tmp_path: Path):
    # A hand-built 3-player table (paranoid view: the first player against the two others).
    # Player 1 at the start wins in 1 ply by moving to row 1; random-play sections need
    # two-player tables and are replaced by a note.
    pos = pl.DataFrame({
        "key": pl.Series([0, 1, 2, 3], dtype=pl.UInt64),
        "player": pl.Series([0, 1, 1, 2], dtype=pl.UInt8),
        "kind": pl.Series([0, 3, 0, 3], dtype=pl.UInt8),
        "ply": pl.Series([0, 1, 1, 2], dtype=pl.UInt16),
        "num_moves": pl.Series([2, 0, 1, 0], dtype=pl.UInt16),
        "value": pl.Series([3, 0, 3, 0], dtype=pl.UInt8),
        "remoteness": pl.Series([1, 0, 1, 0], dtype=pl.UInt16),
    })
    edges = pl.DataFrame({"src": pl.Series([0, 0, 2], dtype=pl.UInt32),
                          "dst": pl.Series([1, 2, 3], dtype=pl.UInt32)})
    game = Explicit({0: (0, [1, 2], None), 1: (1, [], (Result.WIN, Result.LOSS, Result.LOSS)),
                     2: (1, [3], None), 3: (2, [], (Result.LOSS, Result.WIN, Result.LOSS))})
    meta = {"game": "explicit", "variant": {}, "variant_id": "x", "label": "explicit()",
            "rules_version": "1", "toolkit_version": "test", "solver": "retrograde",
            "solution": "deterministic", "symmetry": False, "root_key": 0, "players": 3}
    sol = Solution(game=game, positions=pos, meta=meta, path=tmp_path / "p.parquet", edges=edges)
    text, _ = check_files(write_report(sol, tmp_path / "r"))
    assert "first player (Player 1) wins in 1 ply against the 2 others playing together" in text
    assert "random-play figures need two-player tables; this variant has 3 players" in text


def test_report_presets_writes_every_preset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # `make reports`: one report per preset, in reports/<game>/<variant-id>/. With a registry of
    # only the toy game and one preset (n=4, a first-player win in 3 plies):
    from analysis.report import report_presets

    monkeypatch.setattr(solver.games, "REGISTRY", {"subtraction": "tests.toygames:Subtraction"})
    monkeypatch.setattr(Subtraction, "presets", {"four": {"n": 4}})
    paths = report_presets(out=tmp_path / "tables", reports_root=tmp_path / "reports", log=None)
    assert paths == [tmp_path / "reports" / "subtraction" / "n=4" / "report.md"]
    assert "first player (Player 1) wins in 3 plies" in paths[0].read_text()


def test_unreadable_table_is_a_table_error(tmp_path: Path):
    # A positions table without a value column cannot be reported: a one-line TableError.
    from solver.errors import TableError

    pos = pl.DataFrame({"key": pl.Series([0], dtype=pl.UInt64), "player": pl.Series([0], dtype=pl.UInt8),
                        "kind": pl.Series([0], dtype=pl.UInt8), "ply": pl.Series([0], dtype=pl.UInt16)})
    sol = Solution(game=Subtraction.from_params(n=1), positions=pos, meta={"root_key": 0},
                   path=tmp_path / "p.parquet")
    with pytest.raises(TableError, match="solve the variant again"):
        write_report(sol, tmp_path / "r")


class Mirror(Game):
    """Two cells left and right; Player 1 marks one of them and wins at once. The two moves are
    mirror images of each other (a symmetry of the game)."""

    name = "mirror"
    params = ()

    def __init__(self) -> None:
        super().__init__(make_variant("mirror", (), {}))

    def initial_state(self) -> int:
        return 0  # 0 = empty, 1 = left marked, 2 = right marked

    def node_kind(self, s: int) -> NodeKind:
        return NodeKind.DECISION if s == 0 else NodeKind.TERMINAL

    def to_move(self, s: int) -> int:
        return 0 if s == 0 else 1

    def legal_actions(self, s: int) -> list[int]:
        return [1, 2]

    def apply(self, s: int, a: int) -> int:
        return a

    def outcome(self, s: int) -> Outcome:
        return Outcome.win_for(0)

    def encode(self, s: int) -> int:
        return s

    def decode(self, key: int) -> int:
        return key

    def symmetries(self, s: int) -> list[int]:
        return [s, {0: 0, 1: 2, 2: 1}[s]]

    def action_name(self, s: int, a: int) -> str:
        return "left" if a == 1 else "right"

    def render(self, s: int) -> str:
        return f"state {s}"


def test_opening_moves_grouped_by_symmetry_with_or_without_it(tmp_path: Path):
    # "left" and "right" are mirror images, both winning at once. Solved with symmetry they reach
    # one canonical row; solved without, the report merges them by canonical key. Either way the
    # opening table has a single row of 2 moves that win in 1 ply.
    for symmetry in (True, False):
        sol = solve(Mirror(), out=tmp_path / f"t{symmetry}", symmetry=symmetry)
        text, _ = check_files(write_report(sol, tmp_path / f"r{symmetry}"))
        assert "| left, right | 2 | win | 1 |" in text, symmetry


def test_report_is_titled_by_game_and_preset_and_its_boards_have_a_legend(tmp_path: Path):
    """Issue 37, item 2: "Balance report: Blam! (preset 3x3)" with the full parameters in the
    introduction; every board strip says what its colours and symbols stand for."""
    from solver.api import make_game

    game = make_game("blam", rows=3, cols=3, per_size=1)
    sol = solve(game, out=tmp_path / "t")
    md = write_report(sol, tmp_path / "r")
    text, page = check_files(md)
    assert text.startswith("# Balance report: Blam! (preset 3x3)\n")
    assert f"Variant: `{game.variant.label()}`" in text
    assert "<title>Balance report: Blam! (preset 3x3)</title>" in page
    strips = sorted((md.parent / "figures").glob("*.svg"))
    assert strips
    for svg in strips:
        body = svg.read_text()
        assert '<g class="legend">' in body, svg.name
        assert "player 1 pyramid" in body and "number on a pyramid: its owner" in body, svg.name
    custom = solve(make_game("blam", rows=3, cols=3, per_size=1, chain=False), out=tmp_path / "t")
    assert write_report(custom, tmp_path / "r2").read_text().startswith("# Balance report: Blam! (custom variant)\n")


def test_shipped_skip_names_a_shipped_report(capsys):
    """`python -m analysis.shipped --skip GAME:PRESET` (README): an unknown pair is one line
    listing the shipped ones."""
    from analysis.shipped import main

    with pytest.raises(SystemExit) as exc:
        main(["--skip", "override:9x9"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--skip override:9x9 is not a shipped report" in err and "override:3x3-2" in err


def test_shipped_estimate_commands_parse_and_build_their_players():
    """Every command of ``analysis.shipped.SHIPPED_ESTIMATES`` (replayed by ``--estimates``, hours
    of work) names a known game, preset and player options: parsed and built here without playing,
    so a typo fails in seconds, not after the estimates before it. Each calibration is on a named
    preset (small enough to solve exactly), each estimate of the game's default (full-size)
    variant follows a calibration of its own player (the report quotes it)."""
    from analysis.shipped import SHIPPED_ESTIMATES
    from solver.cli import _check_args, _game, _players_of, _resolve_game, build_parser

    calibrated: set[tuple[str, str]] = set()
    assert SHIPPED_ESTIMATES
    for command in SHIPPED_ESTIMATES:
        args = build_parser().parse_args(command)
        _resolve_game(args)
        _check_args(args)
        game = _game(args)
        p1, p2 = _players_of(args)
        if command[0] == "calibrate":
            assert command[command.index("--preset") + 1] in type(game).presets, command
            calibrated.add((game.name, p1.describe()))
        else:
            assert command[0] == "estimate" and game.is_default(), command
            assert (game.name, p1.describe()) in calibrated, command


def test_a_shipped_calibration_falls_back_to_a_solved_preset(tmp_path, monkeypatch):
    """``analysis.shipped --estimates`` calibrates Override on 3x3-2 where its table (hours to
    solve) is under ``--out``, else on 3x3 with a note; other commands are replayed as written."""
    from analysis.shipped import GATE_FALLBACK, SHIPPED_ESTIMATES, gate_command
    from solver.api import make_game, solve

    gated = [c for c in SHIPPED_ESTIMATES if c[0] == "calibrate" and (c[1], c[c.index("--preset") + 1]) in GATE_FALLBACK]
    assert gated, "Override's calibrations are on 3x3-2"
    command, note = gate_command(gated[0], tmp_path)
    assert command[command.index("--preset") + 1] == "3x3" and command[:3] == gated[0][:3]
    assert note and "override 3x3-2" in note and "3x3 instead" in note
    assert command[command.index("--preset") + 2:] == gated[0][gated[0].index("--preset") + 2:]
    others = [c for c in SHIPPED_ESTIMATES if c not in gated]
    assert all(gate_command(c, tmp_path) == (c, None) for c in others)
    # with the preset's table on disk the command is kept: shown with a small preset standing in
    # for 3x3-2 (the fallback table is keyed by game and preset)
    solve(make_game("override", size=3, line=3, per_size=1), out=tmp_path, progress=False)
    import analysis.shipped as shipped

    monkeypatch.setattr(shipped, "GATE_FALLBACK", {("override", "3x3"): "2x2"})
    small = ["calibrate", "override", "--preset", "3x3", "--seed", "1"]
    assert gate_command(small, tmp_path) == (small, None)
    assert gate_command(small, tmp_path / "empty")[0][3] == "2x2"
