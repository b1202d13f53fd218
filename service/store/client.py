"""The redis-py client of the store: never resends a command on its own.

redis-py >= 6 retries failed commands by default: ``Redis(host=..., port=...)`` gets
``Retry(ExponentialWithJitterBackoff(base=0.01, cap=1), 10)`` on ConnectionError and
TimeoutError (redis/client.py ``Redis.__init__`` defaults, redis/_defaults.py
``DEFAULT_RETRY_COUNT = 10``), and ``Redis._execute_command`` wraps send *and* read in
``conn.retry.call_with_retry``. A command whose reply was lost (timeout, broken connection)
would be sent again, i.e. a write could be applied twice. So the client gets
``Retry(NoBackoff(), 0)``: ``call_with_retry`` raises on the first failure
(``failures > self._retries``). This also covers connecting, pipelines and the PING health
check, which use the same ``conn.retry``. ``retry_on_timeout`` is not passed: it is deprecated
(DeprecationWarning) and defaults to False; ``retry_on_error`` stays empty.

RESP2 (``protocol=2``): redis-py 8 defaults to RESP3, which switches on "maintenance
notifications" handling; with those on, ``ConnectionPool.get_connection`` skips its
``can_read()`` check that detects pooled connections closed by the server (restart) before a
command is sent on them. ``health_check_interval`` additionally PINGs connections that were
idle that long before reuse, so a dead one fails before the command is sent.
"""

from __future__ import annotations

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

__all__ = ["make_client"]


def make_client(
    url: str,
    *,
    socket_timeout: float = 2.0,
    connect_timeout: float = 1.0,
    health_check_interval: int = 10,
    max_connections: int | None = None,
) -> redis.Redis:
    """A client for ``url`` (``redis://host:port/db``) that never retries a command."""
    return redis.Redis.from_url(
        url,
        socket_timeout=socket_timeout,
        socket_connect_timeout=connect_timeout,
        retry=Retry(NoBackoff(), 0),
        retry_on_error=[],
        health_check_interval=health_check_interval,
        protocol=2,
        decode_responses=False,
        max_connections=max_connections,
    )
