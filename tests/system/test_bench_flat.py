"""The states the benchmark times are what it says they are: the flatness curves' tables
of melds (bench/flat.py) and each variant's worst hand (bench/engine.py), every card where
exactly one copy of it can be, and the engine plays on from them."""

from __future__ import annotations

from collections import Counter
from random import Random

import pytest

from bench.engine import WORST_HANDS
from bench.flat import MELD_TABLE, melds_state
from service.rules import apply
from service.rules.cards import JOKER, standard_deck
from service.rules.legal import legal_moves
from service.rules.moves import Discard, Draw
from service.rules.state import GameState
from service.rules.variants import find_variant


def _cards(state: GameState) -> Counter[str]:
    return Counter([*(c for h in state.hands for c in h), *state.stock, *state.discard,
                    *(c for m in state.melds for c in m.cards)])


@pytest.mark.parametrize("count", [0, 10, 30])
def test_a_table_of_melds_is_a_late_hand_the_engine_plays_on(count: int) -> None:
    assert len(MELD_TABLE) == 30
    state = melds_state(count, Random(count))
    assert len(state.melds) == count and state.melded == [True, True]
    assert [len(h) for h in state.hands] == [6, 6]
    assert _cards(state) == Counter(standard_deck(2, 4))
    state, _ = apply(state, 1, Draw("stock"), Random(0))
    card = next(c for c in state.hands[1] if c != JOKER)
    state, events = apply(state, 1, Discard(card), Random(0))
    assert events[-1]["type"] == "discard" and state.turn == 0


@pytest.mark.parametrize("name", sorted(WORST_HANDS))
def test_a_worst_hand_is_the_hand_it_is_named_for(name: str) -> None:
    for seed in range(5):
        state, seat = WORST_HANDS[name](Random(seed))
        variant = find_variant(state.variant)
        assert _cards(state) == Counter(variant.deck())
        hand = state.hands[seat]
        if name.startswith("gin_lay_out"):  # a knock to answer: three melds, 10 cards
            assert state.turn == seat and state.phase == "lay_out"
            assert len(hand) == 10 and len(state.melds) == 3
            assert {m.owner for m in state.melds} == {1 - seat}
            assert legal_moves(state, seat).moves[0]["type"] == "lay_out"
            continue
        assert state.turn == seat and state.phase == "play"
        if name.startswith("dummy"):
            assert len(hand) == 14 and sum(c == JOKER or c[0] == "2" for c in hand) == 8
        elif name.startswith("rummy51"):
            assert len(hand) == 15 and hand.count(JOKER) == 4
        else:
            assert len(hand) == 11 and all(c[0] in "A234" for c in hand)
        assert legal_moves(state, seat).moves
