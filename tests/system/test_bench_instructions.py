"""The instruction count of ``python3 dev.py bench --instructions`` (bench/instructions.py):
the move loop it counts, and how the figure is read from valgrind and worked out. The count
itself runs under valgrind for minutes and is not run here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from bench import instructions
from service.api.security import Limit
from service.config import Settings


def test_the_counted_loop_plays_moves_of_every_variant_against_the_service() -> None:
    import service.rules.engine as engine

    system_random, redis_url = engine._SYSTEM_RANDOM, os.environ.get("REDIS_URL")
    applied = instructions.play("moves", 60)
    assert 50 <= applied <= 60  # the player proposes legal moves: few if any are refused
    # the seeded generator and the Redis of the counted loop are gone again
    assert engine._SYSTEM_RANDOM is system_random
    assert os.environ.get("REDIS_URL") == redis_url


def test_the_counted_loop_counts_a_rate_limit_it_never_reaches() -> None:
    # In one process on a fast machine a seat makes more than the default 100 requests a
    # second: the counted loop must not be refused (429), yet still count one window a move.
    apps: list[Any] = []
    real = instructions.create_bench_app

    def create_bench_app() -> Any:
        apps.append(real())
        return apps[-1]

    with mock.patch.object(instructions, "create_bench_app", create_bench_app):
        assert instructions.play("moves", 5) >= 4
    limiter = apps[0].extensions["rate_limiter"]
    default = [Limit.parse(text) for text in Settings.from_env({}).rate_limits]
    assert len(limiter.limits) == len(default) == 1
    assert limiter.limits[0].seconds == default[0].seconds
    assert limiter.amounts[0] >= 10_000 * default[0].amount


def test_the_total_is_read_from_callgrinds_summary() -> None:
    log = ("==41== Callgrind, a call-graph generating cache profiler\n"
           "==41== Events    : Ir\n==41== Collected : 1234567890\n==41== \n"
           "==41== I   refs:      1,234,567,890\n")
    assert instructions.collected(log) == 1234567890
    with pytest.raises(RuntimeError, match="no callgrind total"):
        instructions.collected("==41== error: no such file\n")


def test_a_failed_counted_run_says_why() -> None:
    # the run's own stderr is kept beside valgrind's report; a failure shows its traceback,
    # without the access log lines that come before it
    def failing(kind: str, count: int, log: Path) -> subprocess.Popen[bytes]:
        script = "import sys; print(sys.argv[1], file=sys.stderr); raise KeyError('hand')"
        access_line = '{"ts":"t","msg":"request"}'
        with log.with_suffix(".err").open("wb") as err:
            return subprocess.Popen([sys.executable, "-c", script, access_line], stderr=err)

    why = r"(?s)a counted run failed \(exit 1\):.*KeyError: 'hand'"
    with mock.patch.object(instructions, "_count", failing), \
            pytest.raises(RuntimeError, match=why) as got:
        instructions.measure()
    assert '"ts"' not in str(got.value)


def test_the_figure_is_the_difference_per_move_between_the_two_runs() -> None:
    assert instructions.per_request(1_000_000_000, 2_200_000_000, short=200, long=600) == 3e6


def test_the_counted_ceiling_calls_are_answered() -> None:
    assert instructions.play("ceiling", 20) == 20
