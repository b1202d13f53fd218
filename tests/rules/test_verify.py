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
import redis
from flask.testing import FlaskClient

from service.app import create_app
from service.config import Settings
from service.rules import GameState, Violation, apply, new_game
from service.rules.fairness import SECRET, digest, record_rebuild
from service.rules.moves import Discard, Draw, Move, move_to_dict
from service.rules.state import COMPILED, pack_deal, unpack_deal
from service.rules.verify import verify
from service.store import game_keys
from tests.support.bot import choose_move

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
def test_a_match_between_hands_verifies_the_hands_revealed(variant: str) -> None:
    """Between hands of a match (the first hand revealed, the next one dealt and secret),
    the revealed hand replays and verifies, and the moves of the hand being played are
    pending: the move that ended the hand also dealt the next one, whose deal the replay
    cannot know before it is revealed."""
    _final, whole = played(variant, 7)
    ended = next(entry["version"] for entry in whole
                 if any(e["type"] == "deal_revealed" for e in entry["events"]))
    for cut in (ended, ended + 4):
        state, log = played(variant, 7, max_moves=cut)
        assert state.status == "playing" and state.hand_number == 2
        assert verify(state, log).as_dict() == {
            "verified": True, "hands_verified": 1, "moves_replayed": ended,
            "moves_pending": cut - ended, "problems": []}


def test_a_forged_deal_of_the_next_hand_is_still_refused_once_revealed() -> None:
    """The next hand's deal is left unchecked only until it is revealed: once it is, a log
    whose second hand was dealt other cards than its revealed deal fails at the move that
    dealt it."""
    _final, log = played("basic", 7)
    forged = copy.deepcopy(log)
    reveals = [e for entry in forged for e in entry["events"] if e["type"] == "deal_revealed"]
    reveals[1]["hands"][0], reveals[1]["hands"][1] = reveals[1]["hands"][1], \
        reveals[1]["hands"][0]
    reveals[1]["commitment"] = digest(reveals[1]["seed"], reveals[1])
    for entry in forged:
        for e in entry["events"]:
            if e["type"] == "dealt" and e["hand_number"] == 2:
                e["commitment"] = reveals[1]["commitment"]
    ended = next(entry["version"] for entry in forged
                 if any(e["type"] == "deal_revealed" for e in entry["events"]))
    assert verify(_final, forged).problems == [
        f"version {ended}: the engine's events differ from the log"]


def test_rebuilt_stocks_are_revealed_as_lists_and_verified() -> None:
    """C-STOCK: stocks rebuilt during a hand are in the deal record (kept packed) and in the
    reveal (as lists of cards, top first), and the hand replays from them."""
    rng = Random(5)
    state, _ = new_game("basic", ["a", "b", "c"],
                        {"stock_exhausted": "shuffle", "max_stock_rebuilds": 2}, rng=rng)
    start = state
    log: list[dict[str, Any]] = []
    revealed: list[dict[str, Any]] = []
    while not revealed:  # draw from the stock and throw the card back: nobody goes out
        seat = state.turn
        state, events = apply(state, seat, Draw("stock"), rng)
        moves: list[tuple[Move, list[dict[str, Any]]]] = [(Draw("stock"), events)]
        if not any(e["type"] == "deal_revealed" for e in events):
            drawn = state.hands[seat][-1]
            state, events = apply(state, seat, Discard(drawn), rng)
            moves.append((Discard(drawn), events))
        for move, events in moves:
            log.append(json.loads(json.dumps({"version": len(log) + 1, "seat": seat,
                                              "move": move_to_dict(move), "events": events})))
            revealed += [e for e in events if e["type"] == "deal_revealed"]
    [reveal] = revealed
    assert len(reveal["rebuilds"]) == 2
    assert all(type(stock) is list and all(type(c) is str and len(c) == 2 for c in stock)
               for stock in reveal["rebuilds"])
    assert digest(reveal["seed"], reveal) == reveal["commitment"]
    report = verify(start, log)
    assert (report.problems, report.hands_verified) == ([], 1)


def test_a_states_copy_shares_the_deal_record_and_a_rebuild_replaces_it() -> None:
    """The hidden deal record is never changed in place: a copy shares it, and recording a
    rebuilt stock in the copy leaves the state it was copied from as it was."""
    state, _ = new_game("basic", ["a", "b"], {}, rng=Random(1))
    record = state.var[SECRET]
    assert type(record["stock"]) is str and all(type(h) is str for h in record["hands"])
    copy_ = state.copy()
    assert copy_.var[SECRET] is record
    record_rebuild(copy_)
    assert state.var[SECRET] is record and record["rebuilds"] == []
    assert copy_.var[SECRET]["rebuilds"] == ["".join(reversed(copy_.stock))]
    assert unpack_deal(copy_.var[SECRET])["rebuilds"] == [list(reversed(copy_.stock))]


def test_a_deal_record_stored_as_lists_is_read_and_stored_packed() -> None:
    """A state stored with the deal record's card lists as lists (as before they were kept
    packed) reads the same deal, and stores it packed."""
    state, _ = new_game("rummy51", ["a", "b", "c"], {}, rng=Random(2))
    stored = json.loads(json.dumps(state.to_compact()))
    old = {**stored, "var": {**stored["var"], SECRET: unpack_deal(stored["var"][SECRET])}}
    assert type(old["var"][SECRET]["stock"]) is list
    again = GameState.from_dict(old)
    assert again.var[SECRET] == state.var[SECRET] == pack_deal(old["var"][SECRET])
    assert json.loads(json.dumps(again.to_compact())) == stored


def test_a_state_stores_its_fields_only() -> None:
    """``to_compact`` stores the state's fields, whatever else was set on the object (a
    state compiled by mypyc takes no other attribute at all), and so does a copy."""
    state, _ = new_game("basic", ["a", "b"], {}, rng=Random(3))
    stored = state.to_compact()
    if COMPILED:
        with pytest.raises(AttributeError):
            state.note = "not a field"  # type: ignore[attr-defined]
    else:
        state.note = "not a field"  # type: ignore[attr-defined]
    assert state.to_compact() == stored
    assert state.copy().to_compact() == stored
    assert GameState.from_dict(json.loads(json.dumps(stored))).to_compact() == json.loads(
        json.dumps(stored))


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


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_match_between_hands_verifies_over_http(client: FlaskClient, variant: str) -> None:
    """GET …/verify on a game played over HTTP (by the benchmark's player) into its second
    hand: the first hand verifies, the second hand's moves are pending."""
    from bench.player import GamePlan

    game = _create(client, {"variant": variant, "players": ["Ana", "Bo", "Cy"],
                            "rules": {"match_end": {"deals": 3}}})
    plan = GamePlan(game["game_id"], variant, [s["token"] for s in game["seats"]],
                    game["game"], Random(11))
    path = f"/v1/games/{plan.game_id}"
    for _ in range(3000):
        if plan.view["hand_number"] >= 2 or plan.finished:
            break
        seat = plan.to_move
        auth = {"Authorization": f"Bearer {plan.tokens[seat]}"}
        if plan.seats[seat].hand is None:  # a new deal: read the hand
            plan.saw(seat, client.get(f"{path}/me", headers=auth).get_json(), [])
            continue
        reply = client.post(f"{path}/moves", json=plan.next_move(), headers=auth)
        assert reply.status_code == 200, reply.get_json()
        plan.saw(seat, reply.get_json()["game"], reply.get_json()["events"])
    assert plan.view["hand_number"] == 2 and not plan.finished
    report = client.get(f"{path}/verify").get_json()
    assert (report["verified"], report["hands_verified"], report["problems"]) == (True, 1, [])
    assert report["moves_replayed"] + report["moves_pending"] == report["version"]


WALKTHROUGH = Path(__file__).resolve().parents[2] / "examples" / "walkthrough-game.json"
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
    from service import cli
    from service.referee import games

    monkeypatch.setattr(games, "new_game_id", lambda: "-dashFirst01")
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


@pytest.fixture
def replays(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The log lengths the referee replayed for ``…/verify``, one per replay (its call of
    the engine's replay, counted)."""
    from service.referee import games

    seen: list[int] = []
    real = games.verify_log

    def counted(state: GameState, log: list[dict[str, Any]]) -> Any:
        seen.append(len(log))
        return real(state, log)

    monkeypatch.setattr(games, "verify_log", counted)
    return seen


def _play(client: FlaskClient, game: dict[str, Any], moves: list[tuple[int, Any]]) -> None:
    tokens = [s["token"] for s in game["seats"]]
    for seat, move in moves:
        reply = client.post(f"/v1/games/{game['game_id']}/moves", json=move,
                            headers={"Authorization": f"Bearer {tokens[seat]}"})
        assert reply.status_code == 200, reply.get_json()


def test_verify_is_replayed_once_per_version_and_kept_beside_the_game(
        client: FlaskClient, redis_url: str, replays: list[int]) -> None:
    """A second verify at the same version, from this worker or another, is answered from
    the report kept beside the game (a key of the game's hash tag that expires no later
    than the game) without replaying the log again."""
    game = _create(client, json.loads(WALKTHROUGH.read_text()))
    gid = game["game_id"]
    _play(client, game, MOVES[:3])
    first = client.get(f"/v1/games/{gid}/verify")
    assert first.status_code == 200
    assert first.get_json()["version"] == 3 and replays == [3]
    assert client.get(f"/v1/games/{gid}/verify").get_json() == first.get_json()
    other_worker = create_app(Settings(redis_url=redis_url, rate_limits=(),
                                       create_rate_limits=(), verify_rate_limits=()))
    assert other_worker.test_client().get(
        f"/v1/games/{gid}/verify").get_json() == first.get_json()
    assert replays == [3]
    keys = game_keys(gid)
    cached, game_key = keys.cached("verify"), keys.game
    assert cached.startswith(f"rummy:{{{gid}}}:")
    r = redis.Redis.from_url(redis_url)
    try:
        assert r.get(cached).startswith(b"3:")
        game_left = r.pttl(game_key)  # read first: the report's expiry is the earlier
        assert 0 < r.pttl(cached) <= game_left
    finally:
        r.close()


def test_verify_after_a_new_move_gives_the_new_answer(
        client: FlaskClient, redis_url: str, replays: list[int]) -> None:
    game = _create(client, json.loads(WALKTHROUGH.read_text()))
    gid = game["game_id"]
    _play(client, game, MOVES[:3])
    before = client.get(f"/v1/games/{gid}/verify").get_json()
    assert (before["version"], before["moves_pending"], before["hands_verified"]) == (3, 3, 0)
    _play(client, game, MOVES[3:])  # the hand, and the game, end: the deal is revealed
    after = client.get(f"/v1/games/{gid}/verify").get_json()
    assert (after["version"], after["moves_replayed"], after["hands_verified"],
            after["verified"]) == (len(MOVES), len(MOVES), 1, True)
    assert client.get(f"/v1/games/{gid}/verify").get_json() == after
    assert replays == [3, len(MOVES)]
    # a report kept for another version is never given for this one
    r = redis.Redis.from_url(redis_url)
    try:
        r.set(game_keys(gid).cached("verify"), b'3:{"verified": false}', px=60_000)
    finally:
        r.close()
    assert client.get(f"/v1/games/{gid}/verify").get_json() == after
    assert replays == [3, len(MOVES), len(MOVES)]
