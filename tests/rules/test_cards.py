"""C-CARD: card codes and the wire form of moves (API.md "Moves").

Every row cites the RULES.md id it checks in its pytest id.
"""

from __future__ import annotations

from random import Random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.rules import Card, CardError, MalformedMove, Suit, move_from_dict, move_to_dict
from service.rules.cards import JOKER, RANKS, canonical, standard_deck
from service.rules.melds import Piece
from service.rules.moves import (
    CutIn,
    Discard,
    Draw,
    LayOff,
    MeldMove,
    SwapJoker,
    Take,
    TakeFromMeld,
)

ALL_CODES = [r + s for s in "SHDC" for r in "A23456789TJQK"] + ["JK"]


def test_c_card_there_are_53_distinct_codes() -> None:
    """C-CARD: 13 ranks x 4 suits plus the joker."""
    assert len(set(ALL_CODES)) == 53
    assert sorted(standard_deck()) == sorted(ALL_CODES[:-1])
    assert RANKS == "A23456789TJQK"
    assert JOKER == "JK"


@pytest.mark.parametrize("code", [pytest.param(c, id=f"C-CARD round trip {c}")
                                  for c in ALL_CODES])
def test_c_card_parse_format_round_trip(code: str) -> None:
    card = Card.parse(code)
    assert str(card) == code
    assert Card.parse(str(card)) == card
    assert canonical(code) == code
    assert eval(repr(card), {"Card": Card}) == card  # a repr one can paste back


@pytest.mark.parametrize(
    ("code", "rank", "suit"),
    [
        pytest.param("AS", 1, Suit.SPADES, id="C-CARD AS is the ace of spades"),
        pytest.param("TH", 10, Suit.HEARTS, id="C-CARD TH is the ten of hearts"),
        pytest.param("JD", 11, Suit.DIAMONDS, id="C-CARD JD is the jack of diamonds"),
        pytest.param("QC", 12, Suit.CLUBS, id="C-CARD QC is the queen of clubs"),
        pytest.param("KS", 13, Suit.SPADES, id="C-CARD KS is the king of spades"),
        pytest.param("2C", 2, Suit.CLUBS, id="C-CARD 2C is the two of clubs"),
        pytest.param("JK", 0, None, id="C-CARD JK is the joker"),
    ],
)
def test_c_card_fields(code: str, rank: int, suit: Suit | None) -> None:
    card = Card.parse(code)
    assert (card.rank, card.suit) == (rank, suit)
    assert card.is_joker == (code == "JK")


@pytest.mark.parametrize(
    ("given_code", "canonical_code"),
    [pytest.param(f"10{s}", f"T{s}", id=f"C-CARD 10{s} accepted as T{s}") for s in "SHDC"],
)
def test_c_card_ten_spelled_10_is_accepted_and_output_canonical(
    given_code: str, canonical_code: str
) -> None:
    assert str(Card.parse(given_code)) == canonical_code
    assert canonical(given_code) == canonical_code
    assert Card.parse(given_code) == Card.parse(canonical_code)


@pytest.mark.parametrize(
    ("typed", "canonical_code"),
    [
        pytest.param("th", "TH", id="C-CARD lower case read"),
        pytest.param("Th", "TH", id="C-CARD lower case suit read"),
        pytest.param("10h", "TH", id="C-CARD 10h read as TH"),
        pytest.param("qs", "QS", id="C-CARD qs read as QS"),
        pytest.param("10♥", "TH", id="C-CARD 10♥ read as TH"),
        pytest.param("q♠", "QS", id="C-CARD q♠ read as QS"),
        pytest.param("7♦", "7D", id="C-CARD 7♦ read as 7D"),
        pytest.param("a♣", "AC", id="C-CARD a♣ read as AC"),
        pytest.param("K♡", "KH", id="C-CARD white heart read as H"),
        pytest.param("2♤", "2S", id="C-CARD white spade read as S"),
        pytest.param("9♢", "9D", id="C-CARD white diamond read as D"),
        pytest.param("J♧", "JC", id="C-CARD white club read as C"),
        pytest.param("10♥\ufe0f", "TH", id="C-CARD emoji heart read as H"),
        pytest.param("jk", "JK", id="C-CARD lower case joker read"),
        pytest.param("JOKER", "JK", id="C-CARD JOKER spelled out read"),
        pytest.param(" AS", "AS", id="C-CARD leading space ignored"),
        pytest.param("AS ", "AS", id="C-CARD trailing space ignored"),
    ],
)
def test_c_card_codes_are_read_as_people_type_them(typed: str, canonical_code: str) -> None:
    assert canonical(typed) == canonical_code
    assert str(Card.parse(typed)) == canonical_code


def test_c_card_error_quotes_the_code_as_sent() -> None:
    with pytest.raises(CardError, match="'10x'"):
        canonical("10x")
    with pytest.raises(CardError, match="'1h'"):
        canonical("1h")


@pytest.mark.parametrize(
    "code",
    [
        pytest.param("", id="C-CARD empty string refused"),
        pytest.param("H", id="C-CARD suit only refused"),
        pytest.param("1H", id="C-CARD rank 1 refused"),
        pytest.param("11H", id="C-CARD rank 11 refused"),
        pytest.param("0H", id="C-CARD rank 0 refused"),
        pytest.param("XS", id="C-CARD unknown rank refused"),
        pytest.param("AX", id="C-CARD unknown suit refused"),
        pytest.param("ASS", id="C-CARD three letters refused"),
        pytest.param("10", id="C-CARD 10 without suit refused"),
        pytest.param("10X", id="C-CARD 10 with unknown suit refused"),
        pytest.param("♠A", id="C-CARD suit symbol before the rank refused"),
        pytest.param("1♥", id="C-CARD rank 1 with a symbol refused"),
        pytest.param("Q♠♠", id="C-CARD two suits refused"),
        pytest.param(None, id="C-CARD None refused"),
        pytest.param(12, id="C-CARD an integer refused"),
    ],
)
def test_c_card_bad_codes_are_refused(code: Any) -> None:
    with pytest.raises(CardError):
        Card.parse(code)
    with pytest.raises(CardError):
        canonical(code)


@settings(max_examples=200, deadline=None)
@given(rank=st.sampled_from(["A", *"23456789", "10", "T", "J", "Q", "K"]),
       suit=st.sampled_from("SHDC"))
def test_c_card_hypothesis_round_trip(rank: str, suit: str) -> None:
    """C-CARD: parse -> format -> parse is the identity; output is always canonical."""
    card = Card.parse(rank + suit)
    text = str(card)
    assert len(text) == 2
    assert text == ("T" if rank == "10" else rank) + suit
    assert Card.parse(text) == card
    assert canonical(text) == text


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=4))
def test_c_card_hypothesis_any_text_parses_canonically_or_is_refused(text: str) -> None:
    """C-CARD: any string is either a card whose output is canonical, or a CardError."""
    try:
        card = Card.parse(text)
    except CardError:
        assert text not in ALL_CODES
        assert text not in {"10S", "10H", "10D", "10C"}
        return
    assert str(card) in ALL_CODES
    assert canonical(str(card)) == str(card)
    # what was read is what was typed, up to case, blanks, `10` for `T` and suit symbols
    typed = text.strip().upper().replace("10", "T")
    assert str(card) == "JK" or typed[0] == str(card)[0]


# ---------------------------------------------------------------------------------------
# Moves: wire round trip

CODES = st.sampled_from(ALL_CODES)
NATURALS = st.sampled_from(ALL_CODES[:-1])
IDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=6)


@st.composite
def pieces(draw: st.DrawFn) -> Piece:
    card = draw(CODES)
    as_ = draw(st.none() | NATURALS)
    return Piece(card, as_)


PIECE_LISTS = st.lists(pieces(), min_size=1, max_size=6).map(tuple)
MELD_LISTS = st.lists(PIECE_LISTS, min_size=1, max_size=3).map(tuple)

LAY_OFFS = st.builds(LayOff, IDS, PIECE_LISTS, st.sampled_from([None, "low", "high"]))

MOVES = st.one_of(
    st.builds(Draw, st.sampled_from(["stock", "discard"])),
    st.builds(MeldMove, MELD_LISTS),
    st.builds(MeldMove, MELD_LISTS, st.lists(LAY_OFFS, max_size=3).map(tuple)),
    LAY_OFFS,
    st.builds(SwapJoker, IDS, NATURALS),
    st.builds(TakeFromMeld,
              st.lists(st.builds(Take, IDS, NATURALS), min_size=1, max_size=3).map(tuple),
              MELD_LISTS),
    st.builds(Discard, CODES, st.booleans()),
    st.just(CutIn()),
)


@settings(max_examples=300, deadline=None)
@given(move=MOVES)
def test_c_turn_move_wire_round_trip(move: Any) -> None:
    """C-TURN / C-CARD: move_from_dict(move_to_dict(m)) == m for every move type."""
    wire = move_to_dict(move)
    assert move_from_dict(wire) == move
    assert move_to_dict(move_from_dict(wire)) == wire


@pytest.mark.parametrize(
    ("wire", "move"),
    [
        pytest.param({"type": "draw", "source": "stock"}, Draw("stock"),
                     id="C-TURN draw from stock"),
        pytest.param({"type": "draw", "source": "discard"}, Draw("discard"),
                     id="C-TURN draw from discard"),
        pytest.param({"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"]}]},
                     MeldMove(((Piece("7H"), Piece("8H"), Piece("9H")),)),
                     id="C-MELD one run"),
        pytest.param({"type": "meld", "melds": [
            {"cards": ["7H", "8H", "9H"]},
            {"cards": ["QS", "QD", {"card": "JK", "as": "QH"}]}]},
                     MeldMove(((Piece("7H"), Piece("8H"), Piece("9H")),
                               (Piece("QS"), Piece("QD"), Piece("JK", "QH")))),
                     id="C-MELD two melds with a declared wild"),
        pytest.param({"type": "meld", "melds": [{"cards": ["10H", "JH", {"card": "JK",
                                                                        "as": "10H"}]}]},
                     MeldMove(((Piece("TH"), Piece("JH"), Piece("JK", "TH")),)),
                     id="C-CARD 10H in a meld becomes TH"),
        pytest.param({"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"]}],
                      "lay_offs": [{"meld_id": "m1", "cards": ["10S"], "end": "high"}]},
                     MeldMove(((Piece("7H"), Piece("8H"), Piece("9H")),),
                              (LayOff("m1", (Piece("TS"),), "high"),)),
                     id="C-LAYOFF lay-offs in a meld action"),
        pytest.param({"type": "lay_off", "meld_id": "m3", "cards": ["TH"]},
                     LayOff("m3", (Piece("TH"),)), id="C-LAYOFF without end"),
        pytest.param({"type": "lay_off", "meld_id": "m3", "cards": ["10H"], "end": "low"},
                     LayOff("m3", (Piece("TH"),), "low"), id="C-LAYOFF with end low"),
        pytest.param({"type": "lay_off", "meld_id": "m1", "cards": ["AS"], "end": "high"},
                     LayOff("m1", (Piece("AS"),), "high"), id="C-LAYOFF with end high"),
        pytest.param({"type": "swap_joker", "meld_id": "m2", "card": "6S"},
                     SwapJoker("m2", "6S"), id="R51-SWAP swap_joker"),
        pytest.param({"type": "take_from_meld", "take": [{"meld_id": "m1", "card": "9D"}],
                      "melds": [{"cards": ["9D", "9S", "9C"]}]},
                     TakeFromMeld((Take("m1", "9D"),),
                                  ((Piece("9D"), Piece("9S"), Piece("9C")),)),
                     id="R51-TAKE take_from_meld"),
        pytest.param({"type": "discard", "card": "KD"}, Discard("KD"),
                     id="C-TURN discard"),
        pytest.param({"type": "discard", "card": "10D", "announce": True},
                     Discard("TD", True), id="R51-LAST discard with announce"),
        pytest.param({"type": "cut_in"}, CutIn(), id="DUMMY-CUTIN cut_in"),
    ],
)
def test_c_turn_move_from_wire(wire: dict[str, Any], move: Any) -> None:
    assert move_from_dict(wire) == move


@pytest.mark.parametrize(
    ("wire", "field"),
    [
        pytest.param({}, "type", id="C-TURN no type"),
        pytest.param({"type": "fly"}, "type", id="C-TURN unknown type"),
        pytest.param({"type": 3}, "type", id="C-TURN type not a string"),
        pytest.param({"type": "draw"}, "source", id="C-TURN draw without source"),
        pytest.param({"type": "draw", "source": "deck"}, "source",
                     id="C-TURN draw from an unknown pile"),
        pytest.param({"type": "draw", "source": ""}, "source", id="C-TURN draw empty source"),
        pytest.param({"type": "meld"}, "melds", id="C-MELD meld without melds"),
        pytest.param({"type": "meld", "melds": []}, "melds", id="C-MELD empty melds"),
        pytest.param({"type": "meld", "melds": {"cards": ["7H"]}}, "melds",
                     id="C-MELD melds not a list"),
        pytest.param({"type": "meld", "melds": [["7H", "8H", "9H"]]}, "melds.0",
                     id="C-MELD meld not an object"),
        pytest.param({"type": "meld", "melds": [{"kards": ["7H"]}]}, "melds.0",
                     id="C-MELD meld without cards"),
        pytest.param({"type": "meld", "melds": [{"cards": []}]}, "melds.0.cards",
                     id="C-MELD meld with no card"),
        pytest.param({"type": "meld", "melds": [{"cards": ["7H", "8H", "XX"]}]},
                     "melds.0.cards.2", id="C-CARD bad card code in a meld"),
        pytest.param({"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"]},
                                                {"cards": ["QS", 5, "QD"]}]},
                     "melds.1.cards.1", id="C-CARD card not a string in the second meld"),
        pytest.param({"type": "meld", "melds": [{"cards": [{"card": "JK", "as": "ZZ"},
                                                           "7H", "8H"]}]},
                     "melds.0.cards.0.as", id="C-CARD bad declared identity"),
        pytest.param({"type": "meld", "melds": [{"cards": [{"as": "7H"}, "7H", "8H"]}]},
                     "melds.0.cards.0.card", id="C-MELD wild object without card"),
        pytest.param({"type": "meld", "melds": [{"cards": [{"card": "JK", "is": "7H"},
                                                           "8H", "9H"]}]},
                     "melds.0.cards.0", id="C-MELD unknown key in a wild object"),
        pytest.param({"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"]}],
                      "lay_offs": {"meld_id": "m1"}}, "lay_offs",
                     id="C-LAYOFF lay_offs of a meld not a list"),
        pytest.param({"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"]}],
                      "lay_offs": ["m1"]}, "lay_offs.0",
                     id="C-LAYOFF lay_offs entry not an object"),
        pytest.param({"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"]}],
                      "lay_offs": [{"meld_id": "m1", "cards": ["TS", "XX"]}]},
                     "lay_offs.0.cards.1", id="C-CARD bad card in a meld's lay-off"),
        pytest.param({"type": "lay_off", "cards": ["TH"]}, "meld_id",
                     id="C-LAYOFF without meld_id"),
        pytest.param({"type": "lay_off", "meld_id": 3, "cards": ["TH"]}, "meld_id",
                     id="C-LAYOFF meld_id not a string"),
        pytest.param({"type": "lay_off", "meld_id": "m1"}, "cards",
                     id="C-LAYOFF without cards"),
        pytest.param({"type": "lay_off", "meld_id": "m1", "cards": []}, "cards",
                     id="C-LAYOFF with no card"),
        pytest.param({"type": "lay_off", "meld_id": "m1", "cards": ["TH", "1H"]}, "cards.1",
                     id="C-CARD bad card in a lay-off"),
        pytest.param({"type": "lay_off", "meld_id": "m1", "cards": ["TH"], "end": "middle"},
                     "end", id="C-LAYOFF unknown end"),
        pytest.param({"type": "swap_joker", "meld_id": "m1"}, "card",
                     id="R51-SWAP swap without card"),
        pytest.param({"type": "swap_joker", "card": "6S"}, "meld_id",
                     id="R51-SWAP swap without meld_id"),
        pytest.param({"type": "take_from_meld", "take": [], "melds": [{"cards": ["9D"]}]},
                     "take", id="R51-TAKE empty take"),
        pytest.param({"type": "take_from_meld", "take": ["9D"],
                      "melds": [{"cards": ["9D"]}]}, "take.0",
                     id="R51-TAKE take entry not an object"),
        pytest.param({"type": "take_from_meld", "take": [{"meld_id": "m1"}],
                      "melds": [{"cards": ["9D"]}]}, "take.0.card",
                     id="R51-TAKE take entry without card"),
        pytest.param({"type": "take_from_meld", "take": [{"meld_id": "m1", "card": "9D"}]},
                     "melds", id="R51-TAKE without melds"),
        pytest.param({"type": "discard"}, "card", id="C-TURN discard without card"),
        pytest.param({"type": "discard", "card": "1S"}, "card",
                     id="C-CARD discard of a bad code"),
        pytest.param({"type": "discard", "card": ["KD"]}, "card",
                     id="C-CARD discard of a list"),
        pytest.param({"type": "discard", "card": "KD", "announce": "yes"}, "announce",
                     id="R51-LAST announce not a boolean"),
    ],
)
def test_c_turn_malformed_moves_name_the_field(wire: dict[str, Any], field: str) -> None:
    with pytest.raises(MalformedMove) as info:
        move_from_dict(wire)
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: ")


def test_a_seat_sees_its_hand_by_suit_then_rank_with_jokers_last() -> None:
    """The seat view's hand order (API.md "Views"): spades, hearts, diamonds, clubs, each
    from the ace up, then the jokers; copies of a card side by side. A code outside the
    deck (no dealt hand holds one) is sorted by the same rule."""
    from service.rules.views import sort_hand

    assert sort_hand(["JK", "2C", "KH", "AS", "TD", "AS", "3S", "QH", "JK"]) == [
        "AS", "AS", "3S", "QH", "KH", "TD", "2C", "JK", "JK"]

    def by_rule(card: str) -> tuple[bool, int, int]:
        return (card == "JK", "SHDC".find(card[1]) if card != "JK" else 9,
                "A23456789TJQK".find(card[0]))

    rng = Random(8)
    cards = standard_deck(decks=2, jokers=4)
    for _ in range(200):
        hand = rng.sample(cards, rng.randint(0, 30))
        assert sort_hand(hand) == sorted(hand, key=by_rule)
    assert sort_hand(["KH", "1H", "AS"]) == ["AS", "KH", "1H"]
