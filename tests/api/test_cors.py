"""CORS for configured origins (``RUMMY_CORS_ORIGINS``): the preflight allows every request
header a client sends, the answers expose every header a client reads, a preflight may be
kept, and an answer that depends on the origin says ``Vary: Origin``. A real browser on
another origin: tests/system/test_cors_browser.py."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from service.app import CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS, create_app
from service.config import Settings

WEB = "https://table.example"
OTHER = "https://elsewhere.example"
SENT = ["Authorization", "Content-Type", "If-Match", "If-None-Match", "Idempotency-Key",
        "X-API-Key", "Last-Event-ID", "Prefer"]
READ = ["ETag", "Location", "Retry-After", "Idempotent-Replayed", "Content-Language",
        "RateLimit", "RateLimit-Policy", "Preference-Applied"]


def _app(redis_url: str, origins: tuple[str, ...]) -> Flask:
    return create_app(Settings(redis_url=redis_url, rate_limits=(), create_rate_limits=(),
                               cors_origins=origins))


def _listed(value: str | None) -> set[str]:
    return {h.strip().lower() for h in (value or "").split(",") if h.strip()}


def test_the_lists_are_the_ones_clients_need() -> None:
    assert set(SENT) <= set(CORS_ALLOW_HEADERS)
    assert set(READ) <= set(CORS_EXPOSE_HEADERS)


def test_a_preflight_allows_every_header_a_client_sends(redis_url: str) -> None:
    client = _app(redis_url, (WEB,)).test_client()
    resp = client.options("/v1/games/g1/moves", headers={
        "Origin": WEB, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": ", ".join(h.lower() for h in SENT)})
    assert resp.status_code == 200
    assert resp.headers["Access-Control-Allow-Origin"] == WEB
    assert _listed(resp.headers.get("Access-Control-Allow-Headers")) == {
        h.lower() for h in SENT}
    assert "POST" in resp.headers["Access-Control-Allow-Methods"]
    assert int(resp.headers["Access-Control-Max-Age"]) >= 600
    assert "Origin" in resp.vary


def _answers(client: FlaskClient, origin: str | None) -> list[tuple[str, TestResponse]]:
    headers = {"Origin": origin} if origin else {}
    created = client.post("/v1/games", json={"variant": "basic", "players": ["Ana", "Bo"]},
                          headers=headers)
    game_id = created.get_json()["game_id"]
    return [(path, client.get(path, headers=headers)) for path in (
        "/v1/variants", f"/v1/games/{game_id}", "/v1/games/nope", "/healthz",
        "/openapi.json")] + [("/v1/games", created)]


def test_every_answer_varies_on_origin_and_exposes_what_clients_read(redis_url: str) -> None:
    client = _app(redis_url, (WEB, OTHER)).test_client()
    for origin in (WEB, None, "https://stranger.example"):
        for path, resp in _answers(client, origin):
            assert "Origin" in resp.vary, (origin, path)
            if origin == WEB:
                assert resp.headers["Access-Control-Allow-Origin"] == WEB
                assert _listed(resp.headers.get("Access-Control-Expose-Headers")) == {
                    h.lower() for h in READ}, path
    # one origin configured: the answers still differ by origin (a stranger gets none)
    single = _app(redis_url, (WEB,)).test_client()
    stranger = single.get("/v1/variants", headers={"Origin": OTHER})
    assert "Access-Control-Allow-Origin" not in stranger.headers
    assert "Origin" in stranger.vary
    assert "Origin" in single.get("/v1/variants").vary


def test_any_origin_is_answered_with_a_wildcard_that_does_not_vary(redis_url: str) -> None:
    client = _app(redis_url, ("*",)).test_client()
    for origin in (WEB, OTHER):
        resp = client.get("/v1/variants", headers={"Origin": origin})
        assert resp.headers["Access-Control-Allow-Origin"] == "*"
        assert "Origin" not in resp.vary
        assert "etag" in _listed(resp.headers["Access-Control-Expose-Headers"])


def test_cors_is_off_unless_configured(client: FlaskClient) -> None:
    resp = client.get("/v1/variants", headers={"Origin": WEB})
    assert "Access-Control-Allow-Origin" not in resp.headers
    assert "Origin" not in resp.vary
