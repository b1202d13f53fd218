"""Every numeric knob of every variant is bounded (issue 41, item 2): ``GET /v1/variants``
says each bound, the bound itself is accepted and a game made with it plays, one past it
is a 400 naming ``rules.<knob>``, and nothing is created. Through the Flask test client on
the real Redis."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from _pytest.mark import ParameterSet
from flask.testing import FlaskClient

from service.rules.variants import VARIANTS
from tests.support.deals import auth
from tests.support.redis_servers import key_count

NUMERIC = ("int", "int_or_enum", "match_end")


def _bounds(knob: dict[str, Any]) -> Iterator[tuple[str | None, int, int]]:
    """(match_end key or None, minimum, maximum) of a knob as GET /v1/variants lists it."""
    if knob["type"] == "match_end":
        for key in knob["values"]:
            limits = knob["bounds"][key]
            yield key, limits["minimum"], limits["maximum"]
    else:
        yield None, knob["minimum"], knob["maximum"]


def _cases() -> Iterator[ParameterSet]:
    for variant in VARIANTS.values():
        for knob in variant.knob_list():
            if knob["type"] not in NUMERIC:
                continue
            try:
                bounds = list(_bounds(knob))
            except KeyError:  # a bound missing: test_every_numeric_knob_lists_its_bounds
                continue
            for key, low, high in bounds:
                name = knob["name"] + (f".{key}" if key else "")
                yield pytest.param(variant.id, knob["name"], key, low, high,
                                   id=f"{variant.id}-{name}")


def _value(key: str | None, n: int) -> Any:
    return n if key is None else {key: n}


def _create(client: FlaskClient, variant: str, rules: dict[str, Any]) -> Any:
    return client.post("/v1/games", json={"variant": variant, "players": ["Ana", "Bo"],
                                          "rules": rules})


def test_every_numeric_knob_lists_its_bounds(client: FlaskClient) -> None:
    """A minimum and a maximum for every integer a knob takes (match_end: for each of its
    keys), in GET /v1/variants."""
    missing = []
    for variant in client.get("/v1/variants").get_json()["variants"]:
        for knob in variant["knobs"]:
            if knob["type"] in ("int", "int_or_enum"):
                if not isinstance(knob.get("minimum"), int) or not isinstance(
                        knob.get("maximum"), int):
                    missing.append(f"{variant['id']}.{knob['name']}")
            elif knob["type"] == "match_end":
                bounds = knob.get("bounds", {})
                for key in knob["values"]:
                    limits = bounds.get(key, {})
                    if not (isinstance(limits.get("minimum"), int)
                            and isinstance(limits.get("maximum"), int)):
                        missing.append(f"{variant['id']}.{knob['name']}.{key}")
    assert missing == []


def _play(client: FlaskClient, created: dict[str, Any], moves: int) -> None:
    """``moves`` legal moves (the first each time that legal-moves lists), each 200."""
    path = f"/v1/games/{created['game_id']}"
    tokens = [s["token"] for s in created["seats"]]
    game = created["game"]
    assert game["status"] == "playing", game
    for _ in range(moves):
        if game["status"] != "playing":
            return
        seat = game["turn"]["seat"]
        listed = client.get(f"{path}/legal-moves", headers=auth(tokens[seat]))
        assert listed.status_code == 200, listed.get_data(as_text=True)
        choices = listed.get_json()["moves"]
        assert choices, listed.get_json()
        resp = client.post(f"{path}/moves", json=choices[0], headers=auth(tokens[seat]))
        assert resp.status_code == 200, resp.get_data(as_text=True)
        game = resp.get_json()["game"]


@pytest.mark.parametrize(("variant", "knob", "key", "low", "high"), list(_cases()))
def test_a_numeric_knob_takes_its_bounds_and_refuses_one_past_them(
        client: FlaskClient, redis_url: str, variant: str, knob: str, key: str | None,
        low: int, high: int) -> None:
    for n in (low, high):
        resp = _create(client, variant, {knob: _value(key, n)})
        assert resp.status_code == 201, (n, resp.get_data(as_text=True))
        created = resp.get_json()
        assert created["game"]["rules"][knob] == _value(key, n)
        _play(client, created, 6)
    before = key_count(redis_url)
    for n in (low - 1, high + 1, 2**64, -(2**64), 10**30):
        resp = _create(client, variant, {knob: _value(key, n)})
        assert resp.status_code == 400, (n, resp.get_data(as_text=True))
        assert resp.mimetype == "application/problem+json"
        problem = json.loads(resp.get_data())
        assert [e["field"] for e in problem["errors"]] == [f"rules.{knob}"], problem
        message = problem["errors"][0]["message"]
        assert str(low) in message and str(high) in message, message
    assert key_count(redis_url) == before


def test_melds_per_turn_of_two_to_the_64_is_refused(client: FlaskClient) -> None:
    resp = _create(client, "basic", {"melds_per_turn": 2**64})
    assert resp.status_code == 400, resp.get_data(as_text=True)
    assert [e["field"] for e in resp.get_json()["errors"]] == ["rules.melds_per_turn"]
