"""The stack under test: its own redis-server and the service under gunicorn.

Redis runs from :class:`service.redis_server.RedisServer` in a temporary directory with AOF
on and ``appendfsync everysec`` (as docker-compose runs it; ``rummy-referee serve``'s
embedded Redis fsyncs every write instead). The service is started the way docs/operations.md
says production runs it, as ``rummy-referee serve`` runs it when ``REDIS_URL`` is set: gunicorn
with the settings of ``service/gunicorn_conf.py`` (gthread workers, no gunicorn access line,
``RUMMY_WORKERS`` = CPUs, ``RUMMY_THREADS`` = 4 unless the environment says otherwise),
loading :func:`bench.ceiling.create_bench_app` in place of ``service.app:create_app()``:
the service's app with the ceiling route added. With ``floor=True`` a second gunicorn, with
the same settings, serves :mod:`bench.floor`, a bare Flask route.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from service.cli import gunicorn_command
from service.redis_server import RedisServer, free_port

ROOT = Path(__file__).resolve().parent.parent

APPENDFSYNC = "everysec"
SERVICE_APP = "bench.ceiling:create_bench_app()"
"""What the service's gunicorn loads: the service's app with the ceiling route."""


class Stack:
    """redis-server + the service under gunicorn, started and stopped together."""

    def __init__(self, tmp: Path, workers: int | None = None, threads: int | None = None,
                 floor: bool = False, pin_workers: bool | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.tmp = tmp
        self.extra_env = dict(env or {})
        """Settings of the service's own that this run changes (none by default)."""
        self.floor = floor
        """Also serve :mod:`bench.floor` (a bare Flask route) with the same gunicorn
        settings, on ``floor_port``."""
        self.floor_port = 0
        self.floor_server: subprocess.Popen[bytes] | None = None
        self.workers = workers
        self.threads = threads
        self.pin_workers = pin_workers
        """``RUMMY_PIN_WORKERS``: True 1 (each worker kept to a CPU of its own), False 0
        (left to the kernel), None the service's default (``auto``)."""
        self.redis = RedisServer(tmp / "redis", appendonly=True, appendfsync=APPENDFSYNC)
        self.port = 0
        self.server: subprocess.Popen[bytes] | None = None
        self.log_path = tmp / "gunicorn.log"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> None:
        self.redis.start()
        self.port = free_port()
        env = self._env()
        env["RUMMY_BIND"] = f"127.0.0.1:{self.port}"
        self.server = self._launch([*gunicorn_command(), SERVICE_APP], env, self.port,
                                   self.log_path, timeout)
        if self.floor:
            self.floor_port = free_port()
            env = self._env(metrics="floor-metrics")
            env["RUMMY_BIND"] = f"127.0.0.1:{self.floor_port}"
            self.floor_server = self._launch(
                [*gunicorn_command(), "bench.floor:app"], env, self.floor_port,
                self.tmp / "floor.log", timeout)

    @property
    def server_pid(self) -> int:
        """The service's gunicorn master (its workers are below it), 0 when it is not
        running."""
        return self.server.pid if self.server is not None else 0

    @property
    def floor_pid(self) -> int:
        """The floor's gunicorn master, 0 when there is none."""
        return self.floor_server.pid if self.floor_server is not None else 0

    def _launch(self, cmd: list[str], env: dict[str, str], port: int, log_path: Path,
                timeout: float) -> subprocess.Popen[bytes]:
        """Start ``cmd`` and wait until it answers ``/readyz`` on ``port``."""
        with log_path.open("ab") as log:
            server = subprocess.Popen(cmd, env=env, cwd=ROOT, stdin=subprocess.DEVNULL,
                                      stdout=log, stderr=subprocess.STDOUT)
        base_url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"{base_url}/readyz", timeout=1) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                _stop(server)
                self.stop()
                tail = log_path.read_text(errors="replace")[-3000:]
                raise RuntimeError(f"{cmd[-1]} did not become ready:\n{tail}")
            time.sleep(0.1)
        # a few requests before the load (the workers load the app when they start; these
        # do not prove that every worker has answered: the warm-up load comes next)
        for _ in range(20):
            with contextlib.suppress(OSError):
                urllib.request.urlopen(f"{base_url}/healthz", timeout=2).close()
        return server

    def _env(self, metrics: str = "metrics") -> dict[str, str]:
        """The servers' environment: ours, with this stack's Redis, data and metrics
        directories (all in the temporary directory, removed with it), and its workers,
        threads and pinning when they are given."""
        metrics_dir = self.tmp / metrics
        metrics_dir.mkdir(exist_ok=True)
        env = dict(os.environ, REDIS_URL=self.redis.url, RUMMY_DATA_DIR=str(self.tmp),
                   PROMETHEUS_MULTIPROC_DIR=str(metrics_dir))
        if self.workers:
            env["RUMMY_WORKERS"] = str(self.workers)
        if self.threads:
            env["RUMMY_THREADS"] = str(self.threads)
        if self.pin_workers is not None:
            env["RUMMY_PIN_WORKERS"] = "1" if self.pin_workers else "0"
        env.update(self.extra_env)
        return env

    def settings(self) -> dict[str, Any]:
        """The gunicorn settings the service runs with (read from its config module)."""
        env = self._env()
        code = ("import service.gunicorn_conf as c, service.rules.state as s; "
                "print(c.worker_class, c.workers, c.threads, c.keepalive, "
                "c.hooks.pinned_cpus(c.workers) is not None, c.reuse_port, s.COMPILED)")
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout.split()
        return {"worker_class": out[0], "workers": out[1], "threads": out[2],
                "keepalive": out[3], "pinned": out[4] == "True", "reuse_port": out[5] == "True",
                "redis": f"AOF on, appendfsync {APPENDFSYNC}",
                "engine_compiled": out[6] == "True"}

    def stop(self) -> None:
        for server in (self.server, self.floor_server):
            if server is not None:
                _stop(server)
        self.server = self.floor_server = None
        if self.redis.running:
            self.redis.stop()


def _stop(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is None:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=5)
