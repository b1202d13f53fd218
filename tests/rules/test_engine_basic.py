"""BASIC and C rules through ``new_game`` + ``apply`` with arranged deals.

Every refused move is checked to leave the input state unchanged (``to_dict()`` before and
after), and every applied move to leave its input state untouched too.
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
    RulesError,
    SetupError,
    Violation,
    apply,
    new_game,
)
from service.rules.cards import standard_deck
from service.rules.moves import (
    CutIn,
    MeldMove,
    Move,
    SwapJoker,
    Take,
    TakeFromMeld,
)
from tests.support import engine
from tests.support.engine import Event, events_of, hand_end

DECK = standard_deck()

# The rule ids of RULES.md sections C and BASIC, and those of other variants' moves that a
# basic game must refuse. Every refusal must cite one of these (RULES.md: "Error responses
# cite these ids in their rule field").
RULE_IDS = {
    "C-CARD", "C-DECK", "C-SEAT", "C-DEAL", "C-TURN", "C-MELD", "C-SET", "C-RUN", "C-WILD",
    "C-LAYOFF", "C-DISCARD-BACK", "C-OUT", "C-STOCK", "C-VALUE",
    "BASIC-PLAYERS", "BASIC-DEAL", "BASIC-SET", "BASIC-MELDS-PER-TURN", "BASIC-LAYOFF",
    "BASIC-OUT", "BASIC-SCORE", "BASIC-RUMMY", "BASIC-BLOCK", "BASIC-STOCK", "BASIC-END",
    "R51-SWAP", "R51-TAKE", "WROTHAM-SWAP", "DUMMY-CUTIN",
}


# ---------------------------------------------------------------------------------------
# Helpers


def _cards(value: str | Sequence[str] | None) -> list[str]:
    if value is None:
        return []
    return value.split() if isinstance(value, str) else list(value)


def hand_size(players: int) -> int:
    """BASIC-DEAL: 2 players 10 cards, 3-4 players 7, 5-6 players 6."""
    return 10 if players == 2 else 7 if players <= 4 else 6


def arrange(hands: Sequence[str | Sequence[str] | None], *, stock: str | Sequence[str] = (),
            discard: str | Sequence[str] | None = None, rest: str = "stock") -> dict[str, Any]:
    """A valid 52-card arranged deal.

    ``hands``: the cards each seat holds (None: filled with unused cards); ``stock``: the top
    cards of the stock, top first; ``discard``: the discard pile, bottom first (default: one
    unused card as the upcard). The cards left over go under the given stock
    (``rest="stock"``) or under the given discard pile (``rest="discard"``).
    """
    n = len(hands)
    given = [_cards(h) for h in hands]
    top = _cards(stock)
    pile = _cards(discard)
    used = [c for h in given for c in h] + top + pile
    assert len(used) == len(set(used)), f"a card is used twice: {used}"
    assert not set(used) - set(DECK), f"not cards: {set(used) - set(DECK)}"
    unused = [c for c in DECK if c not in used]
    full = []
    for h in given:
        full.append(h or [unused.pop() for _ in range(hand_size(n))])
    if rest == "stock":
        if not pile:
            pile = [unused.pop()]
        top = top + unused
    else:
        pile = unused + pile
    assert sorted([*(c for h in full for c in h), *top, *pile]) == sorted(DECK)
    return {"hands": full, "stock": top, "discard": pile}


def start(hands: Sequence[str | Sequence[str] | None], *, dealer: int,
          rules: dict[str, Any] | None = None, later: Sequence[dict[str, Any]] = (),
          **deal: Any) -> GameState:
    """A basic game whose first hand is arranged from ``hands`` (see :func:`arrange`)."""
    players = [f"p{i}" for i in range(len(hands))]
    state, _ = new_game("basic", players, rules or {}, dealer,
                        [arrange(hands, **deal), *later], Random(0))
    check_conservation(state)
    return state


def check_conservation(state: GameState) -> None:
    """C-DECK: stock + discard + hands + melds are exactly the 52 cards."""
    cards = Counter(state.stock) + Counter(state.discard)
    for hand in state.hands:
        cards += Counter(hand)
    for meld in state.melds:
        cards += Counter(meld.cards)
    assert cards == Counter(DECK)


play = partial(engine.play, conserve=check_conservation)
refuse = partial(engine.refuse, rule_ids=RULE_IDS)


def stock_cycle(state: GameState, turns: int) -> tuple[GameState, list[Event]]:
    """``turns`` turns in which the player draws from the stock and discards that card."""
    events: list[Event] = []
    for _ in range(turns):
        seat = state.turn
        state, evs = play(state, (seat, "draw stock"))
        events.extend(evs)
        if state.hand_number != 1 or state.status != "playing" or state.phase != "play":
            break
        drawn = next(e for e in evs if e["type"] == "draw")["private"][str(seat)]["card"]
        state, evs = play(state, (seat, f"discard {drawn}"))
        events.extend(evs)
    return state, events


# Two players, seat 1 deals, seat 0 starts.
S0 = "3H 4H 5H 6H 7S 7D 7C KS KH KD"
S0_COUNT = 3 + 4 + 5 + 6 + 7 + 7 + 7 + 10 + 10 + 10  # 69
S1 = "AS AD 2C 5D 9S TS JC QD QC 8H"
S1_COUNT_LOW = 1 + 1 + 2 + 5 + 9 + 10 + 10 + 10 + 10 + 8  # 66
S1_COUNT_HIGH = 15 + 15 + 2 + 5 + 9 + 10 + 10 + 10 + 10 + 8  # 94


def two(rules: dict[str, Any] | None = None, **deal: Any) -> GameState:
    """The standard two-player deal: upcard 4C, stock KC 2S 3S ... ."""
    deal.setdefault("stock", "KC 2S 3S")
    deal.setdefault("discard", "4C")
    return start([S0, S1], dealer=1, rules=rules, **deal)


# ---------------------------------------------------------------------------------------
# BASIC-PLAYERS, BASIC-DEAL, C-SEAT, C-DEAL


@pytest.mark.parametrize("n", [
    pytest.param(0, id="BASIC-PLAYERS 0 players refused"),
    pytest.param(1, id="BASIC-PLAYERS 1 player refused"),
    pytest.param(7, id="BASIC-PLAYERS 7 players refused"),
    pytest.param(8, id="BASIC-PLAYERS 8 players refused"),
])
def test_basic_players_refused(n: int) -> None:
    with pytest.raises(SetupError) as info:
        new_game("basic", [f"p{i}" for i in range(n)], {}, None, None, Random(0))
    assert info.value.field == "players"


@pytest.mark.parametrize(("n", "size"), [
    pytest.param(2, 10, id="BASIC-DEAL 2 players 10 cards each"),
    pytest.param(3, 7, id="BASIC-DEAL 3 players 7 cards each"),
    pytest.param(4, 7, id="BASIC-DEAL 4 players 7 cards each"),
    pytest.param(5, 6, id="BASIC-DEAL 5 players 6 cards each"),
    pytest.param(6, 6, id="BASIC-DEAL 6 players 6 cards each"),
])
def test_basic_deal_sizes_and_upcard(n: int, size: int) -> None:
    for dealer in range(n):
        state, events = new_game("basic", [f"p{i}" for i in range(n)], {}, dealer, None,
                                 Random(dealer))
        assert [len(h) for h in state.hands] == [size] * n
        assert len(state.discard) == 1  # the upcard
        assert len(state.stock) == 52 - n * size - 1
        check_conservation(state)
        assert (state.turn, state.phase, state.dealer, state.hand_number) == (
            (dealer + 1) % n, "draw", dealer, 1)
        (dealt,) = events
        assert dealt["type"] == "dealt"
        assert dealt["upcard"] == state.discard[-1]
        assert dealt["first"] == (dealer + 1) % n
        assert dealt["hand_counts"] == [size] * n
        assert dealt["stock_count"] == 52 - n * size - 1
        assert {int(k): v["hand"] for k, v in dealt["private"].items()} == {
            i: sorted(h) for i, h in enumerate(state.hands)}


class NoShuffle(Random):
    """A Random that leaves the deck in its fixed order (top = last card, KC)."""

    def shuffle(self, x: Any) -> None:  # type: ignore[override]
        del x


@pytest.mark.parametrize(("n", "dealer", "hands", "upcard", "stock_top"), [
    pytest.param(2, 0, {1: "KC JC 9C 7C 5C 3C AC QD TD 8D",
                        0: "QC TC 8C 6C 4C 2C KD JD 9D 7D"}, "6D", "5D",
                 id="C-DEAL one at a time from the dealer's left, two players"),
    pytest.param(3, 2, {0: "KC TC 7C 4C AC JD 8D", 1: "QC 9C 6C 3C KD TD 7D",
                        2: "JC 8C 5C 2C QD 9D 6D"}, "5D", "4D",
                 id="C-DEAL one at a time clockwise from the dealer's left, three players"),
])
def test_c_deal_order(n: int, dealer: int, hands: dict[int, str], upcard: str,
                      stock_top: str) -> None:
    state, _ = new_game("basic", [f"p{i}" for i in range(n)], {}, dealer, None, NoShuffle())
    assert {seat: " ".join(h) for seat, h in enumerate(state.hands)} == hands
    assert state.discard == [upcard]
    assert state.stock[-1] == stock_top
    assert state.turn == (dealer + 1) % n


@pytest.mark.parametrize(("n", "dealer"), [
    pytest.param(n, d, id=f"C-SEAT {n} players dealer {d}: seat {(d + 1) % n} starts")
    for n in (2, 4, 6) for d in (0, n - 1)
])
def test_c_seat_left_of_dealer_starts(n: int, dealer: int) -> None:
    state = start([None] * n, dealer=dealer)
    assert state.turn == (dealer + 1) % n
    assert state.dealer == dealer
    violation = refuse(state, (dealer + 2) % n, "draw stock")
    assert (violation.code, violation.rule) == (Code.NOT_YOUR_TURN, "C-TURN")


@pytest.mark.parametrize(("rules", "knob"), [
    pytest.param({"ace": "middle"}, "ace", id="C-RUN ace knob value refused"),
    pytest.param({"melds_per_turn": 0}, "melds_per_turn",
                 id="BASIC-MELDS-PER-TURN 0 refused"),
    pytest.param({"melds_per_turn": "many"}, "melds_per_turn",
                 id="BASIC-MELDS-PER-TURN unknown word refused"),
    pytest.param({"lay_off_requires_own_meld": "yes"}, "lay_off_requires_own_meld",
                 id="BASIC-LAYOFF knob must be a boolean"),
    pytest.param({"must_discard_to_go_out": 1}, "must_discard_to_go_out",
                 id="BASIC-OUT knob must be a boolean"),
    pytest.param({"scoring": "golf"}, "scoring", id="BASIC-SCORE scoring value refused"),
    pytest.param({"going_rummy": "triple"}, "going_rummy",
                 id="BASIC-RUMMY going_rummy value refused"),
    pytest.param({"stock_exhausted": "burn"}, "stock_exhausted",
                 id="C-STOCK stock_exhausted value refused"),
    pytest.param({"max_stock_rebuilds": -1}, "max_stock_rebuilds",
                 id="C-STOCK negative max_stock_rebuilds refused"),
    pytest.param({"match_end": {"target": 0}}, "match_end", id="BASIC-END target 0 refused"),
    pytest.param({"match_end": {"rounds": 3}}, "match_end",
                 id="BASIC-END unknown match_end refused"),
    pytest.param({"match_end": {"target": 100, "deals": 3}}, "match_end",
                 id="BASIC-END two match_end keys refused"),
    pytest.param({"opening_points": 51}, "opening_points",
                 id="R51-OPEN opening_points is not a knob of basic"),
    pytest.param({"no_such_knob": True}, "no_such_knob",
                 id="BASIC knobs: an unknown knob refused"),
])
def test_knob_values_checked(rules: dict[str, Any], knob: str) -> None:
    with pytest.raises(RulesError) as info:
        new_game("basic", ["a", "b"], rules, 0, None, Random(0))
    assert info.value.knob == knob


def test_c_deal_random_dealer_when_not_given() -> None:
    dealers = {new_game("basic", ["a", "b", "c"], {}, None, None, Random(seed))[0].dealer
               for seed in range(40)}
    assert dealers == {0, 1, 2}


def _short_hand(deal: dict[str, Any]) -> None:
    deal["stock"].append(deal["hands"][1].pop())


def _one_hand(deal: dict[str, Any]) -> None:
    deal["stock"].extend(deal["hands"].pop())


def _no_upcard(deal: dict[str, Any]) -> None:
    deal["stock"].extend(deal["discard"])
    deal["discard"] = []


def _duplicate(deal: dict[str, Any]) -> None:
    deal["stock"][-1] = deal["stock"][0]


def _joker(deal: dict[str, Any]) -> None:
    deal["stock"][-1] = "JK"


def _bad_code(deal: dict[str, Any]) -> None:
    deal["stock"][0] = "1C"


def _long_hand(deal: dict[str, Any]) -> None:
    deal["hands"][0].append(deal["stock"].pop())


@pytest.mark.parametrize(("spoil", "field"), [
    pytest.param(_short_hand, "deals.0.hands.1", id="BASIC-DEAL 9 cards for 2 players refused"),
    pytest.param(_long_hand, "deals.0.hands.0", id="BASIC-DEAL 11 cards for 2 players refused"),
    pytest.param(_one_hand, "deals.0.hands", id="BASIC-DEAL a hand per player required"),
    pytest.param(_no_upcard, "deals.0.discard", id="BASIC-DEAL an upcard is required"),
    pytest.param(_duplicate, "deals.0", id="C-DECK a card twice (one missing) refused"),
    pytest.param(_joker, "deals.0", id="C-DECK a joker is not in the basic deck"),
    pytest.param(_bad_code, "deals.0.stock.0", id="C-CARD bad code in a deal refused"),
])
def test_arranged_deal_checked(spoil: Any, field: str) -> None:
    deal = arrange([S0, S1], stock="KC", discard="4C")
    new_game("basic", ["a", "b"], {}, 1, [deal], Random(0))  # the unspoilt deal is fine
    spoil(deal)
    with pytest.raises(SetupError) as info:
        new_game("basic", ["a", "b"], {}, 1, [deal], Random(0))
    assert info.value.field == field


def test_arranged_deal_checked_for_later_hands() -> None:
    good = arrange([S0, S1], stock="KC", discard="4C")
    bad = arrange([S0, S1], stock="KC", discard="4C")
    _short_hand(bad)
    with pytest.raises(SetupError) as info:
        new_game("basic", ["a", "b"], {}, 1, [good, bad], Random(0))
    assert info.value.field == "deals.1.hands.1"


def test_c_card_arranged_deal_accepts_10_and_stores_canonical() -> None:
    deal = arrange([S0, S1], stock="KC", discard="4C")
    deal["stock"] = ["10H" if c == "TH" else c for c in deal["stock"]]
    state, _ = new_game("basic", ["a", "b"], {}, 1, [deal], Random(0))
    assert "TH" in state.stock
    assert "10H" not in state.stock
    assert state.stock[-1] == "KC"  # listed top first, stored top last
    assert state.discard == ["4C"]
    assert state.hands == [S0.split(), S1.split()]


SPADES = ["AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "JS", "QS", "KS"]


def _starter_deal(n: int, dealer: int) -> dict[str, Any]:
    """The seat left of ``dealer`` holds a run that the stock top completes to go out."""
    size = hand_size(n)
    hands: list[Any] = [None] * n
    hands[(dealer + 1) % n] = SPADES[:size]
    return arrange(hands, stock=[SPADES[size]])


@pytest.mark.parametrize("n", [
    pytest.param(2, id="C-SEAT two players: the deal alternates"),
    pytest.param(3, id="C-SEAT three players: the deal passes to the left"),
    pytest.param(5, id="C-SEAT five players: the deal passes to the left"),
])
def test_c_seat_deal_passes_left_each_hand(n: int) -> None:
    first = n - 1
    deals = [_starter_deal(n, (first + i) % n) for i in range(n + 1)]
    state, _ = new_game("basic", [f"p{i}" for i in range(n)], {"match_end": {"deals": 50}},
                        first, deals, Random(0))
    size = hand_size(n)
    for i in range(n + 1):
        dealer = (first + i) % n
        starter = (dealer + 1) % n
        assert (state.hand_number, state.dealer, state.turn) == (i + 1, dealer, starter)
        meld = " ".join(SPADES[:size + 1])
        state, events = play(state, (starter, "draw stock"), (starter, f"meld {meld}"))
        end = hand_end(events)
        assert (end["went_out"], end["reason"], end["hand_number"]) == (starter, "out", i + 1)
        (dealt,) = events_of(events, "dealt")
        assert (dealt["dealer"], dealt["first"]) == ((dealer + 1) % n, (dealer + 2) % n)


# ---------------------------------------------------------------------------------------
# C-TURN


def _with_meld() -> GameState:
    """Seat 0 has melded 3H 4H 5H 6H (m1) and discarded KC; seat 1 is to draw."""
    state, _ = play(two(), (0, "draw stock"), (0, "meld 3H 4H 5H 6H"), (0, "discard KC"))
    return state


@pytest.mark.parametrize(("setup", "seat", "move", "code", "rule"), [
    pytest.param("start", 0, "meld 7S 7D 7C", Code.WRONG_PHASE, "C-TURN",
                 id="C-TURN meld before drawing: WRONG_PHASE"),
    pytest.param("start", 0, "discard KS", Code.WRONG_PHASE, "C-TURN",
                 id="C-TURN discard before drawing: WRONG_PHASE"),
    pytest.param("meld", 1, "lay m1 7H", Code.WRONG_PHASE, "C-TURN",
                 id="C-TURN lay off before drawing: WRONG_PHASE"),
    pytest.param("drawn", 0, "draw stock", Code.WRONG_PHASE, "C-TURN",
                 id="C-TURN draw twice: WRONG_PHASE"),
    pytest.param("drawn", 0, "draw discard", Code.WRONG_PHASE, "C-TURN",
                 id="C-TURN draw the discard after drawing: WRONG_PHASE"),
    pytest.param("start", 1, "draw stock", Code.NOT_YOUR_TURN, "C-TURN",
                 id="C-TURN not your turn: NOT_YOUR_TURN"),
    pytest.param("drawn", 1, "discard AS", Code.NOT_YOUR_TURN, "C-TURN",
                 id="C-TURN discard out of turn: NOT_YOUR_TURN"),
    pytest.param("start", 2, "draw stock", Code.NOT_YOUR_TURN, "C-SEAT",
                 id="C-SEAT no such seat: NOT_YOUR_TURN"),
    pytest.param("start", -1, "draw stock", Code.NOT_YOUR_TURN, "C-SEAT",
                 id="C-SEAT negative seat: NOT_YOUR_TURN"),
    pytest.param("drawn", 0, "discard AS", Code.CARD_NOT_IN_HAND, "C-TURN",
                 id="C-TURN discard a card not in hand"),
    pytest.param("drawn", 0, "meld 7S 7D 7H", Code.CARD_NOT_IN_HAND, "C-TURN",
                 id="C-TURN meld a card not in hand"),
    pytest.param("drawn", 0, "meld 7S 7D 7C / 7S 7D 7C", Code.CARD_NOT_IN_HAND, "C-TURN",
                 id="C-TURN the same cards twice in one meld action"),
    pytest.param("meld-drawn", 1, "lay m1 7H", Code.CARD_NOT_IN_HAND, "C-TURN",
                 id="C-TURN lay off a card not in hand"),
    pytest.param("meld-drawn", 1, "lay m9 8H", Code.UNKNOWN_MELD, "C-LAYOFF",
                 id="C-LAYOFF unknown meld id"),
    pytest.param("meld-drawn", 1, "lay m1 8H", Code.INVALID_LAY_OFF, "C-LAYOFF",
                 id="C-LAYOFF a card that does not fit"),
    pytest.param("meld-drawn", 1, "lay m1 2C", Code.INVALID_LAY_OFF, "C-LAYOFF",
                 id="C-LAYOFF a card of another suit"),
    pytest.param("drawn", 0, "meld 7S 7D KS", Code.INVALID_MELD, "BASIC-SET",
                 id="C-MELD an invalid meld: INVALID_MELD"),
    pytest.param("drawn", 0, "meld 3H 4H", Code.INVALID_MELD, "C-SET",
                 id="C-SET two cards are no meld"),
])
def test_c_turn_refusals(setup: str, seat: int, move: str, code: Code, rule: str) -> None:
    state = {
        "start": two,
        "drawn": lambda: play(two(), (0, "draw stock"))[0],
        "meld": _with_meld,
        "meld-drawn": lambda: play(_with_meld(), (1, "draw stock"))[0],
    }[setup]()
    violation = refuse(state, seat, move)
    assert (violation.code, violation.rule) == (code, rule)
    assert violation.detail


def test_c_meld_every_reason_of_an_invalid_meld() -> None:
    state, _ = play(two(), (0, "draw stock"))
    violation = refuse(state, 0, "meld 3H 7S KS")
    assert [(r.code, r.rule) for r in violation.reasons] == [
        (Code.INVALID_MELD, "BASIC-SET"), (Code.INVALID_MELD, "C-RUN")]
    violation = refuse(state, 0, "meld 7S 7D 7C / 3H 4H KS")
    assert [(r.code, r.rule) for r in violation.reasons] == [
        (Code.INVALID_MELD, "BASIC-SET"), (Code.INVALID_MELD, "C-RUN")]
    assert all(r.detail.startswith("meld 2 ") for r in violation.reasons)


@pytest.mark.parametrize(("move", "code", "rules"), [
    pytest.param(CutIn(), Code.CUT_IN_NOT_ALLOWED, {"C-TURN", "DUMMY-CUTIN"},
                 id="DUMMY-CUTIN basic has no cut-ins"),
    pytest.param(SwapJoker("m1", "6H"), Code.SWAP_NOT_ALLOWED,
                 {"C-TURN", "R51-SWAP", "WROTHAM-SWAP"},
                 id="C-TURN basic has no joker swap (cites a RULES.md id)"),
    pytest.param(TakeFromMeld((Take("m1", "6H"),), ((Piece("6H"),),)), Code.INVALID_MELD,
                 {"C-TURN", "R51-TAKE"}, id="R51-TAKE basic has no take_from_meld"),
])
def test_moves_of_other_variants_refused(move: Move, code: Code, rules: set[str]) -> None:
    state, _ = play(_with_meld(), (1, "draw stock"))
    before = state.to_dict()
    with pytest.raises(Violation) as info:
        apply(state, 1, move, Random(1))
    assert state.to_dict() == before
    assert info.value.code is code
    assert info.value.rule in rules, f"{info.value.rule!r} is not one of {sorted(rules)}"


def test_c_turn_empty_discard_pile() -> None:
    """C-TURN: drawing from an empty discard pile is refused (EMPTY_PILE). Basic always
    has a card there at the start of a turn, so the state is built by hand."""
    data = two().to_dict()
    data["stock"] = data["discard"] + data["stock"]
    data["discard"] = []
    state = GameState.from_dict(data)
    check_conservation(state)
    violation = refuse(state, 0, "draw discard")
    assert (violation.code, violation.rule) == (Code.EMPTY_PILE, "C-TURN")


def test_c_turn_a_whole_turn() -> None:
    """C-TURN: draw, meld, lay off, discard; the turn passes to the left."""
    state, events = play(two(), (0, "draw discard"))
    assert state.hands[0][-1] == "4C"
    assert state.discard == []
    assert events == [{"type": "draw", "seat": 0, "source": "discard", "card": "4C"}]
    state, events = play(state, (0, "meld 7S 7D 7C / 3H 4H 5H"), (0, "lay m2 6H"),
                         (0, "discard KS"))
    assert [(m.id, m.owner, m.kind, m.cards) for m in state.melds] == [
        ("m1", 0, "set", ["7S", "7D", "7C"]), ("m2", 0, "run", ["3H", "4H", "5H", "6H"])]
    assert sorted(state.hands[0]) == sorted(["KH", "KD", "4C"])
    assert state.discard == ["KS"]
    assert (state.turn, state.phase) == (1, "draw")
    assert [e["type"] for e in events] == ["meld", "lay_off", "discard"]


# ---------------------------------------------------------------------------------------
# C-DISCARD-BACK


def test_c_discard_back_taken_card_may_not_be_discarded() -> None:
    state, _ = play(two(), (0, "draw discard"))
    violation = refuse(state, 0, "discard 4C")
    assert (violation.code, violation.rule) == (Code.DISCARD_TAKEN_CARD, "C-DISCARD-BACK")
    state, _ = play(state, (0, "discard KS"))
    assert state.discard == ["KS"]


def test_c_discard_back_stock_card_may_be_discarded_at_once() -> None:
    state, _ = play(two(), (0, "draw stock"), (0, "discard KC"))
    assert state.discard == ["4C", "KC"]
    assert state.turn == 1


def test_c_discard_back_next_turn_the_taken_card_may_go() -> None:
    state, _ = play(two(), (0, "draw discard"), (0, "discard KS"), (1, "draw stock"),
                    (1, "discard KC"), (0, "draw stock"), (0, "discard 4C"))
    assert state.discard[-1] == "4C"


def test_c_discard_back_meld_leaving_only_the_taken_card_refused() -> None:
    state = two(discard="KC", stock="4C")
    state, _ = play(state, (0, "draw discard"))
    violation = refuse(state, 0, "meld 3H 4H 5H 6H / 7S 7D 7C / KS KH KD")
    assert (violation.code, violation.rule) == (Code.DISCARD_TAKEN_CARD, "C-DISCARD-BACK")
    state, events = play(state, (0, "meld 3H 4H 5H 6H / 7S 7D 7C / KS KH KD KC"))
    assert hand_end(events)["went_out"] == 0


# ---------------------------------------------------------------------------------------
# C-LAYOFF


@pytest.mark.parametrize(("lay", "cards", "first"), [
    pytest.param("lay m1 2H", ["2H", "3H", "4H", "5H", "6H"], 2,
                 id="C-LAYOFF on the opponent's run, low end"),
    pytest.param("lay m1 7H", ["3H", "4H", "5H", "6H", "7H"], 3,
                 id="C-LAYOFF on the opponent's run, high end"),
    pytest.param("lay m1 7H 2H", ["2H", "3H", "4H", "5H", "6H", "7H"], 2,
                 id="C-LAYOFF both ends in one lay-off"),
    pytest.param("lay m1 2H @low", ["2H", "3H", "4H", "5H", "6H"], 2,
                 id="C-LAYOFF end low honoured"),
])
def test_c_layoff_anyones_meld(lay: str, cards: list[str], first: int) -> None:
    state = start_two_layoff()
    state, events = play(state, (1, "draw stock"), (1, lay))
    (m1,) = state.melds
    assert (m1.id, m1.owner, m1.kind, m1.cards, m1.start) == ("m1", 0, "run", cards, first)
    (event,) = events_of(events, "lay_off")
    assert (event["seat"], event["meld_id"], event["meld"]["cards"]) == (1, "m1", cards)


def start_two_layoff() -> GameState:
    """Seat 0 melds 3H-6H (m1); seat 1 holds 2H and 7H."""
    state = start(["3H 4H 5H 6H 7S 7D 7C KS KH KD", "2H 7H 2C 5D 9S TS JC QD QC 8H"],
                  dealer=1, stock="KC 2S 3S", discard="4C")
    state, _ = play(state, (0, "draw stock"), (0, "meld 3H 4H 5H 6H"), (0, "discard KC"))
    return state


def test_a_move_shares_the_melds_it_leaves_and_copies_the_one_it_changes() -> None:
    """A new state shares its table's melds with the state it came from, but for a meld the
    move changes: that one is a copy, and the meld of the state before stays as it was."""
    state = start(["3H 4H 5H 6H 7S 7D 7C KS KH KD", "2H 7H 2C 5D 9S TS JC QD QC 8H"],
                  dealer=1, stock="KC 2S 3S", discard="4C")
    state, _ = play(state, (0, "draw stock"), (0, "meld 3H 4H 5H 6H / 7S 7D 7C"),
                    (0, "discard KC"), (1, "draw stock"))
    run, three = state.melds
    drawn, _ = play(state, (1, "discard 2S"))
    assert drawn.melds is not state.melds
    assert all(a is b for a, b in zip(drawn.melds, state.melds, strict=True))
    laid, _ = play(state, (1, "lay m1 7H"))
    assert laid.melds[1] is three and laid.melds[0] is not run
    assert laid.melds[0].cards == ["3H", "4H", "5H", "6H", "7H"]
    assert (run.cards, run.idents) == (["3H", "4H", "5H", "6H"], ["3H", "4H", "5H", "6H"])
    assert state.melds == [run, three]
    with pytest.raises(ValueError, match="m1"):
        laid.own_meld(run)  # not on that table: its copy is


def test_c_layoff_one_meld_named_by_two_lay_offs_of_a_meld_action_refused() -> None:
    """Each lay-off of a meld action is read against the table as it was: two on one meld
    would each extend it as it was (one's cards would leave the hand and the table). The
    move is refused, naming the meld; its cards in one lay-off are laid off."""
    state = start(["3H 4H 5H 6H 7S 7D 7C KS KH KD", "2H 7H 8H 5D 5S 5C JC QD QC 9S"],
                  dealer=1, stock="KC 2S 3S 4S", discard="4C")
    state, _ = play(state, (0, "draw stock"), (0, "meld 3H 4H 5H 6H"), (0, "discard KC"),
                    (1, "draw stock"))
    violation = refuse(state, 1, "meld 5D 5S 5C + m1 2H + m1 7H")
    assert (violation.code, violation.rule) == (Code.INVALID_LAY_OFF, "C-LAYOFF")
    assert "m1" in str(violation)
    state, _ = play(state, (1, "meld 5D 5S 5C + m1 2H 7H"))
    assert state.melds[0].cards == ["2H", "3H", "4H", "5H", "6H", "7H"]


def test_c_layoff_end_that_does_not_fit_refused() -> None:
    state, _ = play(start_two_layoff(), (1, "draw stock"))
    for move in ("lay m1 2H @high", "lay m1 7H @low"):
        violation = refuse(state, 1, move)
        assert (violation.code, violation.rule) == (Code.INVALID_LAY_OFF, "C-LAYOFF")


def test_c_layoff_on_a_set() -> None:
    state = start(["7S 7D 7C 3H 4H 5H KS KH KD 9C", "7H 2C 5D 9S TS JC QD QC 8H AS"],
                  dealer=1, stock="2S 3S 4S", discard="4C")
    state, _ = play(state, (0, "draw stock"), (0, "meld 7S 7D 7C"), (0, "discard 2S"),
                    (1, "draw stock"), (1, "lay m1 7H"))
    assert (state.melds[0].cards, state.melds[0].owner) == (["7S", "7H", "7D", "7C"], 0)


# ---------------------------------------------------------------------------------------
# C-OUT and BASIC-OUT


def _after_hand(state: GameState, n: int, dealer: int) -> None:
    """The next hand was dealt with the next dealer (C-SEAT, C-DEAL)."""
    assert state.status == "playing"
    assert (state.hand_number, state.dealer, state.turn, state.phase) == (
        2, dealer, (dealer + 1) % n, "draw")
    assert [len(h) for h in state.hands] == [hand_size(n)] * n
    assert state.melds == []
    assert len(state.discard) == 1
    assert len(state.stock) == 52 - n * hand_size(n) - 1
    check_conservation(state)


RUN10 = "3H 4H 5H 6H 7H 8H 9H TH JH QH"


@pytest.mark.parametrize(("steps", "how"), [
    pytest.param([(0, "draw stock"), (0, "meld 3H 4H 5H 6H / 7S 7D 7C / KS KH KD KC")],
                 "meld", id="C-OUT going out by melding the last cards"),
    pytest.param([(0, "draw stock"), (0, "meld 3H 4H 5H 6H / 7S 7D 7C / KS KH KD"),
                  (0, "lay m3 KC")], "lay_off", id="C-OUT going out by a lay-off"),
    pytest.param([(0, "draw stock"), (0, "meld 3H 4H 5H 6H / 7S 7D 7C / KS KH KD"),
                  (0, "discard KC")], "discard", id="C-OUT going out by a discard"),
])
def test_c_out_ends_the_hand(steps: list[tuple[int, str]], how: str) -> None:
    state, events = play(two(), *steps)
    end = hand_end(events)
    assert (end["went_out"], end["reason"], end["hand_number"]) == (0, "out", 1)
    assert end["counts"] == [0, S1_COUNT_LOW]
    assert events_of(events, how)
    assert [e["type"] for e in events][-3:] == ["hand_end", "deal_revealed", "dealt"]
    _after_hand(state, 2, 0)


def test_c_out_after_the_hand_ends_the_old_hand_is_gone() -> None:
    state, _ = play(two(), (0, "draw stock"), (0, "meld 3H 4H 5H 6H / 7S 7D 7C / KS KH KD KC"))
    violation = refuse(state, 0, "draw stock")
    assert (violation.code, violation.rule) == (Code.NOT_YOUR_TURN, "C-TURN")
    assert state.history[0]["went_out"] == 0


# ---------------------------------------------------------------------------------------
# BASIC-SCORE and BASIC-RUMMY

RUMMY_BY_MELD = [(0, "draw stock"), (0, "meld 3H 4H 5H 6H / 7S 7D 7C / KS KH KD KC")]


@pytest.mark.parametrize(("rules", "scores"), [
    pytest.param({"going_rummy": "double"}, [2 * S1_COUNT_LOW, 0],
                 id="BASIC-RUMMY double, winner_collects: 2 x 66"),
    pytest.param({"going_rummy": "bonus10"}, [S1_COUNT_LOW + 10, 0],
                 id="BASIC-RUMMY bonus10, winner_collects: 66 + 10"),
    pytest.param({"going_rummy": "off"}, [S1_COUNT_LOW, 0],
                 id="BASIC-RUMMY off, winner_collects: 66"),
    pytest.param({"scoring": "penalty", "going_rummy": "double"}, [0, 2 * S1_COUNT_LOW],
                 id="BASIC-RUMMY double, penalty: loser 2 x 66"),
    pytest.param({"scoring": "penalty", "going_rummy": "bonus10"}, [-10, S1_COUNT_LOW],
                 id="BASIC-RUMMY bonus10, penalty: a 10-point bonus to the winner"),
    pytest.param({"scoring": "penalty", "going_rummy": "off"}, [0, S1_COUNT_LOW],
                 id="BASIC-RUMMY off, penalty: loser 66, winner 0"),
    pytest.param({"ace": "high_or_low", "going_rummy": "off"}, [S1_COUNT_HIGH, 0],
                 id="BASIC-SCORE ace high_or_low counts 15"),
    pytest.param({"ace": "around", "going_rummy": "double"}, [2 * S1_COUNT_HIGH, 0],
                 id="BASIC-SCORE ace around counts 15, doubled"),
    pytest.param({"ace": "high_or_low", "scoring": "penalty", "going_rummy": "off"},
                 [0, S1_COUNT_HIGH], id="BASIC-SCORE penalty ace 15"),
])
def test_basic_score_going_rummy_by_melding_everything(rules: dict[str, Any],
                                                       scores: list[int]) -> None:
    rules = {**rules, "match_end": {"deals": 9}}
    state, events = play(two(rules), *RUMMY_BY_MELD)
    end = hand_end(events)
    counts = [0, S1_COUNT_HIGH if rules.get("ace", "low") != "low" else S1_COUNT_LOW]
    assert end["counts"] == counts
    assert end["scores"] == scores
    if rules["going_rummy"] != "off":
        assert end["going_rummy"] is True
    assert state.totals == scores
    assert end["totals"] == scores


@pytest.mark.parametrize(("cards", "ace", "count"), [
    pytest.param("AS", "low", 1, id="BASIC-SCORE ace 1 with ace low"),
    pytest.param("AS", "high_or_low", 15, id="BASIC-SCORE ace 15 with ace high_or_low"),
    pytest.param("AS", "around", 15, id="BASIC-SCORE ace 15 with ace around"),
    pytest.param("2S", "low", 2, id="BASIC-SCORE 2 face value"),
    pytest.param("2S", "around", 2, id="BASIC-SCORE 2 face value with ace around"),
    pytest.param("9S", "low", 9, id="BASIC-SCORE 9 face value"),
    pytest.param("TS", "low", 10, id="BASIC-SCORE 10 face value"),
    pytest.param("JS", "low", 10, id="BASIC-SCORE jack 10"),
    pytest.param("QS", "high_or_low", 10, id="BASIC-SCORE queen 10"),
    pytest.param("KS", "around", 10, id="BASIC-SCORE king 10"),
])
def test_basic_score_card_counts(cards: str, ace: str, count: int) -> None:
    """Seat 0 goes out at once; seat 1 holds 3D-8D (33) and the card."""
    hands = ["3C 4C 5C 6C 7C 8C 9C", f"3D 4D 5D 6D 7D 8D {cards}", None]
    state = start(hands, dealer=2, stock="TC JD QD KD",
                  rules={"ace": ace, "going_rummy": "off", "match_end": {"deals": 9}})
    state, events = play(state, (0, "draw stock"), (0, "meld 3C 4C 5C 6C 7C 8C 9C TC"))
    end = hand_end(events)
    assert end["counts"][:2] == [0, 33 + count]
    assert end["scores"][0] == sum(end["counts"])


@pytest.mark.parametrize(("knobs", "scores"), [
    pytest.param({"going_rummy": "double"}, [S1_COUNT_LOW, 0],
                 id="BASIC-RUMMY not rummy when cards went down in an earlier turn"),
    pytest.param({"going_rummy": "bonus10"}, [S1_COUNT_LOW, 0],
                 id="BASIC-RUMMY no bonus when cards went down earlier"),
    pytest.param({"going_rummy": "double", "scoring": "penalty"}, [0, S1_COUNT_LOW],
                 id="BASIC-RUMMY penalty not doubled when cards went down earlier"),
])
def test_basic_rummy_not_when_tabled_earlier(knobs: dict[str, Any], scores: list[int]) -> None:
    _, events = play(two(knobs, stock="2S 3S KC"),
                         (0, "draw stock"), (0, "meld 3H 4H 5H 6H"), (0, "discard 2S"),
                         (1, "draw stock"), (1, "discard 3S"),
                         (0, "draw stock"), (0, "meld 7S 7D 7C / KS KH KD KC"))
    end = hand_end(events)
    assert (end["went_out"], end["going_rummy"], end["scores"]) == (0, False, scores)


def test_basic_rummy_not_after_an_earlier_lay_off() -> None:
    """BASIC-RUMMY: a lay-off in an earlier turn is a card put on the table too."""
    state = start(["3H 4H 5H 6H 7S 7D 7C KS KH 4C", "AS AD 2C 5D 9S TS JS QD QC 8H"],
                  dealer=1, stock="2D 3D 8S 5C KD", discard="4S",
                  rules={"going_rummy": "double", "match_end": {"deals": 9}})
    state, events = play(state, (0, "draw stock"), (0, "discard 2D"),
                         (1, "draw stock"), (1, "meld 9S TS JS"), (1, "discard 3D"),
                         (0, "draw stock"), (0, "lay m1 8S"), (0, "discard 4C"),
                         (1, "draw stock"), (1, "discard 5C"),
                         (0, "draw stock"), (0, "meld 3H 4H 5H 6H / 7S 7D 7C / KS KH KD"))
    end = hand_end(events)
    assert (end["went_out"], end["going_rummy"]) == (0, False)
    assert end["counts"] == [0, 1 + 1 + 2 + 5 + 10 + 10 + 8]
    assert end["scores"] == [37, 0]


def test_c_meld_an_empty_meld_action_is_refused() -> None:
    """C-MELD / BASIC-LAYOFF: a meld action that puts no meld down is not a meld (built
    directly: the wire form refuses an empty ``melds`` list). Accepting it would count as
    having melded for ``lay_off_requires_own_meld``."""
    state, _ = play(two({"lay_off_requires_own_meld": True}), (0, "draw stock"))
    violation = refuse(state, 0, MeldMove(()))
    assert violation.code is Code.INVALID_MELD


@pytest.mark.parametrize(("stock", "steps"), [
    pytest.param("2S KC 3S", [(0, "draw stock"), (0, "meld 3H 4H 5H 6H / 7S 7D 7C / KS KH KD"),
                              (0, "discard 2S")],
                 id="BASIC-RUMMY whole hand down in one turn with the final discard"),
    pytest.param("2S KC 3S", [(0, "draw stock"), (0, "meld 3H 4H 5H 6H"), (0, "meld 7S 7D 7C"),
                              (0, "meld KS KH KD"), (0, "discard 2S")],
                 id="BASIC-RUMMY three melds then the final discard in one turn"),
    pytest.param("2H KC 3S", [(0, "draw stock"), (0, "meld 3H 4H 5H 6H / 7S 7D 7C / KS KH KD"),
                              (0, "lay m1 2H")],
                 id="BASIC-RUMMY whole hand down in one turn ending with a lay-off"),
    pytest.param("KC 2S 3S", RUMMY_BY_MELD,
                 id="BASIC-RUMMY whole hand down in one turn ending with a meld"),
])
def test_basic_rummy_whole_hand_in_one_turn(stock: str, steps: list[tuple[int, str]]) -> None:
    state = two({"going_rummy": "double", "match_end": {"deals": 9}}, stock=stock)
    state, events = play(state, *steps)
    end = hand_end(events)
    assert (end["went_out"], end["scores"], end["going_rummy"]) == (
        0, [2 * S1_COUNT_LOW, 0], True)
    assert state.totals == [2 * S1_COUNT_LOW, 0]


# ---------------------------------------------------------------------------------------
# BASIC-BLOCK and C-STOCK (a hand ending with nobody out)

# Four players, seat 3 deals, the stock holds exactly four cards: each seat draws one,
# melds, and discards the drawn card; then seat 0 finds the stock empty.
BLOCK_HANDS = ["3H 4H 5H 8S 8D 8C 6C", "9S 9H 9D 9C TC 3C 2C",
               "JS QS KS JH JD JC 7C", "QH QD QC TD 8H 2D AC"]
BLOCK_MELDS = ["3H 4H 5H / 8S 8D 8C", "9S 9H 9D 9C", "JS QS KS / JH JD JC", "QH QD QC"]
BLOCK_COUNTS = [6, 15, 7, 21]
TIE_HANDS = ["3H 4H 5H 8S 8D 8C 6C", "9S 9H 9D 9C AC 2C 3C",
             "JS QS KS TC 2D 2H AD", "QH QD QC TD 7H 4C AH"]
TIE_MELDS = ["3H 4H 5H / 8S 8D 8C", "9S 9H 9D 9C", "JS QS KS", "QH QD QC"]
TIE_COUNTS = [6, 6, 15, 22]
STOCK4 = "4S 5S 6S 7S"


def _block(hands: list[str], melds: list[str], rules: dict[str, Any]
           ) -> tuple[GameState, list[Event]]:
    state = start(hands, dealer=3, rules=rules, stock=STOCK4, rest="discard")
    steps = []
    for seat, drawn in enumerate(STOCK4.split()):
        steps += [(seat, "draw stock"), (seat, f"meld {melds[seat]}"),
                  (seat, f"discard {drawn}")]
    state, _ = play(state, *steps)
    assert state.stock == []
    return play(state, (0, "draw stock"))


@pytest.mark.parametrize(("rules", "hands", "melds", "counts", "scores"), [
    pytest.param({"stock_exhausted": "end_hand"}, BLOCK_HANDS, BLOCK_MELDS, BLOCK_COUNTS,
                 [25, 0, 0, 0], id="BASIC-BLOCK winner_collects 6,15,7,21 -> 25 to the lowest"),
    pytest.param({"stock_exhausted": "end_hand"}, TIE_HANDS, TIE_MELDS, TIE_COUNTS,
                 [12.5, 12.5, 0, 0], id="BASIC-BLOCK tie for lowest shares 12.5 each"),
    pytest.param({"stock_exhausted": "end_hand", "scoring": "penalty"}, BLOCK_HANDS,
                 BLOCK_MELDS, BLOCK_COUNTS, BLOCK_COUNTS,
                 id="BASIC-BLOCK penalty: each scores their own count"),
    pytest.param({"stock_exhausted": "end_hand", "scoring": "penalty"}, TIE_HANDS,
                 TIE_MELDS, TIE_COUNTS, TIE_COUNTS,
                 id="BASIC-BLOCK penalty with a tie: each their own count"),
    pytest.param({"stock_exhausted": "shuffle", "max_stock_rebuilds": 0}, BLOCK_HANDS,
                 BLOCK_MELDS, BLOCK_COUNTS, [25, 0, 0, 0],
                 id="C-STOCK max_stock_rebuilds 0 with shuffle: block"),
    pytest.param({"stock_exhausted": "turn_over", "max_stock_rebuilds": 0}, BLOCK_HANDS,
                 BLOCK_MELDS, BLOCK_COUNTS, [25, 0, 0, 0],
                 id="C-STOCK max_stock_rebuilds 0 with turn_over: block"),
])
def test_basic_block(rules: dict[str, Any], hands: list[str], melds: list[str],
                     counts: list[int], scores: list[float]) -> None:
    state, events = _block(hands, melds, {**rules, "match_end": {"deals": 9}})
    end = hand_end(events)
    assert (end["went_out"], end["reason"], end["going_rummy"]) == (
        None, "stock_exhausted", False)
    assert end["counts"] == counts
    assert end["scores"] == scores
    assert state.totals == scores
    assert not events_of(events, "draw")
    assert not events_of(events, "stock_rebuilt")
    # the next hand is dealt by the next dealer
    assert (state.hand_number, state.dealer, state.turn) == (2, 0, 1)
    check_conservation(state)


def _empty_stock(rules: dict[str, Any]) -> GameState:
    """Two players; the stock is empty and the discard pile holds the 32 other cards."""
    return start([S0, S1], dealer=1, rules={**rules, "match_end": {"deals": 9}},
                 rest="discard")


def test_c_stock_turn_over() -> None:
    state = _empty_stock({"stock_exhausted": "turn_over"})
    pile = list(state.discard)
    assert state.stock == [] and len(pile) == 32
    state, events = play(state, (0, "draw stock"))
    (rebuilt,) = events_of(events, "stock_rebuilt")
    assert (rebuilt["policy"], rebuilt["rebuilds"], rebuilt["stock_count"],
            rebuilt["discard_count"]) == ("turn_over", 1, 32, 0)
    # the old bottom card (the upcard) became the top of the stock and was drawn
    assert state.hands[0][-1] == pile[0]
    assert state.discard == []
    assert state.stock == list(reversed(pile[1:]))  # next top: the card that lay on it
    assert state.stock[-1] == pile[1]
    assert state.rebuilds == 1


def test_c_stock_shuffle_keeps_the_top_discard() -> None:
    state = _empty_stock({"stock_exhausted": "shuffle"})
    pile = list(state.discard)
    state, events = play(state, (0, "draw stock"))
    (rebuilt,) = events_of(events, "stock_rebuilt")
    assert (rebuilt["policy"], rebuilt["rebuilds"], rebuilt["stock_count"],
            rebuilt["discard_count"]) == ("shuffle", 1, 31, 1)
    assert state.discard == [pile[-1]]
    assert Counter([*state.stock, state.hands[0][-1]]) == Counter(pile[:-1])


def test_c_stock_end_hand() -> None:
    state = _empty_stock({"stock_exhausted": "end_hand"})
    state, events = play(state, (0, "draw stock"))
    end = hand_end(events)
    assert (end["went_out"], end["reason"]) == (None, "stock_exhausted")
    assert end["counts"] == [S0_COUNT, S1_COUNT_LOW]
    assert end["scores"] == [0, S0_COUNT - S1_COUNT_LOW]  # 69 - 66 = 3 to the lowest
    assert not events_of(events, "stock_rebuilt")
    _after_hand(state, 2, 0)


@pytest.mark.parametrize("policy", [
    pytest.param("turn_over", id="C-STOCK turn_over: the discard may still be taken"),
    pytest.param("shuffle", id="C-STOCK shuffle: the discard may still be taken"),
    pytest.param("end_hand", id="C-STOCK end_hand: the discard may still be taken"),
])
def test_c_stock_empty_stock_player_may_take_the_discard(policy: str) -> None:
    state = _empty_stock({"stock_exhausted": policy})
    top = state.discard[-1]
    state, events = play(state, (0, "draw discard"))
    assert state.hands[0][-1] == top
    assert state.hand_number == 1
    assert state.rebuilds == 0
    assert not events_of(events, "stock_rebuilt")


@pytest.mark.parametrize(("policy", "limit", "rebuilds_before_end"), [
    pytest.param("turn_over", 1, 1, id="C-STOCK max_stock_rebuilds 1 (turn_over)"),
    pytest.param("turn_over", 2, 2, id="C-STOCK max_stock_rebuilds 2 (turn_over)"),
    pytest.param("shuffle", 1, 1, id="C-STOCK max_stock_rebuilds 1 (shuffle)"),
    pytest.param("shuffle", 3, 3, id="C-STOCK max_stock_rebuilds default 3 (shuffle)"),
])
def test_c_stock_max_rebuilds_ends_the_hand(policy: str, limit: int,
                                            rebuilds_before_end: int) -> None:
    rules: dict[str, Any] = {"stock_exhausted": policy}
    if limit != 3:
        rules["max_stock_rebuilds"] = limit
    state = start([S0, S1], dealer=1, rules={**rules, "match_end": {"deals": 9}})
    assert state.rules["max_stock_rebuilds"] == limit
    state, events = stock_cycle(state, 2000)
    rebuilt = events_of(events, "stock_rebuilt")
    assert [e["rebuilds"] for e in rebuilt] == list(range(1, rebuilds_before_end + 1))
    end = hand_end(events)
    assert (end["went_out"], end["reason"]) == (None, "stock_exhausted")
    # both hands are unchanged: 69 and 66 -> 3 to seat 1
    assert end["counts"] == [S0_COUNT, S1_COUNT_LOW]
    assert end["scores"] == [0, 3]
    assert state.hand_number == 2


def test_c_stock_unlimited_rebuilds() -> None:
    state = start([S0, S1], dealer=1, rules={"stock_exhausted": "turn_over",
                                             "max_stock_rebuilds": None})
    state, events = stock_cycle(state, 31 * 6)
    assert [e["rebuilds"] for e in events_of(events, "stock_rebuilt")] == [1, 2, 3, 4, 5]
    assert not events_of(events, "hand_end")
    assert state.hand_number == 1


# ---------------------------------------------------------------------------------------
# BASIC-MELDS-PER-TURN, BASIC-LAYOFF, BASIC-OUT knobs


def test_basic_melds_per_turn_1() -> None:
    state, _ = play(two({"melds_per_turn": 1}, stock="2H KC 3S"), (0, "draw stock"))
    violation = refuse(state, 0, "meld 3H 4H 5H 6H / 7S 7D 7C")
    assert (violation.code, violation.rule) == (Code.MELD_LIMIT, "BASIC-MELDS-PER-TURN")
    state, _ = play(state, (0, "meld 3H 4H 5H"))
    violation = refuse(state, 0, "meld 7S 7D 7C")
    assert (violation.code, violation.rule) == (Code.MELD_LIMIT, "BASIC-MELDS-PER-TURN")
    # lay-offs are never limited
    state, _ = play(state, (0, "lay m1 6H"), (0, "lay m1 2H"), (0, "discard KS"),
                    (1, "draw stock"), (1, "discard KC"), (0, "draw stock"),
                    (0, "meld 7S 7D 7C"))
    assert [m.cards for m in state.melds] == [["2H", "3H", "4H", "5H", "6H"],
                                              ["7S", "7D", "7C"]]


@pytest.mark.parametrize(("knob", "allowed"), [
    pytest.param("unlimited", 3, id="BASIC-MELDS-PER-TURN unlimited: three melds"),
    pytest.param(2, 2, id="BASIC-MELDS-PER-TURN 2: the third is refused"),
    pytest.param(1, 1, id="BASIC-MELDS-PER-TURN 1: the second is refused"),
])
def test_basic_melds_per_turn_counts(knob: Any, allowed: int) -> None:
    state, _ = play(two({"melds_per_turn": knob}), (0, "draw stock"))
    melds = ["3H 4H 5H 6H", "7S 7D 7C", "KS KH KD"]
    for i, meld in enumerate(melds):
        if i < allowed:
            state, _ = play(state, (0, f"meld {meld}"))
        else:
            violation = refuse(state, 0, f"meld {meld}")
            assert (violation.code, violation.rule) == (Code.MELD_LIMIT,
                                                        "BASIC-MELDS-PER-TURN")
    assert len(state.melds) == allowed


@pytest.mark.parametrize(("knob", "refused"), [
    pytest.param(True, True, id="BASIC-LAYOFF lay_off_requires_own_meld true: refused"),
    pytest.param(False, False, id="BASIC-LAYOFF default: lay off on anyone's meld"),
])
def test_basic_layoff_requires_own_meld(knob: bool, refused: bool) -> None:
    state = start(["3H 4H 5H 6H 7S 7D 7C KS KH KD", "7H 9C 9D 9S 2C 5D TS JC QD QC"],
                  dealer=1, stock="KC 2S 3S", discard="4C",
                  rules={"lay_off_requires_own_meld": knob})
    state, _ = play(state, (0, "draw stock"), (0, "meld 3H 4H 5H 6H"), (0, "discard KC"),
                    (1, "draw stock"))
    if refused:
        violation = refuse(state, 1, "lay m1 7H")
        assert (violation.code, violation.rule) == (Code.INVALID_LAY_OFF, "BASIC-LAYOFF")
        state, _ = play(state, (1, "meld 9C 9D 9S"))
    state, _ = play(state, (1, "lay m1 7H"))
    assert state.melds[0].cards == ["3H", "4H", "5H", "6H", "7H"]


def test_basic_layoff_requires_own_meld_in_this_hand() -> None:
    """BASIC-LAYOFF: a meld made in an earlier hand does not count."""
    hand2 = arrange(["7H 9C 9D 9S 2C 5D TS JC QD QC", S0], stock="KC 2S", discard="4C")
    state = two({"lay_off_requires_own_meld": True, "match_end": {"deals": 9}},
                later=[hand2])
    state, _ = play(state, *RUMMY_BY_MELD)  # hand 1: seat 0 melds everything
    assert (state.hand_number, state.turn) == (2, 1)
    state, _ = play(state, (1, "draw stock"), (1, "meld 3H 4H 5H 6H"), (1, "discard KC"),
                    (0, "draw stock"))
    (run,) = state.melds
    violation = refuse(state, 0, f"lay {run.id} 7H")
    assert (violation.code, violation.rule) == (Code.INVALID_LAY_OFF, "BASIC-LAYOFF")
    state, _ = play(state, (0, "meld 9C 9D 9S"), (0, f"lay {run.id} 7H"))
    assert state.melds[0].cards == ["3H", "4H", "5H", "6H", "7H"]


def test_basic_out_must_discard_to_go_out() -> None:
    state, _ = play(two({"must_discard_to_go_out": True}), (0, "draw stock"))
    violation = refuse(state, 0, "meld 3H 4H 5H 6H / 7S 7D 7C / KS KH KD KC")
    assert (violation.code, violation.rule) == (Code.MUST_DISCARD_TO_GO_OUT, "BASIC-OUT")
    state, _ = play(state, (0, "meld 3H 4H 5H 6H / 7S 7D 7C / KS KH KD"))
    violation = refuse(state, 0, "lay m3 KC")
    assert (violation.code, violation.rule) == (Code.MUST_DISCARD_TO_GO_OUT, "BASIC-OUT")
    state, events = play(state, (0, "discard KC"))
    end = hand_end(events)
    assert (end["went_out"], end["reason"]) == (0, "out")


def test_basic_out_default_allows_going_out_without_discard() -> None:
    _, events = play(two(), (0, "draw stock"),
                     (0, "meld 3H 4H 5H 6H / 7S 7D 7C / KS KH KD KC"))
    assert hand_end(events)["went_out"] == 0


# ---------------------------------------------------------------------------------------
# BASIC-END and GAME_FINISHED


def test_basic_end_defaults() -> None:
    assert two().rules["match_end"] == {"target": 150}
    assert two({"scoring": "penalty"}).rules["match_end"] == {"target": 100}


@pytest.mark.parametrize(("rules", "finished", "winners", "totals"), [
    pytest.param({"match_end": {"target": 50}, "going_rummy": "off"}, True, [0],
                 [S1_COUNT_LOW, 0], id="BASIC-END target 50 reached: highest total wins"),
    pytest.param({"match_end": {"target": 66}, "going_rummy": "off"}, True, [0],
                 [S1_COUNT_LOW, 0], id="BASIC-END target reached exactly"),
    pytest.param({"match_end": {"target": 67}, "going_rummy": "off"}, False, [],
                 [S1_COUNT_LOW, 0], id="BASIC-END target 67 not reached: play on"),
    pytest.param({"match_end": {"target": 50}, "scoring": "penalty", "going_rummy": "off"},
                 True, [0], [0, S1_COUNT_LOW],
                 id="BASIC-END penalty target reached: lowest total wins"),
    pytest.param({"match_end": {"deals": 1}, "going_rummy": "off"}, True, [0],
                 [S1_COUNT_LOW, 0], id="BASIC-END deals 1: over after one hand"),
    pytest.param({"match_end": {"deals": 1}, "scoring": "penalty", "going_rummy": "off"},
                 True, [0], [0, S1_COUNT_LOW], id="BASIC-END deals 1 with penalty"),
    pytest.param({"match_end": {"deals": 2}, "going_rummy": "off"}, False, [],
                 [S1_COUNT_LOW, 0], id="BASIC-END deals 2: play on after one hand"),
])
def test_basic_end(rules: dict[str, Any], finished: bool, winners: list[int],
                   totals: list[int]) -> None:
    state, events = play(two(rules), *RUMMY_BY_MELD)
    assert state.totals == totals
    if finished:
        assert (state.status, state.winners) == ("finished", winners)
        assert events[-1] == {"type": "game_end", "winners": winners, "totals": totals}
        assert not events_of(events, "dealt")
        violation = refuse(state, state.turn, "draw stock")
        assert (violation.code, violation.rule) == (Code.GAME_FINISHED, "BASIC-END")
        for seat in (0, 1):
            violation = refuse(state, seat, "discard 2S")
            assert violation.code is Code.GAME_FINISHED
    else:
        assert (state.status, state.winners, state.hand_number) == ("playing", [], 2)
        assert not events_of(events, "game_end")


@pytest.mark.parametrize(("rules", "winners", "totals"), [
    pytest.param({"match_end": {"target": 10}}, [0, 1], [12.5, 12.5, 0, 0],
                 id="BASIC-END winner_collects tie at the top shares the win"),
    pytest.param({"match_end": {"target": 20}, "scoring": "penalty"}, [0, 1], TIE_COUNTS,
                 id="BASIC-END penalty tie at the bottom shares the win"),
    pytest.param({"match_end": {"deals": 1}}, [0, 1], [12.5, 12.5, 0, 0],
                 id="BASIC-END deals 1 tie shares the win"),
])
def test_basic_end_ties_share(rules: dict[str, Any], winners: list[int],
                              totals: list[float]) -> None:
    state, events = _block(TIE_HANDS, TIE_MELDS, {"stock_exhausted": "end_hand", **rules})
    assert (state.status, state.winners, state.totals) == ("finished", winners, totals)
    assert events[-1]["type"] == "game_end"
    violation = refuse(state, 1, "draw stock")
    assert (violation.code, violation.rule) == (Code.GAME_FINISHED, "BASIC-END")


def test_basic_end_after_two_deals() -> None:
    hand2 = arrange([S0, S1], stock="3S KC", discard="4C")
    # hand 2: seat 0 deals, seat 1 starts and draws 3S; seat 1 discards it; seat 0 goes out
    state = two({"match_end": {"deals": 2}, "going_rummy": "off"}, later=[hand2])
    state, _ = play(state, *RUMMY_BY_MELD)
    assert (state.status, state.hand_number, state.dealer, state.turn) == ("playing", 2, 0, 1)
    state, _ = play(state, (1, "draw stock"), (1, "discard 3S"), *RUMMY_BY_MELD)
    assert state.totals == [2 * S1_COUNT_LOW, 0]
    assert (state.status, state.winners) == ("finished", [0])
    assert [h["scores"] for h in state.history] == [[S1_COUNT_LOW, 0], [S1_COUNT_LOW, 0]]
    violation = refuse(state, 1, "draw stock")
    assert (violation.code, violation.rule) == (Code.GAME_FINISHED, "BASIC-END")
