"""Random play in-process, for the engine's "whole simulated hands per second".

The player is :mod:`service.rules.randomplay` (the tests use it too): it finds melds among
3- and 4-card combinations, opens (R51/L14), lays its Dummy contract down and goes down all
at once in Wrotham's late deals with the meld search, lays off what fits and discards at
random, asking the engine whether a move is legal where the rules are subtle.
:func:`hands_per_second` plays whole hands of every variant with it.
"""

from __future__ import annotations

from random import Random
from typing import Any

from service.rules import GameState
from service.rules.moves import Move
from service.rules.randomplay import play


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
