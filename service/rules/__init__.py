"""The rules engine: pure (no Flask, Redis, marshmallow or I/O).

Cards, melds with wilds, rule sets and variants (one module each, in
:mod:`service.rules.variants`), moves, the state machine and scoring; the rule ids it cites
(:class:`~service.rules.rule_ids.RuleId`, stated in ``docs/rules.md``).
"""

from service.rules.cards import Card, CardError, Suit
from service.rules.engine import SetupError, apply, meld_shape, new_game
from service.rules.errors import Code, MalformedMove, Reason, Violation
from service.rules.melds import Meld, MeldError, MeldShape, Piece, check_meld, extend_meld
from service.rules.moves import Move, move_from_dict, move_to_dict
from service.rules.rule_ids import RuleId
from service.rules.ruleset import Rules, RulesError, Variant
from service.rules.state import GameState, TableMeld
from service.rules.variants import VARIANTS, find_variant
from service.rules.views import public_view, redact_event, seat_view

__all__ = [
    "VARIANTS", "Card", "CardError", "Code", "GameState", "MalformedMove", "Meld", "MeldError",
    "MeldShape", "Move", "Piece", "Reason", "RuleId", "Rules", "RulesError", "SetupError",
    "Suit", "TableMeld", "Variant", "Violation", "apply", "check_meld", "extend_meld",
    "find_variant", "meld_shape", "move_from_dict", "move_to_dict", "new_game", "public_view",
    "redact_event", "seat_view",
]
