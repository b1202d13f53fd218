"""A simple rules-level player used by the tests: it finds legal moves by asking the engine.

Not a legal-move generator for clients; it plays well enough to finish hands (melds it
finds among 3- and 4-card combinations, every lay-off that fits, a random discard).
"""

from __future__ import annotations

import itertools
from random import Random
from typing import Any

from service.rules import (
    GameState,
    Meld,
    MeldError,
    Piece,
    Rules,
    Violation,
    apply,
    check_meld,
    meld_shape,
)
from service.rules.engine import shape_of
from service.rules.moves import Discard, Draw, LayOff, MeldMove, Move
from service.rules.search import best_combination, candidate_melds


def find_meld(state: GameState, seat: int, rng: Random) -> tuple[Piece, ...] | None:
    shape = shape_of(state)
    hand = state.hands[seat]
    combos = [c for size in (3, 4) for c in itertools.combinations(hand, size)]
    rng.shuffle(combos)
    for combo in combos[:400]:
        pieces = tuple(Piece(c) for c in combo)
        try:
            check_meld(pieces, shape)
        except MeldError:
            continue
        return pieces
    return None


def _candidates(state: GameState, hand: list[str]) -> list[Meld]:
    found = candidate_melds(hand, shape_of(state))
    if state.variant == "lebanese14":  # L14-JOKER-RUN: keep it simple, no joker in runs
        found = [m for m in found if not (m.kind == "run" and "JK" in m.cards)]
    return found


def find_opening(state: GameState, seat: int, must_use: str | None = None,
                 need: int = 1) -> MeldMove | None:
    """An opening (R51-OPEN) the hand can lay down, if any."""
    rules = Rules.of(state.rules)
    hand = state.hands[seat]
    found = best_combination(hand, _candidates(state, hand),
                             need_points=max(rules.opening_points, need), must_use=must_use,
                             need_clean_run=rules.opening_requires_clean_run,
                             keep=1 if rules.must_discard_to_go_out else 0)
    if not found:
        return None
    return MeldMove(tuple(tuple(Piece(c) for c in m.cards) for m in found))


def choose_move(state: GameState, seat: int, rng: Random) -> Move:
    """A move for ``seat`` that the engine will most likely accept."""
    if state.phase == "draw":
        if state.discard and rng.random() < 0.3:
            return Draw("discard")
        return Draw("stock")
    hand = state.hands[seat]
    pending = state.taken if state.taken is not None and hand.count(
        state.taken) > state.taken_before else None
    need = 71 if state.variant == "lebanese14" and state.taken is not None else 1
    if pending is not None or (need > state.turn_points and state.taken is not None):
        if not state.melded[seat]:
            opening = find_opening(state, seat, pending, need)
            if opening is not None:
                return opening
        else:
            for meld in state.melds:
                if pending is None:
                    break
                move = LayOff(meld.id, (Piece(pending),))
                if _legal(state, seat, move):
                    return move
            found = best_combination(hand, _candidates(state, hand),
                                     need_points=max(need - state.turn_points, 1),
                                     must_use=pending, keep=1)
            if found:
                return MeldMove(tuple(tuple(Piece(c) for c in m.cards) for m in found))
    if state.rules.get("opening_points") and not state.melded[seat] and not state.discard_only:
        opening = find_opening(state, seat)
        if opening is not None:
            return opening
    elif rng.random() < 0.8:
        pieces = find_meld(state, seat, rng)
        if pieces is not None and (len(hand) > len(pieces) or rng.random() < 0.5):
            return MeldMove((pieces,))
        for meld in state.melds:
            for card in hand:
                move = LayOff(meld.id, (Piece(card),))
                if _legal(state, seat, move):
                    return move
    choices = [c for c in hand if c != state.taken] or hand
    return Discard(rng.choice(choices))


def _legal(state: GameState, seat: int, move: Move) -> bool:
    try:
        apply(state, seat, move, Random(0))
    except Violation:
        return False
    return True


def play(
    state: GameState, rng: Random, max_moves: int = 2000, on_move: Any = None
) -> tuple[GameState, int]:
    """Play until the match ends or ``max_moves`` moves were applied."""
    moves = 0
    while state.status == "playing" and moves < max_moves:
        seat = state.turn
        move = choose_move(state, seat, rng)
        try:
            new, events = apply(state, seat, move, rng)
        except Violation:
            # fall back to a plain discard / draw
            move = (
                Draw("stock")
                if state.phase == "draw"
                else Discard(
                    next(c for c in state.hands[seat] if c != state.taken)
                    if any(c != state.taken for c in state.hands[seat])
                    else state.hands[seat][0]
                )
            )
            new, events = apply(state, seat, move, rng)
        if on_move is not None:
            on_move(state, seat, move, new, events)
        state = new
        moves += 1
    return state, moves


__all__ = ["choose_move", "find_meld", "meld_shape", "play"]
