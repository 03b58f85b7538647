"""Typed, validated variant parameters.

A game declares its parameters as a tuple of :class:`Param`; a :class:`Variant` is a frozen,
validated assignment of every parameter (defaults filled in). Values given as text (from
``--set name=value``) are parsed by the parameter's type; values given as Python objects are
checked the same way, so the CLI and the Python API accept exactly the same variants.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping

from solver.errors import VariantError

_ON = {"on", "true", "yes", "1"}
#: integers written with more digits than this are refused without being converted (Python
#: refuses ``int()`` of more than 4300 digits; no parameter comes anywhere near)
_MAX_DIGITS = 100
_OFF = {"off", "false", "no", "0"}


@dataclass(frozen=True)
class Param:
    """One variant parameter.

    ``kind`` is ``"int"``, ``"bool"`` (written ``on``/``off``) or ``"str"``. A ``str`` parameter
    with ``choices`` accepts only those; ``free=True`` also accepts any other text (for example
    an explicit board layout) that the game validates itself.

    ``derive``: a derived default. When the parameter is not given, its value is
    ``derive(values)`` computed from the parameters declared before it (``values``: name ->
    parsed value); ``default`` is then only the text shown to people (e.g. ``"petals/2"``).

    ``bounds``: why ``min``/``max`` are where they are (e.g. ``"cell names use the letters
    a..z"``), said in the error a value outside them gives. Every ``int`` parameter of a built-in
    game has both bounds, so no value can make a game's constructor do unbounded work before its
    own checks run.
    """

    name: str
    kind: str
    default: Any
    help: str
    choices: tuple[str, ...] | None = None
    min: int | None = None
    max: int | None = None
    free: bool = False
    derive: Callable[[Mapping[str, Any]], Any] | None = field(default=None, compare=False)
    bounds: str | None = field(default=None, compare=False)

    def parse(self, raw: Any) -> Any:
        """Turn ``raw`` (text or a Python value) into a valid value of this parameter."""
        if self.kind == "int":
            if isinstance(raw, bool):
                raise VariantError(f"parameter {self.name!r} takes an integer, not {raw!r}")
            if isinstance(raw, str):
                text = raw.strip()
                if not re.fullmatch(r"[+-]?\d+", text):
                    raise VariantError(
                        f"parameter {self.name!r} takes an integer, got {_short(raw)!r}; "
                        f"write e.g. --set {self.name}={self.default}"
                    )
                digits = text.lstrip("+-").lstrip("0")
                if len(digits) > _MAX_DIGITS:  # int() of such text is slow, or refused by Python
                    bound = f"; it must be at most {self.max}" if self.max is not None else ""
                    raise VariantError(f"parameter {self.name!r} takes an integer of at most "
                                       f"{_MAX_DIGITS} digits, got one of {len(digits):,}{bound}")
                raw = int(text)
            if not isinstance(raw, int):
                raise VariantError(f"parameter {self.name!r} takes an integer, got {_short(raw)!r}")
            why = f" ({self.bounds})" if self.bounds else ""
            if self.min is not None and raw < self.min:
                raise VariantError(f"parameter {self.name!r} must be at least {self.min}{why}, "
                                   f"got {_short(raw)}")
            if self.max is not None and raw > self.max:
                raise VariantError(f"parameter {self.name!r} must be at most {self.max}{why}, "
                                   f"got {_short(raw)}")
            return raw
        if self.kind == "bool":
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in _ON:
                return True
            if text in _OFF:
                return False
            raise VariantError(f"parameter {self.name!r} takes on or off, got {raw!r}")
        if self.kind == "str":
            text = str(raw).strip()
            if self.choices and text not in self.choices and not self.free:
                raise VariantError(
                    f"parameter {self.name!r} takes one of {', '.join(self.choices)}; got {raw!r}"
                )
            return text
        raise AssertionError(f"unknown parameter kind {self.kind!r}")

    def format(self, value: Any) -> str:
        """The text form of a value, as written after ``--set name=``."""
        if self.kind == "bool":
            return "on" if value else "off"
        return str(value)

    def describe_type(self) -> str:
        if self.kind == "bool":
            return "on|off"
        if self.kind == "int":
            lo = "" if self.min is None else str(self.min)
            hi = "" if self.max is None else str(self.max)
            return f"int {lo}..{hi}" if (lo or hi) else "int"
        if self.choices:
            return "|".join(self.choices) + ("|<text>" if self.free else "")
        return "text"


@dataclass(frozen=True)
class Variant(Mapping[str, Any]):
    """A game name plus a value for every parameter, in declaration order. Immutable, hashable."""

    game: str
    items_: tuple[tuple[str, Any], ...]
    specs: tuple[Param, ...] = field(repr=False, compare=False, hash=False)

    # Mapping protocol -------------------------------------------------------------------
    def __getitem__(self, name: str) -> Any:
        for key, value in self.items_:
            if key == name:
                return value
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return (key for key, _ in self.items_)

    def __len__(self) -> int:
        return len(self.items_)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name in ("game", "items_", "specs"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    # Text forms -------------------------------------------------------------------------
    def spec(self, name: str) -> Param:
        for p in self.specs:
            if p.name == name:
                return p
        raise KeyError(name)

    def as_text(self) -> dict[str, str]:
        """Every parameter as text (``on``/``off`` for switches)."""
        return {k: self.spec(k).format(v) for k, v in self.items_}

    def label(self) -> str:
        """``override(size=3, line=3, per_size=1, centre_rule=on, no_undo=on)``."""
        inner = ", ".join(f"{k}={v}" for k, v in self.as_text().items())
        return f"{self.game}({inner})"

    def variant_id(self) -> str:
        """A folder name that identifies the variant: every parameter, filesystem-safe.

        Long or unsafe values are shortened with a hash so the id stays unique and short.
        """
        parts = []
        for k, v in self.as_text().items():
            safe = re.sub(r"[^A-Za-z0-9.+-]", "~", v)
            if len(safe) > 24 or safe != v:
                safe = safe[:12] + "~" + hashlib.sha1(v.encode()).hexdigest()[:8]
            parts.append(f"{k}={safe}")
        return ",".join(parts) or "default"  # a game without parameters still gets a folder

    def replace(self, **changes: Any) -> "Variant":
        """A new variant with some parameters changed (validated again by :func:`make_variant`)."""
        params = dict(self.items_)
        params.update(changes)
        return make_variant(self.game, self.specs, params)


def _short(value: Any) -> str:
    """``value`` as text for an error line: long numbers and texts are cut (a value of
    thousands of digits would otherwise fill the line)."""
    if isinstance(value, int) and abs(value) >= 10**_MAX_DIGITS:
        return f"a number of more than {_MAX_DIGITS} digits"
    text = str(value)
    return text if len(text) <= 40 else text[:30] + f"... ({len(text)} characters)"


def make_variant(game: str, specs: Iterable[Param], given: Mapping[str, Any]) -> Variant:
    """Validate ``given`` (text or Python values) against ``specs``; fill in defaults."""
    specs = tuple(specs)
    known = {p.name: p for p in specs}
    unknown = [name for name in given if name not in known]
    if unknown:
        raise VariantError(
            f"{game} has no parameter {unknown[0]!r}; its parameters are: {', '.join(known)} "
            f"(see `pyramids list`)"
        )
    items = []
    for p in specs:
        if p.name in given:
            raw = given[p.name]
        elif p.derive is not None:
            raw = p.derive(dict(items))
        else:
            raw = p.default
        items.append((p.name, p.parse(raw)))
    return Variant(game, tuple(items), specs)


def parse_assignments(pairs: Iterable[str], *, option: str = "--set",
                      example: str = "size=3") -> dict[str, str]:
    """Parse ``["size=3", "line=3"]`` into a dict; a malformed pair is a one-line error that names
    ``option`` (``--set``, ``--vary``) with an ``example`` of its form."""
    out: dict[str, str] = {}
    for pair in pairs:
        name, eq, value = pair.partition("=")
        name = name.strip()
        if not eq or not name:
            raise VariantError(f"{option} takes name=value, got {pair!r}; write e.g. {option} {example}")
        if name in out:
            raise VariantError(f"parameter {name!r} is given twice to {option}")
        out[name] = value
    return out
