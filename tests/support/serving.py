"""``rummy-referee serve`` as a real child process for the tests that need the served app
(gunicorn, its workers, real HTTP): start it on a free port against a given Redis, wait
until it is ready, stop it with SIGTERM, and never leave it behind."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
import requests

from service.redis_server import free_port

START_TIMEOUT = 20.0
STOP_TIMEOUT = 25.0


def rummy_referee() -> str:
    """The ``rummy-referee`` command of this Python (its venv), else the one on PATH."""
    beside = Path(sys.executable).parent / "rummy-referee"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("rummy-referee")
    if found is None:
        pytest.fail(f"rummy-referee not found beside {sys.executable} nor on PATH")
    return found


def plain_env() -> dict[str, str]:
    """This process's environment without its ``REDIS_*`` and ``RUMMY_*`` settings."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_", "RUMMY_"))}


def proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(comm, ppid, starttime) of a live or zombie process, None when there is none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    comm = stat[stat.index("(") + 1 : stat.rindex(")")]
    rest = stat[stat.rindex(")") + 2 :].split()
    return comm, int(rest[1]), int(rest[19])


def _processes() -> dict[int, tuple[str, int, int]]:
    """Every process now, by pid: (comm, ppid, starttime)."""
    table: dict[int, tuple[str, int, int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = proc_stat(int(entry.name))
            if stat is not None:
                table[int(entry.name)] = stat
    return table


def children(pid: int) -> list[int]:
    """The pids whose parent is ``pid``."""
    return [child for child, (_, ppid, _) in _processes().items() if ppid == pid]


def descendants(pid: int) -> dict[int, tuple[str, int, int]]:
    """Every process below ``pid`` (gunicorn, its workers, redis-server), by pid."""
    table = _processes()
    found: dict[int, tuple[str, int, int]] = {}
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        for child, stat in table.items():
            if stat[1] == parent and child not in found:
                found[child] = stat
                frontier.append(child)
    return found


class Server:
    """``rummy-referee serve`` as a child process in its own session, output in a file.

    Its environment is ``base_env`` (default: this process's, without ``REDIS_*`` and
    ``RUMMY_*``), then ``REDIS_URL`` when one is given (else serve starts its own Redis, or
    ``env`` names a cluster or Sentinels), ``RUMMY_DATA_DIR`` in ``tmp_path``, then ``env``.
    """

    def __init__(self, tmp_path: Path, redis_url: str | None, *, workers: int = 2,
                 threads: int = 4, env: Mapping[str, str] | None = None,
                 base_env: Mapping[str, str] | None = None,
                 cpus: set[int] | None = None, host: str = "127.0.0.1") -> None:
        self.workers = workers
        self.port = free_port()
        self.host = host
        self.base_url = f"http://{host}:{self.port}"
        self.log = tmp_path / f"serve-{self.port}.log"
        environ = dict(base_env) if base_env is not None else plain_env()
        if redis_url is not None:
            environ["REDIS_URL"] = redis_url
        environ.setdefault("RUMMY_DATA_DIR", str(tmp_path / "data"))
        environ.update(env or {})
        command = [rummy_referee(), "serve", "--host", host, "--port", str(self.port),
                   "--workers", str(workers), "--threads", str(threads)]
        mine = os.sched_getaffinity(0) if cpus is not None else None
        with self.log.open("wb") as out:
            if cpus is not None:  # this thread's CPUs, which the child inherits
                os.sched_setaffinity(0, cpus)
            try:
                self.proc = subprocess.Popen(command, env=environ, cwd=tmp_path, stdout=out,
                                             stderr=subprocess.STDOUT, start_new_session=True)
            finally:
                if mine is not None:
                    os.sched_setaffinity(0, mine)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def master_pid(self) -> int:
        """The gunicorn master: serve's one child with children of its own (serve's other
        child, when it started its own Redis, is that redis-server)."""
        found = [pid for pid in children(self.proc.pid) if children(pid)]
        assert len(found) == 1, f"serve has {found} as gunicorn masters, not one"
        return found[0]

    def worker_pids(self) -> list[int]:
        """The gunicorn workers (the children of serve's children)."""
        return [pid for child in children(self.proc.pid) for pid in children(child)]

    def wait_ready(self, session: requests.Session | None = None) -> None:
        """Until /readyz answers 200 and every worker process is up."""
        wait_until_ready(self.proc, self.base_url, self.output, session=session,
                         also=lambda: len(self.worker_pids()) == self.workers)

    def terminate(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"serve did not exit {STOP_TIMEOUT} s after SIGTERM:\n{self.output()}")

    def kill(self) -> None:
        """Last resort: SIGKILL the process group this test started (serve and gunicorn)."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def close(self) -> None:
        """SIGTERM, and SIGKILL if it lingers (for cleanup: never fails the test)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=STOP_TIMEOUT)
        self.kill()


def wait_until_ready(proc: subprocess.Popen[bytes], base_url: str, output: Callable[[], str],
                     *, session: requests.Session | None = None,
                     also: Callable[[], bool] | None = None) -> None:
    """Until ``GET /readyz`` at ``base_url`` answers 200 (and ``also()`` holds, when given);
    the test fails with the ``output()`` when ``proc`` exits first or after START_TIMEOUT."""
    if session is None:
        with requests.Session() as own:
            wait_until_ready(proc, base_url, output, session=own, also=also)
        return
    deadline = time.monotonic() + START_TIMEOUT
    status: int | None = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"serve exited with {proc.returncode}:\n{output()}")
        try:
            status = session.get(f"{base_url}/readyz", timeout=2).status_code
        except requests.RequestException:
            status = None
        if status == 200 and (also is None or also()):
            return
        time.sleep(0.1)
    pytest.fail(f"GET /readyz: {status} after {START_TIMEOUT} s; output:\n{output()}")


@contextlib.contextmanager
def served(tmp_path: Path, redis_url: str, *, workers: int = 2,
           env: dict[str, str] | None = None, cpus: set[int] | None = None,
           host: str = "127.0.0.1") -> Iterator[Server]:
    """A ready ``rummy-referee serve`` on ``host`` (on the CPUs ``cpus`` only, when given:
    Linux); SIGTERM at the end, SIGKILL if it lingers."""
    server = Server(tmp_path, redis_url, workers=workers, env=env, cpus=cpus, host=host)
    try:
        server.wait_ready()
        yield server
    finally:
        server.close()
