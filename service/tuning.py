"""The serving settings that differ from gunicorn's defaults, each for what it was measured
to be worth: bench/README.md, "Serving settings", gives the figures. Each is on by default
and has its variable to turn it off (``RUMMY_REUSE_PORT``, ``RUMMY_KEEPALIVE_REQUESTS``,
``RUMMY_PIN_WORKERS``; see docs/operations.md, "Configuration"), but for the freeze of the
loaded app, which changes nothing but the collector's work. :mod:`service.gunicorn_hooks`
calls these from gunicorn's hooks.
"""

import gc
import os
import socket
from typing import Any

from service.config import Settings, least_used_cpu, pins_workers


def reuse_port(settings: Settings) -> bool:
    """Whether each worker listens on a socket of its own (gunicorn binds one per worker
    with ``SO_REUSEPORT``, the master none), so that the kernel spreads new connections
    evenly over the workers. With one shared socket, whichever worker wakes first takes the
    next connection, and a kept-alive connection stays where it fell: under open load one
    worker's queue grew while the CPUs sat idle. Not for a Unix socket."""
    return (settings.reuse_port and not settings.bind.startswith("unix:")
            and hasattr(socket, "SO_REUSEPORT"))


def close_after(req: Any, keepalive_requests: int) -> None:
    """The ``keepalive_requests``-th request on a connection (``RUMMY_KEEPALIVE_REQUESTS``;
    0: none) is its last: gunicorn answers it with ``Connection: close``. A keep-alive
    connection otherwise stays with the worker that accepted it for as long as the client
    lives, and the clients that fell on the busier worker wait longer for good
    (``req_number`` counts requests per connection, from 1)."""
    if keepalive_requests and req.req_number >= keepalive_requests:
        req.must_close = True


def pinned_cpus(setting: bool | None, workers: int) -> set[int] | None:
    """The CPUs ``workers`` workers are spread over when they keep to one each
    (``RUMMY_PIN_WORKERS``, :func:`~service.config.pins_workers`), or None when they are
    left to the kernel."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    allowed = os.sched_getaffinity(0)
    return allowed if pins_workers(setting, workers, len(allowed)) else None


def choose_cpu(server: Any, worker: Any, cpus: set[int] | None) -> None:
    """In the master, before a worker is forked: the CPU of ``cpus`` it will keep to (the
    one fewest live workers keep to: a worker started to replace one that died takes the CPU
    left free), or None."""
    worker.rummy_cpu = None
    if cpus is not None:
        worker.rummy_cpu = least_used_cpu(
            cpus, (getattr(w, "rummy_cpu", None) for w in server.WORKERS.values()))


def keep_to_cpu(server: Any, worker: Any) -> None:
    """In the worker, just forked: it (its threads too, started later) keeps to its CPU. A
    worker's threads take turns under the GIL; on one CPU the hand-over from one to the next
    stays on that CPU, and the other CPUs are left to the other workers, Redis and the rest
    (the kernel moves what is free off the workers' CPUs). A CPU the worker cannot keep to
    (taken offline since, or a sandbox that forbids it) leaves it to the kernel, with a
    warning, rather than failing the worker at every start."""
    if worker.rummy_cpu is not None:
        try:
            os.sched_setaffinity(0, {worker.rummy_cpu})
        except OSError as exc:
            server.log.warning("worker %s left to the kernel: it cannot keep to CPU %s (%s)",
                               worker.pid, worker.rummy_cpu, exc.strerror or exc)


YOUNG_COLLECTION = 10_000
"""Allocations (less deallocations) between two collections of the youngest generation:
Python's 700 collected every few hundred microseconds of a request's work, so the objects
of the requests in flight outlived two collections and went to the oldest generation, where
they died uncollected but counted towards its next full collection."""


def freeze_loaded() -> None:
    """Once the worker has loaded the app: collect once, then freeze what is there (modules,
    the app, its schemas, the OpenAPI document), so that the cyclic collector never scans
    those objects again. All other requests of the worker wait while a full collection
    runs; with less to scan, each takes about half as long. Then collect the youngest
    generation every :data:`YOUNG_COLLECTION` allocations: a gevent worker holding
    thousands of event streams holds their requests' objects, and a full collection of
    them took up to 420 ms, 26 times in a run of ``bench --watchers 10000`` (2 times
    since)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION, 10, 10)


def worker_connections(settings: Settings) -> int:
    """gunicorn's ``worker_connections`` (the connections one gevent worker serves at once;
    gthread workers ignore it): gunicorn's 1000 would leave a worker's event streams
    (:meth:`~service.config.Settings.green_stream_slots`, 20000 by default) waiting in the
    listen queue, unanswered, so it is the streams' bound and 1000 more for the rest."""
    return settings.green_stream_slots() + 1000
