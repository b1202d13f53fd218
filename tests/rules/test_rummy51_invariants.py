"""Invariants of random Rummy 51 and Lebanese 14 games played by the test bot
(tests/support/bot.py).

For both presets, random player counts and random knob combinations, after every move:

* C-DECK: the 108 cards are conserved (stock + discard pile + hands + melds);
* a move leaves its input state unchanged, applied or refused (``to_dict()``), and a
  refused move raises :class:`Violation` only — no other exception, ever;
* the new state reads back whole from the form the store keeps (``to_compact``, JSON),
  its melds' wilds included;
* the public view shows exactly the cards on the table and the top discard (so never a
  card that is in a hand or the stock); a seat view adds exactly that seat's hand;
* ``redact_event`` never shows a viewer another seat's drawn, dealt or penalty cards;
* totals are the sums of the hand scores; ``opened`` is shown per seat.
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
    Piece,
    new_game,
    public_view,
    redact_event,
    seat_view,
)
from service.rules.cards import JOKER, standard_deck
from service.rules.legal import compound_action
from service.rules.moves import (
    Discard,
    Draw,
    LayOff,
    MeldMove,
    Move,
    SwapJoker,
    Take,
    TakeFromMeld,
    move_from_dict,
)
from service.rules.search import candidate_melds
from tests.support.bot import choose_move, legal_discard
from tests.support.engine import attempt

DECK = standard_deck(2, 4)
CODES = frozenset(DECK)
MAX_MOVES = 300

KNOBS = st.fixed_dictionaries({}, optional={
    "ace": st.sampled_from(["low", "high_or_low"]),
    "opening_points": st.sampled_from([0, 30, 51, 71, 81]),
    "opening_requires_clean_run": st.booleans(),
    "opening_counts_lay_offs": st.booleans(),
    "max_wilds_per_meld": st.sampled_from([1, 2, None]),
    "joker_swap_from_set": st.sampled_from(["four_only", "never", "any"]),
    "allow_take_from_meld": st.booleans(),
    "last_card_call": st.sampled_from(["required", "auto"]),
    "must_discard_to_go_out": st.booleans(),
    "joker_penalty": st.sampled_from([0, 20, 50]),
    "stock_exhausted": st.sampled_from(["turn_over", "shuffle", "end_hand"]),
    "max_stock_rebuilds": st.sampled_from([None, 0, 1, 3]),
    "match_end": st.one_of(st.integers(1, 3).map(lambda n: {"deals": n}),
                           st.integers(50, 400).map(lambda n: {"target": n}),
                           st.integers(100, 300).map(lambda n: {"eliminate_at": n})),
})


def strings(value: Any, skip: frozenset[str] = frozenset()) -> Iterator[str]:
    """Every string anywhere in a JSON-like value (keys included), except under ``skip``."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            if k in skip:
                continue
            yield from strings(k, skip)
            yield from strings(v, skip)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from strings(v, skip)


def cards_in(value: Any, skip: frozenset[str] = frozenset()) -> Counter[str]:
    return Counter(s for s in strings(value, skip) if s in CODES)


NOT_CARDS = frozenset({"wilds"})  # a meld's wilds repeat its cards and name identities


def check_state(state: GameState, version: int) -> None:
    # C-DECK
    assert Counter(state.all_cards()) == Counter(DECK)
    n = state.players_count
    # totals are the sums of the hand scores
    sums = [sum(h["scores"][i] for h in state.history) for i in range(n)]
    assert state.totals == sums
    # the public view: the table and the top discard, nothing else
    public = public_view(state, "g", version)
    assert "hand" not in public and "hands" not in public and "stock" not in public
    table = Counter(c for m in state.melds for c in m.cards)
    top = Counter(state.discard[-1:])
    assert cards_in(public, NOT_CARDS) == table + top, "the public view shows a hidden card"
    for meld, shown in zip(state.melds, public["melds"], strict=True):
        assert shown["cards"] == meld.cards
        assert shown["wilds"] == [{"index": i, "card": c, "as": ident} for i, (c, ident)
                                  in enumerate(zip(meld.cards, meld.idents, strict=True))
                                  if c != ident]
        assert all(w["card"] == JOKER for w in shown["wilds"])
    assert public["stock_count"] == len(state.stock)
    assert [s["hand_count"] for s in public["seats"]] == [len(h) for h in state.hands]
    assert [s["opened"] for s in public["seats"]] == state.melded
    assert public["discard_only"] == (state.status == "playing" and state.discard_only)
    for seat in range(n):
        view = seat_view(state, "g", version, seat)
        assert Counter(view["hand"]) == Counter(state.hands[seat])
        own = Counter(state.hands[seat]) + Counter(
            [view["taken_discard"]] if view.get("taken_discard") else [])
        assert cards_in(view, NOT_CARDS) == table + top + own, (
            f"seat {seat}'s view shows another's card")


def check_events(events: list[dict[str, Any]], state: GameState, seat: int) -> None:
    n = state.players_count
    for event in events:
        private = event.get("private", {})
        assert set(private) <= {str(s) for s in range(n)}
        open_part = {k: v for k, v in event.items() if k != "private"}
        for viewer in [None, *range(n)]:
            shown = redact_event(event, viewer)
            assert "private" not in shown
            mine = private.get(str(viewer), {}) if viewer is not None else {}
            allowed = cards_in(open_part) + cards_in(mine)
            assert not cards_in(shown) - allowed, (
                f"{event['type']} shows viewer {viewer} another seat's cards")
        kind = event["type"]
        if kind == "draw" and event["source"] == "stock":
            assert set(private) == {str(event["seat"])}
            assert not cards_in(open_part)
        if kind == "penalty":
            assert set(private) == {str(event["seat"])}
            assert not cards_in(open_part)
            assert event["rule"] == "R51-LAST"
        if kind == "dealt":
            assert not cards_in(open_part)
            assert event["upcard"] is None  # R51-DEAL: no upcard
            assert {int(s) for s in private} >= {
                s for s in range(n) if not state.out_of_match[s]}
    del seat


def probe(state: GameState, rng: Random) -> tuple[int, Move]:
    """A move that is usually illegal: out of turn, wrong phase, a card not held, a swap,
    a take from a meld, a second joker…"""
    seat = state.turn if rng.random() < 0.8 else rng.randrange(state.players_count)
    hand = state.hands[seat] or ["AS"]
    not_held = [c for c in DECK if c not in hand]
    melds = state.melds
    choice = rng.randrange(9)
    if choice == 0:
        return seat, Draw(rng.choice(["stock", "discard"]))
    if choice == 1:
        return seat, Discard(rng.choice(not_held))
    if choice == 2:
        return seat, MeldMove((tuple(Piece(c) for c in rng.sample(hand, min(3, len(hand)))),))
    if choice == 3 and melds:
        return seat, LayOff(rng.choice(melds).id, (Piece(rng.choice(hand)),),
                            rng.choice([None, "low", "high"]))
    if choice == 4:
        return seat, Discard(rng.choice(hand))
    if choice == 5 and melds:
        meld = rng.choice(melds)
        return seat, SwapJoker(meld.id, rng.choice([*meld.idents, *hand]))
    if choice == 6 and melds:
        meld = rng.choice(melds)
        card = rng.choice(meld.cards)
        return seat, TakeFromMeld((Take(meld.id, card),),
                                  ((Piece(card), *(Piece(c) for c in hand[:2])),))
    if choice == 7 and melds:
        return seat, LayOff(rng.choice(melds).id, (Piece(JOKER),))
    return seat, MeldMove(((Piece(rng.choice(not_held)), Piece(hand[0]), Piece(hand[-1])),))


def rescue_moves(state: GameState, seat: int) -> Iterator[Move]:
    """Every lay-off of one card and every meld the hand can make: the way out of a turn
    whose obligation the bot did not see (the engine promises a turn can always end)."""
    hand = state.hands[seat]
    compound = compound_action(state, seat)
    if compound is not None and compound["example"] is not None:
        yield move_from_dict(compound["example"])
    for meld in state.melds:
        for card in sorted(set(hand)):
            yield LayOff(meld.id, (Piece(card),))
    shape_melds = candidate_melds(hand, _shape(state))
    for meld in sorted(shape_melds, key=lambda m: -m.points):
        yield MeldMove((tuple(Piece(c) for c in meld.cards),))


def _shape(state: GameState) -> Any:
    from service.rules.engine import shape_of

    return shape_of(state)


def next_move(state: GameState, rng: Random) -> tuple[GameState, list[dict[str, Any]], int]:
    """The bot's move, or a plain draw / discard, or a rescue: never stuck."""
    seat = state.turn
    new, events = attempt(state, seat, choose_move(state, seat, rng), rng)
    if new is None:
        fallback = Draw("stock") if state.phase == "draw" else legal_discard(state, seat)
        new, events = attempt(state, seat, fallback, rng)
    if new is None:
        for move in rescue_moves(state, seat):
            new, events = attempt(state, seat, move, rng)
            if new is not None:
                break
    assert new is not None, (f"seat {seat} has no legal move: phase {state.phase}, hand "
                             f"{state.hands[seat]}, taken {state.taken}")
    return new, events, seat


@pytest.mark.random_run
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variant=st.sampled_from(["rummy51", "lebanese14"]), players=st.integers(2, 5),
       knobs=KNOBS, seed=st.integers(0, 2**32 - 1))
def test_random_games_keep_the_invariants(variant: str, players: int, knobs: dict[str, Any],
                                          seed: int) -> None:
    rng = Random(seed)
    state, events = new_game(variant, [f"p{i}" for i in range(players)], knobs, None, None,
                             rng)
    version = 0
    check_state(state, version)
    check_events(events, state, state.turn)
    refused = 0
    while state.status == "playing" and version < MAX_MOVES:
        seat, move = probe(state, rng)
        new, events = attempt(state, seat, move, Random(0))
        if new is None:
            refused += 1
        else:
            check_state(new, version + 1)
            check_events(events, new, seat)
            if rng.random() < 0.5:  # play on from a legal probe (a swap, a take…)
                state, version = new, version + 1
                continue
        state, events, seat = next_move(state, rng)
        version += 1
        check_state(state, version)
        check_events(events, state, seat)
    assert refused > 0
    if state.status == "finished":
        assert state.winners
        assert all(0 <= w < players for w in state.winners)
        assert all(not state.out_of_match[w] for w in state.winners) or all(
            state.out_of_match)
