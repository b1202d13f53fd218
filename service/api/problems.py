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
import math
from collections.abc import Iterator, Mapping
from typing import Any

from flask import Flask, Response, has_request_context, request
from werkzeug.exceptions import HTTPException

from service.api import i18n
from service.rules import Violation
from service.rules.errors import N_, Message

PROBLEM_MIMETYPE = "application/problem+json"
TYPE_BASE = "https://rummy-referee.dev/problems/"
"""Base of the ``type`` URIs: ``…/problems/<code or status name>``."""

log = logging.getLogger("service.api")

QUOTE_CHARS = 200
"""The longest quote of an input a problem gives (``errors[].value``): a longer string, or
a list or object whose JSON text is longer, is quoted as a string of its first
``QUOTE_CHARS`` characters (of its JSON text) followed by ``…``."""

UNQUOTED = frozenset({"authorization", "x-api-key", "ticket"})
"""Inputs never quoted back, by name (a header's in lower case, or a query parameter's):
credentials, which are not to be copied into answers that clients and proxies may log."""


class _Absent:
    """The marker of an input a request did not send (a missing field is not quoted)."""


ABSENT = _Absent()


def _json_text(value: Any, budget: int) -> tuple[str, bool]:
    """``value``'s compact JSON text, stopping soon after it reaches ``budget`` characters
    (a nested value recurses one level per character written, so a deeply nested input
    stays within Python's recursion limit), and whether JSON can carry ``value`` as it is
    (False for a float that is not finite, which Python's JSON reader accepts as ``NaN`` or
    ``Infinity`` but no JSON text may hold)."""
    parts: list[str] = []
    size = 0
    plain = True

    def emit(text: str) -> None:
        nonlocal size
        parts.append(text)
        size += len(text)

    def walk(item: Any) -> None:
        nonlocal plain
        if isinstance(item, Mapping):
            emit("{")
            for index, (key, inner) in enumerate(item.items()):
                if size > budget:
                    return
                emit(("," if index else "") + json.dumps(str(key)[:budget]) + ":")
                walk(inner)
            emit("}")
        elif isinstance(item, list | tuple):
            emit("[")
            for index, inner in enumerate(item):
                if size > budget:
                    return
                if index:
                    emit(",")
                walk(inner)
            emit("]")
        elif isinstance(item, float) and not math.isfinite(item):
            plain = False
            emit(json.dumps(item))  # NaN, Infinity, -Infinity
        elif isinstance(item, str):
            emit(json.dumps(item[:budget]))
        else:
            emit(json.dumps(item))

    walk(value)
    return "".join(parts), plain


def quote(value: Any) -> Any:
    """An input as a problem quotes it (``errors[].value``): as it was sent — a string, a
    number, true, false, null, or a list or object as JSON carries it — when short; else a
    string, the beginning of its text (:data:`QUOTE_CHARS`) and ``…``."""
    if isinstance(value, str):
        return value if len(value) <= QUOTE_CHARS else value[:QUOTE_CHARS] + "…"
    if value is None or isinstance(value, bool):
        return value
    text, plain = _json_text(value, QUOTE_CHARS)
    if len(text) > QUOTE_CHARS:
        return text[:QUOTE_CHARS] + "…"
    return value if plain else text


def input_at(source: Any, key: Any) -> Any:
    """The part of an input ``source`` (parsed JSON, or a mapping of the request's query
    parameters or headers) under ``key`` (an object's key, or a list's index as an int or
    digits), or :data:`ABSENT`."""
    if isinstance(source, Mapping):
        return source.get(key, ABSENT) if isinstance(key, str) else ABSENT
    if isinstance(source, list) and (isinstance(key, int) or (
            isinstance(key, str) and key.isascii() and key.isdigit())):
        index = int(key)
        return source[index] if 0 <= index < len(source) else ABSENT
    return ABSENT


def input_at_path(source: Any, field: str) -> Any:
    """The part of ``source`` a dotted ``field`` of a problem names (``melds.0.cards.2``),
    or :data:`ABSENT`."""
    node = source
    for part in field.split("."):
        node = input_at(node, part)
        if node is ABSENT:
            break
    return node


def _entry(field: str, message: Any, sent: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"field": field, "message": message}
    if sent is not ABSENT:
        entry["value"] = quote(sent)
    return entry


class Problem(Exception):
    """An error answer: ``status``, ``title``, ``detail`` and extra members.

    ``title`` and ``detail`` are English; ``detail`` may be a :class:`Message` (a template
    and its parameters). Both are translated when the answer is made (:meth:`body`), as are
    the :class:`Message` details of ``reasons``. The bad fields of ``errors`` quote what the
    request sent (``value``, :func:`quote_sent`) unless ``quoted`` says they already do.
    """

    def __init__(self, status: int, title: str, detail: str | Message, *,
                 code: str | None = None, headers: dict[str, str] | None = None,
                 quoted: bool = False, **extra: Any) -> None:
        super().__init__(str(detail))
        self.status = status
        self.title = title
        self.message = detail
        self.detail = str(detail)
        self.code = code
        self.headers = headers or {}
        self.quoted = quoted
        self.extra = extra

    def body(self) -> dict[str, Any]:
        slug = (self.code or self.title).lower().replace(" ", "-").replace("_", "-")
        doc: dict[str, Any] = {"type": TYPE_BASE + slug, "title": i18n.translate(self.title),
                               "status": self.status, "detail": i18n.translate(self.message)}
        if self.code is not None:
            doc["code"] = self.code
        doc.update(self.extra)
        if doc.get("errors") and not self.quoted:
            doc["errors"] = quote_sent(doc["errors"])
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


def bad_request(detail: str | Message, errors: list[dict[str, Any]], *,
                quoted: bool = False) -> Problem:
    """400 naming each bad field: ``errors`` = ``[{"field": …, "message": …}]``, each
    quoting what the request sent there (``value``; ``quoted``: they already do)."""
    return Problem(400, "Bad Request", detail, code="MALFORMED_REQUEST", errors=errors,
                   quoted=quoted)


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


def flatten_messages(messages: Any, prefix: str = "", sent: Any = ABSENT
                     ) -> list[dict[str, Any]]:
    """marshmallow's nested error dict as ``[{"field": "a.b.0", "message": …, "value":
    …}]``, each field's ``value`` its part of ``sent`` (the input the messages are about),
    quoted (:func:`quote`), where it has one."""
    out: list[dict[str, Any]] = []
    if isinstance(messages, dict):
        for key, value in messages.items():
            if key == "_schema":  # marshmallow's key for the object as a whole
                name, part = prefix or "body", sent
            else:
                name = f"{prefix}.{key}" if prefix else str(key)
                part = input_at(sent, key)
            out.extend(flatten_messages(value, name, part))
    elif isinstance(messages, list) and all(isinstance(m, str) for m in messages):
        out.extend(_entry(prefix or "body", m, sent) for m in messages)
    elif isinstance(messages, list):
        for i, m in enumerate(messages):
            out.extend(flatten_messages(m, f"{prefix}.{i}" if prefix else str(i),
                                        input_at(sent, i)))
    else:
        out.append(_entry(prefix or "body", str(messages), sent))
    return out


class _Repeated(list[Any]):
    """The values of a key that one object of a body gave more than once, in their order
    (quoted as a list of them: the body is refused for it)."""


def _keep_repeated(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key not in out:
            out[key] = value
        elif isinstance(out[key], _Repeated):
            out[key].append(value)
        else:
            out[key] = _Repeated([out[key], value])
    return out


def _body_sent() -> Any:
    """The request's JSON body as sent (parsed; a key given twice in an object, its
    values), its text where it is no JSON (quoted by the ``body`` field of a ``400`` for
    malformed JSON), or :data:`ABSENT` without a body."""
    raw = request.get_data(cache=True)
    if not raw:
        return ABSENT
    try:
        return json.loads(raw, object_pairs_hook=_keep_repeated)
    except (ValueError, RecursionError):
        return raw.decode("utf-8", "backslashreplace")


class _Headers(Mapping[str, str]):
    """The request's headers, found by name in any case as werkzeug finds them (a field's
    ``data_key`` need not match the case a client sent), the credentials
    (:data:`UNQUOTED`) left out."""

    def __getitem__(self, name: str) -> str:
        if name.lower() in UNQUOTED:
            raise KeyError(name)
        return request.headers[name]

    def __iter__(self) -> Iterator[str]:
        return (name for name, _ in request.headers.items() if name.lower() not in UNQUOTED)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _location_sent(location: str) -> Any:
    """What the request sent in a webargs ``location``, to quote its bad fields from."""
    if location == "json":
        return _body_sent()
    if location == "query":
        return {key: values[0] if len(values) == 1 else values
                for key, values in request.args.lists() if key.lower() not in UNQUOTED}
    if location == "headers":
        return _Headers()
    if location == "view_args":
        return request.view_args or {}
    return ABSENT


def _webargs_errors(messages: Any) -> list[dict[str, Any]]:
    """webargs' messages, nested by location (``{"json": {...}, "query": {...}}``), as one
    list of bad fields, each quoting what its location sent."""
    if not (isinstance(messages, dict) and set(messages) <= {"json", "query", "headers",
                                                             "view_args", "form"}):
        return flatten_messages(messages)
    errors: list[dict[str, Any]] = []
    for location, part in messages.items():
        sent = _location_sent(location)
        if isinstance(part, dict):
            errors.extend(flatten_messages(part, "", sent))
        else:  # the body as a whole (malformed JSON): quoted as it was sent
            errors.extend(flatten_messages(part, "body", sent))
    return errors


def quote_sent(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``errors`` (``[{"field", "message"}]``, of a refusal made after the request was
    parsed: a knob, a seat, a hand of a sheet, a header read by the view) with each field's
    ``value`` as the request sent it, found by the field's path in the JSON body, else
    among the path's parameters, else among the headers (an entry that already quotes its
    input is kept as it is)."""
    if not has_request_context() or all("value" in e for e in errors):
        return errors
    # a body that is no JSON is its text, in which no field is found
    sources = [_location_sent(location) for location in ("json", "view_args", "headers")]
    out = []
    for entry in errors:
        field = entry.get("field")
        sent: Any = ABSENT
        if "value" not in entry and isinstance(field, str):
            sent = next((found for source in sources
                         if (found := input_at_path(source, field)) is not ABSENT), ABSENT)
        out.append(entry if sent is ABSENT else {**entry, "value": quote(sent)})
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
        errors = _webargs_errors(data.get("messages", data.get("errors")))
        fields = ", ".join(sorted({e["field"] for e in errors}))
        return bad_request(Message(N_("invalid request: {fields}"), {"fields": fields}),
                           errors, quoted=True).response()
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
