"""Watching the referee: a request id on every request, one log line per request (JSON, or
a readable line on a terminal: ``RUMMY_LOG_FORMAT``), and Prometheus metrics at
``/metrics`` (multiprocess mode under gunicorn).

No log line holds a card: requests are logged by method, route, status, duration, game id
and request id only, never their bodies or answers.

Every label of every metric takes its values from a bounded set (:class:`Bounded`): the
app's routes, HTTP's methods and statuses, the variants, move types and refusal codes, the
store's error kinds; anything else is counted as ``other`` (a path no route matches is the
route ``other``), so no request can add series to ``/metrics``.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import sys
import time
from collections.abc import Callable
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

from service.rules import VARIANTS, Code
from service.rules.moves import MOVE_TYPES
from service.store import StoreError

M = TypeVar("M", bound=MetricWrapperBase)

REQUEST_ID = "X-Request-ID"
_ID_RE = re.compile(r"^[A-Za-z0-9._:@/+=-]{1,128}$")

OTHER = "other"
"""The value a label takes for anything outside its known set: an HTTP method the service
does not know, a path no route matches, a variant or move type no one knows. Every label of
every metric has a bounded set of values, so no request can add series to ``/metrics``."""

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE",
                     "CONNECT"})
"""The HTTP methods a ``method`` label names (RFC 9110's and PATCH); any other token a
server accepts is counted as :data:`OTHER`."""
STATUSES = frozenset(str(code) for code in range(100, 600))
VARIANT_IDS = frozenset(VARIANTS)
MOVE_KINDS = frozenset(MOVE_TYPES)
VERDICTS = frozenset({"legal", *(code.value for code in Code)})
"""A move's verdict: legal, or the code it was refused with."""


def _store_error_kinds() -> frozenset[str]:
    """The names of the store's error classes (what ``rummy_store_errors_total`` counts)."""
    kinds, todo = set(), [StoreError]
    while todo:
        kind = todo.pop()
        kinds.add(kind.__name__)
        todo.extend(kind.__subclasses__())
    return frozenset(kinds)


Known = frozenset[str] | Callable[[], frozenset[str]] | None
"""The values a label may take: a set, a function giving it (read at first use of each
value), or None for a label the service fills from a set of its own (a route's rule)."""


class Bounded(Generic[M]):
    """A labelled metric whose label values are each kept to a known set (anything else is
    counted as :data:`OTHER`), and whose children are looked up in a dict of its own:
    prometheus-client's ``labels()`` checks the names, turns every value into text and takes
    a lock on each call, for every request. A child is the one ``labels()`` gives (made
    once, at first use); in multiprocess mode it writes to the file of the process using
    it. The dict holds at most one child per combination of known values."""

    def __init__(self, metric: M, *known: Known) -> None:
        self.metric = metric
        self._known_values = known
        self._children: dict[tuple[str, ...], M] = {}

    def _value(self, i: int, value: str) -> str:
        known = self._known_values[i]
        if known is None:
            return value
        allowed = known() if callable(known) else known
        return value if value in allowed else OTHER

    def labels(self, *values: str) -> M:
        child = self._children.get(values)
        if child is None:
            bounded = tuple(self._value(i, v) for i, v in enumerate(values))
            child = self._children.get(bounded)
            if child is None:
                child = self._children[bounded] = self.metric.labels(*bounded)
        return child

    __call__ = labels


REQUESTS = Bounded(Counter("rummy_http_requests_total",
                           "HTTP requests by route, method and status",
                           ["route", "method", "status"]), None, METHODS, STATUSES)
LATENCY = Bounded(Histogram("rummy_http_request_duration_seconds",
                            "HTTP request latency by route", ["route", "method"],
                            buckets=(0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5,
                                     1, 2.5)), None, METHODS)
MOVES = Bounded(Counter("rummy_moves_total", "Proposed moves by variant, type and verdict "
                        "(legal or the refusal code)", ["variant", "type", "verdict"]),
                VARIANT_IDS, MOVE_KINDS, VERDICTS)
GAMES_CREATED = Bounded(Counter("rummy_games_created_total", "Games created", ["variant"]),
                        VARIANT_IDS)
GAMES_FINISHED = Bounded(Counter("rummy_games_finished_total", "Matches finished",
                                 ["variant"]), VARIANT_IDS)
STORE_ERRORS = Bounded(Counter("rummy_store_errors_total", "Store errors by kind", ["kind"]),
                       _store_error_kinds)

log = logging.getLogger("service.access")


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


class TextFormatter(logging.Formatter):
    """One readable line per record, in the format of gunicorn's own lines, which it is
    written among: ``[2027-01-15 08:00:00 +0000] [4242] [INFO] GET /healthz 200 0.52 ms``
    for a request (its method, path, status and duration), the message for any other
    record, then its traceback if it has one."""

    def __init__(self) -> None:
        super().__init__("[%(asctime)s] [%(process)d] [%(levelname)s] %(message)s",
                         "%Y-%m-%d %H:%M:%S %z")

    def format(self, record: logging.LogRecord) -> str:
        method, status = getattr(record, "method", None), getattr(record, "status", None)
        if method is None or status is None:
            return super().format(record)
        return (f"[{self.formatTime(record, self.datefmt)}] [{record.process}] "
                f"[{record.levelname}] {method} {getattr(record, 'path', '')} {status} "
                f"{getattr(record, 'duration_ms', '?')} ms")


def formatter_for(fmt: str) -> logging.Formatter:
    """The formatter of ``RUMMY_LOG_FORMAT`` ``fmt``: ``auto`` is text on a terminal (the
    log is read by a person), else JSON (it is read by a program)."""
    if fmt == "auto":
        fmt = "text" if sys.stderr.isatty() else "json"
    return JsonFormatter() if fmt == "json" else TextFormatter()


def configure_logging(level: str, fmt: str) -> None:
    """Logs of the ``service`` loggers to stderr, as JSON lines or readable text
    (:func:`formatter_for`)."""
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
    handler.setFormatter(formatter_for(fmt))
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
    return rule.rule if rule is not None else OTHER


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
            REQUESTS(route, request.method, str(response.status_code)).inc()
            LATENCY(route, request.method).observe(elapsed)
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
    MOVES(variant, move_type, verdict).inc()
