"""Random games against the rules engine, played by its own legal-move listing.

    .venv/bin/python tests/fuzz_rules.py [--seed N] [--seconds S]

Games of every variant, with random knob values and every seat count, each move chosen at
random among what :func:`~service.rules.legal.legal_moves` lists for the seat to move (and
its compound example), melds and lay-offs weighted up so that hands end. After every move
it checks what the engine promises:

* every move listed for any seat applies (the seat to move and the others, cut-ins too);
* nothing but a :class:`~service.rules.errors.Violation` is raised, by the listing or by
  ``apply``, and the views build;
* the cards are conserved within a hand (C-DECK);
* the seat to move always has a legal move: a turn can always end;
* now and then (``--complete``, a share of the moves), the listing misses nothing: every
  draw, discard, single-card lay-off, joker swap and new meld of up to
  :data:`COMPLETE_MELD_CARDS` cards that the engine accepts is listed (or its equivalent:
  a lay-off the engine places itself is listed at the end it goes to).

It prints each problem with the game's variant and knobs, and a summary; the exit status
is 1 when it found any. ``tests/test_fuzz_rules.py`` runs it briefly; longer runs (minutes,
several seeds at once) found games that could reach a state with no legal move at all.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from random import Random
from typing import Any

from service.rules import (
    GameState,
    RulesError,
    SetupError,
    Violation,
    apply,
    legal,
    new_game,
    public_view,
    seat_view,
)
from service.rules.engine import shape_of
from service.rules.melds import MeldError, Piece, check_meld
from service.rules.moves import (
    Discard,
    Draw,
    LayOff,
    MeldMove,
    Move,
    SwapJoker,
    move_from_dict,
    move_to_dict,
)
from service.rules.ruleset import VARIANTS, Knob, Variant

MAX_MOVES = 600
"""Moves per game, by default, before the fuzzer leaves it for the next one."""

COMPLETE_SHARE = 0.05
"""The share of moves before which the listing is checked for what it misses, by default."""

COMPLETE_MELD_CARDS = 5
"""The largest new meld the completeness check tries (every multiset of the hand's cards up
to this many)."""


@dataclass
class Report:
    games: int = 0
    moves: int = 0
    problems: list[str] = field(default_factory=list)


def _knob_value(knob: Knob, rng: Random) -> Any:
    if knob.kind == "bool":
        return rng.random() < 0.5
    if knob.kind == "enum":
        return rng.choice(knob.choices)
    if knob.kind == "match_end":
        return {rng.choice(knob.choices): rng.choice([1, 2, 3, 50, 100, 300])}
    low = knob.minimum if knob.minimum is not None else 0
    high = knob.maximum if knob.maximum is not None else low + 60
    options: list[Any] = [*knob.choices, low, high, rng.randint(low, high)]
    if knob.nullable:
        options.append(None)
    return rng.choice(options)


def random_knobs(variant: Variant, rng: Random) -> dict[str, Any]:
    """About half of the variant's knobs, each at a random value it accepts."""
    return {name: _knob_value(variant.knob(name), rng)
            for name in variant.defaults if rng.random() < 0.5}


def _cards(state: GameState) -> Counter[str]:
    return (Counter(c for hand in state.hands for c in hand) + Counter(state.stock)
            + Counter(state.discard) + Counter(c for m in state.melds for c in m.cards))


def _choose(state: GameState, seat: int, rng: Random,
            complete: float = 0.0) -> tuple[Move | None, list[str]]:
    """A move among those listed (None: none is), and, for a share ``complete`` of the
    calls, the legal moves the listing lacks."""
    listing = legal.legal_moves(state, seat, limit=5000)
    unlisted = (_unlisted(state, seat, listing.moves)
                if not listing.truncated and rng.random() < complete else [])
    choices = [move_from_dict(m) for m in listing.moves]
    if listing.compound and listing.compound.get("example"):
        choices += [move_from_dict(listing.compound["example"])] * 3
    weighted = [m for m in choices if isinstance(m, (MeldMove, LayOff))] * 3 + choices
    return (rng.choice(weighted) if weighted else None), unlisted


def _key(wire: dict[str, Any], state: GameState) -> tuple[Any, ...]:
    """What tells listed moves apart: a meld's cards in any order; a lay-off on a set at
    any end (a set has none); a discard's last-card announcement only when it leaves one
    card (R51-LAST: else it says nothing)."""
    if wire["type"] == "discard" and len(state.hands[state.turn]) != 2:
        return ("discard", wire["card"])
    if wire["type"] == "meld" and len(wire["melds"]) == 1 and not wire.get("lay_offs"):
        return ("meld", tuple(sorted(wire["melds"][0]["cards"])))
    if wire["type"] == "lay_off":
        target = state.meld(wire["meld_id"])
        end = None if target is not None and target.kind == "set" else wire.get("end")
        return ("lay_off", wire["meld_id"], tuple(wire["cards"]), end)
    return (repr(wire),)


def _simple_moves(state: GameState, seat: int) -> list[Move]:
    """The moves of the kinds the listing lists one by one, legal or not."""
    if state.phase == "draw":
        return [Draw("stock"), Draw("discard")]
    hand = state.hands[seat]
    distinct = sorted(set(hand))
    moves: list[Move] = [Discard(c, announce) for c in distinct for announce in (False, True)]
    for target in state.melds:
        for card in distinct:
            moves += [LayOff(target.id, (Piece(card),), end) for end in (None, "low", "high")]
            moves.append(SwapJoker(target.id, card))
    shape = shape_of(state)
    tried: set[tuple[str, ...]] = set()
    for size in range(3, min(len(hand), COMPLETE_MELD_CARDS) + 1):
        for cards in itertools.combinations(sorted(hand), size):
            if cards in tried:
                continue
            tried.add(cards)
            try:
                check_meld([Piece(c) for c in cards], shape)
            except MeldError:
                continue
            moves.append(MeldMove((tuple(Piece(c) for c in cards),)))
    return moves


def _unlisted(state: GameState, seat: int, listed: list[dict[str, Any]]) -> list[str]:
    """Moves of the kinds listed one by one that the engine accepts and the listing lacks.
    A lay-off sent without an end is the one listed at the end the engine puts it."""
    keys = {_key(wire, state) for wire in listed}
    missing = []
    for move in _simple_moves(state, seat):
        wire = move_to_dict(move)
        key = _key(wire, state)
        if key in keys:
            continue
        if isinstance(move, LayOff) and move.end is None and any(
                (*key[:3], end) in keys for end in ("low", "high")):
            continue
        try:
            apply(state, seat, move, Random(0))
        except Violation:
            continue
        missing.append(f"seat {seat}'s {wire} is legal and not listed")
    return missing


def _others_listed_apply(state: GameState, seat: int) -> list[str]:
    problems = []
    for other in range(state.players_count):
        if other == seat:
            continue
        for wire in legal.legal_moves(state, other).moves:
            try:
                apply(state, other, move_from_dict(wire), Random(0))
            except Violation as refusal:
                problems.append(f"seat {other}'s listed {wire} refused: {refusal.code}")
    return problems


def play_game(variant: Variant, rng: Random, report: Report,
              max_moves: int = MAX_MOVES, complete: float = COMPLETE_SHARE) -> None:
    """One random game (at most ``max_moves``); its problems go to ``report``. Before a
    share ``complete`` of the moves, the listing is checked for legal moves it lacks."""
    knobs = random_knobs(variant, rng)
    players = rng.randint(variant.min_players, variant.max_players)
    try:
        state, _ = new_game(variant.id, [f"p{i}" for i in range(players)], knobs, None, None,
                            Random(rng.random()))
    except (RulesError, SetupError):
        return  # knob values that go together badly are refused, as they should be
    report.games += 1
    where = f"{variant.id} {players} seats {knobs}"
    deck = _cards(state)
    for _ in range(max_moves):
        if state.status != "playing":
            return
        seat = state.turn
        try:
            move, unlisted = _choose(state, seat, rng, complete)
            report.problems.extend(f"{where}: {p}" for p in unlisted)
            if move is None:
                report.problems.append(f"{where}: seat {seat} has no legal move "
                                       f"({state.phase}, hand {state.hands[seat]})")
                return
            problems = _others_listed_apply(state, seat)
            new, _ = apply(state, seat, move, Random(rng.random()))
            seat_view(new, "g", 1, seat)
            public_view(new, "g", 1)
        except Violation as refusal:
            report.problems.append(f"{where}: listed {move} refused: {refusal.code} "
                                   f"{refusal.rule}")
            return
        except Exception:  # anything else is what the fuzzer looks for
            report.problems.append(f"{where}: {traceback.format_exc(limit=-4)}")
            return
        report.problems.extend(f"{where}: {p}" for p in problems)
        report.moves += 1
        if new.status == "playing" and _cards(new) != deck:
            report.problems.append(f"{where}: {move} changed the cards in play")
            return
        state = new


def fuzz(seed: int, seconds: float, complete: float = COMPLETE_SHARE) -> Report:
    """Random games for about ``seconds``, from ``seed``."""
    rng = Random(seed)
    report = Report()
    variants = list(VARIANTS.values())
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and len(report.problems) < 20:
        play_game(rng.choice(variants), rng, report, complete=complete)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--complete", type=float, default=COMPLETE_SHARE,
                        help="share of moves before which the listing is checked for legal "
                             f"moves it lacks (default {COMPLETE_SHARE})")
    args = parser.parse_args(argv)
    report = fuzz(args.seed, args.seconds, args.complete)
    for problem in report.problems:
        print(problem)
    print(f"seed {args.seed}: {report.games} games, {report.moves} moves, "
          f"{len(report.problems)} problems")
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
