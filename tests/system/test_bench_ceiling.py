"""The benchmark's ceiling endpoint is the benchmark's own (bench/ceiling.py): the service's
app with one route added, ``GET /_bench/ceiling/<key>?size=N``, one Redis GET and one SET.
The product knows nothing of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.ceiling import CEILING_ROUTE, create_bench_app
from service.app import create_app
from service.config import Settings

SERVICE = Path(__file__).resolve().parents[2] / "service"


def _mentions(needle: bytes) -> list[str]:
    """The files under service/ (sources, templates, catalogs) holding ``needle``."""
    return sorted(str(path.relative_to(SERVICE)) for path in SERVICE.rglob("*")
                  if path.is_file() and "__pycache__" not in path.parts
                  and path.suffix not in (".pyc", ".so") and needle in path.read_bytes())


@pytest.mark.parametrize("needle", [b"_bench", b"RUMMY_BENCHMARK"])
def test_nothing_under_service_mentions_the_benchmark(needle: bytes) -> None:
    assert _mentions(needle) == []


def test_the_check_finds_a_mention() -> None:
    assert "app.py" in _mentions(b"def create_app(")


def test_the_bench_app_is_the_service_with_the_ceiling_route_only(redis_url: str) -> None:
    settings = Settings(redis_url=redis_url)
    rules = {rule.rule for rule in create_app(settings).url_map.iter_rules()}
    bench_rules = {rule.rule for rule in create_bench_app(settings).url_map.iter_rules()}
    assert bench_rules - rules == {CEILING_ROUTE}
    assert rules <= bench_rules
    assert create_app(settings).test_client().get("/_bench/ceiling/k").status_code == 404


def test_the_ceiling_answers_the_payload_asked_for_and_keeps_it(redis_url: str) -> None:
    app = create_bench_app(Settings(redis_url=redis_url))
    client = app.test_client()
    for _ in range(2):
        reply = client.get("/_bench/ceiling/k?size=3")
        assert reply.status_code == 200
        assert reply.get_json() == {"payload": "xxx"}
    store = app.extensions["referee"].store.client
    assert store.get("bench:{k}") == b"xxx"
    assert 0 < store.ttl("bench:{k}") <= 600


@pytest.mark.parametrize("size", ["x", "inf", "1e3", "\u00b2", "\u0661", "9" * 5000])
def test_the_ceiling_refuses_a_size_that_is_not_a_number(redis_url: str, size: str) -> None:
    client = create_bench_app(Settings(redis_url=redis_url)).test_client()
    reply = client.get("/_bench/ceiling/k", query_string={"size": size})
    assert (reply.status_code, reply.mimetype) == (400, "application/problem+json")
    assert "size" in {e["field"] for e in reply.get_json()["errors"]}
    assert client.get("/_bench/ceiling/k?size=3").get_json() == {"payload": "xxx"}


def test_no_rate_limit_counts_the_ceiling_and_the_service_keeps_its_own(
        redis_url: str) -> None:
    client = create_bench_app(Settings(redis_url=redis_url, rate_limits=("2/minute",),
                                       create_rate_limits=())).test_client()
    assert [client.get("/_bench/ceiling/k?size=1").status_code for _ in range(5)] == [200] * 5
    statuses = [client.get("/v1/variants").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
