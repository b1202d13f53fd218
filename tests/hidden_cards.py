"""What the random-play tests of the rule modules check of every state they reach: every
card is somewhere (C-DECK), and no view shows a card its viewer may not see."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from service.rules import GameState, public_view, seat_view
from service.rules.cards import standard_deck

CODES = frozenset(standard_deck(1, 1))
"""Every card code (the 52 cards and ``JK``)."""


def card_strings(value: Any) -> list[str]:
    """The card codes anywhere in a JSON-like value (keys included)."""
    if isinstance(value, str):
        return [value] if value in CODES else []
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in card_strings(k) + card_strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in card_strings(v)]
    return []


def check_views(state: GameState, version: int, deck: Sequence[str]) -> None:
    """C-DECK conservation of ``deck``, and views that show no hidden card: the public
    view only the table's melds and the discard's top, a seat's view those and its hand."""
    assert Counter(state.all_cards()) == Counter(deck)
    view = public_view(state, "g", version)
    assert [m["cards"] for m in view["melds"]] == [m.cards for m in state.melds]
    assert view["discard_top"] == (state.discard[-1] if state.discard else None)
    rest = {k: v for k, v in view.items() if k not in ("melds", "discard_top")}
    assert card_strings(rest) == [], "the public view shows a hidden card"
    for seat in range(state.players_count):
        mine = seat_view(state, "g", version, seat)
        assert Counter(mine["hand"]) == Counter(state.hands[seat])
        rest = {k: v for k, v in mine.items()
                if k not in ("melds", "discard_top", "hand", "taken_discard")}
        assert card_strings(rest) == []
