"""Problems in the caller's language (issue 10): English, Danish, Portuguese, Swedish and
Czech, chosen by ``Accept-Language``; ``code`` and ``rule`` never change.

Refusals are checked through the Flask test client on the real Redis; the catalogs are
checked against the messages extracted from the source (every message translated into every
language, with the same placeholders, and the committed ``.mo`` files in step with the
``.po`` files).
"""

from __future__ import annotations

import ast
import json
import re
import string
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.exceptions import HTTPException

from service import serving_limits
from service.api import i18n, problems
from service.app import create_app
from service.config import Settings
from service.referee.errors import RefereeError
from service.rules import Code, RuleId, Violation
from service.rules.cards import CardError
from service.rules.checks import MissingFact
from service.rules.engine import SetupError
from service.rules.errors import N_, MalformedMove, Message, Reason
from service.rules.ruleset import RulesError
from service.sheets import SheetError
from tests.support.basic_game import Game, deal_a
from tests.support.deals import auth
from tests.support.modules import MODULES, imported_modules, module_name
from tests.support.problems import assert_problem
from tests.support.rummy51_game import OPENER0, R51, arrange, junk

ROOT = Path(__file__).resolve().parents[2]
SERVICE = ROOT / "service"
TRANSLATIONS = SERVICE / "translations"
LANGUAGES = ["da", "pt", "sv", "cs"]

# What each language answers for the refusals played below (English first).
EXPECTED: dict[str, dict[str, str]] = {
    "en": {"illegal": "Illegal move", "turn": "it is seat 0's turn (Ana)",
           "phase": "cannot draw now: you have already drawn",
           "opening": "opening worth 18 points, 51 needed",
           "not_found": "Not Found", "no_game": "no game 'nope'",
           "unauthorized": "Unauthorized", "unknown_token": "unknown seat token"},
    "da": {"illegal": "Ulovligt træk", "turn": "det er plads 0's tur (Ana)",
           "phase": "du kan ikke trække nu: du har allerede trukket",
           "opening": "åbningen er 18 point værd, der kræves 51",
           "not_found": "Ikke fundet", "no_game": "intet spil 'nope'",
           "unauthorized": "Ikke godkendt", "unknown_token": "ukendt pladsnøgle"},
    "pt": {"illegal": "Jogada ilegal", "turn": "é a vez do lugar 0 (Ana)",
           "phase": "não pode comprar agora: já comprou",
           "opening": "abertura de 18 pontos, são precisos 51",
           "not_found": "Não encontrado", "no_game": "não existe o jogo 'nope'",
           "unauthorized": "Não autenticado", "unknown_token": "token de lugar desconhecido"},
    "sv": {"illegal": "Otillåtet drag", "turn": "det är plats 0:s tur (Ana)",
           "phase": "du kan inte dra nu: du har redan dragit",
           "opening": "öppningen är värd 18 poäng, 51 krävs",
           "not_found": "Hittades inte", "no_game": "inget spel 'nope'",
           "unauthorized": "Inte autentiserad", "unknown_token": "okänd platsnyckel"},
    "cs": {"illegal": "Neplatný tah", "turn": "na tahu je místo 0 (Ana)",
           "phase": "teď nelze líznout kartu: už jste si lízli",
           "opening": "první vyložení má hodnotu 18 bodů, potřeba je 51",
           "not_found": "Nenalezeno", "no_game": "hra 'nope' neexistuje",
           "unauthorized": "Neověřeno", "unknown_token": "neznámý token místa"},
}


def answer(resp: Any, status: int, language: str, code: str | None = None) -> dict[str, Any]:
    """``resp`` is a problem in ``language`` (Content-Language, Vary)."""
    body = assert_problem(resp, status, code=code)
    assert resp.headers["Content-Language"] == language
    assert "Accept-Language" in resp.headers.get("Vary", "")
    return body


def cards(text: str) -> list[str]:
    """Card codes, ranks and suits named in ``text``."""
    return sorted(re.findall(r"\b(?:[A2-9TJQK][SHDC]|JK|[A2-9TJQKSHDC])\b", text))


def codes(text: str) -> list[str]:
    """The card codes named in ``text`` (as written: a code never changes)."""
    return sorted(re.findall(r"\b(?:[A2-9TJQK][SHDC]|JK)\b", text))


def lang(language: str) -> dict[str, str]:
    return {"Accept-Language": language}


# ---------------------------------------------------------------------------------------
# Choosing the language


@pytest.mark.parametrize(("header", "chosen"), [
    ("fr, sv;q=0.8, en;q=0.5", "sv"),
    ("da", "da"), ("pt-BR", "pt"), ("pt_PT", "pt"), ("sv-SE, en;q=0.1", "sv"),
    ("da-DK, en", "da"), ("CS", "cs"), ("en-GB, cs", "en"),
    ("en;q=0.1, cs;q=0.2", "cs"), ("cs;q=0, da;q=0.1", "da"), ("de, fr;q=0.9", "en"),
    ("*", "en"), ("fr, *;q=0.5, pt;q=0.4", "en"), ("", "en"), (None, "en"),
    ("sv;q=abc, da;q=0.5", "da"), (" , ;q=1, sv", "sv"),
])
def test_the_language_is_the_best_known_one_by_q_value(header: str | None, chosen: str) -> None:
    assert i18n.choose_language(header) == chosen


# ---------------------------------------------------------------------------------------
# Refusals in each language


@pytest.mark.parametrize("language", ["en", *LANGUAGES])
def test_basic_refusals_answer_in_the_language_with_the_same_code_and_rule(
        client: FlaskClient, language: str) -> None:
    expected = EXPECTED[language]
    game = Game(client, dealer=1, deals=[deal_a()])
    problem = answer(game.move(1, {"type": "draw", "source": "stock"}, lang(language)),
                     422, language, "NOT_YOUR_TURN")
    assert (problem["title"], problem["detail"], problem["rule"]) == (
        expected["illegal"], expected["turn"], "C-TURN")
    assert problem["type"].endswith("/not-your-turn")

    game.ok(0, {"type": "draw", "source": "stock"})
    problem = answer(game.move(0, {"type": "draw", "source": "stock"}, lang(language)),
                     422, language, "WRONG_PHASE")
    assert (problem["detail"], problem["rule"]) == (expected["phase"], "C-TURN")

    # several reasons: each in the language, codes and rules as in English
    bad = {"type": "meld", "melds": [{"cards": ["7H", "8H", "KD"]}]}
    problem = answer(game.move(0, bad, lang(language)), 422, language, "INVALID_MELD")
    english = answer(game.move(0, bad), 422, "en", "INVALID_MELD")
    assert [(r["code"], r["rule"]) for r in problem["reasons"]] == [
        (r["code"], r["rule"]) for r in english["reasons"]] == [
        ("INVALID_MELD", "BASIC-SET"), ("INVALID_MELD", "C-RUN")]
    assert problem["rule"] == english["rule"] == "BASIC-SET"
    assert problem["detail"] == problem["reasons"][0]["detail"]
    for mine, theirs in zip(problem["reasons"], english["reasons"], strict=True):
        assert mine["detail"]
        assert (mine["detail"] == theirs["detail"]) == (language == "en")
        assert cards(mine["detail"]) == cards(theirs["detail"])  # codes stay codes

    # a meld action with two melds: the "meld 2 (…): …" prefix is translated too
    two = {"type": "meld", "melds": [{"cards": ["QS", "QD", "QC"]},
                                     {"cards": ["2C", "3C", "KD"]}]}
    problem = answer(game.move(0, two, lang(language)), 422, language, "INVALID_MELD")
    assert all("2C 3C KD" in r["detail"] for r in problem["reasons"])


@pytest.mark.parametrize("language", ["en", *LANGUAGES])
def test_an_opening_too_low_answers_with_its_numbers_in_the_language(
        client: FlaskClient, language: str) -> None:
    deal = arrange(R51, [OPENER0, junk(R51)], stock="2H 8S")
    game = Game(client, variant=R51, dealer=0, deals=[deal])
    game.ok(0, {"type": "discard", "card": "4C"})
    game.ok(1, {"type": "draw", "source": "stock"})
    game.ok(1, {"type": "discard", "card": "2H"})
    game.ok(0, {"type": "draw", "source": "stock"})
    low = {"type": "meld", "melds": [{"cards": ["5C", "6C", "7C"]}]}
    problem = answer(game.move(0, low, lang(language)), 422, language, "OPENING_TOO_LOW")
    assert (problem["title"], problem["detail"], problem["rule"]) == (
        EXPECTED[language]["illegal"], EXPECTED[language]["opening"], "R51-OPEN")


@pytest.mark.parametrize("language", ["en", *LANGUAGES])
def test_404_and_401_answer_in_the_language(client: FlaskClient, language: str) -> None:
    expected = EXPECTED[language]
    problem = answer(client.get("/v1/games/nope", headers=lang(language)), 404, language)
    assert (problem["title"], problem["detail"]) == (expected["not_found"],
                                                     expected["no_game"])
    assert problem["type"].endswith("/not-found")
    game = Game(client)
    token = f"{game.id}.0.not-the-secret"
    resp = client.get(f"{game.path}/me", headers={**auth(token), **lang(language)})
    problem = answer(resp, 401, language)
    assert problem["type"].endswith("/unauthorized")
    assert problem["title"] == expected["unauthorized"]
    assert problem["detail"] == expected["unknown_token"], problem
    assert resp.headers["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize("language", LANGUAGES)
def test_other_generic_problems_are_translated_too(client: FlaskClient, language: str) -> None:
    english = {
        "no_token": assert_problem(client.get("/v1/games/x/me"), 401),
        "path": assert_problem(client.get("/nope"), 404),
        "method": assert_problem(client.put("/v1/variants"), 405),
        "fields": assert_problem(client.post("/v1/games", json={"variant": 3}), 400),
    }
    game = Game(client)
    stale = assert_problem(game.move(0, {"type": "draw", "source": "stock"},
                                     {"If-Match": '"7"'}), 412)
    got = {
        "no_token": answer(client.get("/v1/games/x/me", headers=lang(language)), 401,
                           language),
        "path": answer(client.get("/nope", headers=lang(language)), 404, language),
        "method": answer(client.put("/v1/variants", headers=lang(language)), 405, language),
        "fields": answer(client.post("/v1/games", json={"variant": 3},
                                     headers=lang(language)), 400, language),
    }
    for name, problem in got.items():
        assert problem["title"] != english[name]["title"], name
        assert problem["detail"] != english[name]["detail"], name
        assert problem["type"] == english[name]["type"], name
    # field names unchanged, their messages translated
    assert [e["field"] for e in got["fields"]["errors"]] == [
        e["field"] for e in english["fields"]["errors"]]
    assert got["fields"]["errors"] != english["fields"]["errors"]
    assert "players, variant" in got["fields"]["detail"]
    problem = answer(game.move(0, {"type": "draw", "source": "stock"},
                               {"If-Match": '"7"', **lang(language)}), 412, language)
    assert problem["detail"] != stale["detail"]
    assert problem["current_version"] == stale["current_version"]
    assert "7" in problem["detail"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_create_limit_answers_in_the_language(redis_url: str, language: str) -> None:
    app = create_app(Settings(redis_url=redis_url, rate_limits=(),
                              create_rate_limits=("1/minute",)))
    client = app.test_client()
    address = {"REMOTE_ADDR": f"10.77.{LANGUAGES.index(language)}.1"}
    body = {"variant": "basic", "players": ["Ana", "Bo"]}
    assert client.post("/v1/games", json=body, environ_base=address).status_code == 201
    english = assert_problem(client.post("/v1/games", json=body, environ_base=address), 429)
    assert english["detail"] == ("at most 1/minute new games per client address; "
                                 "retry later")
    resp = client.post("/v1/games", json=body, environ_base=address, headers=lang(language))
    problem = answer(resp, 429, language)
    assert problem["title"] != english["title"]
    assert problem["detail"] != english["detail"] and "1/minute" in problem["detail"]
    assert resp.headers["Retry-After"].isdigit()


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_live_tables_problems_answer_in_the_language(
        client: FlaskClient, language: str) -> None:
    """A bad ``Prefer: wait``, a bad ``Last-Event-ID``, a ticket without a stream and a
    malformed, unknown, foreign or stale ticket: each title, detail and field message translated
    (the limits on open streams: tests/api/test_stream_limits.py)."""
    games = [client.post("/v1/games", json={"variant": "basic", "players": ["Ana", "Bo"]}
                         ).get_json() for _ in range(2)]
    path = f"/v1/games/{games[0]['game_id']}"
    sse = {"Accept": "text/event-stream"}

    def foreign() -> str:  # a ticket of the other game (each works once)
        resp = client.post(f"/v1/games/{games[1]['game_id']}/stream-tickets",
                           headers=auth(games[1]["seats"][0]["token"]))
        assert resp.status_code == 201, resp.get_json()
        ticket: str = resp.get_json()["ticket"]
        return ticket

    def stale() -> str:  # a ticket of a token replaced since (POST …/me/token)
        token = games[0]["seats"][1]["token"]
        resp = client.post(f"{path}/stream-tickets", headers=auth(token))
        assert resp.status_code == 201, resp.get_json()
        rotated = client.post(f"{path}/me/token", headers=auth(token))
        assert rotated.status_code == 200, rotated.get_json()
        games[0]["seats"][1]["token"] = rotated.get_json()["token"]
        ticket: str = resp.get_json()["ticket"]
        return ticket

    cases: list[tuple[str, Any, dict[str, str], int]] = [
        ("wait", lambda: path, {"Prefer": "wait=61", "If-None-Match": '"0"'}, 400),
        ("last_event_id", lambda: f"{path}/events", {**sse, "Last-Event-ID": "abc"}, 400),
        ("ticket_without_stream", lambda: f"{path}/events?ticket={'A' * 32}", {}, 400),
        ("malformed_ticket", lambda: f"{path}/events?ticket=short", sse, 401),
        ("unknown_ticket", lambda: f"{path}/events?ticket={'A' * 32}", sse, 401),
        ("foreign_ticket", lambda: f"{path}/events?ticket={foreign()}", sse, 403),
        ("stale_ticket", lambda: f"{path}/events?ticket={stale()}", sse, 401),
    ]
    for name, url, headers, status in cases:
        english = assert_problem(client.get(url(), headers=headers), status)
        got = answer(client.get(url(), headers={**headers, **lang(language)}), status,
                     language)
        assert got["title"] != english["title"], name
        assert got["detail"] != english["detail"], (name, got["detail"])
        assert got.get("code") == english.get("code"), name
        if status == 400:
            assert [e["field"] for e in got["errors"]] == [
                e["field"] for e in english["errors"]], name
            assert [e["message"] for e in got["errors"]] != [
                e["message"] for e in english["errors"]], (name, got["errors"])


def test_q_values_choose_the_language_of_a_refusal(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[deal_a()])
    resp = game.move(1, {"type": "draw", "source": "stock"},
                     {"Accept-Language": "fr, sv;q=0.8, en;q=0.5"})
    problem = answer(resp, 422, "sv", "NOT_YOUR_TURN")
    assert problem["detail"] == EXPECTED["sv"]["turn"]
    resp = game.move(1, {"type": "draw", "source": "stock"},
                     {"Accept-Language": "fr-CA, de;q=0.9"})
    assert answer(resp, 422, "en", "NOT_YOUR_TURN")["detail"] == EXPECTED["en"]["turn"]


def test_without_its_catalog_a_language_is_not_offered(
        redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(i18n, "TRANSLATIONS", tmp_path)  # no compiled catalog installed
    app = create_app(Settings(redis_url=redis_url, rate_limits=(), create_rate_limits=()))
    resp = app.test_client().get("/v1/games/nope", headers=lang("sv"))
    assert answer(resp, 404, "en")["detail"] == EXPECTED["en"]["no_game"]


MELD_CHECK_EXPECTED = {
    "en": "the Dummy rummy deck holds 2 5S, not 3",
    "da": "kortspillet til Dummy rummy har 2 5S, ikke 3",
    "pt": "o baralho de Dummy rummy tem 2 5S, não 3",
    "sv": "kortleken för Dummy rummy har 2 5S, inte 3",
    "cs": "balíček hry Dummy rummy má 5S jen 2krát, ne 3krát",
}


@pytest.mark.parametrize("language", ["en", *LANGUAGES])
def test_a_meld_check_gives_its_reasons_in_the_language(
        client: FlaskClient, language: str) -> None:
    resp = client.post("/v1/melds/check", headers=lang(language),
                       json={"variant": "dummy", "cards": ["5S", "5S", "5S"]})
    assert resp.status_code == 200
    assert resp.headers["Content-Language"] == language
    assert "Accept-Language" in resp.headers.get("Vary", "")
    body = resp.get_json()
    assert body["valid"] is False
    assert body["errors"] == [{"code": "INVALID_MELD", "rule": "C-DECK",
                               "detail": MELD_CHECK_EXPECTED[language]}]
    # a reason of the meld reading itself (a set of mixed ranks): translated, same rule
    mixed = client.post("/v1/melds/check", headers=lang(language),
                        json={"variant": "basic", "cards": ["5S", "6H", "9C"]}).get_json()
    english = client.post("/v1/melds/check",
                          json={"variant": "basic", "cards": ["5S", "6H", "9C"]}).get_json()
    assert [(e["code"], e["rule"]) for e in mixed["errors"]] == [
        (e["code"], e["rule"]) for e in english["errors"]]
    for theirs, ours in zip(mixed["errors"], english["errors"], strict=True):
        assert (theirs["detail"] == ours["detail"]) is (language == "en")
        assert cards(theirs["detail"]) == cards(ours["detail"])


def test_successful_answers_are_not_localised(client: FlaskClient) -> None:
    resp = client.get("/v1/variants", headers=lang("cs"))
    assert resp.status_code == 200
    assert "Content-Language" not in resp.headers


# ---------------------------------------------------------------------------------------
# The engine: templates and parameters, English details unchanged, no gettext


def test_a_violation_keeps_its_english_detail_and_its_template() -> None:
    violation = Violation(Code.OPENING_TOO_LOW, RuleId.R51_OPEN,
                          "opening worth {points} points, {needed} needed",
                          points=48, needed=51)
    assert violation.detail == str(violation) == "opening worth 48 points, 51 needed"
    assert violation.message.template == "opening worth {points} points, {needed} needed"
    assert dict(violation.message.params) == {"points": 48, "needed": 51}
    assert violation.reasons == (Reason(Code.OPENING_TOO_LOW, RuleId.R51_OPEN,
                                        "opening worth 48 points, 51 needed"),)
    nested = Message("cannot {what} now: {now}", {"what": Message("draw"),
                                                   "now": Message("draw first")})
    swedish = {"cannot {what} now: {now}": "du kan inte {what} nu: {now}", "draw": "dra",
               "draw first": "dra först"}
    assert nested.render(lambda s: swedish.get(s, s)) == "du kan inte dra nu: dra först"
    assert str(nested) == "cannot draw now: draw first"
    assert str(Message.join([Message("a {x}", {"x": 1}), Message("b")])) == "a 1, b"
    # a text without parameters is never formatted (braces stay as they are)
    violation = Violation(Code.INVALID_MELD, RuleId.C_MELD, "no {such} field")
    assert violation.detail == "no {such} field"


def test_the_rules_engine_does_not_import_babel() -> None:
    for path in MODULES:
        names = imported_modules(path.read_text(encoding="utf-8"), module_name(path),
                                 path.name == "__init__.py")
        assert not [n for _, n in names if n.split(".")[0] in ("babel", "flask_babel")], path


# ---------------------------------------------------------------------------------------
# The catalogs


def extracted() -> dict[str, str]:
    """Every N_ message of the service's source (msgid → where)."""
    found: dict[str, str] = {}
    for filename, lineno, message, _comments, _context in extract_from_dir(
            str(SERVICE), method_map=[("**.py", "python")], keywords={"N_": None}):
        assert isinstance(message, str), (filename, lineno)
        found.setdefault(message, f"{filename}:{lineno}")
    return found


def catalog(language: str) -> Catalog:
    with (TRANSLATIONS / language / "LC_MESSAGES" / "messages.po").open("rb") as f:
        return read_po(f, locale=language)


def placeholders(text: str) -> list[tuple[str, str | None]]:
    return sorted((name, conversion) for _, name, _, conversion in
                  string.Formatter().parse(text) if name is not None)


def test_there_are_messages_to_translate() -> None:
    messages = extracted()
    assert len(messages) > 100
    assert "opening worth {points} points, {needed} needed" in messages
    assert "Illegal move" in messages


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_message_is_translated_with_the_same_placeholders(language: str) -> None:
    po = catalog(language)
    assert str(po.locale) == language
    missing, empty, fuzzy, broken = [], [], [], []
    for msgid, where in extracted().items():
        entry = po.get(msgid)
        if entry is None:
            missing.append(f"{where}: {msgid}")
        elif not entry.string:
            empty.append(msgid)
        elif entry.fuzzy:
            fuzzy.append(msgid)
        elif placeholders(str(entry.string)) != placeholders(msgid):
            broken.append(f"{msgid!r} -> {entry.string!r}")
    assert (missing, empty, fuzzy, broken) == ([], [], [], [])


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_compiled_catalogs_match_the_po_files(language: str) -> None:
    po = {m.id: m.string for m in catalog(language) if m.id}
    with (TRANSLATIONS / language / "LC_MESSAGES" / "messages.mo").open("rb") as f:
        mo = {m.id: m.string for m in read_mo(f) if m.id}
    assert mo == po, "run: pybabel compile -d service/translations"
    assert set(po) == set(extracted()), "obsolete or missing entries: see service/api/i18n.py"


def test_the_template_is_current() -> None:
    with (TRANSLATIONS / "messages.pot").open("rb") as f:
        template = {m.id for m in read_po(f) if m.id}
    assert template == set(extracted()), "run pybabel extract: see service/api/i18n.py"


def test_the_fixed_details_translated_by_look_up_still_occur_in_the_source() -> None:
    """Plain-string details (the referee's, the routes') are translated by catalog look-up:
    each listed in i18n.FIXED_DETAILS must still be written so somewhere."""
    constants: set[str] = set()
    for path in SERVICE.rglob("*.py"):
        if path.name == "i18n.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                constants.add(node.value)
    assert [d for d in i18n.FIXED_DETAILS if d not in constants] == []


def test_the_package_data_ships_the_catalogs() -> None:
    """``pip install .`` (the Dockerfile) must install the compiled catalogs: pyproject's
    package-data for ``service`` has to cover every ``.mo`` file."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["service"]
    shipped = {path for pattern in patterns for path in SERVICE.glob(pattern)}
    catalogs = set(TRANSLATIONS.glob("*/LC_MESSAGES/messages.mo"))
    assert len(catalogs) == len(LANGUAGES)
    assert sorted(str(p.relative_to(SERVICE)) for p in catalogs - shipped) == []


# ---------------------------------------------------------------------------------------
# The per-field messages of a 400


BAD_BODIES: list[tuple[str, Any, set[str]]] = [
    # (path, body, the fields named): marshmallow's messages and ours, nested ones too
    ("/v1/games", {"variant": 3, "players": ["Ana"], "dealer": "x", "deals": "no"},
     {"variant", "players", "dealer", "deals"}),
    ("/v1/games", {"variant": "basic", "players": ["Ana", "\n"], "rules": {"nope": 1}},
     {"players.1", "rules.nope"}),
    ("/v1/games", {"variant": "basic", "players": ["Ana", "Bo"],
                   "rules": {"opening_points": True}}, {"rules.opening_points"}),
    ("/v1/games", {"variant": "gin", "players": ["Ana", "Bo", "Cy"]}, {"players"}),
    ("/v1/melds/check", {"variant": "basic", "cards": ["7h", "8h", "10x"], "from": 1},
     {"cards.2", "from"}),
    ("/v1/melds/check", {"variant": "nope", "cards": []}, {"variant", "cards"}),
    ("/v1/scores/hand", {"variant": "basic", "went_out": 9, "hands": [["QS"]]},
     {"went_out", "hands"}),
]


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_messages_of_each_bad_field_are_in_the_language(
        client: FlaskClient, language: str) -> None:
    for path, body, named in BAD_BODIES:
        english = assert_problem(client.post(path, json=body), 400)
        got = answer(client.post(path, json=body, headers=lang(language)), 400, language)
        assert {e["field"] for e in got["errors"]} == named == {
            e["field"] for e in english["errors"]}, (path, got)
        theirs = {e["field"]: e["message"] for e in got["errors"]}
        ours = {e["field"]: e["message"] for e in english["errors"]}
        same = [f for f in named if theirs[f] == ours[f]]
        assert same == [], (path, language, [(f, ours[f]) for f in same])


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_bad_move_says_its_field_and_detail_in_the_language(
        client: FlaskClient, language: str) -> None:
    game = Game(client)
    body = {"type": "discard", "card": "1h"}
    english = assert_problem(game.move(0, body), 400)
    got = answer(game.move(0, body, lang(language)), 400, language)
    assert english["errors"][0]["message"].startswith("'1h' is not a card")  # as sent
    assert got["errors"][0]["field"] == "card"
    assert got["errors"][0]["message"] != english["errors"][0]["message"]
    assert "'1h'" in got["errors"][0]["message"]


def test_an_unknown_field_names_the_fields_of_its_object_a_close_match_first(
        client: FlaskClient) -> None:
    game = Game(client)
    problem = assert_problem(game.move(0, {"type": "draw", "from": "stock"}), 400)
    message = {e["field"]: e["message"] for e in problem["errors"]}["from"]
    assert message.startswith("unknown field; did you mean 'source'? This object takes: ")
    assert message.endswith("This object takes: type, source")  # a draw takes these only
    check = assert_problem(client.post("/v1/melds/check", json={
        "variant": "basic", "cards": ["7H", "8H", "9H"], "rulse": {}}), 400)
    assert check["errors"] == [{"field": "rulse", "message": "unknown field; did you mean "
                                "'rules'? This object takes: variant, rules, cards",
                                "value": {}}]
    nested = assert_problem(client.post("/v1/games", json={
        "variant": "basic", "players": ["Ana", "Bo"],
        "deals": [{"hands": [[], []], "stok": []}]}), 400)
    assert nested["errors"] == [{"field": "deals.0.stok", "message": "unknown field; did you "
                                 "mean 'stock'? This object takes: hands, stock, discard",
                                 "value": []}]
    far = assert_problem(client.post("/v1/melds/check", json={
        "variant": "basic", "cards": ["7H", "8H", "9H"], "zzz": 1}), 400)
    assert far["errors"][0]["message"] == ("unknown field; this object takes: variant, rules, "
                                           "cards")
    danish = client.post("/v1/melds/check", headers=lang("da"), json={
        "variant": "basic", "cards": ["7H", "8H", "9H"], "rulse": {}}).get_json()
    assert danish["errors"][0]["message"] == ("ukendt felt; mente du 'rules'? Dette objekt "
                                              "tager: variant, rules, cards")


# ---------------------------------------------------------------------------------------
# Nothing a client can be told is left out of the catalogs


ERROR_BASES = (RefereeError, SheetError, HTTPException, MissingFact, SetupError, MalformedMove,
               RulesError, CardError)
"""What the service refuses with: every subclass of these is answered as a problem, its
text as ``detail`` or a field's ``message``."""
ERROR_HELPERS = {"Problem", "bad_request", "_bad_field", "too_many_open", "ValidationError",
                 "_unread"}
"""The functions that make a problem, or marshmallow's error, of a text."""


def _subclasses(base: type) -> set[type]:
    found = set(base.__subclasses__())
    for sub in list(found):
        found |= _subclasses(sub)
    return found


def _callee(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else (
        func.attr if isinstance(func, ast.Attribute) else "")


def _skeleton(node: ast.expr) -> str | None:
    """A string expression's fixed text, each computed part as ``\\0`` (None: not a string
    expression)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "\0" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _skeleton(node.left), _skeleton(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else "\0") + (right if right is not None else "\0")
    return None


def _template_skeleton(template: str) -> str | None:
    try:
        return "".join(literal + ("\0" if name is not None else "")
                       for literal, name, _, _ in string.Formatter().parse(template))
    except ValueError:
        return None


def _texts(node: ast.AST, constants: dict[str, str]) -> list[ast.expr]:
    """The string expressions a call's argument holds (not those under ``N_`` or
    ``Message``, extracted as they are; not a dict's ``field`` names), a module constant
    by its value."""
    if isinstance(node, ast.Call) and _callee(node.func) in ("N_", "Message"):
        return []
    if isinstance(node, ast.Name) and node.id in constants:
        return [ast.Constant(constants[node.id])]
    if _skeleton(node) is not None:  # type: ignore[arg-type]
        return [node]  # type: ignore[list-item]
    if isinstance(node, ast.Dict):
        return [text for key, value in zip(node.keys, node.values, strict=True)
                if not (isinstance(key, ast.Constant) and key.value == "field")
                for text in _texts(value, constants)]
    if isinstance(node, ast.Call):
        return [text for arg in node.args for text in _texts(arg, constants)]
    return [text for child in ast.iter_child_nodes(node) for text in _texts(child, constants)]


def untranslated_texts() -> list[str]:
    """Every text written in the service's source that a problem may say (a title, a
    detail, a field's message) and no catalog holds: as ``file:line: text``."""
    with (TRANSLATIONS / "messages.pot").open("rb") as f:
        msgids = {m.id for m in read_po(f) if m.id}
    # a text with computed parts is translated only where it is read back into its
    # template: a field's message (i18n.FIELD_MESSAGES), or a game busy (detail_of)
    read_back = [*i18n.FIELD_MESSAGES, "game {game_id!r} is busy; retry"]
    known = msgids | {s for s in map(_template_skeleton, read_back) if s is not None}
    callees = ERROR_HELPERS | {c.__name__ for base in ERROR_BASES for c in _subclasses(base)}
    found = []
    for path in sorted(SERVICE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = {node.targets[0].id: node.value.value for node in tree.body
                     if isinstance(node, ast.Assign) and len(node.targets) == 1
                     and isinstance(node.targets[0], ast.Name)
                     and isinstance(node.value, ast.Constant)
                     and isinstance(node.value.value, str)}
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and _callee(call.func) in callees):
                continue
            arguments = [*call.args, *(k.value for k in call.keywords if k.arg == "errors")]
            for index, argument in enumerate(arguments):
                title = _callee(call.func) == "Problem" and index == 1
                for text in _texts(argument, constants):
                    words = _skeleton(text)
                    assert words is not None
                    if words in known or not re.search(r"[^\W\d_]", words):
                        continue  # in a catalog, or no words at all ("{field}.{i}")
                    if not title and re.fullmatch(r"[\w.\-\0]+", words):
                        continue  # a field name, a code ("If-Match", "SHEET_FULL")
                    found.append(f"{path.relative_to(ROOT)}:{text.lineno}: {words!r}")
    return found


def test_every_text_a_problem_may_say_is_marked_for_translation() -> None:
    """A title, detail or field message written in a ``raise`` (or a problem made) must be
    a message of the catalogs: marked with ``N_`` or a :class:`Message` where it is written,
    listed in i18n.FIXED_DETAILS (a plain detail) or i18n.FIELD_MESSAGES (a field's message
    read back into its template), and translated (the tests above)."""
    assert untranslated_texts() == []


def test_the_guard_finds_an_unmarked_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    (tmp_path / "new.py").write_text(
        'def f(seat):\n'
        '    raise SeatTaken(f"seat {seat} is gone")\n'
        'def g():\n'
        '    raise Problem(409, "Clash", N_("unknown host token"))\n'
        'def h(seat):\n'
        '    raise SeatTaken(Message(N_("seat {seat} is gone"), {"seat": seat}))\n', "utf-8")
    monkeypatch.setattr(sys.modules[__name__], "SERVICE", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert untranslated_texts() == ["new.py:2: 'seat \\x00 is gone'", "new.py:4: 'Clash'"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_msgid_of_the_template_has_a_translation(language: str) -> None:
    with (TRANSLATIONS / "messages.pot").open("rb") as f:
        template = [m.id for m in read_po(f) if m.id]
    po = catalog(language)
    untranslated = [msgid for msgid in template
                    if po.get(msgid) is None or not po.get(msgid).string
                    or po.get(msgid).fuzzy]
    assert untranslated == []


# ---------------------------------------------------------------------------------------
# The lobby, score sheets and arranged deals over HTTP

HOST_ON_SEAT = {
    "en": "this is a host token: it manages the game and sees no hand; a seat's own token "
          "is needed here",
    "da": "dette er en værtsnøgle: den styrer spillet og ser ingen hånd; her kræves pladsens "
          "egen nøgle",
    "pt": "este é um token de anfitrião: gere o jogo e não vê nenhuma mão; aqui é preciso o "
          "token do próprio lugar",
    "sv": "det här är en värdnyckel: den sköter spelet och ser ingen hand; här krävs "
          "platsens egen nyckel",
    "cs": "toto je token hostitele: spravuje hru a nevidí žádnou ruku; zde je potřeba "
          "vlastní token místa",
}
UNKNOWN_SHEET_TOKEN = {"en": "unknown sheet token", "da": "ukendt pointskemanøgle",
                       "pt": "token de folha desconhecido", "sv": "okänd protokollnyckel",
                       "cs": "neznámý token listu"}
NO_ARRANGED_DEALS = {
    "en": "this server does not accept arranged deals: create the game without deals",
    "da": "denne server accepterer ikke arrangerede kortgivninger: opret spillet uden deals",
    "pt": "este servidor não aceita distribuições combinadas: crie o jogo sem deals",
    "sv": "den här servern tar inte emot arrangerade givar: skapa spelet utan deals",
    "cs": "tento server nepřijímá předem připravená rozdání: vytvořte hru bez deals",
}
ALREADY_ABORTED = {"en": "the game is aborted already", "da": "spillet er allerede afbrudt",
                   "pt": "o jogo já está cancelado", "sv": "spelet är redan avbrutet",
                   "cs": "hra už je zrušená"}


def _both(client: FlaskClient, language: str, method: str, path: str,
          **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The same request in English and in ``language``: their problems."""
    headers = kwargs.pop("headers", {})
    english = getattr(client, method)(path, headers=headers, **kwargs)
    asked = getattr(client, method)(path, headers={**headers, **lang(language)}, **kwargs)
    assert english.status_code == asked.status_code, (english.get_json(), asked.get_json())
    return english.get_json(), answer(asked, asked.status_code, language)


def _translated(english: dict[str, Any], got: dict[str, Any], where: str) -> None:
    """``got`` is ``english`` translated: title, detail and each field's message, with the
    same type, code and fields."""
    assert got["title"] != english["title"], (where, got)
    assert got["detail"] != english["detail"], (where, got)
    assert (got["type"], got.get("code")) == (english["type"], english.get("code")), where
    assert [e["field"] for e in got.get("errors", [])] == [
        e["field"] for e in english.get("errors", [])], where
    for mine, theirs in zip(got.get("errors", []), english.get("errors", []), strict=True):
        assert mine["message"] != theirs["message"], (where, mine)


@pytest.mark.parametrize("language", ["en", *LANGUAGES])
def test_a_host_token_on_a_seat_endpoint_is_refused_in_the_language(
        client: FlaskClient, language: str) -> None:
    created = client.post("/v1/games", json={"variant": "basic",
                                             "players": ["Ana", "Bo"]}).get_json()
    resp = client.get(f"/v1/games/{created['game_id']}/me",
                      headers={**auth(created["host_token"]), **lang(language)})
    problem = answer(resp, 403, language)
    assert problem["title"] == {"en": "Forbidden", "da": "Forbudt", "pt": "Proibido",
                                "sv": "Förbjudet", "cs": "Zakázáno"}[language]
    assert problem["detail"] == HOST_ON_SEAT[language]


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_lobby_refuses_in_the_language(client: FlaskClient, language: str) -> None:
    created = client.post("/v1/games", json={"variant": "basic",
                                             "players": ["Ana", None]}).get_json()
    gid, host, seat = created["game_id"], created["host_token"], created["seats"][0]["token"]
    cases: list[tuple[str, str, str, dict[str, Any]]] = [
        ("seat token as host", "delete", f"/v1/games/{gid}", {"headers": auth(seat)}),
        ("made-up host token", "delete", f"/v1/games/{gid}",
         {"headers": auth(f"{gid}.host.made-up")}),
        ("no host token", "post", f"/v1/games/{gid}/seats/1/open", {}),
        ("seat taken", "post", "/v1/join",
         {"json": {"code": created["join_code"], "name": "Cy", "seat": 0}}),
        ("no such seat", "post", "/v1/join",
         {"json": {"code": created["join_code"], "name": "Cy", "seat": 5}}),
        ("not a join code", "post", "/v1/join", {"json": {"code": "!!", "name": "Cy"}}),
        ("no game of the code", "post", "/v1/join",
         {"json": {"code": "2222-2222", "name": "Cy"}}),
        ("not started", "post", f"/v1/games/{gid}/moves",
         {"json": {"type": "draw", "source": "stock"}, "headers": auth(seat)}),
        ("rematch of a waiting game", "post", f"/v1/games/{gid}/rematch",
         {"headers": auth(seat)}),
    ]
    for where, method, path, kwargs in cases:
        _translated(*_both(client, language, method, path, **kwargs), where)
    assert client.delete(f"/v1/games/{gid}", headers=auth(host)).status_code == 200
    _translated(*_both(client, language, "delete", f"/v1/games/{gid}",
                       headers=auth(host)), "cancelled twice")
    _translated(*_both(client, language, "post", "/v1/join",
                       json={"code": created["join_code"], "name": "Cy"}), "cancelled")


@pytest.mark.parametrize("language", ["en", *LANGUAGES])
def test_a_game_status_is_worded_in_the_language(client: FlaskClient,
                                                 language: str) -> None:
    game = Game(client)
    host = auth(game.created["host_token"])
    assert client.delete(game.path, headers=host).status_code == 200
    assert game.public()["status"] == "aborted"
    resp = client.delete(game.path, headers={**host, **lang(language)})
    assert answer(resp, 409, language)["detail"] == ALREADY_ABORTED[language]


@pytest.mark.parametrize("language", ["en", *LANGUAGES])
def test_a_wrong_sheet_token_is_refused_in_the_language(client: FlaskClient,
                                                        language: str) -> None:
    sheets = [client.post("/v1/scoresheets", json={"variant": "basic", "players": ["Ana", "Bo"]}
                          ).get_json() for _ in range(2)]
    path = f"/v1/scoresheets/{sheets[0]['sheet_id']}/hands"
    hand = {"points": {"Ana": 0, "Bo": 10}}
    resp = client.post(path, json=hand, headers={**auth(f"{sheets[0]['sheet_id']}.wrong"),
                                                 **lang(language)})
    assert answer(resp, 401, language)["detail"] == UNKNOWN_SHEET_TOKEN[language]
    if language == "en":
        return
    for where, headers in (("another sheet's token", auth(sheets[1]["token"])),
                           ("no token", {})):
        _translated(*_both(client, language, "post", path, json=hand, headers=headers), where)
    last = f"/v1/scoresheets/{sheets[0]['sheet_id']}/hands/last"
    _translated(*_both(client, language, "delete", last, headers=auth(sheets[0]["token"])),
                "no hand to take back")
    _translated(*_both(client, language, "post", path, json=hand,
                       headers={**auth(sheets[0]["token"]), "If-Match": '"7"'}), "stale")
    _translated(*_both(client, language, "get", "/v1/scoresheets/nosuch"), "no such sheet")


SHEET_OVER = {
    "en": "the match on this sheet is over (Ana and Bo won): it takes no more hands",
    "da": "matchen på dette pointskema er slut (Ana og Bo vandt): det tager ikke flere runder",
    "pt": "a partida desta folha terminou (vitória de Ana e Bo): já não aceita mais mãos",
    "sv": "matchen i det här protokollet är slut (Ana och Bo vann): det tar inte emot fler "
          "givar",
    "cs": "zápas na tomto listu skončil (vítěz: Ana a Bo): další rozdání už nepřijímá",
}


@pytest.mark.parametrize("language", ["en", *LANGUAGES])
def test_a_finished_sheet_names_its_winners_in_the_language(client: FlaskClient,
                                                            language: str) -> None:
    sheet = client.post("/v1/scoresheets", json={
        "variant": "basic", "players": ["Ana", "Bo"],
        "rules": {"match_end": {"target": 100}}}).get_json()
    path, headers = f"/v1/scoresheets/{sheet['sheet_id']}/hands", auth(sheet["token"])
    hand = {"points": {"Ana": 200, "Bo": 200}}
    assert client.post(path, json=hand, headers=headers).get_json()["winners"] == ["Ana", "Bo"]
    resp = client.post(path, json=hand, headers={**headers, **lang(language)})
    problem = answer(resp, 422, language, "SHEET_FINISHED")
    assert problem["detail"] == SHEET_OVER[language]
    assert (problem["title"] == "Unprocessable Content") == (language == "en")


BAD_SHEET_HANDS: list[tuple[str, list[str], dict[str, Any]]] = [
    # (variant, players, a hand the sheet refuses): each message read back and translated
    ("basic", ["Ana", "Bo"], {"went_out": "Ana", "hands": {"Bo": ["KS"]}}),
    ("basic", ["Ana", "Bo"], {"went_out": "Ana", "hands": {"Bo": ["AS", "as", "A♠"]},
                              "all_at_once": False}),
    ("basic", ["Ana", "Bo"], {"went_out": "Ana", "hands": {"Bo": ["jk"]},
                              "all_at_once": False}),
    ("basic", ["Ana", "Bo"], {"went_out": "Ana", "hands": {"Ana": ["KS"], "Bo": []},
                              "all_at_once": False}),
    ("basic", ["Ana", "Bo"], {"went_out": "Ana", "hands": {"Bo": []}, "all_at_once": 3}),
    ("basic", ["Ana", "Bo"], {"went_out": ["Ana", "Bo"], "hands": {}}),
    ("basic", ["Ana", "Bo"], {"went_out": "Ana", "hands": {}, "points": {}}),
    ("basic", ["Ana", "Bo"], {"points": {"Ana": 0, "Bo": 5}, "completed": ["Ana"]}),
    ("basic", ["Ana", "Bo"], {"points": [1, 2]}),
    ("basic", ["Ana", "Bo"], {"went_out": "Ana", "hands": []}),
    ("rummy51", ["Ana", "Bo"], {"points": {"Ana": -5, "Bo": 10}}),
    ("rummy51", ["Ana", "Bo"], {"points": {"Ana": 0.5, "Bo": 10}}),
    ("rummy51", ["Ana", "Bo"], {"points": {"Ana": 0}}),
    ("rummy51", ["Ana", "Bo"], {"points": {"Ana": 10 ** 6, "Bo": 0}}),
    ("rummy51", ["Ana", "Bo"], {"went_out": "Ana", "hands": {"Bo": ["KS"]}}),
    ("dummy", ["Ana", "Bo"], {"points": {"Ana": 0, "Bo": 5}}),
]


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_refused_hand_on_a_score_sheet_is_told_in_the_language(
        client: FlaskClient, language: str) -> None:
    for variant, players, hand in BAD_SHEET_HANDS:
        sheet = client.post("/v1/scoresheets", json={"variant": variant,
                                                     "players": players}).get_json()
        english, got = _both(client, language, "post",
                             f"/v1/scoresheets/{sheet['sheet_id']}/hands", json=hand,
                             headers=auth(sheet["token"]))
        _translated(english, got, f"{variant} {hand}")
        assert codes(got["detail"]) == codes(english["detail"]), got
    for players in (["Ana", "ana "], ["Ana"]):
        _translated(*_both(client, language, "post", "/v1/scoresheets",
                           json={"variant": "basic", "players": players}), str(players))


BAD_SCORES: list[dict[str, Any]] = [
    # POST /v1/scores/hand refusals (service.rules.checks, a variant's hand_problem)
    {"variant": "basic", "went_out": 0, "hands": [[], ["KS"]]},
    {"variant": "rummy51", "went_out": 0, "hands": [[], ["KS"]], "all_at_once": True},
    {"variant": "basic", "went_out": 0, "hands": [["KS"], []], "all_at_once": False},
    {"variant": "basic", "went_out": 0, "hands": [[], ["KS", "KS"]], "all_at_once": False},
    {"variant": "basic", "went_out": 0, "hands": [[]], "all_at_once": False},
    {"variant": "rummy51", "went_out": 0, "hands": [[], ["KS"]], "opened": [True]},
    {"variant": "gin", "went_out": 0, "hands": [["KS", "QH"], ["2C"]]},
]


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_hand_that_cannot_be_scored_is_told_in_the_language(
        client: FlaskClient, language: str) -> None:
    for body in BAD_SCORES:
        english, got = _both(client, language, "post", "/v1/scores/hand", json=body)
        _translated(english, got, str(body))
        assert codes(got["detail"]) == codes(english["detail"]), got


@pytest.mark.parametrize("language", ["en", *LANGUAGES])
def test_an_arranged_deal_refused_is_told_in_the_language(redis_url: str,
                                                          language: str) -> None:
    body = {"variant": "basic", "players": ["Ana", None], "deals": [deal_a()]}
    for mode in ("forbid", "closed_only"):
        client = create_app(Settings(redis_url=redis_url, rate_limits=(),
                                     create_rate_limits=(), arranged_deals=mode)).test_client()
        english = assert_problem(client.post("/v1/games", json=body), 403)
        got = answer(client.post("/v1/games", json=body, headers=lang(language)), 403,
                     language, "ARRANGED_DEALS_FORBIDDEN")
        if mode == "forbid":
            assert got["detail"] == NO_ARRANGED_DEALS[language]
        if language != "en":
            _translated(english, got, mode)


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_deal_that_is_not_the_deck_is_told_in_the_language(
        client: FlaskClient, language: str) -> None:
    short = {**deal_a(), "stock": deal_a()["stock"][:-3]}
    for deals in ([short], [{**deal_a(), "discard": []}]):
        english, got = _both(client, language, "post", "/v1/games", json={
            "variant": "basic", "players": ["Ana", "Bo"], "dealer": 1, "deals": deals})
        _translated(english, got, str(deals)[:60])
        assert codes(got["detail"]) == codes(english["detail"]), got


# ---------------------------------------------------------------------------------------
# Answers made before the app sees the request: a body read too slowly, the gate's


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_body_read_too_slowly_is_a_408_in_the_language(app: Flask, language: str) -> None:
    with app.test_request_context("/v1/games", headers=lang(language)):
        resp = problems._http_exception(serving_limits.RequestReadTimeout(4.0))
    english = app.test_request_context("/v1/games")
    with english:
        theirs = problems._http_exception(serving_limits.RequestReadTimeout(4.0))
    assert theirs.get_json()["detail"] == "the request did not arrive whole within 4 s"
    problem = answer(resp, 408, language)
    assert problem["title"] != "Request Timeout"
    assert problem["detail"] != theirs.get_json()["detail"] and "4 s" in problem["detail"]


@pytest.mark.parametrize(("head", "chosen"), [
    (b"GET / HTTP/1.1\r\nHost: x\r\nAccept-Language: sv, en;q=0.5\r\n\r\n", "sv"),
    (b"POST /v1/games HTTP/1.1\r\naccept-language:pt-BR\r\nContent-Length: 9\r\n\r\n{", "pt"),
    (b"GET / HTTP/1.1\r\nAccept-Language: fr\r\nAccept-Language: cs\r\n\r\n", "cs"),
    (b"GET / HTTP/1.1\r\nHost: x\r\nAccept-Language: da\r\n", "da"),  # head still coming
    (b"GET / HTTP/1.1\r\nHost: x\r\nAccept-Language: da", "en"),  # its line not whole
    (b"GET / HTTP/1.1\r\nHost: x\r\n\r\nAccept-Language: da\r\n", "en"),  # the body's
    (b"GET / HTTP/1.1\r\nX-Accept-Language: da\r\n\r\n", "en"),
    (b"", "en"),
])
def test_the_gate_answers_in_the_language_of_the_request_it_read(head: bytes,
                                                                  chosen: str) -> None:
    answers = serving_limits._problems(
        503, "Service Unavailable",
        Message(N_("the server is restarting: send the request again")), code="RESTARTING",
        headers="Retry-After: 1\r\n")
    assert sorted(answers) == sorted(["en", *LANGUAGES])
    sent = serving_limits.answer_in(answers, head)
    status, _, rest = sent.partition(b"\r\n")
    assert status == b"HTTP/1.1 503 Service Unavailable"  # the reason phrase stays English
    head_lines, _, body = rest.partition(b"\r\n\r\n")
    assert f"Content-Language: {chosen}".encode() in head_lines.split(b"\r\n")
    problem = json.loads(body)
    assert problem["type"].endswith("/restarting") and problem["code"] == "RESTARTING"
    english = json.loads(answers["en"].partition(b"\r\n\r\n")[2])
    assert english["detail"] == "the server is restarting: send the request again"
    assert (problem["detail"] == english["detail"]) == (chosen == "en")
    assert (problem["title"] == "Service Unavailable") == (chosen == "en")


def test_the_gates_408_is_made_in_every_language() -> None:
    limits = serving_limits.Limits(timeout=2.5, max_body=1024, per_address=0)
    assert sorted(limits.timeout_answers) == sorted(["en", *LANGUAGES])
    details = {json.loads(a.partition(b"\r\n\r\n")[2])["detail"]
               for a in limits.timeout_answers.values()}
    assert len(details) == 1 + len(LANGUAGES) and all("2.5 s" in d for d in details)
