"""Ending a match early and turn clocks (C-RESIGN, C-ABORT, C-CLOCK) over HTTP, with the
store's clock moved by an injected offset (never a sleep for a turn's length)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.app import create_app
from service.config import Settings

PROBLEM = "application/problem+json"
CLOCK = {"clock": {"turn_seconds": 30}}


# --- over HTTP ------------------------------------------------------------------------


def make_app(redis_url: str) -> Flask:
    return create_app(Settings(redis_url=redis_url, rate_limits=(), create_rate_limits=(),
                               verify_rate_limits=()))


def body(resp: Any) -> Any:
    return json.loads(resp.get_data())


def problem(resp: Any, status: int, code: str | None = None) -> dict[str, Any]:
    assert resp.status_code == status, resp.get_data(as_text=True)
    assert resp.mimetype == PROBLEM
    data: dict[str, Any] = body(resp)
    if code is not None:
        assert data.get("code") == code, data
    return data


class Table:
    def __init__(self, client: FlaskClient, variant: str = "basic", players: int = 3,
                 rules: dict[str, Any] | None = None) -> None:
        self.client = client
        resp = client.post("/v1/games", json={"variant": variant, "rules": rules or {},
                                              "players": [f"p{i}" for i in range(players)],
                                              "dealer": 0})
        assert resp.status_code == 201, resp.get_data(as_text=True)
        created = body(resp)
        self.created = created
        self.id = created["game_id"]
        self.tokens = [s["token"] for s in created["seats"]]

    def auth(self, seat: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[seat]}"}

    def move(self, seat: int, move: dict[str, Any]) -> Any:
        return self.client.post(f"/v1/games/{self.id}/moves", json=move, headers=self.auth(seat))

    def view(self) -> dict[str, Any]:
        resp = self.client.get(f"/v1/games/{self.id}")
        assert resp.status_code == 200
        data: dict[str, Any] = body(resp)
        return data

    def me(self, seat: int) -> dict[str, Any]:
        resp = self.client.get(f"/v1/games/{self.id}/me", headers=self.auth(seat))
        assert resp.status_code == 200
        data: dict[str, Any] = body(resp)
        return data


@pytest.fixture
def shifted(app: Flask) -> Iterator[Any]:
    """The app's store, whose clock the test moves (``clock_offset_ms``)."""
    store = app.extensions["referee"].store
    yield store
    store.clock_offset_ms = 0


def when(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def test_resign_over_http(client: FlaskClient) -> None:
    table = Table(client, "basic", 3)
    resp = table.move(2, {"type": "resign"})  # out of turn
    assert resp.status_code == 200, resp.get_data(as_text=True)
    answer = body(resp)
    assert answer["game"]["status"] == "finished"
    assert answer["game"]["end"] == {"reason": "resigned", "seat": 2}
    assert answer["game"]["winners"] == [0, 1]  # all at 0: a tie shares
    assert [e["type"] for e in answer["events"]] == ["resign", "game_end"]
    view = table.view()
    assert view["status"] == "finished" and view["end"] == {"reason": "resigned", "seat": 2}
    problem(table.move(2, {"type": "resign"}), 422, "GAME_FINISHED")
    problem(table.move(0, {"type": "draw", "source": "stock"}), 422, "GAME_FINISHED")
    problem(table.move(0, {"type": "resign", "card": "AS"}), 400)
    assert client.get(f"/v1/games/{table.id}/verify").get_json()["verified"] is True


def test_abort_over_http(client: FlaskClient) -> None:
    table = Table(client, "rummy51", 2)
    seat = table.created["game"]["turn"]["seat"]
    problem(table.move(seat, {"type": "abort", "extra": 1}), 400)
    assert table.view()["status"] == "playing"
    resp = table.move(1 - seat, {"type": "abort"})
    assert resp.status_code == 200, resp.get_data(as_text=True)
    view = table.view()
    assert view["status"] == "aborted" and view["winners"] is None and view["turn"] is None
    assert view["end"] == {"reason": "aborted", "seat": 1 - seat}
    problem(table.move(seat, {"type": "abort"}), 422, "GAME_FINISHED")
    late = Table(client, "basic", 2)
    mover = late.created["game"]["turn"]["seat"]
    assert late.move(mover, {"type": "draw", "source": "stock"}).status_code == 200
    data = problem(late.move(1 - mover, {"type": "abort"}), 422, "ABORT_TOO_LATE")
    assert data["rule"] == "C-ABORT"
    assert late.view()["status"] == "playing"


def test_a_clocked_game_over_http(client: FlaskClient, shifted: Any) -> None:
    table = Table(client, "basic", 3, {"clock": {"turn_seconds": 60}})
    view = table.view()
    turn, server = view["turn"], when(view["server_time"])
    assert turn["expired"] is False
    assert 59 <= when(turn["deadline"]) - server <= 60
    late = turn["seat"]
    other = (late + 1) % 3
    problem(table.move(other, {"type": "claim_timeout"}), 422, "CLOCK_NOT_EXPIRED")
    listed = client.get(f"/v1/games/{table.id}/legal-moves", headers=table.auth(other))
    assert [m["type"] for m in body(listed)["moves"]] == ["resign", "abort"]
    shifted.clock_offset_ms = 61_000
    view = table.view()
    assert view["turn"]["expired"] is True and view["turn"]["deadline"] == turn["deadline"]
    assert when(view["server_time"]) > when(turn["deadline"])
    assert table.me(other)["turn"]["expired"] is True
    listed = client.get(f"/v1/games/{table.id}/legal-moves", headers=table.auth(other))
    assert "claim_timeout" in [m["type"] for m in body(listed)["moves"]]
    data = problem(table.move(late, {"type": "claim_timeout"}), 422, "OWN_TIMEOUT")
    assert data["rule"] == "C-CLOCK"
    resp = table.move(other, {"type": "claim_timeout"})
    assert resp.status_code == 200, resp.get_data(as_text=True)
    game_view = body(resp)["game"]
    assert game_view["status"] == "finished"
    assert game_view["end"] == {"reason": "timeout", "seat": late}
    assert late not in game_view["winners"]
    assert game_view["turn"] is None
    problem(table.move(other, {"type": "claim_timeout"}), 422, "GAME_FINISHED")
    assert client.get(f"/v1/games/{table.id}/verify").get_json()["verified"] is True


def test_each_new_turn_gets_its_own_deadline(client: FlaskClient, shifted: Any) -> None:
    table = Table(client, "basic", 2, {"clock": {"turn_seconds": 30}})
    first = table.view()["turn"]
    seat = first["seat"]
    shifted.clock_offset_ms = 20_000  # the mover takes 20 s of its 30
    assert table.move(seat, {"type": "draw", "source": "stock"}).status_code == 200
    card = table.me(seat)["hand"][0]
    resp = table.move(seat, {"type": "discard", "card": card})
    assert resp.status_code == 200, resp.get_data(as_text=True)
    turn = body(resp)["game"]["turn"]
    assert turn["seat"] == 1 - seat
    assert 19 <= when(turn["deadline"]) - when(first["deadline"]) <= 21  # 20 s later
    shifted.clock_offset_ms = 40_000  # the first deadline has passed, not the second
    problem(table.move(seat, {"type": "claim_timeout"}), 422, "CLOCK_NOT_EXPIRED")


def test_the_deadline_survives_a_new_app(client: FlaskClient, redis_url: str) -> None:
    table = Table(client, "rummy51", 2, {"clock": {"turn_seconds": 5}})
    deadline = table.view()["turn"]["deadline"]
    restarted = make_app(redis_url)
    other_client = restarted.test_client()
    again = Table.__new__(Table)
    again.client, again.id, again.tokens = other_client, table.id, table.tokens
    view = again.view()
    assert view["turn"]["deadline"] == deadline
    late = view["turn"]["seat"]
    problem(again.move(1 - late, {"type": "claim_timeout"}), 422, "CLOCK_NOT_EXPIRED")
    restarted.extensions["referee"].store.clock_offset_ms = 6_000
    resp = again.move(1 - late, {"type": "claim_timeout"})
    assert resp.status_code == 200, resp.get_data(as_text=True)
    assert body(resp)["game"]["end"] == {"reason": "timeout", "seat": late}


def test_bad_clock_input(client: FlaskClient) -> None:
    for bad in ({"turn_seconds": 4}, {"turn_seconds": 86_401}, {"turn_seconds": "30"},
                {"seconds": 30}, {"turn_seconds": 30, "x": 1}, 30, "fast", []):
        resp = client.post("/v1/games", json={"variant": "dummy", "players": ["a", "b"],
                                              "rules": {"clock": bad}})
        problem(resp, 400)
    table = Table(client, "wrotham", 2)
    problem(table.move(0, {"type": "claim_timeout"}), 422, "NO_CLOCK")
    view = table.view()
    assert "server_time" not in view and set(view["turn"]) == {"seat", "phase"}
    assert view["end"] is None


def test_variants_list_the_clock_knob(client: FlaskClient) -> None:
    for variant in body(client.get("/v1/variants"))["variants"]:
        knob = next(k for k in variant["knobs"] if k["name"] == "clock")
        assert knob["default"] is None and knob["nullable"] is True
        assert knob["bounds"] == {"turn_seconds": {"minimum": 5, "maximum": 86400}}
        assert knob["rule"] == "C-CLOCK"


def test_a_dry_run_of_a_resign_reveals_nothing_and_changes_nothing(client: FlaskClient) -> None:
    table = Table(client, "basic", 3)
    resp = client.post(f"/v1/games/{table.id}/moves?dry_run=true", json={"type": "resign"},
                       headers=table.auth(1))
    assert resp.status_code == 200, resp.get_data(as_text=True)
    answer = body(resp)
    assert [e["type"] for e in answer["events"]] == ["resign", "game_end"]
    assert "stock" not in json.dumps(answer["events"])
    assert table.view()["status"] == "playing" and table.view()["version"] == 0


def test_a_clocked_lobby_game_starts_its_clock_when_it_deals(client: FlaskClient,
                                                             shifted: Any) -> None:
    resp = client.post("/v1/games", json={"variant": "basic", "players": ["Ana", None],
                                          "rules": {"clock": {"turn_seconds": 10}}})
    assert resp.status_code == 201, resp.get_data(as_text=True)
    created = body(resp)
    shifted.clock_offset_ms = 3_600_000  # the last seat is taken an hour later
    joined = client.post("/v1/join", json={"code": created["join_code"], "name": "Bo"})
    assert joined.status_code == 201, joined.get_data(as_text=True)
    game_view = body(joined)["game"]
    deadline, server = when(game_view["turn"]["deadline"]), when(game_view["server_time"])
    assert 9 <= deadline - server <= 10 and game_view["turn"]["expired"] is False
    view = body(client.get(f"/v1/games/{created['game_id']}"))
    assert view["turn"]["deadline"] == game_view["turn"]["deadline"]


def test_a_clocked_game_created_full_shows_its_deadline_at_once(client: FlaskClient) -> None:
    table = Table(client, "dummy", 2, {"clock": {"turn_seconds": 5}})
    created = table.created["game"]
    assert created["turn"]["deadline"] is not None and created["server_time"]
    assert created["turn"]["deadline"] == table.view()["turn"]["deadline"]
