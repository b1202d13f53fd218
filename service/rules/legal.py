"""Every legal move of a seat, for bots (``GET /v1/games/{id}/legal-moves``).

Exact by construction: candidate moves are generated from the hand and the table, and each
is kept only if the engine itself accepts it (:func:`~service.rules.engine.apply` on the
state, nothing stored). Candidates that a cheap test proves the engine would refuse are not
asked about: a lay-off of a card whose rank cannot stand next to the run or in the set, a
joker swap for a card of another rank than the joker's, a single meld worth less than the
opening before a Rummy 51 / Lebanese 14 player has opened (each test is a necessary
condition of the engine's own check, so the list stays exactly what it accepts).

Compound meld actions (a Rummy 51 opening, a Dummy contract, a Wrotham all-at-once finish)
are too many to list: whether one exists is answered with one example, found by the meld
search.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from random import Random
from typing import Any

from service.rules.cards import JOKER, rank_of
from service.rules.compound import find_all_but_one, find_contract
from service.rules.dummy import DummyRules
from service.rules.engine import apply, context
from service.rules.errors import Violation
from service.rules.melds import MeldShape, Piece
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
from service.rules.rummy51 import Rummy51Rules
from service.rules.search import candidate_melds
from service.rules.state import GameState, TableMeld
from service.rules.turn import Turn
from service.rules.wrotham import WrothamRules, is_late_deal


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


def _accepts(state: GameState, seat: int, move: Move, rng: Random | None = None) -> bool:
    try:
        apply(state, seat, move, rng or Random(0))
    except Violation:
        return False
    return True


def _pos_rank(pos: int) -> int:
    return (pos - 1) % 13 + 1


def _may_lay_off(target: TableMeld, card: str, end: str | None, shape: MeldShape) -> bool:
    """False when ``card`` alone certainly cannot be laid off on ``target`` (at ``end``):
    a natural card joins a set of its rank only, and a run only at the position just below
    or just above it (melds.extend_meld places it there or nowhere)."""
    if shape.is_wild(card):
        return True
    rank = rank_of(card)
    if target.kind == "set":
        return rank == target.start
    below = end != "high" and rank == _pos_rank(target.start - 1)
    above = end != "low" and rank == _pos_rank(target.start + len(target.cards))
    return below or above


def _may_swap(target: TableMeld, card: str) -> bool:
    """False when no joker of ``target`` could be swapped for ``card``: a joker is given up
    only for a card of the rank it stands for (R51-SWAP, WROTHAM-SWAP)."""
    return any(c == JOKER and ident[0] == card[0]
               for c, ident in zip(target.cards, target.idents, strict=True))


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
    shape = vr.shape(rules)
    if not state.discard_only:
        # R51-OPEN: before opening, one meld must be worth the opening by itself (a
        # meld's points under the variant's reading filter are at most its best reading's)
        least = (rules.opening_points if isinstance(vr, Rummy51Rules)
                 and not state.melded[seat] else 0)
        for meld in candidate_melds(hand, shape):
            if meld.points >= least:
                yield MeldMove(((*(Piece(c) for c in meld.cards),),))
        for target in state.melds:
            for card in distinct:
                for end in ("low", "high") if target.kind == "run" else (None,):
                    if _may_lay_off(target, card, end, shape):
                        yield LayOff(target.id, (Piece(card),), end)
        for target in state.melds:
            if JOKER in target.cards:
                for card in distinct:
                    if card != JOKER and _may_swap(target, card):
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
    rng = Random(0)  # shuffles a candidate may cause (a new deal) do not change the verdict
    for move in _candidates(state, seat):
        wire = move_to_dict(move)
        text = repr(wire)
        if text in seen or not _accepts(state, seat, move, rng):
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

    Rummy 51 / Lebanese 14: the opening (R51-OPEN), holding the card taken from the discard
    pile when there is one; Dummy: the seat's contract (DUMMY-CONTRACTS); Wrotham's late
    deals: every card but one at once (WROTHAM-LATE). None where the variant has none or it
    does not apply now (already down, not the play phase).
    """
    if state.phase != "play" or state.discard_only or state.turn != seat \
            or state.melded[seat]:
        return None
    variant, rules, vr = context(state)
    move: Move | None
    if isinstance(vr, Rummy51Rules):
        kind, rule = "opening", "R51-OPEN"
        hand = state.hands[seat]
        pending = state.taken if state.taken is not None and hand.count(
            state.taken) > state.taken_before else None
        turn = Turn(state.copy(), seat, variant, rules, vr, Random(0))
        need = vr.discard_draw_points if state.taken is not None else 0
        move = vr.opening_move(turn, hand, pending, need)
    elif isinstance(vr, DummyRules):
        kind, rule = "contract", "DUMMY-CONTRACTS"
        move = find_contract(state, seat)
    elif isinstance(vr, WrothamRules) and is_late_deal(state, rules):
        kind, rule = "all_at_once", "WROTHAM-LATE"
        move = find_all_but_one(state, seat)
    else:
        return None
    example = move_to_dict(move) if move is not None and _accepts(state, seat, move) else None
    return {"kind": kind, "rule": rule, "exists": example is not None, "example": example}


__all__ = ["LegalMoves", "compound_action", "legal_moves"]
