"""Values made from objects that are never changed in place, remembered by identity
(:class:`ByIdentity`) or by a hashable key (:class:`Kept`), the last few hundred or
thousand of them."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K")
H = TypeVar("H", bound=Hashable)
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


class Kept(Generic[H, V]):
    """Values kept by a hashable key (the last ``size`` of them), each made by the caller
    the first time its key is asked for: for keys that are cheap to hash and stand for all
    that the value is made from."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: dict[H, V] = {}

    def get(self, key: H, make: Callable[[], V]) -> V:
        known = self._items.get(key)
        if known is not None:
            return known
        made = make()
        if len(self._items) >= self._size:
            self._items.clear()
        self._items[key] = made
        return made

    def clear(self) -> None:
        self._items.clear()
