"""Merging the driver processes' tallies, the budget, and the readable report."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

BUDGET = {
    "ratio_min": 0.75,
    "p99_ratio_max": 1.5,
    "p99_ms_max": 20.0,
    "errors_max": 0,
    "legal_moves_p99_ms_max": 5.0,
    "bytes_per_game_max": 4096,
}
"""Issue 48's budget: ratios measured in the same run (moves/s against the ceiling's, the
moves' p99 against the ceiling's own p99), no errors, ``legal_moves`` on each variant's
worst hand, a mid-hand game's bytes. ``p99_ms_max`` is the open-loop sweep's latency bound
(``--rates``) and the closed loop's reference line, not a budget item."""


def _at(ordered: list[float], q: float) -> float:
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summarize(tallies: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    """One load phase: the driver processes' tallies merged."""
    latencies = [x for t in tallies for x in t["latencies"]]
    ok = sum(t["ok"] for t in tallies)
    types: Counter[str] = Counter()
    by_type: dict[str, list[float]] = {}
    for t in tallies:
        types.update(t["move_types"])
        for kind, times in t.get("by_type", {}).items():
            by_type.setdefault(kind, []).extend(times)
    samples = [s for t in tallies for s in t["error_samples"]][:10]
    return {
        "count": ok,
        "per_second": ok / seconds,
        **latency_of(latencies),
        "errors": sum(t["errors"] for t in tallies),
        "refused": sum(t["refused"] for t in tallies),
        "samples": samples,
        "other_requests": sum(t["other_requests"] for t in tallies),
        "throttled": sum(t.get("throttled", 0) for t in tallies),
        "throttled_moves": sum(t.get("throttled_moves", 0) for t in tallies),
        "move_types": dict(types.most_common()),
        "hands_ended": sum(t["hands_ended"] for t in tallies),
        "games_created": sum(t["games_created"] for t in tallies),
        "games_finished": sum(t["games_finished"] for t in tallies),
        "client_p50s_ms": sorted(x * 1e3 for t in tallies for x in t.get("client_p50s", [])),
        "worker_shares": _shares(t.get("workers", {}) for t in tallies),
        "by_type": {kind: {"count": len(times), **latency_of(times)} for kind, times in
                    sorted(by_type.items(), key=lambda kv: -len(kv[1]))},
    }


def _shares(counts: Iterable[dict[str, int]]) -> list[float]:
    """Each server process's share of the counted requests, largest first."""
    merged: Counter[str] = Counter()
    for part in counts:
        merged.update(part)
    total = sum(merged.values())
    return [n / total for _, n in merged.most_common()] if total else []


def _shares_text(shares: list[float]) -> str:
    return " / ".join(f"{100 * share:.0f}%" for share in shares)


def latency_of(seconds: list[float]) -> dict[str, float]:
    """p50, p95, p99, max and mean (ms) of some requests' latencies (seconds)."""
    ordered = sorted(seconds)
    nan = float("nan")
    return {"p50_ms": _at(ordered, 0.50) * 1e3, "p95_ms": _at(ordered, 0.95) * 1e3,
            "p99_ms": _at(ordered, 0.99) * 1e3,
            "max_ms": (ordered[-1] if ordered else nan) * 1e3,
            "mean_ms": (sum(ordered) / len(ordered) if ordered else nan) * 1e3}


def _throttled_moves(moves: dict[str, Any]) -> str:
    return (f"  {moves['throttled_moves']} moves throttled by the per-seat rate limit (429: "
            "not applied, sent again after Retry-After; neither counted nor timed, not "
            "errors): a seat made more requests a second than RUMMY_RATE_LIMITS lets it")


def _mark(ok: bool) -> str:
    return "ok  " if ok else "MISS"


def needed_for_p99(r: dict[str, Any]) -> str:
    """What the moves' p99 budget asks of throughput, at the tail this run measured: with
    closed-loop clients the mean latency is clients / throughput, and the p99 is some
    multiple of the mean (the queue's shape), so a p99 of B ms needs a mean of B / that
    multiple, which only that many moves per second give."""
    moves, budget = r["moves"], r["budget"]["p99_ms_max"]
    tail = moves["p99_ms"] / max(moves["mean_ms"], 1e-9)
    mean = budget / tail
    need = r["clients"] / (mean / 1e3)
    return (f"moves: p99 = {tail:.2f} x mean; a p99 of {budget:g} ms at that tail needs a "
            f"mean of {mean:.1f} ms, so {need:.0f} moves/s from {r['clients']} clients "
            f"(measured: {moves['per_second']:.0f}/s; ceiling {r['ceiling']['per_second']:.0f}"
            f"/s)")


SERVER_SIDE = ("service", "redis")
"""The parts of a request's CPU on the server's side (the load drivers left out)."""


def _server_side(ms: dict[str, float]) -> float:
    return sum(ms.get(g, 0.0) for g in SERVER_SIDE)


def cpu_quotients(moves_ms: dict[str, float], ceiling_ms: dict[str, float]
                  ) -> tuple[float, float]:
    """CPU per ceiling call over CPU per move: of every part measured, and of the server's
    side alone (:data:`SERVER_SIDE`). With every CPU busy, the first is about the ratio of
    the throughputs; the second about what it would be with the load generated on other
    machines."""
    in_all = sum(ceiling_ms.values()) / max(sum(moves_ms.values()), 1e-12)
    server_side = _server_side(ceiling_ms) / max(_server_side(moves_ms), 1e-12)
    return in_all, server_side


def service_allowance(moves_ms: dict[str, float], ceiling_ms: dict[str, float],
                      ratio: float) -> tuple[float, float, float]:
    """What ``ratio`` (the budget's moves/s ÷ ceiling/s) leaves a move, read off the CPU per
    request as :func:`cpu_quotients` reads the ratio: the CPU quotient in all were a move
    to cost the service what a ceiling call does (the rest of the move as measured), and
    the service CPU per move (ms) at which the quotient reaches ``ratio``, in all and on
    the server's side alone."""
    service = moves_ms.get("service", 0.0)
    others = sum(moves_ms.values()) - service
    same = sum(ceiling_ms.values()) / max(ceiling_ms.get("service", 0.0) + others, 1e-12)
    in_all = sum(ceiling_ms.values()) / ratio - others
    server_side = _server_side(ceiling_ms) / ratio - (_server_side(moves_ms) - service)
    return same, in_all, server_side


def server_line(s: dict[str, Any]) -> str:
    """How the service ran: its gunicorn settings, its Redis, and whether its rules engine
    ran compiled (setup.py)."""
    pinned = ", each kept to a CPU of its own" if s.get("pinned") else ""
    sockets = ", each listening on a socket of its own" if s.get("reuse_port") else ""
    compiled = s.get("engine_compiled")
    engine = "" if compiled is None else "; rules engine " + (
        "compiled (mypyc)" if compiled else "interpreted (RUMMY_COMPILE=1 compiles it)")
    return (f"server: gunicorn {s['worker_class']}, {s['workers']} workers x "
            f"{s['threads']} threads{pinned}{sockets}; redis-server {s['redis']}{engine}")


def render(r: dict[str, Any]) -> tuple[str, bool]:
    """The report as text, and whether every budget item is met."""
    b = r["budget"]
    moves, ceiling, mem = r["moves"], r["ceiling"], r["memory"]
    ref = mem["reference_game"]
    lines = [f"rummy-referee benchmark — {r['clients']} clients, {r['seconds']:g} s per phase, "
             f"{r['cpus']} CPUs (clients and server share them)"]
    lines.append(server_line(r["server"]))
    lines.append("connections: " + ("one per seat of each game (moves of one game come on "
                                    "several connections, so on several workers)"
                                    if r.get("connection_per_seat") else
                                    "one per client (all seats of its games on it)"))
    floor = r.get("floor")
    kinds = "moves, ceiling and floor take turns" if floor else "moves and ceiling alternate"
    lines.append(f"load: {kinds} in {r['slot']:g} s slots; machine load "
                 f"average {r['load_before']:.1f} before, {r['load_after']:.1f} after "
                 "(other work on the machine slows every load alike)")
    lines.append("")
    lines.append("HTTP under load            per s    p50 ms   p95 ms   p99 ms   max ms  "
                 "errors")
    phases = [("moves", "moves (POST …/moves)", moves),
              ("ceiling", "ceiling (GET+SET)", ceiling)]
    if floor:
        phases.append(("floor", "floor (bare Flask)", floor))
    for _, label, phase in phases:
        lines.append(f"  {label:<22} {phase['per_second']:>7.0f}  {phase['p50_ms']:>8.2f} "
                     f"{phase['p95_ms']:>8.2f} {phase['p99_ms']:>8.2f} {phase['max_ms']:>8.1f}"
                     f"  {phase['errors']:>6}")
    lines.append(f"  ratio moves/ceiling: {r['ratio']:.2f}   (ceiling payload "
                 f"{ceiling['payload_bytes']} B = a stored mid-hand rummy51 state)")
    if floor:
        lines.append("  floor: a bare Flask route answering the same payload under the same "
                     "gunicorn settings, no Redis, none of the service's hooks (bench/floor.py)")
    for name, _, phase in phases:
        own = phase["client_p50s_ms"]
        if own:
            lines.append(f"  {name}: mean {phase['mean_ms']:.2f} ms (closed loop: {r['clients']} "
                         f"clients / {phase['per_second']:.0f} per s = "
                         f"{1e3 * r['clients'] / max(phase['per_second'], 1e-9):.2f} ms a "
                         f"cycle); each client's own p50 from {own[0]:.2f} to {own[-1]:.2f} ms"
                         + (f"; answered by the workers {_shares_text(phase['worker_shares'])}"
                            if name != "floor" and phase.get("worker_shares") else ""))
    lines.append("  " + needed_for_p99(r))
    within = "within" if ceiling["p99_ms"] <= b["p99_ms_max"] else "over"
    lines.append(f"  ceiling: p99 {ceiling['p99_ms']:.2f} ms, {within} the moves' "
                 f"{b['p99_ms_max']:g} ms budget (what reading and writing a state of this "
                 "size costs at this load, as every move does)")
    if all("cpu_ms" in phase for *_, phase in phases):
        groups = ("service", "floor", "redis", "drivers")
        lines.append("  CPU per counted request, ms (from /proc; a slot also holds the "
                     "requests it does not count)")
        lines.append("    " + " " * 22 + "".join(f"{g:>9}" for g in (*groups, "total")))
        for name, _, phase in phases:
            ms = phase["cpu_ms"]
            lines.append(f"    {name:<22}"
                         + "".join(f"{ms.get(g, 0.0):>9.3f}" for g in groups)
                         + f"{sum(ms.values()):>9.3f}")
        in_all, server_side = cpu_quotients(moves["cpu_ms"], ceiling["cpu_ms"])
        lines.append(f"  CPU of a ceiling call / CPU of a move: {in_all:.3f} in all, "
                     f"{server_side:.3f} for the server's side alone (service and Redis; the "
                     "load drivers share these CPUs here, not in production)")
        same, budget_all, budget_server = service_allowance(
            moves["cpu_ms"], ceiling["cpu_ms"], b["ratio_min"])
        spare = budget_all - ceiling["cpu_ms"].get("service", 0.0)
        lines.append(f"  a {b['ratio_min']:g} ratio leaves a move {budget_all:.3f} ms of "
                     f"service CPU ({spare:+.3f} ms beside a ceiling call's; "
                     f"{budget_server:.3f} ms on the server's side alone); a move costing the "
                     f"service what a ceiling call does would read {same:.3f} in all")
    lines.append(f"  moves: {moves['count']} applied, {moves['refused']} refused (422), "
                 f"{moves['hands_ended']} hands ended, {moves['games_finished']} games "
                 f"finished; other requests (create, GET /me, legal-moves): "
                 f"{moves['other_requests']}"
                 + (f", {moves['throttled']} of them throttled (429, retried after "
                    "Retry-After)" if moves.get("throttled") else ""))
    if moves.get("throttled_moves"):
        lines.append(_throttled_moves(moves))
    lines.append("  move mix: " + ", ".join(f"{k} {v}" for k, v in moves["move_types"].items()))
    if moves.get("by_type"):
        lines.append("  moves by type (a move ending the hand counts as hand_end), ms: "
                     + "; ".join(f"{kind} p50 {x['p50_ms']:.1f} p99 {x['p99_ms']:.1f}"
                                 for kind, x in moves["by_type"].items()))
    for sample in [x for *_, phase in phases for x in phase["samples"]]:
        lines.append(f"  ! {sample}")
    checks: list[tuple[str, bool]] = [
        (f"moves/s >= {b['ratio_min']} x ceiling", r["ratio"] >= b["ratio_min"]),
        (f"moves p99 <= {b['p99_ratio_max']:g} x ceiling p99",
         moves["p99_ms"] <= b["p99_ratio_max"] * ceiling["p99_ms"]),
        ("0 errors", sum(phase["errors"] for *_, phase in phases) <= b["errors_max"]),
    ]
    engine = r.get("engine")
    if engine is not None:
        lm = engine["legal_moves_14_cards_4_jokers"]
        cm = engine["check_meld_wilds"]
        sim = engine["simulated_hands"]
        lines.append("")
        lines.append("engine (in-process)")
        lines.append(f"  check_meld, melds with 2-4 wilds: p50 {cm['p50_us']:.0f} µs, "
                     f"p99 {cm['p99_us']:.0f} µs ({cm['calls_per_second']:.0f} calls/s)")
        lines.append(f"  legal_moves, 14 cards with 4 jokers: p50 {lm['p50_ms']:.2f} ms, "
                     f"p99 {lm['p99_ms']:.2f} ms, max {lm['max_ms']:.2f} ms "
                     f"({lm['moves_listed_mean']:.1f} moves listed on average)")
        for kind, st in lm["by_state"].items():
            lines.append(f"    {kind.replace('_', ' ')}: p50 {st['p50_ms']:.2f} ms, "
                         f"p99 {st['p99_ms']:.2f} ms")
        worst = engine.get("legal_moves_worst_hands", {})
        if worst:
            lines.append("  legal_moves, the worst hand of each variant (from cold):")
        for name, st in worst.items():
            lines.append(f"    {name.replace('_', ' ')}: p50 {st['p50_ms']:.2f} ms, "
                         f"p99 {st['p99_ms']:.2f} ms, max {st['max_ms']:.2f} ms "
                         f"({st['moves_listed_mean']:.1f} moves listed on average)")
            checks.append((f"legal_moves p99 <= {b['legal_moves_p99_ms_max']:g} ms, "
                           + name.replace("_", " "),
                           st["p99_ms"] <= b["legal_moves_p99_ms_max"]))
        lines.append(f"  simulated whole hands (random play): {sim['hands_per_second']:.1f} "
                     f"hands/s, {sim['moves_per_second']:.0f} moves/s")
        lines.append("    " + ", ".join(f"{v} {x['hands_per_second']:.1f}"
                                        for v, x in sim["by_variant"].items()))
        checks.append((f"legal_moves p99 <= {b['legal_moves_p99_ms_max']:g} ms",
                       lm["p99_ms"] <= b["legal_moves_p99_ms_max"]))
    if r.get("flat") is not None:
        from bench.flat import table_text

        lines.append("")
        lines.extend(table_text(r["flat"]))
        if r["flat"].get("plot"):
            lines.append(f"  plotted: {r['flat']['plot']}")
    lines.append("")
    lines.append("Redis memory (MEMORY USAGE)")
    lines.append(f"  4-player rummy51 game mid-hand: {ref['game_bytes']} B for the game "
                 f"(state {ref['state_bytes']} B stored); its move log "
                 f"{ref['log_bytes']} B for {ref['log_entries']} moves")
    lines.append(f"  per logged move: {ref['bytes_per_logged_move']:.0f} B "
                 f"(all games of the run: {mem['all_games']['bytes_per_logged_move']:.0f} B; "
                 f"{mem['all_games']['bytes_per_game']:.0f} B per game over "
                 f"{mem['all_games']['games']} games of every variant)")
    checks.append((f"<= {b['bytes_per_game_max']} B per 4-player game mid-hand",
                   ref["game_bytes"] <= b["bytes_per_game_max"]))
    lines.append("")
    lines.append("budget")
    for text, ok in checks:
        lines.append(f"  [{_mark(ok)}] {text}")
    all_ok = all(ok for _, ok in checks)
    lines.append(f"  => {'budget met' if all_ok else 'budget NOT met'}")
    return "\n".join(lines), all_ok


def render_rates(r: dict[str, Any]) -> tuple[str, bool]:
    """The open-loop sweep (``--rates``) as text, and whether any rate offered met the moves'
    p99 budget with no errors."""
    budget = r["budget"]["p99_ms_max"]
    lines = [f"rummy-referee benchmark, open loop — {r['clients']} clients, {r['seconds']:g} s "
             f"per rate, {r['cpus']} CPUs (clients and server share them)",
             server_line(r["server"]),
             "load: moves only, sent at the times of a Poisson process (the rate spread over "
             "the clients); a move's latency runs from the time it was due, so a server that "
             "falls behind shows it as latency",
             "",
             "offered/s  moves/s   p50 ms   p95 ms   p99 ms   max ms  errors  CPUs busy"]
    met = []
    for row in r["rates"]:
        busy = row.get("cpus_busy")
        lines.append(f"{row['offered']:>9.0f} {row['per_second']:>8.0f} {row['p50_ms']:>8.2f} "
                     f"{row['p95_ms']:>8.2f} {row['p99_ms']:>8.2f} {row['max_ms']:>8.1f} "
                     f"{row['errors']:>7}  "
                     + (f"{busy:>9.2f}" if busy is not None else f"{'':>9}"))
        if row["p99_ms"] <= budget and row["errors"] == 0 and row["count"]:
            met.append(row["offered"])
        if row.get("worker_shares"):
            lines.append(f"  answered by the workers {_shares_text(row['worker_shares'])}")
        if row.get("throttled"):
            lines.append(f"  ({row['throttled']} requests other than moves throttled: 429, "
                         "retried after Retry-After)")
        if row.get("throttled_moves"):
            lines.append(_throttled_moves(row))
        for sample in row["samples"]:
            lines.append(f"  ! {sample}")
    lines.append("")
    if met:
        lines.append(f"the moves' p99 was within {budget:g} ms, with no errors, at "
                     + ", ".join(f"{x:g}" for x in met) + " moves/s offered; the highest: "
                     f"{max(met):g}/s")
    else:
        lines.append(f"the moves' p99 was over {budget:g} ms (or there were errors) at every "
                     "rate offered")
    lines.append("(CPUs busy: the CPU time of the service, Redis and the load drivers over "
                 "the measured seconds)")
    return "\n".join(lines), bool(met)
