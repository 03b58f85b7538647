"""A game-independent description of a position, for drawing (see ``analysis/boards.py``).

A game's ``picture(state)`` says *what* is on the board; the drawing module decides *how* it
looks. Three layouts:

* ``"grid"``: ``rows`` x ``cols`` squares; cell ``r * cols + c`` is column ``c`` (``a``, ``b``,
  ... left to right) of row ``r`` (row 0 at the bottom), so cell 0 is ``a1``, as in every game's
  square names (:func:`solver.core.symmetry.cell_name`).
* ``"ring"``: ``cols`` cells on a circle (``rows`` is 1), numbered ``0..cols-1`` (Petal Battle's
  petals); cell ``i`` is named ``"i"``.
* ``"text"``: no board, only ``text`` lines drawn in a monospace font (the default picture of a
  game that has no drawing of its own: its ``render`` text).

Each cell holds a stack of :class:`Piece` s, bottom to top. Pieces and pictures are immutable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from solver.core.symmetry import cell_name

#: the colour keys a :class:`Piece` may name (the drawing module has a fill for each); a colour
#: may also be given directly as ``"#rrggbb"``
COLOURS: tuple[str, ...] = (
    "A", "B",                                   # Override
    "black", "white", "green",                  # Greener
    "p1", "p2", "p3", "p4",                     # Blam!, Petal Battle (players 1..4)
    "red", "yellow", "blue",                    # Carrots and Broccoli (with green and black)
    "wall",                                     # a neutral wall pyramid
)
#: the sizes of a pyramid
SMALL, MEDIUM, LARGE = 0, 1, 2
#: the layouts of a picture
LAYOUTS: tuple[str, ...] = ("grid", "ring", "text")

Layout = Literal["grid", "ring", "text"]

_HEX = re.compile(r"^#[0-9a-fA-F]{6}$")


@dataclass(frozen=True, slots=True)
class Piece:
    """One pyramid: its ``colour`` (a key of :data:`COLOURS` or ``"#rrggbb"``), its ``size``
    (0 small, 1 medium, 2 large) and an optional short ``label`` written on it (e.g. the owner's
    number, so that colours are never the only clue)."""

    colour: str
    size: int
    label: str = ""

    def __post_init__(self) -> None:
        if self.colour not in COLOURS and not _HEX.match(self.colour):
            raise ValueError(f"unknown piece colour {self.colour!r}; use one of "
                             f"{', '.join(COLOURS)} or '#rrggbb'")
        if self.size not in (SMALL, MEDIUM, LARGE):
            raise ValueError(f"piece size must be 0 (small), 1 (medium) or 2 (large), got {self.size!r}")


Stack = tuple[Piece, ...]


@dataclass(frozen=True, slots=True)
class Picture:
    """What a position looks like, independent of the game.

    Attributes
    ----------
    layout : ``"grid"``, ``"ring"`` or ``"text"``
        See the module docstring.
    rows, cols : int
        Grid size; a ring has ``rows == 1`` and ``cols`` cells; text has 0 and 0.
    cells : tuple of stacks
        One stack per cell (bottom to top), ``rows * cols`` of them (empty for text).
    labels : tuple of str
        One label per cell (``""`` for none), e.g. ``"+"`` on Override's blocked centre or
        ``"h3 g1"`` on a Greener stack; ``()`` means no labels at all.
    highlight : tuple of int
        Cells to outline, e.g. the squares of the last move.
    caption : tuple of str
        Lines under the board: supplies, stashes, scores, the roll, who is to move.
    text : tuple of str
        The lines of the text layout (drawn in a monospace font).
    marks : tuple of (cell, colour, title)
        Small dots drawn in cells, e.g. the explorer's legal moves coloured by their value
        (``colour`` a ``#rrggbb`` string, ``title`` the tooltip: the move and its value).
    key : tuple of (symbol, meaning)
        What the game's own symbols mean, for legends: the cell labels (``("+", "the centre:
        no pyramid may be placed on it")``) and the letters on pyramids.
    """

    layout: Layout
    rows: int = 0
    cols: int = 0
    cells: tuple[Stack, ...] = ()
    labels: tuple[str, ...] = ()
    highlight: tuple[int, ...] = ()
    caption: tuple[str, ...] = ()
    text: tuple[str, ...] = ()
    marks: tuple[tuple[int, str, str], ...] = ()
    key: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise ValueError(f"unknown picture layout {self.layout!r}; use one of {', '.join(LAYOUTS)}")
        n = self.rows * self.cols
        if self.layout == "ring" and self.rows != 1:
            raise ValueError(f"a ring picture has rows=1 (its cells are cols), got rows={self.rows}")
        if self.layout == "text" and (n or self.cells):
            raise ValueError("a text picture has no cells (rows=cols=0)")
        if self.layout != "text" and (self.rows < 1 or self.cols < 1):
            raise ValueError(f"a {self.layout} picture needs rows >= 1 and cols >= 1")
        if len(self.cells) != n:
            raise ValueError(f"{len(self.cells)} cells given for a {self.rows} x {self.cols} picture")
        for stack in self.cells:
            if not all(isinstance(p, Piece) for p in stack):
                raise ValueError(f"a cell must be a tuple of Piece (bottom to top), got {stack!r}")
        if self.labels and len(self.labels) != n:
            raise ValueError(f"{len(self.labels)} labels given for {n} cells (give one per cell, or none)")
        bad = [i for i in self.highlight if not 0 <= i < n] + [m[0] for m in self.marks if not 0 <= m[0] < n]
        if bad:
            raise ValueError(f"highlighted or marked cells {bad} are not cells of the picture (0..{n - 1})")

    @classmethod
    def of_text(cls, text: str, caption: tuple[str, ...] = ()) -> "Picture":
        """A text picture of ``text`` (e.g. a game's ``render``), one line per line."""
        return cls("text", text=tuple(text.splitlines()), caption=tuple(caption))

    def cell_name(self, cell: int) -> str:
        """The name of ``cell``: ``a1``-style on a grid, the number on a ring."""
        if self.layout == "ring":
            return str(cell)
        return cell_name(cell, self.cols)

    def label(self, cell: int) -> str:
        """The label of ``cell`` (``""`` when there is none)."""
        return self.labels[cell] if self.labels else ""
