"""A lean HTTP/1.1 client on asyncio streams: one keep-alive connection per client.

The load driver's cost per request must stay small next to the server's (client and server
share the machine), so this is a few lines over ``asyncio`` streams instead of a general
client: requests with a ``Content-Length`` body, answers with a ``Content-Length`` body
(what gunicorn sends for the service's JSON answers).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import time
from dataclasses import dataclass
from typing import Any

from service.api.observe import process_of

try:
    _orjson: Any = importlib.import_module("orjson")
    _loads: Any = _orjson.loads
    _dumps: Any = _orjson.dumps
except ImportError:
    _loads = json.loads

    def _dumps(body: Any) -> bytes:
        return json.dumps(body).encode()


def dumps(body: Any) -> bytes:
    """``body`` as JSON bytes (orjson when installed)."""
    return bytes(_dumps(body))


class HttpError(Exception):
    """The connection failed or the answer could not be read."""


@dataclass
class Reply:
    status: int
    body: bytes
    seconds: float
    """From just before the request was written to the last byte of the answer."""
    retry_after: float | None = None
    """The answer's ``Retry-After`` (seconds), when it has one."""
    worker: str = ""
    """Which server process answered: the per-process prefix of the service's
    ``X-Request-ID`` (:func:`~service.api.observe.process_of`), empty when there is none."""

    def json(self) -> Any:
        return _loads(self.body)


class Connection:
    """One keep-alive connection to ``host:port`` (reconnects when the server closed it)."""

    def __init__(self, host: str, port: int, timeout: float = 10.0) -> None:
        self.host = host
        self.port = port
        self.timeout = timeout
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._host_header = f"Host: {host}:{port}\r\n".encode()

    async def _connect(self) -> None:
        self._reader, self._writer = await asyncio.open_connection(self.host, self.port)

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(OSError):
                await self._writer.wait_closed()
        self._reader = self._writer = None

    async def request(self, method: str, path: str, body: bytes | None = None,
                      headers: dict[str, str] | None = None) -> Reply:
        """Send one request and read its answer; HttpError when that fails.

        Never resends a request: a move must not be applied twice.
        """
        if self._writer is None:
            await self._connect()
        assert self._reader is not None and self._writer is not None
        head = [f"{method} {path} HTTP/1.1\r\n".encode(), self._host_header]
        if headers:
            head.extend(f"{k}: {v}\r\n".encode() for k, v in headers.items())
        if body is not None:
            head.append(b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body))
        head.append(b"\r\n")
        if body is not None:
            head.append(body)
        started = time.perf_counter()
        try:
            self._writer.write(b"".join(head))
            async with asyncio.timeout(self.timeout):  # no task per request, as wait_for makes
                status, data, keep, retry_after, worker = await self._read()
        except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError,
                asyncio.LimitOverrunError) as exc:
            await self.close()
            raise HttpError(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        seconds = time.perf_counter() - started
        if not keep:
            await self.close()
        return Reply(status, data, seconds, retry_after, worker)

    async def _read(self) -> tuple[int, bytes, bool, float | None, str]:
        assert self._reader is not None
        head = await self._reader.readuntil(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        length = 0
        keep = True
        retry_after = None
        worker = ""
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            lname = name.strip().lower()
            if lname == b"content-length":
                length = int(value)
            elif lname == b"connection" and value.strip().lower() == b"close":
                keep = False
            elif lname == b"retry-after":
                retry_after = float(value)
            elif lname == b"x-request-id":
                worker = process_of(value.strip().decode())
            elif lname == b"transfer-encoding":
                raise ValueError("chunked answers are not expected here")
        data = await self._reader.readexactly(length) if length else b""
        return status, data, keep, retry_after, worker
