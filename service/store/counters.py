"""Window counters in Redis (what rate limits count with); they know nothing of rummy.

A counter is one Redis string: ``INCR`` it, and the first hit of a window gives it the
window's length as expiry (a fixed window that starts at its first hit). One script call
counts every window of a caller in one round trip and returns each count with the time left
in its window. :meth:`GameStore.load` can count the same way in the round trip that loads a
game, when the counters carry the game's id as hash tag (:meth:`GameStore.counter`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .client import StoreClient
from .keys import validate_game_id
from .lua import StoreScript, run

__all__ = ["COUNT", "HIT", "Count", "Counters", "Window", "counts_of"]

COUNT = """
-- count(first, shift, out): one hit on each counter KEYS[i], i >= first, whose window is
-- ARGV[i + shift] milliseconds (its expiry, set on a window's first hit); appends count
-- and milliseconds left of each to out. Its first write is an INCR: refused when Redis is
-- out of memory (see lua.py), as a script's first write must be.
local function count(first, shift, out)
  for i = first, #KEYS do
    local n = redis.call('INCR', KEYS[i])
    local left = -1
    if n > 1 then
      left = redis.call('PTTL', KEYS[i])
    end
    if left < 0 then
      redis.call('PEXPIRE', KEYS[i], ARGV[i + shift])
      left = tonumber(ARGV[i + shift])
    end
    out[#out + 1] = n
    out[#out + 1] = left
  end
  return out
end
"""

HIT = COUNT + """
-- KEYS counters, ARGV their windows in milliseconds. Returns {count 1, left 1, count 2, …}.
return count(1, 0, {})
"""


@dataclass(frozen=True, slots=True)
class Window:
    """A counter and the length of its window."""

    key: str
    millis: int


@dataclass(frozen=True, slots=True)
class Count:
    """A counter's count in its current window and the milliseconds left in that window."""

    count: int
    millis_left: int


def counts_of(replies: Sequence[Any]) -> list[Count]:
    """The counts of a reply ``{count, millis left, …}``."""
    return [Count(int(replies[i]), max(0, int(replies[i + 1])))
            for i in range(0, len(replies) - 1, 2)]


class Counters:
    """Window counters on one client, under ``{namespace}:{{tag}}:…`` keys."""

    def __init__(self, client: StoreClient, namespace: str, *, flags: bool = True) -> None:
        self._client = client
        self._hit = StoreScript(client, HIT, flags=flags)
        self._namespace = namespace

    def key(self, tag: str, name: str) -> str:
        """A counter key; the counters of one ``tag`` share a Redis Cluster slot."""
        validate_game_id(tag)  # non-empty, no braces: a hash tag
        return f"{self._namespace}:{{{tag}}}:rl:{name}"

    def hit(self, windows: Sequence[Window]) -> list[Count]:
        """Count one hit on every window (one round trip; all keys in one slot)."""
        if not windows:
            return []
        replies: Any = run(self._client, self._hit, [w.key for w in windows],
                           [w.millis for w in windows])
        return counts_of(replies)
