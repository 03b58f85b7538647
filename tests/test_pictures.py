"""Board pictures: every game's ``picture()`` on hand-checked positions, and the SVG drawing.

Each test plays a known position with ``game.play``, draws it with :func:`analysis.boards.svg`,
parses the SVG and reads the ``data-*`` attributes of the drawn cells and pyramids.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET

import pytest

from analysis.boards import PALETTE, svg, svg_strip, write_svg
from solver.core.picture import COLOURS, Piece, Picture
from solver.errors import PyramidsError
from solver.games import make_game
from tests.toygames import Subtraction

NS = "{http://www.w3.org/2000/svg}"


# --- helpers ---------------------------------------------------------------------------------
def parse(text: str) -> ET.Element:
    """The parsed SVG, after checking that it is a standalone document: well-formed XML, an
    ``<svg>`` root in the SVG namespace with a viewBox, and no reference to anything outside."""
    root = ET.fromstring(text)
    assert root.tag == NS + "svg"
    assert root.get("viewBox", "").startswith("0 0 ")
    assert text.count("http") == 1 and 'xmlns="http://www.w3.org/2000/svg"' in text
    for bad in ("href", "url(", "@import", "<image", "<script", "<foreignObject"):
        assert bad not in text
    return root


def pieces(root: ET.Element) -> dict[str, list[tuple[str, int, int]]]:
    """Drawn pyramids by cell: ``(colour, size, level)`` in drawing order."""
    out: dict[str, list[tuple[str, int, int]]] = {}
    for el in root.iter(NS + "polygon"):
        if el.get("class") == "piece":
            out.setdefault(el.get("data-cell"), []).append(
                (el.get("data-colour"), int(el.get("data-size")), int(el.get("data-level"))))
    return out


def cells(root: ET.Element) -> list[ET.Element]:
    return [el for el in root.iter() if "cell" in (el.get("class") or "").split()]


def highlighted(root: ET.Element) -> set[str]:
    return {el.get("data-cell") for el in cells(root) if "last" in el.get("class").split()}


def texts(root: ET.Element, cls: str) -> list[str]:
    return [el.text or "" for el in root.iter(NS + "text") if el.get("class") == cls]


def labels(root: ET.Element) -> dict[str, str]:
    return {el.get("data-cell"): el.text for el in root.iter(NS + "text") if el.get("class") == "label"}


# --- Override ----------------------------------------------------------------------------------
def override():
    return make_game("override", size=3, line=3, per_size=1)


def test_override_stack_of_two_and_last_move():
    game = override()
    # A's small on a1, B's medium on b1, then the medium moves onto the smaller top of a1
    state = game.play(["AS@a1", "BM@b1", "b1-a1"])
    picture = game.picture(state)
    assert picture.layout == "grid" and (picture.rows, picture.cols) == (3, 3)
    assert picture.cells[0] == (Piece("A", 0, "A"), Piece("B", 1, "B"))
    root = parse(svg(picture))
    assert pieces(root) == {"a1": [("A", 0, 0), ("B", 1, 1)]}
    assert highlighted(root) == {"a1", "b1"}
    assert labels(root) == {"b2": "+"}  # the empty centre that cannot be placed on
    tops = [el.get("data-cell") + ":" + el.get("data-level") for el in root.iter(NS + "polygon")
            if el.get("data-top") == "true"]
    assert tops == ["a1:1"]
    assert texts(root, "caption") == ["supply A: S0 M1 L1, B: S1 M0 L1", "last move b1-a1",
                                      "B (player 2) to move"]
    assert len(cells(root)) == 9
    assert texts(root, "coord") == ["a", "b", "c", "1", "2", "3"]


def test_override_stack_of_three():
    game = override()
    state = game.play(["AS@a1", "BM@b1", "b1-a1", "AL@c1", "c1-b1", "AM@c3", "b1-a1"])
    root = parse(svg(game.picture(state), title=game.variant.label()))
    assert pieces(root) == {"a1": [("A", 0, 0), ("B", 1, 1), ("A", 2, 2)], "c3": [("A", 1, 0)]}
    assert highlighted(root) == {"a1", "b1"}
    assert texts(root, "title") == [game.variant.label()]
    assert root.find(NS + "title").text == game.variant.label()


def test_override_winner_and_occupied_centre_label():
    game = override()
    state = game.play(["AS@a1", "BS@c3", "AM@b1", "BM@a3", "AL@c1"])
    picture = game.picture(state)
    assert picture.caption[-1] == "game over: A (player 1) wins"
    assert picture.highlight == ()  # the last action was a place
    root = parse(svg(picture))
    assert pieces(root) == {"a1": [("A", 0, 0)], "b1": [("A", 1, 0)], "c1": [("A", 2, 0)],
                            "c3": [("B", 0, 0)], "a3": [("B", 1, 0)]}
    assert highlighted(root) == set()
    # a pyramid moved onto the centre: the "+" goes away
    game2 = make_game("override", size=3, line=3, per_size=1)
    state2 = game2.play(["AS@a2", "a2-b2"])
    assert game2.picture(state2).labels[4] == ""
    assert pieces(parse(svg(game2.picture(state2)))) == {"b2": [("A", 0, 0)]}


# --- Greener -----------------------------------------------------------------------------------
def test_greener_stacks_labels_and_scores():
    game = make_game("greener", rows=3, cols=3, black=2, white=2, setup="BWG/GGB/WGG")
    # Black's a3 captures the green a2; White's a1 captures that stack (height 3, one green)
    state = game.play(["a3-a2", "a1-a2"])
    root = parse(svg(game.picture(state)))
    assert pieces(root) == {
        "a2": [("white", 2, 0)], "b3": [("white", 2, 0)], "c3": [("green", 2, 0)],
        "b2": [("green", 2, 0)], "c2": [("black", 2, 0)], "b1": [("green", 2, 0)],
        "c1": [("green", 2, 0)],
    }
    assert labels(root) == {"a2": "h3 g1"}
    assert highlighted(root) == set()
    assert texts(root, "caption") == ["Black to move; greens Black 0, White 1"]


def test_greener_chance_root_is_text():
    game = make_game("greener", rows=3, cols=3, black=2, white=2)  # setup=all: a chance root
    state = game.initial_state()
    picture = game.picture(state)
    assert picture.layout == "text" and picture.text == tuple(game.render(state).splitlines())
    root = parse(svg(picture))
    assert texts(root, "line") == list(picture.text)
    assert pieces(root) == {} and cells(root) == []


# --- Blam! -------------------------------------------------------------------------------------
def test_blam_push_and_capture():
    game = make_game("blam", rows=3, cols=3, per_size=1)
    # player 1's L on b2; player 2's M on a1 pushes it to c3; player 1's S on a2 pushes the M
    # off the board into player 1's treasure
    state = game.play(["L@b2", "M@a1", "S@a2"])
    root = parse(svg(game.picture(state)))
    assert pieces(root) == {"a2": [("p1", 0, 0)], "c3": [("p1", 2, 0)]}
    assert texts(root, "caption") == [
        "player 1: stash 0S 1M 0L | treasure 0S 1M 0L | score 2",
        "player 2: stash 1S 0M 1L | treasure 0S 0M 0L | score 0",
        "to move: player 2",
    ]
    assert texts(root, "piece-label") == ["1", "1"]


# --- Carrots and Broccoli ----------------------------------------------------------------------
def carrots():
    return make_game("carrots", {"pass": True}, size=3, colours=1, per_colour=1, group=2,
                     wall="random", atom_black=True)


def test_carrots_wall_move_and_last_moved():
    game = carrots()
    assert game.wall_squares == (4,)  # b2
    state = game.play(["wall S", "roll r S", "plant rS@a1", "roll g L", "plant gL@c3",
                       "roll r S", "move rS a1-a2"])
    picture = game.picture(state)
    root = parse(svg(picture))
    assert pieces(root) == {"a2": [("red", 0, 0)], "b2": [("black", 0, 0)], "c3": [("green", 2, 0)]}
    assert highlighted(root) == {"a2"}
    assert labels(root) == {"a3": "\\", "c1": "\\"}  # the empty squares of the wall line
    assert texts(root, "caption") == ["Broccoli to roll", "last moved: a2",
                                      "off board: rMx1 rLx1 gSx1 gMx1",
                                      "Carrots (a1): red; Broccoli (c3): green"]


def test_carrots_roll_and_setup():
    game = carrots()
    root_picture = game.picture(game.initial_state())
    assert root_picture.caption[0] == "wall not set up yet (chance: the wall arrangement)"
    assert all(not stack for stack in root_picture.cells)
    state = game.play(["wall S", "roll r S"])
    picture = game.picture(state)
    assert picture.caption[0] == "Carrots to move, roll r S"
    assert picture.highlight == ()
    assert pieces(parse(svg(picture))) == {"b2": [("black", 0, 0)]}


# --- Petal Battle ------------------------------------------------------------------------------
def test_petal_ring():
    game = make_game("petal", petals=6, run=3, per_size=1)
    # both order; player 1's top S is smaller, so player 1 starts with one action: a spawn
    state = game.play(["SML/LMS", "spawn@1"])
    picture = game.picture(state)
    assert picture.layout == "ring" and (picture.rows, picture.cols) == (1, 6)
    root = parse(svg(picture))
    assert root.get("data-layout") == "ring"
    assert pieces(root) == {"0": [("p1", 2, 0)], "1": [("p1", 0, 0)], "3": [("p2", 2, 0)]}
    assert sorted(el.get("data-cell") for el in cells(root)) == ["0", "1", "2", "3", "4", "5"]
    assert texts(root, "coord") == ["0", "1", "2", "3", "4", "5"]
    assert texts(root, "caption") == [
        "player 1: supply 0S 1M 0L | sequencing ML (top first)",
        "player 2: supply 1S 1M 0L | sequencing MS (top first)",
        "to move: player 2, 3 action(s) left this turn (round started by player 1)",
    ]


# --- a plug-in game (no picture of its own) ----------------------------------------------------
def test_plugin_game_gets_a_text_picture():
    game = Subtraction()
    state = game.play(["2"])
    picture = game.picture(state)
    assert picture == Picture("text", text=("5 counters, player 2 to move",))
    root = parse(svg(picture))
    assert root.get("data-layout") == "text"
    assert texts(root, "line") == ["5 counters, player 2 to move"]
    assert pieces(root) == {} and cells(root) == []


# --- drawing ---------------------------------------------------------------------------------
def test_every_colour_has_a_fill_and_white_shows():
    assert set(COLOURS) <= set(PALETTE)
    picture = Picture("grid", 1, len(COLOURS), tuple((Piece(c, i % 3),) for i, c in enumerate(COLOURS)))
    root = parse(svg(picture))
    drawn = [el for el in root.iter(NS + "polygon")]
    assert [el.get("data-colour") for el in drawn] == list(COLOURS)
    for el in drawn:
        assert el.get("fill") == PALETTE[el.get("data-colour")]
        assert el.get("stroke") not in (None, "none", "#FFFFFF", el.get("fill"))


def test_sizes_are_isosceles_and_ordered():
    picture = Picture("grid", 1, 3, ((Piece("A", 0),), (Piece("A", 1),), (Piece("A", 2),)))
    heights = []
    for el in parse(svg(picture)).iter(NS + "polygon"):
        (x1, y1), (x2, y2), (x3, y3) = (tuple(map(float, p.split(","))) for p in el.get("points").split())
        assert y1 == y2 and abs((x1 + x2) / 2 - x3) < 1e-6  # base level, apex above its middle
        heights.append(y1 - y3)
    assert heights[0] < heights[1] < heights[2]


def test_text_is_escaped_and_picture_checks():
    picture = Picture("grid", 1, 2, ((Piece("#123456", 1, "<&>"),), ()), labels=("", 'a"b<'),
                      highlight=(1,), caption=("x < y & z", "\"quoted\"", "bell\x07"))
    root = parse(svg(picture, title="<title & more>"))
    assert texts(root, "caption") == ["x < y & z", '"quoted"', "bell\ufffd"]  # XML forbids \x07
    assert texts(root, "piece-label") == ["<&>"]
    assert labels(root) == {"b1": 'a"b<'}
    assert texts(root, "title") == ["<title & more>"]
    assert highlighted(root) == {"b1"}
    with pytest.raises(ValueError, match="colour"):
        Piece("purple", 0)
    with pytest.raises(ValueError, match="size"):
        Piece("A", 3)
    with pytest.raises(ValueError, match="cells"):
        Picture("grid", 2, 2, ((),))
    with pytest.raises(ValueError, match="highlighted"):
        Picture("grid", 1, 1, ((),), highlight=(1,))
    with pytest.raises(ValueError, match="layout"):
        Picture("hex", 1, 1, ((),))


def test_size_sets_the_shown_width():
    root = parse(svg(Picture("grid", 2, 4, ((),) * 8), size=400))
    _, _, w, h = map(float, root.get("viewBox").split())
    assert float(root.get("width")) == 400
    assert abs(float(root.get("height")) - 400 * h / w) < 0.01


def test_strip_of_boards():
    game = override()
    states = [game.initial_state(), game.play(["AL@a1"]), game.play(["AL@a1", "BL@c3"])]
    text = svg_strip([game.picture(s) for s in states], ["start", "1. AL@a1", "2. BL@c3"], title="opening")
    root = parse(text)
    boards = [g for g in root.iter(NS + "g") if g.get("class") == "board"]
    assert [g.get("data-index") for g in boards] == ["0", "1", "2"]
    assert [texts(g, "caption") for g in boards] == [["start"], ["1. AL@a1"], ["2. BL@c3"]]
    assert [pieces(g) for g in boards] == [{}, {"a1": [("A", 2, 0)]},
                                           {"a1": [("A", 2, 0)], "c3": [("B", 2, 0)]}]
    with pytest.raises(ValueError, match="one caption per picture"):
        svg_strip([game.picture(states[0])], [])


def test_write_svg_is_atomic(tmp_path):
    game = override()
    picture = game.picture(game.play(["AL@a1"]))
    path = write_svg(picture, tmp_path / "sub" / "board.svg", title="t")
    assert path.read_text(encoding="utf-8") == svg(picture, title="t")
    assert os.listdir(tmp_path / "sub") == ["board.svg"]  # no temporary file left behind
    write_svg(picture, path)  # replaces an existing file
    assert path.read_text(encoding="utf-8") == svg(picture)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(PyramidsError, match="cannot write the picture"):
        write_svg(picture, blocker / "board.svg")


@pytest.mark.parametrize("name, params, symbols", [
    ("override", {"size": 3, "line": 3, "per_size": 1}, ["+", "A, B on a pyramid"]),
    ("blam", {"rows": 3, "cols": 3, "per_size": 1}, ["number on a pyramid"]),
    ("greener", {"rows": 3, "cols": 3, "black": 2, "white": 2, "setup": "BWG/GGB/WGG"}, ["h3 g1"]),
    ("carrots", {"size": 3, "colours": 1, "per_colour": 1, "group": 2}, ["\\"]),
    ("petal", {"petals": 4, "run": 2, "per_size": 1}, ["number by a petal"]),
])
def test_every_game_explains_its_own_symbols_in_the_legend(name, params, symbols):
    """Issue 37, item 2: the labels a game writes on its boards (Override's "+" centre, Greener's
    "h3 g1" stacks, Carrots' wall line) are explained by the legend, after the colours."""
    from analysis.boards import legend
    from solver.games import make_game

    game = make_game(name, params)
    state = game.initial_state()
    if name == "carrots":  # the setup roll: the board is drawn from the first rolled position on
        state = game.outcomes(state)[0][1] if hasattr(game, "outcomes") else state
    picture = game.picture(state)
    words = [w for fill, w in legend(picture) if not fill]
    for symbol in symbols:
        assert any(w.startswith(symbol + ":") for w in words), (symbol, words)
    used = {label for label in picture.labels if label}
    for label in used:  # every label actually on this board is explained
        explained = re.fullmatch(r"h\d+ g\d+", label) and any(w.startswith("h3 g1:") for w in words)
        assert explained or any(w.startswith(label + ":") for w in words), label
