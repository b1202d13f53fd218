"""The referee's state machine: ``apply(state, seat, move) -> (state, events)``.

:func:`apply` checks the move against every rule that applies and raises
:class:`~service.rules.errors.Violation` (code, rule id, detail) without touching the state;
a legal move yields a *new* state and the events it caused (hand ends, scores, the next
deal). The input state is never modified. The steps of a turn live in
:mod:`service.rules.variants.base`; what differs between variants in their modules
(:mod:`service.rules.variants`). When a move ends a hand the turn says so, and the engine
deals the next one here (:func:`next_hand`).

Events are plain dicts. Facts only some seats may see live under ``"private"``, keyed by
seat number as a string: ``views.redact_event`` keeps only the viewer's own part.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from random import Random
from typing import Any

from service.rules import fairness
from service.rules.cards import CardError, canonical, multiset
from service.rules.errors import N_, Code, Violation
from service.rules.melds import MeldShape
from service.rules.memo import ByIdentity
from service.rules.moves import (
    Abort,
    ClaimTimeout,
    CutIn,
    Discard,
    Draw,
    LayOff,
    MeldMove,
    Move,
    Resign,
    SwapJoker,
    TakeFromMeld,
)
from service.rules.rule_ids import RuleId
from service.rules.ruleset import Rules, Variant, resolve_rules
from service.rules.state import GameState
from service.rules.variants import find_variant, variant_rules
from service.rules.variants.base import Event, Turn, VariantRules

_SYSTEM_RANDOM = secrets.SystemRandom()


class SetupError(ValueError):
    """A game that cannot be created as asked: ``field`` names the offending input."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def meld_shape(variant: Variant, rules: Rules) -> MeldShape:
    """How melds look under ``variant`` with these knob values (one object for equal
    knob values)."""
    return variant_rules(variant.id).shape(rules)


def shape_of(state: GameState) -> MeldShape:
    """How melds look in the game ``state`` is of."""
    _variant, rules, vr = context(state)
    return vr.shape(rules)


_rules_of: ByIdentity[dict[str, Any], Rules] = ByIdentity(Rules.of)
"""``Rules.of`` of recent states' rule dicts (a state's ``rules`` dict is never changed once
the game is made; copies of a state share it)."""


def context(state: GameState) -> tuple[Variant, Rules, VariantRules]:
    variant = find_variant(state.variant)
    return variant, _rules_of(state.rules), variant_rules(variant.id)


# ---------------------------------------------------------------------------------------
# Creating a game and dealing


def new_game(variant_id: str, players: Sequence[str], rules: Mapping[str, Any] | None = None,
             dealer: int | None = None, deals: Sequence[Mapping[str, Any]] | None = None,
             rng: Random | None = None, *, first_deal: dict[str, Any] | None = None,
             now: int | None = None) -> tuple[GameState, list[Event]]:
    """A new game with hand 1 dealt; raise :class:`SetupError` or ``RulesError``.

    ``first_deal`` (internal form, stock top last) deals hand 1 as given without checks:
    the verifier replays revealed deals with it. ``now`` (Unix time, ms, the caller's
    store's clock) starts the first turn's clock in a game with knob ``clock`` (C-CLOCK);
    without it the turn has no deadline.
    """
    rng = rng or _SYSTEM_RANDOM
    try:
        variant = find_variant(variant_id)
    except KeyError as exc:  # no variant has that id
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
                      totals=[0] * n, arranged=bool(arranged), deals=arranged[1:],
                      out_of_match=[False] * n, started=False)
    events = deal_hand(state, variant, variant_rules(variant.id), rng,
                       first_deal or (arranged[0] if arranged else None))
    state.deadline = _deadline(Rules.of(values), now)
    if state.deadline is not None:
        state.clock_start = now
    return state, events


def _dealer_for_hand(n: int, first_dealer: int, hand_index: int) -> int:
    """The dealer of hand ``hand_index + 1`` while nobody has left the match."""
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


def next_hand(state: GameState, variant: Variant, vr: VariantRules, rng: Random
              ) -> list[Event]:
    """Deal the next hand of a match that goes on after the hand just ended (the dealer
    passes left, C-SEAT; an arranged deal is used if one is left and every seat is still
    in the match); the ``dealt`` event."""
    state.hand_number += 1
    state.dealer = vr.next_dealer(state)
    arranged = state.deals[0] if state.deals else None
    state.deals = state.deals[1:]
    if arranged is not None and any(
            out and hand for out, hand in zip(state.out_of_match, arranged["hands"],
                                              strict=True)):
        arranged = None  # arranged for a full table: with a seat out, shuffle
    return deal_hand(state, variant, vr, rng, arranged)


def deal_hand(state: GameState, variant: Variant, vr: VariantRules, rng: Random,
              arranged: dict[str, Any] | None) -> list[Event]:
    """Deal the current hand (C-DEAL) into ``state``; the ``dealt`` event."""
    n = state.players_count
    seats = [seat for seat in range(n) if not state.out_of_match[seat]]
    hands: list[list[str]]
    if arranged is not None:
        hands = [list(h) for h in arranged["hands"]]
        stock = list(arranged["stock"])
        discard = list(arranged["discard"])
    else:
        deck = variant.deck()
        rng.shuffle(deck)
        hands = [[] for _ in range(n)]
        order = sorted(seats, key=lambda seat: (seat - state.dealer - 1) % n)
        sizes = {seat: variant.hand_size(n, seat, state.dealer) for seat in seats}
        for round_ in range(max(sizes.values())):
            for seat in order:
                if round_ < sizes[seat]:
                    hands[seat].append(deck.pop())
        discard = [deck.pop()] if variant.upcard else []
        stock = deck
    state.hands, state.stock, state.discard = hands, stock, discard
    state.melds = []
    state.rebuilds = 0
    state.tabled = [False] * n
    state.melded = [False] * n
    state.reset_turn()
    vr.first_turn(state)
    is_arranged = arranged is not None and bool(arranged.get("arranged", True))
    commitment = fairness.commit(state, rng, arranged=is_arranged)
    return [{
        "type": "dealt", "hand_number": state.hand_number, "dealer": state.dealer,
        "first": state.turn, "upcard": discard[-1] if discard else None,
        "stock_count": len(stock), "hand_counts": [len(h) for h in hands],
        "commitment": commitment, "arranged": is_arranged,
        "private": {str(seat): {"hand": sorted(h)} for seat, h in enumerate(hands)},
    }]


# ---------------------------------------------------------------------------------------
# Applying a move


def apply(state: GameState, seat: int, move: Move, rng: Random | None = None,
          now: int | None = None) -> tuple[GameState, list[Event]]:
    """Check ``move`` by ``seat`` and apply it to a copy of ``state``.

    Raise :class:`Violation` when it is illegal (``state`` unchanged either way). ``rng``
    shuffles rebuilt stocks and new deals (default: ``secrets.SystemRandom``). ``now`` is
    the time of the move (Unix time, ms) as the caller's store tells it: a game with knob
    ``clock`` reads it to start a turn's clock and to judge a timeout claim (C-CLOCK); the
    engine never reads a clock itself.
    """
    variant, rules, vr = context(state)
    rng = rng or _SYSTEM_RANDOM
    if state.status == "aborted":
        raise Violation(Code.GAME_FINISHED, RuleId.C_ABORT, N_("the game was aborted"))
    if state.status != "playing":
        raise Violation(Code.GAME_FINISHED, variant.end_rule, N_("the match is over"))
    if not 0 <= seat < state.players_count:
        raise Violation(Code.NOT_YOUR_TURN, RuleId.C_SEAT, N_("no seat {seat} in this game"),
                        seat=seat)
    new = state.copy()
    if isinstance(move, Resign | Abort | ClaimTimeout):
        return new, _end_early(new, seat, move, rules, vr, now)
    if isinstance(move, CutIn):
        events = vr.cut_in(new, seat, rng)
        new.started = True
        return new, events
    if seat != state.turn:
        raise Violation(Code.NOT_YOUR_TURN, RuleId.C_TURN,
                        N_("it is seat {seat}'s turn ({name})"), seat=state.turn,
                        name=state.players[state.turn])
    turn = Turn(new, seat, variant, rules, vr, rng)
    if isinstance(move, Draw):
        turn.draw(move)
    elif isinstance(move, MeldMove):
        turn.meld(move)
    elif isinstance(move, LayOff):
        turn.lay_off(move)
    elif isinstance(move, Discard):
        turn.discard(move)
    elif isinstance(move, SwapJoker):
        turn.swap_joker(move)
    elif isinstance(move, TakeFromMeld):
        turn.take_from_meld(move)
    else:  # a move only some variants have (GIN: pass, knock, lay_out)
        vr.variant_move(turn, move)
    if turn.hand_over and new.status == "playing":
        turn.events.extend(next_hand(new, variant, vr, rng))
    new.started = True
    if rules.clock is not None:
        if new.status != "playing":
            new.deadline = None
        elif (new.turn, new.hand_number) != (state.turn, state.hand_number):
            new.deadline = _deadline(rules, now)  # a new turn starts: its clock (C-CLOCK)
    return new, turn.events


def _deadline(rules: Rules, now: int | None) -> int | None:
    """The deadline of a turn starting ``now`` (C-CLOCK); None without a clock or a time."""
    seconds = rules.turn_seconds
    if seconds is None or now is None:
        return None
    return now + seconds * 1000


def clock_expired(state: GameState, now: int | None) -> bool:
    """Whether the current turn's deadline has passed at ``now`` (C-CLOCK)."""
    return (state.status == "playing" and state.deadline is not None and now is not None
            and now >= state.deadline)


def _end_early(state: GameState, seat: int, move: Resign | Abort | ClaimTimeout,
               rules: Rules, vr: VariantRules, now: int | None) -> list[Event]:
    """End the match in ``state`` (a copy) before it is played out: an abort (C-ABORT), a
    resignation (C-RESIGN) or a claimed timeout (C-CLOCK). The hand in progress is not
    scored; its deal is revealed."""
    if isinstance(move, Abort):
        if state.started:
            raise Violation(Code.ABORT_TOO_LATE, RuleId.C_ABORT,
                            N_("a game can be aborted only before its first move; resign "
                               "instead"))
        events: list[Event] = [{"type": "abort", "seat": seat}]
        _finish(state, "aborted", {"reason": "aborted", "seat": seat}, [], events)
        return events
    if state.out_of_match and state.out_of_match[seat]:
        raise Violation(Code.OUT_OF_MATCH, RuleId.R51_END,
                        N_("seat {seat} is out of the match already"), seat=seat)
    if isinstance(move, Resign):
        loser = seat
        events = [{"type": "resign", "seat": seat}]
        reason = "resigned"
    else:
        if rules.clock is None:
            raise Violation(Code.NO_CLOCK, RuleId.C_CLOCK,
                            N_("this game has no clock (knob clock): there is no timeout "
                               "to claim"))
        loser = state.turn
        if seat == loser:
            raise Violation(Code.OWN_TIMEOUT, RuleId.C_CLOCK,
                            N_("it is your own turn: another seat may claim your timeout"))
        if not clock_expired(state, now):
            raise Violation(Code.CLOCK_NOT_EXPIRED, RuleId.C_CLOCK,
                            N_("seat {seat}'s turn has time left"), seat=loser)
        events = [{"type": "claim_timeout", "seat": seat, "late": loser}]
        reason = "timeout"
    winners = vr.winners_without(state, rules, loser)
    _finish(state, "finished", {"reason": reason, "seat": loser}, winners, events)
    return events


def _finish(state: GameState, status: str, end: dict[str, Any], winners: list[int],
            events: list[Event]) -> None:
    state.status, state.end, state.winners = status, end, winners
    state.phase = "over"
    state.deadline = None
    state.started = True
    revealed = fairness.reveal(state)
    if revealed is not None:
        events.append(revealed)
    if status == "finished":
        events.append({"type": "game_end", "winners": winners, "totals": list(state.totals),
                       "end": dict(end)})
