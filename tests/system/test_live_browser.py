"""A browser's ``EventSource`` on a seat's stream ticket (docs/api.md, "Live tables"), in
headless Chromium (as tests/system/test_web.py runs it): a page of another origin, let in
by ``RUMMY_CORS_ORIGINS``, receives the card its seat draws; a second page, with the other
seat's ticket, sees the same draw without the card."""

from __future__ import annotations

import http.server
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.support.serving import Server
from tests.system.test_web import browser  # noqa: F401  (the fixture: system Chromium)

pytestmark = pytest.mark.slow

PAGE = """<!doctype html><title>table</title><script>
window.got = [];
window.opened = false;
const es = new EventSource(new URLSearchParams(location.search).get("stream"));
es.addEventListener("open", () => { window.opened = true; });
es.addEventListener("move", (ev) => window.got.push(JSON.parse(ev.data)));
</script>"""


@pytest.fixture
def origin() -> Iterator[str]:
    """Another origin on this host (a port of its own) serving :data:`PAGE`."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = PAGE.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page) as httpd:
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
        httpd.shutdown()


@pytest.fixture
def cors_server(tmp_path: Path, redis_url: str, origin: str) -> Iterator[Server]:
    server = Server(tmp_path, redis_url, workers=1, env={"RUMMY_CORS_ORIGINS": origin})
    try:
        server.wait_ready()
        yield server
    finally:
        server.close()


def _page(browser: Any, origin: str, stream_url: str) -> Any:  # noqa: F811 (the fixture)
    page = browser.new_context().new_page()
    page.goto(f"{origin}/?{urllib.parse.urlencode({'stream': stream_url})}")
    return page


def test_an_event_source_of_another_origin_streams_its_seats_cards(
        browser: Any, cors_server: Server, origin: str) -> None:  # noqa: F811
    """Each page's stream is open, and has caught up with the log (the first two entries,
    read when it opened), before the move it then receives is made: that move reaches the
    pages as a live push, not as part of a catch-up read."""
    base = cors_server.base_url
    created = requests.post(f"{base}/v1/games", json={"variant": "basic",
                                                      "players": ["Ana", "Bo"]}, timeout=10)
    assert created.status_code == 201, created.text
    game_id, tokens = created.json()["game_id"], [s["token"] for s in created.json()["seats"]]
    first = created.json()["game"]["turn"]["seat"]
    second = 1 - first

    def move(seat: int, body: dict[str, Any]) -> dict[str, Any]:
        resp = requests.post(f"{base}/v1/games/{game_id}/moves", json=body, timeout=10,
                             headers={"Authorization": f"Bearer {tokens[seat]}"})
        assert resp.status_code == 200, resp.text
        answer: dict[str, Any] = resp.json()
        return answer

    # before any page: the first seat draws and discards (versions 1 and 2)
    before = move(first, {"type": "draw", "source": "stock"})
    first_card = next(e["card"] for e in before["events"] if e["type"] == "draw")
    move(first, {"type": "discard", "card": first_card})
    pages = []
    for seat in (second, first):
        issued = requests.post(f"{base}/v1/games/{game_id}/stream-tickets", timeout=10,
                               headers={"Authorization": f"Bearer {tokens[seat]}"})
        assert issued.status_code == 201, issued.text
        pages.append(_page(browser, origin, f"{base}/v1/games/{game_id}/events"
                                    f"?ticket={issued.json()['ticket']}"))
    for page in pages:  # open, and caught up: the stream now waits for the next move
        page.wait_for_function("() => window.opened && window.got.length >= 2",
                               timeout=15_000)
        assert page.evaluate("() => window.got.map((e) => e.version)") == [1, 2]
    moved = move(second, {"type": "draw", "source": "stock"})
    drawn = next(e["card"] for e in moved["events"] if e["type"] == "draw")
    seen, caught_up = [], []
    for page in pages:
        page.wait_for_function("() => window.got.length >= 3", timeout=15_000)
        assert page.evaluate("() => window.got.map((e) => e.version)") == [1, 2, 3]
        seen.append(page.evaluate("() => window.got[2].events[0]"))
        caught_up.append(page.evaluate("() => window.got[0].events[0]"))
        page.context.close()
    assert seen[0] == {"type": "draw", "seat": second, "source": "stock", "card": drawn}
    assert seen[1] == {"type": "draw", "seat": second, "source": "stock"}
    # the catch-up was redacted for each seat too
    assert caught_up[0] == {"type": "draw", "seat": first, "source": "stock"}
    assert caught_up[1] == {"type": "draw", "seat": first, "source": "stock", "card": first_card}


@pytest.fixture
def short_streams(tmp_path: Path, redis_url: str) -> Iterator[Server]:
    """A server whose streams end after 2 s (``RUMMY_SSE_MAX_SECONDS``): the web table
    has to resume them."""
    server = Server(tmp_path, redis_url, workers=1, env={
        "RUMMY_SSE_MAX_SECONDS": "2", "RUMMY_SSE_HEARTBEAT_SECONDS": "1"})
    try:
        server.wait_ready()
        yield server
    finally:
        server.close()


def test_the_web_table_resumes_its_seats_stream_with_a_new_ticket_and_after(
        browser: Any, short_streams: Server) -> None:  # noqa: F811
    """``/play`` holding a seat's link: its stream opens with a ticket, and once it ends
    (here after 2 s) the page asks for a new ticket and resumes with ``?after=`` the id of
    the last event it received, never sending a used ticket again (docs/api.md, "The move
    log and event streams")."""
    base = short_streams.base_url
    created = requests.post(f"{base}/v1/games", json={"variant": "basic",
                                                      "players": ["Ana", "Bo"]}, timeout=10)
    assert created.status_code == 201, created.text
    game_id = created.json()["game_id"]
    tokens = [s["token"] for s in created.json()["seats"]]
    mover = created.json()["game"]["turn"]["seat"]
    watcher = 1 - mover
    streams: list[dict[str, str]] = []  # each stream request's query
    issued: list[str] = []  # each ticket the page was given

    def on_request(req: Any) -> None:
        url = urllib.parse.urlsplit(req.url)
        if url.path == f"/v1/games/{game_id}/events" and "ticket=" in url.query:
            streams.append(dict(urllib.parse.parse_qsl(url.query)))

    def on_response(resp: Any) -> None:
        if resp.url.endswith(f"/v1/games/{game_id}/stream-tickets") and resp.status == 201:
            issued.append(resp.json()["ticket"])

    context = browser.new_context()
    try:
        page = context.new_page()
        page.on("request", on_request)
        page.on("response", on_response)
        page.goto(f"{base}/play#game={game_id}&token={tokens[watcher]}")
        _until(page, lambda: len(streams) >= 1, "the page's first stream")
        assert streams[0]["after"] == "0"
        moved = requests.post(f"{base}/v1/games/{game_id}/moves", timeout=10,
                              json={"type": "draw", "source": "stock"},
                              headers={"Authorization": f"Bearer {tokens[mover]}"})
        assert moved.status_code == 200, moved.text
        _until(page, lambda: len(streams) >= 2, "the stream opened again once it ended")
        _until(page, lambda: len(streams) >= 3, "and again")
    finally:
        context.close()
    tickets = [query["ticket"] for query in streams]
    assert len(set(tickets)) == len(tickets), "a used ticket was sent again"
    assert set(tickets) <= set(issued)
    assert [query["after"] for query in streams[1:3]] == ["1", "1"]  # the move's version


def _until(page: Any, done: Any, what: str, timeout: float = 15.0) -> None:
    """Until ``done()``, letting Playwright deliver the page's events meanwhile."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            pytest.fail(f"not seen within {timeout} s: {what}")
        page.wait_for_timeout(50)
