"""The Lebanese "14" (docs/rules.md, L14): Rummy 51 (:mod:`service.rules.variants.rummy51`) but
for its own rules — 14 cards, the ace worth 10 everywhere (L14-ACE), a joker in a run only
for a card both copies of which are melded (L14-JOKER-RUN), 71 points put down in a turn
that takes the discard (L14-DRAW), and its all-at-once scoring (L14-DRY). The rules it
shares with Rummy 51 cite R51's ids.
"""

from __future__ import annotations

from service.rules import planning, scoring, search
from service.rules.cards import JOKER
from service.rules.errors import N_, Code, Reason, Violation
from service.rules.melds import Accept, Meld
from service.rules.moves import Discard
from service.rules.rule_ids import RuleId
from service.rules.ruleset import Variant
from service.rules.variants.base import Turn
from service.rules.variants.rummy51 import DEFAULTS, KNOBS, Rummy51Rules

LEBANESE14 = Variant(
    id="lebanese14", name='Lebanese "14"', decks=2, jokers=4, wild_twos=False,
    min_players=2, max_players=5, upcard=False, set_max=4, set_distinct_suits=True,
    run_same_suit=True, deal_sizes=dict.fromkeys(range(2, 6), 14), dealer_extra=1,
    dealer_starts=True, knobs=KNOBS, defaults=DEFAULTS,
    set_rule=RuleId.R51_SET, run_rule=RuleId.R51_RUN, wild_rule=RuleId.R51_WILDS,
    out_rule=RuleId.R51_OUT, end_rule=RuleId.R51_END,
)
"""The Lebanese 14: Rummy 51's deck and knobs, 14 cards and the dealer 15 (L14-DEAL)."""


class Lebanese14Rules(Rummy51Rules):
    """L14: ace 10 everywhere, 14 cards, burned-joker runs, 71 to take the discard."""

    discard_draw_points = 71
    all_at_once_may_lay_off = True

    @property
    def draw_rule(self) -> RuleId:
        return RuleId.L14_DRAW

    def ace_value(self, high: bool) -> int:
        """L14-ACE: an ace is worth 10 everywhere."""
        return 10

    def reading_filter(self, turn: Turn) -> Accept:
        """L14-JOKER-RUN: a joker stands in a run only for a card both copies of which are
        already in melds on the table (sets are exempt)."""
        melds = turn.state.melds

        def accept(meld: Meld) -> Reason | None:
            if meld.kind != "run":
                return None
            for i, ident in meld.wilds:
                if meld.cards[i] == JOKER and sum(m.cards.count(ident) for m in melds) < 2:
                    return Reason(Code.WILD_NOT_ALLOWED, RuleId.L14_JOKER_RUN,
                                  N_("a joker may stand for {card} in a run only once both "
                                     "{card}s are in melds on the table"), card=ident)
            return None

        return accept

    def check_discard(self, turn: Turn, move: Discard) -> None:
        """R51's, and L14-DRAW: the 71 points are down before the discard."""
        super().check_discard(turn, move)
        s = turn.state
        if s.taken is not None and s.turn_points < self.discard_draw_points:
            raise Violation(Code.DISCARD_DRAW_FORBIDDEN, RuleId.L14_DRAW,
                            N_("having taken the discard you must put down {points} points "
                               "this turn; {so_far} so far"),
                            points=self.discard_draw_points, so_far=s.turn_points)

    def check_obligations(self, turn: Turn) -> None:
        """R51's, and L14-DRAW: the 71 points can still go down this turn."""
        super().check_obligations(turn)
        s = turn.state
        if s.taken is not None and s.turn_points < self.discard_draw_points:
            need = self.discard_draw_points - s.turn_points
            keep = 1 if turn.rules.must_discard_to_go_out else 0
            jokers = s.joker_floor is not None and turn.hand.count(JOKER) > s.joker_floor
            if turn.taken_pending() and not jokers:
                # the taken card and the points together (melds and lay-offs)
                reached = planning.can_use(turn, turn.hand, s.taken,
                                           need_points=self.discard_draw_points)
            elif turn.opened:
                reached = planning.reaches(turn, turn.hand, need, keep)
            else:
                reached = search.best_combination(
                    turn.hand, planning.hand_melds(turn, turn.hand), need_points=need,
                    keep=keep) is not None
            if not reached:
                raise Violation(Code.DISCARD_DRAW_FORBIDDEN, RuleId.L14_DRAW,
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


RULES: Lebanese14Rules = Lebanese14Rules(LEBANESE14)
"""The Lebanese 14, as :func:`service.rules.variants.find_variant` finds it."""
