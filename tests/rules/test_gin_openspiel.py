"""Gin rummy proved against OpenSpiel's ``gin_rummy``: seeded games played move by move in
both engines until 300 of them reach a scored end (tests/rules/gin_vs_openspiel.py; run it
for more). OpenSpiel's own hand-made cases are restated in test_gin_cases.py, which needs no
OpenSpiel.

Where RULES.md and OpenSpiel differ by design, the lockstep knobs reproduce OpenSpiel
(GIN-TURN ``discard_taken_card``, GIN-SCORE ``undercut_on_tie``, GIN-KNOCK
``big_gin_bonus``, GIN-END ``{"deals": 1}``), and three differences are named, where the
comparison of a game stops (and the game does not count towards the 300): OpenSpiel ends a
hand at its 50th draw of a discard, which no GIN rule does (``upcard_limit``); it offers a
lay-off at most two cards beyond a run's end (its ``AllLayoffs`` grows the run by earlier
lay-offs in one pass), where GIN-LAYOFF lets every card that fits be laid off
(``layoff_chain``); and it reckons an 11-card hand's deadwood, to allow a knock, from the
first meld group of the most points it finds less the highest card left, which misses a
knock GIN-KNOCK allows where another such group leaves less (``eleven_card_deadwood``).

The bounce (GIN-TURN: both players in succession take the discard and put it back) is
OpenSpiel's "repeated move" end; RULES.md makes it a draw scored as GIN-WALL scores one, not
a draw at the wall, and ours labels it ``bounce_draw`` (a pass at the wall: ``wall_draw``).

``open-spiel`` is in pyproject's ``test`` extra. Where it is not installed these tests are
skipped, but not in CI (``CI=true``): there a missing OpenSpiel fails them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from service.rules.variants import gin

try:
    from gin_vs_openspiel import (
        EARLY,
        KNOCKED,
        Divergence,
        Lockstep,
        OpenSpielKnock,
        openspiel_eleven,
        play_games,
    )
except ModuleNotFoundError as missing:  # pyspiel, and nothing else
    if missing.name != "pyspiel":
        raise
    MISSING: str | None = str(missing)
else:
    MISSING = None

IN_CI = os.environ.get("CI", "").lower() == "true"


def needs_openspiel() -> None:
    """The lockstep needs OpenSpiel: skip without it, but fail in CI."""
    if MISSING is None:
        return
    if IN_CI:
        pytest.fail(f"CI must prove gin against OpenSpiel: {MISSING} (pyproject's test extra)")
    pytest.skip(f"{MISSING}: install pyproject's test extra")


@pytest.mark.random_run  # 300 games against OpenSpiel
def test_300_games_in_lockstep_with_openspiel() -> None:
    """GIN-*: the same legal moves, phases, deadwood and scores at every step, in 300 games
    that reach a scored end; the games stopped early (by design, above) are few, and the
    games reach every kind of end the knobs allow."""
    needs_openspiel()
    seen: Counter[str] = Counter()
    results = play_games(300, seed=3, seen=seen)
    early = sum(results.get(kind, 0) for kind in EARLY)
    scored = sum(results.values()) - early
    knocked = sum(results.get(kind, 0) for kind in KNOCKED)
    print(f"{results}; compared: {dict(seen)}")
    assert scored == 300, results
    assert early <= 15, results  # 300 of at most 315 games compared to the end
    assert knocked >= 250, results  # knocked and laid out, not drawn
    assert {"knock", "gin", "undercut", "tie", "wall_draw", "bounce_draw"} <= set(results)
    # the knocks and lay-outs: our example and arrangements chosen at random among the
    # legal ones (each meld, lay-off and deadwood compared one OpenSpiel action at a time)
    assert seen["knocks as our example"] >= 150 and seen["knocks arranged at random"] >= 60
    assert seen["lay-outs as our example"] >= 150 and seen["lay-outs arranged at random"] >= 60
    assert seen["lay-off steps"] >= 300 and seen["lay-out meld steps"] >= 300


def test_openspiel_misses_a_knock_that_gin_knock_allows() -> None:
    """GIN-KNOCK, a difference by design: this 11-card hand knocks by discarding 6H (3C-6C
    and 4S-6S melded, AS 5D 3H left: 9); OpenSpiel melds 5S 5C 5D and 6S 6C 6H (as many
    points) and reckons 11, so it offers no knock, and the game's comparison stops there."""
    needs_openspiel()
    hand = ["3H", "AS", "4C", "5D", "6H", "4S", "3C", "6S", "5C", "5S", "6C"]
    assert gin.arrange([c for c in hand if c != "6H"]) == (9, (
        ("3C", "4C", "5C", "6C"), ("4S", "5S", "6S")))
    assert openspiel_eleven(hand) == {9, 11}
    with pytest.raises(OpenSpielKnock):
        Lockstep(7_001_720).run()  # the hand above, at its 16th step


if MISSING is None:
    class WrongDeal(Lockstep):
        """OpenSpiel is dealt the bottom of our stock on every draw, not its top."""

        @property
        def stock_top(self) -> str:
            return self.ours.stock[0]

    class NoLayOffs(Lockstep):
        """Our engine, as this thinks, takes no lay-off."""

        def lay_off_fits(self, *args: Any) -> None:
            return None

    class MissingMeld(Lockstep):
        """OpenSpiel, as this reads it, offers one meld fewer than it does."""

        def os_melds(self) -> set[frozenset[str]]:
            return set(sorted(super().os_melds(), key=sorted)[1:])


@pytest.mark.parametrize(("lockstep", "found"), [
    ("WrongDeal", "discards"), ("NoLayOffs", "lay-offs"), ("MissingMeld", "melds")])
def test_a_divergence_is_reported(lockstep: str, found: str) -> None:
    """The comparison can fail: a stock draw that differs, a lay-off or a meld one engine
    takes and the other not, is caught."""
    needs_openspiel()
    with pytest.raises(Divergence, match=found):  # within a few games
        for seed in range(40):
            globals()[lockstep](seed).run()


@pytest.mark.slow  # two Python processes of their own
def test_a_missing_openspiel_fails_in_ci_and_is_skipped_elsewhere(tmp_path: Path) -> None:
    """This file run where ``pyspiel`` cannot be imported (a stand-in that raises as a
    missing module does): its lockstep tests fail with ``CI=true``, are skipped without."""
    (tmp_path / "pyspiel.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'pyspiel'\", name='pyspiel')\n")
    here = Path(__file__)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), *filter(None, [
        env.get("PYTHONPATH")])])
    run = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(here),
           "-k", "300_games"]
    skipped = subprocess.run(run, env=env, cwd=here.parents[2], capture_output=True,
                             text=True, timeout=120)
    assert skipped.returncode == 0 and "1 skipped" in skipped.stdout, skipped.stdout
    failed = subprocess.run(run, env={**env, "CI": "true"}, cwd=here.parents[2],
                            capture_output=True, text=True, timeout=120)
    assert failed.returncode == 1 and "1 failed" in failed.stdout, failed.stdout
    assert "CI must prove gin against OpenSpiel" in failed.stdout
