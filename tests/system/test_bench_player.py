"""The benchmark's player skips the meld search only where it would find nothing, finds
again from the last hand's melds exactly what the whole search finds, and scores its cards
as the plain definition does."""

from __future__ import annotations

from collections import Counter
from random import Random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench import player
from bench.player import (
    GamePlan,
    HandMelds,
    TableMeld,
    extended,
    helpfulness,
    helpfulness_of,
    isolated_gain,
    may_meld,
)
from service.rules.cards import rank_of
from service.rules.melds import Meld, MeldError, MeldShape, Piece, check_meld
from service.rules.ruleset import default_rules
from service.rules.search import candidate_melds
from service.rules.variants import VARIANTS
from tests.support.shapes import SHAPES

CARDS = sorted(set(VARIANTS["rummy51"].deck()))


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_the_tables_say_what_the_rules_say(name: str) -> None:
    """The player reads ranks and wilds from tables made once; they hold each card's
    ``rank_of`` and the shape's ``is_wild``."""
    shape = SHAPES[name]
    assert {card: rank_of(card) for card in CARDS} == player.RANK
    assert player.wild_cards(shape) == {card for card in CARDS if shape.is_wild(card)}
    assert player.wild_cards(shape) is player.wild_cards(shape)  # made once per shape


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


def _whole_search(hand: list[str], shape: MeldShape) -> list[tuple[tuple[str, ...], object]]:
    return sorted(((tuple(sorted(m.cards)), m) for m in candidate_melds(hand, shape)),
                  key=lambda found: found[0])


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(sorted(SHAPES)),
       hand=st.lists(st.sampled_from(CARDS), min_size=1, max_size=14),
       data=st.data())
def test_hand_melds_are_the_whole_search(name: str, hand: list[str],
                                         data: st.DataObject) -> None:
    """Turn after turn (a hand loses some cards, gains one to four), the melds found from
    the last hand's are those the whole search finds, read alike, in the order of their
    cards."""
    shape = SHAPES[name]
    melds = HandMelds(shape)
    for _turn in range(4):
        found = melds.of(hand)
        assert [(tuple(sorted(m.cards)), m) for m in found] == _whole_search(hand, shape)
        lost = data.draw(st.lists(st.sampled_from(hand), max_size=len(hand) - 1))
        for card in lost:
            if card in hand:
                hand.remove(card)
        hand = [*hand, *data.draw(st.lists(st.sampled_from(CARDS), min_size=1, max_size=4))]


def test_hand_melds_search_only_around_the_cards_gained(
        monkeypatch: pytest.MonkeyPatch) -> None:
    shape = SHAPES["rummy51"]
    melds = HandMelds(shape)
    melds.of(["5H", "6H", "7H", "KS", "KD", "2C"])
    searched: list[list[str]] = []

    def search(hand: list[str], shape: MeldShape) -> list[Meld]:
        searched.append(list(hand))
        return candidate_melds(hand, shape)

    monkeypatch.setattr(player, "candidate_melds", search)
    found = melds.of(["5H", "6H", "7H", "KS", "KD", "KC"])  # the 2C went, a KC came
    assert searched == [["KS", "KD", "KC"]]  # the kings only: no other card shares a meld
    assert sorted(tuple(sorted(m.cards)) for m in found) == [
        ("5H", "6H", "7H"), ("KC", "KD", "KS")]


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(sorted(SHAPES)),
       meld=st.sampled_from(["5H 6H 7H", "9S 9H 9D", "QC KC AC", "JK 4D 5D", "7S 7H JK"]),
       cards=st.lists(st.sampled_from(CARDS), min_size=1, max_size=6))
def test_a_table_meld_takes_what_fits(name: str, meld: str, cards: list[str]) -> None:
    """A table meld remembers, card by card, what laying it off there answers."""
    shape = SHAPES[name]
    try:
        read = check_meld([Piece(c) for c in meld.split()], shape)
    except MeldError:  # not a meld under these rules
        return
    target = TableMeld("m1", 0, read)
    for card in [*cards, *cards]:  # each card twice: asked, then remembered
        assert target.takes(card, shape) == (extended(read, card, shape) is not None)


def _plan_to_discard(hand_at_draw: list[str], hand: list[str], taken: str) -> GamePlan:
    """A basic rummy game whose seat 0 chose its draw with ``hand_at_draw`` while ``taken``
    topped the pile, took it, and now holds ``hand`` with only its discard left to make."""
    view: dict[str, Any] = {
        "rules": default_rules(VARIANTS["basic"]), "status": "playing", "hand_number": 1,
        "turn": {"seat": 0, "phase": "draw"}, "discard_only": False, "discard_top": taken,
        "seats": [{"opened": True}, {"opened": True}], "melds": [], "taken_discard": None}
    plan = GamePlan("g", "basic", ["t0", "t1"], view, Random(0))
    plan.seats[0].hand = list(hand_at_draw)
    plan.next_move()  # the draw, chosen with the hand it had then
    view.update(turn={"seat": 0, "phase": "play"}, discard_top=None, taken_discard=taken)
    plan.seats[0].hand = list(hand)
    plan.seats[0].stage = "lay_off"  # its melds are down: lay-offs (none fit), then discard
    return plan


def test_the_card_taken_goes_back_only_when_a_copy_was_held_before() -> None:
    """C-DISCARD-BACK as the engine reads it: the card taken from the pile may be discarded
    in the same turn only when the hand held a copy of it before the take, even if that
    copy has gone into a meld since. The taken 9S helps least of the hand."""
    hand = ["9S", "4D", "4H", "4C", "5D"]
    fresh = _plan_to_discard(["4D", "4H", "4C", "5D"], hand, "9S")
    assert fresh.next_move() == {"type": "discard", "card": "5D"}
    held = _plan_to_discard(["9S", "6S", "7S", "8S", "4D", "4H", "4C", "5D"], hand, "9S")
    assert held.next_move() == {"type": "discard", "card": "9S"}


@pytest.mark.parametrize("seed", range(6))
def test_the_player_plays_gin_to_the_end_of_its_match(seed: int) -> None:
    """Issue 46: the benchmark's mix plays gin; every move the player picks is legal, and
    its games end (knocks, gins, lay-outs and wall draws on the way)."""
    from service.rules import apply, move_from_dict, new_game, redact_event, seat_view

    state, _ = new_game("gin", ["a", "b"], {"match_end": {"deals": 3}}, None, None,
                        rng=Random(seed))
    plan = GamePlan("g", "gin", ["t0", "t1"], seat_view(state, "g", 0, 0), Random(seed))
    for seat in (0, 1):
        plan.saw(seat, seat_view(state, "g", 0, seat), [])
    kinds: Counter[str] = Counter()
    for version in range(1, 3000):
        if plan.finished:
            break
        seat = plan.to_move
        plan.saw(seat, seat_view(state, "g", version, seat), [])
        move = plan.next_move()
        kinds[move["type"]] += 1
        state, events = apply(state, seat, move_from_dict(move), Random(version))
        plan.saw(seat, seat_view(state, "g", version, seat),
                 [redact_event(e, seat) for e in events])
    assert plan.finished, kinds
    assert kinds["knock"] >= 1 and kinds["lay_out"] == kinds["knock"], kinds
