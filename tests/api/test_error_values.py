"""A bad field's problem quotes what the request sent there (``errors[].value``).

Each entry of a problem's ``errors`` names the bad field and, where the request sent one,
quotes its value as sent: a part of the JSON body by its dotted path, a query parameter, a
header or a path parameter; the body's text where it is no JSON; long values cut to 200
characters and ``…``; never a credential. Through the Flask test client on the real Redis.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.api import problems
from tests.support.deals import auth
from tests.support.problems import assert_problem

DRAW = {"type": "draw", "source": "stock"}


def _values(body: dict[str, Any]) -> dict[str, Any]:
    """Each bad field's quoted value (fields quoting none left out)."""
    return {e["field"]: e["value"] for e in body["errors"] if "value" in e}


def _post(client: FlaskClient, path: str, body: str, **headers: str) -> Any:
    return client.post(path, data=body, headers=headers, content_type="application/json")


@pytest.fixture
def game(client: FlaskClient) -> dict[str, Any]:
    resp = client.post("/v1/games", json={"variant": "basic", "players": ["Ana", "Bo"]})
    assert resp.status_code == 201
    created: dict[str, Any] = resp.get_json()
    return created


def _mover(game: dict[str, Any]) -> dict[str, str]:
    return auth(game["seats"][game["game"]["turn"]["seat"]]["token"])


def test_body_fields_are_quoted_as_sent_by_their_path(client: FlaskClient) -> None:
    resp = _post(client, "/v1/games",
                 '{"variant": "basic", "players": "Ana Bo", "dealer": 9, "x.y": [1, "z"]}')
    body = assert_problem(resp, 400, {"players", "dealer", "x.y"})
    assert _values(body) == {"players": "Ana Bo", "dealer": 9, "x.y": [1, "z"]}


def test_a_field_not_sent_quotes_nothing(client: FlaskClient) -> None:
    body = assert_problem(_post(client, "/v1/games", '{"variant": 7}'), 400,
                          {"variant", "players"})
    assert _values(body) == {"variant": 7}


def test_a_nested_card_of_a_move_is_quoted_as_typed(client: FlaskClient,
                                                   game: dict[str, Any]) -> None:
    move = '{"type": "meld", "melds": [{"cards": ["A\u2660", "2s", "1O\u2660"]}]}'
    resp = _post(client, f"/v1/games/{game['game_id']}/moves", move, **_mover(game))
    body = assert_problem(resp, 400, {"melds.0.cards.2"})
    assert _values(body) == {"melds.0.cards.2": "1O\u2660"}


def test_refusals_after_parsing_quote_the_field_too(client: FlaskClient) -> None:
    """Knobs, seats and sheets are checked after the schema: their fields are found in
    the body all the same."""
    knob = _post(client, "/v1/games",
                 '{"variant": "basic", "players": ["a", "b"], "rules": {"ace": "middle"}}')
    assert _values(assert_problem(knob, 400, {"rules.ace"})) == {"rules.ace": "middle"}
    seat = _post(client, "/v1/games", '{"variant": "basic", "players": ["a", "b"], "dealer": 3}')
    assert _values(assert_problem(seat, 400, {"dealer"})) == {"dealer": 3}
    clock = _post(client, "/v1/games", '{"variant": "basic", "players": ["a", "b"], '
                                       '"rules": {"clock": {"turn_seconds": 2}}}')
    assert _values(assert_problem(clock, 400, {"rules.clock"})) == {
        "rules.clock": {"turn_seconds": 2}}
    sheet = client.post("/v1/scoresheets", json={"variant": "rummy51", "players": ["Ana", "Bo"]})
    assert sheet.status_code == 201
    created = sheet.get_json()
    hand = _post(client, f"/v1/scoresheets/{created['sheet_id']}/hands",
                 '{"points": {"Ana": 0, "Bo": -3}}', **auth(created["token"]))
    assert _values(assert_problem(hand, 400, {"points.Bo"})) == {"points.Bo": -3}


def test_query_parameters_are_quoted_as_sent(client: FlaskClient,
                                             game: dict[str, Any]) -> None:
    resp = client.get(f"/v1/games/{game['game_id']}/events?after=-1&limit=0&limit=5")
    body = assert_problem(resp, 400, {"after", "limit"})
    assert _values(body) == {"after": "-1", "limit": ["0", "5"]}
    move = client.post(f"/v1/games/{game['game_id']}/moves?dry_run=maybe", json=DRAW,
                       headers=_mover(game))
    assert _values(assert_problem(move, 400, {"dry_run"})) == {"dry_run": "maybe"}


def test_headers_are_quoted_as_sent(client: FlaskClient, game: dict[str, Any]) -> None:
    path = f"/v1/games/{game['game_id']}"
    if_match = client.post(f"{path}/moves", json=DRAW,
                           headers={**_mover(game), "If-Match": '"abc"'})
    assert _values(assert_problem(if_match, 400, {"If-Match"})) == {"If-Match": '"abc"'}
    wait = client.get(path, headers={"Prefer": "wait=99", "If-None-Match": '"1"'})
    assert _values(assert_problem(wait, 400, {"Prefer"})) == {"Prefer": "wait=99"}
    resume = client.get(f"{path}/events", headers={"Accept": "text/event-stream",
                                                   "Last-Event-ID": "x1"})
    assert _values(assert_problem(resume, 400, {"Last-Event-ID"})) == {"Last-Event-ID": "x1"}
    key = client.post(f"{path}/moves", json=DRAW,
                      headers={**_mover(game), "Idempotency-Key": "key with blanks"})
    assert _values(assert_problem(key, 400, {"Idempotency-Key"})) == {
        "Idempotency-Key": "key with blanks"}
    sheet = client.post("/v1/scoresheets", json={"variant": "basic", "players": ["Ana", "Bo"]})
    created = sheet.get_json()
    hand = client.post(f"/v1/scoresheets/{created['sheet_id']}/hands",
                       json={"points": {"Ana": 0, "Bo": 10}},
                       headers={**auth(created["token"]), "If-Match": "v2"})
    assert _values(assert_problem(hand, 400, {"If-Match"})) == {"If-Match": "v2"}


def test_a_path_parameter_is_quoted(client: FlaskClient) -> None:
    resp = client.post("/v1/games", json={"variant": "basic", "players": ["Ana", None, None]})
    created = resp.get_json()
    reopen = client.post(f"/v1/games/{created['game_id']}/seats/9/open",
                         headers=auth(created["host_token"]))
    assert _values(assert_problem(reopen, 400, {"seat"})) == {"seat": 9}


@pytest.mark.parametrize(("sent", "quoted"), [
    pytest.param(b'{"variant": "basic", "players": ["a"', '{"variant": "basic", "players": ["a"',
                 id="cut-short"),
    pytest.param(b'{"variant": "\xff"}', '{"variant": "\\xff"}', id="not-utf-8"),
])
def test_a_body_that_is_no_json_is_quoted_as_text(client: FlaskClient, sent: bytes,
                                                  quoted: str) -> None:
    resp = client.post("/v1/games", data=sent, content_type="application/json")
    assert _values(assert_problem(resp, 400, {"body"})) == {"body": quoted}


def test_a_number_json_cannot_carry_is_quoted_as_its_text(client: FlaskClient) -> None:
    for number in ("NaN", "Infinity", "-Infinity"):
        resp = _post(client, "/v1/games",
                     f'{{"variant": "basic", "players": ["a", "b"], "dealer": {number}}}')
        assert _values(assert_problem(resp, 400, {"dealer"})) == {"dealer": number}
        json.loads(resp.get_data())  # the answer itself is JSON (no bare NaN in it)
        listed = _post(client, "/v1/games",
                       f'{{"variant": "basic", "players": ["a", "b"], "dealer": [{number}]}}')
        assert _values(assert_problem(listed, 400, {"dealer"})) == {"dealer": f"[{number}]"}


def test_long_values_are_cut_to_200_characters(client: FlaskClient) -> None:
    name = "n" * 5000
    players = ["p"] * 300
    resp = client.post("/v1/games", json={"variant": name, "players": players})
    values = _values(assert_problem(resp, 400))
    assert values["variant"] == "n" * 200 + "\u2026"
    assert values["players"] == json.dumps(players, separators=(",", ":"))[:200] + "\u2026"
    short = client.post("/v1/games", json={"variant": "basic", "players": [1, 2]})
    assert _values(assert_problem(short, 400))["players.0"] == 1


@pytest.mark.parametrize("depth", [150, 400, 3000])
def test_a_deeply_nested_value_is_quoted_within_the_limit(client: FlaskClient,
                                                          depth: int) -> None:
    """Quoted as far as 200 characters of its JSON text, however deep (where the body is
    too deep to read at all, the body's text is quoted instead)."""
    nested = "[" * depth + "]" * depth
    body = '{"variant": "basic", "players": ["a", "b"], "dealer": ' + nested + "}"
    resp = _post(client, "/v1/games", body)
    errors = assert_problem(resp, 400)["errors"]
    expected = {"dealer": nested[:200] + "\u2026", "body": body[:200] + "\u2026"}
    assert len(errors) == 1 and errors[0]["value"] == expected[errors[0]["field"]], errors
    assert depth > 150 or errors[0]["field"] == "dealer"


def test_translated_problems_keep_their_quotes(client: FlaskClient) -> None:
    resp = client.post("/v1/games", json={"variant": "basic", "players": "ab"},
                       headers={"Accept-Language": "da"})
    body = assert_problem(resp, 400, {"players"})
    assert resp.headers["Content-Language"] == "da"
    assert _values(body) == {"players": "ab"}


def test_credentials_are_never_quoted(app: Flask) -> None:
    """Were a credential a bad field, its problem would name it without quoting it: a
    token or a ticket is not to be copied into an answer that clients and proxies log."""
    with app.test_request_context("/v1/games/g/events?ticket=T1CKET&after=x", headers={
            "Authorization": "Bearer g.0.SECRET", "X-API-Key": "K3Y", "Prefer": "wait=x"}):
        errors = problems._webargs_errors({
            "query": {"ticket": ["bad"], "after": ["bad"]},
            "headers": {"authorization": ["bad"], "X-Api-Key": ["bad"], "PREFER": ["bad"]}})
    assert {e["field"]: e.get("value") for e in errors} == {
        "ticket": None, "after": "x", "authorization": None, "X-Api-Key": None,
        "PREFER": "wait=x"}
    assert "SECRET" not in json.dumps(errors) and "T1CKET" not in json.dumps(errors)
