"""What docs/api.md says of the move log's pages and of resuming a stream is what the
service does: the bounds of ``?limit=``, and resuming a seat's stream with a new ticket and
``?after=`` (a browser cannot resume a ticketed stream with ``Last-Event-ID``)."""

from __future__ import annotations

import re
from pathlib import Path

from flask.testing import FlaskClient

from service.api.schemas import EVENTS_PAGE, EVENTS_PAGE_MAX
from tests.support.deals import auth
from tests.support.problems import assert_problem
from tests.support.streams import SSE

ROOT = Path(__file__).resolve().parents[2]
API_MD = (ROOT / "docs" / "api.md").read_text()


def test_the_documented_page_limit_is_the_one_the_service_takes(client: FlaskClient) -> None:
    found = re.search(r"the `after` of the next page\. `\?limit=` \((\d[\d,]*)–(\d[\d,]*),"
                      r"\s+default (\d+)\)", API_MD)
    assert found, "docs/api.md should say of a log page: ?limit= (least–most, default N)"
    least, most, default = (int(n.replace(",", "")) for n in found.groups())
    assert (least, most, default) == (1, EVENTS_PAGE_MAX, EVENTS_PAGE)
    game = client.post("/v1/games", json={"variant": "basic", "players": ["Ana", "Bo"]}
                       ).get_json()
    events = f"/v1/games/{game['game_id']}/events"
    for limit in (least, most):
        assert client.get(f"{events}?limit={limit}").status_code == 200, limit
    for limit in (least - 1, most + 1):
        assert_problem(client.get(f"{events}?limit={limit}"), 400)


def test_the_docs_resume_a_seat_s_stream_with_a_new_ticket_and_after(
        client: FlaskClient) -> None:
    """A used ticket is refused (an ``EventSource``'s own reconnect), and a new ticket
    with ``?after=`` resumes after that version, as docs/api.md tells browsers to."""
    assert "EventSource` does so by itself" not in API_MD
    assert "with a new ticket" in API_MD and "?after=<the last event's id>&ticket=" in API_MD
    game = client.post("/v1/games", json={"variant": "basic", "players": ["Ana", "Bo"]}
                       ).get_json()
    path = f"/v1/games/{game['game_id']}"
    seat = game["game"]["turn"]["seat"]
    token = game["seats"][seat]["token"]
    moves = [{"type": "draw", "source": "stock"}]
    drawn = client.post(f"{path}/moves", json=moves[0], headers=auth(token)).get_json()
    client.post(f"{path}/moves", json={"type": "discard", "card": drawn["game"]["hand"][0]},
                headers=auth(token))

    def ticket() -> str:
        issued: str = client.post(f"{path}/stream-tickets", headers=auth(token)
                                  ).get_json()["ticket"]
        return issued

    used = ticket()
    first = client.get(f"{path}/events?ticket={used}", headers=SSE, buffered=False)
    assert first.status_code == 200
    first.close()
    again = client.get(f"{path}/events?ticket={used}",
                       headers={**SSE, "Last-Event-ID": "1"})  # EventSource's own retry
    assert_problem(again, 401)
    resumed = client.get(f"{path}/events?after=1&ticket={ticket()}", headers=SSE,
                         buffered=False)
    assert resumed.status_code == 200
    text = ""
    for chunk in resumed.response:
        text += chunk.decode() if isinstance(chunk, bytes) else chunk
        if "event: move" in text:
            break
    resumed.close()
    assert re.findall(r"^id: (\d+)$", text, re.MULTILINE) == ["2"]
