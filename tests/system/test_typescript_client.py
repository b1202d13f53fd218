"""A generated TypeScript client (issue 45): ``openapi-typescript`` makes the types of
the committed ``openapi/openapi.json``, ``tsc --strict`` checks a file of calls where each
wrong one is marked ``// @ts-expect-error`` (so a wrong move body that compiled would fail
the check), and a short program (``tests/clients/typescript/play.ts``, on
``openapi-fetch``) plays a one-hand game against ``rummy-referee serve``.

The npm packages are the ones ``tests/clients/typescript/package-lock.json`` pins,
installed with ``npm ci`` into a temporary folder (Node 20 or later and the npm registry
needed).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from service.redis_server import RedisServer
from tests.support import serving
from tests.support.serving import Server

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = ROOT / "openapi" / "openapi.json"
SOURCES = ROOT / "tests" / "clients" / "typescript"
FILES = ("package.json", "package-lock.json", "tsconfig.json", "tsconfig.oneof.json",
         "typed.ts", "oneof.ts", "play.ts")


def _run(args: list[str], where: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=where, capture_output=True, text=True, timeout=timeout,
                          check=False)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The client's folder: the pinned packages installed, the types generated."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.fail("node and npm are needed (Node 20 or later)")
    where = tmp_path_factory.mktemp("typescript")
    for name in FILES:
        shutil.copy(SOURCES / name, where / name)
    done = _run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"], where)
    assert done.returncode == 0, done.stdout + done.stderr
    done = _run([node, "node_modules/openapi-typescript/bin/cli.js", str(DOCUMENT),
                 "-o", "schema.d.ts"], where)
    assert done.returncode == 0, done.stdout + done.stderr
    return where


def _tsc(project: Path, config: str) -> subprocess.CompletedProcess[str]:
    return _run([str(shutil.which("node")), "node_modules/typescript/bin/tsc", "-p", config],
                project)


def test_the_generated_types_check_every_call(project: Path) -> None:
    """tsc --strict accepts typed.ts and play.ts: each right call compiles and each wrong
    one is an error (an unused ``@ts-expect-error`` is one itself)."""
    done = _tsc(project, "tsconfig.json")
    assert done.returncode == 0, done.stdout + done.stderr
    schema = (project / "schema.d.ts").read_text()
    assert "operations = Record<string, never>" not in schema
    assert "postMove: {" in schema


def test_a_move_body_of_two_types_does_not_compile(project: Path) -> None:
    """oneof.ts marks a discard that also names a ``source`` as an error: Move is a oneOf
    per move type, each with exactly its fields."""
    done = _tsc(project, "tsconfig.oneof.json")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def served(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[Server]:
    """Served with a seat limit the program's pace exceeds: it must honour Retry-After."""
    with serving.served(tmp_path_factory.mktemp("serve"), redis_server.url,
                        env={"RUMMY_RATE_LIMITS": "10/second"}) as server:
        yield server


def test_a_typescript_program_plays_a_game(project: Path, served: Server) -> None:
    built = _tsc(project, "tsconfig.json")
    assert built.returncode == 0, built.stdout + built.stderr
    done = _run([str(shutil.which("node")), "build/play.js", served.base_url], project)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["status"] == "finished", summary
    assert summary["hands"] == 1 and summary["winners"]
    assert summary["moves"] > 2
    assert summary["refused"] == "NOT_YOUR_TURN"
    assert summary["throttled"] > 0  # 429s, each sent again after its Retry-After
    final = requests.get(f"{served.base_url}/v1/games/{summary['game_id']}", timeout=10)
    assert final.json()["status"] == "finished"
