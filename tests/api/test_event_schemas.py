"""Every event the engine emits, as each seat and the public see it (and as a dry run shows
it), loads with its type's schema in ``EventSchema``: the OpenAPI document's ``Event``
types hold exactly the fields the answers carry."""

from __future__ import annotations

from random import Random
from typing import Any

import pytest
from flask.testing import FlaskClient
from marshmallow import ValidationError

from service.api.schemas import EventSchema, MoveSchema
from service.rules import GameState, Violation, apply, new_game
from service.rules.legal import legal_moves
from service.rules.moves import MATCH_MOVES, Abort, ClaimTimeout, Move, Resign
from service.rules.variants import VARIANTS
from service.rules.views import PUBLIC, dry_run_answer, redact_event
from tests.support.deals import auth

KNOBS_ON = {"rummy51": {"allow_take_from_meld": True}, "dummy": {"cut_ins": True}}
"""Knobs that allow the moves of events a variant's defaults never make."""
SCHEMA = EventSchema()
MOVES = MoveSchema()


def _refused(event: dict[str, Any]) -> Any:
    try:
        SCHEMA.load(event)
    except ValidationError as exc:
        return {"event": event, "errors": exc.messages}
    return None


def _play(state: GameState, rng: Random, check: Any) -> None:
    """Random moves among those ``legal_moves`` lists for every seat (in turn or not: a
    cut-in, a resignation now and then), each loaded by ``MoveSchema`` as the HTTP path
    does, until the match ends; ``check(before, seat, move, after, events)`` after each."""
    for _ in range(1500):
        if state.status != "playing":
            return
        options = []
        for seat in range(len(state.hands)):
            listing = legal_moves(state, seat, limit=300)
            wires = [m for m in listing.moves
                     if m["type"] not in MATCH_MOVES or rng.random() < 0.002]
            if listing.compound and listing.compound.get("example"):
                wires.append(listing.compound["example"])
            options += [(seat, w) for w in wires]
        seat, wire = rng.choice(options)
        move = MOVES.load(wire)
        after, events = apply(state, seat, move, rng)
        check(state, seat, move, after, events)
        state = after


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_event_of_random_games_loads_with_its_schema(variant: str) -> None:
    seen: set[str] = set()
    wrong: list[Any] = []

    def check(events: list[dict[str, Any]], seats: int) -> None:
        for event in events:
            seen.add(event["type"])
            for viewer in (PUBLIC, *range(seats)):
                refused = _refused(redact_event(event, viewer))
                if refused is not None:
                    wrong.append(refused)

    spec = VARIANTS[variant]
    knobs = KNOBS_ON.get(variant, {})
    for game in range(4):
        rng = Random(game)
        seats = min(spec.max_players, spec.min_players + game % 2)
        players = [f"p{i}" for i in range(seats)]
        state, events = new_game(variant, players, knobs if game % 2 else {}, rng=rng)
        check(events, seats)
        # the match ended at once: aborted, or claimed on time
        check(apply(state, state.turn, Abort(), Random(0))[1], seats)
        clocked, _ = new_game(variant, players, {"clock": {"turn_seconds": 5}}, rng=rng, now=0)
        check(apply(clocked, (clocked.turn + 1) % seats, ClaimTimeout(), Random(0),
                    10**7)[1], seats)

        def on_move(before: GameState, seat: int, move: Move, after: GameState,
                    events: list[dict[str, Any]]) -> None:
            check(events, len(after.hands))
            try:  # the same move as a dry run shows it
                _, again = apply(before, seat, move, Random(0))
            except Violation:
                return
            shown = dry_run_answer(before, after, again, "g", 1, seat)["events"]
            wrong.extend(r for r in map(_refused, shown) if r is not None)

        _play(state, rng, on_move)
    assert wrong[:3] == []
    assert {"dealt", "draw", "discard", "meld", "hand_end", "game_end", "resign", "abort",
            "claim_timeout"} <= seen


LOBBY_EVENTS = {"seat_taken", "seat_opened", "token_rotated", "rematch", "rematch_joined",
                "game_cancelled"}


def test_the_lobbys_events_load_with_their_schemas(client: FlaskClient) -> None:
    """Seats taken and opened, a token rotated, a rematch made (the finished game's log)
    and joined (the rematch's log), a game cancelled: each as the log shows it."""
    def create(players: list[str | None]) -> dict[str, Any]:
        created = client.post("/v1/games", json={"variant": "basic", "players": players})
        assert created.status_code == 201, created.get_json()
        return dict(created.get_json())

    def join(code: str, name: str) -> str:
        joined = client.post("/v1/join", json={"code": code, "name": name})
        assert joined.status_code == 201, joined.get_json()
        return str(joined.get_json()["token"])

    def ok(path: str, token: str, method: str = "post") -> Any:
        resp = client.open(path, method=method.upper(), headers=auth(token))
        assert resp.status_code in (200, 201), resp.get_json()
        return resp.get_json()

    game = create(["Ana", None, None])
    gid, host, code = game["game_id"], game["host_token"], game["join_code"]
    join(code, "Bo")
    ok(f"/v1/games/{gid}/seats/1/open", host)
    join(code, "Cy")
    bo = join(code, "Bea")
    bo = ok(f"/v1/games/{gid}/me/token", bo)["token"]
    resigned = client.post(f"/v1/games/{gid}/moves", json={"type": "resign"}, headers=auth(bo))
    assert resigned.status_code == 200, resigned.get_json()
    rematch = ok(f"/v1/games/{gid}/rematch", bo)["game_id"]  # rematch, rematch_joined
    ok(f"/v1/games/{gid}/rematch", game["seats"][0]["token"])
    waiting = create(["Ana", None])
    ok(f"/v1/games/{waiting['game_id']}", waiting["host_token"], "delete")

    entries = [entry for g in (gid, waiting["game_id"], rematch)
               for entry in client.get(f"/v1/games/{g}/events").get_json()["entries"]]
    events = [e for entry in entries for e in entry["events"]]
    assert {e["type"] for e in events} >= LOBBY_EVENTS
    assert [r for r in map(_refused, events) if r is not None] == []
    # and a logged move is a Move
    assert [MOVES.load(entry["move"]) for entry in entries if entry["move"]] == [Resign()]
