"""What the routes' decorators do not say in the OpenAPI document, said once for every
operation (:class:`SurfacePlugin`, an apispec plugin the app installs after flask-smorest's):
operation ids, the shared components, 429 and 503, the event stream, request examples and
``servers``. ``python -m service.api.openapi`` prints the document."""

from __future__ import annotations

from typing import Any

from apispec import APISpec, BasePlugin

from service.api import schemas
from service.api.examples import REQUEST_EXAMPLES
from service.api.problems import PROBLEM_MIMETYPE

OPENAPI_VERSION = "3.1.0"

OPERATION_IDS: dict[tuple[str, str], str] = {
    ("get", "/v1/variants"): "listVariants",
    ("post", "/v1/games"): "createGame",
    ("get", "/v1/games/{game_id}"): "getGame",
    ("delete", "/v1/games/{game_id}"): "cancelGame",
    ("get", "/v1/games/{game_id}/me"): "getSeatView",
    ("post", "/v1/games/{game_id}/moves"): "postMove",
    ("get", "/v1/games/{game_id}/legal-moves"): "listLegalMoves",
    ("get", "/v1/games/{game_id}/events"): "listEvents",
    ("get", "/v1/games/{game_id}/verify"): "verifyGame",
    ("post", "/v1/games/{game_id}/seats/{seat}/open"): "openSeat",
    ("post", "/v1/games/{game_id}/me/token"): "rotateSeatToken",
    ("post", "/v1/games/{game_id}/rematch"): "createRematch",
    ("post", "/v1/games/{game_id}/stream-tickets"): "createStreamTicket",
    ("post", "/v1/join"): "joinGame",
    ("get", "/v1/join/{code}"): "previewJoin",
    ("post", "/v1/melds/check"): "checkMeld",
    ("post", "/v1/scores/hand"): "scoreHand",
    ("post", "/v1/scoresheets"): "createScoreSheet",
    ("get", "/v1/scoresheets/{sheet_id}"): "getScoreSheet",
    ("post", "/v1/scoresheets/{sheet_id}/hands"): "addScoreSheetHand",
    ("delete", "/v1/scoresheets/{sheet_id}/hands/last"): "undoScoreSheetHand",
    ("get", "/healthz"): "getHealth",
    ("get", "/readyz"): "getReadiness",
}
"""Each operation's ``operationId``: the name a generated client gives the call."""

SERVERS = [{"url": "/", "description": "the server that serves this document"},
           {"url": "http://127.0.0.1:8000", "description": "rummy-referee serve, locally"}]

EVENT_STREAM = {
    "schema": {"type": "string", "description": (
        "server-sent events: one `move` event per log entry, its `id` the entry's version "
        "and its `data` the entry (a `LogEntry`) as JSON; heartbeat comments between; an "
        "`error` event (`data`: `{\"detail\": …}`) if the store fails")},
    "example": 'retry: 1000\n\nid: 3\nevent: move\ndata: {"version": 3, "seat": 0, '
               '"move": {"type": "discard", "card": "KC"}, "events": […]}\n\n'}
"""``GET …/events`` with ``Accept: text/event-stream`` (:mod:`service.api.streams`)."""

RETRY_AFTER = {"description": "seconds to wait before trying again",
               "schema": {"type": "integer", "minimum": 1}}
RATE_LIMIT = {"description": "what is left of the limit (IETF httpapi RateLimit draft): "
              '`"requests";r=4;t=60`: 4 requests left, its window ends in 60 s',
              "schema": {"type": "string"}}
RATE_LIMIT_POLICY = {"description": "the limits that apply (IETF httpapi RateLimit draft): "
                     '`"requests";q=5;w=60`: 5 requests a 60 s window',
                     "schema": {"type": "string"}}
TOO_MANY_REQUESTS = "TooManyRequests"
SERVICE_UNAVAILABLE = "ServiceUnavailable"


def _problem_response(description: str, *, limited: bool = False) -> dict[str, Any]:
    headers = {"Retry-After": {"$ref": "#/components/headers/RetryAfter"}}
    if limited:
        headers["RateLimit"] = {"$ref": "#/components/headers/RateLimit"}
        headers["RateLimit-Policy"] = {"$ref": "#/components/headers/RateLimitPolicy"}
    return {"description": description,
            "headers": headers,
            "content": {PROBLEM_MIMETYPE: {
                "schema": {"$ref": "#/components/schemas/Problem"}}}}


class SurfacePlugin(BasePlugin):
    """apispec plugin (after flask-smorest's): an ``operationId`` on every operation
    (:data:`OPERATION_IDS`), ``429`` on every rate-limited one and ``503`` on every one (any
    request may meet the connection gate's), both with ``Retry-After``, and each request
    body's examples (:data:`service.api.examples.REQUEST_EXAMPLES`)."""

    def init_spec(self, spec: APISpec) -> None:
        super().init_spec(spec)
        spec.components.schema("CardCode", schemas.CARD_CODE_SPEC)
        spec.components.schema("MeldCard", schemas.MELD_CARD_SPEC)
        spec.components.schema("Rules", schemas._knobs_spec())
        spec.components.header("RetryAfter", RETRY_AFTER)
        spec.components.header("RateLimit", RATE_LIMIT)
        spec.components.header("RateLimitPolicy", RATE_LIMIT_POLICY)
        spec.components.response(TOO_MANY_REQUESTS, _problem_response(
            "Too Many Requests: over a rate limit; `Retry-After` says when to try again",
            limited=True))
        spec.components.response(SERVICE_UNAVAILABLE, _problem_response(
            "Service Unavailable, on any path: the server process is restarting (code "
            "`RESTARTING`) or this client address holds as many connections to it as it may "
            "(`TOO_MANY_CONNECTIONS`); on the game store's paths also: the store cannot be "
            "reached, is full or is busy with this game; on an event stream: too many "
            "streams on this server. `Retry-After` says when to try again"))

    def operation_helper(self, path: str | None = None,
                         operations: dict[str, Any] | None = None, **kwargs: Any) -> None:
        assert path is not None and operations is not None
        for method, operation in operations.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            operation["operationId"] = OPERATION_IDS[(method, path)]
            responses: dict[Any, Any] = operation.setdefault("responses", {})
            for status in (429, 503):
                responses.pop(status, None)
                responses.pop(str(status), None)
            if path.startswith("/v1/"):
                responses["429"] = TOO_MANY_REQUESTS
            # every path: the connection gate in front of the app (service.serving_limits)
            # refuses a request with 503 when the process restarts or an address holds too
            # many connections, whatever the request was for
            responses["503"] = SERVICE_UNAVAILABLE
            if operation["operationId"] == "listEvents":
                ok = responses.get(200) or responses["200"]
                ok["content"]["text/event-stream"] = EVENT_STREAM
            examples = REQUEST_EXAMPLES.get((method, path))
            if examples:
                body = operation["requestBody"]["content"]["application/json"]
                body["examples"] = examples
