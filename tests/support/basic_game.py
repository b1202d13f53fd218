"""A basic rummy game through the Flask test client: the deal and the helpers the API
tests share."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from tests.support.deals import arranged, auth
from tests.support.problems import assert_problem

A_HANDS = [["7H", "8H", "9H", "QS", "QD", "QC", "2C", "3C", "4C", "KD"],
           ["TH", "JH", "KS", "KC", "5D", "6D", "7D", "AS", "2S", "8C"]]


A_UPCARD = "5C"


A_STOCK_TOP = ["6H", "9D"]


B_HANDS = [["7H", "8H", "9H", "TH", "QS", "QD", "QC", "2C", "3C", "4C"],
           ["KS", "KH", "5D", "6D", "7D", "AS", "2S", "8C", "9S", "JD"]]
"""Deal B (two players, dealer 1, upcard 5C): seat 0 takes the upcard and goes out at once
with all 11 cards."""


B_COUNT_1 = 10 + 10 + 5 + 6 + 7 + 1 + 2 + 8 + 9 + 10  # 68
"""The count of seat 1's hand in deal B."""


C_HANDS = [["KS", "KH", "KD", "JS", "JH", "JD", "TS", "TD", "9S", "9D"],
           ["7H", "8H", "9H", "TH", "QS", "QD", "QC", "2C", "3C", "4C"]]
"""Deal C, hand 2 after deal B (dealer 0): seat 1 plays first and can go out at once."""


C_COUNT_0 = 8 * 10 + 2 * 9  # 98
"""The count of seat 0's hand in deal C."""


def deal_a() -> dict[str, Any]:
    return arranged(A_HANDS, A_UPCARD, A_STOCK_TOP)


def game_body(players: int = 2, **fields: Any) -> dict[str, Any]:
    """A basic game's creation body: ``players`` seats named Ana, Bo, …, then ``fields``."""
    body = {"variant": "basic", "players": ["Ana", "Bo", "Cy", "Di", "Ed", "Flo"][:players]}
    body.update(fields)
    return body


def create(client: FlaskClient, players: int = 2, **fields: Any) -> TestResponse:
    return client.post("/v1/games", json=game_body(players, **fields))


class CreatedGame:
    """A game created with ``body`` (201): its id, seat tokens and path, and the calls
    every API test's game makes."""

    def __init__(self, client: FlaskClient, body: dict[str, Any]) -> None:
        resp = client.post("/v1/games", json=body)
        assert resp.status_code == 201, resp.get_data(as_text=True)
        self.client = client
        self.created: dict[str, Any] = resp.get_json()
        self.id: str = self.created["game_id"]
        self.tokens: list[str] = [s["token"] for s in self.created["seats"]]

    @property
    def path(self) -> str:
        return f"/v1/games/{self.id}"

    def headers(self, seat: int) -> dict[str, str]:
        return auth(self.tokens[seat])

    def public(self) -> dict[str, Any]:
        resp = self.client.get(self.path)
        assert resp.status_code == 200
        body: dict[str, Any] = resp.get_json()
        return body

    def me(self, seat: int) -> dict[str, Any]:
        resp = self.client.get(f"{self.path}/me", headers=self.headers(seat))
        assert resp.status_code == 200, resp.get_data(as_text=True)
        body: dict[str, Any] = resp.get_json()
        return body

    def ok(self, seat: int, body: Any) -> dict[str, Any]:
        """A legal move: 200, the version one more than before (answer and ETag)."""
        before = self.public()["version"]
        resp = self.client.post(f"{self.path}/moves", json=body, headers=self.headers(seat))
        assert resp.status_code == 200, (body, resp.get_data(as_text=True))
        answer: dict[str, Any] = resp.get_json()
        assert answer["game"]["version"] == before + 1
        assert resp.headers["ETag"] == f'"{before + 1}"'
        return answer


class Game(CreatedGame):
    """A created basic game (:func:`game_body`) and helpers to call it."""

    def __init__(self, client: FlaskClient, **fields: Any) -> None:
        super().__init__(client, game_body(**fields))

    def move(self, seat: int, body: Any, headers: dict[str, str] | None = None,
             query: str = "") -> TestResponse:
        return self.client.post(f"{self.path}/moves{query}", json=body,
                                headers={**auth(self.tokens[seat]), **(headers or {})})

    def ok(self, seat: int, body: Any, headers: dict[str, str] | None = None) -> dict[str, Any]:
        """Apply a legal move; check 200, version + 1 and the ETag; the answer."""
        before = self.version()
        resp = self.move(seat, body, headers)
        assert resp.status_code == 200, resp.get_data(as_text=True)
        assert resp.mimetype == "application/json"
        answer: dict[str, Any] = resp.get_json()
        assert answer["game"]["version"] == before + 1
        assert resp.headers["ETag"] == f'"{before + 1}"'
        assert resp.headers["Cache-Control"] == "no-store"
        assert answer["game"]["seat"] == seat
        assert self.version() == before + 1
        return answer

    def version(self) -> int:
        version: int = self.public()["version"]
        return version

    def snapshot(self) -> tuple[str, dict[str, Any], list[dict[str, Any]]]:
        """ETag, public view and every seat view: what a refused request must not change."""
        resp = self.client.get(self.path)
        return (resp.headers["ETag"], resp.get_json(),
                [self.me(seat) for seat in range(len(self.tokens))])

    def refused(self, seat: int, body: Any, code: str, rule: str | None,
                headers: dict[str, str] | None = None, query: str = "") -> dict[str, Any]:
        """The move is refused with 422 ``code``/``rule`` and nothing changes."""
        before = self.snapshot()
        resp = self.move(seat, body, headers, query)
        problem = assert_problem(resp, 422, code=code)
        if rule is not None:
            assert problem["rule"] == rule, problem
        assert self.snapshot() == before
        return problem


def strings(value: Any) -> Iterator[str]:
    """Every string (keys included) anywhere in a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
