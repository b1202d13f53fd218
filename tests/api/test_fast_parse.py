"""The fast path for ``POST …/moves`` arguments (service/api/fastpath.py) agrees with the
marshmallow schemas it stands in for: whatever it accepts, the schema loads unchanged, and
everything else still goes through the schema (same errors, same normalization)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Request
from flask.testing import FlaskClient
from hypothesis import given, settings
from hypothesis import strategies as st

from service.api import fastpath, schemas
from service.referee import documents

CARDS = sorted(fastpath.CARDS)
ODD_CARDS = ["10H", "th", "1S", "XX", "", "JKR"]

card = st.one_of(st.sampled_from(CARDS), st.sampled_from(ODD_CARDS), st.integers(),
                 st.fixed_dictionaries({"card": st.sampled_from(CARDS)},
                                       optional={"as": st.sampled_from(CARDS)}))
cards = st.lists(card, min_size=0, max_size=32)
value = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=25),
                  st.sampled_from(["stock", "discard", "low", "high", "m1", "true"]), card,
                  cards, st.lists(st.fixed_dictionaries({"cards": cards}), max_size=13),
                  st.lists(st.fixed_dictionaries({"cards": cards},
                                                 optional={"x": st.integers()}), max_size=3))
FIELDS = ["source", "card", "meld_id", "cards", "end", "announce", "melds", "take",
          "lay_offs", "other"]
bodies = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from([
        "draw", "meld", "lay_off", "swap_joker", "take_from_meld", "discard", "cut_in", "x",
        3])}, optional={name: value for name in FIELDS}),
    value)


@pytest.mark.slow  # a long random run
@settings(max_examples=3000, deadline=None)
@given(body=bodies)
def test_whatever_the_fast_path_accepts_the_schema_loads_unchanged(body: Any) -> None:
    if fastpath.valid_move(body):
        assert schemas.MoveSchema().load(body) == body


@given(body=st.sampled_from([
    {"type": "draw", "source": "stock"},
    {"type": "discard", "card": "KD", "announce": True},
    {"type": "lay_off", "meld_id": "m3", "cards": ["TH"], "end": "low"},
    {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"]}, {"cards": ["QS", "QD", "JK"]}]},
    {"type": "swap_joker", "meld_id": "m2", "card": "6S"},
    {"type": "cut_in"},
]))
def test_the_usual_moves_take_the_fast_path(body: dict[str, Any]) -> None:
    assert fastpath.valid_move(body)


USUAL_MOVES = [
    {"type": "draw", "source": "stock"},
    {"type": "discard", "card": "KD", "announce": True},
    {"type": "lay_off", "meld_id": "m3", "cards": ["TH"], "end": "low"},
    {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"]}, {"cards": ["QS", "QD", "JK"]}]},
]


def _body(data: bytes) -> dict[str, Any] | None:
    return fastpath.move_body(Request.from_values(method="POST", data=data,
                                                  content_type="application/json"))


def test_the_usual_bodies_take_the_fast_path_however_spaced() -> None:
    for move in USUAL_MOVES:
        for data in (json.dumps(move).encode(), json.dumps(move, separators=(",", ":")).encode(),
                     json.dumps(move, indent=2).encode()):
            assert _body(data) == move, data


def test_a_key_given_twice_is_left_to_the_schema_path() -> None:
    """orjson keeps the last value of a key given twice; the fast path counts the body's
    colons against the keys it read, and leaves such a body (and one with a colon in a
    string) to the schema path, which refuses a key given twice."""
    assert _body(b'{"type": "discard", "card": "5H", "card": "KS"}') is None
    assert _body(b'{"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"], '
                 b'"cards": ["7H", "8H", "9H"]}]}') is None
    assert _body(b'{"type": "lay_off", "meld_id": "m:1", "cards": ["6H"]}') is None


def test_moves_the_fast_path_leaves_to_the_schema_are_still_answered(
        client: FlaskClient) -> None:
    game = client.post("/v1/games", json={"variant": "basic", "players": ["a", "b"]})
    data = game.get_json()
    token = data["seats"][data["game"]["turn"]["seat"]]["token"]
    auth = {"Authorization": f"Bearer {token}"}
    path = f"/v1/games/{data['game_id']}/moves"
    # not valid: the schema's 400 naming the field, as without the fast path
    bad = client.post(path, json={"type": "draw", "source": "deck"}, headers=auth)
    assert bad.status_code == 400
    assert [e["field"] for e in bad.get_json()["errors"]] == ["source"]
    extra = client.post(path, json={"type": "draw", "source": "stock", "card": "KD"},
                        headers=auth)
    assert extra.status_code == 400
    # a dry run (query) and an idempotency key (header) go through the schemas and work
    dry = client.post(path + "?dry_run=true", json={"type": "draw", "source": "stock"},
                      headers=auth)
    assert dry.status_code == 200
    bad_key = client.post(path, json={"type": "draw", "source": "stock"},
                          headers={**auth, "Idempotency-Key": "has space"})
    assert bad_key.status_code == 400
    done = client.post(path, json={"type": "draw", "source": "stock"},
                       headers={**auth, "Idempotency-Key": "k1"})
    assert done.status_code == 200
    assert done.get_json()["game"]["version"] == 1


# ---------------------------------------------------------------------------------------
# The referee's JSON writer (service.referee.documents.encode): orjson's fast path first, its option
# for keys that are not strings only when one needs it, json for what orjson cannot write

scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                    st.text(max_size=12))
docs = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=6), st.integers(-5, 5)), inner,
                        max_size=4)),
    max_leaves=20)


@settings(max_examples=500, deadline=None)
@given(doc=docs)
def test_the_referees_json_reads_back_as_json_writes_it(doc: Any) -> None:
    encoded = documents.encode({"doc": doc})
    assert isinstance(encoded, bytes)
    assert json.loads(encoded) == json.loads(json.dumps({"doc": doc}))


def test_the_referees_json_writes_integer_keys_and_big_integers() -> None:
    assert json.loads(documents.encode({1: "a", "b": {2: [3]}})) == {"1": "a", "b": {"2": [3]}}
    assert json.loads(documents.encode({"n": 2**70, 3: 4})) == {"n": 2**70, "3": 4}
