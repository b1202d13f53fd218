"""Non-API routes: the web table at ``/play`` (static files, using only the public API) and,
when ``RUMMY_BENCHMARK=1``, the benchmark's ceiling endpoint."""

from __future__ import annotations

from pathlib import Path

from flask import Flask, Response, redirect, send_from_directory

from service.store import StoreClient

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
CEILING_TTL = 600


def register(app: Flask) -> None:
    @app.get("/play")
    def play_index() -> Response:
        return send_from_directory(WEB_DIR, "index.html")

    @app.get("/play/<path:name>")
    def play_file(name: str) -> Response:
        return send_from_directory(WEB_DIR, name)

    @app.get("/")
    def root() -> Response:
        return redirect("/docs")  # type: ignore[return-value]


def register_ceiling(app: Flask, client: StoreClient) -> None:
    """``GET /_bench/ceiling/<key>?size=N``: one Redis GET and one SET of an N-byte payload,
    returned as the body — what any endpoint on this stack costs at least."""
    from flask import request

    from service.api.problems import Problem
    from service.numbers import natural

    @app.get("/_bench/ceiling/<key>")
    def ceiling(key: str) -> Response:
        asked = natural(request.args.get("size") or "2048", max_digits=7)
        if asked is None:
            raise Problem(400, "Bad Request", "size must be a number of bytes",
                          code="MALFORMED_REQUEST",
                          errors=[{"field": "size", "message": "not a number"}])
        size = min(max(asked, 1), 1 << 20)
        name = f"bench:{{{key}}}"
        value = client.get(name)
        payload = value if isinstance(value, bytes) and len(value) == size else b"x" * size
        client.set(name, payload, ex=CEILING_TTL)
        return Response(b'{"payload":"' + payload + b'"}', mimetype="application/json")
