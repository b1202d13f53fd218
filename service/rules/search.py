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
from collections.abc import Collection, Iterator, Sequence

from service.rules.cards import JOKER, RANKS
from service.rules.melds import Meld, MeldError, MeldShape, Piece, check_meld

_PLACE = {rank: place for place, rank in enumerate(RANKS, start=1)}
"""A rank's first place in a run (an ace's is 1)."""


def _wild_cards(hand: Sequence[str], shape: MeldShape) -> list[str]:
    return [c for c in hand if shape.is_wild(c)]


def candidate_melds(hand: Sequence[str], shape: MeldShape,
                    sizes: Collection[int] | None = None) -> list[Meld]:
    """Every distinct valid new meld the cards of ``hand`` can form (by card multiset), of
    a number of cards in ``sizes`` (None: any).

    Sets take any multiset of the naturals of one rank with any multiset of the wilds;
    runs any naturals of different places (a natural held between two of them may be left
    out for a wild, and in runs of mixed suits a place may be any card of its rank) with
    the wilds that fill the places left empty and any more that extend the run at its
    ends; within the shape's wild limit. Each is kept when :func:`check_meld` reads it.
    """
    found = []
    for combo in meld_combos(hand, shape, sizes):
        with contextlib.suppress(MeldError):
            found.append(check_meld([Piece(c) for c in combo], shape))
    return found


def meld_combos(hand: Sequence[str], shape: MeldShape,
                sizes: Collection[int] | None = None, runs: bool = True) -> list[list[str]]:
    """The multisets of cards :func:`candidate_melds` reads, each once (as first made),
    not yet read: the valid ones among them are its melds, in the same order.

    ``runs=False``: those the set search makes only (the same list less the multisets
    only the run search makes: sets are searched first)."""
    if sizes is not None and not sizes:
        return []
    wanted = range(3, len(hand) + 1) if sizes is None else sizes
    wilds = _wilds(hand, shape)
    seen: dict[tuple[str, ...], list[str]] = {}
    for combo in itertools.chain(_set_combos(hand, shape, wanted, wilds),
                                 _run_combos(hand, shape, wanted, wilds) if runs else ()):
        seen.setdefault(tuple(sorted(combo)), combo)
    return list(seen.values())


_Wilds = tuple[int, list[list[tuple[str, ...]]]]
"""What :func:`_wilds` finds: the wild budget, and the wild multisets of each size."""


def _wilds(hand: Sequence[str], shape: MeldShape) -> _Wilds:
    """How many wilds one new meld of ``hand`` may hold (the hand's, within the shape's
    limit), and for each count the distinct multisets of the hand's wilds of that size: the
    wilds of a hand are not all alike (a joker, a 2 of clubs and a 2 of spades are three
    melds apart, and a 2 may be wanted as a natural elsewhere: DUMMY-WILDS)."""
    wilds = sorted(_wild_cards(hand, shape))
    budget = len(wilds) if shape.max_wilds is None else min(len(wilds), shape.max_wilds)
    return budget, [sorted(set(itertools.combinations(wilds, w))) for w in range(budget + 1)]


def _held(combo: Sequence[str], held: Counter[str]) -> bool:
    """Whether ``held`` (a hand, counted) holds each card of ``combo`` as often as ``combo``
    takes it: ``Counter(combo) <= held``, without counting ``combo`` (every card of a
    combo comes from the hand, and a combo is a few cards)."""
    return all(combo.count(c) <= held[c] for c in combo)


def _set_combos(hand: Sequence[str], shape: MeldShape, sizes: Collection[int],
                wilds: _Wilds) -> Iterator[list[str]]:
    """Every multiset of naturals of one rank (of different suits where the shape asks it)
    with every multiset of wilds (``wilds``: :func:`_wilds`), three cards or more and
    within the set's largest size."""
    budget, wild_sets = wilds
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
            # the numbers of wilds that give a size asked for
            counts = [w for w in range(max(0, 3 - size), min(budget, top - size) + 1)
                      if size + w in sizes]
            if not counts:
                continue
            for nat in sorted(set(itertools.combinations(pool, size))):
                for w in counts:
                    for wild in wild_sets[w]:
                        combo = [*nat, *wild]
                        # a 2 that may be natural or wild is taken once only
                        if not shape.flexible_twos or _held(combo, held):
                            yield combo


def _run_combos(hand: Sequence[str], shape: MeldShape, sizes: Collection[int],
                wilds: _Wilds) -> Iterator[list[str]]:
    """Every multiset of cards that can be laid as a run: naturals of different places
    (from the first to the last, any held between them left out for a wild), each place
    by any card of its rank the hand holds (runs of mixed suits: DUMMY-RUN), with every
    multiset of wilds (``wilds``: :func:`_wilds`) that fills the places left out and may
    extend the run at its ends."""
    budget, wild_sets = wilds
    naturals = [c for c in hand if not shape.is_wild(c)]
    if shape.flexible_twos:
        naturals += [c for c in hand if c[0] == "2" and c != JOKER]
    groups: list[list[str]]
    if shape.run_same_suit:
        groups = [[c for c in naturals if c[1] == s] for s in "SHDC"]
    else:
        groups = [naturals]
    around = shape.ace == "around"
    top = 13 if around else shape.high_end()
    held = Counter(hand)
    for group in groups:
        of_rank: dict[str, list[str]] = {}
        for c in sorted(set(group)):
            of_rank.setdefault(c[0], []).append(c)
        if not of_rank:
            continue
        # the cards that can stand at each place the group holds: places 1..top (an ace
        # is 1 and, ace high, 14); around, places go on past 13
        options: dict[int, list[str]] = {}
        for rank, of_this_rank in of_rank.items():
            for pos in range(_PLACE[rank], 2 * top + 1, 13):
                options[pos] = of_this_rank
        # a run's first and last natural stand at places the group holds: only those are
        # tried, in order (the places between them it holds are its inner ones)
        held_places = sorted(options)
        for at, first in enumerate(held_places):
            if first > top:
                break
            last_place = first + 12 if around else top
            inner: list[int] = []
            for last in held_places[at:]:
                if last > last_place:
                    break
                span = last - first + 1
                empty = max(0, span - 2 - len(inner))
                if empty > budget:
                    break  # a longer span only leaves more places empty
                room = 13 - span if around else (first - 1) + (top - last)
                # a card can be taken more often than the hand holds it only when a 2 may
                # be natural and wild, runs mix suits, or an ace stands at both ends
                verify = shape.flexible_twos or not shape.run_same_suit or span > 13
                # at most the places between are left out for wilds
                for dropped in range(min(budget - empty, len(inner)) + 1):
                    # the places naturals take: the first, the last, those between kept
                    count = len(inner) - dropped + (1 if last == first else 2)
                    gaps = empty + dropped
                    # the numbers of wilds that fill the gaps, fit at the ends and give a
                    # size asked for: the same for every choice of the places left out
                    counts = [w for w in range(max(gaps, 3 - count), min(budget, gaps + room) + 1)
                              if count + w in sizes]
                    if not counts:
                        continue
                    for left_out in itertools.combinations(inner, dropped):
                        places = [first, *(p for p in inner if p not in left_out)]
                        if last != first:
                            places.append(last)
                        for w in counts:
                            for cards in itertools.product(*(options[p] for p in places)):
                                for wild in wild_sets[w]:
                                    combo = [*cards, *wild]
                                    if not verify or _held(combo, held):
                                        yield combo
                if last != first:
                    inner.append(last)  # between this first and the next last


def best_combination(hand: Sequence[str], melds: Sequence[Meld], *, need_points: int = 0,
                     must_use: str | None = None, need_clean_run: bool = False,
                     keep: int = 0, limit: int = 20_000,
                     require_any: bool = False,
                     spent: list[int] | None = None) -> list[Meld] | None:
    """Disjoint ``melds`` drawn from ``hand`` meeting every condition, or None.

    ``need_points``: their points add up to at least this; ``must_use``: one of them holds
    this card; ``need_clean_run``: one is a run without wilds; ``keep``: at least this many
    cards stay in hand; ``require_any``: at least one meld even when nothing else is asked.
    Depth-first over melds, richest first, giving up after ``limit``
    steps (it then answers None: the search only ever claims what it has found); a branch
    that can no longer get a clean run or ``must_use`` is not explored. ``spent``: a
    one-item list the steps taken are added to, for a caller sharing one budget among
    several searches.
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
    found = dfs(0, dict(Counter(hand)), len(hand), [], 0, False, False)
    if spent is not None:
        spent[0] += steps
    return found
