"""Compound meld actions in legal-moves: a Dummy contract and a Wrotham all-at-once finish
(an example the engine accepts, whenever the answer says one exists)."""

from __future__ import annotations

from random import Random

import pytest
from bot import choose_move

from service.rules import Violation, apply, new_game
from service.rules.legal import compound_action
from service.rules.moves import move_from_dict


@pytest.mark.parametrize(("variant", "kind", "rule", "rules"), [
    ("dummy", "contract", "DUMMY-CONTRACTS", {}),
    ("wrotham", "all_at_once", "WROTHAM-LATE", {}),
])
def test_compound_examples_are_accepted(variant: str, kind: str, rule: str,
                                        rules: dict[str, object]) -> None:
    found = 0
    for seed in range(2):
        rng = Random(seed)
        state, _ = new_game(variant, ["a", "b", "c"], rules, rng=rng)
        for _ in range(900):
            if state.status != "playing":
                break
            seat = state.turn
            compound = compound_action(state, seat)
            if compound is not None:
                assert (compound["kind"], compound["rule"]) == (kind, rule)
                if compound["exists"]:
                    found += 1
                    example = move_from_dict(compound["example"])
                    apply(state, seat, example, Random(0))  # accepted: no Violation
            try:
                state, _ = apply(state, seat, choose_move(state, seat, rng), rng)
            except Violation:
                continue
    assert found > 0
