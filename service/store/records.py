"""Values returned by the store and the encoding of idempotency records."""

from __future__ import annotations

from dataclasses import dataclass, field

from .counters import Count

__all__ = ["Cached", "IdempotencyRecord", "Loaded", "decode_idempotency",
           "encode_idempotency"]


@dataclass(frozen=True, slots=True)
class IdempotencyRecord:
    """What was answered to the first request of an idempotency scope."""

    fingerprint: str  # identifies the request body, to tell a replay from a key reuse
    response: bytes
    expires_ms: int | None = field(default=None, compare=False)
    """When the record stops counting (Unix time, ms); None for one that never does (not
    compared: a record is its fingerprint and response)."""

    def expired(self, now_ms: int) -> bool:
        return self.expires_ms is not None and self.expires_ms <= now_ms


@dataclass(frozen=True, slots=True)
class Loaded:
    version: int
    state: bytes | None
    """None when the game is at the version the caller said it holds (``held``)."""
    idempotency: IdempotencyRecord | None
    counts: tuple[Count, ...] = ()
    """The window counters' counts, when the load counted (``GameStore.load(windows=…)``)."""
    now_ms: int | None = None
    """The store's clock when it was read (Unix time, ms), when the load could ask it in
    the same round trip (the load script ran)."""


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


def encode_idempotency(fingerprint: str, response: bytes, expires_ms: int | None = None
                       ) -> bytes:
    """``b"e<expires_ms>:<len(fingerprint utf-8)>:" + fingerprint + response`` in one value
    (without the ``e…:`` part when it never expires: what earlier versions stored). The
    commit script reads the expiry too (``^e(%d+):``)."""
    fp = fingerprint.encode()
    expiry = b"" if expires_ms is None else b"e%d:" % expires_ms
    return b"%b%d:%b%b" % (expiry, len(fp), fp, bytes(response))


def _number(text: bytes) -> int:
    if not text or not text.isdigit():  # bytes.isdigit: ASCII digits only
        raise ValueError("malformed idempotency record")
    return int(text)


def decode_idempotency(value: bytes) -> IdempotencyRecord:
    expires_ms = None
    if value.startswith(b"e"):
        head, _, value = value[1:].partition(b":")
        expires_ms = _number(head)
    head, sep, rest = value.partition(b":")
    size = _number(head) if sep else -1
    if size < 0 or size > len(rest):
        raise ValueError("malformed idempotency record")
    return IdempotencyRecord(fingerprint=rest[:size].decode(), response=rest[size:],
                             expires_ms=expires_ms)
