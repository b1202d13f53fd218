"""Rami / Rummy 51 (docs/rules.md, R51): what differs from the common model.

Two decks and four jokers; the dealer holds one card more and starts with a discard only
(R51-FIRST); the first meld action is the opening (R51-OPEN); the discard may be taken
only to be used at once (R51-DRAW); jokers can be swapped out (R51-SWAP); penalty scoring
(R51-SCORE). The Lebanese "14" is this variant but for its own rules
(:mod:`service.rules.variants.lebanese14`).

Where a rule makes the player commit to something later in the turn (use the taken
discard, put a swapped joker back), a move after which that could no longer be done is
refused at once, so a turn can always end: the draw itself when the card could not be
used, a meld or lay-off that would strand it. Whether it still can be done is planned in
:mod:`service.rules.planning`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from service.rules import planning, scoring
from service.rules.cards import JOKER, rank_of, remove
from service.rules.errors import N_, Code, Message, Reason, Violation
from service.rules.melds import Meld, MeldError, Piece, check_meld, meld_from_table
from service.rules.moves import Discard, SwapJoker, TakeFromMeld
from service.rules.rule_ids import RuleId
from service.rules.ruleset import (
    CLOCK,
    MAX_STOCK_REBUILDS,
    STOCK_EXHAUSTED,
    Knob,
    Rules,
    Variant,
    knob_map,
)
from service.rules.state import GameState, TableMeld
from service.rules.variants.base import Compound, Event, LaidOff, Turn, VariantRules

# The knobs of Rummy 51 (the Lebanese 14 offers the same).

ACE = Knob("ace", "enum", RuleId.R51_RUN,
           "Ace in runs: low (A-2-3 only) or high_or_low (also Q-K-A; never K-A-2).",
           ("low", "high_or_low"))
OPENING_POINTS = Knob("opening_points", "int", RuleId.R51_OPEN,
                      "Points a player's first meld action must lay down.", minimum=0,
                      maximum=500)
OPENING_REQUIRES_CLEAN_RUN = Knob("opening_requires_clean_run", "bool", RuleId.R51_OPEN,
                                  "The opening must include a run of 3+ cards without a joker.")
OPENING_COUNTS_LAY_OFFS = Knob(
    "opening_counts_lay_offs", "bool", RuleId.R51_OPEN,
    "Lay-offs made in the opening action, after its melds, count toward the opening.")
MAX_WILDS_PER_MELD = Knob("max_wilds_per_meld", "int", RuleId.R51_WILDS,
                          "Most jokers in one meld, sets included (null = no limit).",
                          minimum=1, maximum=8, nullable=True)
JOKER_SWAP_FROM_SET = Knob(
    "joker_swap_from_set", "enum", RuleId.R51_SWAP,
    "Which sets a joker may be swapped out of: four_only (4-card sets), never, any.",
    ("four_only", "never", "any"))
ALLOW_TAKE_FROM_MELD = Knob(
    "allow_take_from_meld", "bool", RuleId.R51_TAKE,
    "An opened player may take an end card of a run of 4+ or a card of a 4-card set to meld "
    "it anew in the same turn.")
LAST_CARD_CALL = Knob(
    "last_card_call", "enum", RuleId.R51_LAST,
    "required: a discard leaving one card must carry announce: true, else 2 penalty cards; "
    "auto: the referee announces.", ("required", "auto"))
MUST_DISCARD_TO_GO_OUT = Knob("must_discard_to_go_out", "bool", RuleId.R51_OUT,
                              "Going out only by discarding the last card.")
JOKER_PENALTY = Knob("joker_penalty", "int", RuleId.R51_SCORE,
                     "What a joker left in hand counts.", minimum=0, maximum=500)
MATCH_END = Knob("match_end", "match_end", RuleId.R51_END,
                 "After the hand in which someone reaches a target total (lowest total wins), "
                 "after a number of deals, or by elimination at a total.",
                 ("target", "deals", "eliminate_at"))

KNOBS = knob_map(ACE, OPENING_POINTS, OPENING_REQUIRES_CLEAN_RUN, OPENING_COUNTS_LAY_OFFS,
                 MAX_WILDS_PER_MELD, JOKER_SWAP_FROM_SET, ALLOW_TAKE_FROM_MELD, LAST_CARD_CALL,
                 MUST_DISCARD_TO_GO_OUT, JOKER_PENALTY, STOCK_EXHAUSTED, MAX_STOCK_REBUILDS,
                 MATCH_END, CLOCK)
"""The knobs Rummy 51 offers, in the order its listing gives them."""

DEFAULTS: dict[str, Any] = {
    "ace": "high_or_low",
    "opening_points": 51,
    "opening_requires_clean_run": True,
    "opening_counts_lay_offs": True,
    "max_wilds_per_meld": 1,
    "joker_swap_from_set": "four_only",
    "allow_take_from_meld": False,
    "last_card_call": "required",
    "must_discard_to_go_out": True,
    "joker_penalty": 20,
    "stock_exhausted": "shuffle",  # R51-STOCK
    "max_stock_rebuilds": 3,
    "match_end": {"target": 1000},
    "clock": None,
}

RUMMY51 = Variant(
    id="rummy51", name="Rami / Rummy 51", decks=2, jokers=4, wild_twos=False,
    min_players=2, max_players=5, upcard=False, set_max=4, set_distinct_suits=True,
    run_same_suit=True, deal_sizes=dict.fromkeys(range(2, 6), 13), dealer_extra=1,
    dealer_starts=True, knobs=KNOBS, defaults=DEFAULTS,
    set_rule=RuleId.R51_SET, run_rule=RuleId.R51_RUN, wild_rule=RuleId.R51_WILDS,
    out_rule=RuleId.R51_OUT, end_rule=RuleId.R51_END,
)
"""Rami / Rummy 51: 108 cards, 2 to 5 players (R51-PLAYERS), 13 cards and the dealer 14
(R51-DEAL), no upcard."""

SINGLE_CARD_DETAIL = N_("a player holding a single card may not take the discard")


class Rummy51Rules(VariantRules):
    """R51 rules (and, through :class:`~service.rules.variants.lebanese14.
    Lebanese14Rules`, L14's)."""

    discard_draw_points = 0
    """Points that must go down in a turn in which the discard was taken (L14-DRAW)."""
    all_at_once_may_lay_off = False
    """An all-at-once finish may include lay-offs (L14-DRY)."""

    @property
    def draw_rule(self) -> RuleId:
        """The rule a discard that could not be used cites (L14-DRAW asks points too)."""
        return RuleId.R51_DRAW

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

    def check_phase(self, turn: Turn, what: str) -> None:
        """R51-FIRST: the dealer's first action is a discard only."""
        if turn.state.discard_only and what != "discard":
            raise Violation(Code.WRONG_PHASE, RuleId.R51_FIRST,
                            N_("cannot {what} now: the dealer's first action is a discard "
                               "only"), what=Message(what))

    def check_draw(self, turn: Turn, source: str) -> None:
        """R51-DRAW: the discard is taken only to be used at once, and not by a player
        holding a single card."""
        if source != "discard":
            return
        if len(turn.hand) == 1:
            raise Violation(Code.DISCARD_DRAW_FORBIDDEN, RuleId.R51_DRAW, SINGLE_CARD_DETAIL)
        card = turn.state.discard[-1]
        hand = [*turn.hand, card]
        if not planning.can_use(turn, hand, card, need_points=self.discard_draw_points):
            raise Violation(Code.DISCARD_DRAW_FORBIDDEN, self.draw_rule,
                            N_("{card} could not be put on the table this turn with {points} "
                               "points put down: the discard may be taken only to be used at "
                               "once") if self.discard_draw_points else
                            N_("{card} could not be put on the table this turn: the discard "
                               "may be taken only to be used at once"),
                            card=card, points=self.discard_draw_points)

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
            reasons.append(Reason(Code.OPENING_TOO_LOW, RuleId.R51_OPEN,
                                  N_("opening worth {points} points, {needed} needed"),
                                  points=points, needed=rules.opening_points))
        if rules.opening_requires_clean_run and not any(
                m.kind == "run" and not m.wilds for m in melds):
            reasons.append(Reason(Code.OPENING_NEEDS_CLEAN_RUN, RuleId.R51_OPEN,
                                  N_("the opening needs a run of 3 or more cards without a "
                                     "joker")))
        taken = turn.state.taken
        if taken is not None and turn.taken_pending():
            used = [c for m in melds for c in m.cards] + [
                p.card for lo in lay_offs for p in lo.pieces]
            if turn.hand.count(taken) - used.count(taken) > turn.state.taken_before:
                reasons.append(Reason(Code.DISCARD_NOT_USED, RuleId.R51_DRAW,
                                      N_("having taken {card} from the discard pile you must "
                                         "open with it"), card=taken))
        if reasons:
            raise Violation.of(reasons)

    def check_lay_off_target(self, turn: Turn, target: TableMeld,
                             pieces: Sequence[Piece]) -> None:
        """R51-JOKER-OPP: a joker may not be laid off on an opponent's run."""
        if target.kind == "run" and target.owner != turn.seat and any(
                p.card == JOKER for p in pieces):
            raise Violation(Code.WILD_NOT_ALLOWED, RuleId.R51_JOKER_OPP,
                            N_("a joker may not be laid off on an opponent's run"))

    def check_lay_offs(self, turn: Turn, lay_offs: Sequence[LaidOff],
                       in_meld_action: bool = False) -> None:
        if not turn.opened and not in_meld_action:
            raise Violation(Code.NOT_OPENED, RuleId.R51_OPEN,
                            N_("lay-offs come only after your opening"))

    def check_discard(self, turn: Turn, move: Discard) -> None:
        s = turn.state
        if turn.taken_pending():
            raise Violation(Code.DISCARD_NOT_USED, RuleId.R51_DRAW,
                            N_("{card}, taken from the discard pile, must be put on the table "
                               "before you discard"), card=s.taken)
        if s.joker_floor is not None and turn.hand.count(JOKER) > s.joker_floor:
            raise Violation(Code.JOKER_NOT_USED, RuleId.R51_SWAP,
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
        event: Event = {"type": "penalty", "seat": turn.seat, "rule": RuleId.R51_LAST.value,
                        "count": 0,
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
            if not planning.places_all(turn, list(turn.hand), pending,
                                       planning.table_melds(turn)):
                if len(pending) == 1:  # jokers only
                    raise Violation(Code.JOKER_NOT_USED, RuleId.R51_SWAP,
                                    N_("after this, the swapped jokers could no longer all go "
                                       "back on the table this turn"))
                raise Violation(Code.JOKER_NOT_USED, RuleId.R51_SWAP,
                                N_("after this, {card} (taken from the discard pile) and the "
                                   "swapped joker(s) could no longer all go on the table this "
                                   "turn"), card=s.taken)
            return
        if turn.taken_pending() and s.taken is not None and not planning.can_use(
                turn, turn.hand, s.taken, need_points=0):
            raise Violation(Code.DISCARD_NOT_USED, RuleId.R51_DRAW,
                            N_("after this, {card} (taken from the discard pile) could no "
                               "longer be put on the table this turn"), card=s.taken)
        if s.joker_floor is not None and turn.hand.count(JOKER) > s.joker_floor \
                and not planning.can_use(turn, turn.hand, JOKER, need_points=0):
            raise Violation(Code.JOKER_NOT_USED, RuleId.R51_SWAP,
                            N_("after this, the swapped joker could no longer go back on the "
                               "table this turn"))

    # -- what the legal-move listing asks ----------------------------------------------

    def least_meld_points(self, state: GameState, seat: int, rules: Rules) -> int:
        """R51-OPEN: before opening, one meld must be worth the opening by itself (a meld's
        points under the variant's reading filter are at most its best reading's)."""
        return 0 if state.melded[seat] else rules.opening_points

    def lists_takes(self, state: GameState, seat: int, rules: Rules) -> bool:
        """R51-TAKE: by the knob, once opened."""
        return rules.allow_take_from_meld and state.melded[seat]

    def compound_action(self, turn: Turn, melds: list[Meld] | None) -> Compound:
        """R51-OPEN: the opening, holding the card taken from the discard pile when there
        is one (with L14-DRAW's points)."""
        s = turn.state
        pending = s.taken if turn.taken_pending() else None
        need = self.discard_draw_points if s.taken is not None else 0
        return Compound("opening", RuleId.R51_OPEN,
                        planning.opening_move(turn, turn.hand, pending, need, melds))

    # -- joker swap and taking from melds --------------------------------------------------

    def swap_joker(self, turn: Turn, move: SwapJoker) -> None:
        s = turn.state
        if not turn.opened:
            raise Violation(Code.NOT_OPENED, RuleId.R51_SWAP,
                            N_("only a player who has opened may swap a joker"))
        if move.card == JOKER:  # (a joker is no card a joker stands for: "J*" is a jack)
            raise Violation(Code.SWAP_NOT_ALLOWED, RuleId.R51_SWAP,
                            N_("exchange a joker for the card it stands for, not for a "
                               "joker"))
        turn.holds([move.card])
        target = s.meld(move.meld_id)
        if target is None:
            raise Violation(Code.UNKNOWN_MELD, RuleId.R51_SWAP,
                            N_("no meld {meld_id!r} on the table"), meld_id=move.meld_id)
        index = self._swap_index(turn, target, move.card)
        jokers_before = turn.hand.count(JOKER)
        target = s.own_meld(target)
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
            raise Violation(Code.SWAP_NOT_ALLOWED, RuleId.R51_SWAP,
                            N_("{meld_id} holds no joker"), meld_id=target.id)
        if target.kind == "set":
            if knob == "never":
                raise Violation(Code.SWAP_NOT_ALLOWED, RuleId.R51_SWAP,
                                N_("jokers may not be swapped out of sets "
                                   "(joker_swap_from_set)"))
            if knob == "four_only" and len(target.cards) < 4:
                raise Violation(Code.SWAP_NOT_ALLOWED, RuleId.R51_SWAP,
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
        raise Violation(Code.SWAP_NOT_ALLOWED, RuleId.R51_SWAP,
                        N_("the joker in {meld_id} stands for {stands_for}, not {card}"),
                        meld_id=target.id, stands_for=stands, card=card)

    def take_from_meld(self, turn: Turn, move: TakeFromMeld) -> None:
        s = turn.state
        if not turn.rules.allow_take_from_meld:
            raise Violation(Code.INVALID_MELD, RuleId.R51_TAKE,
                            N_("taking cards from melds is not allowed "
                               "(allow_take_from_meld)"))
        if not turn.opened:
            raise Violation(Code.NOT_OPENED, RuleId.R51_TAKE,
                            N_("only a player who has opened may take cards from melds"))
        taken: list[str] = []
        for take in move.take:
            target = s.meld(take.meld_id)
            if target is None:
                raise Violation(Code.UNKNOWN_MELD, RuleId.R51_TAKE,
                                N_("no meld {meld_id!r} on the table"), meld_id=take.meld_id)
            self._take_one(turn, s.own_meld(target), take.card)
            taken.append(take.card)
        pieces = [p.card for m in move.melds for p in m]
        for card in taken:
            if card not in pieces:
                raise Violation(Code.INVALID_MELD, RuleId.R51_TAKE,
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
            raise Violation(Code.SWAP_NOT_ALLOWED, RuleId.R51_TAKE,
                            N_("a joker is taken only by swapping it (R51-SWAP)"))
        if card not in target.cards:
            raise Violation(Code.INVALID_MELD, RuleId.R51_TAKE,
                            N_("{card} is not in {meld_id}"), card=card, meld_id=target.id)
        if target.kind == "run":
            if len(target.cards) < 4 or card not in (target.cards[0], target.cards[-1]):
                raise Violation(Code.INVALID_MELD, RuleId.R51_TAKE,
                                N_("only an end card of a run of 4 or more may be taken"))
            at_start = target.cards[0] == card
            index = 0 if at_start else len(target.cards) - 1
            del target.cards[index]
            del target.idents[index]
            if at_start:
                target.start += 1
        else:
            if len(target.cards) != 4:
                raise Violation(Code.INVALID_MELD, RuleId.R51_TAKE,
                                N_("a card may be taken only from a 4-card set"))
            index = target.cards.index(card)
            del target.cards[index]
            del target.idents[index]
            try:
                reread = check_meld([Piece(c) for c in target.cards], turn.shape)
            except MeldError:
                raise Violation(Code.INVALID_MELD, RuleId.R51_TAKE,
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

    def lowest_wins(self, rules: Rules) -> bool:
        """Penalty scoring: the lowest total is the best."""
        return True

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


RULES: Rummy51Rules = Rummy51Rules(RUMMY51)
"""Rami / Rummy 51, as :func:`service.rules.variants.find_variant` finds it."""
