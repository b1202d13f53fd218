"""Compound meld actions the meld search can find whole: a Dummy contract
(DUMMY-CONTRACTS) and a Wrotham all-at-once finish (WROTHAM-LATE). (The Rummy 51 opening
lives with its rules: ``Rummy51Rules.opening_move``.) Each answer is an example move; the
search is constructive and bounded, so None means none was found."""

from __future__ import annotations

from service.rules.cards import remove
from service.rules.dummy import DummyRules, read_as
from service.rules.engine import shape_of
from service.rules.melds import Meld, Piece
from service.rules.moves import MeldMove
from service.rules.search import candidate_melds
from service.rules.state import GameState

SEARCH_STEPS = 3000


def melds_move(melds: list[Meld]) -> MeldMove:
    return MeldMove(tuple(tuple(Piece(c) for c in m.cards) for m in melds))


def find_contract(state: GameState, seat: int,
                  melds: list[Meld] | None = None) -> MeldMove | None:
    """Dummy: melds of the hand that make up the seat's contract, leaving a card to
    discard (``melds``: every meld of the hand, when the caller has searched already)."""
    shape = shape_of(state)
    hand = state.hands[seat]
    needs = sorted(DummyRules.current(state, seat).needs, key=lambda n: -n.size)
    kinds: dict[tuple[str, ...], dict[str, Meld | None]] = {}

    def as_kind(meld: Meld, kind: str) -> Meld | None:
        options = kinds.setdefault(meld.cards, {})
        if kind not in options:
            options[kind] = read_as([Piece(c) for c in meld.cards], shape, kind)
        return options[kind]

    if melds is None:
        melds = candidate_melds(hand, shape)
    candidates = sorted(melds, key=lambda m: len(m.cards))
    steps = 0

    def dfs(i: int, left: list[str], chosen: list[Meld]) -> list[Meld] | None:
        nonlocal steps
        if i == len(needs):
            return list(chosen) if left else None
        for meld in candidates:
            steps += 1
            if steps > SEARCH_STEPS:
                return None
            if len(meld.cards) < needs[i].size or len(meld.cards) >= len(left):
                continue
            try:
                rest = remove(left, meld.cards)
            except ValueError:  # the hand does not hold them all
                continue
            reading = as_kind(meld, needs[i].kind)
            if reading is None:
                continue
            chosen.append(reading)
            found = dfs(i + 1, rest, chosen)
            chosen.pop()
            if found is not None:
                return found
        return None

    found = dfs(0, list(hand), [])
    return None if found is None else melds_move(found)


def find_all_but_one(state: GameState, seat: int) -> MeldMove | None:
    """Wrotham late deals: melds holding every card of the hand but one."""
    shape = shape_of(state)
    hand = state.hands[seat]
    steps = 0
    for spare in sorted(set(hand)):
        if spare == state.taken and state.taken_before == 0:
            continue
        rest = list(hand)
        rest.remove(spare)
        candidates = candidate_melds(rest, shape)

        def cover(left: list[str], chosen: list[Meld],
                  candidates: list[Meld] = candidates) -> list[Meld] | None:
            nonlocal steps
            if not left:
                return list(chosen)
            first = min(left)
            for meld in candidates:
                steps += 1
                if steps > SEARCH_STEPS or first not in meld.cards:
                    continue
                try:
                    remaining = remove(left, meld.cards)
                except ValueError:  # the hand does not hold them all
                    continue
                chosen.append(meld)
                found = cover(remaining, chosen)
                chosen.pop()
                if found is not None:
                    return found
            return None

        found = cover(rest, [])
        if found:
            return melds_move(found)
    return None
