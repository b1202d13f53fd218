"""Every gin refusal with its code and rule id (docs/rules.md GIN, API.md "Gin rummy"), each
from the position it is made in, and nothing changed by it. Seat 1 (the non-dealer) holds
three melds and KD; seat 0 holds 4H 5H to lay off on seat 1's AH-3H (tests/support/
gin_game.py)."""

from __future__ import annotations

from collections.abc import Callable
from random import Random
from typing import Any

import pytest

from service.rules.engine import apply
from service.rules.errors import Violation
from service.rules.moves import move_from_dict
from service.rules.state import GameState
from service.rules.variants import gin
from service.rules.views import public_view
from tests.support.engine import turn_moves
from tests.support.gin_game import (
    DEFENDER,
    GIN_HAND,
    GIN_MELDS,
    KNOCK,
    KNOCKER,
    PASS,
    STOCK,
    TAKE,
    UPCARD,
    at_the_wall,
    knock,
    melds,
    new_hand,
    plays,
)

OTHER = ["4H", "5H", "7C", "7D", "7H", "QD", "KD", "QH", "3C", "9C"]
"""Seat 0's hand where seat 1's gin hand draws JS for big gin."""
def offered() -> GameState:
    return new_hand()


def both_passed() -> GameState:
    return plays(new_hand(), (1, PASS), (0, PASS))


def taken() -> GameState:
    return plays(new_hand(), (1, TAKE))


def drawn() -> GameState:
    return plays(both_passed(), (1, STOCK))


def knocked() -> GameState:
    return plays(taken(), (1, KNOCK))


def gin_knocked() -> GameState:
    s = new_hand(hands=(DEFENDER, GIN_HAND), upcard="KD", stock_top=["QD"])
    return plays(s, (1, PASS), (0, PASS), (1, STOCK),
                 (1, {"type": "knock", "card": "QD", "melds": GIN_MELDS}))


def wall() -> GameState:
    return at_the_wall((KNOCKER, DEFENDER), "QC")


def wall_taken() -> GameState:
    return plays(wall(), (0, TAKE))


def wall_only_by_discarding_it() -> GameState:
    """At the wall with knock limit 5, seat 0's gin hand could knock with KD only by
    discarding KD again."""
    return at_the_wall((GIN_HAND, DEFENDER), "KD", {"knock_card": 5})


CASES: list[tuple[str, Callable[[], GameState], int, dict[str, Any], str, str]] = [
    # GIN-FIRST
    ("stock draw while the upcard is offered", offered, 1, STOCK,
     "STOCK_DRAW_FORBIDDEN", "GIN-FIRST"),
    ("the upcard after both passed", both_passed, 1, TAKE, "DISCARD_DRAW_FORBIDDEN",
     "GIN-FIRST"),
    ("a pass after both passed", both_passed, 1, PASS, "PASS_NOT_ALLOWED", "GIN-FIRST"),
    ("a pass after drawing", taken, 1, PASS, "PASS_NOT_ALLOWED", "GIN-FIRST"),
    ("a pass in a later draw", lambda: plays(drawn(), (1, {"type": "discard",
                                                           "card": "KD"})),
     0, PASS, "PASS_NOT_ALLOWED", "GIN-FIRST"),
    ("a pass out of turn", offered, 0, PASS, "NOT_YOUR_TURN", "C-TURN"),
    # GIN-TURN
    ("discarding the card just taken", taken, 1, {"type": "discard", "card": UPCARD},
     "DISCARD_TAKEN_CARD", "GIN-TURN"),
    ("knocking with the card just taken", taken, 1,
     knock(UPCARD, "AH 2H 3H", "4C 4D 4S", "7S 8S 9S"), "DISCARD_TAKEN_CARD", "GIN-TURN"),
    ("a meld before a knock", taken, 1, {"type": "meld", "melds": melds("AH 2H 3H")},
     "INVALID_MELD", "GIN-TURN"),
    # GIN-KNOCK
    ("a knock above the limit", taken, 1, knock("KD", "AH 2H 3H"), "KNOCK_TOO_HIGH",
     "GIN-KNOCK"),
    ("a knock above Oklahoma's limit", lambda: plays(  # 2C up: limit 2; 5D kept
        new_hand({"oklahoma": True}, stock_top=["5D"]), (1, PASS), (0, PASS), (1, STOCK)),
     1, KNOCK, "KNOCK_TOO_HIGH", "GIN-KNOCK"),
    ("a knock melding a card not held", taken, 1, knock("KD", "AH 2H 3H 4H", "4C 4D 4S",
                                                         "7S 8S 9S"),
     "CARD_NOT_IN_HAND", "GIN-KNOCK"),
    ("a knock melding its discard", taken, 1, knock("KD", "AH 2H 3H", "4C 4D 4S",
                                                     "7S 8S 9S", "KD"),
     "CARD_NOT_IN_HAND", "GIN-KNOCK"),
    ("a knock discarding a card not held", taken, 1, knock("QH", "AH 2H 3H", "4C 4D 4S",
                                                            "7S 8S 9S"),
     "CARD_NOT_IN_HAND", "GIN-KNOCK"),
    ("a knock above a lowered knock_card", lambda: plays(new_hand({"knock_card": 1}),
                                                         (1, TAKE)),  # 2C kept: 2
     1, KNOCK, "KNOCK_TOO_HIGH", "GIN-KNOCK"),
    ("a knock whose meld is no meld", taken, 1, knock("KD", "AH 2H 3H", "4C 4D 4S",
                                                       "7S 8S 2C"),
     "INVALID_MELD", "GIN-PLAYERS"),
    ("a knock whose run wraps round the ace", lambda: plays(
        new_hand(hands=(DEFENDER, ["QC", "KC", "AC", *KNOCKER[3:]])), (1, TAKE)), 1,
     knock("KD", "QC KC AC", "4C 4D 4S", "7S 8S 9S"), "INVALID_MELD", "GIN-PLAYERS"),
    ("big gin where it is not played", lambda: plays(
        new_hand(hands=(OTHER, GIN_HAND), upcard="KC", stock_top=["JS"]), (1, PASS), (0, PASS),
        (1, STOCK)), 1, knock(None, "AH 2H 3H", "4C 4D 4S", "7S 8S 9S TS JS"),
     "INVALID_MELD", "GIN-KNOCK"),
    ("big gin short of eleven melded", lambda: plays(
        new_hand({"big_gin_bonus": 31}, hands=(DEFENDER, GIN_HAND), upcard="KC",
             stock_top=["QD"]), (1, PASS), (0, PASS), (1, STOCK)), 1, knock(
        None, "AH 2H 3H", "4C 4D 4S", "7S 8S 9S TS"), "INVALID_MELD", "GIN-KNOCK"),
    ("a knock before drawing", offered, 1, KNOCK, "WRONG_PHASE", "C-TURN"),
    # GIN-LAYOFF
    ("the knocker laying off", taken, 1, {**KNOCK, "lay_offs": [{"meld_id": "m1",
                                                                   "cards": ["2C"]}]},
     "INVALID_LAY_OFF", "GIN-LAYOFF"),
    ("the knocker laying out", knocked, 1, {"type": "lay_out"}, "NOT_YOUR_TURN", "C-TURN"),
    ("a lay-off on a gin", gin_knocked, 0, {"type": "lay_out", "lay_offs": [
        {"meld_id": "m1", "cards": ["4H"]}]}, "INVALID_LAY_OFF", "GIN-LAYOFF"),
    ("a lay-off on one's own meld", lambda: plays(new_hand(hands=(
        [*DEFENDER[:-1], "TS"], KNOCKER)), (1, TAKE), (1, KNOCK)), 0, {
        "type": "lay_out", "melds": melds("JS QS KS"),
        "lay_offs": [{"meld_id": "m4", "cards": ["TS"]}]}, "INVALID_LAY_OFF", "GIN-LAYOFF"),
    ("a lay-off that does not fit", knocked, 0, {"type": "lay_out", "lay_offs": [
        {"meld_id": "m1", "cards": ["9C"]}]}, "INVALID_LAY_OFF", "C-LAYOFF"),
    ("a lay-off on no meld", knocked, 0, {"type": "lay_out", "lay_offs": [
        {"meld_id": "m9", "cards": ["4H"]}]}, "UNKNOWN_MELD", "C-LAYOFF"),
    ("a lay-out with nobody knocked", taken, 1, {"type": "lay_out"}, "WRONG_PHASE",
     "GIN-LAYOFF"),
    ("a draw while the knock is laid out", knocked, 0, STOCK, "WRONG_PHASE", "GIN-LAYOFF"),
    ("a lay_off move after a knock", knocked, 0, {"type": "lay_off", "meld_id": "m1",
                                                  "cards": ["4H"]},
     "WRONG_PHASE", "GIN-LAYOFF"),
    # GIN-WALL
    ("a stock draw at the wall", wall, 0, STOCK, "STOCK_DRAW_FORBIDDEN", "GIN-WALL"),
    ("a discard taken at the wall, not knocked with", wall_taken, 0,
     {"type": "discard", "card": "KD"}, "MUST_KNOCK", "GIN-WALL"),
    ("the discard at the wall with no knock in it", lambda: at_the_wall(
        (DEFENDER, KNOCKER), "QC"), 0, TAKE, "KNOCK_TOO_HIGH", "GIN-WALL"),
    ("the discard at the wall, knocking only by discarding it", wall_only_by_discarding_it,
     0, TAKE, "KNOCK_TOO_HIGH", "GIN-WALL"),
]


@pytest.mark.parametrize(("position", "seat", "move", "code", "rule"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_refusal(position: Callable[[], GameState], seat: int, move: dict[str, Any],
                 code: str, rule: str) -> None:
    state = position()
    before = state.to_dict()
    with pytest.raises(Violation) as info:
        apply(state, seat, move_from_dict(move), Random(2))
    assert (info.value.code.value, info.value.rule.value) == (code, rule)
    assert state.to_dict() == before
    if seat == state.turn:
        assert move not in turn_moves(state, seat)


def test_the_wall_knock_that_discards_the_taken_card_again() -> None:
    """GIN-WALL, GIN-TURN ``discard_taken_card``: where the taken card may go back, the
    gin hand takes KD at the wall and knocks by discarding it (a gin); where it may not,
    the draw is refused (above) and the seat's only move is the pass."""
    assert [m["type"] for m in turn_moves(wall_only_by_discarding_it(), 0)] == ["pass"]
    s = at_the_wall((GIN_HAND, DEFENDER), "KD", {"knock_card": 5,
                                                 "discard_taken_card": True})
    s = plays(s, (0, TAKE), (0, {"type": "knock", "card": "KD", "melds": GIN_MELDS}))
    assert s.phase == "lay_out" and s.turn == 1


@pytest.mark.parametrize(("knock_card", "refused"), [(10, False), (2, False), (1, True),
                                                     (0, True)])
def test_a_knock_refused_only_for_a_lowered_knock_card(knock_card: int, refused: bool) -> None:
    """GIN-KNOCK ``knock_card``: the same knock (2C kept, deadwood 2) from the same position
    is taken while the knob is 2 or more, and refused KNOCK_TOO_HIGH below it; the view's
    ``knock_limit`` is the knob, and legal-moves lists the knock exactly when it is taken."""
    state = plays(new_hand({"knock_card": knock_card}), (1, TAKE))
    assert public_view(state, "g", 0)["gin"]["knock_limit"] == knock_card
    listed = [m for m in turn_moves(state, 1) if m["type"] == "knock"]
    if refused:
        with pytest.raises(Violation) as info:
            apply(state, 1, move_from_dict(KNOCK), Random(2))
        assert (info.value.code.value, info.value.rule.value) == ("KNOCK_TOO_HIGH", "GIN-KNOCK")
        assert dict(info.value.message.params) == {"deadwood": 2, "limit": knock_card}
        assert listed == []
    else:
        after, _ = apply(state, 1, move_from_dict(KNOCK), Random(2))
        assert after.phase == "lay_out" and gin.facts(after).knock is not None
        assert [m["card"] for m in listed] == ["KD"]
