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

:func:`make_store_client` builds the client for the configured mode (``Settings``): one
server (``REDIS_URL``, :func:`make_client`), a Redis Cluster (``REDIS_CLUSTER_NODES``,
:func:`make_cluster_client`) or a primary watched by Sentinels (``REDIS_SENTINELS``,
:func:`make_sentinel_client`), each with the same never-resend policy:

- Cluster (``redis.cluster.RedisCluster``): the per-node clients are built by redis-py with
  ``Retry(NoBackoff(), 0)`` already (``NodesManager.create_redis_node``); the cluster client
  itself re-runs a whole command up to ``retry.get_retries()`` times (default 10, also via the
  deprecated ``cluster_error_retry_attempts``) on ConnectionError, TimeoutError,
  ClusterDownError and SlotNotCoveredError (``RedisCluster.ERRORS_ALLOW_RETRY``), which
  would resend a write whose reply was lost. So it gets ``retry=Retry(NoBackoff(), 0)``: one
  attempt. Redirections are still followed inside that attempt (``_execute_command``: MOVED,
  ASK, TRYAGAIN, at most ``RedisClusterRequestTTL`` = 16 hops): the node that answers with one
  of them did *not* run the command, so sending it to the right node is no resend. The
  pipelines of the store (reads only) get the same ``retry``. ``health_check_interval`` is not
  a RedisCluster option (dropped by ``cleanup_kwargs``); after a ConnectionError the client
  drops the node's idle connections and re-reads the slot map. The cluster client reads the
  slot map when it is built, so a worker that reaches none of the listed nodes fails to start.
- Sentinel: ``Sentinel(...).master_for(name)`` is a ``redis.Redis`` whose pool asks the
  Sentinels for the primary's address on each new connection; it gets the same options as
  :func:`make_client`. A write that meets ``-READONLY`` (the old primary, demoted) is turned
  into a ConnectionError by redis-py and its connection dropped; it was not applied. The
  Sentinel connections (read-only queries) get short timeouts and no retries too, so an
  unreachable Sentinel costs one connect timeout before the next one is asked.

Every mode's connections pack commands with :class:`Packer`: hiredis alone, without
redis-py's Python encoding of each argument first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import hiredis
import redis
from redis._parsers.encoders import Encoder
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.connection import HiredisRespSerializer, PythonRespSerializer
from redis.retry import Retry
from redis.sentinel import Sentinel

if TYPE_CHECKING:
    from service.config import Settings

__all__ = [
    "Packer",
    "StoreClient",
    "execute",
    "make_client",
    "make_cluster_client",
    "make_sentinel_client",
    "make_store_client",
]

StoreClient: TypeAlias = "redis.Redis | RedisCluster"
"""A client the store works with: one server (or a Sentinel-managed primary), or a cluster."""


def _no_retry() -> Retry:
    return Retry(NoBackoff(), 0)


class Packer:
    """A command packer for redis-py's connections (its ``command_packer``): the same bytes
    as redis-py's own, several times sooner for a command of many arguments.

    redis-py's hiredis packer (``HiredisRespSerializer``) first runs every argument through
    its ``Encoder.encode`` in Python, then has hiredis pack them. hiredis takes ``str``
    (UTF-8, strictly, as the store's clients encode), ``int``, ``float`` (as ``repr``) and
    ``bytes`` itself, so they are handed to it as they are: packing the commit (``EVALSHA``
    and its 18 arguments) takes 2 µs instead of 16.5. What hiredis refuses (``bool``,
    ``bytearray``, ``None``, a subclass of ``str`` or ``int`` …), and a command named by a
    string that is not one word (``"CLIENT SETNAME"``, which redis-py splits), go
    redis-py's own way: the same bytes, or the same ``DataError``."""

    def __init__(self) -> None:
        encode = Encoder("utf-8", "strict", False).encode  # type: ignore[no-untyped-call]
        self._redis_py = HiredisRespSerializer(  # type: ignore[no-untyped-call]
            PythonRespSerializer(6000, encode).pack, encode)  # redis-py's buffer cutoff

    def pack(self, *args: Any) -> list[bytes]:
        name = args[0]
        if type(name) is str and name.split() == [name]:
            try:
                return [hiredis.pack_command(args)]
            except TypeError:
                pass
        packed: list[bytes] = self._redis_py.pack(*args)
        return packed


PACKER = Packer()
"""The packer of every connection the store's clients open (it keeps no state)."""


class _PackedConnection(redis.Connection):
    """redis-py's TCP connection packing with :data:`PACKER` (a Redis Cluster's nodes take
    their connections' class, not a packer)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**{"command_packer": PACKER, **kwargs})  # type: ignore[no-untyped-call]


def execute(client: StoreClient, *args: Any) -> Any:
    """``client.execute_command(*args)``, on one server or a Sentinel-managed primary sent on
    a connection of the client's pool directly: redis-py 8's ``Redis.execute_command`` adds
    a retry wrapper (the store's clients never retry), a per-command check for ``HIMPORT``
    and timings for its OpenTelemetry metrics, none of which the store's commands need.
    The command gets the same answer (through the client's response callback, if its
    command has one), the same error, and a connection that failed is dropped (the
    connection's ``read_response`` and ``send_packed_command`` disconnect it themselves)
    and never resent. A Redis Cluster's command goes its own way (routed to its slot's
    node)."""
    if type(client) is not redis.Redis or client.connection is not None:
        return client.execute_command(*args)  # type: ignore[no-untyped-call]
    pool = client.connection_pool
    conn = pool.get_connection()
    try:
        conn.send_command(*args)  # type: ignore[no-untyped-call]
        response = conn.read_response()
    finally:
        pool.release(conn)
    callback = client.response_callbacks.get(args[0])  # type: ignore[no-untyped-call]
    return response if callback is None else callback(response)


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
        retry=_no_retry(),
        retry_on_error=[],
        health_check_interval=health_check_interval,
        protocol=2,
        decode_responses=False,
        max_connections=max_connections,
        command_packer=PACKER,
    )


def make_cluster_client(
    nodes: Sequence[tuple[str, int]],
    *,
    password: str | None = None,
    socket_timeout: float = 2.0,
    connect_timeout: float = 1.0,
    max_connections: int | None = None,
) -> RedisCluster:
    """A Redis Cluster client bootstrapped from ``nodes`` that never resends a command.

    Reads the cluster's slot map now (raises ``RedisClusterException`` when no node answers).
    """
    options: dict[str, Any] = {}
    if max_connections is not None:
        options["max_connections"] = max_connections  # per node
    return RedisCluster(
        startup_nodes=[ClusterNode(host, port)  # type: ignore[no-untyped-call, unused-ignore]
                       for host, port in nodes],
        retry=_no_retry(),
        password=password,
        socket_timeout=socket_timeout,
        socket_connect_timeout=connect_timeout,
        protocol=2,
        decode_responses=False,
        connection_class=_PackedConnection,
        **options,
    )


def make_sentinel_client(
    sentinels: Sequence[tuple[str, int]],
    master: str,
    *,
    password: str | None = None,
    sentinel_password: str | None = None,
    socket_timeout: float = 2.0,
    connect_timeout: float = 1.0,
    health_check_interval: int = 10,
    max_connections: int | None = None,
) -> redis.Redis:
    """A client of the primary the Sentinels know as ``master``; never resends a command.

    Nothing is connected yet: each new connection asks the Sentinels where the primary is.
    """
    sentinel = Sentinel(  # type: ignore[no-untyped-call, unused-ignore]
        list(sentinels),
        sentinel_kwargs={
            "socket_timeout": min(socket_timeout, 1.0),
            "socket_connect_timeout": min(connect_timeout, 1.0),
            "retry": _no_retry(),
            "retry_on_error": [],
            "password": sentinel_password,
            "protocol": 2,
        },
    )
    client: redis.Redis = sentinel.master_for(  # type: ignore[no-untyped-call, unused-ignore]
        master,
        password=password,
        socket_timeout=socket_timeout,
        socket_connect_timeout=connect_timeout,
        retry=_no_retry(),
        retry_on_error=[],
        health_check_interval=health_check_interval,
        protocol=2,
        decode_responses=False,
        max_connections=max_connections,
        command_packer=PACKER,
    )
    return client


def make_store_client(settings: Settings, *, max_connections: int | None = None) -> StoreClient:
    """The client for the Redis mode ``settings`` configures (REDIS_URL, REDIS_CLUSTER_NODES
    or REDIS_SENTINELS), with the socket timeout of ``RUMMY_REDIS_SOCKET_TIMEOUT``.

    ValueError when none is configured (``rummy-referee serve`` then starts a redis-server
    and sets REDIS_URL).
    """
    timeout = settings.redis_socket_timeout
    if settings.redis_cluster_nodes:
        return make_cluster_client(settings.redis_cluster_nodes, password=settings.redis_password,
                                   socket_timeout=timeout, max_connections=max_connections)
    if settings.redis_sentinels:
        if not settings.redis_sentinel_master:
            raise ValueError("REDIS_SENTINELS needs REDIS_SENTINEL_MASTER")
        return make_sentinel_client(
            settings.redis_sentinels, settings.redis_sentinel_master,
            password=settings.redis_password, sentinel_password=settings.redis_sentinel_password,
            socket_timeout=timeout, max_connections=max_connections)
    if settings.redis_url is None:
        raise ValueError("no Redis configured: set REDIS_URL, REDIS_CLUSTER_NODES or "
                         "REDIS_SENTINELS")
    return make_client(settings.redis_url, socket_timeout=timeout,
                       max_connections=max_connections)
