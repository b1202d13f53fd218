"""What a slow or greedy client may take from a gunicorn worker: the time its request may
take to arrive (``RUMMY_REQUEST_READ_TIMEOUT``) and the connections one address may hold
(``RUMMY_MAX_CONNECTIONS_PER_ADDRESS``). :mod:`service.gunicorn_hooks` calls :func:`install`
in each worker once the app is loaded.

**The gate.** A worker's listening sockets are taken over by a :class:`ConnectionGate`, a
thread of the worker (a greenlet under gevent, whose monkey-patching makes threads, pipes
and selectors cooperative) that accepts every new connection itself and waits, in one
selector, until the connection's first request has arrived whole: its head, and its body as
``Content-Length`` or the chunks say. Only then does the worker see the connection: the
gate hands it over through a stand-in for the listening socket (:class:`GatedListener`),
which the worker's own loop polls and accepts from as from the real one (gthread's poller
calls ``accept()``, gevent's ``StreamServer`` calls ``_accept()``). So a client sending half
a request, or a byte a second, costs no worker thread and no greenlet, only a socket in the
gate; the gate reads nothing itself (it looks with ``MSG_PEEK``, and ``SO_RCVLOWAT`` wakes
it only when more has come), so the worker parses the request from the socket as ever. The
gate also counts each address's open connections, and refuses one over the limit at once,
with a 503: it never reaches the worker either.

**The deadline.** A request must arrive whole within ``RUMMY_REQUEST_READ_TIMEOUT`` of its
first byte (of the connection's start, for its first request): a total, not a time between
two reads. The gate answers a request still arriving then with 408 problem+json and closes
the connection (a connection that sent nothing at all it closes without an answer). A
request the worker reads itself is held to the same deadline by the socket reads of
gunicorn's HTTP parser (:func:`_read_chunk`), which both worker classes use: 408 from the
parser while the head is read, 408 from the app (:class:`RequestReadTimeout`, a werkzeug
``RequestTimeout``) while the body is, and the connection closed. The worker reads such a
request when the gate handed it over before it was whole (a body after ``Expect:
100-continue``, a head or body too large to wait for, a client that closed its end), and a
later request on a kept-alive connection: under gthread the thread that picks that
connection up reads the request only as far as it has come, without waiting, and one not
yet whole goes back to the gate with the bytes read of it
(:meth:`ConnectionGate.take_back`), the thread free; under gevent the connection's
greenlet reads it, cheaply, under the deadline.

**Closing.** gunicorn's gthread worker closes a connection "gracefully" by reading what the
client still sends, for up to 2 s, in its main loop: a client that never closes its end
stalled every other connection of the worker. The gate does that waiting instead
(:func:`_close_gracefully`).

The stand-ins, the gate and the patches depend on gunicorn's HTTP parser (shared by its
sync, gthread and gevent workers) and on how the workers use a listening socket; the
served tests run them under gthread and gevent. A Unix-socket bind (a proxy on the same
host) and gunicorn's own TLS are not gated (the gate cannot read a request through TLS);
the deadline applies to them all the same.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import heapq
import io
import ipaddress
import itertools
import json
import os
import re
import selectors
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from gunicorn import util as gunicorn_util
from gunicorn.http import errors as http_errors
from gunicorn.http.message import Request
from gunicorn.http.parser import RequestParser
from gunicorn.http.unreader import SocketUnreader
from werkzeug.exceptions import RequestTimeout

from service.config import Settings
from service.rules.errors import N_, Message

__all__ = ["COMPLETE", "HEAD_ONLY", "INCOMPLETE", "ConnectionGate", "GatedListener",
           "GatedSocket", "RequestReadTimeout", "address_key", "answer_in", "install",
           "request_state", "stop_listening"]

# --- what has arrived of a request ------------------------------------------------------------

INCOMPLETE, COMPLETE, HEAD_ONLY = 0, 1, 2
""":func:`request_state`: more is to come; the whole request is there; the worker may take
the request now and decide on it, though not all of it is there (see there)."""

HEAD_LIMIT = 64 * 1024
"""A head (or a chunked body's trailers) this long without its end is handed to the worker,
whose own limits answer it (414, 431)."""
_CHUNK_LINE_LIMIT = 1024
_HEX = re.compile(rb"[0-9A-Fa-f]{1,16}")
_DIGITS = re.compile(rb"[0-9]{1,18}")
_BODY_HEADERS = re.compile(rb"\r\n(content-length|transfer-encoding|expect)[ \t]*:[ \t]*([^\r\n]*)")
"""The header lines of a (lowercased) head that say whether a body follows."""


def request_state(data: bytes, max_body: int) -> tuple[int, int]:
    """How much of the request at the start of ``data`` has arrived: (:data:`COMPLETE`,
    its length), (:data:`INCOMPLETE`, the length ``data`` must reach before it can be
    whole), or (:data:`HEAD_ONLY`, 0) for a request the worker answers without the rest:
    a body over ``max_body`` bytes (413 before it is read), a malformed or conflicting
    length or chunk, a transfer coding other than chunked (400, 501), an ``Expect``
    (``100-continue``: the client sends the body only once told to), or a head over
    :data:`HEAD_LIMIT`. Empty lines before the request line are skipped, as HTTP/1.1 allows."""
    start, size = 0, len(data)
    while data.startswith(b"\r\n", start):
        start += 2
    end = data.find(b"\r\n\r\n", start)
    if end < 0:
        return (HEAD_ONLY, 0) if size - start >= HEAD_LIMIT else (INCOMPLETE, size + 1)
    body = end + 4
    if body - start > HEAD_LIMIT:
        return HEAD_ONLY, 0
    head = data[start:end].lower()
    if b"content-length" not in head and b"transfer-encoding" not in head \
            and b"expect" not in head:
        return COMPLETE, body
    lengths: list[bytes] = []
    codings: list[bytes] = []
    for name, value in _BODY_HEADERS.findall(head):
        value = value.rstrip(b" \t")
        if name == b"content-length":
            lengths.append(value)
        elif name == b"transfer-encoding":
            codings.extend(c.strip(b" \t") for c in value.split(b","))
        else:  # expect
            return HEAD_ONLY, 0
    if codings:
        if lengths or codings[-1] != b"chunked":
            return HEAD_ONLY, 0
        return _chunked_state(data, body, max_body)
    if not lengths:
        return COMPLETE, body
    if len(set(lengths)) != 1 or not _DIGITS.fullmatch(lengths[0]):
        return HEAD_ONLY, 0
    length = int(lengths[0])
    if length > max_body:
        return HEAD_ONLY, 0
    return (COMPLETE if size >= body + length else INCOMPLETE), body + length


def _chunked_state(data: bytes, pos: int, max_body: int) -> tuple[int, int]:
    """:func:`request_state` of a chunked body starting at ``pos``."""
    size, total = len(data), 0
    while True:
        line_end = data.find(b"\r\n", pos, pos + _CHUNK_LINE_LIMIT)
        if line_end < 0:
            return (HEAD_ONLY, 0) if size - pos >= _CHUNK_LINE_LIMIT else (INCOMPLETE, size + 1)
        size_text = data[pos:line_end].split(b";", 1)[0].strip(b" \t")
        if not _HEX.fullmatch(size_text):
            return HEAD_ONLY, 0
        chunk = int(size_text, 16)
        if chunk == 0:
            trailers = line_end + 2
            if data.startswith(b"\r\n", trailers):
                return COMPLETE, trailers + 2
            end = data.find(b"\r\n\r\n", trailers)
            if end >= 0:
                return COMPLETE, end + 4
            return (HEAD_ONLY, 0) if size - trailers >= HEAD_LIMIT else (INCOMPLETE, size + 1)
        total += chunk
        if total > max_body:
            return HEAD_ONLY, 0
        pos = line_end + 2 + chunk + 2
        if pos > size:
            return INCOMPLETE, pos


def address_key(addr: Any) -> str | None:
    """The address ``RUMMY_MAX_CONNECTIONS_PER_ADDRESS`` counts a peer under: its IPv4
    address (an IPv4-mapped IPv6 one too), or the /64 of its IPv6 address (a host is given a
    whole /64 by its network); None for a peer without one (a Unix socket's)."""
    if not isinstance(addr, tuple) or not addr or not isinstance(addr[0], str):
        return None
    host: str = addr[0]
    if ":" not in host:
        return host
    try:
        ip = ipaddress.IPv6Address(host.split("%", 1)[0])
    except ValueError:
        return None
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ipaddress.IPv6Network((ip, 64), strict=False))


# --- answers the gate and the parser give themselves -------------------------------------------


def _problem(status: int, reason: str, detail: str, *, code: str | None = None,
             headers: str = "", title: str | None = None) -> bytes:
    """A whole problem+json answer that closes the connection, as the app's own problems
    look (``type`` under :data:`service.api.problems.TYPE_BASE`; ``title`` the reason, or
    its translation)."""
    from service.api.problems import TYPE_BASE

    doc: dict[str, Any] = {"type": TYPE_BASE + (code or reason).lower().replace(" ", "-")
                           .replace("_", "-"), "title": title or reason, "status": status,
                           "detail": detail}
    if code is not None:
        doc["code"] = code
    body = json.dumps(doc).encode()
    head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\n{headers}"
            f"Content-Type: application/problem+json\r\nContent-Length: {len(body)}\r\n\r\n")
    return head.encode("latin-1") + body


def _problems(status: int, reason: str, detail: Message, *, code: str | None = None,
              headers: str = "") -> dict[str, bytes]:
    """:func:`_problem` in English and in each language whose compiled catalog is installed
    (as the app offers them, :mod:`service.api.i18n`), by language, each saying its
    ``Content-Language``: made once, before any request; :func:`answer_in` picks one for
    the request the gate has read."""
    from babel.support import Translations

    from service.api import i18n

    answers: dict[str, bytes] = {}
    for language in i18n.installed_languages():
        translate: Any = str
        if language != i18n.DEFAULT:
            translate = Translations.load(str(i18n.TRANSLATIONS), [language]).gettext
        answers[language] = _problem(
            status, reason, detail.render(translate), code=code, title=translate(reason),
            headers=f"{headers}Content-Language: {language}\r\nVary: Accept-Language\r\n")
    return answers


_ACCEPT_LANGUAGE = re.compile(rb"\r\naccept-language[ \t]*:([^\r\n]*)(?=\r\n)")


def answer_in(answers: dict[str, bytes], data: bytes) -> bytes:
    """Of ``answers`` (:func:`_problems`), the one in the language the request at the start
    of ``data`` asks for with ``Accept-Language``, as far as its head has arrived (a header
    line counts once it is whole); English without one."""
    from service.api import i18n

    end = data.find(b"\r\n\r\n")
    head = (data[:end + 2] if end >= 0 else data[:HEAD_LIMIT]).lower()
    asked = b",".join(_ACCEPT_LANGUAGE.findall(head)).decode("latin-1")
    return answers[i18n.choose_language(asked, tuple(answers))]


def _timeout_detail(seconds: float) -> Message:
    return Message(N_("the request did not arrive whole within {seconds} s"),
                   {"seconds": f"{seconds:g}"})


class RequestReadTimeout(TimeoutError, RequestTimeout):
    """A request body that did not arrive within the deadline, raised from the body's read:
    the app answers it as the werkzeug ``RequestTimeout`` (408) it is, and gunicorn, for
    which it is a socket timeout, closes the connection instead of reading the rest."""

    def __init__(self, seconds: float) -> None:
        RequestTimeout.__init__(self, str(_timeout_detail(seconds)))
        TimeoutError.__init__(self, _timeout_detail(seconds))  # the app translates it


@dataclass
class Limits:
    """The limits in force in this worker, and its gate (None: nothing gated)."""

    timeout: float
    max_body: int
    per_address: int
    gate: ConnectionGate | None = None
    timeout_answers: dict[str, bytes] = field(default_factory=dict)
    """The 408 by language (:func:`answer_in`)."""

    def __post_init__(self) -> None:
        self.timeout_answers = _problems(408, "Request Timeout",
                                         _timeout_detail(self.timeout))


_active: Limits | None = None


# --- the connections the gate hands over -------------------------------------------------------


class GatedSocket(socket.socket):
    """A connection the gate handed to a worker that uses Python sockets (gthread, sync):
    whether its first request was there whole (``rummy_complete``) and that request's
    deadline, bytes already received for it (``rummy_prefix``: a request taken back from
    the worker, which had read them), and the stand-in it came through."""

    rummy_complete = False
    rummy_deadline: float | None = None
    rummy_prefix = b""
    rummy_facade: GatedListener | None = None
    rummy_taken_back = False  # the gate holds the connection now: close without a FIN

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        prefix = self.rummy_prefix
        if not prefix:
            return super().recv(bufsize, flags)
        if flags & socket.MSG_PEEK:
            more = b""
            if bufsize > len(prefix):
                with contextlib.suppress(BlockingIOError, InterruptedError):
                    more = super().recv(bufsize - len(prefix), flags | socket.MSG_DONTWAIT)
            return prefix[:bufsize] + more
        self.rummy_prefix = prefix[bufsize:]
        return prefix[:bufsize]

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        if not self.rummy_prefix or flags & socket.MSG_PEEK:
            return super().recv_into(buffer, nbytes, flags)
        view = memoryview(buffer).cast("B")
        data = self.recv(nbytes or len(view))
        view[:len(data)] = data
        return len(data)

    def shutdown(self, how: int) -> None:
        if self.rummy_taken_back:
            raise OSError(errno.ENOTCONN, "the connection went back to the gate")
        super().shutdown(how)


@dataclass(eq=False)
class _Waiting:
    """A connection in the gate: waiting for its request, or lingering before its close."""

    sock: socket.socket
    deadline: float
    addr: Any = None
    facade: GatedListener | None = None
    prefix: bytes = b""
    seen: int = -1
    lowat: int = 1
    drained: int = 0
    max_drain: int = 0
    complete: bool = False
    polled: bool = False
    done: bool = False


class GatedListener:
    """The stand-in for a listening socket that the worker's loop polls and accepts from:
    readable (its ``fileno()``, a pipe) while the gate has connections ready for it."""

    timeout = 0.0  # gevent's StreamServer: a non-blocking listener

    def __init__(self, gate: ConnectionGate, real: Any) -> None:
        self.gate, self.real = gate, real
        self.family, self.type, self.proto = real.family, real.type, real.proto
        self.name = real.getsockname()
        self.label = f"<gated {real}>"
        self.ready: collections.deque[_Waiting] = collections.deque()
        self.listening = True
        self.closed = False
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)

    def __str__(self) -> str:
        return self.label

    def fileno(self) -> int:
        return self._read

    def getsockname(self) -> Any:
        return self.name

    def setblocking(self, flag: bool) -> None:
        """The worker sets its listener non-blocking (gthread) or blocking (gevent, which
        still waits for it to be readable): this one never blocks."""

    def put(self, waiting: _Waiting) -> None:
        """(gate thread) ``waiting``'s request is in: the worker may take it."""
        self.ready.append(waiting)
        with contextlib.suppress(BlockingIOError):
            os.write(self._write, b"\0")

    def _take(self) -> _Waiting:
        try:
            os.read(self._read, 1)
            return self.ready.popleft()
        except (BlockingIOError, IndexError, OSError):
            raise BlockingIOError(errno.EAGAIN, "no connection ready") from None

    def accept(self) -> tuple[socket.socket, Any]:
        """The next connection whose request is in, as a :class:`GatedSocket` (gthread)."""
        waiting = self._take()
        sock = waiting.sock
        conn = GatedSocket(sock.family, sock.type, sock.proto, fileno=sock.detach())
        conn.rummy_complete = waiting.complete
        conn.rummy_deadline = waiting.deadline
        conn.rummy_prefix = waiting.prefix
        conn.rummy_facade = self
        conn.setblocking(True)
        return conn, waiting.addr

    def _accept(self) -> tuple[int, Any]:
        """The next connection whose request is in, as a descriptor (gevent's
        ``StreamServer`` wraps it in a socket of its own)."""
        waiting = self._take()
        return waiting.sock.detach(), waiting.addr

    def stop_listening(self) -> None:
        """Close the listening socket; the connections the gate holds for it go to the
        worker as they are (it reads the rest of their requests under the deadline)."""
        if self.listening:
            self.gate.call(partial(self.gate.stop_listening, self), wait=True)

    def close(self) -> None:
        """Close the listening socket; connections the worker will no longer take are told
        to come again (503)."""
        if self.closed:
            return
        self.closed = True
        self.gate.call(partial(self.gate.close_listener, self), wait=True)
        for fd in (self._read, self._write):
            with contextlib.suppress(OSError):
                os.close(fd)


# --- the gate ---------------------------------------------------------------------------------

_ACCEPTS_PER_WAKE = 64
_PEEK_SLACK = 16 * 1024  # chunk lines and trailers over a body's limit
_LOWAT_LIMIT = 256 * 1024
_LINGER_SECONDS = 2.0
_LINGER_MAX_DRAIN = 65536
_MAX_LINGERING = 512
_SWEEP_SECONDS = 10.0
_PAUSE_SECONDS = 0.5  # out of descriptors: wait before accepting again


@dataclass(eq=False)
class ConnectionGate:
    """The thread (under gevent a greenlet) that accepts a worker's connections, holds each
    until its first request is whole, counts connections per address, answers 408 and 503
    itself, and closes connections gracefully for the worker. Everything it holds is
    touched only on its own thread; other threads hand it work with :meth:`call`."""

    limits: Limits
    max_pending: int
    log: Any
    on_failure: Callable[[], None] = lambda: None
    facades: list[GatedListener] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.selector = selectors.DefaultSelector()
        self.calls: collections.deque[Callable[[], None]] = collections.deque()
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        os.set_blocking(self._wake_write, False)
        self.selector.register(self._wake_read, selectors.EVENT_READ, self._run_calls)
        self.timers: list[tuple[float, int, _Waiting]] = []
        self._seq = itertools.count()
        self.held: dict[str, dict[tuple[int, int], int]] = {}  # address -> {(dev, ino): fd}
        self.pending = 0
        self.lingering = 0
        self.paused_until = 0.0
        self.registered: set[int] = set()  # ids of the facades whose listener is polled
        self.next_sweep = time.monotonic() + _SWEEP_SECONDS
        self.peek_limit = HEAD_LIMIT + self.limits.max_body + _PEEK_SLACK
        # sent as a connection is accepted, before anything of its request is read: in
        # English (Content-Language says so), the language asked for being unknown
        self.refusal = _problem(
            503, "Service Unavailable",
            f"this address holds {self.limits.per_address} connections to this server "
            "process already, the most one address may hold at once: close one, or retry "
            "after Retry-After seconds", code="TOO_MANY_CONNECTIONS",
            headers="Retry-After: 1\r\nContent-Language: en\r\n")
        # sent once the request (or what came of it) is read: in the language it asks for
        self.stopping = _problems(
            503, "Service Unavailable",
            Message(N_("the server is restarting: send the request again")),
            code="RESTARTING", headers="Retry-After: 1\r\n")
        self.thread = threading.Thread(target=self._run, name="rummy-gate", daemon=True)

    # -- from any thread

    def add_listener(self, real: Any) -> GatedListener:
        """(before :meth:`start`) Take over the listening socket ``real``."""
        facade = GatedListener(self, real)
        real.setblocking(False)
        self.facades.append(facade)
        self._listen(facade)
        return facade

    def start(self) -> None:
        self.thread.start()

    def call(self, function: Callable[[], None], wait: bool = False) -> None:
        """Run ``function`` on the gate's thread (and wait until it has run)."""
        if not self.thread.is_alive() or threading.current_thread() is self.thread:
            function()
            return
        done = threading.Event() if wait else None

        def run() -> None:
            try:
                function()
            finally:
                if done is not None:
                    done.set()

        self.calls.append(run)
        with contextlib.suppress(BlockingIOError):
            os.write(self._wake_write, b"\0")
        if done is not None:
            done.wait(5.0)

    def take_back(self, sock: GatedSocket, addr: Any, prefix: bytes) -> bool:
        """(a worker thread) The next request on ``sock`` is not all there (``prefix`` has
        come of it): the gate waits for it instead of the thread, and hands the connection
        over again once it is in. True: the gate has it, and the worker closes its own
        descriptor of the connection (without a FIN); False: the gate stopped listening
        (the worker stops), and the worker reads the request itself."""
        fd = os.dup(sock.fileno())
        deadline = time.monotonic() + self.limits.timeout
        lock = threading.Lock()
        outcome: list[bool] = []  # [True]: taken; [False]: refused, or given up waiting

        def take() -> None:
            with lock:
                if not outcome:
                    outcome.append(self._take_back(fd, addr, prefix, deadline,
                                                   sock.rummy_facade))

        self.call(take, wait=True)
        with lock:
            if not outcome:
                outcome.append(False)  # the gate did not get to it: it will not now
            taken = outcome[0]
        if taken:
            sock.rummy_taken_back = True
        else:
            os.close(fd)
        return taken

    def linger_copy(self, sock: Any) -> None:
        """(a worker's thread) Shut ``sock``'s end now and linger on a descriptor of its
        own: the worker may close its descriptor at once (gevent does)."""
        try:
            fd = os.dup(sock.fileno())
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            return
        if isinstance(sock, GatedSocket):
            sock.rummy_taken_back = True  # its close: no second linger
        self.call(partial(self._linger_fd, fd, _LINGER_SECONDS, _LINGER_MAX_DRAIN))

    def linger(self, sock: socket.socket, timeout: float, max_drain: int) -> None:
        """(any thread) Close ``sock`` the graceful way without waiting for it: its end is
        shut now (FIN); the gate reads what the client still sends until it closes too, or
        ``timeout`` passes, so that the kernel does not reset the connection (which could
        destroy the answer on its way) for data left unread."""
        try:
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            gunicorn_util.close(sock)
            return
        fd = sock.detach()
        if fd >= 0:
            self.call(partial(self._linger_fd, fd, timeout, max_drain))

    # -- on the gate's thread

    def _run(self) -> None:
        try:
            while True:
                now = time.monotonic()
                wait = _SWEEP_SECONDS
                if self.timers:
                    wait = min(wait, max(0.0, self.timers[0][0] - now))
                if self.paused_until:
                    wait = min(wait, max(0.0, self.paused_until - now))
                try:
                    events = self.selector.select(wait)
                except InterruptedError:
                    continue
                for key, _ in events:
                    try:
                        key.data(key.fileobj)
                    except Exception:
                        self.log.exception("connection gate: error on %s", key.fileobj)
                self._fire_timers()
        except BaseException:
            self.log.exception("connection gate stopped: the worker stops too")
            self.on_failure()
            raise

    def _run_calls(self, _fd: Any) -> None:
        with contextlib.suppress(BlockingIOError):
            os.read(self._wake_read, 4096)
        while self.calls:
            call = self.calls.popleft()
            try:
                call()
            except Exception:
                self.log.exception("connection gate: error in a call")

    def _timer(self, waiting: _Waiting) -> None:
        heapq.heappush(self.timers, (waiting.deadline, next(self._seq), waiting))

    def _fire_timers(self) -> None:
        now = time.monotonic()
        while self.timers and self.timers[0][0] <= now:
            _, _, waiting = heapq.heappop(self.timers)
            if not waiting.done:
                if waiting.max_drain:
                    self._close(waiting)
                else:
                    self._expire(waiting)
        if self.paused_until and now >= self.paused_until:
            self.paused_until = 0.0
            self._resume()
        if now >= self.next_sweep:
            self.next_sweep = now + _SWEEP_SECONDS
            for key in list(self.held):
                self._prune(key)

    # listening

    def _listen(self, facade: GatedListener) -> None:
        if id(facade) not in self.registered and facade.listening and not self.paused_until:
            self.selector.register(facade.real.fileno(), selectors.EVENT_READ,
                                   partial(self._accept, facade))
            self.registered.add(id(facade))

    def _unlisten(self, facade: GatedListener) -> None:
        if id(facade) in self.registered:
            self.registered.discard(id(facade))
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(facade.real.fileno())

    def _resume(self) -> None:
        if self.pending + sum(len(f.ready) for f in self.facades) < self.max_pending:
            for facade in self.facades:
                self._listen(facade)

    def _accept(self, facade: GatedListener, _fd: Any) -> None:
        for _ in range(_ACCEPTS_PER_WAKE):
            if self.pending + len(facade.ready) >= self.max_pending:
                for each in self.facades:  # the worker is behind: let the backlog wait
                    self._unlisten(each)
                return
            try:
                sock, addr = facade.real.accept()
            except (BlockingIOError, InterruptedError):
                return
            except AttributeError:  # gunicorn closed its listener (its socket is None) as
                self._unlisten(facade)  # the worker stops: nothing more to take from it
                return
            except OSError as exc:
                if exc.errno == errno.ECONNABORTED:
                    continue
                if exc.errno in (errno.EBADF, errno.EINVAL, errno.ENOTSOCK):
                    # closed or shut down under the gate as the worker stops (SIGTERM):
                    # nothing more to take from it
                    self._unlisten(facade)
                    return
                if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    self.log.warning("connection gate: cannot accept (%s); pausing", exc)
                    for each in self.facades:
                        self._unlisten(each)
                    self.paused_until = time.monotonic() + _PAUSE_SECONDS
                    return
                raise
            self._admit(sock, addr, facade)

    def _admit(self, sock: socket.socket, addr: Any, facade: GatedListener) -> None:
        sock.setblocking(False)
        if not self._count(sock, addr):
            self._send(sock, self.refusal)
            self._linger_now(sock, _LINGER_SECONDS, _LINGER_MAX_DRAIN)
            return
        self._wait(_Waiting(sock, time.monotonic() + self.limits.timeout, addr, facade))

    def _wait(self, waiting: _Waiting) -> None:
        self.pending += 1
        self.selector.register(waiting.sock.fileno(), selectors.EVENT_READ,
                               partial(self._readable, waiting))
        self._timer(waiting)
        self._readable(waiting, None)  # it may be all there already

    def _take_back(self, fd: int, addr: Any, prefix: bytes, deadline: float,
                   facade: GatedListener | None) -> bool:
        if facade is None or not facade.listening:
            return False
        sock = socket.socket(fileno=fd)
        sock.setblocking(False)
        key = address_key(addr)
        if self.limits.per_address and key is not None:
            self.held.setdefault(key, {})[_identity(fd)] = fd
        self._wait(_Waiting(sock, deadline, addr, facade, prefix))
        return True

    def _count(self, sock: socket.socket, addr: Any) -> bool:
        """Count ``sock`` under its address; False when the address holds its limit."""
        limit = self.limits.per_address
        key = address_key(addr) if limit else None
        if key is None:
            return True
        held = self.held.setdefault(key, {})
        if len(held) >= limit:
            self._prune(key)
            held = self.held.setdefault(key, {})
            if len(held) >= limit:
                return False
        held[_identity(sock.fileno())] = sock.fileno()
        return True

    def _prune(self, key: str) -> None:
        """Forget the connections of ``key`` that are closed: a descriptor that no longer
        refers to the same socket (once the worker closed it, it may be reused), or a
        connection whose client has closed its end (the worker has yet to see it)."""
        held = self.held.get(key, {})
        for identity, fd in list(held.items()):
            try:
                alive = _identity(fd) == identity and not _client_closed(fd)
            except OSError:
                alive = False
            if not alive:
                del held[identity]
        if not held:
            self.held.pop(key, None)

    def _readable(self, waiting: _Waiting, _fd: Any) -> None:
        if waiting.done:
            return
        try:
            data = waiting.sock.recv(self.peek_limit, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(waiting)
            return
        if waiting.prefix:
            data = waiting.prefix + data
        if not data:
            self._drop(waiting)  # closed before it sent a byte
            return
        if len(data) == waiting.seen:  # readable, nothing new: the client closed its end
            self._hand_over(waiting, complete=False)
            return
        waiting.seen = len(data)
        state, wanted = request_state(data, self.limits.max_body)
        if state != INCOMPLETE or len(data) >= self.peek_limit:
            self._hand_over(waiting, complete=state == COMPLETE)
            return
        # wake again only once the rest (or more) has come, or at the client's close
        queued = len(data) - len(waiting.prefix)
        lowat = min(max(queued + 1, wanted - len(waiting.prefix)), _LOWAT_LIMIT)
        if lowat != waiting.lowat:
            waiting.lowat = lowat
            with contextlib.suppress(OSError):
                waiting.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, lowat)

    def _release(self, waiting: _Waiting) -> None:
        waiting.done = True
        self.pending -= 1
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(waiting.sock.fileno())
        if waiting.lowat != 1:
            with contextlib.suppress(OSError):
                waiting.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, 1)
        self._resume()

    def _hand_over(self, waiting: _Waiting, complete: bool) -> None:
        self._release(waiting)
        facade = waiting.facade
        if facade is None or facade.closed:
            self._send(waiting.sock, answer_in(self.stopping, self._peek(waiting)))
            self._linger_now(waiting.sock, _LINGER_SECONDS, _LINGER_MAX_DRAIN)
            return
        waiting.complete = complete
        facade.put(waiting)

    def _expire(self, waiting: _Waiting) -> None:
        """The deadline passed with the request still arriving: 408, and close. A
        connection that sent nothing is closed without an answer: a browser opens some
        ahead of need, and may take an answer to no request for the answer to its next."""
        self._release(waiting)
        if waiting.seen > 0 or waiting.prefix:
            self._send(waiting.sock, answer_in(self.limits.timeout_answers,
                                               self._peek(waiting)))
        self._linger_now(waiting.sock, _LINGER_SECONDS, _LINGER_MAX_DRAIN)

    def _drop(self, waiting: _Waiting) -> None:
        self._release(waiting)
        gunicorn_util.close(waiting.sock)

    def stop_listening(self, facade: GatedListener) -> None:
        facade.listening = False
        self._unlisten(facade)
        gunicorn_util.close(facade.real)
        for waiting in [w for _, _, w in self.timers if not w.done and w.facade is facade
                        and not w.max_drain]:
            self._hand_over(waiting, complete=False)

    def close_listener(self, facade: GatedListener) -> None:
        self.stop_listening(facade)
        while facade.ready:  # the worker takes no more: tell them to come again
            waiting = facade.ready.popleft()
            self._send(waiting.sock, answer_in(self.stopping, self._peek(waiting)))
            self._linger_now(waiting.sock, _LINGER_SECONDS, _LINGER_MAX_DRAIN)

    # closing

    def _peek(self, waiting: _Waiting) -> bytes:
        """What has arrived of ``waiting``'s request, left to be read (b"" on an error)."""
        try:
            return waiting.prefix + waiting.sock.recv(self.peek_limit,
                                                      socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except OSError:
            return waiting.prefix

    @staticmethod
    def _send(sock: socket.socket, answer: bytes) -> None:
        with contextlib.suppress(OSError):
            sock.send(answer, socket.MSG_DONTWAIT)

    def _linger_now(self, sock: socket.socket, timeout: float, max_drain: int) -> None:
        try:
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            gunicorn_util.close(sock)
            return
        self._linger(sock, timeout, max_drain)

    def _linger_fd(self, fd: int, timeout: float, max_drain: int) -> None:
        sock = socket.socket(fileno=fd)
        sock.setblocking(False)
        self._linger(sock, timeout, max_drain)

    def _linger(self, sock: socket.socket, timeout: float, max_drain: int) -> None:
        waiting = _Waiting(sock, time.monotonic() + timeout, max_drain=max(1, max_drain))
        if self.lingering >= _MAX_LINGERING or not self._drain(waiting):
            self._close(waiting)
            return
        self.lingering += 1
        waiting.polled = True
        self.selector.register(sock.fileno(), selectors.EVENT_READ,
                               partial(self._drain_readable, waiting))
        self._timer(waiting)

    def _drain(self, waiting: _Waiting) -> bool:
        """Read what has come; False once the client closed (or sent too much)."""
        while waiting.drained < waiting.max_drain:
            try:
                data = waiting.sock.recv(65536, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                return True
            except OSError:
                return False
            if not data:
                return False
            waiting.drained += len(data)
        return False

    def _drain_readable(self, waiting: _Waiting, _fd: Any) -> None:
        if not waiting.done and not self._drain(waiting):
            self._close(waiting)

    def _close(self, waiting: _Waiting) -> None:
        if waiting.done:
            return
        waiting.done = True
        if waiting.polled:
            self.lingering -= 1
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(waiting.sock.fileno())
        gunicorn_util.close(waiting.sock)


_CLIENT_CLOSED_STATES = frozenset({7, 8, 9, 11})
"""Linux's TCP states (``tcpi_state``) once the client has closed its end: CLOSE,
CLOSE_WAIT, LAST_ACK, CLOSING."""


def _client_closed(fd: int) -> bool:
    """Whether the client of the TCP connection ``fd`` has closed its end (Linux)."""
    if not hasattr(socket, "TCP_INFO"):
        return False
    with socket.fromfd(fd, socket.AF_INET, socket.SOCK_STREAM) as sock:
        return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] in \
            _CLIENT_CLOSED_STATES


def _identity(fd: int) -> tuple[int, int]:
    """What a descriptor refers to: (device, inode); a socket's are its own while it lives."""
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


# --- the deadline in gunicorn's HTTP parser ------------------------------------------------------

_AT_FIRST_BYTE = -1.0
"""The deadline of a request none of which has come yet: it starts at the first byte (the
wait for a request on a kept-alive connection is gunicorn's ``keepalive``)."""

_plain_chunk = SocketUnreader.chunk
_plain_close_graceful = gunicorn_util.close_graceful


class _WouldBlock(Exception):
    """A read of a request that a thread reads only if it is all there found it is not."""


def _next_request(cfg: Any, unreader: Any, peer_addr: Any, req_number: int = 1) -> Request:
    """gunicorn's parser's ``mesg_class``: the next request on a connection, parsed under
    its deadline. A connection's first request from the gate comes as the gate found it.
    A later one on a connection from the gate, read by a thread (gthread), is read only if
    it is all there: if not, it goes back to the gate, and the thread is free. Any other
    (gevent's greenlets, a socket not gated) is read under the deadline, from its first
    byte."""
    limits = _active
    sock = getattr(unreader, "sock", None)
    if limits is None or sock is None:
        return Request(cfg, unreader, peer_addr, req_number)
    if not isinstance(sock, GatedSocket):
        return _parse(cfg, unreader, peer_addr, req_number, _AT_FIRST_BYTE)
    if req_number == 1:
        deadline = None if sock.rummy_complete else (
            sock.rummy_deadline or time.monotonic() + limits.timeout)
        return _parse(cfg, unreader, peer_addr, req_number, deadline)
    facade = sock.rummy_facade
    if limits.gate is None or facade is None or not facade.listening:
        return _parse(cfg, unreader, peer_addr, req_number, _AT_FIRST_BYTE)
    before = unreader.buf.getvalue()
    journal: list[bytes] = []
    unreader.rummy_journal = journal
    try:
        req: Request | None = Request(cfg, unreader, peer_addr, req_number)
    except _WouldBlock:
        req = None
    finally:
        unreader.rummy_journal = None
    whole = req is not None and _body_state(req, unreader, sock, limits.max_body)
    if req is not None and whole is not False:
        unreader.rummy_deadline = None if whole else time.monotonic() + limits.timeout
        unreader.rummy_request = req
        return req
    received = before + b"".join(journal)
    unreader.buf = io.BytesIO()
    if limits.gate.take_back(sock, peer_addr, received):
        raise StopIteration
    unreader.buf.write(received)  # the worker stops: it reads the request itself
    return _parse(cfg, unreader, peer_addr, req_number, time.monotonic() + limits.timeout)


def _parse(cfg: Any, unreader: Any, peer_addr: Any, req_number: int,
           deadline: float | None) -> Request:
    unreader.rummy_deadline = deadline
    unreader.rummy_in_head = True
    try:
        req = Request(cfg, unreader, peer_addr, req_number)
    finally:
        unreader.rummy_in_head = False
    unreader.rummy_request = req
    return req


def _body_state(req: Any, unreader: Any, sock: Any, max_body: int) -> bool | None:
    """Whether the body of ``req``, whose head was read, is all there (or need not be: the
    app refuses one over its limit unread); None: it comes after an interim answer
    (``Expect``) or is too large to wait for, and is read under the deadline."""
    length = None
    for name, value in req.headers:
        if name == "CONTENT-LENGTH":
            length = value
        elif name == "TRANSFER-ENCODING":
            try:
                more = sock.recv(HEAD_LIMIT + max_body + _PEEK_SLACK,
                                 socket.MSG_PEEK | socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                more = b""
            except OSError:
                return True
            state = _chunked_state(unreader.buf.getvalue() + more, 0, max_body)[0]
            return None if state == HEAD_ONLY else state == COMPLETE
        elif name == "EXPECT":
            return None
    if length is None:
        return True
    try:
        missing = int(length) - len(unreader.buf.getvalue())
    except ValueError:
        return True
    if missing <= 0 or int(length) > max_body:
        return True
    try:
        return len(sock.recv(missing, socket.MSG_PEEK | socket.MSG_DONTWAIT)) >= missing
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True


def _read_chunk(self: Any, size_hint: int | None = None) -> bytes:
    """gunicorn's ``SocketUnreader.chunk`` (a ``recv``), within the request's deadline; or,
    for a request read only if it is all there, without waiting (:class:`_WouldBlock`)."""
    journal = self.rummy_journal
    if journal is not None:
        size = self.mxchunk
        if size_hint and size_hint > size:
            size = min(size_hint, getattr(self, "max_body_chunk", size_hint))
        try:
            data: bytes = self.sock.recv(size, socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            raise _WouldBlock from None
        journal.append(data)
        return data
    deadline = self.rummy_deadline
    if deadline is None or _active is None:
        return _plain_chunk(self, size_hint)  # type: ignore[no-any-return]
    if deadline == _AT_FIRST_BYTE:
        data = _plain_chunk(self, size_hint)
        self.rummy_deadline = time.monotonic() + _active.timeout
        return data
    sock = self.sock
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        _expired(self)
    prior = sock.gettimeout()
    bounded = prior is None or prior > remaining
    if bounded:
        sock.settimeout(remaining)
    try:
        return _plain_chunk(self, size_hint)  # type: ignore[no-any-return]
    except TimeoutError:
        if bounded:
            _expired(self)
        raise
    finally:
        if bounded:
            with contextlib.suppress(OSError):
                sock.settimeout(prior)


def _expired(unreader: Any) -> None:
    """The request's deadline passed while it was read: 408 and close. Within the head,
    the 408 is written here (gunicorn then drops the connection as a client gone); within
    the body, the app answers the :class:`RequestReadTimeout` raised from its read."""
    assert _active is not None
    unreader.rummy_deadline = None
    if unreader.rummy_in_head:
        sock = unreader.sock
        with contextlib.suppress(OSError):
            # the head read so far is the parser's: the 408 is in English
            gunicorn_util.write_nonblock(sock, _active.timeout_answers["en"])
        if _active.gate is not None:
            _active.gate.linger_copy(sock)
        else:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_WR)
        raise http_errors.NoMoreData(b"")
    request = unreader.rummy_request
    if request is not None:
        request.must_close = True
    raise RequestReadTimeout(_active.timeout)


def _close_gracefully(sock: Any, timeout: float = 2.0, max_drain: int = 65536) -> None:
    """gunicorn's ``util.close_graceful`` (FIN, then read what the client still sends until
    it closes, or ``timeout``), with the waiting done by the gate instead of the caller:
    gthread calls it in its main loop."""
    if getattr(sock, "rummy_taken_back", False):
        gunicorn_util.close(sock)
        return
    gate = _active.gate if _active is not None else None
    if gate is None or not isinstance(sock, socket.socket) or isinstance(sock, ssl.SSLSocket):
        _plain_close_graceful(sock, timeout, max_drain)
        return
    gate.linger(sock, timeout, max_drain)


# --- installing ---------------------------------------------------------------------------------


def _gated(listener: Any, cfg: Any) -> bool:
    """Whether the gate can take ``listener`` over: TCP, without gunicorn's own TLS, where
    ``SO_RCVLOWAT`` is there to wake the gate only when more has come."""
    return (getattr(listener, "family", None) in (socket.AF_INET, socket.AF_INET6)
            and not cfg.is_ssl and hasattr(socket, "SO_RCVLOWAT"))


def install(worker: Any, settings: Settings) -> Limits:
    """In a worker, before it serves: hold every request to the deadline, close gracefully
    off the worker's loop, and put a gate in front of each of its TCP listening sockets."""
    global _active
    limits = Limits(timeout=settings.request_read_timeout, max_body=settings.max_body_bytes,
                    per_address=settings.connections_per_address)
    RequestParser.mesg_class = staticmethod(_next_request)
    SocketUnreader.rummy_journal = None  # per instance while a request is read
    SocketUnreader.rummy_deadline = None
    SocketUnreader.rummy_request = None
    SocketUnreader.rummy_in_head = False
    SocketUnreader.chunk = _read_chunk
    gunicorn_util.close_graceful = _close_gracefully
    sockets = list(getattr(worker, "sockets", None) or [])
    gated = [s for s in sockets if _gated(s, worker.cfg)]
    if gated:
        def fail() -> None:
            worker.alive = False  # a worker whose gate is gone takes no connection: replace it

        gate = ConnectionGate(limits, max_pending=max(1, worker.cfg.worker_connections),
                              log=worker.log, on_failure=fail)
        facades = {id(s): gate.add_listener(s) for s in gated}
        worker.sockets = [facades.get(id(s), s) for s in sockets]
        if hasattr(worker, "wait_fds"):  # the sync worker waits on these
            worker.wait_fds = [facades.get(id(s), s) for s in worker.wait_fds]
        limits.gate = gate
        gate.start()
    _active = limits
    return limits


def stop_listening(listeners: Iterable[Any]) -> None:
    """The worker stops taking connections: each gate closes its listening socket, and
    what it holds goes to the worker (:meth:`GatedListener.stop_listening`)."""
    for listener in listeners:
        if isinstance(listener, GatedListener):
            listener.stop_listening()
