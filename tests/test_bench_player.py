"""The benchmark's player skips the meld search only where it would find nothing, and
scores its cards as the plain definition does."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.player import helpfulness, helpfulness_of, isolated_gain, may_meld
from service.rules.cards import rank_of
from service.rules.engine import meld_shape
from service.rules.melds import MeldShape
from service.rules.ruleset import VARIANTS, Rules, default_rules
from service.rules.search import candidate_melds

SHAPES = {
    **{name: meld_shape(variant, Rules.of(default_rules(variant)))
       for name, variant in VARIANTS.items()},
    "basic, mixed suits, ace high or low": meld_shape(VARIANTS["basic"], Rules.of(
        {**default_rules(VARIANTS["basic"]), "run_same_suit": False, "ace": "high_or_low"})),
}
CARDS = sorted(set(VARIANTS["rummy51"].deck()))


@settings(max_examples=400, deadline=None)
@given(name=st.sampled_from(sorted(SHAPES)),
       hand=st.lists(st.sampled_from(CARDS), min_size=1, max_size=14))
def test_no_meld_is_missed(name: str, hand: list[str]) -> None:
    shape = SHAPES[name]
    if not may_meld(hand, shape):
        assert candidate_melds(hand, shape) == []


def test_it_does_skip_hands_without_melds() -> None:
    shape = SHAPES["basic"]
    assert not may_meld(["2H", "5S", "9D", "KC", "KH", "7H"], shape)
    assert may_meld(["2H", "3H", "4H"], shape)
    assert may_meld(["KC", "KH", "KS"], shape)
    assert may_meld(["QH", "KH", "AH"], SHAPES["basic, mixed suits, ace high or low"])


@settings(max_examples=400, deadline=None)
@given(name=st.sampled_from(sorted(SHAPES)),
       hand=st.lists(st.sampled_from(CARDS), min_size=2, max_size=14),
       card=st.sampled_from(CARDS))
def test_an_isolated_card_is_in_no_meld(name: str, hand: list[str], card: str) -> None:
    """The player skips the meld search of a barren hand that only gained such a card."""
    shape = SHAPES[name]
    if isolated_gain(Counter(hand), [*hand, card], shape):
        assert not [m for m in candidate_melds([*hand, card], shape) if card in m.cards]


def test_a_card_next_to_the_hand_is_not_isolated() -> None:
    shape = SHAPES["basic"]
    before = Counter(["2H", "9S", "KD"])
    assert isolated_gain(before, ["2H", "9S", "KD", "5C"], shape)
    assert not isolated_gain(before, ["2H", "9S", "KD", "JS"], shape)  # two from 9S
    assert not isolated_gain(before, ["2H", "9S", "KD", "KC"], shape)
    assert not isolated_gain(before, ["2H", "9S", "KD", "AD"], shape)  # an ace high too


def _helpfulness_by_definition(card: str, hand: list[str], shape: MeldShape) -> int:
    """Other naturals of the card's rank (3 each), of its suit one rank away (2 each) and
    two ranks away (1 each); a wild 100."""
    if shape.is_wild(card):
        return 100
    others = list(hand)
    others.remove(card)
    naturals = [c for c in others if not shape.is_wild(c)]
    rank = rank_of(card)
    return (3 * sum(1 for c in naturals if rank_of(c) == rank)
            + sum(weight for c in naturals if c[1] == card[1]
                  for step, weight in ((1, 2), (2, 1))
                  if rank_of(c) in (rank - step, rank + step)))


@settings(max_examples=400, deadline=None)
@given(name=st.sampled_from(sorted(SHAPES)),
       hand=st.lists(st.sampled_from(CARDS), min_size=1, max_size=14),
       card=st.sampled_from(CARDS))
def test_helpfulness_is_its_definition(name: str, hand: list[str], card: str) -> None:
    shape = SHAPES[name]
    helps = helpfulness(hand, shape)
    assert helps == {c: _helpfulness_by_definition(c, hand, shape) for c in hand}
    assert helpfulness_of(card, hand, shape) == _helpfulness_by_definition(
        card, [*hand, card], shape)
