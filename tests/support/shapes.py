"""Meld shapes for the property tests of the engine's meld helpers and of the benchmark's
player: every variant's, with its default knobs, and basic rummy's with runs of mixed suits
and the ace high or low, or around the corner."""

from __future__ import annotations

from service.rules.engine import meld_shape
from service.rules.melds import MeldShape
from service.rules.ruleset import Rules, default_rules
from service.rules.variants import VARIANTS


def _shapes() -> dict[str, MeldShape]:
    shapes = {name: meld_shape(variant, Rules.of(default_rules(variant)))
              for name, variant in VARIANTS.items()}
    basic = VARIANTS["basic"]
    for ace in ("high or low", "around"):
        shapes[f"basic, mixed suits, ace {ace}"] = meld_shape(basic, Rules.of(
            {**default_rules(basic), "run_same_suit": False, "ace": ace.replace(" ", "_")}))
    return shapes


SHAPES = _shapes()
"""By name: each variant's (``"basic"``, ``"rummy51"`` …) and the two basic ones above."""
