"""The limits on event streams open at once answer as every other limit does (docs/api.md,
"Errors"): a ``429`` whose body names the limit (``policy``, ``limit``) and when to retry
(``retry_after``, as ``Retry-After``), with the ``RateLimit-Policy`` and ``RateLimit``
headers the OpenAPI document promises on every ``429``. Through Flask test clients on the
session Redis."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.app import create_app
from service.config import Settings
from tests.support.deals import auth
from tests.support.http_player import FlaskTransport
from tests.support.problems import assert_problem
from tests.support.reliability import Game, create_game
from tests.support.streams import SSE, open_stream


def _app(redis_url: str, **settings: Any) -> Flask:
    return create_app(Settings(redis_url=redis_url, sse_max_seconds=5,
                               sse_heartbeat_seconds=0.5, sse_per_seat=1, sse_per_address=3,
                               sse_max_streams=9, **settings))


def _promised_429_headers(app: Flask) -> set[str]:
    """The headers the OpenAPI document gives every ``429``."""
    spec = app.extensions["api"].spec.to_dict()
    response = spec["components"]["responses"]["TooManyRequests"]
    return set(response["headers"])


def _refusals(client: FlaskClient, game: Game, **headers: str) -> dict[str, Any]:
    """The 429s of the seat's limit (one stream per seat: seat 0 asks for a second) and of
    the address's (three: seat 0's, seat 1's and a public stream are open), for a stream
    and for a long poll; the streams are closed once the answers are in."""
    events = f"/v1/games/{game.game_id}/events"
    held = [open_stream(client, events, **auth(game.tokens[0])),
            open_stream(client, events, **auth(game.tokens[1]))]
    try:
        seat = client.get(events, headers={**SSE, **auth(game.tokens[0]), **headers})
        held.append(open_stream(client, events))
        return {"seat": seat, "address": client.get(events, headers={**SSE, **headers}),
                "poll": client.get(f"/v1/games/{game.game_id}", headers={
                    "If-None-Match": '"0"', "Prefer": "wait=1", **headers})}
    finally:
        for stream in held:
            stream.close()


def test_a_stream_limit_s_429_is_shaped_as_every_429(redis_url: str) -> None:
    app = _app(redis_url, rate_limits=(), create_rate_limits=("1/minute",))
    client = app.test_client()
    game = create_game(FlaskTransport(client), 2)
    created = client.post("/v1/games", json={"variant": "basic", "players": ["Ana", "Bo"]})
    assert created.status_code == 429, created.get_data(as_text=True)
    other = assert_problem(created, 429)
    promised = _promised_429_headers(app)
    assert promised == {"Retry-After", "RateLimit", "RateLimit-Policy"}
    assert promised <= set(created.headers.keys())
    members = set(other) - {"type", "title", "status", "detail"}
    assert members == {"policy", "limit", "retry_after"}

    refusals = _refusals(client, game)
    for name, policy, quota in [("seat", "seat-streams", 1), ("address", "streams", 3),
                                ("poll", "streams", 3)]:
        resp = refusals[name]
        body = assert_problem(resp, 429, code="TOO_MANY_STREAMS")
        assert members <= set(body), (name, body)
        assert promised <= set(resp.headers.keys()), (name, dict(resp.headers))
        assert (body["policy"], body["limit"]) == (policy, f"{quota} open at once"), name
        assert body["retry_after"] == int(resp.headers["Retry-After"]) >= 1
        assert resp.headers["RateLimit-Policy"] == (
            f'"{policy}";q={quota};qu="concurrent-requests"')
        assert resp.headers["RateLimit"] == f'"{policy}";r=0;t={body["retry_after"]}'


def test_a_stream_limit_s_headers_join_those_of_the_rate_limits(redis_url: str) -> None:
    """With ``RUMMY_RATE_LIMITS`` on, the refused request counted against them too: both
    limits are named, the request's first."""
    app = _app(redis_url, rate_limits=("1000/minute",), create_rate_limits=())
    client = app.test_client()
    game = create_game(FlaskTransport(client), 2)
    resp = _refusals(client, game)["address"]
    assert_problem(resp, 429, code="TOO_MANY_STREAMS")
    policies = [item.strip() for item in resp.headers["RateLimit-Policy"].split(",")]
    assert policies == ['"requests";q=1000;w=60', '"streams";q=3;qu="concurrent-requests"']
    left = [item.strip().split(";")[0] for item in resp.headers["RateLimit"].split(",")]
    assert left == ['"requests"', '"streams"']


@pytest.mark.parametrize("language", ["da", "cs"])
def test_a_stream_limit_s_429_is_in_the_language(redis_url: str, language: str) -> None:
    client = _app(redis_url, rate_limits=(), create_rate_limits=()).test_client()
    game = create_game(FlaskTransport(client), 2)
    english = {name: assert_problem(resp, 429)
               for name, resp in _refusals(client, game).items()}
    for name, resp in _refusals(client, game, **{"Accept-Language": language}).items():
        body = assert_problem(resp, 429, code="TOO_MANY_STREAMS")
        assert resp.headers["Content-Language"] == language
        assert body["detail"] != english[name]["detail"], (name, body)
        assert body["title"] != english[name]["title"]
        assert (body["policy"], body["limit"]) == (english[name]["policy"],
                                                   english[name]["limit"])
