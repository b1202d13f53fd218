"""CORS in a real browser (issue 45): headless Chromium on a page of another origin calls
``rummy-referee serve`` (``RUMMY_CORS_ORIGINS`` naming that origin) with real ``fetch``es
that send every header a client sends (``Authorization``, ``Content-Type``, ``If-Match``,
``If-None-Match``, ``Idempotency-Key``, ``X-API-Key``, ``Last-Event-ID``, ``Prefer``) and
read, in the page's script, every header a client reads (``ETag``, ``Location``,
``Retry-After``, ``Idempotent-Replayed``, ``Content-Language``, ``RateLimit``,
``RateLimit-Policy``, and ``Preference-Applied`` of a long poll with ``Prefer: wait=N``);
a header not exposed (``Vary``) stays hidden from it. A page on an origin not named is
refused.
The browser is started as tests/system/test_web.py starts it (the system's Chromium).
"""

from __future__ import annotations

import http.server
import json
import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from service.redis_server import RedisServer, free_port
from tests.support import serving
from tests.support.serving import Server
from tests.system.test_web import browser  # noqa: F401  (the fixture)

pytestmark = pytest.mark.slow

API_KEY = "browser-test-key"
PAGE = b"<!doctype html><html><head><title>a client</title></head><body></body></html>"


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def page_port() -> Iterator[int]:
    """An empty page served on another port: another origin than the API's."""
    port = free_port()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), _Page)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="module")
def api(redis_server: RedisServer, page_port: int, tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[Server]:
    with serving.served(tmp_path_factory.mktemp("cors"), redis_server.url, env={
        "RUMMY_CORS_ORIGINS": f"http://127.0.0.1:{page_port}",
        "RUMMY_API_KEYS": API_KEY, "RUMMY_CREATE_RATE_LIMITS": "4/minute",
        "RUMMY_RATE_LIMITS": "1000/minute"}) as server:
        yield server


CLIENT = """async ([api, key]) => {
  const out = {};
  const json = {"Content-Type": "application/json"};
  const call = async (name, path, init) => {
    try {
      const r = await fetch(api + path, init);
      out[name] = {status: r.status, headers: Object.fromEntries(r.headers.entries()),
                   body: r.status === 304 ? null : await r.text()};
    } catch (error) {
      out[name] = {blocked: String(error)};
    }
    return out[name];
  };
  const game = {variant: "basic", players: ["Ana", "Bo"]};
  const created = await call("create", "/v1/games", {method: "POST", body:
      JSON.stringify(game), headers: {...json, "X-API-Key": key, "Prefer": "respond-async"}});
  if (!created.body) return out;
  const answer = JSON.parse(created.body);
  const id = answer.game_id;
  const seat = answer.game.turn.seat;
  const bearer = {"Authorization": "Bearer " + answer.seats[seat].token};
  const view = await call("view", "/v1/games/" + id, {});
  await call("unchanged", "/v1/games/" + id, {headers: {"If-None-Match": view.headers.etag}});
  // a long poll, waiting while the game is at the view's version: the move answers it
  const polling = call("poll", "/v1/games/" + id, {headers: {
      "If-None-Match": view.headers.etag, "Prefer": "wait=10"}});
  await new Promise((done) => setTimeout(done, 300));
  const move = {method: "POST", body: JSON.stringify({type: "draw", source: "stock"}),
                headers: {...json, ...bearer, "If-Match": view.headers.etag,
                          "Idempotency-Key": "draw-1"}};
  await call("move", "/v1/games/" + id + "/moves", move);
  await polling;
  await call("replay", "/v1/games/" + id + "/moves", move);
  await call("events", "/v1/games/" + id + "/events",
             {headers: {...bearer, "Last-Event-ID": "0"}});
  await call("meld", "/v1/melds/check", {method: "POST", headers: {...json,
             "Accept-Language": "da"}, body: JSON.stringify({variant: "basic",
             cards: ["7h", "8H", "10H"]})});
  for (let i = 0; i < 8; i++) {
    const more = await call("limited", "/v1/games", {method: "POST", body:
        JSON.stringify(game), headers: {...json, "X-API-Key": key}});
    if (more.status !== 201) break;
  }
  return out;
}"""


def test_a_page_on_another_origin_uses_every_header(browser: Any, api: Server,  # noqa: F811
                                                     page_port: int) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"http://127.0.0.1:{page_port}/")
        out = page.evaluate(CLIENT, [api.base_url, API_KEY])
    finally:
        context.close()
    blocked = {name: call for name, call in out.items() if "blocked" in call}
    assert blocked == {}, blocked
    created = out["create"]
    assert created["status"] == 201, created
    game_id = json.loads(created["body"])["game_id"]
    assert created["headers"]["location"] == f"/v1/games/{game_id}"
    assert created["headers"]["etag"]
    view, unchanged = out["view"], out["unchanged"]
    assert view["status"] == 200 and view["headers"]["etag"]
    assert unchanged["status"] == 304, unchanged
    assert "vary" not in view["headers"]  # not exposed: the browser hides it (Vary: Origin)
    # the rate-limit headers (IETF draft), readable by the page
    assert '"requests";q=1000;w=60' in view["headers"]["ratelimit-policy"], view["headers"]
    assert view["headers"]["ratelimit"].startswith('"requests";r=')
    assert '"create";q=4;w=60' in created["headers"]["ratelimit-policy"], created["headers"]
    # what is left of the window: at most 3 (the Redis is shared with other tests' servers,
    # which may have created games from this address within the minute)
    left = re.search(r'"create";r=(\d+);t=(\d+)', created["headers"]["ratelimit"])
    assert left is not None and int(left[1]) <= 3 and 0 < int(left[2]) <= 60, created["headers"]
    poll = out["poll"]  # a long poll the move answered, with the preference it applied
    assert poll["status"] == 200, poll
    assert poll["headers"]["preference-applied"] == "wait=10", poll["headers"]
    assert json.loads(poll["body"])["version"] == 1
    assert out["move"]["status"] == 200, out["move"]
    assert out["replay"]["status"] == 200
    assert out["replay"]["headers"]["idempotent-replayed"] == "true"
    assert out["events"]["status"] == 200, out["events"]
    assert out["meld"]["status"] == 200
    assert out["meld"]["headers"]["content-language"] == "da"
    limited = out["limited"]
    assert limited["status"] == 429, limited
    assert int(limited["headers"]["retry-after"]) >= 1
    assert '"create";q=4;w=60' in limited["headers"]["ratelimit-policy"]
    assert '"create";r=0;' in limited["headers"]["ratelimit"], limited["headers"]
    assert json.loads(limited["body"])["policy"] == "create"


def test_a_page_on_an_origin_not_named_is_refused(browser: Any, api: Server,  # noqa: F811
                                                  page_port: int) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"http://localhost:{page_port}/")  # another origin than 127.0.0.1's
        out = page.evaluate(CLIENT, [api.base_url, API_KEY])
    finally:
        context.close()
    assert "blocked" in out["create"], out["create"]
