"""Whole Rummy 51 / Lebanese 14 hands over HTTP (API.md) with arranged 108-card deals.

Through the Flask test client on the real Redis: an opening with a declared joker, a joker
swap, dry rummies and the penalty scores of each way a hand ends (R51-SCORE, L14-DRY). The
views show ``opened`` per seat and what each wild stands for; and no response to anyone
ever shows a card of another seat's hand or of the stock (every response is checked).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient

from tests.support.basic_game import CreatedGame
from tests.support.rummy51_game import (
    L14,
    OPENER0,
    OPENER0_MELD,
    R51,
    SEAT0_OPEN,
    SEAT1_OPEN,
    WIN,
    WIN_1J,
    WIN_1J_MELD,
    WIN_MELD,
    arrange,
    junk,
)

CODES = {r + s for r in "A23456789TJQK" for s in "SHDC"} | {"JK"}


def card_strings(value: Any) -> Iterator[str]:
    """Every card code in a JSON value, except what wilds stand for (``as``), which names
    an identity, not a card."""
    if isinstance(value, str):
        if value in CODES:
            yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key != "as":
                yield from card_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from card_strings(item)


def wire_meld(text: str) -> list[dict[str, Any]]:
    """``"5D JK=6D 7D / KS KH KD"`` as the ``melds`` of a meld move."""
    out = []
    for part in text.split("/"):
        cards: list[Any] = []
        for token in part.split():
            card, _, as_ = token.partition("=")
            cards.append({"card": card, "as": as_} if as_ else card)
        out.append({"cards": cards})
    return out


def meld_move(text: str) -> dict[str, Any]:
    """A meld move from the engine tests' notation: ``meld A B C / D E F``."""
    assert text.startswith("meld ")
    return {"type": "meld", "melds": wire_meld(text[5:])}


class Table(CreatedGame):
    """A created game, its seat tokens, and a record of every response for the leak check.

    ``stock`` is the arranged stock (top first): while the stock is never rebuilt, the
    stock of version N is its last ``stock_count`` cards.
    """

    def __init__(self, client: FlaskClient, variant: str, deal: dict[str, Any],
                 rules: dict[str, Any] | None = None, players: int = 2) -> None:
        body = {"variant": variant, "players": ["Ana", "Bo", "Cy"][:players], "dealer": 0,
                "rules": {"match_end": {"deals": 1}, **(rules or {})}, "deals": [deal]}
        super().__init__(client, body)
        self.stock: list[str] = list(deal["stock"])
        self.public_cards: set[str] = set()  # every card ever on the table or discarded
        self.seen: list[tuple[int | None, Any]] = [(None, self.created["game"])]
        self.check_leaks()

    def public(self) -> dict[str, Any]:
        body = super().public()
        self.seen.append((None, body))
        return body

    def me(self, seat: int) -> dict[str, Any]:
        body = super().me(seat)
        assert body["seat"] == seat
        self.seen.append((seat, body))
        return body

    def ok(self, seat: int, move: dict[str, Any]) -> dict[str, Any]:
        """Apply a legal move; check 200 and the version; run the leak check."""
        answer = super().ok(seat, move)
        self.seen.append((seat, answer))
        for event in answer["events"]:
            if event["type"] == "discard" or (event["type"] == "draw"
                                              and event["source"] == "discard"):
                self.public_cards.add(event["card"])
        self.check_leaks()
        return answer

    def refused(self, seat: int, move: dict[str, Any], code: str, rule: str) -> dict[str, Any]:
        before = [self.public(), *(self.me(s) for s in range(len(self.tokens)))]
        resp = self.client.post(f"{self.path}/moves", json=move, headers=self.headers(seat))
        assert resp.status_code == 422, resp.get_data(as_text=True)
        assert resp.mimetype == "application/problem+json"
        problem: dict[str, Any] = resp.get_json()
        assert (problem["code"], problem["rule"]) == (code, rule), problem
        self.seen.append((seat, problem))
        after = [self.public(), *(self.me(s) for s in range(len(self.tokens)))]
        assert after == before, "a refused move changed a view"
        return problem

    def check_leaks(self) -> None:
        """No response so far showed its viewer a card of another hand or of the stock.

        Ground truth is the current hands (every seat's ``/me``) and stock; a card is
        fair to show when the viewer holds one or it has ever been public (on the table,
        on the discard pile). Hands only shrink into public places or grow from the stock
        and the discard pile, so checking all past responses against the current hidden
        cards is sound for the cards still hidden now.
        """
        public = self.public()
        for meld in public["melds"]:
            self.public_cards.update(meld["cards"])
        if public["discard_top"] is not None:
            self.public_cards.add(public["discard_top"])
        stock = self.stock[len(self.stock) - public["stock_count"]:]
        hands = [self.me(seat)["hand"] for seat in range(len(self.tokens))]
        for seat, hand in enumerate(hands):
            assert len(hand) == public["seats"][seat]["hand_count"]
        assert (sum(map(len, hands)) + len(stock) + public["discard_count"]
                + sum(len(m["cards"]) for m in public["melds"])) == 108
        for viewer, body in self.seen:
            hidden = set(stock).union(*(set(h) for s, h in enumerate(hands) if s != viewer))
            fair = self.public_cards | (set(hands[viewer]) if viewer is not None else set())
            shown = set(card_strings(body))
            leaked = shown & (hidden - fair)
            assert not leaked, f"viewer {viewer} was shown {sorted(leaked)}: {body}"
        self.seen.clear()


def seats_opened(view: dict[str, Any]) -> list[bool]:
    return [s["opened"] for s in view["seats"]]


def wilds(view: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {m["meld_id"]: m["wilds"] for m in view["melds"]}


def hand_end(answer: dict[str, Any]) -> dict[str, Any]:
    (end,) = [e for e in answer["events"] if e["type"] == "hand_end"]
    return end


# ---------------------------------------------------------------------------------------


def test_opening_swap_and_a_normal_finish(client: FlaskClient) -> None:
    """R51: seat 1 opens with a declared joker, seat 0 opens with an open-suit joker, seat 1
    swaps the run joker with 6D, melds it anew and goes out: seat 0 (opened) counts its
    2D 3D 2H 8D = 15 (R51-SCORE)."""
    deal = arrange(R51, [SEAT0_OPEN, SEAT1_OPEN[R51]], stock="2C 6S 9C")
    table = Table(client, R51, deal)
    start = table.me(0)
    assert (start["turn"], start["discard_only"]) == ({"seat": 0, "phase": "play"}, True)
    assert [s["hand_count"] for s in start["seats"]] == [14, 13]
    assert sorted(start["hand"]) == sorted(SEAT0_OPEN.split())
    table.ok(0, {"type": "discard", "card": "4C"})
    answer = table.ok(1, {"type": "draw", "source": "stock"})
    assert [e.get("card") for e in answer["events"]] == ["2C"]
    # the opening, with a joker declared as 6D
    answer = table.ok(1, meld_move("meld 9H TH JH QH / 5D JK=6D 7D / KS KH KD"))
    view = answer["game"]
    assert seats_opened(view) == [False, True]
    assert wilds(view) == {"m1": [], "m2": [{"index": 1, "card": "JK", "as": "6D"}], "m3": []}
    assert [m["cards"] for m in view["melds"]] == [
        ["9H", "TH", "JH", "QH"], ["5D", "JK", "7D"], ["KS", "KH", "KD"]]
    assert seats_opened(table.public()) == [False, True]
    table.ok(1, {"type": "discard", "card": "2C"})
    table.ok(0, {"type": "draw", "source": "stock"})
    view = table.ok(0, meld_move("meld TS JS QS / 5C 6C 7C / 9C 9H JK"))["game"]
    assert seats_opened(view) == [True, True]
    assert wilds(view)["m6"] == [{"index": 2, "card": "JK", "as": "9*"}]
    table.ok(0, {"type": "discard", "card": "6S"})
    table.ok(1, {"type": "draw", "source": "stock"})
    # R51-SWAP: 6D for the joker of m2; the joker must go back before the discard
    view = table.ok(1, {"type": "swap_joker", "meld_id": "m2", "card": "6D"})["game"]
    assert wilds(view)["m2"] == []
    assert view["melds"][1]["cards"] == ["5D", "6D", "7D"]
    assert sorted(view["hand"]) == ["9C", "9D", "9S", "JK"]
    table.refused(1, {"type": "discard", "card": "9C"}, "JOKER_NOT_USED", "R51-SWAP")
    view = table.ok(1, {"type": "meld", "melds": [{"cards": ["9S", "9D", "JK"]}]})["game"]
    assert wilds(view)["m7"] == [{"index": 2, "card": "JK", "as": "9*"}]
    answer = table.ok(1, {"type": "discard", "card": "9C"})
    end = hand_end(answer)
    assert (end["went_out"], end["counts"], end["scores"], end["all_at_once"], end["dry"]) == (
        1, [15, 0], [15, 0], False, False)
    final = table.public()
    assert (final["status"], final["winners"]) == ("finished", [1])
    assert [s["total"] for s in final["seats"]] == [15, 0]
    assert final["hands_played"][0]["scores"] == [15, 0]
    table.check_leaks()


@pytest.mark.parametrize(("variant", "move"), [
    pytest.param(v, move, id=f"R51-FIRST over HTTP: the dealer's first {move['type']} "
                             f"refused ({v})")
    for v in (R51, L14)
    for move in ({"type": "meld", "melds": [{"cards": ["2S", "5S", "8S"]}]},
                 {"type": "draw", "source": "stock"})
])
def test_first_action_is_a_discard_only(client: FlaskClient, variant: str,
                                        move: dict[str, Any]) -> None:
    table = Table(client, variant, arrange(variant, [junk(variant, dealer=True), None]))
    view = table.public()
    assert (view["discard_only"], view["turn"]) == (True, {"seat": 0, "phase": "play"})
    table.refused(0, move, "WRONG_PHASE", "R51-FIRST")
    view = table.ok(0, {"type": "discard", "card": "4C"})["game"]
    assert (view["discard_only"], view["turn"]) == (False, {"seat": 1, "phase": "draw"})


@pytest.mark.parametrize(("variant", "last", "hand", "meld", "scores", "jokers"), [
    pytest.param(R51, "QC", WIN[R51], WIN_MELD[R51], [200, 0], None,
                 id="R51-SCORE dry rummy over HTTP: 200"),
    pytest.param(R51, "JK", WIN[R51], WIN_MELD[R51], [400, 0], None,
                 id="R51-SCORE dry rummy ending on a joker over HTTP: 400"),
    pytest.param(L14, "QC", WIN[L14], WIN_MELD[L14], [200, 0], 0,
                 id="L14-DRY no joker over HTTP: 200"),
    pytest.param(L14, "QC", WIN_1J, WIN_1J_MELD, [150, 0], 1,
                 id="L14-DRY one joker over HTTP: 150"),
])
def test_dry_rummy(client: FlaskClient, variant: str, last: str, hand: str, meld: str,
                   scores: list[int], jokers: int | None) -> None:
    deal = arrange(variant, [junk(variant, dealer=True), hand], stock=last)
    table = Table(client, variant, deal)
    table.ok(0, {"type": "discard", "card": "4C"})
    table.ok(1, {"type": "draw", "source": "stock"})
    view = table.ok(1, meld_move(meld))["game"]
    assert seats_opened(view) == [False, True]
    if "JK" in meld:
        assert wilds(view)["m3"] == [{"index": 2, "card": "JK", "as": "K*"}]
    answer = table.ok(1, {"type": "discard", "card": last})
    end = hand_end(answer)
    assert (end["went_out"], end["all_at_once"], end["dry"], end["scores"]) == (
        1, True, True, scores)
    if variant == L14:
        assert end["jokers_used"] == jokers
    final = table.public()
    assert final["hands_played"][0]["dry"] is True
    assert [s["total"] for s in final["seats"]] == scores
    assert final["winners"] == [1]


@pytest.mark.parametrize(("last", "scores"), [
    pytest.param("QC", [92, 0], id="R51-SCORE all at once after seat 0 opened: 46 x 2"),
    pytest.param("JK", [184, 0], id="R51-SCORE all at once ending on a joker: 46 x 4"),
])
def test_all_at_once_not_dry(client: FlaskClient, last: str, scores: list[int]) -> None:
    deal = arrange(R51, [OPENER0, WIN[R51]], stock=f"2H 8S {last}")
    table = Table(client, R51, deal)
    table.ok(0, {"type": "discard", "card": "4C"})
    table.ok(1, {"type": "draw", "source": "stock"})
    table.ok(1, {"type": "discard", "card": "2H"})
    table.ok(0, {"type": "draw", "source": "stock"})
    view = table.ok(0, meld_move(OPENER0_MELD))["game"]
    assert seats_opened(view) == [True, False]
    table.ok(0, {"type": "discard", "card": "8S"})
    table.ok(1, {"type": "draw", "source": "stock"})
    table.ok(1, meld_move(WIN_MELD[R51]))
    end = hand_end(table.ok(1, {"type": "discard", "card": last}))
    assert (end["counts"], end["scores"], end["all_at_once"], end["dry"]) == (
        [46, 0], scores, True, False)


DOWN = "AS 2S 3S 4S 5S 6S 7H 8H 9H JD QD 7S 2D"
DOWN_MELD = "meld AS 2S 3S 4S 5S 6S / 7H 8H 9H / JD QD KD"


def _down_to_two(client: FlaskClient, stock: str) -> Table:
    """Seat 1 opened m1 AS-6S, m2 7H 8H 9H, m3 JD QD KD and holds 7S 2D."""
    table = Table(client, R51, arrange(R51, [junk(R51, dealer=True), DOWN], stock=stock))
    table.ok(0, {"type": "discard", "card": "4C"})
    table.ok(1, {"type": "draw", "source": "stock"})
    view = table.ok(1, meld_move(DOWN_MELD))["game"]
    assert sorted(view["hand"]) == ["2D", "7S"]
    return table


def test_last_card_not_announced_penalty_cards_seen_by_their_owner_only(
        client: FlaskClient) -> None:
    table = _down_to_two(client, "KD 5H 5D TH")
    answer = table.ok(1, {"type": "discard", "card": "2D"})
    assert sorted(answer["game"]["hand"]) == ["5D", "5H", "7S"]
    assert [e["type"] for e in answer["events"]] == ["discard", "penalty"]
    penalty = answer["events"][1]
    assert (penalty["rule"], penalty["count"], penalty["cards"]) == ("R51-LAST", 2,
                                                                     ["5H", "5D"])
    assert table.public()["seats"][1]["hand_count"] == 3
    table.ok(0, {"type": "draw", "source": "stock"})
    table.ok(0, {"type": "discard", "card": "TH"})


def test_last_card_announced_then_out_unopened_loser_100(client: FlaskClient) -> None:
    table = _down_to_two(client, "KD TH 8S")
    answer = table.ok(1, {"type": "discard", "card": "2D", "announce": True})
    assert answer["game"]["hand"] == ["7S"]
    assert answer["events"][1] == {"type": "last_card", "seat": 1, "announced_by": "player"}
    table.ok(0, {"type": "draw", "source": "stock"})
    table.ok(0, {"type": "discard", "card": "TH"})
    table.refused(1, {"type": "draw", "source": "discard"}, "DISCARD_DRAW_FORBIDDEN",
                  "R51-DRAW")
    table.ok(1, {"type": "draw", "source": "stock"})
    table.ok(1, {"type": "lay_off", "meld_id": "m1", "cards": ["7S"]})
    table.refused(1, {"type": "lay_off", "meld_id": "m1", "cards": ["8S"]},
                  "MUST_DISCARD_TO_GO_OUT", "R51-OUT")
    end = hand_end(table.ok(1, {"type": "discard", "card": "8S"}))
    assert (end["went_out"], end["counts"], end["scores"], end["all_at_once"]) == (
        1, [100, 0], [100, 0], False)
    final = table.public()
    assert seats_opened(final) == [False, True]
    assert [s["total"] for s in final["seats"]] == [100, 0]


def test_no_response_shows_a_hidden_card_in_a_three_player_hand(client: FlaskClient) -> None:
    """Three seats draw and discard for a few rounds; every response is checked."""
    deal = arrange(R51, [junk(R51, dealer=True), None, None])
    table = Table(client, R51, deal, players=3)
    table.ok(0, {"type": "discard", "card": "4C"})
    for _ in range(6):
        seat = table.public()["turn"]["seat"]
        answer = table.ok(seat, {"type": "draw", "source": "stock"})
        card = answer["events"][0]["card"]
        table.ok(seat, {"type": "discard", "card": card})
    counts = Counter(s["hand_count"] for s in table.public()["seats"])
    assert counts == Counter({13: 3})
