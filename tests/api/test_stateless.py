"""Stateless checks (API.md): ``POST /v1/melds/check`` and ``POST /v1/scores/hand``.

Table tests: each row cites the RULES.md rule it checks. Expected values are worked out
by hand from RULES.md, never read back from the service.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from tests.support.problems import RULE_IDS, assert_problem


def offered(client: FlaskClient, variant: str) -> None:
    """Skip rows of a variant the service does not offer yet (DUMMY, WROTHAM)."""
    ids = {v["id"] for v in client.get("/v1/variants").get_json()["variants"]}
    if variant not in ids:
        pytest.skip(f"GET /v1/variants does not list {variant!r}")


def check(client: FlaskClient, variant: str, rules: dict[str, Any], cards: list[Any]
          ) -> dict[str, Any]:
    offered(client, variant)
    resp = client.post("/v1/melds/check", json={"variant": variant, "rules": rules,
                                                 "cards": cards})
    assert resp.status_code == 200, resp.get_data(as_text=True)
    assert resp.mimetype == "application/json"
    body: dict[str, Any] = resp.get_json()
    return body


# ---------------------------------------------------------------------------------------
# POST /v1/melds/check: valid melds

# (rule, variant, rules, cards, kind, cards in order (None: a set, any order),
#  wilds [(index, card, as)], points)
VALID = [
    ("C-RUN", "basic", {}, ["7H", "8H", "9H"], "run", ["7H", "8H", "9H"], [], 24),
    ("C-RUN", "basic", {}, ["9H", "7H", "8H"], "run", ["7H", "8H", "9H"], [], 24),
    ("C-CARD", "basic", {}, ["QH", "10H", "JH"], "run", ["TH", "JH", "QH"], [], 30),
    ("BASIC-SET", "basic", {}, ["QS", "QD", "QC"], "set", None, [], 30),
    ("BASIC-SET", "basic", {}, ["AC", "AS", "AH", "AD"], "set", None, [], 4),
    ("BASIC-SCORE", "basic", {}, ["3H", "AH", "2H"], "run", ["AH", "2H", "3H"], [], 6),
    ("BASIC-SCORE", "basic", {"ace": "high_or_low"}, ["AH", "2H", "3H"], "run",
     ["AH", "2H", "3H"], [], 20),
    ("BASIC-SCORE", "basic", {"ace": "high_or_low"}, ["AH", "KH", "QH"], "run",
     ["QH", "KH", "AH"], [], 35),
    ("C-RUN", "basic", {"ace": "around"}, ["2H", "AH", "KH"], "run", ["KH", "AH", "2H"], [],
     27),
    ("C-MELD", "rummy51", {}, ["TH", "JH", "JK"], "run", ["TH", "JH", "JK"],
     [(2, "JK", "QH")], 30),
    ("C-MELD", "rummy51", {}, ["JK", "KH", "QH"], "run", ["QH", "KH", "JK"],
     [(2, "JK", "AH")], 31),
    ("R51-VALUE", "rummy51", {}, ["KH", "AH", "QH"], "run", ["QH", "KH", "AH"], [], 31),
    ("R51-VALUE", "rummy51", {}, ["2H", "3H", "AH"], "run", ["AH", "2H", "3H"], [], 6),
    ("R51-VALUE", "rummy51", {}, ["AS", "AH", "AD"], "set", None, [], 33),
    ("R51-VALUE", "rummy51", {}, ["7H", "5H", "JK"], "run", ["5H", "JK", "7H"],
     [(1, "JK", "6H")], 18),
    ("C-MELD", "rummy51", {}, ["5H", {"card": "JK", "as": "4H"}, "6H"], "run",
     ["JK", "5H", "6H"], [(0, "JK", "4H")], 15),
    ("C-WILD", "rummy51", {}, ["9C", "9S", "9D", "JK"], "set", None, [(3, "JK", "9H")], 36),
    ("C-WILD", "rummy51", {}, ["9C", "JK", "9S"], "set", None, [(2, "JK", "9*")], 27),
    ("C-MELD", "rummy51", {}, ["9C", "9S", {"card": "JK", "as": "9H"}], "set", None,
     [(2, "JK", "9H")], 27),
    ("R51-WILDS", "rummy51", {"max_wilds_per_meld": 2}, ["JK", "5H", "JK"], "run",
     ["5H", "JK", "JK"], [(1, "JK", "6H"), (2, "JK", "7H")], 18),
    ("R51-RUN", "rummy51", {}, ["9D", "JD", "TD", "QD", "8D", "KD", "AD"], "run",
     ["8D", "9D", "TD", "JD", "QD", "KD", "AD"], [], 68),
    ("L14-ACE", "lebanese14", {}, ["AH", "2H", "3H"], "run", ["AH", "2H", "3H"], [], 15),
    ("L14-ACE", "lebanese14", {}, ["QH", "KH", "AH"], "run", ["QH", "KH", "AH"], [], 30),
    ("L14-ACE", "lebanese14", {}, ["AS", "AD", "AC"], "set", None, [], 30),
    # L14-JOKER-RUN depends on the table: not checked here (API.md)
    ("L14-JOKER-RUN", "lebanese14", {}, ["5H", "JK", "7H"], "run", ["5H", "JK", "7H"],
     [(1, "JK", "6H")], 18),
    # DUMMY: runs mix suits by default, 2s and jokers wild, sets of any size and suits;
    # points are counting values (DUMMY-SCORE: 3-9 five, 10-K ten, ace 15, 2 or joker 50)
    ("DUMMY-RUN", "dummy", {}, ["7D", "5H", "6S"], "run", ["5H", "6S", "7D"], [], 15),
    ("DUMMY-WILDS", "dummy", {}, ["5H", "2S", "7D"], "run", ["5H", "2S", "7D"],
     [(1, "2S", "6*")], 60),
    ("DUMMY-RUN", "dummy", {}, ["AS", "KH", "2D"], "run", ["2D", "KH", "AS"],
     [(0, "2D", "Q*")], 75),
    ("DUMMY-RUN", "dummy", {}, ["AS", "QD", "KH"], "run", ["QD", "KH", "AS"], [], 35),
    ("DUMMY-SET", "dummy", {}, ["8H", "8S", "8H"], "set", None, [], 15),
    ("DUMMY-SET", "dummy", {}, ["8H", "8S", "8D", "8C", "8H"], "set", None, [], 25),
    ("DUMMY-WILDS", "dummy", {}, ["2H", "2S", "2D"], "set", None, [], 150),
    ("DUMMY-WILDS", "dummy", {}, ["9C", "JK", "9C"], "set", None, [(2, "JK", "9*")], 60),
    # WROTHAM: jokers wild, any number per meld; a joker counts 15 (WROTHAM-SCORE)
    ("WROTHAM-DECK", "wrotham", {}, ["JK", "5H", "JK"], "run", ["5H", "JK", "JK"],
     [(1, "JK", "6H"), (2, "JK", "7H")], 35),
    ("WROTHAM-DECK", "wrotham", {}, ["3H", "AH", "2H"], "run", ["AH", "2H", "3H"], [], 6),
    ("WROTHAM-SCORE", "wrotham", {}, ["9C", "9S", "9D", "JK"], "set", None,
     [(3, "JK", "9H")], 42),
]


@pytest.mark.parametrize(
    ("rule", "variant", "rules", "cards", "kind", "ordered", "wilds", "points"), VALID,
    ids=[f"{row[0]}-{row[1]}-{'-'.join(str(c) for c in row[3])}" for row in VALID])
def test_valid_melds(client: FlaskClient, rule: str, variant: str, rules: dict[str, Any],
                     cards: list[Any], kind: str, ordered: list[str] | None,
                     wilds: list[tuple[int, str, str]], points: int) -> None:
    body = check(client, variant, rules, cards)
    assert body["valid"] is True, (rule, body)
    assert body["errors"] == []
    assert body["kind"] == kind
    if ordered is not None:
        assert body["cards"] == ordered
    else:
        plain = [c if isinstance(c, str) else c["card"] for c in cards]
        assert sorted(body["cards"]) == sorted(plain)
    assert body["wilds"] == [{"index": i, "card": c, "as": a} for i, c, a in wilds]
    for w in body["wilds"]:
        assert body["cards"][w["index"]] == w["card"]
    assert body["points"] == points


# ---------------------------------------------------------------------------------------
# POST /v1/melds/check: invalid melds, every reason at once

# (rule of the row, variant, rules, cards, every (code, rule) expected in `errors`)
INVALID = [
    ("C-RUN", "basic", {}, ["QH", "KH", "AH"],
     {("INVALID_MELD", "BASIC-SET"), ("INVALID_MELD", "C-RUN")}),
    ("C-RUN", "basic", {}, ["2H", "3S", "9D"],
     {("INVALID_MELD", "BASIC-SET"), ("INVALID_MELD", "C-RUN")}),
    ("C-RUN", "basic", {"ace": "high_or_low"}, ["KH", "AH", "2H"],
     {("INVALID_MELD", "BASIC-SET"), ("INVALID_MELD", "C-RUN")}),
    ("C-DECK", "basic", {}, ["5H", "6H", "JK"], {("INVALID_MELD", "C-DECK")}),
    ("R51-RUN", "rummy51", {"ace": "low"}, ["QH", "KH", "AH"],
     {("INVALID_MELD", "R51-SET"), ("INVALID_MELD", "R51-RUN")}),
    ("R51-RUN", "rummy51", {}, ["KH", "AH", "2H"],
     {("INVALID_MELD", "R51-SET"), ("INVALID_MELD", "R51-RUN")}),
    ("R51-SET", "rummy51", {}, ["9H", "9H", "9S"],
     {("INVALID_MELD", "R51-SET"), ("INVALID_MELD", "R51-RUN")}),
    ("R51-SET", "rummy51", {}, ["5S", "5H", "5D", "5C", "5S"],
     {("INVALID_MELD", "R51-SET"), ("INVALID_MELD", "R51-RUN")}),
    ("R51-WILDS", "rummy51", {}, ["7H", "JK", "JK"], {("TOO_MANY_WILDS", "R51-WILDS")}),
    # too many jokers AND neither a set (ranks differ) nor a run (suits differ)
    ("R51-WILDS", "rummy51", {}, ["7H", "8S", "JK", "JK"],
     {("TOO_MANY_WILDS", "R51-WILDS"), ("INVALID_MELD", "R51-SET"),
      ("INVALID_MELD", "R51-RUN")}),
    ("C-MELD", "rummy51", {"max_wilds_per_meld": None}, ["JK", "JK", "JK"],
     {("INVALID_MELD", "C-MELD")}),
    ("C-MELD", "rummy51", {}, ["5H", {"card": "6H", "as": "7H"}, "7H"],
     {("INVALID_MELD", "C-MELD")}),
    ("C-MELD", "rummy51", {}, ["5H", {"card": "JK", "as": "9H"}, "6H"],
     {("INVALID_MELD", "R51-SET"), ("INVALID_MELD", "R51-RUN")}),
    ("C-WILD", "rummy51", {}, ["9C", "9S", {"card": "JK", "as": "9S"}],
     {("INVALID_MELD", "R51-SET"), ("INVALID_MELD", "R51-RUN")}),
    # L14 is R51 except L14-*: its sets, runs and wild limit are R51-SET/-RUN/-WILDS
    ("R51-SET", "lebanese14", {}, ["5H", "6H", "6H"],
     {("INVALID_MELD", "R51-SET"), ("INVALID_MELD", "R51-RUN")}),
    ("R51-RUN", "lebanese14", {"ace": "low"}, ["QH", "KH", "AH"],
     {("INVALID_MELD", "R51-SET"), ("INVALID_MELD", "R51-RUN")}),
    ("R51-WILDS", "lebanese14", {}, ["5H", "JK", "JK"], {("TOO_MANY_WILDS", "R51-WILDS")}),
    ("DUMMY-RUN", "dummy", {"run_same_suit": True}, ["5H", "6S", "7D"],
     {("INVALID_MELD", "DUMMY-SET"), ("INVALID_MELD", "DUMMY-RUN")}),
    ("DUMMY-RUN", "dummy", {}, ["5H", "6H", "9D"],
     {("INVALID_MELD", "DUMMY-SET"), ("INVALID_MELD", "DUMMY-RUN")}),
    ("DUMMY-RUN", "dummy", {}, ["KH", "AS", "3D"],
     {("INVALID_MELD", "DUMMY-SET"), ("INVALID_MELD", "DUMMY-RUN")}),
    ("C-MELD", "dummy", {}, ["JK", "JK", "JK"], {("INVALID_MELD", "C-MELD")}),
    ("WROTHAM-DECK", "wrotham", {}, ["5H", "5S", "5D", "5C", "JK"],
     {("INVALID_MELD", "WROTHAM-DECK")}),
    ("WROTHAM-DECK", "wrotham", {}, ["5H", "6S", "7H"], {("INVALID_MELD", "WROTHAM-DECK")}),
    ("C-MELD", "wrotham", {}, ["JK", "JK", "JK"], {("INVALID_MELD", "C-MELD")}),
    # C-DECK: no meld holds more copies of a card than the variant's deck
    ("C-DECK", "dummy", {}, ["5S", "5S", "5S"], {("INVALID_MELD", "C-DECK")}),
    ("C-DECK", "dummy", {}, ["5S", "JK", "JK", "JK", "JK", "JK"], {("INVALID_MELD", "C-DECK")}),
    ("C-DECK", "wrotham", {}, ["5S", "JK", "JK", "JK", "JK"], {("INVALID_MELD", "C-DECK")}),
    ("C-DECK", "basic", {}, ["5S", "6S", "6S", "7S"], {("INVALID_MELD", "C-DECK")}),
]


@pytest.mark.parametrize(("rule", "variant", "rules", "cards", "reasons"), INVALID,
                         ids=[f"{r[0]}-{r[1]}-{'-'.join(str(c) for c in r[3])}"
                              for r in INVALID])
def test_invalid_melds_list_every_reason(client: FlaskClient, rule: str, variant: str,
                                         rules: dict[str, Any], cards: list[Any],
                                         reasons: set[tuple[str, str]]) -> None:
    body = check(client, variant, rules, cards)
    assert body["valid"] is False, (rule, body)
    assert body["kind"] is None
    assert body["points"] is None
    assert body["wilds"] == []
    got = {(e["code"], e["rule"]) for e in body["errors"]}
    assert reasons <= got, body["errors"]
    assert {e["rule"] for e in body["errors"]} <= RULE_IDS, body["errors"]
    assert all(isinstance(e["detail"], str) and e["detail"] for e in body["errors"])


def test_a_meld_with_more_copies_than_the_deck_says_how_many_it_holds(
        client: FlaskClient) -> None:
    body = check(client, "dummy", {}, ["5S", "5S", "5S", "5H"])
    assert body["errors"] == [{"code": "INVALID_MELD", "rule": "C-DECK",
                               "detail": "the Dummy rummy deck holds 2 5S, not 3"}]
    body = check(client, "wrotham", {}, ["5S", "JK", "JK", "JK", "JK"])
    assert [e["detail"] for e in body["errors"]] == ["the Wrotham rummy deck holds 3 JK, not 4"]
    # as many copies as the deck holds is a meld like any other
    assert check(client, "dummy", {}, ["5S", "5S", "5H"])["valid"] is True


def test_a_two_card_meld_is_too_short(client: FlaskClient) -> None:
    body = check(client, "basic", {}, ["5H", "6H"])  # C-SET / C-RUN: 3 or more cards
    assert body["valid"] is False
    assert [e["code"] for e in body["errors"]] == ["INVALID_MELD"]
    assert "3" in body["errors"][0]["detail"]


@pytest.mark.parametrize(("body", "fields"), [
    ({"variant": "canasta", "cards": ["5H", "6H", "7H"]}, {"variant"}),
    ({"variant": "basic", "rules": {"ace": "sideways"}, "cards": ["5H", "6H", "7H"]},
     {"rules.ace"}),
    ({"variant": "basic", "rules": {"jokers": 2}, "cards": ["5H", "6H", "7H"]},
     {"rules.jokers"}),
    ({"variant": "basic", "rules": {"opening_points": 51}, "cards": ["5H", "6H", "7H"]},
     {"rules.opening_points"}),
    ({"variant": "rummy51", "rules": {"ace": "around"}, "cards": ["5H", "6H", "7H"]},
     {"rules.ace"}),
    ({"variant": "basic", "cards": ["5H", "6H", "7X"]}, {"cards.2"}),
    ({"variant": "basic", "cards": ["1H", "6H", "7H"]}, {"cards.0"}),
    ({"variant": "rummy51", "cards": ["5H", {"card": "JK", "as": "ZZ"}, "6H"]}, {"cards.1"}),
    ({"variant": "basic", "cards": []}, {"cards"}),
    ({"variant": "basic"}, {"cards"}),
    ({"cards": ["5H", "6H", "7H"]}, {"variant"}),
    ({"variant": "basic", "cards": ["5H", "6H", "7H"], "seat": 1}, {"seat"}),
])
def test_meld_check_bad_requests_are_400(client: FlaskClient, body: dict[str, Any],
                                         fields: set[str]) -> None:
    assert_problem(client.post("/v1/melds/check", json=body), 400, fields)


# ---------------------------------------------------------------------------------------
# POST /v1/scores/hand

BASIC_HAND = [[], ["AS", "KD", "7D"], ["9C", "2H"]]  # counts 0, 18, 11 (ace 1)

# (rule, variant, rules, facts, scores)
SCORES = [
    # BASIC-SCORE: winner_collects (default) / penalty
    ("BASIC-SCORE", "basic", {}, {"went_out": 0, "hands": BASIC_HAND, "all_at_once": False},
     [29, 0, 0]),
    ("BASIC-SCORE", "basic", {"scoring": "penalty"},
     {"went_out": 0, "hands": BASIC_HAND, "all_at_once": False}, [0, 18, 11]),
    ("BASIC-SCORE", "basic", {"ace": "high_or_low"},
     {"went_out": 0, "hands": BASIC_HAND, "all_at_once": False}, [43, 0, 0]),
    ("BASIC-SCORE", "basic", {"ace": "around", "scoring": "penalty"},
     {"went_out": 2, "hands": [["AC"], ["QD", "AD"], []], "all_at_once": False},
     [15, 25, 0]),
    # BASIC-RUMMY: double (default), bonus10, off
    ("BASIC-RUMMY", "basic", {}, {"went_out": 0, "hands": BASIC_HAND, "all_at_once": True},
     [58, 0, 0]),
    ("BASIC-RUMMY", "basic", {"scoring": "penalty"},
     {"went_out": 0, "hands": BASIC_HAND, "all_at_once": True}, [0, 36, 22]),
    ("BASIC-RUMMY", "basic", {"going_rummy": "bonus10"},
     {"went_out": 0, "hands": BASIC_HAND, "all_at_once": True}, [39, 0, 0]),
    ("BASIC-RUMMY", "basic", {"going_rummy": "off"},
     {"went_out": 0, "hands": BASIC_HAND, "all_at_once": True}, [29, 0, 0]),
    ("BASIC-RUMMY", "basic", {"going_rummy": "off", "scoring": "penalty"},
     {"went_out": 0, "hands": BASIC_HAND, "all_at_once": True}, [0, 18, 11]),
    # BASIC-BLOCK: nobody out
    ("BASIC-BLOCK", "basic", {},
     {"went_out": None, "hands": [["6S"], ["9S", "6D"], ["7S"], ["TS", "JS", "AS"]]},
     [25, 0, 0, 0]),
    ("BASIC-BLOCK", "basic", {},
     {"went_out": None, "hands": [["5S"], ["5D"], ["TS", "JS", "QS"]]}, [12.5, 12.5, 0]),
    ("BASIC-BLOCK", "basic", {"scoring": "penalty"},
     {"went_out": None, "hands": [["6S"], ["9S", "6D"], ["7S"], ["TS", "JS", "AS"]]},
     [6, 15, 7, 21]),
    # R51-SCORE
    ("R51-SCORE", "rummy51", {},
     {"went_out": 0, "hands": [[], ["AS", "JK", "7D"], ["KC"]], "opened": [True, True, False],
      "all_at_once": False, "final_discard": "5C"}, [0, 38, 100]),
    ("R51-SCORE", "rummy51", {},
     {"went_out": 1, "hands": [["KC", "KD"], [], ["2S"]], "opened": [False, True, True],
      "all_at_once": False}, [100, 0, 2]),
    ("R51-SCORE", "rummy51", {"joker_penalty": 25},
     {"went_out": 0, "hands": [[], ["AS", "JK", "7D"]], "opened": [True, True],
      "all_at_once": False}, [0, 43]),
    ("R51-SCORE", "rummy51", {},
     {"went_out": None, "hands": [["AS"], ["KC"]], "opened": [True, False]}, [11, 100]),
    ("R51-ALL-AT-ONCE", "rummy51", {},
     {"went_out": 0, "hands": [[], ["AS", "JK", "7D"], ["KC"]], "opened": [True, True, False],
      "all_at_once": True, "final_discard": "5C"}, [0, 76, 200]),
    ("R51-ALL-AT-ONCE", "rummy51", {},
     {"went_out": 0, "hands": [[], ["AS", "JK", "7D"], ["KC"]], "opened": [True, True, False],
      "all_at_once": True, "final_discard": "JK"}, [0, 152, 400]),
    ("R51-ALL-AT-ONCE", "rummy51", {},
     {"went_out": 2, "hands": [["3C"], ["QH"], []], "opened": [False, False, True],
      "all_at_once": True, "final_discard": "9S"}, [200, 200, 0]),
    # L14-ACE and L14-DRY
    ("L14-ACE", "lebanese14", {},
     {"went_out": 0, "hands": [[], ["AS", "7D"], ["AC"]], "opened": [True, True, True],
      "all_at_once": False}, [0, 17, 10]),
    ("L14-ACE", "lebanese14", {},
     {"went_out": 0, "hands": [[], ["AS", "7D"], ["KC"]], "opened": [True, True, False],
      "all_at_once": False}, [0, 17, 100]),
    ("L14-DRY", "lebanese14", {},
     {"went_out": 0, "hands": [[], ["AS", "7D"], ["KC"]], "opened": [True, True, False],
      "all_at_once": True, "jokers_used": 0}, [0, 34, 200]),
    ("L14-DRY", "lebanese14", {},
     {"went_out": 0, "hands": [[], ["AS", "7D"], ["KC"]], "opened": [True, True, False],
      "all_at_once": True, "jokers_used": 1}, [0, 26, 150]),
    ("L14-DRY", "lebanese14", {},
     {"went_out": 0, "hands": [[], ["7D"], ["JK", "3D"]], "opened": [True, True, True],
      "all_at_once": True, "jokers_used": 1}, [0, 11, 35]),
    ("L14-DRY", "lebanese14", {},
     {"went_out": 0, "hands": [[], ["AS", "7D"], ["KC"]], "opened": [True, True, False],
      "all_at_once": True, "jokers_used": 2}, [0, 17, 100]),
    ("L14-DRY", "lebanese14", {},
     {"went_out": 0, "hands": [[], ["AS", "7D"], ["KC"]], "opened": [True, True, False],
      "all_at_once": True, "jokers_used": 3}, [0, 17, 100]),
    # DUMMY-SCORE: the player out 0; 3-9 five, 10 J Q K ten, ace 15, 2 or joker 50
    ("DUMMY-SCORE", "dummy", {}, {"went_out": 0, "hands": [[], ["2S", "JK", "AS", "TD", "5C"]]},
     [0, 130]),
    ("DUMMY-SCORE", "dummy", {}, {"went_out": 1, "hands": [["3C", "9D", "KD"], [], ["2H"]]},
     [20, 0, 50]),
    # WROTHAM-SCORE: as BASIC-SCORE / BASIC-RUMMY, a joker left in hand counts 15
    ("WROTHAM-SCORE", "wrotham", {},
     {"went_out": 0, "hands": [[], ["JK", "AS", "TD"]], "all_at_once": False}, [26, 0]),
    ("WROTHAM-SCORE", "wrotham", {},
     {"went_out": 0, "hands": [[], ["JK", "AS", "TD"]], "all_at_once": True}, [52, 0]),
    ("WROTHAM-SCORE", "wrotham", {"joker_penalty": 25, "scoring": "penalty"},
     {"went_out": 0, "hands": [[], ["JK", "AS", "TD"]], "all_at_once": False}, [0, 36]),
    ("WROTHAM-SCORE", "wrotham", {}, {"went_out": None, "hands": [["5S"], ["JK"]]}, [10, 0]),
]


@pytest.mark.parametrize(("rule", "variant", "rules", "facts", "scores"), SCORES,
                         ids=[f"{r[0]}-{i}" for i, r in enumerate(SCORES)])
def test_score_hand(client: FlaskClient, rule: str, variant: str, rules: dict[str, Any],
                    facts: dict[str, Any], scores: list[float]) -> None:
    offered(client, variant)
    resp = client.post("/v1/scores/hand", json={"variant": variant, "rules": rules, **facts})
    assert resp.status_code == 200, (rule, resp.get_data(as_text=True))
    assert resp.mimetype == "application/json"
    body = resp.get_json()
    assert body["scores"] == scores, (rule, body)


def test_the_api_md_example(client: FlaskClient) -> None:
    resp = client.post("/v1/scores/hand", json={
        "variant": "rummy51", "rules": {}, "went_out": 0,
        "hands": [[], ["AS", "JK", "7D"], ["KC"]],
        "opened": [True, True, False], "all_at_once": False, "final_discard": "5C"})
    assert resp.status_code == 200
    assert resp.get_json()["scores"] == [0, 38, 100]


def test_dry_rummy_is_flagged(client: FlaskClient) -> None:
    """R51-ALL-AT-ONCE: all at once while nobody else had melded is a dry rummy."""
    facts = {"variant": "rummy51", "went_out": 0, "hands": [[], ["AS", "JK", "7D"], ["KC"]],
             "all_at_once": True, "final_discard": "5C"}
    dry = client.post("/v1/scores/hand", json={**facts, "opened": [True, False, False]})
    assert dry.status_code == 200
    assert dry.get_json()["scores"] == [0, 200, 200]
    assert dry.get_json()["dry"] is True
    wet = client.post("/v1/scores/hand", json={**facts, "opened": [True, True, False]})
    assert wet.get_json()["scores"] == [0, 76, 200]
    assert wet.get_json()["dry"] is False


@pytest.mark.parametrize(("body", "fields"), [
    # R51: who has opened and whether it was all at once
    ({"variant": "rummy51", "went_out": 0, "hands": [[], ["AS"]], "all_at_once": False},
     {"opened"}),
    ({"variant": "rummy51", "went_out": 0, "hands": [[], ["AS"]]}, {"opened", "all_at_once"}),
    ({"variant": "rummy51", "went_out": 0, "hands": [[], ["AS"]], "opened": [True, True]},
     {"all_at_once"}),
    ({"variant": "rummy51", "went_out": None, "hands": [[], ["AS"]]}, {"opened"}),
    # R51-SCORE: all at once needs the final discard (a joker quadruples)
    ({"variant": "rummy51", "went_out": 0, "hands": [[], ["AS"]], "opened": [True, True],
      "all_at_once": True}, {"final_discard"}),
    # L14-DRY: all at once needs the jokers used
    ({"variant": "lebanese14", "went_out": 0, "hands": [[], ["AS"]], "opened": [True, True],
      "all_at_once": True}, {"jokers_used"}),
    ({"variant": "lebanese14", "went_out": 0, "hands": [[], ["AS"]], "all_at_once": False},
     {"opened"}),
    # BASIC-RUMMY: whether the winner went out all at once
    ({"variant": "basic", "went_out": 0, "hands": [[], ["AS"]]}, {"all_at_once"}),
    ({"variant": "wrotham", "went_out": 0, "hands": [[], ["AS"]]}, {"all_at_once"}),
    # malformed facts
    ({"variant": "rummy51", "went_out": 0, "hands": [[], ["AS"], ["KC"]],
      "opened": [True, True], "all_at_once": False}, {"opened"}),
    ({"variant": "basic", "hands": [[], ["AS"]], "all_at_once": False}, {"went_out"}),
    ({"variant": "basic", "went_out": 2, "hands": [[], ["AS"]], "all_at_once": False},
     {"went_out"}),
    ({"variant": "basic", "went_out": 0, "all_at_once": False}, {"hands"}),
    ({"variant": "basic", "went_out": 0, "hands": [[], ["AX"]], "all_at_once": False},
     {"hands.1.0"}),
    ({"variant": "basic", "went_out": 0, "hands": [[], ["AS", "JK"]], "all_at_once": False},
     {"hands.1"}),
    # C-DECK: the hands (and the last discard) are cards of one deck
    ({"variant": "basic", "went_out": 0, "hands": [[], ["AS", "AS"]], "all_at_once": False},
     {"hands"}),
    ({"variant": "basic", "went_out": 0, "hands": [[], ["AS"], ["AS"]], "all_at_once": False},
     {"hands"}),
    ({"variant": "wrotham", "went_out": 0, "hands": [[], ["JK", "JK"], ["JK", "JK"]],
      "all_at_once": False}, {"hands"}),
    ({"variant": "rummy51", "went_out": 0, "hands": [[], ["AS", "AS"]], "opened": [True, True],
      "all_at_once": True, "final_discard": "AS"}, {"hands"}),
    ({"variant": "basic", "went_out": 0, "hands": [[], ["AS"]], "all_at_once": False,
      "final_discard": "JK"}, {"final_discard"}),
    # C-OUT: the seat that went out holds nothing
    ({"variant": "basic", "went_out": 1, "hands": [[], ["AS"]], "all_at_once": False},
     {"hands.1"}),
    ({"variant": "rummy51", "went_out": 0, "hands": [["KD"], ["AS"], ["KC"]],
      "opened": [True, True, False], "all_at_once": False}, {"hands.0"}),
    ({"variant": "canasta", "went_out": 0, "hands": [[], ["AS"]]}, {"variant"}),
    ({"variant": "basic", "rules": {"scoring": "golf"}, "went_out": 0, "hands": [[], ["AS"]],
      "all_at_once": False}, {"rules.scoring"}),
])
def test_score_hand_names_each_missing_or_bad_fact(client: FlaskClient, body: dict[str, Any],
                                                   fields: set[str]) -> None:
    if body.get("variant") in ("dummy", "wrotham"):
        offered(client, body["variant"])
    assert_problem(client.post("/v1/scores/hand", json=body), 400, fields)
