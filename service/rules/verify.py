"""Replaying a game's log through the engine (``rummy-referee verify`` and
``GET /v1/games/{id}/verify``).

For every hand whose deal has been revealed (``deal_revealed`` events: see
:mod:`service.rules.fairness`) it checks that the revealed seed and deal give the
commitment published when the hand was dealt, then replays every logged move of the game
through :func:`~service.rules.engine.apply` from that deal — with a generator that
reproduces the recorded seeds and rebuilt stocks — and compares what the engine does with
what the log says happened, event by event. When the game is over, the replayed final state
must also equal the stored one. A hand still being played cannot be replayed before its
deal is revealed; its moves are left out and said so.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from random import Random
from typing import Any

from service.rules import fairness
from service.rules.engine import apply, new_game
from service.rules.errors import Violation
from service.rules.moves import move_from_dict
from service.rules.state import GameState


class _Replay(Random):
    """Gives back the seeds and stock orders a hand recorded, in order.

    With ``unrevealed_deal`` set (the move that ends the last revealed hand, and so deals
    the next one, whose deal is still secret), what it has not recorded is made up
    instead: that deal cannot be checked before it is revealed, and ``made_up`` says it
    was needed."""

    def __init__(self) -> None:
        super().__init__(0)
        self.seeds: list[int] = []
        self.orders: list[list[str]] = []
        self.unrevealed_deal = False
        self.made_up = False

    def getrandbits(self, k: int, /) -> int:
        if not self.seeds:
            if self.unrevealed_deal:
                self.made_up = True
                return 0
            raise LookupError("the log needs a seed it did not reveal")
        return self.seeds.pop(0)

    def shuffle(self, x: Any, /) -> None:
        if not self.orders:
            if self.unrevealed_deal:
                self.made_up = True
                return
            raise LookupError("the log rebuilt a stock it did not reveal")
        order = self.orders.pop(0)
        # the engine shuffles the cards that become the stock, top last
        x[:] = list(reversed(order))


@dataclass
class Report:
    verified: bool = True
    hands_verified: int = 0
    moves_replayed: int = 0
    moves_pending: int = 0
    problems: list[str] = field(default_factory=list)

    def fail(self, message: str) -> None:
        self.verified = False
        self.problems.append(message)

    def as_dict(self) -> dict[str, Any]:
        return {"verified": self.verified, "hands_verified": self.hands_verified,
                "moves_replayed": self.moves_replayed, "moves_pending": self.moves_pending,
                "problems": self.problems}


def _normal(value: Any) -> Any:
    return json.loads(json.dumps(value))


def _to_last_reveal(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``events`` up to their last ``deal_revealed`` event, that one included."""
    last = max((i for i, e in enumerate(events) if e["type"] == "deal_revealed"), default=-1)
    return list(events[:last + 1])


def verify(state: GameState, log: Sequence[dict[str, Any]]) -> Report:
    """Check ``log`` (entries ``{version, seat, move, events}``) against the engine."""
    report = Report()
    reveals = [e for entry in log for e in entry["events"] if e["type"] == "deal_revealed"]
    dealt = {e["hand_number"]: e for entry in log for e in entry["events"]
             if e["type"] == "dealt"}
    for revealed in reveals:
        number = revealed["hand_number"]
        if fairness.digest(revealed["seed"], revealed) != revealed["commitment"]:
            report.fail(f"hand {number}: the revealed deal does not give its commitment")
        published = dealt.get(number)
        if published is not None and published["commitment"] != revealed["commitment"]:
            report.fail(f"hand {number}: the commitment published at the deal differs from "
                        "the revealed one")
    if not reveals:
        report.moves_pending = len(log)
        return report
    rng = _Replay()
    rng.seeds = [int(r["seed"], 16) for r in reveals]
    rng.orders = [order for r in reveals for order in r["rebuilds"]]
    deals = [{"hands": r["hands"], "stock": list(reversed(r["stock"])),
              "discard": r["discard"], "arranged": r["arranged"]} for r in reveals]
    try:
        replay, _ = new_game(state.variant, state.players, state.rules, reveals[0]["dealer"],
                             None, rng=rng, first_deal=deals[0], now=state.clock_start)
    except (ValueError, LookupError) as exc:
        report.fail(f"hand 1 cannot be dealt again: {exc}")
        return report
    replay.deals = deals[1:]
    replay.arranged = state.arranged
    for entry in log:
        if report.hands_verified == len(reveals):
            report.moves_pending += 1
            continue
        logged = entry["events"]
        # this move ends the last revealed hand (and deals the next, still secret) when it
        # reveals every revealed hand not replayed yet (one at least: see above)
        rng.unrevealed_deal = len(reveals) - report.hands_verified == sum(
            1 for e in logged if e["type"] == "deal_revealed")
        try:
            replay, events = apply(replay, entry["seat"], move_from_dict(entry["move"]), rng,
                                   entry.get("now"))
        except (Violation, LookupError) as exc:
            report.fail(f"version {entry['version']}: the engine refuses the logged move "
                        f"({exc})")
            return report
        if rng.made_up:  # the next hand was dealt: its deal is checked once revealed
            events, logged = _to_last_reveal(events), _to_last_reveal(logged)
        if _normal(events) != _normal(logged):
            report.fail(f"version {entry['version']}: the engine's events differ from the log")
            return report
        report.moves_replayed += 1
        report.hands_verified += sum(1 for e in events if e["type"] == "deal_revealed")
    if report.moves_pending == 0 and not rng.made_up and state.status == "finished" and \
            _normal(replay.to_dict()) != _normal(state.to_dict()):
        report.fail("the replayed final state differs from the stored one")
    return report
