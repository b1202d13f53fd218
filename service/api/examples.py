"""The examples of each request body in the OpenAPI document: what the docs page's "Try it
out" sends (its first example of each), so every one of them is a request the server takes
(tests/api/test_openapi.py sends them all)."""

from __future__ import annotations

from typing import Any

from service.rules.variants import VARIANTS


def _example(summary: str, value: Any) -> dict[str, Any]:
    return {"summary": summary, "value": value}


GAME_EXAMPLES = {
    f"create_{variant.id}": _example(
        f"{variant.name}, two players, the default rules",
        {"variant": variant.id, "players": ["Ana", "Bo"]})
    for variant in VARIANTS.values()
}
GAME_EXAMPLES["create_with_open_seat"] = _example(
    "Rummy 51 with knobs and an open seat (POST /v1/join takes it)",
    {"variant": "rummy51", "players": ["Ana", None, "Cy"],
     "rules": {"opening_points": 51, "match_end": {"deals": 3}}})

MOVE_EXAMPLES = {
    "draw_stock": _example("Draw the stock's top card", {"type": "draw", "source": "stock"}),
    "draw_discard": _example("Take the discard pile's top card",
                             {"type": "draw", "source": "discard"}),
    "meld": _example("Put a run and a set down (lenient codes: `10h`, `q♠`)", {
        "type": "meld", "melds": [{"cards": ["7H", "8H", "9H"]},
                                  {"cards": ["QS", "q♦", "QC"]}]}),
    "meld_with_wild": _example("A run with a joker standing for a chosen card", {
        "type": "meld", "melds": [{"cards": ["5D", {"card": "JK", "as": "6D"}, "7D"]}]}),
    "lay_off": _example("Lay a card off on a table meld", {
        "type": "lay_off", "meld_id": "m1", "cards": ["10h"], "end": "high"}),
    "discard": _example("Discard a card, ending the turn", {"type": "discard", "card": "KC"}),
    "knock": _example("Gin: knock, discarding a card", {
        "type": "knock", "card": "9S", "melds": [{"cards": ["2C", "3C", "4C"]}]}),
    "resign": _example("Resign the match", {"type": "resign"}),
}

REQUEST_EXAMPLES: dict[tuple[str, str], dict[str, Any]] = {
    ("post", "/v1/games"): GAME_EXAMPLES,
    ("post", "/v1/games/{game_id}/moves"): MOVE_EXAMPLES,
    ("post", "/v1/join"): {"join": _example(
        "Take the lowest open seat", {"code": "K7QP-M2XD", "name": "Bo"})},
    ("post", "/v1/melds/check"): {
        "run": _example("A run of hearts", {"variant": "basic", "cards": ["7H", "8H", "9H"]}),
        "set_with_joker": _example("Rummy 51: a set with a joker", {
            "variant": "rummy51", "cards": ["QS", "QH", {"card": "JK", "as": "QD"}]}),
    },
    ("post", "/v1/scores/hand"): {
        "basic": _example("Basic rummy: seat 0 went out", {
            "variant": "basic", "went_out": 0, "hands": [[], ["KS", "10♥", "2c"]],
            "all_at_once": False}),
        "rummy51": _example("Rummy 51: seat 1 went out; seat 0 had opened", {
            "variant": "rummy51", "went_out": 1, "hands": [["QS", "JK"], []],
            "opened": [True, True], "all_at_once": False}),
    },
    ("post", "/v1/scoresheets"): {
        "rummy51": _example("A Rummy 51 sheet for three", {
            "variant": "rummy51", "players": ["Ana", "Bo", "Cy"]}),
        "basic": _example("A basic rummy sheet for two", {
            "variant": "basic", "players": ["Ana", "Bo"]}),
    },
    ("post", "/v1/scoresheets/{sheet_id}/hands"): {
        "cards": _example("A hand entered as cards (the Rummy 51 sheet of Ana, Bo and Cy)", {
            "went_out": "Ana", "hands": {"Bo": ["AS", "10♥", "q♠"], "Cy": ["7d", "JK"]},
            "opened": ["Ana", "Bo"], "all_at_once": False}),
        "points": _example("A hand entered as points", {
            "points": {"Ana": 0, "Bo": 31, "Cy": 100}}),
    },
}
"""Each operation's request body examples, by (method, path)."""
