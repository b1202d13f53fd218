"""Every legal move of a seat, for bots (``GET /v1/games/{id}/legal-moves``).

Listed: a draw from either pile; each new meld the hand can form (every one, by card
multiset: :func:`~service.rules.search.candidate_melds`); each card laid off on each meld,
at each end of a run; each joker swap; each card taken from a meld with each new meld it
makes with the hand (R51-TAKE); each discard (and, when it leaves one card, the same with
the last-card announcement); a cut-in. A move made of several of these at once (several
melds, several cards laid off or taken in one move) is not listed.

Exact by construction: candidate moves are generated from the hand and the table, and each
is kept only if the engine itself accepts it (:func:`~service.rules.engine.apply` on the
state, nothing stored). Candidates that a cheap test proves the engine would refuse are not
asked about: a lay-off of a card whose rank cannot stand next to the run or in the set, or
whose suit the run or the set refuses, at an end of a run with no room left, of a joker
past the meld's wild limit, or that the variant refuses on that meld whatever the reading
(R51-JOKER-OPP); a joker swap for a card of another rank than the joker's; a single meld
worth less than the variant asks of one on its own (``VariantRules.least_meld_points``: the
opening before a Rummy 51 / Lebanese 14 player has opened), or of a size the variant never
lets a meld have on its own now (``VariantRules.meld_sizes``: in Dummy, only a contract of
one meld); a take when the variant does not list takes now (``VariantRules.lists_takes``:
R51-TAKE's knob, once opened). Each test is a necessary condition of the engine's own
check, so the list stays exactly what it accepts.

Compound meld actions (a Rummy 51 opening, a Dummy contract, a Wrotham all-at-once finish)
are too many to list: whether one exists is answered with one example, found by the meld
search (``VariantRules.compound_action``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from random import Random
from typing import Any

from service.rules.cards import JOKER
from service.rules.engine import apply, context
from service.rules.errors import Violation
from service.rules.melds import Meld, MeldShape, Piece, may_lay_off
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
    Take,
    TakeFromMeld,
    move_to_dict,
)
from service.rules.search import candidate_melds
from service.rules.state import GameState, TableMeld
from service.rules.variants.base import Turn


@dataclass
class LegalMoves:
    """The answer: legal moves (wire dicts), whether the list was cut, compound actions."""

    seat: int
    your_turn: bool
    moves: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False
    compound: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"seat": self.seat, "your_turn": self.your_turn, "moves": self.moves,
                "truncated": self.truncated, "compound": self.compound}


def _accepts(state: GameState, seat: int, move: Move, rng: Random | None = None,
             now: int | None = None) -> bool:
    try:
        apply(state, seat, move, rng or Random(0), now)
    except Violation:
        return False
    return True


def _target_allows(turn: Turn, target: TableMeld, card: str) -> bool:
    """False when the variant refuses ``card`` on ``target`` before any reading
    (``check_lay_off_target``, e.g. R51-JOKER-OPP)."""
    try:
        turn.vr.check_lay_off_target(turn, target, (Piece(card),))
    except Violation:
        return False
    return True


def _may_swap(target: TableMeld, card: str) -> bool:
    """False when no joker of ``target`` could be swapped for ``card``: a joker is given up
    only for a card of the rank it stands for (R51-SWAP, WROTHAM-SWAP)."""
    return any(c == JOKER and ident[0] == card[0]
               for c, ident in zip(target.cards, target.idents, strict=True))


def _takeable(target: TableMeld) -> list[str]:
    """The cards R51-TAKE lets a player take from ``target``: an end card of a run of 4 or
    more, a card of a 4-card set; never a joker (that is a swap)."""
    if target.kind == "run":
        cards = [target.cards[0], target.cards[-1]] if len(target.cards) >= 4 else []
    else:
        cards = list(target.cards) if len(target.cards) == 4 else []
    return sorted({c for c in cards if c != JOKER})


def _takes(state: GameState, hand: list[str], shape: MeldShape) -> Iterator[Move]:
    """R51-TAKE: one card taken from a meld and melded anew with cards of the hand, in
    every meld the hand and that card can form (taking several cards at once is a
    combination of these, not listed)."""
    with_card: dict[str, list[Meld]] = {}  # the same card may be taken from several melds
    for target in state.melds:
        for card in _takeable(target):
            if card not in with_card:
                with_card[card] = [m for m in candidate_melds([*hand, card], shape)
                                   if card in m.cards]
            for meld in with_card[card]:
                yield TakeFromMeld((Take(target.id, card),),
                                   ((*(Piece(c) for c in meld.cards),),))


def _hand_melds(state: GameState, seat: int) -> list[Meld] | None:
    """Every distinct meld the seat's hand can form of a size a meld may have on its own
    now (``VariantRules.meld_sizes``), when it may meld now (the play phase, not a
    discard-only turn): searched once per listing, for the meld candidates and the Rummy 51
    opening alike (a Dummy contract is searched for on its own sizes)."""
    if state.phase != "play" or state.discard_only:
        return None
    _variant, rules, vr = context(state)
    return candidate_melds(state.hands[seat], vr.shape(rules), vr.meld_sizes(state, seat))


def _candidates(state: GameState, seat: int, melds: list[Meld] | None) -> Iterator[Move]:
    """Moves worth asking the engine about, most useful first, without duplicates
    (``melds``: :func:`_hand_melds`), or the variant's own (GIN)."""
    own = context(state)[2].candidate_moves(state, seat)
    if own is not None:
        yield from own
        return
    if state.phase == "draw":
        yield Draw("stock")
        if state.discard:
            yield Draw("discard")
        return
    hand = state.hands[seat]
    distinct = sorted(set(hand))
    variant, rules, vr = context(state)
    shape = vr.shape(rules)
    if melds is not None:
        # the variant's refusals of a target, asked on the state itself: they only read it
        looking = Turn(state, seat, variant, rules, vr, Random(0))
        least = vr.least_meld_points(state, seat, rules)  # R51-OPEN before the opening
        for meld in melds:
            if meld.points >= least:
                yield MeldMove(((*(Piece(c) for c in meld.cards),),))
        for target in state.melds:
            for card in distinct:
                for end in ("low", "high") if target.kind == "run" else (None,):
                    if may_lay_off(target, card, end, shape) \
                            and _target_allows(looking, target, card):
                        yield LayOff(target.id, (Piece(card),), end)
        for target in state.melds:
            if JOKER in target.cards:
                for card in distinct:
                    if card != JOKER and _may_swap(target, card):
                        yield SwapJoker(target.id, card)
        if vr.lists_takes(state, seat, rules):
            yield from _takes(state, hand, shape)
    for card in distinct:
        yield Discard(card)
        if len(hand) == 2:
            yield Discard(card, announce=True)


def legal_moves(state: GameState, seat: int, limit: int = 500,
                now: int | None = None) -> LegalMoves:
    """Every legal move of ``seat`` now (at most ``limit``), and any compound action.
    ``now`` (Unix time, ms, the store's clock) tells whether a timeout may be claimed."""
    answer = LegalMoves(seat=seat, your_turn=state.status == "playing" and state.turn == seat)
    if state.status != "playing":
        return answer
    ending = [move_to_dict(m) for m in (Resign(), Abort(), ClaimTimeout())
              if _accepts(state, seat, m, now=now)]
    if not answer.your_turn:
        if _accepts(state, seat, CutIn()):
            answer.moves.append(move_to_dict(CutIn()))
        answer.moves.extend(ending)
        return answer
    seen: set[str] = set()
    results: list[dict[str, Any]] = []
    rng = Random(0)  # shuffles a candidate may cause (a new deal) do not change the verdict
    melds = _hand_melds(state, seat)
    for move in _candidates(state, seat, melds):
        wire = move_to_dict(move)
        text = repr(wire)
        if text in seen or not _accepts(state, seat, move, rng):
            continue
        if len(results) == limit:
            answer.truncated = True  # one more legal move than the list may hold
            break
        seen.add(text)
        results.append(wire)
    listed = _ordered(results) + ending
    if len(listed) > limit:
        answer.truncated = True
        listed = listed[:limit]
    answer.moves = listed
    answer.compound = compound_action(state, seat, melds)
    return answer


_ORDER = {"pass": 0, "draw": 0, "meld": 1, "knock": 1, "lay_off": 2, "lay_out": 2,
          "swap_joker": 3, "take_from_meld": 4, "discard": 5, "cut_in": 6, "resign": 7,
          "abort": 8, "claim_timeout": 9}


def _ordered(moves: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(moves, key=lambda m: _ORDER[m["type"]])


def compound_action(state: GameState, seat: int,
                    melds: list[Meld] | None = None) -> dict[str, Any] | None:
    """Whether the seat can make the variant's compound meld action now, with an example.

    Rummy 51 / Lebanese 14: the opening (R51-OPEN), holding the card taken from the discard
    pile when there is one; Dummy: the seat's contract (DUMMY-CONTRACTS); Wrotham's late
    deals: every card but one at once (WROTHAM-LATE). None where the variant has none or it
    does not apply now (already down, not the play phase). ``melds``: the hand's
    candidate melds for the Rummy 51 opening when the caller has them (:func:`_hand_melds`),
    else searched here (the Dummy contract and the Wrotham finish search for their own).
    """
    if state.phase != "play" or state.discard_only or state.turn != seat \
            or state.melded[seat]:
        return None
    variant, rules, vr = context(state)
    found = vr.compound_action(Turn(state.copy(), seat, variant, rules, vr, Random(0)), melds)
    if found is None:
        return None
    move = found.move
    example = move_to_dict(move) if move is not None and _accepts(state, seat, move) else None
    return {"kind": found.kind, "rule": found.rule.value, "exists": example is not None,
            "example": example}


__all__ = ["LegalMoves", "compound_action", "legal_moves"]
