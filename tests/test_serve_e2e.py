"""End to end: ``rummy-referee serve`` (gunicorn, 2 workers) on the session Redis, one
complete basic match over real HTTP, then a graceful stop with SIGTERM."""

from __future__ import annotations

import http.client
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from http_player import REQUEST_TIMEOUT, HttpPlayer, RequestsTransport
from serving import Server, served

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
        assert f"Listening at: http://127.0.0.1:{server.port} (2 workers" in server.output()

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


def _open_stream(port: int, path: str) -> tuple[socket.socket, bytes]:
    """A raw connection asking for the event stream at ``path``: the socket and the
    status line with the first bytes of the answer."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n"
                 .encode())
    return sock, sock.recv(4096)


def test_a_stream_whose_client_went_away_gives_its_slot_back_at_once(
        tmp_path: Path, redis_url: str) -> None:
    """One worker with one stream slot and heartbeats a minute apart: a client that closes
    its stream frees the slot within a poll or two, not at the next heartbeat."""
    env = {"RUMMY_SSE_MAX_STREAMS": "1", "RUMMY_SSE_HEARTBEAT_SECONDS": "60"}
    with served(tmp_path, redis_url, workers=1, env=env) as server:
        created = requests.post(f"{server.base_url}/v1/games", timeout=REQUEST_TIMEOUT,
                                json={"variant": "basic", "players": ["Ana", "Bo"]})
        assert created.status_code == 201, created.text
        path = f"/v1/games/{created.json()['game_id']}/events"
        for _ in range(4):  # a page loaded, then reloaded three times
            deadline = time.monotonic() + 3
            while True:
                sock, answer = _open_stream(server.port, path)
                sock.close()  # the stream (or the 503) is dropped at once
                if answer.startswith(b"HTTP/1.1 200"):
                    break
                assert answer.startswith(b"HTTP/1.1 503"), answer
                assert time.monotonic() < deadline, "the slot was not given back"
                time.sleep(0.1)
