"""Hostile input never reaches a 500 and never changes a game (issue 41, item 2).

Numbers read from a header, the path or the query string are ASCII digits only (Python's
``str.isdigit()`` and ``int()`` take ``²``, ``١``, ``1_0`` …), of bounded length; a JSON
body with an integer too long for Python's int-string limit, or nested deeper than the
parsers recurse, is a 400 like any other malformed body. Through the Flask test client on
the real Redis, and through a served process for what gunicorn hands on.
"""

from __future__ import annotations

import json
import random
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from flask.testing import FlaskClient

from service.app import create_app
from service.config import Settings
from tests.support.deals import auth
from tests.support.problems import PROBLEM, assert_problem
from tests.support.redis_servers import key_count
from tests.support.serving import served

NON_ASCII_DIGITS = [
    pytest.param("\u00b2", id="superscript-two-B2"),
    pytest.param("\u00b3", id="superscript-three-B3"),
    pytest.param("\u00b9", id="superscript-one-B9"),
    pytest.param("1\u00b2", id="one-superscript-two"),
    pytest.param("\u0661", id="arabic-indic-one"),
    pytest.param("\u0661\u0662", id="arabic-indic-twelve"),
    pytest.param("\uff11", id="fullwidth-one"),
]
"""Digits ``str.isdigit()`` accepts that are not ASCII: ``int()`` refuses the superscripts
(a ValueError, a 500) and reads the others as numbers."""

NOT_PLAIN_NUMBERS = [
    *NON_ASCII_DIGITS,
    pytest.param("1_0", id="underscore"),
    pytest.param("+1", id="plus"),
    pytest.param("9" * 19, id="19-digits"),
    pytest.param("9" * 5000, id="5000-digits"),
]
"""What ``int()`` reads as a number (or fails on with a ValueError) and a plain count of
ASCII digits is not."""


class Game:
    """A basic two-player game and what a request that changes nothing leaves alike."""

    def __init__(self, client: FlaskClient, **fields: Any) -> None:
        resp = client.post("/v1/games", json={"variant": "basic", "players": ["Ana", "Bo"],
                                              **fields})
        assert resp.status_code == 201, resp.get_data(as_text=True)
        created = resp.get_json()
        self.client = client
        self.id: str = created["game_id"]
        self.path = f"/v1/games/{self.id}"
        self.tokens: list[str] = [s["token"] for s in created["seats"]]
        self.turn: int = created["game"]["turn"]["seat"]

    @property
    def mover(self) -> dict[str, str]:
        """The Authorization header of the seat whose turn it is."""
        return auth(self.tokens[self.turn])

    def snapshot(self) -> tuple[Any, ...]:
        public = self.client.get(self.path)
        seats = [self.client.get(f"{self.path}/me", headers=auth(t)).get_json()
                 for t in self.tokens]
        log = self.client.get(f"{self.path}/events").get_json()
        return public.headers["ETag"], public.get_json(), seats, log


DRAW = {"type": "draw", "source": "stock"}


@pytest.fixture
def game(client: FlaskClient) -> Game:
    return Game(client)


@pytest.fixture
def sse_client(redis_url: str) -> FlaskClient:
    """A client of an app whose event streams end after 1 s (one at a time)."""
    app = create_app(Settings(redis_url=redis_url, rate_limits=(), create_rate_limits=(),
                              sse_max_seconds=1, sse_heartbeat_seconds=0.5,
                              sse_max_streams=1))
    return app.test_client()


# ---------------------------------------------------------------------------------------
# Numbers in headers, the path and the query string


@pytest.mark.parametrize("seat", NOT_PLAIN_NUMBERS)
def test_a_token_whose_seat_is_not_ascii_digits_is_401(game: Game, seat: str) -> None:
    before = game.snapshot()
    head, _, secret = game.tokens[game.turn].split(".")
    token = {"Authorization": f"Bearer {head}.{seat}.{secret}"}
    for resp in (game.client.get(f"{game.path}/me", headers=token),
                 game.client.post(f"{game.path}/moves", json=DRAW, headers=token),
                 game.client.get(f"{game.path}/legal-moves", headers=token),
                 game.client.get(f"{game.path}/events", headers=token)):
        assert_problem(resp, 401)
    assert game.snapshot() == before


@pytest.mark.parametrize("version", NOT_PLAIN_NUMBERS)
@pytest.mark.parametrize("quoted", [True, False], ids=["quoted", "bare"])
def test_an_if_match_that_is_not_ascii_digits_is_400(game: Game, version: str,
                                                     quoted: bool) -> None:
    before = game.snapshot()
    value = f'"{version}"' if quoted else version
    for query in ("", "?dry_run=true"):
        resp = game.client.post(f"{game.path}/moves{query}", json=DRAW,
                                headers={**game.mover, "If-Match": value})
        assert_problem(resp, 400, field="If-Match")
    assert game.snapshot() == before


def test_an_if_match_of_ascii_digits_still_counts(game: Game) -> None:
    resp = game.client.post(f"{game.path}/moves", json=DRAW,
                            headers={**game.mover, "If-Match": '"1"'})
    assert_problem(resp, 412)
    resp = game.client.post(f"{game.path}/moves", json=DRAW,
                            headers={**game.mover, "If-Match": '"0"'})
    assert resp.status_code == 200, resp.get_data(as_text=True)


@pytest.mark.parametrize("last", [*NOT_PLAIN_NUMBERS, pytest.param("-1", id="negative"),
                                  pytest.param("x", id="letter")])
def test_a_last_event_id_that_is_not_a_version_is_400(sse_client: FlaskClient,
                                                      last: str) -> None:
    game = Game(sse_client)
    before = game.snapshot()
    for headers in ({}, auth(game.tokens[0])):
        resp = sse_client.get(f"{game.path}/events", headers={
            **headers, "Accept": "text/event-stream", "Last-Event-ID": last})
        assert_problem(resp, 400, field="Last-Event-ID")
    assert game.snapshot() == before


def test_a_last_event_id_of_a_version_resumes_the_stream(sse_client: FlaskClient) -> None:
    game = Game(sse_client)
    assert game.client.post(f"{game.path}/moves", json=DRAW,
                            headers=game.mover).status_code == 200
    for last, ids in (("0", ["1"]), ("1", []), ("9" * 18, [])):
        resp = sse_client.get(f"{game.path}/events", headers={
            "Accept": "text/event-stream", "Last-Event-ID": last}, buffered=True)
        assert resp.status_code == 200, resp.get_data(as_text=True)
        text = resp.get_data(as_text=True)
        assert [line[4:] for line in text.splitlines() if line.startswith("id: ")] == ids


@pytest.mark.parametrize("value", [*NOT_PLAIN_NUMBERS, pytest.param(" 1", id="blank")])
@pytest.mark.parametrize("endpoint, name", [("events", "after"), ("events", "limit"),
                                            ("legal-moves", "limit")])
def test_a_query_number_that_is_not_ascii_digits_is_400(game: Game, endpoint: str, name: str,
                                                        value: str) -> None:
    before = game.snapshot()
    for headers in ({}, game.mover):
        if endpoint == "legal-moves" and not headers:
            continue
        resp = game.client.get(f"{game.path}/{endpoint}", query_string={name: value},
                               headers=headers)
        assert_problem(resp, 400, field=name)
    assert game.snapshot() == before


def test_query_numbers_of_ascii_digits_still_count(game: Game) -> None:
    assert game.client.post(f"{game.path}/moves", json=DRAW,
                            headers=game.mover).status_code == 200
    page = game.client.get(f"{game.path}/events?after=0&limit=1").get_json()
    assert [e["version"] for e in page["entries"]] == [1]
    page = game.client.get(f"{game.path}/events?after=1").get_json()
    assert page["entries"] == []
    assert_problem(game.client.get(f"{game.path}/events?after=-1"), 400, field="after")
    resp = game.client.get(f"{game.path}/legal-moves?limit=2", headers=game.mover)
    assert resp.status_code == 200


# ---------------------------------------------------------------------------------------
# JSON bodies


def _body_endpoints(game: Game) -> Iterator[tuple[str, str, dict[str, str]]]:
    """Every endpoint that takes a body: (label, path, headers)."""
    yield "create", "/v1/games", {}
    yield "move", f"{game.path}/moves", game.mover
    yield "dry-run", f"{game.path}/moves?dry_run=true", game.mover
    yield "idempotent", f"{game.path}/moves", {**game.mover, "Idempotency-Key": "k-1"}
    yield "meld-check", "/v1/melds/check", {}
    yield "score-hand", "/v1/scores/hand", {}
    yield "join", "/v1/join", {}
    yield "join-idempotent", "/v1/join", {"Idempotency-Key": "j-1"}


@pytest.mark.parametrize("digits", [4301, 5000, 100_000 // 2])
@pytest.mark.parametrize("sign", ["", "-"])
def test_an_integer_longer_than_python_reads_is_400_on_every_body_endpoint(
        game: Game, redis_url: str, digits: int, sign: str) -> None:
    number = sign + "9" * digits
    before, keys = game.snapshot(), key_count(redis_url)
    for label, path, headers in _body_endpoints(game):
        for body in (f'{{"type":"draw","source":{number}}}',
                     f'{{"variant":"basic","players":["a","b"],"dealer":{number}}}',
                     f'{{"variant":"basic","rules":{{"melds_per_turn":{number}}}}}',
                     f'{{"variant":"basic","cards":[{number}]}}',
                     f'[{number}]', number):
            resp = game.client.post(path, data=body, headers=headers,
                                    content_type="application/json")
            assert_problem(resp, 400), label
    assert game.snapshot() == before
    assert key_count(redis_url) == keys


def _nested(depth: int, shape: str) -> str:
    if shape == "list-in-field":
        return '{"type":"draw","source":' + "[" * depth + "]" * depth + "}"
    if shape == "object-in-field":
        return '{"type":"draw","source":' + '{"a":' * depth + "1" + "}" * depth + "}"
    if shape == "objects":
        return '{"a":' * depth + "1" + "}" * depth
    if shape == "lists":
        return "[" * depth + "]" * depth
    if shape == "melds":  # where a move's body does nest: melds of cards
        return ('{"type":"meld","melds":[{"cards":' + "[" * depth + '"7H"' + "]" * depth
                + "}]}")
    raise AssertionError(shape)


@pytest.mark.parametrize("depth", [450, 500, 501, 700, 900, 1000, 1023, 1024, 1025, 3000])
@pytest.mark.parametrize("shape", ["list-in-field", "object-in-field", "objects", "lists",
                                   "melds"])
def test_a_deeply_nested_body_is_400_on_every_body_endpoint(
        game: Game, redis_url: str, depth: int, shape: str) -> None:
    before, keys = game.snapshot(), key_count(redis_url)
    body = _nested(depth, shape)
    for label, path, headers in _body_endpoints(game):
        resp = game.client.post(path, data=body, headers=headers,
                                content_type="application/json")
        assert_problem(resp, 400), label
    assert game.snapshot() == before
    assert key_count(redis_url) == keys


# ---------------------------------------------------------------------------------------
# Joining by code: POST /v1/join and GET /v1/join/{code}


class WaitingGame:
    """A basic game with two of its three seats open, and what a refused join leaves
    alike: its public view and version, its log, what its code shows."""

    def __init__(self, client: FlaskClient) -> None:
        resp = client.post("/v1/games", json={"variant": "basic",
                                              "players": ["Ana", None, None]})
        assert resp.status_code == 201, resp.get_data(as_text=True)
        created = resp.get_json()
        self.client = client
        self.id: str = created["game_id"]
        self.path = f"/v1/games/{self.id}"
        self.code: str = created["join_code"]

    def snapshot(self) -> tuple[Any, ...]:
        public = self.client.get(self.path)
        preview = self.client.get(f"/v1/join/{self.code}")
        log = self.client.get(f"{self.path}/events").get_json()
        assert public.get_json()["status"] == "waiting"
        return public.headers["ETag"], public.get_json(), preview.get_json(), log


@pytest.fixture
def waiting(client: FlaskClient) -> WaitingGame:
    return WaitingGame(client)


def _fullwidth(code: str) -> str:
    """``code`` with its ASCII letters and digits written full width (``Ｋ７``)."""
    return "".join(chr(ord(c) + 0xfee0) if c.isalnum() else c for c in code)


def _arabic_indic(code: str) -> str:
    """``code`` with its digits written as Arabic-Indic ones (``٧``); a code drawn without
    a digit gets one in place of its last character, so that it always changes."""
    if not any(c.isdigit() for c in code):
        code = code[:-1] + "7"
    return "".join(chr(0x0660 + int(c)) if c.isdigit() else c for c in code)


BIG = 10 * 1024
"""A huge value: 10 KB."""

JOIN_BODIES: list[Any] = [
    # (id, body: raw JSON text made from the code, status, the field named)
    pytest.param(lambda c: '{"code": "' + c, 400, "body", id="truncated-json"),
    pytest.param(lambda c: f"code={c}&name=Bo", 400, "body", id="form-encoded"),
    pytest.param(lambda c: json.dumps({"code": c, "name": "Bo"}) + "x", 400, "body",
                 id="trailing-garbage"),
    pytest.param(lambda c: " ", 400, "body", id="blank"),
    pytest.param(lambda c: json.dumps([c, "Bo"]), 400, "body", id="array"),
    pytest.param(lambda c: json.dumps(c), 400, "body", id="string"),
    pytest.param(lambda c: "null", 400, "body", id="null"),
    pytest.param(lambda c: "7", 400, "body", id="number"),
    pytest.param(lambda c: "{}", 400, "code", id="empty-object"),
    pytest.param(lambda c: json.dumps({"name": "Bo"}), 400, "code", id="no-code"),
    pytest.param(lambda c: json.dumps({"code": c}), 400, "name", id="no-name"),
    *(pytest.param(lambda c, v=v: json.dumps({"code": v, "name": "Bo"}), 400, "code",
                   id=f"code-{kind}")
      for kind, v in (("number", 12345678), ("null", None), ("list", ["K7QP", "M2XD"]),
                      ("object", {"code": "K7QP-M2XD"}), ("bool", True))),
    *(pytest.param(lambda c, v=v: json.dumps({"code": c, "name": v}), 400, "name",
                   id=f"name-{kind}")
      for kind, v in (("number", 5), ("null", None), ("list", ["Bo"]), ("object", {}),
                      ("bool", False), ("empty", ""), ("blank", " \t "), ("nul", "Bo\u0000"),
                      ("line-break", "B\no"), ("c1-control", "Bo\u0085"),
                      ("escape", "\u001b[31mBo"))),
    pytest.param(lambda c: '{"code": "' + c + '", "name": "\\ud800Bo"}', 400, "name",
                 id="name-lone-surrogate"),  # JSON's escape of a lone surrogate
    *(pytest.param(lambda c, v=v: json.dumps({"code": c, "name": "Bo", "seat": v}), 400,
                   "seat", id=f"seat-{kind}")
      for kind, v in (("string", "1"), ("float", 1.5), ("integral-float", 1.0),
                      ("bool", True), ("list", [1]), ("object", {"seat": 1}),
                      ("negative", -1), ("not-of-the-game", 3), ("over-any-game", 6),
                      ("huge", 10 ** 30), ("arabic-indic-digit", "\u0661"),
                      ("superscript-digit", "\u00b2"), ("fullwidth-digit", "\uff11"))),
    *(pytest.param(lambda c, v=v: '{"code": "' + c + '", "name": "Bo", "seat": ' + v + "}",
                   400, "seat", id=f"seat-{v}")
      for v in ("NaN", "Infinity", "-Infinity", "1e400")),
    pytest.param(lambda c: json.dumps({"code": c, "name": "x" * BIG}), 400, "name",
                 id="name-10KB"),
    pytest.param(lambda c: json.dumps({"code": c, "name": " " * BIG + "Bo"}), 400, "name",
                 id="name-10KB-of-blanks"),
    pytest.param(lambda c: json.dumps({"code": c + "-" * BIG, "name": "Bo"}), 400, "code",
                 id="code-10KB"),
    pytest.param(lambda c: json.dumps({"code": c, "name": "Bo", "token": "x" * BIG}), 400,
                 "token", id="unknown-field-10KB"),
    pytest.param(lambda c: json.dumps({"code": c, "name": "Bo", "game_id": "x"}), 400,
                 "game_id", id="unknown-field"),
    pytest.param(lambda c: json.dumps({"code": c, "name": "Bo", "Seat": 1}), 400, "Seat",
                 id="unknown-field-case"),
    pytest.param(lambda c: json.dumps({"code": c, "name": "Bo", "x" * BIG: 1}), 400,
                 "x" * BIG, id="unknown-field-name-10KB"),
    # a code that cannot be a join code (no game looked up): 404, naming the code
    *(pytest.param(lambda c, f=f: json.dumps({"code": f(c), "name": "Bo"}), 404, "code",
                   id=f"code-{kind}")
      for kind, f in (("fullwidth", _fullwidth), ("arabic-indic-digits", _arabic_indic),
                      ("superscript-digit", lambda c: c[:-1] + "\u00b2"),
                      ("long-s", lambda c: c[:-1] + "\u017f"),
                      ("nul", lambda c: c[:4] + "\u0000" + c[5:]),
                      ("too-short", lambda c: c[:-1]), ("too-long", lambda c: c + "A"),
                      ("excluded-letters", lambda c: "0OI1-" + c[5:]),
                      ("blank", lambda c: " "))),
]
"""Bodies of ``POST /v1/join`` that take no seat: what is wrong is named (the field)."""


@pytest.mark.parametrize("key", [None, "join-hostile-1"], ids=["no-key", "key"])
@pytest.mark.parametrize("make, status, field", JOIN_BODIES)
def test_a_hostile_join_body_is_a_problem_naming_what_is_wrong(
        waiting: WaitingGame, redis_url: str, make: Any, status: int, field: str,
        key: str | None) -> None:
    """Malformed JSON, wrong types, huge values, unknown fields, seats out of range,
    non-ASCII digits, codes that cannot be codes: each a problem+json (never a 500) whose
    detail and errors name the field, and the game is as it was (no seat taken, no
    version moved on, no key kept)."""
    before, keys = waiting.snapshot(), key_count(redis_url)
    headers = {} if key is None else {"Idempotency-Key": key}
    resp = waiting.client.post("/v1/join", data=make(waiting.code), headers=headers,
                               content_type="application/json")
    problem = assert_problem(resp, status, field=field)
    if status == 400:
        assert problem["code"] == "MALFORMED_REQUEST", problem
        assert field[:40] in problem["detail"], problem
    else:
        assert problem["code"] == "UNKNOWN_JOIN_CODE", problem
        assert "not a join code" in problem["detail"], problem
    named = [e for e in problem["errors"] if e["field"] == field]
    assert named[0]["message"] and len(named[0]["message"]) < 300, problem
    assert waiting.snapshot() == before
    assert key_count(redis_url) == keys
    # the key was kept for nothing: the same key with a good body joins
    ok = waiting.client.post("/v1/join", json={"code": waiting.code, "name": "Bo"},
                             headers=headers)
    assert ok.status_code == 201, ok.get_data(as_text=True)
    assert "Idempotent-Replayed" not in ok.headers


def test_a_seat_out_of_the_game_says_which_seats_it_has(waiting: WaitingGame) -> None:
    before = waiting.snapshot()
    resp = waiting.client.post("/v1/join", json={"code": waiting.code, "name": "Bo",
                                                 "seat": 3})
    problem = assert_problem(resp, 400, {"seat"}, code="MALFORMED_REQUEST")
    assert "0 to 2" in problem["detail"] and "0 to 2" in problem["errors"][0]["message"]
    resp = waiting.client.post("/v1/join", json={"code": waiting.code, "name": "Bo",
                                                 "seat": 0})
    assert_problem(resp, 409, code="SEAT_TAKEN")
    assert waiting.snapshot() == before


@pytest.mark.parametrize("value", ["", " ", "x" * 201, "ключ", "a b", "a\tb", "k\u00b2"])
def test_a_hostile_join_idempotency_key_is_400(waiting: WaitingGame, value: str) -> None:
    before = waiting.snapshot()
    resp = waiting.client.post("/v1/join", json={"code": waiting.code, "name": "Bo"},
                               headers={"Idempotency-Key": value})
    assert_problem(resp, 400, {"Idempotency-Key"}, code="MALFORMED_REQUEST")
    assert waiting.snapshot() == before


def test_a_join_body_that_is_not_json_is_415(waiting: WaitingGame) -> None:
    before = waiting.snapshot()
    body = json.dumps({"code": waiting.code, "name": "Bo"})
    for content_type in ("text/plain", "application/x-www-form-urlencoded"):
        resp = waiting.client.post("/v1/join", data=body, content_type=content_type)
        assert content_type in assert_problem(resp, 415)["detail"]
    assert waiting.snapshot() == before


JOIN_PATHS = [
    pytest.param(lambda c: "K" * BIG, id="10KB"),
    pytest.param(lambda c: quote(_fullwidth(c)), id="fullwidth"),
    pytest.param(lambda c: quote(_arabic_indic(c)), id="arabic-indic-digits"),
    pytest.param(lambda c: quote(c[:-1] + "\u00b2"), id="superscript-digit"),
    pytest.param(lambda c: quote(c[:-1] + "\u017f"), id="long-s"),
    pytest.param(lambda c: c[:4] + "%00" + c[5:], id="nul"),
    pytest.param(lambda c: "%FF%FE%FD", id="not-utf-8"),
    pytest.param(lambda c: "..", id="dot-dot"),
    pytest.param(lambda c: "%20", id="blank"),
    pytest.param(lambda c: c[:-1], id="too-short"),
    pytest.param(lambda c: "0OI1-" + c[5:], id="excluded-letters"),
]
"""Paths of ``GET /v1/join/{code}`` whose code cannot be a join code."""


@pytest.mark.parametrize("make", JOIN_PATHS)
def test_a_hostile_join_code_in_the_path_is_404_naming_the_code(
        waiting: WaitingGame, redis_url: str, make: Any) -> None:
    before, keys = waiting.snapshot(), key_count(redis_url)
    resp = waiting.client.get(f"/v1/join/{make(waiting.code)}")
    problem = assert_problem(resp, 404, {"code"}, code="UNKNOWN_JOIN_CODE")
    assert "not a join code" in problem["detail"] and len(problem["detail"]) < 300
    assert waiting.snapshot() == before
    assert key_count(redis_url) == keys


def test_a_join_code_as_people_type_it_still_counts(waiting: WaitingGame) -> None:
    """The controls: any case, ``-`` and blanks (ASCII or not) anywhere still name the
    game, and a well-formed code no game has is the plain 404."""
    code = waiting.code
    for typed in (code.lower(), f" {code[:4]} {code[5:]} ", "-".join(code.replace("-", "")),
                  f"{code[:4]}\u00a0{code[5:]}"):
        resp = waiting.client.get(f"/v1/join/{quote(typed)}")
        assert resp.status_code == 200, (typed, resp.get_data(as_text=True))
        assert resp.get_json()["game_id"] == waiting.id
    other = "".join("2" if c != "-" else c for c in code) if code[0] != "2" else "3333-3333"
    problem = assert_problem(waiting.client.get(f"/v1/join/{other}"), 404,
                             code="UNKNOWN_JOIN_CODE")
    assert "errors" not in problem and "no game has this join code" in problem["detail"]


# ---------------------------------------------------------------------------------------
# Any header, any value


HEADERS = ["Authorization", "If-Match", "If-None-Match", "Last-Event-ID", "Idempotency-Key",
           "Accept-Language", "Accept", "Content-Type", "X-Request-ID", "X-API-Key",
           "X-Forwarded-For", "Origin", "Range", "If-Modified-Since", "Cookie"]
FIXED_VALUES = ["", " ", '"', '""', "W/", 'W/""', "*", "0", "-0", "00", "-1", "1e3", "0x1",
                "１", "\u00b2", "\u00b3", "\u00b9", "\u0661", "9" * 19, "9" * 5000, "Bearer",
                "Bearer ", "Bearer a.b.c", "Bearer a..b", "Bearer ...", "Bearer a.\u00b2.b",
                "Bearer a.-1.b", "Bearer a.99.b", "bearer x" * 500, "q=\u00b2", "en;q=NaN",
                "en;q=1e999", "da;q=-1", "*;q=0", "text/event-stream", "application/json;"
                "charset=latin-1", "application/json; charset=\u00b2", "\u00ff" * 300,
                "a" * 8000, "%00", "\\x00", "{}", "[]", "null"]


def _random_values(count: int, seed: int) -> list[str]:
    """Latin-1 text as a server decodes header bytes (no control characters)."""
    rng = random.Random(seed)
    alphabet = [chr(c) for c in range(0x20, 0x7f)] + [chr(c) for c in range(0xa0, 0x100)]
    digits = "0123456789\u00b2\u00b3\u00b9"
    out = []
    for _ in range(count):
        pool = digits if rng.random() < 0.5 else alphabet
        out.append("".join(rng.choice(pool) for _ in range(rng.choice([1, 2, 5, 20, 300]))))
    return out


@pytest.mark.random_run
def test_no_header_value_makes_a_500_or_changes_a_game(sse_client: FlaskClient) -> None:
    """Each header with each value, on a move (a dry run, so a legal one changes nothing
    either) and three other endpoints: never a 500, and the game is as it was."""
    client = sse_client
    game = Game(client)
    before = game.snapshot()
    values = FIXED_VALUES + _random_values(24, seed=41)
    rng = random.Random(41)
    requests: list[tuple[str, str, dict[str, Any]]] = [
        ("GET", game.path, {}), ("GET", f"{game.path}/me", {}),
        ("GET", f"{game.path}/legal-moves", {}), ("GET", f"{game.path}/events", {}),
        ("GET", f"{game.path}/verify", {}),
        ("POST", f"{game.path}/moves?dry_run=true", {"json": DRAW}),
        ("POST", "/v1/melds/check", {"json": {"variant": "basic",
                                               "cards": ["7H", "8H", "9H"]}}),
        ("GET", "/v1/variants", {}), ("GET", "/healthz", {}),
    ]
    move = requests[5]
    seen: dict[int, int] = {}
    for name in HEADERS:
        for value in values:
            # the move (a dry run) and three others: each pair on four endpoints
            for method, path, kwargs in [move, *rng.sample(requests, 3)]:
                headers = {**game.mover, name: value}
                if name == "Last-Event-ID":
                    headers["Accept"] = "text/event-stream"
                resp = client.open(path, method=method, headers=headers, **kwargs)
                try:
                    seen[resp.status_code] = seen.get(resp.status_code, 0) + 1
                    busy = resp.status_code == 503 and "event streams" in resp.get_data(
                        as_text=True)  # a stream slot not yet given back: not a failure
                    assert resp.status_code < 500 or busy, (
                        name, value[:40], method, path, resp.get_data(as_text=True)[:300])
                    if resp.status_code >= 400 and resp.status_code != 406:
                        assert resp.mimetype == PROBLEM, (name, value[:40], path)
                finally:
                    resp.close()
    assert game.snapshot() == before
    assert seen.get(400) and seen.get(401) and seen.get(200), seen


# ---------------------------------------------------------------------------------------
# What gunicorn hands on: latin-1 bytes in headers


def _raw(port: int, request: bytes) -> tuple[int, bytes]:
    """Send ``request`` as it is; the status and body of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = [int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:")]
            if length and len(body) >= length[0]:
                break
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), body


@pytest.mark.slow  # a served process
def test_latin1_digits_in_headers_over_http_are_refused_not_500(tmp_path: Path,
                                                                redis_url: str) -> None:
    """Bytes B2, B3, B9 (``²``, ``³``, ``¹`` in latin-1, as gunicorn decodes header bytes)
    in a token's seat, in If-Match and in Last-Event-ID: 401, 400, 400 from a served
    process, and the game unchanged."""
    import requests

    with served(tmp_path, redis_url, workers=1) as server:
        created = requests.post(f"{server.base_url}/v1/games", json={
            "variant": "basic", "players": ["Ana", "Bo"]}, timeout=10).json()
        game_id = created["game_id"]
        turn = created["game"]["turn"]["seat"]
        token = created["seats"][turn]["token"].encode()
        head, _, secret = token.split(b".")
        body = b'{"type":"draw","source":"stock"}'

        def move(headers: bytes) -> tuple[int, bytes]:
            return _raw(server.port, b"POST /v1/games/" + game_id.encode() + b"/moves "
                        b"HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: "
                        b"application/json\r\nContent-Length: " + str(len(body)).encode()
                        + b"\r\n" + headers + b"\r\n" + body)

        def events(headers: bytes) -> tuple[int, bytes]:
            return _raw(server.port, b"GET /v1/games/" + game_id.encode() + b"/events "
                        b"HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAccept: "
                        b"text/event-stream\r\n" + headers + b"\r\n")

        for byte in (b"\xb2", b"\xb3", b"\xb9"):
            status, answer = move(b"Authorization: Bearer " + head + b"." + byte + b"."
                                  + secret + b"\r\n")
            assert status == 401, answer
            status, answer = move(b"Authorization: Bearer " + token + b"\r\nIf-Match: \""
                                  + byte + b"\"\r\n")
            assert (status, json.loads(answer)["errors"][0]["field"]) == (400, "If-Match")
            status, answer = events(b"Last-Event-ID: " + byte + b"\r\n")
            assert (status, json.loads(answer)["errors"][0]["field"]) == (400, "Last-Event-ID")
            status, answer = events(b"Last-Event-ID: " + b"9" * 5000 + b"\r\n")
            assert status == 400, answer
        view = requests.get(f"{server.base_url}/v1/games/{game_id}", timeout=10).json()
        assert view["version"] == 0
        assert "unhandled error" not in server.output()
