"""Gin rummy proved against OpenSpiel's ``gin_rummy``: 300 seeded games played move by move
in both engines (tests/rules/gin_vs_openspiel.py; run it for more). OpenSpiel's own
hand-made cases are restated in test_gin_cases.py, which needs no OpenSpiel.

Where RULES.md and OpenSpiel differ by design, the lockstep knobs reproduce OpenSpiel
(GIN-TURN ``discard_taken_card``, GIN-SCORE ``undercut_on_tie``, GIN-KNOCK
``big_gin_bonus``, GIN-END ``{"deals": 1}``), and two differences are named, where the
comparison of a game stops: OpenSpiel ends a hand at its 50th draw of a discard, which no
GIN rule does (``upcard_limit``); and it offers a lay-off at most two cards beyond a run's
end (its ``AllLayoffs`` grows the run by earlier lay-offs in one pass), where GIN-LAYOFF
lets every card that fits be laid off (``layoff_chain``).
"""

from __future__ import annotations

import pytest

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
