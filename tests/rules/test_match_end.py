"""Ending a match early and turn clocks (C-RESIGN, C-ABORT, C-CLOCK): the engine, with time
as an input (never a clock of its own)."""

from __future__ import annotations

from random import Random
from typing import Any

import pytest

from service.rules import GameState, Violation, apply, new_game
from service.rules.errors import Code
from service.rules.legal import legal_moves
from service.rules.moves import (
    Abort,
    ClaimTimeout,
    Discard,
    Draw,
    Resign,
    move_from_dict,
    move_to_dict,
)
from service.rules.variants.dummy import dummy_state

CLOCK = {"clock": {"turn_seconds": 30}}



def game(variant: str, players: int = 3, rules: dict[str, Any] | None = None,
         now: int | None = None) -> GameState:
    state, _ = new_game(variant, [f"p{i}" for i in range(players)], rules, dealer=0,
                        rng=Random(7), now=now)
    return state


def with_totals(state: GameState, totals: list[int]) -> GameState:
    state = state.copy()
    state.totals = list(totals)
    return state


def refused(state: GameState, seat: int, move: Any, code: Code, now: int | None = None
            ) -> Violation:
    before = state.to_dict()
    with pytest.raises(Violation) as caught:
        apply(state, seat, move, Random(0), now)
    assert caught.value.code == code, caught.value
    assert state.to_dict() == before
    return caught.value


# --- resign: the winners by scoring kind -----------------------------------------------


@pytest.mark.parametrize(("variant", "rules", "totals", "resigner", "winners"), [
    pytest.param("basic", {}, [40, 10, 40, 5], 3, [0, 2], id="winner_collects-tie"),
    pytest.param("basic", {}, [40, 10, 40, 5], 0, [2], id="winner_collects-resigner-best"),
    pytest.param("basic", {"scoring": "penalty"}, [40, 10, 10, 5], 3, [1, 2],
                 id="basic-penalty-tie"),
    pytest.param("rummy51", {}, [120, 30, 300, 80], 1, [3], id="rummy51-penalty"),
    pytest.param("lebanese14", {}, [120, 30, 300, 80], 0, [1], id="lebanese14-penalty"),
    pytest.param("dummy", {}, [50, 20, 20, 90], 3, [1, 2], id="dummy-lowest"),
    pytest.param("wrotham", {}, [10, 60, 30, 60], 0, [1, 3], id="wrotham-highest"),
    pytest.param("wrotham", {"scoring": "penalty"}, [10, 60, 30, 5], 3, [0],
                 id="wrotham-penalty"),
])
def test_resign_ends_the_match_and_the_best_other_total_wins(
        variant: str, rules: dict[str, Any], totals: list[int], resigner: int,
        winners: list[int]) -> None:
    state = with_totals(game(variant, 4, rules), totals)
    before_history = list(state.history)
    after, events = apply(state, resigner, Resign(), Random(0))
    assert after.status == "finished"
    assert after.end == {"reason": "resigned", "seat": resigner}
    assert after.winners == winners
    assert after.totals == totals and after.history == before_history  # the hand not scored
    assert [e["type"] for e in events] == ["resign", "deal_revealed", "game_end"]
    assert events[-1]["end"] == {"reason": "resigned", "seat": resigner}
    assert events[-1]["winners"] == winners


def test_wrotham_resign_in_a_late_deal_of_the_six() -> None:
    state = with_totals(game("wrotham", 3), [35, 80, 12])
    state.hand_number = 5  # a late deal (WROTHAM-LATE): the match still ends at once
    after, _ = apply(state, 1, Resign(), Random(0))
    assert after.status == "finished" and after.winners == [0]


def test_a_seat_out_of_the_match_neither_wins_nor_resigns() -> None:
    state = with_totals(game("rummy51", 4, {"match_end": {"eliminate_at": 500}}),
                        [510, 40, 40, 90])
    state.out_of_match = [True, False, False, False]
    after, _ = apply(state, 3, Resign(), Random(0))
    assert after.winners == [1, 2]  # seat 0 has the lowest total but is out
    refused(state, 0, Resign(), Code.OUT_OF_MATCH)


def test_resign_out_of_turn_and_twice() -> None:
    state = game("basic", 3)
    assert state.turn != 2
    after, _ = apply(state, 2, Resign(), Random(0))
    assert after.status == "finished"
    for seat in range(3):
        refused(after, seat, Resign(), Code.GAME_FINISHED)
        refused(after, seat, Draw("stock"), Code.GAME_FINISHED)
    assert legal_moves(after, 0).moves == []


def test_dummy_resign_with_contracts() -> None:
    state = with_totals(game("dummy", 3), [30, 30, 70])
    dummy_state(state).completed = [3, 1, 0]
    after, _ = apply(state, 2, Resign(), Random(0))
    assert after.winners == [0, 1]  # the lowest total, whatever the contracts


# --- abort ----------------------------------------------------------------------------


def test_abort_only_before_the_first_move() -> None:
    state = game("basic", 2)
    assert state.started is False
    after, events = apply(state, 1 - state.turn, Abort(), Random(0))  # out of turn too
    assert after.status == "aborted" and after.winners == []
    assert after.end == {"reason": "aborted", "seat": 1 - state.turn}
    assert [e["type"] for e in events] == ["abort", "deal_revealed"]
    refused(after, 0, Draw("stock"), Code.GAME_FINISHED)
    refused(after, 0, Resign(), Code.GAME_FINISHED)
    moved, _ = apply(state, state.turn, Draw("stock"), Random(0))
    assert moved.started is True
    refused(moved, 0, Abort(), Code.ABORT_TOO_LATE)
    refused(moved, 1, Abort(), Code.ABORT_TOO_LATE)


def test_a_stored_game_without_the_field_counts_as_started() -> None:
    data = game("basic", 2).to_dict()
    del data["started"]
    refused(GameState.from_dict(data), 0, Abort(), Code.ABORT_TOO_LATE)


def test_legal_moves_list_the_ways_to_end() -> None:
    state = game("basic", 3, CLOCK, now=1_000)
    mover = state.turn
    mine = [m["type"] for m in legal_moves(state, mover, now=1_000).moves]
    assert mine[-2:] == ["resign", "abort"]
    other = (mover + 1) % 3
    assert [m["type"] for m in legal_moves(state, other, now=1_000).moves] == [
        "resign", "abort"]
    late = 1_000 + 30_000
    assert [m["type"] for m in legal_moves(state, other, now=late).moves] == [
        "resign", "abort", "claim_timeout"]
    assert "claim_timeout" not in [m["type"] for m in legal_moves(state, mover, now=late).moves]


# --- the clock in the engine ------------------------------------------------------------


def test_the_deadline_is_set_when_each_turn_starts() -> None:
    state = game("basic", 3, CLOCK, now=1_000)
    assert state.deadline == 31_000
    seat = state.turn
    drawn, _ = apply(state, seat, Draw("stock"), Random(0), 9_000)
    assert drawn.deadline == 31_000  # the same turn: the same deadline
    card = drawn.hands[seat][0]
    passed, _ = apply(drawn, seat, Discard(card), Random(0), 12_000)
    assert passed.turn != seat and passed.deadline == 42_000
    assert game("basic", 3).deadline is None  # no clock, no deadline


def test_claim_timeout() -> None:
    state = game("rummy51", 3, {**CLOCK, "match_end": {"target": 1000}}, now=0)
    state = with_totals(state, [100, 50, 20])
    late = state.turn
    other = (late + 1) % 3
    refused(state, other, ClaimTimeout(), Code.CLOCK_NOT_EXPIRED, now=29_999)
    refused(state, late, ClaimTimeout(), Code.OWN_TIMEOUT, now=60_000)
    refused(state, other, ClaimTimeout(), Code.CLOCK_NOT_EXPIRED, now=None)
    after, events = apply(state, other, ClaimTimeout(), Random(0), 30_000)
    assert after.status == "finished"
    assert after.end == {"reason": "timeout", "seat": late}
    best = min(t for s, t in enumerate([100, 50, 20]) if s != late)
    assert after.winners == [s for s, t in enumerate([100, 50, 20]) if s != late and t == best]
    assert events[0] == {"type": "claim_timeout", "seat": other, "late": late}
    refused(after, other, ClaimTimeout(), Code.GAME_FINISHED, now=90_000)
    refused(game("basic", 3), 1, ClaimTimeout(), Code.NO_CLOCK, now=10**13)


def test_the_wire_form_of_the_new_moves() -> None:
    from service.rules.moves import move_from_dict
    for move in (Resign(), Abort(), ClaimTimeout()):
        assert move_from_dict(move_to_dict(move)) == move


# --- gin: the same moves in a two-player variant with its own phases --------------------


def test_gin_resign_abort_and_claim_timeout() -> None:
    state = with_totals(game("gin", 2, {**CLOCK, "match_end": {"target": 100}}, now=0),
                        [40, 70])
    assert state.deadline == 30_000  # the first upcard's offer is a clocked turn (GIN-FIRST)
    late = state.turn
    mine = [m["type"] for m in legal_moves(state, late, now=0).moves]
    assert "pass" in mine and mine[-2:] == ["resign", "abort"]
    aborted, _ = apply(state, 1 - late, Abort(), Random(0))
    assert aborted.status == "aborted" and aborted.winners == []
    resigned, _ = apply(state, 1, Resign(), Random(0))
    assert resigned.status == "finished" and resigned.winners == [0]
    assert resigned.end == {"reason": "resigned", "seat": 1}
    refused(state, 1 - late, ClaimTimeout(), Code.CLOCK_NOT_EXPIRED, now=29_999)
    assert [m["type"] for m in legal_moves(state, 1 - late, now=30_000).moves] == [
        "resign", "abort", "claim_timeout"]
    claimed, _ = apply(state, 1 - late, ClaimTimeout(), Random(0), 30_000)
    assert claimed.end == {"reason": "timeout", "seat": late}
    assert claimed.winners == [1 - late]
    passed, _ = apply(state, late, move_from_dict({"type": "pass"}), Random(0), 1_000)
    assert passed.deadline == 31_000  # the next seat's turn starts its own clock
    refused(passed, late, Abort(), Code.ABORT_TOO_LATE)


def test_gin_resign_while_the_knocked_hand_is_laid_out() -> None:
    from tests.support.gin_game import DEFENDER, KNOCK, KNOCKER, UPCARD, deal
    state, _ = new_game("gin", ["d", "n"], {"match_end": {"deals": 1}}, dealer=0,
                        deals=[deal((DEFENDER, KNOCKER), UPCARD)], rng=Random(1))
    state, _ = apply(state, 1, Draw("discard"), Random(0))
    state, _ = apply(state, 1, move_from_dict(KNOCK), Random(0))
    assert state.turn == 0  # the defender's lay-out (GIN-LAYOFF)
    assert [m["type"] for m in legal_moves(state, 1).moves] == ["resign"]
    after, _ = apply(state, 1, Resign(), Random(0))  # the knocker resigns out of turn
    assert after.status == "finished" and after.winners == [0]
    assert after.history == []  # the knocked hand is not scored
