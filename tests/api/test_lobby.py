"""The lobby over HTTP against real Redis (API.md "Seats for remote players (lobby)"):
open seats and join codes, the host token, token rotation, rematches."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from service.app import create_app
from service.config import Settings
from service.referee.lobby import CODE_ALPHABET, normal_code
from service.store import VersionConflict
from tests.support.basic_game import B_HANDS
from tests.support.deals import arranged, auth
from tests.support.hidden_cards import card_strings, check_join_answer, check_waiting_view
from tests.support.streams import SSE

# Deal B: seat 0 (dealer 1) takes the upcard 5C and goes out at once.
GOING_OUT = [{"type": "draw", "source": "discard"},
             {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H", "TH"]},
                                        {"cards": ["QS", "QD", "QC"]},
                                        {"cards": ["2C", "3C", "4C", "5C"]}]}]
CODE = re.compile(f"^[{CODE_ALPHABET}]{{4}}-[{CODE_ALPHABET}]{{4}}$")


def _settings(redis_url: str, **changes: Any) -> Settings:
    values: dict[str, Any] = {"redis_url": redis_url, "rate_limits": (),
                              "create_rate_limits": (), "verify_rate_limits": (),
                              "join_rate_limits": ()}
    values.update(changes)
    return Settings(**values)


def _create(client: FlaskClient, players: list[str | None], **body: Any) -> dict[str, Any]:
    resp = client.post("/v1/games", json={"variant": "basic", "players": players, **body})
    assert resp.status_code == 201, resp.get_json()
    created: dict[str, Any] = resp.get_json()
    return created


def _join(client: FlaskClient, code: str, name: str, seat: int | None = None
          ) -> tuple[int, dict[str, Any]]:
    body: dict[str, Any] = {"code": code, "name": name}
    if seat is not None:
        body["seat"] = seat
    resp = client.post("/v1/join", json=body)
    return resp.status_code, resp.get_json()


def _problem(resp: Any, status: int, code: str | None = None) -> dict[str, Any]:
    assert resp.status_code == status, (resp.status_code, resp.get_json())
    assert resp.mimetype == "application/problem+json"
    body: dict[str, Any] = resp.get_json()
    if code is not None:
        assert body["code"] == code, body
    return body


def _version(client: FlaskClient, gid: str) -> int:
    return int(client.get(f"/v1/games/{gid}").get_json()["version"])


# -- open seats and joining ---------------------------------------------------------------


def test_a_game_with_open_seats_waits_then_deals_when_the_last_seat_is_taken(
        client: FlaskClient) -> None:
    created = _create(client, ["Ana", None, None])
    gid = created["game_id"]
    assert CODE.match(created["join_code"]), created["join_code"]
    assert created["host_token"].startswith(f"{gid}.host.")
    assert [s["seat"] for s in created["seats"]] == [0]
    ana = created["seats"][0]["token"]
    for view in (created["game"], client.get(f"/v1/games/{gid}").get_json()):
        assert view["status"] == "waiting" and view["deal_commitment"] is None
        assert view["hand_number"] == 0 and view["stock_count"] == 0
        assert [(s["seat"], s["name"], s["open"]) for s in view["seats"]] == [
            (0, "Ana", False), (1, None, True), (2, None, True)]
    mine = client.get(f"/v1/games/{gid}/me", headers=auth(ana)).get_json()
    assert mine["hand"] == [] and mine["status"] == "waiting"
    _problem(client.post(f"/v1/games/{gid}/moves", headers=auth(ana),
                         json={"type": "draw", "source": "stock"}), 422, "GAME_NOT_STARTED")
    _problem(client.get(f"/v1/games/{gid}/legal-moves", headers=auth(ana)), 422,
             "GAME_NOT_STARTED")
    report = client.get(f"/v1/games/{gid}/verify").get_json()
    assert report["verified"] is True and report["moves_replayed"] == 0
    _problem(client.post(f"/v1/games/{gid}/moves", headers=auth(f"{gid}.1.nope"),
                         json={"type": "draw", "source": "stock"}), 401)

    typed = " " + created["join_code"].lower().replace("-", " - ") + " "
    status, cy = _join(client, typed, "Cy", seat=2)
    assert status == 201, cy
    assert (cy["game_id"], cy["seat"]) == (gid, 2)
    assert cy["game"]["status"] == "waiting" and cy["game"]["hand"] == []
    assert set(cy) == {"game_id", "seat", "token", "game"}

    status, bo = _join(client, created["join_code"], "Bo")
    assert status == 201, bo
    assert bo["seat"] == 1
    game = bo["game"]
    assert game["status"] == "playing" and game["hand_number"] == 1
    assert game["deal_commitment"] is not None
    assert len(game["hand"]) == game["seats"][1]["hand_count"] > 0
    assert [(s["name"], s["open"]) for s in game["seats"]] == [
        ("Ana", False), ("Bo", False), ("Cy", False)]
    entries = client.get(f"/v1/games/{gid}/events").get_json()["entries"]
    assert [e["move"] for e in entries] == [None, None]
    assert [e["type"] for e in entries[-1]["events"]] == ["seat_taken", "dealt"]
    for token, seat in ((ana, 0), (bo["token"], 1), (cy["token"], 2)):
        view = client.get(f"/v1/games/{gid}/me", headers=auth(token)).get_json()
        assert view["seat"] == seat and view["status"] == "playing"
    turn = game["turn"]["seat"]
    mover = [ana, bo["token"], cy["token"]][turn]
    resp = client.post(f"/v1/games/{gid}/moves", headers=auth(mover),
                       json={"type": "draw", "source": "stock"})
    assert resp.status_code == 200, resp.get_json()
    report = client.get(f"/v1/games/{gid}/verify").get_json()
    assert report["verified"] is True


def test_a_game_with_every_seat_named_plays_as_before_with_a_host_token(
        client: FlaskClient) -> None:
    created = _create(client, ["Ana", "Bo"])
    assert "join_code" not in created
    assert [s["seat"] for s in created["seats"]] == [0, 1]
    assert created["game"]["status"] == "playing"
    assert [s["open"] for s in created["game"]["seats"]] == [False, False]
    assert created["host_token"].startswith(created["game_id"] + ".host.")


def test_join_refusals_are_problems_that_change_nothing(client: FlaskClient) -> None:
    created = _create(client, ["Ana", None, None])
    gid, code = created["game_id"], created["join_code"]
    assert _join(client, code, "Bo", seat=1)[0] == 201
    before = _version(client, gid)
    wrong = "".join(CODE_ALPHABET[(CODE_ALPHABET.index(c) + 1) % 32] if c != "-" else c
                    for c in code)
    _problem(client.post("/v1/join", json={"code": wrong, "name": "Cy"}), 404,
             "UNKNOWN_JOIN_CODE")
    _problem(client.post("/v1/join", json={"code": "0OI1-xx", "name": "Cy"}), 404)
    _problem(client.post("/v1/join", json={"code": code, "name": "Cy", "seat": 1}), 409,
             "SEAT_TAKEN")
    _problem(client.post("/v1/join", json={"code": code, "name": "Cy", "seat": 0}), 409,
             "SEAT_TAKEN")
    bad = _problem(client.post("/v1/join", json={"code": code, "name": "Cy", "seat": 4}), 400)
    assert bad["errors"][0]["field"] == "seat"
    _problem(client.post("/v1/join", json={"code": code, "name": "Cy", "seat": 9}), 400)
    _problem(client.post("/v1/join", json={"code": code, "name": "Cy", "seat": -1}), 400)
    for body in ({"code": code}, {"code": code, "name": ""}, {"code": code, "name": "  "},
                 {"code": code, "name": "x" * 10_000}, {"code": code, "name": "a\nb"},
                 {"code": code, "name": None}, {"name": "Cy"}, {"code": 5, "name": "Cy"},
                 {"code": code, "name": "Cy", "seat": "2"},
                 {"code": code, "name": "Cy", "extra": 1}, [code]):
        body_problem = _problem(client.post("/v1/join", json=body), 400)
        assert body_problem["errors"], body
    assert _version(client, gid) == before
    assert _join(client, code, "Cy")[0] == 201  # the last seat: dealt
    after = _version(client, gid)
    _problem(client.post("/v1/join", json={"code": code, "name": "Di"}), 409, "SEAT_TAKEN")
    assert _version(client, gid) == after


def test_joining_a_finished_game_or_one_cancelled_in_play_changes_nothing(
        client: FlaskClient) -> None:
    """A join code whose game has dealt, then finished (a resignation) or been cancelled
    by its host in play: joining, and looking the code up, are 409 SEAT_TAKEN problems
    that say why, and the game stays as it was."""
    finished = _create(client, ["Ana", None])
    status, bo = _join(client, finished["join_code"], "Bo")
    assert status == 201 and bo["game"]["status"] == "playing"
    resp = client.post(f"/v1/games/{finished['game_id']}/moves",
                       headers=auth(finished["seats"][0]["token"]), json={"type": "resign"})
    assert resp.status_code == 200 and resp.get_json()["game"]["status"] == "finished"
    cancelled = _create(client, ["Ana", None])
    status, _ = _join(client, cancelled["join_code"], "Bo")
    assert status == 201
    resp = client.delete(f"/v1/games/{cancelled['game_id']}",
                         headers=auth(cancelled["host_token"]))
    assert resp.status_code == 200 and resp.get_json()["status"] == "aborted"
    for created, why in ((finished, "finished"), (cancelled, "aborted")):
        gid, code = created["game_id"], created["join_code"]
        before = client.get(f"/v1/games/{gid}").get_json()
        for body in ({"code": code, "name": "Cy"}, {"code": code, "name": "Cy", "seat": 1},
                     {"code": code.lower(), "name": "Cy", "seat": 0}):
            problem = _problem(client.post("/v1/join", json=body), 409, "SEAT_TAKEN")
            assert why in problem["detail"], problem
        problem = _problem(client.get(f"/v1/join/{code}"), 409, "SEAT_TAKEN")
        assert why in problem["detail"], problem
        assert client.get(f"/v1/games/{gid}").get_json() == before
        assert [s["name"] for s in before["seats"]] == ["Ana", "Bo"]


def test_open_seats_are_players_or_null_and_names_are_checked(client: FlaskClient) -> None:
    resp = client.post("/v1/games", json={"variant": "basic", "players": ["Ana", ""]})
    _problem(resp, 400)
    created = _create(client, [None, None])
    assert created["seats"] == [] and CODE.match(created["join_code"])


@pytest.mark.parametrize("text,normal", [
    ("k7qp-m2xd", "K7QPM2XD"), (" K7QP M2XD ", "K7QPM2XD"), ("K-7-Q-P-M-2-X-D", "K7QPM2XD"),
    ("K7QP-M2X0", None), ("K7QP-M2X", None), ("K7QP-M2XDD", None), ("", None),
    ("K7QP\u00a0M2XD\u2003", "K7QPM2XD"), ("K7QP-M2X\u017f", None), ("K7QP-M2X\uff24", None),
    ("K\uff17QP-M2XD", None), ("K\u0667QP-M2XD", None)])
def test_join_codes_ignore_case_dashes_and_blanks(text: str, normal: str | None) -> None:
    assert normal_code(text) == normal


def _racers(redis_url: str, count: int) -> list[Flask]:
    return [create_app(_settings(redis_url)) for _ in range(count)]


def _at_once(apps: list[Flask], count: int, call: Callable[[FlaskClient, int], Any]
             ) -> list[Any]:
    """``call(client, i)`` for ``i`` in ``range(count)``, each in a thread of its own on a
    client of ``apps[i % len(apps)]``, all released together (a barrier); what the calls
    returned, in the order they finished."""
    barrier = threading.Barrier(count)
    results: list[Any] = []

    def run(i: int) -> None:
        client = apps[i % len(apps)].test_client()
        barrier.wait()
        results.append(call(client, i))  # list.append is atomic

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def _count_conflicts(apps: list[Flask], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The game ids of every compare-and-set the apps' stores refused (VersionConflict:
    another commit of the game came first), one entry per refusal."""
    conflicts: list[str] = []
    for app in apps:
        store = app.extensions["referee"].store
        commit = store.commit

        def counted(game_id: str, *args: Any, _commit: Any = commit, **kwargs: Any) -> Any:
            try:
                return _commit(game_id, *args, **kwargs)
            except VersionConflict:
                conflicts.append(game_id)  # list.append is atomic
                raise

        monkeypatch.setattr(store, "commit", counted)
    return conflicts


def test_two_people_joining_the_last_seat_at_once_exactly_one_gets_it(
        redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads on several app instances (each its own Redis connections, as workers are)
    join the same last open seat together, round after round: exactly one gets it. The
    race is real: in some rounds a loser had read the seat open and its commit was refused
    (a compare-and-set conflict), not only turned away by a seat already taken."""
    apps = _racers(redis_url, 3)
    clients = [a.test_client() for a in apps]
    conflicts = _count_conflicts(apps, monkeypatch)
    raced = 0
    for round_ in range(40):
        created = _create(clients[0], ["Ana", None])
        gid, code = created["game_id"], created["join_code"]
        racers = 6
        results = _at_once(apps, racers, lambda client, i, code=code: _join(client, code,
                                                                              f"P{i}"))
        won = [body for status, body in results if status == 201]
        assert len(won) == 1, (round_, results)
        assert sorted(status for status, _ in results) == [201] + [409] * (racers - 1)
        assert all(body["code"] == "SEAT_TAKEN" for status, body in results if status == 409)
        view = clients[round_ % 3].get(f"/v1/games/{gid}").get_json()
        assert view["status"] == "playing"
        assert view["seats"][1]["name"] == won[0]["game"]["seats"][1]["name"]
        winner = clients[1].get(f"/v1/games/{gid}/me", headers=auth(won[0]["token"]))
        assert winner.status_code == 200 and winner.get_json()["seat"] == 1
        raced += gid in conflicts
    assert raced > 0, "no round had two joins reading the seat open at once"


def test_racing_for_two_open_seats_fills_each_once(redis_url: str) -> None:
    apps = _racers(redis_url, 2)
    for _round in range(15):
        created = _create(apps[0].test_client(), ["Ana", None, None])
        code = created["join_code"]
        results = _at_once(apps, 5, lambda client, i, code=code: _join(client, code, f"P{i}"))
        seats = sorted(body["seat"] for status, body in results if status == 201)
        assert seats == [1, 2], results
        assert sum(status == 409 for status, _ in results) == 3


def _redis_dump(redis_url: str) -> bytes:
    """Every key, hash field and value in Redis (lists and strings too), as bytes."""
    r = redis.Redis.from_url(redis_url)
    try:
        parts: list[bytes] = []
        for key in r.keys("*"):
            kind = r.type(key)
            parts.append(key)
            if kind == b"hash":
                parts.extend(x for pair in r.hgetall(key).items() for x in pair)
            elif kind == b"list":
                parts.extend(r.lrange(key, 0, -1))
            elif kind == b"string":
                parts.append(r.get(key) or b"")
        return b"\n".join(parts)
    finally:
        r.close()


def _keyed_join(client: FlaskClient, key: str, body: dict[str, Any]) -> Any:
    return client.post("/v1/join", json=body, headers={"Idempotency-Key": key})


def test_a_retried_join_gets_the_same_seat_and_token_not_a_second_seat(
        client: FlaskClient, redis_url: str) -> None:
    """A join whose answer was lost is sent again with the same key: the same seat and
    token, nothing taken twice, also once the game has dealt (the last seat); the key
    and the token are not in Redis as they were sent."""
    created = _create(client, ["Ana", None, None])
    gid, code = created["game_id"], created["join_code"]
    body = {"code": code, "name": "Bo"}
    first = _keyed_join(client, "join-bo-1", body)
    assert first.status_code == 201, first.get_json()
    assert "Idempotent-Replayed" not in first.headers
    version = _version(client, gid)
    again = _keyed_join(client, "join-bo-1", body)
    assert again.status_code == 201, again.get_json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json() == first.get_json()
    assert again.headers["ETag"] == first.headers["ETag"]
    assert _version(client, gid) == version  # nothing taken twice
    view = client.get(f"/v1/games/{gid}").get_json()
    assert [s["open"] for s in view["seats"]] == [False, False, True]

    # the same key with another body is refused, and takes nothing
    reused = _keyed_join(client, "join-bo-1", {"code": code, "name": "Cy"})
    _problem(reused, 422, "IDEMPOTENCY_KEY_REUSED")
    assert _version(client, gid) == version

    # the last seat: the game deals; its retry still answers as the first did
    last = _keyed_join(client, "join-cy-1", {"code": code, "name": "Cy"})
    assert last.status_code == 201 and last.get_json()["game"]["status"] == "playing"
    retried = _keyed_join(client, "join-cy-1", {"code": code, "name": "Cy"})
    assert retried.status_code == 201, retried.get_json()
    assert retried.get_json() == last.get_json()
    _problem(_keyed_join(client, "join-dee-1", {"code": code, "name": "Dee"}), 409,
             "SEAT_TAKEN")  # a new key is a new join: no seat is left
    for joined in (first, last):
        token = joined.get_json()["token"]
        me = client.get(f"/v1/games/{gid}/me", headers=auth(token))
        assert me.status_code == 200 and me.get_json()["seat"] == joined.get_json()["seat"]

    dump = _redis_dump(redis_url)
    for joined in (first, last):
        assert joined.get_json()["token"].encode() not in dump
    assert b"join-bo-1" not in dump and b"join-cy-1" not in dump


def test_join_idempotency_keys_are_checked(client: FlaskClient) -> None:
    created = _create(client, ["Ana", None])
    gid = created["game_id"]
    before = _version(client, gid)
    bad = _keyed_join(client, "", {"code": created["join_code"], "name": "Bo"})
    _problem(bad, 400)
    bad = _keyed_join(client, "x" * 201, {"code": created["join_code"], "name": "Bo"})
    _problem(bad, 400)
    assert _version(client, gid) == before


def test_retries_racing_one_join_take_one_seat(redis_url: str) -> None:
    """The same keyed join sent by several workers at once takes one seat: every answer
    is that seat and its token."""
    apps = _racers(redis_url, 3)
    for _round in range(10):
        created = _create(apps[0].test_client(), ["Ana", None, None])
        body = {"code": created["join_code"], "name": "Bo"}

        def join(client: FlaskClient, _i: int, body: dict[str, Any] = body) -> Any:
            resp = _keyed_join(client, "same-key", body)
            return resp.status_code, resp.get_json()

        results = _at_once(apps, 4, join)
        assert {status for status, _ in results} == {201}, results
        assert len({(body["seat"], body["token"]) for _, body in results}) == 1
        view = apps[1].test_client().get(f"/v1/games/{created['game_id']}").get_json()
        assert [s["open"] for s in view["seats"]] == [False, False, True]


def test_joins_are_rate_limited_per_address(redis_url: str) -> None:
    client = create_app(_settings(redis_url, join_rate_limits=("3/hour",))).test_client()
    created = _create(client, ["Ana", None, None, None])
    assert _join(client, "ZZZZ-ZZZZ", "Bo")[0] == 404
    assert _join(client, created["join_code"], "Bo")[0] == 201
    assert _join(client, created["join_code"], "Cy")[0] == 201
    resp = client.post("/v1/join", json={"code": created["join_code"], "name": "Di"})
    body = _problem(resp, 429)
    assert "join" in body["detail"] and int(resp.headers["Retry-After"]) > 0
    other = client.get(f"/v1/games/{created['game_id']}").get_json()
    assert [s["open"] for s in other["seats"]] == [False, False, False, True]
    elsewhere = create_app(_settings(redis_url, join_rate_limits=("3/hour",))).test_client()
    _problem(elsewhere.post("/v1/join", json={"code": created["join_code"], "name": "Di"}),
             429)  # counted in Redis: every worker sees the same count


# -- arranged deals and hidden cards --------------------------------------------------------


def test_arranged_deals_closed_only_refuses_them_with_an_open_seat(redis_url: str) -> None:
    deal = {"variant": "basic", "dealer": 1, "deals": [arranged(B_HANDS, "5C")]}
    strict = create_app(_settings(redis_url, arranged_deals="closed_only")).test_client()
    resp = strict.post("/v1/games", json={**deal, "players": ["Ana", None]})
    _problem(resp, 403, "ARRANGED_DEALS_FORBIDDEN")
    assert strict.post("/v1/games", json={**deal, "players": ["Ana", "Bo"]}).status_code == 201
    lenient = create_app(_settings(redis_url)).test_client()
    created = lenient.post("/v1/games", json={**deal, "players": ["Ana", None]}).get_json()
    assert created["game"]["arranged"] is True
    status, joined = _join(lenient, created["join_code"], "Bo")
    assert status == 201 and joined["game"]["arranged"] is True
    assert sorted(joined["game"]["hand"]) == sorted(B_HANDS[1])


def test_a_joiner_is_told_of_an_arranged_deal_before_joining(redis_url: str) -> None:
    """GET /v1/join/{code}: the waiting game as a person sees it before taking a seat."""
    client = create_app(_settings(redis_url)).test_client()
    deal = {"variant": "basic", "dealer": 1, "deals": [arranged(B_HANDS, "5C")]}
    created = client.post("/v1/games", json={**deal, "players": ["Ana", None]}).get_json()
    gid, code = created["game_id"], created["join_code"]
    typed = code.lower().replace("-", " ")
    resp = client.get(f"/v1/join/{typed}")
    assert resp.status_code == 200, resp.get_json()
    preview = resp.get_json()
    assert preview["game_id"] == gid and preview["game"]["arranged"] is True
    assert preview["game"]["status"] == "waiting"
    assert [(s["name"], s["open"]) for s in preview["game"]["seats"]] == [("Ana", False),
                                                                         (None, True)]
    check_waiting_view(preview["game"])
    assert "token" not in resp.get_data(as_text=True)
    assert _version(client, gid) == preview["game"]["version"]  # looking changes nothing
    plain = _create(client, ["Ana", None])
    assert client.get(f"/v1/join/{plain['join_code']}").get_json()["game"]["arranged"] is False
    _problem(client.get("/v1/join/ZZZZ-ZZZZ"), 404)
    assert _join(client, code, "Bo")[0] == 201
    _problem(client.get(f"/v1/join/{code}"), 409, "SEAT_TAKEN")  # the game has started


def test_looking_up_join_codes_counts_as_joining(redis_url: str) -> None:
    client = create_app(_settings(redis_url, join_rate_limits=("2/hour",))).test_client()
    created = _create(client, ["Ana", None])
    assert client.get("/v1/join/ZZZZ-ZZZZ").status_code == 404
    assert client.get(f"/v1/join/{created['join_code']}").status_code == 200
    resp = client.get(f"/v1/join/{created['join_code']}")
    _problem(resp, 429)
    assert int(resp.headers["Retry-After"]) > 0
    assert _join(client, created["join_code"], "Bo")[0] == 429


def test_no_hidden_card_in_a_join_answer_or_a_waiting_view(client: FlaskClient) -> None:
    created = _create(client, ["Ana", None, None], dealer=0)
    gid, code, host = created["game_id"], created["join_code"], created["host_token"]
    ana = created["seats"][0]["token"]
    check_waiting_view(created["game"])
    assert card_strings(created) == []
    status, first = _join(client, code, "Bo")
    assert status == 201
    check_join_answer(first, [])
    for view in (client.get(f"/v1/games/{gid}").get_json(),
                 client.get(f"/v1/games/{gid}/me", headers=auth(ana)).get_json(),
                 client.get(f"/v1/games/{gid}/me", headers=auth(first["token"])).get_json(),
                 client.post(f"/v1/games/{gid}/seats/1/open", headers=auth(host)).get_json()):
        check_waiting_view(view)
    assert card_strings(client.get(f"/v1/games/{gid}/events").get_json()) == []
    status, first = _join(client, code, "Bo")
    assert status == 201
    status, last = _join(client, code, "Cy")
    assert status == 201
    others = [client.get(f"/v1/games/{gid}/me", headers=auth(t)).get_json()["hand"]
              for t in (ana, first["token"])]
    check_join_answer(last, others)
    mine = client.get(f"/v1/games/{gid}/me", headers=auth(last["token"])).get_json()
    assert sorted(mine["hand"]) == sorted(last["game"]["hand"])
    public_log = client.get(f"/v1/games/{gid}/events").get_json()
    upcards = [ev["upcard"] for e in public_log["entries"] for ev in e["events"]
               if ev.get("upcard")]
    assert card_strings(public_log) == upcards
    seat_log = client.get(f"/v1/games/{gid}/events", headers=auth(last["token"])).get_json()
    dealt = [ev for e in seat_log["entries"] for ev in e["events"] if ev["type"] == "dealt"]
    assert sorted(dealt[0]["hand"]) == sorted(last["game"]["hand"])
    cancelled = client.delete(f"/v1/games/{gid}", headers=auth(host)).get_json()
    assert card_strings({k: v for k, v in cancelled.items() if k != "discard_top"}) == []


# -- the host token ------------------------------------------------------------------------


def _seat_calls(gid: str) -> list[tuple[str, str, dict[str, Any] | None, dict[str, str]]]:
    """Every endpoint that a seat's own token (only) opens: method, path, body, headers."""
    return [("get", f"/v1/games/{gid}/me", None, {}),
            ("post", f"/v1/games/{gid}/moves", {"type": "draw", "source": "stock"}, {}),
            ("post", f"/v1/games/{gid}/moves?dry_run=true", {"type": "draw", "source": "stock"},
             {}),
            ("get", f"/v1/games/{gid}/legal-moves", None, {}),
            ("post", f"/v1/games/{gid}/me/token", None, {}),
            ("post", f"/v1/games/{gid}/rematch", None, {}),
            ("post", f"/v1/games/{gid}/stream-tickets", None, {}),
            ("get", f"/v1/games/{gid}/events", None, SSE)]


def _matrix_game(client: FlaskClient, kind: str) -> tuple[str, str, str]:
    """A game (id, host token, seat 0's token): every seat named, one seat open, or
    finished."""
    if kind == "finished":
        gid, tokens, host = _finished(client)
        return gid, host, tokens[0]
    created = _create(client, ["Ana", "Bo"] if kind == "named" else ["Ana", None])
    return created["game_id"], created["host_token"], created["seats"][0]["token"]


@pytest.mark.parametrize("kind", ["named", "open", "finished"])
def test_the_host_token_is_refused_by_every_seat_endpoint(
        client: FlaskClient, kind: str) -> None:
    """The host token on a seat endpoint is 403 and says it is the host token (another
    game's too); no token, an unknown seat token, garbage and a made-up token shaped as
    a host token (``<game>.host.<anything>``, not any game's host token) are 401: a host
    token is told from an unknown one by the game it names, never by its shape. The event
    log without a token is public, with the host token 403 (as JSON and as a stream)."""
    gid, host, seat = _matrix_game(client, kind)
    other = _create(client, ["Cy", None])
    before = _version(client, gid)
    host_secret, seat_secret = host.rsplit(".", 1)[1], seat.rsplit(".", 1)[1]
    # shaped as host tokens, but no game's: unknown tokens, as made-up seat tokens are
    made_up = [f"{gid}.host.forged", f"{gid}.host.{seat_secret}", f"{gid}.host.{host_secret}x",
               f"{other['game_id']}.host.{host_secret}", "nosuchgame.host.x", ".host.",
               f"{gid}.HOST.{host_secret}"]
    for method, path, body, headers in _seat_calls(gid):
        call: Callable[..., Any] = getattr(client, method)
        for host_token in (host, other["host_token"]):  # this game's, another game's
            problem = _problem(call(path, headers={**headers, **auth(host_token)}, json=body),
                               403)
            assert "host token" in problem["detail"], (path, problem)
        for unknown in (f"{gid}.0.forged", f"{gid}.1.{host_secret}", "garbage", *made_up):
            problem = _problem(call(path, headers={**headers, **auth(unknown)}, json=body),
                               401)
            assert "host token" not in problem["detail"], (path, unknown, problem)
        if not path.endswith("/events"):
            _problem(call(path, headers=headers, json=body), 401)
    events = f"/v1/games/{gid}/events"
    problem = _problem(client.get(events, headers=auth(host)), 403)
    assert "host token" in problem["detail"]
    for unknown in (f"{gid}.0.forged", *made_up):
        _problem(client.get(events, headers=auth(unknown)), 401)
    assert client.get(events).status_code == 200
    for method, path in (("delete", f"/v1/games/{gid}"),
                         ("post", f"/v1/games/{gid}/seats/1/open")):
        call = getattr(client, method)
        assert "seat token" in _problem(call(path, headers=auth(seat)), 403)["detail"]
        _problem(call(path), 401)
        _problem(call(path, headers=auth(f"{gid}.host.forged")), 401)
        _problem(call(path, headers=auth("garbage")), 401)
    _problem(client.delete(f"/v1/games/{gid}", headers=auth(other["host_token"])), 403)
    _problem(client.delete("/v1/games/nosuchgame", headers=auth(host)), 404)
    assert _version(client, gid) == before


def test_the_host_cancels_a_waiting_game(client: FlaskClient) -> None:
    created = _create(client, ["Ana", None])
    gid, host = created["game_id"], created["host_token"]
    resp = client.delete(f"/v1/games/{gid}", headers=auth(host))
    assert resp.status_code == 200 and resp.get_json()["status"] == "aborted"
    assert client.get(f"/v1/games/{gid}").get_json()["status"] == "aborted"
    ana = created["seats"][0]["token"]
    _problem(client.post(f"/v1/games/{gid}/moves", headers=auth(ana),
                         json={"type": "draw", "source": "stock"}), 422, "GAME_FINISHED")
    assert client.get(f"/v1/games/{gid}/verify").get_json()["verified"] is True
    _problem(client.delete(f"/v1/games/{gid}", headers=auth(host)), 409, "GAME_FINISHED")
    _problem(client.post("/v1/join", json={"code": created["join_code"], "name": "Bo"}), 409,
             "SEAT_TAKEN")
    _problem(client.post(f"/v1/games/{gid}/seats/0/open", headers=auth(host)), 409,
             "GAME_STARTED")


def test_the_host_cancels_a_game_in_play_and_moves_are_refused(client: FlaskClient) -> None:
    created = _create(client, ["Ana", "Bo"], dealer=1, deals=[arranged(B_HANDS, "5C")])
    gid, host = created["game_id"], created["host_token"]
    ana = created["seats"][0]["token"]
    resp = client.delete(f"/v1/games/{gid}", headers=auth(host))
    view = resp.get_json()
    assert resp.status_code == 200, view
    assert view["status"] == "aborted" and view["winners"] is None and view["turn"] is None
    _problem(client.post(f"/v1/games/{gid}/moves", headers=auth(ana), json=GOING_OUT[0]), 422,
             "GAME_FINISHED")
    _problem(client.delete(f"/v1/games/{gid}", headers=auth(host)), 409, "GAME_FINISHED")
    _problem(client.post(f"/v1/games/{gid}/rematch", headers=auth(ana)), 409,
             "GAME_NOT_FINISHED")


def test_a_finished_game_cannot_be_cancelled(client: FlaskClient) -> None:
    gid, _tokens, host = _finished(client)
    before = _version(client, gid)
    _problem(client.delete(f"/v1/games/{gid}", headers=auth(host)), 409, "GAME_FINISHED")
    assert client.get(f"/v1/games/{gid}").get_json()["status"] == "finished"
    assert _version(client, gid) == before


def test_the_host_reopens_a_seat_while_the_game_waits(client: FlaskClient) -> None:
    created = _create(client, ["Ana", None, None])
    gid, host, code = created["game_id"], created["host_token"], created["join_code"]
    status, bo = _join(client, code, "Bo")
    assert status == 201
    resp = client.post(f"/v1/games/{gid}/seats/1/open", headers=auth(host))
    assert resp.status_code == 200, resp.get_json()
    assert resp.get_json()["seats"][1] == {**resp.get_json()["seats"][1], "name": None,
                                           "open": True}
    _problem(client.get(f"/v1/games/{gid}/me", headers=auth(bo["token"])), 401)
    _problem(client.post(f"/v1/games/{gid}/seats/7/open", headers=auth(host)), 400)
    status, again = _join(client, code, "Bea", seat=1)
    assert status == 201 and again["seat"] == 1
    assert _join(client, code, "Cy")[0] == 201  # dealt
    _problem(client.post(f"/v1/games/{gid}/seats/1/open", headers=auth(host)), 409,
             "GAME_STARTED")
    assert client.get(f"/v1/games/{gid}/me", headers=auth(again["token"])).status_code == 200


# -- token rotation ------------------------------------------------------------------------


@pytest.mark.parametrize("limits", [(), ("1000/minute",)])
def test_a_rotated_token_is_refused_by_every_worker(redis_url: str,
                                                    limits: tuple[str, ...]) -> None:
    """Two app instances (workers) both hold the game and have verified the seat's token
    (with rate limits on, the limiter remembers it as verified too); rotated on one, the
    old token is refused by both."""
    one, two = (create_app(_settings(redis_url, rate_limits=limits)).test_client()
                for _ in range(2))
    created = _create(one, ["Ana", "Bo"], dealer=1, deals=[arranged(B_HANDS, "5C")])
    gid = created["game_id"]
    old = created["seats"][0]["token"]
    for client in (one, two):  # both workers hold the game and its tokens
        assert client.get(f"/v1/games/{gid}/me", headers=auth(old)).status_code == 200
    resp = one.post(f"/v1/games/{gid}/me/token", headers=auth(old))
    assert resp.status_code == 200, resp.get_json()
    new = resp.get_json()["token"]
    assert resp.get_json()["seat"] == 0 and new != old and new.startswith(f"{gid}.0.")
    for client in (two, one):
        _problem(client.post(f"/v1/games/{gid}/moves", headers=auth(old), json=GOING_OUT[0]),
                 401)
        _problem(client.post(f"/v1/games/{gid}/moves?dry_run=true", headers=auth(old),
                             json=GOING_OUT[0]), 401)
        _problem(client.get(f"/v1/games/{gid}/me", headers=auth(old)), 401)
        _problem(client.get(f"/v1/games/{gid}/legal-moves", headers=auth(old)), 401)
        _problem(client.post(f"/v1/games/{gid}/me/token", headers=auth(old)), 401)
    resp = two.post(f"/v1/games/{gid}/moves", headers=auth(new), json=GOING_OUT[0])
    assert resp.status_code == 200, resp.get_json()
    resp = one.post(f"/v1/games/{gid}/moves", headers=auth(new), json=GOING_OUT[1])
    assert resp.status_code == 200, resp.get_json()
    assert one.get(f"/v1/games/{gid}/verify").get_json()["verified"] is True


def _rotate(client: FlaskClient, gid: str, token: str, key: str | None = None,
            **kwargs: Any) -> Any:
    headers = auth(token) if key is None else {**auth(token), "Idempotency-Key": key}
    return client.post(f"/v1/games/{gid}/me/token", headers=headers, **kwargs)


def test_a_retried_rotation_gets_the_new_token_only_with_the_old_token_and_key(
        client: FlaskClient, redis_url: str) -> None:
    """A rotation whose answer was lost, sent again with the old token and the same key,
    is answered the same new token byte for byte (``Idempotent-Replayed: true``) and
    rotates nothing twice. The kept answer is bound to the old token: the old token
    without the key or with another is 401, another seat's or a made-up token with the
    key are answered as without it, and Redis holds neither the key, nor its hash alone,
    nor the new token."""
    created = _create(client, ["Ana", "Bo"], dealer=1, deals=[arranged(B_HANDS, "5C")])
    gid = created["game_id"]
    old, bo = (s["token"] for s in created["seats"])
    first = _rotate(client, gid, old, "rotate-ana-1")
    assert first.status_code == 200, first.get_json()
    assert "Idempotent-Replayed" not in first.headers
    new = first.get_json()["token"]
    assert new.startswith(f"{gid}.0.") and new != old
    version = _version(client, gid)
    for _retry in range(2):
        again = _rotate(client, gid, old, "rotate-ana-1")
        assert again.status_code == 200, again.get_json()
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.get_data() == first.get_data()
        assert again.headers["Cache-Control"] == "no-store"
    assert _version(client, gid) == version  # rotated once
    assert client.get(f"/v1/games/{gid}/me", headers=auth(new)).status_code == 200

    # the old token without the key, or with another key, is the 401 it always was
    _problem(_rotate(client, gid, old), 401)
    _problem(_rotate(client, gid, old, "rotate-ana-2"), 401)
    _problem(client.get(f"/v1/games/{gid}/me", headers={**auth(old),
                                                         "Idempotency-Key": "rotate-ana-1"}),
             401)
    # the same key with a made-up token, the host's, or another body: never the new token
    secret = old.rsplit(".", 1)[1]
    one_off = secret[:-1] + ("B" if secret.endswith("A") else "A")  # never the token itself
    for forged in (f"{gid}.0.forged", f"{gid}.0.{one_off}"):
        assert "token" not in _problem(_rotate(client, gid, forged, "rotate-ana-1"), 401)
    _problem(_rotate(client, gid, created["host_token"], "rotate-ana-1"), 403)
    _problem(_rotate(client, gid, old, "rotate-ana-1", json={"seat": 1}), 422,
             "IDEMPOTENCY_KEY_REUSED")
    assert _version(client, gid) == version

    dump = _redis_dump(redis_url)
    assert new.rsplit(".", 1)[1].encode() not in dump
    assert b"rotate-ana-1" not in dump
    assert hashlib.sha256(b"rotate-ana-1").hexdigest().encode() not in dump

    # another seat's token with the same key is that seat's own rotation
    theirs = _rotate(client, gid, bo, "rotate-ana-1")
    assert theirs.status_code == 200 and "Idempotent-Replayed" not in theirs.headers
    assert theirs.get_json()["seat"] == 1 and theirs.get_json()["token"] != new
    # and the new token with the key rotates again: its own first request
    newer = _rotate(client, gid, new, "rotate-ana-1")
    assert newer.status_code == 200 and "Idempotent-Replayed" not in newer.headers
    assert newer.get_json()["token"] not in (new, old)
    _problem(client.get(f"/v1/games/{gid}/me", headers=auth(new)), 401)
    # the first key's replay is still only the (now stale) token it answered
    stale = _rotate(client, gid, old, "rotate-ana-1")
    assert stale.get_data() == first.get_data()
    assert _version(client, gid) == version + 2


def test_retries_racing_one_rotation_rotate_once(redis_url: str) -> None:
    """The same keyed rotation sent by several workers at once rotates the token once:
    every answer is the same new token, and the version moves on by one."""
    apps = _racers(redis_url, 3)
    for _round in range(5):
        created = _create(apps[0].test_client(), ["Ana", "Bo"])
        gid, old = created["game_id"], created["seats"][0]["token"]
        def rotate(client: FlaskClient, _i: int, gid: str = gid, old: str = old) -> Any:
            resp = _rotate(client, gid, old, "same-key")
            return resp.status_code, resp.get_data()

        results = _at_once(apps, 4, rotate)
        assert {status for status, _ in results} == {200}, results
        assert len({body for _, body in results}) == 1
        assert _version(apps[1].test_client(), gid) == 1


def test_a_token_of_a_waiting_game_can_be_rotated(client: FlaskClient) -> None:
    created = _create(client, ["Ana", None])
    gid, old = created["game_id"], created["seats"][0]["token"]
    new = client.post(f"/v1/games/{gid}/me/token", headers=auth(old)).get_json()["token"]
    _problem(client.get(f"/v1/games/{gid}/me", headers=auth(old)), 401)
    assert client.get(f"/v1/games/{gid}/me", headers=auth(new)).status_code == 200
    assert _join(client, created["join_code"], "Bo")[0] == 201
    assert client.get(f"/v1/games/{gid}/me", headers=auth(new)).get_json()["status"] == \
        "playing"


# -- rematch -------------------------------------------------------------------------------


def _finished(client: FlaskClient, **rules: Any) -> tuple[str, list[str], str]:
    created = _create(client, ["Ana", "Bo"], dealer=1, deals=[arranged(B_HANDS, "5C")],
                      rules={"match_end": {"deals": 1}, **rules})
    gid = created["game_id"]
    tokens = [s["token"] for s in created["seats"]]
    for move in GOING_OUT:
        resp = client.post(f"/v1/games/{gid}/moves", headers=auth(tokens[0]), json=move)
        assert resp.status_code == 200, resp.get_json()
    assert client.get(f"/v1/games/{gid}").get_json()["status"] == "finished"
    return gid, tokens, created["host_token"]


def test_a_rematch_is_one_new_game_with_each_seat_its_own_token(client: FlaskClient) -> None:
    gid, tokens, host = _finished(client)
    assert "rematch" not in client.get(f"/v1/games/{gid}").get_json()
    _problem(client.post(f"/v1/games/{gid}/rematch", headers=auth(host)), 403)
    first = client.post(f"/v1/games/{gid}/rematch", headers=auth(tokens[1]))
    assert first.status_code == 201, first.get_json()
    one = first.get_json()
    assert set(one) == {"game_id", "seat", "token"} and one["seat"] == 1
    new_id = one["game_id"]
    assert new_id != gid and one["token"].startswith(f"{new_id}.1.")
    second = client.post(f"/v1/games/{gid}/rematch", headers=auth(tokens[0])).get_json()
    assert second["game_id"] == new_id and second["seat"] == 0
    assert second["token"].startswith(f"{new_id}.0.")
    _problem(client.post(f"/v1/games/{gid}/rematch", headers=auth(tokens[0])), 409,
             "REMATCH_CLAIMED")
    assert client.get(f"/v1/games/{gid}").get_json()["rematch"] == new_id
    assert client.get(f"/v1/games/{gid}/me", headers=auth(tokens[0])).get_json()[
        "rematch"] == new_id
    new = client.get(f"/v1/games/{new_id}").get_json()
    assert new["status"] == "playing" and new["arranged"] is False
    assert [s["name"] for s in new["seats"]] == ["Ana", "Bo"]
    assert new["rules"] == client.get(f"/v1/games/{gid}").get_json()["rules"]
    assert new["dealer"] == 0  # the first dealer was seat 1: one seat to the left
    for seat, token in ((0, second["token"]), (1, one["token"])):
        assert client.get(f"/v1/games/{new_id}/me", headers=auth(token)).get_json()[
            "seat"] == seat
    # a rematch has no host: its seats play it out (or resign)
    _problem(client.delete(f"/v1/games/{new_id}", headers=auth(host)), 403)


def test_a_retried_rematch_gets_the_same_token_again(client: FlaskClient) -> None:
    gid, tokens, _host = _finished(client)
    key = {"Idempotency-Key": "rematch-ana"}
    first = client.post(f"/v1/games/{gid}/rematch", headers={**auth(tokens[0]), **key})
    assert first.status_code == 201, first.get_json()
    version = _version(client, gid)
    again = client.post(f"/v1/games/{gid}/rematch", headers={**auth(tokens[0]), **key})
    assert again.status_code == 201, again.get_json()
    assert again.get_json() == first.get_json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert _version(client, gid) == version
    # without the key, a second request is the 409 it always was
    _problem(client.post(f"/v1/games/{gid}/rematch", headers=auth(tokens[0])), 409,
             "REMATCH_CLAIMED")
    # the key is the seat's: Bo's request with the same key is Bo's own rematch
    bo = client.post(f"/v1/games/{gid}/rematch", headers={**auth(tokens[1]), **key})
    assert bo.status_code == 201 and bo.get_json()["seat"] == 1
    assert bo.get_json()["game_id"] == first.get_json()["game_id"]
    new_id, token = first.get_json()["game_id"], first.get_json()["token"]
    me = client.get(f"/v1/games/{new_id}/me", headers=auth(token))
    assert me.status_code == 200 and me.get_json()["seat"] == 0


def test_a_rematch_of_an_unfinished_game_is_refused(client: FlaskClient) -> None:
    created = _create(client, ["Ana", "Bo"])
    gid, ana = created["game_id"], created["seats"][0]["token"]
    before = _version(client, gid)
    _problem(client.post(f"/v1/games/{gid}/rematch", headers=auth(ana)), 409,
             "GAME_NOT_FINISHED")
    waiting = _create(client, ["Ana", None])
    _problem(client.post(f"/v1/games/{waiting['game_id']}/rematch",
                         headers=auth(waiting["seats"][0]["token"])), 409, "GAME_NOT_FINISHED")
    assert _version(client, gid) == before
    assert "rematch" not in client.get(f"/v1/games/{gid}").get_json()


def test_the_rematch_deals_first_from_the_seat_left_of_the_first_dealer(
        client: FlaskClient) -> None:
    """Three seats (with two, left and right are the same seat): the first dealer was
    seat 1, so the rematch's is seat 2 (C-SEAT: seats are numbered clockwise, the deal
    passes left), and seat 0, on its left, plays first."""
    created = _create(client, ["Ana", "Bo", "Cy"], dealer=1)
    gid, tokens = created["game_id"], [s["token"] for s in created["seats"]]
    resp = client.post(f"/v1/games/{gid}/moves", headers=auth(tokens[0]),
                       json={"type": "resign"})
    assert resp.status_code == 200 and resp.get_json()["game"]["status"] == "finished"
    got = client.post(f"/v1/games/{gid}/rematch", headers=auth(tokens[2]))
    assert got.status_code == 201, got.get_json()
    new = client.get(f"/v1/games/{got.get_json()['game_id']}").get_json()
    assert new["dealer"] == 2 and new["hand_number"] == 1
    assert new["turn"]["seat"] == 0
    assert [s["name"] for s in new["seats"]] == ["Ana", "Bo", "Cy"]


def test_a_rematch_of_a_clocked_game_has_a_clock_from_its_first_turn(
        app: Flask, client: FlaskClient) -> None:
    """A rematch made an hour after its clocked game ended: its first turn has a deadline
    from the store's clock when it was made, and once that has passed the other seat may
    claim the match."""
    store = app.extensions["referee"].store
    try:
        gid, tokens, _host = _finished(client, clock={"turn_seconds": 30})
        store.clock_offset_ms = 3_600_000
        mine = [client.post(f"/v1/games/{gid}/rematch", headers=auth(t)).get_json()
                for t in tokens]
        new_id = mine[0]["game_id"]
        new_tokens = {m["seat"]: m["token"] for m in mine}
        view = client.get(f"/v1/games/{new_id}").get_json()
        assert view["rules"]["clock"] == {"turn_seconds": 30}
        deadline, late = view["turn"]["deadline"], view["turn"]["seat"]
        assert deadline is not None and view["turn"]["expired"] is False
        claim = {"type": "claim_timeout"}
        other = auth(new_tokens[1 - late])
        _problem(client.post(f"/v1/games/{new_id}/moves", headers=other, json=claim), 422,
                 "CLOCK_NOT_EXPIRED")
        store.clock_offset_ms = 3_600_000 + 31_000
        resp = client.post(f"/v1/games/{new_id}/moves", headers=other, json=claim)
        assert resp.status_code == 200, resp.get_json()
        assert resp.get_json()["game"]["end"] == {"reason": "timeout", "seat": late}
        assert resp.get_json()["game"]["winners"] == [1 - late]
    finally:
        store.clock_offset_ms = 0


def test_a_rematch_keeps_no_token_in_redis_as_it_was_given(
        client: FlaskClient, redis_url: str) -> None:
    """A seat's rematch token is made when that seat asks: before it asks, Redis holds
    nothing of it, and afterwards only its hash (the kept answer of a request with an
    Idempotency-Key holds it sealed with the key)."""
    created = _create(client, ["Ana", "Bo", "Cy"], dealer=1)
    gid, tokens = created["game_id"], [s["token"] for s in created["seats"]]
    resp = client.post(f"/v1/games/{gid}/moves", headers=auth(tokens[1]),
                       json={"type": "resign"})
    assert resp.status_code == 200
    bo = client.post(f"/v1/games/{gid}/rematch",
                     headers={**auth(tokens[1]), "Idempotency-Key": "rematch-bo"})
    assert bo.status_code == 201, bo.get_json()
    new_id = bo.get_json()["game_id"]
    early = _redis_dump(redis_url)  # Ana and Cy have not asked yet
    ana = client.post(f"/v1/games/{gid}/rematch", headers=auth(tokens[0])).get_json()
    cy = client.post(f"/v1/games/{gid}/rematch",
                     headers={**auth(tokens[2]), "Idempotency-Key": "rematch-cy"}).get_json()
    assert {ana["game_id"], cy["game_id"]} == {new_id}
    given = [bo.get_json()["token"], ana["token"], cy["token"]]
    secrets = [t.rsplit(".", 1)[1].encode() for t in given]
    assert not any(s in early for s in secrets[1:]), "a rematch token was kept unclaimed"
    late = _redis_dump(redis_url)
    for secret in secrets:
        assert secret not in late
    for seat, token in ((1, given[0]), (0, given[1]), (2, given[2])):
        me = client.get(f"/v1/games/{new_id}/me", headers=auth(token))
        assert me.status_code == 200 and me.get_json()["seat"] == seat
        assert hashlib.sha256(token.encode()).hexdigest().encode() in late
    # the rematch's own log says who took a seat of it, the finished game's who made it
    joined = [e for entry in client.get(f"/v1/games/{new_id}/events").get_json()["entries"]
              for e in entry["events"]]
    assert joined == [{"type": "rematch_joined", "game_id": new_id, "seat": s}
                      for s in (1, 0, 2)]
    made = client.get(f"/v1/games/{gid}/events").get_json()["entries"][-1]["events"]
    assert made == [{"type": "rematch", "game_id": new_id, "seat": 1}]


def test_seats_racing_for_a_rematch_share_one_new_game(redis_url: str) -> None:
    apps = _racers(redis_url, 2)
    for _round in range(8):
        gid, tokens, _host = _finished(apps[0].test_client())

        def ask(client: FlaskClient, i: int, gid: str = gid, tokens: list[str] = tokens
                ) -> Any:
            resp = client.post(f"/v1/games/{gid}/rematch", headers=auth(tokens[i]))
            return resp.status_code, resp.get_json()

        answers = _at_once(apps, 2, ask)
        assert {status for status, _ in answers} == {201}, answers
        results = [body for _, body in answers]
        assert len(results) == 2
        assert results[0]["game_id"] == results[1]["game_id"]
        assert sorted(r["seat"] for r in results) == [0, 1]
