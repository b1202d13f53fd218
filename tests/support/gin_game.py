"""Gin rummy's arranged deals and moves, shared by its engine and HTTP tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from service.rules.cards import standard_deck

# seat 1 (non-dealer, first): three melds and KD; seat 0 (dealer): two melds, 4H 5H to lay
# off on seat 1's AH-3H, and 3C 9C (21 deadwood before lay-offs)
KNOCKER = ["AH", "2H", "3H", "4C", "4D", "4S", "7S", "8S", "9S", "KD"]
DEFENDER = ["4H", "5H", "7C", "7D", "7H", "JS", "QS", "KS", "3C", "9C"]
UPCARD = "2C"


def deal(hands: Sequence[Sequence[str]], upcard: str, stock_top: Sequence[str] = ()
         ) -> dict[str, Any]:
    used = {*hands[0], *hands[1], upcard, *stock_top}
    rest = [c for c in standard_deck() if c not in used]
    return {"hands": [list(h) for h in hands], "discard": [upcard],
            "stock": [*stock_top, *rest]}


def melds(*groups: str) -> list[dict[str, list[str]]]:
    return [{"cards": g.split()} for g in groups]


KNOCK = {"type": "knock", "card": "KD", "melds": melds("AH 2H 3H", "4C 4D 4S", "7S 8S 9S")}
