"""What the service does in gunicorn's server hooks; :mod:`service.gunicorn_conf` names
them as its hooks after :func:`configure` has given them the settings.

- on start, the address must be free (:func:`on_starting`); when ready, the server says
  where it listens and how its workers run (:func:`when_ready`);
- each worker keeps to a CPU of its own when asked (:func:`pre_fork`, :func:`post_fork`),
  closes a keep-alive connection after its last request (:func:`pre_request`), and, once it
  has loaded the app (:func:`post_worker_init`), freezes it out of the collector's scans,
  stops quickly on Ctrl-C (:mod:`service.quick_stop`) and ends its event streams at once
  on SIGTERM (:mod:`service.live`), puts its limits on slow or greedy
  clients (:mod:`service.serving_limits`) and, when told to stop, hands its socket over to
  the other workers (:func:`_hand_over_on_stop`); the tuning is :mod:`service.tuning`;
- gunicorn's own error answers are problem+json (:func:`_problem_error`);
- Prometheus metrics are gathered from every worker process (prometheus-client's
  multiprocess mode) in a directory of the server's own (:func:`on_exit`,
  :func:`child_exit`).
"""

import json
import logging
import os
import re
import select
import shutil
import socket
import sys
import tempfile
import time
from typing import Any

from gunicorn import glogging
from gunicorn import util as gunicorn_util

from service import live, quick_stop, serving_limits, tuning
from service.api import streams
from service.config import ConfigError, Settings


def load_settings() -> Settings:
    """The settings from the environment; a bad one, or no Redis to talk to, ends the
    process with status 2 and a message saying what is wrong."""
    try:
        settings = Settings.from_env()
    except ConfigError as exc:
        print(f"rummy-referee: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None
    if settings.redis_mode is None:
        print(
            "rummy-referee: REDIS_URL is not set (nor REDIS_CLUSTER_NODES or REDIS_SENTINELS); "
            "gunicorn needs one "
            "(`rummy-referee serve` starts a redis-server itself when REDIS_URL is unset)",
            file=sys.stderr,
            flush=True,
        )
        raise SystemExit(2)
    return settings


_settings = Settings()
_reuse_port = False
_own_metrics_dir: str | None = None


def configure(settings: Settings, *, reuse_port: bool) -> None:
    """The settings the hooks work with, and what the server sets up before it starts:
    gunicorn's error answers as problem+json, its log without an empty ``Listening at:``
    line, and a fresh metrics directory for this server unless PROMETHEUS_MULTIPROC_DIR
    names one."""
    global _settings, _reuse_port, _own_metrics_dir
    _settings, _reuse_port = settings, reuse_port
    gunicorn_util.write_error = _problem_error
    log = logging.getLogger("gunicorn.error")
    if not any(isinstance(f, _NoEmptyAddress) for f in log.filters):
        log.addFilter(_NoEmptyAddress())
    if settings.metrics and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        _own_metrics_dir = tempfile.mkdtemp(prefix="rummy-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = _own_metrics_dir


def _tcp_binds(server: Any) -> list[str]:
    """The TCP addresses gunicorn will bind: ``RUMMY_BIND``, or what its ``--bind`` says
    instead (a Unix socket or an inherited descriptor left out)."""
    return [a for a in server.cfg.bind if not a.startswith(("unix:", "fd://"))]


def on_starting(server: Any) -> None:
    """With ``reuse_port`` the master binds nothing (each worker binds its own socket), so
    an address another server holds would only show as workers failing to boot, over and
    over; and a second instance started on the same address would share its connections
    with the first. So the master first checks that the address is free: bound without
    ``SO_REUSEPORT``, which any listening socket on it refuses. Not in a master started by
    the running one (``SIGUSR2``: an upgrade in place), whose workers are meant to listen
    beside the running ones."""
    upgrading = bool(getattr(server, "master_pid", 0))  # the running master's pid, or 0
    if not _reuse_port or upgrading:
        return
    for address in _tcp_binds(server):
        host, port = gunicorn_util.parse_address(address)
        # the family gunicorn binds with: IPv6 for an IPv6 literal, else IPv4
        family = socket.AF_INET6 if gunicorn_util.is_ipv6(host) else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError as exc:
                server.log.error("Connection in use: %s (%s)", address, exc.strerror)
                raise SystemExit(1) from None


def pinned_cpus(workers: int) -> set[int] | None:
    """The CPUs ``workers`` workers are spread over when they keep to one each, or None
    (:func:`service.tuning.pinned_cpus`). The hooks pass gunicorn's own worker count, so
    that ``--workers`` counts; the benchmark reports with it too."""
    return tuning.pinned_cpus(_settings.pin_workers, workers)


def when_ready(server: Any) -> None:
    """Say where the service listens, with the addresses of its API docs and web table, and
    how its workers run. With ``reuse_port`` the master binds nothing (each worker binds
    ``RUMMY_BIND`` itself, as it boots), so gunicorn's own start-up line would name no
    address: :class:`_NoEmptyAddress` drops it."""
    for address in _tcp_binds(server):
        url = f"http://{address}"
        server.log.info("Serving on %s — API docs %s/docs, web table %s/play", url, url, url)
    sockets = ", each on a socket of its own (SO_REUSEPORT)" if _reuse_port else ""
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


def pre_fork(server: Any, worker: Any) -> None:
    """The CPU the new worker will keep to, if the workers keep to one each: chosen in the
    master, which knows the live workers' CPUs (:func:`service.tuning.choose_cpu`)."""
    tuning.choose_cpu(server, worker, pinned_cpus(server.num_workers))


def post_fork(server: Any, worker: Any) -> None:
    """The new worker keeps to its CPU, if it has one (:func:`service.tuning.keep_to_cpu`)."""
    tuning.keep_to_cpu(server, worker)


def post_worker_init(worker: Any) -> None:
    """The worker has loaded the app, and is about to serve."""
    tuning.freeze_loaded()
    quick_stop.install(worker)  # Ctrl-C: gone within a second, streams open or not
    live.stop_on_term()  # SIGTERM: event streams end at once, their clients go elsewhere
    # gevent: the hub writes the events of waiting streams itself
    streams.allow_direct_writes(getattr(worker, "cfg", None))
    serving_limits.install(worker, _settings)  # request deadline, connections per address
    if hasattr(worker, "set_accept_enabled") and hasattr(worker, "accept"):
        _hand_over_on_stop(worker)


def pre_request(worker: Any, req: Any) -> None:
    """``RUMMY_KEEPALIVE_REQUESTS``: a connection's last request is answered with
    ``Connection: close`` (:func:`service.tuning.close_after`)."""
    tuning.close_after(req, _settings.keepalive_requests)


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
    it closed. Closed at once instead, before a reload's new workers had bound theirs, the
    address would have no socket at all for a moment, and connections would be refused. So
    it keeps taking connections for ``_HAND_OVER_SECONDS``, then closes; new connections go
    to the other workers' sockets (bench/README.md, "Serving settings", has the figures).
    Linux 5.14 and later can also move a closing socket's queue itself
    (``net.ipv4.tcp_migrate_req=1``), which covers the few microseconds left between the
    last accept and the close. A socket shared with the other workers (no ``reuse_port``)
    is left to them: only the gates' connections are taken."""
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
        if _reuse_port:
            for listener in worker.sockets:
                listener.setblocking(False)
            deadline = time.monotonic() + _HAND_OVER_SECONDS
            while (left := deadline - time.monotonic()) > 0:
                take_queued(worker.sockets)
                select.select(worker.sockets, [], [], left)
        serving_limits.stop_listening(worker.sockets)
        gated = [s for s in worker.sockets if isinstance(s, serving_limits.GatedListener)]
        take_queued(worker.sockets if _reuse_port else gated)
        if _reuse_port:
            for listener in worker.sockets:
                listener.close()

    worker.set_accept_enabled = set_accept_enabled


_SECRET_QUERY = re.compile(r"((?:^|[?&])ticket=)[^&\s]*", re.IGNORECASE)


def redacted(text: str) -> str:
    """``text`` (a request line, a query string) with a stream ticket's value masked."""
    return _SECRET_QUERY.sub(r"\1[redacted]", text)


class RedactingLogger(glogging.Logger):  # type: ignore[misc]
    """gunicorn's logger, whose access lines (``RUMMY_ACCESS_LOG``) never hold a secret: a
    stream ticket in the query string (``?ticket=``) is masked, as are the
    ``Authorization`` and ``Cookie`` headers should a format name them."""

    def atoms(self, resp: Any, req: Any, environ: Any, request_time: Any) -> dict[str, Any]:
        atoms: dict[str, Any] = super().atoms(resp, req, environ, request_time)
        for name in ("r", "q", "{raw_uri}e", "{query_string}e", "{request_uri}e"):
            if isinstance(atoms.get(name), str):
                atoms[name] = redacted(atoms[name])
        for name in ("{authorization}i", "{cookie}i", "{http_authorization}e",
                     "{http_cookie}e"):
            if name in atoms:
                atoms[name] = "[redacted]"
        return atoms


def _problem_error(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's own error answers (a request line too long, bad headers …) as problem+json
    like every other error of the service, instead of an HTML page."""
    body = json.dumps({"type": "about:blank", "title": reason, "status": status_int,
                       "detail": mesg}).encode()
    head = (f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
            f"Content-Type: application/problem+json\r\nContent-Length: {len(body)}\r\n\r\n")
    gunicorn_util.write_nonblock(sock, head.encode("latin1") + body)


def on_exit(server: Any) -> None:
    """The server stops: remove the metrics directory it made for itself."""
    if _own_metrics_dir is not None:
        shutil.rmtree(_own_metrics_dir, ignore_errors=True)


def child_exit(server: Any, worker: Any) -> None:
    """A worker is gone: its live gauges no longer count."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)  # type: ignore[no-untyped-call]
