"""Score sheets for paper games: the use cases behind ``/v1/scoresheets`` (docs/api.md).

People play with real cards; the sheet keeps the score. A sheet is a variant, its knobs,
the players' names and the hands entered so far. Each hand comes either as the cards each
player still holds, scored by the engine exactly as ``POST /v1/scores/hand`` scores them
(:func:`service.rules.checks.score_one_hand`), or as points already counted. The sheet's
totals, whether the match is over and who won are worked out by the variant's own
``match_winners`` (its ``match_end``), so a new variant plugs in through its scoring and
match end alone; where its points may be negative or fractional it says so with a
``sheet_points(rules) -> (negative, fractional)`` method on its rules object.

A sheet is stored like a game, in the same store under its own key namespace
(:data:`NAMESPACE`): one JSON document, a version, compare-and-set commits, idempotency
records. The document is ``{"variant", "rules", "players", "token": <sha256>, "hands":
[<hand record>]}``; everything else is derived from it on each read.
"""

from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from service.referee.documents import token_hash
from service.rules import RulesError
from service.rules.cards import CardError, read_card
from service.rules.checks import FACT_QUESTIONS, MissingFact, score_one_hand
from service.rules.engine import new_game
from service.rules.errors import N_, Message
from service.rules.ruleset import Rules, resolve_rules
from service.rules.state import GameState
from service.rules.variants import find_variant, variant_rules
from service.store import (
    GameNotFound,
    GameStore,
    IdempotentReplay,
    Loaded,
    VersionConflict,
)

NAMESPACE = "rummy-sheets"
"""The store's key namespace of sheets (games are under ``rummy``)."""

MAX_HANDS = 500
"""The most hands one sheet holds: a long evening is a few dozen."""

MAX_CHANGES = 4 * MAX_HANDS
"""The most changes (hands added and taken back) one sheet takes: each is kept in its log."""

MAX_POINTS = 100_000
"""The largest number of points one player may score in one hand entered as points."""

MAX_ATTEMPTS = 8
"""Compare-and-set attempts of a change without ``If-Match`` before giving up (503)."""

QUESTIONS: dict[str, str] = {
    **FACT_QUESTIONS,
    "opened": N_("who had opened, that is put down their first melds, by the end of the "
                 "hand? A list of names (R51-OPEN: a player who had not opened scores 100)"),
    "completed": N_("who laid down their contract in this hand? a list of names, [] if "
                    "nobody did (DUMMY-CONTRACTS: they move on to the next contract)"),
    "went_out": N_("who went out? a player's name, or null when the hand ended with nobody "
                   "out"),
}
"""What a sheet asks for, in words, by field: the ``400`` for a missing one says this
(translated: a message of a ``400``'s ``errors`` is looked up in the catalogs)."""


class SheetError(Exception):
    """Base of the sheet errors the HTTP layer maps to a status; what is wrong is an
    ``N_``-marked text or a :class:`Message` (the HTTP layer translates it)."""


class BadSheet(SheetError):
    """Bad input (400): ``problems`` is ``[(field, message)]``; nothing is stored."""

    def __init__(self, field: str, message: str, *more: tuple[str, str]) -> None:
        self.problems = [(field, message), *more]
        super().__init__("; ".join(f"{f}: {m}" for f, m in self.problems))

    @staticmethod
    def of(problems: Sequence[tuple[str, str]]) -> BadSheet:
        first, *more = problems
        return BadSheet(*first, *more)


class SheetRefused(SheetError):
    """A change the sheet cannot take as it is (422), with a stable ``code``."""

    def __init__(self, code: str, message: str | Message) -> None:
        super().__init__(message)
        self.code = code


class UnknownSheet(SheetError):
    def __init__(self, sheet_id: str) -> None:
        super().__init__(Message(N_("no score sheet {sheet_id!r}"), {"sheet_id": sheet_id}))
        self.sheet_id = sheet_id


class SheetUnauthorized(SheetError):
    """Missing or unknown sheet token (401)."""


class SheetForbidden(SheetError):
    """A valid token of another sheet (403)."""


class SheetStale(SheetError):
    """``If-Match`` names another version than the current one (412)."""

    def __init__(self, expected: int, current: int) -> None:
        super().__init__(Message(N_("If-Match is version {expected}, the sheet is at version "
                                    "{current}"), {"expected": expected, "current": current}))
        self.expected = expected
        self.current = current


class SheetKeyReused(SheetError):
    """The idempotency key was used with another request (422)."""


class SheetBusy(SheetError):
    """Too many concurrent writers on one sheet (503, retry)."""


@dataclass(frozen=True)
class SheetAnswer:
    body: dict[str, Any]
    version: int
    replayed: bool = False


def _encode(doc: Mapping[str, Any]) -> bytes:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


# -- the sheet's arithmetic (pure) -------------------------------------------------------


def _rules_of(variant_id: str, overrides: Mapping[str, Any]) -> Rules:
    return Rules.of(resolve_rules(find_variant(variant_id), overrides))


def points_domain(variant_id: str, rules: Rules) -> tuple[bool, bool]:
    """Whether a hand's score may be negative, and whether it may be fractional, under
    ``rules``: a variant says so with ``sheet_points(rules)``; basic rummy's scoring
    (Basic, Wrotham) gives the winner -10 with ``penalty`` and ``bonus10``, and splits a
    blocked hand's pot (BASIC-BLOCK) with ``winner_collects``; the others count whole
    points of zero or more."""
    own = getattr(variant_rules(variant_id), "sheet_points", None)
    if callable(own):
        negative, fractional = own(rules)
        return bool(negative), bool(fractional)
    if variant_id in ("basic", "wrotham"):
        return (rules.scoring == "penalty" and rules.going_rummy == "bonus10",
                rules.scoring == "winner_collects")
    return False, False


def _and(names: Sequence[str]) -> str | Message:
    """``names`` as "A and B and C", the "and" translated."""
    if len(names) == 1:
        return names[0]
    return Message(N_("{names} and {last}"), {"names": _and(names[:-1]), "last": names[-1]})


def _tidy(x: float) -> int | float:
    return int(x) if float(x).is_integer() else x


@dataclass(frozen=True)
class Standing:
    totals: list[int | float]
    winners: list[int] | None
    out: list[bool]
    """Per player: out of the match (R51-END ``eliminate_at``)."""
    completed: list[int]
    """Per player: contracts completed (Dummy)."""


def standing(doc: Mapping[str, Any]) -> Standing:
    """The totals after every hand of ``doc`` and the variant's verdict on them."""
    players: list[str] = doc["players"]
    n = len(players)
    totals: list[int | float] = [0] * n
    completed = [0] * n
    for hand in doc["hands"]:
        for i, name in enumerate(players):
            totals[i] = _tidy(totals[i] + hand["scores"].get(name, 0))
        for name in hand.get("completed") or ():
            completed[players.index(name)] += 1
    state, _ = new_game(doc["variant"], players, doc["rules"], dealer=0)
    data = state.to_dict()
    data.update(totals=list(totals), history=[{} for _ in doc["hands"]],
                out_of_match=[False] * n)
    var = data.get("var")
    if isinstance(var, dict) and "completed" in var:  # Dummy's contracts
        var["completed"] = list(completed)
        var["contract"] = [min(c + 1, 12) for c in completed]
    board = GameState.from_dict(data)
    vr = variant_rules(doc["variant"])
    winners = vr.match_winners(board, _rules_of(doc["variant"], doc["rules"]))
    out = [bool(o) for o in board.out_of_match] if board.out_of_match else [False] * n
    return Standing(totals, winners, out, completed)


def view(sheet_id: str, doc: Mapping[str, Any], version: int) -> dict[str, Any]:
    """What anyone may read of a sheet."""
    players: list[str] = doc["players"]
    st = standing(doc)
    body: dict[str, Any] = {
        "sheet_id": sheet_id, "variant": doc["variant"], "rules": dict(doc["rules"]),
        "players": list(players), "hands": [dict(h) for h in doc["hands"]],
        "totals": dict(zip(players, st.totals, strict=True)),
        "status": "finished" if st.winners is not None else "playing",
        "winners": [players[i] for i in st.winners] if st.winners is not None else [],
        "version": version, "max_hands": MAX_HANDS,
    }
    body["facts"] = facts_asked(doc["variant"])
    if any(st.out):
        body["out_of_match"] = [p for p, o in zip(players, st.out, strict=True) if o]
    if doc["variant"] == "dummy":
        body["contracts"] = {p: {"contract": min(c + 1, 12), "completed": c}
                             for p, c in zip(players, st.completed, strict=True)}
    return body


def facts_asked(variant_id: str) -> list[dict[str, str]]:
    """What a hand of the variant must say beyond who went out and the cards or points,
    each with its question: the facts its scoring needs for a hand entered as cards
    (``score_needs``), and Dummy's contracts for every hand."""
    asked = [{"field": name, "question": QUESTIONS.get(name, name), "entered": "cards"}
             for name in variant_rules(variant_id).score_needs]
    if variant_id == "dummy":
        asked.append({"field": "completed", "question": QUESTIONS["completed"],
                      "entered": "any"})
    return asked


def check_players(variant_id: str, players: Sequence[str]) -> list[str]:
    """The players' names as given, refusing a count the variant does not seat and a name
    given twice (ignoring case and spaces around it)."""
    variant = find_variant(variant_id)
    names = [p.strip() for p in players]
    if not variant.min_players <= len(names) <= variant.max_players:
        raise BadSheet("players", f"{variant.name} is for {variant.min_players} to "
                                  f"{variant.max_players} players, not {len(names)}")
    seen: dict[str, str] = {}
    for name in names:
        if name.casefold() in seen:
            raise BadSheet("players", f"{name!r} is given twice: each player needs a name "
                                      "of their own")
        seen[name.casefold()] = name
    return names


def _player(players: Sequence[str], name: object, field: str) -> str:
    if isinstance(name, str):
        for p in players:
            if p == name or p.casefold() == name.strip().casefold():
                return p
    raise BadSheet(field, f"no player {name!r} on this sheet (players: "
                          f"{', '.join(players)})")


def _cards(raw: object, field: str) -> list[str]:
    if not isinstance(raw, list):
        raise BadSheet(field, "a list of the cards this player still holds ([] for none)")
    if len(raw) > 120:
        raise BadSheet(field, "at most 120 cards")
    out = []
    for i, code in enumerate(raw):
        try:
            out.append(read_card(code))
        except CardError as exc:
            raise BadSheet(f"{field}.{i}", str(exc)) from None
    return out


def _names(players: Sequence[str], raw: object, field: str) -> list[str]:
    """A list of players (or an object of player: true/false) as the names it holds."""
    if isinstance(raw, dict):
        for name, flag in raw.items():
            if not isinstance(flag, bool):
                raise BadSheet(f"{field}.{name}", "true or false")
        chosen = [name for name, flag in raw.items() if flag]
        for name in raw:
            _player(players, name, f"{field}.{name}")
    elif isinstance(raw, list):
        chosen = list(raw)
    else:
        raise BadSheet(field, "a list of player names")
    out: list[str] = []
    for i, name in enumerate(chosen):
        player = _player(players, name, f"{field}.{i}")
        if player in out:
            raise BadSheet(field, f"{player} is named twice")
        out.append(player)
    return out


def score_entry(doc: Mapping[str, Any], entry: Mapping[str, Any]) -> dict[str, Any]:
    """The record of one hand entered on the sheet ``doc`` (validated, scored); raise
    :class:`BadSheet` or :class:`SheetRefused`."""
    players: list[str] = doc["players"]
    variant_id: str = doc["variant"]
    if len(doc["hands"]) >= MAX_HANDS:
        raise SheetRefused("SHEET_FULL", Message(N_("a score sheet holds at most {max} hands; "
                                                    "start a new sheet"), {"max": MAX_HANDS}))
    st = standing(doc)
    if st.winners is not None:
        raise SheetRefused("SHEET_FINISHED", Message(N_(
            "the match on this sheet is over ({winners} won): it takes no more hands"),
            {"winners": _and([players[i] for i in st.winners])}))
    active = [p for p, out in zip(players, st.out, strict=True) if not out]
    if ("hands" in entry) == ("points" in entry):
        raise BadSheet("hands", N_("give either hands (the cards each player still holds) "
                                   "or points (each player's score for the hand), not both"))
    went_out_raw = entry.get("went_out")
    if isinstance(went_out_raw, list):
        raise BadSheet("went_out", N_("only one player goes out in a hand: give one name, "
                                      "or null when nobody did"))
    if "went_out" not in entry and "hands" in entry:
        raise BadSheet("went_out", QUESTIONS["went_out"])
    went_out = None if went_out_raw is None else _player(players, went_out_raw, "went_out")
    for name in (went_out,):
        if name is not None and name not in active:
            raise BadSheet("went_out", f"{name} is out of the match (R51-END)")
    record: dict[str, Any] = {"number": len(doc["hands"]) + 1, "went_out": went_out}
    if variant_id != "dummy" and entry.get("completed") is not None:
        raise BadSheet("completed", N_("only Dummy has contracts to complete"))
    if variant_id == "dummy":
        if entry.get("completed") is None:
            raise BadSheet("completed", QUESTIONS["completed"])
        completed = _names(players, entry["completed"], "completed")
        if went_out is not None and went_out not in completed:
            completed.append(went_out)  # one goes out only after laying it down (DUMMY-AFTER)
        for name in completed:
            if name not in active:
                raise BadSheet("completed", f"{name} is out of the match")
        record["completed"] = [p for p in players if p in completed]
    if "points" in entry:
        record.update(_points_entry(doc, entry, active))
        return record
    record.update(_cards_entry(doc, entry, active, went_out))
    return record


def _points_entry(doc: Mapping[str, Any], entry: Mapping[str, Any], active: list[str]
                  ) -> dict[str, Any]:
    players: list[str] = doc["players"]
    raw = entry["points"]
    if not isinstance(raw, dict):
        raise BadSheet("points", N_("an object of each player's score for the hand, e.g. "
                                    '{"Ana": 0, "Bo": 31}'))
    rules = _rules_of(doc["variant"], doc["rules"])
    negative, fractional = points_domain(doc["variant"], rules)
    scores: dict[str, int | float] = {}
    for name, value in raw.items():
        player = _player(players, name, f"points.{name}")
        field = f"points.{player}"
        if player not in active:
            raise BadSheet(field, f"{player} is out of the match: leave them out")
        if player in scores:
            raise BadSheet(field, f"{player} is given twice")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise BadSheet(field, "a number of points")
        if value != value or abs(value) > MAX_POINTS:
            raise BadSheet(field, f"at most {MAX_POINTS} points either way")
        if value < 0 and not negative:
            raise BadSheet(field, f"{value} is negative: no score is, under these rules")
        if not float(value).is_integer() and not fractional:
            raise BadSheet(field, f"{value} is not a whole number: every score is, under "
                                  "these rules")
        scores[player] = _tidy(value)
    missing = [p for p in active if p not in scores]
    if missing:
        raise BadSheet.of([(f"points.{p}", f"{p}'s score for the hand is missing (0 if none)")
                          for p in missing])
    return {"entered": "points", "scores": {p: scores.get(p, 0) for p in players}}


def _cards_entry(doc: Mapping[str, Any], entry: Mapping[str, Any], active: list[str],
                 went_out: str | None) -> dict[str, Any]:
    players: list[str] = doc["players"]
    raw = entry["hands"]
    if not isinstance(raw, dict):
        raise BadSheet("hands", N_('an object of the cards each player still holds, e.g. '
                                   '{"Ana": [], "Bo": ["AS", "JK"]}'))
    hands: dict[str, list[str]] = {}
    sent: dict[str, list[Any]] = {}
    for name, cards in raw.items():
        player = _player(players, name, f"hands.{name}")
        if player not in active:
            raise BadSheet(f"hands.{player}", f"{player} is out of the match: leave them out")
        if player in hands:
            raise BadSheet(f"hands.{player}", f"{player} is given twice")
        hands[player] = _cards(cards, f"hands.{player}")
        sent[player] = list(cards)
    if went_out is not None:
        hands.setdefault(went_out, [])
    missing = [p for p in active if p not in hands]
    if missing:
        raise BadSheet.of([(f"hands.{p}", f"the cards {p} still holds are missing ([] if "
                                            "none)") for p in missing])
    variant = find_variant(doc["variant"])
    deck = set(variant.deck())
    for player, cards in hands.items():
        for i, card in enumerate(cards):
            if card not in deck:
                raise BadSheet(f"hands.{player}.{i}", f"{sent[player][i]!r} is not a card "
                                                      f"of the {variant.name} deck")
    facts: dict[str, Any] = {
        "hands": [hands[p] for p in active],
        "went_out": active.index(went_out) if went_out is not None else None,
    }
    for name in ("all_at_once", "jokers_used"):
        if entry.get(name) is not None:
            facts[name] = entry[name]
    if entry.get("all_at_once") is not None and not isinstance(entry["all_at_once"], bool):
        raise BadSheet("all_at_once", f"true or false: {QUESTIONS['all_at_once']}")
    jokers = entry.get("jokers_used")
    if jokers is not None and (isinstance(jokers, bool) or not isinstance(jokers, int)
                               or not 0 <= jokers <= 4):
        raise BadSheet("jokers_used", "a whole number from 0 to 4")
    if entry.get("final_discard") is not None:
        try:
            facts["final_discard"] = read_card(entry["final_discard"])
        except CardError as exc:
            raise BadSheet("final_discard", str(exc)) from None
    if entry.get("opened") is not None:
        opened = _names(players, entry["opened"], "opened")
        facts["opened"] = [p in opened for p in active]
    try:
        result = score_one_hand(doc["variant"], doc["rules"], facts)
    except MissingFact as exc:
        raise BadSheet.of([_worded(f, m, active) for f, m in exc.problems]) from None
    out: dict[str, Any] = {"entered": "cards",
                           "cards": {p: hands[p] for p in active},
                           "scores": {p: 0 for p in players},
                           "counts": {}}
    for i, p in enumerate(active):
        out["scores"][p] = result["scores"][i]
        out["counts"][p] = result["counts"][i]
    out["going_rummy"] = result["going_rummy"]
    for key, value in result.items():
        if key not in ("scores", "counts", "going_rummy"):
            out[key] = value
    for name in ("all_at_once", "final_discard", "jokers_used"):
        if facts.get(name) is not None:
            out.setdefault(name, facts[name])
    if "opened" in facts:
        out["opened"] = [p for p, o in zip(active, facts["opened"], strict=True) if o]
    return out


def _worded(field: str, message: str, active: list[str]) -> tuple[str, str]:
    """A problem of ``score_one_hand`` as the sheet names things: players by name, and a
    missing fact as the question it answers."""
    if field in QUESTIONS and message.endswith("needs it for this hand)"):
        return field, QUESTIONS[field]
    head, _, seat = field.partition(".")
    if head == "hands" and seat.isdigit() and int(seat) < len(active):
        name = active[int(seat)]
        message = message.replace("the seat that went out", f"{name} went out and")
        return f"hands.{name}", message
    if field == "opened":
        return field, N_("a list of the players who had opened")
    return field, message


def check_rules(variant_id: str, rules: Mapping[str, Any]) -> dict[str, Any]:
    """Every knob of the variant, ``rules`` over its defaults; a bad knob refused as games
    refuse it (``RulesError`` → 400 naming it)."""
    try:
        return dict(resolve_rules(find_variant(variant_id), rules))
    except RulesError as exc:
        raise BadSheet(f"rules.{exc.knob}", exc.message) from None


# -- the use cases -----------------------------------------------------------------------


class Sheets:
    """Score sheets in a :class:`GameStore` of their own key namespace."""

    def __init__(self, store: GameStore) -> None:
        self.store = store

    def create(self, variant_id: str, rules: Mapping[str, Any], players: Sequence[str]
               ) -> tuple[str, str, SheetAnswer]:
        """A new sheet: its id, its token (shown only here) and its view."""
        resolved = check_rules(variant_id, rules)
        names = check_players(variant_id, players)
        sheet_id = secrets.token_urlsafe(9)
        token = f"{sheet_id}.{secrets.token_urlsafe(24)}"
        doc = {"variant": variant_id, "rules": resolved, "players": names,
               "token": token_hash(token), "hands": []}
        self.store.create(sheet_id, _encode(doc))
        return sheet_id, token, SheetAnswer(view(sheet_id, doc, 0), 0)

    def _load(self, sheet_id: str, scope: str | None = None) -> tuple[Loaded, dict[str, Any]]:
        try:
            loaded = self.store.load(sheet_id, scope)
        except (GameNotFound, ValueError):
            raise UnknownSheet(sheet_id) from None
        assert loaded.state is not None
        doc: dict[str, Any] = json.loads(loaded.state)
        return loaded, doc

    def read(self, sheet_id: str) -> SheetAnswer:
        loaded, doc = self._load(sheet_id)
        return SheetAnswer(view(sheet_id, doc, loaded.version), loaded.version)

    def _authenticate(self, sheet_id: str, doc: Mapping[str, Any], token: str | None) -> None:
        if not token:
            raise SheetUnauthorized(N_("the sheet's token is required: Authorization: Bearer "
                                       "<token>"))
        owner = token.split(".", 1)[0]
        if owner != sheet_id:
            try:
                _, other = self._load(owner)
            except UnknownSheet:
                raise SheetUnauthorized(N_("unknown sheet token")) from None
            if hmac.compare_digest(other["token"], token_hash(token)):
                raise SheetForbidden(N_("this token belongs to another score sheet"))
            raise SheetUnauthorized(N_("unknown sheet token"))
        if not hmac.compare_digest(doc["token"], token_hash(token)):
            raise SheetUnauthorized(N_("unknown sheet token"))

    def add_hand(self, sheet_id: str, token: str | None, entry: Mapping[str, Any], *,
                 if_match: int | None = None, idempotency_key: str | None = None,
                 fingerprint: str = "") -> SheetAnswer:
        """Add one hand; the sheet as it is after it."""
        def change(doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
            record = score_entry(doc, entry)
            return {**doc, "hands": [*doc["hands"], record]}, {"added": record["number"]}
        return self._change(sheet_id, token, change, if_match, idempotency_key, fingerprint)

    def take_back(self, sheet_id: str, token: str | None, *, if_match: int | None = None,
                  idempotency_key: str | None = None, fingerprint: str = "") -> SheetAnswer:
        """Take the last hand back; the sheet as it is after."""
        def change(doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
            if not doc["hands"]:
                raise SheetRefused("NO_HAND", N_("the sheet holds no hand to take back"))
            return {**doc, "hands": doc["hands"][:-1]}, {"removed": len(doc["hands"])}
        return self._change(sheet_id, token, change, if_match, idempotency_key, fingerprint)

    def _change(self, sheet_id: str, token: str | None, change: Any, if_match: int | None,
                idempotency_key: str | None, fingerprint: str) -> SheetAnswer:
        scope = idempotency_key
        for _attempt in range(MAX_ATTEMPTS):
            loaded, doc = self._load(sheet_id, scope)
            self._authenticate(sheet_id, doc, token)
            if loaded.idempotency is not None:
                return self._replay(loaded.idempotency.fingerprint,
                                    loaded.idempotency.response, fingerprint)
            version = loaded.version
            if if_match is not None and if_match != version:
                raise SheetStale(if_match, version)
            if version >= MAX_CHANGES:
                raise SheetRefused("SHEET_FULL", Message(N_(
                    "a score sheet takes at most {max} changes; start a new sheet"),
                    {"max": MAX_CHANGES}))
            new_doc, what = change(doc)
            body = view(sheet_id, new_doc, version + 1)
            response = _encode(body)
            idem = (scope, fingerprint, response) if scope is not None else None
            try:
                self.store.commit(sheet_id, expected_version=version, state=_encode(new_doc),
                                  log_record=_encode({"version": version + 1, **what}),
                                  idempotency=idem)
            except VersionConflict as conflict:
                if if_match is not None:
                    raise SheetStale(if_match, conflict.current) from None
                continue
            except IdempotentReplay as replay:
                return self._replay(replay.record.fingerprint, replay.record.response,
                                    fingerprint)
            except GameNotFound:
                raise UnknownSheet(sheet_id) from None
            return SheetAnswer(body, version + 1)
        raise SheetBusy(Message(N_("score sheet {sheet_id!r} is busy; retry"),
                                {"sheet_id": sheet_id}))

    @staticmethod
    def _replay(stored_fingerprint: str, stored: bytes, fingerprint: str) -> SheetAnswer:
        if not hmac.compare_digest(stored_fingerprint, fingerprint):
            raise SheetKeyReused(N_("this Idempotency-Key was already used with another "
                                    "request"))
        body = json.loads(stored)
        return SheetAnswer(body, int(body["version"]), replayed=True)
