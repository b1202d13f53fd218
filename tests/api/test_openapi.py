"""The generated OpenAPI document: committed, valid, complete; the docs page works offline."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from openapi_spec_validator import validate
from werkzeug.exceptions import MethodNotAllowed, NotFound

from service.api.schemas import MoveSchema
from tests.support.problems import PROBLEM

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "openapi" / "openapi.json"
REGENERATE = "regenerate with: .venv/bin/python -m service.api.openapi > openapi/openapi.json"

# Every resource of API.md except the document and the docs page themselves.
API_MD_OPERATIONS = [
    ("get", "/v1/variants"),
    ("post", "/v1/games"),
    ("get", "/v1/games/{game_id}"),
    ("get", "/v1/games/{game_id}/me"),
    ("post", "/v1/games/{game_id}/moves"),
    ("get", "/v1/games/{game_id}/legal-moves"),
    ("get", "/v1/games/{game_id}/events"),
    ("post", "/v1/melds/check"),
    ("post", "/v1/scores/hand"),
    ("get", "/healthz"),
    ("get", "/readyz"),
]
IMPLEMENTED_NOW = {
    ("get", "/v1/variants"), ("post", "/v1/games"), ("get", "/v1/games/{game_id}"),
    ("get", "/v1/games/{game_id}/me"), ("post", "/v1/games/{game_id}/moves"),
    ("get", "/healthz"), ("get", "/readyz"),
}
# The problem statuses API.md gives each operation (429 and 503 may come on top).
ERROR_STATUSES = {
    ("post", "/v1/games"): {"400", "413"},
    ("get", "/v1/games/{game_id}"): {"404"},
    ("get", "/v1/games/{game_id}/me"): {"401", "403", "404"},
    ("post", "/v1/games/{game_id}/moves"): {"400", "401", "403", "404", "412", "413", "422"},
}
SUCCESS_STATUS = {("post", "/v1/games"): "201"}
SEAT_OPERATIONS = {("get", "/v1/games/{game_id}/me"), ("post", "/v1/games/{game_id}/moves")}
API_MD_CODES = [
    "GAME_FINISHED", "NOT_YOUR_TURN", "WRONG_PHASE", "CARD_NOT_IN_HAND", "EMPTY_PILE",
    "INVALID_MELD", "UNKNOWN_MELD", "INVALID_LAY_OFF", "MELD_LIMIT", "DISCARD_TAKEN_CARD",
    "DISCARD_NOT_USED", "DISCARD_DRAW_FORBIDDEN", "NOT_OPENED", "OPENING_TOO_LOW",
    "OPENING_NEEDS_CLEAN_RUN", "TOO_MANY_WILDS", "WILD_NOT_ALLOWED", "SWAP_NOT_ALLOWED",
    "JOKER_NOT_USED", "CONTRACT_NOT_MET", "CONTRACT_ALREADY_MET", "PLAYABLE_DISCARD",
    "MUST_DISCARD_TO_GO_OUT", "MUST_MELD_ALL_AT_ONCE", "CUT_IN_NOT_ALLOWED",
    "ABORT_TOO_LATE", "OUT_OF_MATCH", "NO_CLOCK", "CLOCK_NOT_EXPIRED", "OWN_TIMEOUT",
    "IDEMPOTENCY_KEY_REUSED",
]


def generated(app: Flask) -> dict[str, Any]:
    """The app's document as JSON would carry it."""
    spec: dict[str, Any] = json.loads(json.dumps(app.extensions["api"].spec.to_dict()))
    return spec


def implemented(app: Flask, method: str, path: str) -> bool:
    adapter = app.url_map.bind("localhost")
    try:
        adapter.match(path.replace("{game_id}", "g1").replace("{seat}", "1"),
                      method=method.upper())
    except (NotFound, MethodNotAllowed):
        return False
    return True


def resolve(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """``node`` with a local ``$ref`` followed."""
    while "$ref" in node:
        target: Any = spec
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def test_served_document_is_the_generated_one(app: Flask, client: FlaskClient) -> None:
    resp = client.get("/openapi.json")
    assert resp.status_code == 200
    assert resp.mimetype == "application/json"
    assert resp.get_json() == generated(app)


def test_generated_document_is_the_committed_one(app: Flask) -> None:
    if not COMMITTED.is_file():
        pytest.fail(f"{COMMITTED.relative_to(ROOT)} does not exist; {REGENERATE}")
    committed = json.loads(COMMITTED.read_text())
    current = generated(app)
    if committed != current:
        where = "\n".join(differences(committed, current)[:20])
        pytest.fail(f"openapi/openapi.json is out of date; {REGENERATE}\n"
                    f"first differences (committed vs generated):\n{where}")


def differences(old: Any, new: Any, at: str = "") -> list[str]:
    """JSON pointers where ``old`` and ``new`` differ."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for key in sorted(set(old) | set(new)):
            here = f"{at}/{key}"
            if key not in new:
                out.append(f"{here}: only committed")
            elif key not in old:
                out.append(f"{here}: only generated")
            else:
                out.extend(differences(old[key], new[key], here))
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [d for i, (o, n) in enumerate(zip(old, new, strict=True))
                for d in differences(o, n, f"{at}/{i}")]
    return [] if old == new else [f"{at or '/'}: {json.dumps(old)[:80]} != {json.dumps(new)[:80]}"]


def test_document_is_valid_openapi_3_1(app: Flask) -> None:
    spec = generated(app)
    assert spec["openapi"] == "3.1.0"
    validate(spec)  # openapi-spec-validator, by the document's own version
    assert '"nullable"' not in json.dumps(spec["components"]["schemas"]).replace(
        '"nullable": {"type": "boolean"}', "")  # 3.1 spells it type: [..., "null"]
    assert spec["servers"] and spec["servers"][0]["url"] == "/"


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(method, path, operation) for path, item in spec["paths"].items()
            for method, operation in item.items() if method != "parameters"]


def test_every_operation_has_a_unique_client_style_operation_id(app: Flask) -> None:
    ids = [operation.get("operationId") for _, _, operation in _operations(generated(app))]
    assert None not in ids
    assert len(set(ids)) == len(ids), ids
    assert [i for i in ids if not re.fullmatch(r"[a-z]+(?:[A-Z][a-z]+)*", str(i))] == []
    assert {"createGame", "getGame", "getSeatView", "postMove", "listLegalMoves",
            "listEvents", "checkMeld", "scoreHand", "listVariants", "joinGame"} <= set(ids)


def test_429_and_503_are_documented_with_retry_after(app: Flask) -> None:
    spec = generated(app)
    for method, path, operation in _operations(spec):
        statuses = set(operation["responses"])
        if path.startswith("/v1/"):
            assert "429" in statuses, (method, path)
        # the connection gate answers 503 on any path (restarting, too many connections
        # from one address), the stateless ones and /healthz included
        assert "503" in statuses, (method, path)
        for status in {"429", "503"} & statuses:
            response = resolve(spec, operation["responses"][status])
            header = resolve(spec, response["headers"]["Retry-After"])
            assert header["schema"]["type"] == "integer"
            assert PROBLEM in response["content"]
            if status == "429":  # the IETF draft's headers, as every limited answer sends
                assert {"RateLimit", "RateLimit-Policy"} <= set(response["headers"])
    assert "503" in spec["paths"]["/readyz"]["get"]["responses"]
    assert "429" not in spec["paths"]["/healthz"]["get"]["responses"]


def test_the_connection_gate_s_codes_are_problem_codes(app: Flask) -> None:
    """A generated client parses the gate's 503 (service.serving_limits) as a Problem: its
    ``code`` must be one of the enum's (openapi-python-client refuses an unknown one)."""
    source = (ROOT / "service" / "serving_limits.py").read_text()
    codes = set(re.findall(r'code="([A-Z_]+)"', source))
    assert {"TOO_MANY_CONNECTIONS", "RESTARTING"} <= codes
    enum = generated(app)["components"]["schemas"]["Problem"]["properties"]["code"]["enum"]
    assert codes - set(enum) == set()


def test_problem_allows_its_extension_members(app: Flask) -> None:
    problem = generated(app)["components"]["schemas"]["Problem"]
    assert problem.get("additionalProperties", True) is not False
    assert {"code", "rule", "reasons", "errors", "current_version"} <= set(
        problem["properties"])


def test_rules_and_cards_are_components_every_body_refers_to(app: Flask) -> None:
    spec = generated(app)
    schemas = spec["components"]["schemas"]
    assert {"Rules", "CardCode", "MeldCard"} <= set(schemas)
    text = json.dumps({k: v for k, v in schemas.items() if k != "Rules"})
    # the knobs are described once, in Rules: no other schema inlines them
    assert '"opening_points": {' not in text and '"match_end": {' not in text
    for name in ("GameCreate", "MeldCheck", "ScoreHand", "SheetCreate", "PublicView",
                 "Variant"):
        assert schemas[name]["properties"]["rules"]["$ref"] == "#/components/schemas/Rules"
    assert re.search(r'"\$ref": "#/components/schemas/CardCode"',
                     json.dumps(schemas["Deal"]))
    assert schemas["MeldSpec"]["properties"]["cards"]["items"] == {
        "$ref": "#/components/schemas/MeldCard"}


def test_the_events_endpoint_documents_its_event_stream(app: Flask) -> None:
    ok = generated(app)["paths"]["/v1/games/{game_id}/events"]["get"]["responses"]["200"]
    assert set(ok["content"]) == {"application/json", "text/event-stream"}


def _examples(spec: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    body = spec["paths"][path][method]["requestBody"]["content"]["application/json"]
    examples: dict[str, Any] = {name: e["value"] for name, e in body["examples"].items()}
    return examples


def test_every_request_body_has_examples(app: Flask) -> None:
    spec = generated(app)
    bodies = [(m, p) for m, p, op in _operations(spec) if "requestBody" in op]
    assert len(bodies) >= 7
    assert [(m, p) for m, p in bodies if not _examples(spec, m, p)] == []


def test_the_game_examples_create_a_game_of_every_variant(
        app: Flask, client: FlaskClient) -> None:
    examples = _examples(generated(app), "post", "/v1/games")
    variants = {v["id"] for v in client.get("/v1/variants").get_json()["variants"]}
    assert {e["variant"] for e in examples.values()} == variants
    for name, body in examples.items():
        resp = client.post("/v1/games", json=body)
        assert resp.status_code == 201, (name, resp.get_json())
    # the docs page's "Try it out" takes the first one: a game that starts
    first = client.post("/v1/games", json=next(iter(examples.values()))).get_json()
    assert first["game"]["status"] == "playing"


def test_the_move_examples_are_moves_and_the_first_is_legal_first(
        app: Flask, client: FlaskClient) -> None:
    from service.api.schemas import MoveSchema

    examples = _examples(generated(app), "post", "/v1/games/{game_id}/moves")
    for body in examples.values():
        MoveSchema().load(body)
    created = client.post("/v1/games", json={"variant": "basic", "players": ["Ana", "Bo"]})
    game = created.get_json()
    seat = game["game"]["turn"]["seat"]
    token = game["seats"][seat]["token"]
    resp = client.post(f"/v1/games/{game['game_id']}/moves?dry_run=true",
                       json=next(iter(examples.values())),
                       headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 200, resp.get_json()


def test_the_committed_document_shows_a_first_move_first(
        client: FlaskClient) -> None:
    """Tools show the first of a body's ``examples`` (Swagger UI's "Try it out", Redoc):
    in the committed file too (written with sorted keys, but for the examples), creating a
    game with the first example and then sending the first move example is accepted, and
    every body's first example is the one service.api.examples puts first."""
    from service.api.examples import REQUEST_EXAMPLES

    committed = json.loads(COMMITTED.read_text())  # the file's order, as a tool reads it
    for (method, path), examples in REQUEST_EXAMPLES.items():
        body = committed["paths"][path][method]["requestBody"]["content"]["application/json"]
        assert list(body["examples"]) == list(examples), (method, path)
    create = next(iter(_examples(committed, "post", "/v1/games").values()))
    move = next(iter(_examples(committed, "post", "/v1/games/{game_id}/moves").values()))
    assert move["type"] != "discard"
    game = client.post("/v1/games", json=create).get_json()
    token = game["seats"][game["game"]["turn"]["seat"]]["token"]
    resp = client.post(f"/v1/games/{game['game_id']}/moves", json=move,
                       headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 200, resp.get_json()


def _validator(spec: dict[str, Any], name: str) -> Any:
    """A JSON Schema (2020-12, as OpenAPI 3.1 schemas are) validator of component ``name``."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator({"$ref": f"#/components/schemas/{name}",
                                 "components": spec["components"]})


def test_a_move_answer_requires_version_status_and_a_typed_turn(
        app: Flask, client: FlaskClient) -> None:
    """``version``, ``status`` and ``turn`` are required in a move's answer, ``turn`` is the
    views' ``Turn`` (or null) and ``status`` one of theirs; the answers on the wire, a log
    entry's included, are what the schemas say (the wire format did not change)."""
    spec = generated(app)
    schemas = spec["components"]["schemas"]
    result = schemas["MoveResult"]
    assert {"version", "status", "turn", "game", "events"} <= set(result["required"])
    view_turn = schemas["PublicView"]["properties"]["turn"]
    for name in ("MoveResult", "LogEntry"):
        turn = schemas[name]["properties"]["turn"]
        assert turn["anyOf"] == view_turn["anyOf"] == [
            {"$ref": "#/components/schemas/Turn"}, {"type": "null"}], name
        assert schemas[name]["properties"]["status"]["enum"] == schemas["PublicView"][
            "properties"]["status"]["enum"], name
    game = client.post("/v1/games", json={"variant": "basic", "players": ["Ana", "Bo"]}
                       ).get_json()
    seat = game["game"]["turn"]["seat"]
    auth = {"Authorization": f"Bearer {game['seats'][seat]['token']}"}
    moves = f"/v1/games/{game['game_id']}/moves"
    dry = client.post(f"{moves}?dry_run=true", json={"type": "draw", "source": "stock"},
                      headers=auth).get_json()
    drawn = client.post(moves, json={"type": "draw", "source": "stock"}, headers=auth
                        ).get_json()
    card = drawn["game"]["hand"][0]
    done = client.post(f"{moves}?include=legal_moves", json={"type": "discard", "card": card},
                       headers=auth).get_json()
    check = _validator(spec, "MoveResult")
    for answer in (dry, drawn, done):
        errors = [e.message for e in check.iter_errors(answer)]
        assert errors == [], errors
    assert drawn["turn"] == {"seat": seat, "phase": "play"}
    assert done["turn"]["seat"] != seat
    log = client.get(f"/v1/games/{game['game_id']}/events").get_json()
    check = _validator(spec, "EventsPage")
    assert [e.message for e in check.iter_errors(log)] == []
    assert log["entries"][-1]["turn"] == done["turn"]


def test_the_stateless_and_sheet_examples_are_answered(app: Flask, client: FlaskClient
                                                       ) -> None:
    from service.api.schemas import JoinSchema

    spec = generated(app)
    for path in ("/v1/melds/check", "/v1/scores/hand"):
        for name, body in _examples(spec, "post", path).items():
            resp = client.post(path, json=body)
            assert resp.status_code == 200, (path, name, resp.get_json())
    for body in _examples(spec, "post", "/v1/join").values():
        JoinSchema().load(body)
    sheets = _examples(spec, "post", "/v1/scoresheets")
    for name, body in sheets.items():
        assert client.post("/v1/scoresheets", json=body).status_code == 201, name
    for name, hand in _examples(spec, "post", "/v1/scoresheets/{sheet_id}/hands").items():
        sheet = client.post("/v1/scoresheets", json=next(iter(sheets.values()))).get_json()
        resp = client.post(f"/v1/scoresheets/{sheet['sheet_id']}/hands", json=hand,
                           headers={"Authorization": f"Bearer {sheet['token']}"})
        assert resp.status_code == 200, (name, resp.get_json())


def test_every_implemented_api_md_operation_is_documented(app: Flask) -> None:
    spec = generated(app)
    live = {op for op in API_MD_OPERATIONS if implemented(app, *op)}
    assert live >= IMPLEMENTED_NOW
    for method, path in sorted(live):
        assert path in spec["paths"], path
        operation = spec["paths"][path].get(method)
        assert operation is not None, (method, path)
        assert operation.get("summary") or operation.get("description"), (method, path)
        success = SUCCESS_STATUS.get((method, path), "200")
        assert success in operation["responses"], (method, path)
        assert "application/json" in operation["responses"][success]["content"], (method, path)
        for status in ERROR_STATUSES.get((method, path), set()):
            assert status in operation["responses"], (method, path, status)
            assert PROBLEM in operation["responses"][status]["content"], (method, path, status)
        if (method, path) in SEAT_OPERATIONS:
            assert operation.get("security") == [{"seatToken": []}], (method, path)
    scheme = spec["components"]["securitySchemes"]["seatToken"]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")


def test_documented_paths_exist_in_the_app(app: Flask) -> None:
    spec = generated(app)
    for path, item in spec["paths"].items():
        for method in item:
            if method in ("get", "post", "put", "patch", "delete"):
                assert implemented(app, method, path), (method, path)


def test_moves_document_their_headers_query_and_body(app: Flask) -> None:
    spec = generated(app)
    item = spec["paths"]["/v1/games/{game_id}/moves"]
    operation = item["post"]
    # path parameters may stand on the path item, the others on the operation
    params = {(p["in"], p["name"])
              for p in [*item.get("parameters", []), *operation["parameters"]]}
    assert {("path", "game_id"), ("header", "If-Match"), ("header", "Idempotency-Key"),
            ("query", "dry_run")} <= params
    body = resolve(spec, operation["requestBody"]["content"]["application/json"]["schema"])
    # one schema per move type, told apart by "type" (a discriminator mapping each to it)
    mapping = body["discriminator"]["mapping"]
    assert body["discriminator"]["propertyName"] == "type"
    assert set(mapping) == {"draw", "meld", "lay_off", "swap_joker", "take_from_meld",
                            "discard", "cut_in", "resign", "abort", "claim_timeout",
                            "pass", "knock", "lay_out"}
    assert sorted(o["$ref"] for o in body["oneOf"]) == sorted(mapping.values())
    fields = {kind: resolve(spec, {"$ref": ref}) for kind, ref in mapping.items()}
    for kind, schema in fields.items():
        assert schema["properties"]["type"]["enum"] == [kind]
        assert schema["additionalProperties"] is False
    assert {k: (set(s["properties"]) - {"type"}, set(s["required"]) - {"type"})
            for k, s in fields.items() if k in ("draw", "lay_off", "discard", "cut_in")} == {
        "draw": ({"source"}, {"source"}), "lay_off": ({"meld_id", "cards", "end"},
                                                      {"meld_id", "cards"}),
        "discard": ({"card", "announce"}, {"card"}), "cut_in": (set(), set())}
    assert body["example"] == {"type": "draw", "source": "stock"}
    assert MoveSchema().load(body["example"])  # the docs page's prefilled body is a move


def test_every_documented_error_answer_is_a_problem(app: Flask) -> None:
    """API.md: errors are ``application/problem+json`` (the ``default`` answer too)."""
    spec = generated(app)
    wrong = []
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method == "parameters":
                continue
            for status, response in operation["responses"].items():
                if status == "default" or status[0] in "45":
                    content = resolve(spec, response).get("content", {})
                    if set(content) != {PROBLEM}:
                        wrong.append((method, path, status, sorted(content)))
    assert wrong == []


def test_problem_schema_lists_every_api_md_code(app: Flask) -> None:
    spec = generated(app)
    operation = spec["paths"]["/v1/games/{game_id}/moves"]["post"]
    problem = resolve(spec, operation["responses"]["422"]["content"][PROBLEM]["schema"])
    assert {"type", "title", "status", "detail", "code", "rule", "errors"} <= set(
        problem["properties"])
    assert set(API_MD_CODES) <= set(problem["properties"]["code"]["enum"])


def test_views_document_the_api_md_fields(app: Flask) -> None:
    spec = generated(app)
    get = spec["paths"]["/v1/games/{game_id}"]["get"]
    public = resolve(spec, get["responses"]["200"]["content"]["application/json"]["schema"])
    assert {"game_id", "variant", "rules", "status", "hand_number", "dealer", "turn",
            "version", "stock_count", "discard_top", "discard_count", "seats", "melds",
            "hands_played", "winners", "arranged"} <= set(public["properties"])
    me = spec["paths"]["/v1/games/{game_id}/me"]["get"]
    seat = resolve(spec, me["responses"]["200"]["content"]["application/json"]["schema"])
    assert "hand" in seat["properties"]
    assert "hand" not in public["properties"]


class _Assets(HTMLParser):
    """The script and stylesheet URLs of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "script" and values.get("src"):
            self.urls.append(str(values["src"]))
        if tag == "link" and values.get("href"):
            self.urls.append(str(values["href"]))


def test_docs_page_works_offline(client: FlaskClient) -> None:
    resp = client.get("/docs")
    assert resp.status_code == 200
    assert resp.mimetype == "text/html"
    page = resp.get_data(as_text=True)
    parser = _Assets()
    parser.feed(page)
    scripts = [u for u in parser.urls if u.endswith(".js")]
    styles = [u for u in parser.urls if u.endswith(".css")]
    assert scripts, page
    assert styles, page
    for url in parser.urls:
        assert not url.startswith(("http://", "https://", "//")), url
        with client.get(url) as asset:
            assert asset.status_code == 200, url
            assert asset.get_data(), url
            if url.endswith(".js"):
                assert "javascript" in asset.mimetype, (url, asset.mimetype)
            if url.endswith(".css"):
                assert asset.mimetype == "text/css", (url, asset.mimetype)
    assert "http://" not in page
    assert "https://" not in page
    assert '"/openapi.json"' in page


def _texts(node: Any, at: str = "") -> list[tuple[str, str]]:
    """Every ``description`` and ``summary`` in ``node``, with its JSON pointer."""
    if isinstance(node, dict):
        found = [(f"{at}/{key}", value) for key, value in node.items()
                 if key in ("description", "summary") and isinstance(value, str)]
        for key, value in node.items():
            found.extend(_texts(value, f"{at}/{key}"))
        return found
    if isinstance(node, list):
        return [t for i, item in enumerate(node) for t in _texts(item, f"{at}/{i}")]
    return []


def test_the_docs_page_text_is_markdown_naming_only_files_the_repository_holds(
        app: Flask) -> None:
    """Swagger UI renders descriptions as Markdown: a docstring's RST markup (double
    backticks, ``:role:`` references) would show literally, and a file named there must be
    one the repository holds (the rules and the API are in docs/)."""
    texts = _texts(generated(app))
    assert len(texts) > 50  # the walk found the document's texts
    rst = re.compile(r"``|:[a-z]+:`|`_\b")
    assert [(at, text) for at, text in texts if rst.search(text)] == []
    assert [(at, text) for at, text in texts if "API.md" in text or "RULES.md" in text] == []
    for named in {m for _, text in texts for m in re.findall(r"docs/[\w./-]+\.md", text)}:
        assert named in ("docs/api.md", "docs/rules.md"), named
