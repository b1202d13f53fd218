"""The Redis store of games: opaque state bytes, version and log per game.

It knows nothing of rummy. See :class:`GameStore` and :func:`make_client`.
"""

from .client import (
    StoreClient,
    make_client,
    make_cluster_client,
    make_sentinel_client,
    make_store_client,
)
from .counters import Count, Window
from .errors import (
    GameExists,
    GameNotFound,
    IdempotentReplay,
    OverLimit,
    StoreCorrupted,
    StoreError,
    StoreFull,
    StoreUnavailable,
    VersionConflict,
)
from .keys import DEFAULT_NAMESPACE, GameKeys, game_keys
from .records import Cached, IdempotencyRecord, Loaded
from .redis_store import (
    DEFAULT_IDEMPOTENCY_TTL_SECONDS,
    DEFAULT_KEEP_RECORDS,
    DEFAULT_TTL_SECONDS,
    GameStore,
)

__all__ = [
    "DEFAULT_IDEMPOTENCY_TTL_SECONDS",
    "DEFAULT_KEEP_RECORDS",
    "DEFAULT_NAMESPACE",
    "DEFAULT_TTL_SECONDS",
    "Cached",
    "Count",
    "GameExists",
    "GameKeys",
    "GameNotFound",
    "GameStore",
    "IdempotencyRecord",
    "IdempotentReplay",
    "Loaded",
    "OverLimit",
    "StoreClient",
    "StoreCorrupted",
    "StoreError",
    "StoreFull",
    "StoreUnavailable",
    "VersionConflict",
    "Window",
    "game_keys",
    "make_client",
    "make_cluster_client",
    "make_sentinel_client",
    "make_store_client",
]
