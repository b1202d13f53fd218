"""Reading a server-sent event stream answered by a Flask test client (``buffered=False``):
its frames parsed as they arrive."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from flask.testing import FlaskClient
from werkzeug.test import TestResponse

SSE = {"Accept": "text/event-stream"}
"""The header that asks ``GET …/events`` for a stream."""


class Stream:
    """An open event stream: frames parsed as they arrive (bounded: the server ends every
    stream after 2 s)."""

    def __init__(self, resp: TestResponse) -> None:
        assert resp.status_code == 200, resp.get_data(as_text=True)
        assert resp.mimetype == "text/event-stream"
        self.resp = resp
        self.chunks = iter(resp.response)
        self.buffer = ""
        self.ended = False

    def frames(self) -> Iterator[dict[str, Any]]:
        """Each frame as ``{"id", "event", "data", "comment", "retry"}`` (what it has)."""
        while True:
            while "\n\n" in self.buffer:
                raw, self.buffer = self.buffer.split("\n\n", 1)
                frame: dict[str, Any] = {}
                for line in raw.split("\n"):
                    if line.startswith(":"):
                        frame["comment"] = line[1:].strip()
                    else:
                        name, _, value = line.partition(":")
                        frame[name] = value.removeprefix(" ")
                if "data" in frame:
                    frame["data"] = json.loads(frame["data"])
                yield frame
            try:
                chunk = next(self.chunks)
            except StopIteration:
                self.ended = True
                return
            self.buffer += chunk.decode() if isinstance(chunk, bytes) else chunk

    def moves_until(self, version: int) -> list[dict[str, Any]]:
        """The move frames up to the one with ``id: version``."""
        out = []
        for frame in self.frames():
            if frame.get("event") == "move":
                out.append(frame)
                if int(frame["id"]) >= version:
                    return out
        raise AssertionError(f"the stream ended before version {version}: {out}")

    def close(self) -> None:
        self.resp.close()


def open_stream(client: FlaskClient, path: str, **headers: str) -> Stream:
    """``GET path`` as an event stream (:data:`SSE` and ``headers``), read as it arrives."""
    return Stream(client.get(path, headers={**SSE, **headers}, buffered=False))


def chunks(body: bytes) -> list[bytes]:
    """The chunks of an HTTP/1.1 chunked ``body``, read strictly (a malformed one fails):
    what a served stream's events travel in, whoever wrote them."""
    found = []
    while body:
        size, crlf, rest = body.partition(b"\r\n")
        assert crlf and size and all(c in b"0123456789ABCDEFabcdef" for c in size), body[:60]
        length = int(size, 16)
        assert rest[length:length + 2] == b"\r\n", body[:60]
        found.append(rest[:length])
        body = rest[length + 2:]
    return found
