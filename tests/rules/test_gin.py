"""Gin rummy (docs/rules.md, GIN) in the engine: arranged deals played move by move through
the first upcard, a knock and its lay-out, a gin, the bounce, an undercut, the wall and a
match's end. Every refusal is tabled in test_gin_refusals.py, the scores OpenSpiel does not
play in test_gin_scores.py, OpenSpiel's own cases in test_gin_cases.py."""

from __future__ import annotations

import json
from random import Random

import pytest

from service.rules.engine import new_game
from service.rules.state import GameState
from service.rules.variants import gin
from service.rules.views import public_view
from tests.support.engine import turn_moves
from tests.support.gin_game import (
    DEFENDER,
    GIN_HAND,
    KNOCK,
    KNOCKER,
    PASS,
    STOCK,
    UPCARD,
    at_the_wall,
    deal,
    melds,
    new_hand,
    play,
    plays,
    refused,
)


def test_first_upcard_offer_pass_pass_then_stock() -> None:
    """GIN-FIRST: the non-dealer, then the dealer, may take the upcard or pass; then the
    non-dealer draws from the stock."""
    s = new_hand()
    assert s.turn == 1 and public_view(s, "g", 0)["gin"]["upcard_offer"] == 1
    assert refused(s, 1, {"type": "draw", "source": "stock"}) == ("STOCK_DRAW_FORBIDDEN",
                                                                   "GIN-FIRST")
    s, _ = play(s, 1, {"type": "pass"})
    assert s.turn == 0 and public_view(s, "g", 0)["gin"]["upcard_offer"] == 0
    s, _ = play(s, 0, {"type": "pass"})
    assert s.turn == 1 and public_view(s, "g", 0)["gin"]["upcard_offer"] is None
    assert refused(s, 1, {"type": "draw", "source": "discard"}) == ("DISCARD_DRAW_FORBIDDEN",
                                                                     "GIN-FIRST")
    assert refused(s, 1, {"type": "pass"}) == ("PASS_NOT_ALLOWED", "GIN-FIRST")
    s, _ = play(s, 1, {"type": "draw", "source": "stock"})
    assert s.phase == "play" and len(s.hands[1]) == 11


def test_knock_lay_out_with_lay_offs_scores_the_difference() -> None:
    """GIN-KNOCK, GIN-LAYOFF, GIN-SCORE: the knocker keeps 2C (2); the defender lays off
    4H 5H on AH-3H and keeps 3C 9C (12): the knocker scores 10."""
    s = new_hand()
    s, _ = play(s, 1, {"type": "draw", "source": "discard"})
    # the knocker may not lay off; above the limit is refused
    assert refused(s, 1, {**KNOCK, "lay_offs": [{"meld_id": "m1", "cards": ["2C"]}]}) == (
        "INVALID_LAY_OFF", "GIN-LAYOFF")
    assert refused(s, 1, {"type": "knock", "card": "KD", "melds": melds("AH 2H 3H")}) == (
        "KNOCK_TOO_HIGH", "GIN-KNOCK")
    assert refused(s, 1, {"type": "knock", "card": "KD", "melds": melds("AH 2H 3H 4H")}) == (
        "CARD_NOT_IN_HAND", "GIN-KNOCK")
    s, _ = play(s, 1, KNOCK)
    view = public_view(s, "g", 0)["gin"]
    assert s.phase == "lay_out" and s.turn == 0
    assert view["knock"] == {"seat": 1, "deadwood": 2, "kind": "knock"}
    assert view["deadwood"] == [None, 2]
    assert refused(s, 0, {"type": "draw", "source": "stock"})[0] == "WRONG_PHASE"
    # the best lay-out is the legal-moves example
    listed = turn_moves(s, 0)
    assert len(listed) == 1 and listed[0]["type"] == "lay_out"
    s2, events = play(s, 0, listed[0])
    assert s2.history[-1]["deadwood"] == [12, 2]
    s, events = play(s, 0, {"type": "lay_out", "melds": melds("7C 7D 7H", "JS QS KS"),
                            "lay_offs": [{"meld_id": "m1", "cards": ["4H", "5H"]}]})
    end = next(e for e in events if e["type"] == "hand_end")
    assert end["scores"] == [0, 10] and end["result"] == "knock"
    assert end["deadwood"] == [12, 2] and s.status == "finished" and s.winners == [1]


def test_gin_scores_the_bonus_and_takes_no_lay_offs() -> None:
    """GIN-TURN: the card taken is not discarded again (default); GIN-LAYOFF: no lay-offs
    on a gin; GIN-SCORE: 25 plus the defender's deadwood (4H 5H 3C 9C: 21)."""
    s = new_hand(hands=(DEFENDER, GIN_HAND), upcard="KD", stock_top=["QD"])
    s2, _ = play(s, 1, {"type": "draw", "source": "discard"})
    gin_melds = melds("AH 2H 3H", "4C 4D 4S", "7S 8S 9S TS")
    assert refused(s2, 1, {"type": "knock", "card": "KD", "melds": gin_melds}) == (
        "DISCARD_TAKEN_CARD", "GIN-TURN")
    assert refused(s2, 1, {"type": "discard", "card": "KD"}) == ("DISCARD_TAKEN_CARD",
                                                                  "GIN-TURN")
    s, _ = play(s, 1, {"type": "pass"})
    s, _ = play(s, 0, {"type": "pass"})
    s, _ = play(s, 1, {"type": "draw", "source": "stock"})
    s, _ = play(s, 1, {"type": "knock", "card": "QD", "melds": gin_melds})
    assert public_view(s, "g", 0)["gin"]["knock"] == {"seat": 1, "deadwood": 0, "kind": "gin"}
    assert refused(s, 0, {"type": "lay_out", "lay_offs": [{"meld_id": "m1",
                                                          "cards": ["4H"]}]}) == (
        "INVALID_LAY_OFF", "GIN-LAYOFF")
    listed = turn_moves(s, 0)
    assert listed == [{"type": "lay_out", "melds": melds("7C 7D 7H", "JS QS KS"),
                       "lay_offs": []}]
    s, events = play(s, 0, listed[0])
    end = next(e for e in events if e["type"] == "hand_end")
    assert end["scores"] == [0, 46] and end["result"] == "gin"


def test_discard_taken_card_knob_and_the_bounce_draw() -> None:
    """GIN-TURN ``discard_taken_card``: the taken card may go back; both players doing it
    in succession end the hand as a draw, scored as GIN-WALL scores one (nobody scores;
    GIN-DEAL, GIN-WALL: the same dealer deals again). RULES.md calls it a draw, not a draw
    at the wall: its result is ``bounce_draw``, a pass at the wall's ``wall_draw``."""
    s = new_hand({"discard_taken_card": True, "match_end": {"deals": 2}})
    s, _ = play(s, 1, {"type": "draw", "source": "discard"})
    s, _ = play(s, 1, {"type": "discard", "card": UPCARD})
    assert s.status == "playing" and s.hand_number == 1  # one bounce is no draw
    s, _ = play(s, 0, {"type": "draw", "source": "discard"})
    s, events = play(s, 0, {"type": "discard", "card": UPCARD})
    end = next(e for e in events if e["type"] == "hand_end")
    assert (end["scores"], end["reason"], end["result"]) == ([0, 0], "draw", "bounce_draw")
    assert s.history[-1]["result"] == "bounce_draw"
    assert s.hand_number == 2 and s.dealer == 0 and s.turn == 1  # the same dealer


def test_the_dealer_moves_after_a_scored_hand_and_deals_again_after_a_draw() -> None:
    """GIN-DEAL: the non-dealer acts first, and the dealer moves left (in two: to the other
    seat) after a scored hand; GIN-WALL, GIN-TURN: after a drawn hand (a pass at the wall,
    or the bounce) the same dealer deals again. Five arranged hands: a knock (dealer 0),
    the bounce (dealer 1), a pass at the wall (dealer 1), a knock (dealer 1), then dealer 0
    again."""
    deals = [deal((DEFENDER, KNOCKER), UPCARD), deal((DEFENDER, KNOCKER), UPCARD),
             deal((KNOCKER, DEFENDER), UPCARD), deal((KNOCKER, DEFENDER), UPCARD),
             deal((DEFENDER, KNOCKER), UPCARD)]
    s, _ = new_game("gin", ["p0", "p1"], {"match_end": {"deals": 5},
                                          "discard_taken_card": True},
                    dealer=0, deals=deals, rng=Random(1))
    take = {"type": "draw", "source": "discard"}
    seen = []
    # hand 1, dealer 0: seat 1 takes 2C and knocks; seat 0 lays out
    assert (s.dealer, s.turn) == (0, 1)
    s = plays(s, (1, take), (1, KNOCK))
    s = plays(s, (0, turn_moves(s, 0)[0]))
    seen.append(s.history[-1]["result"])
    # hand 2, dealer 1: the bounce
    assert (s.hand_number, s.dealer, s.turn) == (2, 1, 0)
    s = plays(s, (0, take), (0, {"type": "discard", "card": UPCARD}),
              (1, take), (1, {"type": "discard", "card": UPCARD}))
    seen.append(s.history[-1]["result"])
    # hand 3, dealer 1: both pass the upcard, each discards what it draws; a pass at the wall
    assert (s.hand_number, s.dealer, s.turn) == (3, 1, 0)
    s = plays(s, (0, PASS), (1, PASS))
    while not gin.facts(s).wall:
        seat = s.turn
        s = plays(s, (seat, STOCK))
        s = plays(s, (seat, {"type": "discard", "card": s.hands[seat][-1]}))
    s = plays(s, (s.turn, PASS))
    seen.append(s.history[-1]["result"])
    # hand 4, dealer 1: seat 0 takes 2C and knocks
    assert (s.hand_number, s.dealer, s.turn) == (4, 1, 0)
    s = plays(s, (0, take), (0, KNOCK))
    s = plays(s, (1, turn_moves(s, 1)[0]))
    seen.append(s.history[-1]["result"])
    assert (s.hand_number, s.dealer, s.turn) == (5, 0, 1)
    assert seen == ["knock", "bounce_draw", "wall_draw", "knock"]
    assert [bool(h["scores"][0] or h["scores"][1]) for h in s.history] == [True, False, False,
                                                                           True]


@pytest.mark.parametrize(("defender", "on_tie", "scores", "result"), [
    # AC AD left (2) against the knocker's 2C (2): a tie
    (["4H", "5H", "7C", "7D", "7H", "JS", "QS", "KS", "AC", "AD"], True, [25, 0], "undercut"),
    (["4H", "5H", "7C", "7D", "7H", "JS", "QS", "KS", "AC", "AD"], False, [0, 0], "tie"),
    # 4H 5H 6H laid off, AC left (1): undercut by 1
    (["4H", "5H", "6H", "7C", "7D", "7H", "JS", "QS", "KS", "AC"], False, [26, 0],
     "undercut"),
])
def test_undercut(defender: list[str], on_tie: bool, scores: list[int], result: str) -> None:
    """GIN-SCORE: an undercut scores the difference plus 25 to the defender; knob
    ``undercut_on_tie``."""
    s = new_hand({"undercut_on_tie": on_tie}, hands=(defender, KNOCKER))
    s, _ = play(s, 1, {"type": "draw", "source": "discard"})
    s, _ = play(s, 1, KNOCK)
    s, events = play(s, 0, turn_moves(s, 0)[0])
    end = next(e for e in events if e["type"] == "hand_end")
    assert (end["scores"], end["result"]) == (scores, result)


def test_wall_pass_is_a_drawn_hand_and_the_dealer_deals_again() -> None:
    """GIN-WALL: with 2 cards left in the stock, no stock draw; the discard only to knock;
    a pass draws the hand, and the same dealer deals the next."""
    s = at_the_wall((DEFENDER, KNOCKER), "QC", {"match_end": {"deals": 2}})
    assert public_view(s, "g", 0)["gin"]["wall"]
    assert [m["type"] for m in turn_moves(s, 0)] == ["pass"]
    s, events = play(s, 0, {"type": "pass"})
    end = next(e for e in events if e["type"] == "hand_end")
    assert (end["scores"], end["reason"], end["result"]) == ([0, 0], "wall", "wall_draw")
    assert s.hand_number == 2 and s.dealer == 0 and s.status == "playing"


def test_wall_taken_discard_is_knocked_with() -> None:
    """GIN-WALL: the discard taken at the wall is knocked with, and only that."""
    s = plays(at_the_wall((KNOCKER, DEFENDER), "QC"), (0, {"type": "draw",
                                                           "source": "discard"}))
    assert {m["type"] for m in turn_moves(s, 0)} == {"knock"}
    s, _ = play(s, 0, turn_moves(s, 0)[0])
    assert s.phase == "lay_out" and s.turn == 1


def test_match_end_bonuses_worked_example() -> None:
    """GIN-END with a target of 10: the knock hand's 10 reaches it: + game bonus 100 + one
    box 25 = 135; the loser won no hand: a shutout doubles the winner's total: 270."""
    s = new_hand({"match_end": {"target": 10}})
    s, _ = play(s, 1, {"type": "draw", "source": "discard"})
    s, _ = play(s, 1, KNOCK)
    s, events = play(s, 0, turn_moves(s, 0)[0])
    end = next(e for e in events if e["type"] == "hand_end")
    assert end["scores"] == [0, 270] and end["shutout"] and end["box_bonus"] == [0, 25]
    assert s.totals == [0, 270] and s.winners == [1] and s.status == "finished"
    s = new_hand({"match_end": {"target": 10}, "shutout_doubles": False, "game_bonus": 50,
              "box_bonus": 20})
    s, _ = play(s, 1, {"type": "draw", "source": "discard"})
    s, _ = play(s, 1, KNOCK)
    s, events = play(s, 0, turn_moves(s, 0)[0])
    assert s.totals == [0, 80]


def test_legal_moves_list_each_knock_with_its_best_arrangement() -> None:
    """legal-moves: the knocks with the least-deadwood melds, then every discard."""
    s = new_hand()
    assert [m["type"] for m in turn_moves(s, 1)] == ["pass", "draw"]
    s, _ = play(s, 1, {"type": "draw", "source": "discard"})
    moves = turn_moves(s, 1)
    knocks = [m for m in moves if m["type"] == "knock"]
    assert KNOCK in knocks
    assert all(m["card"] != UPCARD for m in moves if m["type"] in ("knock", "discard"))
    assert len([m for m in moves if m["type"] == "discard"]) == 10


def test_deadwood_arrangements() -> None:
    """GIN-PLAYERS, GIN-KNOCK: the least deadwood (ace low only; a 4-set or a run may give
    a card to the other meld)."""
    assert gin.arrange(["QS", "KS", "AS"])[0] == 21  # no Q-K-A
    assert gin.arrange(["7C", "7D", "7H", "7S", "5S", "6S"])[0] == 0
    assert gin.arrange(["2H", "3H", "4H", "4C", "4D"])[0] == 5  # 4H in one meld only
    assert gin.arrange(["4H", "4C", "4D", "4S", "2H", "3H"])[0] == 0


def test_the_hand_facts_round_trip_through_the_stored_document() -> None:
    """The typed gin facts are stored in ``var`` under ``"gin"`` and read back as they were,
    from the stored document and from its JSON (a knocked hand, mid lay-out)."""
    s = plays(new_hand({"oklahoma": True}), (1, {"type": "draw", "source": "discard"}),
              (1, KNOCK))
    facts = gin.facts(s)
    assert isinstance(facts, gin.GinState) and facts.knock == gin.KnockFacts(1, 2, "knock")
    stored = json.loads(json.dumps(s.to_compact()))
    assert stored["var"]["gin"]["knock"] == {"seat": 1, "deadwood": 2, "kind": "knock"}
    back = GameState.from_dict(stored)
    assert back.variant_state == facts and "gin" not in back.var
    assert GameState.from_dict(s.to_dict()).variant_state == facts
    assert public_view(back, "g", 0) == public_view(s, "g", 0)
    assert turn_moves(back, 0) == turn_moves(s, 0)
