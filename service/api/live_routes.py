"""HTTP route of live tables (docs/api.md, "Live tables"): stream tickets, with which a
browser's ``EventSource`` (which cannot send an ``Authorization`` header) opens a seat's
event stream. The streams and long polls themselves are :mod:`service.api.streams`'."""

from __future__ import annotations

from flask import Response
from flask.views import MethodView

from service.api import schemas, streams
from service.api.routes import SEAT_AUTH, ApiBlueprint, _bearer, _json, _problems, _referee
from service.referee import Unauthorized

blp = ApiBlueprint("live", __name__, url_prefix="/v1",
                   description="Live tables: stream tickets for browsers (docs/api.md, "
                               "\"Live tables\").")


@blp.route("/games/<game_id>/stream-tickets")
class StreamTickets(MethodView):
    @blp.doc(security=SEAT_AUTH)
    @blp.response(201, schemas.StreamTicketSchema)
    @_problems(401, 403, 404)
    def post(self, game_id: str) -> Response:
        """A one-use ticket for the caller's event stream, valid for a minute.

        `GET …/events?ticket=<ticket>` with `Accept: text/event-stream` then streams the
        seat's own view of the log, as with its token, from any server. The ticket works
        once: a used, expired or malformed one is `401`, another game's `403`. A seat token
        never goes into a URL (nor into an access log); a ticket is worthless once used."""
        token = _bearer()
        if token is None:
            raise Unauthorized("a seat token is required: Authorization: Bearer <token>")
        referee = _referee()
        seat = referee.viewer(game_id, token)
        assert seat is not None
        body = {"ticket": streams.issue_ticket(referee, game_id, seat, token),
                "expires_in": streams.TICKET_SECONDS}
        return _json(body, 201, private=True)
