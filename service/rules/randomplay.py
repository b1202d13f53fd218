"""A random rules-level player — for the tests, the benchmark and simulations: it finds legal
moves by asking the engine.

Not a legal-move generator for clients; it plays well enough to finish hands (melds it
finds among 3- and 4-card combinations, every lay-off that fits, a random discard).

Dummy: it lays its contract down when the meld search finds one, lays off from the next
turn on, discards a card the referee accepts (DUMMY-DISCARD), and other seats sometimes
claim a cut-in. Wrotham: deals 1–3 as basic rummy (plus a joker exchange when it holds
the card); in the late deals it goes down only with all its cards but one.
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
from service.rules.cards import JOKER
from service.rules.compound import find_all_but_one, find_contract
from service.rules.engine import shape_of
from service.rules.legal import legal_moves
from service.rules.moves import (
    CutIn,
    Discard,
    Draw,
    LayOff,
    MeldMove,
    Move,
    SwapJoker,
    move_from_dict,
)
from service.rules.search import best_combination, candidate_melds
from service.rules.variants.dummy import DummyRules, dummy_state
from service.rules.variants.wrotham import is_late_deal


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


def legal_discard(state: GameState, seat: int, rng: Random | None = None) -> Discard:
    """A discard the engine accepts (the first one tried, in hand order or shuffled)."""
    hand = state.hands[seat]
    cards = [c for c in hand if c != state.taken] or list(hand)
    if rng is not None:
        cards = rng.sample(cards, len(cards))
    for card in cards:
        if _legal(state, seat, Discard(card)):
            return Discard(card)
    return Discard(cards[0])


def _choose_dummy(state: GameState, seat: int, rng: Random) -> Move:
    if state.phase == "draw":
        if state.discard and not state.melded[seat] and rng.random() < 0.3:
            return Draw("discard")
        return Draw("stock")
    hand = state.hands[seat]
    if not state.melded[seat]:
        found = find_contract(hand, shape_of(state), DummyRules.current(state, seat).needs)
        if found is not None and _legal(state, seat, found):
            return found
    elif state.tabled[seat] and len(hand) > 1:
        pairs = [(m.id, c) for m in state.melds for c in sorted(set(hand))]
        rng.shuffle(pairs)
        for meld_id, card in pairs[:60]:
            move = LayOff(meld_id, (Piece(card),))
            if _legal(state, seat, move):
                return move
    return legal_discard(state, seat, rng)


def _choose_wrotham_late(state: GameState, seat: int, rng: Random) -> Move:
    if state.phase == "draw":
        return Draw("discard" if state.discard and rng.random() < 0.3 else "stock")
    found = find_all_but_one(state.hands[seat], shape_of(state),
                             state.taken if state.taken_before == 0 else None)
    if found is not None:
        return found
    return legal_discard(state, seat, rng)


def _joker_swap(state: GameState, seat: int) -> Move | None:
    """Wrotham: exchange a melded joker for the card it stands for, when held."""
    hand = state.hands[seat]
    for meld in state.melds:
        for card, ident in zip(meld.cards, meld.idents, strict=True):
            if card == JOKER and ident in hand:
                move = SwapJoker(meld.id, ident)
                if _legal(state, seat, move):
                    return move
    return None


def choose_move(state: GameState, seat: int, rng: Random) -> Move:
    """A move for ``seat`` that the engine will most likely accept."""
    if state.variant == "dummy":
        return _choose_dummy(state, seat, rng)
    if state.variant == "wrotham":
        if is_late_deal(state, Rules.of(state.rules)):
            return _choose_wrotham_late(state, seat, rng)
        if state.phase == "play" and rng.random() < 0.5:
            swap = _joker_swap(state, seat)
            if swap is not None:
                return swap
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
        claim = maybe_cut_in(state, rng)
        if claim is not None:
            claimant, move = claim
            new, events = apply(state, claimant, move, rng)
            if on_move is not None:
                on_move(state, claimant, move, new, events)
            state = new
            moves += 1
            continue
        seat = state.turn
        move = choose_move(state, seat, rng)
        try:
            new, events = apply(state, seat, move, rng)
        except Violation:
            # fall back to a plain discard / draw, else to any move the referee lists
            move = Draw("stock") if state.phase == "draw" else legal_discard(state, seat)
            try:
                new, events = apply(state, seat, move, rng)
            except Violation:
                move = any_legal(state, seat)
                new, events = apply(state, seat, move, rng)
        if on_move is not None:
            on_move(state, seat, move, new, events)
        state = new
        moves += 1
    return state, moves


def any_legal(state: GameState, seat: int) -> Move:
    """A move :func:`~service.rules.legal.legal_moves` lists (the simplest kind first), or
    its compound example."""
    answer = legal_moves(state, seat)
    for kind in ("draw", "discard", "lay_off", "meld", "swap_joker"):
        for wire in answer.moves:
            if wire["type"] == kind:
                return move_from_dict(wire)
    if answer.compound is not None and answer.compound.get("example"):
        return move_from_dict(answer.compound["example"])
    raise RuntimeError(f"no legal move for seat {seat}")


def maybe_cut_in(state: GameState, rng: Random) -> tuple[int, Move] | None:
    """Dummy with ``cut_ins``: sometimes a seat out of turn claims the top discard
    (DUMMY-CUTIN), when the engine accepts it."""
    if (state.variant != "dummy" or not state.rules.get("cut_ins") or state.phase != "draw"
            or not dummy_state(state).cut_in.open or rng.random() > 0.4):
        return None
    seats = [s for s in range(state.players_count) if s != state.turn]
    seat = rng.choice(seats)
    return (seat, CutIn()) if _legal(state, seat, CutIn()) else None


__all__ = ["choose_move", "find_meld", "legal_discard", "maybe_cut_in", "meld_shape", "play"]
