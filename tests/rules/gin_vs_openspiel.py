"""Gin rummy against OpenSpiel's ``gin_rummy``, move by move (docs/rules.md, GIN).

Each game deals the same cards in both engines (ours through an arranged deal, OpenSpiel's
through the chance actions that reproduce it), then plays random legal moves of ours in both
at once, comparing at every step the legal moves of the seat to act (mapped: OpenSpiel lays
a knock's melds and a lay-out's cards one action at a time, ours in one move), the deadwood
of a ten-card hand, the phase, and at the end the scores. Our knobs reproduce OpenSpiel's
game: ``{"deals": 1}``, ``discard_taken_card`` true, ``undercut_on_tie`` false,
``big_gin_bonus`` 0. OpenSpiel ends a hand at its 50th draw of a discard (not a rule of
ours): the comparison stops there.

Seats: OpenSpiel's player 0 always acts first; ours is seat 0 with seat 1 dealing.

Run more games than the suite does::

    python tests/rules/gin_vs_openspiel.py --games 2000 --seed 7

``open-spiel`` is a test dependency only (pyproject's ``test`` extra).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from random import Random
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pyspiel

from service.rules.cards import standard_deck
from service.rules.engine import apply, new_game
from service.rules.legal import legal_moves
from service.rules.moves import MATCH_MOVES, move_from_dict
from service.rules.state import GameState
from service.rules.variants import gin

RULES = {"match_end": {"deals": 1}, "discard_taken_card": True, "undercut_on_tie": False,
         "big_gin_bonus": 0}
"""Our knobs that reproduce OpenSpiel's game."""

DRAW_UPCARD, DRAW_STOCK, PASS, KNOCK, MELD_BASE = 52, 53, 54, 55, 56
MAX_UPCARD_DRAWS = 50
"""OpenSpiel ends the hand at this draw of the discard (in its Draw phase)."""

_SUITS = "SCDH"
_RANKS = "A23456789TJQK"


def hand_moves(state: GameState, seat: int) -> list[dict[str, Any]]:
    """Our legal moves in the hand: without resign, abort and claim_timeout (C-RESIGN,
    C-ABORT, C-CLOCK), which OpenSpiel's game has no action for."""
    return [m for m in legal_moves(state, seat).moves if m["type"] not in MATCH_MOVES]


def to_os(card: str) -> int:
    """Our card code as OpenSpiel's card index (suit * 13 + rank; suits s c d h)."""
    return _SUITS.index(card[1]) * 13 + _RANKS.index(card[0])


def from_os(index: int) -> str:
    return _RANKS[index % 13] + _SUITS[index // 13]


def split_run(cards: list[str]) -> list[list[str]]:
    """A meld as OpenSpiel lays it: its meld actions hold runs of at most 5 cards, so a
    longer run is laid as two (the same cards, the same deadwood)."""
    if len(cards) <= 5:
        return [cards]
    first = len(cards) // 2
    return [cards[:first], cards[first:]]


def chain_depth(meld: list[str], card: str) -> int:
    """How far ``card`` lies beyond the nearer end of the run ``meld`` (1: next to it)."""
    ranks = [_RANKS.index(c[0]) for c in meld]
    rank = _RANKS.index(card[0])
    return min(abs(rank - min(ranks)), abs(rank - max(ranks)))


class OpenSpielLimit(Exception):
    """GIN-LAYOFF: OpenSpiel accepts lay-offs on a run at most two deep from its end (its
    ``AllLayoffs`` adds earlier lay-offs to the meld in a single pass); RULES.md lets the
    other player lay off every card that fits. The comparison of that game stops there."""


class Divergence(AssertionError):
    """The engines disagree: what, at which step of which game."""


def _os_meld(state: Any, action: int) -> frozenset[str]:
    text = state.action_to_string(0, action).rsplit(" ", 1)[1]
    return frozenset(text[i:i + 2].upper() for i in range(0, len(text), 2))


def _os_deadwood(state: Any, player: int) -> int:
    found = re.search(rf"Player{player}: Deadwood=(-?\d+)", str(state))
    assert found is not None
    return int(found.group(1))


def _os_phase(state: Any) -> str:
    found = re.search(r"Phase: (\w+)", str(state))
    assert found is not None
    return found.group(1)


class Lockstep:
    """One game in both engines."""

    def __init__(self, seed: int) -> None:
        self.rng = Random(seed)
        self.seed = seed
        deck = standard_deck()
        self.rng.shuffle(deck)
        hands = [deck[:10], deck[10:20]]
        upcard, stock = deck[20], deck[21:]
        self.stock = list(stock)  # top first
        self.ours, _ = new_game("gin", ["p0", "p1"], RULES, dealer=1,
                                deals=[{"hands": hands, "discard": [upcard],
                                        "stock": stock}], rng=Random(seed))
        self.os = pyspiel.load_game("gin_rummy").new_initial_state()
        for card in [*hands[0], *hands[1], upcard]:
            self.os.apply_action(to_os(card))
        self.step = 0
        self.upcard_draws = 0

    def fail(self, what: str) -> Divergence:
        return Divergence(f"game seed {self.seed}, step {self.step}: {what}\n"
                          f"ours: phase {self.ours.phase}, seat {self.ours.turn}, "
                          f"hands {self.ours.hands}\nOpenSpiel:{self.os}")

    def os_act(self, action: int) -> None:
        if action not in self.os.legal_actions():
            text = self.os.action_to_string(self.os.current_player(), action)
            raise self.fail(f"OpenSpiel refuses {text}")
        self.os.apply_action(action)
        if self.os.is_chance_node():  # a stock draw: the card our stock has on top
            self.os.apply_action(to_os(self.stock_top))

    @property
    def stock_top(self) -> str:
        return self.ours.stock[-1]

    def compare(self) -> None:
        s, o = self.ours, self.os
        phase = _os_phase(o)
        if s.status != "playing":
            if not o.is_terminal():
                raise self.fail("our hand is over, OpenSpiel's is not")
            return
        if o.is_terminal():
            raise self.fail("OpenSpiel's hand is over, ours is not")
        if o.current_player() != s.turn:
            raise self.fail(f"OpenSpiel's player {o.current_player()} is to act")
        legal = hand_moves(s, s.turn)
        kinds = {(m["type"], m.get("source")) for m in legal}
        os_legal = set(o.legal_actions())
        f = gin.facts(s)
        if s.phase == "draw":
            want = {("pass", None)} if phase in ("FirstUpcard", "Wall") else set()
            if phase == "FirstUpcard" and os_legal == {DRAW_STOCK}:
                want = {("draw", "stock")}
            elif phase == "FirstUpcard":
                want |= {("draw", "discard")}
            elif phase == "Draw":
                want = {("draw", "discard"), ("draw", "stock")}
            elif phase == "Wall":
                if KNOCK in os_legal:
                    want |= {("draw", "discard")}
            else:
                raise self.fail(f"our draw phase against OpenSpiel's {phase}")
            if kinds != want:
                raise self.fail(f"legal moves {sorted(map(str, kinds))} against OpenSpiel's "
                                f"{sorted(os_legal)}")
            if phase == "Wall" and not f.wall:
                raise self.fail("OpenSpiel is at the wall, we are not")
            for p in (0, 1):
                if len(s.hands[p]) == 10 and \
                        gin.arrange(s.hands[p])[0] != _os_deadwood(o, p):
                    raise self.fail(f"deadwood of player {p}")
        elif s.phase == "play":
            if phase != "Discard":
                raise self.fail(f"our play phase against OpenSpiel's {phase}")
            discards = {from_os(a) for a in os_legal if a < 52}
            ours = {m["card"] for m in legal if m["type"] == "discard"}
            if ours != discards:
                raise self.fail(f"discards {sorted(ours)} against {sorted(discards)}")
            if (KNOCK in os_legal) != any(m["type"] == "knock" for m in legal):
                raise self.fail("whether a knock is possible")
        elif s.phase == "lay_out" and phase != "Layoff":
            raise self.fail(f"our lay-out phase against OpenSpiel's {phase}")

    def play_move(self, move: dict[str, Any]) -> None:
        s, o = self.ours, self.os
        seat = s.turn
        kind = move["type"]
        if kind == "pass":
            self.os_act(PASS)
        elif kind == "draw" and move["source"] == "stock":
            self.os_act(DRAW_STOCK)
        elif kind == "draw":
            if _os_phase(o) == "Wall":
                # OpenSpiel's wall knock takes the discard: our draw, then our knock
                self.ours, _ = apply(s, seat, move_from_dict(move), Random(0))
                self.os_act(KNOCK)
                knocks = [m for m in hand_moves(self.ours, seat) if m["type"] == "knock"]
                os_cards = {from_os(a) for a in self.os.legal_actions() if a < 52}
                if {m["card"] for m in knocks} != os_cards:
                    raise self.fail(f"wall knock discards {sorted(m['card'] for m in knocks)} "
                                    f"against {sorted(os_cards)}")
                self.play_knock(self.rng.choice(knocks), already_knocked=True)
                return
            if _os_phase(o) == "Draw":
                self.upcard_draws += 1
            self.os_act(DRAW_UPCARD)
        elif kind == "discard":
            self.os_act(to_os(move["card"]))
        elif kind == "knock":
            self.play_knock(move)
            return
        elif kind == "lay_out":
            self.play_lay_out(move)
            return
        self.ours, _ = apply(s, seat, move_from_dict(move), Random(0))

    def play_knock(self, move: dict[str, Any], already_knocked: bool = False) -> None:
        seat = self.ours.turn
        if not already_knocked:
            self.os_act(KNOCK)
            os_cards = {from_os(a) for a in self.os.legal_actions() if a < 52}
            ours = {m["card"] for m in hand_moves(self.ours, seat)
                    if m["type"] == "knock"}
            if ours != os_cards:
                raise self.fail(f"knock discards {sorted(ours)} against {sorted(os_cards)}")
        self.os_act(to_os(move["card"]))
        self.lay_melds([m["cards"] for m in move["melds"]])
        self.os_act(PASS)
        self.ours, _ = apply(self.ours, seat, move_from_dict(move), Random(0))

    def lay_melds(self, melds: list[list[str]]) -> None:
        for cards in [piece for meld in melds for piece in split_run(meld)]:
            want = frozenset(cards)
            found = [a for a in self.os.legal_actions()
                     if a >= MELD_BASE and _os_meld(self.os, a) == want]
            if not found:
                raise self.fail(f"OpenSpiel will not lay meld {sorted(want)}")
            self.os_act(found[0])

    def play_lay_out(self, move: dict[str, Any]) -> None:
        seat = self.ours.turn
        knock = gin.facts(self.ours).knock
        if knock is not None and knock.kind == "knock":
            for lo in move["lay_offs"]:
                target = self.ours.meld(lo["meld_id"])
                assert target is not None
                for card in lo["cards"]:
                    if to_os(card) not in self.os.legal_actions() \
                            and chain_depth(target.cards, card) > 2:
                        raise OpenSpielLimit(self.seed)
                    self.os_act(to_os(card))
            self.os_act(PASS)
        self.lay_melds([m["cards"] for m in move["melds"]])
        self.os_act(PASS)
        self.ours, _ = apply(self.ours, seat, move_from_dict(move), Random(0))

    def choose(self, legal: list[dict[str, Any]]) -> dict[str, Any]:
        """A random legal move, drawn towards good play half the time (so that knocks,
        gins and undercuts are common, not only walls)."""
        move = self.rng.choice(legal)
        if self.rng.random() < 0.5:
            return move
        hand = self.ours.hands[self.ours.turn]
        knocks = [m for m in legal if m["type"] == "knock"]
        if knocks:
            return self.rng.choice(knocks)
        discards = [m for m in legal if m["type"] == "discard"]
        if discards:
            def left(m: dict[str, Any]) -> int:
                rest = list(hand)
                rest.remove(m["card"])
                return gin.arrange(rest)[0]
            return min(discards, key=left)
        takes = [m for m in legal if m["type"] == "draw" and m["source"] == "discard"]
        if takes and self.ours.discard:
            now = gin.arrange(hand)[0]
            with_it = min(gin.arrange([c for c in [*hand, self.ours.discard[-1]] if c != d])[0]
                          for d in hand)
            if with_it < now:
                return takes[0]
        return move

    def run(self) -> str:
        """Play the game out; the result (ours), or ``"upcard_limit"`` where it stopped."""
        self.compare()
        while self.ours.status == "playing":
            legal = hand_moves(self.ours, self.ours.turn)
            move = self.choose(legal)
            if move["type"] == "draw" and move["source"] == "discard" \
                    and _os_phase(self.os) == "Draw" \
                    and self.upcard_draws + 1 == MAX_UPCARD_DRAWS:
                return "upcard_limit"  # OpenSpiel ends its hand here; GIN has no such rule
            self.play_move(move)
            self.step += 1
            self.compare()
        end = self.ours.history[-1]
        returns = self.os.returns()
        ours = end["scores"]
        if [ours[0] - ours[1], ours[1] - ours[0]] != [int(r) for r in returns]:
            raise self.fail(f"scores {ours} against OpenSpiel's returns {returns}")
        return str(end["result"])


def play_games(games: int, seed: int) -> dict[str, int]:
    """Play ``games`` lockstep games from ``seed``; the results by kind."""
    results: dict[str, int] = {}
    for i in range(games):
        try:
            result = Lockstep(seed * 1_000_003 + i).run()
        except OpenSpielLimit:
            result = "layoff_chain"
        results[result] = results.get(result, 0) + 1
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(play_games(args.games, args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["GameState", "Lockstep", "play_games"]
