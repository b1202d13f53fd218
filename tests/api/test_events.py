"""The move log (``GET /v1/games/{id}/events``, API.md): JSON pages and server-sent events.

Games use arranged deals, so every hidden card is known and the redaction can be checked
exactly: a stock draw's card, the hands of a new deal and R51 penalty cards appear only in
the log of the seat they belong to, never in the public log.

Event streams run through the Flask test client (``buffered=False``) on an app whose
streams last at most 2 s, with a heartbeat every 0.5 s and one stream slot.
"""

from __future__ import annotations

import json
import socket
import time
from random import Random
from typing import Any

import pytest
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from service.api.schemas import EVENTS_PAGE, EVENTS_PAGE_MAX
from service.api.streams import bound_unacknowledged
from service.app import create_app
from service.config import Settings
from service.rules.cards import standard_deck
from tests.support.basic_game import B_COUNT_1, B_HANDS, C_COUNT_0, C_HANDS, CreatedGame, strings
from tests.support.deals import arranged, auth
from tests.support.http_player import FlaskTransport
from tests.support.problems import assert_problem
from tests.support.reliability import create_game, next_move
from tests.support.streams import SSE, Stream

DECK = standard_deck()
R51_DECK = standard_deck(2, 4)

# Hand 1 (dealer 1: seat 0 first; upcard 5C; stock KD, 6H, …): seat 0 draws KD from the
# stock and discards it; seat 1 draws 6H and discards it; seat 0 takes 6H and goes out
# going rummy (BASIC-RUMMY, double). Hand 2 (dealer 0: seat 1 first; stock 8D, …): seat 1
# draws 8D, melds ten cards and goes out discarding 8D, going rummy too (deals B and C of
# tests/support/basic_game.py).

MATCH = [
    (0, {"type": "draw", "source": "stock"}),  # 1: KD (hidden)
    (0, {"type": "discard", "card": "KD"}),  # 2
    (1, {"type": "draw", "source": "stock"}),  # 3: 6H (hidden)
    (1, {"type": "discard", "card": "6H"}),  # 4
    (0, {"type": "draw", "source": "discard"}),  # 5: 6H (public)
    (0, {"type": "meld", "melds": [{"cards": ["6H", "7H", "8H", "9H", "TH"]},
                                   {"cards": ["QS", "QD", "QC"]},
                                   {"cards": ["2C", "3C", "4C"]}]}),  # 6: out, hand 2 dealt
    (1, {"type": "draw", "source": "stock"}),  # 7: 8D (hidden)
    (1, {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H", "TH"]},
                                   {"cards": ["QS", "QD", "QC"]},
                                   {"cards": ["2C", "3C", "4C"]}]}),  # 8
    (1, {"type": "discard", "card": "8D"}),  # 9: out, game over
]


class Game(CreatedGame):
    def __init__(self, client: FlaskClient, variant: str = "basic", **fields: Any) -> None:
        super().__init__(client, {"variant": variant, "players": ["Ana", "Bo"], **fields})

    def ok(self, seat: int, body: Any) -> dict[str, Any]:
        resp = self.client.post(f"{self.path}/moves", json=body, headers=auth(self.tokens[seat]))
        assert resp.status_code == 200, resp.get_data(as_text=True)
        answer: dict[str, Any] = resp.get_json()
        return answer

    def events(self, seat: int | None = None, query: str = "") -> TestResponse:
        headers = auth(self.tokens[seat]) if seat is not None else {}
        return self.client.get(f"{self.path}/events{query}", headers=headers)

    def log(self, seat: int | None = None) -> list[dict[str, Any]]:
        resp = self.events(seat)
        assert resp.status_code == 200, resp.get_data(as_text=True)
        assert resp.mimetype == "application/json"
        body = resp.get_json()
        assert body["game_id"] == self.id
        entries: list[dict[str, Any]] = body["entries"]
        return entries


def match_game(client: FlaskClient) -> Game:
    return Game(client, dealer=1, rules={"match_end": {"deals": 2}},
                deals=[arranged(B_HANDS, "5C", ["KD", "6H"]), arranged(C_HANDS, "5C", ["8D"])])


def play_match(game: Game) -> list[dict[str, Any]]:
    return [game.ok(seat, move) for seat, move in MATCH]


def events_of(entry: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e for e in entry["events"] if e["type"] == kind]


# ---------------------------------------------------------------------------------------
# JSON pages


def test_the_public_log_has_one_entry_per_move_and_no_hidden_card(
        client: FlaskClient) -> None:
    game = match_game(client)
    assert game.log() == []
    play_match(game)
    log = game.log()
    assert [e["version"] for e in log] == list(range(1, len(MATCH) + 1))
    assert [(e["seat"], e["move"]) for e in log] == MATCH
    assert log[0] == {"version": 1, "seat": 0, "move": {"type": "draw", "source": "stock"},
                      "events": [{"type": "draw", "seat": 0, "source": "stock"}],
                      "status": "playing", "turn": {"seat": 0, "phase": "play"}}
    assert (log[-1]["status"], log[-1]["turn"]) == ("finished", None)
    assert log[2]["events"] == [{"type": "draw", "seat": 1, "source": "stock"}]
    assert log[4]["events"] == [{"type": "draw", "seat": 0, "source": "discard",
                                 "card": "6H"}]
    assert log[6]["events"] == [{"type": "draw", "seat": 1, "source": "stock"}]
    # hand 1 ends with seat 0 going rummy; hand 2 is dealt in the same entry
    # the finished hand's deal is revealed in the log (provably fair deals)
    assert [e["type"] for e in log[5]["events"]] == ["meld", "hand_end", "deal_revealed",
                                                    "dealt"]
    (end1,) = events_of(log[5], "hand_end")
    assert end1["hand_number"] == 1
    assert end1["went_out"] == 0
    assert end1["scores"] == [2 * B_COUNT_1, 0]
    assert end1["going_rummy"] is True
    assert end1["totals"] == [2 * B_COUNT_1, 0]
    (dealt,) = events_of(log[5], "dealt")
    assert "hand" not in dealt and "private" not in dealt
    assert dealt["hand_number"] == 2
    assert dealt["dealer"] == 0
    assert dealt["first"] == 1
    assert dealt["upcard"] == "5C"
    assert dealt["hand_counts"] == [10, 10]
    assert dealt["stock_count"] == 52 - 21
    # hand 2 ends the match
    assert [e["type"] for e in log[8]["events"]] == ["discard", "hand_end", "deal_revealed",
                                                    "game_end"]
    (end2,) = events_of(log[8], "hand_end")
    assert end2["hand_number"] == 2
    assert end2["scores"] == [0, 2 * C_COUNT_0]
    assert end2["totals"] == [2 * B_COUNT_1, 2 * C_COUNT_0]
    (over,) = events_of(log[8], "game_end")
    assert over["winners"] == [1]
    # no hidden card: seat 0's hand 2 never shows (only KD, discarded in hand 1) until the
    # hand is over, when its deal is revealed in the same entry as its end
    for entry in log:
        types = [e["type"] for e in entry["events"]]
        if "deal_revealed" in types:
            assert types.index("deal_revealed") == types.index("hand_end") + 1
    before_reveals = [{**entry, "events": [e for e in entry["events"]
                                           if e["type"] != "deal_revealed"]} for entry in log]
    public = set(strings(before_reveals))
    assert set(C_HANDS[0]) & public == {"KD"}
    for entry in log:
        for event in entry["events"]:
            assert "private" not in event
            if event["type"] == "draw" and event["source"] == "stock":
                assert "card" not in event
    assert client.get(game.path).get_json()["version"] == len(log)


def test_a_seat_sees_its_own_hidden_cards_only(client: FlaskClient) -> None:
    game = match_game(client)
    play_match(game)
    public = game.log()
    mine = [game.log(0), game.log(1)]
    drawn = {0: "KD", 2: "6H", 6: "8D"}  # index in the log -> the card seat 0/1 drew
    for index, card in drawn.items():
        owner = public[index]["seat"]
        (event,) = mine[owner][index]["events"]
        assert event == {"type": "draw", "seat": owner, "source": "stock", "card": card}
        assert mine[1 - owner][index] == public[index]
    for seat in (0, 1):
        (dealt,) = events_of(mine[seat][5], "dealt")
        assert sorted(dealt["hand"]) == sorted(C_HANDS[seat])
        assert "private" not in dealt
        other = set(C_HANDS[1 - seat]) - set(C_HANDS[seat])
        assert not other & set(strings(dealt))
        # everything else is the public entry
        for index, entry in enumerate(mine[seat]):
            if index not in drawn and index != 5:
                assert entry == public[index]


R51_HAND1 = ["9H", "TH", "JH", "QH", "KH", "KS", "KD", "KC", "2S", "3S", "4S", "5S", "7C"]
R51_HAND0 = ["AS", "3D", "5H", "6C", "7D", "8S", "9C", "JD", "QC", "2H", "4C", "6D", "8C", "TC"]


def test_r51_penalty_cards_are_redacted(client: FlaskClient) -> None:
    deal = arranged([R51_HAND0, R51_HAND1], None, ["8D", "4H", "5C"], deck=R51_DECK)
    game = Game(client, variant="rummy51", dealer=0, deals=[deal])
    game.ok(0, {"type": "discard", "card": "TC"})
    game.ok(1, {"type": "draw", "source": "stock"})
    game.ok(1, {"type": "meld", "melds": [{"cards": ["9H", "TH", "JH", "QH", "KH"]},
                                          {"cards": ["KS", "KD", "KC"]},
                                          {"cards": ["2S", "3S", "4S", "5S"]}]})
    game.ok(1, {"type": "discard", "card": "7C"})  # leaves one card, not announced
    public, seat0, seat1 = game.log(), game.log(0), game.log(1)
    assert [e["version"] for e in public] == [1, 2, 3, 4]
    (penalty,) = events_of(public[3], "penalty")
    assert penalty["seat"] == 1
    assert penalty["rule"] == "R51-LAST"
    assert penalty["count"] == 2
    assert "cards" not in penalty
    assert events_of(seat0[3], "penalty") == [penalty]
    (own,) = events_of(seat1[3], "penalty")
    assert own["cards"] == ["4H", "5C"]
    assert {k: v for k, v in own.items() if k != "cards"} == penalty
    for log in (public, seat0):
        assert not {"8D", "4H", "5C"} & set(strings(log))
    assert events_of(seat1[1], "draw")[0]["card"] == "8D"


def test_refused_moves_and_dry_runs_add_no_entry(client: FlaskClient) -> None:
    game = match_game(client)
    game.ok(0, {"type": "draw", "source": "stock"})
    before = game.log()
    resp = client.post(f"{game.path}/moves?dry_run=true", json={"type": "discard", "card": "KD"},
                       headers=auth(game.tokens[0]))
    assert resp.status_code == 200
    resp = client.post(f"{game.path}/moves", json={"type": "discard", "card": "AS"},
                       headers=auth(game.tokens[0]))
    assert resp.status_code == 422
    assert game.log() == before
    assert len(before) == 1


def test_after_n_returns_the_entries_from_version_n_plus_1(client: FlaskClient) -> None:
    game = match_game(client)
    play_match(game)
    full = game.log()
    for after in range(len(MATCH) + 2):
        resp = game.events(None, f"?after={after}")
        assert resp.status_code == 200, resp.get_data(as_text=True)
        body = resp.get_json()
        assert body["after"] == after
        assert body["entries"] == full[after:]
        assert [e["version"] for e in body["entries"]] == list(range(after + 1,
                                                                     len(MATCH) + 1))
        assert body["last_version"] == max(after, len(MATCH))
    resp = game.events(1, "?after=2&limit=3")
    assert resp.status_code == 200, resp.get_data(as_text=True)
    assert [e["version"] for e in resp.get_json()["entries"]] == [3, 4, 5]
    assert resp.get_json()["entries"][0]["events"][0]["card"] == "6H"


def test_events_errors(client: FlaskClient) -> None:
    game, other = match_game(client), match_game(client)
    assert_problem(game.events(None, "?after=-1"), 400, fields={"after"})
    assert_problem(game.events(None, "?after=x"), 400, fields={"after"})
    path = f"{game.path}/events"
    assert_problem(client.get(path, headers=auth(other.tokens[0])), 403)
    assert_problem(client.get(path, headers=auth("not-a-token")), 401)
    secret = game.tokens[1].rsplit(".", 1)[1]
    assert_problem(client.get(path, headers=auth(f"{game.id}.0.{secret}")), 401)
    assert_problem(client.get("/v1/games/no-such-game/events"), 404)
    assert_problem(client.get("/v1/games/no-such-game/events",
                              headers=auth(game.tokens[0])), 404)


# ---------------------------------------------------------------------------------------
# Server-sent events


@pytest.fixture
def sse_client(redis_url: str) -> FlaskClient:
    app = create_app(Settings(redis_url=redis_url, sse_max_seconds=2,
                              sse_heartbeat_seconds=0.5, sse_max_streams=1))
    return app.test_client()


def open_stream(client: FlaskClient, game: Game, seat: int | None = None,
                last: int | None = None) -> Stream:
    headers = dict(SSE)
    if seat is not None:
        headers.update(auth(game.tokens[seat]))
    if last is not None:
        headers["Last-Event-ID"] = str(last)
    return Stream(client.get(f"{game.path}/events", headers=headers, buffered=False))


def test_a_stream_replays_the_log_then_resumes_after_last_event_id(
        sse_client: FlaskClient) -> None:
    game = match_game(sse_client)
    for seat, move in MATCH[:4]:
        game.ok(seat, move)
    log = game.log()
    stream = open_stream(sse_client, game)
    try:
        frames = stream.moves_until(4)
    finally:
        stream.close()
    assert [f["id"] for f in frames] == ["1", "2", "3", "4"]
    assert all(f["event"] == "move" for f in frames)
    assert [f["data"] for f in frames] == log
    assert "card" not in frames[0]["data"]["events"][0]

    stream = open_stream(sse_client, game, last=2)
    try:
        frames = stream.moves_until(4)
    finally:
        stream.close()
    assert [f["id"] for f in frames] == ["3", "4"]
    assert [f["data"] for f in frames] == log[2:]


def test_a_seat_stream_shows_its_own_cards(sse_client: FlaskClient) -> None:
    game = match_game(sse_client)
    for seat, move in MATCH[:3]:
        game.ok(seat, move)
    stream = open_stream(sse_client, game, seat=1)
    try:
        frames = stream.moves_until(3)
    finally:
        stream.close()
    assert [f["data"] for f in frames] == game.log(1)
    assert "card" not in frames[0]["data"]["events"][0]
    assert frames[2]["data"]["events"][0]["card"] == "6H"


def test_new_moves_appear_on_an_open_stream(sse_client: FlaskClient) -> None:
    game = match_game(sse_client)
    game.ok(*MATCH[0])
    started = time.monotonic()
    stream = open_stream(sse_client, game)
    try:
        assert [f["id"] for f in stream.moves_until(1)] == ["1"]
        game.ok(*MATCH[1])
        game.ok(*MATCH[2])
        frames = stream.moves_until(3)
    finally:
        stream.close()
    assert time.monotonic() - started < 2.5
    assert [f["id"] for f in frames] == ["2", "3"]
    assert [f["data"] for f in frames] == game.log()[1:]


def test_an_idle_stream_sends_heartbeats_and_ends(sse_client: FlaskClient) -> None:
    game = match_game(sse_client)
    started = time.monotonic()
    stream = open_stream(sse_client, game)
    try:
        frames = list(stream.frames())
    finally:
        stream.close()
    elapsed = time.monotonic() - started
    assert stream.ended
    assert 1.9 <= elapsed < 3.5
    assert not [f for f in frames if f.get("event") == "move"]
    beats = [f for f in frames if f.get("comment") == "heartbeat"]
    assert 2 <= len(beats) <= 5


def test_a_stream_sending_events_sends_no_heartbeat(redis_url: str) -> None:
    """A heartbeat is for an idle stream: events 0.6 s apart on a stream whose heartbeat
    is 1.5 s keep it from ever being due (2.4 s of them would have had one)."""
    client = create_app(Settings(redis_url=redis_url, sse_max_seconds=4,
                                 sse_heartbeat_seconds=1.5)).test_client()
    game = match_game(client)
    stream = open_stream(client, game)
    seen: list[dict[str, Any]] = []
    try:
        for version, (seat, move) in enumerate(MATCH[:5], start=1):
            if version > 1:
                time.sleep(0.6)
            game.ok(seat, move)
            for frame in stream.frames():
                seen.append(frame)
                if frame.get("id") == str(version):
                    break
    finally:
        stream.close()
    assert [f["id"] for f in seen if f.get("event") == "move"] == ["1", "2", "3", "4", "5"]
    assert not [f for f in seen if f.get("comment") == "heartbeat"]


def test_one_stream_slot_a_second_stream_is_503(sse_client: FlaskClient) -> None:
    game = match_game(sse_client)
    game.ok(*MATCH[0])
    first = open_stream(sse_client, game)
    try:
        first.moves_until(1)
        resp = sse_client.get(f"{game.path}/events", headers=SSE, buffered=False)
        problem = assert_problem(resp, 503)
        assert problem["detail"]
        assert resp.headers["Retry-After"].isdigit()
        # ordinary requests are still served
        assert game.log() and sse_client.get(game.path).status_code == 200
    finally:
        first.close()
    # the slot is free again once the first stream is closed
    again = open_stream(sse_client, game)
    try:
        assert [f["id"] for f in again.moves_until(1)] == ["1"]
    finally:
        again.close()


def test_a_stream_never_read_gives_its_slot_back(sse_client: FlaskClient) -> None:
    """A HEAD of the stream, and a stream closed before its first byte, start no body; the
    one stream slot is free again after each."""
    game = match_game(sse_client)
    game.ok(*MATCH[0])
    for _ in range(3):
        head = sse_client.head(f"{game.path}/events", headers=SSE)
        assert head.status_code == 200 and head.data == b""
        head.close()  # as the server closes every answer it has sent
        sse_client.get(f"{game.path}/events", headers=SSE, buffered=False).close()
    stream = open_stream(sse_client, game)
    try:
        assert [f["id"] for f in stream.moves_until(1)] == ["1"]
    finally:
        stream.close()


def test_stream_auth_errors_come_before_the_stream(sse_client: FlaskClient) -> None:
    game, other = match_game(sse_client), match_game(sse_client)
    assert_problem(sse_client.get(f"{game.path}/events",
                                  headers={**SSE, **auth(other.tokens[0])}), 403)
    assert_problem(sse_client.get(f"{game.path}/events",
                                  headers={**SSE, **auth("not-a-token")}), 401)
    assert_problem(sse_client.get("/v1/games/no-such-game/events",
                                  headers={**SSE, **auth(game.tokens[0])}), 404)
    # none of them took the only stream slot
    stream = open_stream(sse_client, game)
    try:
        first = next(stream.frames())
        assert "retry" in first or "comment" in first
    finally:
        stream.close()


def test_a_public_stream_of_an_unknown_game_is_404(sse_client: FlaskClient) -> None:
    """API.md: 404 no such game (as for the JSON page), not a 200 stream."""
    resp = sse_client.get("/v1/games/no-such-game/events", headers=SSE)
    assert_problem(resp, 404)


@pytest.mark.skipif(not hasattr(socket, "TCP_USER_TIMEOUT"), reason="Linux's option")
def test_a_streams_connection_is_bounded_and_the_bound_lifted() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server, \
            socket.create_connection(server.getsockname()) as sock:
        def bound() -> int:
            return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT)

        assert bound() == 0  # the system's default
        bound_unacknowledged(sock, 30)
        assert bound() == 30_000
        bound_unacknowledged(sock, 0)
        assert bound() == 0
    bound_unacknowledged(None, 30)  # no socket (the test client): nothing to do
    bound_unacknowledged(sock, 30)  # closed meanwhile: nothing to do
    left, right = socket.socketpair()  # not TCP: left alone
    with left, right:
        bound_unacknowledged(left, 30)


# ---------------------------------------------------------------------------------------
# Pages of a long log


def long_game(client: FlaskClient, moves: int) -> str:
    """A basic game (that never ends) with ``moves`` moves; its id."""
    transport = FlaskTransport(client)
    game = create_game(transport, players=2)
    rng = Random(5)
    for _ in range(moves):
        token = game.turn_token()
        if game.view.get("seat") != game.view["turn"]["seat"]:
            game.view = transport.request("GET", f"{game.path}/me", token=token).body
        reply = transport.request("POST", f"{game.path}/moves", token=token,
                                  body=next_move(game.view, rng))
        assert reply.status == 200, reply.raw[:300]
        game.view = reply.body["game"]
    return game.game_id


def test_a_long_log_comes_in_pages(client: FlaskClient) -> None:
    game_id = long_game(client, 250)
    path = f"/v1/games/{game_id}/events"
    first = client.get(path).get_json()
    assert [e["version"] for e in first["entries"]] == list(range(1, EVENTS_PAGE + 1))
    assert (first["last_version"], first["has_more"]) == (EVENTS_PAGE, True)
    seen, after, pages = [], 0, 0
    while True:
        page = client.get(f"{path}?after={after}&limit=70").get_json()
        seen += [e["version"] for e in page["entries"]]
        after, pages = page["last_version"], pages + 1
        if not page["has_more"]:
            break
    assert seen == list(range(1, 251)) and pages == 4
    everything = client.get(f"{path}?limit={EVENTS_PAGE_MAX}").get_json()
    assert len(everything["entries"]) == 250 and not everything["has_more"]
    exact = client.get(f"{path}?after=150&limit=100").get_json()
    assert (len(exact["entries"]), exact["has_more"]) == (100, False)
    end = client.get(f"{path}?after=250").get_json()
    assert (end["entries"], end["last_version"], end["has_more"]) == ([], 250, False)
    for limit in (EVENTS_PAGE_MAX + 1, 0, 10**6):
        body = assert_problem(client.get(f"{path}?limit={limit}"), 400, fields={"limit"})
        assert str(EVENTS_PAGE_MAX) in json.dumps(body) or limit == 0


def test_a_stream_sends_a_long_log_whole(client: FlaskClient, sse_client: FlaskClient
                                         ) -> None:
    game_id = long_game(client, 250)  # (the stream's app has rate limits)
    resp = sse_client.get(f"/v1/games/{game_id}/events", headers=SSE, buffered=False)
    stream = Stream(resp)
    try:
        frames = stream.moves_until(250)
    finally:
        stream.close()
    assert [int(f["id"]) for f in frames] == list(range(1, 251))


def test_a_match_s_finished_hands_are_archived_and_still_read_and_verified(
        redis_url: str) -> None:
    """When a hand ends the log so far moves into one compressed archive chunk (memory per
    game stays small over a long match): the events read back every version in order, on
    any worker, in pages across the archive's edges, and the match still verifies."""
    import redis

    from tests.support.basic_game import Game
    from tests.support.http_player import HttpPlayer

    apps = [create_app(Settings(redis_url=redis_url, rate_limits=(), create_rate_limits=(),
                                verify_rate_limits=())) for _ in range(2)]
    client = apps[0].test_client()
    game = Game(client, rules={"match_end": {"deals": 3}})
    player = HttpPlayer(FlaskTransport(client), game.id, game.tokens, max_moves=1500,
                        time_limit=40.0)
    final = player.play_match()
    assert final["status"] == "finished"
    store = apps[0].extensions["referee"].store
    keys = store.keys(game.id)
    admin = redis.Redis.from_url(redis_url)
    try:
        assert admin.llen(keys.archive) == 3  # a chunk per hand
        assert admin.llen(keys.log) == 0  # the last move ended the last hand
        assert int(admin.hget(keys.game, "o") or 0) == final["version"]
    finally:
        admin.close()
    other = apps[1].test_client()
    versions: list[int] = []
    after = 0
    while True:
        page = other.get(f"/v1/games/{game.id}/events?after={after}&limit=7").get_json()
        if not page["entries"]:
            break
        versions += [e["version"] for e in page["entries"]]
        after = versions[-1]
    assert versions == list(range(1, final["version"] + 1))
    report = other.get(f"/v1/games/{game.id}/verify").get_json()
    assert report["verified"], report
