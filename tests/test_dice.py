"""The Pyramid die and the Colour die (solver/core/dice.py).

Expected values come from the dice as described in the rules file: six faces per die, each 1/6;
Pyramid die S, M, L, S-or-M, S-or-L, M-or-L; Colour die red, yellow, green, blue, black, atom.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from solver.core import dice
from solver.core.dice import BLACK, BLUE, GREEN, L, M, RED, S, YELLOW
from solver.errors import IllegalMoveError

TWO_COLOURS = (RED, YELLOW, GREEN, BLUE)
ONE_COLOUR = (RED, GREEN)


def test_faces_and_probabilities() -> None:
    assert [f.name for f in dice.PYRAMID_DIE] == ["S", "M", "L", "S/M", "S/L", "M/L"]
    assert [f.name for f in dice.COLOUR_DIE] == ["red", "yellow", "green", "blue", "black", "atom"]
    assert dice.FACE_PROB == Fraction(1, 6)
    # each size appears alone once and in two of the three two-size faces
    for size in (S, M, L):
        assert sum(size in f.sizes for f in dice.PYRAMID_DIE) == 3
    assert [f.mask for f in dice.PYRAMID_DIE] == [1, 2, 4, 3, 5, 6]


def test_all_rolls_are_36_equally_likely() -> None:
    rolls = dice.all_rolls()
    assert len(rolls) == 36
    assert len({r for r, _ in rolls}) == 36
    assert all(p == Fraction(1, 36) for _, p in rolls)
    assert sum(p for _, p in rolls) == 1


def test_probability_that_a_choice_is_allowed() -> None:
    # red S is allowed by the colour faces red and atom (2/6) times the size faces S, S/M, S/L
    # (3/6): 1/6. Yellow S with one colour per player: yellow is not in play, only the atom
    # could give it but the atom chooses among colours in play, so never.
    def prob(choice: tuple[int, int], in_play: tuple[int, ...], atom_black: bool = True) -> Fraction:
        return sum(
            (p for roll, p in dice.all_rolls()
             if choice in dice.roll_choices(roll, in_play, atom_black=atom_black)),
            Fraction(0),
        )

    assert prob((RED, S), TWO_COLOURS) == Fraction(1, 6)
    assert prob((YELLOW, S), ONE_COLOUR) == 0
    # black M: black face or atom (2/6) x M faces (3/6) = 1/6; without atom_black only 1/12
    assert prob((BLACK, M), ONE_COLOUR) == Fraction(1, 6)
    assert prob((BLACK, M), ONE_COLOUR, atom_black=False) == Fraction(1, 12)


def test_roll_choices() -> None:
    def roll(colour: str, size: str) -> dice.Roll:
        return dice.parse_roll(f"{colour} {size}")

    assert dice.roll_choices(roll("red", "S/M"), ONE_COLOUR) == {(RED, S), (RED, M)}
    # colours=1: yellow and blue allow nothing
    assert dice.roll_choices(roll("yellow", "L"), ONE_COLOUR) == frozenset()
    assert dice.roll_choices(roll("blue", "S/L"), ONE_COLOUR) == frozenset()
    assert dice.roll_masks(roll("blue", "S/L"), ONE_COLOUR) == (0, 0)
    # the atom: any colour in play, black too when atom_black
    assert dice.roll_choices(roll("atom", "M"), ONE_COLOUR) == {(RED, M), (GREEN, M), (BLACK, M)}
    assert dice.roll_choices(roll("atom", "M"), ONE_COLOUR, atom_black=False) == {(RED, M), (GREEN, M)}
    assert len(dice.roll_choices(roll("atom", "M/L"), TWO_COLOURS)) == 5 * 2
    # black is always on the colour die
    assert dice.roll_choices(roll("black", "L"), ONE_COLOUR, atom_black=False) == {(BLACK, L)}
    assert dice.roll_masks(roll("green", "M/L"), TWO_COLOURS) == (1 << GREEN, (1 << M) | (1 << L))


def test_parse_roll_forms_and_errors() -> None:
    assert dice.parse_roll("atom S/M").name == "atom S/M"
    assert dice.parse_roll("a ms").name == "atom S/M"
    assert dice.parse_roll("* S-or-M").name == "atom S/M"
    assert dice.parse_roll("k l").name == "black L"
    assert dice.parse_roll("Red SL").name == "red S/L"
    for bad in ("purple S", "red", "red SML", "red SS", "red X"):
        with pytest.raises(IllegalMoveError):
            dice.parse_roll(bad)


def test_group_outcomes_sums_exactly() -> None:
    # grouping by "does the roll allow red?" with one colour per player: red or atom faces
    # (2/6) allow it, the others (4/6) do not
    groups = dict(dice.group_outcomes(
        dice.all_rolls(), lambda r: bool(dice.roll_masks(r, ONE_COLOUR)[0] & 1 << RED)
    ))
    assert groups == {True: Fraction(1, 3), False: Fraction(2, 3)}
    assert dice.mask_bits(0b10110) == [1, 2, 4]
