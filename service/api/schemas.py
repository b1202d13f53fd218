"""marshmallow schemas of every request and response body (marshmallow 4).

Request schemas validate (a 400 names each bad field); response schemas document the
answers in the OpenAPI document (views build their bodies directly from the engine's plain
dicts, so no schema sits on the hot path).
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, ClassVar

import marshmallow as ma
from marshmallow import fields, validate

from service.api.oneof import Choice, OneOfSchema
from service.numbers import integer
from service.rules import CardError, Code, moves, views
from service.rules.cards import canonical
from service.rules.melds import Piece
from service.rules.ruleset import Knob, rules_errors
from service.rules.variants import KNOBS, VARIANTS

LOBBY_CODES = ("SEAT_TAKEN", "UNKNOWN_JOIN_CODE", "GAME_STARTED", "GAME_NOT_FINISHED",
               "REMATCH_CLAIMED")
"""The ``code``s of the lobby's refusals (service.referee.lobby)."""
MAX_PLAYERS = 6
MAX_DEALS = 50
MAX_NAME = 40
IDEMPOTENCY_KEY = r"^[\x21-\x7e]{1,200}$"
"""What an ``Idempotency-Key`` may be: 1-200 visible ASCII characters."""
NAME_PATTERN = (r"^[^\x00-\x1f\x7f-\x9f\ud800-\udfff]*[^\s\x00-\x1f\x7f-\x9f\ud800-\udfff]"
                r"[^\x00-\x1f\x7f-\x9f\ud800-\udfff]*$(?!\n)")
"""A player's name: shown to every seat and in the web table, so not blank and free of
control characters (a NUL, a line break, an escape) and of lone surrogates (a JSON
``\\ud800`` escape alone: no UTF-8 text holds one, and a store or a client writing the
name as UTF-8 fails on it); any other text goes."""


CARD_PATTERN = ("^\\s*([Jj][Kk]|[Jj][Oo][Kk][Ee][Rr]|\U0001f0cf|(10|[AaTtJjQqKk2-9])\\s*"
                "[SsHhDdCc\u2660\u2664\u2665\u2661\u2666\u2662\u2663\u2667]"
                "[\ufe0e\ufe0f]?)\\s*$")
"""The card codes input takes (:func:`service.rules.cards.read_card`)."""
LENIENT_CARD = ("a card as people write it: rank A 2-10 J Q K (or T) and suit S H D C or "
                "♠ ♥ ♦ ♣, any letter case (`10♥`, `q♠`, `7d`); `JK` for a joker. Answers "
                "use the canonical code (`TH`, `QS`, `7D`)")
CARD_CODE_SPEC: dict[str, Any] = {
    "type": "string", "pattern": CARD_PATTERN, "example": "QS",
    "examples": ["QS", "TH", "10h", "q♠", "JK"],
    "description": "Card code (C-CARD), " + LENIENT_CARD}
MELD_CARD_SPEC: dict[str, Any] = {
    "description": "a card in a meld: its code, or a wild with what it stands for",
    "oneOf": [
        {"$ref": "#/components/schemas/CardCode"},
        {"type": "object", "required": ["card"], "additionalProperties": False,
         "properties": {"card": {"$ref": "#/components/schemas/CardCode"},
                        "as": {"anyOf": [{"$ref": "#/components/schemas/CardCode"},
                                         {"type": "null"}],
                               "description": "what the wild stands for (C-MELD); "
                                              "null or absent: the referee chooses"}}},
    ],
}


class CardCode(fields.String):
    """A card code (C-CARD) as people type it (:func:`~service.rules.cards.read_card`:
    ``QS``, ``10h``, ``q♠``, ``JK``); loads canonical, and a bad one's error quotes it as
    sent. Documented as the ``CardCode`` component."""

    component = "CardCode"

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text = super()._deserialize(value, attr, data, **kwargs)
        try:
            return canonical(text)
        except CardError as exc:
            raise ma.ValidationError(str(exc)) from None


class MeldCard(fields.Field[Any]):
    """A card in a meld: a code, or ``{"card": "JK", "as": "QH"}`` declaring a wild
    (the ``MeldCard`` component)."""

    component = "MeldCard"

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if isinstance(value, str):
            return CardCode()._deserialize(value, attr, data)
        if isinstance(value, dict):
            unknown = set(value) - {"card", "as"}
            if unknown:
                raise ma.ValidationError(f"unknown field(s): {', '.join(sorted(unknown))}")
            if "card" not in value:
                raise ma.ValidationError('"card" is required')
            out = {"card": CardCode()._deserialize(value["card"], attr, data)}
            if value.get("as") is not None:
                out["as"] = CardCode()._deserialize(value["as"], attr, data)
            return out
        raise ma.ValidationError('a card code or {"card": ..., "as": ...} is required')


class RulesField(fields.Dict):
    """A body's knob overrides, documented once as the ``Rules`` component."""

    component = "Rules"

    def __init__(self, **kwargs: Any) -> None:
        if not kwargs.get("required"):
            kwargs.setdefault("load_default", dict)
        super().__init__(keys=fields.String(), **kwargs)


def no_null_default(converter: Any, field: fields.Field[Any], ret: dict[str, Any],
                    **kwargs: Any) -> dict[str, Any]:
    """apispec attribute function: no ``default: null`` (absent already means null), which
    generators such as openapi-typescript read as "always present", making an optional
    field (``dealer``, ``seat``) required in a request body."""
    if "default" in ret and ret["default"] is None:
        del ret["default"]
    return {}


def component_ref(converter: Any, field: fields.Field[Any], ret: dict[str, Any],
                  **kwargs: Any) -> dict[str, Any]:
    """apispec attribute function: a field of a class with a ``component`` (cards, meld
    cards, rules) as a ``$ref`` to that component (``anyOf`` it and null when it may be
    null), keeping the field's own description, so every operation shares one schema
    (one model in a generated client)."""
    name = getattr(field, "component", None)
    if name is None:
        return {}
    description = field.metadata.get("description")
    ret.clear()
    ref = {"$ref": f"#/components/schemas/{name}"}
    out: dict[str, Any] = {"anyOf": [ref, {"type": "null"}]} if field.allow_none else ref
    if description:
        out["description"] = description
    return out


class StrictBoolean(fields.Boolean):
    """A JSON boolean only (marshmallow's Boolean also takes 0, 1, "yes" …)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


class QueryInteger(fields.Integer):
    """An integer read from the query string: ASCII digits with an optional ``-``, at most
    18 of them (:func:`service.numbers.integer`), where marshmallow's ``Integer`` reads
    what ``int()`` reads (``١``, ``+1``, ``1_0``, thousands of digits)."""

    def _validated(self, value: Any) -> int:
        if isinstance(value, str):
            number = integer(value)
            if number is None:
                raise self.make_error("invalid", input=value)
            return number
        return super()._validated(value)


UNKNOWN_FIELD = "Unknown field."
"""marshmallow's message for a field a strict schema does not take."""
ALIASES = {"from": "source", "pile": "source", "kind": "type", "action": "type",
           "move": "type", "meld": "melds", "id": "meld_id", "players_names": "players"}
"""Field names people try for a field of ours (a close match that difflib cannot see)."""


def unknown_field_message(name: str, taken: list[str]) -> str:
    """What to say of an unknown field ``name`` in an object that takes ``taken``: a close
    match first (``from`` → ``source``), then every field the object takes."""
    close = ALIASES.get(name) if ALIASES.get(name) in taken else None
    if close is None:
        matches = difflib.get_close_matches(name, taken, n=1, cutoff=0.6)
        close = matches[0] if matches else None
    listed = ", ".join(taken)
    if close is not None:
        return f"unknown field; did you mean {close!r}? This object takes: {listed}"
    return f"unknown field; this object takes: {listed}"


class StrictSchema(ma.Schema):
    """A request object: an unknown field is refused, and its error names the fields the
    object takes (a close match first)."""

    class Meta:
        unknown = ma.RAISE

    def handle_error(self, error: ma.ValidationError, data: Any, *, many: bool,
                     **kwargs: Any) -> None:
        messages = error.messages
        if many or not isinstance(messages, dict):
            return
        taken = [f.data_key or name for name, f in self.load_fields.items()]
        for key, value in messages.items():
            if value == [UNKNOWN_FIELD]:
                messages[key] = [unknown_field_message(str(key), taken)]


# ---------------------------------------------------------------------------------------
# Games


class DealSchema(StrictSchema):
    hands = fields.List(fields.List(CardCode(), validate=validate.Length(max=120)),
                        required=True, validate=validate.Length(min=1, max=MAX_PLAYERS),
                        metadata={"description": "each seat's cards"})
    stock = fields.List(CardCode(), load_default=list, validate=validate.Length(max=120),
                        metadata={"description": "the stock, top card first"})
    discard = fields.List(CardCode(), load_default=list, validate=validate.Length(max=120),
                          metadata={"description": "the discard pile, bottom card first"})


def _all_knobs() -> list[Knob]:
    """Every knob of every variant (a variant's narrower version merged into the wider)."""
    merged: dict[str, Knob] = {}
    for variant in VARIANTS.values():
        for name in variant.defaults:
            knob = variant.knob(name)
            old = merged.get(name)
            if old is not None:
                # one description for every variant (the general one), the allowed values of
                # all of them (GET /v1/variants has each variant's own)
                general = KNOBS.get(name, old)
                choices = tuple(dict.fromkeys(old.choices + knob.choices))
                limits = {key: (min(old.key_limits(key)[0], knob.key_limits(key)[0]),
                                max(old.key_limits(key)[1], knob.key_limits(key)[1]))
                          for key in choices}
                knob = replace(general, choices=choices, limits=limits,
                               description=general.description + " Allowed values differ "
                               "by variant: see GET /v1/variants.")
            merged[name] = knob
    return [merged[name] for name in KNOBS if name in merged]


def _knobs_spec() -> dict[str, Any]:
    props: dict[str, Any] = {}
    for knob in _all_knobs():
        spec: dict[str, Any] = {"description": f"{knob.description} ({knob.rule})"}
        if knob.kind == "bool":
            spec["type"] = "boolean"
        elif knob.kind == "enum":
            spec.update(type="string", enum=list(knob.choices))
        elif knob.kind == "int":
            spec.update(type="integer", minimum=knob.minimum)
            if knob.maximum is not None:
                spec["maximum"] = knob.maximum
            if knob.nullable:
                spec["type"] = [spec["type"], "null"]
        elif knob.kind == "int_or_enum":
            spec["oneOf"] = [{"type": "integer", "minimum": knob.minimum,
                              "maximum": knob.maximum},
                             {"type": "string", "enum": list(knob.choices)}]
        elif knob.keyed:
            spec.update(type="object", minProperties=1, maxProperties=1,
                        additionalProperties=False,
                        properties={c: {"type": "integer", "minimum": knob.key_limits(c)[0],
                                        "maximum": knob.key_limits(c)[1]}
                                    for c in knob.choices})
            if knob.nullable:
                spec["type"] = [spec["type"], "null"]
        props[knob.name] = spec
    return {"type": "object", "additionalProperties": False, "properties": props,
            "description": "Knob values: a body's overrides, a view's whole rules (see GET "
                           "/v1/variants for each variant's knobs)."}


def check_variant_and_rules(data: dict[str, Any]) -> None:
    """A body's ``variant`` (a known id) and its ``rules``, every bad knob named at once
    against the variant's own knobs (``ValidationError``)."""
    if not isinstance(data.get("variant"), str):
        return
    if data["variant"] not in VARIANTS:
        raise ma.ValidationError({"variant": [
            f"unknown variant {data['variant']!r}; known: {', '.join(VARIANTS)}"]})
    rules = data.get("rules")
    problems = rules_errors(VARIANTS[data["variant"]], rules if isinstance(rules, dict)
                            else None)
    if problems:
        raise ma.ValidationError({"rules": {p.knob: [p.message] for p in problems}})


class GameCreateSchema(StrictSchema):
    variant = fields.String(required=True, validate=validate.Length(min=1, max=40),
                            metadata={"example": "basic"})
    players = fields.List(fields.String(allow_none=True, validate=[
        validate.Length(min=1, max=MAX_NAME),
        validate.Regexp(NAME_PATTERN, error="a name needs a visible character and no "
                                            "control characters")]),
                          required=True, validate=validate.Length(min=2, max=MAX_PLAYERS),
                          metadata={"example": ["Ana", "Bo"], "description": (
                              "the players' names, seat by seat; `null` for an open seat, "
                              "taken with POST /v1/join and the answer's `join_code`")})
    rules = RulesField()
    dealer = fields.Integer(load_default=None, allow_none=True, strict=True,
                            validate=validate.Range(min=0, max=MAX_PLAYERS - 1),
                            metadata={"description": "first dealer's seat (random if absent)"})
    deals = fields.List(fields.Nested(DealSchema), load_default=list,
                        validate=validate.Length(max=MAX_DEALS),
                        metadata={"description": "arranged layouts for hands 1, 2, … "
                                                 "(a server may refuse them: 403 "
                                                 "ARRANGED_DEALS_FORBIDDEN)"})

    @ma.validates_schema(skip_on_field_errors=False)
    def _variant_and_rules(self, data: dict[str, Any], **kwargs: Any) -> None:
        check_variant_and_rules(data)


class WildSchema(ma.Schema):
    index = fields.Integer(required=True)
    card = fields.String(required=True)
    as_ = fields.String(required=True, data_key="as",
                        metadata={"description": "what the wild stands for; a rank followed "
                                                 "by * when its suit is open (C-WILD)"})


class MeldViewSchema(ma.Schema):
    meld_id = fields.String(required=True)
    owner = fields.Integer(required=True)
    kind = fields.String(required=True, validate=validate.OneOf(["set", "run"]))
    cards = fields.List(fields.String(), required=True)
    wilds = fields.List(fields.Nested(WildSchema), required=True)


class ContractSchema(ma.Schema):
    class Meta:
        unknown = ma.INCLUDE

    number = fields.Integer(required=True, metadata={"description": "1..12 (DUMMY-CONTRACTS)"})
    text = fields.String(metadata={"description": "the contract in words"})
    down = fields.Boolean(required=True, metadata={"description": "laid down this hand"})
    completed = fields.Integer(metadata={"description": "contracts completed so far"})
    cut_ins = fields.Integer(metadata={"description": "cut-ins this hand (DUMMY-CUTIN)"})


class CutInWindowSchema(ma.Schema):
    open = fields.Boolean(required=True)
    claims = fields.List(fields.Integer(), required=True)


class SeatSummarySchema(ma.Schema):
    seat = fields.Integer(required=True)
    name = fields.String(required=True, allow_none=True, metadata={
        "description": "null for an open seat"})
    open = fields.Boolean(required=True, metadata={
        "description": "the seat waits for a player (POST /v1/join)"})
    hand_count = fields.Integer(required=True)
    opened = fields.Boolean(required=True, metadata={
        "description": "has melded (opened, R51-OPEN) this hand"})
    total = fields.Float(required=True)
    out_of_match = fields.Boolean(required=True, metadata={
        "description": "eliminated (R51-END eliminate_at)"})
    contract = fields.Nested(ContractSchema, metadata={
        "description": "Dummy rummy: the seat's current contract"})


GAME_STATUSES = ["waiting", "playing", "finished", "aborted"]
"""A game's ``status``, as its views, move answers and log entries say it."""


class TurnSchema(ma.Schema):
    seat = fields.Integer(required=True)
    phase = fields.String(required=True, validate=validate.OneOf(["draw", "play", "lay_out"]),
                          metadata={"description": "gin: `lay_out` after a knock, while the "
                                                   "other seat lays its cards out (GIN-LAYOFF)"})
    deadline = fields.String(allow_none=True, metadata={
        "format": "date-time",
        "description": "with knob clock: when this turn's time runs out (RFC 3339, UTC, the "
                       "store's clock), set when the turn started (C-CLOCK)"})
    expired = fields.Boolean(metadata={
        "description": "with knob clock: the deadline has passed as the view was read; "
                       "another seat may claim_timeout"})


class MatchEndSchema(ma.Schema):
    reason = fields.String(required=True, validate=validate.OneOf(
        ["resigned", "timeout", "aborted"]))
    seat = fields.Integer(required=True, metadata={
        "description": "the seat that resigned, ran out of time or aborted"})


class HandContractSchema(ma.Schema):
    number = fields.Integer(required=True)
    made = fields.Boolean(required=True)


class HandResultSchema(ma.Schema):
    hand_number = fields.Integer(required=True)
    went_out = fields.Integer(allow_none=True, required=True)
    reason = fields.String(required=True, validate=validate.OneOf(
        ["out", "stock_exhausted", "knock", "gin", "big_gin", "wall", "draw"]))
    counts = fields.List(fields.Float(), required=True)
    scores = fields.List(fields.Float(), required=True)
    going_rummy = fields.Boolean(required=True)
    all_at_once = fields.Boolean(metadata={"description": "R51-ALL-AT-ONCE"})
    dry = fields.Boolean(metadata={"description": "dry rummy: nobody else had melded"})
    jokers_used = fields.Integer(allow_none=True, metadata={
        "description": "jokers the winner put down in an all-at-once finish (L14-DRY)"})
    result = fields.String(metadata={
        "description": "gin: knock, gin, big_gin, undercut, tie (GIN-SCORE), wall_draw (a "
                       "pass at the wall, GIN-WALL), bounce_draw (both players in succession "
                       "took the discard and put it back, GIN-TURN) or draw"})
    knocker = fields.Integer(metadata={"description": "gin: the seat that knocked"})
    deadwood = fields.List(fields.Integer(), metadata={"description": "gin: each seat's"})
    game_bonus = fields.Integer(metadata={"description": "gin: the match's game bonus"})
    box_bonus = fields.List(fields.Integer(), metadata={
        "description": "gin: each seat's box bonus (GIN-END)"})
    shutout = fields.Boolean(metadata={"description": "gin: the winner's total doubled"})
    match_winner = fields.Integer(metadata={"description": "gin: who won the match"})
    contracts = fields.List(fields.Nested(HandContractSchema), metadata={
        "description": "Dummy rummy: each seat's contract this hand and whether it was made "
                       "(DUMMY-CONTRACTS)"})


class GinKnockSchema(ma.Schema):
    seat = fields.Integer(required=True)
    kind = fields.String(required=True, metadata={"description": "knock, gin or big_gin"})
    deadwood = fields.Integer(required=True)


class GinFactsSchema(ma.Schema):
    upcard_offer = fields.Integer(allow_none=True, required=True, metadata={
        "description": "the seat the first upcard is offered to (GIN-FIRST), or null"})
    knock_limit = fields.Integer(required=True, metadata={
        "description": "the most deadwood a knock may leave this hand (GIN-KNOCK, oklahoma)"})
    wall = fields.Boolean(required=True, metadata={
        "description": "the stock is down to 2 cards (GIN-WALL)"})
    knock = fields.Nested(GinKnockSchema, allow_none=True, required=True)
    deadwood = fields.List(fields.Integer(allow_none=True), required=True, metadata={
        "description": "each seat's deadwood once laid out (GIN-LAYOFF), else null"})
    upcards_taken = fields.Integer(required=True, metadata={
        "description": "discards taken this hand"})


class PublicViewSchema(ma.Schema):
    game_id = fields.String(required=True)
    variant = fields.String(required=True)
    rules = RulesField(required=True, metadata={
        "description": "every knob's value in this game"})
    status = fields.String(required=True, validate=validate.OneOf(GAME_STATUSES), metadata={
        "description": "`waiting`: a seat is open, nothing is dealt; `aborted`: cancelled "
                       "by its host or aborted by a seat before the first move (C-ABORT), "
                       "no winner"})
    hand_number = fields.Integer(required=True, metadata={
        "description": "0 while the game waits for its players"})
    dealer = fields.Integer(required=True)
    turn = fields.Nested(TurnSchema, allow_none=True, required=True)
    discard_only = fields.Boolean(required=True, metadata={
        "description": "the player to move may only discard (R51-FIRST: the dealer's first "
                       "action)"})
    version = fields.Integer(required=True)
    stock_count = fields.Integer(required=True)
    discard_top = fields.String(allow_none=True, required=True)
    discard_count = fields.Integer(required=True)
    seats = fields.List(fields.Nested(SeatSummarySchema), required=True)
    melds = fields.List(fields.Nested(MeldViewSchema), required=True)
    hands_played = fields.List(fields.Nested(HandResultSchema), required=True)
    winners = fields.List(fields.Integer(), allow_none=True, required=True)
    end = fields.Nested(MatchEndSchema, allow_none=True, required=True, metadata={
        "description": "how the match ended early (resign, claim_timeout, abort); null while "
                       "playing and after a match played out"})
    server_time = fields.String(metadata={
        "format": "date-time",
        "description": "with knob clock: the store's clock as the view was made (RFC 3339, "
                       "UTC), to set a client's countdown by"})
    arranged = fields.Boolean(required=True)
    cut_in = fields.Nested(CutInWindowSchema, metadata={
        "description": "Dummy rummy with cut_ins: the cut-in window and its claims"})
    gin = fields.Nested(GinFactsSchema, metadata={
        "description": "Gin rummy: the hand's upcard offer, knock limit, wall, knock and "
                       "deadwood (GIN-FIRST, GIN-KNOCK, GIN-WALL, GIN-LAYOFF)"})
    deal_commitment = fields.String(allow_none=True, required=True, metadata={
        "description": "SHA-256 over a secret seed and this hand's deal, revealed in the "
                       "log (deal_revealed) when the hand ends"})
    rematch = fields.String(metadata={
        "description": "the game id of the next match (POST …/rematch): only once it is "
                       "made"})


class SeatViewSchema(PublicViewSchema):
    seat = fields.Integer(required=True)
    hand = fields.List(fields.String(), required=True)
    taken_discard = fields.String(allow_none=True, required=True,
                                  metadata={"description": "card taken from the discard "
                                                           "pile this turn (C-DISCARD-BACK)"})


class SeatTokenSchema(ma.Schema):
    seat = fields.Integer(required=True)
    name = fields.String(required=True)
    token = fields.String(required=True, metadata={"description": "secret bearer token of "
                                                                  "this seat; shown only once"})


class GameCreatedSchema(ma.Schema):
    game_id = fields.String(required=True)
    host_token = fields.String(required=True, metadata={
        "description": "secret bearer token of the host: cancels the game (DELETE) and "
                       "opens seats while it waits; sees no hand, makes no move. Shown "
                       "only once"})
    join_code = fields.String(metadata={
        "description": "only with an open seat: the code players join with (POST "
                       "/v1/join), to read aloud or type; any case, `-` and blanks "
                       "ignored", "example": "K7QP-M2XD"})
    seats = fields.List(fields.Nested(SeatTokenSchema), required=True, metadata={
        "description": "the named seats and their tokens (an open seat has none yet)"})
    game = fields.Nested(PublicViewSchema, required=True)


# ---------------------------------------------------------------------------------------
# Moves


MAX_MELD_CARDS = 30
"""The most cards in one meld or one lay-off."""
MAX_MELDS = 12
"""The most new melds (or lay-offs) in one move."""
MAX_TAKES = 8
"""The most cards one take_from_meld takes."""
MELD_ID = validate.Length(min=1, max=20)
"""A table meld's id, as a move names it."""


def _meld_cards(**kwargs: Any) -> fields.List[Any]:
    return fields.List(MeldCard(),
                       validate=validate.Length(min=1, max=MAX_MELD_CARDS), **kwargs)


class MeldSpecSchema(StrictSchema):
    cards = _meld_cards(required=True)


class TakeSchema(StrictSchema):
    meld_id = fields.String(required=True, validate=MELD_ID)
    card = CardCode(required=True)


class LayOffSpecSchema(StrictSchema):
    meld_id = fields.String(required=True, validate=MELD_ID)
    cards = _meld_cards(required=True)
    end = fields.String(validate=validate.OneOf(["low", "high"]))


def pieces(cards: list[Any]) -> tuple[Piece, ...]:
    """Loaded meld cards (codes, or ``{"card", "as"}``) as the engine's pieces."""
    return tuple(Piece(c) if isinstance(c, str) else Piece(c["card"], c.get("as"))
                 for c in cards)


def _melds(data: dict[str, Any]) -> tuple[tuple[Piece, ...], ...]:
    return tuple(pieces(m["cards"]) for m in data.get("melds", ()))


def _lay_off(data: dict[str, Any]) -> moves.LayOff:
    return moves.LayOff(data["meld_id"], pieces(data["cards"]), data.get("end"))


def _lay_offs(data: dict[str, Any]) -> tuple[moves.LayOff, ...]:
    return tuple(_lay_off(lo) for lo in data.get("lay_offs", ()))


class TypedMoveSchema(StrictSchema, Choice):
    """One type of move: exactly its fields, each required where the type requires it; it
    loads as the engine's move (:meth:`make`)."""

    KIND = ""
    """The move's ``type``."""

    @ma.post_load
    def _move(self, data: dict[str, Any], **kwargs: Any) -> moves.Move:
        return self.make(data)

    def make(self, data: dict[str, Any]) -> moves.Move:
        """The engine's move from this schema's loaded fields (or from a body the fast
        path, :mod:`service.api.fastpath`, found the schema would load unchanged)."""
        raise NotImplementedError


def _kind(kind: str) -> fields.String:
    return fields.String(required=True, validate=validate.OneOf([kind]))


def _required(kind: str) -> dict[str, Any]:
    return {"required": True, "error_messages": {"required": f"required for a {kind} move"}}


def _source(kind: str) -> fields.String:
    return fields.String(validate=validate.OneOf(["stock", "discard"]), **_required(kind),
                         metadata={"description": "where from"})


def _new_melds(*, at_least_one: bool = True, **kwargs: Any) -> fields.List[Any]:
    checks = [validate.Length(max=MAX_MELDS)]
    if at_least_one:
        checks.append(validate.Length(min=1, error="a non-empty list of melds is required"))
    return fields.List(fields.Nested(MeldSpecSchema), validate=checks, **kwargs)


def _table_meld(kind: str, description: str) -> fields.String:
    return fields.String(validate=MELD_ID, **_required(kind),
                         metadata={"description": description})


def _lay_offs_field(description: str) -> fields.List[Any]:
    return fields.List(fields.Nested(LayOffSpecSchema), validate=validate.Length(max=MAX_MELDS),
                       metadata={"description": description})


LAY_OFFS_AFTER = ("lay-offs on melds already on the table, made after the new melds in the "
                  "same action (they count toward an opening, R51-OPEN)")


class DrawMoveSchema(TypedMoveSchema):
    """Take the top card of the stock or of the discard pile (C-TURN)."""

    KIND = "draw"
    type = _kind(KIND)
    source = _source(KIND)

    def make(self, data: dict[str, Any]) -> moves.Move:
        return moves.Draw(data["source"])


class MeldMoveSchema(TypedMoveSchema):
    """Put new melds on the table, then optionally lay off on melds already there."""

    KIND = "meld"
    type = _kind(KIND)
    melds = _new_melds(**_required(KIND), metadata={"description": "the new melds"})
    lay_offs = _lay_offs_field(LAY_OFFS_AFTER)

    def make(self, data: dict[str, Any]) -> moves.Move:
        return moves.MeldMove(_melds(data), _lay_offs(data))


class LayOffMoveSchema(TypedMoveSchema):
    """Add cards from hand to a meld on the table (C-LAYOFF)."""

    KIND = "lay_off"
    type = _kind(KIND)
    meld_id = _table_meld(KIND, "the table meld")
    cards = _meld_cards(**_required(KIND), metadata={"description": "cards from hand"})
    end = fields.String(validate=validate.OneOf(["low", "high"]),
                        metadata={"description": "which end of a run"})

    def make(self, data: dict[str, Any]) -> moves.Move:
        return _lay_off(data)


class SwapJokerMoveSchema(TypedMoveSchema):
    """Replace a melded joker with the card it stands for (R51-SWAP, WROTHAM-SWAP)."""

    KIND = "swap_joker"
    type = _kind(KIND)
    meld_id = _table_meld(KIND, "the table meld holding the joker")
    card = CardCode(**_required(KIND), metadata={"description": "the card from hand"})

    def make(self, data: dict[str, Any]) -> moves.Move:
        return moves.SwapJoker(data["meld_id"], data["card"])


class TakeFromMeldMoveSchema(TypedMoveSchema):
    """Take cards from table melds and meld them anew (R51-TAKE)."""

    KIND = "take_from_meld"
    type = _kind(KIND)
    take = fields.List(fields.Nested(TakeSchema), validate=validate.Length(min=1, max=MAX_TAKES),
                       **_required(KIND), metadata={"description": "cards taken from melds"})
    melds = _new_melds(**_required(KIND), metadata={"description": "the new melds"})

    def make(self, data: dict[str, Any]) -> moves.Move:
        return moves.TakeFromMeld(tuple(moves.Take(t["meld_id"], t["card"])
                                        for t in data["take"]), _melds(data))


class DiscardMoveSchema(TypedMoveSchema):
    """Put one card face up on the discard pile, ending the turn."""

    KIND = "discard"
    type = _kind(KIND)
    card = CardCode(**_required(KIND), metadata={"description": "the card"})
    announce = StrictBoolean(metadata={"description": "last-card call (R51-LAST)"})

    def make(self, data: dict[str, Any]) -> moves.Move:
        return moves.Discard(data["card"], data.get("announce", False))


class KnockMoveSchema(TypedMoveSchema):
    """Gin: discard and lay out; the cards not melded are deadwood (GIN-KNOCK)."""

    KIND = "knock"
    type = _kind(KIND)
    card = CardCode(metadata={"description": "the discard (without it: big gin, GIN-KNOCK)"})
    melds = _new_melds(at_least_one=False, **_required(KIND),
                       metadata={"description": "the knocker's melds"})
    lay_offs = _lay_offs_field("refused: the knocker may not lay off (GIN-LAYOFF)")

    def make(self, data: dict[str, Any]) -> moves.Move:
        return moves.Knock(data.get("card"), _melds(data), _lay_offs(data))


class LayOutMoveSchema(TypedMoveSchema):
    """Gin: the knocker's opponent lays out melds and lays off on the knocker's
    (GIN-LAYOFF)."""

    KIND = "lay_out"
    type = _kind(KIND)
    melds = _new_melds(at_least_one=False,
                       metadata={"description": "new melds (there may be none)"})
    lay_offs = _lay_offs_field("lay-offs on the knocker's melds")

    def make(self, data: dict[str, Any]) -> moves.Move:
        return moves.LayOut(_melds(data), _lay_offs(data))


def _bare_move(name: str, kind: str, move: Callable[[], moves.Move],
               doc: str) -> type[TypedMoveSchema]:
    """The schema of a move with no field but its ``type``."""
    made = move()
    schema: type[TypedMoveSchema] = type(name, (TypedMoveSchema,), {
        "__doc__": doc, "KIND": kind, "type": _kind(kind),
        "make": lambda self, data: made, "__module__": __name__})
    return schema


CutInMoveSchema = _bare_move("CutInMoveSchema", "cut_in", moves.CutIn,
                             "Claim the top discard out of turn (DUMMY-CUTIN).")
PassMoveSchema = _bare_move("PassMoveSchema", "pass", moves.Pass,
                            "Refuse the first upcard (GIN-FIRST), or pass at the wall "
                            "(GIN-WALL).")
ResignMoveSchema = _bare_move("ResignMoveSchema", "resign", moves.Resign,
                              "Give up the match, in or out of turn (C-RESIGN).")
AbortMoveSchema = _bare_move("AbortMoveSchema", "abort", moves.Abort,
                             "Call the game off before the first move of the first hand "
                             "(C-ABORT).")
ClaimTimeoutMoveSchema = _bare_move("ClaimTimeoutMoveSchema", "claim_timeout",
                                    moves.ClaimTimeout, "Claim the match from the seat whose "
                                    "turn's deadline has passed (C-CLOCK).")


MOVE_SCHEMAS: dict[str, type[TypedMoveSchema]] = {s.KIND: s for s in (
    DrawMoveSchema, MeldMoveSchema, LayOffMoveSchema, SwapJokerMoveSchema, TakeFromMeldMoveSchema,
    DiscardMoveSchema, CutInMoveSchema, PassMoveSchema, KnockMoveSchema, LayOutMoveSchema,
    ResignMoveSchema, AbortMoveSchema, ClaimTimeoutMoveSchema)}


class MoveSchema(OneOfSchema):
    """A proposed move: one of the move types, each with its own fields (docs/api.md
    "Moves"). Loads as the engine's move."""

    CHOICES: ClassVar[Mapping[str, type[ma.Schema]]] = {
        kind: MOVE_SCHEMAS[kind] for kind in moves.MOVE_TYPES}  # every type, in their order
    NOUN = "move"
    EXAMPLE: ClassVar[dict[str, Any]] = {"type": "draw", "source": "stock"}


class MoveHeadersSchema(ma.Schema):
    """The optional headers of a move."""

    class Meta:
        unknown = ma.EXCLUDE

    if_match = fields.String(data_key="If-Match", metadata={
        "description": 'apply only if the game is at this version ("<version>"); 412 if not'})
    idempotency_key = fields.String(
        data_key="Idempotency-Key", validate=validate.Regexp(IDEMPOTENCY_KEY),
        metadata={"description": "retry-safe key, scoped to the game and seat: a repeated "
                                 "request returns the first answer and applies nothing twice; "
                                 "1-200 visible ASCII characters"})


DRY_RUN = (
    "validate only, nothing stored. A refused move answers the move's own 422 (same code, "
    "rule and reasons); a legal one answers what it would do, as far as the seat may know "
    "before making it. Every event carries \"dry_run\": true and is shown as the public "
    "log shows it: a card the move would take from the stock (a draw, R51-LAST penalty "
    "cards) is counted, never named. `game` is the seat's view after the move without those "
    "cards in `hand` (its `hand_count` counts them). A move that would end the hand answers "
    "its events up to `hand_end`, which keeps only `hand_number`, `went_out` and `reason` "
    "(the scores depend on the other hands), and the seat's view as it is now, at the "
    "current version: nothing of the next deal or of whether the match ends.")


class MoveQuerySchema(ma.Schema):
    dry_run = fields.Boolean(load_default=False, metadata={"description": DRY_RUN})
    include = fields.String(validate=validate.OneOf(["legal_moves"]), metadata={
        "description": "`legal_moves`: the answer adds `legal_moves`, the mover's legal "
                       "moves after the move (as `GET …/legal-moves` lists them)"})


class TypedEventSchema(Choice):
    """One type of event: exactly its fields (a seat's own facts, such as a card it drew,
    only in that seat's answers and log)."""

    KIND = ""
    """The event's ``type``."""
    dry_run = fields.Boolean(metadata={
        "description": "true in a dry run's answer (what the move would do, as the seat may "
                       "know it before the move: see the dry_run parameter)"})


def _event(kind: str, doc: str, /, **declared: fields.Field[Any]) -> type[TypedEventSchema]:
    """The schema of the events of type ``kind``: ``declared`` and ``type``."""
    name = "".join(part.title() for part in kind.split("_")) + "EventSchema"
    schema: type[TypedEventSchema] = type(name, (TypedEventSchema,), {
        "__doc__": doc, "__module__": __name__, "KIND": kind, "type": _kind(kind),
        **declared})
    return schema


def _int(description: str | None = None, **kwargs: Any) -> fields.Integer:
    return fields.Integer(required=True, metadata={"description": description} if description
                          else {}, **kwargs)


def _cards_of(description: str, required: bool = True) -> fields.List[Any]:
    return fields.List(fields.String(), required=required,
                       metadata={"description": description})


def _text(description: str | None = None, **kwargs: Any) -> fields.String:
    kwargs.setdefault("required", True)
    return fields.String(metadata={"description": description} if description else {},
                         **kwargs)


def _meld_view() -> fields.Nested:
    return fields.Nested(MeldViewSchema, required=True, metadata={
        "description": "the meld as it is now"})


def _optional_result_fields() -> dict[str, fields.Field[Any]]:
    """``HandResultSchema``'s fields, only those a dry run's ``hand_end`` keeps required."""
    out = {}
    for name, field in HandResultSchema().fields.items():
        field = copy.deepcopy(field)
        field.required = name in views.DRY_RUN_HAND_END
        out[name] = field
    return out


SEAT = "the seat that moved"
EVENT_SCHEMAS = [
    _event("draw", "A seat drew (C-TURN).", seat=_int(SEAT), source=_text(
        validate=validate.OneOf(["stock", "discard"])), card=_text(
        "the card: from the discard pile, for everyone; from the stock, for the seat only",
        required=False)),
    _event("meld", "A seat put new melds on the table.", seat=_int(SEAT), melds=fields.List(
        fields.Nested(MeldViewSchema), required=True)),
    _event("lay_off", "A seat laid cards off on a table meld (C-LAYOFF).", seat=_int(SEAT),
           meld_id=_text(), cards=_cards_of("the cards laid off"), meld=_meld_view()),
    _event("swap_joker", "A seat swapped a melded joker for its card (R51-SWAP, "
           "WROTHAM-SWAP).", seat=_int(SEAT), meld_id=_text(), card=_text(),
           meld=_meld_view()),
    _event("take_from_meld", "A seat took cards from table melds (R51-TAKE).",
           seat=_int(SEAT), take=fields.List(fields.Nested(TakeSchema), required=True)),
    _event("discard", "A seat discarded, ending its turn.", seat=_int(SEAT), card=_text(),
           announce=fields.Boolean(metadata={"description": "the last-card call (R51-LAST)"})),
    _event("last_card", "A seat has one card left, announced (R51-LAST).", seat=_int(),
           announced_by=_text(validate=validate.OneOf(["player", "referee"]))),
    _event("penalty", "A seat took penalty cards (R51-LAST).", seat=_int(), rule=_text(),
           count=_int("how many cards"), reason=_text(),
           cards=_cards_of("the cards, for the seat only", required=False)),
    _event("stock_rebuilt", "The empty stock was rebuilt from the discard pile (C-STOCK).",
           policy=_text(), rebuilds=_int("rebuilds this hand"), stock_count=_int(),
           discard_count=_int()),
    _event("cut_in_claim", "A seat claimed the top discard out of turn (DUMMY-CUTIN).",
           seat=_int(), card=_text(), next=_int("the seat to move")),
    _event("cut_in", "A seat won a cut-in: the discard and stock cards (DUMMY-CUTIN).",
           seat=_int(), card=_text(), stock_cards=_int("cards it took from the stock"),
           cut_ins=_int("its cut-ins this hand"),
           cards=_cards_of("the stock cards, for the seat only", required=False)),
    _event("cut_in_denied", "Claims of a cut-in that were refused (DUMMY-CUTIN).",
           seats=fields.List(fields.Integer(), required=True), reason=_text()),
    _event("pass", "Gin: a seat refused the upcard or passed at the wall (GIN-FIRST, "
           "GIN-WALL).", seat=_int(SEAT)),
    _event("knock", "Gin: a seat knocked (GIN-KNOCK).", seat=_int(SEAT),
           kind=_text(validate=validate.OneOf(["knock", "gin", "big_gin"])),
           deadwood=_int(), hand=_cards_of("the knocker's cards, laid out")),
    _event("lay_out", "Gin: the knocker's opponent laid out (GIN-LAYOFF).", seat=_int(SEAT),
           deadwood=_int(), hand=_cards_of("the cards left")),
    _event("hand_end", "The hand ended and was scored (a dry run's: only that it would end, "
           "and why).", **_optional_result_fields(), totals=fields.List(fields.Float())),
    _event("deal_revealed", "The ended hand's deal and seed, to check against its "
           "commitment.", hand_number=_int(), seed=_text(), commitment=_text(),
           arranged=fields.Boolean(required=True), dealer=_int(),
           hands=fields.List(fields.List(fields.String()), required=True),
           stock=_cards_of("the stock as dealt"), discard=_cards_of("the discard pile as dealt"),
           rebuilds=fields.List(fields.Raw(), required=True, metadata={
               "description": "each stock rebuild's new stock"})),
    _event("dealt", "A hand was dealt.", hand_number=_int(), dealer=_int(),
           first=_int("the seat to move first"), upcard=_text(allow_none=True),
           stock_count=_int(), hand_counts=fields.List(fields.Integer(), required=True),
           commitment=_text(allow_none=True), arranged=fields.Boolean(required=True),
           hand=_cards_of("the seat's own cards, for the seat only", required=False)),
    _event("game_end", "The match ended.", winners=fields.List(
        fields.Integer(), required=True), totals=fields.List(fields.Float(), required=True),
           end=fields.Nested(MatchEndSchema, metadata={"description": "how it ended early"})),
    _event("resign", "A seat resigned (C-RESIGN).", seat=_int(SEAT)),
    _event("abort", "A seat called the game off (C-ABORT).", seat=_int(SEAT)),
    _event("claim_timeout", "A seat claimed the match on time (C-CLOCK).", seat=_int(SEAT),
           late=_int("the seat whose time ran out")),
    _event("seat_taken", "A player took an open seat.", seat=_int(), name=_text()),
    _event("seat_opened", "The host opened a seat.", seat=_int()),
    _event("token_rotated", "A seat replaced its token.", seat=_int()),
    _event("rematch", "A seat made the rematch.", game_id=_text("the rematch"), seat=_int()),
    _event("rematch_joined", "A seat joined the rematch.", game_id=_text("the rematch"),
           seat=_int()),
    _event("game_cancelled", "The host cancelled the game."),
]


class EventSchema(OneOfSchema):
    """What happened: one of the event types, each with its own fields."""

    CHOICES: ClassVar[Mapping[str, type[ma.Schema]]] = {s.KIND: s for s in EVENT_SCHEMAS}
    NOUN = "event"


class MoveResultSchema(ma.Schema):
    game = fields.Nested(SeatViewSchema, required=True)
    events = fields.List(fields.Nested(EventSchema), required=True)
    version = fields.Integer(required=True, metadata={
        "description": "the game's version after the move (a dry run: as it is)"})
    status = fields.String(required=True, validate=validate.OneOf(GAME_STATUSES), metadata={
        "description": "the game's status after the move"})
    turn = fields.Nested(TurnSchema, allow_none=True, required=True, metadata={
        "description": "whose turn it is after the move, and its phase (null: none)"})
    legal_moves = fields.Nested("LegalMovesSchema", metadata={
        "description": "with `?include=legal_moves`: the mover's legal moves now"})


# ---------------------------------------------------------------------------------------
# Variants and errors


class IntegerRangeSchema(ma.Schema):
    minimum = fields.Integer(required=True)
    maximum = fields.Integer(required=True)


class KnobSchema(ma.Schema):
    name = fields.String(required=True)
    type = fields.String(required=True, validate=validate.OneOf(
        ["enum", "bool", "int", "int_or_enum", "match_end", "clock"]))
    rule = fields.String(required=True)
    description = fields.String(required=True)
    default = fields.Raw(required=True, allow_none=True)
    values = fields.List(fields.Raw())
    minimum = fields.Integer(metadata={"description": "int, int_or_enum: the least integer"})
    maximum = fields.Integer(metadata={"description": "int, int_or_enum: the greatest "
                                                      "integer"})
    bounds = fields.Dict(keys=fields.String(), values=fields.Nested(IntegerRangeSchema),
                         metadata={"description": "match_end, clock: the least and greatest "
                                                  "N of each key"})
    nullable = fields.Boolean()


class VariantSchema(ma.Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    min_players = fields.Integer(required=True)
    max_players = fields.Integer(required=True)
    deck_size = fields.Integer(required=True)
    rules = RulesField(required=True, metadata={"description": "the default knob values"})
    knobs = fields.List(fields.Nested(KnobSchema), required=True)


class VariantListSchema(ma.Schema):
    variants = fields.List(fields.Nested(VariantSchema), required=True)


class FieldErrorSchema(ma.Schema):
    field = fields.String(required=True, metadata={
        "description": "the bad field: a dotted path into the body (`melds.0.cards.2`), a "
                       "query parameter, a header or a path parameter; `body` for the body "
                       "as a whole"})
    message = fields.String(required=True)
    value = fields.Raw(metadata={
        "description": "the input at `field` as it was sent (absent for a field not sent, "
                       "and never a credential: Authorization, X-API-Key, a ticket); a "
                       "string longer than 200 characters, or a list or object whose JSON "
                       "text is, is quoted as a string of its first 200 characters and `…`"})


class ReasonSchema(ma.Schema):
    code = fields.String(required=True, metadata={"description": "machine-readable"})
    rule = fields.String(required=True, metadata={"description": "the rule id (docs/rules.md)"})
    detail = fields.String(required=True, metadata={
        "description": "for people, in the language Accept-Language asks for (da, pt, sv, "
                       "cs; else English)"})


class ProblemSchema(ma.Schema):
    """RFC 9457 problem details, with the extension members named here (and room for
    more: a client keeps what it does not know)."""

    class Meta:
        unknown = ma.INCLUDE

    type = fields.String(required=True)
    title = fields.String(required=True)
    status = fields.Integer(required=True)
    detail = fields.String(required=True)
    code = fields.String(metadata={"description": "stable machine-readable code",
                                   "enum": [c.value for c in Code] + [
                                       "MALFORMED_REQUEST", "ARRANGED_DEALS_FORBIDDEN",
                                       "SHEET_FINISHED", "SHEET_FULL", "NO_HAND",
                                       "TOO_MANY_STREAMS", "TOO_MANY_CONNECTIONS", "RESTARTING",
                                       *LOBBY_CODES]})
    rule = fields.String(metadata={"description": "id of the rule that forbids the move "
                                                  "(docs/rules.md)"})
    errors = fields.List(fields.Nested(FieldErrorSchema),
                         metadata={"description": "400: each bad field"})
    reasons = fields.List(fields.Nested(ReasonSchema),
                          metadata={"description": "422: every reason when there are several"})
    policy = fields.String(metadata={"description": "429: the limit's name in the "
                                                    "RateLimit-Policy header"})
    limit = fields.String(metadata={"description": "429: the limit, as configured "
                                                   "(e.g. `120/minute`; of streams open at "
                                                   "once: `32 open at once`)"})
    retry_after = fields.Integer(metadata={"description": "429: seconds until the limit's "
                                                          "window ends (Retry-After)"})
    current_version = fields.Integer(metadata={
        "description": "412: the version the game or sheet is at now (its `ETag`)"})


class HealthSchema(ma.Schema):
    status = fields.String(required=True)


# ---------------------------------------------------------------------------------------
# Bots, the move log and stateless checks


class LegalMovesQuerySchema(ma.Schema):
    limit = QueryInteger(load_default=500, validate=validate.Range(min=1, max=5000),
                           metadata={"description": "most moves listed; `truncated` says "
                                                    "when the list was cut"})


class CompoundSchema(ma.Schema):
    kind = fields.String(required=True, metadata={"description": "opening (R51-OPEN), "
                                                                 "contract, all_at_once"})
    rule = fields.String(required=True)
    exists = fields.Boolean(required=True)
    example = fields.Nested(MoveSchema, allow_none=True, required=True,
                            metadata={"description": "one such move, ready to send"})


class LegalMovesSchema(ma.Schema):
    seat = fields.Integer(required=True)
    version = fields.Integer(required=True)
    your_turn = fields.Boolean(required=True)
    moves = fields.List(fields.Nested(MoveSchema), required=True, metadata={
        "description": "every legal move now, each ready to POST to …/moves (compound meld "
                       "actions are summarised under `compound`)"})
    truncated = fields.Boolean(required=True)
    compound = fields.Nested(CompoundSchema, allow_none=True, required=True)


EVENTS_PAGE = 100
"""The entries of a ``GET …/events`` page when ``limit`` is not given."""
EVENTS_PAGE_MAX = 1000
"""The most entries a page may ask for (``limit``)."""


class EventsQuerySchema(ma.Schema):
    after = QueryInteger(load_default=0, validate=validate.Range(min=0),
                         metadata={"description": "entries with a version above this"})
    limit = QueryInteger(
        load_default=EVENTS_PAGE, validate=validate.Range(min=1, max=EVENTS_PAGE_MAX),
        metadata={"description": f"entries on the page at most (default {EVENTS_PAGE}, at "
                                 f"most {EVENTS_PAGE_MAX}); `has_more` says whether more "
                                 "follow"})
    ticket = fields.String(metadata={
        "description": "a stream ticket (`POST …/stream-tickets`), for a browser's "
                       "`EventSource`, which sends no `Authorization` header: the stream "
                       "is the ticket's seat's (used once; with `Accept: text/event-stream` "
                       "only)"})


class LogEntrySchema(ma.Schema):
    version = fields.Integer(required=True)
    seat = fields.Integer(required=True, allow_none=True, metadata={
        "description": "the seat that moved (null: the host)"})
    move = fields.Nested(MoveSchema, required=True, allow_none=True, metadata={
        "description": "the move made; null for a change of seats (a seat taken or opened, "
                       "a token rotated, a rematch, the game cancelled), told by its events"})
    events = fields.List(fields.Nested(EventSchema), required=True)
    status = fields.String(validate=validate.OneOf(GAME_STATUSES), metadata={
        "description": "the game's status after the entry (entries written before the "
                       "service told it have none)"})
    turn = fields.Nested(TurnSchema, allow_none=True, metadata={
        "description": "whose turn it is after the entry, and its phase (null: none)"})


class EventsPageSchema(ma.Schema):
    game_id = fields.String(required=True)
    after = fields.Integer(required=True)
    entries = fields.List(fields.Nested(LogEntrySchema), required=True)
    last_version = fields.Integer(required=True, metadata={
        "description": "the version of the last entry on this page (`after` when there is "
                       "none): the `after` of the next page"})
    has_more = fields.Boolean(required=True, metadata={
        "description": "whether entries after `last_version` exist already: ask for the "
                       "next page with `after=last_version`"})


class MeldCheckSchema(StrictSchema):
    variant = fields.String(required=True, validate=validate.OneOf(list(VARIANTS)))
    rules = RulesField()
    cards = fields.List(MeldCard(), required=True,
                        validate=validate.Length(min=1, max=30))

    @ma.validates_schema(skip_on_field_errors=False)
    def _rules(self, data: dict[str, Any], **kwargs: Any) -> None:
        _check_rules(data)


def _check_rules(data: dict[str, Any]) -> None:
    variant = data.get("variant")
    rules = data.get("rules")
    if isinstance(variant, str) and variant in VARIANTS and isinstance(rules, dict):
        problems = rules_errors(VARIANTS[variant], rules)
        if problems:
            raise ma.ValidationError({"rules": {p.knob: [p.message] for p in problems}})


class CheckedWildSchema(ma.Schema):
    index = fields.Integer(required=True)
    card = fields.String(required=True)
    as_ = fields.String(required=True, data_key="as")


class MeldCheckResultSchema(ma.Schema):
    valid = fields.Boolean(required=True)
    kind = fields.String(allow_none=True, required=True)
    cards = fields.List(fields.String(), required=True, metadata={
        "description": "the cards in run order (a set: naturals first)"})
    wilds = fields.List(fields.Nested(CheckedWildSchema), required=True)
    points = fields.Integer(allow_none=True, required=True)
    errors = fields.List(fields.Nested(ReasonSchema), required=True)


class ScoreHandSchema(StrictSchema):
    variant = fields.String(required=True, validate=validate.OneOf(list(VARIANTS)))
    rules = RulesField()
    went_out = fields.Integer(required=True, allow_none=True, strict=True,
                              validate=validate.Range(min=0, max=MAX_PLAYERS - 1))
    hands = fields.List(fields.List(CardCode(), validate=validate.Length(max=120)),
                        required=True, validate=validate.Length(min=2, max=MAX_PLAYERS))
    opened = fields.List(StrictBoolean(), allow_none=True,
                         validate=validate.Length(min=2, max=MAX_PLAYERS),
                         metadata={"description": "R51/L14: who has opened"})
    all_at_once = StrictBoolean(allow_none=True, metadata={
        "description": "the winner put the whole hand down in one turn (BASIC-RUMMY, "
                       "R51-ALL-AT-ONCE)"})
    final_discard = CardCode(allow_none=True, metadata={
        "description": "R51: the winner's last discard (a joker quadruples)"})
    jokers_used = fields.Integer(allow_none=True, strict=True,
                                 validate=validate.Range(min=0, max=4),
                                 metadata={"description": "L14-DRY: jokers the winner used"})

    @ma.validates_schema(skip_on_field_errors=False)
    def _rules(self, data: dict[str, Any], **kwargs: Any) -> None:
        _check_rules(data)


class ScoreHandResultSchema(ma.Schema):
    class Meta:
        unknown = ma.INCLUDE

    scores = fields.List(fields.Float(), required=True)
    counts = fields.List(fields.Float(), required=True)
    going_rummy = fields.Boolean(required=True)


class VerifySchema(ma.Schema):
    game_id = fields.String(required=True)
    version = fields.Integer(required=True)
    verified = fields.Boolean(required=True, metadata={
        "description": "every revealed deal matches its commitment and every logged move "
                       "replays to the logged events"})
    hands_verified = fields.Integer(required=True)
    moves_replayed = fields.Integer(required=True)
    moves_pending = fields.Integer(required=True, metadata={
        "description": "moves of the hand still being played (its deal is not revealed "
                       "yet)"})
    problems = fields.List(fields.String(), required=True)


# ---------------------------------------------------------------------------------------
# The lobby: open seats, joining, the host, tokens, rematches


class StreamTicketSchema(ma.Schema):
    ticket = fields.String(required=True, metadata={
        "description": "for `GET …/events?ticket=` with `Accept: text/event-stream`, once"})
    expires_in = fields.Integer(required=True, metadata={
        "description": "seconds the ticket may wait for its use"})


class JoinSchema(StrictSchema):
    code = fields.String(required=True, validate=validate.Length(min=1, max=40), metadata={
        "description": "the game's join code; any case, `-` and blanks ignored",
        "example": "K7QP-M2XD"})
    name = fields.String(required=True, validate=[
        validate.Length(min=1, max=MAX_NAME),
        validate.Regexp(NAME_PATTERN, error="a name needs a visible character and no "
                                            "control characters")],
                         metadata={"example": "Bo"})
    seat = fields.Integer(load_default=None, allow_none=True, strict=True,
                          validate=validate.Range(min=0, max=MAX_PLAYERS - 1),
                          metadata={"description": "the open seat to take (default: the "
                                                   "lowest open one)"})


class RetryHeadersSchema(ma.Schema):
    """The optional ``Idempotency-Key`` of a join or a rematch."""

    class Meta:
        unknown = ma.EXCLUDE

    idempotency_key = fields.String(
        data_key="Idempotency-Key", validate=validate.Regexp(IDEMPOTENCY_KEY),
        metadata={"description": "retry-safe key: a repeated request with the same key and "
                                 "body answers as the first did (the same seat and token) and "
                                 "takes nothing twice; the same key with another body is "
                                 "refused (422 IDEMPOTENCY_KEY_REUSED); 1-200 visible ASCII "
                                 "characters"})


class RotateHeadersSchema(RetryHeadersSchema):
    """The optional ``Idempotency-Key`` of a seat's token rotation."""

    idempotency_key = fields.String(
        data_key="Idempotency-Key", validate=validate.Regexp(IDEMPOTENCY_KEY),
        metadata={"description": "retry-safe key: the rotation sent again with the same key "
                                 "and the same (old) token, after its answer was lost, answers "
                                 "as the first did (the same new token; `Idempotent-Replayed: "
                                 "true`) and rotates nothing twice. The kept answer is bound to "
                                 "the old token: any other token, or the old one without the "
                                 "key or with another, is answered as without a key (the old "
                                 "token: 401); 1-200 visible ASCII characters"})


class JoinPreviewSchema(ma.Schema):
    game_id = fields.String(required=True)
    game = fields.Nested(PublicViewSchema, required=True, metadata={
        "description": "the waiting game's public view: `arranged` says whether its deal "
                       "was arranged by its creator"})


class SeatGrantSchema(ma.Schema):
    game_id = fields.String(required=True)
    seat = fields.Integer(required=True)
    token = fields.String(required=True, metadata={
        "description": "secret bearer token of this seat; shown only once"})


class JoinedSchema(SeatGrantSchema):
    game = fields.Nested(SeatViewSchema, required=True, metadata={
        "description": "the seat's view: `waiting` while a seat is still open, else the "
                       "game as dealt"})
