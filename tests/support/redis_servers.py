"""redis-servers of one test alone (the session's is in tests/conftest.py), and what a
test counts or looks at in a Redis."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

import redis
from redis.connection import ConnectionPool

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


def key_count(redis_url: str) -> int:
    """How many keys the Redis at ``redis_url`` holds (a request that creates nothing adds
    none)."""
    client = redis.Redis.from_url(redis_url)
    try:
        return len(client.keys("*"))
    finally:
        client.close()


@contextlib.contextmanager
def borrowed(pool: ConnectionPool) -> Iterator[redis.Connection]:
    """A connection of ``pool`` for the block, to look at; released on leaving."""
    connection = pool.get_connection()
    try:
        yield connection
    finally:
        pool.release(connection)
