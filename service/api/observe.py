"""Watching the referee: a request id on every request, one JSON log line per request, and
Prometheus metrics at ``/metrics`` (multiprocess mode under gunicorn).

No log line holds a card: requests are logged by method, route, status, duration, game id
and request id only, never their bodies or answers.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import sys
import time
from typing import Any, Generic, TypeVar

import orjson
from flask import Flask, Response, g, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.metrics import MetricWrapperBase

M = TypeVar("M", bound=MetricWrapperBase)

REQUEST_ID = "X-Request-ID"
_ID_RE = re.compile(r"^[A-Za-z0-9._:@/+=-]{1,128}$")

REQUESTS = Counter("rummy_http_requests_total", "HTTP requests by route, method and status",
                   ["route", "method", "status"])
LATENCY = Histogram("rummy_http_request_duration_seconds", "HTTP request latency by route",
                    ["route", "method"],
                    buckets=(0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5))
MOVES = Counter("rummy_moves_total", "Proposed moves by variant, type and verdict (legal or "
                "the refusal code)", ["variant", "type", "verdict"])
GAMES_CREATED = Counter("rummy_games_created_total", "Games created", ["variant"])
GAMES_FINISHED = Counter("rummy_games_finished_total", "Matches finished", ["variant"])
STORE_ERRORS = Counter("rummy_store_errors_total", "Store errors by kind", ["kind"])

log = logging.getLogger("service.access")


class _Children(Generic[M]):
    """A labelled metric's children by their label values, looked up in a dict of its own:
    prometheus-client's ``labels()`` checks the names, turns every value into text and takes
    a lock on each call, for every request. A child is the one ``labels()`` gives (made
    once, at first use); in multiprocess mode it writes to the file of the process using
    it."""

    def __init__(self, metric: M) -> None:
        self._metric = metric
        self._known: dict[tuple[str, ...], M] = {}

    def __call__(self, *values: str) -> M:
        child = self._known.get(values)
        if child is None:
            child = self._known[values] = self._metric.labels(*values)
        return child


_REQUESTS, _LATENCY, _MOVES = _Children(REQUESTS), _Children(LATENCY), _Children(MOVES)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and the record's extras.

    Encoded by orjson (a value it cannot encode is written as its ``str``), with the
    timestamp's seconds formatted once per second: the line is written for every request."""

    FIELDS = ("method", "route", "path", "status", "duration_ms", "game_id", "request_id",
              "remote")

    def __init__(self) -> None:
        super().__init__()
        self._second: tuple[int, str] = (-1, "")
        """The last whole second formatted, and its text (a race only formats it again)."""

    def _ts(self, record: logging.LogRecord) -> str:
        second = int(record.created)
        done, text = self._second
        if done != second:
            text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
            self._second = (second, text)
        return f"{text}.{int(record.msecs):03d}Z"

    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {
            "ts": self._ts(record),
            "level": record.levelname.lower(), "logger": record.name,
            "msg": record.getMessage(),
        }
        for name in self.FIELDS:
            value = getattr(record, name, None)
            if value is not None:
                doc[name] = value
        if record.exc_info:
            doc["error"] = self.formatException(record.exc_info)
        return orjson.dumps(doc, default=str).decode()


def configure_logging(level: str, fmt: str) -> None:
    """Logs of the ``service`` loggers to stderr, as JSON lines (or plain text)."""
    root = logging.getLogger("service")
    root.setLevel(level)
    # No log line of the service's, nor gunicorn's, shows the caller's file, function and
    # line or the thread's name: the logging module need not look them up for every line
    # (the switches its "Optimization" how-to names). gunicorn's lines show the process id,
    # which stays on.
    logging._srcfile = None
    logging.logThreads = False
    logging.logMultiprocessing = False
    if any(getattr(h, "_rummy", False) for h in root.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(
        "%(asctime)s %(levelname)s %(name)s %(message)s"))
    handler._rummy = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.propagate = False


def new_request_id() -> str:
    """A request id unique across processes and restarts: 32 hex digits, a random prefix
    drawn per process and a counter. No system call per request, as ``uuid4`` makes;
    request ids need to be unique, not unguessable."""
    prefix, counter = _ids
    return f"{prefix}{next(counter):016x}"


_PREFIX_BYTES = 8
"""Random bytes of a request id's per-process prefix (written as twice as many hex
digits; the counter's 16 follow)."""


def process_of(request_id: str) -> str:
    """The prefix of a request id made by :func:`new_request_id` that names the process
    (the gunicorn worker) that made it."""
    return request_id[:2 * _PREFIX_BYTES]


def _new_ids() -> None:
    global _ids
    _ids = (os.urandom(_PREFIX_BYTES).hex(), itertools.count())


_ids: tuple[str, itertools.count[int]]
_new_ids()
os.register_at_fork(after_in_child=_new_ids)  # a forked worker draws a prefix of its own


def _route() -> str:
    rule = request.url_rule
    return rule.rule if rule is not None else "(unmatched)"


def install(app: Flask, metrics: bool) -> None:
    """Request ids, access log lines and metrics on ``app``."""

    @app.before_request
    def _start() -> None:
        given = request.headers.get(REQUEST_ID, "")
        g.request_id = given if _ID_RE.match(given) else new_request_id()
        g.started = time.perf_counter()

    @app.after_request
    def _finish(response: Response) -> Response:
        request_id = g.get("request_id") or new_request_id()
        response.headers[REQUEST_ID] = request_id
        elapsed = time.perf_counter() - g.get("started", time.perf_counter())
        route = _route()
        if metrics and route != "/metrics":
            _REQUESTS(route, request.method, str(response.status_code)).inc()
            _LATENCY(route, request.method).observe(elapsed)
        view_args = request.view_args or {}
        log.info("request", extra={
            "method": request.method, "route": route, "path": request.path,
            "status": response.status_code, "duration_ms": round(elapsed * 1000, 2),
            "game_id": view_args.get("game_id"), "request_id": request_id,
            "remote": request.remote_addr})
        return response

    if metrics:
        @app.get("/metrics")
        def _metrics() -> Response:
            if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
                registry = CollectorRegistry()
                multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
            else:
                registry = REGISTRY
            return Response(generate_latest(registry), mimetype=CONTENT_TYPE_LATEST)


def move_seen(variant: str, move_type: str, verdict: str) -> None:
    _MOVES(variant, move_type, verdict).inc()
