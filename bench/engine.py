"""Engine figures, in-process (no HTTP, no Redis).

* Meld validation with several wilds: :func:`~service.rules.melds.check_meld` on melds
  holding two to four wilds (Dummy: jokers and 2s wild; Rummy 51 with
  ``max_wilds_per_meld: null``).
* Legal-move enumeration (:func:`~service.rules.legal.legal_moves`) for a Rummy 51 seat
  holding 14 cards with all 4 jokers, after its draw: half of the states before its opening
  (the opening is searched for the ``compound`` example), half after it with melds of its
  own and of others on the table (lay-offs, joker swaps).
* ``legal_moves`` over the worst hands each variant allows (:data:`WORST_HANDS`): Dummy,
  13 cards with 8 wilds (the 4 jokers and 4 twos) before the contract (the contract is
  searched for its example); Rummy 51, 15 cards with the 4 jokers before the opening (the
  opening is searched); gin, 11 cards from the sixteen aces to fours (a set of each rank
  and runs in each suit, overlapping: the least-deadwood search has the most to try).
* Whole simulated hands per second (:mod:`bench.sim`).

Times are CPU time of the benchmark's thread (:data:`CLOCK`), so that other work on the
machine does not inflate them. Each call is timed from cold: the melds' readings the engine
keeps (:func:`~service.rules.melds.forget_readings`) are dropped before it, so repeating the
same melds and states does not flatter the figures.
"""

from __future__ import annotations

import functools
import statistics
import time
from collections import Counter
from collections.abc import Callable
from random import Random
from typing import Any

from bench.report import latency_of
from service.rules import GameState, Piece, apply, check_meld, meld_shape, new_game
from service.rules.cards import JOKER, RANKS, standard_deck
from service.rules.legal import legal_moves
from service.rules.melds import forget_readings
from service.rules.moves import Discard, Draw, Knock, Pass
from service.rules.ruleset import Rules
from service.rules.state import TableMeld
from service.rules.variants import find_variant
from service.rules.variants.gin import forget_arrangements

WILD_MELDS: list[tuple[str, dict[str, Any], list[str]]] = [
    ("dummy", {}, ["4H", "2C", "JK", "7D", "2D", "9S"]),  # a run 4-9 with three wilds
    ("dummy", {}, ["KS", "KD", "2H", "JK", "2C", "KS"]),  # a set of kings with three wilds
    ("dummy", {}, ["JK", "2S", "TC", "JK", "KC", "2D"]),  # four wilds, run or set
    ("rummy51", {"max_wilds_per_meld": None}, ["9H", "JK", "JH", "JK", "KH"]),
    ("rummy51", {"max_wilds_per_meld": None}, ["7S", "7D", "JK", "JK"]),
]


def _percentiles(samples: list[float]) -> dict[str, float]:
    """p50, p99, max and mean (ms) of ``samples`` (seconds), as the load's are worked out,
    and how many there were."""
    figures = latency_of(samples)
    return {**{key: figures[key] for key in ("p50_ms", "p99_ms", "max_ms", "mean_ms")},
            "samples": len(samples)}


CLOCK = time.thread_time
"""Engine figures are CPU time of the calling thread: other processes sharing the machine
(the benchmark's own servers are not running yet, but anything else) do not inflate them."""


def _timed(fn: Callable[[], Any], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        forget_readings()  # each call from cold, as a meld not asked about lately
        started = CLOCK()
        fn()
        out.append(CLOCK() - started)
    return out


def meld_validation(repeat: int = 2000) -> dict[str, Any]:
    """check_meld on melds with several wilds: µs per call (median over the melds)."""
    samples: list[float] = []
    for variant, knobs, cards in WILD_MELDS:
        v = find_variant(variant)
        rules = dict(v.defaults, **knobs)
        shape = meld_shape(v, Rules.of(rules))
        pieces = tuple(Piece(c) for c in cards)
        check_meld(pieces, shape)  # valid, and warm
        samples += _timed(functools.partial(check_meld, pieces, shape), repeat)
    stats = _percentiles(samples)
    return {"melds": [" ".join(c) for _, _, c in WILD_MELDS],
            "p50_us": stats["p50_ms"] * 1e3, "p99_us": stats["p99_ms"] * 1e3,
            "calls_per_second": 1 / statistics.fmean(samples)}


def joker_state(rng: Random, opened: bool) -> GameState:
    """Rummy 51, 4 seats, dealer 0: seat 1 holds 14 cards with the 4 jokers, in its play
    phase. ``opened``: seat 1 has opened, and the table holds melds of seats 1, 2 and 3."""
    deck = standard_deck(2, 4)
    naturals = [c for c in deck if c != JOKER]
    rng.shuffle(naturals)
    table: list[tuple[int, list[str]]] = []
    if opened:
        for owner, kind in ((1, "run"), (1, "set"), (2, "run"), (3, "set"), (2, "run")):
            table.append((owner, _take_meld(naturals, kind, rng)))
    hand1 = [JOKER] * 4 + [naturals.pop() for _ in range(9)]
    draw = naturals.pop()
    hands = [[naturals.pop() for _ in range(14)], hand1,
             [naturals.pop() for _ in range(13)], [naturals.pop() for _ in range(13)]]
    first_discard = hands[0][0]
    table_cards = [c for _, cards in table for c in cards]
    deal = {"hands": hands, "discard": [], "stock": [draw, *naturals, *table_cards]}
    state, _ = new_game("rummy51", ["a", "b", "c", "d"], None, 0, [deal])
    state, _ = apply(state, 0, Discard(first_discard), Random(0))
    state, _ = apply(state, 1, Draw("stock"), Random(0))
    if opened:
        shape = meld_shape(find_variant("rummy51"), Rules.of(state.rules))
        for owner, cards in table:
            for c in cards:
                state.stock.remove(c)
            meld = check_meld(tuple(Piece(c) for c in cards), shape)
            state.meld_seq += 1
            state.melds.append(TableMeld(f"m{state.meld_seq}", owner, meld.kind,
                                         list(meld.cards), list(meld.idents), meld.start,
                                         meld.points))
            state.melded[owner] = True
    assert len(state.hands[1]) == 14 and state.hands[1].count(JOKER) == 4
    return state


def _take_meld(pool: list[str], kind: str, rng: Random) -> list[str]:
    """Remove a valid 3–4 card meld of ``kind`` from ``pool`` and return it."""
    while True:
        suit = rng.choice("SHDC")
        if kind == "run":
            start = rng.randrange(0, 10)
            cards = [RANKS[start + i] + suit for i in range(rng.choice((3, 4)))]
        else:
            rank = rng.choice(RANKS)
            cards = [rank + s for s in rng.sample("SHDC", rng.choice((3, 4)))]
        if all(c in pool for c in cards):
            for c in cards:
                pool.remove(c)
            return cards


def legal_enumeration(states: int = 40, repeat: int = 10, seed: int = 5) -> dict[str, Any]:
    """legal_moves on a 14-card hand with 4 jokers: ms per call, p50/p99."""
    rng = Random(seed)
    built = [joker_state(rng, opened=i % 2 == 1) for i in range(states)]
    for state in built:
        legal_moves(state, 1)  # warm
    samples: list[float] = []
    listed: list[int] = []
    by_kind: dict[str, list[float]] = {"before_opening": [], "after_opening": []}
    for _ in range(repeat):
        for i, state in enumerate(built):
            forget_readings()  # not the readings of this state's last listing
            started = CLOCK()
            answer = legal_moves(state, 1)
            took = CLOCK() - started
            samples.append(took)
            by_kind["after_opening" if i % 2 else "before_opening"].append(took)
            listed.append(len(answer.moves))
    out: dict[str, Any] = dict(_percentiles(samples))
    out["moves_listed_mean"] = statistics.fmean(listed)
    out["by_state"] = {k: _percentiles(v) for k, v in by_kind.items()}
    return out


def _with_hand(state: GameState, seat: int, cards: list[str]) -> GameState:
    """``state`` with ``seat`` holding ``cards`` (taken from the stock, its own cards put
    back there): every card is still where exactly one copy of it can be."""
    stock = [*state.stock, *state.hands[seat]]
    wanted = Counter(cards)
    for card in cards:
        if card in stock:
            stock.remove(card)
            continue
        other = next(h for h in (*state.hands[:seat], *state.hands[seat + 1:],
                                 state.discard) if card in h)
        spare = next(c for c in stock if c not in wanted)  # in its place, from the stock
        other[other.index(card)] = spare
        stock.remove(spare)
    state.stock = stock
    state.hands[seat] = list(cards)
    return state


def _drawn(variant: str, players: int, rng: Random) -> tuple[GameState, int]:
    """A new game of ``variant`` whose seat to move has drawn from the stock: the state and
    that seat."""
    state, _ = new_game(variant, [f"p{i}" for i in range(players)], None, None, None,
                        rng=rng)
    if variant == "gin":  # GIN-FIRST: both pass the upcard, then the stock
        for _ in range(2):
            state, _ = apply(state, state.turn, Pass(), rng)
    if state.phase == "play":  # R51-FIRST: the dealer's first action is a discard
        state, _ = apply(state, state.turn, Discard(state.hands[state.turn][0]), rng)
    seat = state.turn
    state, _ = apply(state, seat, Draw("stock"), rng)
    return state, seat


def _dummy_worst(rng: Random) -> tuple[GameState, int]:
    state, seat = _drawn("dummy", 4, rng)
    naturals = [c for c in standard_deck() if c[0] != "2"]
    twos = [c for c in standard_deck(2) if c[0] == "2"]
    cards = [JOKER] * 4 + rng.sample(twos, 4) + rng.sample(naturals, 6)
    return _with_hand(state, seat, cards), seat


def _r51_worst(rng: Random) -> tuple[GameState, int]:
    state, seat = _drawn("rummy51", 4, rng)
    return _with_hand(state, seat, [JOKER] * 4 + rng.sample(standard_deck(2), 11)), seat


def _gin_worst(rng: Random) -> tuple[GameState, int]:
    state, seat = _drawn("gin", 2, rng)
    low = [r + s for r in "A234" for s in "SHDC"]
    return _with_hand(state, seat, rng.sample(low, 11)), seat


def _gin_laid_out(defender: str, knocker: str, upcard: str, discard: str, melds: str,
                  rng: Random) -> tuple[GameState, int]:
    """A gin hand knocked by seat 1 (the non-dealer takes ``upcard``, discards ``discard``
    and lays out ``melds``, written with ``|`` between them), seat 0 (``defender``) to lay
    out: the suits relabelled at random, the same position whatever the labels."""
    suits = dict(zip("SHDC", rng.sample("SHDC", 4), strict=True))

    def cards(text: str) -> list[str]:
        return [c[0] + suits[c[1]] for c in text.split()]

    hands = [cards(defender), cards(knocker)]
    used = {*hands[0], *hands[1], *cards(upcard)}
    deal = {"hands": hands, "discard": cards(upcard),
            "stock": [c for c in standard_deck() if c not in used]}
    state, _ = new_game("gin", ["p0", "p1"], {"match_end": {"deals": 1}}, 0, [deal],
                        rng=rng)
    state, _ = apply(state, 1, Draw("discard"), rng)
    knock = Knock(cards(discard)[0], tuple(tuple(Piece(c) for c in cards(meld))
                                           for meld in melds.split("|")))
    state, _ = apply(state, 1, knock, rng)
    assert state.phase == "lay_out" and state.turn == 0
    return state, 0


def _gin_three_runs(rng: Random) -> tuple[GameState, int]:
    """The knocker lays out three runs 5-7; the defender holds the two cards below and
    above each of two runs, and 3C 8C: the lay-out search (the defender's legal move) has
    cards to lay off at five run ends, in 65,202 orders (a second of CPU to try them all),
    92 positions."""
    return _gin_laid_out("3H 4H 8H 9H 3S 4S 8S 9S 3C 8C", "5H 6H 7H 5S 6S 7S 5C 6C 7C KD",
                         "2D", "KD", "5H 6H 7H|5S 6S 7S|5C 6C 7C", rng)


def _gin_between_runs(rng: Random) -> tuple[GameState, int]:
    """The knocker lays out 3D-5D, 9D-JD and 4H-6H; the defender holds 6D 7D 8D, each of
    which can go on either diamond run, cards for the other ends and the heart run, and
    KH, which the heart run could take were it grown to the queen: no lay-out reaches
    deadwood 0 and none leaves only cards that nothing could take, so the search cannot
    stop early: the worst lay-out found (288,265 orders of lay-offs, 3.9 s of CPU to try
    them all; some 360 positions)."""
    return _gin_laid_out("3H 6D KH 8H 8D 7H 2D 7D 2H QD", "9D TD JD 4H 5H 6H 3D 4D 5D KC",
                         "AC", "KC", "9D TD JD|4H 5H 6H|3D 4D 5D", rng)


WORST_HANDS: dict[str, Callable[[Random], tuple[GameState, int]]] = {
    "dummy_14_cards_8_wilds": _dummy_worst,
    "rummy51_15_cards_4_jokers": _r51_worst,
    "gin_11_cards": _gin_worst,
    "gin_lay_out_three_runs": _gin_three_runs,
    "gin_lay_out_between_runs": _gin_between_runs,
}
"""The worst hands each variant allows, as states whose seat to move holds one (issue 48's
budget: ``legal_moves`` p99 within 5 ms on each)."""


def worst_hands(states: int = 30, repeat: int = 5, seed: int = 11) -> dict[str, Any]:
    """legal_moves on :data:`WORST_HANDS`: ms per call, p50/p99 for each, from cold (the
    meld readings and gin's arrangements forgotten before each call)."""
    out: dict[str, Any] = {}
    for name, build in WORST_HANDS.items():
        rng = Random(seed)
        built = [build(rng) for _ in range(states)]
        samples: list[float] = []
        listed: list[int] = []
        for _ in range(repeat):
            for state, seat in built:
                forget_readings()
                forget_arrangements()
                started = CLOCK()
                answer = legal_moves(state, seat)
                samples.append(CLOCK() - started)
                listed.append(len(answer.moves))
        out[name] = {**_percentiles(samples), "moves_listed_mean": statistics.fmean(listed)}
    return out


def figures(sim_seconds: float = 4.0) -> dict[str, Any]:
    from bench.sim import hands_per_second

    return {"check_meld_wilds": meld_validation(),
            "legal_moves_14_cards_4_jokers": legal_enumeration(),
            "legal_moves_worst_hands": worst_hands(),
            "simulated_hands": hands_per_second(sim_seconds)}
