"""The HTTP contract (API.md) through the Flask test client, on the real Redis.

Games that need a known outcome use arranged deals (API.md "Creating a game"): the deck,
the hands, the upcard and the stock order are fixed, so every move's result is known.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from flask.testing import FlaskClient

from tests.support.basic_game import (
    A_HANDS,
    A_UPCARD,
    B_COUNT_1,
    B_HANDS,
    C_COUNT_0,
    C_HANDS,
    Game,
    create,
    deal_a,
    strings,
)
from tests.support.deals import arranged, auth
from tests.support.http_player import FlaskTransport, HttpPlayer
from tests.support.problems import assert_problem

DECK = [rank + suit for suit in "SHDC" for rank in "A23456789TJQK"]
KNOB_NAMES = ["ace", "melds_per_turn", "lay_off_requires_own_meld", "must_discard_to_go_out",
              "scoring", "going_rummy", "stock_exhausted", "max_stock_rebuilds", "match_end",
              "clock"]
PUBLIC_KEYS = {"game_id", "variant", "rules", "status", "hand_number", "dealer", "turn",
               "version", "stock_count", "discard_top", "discard_count", "seats", "melds",
               "hands_played", "winners", "arranged"}
SEAT_KEYS = {"seat", "name", "hand_count", "opened", "total"}

# The arranged deals of tests/support/basic_game.py:
# Deal A (two players, dealer 1: seat 0 plays first). Seat 0 holds a run, a set and a
# club run; the upcard is 5C; the stock starts 6H, 9D.
# Deal B: seat 0 can go out at once (all 11 cards after taking the upcard 5C).
# Deal C (hand 2 after deal B; dealer 0: seat 1 plays first and can go out at once).


# ---------------------------------------------------------------------------------------
# GET /v1/variants


def test_variants_list_basic_with_every_knob(client: FlaskClient) -> None:
    resp = client.get("/v1/variants")
    assert resp.status_code == 200
    assert resp.mimetype == "application/json"
    variants = {v["id"]: v for v in resp.get_json()["variants"]}
    basic = variants["basic"]
    assert basic["rules"] == {
        "ace": "low", "melds_per_turn": "unlimited", "lay_off_requires_own_meld": False,
        "must_discard_to_go_out": False, "scoring": "winner_collects", "going_rummy": "double",
        "stock_exhausted": "shuffle", "max_stock_rebuilds": 3, "match_end": {"target": 150},
        "clock": None}
    knobs = {k["name"]: k for k in basic["knobs"]}
    assert [k["name"] for k in basic["knobs"]] == KNOB_NAMES
    expected = {  # name: (type, rule, allowed values)
        "ace": ("enum", "C-RUN", ["low", "high_or_low", "around"]),
        "melds_per_turn": ("int_or_enum", "BASIC-MELDS-PER-TURN", ["unlimited"]),
        "lay_off_requires_own_meld": ("bool", "BASIC-LAYOFF", None),
        "must_discard_to_go_out": ("bool", "BASIC-OUT", None),
        "scoring": ("enum", "BASIC-SCORE", ["winner_collects", "penalty"]),
        "going_rummy": ("enum", "BASIC-RUMMY", ["double", "bonus10", "off"]),
        "stock_exhausted": ("enum", "C-STOCK", ["turn_over", "shuffle", "end_hand"]),
        "max_stock_rebuilds": ("int", "C-STOCK", None),
        "match_end": ("match_end", "BASIC-END", ["target", "deals"]),
        "clock": ("clock", "C-CLOCK", ["turn_seconds"]),
    }
    for name, (kind, rule, values) in expected.items():
        knob = knobs[name]
        assert knob["type"] == kind, knob
        assert knob["rule"] == rule, knob
        assert "default" in knob, knob
        assert isinstance(knob["description"], str) and knob["description"], knob
        if values is not None:
            assert knob["values"] == values, knob
    assert knobs["melds_per_turn"]["minimum"] == 1
    assert knobs["max_stock_rebuilds"]["minimum"] == 0
    assert knobs["max_stock_rebuilds"]["nullable"] is True


def test_variant_knob_defaults_are_the_default_rules(client: FlaskClient) -> None:
    """Each knob's advertised ``default`` is the variant's default value (RULES.md)."""
    basic = next(v for v in client.get("/v1/variants").get_json()["variants"]
                 if v["id"] == "basic")
    assert {k["name"]: k["default"] for k in basic["knobs"]} == basic["rules"]


@pytest.mark.parametrize("path", ["/v1/variants", "/openapi.json"])
def test_a_deployment_document_can_be_cached_and_revalidated(client: FlaskClient,
                                                             path: str) -> None:
    first = client.get(path)
    etag = first.headers["ETag"]
    assert first.status_code == 200 and first.headers["Cache-Control"] == "public, max-age=300"
    assert etag.startswith('"') and etag.endswith('"') and len(etag) > 10
    again = client.get(path)
    assert again.headers["ETag"] == etag and again.data == first.data
    for tag in (etag, f"W/{etag}", f'"x", {etag}'):
        fresh = client.get(path, headers={"If-None-Match": tag})
        assert (fresh.status_code, fresh.data, fresh.headers["ETag"]) == (304, b"", etag), tag
        assert fresh.headers["Cache-Control"] == "public, max-age=300"
    stale = client.get(path, headers={"If-None-Match": '"12"'})
    assert stale.status_code == 200 and stale.data == first.data
    head = client.head(path)
    assert head.status_code == 200 and head.headers["ETag"] == etag


@pytest.mark.parametrize("path", ["/v1/variants", "/openapi.json"])
def test_every_replica_gives_a_deployment_document_the_same_etag(path: str) -> None:
    """The ETag is made from the body in each worker; workers and replicas (other hash
    seeds, so other set orders) must agree, or a client behind a balancer reads it anew."""
    code = ("from service.app import create_app; "
            f"print(create_app().test_client().get({path!r}).headers['ETag'])")
    tags = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env=os.environ | {"PYTHONHASHSEED": str(seed),
                                                         "REDIS_URL": "redis://127.0.0.1:1/0"}
                           ).stdout.strip() for seed in (1, 2, 3)}
    assert len(tags) == 1 and len(next(iter(tags))) == 22, tags  # 20 digits and quotes


def test_every_advertised_default_is_an_accepted_value(client: FlaskClient) -> None:
    basic = next(v for v in client.get("/v1/variants").get_json()["variants"]
                 if v["id"] == "basic")
    for knob in basic["knobs"]:
        resp = create(client, rules={knob["name"]: knob["default"]})
        assert resp.status_code == 201, (knob["name"], resp.get_data(as_text=True))
        assert resp.get_json()["game"]["rules"] == basic["rules"]


# ---------------------------------------------------------------------------------------
# POST /v1/games


def test_create_game(client: FlaskClient) -> None:
    resp = create(client, players=3, rules={"ace": "high_or_low", "match_end": {"deals": 3}},
                  dealer=2)
    assert resp.status_code == 201
    assert resp.mimetype == "application/json"
    body = resp.get_json()
    game_id = body["game_id"]
    assert isinstance(game_id, str) and game_id
    assert resp.headers["Location"] == f"/v1/games/{game_id}"
    assert [(s["seat"], s["name"]) for s in body["seats"]] == [(0, "Ana"), (1, "Bo"), (2, "Cy")]
    tokens = [s["token"] for s in body["seats"]]
    assert all(isinstance(t, str) and len(t) >= 16 for t in tokens)
    assert len(set(tokens)) == 3
    view = body["game"]
    assert set(view) >= PUBLIC_KEYS
    assert "hand" not in view
    assert view["game_id"] == game_id
    assert view["variant"] == "basic"
    assert view["rules"]["ace"] == "high_or_low"
    assert view["rules"]["match_end"] == {"deals": 3}
    assert view["rules"]["melds_per_turn"] == "unlimited"
    assert view["status"] == "playing"
    assert view["hand_number"] == 1
    assert view["dealer"] == 2
    assert view["turn"] == {"seat": 0, "phase": "draw"}
    assert view["version"] == 0
    assert view["stock_count"] == 52 - 3 * 7 - 1
    assert view["discard_count"] == 1
    assert view["discard_top"] in DECK
    assert [{k: s[k] for k in SEAT_KEYS} for s in view["seats"]] == [
        {"seat": i, "name": n, "hand_count": 7, "opened": False, "total": 0}
        for i, n in enumerate(["Ana", "Bo", "Cy"])]
    assert view["melds"] == []
    assert view["hands_played"] == []
    assert view["winners"] is None
    assert view["arranged"] is False
    # the game is stored: its public view is the one the creation answered
    fetched = client.get(resp.headers["Location"])
    assert fetched.status_code == 200
    assert fetched.get_json() == view


@pytest.mark.parametrize(("players", "size"), [(2, 10), (3, 7), (4, 7), (5, 6), (6, 6)])
def test_create_deals_the_basic_hand_sizes(client: FlaskClient, players: int, size: int) -> None:
    resp = create(client, players=players)
    assert resp.status_code == 201
    view = resp.get_json()["game"]
    assert [s["hand_count"] for s in view["seats"]] == [size] * players
    assert view["stock_count"] == 52 - players * size - 1
    assert 0 <= view["dealer"] < players
    assert view["turn"] == {"seat": (view["dealer"] + 1) % players, "phase": "draw"}


def test_create_with_arranged_deals(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])
    view = game.created["game"]
    assert view["arranged"] is True
    assert view["discard_top"] == A_UPCARD
    assert view["stock_count"] == 31
    assert view["turn"] == {"seat": 0, "phase": "draw"}
    public = client.get(game.path)
    assert public.status_code == 200
    assert public.headers["ETag"] == '"0"'
    assert public.get_json()["arranged"] is True
    for seat in (0, 1):
        me = game.me(seat)
        assert me["arranged"] is True
        assert sorted(me["hand"]) == sorted(A_HANDS[seat])
    answer = game.ok(0, {"type": "draw", "source": "stock"})
    assert answer["game"]["arranged"] is True
    assert "6H" in answer["game"]["hand"]


def test_a_view_read_again_at_the_same_version_is_304_not_modified(
        client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])
    me, seat = f"{game.path}/me", auth(game.tokens[0])
    for path, headers in ((game.path, {}), (me, seat)):
        first = client.get(path, headers=headers)
        assert first.headers["ETag"] == '"0"'
        for held in ('"0"', 'W/"0"', '"7", "0"', "*"):
            again = client.get(path, headers={**headers, "If-None-Match": held})
            assert again.status_code == 304, (path, held)
            assert again.data == b"" and again.headers["ETag"] == '"0"'
            assert again.headers.get("Cache-Control") == first.headers.get("Cache-Control")
        assert client.get(path, headers={**headers, "If-None-Match": '"1"'}).get_json() \
            == first.get_json()
    # the seat view of another seat is not the one held: its token is checked first
    assert_problem(client.get(me, headers={**auth("not-a-token"), "If-None-Match": '"0"'}),
                   401)
    game.ok(0, {"type": "draw", "source": "stock"})
    for path, headers in ((game.path, {}), (me, seat)):
        moved = client.get(path, headers={**headers, "If-None-Match": '"0"'})
        assert moved.status_code == 200 and moved.headers["ETag"] == '"1"'
        assert moved.get_json()["version"] == 1


def test_arranged_deal_accepts_10_for_t_and_answers_canonical_codes(
        client: FlaskClient) -> None:
    deal = deal_a()
    deal["hands"] = [[("10H" if c == "TH" else c) for c in h] for h in deal["hands"]]
    game = Game(client, dealer=1, deals=[deal])
    assert "TH" in game.me(1)["hand"]
    assert "10H" not in json.dumps(game.me(1))


def test_create_refuses_malformed_json(client: FlaskClient) -> None:
    resp = client.post("/v1/games", data='{"variant": "basic", "players": [',
                       content_type="application/json")
    assert_problem(resp, 400, fields={"body"})


@pytest.mark.parametrize("body", [[1, 2], "basic", 42, None])
def test_create_refuses_a_body_that_is_not_an_object(client: FlaskClient, body: Any) -> None:
    resp = client.post("/v1/games", data=json.dumps(body), content_type="application/json")
    assert_problem(resp, 400, fields={"body"})


@pytest.mark.parametrize("name", ["", "   ", "\t", "Ana\u0000", "Ana\n", "Bo\r\nX-Evil: 1",
                                  "\u001b[31mred", "x\u0085", "x" * 41])
def test_create_refuses_a_blank_name_or_one_with_control_characters(
        client: FlaskClient, name: str) -> None:
    resp = client.post("/v1/games", json={"variant": "basic", "players": ["Ana", name]})
    assert_problem(resp, 400, fields={"players.1"})


@pytest.mark.parametrize("name", ["Ana Bo", " Cy ", "José", "Łukasz", "Åsa", "李", "🂡 Ace",
                                  "x" * 40])
def test_create_takes_any_other_name(client: FlaskClient, name: str) -> None:
    resp = client.post("/v1/games", json={"variant": "basic", "players": [name, "Bo"]})
    assert resp.status_code == 201, resp.get_data(as_text=True)
    assert resp.get_json()["seats"][0]["name"] == name


def test_create_refuses_wrong_types_naming_each_field(client: FlaskClient) -> None:
    resp = client.post("/v1/games", json={"variant": 1, "players": "Ana", "dealer": "x",
                                          "rules": [], "deals": {}})
    assert_problem(resp, 400, fields={"variant", "players", "dealer", "rules", "deals"})


def test_create_refuses_missing_fields_and_unknown_fields(client: FlaskClient) -> None:
    assert_problem(client.post("/v1/games", json={}), 400, fields={"variant", "players"})
    resp = create(client, colour="red")
    assert_problem(resp, 400, fields={"colour"})


@pytest.mark.parametrize("players", [1, 7])
def test_create_refuses_1_or_7_players(client: FlaskClient, players: int) -> None:
    resp = client.post("/v1/games", json={"variant": "basic",
                                          "players": [f"P{i}" for i in range(players)]})
    assert_problem(resp, 400, fields={"players"})


def test_create_refuses_an_empty_player_name(client: FlaskClient) -> None:
    resp = client.post("/v1/games", json={"variant": "basic", "players": ["Ana", ""]})
    assert_problem(resp, 400, fields={"players.1"})


def test_create_refuses_an_unknown_variant(client: FlaskClient) -> None:
    resp = client.post("/v1/games", json={"variant": "canasta", "players": ["Ana", "Bo"]})
    problem = assert_problem(resp, 400, fields={"variant"})
    assert "canasta" in problem["detail"] + json.dumps(problem["errors"])


@pytest.mark.parametrize(("rules", "field"), [
    ({"jokers": 2}, "rules.jokers"),
    ({"ace": "sideways"}, "rules.ace"),
    ({"ace": 1}, "rules.ace"),
    ({"melds_per_turn": 0}, "rules.melds_per_turn"),
    ({"melds_per_turn": "lots"}, "rules.melds_per_turn"),
    ({"lay_off_requires_own_meld": "yes"}, "rules.lay_off_requires_own_meld"),
    ({"must_discard_to_go_out": 1}, "rules.must_discard_to_go_out"),
    ({"scoring": "golf"}, "rules.scoring"),
    ({"going_rummy": "triple"}, "rules.going_rummy"),
    ({"stock_exhausted": "panic"}, "rules.stock_exhausted"),
    ({"max_stock_rebuilds": -1}, "rules.max_stock_rebuilds"),
    ({"max_stock_rebuilds": "many"}, "rules.max_stock_rebuilds"),
    ({"match_end": {"target": 0}}, "rules.match_end"),
    ({"match_end": {"hands": 3}}, "rules.match_end"),
    ({"match_end": {"target": 100, "deals": 2}}, "rules.match_end"),
    ({"match_end": 150}, "rules.match_end"),
])
def test_create_refuses_an_unknown_knob_or_a_bad_value(
        client: FlaskClient, rules: dict[str, Any], field: str) -> None:
    assert_problem(create(client, rules=rules), 400, fields={field})


@pytest.mark.parametrize("dealer", [2, -1, 6, "0", True])
def test_create_refuses_a_bad_dealer(client: FlaskClient, dealer: Any) -> None:
    assert_problem(create(client, dealer=dealer), 400, fields={"dealer"})


def test_create_refuses_a_deal_missing_a_card(client: FlaskClient) -> None:
    deal = deal_a()
    missing = deal["stock"].pop()
    problem = assert_problem(create(client, dealer=1, deals=[deal]), 400, fields={"deals.0"})
    assert missing in json.dumps(problem["errors"])


def test_create_refuses_a_deal_with_a_card_too_many(client: FlaskClient) -> None:
    deal = deal_a()
    deal["stock"].append("JK")
    assert_problem(create(client, dealer=1, deals=[deal]), 400, fields={"deals.0"})


def test_create_refuses_an_unknown_card_code_in_a_deal(client: FlaskClient) -> None:
    deal = deal_a()
    deal["hands"][0][3] = "QX"
    assert_problem(create(client, dealer=1, deals=[deal]), 400,
                   fields={"deals.0.hands.0.3"})
    deal = deal_a()
    deal["stock"][4] = "1S"
    assert_problem(create(client, dealer=1, deals=[deal]), 400, fields={"deals.0.stock.4"})


def test_create_refuses_a_duplicate_card_in_a_one_deck_game(client: FlaskClient) -> None:
    deal = deal_a()
    deal["stock"][-1] = "7H"  # also in seat 0's hand; the replaced card is then missing
    problem = assert_problem(create(client, dealer=1, deals=[deal]), 400, fields={"deals.0"})
    assert "7H" in json.dumps(problem["errors"])


def test_create_refuses_hands_of_the_wrong_size(client: FlaskClient) -> None:
    deal = deal_a()
    deal["hands"][0].append(deal["stock"].pop())  # 11 cards, still the whole deck
    assert_problem(create(client, dealer=1, deals=[deal]), 400, fields={"deals.0.hands.0"})
    deal = deal_a()
    deal["hands"] = [*deal["hands"], []]
    assert_problem(create(client, dealer=1, deals=[deal]), 400, fields={"deals.0.hands"})


def test_create_refuses_a_bad_second_deal(client: FlaskClient) -> None:
    second = arranged(C_HANDS, "5C")
    second["hands"][1] = second["hands"][1][:-1]
    resp = create(client, dealer=1, deals=[arranged(B_HANDS, "5C"), second])
    assert_problem(resp, 400, fields={"deals.1.hands.1"})


def test_create_refuses_a_body_over_64_kib(client: FlaskClient) -> None:
    prefix, suffix = '{"variant": "basic", "players": ["Ana", "Bo"], "note": "', '"}'
    size = 64 * 1024 + 1
    body = prefix + "x" * (size - len(prefix) - len(suffix)) + suffix
    assert len(body.encode()) == size
    resp = client.post("/v1/games", data=body, content_type="application/json")
    assert_problem(resp, 413)
    # just under the limit the body is read (and refused for its unknown field)
    body = prefix + "x" * (size - 2 - len(prefix) - len(suffix)) + suffix
    assert_problem(client.post("/v1/games", data=body, content_type="application/json"),
                   400, fields={"note"})


# ---------------------------------------------------------------------------------------
# GET /v1/games/{id} and /me


def test_public_view_hides_every_hidden_card(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])
    resp = client.get(game.path)
    assert resp.status_code == 200
    assert resp.mimetype == "application/json"
    assert resp.headers["ETag"] == '"0"'
    view = resp.get_json()
    assert set(view) >= PUBLIC_KEYS
    assert "hand" not in view
    hidden = set(A_HANDS[0]) | set(A_HANDS[1]) | set(deal_a()["stock"])
    assert not hidden & set(strings(view))
    assert view["discard_top"] == A_UPCARD
    game.ok(0, {"type": "draw", "source": "stock"})
    resp = client.get(game.path)
    assert resp.headers["ETag"] == '"1"'
    view = resp.get_json()
    assert view["version"] == 1
    assert not hidden & set(strings(view))


def test_seat_view_adds_the_own_hand(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])
    public = game.public()
    for seat in (0, 1):
        resp = client.get(f"{game.path}/me", headers=auth(game.tokens[seat]))
        assert resp.status_code == 200
        assert resp.mimetype == "application/json"
        assert resp.headers["Cache-Control"] == "no-store"
        assert resp.headers["ETag"] == '"0"'
        me = resp.get_json()
        assert sorted(me["hand"]) == sorted(A_HANDS[seat])
        assert {k: me[k] for k in public} == public
        other = set(A_HANDS[1 - seat]) | set(deal_a()["stock"])
        assert not other & set(strings(me))


def test_unknown_game_is_404(client: FlaskClient) -> None:
    game = Game(client)
    for path in ("/v1/games/no-such-game", "/v1/games/no-such-game/me"):
        assert_problem(client.get(path, headers=auth(game.tokens[0])), 404)
    resp = client.post("/v1/games/no-such-game/moves", json={"type": "draw", "source": "stock"},
                       headers=auth(game.tokens[0]))
    assert_problem(resp, 404)


def _bad_authorizations(game: Game, other: Game) -> list[tuple[dict[str, str], int]]:
    secret = game.tokens[0].rsplit(".", 1)[1]
    return [
        ({}, 401),
        ({"Authorization": "Bearer"}, 401),
        ({"Authorization": "Bearer "}, 401),
        ({"Authorization": "Bearer not-a-token"}, 401),
        ({"Authorization": f"Basic {game.tokens[0]}"}, 401),
        ({"Authorization": game.tokens[0]}, 401),
        (auth(f"{game.id}.0.{'x' * len(secret)}"), 401),
        (auth(f"{game.id}.1.{secret}"), 401),
        (auth(f"{game.id}.7.{secret}"), 401),
        (auth(f"nosuchgame.0.{secret}"), 401),
        (auth(other.tokens[0]), 403),
        (auth(other.tokens[1]), 403),
    ]


def test_seat_view_needs_the_token_of_a_seat_of_this_game(client: FlaskClient) -> None:
    game, other = Game(client), Game(client)
    for headers, status in _bad_authorizations(game, other):
        resp = client.get(f"{game.path}/me", headers=headers)
        problem = assert_problem(resp, status)
        assert "hand" not in problem, headers


def test_moves_need_the_token_of_a_seat_of_this_game(client: FlaskClient) -> None:
    game, other = Game(client, dealer=1, deals=[deal_a()]), Game(client)
    before = game.snapshot()
    for headers, status in _bad_authorizations(game, other):
        resp = client.post(f"{game.path}/moves", json={"type": "draw", "source": "stock"},
                           headers=headers)
        assert_problem(resp, status)
    assert game.snapshot() == before


# ---------------------------------------------------------------------------------------
# POST …/moves: legal moves


def test_a_hand_played_with_every_legal_move_type(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])

    answer = game.ok(0, {"type": "draw", "source": "stock"})
    view = answer["game"]
    assert view["turn"] == {"seat": 0, "phase": "play"}
    assert sorted(view["hand"]) == sorted([*A_HANDS[0], "6H"])
    assert view["stock_count"] == 30
    assert [e["type"] for e in answer["events"]] == ["draw"]

    # two melds in one action, cards in any order
    answer = game.ok(0, {"type": "meld", "melds": [{"cards": ["9H", "7H", "8H"]},
                                                   {"cards": ["QC", "QS", "QD"]}]})
    view = answer["game"]
    assert [(m["meld_id"], m["owner"], m["kind"]) for m in view["melds"]] == [
        ("m1", 0, "run"), ("m2", 0, "set")]
    assert view["melds"][0]["cards"] == ["7H", "8H", "9H"]
    assert sorted(view["melds"][1]["cards"]) == ["QC", "QD", "QS"]
    assert all(m["wilds"] == [] for m in view["melds"])
    assert sorted(view["hand"]) == sorted(["2C", "3C", "4C", "KD", "6H"])
    assert view["seats"][0]["hand_count"] == 5
    assert view["seats"][0]["opened"] is True
    assert view["seats"][1]["opened"] is False

    answer = game.ok(0, {"type": "lay_off", "meld_id": "m1", "cards": ["6H"]})
    assert answer["game"]["melds"][0]["cards"] == ["6H", "7H", "8H", "9H"]

    answer = game.ok(0, {"type": "discard", "card": "KD"})
    view = answer["game"]
    assert view["turn"] == {"seat": 1, "phase": "draw"}
    assert view["discard_top"] == "KD"
    assert view["discard_count"] == 2
    assert sorted(view["hand"]) == ["2C", "3C", "4C"]

    answer = game.ok(1, {"type": "draw", "source": "discard"})
    assert "KD" in answer["game"]["hand"]
    assert answer["game"]["discard_top"] == A_UPCARD
    answer = game.ok(1, {"type": "lay_off", "meld_id": "m1", "cards": ["JH", "TH"],
                         "end": "high"})
    assert answer["game"]["melds"][0]["cards"] == ["6H", "7H", "8H", "9H", "TH", "JH"]
    answer = game.ok(1, {"type": "meld", "melds": [{"cards": ["KS", "KC", "KD"]}]})
    assert [(m["meld_id"], m["owner"], m["kind"]) for m in answer["game"]["melds"]][-1] == (
        "m3", 1, "set")
    answer = game.ok(1, {"type": "discard", "card": "8C"})
    assert sorted(answer["game"]["hand"]) == sorted(["5D", "6D", "7D", "AS", "2S"])

    game.ok(0, {"type": "draw", "source": "stock"})  # 9D
    game.ok(0, {"type": "meld", "melds": [{"cards": ["2C", "3C", "4C"]}]})
    answer = game.ok(0, {"type": "discard", "card": "9D"})  # the last card: seat 0 is out
    hand_end = [e for e in answer["events"] if e["type"] == "hand_end"]
    assert len(hand_end) == 1
    count = 5 + 6 + 7 + 1 + 2
    assert hand_end[0]["went_out"] == 0
    assert hand_end[0]["scores"] == [count, 0]
    view = game.public()
    assert view["status"] == "playing"
    assert view["hand_number"] == 2
    assert view["dealer"] == 0
    assert view["turn"] == {"seat": 1, "phase": "draw"}
    assert view["melds"] == []
    assert [s["total"] for s in view["seats"]] == [count, 0]
    assert [s["hand_count"] for s in view["seats"]] == [10, 10]
    assert [s["opened"] for s in view["seats"]] == [False, False]
    assert len(view["hands_played"]) == 1
    played = view["hands_played"][0]
    assert (played["hand_number"], played["went_out"], played["scores"]) == (1, 0, [count, 0])
    assert played["going_rummy"] is False
    assert view["arranged"] is True  # hand 2 is shuffled, the game still was arranged
    assert view["version"] == 11


def test_going_out_at_once_is_rummy_and_the_match_ends_after_its_deals(
        client: FlaskClient) -> None:
    game = Game(client, dealer=1, rules={"match_end": {"deals": 2}},
                deals=[arranged(B_HANDS, "5C"), arranged(C_HANDS, "5C")])
    game.ok(0, {"type": "draw", "source": "discard"})
    answer = game.ok(0, {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H", "TH"]},
                                                   {"cards": ["QS", "QD", "QC"]},
                                                   {"cards": ["2C", "3C", "4C", "5C"]}]})
    ends = [e for e in answer["events"] if e["type"] == "hand_end"]
    assert len(ends) == 1
    assert ends[0]["went_out"] == 0
    assert ends[0]["scores"] == [2 * B_COUNT_1, 0]  # BASIC-RUMMY: double
    assert ends[0]["going_rummy"] is True
    view = game.public()
    assert view["hand_number"] == 2
    assert view["dealer"] == 0
    assert view["turn"] == {"seat": 1, "phase": "draw"}
    assert view["arranged"] is True
    assert sorted(game.me(0)["hand"]) == sorted(C_HANDS[0])
    assert sorted(game.me(1)["hand"]) == sorted(C_HANDS[1])

    game.ok(1, {"type": "draw", "source": "discard"})
    answer = game.ok(1, {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H", "TH"]},
                                                   {"cards": ["QS", "QD", "QC"]},
                                                   {"cards": ["2C", "3C", "4C", "5C"]}]})
    assert [e["type"] for e in answer["events"]][-2:] == ["hand_end", "game_end"]
    view = game.public()
    assert view["status"] == "finished"
    assert view["winners"] == [1]
    assert [s["total"] for s in view["seats"]] == [2 * B_COUNT_1, 2 * C_COUNT_0]
    assert [(h["hand_number"], h["went_out"], h["scores"], h["going_rummy"])
            for h in view["hands_played"]] == [(1, 0, [2 * B_COUNT_1, 0], True),
                                               (2, 1, [0, 2 * C_COUNT_0], True)]
    assert view["version"] == 4
    for seat in (0, 1):
        for move in ({"type": "draw", "source": "stock"}, {"type": "discard", "card": "KS"}):
            game.refused(seat, move, "GAME_FINISHED", "BASIC-END")


def empty_stock_deal() -> dict[str, Any]:
    """Deal A with an empty stock: the other 32 cards are the discard pile (3S at the
    bottom, JC on top)."""
    used = {c for h in A_HANDS for c in h}
    return {"hands": [list(h) for h in A_HANDS], "stock": [],
            "discard": [c for c in DECK if c not in used]}


A_COUNTS = [7 + 8 + 9 + 10 + 10 + 10 + 2 + 3 + 4 + 10, 10 + 10 + 10 + 10 + 5 + 6 + 7 + 1 + 2 + 8]


def test_drawing_from_an_empty_stock_turns_the_discard_pile_over(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[empty_stock_deal()],
                rules={"stock_exhausted": "turn_over"})
    assert game.public()["stock_count"] == 0
    view = game.ok(0, {"type": "draw", "source": "stock"})["game"]
    assert "3S" in view["hand"]  # the bottom of the pile became the top of the stock
    assert (view["stock_count"], view["discard_count"], view["discard_top"]) == (31, 0, None)
    assert view["turn"] == {"seat": 0, "phase": "play"}


def test_drawing_from_an_empty_stock_shuffles_all_but_the_top_discard(
        client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[empty_stock_deal()])  # default: shuffle
    view = game.ok(0, {"type": "draw", "source": "stock"})["game"]
    assert (view["stock_count"], view["discard_count"], view["discard_top"]) == (30, 1, "JC")
    drawn = set(view["hand"]) - set(A_HANDS[0])
    assert len(drawn) == 1
    assert drawn < set(empty_stock_deal()["discard"]) - {"JC"}


@pytest.mark.parametrize(("rules", "scores"), [
    ({"stock_exhausted": "end_hand"}, [0, A_COUNTS[0] - A_COUNTS[1]]),
    ({"max_stock_rebuilds": 0}, [0, A_COUNTS[0] - A_COUNTS[1]]),
    ({"stock_exhausted": "end_hand", "scoring": "penalty"}, A_COUNTS),
])
def test_an_empty_stock_can_end_the_hand_with_nobody_out(
        client: FlaskClient, rules: dict[str, Any], scores: list[int]) -> None:
    game = Game(client, dealer=1, deals=[empty_stock_deal()], rules=rules)
    answer = game.ok(0, {"type": "draw", "source": "stock"})
    ends = [e for e in answer["events"] if e["type"] == "hand_end"]
    assert len(ends) == 1
    view = game.public()
    assert len(view["hands_played"]) == 1
    played = view["hands_played"][0]
    assert played["went_out"] is None
    assert played["scores"] == scores
    assert [s["total"] for s in view["seats"]] == scores
    assert view["hand_number"] == 2
    assert view["turn"] == {"seat": 1, "phase": "draw"}


# ---------------------------------------------------------------------------------------
# POST …/moves: refusals (422), each leaving the game as it was


def test_not_your_turn(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])
    game.refused(1, {"type": "draw", "source": "stock"}, "NOT_YOUR_TURN", "C-TURN")
    game.refused(1, {"type": "discard", "card": "TH"}, "NOT_YOUR_TURN", "C-TURN")
    game.ok(0, {"type": "draw", "source": "stock"})
    game.refused(1, {"type": "draw", "source": "stock"}, "NOT_YOUR_TURN", "C-TURN")
    game.ok(0, {"type": "discard", "card": "KD"})
    game.refused(0, {"type": "draw", "source": "stock"}, "NOT_YOUR_TURN", "C-TURN")


def test_wrong_phase(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])
    game.refused(0, {"type": "discard", "card": "KD"}, "WRONG_PHASE", "C-TURN")
    game.refused(0, {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"]}]},
                 "WRONG_PHASE", "C-TURN")
    game.ok(0, {"type": "draw", "source": "stock"})
    game.refused(0, {"type": "draw", "source": "stock"}, "WRONG_PHASE", "C-TURN")
    game.refused(0, {"type": "draw", "source": "discard"}, "WRONG_PHASE", "C-TURN")


def test_card_not_in_hand(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])
    game.ok(0, {"type": "draw", "source": "stock"})
    game.refused(0, {"type": "discard", "card": "AS"}, "CARD_NOT_IN_HAND", "C-TURN")
    game.refused(0, {"type": "meld", "melds": [{"cards": ["TH", "JH", "QH"]}]},
                 "CARD_NOT_IN_HAND", "C-TURN")
    game.ok(0, {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"]}]})
    game.refused(0, {"type": "lay_off", "meld_id": "m1", "cards": ["TH"]},
                 "CARD_NOT_IN_HAND", "C-TURN")


def test_invalid_meld_with_one_reason_and_with_several(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])
    game.ok(0, {"type": "draw", "source": "stock"})
    problem = game.refused(0, {"type": "meld", "melds": [{"cards": ["7H", "8H"]}]},
                           "INVALID_MELD", "C-SET")
    assert "reasons" not in problem
    problem = game.refused(0, {"type": "meld", "melds": [{"cards": ["7H", "8H", "KD"]}]},
                           "INVALID_MELD", "BASIC-SET")
    assert [(r["code"], r["rule"]) for r in problem["reasons"]] == [
        ("INVALID_MELD", "BASIC-SET"), ("INVALID_MELD", "C-RUN")]
    assert all(r["detail"] for r in problem["reasons"])
    # a valid meld beside an invalid one: nothing is melded
    problem = game.refused(0, {"type": "meld", "melds": [{"cards": ["QS", "QD", "QC"]},
                                                         {"cards": ["2C", "3C", "KD"]}]},
                           "INVALID_MELD", "BASIC-SET")
    assert len(problem["reasons"]) == 2
    assert all(r["code"] == "INVALID_MELD" for r in problem["reasons"])


def test_unknown_meld_and_invalid_lay_off(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])
    game.ok(0, {"type": "draw", "source": "stock"})
    game.refused(0, {"type": "lay_off", "meld_id": "m1", "cards": ["6H"]},
                 "UNKNOWN_MELD", "C-LAYOFF")
    game.ok(0, {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"]}]})
    game.refused(0, {"type": "lay_off", "meld_id": "m9", "cards": ["6H"]},
                 "UNKNOWN_MELD", "C-LAYOFF")
    game.refused(0, {"type": "lay_off", "meld_id": "m1", "cards": ["KD"]},
                 "INVALID_LAY_OFF", "C-LAYOFF")
    game.refused(0, {"type": "lay_off", "meld_id": "m1", "cards": ["6H"], "end": "high"},
                 "INVALID_LAY_OFF", "C-LAYOFF")
    game.ok(0, {"type": "lay_off", "meld_id": "m1", "cards": ["6H"], "end": "low"})


def test_meld_limit(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()], rules={"melds_per_turn": 1})
    game.ok(0, {"type": "draw", "source": "stock"})
    game.refused(0, {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"]},
                                               {"cards": ["QS", "QD", "QC"]}]},
                 "MELD_LIMIT", "BASIC-MELDS-PER-TURN")
    game.ok(0, {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"]}]})
    game.refused(0, {"type": "meld", "melds": [{"cards": ["QS", "QD", "QC"]}]},
                 "MELD_LIMIT", "BASIC-MELDS-PER-TURN")
    game.ok(0, {"type": "lay_off", "meld_id": "m1", "cards": ["6H"]})  # lay-offs: no limit


def test_lay_off_requires_own_meld(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()], rules={"lay_off_requires_own_meld": True})
    game.ok(0, {"type": "draw", "source": "stock"})
    game.ok(0, {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"]}]})
    game.ok(0, {"type": "discard", "card": "KD"})
    game.ok(1, {"type": "draw", "source": "stock"})
    game.refused(1, {"type": "lay_off", "meld_id": "m1", "cards": ["TH"]},
                 "INVALID_LAY_OFF", "BASIC-LAYOFF")


def test_discard_taken_card(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])
    game.ok(0, {"type": "draw", "source": "discard"})
    game.refused(0, {"type": "discard", "card": A_UPCARD}, "DISCARD_TAKEN_CARD",
                 "C-DISCARD-BACK")
    game.ok(0, {"type": "discard", "card": "KD"})


def test_a_meld_may_not_leave_only_the_taken_discard(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[arranged(B_HANDS, "KD")])
    game.ok(0, {"type": "draw", "source": "discard"})
    game.refused(0, {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H", "TH"]},
                                               {"cards": ["QS", "QD", "QC"]},
                                               {"cards": ["2C", "3C", "4C"]}]},
                 "DISCARD_TAKEN_CARD", "C-DISCARD-BACK")


def test_must_discard_to_go_out(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[arranged(B_HANDS, "5C")],
                rules={"must_discard_to_go_out": True})
    game.ok(0, {"type": "draw", "source": "discard"})
    game.refused(0, {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H", "TH"]},
                                               {"cards": ["QS", "QD", "QC"]},
                                               {"cards": ["2C", "3C", "4C", "5C"]}]},
                 "MUST_DISCARD_TO_GO_OUT", "BASIC-OUT")
    game.ok(0, {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"]},
                                          {"cards": ["QS", "QD", "QC"]},
                                          {"cards": ["2C", "3C", "4C", "5C"]}]})
    game.refused(0, {"type": "lay_off", "meld_id": "m1", "cards": ["TH"]},
                 "MUST_DISCARD_TO_GO_OUT", "BASIC-OUT")
    answer = game.ok(0, {"type": "discard", "card": "TH"})
    assert [e["type"] for e in answer["events"]][:2] == ["discard", "hand_end"]


def test_game_finished(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[arranged(B_HANDS, "5C")],
                rules={"match_end": {"deals": 1}})
    game.ok(0, {"type": "draw", "source": "discard"})
    game.ok(0, {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H", "TH"]},
                                          {"cards": ["QS", "QD", "QC"]},
                                          {"cards": ["2C", "3C", "4C", "5C"]}]})
    view = game.public()
    assert view["status"] == "finished"
    assert view["winners"] == [0]
    assert view["turn"] is None
    game.refused(1, {"type": "draw", "source": "stock"}, "GAME_FINISHED", "BASIC-END")
    game.refused(0, {"type": "draw", "source": "discard"}, "GAME_FINISHED", "BASIC-END")


def test_dry_run_of_a_refused_move_answers_the_same_refusal(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])
    game.refused(1, {"type": "draw", "source": "stock"}, "NOT_YOUR_TURN", "C-TURN",
                 query="?dry_run=true")
    game.refused(0, {"type": "discard", "card": "KD"}, "WRONG_PHASE", "C-TURN",
                 query="?dry_run=true")


# ---------------------------------------------------------------------------------------
# POST …/moves: malformed moves (400), nothing applied


@pytest.mark.parametrize(("body", "fields"), [
    ({}, {"type"}),
    ({"type": "fly"}, {"type"}),
    ({"type": 3}, {"type"}),
    ({"type": "draw"}, {"source"}),
    ({"type": "draw", "source": "hat"}, {"source"}),
    ({"type": "draw", "source": "stock", "card": "KD"}, {"card"}),
    ({"type": "draw", "source": "stock", "seat": 1}, {"seat"}),
    ({"type": "meld"}, {"melds"}),
    ({"type": "meld", "melds": []}, {"melds"}),
    ({"type": "meld", "melds": [{"cards": ["7H", "8H", "9X"]}]}, {"melds.0.cards.2"}),
    ({"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"], "as": "x"}]}, {"melds.0.as"}),
    ({"type": "lay_off", "cards": ["6H"]}, {"meld_id"}),
    ({"type": "lay_off", "meld_id": "m1"}, {"cards"}),
    ({"type": "lay_off", "meld_id": "m1", "cards": ["6H"], "end": "middle"}, {"end"}),
    ({"type": "discard"}, {"card"}),
    ({"type": "discard", "card": "ZZ"}, {"card"}),
    ({"type": "discard", "card": 7}, {"card"}),
    ({"type": "discard", "card": "KD", "source": "stock"}, {"source"}),
])
def test_malformed_moves_are_400_naming_the_field(
        client: FlaskClient, body: dict[str, Any], fields: set[str]) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])
    game.ok(0, {"type": "draw", "source": "stock"})
    before = game.snapshot()
    assert_problem(game.move(0, body), 400, fields=fields)
    assert game.snapshot() == before


DEEP = "[" * 5000 + "]" * 5000
"""Valid JSON nested deeper than Python's decoder goes (it raises RecursionError)."""


def test_malformed_move_bodies_are_400(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])
    before = game.snapshot()
    for data in ('{"type": "draw", ', "[]", '"draw"', DEEP, '{"type": ' * 3000 + "1" + "}" * 3000):
        resp = client.post(f"{game.path}/moves", data=data, content_type="application/json",
                           headers=auth(game.tokens[0]))
        assert_problem(resp, 400, fields={"body"})
    assert game.snapshot() == before


@pytest.mark.parametrize(("data", "field", "quoted"), [
    ('{"type": "discard", "card": "5H", "card": "KS"}', "card", {"value": ["5H", "KS"]}),
    ('{"type": "draw", "type": "discard", "source": "stock", "card": "KS"}', "type",
     {"value": ["draw", "discard"]}),
    ('{"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"], "cards": ["KS", "KH", "KD"]}]}',
     "cards", {}),
])
def test_a_key_given_twice_in_a_move_is_400_naming_it(client: FlaskClient, data: str,
                                                      field: str, quoted: dict[str, Any]
                                                      ) -> None:
    """RFC 8259 leaves an object with a key given twice to its reader: one reader keeps the
    first value, another the last, so a client and the referee could read different moves
    from one body. It is refused, whichever way the body is read, quoting every value the
    key was given (where it is a key of the body itself: the field names the key only)."""
    game = Game(client, dealer=1, deals=[deal_a()])
    game.ok(0, {"type": "draw", "source": "stock"})
    before = game.snapshot()
    for headers in ({}, {"Idempotency-Key": "twice-1"}):
        resp = client.post(f"{game.path}/moves", data=data, content_type="application/json",
                           headers={**auth(game.tokens[0]), **headers})
        body = assert_problem(resp, 400, fields={field})
        assert body["errors"] == [{"field": field,
                                   "message": "Given more than once in one object.", **quoted}]
    assert game.snapshot() == before
    # a colon within a string is no key: the move is read as it is
    resp = client.post(f"{game.path}/moves", data='{"type": "lay_off", "meld_id": "m:1", '
                       '"cards": ["6H"]}', content_type="application/json",
                       headers=auth(game.tokens[0]))
    assert assert_problem(resp, 422)["code"] == "UNKNOWN_MELD"


@pytest.mark.parametrize("path", ["/v1/games", "/v1/melds/check", "/v1/scores/hand"])
def test_a_key_given_twice_is_400_on_every_body(client: FlaskClient, path: str) -> None:
    resp = client.post(path, data='{"variant": "basic", "variant": "dummy"}',
                       content_type="application/json")
    assert_problem(resp, 400, fields={"variant"})


@pytest.mark.parametrize("path", ["/v1/games", "/v1/melds/check", "/v1/scores/hand"])
def test_a_body_nested_too_deeply_is_malformed_not_an_error(client: FlaskClient,
                                                            path: str) -> None:
    resp = client.post(path, data=DEEP, content_type="application/json")
    assert_problem(resp, 400, fields={"body"})


@pytest.mark.parametrize("content_type", [
    "application/x-www-form-urlencoded",  # what curl -d sends without -H
    "text/plain", "multipart/form-data; boundary=x", "application/xml"])
def test_a_body_declared_as_another_kind_than_json_is_415_naming_what_to_send(
        client: FlaskClient, content_type: str) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])
    before = game.snapshot()
    resp = client.post(f"{game.path}/moves", data='{"type": "draw", "source": "stock"}',
                       content_type=content_type, headers=auth(game.tokens[0]))
    body = assert_problem(resp, 415)
    assert "Content-Type: application/json" in body["detail"]
    assert content_type.split(";")[0] in body["detail"]
    assert resp.headers["Accept-Post"] == "application/json"
    assert game.snapshot() == before
    for path, data in [("/v1/games", {"variant": "basic", "players": ["Ana", "Bo"]}),
                       ("/v1/melds/check", {"variant": "basic", "cards": ["AS", "2S", "3S"]}),
                       ("/v1/scores/hand", {"variant": "basic", "went_out": 1, "all_at_once": False,
                                            "hands": [["AS"], []]})]:
        assert_problem(client.post(path, data=json.dumps(data), content_type=content_type),
                       415)
        assert client.post(path, json=data).status_code in (200, 201)


def test_the_415_is_in_the_callers_language(client: FlaskClient) -> None:
    resp = client.post("/v1/games", data="{}", content_type="text/plain",
                       headers={"Accept-Language": "pt"})
    body = assert_problem(resp, 415)
    assert resp.headers["Content-Language"] == "pt"
    assert body["title"] == "Tipo de conteúdo não suportado"
    assert body["detail"].startswith("o corpo tem de ser JSON") and "text/plain" in body["detail"]


def test_a_body_with_no_content_type_is_read_as_json(client: FlaskClient) -> None:
    """RFC 9110 lets a recipient look at a body sent without a Content-Type; JSON is the only
    kind the API takes (a client such as ``requests.post(url, data=…)`` sends none)."""
    created = client.post("/v1/games", data=json.dumps({"variant": "basic",
                                                        "players": ["Ana", "Bo"],
                                                        "dealer": 1, "deals": [deal_a()]}))
    assert "Content-Type" not in created.request.headers
    assert created.status_code == 201, created.get_data(as_text=True)
    game_path = created.headers["Location"]
    token = created.get_json()["seats"][0]["token"]
    resp = client.post(f"{game_path}/moves", data='{"type": "draw", "source": "stock"}',
                       headers=auth(token))
    assert resp.status_code == 200, resp.get_data(as_text=True)
    assert resp.get_json()["game"]["version"] == 1
    # malformed or missing fields are still named, as with a JSON Content-Type
    assert_problem(client.post(f"{game_path}/moves", data='{"type": "draw", ',
                               headers=auth(token)), 400, fields={"body"})
    assert_problem(client.post(f"{game_path}/moves", data='{"type": "draw"}',
                               headers=auth(token)), 400, fields={"source"})
    assert_problem(client.post("/v1/games", data=""), 400, fields={"variant", "players"})


def test_an_idempotency_key_tells_bodies_sent_without_a_content_type_apart(
        client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])
    key = {**auth(game.tokens[0]), "Idempotency-Key": "no-type-1"}
    first = client.post(f"{game.path}/moves", data='{"type": "draw", "source": "stock"}',
                        headers=key)
    assert first.status_code == 200, first.get_data(as_text=True)
    replay = client.post(f"{game.path}/moves", data='{"source": "stock", "type": "draw"}',
                         headers=key)
    assert replay.status_code == 200 and replay.headers["Idempotent-Replayed"] == "true"
    other = client.post(f"{game.path}/moves", data='{"type": "draw", "source": "discard"}',
                        headers=key)
    assert_problem(other, 422, code="IDEMPOTENCY_KEY_REUSED")
    assert game.version() == 1


# ---------------------------------------------------------------------------------------
# If-Match, dry_run, Idempotency-Key


def test_if_match(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])
    game.ok(0, {"type": "draw", "source": "stock"}, headers={"If-Match": '"0"'})
    before = game.snapshot()
    resp = game.move(0, {"type": "discard", "card": "KD"}, headers={"If-Match": '"0"'})
    assert_problem(resp, 412)
    assert game.snapshot() == before
    resp = game.move(0, {"type": "discard", "card": "KD"}, headers={"If-Match": '"2"'})
    assert_problem(resp, 412)
    assert game.snapshot() == before
    for bad in ("abc", '"one"', '"-1"'):
        resp = game.move(0, {"type": "discard", "card": "KD"}, headers={"If-Match": bad})
        assert_problem(resp, 400, fields={"If-Match"})
        assert game.snapshot() == before
    game.ok(0, {"type": "discard", "card": "KD"}, headers={"If-Match": '"1"'})


def test_dry_run_answers_what_the_seat_may_know_and_stores_nothing(
        client: FlaskClient) -> None:
    """A dry run answers like the move, without what the seat could not know before it:
    the card a stock draw would draw (6H) is in neither its events nor its hand."""
    game = Game(client, dealer=1, deals=[deal_a()])
    before = game.snapshot()
    move = {"type": "draw", "source": "stock"}
    dry = game.move(0, move, query="?dry_run=true")
    assert dry.status_code == 200, dry.get_data(as_text=True)
    assert dry.mimetype == "application/json"
    assert dry.headers["Cache-Control"] == "no-store"
    would = dry.get_json()
    assert would["game"]["version"] == 1
    assert "6H" not in dry.get_data(as_text=True)
    assert sorted(would["game"]["hand"]) == sorted(A_HANDS[0])
    assert would["game"]["seats"][0]["hand_count"] == 11
    assert would["events"] == [{"type": "draw", "seat": 0, "source": "stock", "dry_run": True}]
    assert would["game"]["turn"] == {"seat": 0, "phase": "play"}
    assert game.snapshot() == before
    dry_again = game.move(0, move, query="?dry_run=true")
    assert dry_again.get_json() == would
    assert game.snapshot() == before

    real = game.move(0, move, query="?dry_run=false")
    assert real.status_code == 200
    assert real.get_json()["events"] == [{"type": "draw", "seat": 0, "source": "stock",
                                           "card": "6H"}]
    assert "6H" in real.get_json()["game"]["hand"]
    assert {**real.get_json()["game"], "hand": None} == {**would["game"], "hand": None}
    assert game.version() == 1

    dry = game.move(0, {"type": "discard", "card": "KD"}, query="?dry_run=true")
    assert dry.status_code == 200
    assert dry.get_json()["game"]["version"] == 2
    assert dry.get_json()["game"]["turn"] == {"seat": 1, "phase": "draw"}
    assert game.version() == 1
    assert game.public()["turn"] == {"seat": 0, "phase": "play"}
    assert_problem(game.move(0, {"type": "discard", "card": "KD"}, query="?dry_run=maybe"),
                   400, fields={"dry_run"})
    assert game.version() == 1


def test_idempotency_key_replays_the_first_answer_and_applies_once(
        client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])
    key = {"Idempotency-Key": "draw-1"}
    first = game.move(0, {"type": "draw", "source": "stock"}, headers=key)
    assert first.status_code == 200
    again = game.move(0, {"type": "draw", "source": "stock"}, headers=key)
    assert again.status_code == 200
    assert again.mimetype == "application/json"
    assert again.get_data() == first.get_data()
    view = game.public()
    assert view["version"] == 1
    assert view["stock_count"] == 30
    assert sorted(game.me(0)["hand"]) == sorted([*A_HANDS[0], "6H"])

    # the same key with another body is refused, and nothing is applied
    game.refused(0, {"type": "discard", "card": "KD"}, "IDEMPOTENCY_KEY_REUSED", None,
                 headers=key)

    game.ok(0, {"type": "discard", "card": "KD"}, headers={"Idempotency-Key": "discard-1"})
    # later, the first request still replays the first answer
    late = game.move(0, {"type": "draw", "source": "stock"}, headers=key)
    assert late.status_code == 200
    assert late.get_data() == first.get_data()
    assert game.version() == 2


def test_idempotency_keys_are_scoped_per_seat(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])
    key = {"Idempotency-Key": "same-key"}
    first = game.move(0, {"type": "draw", "source": "stock"}, headers=key)
    assert first.status_code == 200
    game.ok(0, {"type": "discard", "card": "KD"})
    # seat 1 uses the same key with the same body: a move of its own, applied
    answer = game.ok(1, {"type": "draw", "source": "stock"}, headers=key)
    assert answer["game"]["seat"] == 1
    assert answer["game"]["version"] == 3
    assert "9D" in answer["game"]["hand"]
    # and for seat 1 the key now stands for that request
    replay = game.move(1, {"type": "draw", "source": "stock"}, headers=key)
    assert replay.status_code == 200
    assert replay.get_json() == answer
    assert game.version() == 3


def test_the_seat_comes_only_from_the_token(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])
    # seat 1's token cannot play seat 0's turn, whatever the body says
    game.refused(1, {"type": "draw", "source": "stock"}, "NOT_YOUR_TURN", "C-TURN")
    before = game.snapshot()
    assert_problem(game.move(1, {"type": "draw", "source": "stock", "seat": 0}), 400,
                   fields={"seat"})
    assert game.snapshot() == before
    answer = game.ok(0, {"type": "draw", "source": "stock"})
    assert not set(A_HANDS[1]) & set(strings(answer))
    answer = game.ok(0, {"type": "discard", "card": "KD"})
    assert not set(A_HANDS[1]) & set(strings(answer))
    # now it is seat 1's turn: seat 0's token cannot act for it
    game.refused(0, {"type": "draw", "source": "stock"}, "NOT_YOUR_TURN", "C-TURN")
    answer = game.ok(1, {"type": "draw", "source": "discard"})
    assert answer["game"]["seat"] == 1
    assert sorted(answer["game"]["hand"]) == sorted([*A_HANDS[1], "KD"])
    assert not (set(A_HANDS[0]) - {"KD"}) & set(strings(answer))
    assert not (set(A_HANDS[0]) - {"KD"}) & set(strings(game.me(1)))


# ---------------------------------------------------------------------------------------
# Operations and unknown routes


def test_health_and_readiness(client: FlaskClient) -> None:
    for path in ("/healthz", "/readyz"):
        resp = client.get(path)
        assert resp.status_code == 200, path
        assert resp.mimetype == "application/json"


def test_unknown_path_is_a_404_problem(client: FlaskClient) -> None:
    for path in ("/nope", "/v1", "/v1/games/x/y/z", "/v2/variants"):
        assert_problem(client.get(path), 404)


def test_wrong_method_is_a_405_problem(client: FlaskClient) -> None:
    game = Game(client)
    for method, path in (("PUT", game.path), ("PUT", "/v1/variants"),
                         ("GET", "/v1/games"), ("GET", f"{game.path}/moves"),
                         ("POST", f"{game.path}/me"), ("POST", "/healthz")):
        resp = client.open(path, method=method)
        assert_problem(resp, 405)
        assert method not in resp.headers["Allow"]


# ---------------------------------------------------------------------------------------
# A complete match


def test_a_complete_basic_match_over_the_api(client: FlaskClient) -> None:
    game = Game(client, rules={"match_end": {"deals": 2}})
    player = HttpPlayer(FlaskTransport(client), game.id, game.tokens, max_moves=1500,
                        time_limit=40.0)
    final = player.play_match()
    assert final["status"] == "finished"
    assert final["turn"] is None
    assert len(final["hands_played"]) == 2
    assert [h["hand_number"] for h in final["hands_played"]] == [1, 2]
    keys = ("hand_number", "went_out", "scores")
    assert [[h[k] for k in keys] for h in final["hands_played"]] == [
        [e[k] for k in keys] for e in player.hand_ends]  # the events carried the scoring
    totals = [s["total"] for s in final["seats"]]
    assert totals == [sum(h["scores"][seat] for h in final["hands_played"])
                      for seat in (0, 1)]
    assert final["winners"] == [i for i, t in enumerate(totals) if t == max(totals)]
    assert final["version"] == player.moves
    game.refused(final["winners"][0], {"type": "draw", "source": "stock"},
                 "GAME_FINISHED", "BASIC-END")


class Alternating:
    """Requests sent to each of several workers (apps on one Redis) in turn."""

    def __init__(self, *clients: FlaskClient) -> None:
        self.transports = [FlaskTransport(c) for c in clients]
        self.sent = 0

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        self.sent += 1
        return self.transports[self.sent % len(self.transports)].request(method, path,
                                                                          **kwargs)


def test_workers_that_keep_states_decoded_agree_on_every_move(redis_url: str) -> None:
    """Each worker keeps the latest state of a game it loaded or committed, and skips the
    transfer and decoding of that state while the game is still at its version. Moves sent
    to three workers in turn (each mostly holding a stale version) make the same match as
    one worker would: every answer follows the last, and the log replays."""
    from service.app import create_app
    from service.config import Settings

    apps = [create_app(Settings(redis_url=redis_url, rate_limits=(), create_rate_limits=()))
            for _ in range(3)]
    clients = [a.test_client() for a in apps]
    game = Game(clients[0], rules={"match_end": {"deals": 2}})
    player = HttpPlayer(Alternating(*clients), game.id, game.tokens, max_moves=1500,
                        time_limit=40.0)
    final = player.play_match()
    assert final["status"] == "finished" and final["version"] == player.moves
    report = clients[1].get(f"/v1/games/{game.id}/verify").get_json()
    assert report["verified"], report
    held = [a.extensions["referee"].held.get(game.id) for a in apps]
    assert all(h is not None for h in held)
    assert max(h[0] for h in held if h is not None) == player.moves
