"""Arranged deals and seat headers for the HTTP tests that need a known outcome (API.md
"Creating a game": a deal names every card's place)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from service.rules.cards import standard_deck


def arranged(hands: list[list[str]], upcard: str | None, stock_top: Sequence[str] = (),
             deck: Sequence[str] | None = None) -> dict[str, Any]:
    """A complete deal of ``deck`` (one 52-card deck by default): the hands, the upcard,
    the stock top first, then the rest of the deck in its order. A card named more often
    than the deck holds it fails (ValueError)."""
    rest = list(standard_deck() if deck is None else deck)
    for card in [c for h in hands for c in h] + ([upcard] if upcard else []) + [*stock_top]:
        rest.remove(card)
    return {"hands": [list(h) for h in hands], "discard": [upcard] if upcard else [],
            "stock": [*stock_top, *rest]}


def auth(token: str) -> dict[str, str]:
    """The Authorization header of a seat token."""
    return {"Authorization": f"Bearer {token}"}
