"""redis-servers of one test alone (the session's is in tests/conftest.py)."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

from service.redis_server import RedisServer


@contextlib.contextmanager
def running(server: RedisServer) -> Iterator[RedisServer]:
    """Start ``server``; on leaving, resume it (a test may have paused it) and stop it."""
    server.start()
    try:
        yield server
    finally:
        server.resume()
        server.stop()
