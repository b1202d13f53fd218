"""Problem answers (RFC 9457, ``application/problem+json``) as the tests check them, and the
rule ids an error may cite."""
from __future__ import annotations

import json
from typing import Any

from werkzeug.test import TestResponse

PROBLEM = "application/problem+json"

# Every rule id docs/rules.md defines: an error or a refusal cites one of these.
RULE_IDS = {
    "C-CARD", "C-DECK", "C-SEAT", "C-DEAL", "C-TURN", "C-MELD", "C-SET", "C-RUN", "C-WILD",
    "C-LAYOFF", "C-DISCARD-BACK", "C-OUT", "C-STOCK", "C-VALUE", "C-RESIGN",
    "C-ABORT", "C-CLOCK",
    "BASIC-PLAYERS", "BASIC-DEAL", "BASIC-SET", "BASIC-MELDS-PER-TURN", "BASIC-LAYOFF",
    "BASIC-OUT", "BASIC-SCORE", "BASIC-RUMMY", "BASIC-BLOCK", "BASIC-STOCK", "BASIC-END",
    "R51-PLAYERS", "R51-DEAL", "R51-FIRST", "R51-SET", "R51-RUN", "R51-WILDS",
    "R51-JOKER-OPP", "R51-VALUE", "R51-OPEN", "R51-DRAW", "R51-SWAP", "R51-TAKE", "R51-LAST",
    "R51-OUT", "R51-ALL-AT-ONCE", "R51-SCORE", "R51-STOCK", "R51-END",
    "L14-DEAL", "L14-ACE", "L14-JOKER-RUN", "L14-DRAW", "L14-DRY",
    "DUMMY-PLAYERS", "DUMMY-CONTRACTS", "DUMMY-SET", "DUMMY-RUN", "DUMMY-WILDS", "DUMMY-DRAW",
    "DUMMY-AFTER", "DUMMY-DISCARD", "DUMMY-CUTIN", "DUMMY-SCORE", "DUMMY-END", "DUMMY-STOCK",
    "WROTHAM-DECK", "WROTHAM-PLAYERS", "WROTHAM-DEAL", "WROTHAM-SWAP", "WROTHAM-LATE",
    "WROTHAM-SCORE",
}


def assert_problem(resp: TestResponse, status: int, fields: set[str] | None = None, *,
                   code: str | None = None, field: str | None = None) -> dict[str, Any]:
    """``resp`` is a problem with ``status``; with ``fields`` its errors name exactly those
    fields (each with a message), with ``field`` that one among others, with ``code`` that
    code. Its type, title and detail are always non-empty strings."""
    assert resp.status_code == status, resp.get_data(as_text=True)[:500]
    assert resp.mimetype == PROBLEM, resp.mimetype
    body: dict[str, Any] = json.loads(resp.get_data())
    assert body["status"] == status
    for member in ("type", "title", "detail"):
        assert isinstance(body[member], str), body
        assert body[member], body
    if code is not None:
        assert body.get("code") == code, body
    if fields is not None:
        assert {e["field"] for e in body["errors"]} == fields, body
        assert all(isinstance(e["message"], str) and e["message"] for e in body["errors"])
    if field is not None:
        assert field in {e["field"] for e in body.get("errors", [])}, body
    return body
