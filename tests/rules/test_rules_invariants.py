"""Invariants of random basic games played by the test bot (tests/support/bot.py).

For random player counts and knob combinations, after every move:

* C-DECK: the 52 cards are conserved (stock + discard + hands + melds is the deck);
* a refused move leaves the state unchanged, and so does an applied one (a new state is
  returned);
* the public view shows no card that is in a hand or in the stock; a seat view shows that
  seat's hand and no card of another hand or of the stock;
* ``redact_event`` never shows a viewer another seat's drawn or dealt cards;
* the totals are the sums of the hand scores (BASIC-SCORE, BASIC-BLOCK).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from random import Random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.rules import (
    GameState,
    new_game,
    public_view,
    redact_event,
    seat_view,
)
from service.rules.cards import standard_deck
from service.rules.melds import Piece
from service.rules.moves import Discard, Draw, LayOff, MeldMove, Move
from tests.support.bot import choose_move
from tests.support.engine import attempt

DECK = standard_deck()
CARD_CODES = frozenset(DECK) | {"JK"}
MAX_MOVES = 220

KNOBS = st.fixed_dictionaries({}, optional={
    "ace": st.sampled_from(["low", "high_or_low", "around"]),
    "melds_per_turn": st.sampled_from(["unlimited", 1, 2]),
    "lay_off_requires_own_meld": st.booleans(),
    "must_discard_to_go_out": st.booleans(),
    "scoring": st.sampled_from(["winner_collects", "penalty"]),
    "going_rummy": st.sampled_from(["double", "bonus10", "off"]),
    "stock_exhausted": st.sampled_from(["turn_over", "shuffle", "end_hand"]),
    "max_stock_rebuilds": st.sampled_from([None, 0, 1, 3]),
    "match_end": st.one_of(st.integers(1, 3).map(lambda n: {"deals": n}),
                           st.integers(5, 120).map(lambda n: {"target": n})),
})


def strings(value: Any) -> Iterator[str]:
    """Every string anywhere in a JSON-like value (keys included)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from strings(v)


def cards_in(value: Any) -> set[str]:
    return {s for s in strings(value) if s in CARD_CODES}


def all_cards(state: GameState) -> Counter[str]:
    cards = Counter(state.stock) + Counter(state.discard)
    for hand in state.hands:
        cards += Counter(hand)
    for meld in state.melds:
        cards += Counter(meld.cards)
    return cards


def check_state(state: GameState, version: int) -> None:
    # C-DECK: conservation
    assert all_cards(state) == Counter(DECK)
    # totals are the sums of the hand scores
    n = state.players_count
    sums = [sum(h["scores"][i] for h in state.history) for i in range(n)]
    assert state.totals == sums
    for record in state.history:
        assert len(record["scores"]) == len(record["counts"]) == n
    # views
    hidden = set(state.stock).union(*map(set, state.hands))
    public = public_view(state, "g", version)
    assert "hand" not in public and "hands" not in public and "stock" not in public
    assert not cards_in(public) & hidden, "the public view shows a hidden card"
    assert public["discard_top"] == (state.discard[-1] if state.discard else None)
    assert public["stock_count"] == len(state.stock)
    assert [m["cards"] for m in public["melds"]] == [m.cards for m in state.melds]
    assert [s["hand_count"] for s in public["seats"]] == [len(h) for h in state.hands]
    for seat in range(n):
        view = seat_view(state, "g", version, seat)
        assert Counter(view["hand"]) == Counter(state.hands[seat])
        others = set(state.stock).union(*(set(h) for i, h in enumerate(state.hands)
                                          if i != seat))
        assert not cards_in(view) & others, f"seat {seat}'s view shows another's card"


def check_events(events: list[dict[str, Any]], n: int) -> None:
    for event in events:
        private = event.get("private", {})
        assert set(private) <= {str(s) for s in range(n)}
        for viewer in [None, *range(n)]:
            shown = redact_event(event, viewer)
            assert "private" not in shown
            secret = cards_in([v for k, v in private.items() if k != str(viewer)])
            assert not cards_in(shown) & secret, (
                f"{event['type']} shows viewer {viewer} another seat's cards")
            if viewer is not None and str(viewer) in private:
                for key, value in private[str(viewer)].items():
                    assert shown[key] == value
        if event["type"] == "dealt":
            assert set(private) == {str(s) for s in range(n)}
        if event["type"] == "draw" and event["source"] == "stock":
            assert set(private) == {str(event["seat"])}
            assert "card" not in redact_event(event, None)


def probe(state: GameState, rng: Random) -> Move:
    """A move that is usually illegal: out of turn, wrong phase, a card not held…"""
    hand = state.hands[state.turn]
    not_held = [c for c in DECK if c not in hand]
    choice = rng.randrange(6)
    if choice == 0:
        return Draw(rng.choice(["stock", "discard"]))
    if choice == 1:
        return Discard(rng.choice(not_held))
    if choice == 2:
        return MeldMove((tuple(Piece(c) for c in rng.sample(hand, min(3, len(hand)))),))
    if choice == 3 and state.melds:
        return LayOff(rng.choice(state.melds).id, (Piece(rng.choice(hand)),),
                      rng.choice([None, "low", "high"]))
    if choice == 4:
        return Discard(rng.choice(hand))
    return MeldMove(((Piece(rng.choice(not_held)), Piece(hand[0]), Piece(hand[-1])),))


def fallback(state: GameState, seat: int) -> Move:
    if state.phase == "draw":
        return Draw("stock")
    hand = state.hands[seat]
    return Discard(next((c for c in hand if c != state.taken), hand[0]))


@pytest.mark.random_run
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.integers(2, 6), knobs=KNOBS, seed=st.integers(0, 2**32 - 1))
def test_random_games_keep_the_invariants(players: int, knobs: dict[str, Any],
                                          seed: int) -> None:
    rng = Random(seed)
    state, events = new_game("basic", [f"p{i}" for i in range(players)], knobs, None, None,
                             rng)
    version = 0
    check_state(state, version)
    check_events(events, players)
    refused = applied = 0
    while state.status == "playing" and version < MAX_MOVES:
        # a probe (usually refused): out of turn or a random move of the seat to play
        other = rng.randrange(players)
        new, events = attempt(state, other, probe(state, rng), Random(0))
        if new is None:
            refused += 1
        else:
            check_state(new, version + 1)
            check_events(events, players)
        # the bot's move, or a plain draw / discard if the engine refuses it
        seat = state.turn
        new, events = attempt(state, seat, choose_move(state, seat, rng), rng)
        if new is None:
            new, events = attempt(state, seat, fallback(state, seat), rng)
        assert new is not None
        state = new
        version += 1
        applied += 1
        check_state(state, version)
        check_events(events, players)
    assert applied > 0
    assert refused > 0
    if state.status == "finished":
        assert state.winners
        assert all(0 <= w < players for w in state.winners)
