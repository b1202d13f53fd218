"""Gin rummy over HTTP (API.md "Gin rummy"), through the Flask test client on the real Redis:
the first upcard passed, a knock refused above the limit and then made, the defender's
lay-out with lay-offs, the views' gin facts and the hand's result."""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

from tests.support.basic_game import Game
from tests.support.deals import auth
from tests.support.gin_game import DEFENDER, KNOCK, KNOCKER, UPCARD, deal, melds


def draw(source: str) -> dict[str, Any]:
    return {"type": "draw", "source": source}


def hand_end(answer: dict[str, Any]) -> dict[str, Any]:
    end: dict[str, Any] = next(e for e in answer["events"] if e["type"] == "hand_end")
    return end


def test_a_knocked_hand_over_http(client: FlaskClient) -> None:
    game = Game(client, variant="gin", players=2, dealer=0,
                rules={"match_end": {"deals": 1}}, deals=[deal((DEFENDER, KNOCKER), UPCARD)])
    variants = client.get("/v1/variants").get_json()
    listed = next(v for v in variants["variants"] if v["id"] == "gin")
    assert {k["name"] for k in listed["knobs"]} >= {"knock_card", "oklahoma", "match_end"}
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
