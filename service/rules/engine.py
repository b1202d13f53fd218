"""The referee's state machine: ``apply(state, seat, move) -> (state, events)``.

:func:`apply` checks the move against every rule that applies and raises
:class:`~service.rules.errors.Violation` (code, rule id, detail) without touching the state;
a legal move yields a *new* state and the events it caused (hand ends, scores, the next
deal). The input state is never modified.

Events are plain dicts. Facts only some seats may see live under ``"private"``, keyed by
seat number as a string: ``views.redact_event`` keeps only the viewer's own part.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from random import Random
from typing import Any

from service.rules import scoring
from service.rules.cards import CardError, canonical, contains, multiset, remove
from service.rules.errors import Code, Reason, Violation
from service.rules.melds import (
    Meld,
    MeldError,
    MeldShape,
    Piece,
    check_meld,
    extend_meld,
    meld_from_table,
)
from service.rules.moves import (
    CutIn,
    Discard,
    Draw,
    LayOff,
    MeldMove,
    Move,
    SwapJoker,
    TakeFromMeld,
)
from service.rules.ruleset import Rules, Variant, find_variant, resolve_rules
from service.rules.state import GameState, TableMeld

Event = dict[str, Any]

_SYSTEM_RANDOM = secrets.SystemRandom()


class SetupError(ValueError):
    """A game that cannot be created as asked: ``field`` names the offending input."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


# ---------------------------------------------------------------------------------------
# Variant data the engine reads


def meld_shape(variant: Variant, rules: Rules) -> MeldShape:
    """How melds look under ``variant`` with these knob values."""
    return MeldShape(
        is_wild=variant.is_wild,
        ace=rules.ace,
        set_max=variant.set_max,
        set_distinct_suits=variant.set_distinct_suits,
        run_same_suit=variant.run_same_suit,
        max_wilds=None,
        flexible_twos=variant.wild_twos,
        meld_value=scoring.meld_value_function(variant, rules),
        set_rule=f"{variant.rule_prefix}-SET",
        run_rule="C-RUN",
    )


def _context(state: GameState) -> tuple[Variant, Rules, MeldShape]:
    variant = find_variant(state.variant)
    rules = Rules.of(state.rules)
    return variant, rules, meld_shape(variant, rules)


# ---------------------------------------------------------------------------------------
# Creating a game and dealing


def new_game(variant_id: str, players: Sequence[str], rules: Mapping[str, Any] | None = None,
             dealer: int | None = None, deals: Sequence[Mapping[str, Any]] | None = None,
             rng: Random | None = None) -> tuple[GameState, list[Event]]:
    """A new game with hand 1 dealt; raise :class:`SetupError` or ``RulesError``."""
    rng = rng or _SYSTEM_RANDOM
    try:
        variant = find_variant(variant_id)
    except KeyError as exc:
        raise SetupError("variant", str(exc.args[0])) from None
    n = len(players)
    if not variant.min_players <= n <= variant.max_players:
        raise SetupError("players", f"{variant.name} is for {variant.min_players} to "
                                    f"{variant.max_players} players, got {n}")
    values = resolve_rules(variant, rules)
    if dealer is None:
        dealer = rng.randrange(n)
    elif not 0 <= dealer < n:
        raise SetupError("dealer", f"must be a seat from 0 to {n - 1}")
    arranged = [normalize_deal(variant, n, dealer, i, d) for i, d in enumerate(deals or [])]
    state = GameState(variant=variant.id, rules=values, players=list(players), dealer=dealer,
                      totals=[0] * n, arranged=bool(arranged), deals=arranged[1:])
    events = _deal(state, variant, rng, arranged[0] if arranged else None)
    return state, events


def _dealer_for_hand(n: int, first_dealer: int, hand_index: int) -> int:
    return (first_dealer + hand_index) % n


def normalize_deal(variant: Variant, n: int, first_dealer: int, index: int,
                   deal: Mapping[str, Any]) -> dict[str, Any]:
    """Check an arranged deal for hand ``index + 1`` and return it with canonical codes.

    It must use exactly the variant's deck with the hand sizes the variant deals (C-DECK,
    the variant's -DEAL rule); ``stock`` is listed top first, ``discard`` bottom first.
    """
    where = f"deals.{index}"
    dealer = _dealer_for_hand(n, first_dealer, index)
    hands_in = deal.get("hands")
    if not isinstance(hands_in, list) or len(hands_in) != n:
        raise SetupError(f"{where}.hands", f"one list of cards per player ({n}) is required")
    out: dict[str, Any] = {"hands": [], "stock": [], "discard": []}
    for seat, hand in enumerate(hands_in):
        want = variant.hand_size(n, seat, dealer)
        cards = _codes(hand, f"{where}.hands.{seat}")
        if len(cards) != want:
            raise SetupError(f"{where}.hands.{seat}",
                             f"seat {seat} is dealt {want} cards in hand {index + 1}, "
                             f"got {len(cards)}")
        out["hands"].append(cards)
    for pile in ("stock", "discard"):
        out[pile] = _codes(deal.get(pile, []), f"{where}.{pile}")
    if variant.upcard and not out["discard"]:
        raise SetupError(f"{where}.discard", f"{variant.name} starts with an upcard: the "
                                             "discard pile needs at least one card")
    used = multiset([c for h in out["hands"] for c in h] + out["stock"] + out["discard"])
    deck = multiset(variant.deck())
    extra = used - deck
    missing = deck - used
    if extra or missing:
        parts = []
        if extra:
            parts.append("not in the deck or too many copies: "
                         + ", ".join(sorted(extra.elements())))
        if missing:
            parts.append("missing: " + ", ".join(sorted(missing.elements())))
        raise SetupError(where, f"must use exactly the {len(variant.deck())}-card deck; "
                                + "; ".join(parts))
    out["stock"] = list(reversed(out["stock"]))  # stored with the top last
    return out


def _codes(value: Any, field: str) -> list[str]:
    if not isinstance(value, list):
        raise SetupError(field, "a list of card codes is required")
    out = []
    for i, code in enumerate(value):
        if not isinstance(code, str):
            raise SetupError(f"{field}.{i}", "a card code string is required")
        try:
            out.append(canonical(code))
        except CardError as exc:
            raise SetupError(f"{field}.{i}", str(exc)) from None
    return out


def _deal(state: GameState, variant: Variant, rng: Random,
          arranged: dict[str, Any] | None) -> list[Event]:
    """Deal the current hand (C-DEAL) into ``state``; the ``dealt`` event."""
    n = state.players_count
    if arranged is not None:
        hands = [list(h) for h in arranged["hands"]]
        stock = list(arranged["stock"])
        discard = list(arranged["discard"])
    else:
        deck = variant.deck()
        rng.shuffle(deck)
        hands = [[] for _ in range(n)]
        order = [(state.dealer + 1 + i) % n for i in range(n)]
        sizes = {seat: variant.hand_size(n, seat, state.dealer) for seat in range(n)}
        for round_ in range(max(sizes.values())):
            for seat in order:
                if round_ < sizes[seat]:
                    hands[seat].append(deck.pop())
        discard = [deck.pop()] if variant.upcard else []
        stock = deck
    state.hands, state.stock, state.discard = hands, stock, discard
    state.melds = []
    state.turn = (state.dealer + 1) % n
    state.phase = "draw"
    state.rebuilds = 0
    state.tabled = [False] * n
    state.melded = [False] * n
    _reset_turn(state)
    return [{
        "type": "dealt", "hand_number": state.hand_number, "dealer": state.dealer,
        "first": state.turn, "upcard": discard[-1] if discard else None,
        "stock_count": len(stock), "hand_counts": [len(h) for h in hands],
        "private": {str(seat): {"hand": sorted(h)} for seat, h in enumerate(hands)},
    }]


def _reset_turn(state: GameState) -> None:
    state.taken = None
    state.taken_had_copy = False
    state.turn_melds = 0
    state.turn_tabled = False


# ---------------------------------------------------------------------------------------
# Applying a move


def apply(state: GameState, seat: int, move: Move,
          rng: Random | None = None) -> tuple[GameState, list[Event]]:
    """Check ``move`` by ``seat`` and apply it to a copy of ``state``.

    Raise :class:`Violation` when it is illegal (``state`` unchanged either way). ``rng``
    shuffles rebuilt stocks and new deals (default: ``secrets.SystemRandom``).
    """
    variant, rules, shape = _context(state)
    if state.status != "playing":
        raise Violation(Code.GAME_FINISHED, f"{variant.rule_prefix}-END",
                        "the match is over")
    if not 0 <= seat < state.players_count:
        raise Violation(Code.NOT_YOUR_TURN, "C-SEAT", f"no seat {seat} in this game")
    if isinstance(move, CutIn):
        raise Violation(Code.CUT_IN_NOT_ALLOWED, "DUMMY-CUTIN",
                        f"{variant.name} has no cut-ins")
    if seat != state.turn:
        raise Violation(Code.NOT_YOUR_TURN, "C-TURN",
                        f"it is seat {state.turn}'s turn ({state.players[state.turn]})")
    new = state.copy()
    ctx = _Turn(new, seat, variant, rules, shape, rng or _SYSTEM_RANDOM)
    if isinstance(move, Draw):
        ctx.draw(move)
    elif isinstance(move, MeldMove):
        ctx.meld(move)
    elif isinstance(move, LayOff):
        ctx.lay_off(move)
    elif isinstance(move, Discard):
        ctx.discard(move)
    elif isinstance(move, SwapJoker | TakeFromMeld):
        kind = "swap_joker" if isinstance(move, SwapJoker) else "take_from_meld"
        rule = "R51-SWAP" if isinstance(move, SwapJoker) else "R51-TAKE"
        raise Violation(Code.SWAP_NOT_ALLOWED if isinstance(move, SwapJoker)
                        else Code.INVALID_MELD, rule, f"{variant.name} has no {kind} move")
    return new, ctx.events


@dataclass
class _Turn:
    state: GameState
    seat: int
    variant: Variant
    rules: Rules
    shape: MeldShape
    rng: Random

    def __post_init__(self) -> None:
        self.events: list[Event] = []

    @property
    def hand(self) -> list[str]:
        return self.state.hands[self.seat]

    # -- checks ------------------------------------------------------------------------

    def _phase(self, wanted: str, what: str) -> None:
        if self.state.phase != wanted:
            now = "draw first" if self.state.phase == "draw" else "you have already drawn"
            raise Violation(Code.WRONG_PHASE, "C-TURN", f"cannot {what} now: {now}")

    def _holds(self, cards: Sequence[str]) -> None:
        missing = contains(self.hand, cards)
        if missing:
            raise Violation(Code.CARD_NOT_IN_HAND, "C-TURN",
                            f"not in your hand: {', '.join(missing)}")

    def _check_leaves(self, used: Sequence[str], rule: str) -> None:
        """A meld or lay-off must leave a hand that can still end the turn."""
        left = remove(self.hand, used)
        if not left and self.rules.must_discard_to_go_out:
            raise Violation(Code.MUST_DISCARD_TO_GO_OUT, rule,
                            "this would leave no card to discard; keep one to go out")
        taken = self.state.taken
        if left == [taken] and not self.state.taken_had_copy:
            raise Violation(Code.DISCARD_TAKEN_CARD, "C-DISCARD-BACK",
                            f"this would leave only {taken}, taken from the discard pile this "
                            "turn, which may not be discarded: put it on the table too or "
                            "keep another card")

    # -- moves ---------------------------------------------------------------------------

    def draw(self, move: Draw) -> None:
        s = self.state
        self._phase("draw", "draw")
        if move.source == "discard":
            if not s.discard:
                raise Violation(Code.EMPTY_PILE, "C-TURN", "the discard pile is empty")
            card = s.discard.pop()
            s.taken, s.taken_had_copy = card, card in self.hand
            self.hand.append(card)
            s.phase = "play"
            self.events.append({"type": "draw", "seat": self.seat, "source": "discard",
                                "card": card})
            return
        if not s.stock and not self._rebuild_stock():
            return  # the hand ended with nobody out
        card = s.stock.pop()
        self.hand.append(card)
        s.phase = "play"
        self.events.append({"type": "draw", "seat": self.seat, "source": "stock",
                            "private": {str(self.seat): {"card": card}}})

    def _rebuild_stock(self) -> bool:
        """C-STOCK: rebuild the empty stock, or end the hand; False when it ended."""
        s, policy, limit = self.state, self.rules.stock_exhausted, self.rules.max_stock_rebuilds
        if policy == "end_hand" or (limit is not None and s.rebuilds >= limit):
            self._end_hand(None, "stock_exhausted")
            return False
        if policy == "turn_over":
            s.stock, s.discard = list(reversed(s.discard)), []
        else:
            rest, s.discard = s.discard[:-1], s.discard[-1:]
            self.rng.shuffle(rest)
            s.stock = rest
        if not s.stock:
            self._end_hand(None, "stock_exhausted")
            return False
        s.rebuilds += 1
        self.events.append({"type": "stock_rebuilt", "policy": policy,
                            "rebuilds": s.rebuilds, "stock_count": len(s.stock),
                            "discard_count": len(s.discard)})
        return True

    def meld(self, move: MeldMove) -> None:
        s = self.state
        self._phase("play", "meld")
        self._holds([p.card for m in move.melds for p in m])
        limit = self.rules.melds_limit
        if limit is not None and s.turn_melds + len(move.melds) > limit:
            raise Violation(Code.MELD_LIMIT, "BASIC-MELDS-PER-TURN",
                            f"at most {limit} new meld(s) per turn")
        readings = self._readings(move.melds)
        self._check_leaves([p.card for m in move.melds for p in m],
                           f"{self.variant.rule_prefix}-OUT")
        placed = []
        for reading in readings:
            s.meld_seq += 1
            table = TableMeld(f"m{s.meld_seq}", self.seat, reading.kind, list(reading.cards),
                              list(reading.idents), reading.start)
            s.melds.append(table)
            s.hands[self.seat] = remove(self.hand, reading.cards)
            placed.append(_meld_event(table))
        s.turn_melds += len(readings)
        s.turn_tabled = True
        s.melded[self.seat] = True
        self.events.append({"type": "meld", "seat": self.seat, "melds": placed})
        self._out_if_empty()

    def _readings(self, melds: Sequence[Sequence[Piece]]) -> list[Meld]:
        readings: list[Meld] = []
        reasons: list[Reason] = []
        for i, pieces in enumerate(melds):
            try:
                readings.append(check_meld(pieces, self.shape))
            except MeldError as exc:
                prefix = f"meld {i + 1} ({' '.join(p.card for p in pieces)}): " \
                    if len(melds) > 1 else ""
                reasons.extend(Reason(r.code, r.rule, prefix + r.detail) for r in exc.reasons)
        if reasons:
            raise Violation.of(reasons)
        return readings

    def lay_off(self, move: LayOff) -> None:
        s = self.state
        self._phase("play", "lay off")
        target = s.meld(move.meld_id)
        if target is None:
            raise Violation(Code.UNKNOWN_MELD, "C-LAYOFF", f"no meld {move.meld_id!r} on the "
                            f"table ({', '.join(m.id for m in s.melds) or 'none yet'})")
        self._holds([p.card for p in move.cards])
        if self.rules.lay_off_requires_own_meld and not s.melded[self.seat]:
            raise Violation(Code.INVALID_LAY_OFF, "BASIC-LAYOFF",
                            "you may lay off only after making a meld of your own this hand")
        current = meld_from_table(target.kind, target.cards, target.idents, target.start,
                                  self.shape)
        try:
            extended = extend_meld(current, move.cards, self.shape, move.end)
        except MeldError as exc:
            raise Violation.of(exc.reasons) from None
        self._check_leaves([p.card for p in move.cards], f"{self.variant.rule_prefix}-OUT")
        target.kind, target.start = extended.kind, extended.start
        target.cards, target.idents = list(extended.cards), list(extended.idents)
        s.hands[self.seat] = remove(self.hand, [p.card for p in move.cards])
        s.turn_tabled = True
        self.events.append({"type": "lay_off", "seat": self.seat, "meld_id": target.id,
                            "cards": [p.card for p in move.cards],
                            "meld": _meld_event(target)})
        self._out_if_empty()

    def discard(self, move: Discard) -> None:
        s = self.state
        self._phase("play", "discard")
        self._holds([move.card])
        if move.card == s.taken and not s.taken_had_copy:
            raise Violation(Code.DISCARD_TAKEN_CARD, "C-DISCARD-BACK",
                            f"{move.card} was just taken from the discard pile")
        self.hand.remove(move.card)
        s.discard.append(move.card)
        self.events.append({"type": "discard", "seat": self.seat, "card": move.card})
        if self._out_if_empty():
            return
        s.tabled[self.seat] = s.tabled[self.seat] or s.turn_tabled
        s.turn = (self.seat + 1) % s.players_count
        s.phase = "draw"
        _reset_turn(s)

    # -- hand end ------------------------------------------------------------------------

    def _out_if_empty(self) -> bool:
        if self.hand:
            return False
        self._end_hand(self.seat, "out")
        return True

    def _end_hand(self, went_out: int | None, reason: str) -> None:
        s = self.state
        result = scoring.score_hand(
            self.variant, self.rules, s.hands, went_out,
            all_at_once=went_out is not None and not s.tabled[went_out])
        record = {"hand_number": s.hand_number, "went_out": went_out, "reason": reason,
                  "counts": result.counts, "scores": result.scores,
                  "going_rummy": result.going_rummy}
        s.history.append(record)
        s.totals = [scoring.tidy(t + d) for t, d in zip(s.totals, result.scores, strict=True)]
        self.events.append({"type": "hand_end", **record, "totals": list(s.totals)})
        winners = scoring.match_winners(self.variant, self.rules, s.totals, len(s.history))
        if winners is not None:
            s.status, s.winners = "finished", winners
            s.phase = "over"
            self.events.append({"type": "game_end", "winners": winners,
                                "totals": list(s.totals)})
            return
        s.hand_number += 1
        s.dealer = (s.dealer + 1) % s.players_count
        arranged = s.deals[0] if s.deals else None
        s.deals = s.deals[1:]
        self.events.extend(_deal(s, self.variant, self.rng, arranged))


def _meld_event(m: TableMeld) -> dict[str, Any]:
    return {"meld_id": m.id, "owner": m.owner, "kind": m.kind, "cards": list(m.cards),
            "wilds": m.wilds()}
