"""Basic rummy's knobs over HTTP: a whole penalty-scoring match played to its target
(BASIC-SCORE, BASIC-END), through the Flask test client against the real Redis."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from tests.support.http_player import FlaskTransport, HttpPlayer


def _create(client: FlaskClient, rules: dict[str, Any], players: int = 3) -> dict[str, Any]:
    reply = client.post("/v1/games", json={"variant": "basic", "rules": rules,
                                           "players": [f"P{i}" for i in range(players)]})
    assert reply.status_code == 201, reply.json
    body: dict[str, Any] = reply.json
    return body


@pytest.mark.parametrize("rules", [
    pytest.param({"scoring": "penalty"}, id="BASIC-END penalty default target 100"),
    pytest.param({"scoring": "penalty", "match_end": {"target": 60},
                  "stock_exhausted": "turn_over", "ace": "high_or_low"},
                 id="BASIC-END penalty target 60, turn_over, ace high_or_low"),
])
def test_a_penalty_match_is_played_to_its_target(client: FlaskClient,
                                                  rules: dict[str, Any]) -> None:
    created = _create(client, rules)
    target = created["game"]["rules"]["match_end"]["target"]
    assert target == rules.get("match_end", {"target": 100})["target"]
    player = HttpPlayer(FlaskTransport(client), created["game_id"],
                        [s["token"] for s in created["seats"]], max_moves=6000,
                        time_limit=120)
    final = player.play_match()
    assert final["status"] == "finished"
    hands = final["hands_played"]
    totals = final["seats"]
    # totals are the sums of the hand scores (BASIC-SCORE: each loser their own count,
    # the winner 0; nobody out: everyone their count)
    for seat in range(3):
        assert totals[seat]["total"] == sum(h["scores"][seat] for h in hands)
    for h in hands:
        if h["went_out"] is not None:
            assert h["scores"][h["went_out"]] == 0
            factor = 2 if h["going_rummy"] else 1
            assert h["scores"] == [c * factor for c in h["counts"]]
        else:
            assert h["scores"] == h["counts"]
    # the match ended after the first hand in which someone reached the target ...
    running = [0, 0, 0]
    for i, h in enumerate(hands):
        running = [t + s for t, s in zip(running, h["scores"], strict=True)]
        assert (max(running) >= target) == (i == len(hands) - 1)
    # ... and the lowest total wins, ties sharing
    low = min(t["total"] for t in totals)
    assert final["winners"] == [t["seat"] for t in totals if t["total"] == low]
