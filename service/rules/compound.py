"""Compound meld actions the meld search can find whole: a contract of melds of given
kinds and sizes (DUMMY-CONTRACTS) and melds of every card but one (WROTHAM-LATE). (The
Rummy 51 opening is planned in :mod:`service.rules.planning`.) The variants reach these
through their ``compound_action`` hook. Each answer is an example move; the search is
constructive and bounded, so None means none was found."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from service.rules.cards import JOKER
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


class _Readings:
    """The melds of ``combos`` (in their order) of a contract meld's size that read as its
    kind, with their cards counted: read as the search first reaches each (a search that
    finds a contract early reads few of them)."""

    def __init__(self, combos: Sequence[Sequence[str]], shape: MeldShape, need: Need) -> None:
        self._todo = (c for c in combos if len(c) == need.size)
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
    code = _blind(shape)
    cards = [code(c) for c in hand]
    combos = meld_combos(cards, shape, frozenset(n.size for n in needs))
    combos.sort(key=lambda m: (sum(map(shape.is_wild, m)), len(m)))
    options = {need: _Readings(combos, shape, need) for need in needs}
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
    if sum(n.size for n in needs) >= len(hand) or not dfs(0, dict(Counter(cards)), chosen, 0):
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
