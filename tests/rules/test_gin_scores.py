"""Gin's scores where OpenSpiel does not play them (docs/rules.md GIN-KNOCK, GIN-SCORE,
GIN-END): Oklahoma's knock limit, big gin, the tie as an undercut, and the match's game,
box and shutout bonuses, as tables of worked examples."""

from __future__ import annotations

from typing import Any

import pytest

from service.rules.ruleset import Rules
from service.rules.variants import gin
from service.rules.views import public_view
from tests.support.engine import turn_moves
from tests.support.gin_game import KNOCK, hand_end, new_hand, play, refused


def rules(**knobs: Any) -> Rules:
    return Rules.of({**gin.GIN.defaults, **knobs})


@pytest.mark.parametrize(("knobs", "knocker", "deadwood", "kind", "scores", "result"), [
    # a knock: the difference
    ({}, 0, [3, 20], "knock", [17, 0], "knock"),
    ({}, 1, [20, 3], "knock", [0, 17], "knock"),
    # gin: the bonus (25) and the other's deadwood, whatever the knocker's lay-offs
    ({}, 0, [0, 34], "gin", [59, 0], "gin"),
    ({"gin_bonus": 20}, 0, [0, 34], "gin", [54, 0], "gin"),
    # big gin: its own bonus (31 where played) and the other's deadwood
    ({"big_gin_bonus": 31}, 1, [34, 0], "big_gin", [0, 65], "big_gin"),
    # an undercut: the difference and the bonus (25) to the other
    ({}, 0, [8, 5], "knock", [0, 28], "undercut"),
    ({"undercut_bonus": 10}, 0, [8, 5], "knock", [0, 13], "undercut"),
    # a tie: an undercut by default (0 + 25), nothing with undercut_on_tie false
    ({}, 0, [7, 7], "knock", [0, 25], "undercut"),
    ({"undercut_on_tie": False}, 0, [7, 7], "knock", [0, 0], "tie"),
    # a lower defender is an undercut whatever undercut_on_tie: 9 - 7 + 25
    ({"undercut_on_tie": False}, 1, [7, 9], "knock", [27, 0], "undercut"),
])
def test_hand_scores(knobs: dict[str, Any], knocker: int, deadwood: list[int], kind: str,
                     scores: list[int], result: str) -> None:
    """GIN-SCORE."""
    scored = gin.score_gin(rules(**knobs), knocker, deadwood, kind)
    assert (scored.scores, scored.flags["result"]) == (scores, result)
    assert scored.counts == deadwood and scored.flags["knocker"] == knocker


@pytest.mark.parametrize(("upcard", "take", "limit", "kept", "allowed"), [
    # the knocker keeps the card it draws: the upcard taken, or 5D from the stock
    ("6D", True, 6, 6, True),     # 6 up: knock with 6
    ("6D", False, 6, 5, True),    # 5D kept under a 6
    ("3D", False, 3, 5, False),   # 5D kept under a 3: too high
    ("AC", True, 0, 1, False),    # an ace up: gin only
    ("KC", False, 10, 5, True),   # a face card up: 10, as knock_card
    ("QD", True, 10, 10, True),
])
def test_oklahoma_knock_limit(upcard: str, take: bool, limit: int, kept: int,
                              allowed: bool) -> None:
    """GIN-KNOCK ``oklahoma``: the first upcard's value is the hand's knock limit (the
    view's ``knock_limit``, whatever knob ``knock_card`` says); the knocker discards KD
    and keeps the card it drew: 6D up and 5D drawn, deadwood 5 ≤ 6 knocks; 3D up and 5D
    drawn, 5 > 3 may not."""
    s = new_hand({"oklahoma": True, "knock_card": 3}, upcard=upcard, stock_top=["5D"])
    assert public_view(s, "g", 0)["gin"]["knock_limit"] == limit
    if take:
        s, _ = play(s, 1, {"type": "draw", "source": "discard"})
    else:
        for seat, move in ((1, {"type": "pass"}), (0, {"type": "pass"}),
                           (1, {"type": "draw", "source": "stock"})):
            s, _ = play(s, seat, move)
    knocks = [m for m in turn_moves(s, 1) if m["type"] == "knock"]
    assert bool(knocks) is allowed
    if not allowed:
        assert refused(s, 1, KNOCK) == ("KNOCK_TOO_HIGH", "GIN-KNOCK")
        return
    s, _ = play(s, 1, KNOCK)
    assert public_view(s, "g", 0)["gin"]["knock"]["deadwood"] == kept


def test_big_gin_worked_example() -> None:
    """GIN-KNOCK, GIN-SCORE ``big_gin_bonus`` 31: seat 1 draws JS and melds all eleven
    cards without a discard; seat 0 melds 7C 7D 7H and keeps 4H 5H QD KD QH 3C 9C (51):
    31 + 51 = 82. Gin on the same cards (discarding JS) would score 25 + 51 = 76."""
    hands = (["4H", "5H", "7C", "7D", "7H", "QD", "KD", "QH", "3C", "9C"],
             ["AH", "2H", "3H", "4C", "4D", "4S", "7S", "8S", "9S", "TS"])
    for knock, bonus, scores, result in (
            ({"type": "knock", "melds": [{"cards": c.split()} for c in (
                "AH 2H 3H", "4C 4D 4S", "7S 8S 9S TS JS")]}, 31, [0, 82], "big_gin"),
            ({"type": "knock", "card": "JS", "melds": [{"cards": c.split()} for c in (
                "AH 2H 3H", "4C 4D 4S", "7S 8S 9S TS")]}, 31, [0, 76], "gin")):
        s = new_hand({"big_gin_bonus": bonus}, hands, "KC", ["JS"])
        for seat, move in ((1, {"type": "pass"}), (0, {"type": "pass"}),
                           (1, {"type": "draw", "source": "stock"}), (1, knock)):
            s, _ = play(s, seat, move)
        s, events = play(s, 0, turn_moves(s, 0)[0])
        end = hand_end(events)
        assert (end["scores"], end["result"], end["deadwood"]) == (scores, result, [51, 0])


def finished(knobs: dict[str, Any], totals: list[int], history: list[list[int]],
             knocker: int, deadwood: list[int], kind: str = "knock") -> tuple[
                 list[int], dict[str, Any]]:
    """The last hand's scores and flags when a match of ``knobs`` stands at ``totals``
    after hands that scored ``history``."""
    s = new_hand({"match_end": {"target": 100}, **knobs})
    s.totals = list(totals)
    s.history = [{"scores": h} for h in history]
    r = Rules.of(s.rules)
    scored = gin.with_match_bonuses(r, s, gin.score_gin(r, knocker, deadwood, kind))
    return [int(x) for x in scored.scores], scored.flags


@pytest.mark.parametrize(("knobs", "totals", "history", "knocker", "deadwood", "scores",
                          "boxes", "shutout"), [
    # 90-40 after seat 0 and seat 1 won a hand each; seat 0 knocks 15 and reaches 105:
    # 15 + game 100 + 2 boxes (50) = 165; seat 1: its box, 25. No shutout.
    ({}, [90, 40], [[90, 0], [0, 40]], 0, [5, 20], [165, 25], [50, 25], False),
    # 90-0, seat 1 won no hand: a shutout doubles seat 0's 90 + 165 = 255 to 510: 420
    ({}, [90, 0], [[90, 0]], 0, [5, 20], [420, 0], [50, 0], True),
    ({"shutout_doubles": False}, [90, 0], [[90, 0]], 0, [5, 20], [165, 0], [50, 0], False),
    # other bonuses: game 50, box 10: 15 + 50 + 20 = 85
    ({"game_bonus": 50, "box_bonus": 10, "shutout_doubles": False}, [90, 0], [[90, 0]], 0,
     [5, 20], [85, 0], [20, 0], False),
    # the undercut that ends it: seat 1 at 95 scores 3 + 25 = 28 (123): + 100 + 2 boxes;
    # seat 0 keeps its box
    ({}, [40, 95], [[40, 0], [0, 95]], 0, [8, 5], [25, 178], [25, 50], False),
    # a gin from 0 ends a match at once: 25 + 80 = 105, + 100 + 25, doubled: 460
    ({}, [0, 0], [], 1, [80, 0], [0, 460], [0, 25], True),
])
def test_match_end_bonuses(knobs: dict[str, Any], totals: list[int],
                           history: list[list[int]], knocker: int, deadwood: list[int],
                           scores: list[int], boxes: list[int], shutout: bool) -> None:
    """GIN-END with a target of 100: the hand that takes a total to it adds the game
    bonus to the winner, a box per hand won to each player, and a shutout doubles the
    winner's total."""
    kind = "gin" if deadwood[knocker] == 0 else "knock"
    got, flags = finished(knobs, totals, history, knocker, deadwood, kind)
    assert got == scores
    assert (flags["box_bonus"], flags["shutout"]) == (boxes, shutout)
    assert flags["match_winner"] == (0 if totals[0] + got[0] > totals[1] + got[1] else 1)


@pytest.mark.parametrize(("knobs", "totals"), [
    ({}, [50, 40]),                       # 50 + 15 = 65: short of the target
    ({"match_end": {"deals": 3}}, [95, 0]),  # a number of deals: no bonuses
])
def test_no_bonus_before_the_end(knobs: dict[str, Any], totals: list[int]) -> None:
    got, flags = finished(knobs, totals, [[totals[0], 0]], 0, [5, 20])
    assert got == [15, 0] and "game_bonus" not in flags
