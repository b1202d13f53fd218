"""The README is honest: its commands are the ones CI runs and its curl walkthrough works."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from serving import served

from service.redis_server import RedisServer

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_quickstart_has_the_two_commands_and_ci_runs_the_test_command_verbatim() -> None:
    quickstart = README.split("## Quickstart", 1)[1].split("##", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in quickstart.splitlines()
                if line.startswith("python3 ")]
    assert commands == ["python3 dev.py serve", "python3 dev.py test"]
    assert "python3 dev.py test" in (ROOT / ".ci" / "run").read_text().splitlines()


def _walkthrough() -> str:
    block = re.search(r"<!-- walkthrough:start -->\n```sh\n(.*?)```\n<!-- walkthrough:end -->",
                      README, re.S)
    assert block, "README lost its walkthrough block"
    return block.group(1)


@pytest.mark.slow
def test_the_curl_walkthrough_runs_against_the_served_app(
        redis_server: RedisServer, redis_url: str, tmp_path: Path) -> None:
    with served(tmp_path, redis_url, workers=1) as server:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", _walkthrough()], cwd=ROOT,
                              env=dict(os.environ, BASE=server.base_url),
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert "(422, 'NOT_YOUR_TURN', 'C-TURN')" in lines
        assert lines[-1] == "('finished', [0, 50], [1])"
        assert "['discard', 'hand_end', 'game_end']" in lines
        assert "304" in lines
