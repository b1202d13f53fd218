"""Ending a match early and turn clocks (C-RESIGN, C-ABORT, C-CLOCK): the engine with time
as an input, and the HTTP API with the store's clock moved by an injected offset (never a
sleep for a turn's length)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from random import Random
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.app import create_app
from service.config import Settings
from service.rules import GameState, Violation, apply, new_game
from service.rules.errors import Code
from service.rules.legal import legal_moves
from service.rules.moves import Abort, ClaimTimeout, Discard, Draw, Resign, move_to_dict
from service.rules.variants.dummy import dummy_state

PROBLEM = "application/problem+json"
CLOCK = {"clock": {"turn_seconds": 30}}


def game(variant: str, players: int = 3, rules: dict[str, Any] | None = None,
         now: int | None = None) -> GameState:
    state, _ = new_game(variant, [f"p{i}" for i in range(players)], rules, dealer=0,
                        rng=Random(7), now=now)
    return state


def with_totals(state: GameState, totals: list[int]) -> GameState:
    state = state.copy()
    state.totals = list(totals)
    return state


def refused(state: GameState, seat: int, move: Any, code: Code, now: int | None = None
            ) -> Violation:
    before = state.to_dict()
    with pytest.raises(Violation) as caught:
        apply(state, seat, move, Random(0), now)
    assert caught.value.code == code, caught.value
    assert state.to_dict() == before
    return caught.value


# --- resign: the winners by scoring kind -----------------------------------------------


@pytest.mark.parametrize(("variant", "rules", "totals", "resigner", "winners"), [
    pytest.param("basic", {}, [40, 10, 40, 5], 3, [0, 2], id="winner_collects-tie"),
    pytest.param("basic", {}, [40, 10, 40, 5], 0, [2], id="winner_collects-resigner-best"),
    pytest.param("basic", {"scoring": "penalty"}, [40, 10, 10, 5], 3, [1, 2],
                 id="basic-penalty-tie"),
    pytest.param("rummy51", {}, [120, 30, 300, 80], 1, [3], id="rummy51-penalty"),
    pytest.param("lebanese14", {}, [120, 30, 300, 80], 0, [1], id="lebanese14-penalty"),
    pytest.param("dummy", {}, [50, 20, 20, 90], 3, [1, 2], id="dummy-lowest"),
    pytest.param("wrotham", {}, [10, 60, 30, 60], 0, [1, 3], id="wrotham-highest"),
    pytest.param("wrotham", {"scoring": "penalty"}, [10, 60, 30, 5], 3, [0],
                 id="wrotham-penalty"),
])
def test_resign_ends_the_match_and_the_best_other_total_wins(
        variant: str, rules: dict[str, Any], totals: list[int], resigner: int,
        winners: list[int]) -> None:
    state = with_totals(game(variant, 4, rules), totals)
    before_history = list(state.history)
    after, events = apply(state, resigner, Resign(), Random(0))
    assert after.status == "finished"
    assert after.end == {"reason": "resigned", "seat": resigner}
    assert after.winners == winners
    assert after.totals == totals and after.history == before_history  # the hand not scored
    assert [e["type"] for e in events] == ["resign", "deal_revealed", "game_end"]
    assert events[-1]["end"] == {"reason": "resigned", "seat": resigner}
    assert events[-1]["winners"] == winners


def test_wrotham_resign_in_a_late_deal_of_the_six() -> None:
    state = with_totals(game("wrotham", 3), [35, 80, 12])
    state.hand_number = 5  # a late deal (WROTHAM-LATE): the match still ends at once
    after, _ = apply(state, 1, Resign(), Random(0))
    assert after.status == "finished" and after.winners == [0]


def test_a_seat_out_of_the_match_neither_wins_nor_resigns() -> None:
    state = with_totals(game("rummy51", 4, {"match_end": {"eliminate_at": 500}}),
                        [510, 40, 40, 90])
    state.out_of_match = [True, False, False, False]
    after, _ = apply(state, 3, Resign(), Random(0))
    assert after.winners == [1, 2]  # seat 0 has the lowest total but is out
    refused(state, 0, Resign(), Code.OUT_OF_MATCH)


def test_resign_out_of_turn_and_twice() -> None:
    state = game("basic", 3)
    assert state.turn != 2
    after, _ = apply(state, 2, Resign(), Random(0))
    assert after.status == "finished"
    for seat in range(3):
        refused(after, seat, Resign(), Code.GAME_FINISHED)
        refused(after, seat, Draw("stock"), Code.GAME_FINISHED)
    assert legal_moves(after, 0).moves == []


def test_dummy_resign_with_contracts() -> None:
    state = with_totals(game("dummy", 3), [30, 30, 70])
    dummy_state(state).completed = [3, 1, 0]
    after, _ = apply(state, 2, Resign(), Random(0))
    assert after.winners == [0, 1]  # the lowest total, whatever the contracts


# --- abort ----------------------------------------------------------------------------


def test_abort_only_before_the_first_move() -> None:
    state = game("basic", 2)
    assert state.started is False
    after, events = apply(state, 1 - state.turn, Abort(), Random(0))  # out of turn too
    assert after.status == "aborted" and after.winners == []
    assert after.end == {"reason": "aborted", "seat": 1 - state.turn}
    assert [e["type"] for e in events] == ["abort", "deal_revealed"]
    refused(after, 0, Draw("stock"), Code.GAME_FINISHED)
    refused(after, 0, Resign(), Code.GAME_FINISHED)
    moved, _ = apply(state, state.turn, Draw("stock"), Random(0))
    assert moved.started is True
    refused(moved, 0, Abort(), Code.ABORT_TOO_LATE)
    refused(moved, 1, Abort(), Code.ABORT_TOO_LATE)


def test_a_stored_game_without_the_field_counts_as_started() -> None:
    data = game("basic", 2).to_dict()
    del data["started"]
    refused(GameState.from_dict(data), 0, Abort(), Code.ABORT_TOO_LATE)


def test_legal_moves_list_the_ways_to_end() -> None:
    state = game("basic", 3, CLOCK, now=1_000)
    mover = state.turn
    mine = [m["type"] for m in legal_moves(state, mover, now=1_000).moves]
    assert mine[-2:] == ["resign", "abort"]
    other = (mover + 1) % 3
    assert [m["type"] for m in legal_moves(state, other, now=1_000).moves] == [
        "resign", "abort"]
    late = 1_000 + 30_000
    assert [m["type"] for m in legal_moves(state, other, now=late).moves] == [
        "resign", "abort", "claim_timeout"]
    assert "claim_timeout" not in [m["type"] for m in legal_moves(state, mover, now=late).moves]


# --- the clock in the engine ------------------------------------------------------------


def test_the_deadline_is_set_when_each_turn_starts() -> None:
    state = game("basic", 3, CLOCK, now=1_000)
    assert state.deadline == 31_000
    seat = state.turn
    drawn, _ = apply(state, seat, Draw("stock"), Random(0), 9_000)
    assert drawn.deadline == 31_000  # the same turn: the same deadline
    card = drawn.hands[seat][0]
    passed, _ = apply(drawn, seat, Discard(card), Random(0), 12_000)
    assert passed.turn != seat and passed.deadline == 42_000
    assert game("basic", 3).deadline is None  # no clock, no deadline


def test_claim_timeout() -> None:
    state = game("rummy51", 3, {**CLOCK, "match_end": {"target": 1000}}, now=0)
    state = with_totals(state, [100, 50, 20])
    late = state.turn
    other = (late + 1) % 3
    refused(state, other, ClaimTimeout(), Code.CLOCK_NOT_EXPIRED, now=29_999)
    refused(state, late, ClaimTimeout(), Code.OWN_TIMEOUT, now=60_000)
    refused(state, other, ClaimTimeout(), Code.CLOCK_NOT_EXPIRED, now=None)
    after, events = apply(state, other, ClaimTimeout(), Random(0), 30_000)
    assert after.status == "finished"
    assert after.end == {"reason": "timeout", "seat": late}
    best = min(t for s, t in enumerate([100, 50, 20]) if s != late)
    assert after.winners == [s for s, t in enumerate([100, 50, 20]) if s != late and t == best]
    assert events[0] == {"type": "claim_timeout", "seat": other, "late": late}
    refused(after, other, ClaimTimeout(), Code.GAME_FINISHED, now=90_000)
    refused(game("basic", 3), 1, ClaimTimeout(), Code.NO_CLOCK, now=10**13)


def test_the_wire_form_of_the_new_moves() -> None:
    from service.rules.moves import move_from_dict
    for move in (Resign(), Abort(), ClaimTimeout()):
        assert move_from_dict(move_to_dict(move)) == move


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
