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
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from service.redis_server import free_port

START_TIMEOUT = 20.0
STOP_TIMEOUT = 20.0


def rummy_referee() -> str:
    """The ``rummy-referee`` command of this Python (its venv), else the one on PATH."""
    beside = Path(sys.executable).parent / "rummy-referee"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("rummy-referee")
    if found is None:
        pytest.fail(f"rummy-referee not found beside {sys.executable} nor on PATH")
    return found


class Server:
    """``rummy-referee serve`` as a child process in its own session, output in a file."""

    def __init__(self, tmp_path: Path, redis_url: str, *, workers: int = 2,
                 env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log = tmp_path / "serve.log"
        environ = {k: v for k, v in os.environ.items()
                   if k != "REDIS_URL" and not k.startswith("RUMMY_")}
        environ["REDIS_URL"] = redis_url
        environ["RUMMY_DATA_DIR"] = str(tmp_path / "data")
        environ.update(env or {})
        command = [rummy_referee(), "serve", "--host", "127.0.0.1", "--port", str(self.port),
                   "--workers", str(workers)]
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(command, env=environ, cwd=tmp_path, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_ready(self, session: requests.Session | None = None) -> None:
        if session is None:
            with requests.Session() as own:
                self.wait_ready(own)
            return
        deadline = time.monotonic() + START_TIMEOUT
        status: int | None = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"serve exited with {self.proc.returncode}:\n{self.output()}")
            try:
                status = session.get(f"{self.base_url}/readyz", timeout=2).status_code
            except requests.RequestException:
                status = None
            if status == 200:
                return
            time.sleep(0.1)
        pytest.fail(f"GET /readyz: {status} after {START_TIMEOUT} s; output:\n{self.output()}")

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


@contextlib.contextmanager
def served(tmp_path: Path, redis_url: str, *, workers: int = 2,
           env: dict[str, str] | None = None) -> Iterator[Server]:
    """A ready ``rummy-referee serve``; SIGTERM at the end, SIGKILL if it lingers."""
    server = Server(tmp_path, redis_url, workers=workers, env=env)
    try:
        server.wait_ready()
        yield server
    finally:
        if server.proc.poll() is None:
            server.proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                server.proc.wait(timeout=STOP_TIMEOUT)
        server.kill()
