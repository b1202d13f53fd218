"""Each variant's rule module, found by variant id (like python-chess's ``find_variant``).

A variant is data (:mod:`service.rules.ruleset`) plus a small :class:`VariantRules`
subclass overriding only the steps where its rules differ from basic rummy's.
"""

from __future__ import annotations

from service.rules.dummy import DummyRules
from service.rules.ruleset import BASIC, DUMMY, LEBANESE14, RUMMY51, WROTHAM
from service.rules.rummy51 import Lebanese14Rules, Rummy51Rules
from service.rules.turn import VariantRules
from service.rules.wrotham import WrothamRules

_RULES: dict[str, VariantRules] = {
    "basic": VariantRules(BASIC),
    "rummy51": Rummy51Rules(RUMMY51),
    "lebanese14": Lebanese14Rules(LEBANESE14),
    "dummy": DummyRules(DUMMY),
    "wrotham": WrothamRules(WROTHAM),
}


def variant_rules(variant_id: str) -> VariantRules:
    """The rule module of a variant."""
    return _RULES[variant_id]
