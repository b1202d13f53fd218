"""Score sheets for paper games (``/v1/scoresheets``) through the Flask test client, on the
real Redis; the race tests run two apps (two workers) against it at once."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from service.app import create_app
from service.config import Settings
from service.rules.cards import CardError, read_card
from service.sheets import MAX_HANDS, NAMESPACE
from tests.support.problems import PROBLEM


def new_sheet(client: FlaskClient, variant: str = "rummy51",
              players: list[str] | None = None, rules: dict[str, Any] | None = None
              ) -> tuple[str, dict[str, str]]:
    resp = client.post("/v1/scoresheets", json={
        "variant": variant, "rules": rules or {}, "players": players or ["Ana", "Bo", "Cy"]})
    assert resp.status_code == 201, resp.get_json()
    body = resp.get_json()
    assert resp.headers["Location"] == f"/v1/scoresheets/{body['sheet_id']}"
    return body["sheet_id"], {"Authorization": f"Bearer {body['token']}"}


def add(client: FlaskClient, sheet_id: str, auth: dict[str, str], hand: dict[str, Any],
        **headers: str) -> TestResponse:
    return client.post(f"/v1/scoresheets/{sheet_id}/hands", json=hand,
                       headers={**auth, **headers})


def bad(resp: TestResponse, field: str, status: int = 400) -> str:
    assert resp.status_code == status, resp.get_json()
    assert resp.mimetype == PROBLEM
    body = resp.get_json()
    if status == 400:
        fields = [e["field"] for e in body["errors"]]
        assert field in fields, body
    detail: str = body["detail"]
    return detail


def test_lenient_card_codes() -> None:
    for sent, code in [("10♥", "TH"), ("q♠", "QS"), ("7d", "7D"), ("Jk", "JK"),
                       ("10h", "TH"), ("a♣", "AC"), ("K♦\ufe0f", "KD"), (" ts ", "TS")]:
        assert read_card(sent) == code
    for sent in ["1H", "11♥", "ZZ", "Q", "", "Q♠♠"]:
        with pytest.raises(CardError, match=repr(sent).replace("\\", "\\\\")):
            read_card(sent)


def test_a_rummy51_sheet_by_cards(client: FlaskClient) -> None:
    sheet_id, auth = new_sheet(client)
    resp = add(client, sheet_id, auth, {
        "went_out": "Ana", "hands": {"Ana": [], "bo": ["as", "Jk", "7♦"], "Cy": ["k♣"]},
        "opened": ["Ana", "Bo"], "all_at_once": False})
    assert resp.status_code == 200, resp.get_json()
    sheet = resp.get_json()
    assert resp.headers["ETag"] == '"1"'
    # the same hand as POST /v1/scores/hand scores it
    check = client.post("/v1/scores/hand", json={
        "variant": "rummy51", "went_out": 0, "hands": [[], ["AS", "JK", "7D"], ["KC"]],
        "opened": [True, True, False], "all_at_once": False}).get_json()
    hand = sheet["hands"][0]
    assert [hand["scores"][p] for p in ("Ana", "Bo", "Cy")] == check["scores"] == [0, 38, 100]
    assert hand["cards"] == {"Ana": [], "Bo": ["AS", "JK", "7D"], "Cy": ["KC"]}
    assert sheet["totals"] == {"Ana": 0, "Bo": 38, "Cy": 100}
    assert sheet["status"] == "playing" and sheet["winners"] == [] and sheet["version"] == 1
    assert sheet["rules"]["match_end"] == {"target": 1000}  # every knob, defaults included
    assert [f["field"] for f in sheet["facts"]] == ["opened", "all_at_once", "final_discard"]
    assert "whole hand in one turn" in sheet["facts"][1]["question"]
    got = client.get(f"/v1/scoresheets/{sheet_id}")  # anyone reads it
    assert got.get_json() == sheet and got.headers["ETag"] == '"1"'
    assert client.get(f"/v1/scoresheets/{sheet_id}",
                      headers={"If-None-Match": '"1"'}).status_code == 304


def test_points_totals_and_target(client: FlaskClient) -> None:
    sheet_id, auth = new_sheet(client, "basic", ["Ana", "Bo"],
                               {"match_end": {"target": 50}})
    sheet = add(client, sheet_id, auth, {"points": {"Ana": 30, "Bo": 0}}).get_json()
    assert sheet["totals"] == {"Ana": 30, "Bo": 0} and sheet["status"] == "playing"
    sheet = add(client, sheet_id, auth, {"points": {"Ana": 25, "Bo": 0}}).get_json()
    assert sheet["status"] == "finished" and sheet["winners"] == ["Ana"]
    detail = bad(add(client, sheet_id, auth, {"points": {"Ana": 1, "Bo": 0}}), "", 422)
    assert "over" in detail and "Ana won" in detail
    # take the last hand back: playing again
    resp = client.delete(f"/v1/scoresheets/{sheet_id}/hands/last", headers=auth)
    assert resp.status_code == 200
    sheet = resp.get_json()
    assert sheet["status"] == "playing" and len(sheet["hands"]) == 1 and sheet["version"] == 3


def test_rummy51_elimination(client: FlaskClient) -> None:
    sheet_id, auth = new_sheet(client, rules={"match_end": {"eliminate_at": 100}})
    sheet = add(client, sheet_id, auth, {"points": {"Ana": 0, "Bo": 120, "Cy": 40}}).get_json()
    assert sheet["out_of_match"] == ["Bo"] and sheet["status"] == "playing"
    bad(add(client, sheet_id, auth, {"points": {"Ana": 0, "Bo": 5, "Cy": 40}}), "points.Bo")
    sheet = add(client, sheet_id, auth, {"points": {"Ana": 10, "Cy": 70}}).get_json()
    assert sheet["status"] == "finished" and sheet["winners"] == ["Ana"]


def test_dummy_contracts(client: FlaskClient) -> None:
    sheet_id, auth = new_sheet(client, "dummy", ["Ana", "Bo"],
                               {"match_end": {"contracts": 2}})
    detail = bad(add(client, sheet_id, auth, {"went_out": "Ana", "hands": {"Bo": ["KS"]}}),
                 "completed")
    assert "laid down their contract" in detail
    sheet = add(client, sheet_id, auth, {"went_out": "Ana", "hands": {"Bo": ["KS"]},
                                         "completed": []}).get_json()
    assert sheet["hands"][0]["completed"] == ["Ana"]  # going out completes it
    assert sheet["facts"] == [{"field": "completed", "question": sheet["facts"][0]["question"],
                               "entered": "any"}]
    assert sheet["contracts"]["Ana"] == {"contract": 2, "completed": 1}
    sheet = add(client, sheet_id, auth, {"points": {"Ana": 0, "Bo": 20},
                                         "completed": ["Ana", "Bo"]}).get_json()
    assert sheet["status"] == "finished" and sheet["winners"] == ["Ana"]


def test_wrotham_six_deals(client: FlaskClient) -> None:
    sheet_id, auth = new_sheet(client, "wrotham", ["Ana", "Bo"])
    for n in range(6):
        sheet = add(client, sheet_id, auth, {"points": {"Ana": 10 * n, "Bo": 5}}).get_json()
        assert sheet["status"] == ("finished" if n == 5 else "playing"), n
    assert sheet["winners"] == ["Ana"]  # winner_collects: the highest total


def test_a_missing_flag_is_asked_in_words(client: FlaskClient) -> None:
    sheet_id, auth = new_sheet(client, "basic", ["Ana", "Bo"])
    detail = bad(add(client, sheet_id, auth, {"went_out": "Ana", "hands": {"Bo": ["KS"]}}),
                 "all_at_once")
    assert "whole hand in one turn" in detail
    assert client.get(f"/v1/scoresheets/{sheet_id}").get_json()["version"] == 0


@pytest.mark.parametrize(("variant", "players", "hand", "field", "words"), [
    ("basic", ["Ana", "Bo"], {"went_out": "Zed", "hands": {"Bo": []}}, "went_out",
     "no player 'Zed'"),
    ("basic", ["Ana", "Bo"], {"went_out": "Ana", "hands": {"Bo": [], "Zed": []},
                              "all_at_once": False}, "hands.Zed", "no player"),
    ("basic", ["Ana", "Bo"], {"went_out": "Ana", "hands": {"Bo": ["AS", "as", "A♠"]},
                              "all_at_once": False}, "hands", "AS 3 times"),
    ("basic", ["Ana", "Bo"], {"went_out": "Ana", "hands": {"Bo": ["jk"]},
                              "all_at_once": False}, "hands.Bo.0", "'jk' is not a card of"),
    ("basic", ["Ana", "Bo"], {"went_out": "Ana", "hands": {"Bo": ["11♥"]},
                              "all_at_once": False}, "hands.Bo.0", "'11♥' is not a card"),
    ("basic", ["Ana", "Bo"], {"went_out": ["Ana", "Bo"], "hands": {}}, "went_out",
     "only one player"),
    ("rummy51", ["Ana", "Bo"], {"points": {"Ana": -5, "Bo": 10}}, "points.Ana", "negative"),
    ("rummy51", ["Ana", "Bo"], {"points": {"Ana": 0.5, "Bo": 10}}, "points.Ana",
     "whole number"),
    ("rummy51", ["Ana", "Bo"], {"points": {"Ana": 0}}, "points.Bo", "missing"),
    ("basic", ["Ana", "Bo"], {"points": {"Ana": 0, "Bo": 5}, "completed": ["Ana"]},
     "completed", "only Dummy"),
    ("basic", ["Ana", "Bo"], {"went_out": "Ana", "hands": {"Ana": ["KS"], "Bo": []},
                              "all_at_once": False}, "hands.Ana", "Ana went out"),
])
def test_bad_hands_store_nothing(client: FlaskClient, variant: str, players: list[str],
                                 hand: dict[str, Any], field: str, words: str) -> None:
    sheet_id, auth = new_sheet(client, variant, players)
    assert words in bad(add(client, sheet_id, auth, hand), field)
    assert client.get(f"/v1/scoresheets/{sheet_id}").get_json()["version"] == 0


def test_fractions_and_negatives_where_the_variant_has_them(client: FlaskClient) -> None:
    sheet_id, auth = new_sheet(client, "basic", ["Ana", "Bo"],
                               {"scoring": "penalty", "going_rummy": "bonus10"})
    sheet = add(client, sheet_id, auth, {"points": {"Ana": -10, "Bo": 30}}).get_json()
    assert sheet["totals"] == {"Ana": -10, "Bo": 30}
    sheet_id, auth = new_sheet(client, "basic", ["Ana", "Bo"])  # a blocked hand's pot split
    sheet = add(client, sheet_id, auth, {"points": {"Ana": 7.5, "Bo": 7.5}}).get_json()
    assert sheet["totals"] == {"Ana": 7.5, "Bo": 7.5}


def test_bad_sheets(client: FlaskClient) -> None:
    resp = client.post("/v1/scoresheets", json={"variant": "basic",
                                                 "players": ["Ana", "ana "]})
    assert "twice" in bad(resp, "players")
    resp = client.post("/v1/scoresheets", json={"variant": "basic", "players": ["Ana"]})
    assert "2 to 6 players" in bad(resp, "players")
    resp = client.post("/v1/scoresheets", json={"variant": "nope", "players": ["A", "B"]})
    bad(resp, "variant")
    assert client.get("/v1/scoresheets/nosuch").status_code == 404
    sheet_id, auth = new_sheet(client, "basic", ["Ana", "Bo"])
    assert add(client, sheet_id, {}, {"points": {"Ana": 1, "Bo": 0}}).status_code == 401
    _other, other_auth = new_sheet(client, "basic", ["Ana", "Bo"])
    assert add(client, sheet_id, other_auth, {"points": {"Ana": 1, "Bo": 0}}).status_code == 403
    resp = client.delete(f"/v1/scoresheets/{sheet_id}/hands/last", headers=auth)
    assert resp.status_code == 422 and resp.get_json()["code"] == "NO_HAND"


def test_a_sheet_is_bounded(client: FlaskClient, app: Flask) -> None:
    sheet_id, auth = new_sheet(client, "basic", ["Ana", "Bo"],
                               {"match_end": {"deals": 999}})
    sheets = app.extensions["sheets"]
    store = sheets.store
    loaded = store.load(sheet_id)
    doc = json.loads(loaded.state)
    doc["hands"] = [{"number": i + 1, "entered": "points", "went_out": None,
                     "scores": {"Ana": 0, "Bo": 0}} for i in range(MAX_HANDS)]
    store.commit(sheet_id, expected_version=0, state=json.dumps(doc).encode(),
                 log_record=b"{}")
    resp = add(client, sheet_id, auth, {"points": {"Ana": 1, "Bo": 0}})
    assert resp.status_code == 422 and resp.get_json()["code"] == "SHEET_FULL"
    assert str(MAX_HANDS) in resp.get_json()["detail"]


def test_sheets_are_stored_apart_from_games(client: FlaskClient, app: Flask) -> None:
    sheet_id, _ = new_sheet(client)
    keys = app.extensions["sheets"].store.keys(sheet_id)
    assert keys.game == f"{NAMESPACE}:{{{sheet_id}}}:game"
    assert client.get(f"/v1/games/{sheet_id}").status_code == 404
    assert app.extensions["sheets"].store.client.ttl(keys.game) > 0


def test_if_match_and_idempotency(client: FlaskClient) -> None:
    sheet_id, auth = new_sheet(client, "basic", ["Ana", "Bo"])
    hand = {"points": {"Ana": 10, "Bo": 0}}
    resp = add(client, sheet_id, auth, hand, **{"If-Match": '"3"'})
    assert resp.status_code == 412 and resp.headers["ETag"] == '"0"'
    first = add(client, sheet_id, auth, hand, **{"Idempotency-Key": "k1", "If-Match": '"0"'})
    again = add(client, sheet_id, auth, hand, **{"Idempotency-Key": "k1", "If-Match": '"0"'})
    assert first.status_code == again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json() == first.get_json()
    other = add(client, sheet_id, auth, {"points": {"Ana": 0, "Bo": 5}},
                **{"Idempotency-Key": "k1"})
    assert other.status_code == 422 and other.get_json()["code"] == "IDEMPOTENCY_KEY_REUSED"
    assert len(client.get(f"/v1/scoresheets/{sheet_id}").get_json()["hands"]) == 1


@pytest.fixture
def second_app(redis_url: str) -> Flask:
    """Another worker on the same Redis."""
    return create_app(Settings(redis_url=redis_url, rate_limits=(), create_rate_limits=(),
                               verify_rate_limits=()))


def _race(clients: list[FlaskClient], send: Any) -> list[TestResponse]:
    barrier = threading.Barrier(len(clients))
    out: list[TestResponse | None] = [None] * len(clients)

    def run(i: int) -> None:
        barrier.wait()
        out[i] = send(clients[i], i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(clients))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [r for r in out if r is not None]


def test_two_phones_adding_hands_at_once_lose_none(client: FlaskClient, app: Flask,
                                                     second_app: Flask) -> None:
    sheet_id, auth = new_sheet(client, "basic", ["Ana", "Bo"],
                               {"match_end": {"deals": 999}})
    for round_ in range(10):
        phones = [app.test_client(), second_app.test_client()]
        answers = _race(phones, lambda c, i, r=round_: add(
            c, sheet_id, auth, {"points": {"Ana": r, "Bo": 100 + i}}))
        assert [r.status_code for r in answers] == [200, 200]
    sheet = client.get(f"/v1/scoresheets/{sheet_id}").get_json()
    assert len(sheet["hands"]) == 20 and sheet["version"] == 20
    assert sheet["totals"] == {"Ana": 2 * sum(range(10)), "Bo": 10 * (100 + 101)}
    assert [h["number"] for h in sheet["hands"]] == list(range(1, 21))


def test_a_retried_hand_is_applied_once_when_both_arrive_at_once(
        client: FlaskClient, app: Flask, second_app: Flask) -> None:
    sheet_id, auth = new_sheet(client, "basic", ["Ana", "Bo"],
                               {"match_end": {"deals": 999}})
    for round_ in range(10):
        phones = [app.test_client(), second_app.test_client()]
        answers = _race(phones, lambda c, i, r=round_: add(
            c, sheet_id, auth, {"points": {"Ana": 1, "Bo": 2}},
            **{"Idempotency-Key": f"hand-{r}"}))
        assert [r.status_code for r in answers] == [200, 200]
        assert answers[0].get_json() == answers[1].get_json()
    sheet = client.get(f"/v1/scoresheets/{sheet_id}").get_json()
    assert len(sheet["hands"]) == 10 and sheet["totals"] == {"Ana": 10, "Bo": 20}


@pytest.mark.parametrize(("variant", "facts", "check"), [
    ("rummy51", {"opened": ["Bo"], "all_at_once": True, "final_discard": "jk"},
     {"opened": [False, True, False], "all_at_once": True, "final_discard": "JK"}),
    ("lebanese14", {"opened": {"Ana": True, "Bo": True, "Cy": False}, "all_at_once": True,
                    "jokers_used": 1},
     {"opened": [True, True, False], "all_at_once": True, "jokers_used": 1}),
    ("basic", {"all_at_once": True}, {"all_at_once": True}),
    ("wrotham", {"all_at_once": False}, {"all_at_once": False}),
])
def test_cards_score_as_the_stateless_check_does(client: FlaskClient, variant: str,
                                                  facts: dict[str, Any],
                                                  check: dict[str, Any]) -> None:
    sheet_id, auth = new_sheet(client, variant)
    resp = add(client, sheet_id, auth, {"went_out": "Ana", "hands": {
        "Ana": [], "Bo": ["10♥", "q♠"], "Cy": ["7d", "K♣", "2h"]}, **facts})
    assert resp.status_code == 200, resp.get_json()
    want = client.post("/v1/scores/hand", json={
        "variant": variant, "went_out": 0,
        "hands": [[], ["TH", "QS"], ["7D", "KC", "2H"]], **check}).get_json()
    hand = resp.get_json()["hands"][0]
    assert [hand["scores"][p] for p in ("Ana", "Bo", "Cy")] == want["scores"]
    assert [hand["counts"][p] for p in ("Ana", "Bo", "Cy")] == want["counts"]


def test_the_stateless_score_check_asks_for_a_missing_fact_in_words(
        client: FlaskClient) -> None:
    resp = client.post("/v1/scores/hand", json={"variant": "basic", "went_out": 0,
                                                 "hands": [[], ["KS"]]})
    assert "whole hand in one turn" in bad(resp, "all_at_once")
    resp = client.post("/v1/scores/hand", json={"variant": "rummy51", "went_out": 0,
                                                 "hands": [[], ["KS"]], "all_at_once": False})
    assert "put down their first melds" in bad(resp, "opened")


def test_two_phones_on_one_version_one_wins_the_other_is_told(
        client: FlaskClient, app: Flask, second_app: Flask) -> None:
    sheet_id, auth = new_sheet(client, "basic", ["Ana", "Bo"],
                               {"match_end": {"deals": 999}})
    for version in range(5):
        phones = [app.test_client(), second_app.test_client()]
        answers = _race(phones, lambda c, i, v=version: add(
            c, sheet_id, auth, {"points": {"Ana": i, "Bo": 1}}, **{"If-Match": f'"{v}"'}))
        assert sorted(r.status_code for r in answers) == [200, 412]
        refused = next(r for r in answers if r.status_code == 412)
        assert refused.get_json()["current_version"] == version + 1
    assert len(client.get(f"/v1/scoresheets/{sheet_id}").get_json()["hands"]) == 5


def test_taking_back_is_idempotent_and_guarded_too(client: FlaskClient) -> None:
    sheet_id, auth = new_sheet(client, "basic", ["Ana", "Bo"],
                               {"match_end": {"deals": 999}})
    for n in range(3):
        add(client, sheet_id, auth, {"points": {"Ana": n, "Bo": 0}})
    last = f"/v1/scoresheets/{sheet_id}/hands/last"
    assert client.delete(last, headers={**auth, "If-Match": '"1"'}).status_code == 412
    first = client.delete(last, headers={**auth, "Idempotency-Key": "undo-1"})
    again = client.delete(last, headers={**auth, "Idempotency-Key": "undo-1"})
    assert first.status_code == again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    sheet = client.get(f"/v1/scoresheets/{sheet_id}").get_json()
    assert len(sheet["hands"]) == 2 and sheet["version"] == 4
    # the same key on another request is refused, and applies nothing
    reused = add(client, sheet_id, auth, {"points": {"Ana": 0, "Bo": 0}},
                 **{"Idempotency-Key": "undo-1"})
    assert reused.status_code == 422 and reused.get_json()["code"] == "IDEMPOTENCY_KEY_REUSED"


def test_a_bad_if_match_names_the_sheet_version(client: FlaskClient) -> None:
    sheet_id, auth = new_sheet(client, "basic", ["Ana", "Bo"])
    resp = add(client, sheet_id, auth, {"points": {"Ana": 1, "Bo": 0}}, **{"If-Match": "v1"})
    assert "version of the sheet" in bad(resp, "If-Match")


def test_a_gin_sheet_scores_a_knock_as_the_stateless_check_does(client: FlaskClient) -> None:
    """GIN-SCORE on paper: the knocker (who went out) scores the deadwood difference."""
    sheet_id, auth = new_sheet(client, "gin", ["Ana", "Bo"])
    resp = add(client, sheet_id, auth, {"went_out": "Ana",
                                        "hands": {"Ana": ["2c"], "Bo": ["KS", "QH", "9d"]}})
    assert resp.status_code == 200, resp.get_json()
    want = client.post("/v1/scores/hand", json={
        "variant": "gin", "went_out": 0, "hands": [["2C"], ["KS", "QH", "9D"]]}).get_json()
    hand = resp.get_json()["hands"][0]
    assert [hand["scores"][p] for p in ("Ana", "Bo")] == want["scores"] == [27, 0]
    assert hand["cards"] == {"Ana": ["2C"], "Bo": ["KS", "QH", "9D"]}
    sheet = add(client, sheet_id, auth, {"points": {"Ana": 0, "Bo": 31}}).get_json()
    assert sheet["totals"] == {"Ana": 27, "Bo": 31} and sheet["status"] == "playing"
