"""Server-sent events for the move log (``Accept: text/event-stream``).

A stream holds one gunicorn thread for as long as it is open, so each worker process
serves at most ``RUMMY_SSE_MAX_STREAMS`` streams at once (default: half its threads) and
refuses more with ``503`` + ``Retry-After``; every stream ends after
``RUMMY_SSE_MAX_SECONDS`` and the client resumes with ``Last-Event-ID`` (browsers'
EventSource does this by itself). The other threads always remain for ordinary requests.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator

from flask import Response, current_app, request

from service.api.problems import Problem
from service.config import Settings
from service.numbers import natural
from service.referee import Referee, UnknownGame
from service.store import StoreError

POLL_SECONDS = 0.2


class StreamSlots:
    """How many event streams this worker process may still open."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._slots = threading.BoundedSemaphore(settings.stream_slots)

    def acquire(self) -> bool:
        return self._slots.acquire(blocking=False)

    def release(self) -> None:
        self._slots.release()


def client_gone(sock: socket.socket | None) -> bool:
    """Whether the client has closed its end of ``sock`` (the connection a stream is
    written to): a peek that would not block reads end of file. False when that cannot be
    told (no socket, as under a test client; TLS, whose sockets take no peek flags)."""
    if sock is None:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except (BlockingIOError, InterruptedError, ValueError):
        return False
    except OSError:  # reset by the peer
        return True


def bound_unacknowledged(sock: socket.socket | None, seconds: float) -> None:
    """Data the client leaves unacknowledged for ``seconds`` ends the connection
    (``TCP_USER_TIMEOUT``, Linux; ``seconds`` 0 gives back the system's default). A client
    whose network vanished without a word (no FIN or RST: a phone out of range, a laptop
    closed) otherwise holds its stream's slot while the kernel retransmits the heartbeats,
    up to about 15 minutes; with the bound, the next poll finds the connection ended. Does
    nothing where the option or the socket is not there."""
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


def open_stream(referee: Referee, game_id: str, viewer: int | None, after: int) -> Response:
    slots: StreamSlots = current_app.extensions["streams"]
    if not slots.acquire():
        raise Problem(503, "Service Unavailable",
                      "too many event streams on this server; retry, or poll "
                      "GET …/events?after=N", headers={"Retry-After": "2"})
    settings = slots.settings
    # gunicorn's connection to the client: a stream whose client has gone ends at the next
    # poll instead of at the next heartbeat that fails to be written (15 s and more), so
    # its slot is free for the client's next stream (a reloaded page, a flaky network)
    connection = request.environ.get("gunicorn.socket")
    sock = connection if isinstance(connection, socket.socket) else None
    # and one whose client vanished without closing ends once two heartbeats in a row go
    # unacknowledged (the bound is lifted when the stream ends: the connection may serve on)
    bound_unacknowledged(sock, max(1.0, 2 * settings.sse_heartbeat_seconds))

    def generate() -> Iterator[str]:
        try:
            last = after
            started = time.monotonic()
            beat = started + settings.sse_heartbeat_seconds
            yield "retry: 1000\n\n"
            while time.monotonic() - started < settings.sse_max_seconds:
                if client_gone(sock):
                    return
                entries = referee.events(game_id, viewer, last, 200)
                for entry in entries:
                    last = entry["version"]
                    yield f"id: {last}\nevent: move\ndata: {json.dumps(entry)}\n\n"
                now = time.monotonic()
                if now >= beat:
                    yield ": heartbeat\n\n"
                    beat = now + settings.sse_heartbeat_seconds
                if not entries:
                    time.sleep(POLL_SECONDS)
        except (StoreError, UnknownGame) as exc:
            yield f"event: error\ndata: {json.dumps({'detail': str(exc)})}\n\n"

    response = Response(generate(), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
    # The slot is given back when the server closes the response, whether its body was
    # read or not: a generator never started (a HEAD request, a client gone before the
    # first byte) runs no ``finally`` when it is closed, and kept the slot for good.
    response.call_on_close(slots.release)
    response.call_on_close(lambda: bound_unacknowledged(sock, 0))
    return response
