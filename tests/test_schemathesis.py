"""schemathesis against the running service's own OpenAPI document: every phase (examples,
coverage, fuzzing, stateful), a fixed seed, bounded (schemathesis.toml), 0 failures."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from service.redis_server import RedisServer, free_port

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


@pytest.mark.slow
def test_schemathesis_finds_nothing(redis_server: RedisServer, redis_url: str,
                                    tmp_path: Path) -> None:
    port = free_port()
    env = dict(os.environ, REDIS_URL=redis_url, RUMMY_DATA_DIR=str(tmp_path),
               RUMMY_RATE_LIMITS="off", RUMMY_CREATE_RATE_LIMITS="off")
    server = subprocess.Popen([str(BIN / "rummy-referee"), "serve", "--port", str(port),
                               "--workers", "2"], env=env, cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail("the server did not become ready")
                time.sleep(0.2)
        run = subprocess.run(
            [str(BIN / "st"), "--no-color", "run", f"http://127.0.0.1:{port}/openapi.json"],
            cwd=ROOT, capture_output=True, text=True, timeout=600,
            env=dict(os.environ, HYPOTHESIS_STORAGE_DIRECTORY=str(tmp_path / "hyp")))
        summary = run.stdout[-3000:]
        print(summary)
        assert run.returncode == 0, summary
        assert " passed" in summary and "failures" not in summary
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
