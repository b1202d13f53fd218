"""Event streams and their clients, served by a real ``rummy-referee serve`` (gunicorn) over
the session Redis:

- a client that never reads (a real socket with a small receive buffer): its stream ends
  once the server holds ``RUMMY_SSE_MAX_BUFFERED`` bytes it has not taken, its slot is free
  again, and the server answered every other request meanwhile;
- an idle open stream and a waiting long poll read nothing from Redis (its
  ``INFO commandstats``) while no move is made, heartbeats included; a move wakes them.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import redis
import requests

from tests.support.serving import Server, served

pytestmark = pytest.mark.slow

READ_TIMEOUT = 30.0
LAST_CHUNK = b"0\r\n\r\n"  # a chunked body that was ended, not cut
MAX_BUFFERED = 65536
"""``RUMMY_SSE_MAX_BUFFERED`` of the server below: a quarter of the default, so that fewer
moves fill it."""
RECEIVE_BUFFER = 4096
"""The non-reading client's ``SO_RCVBUF`` (the kernel doubles it)."""


def _worker_class(name: str) -> str:
    if name == "gevent":
        pytest.importorskip("gevent")
    return name


def _serving(tmp_path: Path, redis_url: str, **extra: str
             ) -> contextlib.AbstractContextManager[Server]:
    """One worker of ``rummy-referee serve``, the limits off, with ``extra`` settings."""
    return served(tmp_path, redis_url, workers=1, env={
        "RUMMY_LOG_LEVEL": "WARNING", "RUMMY_RATE_LIMITS": "off",
        "RUMMY_CREATE_RATE_LIMITS": "off", **extra})


def _create(session: requests.Session, server: Server) -> dict[str, Any]:
    """A basic game for two that never ends while it is only drawn from and discarded to."""
    resp = session.post(f"{server.base_url}/v1/games", timeout=10, json={
        "variant": "basic", "players": ["Ana", "Bo"], "rules": {"max_stock_rebuilds": None}})
    assert resp.status_code == 201, resp.text
    game: dict[str, Any] = resp.json()
    return game


class Player:
    """Plays a game's moves, a draw then a discard of the card drawn, seat after seat."""

    def __init__(self, session: requests.Session, server: Server, game: dict[str, Any]
                 ) -> None:
        self.session = session
        self.url = f"{server.base_url}/v1/games/{game['game_id']}/moves"
        self.tokens = [s["token"] for s in game["seats"]]
        self.seat = game["game"]["turn"]["seat"]
        self.drawn: str | None = None
        self.version = game["game"]["version"]
        self.slowest = 0.0

    def move(self) -> None:
        body = ({"type": "draw", "source": "stock"} if self.drawn is None
                else {"type": "discard", "card": self.drawn})
        started = time.monotonic()
        resp = self.session.post(self.url, json=body, timeout=10, headers={
            "Authorization": f"Bearer {self.tokens[self.seat]}"})
        self.slowest = max(self.slowest, time.monotonic() - started)
        assert resp.status_code == 200, resp.text
        answer = resp.json()
        self.version = answer["version"]
        if self.drawn is None:
            self.drawn = next(e["card"] for e in answer["events"] if e["type"] == "draw")
        else:
            self.drawn = None
            self.seat = answer["turn"]["seat"]


def _request(server: Server, path: str, receive_buffer: int | None = None,
             **headers: str) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if receive_buffer is not None:  # before connecting: it sets the window offered
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.settimeout(READ_TIMEOUT)
    sock.connect((server.host, server.port))
    lines = "".join(f"{k}: {v}\r\n" for k, v in
                    {"Host": "live", "Accept": "text/event-stream", **headers}.items())
    sock.sendall(f"GET {path} HTTP/1.1\r\n{lines}\r\n".encode())
    return sock


def _drain(sock: socket.socket) -> bytes:
    """Everything ``sock`` received, to the end of the connection."""
    data = bytearray()
    deadline = time.monotonic() + READ_TIMEOUT
    while time.monotonic() < deadline:
        chunk = sock.recv(65536)
        if not chunk:
            return bytes(data)
        data += chunk
    pytest.fail(f"the connection did not end: {bytes(data[-200:])!r}")


def _peek_until(sock: socket.socket, needle: bytes) -> None:
    """Until ``needle`` is among the bytes ``sock`` received, without taking any (a peek:
    they stay in its receive buffer)."""
    deadline = time.monotonic() + READ_TIMEOUT
    while needle not in (seen := sock.recv(RECEIVE_BUFFER, socket.MSG_PEEK)):
        assert seen, "the connection ended"
        assert time.monotonic() < deadline, seen
        time.sleep(0.05)
    assert seen.startswith(b"HTTP/1.1 200 OK\r\n"), seen


def _slot_taken(session: requests.Session, server: Server, game_id: str, version: int
                ) -> bool:
    """Whether this address's one stream slot (``RUMMY_SSE_PER_ADDRESS=1``) is taken: a
    long poll (which takes one too) is refused 429, else it waits its second and is 304."""
    resp = session.get(f"{server.base_url}/v1/games/{game_id}", timeout=10, headers={
        "If-None-Match": f'"{version}"', "Prefer": "wait=1"})
    assert resp.status_code in (304, 429), resp.text
    return resp.status_code == 429


@pytest.mark.parametrize("worker_class", ["gthread", "gevent"])
def test_a_client_that_never_reads_has_its_stream_ended_and_the_server_serves_on(
        tmp_path: Path, redis_url: str, worker_class: str) -> None:
    # heartbeats 30 s apart: a stream's data left unacknowledged for two heartbeats ends
    # its connection (TCP_USER_TIMEOUT, streams.bound_unacknowledged), and the kernel
    # counts a client's closed window as that; with 1 s, a machine slow to make the moves
    # that fill the bound saw the kernel reset the stream first, not the service end it
    with _serving(tmp_path, redis_url, RUMMY_WORKER_CLASS=_worker_class(worker_class),
                  RUMMY_SSE_PER_ADDRESS="1", RUMMY_SSE_HEARTBEAT_SECONDS="30",
                  RUMMY_SSE_MAX_BUFFERED=str(MAX_BUFFERED)) as server, \
            requests.Session() as session:
        game = _create(session, server)
        player = Player(session, server, game)
        events = f"/v1/games/{game['game_id']}/events"
        stuck = _request(server, events, receive_buffer=RECEIVE_BUFFER)
        try:
            _peek_until(stuck, b"retry: 1000")  # open (peeked at: nothing is taken)
            assert _slot_taken(session, server, game["game_id"], player.version)
            moves = 0
            # each public entry is some 200 bytes: the bound is met within a few thousand
            while _slot_taken(session, server, game["game_id"], player.version):
                for _ in range(25):
                    player.move()
                moves += 25
                assert moves <= 4000, "the stream of a client that never reads never ended"
                assert requests.get(f"{server.base_url}/readyz", timeout=5).status_code == 200
            assert player.slowest < 5, player.slowest  # moves were answered all along
            # the slot is free: another stream from this address opens and is served
            with _request(server, f"{events}?after={player.version - 1}") as reader:
                head = b""
                while b"event: move" not in head:
                    chunk = reader.recv(65536)
                    assert chunk, head
                    head += chunk
                assert f"id: {player.version}\n".encode() in head
            received = _drain(stuck)  # only now: what the server had sent, and its end
        finally:
            stuck.close()
        assert received.startswith(b"HTTP/1.1 200 OK\r\n")
        assert received.endswith(LAST_CHUNK)  # ended by the service, not cut by the kernel
        assert b"retry: 1000" in received
        # ended after it had left more than the bound unsent, and not long after (what the
        # client's buffer took, the bound, and the frame that went over it)
        assert MAX_BUFFERED < len(received) < MAX_BUFFERED + 8 * RECEIVE_BUFFER + 16384, \
            len(received)
        assert f"id: {player.version}\n".encode() not in received  # not the whole log


def _reads(client: redis.Redis) -> dict[str, int]:
    """Calls of each Redis command so far (``INFO commandstats``), but ``info`` itself."""
    stats: dict[str, Any] = client.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()
            if name != "cmdstat_info"}


@pytest.mark.parametrize("worker_class", ["gthread", "gevent"])
def test_an_idle_stream_and_a_waiting_poll_make_no_redis_reads(
        tmp_path: Path, redis_url: str, worker_class: str) -> None:
    with _serving(tmp_path, redis_url, RUMMY_WORKER_CLASS=_worker_class(worker_class),
                  RUMMY_SSE_HEARTBEAT_SECONDS="0.5") as server, \
            requests.Session() as session, \
            contextlib.closing(redis.Redis.from_url(redis_url)) as client:
        game = _create(session, server)
        player = Player(session, server, game)
        player.move()
        with _request(server, f"/v1/games/{game['game_id']}/events") as stream:
            seen = bytearray()
            while b": heartbeat" not in seen:  # caught up (version 1), and idle
                chunk = stream.recv(65536)
                assert chunk, seen
                seen += chunk
            assert b"id: 1\n" in seen
            polled: dict[str, Any] = {}

            def poll() -> None:
                resp = requests.get(f"{server.base_url}/v1/games/{game['game_id']}",
                                    timeout=20, headers={"If-None-Match": f'"{player.version}"',
                                                         "Prefer": "wait=15"})
                polled.update(status=resp.status_code, version=resp.headers.get("ETag"))

            waiting = threading.Thread(target=poll, daemon=True)
            waiting.start()
            time.sleep(0.5)  # the poll has read its view once and waits
            before = _reads(client)
            quiet = time.monotonic()
            heartbeats = seen.count(b": heartbeat")
            while time.monotonic() - quiet < 3:  # six heartbeats' time
                chunk = stream.recv(65536)
                assert chunk, seen
                seen += chunk
            after = _reads(client)
            assert seen.count(b": heartbeat") - heartbeats >= 4
            assert waiting.is_alive()
            changed = {name: after[name] - before.get(name, 0) for name in after
                       if after[name] != before.get(name, 0)}
            assert changed == {}, f"Redis calls while nothing moved: {changed}"
            # and a move wakes both: the stream sends it, the poll answers with it
            player.move()
            while b"id: 2\n" not in seen:
                chunk = stream.recv(65536)
                assert chunk, seen
                seen += chunk
            waiting.join(10)
            assert polled == {"status": 200, "version": '"2"'}
            assert _reads(client) != after  # the counting sees reads when there are some
