"""Random play in-process, for the engine's "whole simulated hands per second".

Copied from the tests' rules-level player (``tests/bot.py``; the benchmark does not import
the tests): it finds melds among 3- and 4-card combinations, opens (R51/L14), lays its
Dummy contract down and goes down all at once in Wrotham's late deals with the meld search,
lays off what fits and discards at random, asking the engine (:func:`apply`) whether a move
is legal where the rules are subtle. :func:`hands_per_second` plays whole hands of every
variant with it.
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
)
from service.rules.cards import JOKER
from service.rules.dummy import DummyRules, read_as
from service.rules.engine import shape_of
from service.rules.moves import CutIn, Discard, Draw, LayOff, MeldMove, Move, SwapJoker
from service.rules.search import best_combination, candidate_melds
from service.rules.wrotham import is_late_deal


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


def _melds_move(melds: list[Meld]) -> MeldMove:
    return MeldMove(tuple(tuple(Piece(c) for c in m.cards) for m in melds))


def find_contract(state: GameState, seat: int) -> MeldMove | None:
    """Dummy: melds of the hand that make up the seat's contract (DUMMY-CONTRACTS), leaving
    a card to discard, if the meld search finds them."""
    shape = shape_of(state)
    hand = state.hands[seat]
    needs = sorted(DummyRules.current(state, seat).needs, key=lambda n: -n.size)
    kinds: dict[tuple[str, ...], dict[str, Meld | None]] = {}

    def as_kind(meld: Meld, kind: str) -> Meld | None:
        options = kinds.setdefault(meld.cards, {})
        if kind not in options:
            options[kind] = read_as([Piece(c) for c in meld.cards], shape, kind)
        return options[kind]

    candidates = sorted(candidate_melds(hand, shape), key=lambda m: len(m.cards))
    steps = 0

    def dfs(i: int, left: list[str], chosen: list[Meld]) -> list[Meld] | None:
        nonlocal steps
        if i == len(needs):
            return list(chosen) if left else None
        for meld in candidates:
            steps += 1
            if steps > 3000:
                return None
            if len(meld.cards) < needs[i].size or len(meld.cards) >= len(left):
                continue
            rest = list(left)
            try:
                for card in meld.cards:
                    rest.remove(card)
            except ValueError:
                continue
            reading = as_kind(meld, needs[i].kind)
            if reading is None:
                continue
            chosen.append(reading)
            found = dfs(i + 1, rest, chosen)
            chosen.pop()
            if found is not None:
                return found
        return None

    found = dfs(0, list(hand), [])
    return None if found is None else _melds_move(found)


def find_all_but_one(state: GameState, seat: int) -> MeldMove | None:
    """Wrotham late deals: melds holding every card of the hand but one (WROTHAM-LATE)."""
    shape = shape_of(state)
    hand = state.hands[seat]
    for spare in sorted(set(hand)):
        if spare == state.taken and state.taken_before == 0:
            continue
        rest = list(hand)
        rest.remove(spare)
        candidates = candidate_melds(rest, shape)

        def cover(left: list[str], chosen: list[Meld],
                  candidates: list[Meld] = candidates) -> list[Meld] | None:
            if not left:
                return list(chosen)
            first = min(left)
            for meld in candidates:
                if first not in meld.cards:
                    continue
                remaining = list(left)
                try:
                    for card in meld.cards:
                        remaining.remove(card)
                except ValueError:
                    continue
                chosen.append(meld)
                found = cover(remaining, chosen)
                chosen.pop()
                if found is not None:
                    return found
            return None

        found = cover(rest, [])
        if found:
            return _melds_move(found)
    return None


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
        found = find_contract(state, seat)
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
    found = find_all_but_one(state, seat)
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
    from service.rules.legal import legal_moves
    from service.rules.moves import move_from_dict

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
            or not state.var.get("cut_in", {}).get("open") or rng.random() > 0.4):
        return None
    seats = [s for s in range(state.players_count) if s != state.turn]
    seat = rng.choice(seats)
    return (seat, CutIn()) if _legal(state, seat, CutIn()) else None


def hands_per_second(seconds: float, seed: int = 11) -> dict[str, Any]:
    """Play whole hands of every variant (2–4 seats) for about ``seconds``: hands and moves
    per second of engine time, overall and by variant."""
    import time

    from service.rules import new_game

    variants = ("basic", "rummy51", "lebanese14", "dummy", "wrotham")
    rng = Random(seed)
    hands: dict[str, int] = dict.fromkeys(variants, 0)
    moves: dict[str, int] = dict.fromkeys(variants, 0)
    spent: dict[str, float] = dict.fromkeys(variants, 0.0)
    deadline = time.thread_time() + seconds
    round_ = 0
    while time.thread_time() < deadline:
        for variant in variants:
            players = 2 + round_ % 3
            state, _ = new_game(variant, [f"p{i}" for i in range(players)], None, None,
                                None, rng)
            started = time.thread_time()
            ended = 0

            def count(before: GameState, seat: int, move: Move, new: GameState,
                      events: list[dict[str, Any]]) -> None:
                nonlocal ended
                ended += sum(1 for e in events if e["type"] == "hand_end")

            # one hand: stop when the first hand ends (or the match does)
            while state.status == "playing" and ended == 0:
                state, n = play(state, rng, max_moves=1, on_move=count)
                moves[variant] += n
            spent[variant] += time.thread_time() - started
            hands[variant] += ended
        round_ += 1
    total = sum(spent.values())
    return {
        "hands_per_second": sum(hands.values()) / total,
        "moves_per_second": sum(moves.values()) / total,
        "hands": sum(hands.values()),
        "by_variant": {v: {"hands": hands[v], "hands_per_second": hands[v] / spent[v],
                           "moves_per_hand": moves[v] / max(hands[v], 1)}
                       for v in variants},
    }
