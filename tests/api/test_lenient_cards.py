"""Cards as people type them (C-CARD, issue 45) wherever a request holds one: moves,
arranged deals, meld checks, hand scores. Any case, ``10`` for ``T``, suit symbols; the
answers use canonical codes, and an error quotes the card as it was sent."""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

from tests.support.basic_game import A_HANDS, Game, deal_a
from tests.support.problems import assert_problem

TYPED = {"TH": "10♥", "JH": "jh", "KS": "k♠", "KC": "K♣", "5D": "5♦", "6D": "6d",
         "7H": "7h", "8H": "8♡", "9H": "9H", "QS": "q♤", "QD": "Q♢", "QC": "qc"}
"""A way to type each card of the arranged deal (the rest as they are)."""


def typed(cards: list[str]) -> list[str]:
    return [TYPED.get(card, card) for card in cards]


def test_an_arranged_deal_typed_loosely_deals_the_canonical_cards(client: FlaskClient
                                                                   ) -> None:
    deal = deal_a()
    loose: dict[str, Any] = {**deal, "hands": [typed(h) for h in deal["hands"]],
                             "stock": typed(deal["stock"])}
    game = Game(client, dealer=1, deals=[loose])
    hand = client.get(f"{game.path}/me", headers={
        "Authorization": f"Bearer {game.tokens[0]}"}).get_json()["hand"]
    assert sorted(hand) == sorted(A_HANDS[0])


def test_a_move_with_loose_codes_is_the_canonical_move(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])
    game.ok(0, {"type": "draw", "source": "stock"})
    answer = game.ok(0, {"type": "meld", "melds": [{"cards": ["7h", "8♥", "9H"]},
                                                   {"cards": ["q♠", "Qd", "qc"]}]})
    assert [m["cards"] for m in answer["game"]["melds"]] == [["7H", "8H", "9H"],
                                                             ["QS", "QD", "QC"]]
    answer = game.ok(0, {"type": "discard", "card": "k♦"})
    assert any(e.get("card") == "KD" for e in answer["events"]), answer["events"]


def test_a_bad_card_is_quoted_as_it_was_sent(client: FlaskClient) -> None:
    game = Game(client)
    for sent in ("10x", "1h", "q♠♠"):
        problem = assert_problem(game.move(0, {"type": "discard", "card": sent}), 400)
        assert problem["errors"][0]["field"] == "card"
        assert problem["errors"][0]["message"].startswith(f"{sent!r} is not a card")
    check = assert_problem(client.post("/v1/melds/check", json={
        "variant": "basic", "cards": ["10h", "jh", "11h"]}), 400)
    assert check["errors"][0]["message"].startswith("'11h' is not a card")


def test_stateless_checks_read_loose_codes(client: FlaskClient) -> None:
    check = client.post("/v1/melds/check", json={"variant": "basic",
                                                 "cards": ["10h", "j♥", "Q♡"]}).get_json()
    assert (check["valid"], check["cards"]) == (True, ["TH", "JH", "QH"])
    wild = client.post("/v1/melds/check", json={"variant": "rummy51", "cards": [
        "qs", "QH", {"card": "joker", "as": "q♦"}]}).get_json()
    assert wild["valid"] and wild["wilds"] == [{"index": 2, "card": "JK", "as": "QD"}]
    loose = client.post("/v1/scores/hand", json={
        "variant": "basic", "went_out": 0, "hands": [[], ["k♠", "10♥", "2c"]],
        "all_at_once": False}).get_json()
    strict = client.post("/v1/scores/hand", json={
        "variant": "basic", "went_out": 0, "hands": [[], ["KS", "TH", "2C"]],
        "all_at_once": False}).get_json()
    assert loose == strict
