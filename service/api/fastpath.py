"""A fast path for the arguments of ``POST …/moves``, the hot endpoint.

flask-smorest parses a move's body, headers and query string with marshmallow schemas
(:class:`~service.api.schemas.MoveSchema`, ``MoveHeadersSchema``, ``MoveQuerySchema``),
which also document them in the OpenAPI document. The loaders here answer the common case
without marshmallow: they return what the schema would load only when they can tell the
input is valid (canonical card codes, the fields a move type allows, lengths and choices
within the schema's limits), and ``None`` otherwise — then the schema parses it as before,
so every error, and every input that needs normalizing (``"10H"``, ``{"card": "JK", "as":
…}``, ``"dry_run": "true"``), gets exactly the schema's answer. The documentation is
untouched: the decorators stay as they are.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import IO, Any

import flask
import marshmallow as ma
import orjson
from flask import Request
from gunicorn.http.errors import ParseException
from webargs.core import is_json
from werkzeug.exceptions import BadRequest, ClientDisconnected
from werkzeug.utils import cached_property

from service.api import schemas
from service.rules.cards import JOKER, standard_deck


def _loads(raw: bytes) -> Any:
    """The body's JSON, read by orjson (several times faster than the json module). orjson
    reads no more than json does (it refuses NaN, integers beyond 64 bits …); a body it
    refuses is no move for the fast path, and the schema path reads it as before."""
    try:
        return orjson.loads(raw)
    except ValueError:
        return None


CARDS = frozenset([*standard_deck(), JOKER])
"""Canonical card codes: loaded by ``CardCode`` as they are."""

_ALLOWED = {kind: frozenset(fields) for kind, fields in schemas._ALLOWED_BY_TYPE.items()}
_REQUIRED = {kind: frozenset(fields) for kind, fields in schemas._REQUIRED_BY_TYPE.items()}


def _meld_id(value: Any) -> bool:
    return type(value) is str and 1 <= len(value) <= 20


def _cards(value: Any) -> bool:
    return (type(value) is list and 1 <= len(value) <= 30
            and all(type(c) is str and c in CARDS for c in value))


def _melds(value: Any) -> bool:
    return (type(value) is list and 1 <= len(value) <= 12
            and all(type(m) is dict and m.keys() == {"cards"} and _cards(m["cards"])
                    for m in value))


_FIELD_CHECKS: dict[str, Callable[[Any], bool]] = {
    "source": lambda v: v in ("stock", "discard") and type(v) is str,
    "card": lambda v: type(v) is str and v in CARDS,
    "meld_id": _meld_id,
    "cards": _cards,
    "end": lambda v: v in ("low", "high") and type(v) is str,
    "announce": lambda v: type(v) is bool,
    "melds": _melds,
}
"""Fields whose common valid values load unchanged; ``lay_offs`` and ``take`` always go
through the schema."""


def valid_move(data: Any) -> bool:
    """True when ``MoveSchema().load(data)`` certainly succeeds and returns ``data``."""
    if type(data) is not dict:
        return False
    kind = data.get("type")
    if type(kind) is not str or kind not in _ALLOWED:
        return False
    names = data.keys() - {"type"}
    if not names <= _ALLOWED[kind] or not _REQUIRED[kind] <= names:
        return False
    for name in names:
        check = _FIELD_CHECKS.get(name)
        if check is None or not check(data[name]):
            return False
    return True


class BodyRequest(flask.Request):
    """Flask's request, reading a body of a declared length in one call, and all of it.

    gunicorn marks its input stream as ending where the body ends, so werkzeug reads it to
    its end in a loop of chunks and never compares what came with the ``Content-Length``: a
    body cut short of its length (the client stopped sending) was read as complete, and a
    move in it applied. Here a request with a ``Content-Length`` within
    ``MAX_CONTENT_LENGTH`` (every move a client sends) is read in one call of that many
    bytes, and one that ends sooner is refused as werkzeug refuses a client that went away
    (``ClientDisconnected``, 400), changing nothing. A body without a length (chunked) is
    read through werkzeug's stream, within the limit (413), and a malformed chunk is a 400
    too (gunicorn's chunked reader raises its own parse error, which reached the app as a
    500). Over the limit by its length, werkzeug's 413 as before.
    Measured with gunicorn's own body reader, reading a move takes 8 µs instead of 32."""

    @cached_property
    def stream(self) -> IO[bytes]:
        length, limit = self.content_length, self.max_content_length
        if self.shallow or (length is not None and limit is not None and length > limit):
            return self._werkzeug_stream()  # shallow: werkzeug's error; too long: its 413
        if length is None:  # chunked, or no body: read to its end, within the limit
            try:
                data = self._werkzeug_stream().read()
            except ParseException as exc:  # gunicorn's chunked reader: a malformed chunk
                raise BadRequest(f"the body could not be read: {exc}") from None
        else:
            data = self.environ["wsgi.input"].read(length) if length else b""
            if len(data) != length:
                raise ClientDisconnected(f"the body ended after {len(data)} of the {length} "
                                         "bytes its Content-Length declares")
        return io.BytesIO(data)

    def _werkzeug_stream(self) -> IO[bytes]:
        stream: IO[bytes] = flask.Request.stream.fget(self)  # type: ignore[attr-defined]
        return stream


def move_body(req: Request) -> dict[str, Any] | None:
    """The loaded move body, or None to let the schema parse it."""
    if not is_json(req.mimetype):
        return None
    raw = req.get_data(cache=True)
    try:
        data = _loads(raw)
    except ValueError:  # not JSON, or not JSON orjson reads: the schema path says why
        return None
    if not valid_move(data):
        return None
    if raw.count(b":") != _names(data):
        return None  # a key given twice (or a colon in a string): the schema path looks
    move: dict[str, Any] = data
    return move


def _names(value: Any) -> int:
    """How many keys the objects in ``value`` hold. A body's colons outside strings are
    one per key it gives, so fewer keys than colons means a key given twice (orjson keeps
    the last) or a colon within a string. Called on a :func:`valid_move` only, which is
    four levels deep at most: orjson reads 1,024 levels, and counting those recursed past
    Python's limit (``RecursionError``, a 500, for bodies 500 to 1,023 levels deep)."""
    if type(value) is dict:
        return len(value) + sum(_names(v) for v in value.values())
    if type(value) is list:
        return sum(_names(v) for v in value)
    return 0


def move_headers(req: Request) -> dict[str, Any] | None:
    """``MoveHeadersSchema``'s load when there is no ``Idempotency-Key`` to validate."""
    headers = req.headers
    if "Idempotency-Key" in headers:
        return None
    if_match = headers.get("If-Match")
    return {} if if_match is None else {"if_match": if_match}


def move_query(req: Request) -> dict[str, Any] | None:
    """``MoveQuerySchema``'s load when ``dry_run`` is not given."""
    if not req.query_string:
        return {"dry_run": False}
    return None if "dry_run" in req.args or "include" in req.args else {"dry_run": False}


LOADERS: dict[tuple[type[ma.Schema], str], Callable[[Request], dict[str, Any] | None]] = {
    (schemas.MoveSchema, "json"): move_body,
    (schemas.MoveHeadersSchema, "headers"): move_headers,
    (schemas.MoveQuerySchema, "query"): move_query,
}
"""Fast loaders by (schema class, location) as the routes declare them."""
