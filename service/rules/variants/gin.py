"""Gin rummy (docs/rules.md, GIN), as the Gin Rummy Association plays it (and OpenSpiel's
``gin_rummy`` with the knobs that reproduce it): two players, ten cards each, nothing
melded before a knock; a knock lays out the knocker's melds, the other player lays out and
lays off, and the deadwood left decides the hand.

The hand's facts are a :class:`GinState` (``GameState.variant_state``): the seats the first
upcard is still offered to (GIN-FIRST), the knock limit (GIN-KNOCK, Oklahoma), whether the
wall is reached (GIN-WALL), the knock, each seat's deadwood once laid out, and the count
of discards taken (OpenSpiel ends a hand after 50). The stored document keeps them in
``var`` under ``"gin"``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from service.rules import scoring
from service.rules.cards import contains, rank_of
from service.rules.errors import N_, Code, Violation
from service.rules.melds import Meld, Piece
from service.rules.memo import Kept
from service.rules.moves import Discard, Draw, Knock, LayOff, LayOut, Move, Pass
from service.rules.rule_ids import RuleId
from service.rules.ruleset import CLOCK, Knob, Rules, Variant, knob_map
from service.rules.state import GameState, VariantState
from service.rules.variants.base import LaidOff, Turn, VariantRules

KEY = "gin"
"""The key of the hand's gin facts in the stored ``var``."""

WALL = 2
"""GIN-WALL: the stock cards that are never drawn."""

# -- knobs ---------------------------------------------------------------------------------

KNOCK_CARD = Knob("knock_card", "int", RuleId.GIN_KNOCK,
                  "The most deadwood a player may knock with (0: gin only).",
                  minimum=0, maximum=10)
OKLAHOMA = Knob("oklahoma", "bool", RuleId.GIN_KNOCK,
                "The first upcard's value sets the hand's knock limit (an ace: gin only).")
GIN_BONUS = Knob("gin_bonus", "int", RuleId.GIN_SCORE,
                 "What a gin scores besides the other player's deadwood.",
                 minimum=0, maximum=1000)
UNDERCUT_BONUS = Knob("undercut_bonus", "int", RuleId.GIN_SCORE,
                      "What an undercut scores besides the difference.",
                      minimum=0, maximum=1000)
UNDERCUT_ON_TIE = Knob("undercut_on_tie", "bool", RuleId.GIN_SCORE,
                       "Equal deadwood is an undercut (false: nobody scores).")
BIG_GIN_BONUS = Knob("big_gin_bonus", "int", RuleId.GIN_KNOCK,
                     "Big gin (all eleven cards melded, no discard) scores this besides the "
                     "other's deadwood; 0: big gin is not played.", minimum=0, maximum=1000)
DISCARD_TAKEN_CARD = Knob("discard_taken_card", "bool", RuleId.GIN_TURN,
                          "The card just taken from the discard pile may be discarded again.")
MATCH_END = Knob("match_end", "match_end", RuleId.GIN_END,
                 "When the match ends: after the hand in which a total reaches a target "
                 "(with the bonuses), or after a number of deals.", ("target", "deals"))
GAME_BONUS = Knob("game_bonus", "int", RuleId.GIN_END,
                  "With a target: what the winner of the match gets.", minimum=0, maximum=1000)
BOX_BONUS = Knob("box_bonus", "int", RuleId.GIN_END,
                 "With a target: what each player gets per hand won.", minimum=0, maximum=1000)
SHUTOUT_DOUBLES = Knob("shutout_doubles", "bool", RuleId.GIN_END,
                       "With a target: a loser who won no hand doubles the winner's total.")

GIN = Variant(
    id="gin", name="Gin rummy", decks=1, jokers=0, wild_twos=False,
    min_players=2, max_players=2, upcard=True, set_max=4, set_distinct_suits=True,
    run_same_suit=True, deal_sizes={2: 10},
    knobs=knob_map(KNOCK_CARD, OKLAHOMA, GIN_BONUS, UNDERCUT_BONUS, UNDERCUT_ON_TIE,
                   BIG_GIN_BONUS, DISCARD_TAKEN_CARD, MATCH_END, GAME_BONUS, BOX_BONUS,
                   SHUTOUT_DOUBLES, CLOCK),
    defaults={
        "knock_card": 10, "oklahoma": False, "gin_bonus": 25, "undercut_bonus": 25,
        "undercut_on_tie": True, "big_gin_bonus": 0, "discard_taken_card": False,
        "match_end": {"target": 100}, "game_bonus": 100, "box_bonus": 25,
        "shutout_doubles": True, "clock": None,
    },
    set_rule=RuleId.GIN_PLAYERS, run_rule=RuleId.GIN_PLAYERS, wild_rule=RuleId.GIN_PLAYERS,
    out_rule=RuleId.GIN_KNOCK, end_rule=RuleId.GIN_END,
)
"""Gin rummy: 52 cards, 2 players, 10 cards each and an upcard (GIN-PLAYERS, GIN-DEAL)."""


# -- deadwood ------------------------------------------------------------------------------


def card_points(card: str) -> int:
    """GIN-PLAYERS: A 1, 2-10 face value, J Q K 10."""
    return min(rank_of(card), 10)


def deadwood_of(cards: Sequence[str]) -> int:
    return sum(card_points(c) for c in cards)


def all_melds(cards: Sequence[str]) -> list[tuple[str, ...]]:
    """Every set (3 or 4 of a rank) and run (3+ of a suit, ace low) ``cards`` hold."""
    out: list[tuple[str, ...]] = []
    by_rank: dict[str, list[str]] = {}
    by_suit: dict[str, list[str]] = {}
    for c in sorted(set(cards), key=lambda c: (rank_of(c), c[1])):
        by_rank.setdefault(c[0], []).append(c)
        by_suit.setdefault(c[1], []).append(c)
    for group in by_rank.values():
        if len(group) == 4:
            out.append(tuple(group))
            out.extend(tuple(g for g in group if g != skip) for skip in group)
        elif len(group) == 3:
            out.append(tuple(group))
    for group in by_suit.values():
        ranks = [rank_of(c) for c in group]
        for i in range(len(group)):
            j = i
            while j + 1 < len(group) and ranks[j + 1] == ranks[j] + 1:
                j += 1
                if j - i >= 2:
                    out.append(tuple(group[i:j + 1]))
    return out


_ARRANGED: Kept[tuple[str, ...], tuple[int, tuple[tuple[str, ...], ...]]] = Kept(4096)


def forget_arrangements() -> None:
    """Drop the arrangements :func:`arrange` keeps (benchmarks time it from cold)."""
    _ARRANGED.clear()


def arrange(cards: Sequence[str]) -> tuple[int, tuple[tuple[str, ...], ...]]:
    """The least deadwood ``cards`` can be left with and melds that leave it (GIN-KNOCK)."""
    key = tuple(sorted(cards))
    return _ARRANGED.get(key, lambda: _arrange(key))


def _combinations(cards: tuple[str, ...]
                  ) -> Iterator[tuple[int, int, tuple[tuple[str, ...], ...]]]:
    """Every set of disjoint melds of ``cards`` (a single deck: no card twice), the empty
    one first, in the order of a depth-first search over :func:`all_melds`: each with the
    points it melds and the cards it melds as a mask (bit ``i`` for ``cards[i]``). A meld
    fits when its bits are all left."""
    bit = {c: 1 << i for i, c in enumerate(cards)}
    melds = all_melds(cards)
    masks = [sum(bit[c] for c in m) for m in melds]
    points = [deadwood_of(m) for m in melds]
    count = len(melds)
    full = (1 << len(cards)) - 1

    def search(left: int, melded: int, chosen: tuple[tuple[str, ...], ...], start: int
               ) -> Iterator[tuple[int, int, tuple[tuple[str, ...], ...]]]:
        yield melded, full ^ left, chosen
        for i in range(start, count):
            mask = masks[i]
            if left & mask == mask:
                yield from search(left ^ mask, melded + points[i], (*chosen, melds[i]), i + 1)

    return search(full, 0, (), 0)


def _in_order(melds: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
    return tuple(sorted(melds, key=lambda m: (rank_of(m[0]), m[0][1])))


def _arrange(cards: tuple[str, ...]) -> tuple[int, tuple[tuple[str, ...], ...]]:
    total = deadwood_of(cards)
    best = total + 1
    chosen: tuple[tuple[str, ...], ...] = ()
    for melded, _used, melds in _combinations(cards):
        if total - melded < best:
            best, chosen = total - melded, melds
            if best == 0:
                break
    return best, _in_order(chosen)


def arrange_discards(cards: Sequence[str]
                     ) -> dict[str, tuple[int, tuple[tuple[str, ...], ...]]]:
    """For each card of ``cards``: :func:`arrange` of the others (what a knock discarding
    it lays out), from one search over the whole hand — the melds without that card, in the
    same order, are exactly the other cards' melds (the same result as one search each)."""
    key = tuple(sorted(cards))
    total = deadwood_of(key)
    best: dict[str, tuple[int, tuple[tuple[str, ...], ...]]] = {
        c: (total - card_points(c) + 1, ()) for c in key}
    bits = [(c, 1 << i, card_points(c)) for i, c in enumerate(key)]  # _combinations' bits
    for melded, used, melds in _combinations(key):
        left = total - melded
        for c, bit, points in bits:
            if not used & bit and left - points < best[c][0]:
                best[c] = (left - points, melds)
    return {c: (dead, _in_order(melds)) for c, (dead, melds) in best.items()}


def _is_set(meld: Sequence[str]) -> bool:
    """Whether ``meld`` (a set or a run) is a set: its cards are all of one rank."""
    return len({c[0] for c in meld}) == 1


def extended(meld: Sequence[str], card: str) -> tuple[str, ...] | None:
    """``meld`` with ``card`` laid off on it, or None when it does not fit."""
    if card in meld:
        return None
    ranks = sorted(rank_of(c) for c in meld)
    if _is_set(meld):
        return (*meld, card) if card[0] == meld[0][0] and len(meld) < 4 else None
    if card[1] != meld[0][1]:
        return None
    if rank_of(card) in (ranks[0] - 1, ranks[-1] + 1):
        return tuple(sorted((*meld, card), key=rank_of))
    return None


class _Grown:
    """A knocker's meld as grown by lay-offs in :func:`best_lay_out`. It recurs in many
    positions, so what fits on it is worked out once: the hand's cards that fit (as a mask,
    bit ``i`` for the hand's ``i``-th card) and, the first time each is laid off, the meld
    it makes (:func:`extended`; one object per meld, shared through ``known``)."""

    __slots__ = ("_grown", "_hand", "_known", "_made", "fits")

    def __init__(self, cards: tuple[str, ...], hand: tuple[str, ...],
                 known: dict[tuple[str, ...], _Grown]) -> None:
        self._hand = hand
        self._known = known
        # extended() takes only a card of the meld's rank (a set) or suit (a run): the
        # other cards are not asked about
        rank, suit = cards[0][0], cards[0][1]
        self._made = {i: grown for i, card in enumerate(hand)
                      if (card[0] == rank or card[1] == suit)
                      and (grown := extended(cards, card)) is not None}
        self.fits = sum(1 << i for i in self._made)
        self._grown: dict[int, _Grown] = {}

    def grown(self, i: int) -> _Grown:
        """This meld with the hand's ``i``-th card laid off on it (a card that fits)."""
        got = self._grown.get(i)
        if got is None:
            cards = self._made[i]
            got = self._known.get(cards)
            if got is None:
                got = self._known[cards] = _Grown(cards, self._hand, self._known)
            self._grown[i] = got
        return got


def _kept_points(cards: tuple[str, ...], points: Sequence[int], melding: int,
                 table: Sequence[tuple[str, Sequence[str]]]) -> int:
    """The points of the cards of ``cards`` that every lay-out keeps as deadwood: in none
    of the hand's melds (``melding``, a mask: bit ``i`` for ``cards[i]``) and such that
    no meld of ``table`` can take them, however grown. :func:`extended` lays off on a set
    (one rank) only that rank, and on a run only a suit of its cards, which it keeps; so
    a card of no rank of the sets and no suit of the runs is never laid off."""
    ranks: set[str] = set()
    suits: set[str] = set()  # a run's cards are of one suit
    for _, meld in table:
        if _is_set(meld):
            ranks.add(meld[0][0])
        else:
            suits.add(meld[0][1])
    return sum(points[i] for i, card in enumerate(cards)
               if not melding >> i & 1 and card[0] not in ranks and card[1] not in suits)


def best_lay_out(hand: Sequence[str], table: Sequence[tuple[str, Sequence[str]]],
                 gin: bool) -> tuple[int, tuple[tuple[str, ...], ...],
                                     tuple[tuple[str, tuple[str, ...]], ...]]:
    """The defender's least deadwood (GIN-LAYOFF): their own melds, and (unless the
    knocker went gin) cards laid off on the knocker's melds ``table`` (id, cards);
    (deadwood, melds, lay-offs by meld id).

    The lay-offs are searched depth first, one card at a time, but each position (which
    card is laid off on which meld) is searched once: the order cards were laid off in
    does not change what can follow, so a position reached again is skipped (bench/
    engine.py's worst lay-out is some 360 positions, not the 288,265 orders of laying
    them off). The melds of the cards left at a position are the hand's melds that hold
    none of the cards laid off, so the hand's meld combinations are listed once, most
    points first, and each position takes the first that fits: what :func:`arrange` of
    the cards left finds. So the first position found with the least deadwood is the one
    a search of every order finds first too. Every position keeps the cards that are in
    none of the hand's melds and that no meld of the knocker's can take
    (:func:`_kept_points`), so a position left with just their deadwood (0 when there are
    none) ends the search: no position is left with less, and only less would replace it.

    A position is kept as masks of the hand's cards (bit ``i`` for ``hand[i]``), the
    knocker's melds as :class:`_Grown` (what fits on each is worked out once per meld, not
    per position), and the lay-offs made so far as one list, laid off and taken back as
    the search goes (copied only when a position is the best so far): the same positions,
    in the same order, as with tuples rebuilt at each step, at about half the cost."""
    best = arrange(hand)
    if gin or best[0] == 0:
        return best[0], best[1], ()
    cards = tuple(hand)
    size = len(cards)
    points_of = [card_points(c) for c in cards]
    combos = sorted(_combinations(cards), key=lambda combo: -combo[0])
    melding = 0
    for _melded, used, _melds in combos:
        melding |= used
    floor = _kept_points(cards, points_of, melding, table)
    if best[0] == floor:
        return best[0], best[1], ()
    best_for: dict[int, tuple[int, tuple[tuple[str, ...], ...]]] = {}
    """The first of ``combos`` that fits the cards left, by the cards left that the hand's
    melds use (the rest cannot change it)."""
    ids = [mid for mid, _ in table]
    known: dict[tuple[str, ...], _Grown] = {}
    melds = [_Grown(tuple(c), cards, known) for _, c in table]
    shifts = [size * idx for idx in range(len(melds))]
    order: list[tuple[int, str]] = []
    found: list[Any] = [best[0], best[1], ()]
    seen: set[int] = set()

    def search(left: int, points: int, where: int) -> bool:
        """Search on from this position: the cards ``left`` (a mask) and their ``points``;
        ``melds`` as grown and the lay-offs made in ``order`` (meld index, card), as one
        mask of (meld, card) (``where``: the position). True once the deadwood of the
        cards every position keeps (``floor``) is found (nothing is less)."""
        key = left & melding
        got = best_for.get(key)
        if got is None:
            laid = melding ^ key
            got = best_for[key] = next((melded, arranged) for melded, used, arranged
                                       in combos if not used & laid)
        melded, arranged = got
        if points - melded < found[0]:
            found[:] = points - melded, _in_order(arranged), tuple(order)
            if points - melded == floor:
                return True
        for idx, on in enumerate(melds):
            fit = on.fits & left
            shift = shifts[idx]
            while fit:
                low = fit & -fit
                fit ^= low
                position = where | low << shift
                if position in seen:
                    continue
                seen.add(position)
                i = low.bit_length() - 1
                melds[idx] = on.grown(i)
                order.append((idx, cards[i]))
                if search(left ^ low, points - points_of[i], position):
                    return True
                order.pop()
                melds[idx] = on
        return False

    search((1 << size) - 1, sum(points_of), 0)
    offs: dict[str, tuple[str, ...]] = {}
    for idx, card in found[2]:
        offs[ids[idx]] = (*offs.get(ids[idx], ()), card)
    return found[0], found[1], tuple(offs.items())


# -- the hand's facts ----------------------------------------------------------------------


@dataclass
class KnockFacts:
    """The knock of the hand (GIN-KNOCK): who knocked, with what deadwood, and whether it
    was a plain knock, a gin or a big gin."""

    seat: int
    deadwood: int
    kind: str
    """``"knock"``, ``"gin"`` or ``"big_gin"``."""

    def to_wire(self) -> dict[str, Any]:
        return {"seat": self.seat, "deadwood": self.deadwood, "kind": self.kind}


@dataclass
class GinState(VariantState):
    """What gin keeps beside the common state, for the hand being played."""

    offer: list[int]
    """GIN-FIRST: the seats the first upcard is still offered to, next first."""
    limit: int
    """GIN-KNOCK: the most deadwood a knock may leave this hand (Oklahoma: the upcard's)."""
    stock_only: bool = False
    """GIN-FIRST: both passed the upcard; the non-dealer draws from the stock."""
    wall: bool = False
    """GIN-WALL: the stock is down to its last cards; stock draws are over."""
    knock: KnockFacts | None = None
    deadwood: list[int | None] = field(default_factory=lambda: [None, None])
    """Each seat's deadwood once laid out (GIN-KNOCK, GIN-LAYOFF)."""
    upcards_taken: int = 0
    """Discards drawn this hand (OpenSpiel ends a hand at its 50th)."""
    bounce: int | None = None
    """GIN-TURN: the seat that just took the discard and discarded it again."""
    redeal: bool = False
    """GIN-WALL: the hand was drawn; the same dealer deals again."""

    @staticmethod
    def new(state: GameState) -> GinState:
        """The facts of a hand just dealt: the upcard offered to the non-dealer first."""
        first = (state.dealer + 1) % 2
        rules = Rules.of(state.rules)
        limit = rules.knock_card
        if rules.oklahoma and state.discard:
            upcard = state.discard[-1]
            limit = 0 if rank_of(upcard) == 1 else card_points(upcard)
        return GinState([first, 1 - first], limit)

    def to_wire(self) -> dict[str, Any]:
        return {KEY: {"offer": list(self.offer), "stock_only": self.stock_only,
                      "limit": self.limit, "wall": self.wall,
                      "knock": None if self.knock is None else self.knock.to_wire(),
                      "deadwood": list(self.deadwood), "upcards_taken": self.upcards_taken,
                      "bounce": self.bounce, "redeal": self.redeal}}

    def copy(self) -> GinState:
        knock = self.knock
        return GinState(list(self.offer), self.limit, self.stock_only, self.wall,
                        None if knock is None else KnockFacts(knock.seat, knock.deadwood,
                                                              knock.kind),
                        list(self.deadwood), self.upcards_taken, self.bounce, self.redeal)

    @staticmethod
    def read(var: dict[str, Any]) -> GinState | None:
        """The facts a stored ``var`` holds (its ``"gin"`` key taken out of it), or None."""
        found = var.pop(KEY, None)
        if not isinstance(found, dict):
            return None
        knock = found.get("knock")
        return GinState(
            [int(seat) for seat in found.get("offer", [])], int(found.get("limit", 10)),
            bool(found.get("stock_only", False)), bool(found.get("wall", False)),
            None if not isinstance(knock, dict) else KnockFacts(
                int(knock["seat"]), int(knock["deadwood"]), str(knock["kind"])),
            [None if d is None else int(d) for d in found.get("deadwood", [None, None])],
            int(found.get("upcards_taken", 0)), found.get("bounce"),
            bool(found.get("redeal", False)))


def facts(state: GameState) -> GinState:
    """The hand's gin facts (made on first use)."""
    found = state.variant_state
    if not isinstance(found, GinState):
        found = state.variant_state = GinState.new(state)
    return found


def public_facts(state: GameState) -> dict[str, Any]:
    """What the views show of the hand (API.md "Gin rummy"): the upcard offer, the knock
    limit, the wall, the knock and each seat's deadwood once laid out."""
    f = facts(state)
    knock = f.knock
    return {"upcard_offer": f.offer[0] if f.offer else None,
            "knock_limit": f.limit, "wall": f.wall,
            "knock": None if knock is None else knock.to_wire(),
            "deadwood": list(f.deadwood), "upcards_taken": f.upcards_taken}


def _reach(state: GameState, lay_off: LayOff) -> int:
    """How far the card of ``lay_off`` lies beyond the nearer end of its table meld as it
    stands (1: next to it; 0 for a set, or a meld not on the table)."""
    target = state.meld(lay_off.meld_id)
    if target is None or target.kind != "run":
        return 0
    ranks = [rank_of(c) for c in target.cards]
    rank = rank_of(lay_off.cards[0].card)
    return min(abs(rank - min(ranks)), abs(rank - max(ranks)))


# -- the rules -----------------------------------------------------------------------------


class GinRules(VariantRules):
    """GIN rules: the first upcard, knocking, laying out and off, the wall, scoring."""

    knocker_keeps_deadwood = True
    score_needs: tuple[str, ...] = ()
    """The hands are what each seat has left unmelded; ``went_out`` is the knocker."""

    def meld_value(self, rules: Rules) -> Callable[[int, bool], int]:
        def value(rank: int, high: bool) -> int:
            del high
            return min(rank, 10)

        return value

    def card_count(self, rules: Rules, card: str) -> int:
        return card_points(card)

    # -- the turn ------------------------------------------------------------------------

    def read_state(self, var: dict[str, Any]) -> GinState | None:
        return GinState.read(var)

    def first_turn(self, state: GameState) -> None:
        """GIN-DEAL, GIN-FIRST: the non-dealer is offered the upcard first."""
        super().first_turn(state)
        state.variant_state = GinState.new(state)

    def next_dealer(self, state: GameState) -> int:
        """GIN-DEAL; GIN-WALL: after a drawn hand the same dealer deals again."""
        f = state.variant_state
        if isinstance(f, GinState) and f.redeal:
            return state.dealer
        return super().next_dealer(state)

    def may_discard_taken(self, turn: Turn) -> bool:
        return True  # GIN-TURN decides (check_discard), citing its own rule

    def check_phase(self, turn: Turn, what: str) -> None:
        if turn.state.phase == "lay_out":
            raise Violation(Code.WRONG_PHASE, RuleId.GIN_LAYOFF,
                            N_("the hand was knocked: lay out your melds"))

    def check_draw(self, turn: Turn, source: str) -> None:
        f = facts(turn.state)
        if source == "stock" and f.offer:
            raise Violation(Code.STOCK_DRAW_FORBIDDEN, RuleId.GIN_FIRST,
                            N_("take the first upcard or pass"))
        if source == "discard" and f.stock_only:
            raise Violation(Code.DISCARD_DRAW_FORBIDDEN, RuleId.GIN_FIRST,
                            N_("both players passed the upcard: draw from the stock"))
        if f.wall:
            if source == "stock":
                raise Violation(Code.STOCK_DRAW_FORBIDDEN, RuleId.GIN_WALL,
                                N_("the stock is down to its last {n} cards: take the "
                                   "discard to knock with it, or pass"), n=WALL)
            if not self._may_knock_with(turn, turn.state.discard[-1]):
                raise Violation(Code.KNOCK_TOO_HIGH, RuleId.GIN_WALL,
                                N_("at the wall the discard may only be taken to knock "
                                   "with it, and no knock is possible with it"))

    def check_meld_action(self, turn: Turn, melds: Sequence[Meld],
                          lay_offs: Sequence[LaidOff]) -> None:
        """GIN-TURN: nothing is melded on the table before a knock."""
        raise Violation(Code.INVALID_MELD, RuleId.GIN_TURN,
                        N_("nothing is melded before a knock: knock to lay out"))

    def check_lay_offs(self, turn: Turn, lay_offs: Sequence[LaidOff],
                       in_meld_action: bool = False) -> None:
        """GIN-LAYOFF: only the knocker's opponent lays off, in the lay-out."""
        raise Violation(Code.INVALID_LAY_OFF, RuleId.GIN_LAYOFF,
                        N_("nothing is melded before a knock: knock to lay out"))

    def before_draw(self, turn: Turn, source: str) -> None:
        f = facts(turn.state)
        f.offer = []
        f.stock_only = False
        if source == "discard":
            f.upcards_taken += 1

    def _may_knock_with(self, turn: Turn, taken: str) -> bool:
        """GIN-WALL: whether the hand with the discard ``taken`` can knock: discard a card
        (not ``taken`` itself unless knob ``discard_taken_card``, GIN-TURN) and keep
        deadwood within the limit, or go big gin where it is played (GIN-KNOCK)."""
        hand = [*turn.hand, taken]
        limit = facts(turn.state).limit
        if turn.rules.big_gin_bonus > 0 and arrange(hand)[0] == 0:
            return True
        return any(arrange([c for c in hand if c != discard])[0] <= limit
                   for discard in set(turn.hand)) or (
            turn.rules.discard_taken_card and arrange(turn.hand)[0] <= limit)

    def check_discard(self, turn: Turn, move: Discard) -> None:
        s = turn.state
        if s.taken == move.card and s.taken_before == 0 and not turn.rules.discard_taken_card:
            raise Violation(Code.DISCARD_TAKEN_CARD, RuleId.GIN_TURN,
                            N_("{card} was just taken from the discard pile"), card=move.card)
        if facts(s).wall:
            raise Violation(Code.MUST_KNOCK, RuleId.GIN_WALL,
                            N_("the discard taken at the wall must be knocked with"))

    def after_discard(self, turn: Turn, move: Discard) -> None:
        s = turn.state
        f = facts(s)
        # GIN-TURN: two players in succession taking the discard and discarding it again
        bounced = s.taken == move.card and s.taken_before == 0
        if bounced and f.bounce is not None and f.bounce != turn.seat:
            f.redeal = True
            turn.end_hand(None, "draw")
            return
        f.bounce = turn.seat if bounced else None
        if len(s.stock) <= WALL:
            f.wall = True  # GIN-WALL: the next player's turn

    def variant_move(self, turn: Turn, move: Move) -> None:
        if isinstance(move, Pass):
            self.pass_(turn)
        elif isinstance(move, Knock):
            self.knock(turn, move)
        elif isinstance(move, LayOut):
            self.lay_out(turn, move)
        else:  # pragma: no cover - every move type is dispatched
            super().variant_move(turn, move)

    def pass_(self, turn: Turn) -> None:
        """GIN-FIRST: refuse the upcard; GIN-WALL: pass, and the hand is drawn."""
        s = turn.state
        f = facts(s)
        if s.phase == "draw" and f.offer and f.offer[0] == turn.seat:
            f.offer = f.offer[1:]
            if not f.offer:
                f.stock_only = True
            s.turn = 1 - turn.seat
            turn.events.append({"type": "pass", "seat": turn.seat})
            return
        if s.phase == "draw" and f.wall:
            turn.events.append({"type": "pass", "seat": turn.seat})
            f.redeal = True
            turn.end_hand(None, "wall")
            return
        raise Violation(Code.PASS_NOT_ALLOWED, RuleId.GIN_FIRST,
                        N_("a pass is only for the first upcard or at the wall"))

    def knock(self, turn: Turn, move: Knock) -> None:
        """GIN-KNOCK: discard and lay out; the deadwood must be within the limit."""
        s = turn.state
        f = facts(s)
        turn.phase("play", N_("knock"))
        if move.lay_offs:
            raise Violation(Code.INVALID_LAY_OFF, RuleId.GIN_LAYOFF,
                            N_("the knocker may not lay off"))
        big = move.card is None
        if big and turn.rules.big_gin_bonus <= 0:
            raise Violation(Code.INVALID_MELD, RuleId.GIN_KNOCK,
                            N_("a knock discards a card (big gin is not played)"))
        used = [p.card for m in move.melds for p in m]
        missing = contains(turn.hand, used + ([] if move.card is None else [move.card]))
        if missing:  # GIN-KNOCK: the knocker discards and lays out cards of the hand
            raise Violation(Code.CARD_NOT_IN_HAND, RuleId.GIN_KNOCK,
                            N_("not in your hand: {cards}"), cards=", ".join(missing))
        if move.card is not None and s.taken == move.card and s.taken_before == 0 \
                and not turn.rules.discard_taken_card:
            raise Violation(Code.DISCARD_TAKEN_CARD, RuleId.GIN_TURN,
                            N_("{card} was just taken from the discard pile"),
                            card=move.card)
        readings = turn.readings(move.melds) if move.melds else []
        rest = list(turn.hand)
        if move.card is not None:
            rest.remove(move.card)
        for c in used:
            rest.remove(c)
        dead = deadwood_of(rest)
        if big and rest:
            raise Violation(Code.INVALID_MELD, RuleId.GIN_KNOCK,
                            N_("big gin melds all eleven cards"))
        if dead > f.limit:
            raise Violation(Code.KNOCK_TOO_HIGH, RuleId.GIN_KNOCK,
                            N_("deadwood {deadwood} is above the knock limit {limit}"),
                            deadwood=dead, limit=f.limit)
        if move.card is not None:
            turn.hand.remove(move.card)
            s.discard.append(move.card)
            turn.events.append({"type": "discard", "seat": turn.seat, "card": move.card})
        if readings:
            turn.place_melds(readings)
        result = "big_gin" if big else "gin" if dead == 0 else "knock"
        f.knock = KnockFacts(turn.seat, dead, result)
        f.deadwood[turn.seat] = dead
        f.wall = False
        turn.events.append({"type": "knock", "seat": turn.seat, "kind": result,
                            "deadwood": dead, "hand": list(turn.hand)})
        s.turn = 1 - turn.seat
        s.phase = "lay_out"
        s.reset_turn()

    def lay_out(self, turn: Turn, move: LayOut) -> None:
        """GIN-LAYOFF: the other player's melds and lay-offs end the hand."""
        s = turn.state
        f = facts(s)
        if s.phase != "lay_out":
            raise Violation(Code.WRONG_PHASE, RuleId.GIN_LAYOFF,
                            N_("nobody has knocked"))
        knock = f.knock
        if knock is None:  # pragma: no cover - the lay_out phase follows a knock
            raise Violation(Code.WRONG_PHASE, RuleId.GIN_LAYOFF, N_("nobody has knocked"))
        if move.lay_offs and knock.kind != "knock":
            raise Violation(Code.INVALID_LAY_OFF, RuleId.GIN_LAYOFF,
                            N_("no lay-offs on a gin"))
        used = [p.card for m in move.melds for p in m] + [
            p.card for lo in move.lay_offs for p in lo.cards]
        turn.holds(used)
        readings = turn.readings(move.melds) if move.melds else []
        if readings:
            turn.place_melds(readings)
        for lo in move.lay_offs:  # the seat's own melds are on the table now
            target = s.meld(lo.meld_id)
            if target is not None and target.owner == turn.seat:
                raise Violation(Code.INVALID_LAY_OFF, RuleId.GIN_LAYOFF,
                                N_("lay off on the knocker's melds only"))
        # lay-offs one card at a time, nearest the meld's ends first, so that a run grows
        # card by card whatever order its cards are sent in (7C 8C on 9C-JC)
        offs = [LayOff(lo.meld_id, (p,)) for lo in move.lay_offs for p in lo.cards]
        for lo in sorted(offs, key=lambda lo: _reach(s, lo)):
            turn.place_lay_off(turn.laid_off(lo))
        dead = deadwood_of(turn.hand)
        f.deadwood[turn.seat] = dead
        turn.events.append({"type": "lay_out", "seat": turn.seat, "deadwood": dead,
                            "hand": list(turn.hand)})
        turn.end_hand(knock.seat, knock.kind)

    # -- the legal-move listing ----------------------------------------------------------

    def candidate_moves(self, state: GameState, seat: int) -> Iterator[Move] | None:
        """GIN's moves worth asking the engine about (legal-moves): passes, draws, discards,
        each knock with the least-deadwood arrangement, the best lay-out."""
        return _candidates(state, seat)

    # -- scoring -------------------------------------------------------------------------

    def hand_end(self, turn: Turn, went_out: int | None) -> scoring.HandEnd:
        s = turn.state
        return scoring.HandEnd(hands=s.hands, went_out=went_out)

    def score_hand(self, turn: Turn, went_out: int | None) -> scoring.HandScore:
        s = turn.state
        f = facts(s)
        knock = f.knock
        if knock is None or went_out is None:
            # GIN-WALL: a pass at the wall draws the hand; GIN-TURN: so does the bounce (both
            # players in succession taking the discard and putting it back), away from the
            # wall (GIN-WALL's MUST_KNOCK keeps a taken discard there): scored alike
            result = ("wall_draw" if f.wall else "bounce_draw") if f.redeal else "draw"
            return scoring.HandScore(counts=[0, 0], scores=[0, 0], flags={"result": result})
        deadwood = [deadwood_of(h) for h in s.hands]
        base = score_gin(turn.rules, knock.seat, deadwood, knock.kind)
        return with_match_bonuses(turn.rules, s, base)

    def score(self, rules: Rules, end: scoring.HandEnd) -> scoring.HandScore:
        """A stateless score (``/v1/scores/hand``): ``went_out`` is the knocker; the hands
        are what each seat has left unmelded."""
        if end.went_out is None:
            return scoring.HandScore(counts=[0, 0], scores=[0, 0], flags={"result": "draw"})
        deadwood = [deadwood_of(h) for h in end.hands]
        kind = "gin" if deadwood[end.went_out] == 0 else "knock"
        return score_gin(rules, end.went_out, deadwood, kind)

    def hand_problem(self, rules: Rules, end: scoring.HandEnd) -> tuple[str, str] | None:
        """GIN-KNOCK: a knocker's deadwood above the knock limit (knob ``knock_card``; under
        Oklahoma, whose upcard a stateless score is not given, 10) is no knock."""
        if end.went_out is None:
            return None
        dead = deadwood_of(end.hands[end.went_out])
        limit = 10 if rules.oklahoma else rules.knock_card
        if dead <= limit:
            return None
        return (f"hands.{end.went_out}",
                f"the knocker's deadwood {dead} is above the knock limit {limit} (GIN-KNOCK): "
                "hands are the cards each seat left unmelded")

    def match_winners(self, state: GameState, rules: Rules) -> list[int] | None:
        """GIN-END."""
        end = rules.match_end or {"target": 100}
        totals = state.totals
        if "deals" in end:
            if len(state.history) < end["deals"]:
                return None
        elif max(totals) < end["target"]:
            return None
        top = max(totals)
        return [i for i, t in enumerate(totals) if t == top]


def score_gin(rules: Rules, knocker: int, deadwood: Sequence[int], kind: str
              ) -> scoring.HandScore:
    """GIN-SCORE: a knock, a gin, a big gin or an undercut, from each seat's deadwood."""
    other = 1 - knocker
    mine, theirs = deadwood[knocker], deadwood[other]
    scores = [0, 0]
    result = kind
    if kind == "big_gin":
        scores[knocker] = rules.big_gin_bonus + theirs
    elif kind == "gin":
        scores[knocker] = rules.gin_bonus + theirs
    elif mine < theirs:
        scores[knocker] = theirs - mine
    elif mine == theirs and not rules.undercut_on_tie:
        result = "tie"
    else:
        result = "undercut"
        scores[other] = mine - theirs + rules.undercut_bonus
    counts: list[scoring.Number] = list(deadwood)
    return scoring.HandScore(counts=counts, scores=list(scores),
                             flags={"result": result, "knocker": knocker,
                                    "deadwood": list(deadwood)})


def with_match_bonuses(rules: Rules, state: GameState, base: scoring.HandScore
                       ) -> scoring.HandScore:
    """GIN-END with a target: when this hand takes a total to the target, the match's
    bonuses are added to the hand's scores (game, boxes, shutout)."""
    end = rules.match_end or {"target": 100}
    if "target" not in end:
        return base
    totals = [t + d for t, d in zip(state.totals, base.scores, strict=True)]
    if max(totals) < end["target"]:
        return base
    winner = 0 if totals[0] > totals[1] else 1
    won = [sum(1 for h in state.history if h["scores"][seat] > 0) for seat in (0, 1)]
    for seat in (0, 1):
        won[seat] += 1 if base.scores[seat] > 0 else 0
    scores: list[scoring.Number] = list(base.scores)
    scores[winner] += rules.game_bonus
    boxes = [rules.box_bonus * won[seat] for seat in (0, 1)]
    scores = [s + b for s, b in zip(scores, boxes, strict=True)]
    shutout = won[1 - winner] == 0 and rules.shutout_doubles
    if shutout:
        scores[winner] += state.totals[winner] + scores[winner]
    flags = {**base.flags, "game_bonus": rules.game_bonus, "box_bonus": boxes,
             "shutout": shutout, "match_winner": winner}
    return scoring.HandScore(counts=base.counts, scores=scores, flags=flags)


def _candidates(state: GameState, seat: int) -> Iterator[Move]:
    f = facts(state)
    hand = state.hands[seat]
    if state.phase == "draw":
        yield Pass()
        yield Draw("stock")
        if state.discard:
            yield Draw("discard")
        return
    if state.phase == "lay_out":
        knock = f.knock
        table = [(m.id, list(m.cards)) for m in state.melds if m.owner != seat]
        _dead, melds, offs = best_lay_out(hand, table, knock is not None
                                          and knock.kind != "knock")
        yield LayOut(tuple(tuple(Piece(c) for c in m) for m in melds),
                     tuple(LayOff(mid, tuple(Piece(c) for c in cards)) for mid, cards in offs))
        return
    distinct = sorted(set(hand))
    rules = Rules.of(state.rules)
    knocks = arrange_discards(hand)
    for card in distinct:
        dead, melds = knocks[card]
        if dead <= f.limit:
            yield Knock(card, tuple(tuple(Piece(c) for c in m) for m in melds))
    if rules.big_gin_bonus > 0:
        dead, melds = arrange(hand)
        if dead == 0:
            yield Knock(None, tuple(tuple(Piece(c) for c in m) for m in melds))
    for card in distinct:
        yield Discard(card)


RULES: GinRules = GinRules(GIN)
"""Gin rummy, as :func:`service.rules.variants.find_variant` finds it."""
