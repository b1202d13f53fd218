"""Stateless checks for score-keeping apps and bots (``POST /v1/melds/check``,
``POST /v1/scores/hand``): one meld, or one hand's end, judged under a variant's rules."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from service.rules.errors import N_, Code, Message, Reason
from service.rules.melds import MeldError, Piece, check_meld
from service.rules.rule_ids import RuleId
from service.rules.ruleset import Rules, resolve_rules
from service.rules.scoring import HandEnd
from service.rules.variants import find_variant, variant_rules


def _beyond_the_deck(deck: Counter[str], cards: Iterable[str]) -> dict[str, int]:
    """C-DECK: each card of ``cards`` that comes more often than ``deck`` holds it, with its
    count, in the order first seen (a card the deck does not hold at all is the caller's to
    name)."""
    return {card: count for card, count in Counter(cards).items() if 0 < deck[card] < count}


def check_one_meld(variant_id: str, overrides: Mapping[str, Any] | None,
                   pieces: Sequence[Piece],
                   render: Callable[[Message], str] = str) -> dict[str, Any]:
    """Is ``pieces`` a valid meld on its own? Every reason it fails, the wild readings,
    and its points (R51-VALUE in Rummy 51 / Lebanese 14, else the cards' counting values).
    ``render`` writes each reason's ``detail`` from its message (default: the English).

    Conditions that depend on a table (whose run it is, what is already melded, the
    opening) are not checked. Raises ``KeyError`` / ``RulesError`` for a bad variant or
    knob.
    """
    variant = find_variant(variant_id)
    rules = Rules.of(resolve_rules(variant, overrides))
    vr = variant_rules(variant.id)
    shape = vr.shape(rules)
    reasons: list[Reason] = []
    deck = Counter(variant.deck())
    for p in pieces:
        if p.card not in deck:
            reasons.append(Reason(Code.INVALID_MELD, RuleId.C_DECK,
                                  N_("{card} is not a card of the {variant} deck"),
                                  card=p.card, variant=variant.name))
    for card, count in _beyond_the_deck(deck, (p.card for p in pieces)).items():
        reasons.append(Reason(Code.INVALID_MELD, RuleId.C_DECK,
                              N_("the {variant} deck holds {copies} {card}, not {count}"),
                              card=card, variant=variant.name, copies=deck[card],
                              count=count))
    if not reasons:
        try:
            meld = check_meld(pieces, shape)
        except MeldError as exc:
            reasons.extend(exc.reasons)
        else:
            return {"valid": True, "kind": meld.kind, "cards": list(meld.cards),
                    "wilds": [{"index": i, "card": meld.cards[i], "as": ident}
                              for i, ident in meld.wilds],
                    "points": vr.meld_points(rules, meld), "errors": []}
    return {"valid": False, "kind": None, "cards": [p.card for p in pieces], "wilds": [],
            "points": None,
            "errors": [{**r.as_dict(), "detail": render(r.message)} for r in reasons]}


FACT_QUESTIONS: dict[str, str] = {
    "all_at_once": N_("did the player who went out put down their whole hand in one turn, "
                      "without having melded or laid off before? true or false "
                      "(BASIC-RUMMY, R51-ALL-AT-ONCE)"),
    "opened": N_("who had opened, that is put down their first melds, by the end of the "
                 "hand? (R51-OPEN: a player who had not opened scores 100)"),
    "final_discard": N_("which card did the player who went out discard last? (R51-SCORE: "
                        "a joker doubles the score again)"),
    "jokers_used": N_("how many jokers did the player who went out put down in that "
                      "all-at-once finish? 0, 1, 2 … (L14-DRY)"),
}
"""What each fact a variant's scoring may need is, asked as a question to a person (marked
for translation: the HTTP layer translates a ``400``'s per-field messages)."""


class MissingFact(ValueError):
    """The scoring of this variant needs facts the request did not give (or gave wrong):
    ``problems`` is ``[(field, message)]``."""

    def __init__(self, field: str, message: str, *more: tuple[str, str]) -> None:
        self.problems = [(field, message), *more]
        super().__init__("; ".join(f"{f}: {m}" for f, m in self.problems))


def score_one_hand(variant_id: str, overrides: Mapping[str, Any] | None,
                   facts: Mapping[str, Any]) -> dict[str, Any]:
    """Score the end of one hand from ``facts`` (``went_out``, ``hands``, and what the
    variant needs: ``opened``, ``all_at_once``, ``final_discard``, ``jokers_used``)."""
    variant = find_variant(variant_id)
    rules = Rules.of(resolve_rules(variant, overrides))
    vr = variant_rules(variant.id)
    hands: list[list[str]] = [list(h) for h in facts["hands"]]
    n = len(hands)
    if not variant.min_players <= n <= variant.max_players:
        raise MissingFact("hands", f"one hand per player: {variant.name} is for "
                                   f"{variant.min_players} to {variant.max_players} players")
    went_out = facts.get("went_out")
    if went_out is not None and not 0 <= went_out < n:
        raise MissingFact("went_out", f"must be a seat from 0 to {n - 1} or null")
    deck = Counter(variant.deck())
    for seat, hand in enumerate(hands):
        for card in hand:
            if card not in deck:
                raise MissingFact(f"hands.{seat}", f"{card} is not a card of the "
                                                   f"{variant.name} deck")
    final_discard = facts.get("final_discard")
    if final_discard is not None and final_discard not in deck:
        raise MissingFact("final_discard", f"{final_discard} is not a card of the "
                                           f"{variant.name} deck")
    last = [final_discard] if final_discard is not None else []
    over = _beyond_the_deck(deck, [*(card for hand in hands for card in hand), *last])
    if over:  # C-DECK: the hands and the last discard are cards of one deck
        raise MissingFact("hands", f"more copies than the {variant.name} deck holds: " + ", ".join(
            f"{card} {over[card]} times (the deck holds {deck[card]})" for card in sorted(over)))
    if went_out is not None and hands[went_out] and not vr.knocker_keeps_deadwood:
        raise MissingFact(f"hands.{went_out}", N_("the seat that went out holds no card "
                                                  "(C-OUT): hands are the cards each seat "
                                                  "still holds"))
    needs = [name for name in vr.score_needs if facts.get(name) is None
             and _needed(name, went_out, facts)]
    if needs:
        asked = [(name, f"{FACT_QUESTIONS.get(name, name)} ({variant.name} scoring needs it "
                        "for this hand)") for name in needs]
        raise MissingFact(*asked[0], *asked[1:])
    opened = facts.get("opened")
    if opened is not None and len(opened) != n:
        raise MissingFact("opened", N_("one true/false per player is required"))
    end = HandEnd(hands=hands, went_out=went_out,
                  all_at_once=bool(facts.get("all_at_once") or False),
                  opened=opened, final_discard=facts.get("final_discard"),
                  jokers_used=int(facts.get("jokers_used") or 0))
    problem = vr.hand_problem(rules, end)
    if problem is not None:
        raise MissingFact(*problem)
    result = vr.score(rules, end)
    return {"scores": result.scores, "counts": result.counts,
            "going_rummy": result.going_rummy, **result.flags}


def _needed(name: str, went_out: int | None, facts: Mapping[str, Any]) -> bool:
    """Whether fact ``name`` matters for this hand."""
    if name == "opened":
        return True
    if went_out is None:
        return False
    if name in ("final_discard", "jokers_used"):
        return bool(facts.get("all_at_once"))
    return True
