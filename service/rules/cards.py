"""Cards and decks (C-CARD, C-DECK).

A card on the wire is a two-character code: rank ``A 2 … 9 T J Q K`` and suit ``S H D C``
(``TH`` is the ten of hearts); the joker is ``JK``. Input is read as people type it
(:func:`read_card`: any case, ``10`` for ``T``, suit symbols); output is always canonical.
Inside the engine cards travel as their canonical code strings (cheap to copy, hash and
store); :class:`Card` is the value type used to reason about them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

RANKS = "A23456789TJQK"
"""Rank characters in order; index + 1 is the rank number (ace 1 … king 13)."""

JOKER = "JK"


class Suit(StrEnum):
    """A suit, by its wire letter."""

    SPADES = "S"
    """♠"""
    HEARTS = "H"
    """♥"""
    DIAMONDS = "D"
    """♦"""
    CLUBS = "C"
    """♣"""


SUITS: tuple[Suit, ...] = tuple(Suit)


class CardError(ValueError):
    """A string that is not a card code."""


@dataclass(frozen=True, slots=True, order=True)
class Card:
    """A playing card: ``rank`` 1 (ace) … 13 (king) with a suit, or the joker (rank 0).

    ``Card.parse("QS")`` ↔ ``str(card)``.
    """

    rank: int
    suit: Suit | None = None

    @staticmethod
    def parse(code: object) -> Card:
        """Parse a card code as :func:`read_card` reads it (``"QS"``, ``"10h"``, ``"q♠"``,
        ``"JK"``); raise :class:`CardError`."""
        if not isinstance(code, str):
            raise CardError(f"not a card code: {code!r}")
        return _parse(code)

    @property
    def is_joker(self) -> bool:
        return self.rank == 0

    @property
    def rank_char(self) -> str:
        return RANKS[self.rank - 1]

    def __str__(self) -> str:
        if self.is_joker:
            return JOKER
        assert self.suit is not None
        return RANKS[self.rank - 1] + self.suit.value

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"


@lru_cache(maxsize=512)
def _parse(code: str) -> Card:
    text = read_card(code)
    if text == JOKER:
        return Card(0, None)
    return Card(RANKS.index(text[0]) + 1, Suit(text[1]))


def canonical(code: object) -> str:
    """The canonical code of ``code`` as a person types it (``"10h"``, ``"q♠"`` → ``"TH"``,
    ``"QS"``: :func:`read_card`); raise :class:`CardError` quoting it as sent."""
    if not isinstance(code, str):
        raise CardError(f"not a card code: {code!r}")
    return str(_parse(code))


def rank_of(code: str) -> int:
    """Rank number of a canonical code (0 for the joker)."""
    return 0 if code == JOKER else RANKS.index(code[0]) + 1


def standard_deck(decks: int = 1, jokers: int = 0) -> list[str]:
    """``decks`` × 52 cards plus ``jokers`` jokers, in a fixed order."""
    one = [r + s.value for s in SUITS for r in RANKS]
    return one * decks + [JOKER] * jokers


def multiset(cards: Iterable[str]) -> Counter[str]:
    """A hand or a deck as a multiset (two-deck games hold identical copies)."""
    return Counter(cards)


def contains(held: Iterable[str], wanted: Iterable[str]) -> list[str]:
    """The cards of ``wanted`` that ``held`` cannot supply (multiset difference)."""
    pool = list(held)  # a hand is short: removing from a list beats counting it
    missing: list[str] = []
    for card in wanted:
        try:
            pool.remove(card)
        except ValueError:
            missing.append(card)
    return missing


def remove(held: Iterable[str], cards: Iterable[str]) -> list[str]:
    """``held`` without one copy of each of ``cards`` (which it must contain)."""
    out = list(held)
    for card in cards:
        out.remove(card)
    return out


SUIT_SYMBOLS = {"♠": "S", "♤": "S", "♥": "H", "♡": "H", "♦": "D", "♢": "D", "♣": "C",
                "♧": "C"}
"""Suit symbols read as their letters (black and white forms alike)."""

_VARIATION_SELECTORS = "\ufe0e\ufe0f"  # "♥️": the emoji form some keyboards type


def read_card(code: object) -> str:
    """The canonical code of a card as a person types it: any letter case, ``10`` for
    ``T``, a suit symbol for the letter (``10♥``, ``q♠``, ``Jk``), spaces around it
    ignored. Raise :class:`CardError` quoting ``code`` as it was sent."""
    if not isinstance(code, str):
        raise CardError(f"not a card code: {code!r}")
    text = "".join(ch for ch in code.strip() if ch not in _VARIATION_SELECTORS).upper()
    if text in (JOKER, "JOKER", "\U0001f0cf"):
        return JOKER
    if len(text) >= 2:
        suit = SUIT_SYMBOLS.get(text[-1], text[-1])
        rank = text[:-1].strip()
        rank = "T" if rank == "10" else rank
        if len(rank) == 1 and rank in RANKS and suit in "SHDC":
            return rank + suit
    raise CardError(f"{code!r} is not a card (expected a rank A 2-10 J Q K and a suit "
                    f"S H D C or ♠ ♥ ♦ ♣, e.g. 'QS', '10♥'; JK for a joker)")
