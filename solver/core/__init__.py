"""The game protocol, variants, and helpers shared by every game."""

from solver.core.game import Expansion, Game, NodeKind, Outcome, Result
from solver.core.variant import Param, Variant, make_variant, parse_assignments

__all__ = [
    "Expansion", "Game", "NodeKind", "Outcome", "Result",
    "Param", "Variant", "make_variant", "parse_assignments",
]
