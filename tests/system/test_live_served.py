"""Live tables served by a real ``rummy-referee serve`` (gunicorn) over a real Redis: many
streams held by a gevent worker without a thread each and all woken by one move, streams
ended cleanly (the chunked body's last chunk sent) at SIGTERM under both worker classes,
``Last-Event-ID`` resuming exactly across a server restart, and access lines that never
hold a stream ticket."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from random import Random

import orjson
import pytest
import requests

from tests.support.http_player import REQUEST_TIMEOUT, RequestsTransport
from tests.support.reliability import Game, create_game, next_move
from tests.support.serving import Server
from tests.support.streams import chunks

pytestmark = pytest.mark.slow

READ_TIMEOUT = 30.0
LAST_CHUNK = b"0\r\n\r\n"  # the end of a chunked body that was ended, not cut


def _env(**extra: str) -> dict[str, str]:
    return {"RUMMY_LOG_LEVEL": "WARNING", "RUMMY_RATE_LIMITS": "100000/second",
            "RUMMY_MAX_CONNECTIONS_PER_ADDRESS": "0", "RUMMY_SSE_PER_ADDRESS": "0",
            "RUMMY_SSE_PER_SEAT": "0", **extra}


@contextlib.contextmanager
def _serving(tmp_path: Path, redis_url: str, **extra: str) -> Iterator[Server]:
    server = Server(tmp_path, redis_url, workers=1, env=_env(**extra))
    try:
        server.wait_ready()
        yield server
    finally:
        server.close()


def _open(server: Server, path: str, **headers: str) -> socket.socket:
    sock = socket.create_connection((server.host, server.port), timeout=READ_TIMEOUT)
    lines = "".join(f"{k}: {v}\r\n" for k, v in
                    {"Host": "live", "Accept": "text/event-stream", **headers}.items())
    sock.sendall(f"GET {path} HTTP/1.1\r\n{lines}\r\n".encode())
    return sock


def _read_until(sock: socket.socket, needle: bytes, seen: bytearray | None = None) -> bytes:
    """What ``sock`` sent up to and with ``needle`` (the stream ended before: a failure)."""
    data = seen if seen is not None else bytearray()
    deadline = time.monotonic() + READ_TIMEOUT
    while needle not in data:
        assert time.monotonic() < deadline, f"no {needle!r} in {bytes(data[-300:])!r}"
        chunk = sock.recv(65536)
        assert chunk, f"the stream ended before {needle!r}: {bytes(data[-300:])!r}"
        data += chunk
    return bytes(data)


def _move(transport: RequestsTransport, game: Game, rng: Random) -> None:
    seat = game.view["turn"]["seat"]
    view = transport.request("GET", f"/v1/games/{game.game_id}/me", token=game.tokens[seat])
    reply = transport.request("POST", f"/v1/games/{game.game_id}/moves",
                              token=game.tokens[seat], body=next_move(view.body, rng))
    assert reply.status == 200, reply.raw[:300]
    game.view = reply.body["game"]


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_a_gevent_worker_holds_many_streams_without_a_thread_each(
        tmp_path: Path, redis_url: str) -> None:
    pytest.importorskip("gevent")
    streams = 300
    with _serving(tmp_path, redis_url, RUMMY_WORKER_CLASS="gevent") as server, \
            requests.Session() as session, contextlib.ExitStack() as stack:
        transport = RequestsTransport(server.base_url, session, timeout=REQUEST_TIMEOUT)
        game = create_game(transport, 2)
        socks: list[socket.socket] = []
        for _ in range(streams // 50):  # in bursts of 50, each one open before the next
            burst = [stack.enter_context(_open(server, f"/v1/games/{game.game_id}/events"))
                     for _ in range(50)]
            for sock in burst:
                assert _read_until(sock, b"retry: 1000").startswith(b"HTTP/1.1 200")
            socks += burst
        (worker,) = server.worker_pids()
        assert _threads(worker) < 20  # not one per stream
        _move(transport, game, Random(1))
        for sock in socks:
            _read_until(sock, b"id: 1\nevent: move\n")
        assert server.terminate() == 0, server.output()
        for sock in socks:
            assert _read_until(sock, LAST_CHUNK).endswith(LAST_CHUNK)


@pytest.mark.parametrize("worker_class", ["gthread", "gevent"])
def test_sigterm_ends_open_streams_cleanly(
        tmp_path: Path, redis_url: str, worker_class: str) -> None:
    if worker_class == "gevent":
        pytest.importorskip("gevent")
    with _serving(tmp_path, redis_url, RUMMY_WORKER_CLASS=worker_class) as server, \
            requests.Session() as session:
        transport = RequestsTransport(server.base_url, session, timeout=REQUEST_TIMEOUT)
        game = create_game(transport, 2)
        with _open(server, f"/v1/games/{game.game_id}/events") as sock:
            _read_until(sock, b"retry: 1000")
            assert server.terminate() == 0, server.output()
            # ended by the worker, not cut when the master killed it after graceful_timeout
            assert _read_until(sock, LAST_CHUNK).endswith(LAST_CHUNK)
        assert "WORKER TIMEOUT" not in server.output()


def test_last_event_id_resumes_exactly_after_a_restart(tmp_path: Path, redis_url: str) -> None:
    rng = Random(2)
    seen: list[int] = []
    with _serving(tmp_path, redis_url) as server, requests.Session() as session:
        transport = RequestsTransport(server.base_url, session, timeout=REQUEST_TIMEOUT)
        game = create_game(transport, 2)
        for _ in range(3):
            _move(transport, game, rng)
        with _open(server, f"/v1/games/{game.game_id}/events", **{"Last-Event-ID": "1"}) as s:
            seen += [int(v) for v in re.findall(rb"id: (\d+)\n", _read_until(s, b"id: 3\n"))]
    with _serving(tmp_path, redis_url) as again, requests.Session() as session:
        transport = RequestsTransport(again.base_url, session, timeout=REQUEST_TIMEOUT)
        for _ in range(2):
            _move(transport, game, rng)
        with _open(again, f"/v1/games/{game.game_id}/events",
                   **{"Last-Event-ID": str(seen[-1])}) as s:
            seen += [int(v) for v in re.findall(rb"id: (\d+)\n", _read_until(s, b"id: 5\n"))]
    assert seen == [2, 3, 4, 5]


def test_access_lines_never_hold_a_ticket(tmp_path: Path, redis_url: str) -> None:
    with _serving(tmp_path, redis_url, RUMMY_ACCESS_LOG="1") as server, \
            requests.Session() as session:
        transport = RequestsTransport(server.base_url, session, timeout=REQUEST_TIMEOUT)
        game = create_game(transport, 2)
        issued = transport.request("POST", f"/v1/games/{game.game_id}/stream-tickets",
                                   token=game.tokens[0])
        assert issued.status == 201, issued.raw[:300]
        ticket = issued.body["ticket"]
        with _open(server, f"/v1/games/{game.game_id}/events?after=0&ticket={ticket}") as s:
            _read_until(s, b"retry: 1000")
        refused = session.get(f"{server.base_url}/v1/games/{game.game_id}/events",
                              params={"ticket": ticket}, headers={"Accept": "text/event-stream"},
                              timeout=REQUEST_TIMEOUT)
        assert refused.status_code == 401  # used once already
        assert server.terminate() == 0
    output = server.output()
    assert "ticket=[redacted]" in output
    assert ticket not in output
    assert game.tokens[0] not in output


def _chunked_body(data: bytes) -> list[bytes]:
    """The chunks of a response's chunked body so far, read strictly."""
    head, _, body = data.partition(b"\r\n\r\n")
    assert b"Transfer-Encoding: chunked" in head, head
    return chunks(body)


def test_events_written_while_a_gevent_stream_waits_are_framed_as_gunicorns(
        tmp_path: Path, redis_url: str) -> None:
    """Under gevent the hub writes a waiting stream's events itself, in HTTP/1.1 chunks as
    gunicorn frames the rest of the body: read strictly, every chunk is one whole event,
    in order, none twice, each as the public sees it."""
    pytest.importorskip("gevent")
    with _serving(tmp_path, redis_url, RUMMY_WORKER_CLASS="gevent") as server, \
            requests.Session() as session:
        transport = RequestsTransport(server.base_url, session, timeout=REQUEST_TIMEOUT)
        game = create_game(transport, 2)
        with _open(server, f"/v1/games/{game.game_id}/events") as sock:
            data = bytearray(_read_until(sock, b"retry: 1000\n\n\r\n"))
            rng = Random(3)
            for version in range(1, 7):
                _move(transport, game, rng)
                _read_until(sock, b"id: %d\nevent: move\n" % version, data)
                while not data.endswith(b"\n\n\r\n"):
                    data += sock.recv(65536)
            body = _chunked_body(bytes(data))
        log = transport.request("GET", f"/v1/games/{game.game_id}/events").body
    assert body[0] == b"retry: 1000\n\n"
    events = [c for c in body[1:] if not c.startswith(b":")]
    assert [e.split(b"\n")[0] for e in events] == [b"id: %d" % v for v in range(1, 7)]
    assert len(log["entries"]) == 6
    for event, entry in zip(events, log["entries"], strict=True):
        assert event.endswith(b"\n\n") and event.count(b"\n\n") == 1
        assert orjson.loads(event.split(b"data: ", 1)[1]) == entry
