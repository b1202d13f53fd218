"""Values made from objects that are never changed in place, remembered by identity."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class ByIdentity(Generic[K, V]):
    """``make(key)``, made once per ``key`` object (the last ``size`` of them): for keys
    that are not hashable, or dear to hash, and never changed once made."""

    def __init__(self, make: Callable[[K], V], size: int = 256) -> None:
        self._make = make
        self._size = size
        self._items: dict[int, tuple[K, V]] = {}

    def __call__(self, key: K) -> V:
        known = self._items.get(id(key))
        if known is not None and known[0] is key:
            return known[1]
        made = self._make(key)
        if len(self._items) >= self._size:
            self._items.clear()
        self._items[id(key)] = (key, made)  # the key is kept: its id is not reused
        return made
