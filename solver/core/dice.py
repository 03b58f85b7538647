"""The Looney Pyramids dice: the Pyramid die and the Colour die, usable by any game.

Faces (each with probability exactly ``Fraction(1, 6)``):

* **Pyramid die**: ``S``, ``M``, ``L``, ``S/M``, ``S/L``, ``M/L`` (a two-size face lets the
  player choose one of the two sizes).
* **Colour die**: ``red``, ``yellow``, ``green``, ``blue``, ``black`` and the ``atom`` (the player
  chooses any colour in play; with ``atom_black`` black is one of the choices).

A roll of both dice allows a set of ``(colour, size)`` choices, always a product
``colours x sizes``; :func:`roll_choices` and :func:`roll_masks` compute it for the colours a
variant plays with (a colour face that is not in play allows nothing). Colours and sizes are small
integers so that games can keep them in bit masks: colour ``c`` is bit ``1 << c`` of a colour mask,
size ``s`` is bit ``1 << s`` of a size mask.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import TypeVar

from solver.errors import IllegalMoveError

#: colour indices (bit ``1 << c`` in a colour mask)
RED, YELLOW, GREEN, BLUE, BLACK = 0, 1, 2, 3, 4
#: colour names and one-letter codes, indexed by colour (``k`` = black, as in chess notation)
COLOUR_NAMES: tuple[str, ...] = ("red", "yellow", "green", "blue", "black")
COLOUR_LETTERS: str = "rygbk"
#: size indices (bit ``1 << s`` in a size mask) and letters
S, M, L = 0, 1, 2
SIZE_LETTERS: str = "SML"

#: probability of every face of either die
FACE_PROB = Fraction(1, 6)


@dataclass(frozen=True)
class PyramidFace:
    """A face of the Pyramid die: the sizes it allows (one or two)."""

    sizes: tuple[int, ...]

    @property
    def name(self) -> str:
        """``S``, ``M``, ``L``, ``S/M``, ``S/L`` or ``M/L``."""
        return "/".join(SIZE_LETTERS[s] for s in self.sizes)

    @property
    def mask(self) -> int:
        """The sizes as a bit mask."""
        out = 0
        for s in self.sizes:
            out |= 1 << s
        return out


@dataclass(frozen=True)
class ColourFace:
    """A face of the Colour die: one colour, or the atom (``colour is None``)."""

    colour: int | None

    @property
    def is_atom(self) -> bool:
        return self.colour is None

    @property
    def name(self) -> str:
        """``red`` ... ``black`` or ``atom``."""
        return "atom" if self.colour is None else COLOUR_NAMES[self.colour]


#: the six faces of the Pyramid die, in the order above
PYRAMID_DIE: tuple[PyramidFace, ...] = (
    PyramidFace((S,)),
    PyramidFace((M,)),
    PyramidFace((L,)),
    PyramidFace((S, M)),
    PyramidFace((S, L)),
    PyramidFace((M, L)),
)
#: the six faces of the Colour die, in the order above
COLOUR_DIE: tuple[ColourFace, ...] = (
    ColourFace(RED),
    ColourFace(YELLOW),
    ColourFace(GREEN),
    ColourFace(BLUE),
    ColourFace(BLACK),
    ColourFace(None),
)


@dataclass(frozen=True)
class Roll:
    """One roll of both dice."""

    colour: ColourFace
    pyramid: PyramidFace

    @property
    def name(self) -> str:
        """Readable and typeable, e.g. ``red S``, ``atom S/M``, ``black L``."""
        return f"{self.colour.name} {self.pyramid.name}"


def all_rolls() -> list[tuple[Roll, Fraction]]:
    """The 36 rolls of both dice, each with probability exactly ``1/36``.

    Ordered colour face first (red ... atom), then pyramid face (S ... M/L).
    """
    return [
        (Roll(c, p), FACE_PROB * FACE_PROB) for c in COLOUR_DIE for p in PYRAMID_DIE
    ]


def colours_allowed(
    face: ColourFace, colours_in_play: Iterable[int], *, atom_black: bool = True
) -> int:
    """The colours a colour face allows, as a bit mask.

    Parameters
    ----------
    face : ColourFace
        The face rolled.
    colours_in_play : iterable of int
        The player colours the variant uses (e.g. red and green only with one colour each);
        black is always available through the black face.
    atom_black : bool
        Whether the atom may be taken as black.

    Returns
    -------
    int
        Bit mask of colours: a player colour not in play allows nothing (0).
    """
    in_play = 0
    for c in colours_in_play:
        if c == BLACK:
            raise ValueError("black is not a player colour; it is always on the colour die")
        in_play |= 1 << c
    if face.colour is None:
        return in_play | ((1 << BLACK) if atom_black else 0)
    if face.colour == BLACK:
        return 1 << BLACK
    return (1 << face.colour) & in_play


def roll_masks(
    roll: Roll, colours_in_play: Iterable[int], *, atom_black: bool = True
) -> tuple[int, int]:
    """``(colour mask, size mask)`` a roll allows; ``(0, 0)`` when it allows nothing."""
    cmask = colours_allowed(roll.colour, colours_in_play, atom_black=atom_black)
    if cmask == 0:
        return 0, 0
    return cmask, roll.pyramid.mask


def roll_choices(
    roll: Roll, colours_in_play: Iterable[int], *, atom_black: bool = True
) -> frozenset[tuple[int, int]]:
    """The ``(colour, size)`` pairs a roll allows (empty when its colour is not in play)."""
    cmask, smask = roll_masks(roll, colours_in_play, atom_black=atom_black)
    return frozenset(
        (c, s) for c in range(5) if cmask >> c & 1 for s in range(3) if smask >> s & 1
    )


def mask_bits(mask: int) -> list[int]:
    """The indices of the set bits of ``mask``, lowest first."""
    out = []
    i = 0
    while mask >> i:
        if mask >> i & 1:
            out.append(i)
        i += 1
    return out


def parse_roll(text: str) -> Roll:
    """Read a roll written as ``<colour face> <pyramid face>``, e.g. ``atom S/M`` or ``red L``.

    Colour faces may be abbreviated to their letter (``r y g b k``, ``a``/``*`` for the atom);
    the pyramid face may be written ``SM``, ``S/M`` or ``S-or-M`` (any order).
    """
    parts = text.strip().lower().replace("-or-", "/").split()
    if len(parts) != 2:
        raise IllegalMoveError(f"write a roll as '<colour> <size>', e.g. 'atom S/M'; got {text!r}")
    colour_text, size_text = parts
    face: ColourFace | None = None
    for cf in COLOUR_DIE:
        letter = "a" if cf.is_atom else COLOUR_LETTERS[cf.colour]  # type: ignore[index]
        if colour_text in (cf.name, letter) or (cf.is_atom and colour_text == "*"):
            face = cf
    if face is None:
        raise IllegalMoveError(
            f"unknown colour face {colour_text!r}; use red, yellow, green, blue, black or atom"
        )
    letters = size_text.upper().replace("/", "")
    try:
        wanted = tuple(sorted({SIZE_LETTERS.index(ch) for ch in letters}))
    except ValueError:
        raise IllegalMoveError(f"unknown pyramid face {size_text!r}; use S, M, L, S/M, S/L or M/L")
    for pf in PYRAMID_DIE:
        if pf.sizes == wanted and len(letters) == len(wanted):
            return Roll(face, pf)
    raise IllegalMoveError(f"unknown pyramid face {size_text!r}; use S, M, L, S/M, S/L or M/L")


K = TypeVar("K", bound=Hashable)


def group_outcomes(rolls: Iterable[tuple[Roll, Fraction]], key: Callable[[Roll], K]) -> list[tuple[K, Fraction]]:
    """Merge rolls with the same ``key`` (e.g. the same resulting position), summing their
    probabilities exactly; groups come in order of their first roll."""
    total: dict[K, Fraction] = {}
    for roll, p in rolls:
        k = key(roll)
        total[k] = total.get(k, Fraction(0)) + p
    return list(total.items())
