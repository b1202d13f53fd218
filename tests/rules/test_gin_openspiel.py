"""Gin rummy proved against OpenSpiel's ``gin_rummy``: 300 seeded games played move by move
in both engines (tests/rules/gin_vs_openspiel.py; run it for more), and OpenSpiel's own
hand-made deadwood cases (its gin_rummy_test.cc and gin_rummy_utils) restated as tables.

Where RULES.md and OpenSpiel differ by design, the lockstep knobs reproduce OpenSpiel
(GIN-TURN ``discard_taken_card``, GIN-SCORE ``undercut_on_tie``, GIN-KNOCK
``big_gin_bonus``, GIN-END ``{"deals": 1}``), and one difference is named: OpenSpiel ends a
hand at its 50th draw of a discard, which no GIN rule does; the comparison stops there.
"""

from __future__ import annotations

import pytest

from service.rules.variants import gin

pytest.importorskip("pyspiel")

from gin_vs_openspiel import Lockstep, play_games


def test_300_games_in_lockstep_with_openspiel() -> None:
    """GIN-*: the same legal moves, phases, deadwood and scores at every step."""
    results = play_games(300, seed=3)
    assert sum(results.values()) == 300
    # the games reach every kind of end the knobs allow
    assert {"knock", "wall_draw", "undercut", "gin"} <= set(results)


class WrongDeal(Lockstep):
    """OpenSpiel is dealt the bottom of our stock on every draw, not its top."""

    @property
    def stock_top(self) -> str:
        return self.ours.stock[0]


def test_a_divergence_is_reported() -> None:
    """The comparison can fail: a stock draw that differs is caught."""
    with pytest.raises(AssertionError, match="discards"):
        WrongDeal(1).run()


@pytest.mark.parametrize(("hand", "deadwood"), [
    # OpenSpiel gin_rummy_test.cc / gin_rummy_utils MinDeadwood cases (GIN-PLAYERS,
    # GIN-KNOCK): ace low, sets of 3-4, runs of 3+, a card in one meld only
    (["AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS"], 0),
    (["AS", "AC", "AD", "2S", "2C", "2D", "3S", "3C", "3D", "KH"], 10),
    (["QS", "KS", "AS", "2C", "3D", "4H", "6S", "8C", "TD", "JH"], 64),
    (["7C", "7D", "7H", "7S", "5S", "6S", "8S", "9S", "KD", "KH"], 20),
    (["AH", "2H", "3H", "4H", "4C", "4D", "5C", "6C", "7C", "KS"], 10),
])
def test_min_deadwood_tables(hand: list[str], deadwood: int) -> None:
    assert gin.arrange(hand)[0] == deadwood
