"""What a hand can still put on the table this turn: the planning behind Rummy 51's and
the Lebanese 14's obligations (R51-OPEN, R51-DRAW, R51-SWAP, L14-DRAW) and the opening the
legal-move listing offers.

Where a rule makes the player commit to something later in the turn (use the taken
discard, put a swapped joker back, reach 71 points in the Lebanese game), the variant
refuses a move after which that could no longer be done (:mod:`service.rules.variants.
rummy51`), so a turn can always end; these searches answer whether it still can. They are
*constructive* (built on :mod:`service.rules.search`): "possible" means the melds and
lay-offs were found, and a bounded search that runs out answers "not found". They read the
variant only through the turn's hooks (its reading filter, its melding values).
"""

from __future__ import annotations

import contextlib
import itertools
from collections import Counter
from collections.abc import Callable, Iterator, Sequence

from service.rules import search
from service.rules.cards import JOKER, rank_of, remove
from service.rules.melds import Accept, Meld, MeldError, Piece, extend_meld, meld_from_table
from service.rules.moves import LayOff, MeldMove
from service.rules.variants.base import Turn

PUT_DOWN_CARDS = 8
"""The most cards of a hand :func:`_put_down` considers laying off."""
PUT_DOWN_TRIES = 64
"""The most choices of cards to lay off it tries (each a meld search), fewest cards first."""
PUT_DOWN_STEPS = 20_000
"""The steps its meld searches take together at most (as many as one search alone may):
the worst a made-up hand and table can cost it stays bounded."""


class Table:
    """The table's melds as the lay-off searches read them, and what each grows to with
    cards laid on it, all read together against the meld as it is (as the engine reads one
    lay-off). Cached: a search asks the same many times. R51-JOKER-OPP: no joker on an
    opponent's run."""

    def __init__(self, turn: Turn, accept: Accept | None,
                 melds: list[tuple[int, Meld]]) -> None:
        self.turn = turn
        self.accept = accept
        self.melds = melds
        """``(owner, meld)`` pairs, in the table's order."""
        self._grown: dict[tuple[int, tuple[str, ...]], Meld | None] = {}
        self._fits: dict[str, list[int]] = {}

    def grown(self, i: int, cards: tuple[str, ...]) -> Meld | None:
        """Meld ``i`` with ``cards`` laid on it, or None when they do not go on it."""
        key = (i, cards)
        if key in self._grown:
            return self._grown[key]
        owner, meld = self.melds[i]
        grown = None
        if not (JOKER in cards and meld.kind == "run" and owner != self.turn.seat):
            with contextlib.suppress(MeldError):
                grown = extend_meld(meld, tuple(Piece(c) for c in cards), self.turn.shape,
                                    accept=self.accept)
        self._grown[key] = grown
        return grown

    def fits(self, card: str) -> list[int]:
        """The melds ``card`` alone goes on."""
        found = self._fits.get(card)
        if found is None:
            found = self._fits[card] = [
                i for i in range(len(self.melds))
                if self.may_fit(card, i) and self.grown(i, (card,)) is not None]
        return found

    def may_fit(self, card: str, i: int, laid: int = 0) -> bool:
        """False when ``card`` cannot go on meld ``i`` with ``laid`` other cards, known
        without reading it: a natural of another rank than a set's, or of another suit than
        a run's (runs of one suit), or further from a run's ends than the other cards could
        bridge (an ace at either of its two places)."""
        shape = self.turn.shape
        if shape.is_wild(card):
            return True
        meld = self.melds[i][1]
        rank = rank_of(card)
        if meld.kind == "set":
            return rank == meld.start
        if shape.run_same_suit and card[-1] != meld.idents[0][-1]:
            return False
        if shape.ace == "around":  # places past the king wrap (not a Rummy 51 reading)
            return True
        low, high = meld.start - 1 - laid, meld.end + 1 + laid
        return any(low <= place < meld.start or meld.end < place <= high
                   for place in (rank, 14 if rank == 1 else rank))


def hand_melds(turn: Turn, hand: Sequence[str],
               found: list[Meld] | None = None) -> list[Meld]:
    """The melds of ``hand`` this turn's readings allow (``found``: every meld of
    ``hand``, when the caller has searched for them already)."""
    if found is None:
        found = search.candidate_melds(hand, turn.shape)
    accept = turn.vr.reading_filter(turn)
    return found if accept is None else [m for m in found if accept(m) is None]


def _layable(turn: Turn, card: str) -> bool:
    return bool(read_table(turn).fits(card))


def opening_move(turn: Turn, hand: Sequence[str], must_use: str | None,
                 need_points: int = 0,
                 melds: list[Meld] | None = None) -> MeldMove | None:
    """An opening (R51-OPEN) ``hand`` can lay down now, holding ``must_use`` if given,
    worth at least ``need_points`` too; found by the meld search (constructive).
    ``melds``: every meld of ``hand`` (:func:`search.candidate_melds`), if known."""
    rules = turn.rules
    keep = 1 if rules.must_discard_to_go_out else 0
    target = max(rules.opening_points, need_points)
    candidates = hand_melds(turn, hand, melds)
    found = search.best_combination(
        hand, candidates, need_points=max(target, 1), must_use=must_use,
        need_clean_run=rules.opening_requires_clean_run, keep=keep)
    if found is not None:
        return MeldMove(tuple(tuple(Piece(c) for c in m.cards) for m in found))
    return _put_down(turn, hand, candidates, target, must_use, read_table(turn),
                     opening=True, keep=keep)


def _put_down(turn: Turn, hand: Sequence[str], candidates: list[Meld], need: int,
              must_use: str | None, table: Table, *, opening: bool, keep: int
              ) -> MeldMove | None:
    """New melds of ``hand`` and lay-offs of other cards of it on the table's melds,
    worth ``need`` melding points together, ``must_use`` among them, ``keep`` cards
    left, at least one card laid off; None when the search finds none (the callers
    have searched the melds alone already). The points L14-DRAW asks of a turn may come
    from lay-offs, and so may R51-OPEN's (knob ``opening_counts_lay_offs``).
    ``opening``: the action that opens (R51-OPEN): at least one meld, a clean run if
    the rules ask, and the lay-offs (in the same action, each read against its meld as
    it was) counted toward the opening only by the knob, else the melds alone reach it.

    How: for each choice of the hand's cards to lay off (fewest first, among those the
    lay-offs of the whole hand place), the richest lay-offs of exactly those, then the
    melds searched among the rest (:func:`search.best_combination`). A choice that could
    not reach ``need`` even if every card counted its most is not tried, and the meld
    searches share one budget of steps (:data:`PUT_DOWN_STEPS`). Constructive: what it
    finds is a move the engine takes."""
    rules = turn.rules
    layable = [card for card, _, _ in itertools.islice(
        _lay_off_steps(turn, hand, table), PUT_DOWN_CARDS)]
    if not layable:
        return None
    most = _most_points(turn)
    melds_alone = opening and not rules.opening_counts_lay_offs
    least = rules.opening_points if melds_alone else 1 if opening else 0
    spent = [0]
    # necessary: melds worth the rest, were the lay-offs to add the most they could
    if search.best_combination(
            hand, candidates, need_points=max(need - sum(map(most, layable)), least),
            need_clean_run=opening and rules.opening_requires_clean_run, keep=keep,
            require_any=opening, limit=PUT_DOWN_STEPS, spent=spent) is None:
        return None
    meldable = {c for m in candidates for c in m.cards}
    melds_most = sum(most(c) for c in hand if c in meldable)
    needs = [(m, Counter(m.cards)) for m in candidates]
    tried = 0
    for size in range(1, len(layable) + 1):
        for laid in sorted(set(itertools.combinations(layable, size))):
            top = melds_most - sum(most(c) for c in laid if c in meldable)
            if top + sum(most(c) for c in laid) < need or len(hand) - size < keep or (
                    melds_alone and top < rules.opening_points):
                continue
            tried += 1
            if tried > PUT_DOWN_TRIES or spent[0] >= PUT_DOWN_STEPS:
                return None
            steps = list(_lay_off_steps(turn, laid, table))
            if len(steps) < size:
                continue  # a card of the choice goes nowhere
            added = steps[-1][1]
            rest = remove(hand, laid)
            have = Counter(rest)
            found = search.best_combination(
                rest, [m for m, cards in needs if cards <= have],
                need_points=max(need - added, least),
                must_use=None if must_use in laid else must_use,
                need_clean_run=opening and rules.opening_requires_clean_run, keep=keep,
                require_any=opening, limit=PUT_DOWN_STEPS - spent[0], spent=spent)
            if found is not None:
                return MeldMove(tuple(tuple(Piece(c) for c in m.cards) for m in found),
                                _as_lay_offs(turn, steps))
    return None


def _lay_offs_worth(turn: Turn, hand: Sequence[str], need: int, keep: int,
                    table: Table, first: str | None = None
                    ) -> tuple[LayOff, ...] | None:
    """Lay-offs of ``hand``'s cards on ``table``'s melds, ``first`` among them, adding
    ``need`` melding points with ``keep`` cards left (:func:`_lay_off_steps`, as far as
    needed); None if they never do."""
    steps: list[tuple[str, int, int]] = []
    for step in _lay_off_steps(turn, hand, table, first):
        steps.append(step)
        if len(hand) - len(steps) < keep:
            return None
        if step[1] >= need:
            return _as_lay_offs(turn, steps)
    return None


def _lay_off_steps(turn: Turn, hand: Sequence[str], table: Table,
                   first: str | None = None) -> Iterator[tuple[str, int, int]]:
    """Lay-offs of ``hand``'s cards on ``table``'s melds, ``first`` before any, then
    the card adding the most at each step, for as long as one goes on: ``(card, melding
    points added so far, index of its meld)`` per step. The cards laid on one meld are
    read together against the meld as it is, as the engine reads one lay-off (two cards
    for one run, ``QH KH`` on ``5H``–``JH``, go on together, though ``KH`` alone would
    not), so :func:`_as_lay_offs` makes them one. Greedy."""
    left = list(hand)
    laid: dict[int, tuple[str, ...]] = {}
    points = [meld.points for _, meld in table.melds]
    added = 0
    while left:
        options = []
        for card in [first] if first is not None and not laid else sorted(set(left)):
            for i in {*table.fits(card), *laid}:
                on = laid.get(i, ())
                grown = table.grown(i, (*on, card)) if table.may_fit(card, i, len(on)) \
                    else None
                if grown is not None:
                    options.append((grown.points - points[i], card, i, grown))
        if not options:
            return
        gain, card, i, grown = max(options, key=lambda o: (o[0], o[1], -o[2]))
        laid[i] = (*laid.get(i, ()), card)
        points[i] = grown.points
        left = remove(left, [card])
        added += gain
        yield card, added, i


def _as_lay_offs(turn: Turn, steps: Sequence[tuple[str, int, int]]) -> tuple[LayOff, ...]:
    """The lay-offs :func:`_lay_off_steps` made: one per meld, in the order first laid
    on."""
    ids = [m.id for m in turn.state.melds]
    laid: dict[int, list[str]] = {}
    for card, _, i in steps:
        laid.setdefault(i, []).append(card)
    return tuple(LayOff(ids[i], tuple(Piece(c) for c in cards))
                 for i, cards in laid.items())


def _most_points(turn: Turn) -> Callable[[str], int]:
    """The most melding points a card can add to a meld: a natural its value (an ace
    high), a wild the most any card is worth."""
    value = turn.vr.meld_value(turn.rules)
    top = max(value(rank, True) for rank in range(1, 14))

    def most(card: str) -> int:
        if turn.shape.is_wild(card):
            return top
        rank = rank_of(card)
        return max(value(rank, True), value(rank, False))

    return most


def read_table(turn: Turn) -> Table:
    """The table's melds as the lay-off searches read them."""
    return Table(turn, turn.vr.reading_filter(turn), table_melds(turn))


def table_melds(turn: Turn) -> list[tuple[int, Meld]]:
    """The table's melds as ``(owner, meld)`` pairs, as the lay-off helpers read them."""
    return [(m.owner, meld_from_table(m.kind, m.cards, m.idents, m.start, turn.shape))
            for m in turn.state.melds]


def _lay_offs(turn: Turn, table: Sequence[tuple[int, Meld]], card: str
              ) -> Iterator[tuple[int, Meld]]:
    """``(index, meld grown)`` for each meld of ``table`` that ``card`` alone can go on
    (the turn's reading filter; R51-JOKER-OPP: no joker on an opponent's run)."""
    read = Table(turn, turn.vr.reading_filter(turn), list(table))
    return ((i, grown) for i in range(len(table))
            if (grown := read.grown(i, (card,))) is not None)


def places_all(turn: Turn, hand: list[str], pending: Counter[str],
               table: list[tuple[int, Meld]]) -> bool:
    """Could every card of ``pending`` (in ``hand``) still go on the table this turn, by
    lay-offs on ``table`` ((owner, meld) pairs, grown as cards go on) and new melds of
    the hand? Constructive, one pending card at a time: for an opened player with more
    than one card to place (swapped jokers, and the card taken from the discard pile)."""
    card = next(iter(+pending), None)
    if card is None:
        return True
    keep = 1 if turn.rules.must_discard_to_go_out else 0
    rest = pending - Counter({card: 1})
    if len(hand) - 1 >= keep:
        for i, grown in _lay_offs(turn, table, card):
            if places_all(turn, remove(hand, [card]), rest,
                          [*table[:i], (table[i][0], grown), *table[i + 1:]]):
                return True
    for meld in hand_melds(turn, hand):
        if card in meld.cards and len(hand) - len(meld.cards) >= keep and \
                places_all(turn, remove(hand, meld.cards), pending - Counter(meld.cards),
                           [*table, (turn.seat, meld)]):
            return True
    return False


def can_use(turn: Turn, hand: Sequence[str], card: str, need_points: int) -> bool:
    """Could ``card`` (in ``hand``) still go on the table this turn, with
    ``need_points`` melding points put down in the turn overall? Constructive."""
    rules = turn.rules
    keep = 1 if rules.must_discard_to_go_out else 0
    need = max(0, need_points - turn.state.turn_points)
    candidates = hand_melds(turn, hand)
    if not turn.opened:
        return opening_move(turn, hand, card, need) is not None
    if need <= 0:
        if len(hand) - 1 >= keep and _layable(turn, card):
            return True
        return any(card in m.cards and len(hand) - len(m.cards) >= keep
                   for m in candidates)
    return reaches(turn, hand, need, keep, card, candidates)


def reaches(turn: Turn, hand: Sequence[str], need: int, keep: int,
            card: str | None = None, candidates: list[Meld] | None = None) -> bool:
    """Could an opened player still put down ``need`` (> 0) melding points this turn, with
    ``card`` placed if given, by new melds and lay-offs (L14-DRAW counts both)?
    Constructive, so never a plan that does not exist: the melds alone, the richest
    lay-offs alone (``card`` first), or lay-offs and melds (:func:`_put_down`)."""
    if candidates is None:
        candidates = hand_melds(turn, hand)
    if search.best_combination(hand, candidates, need_points=need, must_use=card,
                               keep=keep) is not None:
        return True
    table = read_table(turn)  # one reading of the table for both searches
    if _lay_offs_worth(turn, hand, need, keep, table, first=card) is not None:
        return True
    return _put_down(turn, hand, candidates, need, card, table, opening=False,
                     keep=keep) is not None
