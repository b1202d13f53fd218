"""Card values and hand scoring (C-VALUE, BASIC-SCORE, BASIC-RUMMY, BASIC-BLOCK, BASIC-END)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from service.rules.cards import JOKER, rank_of
from service.rules.ruleset import Rules, Variant

Number = int | float


def tidy(x: Number) -> Number:
    """``x`` as an int when it is whole (fractions are kept: BASIC-BLOCK)."""
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return x


def card_count(variant: Variant, rules: Rules, card: str) -> int:
    """What ``card`` counts left in a hand (BASIC-SCORE)."""
    del variant
    if card == JOKER:
        return 0
    rank = rank_of(card)
    if rank == 1:
        return 1 if rules.ace == "low" else 15
    return min(rank, 10)


def meld_value_function(variant: Variant, rules: Rules) -> Callable[[int, bool], int]:
    """Points of a card identity on the table: (rank 1..13, ace high?) -> points.

    Used to choose between readings of a meld (C-MELD) and as the meld's ``points``.
    """
    del variant
    ace = 1 if rules.ace == "low" else 15

    def value(rank: int, high: bool) -> int:
        del high
        return ace if rank == 1 else min(rank, 10)

    return value


@dataclass(frozen=True)
class HandScore:
    counts: list[Number]
    """What each seat's remaining cards count (0 for the seat that went out)."""
    scores: list[Number]
    """What each seat scores for the hand."""
    going_rummy: bool


def score_hand(variant: Variant, rules: Rules, hands: Sequence[Sequence[str]],
               went_out: int | None, *, all_at_once: bool = False) -> HandScore:
    """Score the end of a hand.

    ``went_out`` is the seat that went out, or None when the hand ended with nobody out
    (BASIC-BLOCK). ``all_at_once``: the winner put the whole hand down in one turn
    (BASIC-RUMMY).
    """
    counts: list[Number] = [sum(card_count(variant, rules, c) for c in h) for h in hands]
    n = len(hands)
    if went_out is None:
        if rules.scoring == "penalty":
            return HandScore(counts, list(counts), False)
        low = min(counts)
        tied = [i for i, c in enumerate(counts) if c == low]
        pot = sum(c - low for c in counts)
        share = tidy(pot / len(tied))
        return HandScore(counts, [share if i in tied else 0 for i in range(n)], False)
    counts[went_out] = 0
    rummy = all_at_once and rules.going_rummy != "off"
    factor = 2 if rummy and rules.going_rummy == "double" else 1
    bonus = 10 if rummy and rules.going_rummy == "bonus10" else 0
    if rules.scoring == "penalty":
        scores: list[Number] = [c * factor for c in counts]
        scores[went_out] = -bonus
    else:
        scores = [0] * n
        scores[went_out] = sum(counts) * factor + bonus
    return HandScore(counts, scores, rummy)


def match_winners(variant: Variant, rules: Rules, totals: Sequence[Number],
                  hands_played: int) -> list[int] | None:
    """The winning seats once the match is over (BASIC-END), else None."""
    del variant
    end = rules.match_end or {"target": 150}
    over = hands_played >= end["deals"] if "deals" in end else max(totals) >= end["target"]
    if not over:
        return None
    best = min(totals) if rules.scoring == "penalty" else max(totals)
    return [i for i, t in enumerate(totals) if t == best]
