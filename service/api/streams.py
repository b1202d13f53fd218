"""Live tables: server-sent events for the move log (``Accept: text/event-stream``), stream
tickets for browsers, and long polls of the views (docs/api.md, "Live tables").

A stream or a waiting long poll sleeps on a :class:`service.live.Watch` of its game and
reads Redis only when a commit of that game wakes it (or to send a heartbeat: no read);
under gevent a waiting stream is not even woken for an event that follows on: the hub
writes it to the stream's socket itself (:class:`DirectWriter`).
Under gunicorn's gevent worker (``RUMMY_WORKER_CLASS=gevent``) it costs a greenlet; under
gthread it holds a thread, so each gthread worker serves at most ``RUMMY_SSE_MAX_STREAMS``
at once (default: half its threads). More are refused with ``503`` + ``Retry-After``, and
more than ``RUMMY_SSE_PER_ADDRESS`` from one address or ``RUMMY_SSE_PER_SEAT`` for one seat
with ``429``. Every stream ends after ``RUMMY_SSE_MAX_SECONDS``, when its client leaves more
than ``RUMMY_SSE_MAX_BUFFERED`` bytes unread, and at once when the worker is told to stop
(SIGTERM); the client resumes on any server with ``Last-Event-ID`` (a public stream's
EventSource sends it by itself) or ``?after=`` (a seat's EventSource: its ticket works once,
so a page opens a new one with a new ticket).
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import json
import logging
import os
import re
import secrets
import socket
import struct
import termios
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import orjson
from flask import Response, current_app, request

from service.api.problems import Problem
from service.api.security import too_many_open
from service.config import Settings
from service.live import Announced, Hub, Watch, green
from service.numbers import natural
from service.referee import (
    Answer,
    Forbidden,
    Referee,
    Unauthorized,
    UnknownGame,
    redacted_entry,
)
from service.referee.documents import token_hash
from service.rules.errors import N_, Message
from service.store import StoreError

PAGE = 200
"""Log entries a stream reads at a time."""

TICKET_SECONDS = 60
"""How long a stream ticket may wait for its one use."""

MAX_WAIT = 60
"""The longest ``Prefer: wait=N`` a long poll may ask for."""

READERS = 32
"""Streams and long polls of one worker process that read Redis at the same time."""

_log = logging.getLogger("rummy.live")

HEARTBEAT = b": heartbeat\n\n"
"""What a stream sends while its game is idle (an SSE comment: clients ignore it)."""

_TICKET = re.compile(r"^[A-Za-z0-9_-]{32}$")
_WAIT = re.compile(r"(?:^|[;,])\s*wait\s*=\s*([^;,\s]*)", re.IGNORECASE)


class StreamSlots:
    """How many streams and waiting polls this worker process may still hold, in all, per
    client address and per seat."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.limit = settings.green_stream_slots() if green() else settings.stream_slots
        self._lock = threading.Lock()
        self._open = 0
        self._held: collections.Counter[str] = collections.Counter()
        self.reading = threading.BoundedSemaphore(READERS)
        """Held by a stream or a long poll while it reads Redis: a move that wakes hundreds
        of watchers of one game (under gevent) must not take more connections than the
        pool holds (redis-py's default: 100) from the ordinary requests."""

    def acquire(self, address: str, seat: str | None = None) -> Callable[[], None]:
        """Take a slot for ``address`` (and ``seat``, a stream's ``<game>:<seat>``): the
        function that gives it back (call it once), or a 503 / 429 Problem."""
        keys = [f"a:{address}"] + ([f"s:{seat}"] if seat is not None else [])
        bounds = [self.settings.sse_per_address, self.settings.sse_per_seat]
        with self._lock:
            if self._open >= self.limit:
                raise Problem(503, "Service Unavailable",
                              "too many event streams on this server; retry, or poll "
                              "GET …/events?after=N", headers={"Retry-After": "2"})
            for key, bound in zip(keys, bounds, strict=False):
                if bound and self._held[key] >= bound:
                    if key.startswith("a:"):
                        raise too_many_open("streams", bound, 5, Message(N_(
                            "too many event streams open for this client address; close one "
                            "first")))
                    raise too_many_open("seat-streams", bound, 5, Message(N_(
                        "too many event streams open for this seat; close one first")))
            self._open += 1
            self._held.update(keys)

        def release() -> None:
            with self._lock:
                self._open -= 1
                self._held.subtract(keys)
                for key in keys:
                    if self._held[key] <= 0:
                        del self._held[key]

        return release


def _hub() -> Hub:
    hub: Hub = current_app.extensions["live"]
    return hub


def _address() -> str:
    return request.remote_addr or "unknown"


def client_gone(sock: socket.socket | None) -> bool:
    """Whether the client has closed its end of ``sock`` (the connection a stream is
    written to): a peek that would not block reads end of file. False when that cannot be
    told (no socket, as under a test client; TLS, whose sockets take no peek flags). Under
    gevent the peek goes to the real socket (gevent's would wait for a byte)."""
    if sock is None:
        return False
    real = getattr(sock, "_sock", sock)
    try:
        return bool(real.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b"")
    except (BlockingIOError, InterruptedError, ValueError, TypeError):
        return False
    except OSError:  # reset by the peer
        return True


def unsent(sock: socket.socket | None) -> int:
    """Bytes written to ``sock`` that its client has not yet taken (the kernel's send queue,
    ``SIOCOUTQ``; 0 where that cannot be told)."""
    if sock is None:
        return 0
    try:
        fd = sock.fileno()
    except (OSError, ValueError):
        return 0
    return unsent_fd(fd)


def unsent_fd(fd: int) -> int:
    """:func:`unsent` of a socket by its file descriptor."""
    try:
        raw = fcntl.ioctl(fd, termios.TIOCOUTQ, b"\0\0\0\0")
    except (OSError, ValueError):
        return 0
    return int(struct.unpack("i", raw)[0])


def bound_unacknowledged(sock: socket.socket | None, seconds: float) -> None:
    """Data the client leaves unacknowledged for ``seconds`` ends the connection
    (``TCP_USER_TIMEOUT``, Linux; ``seconds`` 0 gives back the system's default). A client
    whose network vanished without a word (no FIN or RST: a phone out of range, a laptop
    closed) otherwise holds its stream's slot while the kernel retransmits the heartbeats,
    up to about 15 minutes; with the bound, the next heartbeat finds the connection ended.
    Does nothing where the option or the socket is not there."""
    option = getattr(socket, "TCP_USER_TIMEOUT", None)
    if sock is None or option is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    with contextlib.suppress(OSError):  # closed meanwhile
        sock.setsockopt(socket.IPPROTO_TCP, option, round(seconds * 1000))


def resume_after(last_event_id: str | None, after: int) -> int:
    """Where a stream starts: after the version its ``Last-Event-ID`` header names (what
    the last stream sent as an event's ``id``), else after ``after``. A header that names
    no version (ASCII digits, at most 18) is a 400: a stream resumed from a misread number
    would skip or repeat moves."""
    text = (last_event_id or "").strip()
    if not text:
        return after
    version = natural(text)
    if version is None:
        raise Problem(400, "Bad Request",
                      "Last-Event-ID must be the id of an event of this stream (a version)",
                      code="MALFORMED_REQUEST",
                      errors=[{"field": "Last-Event-ID", "message": "not a version"}])
    return version


# -- tickets ------------------------------------------------------------------------------


def issue_ticket(referee: Referee, game_id: str, seat: int, token: str) -> str:
    """A new one-use ticket for ``seat``'s stream of ``game_id``, issued with the seat's
    (verified) ``token``, kept in Redis (any worker of any server honours it) for
    :data:`TICKET_SECONDS`. It holds the token's hash, not the token: redeemed, it works
    only while that token is still the seat's."""
    ticket = secrets.token_urlsafe(24)  # 32 characters
    value = json.dumps({"game_id": game_id, "seat": seat,
                        "token_sha256": token_hash(token)}).encode()
    referee.store.keep_ticket(ticket, value, TICKET_SECONDS)
    return ticket


def redeem_ticket(referee: Referee, game_id: str, ticket: str) -> tuple[int, str]:
    """The seat a ticket stands for and the hash of the token it was issued with, the
    ticket used up: :class:`Unauthorized` for a malformed, unknown, used or expired one,
    and for one whose token is no longer the seat's (rotated since, or the seat opened
    again by the host: the game's current document says); :class:`Forbidden` for another
    game's."""
    if not _TICKET.match(ticket):
        raise Unauthorized("malformed stream ticket")
    raw = referee.store.take_ticket(ticket)
    if raw is None:
        raise Unauthorized("unknown stream ticket: used already, expired, or never issued")
    claim = json.loads(raw)
    if claim.get("game_id") != game_id:
        raise Forbidden("this stream ticket belongs to another game")
    seat, digest = claim.get("seat"), claim.get("token_sha256")
    if not isinstance(seat, int) or not isinstance(digest, str) \
            or referee.holder_version(game_id, seat, digest) is None:
        raise Unauthorized("this stream ticket's seat token is no longer valid (rotated, or "
                           "the seat was opened again)")
    return seat, digest


# -- streams ------------------------------------------------------------------------------


def announced(taken: list[Announced], last: int, viewer: int | None
              ) -> list[tuple[dict[str, Any], bytes]] | None:
    """The entries after version ``last`` that the hub handed a stream (``taken``), as
    ``viewer`` sees them, each with its frame; None when they do not follow on from
    ``last`` (none handed, or one dropped): the stream then reads Redis. The first stream
    of this process to send an entry to a viewer makes its frame for every other one."""
    fresh = [(version, record, made) for version, record, made in taken if version > last]
    if not fresh:
        return [] if taken else None
    if [version for version, _, _ in fresh] != list(range(last + 1, last + 1 + len(fresh))):
        return None
    return [_made(record, made, viewer) for _, record, made in fresh]


def _made(record: dict[str, Any], made: dict[Any, Any], viewer: int | None
          ) -> tuple[dict[str, Any], bytes]:
    found: tuple[dict[str, Any], bytes] | None = made.get(viewer)
    if found is None:  # two threads may both make it: the same, either kept
        entry = redacted_entry(record, viewer)
        found = made[viewer] = (entry, _frame(entry))
    return found


def _frame(entry: dict[str, Any]) -> bytes:
    """An entry's event: its version the ``id`` (what ``Last-Event-ID`` resumes from), the
    entry's JSON on one line (orjson writes no line break)."""
    return b"id: %d\nevent: move\ndata: %s\n\n" % (entry["version"], orjson.dumps(entry))


def allow_direct_writes(cfg: Any | None) -> None:
    """Let the hub write the events of waiting streams itself (:class:`DirectWriter`): in a
    gunicorn gevent worker (``post_worker_init``) that serves plain HTTP, whose framing of a
    stream's body (chunked, for an HTTP/1.1 request) the writer repeats."""
    DirectWriter.allowed = (cfg is not None and green() and not cfg.is_ssl
                            and getattr(cfg, "protocol", "http") == "http")


class DirectWriter:
    """The events of a waiting stream, written by the hub the moment it hands them out.

    A woken stream costs a worker two greenlet switches, a timer, the generators of
    Flask and werkzeug, gunicorn's write and gevent's ``sendall`` around a frame's
    ``send``: with 10,000 streams held, most of what an event costs it (bench/README.md,
    "Live tables"). While its stream waits, with everything it yielded written, its
    socket is idle; the hub, on the same thread, then writes an entry that follows on
    from the last one sent in one ``send`` that cannot block (framed as gunicorn frames
    the stream's body: a chunk of HTTP/1.1), and the stream sleeps on. It wakes for what
    the writer leaves alone: an entry that does not follow on, one that may change the
    seat's tokens (a seat's stream checks them first), a client that leaves too much
    unread, a socket that would block (what a partial ``send`` left, the stream writes
    first), a stream past its time, a worker stopping. The stream's heartbeats, while it
    waits, are written so too (:class:`Heartbeats`), so a waiting stream has no timer of
    its own but its end."""

    allowed: ClassVar[bool] = False
    """Whether this process lets the hub write (:func:`allow_direct_writes`)."""

    __slots__ = ("_check_every", "_chunked", "_fd", "_heartbeat", "_real", "_unchecked",
                 "beat_at", "buffered", "end", "every", "last", "pending", "seat_checks",
                 "sock", "stopping", "viewer", "watch")

    def __init__(self, sock: socket.socket, watch: Watch, *, chunked: bool,
                 viewer: int | None, seat_checks: bool, buffered: int, end: float,
                 stopping: Callable[[], bool], heartbeat_seconds: float) -> None:
        self.sock = sock
        self._real: socket.socket = getattr(sock, "_sock", sock)  # gevent's: the OS socket
        self._fd = sock.fileno()
        self._chunked = chunked
        self.viewer = viewer
        self.seat_checks = seat_checks
        self.buffered = buffered
        self._check_every = max(1, buffered // 16)
        self._unchecked = self._check_every
        """Bytes written since the send queue was last measured: it is measured again (a
        system call, which cost as much as the ``send``) once they reach a sixteenth of
        ``buffered``, so a client that reads nothing is found with at most that much more
        unsent than the bound (and the frame that went over it)."""
        self.end = end
        self.stopping = stopping
        self.last = 0
        """The version of the last entry written (by the stream, or by this writer)."""
        self.every = heartbeat_seconds
        self.beat_at = float("inf")
        """When the stream's next heartbeat is due (``time.monotonic``): set by the stream
        as it waits, put off by each write of this writer's."""
        self._heartbeat = _chunk(HEARTBEAT) if chunked else HEARTBEAT
        self.pending = b""
        """What a partial ``send`` left of a frame: the stream writes it before anything."""
        self.watch = watch

    def __call__(self, entry: Announced) -> bool:
        """Write ``entry`` if it can be, now: whether it was taken (written, or begun)."""
        version, record, made = entry
        now = time.monotonic()
        if (version != self.last + 1 or (self.seat_checks and record.get("move") is None)
                or not self._writable(now)):
            return False
        _, frame = _made(record, made, self.viewer)
        if not self._send(_chunk(frame) if self._chunked else frame, now):
            return False
        self.last = version
        return True

    def beat(self, now: float) -> None:
        """Write the waiting stream's heartbeat (due: :attr:`beat_at`), or wake the stream
        to see to it (what a partial ``send`` left, a client gone or not reading, a stream
        past its time, a worker stopping)."""
        if not self._writable(now) or not self._send(self._heartbeat, now):
            self.watch.wake()

    def _writable(self, now: float) -> bool:
        """Whether the writer may write to the stream now: nothing of a frame pending, the
        worker not stopping, the stream within its time, its client within the bound (the
        system call that measures it last, and only once a sixteenth of it is written)."""
        if self.pending or self.stopping() or now >= self.end:
            return False
        if self._unchecked >= self._check_every:
            if unsent_fd(self._fd) > self.buffered:
                return False
            self._unchecked = 0
        return True

    def _send(self, data: bytes, now: float) -> bool:
        """Write ``data`` in one ``send`` that cannot block: whether it was written, or
        begun (the rest pending, the stream woken to write it)."""
        try:
            sent = self._real.send(data, socket.MSG_DONTWAIT)
        except OSError:  # would block, or the client is gone: the stream sees to it
            return False
        self.beat_at = now + self.every  # an event is as good a sign as a heartbeat
        self._unchecked += sent
        if sent < len(data):
            self.pending = data[sent:]
            self.watch.wake()
        return True

    def finish(self) -> bool:
        """Write what a partial ``send`` left of a frame, the stream awake (its socket its
        own again): whether it could be (not: the client is gone)."""
        try:
            self.sock.sendall(self.pending)
        except OSError:
            return False
        self.pending = b""
        return True


def _chunk(data: bytes) -> bytes:
    """``data`` as a chunk of an HTTP/1.1 body, as gunicorn frames a stream's."""
    return b"%X\r\n%s\r\n" % (len(data), data)


class Heartbeats:
    """The heartbeats of this process's waiting streams that have a :class:`DirectWriter`,
    written by one thread of their own (a greenlet under gevent) that looks for those due
    every second (an eighth of the interval, if that is shorter). A waiting stream had a
    timer of its own for them and woke at each, events flowing or not (the hub's writes put
    off its heartbeat, not its timer): with 10,000 streams held and idle, 500 wakes a
    second, which cost the service 46 ms of CPU a second (bench/README.md, "Live tables")."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._writers: set[DirectWriter] = set()
        self._pid: int | None = None
        self._every = 1.0

    def add(self, writer: DirectWriter) -> None:
        """Write ``writer``'s heartbeats from :attr:`DirectWriter.beat_at` on, until
        :meth:`discard`."""
        with self._lock:  # held for no switch of gevent's (this lock may be the OS's:
            # the module may be imported before gunicorn's gevent worker patches threading)
            self._every = min(self._every, max(0.05, writer.every / 8))
            start = self._pid != os.getpid()  # in the process that writes (a worker)
            if start:
                self._pid = os.getpid()
                self._writers.clear()
            self._writers.add(writer)
        if start:  # a thread's start waits for it to run: a switch, under gevent
            threading.Thread(target=self._run, name="live-heartbeats", daemon=True).start()

    def discard(self, writer: DirectWriter) -> None:
        with self._lock:
            self._writers.discard(writer)

    def _run(self) -> None:
        while True:
            time.sleep(self._every)
            now = time.monotonic()
            with self._lock:
                due = [writer for writer in self._writers if writer.beat_at <= now]
            for writer in due:
                try:
                    writer.beat(now)
                except Exception:  # the stream writes it itself, and ends as it must
                    _log.exception("live heartbeats: a write failed; the stream is woken")
                    writer.watch.wake()


HEARTBEATS = Heartbeats()


def _direct_framing(sock: socket.socket | None) -> bool | None:
    """How this request's stream body goes to ``sock`` where the worker lets the hub write
    to it (:class:`DirectWriter`): True in HTTP/1.1's chunks, False as it is (HTTP/1.0);
    None where it may not (another worker, a test client, TLS, a HEAD request)."""
    if not DirectWriter.allowed or sock is None or request.method != "GET" \
            or getattr(sock, "_sslobj", None) is not None:
        return None
    protocol = request.environ.get("SERVER_PROTOCOL")
    return None if protocol not in ("HTTP/1.0", "HTTP/1.1") else protocol == "HTTP/1.1"


def open_stream(referee: Referee, game_id: str, viewer: int | None, after: int,
                holder: str | None = None) -> Response:
    """The event stream of ``game_id`` after version ``after``, as ``viewer`` (a seat, or
    None for the public) sees it. A seat's stream holds ``holder``, the hash of the token
    it was opened with (or its ticket issued with), and ends, before it sends anything
    more, once that token is no longer the seat's: rotated, or its seat opened again by the
    host and perhaps taken by someone else, whose hand the next ``dealt`` entry would show.
    Only an entry with ``"move": null`` (:mod:`service.referee.lobby`: a join, a reopened
    seat, a rotated token...) changes a game's tokens, so the stream asks the game again
    at each such entry it has not yet checked, and at no other. Ended, the client
    reconnects (``EventSource`` does) and is refused ``401``."""
    if viewer is not None and holder is None:
        raise ValueError("a seat's stream needs the hash of its token")
    slots: StreamSlots = current_app.extensions["streams"]
    release = slots.acquire(_address(), None if viewer is None else f"{game_id}:{viewer}")
    settings = slots.settings
    hub = _hub()
    # gunicorn's connection to the client: a stream whose client has gone ends at its next
    # wake instead of at the next write that fails, so its slot is free for the client's
    # next stream (a reloaded page, a flaky network)
    connection = request.environ.get("gunicorn.socket")
    sock = connection if isinstance(connection, socket.socket) else None
    # and one whose client vanished without closing ends once two heartbeats in a row go
    # unacknowledged (the bound is lifted when the stream ends: the connection may serve on)
    bound_unacknowledged(sock, max(1.0, 2 * settings.sse_heartbeat_seconds))
    chunked = _direct_framing(sock)

    def generate() -> Iterator[bytes]:
        with hub.watch(game_id, sock) as watch:  # watching before the first read
            try:
                last = after
                checked = -1  # the version up to which the seat's token was found valid
                started = time.monotonic()
                end = started + settings.sse_max_seconds
                beat = started + settings.sse_heartbeat_seconds
                direct = None if sock is None or chunked is None else DirectWriter(
                    sock, watch, chunked=chunked, viewer=viewer, seat_checks=holder is not None,
                    buffered=settings.sse_max_buffered, end=end,
                    stopping=lambda: hub.stopping,
                    heartbeat_seconds=settings.sse_heartbeat_seconds)
                yield b"retry: 1000\n\n"
                while not hub.stopping:
                    entries = announced(watch.take(), last, viewer)
                    if entries is None:  # at the start, after a gap: from Redis
                        with slots.reading:
                            entries = [(e, _frame(e))
                                       for e in referee.events(game_id, viewer, last, PAGE)]
                    for entry, frame in entries:
                        if unsent(sock) > settings.sse_max_buffered:
                            return  # a client that does not read
                        if holder is not None and viewer is not None \
                                and entry.get("move") is None and entry["version"] > checked:
                            with slots.reading:
                                current = referee.holder_version(game_id, viewer, holder)
                            if current is None:
                                return  # its token no longer the seat's: show it nothing
                            checked = current  # valid now, so at every version till now
                        last = entry["version"]
                        yield frame
                        # a heartbeat is for an idle stream: an event is as good a sign
                        beat = time.monotonic() + settings.sse_heartbeat_seconds
                    if len(entries) == PAGE:
                        continue  # more to read
                    # a wake that brought nothing to send may be its client closing (the
                    # hub's closings wake it): only then is the connection peeked at
                    quiet = not entries
                    while not hub.stopping:
                        now = time.monotonic()
                        if now >= end or (quiet and client_gone(sock)):
                            return
                        if now >= beat:
                            if unsent(sock) > settings.sse_max_buffered:
                                return
                            yield HEARTBEAT
                            beat = now + settings.sse_heartbeat_seconds
                        if direct is None:
                            woken = watch.wait(min(beat, end) - now)
                        else:  # all yielded is written: the hub may write what follows,
                            direct.last = last  # and the heartbeats, while this waits
                            direct.beat_at = beat
                            watch.sink = direct
                            HEARTBEATS.add(direct)
                            woken = watch.wait(end - now)
                            HEARTBEATS.discard(direct)
                            watch.sink = None
                            last = max(last, direct.last)  # written by the hub meanwhile
                            beat = direct.beat_at
                            if direct.pending and not direct.finish():
                                return  # the client is gone
                        if woken:
                            break  # a commit of the game: read it
                        quiet = True
            except (StoreError, UnknownGame) as exc:
                yield b"event: error\ndata: %s\n\n" % orjson.dumps({"detail": str(exc)})

    response = Response(generate(), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
    # The slot is given back when the server closes the response, whether its body was
    # read or not: a generator never started (a HEAD request, a client gone before the
    # first byte) runs no ``finally`` when it is closed, and kept the slot for good.
    response.call_on_close(release)
    response.call_on_close(lambda: bound_unacknowledged(sock, 0))
    return response


# -- long polls ---------------------------------------------------------------------------


def preferred_wait() -> int | None:
    """The seconds ``Prefer: wait=N`` asks for (RFC 7240), or None; not a whole number
    from 0 to :data:`MAX_WAIT` is a 400."""
    header = ", ".join(request.headers.getlist("Prefer"))
    found = _WAIT.search(header)
    if found is None:
        return None
    seconds = natural(found.group(1).strip('"'), max_digits=4)
    if seconds is None or seconds > MAX_WAIT:
        raise Problem(400, "Bad Request", Message(N_(
                      "Prefer: wait=N needs N a whole number of seconds from 0 to {most}"),
                      {"most": MAX_WAIT}), code="MALFORMED_REQUEST",
                      errors=[{"field": "Prefer", "message": "wait must be 0 to 60"}])
    return seconds


def long_poll(game_id: str, read: Callable[[], Answer], answer: Answer,
              unchanged: Callable[[Answer], bool], seconds: int) -> Answer | None:
    """Wait up to ``seconds`` for the view ``read`` gives to change from ``answer`` (which
    ``unchanged`` says the client holds): the new view, or None once the time is up (the
    caller answers 304) or the worker is stopping."""
    slots: StreamSlots = current_app.extensions["streams"]
    release = slots.acquire(_address())
    hub = _hub()
    deadline = time.monotonic() + seconds
    try:
        with hub.watch(game_id) as watch:
            while True:  # read again once watched: a move made meanwhile is seen
                with slots.reading:
                    answer = read()
                if not unchanged(answer):
                    return answer
                left = deadline - time.monotonic()
                if left <= 0 or hub.stopping or not watch.wait(left):
                    return None
    finally:
        release()
