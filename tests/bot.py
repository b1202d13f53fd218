"""A simple rules-level player used by the tests: it finds legal moves by asking the engine.

Not a legal-move generator for clients; it plays well enough to finish hands (melds it
finds among 3- and 4-card combinations, every lay-off that fits, a random discard).
"""

from __future__ import annotations

import itertools
from random import Random
from typing import Any

from service.rules import GameState, MeldError, Piece, Violation, apply, check_meld, meld_shape
from service.rules.engine import _context
from service.rules.moves import Discard, Draw, LayOff, MeldMove, Move


def find_meld(state: GameState, seat: int, rng: Random) -> tuple[Piece, ...] | None:
    _, _, shape = _context(state)
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


def choose_move(state: GameState, seat: int, rng: Random) -> Move:
    """A move for ``seat`` that the engine will most likely accept."""
    if state.phase == "draw":
        if state.discard and rng.random() < 0.3:
            return Draw("discard")
        return Draw("stock")
    hand = state.hands[seat]
    if rng.random() < 0.8:
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
