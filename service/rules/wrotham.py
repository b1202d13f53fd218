"""Wrotham rummy (RULES.md WROTHAM): basic rummy with three wild jokers, an eight-card
start without a draw, joker exchanges, and late deals that go down all at once.

* WROTHAM-DECK: 52 cards and 3 jokers, any number of them in a meld (at least one natural);
  sets of 3 or 4 of different suits; runs of one suit; knob ``ace`` (default low).
* WROTHAM-DEAL: the starting player (the dealer's left) gets 8 cards, the others 7, no
  upcard; the starting player's first turn has no draw (they may meld, then discard).
* WROTHAM-SWAP: a player holding the card a melded joker stands for may exchange it for the
  joker on their turn (after the draw, or in the starting player's first turn), opened or
  not, and keeps the joker. A joker in a 3-card set cannot be exchanged.
* WROTHAM-LATE: in the late deals a meld action must put down every card but the one the
  player then discards to go out; lay-offs are refused there.
* WROTHAM-SCORE: BASIC-SCORE and BASIC-RUMMY, a joker in hand counting ``joker_penalty``
  (15); after the last deal the highest total wins (``winner_collects``) or the lowest
  (``penalty``).

Choices where RULES.md leaves one open:

* The match lasts ``match_end: {"deals": N}`` deals (default 6) and the late deals are the
  last three (deals 4–6 of six; the seed says "in the last three rounds").
* In a late deal the all-at-once action is not limited by ``melds_per_turn`` (going down
  with seven cards usually takes two or three melds), and it must leave exactly one card:
  laying down all eight is refused (the rule goes out "with a discard of the eighth").
* In a 4-card set with two jokers (both of open suit) a joker may be exchanged for either
  missing suit; the other joker then stands for the last one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from service.rules.cards import JOKER, rank_of, remove
from service.rules.errors import N_, Code, Violation
from service.rules.melds import OPEN_SUIT, Meld, MeldShape, meld_from_table
from service.rules.moves import SwapJoker
from service.rules.ruleset import Rules
from service.rules.state import GameState, TableMeld
from service.rules.turn import LaidOff, Turn, VariantRules

LATE_DEALS = 3
"""How many deals at the end of the match are late deals (WROTHAM-LATE)."""


def deals_in_match(rules: Rules) -> int:
    """The number of deals of the match (six unless ``match_end`` says otherwise)."""
    return (rules.match_end or {}).get("deals", 6)


def is_late_deal(state: GameState, rules: Rules) -> bool:
    """WROTHAM-LATE: the current hand is one of the last three of the match."""
    return state.hand_number > deals_in_match(rules) - LATE_DEALS


class WrothamRules(VariantRules):
    """WROTHAM rules on top of basic rummy's."""

    @property
    def rule_prefix(self) -> str:
        """The generic steps cite BASIC's ids (BASIC-END for a finished match, BASIC-OUT):
        RULES.md has no WROTHAM-END or WROTHAM-OUT, Wrotham playing as basic rummy there."""
        return "BASIC"

    def meld_shape(self, rules: Rules) -> MeldShape:
        """WROTHAM-DECK for sets and wilds; runs are C-RUN's."""
        return replace(super().meld_shape(rules), set_rule="WROTHAM-DECK", run_rule="C-RUN",
                       wild_rule="WROTHAM-DECK")

    def first_turn(self, state: GameState) -> None:
        """WROTHAM-DEAL: the starting player holds 8 cards and does not draw."""
        state.turn = self.variant.starter(state.players_count, state.dealer)
        state.phase = "play"

    # -- melds and lay-offs --------------------------------------------------------------

    def check_meld_action(self, turn: Turn, melds: Sequence[Meld],
                          lay_offs: Sequence[LaidOff]) -> None:
        used = sum(len(m.cards) for m in melds) + sum(len(lo.pieces) for lo in lay_offs)
        left = len(turn.hand) - used
        if is_late_deal(turn.state, turn.rules):
            if left > 1:
                raise Violation(Code.MUST_MELD_ALL_AT_ONCE, "WROTHAM-LATE",
                                N_("in deal {deal} (a late deal) you go down with all your "
                                   "cards at once but the one you discard: this would leave "
                                   "{left}"), deal=turn.state.hand_number, left=left)
            if left < 1:
                raise Violation(Code.MUST_DISCARD_TO_GO_OUT, "WROTHAM-LATE",
                                N_("in a late deal you go out with a discard: keep one card"))
            if lay_offs:
                self.check_lay_offs(turn, lay_offs, in_meld_action=True)
            return
        self._keep_one(turn, used)
        super().check_meld_action(turn, melds, lay_offs)

    def check_lay_offs(self, turn: Turn, lay_offs: Sequence[LaidOff],
                       in_meld_action: bool = False) -> None:
        if not in_meld_action:
            if is_late_deal(turn.state, turn.rules):
                raise Violation(Code.MUST_MELD_ALL_AT_ONCE, "WROTHAM-LATE",
                                N_("in deal {deal} (a late deal) nothing goes on the table "
                                   "until all your cards but one go down at once"),
                                deal=turn.state.hand_number)
            self._keep_one(turn, sum(len(lo.pieces) for lo in lay_offs))
        super().check_lay_offs(turn, lay_offs, in_meld_action)

    @staticmethod
    def _keep_one(turn: Turn, used: int) -> None:
        """BASIC-OUT's ``must_discard_to_go_out``, cited by its own rule id."""
        if turn.rules.must_discard_to_go_out and used >= len(turn.hand):
            raise Violation(Code.MUST_DISCARD_TO_GO_OUT, "BASIC-OUT",
                            N_("this would leave no card to discard; keep one to go out"))

    # -- joker exchange ------------------------------------------------------------------

    def swap_joker(self, turn: Turn, move: SwapJoker) -> None:
        """WROTHAM-SWAP: exchange a melded joker for the card it stands for; the joker goes
        to the hand and may stay there."""
        s = turn.state
        if move.card == JOKER:
            raise Violation(Code.SWAP_NOT_ALLOWED, "WROTHAM-SWAP",
                            N_("exchange a joker for the card it stands for, not for a "
                               "joker"))
        turn.holds([move.card])
        target = s.meld(move.meld_id)
        if target is None:
            on_table = ", ".join(m.id for m in s.melds)
            raise Violation(Code.UNKNOWN_MELD, "WROTHAM-SWAP",
                            N_("no meld {meld_id!r} on the table ({melds})") if on_table else
                            N_("no meld {meld_id!r} on the table (none yet)"),
                            meld_id=move.meld_id, melds=on_table)
        index = self._swap_index(target, move.card)
        target.cards[index] = move.card
        target.idents[index] = move.card
        if target.kind == "set":
            self._settle_set(target)
        target.points = meld_from_table(target.kind, target.cards, target.idents,
                                        target.start, turn.shape).points
        s.hands[turn.seat] = [*remove(turn.hand, [move.card]), JOKER]
        s.turn_tabled = True
        turn.events.append({"type": "swap_joker", "seat": turn.seat, "meld_id": target.id,
                            "card": move.card, "meld": target.public()})
        turn.check_leaves([])  # a joker taken from the pile and melded, then one swapped in

    @staticmethod
    def _swap_index(target: TableMeld, card: str) -> int:
        jokers = [i for i, c in enumerate(target.cards) if c == JOKER]
        if not jokers:
            raise Violation(Code.SWAP_NOT_ALLOWED, "WROTHAM-SWAP", N_("{meld_id} holds no joker"),
                            meld_id=target.id)
        if target.kind == "set" and len(target.cards) < 4:
            raise Violation(Code.SWAP_NOT_ALLOWED, "WROTHAM-SWAP",
                            N_("a joker in a 3-card set cannot be exchanged: its identity is "
                               "open"))
        suits = {ident[1] for ident in target.idents}
        for i in jokers:
            ident = target.idents[i]
            if ident == card:
                return i
            if (ident[1] == OPEN_SUIT and target.kind == "set"
                    and rank_of(card) == target.start and card[1] not in suits):
                return i
        stands = ", ".join(target.idents[i] for i in jokers)
        raise Violation(Code.SWAP_NOT_ALLOWED, "WROTHAM-SWAP",
                        N_("the joker in {meld_id} stands for {stands_for}, not {card}"),
                        meld_id=target.id, stands_for=stands, card=card)

    @staticmethod
    def _settle_set(target: TableMeld) -> None:
        """C-WILD: a set's last open joker takes the only suit left."""
        open_ = [i for i, ident in enumerate(target.idents) if ident[1] == OPEN_SUIT]
        missing = sorted(set("SHDC") - {ident[1] for ident in target.idents})
        if len(open_) == 1 and len(missing) == 1:
            target.idents[open_[0]] = target.idents[open_[0]][0] + missing[0]
