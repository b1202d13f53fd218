"""Abuse limits: rate limits shared by every worker (flask-limiter on the same Redis — one
server, the cluster or the Sentinel-managed primary, as configured) and
optional API keys for creating games.

Rate limits count per caller: a seat token (hashed) when the request carries one, else the
client address. ``RUMMY_RATE_LIMITS`` applies to every endpoint; ``RUMMY_CREATE_RATE_LIMITS``
adds a limit per client address on ``POST /v1/games``. A caller over a limit gets ``429``
problem+json with ``Retry-After``. Liveness, readiness, the docs and the web table are not
limited.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Any

from flask import Flask, current_app, request
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from limits import parse
from redis.backoff import NoBackoff
from redis.retry import Retry

from service.api.problems import Problem
from service.config import Settings

UNLIMITED = ("/healthz", "/readyz", "/docs", "/openapi.json", "/play", "/_bench")


def _caller() -> str:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return "seat:" + hashlib.sha256(token.strip().encode()).hexdigest()[:32]
    return "addr:" + (get_remote_address() or "unknown")


def _exempt() -> bool:
    return request.path.startswith(UNLIMITED) or request.path == "/"


def _hosts(nodes: tuple[tuple[str, int], ...]) -> str:
    return ",".join(f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
                    for host, port in nodes)


def _storage(settings: Settings) -> tuple[str | None, dict[str, Any]]:
    """flask-limiter's storage URI and options for the configured Redis mode: the same Redis
    as the games (``limits`` storages ``redis://``, ``redis+cluster://``, ``redis+sentinel://``;
    passwords go in the options, never in the URI). Cluster and Sentinel clients get no
    retries, so an unreachable store costs a request one timeout, not ten."""
    timeout = max(1, round(settings.redis_socket_timeout))
    options: dict[str, Any] = {"socket_timeout": timeout, "socket_connect_timeout": timeout}
    if settings.redis_cluster_nodes:
        options["retry"] = Retry(NoBackoff(), 0)
        if settings.redis_password:
            options["password"] = settings.redis_password
        return f"redis+cluster://{_hosts(settings.redis_cluster_nodes)}", options
    if settings.redis_sentinels:
        options["retry"] = Retry(NoBackoff(), 0)
        options["password"] = settings.redis_password  # the primary's (None: none)
        options["use_replicas"] = False  # counts are read where they are written
        options["sentinel_kwargs"] = {
            "socket_timeout": 1, "socket_connect_timeout": 1, "retry": Retry(NoBackoff(), 0),
            "password": settings.redis_sentinel_password}
        return (f"redis+sentinel://{_hosts(settings.redis_sentinels)}/"
                f"{settings.redis_sentinel_master}", options)
    return settings.redis_url, options


def install(app: Flask, settings: Settings) -> Limiter | None:
    """Rate limits on ``app`` (None when every limit is off)."""
    if not settings.rate_limits and not settings.create_rate_limits:
        return None
    storage_uri, storage_options = _storage(settings)
    limiter = Limiter(
        key_func=_caller, app=app, default_limits=list(settings.rate_limits),
        default_limits_exempt_when=_exempt, storage_uri=storage_uri,
        storage_options=storage_options,
        strategy="fixed-window", headers_enabled=False, swallow_errors=True,
        key_prefix="rummy-rl")
    app.extensions["create_limits"] = (limiter, [parse(item) for item in
                                                 settings.create_rate_limits])
    return limiter


def check_create_limit() -> None:
    """``RUMMY_CREATE_RATE_LIMITS``: games created per client address (429 beyond)."""
    limiter, items = current_app.extensions.get("create_limits", (None, []))
    address = get_remote_address() or "unknown"
    for item in items:
        try:
            allowed = limiter.limiter.hit(item, "rummy-create", address)
            if allowed:
                continue
            reset, _remaining = limiter.limiter.get_window_stats(item, "rummy-create", address)
        except Exception:
            return
        raise Problem(429, "Too Many Requests",
                      f"at most {item} new games per client address; retry later",
                      headers={"Retry-After": str(max(1, int(reset - time.time()) + 1))})


def require_api_key(settings: Settings) -> None:
    """When keys are configured, creating a game needs one (``X-API-Key``)."""
    if not settings.api_keys:
        return
    given = request.headers.get("X-API-Key", "")
    if not any(hmac.compare_digest(given.encode(), key.encode()) for key in settings.api_keys):
        raise Problem(401, "Unauthorized",
                      "creating a game needs an API key on this server: X-API-Key header",
                      headers={"WWW-Authenticate": 'ApiKey realm="rummy-referee"'})
