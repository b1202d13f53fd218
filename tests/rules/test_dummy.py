"""Dummy rummy (RULES.md DUMMY) in the engine: rule tables citing the rule ids, and random
legal play (Hypothesis) keeping the invariants.

Games use arranged deals (the 108-card deck laid out by hand) so that every move's result
is known; a seat is put on a later contract by setting ``dummy_state(state).contract``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
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
from service.rules.moves import CutIn, Discard, Draw, LayOff, MeldMove, Move
from service.rules.ruleset import default_rules, resolve_rules
from service.rules.search import candidate_melds
from service.rules.variants.dummy import (
    CONTRACTS,
    DUMMY,
    dummy_count,
    dummy_state,
    fit_contract,
)
from tests.support import engine, hidden_cards
from tests.support.bot import choose_move, legal_discard, maybe_cut_in
from tests.support.dummy_game import DECK, game
from tests.support.engine import melds, ok, refused


def lay(meld_id: str, text: str) -> LayOff:
    return LayOff(meld_id, tuple(Piece(c) for c in text.split()))


def events_of(state: GameState, seat: int, move: Move) -> tuple[GameState, list[Any]]:
    return apply(state, seat, move, Random(0))


# ---------------------------------------------------------------------------------------
# Scenario S1 (two players, seat 0 starts). Seat 0 lays down contract 1 in its first turn
# (7s and Ks), discards 4D, and goes out in its second turn by laying off everything but
# the 5C it drew, then discarding it. Seat 1 either only draws and discards (S1: it fails
# its contract) or lays down its own two sets (S1b).

S1_SEAT0 = ["7H", "7S", "7D", "KC", "KD", "KS", "4D", "7C", "7C", "KH", "KH", "JK", "2S"]
S1_SEAT1 = ["3S", "4S", "5S", "6H", "8H", "9H", "TS", "JS", "QS", "AC", "AD", "3D", "3H"]
S1B_SEAT1 = ["5S", "5H", "5D", "9S", "9H", "3S", "4S", "6H", "8H", "TS", "JS", "QS", "AC"]
S1_STOCK = ["2H", "9D", "5C"]
S1_SEAT1_COUNT = 8 * 5 + 3 * 10 + 2 * 15  # 100
S1B_SEAT1_COUNT = 3 * 5 + 3 * 10 + 15  # 4S 6H 8H, TS JS QS, AC: 60


def s1(seat1: list[str] = S1_SEAT1, stock: Sequence[str] = S1_STOCK, **kw: Any) -> GameState:
    return game([S1_SEAT0, seat1], "QH", stock, **kw)


def s1_contract_down(**kw: Any) -> GameState:
    """S1 after seat 0's draw and contract (hand: 4D 7C 7C KH KH JK 2S 2H)."""
    return ok(s1(**kw), 0, Draw("stock"), melds("7H 7S 7D", "KC KD KS"))


def s1_second_turn(seat1_makes: bool = False, **kw: Any) -> GameState:
    """S1 at seat 0's second turn, drawn: 7C 7C KH KH JK 2S 2H 5C in hand."""
    state = s1_contract_down(seat1=S1B_SEAT1 if seat1_makes else S1_SEAT1, **kw)
    state = ok(state, 0, Discard("4D"))
    if seat1_makes:
        state = ok(state, 1, Draw("stock"), melds("5S 5H 5D", "9S 9H 9D"), Discard("3S"))
    else:
        state = ok(state, 1, Draw("stock"), Discard("9D"))
    return ok(state, 0, Draw("stock"))


# ---------------------------------------------------------------------------------------
# DUMMY-PLAYERS, DUMMY-DEAL


@pytest.mark.parametrize("players", [2, 3, 4])
def test_deal_13_each_upcard_left_of_dealer_starts(players: int) -> None:
    """DUMMY-PLAYERS: 108 cards, 13 each, an upcard, the dealer's left starts."""
    state, events = new_game("dummy", [f"p{i}" for i in range(players)], None, 1, None,
                             Random(3))
    assert [len(h) for h in state.hands] == [13] * players
    assert len(state.discard) == 1
    assert len(state.stock) == 108 - 13 * players - 1
    assert state.turn == 2 % players and state.phase == "draw"
    assert Counter(state.all_cards()) == Counter(DECK)
    assert dummy_state(state).contract == [1] * players
    assert events[0]["upcard"] == state.discard[-1]


@pytest.mark.parametrize("players", [1, 5])
def test_two_to_four_players(players: int) -> None:
    """DUMMY-PLAYERS: 2 to 4 players."""
    with pytest.raises(SetupError) as caught:
        new_game("dummy", [f"p{i}" for i in range(players)])
    assert caught.value.field == "players"


def test_default_rules_and_knobs() -> None:
    """DUMMY-RUN, DUMMY-DISCARD, DUMMY-CUTIN, DUMMY-STOCK, DUMMY-END defaults."""
    assert default_rules(DUMMY) == {
        "run_same_suit": False, "playable_discard": "forbid", "cut_ins": False,
        "stock_exhausted": "shuffle", "max_stock_rebuilds": 3, "match_end": {"contracts": 12},
        "clock": None}
    knobs = {k["name"]: k for k in DUMMY.knob_list()}
    assert knobs["run_same_suit"]["rule"] == "DUMMY-RUN"
    assert knobs["playable_discard"]["values"] == ["forbid", "allow"]
    assert knobs["cut_ins"]["rule"] == "DUMMY-CUTIN"
    assert knobs["match_end"]["rule"] == "DUMMY-END"
    assert knobs["match_end"]["values"] == ["contracts", "deals"]


@pytest.mark.parametrize("overrides, knob", [
    pytest.param({"match_end": {"contracts": 13}}, "match_end", id="DUMMY-END contracts<=12"),
    pytest.param({"match_end": {"target": 100}}, "match_end", id="DUMMY-END no target"),
    pytest.param({"playable_discard": "sometimes"}, "playable_discard", id="DUMMY-DISCARD"),
    pytest.param({"cut_ins": "yes"}, "cut_ins", id="DUMMY-CUTIN bool"),
    pytest.param({"ace": "low"}, "ace", id="DUMMY-RUN ace is not a knob"),
    pytest.param({"opening_points": 51}, "opening_points", id="not a dummy knob"),
])
def test_bad_knobs_are_refused(overrides: dict[str, Any], knob: str) -> None:
    with pytest.raises(RulesError) as caught:
        resolve_rules(DUMMY, overrides)
    assert caught.value.knob == knob


def test_good_knob_values() -> None:
    assert resolve_rules(DUMMY, {"match_end": {"deals": 12}, "cut_ins": True,
                                 "run_same_suit": True})["match_end"] == {"deals": 12}
    assert resolve_rules(DUMMY, {"match_end": {"contracts": 3}})["match_end"] == {
        "contracts": 3}


# ---------------------------------------------------------------------------------------
# DUMMY-SET, DUMMY-RUN, DUMMY-WILDS: the engine's meld shape


def shape(**rules: Any) -> Any:
    return meld_shape(DUMMY, Rules.of(resolve_rules(DUMMY, rules)))


@pytest.mark.parametrize("cards, kind, idents", [
    pytest.param("9H 9H 9S 9S 9C", "set", "9S 9S 9H 9H 9C", id="DUMMY-SET duplicate suits"),
    pytest.param("QD QD QC JK 2H JK 2C 2S", "set", "QD QD QC Q* Q* Q* Q* Q*",
                 id="DUMMY-WILDS any number of wilds, one natural suffices"),
    pytest.param("2H 2S 2D", "set", "2S 2H 2D", id="DUMMY-WILDS 2s standing as natural 2s"),
    pytest.param("3C 4H 5S 6D", "run", "3C 4H 5S 6D", id="DUMMY-RUN suits mix by default"),
    pytest.param("JH QS KD AC", "run", "JH QS KD AC", id="DUMMY-RUN ace high"),
    pytest.param("AS 2H 3D 4C", "run", "AS 2? 3D 4C", id="DUMMY-RUN ace low, a 2 at rank 2"),
    pytest.param("AS 2H 3D 4C 5S 6H 7D 8C 9S TH JD QC KS AH", "run",
                 "AH 2? 3D 4C 5S 6H 7D 8C 9S TH JD QC KS AS", id="DUMMY-RUN A-...-K-A"),
    pytest.param("5H JK 7S", "run", "5H 6* 7S", id="DUMMY-WILDS a joker in a mixed run"),
])
def test_valid_melds(cards: str, kind: str, idents: str) -> None:
    meld = check_meld([Piece(c) for c in cards.split()], shape())
    assert meld.kind == kind
    # "2?": a 2 at rank 2 of a mixed run is recorded as 2H or as a wild 2* (not fixed)
    got = [i if not (e == "2?" and i in ("2H", "2*")) else "2?"
           for i, e in zip(meld.idents, idents.split(), strict=True)]
    assert " ".join(got) == idents


@pytest.mark.parametrize("cards, rules, rule", [
    pytest.param("KH AS 2D 3C", {}, "DUMMY-RUN", id="DUMMY-RUN never wraps, even with a 2"),
    pytest.param("QS KH AD 2C 3S", {}, "DUMMY-RUN", id="DUMMY-RUN Q-K-A-2-3 wraps"),
    pytest.param("JK JK JK", {}, "C-MELD", id="DUMMY-WILDS needs a natural card"),
    pytest.param("3C 4H 5S 6D", {"run_same_suit": True}, "DUMMY-RUN",
                 id="DUMMY-RUN run_same_suit true: one suit"),
])
def test_invalid_melds(cards: str, rules: dict[str, Any], rule: str) -> None:
    pieces = [Piece(c) for c in cards.split()]
    with pytest.raises(MeldError) as caught:
        check_meld(pieces, shape(**rules))
    assert rule in {r.rule for r in caught.value.reasons}
    assert {r.code for r in caught.value.reasons} == {Code.INVALID_MELD}


def test_same_suit_runs_with_the_knob() -> None:
    meld = check_meld([Piece(c) for c in ("3H", "4H", "JK", "6H")], shape(run_same_suit=True))
    assert meld.idents == ("3H", "4H", "5H", "6H")


# ---------------------------------------------------------------------------------------
# DUMMY-CONTRACTS


def test_twelve_contracts_as_data() -> None:
    texts = [c.text for c in CONTRACTS]
    assert texts == [
        "two sets of 3", "a set of 3 and a run of 4", "two sets of 4", "two runs of 4",
        "a set of 4 and a run of 4", "two sets of 3 and a run of 4",
        "a set of 3 and a run of 7", "three sets of 3", "two sets of 5", "two runs of 5",
        "eight of a kind", "a run of 10"]
    assert [sorted((n.kind, n.size) for n in c.needs) for c in CONTRACTS][10:] == [
        [("set", 8)], [("run", 10)]]


CONTRACT_ROWS = [
    (1, ["7H 7S 7D", "KC KD JK"], None, "two sets of 3"),
    (1, ["7H JK 2C", "KC KD KS"], None, "a set read as a set though a run reading scores"),
    (1, ["7H 7S 7D 7C 7C", "KC KD KS KH"], None, "sizes are minimums"),
    (1, ["7H 7S 7D"], Code.CONTRACT_NOT_MET, "one set is not two"),
    (1, ["7H 7S 7D", "KC KD KS", "9H 9S 9D"], Code.CONTRACT_NOT_MET,
     "an extra meld is not allowed"),
    (1, ["7H 7S 7D", "3C 4H 5S"], Code.CONTRACT_NOT_MET, "a run is not a set"),
    (2, ["7H 7S 7D", "3C 4H 5S 6D"], None, "a set of 3 and a mixed run of 4"),
    (2, ["3C 4H 5S 6D", "7H 7S 7D"], None, "in any order"),
    (2, ["7H 7S 7D", "3C 4H 5S"], Code.CONTRACT_NOT_MET, "a run of 3 is short"),
    (3, ["7H 7S 7D 7C", "9H 9H 9S 2D"], None, "two sets of 4, duplicate suits"),
    (3, ["7H 7S 7D 7C", "9H 9H 9S"], Code.CONTRACT_NOT_MET, "a set of 3 is short"),
    (4, ["3C 4H 5S 6D", "JS QS KS AS"], None, "two runs of 4, ace high"),
    (4, ["7H JK 2C JK", "3C 4H 5S 6D"], None, "wilds read as a run"),
    (5, ["8C 8C 8D JK", "AH 2S 3D 4C"], None, "a set of 4 and a run of 4 from the ace"),
    (6, ["7H 7S 7D", "KC KD KS", "3C 4H 5S 6D"], None, "two sets of 3 and a run of 4"),
    (6, ["7H 7S 7D", "3C 4H 5S 6D"], Code.CONTRACT_NOT_MET, "a set missing"),
    (7, ["7H 7S 7D", "3C 4H 5S 6D 7C 8H 9S"], None, "a set of 3 and a run of 7"),
    (7, ["7H 7S 7D", "3C 4H 5S 6D 7C 8H"], Code.CONTRACT_NOT_MET, "a run of 6 is short"),
    (8, ["7H 7S 7D", "KC KD KS", "9H 9S JK"], None, "three sets of 3"),
    (9, ["9H 9H 9S 9S 9C", "QD QD QC JK 2H"], None, "two sets of 5"),
    (9, ["9H 9H 9S 9S", "QD QD QC JK 2H"], Code.CONTRACT_NOT_MET, "a set of 4 is short"),
    (10, ["3C 4H 5S 6D 7C", "TH JH QH KH AH"], None, "two runs of 5"),
    (11, ["5H 5H 5S 5S 5D 5D 5C 5C"], None, "eight of a kind"),
    (11, ["5H 5H 5S 5S 5D 5D JK"], Code.CONTRACT_NOT_MET, "seven of a kind is short"),
    (12, ["AS 2H 3D 4C 5S 6H 7D 8C 9S TH"], None, "a run of 10 with a natural 2"),
    (12, ["5S 6H 7D 8C 9S TH JD QC KS"], Code.CONTRACT_NOT_MET, "a run of 9 is short"),
]


@pytest.mark.parametrize("number, texts, code", [
    pytest.param(n, t, c, id=f"DUMMY-CONTRACTS {n}: {why}") for n, t, c, why in CONTRACT_ROWS])
def test_contracts(number: int, texts: list[str], code: Code | None) -> None:
    cards = [c for t in texts for c in t.split()]
    state = game([cards], stock_top=["4D"])
    dummy_state(state).contract[0] = number
    state = ok(state, 0, Draw("stock"))
    move = melds(*texts)
    if code is not None:
        violation = refused(state, 0, move, code, "DUMMY-CONTRACTS")
        assert f"contract {number} is {CONTRACTS[number - 1].text}" in violation.detail
        return
    after = ok(state, 0, move)
    assert after.melded[0]
    assert len(after.melds) == len(texts)
    needed = sorted(n.kind for n in CONTRACTS[number - 1].needs)
    assert sorted(m.kind for m in after.melds) == needed
    assert len(after.hands[0]) == 14 - len(cards)


def test_contract_wild_keeps_its_open_suit() -> None:
    """C-WILD: a wild the referee read into a set stands for the rank, suit open."""
    state = ok(game([["7H", "JK", "2C", "KC", "KD", "KS"]]), 0, Draw("stock"),
               melds("7H JK 2C", "KC KD KS"))
    assert state.melds[0].kind == "set"
    assert state.melds[0].idents == ["7H", "7*", "7*"]


def test_declared_wilds_are_kept() -> None:
    state = ok(game([["7H", "JK", "2C", "KC", "KD", "KS"]]), 0, Draw("stock"),
               MeldMove(((Piece("7H"), Piece("JK", "7S"), Piece("2C")),
                         (Piece("KC"), Piece("KD"), Piece("KS")))))
    assert state.melds[0].idents == ["7H", "7S", "7*"]


def test_invalid_meld_in_a_contract_is_invalid_meld() -> None:
    state = ok(s1(), 0, Draw("stock"))
    refused(state, 0, melds("7H 7S KD", "KC 7D KS"), Code.INVALID_MELD, "DUMMY-SET")


# ---------------------------------------------------------------------------------------
# DUMMY-AFTER, DUMMY-DRAW, DUMMY-DISCARD (going out)


@pytest.mark.parametrize("move, code", [
    pytest.param(melds("7C 7C JK"), Code.CONTRACT_ALREADY_MET, id="DUMMY-AFTER no new meld"),
    pytest.param(lay("m1", "7C"), Code.INVALID_LAY_OFF,
                 id="DUMMY-AFTER no lay-off in the contract's turn"),
])
def test_after_the_contract_in_the_same_turn(move: Move, code: Code) -> None:
    refused(s1_contract_down(), 0, move, code, "DUMMY-AFTER")


def test_contract_action_may_not_lay_off() -> None:
    """DUMMY-AFTER: the contract action holds the contract's melds only."""
    seat1 = [c if c != "6H" else "7H" for c in S1B_SEAT1]
    state = ok(s1_contract_down(seat1=seat1), 0, Discard("4D"))
    state = ok(state, 1, Draw("stock"))
    move = MeldMove(melds("5S 5H 5D", "9S 9H 9D").melds, (lay("m1", "7H"),))
    refused(state, 1, move, Code.INVALID_LAY_OFF, "DUMMY-AFTER")
    ok(state, 1, melds("5S 5H 5D", "9S 9H 9D"))


def test_lay_off_needs_the_contract() -> None:
    """DUMMY-AFTER: a seat that has not laid down its contract may not lay off."""
    seat1 = ["7H", *S1_SEAT1[1:]]
    state = ok(s1_contract_down(seat1=seat1), 0, Discard("4D"))
    state = ok(state, 1, Draw("stock"))
    refused(state, 1, lay("m1", "7H"), Code.NOT_OPENED, "DUMMY-AFTER")


def test_draw_from_stock_only_after_the_contract() -> None:
    """DUMMY-DRAW."""
    state = ok(s1_contract_down(), 0, Discard("4D"))
    state = ok(state, 1, Draw("stock"), Discard("9D"))
    refused(state, 0, Draw("discard"), Code.DISCARD_DRAW_FORBIDDEN, "DUMMY-DRAW")
    assert ok(state, 0, Draw("stock")).hands[0].count("5C") == 1


def test_a_seat_not_down_may_take_the_discard() -> None:
    state = ok(s1_contract_down(), 0, Discard("4D"))
    state = ok(state, 1, Draw("discard"))
    assert "4D" in state.hands[1]


def test_lay_off_on_anyones_meld_and_go_out_with_a_discard() -> None:
    """DUMMY-AFTER (any meld, from the next turn on), DUMMY-DISCARD (out by discarding),
    DUMMY-SCORE, DUMMY-CONTRACTS (both move on)."""
    state = s1_second_turn(seat1_makes=True)
    state = ok(state, 0, lay("m3", "5C"), lay("m1", "7C 7C JK"), lay("m2", "KH KH 2S"))
    assert state.hands[0] == ["2H"]
    assert state.melds[2].owner == 1 and "5C" in state.melds[2].cards
    state, events = events_of(state, 0, Discard("2H"))  # a playable last card: allowed
    end = next(e for e in events if e["type"] == "hand_end")
    assert end["went_out"] == 0
    assert end["scores"] == [0, S1B_SEAT1_COUNT]
    assert end["contracts"] == [{"number": 1, "made": True}, {"number": 1, "made": True}]
    assert dummy_state(state).contract == [2, 2]
    assert state.totals == [0, S1B_SEAT1_COUNT]
    assert state.hand_number == 2


def test_failed_contract_is_repeated() -> None:
    """DUMMY-CONTRACTS: the seat that did not lay down repeats its contract."""
    state = s1_second_turn()
    state = ok(state, 0, lay("m1", "7C 7C JK"), lay("m2", "KH KH 2S 2H"))
    state, events = events_of(state, 0, Discard("5C"))
    end = next(e for e in events if e["type"] == "hand_end")
    assert end["scores"] == [0, S1_SEAT1_COUNT]
    assert end["contracts"] == [{"number": 1, "made": True}, {"number": 1, "made": False}]
    assert dummy_state(state).contract == [2, 1]
    assert dummy_state(state).completed == [1, 0]
    view = public_view(state, "g", 9)
    assert [s["contract"]["number"] for s in view["seats"]] == [2, 1]
    assert [s["contract"]["down"] for s in view["seats"]] == [False, False]


@pytest.mark.parametrize("setup, move", [
    pytest.param("lay_off", lay("m3", "2H"), id="DUMMY-DISCARD a lay-off leaving no card"),
    pytest.param("contract", melds("7H 7S 7D 7C 7C 7H 2S", "KC KD KS KH KH JK 2H"),
                 id="DUMMY-DISCARD a contract leaving no card"),
])
def test_every_turn_ends_with_a_discard(setup: str, move: Move) -> None:
    if setup == "lay_off":
        state = s1_second_turn(seat1_makes=True)
        state = ok(state, 0, lay("m3", "5C"), lay("m1", "7C 7C JK"), lay("m2", "KH KH 2S"))
    else:
        state = ok(game([["7H", "7S", "7D", "7C", "7C", "7H", "2S", "KC", "KD", "KS", "KH",
                          "KH", "JK"]], stock_top=["2H"]), 0, Draw("stock"))
    refused(state, 0, move, Code.MUST_DISCARD_TO_GO_OUT, "DUMMY-DISCARD")


# ---------------------------------------------------------------------------------------
# DUMMY-DISCARD: playable discards


@pytest.mark.parametrize("seat, card, rules, accepted", [
    pytest.param(0, "7C", {}, False, id="DUMMY-DISCARD fits a meld: refused"),
    pytest.param(0, "JK", {}, False, id="DUMMY-DISCARD a wild fits any meld"),
    pytest.param(0, "4D", {}, True, id="DUMMY-DISCARD fits no meld"),
    pytest.param(0, "7C", {"playable_discard": "allow"}, True, id="DUMMY-DISCARD allow"),
])
def test_playable_discard_of_the_player_who_cannot_lay_off_yet(
        seat: int, card: str, rules: dict[str, Any], accepted: bool) -> None:
    state = s1_contract_down(rules=rules)
    if accepted:
        assert ok(state, seat, Discard(card)).discard[-1] == card
    else:
        violation = refused(state, 0, Discard(card), Code.PLAYABLE_DISCARD, "DUMMY-DISCARD")
        assert "m1" in violation.detail or "m2" in violation.detail


def test_playable_discard_of_a_seat_not_down() -> None:
    """DUMMY-DISCARD: refused whether or not the discarding player may lay off yet."""
    seat1 = ["KS", *S1_SEAT1[1:]]
    state = ok(s1_contract_down(seat1=seat1), 0, Discard("4D"))
    state = ok(state, 1, Draw("stock"))
    refused(state, 1, Discard("KS"), Code.PLAYABLE_DISCARD, "DUMMY-DISCARD")
    ok(state, 1, Discard("9D"))


@pytest.mark.parametrize("drawn, discard, accepted", [
    pytest.param("5C", "KH", False, id="DUMMY-DISCARD 5C fits nothing: KH may not go"),
    pytest.param("KS", "KH", True, id="DUMMY-DISCARD every card fits: any may go"),
])
def test_every_card_playable(drawn: str, discard: str, accepted: bool) -> None:
    state = s1_second_turn(stock=["2H", "9D", drawn])
    state = ok(state, 0, lay("m1", "7C 7C JK"))  # left: KH KH 2S 2H + drawn
    if accepted:
        ok(state, 0, Discard(discard))
    else:
        refused(state, 0, Discard(discard), Code.PLAYABLE_DISCARD, "DUMMY-DISCARD")


def test_last_card_may_be_playable() -> None:
    state = s1_second_turn(stock=["2H", "9D", "KS"])
    state = ok(state, 0, lay("m1", "7C 7C JK"), lay("m2", "KH KH 2S 2H"))
    assert state.hands[0] == ["KS"]
    state = ok(state, 0, Discard("KS"))
    assert state.history[0]["went_out"] == 0


def test_the_taken_discard_does_not_trap_the_player() -> None:
    """DUMMY-DISCARD: every card the player *may* discard fits (the taken 4D may not go,
    C-DISCARD-BACK), so a playable card may go."""
    seat1 = ["7H", "7S", "7D", "KC", "KD", "KS", "2D", "2D", "2C", "2C", "JK", "JK", "JK"]
    state = ok(s1_contract_down(seat1=seat1), 0, Discard("4D"))
    state = ok(state, 1, Draw("discard"))
    refused(state, 1, Discard("4D"), Code.DISCARD_TAKEN_CARD, "C-DISCARD-BACK")
    ok(state, 1, Discard("KC"))


# ---------------------------------------------------------------------------------------
# DUMMY-CUTIN


def three(rules: dict[str, Any] | None = None, players: int = 3,
          hands: Sequence[Sequence[str]] = (), stock: Sequence[str] = ()) -> GameState:
    return game(hands, "QH", stock, players=players,
                rules={"cut_ins": True} if rules is None else rules)


def pass_turn(state: GameState) -> GameState:
    """The seat to play draws from the stock and discards the card it drew."""
    seat = state.turn
    state = ok(state, seat, Draw("stock"))
    return ok(state, seat, Discard(state.hands[seat][-1]))


def test_cut_in_is_granted_at_the_next_players_stock_draw() -> None:
    """DUMMY-CUTIN: the claimant gets the discard and the top 3 stock cards, then the next
    player draws."""
    state = three(stock=["9C", "3D", "4D", "5D", "6D"])
    state = ok(state, 0, Draw("stock"), Discard("9C"))
    state, events = events_of(state, 2, CutIn())
    assert events == [{"type": "cut_in_claim", "seat": 2, "card": "9C", "next": 1}]
    assert public_view(state, "g", 3)["cut_in"] == {"open": True, "claims": [2]}
    assert len(state.hands[2]) == 13  # nothing yet: the next player has priority
    state, events = events_of(state, 1, Draw("stock"))
    grant = next(e for e in events if e["type"] == "cut_in")
    assert grant["seat"] == 2 and grant["card"] == "9C"
    assert grant["private"] == {"2": {"cards": ["3D", "4D", "5D"]}}
    assert "cards" not in redact_event(grant, 1) and "cards" not in redact_event(grant, None)
    assert len(state.hands[2]) == 17
    assert Counter(state.hands[2]) >= Counter(["9C", "3D", "4D", "5D"])
    assert state.hands[1][-1] == "6D"
    assert state.discard == ["QH"]
    assert dummy_state(state).cut_ins == [0, 0, 1]
    assert public_view(state, "g", 4)["seats"][2]["contract"]["cut_ins"] == 1
    assert Counter(state.all_cards()) == Counter(DECK)


def test_taking_the_discard_voids_the_claims() -> None:
    """DUMMY-CUTIN: the next player has priority."""
    state = three(stock=["9C"])
    state = ok(state, 0, Draw("stock"), Discard("9C"))
    state = ok(state, 2, CutIn())
    state, events = events_of(state, 1, Draw("discard"))
    assert {"type": "cut_in_denied", "seats": [2], "reason": "seat 1 took the discard"} in events
    assert state.hands[1][-1] == "9C" and len(state.hands[2]) == 13
    assert dummy_state(state).cut_ins == [0, 0, 0]


def test_the_claimant_nearest_in_turn_order_wins() -> None:
    state = three(players=4, stock=["9C", "3D", "4D", "5D"])
    state = ok(state, 0, Draw("stock"), Discard("9C"))
    state = ok(state, 3, CutIn())
    state = ok(state, 2, CutIn())
    state, events = events_of(state, 1, Draw("stock"))
    assert next(e for e in events if e["type"] == "cut_in")["seat"] == 2
    assert next(e for e in events if e["type"] == "cut_in_denied")["seats"] == [3]
    assert [len(h) for h in state.hands] == [13, 14, 17, 13]


def _after_discard(state: GameState) -> GameState:
    return ok(state, 0, Draw("stock"), Discard(state.stock[-1]))


@pytest.mark.parametrize("setup, seat", [
    pytest.param("knob_off", 2, id="DUMMY-CUTIN cut_ins false"),
    pytest.param("upcard", 2, id="DUMMY-CUTIN not on the upcard, only after a discard"),
    pytest.param("discarded", 1, id="DUMMY-CUTIN not the next player (priority: draw it)"),
    pytest.param("discarded", 0, id="DUMMY-CUTIN not the player who discarded it"),
    pytest.param("drawn", 2, id="DUMMY-CUTIN not after the next player drew"),
    pytest.param("claimed", 2, id="DUMMY-CUTIN one claim per discard"),
])
def test_cut_in_not_allowed(setup: str, seat: int) -> None:
    state = three({} if setup == "knob_off" else None)
    if setup != "upcard":
        state = _after_discard(state)
    if setup == "drawn":
        state = ok(state, 1, Draw("stock"))
    if setup == "claimed":
        state = ok(state, 2, CutIn())
    refused(state, seat, CutIn(), Code.CUT_IN_NOT_ALLOWED, "DUMMY-CUTIN")


def test_at_most_two_cut_ins_per_hand() -> None:
    state = three()
    for _ in range(2):
        while state.turn != 0:
            state = pass_turn(state)
        state = pass_turn(state)  # seat 0 discards, seat 1 is next
        state = ok(state, 2, CutIn())
        state = ok(state, 1, Draw("stock"))
        state = ok(state, 1, Discard(state.hands[1][-1]))
    assert dummy_state(state).cut_ins == [0, 0, 2]
    while state.turn != 0:
        state = pass_turn(state)
    state = pass_turn(state)
    violation = refused(state, 2, CutIn(), Code.CUT_IN_NOT_ALLOWED, "DUMMY-CUTIN")
    assert "2 cut-ins" in violation.detail


def test_no_cut_in_after_laying_down_the_contract() -> None:
    seat2 = ["7H", "7S", "7D", "KC", "KD", "KS"]
    state = three(hands=[[], [], seat2])
    state = pass_turn(pass_turn(state))
    state = ok(state, 2, Draw("stock"), melds("7H 7S 7D", "KC KD KS"))
    state = ok(state, 2, legal_discard(state, 2))
    state = ok(state, 0, Draw("stock"))
    state = ok(state, 0, legal_discard(state, 0))
    violation = refused(state, 2, CutIn(), Code.CUT_IN_NOT_ALLOWED, "DUMMY-CUTIN")
    assert "contract" in violation.detail


def test_no_cut_in_when_the_stock_is_too_low() -> None:
    state = three()
    while len(state.stock) > 4:
        state = pass_turn(state)
    discarder = dummy_state(state).cut_in.discarder
    assert discarder is not None
    claimant = 3 - state.turn - discarder  # neither next nor discarder
    ok(state, claimant, CutIn())  # 4 stock cards: 3 to give, 1 for the next player
    state = pass_turn(state)
    assert len(state.stock) == 3 and dummy_state(state).cut_in.open
    discarder = dummy_state(state).cut_in.discarder
    assert discarder is not None
    claimant = 3 - state.turn - discarder
    violation = refused(state, claimant, CutIn(), Code.CUT_IN_NOT_ALLOWED, "DUMMY-CUTIN")
    assert "stock" in violation.detail


# ---------------------------------------------------------------------------------------
# The Dummy facts (contracts, cut-ins) as the store keeps them


def _claimed() -> GameState:
    """Three seats, cut-ins on, seat 1 has discarded and seat 0 (not next) has claimed."""
    state = _after_discard(three({"cut_ins": True}))
    window = dummy_state(state).cut_in
    assert window.open and window.discarder is not None
    claimant = next(seat for seat in range(3) if seat not in (state.turn, window.discarder))
    return ok(state, claimant, CutIn())


def test_the_facts_are_stored_in_var_as_before() -> None:
    """The stored document keeps the facts under ``var`` as plain data, in the form games
    stored before they were typed have (``contract``, ``completed``, ``cut_ins``,
    ``cut_in``), beside the hidden deal record."""
    state = _claimed()
    facts = dummy_state(state)
    wire = {"contract": [1, 1, 1], "completed": [0, 0, 0], "cut_ins": [0, 0, 0],
            "cut_in": {"open": True, "discarder": facts.cut_in.discarder,
                       "claims": list(facts.cut_in.claims)}}
    for stored in (state.to_dict(), state.to_compact()):
        assert "variant_state" not in stored
        assert list(stored["var"]) == [*wire, "fair"]
        assert {k: v for k, v in stored["var"].items() if k != "fair"} == wire
    assert "contract" not in state.var  # in memory, the facts are typed


def test_a_game_stored_before_the_facts_were_typed_loads() -> None:
    """A document written when the facts were kept untyped in ``var`` reads back into the
    typed facts, and writes back the same."""
    state = _claimed()
    stored = json.loads(json.dumps(state.to_compact()))
    stored["var"]["contract"], stored["var"]["completed"] = [3, 2, 5], [2, 1, 4]
    again = GameState.from_dict(stored)
    facts = dummy_state(again)
    assert (facts.contract, facts.completed) == ([3, 2, 5], [2, 1, 4])
    assert facts.cut_in == dummy_state(state).cut_in
    assert set(again.var) == {"fair"}
    assert json.loads(json.dumps(again.to_compact())) == stored
    assert GameState.from_dict(stored).to_dict() == again.to_dict()


def test_round_trips_of_the_stored_forms_keep_the_facts() -> None:
    state = _claimed()
    for stored in (state.to_dict(), state.to_compact()):
        again = GameState.from_dict(json.loads(json.dumps(stored)))
        assert again == state
        assert again.to_dict() == state.to_dict()
        assert again.to_compact() == json.loads(json.dumps(state.to_compact()))


def test_a_move_never_changes_the_facts_of_the_state_it_is_given() -> None:
    """``apply`` works on a copy: the facts of the state it was given stay as they were
    (a claim, a granted cut-in, a contract made)."""
    state = _after_discard(three({"cut_ins": True}))
    before = state.to_dict()
    window = dummy_state(state).cut_in
    claimant = next(seat for seat in range(3) if seat not in (state.turn, window.discarder))
    claimed = ok(state, claimant, CutIn())
    assert state.to_dict() == before and dummy_state(state).cut_in.claims == []
    granted = ok(claimed, claimed.turn, Draw("stock"))
    assert dummy_state(granted).cut_ins[claimant] == 1
    assert dummy_state(claimed).cut_ins == [0, 0, 0] and dummy_state(claimed).cut_in.open
    copy = granted.copy()
    dummy_state(copy).contract[0] = 7
    assert dummy_state(granted).contract[0] == 1


# ---------------------------------------------------------------------------------------
# DUMMY-SCORE, DUMMY-END


@pytest.mark.parametrize("card, count", [
    pytest.param(c, n, id=f"DUMMY-SCORE {c}={n}") for c, n in [
        ("3S", 5), ("9H", 5), ("TD", 10), ("JC", 10), ("QS", 10), ("KH", 10), ("AS", 15),
        ("2D", 50), ("JK", 50)]])
def test_card_counts(card: str, count: int) -> None:
    assert dummy_count(card) == count


def test_stateless_score_nobody_out_everyone_counts() -> None:
    from service.rules.scoring import HandEnd
    from service.rules.variants import variant_rules

    vr = variant_rules("dummy")
    rules = Rules.of(default_rules(DUMMY))
    result = vr.score(rules, HandEnd(hands=[["AS", "2D"], ["3S", "KH"]], went_out=None))
    assert result.scores == [65, 15]
    result = vr.score(rules, HandEnd(hands=[[], ["JK", "QD", "4C"]], went_out=0))
    assert result.scores == [0, 65]


@pytest.mark.parametrize("match_end, seat1_makes, winners", [
    pytest.param({"contracts": 1}, False, [0], id="DUMMY-END only those who completed"),
    pytest.param({"contracts": 1}, True, [0], id="DUMMY-END lowest of those who completed"),
    pytest.param({"deals": 1}, False, [0], id="DUMMY-END deals: lowest total"),
    pytest.param({"deals": 2}, False, None, id="DUMMY-END deals: not yet"),
    pytest.param({"contracts": 2}, True, None, id="DUMMY-END contracts: not yet"),
])
def test_match_end(match_end: dict[str, int], seat1_makes: bool,
                   winners: list[int] | None) -> None:
    state = s1_second_turn(seat1_makes=seat1_makes, rules={"match_end": match_end})
    if seat1_makes:
        state = ok(state, 0, lay("m3", "5C"), lay("m1", "7C 7C JK"), lay("m2", "KH KH 2S"),
                   Discard("2H"))
    else:
        state = ok(state, 0, lay("m1", "7C 7C JK"), lay("m2", "KH KH 2S 2H"), Discard("5C"))
    if winners is None:
        assert state.status == "playing" and state.hand_number == 2
    else:
        assert state.status == "finished" and state.winners == winners
        refused(state, 1, Draw("stock"), Code.GAME_FINISHED, "DUMMY-END")


def test_match_ends_after_contract_12_by_default() -> None:
    """DUMMY-END: the hand in which someone completes contract 12 ends the match."""
    seat0 = ["AS", "2H", "3D", "4C", "5S", "6H", "7D", "8C", "9S", "TH", "JC", "QC", "4D"]
    state = game([seat0], stock_top=["KS", "5D", "8D"])
    facts = dummy_state(state)
    facts.contract[0], facts.completed[0] = 12, 11
    state = ok(state, 0, Draw("stock"), melds("AS 2H 3D 4C 5S 6H 7D 8C 9S TH"),
               Discard("4D"))
    state = ok(state, 1, Draw("stock"), Discard("5D"))
    state = ok(state, 0, Draw("stock"), lay("m1", "JC"), lay("m1", "QC"), lay("m1", "KS"))
    assert len(state.melds[0].cards) == 13
    state = ok(state, 0, Discard("8D"))
    assert state.status == "finished" and state.winners == [0]
    assert dummy_state(state).completed[0] == 12


# ---------------------------------------------------------------------------------------
# Views


def test_views_show_each_seats_contract_and_no_hidden_card() -> None:
    state = s1_contract_down()
    view = public_view(state, "g", 2)
    assert view["seats"][0]["contract"] == {
        "number": 1, "text": "two sets of 3",
        "melds": [{"kind": "set", "min_size": 3}, {"kind": "set", "min_size": 3}],
        "down": True, "completed": 0, "cut_ins": 0}
    assert view["seats"][1]["contract"]["down"] is False
    assert view["cut_in"] == {"open": False, "claims": []}
    check_views(state, 2)


def test_other_variants_views_are_unchanged() -> None:
    state, _ = new_game("basic", ["a", "b"], None, 0, None, Random(1))
    view = public_view(state, "g", 0)
    assert "cut_in" not in view
    assert all("contract" not in s for s in view["seats"])


# ---------------------------------------------------------------------------------------
# Random legal play (Hypothesis)


def check_views(state: GameState, version: int, deck: Sequence[str] = DECK) -> None:
    hidden_cards.check_views(state, version, deck)


def check_events(events: list[dict[str, Any]], n: int) -> None:
    for event in events:
        private = event.get("private", {})
        assert set(private) <= {str(s) for s in range(n)}
        public = set(event) - {"private"}
        for viewer in [None, *range(n)]:
            shown = redact_event(event, viewer)
            assert "private" not in shown
            own = private.get(str(viewer), {})
            for seat, facts in private.items():
                for key in facts:
                    if seat != str(viewer) and key in shown and key not in public:
                        assert key in own and shown[key] == own[key], (
                            f"{event['type']} shows viewer {viewer} seat {seat}'s {key}")


def probe(state: GameState, rng: Random) -> tuple[int, Move]:
    """A move that is usually illegal."""
    seat = rng.randrange(state.players_count)
    hand = state.hands[seat]
    choice = rng.randrange(6)
    if choice == 0:
        return seat, CutIn()
    if choice == 1:
        return seat, Draw(rng.choice(["stock", "discard"]))
    if choice == 2 and len(hand) >= 6:
        cards = rng.sample(hand, 6)
        return seat, melds(" ".join(cards[:3]), " ".join(cards[3:]))
    if choice == 3 and state.melds:
        return seat, LayOff(rng.choice(state.melds).id, (Piece(rng.choice(hand)),))
    return seat, Discard(rng.choice(hand))


attempt = partial(engine.attempt, rules=("C-", "DUMMY-", "BASIC-"))


DUMMY_KNOBS = st.fixed_dictionaries({
    "match_end": st.one_of(st.integers(1, 2).map(lambda n: {"deals": n}),
                           st.integers(1, 2).map(lambda n: {"contracts": n})),
}, optional={
    "cut_ins": st.booleans(),
    "playable_discard": st.sampled_from(["forbid", "allow"]),
    "run_same_suit": st.booleans(),
    "stock_exhausted": st.sampled_from(["turn_over", "shuffle", "end_hand"]),
    "max_stock_rebuilds": st.sampled_from([None, 0, 1, 3]),
})


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.integers(2, 4), knobs=DUMMY_KNOBS, seed=st.integers(0, 2**32 - 1))
def test_random_legal_play_keeps_the_invariants(players: int, knobs: dict[str, Any],
                                                seed: int) -> None:
    rng = Random(seed)
    state, events = new_game("dummy", [f"p{i}" for i in range(players)], knobs, None, None,
                             rng)
    check_views(state, 0)
    check_events(events, players)
    version = 0
    while state.status == "playing" and version < 400:
        seat, move = probe(state, rng)
        new, events = attempt(state, seat, move, Random(0))
        if new is not None:
            check_views(new, version + 1)
            check_events(events, players)
        claim = maybe_cut_in(state, rng)
        if claim is not None:
            seat, move = claim
        else:
            seat = state.turn
            move = choose_move(state, seat, rng)
        new, events = attempt(state, seat, move, rng)
        if new is None:
            fallback = Draw("stock") if state.phase == "draw" else legal_discard(state, seat)
            new, events = attempt(state, seat, fallback, rng)
        assert new is not None
        state, version = new, version + 1
        check_views(state, version)
        check_events(events, players)
        facts = dummy_state(state)
        assert facts.contract == [min(c + 1, 12) for c in facts.completed]
    if state.status == "finished":
        assert state.winners
        sums = [sum(h["scores"][i] for h in state.history) for i in range(players)]
        assert state.totals == sums


def test_a_contract_fits_the_same_with_the_readings_given_or_made() -> None:
    """``fit_contract`` reads each meld as a set and as a run; the engine hands it the
    melds' readings it has already made. Over sets of melds drawn from random hands' melds,
    as many as each contract needs, the fit is the same either way."""
    rng = Random(4)
    meld_look = shape()
    deck = standard_deck(2, 4)
    compared = fitted = 0
    for _ in range(60):
        hand = rng.sample(deck, 12)
        melds = candidate_melds(hand, meld_look)
        for contract in CONTRACTS:
            count = len(contract.needs)
            for _ in range(4):
                if len(melds) < count:
                    break
                pieces = [[Piece(c) for c in m.cards] for m in rng.sample(melds, count)]
                try:
                    best = [check_meld(p, meld_look) for p in pieces]
                except MeldError:
                    continue
                made = fit_contract(pieces, meld_look, contract)
                assert fit_contract(pieces, meld_look, contract, best) == made
                compared += 1
                fitted += made is not None
    assert compared > 2000 and fitted > 100, (compared, fitted)
