"""Service settings, read from environment variables and validated once at start-up.

Every setting is one field of :class:`Settings`; its ``metadata`` names the environment
variable and the parser that turns the variable's text into the field's value (raising
:class:`ValueError` with a message saying what is allowed). To add a setting, add a field
with a default and ``_env("VAR_NAME", parser)`` metadata: :meth:`Settings.from_env` and its
error messages pick it up.

A variable that is unset, empty or only blanks takes the default (``docker compose`` passes
``VAR=`` as an empty string).
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = ["DEFAULT_BIND", "ConfigError", "RedisNode", "Settings", "default_workers"]

DEFAULT_BIND = "127.0.0.1:8000"
DEFAULT_CONNECTIONS_PER_ADDRESS = 64
"""RUMMY_MAX_CONNECTIONS_PER_ADDRESS's ``auto`` without a reverse proxy: a browser opens
at most 6 connections to a host, so this leaves room for ten players or more behind one
NAT address, while one address can take no more than 1/16 of a worker's 1,000
connections."""
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
REDIS_URL_SCHEMES = ("redis", "rediss", "unix")


class ConfigError(ValueError):
    """A bad configuration; ``str()`` names each bad variable and what it allows."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = list(errors)
        super().__init__("invalid configuration: " + "; ".join(self.errors))


def default_workers() -> int:
    """The number of CPUs this process may run on (at least 1)."""
    if sys.platform == "linux":
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def pins_workers(setting: bool | None, workers: int, cpus: int) -> bool:
    """Whether gunicorn's workers keep to a CPU each: as ``RUMMY_PIN_WORKERS`` says, and for
    ``auto`` (None) when there are as many workers as CPUs this process may run on (one
    worker per CPU, the default). With fewer workers than CPUs the choice of CPUs would be
    arbitrary (two instances would crowd the same ones), and with more, two workers would
    share a CPU while the kernel could have spread them."""
    return workers == cpus if setting is None else setting


def least_used_cpu(allowed: Iterable[int], taken: Iterable[int | None]) -> int:
    """The CPU for a new worker under ``RUMMY_PIN_WORKERS``: of the ``allowed`` ones, the
    one the fewest of ``taken`` (the live workers' CPUs, None for a worker not pinned) are
    on; the lowest such."""
    counts = Counter(cpu for cpu in taken if cpu is not None)
    return min(sorted(allowed), key=lambda cpu: counts[cpu])


# --- parsers: text of the variable -> value, or ValueError("must be ...") -------------------


def _int_at_least(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise ValueError(f"must be an integer >= {minimum}, got {text!r}") from None
        if value < minimum:
            raise ValueError(f"must be an integer >= {minimum}, got {value}")
        return value

    return parse


LIMIT_PATTERN = re.compile(
    r"^\s*(?P<amount>\d+)\s*(?:/|per)\s*(?P<count>\d+)?\s*(?P<unit>second|minute|hour|day)s?\s*$",
    re.I)
"""A rate limit: ``100/second``, ``10 per 2 minutes`` (``service.api.security`` reads it)."""


def _limits(text: str) -> tuple[str, ...]:
    if text.strip().lower() == "off":
        return ()
    items = tuple(part.strip() for part in text.split(";") if part.strip())
    bad = [item for item in items if not LIMIT_PATTERN.match(item)]
    if bad or not items:
        raise ValueError("must be limits like '100/second;3000/minute' separated by ';', or "
                         f"'off', got {text!r}")
    return items


def _keys(text: str) -> tuple[str, ...]:
    keys = tuple(k.strip() for k in text.split(",") if k.strip())
    if any(len(k) < 16 for k in keys):
        raise ValueError("each key must have at least 16 characters")
    return keys


LOG_FORMATS = ("auto", "json", "text")


def _log_format(text: str) -> str:
    value = text.strip().lower()
    if value not in LOG_FORMATS:
        raise ValueError(f"must be auto, json or text, got {text!r}")
    return value


def _flag(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"must be 1/0, true/false, yes/no or on/off, got {text!r}")


def _pin_mode(text: str) -> bool | None:
    if text.strip().lower() == "auto":
        return None
    try:
        return _flag(text)
    except ValueError:
        raise ValueError(
            f"must be auto, 1/0, true/false, yes/no or on/off, got {text!r}") from None


def _int_or_auto(minimum: int) -> Callable[[str], int | None]:
    def parse(text: str) -> int | None:
        if text.strip().lower() == "auto":
            return None
        try:
            return _int_at_least(minimum)(text)
        except ValueError:
            raise ValueError(f"must be auto or an integer >= {minimum}, got {text!r}") from None

    return parse


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"must be a number of seconds > 0, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"must be a number of seconds > 0, got {text!r}")
    return value


ARRANGED_DEALS = ("allow", "forbid", "closed_only")
"""What ``RUMMY_ARRANGED_DEALS`` takes: whether ``POST /v1/games`` accepts ``deals``
(``closed_only``: only in a game created with every seat named)."""


def _arranged_deals(text: str) -> str:
    value = text.strip().lower()
    if value not in ARRANGED_DEALS:
        raise ValueError(f"must be one of {', '.join(ARRANGED_DEALS)}, got {text!r}")
    return value


def _redis_url(text: str) -> str:
    # The URL may hold a password: messages show only its scheme.
    allowed = "redis://, rediss:// or unix://"
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise ValueError(f"must be a valid {allowed} URL (bad host or port)") from None
    if parts.scheme not in REDIS_URL_SCHEMES:
        raise ValueError(f"must be a {allowed} URL, got scheme {parts.scheme!r}")
    if parts.scheme == "unix" and not parts.path:
        raise ValueError("must name a socket path: unix:///path/to/redis.sock")
    return text


RedisNode = tuple[str, int]
"""A Redis node's address: (host, port); an IPv6 host is kept without brackets."""


def _redis_nodes(text: str) -> tuple[RedisNode, ...]:
    nodes: list[RedisNode] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        message = f"must be comma-separated host:port items ([v6::addr]:port), got {item!r}"
        try:
            parts = urlsplit(f"//{item}")
            port = parts.port
        except ValueError:
            raise ValueError(message + " (bad host or port)") from None
        if (not parts.hostname or port is None or port == 0 or parts.path or parts.query
                or parts.fragment or "@" in item):
            raise ValueError(message)
        nodes.append((parts.hostname, port))
    if not nodes:
        raise ValueError("must list at least one host:port")
    if len(set(nodes)) != len(nodes):
        raise ValueError("must list each node once, got one twice")
    return tuple(nodes)


_SERVICE_NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


def _service_name(text: str) -> str:
    if not _SERVICE_NAME_RE.match(text):
        raise ValueError(f"must be a Sentinel master name of letters, digits, '.', '_' or '-', "
                         f"got {text!r}")
    return text


def _secret(text: str) -> str:
    return text


def _path(text: str) -> Path:
    return Path(text).expanduser()


def _cors_origins(text: str) -> tuple[str, ...]:
    origins = tuple(part.strip() for part in text.split(",") if part.strip())
    if "*" in origins:
        if len(origins) > 1:
            raise ValueError("must be '*' alone or a comma-separated list of origins")
        return origins
    for origin in origins:
        parts = urlsplit(origin)
        if (
            parts.scheme not in ("http", "https")
            or not parts.hostname
            or parts.path
            or parts.query
            or parts.fragment
            or parts.username is not None
        ):
            raise ValueError(
                "must be '*' or comma-separated origins like https://example.com or "
                f"http://localhost:3000 (scheme://host[:port], no path), got {origin!r}"
            )
        try:
            parts.port  # noqa: B018 - raises ValueError on a bad port
        except ValueError:
            raise ValueError(f"has an origin with a bad port: {origin!r}") from None
    return origins


def _log_level(text: str) -> str:
    level = text.upper()
    if level not in LOG_LEVELS:
        raise ValueError(f"must be one of {', '.join(LOG_LEVELS)}, got {text!r}")
    return level


WORKER_CLASSES = ("gthread", "gevent")


def _worker_class(text: str) -> str:
    if text not in WORKER_CLASSES:
        raise ValueError(f"must be one of {', '.join(WORKER_CLASSES)}, got {text!r}")
    return text


def _bind(text: str) -> str:
    if text.startswith("unix:"):
        if len(text) == len("unix:"):
            raise ValueError("must be HOST:PORT or unix:PATH, got an empty unix: path")
        return text
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"must be HOST:PORT (port 1-65535) or unix:PATH, got {text!r}")
    return text


GEVENT_STREAMS = 20000
"""Streams one gevent worker serves at once unless RUMMY_SSE_MAX_STREAMS says: each costs a
greenlet and a socket, no thread."""


def _env(var: str, parse: Callable[[str], Any]) -> dict[str, Any]:
    return {"env": var, "parse": parse}


@dataclass(frozen=True)
class Settings:
    """All settings of the service; build with :meth:`from_env` or directly in tests."""

    #: REDIS_URL; None: ``rummy-referee serve`` starts an embedded redis-server.
    redis_url: str | None = field(default=None, metadata=_env("REDIS_URL", _redis_url))
    #: REDIS_CLUSTER_NODES: ``host:port,host:port,…`` of a Redis Cluster (some of its nodes
    #: suffice: the client reads the slot map from them). Excludes REDIS_URL and REDIS_SENTINELS.
    redis_cluster_nodes: tuple[RedisNode, ...] = field(
        default=(), metadata=_env("REDIS_CLUSTER_NODES", _redis_nodes))
    #: REDIS_SENTINELS: ``host:port,…`` of the Sentinels watching the primary named by
    #: REDIS_SENTINEL_MASTER. Excludes REDIS_URL and REDIS_CLUSTER_NODES.
    redis_sentinels: tuple[RedisNode, ...] = field(
        default=(), metadata=_env("REDIS_SENTINELS", _redis_nodes))
    #: REDIS_SENTINEL_MASTER: the name the Sentinels monitor the primary under.
    redis_sentinel_master: str | None = field(
        default=None, metadata=_env("REDIS_SENTINEL_MASTER", _service_name))
    #: REDIS_SENTINEL_PASSWORD: the Sentinels' own password (``requirepass`` of sentinel.conf).
    redis_sentinel_password: str | None = field(
        default=None, repr=False, metadata=_env("REDIS_SENTINEL_PASSWORD", _secret))
    #: REDIS_PASSWORD: the password of the cluster nodes or of the Sentinel-managed primary
    #: (with REDIS_URL the password goes into the URL).
    redis_password: str | None = field(
        default=None, repr=False, metadata=_env("REDIS_PASSWORD", _secret))
    #: RUMMY_DATA_DIR: where the embedded redis-server keeps its files (``<dir>/redis``).
    data_dir: Path = field(default=Path("data"), metadata=_env("RUMMY_DATA_DIR", _path))
    #: RUMMY_GAME_TTL_SECONDS: a game untouched this long is forgotten.
    game_ttl_seconds: int = field(
        default=7 * 24 * 3600, metadata=_env("RUMMY_GAME_TTL_SECONDS", _int_at_least(1))
    )
    #: RUMMY_IDEMPOTENCY_TTL_SECONDS: how long a move's Idempotency-Key is remembered (its
    #: answer replayed); a game keeps at most its 256 newest keys in any case.
    idempotency_ttl_seconds: int = field(
        default=24 * 3600,
        metadata=_env("RUMMY_IDEMPOTENCY_TTL_SECONDS", _int_at_least(1))
    )
    #: RUMMY_MAX_BODY_BYTES: larger request bodies are refused (413).
    max_body_bytes: int = field(
        default=65536, metadata=_env("RUMMY_MAX_BODY_BYTES", _int_at_least(1))
    )
    #: RUMMY_CORS_ORIGINS: comma-separated origins, or ``*``; empty: CORS off.
    cors_origins: tuple[str, ...] = field(
        default=(), metadata=_env("RUMMY_CORS_ORIGINS", _cors_origins)
    )
    #: RUMMY_REDIS_SOCKET_TIMEOUT: seconds to wait for Redis before failing the request.
    redis_socket_timeout: float = field(
        default=2.0, metadata=_env("RUMMY_REDIS_SOCKET_TIMEOUT", _positive_float)
    )
    #: RUMMY_LOG_LEVEL: DEBUG, INFO, WARNING, ERROR or CRITICAL (any case).
    log_level: str = field(default="INFO", metadata=_env("RUMMY_LOG_LEVEL", _log_level))
    #: RUMMY_WORKERS: gunicorn worker processes; default: the number of CPUs.
    workers: int = field(
        default_factory=default_workers, metadata=_env("RUMMY_WORKERS", _int_at_least(1))
    )
    #: RUMMY_WORKER_CLASS: gunicorn's worker class, ``gthread`` (a thread per request in
    #: flight) or ``gevent`` (a greenlet per connection: open event streams and waiting long
    #: polls cost no OS thread; docs/operations.md, "Live tables").
    worker_class: str = field(
        default="gthread", metadata=_env("RUMMY_WORKER_CLASS", _worker_class))
    #: RUMMY_THREADS: threads per gunicorn worker.
    threads: int = field(default=4, metadata=_env("RUMMY_THREADS", _int_at_least(1)))
    #: RUMMY_KEEPALIVE_REQUESTS: a keep-alive connection is closed after this many requests
    #: (0: never), as Apache's MaxKeepAliveRequests does. The client reconnects, and a less
    #: busy worker takes the new connection: without it, connections stay with the worker
    #: that first accepted them, however unevenly they fell.
    keepalive_requests: int = field(
        default=100, metadata=_env("RUMMY_KEEPALIVE_REQUESTS", _int_at_least(0)))
    #: RUMMY_BIND: where gunicorn listens, HOST:PORT or unix:PATH.
    bind: str = field(default=DEFAULT_BIND, metadata=_env("RUMMY_BIND", _bind))
    #: RUMMY_REQUEST_READ_TIMEOUT: seconds a client has to send a whole request, its head
    #: and its body, counted from its first byte (from the connection's start for its first
    #: request); a request still arriving then is answered 408 and its connection closed.
    #: Until it has all arrived it holds no worker thread (:mod:`service.serving_limits`).
    request_read_timeout: float = field(
        default=10.0, metadata=_env("RUMMY_REQUEST_READ_TIMEOUT", _positive_float))
    #: RUMMY_MAX_CONNECTIONS_PER_ADDRESS: connections one client address (an IPv6 /64) may
    #: hold open at once in each worker process; more are refused with 503. 0: no limit;
    #: ``auto`` (None here, the default): :attr:`connections_per_address`.
    max_connections_per_address: int | None = field(
        default=None, metadata=_env("RUMMY_MAX_CONNECTIONS_PER_ADDRESS", _int_or_auto(0)))
    #: RUMMY_SSE_MAX_STREAMS: event streams and waiting long polls one worker serves at once
    #: (0: half its threads under gthread, :data:`GEVENT_STREAMS` under gevent); more are
    #: refused with 503 + Retry-After, so streams never take every thread.
    sse_max_streams: int = field(
        default=0, metadata=_env("RUMMY_SSE_MAX_STREAMS", _int_at_least(0))
    )
    #: RUMMY_SSE_MAX_SECONDS: an event stream ends after this long; clients reconnect with
    #: Last-Event-ID (EventSource does so by itself).
    sse_max_seconds: float = field(
        default=300.0, metadata=_env("RUMMY_SSE_MAX_SECONDS", _positive_float)
    )
    #: RUMMY_SSE_HEARTBEAT_SECONDS: a comment line is sent this often on an idle stream.
    sse_heartbeat_seconds: float = field(
        default=15.0, metadata=_env("RUMMY_SSE_HEARTBEAT_SECONDS", _positive_float)
    )
    #: RUMMY_SSE_PER_ADDRESS: event streams and waiting long polls one client address may
    #: hold open at once in one worker process (0: no limit); more are refused with 429.
    sse_per_address: int = field(
        default=32, metadata=_env("RUMMY_SSE_PER_ADDRESS", _int_at_least(0)))
    #: RUMMY_SSE_PER_SEAT: event streams one seat may hold open at once in one worker
    #: process (0: no limit); more are refused with 429.
    sse_per_seat: int = field(
        default=4, metadata=_env("RUMMY_SSE_PER_SEAT", _int_at_least(0)))
    #: RUMMY_SSE_MAX_BUFFERED: bytes an event stream may leave unsent in the kernel's send
    #: queue (a client that does not read); beyond them the stream ends.
    sse_max_buffered: int = field(
        default=262144, metadata=_env("RUMMY_SSE_MAX_BUFFERED", _int_at_least(1024)))

    #: RUMMY_RATE_LIMITS: limits per caller (a seat whose token the worker has verified,
    #: else the client address: an unverified token earns no allowance of its own) on every
    #: endpoint, ``;``-separated (e.g. ``100/second;3000/minute``), or ``off``. All of a
    #: caller's limits are counted in one Redis script call (for a seat on its own game, in
    #: the call that loads the game).
    rate_limits: tuple[str, ...] = field(
        default=("100/second",),
        metadata=_env("RUMMY_RATE_LIMITS", _limits))
    #: RUMMY_CREATE_RATE_LIMITS: limits per client address on creating games, or ``off``.
    create_rate_limits: tuple[str, ...] = field(
        default=("120/minute",), metadata=_env("RUMMY_CREATE_RATE_LIMITS", _limits))
    #: RUMMY_JOIN_RATE_LIMITS: limits per client address on ``POST /v1/join`` (every
    #: attempt counts, a wrong code too: this is what keeps join codes from being guessed),
    #: or ``off``.
    join_rate_limits: tuple[str, ...] = field(
        default=("20/hour",), metadata=_env("RUMMY_JOIN_RATE_LIMITS", _limits))
    #: RUMMY_VERIFY_RATE_LIMITS: limits per client address on the ``GET …/verify`` requests
    #: that replay a game's log (the costly ones: a long game's replay takes a CPU for a
    #: fraction of a second), or ``off``. A report already worked out for the game's current
    #: version is answered from its cache and does not count here.
    verify_rate_limits: tuple[str, ...] = field(
        default=("10/minute",), metadata=_env("RUMMY_VERIFY_RATE_LIMITS", _limits))
    #: RUMMY_PROXY_HOPS: reverse proxies in front of the service that each add to
    #: ``X-Forwarded-For`` (and set ``X-Forwarded-Proto``/``-Host``). The client address is
    #: then read from that header, that many hops back. 0 (the default): the headers are
    #: ignored, since any client can send them.
    proxy_hops: int = field(default=0, metadata=_env("RUMMY_PROXY_HOPS", _int_at_least(0)))
    #: RUMMY_API_KEYS: comma-separated keys; when set, creating a game needs one
    #: (``X-API-Key`` header). Empty: anyone may create games.
    api_keys: tuple[str, ...] = field(default=(), metadata=_env("RUMMY_API_KEYS", _keys))
    #: RUMMY_ARRANGED_DEALS: whether a game may be created with an arranged deal (``deals``
    #: in ``POST /v1/games``: its creator knows every hand and the stock): ``allow`` (the
    #: default), ``forbid`` (403 ``ARRANGED_DEALS_FORBIDDEN``), or ``closed_only`` (refused
    #: in a game with an open seat, whose players may not know each other).
    arranged_deals: str = field(
        default="allow", metadata=_env("RUMMY_ARRANGED_DEALS", _arranged_deals))
    #: RUMMY_METRICS: 1 serves Prometheus metrics at /metrics (0: off).
    metrics: bool = field(default=True, metadata=_env("RUMMY_METRICS", _flag))
    #: RUMMY_PIN_WORKERS: ``auto`` (the default) keeps each gunicorn worker on a CPU of its
    #: own (Linux) when there are as many workers as CPUs this process may use, as there are
    #: by default (:func:`pins_workers`); 1: always, spread over those CPUs; 0: never, the
    #: kernel moves them freely. None here stands for ``auto``.
    pin_workers: bool | None = field(default=None, metadata=_env("RUMMY_PIN_WORKERS", _pin_mode))
    #: RUMMY_REUSE_PORT: 1 (the default) gives each gunicorn worker a listening socket of its
    #: own on the bound address (``SO_REUSEPORT``, Linux), so the kernel spreads new
    #: connections evenly over the workers; 0: one socket, shared, taken by whichever worker
    #: wakes first. Only for a HOST:PORT bind.
    reuse_port: bool = field(default=True, metadata=_env("RUMMY_REUSE_PORT", _flag))
    #: RUMMY_ACCESS_LOG: 1 has gunicorn write its own access line to stdout as well (0, the
    #: default: the service's line per request is the access log).
    access_log: bool = field(default=False, metadata=_env("RUMMY_ACCESS_LOG", _flag))
    #: RUMMY_LOG_FORMAT: ``json`` (one JSON object per line), ``text`` (one readable line,
    #: in the format of gunicorn's own), or ``auto`` (the default): text when the log goes
    #: to a terminal, else JSON. The Docker image sets ``json``.
    log_format: str = field(default="auto", metadata=_env("RUMMY_LOG_FORMAT", _log_format))

    def __post_init__(self) -> None:
        errors = self._redis_mode_errors()
        if errors:
            raise ConfigError(errors)

    def _redis_mode_errors(self) -> list[str]:
        """Errors of the combination of the Redis settings (each alone is valid)."""
        errors: list[str] = []
        given = [var for var, value in (("REDIS_URL", self.redis_url),
                                        ("REDIS_CLUSTER_NODES", self.redis_cluster_nodes),
                                        ("REDIS_SENTINELS", self.redis_sentinels)) if value]
        if len(given) > 1:
            errors.append(f"{given[0]} must not be set together with {' and '.join(given[1:])}"
                          " (set exactly one of REDIS_URL, REDIS_CLUSTER_NODES, "
                          "REDIS_SENTINELS)")
        for var, nodes in (("REDIS_CLUSTER_NODES", self.redis_cluster_nodes),
                           ("REDIS_SENTINELS", self.redis_sentinels)):
            if any(not host or isinstance(port, bool) or not isinstance(port, int)
                   or not 0 < port < 65536 for host, port in nodes):
                errors.append(f"{var} must hold (host, port) pairs with ports 1-65535")
        if self.redis_sentinels and not self.redis_sentinel_master:
            errors.append("REDIS_SENTINEL_MASTER must be set with REDIS_SENTINELS (the name "
                          "the Sentinels monitor the primary under)")
        if self.redis_sentinel_master and not self.redis_sentinels:
            errors.append("REDIS_SENTINEL_MASTER must only be set with REDIS_SENTINELS")
        if self.redis_sentinel_password and not self.redis_sentinels:
            errors.append("REDIS_SENTINEL_PASSWORD must only be set with REDIS_SENTINELS")
        if self.redis_password and not (self.redis_cluster_nodes or self.redis_sentinels):
            errors.append("REDIS_PASSWORD must only be set with REDIS_CLUSTER_NODES or "
                          "REDIS_SENTINELS (with REDIS_URL, put the password in the URL)")
        return errors

    @property
    def redis_mode(self) -> str | None:
        """``"single"`` (REDIS_URL), ``"cluster"``, ``"sentinel"``, or None (none set:
        ``rummy-referee serve`` starts an embedded redis-server)."""
        if self.redis_cluster_nodes:
            return "cluster"
        if self.redis_sentinels:
            return "sentinel"
        if self.redis_url is not None:
            return "single"
        return None

    @property
    def connections_per_address(self) -> int:
        """Connections one address may hold in a worker (0: no limit): as
        RUMMY_MAX_CONNECTIONS_PER_ADDRESS says, and for ``auto`` 64, or no limit behind
        reverse proxies (RUMMY_PROXY_HOPS > 0), whose connections all come from their own
        few addresses."""
        if self.max_connections_per_address is not None:
            return self.max_connections_per_address
        return 0 if self.proxy_hops else DEFAULT_CONNECTIONS_PER_ADDRESS

    @property
    def stream_slots(self) -> int:
        """Concurrent event streams (and waiting long polls) per gthread worker process."""
        return self.sse_max_streams or max(1, self.threads // 2)

    def green_stream_slots(self) -> int:
        """:attr:`stream_slots` for a gevent worker."""
        return self.sse_max_streams or GEVENT_STREAMS

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read every setting from ``environ`` (default ``os.environ``).

        Raises :class:`ConfigError` listing every bad variable, what it allows and what it got.
        """
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        errors: list[str] = []
        for f in dataclasses.fields(cls):
            var: str = f.metadata["env"]
            text = env.get(var, "").strip()
            if not text:
                continue
            try:
                values[f.name] = f.metadata["parse"](text)
            except ValueError as exc:
                errors.append(f"{var} {exc}")
        if errors:
            raise ConfigError(errors)
        return cls(**values)  # __post_init__ checks the combination of the Redis settings

    @classmethod
    def env_vars(cls) -> dict[str, str]:
        """Field name -> environment variable, for documentation and tests."""
        return {f.name: f.metadata["env"] for f in dataclasses.fields(cls)}
