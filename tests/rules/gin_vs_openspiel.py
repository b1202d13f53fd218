"""Gin rummy against OpenSpiel's ``gin_rummy``, move by move (docs/rules.md, GIN).

Each game deals the same cards in both engines (ours through an arranged deal, OpenSpiel's
through the chance actions that reproduce it), then plays random legal moves of ours in both
at once, comparing at every step the legal moves of the seat to act (mapped: OpenSpiel lays
a knock's melds and a lay-out's cards one action at a time, ours in one move), the deadwood
of a ten-card hand, the phase, and at the end the scores. A knock and a lay-out are compared
one OpenSpiel action at a time: before each, the melds the knocker may lay (those our engine
takes in a knock within the limit), the cards the defender may lay off (those our engine
takes as lay-offs with the ones laid before) and the melds it may lay; after the knock the
knocker's deadwood, at the end each seat's. Most knocks and lay-outs are our legal-moves
example (the least deadwood); about a third are arrangements chosen at random among the
legal ones, meld by meld and card by card, to compare the ones the example never plays.

Our knobs reproduce OpenSpiel's game: ``{"deals": 1}``, ``discard_taken_card`` true,
``undercut_on_tie`` false, ``big_gin_bonus`` 0. Three differences are by design, and the
comparison of a game stops there: OpenSpiel ends a hand at its 50th draw of a discard (not a
rule of ours: ``upcard_limit``); it lays off at most two cards beyond a run's end
(GIN-LAYOFF lays off every card that fits: ``layoff_chain``); and it misses some knocks of
an 11-card hand, reckoning its deadwood from one best meld group (GIN-KNOCK allows a knock
whenever the hand less a discard melds within the limit: ``eleven_card_deadwood``). Games
stopped there are not counted: :func:`play_games` plays until the number asked for reach a
scored end.

Seats: OpenSpiel's player 0 always acts first; ours is seat 0 with seat 1 dealing.

Run more games than the suite does (with the project's venv)::

    .venv/bin/python tests/rules/gin_vs_openspiel.py --games N --seed S

``open-spiel`` is a test dependency only (pyproject's ``test`` extra).
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
from collections import Counter
from pathlib import Path
from random import Random
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pyspiel

from service.rules.cards import rank_of, standard_deck
from service.rules.engine import apply, new_game
from service.rules.errors import Violation
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
EARLY = ("upcard_limit", "layoff_chain", "eleven_card_deadwood")
"""Where a game's comparison stops at a difference by design, before its scores."""
KNOCKED = ("knock", "gin", "undercut", "tie")
"""The results of a hand knocked and laid out (the rest are draws)."""
ARRANGED = 0.35
"""How often a knock, and a lay-out, is an arrangement chosen at random, not our example."""

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


class OpenSpielKnock(Exception):
    """GIN-KNOCK: a knock is possible when the hand less a discard melds to deadwood within
    the limit. OpenSpiel reckons an 11-card hand's deadwood (whether it may knock, in its
    Discard and Wall phases) as what the first meld group of the most points it finds
    leaves, less the highest card left (its ``MinDeadwood``); where another group of as
    many points leaves less, it refuses a knock RULES.md allows (3C-6C and 4S-6S leave AS 5D
    3H 6H: 9 after discarding 6H; 5S 5C 5D and 6S 6C 6H leave AS 4S 3C 4C 3H: 11). The
    comparison of that game stops there."""


class Divergence(AssertionError):
    """The engines disagree: what, at which step of which game."""


def openspiel_eleven(hand: list[str]) -> set[int]:
    """The deadwood OpenSpiel's ``MinDeadwood`` may give the 11 cards ``hand``: for each
    meld group of the most points, the cards it leaves less the highest-ranked of them
    (:class:`OpenSpielKnock`; OpenSpiel takes the first such group it finds)."""
    melds = gin.all_melds(hand)
    groups: list[tuple[int, frozenset[str]]] = []

    def walk(start: int, used: frozenset[str], points: int) -> None:
        groups.append((points, used))
        for i in range(start, len(melds)):
            if not used & set(melds[i]):
                walk(i + 1, used | set(melds[i]), points + gin.deadwood_of(melds[i]))

    walk(0, frozenset(), 0)
    most = max(points for points, _ in groups)
    return {gin.deadwood_of(sorted((c for c in hand if c not in used), key=rank_of)[:-1])
            for points, used in groups if points == most}


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
        self.patient = [self.rng.random() < 0.4 for _ in range(2)]
        """Each seat's style of play (:meth:`choose`)."""
        self.seen: Counter[str] = Counter()
        """What was compared, by kind (knock melds, lay-offs, lay-out melds, deadwood)."""

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
                elif ("draw", "discard") in kinds and max(openspiel_eleven(
                        [*s.hands[s.turn], s.discard[-1]])) > f.limit:
                    raise OpenSpielKnock(self.seed)  # at the wall, with the discard
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
                said = _os_deadwood(o, s.turn)
                if KNOCK not in os_legal and said > f.limit \
                        and said in openspiel_eleven(s.hands[s.turn]):
                    raise OpenSpielKnock(self.seed)
                raise self.fail("whether a knock is possible")
        elif s.phase == "lay_out":
            if phase != "Layoff":
                raise self.fail(f"our lay-out phase against OpenSpiel's {phase}")
            if [m["type"] for m in legal] != ["lay_out"]:
                raise self.fail(f"our legal moves in the lay-out: {legal}")

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

    def accepts(self, state: GameState, move: dict[str, Any]) -> bool:
        """Whether our engine takes ``move`` of the seat to act in ``state``."""
        try:
            apply(state, state.turn, move_from_dict(move), Random(0))
        except Violation:
            return False
        return True

    def os_melds(self) -> set[frozenset[str]]:
        """The melds OpenSpiel lets the seat to act lay now."""
        return {_os_meld(self.os, a) for a in self.os.legal_actions() if a >= MELD_BASE}

    def play_knock(self, move: dict[str, Any], already_knocked: bool = False) -> None:
        """Our knock ``move`` (its discard, and its melds or, :data:`ARRANGED` of the time,
        melds chosen at random among the legal ones) in both engines, OpenSpiel's melds one
        action at a time: before each, the melds it offers against those our engine takes in
        a knock within the limit, and whether it may stop against whether ours takes the
        knock as laid; after it, the knocker's deadwood."""
        before, seat, card = self.ours, self.ours.turn, move["card"]
        if not already_knocked:
            self.os_act(KNOCK)
            os_cards = {from_os(a) for a in self.os.legal_actions() if a < 52}
            ours = {m["card"] for m in hand_moves(before, seat) if m["type"] == "knock"}
            if ours != os_cards:
                raise self.fail(f"knock discards {sorted(ours)} against {sorted(os_cards)}")
        self.os_act(to_os(card))
        example = [piece for meld in move["melds"] for piece in split_run(meld["cards"])]
        arranged = self.rng.random() < ARRANGED
        laid: list[list[str]] = []
        left = [c for c in before.hands[seat] if c != card]

        def knock(melds: list[list[str]]) -> dict[str, Any]:
            return {"type": "knock", "card": card, "melds": [{"cards": m} for m in melds]}

        while True:
            self.seen["knock meld steps"] += 1
            offered = self.os_melds()
            candidates = offered | {frozenset(m) for m in gin.all_melds(left) if len(m) <= 5}
            ours = {m for m in candidates
                    if self.accepts(before, knock([*laid, sorted(m), *map(
                        list, gin.arrange([c for c in left if c not in m])[1])]))}
            if ours != offered:
                raise self.fail(f"knock melds {_melds(ours)} against OpenSpiel's "
                                f"{_melds(offered)}")
            may_stop = PASS in self.os.legal_actions()
            if may_stop != self.accepts(before, knock(laid)):
                raise self.fail(f"whether the knock may stop at melds {laid}")
            if arranged:
                if not offered or (may_stop and self.rng.random() < 0.4):
                    break
                meld = sorted(self.rng.choice(sorted(offered, key=sorted)))
            elif example:
                meld = example.pop(0)
            else:
                break
            self.lay_melds([meld])
            laid.append(meld)
            left = [c for c in left if c not in meld]
        self.os_act(PASS)
        self.ours, _ = apply(before, seat, move_from_dict(knock(laid)), Random(0))
        dead = gin.facts(self.ours).deadwood[seat]
        if dead != _os_deadwood(self.os, seat):
            raise self.fail(f"the knocker's deadwood {dead} after melds {laid}")
        self.seen["knocks arranged at random" if arranged else "knocks as our example"] += 1

    def lay_off_fits(self, before: GameState, card: str, offs: list[tuple[str, str]],
                     where: dict[str, list[str]]
                     ) -> tuple[list[tuple[str, str]], list[str]] | None:
        """Where our engine takes ``card`` as the defender's next lay-off, after ``offs``
        (meld id, card): the lay-offs before it and the melds it fits. OpenSpiel does not
        say which meld a card is laid off on (3H on 3S 3C 3D or on 4H-6H, which then takes
        2H); ours does: each earlier card may go on any meld it fitted when laid, the ones
        chosen first."""
        table = {m.id: m for m in before.melds if m.owner != before.turn}
        near = [mid for mid, m in table.items()
                if (card[0] == m.cards[0][0] if m.kind == "set" else card[1] == m.cards[0][1])]
        options = [[mid, *(m for m in where[c] if m != mid)] for mid, c in offs]
        for placed in itertools.product(*options):
            earlier = [(mid, c) for mid, (_, c) in zip(placed, offs, strict=True)]
            found = [mid for mid in near
                     if self.accepts(before, lay_out([], [*earlier, (mid, card)]))]
            if found:
                return earlier, found
        return None

    def lay_melds(self, melds: list[list[str]]) -> None:
        for cards in [piece for meld in melds for piece in split_run(meld)]:
            want = frozenset(cards)
            found = [a for a in self.os.legal_actions()
                     if a >= MELD_BASE and _os_meld(self.os, a) == want]
            if not found:
                raise self.fail(f"OpenSpiel will not lay meld {sorted(want)}")
            self.os_act(found[0])

    def play_lay_out(self, move: dict[str, Any]) -> None:
        """The defender's lay-out in both engines: our ``move`` (the example) or,
        :data:`ARRANGED` of the time, lay-offs and melds chosen at random among the legal
        ones; OpenSpiel's one card, then one meld, at a time. Before each lay-off the cards
        OpenSpiel offers against those our engine takes with the lay-offs made (the same,
        but for cards further than two beyond a run's end, which OpenSpiel never offers:
        ``layoff_chain``), before each meld the melds against those our engine takes."""
        before, seat = self.ours, self.ours.turn
        knock = gin.facts(before).knock
        assert knock is not None
        arranged = self.rng.random() < ARRANGED
        left = list(before.hands[seat])
        offs: list[tuple[str, str]] = []  # (meld id, card), in the order laid off
        table = {m.id: m for m in before.melds if m.owner != seat}
        if knock.kind == "knock":
            example = [(lo["meld_id"], c) for lo in move["lay_offs"] for c in lo["cards"]]
            where: dict[str, list[str]] = {}  # each card laid off: the melds it fitted
            while True:
                self.seen["lay-off steps"] += 1
                offered = {from_os(a) for a in self.os.legal_actions() if a < 52}
                fits = {c: found for c in left
                        if (found := self.lay_off_fits(before, c, offs, where))}
                beyond = {c for c, (_, mids) in fits.items()
                          if all(table[mid].kind == "run"
                                 and chain_depth(table[mid].cards, c) > 2 for mid in mids)}
                if not offered <= set(fits) or set(fits) - offered - beyond:
                    raise self.fail(f"lay-offs {sorted(fits)} against OpenSpiel's "
                                    f"{sorted(offered)} (after {offs})")
                self.seen["lay-off steps with a card beyond OpenSpiel's"] += bool(
                    set(fits) - offered)
                if arranged:
                    if not offered or self.rng.random() < 0.3:
                        break
                    card = self.rng.choice(sorted(offered))
                    mid = self.rng.choice(fits[card][1])
                elif example:
                    mid, card = example.pop(0)
                    if card not in fits or mid not in fits[card][1]:
                        raise self.fail(f"our example lays off {card} on {mid} after {offs}")
                    if card not in offered:  # beyond OpenSpiel's reach (GIN-LAYOFF)
                        raise OpenSpielLimit(self.seed)
                else:
                    break
                self.os_act(to_os(card))
                self.seen["lay-offs placing an earlier card elsewhere"] += fits[card][0] != offs
                offs[:] = [*fits[card][0], (mid, card)]
                where[card] = fits[card][1]
                left.remove(card)
            self.os_act(PASS)
        example_melds = [piece for meld in move["melds"] for piece in split_run(meld["cards"])]
        laid: list[list[str]] = []
        while True:
            self.seen["lay-out meld steps"] += 1
            offered = self.os_melds()
            candidates = offered | {frozenset(m) for m in gin.all_melds(left) if len(m) <= 5}
            ours = {m for m in candidates
                    if self.accepts(before, lay_out([*laid, sorted(m)], offs))}
            if ours != offered:
                raise self.fail(f"lay-out melds {_melds(ours)} against OpenSpiel's "
                                f"{_melds(offered)}")
            if arranged:
                if not offered or self.rng.random() < 0.3:
                    break
                meld = sorted(self.rng.choice(sorted(offered, key=sorted)))
            elif example_melds:
                meld = example_melds.pop(0)
            else:
                break
            self.lay_melds([meld])
            laid.append(meld)
            left = [c for c in left if c not in meld]
        self.os_act(PASS)
        self.ours, _ = apply(before, seat, move_from_dict(lay_out(laid, offs)), Random(0))
        if self.ours.history[-1]["deadwood"] != [_os_deadwood(self.os, p) for p in (0, 1)]:
            raise self.fail(f"deadwood {self.ours.history[-1]['deadwood']} after the lay-out "
                            f"{lay_out(laid, offs)}")
        self.seen["lay-outs arranged at random" if arranged else "lay-outs as our example"] += 1

    def choose(self, legal: list[dict[str, Any]]) -> dict[str, Any]:
        """A legal move, drawn towards good play so that every kind of end is common: the
        discard taken when it lowers the hand's deadwood, else mostly the stock; a knock as
        the seat's style has it (:attr:`patient`: only with deadwood 2 or less, else
        playing on for a gin, to the wall at times; else mostly as soon as it can); a
        discard that keeps the least deadwood. One move in five is any legal move."""
        if self.rng.random() < 0.2:
            return self.rng.choice(legal)
        hand = self.ours.hands[self.ours.turn]

        def dead(knock: dict[str, Any]) -> int:
            melded = {c for meld in knock["melds"] for c in meld["cards"]}
            return gin.deadwood_of([c for c in hand if c not in melded and c != knock["card"]])

        knocks = [m for m in legal if m["type"] == "knock"]
        if self.patient[self.ours.turn]:
            knocks = [m for m in knocks if dead(m) <= 2]
        if knocks and self.rng.random() < 0.8:
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
        others = [m for m in legal if m not in takes] or legal
        return self.rng.choice(others)

    def run(self) -> str:
        """Play the game out; the result (ours), or where its comparison stopped
        (:data:`EARLY`)."""
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


def play_games(games: int, seed: int, limit: int | None = None,
               seen: Counter[str] | None = None) -> dict[str, int]:
    """Play lockstep games from ``seed`` until ``games`` of them reach a scored end (their
    scores compared with OpenSpiel's returns), at most ``limit`` games in all (default:
    twice ``games``); the results by kind, with the games stopped early (:data:`EARLY`).
    ``seen`` counts what was compared."""
    results: dict[str, int] = {}
    played = scored = 0
    while scored < games and played < (limit or 2 * games):
        game = Lockstep(seed * 1_000_003 + played)
        try:
            result = game.run()
        except OpenSpielLimit:
            result = "layoff_chain"
        except OpenSpielKnock:
            result = "eleven_card_deadwood"
        if seen is not None:
            seen.update(game.seen)
        results[result] = results.get(result, 0) + 1
        played += 1
        scored += result not in EARLY
    return results


def lay_out(melds: list[list[str]], lay_offs: list[tuple[str, str]]) -> dict[str, Any]:
    """Our lay-out move: ``melds`` and ``lay_offs`` (meld id, card), one card each."""
    return {"type": "lay_out", "melds": [{"cards": m} for m in melds],
            "lay_offs": [{"meld_id": mid, "cards": [card]} for mid, card in lay_offs]}


def _melds(melds: set[frozenset[str]]) -> list[str]:
    return sorted(" ".join(sorted(m)) for m in melds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=300,
                        help="how many games to compare to a scored end")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    seen: Counter[str] = Counter()
    results = play_games(args.games, args.seed, seen=seen)
    early = sum(results.get(kind, 0) for kind in EARLY)
    knocked = sum(results.get(kind, 0) for kind in KNOCKED)
    print(f"{sum(results.values())} games: {sum(results.values()) - early} to a scored end "
          f"({knocked} knocked and laid out), {early} stopped early")
    print(dict(sorted(results.items(), key=lambda kv: -kv[1])))
    print("compared:", dict(seen))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["EARLY", "KNOCKED", "GameState", "Lockstep", "play_games"]
