"""Errors of the game store."""

from __future__ import annotations

from .counters import Count
from .records import IdempotencyRecord

__all__ = [
    "GameExists",
    "GameNotFound",
    "IdempotentReplay",
    "OverLimit",
    "StoreCorrupted",
    "StoreError",
    "StoreFull",
    "StoreUnavailable",
    "VersionConflict",
]


class StoreError(Exception):
    """Base class of all store errors."""


class StoreUnavailable(StoreError):
    """Redis could not be reached, refused service (loading, read-only, OOM...) or timed out.

    For a write the outcome is unknown: the command may or may not have been applied. The
    client never resends it by itself; reload and look at the version (or the idempotency
    record) to find out. The redis-py exception is kept as ``__cause__``.
    """


class StoreFull(StoreUnavailable):
    """Redis is out of memory (``maxmemory`` reached, policy ``noeviction``) and refused the
    write: nothing of it was written (every script of the store is refused whole, see
    :mod:`service.store.lua`). Reads are still served."""


class StoreCorrupted(StoreError):
    """The stored data breaks an invariant (e.g. log length != version)."""


class GameNotFound(StoreError):
    def __init__(self, game_id: str, counts: tuple[Count, ...] = ()) -> None:
        super().__init__(f"game {game_id!r} not found")
        self.game_id = game_id
        self.counts = counts
        """The window counts of a load that counted (``GameStore.load(windows=…)``)."""


class GameExists(StoreError):
    def __init__(self, game_id: str) -> None:
        super().__init__(f"game {game_id!r} already exists")
        self.game_id = game_id


class VersionConflict(StoreError):
    """The game is no longer at the expected version; ``current`` is its version now, and
    ``state`` its state when the commit asked for it (``conflict_state=True``)."""

    def __init__(self, current: int, state: bytes | None = None) -> None:
        super().__init__(f"version conflict: the game is at version {current}")
        self.current = current
        self.state = state


class OverLimit(StoreError):
    """A commit's window counts went over their limits: nothing was written."""

    def __init__(self, counts: tuple[Count, ...]) -> None:
        super().__init__("over a window limit; nothing written")
        self.counts = counts


class IdempotentReplay(StoreError):
    """A request with this idempotency scope was already committed; nothing was written."""

    def __init__(self, record: IdempotencyRecord) -> None:
        super().__init__("request already committed (idempotent replay)")
        self.record = record
