"""A game's stored document, and the JSON codec of everything the referee stores.

A game's document is JSON: ``{"state": <GameState.to_compact()>, "tokens": [<sha256 of each
seat's token>]}`` (``GameState.from_dict`` also reads the plain ``to_dict()`` form that
games stored by earlier versions hold). Only the tokens' hashes are stored: a seat's token
is checked against its hash (:func:`holds`), in constant time. A lobby's game
(:mod:`.lobby`) has open seats (``null`` for their hashes) and more beside the two (its host
token's hash, a rematch): :func:`extras`, which every move keeps as they are.

:func:`encode` and :func:`decode` write and read documents, move answers, log records and
verification reports: with orjson when it is installed, else with the json module, which
writes and reads the same.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from service.rules import GameState

try:
    _orjson: Any = importlib.import_module("orjson")
except ImportError:  # optional: the json module writes and reads the same, only slower
    _orjson = None


def encode(doc: Mapping[str, Any]) -> bytes:
    """Compact JSON (orjson when installed: several times faster). orjson's own way first:
    its option for keys that are not strings (written as json writes them) takes it off
    its fast path, and costs about twice the time on a state or a view, so it is asked for
    only when a key needs it."""
    if _orjson is not None:
        try:
            encoded: bytes = _orjson.dumps(doc)
            return encoded
        except TypeError:  # a key that is not a string, or an integer beyond 64 bits
            try:
                encoded = _orjson.dumps(doc, option=_orjson.OPT_NON_STR_KEYS)
                return encoded
            except TypeError:  # what orjson does not write (integers beyond 64 bits)
                pass
    return json.dumps(doc, separators=(",", ":")).encode()


def decode(raw: bytes) -> Any:
    if _orjson is not None:
        try:
            return _orjson.loads(raw)
        except ValueError:  # what orjson does not read: json says why, or reads it
            pass
    return json.loads(raw)


def document(state: GameState, token_hashes: Sequence[str]) -> dict[str, Any]:
    """A game's document: its state and its seats' token hashes (:func:`token_hash`)."""
    return {"state": state.to_compact(), "tokens": list(token_hashes)}


TOKEN_HASHES = 4096
"""Tokens whose hashes a process remembers (:func:`token_hash`; all are forgotten beyond)."""
_token_hashes: dict[str, str] = {}


def token_hash(token: str) -> str:
    """The SHA-256 of a token (hex), as a game's document stores it. A process remembers the
    hashes of up to :data:`TOKEN_HASHES` tokens: a seat sends its token with every move and
    view, and hashing it took a worker under the benchmark's load 8-10 µs of CPU (0.4 µs in
    a quiet process), about a hundredth of a move's."""
    digest = _token_hashes.get(token)
    if digest is None:
        if len(_token_hashes) >= TOKEN_HASHES:
            _token_hashes.clear()
        digest = _token_hashes[token] = hashlib.sha256(token.encode()).hexdigest()
    return digest


def holds(doc: Mapping[str, Any], seat: int, token: str) -> bool:
    """Whether ``token`` is the token of ``seat`` in a game's document (constant time)."""
    return holds_hash(doc, seat, token_hash(token))


def holds_hash(doc: Mapping[str, Any], seat: int, digest: str) -> bool:
    """Whether ``digest`` (:func:`token_hash` of a token) is the hash of ``seat``'s token in
    a game's document (constant time): what an open stream or a stream ticket, which keep
    the hash and not the token, check."""
    hashes: list[str | None] = doc["tokens"]
    stored = hashes[seat] if 0 <= seat < len(hashes) else None  # None: an open seat (lobby)
    return isinstance(stored, str) and hmac.compare_digest(stored, digest)


def extras(doc: Mapping[str, Any]) -> dict[str, Any]:
    """What a game's document holds beside its state and seat tokens (the host token's
    hash, a rematch: :mod:`.lobby`), kept as it is by every move."""
    return {key: value for key, value in doc.items() if key not in ("state", "tokens")}
