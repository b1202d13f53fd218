"""schemathesis against the running service's own OpenAPI document: every phase (examples,
coverage, fuzzing, stateful), a fixed seed, bounded (schemathesis.toml), 0 failures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from service.redis_server import RedisServer
from tests.support.serving import served

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


@pytest.mark.slow
def test_schemathesis_finds_nothing(redis_server: RedisServer, redis_url: str,
                                    tmp_path: Path) -> None:
    with served(tmp_path, redis_url, env={"RUMMY_RATE_LIMITS": "off",
                                          "RUMMY_CREATE_RATE_LIMITS": "off",
                                          "RUMMY_VERIFY_RATE_LIMITS": "off"}) as server:
        run = subprocess.run(
            [str(BIN / "st"), "--no-color", "run", f"{server.base_url}/openapi.json"],
            cwd=ROOT, capture_output=True, text=True, timeout=600,
            env=dict(os.environ, HYPOTHESIS_STORAGE_DIRECTORY=str(tmp_path / "hyp")))
        summary = run.stdout[-3000:]
        print(summary)
        assert run.returncode == 0, summary
        assert " passed" in summary and "failures" not in summary
