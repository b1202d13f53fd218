"""Reliability: racing clients, idempotent retries, a stalled Redis, over real processes.

Every test here runs against a real redis-server started by the tests on a free port (the
session one, or one of the test's own for faults; never the one on port 6379) and, where the
point is about it, the real ``rummy-referee serve`` (gunicorn gthread) as a child process, on
loopback only. Every loop is bounded in count and time. Run with ``-s`` to see the figures
(lines starting with ``RELIABILITY``).

The games are basic rummy; the clients play with draws from the stock and discards (the
racing tests also take any move ``/legal-moves`` offers), so a game lasts as long as needed.

Faults (SIGKILL of Redis, Redis down, SIGTERM to gunicorn) are in ``test_faults.py``, which
shares the helpers of this module.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import Any

import pytest
import redis

from service.app import create_app
from service.config import Settings
from service.redis_server import RedisServer
from service.rules.moves import MATCH_MOVES
from tests.support.http_player import FlaskTransport, Reply, Transport
from tests.support.redis_servers import running
from tests.support.reliability import (
    REQUEST_TIMEOUT,
    Accepted,
    Game,
    Http,
    Served,
    Settled,
    check_log,
    create_game,
    create_games,
    fetch_log,
    header,
    is_problem,
    next_move,
    other_move,
    problem_code,
    report,
    run_threads,
    serving,
    settle,
    wait_ready_again,
)

# --- rummy-referee serve ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(redis_server: RedisServer,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One gunicorn (2 workers x 4 threads) on the session Redis for this module's tests.

    Tests make games of their own (random ids), so the FLUSHALL of other tests between them
    does not matter."""
    with serving(tmp_path_factory.mktemp("serve"), redis_server.url) as started:
        yield started


@pytest.fixture
def own_redis(redis_server: RedisServer, tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of this test alone (AOF, appendfsync everysec), for fault tests."""
    with running(RedisServer(tmp_path / "redis", binary=redis_server.binary,
                             appendonly=True, appendfsync="everysec")) as server:
        yield server


# --- 1. concurrency -----------------------------------------------------------------------------

ALLOWED_RACE_CODES = {
    # whoever loses a race sees the game moved on under it
    "NOT_YOUR_TURN", "WRONG_PHASE", "CARD_NOT_IN_HAND", "EMPTY_PILE", "UNKNOWN_MELD",
    "INVALID_LAY_OFF", "INVALID_MELD", "DISCARD_TAKEN_CARD", "GAME_FINISHED",
    "MUST_DISCARD_TO_GO_OUT",
}


@dataclass
class Tally:
    """Outcomes of move attempts (thread-safe appends)."""

    accepted: list[Accepted] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    codes: Counter[str] = field(default_factory=Counter)
    unexpected: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, game: str, seat: int, move: dict[str, Any], reply: Reply) -> None:
        with self.lock:
            self.statuses[reply.status] += 1
            if reply.status == 200:
                version = reply.body["game"]["version"]
                if header(reply, "ETag") != f'"{version}"':
                    self.unexpected.append(f"ETag {header(reply, 'ETag')} for v{version}")
                if reply.body["game"]["seat"] != seat:
                    self.unexpected.append(f"answer for seat {reply.body['game']['seat']}")
                self.accepted.append(Accepted(game, seat, move, version))
            elif reply.status == 422 and is_problem(reply, 422):
                code = problem_code(reply) or "?"
                self.codes[code] += 1
                if code not in ALLOWED_RACE_CODES:
                    self.unexpected.append(f"422 {code}: {move}")
            elif reply.status == 412 and is_problem(reply, 412):
                self.codes["412"] += 1
            elif reply.status == 503 and is_problem(reply, 503) and b"busy" in reply.raw:
                self.codes["503 busy"] += 1  # Contention: every compare-and-set lost, nothing
            else:
                self.unexpected.append(f"{reply.status}: {reply.raw[:300]!r}")

    @property
    def attempts(self) -> int:
        return sum(self.statuses.values())


@pytest.mark.slow
def test_32_clients_race_on_one_game_and_lose_or_duplicate_no_move(served: Served) -> None:
    """32 clients (8 per seat of one 4-seat game) x 25 attempts through gunicorn (2 workers
    x 4 threads): each reads /legal-moves or /me for its seat and proposes a move (half with
    If-Match). Final version == 200 answers == log length, log versions 1..N, each 200's
    version exactly once in the log and its entry that seat's move."""
    clients, attempts, time_limit = 32, 25, 60.0
    game = create_games(served, 1)[0]
    tally = Tally()
    barrier = threading.Barrier(clients)
    deadline = time.monotonic() + time_limit

    def client(i: int) -> Callable[[], None]:
        def run() -> None:
            rng, seat = Random(i), i % len(game.tokens)
            token = game.tokens[seat]
            with served.http() as conn:
                barrier.wait(timeout=30)
                for n in range(attempts):
                    if time.monotonic() > deadline:
                        break
                    if n % 2 == 0:  # what /legal-moves offers (a draw when not our turn)
                        legal = conn.request("GET", f"{game.path}/legal-moves", token=token)
                        assert legal.status == 200, legal.raw[:300]
                        version = legal.body["version"]
                        moves = [m for m in legal.body["moves"]  # the match goes on
                                 if m["type"] not in MATCH_MOVES]
                        move = rng.choice(moves) if moves else {"type": "draw",
                                                                "source": "stock"}
                    else:  # what the seat view suggests
                        me = conn.request("GET", f"{game.path}/me", token=token)
                        assert me.status == 200, me.raw[:300]
                        version = me.body["version"]
                        if me.body["turn"] is None:
                            break
                        move = next_move(me.body, rng)
                    headers = {"If-Match": f'"{version}"'} if rng.random() < 0.5 else {}
                    reply = conn.request("POST", f"{game.path}/moves", token=token, body=move,
                                         headers=headers)
                    tally.record(game.game_id, seat, move, reply)
        return run

    started = time.monotonic()
    errors = run_threads([client(i) for i in range(clients)], time_limit + 30)
    elapsed = time.monotonic() - started
    assert not errors, errors[:3]
    assert not tally.unexpected, tally.unexpected[:5]
    with served.http() as conn:
        logged = check_log(conn, game.game_id, tally.accepted)
    report("one game, racing clients", clients=clients, attempts=tally.attempts,
           accepted=len(tally.accepted), logged=logged, statuses=dict(tally.statuses),
           refusals=dict(tally.codes), seconds=round(elapsed, 1))
    assert tally.attempts == clients * attempts
    # it was a race: seats moved, and clients of one seat lost to each other
    assert len(tally.accepted) >= 25
    assert tally.codes["412"] > 0 and tally.codes["NOT_YOUR_TURN"] > 0
    assert tally.codes["WRONG_PHASE"] + tally.codes["CARD_NOT_IN_HAND"] > 0


@pytest.mark.slow
def test_100_games_with_4_racing_clients_each_lose_or_duplicate_no_move(
        served: Served) -> None:
    """100 games x 4 clients (32 threads): every client holds all 4 tokens and plays
    whichever seat's turn it is, so the 4 clients of a game race for each move (half with
    If-Match). Same checks as above, game by game."""
    games_count, per_game, attempts, time_limit = 100, 4, 10, 90.0
    games = create_games(served, games_count)
    tally = Tally()
    deadline = time.monotonic() + time_limit

    def client(game: Game, i: int) -> None:
        """Plays whichever seat's turn it is (it holds every token), racing 3 others."""
        rng = Random(i)
        seat = game.view["turn"]["seat"]
        with served.http() as conn:
            for _ in range(attempts):
                if time.monotonic() > deadline:
                    return
                me = conn.request("GET", f"{game.path}/me", token=game.tokens[seat])
                assert me.status == 200, me.raw[:300]
                if me.body["turn"] is None:
                    return
                if me.body["turn"]["seat"] != seat:
                    seat = me.body["turn"]["seat"]
                    me = conn.request("GET", f"{game.path}/me", token=game.tokens[seat])
                    assert me.status == 200, me.raw[:300]
                move = next_move(me.body, rng)
                headers = {"If-Match": f'"{me.body["version"]}"'} if rng.random() < 0.5 else {}
                reply = conn.request("POST", f"{game.path}/moves", token=game.tokens[seat],
                                     body=move, headers=headers)
                tally.record(game.game_id, seat, move, reply)
                if reply.status == 200:
                    seat = reply.body["game"]["turn"]["seat"]

    tasks = [(game, g * per_game + c) for g, game in enumerate(games) for c in range(per_game)]
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=32) as pool:
        futures = [pool.submit(client, game, i) for game, i in tasks]
        for future in futures:
            future.result(timeout=max(1.0, deadline + 30 - time.monotonic()))
    elapsed = time.monotonic() - started
    assert not tally.unexpected, tally.unexpected[:5]
    by_game: dict[str, list[Accepted]] = {g.game_id: [] for g in games}
    for accepted in tally.accepted:
        by_game[accepted.game_id].append(accepted)
    with served.http() as conn:
        logged = sum(check_log(conn, g.game_id, by_game[g.game_id]) for g in games)
    report("100 games, 4 racing clients each", games=games_count,
           clients=games_count * per_game, attempts=tally.attempts,
           accepted=len(tally.accepted), logged=logged, statuses=dict(tally.statuses),
           refusals=dict(tally.codes), seconds=round(elapsed, 1))
    assert tally.attempts == games_count * per_game * attempts
    assert all(by_game.values()), "a game got no move at all"
    assert tally.codes["412"] + tally.codes["WRONG_PHASE"] > 0


# --- 2. idempotency -----------------------------------------------------------------------------


@dataclass
class Deliveries:
    moves: int = 0
    deliveries: int = 0
    replays: int = 0
    reuses: int = 0
    modes: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)


def check_deliveries(replies: Sequence[Reply], version_before: int) -> dict[str, Any]:
    """Every delivery of one move: 200, one applied and the others replays, all bodies byte
    for byte the same, the version one more than before. Returns the answer."""
    statuses = [r.status for r in replies]
    assert statuses == [200] * len(replies), [r.raw[:200] for r in replies]
    replayed = [header(r, "Idempotent-Replayed") == "true" for r in replies]
    assert sum(not r for r in replayed) == 1, f"applied {replayed.count(False)} times"
    assert len({r.raw for r in replies}) == 1, "replays differ from the first answer"
    assert len({header(r, "ETag") for r in replies}) == 1
    answer: dict[str, Any] = replies[0].body
    assert answer["game"]["version"] == version_before + 1
    return answer


def check_reuse(transport: Transport, game: Game, token: str, key: str,
                body: dict[str, Any]) -> None:
    reply = transport.request("POST", f"{game.path}/moves", token=token, body=body,
                              headers={"Idempotency-Key": key})
    assert is_problem(reply, 422), reply.raw[:300]
    assert problem_code(reply) == "IDEMPOTENCY_KEY_REUSED"


def test_each_move_delivered_2_or_3_times_in_a_row_is_applied_once(redis_url: str) -> None:
    """Through the Flask test client: 300 moves on 3 games, each sent 2-3 times one after
    another with one Idempotency-Key; every 10th key then reused with another body."""
    app = create_app(Settings(redis_url=redis_url, rate_limits=("1000000/second",),
                              create_rate_limits=("1000000/minute",)))
    transport = FlaskTransport(app.test_client())
    rng = Random(7)
    stats = Deliveries()
    games = [create_game(transport) for _ in range(3)]
    accepted: dict[str, list[Accepted]] = {g.game_id: [] for g in games}
    for n in range(300):
        game = games[n % len(games)]
        seat = game.view["turn"]["seat"]
        token, move, key = game.tokens[seat], next_move(game.view, rng), f"seq-{n}"
        if move["type"] == "discard" and "hand" not in game.view:
            me = transport.request("GET", f"{game.path}/me", token=token)
            game.view = me.body
            move = next_move(game.view, rng)
        version = game.view["version"]
        replies = [transport.request("POST", f"{game.path}/moves", token=token, body=move,
                                     headers={"Idempotency-Key": key})
                   for _ in range(rng.choice((2, 3)))]
        answer = check_deliveries(replies, version)
        assert header(replies[0], "Idempotent-Replayed") is None  # the first one applied
        stats.moves += 1
        stats.deliveries += len(replies)
        accepted[game.game_id].append(Accepted(game.game_id, seat, move, version + 1))
        if n % 10 == 0:
            check_reuse(transport, game, token, key, other_move(move, answer["game"]))
            stats.reuses += 1
        game.view = answer["game"]
    for game in games:
        check_log(transport, game.game_id, accepted[game.game_id])
    report("idempotency, in a row (Flask test client)", moves=stats.moves,
           deliveries=stats.deliveries, key_reuses=stats.reuses)


@pytest.mark.slow
def test_1000_moves_delivered_2_or_3_times_in_a_row_and_at_once_are_applied_once(
        served: Served) -> None:
    """Through gunicorn: 8 games x 125 moves; each move sent 2 or 3 times with one key (every
    other one with If-Match too): in a row, all at once from parallel threads, or 2 at once
    and 1 after; every 10th key is then reused with another body (422
    IDEMPOTENCY_KEY_REUSED)."""
    games_count, per_game, time_limit = 8, 125, 90.0
    games = create_games(served, games_count)
    stats = Deliveries()
    accepted: dict[str, list[Accepted]] = {g.game_id: [] for g in games}
    deadline = time.monotonic() + time_limit

    def at_once(conns: Sequence[Http], path: str, token: str, move: dict[str, Any],
                headers: dict[str, str]) -> list[Reply]:
        barrier = threading.Barrier(len(conns))
        replies: list[Reply | None] = [None] * len(conns)

        def send(j: int) -> Callable[[], None]:
            def run() -> None:
                barrier.wait(timeout=10)
                replies[j] = conns[j].request("POST", path, token=token, body=move,
                                              headers=headers)
            return run

        errors = run_threads([send(j) for j in range(len(conns))], REQUEST_TIMEOUT + 10)
        assert not errors, errors
        return [r for r in replies if r is not None]

    def driver(g: int, game: Game) -> Callable[[], None]:
        def run() -> None:
            rng = Random(1000 + g)
            conns = [served.http() for _ in range(3)]
            try:
                me = conns[0].request("GET", f"{game.path}/me", token=game.turn_token())
                game.view = me.body
                for n in range(per_game):
                    assert time.monotonic() < deadline, "out of time"
                    seat = game.view["turn"]["seat"]
                    token, move = game.tokens[seat], next_move(game.view, rng)
                    key, path = f"{uuid.uuid4()}", f"{game.path}/moves"
                    version, count = game.view["version"], rng.choice((2, 3))
                    mode = ("in a row", "at once", "at once, then again")[n % 3]
                    headers = {"Idempotency-Key": key}
                    if n % 2:  # a retry of an applied move must replay, not answer 412
                        headers["If-Match"] = f'"{version}"'
                    if mode == "in a row":
                        replies = [conns[j].request("POST", path, token=token, body=move,
                                                    headers=headers)
                                   for j in range(count)]
                    elif mode == "at once":
                        replies = at_once(conns[:count], path, token, move, headers)
                    else:
                        replies = at_once(conns[:2], path, token, move, headers)
                        replies += [conns[2].request("POST", path, token=token, body=move,
                                                     headers=headers)]
                    answer = check_deliveries(replies, version)
                    if n % 10 == 0:
                        check_reuse(conns[0], game, token, key,
                                    other_move(move, answer["game"]))
                    with stats.lock:
                        stats.moves += 1
                        stats.deliveries += len(replies)
                        stats.replays += len(replies) - 1
                        stats.reuses += n % 10 == 0
                        stats.modes[mode] += 1
                    accepted[game.game_id].append(
                        Accepted(game.game_id, seat, move, version + 1))
                    game.view = answer["game"]
            finally:
                for conn in conns:
                    conn.close()
        return run

    started = time.monotonic()
    errors = run_threads([driver(g, game) for g, game in enumerate(games)], time_limit + 30)
    elapsed = time.monotonic() - started
    assert not errors, errors[:3]
    with served.http() as conn:
        for game in games:
            assert check_log(conn, game.game_id, accepted[game.game_id]) == per_game
    report("idempotency, in a row and at once (gunicorn)", moves=stats.moves,
           deliveries=stats.deliveries, replays=stats.replays, key_reuses=stats.reuses,
           modes=dict(stats.modes),
           seconds=round(elapsed, 1))
    assert stats.moves == games_count * per_game == 1000


# --- 3. Redis stalled -----------------------------------------------------------------------------


@pytest.mark.slow
def test_redis_stalled_past_the_socket_timeout_moves_settle_once_on_retry(
        own_redis: RedisServer, tmp_path: Path) -> None:
    """SIGSTOP the Redis (1.5 s, the socket timeout being 0.5 s) under 16 clients each
    playing a game of its own with one Idempotency-Key per move (half of them with If-Match
    too); 5 rounds, more (at most 12)
    until a 503'd request is seen to have applied its move after all. Each caller gets
    its answer or a 503 problem with Retry-After; retries with the key settle every move; the
    log is exactly each client's moves. Then CLIENT PAUSE WRITE stalls one commit for sure."""
    clients, min_rounds, max_rounds, stall, time_limit = 16, 5, 12, 1.5, 90.0
    # rate limits off: a seat's move is then loaded by a plain read (with limits on, the
    # load also counts them, so it is a write that CLIENT PAUSE WRITE would stall instead of
    # the commit this test stalls for sure)
    with serving(tmp_path, own_redis.url,
                 env={"RUMMY_REDIS_SOCKET_TIMEOUT": "0.5", "RUMMY_RATE_LIMITS": "off"}
                 ) as served:
        workers = served.worker_pids()
        games = create_games(served, clients)
        stats = Settled()
        accepted: dict[str, list[Accepted]] = {g.game_id: [] for g in games}
        stop = threading.Event()
        deadline = time.monotonic() + time_limit

        def driver(i: int, game: Game) -> Callable[[], None]:
            def run() -> None:
                rng = Random(i)
                with served.http() as conn:
                    for n in itertools.count():
                        if stop.is_set() or time.monotonic() > deadline:
                            return
                        if "hand" not in game.view:
                            me = conn.request("GET", f"{game.path}/me",
                                              token=game.turn_token())
                            if me.status == 503:
                                assert is_problem(me, 503), me.raw[:300]
                                time.sleep(0.1)
                                continue
                            game.view = me.body
                        seat, move = game.view["turn"]["seat"], next_move(game.view, rng)
                        reply = settle(conn, game, move, f"{i}-{n}", stats,
                                       if_match=i % 2 == 1)
                        assert reply.status == 200, reply.raw[:300]
                        answer = reply.body["game"]
                        assert answer["version"] == game.view["version"] + 1
                        accepted[game.game_id].append(
                            Accepted(game.game_id, seat, move, answer["version"]))
                        game.view = answer
            return run

        ready_after: list[float] = []
        readyz_while_stalled: Counter[int] = Counter()
        results: list[list[BaseException]] = []
        runner = threading.Thread(target=lambda: results.append(run_threads(
            [driver(i, g) for i, g in enumerate(games)], time_limit + 30)), daemon=True)
        runner.start()
        rounds = 0
        try:
            # at least min_rounds; more (up to max_rounds) until a request that was answered
            # 503 is seen to have applied its move after all (the case a blind resend doubles)
            while rounds < min_rounds or (rounds < max_rounds and not stats.applied_by_a_503):
                rounds += 1
                time.sleep(0.6)
                own_redis.pause()
                try:
                    time.sleep(stall / 2)
                    with served.http() as conn:
                        readyz_while_stalled[conn.request("GET", "/readyz").status] += 1
                    time.sleep(stall / 2)
                finally:
                    own_redis.resume()
                ready_after.append(wait_ready_again(served.http, 2.0))
            time.sleep(0.5)
        finally:
            stop.set()
            runner.join(time_limit + 40)
        assert results and not results[0], results[:1]
        assert not stats.other, stats.other[:5]
        with served.http() as conn:
            for game in games:
                check_log(conn, game.game_id, accepted[game.game_id])

        # One commit stalled for sure: reads go on, EVALSHA waits (CLIENT PAUSE WRITE).
        game = games[0]
        with served.http() as conn, contextlib.closing(
                redis.Redis.from_url(own_redis.url, socket_timeout=5)) as admin:
            version = fetch_log(conn, game.game_id)[0]
            move, key = next_move(game.view, Random(0)), "client-pause"
            # 5 s at most: the load passes, the commit waits for the 0.5 s socket timeout;
            # unpaused as soon as the 503 is in
            admin.client_pause(5000, all=False)
            try:
                first = conn.request("POST", f"{game.path}/moves", token=game.turn_token(),
                                     body=move, headers={"Idempotency-Key": key})
            finally:
                admin.client_unpause()
            assert is_problem(first, 503), first.raw[:300]
            paused = Settled()
            again = settle(conn, game, move, key, paused)
            assert again.status == 200 and again.body["game"]["version"] == version + 1
            accepted[game.game_id].append(
                Accepted(game.game_id, game.view["turn"]["seat"], move, version + 1))
            check_log(conn, game.game_id, accepted[game.game_id])
            retry_replayed = header(again, "Idempotent-Replayed") == "true"
        assert served.worker_pids() == workers, "a gunicorn worker died"
        output = served.output()

    report("Redis stalled (SIGSTOP 1.5 s, socket timeout 0.5 s)", clients=clients,
           rounds=rounds, moves=stats.moves, answers_503=stats.answers_503,
           moves_with_a_503=stats.moves_with_503,
           applied_by_the_stalled_request=stats.applied_by_a_503,
           applied_by_the_retry=stats.applied_by_retry,
           readyz_while_stalled=dict(readyz_while_stalled),
           readyz_back_after_s=[round(t, 2) for t in ready_after],
           client_pause_retry_replayed=retry_replayed)
    assert "Traceback" not in output, output[-3000:]
    assert stats.moves_with_503 >= rounds  # the stalls hit moves in flight
    assert stats.applied_by_a_503 > 0, "no stall caught a commit on its way"
    assert readyz_while_stalled == Counter({503: rounds})
    assert max(ready_after) <= 2.0
