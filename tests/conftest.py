"""Shared fixtures. Tests use a real redis-server started here, never the one on port 6379."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from service.app import create_app
from service.config import Settings
from service.redis_server import RedisServer, find_redis_server
from service.store import GameStore, make_client

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
    # rate limits are tested on their own (tests/test_security.py); elsewhere they would
    # only make the suite's many quick requests flaky
    application = create_app(Settings(redis_url=redis_url, rate_limits=(),
                                      create_rate_limits=()))
    yield application


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    """A Flask test client (real HTTP semantics, real Redis behind it)."""
    return app.test_client()
