"""The worker's cache of game states: :class:`HeldStates`."""

from __future__ import annotations

import threading
from typing import Any

from service.rules import GameState

HELD_STATES = 512
"""Games whose latest state a worker keeps decoded (see :class:`HeldStates`)."""


class HeldStates:
    """The state of recent games as this process last loaded or committed them, by version.

    A move is applied to the state held and committed with it as the expected version, in
    one round trip; a load names the version it holds, and while the game is still at that
    version Redis does not send the state again and it is not decoded again (the engine
    never changes a state it is given: ``apply`` works on a copy). When the game has moved
    on — another worker's or replica's move — the commit's compare-and-set fails and answers
    with the current state, so this is only a shortcut: every move is committed by
    compare-and-set against the stored version.
    """

    def __init__(self, size: int = HELD_STATES) -> None:
        self._size = size
        self._items: dict[str, tuple[int, list[str], GameState, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def get(self, game_id: str) -> tuple[int, list[str], GameState, dict[str, Any]] | None:
        """(version, seat token hashes, state, the document's other parts)."""
        return self._items.get(game_id)

    def put(self, game_id: str, version: int, tokens: list[str], state: GameState,
            extras: dict[str, Any] | None = None) -> None:
        with self._lock:
            self._items.pop(game_id, None)
            self._items[game_id] = (version, tokens, state, extras or {})
            if len(self._items) > self._size:
                del self._items[next(iter(self._items))]

    def drop(self, game_id: str) -> None:
        with self._lock:
            self._items.pop(game_id, None)
