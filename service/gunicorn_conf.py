"""gunicorn settings for the service (``gunicorn -c python:service.gunicorn_conf``).

It lives in the package so that it is installed with it (``pip install .`` in the Docker
image); ``gunicorn.conf.py`` at the repository root re-exports it, so a plain ``gunicorn``
started in the repository finds it too. gunicorn reads the module-level names that are
gunicorn settings and ignores the others.

Environment: ``RUMMY_BIND`` (default ``127.0.0.1:8000``), ``RUMMY_WORKERS`` (default: the
number of CPUs), ``RUMMY_THREADS`` (default 4), ``RUMMY_KEEPALIVE_REQUESTS`` (default 100),
``RUMMY_LOG_LEVEL``, ``RUMMY_ACCESS_LOG`` (default off), ``RUMMY_PIN_WORKERS`` (default
auto: pinned when there is one worker per CPU), ``RUMMY_REQUEST_READ_TIMEOUT`` (default
10 s) and ``RUMMY_MAX_CONNECTIONS_PER_ADDRESS`` (default auto; see
:mod:`service.serving_limits`), and ``REDIS_URL`` (or
``REDIS_CLUSTER_NODES`` or ``REDIS_SENTINELS``), which is required here: ``rummy-referee
serve`` sets REDIS_URL when none is set (starting an embedded redis-server), and so does
docker-compose.yml.
"""

import gc
import json
import logging
import os
import select
import shutil as _shutil
import socket as _socket
import sys
import tempfile as _tempfile
import time
from typing import Any

from gunicorn import util as gunicorn_util

from service import quick_stop, serving_limits
from service.config import ConfigError, Settings, least_used_cpu, pins_workers

try:
    _settings = Settings.from_env()
except ConfigError as _exc:
    print(f"rummy-referee: {_exc}", file=sys.stderr, flush=True)
    raise SystemExit(2) from None
if _settings.redis_mode is None:
    print(
        "rummy-referee: REDIS_URL is not set (nor REDIS_CLUSTER_NODES or REDIS_SENTINELS); "
        "gunicorn needs one "
        "(`rummy-referee serve` starts a redis-server itself when REDIS_URL is unset)",
        file=sys.stderr,
        flush=True,
    )
    raise SystemExit(2)

wsgi_app = "service.app:create_app()"
proc_name = "rummy-referee"
worker_class = "gthread"
workers = _settings.workers
threads = _settings.threads
bind = [_settings.bind]

# A worker silent for this long is killed and replaced; requests only wait on Redis, whose
# socket timeout (RUMMY_REDIS_SOCKET_TIMEOUT) is far shorter.
timeout = 30
# On SIGTERM, in-flight requests get this long to finish.
graceful_timeout = 10
keepalive = 5
# Each worker listens on a socket of its own (gunicorn binds one per worker with
# SO_REUSEPORT, and the master none), so the kernel hashes each new connection to one of
# them: connections are spread evenly over the workers. With one shared socket, whichever
# worker wakes first takes the next connection, and kept-alive connections stay where they
# fell: measured under the benchmark's open-loop load (64 clients, moves sent at Poisson
# times), one worker held about 50 of the 64 connections, and at 450 moves/s offered its
# queue grew to a p99 of 3.3 s while the CPUs were 30% idle.
reuse_port = (_settings.reuse_port and not _settings.bind.startswith("unix:")
              and hasattr(_socket, "SO_REUSEPORT"))
_keepalive_requests = _settings.keepalive_requests


def pre_request(worker: Any, req: Any) -> None:
    """The ``RUMMY_KEEPALIVE_REQUESTS``-th request on a connection is its last: gunicorn
    answers it with ``Connection: close``. Keep-alive connections otherwise stay with the
    worker that accepted them for as long as the client lives; measured under the benchmark,
    a 13/3 split of 16 clients over 2 workers left 13 of them at 8 times the latency of the
    other 3 (``req_number`` counts requests per connection, from 1)."""
    if _keepalive_requests and req.req_number >= _keepalive_requests:
        req.must_close = True


def pinned_cpus(workers: int) -> set[int] | None:
    """The CPUs ``workers`` workers are spread over when they keep to one each
    (``RUMMY_PIN_WORKERS``, :func:`~service.config.pins_workers`), or None when they are
    left to the kernel. The hooks pass gunicorn's own worker count, so that ``--workers``
    counts; the benchmark reports with it too."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    allowed = os.sched_getaffinity(0)
    return allowed if pins_workers(_settings.pin_workers, workers, len(allowed)) else None


def pre_fork(server: Any, worker: Any) -> None:
    """When the workers keep to a CPU each: the CPU the new worker will keep to, chosen in
    the master, which knows the live workers' CPUs (a worker started to replace one that
    died takes the CPU left free)."""
    worker.rummy_cpu = None
    cpus = pinned_cpus(server.num_workers)
    if cpus is not None:
        worker.rummy_cpu = least_used_cpu(
            cpus, (getattr(w, "rummy_cpu", None) for w in server.WORKERS.values()))


def post_fork(server: Any, worker: Any) -> None:
    """When the workers keep to a CPU each: the worker (its threads too, started later)
    keeps to its CPU. A worker's threads take turns under the GIL; on one CPU the hand-over
    from one to the next stays on that CPU, and the other CPUs are left to the other
    workers, Redis and the rest. Measured under the benchmark (2 workers on 2 CPUs shared
    with the clients), on every machine since round 5: more moves/s and a lower move p99,
    and so too with a busy process of another kind on the machine, free or kept to a
    worker's CPU (round 13: the kernel moves what is free, the busy process, Redis, the
    clients, off the workers' CPUs). By default (``auto``) only with one worker per CPU:
    see :func:`~service.config.pins_workers`. A CPU the worker cannot keep to (taken
    offline since, or a sandbox that forbids it) leaves it to the kernel, with a warning,
    rather than failing the worker at every start."""
    if worker.rummy_cpu is not None:
        try:
            os.sched_setaffinity(0, {worker.rummy_cpu})
        except OSError as exc:
            server.log.warning("worker %s left to the kernel: it cannot keep to CPU %s (%s)",
                               worker.pid, worker.rummy_cpu, exc.strerror or exc)


def post_worker_init(worker: Any) -> None:
    """The worker has loaded the app: collect once, then freeze what is there (modules, the
    app, its schemas, the OpenAPI document), so that the cyclic collector never scans those
    objects again. Measured under the benchmark, a worker's full collections took up to
    75-78 ms each (about 300 ms per run) before, 41-44 ms (about 100 ms per run) after; all
    other requests of the worker wait while one runs."""
    gc.collect()
    gc.freeze()
    quick_stop.install(worker)  # Ctrl-C: gone within a second, streams open or not
    serving_limits.install(worker, _settings)  # request deadline, connections per address
    if hasattr(worker, "set_accept_enabled") and hasattr(worker, "accept"):
        _hand_over_on_stop(worker)


_HAND_OVER_SECONDS = 0.25
"""How long a stopping worker keeps taking connections on its own socket before closing it:
gunicorn forks the replacement workers of a reload just before it tells the old ones to
stop, and they bind their sockets in the first moments of their lives."""


def _hand_over_on_stop(worker: Any) -> None:
    """A stopping worker takes what its gates hold (connections whose requests are still
    arriving, :mod:`service.serving_limits`) before it stops taking connections; and with a
    socket of its own, it first takes the connections queued on it, and those that come for
    a moment more, then closes it. gunicorn's gthread worker stops accepting when it is told
    to stop (a reload, a restart, a scale-down) and closes its sockets only once its last
    request is done: connections the kernel queued on the socket meanwhile were reset when
    it closed (8-11 per reload under a load of new connections, measured). Closed at once
    instead, before a reload's new workers had bound theirs, the address had no socket at
    all for a moment: connections were refused (26 in one reload of seven). So it keeps
    taking connections for ``_HAND_OVER_SECONDS``, then closes; new connections go to the
    other workers' sockets. Linux 5.14 and later can also move a closing socket's queue
    itself (``net.ipv4.tcp_migrate_req=1``), which covers the few microseconds left between
    the last accept and the close. A socket shared with the other workers (no
    ``reuse_port``) is left to them: only the gates' connections are taken."""
    stop_accepting = worker.set_accept_enabled

    def take_queued(listeners: list[Any]) -> None:
        for listener in listeners:
            while True:
                taken = worker.nr_conns
                worker.accept(listener)  # gthread: one queued connection, or none
                if worker.nr_conns == taken:
                    break

    def set_accept_enabled(enabled: bool) -> None:
        stop_accepting(enabled)
        if enabled or worker.alive:
            return  # not stopping: too many connections for now (worker_connections)
        if reuse_port:
            for listener in worker.sockets:
                listener.setblocking(False)
            deadline = time.monotonic() + _HAND_OVER_SECONDS
            while (left := deadline - time.monotonic()) > 0:
                take_queued(worker.sockets)
                select.select(worker.sockets, [], [], left)
        serving_limits.stop_listening(worker.sockets)
        gated = [s for s in worker.sockets if isinstance(s, serving_limits.GatedListener)]
        take_queued(worker.sockets if reuse_port else gated)
        if reuse_port:
            for listener in worker.sockets:
                listener.close()

    worker.set_accept_enabled = set_accept_enabled


# Logs go to the console (12-factor). The service writes one line per request itself
# (service.api.observe: JSON, or text on a terminal; RUMMY_LOG_FORMAT), so gunicorn's access
# line, which says the same again, is off unless RUMMY_ACCESS_LOG asks for it (then on
# stdout); its error log goes to stderr. Measured in six interleaved pairs of benchmark runs,
# dropping that line raised the floor's calls/s by 17% and the moves/s by 8%.
accesslog = "-" if _settings.access_log else None
errorlog = "-"
loglevel = _settings.log_level.lower()
capture_output = False

# The worker heartbeat file: tmpfs where there is one (a container's overlay fs can stall).
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None

# gunicorn >= 25.1 opens a control socket under $XDG_RUNTIME_DIR or ~/.gunicorn by default;
# nothing here uses it, and the image's user has no home. Older gunicorns ignore the name.
control_socket_disable = True


def _problem_error(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's own error answers (a request line too long, bad headers …) as problem+json
    like every other error of the service, instead of an HTML page."""
    body = json.dumps({"type": "about:blank", "title": reason, "status": status_int,
                       "detail": mesg}).encode()
    head = (f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
            f"Content-Type: application/problem+json\r\nContent-Length: {len(body)}\r\n\r\n")
    gunicorn_util.write_nonblock(sock, head.encode("latin1") + body)


gunicorn_util.write_error = _problem_error


# Prometheus metrics from every worker process (prometheus-client multiprocess mode): the
# workers write to files in one directory, /metrics reads them all. A fresh directory per
# server start unless PROMETHEUS_MULTIPROC_DIR is set.
_own_metrics_dir: str | None = None
if _settings.metrics and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    _own_metrics_dir = _tempfile.mkdtemp(prefix="rummy-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = _own_metrics_dir


def on_exit(server: Any) -> None:
    """The server stops: remove the metrics directory it made for itself."""
    if _own_metrics_dir is not None:
        _shutil.rmtree(_own_metrics_dir, ignore_errors=True)


def child_exit(server: Any, worker: Any) -> None:
    """A worker is gone: its live gauges no longer count."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)  # type: ignore[no-untyped-call]


def _tcp_binds(server: Any) -> list[str]:
    """The TCP addresses gunicorn will bind: ``RUMMY_BIND``, or what its ``--bind`` says
    instead (a Unix socket or an inherited descriptor left out)."""
    return [a for a in server.cfg.bind if not a.startswith(("unix:", "fd://"))]


def when_ready(server: Any) -> None:
    """Say where the service listens, with the addresses of its API docs and web table, and
    how its workers run. With ``reuse_port`` the master binds nothing (each worker binds
    ``RUMMY_BIND`` itself, as it boots), so gunicorn's own start-up line would name no
    address: :class:`_NoEmptyAddress` drops it."""
    for address in _tcp_binds(server):
        url = f"http://{address}"
        server.log.info("Serving on %s — API docs %s/docs, web table %s/play", url, url, url)
    sockets = ", each on a socket of its own (SO_REUSEPORT)" if reuse_port else ""
    pinned = "" if pinned_cpus(server.num_workers) is None else ", each kept to a CPU of its own"
    server.log.info("%d workers x %d threads%s%s", server.num_workers, server.cfg.threads,
                    sockets, pinned)


class _NoEmptyAddress(logging.Filter):
    """Drops gunicorn's ``Listening at: %s`` lines that name no address (``Listening at:
    (pid)``): with ``reuse_port`` the master has no socket to name; :func:`when_ready`
    says where the workers listen."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        return not (str(record.msg).startswith("Listening at: %s") and args and not args[0])


_gunicorn_log = logging.getLogger("gunicorn.error")
if not any(isinstance(f, _NoEmptyAddress) for f in _gunicorn_log.filters):
    _gunicorn_log.addFilter(_NoEmptyAddress())


def on_starting(server: Any) -> None:
    """With ``reuse_port`` the master binds nothing (each worker binds its own socket), so
    an address another server holds would only show as workers failing to boot, over and
    over; and a second instance started on the same address would share its connections
    with the first. So the master first checks that the address is free: bound without
    ``SO_REUSEPORT``, which any listening socket on it refuses. Not in a master started by
    the running one (``SIGUSR2``: an upgrade in place), whose workers are meant to listen
    beside the running ones."""
    upgrading = bool(getattr(server, "master_pid", 0))  # the running master's pid, or 0
    if not reuse_port or upgrading:
        return
    for address in _tcp_binds(server):
        host, port = gunicorn_util.parse_address(address)
        # the family gunicorn binds with: IPv6 for an IPv6 literal, else IPv4
        family = _socket.AF_INET6 if gunicorn_util.is_ipv6(host) else _socket.AF_INET
        with _socket.socket(family, _socket.SOCK_STREAM) as probe:
            probe.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError as exc:
                server.log.error("Connection in use: %s (%s)", address, exc.strerror)
                raise SystemExit(1) from None
