"""Card values and hand scoring shared by the variants (C-VALUE, BASIC-SCORE, BASIC-RUMMY,
BASIC-BLOCK, BASIC-END). Variant-specific scoring lives with the variant's rules."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from service.rules.cards import JOKER, rank_of
from service.rules.ruleset import Rules

Number = int | float


def tidy(x: Number) -> Number:
    """``x`` as an int when it is whole (fractions are kept: BASIC-BLOCK)."""
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return x


def round_half_up(x: float) -> int:
    """Halves round up (L14-DRY)."""
    return math.floor(x + 0.5)


def basic_count(rules: Rules, card: str) -> int:
    """BASIC-SCORE: ace 1 (15 whenever ``ace`` is not low), 2–10 face value, J Q K 10; a
    joker counts ``joker_penalty`` (WROTHAM-SCORE)."""
    if card == JOKER:
        return rules.joker_penalty
    rank = rank_of(card)
    if rank == 1:
        return 1 if rules.ace == "low" else 15
    return min(rank, 10)


@dataclass(frozen=True)
class HandEnd:
    """The facts a hand's scoring depends on (what ``POST /v1/scores/hand`` takes)."""

    hands: Sequence[Sequence[str]]
    """The cards each seat still holds."""
    went_out: int | None
    """The seat that went out, or None when nobody did (BASIC-BLOCK)."""
    all_at_once: bool = False
    """The winner put the whole hand down in one turn (BASIC-RUMMY, R51-ALL-AT-ONCE)."""
    opened: Sequence[bool] | None = None
    """Per seat: has opened (R51/L14)."""
    final_discard: str | None = None
    """The winner's last discard (R51-SCORE: a joker quadruples)."""
    jokers_used: int = 0
    """Jokers the winner put down in an all-at-once finish (L14-DRY)."""
    playing: Sequence[bool] | None = None
    """Per seat: still in the match (R51-END eliminate_at); None = everyone."""


@dataclass(frozen=True)
class HandScore:
    counts: list[Number]
    """What each seat's remaining cards count (0 for the seat that went out)."""
    scores: list[Number]
    """What each seat scores for the hand."""
    going_rummy: bool = False
    flags: dict[str, Any] = field(default_factory=dict)
    """Variant facts of the finish (``all_at_once``, ``dry``, ``jokers_used`` …)."""


def score_basic(rules: Rules, counts_by_card: Sequence[Sequence[int]], went_out: int | None,
                *, all_at_once: bool = False) -> HandScore:
    """Score a basic-rummy hand from each seat's card counts.

    ``went_out`` is the seat that went out, or None when the hand ended with nobody out
    (BASIC-BLOCK). ``all_at_once``: the winner put the whole hand down in one turn
    (BASIC-RUMMY).
    """
    counts: list[Number] = [sum(c) for c in counts_by_card]
    n = len(counts)
    if went_out is None:
        if rules.scoring == "penalty":
            return HandScore(counts, list(counts))
        low = min(counts)
        tied = [i for i, c in enumerate(counts) if c == low]
        pot = sum(c - low for c in counts)
        share = tidy(pot / len(tied))
        return HandScore(counts, [share if i in tied else 0 for i in range(n)])
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


def basic_winners(rules: Rules, totals: Sequence[Number], hands_played: int,
                  *, lowest_wins: bool | None = None) -> list[int] | None:
    """The winning seats once the match is over (BASIC-END), else None."""
    end = rules.match_end or {"target": 150}
    over = hands_played >= end["deals"] if "deals" in end else max(totals) >= end["target"]
    if not over:
        return None
    if lowest_wins is None:
        lowest_wins = rules.scoring == "penalty"
    best = min(totals) if lowest_wins else max(totals)
    return [i for i, t in enumerate(totals) if t == best]
