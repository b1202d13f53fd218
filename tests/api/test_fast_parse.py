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
from marshmallow import ValidationError

from service.api import fastpath, schemas
from service.referee import documents
from service.rules.moves import MOVE_TYPES

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
takes = st.lists(st.fixed_dictionaries({"meld_id": st.sampled_from(["m1", "", "m" * 21]),
                                        "card": card}), max_size=9)
lay_offs = st.lists(st.fixed_dictionaries(
    {"meld_id": st.sampled_from(["m1", "", 4]), "cards": cards},
    optional={"end": st.sampled_from(["low", "high", "mid"])}), max_size=3)
FIELDS = ["source", "card", "meld_id", "cards", "end", "announce", "melds", "take",
          "lay_offs", "other"]
field_values = {name: value for name in FIELDS} | {
    "take": st.one_of(takes, value), "lay_offs": st.one_of(lay_offs, value)}
good_cards = st.lists(st.sampled_from(CARDS), min_size=1, max_size=4)
good_melds = st.lists(st.fixed_dictionaries({"cards": good_cards}), max_size=3)
good = {  # mostly valid values of each field, sometimes anything
    "source": st.sampled_from(["stock", "discard"]), "card": st.sampled_from(CARDS),
    "meld_id": st.sampled_from(["m1", "m12"]), "cards": good_cards, "melds": good_melds,
    "end": st.sampled_from(["low", "high"]), "announce": st.booleans(),
    "take": st.lists(st.fixed_dictionaries({"meld_id": st.just("m1"),
                                            "card": st.sampled_from(CARDS)}), max_size=2),
    "lay_offs": st.lists(st.fixed_dictionaries({"meld_id": st.just("m2"), "cards": good_cards},
                                               optional={"end": st.just("low")}), max_size=2),
}
near = {name: st.integers(0, 3).flatmap(
    lambda i, good=strategy, any_value=field_values[name]: good if i else any_value)
    for name, strategy in good.items()}


def _typed(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    """Bodies of one move type, mostly valid: its fields, now and then one of another."""
    own = {n for n in schemas.MOVE_SCHEMAS[kind]().fields if n != "type"}
    required = {n for n, f in schemas.MOVE_SCHEMAS[kind]().fields.items()
                if f.required and n != "type"}
    foreign = st.sampled_from(sorted(set(FIELDS) - own))
    return st.fixed_dictionaries(
        {"type": st.just(kind), **{n: near[n] for n in required}},
        optional={n: near[n] for n in own - required}).flatmap(
        lambda body: st.integers(0, 3).flatmap(lambda i: st.just(body) if i else foreign.map(
            lambda name: {**body, name: "KD"})))


bodies = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from([*MOVE_TYPES, "x", 3])},
                          optional=field_values),
    *[_typed(kind) for kind in MOVE_TYPES],
    value)


def schema_answer(body: Any) -> Any:
    """What ``MoveSchema`` loads from ``body``: the engine's move, or its errors."""
    try:
        return schemas.MoveSchema().load(body)
    except ValidationError as exc:
        return exc.messages


@pytest.mark.random_run
@settings(max_examples=3000, deadline=None)
@given(body=bodies)
def test_whatever_the_fast_path_accepts_the_schema_loads_as_the_same_move(body: Any) -> None:
    """The fast path's answer is the schema's: the same move, and none where the schema
    answers errors."""
    fast = fastpath.move_of(body)
    if fast is not None:
        assert schema_answer(body) == fast


@given(body=st.sampled_from([
    {"type": "draw", "source": "stock"},
    {"type": "discard", "card": "KD", "announce": True},
    {"type": "lay_off", "meld_id": "m3", "cards": ["TH"], "end": "low"},
    {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"]}, {"cards": ["QS", "QD", "JK"]}]},
    {"type": "swap_joker", "meld_id": "m2", "card": "6S"},
    {"type": "cut_in"},
    {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"]}],
     "lay_offs": [{"meld_id": "m1", "cards": ["5S"], "end": "high"}]},
    {"type": "take_from_meld", "take": [{"meld_id": "m1", "card": "5S"}],
     "melds": [{"cards": ["5S", "5H", "5D"]}]},
    {"type": "knock", "card": "KD", "melds": [{"cards": ["7H", "8H", "9H"]}]},
    {"type": "lay_out", "melds": [], "lay_offs": []},
    {"type": "pass"},
]))
def test_the_usual_moves_take_the_fast_path(body: dict[str, Any]) -> None:
    assert fastpath.valid_move(body)
    assert fastpath.move_of(body) == schema_answer(body)


def test_a_moves_schema_is_its_types() -> None:
    """One schema per type: a field of another type is not one of this type's, a missing
    one is required for it, and without a known type only the type is told."""
    assert schema_answer({"type": "draw", "source": "stock", "card": "KD", "zz": 1}) == {
        "card": ["not a field of a draw move"],
        "zz": ["unknown field; this object takes: type, source"]}
    assert schema_answer({"type": "lay_off", "cards": ["6H"]}) == {
        "meld_id": ["required for a lay_off move"]}
    assert set(schema_answer({"type": "fold", "card": 3})) == {"type"}
    assert schema_answer({"source": "stock"}) == {"type": ["Missing data for required field."]}


def test_the_fast_path_keeps_the_schemas_limits() -> None:
    """Its checks come from the schemas' validators: a list at a schema's limit takes the
    fast path, one card or meld over it does not (and the schema refuses it)."""
    run = [CARDS[i] for i in range(schemas.MAX_MELD_CARDS + 1)]
    for body, limit in (
            ({"type": "lay_off", "meld_id": "m1", "cards": run}, schemas.MAX_MELD_CARDS),
            ({"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"]}] * 13},
             schemas.MAX_MELDS)):
        key = "cards" if "cards" in body else "melds"
        at_limit = {**body, key: body[key][:limit]}
        assert fastpath.move_of(at_limit) == schema_answer(at_limit)
        assert fastpath.move_of(body) is None
        assert isinstance(schema_answer(body), dict)  # errors


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
