"""Slow clients against a real ``rummy-referee serve``: connections that send half a
request, a body shorter than its ``Content-Length``, a byte a second, or that never close
after their answer, hold no worker (probes from another address are answered at once) and
are cut at ``RUMMY_REQUEST_READ_TIMEOUT``; connections beyond
``RUMMY_MAX_CONNECTIONS_PER_ADDRESS`` from one address are refused while another address is
served. Each served test runs under gunicorn's gthread worker (the default) and its gevent
worker."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.config import ConfigError, Settings
from service.serving_limits import COMPLETE, HEAD_ONLY, INCOMPLETE, address_key, request_state
from tests.support.serving import Server, served

WORKER_CLASSES = ["gthread", "gevent"]
ATTACKER, PROBER = "127.0.0.3", "127.0.0.2"  # the loopback range is all local: addresses
# other than the 127.0.0.1 that the server's readiness checks come from

DEADLINE = 4.0  # RUMMY_REQUEST_READ_TIMEOUT in the served tests
PROBE_WITHIN = 2.0  # a probe held behind the slow clients would wait about DEADLINE

HALF_HEAD = b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
SHORT_BODY = (b"POST /v1/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Accept-Language: sv\r\nContent-Length: 1000\r\n\r\n" + b'{"variant"')
"""A head asking for Swedish: its 408 is in Swedish (the gate's or the app's)."""
TRICKLE_HEAD = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: "
WHOLE_GET = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
GET_AND_CLOSE = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


def _serve(tmp_path: Path, redis_url: str, worker_class: str, env: dict[str, str],
           workers: int = 2) -> contextlib.AbstractContextManager[Server]:
    if worker_class == "gevent":
        pytest.importorskip("gevent")
        env = {**env, "GUNICORN_CMD_ARGS": "--worker-class gevent"}
    return served(tmp_path, redis_url, workers=workers, env=env)


def _connect(port: int, source: str = ATTACKER, timeout: float = 10) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                    source_address=(source, 0))


def _read_answer(sock: socket.socket) -> bytes:
    """One whole answer with a Content-Length (head and body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, data
        body += chunk
    return head + b"\r\n\r\n" + body


def _read_to_end(sock: socket.socket, within: float) -> tuple[bytes, float]:
    """Everything until the server closes (or ``within`` seconds pass), and when it closed
    (monotonic time; inf when it did not)."""
    data = b""
    deadline = time.monotonic() + within
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        except ConnectionResetError:
            return data, time.monotonic()
        if not chunk:
            return data, time.monotonic()
        data += chunk
    return data, float("inf")


def _probe(port: int) -> tuple[float, bytes]:
    """GET /healthz from the other address on a new connection: seconds taken, answer."""
    start = time.monotonic()
    with _connect(port, PROBER, timeout=DEADLINE + 5) as sock:
        sock.sendall(GET_AND_CLOSE)
        answer = _read_answer(sock)
    return time.monotonic() - start, answer


def _problem(answer: bytes) -> dict[str, object]:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"content-type: application/problem+json" in head.lower(), head
    document: dict[str, object] = json.loads(body)
    return document


class _Slow:
    """A slow connection: the socket, its kind, and when its slow request began."""

    def __init__(self, sock: socket.socket, kind: str) -> None:
        self.sock, self.kind, self.began = sock, kind, time.monotonic()


@contextlib.contextmanager
def _trickling(slow: list[_Slow]) -> Iterator[None]:
    """One byte a second on each ``trickle`` connection, until the block ends."""
    stop = threading.Event()

    def trickle() -> None:
        while not stop.wait(1.0):
            for each in slow:
                if each.kind.endswith("trickle"):
                    with contextlib.suppress(OSError):
                        each.sock.send(b"a")

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


def _open_slow(port: int, kind: str, stack: contextlib.ExitStack) -> _Slow:
    sock = stack.enter_context(_connect(port))
    if kind.startswith("kept-alive"):
        sock.sendall(WHOLE_GET)
        assert _read_answer(sock).startswith(b"HTTP/1.1 200 "), kind
    slow = _Slow(sock, kind)
    sock.sendall({"half-head": HALF_HEAD, "kept-alive-half-head": HALF_HEAD,
                  "short-body": SHORT_BODY, "kept-alive-short-body": SHORT_BODY,
                  "trickle": TRICKLE_HEAD, "kept-alive-trickle": TRICKLE_HEAD,
                  "never-closes": GET_AND_CLOSE, "sends-nothing": b""}[kind])
    return slow


SLOW_KINDS = ["half-head", "short-body", "trickle", "kept-alive-half-head",
              "kept-alive-short-body", "kept-alive-trickle", "never-closes", "sends-nothing"]


@pytest.mark.slow
@pytest.mark.parametrize("worker_class", WORKER_CLASSES)
def test_slow_clients_hold_no_worker_and_are_cut_at_the_deadline(
        tmp_path: Path, redis_url: str, worker_class: str) -> None:
    """32 slow connections from one address (4 of each kind) against 2 workers of 4
    threads: probes from another address are each answered within PROBE_WITHIN, long
    before the deadline would free a worker held by them; then each slow request is cut
    at the deadline (counted from when it began: a byte a second does not extend it) with
    a 408 problem+json, a connection that sent nothing is closed then without an answer,
    and one that never closes after its answer is closed."""
    env = {"RUMMY_REQUEST_READ_TIMEOUT": str(DEADLINE),
           "RUMMY_MAX_CONNECTIONS_PER_ADDRESS": "100"}
    with _serve(tmp_path, redis_url, worker_class, env) as server, \
            contextlib.ExitStack() as stack:
        slow = [_open_slow(server.port, kind, stack) for kind in SLOW_KINDS for _ in range(4)]
        with _trickling(slow):
            probes = [_probe(server.port) for _ in range(5)]
            for took, answer in probes:
                assert answer.startswith(b"HTTP/1.1 200 "), answer
                assert took < PROBE_WITHIN, f"a probe took {took:.2f} s: {probes}"
            ends = [(each, *_read_to_end(each.sock, DEADLINE + 8)) for each in slow]
        for each, answer, ended in ends:
            after = ended - each.began
            if each.kind == "never-closes":
                assert answer.startswith(b"HTTP/1.1 200 "), (each.kind, answer)
                assert after < DEADLINE + 4, (each.kind, after)  # closed, not left open
                continue
            assert DEADLINE - 0.5 < after < DEADLINE + 4, (each.kind, after, answer)
            if each.kind == "sends-nothing":
                assert answer == b"", answer
                continue
            assert answer.startswith(b"HTTP/1.1 408 "), (each.kind, answer)
            assert b"\r\nconnection: close\r\n" in answer.lower(), (each.kind, answer)
            problem = _problem(answer)
            assert problem["status"] == 408, problem
            swedish = each.kind.endswith("short-body")
            assert f"\r\ncontent-language: {'sv' if swedish else 'en'}\r\n".encode() in \
                answer.lower(), (each.kind, answer)
            assert problem["title"] == ("Tidsgränsen för begäran överskreds" if swedish
                                        else "Request Timeout"), (each.kind, problem)
        # and the server is still whole
        took, answer = _probe(server.port)
        assert answer.startswith(b"HTTP/1.1 200 ") and took < PROBE_WITHIN


@pytest.mark.slow
@pytest.mark.parametrize("worker_class", WORKER_CLASSES)
def test_connections_beyond_the_limit_of_an_address_are_refused_and_others_served(
        tmp_path: Path, redis_url: str, worker_class: str) -> None:
    """One worker, RUMMY_MAX_CONNECTIONS_PER_ADDRESS=4: two connections that sent nothing
    yet and two kept alive after a request hold the four; a fifth from the same address is
    refused at once (503 problem+json, closed) and its request never served, while
    another address is served; once one of the four closes, the address is served again."""
    env = {"RUMMY_MAX_CONNECTIONS_PER_ADDRESS": "4", "RUMMY_REQUEST_READ_TIMEOUT": "30"}
    with _serve(tmp_path, redis_url, worker_class, env, workers=1) as server:
        held: list[socket.socket] = []
        try:
            held += [_connect(server.port) for _ in range(2)]
            for _ in range(2):
                sock = _connect(server.port)
                held.append(sock)
                sock.sendall(WHOLE_GET)
                assert _read_answer(sock).startswith(b"HTTP/1.1 200 ")
            for _ in range(3):
                start = time.monotonic()
                with _connect(server.port) as extra:
                    extra.sendall(GET_AND_CLOSE)
                    answer, ended = _read_to_end(extra, 10)
                assert ended - start < PROBE_WITHIN, answer
                assert answer.startswith(b"HTTP/1.1 503 "), answer
                assert b"\r\nretry-after: " in answer.lower(), answer
                problem = _problem(answer)
                assert problem["status"] == 503 and problem["code"] == "TOO_MANY_CONNECTIONS"
                assert answer.count(b"HTTP/1.1 ") == 1, answer  # its request not served
            took, answer = _probe(server.port)
            assert answer.startswith(b"HTTP/1.1 200 ") and took < PROBE_WITHIN, answer
            held.pop(0).close()  # one that sent nothing goes
            deadline = time.monotonic() + 5
            while True:
                with _connect(server.port) as again:
                    again.sendall(GET_AND_CLOSE)
                    answer, _ = _read_to_end(again, 10)
                if answer.startswith(b"HTTP/1.1 200 "):
                    break
                assert answer.startswith(b"HTTP/1.1 503 "), answer
                assert time.monotonic() < deadline, "the closed connection still counts"
                time.sleep(0.1)
        finally:
            for sock in held:
                sock.close()


# --- what counts as a whole request, and as one address -------------------------------------


def test_a_request_is_whole_when_its_head_and_body_are_there() -> None:
    get = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    assert request_state(get, 1000)[0] == COMPLETE
    assert request_state(b"\r\n" + get, 1000)[0] == COMPLETE  # empty lines before: allowed
    assert request_state(get[:-2], 1000)[0] == INCOMPLETE
    post = b"POST / HTTP/1.1\r\ncontent-LENGTH: 5\r\n\r\n"
    assert request_state(post + b"12345", 1000)[0] == COMPLETE
    state, wanted = request_state(post + b"12", 1000)
    assert state == INCOMPLETE and wanted == len(post) + 5
    chunked = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    assert request_state(chunked + b"5\r\n12345\r\n0\r\n\r\n", 1000)[0] == COMPLETE
    assert request_state(chunked + b"5;x=y\r\n12345\r\n0\r\nA: b\r\n\r\n", 1000)[0] == COMPLETE
    assert request_state(chunked + b"5\r\n12345\r\n0\r\n", 1000)[0] == INCOMPLETE
    assert request_state(chunked + b"5\r\n123", 1000)[0] == INCOMPLETE


def test_a_request_the_server_can_answer_without_its_body_is_handed_over_at_its_head() -> None:
    """Over the body limit (413 without reading it), a malformed length or chunk (400),
    an ``Expect: 100-continue`` (the body comes after the interim answer), a head over the
    head limit: the worker answers these, reading what it still reads under the deadline."""
    head = b"POST / HTTP/1.1\r\nContent-Length: 5000\r\n\r\n"
    assert request_state(head, 1000)[0] == HEAD_ONLY
    assert request_state(b"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n", 1000)[0] == HEAD_ONLY
    two = b"POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"
    assert request_state(two, 1000)[0] == HEAD_ONLY
    expect = b"POST / HTTP/1.1\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"
    assert request_state(expect, 1000)[0] == HEAD_ONLY
    chunked = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    assert request_state(chunked + b"zz\r\n", 1000)[0] == HEAD_ONLY
    assert request_state(chunked + b"800\r\n" + b"a" * 2048 + b"\r\n", 1000)[0] == HEAD_ONLY
    assert request_state(b"GET /" + b"a" * 70000, 1000)[0] == HEAD_ONLY


def test_an_address_is_an_ipv4_address_or_an_ipv6_slash_64() -> None:
    assert address_key(("10.1.2.3", 5000)) == "10.1.2.3"
    assert address_key(("::ffff:10.1.2.3", 5000, 0, 0)) == "10.1.2.3"
    assert address_key(("2001:db8:1:2:3:4:5:6", 5000, 0, 0)) == "2001:db8:1:2::/64"
    assert address_key(("2001:db8:1:2:ffff::1", 5000, 0, 0)) == "2001:db8:1:2::/64"
    assert address_key("") is None  # a Unix socket's peer has no address
    assert address_key(b"") is None


def test_the_limits_are_settings_with_defaults() -> None:
    default = Settings.from_env({})
    assert default.request_read_timeout == 10.0
    assert default.max_connections_per_address is None  # auto
    assert default.connections_per_address == 64
    behind_proxy = Settings.from_env({"RUMMY_PROXY_HOPS": "1"})
    assert behind_proxy.connections_per_address == 0  # the peer is the proxy: off
    given = Settings.from_env({"RUMMY_REQUEST_READ_TIMEOUT": "2.5",
                               "RUMMY_MAX_CONNECTIONS_PER_ADDRESS": "4",
                               "RUMMY_PROXY_HOPS": "1"})
    assert given.request_read_timeout == 2.5
    assert given.connections_per_address == 4
    assert Settings.from_env({"RUMMY_MAX_CONNECTIONS_PER_ADDRESS": "0"}
                             ).connections_per_address == 0
    assert Settings.from_env({"RUMMY_MAX_CONNECTIONS_PER_ADDRESS": "auto"}
                             ).connections_per_address == 64
    with pytest.raises(ConfigError, match="RUMMY_REQUEST_READ_TIMEOUT"):
        Settings.from_env({"RUMMY_REQUEST_READ_TIMEOUT": "0"})
    with pytest.raises(ConfigError, match="RUMMY_MAX_CONNECTIONS_PER_ADDRESS"):
        Settings.from_env({"RUMMY_MAX_CONNECTIONS_PER_ADDRESS": "-1"})
    with pytest.raises(ConfigError, match="RUMMY_MAX_CONNECTIONS_PER_ADDRESS"):
        Settings.from_env({"RUMMY_MAX_CONNECTIONS_PER_ADDRESS": "many"})
