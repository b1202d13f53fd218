"""Live tables (docs/api.md, "Live tables"): what a move's answer and a log entry tell,
stream tickets, long polls (``Prefer: wait=N``), the limits on open streams and waits, and
watchers woken through Redis pub/sub, also by a commit made through another app (another
server sharing the Redis). Against a real redis-server, through Flask test clients; the
served behaviour (gevent, a Redis Cluster, SIGTERM) is tests/system/test_live_served.py's.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from random import Random
from typing import Any

import orjson
import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from service.api import streams
from service.api.streams import HEARTBEATS, DirectWriter, announced, unsent
from service.app import create_app
from service.config import Settings
from service.live import Announced, Hub, Watch
from service.store import GameStore
from service.store.keys import ticket_key
from tests.support.deals import auth
from tests.support.hidden_cards import card_strings
from tests.support.http_player import FlaskTransport
from tests.support.problems import assert_problem
from tests.support.reliability import Game, create_game, next_move
from tests.support.streams import SSE, Stream, chunks, open_stream


def _app(redis_url: str, **settings: Any) -> Flask:
    return create_app(Settings(redis_url=redis_url, sse_max_seconds=5,
                               sse_heartbeat_seconds=0.5, **settings))


@pytest.fixture
def live_app(redis_url: str) -> Flask:
    return _app(redis_url)


@pytest.fixture
def live(live_app: Flask) -> FlaskClient:
    return live_app.test_client()


def _game(client: FlaskClient, players: int = 2) -> Game:
    return create_game(FlaskTransport(client), players)


def _view(client: FlaskClient, game: Game, seat: int) -> dict[str, Any]:
    resp = client.get(f"/v1/games/{game.game_id}/me", headers=auth(game.tokens[seat]))
    assert resp.status_code == 200, resp.get_data(as_text=True)
    body: dict[str, Any] = resp.get_json()
    return body


def _move(client: FlaskClient, game: Game, query: str = "") -> dict[str, Any]:
    """The next move of the seat whose turn it is."""
    seat = _view(client, game, 0)["turn"]["seat"]
    body = next_move(_view(client, game, seat), Random(7))
    resp = client.post(f"/v1/games/{game.game_id}/moves{query}", json=body,
                       headers=auth(game.tokens[seat]))
    assert resp.status_code == 200, resp.get_data(as_text=True)
    answer: dict[str, Any] = resp.get_json()
    return answer


def _ticket(client: FlaskClient, game: Game, seat: int) -> str:
    resp = client.post(f"/v1/games/{game.game_id}/stream-tickets",
                       headers=auth(game.tokens[seat]))
    assert resp.status_code == 201, resp.get_data(as_text=True)
    assert resp.headers["Cache-Control"] == "no-store"
    body = resp.get_json()
    assert body["expires_in"] == 60
    ticket: str = body["ticket"]
    return ticket


# ---------------------------------------------------------------------------------------
# What a move and an entry tell


def test_a_move_answer_tells_version_status_and_turn(live: FlaskClient) -> None:
    game = _game(live)
    answer = _move(live, game)
    assert answer["version"] == answer["game"]["version"] == 1
    assert answer["status"] == "playing"
    assert answer["turn"] == answer["game"]["turn"] == {"seat": game.view["turn"]["seat"],
                                                        "phase": "play"}
    assert "legal_moves" not in answer
    entry = live.get(f"/v1/games/{game.game_id}/events").get_json()["entries"][0]
    assert {k: entry[k] for k in ("version", "status", "turn")} == {
        k: answer[k] for k in ("version", "status", "turn")}


def test_include_legal_moves_lists_the_movers_next_moves(live: FlaskClient) -> None:
    game = _game(live)
    answer = _move(live, game, "?include=legal_moves")
    legal, mover = answer["legal_moves"], game.view["turn"]["seat"]
    assert (legal["seat"], legal["version"], legal["your_turn"]) == (mover, 1, True)
    assert {m["type"] for m in legal["moves"]} >= {"discard"}
    assert legal == live.get(f"/v1/games/{game.game_id}/legal-moves",
                             headers=auth(game.tokens[mover])).get_json()
    before = live.get(f"/v1/games/{game.game_id}").get_json()["version"]
    resp = live.post(f"/v1/games/{game.game_id}/moves?include=everything",
                     json={"type": "discard", "card": "2C"}, headers=auth(game.tokens[mover]))
    assert_problem(resp, 400)
    assert live.get(f"/v1/games/{game.game_id}").get_json()["version"] == before


# ---------------------------------------------------------------------------------------
# Stream tickets


def test_a_ticket_streams_its_seats_own_view_once(live: FlaskClient) -> None:
    game = _game(live)
    mover = game.view["turn"]["seat"]
    path = f"/v1/games/{game.game_id}/events?ticket={_ticket(live, game, mover)}"
    stream = open_stream(live, path)
    frames = stream.frames()
    assert next(frames).get("retry") == "1000"
    _move(live, game)  # the ticket's seat draws from the stock
    draw = next(f for f in frames if f.get("event") == "move")["data"]
    assert draw["version"] == 1
    card = draw["events"][0]["card"]  # the seat's own view: its drawn card
    assert card in _view(live, game, mover)["hand"]
    stream.close()
    assert_problem(live.get(path, headers=SSE), 401)  # used once already


def test_another_seats_ticket_never_shows_the_drawn_card(live: FlaskClient) -> None:
    game = _game(live)
    mover = game.view["turn"]["seat"]
    ticket = _ticket(live, game, 1 - mover)
    stream = open_stream(live, f"/v1/games/{game.game_id}/events?ticket={ticket}")
    _move(live, game)  # the other seat draws
    draw = stream.moves_until(1)[0]["data"]["events"][0]
    stream.close()
    assert draw == {"type": "draw", "seat": mover, "source": "stock"}


def test_bad_tickets_are_refused_before_any_stream(live_app: Flask, live: FlaskClient) -> None:
    game, other = _game(live), _game(live)
    events = f"/v1/games/{game.game_id}/events"
    for ticket in ["", "short", "x" * 33, "a" * 31 + "!", "A" * 32]:  # malformed, unknown
        assert_problem(live.get(f"{events}?ticket={ticket}", headers=SSE), 401)
    assert_problem(live.get(f"{events}?ticket={_ticket(live, other, 0)}", headers=SSE), 403)
    expired = _ticket(live, game, 0)
    store: GameStore = live_app.extensions["referee"].store
    store.client.delete(ticket_key(expired))  # as Redis does after 60 s
    assert_problem(live.get(f"{events}?ticket={expired}", headers=SSE), 401)
    kept = _ticket(live, game, 0)
    assert 0 < int(store.client.ttl(ticket_key(kept))) <= 60
    assert_problem(live.get(f"{events}?ticket={kept}"), 400)  # a ticket opens streams only
    assert_problem(live.get(f"/v1/games/nosuchgame/events?ticket={kept}", headers=SSE), 404)
    tickets = f"/v1/games/{game.game_id}/stream-tickets"
    assert_problem(live.post(tickets), 401)
    assert_problem(live.post(tickets, headers=auth(other.tokens[0])), 403)
    assert_problem(live.post("/v1/games/nosuchgame/stream-tickets",
                             headers=auth(game.tokens[0])), 404)


# ---------------------------------------------------------------------------------------
# A seat's stream ends once its token does (a rotated token, a seat opened again)

PATIENT = 30
"""``sse_max_seconds`` of the apps below: a stream that ends well before it was ended by
its token, not by its age."""


def _patient(redis_url: str) -> FlaskClient:
    return create_app(Settings(redis_url=redis_url, sse_max_seconds=PATIENT,
                               sse_heartbeat_seconds=0.5, join_rate_limits=())).test_client()


def _seat_stream(client: FlaskClient, game_id: str, token: str, how: str) -> Stream:
    """A seat's event stream opened with its token (``how`` ``"token"``) or with a stream
    ticket issued with it (``"ticket"``)."""
    events = f"/v1/games/{game_id}/events"
    if how == "token":
        return open_stream(client, events, **auth(token))
    resp = client.post(f"/v1/games/{game_id}/stream-tickets", headers=auth(token))
    assert resp.status_code == 201, resp.get_data(as_text=True)
    return open_stream(client, f"{events}?ticket={resp.get_json()['ticket']}")


def _rest(stream: Stream) -> tuple[list[dict[str, Any]], float]:
    """Every frame with an event the stream still sends (until it ends), and how long it
    took to end."""
    started = time.monotonic()
    frames = [f for f in stream.frames() if "event" in f]
    took = time.monotonic() - started
    assert stream.ended
    stream.close()
    return frames, took


@pytest.mark.parametrize("how", ["token", "ticket"])
def test_a_stream_of_a_reopened_seat_ends_before_the_next_occupant_is_dealt(
        redis_url: str, how: str) -> None:
    """Bo joins, opens his stream, and is removed by the host; Dee takes the other open
    seat, Cy takes Bo's and the game deals. Bo's stream, whose seat's view of the
    ``dealt`` entry is Cy's hand, ends at the reopening: it sends none of the entries after
    it, and reconnecting is refused."""
    client = _patient(redis_url)
    created = client.post("/v1/games", json={"variant": "basic",
                                             "players": ["Ana", None, None]})
    assert created.status_code == 201, created.get_data(as_text=True)
    gid, host, code = (created.get_json()[k] for k in ("game_id", "host_token", "join_code"))
    bo = client.post("/v1/join", json={"code": code, "name": "Bo"}).get_json()
    assert bo["seat"] == 1 and bo["game"]["status"] == "waiting"
    stream = _seat_stream(client, gid, bo["token"], how)
    assert [int(f["id"]) for f in stream.moves_until(1)] == [1]  # his own join
    opened = client.post(f"/v1/games/{gid}/seats/1/open", headers=auth(host))
    assert opened.status_code == 200, opened.get_data(as_text=True)
    dee = client.post("/v1/join", json={"code": code, "name": "Dee", "seat": 2})
    assert dee.status_code == 201, dee.get_data(as_text=True)
    cy = client.post("/v1/join", json={"code": code, "name": "Cy", "seat": 1})
    assert cy.status_code == 201, cy.get_data(as_text=True)
    hand = cy.get_json()["game"]["hand"]
    assert cy.get_json()["game"]["status"] == "playing" and len(hand) == 7
    frames, took = _rest(stream)
    assert frames == [], "the removed player's stream went on"
    assert not set(card_strings(frames)) & set(hand)
    assert took < PATIENT / 3
    refused = client.get(f"/v1/games/{gid}/events",
                         headers={**SSE, **auth(bo["token"]), "Last-Event-ID": "1"})
    assert_problem(refused, 401)
    # Cy's own stream, from the start, shows Cy's hand
    mine = _seat_stream(client, gid, cy.get_json()["token"], how)
    dealt = [e for f in mine.moves_until(4) for e in f["data"]["events"]
             if e["type"] == "dealt"]
    mine.close()
    assert sorted(dealt[0]["hand"]) == sorted(hand)


@pytest.mark.parametrize("how", ["token", "ticket"])
def test_a_rotated_token_ends_its_streams_and_voids_its_tickets(
        redis_url: str, how: str) -> None:
    """A seat rotates a leaked token: a stream opened with the old token (or with a ticket
    issued with it) ends before the next entry, a ticket issued with it and not yet used
    is refused, and another seat's stream carries on."""
    client = _patient(redis_url)
    game = _game(client)
    mover = game.view["turn"]["seat"]
    old = game.tokens[mover]
    leaked = _seat_stream(client, game.game_id, old, how)
    other = _seat_stream(client, game.game_id, game.tokens[1 - mover], how)
    spare = client.post(f"/v1/games/{game.game_id}/stream-tickets", headers=auth(old))
    assert spare.status_code == 201
    _move(client, game)  # the mover draws: version 1, seen by the old token's stream
    assert [f["data"]["version"] for f in leaked.moves_until(1)] == [1]
    resp = client.post(f"/v1/games/{game.game_id}/me/token", headers=auth(old))
    assert resp.status_code == 200, resp.get_data(as_text=True)
    game.tokens[mover] = new = resp.get_json()["token"]  # version 2
    _move(client, game)  # the mover discards (version 3): not for the old token's eyes
    _move(client, game)  # the other seat draws (version 4)
    frames, took = _rest(leaked)
    assert frames == [] and took < PATIENT / 3
    ticket = spare.get_json()["ticket"]
    assert_problem(client.get(f"/v1/games/{game.game_id}/events?ticket={ticket}",
                              headers=SSE), 401)
    assert_problem(client.get(f"/v1/games/{game.game_id}/events",
                              headers={**SSE, **auth(old), "Last-Event-ID": "1"}), 401)
    assert_problem(client.post(f"/v1/games/{game.game_id}/stream-tickets",
                               headers=auth(old)), 401)
    seen = other.moves_until(4)
    other.close()
    assert [f["data"]["version"] for f in seen] == [1, 2, 3, 4]
    assert seen[1]["data"]["events"] == [{"type": "token_rotated", "seat": mover}]
    fresh = _seat_stream(client, game.game_id, new, how)
    drawn = fresh.moves_until(4)[0]["data"]["events"][0]
    fresh.close()
    assert drawn["type"] == "draw" and drawn["card"] in card_strings(drawn)


# ---------------------------------------------------------------------------------------
# Long polls


def _later(action: Any) -> threading.Thread:
    """``action`` in a thread, after the request under test has begun waiting (the wait
    is long: a missed wake turns the expected 200 into a 304 at the end)."""
    thread = threading.Thread(target=lambda: (threading.Event().wait(0.3), action()))
    thread.start()
    return thread


def test_a_long_poll_answers_once_the_version_changes(live_app: Flask) -> None:
    client, mover = live_app.test_client(), live_app.test_client()
    game = _game(client)
    path = f"/v1/games/{game.game_id}"
    thread = _later(lambda: _move(mover, game))
    resp = client.get(path, headers={"If-None-Match": '"0"', "Prefer": "wait=30"})
    thread.join()
    assert resp.status_code == 200, resp.get_data(as_text=True)
    assert resp.get_json()["version"] == 1
    assert resp.headers["ETag"] == '"1"'
    assert resp.headers["Preference-Applied"] == "wait=30"


def test_a_seats_long_poll_answers_with_its_hand(live_app: Flask) -> None:
    client, mover = live_app.test_client(), live_app.test_client()
    game = _game(client)
    thread = _later(lambda: _move(mover, game))
    waiting = 1 - game.view["turn"]["seat"]
    resp = client.get(f"/v1/games/{game.game_id}/me", headers={
        **auth(game.tokens[waiting]), "If-None-Match": '"0"',
        "Prefer": "respond-async, wait=30"})
    thread.join()
    assert resp.status_code == 200, resp.get_data(as_text=True)
    body = resp.get_json()
    assert (body["version"], body["seat"], len(body["hand"])) == (1, waiting, 10)


def test_a_long_poll_with_no_move_is_304_after_the_wait(live: FlaskClient) -> None:
    game = _game(live)
    resp = live.get(f"/v1/games/{game.game_id}",
                    headers={"If-None-Match": '"0"', "Prefer": "wait=1"})
    assert resp.status_code == 304
    assert resp.headers["Preference-Applied"] == "wait=1"
    assert resp.get_data() == b""
    stale = live.get(f"/v1/games/{game.game_id}",  # a version the client does not hold
                     headers={"If-None-Match": '"7"', "Prefer": "wait=30"})
    assert stale.status_code == 200
    assert stale.headers["Preference-Applied"] == "wait=30"


def test_bad_waits_are_400_and_unknown_games_404(live: FlaskClient) -> None:
    game = _game(live)
    for prefer in ["wait=61", "wait=abc", "wait=-1", "wait=", "wait=1.5", "wait=99999"]:
        for path, headers in [(f"/v1/games/{game.game_id}", {}),
                              (f"/v1/games/{game.game_id}/me", auth(game.tokens[0]))]:
            resp = live.get(path, headers={**headers, "Prefer": prefer,
                                           "If-None-Match": '"0"'})
            assert_problem(resp, 400)
    resp = live.get("/v1/games/nosuchgame", headers={"Prefer": "wait=5"})
    assert_problem(resp, 404)
    assert live.get(f"/v1/games/{game.game_id}", headers={"Prefer": "wait=0"}).status_code \
        == 200


# ---------------------------------------------------------------------------------------
# Limits, stopping, and servers sharing a Redis


def test_streams_per_seat_and_per_address_are_limited(redis_url: str) -> None:
    client = _app(redis_url, sse_per_seat=1, sse_per_address=2, sse_max_streams=9).test_client()
    game = _game(client)
    events = f"/v1/games/{game.game_id}/events"
    first = open_stream(client, events, **auth(game.tokens[0]))
    refused = client.get(events, headers={**SSE, **auth(game.tokens[0])})
    assert_problem(refused, 429, code="TOO_MANY_STREAMS")
    assert refused.headers["Retry-After"]
    second = open_stream(client, events, **auth(game.tokens[1]))  # another seat
    public = client.get(events, headers=SSE)  # a third from this address
    assert_problem(public, 429, code="TOO_MANY_STREAMS")
    poll = client.get(f"/v1/games/{game.game_id}",
                      headers={"If-None-Match": '"0"', "Prefer": "wait=1"})
    assert_problem(poll, 429, code="TOO_MANY_STREAMS")
    first.close()
    second.close()
    open_stream(client, events, **auth(game.tokens[0])).close()  # the slots were given back


def test_a_stopping_hub_ends_streams_and_waits(redis_url: str) -> None:
    app = _app(redis_url)
    client = app.test_client()
    game = _game(client)
    stream = open_stream(client, f"/v1/games/{game.game_id}/events")
    frames = stream.frames()
    next(frames)
    app.extensions["live"].stop()
    assert [f for f in frames if "event" in f] == []
    assert stream.ended
    resp = client.get(f"/v1/games/{game.game_id}",
                      headers={"If-None-Match": '"0"', "Prefer": "wait=60"})
    assert resp.status_code == 304


def test_a_move_through_one_app_wakes_a_stream_of_another(redis_url: str) -> None:
    """Two apps (two servers' workers) sharing one Redis: a commit through one wakes the
    other's watcher through pub/sub."""
    watching, moving = _app(redis_url).test_client(), _app(redis_url).test_client()
    game = _game(moving)
    stream = open_stream(watching, f"/v1/games/{game.game_id}/events")
    next(stream.frames())
    _move(moving, game)
    _move(moving, game)
    assert [int(f["id"]) for f in stream.moves_until(2)] == [1, 2]
    stream.close()


def test_a_hub_wakes_only_its_games_watchers(redis_url: str, live_app: Flask) -> None:
    hub: Hub = live_app.extensions["live"]
    game, other = _game(live_app.test_client()), _game(live_app.test_client())
    with hub.watch(game.game_id) as watched, hub.watch(other.game_id) as idle:
        assert watched.wait(10) and idle.wait(10)  # woken as each game's subscription holds
        assert hub.subscribed.is_set()
        _move(live_app.test_client(), game)
        assert watched.wait(30)
        assert [version for version, _, _ in watched.take()] == [1]
        assert not idle.wait(0.2)
    assert hub.watchers == 0


def _subscribers(redis_url: str, channel: str) -> int:
    with contextlib.closing(redis.Redis.from_url(redis_url)) as client:
        return int(dict(client.pubsub_numsub(channel))[channel.encode()])


def _until(check: Callable[[], bool], seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_hub_subscribes_to_the_games_watched_here_and_to_no_other(
        redis_url: str, live_app: Flask) -> None:
    """Redis sends a worker the commits of the games it watches only: one subscription a
    game however many watch it here, from its first watcher's coming to its last one's
    going; a commit of another game is published to nobody."""
    hub: Hub = live_app.extensions["live"]
    hub.linger_seconds = 0.0
    store: GameStore = live_app.extensions["referee"].store
    game, other = _game(live_app.test_client()), _game(live_app.test_client())
    channel, other_channel = store.moved_channel(game.game_id), store.moved_channel(
        other.game_id)
    assert channel != other_channel and game.game_id in channel
    with hub.watch(game.game_id) as first, hub.watch(game.game_id) as second:
        # the subscription holds (a second watcher that came after it is not woken for it)
        assert first.wait(10)
        assert _subscribers(redis_url, channel) == 1 and hub.games == 1
        assert _subscribers(redis_url, other_channel) == 0
        with hub.watch(game.game_id) as third:
            assert not third.wait(0.2)  # nothing to wait for: the game was subscribed to
        _move(live_app.test_client(), other)  # announced to nobody
        _move(live_app.test_client(), game)
        assert _announced(first) == _announced(second) == [1]
    assert hub.games == 0
    assert _until(lambda: _subscribers(redis_url, channel) == 0)


def test_a_hub_stays_subscribed_a_little_after_a_games_last_watcher_goes(
        redis_url: str, live_app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long poll's client comes back at once: its game is still subscribed to, so the
    new watcher is not woken to read again for a subscription taking effect. The
    subscription ends once its time is up, or when more games linger than the bound."""
    hub: Hub = live_app.extensions["live"]
    hub.linger_seconds = 30.0  # however slow the machine, it comes back in time
    store: GameStore = live_app.extensions["referee"].store
    game, other, third = (_game(live_app.test_client()) for _ in range(3))
    channel = store.moved_channel(game.game_id)
    with hub.watch(game.game_id) as watch:
        assert watch.wait(10)
    assert hub.games == 1 and _subscribers(redis_url, channel) == 1
    with hub.watch(game.game_id) as again:
        assert not again.wait(0.2)  # no subscription to wait for
        _move(live_app.test_client(), game)
        assert _announced(again) == [1]
        hub.linger_seconds = 0.2  # for this watcher's going
    time.sleep(0.3)
    with hub.watch(other.game_id) as watch:  # the next coming or going ends what is due
        assert _until(lambda: _subscribers(redis_url, channel) == 0)
        assert hub.games == 1
        assert watch.wait(10)
    monkeypatch.setattr("service.live.MAX_LINGERING", 1)
    hub.linger_seconds = 60.0
    with hub.watch(third.game_id) as watch:
        assert watch.wait(10)
    assert hub.games == 1  # the oldest lingering game went when the bound was passed
    assert _until(lambda: _subscribers(redis_url, store.moved_channel(other.game_id)) == 0)
    assert _subscribers(redis_url, store.moved_channel(third.game_id)) == 1


def test_a_game_id_that_names_no_channel_is_refused_and_leaves_nothing(
        live_app: Flask) -> None:
    hub: Hub = live_app.extensions["live"]
    for _ in range(2):  # and again: nothing was left of the first
        with pytest.raises(ValueError), hub.watch("a{b}"):
            pass
    assert (hub.games, hub.watchers) == (0, 0)
    game = _game(live_app.test_client())
    with hub.watch(game.game_id) as watch:
        assert watch.wait(10)
        assert (hub.games, hub.watchers) == (1, 1)


def test_a_commit_announces_itself_on_its_games_channel(redis_url: str, live_app: Flask
                                                        ) -> None:
    store: GameStore = live_app.extensions["referee"].store
    game = _game(live_app.test_client())
    with contextlib.closing(redis.Redis.from_url(redis_url).pubsub()) as pubsub:
        pubsub.subscribe(store.moved_channel(game.game_id))
        assert pubsub.get_message(timeout=10)["type"] == "subscribe"
        _move(live_app.test_client(), game)
        message = pubsub.get_message(timeout=10)
    assert message is not None and message["type"] == "message"
    game_id, version, record = message["data"].split(b" ", 2)
    assert (game_id.decode(), int(version)) == (game.game_id, 1)
    assert orjson.loads(record)["version"] == 1


def test_a_hub_that_loses_its_connection_wakes_its_watchers_and_subscribes_again(
        redis_url: str, live_app: Flask) -> None:
    hub: Hub = live_app.extensions["live"]
    store: GameStore = live_app.extensions["referee"].store
    game, later = _game(live_app.test_client()), _game(live_app.test_client())
    with hub.watch(game.game_id) as watch:
        assert watch.wait(10)
        with contextlib.closing(redis.Redis.from_url(redis_url)) as client:
            assert client.client_kill_filter(_type="pubsub") >= 1
        assert watch.wait(10)  # to read what it may have missed
        with hub.watch(later.game_id) as later_watch:  # watched while it is away, perhaps
            assert _until(lambda: hub.subscribed.is_set()
                          and _subscribers(redis_url, store.moved_channel(game.game_id)) == 1
                          and _subscribers(redis_url, store.moved_channel(later.game_id)) == 1)
            _move(live_app.test_client(), game)
            _move(live_app.test_client(), later)
            assert _announced(watch) == _announced(later_watch) == [1]


def test_a_hub_whose_subscribing_fails_connects_again_and_subscribes(
        redis_url: str, live_app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    """A watcher's SUBSCRIBE that cannot be sent closes the connection: the hub's reading
    thread meets it, connects again and subscribes to every game watched."""
    hub: Hub = live_app.extensions["live"]
    store: GameStore = live_app.extensions["referee"].store
    first, game = _game(live_app.test_client()), _game(live_app.test_client())
    with hub.watch(first.game_id) as watch:
        assert watch.wait(10)
        connection: Any = hub._connection
        assert connection is not None
        sent = connection.send_command

        def failing(*args: Any, **kwargs: Any) -> None:
            monkeypatch.setattr(connection, "send_command", sent)  # once
            raise redis.ConnectionError("the socket failed")

        monkeypatch.setattr(connection, "send_command", failing)
        with hub.watch(game.game_id) as later:
            assert _until(lambda: _subscribers(redis_url, store.moved_channel(game.game_id))
                          == 1)
            _move(live_app.test_client(), game)
            assert _announced(later) == [1]


def _announced(watch: Watch, seconds: float = 30) -> list[int]:
    """The versions announced to ``watch`` until one is (the wakes without one, of a
    subscription taking effect, passed over)."""
    deadline = time.monotonic() + seconds
    while watch.wait(deadline - time.monotonic()):
        versions = [version for version, _, _ in watch.take()]
        if versions:
            return versions
    return []


def test_unsent_counts_what_the_client_has_not_read() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        writer = socket.create_connection(server.getsockname())
        reader, _ = server.accept()
        with writer, reader:
            assert unsent(writer) == 0
            writer.setblocking(False)
            sent = 0
            with contextlib.suppress(BlockingIOError):
                while sent < 64 << 20:
                    sent += writer.send(b"x" * 65536)
            assert 0 < unsent(writer) <= sent  # what the reader's window did not take
    assert unsent(None) == 0


def test_announced_entries_are_sent_only_when_they_follow_on() -> None:
    def record(version: int) -> dict[str, Any]:
        return {"version": version, "seat": 0, "move": None,
                "events": [{"type": "discard", "seat": 0, "card": "KD"}]}

    def handed(*versions: int) -> list[Announced]:
        return [(v, record(v), {}) for v in versions]

    def sent(version: int) -> tuple[dict[str, Any], bytes]:
        return record(version), (f"id: {version}\nevent: move\ndata: ".encode()
                                 + orjson.dumps(record(version)) + b"\n\n")

    assert announced([], 4, None) is None  # woken without an entry: read Redis
    assert announced(handed(3, 4), 4, 1) == []  # sent already
    assert announced(handed(5, 6), 4, 1) == [sent(5), sent(6)]
    assert announced(handed(6), 4, None) is None  # 5 was dropped: read Redis
    assert announced(handed(5, 7), 4, None) is None


def test_an_announced_entry_is_framed_once_for_each_viewer() -> None:
    """The streams of one process share what the first of them made of an entry for its
    viewer; another viewer's entry is made for it (its own redaction)."""
    record = {"version": 5, "seat": 0, "move": {"type": "draw", "source": "stock"},
              "events": [{"type": "draw", "seat": 0, "source": "stock",
                          "private": {"0": {"card": "KD"}}}]}
    shared: dict[Any, Any] = {}
    first = announced([(5, record, shared)], 4, None)
    again = announced([(5, record, shared)], 4, None)
    seat = announced([(5, record, shared)], 4, 0)
    assert first is not None and again is not None and seat is not None
    assert again[0][1] is first[0][1]  # the same frame, made once
    assert b'"KD"' not in first[0][1] and b'"KD"' in seat[0][1]
    assert set(shared) == {None, 0}
    assert record["events"][0]["private"] == {"0": {"card": "KD"}}  # the hub's, unchanged


class _WokenAsItTimesOut(threading.Event):
    """An event whose timed wait is woken just as its time runs out: the wake lands (the
    flag set) but the wait reports the timeout, as ``threading.Event.wait`` does when the
    timeout and a ``set`` meet (a heartbeat's timer and a commit's wake, under gevent in
    the same turn of its loop)."""

    racing = True

    def wait(self, timeout: float | None = None) -> bool:
        if not self.racing:
            return super().wait(timeout)
        self.racing = False
        self.set()
        return False


def test_a_wake_that_meets_the_waits_timeout_is_not_lost() -> None:
    """A stream waits with its heartbeat's timeout. A commit's wake that came as that
    timeout ran out was cleared with it: the stream slept on with the entry in its watch
    until the game's next commit (the watchers bench saw 3-4.5 s) or for good, in a game
    whose next mover waits for that very event."""
    watch = Watch("g")
    watch._event = _WokenAsItTimesOut()  # type: ignore[misc]
    watch.wake((1, {"version": 1}, {}))
    assert watch.wait(20.0) is True  # told: it takes the entry now
    assert [version for version, _, _ in watch.take()] == [1]
    assert watch.wait(0.0) is False  # that wake used up, as any other


def _draw_record(version: int, move: Any = "draw") -> dict[str, Any]:
    """A log record of a seat 0 draw, the card drawn seen by seat 0 alone (``move`` None: a
    record with no move, such as a join, which may change the seat's tokens)."""
    return {"version": version, "seat": 0,
            "move": None if move is None else {"type": "draw", "source": "stock"},
            "events": [{"type": "draw", "seat": 0, "source": "stock",
                        "private": {"0": {"card": "KD"}}}]}


@contextlib.contextmanager
def _connected() -> Iterator[tuple[socket.socket, socket.socket]]:
    """(the server's end, the client's end) of a TCP connection on the loopback."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        client = socket.create_connection(server.getsockname())
        served, _ = server.accept()
        with served, client:
            client.settimeout(5)
            yield served, client


def _writer(sock: socket.socket, *, viewer: int | None = None, seat_checks: bool = False,
            chunked: bool = True, buffered: int = 1 << 20, end: float = float("inf"),
            stopping: bool = False, heartbeat_seconds: float = 15.0) -> DirectWriter:
    return DirectWriter(sock, Watch("g"), chunked=chunked, viewer=viewer,
                        seat_checks=seat_checks, buffered=buffered, end=time.monotonic() + end
                        if end != float("inf") else end, stopping=lambda: stopping,
                        heartbeat_seconds=heartbeat_seconds)


def _read_chunk(client: socket.socket) -> bytes:
    """What the client received, up to the end of a chunk holding an event."""
    data = b""
    while not data.endswith(b"\n\n\r\n"):
        data += client.recv(65536)
    return data


def test_the_hub_writes_an_entry_that_follows_on_as_a_chunk_of_the_viewers_frame() -> None:
    with _connected() as (served, client):
        writer = _writer(served, viewer=1)
        writer.last = 4
        shared: dict[Any, Any] = {}
        assert writer((6, _draw_record(6), shared)) is False  # 5 not written yet
        assert writer((5, _draw_record(5), shared)) is True
        assert writer.last == 5 and writer.pending == b""
        assert writer.beat_at > time.monotonic() + 14  # an event puts off the heartbeat
        (frame,) = shared.values()
        expected = frame[1]
        assert expected.startswith(b"id: 5\nevent: move\ndata: ") and b'"KD"' not in expected
        data = _read_chunk(client)
        assert chunks(data) == [expected]  # seat 1 sees seat 0's draw, not its card
        assert writer((5, _draw_record(5), shared)) is False  # written once


def test_the_hub_writes_a_seats_own_card_and_http_1_0_streams_unframed() -> None:
    with _connected() as (served, client):
        writer = _writer(served, viewer=0, seat_checks=True, chunked=False)
        assert writer((1, _draw_record(1), {})) is True
        data = client.recv(65536)
        assert data.startswith(b"id: 1\nevent: move\ndata: ") and b'"KD"' in data


def test_the_hub_leaves_to_the_stream_what_it_must_check_or_cannot_write() -> None:
    with _connected() as (served, client):
        # a seat's stream checks its token at an entry with no move: the stream does that
        assert _writer(served, seat_checks=True)((1, _draw_record(1, None), {})) is False
        # a public stream has no token to check
        assert _writer(served)((1, _draw_record(1, None), {})) is True
        assert _writer(served, stopping=True)((1, _draw_record(1), {})) is False
        assert _writer(served, end=-1)((1, _draw_record(1), {})) is False  # its time is up
        served.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            for _ in range(64):
                served.send(b"x" * 65536)  # the client reads nothing
        assert unsent(served) > 1000
        assert _writer(served, buffered=1000)((1, _draw_record(1), {})) is False
        full = _writer(served)
        assert full((1, _draw_record(1), {})) is False  # the socket would block
        assert full.last == 0 and full.pending == b""
    client.close()


def test_the_hub_measures_the_send_queue_once_a_sixteenth_of_the_bound_is_written(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The queue is measured once per ``buffered / 16`` bytes written, not at every event,
    and a client that reads nothing is still found within that much over the bound."""
    measured: list[int] = []
    real = streams.unsent_fd

    def counted(fd: int) -> int:
        measured.append(real(fd))
        return measured[-1]

    monkeypatch.setattr(streams, "unsent_fd", counted)
    with _connected() as (served, _client):  # the client reads nothing
        writer = _writer(served, buffered=16_000)
        version = written = 0
        while writer((version + 1, _draw_record(version + 1), {})):
            version += 1
            written += len(_chunk(version))
            assert version < 10_000, "the writer never found the bound"
        assert measured[-1] > 16_000  # stopped by the bound, not by a full socket
        assert measured[-1] <= 16_000 + 1_000 + len(_chunk(version))
        # the first measure before any write, then at most one per 1,000 bytes written
        assert 1 < len(measured) <= 1 + written // 1_000


def _chunk(version: int) -> bytes:
    """What a public stream's writer sends of a :func:`_draw_record`: its frame, chunked."""
    frame = streams._frame(streams.redacted_entry(_draw_record(version), None))
    return b"%X\r\n%s\r\n" % (len(frame), frame)


def test_the_hub_writes_a_waiting_streams_heartbeat_or_wakes_it_to() -> None:
    with _connected() as (served, client):
        writer = _writer(served)
        writer.beat(time.monotonic())
        assert chunks(_read_heartbeat(client)) == [b": heartbeat\n\n"]
        assert writer.beat_at > time.monotonic() + 14
        assert writer.watch.wait(0) is False  # the stream slept on
        _writer(served, chunked=False).beat(time.monotonic())  # HTTP/1.0: unframed
        assert client.recv(65536) == b": heartbeat\n\n"
        for stopped in (_writer(served, stopping=True), _writer(served, end=-1)):
            stopped.beat(time.monotonic())
            assert stopped.watch.wait(0) is True and stopped.beat_at == float("inf")
        served.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            for _ in range(64):
                served.send(b"x" * 65536)  # the client reads nothing
        for full in (_writer(served), _writer(served, buffered=1000)):  # would block; unread
            full.beat(time.monotonic())
            assert full.watch.wait(0) is True and full.beat_at == float("inf")
    client.close()


def test_the_heartbeats_thread_writes_those_due_while_their_streams_wait() -> None:
    with _connected() as (served, client):
        writer = _writer(served, heartbeat_seconds=0.4)  # looked for every 0.05 s
        writer.beat_at = time.monotonic() + 0.2
        HEARTBEATS.add(writer)
        try:
            started = time.monotonic()
            assert chunks(_read_heartbeat(client)) == [b": heartbeat\n\n"]
            assert 0.15 < time.monotonic() - started < 2
            _read_heartbeat(client)  # and the next, an interval on
        finally:
            HEARTBEATS.discard(writer)
        time.sleep(0.6)  # one was perhaps on its way as it was discarded
        client.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            client.recv(65536)
        time.sleep(0.6)  # an interval and a half: none more
        with pytest.raises(BlockingIOError):
            client.recv(65536)
        assert writer.watch.wait(0) is False


def _read_heartbeat(client: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b": heartbeat\n\n\r\n"):
        data += client.recv(65536)
    return data


def test_what_a_partial_send_leaves_the_stream_writes_before_anything_else() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        client = socket.socket()
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        client.connect(server.getsockname())
        served, _ = server.accept()
        with served, client:
            served.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
            watch = Watch("g")
            writer = DirectWriter(served, watch, chunked=True, viewer=None,
                                  seat_checks=False, buffered=1 << 30, end=float("inf"),
                                  stopping=lambda: False, heartbeat_seconds=15.0)
            record = _draw_record(1)
            record["events"] *= 2000  # a frame of about 84 KB: more than the buffers hold
            assert writer((1, record, {})) is True
            assert writer.last == 1 and writer.pending
            assert watch.wait(0) is True and watch.take() == []  # the stream wakes
            assert writer((2, _draw_record(2), {})) is False  # nothing before the rest
            finished: list[bool] = []
            done = threading.Thread(target=lambda: finished.append(writer.finish()))
            done.start()
            client.settimeout(10)
            data = _read_chunk(client)
            done.join(10)
            assert finished == [True] and writer.pending == b""
            (frame,) = chunks(data)
            assert frame.startswith(b"id: 1\nevent: move\n") and len(frame) > 80_000


def test_a_watch_hands_its_sink_what_it_takes_and_wakes_for_the_rest(
        caplog: pytest.LogCaptureFixture) -> None:
    watch = Watch("g")
    taken: list[int] = []

    def sink(entry: Announced) -> bool:
        if entry[0] == 3:
            raise ValueError("a record the stream must answer itself")
        taken.append(entry[0])
        return entry[0] == 1

    watch.sink = sink
    watch.wake((1, {}, {}))
    assert taken == [1] and watch.take() == [] and watch.wait(0) is False  # not woken
    watch.wake((2, {}, {}))  # declined: queued, woken
    watch.wake((1, {}, {}))  # behind a queued entry: queued too, never overtakes it
    assert taken == [1, 2] and watch.wait(0) is True
    assert [v for v, _, _ in watch.take()] == [2, 1]
    watch.wake((3, {}, {}))
    assert watch.wait(0) is True and [v for v, _, _ in watch.take()] == [3]
    assert "a watcher's sink failed" in caplog.text
