"""Rami / Rummy 51 (RULES.md R51) and the Lebanese "14" (L14) through ``new_game`` + ``apply``.

Games are arranged deals of the 108-card deck (two decks and four jokers): seat 0 deals
(R51-FIRST: it plays first and only discards), seat 1 is usually the player under test.
Rules that L14 shares with R51 ("R51 except as below") are checked for both presets, with
the R51 rule ids: RULES.md has no ``L14-SET`` or ``L14-OUT``. Every refused move is checked
to leave the state unchanged (``to_dict()`` before and after) and to cite RULES.md ids;
every applied move to leave its input state untouched and the 108 cards conserved.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import partial
from random import Random
from typing import Any

import pytest

from service.rules import (
    Code,
    GameState,
    Piece,
    Rules,
    RulesError,
    SetupError,
    Violation,
    apply,
    check_meld,
    find_variant,
    meld_shape,
    new_game,
    planning,
    public_view,
    search,
)
from service.rules.cards import JOKER, RANKS
from service.rules.engine import context
from service.rules.legal import legal_moves
from service.rules.melds import MeldError
from service.rules.moves import (
    Move,
    SwapJoker,
    move_from_dict,
)
from service.rules.planning import Table
from service.rules.ruleset import resolve_rules
from service.rules.state import COMPILED, TableMeld
from service.rules.variants.base import Turn
from tests.support import engine
from tests.support.engine import Event, events_of, hand_end, piece, turn_moves
from tests.support.rummy51_game import (
    DECK,
    L14,
    OPENER0,
    OPENER0_MELD,
    R51,
    SEAT0_OPEN,
    SEAT1_OPEN,
    WIN,
    WIN_1J,
    WIN_1J_MELD,
    WIN_MELD,
    arrange,
    cards,
    junk,
    sizes,
)

BOTH = (R51, L14)

# Every rule id of RULES.md: a refusal must cite one of them.
RULE_IDS = {
    "C-CARD", "C-DECK", "C-SEAT", "C-DEAL", "C-TURN", "C-MELD", "C-SET", "C-RUN", "C-WILD",
    "C-LAYOFF", "C-DISCARD-BACK", "C-OUT", "C-STOCK", "C-VALUE",
    "R51-PLAYERS", "R51-DEAL", "R51-FIRST", "R51-SET", "R51-RUN", "R51-WILDS",
    "R51-JOKER-OPP", "R51-VALUE", "R51-OPEN", "R51-DRAW", "R51-SWAP", "R51-TAKE", "R51-LAST",
    "R51-OUT", "R51-ALL-AT-ONCE", "R51-SCORE", "R51-STOCK", "R51-END",
    "L14-DEAL", "L14-ACE", "L14-JOKER-RUN", "L14-DRAW", "L14-DRY",
}

# ---------------------------------------------------------------------------------------
# Arranged deals

JUNK_B = "3S 6S 9S QS 4H 7H TH KH 2D 5D 8D JD AC"
"""Another junk hand of the same kind (three-player games)."""


def start(variant: str, hands: Sequence[str | Sequence[str] | None], stock: str = "",
          rules: dict[str, Any] | None = None, dealer: int = 0,
          later: Sequence[dict[str, Any]] = ()) -> GameState:
    state, _ = new_game(variant, [f"p{i}" for i in range(len(hands))], rules or {}, dealer,
                        [arrange(variant, hands, stock, dealer), *later], Random(0))
    check_conservation(state)
    return state


# ---------------------------------------------------------------------------------------
# Moves and checks


def check_conservation(state: GameState) -> None:
    """C-DECK: stock + discard pile + hands + melds are exactly the 108 cards."""
    assert Counter(state.all_cards()) == Counter(DECK)
    for meld in state.melds:
        assert len(meld.cards) == len(meld.idents)


play = partial(engine.play, conserve=check_conservation)
refuse = engine.refuse


def why(violation: Violation) -> list[tuple[Code, str, str]]:
    return [(r.code, r.rule, r.detail) for r in violation.reasons]


def assert_refused(state: GameState, seat: int, move: str | Move,
                   *reasons: tuple[Code, str, str]) -> Violation:
    violation = refuse(state, seat, move)
    assert why(violation) == list(reasons)
    unknown = [r.rule for r in violation.reasons if r.rule not in RULE_IDS]
    assert unknown == [], f"not RULES.md ids: {unknown}"
    return violation


def meld_of(state: GameState, meld_id: str) -> tuple[int, str, list[str], list[str], int]:
    m = state.meld(meld_id)
    assert m is not None
    return m.owner, m.kind, m.cards, m.idents, m.points


def shape(variant: str, knobs: dict[str, Any] | None = None) -> Any:
    v = find_variant(variant)
    return meld_shape(v, Rules.of(resolve_rules(v, knobs or {})))


def v_id(variant: str) -> str:
    return "R51" if variant == R51 else "L14"


# ---------------------------------------------------------------------------------------
# R51-PLAYERS, R51-DEAL, L14-DEAL, R51-FIRST


@pytest.mark.parametrize(("variant", "n"), [
    pytest.param(variant, n, id=f"{v_id(variant)}-DEAL {n} players: "
                                f"{sizes(variant, n, 0)[1]} each, the dealer "
                                f"{sizes(variant, n, 0)[0]}")
    for variant in BOTH for n in (2, 3, 4, 5)
])
def test_deal_sizes_and_the_dealer_first(variant: str, n: int) -> None:
    for dealer in range(n):
        state, events = new_game(variant, [f"p{i}" for i in range(n)], {}, dealer, None,
                                 Random(dealer))
        want = sizes(variant, n, dealer)
        assert [len(h) for h in state.hands] == want
        assert state.discard == []  # no upcard
        assert len(state.stock) == 108 - sum(want)
        check_conservation(state)
        # R51-FIRST: the dealer plays first, a discard only
        assert (state.turn, state.phase, state.discard_only) == (dealer, "play", True)
        view = public_view(state, "g", 0)
        assert view["discard_only"] is True
        assert view["turn"] == {"seat": dealer, "phase": "play"}
        assert view["discard_top"] is None
        assert [s["opened"] for s in view["seats"]] == [False] * n
        (dealt,) = events
        assert (dealt["first"], dealt["upcard"], dealt["hand_counts"]) == (dealer, None, want)


@pytest.mark.parametrize(("variant", "n"), [
    pytest.param(v, n, id=f"R51-PLAYERS {n} players refused ({v})")
    for v in BOTH for n in (1, 6)
])
def test_players_refused(variant: str, n: int) -> None:
    with pytest.raises(SetupError) as info:
        new_game(variant, [f"p{i}" for i in range(n)], {}, None, None, Random(0))
    assert info.value.field == "players"


@pytest.mark.parametrize(("variant", "move", "detail"), [
    pytest.param(v, move, f"cannot {what} now: the dealer's first action is a discard only",
                 id=f"R51-FIRST the dealer's first action: {move} refused ({v})")
    for v in BOTH
    for move, what in (("draw stock", "draw"), ("draw discard", "draw"),
                       ("meld 2S 5S 8S", "meld"), ("lay m1 2S", "lay off"),
                       ("swap m1 2S", "swap a joker"))
])
def test_first_action_is_a_discard_only(variant: str, move: str, detail: str) -> None:
    state = start(variant, [junk(variant, dealer=True), None])
    assert_refused(state, 0, move, (Code.WRONG_PHASE, "R51-FIRST", detail))


@pytest.mark.parametrize("variant", BOTH)
def test_first_discard_then_normal_turns(variant: str) -> None:
    state = start(variant, [junk(variant, dealer=True), None], stock="5H 6D")
    assert_refused(state, 1, "draw stock",
                   (Code.NOT_YOUR_TURN, "C-TURN", "it is seat 0's turn (p0)"))
    state, events = play(state, (0, "discard 4C"))
    assert events == [{"type": "discard", "seat": 0, "card": "4C"}]
    size = sizes(variant, 2, 0)
    assert [len(h) for h in state.hands] == [size[0] - 1, size[1]]
    assert (state.turn, state.phase, state.discard_only, state.discard) == (1, "draw", False,
                                                                           ["4C"])
    assert public_view(state, "g", 1)["discard_only"] is False
    state, _ = play(state, (1, "draw stock"), (1, "discard 5H"))
    # the dealer's next turn is a normal one: draw first
    assert (state.turn, state.phase, state.discard_only) == (0, "draw", False)
    assert_refused(state, 0, "discard 2S",
                   (Code.WRONG_PHASE, "C-TURN", "cannot discard now: draw first"))
    state, _ = play(state, (0, "draw stock"), (0, "discard 6D"))
    assert [len(h) for h in state.hands] == [size[0] - 1, size[1]]


def _drop_hand_card(seat: int) -> Any:
    def spoil(deal: dict[str, Any]) -> None:
        deal["stock"].append(deal["hands"][seat].pop())
    return spoil


def _add_hand_card(seat: int) -> Any:
    def spoil(deal: dict[str, Any]) -> None:
        deal["hands"][seat].append(deal["stock"].pop())
    return spoil


def _drop_stock_card(deal: dict[str, Any]) -> None:
    deal["stock"].pop()


def _third_copy(deal: dict[str, Any]) -> None:
    deal["stock"][-1] = deal["hands"][0][0]


def _fifth_joker(deal: dict[str, Any]) -> None:
    deal["stock"][deal["stock"].index("2H")] = "JK"


def _bad_code(deal: dict[str, Any]) -> None:
    deal["stock"][3] = "1C"


@pytest.mark.parametrize(("variant", "spoil", "field", "message"), [
    pytest.param(v, _drop_hand_card(0), "deals.0.hands.0",
                 f"seat 0 is dealt {sizes(v, 2, 0)[0]} cards in hand 1, "
                 f"got {sizes(v, 2, 0)[0] - 1}",
                 id=f"{v_id(v)}-DEAL the dealer one card short refused")
    for v in BOTH
] + [
    pytest.param(v, _add_hand_card(1), "deals.0.hands.1",
                 f"seat 1 is dealt {sizes(v, 2, 0)[1]} cards in hand 1, "
                 f"got {sizes(v, 2, 0)[1] + 1}",
                 id=f"{v_id(v)}-DEAL a non-dealer with the dealer's count refused")
    for v in BOTH
] + [
    pytest.param(v, spoil, field, None, id=f"C-DECK {what} refused ({v})")
    for v in BOTH
    for spoil, field, what in ((_drop_stock_card, "deals.0", "107 cards"),
                               (_third_copy, "deals.0", "a third copy of a card"),
                               (_fifth_joker, "deals.0", "a fifth joker"),
                               (_bad_code, "deals.0.stock.3", "a bad card code"))
])
def test_arranged_deal_validated(variant: str, spoil: Any, field: str,
                                 message: str | None) -> None:
    deal = arrange(variant, [junk(variant, dealer=True), None])
    new_game(variant, ["a", "b"], {}, 0, [deal], Random(0))  # the unspoilt deal is fine
    spoil(deal)
    with pytest.raises(SetupError) as info:
        new_game(variant, ["a", "b"], {}, 0, [deal], Random(0))
    assert info.value.field == field
    if message is not None:
        assert info.value.message == message


@pytest.mark.parametrize("variant", BOTH)
def test_arranged_deal_108_cards_dealer_of_a_later_hand(variant: str) -> None:
    """The second arranged deal is checked with the second dealer (seat 1) holding one more."""
    first = arrange(variant, [junk(variant, dealer=True), None])
    second = arrange(variant, [None, None], dealer=1)
    assert [len(h) for h in second["hands"]] == sizes(variant, 2, 1)
    new_game(variant, ["a", "b"], {}, 0, [first, second], Random(0))
    wrong = arrange(variant, [None, None], dealer=0)
    with pytest.raises(SetupError) as info:
        new_game(variant, ["a", "b"], {}, 0, [first, wrong], Random(0))
    assert info.value.field == "deals.1.hands.0"


@pytest.mark.parametrize(("rules", "knob"), [
    pytest.param({"ace": "around"}, "ace", id="R51-RUN never K-A-2: ace around is no knob value"),
    pytest.param({"opening_points": -1}, "opening_points", id="R51-OPEN negative points"),
    pytest.param({"max_wilds_per_meld": 0}, "max_wilds_per_meld", id="R51-WILDS 0 refused"),
    pytest.param({"joker_swap_from_set": "three"}, "joker_swap_from_set",
                 id="R51-SWAP unknown joker_swap_from_set"),
    pytest.param({"last_card_call": "never"}, "last_card_call", id="R51-LAST unknown value"),
    pytest.param({"match_end": {"rounds": 2}}, "match_end", id="R51-END unknown match_end"),
    pytest.param({"scoring": "penalty"}, "scoring", id="R51-SCORE scoring is not a knob"),
])
def test_knob_values_checked(rules: dict[str, Any], knob: str) -> None:
    for variant in BOTH:
        with pytest.raises(RulesError) as info:
            new_game(variant, ["a", "b"], rules, 0, None, Random(0))
        assert info.value.knob == knob


@pytest.mark.parametrize("variant", BOTH)
def test_default_knobs(variant: str) -> None:
    state, _ = new_game(variant, ["a", "b"], None, 0, None, Random(0))
    assert state.rules == {
        "ace": "high_or_low", "opening_points": 51, "opening_requires_clean_run": True,
        "opening_counts_lay_offs": True, "max_wilds_per_meld": 1,
        "joker_swap_from_set": "four_only", "allow_take_from_meld": False,
        "last_card_call": "required", "must_discard_to_go_out": True, "joker_penalty": 20,
        "stock_exhausted": "shuffle", "max_stock_rebuilds": 3,
        "match_end": {"target": 1000}, "clock": None}


# ---------------------------------------------------------------------------------------
# R51-SET, R51-RUN, R51-WILDS, C-MELD readings (one meld on its own)

MeldOk = tuple[str, list[str], list[str], int]  # kind, cards in order, identities, points

TWO_ACES = [*(r + "S" for r in "A23456789TJQK"), "AS"]
MELDS: list[Any] = []
for _v in BOTH:
    _ace_low = 6 if _v == R51 else 15
    _ace_high = 31 if _v == R51 else 30
    _aces = 33 if _v == R51 else 30
    _two_aces = 96 if _v == R51 else 104
    MELDS += [
        pytest.param(_v, {}, "7D 7S 7H", ("set", ["7S", "7H", "7D"], ["7S", "7H", "7D"], 21),
                     id=f"R51-SET three suits ({_v})"),
        pytest.param(_v, {}, "7C 7D 7S 7H",
                     ("set", ["7S", "7H", "7D", "7C"], ["7S", "7H", "7D", "7C"], 28),
                     id=f"R51-SET four suits ({_v})"),
        pytest.param(_v, {}, "7S 7S 7H",
                     [(Code.INVALID_MELD, "R51-SET",
                       "not a set: its suits must differ, S appears twice"),
                      (Code.INVALID_MELD, "R51-RUN",
                       "not a run: a run is of one suit, these are H, S")],
                     id=f"R51-SET two copies of one card refused ({_v})"),
        pytest.param(_v, {}, "7S 7H 7D 7C 7S",
                     [(Code.INVALID_MELD, "R51-SET", "a set holds at most 4 cards, got 5"),
                      (Code.INVALID_MELD, "R51-RUN",
                       "not a run: a run is of one suit, these are C, D, H, S")],
                     id=f"R51-SET five cards refused ({_v})"),
        pytest.param(_v, {}, "7S 7H",
                     [(Code.INVALID_MELD, "C-SET", "a meld needs at least 3 cards, got 2")],
                     id=f"C-SET two cards are no meld ({_v})"),
        pytest.param(_v, {}, "AS AH AD",
                     ("set", ["AS", "AH", "AD"], ["AS", "AH", "AD"], _aces),
                     id=f"R51-VALUE a set of aces is worth {_aces} ({_v})"),
        pytest.param(_v, {}, "7S 7H JK", ("set", ["7S", "7H", "JK"], ["7S", "7H", "7*"], 21),
                     id=f"C-WILD a joker in a 3-card set: suit open ({_v})"),
        pytest.param(_v, {}, "JK 7S 7H 7D",
                     ("set", ["7S", "7H", "7D", "JK"], ["7S", "7H", "7D", "7C"], 28),
                     id=f"C-WILD a joker in a 4-card set is the suit left ({_v})"),
        pytest.param(_v, {}, "7S 7H JK=7D",
                     ("set", ["7S", "7H", "JK"], ["7S", "7H", "7D"], 21),
                     id=f"C-MELD a declared set identity honoured ({_v})"),
        pytest.param(_v, {}, "7S 7H JK=7S",
                     [(Code.INVALID_MELD, "R51-SET",
                       "not a set: its suits must differ, S appears twice"),
                      (Code.INVALID_MELD, "R51-RUN",
                       "not a run: a run is of one suit, these are H, S")],
                     id=f"R51-SET a joker declared as a suit present refused ({_v})"),
        pytest.param(_v, {}, "3S AS 2S",
                     ("run", ["AS", "2S", "3S"], ["AS", "2S", "3S"], _ace_low),
                     id=f"R51-RUN ace low A-2-3 worth {_ace_low} ({_v})"),
        pytest.param(_v, {}, "AS QS KS",
                     ("run", ["QS", "KS", "AS"], ["QS", "KS", "AS"], _ace_high),
                     id=f"R51-RUN ace high Q-K-A worth {_ace_high} ({_v})"),
        pytest.param(_v, {}, "KS AS 2S",
                     [(Code.INVALID_MELD, "R51-SET", "not a set: ranks differ (A, 2, K)"),
                      (Code.INVALID_MELD, "R51-RUN",
                       "not a run: the ranks are not consecutive (the ace is low (A-2-3) or "
                       "high (Q-K-A), never K-A-2)")],
                     id=f"R51-RUN never K-A-2 ({_v})"),
        pytest.param(_v, {}, " ".join(TWO_ACES), ("run", TWO_ACES, TWO_ACES, _two_aces),
                     id=f"R51-RUN A-2-...-K-A with both aces ({_v})"),
        pytest.param(_v, {"ace": "low"}, "QS KS AS",
                     [(Code.INVALID_MELD, "R51-SET", "not a set: ranks differ (A, Q, K)"),
                      (Code.INVALID_MELD, "R51-RUN",
                       "not a run: the ranks are not consecutive (the ace is low only: "
                       "A-2-3, never Q-K-A)")],
                     id=f"R51-RUN knob ace low: Q-K-A refused ({_v})"),
        pytest.param(_v, {}, "5S 6H 7S",
                     [(Code.INVALID_MELD, "R51-SET", "not a set: ranks differ (5, 6, 7)"),
                      (Code.INVALID_MELD, "R51-RUN",
                       "not a run: a run is of one suit, these are H, S")],
                     id=f"R51-RUN one suit ({_v})"),
        pytest.param(_v, {}, "5S 5S 6S",
                     [(Code.INVALID_MELD, "R51-SET", "not a set: ranks differ (5, 6)"),
                      (Code.INVALID_MELD, "R51-RUN", "not a run: 5 appears twice")],
                     id=f"R51-RUN no position twice ({_v})"),
        pytest.param(_v, {}, "TH JH JK", ("run", ["TH", "JH", "JK"], ["TH", "JH", "QH"], 30),
                     id=f"C-MELD the highest reading: J-Q over 9-T ({_v})"),
        pytest.param(_v, {}, "9H JK JH", ("run", ["9H", "JK", "JH"], ["9H", "TH", "JH"], 29),
                     id=f"R51-WILDS a joker anywhere in a run: the gap ({_v})"),
        pytest.param(_v, {}, "JK 2S 3S",
                     ("run", ["2S", "3S", "JK"], ["2S", "3S", "4S"], 9) if _v == R51 else
                     ("run", ["JK", "2S", "3S"], ["AS", "2S", "3S"], 15),
                     id=f"C-MELD the highest reading of JK 2S 3S ({_v})"),
        pytest.param(_v, {}, "JK=AS 2S 3S",
                     ("run", ["JK", "2S", "3S"], ["AS", "2S", "3S"], _ace_low),
                     id=f"C-MELD a declared run identity honoured ({_v})"),
        pytest.param(_v, {}, "QS KS JK",
                     ("run", ["QS", "KS", "JK"], ["QS", "KS", "AS"], _ace_high),
                     id=f"C-MELD Q-K-JK reads the high ace ({_v})"),
        pytest.param(_v, {}, "KS KH JK", ("set", ["KS", "KH", "JK"], ["KS", "KH", "K*"], 30),
                     id=f"C-MELD K-K-JK is a set ({_v})"),
        pytest.param(_v, {}, "5H JK=6S 7H",
                     [(Code.INVALID_MELD, "R51-SET", "not a set: ranks differ (5, 7)"),
                      (Code.INVALID_MELD, "R51-RUN",
                       "not a run: a run is of one suit, these are H, S")],
                     id=f"C-MELD a declared identity of another suit refused ({_v})"),
        pytest.param(_v, {}, "7S JK JK",
                     [(Code.TOO_MANY_WILDS, "R51-WILDS", "2 jokers in one meld, at most 1")],
                     id=f"R51-WILDS two jokers in a run refused ({_v})"),
        pytest.param(_v, {}, "7S 7H JK JK",
                     [(Code.TOO_MANY_WILDS, "R51-WILDS", "2 jokers in one meld, at most 1")],
                     id=f"R51-WILDS two jokers in a set refused ({_v})"),
    ]
MELDS += [
    pytest.param(R51, {"max_wilds_per_meld": 2}, "7S JK JK",
                 ("run", ["7S", "JK", "JK"], ["7S", "8S", "9S"], 24),
                 id="R51-WILDS knob 2: 7S JK JK reads 7-8-9 (24 over a set of 21)"),
    pytest.param(R51, {"max_wilds_per_meld": 2}, "7S 7H JK JK JK",
                 [(Code.TOO_MANY_WILDS, "R51-WILDS", "3 jokers in one meld, at most 2"),
                  (Code.INVALID_MELD, "R51-SET", "a set holds at most 4 cards, got 5"),
                  (Code.INVALID_MELD, "R51-RUN",
                   "not a run: a run is of one suit, these are H, S")],
                 id="R51-WILDS knob 2: three jokers refused (every reason listed)"),
    pytest.param(R51, {"max_wilds_per_meld": None}, "7S JK JK JK",
                 ("run", ["7S", "JK", "JK", "JK"], ["7S", "8S", "9S", "TS"], 34),
                 id="R51-WILDS knob null: no limit"),
    pytest.param(R51, {"max_wilds_per_meld": None}, "JK JK JK",
                 [(Code.INVALID_MELD, "C-MELD",
                   "a meld must hold at least one natural (non-wild) card")],
                 id="C-MELD at least one natural card"),
    pytest.param(L14, {}, "QS KS JK", ("run", ["QS", "KS", "JK"], ["QS", "KS", "AS"], 30),
                 id="C-MELD L14 J or A both worth 10: the highest position (the ace)"),
]


@pytest.mark.parametrize(("variant", "knobs", "text", "expected"), MELDS)
def test_meld_shapes(variant: str, knobs: dict[str, Any], text: str,
                     expected: MeldOk | list[tuple[Code, str, str]]) -> None:
    pieces = [piece(t) for t in text.split()]
    if isinstance(expected, list):
        with pytest.raises(MeldError) as info:
            check_meld(pieces, shape(variant, knobs))
        assert [(r.code, r.rule, r.detail) for r in info.value.reasons] == expected
        return
    meld = check_meld(pieces, shape(variant, knobs))
    assert (meld.kind, list(meld.cards), list(meld.idents), meld.points) == expected


@pytest.mark.parametrize("variant", BOTH)
def test_meld_errors_in_a_game_cite_r51_ids(variant: str) -> None:
    """The same reasons come back from a game's meld action, with RULES.md ids."""
    state = opener_turn(variant, "KS AS 2S")
    assert_refused(state, 1, "meld KS AS 2S",
                   (Code.INVALID_MELD, "R51-SET", "not a set: ranks differ (A, 2, K)"),
                   (Code.INVALID_MELD, "R51-RUN",
                    "not a run: the ranks are not consecutive (the ace is low (A-2-3) or high "
                    "(Q-K-A), never K-A-2)"))


# ---------------------------------------------------------------------------------------
# R51-VALUE, R51-OPEN


def opener_turn(variant: str, hand: str, rules: dict[str, Any] | None = None,
                first: str = "4C", drawn: str = "5H") -> GameState:
    """Seat 0 (dealer, junk) discarded ``first``; seat 1 holds ``hand`` (filled up) and drew
    ``drawn`` from the stock: seat 1 is to meld."""
    state = start(variant, [junk(variant, dealer=True, first=first), hand], stock=drawn,
                  rules=rules)
    state, _ = play(state, (0, f"discard {first}"), (1, "draw stock"))
    return state


TOO_LOW = Code.OPENING_TOO_LOW
CLEAN = (Code.OPENING_NEEDS_CLEAN_RUN, "R51-OPEN",
         "the opening needs a run of 3 or more cards without a joker")


def low(points: int, needed: int = 51) -> tuple[Code, str, str]:
    return (TOO_LOW, "R51-OPEN", f"opening worth {points} points, {needed} needed")


OPENINGS: list[Any] = []
for _v in BOTH:
    r51 = _v == R51
    OPENINGS += [
        pytest.param(_v, {}, "9H TH JH QH / KS KH KD", 69, [],
                     id=f"R51-OPEN 69 points accepted ({_v})"),
        pytest.param(_v, {}, "7H 8H 9H / 8S 8D 8C", 48, [low(48)],
                     id=f"R51-OPEN 48 points refused ({_v})"),
        pytest.param(_v, {}, "TH JH QH / 7S 7D 7C", 51, [],
                     id=f"R51-OPEN exactly 51 points accepted ({_v})"),
        pytest.param(_v, {}, "TS JS QS / 6H 6D JK", 48, [low(48)],
                     id=f"R51-VALUE a joker counts as its card: 6 ({_v})"),
        pytest.param(_v, {}, "TS JS QS / 7H 7D JK", 51, [],
                     id=f"R51-VALUE a joker counts as its card: 7, 51 accepted ({_v})"),
        pytest.param(_v, {}, "QH KH AH / 6S 6D 6C", 49 if r51 else 48,
                     [low(49 if r51 else 48)],
                     id=f"R51-VALUE a high ace counts {11 if r51 else 10} ({_v})"),
        pytest.param(_v, {}, "AC 2C 3C / KS KH KD / 4S 4H 4D", 48 if r51 else 57,
                     [low(48)] if r51 else [],
                     id=f"R51-VALUE a low ace counts {1 if r51 else 10} ({_v})"),
        pytest.param(_v, {}, "AS AH AD / 5C 6C 7C", 51 if r51 else 48,
                     [] if r51 else [low(48)],
                     id=f"R51-VALUE an ace in a set counts {11 if r51 else 10} ({_v})"),
        pytest.param(_v, {"opening_points": 71}, "9H TH JH QH / KS KH KD", 69, [low(69, 71)],
                     id=f"R51-OPEN knob 71: 69 points refused ({_v})"),
        pytest.param(_v, {"opening_points": 71}, "9H TH JH QH / KS KH KD / 4S 4D 4C", 81, [],
                     id=f"R51-OPEN knob 71: 81 points accepted ({_v})"),
        pytest.param(_v, {"opening_points": 81}, "9H TH JH QH / KS KH KD / 3S 3D 3C", 78,
                     [low(78, 81)], id=f"R51-OPEN knob 81: 78 points refused ({_v})"),
        pytest.param(_v, {"opening_points": 81}, "9H TH JH QH / KS KH KD / 4S 4D 4C", 81, [],
                     id=f"R51-OPEN knob 81: exactly 81 accepted ({_v})"),
        pytest.param(_v, {}, "KS KH KD / QS QH QD", 60, [CLEAN],
                     id=f"R51-OPEN sets only: a clean run is needed ({_v})"),
        pytest.param(_v, {"opening_requires_clean_run": False}, "KS KH KD / QS QH QD", 60, [],
                     id=f"R51-OPEN knob opening_requires_clean_run false ({_v})"),
        pytest.param(_v, {}, "KS KH KD / 5S 5H 5D", 45, [low(45), CLEAN],
                     id=f"R51-OPEN too low and no clean run: both reasons ({_v})"),
        pytest.param(_v, {"opening_points": 0, "opening_requires_clean_run": False},
                     "5S 5H 5D", 15, [], id=f"R51-OPEN knobs 0 points, no run ({_v})"),
    ]


OPENINGS += [
    pytest.param(R51, {}, "TS JK QS / KS KH KD", 60, [CLEAN],
                 id="R51-OPEN a run with a joker is not clean"),
    pytest.param(L14, {}, "TS JK QS / KS KH KD", 60,
                 [(Code.WILD_NOT_ALLOWED, "L14-JOKER-RUN",
                   "meld 1 (TS JK QS): a joker may stand for JS in a run only once both JSs "
                   "are in melds on the table")],
                 id="L14-JOKER-RUN a joker for JS in the opening run refused"),
]


@pytest.mark.parametrize(("variant", "rules", "meld", "points", "reasons"), OPENINGS)
def test_opening(variant: str, rules: dict[str, Any], meld: str, points: int,
                 reasons: list[tuple[Code, str, str]]) -> None:
    hand = " ".join(c.partition("=")[0] for c in meld.split() if c != "/")
    state = opener_turn(variant, hand, rules)
    if reasons:
        assert_refused(state, 1, f"meld {meld}", *reasons)
        return
    state, events = play(state, (1, f"meld {meld}"))
    assert state.melded == [False, True]
    assert state.turn_points == points
    assert sum(m.points for m in state.melds) == points
    assert [s["opened"] for s in public_view(state, "g", 3)["seats"]] == [False, True]
    (event,) = events_of(events, "meld")
    assert [m["cards"] for m in event["melds"]] == [m.cards for m in state.melds]
    state, _ = play(state, (1, "discard 5H"))
    assert (state.turn, state.melded) == (0, [False, True])


@pytest.mark.parametrize("variant", BOTH)
def test_after_the_opening_melds_have_no_minimum(variant: str) -> None:
    state = opener_turn(variant, "9H TH JH QH KS KH KD 5S 5D 5C")
    state, _ = play(state, (1, "meld 9H TH JH QH / KS KH KD"), (1, "meld 5S 5D 5C"))
    assert state.turn_points == 84


def test_opening_is_the_first_meld_action_not_the_sum_of_several() -> None:
    state = opener_turn(R51, "9H TH JH QH KS KH KD")
    assert_refused(state, 1, "meld 9H TH JH QH", low(39))
    assert_refused(state, 1, "meld KS KH KD", low(30), CLEAN)


def _opened_seat1(variant: str, rules: dict[str, Any], seat0: str,
                  stock: str = "2H 3S") -> GameState:
    """Seat 1 opened 9H-QH (m1) and KS KH KD (m2) and discarded; seat 0 drew: to play."""
    state = start(variant, [seat0, "9H TH JH QH KS KH KD"], stock=stock, rules=rules)
    return play(state, (0, "discard 4C"), (1, "draw stock"),
                (1, "meld 9H TH JH QH / KS KH KD"), (1, "discard 2H"), (0, "draw stock"))[0]


LAYOFF_OPENER = "4C 5C 6C 7C 8S 8D 8C KC 8H"


@pytest.mark.parametrize(("variant", "rules", "meld", "reasons", "points"), [
    pytest.param(v, {}, "meld 5C 6C 7C / 8S 8D 8C + m2 KC", [], 52,
                 id=f"R51-OPEN lay-offs in the opening count: 42 + KC = 52 ({v})")
    for v in BOTH
] + [
    pytest.param(v, {}, "meld 5C 6C 7C / 8S 8D 8C + m1 8H", [low(50)], 50,
                 id=f"R51-OPEN lay-offs in the opening count: 42 + 8H = 50 refused ({v})")
    for v in BOTH
] + [
    pytest.param(v, {"opening_counts_lay_offs": False}, "meld 5C 6C 7C / 8S 8D 8C + m2 KC",
                 [low(42)], 42,
                 id=f"R51-OPEN knob opening_counts_lay_offs false: 42 counted ({v})")
    for v in BOTH
] + [
    pytest.param(v, {"opening_counts_lay_offs": False},
                 "meld 5C 6C 7C / 8S 8D 8C / KC KS KH", [], 72,
                 id=f"R51-OPEN knob opening_counts_lay_offs false: melds alone ({v})")
    for v in BOTH
])
def test_opening_with_lay_offs(variant: str, rules: dict[str, Any], meld: str,
                               reasons: list[tuple[Code, str, str]], points: int) -> None:
    seat0 = LAYOFF_OPENER + (" KS KH" if "KS" in meld else "")
    state = _opened_seat1(variant, rules, seat0)
    if reasons:
        assert_refused(state, 0, meld, *reasons)
        return
    state, _ = play(state, (0, meld))
    assert state.melded == [True, True]
    assert state.turn_points == points


@pytest.mark.parametrize("variant", BOTH)
def test_before_opening_no_lay_off_and_no_swap(variant: str) -> None:
    state = _opened_seat1(variant, {}, LAYOFF_OPENER)
    assert_refused(state, 0, "lay m2 KC",
                   (Code.NOT_OPENED, "R51-OPEN", "lay-offs come only after your opening"))
    assert_refused(state, 0, "swap m1 8H",
                   (Code.NOT_OPENED, "R51-SWAP", "only a player who has opened may swap a "
                                                 "joker"))
    assert_refused(state, 0, "meld 5C 6C 7C / 8S 8D 8C + m3 KC",
                   (Code.INVALID_LAY_OFF, "C-LAYOFF",
                    "lay off on melds already on the table; put these cards in the new meld "
                    "instead"))
    # after the opening (in the same turn) lay-offs are fine
    state, _ = play(state, (0, "meld 5C 6C 7C / 8S 8D 8C + m2 KC"), (0, "lay m1 8H"))
    assert meld_of(state, "m1")[2] == ["8H", "9H", "TH", "JH", "QH"]


# ---------------------------------------------------------------------------------------
# R51-DRAW, L14-DRAW

DRAW_HAND = "6H 7H KS KH KD QS QD QC 2C 3C 4C 9D JS"
"""With 8H: 6H 7H 8H (21) + KS KH KD (30) + QS QD QC (30) = 81."""


def draw_turn(variant: str, hand: str, first: str,
              rules: dict[str, Any] | None = None) -> GameState:
    """Seat 0 (dealer, junk) discarded ``first``; seat 1 (``hand``) is to draw."""
    state = start(variant, [junk(variant, dealer=True, first=first), hand], stock="5H",
                  rules=rules)
    return play(state, (0, f"discard {first}"))[0]


@pytest.mark.parametrize("variant", BOTH)
def test_draw_discard_must_be_used_to_open(variant: str) -> None:
    state = draw_turn(variant, DRAW_HAND + (" TD" if variant == L14 else ""), "8H")
    state, events = play(state, (1, "draw discard"))
    assert events == [{"type": "draw", "seat": 1, "source": "discard", "card": "8H"}]
    assert (state.taken, state.discard) == ("8H", [])
    assert_refused(state, 1, "discard 9D",
                   (Code.DISCARD_NOT_USED, "R51-DRAW",
                    "8H, taken from the discard pile, must be put on the table before you "
                    "discard"))
    assert_refused(state, 1, "discard 8H",
                   (Code.DISCARD_TAKEN_CARD, "C-DISCARD-BACK",
                    "8H was just taken from the discard pile"))
    assert_refused(state, 1, "meld 2C 3C 4C / KS KH KD / QS QD QC",
                   (Code.DISCARD_NOT_USED, "R51-DRAW",
                    "having taken 8H from the discard pile you must open with it"))
    state, _ = play(state, (1, "meld 6H 7H 8H / KS KH KD / QS QD QC"), (1, "discard 9D"))
    assert state.melded == [False, True]
    assert state.discard == ["9D"]


def test_draw_discard_a_copy_already_held_may_go_once_the_taken_one_is_used() -> None:
    """C-DISCARD-BACK with two decks: seat 1 held 8H and took the other 8H."""
    state = draw_turn(R51, "6H 7H 8H KS KH KD QS QD QC 2C 3C 4C 9D", "8H")
    state, _ = play(state, (1, "draw discard"))
    assert (state.taken, state.taken_before) == ("8H", 1)
    assert_refused(state, 1, "discard 8H",
                   (Code.DISCARD_NOT_USED, "R51-DRAW",
                    "8H, taken from the discard pile, must be put on the table before you "
                    "discard"))
    state, _ = play(state, (1, "meld 6H 7H 8H / KS KH KD / QS QD QC"), (1, "discard 8H"))
    assert state.discard == ["8H"]


@pytest.mark.parametrize(("variant", "hand", "first", "detail"), [
    pytest.param(R51, DRAW_HAND, "5S",
                 "5S could not be put on the table this turn: the discard may be taken only "
                 "to be used at once", id="R51-DRAW a card that fits nothing cannot be taken"),
    pytest.param(L14, DRAW_HAND + " TD", "5S",
                 "5S could not be put on the table this turn with 71 points put down: the "
                 "discard may be taken only to be used at once",
                 id="L14-DRAW a card that fits nothing cannot be taken"),
    pytest.param(R51, "6H 7H 2S 5D 9C JD 3S TC 4H KC 8D QS AH", "8H",
                 "8H could not be put on the table this turn: the discard may be taken only "
                 "to be used at once",
                 id="R51-DRAW unopened: a card that fits a run worth too little for an opening"),
    pytest.param(L14, "6H 7H KS KH KD 2C 3C 4C 9D JS TD 5S AH 2D", "8H",
                 "8H could not be put on the table this turn with 71 points put down: the "
                 "discard may be taken only to be used at once",
                 id="L14-DRAW unopened: an opening of 60 with it is not 71"),
])
def test_draw_discard_forbidden(variant: str, hand: str, first: str, detail: str) -> None:
    state = draw_turn(variant, hand, first)
    rule = "R51-DRAW" if variant == R51 else "L14-DRAW"
    assert_refused(state, 1, "draw discard", (Code.DISCARD_DRAW_FORBIDDEN, rule, detail))
    state, _ = play(state, (1, "draw stock"))  # the stock is always fine


def test_r51_draw_an_opening_of_60_is_enough_in_r51() -> None:
    state = draw_turn(R51, "6H 7H KS KH KD 2C 3C 4C 9D JS TD 5S AH", "8H")
    state, _ = play(state, (1, "draw discard"), (1, "meld 6H 7H 8H / 2C 3C 4C / KS KH KD"),
                    (1, "discard 9D"))
    assert state.melded == [False, True]


def assert_short_of_71(state: GameState, seat: int, card: str, so_far: int) -> None:
    """L14-DRAW: the seat took the discard and has put down ``so_far`` points this turn,
    so discarding ``card`` is refused."""
    assert_refused(state, seat, f"discard {card}",
                   (Code.DISCARD_DRAW_FORBIDDEN, "L14-DRAW",
                    "having taken the discard you must put down 71 points this turn; "
                    f"{so_far} so far"))


def test_l14_draw_71_points_that_turn() -> None:
    state = draw_turn(L14, DRAW_HAND + " TD", "8H")
    state, _ = play(state, (1, "draw discard"), (1, "meld 6H 7H 8H / 2C 3C 4C / KS KH KD"))
    assert state.turn_points == 60
    assert_short_of_71(state, 1, "9D", so_far=60)
    state, _ = play(state, (1, "meld QS QD QC"), (1, "discard 9D"))
    assert state.history == [] and state.turn == 0


def test_l14_draw_a_move_after_which_71_is_out_of_reach_is_refused() -> None:
    hand = "6H 7H KS KH KD 2C 3C 4C QS QD JK 9D JS TD"
    state = draw_turn(L14, hand, "8H")
    state, _ = play(state, (1, "draw discard"), (1, "meld 6H 7H 8H / 2C 3C 4C / KS KH KD"))
    # laying the joker off on the kings (70) leaves QS QD: 71 could no longer be reached
    assert_refused(state, 1, "lay m3 JK",
                   (Code.DISCARD_DRAW_FORBIDDEN, "L14-DRAW",
                    "after this, 71 points could no longer be put down this turn"))
    state, _ = play(state, (1, "meld QS QD JK"), (1, "discard 9D"))
    assert state.turn == 0


def l14_lay_offs_reach_71() -> GameState:
    """L14: seat 0 opened with sets of kings and queens and discarded 7H; seat 1 (not
    opened) can open with 5H 6H 7H / JS JH JD / 4S 4C 4D (60) and lay off KC and QC on those
    sets (+20): 80, the 71 of L14-DRAW counting lay-offs as melding points."""
    state = start(L14, ["KS KH KD QS QH QD AD 2D 3D 5C 8C JC 4H 7S 7H",
                        "5H 6H JS JH JD 4S 4C 4D KC QC 8S 2C 9D TC"], stock="3S 5D 6S 6D")
    state, _ = play(state, (0, "discard 4H"), (1, "draw stock"), (1, "discard 3S"),
                    (0, "draw stock"), (0, "meld KS KH KD / QS QH QD / AD 2D 3D"),
                    (0, "discard 7H"))
    assert state.melded == [True, False]
    return state


def test_l14_draw_lay_offs_count_toward_the_71_in_one_opening_action() -> None:
    state, _ = play(l14_lay_offs_reach_71(), (1, "draw discard"),
                    (1, "meld 5H 6H 7H / JS JH JD / 4S 4C 4D + m1 KC + m2 QC"))
    assert state.turn_points == 80
    state, _ = play(state, (1, "discard 9D"))
    assert state.melded == [True, True]


def test_l14_draw_lay_offs_after_the_opening_make_up_the_71() -> None:
    state, _ = play(l14_lay_offs_reach_71(), (1, "draw discard"),
                    (1, "meld 5H 6H 7H / JS JH JD / 4S 4C 4D"))
    assert state.turn_points == 60
    state, _ = play(state, (1, "lay m1 KC"))
    assert_short_of_71(state, 1, "9D", so_far=70)
    state, _ = play(state, (1, "lay m2 QC"), (1, "discard 9D"))
    assert state.turn_points == 0 and state.turn == 0


def test_l14_the_listing_offers_the_opening_with_its_lay_offs() -> None:
    state, _ = play(l14_lay_offs_reach_71(), (1, "draw discard"))
    compound = legal_moves(state, 1).compound
    assert compound is not None
    assert compound["exists"] is True, compound
    example = compound["example"]
    assert example["lay_offs"], example
    new, _ = apply(state, 1, move_from_dict(example), Random(1))
    assert new.turn_points >= 71 and new.melded[1]


def test_l14_two_cards_laid_off_on_one_run_make_up_the_71() -> None:
    """Found by the fuzzer: the 71 needs QH and KH laid off on the same run after an
    opening of 54. The lay-offs of one meld action are each read against the run as it
    was, so KH cannot follow QH in a lay-off of its own; the two go on in one lay-off.
    The draw was once accepted on the plan of two lay-offs (leaving the seat no legal
    move), then refused (the search laid at most one card on a meld); it is legal, and the
    listing offers the opening that makes it good."""
    state = start(L14, ["5H 6H 7H 8H 9H TH JH 5C 2S 4D 6D 8S TS QD AC",
                        "JS JC JD 2C 3C 4C 5S 5D QH KH 7S 9D 3H 8C"], stock="3S 6S 9C")
    state, _ = play(state, (0, "discard AC"), (1, "draw stock"), (1, "discard 3S"),
                    (0, "draw stock"), (0, "meld 5H 6H 7H 8H 9H TH JH"), (0, "discard 5C"))
    state, _ = play(state, (1, "draw discard"))
    listed = legal_moves(state, 1)
    assert listed.compound is not None and listed.compound["exists"] is True, listed
    example = listed.compound["example"]
    assert {"meld_id": "m1", "cards": ["QH", "KH"]} in example["lay_offs"], example
    new, _ = apply(state, 1, move_from_dict(example), Random(1))
    assert new.turn_points >= 71 and new.melded == [True, True]
    # the same by hand: one lay-off of both cards, and the discard that ends the turn
    new, _ = play(state, (1, "meld JS JC JD / 5S 5D 5C / 2C 3C 4C + m1 QH KH"),
                  (1, "discard 9D"))
    assert meld_of(new, "m1")[2][-2:] == ["QH", "KH"] and new.turn == 0


def test_r51_draw_same_lay_off_is_fine_without_the_71_rule() -> None:
    state = draw_turn(R51, "6H 7H KS KH KD 2C 3C 4C QS QD JK 9D JS", "8H")
    state, _ = play(state, (1, "draw discard"), (1, "meld 6H 7H 8H / 2C 3C 4C / KS KH KD"),
                    (1, "lay m3 JK"), (1, "discard 9D"))
    assert meld_of(state, "m3")[3] == ["KS", "KH", "KD", "KC"]


# ---------------------------------------------------------------------------------------
# Both players opened: R51-WILDS on the table, R51-JOKER-OPP, R51-SWAP, R51-TAKE

SEAT1_MELD = {R51: "meld 9H TH JH QH / 5D JK 7D / KS KH KD",
              L14: "meld 9H TH JH QH / 5D 5S JK / KS KH KD"}
SEAT0_MELD = "meld TS JS QS / 5C 6C 7C / 9C 9H JK"


def both_opened(variant: str, drawn: str, rules: dict[str, Any] | None = None,
                more: str = "") -> GameState:
    """m1 9H-QH, m2 5D JK(6D) 7D in R51 / 5D 5S JK in L14, m3 KS KH KD (seat 1);
    m4 TS JS QS, m5 5C 6C 7C, m6 9C 9H JK (seat 0, the joker's suit open).
    Seat 1 holds 6D 9S 9D (+ 2D in L14) and has just drawn ``drawn``."""
    seat0 = SEAT0_OPEN + (" 3C" if variant == L14 else "")
    state = start(variant, [seat0, SEAT1_OPEN[variant]], stock=f"2C 6S {drawn} {more}",
                  rules=rules)
    state, _ = play(state, (0, "discard 4C"), (1, "draw stock"), (1, SEAT1_MELD[variant]),
                    (1, "discard 2C"), (0, "draw stock"), (0, SEAT0_MELD), (0, "discard 6S"),
                    (1, "draw stock"))
    assert state.melded == [True, True]
    assert meld_of(state, "m6") == (0, "set", ["9H", "9C", "JK"], ["9H", "9C", "9*"], 27)
    return state


def test_table_readings_are_recorded() -> None:
    state = both_opened(R51, "8S")
    assert meld_of(state, "m2") == (1, "run", ["5D", "JK", "7D"], ["5D", "6D", "7D"], 18)
    view = public_view(state, "g", 9)
    assert view["melds"][1]["wilds"] == [{"index": 1, "card": "JK", "as": "6D"}]
    assert view["melds"][5]["wilds"] == [{"index": 2, "card": "JK", "as": "9*"}]
    state = both_opened(L14, "8S")
    assert meld_of(state, "m2") == (1, "set", ["5S", "5D", "JK"], ["5S", "5D", "5*"], 15)


WILDS_ONE = (Code.TOO_MANY_WILDS, "R51-WILDS", "a meld may hold at most 1 wild(s)")


@pytest.mark.parametrize(("variant", "move", "reasons"), [
    pytest.param(R51, "lay m2 JK", [WILDS_ONE],
                 id="R51-WILDS a second joker on one's own run refused"),
    pytest.param(R51, "lay m6 JK", [WILDS_ONE],
                 id="R51-WILDS a second joker on a set refused (R51)"),
    pytest.param(L14, "lay m6 JK", [WILDS_ONE],
                 id="R51-WILDS a second joker on a set refused (L14)"),
    pytest.param(L14, "lay m2 JK", [WILDS_ONE],
                 id="R51-WILDS a second joker on one's own set refused (L14)"),
    pytest.param(R51, "lay m4 JK",
                 [(Code.WILD_NOT_ALLOWED, "R51-JOKER-OPP",
                   "a joker may not be laid off on an opponent's run")],
                 id="R51-JOKER-OPP a joker on an opponent's run refused (R51)"),
    pytest.param(L14, "lay m5 JK",
                 [(Code.WILD_NOT_ALLOWED, "R51-JOKER-OPP",
                   "a joker may not be laid off on an opponent's run")],
                 id="R51-JOKER-OPP a joker on an opponent's run refused (L14)"),
    pytest.param(R51, "lay m1 JK", [], id="R51-JOKER-OPP a joker on one's own run: yes"),
    pytest.param(R51, "lay m3 JK", [], id="R51-JOKER-OPP a joker on one's own set: yes (R51)"),
    pytest.param(L14, "lay m3 JK", [], id="R51-JOKER-OPP a joker on one's own set: yes (L14)"),
])
def test_jokers_laid_off(variant: str, move: str,
                         reasons: list[tuple[Code, str, str]]) -> None:
    state = both_opened(variant, "JK")
    if reasons:
        assert_refused(state, 1, move, *reasons)
        return
    state, _ = play(state, (1, move))
    meld_id = move.split()[1]
    assert {"m1": ["9H", "TH", "JH", "QH", "KH"],
            "m3": ["KS", "KH", "KD", "KC"]}[meld_id] == meld_of(state, meld_id)[3]


@pytest.mark.parametrize("variant", BOTH)
def test_joker_opp_any_set_of_an_opponent(variant: str) -> None:
    """Seat 0 lays a joker off on seat 1's set of kings (an opponent's set: allowed)."""
    state = both_opened(variant, "8S", more="JK")
    state, _ = play(state, (1, "discard 8S"), (0, "draw stock"))
    assert_refused(state, 0, "lay m1 JK",
                   (Code.WILD_NOT_ALLOWED, "R51-JOKER-OPP",
                    "a joker may not be laid off on an opponent's run"))
    state, _ = play(state, (0, "lay m3 JK"))
    assert meld_of(state, "m3") == (1, "set", ["KS", "KH", "KD", "JK"],
                                    ["KS", "KH", "KD", "KC"], 40)


def test_wilds_knob_two_jokers_per_meld() -> None:
    state = both_opened(R51, "JK", rules={"max_wilds_per_meld": 2})
    state, _ = play(state, (1, "lay m6 JK"))
    assert meld_of(state, "m6")[2:4] == (["9H", "9C", "JK", "JK"], ["9H", "9C", "9*", "9*"])
    state = both_opened(R51, "JK", rules={"max_wilds_per_meld": 2})
    state, _ = play(state, (1, "lay m2 JK @low"))
    assert meld_of(state, "m2")[3] == ["4D", "5D", "6D", "7D"]


@pytest.mark.parametrize(("rules", "allowed"), [
    pytest.param({}, True, id="R51-DRAW the taken card laid off in the opening action (it "
                              "counts: 42 + KC = 52)"),
    pytest.param({"opening_counts_lay_offs": False}, False,
                 id="R51-DRAW knob opening_counts_lay_offs false: 42, KC cannot open"),
])
def test_draw_discard_used_in_an_opening_lay_off(rules: dict[str, Any], allowed: bool) -> None:
    """Seat 1 opened with KS KH KD (m2) and discarded KC; seat 0 can open only with
    5C 6C 7C / 8S 8D 8C (42) and KC laid off on m2 in the same meld action (R51-OPEN,
    knob opening_counts_lay_offs): a use of the taken card in the same turn (R51-DRAW)."""
    state = start(R51, ["4C 5C 6C 7C 8S 8D 8C", "9H TH JH QH KS KH KD"], stock="KC 3S",
                  rules=rules)
    state, _ = play(state, (0, "discard 4C"), (1, "draw stock"),
                    (1, "meld 9H TH JH QH / KS KH KD"), (1, "discard KC"))
    if not allowed:
        assert_refused(state, 0, "draw discard",
                       (Code.DISCARD_DRAW_FORBIDDEN, "R51-DRAW",
                        "KC could not be put on the table this turn: the discard may be taken "
                        "only to be used at once"))
        return
    state, _ = play(state, (0, "draw discard"))
    assert_refused(state, 0, "meld 5C 6C 7C / 8S 8D 8C", low(42),
                   (Code.DISCARD_NOT_USED, "R51-DRAW",
                    "having taken KC from the discard pile you must open with it"))
    state, _ = play(state, (0, "meld 5C 6C 7C / 8S 8D 8C + m2 KC"), (0, "discard 2D"))
    assert state.melded == [True, True]
    assert meld_of(state, "m2")[2] == ["KS", "KH", "KD", "KC"]


def test_l14_an_opened_player_takes_the_discard_for_melds_and_a_lay_off() -> None:
    """Seat 0 opened with 9D TD JD QD KD AD in an earlier turn. For the 71 after taking 7H
    it needs the melds 7H 8H 9H TH / JC JS JH (64) and 8D laid off on its run (72):
    neither the melds nor the lay-offs reach it alone."""
    state = start(L14, ["9D TD JD QD KD AD 8H 9H TH JC JS JH 8D 4S 2C",
                        "7H 2S 3C 5S 8S 9C 4C 6C TC 2D 3D 5C 9S AS"], stock="3S 5D 6S 6D")
    state, _ = play(state, (0, "discard 4S"), (1, "draw stock"), (1, "discard 3S"),
                    (0, "draw stock"), (0, "meld 9D TD JD QD KD AD"), (0, "discard 5D"),
                    (1, "draw stock"), (1, "discard 7H"), (0, "draw discard"))
    state, _ = play(state, (0, "meld 7H 8H 9H TH / JC JS JH"))
    assert state.turn_points == 64
    assert_short_of_71(state, 0, "2C", so_far=64)
    state, events = play(state, (0, "lay m1 8D"), (0, "discard 2C"))
    assert events_of(events, "hand_end"), events


@pytest.mark.skipif(COMPILED, reason="the engine is compiled (mypyc): a module's own calls "
                    "to another's functions do not look them up, so no spy sees them")
def test_the_search_for_lay_offs_with_melds_counts_its_steps_in_one_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Its meld searches share one budget of steps, and stay within it."""
    state = melds_and_lay_offs_open()
    spent: list[list[int]] = []
    real = search.best_combination

    def counted(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("spent") is not None:
            spent.append(kwargs["spent"])
        return real(*args, **kwargs)

    monkeypatch.setattr(search, "best_combination", counted)
    play(state, (1, "draw discard"))
    assert spent and 0 < spent[-1][0] <= planning.PUT_DOWN_STEPS


def test_the_search_for_lay_offs_with_melds_keeps_to_its_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Out of its budget of steps, the search claims nothing (the draw is refused),
    however many choices of cards are left to try."""
    state = melds_and_lay_offs_open()
    play(state, (1, "draw discard"))  # within the budget: the draw is taken
    monkeypatch.setattr(planning, "PUT_DOWN_STEPS", 1)
    assert_refused(state, 1, "draw discard",
                   (Code.DISCARD_DRAW_FORBIDDEN, "L14-DRAW",
                    "7H could not be put on the table this turn with 71 points put down: the "
                    "discard may be taken only to be used at once"))


@pytest.mark.parametrize("ace", ["low", "high_or_low"])
@pytest.mark.parametrize("variant", BOTH)
def test_the_lay_off_prefilter_never_refuses_cards_a_meld_takes(variant: str,
                                                                ace: str) -> None:
    """The turn's search asks ``Table.may_fit`` before reading a card onto a table meld
    with others laid on it; it may say yes to a card that does not go, never no to one
    that does (with the other cards laid, whatever their order). Runs and sets with and
    without a joker, and one to three cards near them."""
    game, _ = new_game(variant, ["a", "b"], {"ace": ace}, rng=Random(0))
    turn = Turn(game, 0, *context(game), Random(0))  # seat 0's, whose melds they are
    read = turn.shape
    assert read == shape(variant, {"ace": ace})
    rng = Random(f"{variant} {ace}")
    suits, taken = "SHDC", 0
    for _ in range(4000):
        if rng.random() < 0.5:
            suit, length = rng.choice(suits), rng.randint(3, 5)
            first = rng.randint(1, 15 - length)
            cards = [RANKS[(p - 1) % 13] + suit for p in range(first, first + length)]
            near = [r + suit for r in RANKS]
        else:
            rank = rng.choice(RANKS)
            cards = [rank + s for s in rng.sample(suits, 3)]
            near = [rank + s for s in suits] + [rng.choice(RANKS) + "H"]
        if rng.random() < 0.3:
            cards[rng.randrange(len(cards))] = JOKER
        try:
            meld = check_meld([Piece(c) for c in cards], read)
        except MeldError:
            continue
        pieces = tuple(rng.choice([*near, JOKER]) for _ in range(rng.randint(1, 3)))
        table = Table(turn, None, [(0, meld)])
        if table.grown(0, pieces) is None:
            continue
        taken += 1
        for k, card in enumerate(pieces):
            assert table.may_fit(card, 0, len(pieces) - 1), (meld, pieces, k)
    assert taken > 300


def test_draw_discard_laid_off_while_the_melds_alone_open() -> None:
    """Knob opening_counts_lay_offs false: the melds alone must reach 51, and the taken
    card may still be used as a lay-off of the opening action (R51-DRAW)."""
    state = start(R51, ["4C 5C 6C 7C 8C 9C 8S 8D 8H 2D", "9H TH JH QH KS KH KD"],
                  stock="KC 3S", rules={"opening_counts_lay_offs": False})
    state, _ = play(state, (0, "discard 4C"), (1, "draw stock"),
                    (1, "meld 9H TH JH QH / KS KH KD"), (1, "discard KC"), (0, "draw discard"))
    example = compound_example(state, 0)
    assert example["lay_offs"] == [{"meld_id": "m2", "cards": ["KC"]}], example
    state, _ = play(state, (0, "meld 5C 6C 7C 8C 9C / 8S 8D 8H + m2 KC"), (0, "discard 2D"))
    assert state.melded == [True, True]


def compound_example(state: GameState, seat: int) -> dict[str, Any]:
    """The listing's example of the seat's opening, checked to apply."""
    compound = legal_moves(state, seat).compound
    assert compound is not None and compound["exists"] is True, compound
    example: dict[str, Any] = compound["example"]
    apply(state, seat, move_from_dict(example), Random(1))
    return example


def melds_and_lay_offs_open() -> GameState:
    """Seat 0 opened with sets of kings and queens and a run AD 2D 3D, and discarded 7H;
    seat 1 holds 5H 6H / JS JH JD (48 with 7H) and KC, QC and 4D, which go on seat 0's
    melds (+24)."""
    state = start(L14, ["KS KH KD QS QH QD AD 2D 3D 5C 8C JC 4H 7S 7H",
                        "5H 6H JS JH JD 9S 9C 8D KC QC 8S 2C 4D TC"], stock="3S 5D 6S 6D")
    state, _ = play(state, (0, "discard 4H"), (1, "draw stock"), (1, "discard 3S"),
                    (0, "draw stock"), (0, "meld KS KH KD / QS QH QD / AD 2D 3D"),
                    (0, "discard 7H"))
    return state


@pytest.mark.parametrize(("variant", "rules", "lay", "allowed"), [
    pytest.param(R51, {}, "+ m1 KC", True,
                 id="R51-DRAW the taken card in a meld, another card laid off: 48 + 10 = 58"),
    pytest.param(R51, {"opening_counts_lay_offs": False}, "+ m1 KC", False,
                 id="R51-DRAW knob opening_counts_lay_offs false: 48 does not open"),
    pytest.param(L14, {}, "+ m1 KC + m2 QC + m3 4D", True,
                 id="L14-DRAW melds of 48, lay-offs of 24: 72 opens and makes the 71"),
])
def test_draw_discard_for_an_opening_made_up_by_lay_offs(
        variant: str, rules: dict[str, Any], lay: str, allowed: bool) -> None:
    """The melds holding the taken card are worth less than the opening; lay-offs of other
    cards in the same action make it up (R51-OPEN counts them; L14-DRAW too). The search
    once tried lay-offs only after melds worth the whole opening, and refused the draw."""
    state = melds_and_lay_offs_open()
    hand = state.hands[1]
    if variant == R51:  # the same cards, in a Rummy 51 game (13 cards: one fewer)
        state = start(R51, ["KS KH KD QS QH QD AD 2D 3D 5C 8C 4H 7S 7H",
                            " ".join(c for c in hand if c != "9S")], stock="3S 5D 6S 6D",
                      rules=rules)
        state, _ = play(state, (0, "discard 4H"), (1, "draw stock"), (1, "discard 3S"),
                        (0, "draw stock"), (0, "meld KS KH KD / QS QH QD / AD 2D 3D"),
                        (0, "discard 7H"))
    rule = "R51-DRAW" if variant == R51 else "L14-DRAW"
    if not allowed:
        assert_refused(state, 1, "draw discard",
                       (Code.DISCARD_DRAW_FORBIDDEN, rule,
                        "7H could not be put on the table this turn: the discard may be taken "
                        "only to be used at once"))
        return
    state, _ = play(state, (1, "draw discard"))
    example = compound_example(state, 1)
    assert example["lay_offs"], example
    state, _ = play(state, (1, f"meld 5H 6H 7H / JS JH JD {lay}"), (1, "discard 8S"))
    assert state.melded == [True, True]


@pytest.mark.parametrize("variant", BOTH)
def test_draw_discard_by_an_opened_player(variant: str) -> None:
    """Seat 1 discards 8H; seat 0 (opened) may take it only to lay it off on m1 (R51), and
    in L14 only with 71 points put down that turn, out of reach here."""
    state = both_opened(variant, "8H")
    state, _ = play(state, (1, "discard 8H"))
    if variant == L14:
        assert_refused(state, 0, "draw discard",
                       (Code.DISCARD_DRAW_FORBIDDEN, "L14-DRAW",
                        "8H could not be put on the table this turn with 71 points put down: "
                        "the discard may be taken only to be used at once"))
        return
    state, _ = play(state, (0, "draw discard"))
    assert_refused(state, 0, "discard 2D",
                   (Code.DISCARD_NOT_USED, "R51-DRAW",
                    "8H, taken from the discard pile, must be put on the table before you "
                    "discard"))
    state, _ = play(state, (0, "lay m1 8H"), (0, "discard 2D"))
    assert meld_of(state, "m1")[2] == ["8H", "9H", "TH", "JH", "QH"]


@pytest.mark.parametrize("variant", BOTH)
def test_draw_discard_an_opened_player_cannot_use(variant: str) -> None:
    state = both_opened(variant, "8S")
    state, _ = play(state, (1, "discard 8S"))
    rule, need = ("R51-DRAW", "") if variant == R51 else ("L14-DRAW", " with 71 points put down")
    assert_refused(state, 0, "draw discard",
                   (Code.DISCARD_DRAW_FORBIDDEN, rule,
                    f"8S could not be put on the table this turn{need}: the discard may be "
                    "taken only to be used at once"))


# R51-SWAP


def test_swap_a_run_joker_and_put_it_back() -> None:
    state = both_opened(R51, "8S")
    state, events = play(state, (1, "swap m2 6D"))
    assert events == [{"type": "swap_joker", "seat": 1, "meld_id": "m2", "card": "6D",
                       "meld": {"meld_id": "m2", "owner": 1, "kind": "run",
                                "cards": ["5D", "6D", "7D"], "wilds": []}}]
    assert meld_of(state, "m2") == (1, "run", ["5D", "6D", "7D"], ["5D", "6D", "7D"], 18)
    assert sorted(state.hands[1]) == ["8S", "9D", "9S", "JK"]
    assert_refused(state, 1, "discard 8S",
                   (Code.JOKER_NOT_USED, "R51-SWAP",
                    "the joker you swapped out must go back on the table before you discard"))
    state, _ = play(state, (1, "lay m1 JK"), (1, "discard 8S"))
    assert meld_of(state, "m1")[2:] == (["9H", "TH", "JH", "QH", "JK"],
                                        ["9H", "TH", "JH", "QH", "KH"], 49)


def test_swap_then_the_joker_in_a_new_meld() -> None:
    state = both_opened(R51, "8S")
    state, _ = play(state, (1, "swap m2 6D"), (1, "meld 9S 9D JK"))
    assert meld_of(state, "m7") == (1, "set", ["9S", "9D", "JK"], ["9S", "9D", "9*"], 27)
    state, events = play(state, (1, "discard 8S"))  # the last card: seat 1 goes out
    assert hand_end(events)["went_out"] == 1


@pytest.mark.parametrize(("variant", "rules", "move", "reason"), [
    pytest.param(R51, {}, "swap m2 9D",
                 (Code.SWAP_NOT_ALLOWED, "R51-SWAP", "the joker in m2 stands for 6D, not 9D"),
                 id="R51-SWAP only the exact card"),
    pytest.param(R51, {}, "swap m1 9D",
                 (Code.SWAP_NOT_ALLOWED, "R51-SWAP", "m1 holds no joker"),
                 id="R51-SWAP a meld without a joker"),
    pytest.param(R51, {}, "swap m2 5H",
                 (Code.CARD_NOT_IN_HAND, "C-TURN", "not in your hand: 5H"),
                 id="R51-SWAP a card not held"),
    pytest.param(R51, {}, "swap m9 6D",
                 (Code.UNKNOWN_MELD, "R51-SWAP", "no meld 'm9' on the table"),
                 id="R51-SWAP an unknown meld"),
] + [
    pytest.param(v, {}, "swap m6 9S",
                 (Code.SWAP_NOT_ALLOWED, "R51-SWAP",
                  "a joker in a 3-card set cannot be swapped: its suit is open"),
                 id=f"R51-SWAP not from a 3-card set ({v})")
    for v in BOTH
] + [
    pytest.param(v, {"joker_swap_from_set": "never"}, "swap m6 9S",
                 (Code.SWAP_NOT_ALLOWED, "R51-SWAP",
                  "jokers may not be swapped out of sets (joker_swap_from_set)"),
                 id=f"R51-SWAP knob never: not from a 3-card set ({v})")
    for v in BOTH
] + [
    pytest.param(R51, {"joker_swap_from_set": "any"}, "swap m6 9C",
                 (Code.SWAP_NOT_ALLOWED, "R51-SWAP", "the joker in m6 stands for 9*, not 9C"),
                 id="R51-SWAP knob any: a suit already in the set is no swap"),
])
def test_swap_refused(variant: str, rules: dict[str, Any], move: str,
                      reason: tuple[Code, str, str]) -> None:
    state = both_opened(variant, "9C", rules=rules)
    assert_refused(state, 1, move, reason)


@pytest.mark.parametrize("variant", BOTH)
def test_swap_after_completing_the_set_with_the_third_suit(variant: str) -> None:
    """9C 9H JK + 9D: the joker is 9S, a 4-card set; swapping it with 9S is legal."""
    state = both_opened(variant, "8S")
    state, _ = play(state, (1, "lay m6 9D"))
    assert meld_of(state, "m6") == (0, "set", ["9H", "9D", "9C", "JK"],
                                    ["9H", "9D", "9C", "9S"], 36)
    state, _ = play(state, (1, "swap m6 9S"))
    assert meld_of(state, "m6") == (0, "set", ["9H", "9D", "9C", "9S"],
                                    ["9H", "9D", "9C", "9S"], 36)
    assert_refused(state, 1, "discard 8S",
                   (Code.JOKER_NOT_USED, "R51-SWAP",
                    "the joker you swapped out must go back on the table before you discard"))
    state, _ = play(state, (1, "lay m3 JK"), (1, "discard 8S"))
    assert meld_of(state, "m3")[3] == ["KS", "KH", "KD", "KC"]
    assert state.turn == 0


@pytest.mark.parametrize("variant", BOTH)
def test_swap_knob_never_not_even_from_a_4_card_set(variant: str) -> None:
    state = both_opened(variant, "8S", rules={"joker_swap_from_set": "never"})
    state, _ = play(state, (1, "lay m6 9D"))
    assert_refused(state, 1, "swap m6 9S",
                   (Code.SWAP_NOT_ALLOWED, "R51-SWAP",
                    "jokers may not be swapped out of sets (joker_swap_from_set)"))


@pytest.mark.parametrize("variant", BOTH)
def test_swap_knob_any_from_a_3_card_set(variant: str) -> None:
    state = both_opened(variant, "8S", rules={"joker_swap_from_set": "any"})
    state, _ = play(state, (1, "swap m6 9S"), (1, "lay m3 JK"), (1, "discard 8S"))
    assert meld_of(state, "m6")[2] == ["9H", "9C", "9S"]


@pytest.mark.parametrize(("rules", "refused"), [
    pytest.param({}, True, id="R51-SWAP refused when the joker could not go back: it would "
                              "be the last card (R51-OUT)"),
    pytest.param({"must_discard_to_go_out": False}, False,
                 id="R51-SWAP the same swap with must_discard_to_go_out false: out by lay-off"),
])
def test_swap_after_which_the_joker_could_not_go_back(rules: dict[str, Any],
                                                      refused: bool) -> None:
    state = both_opened(R51, "8D", rules=rules)
    state, _ = play(state, (1, "lay m2 8D"), (1, "lay m2 9D"), (1, "lay m6 9S"))
    assert state.hands[1] == ["6D"]
    if refused:
        assert_refused(state, 1, "swap m2 6D",
                       (Code.JOKER_NOT_USED, "R51-SWAP",
                        "after this, the swapped joker could no longer go back on the table "
                        "this turn"))
        return
    state, _ = play(state, (1, "swap m2 6D"))
    state, events = play(state, (1, "lay m3 JK"))
    assert hand_end(events)["went_out"] == 1


def on_the_table(hand1: str, melds: Sequence[tuple[int, str]],
                 rules: dict[str, Any] | None = None, discard: str = "") -> GameState:
    """R51, both seats opened, ``melds`` ((owner, cards), read by the engine) on the table,
    seat 1 to play holding ``hand1`` (to draw when ``discard`` is the pile, else to meld);
    every other card in seat 0's hand or the stock."""
    state = start(R51, [None, None], rules=rules).copy()
    pool = Counter(state.stock) + Counter(state.hands[0]) + Counter(state.hands[1])
    look = shape(R51, rules)
    for number, (owner, text) in enumerate(melds, start=1):
        meld = check_meld([Piece(c) for c in cards(text)], look)
        pool -= Counter(meld.cards)
        state.melds.append(TableMeld(f"m{number}", owner, meld.kind, list(meld.cards),
                                     list(meld.idents), meld.start, meld.points))
    state.meld_seq = len(melds)
    state.hands[1], state.discard = cards(hand1), cards(discard)
    pool -= Counter(state.hands[1]) + Counter(state.discard)
    rest = list(pool.elements())
    state.hands[0], state.stock = rest[:13], rest[13:]
    state.melded = [True, True]
    state.turn, state.phase = 1, "draw" if discard else "play"
    state.reset_turn()
    check_conservation(state)
    return state


@pytest.mark.parametrize("meld", ["JS JH JK", "9S 9H JK"])
def test_a_joker_is_not_swapped_for_a_joker(meld: str) -> None:
    """R51-SWAP: a joker is replaced by the card it stands for, which a joker never is. A
    joker standing in a set of jacks ("J*") was given up for a joker from the hand, read as
    a jack by its first letter (found by the fuzzer's check for unlisted moves)."""
    state = on_the_table("JK 5C 8D", [(0, meld)], rules={"joker_swap_from_set": "any"})
    assert_refused(state, 1, SwapJoker("m1", "JK"),
                   (Code.SWAP_NOT_ALLOWED, "R51-SWAP",
                    "exchange a joker for the card it stands for, not for a joker"))


@pytest.mark.parametrize("discard_to_go_out", [True, False])
def test_a_second_swap_whose_jokers_could_not_both_go_back_is_refused(
        discard_to_go_out: bool) -> None:
    """R51-SWAP with two swapped jokers pending: each must go back before the discard. Here
    one place takes a joker (8S on the own run m3: the sets are full, a meld holds one
    wild, and no meld of the hand holds two), so after the second swap the turn could not
    end; the swap is refused. Random play found the swap taken, and the seat left with no
    legal move at all."""
    state = on_the_table("TC 9C KH JS", [(0, "TS TH TD JK"), (0, "9S 9H 9D JK"),
                                         (1, "AS 2S 3S 4S 5S 6S 7S")],
                         rules={"must_discard_to_go_out": discard_to_go_out})
    state, _ = play(state, (1, "swap m1 TC"))
    assert_refused(state, 1, "swap m2 9C",
                   (Code.JOKER_NOT_USED, "R51-SWAP",
                    "after this, the swapped jokers could no longer all go back on the table "
                    "this turn"))
    assert turn_moves(state, 1) == [
        {"type": "lay_off", "meld_id": "m3", "cards": ["JK"], "end": "high"}]
    state, _ = play(state, (1, "lay m3 JK @high"), (1, "discard KH"))
    assert state.turn == 0


def test_a_swap_whose_joker_and_the_taken_discard_need_the_same_place_is_refused() -> None:
    """R51-DRAW and R51-SWAP together: 8S, taken from the discard pile, and the joker a swap
    would take both fit only the set of eights (8H 8D 8C: it takes one more card), each on
    its own but not both; so the swap is refused, and the turn goes on without it."""
    state = on_the_table("TC KH JS", [(0, "TS TH TD JK"), (1, "8H 8D 8C")], discard="8S")
    state, _ = play(state, (1, "draw discard"))
    assert_refused(state, 1, "swap m1 TC",
                   (Code.JOKER_NOT_USED, "R51-SWAP",
                    "after this, 8S (taken from the discard pile) and the swapped joker(s) "
                    "could no longer all go on the table this turn"))
    state, _ = play(state, (1, "lay m2 8S"), (1, "discard JS"))
    assert state.turn == 0


def test_a_swap_after_the_taken_joker_went_down_counts_the_new_joker_once() -> None:
    """R51-DRAW and R51-SWAP on one card: the joker taken from the discard pile goes down,
    then a swap brings a joker back into the hand. Either rule now asks for that one joker
    to go back (the jokers are alike), and it has a place (the set of fives): the swap is
    taken. (Counting it once per rule asked for two jokers from a hand holding one: the
    swap was refused, or, in random play, the check raised an internal error.)"""
    state = on_the_table("9C 4S 6H", [(0, "9S 9H 9D JK"), (1, "JS QS KS"), (1, "5H 5D 5C")],
                         discard="JK")
    state, _ = play(state, (1, "draw discard"), (1, "lay m2 JK @low"), (1, "swap m1 9C"))
    assert state.hands[1].count("JK") == 1
    assert {"type": "lay_off", "meld_id": "m3", "cards": ["JK"]} in legal_moves(state, 1).moves
    state, _ = play(state, (1, "lay m3 JK"), (1, "discard 6H"))
    assert state.turn == 0


def test_two_swapped_jokers_with_a_place_each_may_both_be_taken() -> None:
    """The same two swaps with a second place for a joker (seat 1's own set of kings): both
    are taken, both jokers go back, and the turn ends."""
    state = on_the_table("TC 9C KH JS", [(0, "TS TH TD JK"), (0, "9S 9H 9D JK"),
                                         (1, "AS 2S 3S 4S 5S 6S 7S"), (1, "KS KD KC")])
    state, _ = play(state, (1, "swap m1 TC"), (1, "swap m2 9C"), (1, "lay m3 JK @high"),
                    (1, "lay m4 JK"), (1, "discard JS"))
    assert meld_of(state, "m4")[2:4] == (["KS", "KD", "KC", "JK"], ["KS", "KD", "KC", "KH"])


def test_swap_either_copy() -> None:
    """The two 6D of the deck are interchangeable: the joker stands for "6D", whichever copy
    the player holds (here the second copy, the first is in seat 1's hand too)."""
    state = both_opened(R51, "6D")
    assert state.hands[1].count("6D") == 2
    state, _ = play(state, (1, "swap m2 6D"), (1, "meld 9S 9D JK"))
    assert meld_of(state, "m2")[2] == ["5D", "6D", "7D"]
    assert state.hands[1] == ["6D"]


# R51-TAKE


@pytest.mark.parametrize("variant", BOTH)
def test_take_from_meld_off_by_default(variant: str) -> None:
    state = both_opened(variant, "8S")
    assert_refused(state, 1, "take m1:9H / 9H 9S 9D",
                   (Code.INVALID_MELD, "R51-TAKE",
                    "taking cards from melds is not allowed (allow_take_from_meld)"))


@pytest.mark.parametrize("variant", BOTH)
def test_take_end_card_of_a_run_of_four(variant: str) -> None:
    state = both_opened(variant, "8S", rules={"allow_take_from_meld": True})
    state, events = play(state, (1, "take m1:9H / 9H 9S 9D"))
    assert meld_of(state, "m1") == (1, "run", ["TH", "JH", "QH"], ["TH", "JH", "QH"], 30)
    assert meld_of(state, "m7") == (1, "set", ["9S", "9H", "9D"], ["9S", "9H", "9D"], 27)
    assert events_of(events, "take_from_meld") == [
        {"type": "take_from_meld", "seat": 1, "take": [{"meld_id": "m1", "card": "9H"}]}]
    state, _ = play(state, (1, "discard 8S"))


@pytest.mark.parametrize("variant", BOTH)
def test_take_from_a_four_card_set(variant: str) -> None:
    state = both_opened(variant, "9D", rules={"allow_take_from_meld": True})
    state, _ = play(state, (1, "lay m6 9D"), (1, "take m6:9H / 9H 9S 9D"))
    assert meld_of(state, "m6") == (0, "set", ["9D", "9C", "JK"], ["9D", "9C", "9*"], 27)
    assert meld_of(state, "m7")[2] == ["9S", "9H", "9D"]


TAKE_KNOB = {"allow_take_from_meld": True}


@pytest.mark.parametrize(("variant", "move", "reason"), [
    pytest.param(v, move, reason, id=f"R51-TAKE {what} ({v})")
    for v in BOTH
    for move, reason, what in (
        ("take m1:TH / TH 9S 9D",
         (Code.INVALID_MELD, "R51-TAKE", "only an end card of a run of 4 or more may be taken"),
         "a middle card refused"),
        ("take m4:TS / TS 9S 9D",
         (Code.INVALID_MELD, "R51-TAKE", "only an end card of a run of 4 or more may be taken"),
         "from a 3-card run refused"),
        ("take m3:KS / KS 9S 9D",
         (Code.INVALID_MELD, "R51-TAKE", "a card may be taken only from a 4-card set"),
         "from a 3-card set refused"),
        ("take m2:JK / JK 9S 9D",
         (Code.SWAP_NOT_ALLOWED, "R51-TAKE", "a joker is taken only by swapping it (R51-SWAP)"),
         "a joker refused"),
        ("take m1:9H / 9S 9D 9C",
         (Code.INVALID_MELD, "R51-TAKE", "9H, taken from a meld, must be used in a new meld"),
         "the taken card must be in a new meld"),
    )
])
def test_take_refused(variant: str, move: str, reason: tuple[Code, str, str]) -> None:
    state = both_opened(variant, "9C", rules=TAKE_KNOB)
    assert_refused(state, 1, move, reason)


@pytest.mark.parametrize("variant", BOTH)
def test_take_needs_an_opened_player(variant: str) -> None:
    state = _opened_seat1(variant, TAKE_KNOB, LAYOFF_OPENER + " 9C 9S")
    assert_refused(state, 0, "take m1:9H / 9H 9C 9S",
                   (Code.NOT_OPENED, "R51-TAKE", "only a player who has opened may take cards "
                                                 "from melds"))


@pytest.mark.parametrize("rules", [TAKE_KNOB, {}], ids=["knob on", "knob off"])
def test_the_listing_offers_each_card_that_may_be_taken(rules: dict[str, Any]) -> None:
    """R51-TAKE in the legal-move listing: each card a seat may take (an end card of a run
    of 4 or more, a card of a 4-card set, not a joker) with each new meld it makes with
    cards of the hand; each applies. None from a 3-card meld, none with the knob off."""
    state = on_the_table("8S 8D QH JH 2C", [(0, "5H 6H 7H 8H"), (0, "KS KH KD KC"),
                                            (0, "9S 9H 9D"), (0, "TC JC QC JK")], rules=rules)
    listed = [m for m in legal_moves(state, 1, limit=1000).moves
              if m["type"] == "take_from_meld"]
    if not rules:
        assert listed == []
        return
    takes = {(m["take"][0]["meld_id"], m["take"][0]["card"], " ".join(sorted(
        m["melds"][0]["cards"]))) for m in listed}
    assert takes == {("m1", "8H", "8D 8H 8S"), ("m2", "KH", "JH KH QH")}
    for move in listed:
        apply(state, 1, move_from_dict(move), Random(0))  # accepted: no Violation


# ---------------------------------------------------------------------------------------
# R51-LAST, R51-OUT, a single card and the discard

DOWN_HAND = {R51: "AS 2S 3S 4S 5S 6S 7H 8H 9H JD QD 7S 2D",
             L14: "AS 2S 3S 4S 5S 6S 7H 8H 9H JD QD 7S 2D TD"}
DOWN_MELD = {R51: "meld AS 2S 3S 4S 5S 6S / 7H 8H 9H / JD QD KD",
             L14: "meld AS 2S 3S 4S 5S 6S / 7H 8H 9H / TD JD QD KD"}


def down_to_two(variant: str, stock: str, rules: dict[str, Any] | None = None) -> GameState:
    """Seat 1 opened m1 AS-6S, m2 7H 8H 9H, m3 (T)JD QD KD and holds 7S 2D, to discard."""
    state = start(variant, [junk(variant, dealer=True), DOWN_HAND[variant]],
                  stock=f"KD {stock}", rules=rules)
    state, _ = play(state, (0, "discard 4C"), (1, "draw stock"), (1, DOWN_MELD[variant]))
    assert sorted(state.hands[1]) == ["2D", "7S"]
    return state


@pytest.mark.parametrize(("variant", "rules", "move", "hand", "event"), [
    pytest.param(v, {}, "discard 2D", ["7S", "5H", "5D"],
                 {"type": "penalty", "seat": 1, "rule": "R51-LAST", "count": 2,
                  "reason": "a discard leaving one card must be announced",
                  "private": {"1": {"cards": ["5H", "5D"]}}},
                 id=f"R51-LAST required, not announced: 2 penalty cards ({v})")
    for v in BOTH
] + [
    pytest.param(v, {}, "discard 2D !", ["7S"],
                 {"type": "last_card", "seat": 1, "announced_by": "player"},
                 id=f"R51-LAST required, announced: no penalty ({v})")
    for v in BOTH
] + [
    pytest.param(v, {"last_card_call": "auto"}, "discard 2D", ["7S"],
                 {"type": "last_card", "seat": 1, "announced_by": "referee"},
                 id=f"R51-LAST auto: the referee announces ({v})")
    for v in BOTH
])
def test_last_card(variant: str, rules: dict[str, Any], move: str, hand: list[str],
                   event: Event) -> None:
    state = down_to_two(variant, "5H 5D 6C", rules)
    state, events = play(state, (1, move))
    assert state.hands[1] == hand
    assert events[1:] == [event]
    assert (state.turn, state.phase) == (0, "draw")
    assert state.stock[-1] == ("6C" if len(hand) == 3 else "5H")


@pytest.mark.parametrize("variant", BOTH)
def test_announce_with_more_cards_left_is_nothing(variant: str) -> None:
    state = opener_turn(variant, "9H TH JH QH KS KH KD")
    state, events = play(state, (1, "meld 9H TH JH QH / KS KH KD"), (1, "discard 5H !"))
    assert [e["type"] for e in events] == ["meld", "discard"]


@pytest.mark.parametrize("variant", BOTH)
def test_single_card_may_not_take_the_discard_then_out(variant: str) -> None:
    state = down_to_two(variant, "TH 8S")
    state, _ = play(state, (1, "discard 2D !"), (0, "draw stock"), (0, "discard TH"))
    assert state.hands[1] == ["7S"]
    assert_refused(state, 1, "draw discard",
                   (Code.DISCARD_DRAW_FORBIDDEN, "R51-DRAW",
                    "a player holding a single card may not take the discard"))
    # R51-OUT: a lay-off leaving no card to discard is refused
    state, _ = play(state, (1, "draw stock"), (1, "lay m1 7S"))
    assert state.hands[1] == ["8S"]
    assert_refused(state, 1, "lay m1 8S",
                   (Code.MUST_DISCARD_TO_GO_OUT, "R51-OUT",
                    "this would leave no card to discard; keep one to go out"))
    state, events = play(state, (1, "discard 8S"))
    end = hand_end(events)
    # R51-SCORE: seat 0 never opened: 100; not all at once (seat 1 melded two turns ago)
    assert (end["went_out"], end["reason"], end["scores"], end["all_at_once"], end["dry"]) == (
        1, "out", [100, 0], False, False)
    assert state.totals == [100, 0]


@pytest.mark.parametrize("variant", BOTH)
def test_out_by_lay_off_when_must_discard_is_off(variant: str) -> None:
    state = down_to_two(variant, "TH 8S", {"must_discard_to_go_out": False})
    state, _ = play(state, (1, "discard 2D !"), (0, "draw stock"), (0, "discard TH"),
                    (1, "draw stock"), (1, "lay m1 7S"))
    state, events = play(state, (1, "lay m1 8S"))
    end = hand_end(events)
    assert (end["went_out"], end["scores"]) == (1, [100, 0])


# ---------------------------------------------------------------------------------------
# R51-ALL-AT-ONCE, R51-SCORE, L14-DRY

WIN_2J = "AS 2S 3S 4S 7H 8H 9H KH KC JK 5D 5H JK 5S"
WIN_2J_MELD = "meld AS 2S 3S 4S / 7H 8H 9H / KH KC JK / 5D 5H 5S JK"


def dry_rummy(variant: str, last: str, hand: str | None = None, meld: str | None = None,
              rules: dict[str, Any] | None = None) -> tuple[GameState, Event]:
    """Seat 0 discards; seat 1 draws ``last`` and puts down 13 (L14: 14) cards at once,
    then discards ``last``: nobody else had melded."""
    state = start(variant, [junk(variant, dealer=True), hand or WIN[variant]], stock=last,
                  rules=rules)
    state, events = play(state, (0, "discard 4C"), (1, "draw stock"),
                         (1, meld or WIN_MELD[variant]), (1, f"discard {last}"))
    return state, hand_end(events)


@pytest.mark.parametrize(("variant", "last", "hand", "meld", "scores", "jokers"), [
    pytest.param(R51, "QC", None, None, [200, 0], None,
                 id="R51-SCORE dry rummy: unopened loser 100 x 2 = 200"),
    pytest.param(R51, "JK", None, None, [400, 0], None,
                 id="R51-SCORE dry rummy ending on a joker: 100 x 4 = 400"),
    pytest.param(L14, "QC", None, None, [200, 0], 0,
                 id="L14-DRY no joker used: unopened 200"),
    pytest.param(L14, "QC", WIN_1J, WIN_1J_MELD, [150, 0], 1,
                 id="L14-DRY one joker used: unopened 150"),
    pytest.param(L14, "QC", WIN_2J, WIN_2J_MELD, [100, 0], 2,
                 id="L14-DRY two jokers used: unopened 100"),
])
def test_dry_rummy_scores(variant: str, last: str, hand: str | None, meld: str | None,
                          scores: list[int], jokers: int | None) -> None:
    state, end = dry_rummy(variant, last, hand, meld)
    assert (end["went_out"], end["all_at_once"], end["dry"], end["scores"]) == (
        1, True, True, scores)
    assert state.totals == scores
    assert state.history[-1]["dry"] is True
    if variant == L14:
        assert end["jokers_used"] == jokers
    assert public_view(state, "g", 5)["hands_played"][0]["scores"] == scores


@pytest.mark.parametrize("variant", BOTH)
def test_all_at_once_meld_of_every_card_refused(variant: str) -> None:
    """R51-OUT: putting all 14 (L14: 15) cards down leaves nothing to discard."""
    drawn = "8D" if variant == R51 else "9D"
    state = start(variant, [junk(variant, dealer=True), WIN[variant]], stock=drawn)
    state, _ = play(state, (0, "discard 4C"), (1, "draw stock"))
    assert_refused(state, 1, f"{WIN_MELD[variant]} {drawn}",
                   (Code.MUST_DISCARD_TO_GO_OUT, "R51-OUT",
                    "this would leave no card to discard; keep one to go out"))


WIN_LAYOFF = {R51: "AS 2S 3S 7H 8H 9H KH KC KS 5D 6D 7D 8C",
              L14: "AS 2S 3S 7H 8H 9H KH KC KS 5D 6D 7D 8D 8C"}
WIN_LAYOFF_MELD = {R51: "meld AS 2S 3S / 7H 8H 9H / KH KC KS / 5D 6D 7D + m2 8C",
                   L14: "meld AS 2S 3S / 7H 8H 9H / KH KC KS / 5D 6D 7D 8D + m2 8C"}


def all_at_once_after_an_opening(variant: str, last: str, hand: str, meld: str,
                                 rules: dict[str, Any] | None = None,
                                 ) -> tuple[GameState, Event]:
    """Seat 0 opens in its second turn; seat 1, who only drew and discarded before, puts
    everything down in its second turn and discards ``last``."""
    seat0 = OPENER0 + (" 6S" if variant == L14 else "")
    state = start(variant, [seat0, hand], stock=f"2H 8S {last}", rules=rules)
    state, events = play(state, (0, "discard 4C"), (1, "draw stock"), (1, "discard 2H"),
                         (0, "draw stock"), (0, OPENER0_MELD), (0, "discard 8S"),
                         (1, "draw stock"), (1, meld), (1, f"discard {last}"))
    return state, hand_end(events)


@pytest.mark.parametrize(("variant", "last", "hand", "meld", "rules", "result"), [
    pytest.param(R51, "QC", WIN[R51], WIN_MELD[R51], None, (True, False, [92, 0]),
                 id="R51-SCORE all at once, opened loser: 46 x 2 = 92"),
    pytest.param(R51, "JK", WIN[R51], WIN_MELD[R51], None, (True, False, [184, 0]),
                 id="R51-SCORE all at once ending on a joker: 46 x 4 = 184"),
    pytest.param(R51, "QC", WIN[R51], WIN_MELD[R51], {"joker_penalty": 50},
                 (True, False, [152, 0]),
                 id="R51-SCORE knob joker_penalty 50: (11 + 50 + 10 + 5) x 2 = 152"),
    pytest.param(R51, "QC", WIN[R51], WIN_MELD[R51], {"ace": "low"}, (True, False, [92, 0]),
                 id="R51-SCORE an ace left in hand counts 11 with knob ace low too"),
    pytest.param(R51, "QC", WIN_LAYOFF[R51], WIN_LAYOFF_MELD[R51], None,
                 (False, False, [46, 0]),
                 id="R51-ALL-AT-ONCE a lay-off in the last turn: not all at once, 46"),
    pytest.param(L14, "QC", WIN[L14], WIN_MELD[L14], None, (True, False, [102, 0]),
                 id="L14-DRY no joker: 51 x 2 = 102"),
    pytest.param(L14, "QC", WIN_1J, WIN_1J_MELD, None, (True, False, [77, 0]),
                 id="L14-DRY one joker: 51 x 1.5 = 76.5, rounded up 77"),
    pytest.param(L14, "QC", WIN_2J, WIN_2J_MELD, None, (True, False, [51, 0]),
                 id="L14-DRY two jokers: 51 x 1"),
    pytest.param(L14, "QC", WIN_LAYOFF[L14], WIN_LAYOFF_MELD[L14], None,
                 (True, False, [102, 0]),
                 id="L14-DRY may lay off in an all-at-once finish: 51 x 2"),
])
def test_all_at_once_after_another_opened(variant: str, last: str, hand: str, meld: str,
                                          rules: dict[str, Any] | None,
                                          result: tuple[bool, bool, list[int]]) -> None:
    state, end = all_at_once_after_an_opening(variant, last, hand, meld, rules)
    assert (end["all_at_once"], end["dry"], end["scores"]) == result
    assert end["went_out"] == 1
    assert state.totals == result[2]


@pytest.mark.parametrize(("variant", "count"), [
    pytest.param(R51, 11 + 20 + 10 + 5, id="R51-SCORE ace 11, joker 20, king 10, five 5"),
    pytest.param(L14, 10 + 20 + 10 + 5 + 6, id="L14-ACE an ace left in hand counts 10"),
])
def test_counts_of_an_opened_loser(variant: str, count: int) -> None:
    _, end = all_at_once_after_an_opening(variant, "QC", WIN_LAYOFF[variant],
                                          WIN_LAYOFF_MELD[variant])
    assert end["counts"] == [count, 0]


# ---------------------------------------------------------------------------------------
# R51-END

def _dry_deal(variant: str, winner: int, dealer: int, last: str) -> dict[str, Any]:
    """A two-player deal in which ``winner`` goes out all at once, discarding ``last``."""
    hands: list[str] = ["", ""]
    if winner == dealer:
        hands[winner] = WIN[variant] + " 4C"
        hands[1 - winner] = junk(variant)
        return arrange(variant, hands, stock=f"2H {last}", dealer=dealer)
    hands[dealer] = junk(variant, dealer=True)
    hands[winner] = WIN[variant]
    return arrange(variant, hands, stock=last, dealer=dealer)


def test_end_target_1000_reached_exactly() -> None:
    """400 + 200 + 400: after the hand in which seat 0 reaches 1000, seat 1 (0) wins."""
    plan = [(1, 0, "JK"), (1, 1, "QC"), (1, 0, "JK")]
    deals = [_dry_deal(R51, w, d, last) for w, d, last in plan]
    state, _ = new_game(R51, ["a", "b"], {}, 0, deals, Random(0))
    totals = []
    for winner, dealer, last in plan:
        assert (state.dealer, state.turn, state.discard_only) == (dealer, dealer, True)
        state, events = _replay(state, winner, last)
        totals.append(list(state.totals))
        assert hand_end(events)["scores"][1] == 0
    assert totals == [[400, 0], [600, 0], [1000, 0]]
    assert (state.status, state.winners) == ("finished", [1])
    assert_refused(state, 0, "draw stock",
                   (Code.GAME_FINISHED, "R51-END", "the match is over"))


def _replay(state: GameState, winner: int, last: str) -> tuple[GameState, list[Event]]:
    """Play a :func:`_dry_deal` hand."""
    dealer = state.dealer
    steps: list[tuple[int, str]] = [(dealer, "discard 4C")]
    if winner == dealer:
        steps += [(1 - winner, "draw stock"), (1 - winner, "discard 2H")]
    steps += [(winner, "draw stock"), (winner, WIN_MELD[state.variant]),
              (winner, f"discard {last}")]
    return play(state, *steps)


@pytest.mark.parametrize("variant", BOTH)
def test_end_deals_and_ties_share(variant: str) -> None:
    """Two deals, each won all at once by another seat: 200 each, both win."""
    deals = [_dry_deal(variant, 1, 0, "QC"), _dry_deal(variant, 0, 1, "QC")]
    state, _ = new_game(variant, ["a", "b"], {"match_end": {"deals": 2}}, 0, deals, Random(0))
    state, _ = _replay(state, 1, "QC")
    assert (state.status, state.totals, state.hand_number, state.dealer) == (
        "playing", [200, 0], 2, 1)
    assert [len(h) for h in state.hands] == sizes(variant, 2, 1)
    assert (state.turn, state.discard_only) == (1, True)
    state, _ = _replay(state, 0, "QC")
    assert (state.status, state.totals, state.winners) == ("finished", [200, 200], [0, 1])


@pytest.mark.parametrize("variant", BOTH)
def test_end_deals_lowest_total_wins(variant: str) -> None:
    state, _ = new_game(variant, ["a", "b"], {"match_end": {"deals": 1}}, 0,
                        [_dry_deal(variant, 1, 0, "QC")], Random(0))
    state, _ = _replay(state, 1, "QC")
    assert (state.status, state.totals, state.winners) == ("finished", [200, 0], [1])


THREE_OPENER = "TH JH QH KH KS KD KC 2C 3C 4C"
"""Seat 1 of the three-player games opens TH-KH + KS KD KC and keeps 2C 3C 4C + filler."""


def _three_players(variant: str, rules: dict[str, Any], later: Sequence[dict[str, Any]] = (),
                   ) -> tuple[GameState, Event]:
    """Dealer 2. Seat 0 only draws and discards; seat 1 opens; seat 2 (the dealer) goes out
    all at once: seat 0 scores 200, seat 1 2 x its count."""
    hands = [junk(variant), THREE_OPENER, WIN[variant] + " 4C"]
    state = start(variant, hands, stock="8S 2H QC", rules=rules, dealer=2, later=later)
    state, events = play(state, (2, "discard 4C"), (0, "draw stock"), (0, "discard 8S"),
                         (1, "draw stock"), (1, "meld TH JH QH KH / KS KD KC"),
                         (1, "discard 2H"), (2, "draw stock"), (2, WIN_MELD[variant]),
                         (2, "discard QC"))
    return state, hand_end(events)


@pytest.mark.parametrize("variant", BOTH)
def test_end_eliminate_at_skips_the_seat_in_deals_and_turns(variant: str) -> None:
    state, end = _three_players(variant, {"match_end": {"eliminate_at": 200}})
    count1 = sum(end["counts"][1:2])
    assert end["scores"] == [200, 2 * count1, 0]
    assert state.out_of_match == [True, False, False]
    assert state.status == "playing"
    # hand 2: seat 0 gets no cards; the deal passes over it: seat 1 deals and starts
    assert (state.hand_number, state.dealer, state.turn, state.discard_only) == (2, 1, 1, True)
    assert [len(h) for h in state.hands] == [0, sizes(variant, 2, 0)[0], sizes(variant, 2, 0)[1]]
    check_conservation(state)
    assert_refused(state, 0, "draw stock",
                   (Code.NOT_YOUR_TURN, "C-TURN", "it is seat 1's turn (p1)"))
    discard = state.hands[1][0]
    state, _ = play(state, (1, f"discard {discard}"))
    assert state.turn == 2
    state, events = play(state, (2, "draw stock"))
    drawn = events[0]["private"]["2"]["card"]
    state, _ = play(state, (2, f"discard {drawn}"))
    assert state.turn == 1  # seat 0 is skipped
    assert public_view(state, "g", 1)["seats"][0]["out_of_match"] is True


@pytest.mark.parametrize("variant", BOTH)
def test_end_eliminate_at_arranged_later_deal_skips_the_seat(variant: str) -> None:
    """Even with an arranged deal for hand 2, a seat that is out of the match holds no card
    and the dealer (seat 1, the next seat still in) holds one card more than the others."""
    later = arrange(variant, [None, None, None], dealer=0)  # the dealer if nobody were out
    state, _ = _three_players(variant, {"match_end": {"eliminate_at": 200}}, later=[later])
    assert state.out_of_match == [True, False, False]
    assert (state.dealer, state.turn) == (1, 1)
    assert len(state.hands[0]) == 0
    assert len(state.hands[1]) == len(state.hands[2]) + 1


@pytest.mark.parametrize("variant", BOTH)
def test_end_eliminate_at_the_last_one_left_wins(variant: str) -> None:
    third = JUNK_B + (" 7C" if variant == L14 else "")
    state = start(variant, [junk(variant, dealer=True), WIN[variant], third],
                  stock="QC", rules={"match_end": {"eliminate_at": 200}})
    state, events = play(state, (0, "discard 4C"), (1, "draw stock"), (1, WIN_MELD[variant]),
                         (1, "discard QC"))
    assert hand_end(events)["scores"] == [200, 0, 200]
    assert (state.status, state.winners, state.out_of_match) == (
        "finished", [1], [True, False, True])
    assert events_of(events, "game_end") == [
        {"type": "game_end", "winners": [1], "totals": [200, 0, 200]}]


def test_end_target_not_reached_the_match_goes_on() -> None:
    state, _ = dry_rummy(R51, "JK")
    assert (state.status, state.totals, state.hand_number) == ("playing", [400, 0], 2)
    assert state.rules["match_end"] == {"target": 1000}


# ---------------------------------------------------------------------------------------
# L14-JOKER-RUN

JR_SEAT0 = "4C 4H 5H 6H 6S 6H 6D TC JC QC"
JR_SEAT1 = "TS JS QS KS 5H JK 7H 8D TD JK 8S 8C 8H"


def joker_run_turn(variant: str, burned: bool) -> GameState:
    """Seat 1 to meld; with ``burned`` seat 0 has first melded both 6H (4H 5H 6H, 6S 6H 6D)."""
    state = start(variant, [JR_SEAT0, JR_SEAT1], stock="2C 3C 5C")
    state, _ = play(state, (0, "discard 4C"), (1, "draw stock"))
    if burned:
        state, _ = play(state, (1, "discard 2C"), (0, "draw stock"),
                        (0, "meld 4H 5H 6H / 6S 6H 6D / TC JC QC"), (0, "discard 3C"),
                        (1, "draw stock"))
    return state


@pytest.mark.parametrize(("variant", "burned", "meld", "reason", "idents"), [
    pytest.param(L14, False, "meld TS JS QS KS / 5H JK 7H",
                 (Code.WILD_NOT_ALLOWED, "L14-JOKER-RUN",
                  "meld 2 (5H JK 7H): a joker may stand for 6H in a run only once both 6Hs "
                  "are in melds on the table"), None,
                 id="L14-JOKER-RUN a joker for 6H while no 6H is melded"),
    pytest.param(R51, False, "meld TS JS QS KS / 5H JK 7H", None, ["5H", "6H", "7H"],
                 id="R51-WILDS the same run is fine in R51"),
    pytest.param(L14, True, "meld TS JS QS KS / 5H JK 7H", None, ["5H", "6H", "7H"],
                 id="L14-JOKER-RUN both 6H melded: the joker may be 6H"),
    pytest.param(L14, True, "meld TS JS QS KS / 8D JK TD",
                 (Code.WILD_NOT_ALLOWED, "L14-JOKER-RUN",
                  "meld 2 (8D JK TD): a joker may stand for 9D in a run only once both 9Ds "
                  "are in melds on the table"), None,
                 id="L14-JOKER-RUN a joker for 9D, not melded"),
    pytest.param(L14, False, "meld TS JS QS KS / 8S 8C JK", None, ["8S", "8C", "8*"],
                 id="L14-JOKER-RUN sets are exempt"),
    pytest.param(L14, True, "meld TS JS QS KS / 7H 8H JK=6H", None, ["6H", "7H", "8H"],
                 id="L14-JOKER-RUN a declared burned identity"),
    pytest.param(L14, True, "meld TS JS QS KS / 7H 8H JK", None, ["6H", "7H", "8H"],
                 id="C-MELD L14 undeclared: the reading L14-JOKER-RUN allows (6H, not 9H)"),
])
def test_l14_joker_run(variant: str, burned: bool, meld: str,
                       reason: tuple[Code, str, str] | None, idents: list[str] | None) -> None:
    state = joker_run_turn(variant, burned)
    if reason is not None:
        assert_refused(state, 1, meld, reason)
        return
    state, _ = play(state, (1, meld))
    assert state.melds[-1].idents == idents


def test_l14_joker_run_lay_off_on_own_run() -> None:
    state = joker_run_turn(L14, False)
    state, _ = play(state, (1, "meld TS JS QS KS / 8S 8C JK"))
    violation = refuse(state, 1, "lay m1 JK")
    assert (violation.code, violation.rule) == (Code.WILD_NOT_ALLOWED, "L14-JOKER-RUN")
    # the same lay-off in R51 is fine
    r51 = joker_run_turn(R51, False)
    r51, _ = play(r51, (1, "meld TS JS QS KS / 8S 8C JK"), (1, "lay m1 JK"))
    assert r51.melds[0].idents == ["TS", "JS", "QS", "KS", "AS"]
