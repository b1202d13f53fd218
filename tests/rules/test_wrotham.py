"""Wrotham rummy (RULES.md WROTHAM) in the engine: rule tables citing the rule ids, and
random legal play (Hypothesis) keeping the invariants.

Games use arranged deals (the 55-card deck laid out by hand). The quick deal :data:`QUICK`
lets the starting player go out on the first turn (a run of 4 and a set of 3 down, the
eighth card discarded), which is how tests reach the late deals (WROTHAM-LATE).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from random import Random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.rules import (
    Code,
    GameState,
    MeldError,
    Rules,
    RulesError,
    apply,
    check_meld,
    new_game,
    public_view,
    redact_event,
)
from service.rules.cards import standard_deck
from service.rules.engine import SetupError, meld_shape
from service.rules.melds import Piece
from service.rules.moves import Discard, Draw, LayOff, Move, SwapJoker
from service.rules.ruleset import default_rules, resolve_rules
from service.rules.variants.wrotham import WROTHAM, is_late_deal
from tests.support import engine, hidden_cards
from tests.support.bot import choose_move, legal_discard
from tests.support.engine import melds, ok, refused, turn_moves
from tests.support.hidden_cards import card_strings

DECK = standard_deck(1, 3)
CODES = frozenset(DECK)

QUICK = ["3H", "4H", "5H", "6H", "9S", "9D", "9C", "KD"]
"""A starting hand that goes out at once: 3H-6H and 9S 9D 9C down, KD discarded."""
QUICK_RUN = ["3H", "4H", "5H", "6H", "7H", "8H", "9H", "KD"]
"""The same with one meld (3H-9H), for ``melds_per_turn: 1``."""
LOSER_1 = ["JK", "AS", "2S", "7C", "TD", "QC", "8S"]  # 15 + 1 + 2 + 7 + 10 + 10 + 8 = 53
LOSER_0 = ["AS", "2S", "7C", "TD", "QC", "8S", "4D"]  # 1 + 2 + 7 + 10 + 10 + 8 + 4 = 42


def arrange(hands: Sequence[Sequence[str]], stock_top: Sequence[str] = (), players: int = 2,
            starter: int = 0) -> dict[str, Any]:
    """A complete 55-card deal: the given hands, filled up to 8 (the starter) or 7 with
    leftover cards (jokers last), no upcard, the stock's top cards first."""
    pool = Counter(DECK)
    for card in [*(c for h in hands for c in h), *stock_top]:
        pool[card] -= 1
        assert pool[card] >= 0, f"{card} used too often"
    rest = sorted(pool.elements(), key=lambda c: (c == "JK", DECK.index(c)))
    full = []
    for seat in range(players):
        hand = list(hands[seat]) if seat < len(hands) else []
        while len(hand) < (8 if seat == starter else 7):
            hand.append(rest.pop(0))
        full.append(hand)
    return {"hands": full, "discard": [], "stock": [*stock_top, *rest]}


def quick_deal(starter: int, loser: Sequence[str],
               quick: Sequence[str] = QUICK) -> dict[str, Any]:
    hands: list[Sequence[str]] = [quick, loser] if starter == 0 else [loser, quick]
    return arrange(hands, starter=starter)


def game(deals: Sequence[dict[str, Any]], players: int = 2,
         rules: dict[str, Any] | None = None) -> GameState:
    """A Wrotham game with arranged deals; dealer ``players - 1``: seat 0 starts hand 1."""
    state, _ = new_game("wrotham", [f"p{i}" for i in range(players)], rules, players - 1,
                        list(deals), Random(0))
    return state


def go_out_quick(state: GameState) -> GameState:
    """The starting player of a quick deal goes out on the first turn."""
    if "7H" in state.hands[state.turn]:
        return ok(state, state.turn, melds("3H 4H 5H 6H 7H 8H 9H"), Discard("KD"))
    return ok(state, state.turn, melds("3H 4H 5H 6H", "9S 9D 9C"), Discard("KD"))


def late_game(deal4: dict[str, Any], rules: dict[str, Any] | None = None) -> GameState:
    """A two-player game at the start of deal 4 (seat 1 starts it), three quick deals
    played."""
    quick = QUICK_RUN if (rules or {}).get("melds_per_turn") == 1 else QUICK
    deals = [quick_deal(0, LOSER_1, quick), quick_deal(1, LOSER_0, quick),
             quick_deal(0, LOSER_1, quick), deal4]
    state = game(deals, rules=rules)
    for _ in range(3):
        state = go_out_quick(state)
    assert state.hand_number == 4 and state.turn == 1
    return state


# ---------------------------------------------------------------------------------------
# WROTHAM-DECK, WROTHAM-PLAYERS, WROTHAM-DEAL


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_deal_8_to_the_starter_7_to_the_others_no_upcard(players: int) -> None:
    state, events = new_game("wrotham", [f"p{i}" for i in range(players)], None, 0, None,
                             Random(5))
    starter = 1
    assert [len(h) for h in state.hands] == [8 if s == starter else 7 for s in range(players)]
    assert state.discard == [] and events[0]["upcard"] is None
    assert len(state.stock) == 55 - 7 * players - 1
    assert Counter(state.all_cards()) == Counter(DECK)
    assert (state.turn, state.phase) == (starter, "play")


@pytest.mark.parametrize("players", [1, 7])
def test_two_to_six_players(players: int) -> None:
    with pytest.raises(SetupError) as caught:
        new_game("wrotham", [f"p{i}" for i in range(players)])
    assert caught.value.field == "players"


def test_arranged_deal_needs_8_for_the_starter() -> None:
    deal = arrange([QUICK])
    deal["hands"][0], deal["hands"][1] = deal["hands"][1], deal["hands"][0]
    with pytest.raises(SetupError) as caught:
        game([deal])
    assert caught.value.field == "deals.0.hands.0"


def test_starter_does_not_draw_on_the_first_turn() -> None:
    """WROTHAM-DEAL: the starting player's first turn has no draw: (meld and) discard."""
    state = game([arrange([QUICK])])
    refused(state, 0, Draw("stock"), Code.WRONG_PHASE, "C-TURN")
    state = ok(state, 0, melds("3H 4H 5H 6H"), Discard("KD"))
    assert [len(h) for h in state.hands] == [3, 7]
    assert (state.turn, state.phase) == (1, "draw")
    state = ok(state, 1, Draw("discard"))
    assert state.hands[1][-1] == "KD"


def test_the_next_deal_passes_left() -> None:
    state = go_out_quick(game([quick_deal(0, LOSER_1)]))
    assert state.hand_number == 2 and state.dealer == 0
    assert (state.turn, state.phase) == (1, "play")
    assert [len(h) for h in state.hands] == [7, 8]


def test_default_rules_and_knobs() -> None:
    """WROTHAM-DECK (ace low), WROTHAM-SCORE (jokers 15), WROTHAM-LATE (six deals)."""
    assert default_rules(WROTHAM) == {
        "ace": "low", "melds_per_turn": "unlimited", "lay_off_requires_own_meld": False,
        "must_discard_to_go_out": False, "scoring": "winner_collects",
        "going_rummy": "double", "stock_exhausted": "shuffle", "max_stock_rebuilds": 3,
        "joker_penalty": 15, "match_end": {"deals": 6}, "clock": None}
    knobs = {k["name"]: k for k in WROTHAM.knob_list()}
    assert knobs["joker_penalty"]["rule"] == "WROTHAM-SCORE"
    assert knobs["match_end"]["values"] == ["deals"]
    assert knobs["ace"]["values"] == ["low", "high_or_low", "around"]


@pytest.mark.parametrize("overrides, knob", [
    pytest.param({"match_end": {"target": 150}}, "match_end", id="WROTHAM-LATE deals only"),
    pytest.param({"joker_penalty": -1}, "joker_penalty", id="WROTHAM-SCORE joker_penalty>=0"),
    pytest.param({"cut_ins": True}, "cut_ins", id="not a wrotham knob"),
    pytest.param({"opening_points": 30}, "opening_points", id="no opening in wrotham"),
])
def test_bad_knobs_are_refused(overrides: dict[str, Any], knob: str) -> None:
    with pytest.raises(RulesError) as caught:
        resolve_rules(WROTHAM, overrides)
    assert caught.value.knob == knob


# ---------------------------------------------------------------------------------------
# WROTHAM-DECK: melds


def shape(**rules: Any) -> Any:
    return meld_shape(WROTHAM, Rules.of(resolve_rules(WROTHAM, rules)))


@pytest.mark.parametrize("cards, rules, kind, idents", [
    pytest.param("9S 9H 9D", {}, "set", "9S 9H 9D", id="WROTHAM-DECK set of 3"),
    pytest.param("9S 9H 9D JK", {}, "set", "9S 9H 9D 9C", id="WROTHAM-DECK set of 4, wild"),
    pytest.param("9S 9H JK JK", {}, "set", "9S 9H 9* 9*", id="WROTHAM-DECK two jokers in a set"),
    pytest.param("9H JK JK", {}, "run", "9H TH JH", id="WROTHAM-DECK jokers: any number"),
    pytest.param("AH 2H 3H", {}, "run", "AH 2H 3H", id="WROTHAM-DECK ace low"),
    pytest.param("QH KH AH", {"ace": "high_or_low"}, "run", "QH KH AH",
                 id="C-RUN ace high_or_low knob"),
])
def test_valid_melds(cards: str, rules: dict[str, Any], kind: str, idents: str) -> None:
    meld = check_meld([Piece(c) for c in cards.split()], shape(**rules))
    assert (meld.kind, " ".join(meld.idents)) == (kind, idents)


@pytest.mark.parametrize("cards, rule", [
    pytest.param("9S 9H 9D 9C JK", "WROTHAM-DECK", id="WROTHAM-DECK sets of 3 or 4"),
    pytest.param("5H 6S 7H", "C-RUN", id="WROTHAM-DECK runs of one suit"),
    pytest.param("QH KH AH", "C-RUN", id="WROTHAM-DECK ace low by default"),
    pytest.param("JK JK JK", "C-MELD", id="WROTHAM-DECK at least one natural"),
])
def test_invalid_melds(cards: str, rule: str) -> None:
    with pytest.raises(MeldError) as caught:
        check_meld([Piece(c) for c in cards.split()], shape())
    assert rule in {r.rule for r in caught.value.reasons}


# ---------------------------------------------------------------------------------------
# WROTHAM-SWAP

SWAP_SETUPS: dict[str, tuple[list[str], list[str], list[str]]] = {
    # seat 0's melds in its first turn (it then discards QD), seat 1's hand
    "run": (["5H JK 7H", "9S 9D JK"], ["KC", "QD"], ["6H", "9H", "9C", "5S"]),
    "set4": (["9S 9D 9C JK"], ["KC", "QD", "3C", "4S"], ["6H", "9H", "5S"]),
    "set4x2": (["9S 9D JK JK"], ["KC", "QD", "3C", "4S"], ["9H", "9C", "5S"]),
}


def swap_state(setup: str, drawn: bool = True) -> GameState:
    texts, rest, seat1 = SWAP_SETUPS[setup]
    seat0 = [c for t in texts for c in t.split()] + rest
    state = game([arrange([seat0, seat1], stock_top=["2C"])])
    state = ok(state, 0, melds(*texts), Discard("QD"))
    return ok(state, 1, Draw("stock")) if drawn else state


@pytest.mark.parametrize("setup, move, meld, idents", [
    pytest.param("run", SwapJoker("m1", "6H"), "m1", ["5H", "6H", "7H"],
                 id="WROTHAM-SWAP a run's joker, by a player who has not opened"),
    pytest.param("set4", SwapJoker("m1", "9H"), "m1", ["9S", "9D", "9C", "9H"],
                 id="WROTHAM-SWAP a 4-card set's joker"),
    pytest.param("set4x2", SwapJoker("m1", "9H"), "m1", ["9S", "9D", "9H", "9C"],
                 id="WROTHAM-SWAP one of two jokers: the other takes the last suit"),
])
def test_joker_exchange(setup: str, move: SwapJoker, meld: str, idents: list[str]) -> None:
    state = swap_state(setup)
    assert not state.melded[1]
    jokers = state.hands[1].count("JK")
    state = ok(state, 1, move)
    assert state.hands[1].count("JK") == jokers + 1
    assert move.card not in state.hands[1]
    table = state.meld(meld)
    assert table is not None and table.idents == idents
    assert Counter(state.all_cards()) == Counter(DECK)
    # the joker may stay in hand: the turn ends with any discard, the joker included
    ok(state, 1, Discard("5S"))
    ok(state, 1, Discard("JK"))


@pytest.mark.parametrize("setup, seat, move, code, rule, drawn", [
    pytest.param("run", 1, SwapJoker("m2", "9H"), Code.SWAP_NOT_ALLOWED, "WROTHAM-SWAP", True,
                 id="WROTHAM-SWAP not from a 3-card set"),
    pytest.param("set4", 1, SwapJoker("m1", "5S"), Code.SWAP_NOT_ALLOWED, "WROTHAM-SWAP", True,
                 id="WROTHAM-SWAP only for the card it stands for"),
    pytest.param("run", 1, SwapJoker("m1", "6S"), Code.CARD_NOT_IN_HAND, "C-TURN", True,
                 id="WROTHAM-SWAP only with a card held"),
    pytest.param("run", 1, SwapJoker("m9", "6H"), Code.UNKNOWN_MELD, "WROTHAM-SWAP", True,
                 id="WROTHAM-SWAP an unknown meld"),
    pytest.param("run", 1, SwapJoker("m1", "JK"), Code.SWAP_NOT_ALLOWED, "WROTHAM-SWAP", True,
                 id="WROTHAM-SWAP not for a joker"),
    pytest.param("run", 1, SwapJoker("m1", "6H"), Code.WRONG_PHASE, "C-TURN", False,
                 id="WROTHAM-SWAP during the turn, after the draw"),
    pytest.param("run", 0, SwapJoker("m1", "6H"), Code.NOT_YOUR_TURN, "C-TURN", True,
                 id="WROTHAM-SWAP on one's own turn"),
])
def test_joker_exchange_refused(setup: str, seat: int, move: SwapJoker, code: Code, rule: str,
                                drawn: bool) -> None:
    refused(swap_state(setup, drawn), seat, move, code, rule)


def test_a_swap_that_would_leave_only_the_card_taken_from_the_pile_is_refused() -> None:
    """C-DISCARD-BACK after WROTHAM-SWAP: seat 1 takes seat 0's discarded joker, melds it,
    and holds 6H, the card m1's joker stands for. The swap would leave it holding only a
    joker, which it may not discard (a joker was just taken from the pile) nor lay off (it
    must keep a card to discard): a turn that could not end, so the swap is refused and
    the turn ends with 6H. (Random play found the swap taken and the seat with no legal
    move left.)"""
    deal = arrange([["5H", "JK", "7H", "9S", "9D", "9C", "JK", "KD"],
                    ["6H", "2C", "3C", "TS", "JS", "QS", "KS"]])
    state = game([deal], rules={"must_discard_to_go_out": True})
    state = ok(state, 0, melds("5H JK 7H", "9S 9D 9C"), Discard("JK"))
    state = ok(state, 1, Draw("discard"), melds("2C 3C JK", "TS JS QS KS"))
    assert state.hands[1] == ["6H"]
    refused(state, 1, SwapJoker("m1", "6H"), Code.DISCARD_TAKEN_CARD, "C-DISCARD-BACK")
    assert turn_moves(state, 1) == [{"type": "discard", "card": "6H"}]
    state = ok(state, 1, Discard("6H"))
    assert state.hand_number == 2


def test_no_joker_in_the_meld() -> None:
    state = game([arrange([["3H", "4H", "5H", "KC", "QD"], ["6H"]], stock_top=["2C"])])
    state = ok(state, 0, melds("3H 4H 5H"), Discard("QD"))
    state = ok(state, 1, Draw("stock"))
    refused(state, 1, SwapJoker("m1", "6H"), Code.SWAP_NOT_ALLOWED, "WROTHAM-SWAP")


# ---------------------------------------------------------------------------------------
# WROTHAM-LATE

LATE4 = ["3H", "4H", "5H", "6H", "9S", "9D", "9C", "9H"]


def test_late_deals_are_the_last_three() -> None:
    state = game([quick_deal(0, LOSER_1)])
    rules = Rules.of(state.rules)
    late = [is_late_deal(replace(state, hand_number=k), rules) for k in range(1, 7)]
    assert late == [False, False, False, True, True, True]


@pytest.mark.parametrize("move, code", [
    pytest.param(melds("3H 4H 5H 6H"), Code.MUST_MELD_ALL_AT_ONCE,
                 id="WROTHAM-LATE no meld until all seven go down at once"),
    pytest.param(melds("3H 4H 5H 6H", "9S 9D 9C 9H"), Code.MUST_DISCARD_TO_GO_OUT,
                 id="WROTHAM-LATE out with a discard of the eighth"),
])
def test_late_deal_refusals(move: Move, code: Code) -> None:
    state = late_game(arrange([[], LATE4], starter=1))
    refused(state, 1, move, code, "WROTHAM-LATE")


def test_early_deal_allows_a_partial_meld() -> None:
    """WROTHAM-LATE: deals 1–3 as basic rummy."""
    state = game([arrange([LATE4])])
    state = ok(state, 0, melds("3H 4H 5H 6H"), Discard("9H"))
    assert len(state.melds) == 1


@pytest.mark.parametrize("rules", [
    pytest.param({}, id="WROTHAM-LATE all at once wins"),
    pytest.param({"melds_per_turn": 1}, id="WROTHAM-LATE melds_per_turn does not split it"),
])
def test_late_deal_won_all_at_once(rules: dict[str, Any]) -> None:
    state = late_game(arrange([[], LATE4], starter=1), rules)
    state = ok(state, 1, melds("3H 4H 5H 6H", "9S 9D 9C"))
    state, events = apply(state, 1, Discard("9H"), Random(0))
    end = next(e for e in events if e["type"] == "hand_end")
    assert end["went_out"] == 1 and end["going_rummy"] is True
    assert state.history[3]["counts"][1] == 0
    assert end["scores"][1] == 2 * end["counts"][0]


def test_late_deal_non_starter_draws_then_goes_down() -> None:
    deal = arrange([["3H", "4H", "5H", "9S", "9D", "9C", "KC"]], stock_top=["6H"], starter=1)
    state = late_game(deal)
    state = ok(state, 1, Discard(state.hands[1][0]))
    state = ok(state, 0, Draw("stock"))
    refused(state, 0, melds("3H 4H 5H 6H"), Code.MUST_MELD_ALL_AT_ONCE, "WROTHAM-LATE")
    state = ok(state, 0, melds("3H 4H 5H 6H", "9S 9D 9C"), Discard("KC"))
    assert state.history[3]["went_out"] == 0 and state.history[3]["going_rummy"]


# ---------------------------------------------------------------------------------------
# WROTHAM-SCORE


def test_not_all_at_once_is_plain_basic_score() -> None:
    """BASIC-SCORE without BASIC-RUMMY: the winner had put cards down before."""
    seat0 = ["3H", "4H", "5H", "9S", "9D", "9C", "KD", "QH"]
    state = game([arrange([seat0, LOSER_1], stock_top=["8D", "6H"])])
    state = ok(state, 0, melds("3H 4H 5H"), Discard("QH"))
    state = ok(state, 1, Draw("stock"), Discard("8D"))
    state = ok(state, 0, Draw("stock"), melds("9S 9D 9C"), LayOff("m1", (Piece("6H"),)),
               Discard("KD"))
    assert state.history[0]["going_rummy"] is False
    assert state.history[0]["scores"] == [53, 0]


SIX_DEALS = [quick_deal(k % 2, LOSER_1 if k % 2 == 0 else LOSER_0) for k in range(6)]


@pytest.mark.parametrize("rules, totals, winners", [
    pytest.param({}, [318, 252], [0], id="WROTHAM-SCORE winner_collects, rummy doubles"),
    pytest.param({"scoring": "penalty"}, [252, 318], [0],
                 id="WROTHAM-SCORE penalty: lowest total wins"),
    pytest.param({"going_rummy": "bonus10"}, [189, 156], [0], id="BASIC-RUMMY bonus10"),
    pytest.param({"going_rummy": "off"}, [159, 126], [0], id="BASIC-RUMMY off"),
    pytest.param({"joker_penalty": 25}, [378, 252], [0], id="WROTHAM-SCORE joker_penalty"),
    pytest.param({"ace": "high_or_low"}, [402, 336], [0], id="BASIC-SCORE ace 15 when high"),
    pytest.param({"scoring": "penalty", "joker_penalty": 0}, [252, 228], [1],
                 id="WROTHAM-SCORE penalty with jokers at 0"),
])
def test_six_deals(rules: dict[str, Any], totals: list[int], winners: list[int]) -> None:
    state = game(SIX_DEALS, rules=rules)
    for deal in range(6):
        assert state.status == "playing" and state.hand_number == deal + 1
        assert is_late_deal(state, Rules.of(state.rules)) == (deal >= 3)
        state = go_out_quick(state)
    assert state.status == "finished"
    assert state.totals == totals and state.winners == winners
    refused(state, 0, Draw("stock"), Code.GAME_FINISHED, "BASIC-END")
    assert all(h["going_rummy"] for h in state.history) == (rules.get("going_rummy") != "off")


# ---------------------------------------------------------------------------------------
# Random legal play (Hypothesis)


def check_views(state: GameState, version: int) -> None:
    """C-DECK conservation (55 cards), views that show no hidden card, and no Dummy facts
    in Wrotham's public view."""
    hidden_cards.check_views(state, version, DECK)
    view = public_view(state, "g", version)
    assert "cut_in" not in view and all("contract" not in s for s in view["seats"])


def check_events(events: list[dict[str, Any]], n: int) -> None:
    for event in events:
        private = event.get("private", {})
        assert set(private) <= {str(s) for s in range(n)}
        for viewer in [None, *range(n)]:
            shown = redact_event(event, viewer)
            secret = {c for k, v in private.items() if k != str(viewer)
                      for c in card_strings(v)} - {"JK"}
            assert not set(card_strings(shown)) & secret


def probe(state: GameState, rng: Random) -> tuple[int, Move]:
    """A move that is usually illegal."""
    seat = rng.randrange(state.players_count)
    hand = state.hands[seat]
    choice = rng.randrange(5)
    if choice == 0:
        return seat, Draw(rng.choice(["stock", "discard"]))
    if choice == 1 and len(hand) >= 3:
        return seat, melds(" ".join(rng.sample(hand, 3)))
    if choice == 2 and state.melds:
        return seat, LayOff(rng.choice(state.melds).id, (Piece(rng.choice(hand)),))
    if choice == 3 and state.melds:
        return seat, SwapJoker(rng.choice(state.melds).id, rng.choice(hand))
    return seat, Discard(rng.choice(hand))


attempt = partial(engine.attempt, rules=("C-", "WROTHAM-", "BASIC-"))


WROTHAM_KNOBS = st.fixed_dictionaries({
    "match_end": st.integers(1, 4).map(lambda n: {"deals": n}),
}, optional={
    "ace": st.sampled_from(["low", "high_or_low", "around"]),
    "melds_per_turn": st.sampled_from(["unlimited", 1]),
    "lay_off_requires_own_meld": st.booleans(),
    "must_discard_to_go_out": st.booleans(),
    "scoring": st.sampled_from(["winner_collects", "penalty"]),
    "going_rummy": st.sampled_from(["double", "bonus10", "off"]),
    "stock_exhausted": st.sampled_from(["turn_over", "shuffle", "end_hand"]),
    "max_stock_rebuilds": st.sampled_from([0, 1, 3]),
    "joker_penalty": st.integers(0, 50),
})


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.integers(2, 6), knobs=WROTHAM_KNOBS, seed=st.integers(0, 2**32 - 1))
def test_random_legal_play_keeps_the_invariants(players: int, knobs: dict[str, Any],
                                                seed: int) -> None:
    rng = Random(seed)
    state, events = new_game("wrotham", [f"p{i}" for i in range(players)], knobs, None, None,
                             rng)
    check_views(state, 0)
    check_events(events, players)
    version = 0
    while state.status == "playing" and version < 500:
        seat, move = probe(state, rng)
        new, events = attempt(state, seat, move, Random(0))
        if new is not None:
            check_views(new, version + 1)
            check_events(events, players)
        seat = state.turn
        new, events = attempt(state, seat, choose_move(state, seat, rng), rng)
        if new is None:
            fallback = Draw("stock") if state.phase == "draw" else legal_discard(state, seat)
            new, events = attempt(state, seat, fallback, rng)
        assert new is not None
        state, version = new, version + 1
        check_views(state, version)
        check_events(events, players)
        if state.status == "playing" and is_late_deal(state, Rules.of(state.rules)) \
                and state.melds:  # WROTHAM-LATE: only the all-at-once action, then out
            assert state.phase == "play" and len(state.hands[state.turn]) == 1
            assert {m.owner for m in state.melds} == {state.turn}
    if state.status == "finished":
        assert len(state.history) == knobs["match_end"]["deals"]
        best = (min if state.rules["scoring"] == "penalty" else max)(state.totals)
        assert state.winners == [i for i, t in enumerate(state.totals) if t == best]
