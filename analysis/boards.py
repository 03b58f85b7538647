"""Board pictures as SVG: one drawing module for the reports, ``pyramids show --svg`` and the
explorer.

A game describes a position as a :class:`solver.core.picture.Picture` (``game.picture(state)``);
this module draws it. Pure Python, no dependency: the result is SVG text, a standalone document
with a ``viewBox`` and no external reference (no fonts, images or style sheets are loaded).

What is drawn, and how to find it again (tests and the explorer select on these attributes):

* every cell: ``<rect class="cell" data-cell="b2">`` on a grid (``<ellipse class="cell"
  data-cell="3">`` for a petal of a ring); a highlighted cell (e.g. the last move) has
  ``class="cell last"``;
* every pyramid: ``<polygon class="piece" data-cell="b2" data-colour="A" data-size="2"
  data-level="0">``, an isosceles triangle of one of three sizes in the colour of
  :data:`PALETTE` with a dark outline; ``data-level`` is its place in the stack from the bottom,
  and the top pyramid of a stack also has ``data-top="true"``. The pyramids of a stack are drawn
  bottom to top, each shifted a little to the right, so every one stays visible and the top one
  is drawn last, with a thicker outline;
* text: coordinates (``class="coord"``: files a, b, ... under the board, ranks 1, 2, ... on its
  left; petal numbers round a ring), cell labels (``class="label"``), piece labels
  (``class="piece-label"``), caption lines (``class="caption"``), the title (``class="title"``)
  and the lines of a text picture (``class="line"``), every one XML-escaped.

Functions: :func:`svg` (one picture), :func:`svg_strip` (several small boards side by side, e.g. a
report's opening line) and :func:`write_svg` (atomic write to a file).
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from solver.core.picture import LARGE, Picture
from solver.errors import PyramidsError

#: fill of every colour key of :class:`~solver.core.picture.Piece` (Okabe-Ito colours where the
#: game does not fix the colour, so that colour-blind readers can tell players apart; the piece
#: labels carry the same information in letters or numbers)
PALETTE: dict[str, str] = {
    "A": "#0072B2",       # blue
    "B": "#E69F00",       # orange
    "black": "#262626",
    "white": "#FAFAFA",
    "green": "#009E73",   # bluish green
    "p1": "#0072B2",      # blue
    "p2": "#E69F00",      # orange
    "p3": "#009E73",      # bluish green
    "p4": "#CC79A7",      # reddish purple
    "red": "#D55E00",     # vermillion
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "wall": "#6E6E6E",    # neutral grey
}

#: outline of the pyramids (dark, so that white pyramids show on a light board)
OUTLINE = "#1A1A1A"
#: colours of the board
SQUARE_FILL = "#F1ECDD"
GRID_LINE = "#9C9078"
PETAL_FILL = "#F6E8EF"
PETAL_LINE = "#9C7E8C"
HIGHLIGHT = "#D81B60"
TEXT = "#222222"
MUTED = "#7A705C"
SANS = "DejaVu Sans, Helvetica, Arial, sans-serif"
MONO = "DejaVu Sans Mono, Menlo, Consolas, monospace"

#: geometry, in viewBox units
CELL = 64.0
PAD = 10.0
COORD = 18.0
TITLE_BAND = 24.0
CAPTION_FONT = 12.0
CAPTION_LINE = 16.0
TEXT_FONT = 13.0
TEXT_LINE = 17.0
#: width and height of a small, medium and large pyramid, as fractions of a cell
PIECE_WIDTH = (0.36, 0.50, 0.64)
PIECE_HEIGHT = (0.40, 0.55, 0.70)
PIECE_FONT = (8.0, 10.0, 12.0)
#: horizontal shift between the pyramids of a stack, and the widest spread of a tall stack, as
#: fractions of a cell; the pyramids of a stack are drawn smaller by ``STACK_SCALE``
STACK_STEP = 0.2
STACK_SPREAD = 0.36
STACK_SCALE = 0.8
#: how much higher each pyramid below the top is drawn (as if further back), fraction of a cell
STACK_RISE = 0.08
#: distance of the pyramids' bases above the bottom of the cell, as a fraction of a cell
BASE = 0.08
#: characters XML 1.0 does not allow (control characters other than tab, newline, return)
_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
#: estimated advance of a character, as a fraction of the font size (sans-serif, bold, monospace)
CHAR_WIDTH = 0.56
BOLD_WIDTH = 0.64
MONO_WIDTH = 0.6


# --- small helpers -------------------------------------------------------------------------
def _num(x: float) -> str:
    """A coordinate, short: ``12``, ``12.5``, ``12.25``."""
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def _xml_text(text: str) -> str:
    """``text`` escaped for XML, with the control characters XML forbids replaced."""
    return escape(_FORBIDDEN.sub("\ufffd", text))


def _head(tag: str, attrs: Sequence[tuple[str, object]]) -> str:
    """A tag name and its attributes, values escaped (``None`` values left out)."""
    parts = [tag]
    for name, value in attrs:
        if value is None:
            continue
        if isinstance(value, float):
            value = _num(value)
        parts.append(f'{name}="{_xml_text(str(value)).replace(chr(34), "&quot;")}"')
    return " ".join(parts)


def _open(tag: str, attrs: Sequence[tuple[str, object]]) -> str:
    """The start tag of an element whose children follow."""
    return f"<{_head(tag, attrs)}>"


def _el(tag: str, attrs: Sequence[tuple[str, object]], text: str | None = None) -> str:
    """One element with escaped attribute values (and escaped text content)."""
    if text is None:
        return f"<{_head(tag, attrs)}/>"
    return f"<{_head(tag, attrs)}>{_xml_text(text)}</{tag}>"


#: what each colour key stands for, as a legend says it
COLOUR_NAMES: dict[str, str] = {
    "A": "player A", "B": "player B", "black": "black", "white": "white", "green": "green",
    "p1": "player 1", "p2": "player 2", "p3": "player 3", "p4": "player 4",
    "red": "red", "yellow": "yellow", "blue": "blue", "wall": "wall (neutral)",
}


def legend(picture: Picture) -> list[tuple[str, str]]:
    """``(fill, words)`` for each piece colour on the board, in the palette's order (colours given
    directly as ``#rrggbb`` are named by their code), then the outline of highlighted cells, then
    the game's own symbols (:attr:`Picture.key`, fill ``""``: no swatch); the explorer draws it
    beside the board and reports under their board strips."""
    present = {piece.colour for stack in picture.cells for piece in stack}
    out = [(_fill(c), f"{COLOUR_NAMES[c]} pyramid") for c in PALETTE if c in present]
    out += [(c, f"{c} pyramid") for c in sorted(present - set(PALETTE))]
    if picture.highlight:
        out.append((HIGHLIGHT, "outlined: the cells of the last move"))
    out += [("", f"{symbol}: {meaning}") for symbol, meaning in picture.key]
    return out


def _fill(colour: str) -> str:
    """The fill of a colour key (or a ``#rrggbb`` colour given directly)."""
    return PALETTE.get(colour, colour)


def _ink_on(fill: str) -> str:
    """Dark or white text, whichever reads better on ``fill`` (by relative luminance)."""
    r, g, b = (int(fill[i:i + 2], 16) / 255 for i in (1, 3, 5))

    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    lum = 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
    return OUTLINE if lum > 0.3 else "#FFFFFF"


def _text_width(text: str, font: float, *, bold: bool = False) -> float:
    """An upper estimate of the width of ``text`` in the sans-serif font."""
    return len(text) * font * (BOLD_WIDTH if bold else CHAR_WIDTH)


# --- one board ---------------------------------------------------------------------------
@dataclass
class _Fragment:
    """The elements of one drawn picture, with its origin at (0, 0), and its size."""

    elements: list[str]
    width: float
    height: float


def _stack(picture: Picture, cell: int, x0: float, y0: float) -> list[str]:
    """The pyramids of ``cell`` drawn in the ``CELL`` x ``CELL`` box at ``(x0, y0)``."""
    stack = picture.cells[cell]
    name = picture.cell_name(cell)
    out: list[str] = []
    k = len(stack)
    base_y = y0 + CELL * (1 - BASE)
    scale = CELL * (STACK_SCALE if k > 1 else 1.0)
    step = min(STACK_STEP, STACK_SPREAD / (k - 1)) if k > 1 else 0.0
    for level, piece in enumerate(stack):
        cx = x0 + CELL / 2 + (level - (k - 1) / 2) * step * CELL
        by = base_y - (k - 1 - level) * STACK_RISE * CELL
        half = PIECE_WIDTH[piece.size] * scale / 2
        height = PIECE_HEIGHT[piece.size] * scale
        points = " ".join(f"{_num(x)},{_num(y)}" for x, y in
                          ((cx - half, by), (cx + half, by), (cx, by - height)))
        is_top = level == k - 1
        fill = _fill(piece.colour)
        out.append(_el("polygon", [
            ("class", "piece"), ("data-cell", name), ("data-colour", piece.colour),
            ("data-size", piece.size), ("data-level", level), ("data-top", "true" if is_top else None),
            ("points", points), ("fill", fill), ("stroke", OUTLINE),
            ("stroke-width", 2.2 if is_top else 1.2), ("stroke-linejoin", "round"),
        ]))
        if piece.label:
            font = PIECE_FONT[piece.size] * scale / CELL
            out.append(_el("text", [
                ("class", "piece-label"), ("data-cell", name), ("data-level", level),
                # a covered pyramid shows its left side: its label goes there
                ("x", cx if is_top else cx - 0.3 * half), ("y", by - 0.18 * height),
                ("font-family", SANS), ("font-size", font), ("font-weight", "bold"),
                ("text-anchor", "middle"), ("fill", _ink_on(fill)),
            ], piece.label))
    return out


def _marks(picture: Picture, boxes: dict[int, tuple[float, float]]) -> list[str]:
    """The picture's marks: small dots in a row along the bottom of their cell's box (several
    moves to one cell: several dots), each with its tooltip."""
    out: list[str] = []
    used: dict[int, int] = {}
    for cell, colour, title in picture.marks:
        k = used.get(cell, 0)
        used[cell] = k + 1
        x0, y0 = boxes[cell]
        col, row = k % 6, k // 6
        out.append(_open("circle", [
            ("class", "mark"), ("data-cell", picture.cell_name(cell)), ("cx", x0 + 7 + 10 * col),
            ("cy", y0 + CELL - 7 - 10 * row), ("r", 4.2), ("fill", colour), ("stroke", "#FFFFFF"),
            ("stroke-width", 1.0)]) + f"<title>{_xml_text(title)}</title></circle>")
    return out


def _cell_label(picture: Picture, cell: int, x0: float, y0: float) -> str | None:
    """The label of ``cell``: large in the middle of an empty cell, small in the top left
    corner of an occupied one."""
    label = picture.label(cell)
    if not label:
        return None
    name = picture.cell_name(cell)
    if picture.cells[cell]:
        return _el("text", [("class", "label"), ("data-cell", name), ("x", x0 + 4), ("y", y0 + 11),
                            ("font-family", SANS), ("font-size", 10.0), ("fill", TEXT)], label)
    return _el("text", [("class", "label"), ("data-cell", name), ("x", x0 + CELL / 2),
                        ("y", y0 + CELL / 2 + 8), ("font-family", SANS), ("font-size", 22.0),
                        ("text-anchor", "middle"), ("fill", MUTED)], label)


def _grid(picture: Picture, top: float) -> tuple[list[str], float, float]:
    """Squares, coordinates, labels and pyramids of a grid; returns the elements, the width
    and the bottom of what was drawn."""
    rows, cols = picture.rows, picture.cols
    left = PAD + COORD
    out: list[str] = []
    boxes: dict[int, tuple[float, float]] = {}
    for cell in range(rows * cols):
        r, c = divmod(cell, cols)
        boxes[cell] = (left + c * CELL, top + (rows - 1 - r) * CELL)
    lit = set(picture.highlight)
    # plain squares first, highlighted ones after, so that no neighbour covers an outline
    for cell in [x for x in boxes if x not in lit] + [x for x in boxes if x in lit]:
        x0, y0 = boxes[cell]
        last = cell in lit
        inset = 2.0 if last else 0.0
        out.append(_el("rect", [
            ("class", "cell last" if last else "cell"), ("data-cell", picture.cell_name(cell)),
            ("x", x0 + inset), ("y", y0 + inset), ("width", CELL - 2 * inset),
            ("height", CELL - 2 * inset), ("fill", SQUARE_FILL),
            ("stroke", HIGHLIGHT if last else GRID_LINE), ("stroke-width", 4.0 if last else 1.0),
        ]))
    bottom = top + rows * CELL
    for c in range(cols):
        out.append(_el("text", [("class", "coord"), ("x", left + (c + 0.5) * CELL), ("y", bottom + 13),
                                ("font-family", SANS), ("font-size", 11.0), ("text-anchor", "middle"),
                                ("fill", MUTED)], chr(ord("a") + c)))
    for r in range(rows):
        out.append(_el("text", [("class", "coord"), ("x", left - 5), ("y", top + (rows - 1 - r + 0.5) * CELL + 4),
                                ("font-family", SANS), ("font-size", 11.0), ("text-anchor", "end"),
                                ("fill", MUTED)], str(r + 1)))
    for cell, (x0, y0) in boxes.items():
        label = _cell_label(picture, cell, x0, y0)
        if label:
            out.append(label)
        out.extend(_stack(picture, cell, x0, y0))
    out.extend(_marks(picture, boxes))
    return out, left + cols * CELL + PAD, bottom + COORD


def _ring(picture: Picture, top: float) -> tuple[list[str], float, float]:
    """Petals on a circle, numbered clockwise from the top, with their pyramids upright."""
    n = picture.cols
    radius = max(1.6 * CELL, n * 1.25 * CELL / (2 * math.pi))
    reach = radius + 0.6 * CELL + COORD  # petal tip plus the number outside it
    cx = PAD + reach
    cy = top + reach
    out: list[str] = [_el("circle", [("class", "centre"), ("cx", cx), ("cy", cy),
                                     ("r", max(0.35 * CELL, radius - 0.75 * CELL)),
                                     ("fill", "#FBF3C4"), ("stroke", PETAL_LINE), ("stroke-width", 1.0)])]
    lit = set(picture.highlight)
    centres: dict[int, tuple[float, float, float]] = {}
    for i in range(n):
        angle = -90.0 + 360.0 * i / n
        rad = math.radians(angle)
        px, py = cx + radius * math.cos(rad), cy + radius * math.sin(rad)
        centres[i] = (px, py, rad)
    for i in [x for x in range(n) if x not in lit] + [x for x in range(n) if x in lit]:
        px, py, rad = centres[i]
        last = i in lit
        out.append(_el("ellipse", [
            ("class", "cell last" if last else "cell"), ("data-cell", picture.cell_name(i)),
            ("cx", px), ("cy", py), ("rx", 0.6 * CELL), ("ry", 0.54 * CELL),
            ("transform", f"rotate({_num(math.degrees(rad))} {_num(px)} {_num(py)})"),
            ("fill", PETAL_FILL), ("stroke", HIGHLIGHT if last else PETAL_LINE),
            ("stroke-width", 4.0 if last else 1.0),
        ]))
    for i in range(n):
        px, py, rad = centres[i]
        tx = cx + (radius + 0.6 * CELL + 9) * math.cos(rad)
        ty = cy + (radius + 0.6 * CELL + 9) * math.sin(rad) + 4
        out.append(_el("text", [("class", "coord"), ("data-cell", picture.cell_name(i)), ("x", tx), ("y", ty),
                                ("font-family", SANS), ("font-size", 12.0), ("font-weight", "bold"),
                                ("text-anchor", "middle"), ("fill", MUTED)], str(i)))
        # the box whose pyramids' middle height is the petal's centre
        x0, y0 = px - CELL / 2, py + (PIECE_HEIGHT[LARGE] / 2 + BASE - 1) * CELL
        label = _cell_label(picture, i, x0, y0)
        if label:
            out.append(label)
        out.extend(_stack(picture, i, x0, y0))
    out.extend(_marks(picture, {i: (px - CELL / 2, py - CELL / 2) for i, (px, py, _) in centres.items()}))
    return out, 2 * (PAD + reach) - PAD, top + 2 * reach


def _text(picture: Picture, top: float) -> tuple[list[str], float, float]:
    """The lines of a text picture, monospace, spaces kept."""
    out: list[str] = []
    y = top + TEXT_FONT
    width = 0.0
    for line in picture.text:
        out.append(_el("text", [("class", "line"), ("x", PAD), ("y", y), ("font-family", MONO),
                                ("font-size", TEXT_FONT), ("fill", TEXT), ("xml:space", "preserve"),
                                ("style", "white-space:pre")], line))
        width = max(width, len(line) * TEXT_FONT * MONO_WIDTH)
        y += TEXT_LINE
    return out, 2 * PAD + width, y - TEXT_FONT + 4


def _board(picture: Picture, caption: Sequence[str], title: str | None) -> _Fragment:
    """Everything of one picture (title, board, caption lines) with its origin at (0, 0)."""
    out: list[str] = []
    top = PAD
    width = 2 * PAD
    if title:
        out.append(_el("text", [("class", "title"), ("x", PAD), ("y", PAD + 14), ("font-family", SANS),
                                ("font-size", 14.0), ("font-weight", "bold"), ("fill", TEXT)], title))
        width = max(width, 2 * PAD + _text_width(title, 14.0, bold=True))
        top += TITLE_BAND
    draw = {"grid": _grid, "ring": _ring, "text": _text}[picture.layout]
    elements, board_width, bottom = draw(picture, top)
    out.extend(elements)
    width = max(width, board_width)
    y = bottom + 4
    for line in caption:
        y += CAPTION_LINE
        out.append(_el("text", [("class", "caption"), ("x", PAD), ("y", y - 4), ("font-family", SANS),
                                ("font-size", CAPTION_FONT), ("fill", TEXT)], line))
        width = max(width, 2 * PAD + _text_width(line, CAPTION_FONT))
    return _Fragment(out, width, y + PAD)


def _document(body: list[str], width: float, height: float, *, size: float | None,
              title: str | None, extra: Sequence[tuple[str, object]] = ()) -> str:
    """The standalone ``<svg>`` document around ``body``."""
    if size is not None and size <= 0:
        raise ValueError(f"size must be a positive width in pixels, got {size!r}")
    shown_w = width if size is None else float(size)
    shown_h = height if size is None else float(size) * height / width
    head = _open("svg", [
        ("xmlns", "http://www.w3.org/2000/svg"), ("viewBox", f"0 0 {_num(width)} {_num(height)}"),
        ("width", shown_w), ("height", shown_h), ("role", "img"),
        ("aria-label", title or None), *extra,
    ])
    lines = [head]
    if title:
        lines.append(_el("title", [], title))
    lines.append(_el("rect", [("class", "background"), ("x", 0.0), ("y", 0.0), ("width", width),
                              ("height", height), ("fill", "#FFFFFF")]))
    lines.extend(body)
    lines.append("</svg>")
    return "\n".join(lines) + "\n"


# --- the front door ------------------------------------------------------------------------
def svg(picture: Picture, *, size: float | None = None, title: str | None = None) -> str:
    """A position as a standalone SVG document.

    Parameters
    ----------
    picture : Picture
        What to draw (``game.picture(state)``).
    size : float, optional
        Width in pixels the picture is shown at (the height follows); by default its natural
        size (a 64-unit cell per square).
    title : str, optional
        A heading drawn above the board (and the document's ``<title>``), e.g. the variant.

    Returns
    -------
    str
        The SVG text, with a ``viewBox`` and no external reference.
    """
    if not isinstance(picture, Picture):
        raise TypeError(f"svg() draws a solver.core.picture.Picture, got {type(picture).__name__}")
    frag = _board(picture, picture.caption, title)
    extra = [("class", "board-picture"), ("data-layout", picture.layout)]
    if picture.layout != "text":
        extra += [("data-rows", picture.rows), ("data-cols", picture.cols)]
    return _document(frag.elements, frag.width, frag.height, size=size, title=title, extra=extra)


def svg_strip(pictures: Sequence[Picture], captions: Sequence[str], *, size: float | None = None,
              title: str | None = None, with_legend: bool = False) -> str:
    """Several boards side by side in one SVG, e.g. the positions of a report's opening line.

    Each board gets its own caption from ``captions`` (one string per picture, e.g. ``"1. AL@a1"``;
    it may hold several lines separated by ``\\n``) *instead of* the picture's own caption
    lines. Every board is a ``<g class="board" data-index="i">``; within it the cells and
    pyramids carry the same attributes as in :func:`svg`. ``with_legend``: a band under the
    boards says what their colours and outlines stand for (:func:`legend`, over every board;
    ``<g class="legend">``).
    """
    if len(pictures) != len(captions):
        raise ValueError(f"svg_strip needs one caption per picture: {len(pictures)} pictures, "
                         f"{len(captions)} captions")
    if not pictures:
        raise ValueError("svg_strip needs at least one picture")
    body: list[str] = []
    x = 0.0
    top = 0.0
    if title:
        body.append(_el("text", [("class", "title"), ("x", PAD), ("y", PAD + 14), ("font-family", SANS),
                                 ("font-size", 14.0), ("font-weight", "bold"), ("fill", TEXT)], title))
        top = TITLE_BAND
    height = 0.0
    for i, (picture, caption) in enumerate(zip(pictures, captions)):
        frag = _board(picture, caption.splitlines(), None)
        body.append(_open("g", [("class", "board"), ("data-index", i), ("data-layout", picture.layout),
                                ("transform", f"translate({_num(x)} {_num(top)})")]))
        body.extend(frag.elements)
        body.append("</g>")
        x += frag.width
        height = max(height, frag.height)
    width = max(x, 2 * PAD + (_text_width(title, 14.0, bold=True) if title else 0.0))
    if with_legend:
        items = list(dict.fromkeys(item for picture in pictures for item in legend(picture)))
        # as one board's legend orders them: colours, then the outline, then the words
        items.sort(key=lambda item: 2 if not item[0] else 1 if item[0] == HIGHLIGHT else 0)
        band, band_height = _legend_band(items, width, top + height)
        body.extend(band)
        height += band_height
    return _document(body, width, top + height, size=size, title=title,
                     extra=[("class", "board-strip")])


def _legend_band(items: Sequence[tuple[str, str]], width: float, y0: float) -> tuple[list[str], float]:
    """A legend as SVG elements from height ``y0`` down: a swatch and its words per item,
    wrapped to ``width``; returns the elements and the band's height (0 when there is nothing)."""
    if not items:
        return [], 0.0
    key = TEXT_FONT * 0.8
    out = [_open("g", [("class", "legend")])]
    x, y = PAD, y0 + PAD / 2
    for fill, words in items:
        swatch = key + 4 if fill else 0  # a symbol of the game's own is said in words only
        w = swatch + _text_width(words, TEXT_FONT) + 14
        if x > PAD and x + w > width - PAD:
            x, y = PAD, y + TEXT_LINE
        if fill:  # the last move's outline is drawn as an outline, a colour as a square of it
            paint = ([("fill", "none"), ("stroke", fill), ("stroke-width", 2.0)] if fill == HIGHLIGHT
                     else [("fill", fill), ("stroke", OUTLINE), ("stroke-width", 0.8)])
            out.append(_el("rect", [("x", x), ("y", y + 2), ("width", key), ("height", key), *paint]))
        out.append(_el("text", [("x", x + swatch), ("y", y + key + 1), ("font-family", SANS),
                                ("font-size", TEXT_FONT), ("fill", TEXT)], words))
        x += w
    out.append("</g>")
    return out, (y - y0) + TEXT_LINE + PAD


def write_svg(picture: Picture, path: str | os.PathLike[str], *, size: float | None = None,
              title: str | None = None) -> Path:
    """Write :func:`svg` of ``picture`` to ``path`` atomically (a temporary file in the same
    folder, then a rename), creating the folder if needed; returns the path.

    Raises :class:`solver.errors.PyramidsError` (one line, with the fix) when the file cannot be
    written."""
    path = Path(path)
    text = svg(picture, size=size, title=title)
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give an ordinary new file's mode
        os.replace(tmp, path)
        tmp = None
    except (OSError, ValueError) as exc:  # ValueError: e.g. a NUL byte in the name
        why = getattr(exc, "strerror", None) or str(exc)
        raise PyramidsError(f"cannot write the picture to {str(path)!r} ({why}); "
                            "pick a writable file path") from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    return path
