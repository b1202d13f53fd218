"""marshmallow schemas of the score sheets (``/v1/scoresheets``, :mod:`service.sheets`).

Request schemas check the shape of a body; what it says (player names, cards, the facts a
variant's scoring needs) is checked by :func:`service.sheets.score_entry`, which quotes a
bad card as it was sent.
"""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from marshmallow import fields, validate

from service.api.schemas import (
    IDEMPOTENCY_KEY,
    LENIENT_CARD,
    MAX_NAME,
    MAX_PLAYERS,
    NAME_PATTERN,
    RulesField,
    StrictBoolean,
    StrictSchema,
    check_variant_and_rules,
)
from service.sheets import MAX_CHANGES, MAX_HANDS, MAX_POINTS, QUESTIONS


class SheetCreateSchema(StrictSchema):
    variant = fields.String(required=True, validate=validate.Length(min=1, max=40),
                            metadata={"example": "rummy51"})
    rules = RulesField()
    players = fields.List(fields.String(validate=[
        validate.Length(min=1, max=MAX_NAME),
        validate.Regexp(NAME_PATTERN, error="a name needs a visible character and no "
                                            "control characters")]),
                          required=True, validate=validate.Length(min=1, max=MAX_PLAYERS),
                          metadata={"example": ["Ana", "Bo", "Cy"],
                                    "description": "the players' names, each its own "
                                                   "(case aside); hands name them"})

    @ma.validates_schema(skip_on_field_errors=False)
    def _variant_and_rules(self, data: dict[str, Any], **kwargs: Any) -> None:
        check_variant_and_rules(data)


class SheetHandSchema(StrictSchema):
    """One hand: `hands` (the cards each player still holds, scored as `POST
    /v1/scores/hand` scores them) or `points` (each player's score, already counted)."""

    went_out = fields.Raw(allow_none=True, metadata={
        "type": "string", "example": "Ana",
        "description": "Who went out? A player's name, or null when the hand ended with "
                       "nobody out. Required with `hands`."})
    hands = fields.Dict(keys=fields.String(), values=fields.List(fields.Raw(metadata={
        "type": "string", "description": LENIENT_CARD})), metadata={
        "example": {"Ana": [], "Bo": ["AS", "JK"], "Cy": ["10♥", "q♠"]},
        "description": "By player: the cards they still hold (`[]` for none; the player "
                       "who went out may be left out). " + LENIENT_CARD + "."})
    points = fields.Dict(keys=fields.String(), values=fields.Raw(metadata={
        "type": "number"}), metadata={
        "example": {"Ana": 0, "Bo": 31, "Cy": 100},
        "description": "By player: their score for the hand, already counted (every "
                       "player still in the match). Negative or fractional only where the "
                       f"variant's scoring has such scores; at most {MAX_POINTS} either "
                       "way."})
    opened = fields.Raw(allow_none=True, metadata={
        "type": "array", "items": {"type": "string"}, "example": ["Ana", "Bo"],
        "description": "Rummy 51, Lebanese 14: " + QUESTIONS["opened"]
                       + " (or an object of name: true/false)"})
    all_at_once = StrictBoolean(allow_none=True, metadata={
        "description": "Basic, Wrotham, Rummy 51, Lebanese 14, when someone went out: "
                       + QUESTIONS["all_at_once"]})
    final_discard = fields.String(allow_none=True, metadata={
        "description": "Rummy 51, when the finish was all at once: "
                       + QUESTIONS["final_discard"] + ". " + LENIENT_CARD})
    jokers_used = fields.Integer(allow_none=True, strict=True, metadata={
        "description": "Lebanese 14, when the finish was all at once: "
                       + QUESTIONS["jokers_used"]})
    completed = fields.List(fields.String(), allow_none=True, metadata={
        "example": ["Ana"],
        "description": "Dummy: " + QUESTIONS["completed"]
                       + "; the player who went out completed theirs"})


class SheetHeadersSchema(ma.Schema):
    """The optional headers of a change to a sheet (documented; parsed in the view)."""

    class Meta:
        unknown = ma.EXCLUDE

    if_match = fields.String(data_key="If-Match", metadata={
        "description": 'change the sheet only if it is at this version ("<version>", its '
                       "`ETag`); 412 if not"})
    idempotency_key = fields.String(
        data_key="Idempotency-Key", validate=validate.Regexp(IDEMPOTENCY_KEY),
        metadata={"description": "retry-safe key, scoped to the sheet: a repeated request "
                                 "returns the first answer and applies nothing twice; the "
                                 "same key with another request is refused (422 "
                                 "IDEMPOTENCY_KEY_REUSED); 1-200 visible ASCII characters"})


class SheetContractSchema(ma.Schema):
    contract = fields.Integer(required=True, metadata={
        "description": "the contract the player is on (1-12)"})
    completed = fields.Integer(required=True)


class SheetHandRecordSchema(ma.Schema):
    class Meta:
        unknown = ma.INCLUDE

    number = fields.Integer(required=True)
    entered = fields.String(required=True, validate=validate.OneOf(["cards", "points"]))
    went_out = fields.String(allow_none=True, required=True)
    scores = fields.Dict(keys=fields.String(), values=fields.Float(), required=True,
                         metadata={"description": "by player: the score of this hand"})
    cards = fields.Dict(keys=fields.String(), values=fields.List(fields.String()), metadata={
        "description": "entered as cards: what each player still held (canonical codes)"})
    counts = fields.Dict(keys=fields.String(), values=fields.Float(), metadata={
        "description": "entered as cards: what each player's cards count"})
    going_rummy = fields.Boolean()
    completed = fields.List(fields.String(), metadata={
        "description": "Dummy: who completed their contract in this hand"})


class SheetFactSchema(ma.Schema):
    field = fields.String(required=True, metadata={
        "description": "the field of a hand that gives it", "example": "all_at_once"})
    question = fields.String(required=True, metadata={
        "description": "what it is, as a question to ask the players"})
    entered = fields.String(required=True, validate=validate.OneOf(["cards", "any"]),
                            metadata={"description": "asked for a hand entered as cards "
                                                     "only, or for every hand"})


class SheetViewSchema(ma.Schema):
    class Meta:
        unknown = ma.INCLUDE

    sheet_id = fields.String(required=True)
    variant = fields.String(required=True)
    rules = fields.Dict(keys=fields.String(), required=True, metadata={
        "description": "every knob of the variant: those the sheet was created with, "
                       "the defaults for the others"})
    players = fields.List(fields.String(), required=True)
    hands = fields.List(fields.Nested(SheetHandRecordSchema), required=True)
    totals = fields.Dict(keys=fields.String(), values=fields.Float(), required=True,
                         metadata={"description": "by player: the running total"})
    status = fields.String(required=True, validate=validate.OneOf(["playing", "finished"]),
                           metadata={"description": "finished once the variant's "
                                                    "`match_end` is reached"})
    winners = fields.List(fields.String(), required=True, metadata={
        "description": "the winners once finished ([] while playing)"})
    version = fields.Integer(required=True, metadata={
        "description": "increases with every change; the `ETag`"})
    max_hands = fields.Integer(required=True, metadata={
        "description": f"the most hands a sheet holds ({MAX_HANDS}; at most {MAX_CHANGES} "
                       "changes in all)"})
    facts = fields.List(fields.Nested(SheetFactSchema), required=True, metadata={
        "description": "what a hand must say under this variant beyond who went out and "
                       "the cards or points (some only when someone went out, or went out "
                       "all at once), with the question to ask"})
    out_of_match = fields.List(fields.String(), metadata={
        "description": "Rummy 51 with `eliminate_at`: the players out of the match"})
    contracts = fields.Dict(keys=fields.String(), values=fields.Nested(SheetContractSchema),
                            metadata={"description": "Dummy: each player's contract"})


class SheetCreatedSchema(ma.Schema):
    sheet_id = fields.String(required=True)
    token = fields.String(required=True, metadata={
        "description": "the sheet's secret (shown only here): `Authorization: Bearer "
                       "<token>` to add or take back hands"})
    sheet = fields.Nested(SheetViewSchema, required=True)
