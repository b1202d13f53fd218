"""Provably fair deals: a commitment published at each deal, revealed when the hand ends.

At every deal the referee draws a secret 256-bit seed (from the game's generator:
``secrets.SystemRandom`` in play) and publishes ``SHA-256(seed | deal)`` — the deal being
each seat's cards, the stock (top first) and the discard pile, as canonical JSON — in the
``dealt`` event and in the public view (``deal_commitment``). Stocks rebuilt by shuffling
during the hand are recorded too. When the hand ends, a public ``deal_revealed`` event
shows the seed, the deal and the rebuilt stocks, so anyone can recompute the commitment and
replay the hand (:mod:`service.rules.verify`). Arranged deals stay marked as such.

The record is kept as the store keeps it (:func:`~service.rules.state.pack_deal`: each card
list one string) and is never changed in place, only replaced: a state's copy shares it,
and storing it encodes it as it is. The reveal shows its card lists as lists.
"""

from __future__ import annotations

import hashlib
import json
from random import Random
from typing import Any

from service.rules.state import DEAL_RECORD, GameState, pack_deal, unpack_deal

SECRET = DEAL_RECORD
"""Key of the hand's hidden deal record in ``GameState.var``."""


def digest(seed: str, deal: dict[str, Any]) -> str:
    """The commitment to ``deal`` under ``seed``: hex SHA-256 of ``seed|<canonical JSON>``."""
    body = json.dumps({k: deal[k] for k in ("hands", "stock", "discard")}, sort_keys=True,
                      separators=(",", ":"))
    return hashlib.sha256(f"{seed}|{body}".encode()).hexdigest()


def commit(state: GameState, rng: Random, *, arranged: bool) -> str:
    """Record the deal just made in ``state`` (hidden) and return its commitment."""
    seed = f"{rng.getrandbits(256):064x}"
    deal = {"hands": [list(h) for h in state.hands], "stock": list(reversed(state.stock)),
            "discard": list(state.discard)}
    commitment = digest(seed, deal)
    state.var[SECRET] = pack_deal({"seed": seed, **deal, "rebuilds": [], "arranged": arranged,
                                   "dealer": state.dealer, "commitment": commitment})
    return commitment


def record_rebuild(state: GameState) -> None:
    """Note a stock rebuilt during the hand (its order, top first), for the reveal."""
    secret = state.var.get(SECRET)
    if secret is not None:  # a new record: the old one may be shared with other states
        state.var[SECRET] = pack_deal(
            {**secret, "rebuilds": [*secret["rebuilds"], list(reversed(state.stock))]})


def reveal(state: GameState) -> dict[str, Any] | None:
    """The public ``deal_revealed`` event of the hand that just ended."""
    secret = state.var.pop(SECRET, None)
    if secret is None:
        return None
    return {"type": "deal_revealed", "hand_number": state.hand_number, **unpack_deal(secret)}


def commitment(state: GameState) -> str | None:
    """The commitment of the hand being played (public)."""
    secret = state.var.get(SECRET)
    return None if secret is None else str(secret["commitment"])
