"""service.api.context: the request and its ``g`` without Flask's proxies, and a request
header read where werkzeug reads it."""

from __future__ import annotations

import pytest
from flask import Flask, g, request

from service.api.context import bearer_token, current_g, current_request, environ_key, header

HEADERS = {"Authorization": "Bearer a.0.b", "Idempotency-Key": "k-1", "If-Match": '"3"',
           "X-Empty": "", "Content-Type": "application/json; charset=utf-8"}


@pytest.fixture
def app() -> Flask:
    return Flask("context")


def test_the_request_and_g_are_flask_s_own_objects(app: Flask) -> None:
    with app.test_request_context("/v1/games/g1/moves", method="POST"):
        req = current_request()
        assert type(req) is app.request_class
        assert req is request._get_current_object()  # type: ignore[attr-defined]
        g.seen = 1
        assert current_g().seen == 1
        assert type(current_g()) is app.app_ctx_globals_class


def test_outside_a_request_it_is_flask_s_error(app: Flask) -> None:
    with pytest.raises(RuntimeError, match="request context"):
        current_request()
    with pytest.raises(RuntimeError, match="application context"):
        current_g()


@pytest.mark.parametrize("name", [*HEADERS, "authorization", "IF-MATCH", "X-Absent",
                                  "Content-Length", "content-type"])
def test_a_header_reads_as_werkzeug_reads_it(app: Flask, name: str) -> None:
    with app.test_request_context("/", method="POST", headers=HEADERS, data=b"{}"):
        assert header(current_request(), name) == request.headers.get(name, "")
        assert header(current_request(), name, "none") == request.headers.get(name, "none")


def test_where_the_environment_keeps_a_header() -> None:
    assert environ_key("Idempotency-Key") == "HTTP_IDEMPOTENCY_KEY"
    assert environ_key("content-type") == "CONTENT_TYPE"
    assert environ_key("Content-Length") == "CONTENT_LENGTH"


@pytest.mark.parametrize("authorization, token", [
    ("Bearer a.0.b", "a.0.b"), ("bearer  a.0.b ", "a.0.b"), ("BEARER x", "x"),
    ("Bearer", None), ("Bearer   ", None), ("Basic a.0.b", None), ("", None),
    ("a.0.b", None),
])
def test_a_bearer_token_is_read_from_its_header(authorization: str, token: str | None
                                                ) -> None:
    assert bearer_token(authorization) == token
