"""Rami / Rummy 51 (RULES.md R51) and the Lebanese "14" (L14): what differs from basic.

Two decks and four jokers; the dealer holds one card more and starts with a discard only
(R51-FIRST); the first meld action is the opening (R51-OPEN); the discard may be taken
only to be used at once (R51-DRAW); jokers can be swapped out (R51-SWAP); penalty scoring
(R51-SCORE, L14-DRY).

Where a rule makes the player commit to something later in the turn (use the taken
discard, put a swapped joker back, reach 71 points in the Lebanese game), a move after which
that could no longer be done is refused at once, so a turn can always end: the draw itself
when the card could not be used, a meld or lay-off that would strand it.
"""

from __future__ import annotations

import contextlib
import itertools
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from random import Random

from service.rules import scoring, search
from service.rules.cards import JOKER, rank_of, remove
from service.rules.errors import N_, Code, Reason, Violation
from service.rules.melds import (
    Accept,
    Meld,
    MeldError,
    Piece,
    check_meld,
    extend_meld,
    meld_from_table,
)
from service.rules.moves import Discard, LayOff, MeldMove, SwapJoker, TakeFromMeld
from service.rules.ruleset import Rules
from service.rules.state import GameState, TableMeld
from service.rules.turn import Event, LaidOff, Turn, VariantRules

SINGLE_CARD_DETAIL = N_("a player holding a single card may not take the discard")
PUT_DOWN_CARDS = 8
"""The most cards of a hand :meth:`Rummy51Rules._put_down` considers laying off."""
PUT_DOWN_TRIES = 64
"""The most choices of cards to lay off it tries (each a meld search), fewest cards first."""
PUT_DOWN_STEPS = 20_000
"""The steps its meld searches take together at most (as many as one search alone may):
the worst a made-up hand and table can cost it stays bounded."""


class _Table:
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


class Rummy51Rules(VariantRules):
    """R51 rules (and, through :class:`Lebanese14Rules`, L14's)."""

    discard_draw_points = 0
    """Points that must go down in a turn in which the discard was taken (L14-DRAW)."""
    all_at_once_may_lay_off = False
    """An all-at-once finish may include lay-offs (L14-DRY)."""

    # -- values ----------------------------------------------------------------------------

    def ace_value(self, high: bool) -> int:
        """R51-VALUE: the ace is 1 when low, 11 when high or in a set."""
        return 11 if high else 1

    def meld_value(self, rules: Rules) -> Callable[[int, bool], int]:
        def value(rank: int, high: bool) -> int:
            return self.ace_value(high) if rank == 1 else min(rank, 10)

        return value

    def card_count(self, rules: Rules, card: str) -> int:
        """R51-SCORE: ace 11, joker ``joker_penalty``, J Q K 10, others face value."""
        if card == JOKER:
            return rules.joker_penalty
        rank = rank_of(card)
        return self.ace_value(True) if rank == 1 else min(rank, 10)

    # -- the turn ------------------------------------------------------------------------

    def first_turn(self, state: GameState) -> None:
        """R51-FIRST: the dealer plays first, and only discards."""
        state.turn = state.dealer
        state.phase = "play"
        state.discard_only = True

    def check_draw(self, turn: Turn, source: str) -> None:
        if source != "discard":
            return
        rule = self._draw_rule()
        if len(turn.hand) == 1:
            raise Violation(Code.DISCARD_DRAW_FORBIDDEN, "R51-DRAW", SINGLE_CARD_DETAIL)
        card = turn.state.discard[-1]
        hand = [*turn.hand, card]
        if not self._can_use(turn, hand, card, need_points=self.discard_draw_points):
            raise Violation(Code.DISCARD_DRAW_FORBIDDEN, rule,
                            N_("{card} could not be put on the table this turn with {points} "
                               "points put down: the discard may be taken only to be used at "
                               "once") if self.discard_draw_points else
                            N_("{card} could not be put on the table this turn: the discard "
                               "may be taken only to be used at once"),
                            card=card, points=self.discard_draw_points)

    def _draw_rule(self) -> str:
        return "R51-DRAW"

    def check_meld_action(self, turn: Turn, melds: Sequence[Meld],
                          lay_offs: Sequence[LaidOff]) -> None:
        if lay_offs:
            self.check_lay_offs(turn, lay_offs, in_meld_action=True)
        if turn.opened:
            return
        rules = turn.rules
        points = sum(m.points for m in melds)
        if rules.opening_counts_lay_offs:
            points += sum(lo.added_points for lo in lay_offs)
        reasons: list[Reason] = []
        if points < rules.opening_points:
            reasons.append(Reason(Code.OPENING_TOO_LOW, "R51-OPEN",
                                  N_("opening worth {points} points, {needed} needed"),
                                  points=points, needed=rules.opening_points))
        if rules.opening_requires_clean_run and not any(
                m.kind == "run" and not m.wilds for m in melds):
            reasons.append(Reason(Code.OPENING_NEEDS_CLEAN_RUN, "R51-OPEN",
                                  N_("the opening needs a run of 3 or more cards without a "
                                     "joker")))
        taken = turn.state.taken
        if taken is not None and turn.taken_pending():
            used = [c for m in melds for c in m.cards] + [
                p.card for lo in lay_offs for p in lo.pieces]
            if turn.hand.count(taken) - used.count(taken) > turn.state.taken_before:
                reasons.append(Reason(Code.DISCARD_NOT_USED, "R51-DRAW",
                                      N_("having taken {card} from the discard pile you must "
                                         "open with it"), card=taken))
        if reasons:
            raise Violation.of(reasons)

    def check_lay_off_target(self, turn: Turn, target: TableMeld,
                             pieces: Sequence[Piece]) -> None:
        """R51-JOKER-OPP: a joker may not be laid off on an opponent's run."""
        if target.kind == "run" and target.owner != turn.seat and any(
                p.card == JOKER for p in pieces):
            raise Violation(Code.WILD_NOT_ALLOWED, "R51-JOKER-OPP",
                            N_("a joker may not be laid off on an opponent's run"))

    def check_lay_offs(self, turn: Turn, lay_offs: Sequence[LaidOff],
                       in_meld_action: bool = False) -> None:
        if not turn.opened and not in_meld_action:
            raise Violation(Code.NOT_OPENED, "R51-OPEN",
                            N_("lay-offs come only after your opening"))

    def check_discard(self, turn: Turn, move: Discard) -> None:
        s = turn.state
        if turn.taken_pending():
            raise Violation(Code.DISCARD_NOT_USED, "R51-DRAW",
                            N_("{card}, taken from the discard pile, must be put on the table "
                               "before you discard"), card=s.taken)
        if s.joker_floor is not None and turn.hand.count(JOKER) > s.joker_floor:
            raise Violation(Code.JOKER_NOT_USED, "R51-SWAP",
                            N_("the joker you swapped out must go back on the table before "
                               "you discard"))

    def after_discard(self, turn: Turn, move: Discard) -> None:
        """R51-LAST: announce the last card, or draw two penalty cards."""
        if len(turn.hand) != 1:
            return
        if turn.rules.last_card_call == "auto" or move.announce:
            turn.events.append({"type": "last_card", "seat": turn.seat,
                                "announced_by": "player" if move.announce else "referee"})
            return
        drawn: list[str] = []
        event: Event = {"type": "penalty", "seat": turn.seat, "rule": "R51-LAST", "count": 0,
                        "reason": "a discard leaving one card must be announced",
                        "private": {str(turn.seat): {"cards": drawn}}}
        turn.events.append(event)
        for _ in range(2):
            if not turn.state.stock and not turn.rebuild_stock():
                return  # the stock ran out for good: the hand ended
            drawn.append(turn.state.stock.pop())
            turn.hand.append(drawn[-1])
            event["count"] = len(drawn)

    def check_obligations(self, turn: Turn) -> None:
        s = turn.state
        # the copies of each card that must leave the hand: the swapped jokers, and the card
        # taken from the discard pile (a joker taken so counts once with the swapped ones)
        pending = Counter[str]()
        if s.joker_floor is not None:
            pending[JOKER] = turn.hand.count(JOKER) - s.joker_floor
        if turn.taken_pending() and s.taken is not None:
            pending[s.taken] = max(pending[s.taken],
                                   turn.hand.count(s.taken) - s.taken_before)
        pending = +pending
        if turn.opened and pending.total() > 1:
            # several cards to place (swapped jokers, the taken discard): a place one of
            # them takes is gone for the others, so they are placed together
            if not self._places_all(turn, list(turn.hand), pending, self._table(turn)):
                if len(pending) == 1:  # jokers only
                    raise Violation(Code.JOKER_NOT_USED, "R51-SWAP",
                                    N_("after this, the swapped jokers could no longer all go "
                                       "back on the table this turn"))
                raise Violation(Code.JOKER_NOT_USED, "R51-SWAP",
                                N_("after this, {card} (taken from the discard pile) and the "
                                   "swapped joker(s) could no longer all go on the table this "
                                   "turn"), card=s.taken)
            return
        if turn.taken_pending() and s.taken is not None and not self._can_use(
                turn, turn.hand, s.taken, need_points=0):
            raise Violation(Code.DISCARD_NOT_USED, "R51-DRAW",
                            N_("after this, {card} (taken from the discard pile) could no "
                               "longer be put on the table this turn"), card=s.taken)
        if s.joker_floor is not None and turn.hand.count(JOKER) > s.joker_floor \
                and not self._can_use(turn, turn.hand, JOKER, need_points=0):
            raise Violation(Code.JOKER_NOT_USED, "R51-SWAP",
                            N_("after this, the swapped joker could no longer go back on the "
                               "table this turn"))

    # -- what can still be done this turn ------------------------------------------------

    def _candidates(self, turn: Turn, hand: Sequence[str],
                    found: list[Meld] | None = None) -> list[Meld]:
        """The melds of ``hand`` this turn's readings allow (``found``: every meld of
        ``hand``, when the caller has searched for them already)."""
        if found is None:
            found = search.candidate_melds(hand, turn.shape)
        accept = self.reading_filter(turn)
        return found if accept is None else [m for m in found if accept(m) is None]

    def _layable(self, turn: Turn, card: str) -> bool:
        return bool(self._table_of(turn).fits(card))

    def opening_move(self, turn: Turn, hand: Sequence[str], must_use: str | None,
                     need_points: int = 0,
                     melds: list[Meld] | None = None) -> MeldMove | None:
        """An opening (R51-OPEN) ``hand`` can lay down now, holding ``must_use`` if given,
        worth at least ``need_points`` too; found by the meld search (constructive).
        ``melds``: every meld of ``hand`` (:func:`search.candidate_melds`), if known."""
        rules = turn.rules
        keep = 1 if rules.must_discard_to_go_out else 0
        target = max(rules.opening_points, need_points)
        candidates = self._candidates(turn, hand, melds)
        found = search.best_combination(
            hand, candidates, need_points=max(target, 1), must_use=must_use,
            need_clean_run=rules.opening_requires_clean_run, keep=keep)
        if found is not None:
            return MeldMove(tuple(tuple(Piece(c) for c in m.cards) for m in found))
        return self._put_down(turn, hand, candidates, target, must_use, self._table_of(turn),
                              opening=True, keep=keep)

    def _put_down(self, turn: Turn, hand: Sequence[str], candidates: list[Meld], need: int,
                  must_use: str | None, table: _Table, *, opening: bool, keep: int
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
            self._lay_off_steps(turn, hand, table), PUT_DOWN_CARDS)]
        if not layable:
            return None
        most = self._most_points(turn)
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
                steps = list(self._lay_off_steps(turn, laid, table))
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
                                    self._as_lay_offs(turn, steps))
        return None

    def _lay_offs_worth(self, turn: Turn, hand: Sequence[str], need: int, keep: int,
                        table: _Table, first: str | None = None
                        ) -> tuple[LayOff, ...] | None:
        """Lay-offs of ``hand``'s cards on ``table``'s melds, ``first`` among them, adding
        ``need`` melding points with ``keep`` cards left (:meth:`_lay_off_steps`, as far as
        needed); None if they never do."""
        steps: list[tuple[str, int, int]] = []
        for step in self._lay_off_steps(turn, hand, table, first):
            steps.append(step)
            if len(hand) - len(steps) < keep:
                return None
            if step[1] >= need:
                return self._as_lay_offs(turn, steps)
        return None

    def _lay_off_steps(self, turn: Turn, hand: Sequence[str], table: _Table,
                       first: str | None = None) -> Iterator[tuple[str, int, int]]:
        """Lay-offs of ``hand``'s cards on ``table``'s melds, ``first`` before any, then
        the card adding the most at each step, for as long as one goes on: ``(card, melding
        points added so far, index of its meld)`` per step. The cards laid on one meld are
        read together against the meld as it is, as the engine reads one lay-off (two cards
        for one run, ``QH KH`` on ``5H``–``JH``, go on together, though ``KH`` alone would
        not), so :meth:`_as_lay_offs` makes them one. Greedy."""
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

    @staticmethod
    def _as_lay_offs(turn: Turn, steps: Sequence[tuple[str, int, int]]) -> tuple[LayOff, ...]:
        """The lay-offs :meth:`_lay_off_steps` made: one per meld, in the order first laid
        on."""
        ids = [m.id for m in turn.state.melds]
        laid: dict[int, list[str]] = {}
        for card, _, i in steps:
            laid.setdefault(i, []).append(card)
        return tuple(LayOff(ids[i], tuple(Piece(c) for c in cards))
                     for i, cards in laid.items())

    def _most_points(self, turn: Turn) -> Callable[[str], int]:
        """The most melding points a card can add to a meld: a natural its value (an ace
        high), a wild the most any card is worth."""
        value = self.meld_value(turn.rules)
        top = max(value(rank, True) for rank in range(1, 14))

        def most(card: str) -> int:
            if turn.shape.is_wild(card):
                return top
            rank = rank_of(card)
            return max(value(rank, True), value(rank, False))

        return most

    def _table_of(self, turn: Turn) -> _Table:
        """The table's melds as the lay-off searches read them."""
        return _Table(turn, self.reading_filter(turn), self._table(turn))

    @staticmethod
    def _table(turn: Turn) -> list[tuple[int, Meld]]:
        """The table's melds as ``(owner, meld)`` pairs, as the lay-off helpers read them."""
        return [(m.owner, meld_from_table(m.kind, m.cards, m.idents, m.start, turn.shape))
                for m in turn.state.melds]

    def _lay_offs(self, turn: Turn, table: Sequence[tuple[int, Meld]], card: str
                  ) -> Iterator[tuple[int, Meld]]:
        """``(index, meld grown)`` for each meld of ``table`` that ``card`` alone can go on
        (the turn's reading filter; R51-JOKER-OPP: no joker on an opponent's run)."""
        read = _Table(turn, self.reading_filter(turn), list(table))
        return ((i, grown) for i in range(len(table))
                if (grown := read.grown(i, (card,))) is not None)

    def _places_all(self, turn: Turn, hand: list[str], pending: Counter[str],
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
            for i, grown in self._lay_offs(turn, table, card):
                if self._places_all(turn, remove(hand, [card]), rest,
                                    [*table[:i], (table[i][0], grown), *table[i + 1:]]):
                    return True
        for meld in self._candidates(turn, hand):
            if card in meld.cards and len(hand) - len(meld.cards) >= keep and \
                    self._places_all(turn, remove(hand, meld.cards),
                                     pending - Counter(meld.cards),
                                     [*table, (turn.seat, meld)]):
                return True
        return False

    def _can_use(self, turn: Turn, hand: Sequence[str], card: str, need_points: int) -> bool:
        """Could ``card`` (in ``hand``) still go on the table this turn, with
        ``need_points`` melding points put down in the turn overall? Constructive."""
        rules = turn.rules
        keep = 1 if rules.must_discard_to_go_out else 0
        need = max(0, need_points - turn.state.turn_points)
        candidates = self._candidates(turn, hand)
        if not turn.opened:
            return self.opening_move(turn, hand, card, need) is not None
        if need <= 0:
            if len(hand) - 1 >= keep and self._layable(turn, card):
                return True
            return any(card in m.cards and len(hand) - len(m.cards) >= keep
                       for m in candidates)
        return self._reaches(turn, hand, need, keep, card, candidates)

    def _reaches(self, turn: Turn, hand: Sequence[str], need: int, keep: int,
                 card: str | None = None, candidates: list[Meld] | None = None) -> bool:
        """Could an opened player still put down ``need`` (> 0) melding points this turn, with
        ``card`` placed if given, by new melds and lay-offs (L14-DRAW counts both)?
        Constructive, so never a plan that does not exist: the melds alone, the richest
        lay-offs alone (``card`` first), or lay-offs and melds (:meth:`_put_down`)."""
        if candidates is None:
            candidates = self._candidates(turn, hand)
        if search.best_combination(hand, candidates, need_points=need, must_use=card,
                                   keep=keep) is not None:
            return True
        table = self._table_of(turn)  # one reading of the table for both searches
        if self._lay_offs_worth(turn, hand, need, keep, table, first=card) is not None:
            return True
        return self._put_down(turn, hand, candidates, need, card, table, opening=False,
                              keep=keep) is not None

    # -- joker swap and taking from melds --------------------------------------------------

    def swap_joker(self, turn: Turn, move: SwapJoker) -> None:
        s = turn.state
        if not turn.opened:
            raise Violation(Code.NOT_OPENED, "R51-SWAP",
                            N_("only a player who has opened may swap a joker"))
        if move.card == JOKER:  # (a joker is no card a joker stands for: "J*" is a jack)
            raise Violation(Code.SWAP_NOT_ALLOWED, "R51-SWAP",
                            N_("exchange a joker for the card it stands for, not for a "
                               "joker"))
        turn.holds([move.card])
        target = s.meld(move.meld_id)
        if target is None:
            raise Violation(Code.UNKNOWN_MELD, "R51-SWAP", N_("no meld {meld_id!r} on the table"),
                            meld_id=move.meld_id)
        index = self._swap_index(turn, target, move.card)
        jokers_before = turn.hand.count(JOKER)
        target.cards[index] = move.card
        target.idents[index] = move.card
        target.points = meld_from_table(target.kind, target.cards, target.idents,
                                        target.start, turn.shape).points
        s.hands[turn.seat] = remove(turn.hand, [move.card])
        turn.hand.append(JOKER)
        if s.joker_floor is None:
            s.joker_floor = jokers_before
        s.turn_tabled = True
        turn.events.append({"type": "swap_joker", "seat": turn.seat, "meld_id": target.id,
                            "card": move.card, "meld": target.public()})
        self.check_obligations(turn)

    def _swap_index(self, turn: Turn, target: TableMeld, card: str) -> int:
        knob = turn.rules.joker_swap_from_set
        jokers = [i for i, c in enumerate(target.cards) if c == JOKER]
        if not jokers:
            raise Violation(Code.SWAP_NOT_ALLOWED, "R51-SWAP", N_("{meld_id} holds no joker"),
                            meld_id=target.id)
        if target.kind == "set":
            if knob == "never":
                raise Violation(Code.SWAP_NOT_ALLOWED, "R51-SWAP",
                                N_("jokers may not be swapped out of sets "
                                   "(joker_swap_from_set)"))
            if knob == "four_only" and len(target.cards) < 4:
                raise Violation(Code.SWAP_NOT_ALLOWED, "R51-SWAP",
                                N_("a joker in a 3-card set cannot be swapped: its suit is "
                                   "open"))
        for i in jokers:
            ident = target.idents[i]
            if ident == card:
                return i
            if ident.endswith("*") and ident[0] == card[0] and target.kind == "set" and \
                    card[1] not in {c[1] for c in target.cards if c != JOKER}:
                return i
        stands = ", ".join(target.idents[i] for i in jokers)
        raise Violation(Code.SWAP_NOT_ALLOWED, "R51-SWAP",
                        N_("the joker in {meld_id} stands for {stands_for}, not {card}"),
                        meld_id=target.id, stands_for=stands, card=card)

    def take_from_meld(self, turn: Turn, move: TakeFromMeld) -> None:
        s = turn.state
        if not turn.rules.allow_take_from_meld:
            raise Violation(Code.INVALID_MELD, "R51-TAKE",
                            N_("taking cards from melds is not allowed "
                               "(allow_take_from_meld)"))
        if not turn.opened:
            raise Violation(Code.NOT_OPENED, "R51-TAKE",
                            N_("only a player who has opened may take cards from melds"))
        taken: list[str] = []
        for take in move.take:
            target = s.meld(take.meld_id)
            if target is None:
                raise Violation(Code.UNKNOWN_MELD, "R51-TAKE",
                                N_("no meld {meld_id!r} on the table"), meld_id=take.meld_id)
            self._take_one(turn, target, take.card)
            taken.append(take.card)
        pieces = [p.card for m in move.melds for p in m]
        for card in taken:
            if card not in pieces:
                raise Violation(Code.INVALID_MELD, "R51-TAKE",
                                N_("{card}, taken from a meld, must be used in a new meld"),
                                card=card)
        from_hand = remove(pieces, taken)
        turn.holds(from_hand)
        readings = turn.readings(move.melds)
        turn.check_leaves(from_hand)
        turn.hand.extend(taken)
        turn.place_melds(readings)
        turn.events.append({"type": "take_from_meld", "seat": turn.seat,
                            "take": [{"meld_id": t.meld_id, "card": t.card} for t in move.take]})
        self.check_obligations(turn)
        turn.out_if_empty()

    def _take_one(self, turn: Turn, target: TableMeld, card: str) -> None:
        if card == JOKER:
            raise Violation(Code.SWAP_NOT_ALLOWED, "R51-TAKE",
                            N_("a joker is taken only by swapping it (R51-SWAP)"))
        if card not in target.cards:
            raise Violation(Code.INVALID_MELD, "R51-TAKE", N_("{card} is not in {meld_id}"),
                            card=card, meld_id=target.id)
        if target.kind == "run":
            if len(target.cards) < 4 or card not in (target.cards[0], target.cards[-1]):
                raise Violation(Code.INVALID_MELD, "R51-TAKE",
                                N_("only an end card of a run of 4 or more may be taken"))
            at_start = target.cards[0] == card
            index = 0 if at_start else len(target.cards) - 1
            del target.cards[index]
            del target.idents[index]
            if at_start:
                target.start += 1
        else:
            if len(target.cards) != 4:
                raise Violation(Code.INVALID_MELD, "R51-TAKE",
                                N_("a card may be taken only from a 4-card set"))
            index = target.cards.index(card)
            del target.cards[index]
            del target.idents[index]
            try:
                reread = check_meld([Piece(c) for c in target.cards], turn.shape)
            except MeldError:
                raise Violation(Code.INVALID_MELD, "R51-TAKE",
                                N_("{meld_id} would no longer be a valid meld"),
                                meld_id=target.id) from None
            target.cards, target.idents = list(reread.cards), list(reread.idents)
        target.points = meld_from_table(target.kind, target.cards, target.idents, target.start,
                                        turn.shape).points

    # -- the end of a hand and of the match ----------------------------------------------

    score_needs: tuple[str, ...] = ("opened", "all_at_once", "final_discard")

    def hand_end(self, turn: Turn, went_out: int | None) -> scoring.HandEnd:
        end = super().hand_end(turn, went_out)
        if end.all_at_once and not self.all_at_once_may_lay_off and turn.state.turn_laid_off:
            end = replace(end, all_at_once=False)
        return end

    def meld_points(self, rules: Rules, meld: Meld) -> int:
        """R51-VALUE: melding values, a joker counting as the card it stands for."""
        return meld.points

    def score(self, rules: Rules, end: scoring.HandEnd) -> scoring.HandScore:
        """R51-SCORE (L14-DRY through :meth:`penalties`)."""
        n = len(end.hands)
        opened = end.opened if end.opened is not None else [True] * n
        playing = end.playing if end.playing is not None else [True] * n
        counts: list[scoring.Number] = [
            0 if not playing[i] else
            (100 if not opened[i] else sum(self.card_count(rules, c) for c in end.hands[i]))
            for i in range(n)]
        if end.went_out is None:
            return scoring.HandScore(counts, list(counts), flags={"all_at_once": False})
        counts[end.went_out] = 0
        dry = end.all_at_once and not any(opened[i] for i in range(n) if i != end.went_out)
        flags: dict[str, object] = {"all_at_once": end.all_at_once, "dry": dry}
        flags.update(self.extra_flags(end))
        return scoring.HandScore(counts, self.penalties(end, counts), flags=flags)

    def penalties(self, end: scoring.HandEnd, counts: list[scoring.Number]
                  ) -> list[scoring.Number]:
        """R51-SCORE: ×2 all at once, ×4 when the final discard was a joker."""
        factor = 1
        if end.all_at_once:
            factor = 4 if end.final_discard == JOKER else 2
        return [0 if i == end.went_out else c * factor for i, c in enumerate(counts)]

    def extra_flags(self, end: scoring.HandEnd) -> dict[str, object]:
        return {}

    def match_winners(self, state: GameState, rules: Rules) -> list[int] | None:
        """R51-END: lowest total wins; or elimination at a total."""
        end = rules.match_end or {"target": 1000}
        if "eliminate_at" in end:
            limit = end["eliminate_at"]
            for seat, total in enumerate(state.totals):
                if total >= limit:
                    state.out_of_match[seat] = True
            left = [i for i, out in enumerate(state.out_of_match) if not out]
            if len(left) > 1:
                return None
            if left:
                return left
            low = min(state.totals)
            return [i for i, t in enumerate(state.totals) if t == low]
        return scoring.basic_winners(rules, state.totals, len(state.history), lowest_wins=True)

    def cut_in(self, state: GameState, seat: int, rng: Random) -> list[Event]:
        return super().cut_in(state, seat, rng)


class Lebanese14Rules(Rummy51Rules):
    """L14: ace 10 everywhere, 14 cards, burned-joker runs, 71 to take the discard."""

    discard_draw_points = 71
    all_at_once_may_lay_off = True

    def ace_value(self, high: bool) -> int:
        """L14-ACE: an ace is worth 10 everywhere."""
        return 10

    @property
    def rule_prefix(self) -> str:
        """L14 is R51 except as its own rules say: shared rules cite R51's ids."""
        return "R51"

    def _draw_rule(self) -> str:
        return "L14-DRAW"

    def reading_filter(self, turn: Turn) -> Accept:
        """L14-JOKER-RUN: a joker stands in a run only for a card both copies of which are
        already in melds on the table (sets are exempt)."""
        melds = turn.state.melds

        def accept(meld: Meld) -> Reason | None:
            if meld.kind != "run":
                return None
            for i, ident in meld.wilds:
                if meld.cards[i] == JOKER and sum(m.cards.count(ident) for m in melds) < 2:
                    return Reason(Code.WILD_NOT_ALLOWED, "L14-JOKER-RUN",
                                  N_("a joker may stand for {card} in a run only once both "
                                     "{card}s are in melds on the table"), card=ident)
            return None

        return accept

    def check_discard(self, turn: Turn, move: Discard) -> None:
        super().check_discard(turn, move)
        s = turn.state
        if s.taken is not None and s.turn_points < self.discard_draw_points:
            raise Violation(Code.DISCARD_DRAW_FORBIDDEN, "L14-DRAW",
                            N_("having taken the discard you must put down {points} points "
                               "this turn; {so_far} so far"),
                            points=self.discard_draw_points, so_far=s.turn_points)

    def check_obligations(self, turn: Turn) -> None:
        super().check_obligations(turn)
        s = turn.state
        if s.taken is not None and s.turn_points < self.discard_draw_points:
            need = self.discard_draw_points - s.turn_points
            keep = 1 if turn.rules.must_discard_to_go_out else 0
            jokers = s.joker_floor is not None and turn.hand.count(JOKER) > s.joker_floor
            if turn.taken_pending() and not jokers:
                # the taken card and the points together (melds and lay-offs)
                reached = self._can_use(turn, turn.hand, s.taken,
                                        need_points=self.discard_draw_points)
            elif turn.opened:
                reached = self._reaches(turn, turn.hand, need, keep)
            else:
                reached = search.best_combination(
                    turn.hand, self._candidates(turn, turn.hand), need_points=need,
                    keep=keep) is not None
            if not reached:
                raise Violation(Code.DISCARD_DRAW_FORBIDDEN, "L14-DRAW",
                                N_("after this, {points} points could no longer be put down "
                                   "this turn"), points=self.discard_draw_points)

    score_needs: tuple[str, ...] = ("opened", "all_at_once", "jokers_used")

    def penalties(self, end: scoring.HandEnd, counts: list[scoring.Number]
                  ) -> list[scoring.Number]:
        """L14-DRY: ×2 with no joker used, ×1.5 with one, ×1 with two or more (halves round
        up); an unopened loser's 100 becomes 200 / 150 / 100 likewise."""
        if not end.all_at_once:
            return [0 if i == end.went_out else c for i, c in enumerate(counts)]
        jokers = end.jokers_used
        factor = 2.0 if jokers == 0 else 1.5 if jokers == 1 else 1.0
        return [0 if i == end.went_out else scoring.round_half_up(float(c) * factor)
                for i, c in enumerate(counts)]

    def extra_flags(self, end: scoring.HandEnd) -> dict[str, object]:
        return {"jokers_used": end.jokers_used if end.all_at_once else None}
