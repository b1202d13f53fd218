"""``RUMMY_PIN_WORKERS``: each gunicorn worker kept to a CPU of its own (gunicorn_conf's
``pre_fork`` chooses, ``post_fork`` applies), against real ``rummy-referee serve``."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest
from serving import Server, served

from service.config import least_used_cpu

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_getaffinity"),
                                reason="CPU affinity is Linux's")


def test_a_new_worker_takes_the_cpu_fewest_live_workers_are_on() -> None:
    assert least_used_cpu({0, 1, 2, 3}, []) == 0
    assert least_used_cpu({0, 1, 2, 3}, [0, 1]) == 2
    assert least_used_cpu({4, 6}, [4, None]) == 6  # None: a worker not pinned
    assert least_used_cpu({0, 1}, [0, 1, 0]) == 1  # more workers than CPUs: spread
    assert least_used_cpu([5], [5, 5]) == 5


def _affinities(server: Server, count: int) -> dict[int, set[int]]:
    """The workers' CPU sets, once there are ``count`` workers, each on one CPU (a worker
    sets its own just after it is forked)."""
    deadline = time.monotonic() + 20
    while True:
        found = {}
        for pid in server.worker_pids():
            with contextlib.suppress(OSError):  # gone meanwhile
                found[pid] = os.sched_getaffinity(pid)
        if len(found) == count and all(len(cpus) == 1 for cpus in found.values()):
            return found
        if time.monotonic() > deadline:
            pytest.fail(f"workers' CPUs: {found}\n{server.output()}")
        time.sleep(0.05)


@pytest.mark.slow
def test_pinned_workers_each_keep_to_a_cpu_and_a_replacement_takes_the_free_one(
        redis_url: str, tmp_path: Path) -> None:
    allowed = os.sched_getaffinity(0)
    with served(tmp_path, redis_url, env={"RUMMY_PIN_WORKERS": "1"}) as server:
        first = _affinities(server, 2)
        cpus = [next(iter(c)) for c in first.values()]
        assert set(cpus) <= allowed
        assert len(set(cpus)) == min(2, len(allowed))  # spread over the CPUs there are
        gone, kept = list(first)
        os.kill(gone, signal.SIGKILL)
        deadline = time.monotonic() + 20
        while gone in server.worker_pids() or len(server.worker_pids()) < 2:
            assert time.monotonic() < deadline, server.output()
            time.sleep(0.05)
        now = _affinities(server, 2)
        assert now[kept] == first[kept]
        (new,) = set(now) - {kept}
        assert now[new] == first[gone]  # the CPU the dead worker left free


@pytest.mark.slow
def test_workers_are_not_pinned_by_default(redis_url: str, tmp_path: Path) -> None:
    allowed = os.sched_getaffinity(0)
    with served(tmp_path, redis_url) as server:
        pids = server.worker_pids()
        assert len(pids) == 2
        assert all(os.sched_getaffinity(pid) == allowed for pid in pids)
