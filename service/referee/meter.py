"""Metering: the counters a use case counts in the store's round trip that loads (or
commits) a game, so that a request's rate limits cost no round trip of their own. The HTTP
layer's rate limiter (``service.api.security.GameMeter``) is a :class:`Meter`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from service.store import Count, Window


class Meter(Protocol):
    """Counters to count in the round trip that loads a game (the caller's rate limits),
    and what to do with their counts (raise to refuse the request)."""

    def windows(self) -> Sequence[Window]: ...

    def limits(self) -> Sequence[int]:
        """The most hits each window allows (a commit that counts refuses to write beyond)."""
        ...

    def counted(self, counts: Sequence[Count]) -> None: ...


class _Unmetered:
    """No rate limits to count: what a request without a :class:`Meter` counts."""

    def windows(self) -> Sequence[Window]:
        return ()

    def limits(self) -> Sequence[int]:
        return ()

    def counted(self, counts: Sequence[Count]) -> None:
        return None


UNMETERED: Meter = _Unmetered()
