"""``RUMMY_PIN_WORKERS``: each gunicorn worker kept to a CPU of its own (gunicorn_conf's
``pre_fork`` chooses, ``post_fork`` applies), against real ``rummy-referee serve``; by
default (``auto``) when there is one worker per CPU."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from service.config import least_used_cpu, pins_workers
from tests.support.serving import Server, served

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_getaffinity"),
                                reason="CPU affinity is Linux's")


def test_a_new_worker_takes_the_cpu_fewest_live_workers_are_on() -> None:
    assert least_used_cpu({0, 1, 2, 3}, []) == 0
    assert least_used_cpu({0, 1, 2, 3}, [0, 1]) == 2
    assert least_used_cpu({4, 6}, [4, None]) == 6  # None: a worker not pinned
    assert least_used_cpu({0, 1}, [0, 1, 0]) == 1  # more workers than CPUs: spread
    assert least_used_cpu([5], [5, 5]) == 5


@pytest.mark.parametrize(
    ("setting", "workers", "cpus", "pinned"),
    [
        (None, 2, 2, True),  # auto: one worker per CPU, as by default
        (None, 1, 1, True),
        (None, 1, 2, False),  # fewer workers: which CPUs would be arbitrary
        (None, 4, 2, False),  # more workers: two would share a CPU
        (True, 1, 2, True),
        (True, 4, 2, True),
        (False, 2, 2, False),
    ],
)
def test_auto_pins_the_workers_when_there_is_one_per_cpu(
        setting: bool | None, workers: int, cpus: int, pinned: bool) -> None:
    assert pins_workers(setting, workers, cpus) is pinned


def test_a_cpu_the_worker_cannot_keep_to_leaves_it_to_the_kernel_with_a_warning() -> None:
    """post_fork, given a CPU that is not there: the worker starts all the same."""
    root = Path(__file__).resolve().parents[2]
    code = ("import os, runpy, sys, types; conf = runpy.run_path(sys.argv[1]); "
            "said = []; log = types.SimpleNamespace(warning=lambda *a: said.append(a[0] % a[1:])); "
            "worker = types.SimpleNamespace(pid=os.getpid(), rummy_cpu=4095); "
            "conf['post_fork'](types.SimpleNamespace(log=log), worker); "
            "print(said[0]); print(sorted(os.sched_getaffinity(0)))")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RUMMY_", "REDIS_"))}
    result = subprocess.run([sys.executable, "-c", code, str(root / "gunicorn.conf.py")],
                            env=env | {"REDIS_URL": "redis://127.0.0.1:1/0"}, cwd=root,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    warning, cpus = result.stdout.splitlines()
    assert "left to the kernel" in warning and "CPU 4095" in warning
    assert cpus == str(sorted(os.sched_getaffinity(0)))


def _two_cpus() -> set[int]:
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip("needs two CPUs")
    return set(allowed[:2])


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
def test_by_default_one_worker_per_cpu_each_keeps_to_a_cpu_of_its_own(
        redis_url: str, tmp_path: Path) -> None:
    cpus = _two_cpus()
    with served(tmp_path, redis_url, cpus=cpus) as server:  # 2 workers on 2 CPUs
        found = _affinities(server, 2)
        assert {next(iter(c)) for c in found.values()} == cpus
        assert "each kept to a CPU of its own" in server.output()


@pytest.mark.slow
def test_a_reload_spreads_the_new_workers_over_the_cpus(redis_url: str, tmp_path: Path) -> None:
    """SIGHUP: gunicorn starts the new workers while the old ones still run; each new one
    takes the CPU the fewest live workers are on, so they end on distinct CPUs."""
    cpus = _two_cpus()
    with served(tmp_path, redis_url, cpus=cpus) as server:
        old = set(_affinities(server, 2))
        os.kill(server.master_pid(), signal.SIGHUP)
        deadline = time.monotonic() + 30
        while set(server.worker_pids()) & old or len(server.worker_pids()) != 2:
            assert time.monotonic() < deadline, server.output()
            time.sleep(0.05)
        new = _affinities(server, 2)
        assert {next(iter(c)) for c in new.values()} == cpus


@pytest.mark.slow
@pytest.mark.parametrize(("workers", "env"), [(1, {}), (2, {"RUMMY_PIN_WORKERS": "0"})],
                         ids=["fewer-workers-than-cpus", "pin-workers-0"])
def test_workers_are_left_to_the_kernel_otherwise(
        redis_url: str, tmp_path: Path, workers: int, env: dict[str, str]) -> None:
    cpus = _two_cpus()
    with served(tmp_path, redis_url, workers=workers, env=env, cpus=cpus) as server:
        pids = server.worker_pids()
        assert len(pids) == workers
        assert all(os.sched_getaffinity(pid) == cpus for pid in pids)
        assert "kept to a CPU" not in server.output()
