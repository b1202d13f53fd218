"""HTTP routes of the lobby (docs/api.md "Seats for remote players"): joining a game by
its code, the host's cancel and reopen, a seat's token rotation and rematch. The work is
:class:`~service.referee.lobby.LobbyReferee`'s; its refusals become problem+json here."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from flask import Flask, Response, current_app, request
from flask.views import MethodView

from service.api import schemas, security
from service.api.problems import Problem, detail_of
from service.api.routes import (
    SEAT_AUTH,
    ApiBlueprint,
    _bearer,
    _json,
    _problems,
    _view_answer,
)
from service.referee.games import Answer
from service.referee.lobby import LobbyError, LobbyReferee, NotStarted, Retry

blp = ApiBlueprint("lobby", __name__, url_prefix="/v1",
                   description="Open seats, join codes, the host token, token rotation and "
                               "rematches (docs/api.md, \"Seats for remote players\").")

HOST_AUTH: list[dict[str, list[str]]] = [{"hostToken": []}]
_TITLES = {400: "Bad Request", 404: "Not Found", 409: "Conflict"}


def _lobby() -> LobbyReferee:
    referee: LobbyReferee = current_app.extensions["referee"]
    return referee


_REPLAYED = {"Idempotent-Replayed": {
    "schema": {"type": "string", "enum": ["true"]},
    "description": "`true` when this is the kept answer of an earlier request with the same "
                   "`Idempotency-Key` (its answer was lost), sent again byte for byte"}}


def _retry(schema: type[schemas.RetryHeadersSchema] = schemas.RetryHeadersSchema
           ) -> Retry | None:
    """The request's ``Idempotency-Key`` (validated) with its fingerprint: the path and
    the body as JSON."""
    headers = blp.ARGUMENTS_PARSER.parse(schema, location="headers")
    key = headers.get("idempotency_key")
    if key is None:
        return None
    body = json.dumps(request.get_json(force=True, silent=True), sort_keys=True,
                      separators=(",", ":"))
    return Retry(key, hashlib.sha256(f"{request.path}|{body}".encode()).hexdigest())


def _granted(answer: Answer) -> Response:
    """A seat granted (joined, rematched): 201, private, ``Location`` its seat view."""
    resp = _json(answer.body, 201, version=answer.version if "game" in answer.body else None,
                 private=True)
    resp.headers["Location"] = f"/v1/games/{answer.body['game_id']}/me"
    if answer.replayed:
        resp.headers["Idempotent-Replayed"] = "true"
    return resp


@blp.route("/join")
class Join(MethodView):
    @blp.arguments(schemas.RetryHeadersSchema, location="headers", as_kwargs=True)
    @blp.arguments(schemas.JoinSchema)
    @blp.response(201, schemas.JoinedSchema)
    @_problems(400, 404, 409, 413, 415, 422, 429)
    def post(self, data: dict[str, Any], **_headers: Any) -> Response:
        """Take an open seat of a waiting game by its join code.

        The answer holds that seat's own token and its view. A wrong code is `404`; a game
        with no open seat left (or that has started), or the asked `seat` taken, `409`
        `SEAT_TAKEN`. When the last open seat is taken the game is dealt at once (a
        `dealt` event) and plays. Attempts are limited per client address
        (`RUMMY_JOIN_RATE_LIMITS`, 429). With an `Idempotency-Key`, a join retried after
        a lost answer gets the same seat and token again (`Idempotent-Replayed: true`),
        not a second seat."""
        security.check_join_limit()
        return _granted(_lobby().join(data["code"], data["name"], data["seat"], _retry()))


@blp.route("/join/<code>")
class JoinPreview(MethodView):
    @blp.response(200, schemas.JoinPreviewSchema)
    @_problems(404, 409, 429)
    def get(self, code: str) -> Response:
        """What a join code leads to, before joining: the waiting game's public view.

        It says the variant, the rules, who sits where and which seats are open, and
        `arranged: true` when the game was created with an arranged deal (its creator may
        then know every card). No token, no hand. A wrong code is `404`; a game that has
        started, ended or been cancelled `409` `SEAT_TAKEN`. Counted with joins against
        `RUMMY_JOIN_RATE_LIMITS` (429): looking codes up is guessing them too."""
        security.check_join_limit()
        answer = _lobby().preview(code)
        return _json(answer.body, version=answer.version)


@blp.route("/games/<game_id>")
class GameHost(MethodView):
    @blp.doc(security=HOST_AUTH)
    @blp.response(200, schemas.PublicViewSchema)
    @_problems(401, 403, 404, 409)
    def delete(self, game_id: str) -> Response:
        """Cancel a game that has not finished (the host token).

        Its `status` becomes `aborted`, with no winner; every move is then refused
        (`422 GAME_FINISHED`). The answer is the public view."""
        return _view_answer(_lobby().cancel(game_id, _bearer()))


@blp.route("/games/<game_id>/seats/<int:seat>/open")
class SeatOpen(MethodView):
    @blp.doc(security=HOST_AUTH)
    @blp.response(200, schemas.PublicViewSchema)
    @_problems(400, 401, 403, 404, 409)
    def post(self, game_id: str, seat: int) -> Response:
        """Open a seat of a waiting game again (the host token); its token stops working.

        `409 GAME_STARTED` once the game has started. The answer is the public view."""
        return _view_answer(_lobby().reopen(game_id, seat, _bearer()))


@blp.route("/games/<game_id>/me/token")
class Token(MethodView):
    @blp.doc(security=SEAT_AUTH)
    @blp.arguments(schemas.RotateHeadersSchema, location="headers", as_kwargs=True)
    @blp.response(200, schemas.SeatGrantSchema, headers=_REPLAYED)
    @_problems(400, 401, 403, 404, 422)
    def post(self, game_id: str, **_headers: Any) -> Response:
        """Replace the caller's seat token (a leaked token, say).

        The answer holds the new token; the old one is refused from then on, by every
        server. With an `Idempotency-Key`, a rotation whose answer was lost, sent again
        with the same old token and key, gets the same new token again
        (`Idempotent-Replayed: true`) instead of a `401`; only that old token with that
        key does: anything else is answered as without a key."""
        answer = _lobby().rotate(game_id, _bearer(), _retry(schemas.RotateHeadersSchema))
        resp = _json(answer.body, private=True)
        if answer.replayed:
            resp.headers["Idempotent-Replayed"] = "true"
        return resp


@blp.route("/games/<game_id>/rematch")
class Rematch(MethodView):
    @blp.doc(security=SEAT_AUTH)
    @blp.arguments(schemas.RetryHeadersSchema, location="headers", as_kwargs=True)
    @blp.response(201, schemas.SeatGrantSchema)
    @_problems(400, 401, 403, 404, 409, 422)
    def post(self, game_id: str, **_headers: Any) -> Response:
        """The next match of a finished game: the same variant, rules and names, the first
        dealer one seat to the left.

        It is made once: every seat that asks gets the same new game and its own token of
        it (once: `409 REMATCH_CLAIMED` when asked again). The old game's views then name
        it (`rematch`). `409 GAME_NOT_FINISHED` before the game is over. With an
        `Idempotency-Key`, a request retried after a lost answer gets the same token
        again instead of the 409."""
        return _granted(_lobby().rematch(game_id, _bearer(), _retry()))


def register(app: Flask) -> None:
    """The lobby's refusals as problem+json."""
    def lobby_error(error: LobbyError) -> Response:
        return Problem(error.status, _TITLES.get(error.status, "Conflict"), detail_of(error),
                       code=error.code, **error.extra).response()

    def not_started(error: NotStarted) -> Response:
        return Problem(422, "Illegal move", str(error), code=error.code.value).response()

    app.register_error_handler(LobbyError, lobby_error)
    app.register_error_handler(NotStarted, not_started)
