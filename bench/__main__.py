"""``python -m bench``: run the whole benchmark and print the report (see :mod:`bench`)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import cpu, engine, flat, instructions, probe, watchers
from bench.driver import MOVES, schedule_of
from bench.report import BUDGET, render, render_rates, summarize
from bench.stack import Stack

ROOT = Path(__file__).resolve().parent.parent
PLOT = Path(__file__).resolve().parent / "flatness.png"


ONE_ADDRESS = {"RUMMY_MAX_CONNECTIONS_PER_ADDRESS": "0"}
"""Every client of a run comes from one address, with a connection each (or one per seat,
``--connection-per-seat``): more than the service lets one address hold (64 per worker by
default). Real players come from many addresses, so the runs lift that limit."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python3 dev.py bench",
        description="Benchmark the referee: moves/s and latency under load against the "
                    "stack's ceiling, engine figures, Redis memory per game and per move.")
    parser.add_argument("--clients", type=int, default=None,
                        help="concurrent clients, default 16 (closed loop) or 64 (--rates)")
    parser.add_argument("--seconds", type=float, default=20.0,
                        help="measured seconds of moves, and as many of ceiling, default 20")
    parser.add_argument("--warmup", type=float, default=4.0,
                        help="unmeasured seconds of load before the measurement, default 4")
    parser.add_argument("--slot", type=float, default=2.0,
                        help="the measurement alternates moves and ceiling slots of this "
                             "many seconds, default 2")
    parser.add_argument("--games-per-client", type=int, default=4,
                        help="games each client keeps going, default 4")
    parser.add_argument("--connection-per-seat", action="store_true",
                        help="each seat of a game on its own keep-alive connection (as "
                             "players on their own devices), instead of one per client")
    parser.add_argument("--driver-procs", type=int, default=2,
                        help="load-driver processes the clients are spread over, default 2")
    parser.add_argument("--workers", type=int, default=None,
                        help="gunicorn workers (default: the service's, RUMMY_WORKERS or CPUs)")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads per worker (default: the service's, RUMMY_THREADS)")
    parser.add_argument("--pin-workers", action=argparse.BooleanOptionalAction, default=None,
                        help="keep each gunicorn worker on a CPU of its own "
                             "(RUMMY_PIN_WORKERS=1, for the service and the floor), or "
                             "not (--no-pin-workers: 0); default: the service's own, auto "
                             "(pinned when there is one worker per CPU)")
    parser.add_argument("--skip-engine", action="store_true",
                        help="skip the in-process engine figures")
    parser.add_argument("--skip-flat", action="store_true",
                        help="skip the flatness curves (bench/flat.py)")
    parser.add_argument("--plot", metavar="PATH", default=str(PLOT),
                        help="where the flatness curves' PNG goes (with matplotlib installed; "
                             "default bench/flatness.png)")
    parser.add_argument("--skip-floor", action="store_true",
                        help="skip the floor: a bare Flask route (bench/floor.py) served by "
                             "a second gunicorn with the same settings, in slots of its own")
    parser.add_argument("--rates", metavar="R[,R…]", type=_rates, default=None,
                        help="instead of the closed loop: offer moves open-loop at each of "
                             "these rates (moves/s in all, Poisson arrivals spread over the "
                             "clients) for --seconds each, and report the latency at each; "
                             "a move's latency runs from the time it was due")
    parser.add_argument("--watchers", type=int, default=None, metavar="N",
                        help="instead of the closed loop: live tables, N event streams held "
                             "on games being played, their delivery latency and the moves "
                             "with and without them (bench/watchers.py)")
    parser.add_argument("--cycles", type=int, default=watchers.CYCLES, metavar="N",
                        help="with --watchers: phases with the watchers, each between two "
                             f"without them (default {watchers.CYCLES})")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--instructions", action="store_true",
                        help="instead of the timed benchmark: count the instructions a move "
                             "costs in-process, with valgrind, a figure the machine's speed "
                             "does not move (bench/instructions.py; a few minutes)")
    return parser


def _rates(text: str) -> list[float]:
    """``--rates``: positive moves per second, comma-separated."""
    try:
        rates = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {text!r}") from None
    if not rates or any(not 0 < rate < 1e6 for rate in rates):
        raise argparse.ArgumentTypeError(f"rates must be positive moves/s: {text!r}")
    return rates


def _load(stack: Stack, args: argparse.Namespace, tmp: Path, size: int,
          rate: float | None = None) -> dict[str, dict[str, Any]]:
    """Run the load (moves, ceiling and floor slots in turn; with a ``rate``, moves only,
    offered open-loop at that many per second) in separate driver processes; the merged
    tallies of each kind of load."""
    procs = max(1, min(args.driver_procs, args.clients))
    start = time.time() + 1.0 + args.warmup
    base = {"host": "127.0.0.1", "port": stack.port, "measure_from": start,
            "seconds": args.seconds, "slot_seconds": args.slot, "warmup": args.warmup,
            "games_per_client": args.games_per_client, "size": size,
            "connection_per_seat": args.connection_per_seat,
            "floor_port": stack.floor_port or None}
    if rate is not None:
        base.update(only=MOVES, slot_seconds=args.seconds)
    running = []
    first = 0
    for p in range(procs):
        count = args.clients // procs + (1 if p < args.clients % procs else 0)
        cfg = dict(base, proc=p, clients=count, first_client=first, seed=p)
        if rate is not None:
            cfg["rate"] = rate * count / args.clients
        first += count
        out = tmp / f"load-{p}.json"
        running.append((subprocess.Popen(
            [sys.executable, "-m", "bench.driver", json.dumps(cfg), str(out)], cwd=ROOT),
            out))
    schedule = schedule_of(base)
    kinds = schedule.kinds if rate is None else (MOVES,)
    sampler = None
    if cpu.available():
        groups = {"service": [stack.server_pid], "floor": [stack.floor_pid],
                  "redis": [stack.redis.pid or 0], "drivers": [p.pid for p, _ in running]}
        sampler = cpu.SlotSampler(groups, start, base["slot_seconds"],
                                  schedule.slots if rate is None else 1, kinds)
        sampler.start()
    results = []
    for proc, out in running:
        if proc.wait(timeout=schedule.end - time.time() + 120) != 0:
            raise RuntimeError(f"a driver process failed (exit {proc.returncode})")
        results.append(json.loads(out.read_text()))
    seconds = float(results[0]["measured_seconds"])
    phases = {kind: summarize([r[kind] for r in results], seconds) for kind in kinds}
    if sampler is not None:
        sampler.join(timeout=10)
        counts = {kind: int(phase["count"]) for kind, phase in phases.items()}
        for kind, groups_ms in cpu.per_request(sampler.seconds, counts).items():
            phases[kind]["cpu_ms"] = groups_ms
        for kind, groups_s in sampler.seconds.items():
            phases[kind]["cpus_busy"] = sum(groups_s.values()) / seconds
    return phases


def _sweep(args: argparse.Namespace, results: dict[str, Any]) -> int:
    """``--rates``: the moves offered open-loop at each rate in turn, on one stack."""
    with tempfile.TemporaryDirectory(prefix="rummy-bench-") as name:
        tmp = Path(name)
        # every client of the sweep comes from one address, and together they create more
        # games than the per-address limit on creating them lets one address (120 a minute
        # by default); real players come from many addresses, so this run lifts that
        # limit, and the one on connections per address (ONE_ADDRESS), and keeps every
        # other setting
        stack = Stack(tmp, workers=args.workers, threads=args.threads,
                      pin_workers=args.pin_workers,
                      env={"RUMMY_CREATE_RATE_LIMITS": "off", **ONE_ADDRESS})
        print("starting redis-server and the service …", file=sys.stderr, flush=True)
        stack.start()
        try:
            results["server"] = dict(stack.settings(), create_rate_limits="off",
                                     connections_per_address="off")
            results["rates"] = []
            for rate in args.rates:
                print(f"load: {rate:g} moves/s offered open-loop by {args.clients} clients, "
                      f"{args.seconds:g} s …", file=sys.stderr, flush=True)
                moves = _load(stack, args, tmp, 0, rate)[MOVES]
                results["rates"].append({"offered": rate, **moves})
        finally:
            stack.stop()
    text, _ = render_rates(results)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.instructions:
        return instructions.main([])
    if args.watchers is not None:
        print(f"live tables: {args.watchers} watchers, {args.cycles} cycles of "
              f"{args.seconds:g} s of moves without and as long with them, and as long "
              "without …", file=sys.stderr, flush=True)
        live = watchers.run(args.watchers, args.seconds, args.workers, args.cycles)
        print(watchers.render(live))
        if args.json:
            Path(args.json).write_text(json.dumps(live, indent=2) + "\n")
        return 0
    if args.clients is None:
        args.clients = 64 if args.rates else 16
    results: dict[str, Any] = {"budget": BUDGET, "clients": args.clients,
                               "connection_per_seat": args.connection_per_seat,
                               "seconds": args.seconds, "slot": args.slot,
                               "cpus": os.cpu_count()}
    if args.rates:
        return _sweep(args, results)
    if not args.skip_engine:
        print("engine figures (in-process) …", file=sys.stderr, flush=True)
        results["engine"] = engine.figures()
    if not args.skip_flat:
        print("flatness curves (in-process) …", file=sys.stderr, flush=True)
        results["flat"] = flat.curves()
        if flat.plot(results["flat"], Path(args.plot)):
            results["flat"]["plot"] = args.plot
    with tempfile.TemporaryDirectory(prefix="rummy-bench-") as name:
        tmp = Path(name)
        stack = Stack(tmp, workers=args.workers, threads=args.threads,
                      pin_workers=args.pin_workers, env=ONE_ADDRESS,
                      floor=not args.skip_floor)
        print("starting redis-server and the service …", file=sys.stderr, flush=True)
        stack.start()
        try:
            results["server"] = dict(stack.settings(), connections_per_address="off")
            reference = probe.reference_game("127.0.0.1", stack.port, stack.redis.url)
            results["memory"] = {"reference_game": reference}
            size = reference["state_bytes"]
            kinds = "moves and ceiling" if args.skip_floor else "moves, ceiling and floor"
            print(f"load: {args.clients} clients, {args.seconds:g} s each of {kinds} "
                  f"({size}-byte payload) in {args.slot:g} s slots …", file=sys.stderr,
                  flush=True)
            results["load_before"] = os.getloadavg()[0]
            results.update(_load(stack, args, tmp, size))
            results["load_after"] = os.getloadavg()[0]
            for kind in ("ceiling", "floor"):
                if kind in results:
                    results[kind]["payload_bytes"] = size
            results["memory"]["all_games"] = probe.all_games(stack.redis.url)
        finally:
            stack.stop()
    results["ratio"] = results["moves"]["per_second"] / max(results["ceiling"]["per_second"],
                                                            1e-9)
    text, ok = render(results)
    results["budget_met"] = ok
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
