"""The game store: opaque state bytes, a version and an append-only log per game, in Redis.

Optimistic concurrency: ``load`` returns the version, ``commit`` writes only if the game is
still at ``expected_version`` (one EVALSHA, atomic). The store knows nothing of rummy.
"""

from __future__ import annotations

import re
import time
import zlib
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

from redis import exceptions as rx
from redis.cluster import RedisCluster

from .client import StoreClient
from .counters import Count, Counters, Window, counts_of
from .errors import (
    GameExists,
    GameNotFound,
    StoreCorrupted,
    StoreError,
    StoreFull,
    StoreUnavailable,
)
from .keys import (
    DEFAULT_NAMESPACE,
    GameKeys,
    alias_key,
    game_keys,
    moved_channel,
    ticket_key,
    validate_game_id,
)
from .records import (
    Cached,
    IdempotencyRecord,
    Loaded,
    decode_cached,
    decode_idempotency,
    encode_cached,
    encode_idempotency,
)
from .scripts import Scripts

__all__ = ["DEFAULT_IDEMPOTENCY_TTL_SECONDS", "DEFAULT_TTL_SECONDS", "GameStore"]

DEFAULT_KEEP_RECORDS = 256
"""Idempotency records a game keeps (its newest); a retry comes seconds after, not hundreds
of moves later."""
DEFAULT_TTL_SECONDS = 7 * 24 * 3600
DEFAULT_IDEMPOTENCY_TTL_SECONDS = 24 * 3600
"""How long an idempotency record counts (a day, as payment APIs keep their keys)."""
_MAX_INDEX = 2**62  # far beyond any list, well inside Redis' 64-bit indexes
ARCHIVE_CHUNK = 500
"""The most live records one archiving moves (the oldest): more than a hand takes, so that
a hand's end archives its hand, and few enough that the move ending a hand of a game whose
live log grew long (stored before the archive existed, or whose archivings failed) reads
and compresses this many and not all of them (10,000: about 11 ms); each hand's end takes
this many more."""

# Errors after which Redis did not (or may not have) served the command: the store is
# unavailable. ConnectionError covers BusyLoadingError (-LOADING), MaxConnectionsError and
# AuthenticationError; TimeoutError a lost reply.
_UNAVAILABLE: tuple[type[Exception], ...] = (
    rx.ConnectionError,
    rx.TimeoutError,
    rx.ReadOnlyError,  # -READONLY: a replica after failover
    rx.OutOfMemoryError,  # -OOM
    rx.ClusterDownError,  # -CLUSTERDOWN, -MASTERDOWN
    rx.TryAgainError,  # -TRYAGAIN
    # Redis Cluster, raised by the client: no node reachable to read the slot map from, a
    # slot not covered (SlotNotCoveredError), too many redirections
    rx.RedisClusterException,
)
# Error codes (first word of the error reply) meaning the same. Redis < 7 wraps errors raised
# inside a script: "Error running script (call to f_...): @user_script:29: -READONLY You
# can't write...", which redis-py turns into a plain ResponseError, so the inner code is
# looked for too.
_UNAVAILABLE_CODES = frozenset(
    {
        "BUSY", "CLUSTERDOWN", "LOADING", "MASTERDOWN", "MISCONF", "NOREPLICAS", "OOM",
        "READONLY", "TRYAGAIN",
    }
)  # fmt: skip
_SCRIPT_ERROR_CODE = re.compile(r"^Error running script .*?: -([A-Z]+) ")


def _error_code(exc: rx.ResponseError) -> str:
    message = str(exc)
    match = _SCRIPT_ERROR_CODE.match(message)
    if match is not None:
        return match.group(1)
    return message.split(" ", 1)[0]


def _store_error(operation: str, exc: BaseException) -> StoreError | None:
    """The store's error for a redis-py one raised by ``operation``; None for any other."""
    if isinstance(exc, rx.OutOfMemoryError):  # -OOM (Redis 7 and plain commands)
        return StoreFull(f"{operation}: {exc}")
    if isinstance(exc, _UNAVAILABLE):
        return StoreUnavailable(f"{operation}: {type(exc).__name__}: {exc}")
    if isinstance(exc, rx.ResponseError):
        code = _error_code(exc)
        if code == "OOM":  # Redis 6.2 wraps a script's -OOM in a plain error
            return StoreFull(f"{operation}: {exc}")
        if code in _UNAVAILABLE_CODES:
            return StoreUnavailable(f"{operation}: {exc}")
        return StoreError(f"{operation}: {exc}")
    if isinstance(exc, rx.RedisError):
        return StoreError(f"{operation}: {type(exc).__name__}: {exc}")
    return None


class _translated:
    """Turn redis-py errors into store errors, keeping the original as ``__cause__``:
    ``with _translated("load", game_id):`` (the error names the operation and the
    subject's repr). Every store call enters one, so it is a class, not a generator-based
    ``contextmanager``, and makes its message only when there is an error."""

    __slots__ = ("_operation", "_subject")

    def __init__(self, operation: str, subject: str | None = None) -> None:
        self._operation = operation
        self._subject = subject

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if exc is None:
            return
        operation = (self._operation if self._subject is None
                     else f"{self._operation} {self._subject!r}")
        error = _store_error(operation, exc)
        if error is not None:
            raise error from exc


_LOG_ATTEMPTS = 4
_MAX_ARCHIVED = 4096
"""Reads of a log before giving up when it is archived under each (a hand ends each time)."""


def _unarchived(game_id: str, chunks: Sequence[Any], after: int, count: int
                ) -> list[tuple[int, bytes]]:
    """The ``count`` archived records after version ``after``, from the archive's chunks."""
    out: list[tuple[int, bytes]] = []
    for raw in chunks:
        chunk = bytes(raw)
        try:
            first_text, count_text, payload = chunk.split(b":", 2)
            first, size = int(first_text), int(count_text)
            if first + size - 1 <= after or len(out) >= count:
                continue
            records = zlib.decompress(payload).split(b"\n")
        except (ValueError, zlib.error) as exc:
            raise StoreCorrupted(f"game {game_id!r}: bad archive chunk") from exc
        if len(records) != size:
            raise StoreCorrupted(f"game {game_id!r}: archive chunk of {len(records)} records "
                                 f"says {size}")
        for i, record in enumerate(records):
            version = first + i
            if version > after and len(out) < count:
                out.append((version, record))
    if len(out) != count or any(v != after + 1 + i for i, (v, _) in enumerate(out)):
        raise StoreCorrupted(f"game {game_id!r}: the archive misses versions after {after}")
    return out


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _decode_record(game_id: str, value: Any) -> IdempotencyRecord | None:
    """The record stored, None if there is none or it has expired."""
    if value is None:
        return None
    try:
        record = decode_idempotency(bytes(value))
    except ValueError as exc:
        raise StoreCorrupted(f"game {game_id!r}: bad idempotency record") from exc
    return None if record.expired(_now_ms()) else record


def _over_maxmemory(info: dict[str, Any]) -> bool:
    """Whether ``INFO memory`` shows a Redis that refuses writes: over its ``maxmemory``
    (as Redis counts it: without its replication and AOF buffers) with nothing it may evict
    (policy ``noeviction``)."""
    limit = int(info.get("maxmemory", 0))
    if not limit or info.get("maxmemory_policy", "noeviction") != "noeviction":
        return False
    used = int(info.get("used_memory", 0)) - int(info.get("mem_not_counted_for_evict", 0))
    return used > limit


class GameStore:
    """Games in Redis: one HASH (version, state, versions archived, idempotency records),
    one LIST (the live log), one LIST of compressed chunks of the log archived
    (:meth:`archive`), one LIST bounding the idempotency records (the newest
    ``keep_records`` are kept, each for ``idempotency_ttl_seconds``).

    Every key gets ``ttl_seconds``; each commit refreshes it on all keys of the game. The
    client must return bytes (``decode_responses=False``); use :func:`make_client` (or
    :func:`make_store_client`, which also builds Cluster and Sentinel clients), which never
    resends a timed-out write. On a Redis Cluster every command and script of a game touches
    keys of one hash slot (the game id is the hash tag), so the cluster serves it unchanged.

    A Redis out of memory refuses every write whole (StoreFull, see :mod:`.lua`;
    ``script_flags=False`` sends the scripts without their flags line, as to Redis < 7) and
    still serves reads: a load that would count its windows is then served uncounted.
    """

    def __init__(
        self,
        client: StoreClient,
        *,
        ttl_seconds: int = DEFAULT_TTL_SECONDS,
        namespace: str = DEFAULT_NAMESPACE,
        keep_records: int = DEFAULT_KEEP_RECORDS,
        idempotency_ttl_seconds: int = DEFAULT_IDEMPOTENCY_TTL_SECONDS,
        script_flags: bool = True,
    ) -> None:
        for name, value in (("ttl_seconds", ttl_seconds),
                            ("idempotency_ttl_seconds", idempotency_ttl_seconds),
                            ("keep_records", keep_records)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, not {value!r}")
        if client.get_encoder().decode_responses:
            raise ValueError("the store needs a client with decode_responses=False")
        game_keys("x", namespace)  # validates the namespace
        self._client = client
        self._ttl = ttl_seconds
        self._keep = keep_records
        self._idem_ttl_ms = idempotency_ttl_seconds * 1000
        self._namespace = namespace
        self._scripts = Scripts(client, flags=script_flags)
        self.clock_offset_ms = 0
        """Added to every time the store's clock gives (tests move time with it; 0 in
        service)."""
        self._counters = Counters(client, namespace, flags=script_flags)
        self._archived: dict[str, int] = {}
        """Games whose log this process read with records archived: how many (a guess for
        the next read, :meth:`log`)."""

    @property
    def client(self) -> StoreClient:
        return self._client

    def counter(self, tag: str, name: str) -> str:
        """A window counter key; the counters of one ``tag`` share a Redis Cluster slot, and
        with a game id as ``tag`` they share the game's, so :meth:`load` can count them."""
        return self._counters.key(tag, name)

    def hit(self, windows: Sequence[Window]) -> list[Count]:
        """Count a hit on each window counter (one round trip; all in one slot)."""
        with _translated("count"):
            return self._counters.hit(windows)

    @property
    def ttl_seconds(self) -> int:
        return self._ttl

    @property
    def idempotency_ttl_seconds(self) -> int:
        return self._idem_ttl_ms // 1000

    def keys(self, game_id: str) -> GameKeys:
        """The Redis key names of a game (for tests and operations)."""
        return game_keys(game_id, self._namespace)

    def create(self, game_id: str, state: bytes) -> None:
        """Create the game at version 0 with an empty log; GameExists if the id is taken."""
        keys = self.keys(game_id)
        with _translated("create", game_id):
            created = self._scripts.create(keys, bytes(state), self._ttl)
        if not created:
            raise GameExists(game_id)

    def load(self, game_id: str, idempotency_scope: str | None = None,
             windows: Sequence[Window] = (), held: int | None = None,
             timed: bool = False) -> Loaded:
        """Version, state and (if a scope is given) its idempotency record; one command.

        ``windows`` (counters from :meth:`counter` tagged with this game's id) are counted
        in the same round trip, before the game is read, whether or not it exists
        (``Loaded.counts``; GameNotFound carries them as ``counts``). ``held``: the version
        whose state the caller holds already; if the game is still at it, ``Loaded.state``
        is None. While Redis is out of memory (it refuses the counting script) the game is
        read without counting: ``counts`` is empty and the state is always sent. The load
        script also reads the store's clock (``Loaded.now_ms``); ``timed`` asks for it, and
        so for the script, when nothing else does."""
        keys = self.keys(game_id)
        field = keys.idem_field(idempotency_scope) if idempotency_scope is not None else None
        counts: tuple[Count, ...] = ()
        replies: list[Any] | None = None
        now: int | None = None
        if windows or held is not None or timed:
            try:
                with _translated("load", game_id):
                    replies = self._scripts.load(keys, field, held, windows)
            except StoreFull:
                replies = None
            else:
                counts = tuple(counts_of(replies[3:-2]))
                now = self._time_ms(replies[-2], replies[-1])
        if replies is None:
            with _translated("load", game_id):
                read: list[Any] = self._client.hmget(keys.game, ["v", "s", field] if field
                                                     else ["v", "s"])
            replies = read
        version, state = replies[0], replies[1]
        if version is None or (state is None and (held is None or int(version) != held)):
            raise GameNotFound(game_id, counts)
        record = _decode_record(game_id, replies[2]) if field is not None else None
        return Loaded(version=int(version), state=None if state is None else bytes(state),
                      idempotency=record, counts=counts, now_ms=now)

    def _time_ms(self, seconds: Any, micros: Any) -> int:
        return int(seconds) * 1000 + int(micros) // 1000 + self.clock_offset_ms

    def now_ms(self, game_id: str) -> int:
        """The store's clock (Unix time, ms): Redis ``TIME`` of the server that holds
        ``game_id`` (on a Redis Cluster, the node of its slot), plus
        :attr:`clock_offset_ms`. One round trip."""
        key = self.keys(game_id).game
        with _translated("time", game_id):
            if isinstance(self._client, RedisCluster):
                node = self._client.get_node_from_key(key)  # type: ignore[no-untyped-call]
                reply: Any = self._client.execute_command(  # type: ignore[no-untyped-call]
                    "TIME", target_nodes=node)
            else:
                reply = self._client.time()
        seconds, micros = reply
        return self._time_ms(seconds, micros)

    def commit(
        self,
        game_id: str,
        *,
        expected_version: int,
        state: bytes,
        log_record: bytes,
        idempotency: tuple[str, str, bytes] | None = None,
        windows: Sequence[Window] = (),
        limits: Sequence[int] = (),
        counted: Callable[[tuple[Count, ...]], None] | None = None,
        conflict_state: bool = False,
    ) -> int:
        """Write state as version expected_version + 1 and append log_record; one EVALSHA.

        ``idempotency`` is (scope, fingerprint, response): if the scope already has a record
        (one that has not expired), IdempotentReplay(record) is raised and nothing is
        written; else the record is stored with the commit, to count for
        ``idempotency_ttl_seconds``. StoreFull (nothing written) while Redis is out of
        memory. VersionConflict(current) if the game is at another version (with
        its state as ``state`` when ``conflict_state``), GameNotFound if it vanished,
        StoreUnavailable if the outcome is unknown. Returns the new version.

        ``windows`` (counters from :meth:`counter` tagged with this game's id) are counted
        first in the same round trip, whatever the outcome, and their counts are handed to
        ``counted`` before anything else is told; when a count is over its entry in
        ``limits`` (the most hits its window allows) nothing is written (OverLimit).
        """
        if isinstance(expected_version, bool) or not isinstance(expected_version, int):
            raise TypeError("expected_version must be an int")
        if expected_version < 0:
            raise ValueError("expected_version must be >= 0")
        keys = self.keys(game_id)
        encoded: tuple[str, bytes] | None = None
        now = _now_ms()
        if idempotency is not None:
            scope, fingerprint, response = idempotency
            keys.idem_field(scope)  # validates the scope
            encoded = (scope, encode_idempotency(fingerprint, response,
                                                 now + self._idem_ttl_ms))
        with _translated("commit", game_id):
            return self._scripts.commit(
                game_id,
                keys,
                expected_version=expected_version,
                state=bytes(state),
                log_record=bytes(log_record),
                ttl=self._ttl,
                idempotency=encoded,
                keep=self._keep,
                now_ms=now,
                windows=windows,
                limits=limits,
                conflict_state=conflict_state,
                counted=counted,
            )

    def moved_channel(self, game_id: str) -> str:
        """The channel every commit of the game publishes ``<game id> <version> <log
        record>`` on."""
        return moved_channel(game_id, self._namespace)

    def keep_ticket(self, ticket: str, value: bytes, seconds: int) -> None:
        """Keep ``value`` under stream ticket ``ticket`` for ``seconds``."""
        with _translated("ticket"):
            self._client.set(ticket_key(ticket, self._namespace), value, ex=seconds)

    def take_ticket(self, ticket: str) -> bytes | None:
        """What ticket ``ticket`` stands for, removed (one use: ``GETDEL``), or None."""
        with _translated("ticket"):
            value: Any = self._client.getdel(ticket_key(ticket, self._namespace))
        return None if value is None else bytes(value)

    def alias(self, name: str, game_id: str) -> bool:
        """Let ``name`` stand for ``game_id`` (for the store's ``ttl_seconds``) unless it
        stands for a game already: returns whether it was set (one ``SET NX``)."""
        validate_game_id(game_id)
        key = alias_key(name, self._namespace)
        with _translated("alias", name):
            return bool(self._client.set(key, game_id.encode(), nx=True, ex=self._ttl))

    def resolve(self, name: str) -> str | None:
        """The game id ``name`` stands for (:meth:`alias`), None if none."""
        key = alias_key(name, self._namespace)
        with _translated("resolve", name):
            value: Any = self._client.get(key)
        return None if value is None else bytes(value).decode()

    def idempotency(self, game_id: str, scope: str) -> IdempotencyRecord | None:
        """The idempotency record of a scope, None if there is none (or it has expired)."""
        keys = self.keys(game_id)
        with _translated("idempotency", game_id):
            value: Any = self._client.hget(keys.game, keys.idem_field(scope))
        return _decode_record(game_id, value)

    def log(
        self, game_id: str, after: int = 0, limit: int | None = None
    ) -> list[tuple[int, bytes]]:
        """Log records of the versions > after (at most limit), as (version, record), in order,
        archived (:meth:`archive`) or live alike.

        GameNotFound if the game does not exist. One round trip for a game with nothing
        archived (and for records past its archive); one more when it has archived records.
        """
        if after < 0:
            raise ValueError("after must be >= 0")
        if limit is not None and limit < 0:
            raise ValueError("limit must be >= 0 or None")
        keys = self.keys(game_id)
        if limit == 0:  # LRANGE cannot express "nothing"; still report a missing game
            with _translated("log", game_id):
                if not self._client.exists(keys.game):
                    raise GameNotFound(game_id)
            return []
        # a guess (what this process last read of the game), told by the first read; read
        # again if it was wrong
        archived = self._archived.get(game_id, 0)
        for _attempt in range(_LOG_ATTEMPTS):
            got = self._log_read(game_id, keys, after, limit, archived)
            if got[0] == archived:
                return got[1]
            archived = got[0]
            if len(self._archived) >= _MAX_ARCHIVED:
                self._archived.clear()
            self._archived[game_id] = archived
        raise StoreUnavailable(f"log {game_id!r}: archived while read, {_LOG_ATTEMPTS} times")

    def _log_read(self, game_id: str, keys: GameKeys, after: int, limit: int | None,
                  archived: int) -> tuple[int, list[tuple[int, bytes]]]:
        """One round trip of :meth:`log`, ``archived`` versions assumed archived: the
        versions archived as read, and the records (right only if the two agree)."""
        # LRANGE takes 64-bit indexes: beyond any log's length, clamp (the answer is empty)
        start = min(max(after - archived, 0), _MAX_INDEX)
        stop = -1 if limit is None else min(after + limit - 1 - archived, _MAX_INDEX)
        chunks = after < archived
        with _translated("log", game_id):
            pipe = self._client.pipeline(transaction=False)
            pipe.exists(keys.game)
            pipe.hget(keys.game, "o")
            if stop >= 0 or limit is None:
                pipe.lrange(keys.log, start, stop)
            if chunks:
                pipe.lrange(keys.archive, 0, -1)
            replies = pipe.execute()
        if not replies[0]:
            raise GameNotFound(game_id)
        read = int(replies[1] or 0)
        live = replies[2] if stop >= 0 or limit is None else []
        out: list[tuple[int, bytes]] = []
        if chunks:
            wanted = archived - after if limit is None else min(limit, archived - after)
            out = _unarchived(game_id, replies[-1], after, wanted)
        first = max(after, archived) + 1
        out += [(first + i, bytes(record)) for i, record in enumerate(live)]
        return read, out

    def archive(self, game_id: str) -> int:
        """Move the game's live log, its oldest :data:`ARCHIVE_CHUNK` records at most, into
        its archive as one compressed chunk (the referee does it when a hand ends: keys.py);
        one round trip to read, one to write. Returns the records archived (0: none live, or
        the game changed meanwhile and nothing was written; its next archiving takes them).
        Records read by :meth:`log` as before."""
        keys = self.keys(game_id)
        with _translated("archive", game_id):
            pipe = self._client.pipeline(transaction=False)
            pipe.hget(keys.game, "o")
            pipe.lrange(keys.log, 0, ARCHIVE_CHUNK - 1)
            archived_raw, records = pipe.execute()
        archived = int(archived_raw or 0)
        if not records:
            return 0
        payload = zlib.compress(b"\n".join(bytes(r) for r in records), 6)
        chunk = f"{archived + 1}:{len(records)}:".encode() + payload
        with _translated("archive", game_id):
            moved = self._scripts.archive(keys, archived, len(records), chunk)
        return len(records) if moved else 0

    def cached(self, game_id: str, name: str) -> Cached:
        """The game's version and the value cached under ``name`` for that version (None
        when there is none); one round trip. GameNotFound if the game does not exist."""
        keys = self.keys(game_id)
        key = keys.cached(name)
        with _translated("cached", game_id):
            pipe = self._client.pipeline(transaction=False)
            pipe.hget(keys.game, "v")
            pipe.get(key)
            version, stored = pipe.execute()
        if version is None:
            raise GameNotFound(game_id)
        return Cached(int(version), decode_cached(int(version), stored))

    def cache(self, game_id: str, name: str, version: int, value: bytes) -> bool:
        """Cache ``value`` under ``name`` as worked out from the game at ``version``, with
        the game's own expiry (it never outlives the game), replacing what was cached
        before; one script call. Nothing is written when the game is no longer at
        ``version`` (or is gone): returns whether it was kept."""
        keys = self.keys(game_id)
        with _translated("cache", game_id):
            return self._scripts.cache(keys, keys.cached(name), version,
                                       encode_cached(version, value))

    def refuses_writes(self) -> bool:
        """Whether Redis is out of memory: over its ``maxmemory`` with the policy
        ``noeviction`` (on a cluster: any primary), so that it refuses every write of the
        store (StoreFull) while it serves reads. One ``INFO memory``; StoreUnavailable if
        Redis cannot be asked."""
        with _translated("info memory"):
            if isinstance(self._client, RedisCluster):
                reply: Any = self._client.info("memory", target_nodes=RedisCluster.PRIMARIES)
            else:
                reply = self._client.info("memory")
        infos = [reply] if "used_memory" in reply else list(reply.values())
        return any(_over_maxmemory(info) for info in infos)

    def ping(self) -> bool:
        """True if Redis answers, False if it cannot be reached (never raises for that)."""
        try:
            with _translated("ping"):
                if isinstance(self._client, RedisCluster):  # every primary
                    return bool(self._client.ping(target_nodes=RedisCluster.PRIMARIES))
                return bool(self._client.ping())
        except StoreUnavailable:
            return False
