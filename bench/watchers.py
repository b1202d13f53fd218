"""``python3 dev.py bench --watchers N``: live tables at scale (bench/README.md, "Live tables").

One run, one stack (its own redis-server; the service under gunicorn's gevent worker, as
docs/operations.md, "Live tables", recommends for streams; ``RUMMY_WORKER_CLASS=gthread``
in the environment compares gthread): games are played by mover threads (draw, then discard
a card of the hand the draw's answer shows) for ``seconds`` with no watcher, then ``cycles``
times: for as long again while a separate process holds ``N`` event streams on those games
(4 per game, like the seats of a table), then, the streams closed, for as long again
without them. The phases without come before, between and after those with the
watchers, so that a machine's drift during the run moves both sides alike. It reports the
streams held and refused, every event delivered or not, the delivery latency (from the
moment the move was sent, which is before its commit, to the last byte of its event on a
watcher: an upper bound), the move latency and throughput with and without the watchers
(their ratio, and each cycle's against the phases either side), and the service's memory
and thread count while the streams are held.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import multiprocessing
import os
import random
import resource
import select
import socket
import struct
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench import cpu
from bench.stack import Stack

WATCHERS_PER_GAME = 4
MOVERS = 4
OPEN_BURST = 200
"""Streams opened at a time, each burst all answered before the next."""
READ_EVERY = 0.01
"""Seconds between the watcher process's rounds of reads while the moves are measured: a
round reads every stream with bytes waiting, stamped by the kernel as they arrived
(``SO_TIMESTAMPNS``), so the process wakes 100 times a second, not once an event, and the
delivery times stay those of the arrivals."""
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
"""Linux's option, and its control message's type (Python's socket module has no name
for it)."""
_STAMP = struct.Struct("@ll")
"""The ``struct timespec`` of an ``SCM_TIMESTAMPNS`` message."""
_STAMP_SPACE = socket.CMSG_SPACE(_STAMP.size)
CYCLES = 2
"""Phases with the watchers in a run, each between two without them (their streams opened
anew for each): one phase's ratio moves by a few hundredths with the machine's drift."""

ENV = {"RUMMY_WORKER_CLASS": os.environ.get("RUMMY_WORKER_CLASS", "gevent"),
       "RUMMY_MAX_CONNECTIONS_PER_ADDRESS": "0",
       "RUMMY_SSE_PER_ADDRESS": "0", "RUMMY_SSE_PER_SEAT": "0", "RUMMY_RATE_LIMITS": "off",
       "RUMMY_CREATE_RATE_LIMITS": "off", "RUMMY_SSE_HEARTBEAT_SECONDS": "20",
       "RUMMY_SSE_MAX_SECONDS": "3600", "RUMMY_LOG_LEVEL": "WARNING"}


def _raise_open_files(wanted: int) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard == resource.RLIM_INFINITY else min(hard, max(soft, wanted))
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def _request(conn: http.client.HTTPConnection, method: str, path: str, token: str | None,
             body: Any = None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    conn.request(method, path, body=None if body is None else json.dumps(body),
                 headers=headers)
    resp = conn.getresponse()
    data = resp.read()
    return resp.status, json.loads(data) if data else None


class Table:
    """A game the movers play: draw from the stock, discard a random card of the hand."""

    def __init__(self, conn: http.client.HTTPConnection) -> None:
        status, body = _request(conn, "POST", "/v1/games", None, {
            "variant": "basic", "players": ["A", "B", "C", "D"],
            "rules": {"max_stock_rebuilds": None}})
        assert status == 201, body
        self.game_id: str = body["game_id"]
        self.tokens = [s["token"] for s in body["seats"]]
        self.turn: dict[str, Any] = body["game"]["turn"]
        self.hand: list[str] = []
        self.version = 0
        self.lock = threading.Lock()

    def move(self, conn: http.client.HTTPConnection, rng: random.Random) -> tuple[int, float]:
        """One move: (its new version, the monotonic time it was sent)."""
        seat = self.turn["seat"]
        move: dict[str, Any] = ({"type": "draw", "source": "stock"}
                                if self.turn["phase"] == "draw"
                                else {"type": "discard", "card": rng.choice(self.hand)})
        sent = time.monotonic()
        status, body = _request(conn, "POST", f"/v1/games/{self.game_id}/moves",
                                self.tokens[seat], move)
        assert status == 200, body
        self.turn, self.hand = body["turn"], body["game"]["hand"]
        self.version = int(body["version"])
        return self.version, sent


def _play(port: int, tables: list[Table], seconds: float) -> dict[str, Any]:
    """Play ``tables`` with :data:`MOVERS` threads for ``seconds``: move latencies and the
    send time of each (game, version)."""
    latencies: list[float] = []
    sent_at: dict[tuple[str, int], float] = {}
    end = time.monotonic() + seconds
    lock = threading.Lock()

    def mover(index: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        rng = random.Random(index)
        mine = tables[index::MOVERS]
        own: list[float] = []
        sends: dict[tuple[str, int], float] = {}
        while time.monotonic() < end:
            for table in mine:
                version, sent = table.move(conn, rng)
                own.append(time.monotonic() - sent)
                sends[(table.game_id, version)] = sent
        conn.close()
        with lock:
            latencies.extend(own)
            sent_at.update(sends)

    threads = [threading.Thread(target=mover, args=(i,)) for i in range(MOVERS)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    took = time.monotonic() - started
    return {"moves": len(latencies), "seconds": took, "latencies": latencies,
            "sent_at": sent_at}


def _watch(port: int, games: list[tuple[str, int]], ready: Any, stop: Any, out: Any
           ) -> None:
    """The watcher process: hold a stream on each of ``games`` (a game named once per
    stream, with its version: the stream starts after it, as a table that has read the
    game's view), say how many were held and refused, then record when each event
    arrived."""
    _raise_open_files(len(games) + 100)
    held = refused = 0
    errors: Counter[str] = Counter()
    game_of: dict[int, str] = {}
    socks: list[socket.socket] = []
    for first in range(0, len(games), OPEN_BURST):
        burst = []
        for game_id, version in games[first:first + OPEN_BURST]:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=60)
                sock.sendall(_stream_request(game_id, version))
            except OSError as exc:
                errors[type(exc).__name__] += 1
                refused += 1
                continue
            burst.append((sock, game_id))
        for sock, game_id in burst:
            data = bytearray()
            try:
                _read_opening(sock, data)
            except OSError as exc:
                errors[type(exc).__name__] += 1
            if _opened(data):
                held += 1
                sock.setblocking(False)
                _stamped(sock)
                game_of[sock.fileno()] = game_id
                socks.append(sock)
            else:
                refused += 1
                sock.close()
    ready.send((held, refused, dict(errors)))
    # While the moves are measured this process only takes what arrived and when: it
    # shares the CPUs with the service (10,000 clients would be on machines of their own),
    # so it reads in rounds, READ_EVERY apart, each event's time the kernel's stamp of its
    # arrival, and parses the frames afterwards.
    epoll = select.epoll()
    by_fd = {sock.fileno(): sock for sock in socks}
    for fd in by_fd:
        epoll.register(fd, select.EPOLLIN)
    chunks: list[tuple[int, float, bytes]] = []
    while not stop.is_set():
        time.sleep(READ_EVERY)
        offset = time.time() - time.monotonic()  # the stamps' clock to the movers' clock
        for fd, _ in epoll.poll(0):
            try:
                chunk, ancillary, _, _ = by_fd[fd].recvmsg(65536, _STAMP_SPACE)
            except BlockingIOError:
                continue
            if not chunk:
                epoll.unregister(fd)
                continue
            chunks.append((fd, _arrived(ancillary, offset), chunk))
    out.send(_arrivals(chunks, game_of))
    epoll.close()
    for sock in socks:
        sock.close()


def _stream_request(game_id: str, after: int) -> bytes:
    """A public event stream's request, for the events of ``game_id`` after ``after``."""
    return (f"GET /v1/games/{game_id}/events?after={after} HTTP/1.1\r\nHost: b\r\n"
            "Accept: text/event-stream\r\n\r\n").encode()


def _read_opening(sock: socket.socket, data: bytearray) -> None:
    """Read into ``data`` what the service answers a stream's request until the stream has
    begun (its ``retry``), a problem's body has begun, or the connection ends."""
    while b"retry: 1000" not in data and b"\r\n\r\n{" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return
        data += chunk


def _opened(data: bytearray) -> bool:
    """Whether the answer ``data`` began a stream."""
    return data.startswith(b"HTTP/1.1 200") and b"retry: 1000" in data


def _stamped(sock: socket.socket) -> None:
    """Have the kernel stamp when the bytes ``sock`` receives arrive (Linux)."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)


def _arrived(ancillary: list[tuple[int, int, bytes]], offset: float) -> float:
    """When the last bytes a ``recvmsg`` returned arrived, on the monotonic clock: the
    kernel's stamp (``SO_TIMESTAMPNS``, on the real-time clock: less ``offset``), else
    now."""
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= _STAMP.size:
            seconds, nanoseconds = _STAMP.unpack_from(data)
            return float(seconds + nanoseconds / 1e9 - offset)
    return time.monotonic()


def _arrivals(chunks: list[tuple[int, float, bytes]], game_of: dict[int, str]
              ) -> list[tuple[str, int, float]]:
    """(game, version, time) of each event the ``chunks`` (stream, time read, bytes) hold,
    an event's time that of the chunk that completed it."""
    buffers: dict[int, bytearray] = {}
    arrivals: list[tuple[str, int, float]] = []
    for fd, now, chunk in chunks:
        buf = buffers.setdefault(fd, bytearray())
        buf += chunk
        while b"\n\n" in buf:
            frame, _, rest = bytes(buf).partition(b"\n\n")
            buf[:] = rest
            for line in frame.split(b"\n"):
                if line.startswith(b"id: "):
                    arrivals.append((game_of[fd], int(line[4:]), now))
    return arrivals


def _service(pid: int) -> dict[str, int]:
    """Resident memory (KiB) and threads of the gunicorn master and its workers."""
    rss = threads = 0
    pids = [pid] + [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    for each in pids:
        for line in Path(f"/proc/{each}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss += int(line.split()[1])
            elif line.startswith("Threads:"):
                threads += int(line.split()[1])
    return {"rss_kib": rss, "threads": threads, "processes": len(pids)}


def _cpu_seconds(groups: dict[str, int]) -> dict[str, float]:
    """CPU seconds so far of each group: a process and its children, but for the group
    ``movers``, this process alone (its children are the service, Redis and the watchers)."""
    table = cpu.process_table()
    return {name: table.get(pid, (0, 0.0))[1] if name == "movers"
            else cpu.tree_seconds([pid], table) for name, pid in groups.items()}


def _settle(pid: int, most: float = 60.0) -> None:
    """Wait (up to ``most`` seconds) until the processes under ``pid`` are idle: less than
    5% of a CPU over half a second."""
    end = time.monotonic() + most
    last = cpu.tree_seconds([pid], cpu.process_table())
    while time.monotonic() < end:
        time.sleep(0.5)
        now = cpu.tree_seconds([pid], cpu.process_table())
        if now - last < 0.025:
            return
        last = now


def _cpu_spent(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """CPU seconds each group spent between two readings."""
    return {name: after[name] - before[name] for name in after}


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] if ordered else 0.0


def _watched(port: int, server_pid: int, tables: list[Table],
             streams: list[tuple[str, int]], seconds: float, groups: dict[str, int]
             ) -> dict[str, Any]:
    """One phase with the watchers: a process opens ``streams`` (each after its game's
    version now), the movers play ``tables`` for ``seconds``, then the streams close. What
    was held and refused, the service's memory while they were held, the moves, the CPU
    each group spent on them and the events' arrivals."""
    ctx = multiprocessing.get_context("spawn")
    ready_r, ready_w = ctx.Pipe(duplex=False)
    out_r, out_w = ctx.Pipe(duplex=False)
    stop = ctx.Event()
    proc = ctx.Process(target=_watch, args=(port, streams, ready_w, stop, out_w))
    proc.start()
    while not ready_r.poll(1.0):
        if not proc.is_alive():
            raise RuntimeError(f"the watcher process failed (exit {proc.exitcode})")
    held, refused, open_errors = ready_r.recv()
    _settle(server_pid)  # each stream's first read of its game done
    holding = _service(server_pid)
    groups = {**groups, "watchers": proc.pid or 0}
    before = _cpu_seconds(groups)
    played = _play(port, tables, seconds)
    spent = _cpu_spent(before, _cpu_seconds(groups))
    time.sleep(2.0)  # the last events on their way
    stop.set()
    arrivals: list[tuple[str, int, float]] = out_r.recv()
    proc.join(timeout=60)  # its streams closed
    _settle(server_pid)  # the service done ending the streams
    return {"held": held, "refused": refused, "open_errors": open_errors,
            "holding": holding, "played": played, "spent": spent, "arrivals": arrivals}


def _rate(played: dict[str, Any]) -> float:
    return float(played["moves"] / played["seconds"]) if played["seconds"] else 0.0


def _merged(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The moves, seconds and latencies of several phases of :func:`_play` as one (each
    phase's send times stay its own: its events are matched with them)."""
    return {"moves": sum(r["moves"] for r in runs), "seconds": sum(r["seconds"] for r in runs),
            "latencies": [x for r in runs for x in r["latencies"]]}


def _alternated(unwatched: list[dict[str, Any]], watched: list[dict[str, Any]]
                ) -> list[dict[str, Any]]:
    """The phases' moves in the order they were played: without, with, without …"""
    phases = []
    for i, played in enumerate(unwatched):
        phases.append(played)
        if i < len(watched):
            phases.append(watched[i]["played"])
    return phases


def run(watchers: int, seconds: float, workers: int | None, cycles: int = CYCLES
        ) -> dict[str, Any]:
    if cycles < 1:
        raise ValueError("a run needs a cycle with the watchers at least")
    limit = _raise_open_files(watchers * 2 + 1000)
    with tempfile.TemporaryDirectory(prefix="rummy-watchers-") as tmp:
        stack = Stack(Path(tmp), workers=workers, env=ENV)
        stack.start()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", stack.port, timeout=30)
            tables = [Table(conn) for _ in range(max(MOVERS, watchers // WATCHERS_PER_GAME))]
            conn.close()
            idle = _service(stack.server_pid)
            _settle(stack.server_pid)
            groups = {"service": stack.server_pid, "redis": stack.redis.pid or 0,
                      "movers": os.getpid()}
            before = _cpu_seconds(groups)
            unwatched = [_play(stack.port, tables, seconds)]
            spent = _cpu_spent(before, _cpu_seconds(groups))
            watched: list[dict[str, Any]] = []
            for _ in range(cycles):
                streams = [(t.game_id, t.version) for t in tables
                           for _ in range(WATCHERS_PER_GAME)][:watchers]
                watched.append(_watched(stack.port, stack.server_pid, tables, streams,
                                        seconds, groups))
                before = _cpu_seconds(groups)
                unwatched.append(_play(stack.port, tables, seconds))
                spent = {k: v + spent[k]
                         for k, v in _cpu_spent(before, _cpu_seconds(groups)).items()}
        finally:
            stack.stop()
    per_game = Counter(g for g, _ in streams)
    expected = missing = 0
    delays: list[float] = []
    for phase in watched:
        sent_at = phase["played"]["sent_at"]
        expected += sum(per_game[g] for g, _ in sent_at)
        delivered = Counter((g, v) for g, v, _ in phase["arrivals"])
        delays += [t - sent_at[(g, v)] for g, v, t in phase["arrivals"] if (g, v) in sent_at]
        missing += sum(max(0, per_game[g] - delivered[(g, v)]) for g, v in sent_at)
    # the phases without the watchers come before, between and after those with them, so
    # that a machine whose speed drifts during the run (shared machines do, by tens of
    # percent) moves both sides alike; each cycle's ratio is against the phases either side
    without, with_watchers = _merged(unwatched), _merged([w["played"] for w in watched])
    spent_with = {k: sum(w["spent"].get(k, 0.0) for w in watched)
                  for k in watched[0]["spent"]}
    cpu_ms = {kind: {name: round(ms, 3) for name, ms in groups_ms.items()}
              for kind, groups_ms in cpu.per_request(
                  {"without": spent, "with": spent_with},
                  {"without": without["moves"], "with": with_watchers["moves"]}).items()}
    rate_without, rate_with = _rate(without), _rate(with_watchers)
    move_p99 = _pct(with_watchers["latencies"], 99)
    return {
        "watchers": watchers, "games": len(tables), "open_files_limit": limit,
        "cycles": cycles,
        "streams_held": min(w["held"] for w in watched),
        "streams_refused": sum(w["refused"] for w in watched),
        "open_errors": dict(sum((Counter(w["open_errors"]) for w in watched), Counter())),
        "events_expected": expected, "events_delivered": len(delays),
        "events_missing": missing,
        "delivery_ms": {p: round(_pct(delays, q) * 1000, 1)
                        for p, q in (("p50", 50), ("p99", 99), ("max", 100))},
        "move_ms_without": {p: round(_pct(without["latencies"], q) * 1000, 1)
                            for p, q in (("p50", 50), ("p99", 99), ("max", 100))},
        "move_ms_with": {p: round(_pct(with_watchers["latencies"], q) * 1000, 1)
                         for p, q in (("p50", 50), ("p99", 99), ("max", 100))},
        "moves_per_s_without": round(rate_without, 1),
        "moves_per_s_with": round(rate_with, 1),
        "phases_per_s": [round(_rate(p), 1) for p in _alternated(unwatched, watched)],
        "throughput_ratio": round(rate_with / rate_without, 3) if rate_without else 0.0,
        "cycle_ratios": [round(_rate(w["played"]) * 2 / (_rate(unwatched[i])
                                                        + _rate(unwatched[i + 1])), 3)
                         for i, w in enumerate(watched)],
        "delivery_p99_over_move_p99": round(_pct(delays, 99) / move_p99, 2) if move_p99 else 0,
        "cpu_ms_per_move_without": cpu_ms.get("without", {}),
        "cpu_ms_per_move_with": cpu_ms.get("with", {}),
        "service_idle": idle, "service_holding": watched[0]["holding"],
        "seconds": seconds, "cpus": os.cpu_count(),
    }


def render(result: dict[str, Any]) -> str:
    r = result
    return "\n".join([
        f"watchers: {r['streams_held']} of {r['watchers']} streams held, "
        f"{r['streams_refused']} refused {r['open_errors'] or ''}, on {r['games']} games "
        f"({ENV['RUMMY_WORKER_CLASS']} workers; "
        f"open files limit {r['open_files_limit']})",
        f"events: {r['events_delivered']} of {r['events_expected']} delivered, "
        f"{r['events_missing']} missing",
        f"delivery (move sent -> last byte on a watcher): p50 {r['delivery_ms']['p50']} ms, "
        f"p99 {r['delivery_ms']['p99']} ms, max {r['delivery_ms']['max']} ms; "
        f"p99 / move p99 = {r['delivery_p99_over_move_p99']}",
        "moves a second, phase by phase (without, with, without …): "
        + ", ".join(f"{rate:g}" for rate in r["phases_per_s"]),
        f"moves without watchers: {r['moves_per_s_without']}/s, p50 "
        f"{r['move_ms_without']['p50']} ms, p99 {r['move_ms_without']['p99']} ms, "
        f"max {r['move_ms_without']['max']} ms",
        f"moves with watchers: {r['moves_per_s_with']}/s, p50 {r['move_ms_with']['p50']} ms, "
        f"p99 {r['move_ms_with']['p99']} ms, max {r['move_ms_with']['max']} ms; "
        f"ratio {r['throughput_ratio']} (each cycle against the phases either side: "
        + ", ".join(f"{ratio:g}" for ratio in r["cycle_ratios"]) + ")",
        "CPU per move (ms) without watchers: " + ", ".join(
            f"{k} {v}" for k, v in r["cpu_ms_per_move_without"].items()),
        "CPU per move (ms) with watchers: " + ", ".join(
            f"{k} {v}" for k, v in r["cpu_ms_per_move_with"].items()),
        f"service: {r['service_idle']['rss_kib'] // 1024} MiB, "
        f"{r['service_idle']['threads']} threads idle; "
        f"{r['service_holding']['rss_kib'] // 1024} MiB, "
        f"{r['service_holding']['threads']} threads holding the streams "
        f"({r['service_holding']['processes']} processes)",
    ])
