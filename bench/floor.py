"""The floor: a bare Flask route under the service's own gunicorn settings.

``GET /_bench/ceiling/<key>?size=N`` answers ``{"payload": "xxx…"}`` with N bytes of
payload, as the ceiling endpoint does, but touches no Redis and runs none of the service's
hooks (request ids, log lines, metrics, rate limits, CORS, languages). The benchmark serves
it with ``gunicorn --config python:service.gunicorn_conf bench.floor:app`` — the same
worker class, workers, threads, keep-alive, logging and hooks as the service — and
drives it with the same clients: what a request costs on this machine before the service
does anything at all.
"""

from __future__ import annotations

from flask import Flask, Response, request

app = Flask(__name__)


@app.get("/readyz")
@app.get("/healthz")
def ready() -> Response:
    return Response(b'{"status":"ok"}', mimetype="application/json")


@app.get("/_bench/ceiling/<key>")
def floor(key: str) -> Response:
    size = min(max(int(request.args.get("size", "2048") or 2048), 1), 1 << 20)
    return Response(b'{"payload":"' + b"x" * size + b'"}', mimetype="application/json")
