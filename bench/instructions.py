"""Instructions per move, counted by valgrind: a figure the machine's speed does not move.

``python3 dev.py bench --instructions`` (needs ``valgrind``). The timed figures drift by
tens of percent from minute to minute on a shared machine, so a change worth a few percent
cannot be seen in them. This counts instead: one process plays moves of every variant
through Flask's test client against a redis-server of its own, under valgrind's callgrind
tool, twice (with ``WARMUP + SHORT`` and ``WARMUP + LONG`` moves). The difference of the
two totals divided by ``LONG - SHORT`` is the count per move, start-up and warm-up left out.
Ceiling calls (``GET /_bench/ceiling/…``, :mod:`bench.ceiling`) are counted the same way, for
comparison.

What is counted: the service's whole request path except gunicorn (Flask's routing and
hooks, the move's fast path, the referee, the engine, redis-py and the log line), plus the
client's side (the test client building each request, :mod:`bench.player` choosing the
move), about a quarter of the total. Redis runs in its own process and is not counted.

The two runs play the same games: this process swaps the engine's shuffling generator for a
seeded one (the service itself always shuffles with ``secrets.SystemRandom``) and runs with
``PYTHONHASHSEED=0``. What still differs from run to run (game ids, seat tokens, request
ids) moves the count by well under 1%.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from random import Random
from typing import TYPE_CHECKING, Any
from unittest import mock

import service.rules.engine as engine
from bench.ceiling import create_bench_app
from bench.driver import CEILING, MOVES, VARIANTS
from bench.player import GamePlan, new_game_body
from service.redis_server import RedisServer

if TYPE_CHECKING:
    from flask.testing import FlaskClient

ROOT = Path(__file__).resolve().parent.parent
WARMUP, SHORT, LONG = 300, 200, 600
SEED = 12345
CEILING_BYTES = 2048
"""About the size of a stored mid-hand 4-player Rummy 51 state, as the ceiling's payload."""
UNREACHED_LIMIT = "1000000/second"
"""``RUMMY_RATE_LIMITS`` for the counted runs: one window per seat, as the default
``100/second``, so each move still counts its hit in the commit, but one these runs never
reach. In one process on a fast machine a seat of the eight games makes more than 100
requests a second, and the default refused them (429)."""


def play(kind: str, count: int) -> int:
    """Make ``count`` requests of ``kind`` in this process against a redis-server of its own:
    ``moves`` (not counting the ``GET …/me`` of new deals) over games of every variant, or
    ``ceiling`` calls; the moves applied, or the ceiling calls answered. The app is
    :func:`bench.ceiling.create_bench_app`'s (the service's, with the ceiling route). The
    engine's shuffles are seeded, and ``REDIS_URL`` set, until it returns."""
    with mock.patch.object(engine, "_SYSTEM_RANDOM", Random(SEED)), \
            tempfile.TemporaryDirectory(prefix="rummy-instructions-") as tmp:
        redis = RedisServer(Path(tmp))
        redis.start()
        try:
            with mock.patch.dict(os.environ, REDIS_URL=redis.url,
                                 RUMMY_RATE_LIMITS=UNREACHED_LIMIT):
                client = create_bench_app().test_client()
                return (_moves(client, count) if kind == MOVES
                        else _ceiling_calls(client, count))
        finally:
            redis.stop()


def _ceiling_calls(client: FlaskClient, count: int) -> int:
    answered = 0
    for i in range(count):
        reply = client.get(f"/_bench/ceiling/instructions-{i % 16}?size={CEILING_BYTES}")
        reply.get_json()  # a client reads what it asked for, as the load driver's do
        answered += reply.status_code == 200
    return answered


def _moves(client: FlaskClient, moves: int) -> int:
    rng = Random(SEED)
    made = 0

    def new_game() -> GamePlan:
        nonlocal made
        variant = VARIANTS[made % len(VARIANTS)]
        data = client.post("/v1/games", json=new_game_body(variant, made)).get_json()
        made += 1
        return GamePlan(data["game_id"], variant, [s["token"] for s in data["seats"]],
                        data["game"], rng)

    games = [new_game() for _ in range(8)]
    applied = turn = 0
    for _ in range(moves):
        while True:
            turn += 1
            game = games[turn % len(games)]
            if game.finished:
                games[turn % len(games)] = new_game()
                continue
            seat = game.to_move
            auth = {"Authorization": f"Bearer {game.tokens[seat]}"}
            if game.seats[seat].hand is None:  # a new deal: read the hand
                game.saw(seat, _me(client, game.game_id, auth), [])
                continue
            break
        reply = client.post(f"/v1/games/{game.game_id}/moves", json=game.next_move(),
                            headers=auth)
        if reply.status_code == 200:
            applied += 1
            data = reply.get_json()
            game.saw(seat, data["game"], data["events"])
        elif reply.status_code == 422:  # refused: read the seat again and go on
            game.saw(seat, _me(client, game.game_id, auth), [])
        else:
            raise RuntimeError(f"a move was answered {reply.status_code}: {reply.get_data()!r}")
    return applied


def _me(client: FlaskClient, game_id: str, auth: dict[str, str]) -> dict[str, Any]:
    """The seat's view (``GET …/me``); RuntimeError when it is not answered."""
    reply = client.get(f"/v1/games/{game_id}/me", headers=auth)
    if reply.status_code != 200:
        raise RuntimeError(f"GET …/me was answered {reply.status_code}: {reply.get_data()!r}")
    view: dict[str, Any] = reply.get_json()
    return view


def collected(valgrind_log: str) -> int:
    """The instruction total of callgrind's summary line (``==pid== Collected : N``)."""
    found = re.findall(r"Collected\s*:\s*(\d+)", valgrind_log)
    if not found:
        raise RuntimeError(f"no callgrind total in valgrind's output: {valgrind_log[-500:]!r}")
    return int(found[-1])


def per_request(short_total: int, long_total: int, short: int = SHORT, long: int = LONG
                ) -> float:
    """Instructions per request: what the longer run counted beyond the shorter one, per
    request it made beyond it (start-up and warm-up are in both)."""
    return (long_total - short_total) / (long - short)


def _count(kind: str, count: int, log: Path) -> subprocess.Popen[bytes]:
    """Start a counted run: valgrind's report in ``log``, the run's own stderr (the
    service's log lines, a traceback) beside it in ``log`` with the suffix ``.err``."""
    with log.with_suffix(".err").open("wb") as err:
        return subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
             f"--log-file={log}", sys.executable, "-m", "bench.instructions", "--play", kind,
             str(count)],
            cwd=ROOT, env=dict(os.environ, PYTHONHASHSEED="0"),
            stdout=subprocess.DEVNULL, stderr=err)


def why_failed(stderr: str, keep: int = 12) -> str:
    """The end of a failed run's stderr without the service's access log lines (JSON, one
    per request): the traceback that says why it stopped."""
    lines = [line for line in stderr.splitlines() if not line.startswith('{"ts":')]
    return "\n".join(lines[-keep:])


def measure() -> dict[str, float]:
    """Count moves and ceiling calls (the four runs at once, each in its own process):
    instructions per move, per ceiling call, and their quotient."""
    with tempfile.TemporaryDirectory(prefix="rummy-instructions-") as tmp:
        logs = {(kind, count): Path(tmp) / f"{kind}-{count}.log"
                for kind in (MOVES, CEILING) for count in (WARMUP + SHORT, WARMUP + LONG)}
        started = {log: _count(kind, count, log) for (kind, count), log in logs.items()}
        try:
            for log, proc in started.items():
                if proc.wait() != 0:
                    stderr = log.with_suffix(".err").read_text(errors="replace")
                    raise RuntimeError(f"a counted run failed (exit {proc.returncode}):\n"
                                       f"{why_failed(stderr)}")
        finally:
            for proc in started.values():
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        totals = {key: collected(log.read_text()) for key, log in logs.items()}
    figures = {kind: per_request(totals[kind, WARMUP + SHORT], totals[kind, WARMUP + LONG])
               for kind in (MOVES, CEILING)}
    return {"instructions_per_move": figures[MOVES],
            "instructions_per_ceiling_call": figures[CEILING],
            "ceiling_over_move": figures[CEILING] / figures[MOVES],
            "requests_counted": LONG - SHORT}


def main(argv: list[str]) -> int:
    """``--play KIND N``: a counted process; otherwise count and print the figures."""
    if argv[:1] == ["--play"]:
        play(argv[1], int(argv[2]))
        return 0
    if shutil.which("valgrind") is None:
        print("--instructions needs valgrind (e.g. apt-get install valgrind)", file=sys.stderr)
        return 2
    print(f"counting instructions: runs of {WARMUP + SHORT} and {WARMUP + LONG} moves, and "
          "of as many ceiling calls, in-process under valgrind (a few minutes) …",
          file=sys.stderr, flush=True)
    figures = measure()
    print("instructions per request (callgrind, in-process through Flask's test client, the "
          f"client's side included; the difference between runs of {WARMUP + SHORT} and "
          f"{WARMUP + LONG} requests):")
    print(f"  move          {figures['instructions_per_move']:>12,.0f}")
    print(f"  ceiling call  {figures['instructions_per_ceiling_call']:>12,.0f}")
    print(f"  ceiling / move: {figures['ceiling_over_move']:.2f} (gunicorn, which both pay "
          "alike, is not counted)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
