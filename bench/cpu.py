"""CPU time of the benchmark's processes, by kind of load (Linux ``/proc``).

The measured slots take turns (moves, ceiling, floor, moves, …), so a sampler reads the
CPU time (user + system) of each group of processes at every slot boundary and credits
what each group spent during a slot to that slot's kind of load. Divided by the requests
the load counted, that is the CPU a request costs each group: the service's gunicorn
(master and workers), the floor's, redis-server and the load drivers. A slot also holds
the requests that were not counted (those that straddle its boundaries, and for moves the
game creations and ``GET …/me`` that playing needs), so the figures are slight upper
bounds.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def available() -> bool:
    return Path("/proc/self/stat").exists()


def process_table() -> dict[int, tuple[int, float]]:
    """Every process now: pid → (parent pid, CPU seconds so far)."""
    table: dict[int, tuple[int, float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        table[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICKS)
    return table


def tree_seconds(roots: Sequence[int], table: Mapping[int, tuple[int, float]]) -> float:
    """CPU seconds of ``roots`` and every process below them."""
    below: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        below.setdefault(ppid, []).append(pid)
    total, seen, frontier = 0.0, set(), list(roots)
    while frontier:
        pid = frontier.pop()
        if pid in seen or pid not in table:
            continue
        seen.add(pid)
        total += table[pid][1]
        frontier.extend(below.get(pid, ()))
    return total


class SlotSampler(threading.Thread):
    """Samples the groups' CPU at each boundary of the measured slots (from ``start``,
    ``slots`` of ``slot`` seconds, of ``kinds`` in turn)."""

    def __init__(self, groups: Mapping[str, Sequence[int]], start: float, slot: float,
                 slots: int, kinds: Sequence[str]) -> None:
        super().__init__(name="cpu-sampler", daemon=True)
        self.groups = dict(groups)
        self.start_at, self.slot, self.slots, self.kinds = start, slot, slots, tuple(kinds)
        self.seconds: dict[str, dict[str, float]] = {
            kind: dict.fromkeys(self.groups, 0.0) for kind in self.kinds}
        """Kind of load → group → CPU seconds spent in that kind's slots."""

    def _sample(self) -> dict[str, float]:
        table = process_table()
        return {name: tree_seconds(pids, table) for name, pids in self.groups.items()}

    def run(self) -> None:
        previous: dict[str, float] | None = None
        for index in range(self.slots + 1):
            time.sleep(max(0.0, self.start_at + index * self.slot - time.time()))
            now = self._sample()
            if previous is not None:
                kind = self.kinds[(index - 1) % len(self.kinds)]
                for name in self.groups:
                    self.seconds[kind][name] += max(0.0, now[name] - previous[name])
            previous = now


def per_request(seconds: Mapping[str, Mapping[str, float]], counts: Mapping[str, int]
                ) -> dict[str, dict[str, float]]:
    """Milliseconds of CPU per counted request, by kind of load and group."""
    return {kind: {name: 1e3 * spent / counts[kind] for name, spent in groups.items()}
            for kind, groups in seconds.items() if counts.get(kind)}
