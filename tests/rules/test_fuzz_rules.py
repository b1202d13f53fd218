"""The engine fuzzer (tests/rules/fuzz_rules.py), briefly: random games of every variant played by
the legal-move listing find nothing wrong, and the fuzzer does report what is wrong."""

from __future__ import annotations

from random import Random
from typing import Any

import fuzz_rules
import pytest
from fuzz_rules import Report, fuzz, play_game

from service.rules import Code, GameState, RuleId, Violation, apply, legal
from service.rules.legal import LegalMoves
from service.rules.moves import LayOff, MeldMove, Move, TakeFromMeld
from service.rules.variants import VARIANTS


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_random_games_played_by_the_listing_find_nothing_wrong(variant: str) -> None:
    report = Report()
    rng = Random(variant)
    for _ in range(2):
        play_game(VARIANTS[variant], rng, report, max_moves=150)
    assert report.problems == []
    assert report.games == 2 and report.moves >= 100


def test_the_fuzzer_reports_a_seat_left_without_a_legal_move(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(legal, "legal_moves",
                        lambda state, seat, limit=500: LegalMoves(seat=seat, your_turn=True))
    report = fuzz(seed=1, seconds=5)
    assert report.problems and "has no legal move" in report.problems[0]


def test_the_fuzzer_reports_a_listed_move_the_engine_refuses(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(legal, "legal_moves", lambda state, seat, limit=500: LegalMoves(
        seat=seat, your_turn=True, moves=[{"type": "lay_off", "meld_id": "m999", "cards": ["AS"]}]))
    report = fuzz(seed=1, seconds=5)
    assert report.problems and "refused" in report.problems[0]


@pytest.mark.random_run
def test_the_fuzzer_reports_a_legal_move_the_listing_lacks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    listing = legal.legal_moves

    def without_lay_offs(state: GameState, seat: int, limit: int = 500) -> LegalMoves:
        answer = listing(state, seat, limit)
        answer.moves = [m for m in answer.moves if m["type"] != "lay_off"]
        return answer

    monkeypatch.setattr(legal, "legal_moves", without_lay_offs)
    report = fuzz(seed=1, seconds=20, complete=1.0)
    assert any("'lay_off'" in p and "is legal and not listed" in p for p in report.problems)


def test_the_fuzzer_plays_moves_made_of_several_at_once() -> None:
    report = Report()
    for variant in sorted(VARIANTS):
        play_game(VARIANTS[variant], Random(f"{variant}0"), report, max_moves=200,
                  complete=0.0, combined=1.0)
    assert report.problems == []
    assert sum(report.combined.values()) >= 10, report.combined


def test_the_fuzzer_reports_a_refusal_that_changed_the_state(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def careless(state: GameState, seat: int, move: Move, rng: Random) -> Any:
        if isinstance(move, (MeldMove, LayOff, TakeFromMeld)):
            state.hands[seat].append("JK")  # a refusal must leave the state as it was
            raise Violation(Code.INVALID_MELD, RuleId.C_MELD, "no")
        return apply(state, seat, move, rng)

    monkeypatch.setattr(fuzz_rules, "apply", careless)
    report = fuzz(seed=1, seconds=10, complete=0.0, combined=1.0)
    assert any("changed the state" in p for p in report.problems)
