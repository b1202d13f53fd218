"""Moves written as text, and the engine's answers to them checked as every engine test
checks them: ``apply`` leaves its input alone, a refusal changes nothing."""
from __future__ import annotations

from collections.abc import Callable, Collection
from random import Random
from typing import Any

import orjson
import pytest

from service.rules import Code, GameState, Piece, Violation, apply
from service.rules.legal import legal_moves
from service.rules.moves import (
    MATCH_MOVES,
    Discard,
    Draw,
    LayOff,
    MeldMove,
    Move,
    SwapJoker,
    Take,
    TakeFromMeld,
)

Event = dict[str, Any]


def piece(token: str) -> Piece:
    """``7H``, or a wild with the card it stands for: ``JK=7C``."""
    card, _, as_ = token.partition("=")
    return Piece(card, as_ or None)


def mv(text: str) -> Move:
    """``draw stock`` · ``draw discard`` · ``meld 3H 4H 5H / 7S 7D JK=7C + m1 8H`` (new
    melds, then lay-offs) · ``lay m1 6H [@low|@high]`` · ``swap m2 6D`` ·
    ``take m1:9H m2:QS / 9H 9S 9D`` · ``discard 7H`` (``discard 7H !`` announces)."""
    word, _, rest = text.partition(" ")
    if word == "draw":
        return Draw(rest)
    if word == "meld":
        new, *lays = rest.split("+")
        lay_offs = []
        for lay in lays:
            meld_id, *laid = lay.split()
            lay_offs.append(LayOff(meld_id, tuple(piece(t) for t in laid)))
        return MeldMove(tuple(tuple(piece(t) for t in part.split()) for part in new.split("/")),
                        tuple(lay_offs))
    if word == "lay":
        meld_id, *laid = rest.split()
        end = laid.pop()[1:] if laid[-1].startswith("@") else None
        return LayOff(meld_id, tuple(piece(t) for t in laid), end)
    if word == "swap":
        meld_id, card = rest.split()
        return SwapJoker(meld_id, card)
    if word == "take":
        takes, _, melds = rest.partition("/")
        return TakeFromMeld(
            tuple(Take(*t.split(":")) for t in takes.split()),
            tuple(tuple(piece(t) for t in part.split()) for part in melds.split("/")))
    if word == "discard":
        card, *bang = rest.split()
        return Discard(card, announce=bang == ["!"])
    raise AssertionError(text)


def play(state: GameState, *steps: tuple[int, str],
         conserve: Callable[[GameState], None]) -> tuple[GameState, list[Event]]:
    """Apply ``(seat, move)`` steps; each must be legal, leave its input alone and keep
    every card (``conserve`` checks the new state)."""
    events: list[Event] = []
    for seat, text in steps:
        before = state.to_dict()
        try:
            new, evs = apply(state, seat, mv(text), Random(1))
        except Violation as exc:
            raise AssertionError(f"seat {seat} {text!r} refused: {exc!r}") from None
        assert state.to_dict() == before, f"apply modified its input state ({text})"
        conserve(new)
        state = new
        events.extend(evs)
    return state, events


def refuse(state: GameState, seat: int, move: str | Move,
           rule_ids: Collection[str] | None = None) -> Violation:
    """The move is refused and the state unchanged; the first reason is the violation's own;
    with ``rule_ids``, the violation and every reason cite one of them."""
    before = state.to_dict()
    with pytest.raises(Violation) as info:
        apply(state, seat, mv(move) if isinstance(move, str) else move, Random(1))
    assert state.to_dict() == before, "a refused move changed the state"
    violation = info.value
    if rule_ids is not None:
        assert violation.rule in rule_ids, f"{violation.rule!r} is not a rule id here"
        assert [r.rule for r in violation.reasons if r.rule not in rule_ids] == []
    assert (violation.reasons[0].code, violation.reasons[0].rule) == (violation.code,
                                                                      violation.rule)
    return violation


def events_of(events: list[Event], kind: str) -> list[Event]:
    return [e for e in events if e["type"] == kind]


def hand_end(events: list[Event]) -> Event:
    (end,) = events_of(events, "hand_end")
    return end


def melds(*texts: str) -> MeldMove:
    """A meld move of naturals: ``melds("3H 4H 5H", "9S 9D 9C")``."""
    return MeldMove(tuple(tuple(Piece(c) for c in t.split()) for t in texts))


def ok(state: GameState, seat: int, *moves: Move) -> GameState:
    """Apply legal moves of one seat in turn."""
    for move in moves:
        state, _ = apply(state, seat, move, Random(0))
    return state


def refused(state: GameState, seat: int, move: Move, code: Code, rule: str) -> Violation:
    """The move is refused with this code and rule, and the state unchanged."""
    before = state.to_dict()
    with pytest.raises(Violation) as caught:
        apply(state, seat, move, Random(0))
    assert (caught.value.code, caught.value.rule) == (code, rule), caught.value
    assert state.to_dict() == before
    return caught.value


def attempt(state: GameState, seat: int, move: Move, rng: Random,
            rules: tuple[str, ...] = ()) -> tuple[GameState | None, list[dict[str, Any]]]:
    """Apply ``move``: the input state is unchanged whether it is refused or not, the only
    exception a refusal raises is Violation, with a code, a rule (one starting with one of
    ``rules`` if given) and a detail, and a new state reads back from its stored form."""
    before = state.to_dict()
    try:
        new, events = apply(state, seat, move, rng)
    except Violation as violation:
        assert state.to_dict() == before, f"refused {move} changed the state"
        assert violation.code and violation.rule and violation.detail, violation
        assert not rules or violation.rule.startswith(rules), violation
        return None, []
    assert state.to_dict() == before, f"applied {move} changed its input state"
    stored = orjson.loads(orjson.dumps(new.to_compact()))
    assert GameState.from_dict(stored).to_dict() == new.to_dict(), \
        f"the state after {move} does not read back from its stored form"
    return new, events


def turn_moves(state: GameState, seat: int) -> list[dict[str, Any]]:
    """The seat's legal moves in the hand: the list without resign, abort and
    claim_timeout, which come last (C-RESIGN, C-ABORT, C-CLOCK)."""
    moves = legal_moves(state, seat).moves
    kept = [m for m in moves if m["type"] not in MATCH_MOVES]
    assert moves[:len(kept)] == kept and moves[len(kept)]["type"] == "resign"
    return kept
