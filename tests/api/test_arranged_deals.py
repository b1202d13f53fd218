"""``RUMMY_ARRANGED_DEALS`` (issue 41, item 8): an operator may refuse games created with an
arranged deal (``deals`` in ``POST /v1/games``), whose creator knows every hand and the
stock. ``allow`` (the default) takes them; ``forbid`` answers 403 naming ``deals`` and
creates nothing. Through the Flask test client on the real Redis."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from service.app import create_app
from service.config import ConfigError, Settings
from tests.support.basic_game import A_HANDS
from tests.support.deals import arranged
from tests.support.redis_servers import key_count


def body(**fields: Any) -> dict[str, Any]:
    return {"variant": "basic", "players": ["Ana", "Bo"], **fields}


def client_of(redis_url: str, **settings: Any) -> FlaskClient:
    return create_app(Settings(redis_url=redis_url, rate_limits=(), create_rate_limits=(),
                               **settings)).test_client()


def test_arranged_deals_are_allowed_by_default(client: FlaskClient) -> None:
    assert Settings().arranged_deals == "allow"
    resp = client.post("/v1/games", json=body(deals=[arranged(A_HANDS, "5C")]))
    assert resp.status_code == 201, resp.get_data(as_text=True)
    assert resp.get_json()["game"]["arranged"] is True


def test_a_server_that_forbids_arranged_deals_refuses_them_with_403(redis_url: str) -> None:
    client = client_of(redis_url, arranged_deals="forbid")
    before = key_count(redis_url)
    resp = client.post("/v1/games", json=body(deals=[arranged(A_HANDS, "5C")]))
    assert resp.status_code == 403, resp.get_data(as_text=True)
    assert resp.mimetype == "application/problem+json"
    problem = resp.get_json()
    assert problem["code"] == "ARRANGED_DEALS_FORBIDDEN"
    assert problem["type"].endswith("/arranged-deals-forbidden")
    assert [e["field"] for e in problem["errors"]] == ["deals"]
    assert "arranged deals" in problem["detail"]
    assert key_count(redis_url) == before
    # a game without one (or with an empty list) is created as before
    for fields in ({}, {"deals": []}):
        resp = client.post("/v1/games", json=body(**fields))
        assert resp.status_code == 201, resp.get_data(as_text=True)
        assert resp.get_json()["game"]["arranged"] is False


def test_a_malformed_deal_is_still_a_400_where_deals_are_forbidden(redis_url: str) -> None:
    client = client_of(redis_url, arranged_deals="forbid")
    resp = client.post("/v1/games", json=body(deals=[{"hands": "no"}]))
    assert resp.status_code == 400, resp.get_data(as_text=True)


@pytest.mark.parametrize(("text", "value"), [("allow", "allow"), ("forbid", "forbid"),
                                             (" FORBID ", "forbid"), ("", "allow"),
                                             ("closed_only", "closed_only")])
def test_the_setting_is_read_from_the_environment(text: str, value: str) -> None:
    assert Settings.from_env({"RUMMY_ARRANGED_DEALS": text}).arranged_deals == value


@pytest.mark.parametrize("text", ["no", "closed", "1"])
def test_an_unknown_value_of_the_setting_is_a_configuration_error(text: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({"RUMMY_ARRANGED_DEALS": text})
    assert "RUMMY_ARRANGED_DEALS" in str(caught.value)
    assert all(value in str(caught.value) for value in ("allow", "forbid", "closed_only"))
