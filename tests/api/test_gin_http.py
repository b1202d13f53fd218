"""Gin rummy over HTTP (API.md "Gin rummy"), through the Flask test client on the real Redis:
the first upcard passed, a knock refused above the limit and then made, the defender's
lay-out with lay-offs, a gin, the wall, the refusals as problems, the views' gin facts
(upcard offer, Oklahoma's knock limit, the wall, the deadwood once laid out) and the hand's
result; /v1/melds/check and /v1/scores/hand for gin."""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

from service.rules.cards import standard_deck
from tests.support.basic_game import Game
from tests.support.deals import auth
from tests.support.gin_game import DEFENDER, KNOCK, KNOCKER, UPCARD, deal, melds
from tests.support.problems import assert_problem


def draw(source: str) -> dict[str, Any]:
    return {"type": "draw", "source": source}


def hand_end(answer: dict[str, Any]) -> dict[str, Any]:
    end: dict[str, Any] = next(e for e in answer["events"] if e["type"] == "hand_end")
    return end


GIN_KNOBS = {  # RULES.md GIN: each knob, its rule, type and default (and C-CLOCK's clock)
    "knock_card": ("GIN-KNOCK", "int", 10),
    "oklahoma": ("GIN-KNOCK", "bool", False),
    "gin_bonus": ("GIN-SCORE", "int", 25),
    "undercut_bonus": ("GIN-SCORE", "int", 25),
    "undercut_on_tie": ("GIN-SCORE", "bool", True),
    "big_gin_bonus": ("GIN-KNOCK", "int", 0),
    "discard_taken_card": ("GIN-TURN", "bool", False),
    "match_end": ("GIN-END", "match_end", {"target": 100}),
    "game_bonus": ("GIN-END", "int", 100),
    "box_bonus": ("GIN-END", "int", 25),
    "shutout_doubles": ("GIN-END", "bool", True),
    "clock": ("C-CLOCK", "clock", None),
}


def test_the_variants_list_every_gin_knob(client: FlaskClient) -> None:
    """/v1/variants lists gin with every knob of RULES.md GIN, in RULES.md's order, each with
    its rule id, type and default, and those defaults as the variant's rules."""
    variants = client.get("/v1/variants").get_json()
    listed = next(v for v in variants["variants"] if v["id"] == "gin")
    assert (listed["min_players"], listed["max_players"], listed["deck_size"]) == (2, 2, 52)
    assert [k["name"] for k in listed["knobs"]] == list(GIN_KNOBS)
    assert {k["name"]: (k["rule"], k["type"], k["default"]) for k in listed["knobs"]} \
        == GIN_KNOBS
    assert listed["rules"] == {name: default for name, (_, _, default) in GIN_KNOBS.items()}
    bounds = {k["name"]: (k["minimum"], k["maximum"]) for k in listed["knobs"]
              if k["type"] == "int"}
    assert bounds["knock_card"] == (0, 10)
    assert listed["knobs"][7]["values"] == ["target", "deals"]


def test_a_knocked_hand_over_http(client: FlaskClient) -> None:
    game = Game(client, variant="gin", players=2, dealer=0,
                rules={"match_end": {"deals": 1}}, deals=[deal((DEFENDER, KNOCKER), UPCARD)])
    facts = game.public()["gin"]
    assert facts["upcard_offer"] == 1 and facts["knock_limit"] == 10
    game.refused(1, draw("stock"), "STOCK_DRAW_FORBIDDEN", "GIN-FIRST")
    game.refused(0, {"type": "pass"}, "NOT_YOUR_TURN", "C-TURN")
    game.ok(1, draw("discard"))
    game.refused(1, {"type": "knock", "card": "KD", "melds": melds("AH 2H 3H")},
                 "KNOCK_TOO_HIGH", "GIN-KNOCK")
    game.refused(1, {"type": "pass"}, "PASS_NOT_ALLOWED", "GIN-FIRST")
    moves = client.get(f"{game.path}/legal-moves", headers=auth(game.tokens[1])).get_json()
    assert KNOCK in moves["moves"]
    answer = game.ok(1, KNOCK)
    assert answer["game"]["gin"]["knock"] == {"seat": 1, "kind": "knock", "deadwood": 2}
    assert answer["game"]["turn"] == {"seat": 0, "phase": "lay_out"}
    answer = game.ok(0, {"type": "lay_out", "melds": melds("7C 7D 7H", "JS QS KS"),
                         "lay_offs": [{"meld_id": "m1", "cards": ["4H", "5H"]}]})
    end = hand_end(answer)
    assert end["scores"] == [0, 10] and end["result"] == "knock"
    public = game.public()
    assert public["status"] == "finished" and public["gin"]["deadwood"] == [12, 2]
    assert public["hands_played"][0]["result"] == "knock"


def test_bad_gin_moves_are_400(client: FlaskClient) -> None:
    game = Game(client, variant="gin", players=2, dealer=0,
                deals=[deal((DEFENDER, KNOCKER), UPCARD)])
    for body in ({"type": "pass", "card": "KD"}, {"type": "knock", "card": "KD"},
                 {"type": "lay_out", "source": "stock"}):
        resp = client.post(f"{game.path}/moves", json=body, headers=auth(game.tokens[1]))
        assert resp.status_code == 400, body


def test_melds_check_and_hand_scores_for_gin(client: FlaskClient) -> None:
    """/v1/melds/check under GIN-PLAYERS (no Q-K-A); /v1/scores/hand: knock, gin and
    undercut from each seat's unmelded cards, ``went_out`` the knocker (GIN-SCORE)."""
    ok = client.post("/v1/melds/check", json={"variant": "gin", "cards": ["AS", "2S", "3S"]})
    assert ok.status_code == 200 and ok.get_json()["valid"] is True
    bad = client.post("/v1/melds/check", json={"variant": "gin", "cards": ["QS", "KS", "AS"]})
    assert bad.status_code == 200 and bad.get_json()["valid"] is False

    def score(hands: list[list[str]], went_out: int, **rules: object) -> dict[str, object]:
        resp = client.post("/v1/scores/hand", json={"variant": "gin", "rules": rules,
                                                     "went_out": went_out, "hands": hands})
        assert resp.status_code == 200, resp.get_data(as_text=True)
        body: dict[str, object] = resp.get_json()
        return body

    knock = score([["3C", "9C"], ["2C"]], 1)
    assert knock["scores"] == [0, 10] and knock["result"] == "knock"
    assert knock["counts"] == [12, 2]
    assert score([["3C", "9C"], []], 1)["scores"] == [0, 37]  # gin: 25 + 12
    undercut = score([["AC"], ["2C"]], 1)
    assert undercut["scores"] == [26, 0] and undercut["result"] == "undercut"
    assert score([["2D"], ["2C"]], 1, undercut_on_tie=False)["scores"] == [0, 0]


GIN_HAND = ["AH", "2H", "3H", "4C", "4D", "4S", "7S", "8S", "9S", "TS"]


def test_refusals_over_http(client: FlaskClient) -> None:
    """GIN-TURN, GIN-KNOCK, GIN-LAYOFF: each refusal is a 422 problem with its code and
    rule id, and changes nothing."""
    game = Game(client, variant="gin", players=2, dealer=0,
                rules={"match_end": {"deals": 1}}, deals=[deal((DEFENDER, KNOCKER), UPCARD)])
    game.ok(1, draw("discard"))
    game.refused(1, {"type": "discard", "card": UPCARD}, "DISCARD_TAKEN_CARD", "GIN-TURN")
    game.refused(1, {"type": "knock", "card": "KD", "melds": melds(
        "AH 2H 3H 4H", "4C 4D 4S", "7S 8S 9S")}, "CARD_NOT_IN_HAND", "GIN-KNOCK")
    game.refused(1, {"type": "knock", "card": "KD", "melds": melds(
        "AH 2H 3H", "4C 4D 4S", "7S 8S 2C")}, "INVALID_MELD", "GIN-PLAYERS")
    game.refused(1, {**KNOCK, "lay_offs": [{"meld_id": "m1", "cards": ["2C"]}]},
                 "INVALID_LAY_OFF", "GIN-LAYOFF")
    game.refused(1, {"type": "meld", "melds": melds("AH 2H 3H")}, "INVALID_MELD", "GIN-TURN")
    game.ok(1, KNOCK)
    game.refused(1, {"type": "lay_out"}, "NOT_YOUR_TURN", "C-TURN")
    game.refused(0, draw("stock"), "WRONG_PHASE", "GIN-LAYOFF")

    gin = Game(client, variant="gin", players=2, dealer=0, rules={"match_end": {"deals": 1}},
               deals=[deal((DEFENDER, GIN_HAND), "KD", ["QD"])])
    for seat, move in ((1, {"type": "pass"}), (0, {"type": "pass"}), (1, draw("stock"))):
        gin.ok(seat, move)
    gin.ok(1, {"type": "knock", "card": "QD",
               "melds": melds("AH 2H 3H", "4C 4D 4S", "7S 8S 9S TS")})
    gin.refused(0, {"type": "lay_out", "lay_offs": [{"meld_id": "m1", "cards": ["4H"]}]},
                "INVALID_LAY_OFF", "GIN-LAYOFF")
    end = hand_end(gin.ok(0, {"type": "lay_out", "melds": melds("7C 7D 7H", "JS QS KS")}))
    assert (end["scores"], end["result"]) == ([0, 46], "gin")
    assert gin.public()["gin"]["deadwood"] == [21, 0]


def test_the_wall_over_http(client: FlaskClient) -> None:
    """GIN-WALL: with two cards left in the stock, no stock draw; a pass ends the hand as
    a draw (the view's ``wall``, the result ``wall_draw``)."""
    used = {*KNOCKER, *DEFENDER, UPCARD}
    filler = [c for c in standard_deck() if c not in used][:29]
    game = Game(client, variant="gin", players=2, dealer=0,
                rules={"match_end": {"deals": 1}},
                deals=[deal((KNOCKER, DEFENDER), UPCARD, filler)])
    game.ok(1, {"type": "pass"})
    game.ok(0, {"type": "pass"})
    for i, card in enumerate(filler):
        seat = 1 - i % 2
        game.ok(seat, draw("stock"))
        game.ok(seat, {"type": "discard", "card": card})
    facts = game.public()["gin"]
    assert facts["wall"] is True and game.public()["stock_count"] == 2
    game.refused(0, draw("stock"), "STOCK_DRAW_FORBIDDEN", "GIN-WALL")
    end = hand_end(game.ok(0, {"type": "pass"}))
    assert (end["scores"], end["result"], end["reason"]) == ([0, 0], "wall_draw", "wall")


def test_the_oklahoma_knock_limit_in_the_views(client: FlaskClient) -> None:
    """GIN-KNOCK ``oklahoma``: the first upcard's value is the view's ``knock_limit``, for
    everyone and each seat; taking 6D and keeping it knocks at exactly 6."""
    game = Game(client, variant="gin", players=2, dealer=0,
                rules={"match_end": {"deals": 1}, "oklahoma": True},
                deals=[deal((DEFENDER, KNOCKER), "6D")])
    assert game.public()["gin"]["knock_limit"] == 6
    assert game.me(0)["gin"]["knock_limit"] == game.me(1)["gin"]["knock_limit"] == 6
    game.ok(1, draw("discard"))
    answer = game.ok(1, KNOCK)
    assert answer["game"]["gin"]["knock"] == {"seat": 1, "kind": "knock", "deadwood": 6}


def test_a_hand_score_with_a_knock_above_the_limit_is_400(client: FlaskClient) -> None:
    """/v1/scores/hand: a knocker's unmelded cards above the knock limit are no knock
    (GIN-KNOCK); under Oklahoma the limit can be up to 10."""
    def post(hands: list[list[str]], **rules: object) -> Any:
        return client.post("/v1/scores/hand", json={"variant": "gin", "rules": rules,
                                                     "went_out": 1, "hands": hands})

    resp = post([["3C", "9C"], ["5C", "6D"]])
    problem = assert_problem(resp, 400, code="MALFORMED_REQUEST")
    assert problem["errors"][0]["field"] == "hands.1" and "GIN-KNOCK" in problem["detail"]
    assert_problem(post([["3C", "9C"], ["4C"]], knock_card=3), 400, code="MALFORMED_REQUEST")
    assert post([["3C", "9C"], ["5C", "5D"]], oklahoma=True).get_json()["scores"] == [0, 2]
