"""Compound meld actions the meld search can find whole: a contract of melds of given
kinds and sizes (DUMMY-CONTRACTS) and melds of every card but one (WROTHAM-LATE). (The
Rummy 51 opening is planned in :mod:`service.rules.planning`.) The variants reach these
through their ``compound_action`` hook. Each answer is an example move; the search is
constructive and bounded, so None means none was found."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from service.rules.cards import JOKER, RANKS
from service.rules.melds import Meld, MeldError, MeldShape, Piece, check_meld, read_as
from service.rules.moves import MeldMove
from service.rules.search import candidate_melds, meld_combos

SEARCH_STEPS = 3000


@dataclass(frozen=True)
class Need:
    """One meld of a contract: its kind (``"set"`` or ``"run"``) and its least size."""

    kind: str
    size: int


def melds_move(melds: list[Meld]) -> MeldMove:
    return MeldMove(tuple(tuple(Piece(c) for c in m.cards) for m in melds))


def _blind(shape: MeldShape) -> Callable[[str], str]:
    """Where suits do not matter to a meld (runs of mixed suits, sets of any suits:
    DUMMY-RUN, DUMMY-SET), every card of a rank is as good as another, and every 2 (wild,
    or a natural 2) too: one code per rank stands for them all, so that the search does
    not try each choice of suits. Else each card stands for itself."""
    if shape.run_same_suit or shape.set_distinct_suits:
        return lambda card: card
    return lambda card: card if card == JOKER else card[0] + "S"


def _may_read_as(combo: Sequence[str], shape: MeldShape, kind: str) -> bool:
    """False when ``combo`` (cards, none declared) certainly has no reading as a ``kind``,
    by a test the meld validator makes on its naturals (the cards the shape does not call
    wild) whatever the reading: a set's naturals are all of one rank (C-SET); a run holds
    each rank at one place only, but for the ace, low and high in a run long enough
    (C-RUN). Such a combo is not read: it would be read only to be dropped."""
    ranks = [c[0] for c in combo if not shape.is_wild(c)]
    if kind == "set":
        return len(set(ranks)) <= 1
    ranks = [r for r in ranks if r != RANKS[0]]
    return len(set(ranks)) == len(ranks)


def _sets_suffice(shape: MeldShape) -> bool:
    """Whether a contract of sets only may be searched among the hand's set multisets
    alone (:func:`~service.rules.search.meld_combos` with ``runs=False``), with the same
    melds read, in the same order: where a set takes any number of cards, suits may repeat
    and a meld may hold any number of wilds (DUMMY-SET, DUMMY-WILDS).

    Why the same: a set need reads only multisets whose naturals are of one rank
    (:func:`_may_read_as`). Such a multiset made by the run search is some cards of the
    hand of that rank (or, with none, some 2s, which stand as natural 2s: a run holds a
    card that is not a joker) with wilds of the hand, of a size asked for; the set search
    pairs every multiset of a rank's cards (of the 2s) with every multiset of the hand's
    wilds of a size asked for, so it makes that multiset too. It runs first, so that
    multiset keeps its place, and its order of cards, in the list; the run search only
    adds multisets after them that a set need does not read."""
    return shape.set_max is None and not shape.set_distinct_suits and shape.max_wilds is None


class _Readings:
    """The melds of ``combos`` (in their order) of a contract meld's size that read as its
    kind, with their cards counted: read as the search first reaches each (a search that
    finds a contract early reads few of them). A combo that :func:`_may_read_as` rules
    out is not read: it would not be among them."""

    def __init__(self, combos: Sequence[Sequence[str]], shape: MeldShape, need: Need) -> None:
        self._todo = (c for c in combos
                      if len(c) == need.size and _may_read_as(c, shape, need.kind))
        self._shape = shape
        self._kind = need.kind
        self._read: list[tuple[Meld, Counter[str]]] = []

    def at(self, j: int) -> tuple[Meld, Counter[str]] | None:
        """The ``j``-th reading, None past the last."""
        while len(self._read) <= j:
            combo = next(self._todo, None)
            if combo is None:
                return None
            try:
                meld = check_meld([Piece(c) for c in combo], self._shape)
            except MeldError:
                continue
            reading = read_as([Piece(c) for c in meld.cards], self._shape, self._kind, meld)
            if reading is not None:
                self._read.append((reading, Counter(reading.cards)))
        return self._read[j]


def _contract_melds(cards: Sequence[str], shape: MeldShape, needs: Sequence[Need]
                    ) -> dict[Need, _Readings]:
    """For each of a contract's ``needs``, the melds of ``cards`` (the hand, coded:
    :func:`_blind`) of its size that read as its kind, in the order the contract search
    tries them: those with fewer wild cards first, else as :func:`meld_combos` lists them.
    A contract of sets only leaves out the hand's runs where :func:`_sets_suffice`."""
    runs = any(n.kind == "run" for n in needs) or not _sets_suffice(shape)
    combos = meld_combos(cards, shape, frozenset(n.size for n in needs), runs=runs)
    combos.sort(key=lambda m: (sum(map(shape.is_wild, m)), len(m)))
    return {need: _Readings(combos, shape, need) for need in needs}


def find_contract(hand: Sequence[str], shape: MeldShape, contract: Sequence[Need]
                  ) -> MeldMove | None:
    """Melds of ``hand`` that make up ``contract`` (a Dummy contract's melds), leaving a
    card to discard.

    The contract's sizes are minimums, and a longer meld holds one of the size asked in its
    own cards (a set's cards of that number with a natural among them; a run's places of
    that number around a natural), so melds of exactly those sizes are searched for.
    Depth-first over the contract's melds, largest first, each drawn from the hand's melds
    that read as its kind, those with fewer wild cards first (the cards contracts run
    short of); a meld asked for twice is chosen in the order of the list (the same pairs
    are not tried both ways round). A hand that the contract's sizes leave no card to
    discard holds none.
    """
    needs = sorted(contract, key=lambda n: (-n.size, n.kind))
    if sum(n.size for n in needs) >= len(hand):
        return None
    code = _blind(shape)
    cards = [code(c) for c in hand]
    options = _contract_melds(cards, shape, needs)
    steps = 0

    def dfs(i: int, left: dict[str, int], chosen: list[Meld], start: int) -> bool:
        nonlocal steps
        if i == len(needs):
            return True
        choices = options[needs[i]]
        j = start if i and needs[i] == needs[i - 1] else 0
        while (choice := choices.at(j)) is not None:
            j += 1
            steps += 1
            if steps > SEARCH_STEPS:
                return False
            meld, need = choice
            if any(left.get(c, 0) < n for c, n in need.items()):
                continue
            rest = dict(left)
            for c, n in need.items():
                rest[c] -= n
            chosen.append(meld)
            if dfs(i + 1, rest, chosen, j):
                return True
            chosen.pop()
        return False

    chosen: list[Meld] = []
    if not dfs(0, dict(Counter(cards)), chosen, 0):
        return None
    # each code back to a card of the hand it stands for
    pool: dict[str, list[str]] = {}
    for card in hand:
        pool.setdefault(code(card), []).append(card)
    return MeldMove(tuple(tuple(Piece(pool[c].pop()) for c in meld.cards) for meld in chosen))


def find_all_but_one(hand: Sequence[str], shape: MeldShape, barred: str | None
                     ) -> MeldMove | None:
    """Melds holding every card of ``hand`` but one, which is not ``barred`` (Wrotham's
    late deals: the card left is discarded, and the card just taken from the discard pile
    may not be, C-DISCARD-BACK).

    The hand's melds are searched once (the melds of the hand less a card are those of
    them it still holds). A card in no meld at all can only be the one left; otherwise each
    card is tried as the one left, and the rest covered depth-first, the card held by the
    fewest melds that fit first.
    """
    melds = candidate_melds(hand, shape)
    holding: dict[str, list[tuple[Meld, Counter[str]]]] = {}
    for meld in melds:
        need = Counter(meld.cards)
        for card in need:
            holding.setdefault(card, []).append((meld, need))
    loose = [c for c in hand if c not in holding]
    if len(loose) > 1:
        return None
    spares = loose or sorted(set(hand))
    steps = 0
    failed: set[frozenset[tuple[str, int]]] = set()

    def cover(left: Counter[str], chosen: list[Meld]) -> bool:
        """Cover ``left`` with melds: the card with the fewest melds that fit is covered
        first (none: a dead end), and a remainder found not to cover is not tried again."""
        nonlocal steps
        if not left:
            return True
        key = frozenset(left.items())
        if key in failed:
            return False
        fits = min(([(m, n) for m, n in holding.get(card, []) if n <= left] for card in left),
                   key=len)
        for meld, need in fits:
            steps += 1
            if steps > SEARCH_STEPS:
                return False
            chosen.append(meld)
            if cover(left - need, chosen):
                return True
            chosen.pop()
        failed.add(key)
        return False

    for spare in spares:
        if spare == barred:
            continue
        chosen: list[Meld] = []
        if cover(Counter(hand) - Counter([spare]), chosen) and chosen:  # (no meld: no finish)
            return melds_move(chosen)
    return None
