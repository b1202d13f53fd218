"""Who may do what, and abuse limits: the authorization matrix, rate limits (429 +
Retry-After, shared through Redis), API keys for creating games, body and list limits."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.app import create_app
from service.config import Settings


def _game(client: FlaskClient) -> dict[str, Any]:
    reply = client.post("/v1/games", json={"variant": "basic", "players": ["Ana", "Bo"],
                                           "dealer": 1})
    assert reply.status_code == 201
    body: dict[str, Any] = reply.get_json()
    return body


SEAT_ENDPOINTS = [
    ("GET", "/v1/games/{id}/me", None),
    ("POST", "/v1/games/{id}/moves", {"type": "draw", "source": "stock"}),
    ("POST", "/v1/games/{id}/moves?dry_run=true", {"type": "draw", "source": "stock"}),
    ("GET", "/v1/games/{id}/legal-moves", None),
    ("GET", "/v1/games/{id}/events", None),  # public without a token; checked if given
]


@pytest.mark.parametrize(("method", "path", "body"), SEAT_ENDPOINTS)
@pytest.mark.parametrize("who", ["none", "malformed", "unknown", "other_seat_forged",
                                 "other_game"])
def test_authorization_matrix(client: FlaskClient, method: str, path: str,
                              body: dict[str, Any] | None, who: str) -> None:
    game, other = _game(client), _game(client)
    url = path.replace("{id}", game["game_id"])
    ana = game["seats"][0]["token"]
    tokens = {
        "none": None,
        "malformed": "not-a-token",
        "unknown": f"{game['game_id']}.0.{'x' * 32}",
        # the seat number in a token is only a hint: the secret must match that seat
        "other_seat_forged": ".".join([game["game_id"], "1", ana.split(".")[2]]),
        "other_game": other["seats"][0]["token"],
    }
    token = tokens[who]
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    reply = client.open(url, method=method, json=body, headers=headers)
    if who == "none" and path.endswith("/events"):
        assert reply.status_code == 200  # the public log
        return
    expected = 403 if who == "other_game" else 401
    assert reply.status_code == expected, reply.get_json()
    assert reply.content_type == "application/problem+json"
    # nothing changed and nothing was shown
    assert client.get(f"/v1/games/{game['game_id']}").get_json()["version"] == 0
    assert "hand" not in (reply.get_json() or {})


def test_the_seat_comes_from_the_token_only(client: FlaskClient) -> None:
    game = _game(client)
    ana, bo = (s["token"] for s in game["seats"])
    # it is Ana's turn (seat 0); Bo's token cannot act for her, whatever the body says
    reply = client.post(f"/v1/games/{game['game_id']}/moves",
                        json={"type": "draw", "source": "stock", "seat": 0},
                        headers={"Authorization": f"Bearer {bo}"})
    assert reply.status_code == 400  # "seat" is not a field of a move
    reply = client.post(f"/v1/games/{game['game_id']}/moves",
                        json={"type": "draw", "source": "stock"},
                        headers={"Authorization": f"Bearer {bo}"})
    assert reply.status_code == 422
    assert reply.get_json()["code"] == "NOT_YOUR_TURN"
    me = client.get(f"/v1/games/{game['game_id']}/me",
                    headers={"Authorization": f"Bearer {ana}"}).get_json()
    assert me["seat"] == 0


@pytest.fixture
def limited(redis_url: str) -> Iterator[Flask]:
    yield create_app(Settings(redis_url=redis_url, rate_limits=("5/minute",),
                              create_rate_limits=("2/minute",)))


def test_rate_limits_answer_429_with_retry_after_and_count_per_caller(limited: Flask) -> None:
    client = limited.test_client()
    statuses = [client.get("/v1/variants").status_code for _ in range(6)]
    assert statuses == [200] * 5 + [429]
    reply = client.get("/v1/variants")
    assert reply.status_code == 429
    assert reply.content_type == "application/problem+json"
    assert 1 <= int(reply.headers["Retry-After"]) <= 60
    assert "rate limit" in reply.get_json()["detail"]
    # another client address has its own budget; liveness is never limited
    assert client.get("/v1/variants",
                      environ_base={"REMOTE_ADDR": "10.1.2.3"}).status_code == 200
    assert all(client.get("/healthz").status_code == 200 for _ in range(10))


def test_limits_are_shared_by_every_worker_through_redis(limited: Flask, redis_url: str) -> None:
    other_worker = create_app(Settings(redis_url=redis_url, rate_limits=("5/minute",),
                                       create_rate_limits=("2/minute",))).test_client()
    first = limited.test_client()
    for _ in range(3):
        assert first.get("/v1/variants").status_code == 200
    statuses = [other_worker.get("/v1/variants").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]


def test_creating_games_has_its_own_limit(limited: Flask) -> None:
    client = limited.test_client()
    body = {"variant": "basic", "players": ["a", "b"]}
    assert [client.post("/v1/games", json=body).status_code for _ in range(3)] == [201, 201,
                                                                                   429]


def test_api_keys_guard_game_creation(redis_url: str) -> None:
    key = "k" * 24
    client = create_app(Settings(redis_url=redis_url, api_keys=(key,), rate_limits=(),
                                 create_rate_limits=())).test_client()
    body = {"variant": "basic", "players": ["a", "b"]}
    missing = client.post("/v1/games", json=body)
    assert missing.status_code == 401
    assert missing.content_type == "application/problem+json"
    assert client.post("/v1/games", json=body, headers={"X-API-Key": "z" * 24}
                       ).status_code == 401
    created = client.post("/v1/games", json=body, headers={"X-API-Key": key})
    assert created.status_code == 201
    # playing needs seat tokens, not the key
    game = created.get_json()
    assert client.get(f"/v1/games/{game['game_id']}").status_code == 200


@pytest.mark.parametrize(("body", "field"), [
    ({"variant": "basic", "players": [f"p{i}" for i in range(7)]}, "players"),
    ({"variant": "basic", "players": ["a", "b"], "deals": [{"hands": [[]]}] * 51}, "deals"),
    ({"variant": "basic", "players": ["a" * 41, "b"]}, "players.0"),
])
def test_list_and_length_limits(client: FlaskClient, body: dict[str, Any],
                                field: str) -> None:
    reply = client.post("/v1/games", json=body)
    assert reply.status_code == 400
    assert field in {e["field"] for e in reply.get_json()["errors"]}


def test_move_lists_are_bounded(client: FlaskClient) -> None:
    game = _game(client)
    reply = client.post(f"/v1/games/{game['game_id']}/moves",
                        json={"type": "meld", "melds": [{"cards": ["AS"] * 31}]},
                        headers={"Authorization": f"Bearer {game['seats'][0]['token']}"})
    assert reply.status_code == 400
