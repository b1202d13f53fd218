"""Meld validation with wild cards (C-MELD, C-SET, C-RUN, C-WILD, C-LAYOFF), and the
geometry of a meld: where a card could go on it (:func:`may_lay_off`), what a meld reads as
when a kind is asked for (:func:`read_as`).

A meld is given as a multiset of cards; a wild may carry a declared identity. The
validator searches the readings (set or run; for a run, where it starts and where each
card stands) and keeps the valid one worth the most points, then the highest run position
(C-MELD, Resolved). Everything wrong with a meld is reported at once, as a list of
:class:`~service.rules.errors.Reason`.

Runs are modelled as *positions*: 1 = ace low, 2..13 = two to king, 14 = ace high. With
``ace == "around"`` positions go on past 13 and wrap (rank of position p is
``(p - 1) % 13 + 1``), so K-A-2 is positions 13, 14, 15.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from service.rules.cards import JOKER, RANKS, rank_of
from service.rules.errors import N_, Code, Message, Reason
from service.rules.memo import Kept
from service.rules.rule_ids import RuleId
from service.rules.state import TableMeld

OPEN_SUIT = "*"
"""Suit character of a wild whose suit is still open (a set wild, a mixed-suit run wild)."""


@dataclass(frozen=True, slots=True)
class Piece:
    """One card offered for a meld: the physical ``card`` and, for a wild, what it is
    declared to stand for (``as_``), if anything."""

    card: str
    as_: str | None = None


@dataclass(frozen=True)
class MeldShape:
    """What melds look like in a variant (from its rule set)."""

    is_wild: Callable[[str], bool]
    ace: str = "low"
    set_max: int | None = 4
    set_distinct_suits: bool = True
    run_same_suit: bool = True
    max_wilds: int | None = None
    flexible_twos: bool = False
    """Wild 2s may also stand as natural 2s (DUMMY-WILDS)."""
    meld_value: Callable[[int, bool], int] = field(default=lambda rank, high: 0)
    """Points of an identity for choosing a reading: (rank 1..13, ace high?) -> points."""
    set_rule: RuleId = RuleId.C_SET
    """The rule a set's refusals cite (the variant's -SET rule)."""
    run_rule: RuleId = RuleId.C_RUN
    """The rule a run's refusals cite (the variant's -RUN rule)."""
    wild_rule: RuleId = RuleId.C_MELD
    """The rule the wild limit cites (the variant's -WILDS rule)."""

    def high_end(self) -> int:
        return 14 if self.ace == "high_or_low" else 13


@dataclass(frozen=True)
class Meld:
    """A valid reading of a meld.

    ``cards`` are the physical cards in order (run order; a set's naturals first);
    ``idents`` what each stands for (a natural stands for itself; ``"9*"`` is a nine whose
    suit is open); ``start`` is a run's first position or a set's rank.
    """

    kind: str
    cards: tuple[str, ...]
    idents: tuple[str, ...]
    start: int
    points: int

    @property
    def end(self) -> int:
        return self.start + len(self.cards) - 1

    @property
    def wilds(self) -> list[tuple[int, str]]:
        """``(index, identity)`` of every card that does not stand for itself."""
        return [(i, ident) for i, (c, ident) in enumerate(zip(self.cards, self.idents,
                                                               strict=True)) if c != ident]

    def wild_count(self, shape: MeldShape) -> int:
        return wild_count(self.cards, self.idents, shape)


def wild_count(cards: Sequence[str], idents: Sequence[str], shape: MeldShape) -> int:
    """Wilds among ``cards`` that stand for another card (their ``idents``): what a meld's
    wild limit counts (a 2 standing as itself is not one)."""
    return sum(1 for c, ident in zip(cards, idents, strict=True)
               if shape.is_wild(c) and c != ident)


class MeldError(Exception):
    """A meld that no reading makes valid; ``reasons`` says every way it fails."""

    def __init__(self, reasons: list[Reason]) -> None:
        super().__init__()
        self.reasons = reasons

    def __str__(self) -> str:
        return "; ".join(r.detail for r in self.reasons)


def _rank_name(rank: int) -> str:
    return RANKS[(rank - 1) % 13]


def pos_rank(pos: int) -> int:
    """The rank (1..13) at place ``pos`` of a run (an ace is 1 and 14; around, places go
    on past 13)."""
    return (pos - 1) % 13 + 1


# ---------------------------------------------------------------------------------------
# Public entry points


Accept = Callable[["Meld"], Reason | None]
"""A table-dependent condition on readings (e.g. L14-JOKER-RUN): None if the reading is
allowed, else why not."""


def _best(readings: list[Meld], accept: Accept | None,
          key: Callable[[Meld], tuple[int, ...]]) -> Meld:
    """The best of ``readings`` that ``accept`` allows; MeldError if it allows none."""
    allowed = readings if accept is None else [m for m in readings if accept(m) is None]
    if allowed:
        return max(allowed, key=key)
    assert accept is not None
    best = max(readings, key=key)
    reason = accept(best)
    assert reason is not None
    raise MeldError([reason])


def _new_meld_key(m: Meld) -> tuple[int, ...]:
    return (m.points, m.kind == "run", m.start)


def check_meld(pieces: Sequence[Piece], shape: MeldShape, accept: Accept | None = None) -> Meld:
    """The best valid reading of ``pieces`` as a new meld (among those ``accept`` allows);
    raise :class:`MeldError`."""
    key = (tuple(pieces), shape)
    readings, reasons = _READINGS.get(key, lambda: _new_meld_readings(*key))
    if reasons:
        raise MeldError(list(reasons))
    return _best(list(readings), accept, _new_meld_key)


_READINGS: Kept[tuple[tuple[Piece, ...], MeldShape],
                tuple[tuple[Meld, ...], tuple[Reason, ...]]] = Kept(1024)
"""The readings of the last thousand or so melds asked about (about 1 KB each): the
legal-move listing reads each candidate meld again through the move it tries, and a
seat's next listing most of them again (a shape is one object per knob set,
``VariantRules._shape_for``, so the next request finds them). Readings and reasons are
never changed once made; ``accept`` is applied afresh."""


def _new_meld_readings(pieces: tuple[Piece, ...], shape: MeldShape
                       ) -> tuple[tuple[Meld, ...], tuple[Reason, ...]]:
    """Every valid reading of ``pieces`` as a new meld, or why there is none."""
    reasons = _precheck(pieces, shape)
    readings: list[Meld] = []
    set_problem = _read_set(pieces, shape, readings)
    run_problem = _read_run(pieces, shape, readings)
    structural = any(r.code is not Code.TOO_MANY_WILDS for r in reasons)
    if not readings and not structural:
        reasons += [r for r in (set_problem, run_problem) if r is not None]
    return tuple(readings), tuple(reasons)


def forget_readings() -> None:
    """Drop the kept readings (the benchmark times each meld and listing from cold)."""
    _READINGS.clear()


def extend_meld(meld: Meld, pieces: Sequence[Piece], shape: MeldShape,
                end: str | None = None, accept: Accept | None = None) -> Meld:
    """``meld`` with ``pieces`` laid off on it (C-LAYOFF); raise :class:`MeldError`.

    Cards already on the table keep their places and identities; new run cards go at the
    ``end`` asked for (``"low"`` / ``"high"``), else wherever the reading is best.
    """
    problems = _precheck(pieces, shape, new_meld=False)
    if problems:
        raise MeldError(problems)
    if meld.kind == "set":
        old = [Piece(c, None if c == ident or ident[1] == OPEN_SUIT else ident)
               for c, ident in zip(meld.cards, meld.idents, strict=True)]
        readings: list[Meld] = []
        problem = _read_set([*old, *pieces], shape, readings, require_rank=meld.start)
        if problem is not None:
            raise MeldError([Reason(Code.INVALID_LAY_OFF, problem.rule, problem.message)])
        extended = _best(readings, accept, _new_meld_key)
    else:
        extended = _extend_run(meld, pieces, shape, end, accept)
    if shape.max_wilds is not None and extended.wild_count(shape) > shape.max_wilds:
        raise MeldError([Reason(Code.TOO_MANY_WILDS, shape.wild_rule,
                                N_("a meld may hold at most {most} wild(s)"),
                                most=shape.max_wilds)])
    return extended


def meld_from_table(kind: str, cards: Sequence[str], idents: Sequence[str], start: int,
                    shape: MeldShape) -> Meld:
    """Rebuild a :class:`Meld` from what the table stores (no validation)."""
    return Meld(kind, tuple(cards), tuple(idents), start, _points(kind, idents, start, shape))


# ---------------------------------------------------------------------------------------
# Checks common to sets and runs


def _precheck(pieces: Sequence[Piece], shape: MeldShape, new_meld: bool = True) -> list[Reason]:
    reasons: list[Reason] = []
    if new_meld and len(pieces) < 3:
        reasons.append(Reason(Code.INVALID_MELD, RuleId.C_SET,
                              N_("a meld needs at least 3 cards, got {count}"),
                              count=len(pieces)))
    if not pieces:
        reasons.append(Reason(Code.INVALID_LAY_OFF, RuleId.C_LAYOFF, N_("no card to lay off")))
    for p in pieces:
        if p.as_ is not None and not shape.is_wild(p.card):
            reasons.append(Reason(Code.INVALID_MELD, RuleId.C_MELD,
                                  N_("{card} is not wild and cannot stand for {stands_for}"),
                                  card=p.card, stands_for=p.as_))
        if p.as_ is not None and (p.as_ == JOKER or (shape.is_wild(p.as_)
                                  and not (shape.flexible_twos and p.as_[0] == "2"))):
            reasons.append(Reason(Code.INVALID_MELD, RuleId.C_MELD,
                                  N_("a wild cannot stand for {stands_for}"),
                                  stands_for=p.as_))
    naturals = [p for p in pieces if not shape.is_wild(p.card)
                or (shape.flexible_twos and p.card != JOKER)]
    if new_meld and pieces and not naturals:
        reasons.append(Reason(Code.INVALID_MELD, RuleId.C_MELD,
                              N_("a meld must hold at least one natural (non-wild) card")))
    if new_meld and shape.max_wilds is not None:
        jokers = sum(1 for p in pieces if p.card == JOKER)
        if jokers > shape.max_wilds:
            reasons.append(Reason(Code.TOO_MANY_WILDS, shape.wild_rule,
                                  N_("{jokers} jokers in one meld, at most {most}"),
                                  jokers=jokers, most=shape.max_wilds))
    return reasons


def _points(kind: str, idents: Sequence[str], start: int, shape: MeldShape) -> int:
    if kind == "set":
        return sum(shape.meld_value(start, True) for _ in idents)
    return sum(shape.meld_value(pos_rank(p), p == 14)
               for p in range(start, start + len(idents)))


# ---------------------------------------------------------------------------------------
# Sets


def _read_set(pieces: Sequence[Piece], shape: MeldShape, out: list[Meld],
              require_rank: int | None = None) -> Reason | None:
    """Append the set reading of ``pieces`` to ``out``, or return why there is none."""
    rule = shape.set_rule
    strict = [p for p in pieces if not shape.is_wild(p.card)]
    ranks = {rank_of(p.card) for p in strict}
    if len(ranks) > 1:
        names = ", ".join(_rank_name(r) for r in sorted(ranks))
        return Reason(Code.INVALID_MELD, rule, N_("not a set: ranks differ ({ranks})"),
                      ranks=names)
    flex = [p for p in pieces if shape.flexible_twos and p.card != JOKER
            and shape.is_wild(p.card) and p.as_ is None]
    if ranks:
        rank = ranks.pop()
    elif flex:
        rank = 2  # a set of wild 2s standing as natural 2s (DUMMY-WILDS)
    else:
        return Reason(Code.INVALID_MELD, rule, N_("not a set: no natural card"))
    if require_rank is not None and rank != require_rank:
        return Reason(Code.INVALID_LAY_OFF, rule,
                      N_("a set of {rank}s cannot take a {other}"),
                      rank=_rank_name(require_rank), other=_rank_name(rank))
    naturals = [p for p in strict] + ([p for p in flex] if rank == 2 else [])
    wilds = [p for p in pieces if p not in naturals]  # pieces compare by value
    size = len(pieces)
    if shape.set_max is not None and size > shape.set_max:
        return Reason(Code.INVALID_MELD, rule,
                      N_("a set holds at most {most} cards, got {count}"),
                      most=shape.set_max, count=size)
    suits = [p.card[1] for p in naturals]
    declared: list[str] = []
    for w in wilds:
        if w.as_ is None:
            continue
        if rank_of(w.as_) != rank:  # a wild in a set has the set's rank
            return Reason(Code.INVALID_MELD, RuleId.C_WILD,
                          N_("{card} declared as {stands_for} in a set of {rank}s"),
                          card=w.card, stands_for=w.as_, rank=_rank_name(rank))
        declared.append(w.as_[1])
    if shape.set_distinct_suits:
        taken = suits + declared
        dupes = sorted({s for s in taken if taken.count(s) > 1})
        if dupes:
            return Reason(Code.INVALID_MELD, rule,
                          N_("not a set: its suits must differ, {suits} appears twice"),
                          suits=", ".join(dupes))
        if size > 4:
            return Reason(Code.INVALID_MELD, rule,
                          N_("not a set: a set of different suits has at most 4 cards"))
    open_wilds = [w for w in wilds if w.as_ is None]
    missing = sorted(set("SHDC") - set(suits) - set(declared))
    cards: list[str] = [p.card for p in naturals]
    idents: list[str] = list(cards)
    for w in wilds:
        cards.append(w.card)
        if w.as_ is not None:
            idents.append(w.as_)
        elif shape.set_distinct_suits and len(open_wilds) == 1 and len(missing) == 1:
            idents.append(_rank_name(rank) + missing[0])  # C-WILD: the only suit left
        else:
            idents.append(_rank_name(rank) + OPEN_SUIT)
    order = sorted(range(len(cards)),
                   key=lambda i: (cards[i] != idents[i], "SHDC*".index(idents[i][1])))
    out.append(Meld("set", tuple(cards[i] for i in order), tuple(idents[i] for i in order),
                    rank, _points("set", idents, rank, shape)))
    return None


# ---------------------------------------------------------------------------------------
# Runs


def _windows(length: int, shape: MeldShape) -> range:
    """Valid first positions of a run of ``length`` cards."""
    if shape.ace == "around":
        return range(1, 14) if length <= 13 else range(0)
    return range(1, shape.high_end() - length + 2)


def _run_suit(pieces: Sequence[Piece], shape: MeldShape) -> tuple[str | None, Reason | None]:
    """The suit a same-suit run of ``pieces`` must have (None for mixed-suit runs)."""
    if not shape.run_same_suit:
        return None, None
    suits = {p.card[1] for p in pieces if not shape.is_wild(p.card)}
    suits |= {p.as_[1] for p in pieces if p.as_ is not None}
    if len(suits) > 1:
        listed = ", ".join(sorted(suits))
        return None, Reason(Code.INVALID_MELD, shape.run_rule,
                            N_("not a run: a run is of one suit, these are {suits}"),
                            suits=listed)
    if not suits:  # only wild 2s that may stand as natural 2s
        suits = {p.card[1] for p in pieces if p.card != JOKER}
        if len(suits) != 1:
            return None, Reason(Code.INVALID_MELD, shape.run_rule,
                                N_("not a run: no natural card fixes its suit"))
    return suits.pop(), None


def _place(pieces: Sequence[Piece], positions: Sequence[int], suit: str | None,
           shape: MeldShape) -> list[tuple[int, str, str]] | None:
    """Put every piece on one of ``positions``, each used once: sorted
    ``(position, card, identity)`` triples, or None when impossible.

    Naturals and declared wilds go where their rank is (an ace that could stand low or
    high takes the high place); the other wilds fill the places left.
    """
    free = set(positions)
    by_rank: dict[int, list[int]] = {}
    for pos in positions:
        by_rank.setdefault(pos_rank(pos), []).append(pos)
    placed: list[tuple[int, str, str]] = []
    loose: list[str] = []
    for p in pieces:
        ident = p.as_ if p.as_ is not None else p.card
        if p.as_ is None and shape.is_wild(p.card):
            loose.append(p.card)
            continue
        if suit is not None and ident[1] != suit:
            return None
        spots = [pos for pos in by_rank.get(rank_of(ident), ()) if pos in free]
        if not spots:
            return None
        pos = max(spots)
        free.discard(pos)
        placed.append((pos, p.card, ident))
    if len(loose) != len(free):
        return None
    fill = suit or OPEN_SUIT
    placed.extend((pos, card, _rank_name(pos_rank(pos)) + fill)
                  for card, pos in zip(loose, sorted(free), strict=True))
    placed.sort()
    return placed


def _options(pieces: Sequence[Piece], shape: MeldShape) -> list[Sequence[Piece]]:
    """``pieces`` as given, and with each distinct wild 2 standing as itself instead
    (DUMMY-WILDS: a 2 may also be a natural 2; a run has one place of rank 2 at most)."""
    options: list[Sequence[Piece]] = [pieces]
    if shape.flexible_twos:
        for two in sorted({p.card for p in pieces if p.as_ is None and p.card != JOKER
                           and shape.is_wild(p.card)}):
            alt = list(pieces)
            alt[alt.index(Piece(two))] = Piece(two, two)
            options.append(alt)
    return options


@functools.lru_cache(maxsize=1024)
def _window_ranks(start: int, length: int) -> frozenset[int]:
    """The ranks of the positions ``start`` … ``start + length - 1``."""
    return frozenset(pos_rank(pos) for pos in range(start, start + length))


def _read_run(pieces: Sequence[Piece], shape: MeldShape, out: list[Meld]) -> Reason | None:
    """Append every run reading of ``pieces`` to ``out``, or return why there is none."""
    suit, problem = _run_suit(pieces, shape)
    if problem is not None:
        return problem
    found = False
    # ranks every reading places (naturals and declared wilds; a wild 2 that may stand as
    # itself is not fixed): a window without one of them has no reading
    fixed = {rank_of(p.as_ if p.as_ is not None else p.card) for p in pieces
             if p.as_ is not None or not shape.is_wild(p.card)}
    options = _options(pieces, shape)
    for start in _windows(len(pieces), shape):
        ranks = _window_ranks(start, len(pieces))
        if not fixed <= ranks:
            continue
        window = range(start, start + len(pieces))
        # the options after the first stand a 2 as itself: only a window with a place of
        # rank 2 can hold one (_place would find it no spot)
        for option in options if 2 in ranks else options[:1]:
            placed = _place(option, window, suit, shape)
            if placed is not None and any(c == i for _, c, i in placed):
                idents = tuple(ident for _, _, ident in placed)
                out.append(Meld("run", tuple(card for _, card, _ in placed), idents, start,
                                _points("run", idents, start, shape)))
                found = True
    if found:
        return None
    rule = shape.run_rule
    counted = Counter(rank_of(p.card) for p in pieces if not shape.is_wild(p.card))
    dupes = [r for r, n in counted.items() if n > 1 and r != 1]
    if dupes:
        return Reason(Code.INVALID_MELD, rule,
                      N_("not a run: {rank} appears twice"), rank=_rank_name(dupes[0]))
    if not _windows(len(pieces), shape):
        return Reason(Code.INVALID_MELD, rule, N_("not a run: {count} cards is too long"),
                      count=len(pieces))
    ace = {"low": N_("the ace is low only: A-2-3, never Q-K-A"),
           "high_or_low": N_("the ace is low (A-2-3) or high (Q-K-A), never K-A-2"),
           "around": N_("ranks may go around the corner (K-A-2)")}[shape.ace]
    return Reason(Code.INVALID_MELD, rule,
                  N_("not a run: the ranks are not consecutive ({ace})"), ace=Message(ace))


def _extend_run(meld: Meld, pieces: Sequence[Piece], shape: MeldShape,
                end: str | None, accept: Accept | None) -> Meld:
    n = len(pieces)
    suits = {ident[1] for ident in meld.idents if ident[1] != OPEN_SUIT}
    suit = suits.pop() if shape.run_same_suit and suits else None
    splits = [(n - k, k) for k in range(n + 1)]  # cards below the run, cards above it
    if end == "low":
        splits = [(n, 0)]
    elif end == "high":
        splits = [(0, n)]
    readings: list[Meld] = []
    for below, above in splits:
        base = meld.start
        start, stop = base - below, meld.end + above
        if shape.ace == "around":
            if stop - start + 1 > 13:
                continue
            if start < 1:
                start, stop, base = start + 13, stop + 13, base + 13
        elif start < 1 or stop > shape.high_end():
            continue
        top = base + len(meld.cards) - 1
        new_positions = [*range(start, base), *range(top + 1, stop + 1)]
        for option in _options(pieces, shape):
            placed = _place(option, new_positions, suit, shape)
            if placed is None:
                continue
            low = [(c, i) for pos, c, i in placed if pos < base]
            high = [(c, i) for pos, c, i in placed if pos > top]
            cards = (*(c for c, _ in low), *meld.cards, *(c for c, _ in high))
            idents = (*(i for _, i in low), *meld.idents, *(i for _, i in high))
            first = (start - 1) % 13 + 1 if shape.ace == "around" else start
            readings.append(Meld("run", cards, idents, first,
                                 _points("run", idents, first, shape)))
    if not readings:
        template = {"low": N_("{cards} cannot extend the run {run} at its low end"),
                    "high": N_("{cards} cannot extend the run {run} at its high end")}.get(
                        end or "", N_("{cards} cannot extend the run {run}"))
        raise MeldError([Reason(Code.INVALID_LAY_OFF, RuleId.C_LAYOFF, template,
                                cards=" ".join(p.card for p in pieces),
                                run=" ".join(meld.idents))])
    return _best(readings, accept, lambda m: (m.points, m.start + len(m.cards)))


# ---------------------------------------------------------------------------------------
# Geometry: where a card could go, what a meld reads as


def may_lay_off(target: TableMeld | Meld, card: str, end: str | None, shape: MeldShape) -> bool:
    """False when ``card`` alone certainly cannot be laid off on ``target`` (a table meld,
    or a reading of one) at ``end``, by the tests :func:`extend_meld` makes: a run grows by
    one place at the end asked for only within the ranks a run may span (C-RUN); a natural
    card joins a set of its rank only, of a suit the set lacks when its suits must differ,
    and not beyond the set's largest size (C-SET); a run only at the position just below or
    just above it, in the run's suit when runs are of one suit; a joker not beyond the
    meld's wild limit (R51-WILDS)."""
    if target.kind == "run" and not _run_has_room(target, end, shape):
        return False
    if shape.is_wild(card):
        if card == JOKER and shape.max_wilds is not None:
            return wild_count(target.cards, target.idents, shape) < shape.max_wilds
        return True
    rank = rank_of(card)
    if target.kind == "set":
        if rank != target.start:
            return False
        if shape.set_max is not None and len(target.cards) >= shape.set_max:
            return False
        return not (shape.set_distinct_suits and any(
            ident[1] == card[1] for ident in target.idents))
    if shape.run_same_suit and any(ident[1] not in (card[1], OPEN_SUIT)
                                   for ident in target.idents):
        return False
    below = end != "high" and rank == pos_rank(target.start - 1)
    above = end != "low" and rank == pos_rank(target.start + len(target.cards))
    return below or above


def _run_has_room(target: TableMeld | Meld, end: str | None, shape: MeldShape) -> bool:
    """Whether the run ``target`` has a place for one more card at ``end`` (either end when
    None): as :func:`extend_meld` places cards."""
    size = len(target.cards)
    if shape.ace == "around":
        return size < 13
    low = target.start > 1
    high = target.start + size <= shape.high_end()
    return low if end == "low" else high if end == "high" else low or high


def read_as(pieces: Sequence[Piece], shape: MeldShape, kind: str,
            best: Meld | None = None) -> Meld | None:
    """The best valid reading of ``pieces`` as a ``kind`` (``"set"`` / ``"run"``), if any
    (a Dummy contract asks for a kind: DUMMY-CONTRACTS).

    The meld validator (:func:`check_meld`) is the judge: a run reading is asked for with
    sets switched off; a set reading by declaring each undeclared wild as the set's rank
    (then its suit is given back as open, as for any set wild). ``best``:
    ``check_meld(pieces, shape)``, when the caller has it already.
    """
    if best is None:
        try:
            best = check_meld(pieces, shape)
        except MeldError:
            return None
    if best.kind == kind:
        return best
    if kind == "run":
        try:
            return check_meld(pieces, replace(shape, set_max=2))
        except MeldError:
            return None
    ranks = {rank_of(p.card) for p in pieces if not shape.is_wild(p.card) and p.as_ is None}
    ranks |= {rank_of(p.as_) for p in pieces if p.as_ is not None}
    if len(ranks) > 1:
        return None
    rank = ranks.pop() if ranks else 2  # only wilds: a set of 2s standing as themselves
    if rank == 2 and not any(p.card != JOKER for p in pieces):
        return None
    name = RANKS[rank - 1]
    forced = [Piece(p.card, name + "S") if p.as_ is None and shape.is_wild(p.card)
              and not (rank == 2 and p.card != JOKER) else p for p in pieces]
    try:
        reading = check_meld(forced, shape)
    except MeldError:
        return None
    if reading.kind != "set":
        return None
    # the wilds the referee declared get their open suit back (C-WILD)
    declared = Counter((p.card, p.as_) for p in pieces if p.as_ is not None)
    idents = list(reading.idents)
    for i, (card, ident) in enumerate(zip(reading.cards, idents, strict=True)):
        if card == ident:
            continue
        if declared[(card, ident)] > 0:
            declared[(card, ident)] -= 1
        else:
            idents[i] = name + OPEN_SUIT
    order = sorted(range(len(idents)), key=lambda i: (reading.cards[i] != idents[i],
                                                      "SHDC*".index(idents[i][1])))
    return replace(reading, cards=tuple(reading.cards[i] for i in order),
                   idents=tuple(idents[i] for i in order))
