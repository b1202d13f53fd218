"""The variants, each in one module, found by id (like python-chess's ``find_variant``).

A variant's module holds its data (a :class:`~service.rules.ruleset.Variant`: deck, deal,
meld shapes, the knobs it offers and their defaults), its rule hooks (a subclass of
:class:`~service.rules.variants.base.VariantRules` overriding only the steps where its rules
differ from the common model's) and its typed per-game facts, if any; ``RULES`` is the
variant, data and hooks together. Adding a variant is adding its module and naming it in
:data:`_ALL` below.
"""

from __future__ import annotations

from service.rules.ruleset import Knob, Variant
from service.rules.state import register_variant_state
from service.rules.variants import basic, dummy, gin, lebanese14, rummy51, wrotham
from service.rules.variants.base import VariantRules

_ALL: tuple[VariantRules, ...] = (basic.RULES, rummy51.RULES, lebanese14.RULES, dummy.RULES,
                                  wrotham.RULES, gin.RULES)
"""Every variant, in the order ``GET /v1/variants`` lists them."""

_RULES: dict[str, VariantRules] = {vr.variant.id: vr for vr in _ALL}

VARIANTS: dict[str, Variant] = {vr.variant.id: vr.variant for vr in _ALL}
"""Every variant's data, by id."""


def _catalogue() -> dict[str, Knob]:
    """Every knob by name, as the first variant to offer it defines it (variants listed
    later may narrow its values: Rummy 51's ``ace``), in the order they are first met."""
    knobs: dict[str, Knob] = {}
    for variant in VARIANTS.values():
        for name, knob in variant.knobs.items():
            knobs.setdefault(name, knob)
    return knobs


KNOBS: dict[str, Knob] = _catalogue()
"""Every knob there is, in its general form (a variant's own may narrow it)."""

for _vr in _ALL:
    register_variant_state(_vr.variant.id, _vr.read_state)


def unknown_variant(variant_id: str) -> KeyError:
    """The error for an id no variant has: a ``KeyError`` whose message names the known
    ones. (A ``KeyError`` itself: mypyc compiles no subclass of it.)"""
    return KeyError(f"unknown variant {variant_id!r}; known: {', '.join(VARIANTS)}")


def find_variant(variant_id: str) -> Variant:
    """The variant with that id (its data); raise :func:`unknown_variant`'s ``KeyError``
    naming the known ones."""
    try:
        return VARIANTS[variant_id]
    except KeyError:
        raise unknown_variant(variant_id) from None


def variant_rules(variant_id: str) -> VariantRules:
    """The rule hooks of the variant with that id; raise :func:`unknown_variant`'s
    ``KeyError``."""
    try:
        return _RULES[variant_id]
    except KeyError:
        raise unknown_variant(variant_id) from None
