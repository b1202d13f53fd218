"""``ApiBlueprint.arguments`` (service.api.routes): documented as flask-smorest documents it,
and all of a view's arguments parsed by one wrapper, in webargs' order, with its errors."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
import pytest
from flask import Flask, Response, jsonify
from flask.views import MethodView
from flask_smorest import Api, Blueprint

from service.api.routes import ApiBlueprint, Parser


class Reference(Blueprint):
    """flask-smorest's own ``arguments`` (a webargs wrapper and one of its own per schema)
    with the service's parser: what ``ApiBlueprint`` must answer and document alike."""

    ARGUMENTS_PARSER = Parser()


class HeadersSchema(ma.Schema):
    token = ma.fields.String(data_key="X-Token", load_default=None)
    level = ma.fields.Integer(data_key="X-Level", load_default=0)


class QuerySchema(ma.Schema):
    dry_run = ma.fields.Boolean(load_default=False)


class BodySchema(ma.Schema):
    card = ma.fields.String(required=True, validate=ma.validate.Length(equal=2))


def _app(blueprint_class: type[Blueprint]) -> tuple[Flask, list[str]]:
    """An app whose one route takes headers, a query and a body (the moves endpoint's
    shape), with ``blueprint_class``; the locations its parser read, in order."""
    app = Flask("arguments")
    app.config.update(API_TITLE="t", API_VERSION="1", OPENAPI_VERSION="3.1.0")
    api = Api(app)
    blp = blueprint_class("things", __name__, url_prefix="/v1")
    parsed: list[str] = []
    parser = blp.ARGUMENTS_PARSER
    original = parser.parse

    def parse(*args: Any, **kwargs: Any) -> Any:
        parsed.append(kwargs["location"])
        return original(*args, **kwargs)

    parser.parse = parse  # type: ignore[method-assign]

    @blp.route("/things/<thing_id>")
    class Thing(MethodView):
        @blp.arguments(HeadersSchema, location="headers", as_kwargs=True)
        @blp.arguments(QuerySchema, location="query", as_kwargs=True)
        @blp.arguments(BodySchema)
        @blp.response(200)
        def post(self, body: dict[str, Any], thing_id: str, dry_run: bool,
                 token: str | None, level: int) -> Response:
            return jsonify(body=body, thing_id=thing_id, dry_run=dry_run, token=token,
                           level=level)

    api.register_blueprint(blp)
    return app, parsed


@pytest.fixture(autouse=True)
def _own_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each app's parser patched on an instance of its own (the classes share one)."""
    for cls in (Reference, ApiBlueprint):
        monkeypatch.setattr(cls, "ARGUMENTS_PARSER", type(cls.ARGUMENTS_PARSER)())


def test_one_wrapper_parses_every_argument_in_webargs_order() -> None:
    app, parsed = _app(ApiBlueprint)
    view = app.view_functions["things.Thing"].view_class.post  # type: ignore[attr-defined]
    assert not hasattr(view.__wrapped__, "__wrapped__")  # one wrapper around the function
    reply = app.test_client().post("/v1/things/t1?dry_run=true", json={"card": "5H"},
                                   headers={"X-Token": "abc", "X-Level": "3"})
    assert reply.status_code == 200, reply.get_data()
    assert reply.get_json() == {"body": {"card": "5H"}, "thing_id": "t1", "dry_run": True,
                                "token": "abc", "level": 3}
    assert parsed == ["headers", "query", "json"]


@pytest.mark.parametrize("headers, query, body", [
    ({"X-Level": "high"}, "dry_run=maybe", {"card": "10H"}),  # every one bad
    ({}, "dry_run=maybe", {"card": "10H"}),
    ({}, "", {"card": "10H"}),
    ({}, "", {}),
])
def test_the_errors_are_flask_smorests(headers: dict[str, str], query: str,
                                       body: dict[str, Any]) -> None:
    """The same status and message as flask-smorest's own wrappers give, from the first
    location that fails, the locations read in the same order."""
    answers = []
    for blueprint_class in (Reference, ApiBlueprint):
        app, parsed = _app(blueprint_class)
        reply = app.test_client().post(f"/v1/things/t1?{query}", json=body, headers=headers)
        answers.append((reply.status_code, reply.get_json(), parsed))
    assert answers[0][0] == 400
    assert answers[1] == answers[0]


def test_the_openapi_document_is_flask_smorests() -> None:
    specs = []
    for blueprint_class in (Reference, ApiBlueprint):
        app, _ = _app(blueprint_class)
        with app.app_context():
            specs.append(app.extensions["flask-smorest"]["apis"][""]["ext_obj"].spec.to_dict())
    operation = specs[1]["paths"]["/v1/things/{thing_id}"]["post"]
    assert {p["name"] for p in operation["parameters"]} == {"X-Token", "X-Level", "dry_run"}
    assert "requestBody" in operation
    assert specs[1] == specs[0]


def test_arg_name_is_refused_when_the_view_is_declared() -> None:
    blp = ApiBlueprint("things", __name__)
    with pytest.raises(TypeError, match="arg_name"):
        blp.arguments(BodySchema, arg_name="body")
