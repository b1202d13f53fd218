"""Who may do what, and abuse limits: the authorization matrix, rate limits (429 +
Retry-After, shared through Redis), API keys for creating games, body and list limits."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from service.app import create_app
from service.config import Settings
from service.rules import GameState
from tests.support.basic_game import deal_a


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


def _seat_app(redis_url: str, limit: str = "5/minute") -> FlaskClient:
    return create_app(Settings(redis_url=redis_url, rate_limits=(limit,),
                               create_rate_limits=())).test_client()


def test_a_verified_seat_has_one_budget_across_endpoints_and_workers(redis_url: str) -> None:
    """A seat whose token a worker has verified counts against the seat, on every endpoint
    (on its own game in the load of the game, elsewhere in a round trip of its own): one
    budget all the same, including requests refused early (a malformed move) and requests
    from another worker. A worker's first request of a seat counts against the address,
    which keeps a budget of its own."""
    client = _seat_app(redis_url)
    game = _game(client)  # the address: 1
    gid, token = game["game_id"], game["seats"][0]["token"]
    auth = {"Authorization": f"Bearer {token}"}
    assert client.get(f"/v1/games/{gid}/me", headers=auth).status_code == 200  # address: 2
    assert client.get(f"/v1/games/{gid}/legal-moves", headers=auth).status_code == 200  # 1
    assert client.post(f"/v1/games/{gid}/moves", json={"type": "fly"},
                       headers=auth).status_code == 400  # 2, counted as it leaves
    assert client.get("/v1/variants", headers=auth).status_code == 200  # 3
    other_worker = _seat_app(redis_url)
    assert other_worker.get(f"/v1/games/{gid}/me",
                            headers=auth).status_code == 200  # address: 3
    assert other_worker.get(f"/v1/games/{gid}/legal-moves",
                            headers=auth).status_code == 200  # 4
    assert other_worker.post(f"/v1/games/{gid}/moves", json={"type": "draw", "source": "stock"},
                             headers=auth).status_code == 200  # 5
    refused = client.get(f"/v1/games/{gid}/me", headers=auth)
    assert refused.status_code == 429
    assert refused.content_type == "application/problem+json"
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert "5/minute" in refused.get_json()["detail"]
    for reply in (other_worker.post(f"/v1/games/{gid}/moves",
                                    json={"type": "discard", "card": "AS"}, headers=auth),
                  other_worker.get("/v1/variants", headers=auth)):
        assert reply.status_code == 429
    # nothing was applied by the refused move; the other seat (verified by the game this
    # worker holds) and the address have budgets of their own
    bo = {"Authorization": f"Bearer {game['seats'][1]['token']}"}
    assert client.get(f"/v1/games/{gid}/me", headers=bo).get_json()["version"] == 1  # Bo: 1
    assert [client.get("/v1/variants").status_code for _ in range(3)] == [200, 200, 429]
    assert client.get(f"/v1/games/{gid}/legal-moves", headers=bo).status_code == 200  # Bo: 2


def _random_tokens(gid: str) -> Iterator[str]:
    """Bearer tokens no one was given: of the game (each seat), of no game, malformed."""
    while True:
        secret = uuid.uuid4().hex
        yield from (f"{gid}.0.{secret}", f"{gid}.1.{secret}", f"nosuchgame.0.{secret}",
                    f"{secret}", f"{gid}.x.{secret}", f"{gid}.0.{secret}.{secret}")


def test_a_new_token_on_each_request_earns_no_fresh_allowance(redis_url: str) -> None:
    """A token the service has not verified is counted against the client address: a new
    random one on each request is still one caller, on every endpoint, and once over the
    limit it is refused by every worker. A seat the worker has verified keeps its own
    budget, even from that address."""
    client = _seat_app(redis_url)
    game = _game(client)
    gid = game["game_id"]
    ana = {"Authorization": f"Bearer {game['seats'][0]['token']}"}
    assert client.get(f"/v1/games/{gid}/me", headers=ana).status_code == 200  # verified
    paths = [("GET", "/v1/variants"), ("GET", f"/v1/games/{gid}/me"),
             ("GET", f"/v1/games/{gid}/legal-moves"), ("POST", f"/v1/games/{gid}/moves"),
             ("GET", f"/v1/games/{gid}/events"), ("GET", f"/v1/games/{gid}")]
    flood = {"REMOTE_ADDR": "10.9.8.7"}
    tokens = _random_tokens(gid)
    statuses = []
    for i in range(60):
        method, path = paths[i % len(paths)]
        reply = client.open(path, method=method, environ_base=flood,
                            json={"type": "draw", "source": "stock"} if method == "POST"
                            else None, headers={"Authorization": f"Bearer {next(tokens)}"})
        statuses.append(reply.status_code)
    assert 429 not in statuses[:5], statuses
    assert statuses[5:] == [429] * 55, statuses
    other_worker = _seat_app(redis_url)
    assert other_worker.get(f"/v1/games/{gid}", environ_base=flood).status_code == 429
    assert client.get(f"/v1/games/{gid}/me", headers=ana,
                      environ_base=flood).get_json()["version"] == 0
    assert client.get(f"/v1/games/{gid}").get_json()["version"] == 0  # nothing applied


def test_requests_on_an_unknown_game_use_up_the_budget_too(redis_url: str) -> None:
    client = _seat_app(redis_url, "3/minute")
    auth = {"Authorization": "Bearer nosuchgame.0.secret"}
    statuses = [client.get("/v1/games/nosuchgame/me", headers=auth).status_code
                for _ in range(4)]
    assert statuses == [404, 404, 404, 429]


def _commands_of(redis_url: str, act: Callable[[], None]) -> tuple[list[str], set[str]]:
    """What Redis MONITOR sees while ``act`` runs: the commands clients send (their names,
    in order) and the commands their scripts run (``client_type`` ``lua``)."""
    monitored = redis.Redis.from_url(redis_url)
    marker = redis.Redis.from_url(redis_url)
    marker.ping()  # connected before the watch starts
    sent: list[dict[str, Any]] = []
    end = uuid.uuid4().hex

    def watch(ready: threading.Event) -> None:
        with monitored.monitor() as monitor:
            ready.set()
            for command in monitor.listen():
                if end in command["command"]:
                    return
                sent.append(command)

    ready = threading.Event()
    watcher = threading.Thread(target=watch, args=(ready,))
    watcher.start()
    assert ready.wait(5)
    time.sleep(0.2)
    act()
    marker.echo(end)
    watcher.join(10)
    monitored.close()
    marker.close()
    from_clients = [c["command"].split()[0].upper() for c in sent
                    if c.get("client_type") != "lua"]
    in_scripts = {c["command"].split()[0].upper() for c in sent
                  if c.get("client_type") == "lua"}
    return from_clients, in_scripts


def _watched_move(client: FlaskClient, redis_url: str, gid: str, headers: dict[str, str],
                  move: dict[str, Any]) -> tuple[dict[str, Any], list[str], set[str]]:
    """POST ``move`` while Redis MONITOR watches: the game view it answers (a 200), the
    commands clients sent and the commands scripts ran meanwhile (:func:`_commands_of`)."""
    replies = []

    def post() -> None:
        replies.append(client.post(f"/v1/games/{gid}/moves", json=move, headers=headers))

    from_clients, in_scripts = _commands_of(redis_url, post)
    assert replies[0].status_code == 200, replies[0].get_json()
    view: dict[str, Any] = replies[0].get_json()["game"]
    return view, from_clients, in_scripts


def test_a_move_on_a_held_state_is_one_round_trip_that_counts_and_commits(
        redis_url: str) -> None:
    """The worker holds the game's current state (it read it for GET /me): the move is
    applied to it and committed at once, and the commit script counts the seat's rate
    limits — one script call, no load, no round trip for the limiter."""
    client = _seat_app(redis_url, "100/second")
    game = _game(client)
    gid, token = game["game_id"], game["seats"][0]["token"]
    auth = {"Authorization": f"Bearer {token}"}
    assert client.get(f"/v1/games/{gid}/me", headers=auth).status_code == 200
    view, from_clients, in_scripts = _watched_move(client, redis_url, gid, auth,
                                                   {"type": "draw", "source": "stock"})
    assert view["version"] == 1
    assert from_clients == ["EVALSHA"], from_clients
    assert {"INCR", "HSET", "RPUSH"} <= in_scripts
    assert "HMGET" not in in_scripts  # nothing loaded


def test_a_wrong_token_on_a_held_game_is_refused_by_the_stored_game(redis_url: str) -> None:
    """The worker holds the game; a token with the game's id and a wrong secret is still
    401 (the stored game says so, and its load counts the caller), and nothing is applied."""
    client = _seat_app(redis_url, "100/second")
    game = _game(client)
    gid, token = game["game_id"], game["seats"][0]["token"]
    assert client.get(f"/v1/games/{gid}/me",
                      headers={"Authorization": f"Bearer {token}"}).status_code == 200
    forged = {"Authorization": f"Bearer {gid}.0.{'x' * 32}"}
    reply = client.post(f"/v1/games/{gid}/moves", json={"type": "draw", "source": "stock"},
                        headers=forged)
    assert reply.status_code == 401
    assert reply.content_type == "application/problem+json"
    assert client.get(f"/v1/games/{gid}").get_json()["version"] == 0


def _arranged_game(client: FlaskClient) -> tuple[str, dict[str, str]]:
    """Deal A of test_api (seat 0 plays first, holding a run and a set): its id and
    seat 0's Authorization header."""
    reply = client.post("/v1/games", json={"variant": "basic", "players": ["Ana", "Bo"],
                                           "dealer": 1, "deals": [deal_a()]})
    assert reply.status_code == 201
    game = reply.get_json()
    return game["game_id"], {"Authorization": f"Bearer {game['seats'][0]['token']}"}


def _log(client: FlaskClient, gid: str) -> list[tuple[int, str]]:
    log = client.get(f"/v1/games/{gid}/events?after=0").get_json()
    return [(e["version"], e["move"]["type"]) for e in log["entries"]]


def test_a_move_its_stale_held_state_refuses_is_checked_against_the_stored_one(
        redis_url: str) -> None:
    """Another worker moved the game since this one read it, and the state held here refuses
    the move (Ana has not drawn in it): the game is loaded and the move applied to the stored
    state and committed — two script calls — once, at the right version."""
    client = _seat_app(redis_url, "100/second")
    other_worker = _seat_app(redis_url, "100/second")
    gid, ana = _arranged_game(client)
    assert client.get(f"/v1/games/{gid}/me", headers=ana).status_code == 200  # held: v0
    assert other_worker.post(f"/v1/games/{gid}/moves", json={"type": "draw", "source": "stock"},
                             headers=ana).status_code == 200
    view, from_clients, in_scripts = _watched_move(client, redis_url, gid, ana,
                                                   {"type": "discard", "card": "KD"})
    assert view["version"] == 2
    assert from_clients == ["EVALSHA", "EVALSHA"], from_clients
    assert {"HMGET", "RPUSH"} <= in_scripts  # a load, then the commit
    assert _log(client, gid) == [(1, "draw"), (2, "discard")]


def test_a_move_on_a_stale_held_state_is_applied_again_to_the_state_the_commit_returns(
        redis_url: str) -> None:
    """The state held here (after Ana's draw) is behind by one meld made through another
    worker, and takes the move all the same: the commit's compare-and-set fails and answers
    with the current state, the move is applied to that and committed — two script calls,
    no load — and both melds are on the table."""
    client = _seat_app(redis_url, "100/second")
    other_worker = _seat_app(redis_url, "100/second")
    gid, ana = _arranged_game(client)
    assert client.post(f"/v1/games/{gid}/moves", json={"type": "draw", "source": "stock"},
                       headers=ana).status_code == 200  # held here: v1
    run = {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"]}]}
    assert other_worker.post(f"/v1/games/{gid}/moves", json=run,
                             headers=ana).status_code == 200  # v2
    view, from_clients, in_scripts = _watched_move(
        client, redis_url, gid, ana, {"type": "meld", "melds": [{"cards": ["QS", "QD", "QC"]}]})
    assert view["version"] == 3
    assert [sorted(m["cards"]) for m in view["melds"]] == [["7H", "8H", "9H"],
                                                          ["QC", "QD", "QS"]]
    assert from_clients == ["EVALSHA", "EVALSHA"], from_clients
    assert "HMGET" not in in_scripts
    assert _log(client, gid) == [(1, "draw"), (2, "meld"), (3, "meld")]


def _decoded_states(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one each time a stored game state is decoded."""
    decoded: list[int] = []
    read = GameState.from_dict

    def counted(data: dict[str, Any]) -> GameState:
        decoded.append(1)
        return read(data)
    monkeypatch.setattr(GameState, "from_dict", staticmethod(counted))
    return decoded


def test_a_view_of_the_version_the_worker_holds_is_not_sent_nor_decoded_again(
        redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker holds the game's state at its current version (it read it, or made the
    last move): the seat view, the public view and the legal moves are made from it, the
    same as from the stored one, without Redis sending the state or the worker decoding it
    again."""
    client = _seat_app(redis_url, "100/second")
    gid, ana = _arranged_game(client)
    first = [client.get(f"/v1/games/{gid}/me", headers=ana).get_json(),
             client.get(f"/v1/games/{gid}").get_json(),
             client.get(f"/v1/games/{gid}/legal-moves", headers=ana).get_json()]
    decoded = _decoded_states(monkeypatch)
    again = [client.get(f"/v1/games/{gid}/me", headers=ana).get_json(),
             client.get(f"/v1/games/{gid}").get_json(),
             client.get(f"/v1/games/{gid}/legal-moves", headers=ana).get_json()]
    assert again == first
    assert decoded == []
    assert client.post(f"/v1/games/{gid}/moves", json={"type": "draw", "source": "stock"},
                       headers=ana).status_code == 200  # held here: v1
    assert client.get(f"/v1/games/{gid}/me", headers=ana).get_json()["version"] == 1
    assert decoded == []


def test_a_view_after_another_workers_move_is_of_the_stored_version(
        redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """This worker holds version 0; another one applies Ana's draw: this worker's views show
    version 1 and the card drawn, decoded from the stored state once, then held."""
    client = _seat_app(redis_url, "100/second")
    other_worker = _seat_app(redis_url, "100/second")
    gid, ana = _arranged_game(client)
    before = client.get(f"/v1/games/{gid}/me", headers=ana).get_json()  # held here: v0
    drawn = other_worker.post(f"/v1/games/{gid}/moves", json={"type": "draw",
                                                            "source": "stock"}, headers=ana)
    assert drawn.status_code == 200
    decoded = _decoded_states(monkeypatch)
    after = client.get(f"/v1/games/{gid}/me", headers=ana).get_json()
    assert after == drawn.get_json()["game"]
    assert (after["version"], len(after["hand"])) == (1, len(before["hand"]) + 1)
    assert client.get(f"/v1/games/{gid}").get_json()["version"] == 1
    assert decoded == [1]


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


@pytest.mark.parametrize(("text", "amount", "seconds"), [
    ("100/second", 100, 1), ("10 per 2 minutes", 10, 120), (" 5 / hour ", 5, 3600),
    ("1 per day", 1, 86400), ("3000/Minute", 3000, 60)])
def test_rate_limits_are_read_as_the_configuration_accepts_them(text: str, amount: int,
                                                                seconds: int) -> None:
    from service.api.security import Limit

    Settings(rate_limits=(text,))  # accepted by the configuration …
    limit = Limit.parse(text)  # … and read the same way by the limiter
    assert (limit.amount, limit.seconds) == (amount, seconds)


def test_any_client_address_is_counted(limited: Flask) -> None:
    """An address is part of a Redis hash tag: braces in it are no 500."""
    client = limited.test_client()
    odd = {"REMOTE_ADDR": "{odd}"}
    assert [client.get("/v1/variants", environ_base=odd).status_code
            for _ in range(6)] == [200] * 5 + [429]
    body = {"variant": "basic", "players": ["a", "b"]}
    other = {"REMOTE_ADDR": "{other}"}
    assert [client.post("/v1/games", json=body, environ_base=other).status_code
            for _ in range(3)] == [201, 201, 429]


def _create_statuses(client: Any, forwarded_for: list[str]) -> list[int]:
    """Create a game from each X-Forwarded-For in turn, all sent by one proxy's address."""
    body = {"variant": "basic", "players": ["a", "b"]}
    proxy = {"REMOTE_ADDR": "10.66.0.1"}
    return [client.post("/v1/games", json=body, environ_base=proxy,
                        headers={"X-Forwarded-For": xff}).status_code
            for xff in forwarded_for]


def test_behind_proxies_each_client_address_has_its_own_limit(redis_url: str) -> None:
    """RUMMY_PROXY_HOPS=1: the address the proxy puts last in X-Forwarded-For is the client;
    what the client itself wrote before it is not trusted."""
    client = create_app(Settings(redis_url=redis_url, rate_limits=(),
                                 create_rate_limits=("2/minute",), proxy_hops=1)).test_client()
    assert _create_statuses(client, ["198.51.100.7"] * 3) == [201, 201, 429]
    # another client behind the same proxy has a budget of its own …
    assert _create_statuses(client, ["198.51.100.8"]) == [201]
    # … and a client cannot pass for another by writing the header itself
    assert _create_statuses(client, ["203.0.113.1, 198.51.100.7"]) == [429]


def test_without_proxy_hops_x_forwarded_for_is_ignored(redis_url: str) -> None:
    client = create_app(Settings(redis_url=redis_url, rate_limits=(),
                                 create_rate_limits=("2/minute",))).test_client()
    assert _create_statuses(client, ["198.51.100.17", "198.51.100.18", "198.51.100.19"]
                            ) == [201, 201, 429]


def test_verify_replays_have_a_limit_of_their_own_per_address(redis_url: str) -> None:
    """``RUMMY_VERIFY_RATE_LIMITS`` counts the verifications that replay a game's log, per
    client address, whatever the general limit: over it, 429 with Retry-After and nothing
    replayed; a report already kept for the game's version is still given, and another
    address has a budget of its own."""
    client = create_app(Settings(redis_url=redis_url, rate_limits=("1000/minute",),
                                 create_rate_limits=(),
                                 verify_rate_limits=("2/minute",))).test_client()
    gid, ana = _arranged_game(client)
    verify = f"/v1/games/{gid}/verify"
    assert client.get(verify).status_code == 200  # replayed at v0: 1
    assert client.get(verify).status_code == 200  # kept: not counted
    moves = iter([{"type": "draw", "source": "stock"}, {"type": "discard", "card": "KD"}])
    assert client.post(f"/v1/games/{gid}/moves", json=next(moves),
                       headers=ana).status_code == 200
    assert client.get(verify).get_json()["version"] == 1  # replayed at v1: 2
    assert client.post(f"/v1/games/{gid}/moves", json=next(moves),
                       headers=ana).status_code == 200
    refused = client.get(verify)
    assert refused.status_code == 429
    assert refused.content_type == "application/problem+json"
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert "2/minute" in refused.get_json()["detail"]
    other = client.get(verify, environ_base={"REMOTE_ADDR": "10.4.4.4"})
    assert other.status_code == 200 and other.get_json()["version"] == 2  # replayed, kept
    assert client.get(verify).get_json() == other.get_json()  # kept: given, over or not


def test_verify_replays_are_limited_by_default() -> None:
    assert Settings().verify_rate_limits == ("10/minute",)
    assert Settings.from_env({"RUMMY_VERIFY_RATE_LIMITS": "off"}).verify_rate_limits == ()


def _rate_headers(reply: Any) -> tuple[str, dict[str, tuple[int, int]]]:
    """``RateLimit-Policy`` as sent, and ``RateLimit`` read: policy → (remaining, reset)."""
    policy = reply.headers["RateLimit-Policy"]
    state: dict[str, tuple[int, int]] = {}
    for item in reply.headers["RateLimit"].split(", "):
        name, *params = item.split(";")
        values = dict(p.split("=") for p in params)
        state[name.strip('"')] = (int(values["r"]), int(values["t"]))
    return policy, state


def test_rate_limit_headers_count_down_the_same_on_every_worker(limited: Flask,
                                                                redis_url: str) -> None:
    """Issue 45: every answer of a limited endpoint says its limit (``RateLimit-Policy``)
    and what is left of it (``RateLimit``), as the IETF httpapi draft defines them, from
    the Redis counter: another worker's answer continues the count."""
    client = limited.test_client()
    other_worker = create_app(Settings(redis_url=redis_url, rate_limits=("5/minute",),
                                       create_rate_limits=("2/minute",))).test_client()
    left = []
    for worker in (client, client, other_worker, client, other_worker):
        reply = worker.get("/v1/variants")
        assert reply.status_code == 200
        policy, state = _rate_headers(reply)
        assert policy == '"requests";q=5;w=60'
        assert 1 <= state["requests"][1] <= 60
        left.append(state["requests"][0])
    assert left == [4, 3, 2, 1, 0]
    refused = other_worker.get("/v1/variants")
    assert refused.status_code == 429
    policy, state = _rate_headers(refused)
    assert state["requests"][0] == 0
    body = refused.get_json()
    assert (body["policy"], body["limit"]) == ("requests", "5/minute")
    assert body["retry_after"] == int(refused.headers["Retry-After"]) >= 1
    # refused again by the worker's own memory of the block: the same headers, no Redis
    again = other_worker.get("/v1/variants")
    assert again.status_code == 429 and _rate_headers(again)[1]["requests"][0] == 0
    # unlimited paths carry none
    assert "RateLimit" not in client.get("/healthz").headers


def test_a_seat_s_move_carries_the_counts_of_the_script_that_committed_it(
        redis_url: str) -> None:
    """A verified seat's move is counted by the commit script: its answer's ``RateLimit``
    comes from that count (no round trip of its own), and a refused move's too."""
    client = _seat_app(redis_url, "3/minute")
    game = _game(client)
    gid, token = game["game_id"], game["seats"][1]["token"]  # Bo: not to move (dealer 1)
    auth = {"Authorization": f"Bearer {token}"}
    seen = client.get(f"/v1/games/{gid}/me", headers=auth)  # the address counts this one
    assert _rate_headers(seen)[1]["requests"][0] == 1
    remaining = []
    for _ in range(4):
        reply = client.post(f"/v1/games/{gid}/moves", json={"type": "draw", "source": "stock"},
                            headers=auth)
        assert reply.headers["RateLimit-Policy"] == '"requests";q=3;w=60'
        remaining.append((reply.status_code, _rate_headers(reply)[1]["requests"][0]))
    assert remaining == [(422, 2), (422, 1), (422, 0), (429, 0)]


def test_each_setting_s_limits_are_policies_of_their_own(redis_url: str) -> None:
    """Game creation counts the caller's limits and the creation limits: both policies,
    named by their setting, each with what is left."""
    client = create_app(Settings(redis_url=redis_url, rate_limits=("50/minute", "500/hour"),
                                 create_rate_limits=("2/minute",))).test_client()
    body = {"variant": "basic", "players": ["a", "b"]}
    first = client.post("/v1/games", json=body)
    assert first.status_code == 201
    assert first.headers["RateLimit-Policy"] == (
        '"requests";q=50;w=60, "requests-2";q=500;w=3600, "create";q=2;w=60')
    assert {k: v[0] for k, v in _rate_headers(first)[1].items()} == {
        "requests": 49, "requests-2": 499, "create": 1}
    client.post("/v1/games", json=body)
    refused = client.post("/v1/games", json=body)
    assert refused.status_code == 429
    assert refused.get_json()["policy"] == "create"
    assert _rate_headers(refused)[1]["create"][0] == 0
