"""The app's own Flask class (:class:`service.app.ServiceFlask`): Flask asks whether a view or
hook is a coroutine function before every call; the service's app asks once per function,
and still hands an ``async def`` one to Flask."""

from __future__ import annotations

from inspect import iscoroutinefunction
from typing import Any
from unittest import mock

import pytest
from flask import Flask, request
from flask.testing import FlaskClient
from flask.views import MethodView

from service import app as app_module
from service.app import ServiceFlask


class Checks:
    """Flask's coroutine check, counting what it is asked (``flask.app.iscoroutinefunction``)."""

    def __init__(self) -> None:
        self.asked: list[Any] = []

    def __call__(self, func: Any) -> bool:
        self.asked.append(func)
        return iscoroutinefunction(func)


def test_the_service_app_is_a_service_flask(app: Flask) -> None:
    assert isinstance(app, ServiceFlask)


def test_a_plain_function_is_checked_once(app: Flask) -> None:
    def view() -> str:
        return "x"

    checks = Checks()
    with mock.patch("flask.app.iscoroutinefunction", checks):
        assert app.ensure_sync(view) is view
        assert app.ensure_sync(view) is view
    assert checks.asked == [view]


def test_bound_methods_are_remembered_by_their_function(app: Flask) -> None:
    class Resource(MethodView):
        def get(self) -> str:
            return "x"

    checks = Checks()
    with mock.patch("flask.app.iscoroutinefunction", checks):
        for _ in range(3):  # a MethodView binds its method anew for each request
            method = Resource().get
            assert app.ensure_sync(method) is method
    assert len(checks.asked) == 1


def test_an_async_view_still_goes_to_flask() -> None:
    app = ServiceFlask("async-check")

    async def view() -> str:
        return "x"

    for _ in range(2):  # refused both times: never remembered as plain
        with pytest.raises(RuntimeError, match="async"):  # Flask's: asgiref is not installed
            app.ensure_sync(view)


def test_an_unhashable_callable_is_asked_each_time() -> None:
    class Unhashable:
        __hash__ = None  # type: ignore[assignment]

        def __call__(self) -> str:
            return "x"

    app = ServiceFlask("unhashable")
    view = Unhashable()
    checks = Checks()
    with mock.patch("flask.app.iscoroutinefunction", checks):
        assert app.ensure_sync(view) is view
        assert app.ensure_sync(view) is view
    assert checks.asked == [view, view]
    assert not app._plain


def test_what_it_remembers_is_bounded() -> None:
    app = ServiceFlask("bounded")
    made = []  # kept alive, so that no two share an id
    with mock.patch.object(app_module, "PLAIN_CALLABLES", 8):
        for i in range(20):  # callables made for one request each (after_this_request)
            def hook(response: Any, i: int = i) -> Any:
                return response
            made.append(hook)
            assert app.ensure_sync(hook) is hook
            assert len(app._plain) <= 8


def test_requests_answer_as_before(client: FlaskClient) -> None:
    """Hooks and views run through the remembered functions, request after request."""
    for _ in range(3):
        reply = client.get("/v1/variants")
        assert reply.status_code == 200
        assert reply.headers["X-Request-ID"]


class NoApp:
    """Stands for ``current_app`` where the request must not look it up."""

    def __bool__(self) -> bool:
        raise AssertionError("current_app was read")

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"current_app.{name} was read")


def test_a_request_is_told_its_body_limit_when_it_is_made() -> None:
    app = ServiceFlask("limit")
    app.config["MAX_CONTENT_LENGTH"] = 4096
    with app.test_request_context("/", method="POST", data=b"{}"):
        with mock.patch("flask.wrappers.current_app", NoApp()):
            assert request.max_content_length == 4096
        request.max_content_length = 10  # a view may still set its own (Flask 3.1)
        assert request.max_content_length == 10
    app.config["MAX_CONTENT_LENGTH"] = None
    with app.test_request_context("/"):
        assert request.max_content_length is None


def test_a_body_over_the_limit_is_still_refused(client: FlaskClient) -> None:
    limit = client.application.config["MAX_CONTENT_LENGTH"]
    assert limit
    reply = client.post("/v1/games", data=b"{" + b" " * limit + b"}",
                        content_type="application/json")
    assert reply.status_code == 413
