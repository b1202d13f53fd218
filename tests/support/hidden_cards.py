"""What the random-play tests of the rule modules check of every state they reach: every
card is somewhere (C-DECK), and no view shows a card its viewer may not see."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from service.rules import GameState, public_view, seat_view
from service.rules.cards import standard_deck
from service.rules.moves import MATCH_MOVES

CODES = frozenset(standard_deck(1, 1))
"""Every card code (the 52 cards and ``JK``)."""


def card_strings(value: Any) -> list[str]:
    """The card codes anywhere in a JSON-like value (keys included)."""
    if isinstance(value, str):
        return [value] if value in CODES else []
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in card_strings(k) + card_strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in card_strings(v)]
    return []


def check_views(state: GameState, version: int, deck: Sequence[str]) -> None:
    """C-DECK conservation of ``deck``, and views that show no hidden card: the public
    view only the table's melds and the discard's top, a seat's view those and its hand."""
    assert Counter(state.all_cards()) == Counter(deck)
    view = public_view(state, "g", version)
    assert [m["cards"] for m in view["melds"]] == [m.cards for m in state.melds]
    assert view["discard_top"] == (state.discard[-1] if state.discard else None)
    rest = {k: v for k, v in view.items() if k not in ("melds", "discard_top")}
    assert card_strings(rest) == [], "the public view shows a hidden card"
    for seat in range(state.players_count):
        mine = seat_view(state, "g", version, seat)
        assert Counter(mine["hand"]) == Counter(state.hands[seat])
        rest = {k: v for k, v in mine.items()
                if k not in ("melds", "discard_top", "hand", "taken_discard")}
        assert card_strings(rest) == []


def shown_cards(value: Any) -> list[str]:
    """The card codes a value shows, each time it shows one (a wild's ``as`` names what it
    stands for, not a card that is shown)."""
    if isinstance(value, dict):
        return [s for k, v in value.items() if k != "as"
                for s in card_strings(k) + shown_cards(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in shown_cards(v)]
    return card_strings(value)


HAND_END_SHOWN = {"type", "hand_number", "went_out", "reason", "dry_run"}


def check_dry_run(before: GameState, seat: int, answer: dict[str, Any], what: Any) -> None:
    """A dry run's answer to ``seat`` shows only what the seat could see before the move:
    no card that is not in its hand, in a meld or on the discard pile (and the view's hand
    no more copies of a card than those hold), no private part, no scores and nothing of a
    next hand; every event is marked ``dry_run``."""
    visible = Counter(before.hands[seat]) + Counter(before.discard) + Counter(
        c for m in before.melds for c in m.cards)
    leaked = set(shown_cards(answer)) - set(visible)
    assert not leaked, f"the dry run of {what} shows seat {seat} {sorted(leaked)}: {answer}"
    hand = Counter(answer["game"]["hand"])
    assert not hand - visible, f"the dry run of {what} shows seat {seat} {hand - visible}"
    events = answer["events"]
    assert events and all(e.get("dry_run") is True and "private" not in e for e in events)
    kinds = [e["type"] for e in events]
    early = kinds[0] in MATCH_MOVES  # the match ends now, whatever the hidden cards
    assert not {"dealt", "deal_revealed"} & set(kinds), (what, kinds)
    assert early or "game_end" not in kinds, (what, kinds)
    if "hand_end" in kinds:
        assert kinds.index("hand_end") == len(kinds) - 1
        assert set(events[-1]) == HAND_END_SHOWN, events[-1]
        mine = seat_view(before, answer["game"]["game_id"], answer["game"]["version"], seat)
        assert answer["game"] == mine, "a hand-ending dry run shows another view than now"
    else:
        game = answer["game"]
        assert game["hands_played"] == before.history
        assert [s["total"] for s in game["seats"]] == before.totals
        assert game["hand_number"] == before.hand_number
        assert game["status"] == "playing" or early


def expected_dry_run(real: dict[str, Any], public: list[dict[str, Any]],
                     before: dict[str, Any], seat: int) -> dict[str, Any]:
    """What the dry run of a move answers ``seat``, from what the same move answers when it is
    made right after it (``real``), its entry in the public log (``public``) and the seat's
    view before it (``before``): the public events, each marked ``dry_run``, up to a
    ``hand_end`` that keeps only whether and why the hand ends (and then the view before);
    else the real view without the cards the seat draws from the stock."""
    cut = next((i for i, e in enumerate(public) if e["type"] == "hand_end"), None)
    if cut is not None:
        end = {k: v for k, v in public[cut].items() if k in HAND_END_SHOWN}
        return _with_facts({"game": before, "events": [
            *({**e, "dry_run": True} for e in public[:cut]), {**end, "dry_run": True}]})
    hand = list(real["game"]["hand"])
    for event in real["events"]:
        if event.get("seat") == seat and (event["type"], event.get("source")) in (
                ("draw", "stock"), ("penalty", None)):
            for card in [event["card"]] if event["type"] == "draw" else event["cards"]:
                hand.remove(card)
    return _with_facts({"game": {**real["game"], "hand": hand},
                        "events": [{**e, "dry_run": True} for e in public]})


def _with_facts(answer: dict[str, Any]) -> dict[str, Any]:
    """A move answer's ``version``, ``status`` and ``turn``: its view's."""
    game = answer["game"]
    return {**answer, "version": game["version"], "status": game["status"],
            "turn": game["turn"]}


def check_waiting_view(view: dict[str, Any]) -> None:
    """A view of a game that waits for its players (an open seat) shows no card at all:
    nothing is dealt, no deal is committed, every hand is empty."""
    assert view["status"] in ("waiting", "aborted"), view["status"]
    assert card_strings(view) == [], "a waiting game's view shows a card"
    assert view["deal_commitment"] is None and view["stock_count"] == 0
    assert view.get("hand", []) == []
    assert all(s["hand_count"] == 0 for s in view["seats"])


def check_join_answer(answer: dict[str, Any], others: Sequence[Sequence[str]]) -> None:
    """A join answer holds the joiner's own token and view only: no other seat's token,
    and no card but its own hand and the discard's top (none while the game waits);
    ``others`` are the other seats' hands, none of which it may show."""
    assert set(answer) == {"game_id", "seat", "token", "game"}, sorted(answer)
    assert answer["token"].startswith(f"{answer['game_id']}.{answer['seat']}.")
    game = answer["game"]
    if game["status"] == "waiting":
        check_waiting_view(game)
        return
    rest = {k: v for k, v in game.items() if k not in ("hand", "discard_top", "melds")}
    assert card_strings(rest) == [], "a join answer shows a hidden card"
    assert len(game["hand"]) == game["seats"][answer["seat"]]["hand_count"]
    hidden = {c for hand in others for c in hand}
    assert not hidden & set(game["hand"]), "a join answer shows another seat's card"
