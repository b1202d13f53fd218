"""The common turn, and the hooks through which a variant decides each of its steps.

:class:`Turn` carries out one move on a *copy* of the state (the caller's state is never
touched), asking the variant's :class:`VariantRules` at each step; when the move ends the
hand the turn says so (:attr:`Turn.hand_over`) and the engine deals the next one. A
variant (one module of :mod:`service.rules.variants`) subclasses :class:`VariantRules` and
overrides only the steps where its rules differ; the defaults here are those of the common
model (docs/rules.md, C), with no house rule of any variant's.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from random import Random
from typing import Any

from service.rules import fairness, scoring
from service.rules.cards import JOKER, contains, remove
from service.rules.errors import N_, Code, Message, Reason, Violation
from service.rules.melds import (
    Accept,
    Meld,
    MeldError,
    MeldShape,
    Piece,
    check_meld,
    extend_meld,
    meld_from_table,
)
from service.rules.memo import ByIdentity, Kept
from service.rules.moves import (
    Discard,
    Draw,
    LayOff,
    MeldMove,
    Move,
    SwapJoker,
    TakeFromMeld,
)
from service.rules.rule_ids import RuleId
from service.rules.ruleset import Rules, Variant
from service.rules.state import GameState, TableMeld, VariantState

Event = dict[str, Any]


@dataclass(frozen=True)
class LaidOff:
    """A lay-off being checked: the table meld, the cards and the meld they would make."""

    target: TableMeld
    pieces: tuple[Piece, ...]
    extended: Meld

    @property
    def added_points(self) -> int:
        """Melding points the lay-off adds (R51-OPEN counts them)."""
        return self.extended.points - self.target.points


@dataclass(frozen=True)
class Compound:
    """A variant's compound meld action (``GET /v1/games/{id}/legal-moves``'s
    ``compound``): its ``kind``, its rule, and an example move if the search found one."""

    kind: str
    rule: RuleId
    move: Move | None


class VariantRules:
    """What a variant decides at each step of a turn. The defaults are the common model's;
    what only some variants have (their card values, scoring, end of the match) each
    variant says itself."""

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.shape: ByIdentity[Rules, MeldShape] = ByIdentity(self._shape_for)
        """:meth:`meld_shape`, looked up once per ``Rules`` object (they are immutable; a
        move, and every legal-move check, asks for it)."""
        self._shapes: Kept[tuple[Any, ...], MeldShape] = Kept(256)

    def _shape_for(self, rules: Rules) -> MeldShape:
        """:meth:`meld_shape`, one object for all ``Rules`` of the same knob values: each
        request reads its game's state (and rules) afresh, and the readings
        :func:`~service.rules.melds.check_meld` keeps are found by their shape."""
        return self._shapes.get(rules.values(), lambda: self.meld_shape(rules))

    def reading_filter(self, turn: Turn) -> Accept | None:
        """A table-dependent condition meld readings must meet (L14-JOKER-RUN), if any."""
        return None

    def read_state(self, var: dict[str, Any]) -> VariantState | None:
        """The variant's own facts from a stored ``var`` (taking their keys out of it), for
        :meth:`GameState.from_dict`; None for a variant that keeps none."""
        return None

    # -- shape and values ----------------------------------------------------------------

    def meld_shape(self, rules: Rules) -> MeldShape:
        """How melds look (C-SET, C-RUN, C-WILD as the variant's data and knobs say)."""
        return MeldShape(
            is_wild=self.variant.is_wild,
            ace=rules.ace,
            set_max=self.variant.set_max,
            set_distinct_suits=self.variant.set_distinct_suits,
            run_same_suit=self.variant.run_same_suit,
            max_wilds=rules.max_wilds_per_meld,
            flexible_twos=self.variant.wild_twos,
            meld_value=self.meld_value(rules),
            set_rule=self.variant.set_rule,
            run_rule=self.variant.run_rule,
            wild_rule=self.variant.wild_rule,
        )

    def meld_value(self, rules: Rules) -> Callable[[int, bool], int]:
        """Points of a card identity on the table (C-VALUE): (rank, ace high?) -> points."""
        raise NotImplementedError

    def card_count(self, rules: Rules, card: str) -> int:
        """What ``card`` counts left in a hand (C-VALUE: the variant's -SCORE rule)."""
        raise NotImplementedError

    # -- the turn ------------------------------------------------------------------------

    def first_turn(self, state: GameState) -> None:
        """Set who plays first in a new hand and how (C-DEAL)."""
        state.turn = self.variant.starter(state.players_count, state.dealer)
        state.phase = "draw"

    def meld_sizes(self, state: GameState, seat: int) -> Collection[int] | None:
        """The sizes a new meld of ``seat``'s could have as a move on its own now (None:
        any): the legal-move listing searches the hand for no others (a necessary condition
        of the engine's own check)."""
        return None

    def check_phase(self, turn: Turn, what: str) -> None:
        """Refuse a step the variant does not allow now, before the turn's phase is checked
        (R51-FIRST: the dealer's first action is a discard only)."""

    def check_draw(self, turn: Turn, source: str) -> None:
        """Refuse a draw the variant forbids (the generic checks are done)."""

    def before_draw(self, turn: Turn, source: str) -> None:
        """What happens as an accepted draw is made, before the card is taken (DUMMY-CUTIN:
        a pending cut-in is granted or voided)."""

    def read_melds(self, turn: Turn, melds: Sequence[Sequence[Piece]]) -> list[Meld]:
        """The readings of a meld action's new melds (C-MELD: the best valid one of each).
        A variant may refuse the action here or pick other valid readings (DUMMY-CONTRACTS:
        the ones that fit the contract)."""
        return turn.readings(melds)

    def check_meld_action(self, turn: Turn, melds: Sequence[Meld],
                          lay_offs: Sequence[LaidOff]) -> None:
        """Refuse a meld action (new melds, then lay-offs) the variant forbids."""
        if lay_offs:
            self.check_lay_offs(turn, lay_offs, in_meld_action=True)

    def check_lay_off_target(self, turn: Turn, target: TableMeld,
                             pieces: Sequence[Piece]) -> None:
        """Refuse laying ``pieces`` on ``target`` before the meld is even extended."""

    def check_lay_offs(self, turn: Turn, lay_offs: Sequence[LaidOff],
                       in_meld_action: bool = False) -> None:
        """Refuse lay-offs the variant forbids."""

    def check_discard(self, turn: Turn, move: Discard) -> None:
        """Refuse a discard the variant forbids (the generic checks are done)."""

    def after_discard(self, turn: Turn, move: Discard) -> None:
        """What follows a discard that did not end the hand (R51-LAST penalty cards)."""

    def check_obligations(self, turn: Turn) -> None:
        """After a table move: refuse it if the turn could no longer end legally."""

    def swap_joker(self, turn: Turn, move: SwapJoker) -> None:
        raise Violation(Code.SWAP_NOT_ALLOWED, RuleId.C_TURN,
                        N_("{variant} has no joker swaps"), variant=self.variant.name)

    def take_from_meld(self, turn: Turn, move: TakeFromMeld) -> None:
        raise Violation(Code.INVALID_MELD, RuleId.C_TURN,
                        N_("{variant} does not allow taking cards from melds"),
                        variant=self.variant.name)

    def variant_move(self, turn: Turn, move: Move) -> None:
        """A move only some variants have (GIN: ``pass``, ``knock``, ``lay_out``)."""
        raise Violation(Code.WRONG_PHASE, RuleId.C_TURN,
                        N_("{variant} has no such move"), variant=self.variant.name)

    def next_dealer(self, state: GameState) -> int:
        """The dealer of the next hand (C-SEAT: the deal passes left)."""
        return state.next_seat(state.dealer)

    def may_discard_taken(self, turn: Turn) -> bool:
        """Whether the card just taken from the discard pile may be discarded again
        (C-DISCARD-BACK: no)."""
        return False

    def cut_in(self, state: GameState, seat: int, rng: Random) -> list[Event]:
        raise Violation(Code.CUT_IN_NOT_ALLOWED, RuleId.DUMMY_CUTIN,
                        N_("{variant} has no cut-ins"), variant=self.variant.name)

    # -- what the legal-move listing asks (service.rules.legal) --------------------------

    def least_meld_points(self, state: GameState, seat: int, rules: Rules) -> int:
        """The fewest melding points a single new meld of ``seat``'s must be worth to be
        a move on its own now (R51-OPEN before the opening): a necessary condition of the
        engine's own check."""
        return 0

    def lists_takes(self, state: GameState, seat: int, rules: Rules) -> bool:
        """Whether ``seat`` may take cards from melds now (R51-TAKE), so that the listing
        looks for such moves."""
        return False

    def candidate_moves(self, state: GameState, seat: int) -> Iterator[Move] | None:
        """The moves the legal-move listing asks the engine about, when the variant lists
        its own (GIN); None: the common listing."""
        return None

    def compound_action(self, turn: Turn, melds: list[Meld] | None) -> Compound | None:
        """The variant's compound meld action for ``turn.seat``, not down yet in the play
        phase of their turn (``turn`` is on a copy of the state), with an example move
        found by the meld search; None where the variant has none or it does not apply
        now. ``melds``: every meld of the hand of a size a meld may have on its own now,
        when the caller has searched for them."""
        return None

    # -- the end of a hand and of the match ----------------------------------------------

    knocker_keeps_deadwood = False
    """Whether the seat that ends the hand may still hold cards (GIN-KNOCK: the knocker's
    deadwood): ``POST /v1/scores/hand`` then takes ``went_out`` with cards."""

    def hand_problem(self, rules: Rules, end: scoring.HandEnd) -> tuple[str, str] | None:
        """What makes ``end`` no hand of this variant, as ``(field, message)`` for ``POST
        /v1/scores/hand`` (GIN-KNOCK: a knocker above the knock limit); None when nothing
        does."""
        return None

    score_needs: tuple[str, ...] = ("all_at_once",)
    """What :meth:`score` needs beyond the hands and who went out (for a stateless call)."""

    def hand_end(self, turn: Turn, went_out: int | None) -> scoring.HandEnd:
        """The facts of the hand that just ended, for :meth:`score`."""
        s = turn.state
        return scoring.HandEnd(
            hands=s.hands, went_out=went_out,
            all_at_once=went_out is not None and not s.tabled[went_out],
            opened=list(s.melded), final_discard=turn.final_discard,
            jokers_used=s.turn_jokers,
            playing=[not out for out in s.out_of_match] if s.out_of_match else None)

    def score(self, rules: Rules, end: scoring.HandEnd) -> scoring.HandScore:
        """Score a hand (the variant's -SCORE rule): pure."""
        raise NotImplementedError

    def score_hand(self, turn: Turn, went_out: int | None) -> scoring.HandScore:
        return self.score(turn.rules, self.hand_end(turn, went_out))

    def meld_points(self, rules: Rules, meld: Meld) -> int:
        """A meld's ``points`` for ``POST /v1/melds/check``: the sum of its cards' counting
        values (R51 overrides: melding values)."""
        return sum(self.card_count(rules, c) for c in meld.cards)

    def match_winners(self, state: GameState, rules: Rules) -> list[int] | None:
        """The winners once the match is over (the variant's -END rule), else None."""
        raise NotImplementedError

    def lowest_wins(self, rules: Rules) -> bool:
        """Whether the lowest total is the best (penalty scoring), not the highest."""
        return rules.scoring == "penalty"

    def winners_without(self, state: GameState, rules: Rules, loser: int) -> list[int]:
        """The winners of a match ``loser`` leaves early (C-RESIGN, C-CLOCK): the other
        seats still in the match with the best total (ties share)."""
        others = [seat for seat in range(state.players_count) if seat != loser
                  and not (state.out_of_match and state.out_of_match[seat])]
        if not others:
            return []
        totals = [state.totals[seat] for seat in others]
        best = min(totals) if self.lowest_wins(rules) else max(totals)
        return [seat for seat, total in zip(others, totals, strict=True) if total == best]


@dataclass
class Turn:
    """A move being applied to ``state`` (a private copy) by ``seat``."""

    state: GameState
    seat: int
    variant: Variant
    rules: Rules
    vr: VariantRules
    rng: Random
    events: list[Event] = field(default_factory=list)
    final_discard: str | None = None
    """The card the player went out with, when they went out by discarding it."""
    hand_over: bool = False
    """The move ended the hand: the engine deals the next one if the match goes on."""

    def __post_init__(self) -> None:
        self.shape = self.vr.shape(self.rules)

    @property
    def hand(self) -> list[str]:
        return self.state.hands[self.seat]

    @property
    def opened(self) -> bool:
        return self.state.melded[self.seat]

    # -- checks shared by variants -------------------------------------------------------

    def phase(self, wanted: str, what: str) -> None:
        s = self.state
        self.vr.check_phase(self, what)
        if s.phase != wanted:
            now = N_("draw first") if s.phase == "draw" else N_("you have already drawn")
            raise Violation(Code.WRONG_PHASE, RuleId.C_TURN, N_("cannot {what} now: {now}"),
                            what=Message(what), now=Message(now))

    def holds(self, cards: Sequence[str]) -> None:
        missing = contains(self.hand, cards)
        if missing:
            raise Violation(Code.CARD_NOT_IN_HAND, RuleId.C_TURN,
                            N_("not in your hand: {cards}"), cards=", ".join(missing))

    def check_leaves(self, used: Sequence[str]) -> None:
        """A meld, lay-off or joker swap must leave a hand that can still end the turn: a
        card to discard when going out needs one (the variant's -OUT rule), and not only
        copies of the card taken from the discard pile, which may not be discarded
        (C-DISCARD-BACK)."""
        left = remove(self.hand, used)
        if not left and self.rules.must_discard_to_go_out:
            raise Violation(Code.MUST_DISCARD_TO_GO_OUT, self.variant.out_rule,
                            N_("this would leave no card to discard; keep one to go out"))
        taken = self.state.taken
        if taken is not None and left and left.count(taken) == len(left) \
                and self.state.taken_before == 0:
            raise Violation(Code.DISCARD_TAKEN_CARD, RuleId.C_DISCARD_BACK,
                            N_("this would leave only {card}, taken from the discard pile "
                               "this turn, which may not be discarded: put it on the table "
                               "too or keep another card"), card=taken)

    def taken_pending(self) -> bool:
        """The card taken from the discard pile is still in hand (R51-DRAW)."""
        s = self.state
        return s.taken is not None and self.hand.count(s.taken) > s.taken_before

    def readings(self, melds: Sequence[Sequence[Piece]]) -> list[Meld]:
        readings: list[Meld] = []
        reasons: list[Reason] = []
        for i, pieces in enumerate(melds):
            try:
                readings.append(check_meld(pieces, self.shape, self.vr.reading_filter(self)))
            except MeldError as exc:
                if len(melds) == 1:
                    reasons.extend(exc.reasons)
                else:
                    cards = " ".join(p.card for p in pieces)
                    reasons.extend(Reason(r.code, r.rule, N_("meld {number} ({cards}): {reason}"),
                                          number=i + 1, cards=cards, reason=r.message)
                                   for r in exc.reasons)
        if reasons:
            raise Violation.of(reasons)
        return readings

    def laid_off(self, move: LayOff) -> LaidOff:
        target = self.state.meld(move.meld_id)
        if target is None:
            on_table = ", ".join(m.id for m in self.state.melds)
            raise Violation(Code.UNKNOWN_MELD, RuleId.C_LAYOFF,
                            N_("no meld {meld_id!r} on the table ({melds})") if on_table else
                            N_("no meld {meld_id!r} on the table (none yet)"),
                            meld_id=move.meld_id, melds=on_table)
        self.vr.check_lay_off_target(self, target, move.cards)
        current = meld_from_table(target.kind, target.cards, target.idents, target.start,
                                  self.shape)
        try:
            extended = extend_meld(current, move.cards, self.shape, move.end,
                                   self.vr.reading_filter(self))
        except MeldError as exc:
            raise Violation.of(exc.reasons) from None
        return LaidOff(target, move.cards, extended)

    # -- moves ---------------------------------------------------------------------------

    def draw(self, move: Draw) -> None:
        s = self.state
        self.phase("draw", N_("draw"))
        if move.source == "discard" and not s.discard:
            raise Violation(Code.EMPTY_PILE, RuleId.C_TURN, N_("the discard pile is empty"))
        self.vr.check_draw(self, move.source)
        self.vr.before_draw(self, move.source)
        if move.source == "discard":
            card = s.discard.pop()
            s.taken, s.taken_before = card, self.hand.count(card)
            self.hand.append(card)
            s.phase = "play"
            self.events.append({"type": "draw", "seat": self.seat, "source": "discard",
                                "card": card})
            return
        if not s.stock and not self.rebuild_stock():
            return  # the hand ended with nobody out
        card = s.stock.pop()
        self.hand.append(card)
        s.phase = "play"
        self.events.append({"type": "draw", "seat": self.seat, "source": "stock",
                            "private": {str(self.seat): {"card": card}}})

    def rebuild_stock(self) -> bool:
        """C-STOCK: rebuild the empty stock, or end the hand; False when it ended."""
        s, policy, limit = self.state, self.rules.stock_exhausted, self.rules.max_stock_rebuilds
        if policy == "end_hand" or (limit is not None and s.rebuilds >= limit):
            self.end_hand(None, "stock_exhausted")
            return False
        if policy == "turn_over":
            s.stock, s.discard = list(reversed(s.discard)), []
        else:
            rest, s.discard = s.discard[:-1], s.discard[-1:]
            self.rng.shuffle(rest)
            s.stock = rest
        if not s.stock:
            self.end_hand(None, "stock_exhausted")
            return False
        s.rebuilds += 1
        fairness.record_rebuild(s)
        self.events.append({"type": "stock_rebuilt", "policy": policy,
                            "rebuilds": s.rebuilds, "stock_count": len(s.stock),
                            "discard_count": len(s.discard)})
        return True

    def meld(self, move: MeldMove) -> None:
        self.phase("play", N_("meld"))
        if not move.melds:
            raise Violation(Code.INVALID_MELD, RuleId.C_MELD,
                            N_("a meld action needs at least one meld"))
        used = [p.card for m in move.melds for p in m] + [
            p.card for lo in move.lay_offs for p in lo.cards]
        self.holds(used)
        readings = self.vr.read_melds(self, move.melds)
        new_ids = [f"m{self.state.meld_seq + i + 1}" for i in range(len(readings))]
        bad = [lo.meld_id for lo in move.lay_offs if lo.meld_id in new_ids]
        if bad:
            raise Violation(Code.INVALID_LAY_OFF, RuleId.C_LAYOFF,
                            N_("lay off on melds already on the table; put these cards in "
                               "the new meld instead"))
        named = [lo.meld_id for lo in move.lay_offs]
        twice = next((meld_id for meld_id in named if named.count(meld_id) > 1), None)
        if twice is not None:  # each is read against the table as it stands before the move
            raise Violation(Code.INVALID_LAY_OFF, RuleId.C_LAYOFF,
                            N_("lay off on {meld_id} once in a meld action: put all the cards "
                               "for it in one lay-off"), meld_id=twice)
        lay_offs = [self.laid_off(lo) for lo in move.lay_offs]
        self.vr.check_meld_action(self, readings, lay_offs)
        self.check_leaves(used)
        self.place_melds(readings)
        for lo in lay_offs:
            self.place_lay_off(lo)
        self.vr.check_obligations(self)
        self.out_if_empty()

    def place_melds(self, readings: Sequence[Meld]) -> list[TableMeld]:
        s = self.state
        placed: list[TableMeld] = []
        for reading in readings:
            s.meld_seq += 1
            table = TableMeld(f"m{s.meld_seq}", self.seat, reading.kind, list(reading.cards),
                              list(reading.idents), reading.start, reading.points)
            s.melds.append(table)
            s.hands[self.seat] = remove(self.hand, reading.cards)
            s.turn_points += reading.points
            s.turn_jokers += reading.cards.count(JOKER)
            placed.append(table)
        s.turn_melds += len(readings)
        s.turn_tabled = True
        s.melded[self.seat] = True
        self.events.append({"type": "meld", "seat": self.seat,
                            "melds": [m.public() for m in placed]})
        return placed

    def place_lay_off(self, lo: LaidOff) -> None:
        s = self.state
        target, extended = s.own_meld(lo.target), lo.extended
        s.turn_points += extended.points - target.points
        target.kind, target.start, target.points = extended.kind, extended.start, extended.points
        target.cards, target.idents = list(extended.cards), list(extended.idents)
        cards = [p.card for p in lo.pieces]
        s.hands[self.seat] = remove(self.hand, cards)
        s.turn_jokers += cards.count(JOKER)
        s.turn_tabled = True
        s.turn_laid_off = True
        self.events.append({"type": "lay_off", "seat": self.seat, "meld_id": target.id,
                            "cards": cards, "meld": target.public()})

    def lay_off(self, move: LayOff) -> None:
        self.phase("play", N_("lay off"))
        self.holds([p.card for p in move.cards])
        lo = self.laid_off(move)
        self.vr.check_lay_offs(self, [lo])
        self.check_leaves([p.card for p in move.cards])
        self.place_lay_off(lo)
        self.vr.check_obligations(self)
        self.out_if_empty()

    def discard(self, move: Discard) -> None:
        s = self.state
        self.phase("play", N_("discard"))
        self.holds([move.card])
        if move.card == s.taken and s.taken_before == 0 \
                and not self.vr.may_discard_taken(self):
            raise Violation(Code.DISCARD_TAKEN_CARD, RuleId.C_DISCARD_BACK,
                            N_("{card} was just taken from the discard pile"), card=move.card)
        self.vr.check_discard(self, move)
        self.hand.remove(move.card)
        s.discard.append(move.card)
        event: Event = {"type": "discard", "seat": self.seat, "card": move.card}
        if move.announce:
            event["announce"] = True
        self.events.append(event)
        if self.out_if_empty(final_discard=move.card):
            return
        s.tabled[self.seat] = s.tabled[self.seat] or s.turn_tabled
        self.vr.after_discard(self, move)
        if self.hand_over:
            return  # the penalty draw emptied the stock and ended the hand
        s.turn = s.next_seat(self.seat)
        s.phase = "draw"
        s.reset_turn()

    def swap_joker(self, move: SwapJoker) -> None:
        self.phase("play", N_("swap a joker"))
        self.vr.swap_joker(self, move)

    def take_from_meld(self, move: TakeFromMeld) -> None:
        self.phase("play", N_("take from a meld"))
        self.vr.take_from_meld(self, move)

    # -- hand end ------------------------------------------------------------------------

    def out_if_empty(self, final_discard: str | None = None) -> bool:
        """C-OUT: an empty hand goes out and ends the hand."""
        if self.hand:
            return False
        self.final_discard = final_discard
        self.end_hand(self.seat, "out")
        return True

    def end_hand(self, went_out: int | None, reason: str) -> None:
        """Score the hand and record it; end the match if it is over. The next hand is
        the engine's to deal (:attr:`hand_over`)."""
        s = self.state
        result = self.vr.score_hand(self, went_out)
        record: dict[str, Any] = {"hand_number": s.hand_number, "went_out": went_out,
                                  "reason": reason, "counts": result.counts,
                                  "scores": result.scores, "going_rummy": result.going_rummy}
        record.update(result.flags)
        s.history.append(record)
        s.totals = [scoring.tidy(t + d) for t, d in zip(s.totals, result.scores, strict=True)]
        self.events.append({"type": "hand_end", **record, "totals": list(s.totals)})
        revealed = fairness.reveal(s)
        if revealed is not None:
            self.events.append(revealed)
        self.hand_over = True
        winners = self.vr.match_winners(s, self.rules)
        if winners is not None:
            s.status, s.winners = "finished", winners
            s.phase = "over"
            self.events.append({"type": "game_end", "winners": winners,
                                "totals": list(s.totals)})
