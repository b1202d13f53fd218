"""A browser's ``EventSource`` on a seat's stream ticket (docs/api.md, "Live tables"), in
headless Chromium (as tests/system/test_web.py runs it): a page of another origin, let in
by ``RUMMY_CORS_ORIGINS``, receives the card its seat draws; a second page, with the other
seat's ticket, sees the same draw without the card."""

from __future__ import annotations

import http.server
import threading
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
const es = new EventSource(new URLSearchParams(location.search).get("stream"));
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
    base = cors_server.base_url
    created = requests.post(f"{base}/v1/games", json={"variant": "basic",
                                                      "players": ["Ana", "Bo"]}, timeout=10)
    assert created.status_code == 201, created.text
    game_id, tokens = created.json()["game_id"], [s["token"] for s in created.json()["seats"]]
    mover = created.json()["game"]["turn"]["seat"]
    pages = []
    for seat in (mover, 1 - mover):
        issued = requests.post(f"{base}/v1/games/{game_id}/stream-tickets", timeout=10,
                               headers={"Authorization": f"Bearer {tokens[seat]}"})
        assert issued.status_code == 201, issued.text
        pages.append(_page(browser, origin, f"{base}/v1/games/{game_id}/events"
                                    f"?ticket={issued.json()['ticket']}"))
    for page in pages:  # each stream open (its first frame arrives before any move)
        page.wait_for_function("() => window.got !== undefined")
    moved = requests.post(f"{base}/v1/games/{game_id}/moves", timeout=10,
                          json={"type": "draw", "source": "stock"},
                          headers={"Authorization": f"Bearer {tokens[mover]}"})
    assert moved.status_code == 200, moved.text
    drawn = next(e["card"] for e in moved.json()["events"] if e["type"] == "draw")
    seen = []
    for page in pages:
        page.wait_for_function("() => window.got.length >= 1", timeout=15_000)
        seen.append(page.evaluate("() => window.got[0].events[0]"))
        page.context.close()
    assert seen[0] == {"type": "draw", "seat": mover, "source": "stock", "card": drawn}
    assert seen[1] == {"type": "draw", "seat": mover, "source": "stock"}
