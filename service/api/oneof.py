"""Bodies that are one of several schemas, told apart by their ``type`` (moves, events).

:class:`OneOfSchema` loads a body as the schema its ``type`` names; :class:`OneOfPlugin`
(apispec's marshmallow plugin with :class:`OneOfConverter`) documents it as a ``oneOf`` of
those schemas with a ``discriminator`` on ``type``, each a component of its own, so client
generators make one typed class per choice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import marshmallow as ma
from apispec.ext.marshmallow import MarshmallowPlugin
from apispec.ext.marshmallow.common import resolve_schema_instance
from apispec.ext.marshmallow.openapi import OpenAPIConverter
from marshmallow import fields, validate


class OneOfSchema(ma.Schema):
    """A body that is one of :attr:`CHOICES`, told apart by its ``type``: it loads as the
    schema named for that type (and returns what that schema loads).

    A field of another choice is refused as ``not a field of a <type> <NOUN>``; without a
    known ``type``, only ``type`` is reported (marshmallow's messages: not an object, a
    missing field, not one of the choices)."""

    CHOICES: ClassVar[Mapping[str, type[ma.Schema]]] = {}
    NOUN: ClassVar[str] = ""
    """What a choice is called in a message (``move``: "not a field of a draw move")."""
    EXAMPLE: ClassVar[dict[str, Any]] = {}
    """A valid body: the docs page's prefilled example."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.choices = {kind: schema() for kind, schema in self.CHOICES.items()}
        self._kinds = ma.Schema.from_dict(
            {"type": fields.String(required=True, validate=validate.OneOf(self.CHOICES))},
            name=f"{type(self).__name__}Type")(unknown=ma.EXCLUDE)
        self._names = {field.data_key or name for choice in self.choices.values()
                       for name, field in choice.load_fields.items()}

    def load(self, data: Any, *, many: bool | None = None, partial: Any = None,
             unknown: Any = None) -> Any:
        if many:
            raise NotImplementedError("a OneOfSchema loads one body")
        kind = data.get("type") if isinstance(data, Mapping) else None
        schema = self.choices.get(kind) if isinstance(kind, str) else None
        if schema is None or not isinstance(kind, str):
            self._kinds.load(data)  # raises: not an object, no type, not a known type
            raise AssertionError(f"{kind!r} passed {type(self).__name__}'s type check")
        try:
            return schema.load(data, partial=partial, unknown=unknown)
        except ma.ValidationError as exc:
            raise ma.ValidationError(self._named(kind, schema, exc.messages)) from None

    def _named(self, kind: str, schema: ma.Schema, messages: Any) -> Any:
        """``messages`` with the error of a field ``schema`` does not take but another
        choice does (an unknown field, to ``schema``) said as "not a field of a <kind>
        <NOUN>"."""
        if not isinstance(messages, dict):
            return messages
        own = {field.data_key or name for name, field in schema.load_fields.items()}
        return {name: [f"not a field of a {kind} {self.NOUN}"]
                if name in self._names and name not in own else value
                for name, value in messages.items()}


class Choice(ma.Schema):
    """A schema that is one choice of a :class:`OneOfSchema`: documented with its class
    docstring as its ``description`` (what a client's typed class for it says)."""


class OneOfConverter(OpenAPIConverter):
    """apispec's converter, documenting a :class:`OneOfSchema` as ``oneOf`` its choices
    (each a component) with a ``discriminator`` mapping each ``type`` to its schema."""

    def schema2jsonschema(self, schema: Any) -> dict[str, Any]:
        instance = resolve_schema_instance(schema)
        if not isinstance(instance, OneOfSchema):
            base: Any = super()
            made: dict[str, Any] = base.schema2jsonschema(schema)
            if isinstance(instance, Choice):
                made.update(_described(instance))
            return made
        resolve: Any = self.resolve_nested_schema
        refs = {kind: resolve(type(choice))
                for kind, choice in instance.choices.items()}
        doc: dict[str, Any] = {
            "oneOf": list(refs.values()),
            "discriminator": {"propertyName": "type",
                              "mapping": {kind: ref["$ref"] for kind, ref in refs.items()}}}
        doc.update(_described(instance))
        if instance.EXAMPLE:
            doc["example"] = instance.EXAMPLE
        return doc


def _described(schema: ma.Schema) -> dict[str, str]:
    """The schema's class docstring as its ``description``, on one line."""
    text = type(schema).__doc__
    return {"description": " ".join(text.split())} if text else {}


class OneOfPlugin(MarshmallowPlugin):
    """apispec's marshmallow plugin with :class:`OneOfConverter`."""

    Converter = OneOfConverter
