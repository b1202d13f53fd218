"""End to end: ``rummy-referee serve`` (gunicorn, 2 workers) on the session Redis, one
complete basic match over real HTTP, then a graceful stop with SIGTERM."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import pty
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests

from service.redis_server import free_port
from tests.support.http_player import REQUEST_TIMEOUT, HttpPlayer, RequestsTransport
from tests.support.serving import (
    STOP_TIMEOUT,
    Server,
    descendants,
    plain_env,
    proc_stat,
    rummy_referee,
    served,
    wait_until_ready,
)

pytestmark = pytest.mark.slow

@pytest.fixture
def server(tmp_path: Path, redis_url: str) -> Iterator[Server]:
    started = Server(tmp_path, redis_url)
    try:
        yield started
    finally:
        started.kill()


def test_a_complete_match_over_http_then_a_graceful_stop(server: Server) -> None:
    with requests.Session() as session:
        server.wait_ready(session)
        health = session.get(f"{server.base_url}/healthz", timeout=REQUEST_TIMEOUT)
        assert health.status_code == 200
        # the master binds nothing (each worker binds with SO_REUSEPORT); the log still
        # says where the service listens
        assert f"Serving on http://127.0.0.1:{server.port} — " in server.output()
        assert "2 workers x 4 threads, each on a socket of its own" in server.output()

        resp = session.post(f"{server.base_url}/v1/games", timeout=REQUEST_TIMEOUT,
                            json={"variant": "basic", "players": ["Ana", "Bo"],
                                  "rules": {"match_end": {"deals": 1}}})
        assert resp.status_code == 201, resp.text
        created = resp.json()
        game_id = created["game_id"]
        assert resp.headers["Location"] == f"/v1/games/{game_id}"
        tokens = [seat["token"] for seat in created["seats"]]

        transport = RequestsTransport(server.base_url, session, timeout=REQUEST_TIMEOUT)
        player = HttpPlayer(transport, game_id, tokens, max_moves=1500, time_limit=20.0)
        final = player.play_match()

        assert final["status"] == "finished"
        assert final["turn"] is None
        assert final["version"] == player.moves
        assert len(final["hands_played"]) == 1
        played = final["hands_played"][0]
        assert played["hand_number"] == 1
        totals = [s["total"] for s in final["seats"]]
        assert totals == played["scores"]
        assert final["winners"] == [i for i, t in enumerate(totals) if t == max(totals)]

        again = session.get(f"{server.base_url}{resp.headers['Location']}",
                            timeout=REQUEST_TIMEOUT)
        assert again.status_code == 200
        assert again.headers["ETag"] == f'"{player.moves}"'
        assert again.json() == final
        late = session.post(f"{server.base_url}/v1/games/{game_id}/moves",
                            timeout=REQUEST_TIMEOUT, json={"type": "draw", "source": "stock"},
                            headers={"Authorization": f"Bearer {tokens[0]}"})
        assert late.status_code == 422
        assert late.headers["Content-Type"].startswith("application/problem+json")
        assert late.json()["code"] == "GAME_FINISHED"

    assert server.terminate() == 0, server.output()
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{server.base_url}/healthz", timeout=2)


class _Terminal:
    """``rummy-referee serve`` writing to a terminal (a pseudo-terminal read by a thread),
    as a newcomer runs it."""

    def __init__(self, tmp_path: Path, redis_url: str | None,
                 env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        environ = plain_env() | {"RUMMY_DATA_DIR": str(tmp_path / "data")} | (env or {})
        if redis_url is not None:
            environ["REDIS_URL"] = redis_url
        controller, terminal = pty.openpty()
        self.proc = subprocess.Popen(
            [rummy_referee(), "serve", "--port", str(self.port), "--workers", "1"],
            env=environ, cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=terminal,
            stderr=terminal, start_new_session=True)
        os.close(terminal)
        self._text = bytearray()
        self._reader = threading.Thread(target=self._read, args=(controller,), daemon=True)
        self._reader.start()

    def _read(self, controller: int) -> None:
        with contextlib.suppress(OSError):  # EIO once every writer has closed it
            while chunk := os.read(controller, 65536):
                self._text.extend(chunk)
        os.close(controller)

    def output(self) -> str:
        return self._text.decode(errors="replace").replace("\r\n", "\n")

    def lines_saying(self, text: str, count: int, within: float = 5.0) -> list[str]:
        """The output's lines that hold ``text``, once there are ``count`` of them."""
        deadline = time.monotonic() + within
        while True:
            found = [line for line in self.output().splitlines() if text in line]
            if len(found) >= count or time.monotonic() > deadline:
                return found
            time.sleep(0.05)

    def wait_ready(self) -> None:
        wait_until_ready(self.proc, self.base_url, self.output)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self._reader.join(timeout=10)


@pytest.fixture
def on_a_terminal(tmp_path: Path) -> Iterator[Callable[..., _Terminal]]:
    started: list[_Terminal] = []

    def start(redis_url: str | None, env: dict[str, str] | None = None) -> _Terminal:
        started.append(_Terminal(tmp_path, redis_url, env))
        return started[-1]

    yield start
    for one in started:
        one.close()


def test_on_a_terminal_serve_names_its_pages_and_logs_a_readable_line_per_request(
        on_a_terminal: Callable[..., _Terminal], redis_url: str) -> None:
    """What a newcomer sees: where the API docs and the web table are (never an address
    left empty), and each request as one line they can read."""
    server = on_a_terminal(redis_url)
    server.wait_ready()
    url = server.base_url
    assert server.lines_saying("Serving on", 1) and (
        f"Serving on {url} — API docs {url}/docs, web table {url}/play" in server.output())
    assert "Listening at:  (" not in server.output()
    assert requests.get(f"{url}/docs", timeout=REQUEST_TIMEOUT).status_code == 200
    assert requests.get(f"{url}/play", timeout=REQUEST_TIMEOUT).status_code == 200
    for _ in range(2):
        requests.get(f"{url}/healthz?seen=1", timeout=REQUEST_TIMEOUT)
    logged = server.lines_saying("/healthz", 2)
    assert len(logged) == 2, server.output()
    assert all(re.fullmatch(r"\[.+\] \[\d+\] \[INFO\] GET /healthz 200 [\d.]+ ms", line)
               for line in logged), logged
    assert not [line for line in server.output().splitlines() if line.startswith("{")]


def test_on_a_terminal_logs_are_json_when_set(on_a_terminal: Callable[..., _Terminal],
                                              redis_url: str) -> None:
    server = on_a_terminal(redis_url, {"RUMMY_LOG_FORMAT": "json"})
    server.wait_ready()
    requests.get(f"{server.base_url}/healthz", timeout=REQUEST_TIMEOUT)
    (line,) = server.lines_saying('"/healthz"', 1)
    assert json.loads(line)["status"] == 200


@pytest.mark.parametrize("to_group", [False, True], ids=["to-serve", "to-its-process-group"])
def test_ctrl_c_stops_serve_within_3_s_even_with_event_streams_open(
        tmp_path: Path, to_group: bool) -> None:
    """SIGINT to ``rummy-referee serve`` (with its own redis-server), or to its whole
    process group as a terminal's Ctrl-C sends it, while clients hold event streams open
    (a web table does): every process is gone within 3 s, and no worker had to be killed
    (gunicorn says ``Worker … was sent SIGKILL! Perhaps out of memory?`` when one did)."""
    server = Server(tmp_path, None)
    streams: list[socket.socket] = []
    try:
        server.wait_ready()
        path = _events_of_a_new_game(server)
        for _ in range(2):  # a stream on each worker, as likely as not
            sock, answer = _open_stream(server.port, path)
            streams.append(sock)
            assert answer.startswith(b"HTTP/1.1 200"), answer
        below = descendants(server.proc.pid)  # gunicorn, its workers and redis-server
        assert any(comm.startswith("redis-server") for comm, _, _ in below.values()), below
        started = time.monotonic()
        if to_group:
            os.killpg(server.proc.pid, signal.SIGINT)
        else:
            server.proc.send_signal(signal.SIGINT)
        try:
            server.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail(f"serve still running 10 s after SIGINT:\n{server.output()}")
        while [pid for pid, (_, _, start) in below.items()
               if (proc_stat(pid) or ("", 0, -1))[2] == start] and time.monotonic() - started < 3:
            time.sleep(0.05)
        took = time.monotonic() - started
        assert took < 3, f"{took:.1f} s:\n{server.output()}"
        assert "SIGKILL" not in server.output(), server.output()
    finally:
        for sock in streams:
            sock.close()
        server.kill()


def test_a_second_serve_refuses_the_data_directory_the_first_one_uses(tmp_path: Path) -> None:
    """Two ``serve``s in one checkout (the same ``RUMMY_DATA_DIR``, other ports) would run
    two redis-servers on one data directory, each overwriting the other's append-only file:
    the second stops at once, saying which process holds it and what to do, and the first
    serves on. Once the first has stopped, the directory is free again."""
    first = Server(tmp_path, None)
    try:
        first.wait_ready()
        second = Server(tmp_path, None)
        try:
            assert second.proc.wait(timeout=STOP_TIMEOUT) == 1, second.output()
        finally:
            second.kill()
        data = (tmp_path / "data" / "redis").resolve()
        said = second.output()
        assert f"data directory {data} is in use by another rummy-referee serve " \
               f"(pid {first.proc.pid})" in said, said
        assert "RUMMY_DATA_DIR" in said and "started redis-server" not in said, said
        assert requests.get(f"{first.base_url}/readyz", timeout=REQUEST_TIMEOUT).ok
        assert first.terminate() == 0, first.output()
    finally:
        first.kill()
    third = Server(tmp_path, None)
    try:
        third.wait_ready()
        assert third.terminate() == 0, third.output()
    finally:
        third.kill()


def test_a_keep_alive_connection_closes_after_its_request_budget(
        tmp_path: Path, redis_url: str) -> None:
    """RUMMY_KEEPALIVE_REQUESTS=3: the third answer on a connection says Connection: close
    and the server closes it; a new connection is served again (and a fourth request on the
    old one is never answered)."""
    server = Server(tmp_path, redis_url, env={"RUMMY_KEEPALIVE_REQUESTS": "3"})
    try:
        server.wait_ready()
        for _round in range(2):
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=REQUEST_TIMEOUT)
            answers = []
            for _ in range(3):
                conn.request("GET", "/healthz")
                resp = conn.getresponse()
                resp.read()
                answers.append((resp.status, resp.getheader("Connection")))
            assert answers == [(200, "keep-alive"), (200, "keep-alive"), (200, "close")]
            assert conn.sock is None  # http.client closed it, as the answer asked
            conn.close()
    finally:
        server.kill()


def test_the_test_client_waits_out_a_429_for_its_retry_after(tmp_path: Path,
                                                             redis_url: str) -> None:
    """:class:`RequestsTransport` (which plays the match above at full speed) honours
    ``Retry-After`` instead of failing on a seat's rate limit."""
    with served(tmp_path, redis_url, env={"RUMMY_RATE_LIMITS": "3/second"}) as started, \
            requests.Session() as session:
        created = session.post(f"{started.base_url}/v1/games", timeout=REQUEST_TIMEOUT,
                               json={"variant": "basic", "players": ["Ana", "Bo"]}).json()
        transport = RequestsTransport(started.base_url, session)
        path = f"/v1/games/{created['game_id']}/me"
        token = created["seats"][0]["token"]
        statuses = [transport.request("GET", path, token=token).status for _ in range(5)]
        assert statuses == [200] * 5
        assert transport.waited_out >= 1


def _raw_post(port: int, path: str, token: str, head: str, body: bytes,
              half_close: bool = False) -> tuple[int, bytes]:
    """POST ``body`` with the header lines ``head`` on a socket of its own; the status and
    the body of the answer (``half_close``: the client stops sending after ``body``)."""
    with socket.create_connection(("127.0.0.1", port), timeout=REQUEST_TIMEOUT) as sock:
        sock.sendall((f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
                      f"Connection: close\r\n{head}\r\n").encode() + body)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    status_line, _, rest = answer.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


def test_a_move_body_is_read_by_its_length_chunked_or_not_at_all_when_cut_short(
        server: Server) -> None:
    """Under gunicorn: a move's body with a ``Content-Length`` and one sent chunked are
    read alike; a body shorter than its ``Content-Length`` is refused (400), a malformed
    chunk too (400, not an internal error), and a length over the 64 KiB limit (413); none
    of them changes the game."""
    with requests.Session() as session:
        server.wait_ready(session)
        created = session.post(f"{server.base_url}/v1/games", timeout=REQUEST_TIMEOUT,
                               json={"variant": "basic", "players": ["Ana", "Bo"]}).json()
    game_id, seat = created["game_id"], created["game"]["turn"]["seat"]
    token = created["seats"][seat]["token"]
    path = f"/v1/games/{game_id}/moves"

    def version() -> int:
        answer = requests.get(f"{server.base_url}/v1/games/{game_id}", timeout=REQUEST_TIMEOUT)
        return int(answer.json()["version"])

    draw = json.dumps({"type": "draw", "source": "stock"}).encode()
    status, body = _raw_post(server.port, path, token, f"Content-Length: {len(draw) + 5}\r\n",
                             draw, half_close=True)
    assert status == 400, body
    assert json.loads(body)["detail"] == (f"the body ended after {len(draw)} of the "
                                          f"{len(draw) + 5} bytes its Content-Length declares")
    assert version() == 0
    status, body = _raw_post(server.port, path, token, "Content-Length: 70000\r\n",
                             draw + b" " * (70000 - len(draw)))
    assert status == 413, body
    assert json.loads(body)["status"] == 413
    assert version() == 0
    status, body = _raw_post(server.port, path, token, "Transfer-Encoding: chunked\r\n",
                             b"zz\r\n" + draw + b"\r\n0\r\n\r\n")
    assert status == 400, body
    assert json.loads(body)["detail"].startswith("the body could not be read: Invalid chunk")
    assert version() == 0
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (draw[:9], draw[9:]))
    status, body = _raw_post(server.port, path, token, "Transfer-Encoding: chunked\r\n",
                             chunked + b"0\r\n\r\n")
    assert status == 200, body
    assert json.loads(body)["game"]["version"] == 1 == version()
    discard = json.dumps({"type": "discard", "card": json.loads(body)["game"]["hand"][0]})
    status, body = _raw_post(server.port, path, token,
                             f"Content-Length: {len(discard)}\r\n", discard.encode())
    assert status == 200, body
    assert version() == 2


def _open_stream(port: int, path: str, host: str = "127.0.0.1") -> tuple[socket.socket, bytes]:
    """A raw connection asking for the event stream at ``path``: the socket and the
    status line with the first bytes of the answer."""
    sock = socket.create_connection((host, port), timeout=10)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n"
                 .encode())
    return sock, sock.recv(4096)


def _events_of_a_new_game(server: Server) -> str:
    """The event-stream path of a new basic game on ``server``."""
    created = requests.post(f"{server.base_url}/v1/games", timeout=REQUEST_TIMEOUT,
                            json={"variant": "basic", "players": ["Ana", "Bo"]})
    assert created.status_code == 201, created.text
    return f"/v1/games/{created.json()['game_id']}/events"


def _open_once_the_slot_is_free(server: Server, path: str, within: float, why: str) -> None:
    """Open the stream at ``path`` and drop it at once, asking again while the answer is
    503 (the one stream slot still taken), for ``within`` seconds at most (``why``)."""
    deadline = time.monotonic() + within
    while True:
        sock, answer = _open_stream(server.port, path, server.host)
        sock.close()
        if answer.startswith(b"HTTP/1.1 200"):
            return
        assert answer.startswith(b"HTTP/1.1 503"), answer
        assert time.monotonic() < deadline, why
        time.sleep(0.1)


def test_a_stream_whose_client_went_away_gives_its_slot_back_at_once(
        tmp_path: Path, redis_url: str) -> None:
    """One worker with one stream slot and heartbeats a minute apart: a client that closes
    its stream frees the slot within a poll or two, not at the next heartbeat."""
    env = {"RUMMY_SSE_MAX_STREAMS": "1", "RUMMY_SSE_HEARTBEAT_SECONDS": "60"}
    with served(tmp_path, redis_url, workers=1, env=env) as server:
        path = _events_of_a_new_game(server)
        for _ in range(4):  # a page loaded, then reloaded three times
            _open_once_the_slot_is_free(server, path, 3, "the slot was not given back")


@contextlib.contextmanager
def _peer_namespace() -> Iterator[tuple[str, str, str]]:
    """A network namespace joined to this one by a veth pair, as a second host on a link
    of its own: (namespace, this side's address, the link's name inside the namespace).
    Skips the test where namespaces cannot be made (not root, no ``ip``)."""
    if shutil.which("ip") is None or os.geteuid() != 0:
        pytest.skip("needs root and iproute2 for a network namespace")
    tag = os.getpid() % 100_000
    namespace, here, there = f"rummy-t{tag}", f"rv0t{tag}", f"rv1t{tag}"
    net = f"10.231.{tag % 250}"
    steps = [["ip", "netns", "add", namespace],
             ["ip", "link", "add", here, "type", "veth", "peer", "name", there],
             ["ip", "link", "set", there, "netns", namespace],
             ["ip", "addr", "add", f"{net}.1/30", "dev", here],
             ["ip", "link", "set", here, "up"],
             ["ip", "netns", "exec", namespace, "ip", "addr", "add", f"{net}.2/30", "dev", there],
             ["ip", "netns", "exec", namespace, "ip", "link", "set", there, "up"]]
    try:
        for step in steps:
            made = subprocess.run(step, capture_output=True, text=True, check=False)
            if made.returncode != 0:
                pytest.skip(f"no network namespace here: {' '.join(step)}: {made.stderr}")
        yield namespace, f"{net}.1", there
    finally:  # the namespace takes its end of the pair with it, and the pair goes
        subprocess.run(["ip", "netns", "del", namespace], capture_output=True, check=False)
        subprocess.run(["ip", "link", "del", here], capture_output=True, check=False)


_VANISHING_CLIENT = """
import socket, sys, time
host, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sock = socket.create_connection((host, port), timeout=10)
head = f"GET {path} HTTP/1.1\\r\\nHost: x\\r\\nAccept: text/event-stream\\r\\n\\r\\n"
sock.sendall(head.encode())
print(sock.recv(4096).split(b"\\r\\n")[0].decode(), flush=True)
time.sleep(120)
"""


@pytest.mark.slow
def test_a_stream_whose_client_vanished_without_a_word_gives_its_slot_back(
        tmp_path: Path, redis_url: str) -> None:
    """A client on another host whose link goes down mid-stream sends no FIN or RST: the
    server's heartbeats go unacknowledged. Two heartbeats' worth later (TCP_USER_TIMEOUT)
    the connection ends and the stream's slot is free again; without the bound the kernel
    would retransmit for about 15 minutes, the slot held all along."""
    with _peer_namespace() as (namespace, address, link):
        env = {"RUMMY_SSE_MAX_STREAMS": "1", "RUMMY_SSE_HEARTBEAT_SECONDS": "1"}
        with served(tmp_path, redis_url, workers=1, env=env, host=address) as server:
            path = _events_of_a_new_game(server)
            client = subprocess.Popen(
                ["ip", "netns", "exec", namespace, sys.executable, "-c", _VANISHING_CLIENT,
                 address, str(server.port), path], stdout=subprocess.PIPE, text=True)
            try:
                assert client.stdout is not None
                assert client.stdout.readline().strip() == "HTTP/1.1 200 OK"
                sock, answer = _open_stream(server.port, path, address)
                sock.close()
                assert answer.startswith(b"HTTP/1.1 503"), answer  # its one slot is taken
                subprocess.run(["ip", "netns", "exec", namespace, "ip", "link", "set", link,
                                "down"], check=True)  # gone: not a packet more either way
                _open_once_the_slot_is_free(server, path, 15,
                                            "the vanished client kept the slot")
            finally:
                client.kill()
                client.wait(timeout=10)
                if client.stdout is not None:
                    client.stdout.close()
