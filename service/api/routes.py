"""HTTP routes: parse, authenticate, call the referee, answer (docs/api.md).

Views are thin: schemas parse and validate bodies (400 names each bad field), the
:class:`~service.referee.Referee` does the work, errors become problem+json in
:mod:`service.api.problems`.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from typing import Any

import marshmallow as ma
from flask import Request, Response, current_app, request
from flask.views import MethodView
from flask_smorest import Blueprint
from webargs import core as webargs_core
from webargs.flaskparser import FlaskParser
from webargs.flaskparser import abort as webargs_abort

from service.api import fastpath, i18n, observe, schemas, security, streams
from service.api.context import bearer_token, current_request, header
from service.api.problems import PROBLEM_MIMETYPE, Problem
from service.numbers import natural
from service.referee import Answer, Referee
from service.referee.documents import token_hash
from service.rules import Move, RulesError, SetupError, Violation, move_to_dict
from service.rules.checks import MissingFact, check_one_meld, score_one_hand
from service.rules.errors import N_, Message
from service.rules.moves import kind_of
from service.rules.ruleset import default_rules
from service.rules.variants import VARIANTS
from service.store import StoreError


class DuplicateKey(ValueError):
    """A JSON object names ``key`` twice."""

    def __init__(self, key: str) -> None:
        super().__init__(f"{key!r} given more than once in one object")
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return found


def strict_json(body: bytes) -> Any:
    """The body's JSON, refusing an object that names a key twice: RFC 8259 leaves what
    such an object means to its reader (most keep the last value, some the first), so a
    client's library, a proxy and this service could each read a different move from one
    body (``{"type": "discard", "card": "5H", "card": "KS"}``)."""
    return json.loads(body.decode("utf-8"), object_pairs_hook=_unique_keys)


class Parser(FlaskParser):
    """webargs parser answering 400 (not 422) for a malformed request.

    webargs instantiates a schema given as a class on every request; this parser makes one
    instance per class and reuses it (marshmallow schemas keep no state between loads).
    """

    DEFAULT_VALIDATION_STATUS = 400

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._schemas: dict[type[ma.Schema], ma.Schema] = {}

    def _get_schema(self, argmap: Any, req: Any) -> ma.Schema:
        if isinstance(argmap, type) and issubclass(argmap, ma.Schema):
            schema = self._schemas.get(argmap)
            if schema is None:
                schema = self._schemas.setdefault(argmap, argmap())
            return schema
        made: ma.Schema = super()._get_schema(argmap, req)
        return made

    def load_json(self, req: Any, schema: ma.Schema) -> Any:
        """webargs' JSON body, and a body nested too deeply for Python's JSON decoder
        (about a thousand levels: it raises ``RecursionError``) or holding an integer of
        more digits than Python converts (4,300: ``sys.get_int_max_str_digits()``; a
        ``ValueError`` that is no ``JSONDecodeError``) refused as malformed like any other,
        instead of an internal error.

        The body's ``Content-Type``: JSON is the only kind any endpoint takes. A body sent
        with no ``Content-Type`` at all is read as JSON (RFC 9110 section 8.3 lets the
        recipient look at the data). An object that names a key twice is refused
        (:func:`strict_json`). One declared as another kind (a form, plain text:
        what ``curl -d`` sends unless told ``-H 'Content-Type: application/json'``) is
        refused with 415, which names what to send; webargs would read no body from it and
        report every required field missing."""
        mimetype = req.mimetype
        if mimetype and not webargs_core.is_json(mimetype):
            raise Problem(415, "Unsupported Media Type", Message(
                N_("the body must be JSON, sent with Content-Type: application/json (this "
                   "request's Content-Type is {content_type})"), {"content_type": mimetype}),
                headers={"Accept-Post": "application/json"})
        try:
            body = req.get_data(cache=True)
            if body:
                try:
                    return strict_json(body)
                except DuplicateKey as exc:
                    webargs_abort(400, exc=exc, messages={"json": {exc.key: [
                        "Given more than once in one object."]}})
                except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                    return self._handle_invalid_json_error(exc, req)
                except ValueError as exc:  # an integer too long to convert
                    return self._handle_invalid_json_error(
                        json.JSONDecodeError(str(exc), "", 0), req)
            return super().load_json(req, schema)
        except RecursionError:
            self._handle_invalid_json_error(
                json.JSONDecodeError("nested too deeply", "[", 0), req)

    def parse(self, argmap: Any, req: Any = None, *, location: str | None = None,
              **kwargs: Any) -> Any:
        """The fast path of :mod:`service.api.fastpath` first (``POST …/moves``: the
        schema's own answer, derived from its fields, for the common valid arguments), else
        the schema."""
        fast = fastpath.LOADERS.get((argmap, location or ""))
        if fast is not None:
            data = fast(req if req is not None else current_request())
            if data is not None:
                return data
        return super().parse(argmap, req, location=location, **kwargs)


def _documents_only(decorator: Any) -> Any:
    """A flask-smorest decorator applied for its documentation only: the view keeps the
    ``_apidoc`` it adds, without the pass-through wrapper it would add around each call."""
    def apply(view: Any) -> Any:
        view._apidoc = decorator(view)._apidoc
        return view
    return apply


Arguments = tuple[Any, str, bool, dict[str, Any]]
"""One ``arguments`` of a view: its schema, location, whether it is handed over as keyword
arguments, and the rest of what webargs' ``parse`` is told (``unknown``, ``validate`` …)."""


def _parse_arguments(view: Callable[..., Any], parser: FlaskParser) -> Callable[..., Any]:
    """``view`` with its arguments (``view._arguments``, filled by each ``arguments``
    decorator, the outermost first) parsed by ``parser`` in one wrapper: what webargs'
    ``use_args`` wrappers, one per schema, do in turn (the same ``parse`` calls in the same
    order, so the same errors; a parse as keyword arguments updates the view's keyword
    arguments, any other is passed after its positional ones)."""
    arguments: list[Arguments] = []

    @functools.wraps(view)
    def parsing(*args: Any, **kwargs: Any) -> Any:
        for schema, location, as_kwargs, options in arguments:
            parsed = parser.parse(schema, location=location, **options)
            if as_kwargs:
                kwargs.update(parsed)
            else:
                args += (parsed,)
        return view(*args, **kwargs)

    parsing._arguments = arguments  # type: ignore[attr-defined]
    return parsing


class ApiBlueprint(Blueprint):
    """flask-smorest's Blueprint whose ``doc``, ``response`` and ``alt_response`` only
    document, and whose ``arguments`` document and parse in one wrapper per view.

    Every view here returns a ``Response`` itself (already serialized), which the runtime
    wrappers of those three would hand back unchanged: on the moves endpoint, eleven of
    them (each a ``current_app.ensure_sync`` call and a coroutine check) took 50 µs per
    request, measured on the shared 2-CPU machine the figures in bench/README.md come from
    (documentation only: 0.04 µs), about 6% of the 0.8 ms of CPU a move costs there. Each
    ``arguments`` adds two wrappers more (webargs' ``use_args`` and flask-smorest's own);
    one wrapper parses all of a view's (the moves endpoint has three: headers, query and
    body)."""

    ARGUMENTS_PARSER = Parser()

    @staticmethod
    def doc(**kwargs: Any) -> Any:
        return _documents_only(Blueprint.doc(**kwargs))

    def response(self, *args: Any, **kwargs: Any) -> Any:
        return _documents_only(super().response(*args, **kwargs))

    def alt_response(self, *args: Any, **kwargs: Any) -> Any:
        return _documents_only(super().alt_response(*args, **kwargs))

    def arguments(self, schema: Any, *, location: str = "json", content_type: Any = None,
                  required: bool = True, description: Any = None, example: Any = None,
                  examples: Any = None, **kwargs: Any) -> Any:
        """flask-smorest's ``arguments`` (same parameters): documented as it documents
        them, parsed with the other ``arguments`` of the view in one wrapper."""
        document = _documents_only(super().arguments(
            schema, location=location, content_type=content_type, required=required,
            description=description, example=example, examples=examples, **kwargs))
        options = dict(kwargs)
        as_kwargs = bool(options.pop("as_kwargs", False))
        if "arg_name" in options:
            raise TypeError("arguments(arg_name=…) is not supported here: as_kwargs or none")

        def apply(view: Any) -> Any:
            if not hasattr(view, "_arguments"):
                view = _parse_arguments(view, self.ARGUMENTS_PARSER)
            view = document(view)
            view._arguments.insert(0, (schema, location, as_kwargs, options))
            return view
        return apply


blp = ApiBlueprint("games", __name__, url_prefix="/v1",
                   description="Games, moves and variants (docs/api.md).")

SEAT_ONLY = {"games.Me", "games.Moves", "games.LegalMoves"}


@blp.before_request
def _seat_token_first() -> None:
    """A seat endpoint without a seat token is a 401 before anything else is looked at."""
    req = current_request()
    if req.endpoint in SEAT_ONLY and req.method != "OPTIONS" and _bearer(req) is None:
        raise Problem(401, "Unauthorized",
                      "a seat token is required: Authorization: Bearer <token>",
                      headers={"WWW-Authenticate": "Bearer"})
ops = ApiBlueprint("ops", __name__, description="Liveness and readiness.")
stateless = ApiBlueprint("checks", __name__, url_prefix="/v1",
                         description="Stateless checks for score-keeping apps and bots.")

JSON = "application/json"
SEAT_AUTH: list[dict[str, list[str]]] = [{"seatToken": []}]
def _game_link(path: str, method: str = "get") -> dict[str, Any]:
    ref = path.replace("~", "~0").replace("/", "~1")
    return {"operationRef": f"#/paths/{ref}/{method}",
            "parameters": {"game_id": "$response.body#/game_id"}}


GAME_LINKS = {
    "GetGame": _game_link("/v1/games/{game_id}"),
    "GetSeatView": _game_link("/v1/games/{game_id}/me"),
    "ProposeMove": _game_link("/v1/games/{game_id}/moves", "post"),
    "GetLegalMoves": _game_link("/v1/games/{game_id}/legal-moves"),
    "GetEvents": _game_link("/v1/games/{game_id}/events"),
    "VerifyGame": _game_link("/v1/games/{game_id}/verify"),
}
"""OpenAPI links from a created game to the operations on it (clients and stateful
testers follow them)."""



def _problems(*statuses: int) -> Any:
    """Document problem+json answers for ``statuses`` on a view."""
    def decorate(view: Any) -> Any:
        for status in statuses:
            view = blp.alt_response(status, schema=schemas.ProblemSchema,
                                    content_type=PROBLEM_MIMETYPE)(view)
        return view
    return decorate


_ETAG = {"ETag": {"schema": {"type": "string"}, "description": 'the version, "<version>"'}}
_IF_NONE_MATCH = {"in": "header", "name": "If-None-Match", "required": False,
                  "schema": {"type": "string"},
                  "description": 'the `ETag` of a view read before (`"<version>"`): the '
                                 "answer is `304 Not Modified` while it is still current"}
_PREFER = {"in": "header", "name": "Prefer", "required": False, "schema": {"type": "string"},
           "description": "`wait=N` (RFC 7240, N from 0 to 60) with `If-None-Match`: a long "
                          "poll, answered the moment the version changes, else `304` after "
                          "N seconds; the answer says `Preference-Applied: wait=N`"}
_PREFERENCE_APPLIED = {"Preference-Applied": {
    "schema": {"type": "string"}, "description": "`wait=N` when `Prefer: wait=N` was sent"}}
_NOT_MODIFIED = ('Not Modified: `If-None-Match` names the current version (`"<version>"`, '
                 "as the `ETag` of the last answer said); no body")


LEGAL_MOVES_LIMIT = 500
"""The most moves ``?include=legal_moves`` lists (``GET …/legal-moves``'s default)."""


def _referee() -> Referee:
    referee: Referee = current_app.extensions["referee"]
    return referee


def _json(body: Any, status: int = 200, *, version: int | None = None,
          private: bool = False, raw: bytes | None = None) -> Response:
    return Response(raw if raw is not None else json.dumps(body), status=status, mimetype=JSON,
                    headers=_view_headers(version, private))


def _view_headers(version: int | None, private: bool) -> list[tuple[str, str]]:
    """A view's ``ETag`` (its version) and, for a seat's own view, ``Cache-Control:
    no-store``: given to the answer as it is made (setting a header on a made one looks
    through those it has first)."""
    headers = []
    if version is not None:
        headers.append(("ETag", f'"{version}"'))
    if private:
        headers.append(("Cache-Control", "no-store"))
    return headers


def _bearer(req: Request | None = None) -> str | None:
    """The bearer token of the request (``req``, else the one being served), if any."""
    return bearer_token(header(req or current_request(), "Authorization"))


def _if_match(value: str | None) -> int | None:
    """The version an ``If-Match`` header (as ``MoveHeadersSchema`` loaded it) names."""
    if value is None or value.strip() == "*":
        return None
    version = natural(value.strip().removeprefix("W/").strip('"'))
    if version is None:
        raise Problem(400, "Bad Request", 'If-Match must be a game version such as "12"',
                      code="MALFORMED_REQUEST",
                      errors=[{"field": "If-Match", "message": "not a version"}])
    return version


def _view_answer(answer: Answer, private: bool = False) -> Response:
    return _json(answer.body, version=answer.version, private=private, raw=answer.raw)


def _held(answer: Answer) -> bool:
    """Whether the client holds ``answer``'s version (``If-None-Match``)."""
    return request.if_none_match.contains_weak(str(answer.version))


def _read_view(game_id: str, read: Callable[[], Answer], answer: Answer,
               wait: int | None, private: bool = False) -> Response:
    """A view read with ``GET``: ``304 Not Modified`` (no body) when ``If-None-Match``
    already names its version, else the view. A view changes only with the version (for a
    seat view, with the version and the seat, which the token fixes), so a client that
    polls sends the ``ETag`` it holds and reads again only after a move. With ``Prefer:
    wait=N`` (``wait``) the 304 waits up to N seconds for a move, and the view (``read``
    again) is the answer the moment one is committed (a long poll)."""
    if wait and _held(answer):
        answer = streams.long_poll(game_id, read, answer, _held, wait) or answer
    resp = (Response(status=304, headers=_view_headers(answer.version, private))
            if _held(answer)
            else _view_answer(answer, private))
    if wait is not None:
        resp.headers["Preference-Applied"] = f"wait={wait}"
        resp.vary.add("Prefer")
    return resp


# ---------------------------------------------------------------------------------------


DOCUMENT_MAX_AGE = 300
"""Seconds a client or cache may reuse a document that changes only with a deployment
(``GET /v1/variants``, ``GET /openapi.json``) without asking again; its ``ETag`` lets a
client ask cheaply after that."""


def digest(raw: bytes) -> str:
    """An ``ETag`` for a document of bytes ``raw``: the same in every worker and replica."""
    return hashlib.sha256(raw).hexdigest()[:20]


def deployment_document(raw: bytes, etag: str) -> Response:
    """The answer for a JSON document that changes only with a deployment (``raw``, made
    once, and ``etag``, its :func:`digest`): ``304`` when ``If-None-Match`` names the tag
    (weak or strong), else the document; either way with its ``ETag`` and
    ``Cache-Control: public, max-age=``:data:`DOCUMENT_MAX_AGE`."""
    unchanged = request.if_none_match.contains_weak(etag)
    resp = Response(status=304) if unchanged else Response(raw, mimetype=JSON)
    resp.headers["ETag"] = f'"{etag}"'
    resp.headers["Cache-Control"] = f"public, max-age={DOCUMENT_MAX_AGE}"
    return resp


@functools.cache
def _variants() -> tuple[bytes, str]:
    """``GET /v1/variants``'s body and its ``ETag``, made once."""
    body = {"variants": [{
        "id": v.id, "name": v.name, "min_players": v.min_players,
        "max_players": v.max_players, "deck_size": len(v.deck()),
        "rules": default_rules(v), "knobs": v.knob_list()} for v in VARIANTS.values()]}
    raw = json.dumps(body).encode()
    return raw, digest(raw)


@blp.route("/variants")
class Variants(MethodView):
    @blp.response(200, schemas.VariantListSchema, headers={
        "ETag": {"schema": {"type": "string"},
                 "description": "a digest of the body: it changes only with a deployment"},
        "Cache-Control": {"schema": {"type": "string"},
                          "description": f"public, max-age={DOCUMENT_MAX_AGE}"}})
    @blp.alt_response(304, description="Not Modified: `If-None-Match` names the current "
                                       "`ETag`")
    def get(self) -> Response:
        """The variants, their default rules and every knob."""
        return deployment_document(*_variants())


@blp.route("/games")
class Games(MethodView):
    @blp.doc(responses={201: {"links": GAME_LINKS}})
    @blp.arguments(schemas.GameCreateSchema)
    @blp.response(201, schemas.GameCreatedSchema,
                  headers={"Location": {"schema": {"type": "string"},
                                        "description": "/v1/games/{game_id}"}})
    @_problems(400, 401, 403, 413, 415, 429)
    def post(self, data: dict[str, Any]) -> Response:
        """Create a game; the answer holds each seat's secret token (shown only here).

        `null` in `players` leaves a seat open: the game then waits (`status` `waiting`,
        nothing dealt) until players take the open seats with the answer's `join_code`
        (POST /v1/join). The answer always holds the `host_token`.

        `deals` (an arranged deal) is refused with 403 `ARRANGED_DEALS_FORBIDDEN` where the
        server forbids them."""
        settings = current_app.extensions["settings"]
        security.require_api_key(settings)
        if data["deals"] and settings.arranged_deals == "forbid":
            raise Problem(403, "Forbidden", N_("this server does not accept arranged deals: "
                                               "create the game without deals"),
                          code="ARRANGED_DEALS_FORBIDDEN",
                          errors=[{"field": "deals", "message": N_("arranged deals are not "
                                                                   "accepted on this server")}])
        if data["deals"] and settings.arranged_deals == "closed_only" and None in data[
                "players"]:
            raise Problem(403, "Forbidden", N_("this server accepts arranged deals only in "
                                               "games without an open seat: name every "
                                               "player, or leave out the deals"),
                          code="ARRANGED_DEALS_FORBIDDEN",
                          errors=[{"field": "deals", "message": N_("not accepted with an open "
                                                                   "seat on this server")}])
        security.check_create_limit()
        try:
            answer = _referee().create(data["variant"], data["players"], data["rules"],
                                       data["dealer"], data["deals"])
        except RulesError as exc:
            raise _bad_field(f"rules.{exc.knob}", exc.message) from None
        except SetupError as exc:
            raise _bad_field(exc.field, exc.message) from None
        observe.GAMES_CREATED.labels(data["variant"]).inc()
        resp = _json(answer.body, 201, version=answer.version, private=True)
        resp.headers["Location"] = f"/v1/games/{answer.body['game_id']}"
        return resp


def _bad_field(field: str, message: str) -> Problem:
    return Problem(400, "Bad Request", f"{field}: {message}", code="MALFORMED_REQUEST",
                   errors=[{"field": field, "message": message}])


@blp.route("/games/<game_id>")
class Game(MethodView):
    @blp.doc(parameters=[_IF_NONE_MATCH, _PREFER])
    @blp.response(200, schemas.PublicViewSchema,
                  headers={**_ETAG, **_PREFERENCE_APPLIED})
    @blp.alt_response(304, description=_NOT_MODIFIED)
    @_problems(400, 404, 429, 503)
    def get(self, game_id: str) -> Response:
        """The public view: everything anyone may see, no hidden card."""
        wait = streams.preferred_wait()
        read = functools.partial(_referee().public, game_id)
        return _read_view(game_id, read, read(), wait)


@blp.route("/games/<game_id>/me")
class Me(MethodView):
    @blp.doc(security=SEAT_AUTH, parameters=[_IF_NONE_MATCH, _PREFER])
    @blp.response(200, schemas.SeatViewSchema,
                  headers={**_ETAG, **_PREFERENCE_APPLIED})
    @blp.alt_response(304, description=_NOT_MODIFIED)
    @_problems(400, 401, 403, 404, 429, 503)
    def get(self, game_id: str) -> Response:
        """The seat view: the public view plus the caller's hand."""
        wait = streams.preferred_wait()
        referee, token = _referee(), _bearer()
        first = referee.seat(game_id, token, security.game_meter())
        return _read_view(game_id, lambda: referee.seat(game_id, token), first, wait,
                          private=True)


# The moves endpoint, the hot one, is a view function where the others are MethodViews: a
# MethodView's dispatch (an instance made, the method looked up by the request's, twice
# through Flask's proxies) cost a request 6 µs more than a function on the 2-CPU machine of
# bench/README.md, about 1% of a move's CPU in the app.
@blp.route("/games/<game_id>/moves", methods=["POST"], endpoint="Moves")
@blp.doc(security=SEAT_AUTH)
@blp.arguments(schemas.MoveHeadersSchema, location="headers", as_kwargs=True)
@blp.arguments(schemas.MoveQuerySchema, location="query", as_kwargs=True)
@blp.arguments(schemas.MoveSchema)
@blp.response(200, schemas.MoveResultSchema)
@_problems(400, 401, 403, 404, 412, 413, 415, 422, 503)
def post_move(move: Move, game_id: str, dry_run: bool, if_match: str | None = None,
              idempotency_key: str | None = None, include: str | None = None) -> Response:
    """Propose a move; applied atomically if legal (`dry_run=true`: validate only)."""
    version = _if_match(if_match)
    fingerprint = ""  # what identifies the request for an idempotent retry
    if idempotency_key is not None:
        canonical = json.dumps(move_to_dict(move), sort_keys=True, separators=(",", ":"))
        fingerprint = hashlib.sha256(f"{dry_run}|{canonical}".encode()).hexdigest()
    try:
        answer = _referee().play(game_id, _bearer(), move, if_match=version,
                                 idempotency_key=idempotency_key, fingerprint=fingerprint,
                                 dry_run=dry_run, meter=security.game_meter())
    except Violation as refusal:
        observe.move_seen(getattr(refusal, "variant", "unknown"), kind_of(move),
                          refusal.code.value)
        raise
    if not dry_run and not answer.replayed:
        variant = answer.body["game"]["variant"]
        observe.move_seen(variant, kind_of(move), "legal")
        if any(e["type"] == "game_end" for e in answer.body["events"]):
            observe.GAMES_FINISHED.labels(variant).inc()
    resp = _view_answer(answer, private=True)
    if include == "legal_moves":  # the answer as ever, then the moves
        legal = _referee().legal(game_id, _bearer(), LEGAL_MOVES_LIMIT).body
        raw = answer.raw if answer.raw is not None else json.dumps(answer.body).encode()
        resp = _json(None, version=answer.version, private=True, raw=raw[:-1] + (
            b',"legal_moves":' + json.dumps(legal, separators=(",", ":")).encode() + b"}"))
    if answer.replayed:
        resp.headers["Idempotent-Replayed"] = "true"
    return resp


@blp.route("/games/<game_id>/legal-moves")
class LegalMoves(MethodView):
    @blp.doc(security=SEAT_AUTH)
    @blp.arguments(schemas.LegalMovesQuerySchema, location="query", as_kwargs=True)
    @blp.response(200, schemas.LegalMovesSchema)
    @_problems(400, 401, 403, 404)
    def get(self, game_id: str, limit: int) -> Response:
        """Every legal move of the caller now (for bots); out of turn: what it may do."""
        answer = _referee().legal(game_id, _bearer(), limit, security.game_meter())
        return _json(answer.body, version=answer.version, private=True)


@blp.route("/games/<game_id>/events")
class Events(MethodView):
    @blp.doc(security=[{}, *SEAT_AUTH])
    @blp.arguments(schemas.EventsQuerySchema, location="query", as_kwargs=True)
    @blp.response(200, schemas.EventsPageSchema, description=(
        "The log page as JSON; with `Accept: text/event-stream`, a stream of server-sent "
        "events instead: one `move` event per log entry (`id` = its version), heartbeat "
        "comments, resumable with `Last-Event-ID` (or `?after=`); each entry tells the "
        "game's `version`, `status` and `turn` after it. A browser's `EventSource` passes a "
        "seat's stream ticket as `?ticket=` (`POST …/stream-tickets`) instead of the token; "
        "a ticket works once, so it resumes with a new ticket and `?after=` the id of the "
        "last event it received."))
    @_problems(400, 401, 403, 404, 429, 503)
    def get(self, game_id: str, after: int, limit: int, ticket: str | None = None
            ) -> Response:
        """The move log from version `after`: the public's view, or a seat's (token).

        A page holds at most `limit` entries; a stream sends them all."""
        referee = _referee()
        streaming = "text/event-stream" in request.headers.get("Accept", "")
        start = streams.resume_after(request.headers.get("Last-Event-ID"), after) \
            if streaming else after  # a bad header refused before a ticket is used up
        viewer: int | None
        holder: str | None  # the hash of the seat's token: a stream checks it (streams)
        if ticket is not None:
            referee.viewer(game_id, None)  # 404 first
            if not streaming:
                raise _bad_field("ticket", "a ticket opens a stream only: send Accept: "
                                           "text/event-stream")
            viewer, holder = streams.redeem_ticket(referee, game_id, ticket)
        else:
            token = _bearer() if _has_auth() else None
            viewer = referee.viewer(game_id, token)  # 404 first
            holder = None if token is None else token_hash(token)
        if streaming:
            return streams.open_stream(referee, game_id, viewer, start, holder)
        entries = referee.events(game_id, viewer, after, limit + 1)  # one more: has_more
        has_more = len(entries) > limit
        del entries[limit:]
        body = {"game_id": game_id, "after": after, "entries": entries,
                "last_version": entries[-1]["version"] if entries else after,
                "has_more": has_more}
        return _json(body, private=viewer is not None)


@blp.route("/games/<game_id>/verify")
class Verify(MethodView):
    @blp.response(200, schemas.VerifySchema)
    @_problems(404, 429)
    def get(self, game_id: str) -> Response:
        """Replay the move log through the engine and check every revealed deal against the
        commitment published when it was dealt (provably fair deals). The report is kept
        until the game's next move; replays are limited per client address (429)."""
        return _json(_referee().verify(game_id, security.replay_guard()))


def _has_auth() -> bool:
    return "Authorization" in request.headers


@stateless.route("/melds/check")
class MeldCheck(MethodView):
    @stateless.arguments(schemas.MeldCheckSchema)
    @stateless.response(200, schemas.MeldCheckResultSchema)
    @stateless.alt_response(400, schema=schemas.ProblemSchema, content_type=PROBLEM_MIMETYPE)
    @stateless.alt_response(415, schema=schemas.ProblemSchema, content_type=PROBLEM_MIMETYPE)
    def post(self, data: dict[str, Any]) -> Response:
        """Is this meld valid on its own under a variant and rules; wilds; points."""
        resp = _json(check_one_meld(data["variant"], data["rules"], schemas.pieces(data["cards"]),
                                    render=i18n.translate))
        resp.headers["Content-Language"] = i18n.language()  # of the reasons' details
        resp.vary.add("Accept-Language")
        return resp


@stateless.route("/scores/hand")
class ScoreHand(MethodView):
    @stateless.arguments(schemas.ScoreHandSchema)
    @stateless.response(200, schemas.ScoreHandResultSchema)
    @stateless.alt_response(400, schema=schemas.ProblemSchema, content_type=PROBLEM_MIMETYPE)
    @stateless.alt_response(415, schema=schemas.ProblemSchema, content_type=PROBLEM_MIMETYPE)
    def post(self, data: dict[str, Any]) -> Response:
        """Score the end of one hand under a variant's scoring."""
        try:
            return _json(score_one_hand(data["variant"], data["rules"], data))
        except MissingFact as exc:
            raise Problem(400, "Bad Request", str(exc), code="MALFORMED_REQUEST",
                          errors=[{"field": f, "message": m} for f, m in exc.problems]
                          ) from None


# ---------------------------------------------------------------------------------------


@ops.route("/healthz")
class Health(MethodView):
    @ops.response(200, schemas.HealthSchema)
    def get(self) -> Response:
        """Liveness: the process answers."""
        return _json({"status": "ok"})


STORE_FULL = ("the game store (Redis) is full: it refuses new games and moves until it has "
              "room again")
"""The detail of a 503 while Redis is out of memory (creates, moves, ``/readyz``)."""
STORE_FULL_RETRY_AFTER = "5"
"""Its ``Retry-After``: a full Redis does not empty in a second."""


@ops.route("/readyz")
class Ready(MethodView):
    @ops.response(200, schemas.HealthSchema)
    @ops.alt_response(503, schema=schemas.ProblemSchema, content_type=PROBLEM_MIMETYPE)
    def get(self) -> Response:
        """Readiness: Redis answers, and takes writes (it is not out of memory)."""
        store = _referee().store
        unreachable = Problem(503, "Service Unavailable", "the game store (Redis) is unreachable",
                              headers={"Retry-After": "1"})
        if not store.ping():
            raise unreachable
        try:
            full = store.refuses_writes()
        except StoreError:
            raise unreachable from None
        if full:
            raise Problem(503, "Service Unavailable", STORE_FULL,
                          headers={"Retry-After": STORE_FULL_RETRY_AFTER})
        return _json({"status": "ready"})
