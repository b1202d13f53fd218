"""GameStore against a real redis-server (the session one, or one of the test's own for faults)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from redis.connection import HiredisRespSerializer
from redis.crc import key_slot
from redis.exceptions import DataError

from service.redis_server import RedisServer
from service.store import (
    Cached,
    Count,
    GameExists,
    GameNotFound,
    GameStore,
    IdempotencyRecord,
    IdempotentReplay,
    Loaded,
    OverLimit,
    StoreCorrupted,
    StoreError,
    StoreFull,
    StoreUnavailable,
    VersionConflict,
    Window,
    game_keys,
    make_client,
)
from service.store.client import PACKER, execute
from service.store.redis_store import _translated
from tests.support.redis_servers import borrowed, running

# --- helpers -----------------------------------------------------------------------------------


def all_keys(client: redis.Redis, store: GameStore, game_id: str) -> list[bytes]:
    return sorted(client.scan_iter(match=store.keys(game_id).pattern, count=1000))


def command(client: redis.Redis, *args: Any) -> Any:
    return client.execute_command(*args)  # type: ignore[no-untyped-call]


def evalsha_calls(client: redis.Redis) -> int:
    stats = client.info("commandstats")
    entry = stats.get("cmdstat_evalsha", {})
    return int(entry.get("calls", 0))


@pytest.fixture
def own_server(redis_server: RedisServer, tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of this test alone (same binary as the session one), for fault tests."""
    with running(RedisServer(tmp_path / "redis", binary=redis_server.binary)) as server:
        yield server


@pytest.fixture
def admin(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    try:
        yield client
    finally:
        client.close()


# --- basic operations --------------------------------------------------------------------------


def test_create_load_commit_round_trip(store: GameStore) -> None:
    store.create("g1", b"state-0")
    assert store.load("g1") == Loaded(version=0, state=b"state-0", idempotency=None)
    assert store.log("g1") == []

    assert store.commit("g1", expected_version=0, state=b"state-1", log_record=b"rec-1") == 1
    assert store.commit("g1", expected_version=1, state=b"state-2", log_record=b"rec-2") == 2

    assert store.load("g1") == Loaded(version=2, state=b"state-2", idempotency=None)
    assert store.log("g1") == [(1, b"rec-1"), (2, b"rec-2")]
    assert store.log("g1", after=1) == [(2, b"rec-2")]
    assert store.ping() is True


def test_a_load_skips_the_state_the_caller_holds(store: GameStore) -> None:
    store.create("g", b"s0")
    assert store.load("g", held=0).state is None  # still at the version held
    store.commit("g", expected_version=0, state=b"s1", log_record=b"r1")
    stale = store.load("g", held=0)
    assert (stale.version, stale.state) == (1, b"s1")
    held = store.load("g", "scope", held=1)
    assert (held.version, held.state, held.idempotency) == (1, None, None)
    with pytest.raises(GameNotFound):
        store.load("other", held=1)


def test_a_load_counts_window_counters_in_the_same_call(store: GameStore) -> None:
    store.create("g", b"s0")
    window = Window(store.counter("g", "caller"), 60_000)
    counts = [store.load("g", windows=[window]).counts[0] for _ in range(3)]
    assert [c.count for c in counts] == [1, 2, 3]
    assert all(0 < c.millis_left <= 60_000 for c in counts)
    with pytest.raises(GameNotFound) as missing:
        store.load("nope", windows=[Window(store.counter("nope", "caller"), 1000)])
    assert missing.value.counts[0].count == 1
    assert [c.count for c in store.hit([window])] == [4]


def test_a_commit_counts_window_counters_first_and_writes_nothing_over_a_limit(
        store: GameStore) -> None:
    """The counts reach ``counted`` before the outcome, whatever it is; over a limit the
    commit writes nothing (OverLimit), and a later one within the window still counts."""
    store.create("g", b"s0")
    window = Window(store.counter("g", "caller"), 60_000)
    seen: list[tuple[Count, ...]] = []

    def commit(expected: int, limit: int) -> int:
        return store.commit("g", expected_version=expected, state=b"s%d" % (expected + 1),
                            log_record=b"r", windows=[window], limits=[limit],
                            counted=seen.append)

    assert commit(0, 2) == 1
    assert commit(1, 2) == 2
    with pytest.raises(OverLimit) as over:
        commit(2, 2)
    assert over.value.counts[0].count == 3
    assert [c[0].count for c in seen] == [1, 2, 3]
    assert 0 < seen[-1][0].millis_left <= 60_000
    loaded = store.load("g")
    assert (loaded.version, loaded.state) == (2, b"s2")  # the refused commit wrote nothing
    assert len(store.log("g")) == 2
    with pytest.raises(VersionConflict):
        commit(0, 10)  # counted (4), then refused by the compare-and-set
    with pytest.raises(GameNotFound) as missing:
        store.commit("nope", expected_version=0, state=b"s", log_record=b"r",
                     windows=[Window(store.counter("nope", "caller"), 1000)], limits=[5],
                     counted=seen.append)
    assert missing.value.counts[0].count == 1
    assert [c[0].count for c in seen] == [1, 2, 3, 4, 1]
    with pytest.raises(ValueError, match="one limit per window"):
        store.commit("g", expected_version=2, state=b"s", log_record=b"r", windows=[window])


def test_a_conflict_answers_with_the_current_state_when_asked(store: GameStore) -> None:
    store.create("g", b"s0")
    store.commit("g", expected_version=0, state=b"s1", log_record=b"r1")
    with pytest.raises(VersionConflict) as asked:
        store.commit("g", expected_version=0, state=b"x", log_record=b"x",
                     conflict_state=True)
    assert (asked.value.current, asked.value.state) == (1, b"s1")
    with pytest.raises(VersionConflict) as plain:
        store.commit("g", expected_version=0, state=b"x", log_record=b"x")
    assert (plain.value.current, plain.value.state) == (1, None)
    assert store.load("g").version == 1


def test_counting_on_a_redis_that_is_down_is_a_store_error(own_server: RedisServer) -> None:
    store = GameStore(make_client(own_server.url, socket_timeout=0.5))
    window = Window(store.counter("caller", "0"), 1000)
    assert [c.count for c in store.hit([window])] == [1]
    own_server.stop()
    with pytest.raises(StoreUnavailable):
        store.hit([window])


def test_binary_state_survives(store: GameStore) -> None:
    blob = bytes(range(256)) * 4
    store.create("bin", blob)
    store.commit("bin", expected_version=0, state=blob[::-1], log_record=b"\x00\xff")
    assert store.load("bin").state == blob[::-1]
    assert store.log("bin") == [(1, b"\x00\xff")]


def test_create_existing_game_raises_and_keeps_it(store: GameStore) -> None:
    store.create("g1", b"first")
    store.commit("g1", expected_version=0, state=b"second", log_record=b"r")
    with pytest.raises(GameExists):
        store.create("g1", b"other")
    assert store.load("g1") == Loaded(version=1, state=b"second", idempotency=None)


def test_missing_game(store: GameStore) -> None:
    with pytest.raises(GameNotFound):
        store.load("nope")
    with pytest.raises(GameNotFound):
        store.commit("nope", expected_version=0, state=b"s", log_record=b"r")
    with pytest.raises(GameNotFound):
        store.log("nope")
    with pytest.raises(GameNotFound):
        store.log("nope", limit=0)
    assert store.idempotency("nope", "k") is None


def test_invalid_arguments(store: GameStore) -> None:
    with pytest.raises(ValueError):
        store.create("a{b}", b"s")
    with pytest.raises(ValueError):
        store.create("", b"s")
    store.create("g", b"s")
    with pytest.raises(ValueError):
        store.commit("g", expected_version=-1, state=b"s", log_record=b"r")
    with pytest.raises(ValueError):
        store.commit(
            "g", expected_version=0, state=b"s", log_record=b"r", idempotency=("", "f", b"")
        )
    with pytest.raises(ValueError):
        store.log("g", after=-1)
    with pytest.raises(ValueError):
        GameStore(store.client, ttl_seconds=0)


def test_client_must_return_bytes(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        with pytest.raises(ValueError, match="decode_responses"):
            GameStore(client)
    finally:
        client.close()


def test_version_conflict_writes_nothing(store: GameStore) -> None:
    store.create("g", b"s0")
    store.commit("g", expected_version=0, state=b"s1", log_record=b"r1")
    with pytest.raises(VersionConflict) as info:
        store.commit("g", expected_version=0, state=b"bad", log_record=b"bad")
    assert info.value.current == 1
    with pytest.raises(VersionConflict) as info:
        store.commit("g", expected_version=5, state=b"bad", log_record=b"bad")
    assert info.value.current == 1
    assert store.load("g") == Loaded(version=1, state=b"s1", idempotency=None)
    assert store.log("g") == [(1, b"r1")]


def test_versions_contiguous_and_log_length_equals_version(
    store: GameStore, admin: redis.Redis
) -> None:
    store.create("g", b"")
    for i in range(60):
        assert (
            store.commit("g", expected_version=i, state=b"s%d" % i, log_record=b"r%d" % i) == i + 1
        )
    loaded = store.load("g")
    assert loaded.version == 60
    assert admin.llen(store.keys("g").log) == 60
    log = store.log("g")
    assert [v for v, _ in log] == list(range(1, 61))
    assert [r for _, r in log] == [b"r%d" % i for i in range(60)]
    assert store.log("g", after=10, limit=5) == [(v, b"r%d" % (v - 1)) for v in range(11, 16)]
    assert store.log("g", after=58, limit=10) == [(59, b"r58"), (60, b"r59")]
    assert store.log("g", after=60) == []
    assert store.log("g", after=100) == []
    assert store.log("g", limit=0) == []


def test_concurrent_commits_lose_and_duplicate_nothing(store: GameStore) -> None:
    threads, per_thread = 8, 25
    store.create("race", b"")
    conflicts = [0] * threads
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def worker(n: int) -> None:
        try:
            start.wait()
            for i in range(per_thread):
                record = b"t%d-%d" % (n, i)
                while True:
                    loaded = store.load("race")
                    state = loaded.state + b"," + record if loaded.state else record
                    try:
                        store.commit(
                            "race",
                            expected_version=loaded.version,
                            state=state,
                            log_record=record,
                        )
                        break
                    except VersionConflict as exc:
                        assert exc.current > loaded.version
                        conflicts[n] += 1
        except BaseException as exc:  # reported in the main thread
            errors.append(exc)

    pool = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(timeout=30)
    assert not errors, errors
    assert not any(t.is_alive() for t in pool)

    total = threads * per_thread
    loaded = store.load("race")
    log = store.log("race")
    records = [r for _, r in log]
    assert loaded.version == total == len(log)
    assert [v for v, _ in log] == list(range(1, total + 1))
    assert sorted(records) == sorted(
        b"t%d-%d" % (n, i) for n in range(threads) for i in range(per_thread)
    )
    # the state is the fold of the log: no commit was based on a stale state
    assert loaded.state == b",".join(records)
    # each thread's records are in its own order
    for n in range(threads):
        mine = [r for r in records if r.startswith(b"t%d-" % n)]
        assert mine == [b"t%d-%d" % (n, i) for i in range(per_thread)]


# --- idempotency -------------------------------------------------------------------------------


def test_idempotent_replay_returns_first_response_and_writes_nothing(
    store: GameStore, admin: redis.Redis
) -> None:
    store.create("g", b"s0")
    v = store.commit(
        "g",
        expected_version=0,
        state=b"s1",
        log_record=b"r1",
        idempotency=("req-1", "fp-A", b"resp-1"),
    )
    assert v == 1
    first = IdempotencyRecord(fingerprint="fp-A", response=b"resp-1")
    assert store.idempotency("g", "req-1") == first
    assert store.load("g", "req-1") == Loaded(version=1, state=b"s1", idempotency=first)
    assert store.load("g", "other").idempotency is None
    before = {k: admin.dump(k) for k in all_keys(admin, store, "g")}

    # same scope again, at the right version and at a stale one: replay wins, nothing written
    for expected in (1, 0):
        with pytest.raises(IdempotentReplay) as info:
            store.commit(
                "g",
                expected_version=expected,
                state=b"s2",
                log_record=b"r2",
                idempotency=("req-1", "fp-B", b"resp-2"),
            )
        assert info.value.record == first
    assert {k: admin.dump(k) for k in all_keys(admin, store, "g")} == before
    assert store.load("g").version == 1
    assert store.log("g") == [(1, b"r1")]

    # a new scope commits normally
    store.commit(
        "g", expected_version=1, state=b"s2", log_record=b"r2", idempotency=("req-2", "", b"")
    )
    assert store.idempotency("g", "req-2") == IdempotencyRecord(fingerprint="", response=b"")
    assert store.log("g") == [(1, b"r1"), (2, b"r2")]


def test_idempotency_fingerprint_with_separator_and_unicode(store: GameStore) -> None:
    store.create("g", b"")
    record = IdempotencyRecord(fingerprint="12:ü:3", response=b"7:abc:")
    store.commit(
        "g",
        expected_version=0,
        state=b"s",
        log_record=b"r",
        idempotency=("k:{x}", record.fingerprint, record.response),
    )
    assert store.idempotency("g", "k:{x}") == record


def test_conflicting_commit_stores_no_idempotency_record(store: GameStore) -> None:
    store.create("g", b"")
    store.commit("g", expected_version=0, state=b"s", log_record=b"r")
    with pytest.raises(VersionConflict):
        store.commit(
            "g", expected_version=0, state=b"x", log_record=b"x", idempotency=("k", "f", b"x")
        )
    assert store.idempotency("g", "k") is None


# --- keys: TTL and cluster slot ----------------------------------------------------------------


def test_ttl_on_every_key_after_create_and_commit(redis_url: str, admin: redis.Redis) -> None:
    client = make_client(redis_url)
    try:
        store = GameStore(client, ttl_seconds=1000)
        store.create("g", b"s0")
        keys = store.keys("g")
        assert all_keys(admin, store, "g") == [keys.game.encode()]
        assert 990 <= admin.ttl(keys.game) <= 1000

        store.commit(
            "g", expected_version=0, state=b"s1", log_record=b"r1", idempotency=("a", "f", b"")
        )
        store.commit(
            "g", expected_version=1, state=b"s2", log_record=b"r2", idempotency=("b", "f", b"")
        )
        found = all_keys(admin, store, "g")
        expected = {keys.game, keys.log, keys.idem_order}
        assert {k.decode() for k in found} == expected
        for key in found:
            assert 990 <= admin.ttl(key) <= 1000, key

        # a commit without idempotency refreshes the TTL of all keys, old records included
        for key in found:
            admin.expire(key, 5)
        store.commit("g", expected_version=2, state=b"s3", log_record=b"r3")
        for key in all_keys(admin, store, "g"):
            assert 990 <= admin.ttl(key) <= 1000, key
    finally:
        client.close()


def test_all_keys_of_a_game_are_in_one_slot(store: GameStore, admin: redis.Redis) -> None:
    for game_id in ("g1", "0b6f3f5e-8d2a-4c1e-9a57-3f4e2d1c0b9a", "a:b", "x y*?[z]", "ü"):
        store.create(game_id, b"s")
        store.commit(
            game_id, expected_version=0, state=b"s", log_record=b"r", idempotency=("k", "f", b"")
        )
        keys = store.keys(game_id)
        names = [keys.game, keys.log, keys.idem_order]
        stored = all_keys(admin, store, game_id)
        assert len(stored) == 3  # game (with the record), log, idempotency order
        slots = {key_slot(k.encode()) for k in names} | {key_slot(k) for k in stored}
        assert slots == {key_slot(game_id.encode())}, game_id
    assert game_keys("g1").game == "rummy:{g1}:game"
    assert game_keys("g1", "ns").idem_order == "ns:{g1}:idem"


def test_a_game_keeps_only_its_newest_idempotency_records(redis_url: str,
                                                          admin: redis.Redis) -> None:
    client = make_client(redis_url)
    try:
        store = GameStore(client, keep_records=3)
        store.create("g", b"s0")
        for v in range(5):
            store.commit("g", expected_version=v, state=b"s", log_record=b"r",
                         idempotency=(f"k{v}", "f", b"resp%d" % v))
        kept = [scope for scope in (f"k{v}" for v in range(5))
                if store.idempotency("g", scope) is not None]
        assert kept == ["k2", "k3", "k4"]
        assert admin.lrange(store.keys("g").idem_order, 0, -1) == [b"k4", b"k3", b"k2"]
        assert store.idempotency("g", "k4") == IdempotencyRecord("f", b"resp4")
    finally:
        client.close()


def test_namespaces_are_separate(redis_url: str) -> None:
    client = make_client(redis_url)
    try:
        a, b = GameStore(client, namespace="a"), GameStore(client, namespace="b")
        a.create("g", b"in-a")
        b.create("g", b"in-b")
        assert a.load("g").state == b"in-a"
        assert b.load("g").state == b"in-b"
    finally:
        client.close()


def test_create_cleans_leftovers_of_an_expired_game(store: GameStore, admin: redis.Redis) -> None:
    store.create("g", b"old")
    store.commit(
        "g", expected_version=0, state=b"old1", log_record=b"old", idempotency=("k", "f", b"")
    )
    admin.delete(store.keys("g").game)  # as if the game key expired on its own
    store.create("g", b"new")
    assert store.load("g", "k") == Loaded(version=0, state=b"new", idempotency=None)
    assert store.log("g") == []
    assert all_keys(admin, store, "g") == [store.keys("g").game.encode()]


def test_log_longer_than_version_is_reported_as_corruption(
    store: GameStore, admin: redis.Redis
) -> None:
    store.create("g", b"")
    admin.rpush(store.keys("g").log, b"stray")
    with pytest.raises(StoreCorrupted):
        store.commit("g", expected_version=0, state=b"s", log_record=b"r")
    assert admin.hget(store.keys("g").game, "v") == b"0"


# --- the client never resends ------------------------------------------------------------------


def test_make_client_has_no_retries(redis_url: str) -> None:
    client = make_client(redis_url, socket_timeout=0.5)
    try:
        client.ping()
        retry = client.get_retry()
        assert retry is not None and retry.get_retries() == 0
        with borrowed(client.connection_pool) as conn:
            assert conn.retry.get_retries() == 0
    finally:
        client.close()


# --- packing commands ----------------------------------------------------------------------


class _Name(str):
    pass


class _Number(int):
    pass


def _redis_py_packer() -> HiredisRespSerializer:
    """The packer redis-py gives a connection of its own (hiredis installed)."""
    connection = redis.Connection()
    packer: HiredisRespSerializer = connection._command_packer
    assert type(packer) is HiredisRespSerializer
    return packer


@pytest.mark.parametrize("args", [
    ("GET", "rummy:{g}:game"),
    ("SET", b"k", "v\u00e9\U0001f600", 12, -7, 2**70, 0.1, 1 / 3, 1e22, -0.0, float("inf")),
    ("EVALSHA", "a" * 40, 2, "k1", "k2", b"x" * 10_000, memoryview(b"view"), 0, ""),
    ("SET", bytearray(b"array"), _Name("a str of its own"), _Number(3)),
    ("CLIENT SETNAME", "name"),
    (b"CLIENT SETNAME", b"name"),
    (" GET", "k"),
    ("FT.SEARCH", "index", "query"),
], ids=["plain", "kinds", "big", "subclasses", "two-words", "two-words-bytes", "space", "dot"])
def test_the_packer_packs_what_redis_py_packs(args: tuple[Any, ...]) -> None:
    assert b"".join(PACKER.pack(*args)) == b"".join(_redis_py_packer().pack(*args))


@pytest.mark.parametrize("bad", [True, None, [1], 1j])
def test_the_packer_refuses_what_redis_py_refuses(bad: object) -> None:
    with pytest.raises(DataError):
        _redis_py_packer().pack("SET", "k", bad)
    with pytest.raises(DataError):
        PACKER.pack("SET", "k", bad)


def test_a_client_packs_with_the_packer(redis_url: str) -> None:
    client = make_client(redis_url)
    try:
        assert client.set("packed", "v\u00e9") and client.get("packed") == "v\u00e9".encode()
        with borrowed(client.connection_pool) as connection:
            assert connection._command_packer is PACKER
    finally:
        client.close()


# --- sending commands ----------------------------------------------------------------------


def _refused(*_args: Any, **_options: Any) -> Any:
    raise AssertionError("sent through Redis.execute_command")


def test_execute_answers_as_execute_command(redis_url: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's direct sending answers what redis-py's ``execute_command`` answers, raises
    the same errors, and leaves its connection in the pool for the next command."""
    client, reference = make_client(redis_url), make_client(redis_url)
    script = "return {1, {2, 'x'}, ARGV[1], redis.call('SET', KEYS[1], ARGV[1])['ok']}"
    sha = command(reference, "SCRIPT", "LOAD", script)
    monkeypatch.setattr(client, "execute_command", _refused)
    answered: list[tuple[Any, ...]] = [
        ("PING",), ("SET", "direct", "v\u00e9"), ("GET", "direct"),
        ("EVALSHA", sha, 1, "direct", b"\x00\xff"), ("GET", "missing")]
    refused: list[tuple[tuple[Any, ...], type[Exception]]] = [
        (("EVALSHA", "0" * 40, 0), redis.exceptions.NoScriptError),
        (("EVAL", "return redis.error_reply('MINE no')", 0), redis.exceptions.ResponseError),
        (("NOSUCHCOMMAND",), redis.exceptions.ResponseError)]
    try:
        for args in answered:
            assert execute(client, *args) == command(reference, *args)
        for args, error in refused:
            with pytest.raises(error) as direct:
                execute(client, *args)
            with pytest.raises(error) as sent:
                command(reference, *args)
            assert type(direct.value) is type(sent.value)
            assert str(direct.value) == str(sent.value)
        pool = client.connection_pool
        assert len(pool._in_use_connections) == 0 and len(pool._available_connections) == 1
    finally:
        client.close()
        reference.close()


def test_execute_drops_a_connection_whose_answer_did_not_come(redis_url: str) -> None:
    """A command whose answer is late past the socket's timeout raises TimeoutError and its
    connection is dropped: the late answer is never read as the next command's."""
    client = make_client(redis_url, socket_timeout=0.2)
    try:
        with pytest.raises(redis.exceptions.TimeoutError):
            execute(client, "EVAL", "local t = redis.call('TIME') "
                    "while true do local n = redis.call('TIME') "
                    "if (n[1] - t[1]) * 1000000 + n[2] - t[2] > 400000 then break end end "
                    "return 'late'", 0)
        idle = client.connection_pool._available_connections
        assert len(idle) == 1 and idle[0]._sock is None  # back in the pool, disconnected
        time.sleep(0.3)  # the script has ended and its answer would be waiting
        assert execute(client, "ECHO", "mine") == b"mine"
    finally:
        client.close()


def test_a_cluster_client_sends_by_execute_command() -> None:
    """A Redis Cluster's command is routed by its client (``execute_command``), not sent on
    a pooled connection: the direct way is for one server."""
    calls: list[tuple[Any, ...]] = []

    class Routed(redis.cluster.RedisCluster):
        def __init__(self) -> None:  # no nodes: only execute_command is called
            pass

        def execute_command(self, *args: Any, **options: Any) -> Any:
            calls.append(args)
            return b"routed"

    assert execute(Routed(), "GET", "k") == b"routed" and calls == [("GET", "k")]


# --- faults (a server of the test's own) -------------------------------------------------------


def test_store_unavailable_when_server_stopped(own_server: RedisServer) -> None:
    client = make_client(own_server.url, socket_timeout=1.0, connect_timeout=1.0)
    try:
        store = GameStore(client)
        store.create("g", b"s")
        own_server.stop()
        calls: list[Callable[[], object]] = [
            lambda: store.load("g"),
            lambda: store.commit("g", expected_version=0, state=b"x", log_record=b"x"),
            lambda: store.create("h", b"x"),
            lambda: store.log("g"),
            lambda: store.idempotency("g", "k"),
        ]
        for call in calls:
            started = time.monotonic()
            with pytest.raises(StoreUnavailable) as info:
                call()
            assert time.monotonic() - started < 1.5
            assert isinstance(info.value.__cause__, redis.exceptions.ConnectionError)
        assert store.ping() is False
    finally:
        client.close()


def test_store_recovers_after_restart_without_a_failed_call(own_server: RedisServer) -> None:
    client = make_client(own_server.url)
    try:
        store = GameStore(client)
        store.create("g", b"s")
        store.commit("g", expected_version=0, state=b"s1", log_record=b"r1")
        own_server.restart()  # pooled connection is now dead; AOF keeps the data
        assert store.load("g") == Loaded(version=1, state=b"s1", idempotency=None)
        # the script cache is empty after the restart: NOSCRIPT is handled transparently
        assert store.commit("g", expected_version=1, state=b"s2", log_record=b"r2") == 2
        assert store.log("g") == [(1, b"r1"), (2, b"r2")]
    finally:
        client.close()


def test_read_only_replica_is_unavailable(own_server: RedisServer) -> None:
    client = make_client(own_server.url)
    try:
        store = GameStore(client)
        store.create("g", b"s")
        command(client, "REPLICAOF", "127.0.0.1", "1")  # nothing listens there
        with pytest.raises(StoreUnavailable) as info:
            store.commit("g", expected_version=0, state=b"x", log_record=b"x")
        # Redis 7 replies -READONLY (ReadOnlyError); 6.2 wraps it in "Error running script"
        assert isinstance(info.value.__cause__, redis.exceptions.ResponseError)
        assert "read only replica" in str(info.value)
        assert store.load("g").version == 0  # reads still work
    finally:
        command(client, "REPLICAOF", "NO", "ONE")
        client.close()


@pytest.mark.parametrize("fault", ["sigstop", "client-pause"])
def test_lost_reply_raises_unavailable_and_applies_at_most_once(
    own_server: RedisServer, fault: str
) -> None:
    admin = redis.Redis.from_url(own_server.url, socket_timeout=5)
    client = make_client(own_server.url, socket_timeout=0.5, connect_timeout=0.5)
    try:
        store = GameStore(client)
        store.create("g", b"s0")
        store.commit("g", expected_version=0, state=b"s1", log_record=b"r1")  # script cached
        calls_before = evalsha_calls(admin)

        if fault == "sigstop":
            own_server.pause()
        else:
            admin.client_pause(3000, all=False)  # CLIENT PAUSE 3000 WRITE (Redis >= 6.2)
        started = time.monotonic()
        try:
            with pytest.raises(StoreUnavailable) as info:
                store.commit("g", expected_version=1, state=b"s2", log_record=b"r2")
            elapsed = time.monotonic() - started
        finally:
            if fault == "sigstop":
                own_server.resume()
            else:
                admin.client_unpause()
        assert isinstance(info.value.__cause__, redis.exceptions.TimeoutError)
        assert elapsed < 1.5  # one attempt of 0.5 s, no retries with backoff

        # let the server work through whatever reached it, then look
        deadline = time.monotonic() + 1
        while time.monotonic() < deadline and evalsha_calls(admin) == calls_before:
            time.sleep(0.05)
        time.sleep(0.3)
        assert evalsha_calls(admin) - calls_before <= 1  # the EVALSHA was sent once
        loaded = store.load("g")
        # SIGSTOP: the command waited in the socket buffer and ran on SIGCONT (version 2);
        # CLIENT PAUSE: the paused command was dropped with its closed connection (version 1)
        assert loaded.version in (1, 2)
        log = store.log("g")
        assert len(log) == loaded.version
        if loaded.version == 2:
            assert loaded.state == b"s2" and log[-1] == (2, b"r2")
        else:
            assert loaded.state == b"s1"
        # the client is usable again
        store.commit("g", expected_version=loaded.version, state=b"s3", log_record=b"r3")
    finally:
        client.close()
        admin.close()


def test_a_cached_value_is_kept_for_its_version_only_and_expires_with_the_game(
        store: GameStore, redis_url: str) -> None:
    """A value worked out from a game at one version (the verify report) is kept beside the
    game, in its hash slot and with its expiry, and read back only while the game is at
    that version; a value for a version the game has left, or for a game that is gone, is
    not written."""
    store.create("g", b"s0")
    assert store.cached("g", "verify") == Cached(0, None)
    assert store.cache("g", "verify", 0, b"report at 0")
    assert store.cached("g", "verify") == Cached(0, b"report at 0")
    keys = store.keys("g")
    assert key_slot(keys.cached("verify").encode()) == key_slot(keys.game.encode())
    client = redis.Redis.from_url(redis_url)
    try:
        game_left = client.pttl(keys.game)
        assert 0 < client.pttl(keys.cached("verify")) <= game_left
    finally:
        client.close()
    store.commit("g", expected_version=0, state=b"s1", log_record=b"r1")
    assert store.cached("g", "verify") == Cached(1, None)
    assert not store.cache("g", "verify", 0, b"late report at 0")  # the game moved on
    assert store.cached("g", "verify") == Cached(1, None)
    assert not store.cache("nope", "verify", 0, b"x")
    with pytest.raises(GameNotFound):
        store.cached("nope", "verify")
    with pytest.raises(ValueError):
        keys.cached("Not a name")


@pytest.mark.parametrize("raised, expected, message", [
    (redis.exceptions.OutOfMemoryError("OOM command not allowed"), StoreFull,
     "commit 'g1': OOM command not allowed"),
    (redis.exceptions.ConnectionError("gone"), StoreUnavailable,
     "commit 'g1': ConnectionError: gone"),
    (redis.exceptions.RedisClusterException("no node"), StoreUnavailable,
     "commit 'g1': RedisClusterException: no node"),
    (redis.exceptions.ResponseError("LOADING Redis is loading"), StoreUnavailable,
     "commit 'g1': LOADING Redis is loading"),
    (redis.exceptions.ResponseError("Error running script (call to f_1): @user_script:9: "
                                    "-OOM no memory"), StoreFull,
     "commit 'g1': Error running script (call to f_1): @user_script:9: -OOM no memory"),
    (redis.exceptions.ResponseError("WRONGTYPE wrong kind"), StoreError,
     "commit 'g1': WRONGTYPE wrong kind"),
    (redis.exceptions.DataError("bad"), StoreError, "commit 'g1': DataError: bad"),
])
def test_redis_errors_become_store_errors_naming_the_operation(
        raised: Exception, expected: type[StoreError], message: str) -> None:
    with pytest.raises(StoreError) as info, _translated("commit", "g1"):
        raise raised
    assert type(info.value) is expected
    assert str(info.value) == message
    assert info.value.__cause__ is raised


def test_other_errors_pass_through_and_no_subject_is_named() -> None:
    with pytest.raises(KeyError), _translated("commit", "g1"):
        raise KeyError("k")
    with pytest.raises(StoreUnavailable, match=r"^ping: TimeoutError: slow$"), \
            _translated("ping"):
        raise redis.exceptions.TimeoutError("slow")
    with _translated("ping"):
        pass  # nothing raised: nothing to translate
