"""Helpers of the reliability, fault and idempotency tests: a raw HTTP client, a served
referee with rate limits out of reach, and games played by draws and discards only."""
from __future__ import annotations

import contextlib
import http.client
import json
import math
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import Any

import pytest

from tests.support.http_player import Reply, Transport, log_entries
from tests.support.problems import PROBLEM
from tests.support.serving import Server

REQUEST_TIMEOUT = 10.0
"""Seconds any one HTTP request may take."""


NO_RATE_LIMITING = {"RUMMY_RATE_LIMITS": "1000000/second",
                    "RUMMY_CREATE_RATE_LIMITS": "1000000/minute"}
"""Limits these tests never reach: the limiter still works on the same Redis in every request
(and so goes through the faults too), but a racing client is never refused with 429."""


def report(what: str, **figures: Any) -> None:
    """Print one line of figures (shown with ``pytest -s``)."""
    text = ", ".join(f"{k}={v}" for k, v in figures.items())
    print(f"\nRELIABILITY {what}: {text}", flush=True)


def header(reply: Reply, name: str) -> str | None:
    """A reply header by case-insensitive name."""
    wanted = name.lower()
    for key, value in reply.headers.items():
        if key.lower() == wanted:
            return value
    return None


class Http:
    """One keep-alive HTTP/1.1 connection (``http.client``) to 127.0.0.1: nothing is ever
    resent; a connection the server closes (``Connection: close``) is reopened for the next
    request. ``sent_at`` is when the last request's bytes were written (inf if never)."""

    def __init__(self, port: int, timeout: float = REQUEST_TIMEOUT) -> None:
        self.port = port
        self.timeout = timeout
        self.sent_at = math.inf
        self.connections = 0
        self._conn: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, *, token: str | None = None,
                body: Any = None, headers: Mapping[str, str] | None = None) -> Reply:
        if self._conn is None:
            self._conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                                    timeout=self.timeout)
            self.connections += 1
        conn = self._conn
        data = None if body is None else json.dumps(body).encode()
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        if data is not None:
            sent["Content-Type"] = "application/json"
        self.sent_at = math.inf
        try:
            conn.request(method, path, body=data, headers=sent)
            self.sent_at = time.monotonic()
            resp = conn.getresponse()
            raw = resp.read()  # IncompleteRead if the body is cut short
        except BaseException:
            self.close()
            raise
        reply = Reply(resp.status, dict(resp.getheaders()), raw)
        if resp.will_close:
            self.close()
        return reply

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> Http:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def is_problem(reply: Reply, status: int) -> bool:
    """A problem+json answer with this status (503s must also say Retry-After)."""
    if reply.status != status:
        return False
    if not (header(reply, "Content-Type") or "").startswith(PROBLEM):
        return False
    if status == 503 and not header(reply, "Retry-After"):
        return False
    try:
        body = json.loads(reply.raw)
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("status") == status


def problem_code(reply: Reply) -> str | None:
    try:
        body = json.loads(reply.raw)
    except ValueError:
        return None
    return body.get("code") if isinstance(body, dict) else None


class Served(Server):
    """``rummy-referee serve`` (:class:`serving.Server`) with the rate limits out of reach
    (``NO_RATE_LIMITING``), and a raw HTTP client on it."""

    def __init__(self, tmp_path: Path, redis_url: str, *, workers: int = 2, threads: int = 4,
                 env: Mapping[str, str] | None = None) -> None:
        super().__init__(tmp_path, redis_url, workers=workers, threads=threads,
                         env={**NO_RATE_LIMITING, **(env or {})})

    def http(self, timeout: float = REQUEST_TIMEOUT) -> Http:
        return Http(self.port, timeout)


@contextlib.contextmanager
def serving(tmp_path: Path, redis_url: str, **kwargs: Any) -> Iterator[Served]:
    served = Served(tmp_path, redis_url, **kwargs)
    try:
        served.wait_ready()
        yield served
    finally:
        served.close()


@dataclass
class Game:
    game_id: str
    tokens: list[str]
    view: dict[str, Any]
    """The last view seen (public view at first, then the mover's seat view)."""

    @property
    def path(self) -> str:
        return f"/v1/games/{self.game_id}"

    def turn_token(self) -> str:
        return self.tokens[self.view["turn"]["seat"]]


def create_game(transport: Transport, players: int = 4) -> Game:
    """A basic rummy game that never ends while it is played by :func:`next_move` (draws
    and discards only, so nobody goes out): the stock may be rebuilt any number of times
    (``max_stock_rebuilds`` null). With the default of 3, the hand ends with nobody out
    once the stock runs out a fourth time, and after a few such hands the match ends: on a
    fast machine the load tests' clients got that far, met a view with no turn, and
    failed."""
    reply = transport.request("POST", "/v1/games", body={
        "variant": "basic", "players": [f"P{i}" for i in range(players)],
        "rules": {"max_stock_rebuilds": None}})
    assert reply.status == 201, reply.raw[:500]
    body = reply.body
    return Game(body["game_id"], [s["token"] for s in body["seats"]], body["game"])


def create_games(served: Served, count: int) -> list[Game]:
    with served.http() as conn:
        return [create_game(conn) for _ in range(count)]


def next_move(view: Mapping[str, Any], rng: Random) -> dict[str, Any]:
    """Draw from the stock, or discard a card of the hand (needs a seat view in play phase)."""
    if view["turn"]["phase"] == "draw":
        return {"type": "draw", "source": "stock"}
    return {"type": "discard", "card": rng.choice(sorted(view["hand"]))}


def other_move(move: Mapping[str, Any], view: Mapping[str, Any]) -> dict[str, Any]:
    """Another body for the same idempotency key (a key reuse)."""
    if move["type"] == "draw":
        return {"type": "draw", "source": "discard"}
    others = sorted(c for c in view["hand"] if c != move["card"])
    return {"type": "discard", "card": others[0]}


def fetch_log(transport: Transport, game_id: str) -> tuple[int, list[dict[str, Any]]]:
    """(version of the public view, every log entry)."""
    public = transport.request("GET", f"/v1/games/{game_id}")
    assert public.status == 200, public.raw[:300]
    version: int = public.body["version"]
    assert header(public, "ETag") == f'"{version}"'
    return version, log_entries(transport, game_id)


def same_move(entry: Mapping[str, Any], seat: int, move: Mapping[str, Any]) -> bool:
    """The log entry records this seat's move (every field sent is as logged)."""
    logged = entry["move"]
    return entry["seat"] == seat and all(logged.get(k) == v for k, v in move.items())


@dataclass
class Accepted:
    """A 200 answer to a move."""

    game_id: str
    seat: int
    move: dict[str, Any]
    version: int


def check_log(transport: Transport, game_id: str, accepted: Sequence[Accepted],
              exact: bool = True) -> int:
    """No move lost or duplicated: version == log length, log versions 1..N, each accepted
    answer's version exactly once and its log entry that move; with ``exact`` N is the
    number of accepted moves. Returns N."""
    version, entries = fetch_log(transport, game_id)
    assert len(entries) == version, f"{game_id}: version {version}, {len(entries)} log entries"
    assert [e["version"] for e in entries] == list(range(1, version + 1)), game_id
    versions = [a.version for a in accepted]
    duplicated = [v for v, n in Counter(versions).items() if n > 1]
    assert not duplicated, f"{game_id}: versions answered twice: {duplicated}"
    for a in accepted:
        assert 1 <= a.version <= version, f"{game_id}: accepted v{a.version} not in the log"
        entry = entries[a.version - 1]
        assert same_move(entry, a.seat, a.move), f"{game_id} v{a.version}: {a} vs {entry}"
    if exact:
        assert sorted(versions) == list(range(1, version + 1)), (
            f"{game_id}: {len(versions)} accepted answers for {version} logged moves")
    return version


def run_threads(targets: Sequence[Callable[[], None]], timeout: float) -> list[BaseException]:
    """Run each target in a thread; join all within ``timeout``; the exceptions raised. Each
    one's traceback is printed too (pytest shows it with a failure): the exception alone
    does not say which line of a client raised it."""
    errors: list[BaseException] = []

    def guarded(target: Callable[[], None]) -> None:
        try:
            target()
        except BaseException as exc:
            traceback.print_exc()
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(t,), daemon=True) for t in targets]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    alive = sum(t.is_alive() for t in threads)
    if alive:
        errors.append(TimeoutError(f"{alive} threads still running after {timeout} s"))
    return errors


@dataclass
class Settled:
    """Moves played with retries until answered; what the 503s turned out to be."""

    moves: int = 0
    answers_503: int = 0
    moves_with_503: int = 0
    applied_by_a_503: int = 0  # the retry answered a replay: a request that got 503 applied it
    applied_by_retry: int = 0  # the retry applied it: the 503 request applied nothing
    other: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def settle(conn: Http, game: Game, move: dict[str, Any], key: str, stats: Settled,
           if_match: bool = False, max_tries: int = 150, time_limit: float = 30.0) -> Reply:
    """POST the move with ``key`` (and If-Match: the version of ``game.view``) until it is
    answered other than 503 (sleeping 0.1 s between tries); every 503 must be a problem with
    Retry-After."""
    path, token = f"{game.path}/moves", game.turn_token()
    headers = {"Idempotency-Key": key}
    if if_match:
        headers["If-Match"] = f'"{game.view["version"]}"'
    deadline = time.monotonic() + time_limit
    failures = 0
    for _ in range(max_tries):
        reply = conn.request("POST", path, token=token, body=move, headers=headers)
        if reply.status != 503:
            break
        assert is_problem(reply, 503), reply.raw[:300]
        failures += 1
        assert time.monotonic() < deadline, f"{key}: still 503 after {time_limit} s"
        time.sleep(0.1)
    else:
        pytest.fail(f"{key}: 503 {max_tries} times; the last: {reply.raw[:300]!r}")
    with stats.lock:
        stats.answers_503 += failures
        if reply.status == 200:
            stats.moves += 1
            if failures:
                stats.moves_with_503 += 1
                if header(reply, "Idempotent-Replayed") == "true":
                    stats.applied_by_a_503 += 1
                else:
                    stats.applied_by_retry += 1
        else:
            stats.other.append(f"{key}: {reply.status} {reply.raw[:300]!r}")
    return reply


def wait_ready_again(conn_factory: Callable[[], Http], limit: float) -> float:
    """Seconds until /readyz answers 200 (polled every 20 ms), at most ``limit`` + 1."""
    started = time.monotonic()
    while True:
        try:
            with conn_factory() as conn:
                if conn.request("GET", "/readyz").status == 200:
                    return time.monotonic() - started
        except OSError:
            pass
        if time.monotonic() - started > limit + 1:
            return math.inf
        time.sleep(0.02)
