"""Dummy games arranged in the engine (a 108-card deck, 2 jokers)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from random import Random
from typing import Any

from service.rules import (
    GameState,
    new_game,
)
from service.rules.cards import standard_deck

DECK = standard_deck(2, 4)


CODES = frozenset(DECK)


def _boring(card: str) -> tuple[bool, int]:
    return (card == "JK" or card[0] == "2", DECK.index(card))


def arrange(hands: Sequence[Sequence[str]], upcard: str, stock_top: Sequence[str] = (),
            players: int = 2) -> dict[str, Any]:
    """A complete 108-card deal: the given hands (filled up to 13 with leftover natural
    cards), the upcard and the stock's top cards (first drawn first)."""
    pool = Counter(DECK)
    for card in [*(c for h in hands for c in h), upcard, *stock_top]:
        pool[card] -= 1
        assert pool[card] >= 0, f"{card} used too often"
    rest = sorted(pool.elements(), key=_boring)
    full = []
    for seat in range(players):
        hand = list(hands[seat]) if seat < len(hands) else []
        while len(hand) < 13:
            hand.append(rest.pop(0))
        full.append(hand)
    return {"hands": full, "discard": [upcard], "stock": [*stock_top, *rest]}


def game(hands: Sequence[Sequence[str]], upcard: str = "QH", stock_top: Sequence[str] = (),
         players: int = 2, rules: dict[str, Any] | None = None,
         more: Sequence[dict[str, Any]] = ()) -> GameState:
    """A Dummy game whose first hand is arranged; seat 0 plays first."""
    state, _ = new_game("dummy", [f"p{i}" for i in range(players)], rules, players - 1,
                        [arrange(hands, upcard, stock_top, players), *more], Random(0))
    return state
