"""Rummy 51 and Lebanese 14 deals arranged in the engine, and the hands many tests play."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from service.rules.cards import standard_deck

DECK = standard_deck(2, 4)


COPIES = Counter(DECK)


R51, L14 = "rummy51", "lebanese14"


JUNK = "2S 5S 8S JS 3H 6H 9H QH 4D 7D TD KD AC"
"""13 cards of 13 different ranks, three ranks apart within a suit: no meld, not even with
one joker."""


FILLER = ["2D", "6C", "TC", "3S", "7S", "JD", "4H", "8D", "QS", "5C", "9C", "KC", "2H", "6S", "TH"]
"""Cards that fill a hand given short (L14 deals one card more); then the deck's order."""


def cards(text: str | Sequence[str] | None) -> list[str]:
    if text is None:
        return []
    return text.split() if isinstance(text, str) else list(text)


def sizes(variant: str, n: int, dealer: int) -> list[int]:
    """R51-DEAL: 13 each and the dealer 14; L14-DEAL: 14 each and the dealer 15."""
    base = 13 if variant == R51 else 14
    return [base + (seat == dealer) for seat in range(n)]


def junk(variant: str, *, dealer: bool = False, first: str = "4C") -> str:
    """A hand that melds nothing: JUNK (+ 7C in L14) (+ the dealer's first discard)."""
    text = JUNK + (" 7C" if variant == L14 else "")
    return text + (f" {first}" if dealer else "")


def arrange(variant: str, hands: Sequence[str | Sequence[str] | None], stock: str = "",
            dealer: int = 0) -> dict[str, Any]:
    """A 108-card deal: ``hands`` (filled up to the variant's size from FILLER), ``stock``
    on top of the stock (top first), the rest of the deck below it; no upcard."""
    want = sizes(variant, len(hands), dealer)
    given = [cards(h) for h in hands]
    top = cards(stock)
    used = Counter(c for h in given for c in h) + Counter(top)
    assert not used - Counter(DECK), f"more copies than the deck has: {used - Counter(DECK)}"
    for hand, size in zip(given, want, strict=True):
        assert len(hand) <= size, f"{len(hand)} cards given, {size} dealt: {hand}"
        for card in [*FILLER, *DECK]:
            if len(hand) == size:
                break
            if used[card] < COPIES[card]:
                hand.append(card)
                used[card] += 1
        assert len(hand) == size
    rest = list((Counter(DECK) - used).elements())
    deal = {"hands": given, "stock": top + rest, "discard": []}
    assert Counter(c for h in given for c in h) + Counter(deal["stock"]) == Counter(DECK)
    return deal


SEAT1_OPEN = {R51: "9H TH JH QH 5D 7D JK KS KH KD 6D 9S 9D",
              L14: "9H TH JH QH 5D 5S JK KS KH KD 6D 9S 9D 2D"}


SEAT0_OPEN = "4C TS JS QS 5C 6C 7C 9C 9H JK 2D 3D 2H 8D"


WIN = {R51: "AS 2S 3S 4S 7H 8H 9H KH KC KS 5D 6D 7D",
       L14: "AS 2S 3S 4S 7H 8H 9H KH KC KS 5D 6D 7D 8D"}


WIN_MELD = {R51: "meld AS 2S 3S 4S / 7H 8H 9H / KH KC KS / 5D 6D 7D",
            L14: "meld AS 2S 3S 4S / 7H 8H 9H / KH KC KS / 5D 6D 7D 8D"}


WIN_1J = "AS 2S 3S 4S 7H 8H 9H KH KC JK 5D 6D 7D 8D"


WIN_1J_MELD = "meld AS 2S 3S 4S / 7H 8H 9H / KH KC JK / 5D 6D 7D 8D"


OPENER0 = "4C TS JS QS 5C 6C 7C 9C 9S 9D AC JK KD 5H"
"""Seat 0 opens TS JS QS / 5C 6C 7C / 9C 9S 9D and keeps AC JK KD 5H (R51 46), + 6S in L14
(10 + 20 + 10 + 5 + 6 = 51)."""


OPENER0_MELD = "meld TS JS QS / 5C 6C 7C / 9C 9S 9D"
