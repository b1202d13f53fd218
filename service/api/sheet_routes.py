"""HTTP routes of the score sheets for paper games (``/v1/scoresheets``, docs/api.md).

Views parse, authenticate and call :class:`service.sheets.Sheets`; its errors become
problem+json here.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from flask import Response, current_app, request
from flask.views import MethodView

from service.api import security
from service.api.problems import PROBLEM_MIMETYPE, Problem, detail_of
from service.api.routes import ApiBlueprint, _bearer, _json
from service.api.schemas import ProblemSchema
from service.api.sheet_schemas import (
    SheetCreatedSchema,
    SheetCreateSchema,
    SheetHandSchema,
    SheetHeadersSchema,
    SheetViewSchema,
)
from service.numbers import natural
from service.rules.errors import N_
from service.sheets import (
    BadSheet,
    SheetAnswer,
    SheetBusy,
    SheetForbidden,
    SheetKeyReused,
    SheetRefused,
    Sheets,
    SheetStale,
    SheetUnauthorized,
    UnknownSheet,
)

sheets_blp = ApiBlueprint("scoresheets", __name__, url_prefix="/v1",
                          description="Score sheets for paper games: the players play with "
                                      "real cards, the sheet keeps the score.")

SHEET_AUTH: list[dict[str, list[str]]] = [{"sheetToken": []}]
TOKEN_ONLY = {"scoresheets.SheetHands", "scoresheets.SheetLastHand"}


def _sheet_link(path: str, method: str = "get") -> dict[str, Any]:
    ref = path.replace("~", "~0").replace("/", "~1")
    return {"operationRef": f"#/paths/{ref}/{method}",
            "parameters": {"sheet_id": "$response.body#/sheet_id"}}


SHEET_LINKS = {
    "GetSheet": _sheet_link("/v1/scoresheets/{sheet_id}"),
    "AddHand": _sheet_link("/v1/scoresheets/{sheet_id}/hands", "post"),
    "TakeBackLastHand": _sheet_link("/v1/scoresheets/{sheet_id}/hands/last", "delete"),
}
"""OpenAPI links from a created sheet to the operations on it."""


@sheets_blp.before_request
def _token_first() -> None:
    """A change without a token is a 401 before anything else is looked at."""
    if request.endpoint in TOKEN_ONLY and request.method != "OPTIONS" and _bearer() is None:
        raise SheetUnauthorized(N_("the sheet's token is required: Authorization: Bearer "
                                   "<token>"))
_ETAG = {"ETag": {"schema": {"type": "string"}, "description": 'the version, "<version>"'}}


def _problems(*statuses: int) -> Any:
    def decorate(view: Any) -> Any:
        for status in statuses:
            view = sheets_blp.alt_response(status, schema=ProblemSchema,
                                           content_type=PROBLEM_MIMETYPE)(view)
        return view
    return decorate


def _sheets() -> Sheets:
    sheets: Sheets = current_app.extensions["sheets"]
    return sheets


def _answer(answer: SheetAnswer, status: int = 200) -> Response:
    resp = _json(answer.body, status, version=answer.version)
    if answer.replayed:
        resp.headers["Idempotent-Replayed"] = "true"
    return resp


def _change_headers() -> tuple[int | None, str | None, str]:
    """``If-Match``, ``Idempotency-Key`` and the request's fingerprint."""
    headers = sheets_blp.ARGUMENTS_PARSER.parse(SheetHeadersSchema, location="headers")
    key = headers.get("idempotency_key")
    body = request.get_json(force=True, silent=True)
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    fingerprint = hashlib.sha256(
        f"{request.method}|{request.path}|{canonical}".encode()).hexdigest()
    return _if_match(headers.get("if_match")), key, fingerprint


def _if_match(value: str | None) -> int | None:
    """The version an ``If-Match`` header names (None: any, or ``*``)."""
    if value is None or value.strip() == "*":
        return None
    version = natural(value.strip().removeprefix("W/").strip('"'))
    if version is None:
        raise BadSheet("If-Match", N_('a version of the sheet, as its ETag gives it: "12"'))
    return version


@sheets_blp.route("/scoresheets")
class ScoreSheets(MethodView):
    @sheets_blp.doc(responses={201: {"links": SHEET_LINKS}})
    @sheets_blp.arguments(SheetCreateSchema)
    @sheets_blp.response(201, SheetCreatedSchema, headers={
        "Location": {"schema": {"type": "string"}, "description": "/v1/scoresheets/{sheet_id}"},
        **_ETAG})
    @_problems(400, 401, 413, 415, 429)
    def post(self, data: dict[str, Any]) -> Response:
        """Start a score sheet: a variant, its knobs, the players' names.

        The answer holds the sheet's token (shown only here): adding and taking back
        hands needs it; reading the sheet does not."""
        settings = current_app.extensions["settings"]
        security.require_api_key(settings)
        security.check_create_limit()
        sheet_id, token, answer = _sheets().create(data["variant"], data["rules"],
                                                   data["players"])
        resp = _json({"sheet_id": sheet_id, "token": token, "sheet": answer.body}, 201,
                     version=answer.version)
        resp.headers["Location"] = f"/v1/scoresheets/{sheet_id}"
        return resp


@sheets_blp.route("/scoresheets/<sheet_id>")
class ScoreSheet(MethodView):
    @sheets_blp.response(200, SheetViewSchema, headers=_ETAG)
    @sheets_blp.alt_response(304, description="Not Modified: `If-None-Match` names the "
                                              "current version")
    @_problems(404)
    def get(self, sheet_id: str) -> Response:
        """The sheet: every hand's scores, the running totals, the status and winners."""
        answer = _sheets().read(sheet_id)
        if request.if_none_match.contains_weak(str(answer.version)):
            resp = Response(status=304)
            resp.headers["ETag"] = f'"{answer.version}"'
            return resp
        return _answer(answer)


@sheets_blp.route("/scoresheets/<sheet_id>/hands")
class SheetHands(MethodView):
    @sheets_blp.doc(security=SHEET_AUTH)
    @sheets_blp.arguments(SheetHeadersSchema, location="headers", as_kwargs=True)
    @sheets_blp.arguments(SheetHandSchema)
    @sheets_blp.response(200, SheetViewSchema, headers=_ETAG)
    @_problems(400, 401, 403, 404, 412, 413, 415, 422, 503)
    def post(self, data: dict[str, Any], sheet_id: str, **_headers: Any) -> Response:
        """Add one hand, as the cards each player still holds or as points.

        Cards are scored as `POST /v1/scores/hand` scores them, players named instead of
        seats. A hand for a finished sheet is refused (422 `SHEET_FINISHED`), as is one
        beyond the sheet's size (422 `SHEET_FULL`); bad input is a 400 naming what is
        wrong, and nothing is stored."""
        if_match, key, fingerprint = _change_headers()
        entry = request.get_json(force=True, silent=True)
        assert isinstance(entry, dict)  # the schema loaded it
        return _answer(_sheets().add_hand(sheet_id, _bearer(), entry, if_match=if_match,
                                          idempotency_key=key, fingerprint=fingerprint))


@sheets_blp.route("/scoresheets/<sheet_id>/hands/last")
class SheetLastHand(MethodView):
    @sheets_blp.doc(security=SHEET_AUTH)
    @sheets_blp.arguments(SheetHeadersSchema, location="headers", as_kwargs=True)
    @sheets_blp.response(200, SheetViewSchema, headers=_ETAG)
    @_problems(400, 401, 403, 404, 412, 422, 503)
    def delete(self, sheet_id: str, **_headers: Any) -> Response:
        """Take the last hand back (someone typed a card wrong); 422 `NO_HAND` on an
        empty sheet."""
        if_match, key, fingerprint = _change_headers()
        return _answer(_sheets().take_back(sheet_id, _bearer(), if_match=if_match,
                                           idempotency_key=key, fingerprint=fingerprint))


def _bad(error: BadSheet) -> Response:
    return Problem(400, "Bad Request", str(error), code="MALFORMED_REQUEST",
                   errors=[{"field": f, "message": m} for f, m in error.problems]).response()


def _bad_sheet(error: BadSheet) -> Response:
    return _bad(error)


def _refused(error: SheetRefused) -> Response:
    return Problem(422, "Unprocessable Content", detail_of(error),
                   code=error.code).response()


def _unknown(error: UnknownSheet) -> Response:
    return Problem(404, "Not Found", detail_of(error)).response()


def _unauthorized(error: SheetUnauthorized) -> Response:
    return Problem(401, "Unauthorized", detail_of(error),
                   headers={"WWW-Authenticate": "Bearer"}).response()


def _forbidden(error: SheetForbidden) -> Response:
    return Problem(403, "Forbidden", detail_of(error)).response()


def _stale(error: SheetStale) -> Response:
    return Problem(412, "Precondition Failed", detail_of(error), current_version=error.current,
                   headers={"ETag": f'"{error.current}"'}).response()


def _reused(error: SheetKeyReused) -> Response:
    return Problem(422, "Idempotency key reused", detail_of(error),
                   code="IDEMPOTENCY_KEY_REUSED").response()


def _busy(error: SheetBusy) -> Response:
    return Problem(503, "Service Unavailable", detail_of(error),
                   headers={"Retry-After": "1"}).response()


for _error, _handler in (
        (BadSheet, _bad_sheet),
        (SheetRefused, _refused),
        (UnknownSheet, _unknown),
        (SheetUnauthorized, _unauthorized),
        (SheetForbidden, _forbidden),
        (SheetStale, _stale),
        (SheetKeyReused, _reused),
        (SheetBusy, _busy),
):
    sheets_blp.register_error_handler(_error, _handler)
