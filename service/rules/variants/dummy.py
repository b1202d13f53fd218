"""Dummy rummy (docs/rules.md, DUMMY), a contract rummy: what differs from basic rummy.

Two decks and four jokers; every joker and every 2 is wild (a 2 may also stand as a natural
2); sets may repeat suits and have no size limit; runs mix suits unless ``run_same_suit``;
the ace is high or low, never both ends of a wrap (DUMMY-SET, DUMMY-RUN, DUMMY-WILDS).

Each seat works through the twelve :data:`CONTRACTS` in order. The contract is laid down
in one meld action made of exactly the contract's melds (sizes are minimums); after it the
player makes no new meld, draws from the stock only, and lays off from their next turn on
(DUMMY-CONTRACTS, DUMMY-DRAW, DUMMY-AFTER). Every turn ends with a discard, and a discard
that would fit a table meld is refused under ``playable_discard: forbid`` (DUMMY-DISCARD).

What the engine keeps for this variant is a :class:`DummyState` (``GameState.
variant_state``): each seat's contract, the contracts it has completed, its cut-ins this
hand, and the cut-in window. The stored document keeps them in ``var`` as ``"contract"``,
``"completed"``, ``"cut_ins"`` and ``"cut_in"`` (``{"open", "discarder", "claims"}``).

Choices where the rules leave one open (each also said where it is made):

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
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from random import Random
from typing import Any

from service.rules import scoring
from service.rules.cards import JOKER, rank_of
from service.rules.compound import Need, find_contract
from service.rules.errors import N_, Code, Message, Reason, Violation
from service.rules.melds import (
    Meld,
    MeldError,
    MeldShape,
    Piece,
    extend_meld,
    may_lay_off,
    meld_from_table,
    read_as,
)
from service.rules.moves import Discard
from service.rules.rule_ids import RuleId
from service.rules.ruleset import (
    CLOCK,
    MAX_STOCK_REBUILDS,
    STOCK_EXHAUSTED,
    Knob,
    Rules,
    Variant,
    knob_map,
)
from service.rules.state import GameState, VariantState
from service.rules.variants.base import Compound, Event, LaidOff, Turn, VariantRules

CUT_IN_CARDS = 3
"""Stock cards a granted cut-in gives on top of the discard (DUMMY-CUTIN)."""
MAX_CUT_INS = 2
"""Cut-ins a player may make in one hand (DUMMY-CUTIN)."""


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
# Knobs and the variant as data


RUN_SAME_SUIT = Knob("run_same_suit", "bool", RuleId.DUMMY_RUN,
                     "Runs must be of one suit (false: a run may mix suits).")
PLAYABLE_DISCARD = Knob(
    "playable_discard", "enum", RuleId.DUMMY_DISCARD,
    "forbid: a discard that would fit a meld on the table as a lay-off is refused, unless it "
    "is the last card or every card in hand would fit; allow.", ("forbid", "allow"))
CUT_INS = Knob(
    "cut_ins", "bool", RuleId.DUMMY_CUTIN,
    "A player out of turn may claim the top discard (with the top 3 stock cards) before the "
    "next player draws from the stock; the next player has priority.")
MATCH_END = Knob(
    "match_end", "match_end", RuleId.DUMMY_END,
    'After the hand in which someone completes contract N ({"contracts": 12}: the lowest '
    "total among those who completed them all wins), or after a number of deals (lowest "
    "total wins).", ("contracts", "deals"),
    limits={"contracts": (1, 12)})  # the twelve contracts

DUMMY = Variant(
    id="dummy", name="Dummy rummy", decks=2, jokers=4, wild_twos=True, min_players=2,
    max_players=4, upcard=True, set_max=None, set_distinct_suits=False, run_same_suit=False,
    deal_sizes=dict.fromkeys(range(2, 5), 13),
    knobs=knob_map(RUN_SAME_SUIT, PLAYABLE_DISCARD, CUT_INS, STOCK_EXHAUSTED,
                   MAX_STOCK_REBUILDS, MATCH_END, CLOCK),
    defaults={
        "run_same_suit": False,
        "playable_discard": "forbid",
        "cut_ins": False,
        "stock_exhausted": "shuffle",  # DUMMY-STOCK
        "max_stock_rebuilds": 3,
        "match_end": {"contracts": 12},
        "clock": None,
    },
    set_rule=RuleId.DUMMY_SET, run_rule=RuleId.DUMMY_RUN, wild_rule=RuleId.DUMMY_WILDS,
    out_rule=RuleId.DUMMY_DISCARD, end_rule=RuleId.DUMMY_END,
)
"""Dummy rummy: 108 cards, jokers and 2s wild, 2 to 4 players, 13 cards, an upcard
(DUMMY-PLAYERS). Every turn ends with a discard (DUMMY-DISCARD), so that rule is its
going-out rule."""


# ---------------------------------------------------------------------------------------
# The per-game facts


@dataclass
class CutInWindow:
    """DUMMY-CUTIN's window: open from a discard until the next player draws, with the
    seats that claimed the discard in it."""

    open: bool = False
    discarder: int | None = None
    claims: list[int] = field(default_factory=list)

    def to_wire(self) -> dict[str, Any]:
        return {"open": self.open, "discarder": self.discarder, "claims": list(self.claims)}


@dataclass
class DummyState(VariantState):
    """What Dummy keeps beside the common state: per seat, the contract it is on and how
    many it has completed (DUMMY-CONTRACTS), its cut-ins this hand, and the cut-in window
    (DUMMY-CUTIN)."""

    contract: list[int]
    """Each seat's current contract number (1..12)."""
    completed: list[int]
    """How many contracts each seat has completed."""
    cut_ins: list[int]
    """Cut-ins granted to each seat in this hand (at most :data:`MAX_CUT_INS`)."""
    cut_in: CutInWindow
    """The cut-in window."""

    @staticmethod
    def new(players: int) -> DummyState:
        """The facts of a match about to start: every seat on contract 1."""
        return DummyState([1] * players, [0] * players, [0] * players, CutInWindow())

    def to_wire(self) -> dict[str, Any]:
        return {"contract": list(self.contract), "completed": list(self.completed),
                "cut_ins": list(self.cut_ins), "cut_in": self.cut_in.to_wire()}

    def copy(self) -> DummyState:
        window = self.cut_in
        return DummyState(list(self.contract), list(self.completed), list(self.cut_ins),
                          CutInWindow(window.open, window.discarder, list(window.claims)))

    @staticmethod
    def read(var: dict[str, Any]) -> DummyState | None:
        """The facts a stored ``var`` holds (their keys taken out of it), or None."""
        if "contract" not in var:
            return None
        contracts = [int(n) for n in var.pop("contract")]
        players = len(contracts)
        window = var.pop("cut_in", None) or {}
        return DummyState(
            contracts, [int(n) for n in var.pop("completed", [0] * players)],
            [int(n) for n in var.pop("cut_ins", [0] * players)],
            CutInWindow(bool(window.get("open", False)), window.get("discarder"),
                        [int(seat) for seat in window.get("claims", [])]))


def dummy_state(state: GameState) -> DummyState:
    """The Dummy facts of ``state`` (a Dummy game's, made at its first deal)."""
    facts = state.variant_state
    if not isinstance(facts, DummyState):
        raise TypeError(f"a {state.variant} game has no Dummy facts")
    return facts


# ---------------------------------------------------------------------------------------
# Readings of melds as the contract needs


def fit_contract(melds: Sequence[Sequence[Piece]], shape: MeldShape, wanted: Contract,
                 best: Sequence[Meld] | None = None) -> list[Meld] | None:
    """Readings of ``melds`` that make up ``wanted``, one meld per need, or None (``best``:
    each meld's ``check_meld`` reading, when the caller has them already). Each meld is
    read as a kind the first time an order of the needs asks for it (a contract of sets
    never needs a run reading)."""
    if len(melds) != len(wanted.needs):
        return None
    bests: Sequence[Meld | None] = best if best is not None else [None] * len(melds)
    options: list[dict[str, Meld | None]] = [{} for _ in melds]

    def read(i: int, kind: str) -> Meld | None:
        known = options[i]
        if kind not in known:
            known[kind] = read_as(melds[i], shape, kind, bests[i])
        return known[kind]

    for order in itertools.permutations(wanted.needs):
        chosen: list[Meld] = []
        for i, need in enumerate(order):
            reading = read(i, need.kind)
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

    def read_state(self, var: dict[str, Any]) -> DummyState | None:
        return DummyState.read(var)

    # -- shape and values ----------------------------------------------------------------

    def meld_shape(self, rules: Rules) -> MeldShape:
        """DUMMY-SET, DUMMY-RUN (knob ``run_same_suit``; the ace high or low, never
        wrapping), DUMMY-WILDS (any number)."""
        return replace(super().meld_shape(rules), ace="high_or_low",
                       run_same_suit=rules.run_same_suit, max_wilds=None)

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
        return contract(dummy_state(state).contract[seat])

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
        facts = state.variant_state
        if not isinstance(facts, DummyState):
            facts = state.variant_state = DummyState.new(n)
        facts.cut_ins = [0] * n
        facts.cut_in = CutInWindow()

    # -- the turn ------------------------------------------------------------------------

    def check_draw(self, turn: Turn, source: str) -> None:
        """DUMMY-DRAW: after the contract, the stock only."""
        if source == "discard" and turn.opened:
            raise Violation(Code.DISCARD_DRAW_FORBIDDEN, RuleId.DUMMY_DRAW,
                            N_("you have laid down your contract this hand: draw from the "
                               "stock"))

    def before_draw(self, turn: Turn, source: str) -> None:
        """DUMMY-CUTIN: the next player's draw closes the window. Taking the discard voids
        the claims; a stock draw first grants the best-placed claim."""
        s = turn.state
        facts = dummy_state(s)
        if not facts.cut_in.open:
            return
        claims = list(facts.cut_in.claims)
        facts.cut_in = CutInWindow()
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
        facts.cut_ins[winner] += 1
        turn.events.append({"type": "cut_in", "seat": winner, "card": card,
                            "stock_cards": CUT_IN_CARDS, "cut_ins": facts.cut_ins[winner],
                            "private": {str(winner): {"cards": cards}}})
        others = [seat for seat in claims if seat != winner]
        if others:
            turn.events.append({"type": "cut_in_denied", "seats": others,
                                "reason": f"seat {winner} is before them in turn order"})

    def read_melds(self, turn: Turn, melds: Sequence[Sequence[Piece]]) -> list[Meld]:
        """DUMMY-CONTRACTS: the only meld action of a hand is the contract, all at once."""
        seat_contract = self.current(turn.state, turn.seat)
        if turn.opened:
            raise Violation(Code.CONTRACT_ALREADY_MET, RuleId.DUMMY_AFTER,
                            N_("you have laid down contract {number} this hand: no new melds; "
                               "lay off on the table's melds instead"),
                            number=seat_contract.number)
        best = turn.readings(melds)  # no reading filter in Dummy: check_meld's own readings
        fitted = fit_contract(melds, turn.shape, seat_contract, best)
        if fitted is None:
            count = len(seat_contract.needs)
            raise Violation(Code.CONTRACT_NOT_MET, RuleId.DUMMY_CONTRACTS,
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
            raise Violation(Code.INVALID_LAY_OFF, RuleId.DUMMY_AFTER,
                            N_("lay-offs come from the turn after your contract on"))
        used = sum(len(m.cards) for m in melds)
        if used >= len(turn.hand):
            raise Violation(Code.MUST_DISCARD_TO_GO_OUT, RuleId.DUMMY_DISCARD,
                            N_("this would leave no card to discard; every turn ends with one"))

    def check_lay_offs(self, turn: Turn, lay_offs: Sequence[LaidOff],
                       in_meld_action: bool = False) -> None:
        """DUMMY-AFTER: lay-offs, on anyone's melds, from the turn after the contract on."""
        s = turn.state
        if not turn.opened:
            raise Violation(Code.NOT_OPENED, RuleId.DUMMY_AFTER,
                            N_("lay down your contract ({contract}) first; lay-offs come "
                               "from the turn after it on"),
                            contract=Message(self.current(s, turn.seat).text))
        if not s.tabled[turn.seat]:
            raise Violation(Code.INVALID_LAY_OFF, RuleId.DUMMY_AFTER,
                            N_("you laid down your contract this turn: lay-offs come from "
                               "your next turn on"))
        used = sum(len(lo.pieces) for lo in lay_offs)
        if used >= len(turn.hand):
            raise Violation(Code.MUST_DISCARD_TO_GO_OUT, RuleId.DUMMY_DISCARD,
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
        raise Violation(Code.PLAYABLE_DISCARD, RuleId.DUMMY_DISCARD,
                        N_("{card} would fit {meld_id} as a lay-off, so it may not be "
                           "discarded while you hold a card that fits no meld (e.g. {spare})"),
                        card=move.card, meld_id=fits, spare=spare)

    def after_discard(self, turn: Turn, move: Discard) -> None:
        """DUMMY-CUTIN: a discard opens the cut-in window until the next player draws."""
        if turn.rules.cut_ins:
            dummy_state(turn.state).cut_in = CutInWindow(True, turn.seat, [])

    def cut_in(self, state: GameState, seat: int, rng: Random) -> list[Event]:
        """DUMMY-CUTIN: register ``seat``'s claim on the top discard (see the module's
        docstring: it is granted or voided by the next player's draw)."""
        del rng
        rules = Rules.of(state.rules)
        if not rules.cut_ins:
            raise Violation(Code.CUT_IN_NOT_ALLOWED, RuleId.DUMMY_CUTIN,
                            N_("cut-ins are not played in this game (knob cut_ins)"))
        facts = dummy_state(state)
        window = facts.cut_in
        reasons: list[Message] = []
        if state.phase != "draw" or not window.open:
            reasons.append(Message(N_("a cut-in is claimed after a discard, before the next "
                                      "player draws")))
        if seat == state.turn:
            reasons.append(Message(N_("you are next: take the discard by drawing it (you have "
                                      "priority)")))
        if seat == window.discarder:
            reasons.append(Message(N_("you discarded that card")))
        if state.melded[seat]:
            reasons.append(Message(N_("you have laid down your contract this hand")))
        if facts.cut_ins[seat] >= MAX_CUT_INS:
            reasons.append(Message(N_("you have made {count} cut-ins this hand already"),
                                   {"count": MAX_CUT_INS}))
        if seat in window.claims:
            reasons.append(Message(N_("you have already claimed this discard")))
        if window.open and len(state.stock) < CUT_IN_CARDS + 1:
            reasons.append(Message(N_("the stock holds {count} cards: a cut-in takes {takes} "
                                      "and leaves one for the next player"),
                                   {"count": len(state.stock), "takes": CUT_IN_CARDS}))
        if reasons:
            raise Violation.of([Reason(Code.CUT_IN_NOT_ALLOWED, RuleId.DUMMY_CUTIN, r)
                                for r in reasons])
        facts.cut_in = CutInWindow(window.open, window.discarder, [*window.claims, seat])
        return [{"type": "cut_in_claim", "seat": seat, "card": state.discard[-1],
                 "next": state.turn}]

    def compound_action(self, turn: Turn, melds: list[Meld] | None) -> Compound:
        """DUMMY-CONTRACTS: the seat's contract, found whole by the meld search."""
        needs = self.current(turn.state, turn.seat).needs
        return Compound("contract", RuleId.DUMMY_CONTRACTS,
                        find_contract(turn.hand, turn.shape, needs))

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
        facts = dummy_state(s)
        made = [{"number": facts.contract[seat], "made": s.melded[seat]}
                for seat in range(s.players_count)]
        for seat in range(s.players_count):
            if s.melded[seat]:
                facts.completed[seat] += 1
                facts.contract[seat] = min(facts.contract[seat] + 1, len(CONTRACTS))
        return replace(result, flags={**result.flags, "contracts": made})

    def lowest_wins(self, rules: Rules) -> bool:
        """Penalty scoring: the lowest total is the best."""
        return True

    def match_winners(self, state: GameState, rules: Rules) -> list[int] | None:
        """DUMMY-END: after the hand in which someone completes contract N, the lowest
        total among those who completed all N; or after N deals, the lowest total."""
        end = rules.match_end or {"contracts": len(CONTRACTS)}
        if "deals" in end:
            return scoring.basic_winners(rules, state.totals, len(state.history),
                                         lowest_wins=True)
        done = [seat for seat, n in enumerate(dummy_state(state).completed)
                if n >= end["contracts"]]
        if not done:
            return None
        low = min(state.totals[seat] for seat in done)
        return [seat for seat in done if state.totals[seat] == low]


def public_facts(state: GameState) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """What the views show of a Dummy game: each seat's ``contract`` and the cut-in window
    (claims are made openly at the table)."""
    n = state.players_count
    facts = state.variant_state
    if not isinstance(facts, DummyState):
        facts = DummyState.new(n)
    seats = [{**contract(facts.contract[seat]).public(), "down": state.melded[seat],
              "completed": facts.completed[seat], "cut_ins": facts.cut_ins[seat]}
             for seat in range(n)]
    return seats, {"open": facts.cut_in.open, "claims": list(facts.cut_in.claims)}


RULES: DummyRules = DummyRules(DUMMY)
"""Dummy rummy, as :func:`service.rules.variants.find_variant` finds it."""
