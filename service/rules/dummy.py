"""Dummy rummy (RULES.md DUMMY), a contract rummy: what differs from basic rummy.

Two decks and four jokers; every joker and every 2 is wild (a 2 may also stand as a natural
2); sets may repeat suits and have no size limit; runs mix suits unless ``run_same_suit``;
the ace is high or low, never both ends of a wrap (DUMMY-SET, DUMMY-RUN, DUMMY-WILDS).

Each seat works through the twelve :data:`CONTRACTS` in order. The contract is laid down
in one meld action made of exactly the contract's melds (sizes are minimums); after it the
player makes no new meld, draws from the stock only, and lays off from their next turn on
(DUMMY-CONTRACTS, DUMMY-DRAW, DUMMY-AFTER). Every turn ends with a discard, and a discard
that would fit a table meld is refused under ``playable_discard: forbid`` (DUMMY-DISCARD).

What the engine keeps in ``GameState.var`` for this variant:

* ``"contract"``: each seat's current contract number (1..12);
* ``"completed"``: how many contracts each seat has completed;
* ``"cut_ins"``: cut-ins granted to each seat in this hand (at most 2, DUMMY-CUTIN);
* ``"cut_in"``: the cut-in window, ``{"open", "discarder", "claims"}``.

Choices where RULES.md leaves one open (each also said where it is made):

* A contract action holds exactly the contract's melds: no extra meld, no lay-off. Where a
  meld could be read both as a set and as a run, the referee takes the reading the contract
  needs.
* Cut-ins are *claims* (DUMMY-CUTIN: "the next player has priority"): a claim made after a
  discard waits for the next player's draw. Taking the discard voids every claim; drawing
  from the stock grants the claim of the claimant nearest in turn order after the next
  player, who gets the discard and the top 3 stock cards before the next player draws.
  The player who made the discard cannot claim it (so two-player games have no cut-ins),
  nor can the next player (they take it by drawing it). A claim needs at least 4 cards in
  the stock (3 to give, 1 for the next player's draw).
* ``playable_discard: forbid`` exempts a discard when every card the player *may* discard
  would fit (a card just taken from the discard pile may not be discarded, C-DISCARD-BACK),
  so a turn can always end.
* A hand that ends with nobody out (C-STOCK): everyone adds their own count.
* With ``match_end: {"deals": N}`` a player who has completed all twelve contracts plays
  contract 12 again.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from random import Random
from typing import Any

from service.rules import scoring
from service.rules.cards import JOKER, RANKS, rank_of
from service.rules.errors import N_, Code, Message, Reason, Violation
from service.rules.melds import (
    OPEN_SUIT,
    Meld,
    MeldError,
    MeldShape,
    Piece,
    check_meld,
    extend_meld,
    meld_from_table,
)
from service.rules.moves import Discard
from service.rules.ruleset import Rules
from service.rules.state import GameState
from service.rules.turn import Event, LaidOff, Turn, VariantRules, may_lay_off

CUT_IN_CARDS = 3
"""Stock cards a granted cut-in gives on top of the discard (DUMMY-CUTIN)."""
MAX_CUT_INS = 2
"""Cut-ins a player may make in one hand (DUMMY-CUTIN)."""


@dataclass(frozen=True)
class Need:
    """One meld of a contract: its kind (``"set"`` or ``"run"``) and its least size."""

    kind: str
    size: int


@dataclass(frozen=True)
class Contract:
    """A contract of DUMMY-CONTRACTS: the melds it takes, laid down in one action."""

    number: int
    needs: tuple[Need, ...]
    text: str

    def public(self) -> dict[str, Any]:
        return {"number": self.number, "text": self.text,
                "melds": [{"kind": n.kind, "min_size": n.size} for n in self.needs]}


def _c(number: int, text: str, *needs: tuple[str, int]) -> Contract:
    return Contract(number, tuple(Need(kind, size) for kind, size in needs), text)


CONTRACTS: tuple[Contract, ...] = (
    _c(1, N_("two sets of 3"), ("set", 3), ("set", 3)),
    _c(2, N_("a set of 3 and a run of 4"), ("set", 3), ("run", 4)),
    _c(3, N_("two sets of 4"), ("set", 4), ("set", 4)),
    _c(4, N_("two runs of 4"), ("run", 4), ("run", 4)),
    _c(5, N_("a set of 4 and a run of 4"), ("set", 4), ("run", 4)),
    _c(6, N_("two sets of 3 and a run of 4"), ("set", 3), ("set", 3), ("run", 4)),
    _c(7, N_("a set of 3 and a run of 7"), ("set", 3), ("run", 7)),
    _c(8, N_("three sets of 3"), ("set", 3), ("set", 3), ("set", 3)),
    _c(9, N_("two sets of 5"), ("set", 5), ("set", 5)),
    _c(10, N_("two runs of 5"), ("run", 5), ("run", 5)),
    _c(11, N_("eight of a kind"), ("set", 8)),
    _c(12, N_("a run of 10"), ("run", 10)),
)
"""The twelve contracts, in order (DUMMY-CONTRACTS). Sizes are minimums."""


def contract(number: int) -> Contract:
    """Contract ``number`` (1..12)."""
    return CONTRACTS[number - 1]


def dummy_count(card: str) -> int:
    """DUMMY-SCORE: 3–9 count 5, 10 J Q K 10, an ace 15, a 2 or a joker 50."""
    if card == JOKER:
        return 50
    return _rank_value(rank_of(card))


def _rank_value(rank: int) -> int:
    if rank == 1:
        return 15
    if rank == 2:
        return 50
    return 10 if rank >= 10 else 5


# ---------------------------------------------------------------------------------------
# Readings of a meld as the kind a contract needs


def read_as(pieces: Sequence[Piece], shape: MeldShape, kind: str,
            best: Meld | None = None) -> Meld | None:
    """The best valid reading of ``pieces`` as a ``kind`` (``"set"`` / ``"run"``), if any.

    The meld validator (:func:`~service.rules.melds.check_meld`) is the judge: a run reading
    is asked for with sets switched off; a set reading by declaring each undeclared wild as
    the set's rank (then its suit is given back as open, as for any set wild). ``best``:
    ``check_meld(pieces, shape)``, when the caller has it already.
    """
    if best is None:
        try:
            best = check_meld(pieces, shape)
        except MeldError:
            return None
    if best.kind == kind:
        return best
    if kind == "run":
        try:
            return check_meld(pieces, replace(shape, set_max=2))
        except MeldError:
            return None
    ranks = {rank_of(p.card) for p in pieces if not shape.is_wild(p.card) and p.as_ is None}
    ranks |= {rank_of(p.as_) for p in pieces if p.as_ is not None}
    if len(ranks) > 1:
        return None
    rank = ranks.pop() if ranks else 2  # only wilds: a set of 2s standing as themselves
    if rank == 2 and not any(p.card != JOKER for p in pieces):
        return None
    name = RANKS[rank - 1]
    forced = [Piece(p.card, name + "S") if p.as_ is None and shape.is_wild(p.card)
              and not (rank == 2 and p.card != JOKER) else p for p in pieces]
    try:
        reading = check_meld(forced, shape)
    except MeldError:
        return None
    if reading.kind != "set":
        return None
    # the wilds the referee declared get their open suit back (C-WILD)
    declared = Counter((p.card, p.as_) for p in pieces if p.as_ is not None)
    idents = list(reading.idents)
    for i, (card, ident) in enumerate(zip(reading.cards, idents, strict=True)):
        if card == ident:
            continue
        if declared[(card, ident)] > 0:
            declared[(card, ident)] -= 1
        else:
            idents[i] = name + OPEN_SUIT
    order = sorted(range(len(idents)), key=lambda i: (reading.cards[i] != idents[i],
                                                      "SHDC*".index(idents[i][1])))
    return replace(reading, cards=tuple(reading.cards[i] for i in order),
                   idents=tuple(idents[i] for i in order))


def fit_contract(melds: Sequence[Sequence[Piece]], shape: MeldShape, wanted: Contract,
                 best: Sequence[Meld] | None = None) -> list[Meld] | None:
    """Readings of ``melds`` that make up ``wanted``, one meld per need, or None (``best``:
    each meld's ``check_meld`` reading, when the caller has them already)."""
    if len(melds) != len(wanted.needs):
        return None
    bests: Sequence[Meld | None] = best if best is not None else [None] * len(melds)
    options = [{kind: read_as(m, shape, kind, b) for kind in ("set", "run")}
               for m, b in zip(melds, bests, strict=True)]
    for order in itertools.permutations(wanted.needs):
        chosen: list[Meld] = []
        for need, opts in zip(order, options, strict=True):
            reading = opts[need.kind]
            if reading is None or len(reading.cards) < need.size:
                break
            chosen.append(reading)
        else:
            return chosen
    return None


def _describe(melds: Sequence[Meld]) -> Message:
    return Message.join(Message(N_("a set of {count} ({cards})") if m.kind == "set" else
                                N_("a run of {count} ({cards})"),
                                {"count": len(m.cards), "cards": " ".join(m.cards)})
                        for m in melds)


# ---------------------------------------------------------------------------------------


class DummyRules(VariantRules):
    """DUMMY rules: contracts, stock-only draws after the contract, discards that must not
    fit a table meld, cut-ins, DUMMY-SCORE and DUMMY-END."""

    score_needs: tuple[str, ...] = ()

    # -- shape and values ----------------------------------------------------------------

    def meld_shape(self, rules: Rules) -> MeldShape:
        """DUMMY-SET, DUMMY-RUN (ace high or low, never wrapping), DUMMY-WILDS."""
        return MeldShape(
            is_wild=self.variant.is_wild, ace="high_or_low", set_max=None,
            set_distinct_suits=False, run_same_suit=rules.run_same_suit, max_wilds=None,
            flexible_twos=True, meld_value=self.meld_value(rules), set_rule="DUMMY-SET",
            run_rule="DUMMY-RUN", wild_rule="DUMMY-WILDS")

    def meld_value(self, rules: Rules) -> Callable[[int, bool], int]:
        """What an identity on the table would count in hand (DUMMY-SCORE)."""

        def value(rank: int, high: bool) -> int:
            del high
            return _rank_value(rank)

        return value

    def card_count(self, rules: Rules, card: str) -> int:
        return dummy_count(card)

    # -- per-seat facts ------------------------------------------------------------------

    @staticmethod
    def current(state: GameState, seat: int) -> Contract:
        """The contract ``seat`` is on."""
        return contract(state.var["contract"][seat])

    def meld_sizes(self, state: GameState, seat: int) -> Collection[int] | None:
        """A new meld on its own is only ever a contract of one meld (DUMMY-CONTRACTS: the
        contract is laid down in one action; DUMMY-AFTER: no new meld after it): at least
        that meld's size, for a seat not yet down on such a contract, and none else."""
        needs = self.current(state, seat).needs
        if state.melded[seat] or len(needs) > 1:
            return frozenset()
        return range(needs[0].size, len(state.hands[seat]) + 1)

    def first_turn(self, state: GameState) -> None:
        """C-DEAL as basic; every seat starts on contract 1; cut-ins reset each hand."""
        super().first_turn(state)
        n = state.players_count
        state.var.setdefault("contract", [1] * n)
        state.var.setdefault("completed", [0] * n)
        state.var["cut_ins"] = [0] * n
        state.var["cut_in"] = {"open": False, "discarder": None, "claims": []}

    # -- the turn ------------------------------------------------------------------------

    def check_draw(self, turn: Turn, source: str) -> None:
        """DUMMY-DRAW: after the contract, the stock only."""
        if source == "discard" and turn.opened:
            raise Violation(Code.DISCARD_DRAW_FORBIDDEN, "DUMMY-DRAW",
                            N_("you have laid down your contract this hand: draw from the "
                               "stock"))

    def before_draw(self, turn: Turn, source: str) -> None:
        """DUMMY-CUTIN: the next player's draw closes the window. Taking the discard voids
        the claims; a stock draw first grants the best-placed claim."""
        s = turn.state
        window = s.var.get("cut_in")
        if not window or not window["open"]:
            return
        claims: list[int] = list(window["claims"])
        s.var["cut_in"] = {"open": False, "discarder": None, "claims": []}
        if not claims:
            return
        if source == "discard" or len(s.stock) < CUT_IN_CARDS or not s.discard:
            reason = (f"seat {turn.seat} took the discard" if source == "discard"
                      else "the stock is too low")  # (claims need 4 stock cards)
            turn.events.append({"type": "cut_in_denied", "seats": claims, "reason": reason})
            return
        n = s.players_count
        winner = min(claims, key=lambda seat: (seat - turn.seat) % n)
        card = s.discard.pop()
        cards = [s.stock.pop() for _ in range(CUT_IN_CARDS)]
        s.hands[winner].extend([card, *cards])
        s.var["cut_ins"][winner] += 1
        turn.events.append({"type": "cut_in", "seat": winner, "card": card,
                            "stock_cards": CUT_IN_CARDS, "cut_ins": s.var["cut_ins"][winner],
                            "private": {str(winner): {"cards": cards}}})
        others = [seat for seat in claims if seat != winner]
        if others:
            turn.events.append({"type": "cut_in_denied", "seats": others,
                                "reason": f"seat {winner} is before them in turn order"})

    def read_melds(self, turn: Turn, melds: Sequence[Sequence[Piece]]) -> list[Meld]:
        """DUMMY-CONTRACTS: the only meld action of a hand is the contract, all at once."""
        seat_contract = self.current(turn.state, turn.seat)
        if turn.opened:
            raise Violation(Code.CONTRACT_ALREADY_MET, "DUMMY-AFTER",
                            N_("you have laid down contract {number} this hand: no new melds; "
                               "lay off on the table's melds instead"),
                            number=seat_contract.number)
        best = turn.readings(melds)  # no reading filter in Dummy: check_meld's own readings
        fitted = fit_contract(melds, turn.shape, seat_contract, best)
        if fitted is None:
            count = len(seat_contract.needs)
            raise Violation(Code.CONTRACT_NOT_MET, "DUMMY-CONTRACTS",
                            N_("contract {number} is {contract} ({count} melds, sizes are "
                               "minimums, all in this action); these melds are {melds}")
                            if count > 1 else
                            N_("contract {number} is {contract} (1 meld, sizes are minimums, "
                               "all in this action); these melds are {melds}"),
                            number=seat_contract.number, contract=Message(seat_contract.text),
                            count=count, melds=_describe(best))
        return fitted

    def check_meld_action(self, turn: Turn, melds: Sequence[Meld],
                          lay_offs: Sequence[LaidOff]) -> None:
        if lay_offs:
            raise Violation(Code.INVALID_LAY_OFF, "DUMMY-AFTER",
                            N_("lay-offs come from the turn after your contract on"))
        used = sum(len(m.cards) for m in melds)
        if used >= len(turn.hand):
            raise Violation(Code.MUST_DISCARD_TO_GO_OUT, "DUMMY-DISCARD",
                            N_("this would leave no card to discard; every turn ends with one"))

    def check_lay_offs(self, turn: Turn, lay_offs: Sequence[LaidOff],
                       in_meld_action: bool = False) -> None:
        """DUMMY-AFTER: lay-offs, on anyone's melds, from the turn after the contract on."""
        s = turn.state
        if not turn.opened:
            raise Violation(Code.NOT_OPENED, "DUMMY-AFTER",
                            N_("lay down your contract ({contract}) first; lay-offs come "
                               "from the turn after it on"),
                            contract=Message(self.current(s, turn.seat).text))
        if not s.tabled[turn.seat]:
            raise Violation(Code.INVALID_LAY_OFF, "DUMMY-AFTER",
                            N_("you laid down your contract this turn: lay-offs come from "
                               "your next turn on"))
        used = sum(len(lo.pieces) for lo in lay_offs)
        if used >= len(turn.hand):
            raise Violation(Code.MUST_DISCARD_TO_GO_OUT, "DUMMY-DISCARD",
                            N_("this would leave no card to discard; every turn ends with one"))

    def fits_table(self, turn: Turn, card: str) -> str | None:
        """The id of a table meld ``card`` would fit as a lay-off, if any."""
        for target in turn.state.melds:
            if not may_lay_off(target, card, None, turn.shape):
                continue  # certainly not: no need to read it
            current = meld_from_table(target.kind, target.cards, target.idents, target.start,
                                      turn.shape)
            try:
                extend_meld(current, (Piece(card),), turn.shape)
            except MeldError:
                continue
            return target.id
        return None

    def check_discard(self, turn: Turn, move: Discard) -> None:
        """DUMMY-DISCARD (``playable_discard: forbid``): no card that fits a table meld,
        unless it is the last card or every card the player may discard would fit."""
        s = turn.state
        if turn.rules.playable_discard != "forbid" or not s.melds or len(turn.hand) == 1:
            return
        fits = self.fits_table(turn, move.card)
        if fits is None:
            return
        may = {c for c in turn.hand if not (c == s.taken and s.taken_before == 0)}
        spare = next((c for c in sorted(may) if self.fits_table(turn, c) is None), None)
        if spare is None:
            return
        raise Violation(Code.PLAYABLE_DISCARD, "DUMMY-DISCARD",
                        N_("{card} would fit {meld_id} as a lay-off, so it may not be "
                           "discarded while you hold a card that fits no meld (e.g. {spare})"),
                        card=move.card, meld_id=fits, spare=spare)

    def after_discard(self, turn: Turn, move: Discard) -> None:
        """DUMMY-CUTIN: a discard opens the cut-in window until the next player draws."""
        if turn.rules.cut_ins:
            turn.state.var["cut_in"] = {"open": True, "discarder": turn.seat, "claims": []}

    def cut_in(self, state: GameState, seat: int, rng: Random) -> list[Event]:
        """DUMMY-CUTIN: register ``seat``'s claim on the top discard (see the module's
        docstring: it is granted or voided by the next player's draw)."""
        del rng
        rules = Rules.of(state.rules)
        if not rules.cut_ins:
            raise Violation(Code.CUT_IN_NOT_ALLOWED, "DUMMY-CUTIN",
                            N_("cut-ins are not played in this game (knob cut_ins)"))
        window = state.var.get("cut_in") or {"open": False, "discarder": None, "claims": []}
        reasons: list[Message] = []
        if state.phase != "draw" or not window["open"]:
            reasons.append(Message(N_("a cut-in is claimed after a discard, before the next "
                                      "player draws")))
        if seat == state.turn:
            reasons.append(Message(N_("you are next: take the discard by drawing it (you have "
                                      "priority)")))
        if seat == window["discarder"]:
            reasons.append(Message(N_("you discarded that card")))
        if state.melded[seat]:
            reasons.append(Message(N_("you have laid down your contract this hand")))
        if state.var["cut_ins"][seat] >= MAX_CUT_INS:
            reasons.append(Message(N_("you have made {count} cut-ins this hand already"),
                                   {"count": MAX_CUT_INS}))
        if seat in window["claims"]:
            reasons.append(Message(N_("you have already claimed this discard")))
        if window["open"] and len(state.stock) < CUT_IN_CARDS + 1:
            reasons.append(Message(N_("the stock holds {count} cards: a cut-in takes {takes} "
                                      "and leaves one for the next player"),
                                   {"count": len(state.stock), "takes": CUT_IN_CARDS}))
        if reasons:
            raise Violation.of([Reason(Code.CUT_IN_NOT_ALLOWED, "DUMMY-CUTIN", r)
                                for r in reasons])
        window = {**window, "claims": [*window["claims"], seat]}
        state.var["cut_in"] = window
        return [{"type": "cut_in_claim", "seat": seat, "card": state.discard[-1],
                 "next": state.turn}]

    # -- the end of a hand and of the match ----------------------------------------------

    def score(self, rules: Rules, end: scoring.HandEnd) -> scoring.HandScore:
        """DUMMY-SCORE: the player who went out 0, everyone else their own count."""
        counts: list[scoring.Number] = [sum(dummy_count(c) for c in hand) for hand in end.hands]
        if end.went_out is not None:
            counts[end.went_out] = 0
        return scoring.HandScore(counts, list(counts))

    def score_hand(self, turn: Turn, went_out: int | None) -> scoring.HandScore:
        """Score the hand, and move on each seat that laid down its contract in it
        (DUMMY-CONTRACTS; the others repeat theirs). The record lists every seat's
        contract of the hand and whether it was made."""
        result = super().score_hand(turn, went_out)
        s = turn.state
        made = [{"number": s.var["contract"][seat], "made": s.melded[seat]}
                for seat in range(s.players_count)]
        for seat in range(s.players_count):
            if s.melded[seat]:
                s.var["completed"][seat] += 1
                s.var["contract"][seat] = min(s.var["contract"][seat] + 1, len(CONTRACTS))
        return replace(result, flags={**result.flags, "contracts": made})

    def match_winners(self, state: GameState, rules: Rules) -> list[int] | None:
        """DUMMY-END: after the hand in which someone completes contract N, the lowest
        total among those who completed all N; or after N deals, the lowest total."""
        end = rules.match_end or {"contracts": len(CONTRACTS)}
        if "deals" in end:
            return scoring.basic_winners(rules, state.totals, len(state.history),
                                         lowest_wins=True)
        done = [seat for seat, n in enumerate(state.var["completed"]) if n >= end["contracts"]]
        if not done:
            return None
        low = min(state.totals[seat] for seat in done)
        return [seat for seat in done if state.totals[seat] == low]


def public_facts(state: GameState) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """What the views show of a Dummy game: each seat's ``contract`` and the cut-in window
    (claims are made openly at the table)."""
    n = state.players_count
    var = state.var
    seats = [{**contract(var.get("contract", [1] * n)[seat]).public(),
              "down": state.melded[seat], "completed": var.get("completed", [0] * n)[seat],
              "cut_ins": var.get("cut_ins", [0] * n)[seat]} for seat in range(n)]
    window = var.get("cut_in") or {"open": False, "claims": []}
    return seats, {"open": bool(window["open"]), "claims": list(window["claims"])}
