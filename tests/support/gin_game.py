"""Gin rummy's arranged deals, moves and engine helpers, shared by its engine and HTTP
tests."""

from __future__ import annotations

from collections.abc import Sequence
from random import Random
from typing import Any

import pytest

from service.rules.cards import standard_deck
from service.rules.engine import apply, new_game
from service.rules.errors import Violation
from service.rules.moves import move_from_dict
from service.rules.state import GameState

# seat 1 (non-dealer, first): three melds and KD; seat 0 (dealer): two melds, 4H 5H to lay
# off on seat 1's AH-3H, and 3C 9C (21 deadwood before lay-offs)
KNOCKER = ["AH", "2H", "3H", "4C", "4D", "4S", "7S", "8S", "9S", "KD"]
DEFENDER = ["4H", "5H", "7C", "7D", "7H", "JS", "QS", "KS", "3C", "9C"]
UPCARD = "2C"
GIN_HAND = ["AH", "2H", "3H", "4C", "4D", "4S", "7S", "8S", "9S", "TS"]
"""Ten cards that all meld (AH-3H, 4C 4D 4S, 7S-TS): DEFENDER's partner for a gin."""

TAKE = {"type": "draw", "source": "discard"}
STOCK = {"type": "draw", "source": "stock"}
PASS = {"type": "pass"}


def deal(hands: Sequence[Sequence[str]], upcard: str, stock_top: Sequence[str] = ()
         ) -> dict[str, Any]:
    used = {*hands[0], *hands[1], upcard, *stock_top}
    rest = [c for c in standard_deck() if c not in used]
    return {"hands": [list(h) for h in hands], "discard": [upcard],
            "stock": [*stock_top, *rest]}


def melds(*groups: str) -> list[dict[str, list[str]]]:
    return [{"cards": g.split()} for g in groups]


def knock(card: str | None, *groups: str) -> dict[str, Any]:
    """A knock discarding ``card`` (None: big gin) with melds written as strings."""
    body: dict[str, Any] = {"type": "knock", "melds": melds(*groups)}
    if card is not None:
        body["card"] = card
    return body


KNOCK = knock("KD", "AH 2H 3H", "4C 4D 4S", "7S 8S 9S")
GIN_MELDS = melds("AH 2H 3H", "4C 4D 4S", "7S 8S 9S TS")


def new_hand(rules: dict[str, Any] | None = None,
             hands: Sequence[Sequence[str]] = (DEFENDER, KNOCKER), upcard: str = UPCARD,
             stock_top: Sequence[str] = (), dealer: int = 0) -> GameState:
    """A one-hand game (unless ``rules`` say otherwise) on an arranged deal."""
    state, _ = new_game("gin", ["p0", "p1"], {"match_end": {"deals": 1}, **(rules or {})},
                        dealer=dealer, deals=[deal(hands, upcard, stock_top)], rng=Random(1))
    return state


def play(state: GameState, seat: int, move: dict[str, Any]
         ) -> tuple[GameState, list[dict[str, Any]]]:
    return apply(state, seat, move_from_dict(move), Random(2))


def plays(state: GameState, *moves: tuple[int, dict[str, Any]]) -> GameState:
    for seat, move in moves:
        state, _ = play(state, seat, move)
    return state


def refused(state: GameState, seat: int, move: dict[str, Any]) -> tuple[str, str]:
    """The code and rule id the engine refuses ``move`` with."""
    with pytest.raises(Violation) as info:
        play(state, seat, move)
    return info.value.code.value, info.value.rule.value


def at_the_wall(hands: Sequence[Sequence[str]], last: str,
                rules: dict[str, Any] | None = None) -> GameState:
    """GIN-WALL reached with seat 0 to act and ``last`` the discard: both pass the upcard,
    then each draws from the stock and discards what it drew, 29 times (seat 1 last)."""
    used = {*hands[0], *hands[1], UPCARD, last}
    filler = [c for c in standard_deck() if c not in used][:28]
    s = plays(new_hand(rules, hands, stock_top=[*filler, last]), (1, PASS), (0, PASS))
    for i in range(29):
        seat = 1 - i % 2
        s = plays(s, (seat, STOCK))
        s = plays(s, (seat, {"type": "discard", "card": s.hands[seat][-1]}))
    assert len(s.stock) == 2 and s.turn == 0 and s.discard[-1] == last
    return s


def hand_end(events: list[dict[str, Any]]) -> dict[str, Any]:
    return next(e for e in events if e["type"] == "hand_end")
