"""Finding melds in a hand: every distinct valid meld, and combinations of them.

Used where the rules make a player commit to something later in the turn (use the card
taken from the discard pile, reach the opening points, put a swapped joker back): the
engine refuses a move after which the commitment could no longer be met, so a turn can
always end. Also the base of legal-move enumeration.

The search is *constructive*: when it answers "possible" it has found the melds.
"""

from __future__ import annotations

import contextlib
import itertools
from collections import Counter
from collections.abc import Iterator, Sequence

from service.rules.cards import JOKER, RANKS
from service.rules.melds import Meld, MeldError, MeldShape, Piece, check_meld


def _wild_cards(hand: Sequence[str], shape: MeldShape) -> list[str]:
    return [c for c in hand if shape.is_wild(c)]


def candidate_melds(hand: Sequence[str], shape: MeldShape) -> list[Meld]:
    """Every distinct valid new meld the cards of ``hand`` can form (by card multiset).

    Runs use a natural wherever the hand has one and wilds only in the gaps (or to extend
    past the naturals), within the shape's wild limit; sets take any subset of the
    naturals of one rank plus wilds.
    """
    found: dict[tuple[str, ...], Meld] = {}
    for combo in _set_combos(hand, shape):
        _add(found, combo, shape)
    for combo in _run_combos(hand, shape):
        _add(found, combo, shape)
    return list(found.values())


def _add(found: dict[tuple[str, ...], Meld], combo: Sequence[str], shape: MeldShape) -> None:
    key = tuple(sorted(combo))
    if key in found:
        return
    with contextlib.suppress(MeldError):
        found[key] = check_meld([Piece(c) for c in combo], shape)


def _wild_budget(hand: Sequence[str], shape: MeldShape) -> list[str]:
    wilds = sorted(_wild_cards(hand, shape), key=lambda c: c != JOKER)
    limit = len(wilds) if shape.max_wilds is None else min(len(wilds), shape.max_wilds)
    return wilds[:limit]


def _set_combos(hand: Sequence[str], shape: MeldShape) -> Iterator[list[str]]:
    wilds = _wild_budget(hand, shape)
    naturals = [c for c in hand if not shape.is_wild(c)]
    by_rank: dict[str, list[str]] = {}
    for c in naturals:
        by_rank.setdefault(c[0], []).append(c)
    if shape.flexible_twos:
        by_rank.setdefault("2", []).extend(c for c in hand if c[0] == "2")
    top = shape.set_max or len(hand)
    held = Counter(hand)
    for cards in by_rank.values():
        pool = sorted(set(cards)) if shape.set_distinct_suits else sorted(cards)
        for size in range(1, min(len(pool), top) + 1):
            for nat in set(itertools.combinations(pool, size)):
                for w in range(0, min(len(wilds), top - size) + 1):
                    if size + w >= 3:
                        combo = [*nat, *wilds[:w]]
                        # a 2 that may be natural or wild is taken once only
                        if not shape.flexible_twos or Counter(combo) <= held:
                            yield combo


def _run_combos(hand: Sequence[str], shape: MeldShape) -> Iterator[list[str]]:
    wilds = _wild_budget(hand, shape)
    naturals = [c for c in hand if not shape.is_wild(c)]
    if shape.flexible_twos:
        naturals += [c for c in hand if c[0] == "2" and c != JOKER]
    groups: list[list[str]]
    if shape.run_same_suit:
        groups = [[c for c in naturals if c[1] == s] for s in "SHDC"]
    else:
        groups = [naturals]
    top = 14 if shape.ace == "high_or_low" else 13
    starts = range(1, 14) if shape.ace == "around" else range(1, top - 1)
    held = Counter(hand)
    # naturals and wilds are cards of the hand apart, and a same-suit run holds each rank
    # once (two aces only with two in hand): a combination can hold a card more often than
    # the hand only when a 2 may be both, or a mixed-suit run repeats a rank
    verify = shape.flexible_twos or not shape.run_same_suit
    budget = len(wilds)
    for group in groups:
        if not group:
            continue
        have: dict[str, int] = {}
        for c in group:
            have[c[0]] = have.get(c[0], 0) + 1
        card_of = {c[0]: c for c in group}
        for start in starts:
            if budget == 0 and RANKS[(start - 1) % 13] not in have:
                continue  # no wild to stand for the first rank: nothing starts here
            used: dict[str, int] = {}
            cards: list[str] = []
            gaps = 0
            stop = start + 13 if shape.ace == "around" else top + 1
            for length, pos in enumerate(range(start, stop), start=1):
                rank = RANKS[(pos - 1) % 13]
                count = used.get(rank, 0)
                if count < have.get(rank, 0):
                    used[rank] = count + 1
                    cards.append(card_of[rank])
                else:
                    gaps += 1
                    if gaps > budget:
                        break
                if length >= 3 and cards:
                    combo = [*cards, *wilds[:gaps]]
                    if not verify or Counter(combo) <= held:
                        yield combo
                    if gaps < budget and len(cards) > 1:
                        # a wild in place of one natural, keeping that card in hand
                        for i in range(len(cards)):
                            other = [*cards[:i], *cards[i + 1:], *wilds[:gaps + 1]]
                            if not verify or Counter(other) <= held:
                                yield other


def best_combination(hand: Sequence[str], melds: Sequence[Meld], *, need_points: int = 0,
                     must_use: str | None = None, need_clean_run: bool = False,
                     keep: int = 0, limit: int = 20_000,
                     require_any: bool = False) -> list[Meld] | None:
    """Disjoint ``melds`` drawn from ``hand`` meeting every condition, or None.

    ``need_points``: their points add up to at least this; ``must_use``: one of them holds
    this card; ``need_clean_run``: one is a run without wilds; ``keep``: at least this many
    cards stay in hand; ``require_any``: at least one meld even when nothing else is asked.
    Depth-first over melds, richest first, giving up after ``limit``
    steps (it then answers None: the search only ever claims what it has found); a branch
    that can no longer get a clean run or ``must_use`` is not explored.
    """
    ordered = sorted(melds, key=lambda m: -m.points)
    count = len(ordered)
    needs = [Counter(m.cards) for m in ordered]
    sizes = [len(m.cards) for m in ordered]
    clean = [m.kind == "run" and not m.wilds for m in ordered]
    uses = [must_use is not None and must_use in m.cards for m in ordered]
    # whether a clean run / a meld holding must_use is still to come from index j on: a
    # branch that can no longer meet the condition is not explored (it could not succeed)
    clean_after = [False] * (count + 1)
    uses_after = [False] * (count + 1)
    for j in range(count - 1, -1, -1):
        clean_after[j] = clean[j] or clean_after[j + 1]
        uses_after[j] = uses[j] or uses_after[j + 1]
    steps = 0

    def dfs(i: int, left: dict[str, int], total: int, chosen: list[Meld], points: int,
            has_clean: bool, has_use: bool) -> list[Meld] | None:
        nonlocal steps
        steps += 1
        if chosen and points >= need_points and (must_use is None or has_use) \
                and (not need_clean_run or has_clean):
            return list(chosen)
        if steps > limit:
            return None
        if (need_clean_run and not has_clean and not clean_after[i]) or \
                (must_use is not None and not has_use and not uses_after[i]):
            return None
        for j in range(i, count):
            need = needs[j]
            if total - sizes[j] < keep or any(left.get(c, 0) < n for c, n in need.items()):
                continue
            rest = dict(left)
            for c, n in need.items():
                rest[c] -= n
            chosen.append(ordered[j])
            found = dfs(j + 1, rest, total - sizes[j], chosen, points + ordered[j].points,
                        has_clean or clean[j], has_use or uses[j])
            chosen.pop()
            if found is not None:
                return found
            if steps > limit:
                return None
        return None

    if need_points <= 0 and must_use is None and not need_clean_run and not require_any:
        return []
    return dfs(0, dict(Counter(hand)), len(hand), [], 0, False, False)
