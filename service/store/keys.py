"""Redis key names of one game.

Every key of a game carries the game id as hash tag (``{game_id}``), so all keys of a game map
to one Redis Cluster slot and a Lua script may touch them together.

``{ns}:{{game_id}}:game``      HASH  ``v`` = version (int), ``s`` = state (bytes),
                              ``i:<scope>`` = the idempotency record of a request scope
``{ns}:{{game_id}}:log``       LIST  the live log: entry i (0-based) = log record of version
                              o + i + 1, ``o`` (the game hash's field, 0 when absent) the
                              versions archived
``{ns}:{{game_id}}:archive``   LIST  the archived log: one chunk per archiving (a finished
                              hand; 500 records at most), oldest first: ``<first
                              version>:<count>:`` and the chunk's records,
                              newline-separated, compressed with zlib
``{ns}:{{game_id}}:idem``      LIST  the scopes with a record, newest first (bounds them)
``{ns}:{{game_id}}:cache:<name>``  STRING  a value worked out from the game at one
                              version (``<version>:<value>``), expiring with the game
``{ns}:alias:<name>``          STRING  the game id a name (a join code) stands for
``{ns}:ticket:<ticket>``       STRING  what a stream ticket stands for (one use, 60 s)
``{ns}:{{game_id}}:moved``     pub/sub channel: ``<game id> <version> <log record>`` at
                              every commit of the game
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DEFAULT_NAMESPACE", "GameKeys", "alias_key", "game_keys", "moved_channel",
           "ticket_key", "validate_game_id"]

DEFAULT_NAMESPACE = "rummy"
_GLOB_SPECIAL = frozenset("*?[]\\")
_CACHE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
_ALIAS = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def validate_game_id(game_id: str) -> None:
    """A game id must be non-empty and free of braces (it is the hash tag)."""
    if not isinstance(game_id, str) or not game_id:
        raise ValueError("game id must be a non-empty string")
    if "{" in game_id or "}" in game_id:
        raise ValueError(f"game id must not contain braces: {game_id!r}")


def _validate_scope(scope: str) -> None:
    if not isinstance(scope, str) or not scope:
        raise ValueError("idempotency scope must be a non-empty string")


@dataclass(frozen=True, slots=True)
class GameKeys:
    """The key names of one game."""

    prefix: str  # "{ns}:{{game_id}}"

    @property
    def game(self) -> str:
        return f"{self.prefix}:game"

    @property
    def log(self) -> str:
        return f"{self.prefix}:log"

    @property
    def archive(self) -> str:
        return f"{self.prefix}:archive"

    @property
    def idem_order(self) -> str:
        return f"{self.prefix}:idem"

    def cached(self, name: str) -> str:
        """The key of the value cached under ``name`` (lower-case letters, digits, ``_``)."""
        if not isinstance(name, str) or not _CACHE_NAME.match(name):
            raise ValueError(f"cache name must be lower-case letters, digits and '_': {name!r}")
        return f"{self.prefix}:cache:{name}"

    @staticmethod
    def idem_field(scope: str) -> str:
        """The game hash field holding the idempotency record of ``scope``."""
        _validate_scope(scope)
        return f"i:{scope}"

    @property
    def pattern(self) -> str:
        """A SCAN MATCH pattern for all keys of the game (glob characters escaped)."""
        escaped = "".join("\\" + c if c in _GLOB_SPECIAL else c for c in self.prefix)
        return f"{escaped}:*"


def game_keys(game_id: str, namespace: str = DEFAULT_NAMESPACE) -> GameKeys:
    validate_game_id(game_id)
    if not namespace or "{" in namespace or "}" in namespace:
        raise ValueError(f"namespace must be non-empty and free of braces: {namespace!r}")
    return GameKeys(f"{namespace}:{{{game_id}}}")


def moved_channel(game_id: str, namespace: str = DEFAULT_NAMESPACE) -> str:
    """The pub/sub channel every commit of the game publishes ``<game id> <version> <log
    record>`` on (the commit script names it so too): one channel a game, so that Redis
    sends a commit's message only to the servers watching that game."""
    return f"{game_keys(game_id, namespace).prefix}:moved"


def ticket_key(ticket: str, namespace: str = DEFAULT_NAMESPACE) -> str:
    """The key of a stream ticket (``ticket`` already checked to be one's form)."""
    return f"{namespace}:ticket:{ticket}"


def alias_key(name: str, namespace: str = DEFAULT_NAMESPACE) -> str:
    """The key of an alias: a name (letters, digits, ``_``, ``-``) standing for a game id."""
    if not isinstance(name, str) or not _ALIAS.match(name):
        raise ValueError(f"an alias is 1 to 64 letters, digits, '_' or '-': {name!r}")
    return f"{namespace}:alias:{name}"
