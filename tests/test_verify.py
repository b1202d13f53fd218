"""Provably fair deals and the log replay (``GET …/verify``, ``rummy-referee verify``)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from random import Random
from typing import Any

import pytest
from bot import choose_move
from flask.testing import FlaskClient

from service.rules import GameState, Violation, apply, new_game
from service.rules.fairness import digest
from service.rules.moves import move_to_dict
from service.rules.verify import verify

VARIANTS = ["basic", "rummy51", "lebanese14", "dummy", "wrotham"]


def played(variant: str, seed: int, rules: dict[str, Any] | None = None,
           max_moves: int = 3000) -> tuple[GameState, list[dict[str, Any]]]:
    """A game played by the bot, with its log as the store keeps it (JSON round trip)."""
    rng = Random(seed)
    state, _ = new_game(variant, ["a", "b", "c"], rules or {"match_end": {"deals": 2}},
                        rng=rng)
    log: list[dict[str, Any]] = []
    refused = 0
    while state.status == "playing" and len(log) < max_moves:
        seat = state.turn
        move = choose_move(state, seat, rng)
        try:
            new, events = apply(state, seat, move, rng)
        except Violation as refusal:
            refused += 1  # the bot tries again; one that only makes refused moves is stuck
            assert refused < 1000, f"the bot's moves are refused: {move} {refusal.detail}"
            continue
        log.append(json.loads(json.dumps({"version": len(log) + 1, "seat": seat,
                                          "move": move_to_dict(move), "events": events})))
        state = new
    return state, log


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_finished_game_replays_to_the_same_events_and_state(variant: str) -> None:
    state, log = played(variant, 7)
    assert state.status == "finished"
    report = verify(state, log)
    assert report.as_dict() == {"verified": True, "hands_verified": 2,
                                "moves_replayed": len(log), "moves_pending": 0,
                                "problems": []}


def test_every_deal_is_committed_when_dealt_and_revealed_when_it_ends() -> None:
    _state, log = played("rummy51", 3)
    dealt = [e for entry in log for e in entry["events"] if e["type"] == "dealt"]
    revealed = [e for entry in log for e in entry["events"] if e["type"] == "deal_revealed"]
    assert [r["hand_number"] for r in revealed] == [1, 2]
    assert [d["commitment"] for d in dealt] == [revealed[1]["commitment"]]
    for r in revealed:
        assert r["commitment"] == digest(r["seed"], r)
        assert len(r["seed"]) == 64
        assert sum(len(h) for h in r["hands"]) + len(r["stock"]) + len(r["discard"]) == 108


def test_tampering_is_detected() -> None:
    state, log = played("basic", 11)
    assert verify(state, log).verified
    # a move that did not happen
    moved = copy.deepcopy(log)
    index = next(i for i, e in enumerate(moved) if e["move"]["type"] == "discard")
    hand_cards = [c for c in ["2S", "3S", "4S", "5S"]]
    moved[index]["move"]["card"] = next(c for c in hand_cards
                                        if c != moved[index]["move"]["card"])
    assert not verify(state, moved).verified
    # a seed that does not give the published commitment
    seeded = copy.deepcopy(log)
    reveal = next(e for entry in seeded for e in entry["events"]
                  if e["type"] == "deal_revealed")
    reveal["seed"] = "0" * 64
    report = verify(state, seeded)
    assert not report.verified
    assert any("commitment" in p for p in report.problems)
    # a deal swapped after the fact (stock order changed, commitment recomputed to match)
    swapped = copy.deepcopy(log)
    reveal = next(e for entry in swapped for e in entry["events"]
                  if e["type"] == "deal_revealed")
    reveal["stock"][0], reveal["stock"][-1] = reveal["stock"][-1], reveal["stock"][0]
    reveal["commitment"] = digest(reveal["seed"], reveal)
    assert not verify(state, swapped).verified


def _create(client: FlaskClient, body: dict[str, Any]) -> dict[str, Any]:
    reply = client.post("/v1/games", json=body)
    assert reply.status_code == 201, reply.get_json()
    created: dict[str, Any] = reply.get_json()
    return created


def test_the_public_view_shows_the_commitment_and_verify_reports_pending_moves(
        client: FlaskClient) -> None:
    game = _create(client, {"variant": "basic", "players": ["Ana", "Bo"], "dealer": 1})
    view = game["game"]
    assert isinstance(view["deal_commitment"], str) and len(view["deal_commitment"]) == 64
    token = game["seats"][0]["token"]
    reply = client.post(f"/v1/games/{game['game_id']}/moves",
                        json={"type": "draw", "source": "stock"},
                        headers={"Authorization": f"Bearer {token}"})
    assert reply.status_code == 200
    report = client.get(f"/v1/games/{game['game_id']}/verify").get_json()
    assert report == {"game_id": game["game_id"], "version": 1, "verified": True,
                      "hands_verified": 0, "moves_replayed": 0, "moves_pending": 1,
                      "problems": []}
    assert client.get("/v1/games/nope/verify").status_code == 404


WALKTHROUGH = Path(__file__).resolve().parents[1] / "examples" / "walkthrough-game.json"
MOVES = [(0, {"type": "draw", "source": "stock"}),
         (0, {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H", "TH"]},
                                        {"cards": ["QS", "QD", "QC"]}]}),
         (0, {"type": "discard", "card": "3S"}),
         (1, {"type": "draw", "source": "stock"}),
         (1, {"type": "meld", "melds": [{"cards": ["AH", "2H", "3H"]},
                                        {"cards": ["4C", "5C", "6C"]},
                                        {"cards": ["9D", "TD", "JD"]}]}),
         (1, {"type": "lay_off", "meld_id": "m1", "cards": ["6H"]}),
         (1, {"type": "discard", "card": "KH"})]


def test_a_finished_arranged_game_verifies_over_http_and_with_the_command(
        client: FlaskClient, redis_url: str) -> None:
    game = _create(client, json.loads(WALKTHROUGH.read_text()))
    tokens = [s["token"] for s in game["seats"]]
    for seat, move in MOVES:
        reply = client.post(f"/v1/games/{game['game_id']}/moves", json=move,
                            headers={"Authorization": f"Bearer {tokens[seat]}"})
        assert reply.status_code == 200, reply.get_json()
    log = client.get(f"/v1/games/{game['game_id']}/events").get_json()["entries"]
    (reveal,) = [e for entry in log for e in entry["events"] if e["type"] == "deal_revealed"]
    assert reveal["arranged"] is True
    assert reveal["commitment"] == game["game"]["deal_commitment"]
    report = client.get(f"/v1/games/{game['game_id']}/verify").get_json()
    assert report["verified"] is True
    assert (report["hands_verified"], report["moves_replayed"]) == (1, len(MOVES))
    done = subprocess.run(
        [str(Path(sys.executable).parent / "rummy-referee"), "verify", game["game_id"]],
        env=dict(os.environ, REDIS_URL=redis_url), capture_output=True, text=True,
        timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verified"] is True
    missing = subprocess.run(
        [str(Path(sys.executable).parent / "rummy-referee"), "verify", "no-such-game"],
        env=dict(os.environ, REDIS_URL=redis_url), capture_output=True, text=True,
        timeout=60)
    assert missing.returncode == 2
    assert "no game" in missing.stderr


def test_the_command_takes_a_game_id_that_begins_with_a_dash(
        client: FlaskClient, redis_url: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Game ids are URL-safe base64, so one in 64 begins with "-": the command must not
    read it as an option."""
    from service import cli, referee

    monkeypatch.setattr(referee, "new_game_id", lambda: "-dashFirst01")
    game = _create(client, {"variant": "basic", "players": ["Ana", "Bo"]})
    assert game["game_id"] == "-dashFirst01"
    monkeypatch.setenv("REDIS_URL", redis_url)
    capsys.readouterr()
    assert cli.main(["verify", "-dashFirst01"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["game_id"], report["verified"]) == ("-dashFirst01", True)
    assert cli.main(["verify", "--", "-dashFirst01"]) == 0  # the usual spelling works too
    capsys.readouterr()
    with pytest.raises(SystemExit) as help_asked:
        cli.main(["verify", "--help"])
    assert help_asked.value.code == 0
