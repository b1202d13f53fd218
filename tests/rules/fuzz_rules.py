"""Random games against the rules engine, played by its own legal-move listing.

    .venv/bin/python tests/rules/fuzz_rules.py [--seed N] [--seconds S]

Games of every variant, with random knob values and every seat count, each move chosen at
random among what :func:`~service.rules.legal.legal_moves` lists for the seat to move (and
its compound example), melds and lay-offs weighted up so that hands end. After every move
it checks what the engine promises:

* every move listed for any seat applies (the seat to move and the others, cut-ins too);
* nothing but a :class:`~service.rules.errors.Violation` is raised, by the listing or by
  ``apply``, and the views build;
* the cards are conserved within a hand (C-DECK);
* the seat to move always has a legal move: a turn can always end;
* now and then (``--combined``, a share of the moves) it plays instead a move the listing
  does not list, made of several at once, when the engine accepts one: several melds with
  lay-offs, several cards laid off, cards taken from several melds, wilds declared (``as``);
  the checks above then hold for those too, and a refused one leaves the state as it was;
* now and then (``--complete``, a share of the moves), the listing misses nothing: every
  draw, discard, single-card lay-off, joker swap, new meld of up to
  :data:`COMPLETE_MELD_CARDS` cards, and card taken from a meld into a new meld of up to 5
  cards, that the engine accepts is listed (or its equivalent: a lay-off the engine places
  itself is listed at the end it goes to).

It prints each problem with the game's variant and knobs, and a summary; the exit status
is 1 when it found any. ``tests/rules/test_fuzz_rules.py`` runs it briefly; longer runs (minutes,
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
from service.rules.cards import RANKS
from service.rules.engine import shape_of
from service.rules.melds import MeldError, Piece, check_meld
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
    move_from_dict,
    move_to_dict,
)
from service.rules.ruleset import Knob, Variant
from service.rules.search import candidate_melds
from service.rules.variants import VARIANTS

MAX_MOVES = 600
"""Moves per game, by default, before the fuzzer leaves it for the next one."""

COMPLETE_SHARE = 0.05
"""The share of moves before which the listing is checked for what it misses, by default."""

COMBINED_SHARE = 0.1
"""The share of moves before which moves made of several at once are tried, by default."""

ENDING_SHARE = 0.005
"""The share of moves that end the match early instead (resign, abort: C-RESIGN, C-ABORT),
when listed; the others are chosen among the rest of the listing."""

COMBINED_TRIES = 6
"""Moves made of several at once tried each time, the first one accepted played."""

SMALL = range(3, 6)
"""The sizes of the melds the moves made of several at once are made of (a hand of mixed
suits has thousands of melds of every size)."""

COMPLETE_MELD_CARDS = 5
"""The largest new meld the completeness check tries (every multiset of the hand's cards up
to this many)."""


@dataclass
class Report:
    games: int = 0
    moves: int = 0
    combined: Counter[str] = field(default_factory=Counter)
    """Moves made of several at once played, by kind."""
    problems: list[str] = field(default_factory=list)


def _knob_value(knob: Knob, rng: Random) -> Any:
    if knob.kind == "bool":
        return rng.random() < 0.5
    if knob.kind == "enum":
        return rng.choice(knob.choices)
    if knob.kind == "match_end":  # within the key's bounds (Dummy: 1 to 12 contracts)
        key = rng.choice(knob.choices)
        low, high = knob.key_limits(key)
        return {key: rng.choice([n for n in (1, 2, 3, 50, 100, 300) if low <= n <= high])}
    if knob.keyed:  # clock: null or {"turn_seconds": N} within its bounds
        key = rng.choice(knob.choices)
        low, high = knob.key_limits(key)
        return rng.choice([None, {key: rng.choice([low, high, rng.randint(low, high)])}])
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
    ending = [move_from_dict(m) for m in listing.moves if m["type"] in MATCH_MOVES]
    if ending and rng.random() < ENDING_SHARE:  # now and then a seat resigns or aborts
        return rng.choice(ending), unlisted
    choices = [move_from_dict(m) for m in listing.moves if m["type"] not in MATCH_MOVES]
    if listing.compound and listing.compound.get("example"):
        choices += [move_from_dict(listing.compound["example"])] * 3
    weighted = [m for m in choices if isinstance(m, (MeldMove, LayOff))] * 3 + choices
    return (rng.choice(weighted) if weighted else None), unlisted


def _declared(meld: tuple[str, ...], state: GameState, rng: Random) -> tuple[Piece, ...]:
    """``meld``'s cards, each wild declared (``as``) as what one reading of it has it stand
    for (a suit picked for an open one), or left for the engine to read."""
    try:
        reading = check_meld([Piece(c) for c in meld], shape_of(state))
    except MeldError:
        return tuple(Piece(c) for c in meld)
    pieces = []
    for card, ident in zip(reading.cards, reading.idents, strict=True):
        if card != ident and rng.random() < 0.7:
            ident = ident.replace("*", rng.choice("SHDC"))
            pieces.append(Piece(card, ident))
        else:
            pieces.append(Piece(card))
    return tuple(pieces)


def _combined(state: GameState, seat: int, rng: Random) -> Move | None:
    """A random move made of several at once (not listed, maybe not legal), or None."""
    hand = state.hands[seat]
    shape = shape_of(state)
    kind = rng.choice(("melds", "lay_off", "take", "declared"))
    melds = ([m.cards for m in candidate_melds(hand, shape, SMALL)]
             if kind in ("melds", "declared") else [])
    if melds:
        chosen: list[tuple[str, ...]] = []
        left = Counter(hand)
        for meld in rng.sample(melds, min(len(melds), 4)):
            if Counter(meld) <= left and (not chosen or rng.random() < 0.6):
                chosen.append(meld)
                left -= Counter(meld)
        lay_offs: tuple[LayOff, ...] = ()
        if state.melds and left and rng.random() < 0.4:
            card = rng.choice(sorted(left.elements()))
            lay_offs = (LayOff(rng.choice(state.melds).id, (Piece(card),)),)
        pieces = [_declared(m, state, rng) if kind == "declared" else tuple(map(Piece, m))
                  for m in chosen]
        return MeldMove(tuple(pieces), lay_offs)
    if kind == "lay_off" and state.melds and len(hand) > 1:
        target = rng.choice(state.melds)
        ranks = {ident[0] for ident in target.idents}
        near = [c for c in hand if shape.is_wild(c) or (
            c[0] in ranks if target.kind == "set" else
            any(abs(RANKS.index(c[0]) - RANKS.index(r)) <= 3 for r in ranks))]
        pool = near if len(near) >= 2 else hand
        cards = rng.sample(pool, rng.randint(2, min(3, len(pool))))
        return LayOff(target.id, tuple(map(Piece, cards)), rng.choice((None, "low", "high")))
    if kind == "take" and state.melds:
        takes = []
        for target in rng.sample(state.melds, min(2, len(state.melds))):
            ends = [target.cards[0], target.cards[-1]] if target.kind == "run" \
                else list(target.cards)
            takes.append(Take(target.id, rng.choice(ends)))
        taken = [t.card for t in takes]
        new = [m.cards for m in candidate_melds([*hand, *taken], shape, SMALL)
               if not Counter(taken) - Counter(m.cards)]
        if new:
            return TakeFromMeld(tuple(takes), (tuple(map(Piece, rng.choice(new))),))
    return None


def _kind(move: Move) -> str:
    if isinstance(move, MeldMove):
        declared = any(p.as_ for meld in move.melds for p in meld)
        return (f"{len(move.melds)} meld(s)" + (" + lay-off" if move.lay_offs else "")
                + (", declared" if declared else ""))
    if isinstance(move, LayOff):
        return f"lay-off of {len(move.cards)}"
    if isinstance(move, TakeFromMeld):
        return f"take of {len(move.take)}"
    return type(move).__name__


def _try_combined(state: GameState, seat: int, rng: Random) -> tuple[Move | None, list[str]]:
    """A move made of several at once that the engine accepts (None: none of those tried
    was), and what went wrong: a refusal that changed the state."""
    if state.phase != "play" or state.turn != seat:
        return None, []
    for _ in range(COMBINED_TRIES):
        move = _combined(state, seat, rng)
        if move is None:
            continue
        before = state.to_dict()
        try:
            apply(state, seat, move, Random(0))
        except Violation:
            if state.to_dict() != before:
                return None, [f"the refused {move_to_dict(move)} changed the state"]
            continue
        return move, []
    return None, []


def _key(wire: dict[str, Any], state: GameState) -> tuple[Any, ...]:
    """What tells listed moves apart: a meld's cards in any order; a lay-off on a set at
    any end (a set has none); a discard's last-card announcement only when it leaves one
    card (R51-LAST: else it says nothing)."""
    if wire["type"] == "discard" and len(state.hands[state.turn]) != 2:
        return ("discard", wire["card"])
    if wire["type"] == "meld" and len(wire["melds"]) == 1 and not wire.get("lay_offs"):
        return ("meld", tuple(sorted(wire["melds"][0]["cards"])))
    if wire["type"] == "take_from_meld" and len(wire["take"]) == 1 and len(wire["melds"]) == 1:
        take = wire["take"][0]
        return ("take", take["meld_id"], take["card"], tuple(sorted(wire["melds"][0]["cards"])))
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
    if state.rules.get("allow_take_from_meld"):  # R51-TAKE: any card of any meld, melded anew
        for target in state.melds:
            for card in sorted(set(target.cards)):
                moves += [TakeFromMeld((Take(target.id, card),), (tuple(map(Piece, m.cards)),))
                          for m in candidate_melds([*hand, card], shape, SMALL)
                          if card in m.cards]
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
              max_moves: int = MAX_MOVES, complete: float = COMPLETE_SHARE,
              combined: float = COMBINED_SHARE) -> None:
    """One random game (at most ``max_moves``); its problems go to ``report``. Before a
    share ``complete`` of the moves, the listing is checked for legal moves it lacks;
    before a share ``combined``, moves made of several at once are tried, and one the
    engine accepts is played."""
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
            if move is not None and rng.random() < combined:
                several, changed = _try_combined(state, seat, rng)
                report.problems.extend(f"{where}: {p}" for p in changed)
                if several is not None:
                    move = several
                    report.combined[_kind(several)] += 1
            if move is None:
                report.problems.append(f"{where}: seat {seat} has no legal move "
                                       f"({state.phase}, hand {state.hands[seat]})")
                return
            problems = _others_listed_apply(state, seat)
            new, _ = apply(state, seat, move, Random(rng.random()))
            seat_view(new, "g", 1, seat)
            public_view(new, "g", 1)
        except Violation as refusal:
            report.problems.append(f"{where}: {move} refused when played: {refusal.code} "
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


def fuzz(seed: int, seconds: float, complete: float = COMPLETE_SHARE,
         combined: float = COMBINED_SHARE) -> Report:
    """Random games for about ``seconds``, from ``seed``."""
    rng = Random(seed)
    report = Report()
    variants = list(VARIANTS.values())
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and len(report.problems) < 20:
        play_game(rng.choice(variants), rng, report, complete=complete, combined=combined)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--complete", type=float, default=COMPLETE_SHARE,
                        help="share of moves before which the listing is checked for legal "
                             f"moves it lacks (default {COMPLETE_SHARE})")
    parser.add_argument("--combined", type=float, default=COMBINED_SHARE,
                        help="share of moves before which moves made of several at once "
                             f"are tried (default {COMBINED_SHARE})")
    args = parser.parse_args(argv)
    report = fuzz(args.seed, args.seconds, args.complete, args.combined)
    for problem in report.problems:
        print(problem)
    played = ", ".join(f"{kind} {n}" for kind, n in sorted(report.combined.items()))
    print(f"seed {args.seed}: {report.games} games, {report.moves} moves "
          f"(made of several at once: {played or 'none'}), {len(report.problems)} problems")
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
