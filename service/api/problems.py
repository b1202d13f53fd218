"""One error shape everywhere: RFC 9457 ``application/problem+json``.

Views raise :class:`Problem` (or let an engine / store error through); the handlers here turn
every error — webargs validation errors, werkzeug's HTTP errors (404, 405, 413 …), refusals
by the rules engine, store outages — into a problem document. Nothing escapes as an HTML
page or a bare 500. ``title`` and ``detail`` are in the caller's language
(:mod:`service.api.i18n`, ``Content-Language``); ``type`` and ``code`` never change.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from flask import Flask, Response
from werkzeug.exceptions import HTTPException

from service.api import i18n
from service.rules import Violation
from service.rules.errors import N_, Message

PROBLEM_MIMETYPE = "application/problem+json"
TYPE_BASE = "https://rummy-referee.dev/problems/"
"""Base of the ``type`` URIs: ``…/problems/<code or status name>``."""

log = logging.getLogger("service.api")


class Problem(Exception):
    """An error answer: ``status``, ``title``, ``detail`` and extra members.

    ``title`` and ``detail`` are English; ``detail`` may be a :class:`Message` (a template
    and its parameters). Both are translated when the answer is made (:meth:`body`), as are
    the :class:`Message` details of ``reasons``.
    """

    def __init__(self, status: int, title: str, detail: str | Message, *,
                 code: str | None = None, headers: dict[str, str] | None = None,
                 **extra: Any) -> None:
        super().__init__(str(detail))
        self.status = status
        self.title = title
        self.message = detail
        self.detail = str(detail)
        self.code = code
        self.headers = headers or {}
        self.extra = extra

    def body(self) -> dict[str, Any]:
        slug = (self.code or self.title).lower().replace(" ", "-").replace("_", "-")
        doc: dict[str, Any] = {"type": TYPE_BASE + slug, "title": i18n.translate(self.title),
                               "status": self.status, "detail": i18n.translate(self.message)}
        if self.code is not None:
            doc["code"] = self.code
        doc.update(self.extra)
        if "reasons" in doc:
            doc["reasons"] = [{**r, "detail": i18n.translate(r["detail"])}
                              for r in doc["reasons"]]
        if doc.get("errors") and i18n.language() != i18n.DEFAULT:
            self._translate_errors(doc)
        return doc

    def _translate_errors(self, doc: dict[str, Any]) -> None:
        """A 400's per-field messages in the request's language, and its detail too when
        it is only those messages (``field: message; …``, as a bad move or sheet says)."""
        english = doc["errors"]
        doc["errors"] = [{**e, "message": i18n.translate(i18n.field_message(e["message"]))}
                         if isinstance(e.get("message"), str) else e for e in english]
        listed = "; ".join(f"{e.get('field')}: {e.get('message')}" for e in english)
        if self.message == listed:
            doc["detail"] = "; ".join(f"{e.get('field')}: {e.get('message')}"
                                      for e in doc["errors"])

    def response(self) -> Response:
        resp = Response(json.dumps(self.body()), status=self.status, mimetype=PROBLEM_MIMETYPE)
        for name, value in self.headers.items():
            resp.headers[name] = value
        resp.headers["Content-Language"] = i18n.language()
        resp.vary.add("Accept-Language")
        return resp


def bad_request(detail: str | Message, errors: list[dict[str, str]]) -> Problem:
    """400 naming each bad field: ``errors`` = ``[{"field": …, "message": …}]``."""
    return Problem(400, "Bad Request", detail, code="MALFORMED_REQUEST", errors=errors)


def from_violation(v: Violation) -> Problem:
    """422 for a move the rules forbid."""
    extra: dict[str, Any] = {"rule": v.rule}
    if len(v.reasons) > 1:
        extra["reasons"] = [{**r.as_dict(), "detail": r.message} for r in v.reasons]
    return Problem(422, "Illegal move", v.message, code=v.code.value, **extra)


def detail_of(error: Exception) -> str | Message:
    """The detail of an error, as a translatable :class:`Message` where its parts are known
    (the English text is always ``str(error)``): an error raised with a :class:`Message`
    (the referee's, the lobby's, the score sheets') gives it; a plain string is translated
    by catalog look-up (an ``N_``-marked one)."""
    if len(error.args) == 1 and isinstance(error.args[0], Message):
        return error.args[0]
    return str(error)


def flatten_messages(messages: Any, prefix: str = "") -> list[dict[str, str]]:
    """marshmallow's nested error dict as ``[{"field": "a.b.0", "message": …}]``."""
    out: list[dict[str, str]] = []
    if isinstance(messages, dict):
        for key, value in messages.items():
            if key == "_schema":  # marshmallow's key for the object as a whole
                name = prefix or "body"
            else:
                name = f"{prefix}.{key}" if prefix else str(key)
            out.extend(flatten_messages(value, name))
    elif isinstance(messages, list) and all(isinstance(m, str) for m in messages):
        out.extend({"field": prefix or "body", "message": m} for m in messages)
    elif isinstance(messages, list):
        for i, m in enumerate(messages):
            out.extend(flatten_messages(m, f"{prefix}.{i}" if prefix else str(i)))
    else:
        out.append({"field": prefix or "body", "message": str(messages)})
    return out


GENERIC_DETAILS = {
    400: N_("the request could not be understood"),
    404: N_("nothing here: no resource has this path"),
    405: N_("this method is not allowed on this path (see the Allow header)"),
    406: N_("no representation of this resource matches the Accept header"),
    415: N_("the request body's Content-Type is not accepted here"),
}
"""Details for werkzeug's errors that carry only werkzeug's default description."""


def _http_exception(error: HTTPException) -> Response:
    status = error.code or 500
    data = getattr(error, "data", None) or {}
    if status in (400, 422) and ("messages" in data or "errors" in data):
        messages = data.get("messages", data.get("errors"))
        # webargs nests by location ({"json": {...}}, {"query": {...}}); drop that level
        if isinstance(messages, dict) and set(messages) <= {"json", "query", "headers",
                                                            "view_args", "form"}:
            merged: dict[str, Any] = {}
            for part in messages.values():
                if isinstance(part, dict):
                    merged.update(part)
                else:
                    merged.setdefault("body", part)
            messages = merged
        errors = flatten_messages(messages)
        fields = ", ".join(sorted({e["field"] for e in errors}))
        return bad_request(Message(N_("invalid request: {fields}"), {"fields": fields}),
                           errors).response()
    title = error.name
    detail: str | Message = error.description or title
    if len(error.args) == 1 and isinstance(error.args[0], Message):
        detail = error.args[0]  # ours, with its template (a request read too slowly: 408)
    elif detail == type(error).description and status in GENERIC_DETAILS:
        detail = Message(GENERIC_DETAILS[status])  # werkzeug's own text: ours, translated
    if status == 413:
        detail = Message(N_("the request body is larger than this server accepts"))
    problem = Problem(status, title, detail)
    if status == 405 and error.get_response().headers.get("Allow"):
        problem.headers["Allow"] = error.get_response().headers["Allow"]
    return problem.response()


def register(app: Flask) -> None:
    """Install the problem+json handlers on ``app`` (and their languages, Flask-Babel)."""
    i18n.init_app(app)
    app.register_error_handler(Problem, lambda p: p.response())
    app.register_error_handler(Violation, lambda v: from_violation(v).response())
    app.register_error_handler(HTTPException, _http_exception)

    def _unexpected(error: Exception) -> Response:
        log.exception("unhandled error", exc_info=error)
        return Problem(500, "Internal Server Error",
                       "the referee hit an unexpected error; nothing was changed").response()

    app.register_error_handler(Exception, _unexpected)
