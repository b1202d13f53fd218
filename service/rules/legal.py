"""Every legal move of a seat, for bots (``GET /v1/games/{id}/legal-moves``).

Exact by construction: candidate moves are generated from the hand and the table, and each
is kept only if the engine itself accepts it (:func:`~service.rules.engine.apply` on the
state, nothing stored). Compound meld actions (a Rummy 51 opening, a Dummy contract, a
Wrotham all-at-once finish) are too many to list: whether one exists is answered with one
example, found by the meld search.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from random import Random
from typing import Any

from service.rules.cards import JOKER
from service.rules.engine import apply, context
from service.rules.errors import Violation
from service.rules.melds import Piece
from service.rules.moves import (
    CutIn,
    Discard,
    Draw,
    LayOff,
    MeldMove,
    Move,
    SwapJoker,
    move_to_dict,
)
from service.rules.search import best_combination, candidate_melds
from service.rules.state import GameState


@dataclass
class LegalMoves:
    """The answer: legal moves (wire dicts), whether the list was cut, compound actions."""

    seat: int
    your_turn: bool
    moves: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False
    compound: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"seat": self.seat, "your_turn": self.your_turn, "moves": self.moves,
                "truncated": self.truncated, "compound": self.compound}


def _accepts(state: GameState, seat: int, move: Move) -> bool:
    try:
        apply(state, seat, move, Random(0))
    except Violation:
        return False
    return True


def _candidates(state: GameState, seat: int) -> Iterator[Move]:
    """Moves worth asking the engine about, most useful first, without duplicates."""
    if state.phase == "draw":
        yield Draw("stock")
        if state.discard:
            yield Draw("discard")
        return
    hand = state.hands[seat]
    distinct = sorted(set(hand))
    _, rules, vr = context(state)
    shape = vr.meld_shape(rules)
    if not state.discard_only:
        for meld in candidate_melds(hand, shape):
            yield MeldMove(((*(Piece(c) for c in meld.cards),),))
        for target in state.melds:
            for card in distinct:
                for end in ("low", "high") if target.kind == "run" else (None,):
                    yield LayOff(target.id, (Piece(card),), end)
        for target in state.melds:
            if JOKER in target.cards:
                for card in distinct:
                    if card != JOKER:
                        yield SwapJoker(target.id, card)
    for card in distinct:
        yield Discard(card)
        if len(hand) == 2:
            yield Discard(card, announce=True)


def legal_moves(state: GameState, seat: int, limit: int = 500) -> LegalMoves:
    """Every legal move of ``seat`` now (at most ``limit``), and any compound action."""
    answer = LegalMoves(seat=seat, your_turn=state.status == "playing" and state.turn == seat)
    if state.status != "playing":
        return answer
    if not answer.your_turn:
        if _accepts(state, seat, CutIn()):
            answer.moves.append(move_to_dict(CutIn()))
        return answer
    seen: set[str] = set()
    results: list[dict[str, Any]] = []
    for move in _candidates(state, seat):
        wire = move_to_dict(move)
        text = repr(wire)
        if text in seen or not _accepts(state, seat, move):
            continue
        if len(results) == limit:
            answer.truncated = True  # one more legal move than the list may hold
            break
        seen.add(text)
        results.append(wire)
    answer.moves = _ordered(results)
    answer.compound = compound_action(state, seat)
    return answer


_ORDER = {"draw": 0, "meld": 1, "lay_off": 2, "swap_joker": 3, "take_from_meld": 4,
          "discard": 5, "cut_in": 6}


def _ordered(moves: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(moves, key=lambda m: _ORDER[m["type"]])


def compound_action(state: GameState, seat: int) -> dict[str, Any] | None:
    """Whether the seat can make the variant's compound meld action now, with an example.

    Rummy 51 / Lebanese 14: the opening (R51-OPEN). None where the variant has none or it
    does not apply (already opened, not the play phase).
    """
    if state.phase != "play" or state.discard_only or state.turn != seat:
        return None
    _, rules, vr = context(state)
    if not rules.opening_points or state.melded[seat]:
        return None
    hand = state.hands[seat]
    shape = vr.meld_shape(rules)
    pending = state.taken if state.taken is not None and hand.count(
        state.taken) > state.taken_before else None
    found = best_combination(hand, candidate_melds(hand, shape),
                             need_points=max(rules.opening_points, 1), must_use=pending,
                             need_clean_run=rules.opening_requires_clean_run,
                             keep=1 if rules.must_discard_to_go_out else 0)
    example = None
    if found:
        move = MeldMove(tuple(tuple(Piece(c) for c in m.cards) for m in found))
        if _accepts(state, seat, move):
            example = move_to_dict(move)
    return {"kind": "opening", "rule": "R51-OPEN", "exists": example is not None,
            "example": example}


__all__ = ["LegalMoves", "compound_action", "legal_moves"]
