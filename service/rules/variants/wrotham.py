"""Wrotham rummy (docs/rules.md, WROTHAM): basic rummy with three wild jokers, an eight-card
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

Choices where the rules leave one open:

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

from service.rules.cards import JOKER, rank_of, remove
from service.rules.compound import find_all_but_one
from service.rules.errors import N_, Code, Violation
from service.rules.melds import OPEN_SUIT, Meld, meld_from_table
from service.rules.moves import SwapJoker
from service.rules.rule_ids import RuleId
from service.rules.ruleset import CLOCK, Knob, Rules, Variant
from service.rules.state import GameState, TableMeld
from service.rules.variants.base import Compound, LaidOff, Turn
from service.rules.variants.basic import BASIC, BasicRules

LATE_DEALS = 3
"""How many deals at the end of the match are late deals (WROTHAM-LATE)."""

JOKER_PENALTY = Knob("joker_penalty", "int", RuleId.WROTHAM_SCORE,
                     "What a joker left in hand counts.", minimum=0, maximum=500)
MATCH_END = Knob("match_end", "match_end", RuleId.WROTHAM_LATE,
                 "The number of deals (six); the last three are late deals, in which a "
                 "player goes down all at once.", ("deals",))

WROTHAM = Variant(
    id="wrotham", name="Wrotham rummy", decks=1, jokers=3, wild_twos=False,
    min_players=2, max_players=6, upcard=False, set_max=4, set_distinct_suits=True,
    run_same_suit=True, deal_sizes=dict.fromkeys(range(2, 7), 7), starter_extra=1,
    # WROTHAM-SCORE: as BASIC-SCORE and BASIC-RUMMY, so basic rummy's knobs, plus these
    knobs={**{k: v for k, v in BASIC.knobs.items() if k not in ("match_end", "clock")},
           "joker_penalty": JOKER_PENALTY, "match_end": MATCH_END, "clock": CLOCK},
    defaults={**{k: v for k, v in BASIC.defaults.items() if k not in ("match_end", "clock")},
              "joker_penalty": 15, "match_end": {"deals": 6}, "clock": None},
    # WROTHAM-DECK for sets and wilds, C-RUN's runs; the rules have no WROTHAM-END or
    # WROTHAM-OUT: Wrotham plays as basic rummy there
    set_rule=RuleId.WROTHAM_DECK, run_rule=RuleId.C_RUN, wild_rule=RuleId.WROTHAM_DECK,
    out_rule=RuleId.BASIC_OUT, end_rule=RuleId.BASIC_END,
)
"""Wrotham rummy: 52 cards and 3 jokers, 2 to 6 players (WROTHAM-PLAYERS); the starting
player gets 8 cards, no upcard (WROTHAM-DEAL)."""


def deals_in_match(rules: Rules) -> int:
    """The number of deals of the match (six unless ``match_end`` says otherwise)."""
    return (rules.match_end or {}).get("deals", 6)


def is_late_deal(state: GameState, rules: Rules) -> bool:
    """WROTHAM-LATE: the current hand is one of the last three of the match."""
    return state.hand_number > deals_in_match(rules) - LATE_DEALS


class WrothamRules(BasicRules):
    """WROTHAM rules on top of basic rummy's."""

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
                raise Violation(Code.MUST_MELD_ALL_AT_ONCE, RuleId.WROTHAM_LATE,
                                N_("in deal {deal} (a late deal) you go down with all your "
                                   "cards at once but the one you discard: this would leave "
                                   "{left}"), deal=turn.state.hand_number, left=left)
            if left < 1:
                raise Violation(Code.MUST_DISCARD_TO_GO_OUT, RuleId.WROTHAM_LATE,
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
                raise Violation(Code.MUST_MELD_ALL_AT_ONCE, RuleId.WROTHAM_LATE,
                                N_("in deal {deal} (a late deal) nothing goes on the table "
                                   "until all your cards but one go down at once"),
                                deal=turn.state.hand_number)
            self._keep_one(turn, sum(len(lo.pieces) for lo in lay_offs))
        super().check_lay_offs(turn, lay_offs, in_meld_action)

    @staticmethod
    def _keep_one(turn: Turn, used: int) -> None:
        """BASIC-OUT's ``must_discard_to_go_out``, cited by its own rule id."""
        if turn.rules.must_discard_to_go_out and used >= len(turn.hand):
            raise Violation(Code.MUST_DISCARD_TO_GO_OUT, RuleId.BASIC_OUT,
                            N_("this would leave no card to discard; keep one to go out"))

    def compound_action(self, turn: Turn, melds: list[Meld] | None) -> Compound | None:
        """WROTHAM-LATE: in a late deal, every card but one down at once (the one left is
        not the card just taken from the discard pile, C-DISCARD-BACK)."""
        s = turn.state
        if not is_late_deal(s, turn.rules):
            return None
        barred = s.taken if s.taken_before == 0 else None
        return Compound("all_at_once", RuleId.WROTHAM_LATE,
                        find_all_but_one(turn.hand, turn.shape, barred))

    # -- joker exchange ------------------------------------------------------------------

    def swap_joker(self, turn: Turn, move: SwapJoker) -> None:
        """WROTHAM-SWAP: exchange a melded joker for the card it stands for; the joker goes
        to the hand and may stay there."""
        s = turn.state
        if move.card == JOKER:
            raise Violation(Code.SWAP_NOT_ALLOWED, RuleId.WROTHAM_SWAP,
                            N_("exchange a joker for the card it stands for, not for a "
                               "joker"))
        turn.holds([move.card])
        target = s.meld(move.meld_id)
        if target is None:
            on_table = ", ".join(m.id for m in s.melds)
            raise Violation(Code.UNKNOWN_MELD, RuleId.WROTHAM_SWAP,
                            N_("no meld {meld_id!r} on the table ({melds})") if on_table else
                            N_("no meld {meld_id!r} on the table (none yet)"),
                            meld_id=move.meld_id, melds=on_table)
        index = self._swap_index(target, move.card)
        target = s.own_meld(target)
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
            raise Violation(Code.SWAP_NOT_ALLOWED, RuleId.WROTHAM_SWAP,
                            N_("{meld_id} holds no joker"), meld_id=target.id)
        if target.kind == "set" and len(target.cards) < 4:
            raise Violation(Code.SWAP_NOT_ALLOWED, RuleId.WROTHAM_SWAP,
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
        raise Violation(Code.SWAP_NOT_ALLOWED, RuleId.WROTHAM_SWAP,
                        N_("the joker in {meld_id} stands for {stands_for}, not {card}"),
                        meld_id=target.id, stands_for=stands, card=card)

    @staticmethod
    def _settle_set(target: TableMeld) -> None:
        """C-WILD: a set's last open joker takes the only suit left."""
        open_ = [i for i, ident in enumerate(target.idents) if ident[1] == OPEN_SUIT]
        missing = sorted(set("SHDC") - {ident[1] for ident in target.idents})
        if len(open_) == 1 and len(missing) == 1:
            target.idents[open_[0]] = target.idents[open_[0]][0] + missing[0]


RULES: WrothamRules = WrothamRules(WROTHAM)
"""Wrotham rummy, as :func:`service.rules.variants.find_variant` finds it."""
