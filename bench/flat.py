"""Whether a move costs the same however far the game has gone: the flatness curves.

A move's cost could grow with the game in two ways: with the moves already logged (the
move log, its records, anything read or rewritten whole on each move) and with the melds
on the table (the state and the views that carry them). In one process, through Flask's
test client against a redis-server of its own (as :mod:`bench.instructions`), this times
moves of games set up at each point of both axes:

- **Logged moves** (:data:`LOGGED`): a 2-player basic game whose log is filled to that
  many records (copies of a real draw's record, and the game's version with it, as the
  store keeps them: one log record per version), then played on by the benchmark's player.
- **Melds on the table** (:data:`MELDS`): 2-player Rummy 51 states late in a hand, both
  seats opened, with that many melds on the table (sets and runs of three), six cards in
  each hand; a draw and a discard are played on each.

Each move is timed from the request sent to the answer read: the thread's CPU time (the
service's request path and the test client; Redis runs in its own process) and the time
on the clock (Redis included). The figures to read are the ratios along each axis: the
largest point's median against the smallest's.
"""

from __future__ import annotations

import logging
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from random import Random
from typing import TYPE_CHECKING, Any
from unittest import mock

from bench.ceiling import create_bench_app
from bench.player import GamePlan
from service.redis_server import RedisServer
from service.referee.documents import decode, encode
from service.rules import GameState, new_game
from service.rules.cards import JOKER, RANKS, standard_deck
from service.rules.state import TableMeld

if TYPE_CHECKING:
    from flask import Flask
    from flask.testing import FlaskClient

LOGGED = (10, 1_000, 10_000)
MELDS = (0, 10, 30)
MOVES_PER_POINT = 240
"""Moves timed at each point of an axis."""
UNREACHED_LIMIT = "1000000/second"
"""Rate limits on, as in service (a move counts its hit in the commit), never reached."""


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _figures(cpu: list[float], wall: list[float], state_bytes: list[int],
             answer_bytes: list[int]) -> dict[str, Any]:
    return {"moves": len(cpu),
            "cpu_ms_p50": statistics.median(cpu) * 1e3,
            "cpu_ms_mean": statistics.fmean(cpu) * 1e3,
            "latency_ms_p50": statistics.median(wall) * 1e3,
            "latency_ms_p99": _percentile(wall, 0.99) * 1e3,
            "state_bytes": statistics.fmean(state_bytes),
            "answer_bytes": statistics.fmean(answer_bytes)}


class _Table:
    """Games of one test client, their stored documents reached through the app's store."""

    def __init__(self, app: Flask, client: FlaskClient) -> None:
        self.app = app
        self.client = client
        self.referee = app.extensions["referee"]
        self.store = self.referee.store

    def create(self, variant: str) -> tuple[str, list[str], dict[str, Any]]:
        data = self.client.post("/v1/games", json={"variant": variant,
                                                   "players": ["a", "b"]}).get_json()
        return data["game_id"], [s["token"] for s in data["seats"]], data["game"]

    def put(self, game_id: str, state: GameState | None, logged: int) -> None:
        """Store ``state`` (None: keep the stored one) at version ``logged``, the log filled
        to as many records; the worker forgets the state it held."""
        keys = self.store.keys(game_id)
        raw = self.store.client
        doc = decode(raw.hget(keys.game, "s"))
        if state is not None:
            doc["state"] = state.to_compact()
        record = encode({"version": 1, "seat": 0, "move": {"type": "draw", "source": "stock"},
                         "events": [{"type": "draw", "seat": 0, "source": "stock"}]})
        pipe = raw.pipeline(transaction=False)
        pipe.delete(keys.log)
        for start in range(0, logged, 1000):
            pipe.rpush(keys.log, *([record] * min(1000, logged - start)))
        pipe.hset(keys.game, mapping={"s": encode(doc), "v": logged})
        pipe.execute()
        self.referee.held.drop(game_id)

    def state_bytes(self, game_id: str) -> int:
        return len(self.store.client.hget(self.store.keys(game_id).game, "s") or b"")

    def timed_moves(self, plan: GamePlan, count: int, cpu: list[float], wall: list[float],
                    state_bytes: list[int], answer_bytes: list[int]) -> None:
        """Play up to ``count`` moves of ``plan``'s game, timing each applied one."""
        client, gid = self.client, plan.game_id
        for _ in range(count * 3):
            if plan.finished or count <= 0:
                return
            seat = plan.to_move
            auth = {"Authorization": f"Bearer {plan.tokens[seat]}"}
            if plan.seats[seat].hand is None:
                plan.saw(seat, client.get(f"/v1/games/{gid}/me", headers=auth).get_json(), [])
                continue
            move = plan.next_move()
            started_cpu, started = time.thread_time(), time.perf_counter()
            reply = client.post(f"/v1/games/{gid}/moves", json=move, headers=auth)
            body = reply.get_data()
            took, took_cpu = time.perf_counter() - started, time.thread_time() - started_cpu
            if reply.status_code != 200:
                plan.saw(seat, client.get(f"/v1/games/{gid}/me", headers=auth).get_json(), [])
                continue
            data = decode(body)
            plan.saw(seat, data["game"], data["events"])
            cpu.append(took_cpu)
            wall.append(took)
            answer_bytes.append(len(body))
            state_bytes.append(self.state_bytes(gid))
            count -= 1


def _plan(table: _Table, gid: str, tokens: list[str], variant: str, rng: Random) -> GamePlan:
    view = table.client.get(f"/v1/games/{gid}").get_json()
    return GamePlan(gid, variant, tokens, view, rng)


ROUNDS = 6
"""Each axis visits its points in turn, this many times (a share of the moves each time), so
that every point meets the machine as it is at each moment (others share it)."""


def _axis(points: tuple[int, ...], play: Callable[[int, int, list[list[Any]]], None]
          ) -> dict[str, Any]:
    """Time ``MOVES_PER_POINT`` moves at each of ``points``, round by round: ``play(point,
    moves, samples)`` appends the timed moves' figures to the four ``samples`` lists."""
    samples: dict[int, list[list[Any]]] = {p: [[], [], [], []] for p in points}
    for round_ in range(ROUNDS):
        for point in points:
            want = MOVES_PER_POINT * (round_ + 1) // ROUNDS
            while len(samples[point][0]) < want:
                play(point, want - len(samples[point][0]), samples[point])
    return {str(p): _figures(*samples[p]) for p in points}


def logged_axis(table: _Table, rng: Random) -> dict[str, Any]:
    def play(logged: int, moves: int, samples: list[list[Any]]) -> None:
        gid, tokens, _ = table.create("basic")
        table.put(gid, None, logged)
        table.timed_moves(_plan(table, gid, tokens, "basic", rng), moves, *samples)

    return _axis(LOGGED, play)


MELD_TABLE = ([[r + s for s in "SHD"] for r in RANKS] * 2
              + [[RANKS[i + k] + "C" for k in range(3)] for i in (0, 3, 6, 9)])
"""30 melds two decks hold at once: each rank's set of spades, hearts and diamonds twice,
and four runs of clubs."""


def melds_state(count: int, rng: Random) -> GameState:
    """A 2-player Rummy 51 state late in a hand: both seats opened, ``count`` melds of
    :data:`MELD_TABLE` on the table (taken in a shuffled order), six cards in each hand,
    seat 1 to draw."""
    state, _ = new_game("rummy51", ["a", "b"], None, 0, None, rng=rng)
    chosen = rng.sample(MELD_TABLE, count)
    pool = standard_deck(2, 4)
    for cards in chosen:
        for c in cards:
            pool.remove(c)
    rng.shuffle(pool)
    state.hands = [pool[:6], pool[6:12]]
    state.stock = pool[12:]
    state.discard = []
    state.melds = []
    for i, cards in enumerate(chosen):
        kind = "set" if cards[0][0] == cards[1][0] else "run"
        start = RANKS.index(cards[0][0]) + 1 if kind == "run" else 0
        points = sum(min(10, RANKS.index(c[0]) + 1) for c in cards)
        state.melds.append(TableMeld(f"m{i + 1}", i % 2, kind, list(cards), list(cards),
                                     start, points))
    state.meld_seq = count
    state.melded = [True, True]
    state.turn, state.phase = 1, "draw"
    state.reset_turn()  # not the dealer's first turn (R51-FIRST) any more
    assert len([c for c in state.hands[0] + state.hands[1] + state.stock if c == JOKER]) == 4
    return state


def melds_axis(table: _Table, rng: Random) -> dict[str, Any]:
    def play(count: int, moves: int, samples: list[list[Any]]) -> None:
        gid, tokens, _ = table.create("rummy51")
        table.put(gid, melds_state(count, rng), 10)
        table.timed_moves(_plan(table, gid, tokens, "rummy51", rng), min(moves, 2), *samples)

    return _axis(MELDS, play)


def match_memory(table: _Table, rng: Random, variant: str = "dummy", players: int = 4
                 ) -> dict[str, Any]:
    """A whole match of ``variant`` (Dummy: twelve contracts) played by the benchmark's
    player: the game's Redis memory (``MEMORY USAGE`` of all its keys) after each hand, with
    the finished hands' log archived, and what the log's records take as stored."""
    data = table.client.post("/v1/games", json={
        "variant": variant, "players": [f"p{i}" for i in range(players)]}).get_json()
    gid, tokens = data["game_id"], [s["token"] for s in data["seats"]]
    plan = GamePlan(gid, variant, tokens, data["game"], rng)
    raw = table.store.client
    keys = table.store.keys(gid)

    def usage() -> int:
        return sum(int(raw.memory_usage(k, samples=0) or 0)
                   for k in (keys.game, keys.idem_order, keys.log, keys.archive))

    by_hand: list[int] = []
    hand = 1
    while not plan.finished:
        table.timed_moves(plan, 1, [], [], [], [])
        if plan.view["hand_number"] != hand or plan.finished:
            hand = plan.view["hand_number"]
            by_hand.append(usage())
    records = table.store.log(gid)
    record_bytes = sum(len(r) for _, r in records)
    events = sum(len(decode(r)["events"]) for _, r in records)
    return {"variant": variant, "players": players, "hands": len(by_hand),
            "moves": len(records), "bytes_by_hand": by_hand,
            "bytes_at_end": by_hand[-1] if by_hand else usage(),
            "archive_bytes": int(raw.memory_usage(keys.archive, samples=0) or 0),
            "record_bytes": record_bytes,
            "archive_bytes_per_move": int(raw.memory_usage(keys.archive, samples=0) or 0)
            / max(len(records), 1),
            "events_per_move": events / max(len(records), 1)}


def _with_app(run: Callable[[_Table], dict[str, Any]]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="rummy-flat-") as tmp:
        redis = RedisServer(Path(tmp))
        redis.start()
        try:
            with mock.patch.dict(os.environ, REDIS_URL=redis.url,
                                 RUMMY_RATE_LIMITS=UNREACHED_LIMIT,
                                 RUMMY_CREATE_RATE_LIMITS="off"):
                app = create_bench_app()
                logging.getLogger("service.access").setLevel(logging.WARNING)
                return run(_Table(app, app.test_client()))
        finally:
            redis.stop()


def curves(seed: int = 48) -> dict[str, Any]:
    """Both axes: per point, the CPU and latency of a move, the stored state's and the
    answer's bytes; and the ratio of the last point to the first."""
    rng = Random(seed)

    def run(table: _Table) -> dict[str, Any]:
        gid, tokens, _ = table.create("basic")  # warm up: the first moves of a process
        table.timed_moves(_plan(table, gid, tokens, "basic", rng), 60, [], [], [], [])
        return {"logged_moves": logged_axis(table, rng), "melds": melds_axis(table, rng),
                "match_memory": match_memory(table, rng)}

    out = _with_app(run)
    for axis in ("logged_moves", "melds"):
        points = list(out[axis].values())
        out[axis + "_ratio"] = {
            key: points[-1][key] / max(points[0][key], 1e-9)
            for key in ("cpu_ms_p50", "latency_ms_p50", "latency_ms_p99", "state_bytes")}
    return out


def table_text(figures: dict[str, Any]) -> list[str]:
    """The curves as a table (lines of the report)."""
    lines = ["flatness (one process, Flask's test client, a redis-server of its own)",
             "  axis            point   moves  CPU p50 ms  latency p50 ms  p99 ms  "
             "state B  answer B"]
    for axis, label in (("logged_moves", "logged moves"), ("melds", "melds on table")):
        for point, f in figures[axis].items():
            lines.append(f"  {label:<15} {point:>6} {f['moves']:>7} {f['cpu_ms_p50']:>11.3f} "
                         f"{f['latency_ms_p50']:>15.3f} {f['latency_ms_p99']:>7.3f} "
                         f"{f['state_bytes']:>8.0f} {f['answer_bytes']:>9.0f}")
        r = figures[axis + "_ratio"]
        lines.append(f"  {label}: last / first point: CPU p50 {r['cpu_ms_p50']:.2f}, "
                     f"latency p50 {r['latency_ms_p50']:.2f}, p99 {r['latency_ms_p99']:.2f}, "
                     f"state bytes {r['state_bytes']:.2f}")
    m = figures.get("match_memory")
    if m:
        lines.append(f"  memory over a whole match ({m['variant']}, {m['players']} players, "
                     f"{m['hands']} hands, {m['moves']} logged moves): after each hand "
                     + ", ".join(f"{b / 1024:.1f}" for b in m["bytes_by_hand"]) + " KB; the "
                     f"archive {m['archive_bytes_per_move']:.0f} B per logged move "
                     f"({m['record_bytes'] / max(m['moves'], 1):.0f} B per record as written); "
                     f"{m['events_per_move']:.2f} events per move")
    return lines


def plot(figures: dict[str, Any], path: Path) -> bool:
    """The curves as a PNG at ``path`` when matplotlib is installed; whether it was made."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    for ax, axis, label in ((axes[0], "logged_moves", "moves already logged"),
                            (axes[1], "melds", "melds on the table")):
        points = figures[axis]
        xs = [int(p) for p in points]
        for key, name in (("cpu_ms_p50", "CPU p50"), ("latency_ms_p50", "latency p50")):
            # (the p99, in the table, is mostly what else runs on a shared machine)
            ax.plot(xs, [points[p][key] for p in points], marker="o", label=name)
        if axis == "logged_moves":
            ax.set_xscale("log")
        ax.set_xlabel(label)
        ax.set_ylabel("ms per move")
        ax.set_ylim(bottom=0)
        ax.legend()
        ax.grid(True, alpha=0.3)
    fig.suptitle("A move's cost along the game (bench/flat.py)")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True
