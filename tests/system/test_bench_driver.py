"""The benchmark's slot schedule, its open-loop pacing, its floor app and its report (one
short open-loop load runs against real ``rummy-referee serve``)."""

from __future__ import annotations

import asyncio
import itertools
import os
import statistics
import time
from collections import Counter
from pathlib import Path
from random import Random
from typing import Any

import pytest

from bench import cpu
from bench.__main__ import _parser
from bench.driver import CEILING, FLOOR, MOVES, Pacer, Schedule, Tally, drive, run_load
from bench.floor import app as floor_app
from bench.http import Connection, Reply, dumps
from bench.report import BUDGET, cpu_quotients, render, render_rates, service_allowance, summarize
from tests.support.serving import served

START = 1000.0


def test_two_loads_alternate_and_each_gets_its_seconds() -> None:
    s = Schedule(START, seconds=4, slot=2, warmup=4)
    assert [s.at(START + t) for t in (0.1, 2.1, 4.1, 6.1)] == [
        (MOVES, 0), (CEILING, 1), (MOVES, 2), (CEILING, 3)]
    assert s.at(START + 8.1) == (MOVES, -1)
    assert s.end == START + 8
    assert s.per_kind * s.slot == 4


def test_with_the_floor_three_loads_take_turns() -> None:
    s = Schedule(START, seconds=4, slot=2, warmup=3, kinds=(MOVES, CEILING, FLOOR))
    assert [s.at(START + t)[0] for t in (0.1, 2.1, 4.1, 6.1, 8.1, 10.1)] == [
        MOVES, CEILING, FLOOR, MOVES, CEILING, FLOOR]
    assert s.end == START + 12
    assert s.per_kind * s.slot == 4
    # the warm-up runs each load in turn, unmeasured
    assert [s.at(START - t) for t in (2.9, 1.5, 0.1)] == [
        (MOVES, -1), (CEILING, -1), (FLOOR, -1)]


def test_one_kind_only_for_profiling() -> None:
    s = Schedule(START, seconds=4, slot=2, warmup=3, only=CEILING)
    assert s.at(START + 3) == (CEILING, 0)
    assert s.at(START + 4.5) == (CEILING, -1)


@pytest.mark.parametrize("size", [1, 100, 2048])
def test_the_floor_answers_the_payload_asked_for(size: int) -> None:
    client = floor_app.test_client()
    reply = client.get(f"/_bench/ceiling/0-1?size={size}")
    assert reply.status_code == 200
    assert reply.get_json() == {"payload": "x" * size}
    assert client.get("/readyz").status_code == 200


def _phase(latencies: list[float], errors: int = 0) -> dict[str, Any]:
    tally = Tally(latencies=latencies, ok=len(latencies), errors=errors,
                  client_p50s=[latencies[len(latencies) // 2]])
    return summarize([tally.as_dict()], seconds=1.0)


def _results(floor: dict[str, Any] | None) -> dict[str, Any]:
    reference = {"game_bytes": 2280, "state_bytes": 1952, "log_bytes": 5000,
                 "log_entries": 30, "bytes_per_logged_move": 160.0}
    r: dict[str, Any] = {
        "budget": BUDGET, "clients": 16, "seconds": 1.0, "slot": 2.0, "cpus": 2,
        "server": {"worker_class": "gthread", "workers": "2", "threads": "4",
                   "keepalive": "5", "redis": "AOF on"},
        "load_before": 1.0, "load_after": 2.0,
        "moves": _phase([0.010] * 90 + [0.030] * 10),
        "ceiling": _phase([0.008] * 100) | {"payload_bytes": 1952},
        "memory": {"reference_game": reference,
                   "all_games": {"bytes_per_logged_move": 170.0, "bytes_per_game": 2400.0,
                                 "games": 10}},
    }
    if floor is not None:
        r["floor"] = floor | {"payload_bytes": 1952}
    r["ratio"] = r["moves"]["per_second"] / r["ceiling"]["per_second"]
    return r


def test_the_report_shows_the_floor_when_it_was_measured() -> None:
    text, ok = render(_results(_phase([0.004] * 300)))
    assert "floor (bare Flask)" in text and "moves, ceiling and floor take turns" in text
    row = next(line for line in text.splitlines() if "floor (bare Flask)" in line)
    assert row.split()[3] == "300"  # per second
    assert not ok  # the moves' p99 (30 ms) is over the budget
    without, _ = render(_results(None))
    assert "floor" not in without and "moves and ceiling alternate" in without


def test_the_report_says_whether_the_rules_engine_ran_compiled() -> None:
    lines = {}
    for compiled in (True, False, None):
        r = _results(None)
        if compiled is not None:
            r["server"]["engine_compiled"] = compiled
        lines[compiled] = next(line for line in render(r)[0].splitlines()
                               if line.startswith("server:"))
    assert lines[True].endswith("; rules engine compiled (mypyc)")
    assert lines[False].endswith("; rules engine interpreted (RUMMY_COMPILE=1 compiles it)")
    assert "engine" not in lines[None]  # a report of a run that did not say


def test_the_report_says_what_throughput_the_p99_budget_needs_at_the_tail_measured() -> None:
    # moves: 90 at 10 ms and 10 at 30 ms in 1 s -> mean 12 ms, p99 30 ms = 2.5 x the mean;
    # a 20 ms p99 at that tail is a mean of 8 ms: 16 clients / 8 ms = 2000 moves/s
    text, _ = render(_results(None))
    assert ("moves: p99 = 2.50 x mean; a p99 of 20 ms at that tail needs a mean of 8.0 ms, "
            "so 2000 moves/s from 16 clients (measured: 100/s; ceiling 100/s)") in text


def test_the_report_says_whether_the_workers_were_pinned() -> None:
    results = _results(None)
    assert "CPU of its own" not in render(results)[0]
    results["server"]["pinned"] = True
    server = render(results)[0].splitlines()[1]
    assert server.startswith("server: gunicorn gthread, 2 workers x 4 threads, each kept to "
                             "a CPU of its own;")


def test_errors_of_any_load_fail_the_budget() -> None:
    text, ok = render(_results(_phase([0.004] * 300, errors=2)))
    assert "[MISS] 0 errors" in text and not ok


def test_the_report_shows_cpu_per_request_when_it_was_sampled() -> None:
    results = _results(_phase([0.004] * 300))
    for kind, service in (("moves", 1.2), ("ceiling", 0.9), ("floor", 0.0)):
        results[kind]["cpu_ms"] = {"service": service, "floor": 0.4 if kind == "floor" else 0,
                                   "redis": 0.05, "drivers": 0.25}
    text, _ = render(results)
    row = next(line for line in text.splitlines() if line.strip().startswith("moves  "))
    assert row.split()[1:] == ["1.200", "0.000", "0.050", "0.250", "1.500"]
    assert "CPU per counted request" not in render(_results(None))[0]
    # the quotients: (0.9 + 0.05 + 0.25) / (1.2 + 0.05 + 0.25), and without the drivers
    assert "CPU of a ceiling call / CPU of a move: 0.800 in all, 0.760 for the server's side" \
        in text
    # 0.75 leaves a move 1.2 / 0.75 - 0.3 = 1.3 ms of service CPU, 0.95 / 0.75 - 0.05 on
    # the server's side; at the ceiling's 0.9 ms the quotient would read 1.2 / 1.2
    assert ("a 0.75 ratio leaves a move 1.300 ms of service CPU (+0.400 ms beside a ceiling "
            "call's; 1.217 ms on the server's side alone); a move costing the service what a "
            "ceiling call does would read 1.000 in all") in text


def test_cpu_quotients_leave_the_drivers_out_of_the_servers_side() -> None:
    moves = {"service": 0.6, "floor": 0.0, "redis": 0.05, "drivers": 0.15}
    ceiling = {"service": 0.38, "floor": 0.0, "redis": 0.03, "drivers": 0.05}
    in_all, server_side = cpu_quotients(moves, ceiling)
    assert in_all == pytest.approx(0.46 / 0.80)
    assert server_side == pytest.approx(0.41 / 0.65)


def test_service_allowance_is_what_the_ratio_leaves_the_service() -> None:
    moves = {"service": 1.055, "floor": 0.0, "redis": 0.091, "drivers": 0.263}
    ceiling = {"service": 0.618, "floor": 0.0, "redis": 0.048, "drivers": 0.092}
    same, in_all, server_side = service_allowance(moves, ceiling, 0.75)
    assert same == pytest.approx(0.758 / 0.972)
    assert in_all == pytest.approx(0.758 / 0.75 - 0.354)
    assert server_side == pytest.approx(0.666 / 0.75 - 0.091)
    # the allowance is exact: a move costing the service that much reads the ratio
    at_budget = dict(moves, service=in_all)
    assert cpu_quotients(at_budget, ceiling)[0] == pytest.approx(0.75)
    assert cpu_quotients(dict(moves, service=server_side), ceiling)[1] == pytest.approx(0.75)


def test_cpu_seconds_of_a_process_tree() -> None:
    table = {1: (0, 1.0), 2: (1, 0.5), 3: (2, 0.25), 4: (0, 9.0)}
    assert cpu.tree_seconds([1], table) == 1.75
    assert cpu.tree_seconds([2, 3], table) == 0.75  # each process once
    assert cpu.tree_seconds([0], table) == 0.0  # no such process (a server not started)


def test_cpu_per_request_by_kind_and_group() -> None:
    spent = {"moves": {"service": 1.2, "drivers": 0.3}, "ceiling": {"service": 0.0,
                                                                   "drivers": 0.0}}
    assert cpu.per_request(spent, {"moves": 1000, "ceiling": 0}) == {
        "moves": {"service": pytest.approx(1.2), "drivers": pytest.approx(0.3)}}


@pytest.mark.skipif(not cpu.available(), reason="needs /proc")
def test_the_sampler_credits_cpu_to_the_slot_that_spent_it() -> None:
    slot = 0.25
    start = time.time() + 0.1
    sampler = cpu.SlotSampler({"me": [os.getpid()]}, start, slot, 4, ("busy", "idle"))
    sampler.start()
    for index in range(4):
        begins, ends = start + index * slot, start + (index + 1) * slot
        # The busy slots spin clear of both of their boundaries: the sampler is a thread of
        # this process, and a sample taken late (it waits for the GIL, then reads /proc)
        # must not catch a busy slot's first spin as the idle slot's.
        time.sleep(max(0.0, begins - time.time()))
        if index % 2 == 0:
            time.sleep(0.03)
            while time.time() < ends - 0.03:
                pass
        else:
            time.sleep(max(0.0, ends - time.time()))
    sampler.join(timeout=5)
    busy, idle = sampler.seconds["busy"]["me"], sampler.seconds["idle"]["me"]
    assert busy >= 0.1 and busy > 3 * idle, (busy, idle)


def test_moves_latency_by_type_is_merged_over_the_drivers_and_reported() -> None:
    one = Tally(latencies=[0.010] * 3, ok=3,
                by_type={"draw": [0.010, 0.010], "hand_end": [0.010]}).as_dict()
    two = Tally(latencies=[0.020, 0.040], ok=2,
                by_type={"draw": [0.020], "meld": [0.040]}).as_dict()
    phase = summarize([one, two], seconds=1.0)
    assert list(phase["by_type"]) == ["draw", "hand_end", "meld"]  # most frequent first
    draw = phase["by_type"]["draw"]
    assert draw["count"] == 3
    assert draw["p50_ms"] == pytest.approx(10.0) and draw["max_ms"] == pytest.approx(20.0)
    assert draw["mean_ms"] == pytest.approx(40 / 3)
    results = _results(None)
    results["moves"] = phase
    line = next(x for x in render(results)[0].splitlines() if "moves by type" in x)
    assert line.endswith("draw p50 10.0 p99 20.0; hand_end p50 10.0 p99 10.0; "
                         "meld p50 40.0 p99 40.0")


def test_the_report_says_whether_the_ceiling_itself_is_within_the_p99_budget() -> None:
    results = _results(None)  # the ceiling's calls all take 8 ms
    assert "ceiling: p99 8.00 ms, within the moves' 20 ms budget" in render(results)[0]
    results["ceiling"] = _phase([0.008] * 90 + [0.025] * 10) | {"payload_bytes": 1952}
    assert "ceiling: p99 25.00 ms, over the moves' 20 ms budget" in render(results)[0]


def test_the_load_runs_on_uvloop_where_it_is_installed() -> None:
    pytest.importorskip("uvloop")

    async def loop_module() -> str:
        return type(asyncio.get_running_loop()).__module__

    assert run_load(loop_module()).startswith("uvloop")


def test_an_open_loop_client_is_due_at_poisson_times_of_its_rate() -> None:
    pacer = Pacer(50.0, START, Random(7))
    times = [pacer.advance() for _ in range(20000)]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert times[0] > START and all(gap > 0 for gap in gaps)
    assert statistics.mean(gaps) == pytest.approx(1 / 50, rel=0.03)
    # exponential gaps: as spread as they are long (a steady pace would have none)
    assert statistics.stdev(gaps) == pytest.approx(1 / 50, rel=0.05)
    with pytest.raises(ValueError, match="rate must be positive"):
        Pacer(0.0, START, Random(7))


@pytest.mark.parametrize("text", ["", "0", "-5", "fast", "100,abc"])
def test_rates_must_be_positive_numbers(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _parser().parse_args(["--rates", text])
    assert "--rates" in capsys.readouterr().err


@pytest.mark.slow
def test_open_loop_moves_leave_at_the_rate_offered_not_as_fast_as_answers_come(
        redis_url: str, tmp_path: Path) -> None:
    # 4 clients offering 40 moves/s in all for 2 s: about 80 moves. Closed-loop, the same
    # clients send the next move as soon as an answer comes: hundreds a second.
    with served(tmp_path, redis_url) as server:
        cfg = {"host": "127.0.0.1", "port": server.port, "measure_from": time.time() + 2.0,
               "seconds": 2.0, "slot_seconds": 2.0, "warmup": 2.0, "games_per_client": 2,
               "size": 0, "floor_port": None, "only": MOVES, "rate": 40.0, "clients": 4,
               "first_client": 0, "proc": 0, "seed": 1}
        tallies = run_load(drive(cfg))
    moves = tallies[MOVES]
    assert moves.errors == 0, moves.error_samples
    assert 30 <= moves.ok <= 140, moves.ok
    assert all(latency > 0 for latency in moves.latencies)


def _rate_row(offered: float, latencies: list[float]) -> dict[str, Any]:
    return {"offered": offered, **_phase(latencies), "cpus_busy": 1.0}


def test_the_open_loop_report_names_the_highest_rate_within_the_p99_budget() -> None:
    results = {"budget": BUDGET, "clients": 64, "seconds": 1.0, "cpus": 2,
               "server": {"worker_class": "gthread", "workers": 2, "threads": 4,
                          "redis": "AOF on"},
               "rates": [_rate_row(100, [0.005] * 100), _rate_row(200, [0.015] * 200),
                         _rate_row(300, [0.010] * 270 + [0.5] * 30)]}
    text, ok = render_rates(results)
    assert ok
    assert "at 100, 200 moves/s offered; the highest: 200/s" in text
    row = next(line for line in text.splitlines() if line.split()[:1] == ["300"])
    assert row.split()[1] == "300" and float(row.split()[4]) == 500.0  # per s; p99 ms
    results["rates"] = results["rates"][2:]
    text, ok = render_rates(results)
    assert not ok and "over 20 ms (or there were errors) at every rate offered" in text


@pytest.mark.slow
def test_the_load_drivers_connection_reads_a_429s_retry_after(redis_url: str,
                                                              tmp_path: Path) -> None:
    async def create_twice(port: int) -> list[Reply]:
        conn = Connection("127.0.0.1", port)
        body = dumps({"variant": "basic", "players": ["a", "b"]})
        try:
            return [await conn.request("POST", "/v1/games", body) for _ in range(2)]
        finally:
            await conn.close()

    with served(tmp_path, redis_url, env={"RUMMY_CREATE_RATE_LIMITS": "1/minute"}) as server:
        first, second = asyncio.run(create_twice(server.port))
    assert (first.status, first.retry_after) == (201, None)
    assert second.status == 429
    assert second.retry_after is not None and 1 <= second.retry_after <= 60


@pytest.mark.slow
def test_a_move_the_seats_rate_limit_refuses_is_sent_again_not_counted_an_error(
        redis_url: str, tmp_path: Path) -> None:
    # one client alone, as fast as the answers come, against a limit of 5 requests a
    # second per seat: its seats meet the limit, wait out Retry-After and go on playing
    with served(tmp_path, redis_url, env={"RUMMY_RATE_LIMITS": "5/second"}) as server:
        cfg = {"host": "127.0.0.1", "port": server.port, "measure_from": time.time() + 1.0,
               "seconds": 3.0, "slot_seconds": 3.0, "warmup": 1.0, "games_per_client": 1,
               "size": 0, "floor_port": None, "only": MOVES, "clients": 1,
               "first_client": 0, "proc": 0, "seed": 2}
        tallies = run_load(drive(cfg))
    moves = tallies[MOVES]
    assert moves.errors == 0, moves.error_samples
    assert moves.throttled_moves > 0 and moves.ok > moves.throttled_moves
    assert len(moves.latencies) == moves.ok + moves.refused
    summary = summarize([moves.as_dict()], seconds=3.0)
    assert summary["throttled_moves"] == moves.throttled_moves
    results = _results(None)
    results["moves"]["throttled_moves"] = moves.throttled_moves
    text, _ = render(results)
    assert f"{moves.throttled_moves} moves throttled by the per-seat rate limit" in text
    assert "[ok  ] 0 errors" in text


def test_the_report_shows_how_the_workers_shared_the_answers() -> None:
    tallies = [Tally(latencies=[0.004] * 3, ok=3, workers=Counter({"a": 2, "b": 1})).as_dict(),
               Tally(latencies=[0.004] * 5, ok=5, workers=Counter({"b": 5})).as_dict()]
    assert summarize(tallies, seconds=1.0)["worker_shares"] == [0.75, 0.25]
    results = _results(None)
    results["moves"]["worker_shares"] = [0.75, 0.25]
    text, _ = render(results)
    assert "answered by the workers 75% / 25%" in text


def test_the_report_says_whether_each_worker_had_a_socket_of_its_own() -> None:
    results = _results(None)
    assert "socket of its own" not in render(results)[0]
    results["server"]["reuse_port"] = True
    server = render(results)[0].splitlines()[1]
    assert server == ("server: gunicorn gthread, 2 workers x 4 threads, each listening on a "
                      "socket of its own; redis-server AOF on")
