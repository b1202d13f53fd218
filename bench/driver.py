"""The load driver: a separate process running many clients on one asyncio loop.

``python -m bench.driver CONFIG_JSON OUT_JSON``. Every client is closed-loop (its next
request leaves when the answer is read) and keeps one keep-alive connection. The measured
time is cut into short slots that alternate between the two loads, so that both see the
same machine (other work on it comes and goes):

* a *moves* slot: each client keeps a few games going (every variant, 2–4 seats), plays
  every seat of them in turn and sends the moves its player picks (:mod:`bench.player`);
  it reads hands it does not know (after a new deal) with ``GET …/me``, recovers from a
  refused move with ``GET …/legal-moves`` and replaces finished games. Only
  ``POST …/moves`` answers are timed and counted.
* a *ceiling* slot: each client calls ``GET /_bench/ceiling/<its key>?size=N``.
* a *floor* slot, when the configuration names a ``floor_port``: the same call to the bare
  Flask route of :mod:`bench.floor`, served by a second gunicorn with the same settings.

A request is counted when it starts and ends in the same measured slot of its kind. The
warm-up before the first slot runs every load in turn, unmeasured.

With a ``rate`` in the configuration the moves are offered *open-loop* instead, as players
who think between moves send them: each client sends its moves at the times of a Poisson
process of ``rate / clients`` per second (:class:`Pacer`), whether or not the server has
kept up, and a move's latency runs from the time it was due to be sent, so a server that
falls behind shows it as latency (no coordinated omission). Only moves are run then.
"""

from __future__ import annotations

import asyncio
import gc
import json
import math
import statistics
import sys
import time
from collections import Counter
from collections.abc import Coroutine
from dataclasses import dataclass, field
from random import Random
from typing import Any, TypeVar

from bench.http import Connection, HttpError, Reply, dumps
from bench.player import GamePlan, new_game_body

T = TypeVar("T")
VARIANTS = ("basic", "rummy51", "lebanese14", "dummy", "wrotham", "gin")
MOVES, CEILING, FLOOR = "moves", "ceiling", "floor"


@dataclass
class Tally:
    """What one driver process measured for one kind of load."""

    latencies: list[float] = field(default_factory=list)
    """Seconds per counted request (moves, or ceiling calls)."""
    ok: int = 0
    refused: int = 0
    """422 answers to moves (the client's player proposed an illegal move)."""
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)
    other_requests: int = 0
    """Requests that are not counted (game creation, GET /me, legal moves)."""
    throttled: int = 0
    """Of those, the ones the service's rate limits refused (429): the client waits as long
    as the answer's ``Retry-After`` says and tries again, as a well-behaved client does."""
    throttled_moves: int = 0
    """Moves the service's per-seat rate limit refused (429; ``RUMMY_RATE_LIMITS``), each
    sent again after its ``Retry-After``: not a move answered, so neither counted nor
    timed, and not an error. Only a seat making more requests a second than the limit lets
    it (100 by default, as the benchmark's stack runs) meets it: one client alone on a fast
    machine."""
    move_types: Counter[str] = field(default_factory=Counter)
    by_type: dict[str, list[float]] = field(default_factory=dict)
    """Seconds per counted legal move by its type; a move that ends the hand (scoring, the
    next deal) counts under ``"hand_end"`` instead."""
    workers: Counter[str] = field(default_factory=Counter)
    """Counted requests by the server process that answered them."""
    client_p50s: list[float] = field(default_factory=list)
    """Each client's own median latency (seconds) of its counted requests."""
    hands_ended: int = 0
    games_created: int = 0
    games_finished: int = 0

    def error(self, what: str) -> None:
        self.errors += 1
        if len(self.error_samples) < 10:
            self.error_samples.append(what)

    def as_dict(self) -> dict[str, Any]:
        return {"latencies": self.latencies, "ok": self.ok, "refused": self.refused,
                "errors": self.errors, "error_samples": self.error_samples,
                "other_requests": self.other_requests, "throttled": self.throttled,
                "throttled_moves": self.throttled_moves,
                "move_types": dict(self.move_types),
                "by_type": self.by_type,
                "hands_ended": self.hands_ended, "games_created": self.games_created,
                "games_finished": self.games_finished, "client_p50s": self.client_p50s,
                "workers": dict(self.workers)}


class Schedule:
    """Measured slots from ``start``, one kind of load after the other (moves, ceiling,
    moves, … or moves, ceiling, floor, moves, …), each ``slot`` seconds long, ``seconds``
    of each kind in all. Before ``start``: the warm-up, each kind in turn."""

    def __init__(self, start: float, seconds: float, slot: float, warmup: float,
                 only: str | None = None, kinds: tuple[str, ...] = (MOVES, CEILING)) -> None:
        self.only = only
        """One kind of load only (for profiling), else alternating slots."""
        self.kinds = kinds
        self.start = start
        self.slot = slot
        self.per_kind = max(1, math.ceil(seconds / slot))
        """Measured slots of each kind."""
        self.slots = len(kinds) * self.per_kind
        self.end = start + (seconds if only else self.slots * slot)
        self.warmup = warmup

    def at(self, now: float) -> tuple[str, int]:
        """The kind of load at ``now`` and the measured slot's number (-1: not measured)."""
        if self.only is not None:
            return self.only, (0 if self.start <= now < self.end else -1)
        if now < self.start:
            done = 1.0 - (self.start - now) / self.warmup if self.warmup > 0 else 1.0
            return self.kinds[min(len(self.kinds) - 1, max(0, int(done * len(self.kinds))))], -1
        index = int((now - self.start) / self.slot)
        if index >= self.slots:
            return MOVES, -1
        return self.kinds[index % len(self.kinds)], index

    @property
    def over(self) -> bool:
        return time.time() >= self.end


async def wait_out(refusal: Reply) -> None:
    """Wait as long as a ``429`` answer's ``Retry-After`` says (a second when it says
    nothing) before sending again, as a well-behaved client does."""
    await asyncio.sleep(refusal.retry_after if refusal.retry_after is not None else 1.0)


class Pacer:
    """When an open-loop client's moves are due: the times of a Poisson process of ``rate``
    per second from ``start`` (the gaps between them drawn from an exponential law)."""

    def __init__(self, rate: float, start: float, rng: Random) -> None:
        if rate <= 0:
            raise ValueError(f"rate must be positive, not {rate}")
        self.rate = rate
        self.rng = rng
        self.due = start + rng.expovariate(rate)
        """When the next move is due to be sent."""

    def advance(self) -> float:
        """The time the next move was due, and the one after it becomes due."""
        due = self.due
        self.due += self.rng.expovariate(self.rate)
        return due


class Client:
    def __init__(self, index: int, cfg: dict[str, Any], tallies: dict[str, Tally],
                 schedule: Schedule) -> None:
        self.index = index
        self.conn = Connection(cfg["host"], cfg["port"])
        self.floor_conn = (Connection(cfg["host"], int(cfg["floor_port"]))
                           if cfg.get("floor_port") else None)
        """The keep-alive connection to :mod:`bench.floor`'s server."""
        self.per_seat = bool(cfg.get("connection_per_seat"))
        """Each seat of a game on a connection of its own (as players on their own devices),
        instead of all of the client's requests on one."""
        self.seat_conns: dict[tuple[str, int], Connection] = {}
        self.moves = tallies[MOVES]
        self.tallies = tallies
        self.schedule = schedule
        self.rng = Random(cfg.get("seed", 0) * 1000 + index)
        self.per_client = int(cfg["games_per_client"])
        self.ceiling_path = f"/_bench/ceiling/{cfg['proc']}-{index}?size={int(cfg['size'])}"
        self.created = 0
        self.games: list[GamePlan] = []
        self.turn = 0
        self.timed: dict[str, list[float]] = {kind: [] for kind in tallies}
        """This client's counted latencies by kind of load."""
        rate = cfg.get("rate")
        self.rate = float(rate) / int(cfg["clients"]) if rate else None
        """Open loop: the moves per second this client offers (None: closed loop)."""
        self.pacer: Pacer | None = None
        """Open loop: when this client's moves are due, from its first move on (creating
        its games first takes a while, under the service's rate limits too)."""

    def _slot(self, started: float) -> int:
        """The measured slot a request started at ``started`` counts in (-1: none)."""
        _, first = self.schedule.at(started)
        _, last = self.schedule.at(time.time())
        return first if first == last else -1

    # -- moves ---------------------------------------------------------------------------

    def _conn(self, game: GamePlan, seat: int) -> Connection:
        """The connection a seat's requests go on."""
        if not self.per_seat:
            return self.conn
        key = (game.game_id, seat)
        conn = self.seat_conns.get(key)
        if conn is None:
            conn = self.seat_conns[key] = Connection(self.conn.host, self.conn.port)
        return conn

    async def _forget(self, game: GamePlan) -> None:
        """Close the connections of a finished game's seats."""
        for seat in range(len(game.tokens)):
            conn = self.seat_conns.pop((game.game_id, seat), None)
            if conn is not None:
                await conn.close()

    async def _send(self, conn: Connection, method: str, path: str, body: Any = None,
                    token: str | None = None, due: float | None = None
                    ) -> tuple[Reply | None, bool]:
        """One request of the moves load: its answer (None when the request failed, which
        counts as an error), and whether it started and ended in one measured slot. With
        the time ``due`` it was due to be sent (open loop), it starts then, and its
        ``seconds`` include how late it was sent."""
        headers = {"Authorization": f"Bearer {token}"} if token else None
        data = None if body is None else dumps(body)
        if due is not None and due > time.time():
            await asyncio.sleep(due - time.time())
        started = time.time()
        try:
            reply = await conn.request(method, path, data, headers)
        except HttpError as exc:
            self.moves.error(str(exc))
            return None, False
        if due is not None:
            reply.seconds += max(0.0, started - due)
            started = due
        return reply, self._slot(started) >= 0

    async def _other(self, method: str, path: str, body: Any = None,
                     token: str | None = None, conn: Connection | None = None
                     ) -> Reply | None:
        reply, counted = await self._send(conn or self.conn, method, path, body, token)
        if reply is None:
            return None
        if counted:
            self.moves.other_requests += 1
        if reply.status == 429:
            if counted:
                self.moves.throttled += 1
            await wait_out(reply)
            return None
        if reply.status >= 400:
            self.moves.error(f"{method} {path}: {reply.status} {reply.body[:200]!r}")
            return None
        return reply

    async def _new_game(self) -> GamePlan | None:
        variant = VARIANTS[(self.index * self.per_client + self.created) % len(VARIANTS)]
        body = new_game_body(variant, self.index + self.created // len(VARIANTS))
        self.created += 1
        reply = await self._other("POST", "/v1/games", body)
        if reply is None:
            return None
        data = reply.json()
        self.moves.games_created += 1
        tokens = [s["token"] for s in data["seats"]]
        return GamePlan(data["game_id"], variant, tokens, data["game"], self.rng)

    async def _refresh(self, game: GamePlan, seat: int) -> bool:
        reply = await self._other("GET", f"/v1/games/{game.game_id}/me",
                                  token=game.tokens[seat], conn=self._conn(game, seat))
        if reply is None:
            return False
        game.saw(seat, reply.json(), [])
        return True

    async def _move(self, game: GamePlan, seat: int, move: dict[str, Any]) -> int:
        """POST the move; the answer's status (0 when the request failed)."""
        if self.rate is not None and self.pacer is None:
            self.pacer = Pacer(self.rate, time.time(), self.rng)
        due = self.pacer.advance() if self.pacer is not None else None
        tally = self.moves
        while True:
            reply, counted = await self._send(self._conn(game, seat), "POST",
                                              f"/v1/games/{game.game_id}/moves", move,
                                              game.tokens[seat], due)
            if reply is None:
                return 0
            if reply.status != 429:
                break
            # the seat's rate limit: the move was not applied; send it again once the
            # answer's Retry-After has passed (open loop: still timed from when it was due)
            if counted:
                tally.throttled_moves += 1
            await wait_out(reply)
        if counted:
            tally.latencies.append(reply.seconds)
            tally.workers[reply.worker] += 1
            self.timed[MOVES].append(reply.seconds)
        if reply.status == 200:
            data = reply.json()
            game.saw(seat, data["game"], data["events"])
            if counted:
                tally.ok += 1
                tally.move_types[move["type"]] += 1
                ended = sum(1 for e in data["events"] if e["type"] == "hand_end")
                tally.hands_ended += ended
                kind = "hand_end" if ended else move["type"]
                tally.by_type.setdefault(kind, []).append(reply.seconds)
            return 200
        if counted:
            if reply.status == 422:
                tally.refused += 1
                if len(tally.error_samples) < 10:
                    tally.error_samples.append(
                        f"refused {game.variant} {move}: {reply.body[:300]!r}")
            else:
                tally.error(f"POST move {move}: {reply.status} {reply.body[:200]!r}")
        return reply.status

    async def _recover(self, game: GamePlan, seat: int) -> None:
        """After a refused move: ask for the legal moves and make the simplest one."""
        reply = await self._other("GET", f"/v1/games/{game.game_id}/legal-moves",
                                  token=game.tokens[seat], conn=self._conn(game, seat))
        if reply is None:
            return
        moves = reply.json()["moves"]
        for kind in ("draw", "discard", "lay_off", "meld", "swap_joker"):
            pick = [m for m in moves if m["type"] == kind]
            if pick:
                await self._move(game, seat, self.rng.choice(pick))
                return

    async def _move_step(self) -> None:
        """One step of the round robin over the client's games."""
        if not self.games:
            for _ in range(self.per_client):
                game = await self._new_game()
                if game is not None:
                    self.games.append(game)
            if not self.games:
                await asyncio.sleep(0.05)
            return
        self.turn += 1
        i = self.turn % len(self.games)
        game = self.games[i]
        if game.finished:
            if self.schedule.at(time.time())[1] >= 0:
                self.moves.games_finished += 1
            await self._forget(game)
            replacement = await self._new_game()
            if replacement is None:
                await asyncio.sleep(0.05)
            else:
                self.games[i] = replacement
            return
        seat = game.to_move
        if game.seats[seat].hand is None:
            if not await self._refresh(game, seat):
                await asyncio.sleep(0.05)
            return
        status = await self._move(game, seat, game.next_move())
        if status == 422:
            await self._recover(game, seat)
        elif status != 200:
            await self._refresh(game, seat)

    # -- the ceiling and the floor -------------------------------------------------------

    async def _call_step(self, kind: str, conn: Connection) -> None:
        """One call of the ceiling endpoint (or of the floor's route, on its server)."""
        tally = self.tallies[kind]
        started = time.time()
        try:
            reply = await conn.request("GET", self.ceiling_path)
        except HttpError as exc:
            tally.error(str(exc))
            await asyncio.sleep(0.01)
            return
        reply.json()  # a client reads what it asked for
        if self._slot(started) < 0:
            return
        tally.latencies.append(reply.seconds)
        tally.workers[reply.worker] += 1
        self.timed[kind].append(reply.seconds)
        if reply.status == 200:
            tally.ok += 1
        else:
            tally.error(f"{kind}: {reply.status} {reply.body[:200]!r}")

    async def run(self) -> None:
        while not self.schedule.over:
            kind, _ = self.schedule.at(time.time())
            if kind == MOVES:
                await self._move_step()
            elif kind == FLOOR and self.floor_conn is not None:
                await self._call_step(FLOOR, self.floor_conn)
            else:
                await self._call_step(CEILING, self.conn)
        for conn in (self.conn, self.floor_conn, *self.seat_conns.values()):
            if conn is not None:
                await conn.close()
        for kind, tally in self.tallies.items():
            if self.timed[kind]:
                tally.client_p50s.append(statistics.median(self.timed[kind]))


def schedule_of(cfg: dict[str, Any]) -> Schedule:
    """The slots a driver configuration runs (the floor's when it names a ``floor_port``)."""
    kinds = (MOVES, CEILING, FLOOR) if cfg.get("floor_port") else (MOVES, CEILING)
    return Schedule(float(cfg["measure_from"]), float(cfg["seconds"]),
                    float(cfg["slot_seconds"]), float(cfg["warmup"]), cfg.get("only"), kinds)


async def drive(cfg: dict[str, Any]) -> dict[str, Tally]:
    schedule = schedule_of(cfg)
    tallies = {kind: Tally() for kind in schedule.kinds}
    first = int(cfg["first_client"])
    clients = [Client(first + i, cfg, tallies, schedule) for i in range(int(cfg["clients"]))]
    await asyncio.gather(*(c.run() for c in clients))
    return tallies


def run_load(load: Coroutine[Any, Any, T]) -> T:
    """Run the load on uvloop where it is installed (the ``bench`` extra; not on Windows),
    else on asyncio's own loop. The drivers share the CPUs with the server they measure,
    and uvloop's loop and transports cost less of them: measured in four interleaved pairs
    of runs, 7% less driver CPU per move and 3% more moves per second."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(load)
    return uvloop.run(load)


def main(argv: list[str]) -> int:
    cfg = json.loads(argv[0])
    gc.freeze()  # start-up objects are never scanned again by the collector
    tallies = run_load(drive(cfg))
    schedule = schedule_of(dict(cfg, only=None))
    out_data: dict[str, Any] = {kind: t.as_dict() for kind, t in tallies.items()}
    out_data["measured_seconds"] = schedule.per_kind * schedule.slot
    with open(argv[1], "w") as out:
        json.dump(out_data, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
