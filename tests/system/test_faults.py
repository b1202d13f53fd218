"""Faults under load, over real processes: Redis killed (SIGKILL) and restarted on its AOF,
Redis down for a while, gunicorn stopped with SIGTERM.

Helpers (``Served``, ``Http``, games, log checks) are those of ``test_reliability.py``. Run
with ``-s`` to see the figures (lines starting with ``RELIABILITY``).
"""

from __future__ import annotations

import contextlib
import http.client
import itertools
import json
import math
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from random import Random

import pytest

from service.redis_server import RedisServer
from tests.support.redis_servers import running
from tests.support.reliability import (
    Accepted,
    Game,
    Http,
    Settled,
    check_log,
    create_games,
    fetch_log,
    is_problem,
    next_move,
    report,
    run_threads,
    serving,
    settle,
    wait_ready_again,
)

pytestmark = pytest.mark.slow


LOST_HINT = (
    "acknowledged moves lost. With appendfsync everysec Redis postpones the AOF write() "
    "while its background fsync runs (up to 2 s) yet still answers the client "
    "(flushAppendOnlyFile in aof.c); a SIGKILL in that window loses answered writes. "
    "appendfsync always closes it"
)


@contextlib.contextmanager
def own_redis(redis_server: RedisServer, tmp_path: Path,
              appendfsync: str) -> Iterator[RedisServer]:
    """A redis-server of this test alone, AOF on, same binary as the session one.

    With ``everysec`` its data lives on tmpfs where there is one: a busy disk makes Redis
    postpone its AOF ``write()`` while a background fsync lags (up to 2 s) and still answer
    writes, which a SIGKILL then loses — a property of the disk under load, measured in
    docs/operations.md's reliability section, not of the service; ``always`` keeps the real disk."""
    shm = Path("/dev/shm")
    data = (Path(tempfile.mkdtemp(prefix="rummy-aof-", dir=shm))
            if appendfsync == "everysec" and shm.is_dir() else tmp_path / "redis")
    try:
        with running(RedisServer(data, binary=redis_server.binary,
                                 appendonly=True, appendfsync=appendfsync)) as server:
            yield server
    finally:
        if data.parent == shm:
            shutil.rmtree(data, ignore_errors=True)


# --- Redis killed, Redis down -----------------------------------------------------------------


READS = ("public", "me", "legal-moves", "events", "create", "readyz", "healthz")


def read_something(conn: Http, game: Game, rng: Random, seen: Counter[str],
                   bad: list[str]) -> None:
    """One read (or a game creation) of any kind: 200/201, or a 503 problem with Retry-After
    (never a 500, never another status)."""
    kind = rng.choice(READS)
    token = game.turn_token()
    if kind == "public":
        reply = conn.request("GET", game.path)
    elif kind == "me":
        reply = conn.request("GET", f"{game.path}/me", token=token)
    elif kind == "legal-moves":
        reply = conn.request("GET", f"{game.path}/legal-moves", token=token)
    elif kind == "events":
        after = max(0, game.view["version"] - 3)
        reply = conn.request("GET", f"{game.path}/events?after={after}", token=token)
    elif kind == "create":
        reply = conn.request("POST", "/v1/games", body={"variant": "basic",
                                                        "players": ["A", "B"]})
    else:
        reply = conn.request("GET", f"/{kind}")
    seen[f"{kind} {reply.status}"] += 1
    ok = 201 if kind == "create" else 200
    if reply.status == ok:
        json.loads(reply.raw)
    elif kind == "healthz" or not is_problem(reply, 503):
        bad.append(f"{kind}: {reply.status} {reply.raw[:300]!r}")


@pytest.mark.parametrize("appendfsync", [
    "everysec",  # what serve's embedded Redis and docker-compose.yml use
    "always",
])
def test_redis_killed_5_times_under_load_loses_no_acknowledged_move(
        redis_server: RedisServer, tmp_path: Path, appendfsync: str) -> None:
    """12 clients play a game each (one Idempotency-Key per move, retried on 503 until
    answered) and read everything else meanwhile. 5 rounds: 1 s of load, SIGKILL the Redis,
    1 s down, restart it on the same port and data dir (AOF; appendfsync everysec, then
    always); then a
    last SIGKILL and restart with everything answered. Every move answered 200 is in the log
    at its version, each game's version is its log length and the log is exactly the
    client's moves; only 503 problems while Redis is away; no gunicorn worker died; /readyz
    200 within 2 s of Redis being back."""
    clients, rounds, load_s, down_s, time_limit = 12, 5, 1.0, 1.0, 90.0
    with own_redis(redis_server, tmp_path, appendfsync) as redis_db, serving(
            tmp_path, redis_db.url, env={"RUMMY_REDIS_SOCKET_TIMEOUT": "1"}) as served:
        master, workers = served.master_pid(), served.worker_pids()
        games = create_games(served, clients)
        stats = Settled()
        accepted: dict[str, list[Accepted]] = {g.game_id: [] for g in games}
        seen: Counter[str] = Counter()
        bad: list[str] = []
        stop = threading.Event()
        deadline = time.monotonic() + time_limit

        def driver(i: int, game: Game) -> Callable[[], None]:
            def run() -> None:
                rng = Random(i)
                with served.http() as conn:
                    for n in itertools.count():
                        if stop.is_set() or time.monotonic() > deadline:
                            return
                        if rng.random() < 0.5:
                            read_something(conn, game, rng, seen, bad)
                        if "hand" not in game.view and game.view["turn"]["phase"] == "play":
                            return  # not reached: a play phase follows our own draw
                        seat, move = game.view["turn"]["seat"], next_move(game.view, rng)
                        reply = settle(conn, game, move, f"{i}-{n}", stats)
                        if reply.status != 200:
                            return  # in stats.other: the game is not where it was
                        answer = reply.body["game"]
                        if answer["version"] != game.view["version"] + 1:
                            with stats.lock:
                                stats.other.append(
                                    f"{game.game_id}: {move} answered as version "
                                    f"{answer['version']} after {game.view['version']}")
                            return
                        accepted[game.game_id].append(
                            Accepted(game.game_id, seat, move, answer["version"]))
                        game.view = answer
            return run

        results: list[list[BaseException]] = []
        runner = threading.Thread(target=lambda: results.append(run_threads(
            [driver(i, g) for i, g in enumerate(games)], time_limit + 30)), daemon=True)
        ready_after: list[float] = []
        readyz_while_down: Counter[int] = Counter()
        acknowledged_before_kill: list[int] = []
        runner.start()
        try:
            for _ in range(rounds):
                time.sleep(load_s)
                acknowledged_before_kill.append(sum(len(a) for a in accepted.values()))
                redis_db.kill()
                time.sleep(down_s / 2)
                with served.http() as conn:
                    readyz_while_down[conn.request("GET", "/readyz").status] += 1
                time.sleep(down_s / 2)
                redis_db.start()
                ready_after.append(wait_ready_again(served.http, 2.0))
            time.sleep(0.5)
        finally:
            stop.set()
            runner.join(time_limit + 40)
        assert results and not results[0], results[:1]  # no connection error, no timeout
        acknowledged = sum(len(a) for a in accepted.values())
        redis_db.kill()  # every move is answered now: crash once more, then look
        redis_db.start()
        ready_after.append(wait_ready_again(served.http, 2.0))

        assert not stats.other, f"{LOST_HINT}: {stats.other[:5]}"
        assert not bad, bad[:5]
        with served.http() as conn:
            for game in games:
                version = fetch_log(conn, game.game_id)[0]
                acked = len(accepted[game.game_id])
                assert version >= acked, f"{game.game_id}: v{version}, {acked} {LOST_HINT}"
            logged = sum(check_log(conn, g.game_id, accepted[g.game_id]) for g in games)
        assert served.master_pid() == master
        assert served.worker_pids() == workers, "a gunicorn worker died"
        output = served.output()
    statuses_503 = sum(n for k, n in seen.items() if k.endswith(" 503"))
    report(f"Redis SIGKILL + restart (AOF {appendfsync})", clients=clients,
           rounds=rounds + 1,
           moves_acknowledged=acknowledged, logged=logged,
           acknowledged_before_each_kill=acknowledged_before_kill,
           move_answers_503=stats.answers_503, moves_with_a_503=stats.moves_with_503,
           applied_by_a_503=stats.applied_by_a_503, reads=sum(seen.values()),
           reads_503=statuses_503, readyz_while_down=dict(readyz_while_down),
           readyz_back_after_s=[round(t, 2) for t in ready_after],
           workers_unchanged=workers)
    assert "Traceback" not in output, output[-3000:]
    assert readyz_while_down == Counter({503: rounds})
    assert max(ready_after) <= 2.0, ready_after
    assert stats.moves_with_503 >= rounds and statuses_503 > 0  # the kills hit the load


# --- gunicorn stopped with SIGTERM ----------------------------------------------------------


@dataclass(frozen=True)
class Sent:
    """One request: when its bytes were written, when it ended, and how."""

    sent_at: float
    ended_at: float
    status: int | None
    error: str | None


def test_sigterm_to_gunicorn_under_load_fails_no_in_flight_request(
        redis_url: str, tmp_path: Path) -> None:
    """24 clients on keep-alive connections send moves, seat views and legal-move lists as
    fast as they are answered; SIGTERM goes to ``rummy-referee serve`` (passed on to
    gunicorn). Every request whose bytes were sent before the signal gets a complete answer;
    after it, a client stops at its first refused or reset connection (the listener is
    closing). serve exits with 0."""
    clients, warm_up, time_limit = 24, 1.5, 40.0
    with serving(tmp_path, redis_url) as served:
        games = create_games(served, clients)
        records: list[Sent] = []
        bad: list[str] = []
        signalled = [math.inf]
        deadline = time.monotonic() + time_limit

        def client(i: int, game: Game) -> Callable[[], None]:
            def run() -> None:
                rng = Random(i)
                conn = served.http()
                try:
                    for n in range(5000):
                        if time.monotonic() > min(deadline, signalled[0] + 10):
                            return
                        token, kind = game.turn_token(), n % 3
                        move = next_move(game.view, rng) if kind == 2 else None
                        begun = time.monotonic()
                        try:
                            if kind == 0:
                                reply = conn.request("GET", f"{game.path}/legal-moves",
                                                     token=token)
                            elif kind == 1:
                                reply = conn.request("GET", f"{game.path}/me", token=token)
                            else:
                                reply = conn.request("POST", f"{game.path}/moves",
                                                     token=token, body=move,
                                                     headers={"Idempotency-Key": f"{i}-{n}"})
                        except (OSError, http.client.HTTPException) as exc:
                            error = f"{type(exc).__name__}: {exc}"
                            records.append(Sent(conn.sent_at, time.monotonic(), None, error))
                            if begun < signalled[0] and conn.sent_at == math.inf:
                                bad.append(f"could not send before SIGTERM: {error}")
                            return  # in flight (asserted below), or the server is going
                        records.append(Sent(conn.sent_at, time.monotonic(), reply.status, None))
                        if reply.status != 200:
                            bad.append(f"{reply.status}: {reply.raw[:300]!r}")
                            return
                        body = json.loads(reply.raw)  # complete JSON
                        if move is not None:
                            game.view = body["game"]
                finally:
                    conn.close()
            return run

        results: list[list[BaseException]] = []
        runner = threading.Thread(target=lambda: results.append(run_threads(
            [client(i, g) for i, g in enumerate(games)], time_limit + 20)), daemon=True)
        runner.start()
        time.sleep(warm_up)
        signalled[0] = time.monotonic()
        returncode = served.terminate()
        stopped_after = time.monotonic() - signalled[0]
        runner.join(time_limit + 30)
        assert results and not results[0], results[:1]
        output = served.output()

    t = signalled[0]
    in_flight = [r for r in records if r.sent_at < t]
    awaiting = [r for r in in_flight if r.ended_at > t]
    failed = [r for r in in_flight if r.error is not None]
    after = [r for r in records if r.sent_at >= t]
    report("SIGTERM to gunicorn under load", clients=clients, requests=len(records),
           sent_before_sigterm=len(in_flight), awaiting_an_answer_at_sigterm=len(awaiting),
           failed_in_flight=len(failed),
           answered_after_sigterm=sum(r.status is not None for r in after),
           refused_or_reset_after_sigterm=sum(r.error is not None for r in after),
           stopped_after_s=round(stopped_after, 2), exit_status=returncode)
    assert not failed, failed[:5]
    assert not bad, bad[:5]
    assert len(awaiting) >= clients // 2, "the signal did not come under load"
    assert returncode == 0, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
