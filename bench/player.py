"""How a benchmark client picks its moves: from its seat view, cheaply, like a real bot.

A client knows only what the API shows it: each move's answer carries the mover's seat view
(the table and that seat's hand). Moves are decided locally with the engine's meld helpers
(:func:`~service.rules.search.candidate_melds`, :func:`~service.rules.melds.extend_meld`)
on the seat's own hand and the table of the view — the referee stays the judge.

One turn: draw (the stock; the top discard when it makes a meld with the hand, where the
variant lets that be simple), put down the melds found (an R51/L14 opening when it reaches
the points, a Dummy contract, a Wrotham late deal's all-but-one), lay off what fits, one
card per move, and discard the card that helps least (announcing the last card in R51/L14,
keeping cards that fit a table meld under Dummy's ``playable_discard``).

Gin (:class:`GinPlan`'s rules): pass the first upcard unless it lowers the hand's deadwood,
draw the stock (pass at the wall), knock as soon as the deadwood allows (with the
least-deadwood arrangement, :func:`~service.rules.variants.gin.arrange`), else discard the
card whose loss leaves the least deadwood; the defender lays out its best
(:func:`~service.rules.variants.gin.best_lay_out`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from random import Random
from typing import Any

from service.rules.cards import JOKER, rank_of, standard_deck
from service.rules.engine import meld_shape
from service.rules.melds import (
    Meld,
    MeldError,
    MeldShape,
    Piece,
    extend_meld,
    may_lay_off,
    meld_from_table,
    read_as,
)
from service.rules.memo import ByIdentity
from service.rules.ruleset import Rules
from service.rules.search import best_combination, candidate_melds
from service.rules.variants import find_variant
from service.rules.variants.dummy import CONTRACTS
from service.rules.variants.gin import arrange, arrange_discards, best_lay_out

Wire = dict[str, Any]

RANK = {card: rank_of(card) for card in (*standard_deck(), JOKER)}
"""Each card's rank (:func:`rank_of`), read from a table: a decision asks it about twenty
times."""


def _wild_cards(shape: MeldShape) -> frozenset[str]:
    return frozenset(card for card in RANK if shape.is_wild(card))


wild_cards: ByIdentity[MeldShape, frozenset[str]] = ByIdentity(_wild_cards)
"""The cards a meld shape takes as wild, made once per shape (shapes are shared by the games
of one set of knobs): a set to look a card up in, where ``shape.is_wild`` is a call."""


@dataclass
class TableMeld:
    """A meld of the view, as the client reads it."""

    meld_id: str
    owner: int
    meld: Meld
    fits: dict[str, bool] = field(default_factory=dict)
    """Whether each card asked about can be laid off on it (:func:`extended`), kept with
    the meld: the client reads a meld once per contents (:meth:`GamePlan.table`)."""

    def takes(self, card: str, shape: MeldShape) -> bool:
        known = self.fits.get(card)
        if known is None:
            known = self.fits[card] = extended(self.meld, card, shape) is not None
        return known


def _meld_of(view_meld: dict[str, Any], shape: MeldShape) -> TableMeld:
    cards = list(view_meld["cards"])
    idents = list(cards)
    for wild in view_meld["wilds"]:
        idents[wild["index"]] = wild["as"]
    # a set's rank, a run's first position (an ace first is low; K-A-2 starts at 13)
    start = rank_of(idents[0])
    return TableMeld(view_meld["meld_id"], view_meld["owner"],
                     meld_from_table(view_meld["kind"], cards, idents, start, shape))


def extended(meld: Meld, card: str, shape: MeldShape) -> Meld | None:
    """``meld`` with ``card`` laid off, if it fits (read only where the engine's own cheap
    test, :func:`~service.rules.melds.may_lay_off`, does not rule it out)."""
    if not may_lay_off(meld, card, None, shape):
        return None
    try:
        return extend_meld(meld, (Piece(card),), shape)
    except MeldError:
        return None


def _melds_wire(melds: Sequence[Meld]) -> Wire:
    return {"type": "meld", "melds": [{"cards": list(m.cards)} for m in melds]}


def greedy(hand: Sequence[str], melds: Sequence[Meld], keep: int, limit: int | None) -> list[Meld]:
    """Disjoint melds from ``hand``, richest first, leaving at least ``keep`` cards."""
    left = Counter(hand)
    total = len(hand)
    chosen: list[Meld] = []
    for m in sorted(melds, key=lambda m: (-len(m.cards), -m.points)):
        if limit is not None and len(chosen) >= limit:
            break
        need = Counter(m.cards)
        if need <= left and total - len(m.cards) >= keep:
            left -= need
            total -= len(m.cards)
            chosen.append(m)
    return chosen


def quick_contract(hand: Sequence[str], shape: MeldShape, number: int) -> list[Meld] | None:
    """Dummy: melds making up contract ``number``, leaving a card to discard, found greedily
    (sets from the most frequent ranks, runs from the windows needing the fewest wilds;
    every 2 and joker is used as a wild) and read by the engine's own helper. Misses some
    contracts the full search would find, at a fraction of its cost."""
    needs = sorted(CONTRACTS[number - 1].needs, key=lambda n: (n.kind != "run", -n.size))
    wilds = [c for c in hand if shape.is_wild(c)]
    naturals = Counter(c for c in hand if not shape.is_wild(c))
    used = 0
    chosen: list[list[str]] = []
    for need in needs:
        best: tuple[int, list[str]] | None = None
        if need.kind == "set":
            by_rank: dict[int, list[str]] = {}
            for card, n in naturals.items():
                by_rank.setdefault(RANK[card], []).extend([card] * n)
            for cards in by_rank.values():
                take = cards[:need.size]
                missing = need.size - len(take)
                if missing <= len(wilds) and (best is None or missing < best[0]):
                    best = (missing, take)
        else:
            by_rank = {}
            for card, n in naturals.items():
                if n:
                    by_rank.setdefault(RANK[card], []).append(card)
            for first in range(1, 16 - need.size):
                take = []
                for pos in range(first, first + need.size):
                    at_pos = by_rank.get(1 if pos == 14 else pos)
                    if at_pos and at_pos[0] not in take:
                        take.append(at_pos[0])
                missing = need.size - len(take)
                if take and missing <= len(wilds) and (best is None or missing < best[0]):
                    best = (missing, take)
        if best is None:
            return None
        missing, take = best
        meld = [*take, *wilds[:missing]]
        wilds = wilds[missing:]
        naturals -= Counter(take)
        used += len(meld)
        chosen.append(meld)
    if used >= len(hand):
        return None
    readings = []
    for cards, need in zip(chosen, needs, strict=True):
        reading = read_as([Piece(c) for c in cards], shape, need.kind)
        if reading is None:
            return None
        readings.append(reading)
    return readings


def _key(meld: Meld) -> tuple[str, ...]:
    return tuple(sorted(meld.cards))


GAINED_AT_MOST = 3
"""The most cards a hand may have gained since the last search for :class:`HandMelds` to
search only around them (a new deal is searched whole)."""


class HandMelds:
    """:func:`candidate_melds` of a seat's hand, sorted by their cards, found again for each
    new hand from those of the hand searched last: the melds that it still holds, and those
    holding a card it gained, searched for among the cards that can share a meld with it
    (the wilds, its rank and its suit). Between two turns a hand loses its discard and its
    melds and gains a card or two, so this searches a few cards instead of the hand.

    Exact (the tests compare it with the whole search): every meld of the new hand either
    holds a gained card, and is then made of such cards, or is made of cards the last hand
    held, and was one of its melds. It searches the whole hand when a gained card is wild
    (it can be in any meld) or when runs may mix suits (a card shares a run with any
    other)."""

    def __init__(self, shape: MeldShape) -> None:
        self.shape = shape
        self.hand: Counter[str] | None = None
        self.melds: list[Meld] = []

    def of(self, hand: Sequence[str]) -> list[Meld]:
        shape = self.shape
        have = Counter(hand)
        before = self.hand
        gained = have - before if before is not None else None
        if gained is None or gained.total() > GAINED_AT_MOST or not shape.run_same_suit \
                or any(shape.is_wild(c) for c in gained):
            melds = sorted(candidate_melds(hand, shape), key=_key)
        else:
            assert before is not None
            lost = [c for c in before if before[c] > have[c]]
            melds = [m for m in self.melds
                     if all(m.cards.count(c) <= have[c] for c in lost)]
            if gained:
                near = [c for c in hand if shape.is_wild(c)
                        or any(c[0] == g[0] or c[1] == g[1] for g in gained)]
                known = {_key(m) for m in melds}  # those of the near cards it still holds
                melds.extend(m for m in candidate_melds(near, shape) if _key(m) not in known)
                melds.sort(key=_key)
        self.hand, self.melds = have, melds
        return list(melds)


def find_all_but_one(hand: Sequence[str], shape: MeldShape, taken: str | None,
                     everything: Sequence[Meld] | None = None) -> list[Meld] | None:
    """Wrotham late deals: melds holding every card of the hand but one (WROTHAM-LATE), from
    ``everything`` (the hand's :func:`candidate_melds`; searched when not given)."""
    if everything is None:
        everything = candidate_melds(hand, shape)
    covered = {c for m in everything for c in m.cards}
    loose = set(hand) - covered
    if len(loose) > 1:
        return None  # two cards fit no meld at all: they cannot both be the spare
    for spare in sorted(loose or set(hand)):
        if spare == taken:
            continue
        rest = list(hand)
        rest.remove(spare)
        have = Counter(rest)
        candidates = [m for m in everything if Counter(m.cards) <= have]
        steps = 0

        def cover(left: Counter[str], chosen: list[Meld],
                  candidates: list[Meld] = candidates) -> list[Meld] | None:
            nonlocal steps
            if left.total() == 0:
                return list(chosen)
            first = min(c for c, n in left.items() if n > 0)
            for meld in candidates:
                steps += 1
                if steps > 500 or first not in meld.cards:
                    continue
                need = Counter(meld.cards)
                if not need <= left:
                    continue
                chosen.append(meld)
                found = cover(left - need, chosen)
                chosen.pop()
                if found is not None:
                    return found
            return None

        found = cover(Counter(rest), [])
        if found:
            return found
    return None


def _may_open(hand: Sequence[str], melds: Sequence[Meld], need: int, clean_run: bool) -> bool:
    """A cheap necessary condition for an opening: a clean run if one is needed, and the
    melds' best points per card, over the cards some meld can use, reach ``need``."""
    if not melds or (clean_run and not any(m.kind == "run" and not m.wilds for m in melds)):
        return False
    per_card: dict[str, float] = {}
    for m in melds:
        value = m.points / len(m.cards)
        for c in m.cards:
            per_card[c] = max(per_card.get(c, 0.0), value)
    have = Counter(hand)
    return sum(v * have[c] for c, v in per_card.items()) >= need


def _run_places(naturals: Sequence[str], same_suit: bool = True) -> set[tuple[str, int]]:
    """(suit, position) of each natural ("" for the suit of mixed-suit runs); an ace holds
    position 1 and 14."""
    held = {(c[1] if same_suit else "", RANK[c]) for c in naturals}
    return held | {(suit, 14) for suit, rank in held if rank == 1}


def _has_clean_run(hand: Sequence[str], shape: MeldShape) -> bool:
    """Three naturals of one suit in sequence (ace low or high)."""
    wild = wild_cards(shape)
    held = _run_places([c for c in hand if c not in wild])
    return any((suit, rank + 1) in held and (suit, rank + 2) in held for suit, rank in held)


def may_meld(hand: Sequence[str], shape: MeldShape) -> bool:
    """A cheap necessary condition for any new meld of three or more cards: a rank held
    three times, or three positions in a row of one suit, counting the wilds as any card
    (the meld search costs far more and mostly finds nothing in a hand without either)."""
    wild = wild_cards(shape)
    naturals = [c for c in hand if c not in wild]
    wilds = len(hand) - len(naturals)
    if wilds >= 2 or shape.ace == "around":
        return True
    need = 3 - wilds
    counts: dict[int, int] = {}
    for c in naturals:
        rank = RANK[c]
        counts[rank] = n = counts.get(rank, 0) + 1
        if n >= need:
            return True
    held = _run_places(naturals, shape.run_same_suit)
    for suit, rank in held:
        if 1 + ((suit, rank + 1) in held) + ((suit, rank + 2) in held) >= need:
            return True
        if wilds and (suit, rank + 1) not in held and (suit, rank + 2) in held:
            return True
    return False


def isolated_gain(before: Counter[str], hand: Sequence[str], shape: MeldShape) -> bool:
    """Whether ``hand`` is ``before`` less some cards plus one card that can be in no meld
    with the others: not wild, no other card of its rank, none of its suit within two ranks
    (an ace counting low and high), and fewer than two wilds to go with it."""
    gained = Counter(hand) - before
    if gained.total() != 1 or shape.ace == "around":
        return False
    card = next(iter(gained))
    others = list(hand)
    others.remove(card)
    wild = wild_cards(shape)
    if card in wild or sum(1 for c in others if c in wild) >= 2:
        return False
    rank = RANK[card]
    near = {rank - 2, rank - 1, rank + 1, rank + 2}
    if rank == 1:
        near |= {12, 13}
    elif rank >= 12:
        near.add(1)
    for other in others:
        if other in wild:
            continue
        other_rank = RANK[other]
        if other_rank == rank:
            return False
        if (other[1] == card[1] or not shape.run_same_suit) and other_rank in near:
            return False
    return True


def helpfulness(hand: Sequence[str], shape: MeldShape) -> dict[str, int]:
    """How much each card helps the hand toward melds: other cards of its rank, and cards
    of its suit one or two ranks away (wilds always help). Each distinct card is scored once
    (a hand holds some twice in two-deck games)."""
    wild = wild_cards(shape)
    by_rank: dict[int, int] = {}
    by_card: dict[tuple[str, int], int] = {}
    for card in hand:
        if card not in wild:
            rank = RANK[card]
            by_rank[rank] = by_rank.get(rank, 0) + 1
            key = (card[1], rank)
            by_card[key] = by_card.get(key, 0) + 1
    near = by_card.get
    out: dict[str, int] = {}
    for card in hand:
        if card in out:
            continue
        if card in wild:
            out[card] = 100
            continue
        rank, suit = RANK[card], card[1]
        out[card] = (3 * (by_rank[rank] - 1)
                     + 2 * (near((suit, rank - 1), 0) + near((suit, rank + 1), 0))
                     + near((suit, rank - 2), 0) + near((suit, rank + 2), 0))
    return out


def helpfulness_of(card: str, hand: Sequence[str], shape: MeldShape) -> int:
    """``helpfulness([*hand, card], shape)[card]``, the other cards read once each."""
    wild = wild_cards(shape)
    if card in wild:
        return 100
    rank, suit = RANK[card], card[1]
    weights = {rank - 2: 1, rank - 1: 2, rank + 1: 2, rank + 2: 1}
    score = 0
    for other in hand:
        if other in wild:
            continue
        other_rank = RANK[other]
        if other_rank == rank:
            score += 3
        elif other[1] == suit:
            score += weights.get(other_rank, 0)
    return score


@dataclass
class Seat:
    """What a client tracks of one seat in one game."""

    hand: list[str] | None = None
    stage: str = "draw"
    """Where the seat is in its turn: draw, meld (nothing put down yet), lay_off."""
    opened_at_start: bool = False
    barren: tuple[bool, Counter[str]] | None = None
    """R51/L14: (opened, hand) when the meld step last found the hand barren."""
    melds: HandMelds | None = None
    """The melds of the hand last searched, for the next search (:class:`HandMelds`)."""
    held_before_take: int = 0
    """Copies of the top discard the hand held when the seat last chose its draw: when it
    took that card, how many it held before (C-DISCARD-BACK)."""


@dataclass
class GamePlan:
    """A game as one client sees it: the latest view and what it knows of each seat."""

    game_id: str
    variant: str
    tokens: list[str]
    view: dict[str, Any]
    rng: Random
    seats: list[Seat] = field(default_factory=list)

    def __post_init__(self) -> None:
        rules = self.view["rules"]
        self.rules = Rules.of(rules)
        self.shape = meld_shape(find_variant(self.variant), self.rules)
        self.keep = 1 if self.rules.must_discard_to_go_out or self.variant == "dummy" else 0
        if not self.seats:
            self.seats = [Seat() for _ in self.tokens]
        self._table: dict[tuple[Any, ...], TableMeld] = {}

    def table(self) -> list[TableMeld]:
        """The view's table melds, read once per meld and contents."""
        out = []
        known = self._table
        for m in self.view["melds"]:
            key = (m["meld_id"], tuple(m["cards"]), *((w["index"], w["as"]) for w in m["wilds"]))
            meld = known.get(key)
            if meld is None:
                if len(known) > 256:
                    known.clear()
                meld = known[key] = _meld_of(m, self.shape)
            out.append(meld)
        return out

    # -- what the answers tell ---------------------------------------------------------

    def saw(self, seat: int, view: dict[str, Any], events: Sequence[dict[str, Any]]) -> None:
        """The answer to ``seat``'s move (or GET /me): its view and the move's events."""
        self.view = view
        if any(e.get("type") == "dealt" for e in events):
            for other in self.seats:
                other.hand = None
                other.stage = "draw"
                other.barren = None
        me = self.seats[seat]
        me.hand = list(view["hand"])

    @property
    def finished(self) -> bool:
        return bool(self.view["status"] != "playing")

    @property
    def to_move(self) -> int:
        turn = self.view["turn"]
        return int(turn["seat"])

    # -- deciding --------------------------------------------------------------------

    def next_move(self) -> Wire:
        """The move the seat to move makes now (its hand must be known)."""
        view = self.view
        seat = self.to_move
        me = self.seats[seat]
        hand = me.hand
        assert hand is not None
        if self.variant == "gin":
            return self._gin(hand)
        if view["turn"]["phase"] == "draw":
            me.stage = "draw"
            return self._draw(seat, hand)
        if view["discard_only"]:
            return self._discard(seat, hand, None)
        if me.stage == "draw":  # the turn's first play-phase move
            me.stage = "meld"
            me.opened_at_start = bool(view["seats"][seat]["opened"])
        taken = view.get("taken_discard")
        if me.stage == "meld":
            me.stage = "lay_off"
            move = self._melds(seat, hand, taken)
            if move is not None:
                return move
        if me.stage == "lay_off":
            move = self._lay_off(seat, hand, taken)
            if move is not None:
                return move
            me.stage = "discard"
        return self._discard(seat, hand, taken)

    def _gin(self, hand: list[str]) -> Wire:
        """Gin's move (GIN-FIRST, GIN-KNOCK, GIN-WALL, GIN-LAYOFF)."""
        view = self.view
        facts = view["gin"]
        phase = view["turn"]["phase"]
        if phase == "lay_out":
            knock = facts["knock"]
            table = [(m["meld_id"], m["cards"]) for m in view["melds"]]
            _, melds, offs = best_lay_out(hand, table, knock["kind"] != "knock")
            return {"type": "lay_out", "melds": [{"cards": list(m)} for m in melds],
                    "lay_offs": [{"meld_id": mid, "cards": list(cards)} for mid, cards in offs]}
        top = view["discard_top"]
        if phase == "draw":
            if facts["wall"]:
                return {"type": "pass"}
            helps = top is not None and _gin_best([*hand, top], top)[0] < arrange(hand)[0]
            if helps:
                return {"type": "draw", "source": "discard"}
            if facts["upcard_offer"] is not None:
                return {"type": "pass"}
            return {"type": "draw", "source": "stock"}
        taken = None if self.rules.discard_taken_card else view.get("taken_discard")
        dead, card, melds = _gin_best(hand, taken)
        if dead <= facts["knock_limit"]:
            return {"type": "knock", "card": card, "melds": [{"cards": list(m)} for m in melds]}
        return {"type": "discard", "card": card}

    def _late_wrotham(self) -> bool:
        deals = (self.rules.match_end or {}).get("deals", 6)
        return self.variant == "wrotham" and int(self.view["hand_number"]) > deals - 3

    def _draw(self, seat: int, hand: list[str]) -> Wire:
        top = self.view["discard_top"]
        self.seats[seat].held_before_take = hand.count(top) if top is not None else 0
        if top is not None and not self.shape.is_wild(top):
            if self.variant in ("basic", "wrotham") and not self._late_wrotham():
                if self._helpfulness_of(top, hand) >= 5:
                    return {"type": "draw", "source": "discard"}
            elif self.variant == "dummy" and not self.view["seats"][seat]["opened"] \
                    and self._helpfulness_of(top, hand) >= 6:
                return {"type": "draw", "source": "discard"}
        return {"type": "draw", "source": "stock"}

    def _helpfulness_of(self, card: str, hand: list[str]) -> int:
        return helpfulness_of(card, hand, self.shape)

    def _search(self, seat: int, hand: Sequence[str]) -> list[Meld]:
        me = self.seats[seat]
        if me.melds is None:
            me.melds = HandMelds(self.shape)
        return me.melds.of(hand)

    def _candidates(self, seat: int, hand: Sequence[str]) -> list[Meld]:
        if not may_meld(hand, self.shape):
            return []
        found = self._search(seat, hand)
        if self.variant == "lebanese14":  # L14-JOKER-RUN: no joker in new runs, simply
            found = [m for m in found if not (m.kind == "run" and JOKER in m.cards)]
        return found

    def _leaves_taken(self, hand: Sequence[str], melds: Sequence[Meld], taken: str | None
                      ) -> bool:
        if taken is None:
            return False
        left = Counter(hand) - Counter(c for m in melds for c in m.cards)
        return left.total() == 1 and left[taken] == 1

    def _melds(self, seat: int, hand: list[str], taken: str | None) -> Wire | None:
        opened = bool(self.view["seats"][seat]["opened"])
        if self.variant in ("rummy51", "lebanese14"):
            me = self.seats[seat]
            if me.barren is not None and me.barren[0] == opened \
                    and isolated_gain(me.barren[1], hand, self.shape):
                return None  # nothing new to meld with: no search
            move, barren = self._r51_melds(seat, hand, opened)
            me.barren = (opened, Counter(hand)) if barren else None
            return move
        if self.variant == "dummy":
            if opened:
                return None
            number = int(self.view["seats"][seat]["contract"]["number"])
            found = quick_contract(hand, self.shape, number)
            if found is None or self._leaves_taken(hand, found, taken):
                return None
            return _melds_wire(found)
        if self._late_wrotham():
            found = find_all_but_one(hand, self.shape, taken, self._search(seat, hand))
            return _melds_wire(found) if found else None
        chosen = greedy(hand, self._candidates(seat, hand), self.keep, self.rules.melds_limit)
        while chosen and self._leaves_taken(hand, chosen, taken):
            chosen.pop()
        return _melds_wire(chosen) if chosen else None

    def _r51_melds(self, seat: int, hand: list[str], opened: bool) -> tuple[Wire | None, bool]:
        """R51/L14: the melds to put down, and whether the hand is barren — no meld and
        no opening whatever cards it keeps (then a hand that only gains an isolated card
        is barren too, :func:`isolated_gain`)."""
        if not opened and self.rules.opening_requires_clean_run \
                and not _has_clean_run(hand, self.shape):
            return None, True  # R51-OPEN needs a clean run: skip the meld search
        candidates = self._candidates(seat, hand)
        if not candidates:
            return None, True
        if not opened:
            need = max(self.rules.opening_points, 1)
            if not _may_open(hand, candidates, need, self.rules.opening_requires_clean_run):
                return None, True
            found = best_combination(hand, candidates, need_points=need,
                                     need_clean_run=self.rules.opening_requires_clean_run,
                                     keep=1, limit=400)
            return (_melds_wire(found) if found else None), False
        chosen = greedy(hand, candidates, self.keep, None)
        return (_melds_wire(chosen) if chosen else None), False

    def _lay_off(self, seat: int, hand: list[str], taken: str | None) -> Wire | None:
        view = self.view
        if self._late_wrotham():
            return None
        if self.variant in ("rummy51", "lebanese14", "dummy") and \
                not view["seats"][seat]["opened"]:
            return None
        if self.variant == "dummy" and not self.seats[seat].opened_at_start:
            return None  # DUMMY-AFTER: from the turn after the contract on
        if self.rules.lay_off_requires_own_meld and not view["seats"][seat]["opened"]:
            return None
        if len(hand) - 1 < self.keep:
            return None
        no_joker = self.variant in ("rummy51", "lebanese14")
        table = self.table()
        for card in sorted(set(hand)):
            if no_joker and card == JOKER:
                continue
            if taken is not None and len(hand) == 2 and card != taken and taken in hand:
                continue  # would leave only the card taken from the discard pile
            for target in table:
                if target.takes(card, self.shape):
                    return {"type": "lay_off", "meld_id": target.meld_id, "cards": [card]}
        return None

    def _discard(self, seat: int, hand: list[str], taken: str | None) -> Wire:
        if taken is not None and self.seats[seat].held_before_take > 0:
            taken = None  # C-DISCARD-BACK: a copy was held before the take, so it may go back
        choices = [c for c in hand if c != taken] or list(hand)
        if self.variant == "dummy" and self.rules.playable_discard == "forbid" \
                and self.view["melds"] and len(hand) > 1:
            table = self.table()
            safe = [c for c in choices if not any(t.takes(c, self.shape) for t in table)]
            choices = safe or choices
        helps = helpfulness(hand, self.shape)
        card = min(choices, key=lambda c: (helps[c], -RANK[c], c))
        move: Wire = {"type": "discard", "card": card}
        if self.variant in ("rummy51", "lebanese14") and len(hand) == 2:
            move["announce"] = True
        return move


def _gin_best(hand: Sequence[str], keep: str | None
              ) -> tuple[int, str, tuple[tuple[str, ...], ...]]:
    """The least deadwood ``hand`` is left with after one discard (not ``keep``), that
    discard (the first in card order among equals) and the melds that leave it: one search
    over the whole hand (:func:`~service.rules.variants.gin.arrange_discards`), not one
    for each card it might discard."""
    options = arrange_discards(hand)
    card = min((c for c in options if c != keep), key=lambda c: (options[c][0], c))
    dead, melds = options[card]
    return dead, card, melds


VARIANT_PLAYERS = {"basic": (2, 3, 4), "rummy51": (4, 3, 2), "lebanese14": (3, 4, 2),
                   "dummy": (3, 2, 4), "wrotham": (4, 2, 3), "gin": (2,)}
"""Players per game by variant (cycled), every variant at every table size."""


def new_game_body(variant: str, index: int) -> Wire:
    sizes = VARIANT_PLAYERS[variant]
    players = sizes[index % len(sizes)]
    return {"variant": variant, "players": [f"p{i}" for i in range(players)]}
