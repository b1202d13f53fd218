"""C-MELD, C-SET, C-RUN, C-WILD, C-LAYOFF: the meld validator under several meld shapes.

Shapes:

* ``basic-low`` / ``basic-hol`` / ``basic-around``: the engine's own basic shape (one deck,
  no wilds) with each value of the ``ace`` knob.
* ``r51``: two decks with jokers, at most one wild per meld, ace ``high_or_low``, sets of
  distinct suits up to 4 (like Rummy 51; R51-VALUE points).
* ``dummy``: two decks where jokers and 2s are wild and a 2 may stand as a natural 2, sets
  with duplicate suits and no size limit, mixed-suit runs (like Dummy; DUMMY-SCORE points).
* ``wrotham``: 3 jokers, any number per meld, ace low, sets of 3 or 4, one-suit runs.

Cards are written as in the wire form; ``JK=7H`` is a joker declared as the seven of hearts.
Expected readings are ``kind``, the cards in table order, what each stands for
(``9*`` = a nine whose suit is open, C-WILD) and the first position (a set: its rank).
"""

from __future__ import annotations

import itertools
import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.rules import (
    Code,
    GameState,
    Meld,
    MeldError,
    MeldShape,
    Piece,
    Rules,
    check_meld,
    extend_meld,
    new_game,
)
from service.rules.engine import meld_shape, shape_of
from service.rules.errors import Reason
from service.rules.rule_ids import RuleId
from service.rules.ruleset import default_rules
from service.rules.search import candidate_melds
from service.rules.variants import find_variant
from tests.support.engine import piece


def _r51_value(rank: int, high: bool) -> int:
    """R51-VALUE: 2-10 face, J Q K 10, ace 1 low and 11 high (or in a set)."""
    if rank == 1:
        return 11 if high else 1
    return min(rank, 10)


def _dummy_value(rank: int, high: bool) -> int:
    """DUMMY-SCORE: 3-9 -> 5, 10 J Q K -> 10, ace -> 15, 2 -> 50."""
    del high
    if rank == 1:
        return 15
    if rank == 2:
        return 50
    return 10 if rank >= 10 else 5


def _wrotham_value(rank: int, high: bool) -> int:
    """BASIC-SCORE with ace low: ace 1, 2-10 face, J Q K 10."""
    del high
    return min(rank, 10)


def _basic(ace: str) -> MeldShape:
    return meld_shape(find_variant("basic"), Rules(ace=ace))


SHAPES: dict[str, MeldShape] = {
    "basic-low": _basic("low"),
    "basic-hol": _basic("high_or_low"),
    "basic-around": _basic("around"),
    "r51": MeldShape(is_wild=lambda c: c == "JK", ace="high_or_low", set_max=4,
                     set_distinct_suits=True, run_same_suit=True, max_wilds=1,
                     meld_value=_r51_value, set_rule=RuleId.R51_SET, wild_rule=RuleId.R51_WILDS),
    "dummy": MeldShape(is_wild=lambda c: c == "JK" or c[0] == "2", ace="high_or_low",
                       set_max=None, set_distinct_suits=False, run_same_suit=False,
                       max_wilds=None, flexible_twos=True, meld_value=_dummy_value,
                       set_rule=RuleId.DUMMY_SET, wild_rule=RuleId.DUMMY_WILDS),
    "wrotham": MeldShape(is_wild=lambda c: c == "JK", ace="low", set_max=4,
                         set_distinct_suits=True, run_same_suit=True, max_wilds=None,
                         meld_value=_wrotham_value),
}

BASIC_SHAPES = ("basic-low", "basic-hol", "basic-around")


def pieces(text: str) -> tuple[Piece, ...]:
    return tuple(piece(t) for t in text.split())


def reading(kind: str, cards: str, idents: str, start: int) -> tuple[str, str, str, int]:
    return kind, cards, idents, start


def as_tuple(meld: Meld) -> tuple[str, str, str, int]:
    return meld.kind, " ".join(meld.cards), " ".join(meld.idents), meld.start


FULL_RUN = "AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH"

# ---------------------------------------------------------------------------------------
# Valid melds

VALID = [
    # C-RUN / C-SET in one deck, every ace knob
    *[pytest.param(s, "7H 8H 9H", reading("run", "7H 8H 9H", "7H 8H 9H", 7),
                   id=f"C-RUN three in a row [{s}]") for s in BASIC_SHAPES],
    *[pytest.param(s, "9H 7H 8H", reading("run", "7H 8H 9H", "7H 8H 9H", 7),
                   id=f"C-MELD cards in any order [{s}]") for s in BASIC_SHAPES],
    *[pytest.param(s, "3H AH 2H", reading("run", "AH 2H 3H", "AH 2H 3H", 1),
                   id=f"C-RUN ace low A-2-3 [{s}]") for s in BASIC_SHAPES],
    *[pytest.param(s, "9D 9S 9H", reading("set", "9S 9H 9D", "9S 9H 9D", 9),
                   id=f"C-SET three of a kind [{s}]") for s in BASIC_SHAPES],
    *[pytest.param(s, "9C 9D 9H 9S", reading("set", "9S 9H 9D 9C", "9S 9H 9D 9C", 9),
                   id=f"BASIC-SET four of a kind [{s}]") for s in BASIC_SHAPES],
    pytest.param("basic-low", " ".join(reversed(FULL_RUN.split())),
                 reading("run", FULL_RUN, FULL_RUN, 1),
                 id="C-RUN ace low A to K in any order"),
    pytest.param("basic-hol", "KH AH QH", reading("run", "QH KH AH", "QH KH AH", 12),
                 id="C-RUN ace high_or_low takes Q-K-A"),
    pytest.param("basic-hol", "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH",
                 reading("run", "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH",
                         "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH", 2),
                 id="C-RUN ace high_or_low 2 to A"),
    pytest.param("basic-around", "QH KH AH", reading("run", "QH KH AH", "QH KH AH", 12),
                 id="C-RUN ace around takes Q-K-A"),
    pytest.param("basic-around", "2H KH AH", reading("run", "KH AH 2H", "KH AH 2H", 13),
                 id="C-RUN ace around K-A-2 wraps"),
    pytest.param("basic-around", "3H JH KH 2H AH QH",
                 reading("run", "JH QH KH AH 2H 3H", "JH QH KH AH 2H 3H", 11),
                 id="C-RUN ace around J to 3 across the corner"),
    # r51: two decks, one joker at most
    pytest.param("r51", "5H 6H JK", reading("run", "5H 6H JK", "5H 6H 7H", 5),
                 id="C-MELD Resolved undeclared joker takes the higher end 7H over 4H"),
    pytest.param("r51", "JK 7H 5H", reading("run", "5H JK 7H", "5H 6H 7H", 5),
                 id="C-WILD joker in a gap is fixed by its position"),
    pytest.param("r51", "QH KH JK", reading("run", "QH KH JK", "QH KH AH", 12),
                 id="C-MELD Resolved joker as high ace (11) beats jack (10)"),
    pytest.param("r51", "JK 2H 3H", reading("run", "2H 3H JK", "2H 3H 4H", 2),
                 id="C-MELD Resolved joker as 4H (4) beats low ace (1)"),
    pytest.param("r51", "JK AH 2H", reading("run", "AH 2H JK", "AH 2H 3H", 1),
                 id="C-RUN high_or_low joker with A-2 is 3, never K-A-2"),
    pytest.param("r51", "5H 6H JK=4H", reading("run", "JK 5H 6H", "4H 5H 6H", 4),
                 id="C-MELD declared identity honoured over the higher reading"),
    pytest.param("r51", "9C JK 9S", reading("set", "9S 9C JK", "9S 9C 9*", 9),
                 id="C-WILD set joker suit open with two other suits"),
    pytest.param("r51", "9C 9S 9D JK", reading("set", "9S 9D 9C JK", "9S 9D 9C 9H", 9),
                 id="C-WILD set joker is 9H when the set holds the other three suits"),
    pytest.param("r51", "9C 9S JK=9H", reading("set", "9S 9C JK", "9S 9C 9H", 9),
                 id="C-WILD declared set suit honoured"),
    pytest.param("r51", "AH " + FULL_RUN,
                 reading("run", FULL_RUN + " AH", FULL_RUN + " AH", 1),
                 id="C-RUN two-deck A-2-...-K-A with two aces"),
    pytest.param("r51", "AH KH QH", reading("run", "QH KH AH", "QH KH AH", 12),
                 id="C-RUN ace high_or_low Q-K-A in a two-deck shape"),
    # dummy: jokers and 2s wild, 2s flexible, duplicate suits, mixed-suit runs
    pytest.param("dummy", "7D 5H 6S", reading("run", "5H 6S 7D", "5H 6S 7D", 5),
                 id="DUMMY-RUN mixed suits"),
    pytest.param("dummy", "5H 6S JK", reading("run", "5H 6S JK", "5H 6S 7*", 5),
                 id="C-MELD Resolved equal points take the highest run position"),
    pytest.param("dummy", "9H 9H 9S 9S 9C",
                 reading("set", "9S 9S 9H 9H 9C", "9S 9S 9H 9H 9C", 9),
                 id="DUMMY-SET duplicate suits and more than four cards"),
    pytest.param("dummy", "9H 2D 9S", reading("set", "9S 9H 2D", "9S 9H 9*", 9),
                 id="DUMMY-WILDS a wild 2 in a set of nines"),
    pytest.param("dummy", "9C 9S 9D JK", reading("set", "9S 9D 9C JK", "9S 9D 9C 9*", 9),
                 id="C-WILD set wild suit stays open where suits may repeat"),
    pytest.param("dummy", "2H 2S 2D", reading("set", "2S 2H 2D", "2S 2H 2D", 2),
                 id="DUMMY-WILDS three 2s as a set of natural 2s"),
    pytest.param("dummy", "JK=2H 3H 4H", reading("run", "JK 3H 4H", "2H 3H 4H", 2),
                 id="DUMMY-WILDS a joker may be declared as a 2"),
    pytest.param("dummy", "KH AS 2D", reading("run", "2D KH AS", "Q* KH AS", 12),
                 id="DUMMY-RUN wild 2 as queen in Q-K-A, never K-A-2"),
    pytest.param("dummy", "JK JK 9S JK JK", reading("run", "9S JK JK JK JK",
                                                    "9S T* J* Q* K*", 9),
                 id="DUMMY-WILDS any number of wilds with one natural"),
    # wrotham: three jokers, any number per meld
    pytest.param("wrotham", "9H JK JK", reading("run", "9H JK JK", "9H TH JH", 9),
                 id="C-MELD Resolved run 9-T-J (29) beats set of nines (27)"),
    pytest.param("wrotham", "JK 5H JK", reading("run", "5H JK JK", "5H 6H 7H", 5),
                 id="C-MELD Resolved 5-6-7 beats 3-4-5, 4-5-6 and the set"),
    pytest.param("wrotham", "QH KH JK", reading("run", "JK QH KH", "JH QH KH", 11),
                 id="C-RUN ace low joker with Q-K is a jack, never an ace"),
    pytest.param("wrotham", "9C JK 9S JK", reading("set", "9S 9C JK JK", "9S 9C 9* 9*", 9),
                 id="C-WILD two set jokers both open"),
    pytest.param("wrotham", "9C JK 9S JK=9D",
                 reading("set", "9S 9C JK JK", "9S 9C 9H 9D", 9),
                 id="C-WILD declared 9D leaves the undeclared joker 9H"),
    pytest.param("wrotham", "5H JK=6H JK=7H", reading("run", "5H JK JK", "5H 6H 7H", 5),
                 id="C-MELD two declared jokers honoured"),
]


@pytest.mark.parametrize(("shape", "cards", "expected"), VALID)
def test_valid_melds(shape: str, cards: str, expected: tuple[str, str, str, int]) -> None:
    meld = check_meld(pieces(cards), SHAPES[shape])
    assert as_tuple(meld) == expected


def test_dummy_wilds_a_two_keeps_its_own_rank_when_worth_most() -> None:
    """DUMMY-WILDS / C-MELD Resolved: 2-3-4 with the 2 at rank 2 (50 + 5 + 5) beats 3-4-5
    with the 2 as a wild five (15). Whether the 2 is then recorded as ``2H`` or as a wild
    ``2*`` is not fixed by RULES.md (both stand at rank 2 in a mixed-suit run)."""
    meld = check_meld(pieces("4D 2H 3S"), SHAPES["dummy"])
    assert (meld.kind, meld.cards, meld.idents[1:], meld.start) == (
        "run", ("2H", "3S", "4D"), ("3S", "4D"), 2)
    assert meld.idents[0] in ("2H", "2*")
    assert meld.points == 60


@pytest.mark.parametrize(
    ("shape", "cards"),
    [
        pytest.param("basic-low", "7H 8H 9H 6H", id="C-MELD run of four in every order"),
        pytest.param("basic-low", "9C 9D 9H 9S", id="C-MELD set of four in every order"),
        pytest.param("r51", "9C 9S 9D JK", id="C-MELD set with a joker in every order"),
        pytest.param("wrotham", "5H JK 8H JK", id="C-MELD run with two jokers in every order"),
        pytest.param("dummy", "5H 2C 7S JK", id="C-MELD mixed run with wilds in every order"),
    ],
)
def test_c_meld_order_does_not_matter(shape: str, cards: str) -> None:
    """The same multiset in any order gets the same reading (what each card stands for)."""
    results = set()
    for order in itertools.permutations(pieces(cards)):
        meld = check_meld(order, SHAPES[shape])
        results.add((meld.kind, meld.idents, meld.start, tuple(sorted(meld.cards))))
    assert len(results) == 1


@pytest.mark.parametrize(
    ("cards", "expected"),
    [
        pytest.param("9C 9S 9D JK", "9S 9D 9C 9H", id="C-WILD three suits present: JK is 9H"),
        pytest.param("9H 9S 9D JK", "9S 9H 9D 9C", id="C-WILD three suits present: JK is 9C"),
        pytest.param("9C 9H 9D JK", "9H 9D 9C 9S", id="C-WILD three suits present: JK is 9S"),
        pytest.param("9C 9H 9S JK", "9S 9H 9C 9D", id="C-WILD three suits present: JK is 9D"),
        pytest.param("9C 9D JK", "9D 9C 9*", id="C-WILD two suits present: suit open"),
    ],
)
def test_c_wild_set_suit_fixed_only_by_the_other_three(cards: str, expected: str) -> None:
    for shape in ("r51", "wrotham"):
        assert " ".join(check_meld(pieces(cards), SHAPES[shape]).idents) == expected


# ---------------------------------------------------------------------------------------
# Invalid melds: every reason at once

SET_RUN = "INVALID_MELD"

INVALID = [
    *[pytest.param(s, "7H 8S 9D", [(SET_RUN, "BASIC-SET"), (SET_RUN, "C-RUN")],
                   id=f"C-MELD fails as set and as run: both reasons [{s}]")
      for s in BASIC_SHAPES],
    *[pytest.param(s, "AH 2H 4H", [(SET_RUN, "BASIC-SET"), (SET_RUN, "C-RUN")],
                   id=f"C-RUN gap refused [{s}]") for s in BASIC_SHAPES],
    *[pytest.param(s, "7H 8H", [(SET_RUN, "C-SET")], id=f"C-SET two cards refused [{s}]")
      for s in BASIC_SHAPES],
    pytest.param("basic-low", "QH KH AH", [(SET_RUN, "BASIC-SET"), (SET_RUN, "C-RUN")],
                 id="C-RUN ace low refuses Q-K-A"),
    pytest.param("basic-low", "KH AH 2H", [(SET_RUN, "BASIC-SET"), (SET_RUN, "C-RUN")],
                 id="C-RUN ace low refuses K-A-2"),
    pytest.param("basic-hol", "KH AH 2H", [(SET_RUN, "BASIC-SET"), (SET_RUN, "C-RUN")],
                 id="C-RUN ace high_or_low refuses K-A-2"),
    pytest.param("basic-hol", "QH KH AH 2H", [(SET_RUN, "BASIC-SET"), (SET_RUN, "C-RUN")],
                 id="C-RUN ace high_or_low refuses Q-K-A-2"),
    pytest.param("r51", "KH AH 2H", [(SET_RUN, "R51-SET"), (SET_RUN, "C-RUN")],
                 id="C-RUN r51 never K-A-2"),
    pytest.param("r51", "9H 9H 9S", [(SET_RUN, "R51-SET"), (SET_RUN, "C-RUN")],
                 id="C-SET duplicate suit refused when suits must differ"),
    pytest.param("r51", "9S 9H 9D 9C 9S", [(SET_RUN, "R51-SET"), (SET_RUN, "C-RUN")],
                 id="C-SET five of a kind refused when suits must differ"),
    pytest.param("r51", "5H 5H 6H", [(SET_RUN, "R51-SET"), (SET_RUN, "C-RUN")],
                 id="C-RUN no position twice"),
    pytest.param("r51", "AH AH 2H", [(SET_RUN, "R51-SET"), (SET_RUN, "C-RUN")],
                 id="C-RUN two aces need A-...-K-A, not A-A-2"),
    pytest.param("r51", "JK JK 5H", [("TOO_MANY_WILDS", "R51-WILDS")],
                 id="R51-WILDS two jokers in one new meld"),
    pytest.param("r51", "JK JK",
                 [(SET_RUN, "C-SET"), (SET_RUN, "C-MELD"), ("TOO_MANY_WILDS", "R51-WILDS")],
                 id="C-MELD every precheck reason listed at once"),
    pytest.param("r51", "5H 6H JK=9H", [(SET_RUN, "R51-SET"), (SET_RUN, "C-RUN")],
                 id="C-MELD declared run identity that does not fit refused"),
    pytest.param("r51", "5H 6H JK=7S", [(SET_RUN, "R51-SET"), (SET_RUN, "C-RUN")],
                 id="C-MELD declared identity of another suit refused"),
    pytest.param("r51", "9C 9S JK=8H", [(SET_RUN, "C-WILD"), (SET_RUN, "C-RUN")],
                 id="C-WILD a wild declared as another rank than its set's refused"),
    pytest.param("r51", "9C 9S JK=9S", [(SET_RUN, "R51-SET"), (SET_RUN, "C-RUN")],
                 id="C-WILD declared set suit already present refused"),
    pytest.param("r51", "JK=JK 5H 6H", [(SET_RUN, "C-MELD")],
                 id="C-MELD a wild cannot stand for a joker"),
    pytest.param("r51", "5H=6H 7H 8H", [(SET_RUN, "C-MELD")],
                 id="C-MELD a natural card cannot be declared"),
    pytest.param("r51", "JK AH " + FULL_RUN,
                 [(SET_RUN, "R51-SET"), (SET_RUN, "C-RUN")],
                 id="C-RUN 15 cards are too long even with two decks"),
    pytest.param("wrotham", "JK JK JK", [(SET_RUN, "C-MELD")],
                 id="C-MELD at least one natural card"),
    pytest.param("wrotham", "9S 9H 9D 9C JK", [(SET_RUN, "C-SET"), (SET_RUN, "C-RUN")],
                 id="C-SET a fifth card refused where sets hold at most 4"),
    pytest.param("wrotham", "JK=2H 3H 5H", [(SET_RUN, "C-SET"), (SET_RUN, "C-RUN")],
                 id="C-RUN declared joker does not close a gap elsewhere"),
    pytest.param("dummy", "JK JK JK", [(SET_RUN, "C-MELD")],
                 id="DUMMY-WILDS at least one natural card"),
    pytest.param("dummy", "KH AS 3D", [(SET_RUN, "DUMMY-SET"), (SET_RUN, "C-RUN")],
                 id="DUMMY-RUN never wraps K-A-3"),
]


@pytest.mark.parametrize(("shape", "cards", "reasons"), INVALID)
def test_invalid_melds_list_every_reason(shape: str, cards: str,
                                         reasons: list[tuple[str, str]]) -> None:
    with pytest.raises(MeldError) as info:
        check_meld(pieces(cards), SHAPES[shape])
    got = [(r.code.value, r.rule) for r in info.value.reasons]
    assert got == reasons
    assert all(r.detail for r in info.value.reasons)


def test_c_meld_reasons_say_why_each_reading_fails() -> None:
    """C-MELD: a meld failing as a set and a run names both problems in its details."""
    with pytest.raises(MeldError) as info:
        check_meld(pieces("7H 8S 9D"), SHAPES["basic-low"])
    set_reason, run_reason = info.value.reasons
    assert "ranks differ" in set_reason.detail
    assert "one suit" in run_reason.detail
    assert set_reason.code is Code.INVALID_MELD
    assert run_reason.code is Code.INVALID_MELD


def test_a_meld_asked_about_again_reads_the_same_and_accept_is_applied_each_time() -> None:
    """The readings of a meld are kept between calls (the legal-move listing and the
    opening searches ask about the same melds again): asking again gives the same answer,
    a table-dependent ``accept`` (L14-JOKER-RUN) is applied afresh to the kept readings, and
    a caller that changes the reasons it was given does not change the next caller's."""
    shape = SHAPES["r51"]
    run = pieces("7H 8H JK")
    first = check_meld(run, shape)
    assert first.kind == "run"

    def no_runs(meld: Meld) -> Reason | None:
        return Reason(Code.INVALID_MELD, RuleId.L14_JOKER_RUN, "no runs") if (
            meld.kind == "run") else None

    with pytest.raises(MeldError) as refused:
        check_meld(run, shape, no_runs)
    assert [r.rule for r in refused.value.reasons] == ["L14-JOKER-RUN"]
    assert check_meld(run, shape) == first
    assert check_meld(pieces("7H 8H JK"), shape) == first  # equal pieces, not the same list

    with pytest.raises(MeldError) as bad:
        check_meld(pieces("7H 8S 9D"), shape)
    expected = [(r.code, r.rule) for r in bad.value.reasons]
    bad.value.reasons.clear()
    with pytest.raises(MeldError) as again:
        check_meld(pieces("7H 8S 9D"), shape)
    assert [(r.code, r.rule) for r in again.value.reasons] == expected != []


@pytest.mark.parametrize("variant", ["basic", "rummy51", "lebanese14", "dummy", "wrotham"])
def test_games_of_the_same_knob_values_share_one_meld_shape(variant: str) -> None:
    """Each request reads its game's state afresh; the shape its melds are read with is
    one object for every game of the same knob values (so the readings kept for it are
    found again), and another for other knob values."""
    players = ["a", "b"] if variant == "lebanese14" else ["a", "b", "c"]
    state, _ = new_game(variant, players, {"match_end": {"deals": 2}})
    stored = json.dumps(state.to_dict())
    first = GameState.from_dict(json.loads(stored))
    again = GameState.from_dict(json.loads(stored))
    assert first.rules is not again.rules
    assert shape_of(first) is shape_of(again)
    fresh, _ = new_game(variant, players, {"match_end": {"deals": 2}})
    assert shape_of(fresh) is shape_of(first)  # another game of the same knob values
    if variant == "basic":
        changed, _ = new_game(variant, players, {"ace": "high_or_low"})
        assert shape_of(changed) is not shape_of(first)
        assert (shape_of(changed).ace, shape_of(first).ace) == ("high_or_low", "low")
    two, three = Rules.of({"match_end": {"deals": 2}}), Rules.of({"match_end": {"deals": 3}})
    assert two.values() == Rules.of({"match_end": {"deals": 2}}).values() != three.values()


# ---------------------------------------------------------------------------------------
# Lay-offs (C-LAYOFF)

LAYOFF_OK = [
    pytest.param("basic-low", "5H 6H 7H", "8H", None,
                 reading("run", "5H 6H 7H 8H", "5H 6H 7H 8H", 5),
                 id="C-LAYOFF run high end"),
    pytest.param("basic-low", "5H 6H 7H", "4H", None,
                 reading("run", "4H 5H 6H 7H", "4H 5H 6H 7H", 4),
                 id="C-LAYOFF run low end"),
    pytest.param("basic-low", "5H 6H 7H", "4H", "low",
                 reading("run", "4H 5H 6H 7H", "4H 5H 6H 7H", 4),
                 id="C-LAYOFF end low honoured"),
    pytest.param("basic-low", "5H 6H 7H", "8H 4H", None,
                 reading("run", "4H 5H 6H 7H 8H", "4H 5H 6H 7H 8H", 4),
                 id="C-LAYOFF both ends at once"),
    pytest.param("basic-low", "5H 6H 7H", "9H 8H", "high",
                 reading("run", "5H 6H 7H 8H 9H", "5H 6H 7H 8H 9H", 5),
                 id="C-LAYOFF two cards at the high end"),
    pytest.param("basic-low", "2H 3H 4H", "AH", None,
                 reading("run", "AH 2H 3H 4H", "AH 2H 3H 4H", 1),
                 id="C-LAYOFF ace low under 2-3-4"),
    pytest.param("basic-hol", "JH QH KH", "AH", None,
                 reading("run", "JH QH KH AH", "JH QH KH AH", 11),
                 id="C-LAYOFF ace high_or_low on J-Q-K"),
    pytest.param("basic-hol", FULL_RUN[3:], "AH", "low",
                 reading("run", FULL_RUN, FULL_RUN, 1),
                 id="C-LAYOFF end low honoured: ace under 2-...-K"),
    pytest.param("basic-hol", FULL_RUN[3:], "AH", "high",
                 reading("run", FULL_RUN[3:] + " AH", FULL_RUN[3:] + " AH", 2),
                 id="C-LAYOFF end high honoured: ace over 2-...-K"),
    pytest.param("basic-hol", FULL_RUN[3:], "AH", None,
                 reading("run", FULL_RUN[3:] + " AH", FULL_RUN[3:] + " AH", 2),
                 id="C-MELD Resolved ace at either end: the highest position"),
    pytest.param("basic-around", "JH QH KH", "AH", "high",
                 reading("run", "JH QH KH AH", "JH QH KH AH", 11),
                 id="C-LAYOFF ace around on J-Q-K"),
    pytest.param("basic-around", "AH 2H 3H", "KH", "low",
                 reading("run", "KH AH 2H 3H", "KH AH 2H 3H", 13),
                 id="C-LAYOFF ace around K laid under A-2-3"),
    pytest.param("basic-around", "QH KH AH", "2H", None,
                 reading("run", "QH KH AH 2H", "QH KH AH 2H", 12),
                 id="C-LAYOFF ace around 2 laid over Q-K-A"),
    pytest.param("basic-low", "9S 9H 9D", "9C", None,
                 reading("set", "9S 9H 9D 9C", "9S 9H 9D 9C", 9),
                 id="C-LAYOFF fourth card on a set"),
    pytest.param("r51", "5H 6H 7H", "JK", "low", reading("run", "JK 5H 6H 7H",
                                                          "4H 5H 6H 7H", 4),
                 id="C-LAYOFF joker at the low end as asked"),
    pytest.param("r51", "5H 6H 7H", "JK", "high", reading("run", "5H 6H 7H JK",
                                                           "5H 6H 7H 8H", 5),
                 id="C-LAYOFF joker at the high end as asked"),
    pytest.param("r51", "5H 6H 7H", "JK", None, reading("run", "5H 6H 7H JK",
                                                         "5H 6H 7H 8H", 5),
                 id="C-MELD Resolved joker laid off where it is worth most"),
    pytest.param("r51", "9C 9S JK", "9D", None,
                 reading("set", "9S 9D 9C JK", "9S 9D 9C 9H", 9),
                 id="C-WILD laying off the third suit fixes the set joker as 9H"),
    pytest.param("r51", "9C 9S 9D", "JK", None,
                 reading("set", "9S 9D 9C JK", "9S 9D 9C 9H", 9),
                 id="C-WILD joker laid off on three suits is the fourth"),
    pytest.param("r51", FULL_RUN, "AH", None,
                 reading("run", FULL_RUN + " AH", FULL_RUN + " AH", 1),
                 id="C-LAYOFF second ace on A-...-K in two decks"),
    pytest.param("r51", "QH KH AH", "JH", None,
                 reading("run", "JH QH KH AH", "JH QH KH AH", 11),
                 id="C-LAYOFF under Q-K-A"),
    pytest.param("r51", "5H JK 7H", "8H", None,
                 reading("run", "5H JK 7H 8H", "5H 6H 7H 8H", 5),
                 id="C-LAYOFF joker keeps its place and identity"),
    pytest.param("r51", "5H 6H 7H", "JK=4H", None, reading("run", "JK 5H 6H 7H",
                                                            "4H 5H 6H 7H", 4),
                 id="C-LAYOFF declared identity honoured over the higher end"),
    pytest.param("r51", "9C 9S 9D", "JK=9H", None,
                 reading("set", "9S 9D 9C JK", "9S 9D 9C 9H", 9),
                 id="C-WILD declared fourth suit on a set"),
    pytest.param("wrotham", "5H 6H 7H", "JK JK", None,
                 reading("run", "5H 6H 7H JK JK", "5H 6H 7H 8H 9H", 5),
                 id="C-MELD Resolved two jokers laid off high"),
    pytest.param("wrotham", "5H 6H 7H", "JK JK", "low",
                 reading("run", "JK JK 5H 6H 7H", "3H 4H 5H 6H 7H", 3),
                 id="C-LAYOFF two jokers at the low end as asked"),
    pytest.param("wrotham", "5H 6H 7H", "JK 8H", "high",
                 reading("run", "5H 6H 7H 8H JK", "5H 6H 7H 8H 9H", 5),
                 id="C-LAYOFF joker and card together"),
    pytest.param("dummy", "5H 6S 7D", "8C", None,
                 reading("run", "5H 6S 7D 8C", "5H 6S 7D 8C", 5),
                 id="DUMMY-RUN mixed-suit lay-off"),
    pytest.param("dummy", "5H 6S 7D", "2C", "low",
                 reading("run", "2C 5H 6S 7D", "4* 5H 6S 7D", 4),
                 id="C-LAYOFF wild 2 low end as asked"),
    pytest.param("dummy", "9H 9S 9D", "9H JK 2C", None,
                 reading("set", "9S 9H 9H 9D JK 2C", "9S 9H 9H 9D 9* 9*", 9),
                 id="DUMMY-SET lay-off with duplicate suits and wilds"),
]


@pytest.mark.parametrize(("shape", "base", "cards", "end", "expected"), LAYOFF_OK)
def test_lay_off(shape: str, base: str, cards: str, end: str | None,
                 expected: tuple[str, str, str, int]) -> None:
    meld = check_meld(pieces(base), SHAPES[shape])
    extended = extend_meld(meld, pieces(cards), SHAPES[shape], end)
    assert as_tuple(extended) == expected
    assert as_tuple(meld) == as_tuple(check_meld(pieces(base), SHAPES[shape]))  # untouched


LAYOFF_BAD = [
    pytest.param("basic-low", "5H 6H 7H", "4H", "high", ("INVALID_LAY_OFF", "C-LAYOFF"),
                 id="C-LAYOFF 4H refused at the high end"),
    pytest.param("basic-low", "5H 6H 7H", "8H", "low", ("INVALID_LAY_OFF", "C-LAYOFF"),
                 id="C-LAYOFF 8H refused at the low end"),
    pytest.param("basic-low", "5H 6H 7H", "4H 8H", "high", ("INVALID_LAY_OFF", "C-LAYOFF"),
                 id="C-LAYOFF both ends refused when one end asked"),
    pytest.param("basic-low", "5H 6H 7H", "9H", None, ("INVALID_LAY_OFF", "C-LAYOFF"),
                 id="C-LAYOFF gap refused"),
    pytest.param("basic-low", "5H 6H 7H", "8S", None, ("INVALID_LAY_OFF", "C-LAYOFF"),
                 id="C-LAYOFF other suit refused"),
    pytest.param("basic-low", "JH QH KH", "AH", None, ("INVALID_LAY_OFF", "C-LAYOFF"),
                 id="C-LAYOFF ace low refuses an ace on J-Q-K"),
    pytest.param("basic-low", "AH 2H 3H", "KH", None, ("INVALID_LAY_OFF", "C-LAYOFF"),
                 id="C-LAYOFF ace low refuses K under A-2-3"),
    pytest.param("basic-hol", "AH 2H 3H", "KH", None, ("INVALID_LAY_OFF", "C-LAYOFF"),
                 id="C-LAYOFF ace high_or_low refuses K-A-2-3"),
    pytest.param("basic-hol", "QH KH AH", "2H", None, ("INVALID_LAY_OFF", "C-LAYOFF"),
                 id="C-LAYOFF ace high_or_low refuses Q-K-A-2"),
    pytest.param("basic-low", "9S 9H 9D", "8C", None, ("INVALID_LAY_OFF", "BASIC-SET"),
                 id="C-LAYOFF set refuses another rank"),
    pytest.param("r51", "9S 9H 9D", "9S", None, ("INVALID_LAY_OFF", "R51-SET"),
                 id="C-LAYOFF duplicate suit refused when suits must differ"),
    pytest.param("r51", "9S 9H 9D 9C", "JK", None, ("INVALID_LAY_OFF", "R51-SET"),
                 id="C-LAYOFF fifth card refused on a set of four"),
    pytest.param("r51", "5H 6H JK", "JK", None, ("TOO_MANY_WILDS", "R51-WILDS"),
                 id="R51-WILDS second joker refused on a run"),
    pytest.param("r51", "9C 9S JK", "JK", None, ("TOO_MANY_WILDS", "R51-WILDS"),
                 id="R51-WILDS second joker refused on a set"),
    pytest.param("r51", "5H JK 7H", "6H", None, ("INVALID_LAY_OFF", "C-LAYOFF"),
                 id="C-LAYOFF a card the joker stands for has no place"),
    pytest.param("r51", "5H 6H 7H", "JK=4H", "high", ("INVALID_LAY_OFF", "C-LAYOFF"),
                 id="C-LAYOFF declared identity at the wrong end refused"),
    pytest.param("r51", "9C 9S 9D", "JK=9S", None, ("INVALID_LAY_OFF", "R51-SET"),
                 id="C-WILD declared set suit already present refused on lay-off"),
    pytest.param("wrotham", "5H 6H 7H", "JK=6H", None, ("INVALID_LAY_OFF", "C-LAYOFF"),
                 id="C-LAYOFF declared identity already in the run refused"),
    pytest.param("r51", "QH KH AH", "2H", None, ("INVALID_LAY_OFF", "C-LAYOFF"),
                 id="C-LAYOFF r51 never K-A-2"),
]


@pytest.mark.parametrize(("shape", "base", "cards", "end", "reason"), LAYOFF_BAD)
def test_lay_off_refused(shape: str, base: str, cards: str, end: str | None,
                         reason: tuple[str, str]) -> None:
    meld = check_meld(pieces(base), SHAPES[shape])
    with pytest.raises(MeldError) as info:
        extend_meld(meld, pieces(cards), SHAPES[shape], end)
    assert [(r.code.value, r.rule) for r in info.value.reasons] == [reason]


def test_c_layoff_nothing_to_lay_off() -> None:
    meld = check_meld(pieces("5H 6H 7H"), SHAPES["basic-low"])
    with pytest.raises(MeldError) as info:
        extend_meld(meld, (), SHAPES["basic-low"])
    assert [(r.code.value, r.rule) for r in info.value.reasons] == [
        ("INVALID_LAY_OFF", "C-LAYOFF")]


# ---------------------------------------------------------------------------------------
# The meld search takes only cards the hand holds


_SEARCH_SHAPES = {
    name: meld_shape(find_variant(name), Rules.of({**default_rules(find_variant(name)),
                                                   **extra}))
    for name, extra in (("basic", {}), ("rummy51", {}), ("dummy", {}), ("wrotham", {}),
                        ("lebanese14", {}))
} | {
    "dummy, runs of one suit": meld_shape(find_variant("dummy"), Rules.of(
        {**default_rules(find_variant("dummy")), "run_same_suit": True})),
    "rummy51, up to 8 jokers a meld": meld_shape(find_variant("rummy51"), Rules.of(
        {**default_rules(find_variant("rummy51")), "max_wilds_per_meld": 8})),
    "basic, ace high or low": meld_shape(find_variant("basic"), Rules.of(
        {**default_rules(find_variant("basic")), "ace": "high_or_low"})),
    "basic, around": meld_shape(find_variant("basic"), Rules.of(
        {**default_rules(find_variant("basic")), "ace": "around"})),
}


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(sorted(_SEARCH_SHAPES)),
       hand=st.lists(st.sampled_from(sorted(set(find_variant("rummy51").deck()))),
                     min_size=3, max_size=16))
def test_candidate_melds_use_only_cards_the_hand_holds(name: str, hand: list[str]) -> None:
    held = Counter(hand)
    for meld in candidate_melds(hand, _SEARCH_SHAPES[name]):
        assert Counter(meld.cards) <= held, (meld.cards, hand)


def _every_meld(hand: list[str], shape: MeldShape) -> set[tuple[str, ...]]:
    """Every multiset of the hand's cards that :func:`check_meld` reads as a meld, by
    trying them all."""
    found = set()
    items = sorted(Counter(hand).items())
    for counts in itertools.product(*(range(n + 1) for _, n in items)):
        cards = [c for (c, _), k in zip(items, counts, strict=True) for _ in range(k)]
        if len(cards) < 3:
            continue
        try:
            check_meld([Piece(c) for c in cards], shape)
        except MeldError:
            continue
        found.add(tuple(cards))
    return found


@settings(max_examples=250, deadline=None)
@given(name=st.sampled_from(sorted(_SEARCH_SHAPES)),
       hand=st.lists(st.sampled_from(sorted(set(find_variant("rummy51").deck()))),
                     min_size=3, max_size=10),
       sizes=st.none() | st.frozensets(st.integers(3, 10), min_size=1))
def test_candidate_melds_are_every_meld_of_the_hand(name: str, hand: list[str],
                                                    sizes: frozenset[int] | None) -> None:
    """The search misses no meld: a hand's melds, by card multiset, are exactly those
    found by trying every multiset of its cards (the wilds of a hand differ: a joker and
    2s of different suits; runs of mixed suits take any card of a rank; a natural between
    two others may be left out for a wild), of the sizes asked for."""
    shape = _SEARCH_SHAPES[name]
    found = [tuple(sorted(m.cards)) for m in candidate_melds(hand, shape, sizes)]
    assert len(found) == len(set(found))
    every = {m for m in _every_meld(hand, shape) if sizes is None or len(m) in sizes}
    assert set(found) == every


@pytest.mark.parametrize(("name", "hand", "meld"), [
    pytest.param("dummy", "5H 6S 6C 7H", "5H 6S 7H", id="DUMMY-RUN either six"),
    pytest.param("dummy", "3H 3S 2S 2C", "3H 3S 2C", id="DUMMY-WILDS either 2"),
    pytest.param("dummy, runs of one suit", "2S 2C 3S 4S", "2C 3S 4S",
                 id="DUMMY-WILDS the second 2 as the wild"),
    pytest.param("rummy51, up to 8 jokers a meld", "5H 6H 7H 8H JK JK", "5H 8H JK JK",
                 id="R51-WILDS two naturals left out"),
])
def test_candidate_melds_found_once_missed(name: str, hand: str, meld: str) -> None:
    """Melds the search used to miss (one card per rank in mixed runs, the first wilds
    only, one natural at most left out)."""
    found = {tuple(sorted(m.cards)) for m in candidate_melds(hand.split(),
                                                              _SEARCH_SHAPES[name])}
    assert tuple(sorted(meld.split())) in found
