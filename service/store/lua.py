"""Running the store's Lua scripts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.commands.core import Script
from redis.exceptions import NoScriptError

from .client import StoreClient

__all__ = ["run"]


def run(client: StoreClient, script: Script, keys: Sequence[Any], args: Sequence[Any]) -> Any:
    """``script`` by EVALSHA (one round trip); on NOSCRIPT (a restarted or other server) it is
    loaded and run again, which is safe: it did not run. What ``Script.__call__`` does, minus
    its per-call pipeline check."""
    try:
        return client.execute_command(  # type: ignore[no-untyped-call]
            "EVALSHA", script.sha, len(keys), *keys, *args)
    except NoScriptError:
        script.sha = client.script_load(script.script)
        return client.execute_command(  # type: ignore[no-untyped-call]
            "EVALSHA", script.sha, len(keys), *keys, *args)
