"""End to end: ``rummy-referee serve`` (gunicorn, 2 workers) on the session Redis, one
complete basic match over real HTTP, then a graceful stop with SIGTERM."""

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
from http_player import REQUEST_TIMEOUT, HttpPlayer, RequestsTransport

from service.redis_server import free_port

pytestmark = pytest.mark.slow

START_TIMEOUT = 20.0
STOP_TIMEOUT = 20.0


def _rummy_referee() -> str:
    beside = Path(sys.executable).parent / "rummy-referee"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("rummy-referee")
    if found is None:
        pytest.fail(f"rummy-referee not found beside {sys.executable} nor on PATH")
    return found


class Server:
    """``rummy-referee serve`` as a child process in its own session, output in a file."""

    def __init__(self, tmp_path: Path, redis_url: str) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log = tmp_path / "serve.log"
        env = {k: v for k, v in os.environ.items()
               if k != "REDIS_URL" and not k.startswith("RUMMY_")}
        env["REDIS_URL"] = redis_url
        env["RUMMY_DATA_DIR"] = str(tmp_path / "data")
        command = [_rummy_referee(), "serve", "--host", "127.0.0.1", "--port", str(self.port),
                   "--workers", "2"]
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_ready(self, session: requests.Session) -> None:
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


@pytest.fixture
def server(tmp_path: Path, redis_url: str) -> Iterator[Server]:
    started = Server(tmp_path, redis_url)
    try:
        yield started
    finally:
        started.kill()


def test_a_complete_match_over_http_then_a_graceful_stop(server: Server) -> None:
    with requests.Session() as session:
        server.wait_ready(session)
        health = session.get(f"{server.base_url}/healthz", timeout=REQUEST_TIMEOUT)
        assert health.status_code == 200

        resp = session.post(f"{server.base_url}/v1/games", timeout=REQUEST_TIMEOUT,
                            json={"variant": "basic", "players": ["Ana", "Bo"],
                                  "rules": {"match_end": {"deals": 1}}})
        assert resp.status_code == 201, resp.text
        created = resp.json()
        game_id = created["game_id"]
        assert resp.headers["Location"] == f"/v1/games/{game_id}"
        tokens = [seat["token"] for seat in created["seats"]]

        transport = RequestsTransport(server.base_url, session, timeout=REQUEST_TIMEOUT)
        player = HttpPlayer(transport, game_id, tokens, max_moves=1500, time_limit=20.0)
        final = player.play_match()

        assert final["status"] == "finished"
        assert final["turn"] is None
        assert final["version"] == player.moves
        assert len(final["hands_played"]) == 1
        played = final["hands_played"][0]
        assert played["hand_number"] == 1
        totals = [s["total"] for s in final["seats"]]
        assert totals == played["scores"]
        assert final["winners"] == [i for i, t in enumerate(totals) if t == max(totals)]

        again = session.get(f"{server.base_url}{resp.headers['Location']}",
                            timeout=REQUEST_TIMEOUT)
        assert again.status_code == 200
        assert again.headers["ETag"] == f'"{player.moves}"'
        assert again.json() == final
        late = session.post(f"{server.base_url}/v1/games/{game_id}/moves",
                            timeout=REQUEST_TIMEOUT, json={"type": "draw", "source": "stock"},
                            headers={"Authorization": f"Bearer {tokens[0]}"})
        assert late.status_code == 422
        assert late.headers["Content-Type"].startswith("application/problem+json")
        assert late.json()["code"] == "GAME_FINISHED"

    assert server.terminate() == 0, server.output()
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{server.base_url}/healthz", timeout=2)
