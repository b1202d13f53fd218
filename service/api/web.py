"""Non-API routes: the web table at ``/play`` (static files, using only the public API)."""

from __future__ import annotations

from pathlib import Path

from flask import Flask, Response, redirect, send_from_directory

WEB_DIR = Path(__file__).resolve().parent.parent / "web"


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
