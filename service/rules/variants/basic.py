"""Basic rummy (docs/rules.md, BASIC): one deck, no wilds, and the house rules of seeds 000 and
003 as knobs (melds per turn, lay-offs only after one's own meld, going out by discarding,
the scoring, going rummy, the end of the match)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from service.rules import scoring
from service.rules.errors import N_, Code, Violation
from service.rules.melds import Meld
from service.rules.rule_ids import RuleId
from service.rules.ruleset import (
    ACE,
    CLOCK,
    MAX_STOCK_REBUILDS,
    STOCK_EXHAUSTED,
    Knob,
    Rules,
    Variant,
    knob_map,
)
from service.rules.state import GameState
from service.rules.variants.base import LaidOff, Turn, VariantRules

# The knobs basic rummy brings (Wrotham rummy offers them too).

MELDS_PER_TURN = Knob(
    "melds_per_turn", "int_or_enum", RuleId.BASIC_MELDS_PER_TURN,
    "How many new melds a player may make in one turn (lay-offs are never limited).",
    ("unlimited",), minimum=1, maximum=20)  # 20: more than any hand could make
LAY_OFF_REQUIRES_OWN_MELD = Knob(
    "lay_off_requires_own_meld", "bool", RuleId.BASIC_LAYOFF,
    "A player may lay off only after having melded in this hand.")
MUST_DISCARD_TO_GO_OUT = Knob(
    "must_discard_to_go_out", "bool", RuleId.BASIC_OUT,
    "A meld or lay-off that would leave no card to discard is refused.")
SCORING = Knob(
    "scoring", "enum", RuleId.BASIC_SCORE,
    "winner_collects: the winner is credited the others' counts; penalty: each loser scores "
    "their own count.", ("winner_collects", "penalty"))
GOING_RUMMY = Knob(
    "going_rummy", "enum", RuleId.BASIC_RUMMY,
    "Going rummy (whole hand down in one turn): double the hand's points, a 10-point bonus "
    "to the winner, or nothing.", ("double", "bonus10", "off"))
MATCH_END = Knob(
    "match_end", "match_end", RuleId.BASIC_END,
    "When the match ends: after the hand in which someone reaches a target total, or after "
    "a number of deals.", ("target", "deals"))

BASIC = Variant(
    id="basic", name="Basic rummy", decks=1, jokers=0, wild_twos=False,
    min_players=2, max_players=6, upcard=True, set_max=4, set_distinct_suits=True,
    run_same_suit=True, deal_sizes={2: 10, 3: 7, 4: 7, 5: 6, 6: 6},
    knobs=knob_map(ACE, MELDS_PER_TURN, LAY_OFF_REQUIRES_OWN_MELD, MUST_DISCARD_TO_GO_OUT,
                   SCORING, GOING_RUMMY, STOCK_EXHAUSTED, MAX_STOCK_REBUILDS, MATCH_END, CLOCK),
    defaults={
        "ace": "low",
        "melds_per_turn": "unlimited",
        "lay_off_requires_own_meld": False,
        "must_discard_to_go_out": False,
        "scoring": "winner_collects",
        "going_rummy": "double",
        "stock_exhausted": "shuffle",  # BASIC-STOCK
        "max_stock_rebuilds": 3,
        "match_end": None,  # derived: {"target": 150} or {"target": 100} by scoring
        "clock": None,
    },
    set_rule=RuleId.BASIC_SET, run_rule=RuleId.C_RUN, wild_rule=RuleId.C_MELD,
    out_rule=RuleId.BASIC_OUT, end_rule=RuleId.BASIC_END,
)
"""Basic rummy: 52 cards, 2 to 6 players (BASIC-PLAYERS, BASIC-DEAL), sets of 3 or 4
(BASIC-SET). It has no wilds, so its wild rule is never cited."""


class BasicRules(VariantRules):
    """BASIC rules: card values, the meld and lay-off knobs, scoring and the match's end."""

    # -- values ----------------------------------------------------------------------------

    def meld_value(self, rules: Rules) -> Callable[[int, bool], int]:
        """C-VALUE: a card on the table is worth what it counts in hand (BASIC-SCORE)."""
        ace = 1 if rules.ace == "low" else 15

        def value(rank: int, high: bool) -> int:
            del high
            return ace if rank == 1 else min(rank, 10)

        return value

    def card_count(self, rules: Rules, card: str) -> int:
        """What ``card`` counts left in a hand (BASIC-SCORE)."""
        return scoring.basic_count(rules, card)

    # -- the turn ------------------------------------------------------------------------

    def check_meld_action(self, turn: Turn, melds: Sequence[Meld],
                          lay_offs: Sequence[LaidOff]) -> None:
        """BASIC-MELDS-PER-TURN: at most ``melds_per_turn`` new melds in one turn."""
        limit = turn.rules.melds_limit
        if limit is not None and turn.state.turn_melds + len(melds) > limit:
            raise Violation(Code.MELD_LIMIT, RuleId.BASIC_MELDS_PER_TURN,
                            N_("at most {limit} new meld(s) per turn"), limit=limit)
        super().check_meld_action(turn, melds, lay_offs)

    def check_lay_offs(self, turn: Turn, lay_offs: Sequence[LaidOff],
                       in_meld_action: bool = False) -> None:
        """BASIC-LAYOFF: with ``lay_off_requires_own_meld``, only after one's own meld."""
        if turn.rules.lay_off_requires_own_meld and not turn.state.melded[turn.seat] \
                and not in_meld_action:
            raise Violation(Code.INVALID_LAY_OFF, RuleId.BASIC_LAYOFF,
                            N_("you may lay off only after making a meld of your own this "
                               "hand"))

    # -- the end of a hand and of the match ----------------------------------------------

    def score(self, rules: Rules, end: scoring.HandEnd) -> scoring.HandScore:
        """Score a hand (BASIC-SCORE, BASIC-RUMMY, BASIC-BLOCK): pure."""
        return scoring.score_basic(
            rules, [[self.card_count(rules, c) for c in h] for h in end.hands],
            end.went_out, all_at_once=end.all_at_once)

    def match_winners(self, state: GameState, rules: Rules) -> list[int] | None:
        """BASIC-END."""
        return scoring.basic_winners(rules, state.totals, len(state.history))


RULES: BasicRules = BasicRules(BASIC)
"""Basic rummy, as :func:`service.rules.variants.find_variant` finds it."""
