"""A fast path for the arguments of ``POST …/moves``, the hot endpoint.

flask-smorest parses a move's body, headers and query string with marshmallow schemas
(:class:`~service.api.schemas.MoveSchema`, ``MoveHeadersSchema``, ``MoveQuerySchema``),
which also document them in the OpenAPI document. The loaders here answer the common case
without marshmallow's machinery: they return what the schema would load only when they can
tell the input is valid, and ``None`` otherwise — then the schema parses it as before, so
every error, and every input that needs normalizing (``"10H"``, ``{"card": "JK", "as":
…}``, ``"dry_run": "true"``), gets exactly the schema's answer.

Nothing here repeats the contract: each check is derived, once, from the schemas' declared
fields and validators (:func:`_value_check`): a field of a kind or with a validator it does
not know, or a schema with hooks of its own (a ``validates_schema`` …), sends the input to
the schema path. A move body that passes is what the move
type's schema would load unchanged, so it becomes the engine's move by that schema's own
:meth:`~service.api.schemas.TypedMoveSchema.make`.
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
from marshmallow import fields, validate
from marshmallow.decorators import POST_LOAD
from webargs.core import is_json
from werkzeug.exceptions import BadRequest, ClientDisconnected
from werkzeug.utils import cached_property

from service.api import schemas
from service.api.context import environ_key
from service.rules.cards import JOKER, standard_deck
from service.rules.errors import N_, Message
from service.rules.moves import Move


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

Check = Callable[[Any], bool]
"""True when a field's schema certainly loads the value, unchanged."""


def _never(value: Any) -> bool:
    return False


def _validator_check(validator: Any) -> Check | None:
    """What a marshmallow validator accepts, for the validators the schemas use."""
    if isinstance(validator, validate.Length) and validator.equal is None:
        low = 0 if validator.min is None else validator.min
        high = validator.max
        return lambda v: low <= len(v) and (high is None or len(v) <= high)
    if isinstance(validator, validate.OneOf):
        choices = frozenset(validator.choices)
        return lambda v: v in choices
    return None


def _value_check(field: fields.Field[Any]) -> Check:
    """A check of the values ``field`` loads as they are (canonical card codes, JSON
    booleans, strings and lists within its validators, nested strict objects)."""
    kind: Check
    if isinstance(field, schemas.CardCode | schemas.MeldCard):  # a code; a wild: the schema
        kind = lambda v: type(v) is str and v in CARDS  # noqa: E731
    elif isinstance(field, schemas.StrictBoolean):
        kind = lambda v: type(v) is bool  # noqa: E731
    elif type(field) is fields.String:
        kind = lambda v: type(v) is str  # noqa: E731
    elif type(field) is fields.List:
        inner = _value_check(field.inner)
        kind = lambda v: type(v) is list and all(inner(x) for x in v)  # noqa: E731
    elif type(field) is fields.Nested and isinstance(field.schema, schemas.StrictSchema):
        kind = _object_check(field.schema)
    else:
        return _never
    checks = [_validator_check(v) for v in field.validators]
    if None in checks:
        return _never
    if not checks:
        return kind
    return lambda v: kind(v) and all(check(v) for check in checks)  # type: ignore[misc]


def _hooks(schema: ma.Schema) -> set[str]:
    """The kinds of marshmallow hooks ``schema``'s class declares (``post_load`` …)."""
    return {tag for name in dir(type(schema))
            for tag in getattr(getattr(type(schema), name), "__marshmallow_hook__", None) or ()}


def _object_check(schema: ma.Schema, *, makes: bool = False) -> Check:
    """A check of the objects a strict ``schema`` (unknown fields refused, no defaults, no
    hooks but, if it ``makes`` a value of what it loaded, a ``post_load``) loads as they
    are: its own keys only, the required ones all there, each value passing its field's
    check."""
    loaded = {field.data_key or name: field for name, field in schema.load_fields.items()}
    allowed_hooks = {POST_LOAD} if makes else set()
    if (schema.unknown != ma.RAISE or not _hooks(schema) <= allowed_hooks
            or any(f.load_default is not ma.missing for f in loaded.values())):
        return _never
    checks = {key: _value_check(field) for key, field in loaded.items()}
    allowed = checks.keys()
    required = frozenset(key for key, field in loaded.items() if field.required)

    def check(value: Any) -> bool:
        return (type(value) is dict and value.keys() <= allowed and required <= value.keys()
                and all(checks[key](v) for key, v in value.items()))
    return check


MOVES: dict[str, tuple[Check, Callable[[dict[str, Any]], Move]]] = {
    kind: (_object_check(schema, makes=True), schema.make)
    for kind, schema in schemas.MoveSchema().choices.items()
    if isinstance(schema, schemas.TypedMoveSchema)}
"""Each move type's check and its schema's maker of the engine's move."""


def valid_move(data: Any) -> bool:
    """True when ``MoveSchema().load(data)`` certainly succeeds, loading ``data`` as it is."""
    if type(data) is not dict:
        return False
    kind = data.get("type")
    if type(kind) is not str or kind not in MOVES:
        return False
    return MOVES[kind][0](data)


def _unread(kind: type[BadRequest], message: Message) -> BadRequest:
    """A 400 for a body that could not be read, its detail ``message`` (translated: the
    problem handler takes a :class:`Message` from the error's ``args``)."""
    error = kind(str(message))
    error.args = (message,)
    return error


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
                raise _unread(BadRequest, Message(N_("the body could not be read: {error}"),
                                                  {"error": str(exc)})) from None
        else:
            data = self.environ["wsgi.input"].read(length) if length else b""
            if len(data) != length:
                raise _unread(ClientDisconnected, Message(N_(
                    "the body ended after {read} of the {length} bytes its Content-Length "
                    "declares"), {"read": len(data), "length": length}))
        return io.BytesIO(data)

    def _werkzeug_stream(self) -> IO[bytes]:
        stream: IO[bytes] = flask.Request.stream.fget(self)  # type: ignore[attr-defined]
        return stream


def move_body(req: Request) -> dict[str, Any] | None:
    """The move body, when the schema would load it unchanged; else None (the schema
    parses it)."""
    if not is_json(req.mimetype):
        return None
    raw = req.get_data(cache=True)
    data = _loads(raw)
    if not valid_move(data):
        return None
    if raw.count(b":") != _names(data):
        return None  # a key given twice (or a colon in a string): the schema path looks
    move: dict[str, Any] = data
    return move


def move_of(data: Any) -> Move | None:
    """``MoveSchema().load(data)`` (the engine's move) when :func:`valid_move`, else None."""
    return MOVES[data["type"]][1](data) if valid_move(data) else None


def load_move(req: Request) -> Move | None:
    """``MoveSchema``'s load of the body (the engine's move), or None to let the schema
    parse it."""
    data = move_body(req)
    return None if data is None else MOVES[data["type"]][1](data)


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


def _flat_loader(schema: ma.Schema, location: str) -> Callable[[Request], Any]:
    """A loader of a flat ``schema`` (``location``: ``"headers"`` or ``"query"``): the
    defaults of the keys not given, and a given value as it is when its field is a
    ``String`` without a validator (what it loads it as); any other key given, None (the
    schema parses them)."""
    loaded = {field.data_key or name: (name, field)
              for name, field in schema.load_fields.items()}
    defaults = {name: field.load_default for name, field in loaded.values()
                if field.load_default is not ma.missing}
    plain = frozenset(key for key, (_, field) in loaded.items()
                      if type(field) is fields.String and not field.validators)
    headers = location == "headers"
    # each key, its field's name, and where it is read: a query's key in the query, a
    # header's where werkzeug's headers read it, in the WSGI environment
    sources = [(key, name, environ_key(key) if headers else key)
               for key, (name, _) in loaded.items()]

    def load(req: Request) -> dict[str, Any] | None:
        if not headers and not req.query_string:
            return dict(defaults)
        given: Any = req.environ if headers else req.args
        out = dict(defaults)
        for key, name, source in sources:
            value = given.get(source)
            if value is not None:
                if key not in plain:
                    return None
                out[name] = value
        return out
    return load


LOADERS: dict[tuple[type[ma.Schema], str], Callable[[Request], Any]] = {
    (schemas.MoveSchema, "json"): load_move,
    (schemas.MoveHeadersSchema, "headers"): _flat_loader(schemas.MoveHeadersSchema(),
                                                         "headers"),
    (schemas.MoveQuerySchema, "query"): _flat_loader(schemas.MoveQuerySchema(), "query"),
}
"""Fast loaders by (schema class, location) as the routes declare them."""
