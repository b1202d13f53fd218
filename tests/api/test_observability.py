"""Request ids, one log line per request (JSON, or text on a terminal; never a card),
Prometheus metrics."""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from service.api import observe
from service.api.observe import JsonFormatter, TextFormatter, new_request_id
from service.redis_server import RedisServer
from tests.support.serving import served

ROOT = Path(__file__).resolve().parents[2]
CARD = re.compile(r"(?<![A-Za-z0-9])(JK|[A2-9TJQK][SHDC])(?![A-Za-z0-9])")


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(JsonFormatter())
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def log_lines() -> Iterator[Lines]:
    handler = Lines()
    logger = logging.getLogger("service")
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)


def test_request_ids_are_echoed_or_made(client: FlaskClient) -> None:
    given = client.get("/v1/variants", headers={"X-Request-ID": "abc-123"})
    assert given.headers["X-Request-ID"] == "abc-123"
    made = client.get("/v1/variants").headers["X-Request-ID"]
    assert re.fullmatch(r"[0-9a-f]{32}", made)
    bad = client.get("/v1/variants", headers={"X-Request-ID": "x" * 500})
    assert re.fullmatch(r"[0-9a-f]{32}", bad.headers["X-Request-ID"])
    assert client.get("/nope").headers["X-Request-ID"]


def test_one_json_line_per_request_and_no_card_in_any(client: FlaskClient,
                                                      log_lines: Lines) -> None:
    walkthrough = json.loads((ROOT / "examples" / "walkthrough-game.json").read_text())
    game = client.post("/v1/games", json=walkthrough).get_json()
    ana = game["seats"][0]["token"]
    auth = {"Authorization": f"Bearer {ana}", "X-Request-ID": "req-7"}
    client.get(f"/v1/games/{game['game_id']}/me", headers=auth)
    client.post(f"/v1/games/{game['game_id']}/moves", json={"type": "draw", "source": "stock"},
                headers=auth)
    client.post(f"/v1/games/{game['game_id']}/moves", json={"type": "discard", "card": "7H"},
                headers=auth)
    client.post(f"/v1/games/{game['game_id']}/moves", json={"type": "discard", "card": "JK"},
                headers=auth)
    requests_logged = [json.loads(line) for line in log_lines.lines
                       if json.loads(line)["msg"] == "request"]
    assert len(requests_logged) == 5
    first = requests_logged[0]
    assert first["route"] == "/v1/games" and first["status"] == 201
    assert {"ts", "level", "method", "route", "status", "duration_ms", "request_id"} <= set(
        first)
    me = requests_logged[1]
    assert (me["game_id"], me["request_id"], me["route"]) == (
        game["game_id"], "req-7", "/v1/games/<game_id>/me")
    for line in log_lines.lines:
        doc = json.loads(line)
        for key, value in doc.items():
            if key in ("game_id", "request_id", "path", "ts"):
                continue
            assert not CARD.search(str(value)), (key, value)


def _metric(text: str, name: str, **labels: str) -> float:
    want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        if line.startswith(name + "{"):
            got = line[len(name) + 1:line.index("}")]
            if ",".join(sorted(got.split(","))) == want:
                return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_metrics_count_requests_moves_and_games(client: FlaskClient) -> None:
    before = client.get("/metrics").get_data(as_text=True)
    game = client.post("/v1/games", json={"variant": "basic", "players": ["a", "b"],
                                          "dealer": 1}).get_json()
    auth = {"Authorization": f"Bearer {game['seats'][1]['token']}"}
    refused = client.post(f"/v1/games/{game['game_id']}/moves",
                          json={"type": "draw", "source": "stock"}, headers=auth)
    assert refused.get_json()["code"] == "NOT_YOUR_TURN"
    auth0 = {"Authorization": f"Bearer {game['seats'][0]['token']}"}
    assert client.post(f"/v1/games/{game['game_id']}/moves",
                       json={"type": "draw", "source": "stock"},
                       headers=auth0).status_code == 200
    reply = client.get("/metrics")
    assert reply.content_type.startswith("text/plain")
    after = reply.get_data(as_text=True)
    for name, labels, delta in [
        ("rummy_games_created_total", {"variant": "basic"}, 1),
        ("rummy_moves_total", {"variant": "basic", "type": "draw", "verdict": "legal"}, 1),
        ("rummy_moves_total", {"variant": "basic", "type": "draw",
                               "verdict": "NOT_YOUR_TURN"}, 1),
        ("rummy_http_requests_total", {"route": "/v1/games", "method": "POST",
                                       "status": "201"}, 1),
    ]:
        assert _metric(after, name, **labels) - _metric(before, name, **labels) == delta, name
    assert "rummy_http_request_duration_seconds_bucket" in after


@pytest.mark.slow
def test_metrics_add_up_over_gunicorn_workers(redis_server: RedisServer, redis_url: str,
                                              tmp_path: Path) -> None:
    env = {"RUMMY_RATE_LIMITS": "off", "RUMMY_CREATE_RATE_LIMITS": "off",
           "RUMMY_THREADS": "2"}
    saved = os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)  # serve makes its own
    try:
        with served(tmp_path, redis_url, env=env) as server:
            body = json.dumps({"variant": "basic", "players": ["a", "b"]}).encode()
            for _ in range(8):
                request = urllib.request.Request(
                    server.base_url + "/v1/games", data=body, method="POST",
                    headers={"Content-Type": "application/json", "Connection": "close"})
                urllib.request.urlopen(request, timeout=5).close()
            for _ in range(4):  # whichever worker answers, it reports every worker's counts
                with urllib.request.urlopen(server.base_url + "/metrics", timeout=5) as reply:
                    text = reply.read().decode()
                assert _metric(text, "rummy_games_created_total", variant="basic") == 8
    finally:
        if saved is not None:
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = saved


@pytest.mark.slow
@pytest.mark.parametrize("access_log", ["", "1"])
def test_served_requests_are_logged_once_unless_gunicorn_access_log_is_asked_for(
        redis_url: str, tmp_path: Path, access_log: str) -> None:
    """Under gunicorn, the service's JSON line is the access log: gunicorn's own access line
    (the same request again, in its format, on stdout) only with ``RUMMY_ACCESS_LOG=1``."""
    env = {"RUMMY_ACCESS_LOG": access_log} if access_log else {}
    with served(tmp_path, redis_url, env=env) as server:
        for _ in range(3):
            urllib.request.urlopen(server.base_url + "/v1/variants?probe=1", timeout=5).close()
    output = server.output()  # once it has stopped: gunicorn logs after the answer is sent
    ours = [line for line in output.splitlines()
            if line.startswith("{") and json.loads(line).get("route") == "/v1/variants"]
    theirs = [line for line in output.splitlines()
              if '"GET /v1/variants?probe=1 HTTP/1.1" 200' in line]
    assert len(ours) == 3
    assert len(theirs) == (3 if access_log else 0)


def test_made_request_ids_are_unique_and_each_process_draws_its_own_prefix() -> None:
    made = [new_request_id() for _ in range(2000)]
    assert len(set(made)) == len(made)
    assert all(re.fullmatch(r"[0-9a-f]{32}", rid) for rid in made)
    assert len({rid[:16] for rid in made}) == 1  # one prefix in this process
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # a forked worker, as gunicorn makes them
        os.write(write, new_request_id().encode())
        os._exit(0)
    os.close(write)
    child = os.read(read, 64).decode()
    os.close(read)
    os.waitpid(pid, 0)
    assert re.fullmatch(r"[0-9a-f]{32}", child) and child[:16] != made[0][:16]


def _record(created: float, **extra: object) -> logging.LogRecord:
    record = logging.LogRecord("service.access", logging.INFO, __file__, 1, "request", None,
                               None)
    record.created, record.msecs = created, (created % 1) * 1000
    record.__dict__.update(extra)
    return record


def test_log_line_time_stamps_follow_the_clock_and_odd_values_are_written_as_text() -> None:
    formatter = JsonFormatter()
    first = json.loads(formatter.format(_record(1_800_000_000.25, status=200)))
    same_second = json.loads(formatter.format(_record(1_800_000_000.5)))
    next_day = json.loads(formatter.format(_record(1_800_086_401.125, game_id=Path("g1"))))
    assert first["ts"] == "2027-01-15T08:00:00.250Z" and first["status"] == 200
    assert same_second["ts"] == "2027-01-15T08:00:00.500Z"
    assert next_day["ts"] == "2027-01-16T08:00:01.125Z" and next_day["game_id"] == "g1"
    assert first["level"] == "info" and first["msg"] == "request"


def test_log_records_keep_the_process_id_gunicorn_shows(client: FlaskClient) -> None:
    """The app switches off the logging module's caller and thread lookups, which no line
    shows; gunicorn's own lines show the process id, which stays."""
    record = logging.getLogger("gunicorn.error").makeRecord(
        "gunicorn.error", logging.INFO, __file__, 1, "Worker exiting", None, None)
    assert record.process == os.getpid()
    line = logging.Formatter("[%(process)d] [%(levelname)s] %(message)s").format(record)
    assert line == f"[{os.getpid()}] [INFO] Worker exiting"


def _series(text: str) -> set[str]:
    """The series of the service's metrics in a ``/metrics`` answer: name and labels."""
    return {line.rsplit(" ", 1)[0] for line in text.splitlines() if line.startswith("rummy_")}


def test_invented_methods_paths_and_bodies_add_a_bounded_number_of_series(
        client: FlaskClient) -> None:
    """Every label has a bounded set of values: a method the service does not know is
    counted as ``other``, a path no route matches as the one route ``other``, and a move
    type or variant no one knows makes no series of its own. Two floods of different
    invented values therefore leave the same series behind, and none names what was
    invented."""
    game = client.post("/v1/games", json={"variant": "basic", "players": ["a", "b"]}
                       ).get_json()
    gid = game["game_id"]
    auth = {"Authorization": f"Bearer {game['seats'][0]['token']}"}
    before = _series(client.get("/metrics").get_data(as_text=True))

    def flood(tag: str) -> None:
        for i in range(60):
            invented = f"Q{tag}{i}Z"
            assert client.open("/v1/variants", method=invented).status_code == 405
            assert client.open(f"/v1/games/{gid}/me", method=invented,
                               headers=auth).status_code == 405
            assert client.get(f"/{invented}/{i}").status_code == 404
            assert client.open(f"/v1/{invented}", method=invented).status_code in (404, 405)
            assert client.post(f"/v1/games/{gid}/moves", json={"type": invented},
                               headers=auth).status_code == 400
            assert client.post("/v1/games", json={"variant": invented,
                                                  "players": ["a", "b"]}).status_code == 400

    flood("a")
    first_text = client.get("/metrics").get_data(as_text=True)
    first = _series(first_text)
    flood("b")
    second_text = client.get("/metrics").get_data(as_text=True)
    second = _series(second_text)
    assert second == first, sorted(second - first)[:10]
    assert len(second - before) <= 60, len(second - before)
    for text in (first_text, second_text):
        assert not re.search(r"Q[ab]\d+Z", text, re.IGNORECASE)
    assert _metric(second_text, "rummy_http_requests_total", route="other", method="GET",
                   status="404") >= 120
    assert _metric(second_text, "rummy_http_requests_total", route="other",
                   method="other", status="405") >= 240


def test_every_labelled_metric_keeps_its_labels_to_their_known_values() -> None:
    """What a label is given outside its known set is counted as ``other``, whatever calls
    the metric: a variant, move type or verdict no one knows, a store error kind that is
    not one of the store's errors, a method or status out of HTTP's."""
    from prometheus_client import REGISTRY

    from service.api import observe

    def value(name: str, **labels: str) -> float:
        return REGISTRY.get_sample_value(name, labels) or 0.0

    moves = {"variant": "other", "type": "other", "verdict": "other"}
    before = value("rummy_moves_total", **moves)
    observe.move_seen("no-such-variant", "fly", "BOGUS")
    assert value("rummy_moves_total", **moves) == before + 1
    assert value("rummy_moves_total", variant="no-such-variant", type="fly",
                 verdict="BOGUS") == 0
    kept = {"variant": "rummy51", "type": "meld", "verdict": "OPENING_TOO_LOW"}
    before = value("rummy_moves_total", **kept)
    observe.move_seen("rummy51", "meld", "OPENING_TOO_LOW")
    assert value("rummy_moves_total", **kept) == before + 1
    for metric, name in ((observe.GAMES_CREATED, "rummy_games_created_total"),
                         (observe.GAMES_FINISHED, "rummy_games_finished_total")):
        before = value(name, variant="other")
        metric.labels("gin-deluxe").inc()
        assert value(name, variant="other") == before + 1
    before = value("rummy_store_errors_total", kind="other")
    observe.STORE_ERRORS.labels("KeyError").inc()
    observe.STORE_ERRORS.labels("StoreUnavailable").inc()
    assert value("rummy_store_errors_total", kind="other") == before + 1
    assert value("rummy_store_errors_total", kind="StoreUnavailable") >= 1
    before = value("rummy_http_requests_total", route="/x", method="other", status="other")
    observe.REQUESTS("/x", "BREW", "999").inc()
    assert value("rummy_http_requests_total", route="/x", method="other",
                 status="other") == before + 1


def test_a_text_log_line_is_one_readable_line_in_gunicorns_format() -> None:
    """``RUMMY_LOG_FORMAT=text`` (the default on a terminal): a request is one line, in the
    format of gunicorn's own lines beside it; another record is its message and, for an
    error, its traceback."""
    formatter = TextFormatter()
    record = _record(1_800_000_000.25, method="POST", route="/v1/games/<game_id>/moves",
                     path="/v1/games/g1/moves", status=422, duration_ms=3.25, game_id="g1",
                     request_id="r" * 32, remote="127.0.0.1")
    record.process = 4242
    when = time.strftime("%Y-%m-%d %H:%M:%S %z", time.localtime(record.created))
    assert formatter.format(record) == (
        f"[{when}] [4242] [INFO] POST /v1/games/g1/moves 422 3.25 ms")
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        error = logging.LogRecord("service.api", logging.ERROR, __file__, 1, "unhandled error",
                                  None, sys.exc_info())
    error.created, error.process = 1_800_000_000.0, 7
    lines = formatter.format(error).splitlines()
    assert lines[0] == f"[{when}] [7] [ERROR] unhandled error"
    assert lines[-1] == "RuntimeError: boom"


@pytest.mark.parametrize(("setting", "terminal", "chosen"), [
    ("auto", True, TextFormatter), ("auto", False, JsonFormatter),
    ("json", True, JsonFormatter), ("text", False, TextFormatter)])
def test_the_log_format_is_text_on_a_terminal_unless_set(
        monkeypatch: pytest.MonkeyPatch, setting: str, terminal: bool, chosen: type) -> None:
    class Stderr:
        def isatty(self) -> bool:
            return terminal

    monkeypatch.setattr(observe.sys, "stderr", Stderr())
    assert isinstance(observe.formatter_for(setting), chosen)
