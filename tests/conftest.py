"""Shared fixtures. Tests use a real redis-server started here, never the one on port 6379."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from service.app import create_app
from service.config import Settings
from service.redis_server import RedisServer, find_redis_server
from service.rules import state
from service.store import GameStore, make_client

# --- The engine under test -------------------------------------------------------------------


def changed_since_compiled() -> list[str]:
    """The engine's sources that differ from what its compiled modules were built from
    (``setup.py`` writes their digests beside them); empty when it runs from its sources."""
    if not state.COMPILED:
        return []
    rules = Path(state.__file__).parent
    try:
        lines = (rules / "compiled-from.sha256").read_text().splitlines()
    except FileNotFoundError:
        return ["compiled-from.sha256 (missing)"]
    changed = []
    for line in filter(None, lines):
        digest, name = line.split("  ", 1)  # as sha256sum writes it
        source = rules / name
        if not source.is_file() or hashlib.sha256(source.read_bytes()).hexdigest() != digest:
            changed.append(name)
    return changed


def pytest_configure(config: pytest.Config) -> None:
    """The tests run on the engine as its sources say: a compiled module left by an earlier
    build (``pip install -e .`` puts them beside the sources, and they are imported in
    their place) would hide every change made since."""
    changed = changed_since_compiled()
    if changed:
        pytest.exit(f"the compiled rules engine is older than its sources ({', '.join(changed)}"
                    "): run python3 dev.py test, which rebuilds it", returncode=2)


# --- The quick loop ----------------------------------------------------------------------------

SYSTEM = Path(__file__).resolve().parent / "system"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test under tests/system/ starts processes (a served referee, a browser, a
    generated client, docker-compose, a cluster) and is marked ``slow``: ``-m "not slow"``
    (``python3 dev.py test --quick``) leaves them out. So is a ``random_run`` (a long random
    run in the test's own process), which ``python3 dev.py test`` runs with the quick tests,
    spread over the CPUs. The random runs come first, so that the short tests after them
    even out the workers' ends (pytest-xdist's ``--dist worksteal`` hands them on)."""
    for item in items:
        if item.path.is_relative_to(SYSTEM) or item.get_closest_marker("random_run"):
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: item.get_closest_marker("random_run") is None)


# --- Redis -------------------------------------------------------------------------------------


def _redis_binary() -> str:
    """The redis-server for tests: env RUMMY_TEST_REDIS_SERVER, else find_redis_server()."""
    return os.environ.get("RUMMY_TEST_REDIS_SERVER") or find_redis_server()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One redis-server for the whole session, in a temporary dir, on a free port.

    Tests that need a server of their own (faults, restarts) use ``redis_server.binary``.
    """
    server = RedisServer(tmp_path_factory.mktemp("redis"), binary=_redis_binary())
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The session server's URL, emptied (FLUSHALL) for this test."""
    client = redis.Redis.from_url(redis_server.url)
    try:
        client.flushall()
    finally:
        client.close()
    return redis_server.url


@pytest.fixture
def store(redis_url: str) -> Iterator[GameStore]:
    """A GameStore on a fresh client of the emptied session server."""
    client = make_client(redis_url)
    try:
        yield GameStore(client)
    finally:
        client.close()


# --- The app ---------------------------------------------------------------------------------


@pytest.fixture
def app(redis_url: str) -> Iterator[Flask]:
    """The Flask app on the emptied session Redis."""
    # rate limits are tested on their own (tests/api/test_security.py); elsewhere they would
    # only make the suite's many quick requests flaky
    application = create_app(Settings(redis_url=redis_url, rate_limits=(),
                                      create_rate_limits=(), verify_rate_limits=(),
                                      join_rate_limits=()))
    yield application


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    """A Flask test client (real HTTP semantics, real Redis behind it)."""
    return app.test_client()
