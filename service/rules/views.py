"""What each party may see of a game (API.md "Views").

The public view holds no hidden card; a seat view adds that seat's own hand. Events carry
hidden facts under ``"private"`` (keyed by seat); :func:`redact_event` keeps the viewer's.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from service.rules import fairness
from service.rules.cards import JOKER, standard_deck
from service.rules.state import GameState
from service.rules.variants import dummy, gin

PUBLIC = None
"""The viewer of the public view and the public log."""


def rfc3339(ms: int) -> str:
    """A Unix time in ms as RFC 3339, UTC, to the millisecond (``2026-12-04T02:05:49.120Z``)."""
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _turn(state: GameState, now: int | None) -> dict[str, Any] | None:
    if state.status != "playing":
        return None
    turn: dict[str, Any] = {"seat": state.turn, "phase": state.phase}
    if state.rules.get("clock") is not None:  # C-CLOCK
        deadline = state.deadline
        turn["deadline"] = None if deadline is None else rfc3339(deadline)
        turn["expired"] = deadline is not None and now is not None and now >= deadline
    return turn


def public_view(state: GameState, game_id: str, version: int,
                now: int | None = None) -> dict[str, Any]:
    """Everything anyone may see. ``now`` (Unix time, ms, the store's clock) is shown as
    ``server_time`` in a game with a clock, and tells whether the turn's deadline has
    passed (C-CLOCK)."""
    view: dict[str, Any] = {
        "game_id": game_id,
        "variant": state.variant,
        "rules": state.rules,
        "status": state.status,
        "hand_number": state.hand_number,
        "dealer": state.dealer,
        "turn": _turn(state, now),
        "discard_only": state.status == "playing" and state.discard_only,
        "version": version,
        "stock_count": len(state.stock),
        "discard_top": state.discard[-1] if state.discard else None,
        "discard_count": len(state.discard),
        "seats": [{"seat": i, "name": name, "open": False, "hand_count": len(state.hands[i]),
                   "opened": state.melded[i], "total": state.totals[i],
                   "out_of_match": state.out_of_match[i]}
                  for i, name in enumerate(state.players)],
        "melds": [m.public() for m in state.melds],
        "hands_played": state.history,
        "winners": state.winners if state.status == "finished" else None,
        "end": state.end,
        "arranged": state.arranged,
        "deal_commitment": fairness.commitment(state),
    }
    if state.rules.get("clock") is not None and now is not None:
        view["server_time"] = rfc3339(now)
    if state.variant == "dummy":  # DUMMY-CONTRACTS, DUMMY-CUTIN
        contracts, view["cut_in"] = dummy.public_facts(state)
        for seat, facts in zip(view["seats"], contracts, strict=True):
            seat["contract"] = facts
    if state.variant == "gin":  # GIN-FIRST, GIN-KNOCK, GIN-WALL, GIN-LAYOFF
        view["gin"] = gin.public_facts(state)
    return view


def seat_view(state: GameState, game_id: str, version: int, seat: int,
              now: int | None = None) -> dict[str, Any]:
    """The public view plus ``seat``'s own hand (sorted) and the turn's facts for it."""
    view = public_view(state, game_id, version, now)
    view["seat"] = seat
    view["hand"] = sort_hand(state.hands[seat])
    view["taken_discard"] = state.taken if state.turn == seat else None
    return view


_ORDER = {r: i for i, r in enumerate("A23456789TJQK")}


def _hand_key(card: str) -> tuple[bool, int, int]:
    return (card == JOKER, "SHDC".find(card[1]) if card != JOKER else 9,
            _ORDER.get(card[0], 99))


_HAND_ORDER = {card: i for i, card in enumerate(sorted([*standard_deck(), JOKER],
                                                       key=_hand_key))}
"""Each card code's place in a sorted hand (every seat view sorts one)."""


def sort_hand(cards: list[str]) -> list[str]:
    """A hand as players hold it: by suit, then rank; jokers last."""
    try:
        return sorted(cards, key=_HAND_ORDER.__getitem__)
    except KeyError:  # a code outside the deck (no dealt hand holds one)
        return sorted(cards, key=_hand_key)


def redact_event(event: dict[str, Any], viewer: int | None) -> dict[str, Any]:
    """``event`` as ``viewer`` (a seat, or :data:`PUBLIC`) may see it."""
    private = event.get("private")
    if private is None:
        return event
    out = {k: v for k, v in event.items() if k != "private"}
    if viewer is not None:
        out.update(private.get(str(viewer), {}))
    return out


DRY_RUN_HAND_END = ("type", "hand_number", "went_out", "reason")
"""What a dry run shows of a ``hand_end``: that the hand would end, and why. Its counts,
scores and totals depend on the other seats' hidden hands."""


def dry_run_answer(before: GameState, after: GameState, events: list[dict[str, Any]],
                   game_id: str, version: int, seat: int, now: int | None = None
                   ) -> dict[str, Any]:
    """The answer to a dry run of ``seat``'s move (``before`` at ``version`` → ``after``,
    with ``events``): only what ``seat`` may know before making it.

    Every event is marked ``"dry_run": true`` and shown as the public sees it: a move's
    private facts are all cards from the stock or a new deal (a card drawn, penalty cards,
    cut-in cards, the next hand), which nobody has seen. The view is ``seat``'s view after
    the move without those cards in ``hand`` (the seat's ``hand_count`` counts them). A move
    that ends the hand shows its events up to ``hand_end`` only, that one reduced to
    :data:`DRY_RUN_HAND_END`, and the view ``seat`` has now (``version``): the scores,
    whether the match ends and the next deal all depend on cards the seat cannot see.
    """
    shown: list[dict[str, Any]] = []
    unknown: list[str] = []
    for event in events:
        if event["type"] == "deal_revealed":
            continue  # the log's alone (a match ended early reveals the hand's deal)
        if event["type"] == "hand_end":
            shown.append({**{k: event[k] for k in DRY_RUN_HAND_END}, "dry_run": True})
            return {"game": seat_view(before, game_id, version, seat, now), "events": shown}
        for facts in (event.get("private") or {}).get(str(seat), {}).values():
            unknown.extend([facts] if isinstance(facts, str) else facts)
        shown.append({**redact_event(event, PUBLIC), "dry_run": True})
    view = seat_view(after, game_id, version + 1, seat, now)
    hand: list[str] = view["hand"]
    for card in unknown:
        if card in hand:
            hand.remove(card)
    return {"game": view, "events": shown}
