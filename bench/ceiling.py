"""The ceiling: the service's own app with one route more, for the benchmark only.

``GET /_bench/ceiling/<key>?size=N`` does one Redis GET and one SET of an N-byte payload on
the service's Redis client and answers it as ``{"payload": "xxx…"}``: what any endpoint of
this stack costs at least. It runs under every hook of the service (request ids, log lines,
metrics, CORS, languages) but its rate limits, which do not count it. The benchmark serves
it with ``gunicorn --config python:service.gunicorn_conf 'bench.ceiling:create_bench_app()'``
(:mod:`bench.stack`), and :mod:`bench.instructions` counts it through Flask's test client.
"""

from __future__ import annotations

from flask import Flask, Response, request

from service.api.problems import Problem
from service.app import create_app
from service.config import Settings
from service.numbers import natural
from service.store import StoreClient

CEILING_PREFIX = "/_bench"
CEILING_ROUTE = f"{CEILING_PREFIX}/ceiling/<key>"
CEILING_TTL = 600
"""Seconds a ceiling key lives in Redis."""
MAX_SIZE = 1 << 20


def create_bench_app(settings: Settings | None = None) -> Flask:
    """:func:`service.app.create_app` for ``settings`` (default: from the environment), with
    the ceiling route added."""
    app = create_app(settings)
    limiter = app.extensions.get("rate_limiter")
    if limiter is not None:
        limiter.unlimited = (*limiter.unlimited, CEILING_PREFIX)
    register_ceiling(app, app.extensions["referee"].store.client)
    return app


def register_ceiling(app: Flask, client: StoreClient) -> None:
    """The ceiling route on ``app``, its payload kept with ``client``."""

    @app.get(CEILING_ROUTE)
    def ceiling(key: str) -> Response:
        asked = natural(request.args.get("size") or "2048", max_digits=7)
        if asked is None:
            raise Problem(400, "Bad Request", "size must be a number of bytes",
                          code="MALFORMED_REQUEST",
                          errors=[{"field": "size", "message": "not a number"}])
        size = min(max(asked, 1), MAX_SIZE)
        name = f"bench:{{{key}}}"
        value = client.get(name)
        payload = value if isinstance(value, bytes) and len(value) == size else b"x" * size
        client.set(name, payload, ex=CEILING_TTL)
        return Response(b'{"payload":"' + payload + b'"}', mimetype="application/json")
