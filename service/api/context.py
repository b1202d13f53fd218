"""The request being served and its ``g``, themselves rather than Flask's proxies.

``flask.request`` and ``flask.g`` are proxies: each attribute read through one looks the
request up again in its context variable (about 0.6 µs on the 2-CPU machine of
bench/README.md, against a few hundredths for the attribute itself). A hook or helper that
reads several of them on every request (the rate limits, the moves endpoint's argument
loaders) takes the object once from here.
"""

from __future__ import annotations

from typing import Any

from flask import Request, g, request


def current_request() -> Request:
    """The request being served (outside one: Flask's ``RuntimeError``)."""
    req: Request = request._get_current_object()  # type: ignore[attr-defined]
    return req


def current_g() -> Any:
    """The ``g`` of the request being served (outside one: Flask's ``RuntimeError``)."""
    return g._get_current_object()


def environ_key(name: str) -> str:
    """Where the WSGI environment keeps the request header ``name`` (where werkzeug's
    ``EnvironHeaders`` reads it)."""
    key = name.upper().replace("-", "_")
    return key if key in _UNPREFIXED else f"HTTP_{key}"


def header(req: Request, name: str, default: str = "") -> str:
    """``req.headers.get(name, default)``, read from the WSGI environment where werkzeug's
    headers read it, without their lookup (a ``KeyError`` raised and caught for each
    header not sent)."""
    value: str | None = req.environ.get(environ_key(name))
    return default if value is None else value


def bearer_token(authorization: str) -> str | None:
    """The token of an ``Authorization`` value of the ``Bearer`` scheme (any case), None for
    any other value or an empty token."""
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


_UNPREFIXED = frozenset({"CONTENT_TYPE", "CONTENT_LENGTH"})
"""The two headers WSGI keeps without the ``HTTP_`` prefix (werkzeug's ``EnvironHeaders``)."""
