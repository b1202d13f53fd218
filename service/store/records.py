"""Values returned by the store and the encoding of idempotency records."""

from __future__ import annotations

from dataclasses import dataclass

from .counters import Count

__all__ = ["Cached", "IdempotencyRecord", "Loaded", "decode_idempotency",
           "encode_idempotency"]


@dataclass(frozen=True, slots=True)
class IdempotencyRecord:
    """What was answered to the first request of an idempotency scope."""

    fingerprint: str  # identifies the request body, to tell a replay from a key reuse
    response: bytes


@dataclass(frozen=True, slots=True)
class Loaded:
    version: int
    state: bytes | None
    """None when the game is at the version the caller said it holds (``held``)."""
    idempotency: IdempotencyRecord | None
    counts: tuple[Count, ...] = ()
    """The window counters' counts, when the load counted (``GameStore.load(windows=…)``)."""


@dataclass(frozen=True, slots=True)
class Cached:
    """A game's version and what is cached beside it for that version
    (``GameStore.cached``)."""

    version: int
    value: bytes | None
    """None when nothing is cached for this version (nothing at all, or for another one)."""


def encode_cached(version: int, value: bytes) -> bytes:
    """``b"<version>:" + value``."""
    return b"%d:%b" % (version, bytes(value))


def decode_cached(version: int, stored: bytes | None) -> bytes | None:
    """The value of an :func:`encode_cached` record if it was cached at ``version``."""
    if stored is None:
        return None
    head, sep, value = bytes(stored).partition(b":")
    return value if sep and head == b"%d" % version else None


def encode_idempotency(fingerprint: str, response: bytes) -> bytes:
    """``b"<len(fingerprint utf-8)>:" + fingerprint + response`` in one value."""
    fp = fingerprint.encode()
    return b"%d:%b%b" % (len(fp), fp, bytes(response))


def decode_idempotency(value: bytes) -> IdempotencyRecord:
    head, sep, rest = value.partition(b":")
    if not sep or not head.isdigit() or int(head) > len(rest):
        raise ValueError("malformed idempotency record")
    size = int(head)
    return IdempotencyRecord(fingerprint=rest[:size].decode(), response=rest[size:])
