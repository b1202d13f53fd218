"""Hidden information stays hidden, checked over many random reachable states of every
variant: at each state, every seat's and the public's every kind of answer — views (also
as long polls answer them), move answers (also with ``?include=legal_moves``), dry runs
(for the seat that moves, judged on what it could see before the move), refusals (real and
dry run), idempotent replays, legal moves, the move log (also on a stream a ticket opens)
— is compared with the true state in Redis. A card is *hidden* from a viewer when it is
in another seat's hand or in the stock and no copy of it is visible on the table, on the
discard pile, in the viewer's hand or in what was already shown openly (discards, drawn
discards, melds)."""

from __future__ import annotations

import json
import re
from random import Random
from typing import Any

import pytest
from flask.testing import FlaskClient

from service.rules import GameState, Violation, apply
from service.rules.moves import MATCH_MOVES, move_to_dict
from service.store import GameStore
from tests.support.bot import choose_move
from tests.support.http_player import FlaskTransport, log_entries
from tests.support.streams import Stream

CARD = re.compile(r"^(JK|[A2-9TJQK][SHDC])$")
STEPS = {"basic": 500, "rummy51": 500, "lebanese14": 400, "dummy": 400, "wrotham": 400}


def cards_in(value: Any) -> set[str]:
    """Every string in ``value`` that is a card code (a wild's ``as`` names what it stands
    for, not a card that is shown)."""
    found: set[str] = set()
    if isinstance(value, str):
        if CARD.match(value):
            found.add(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            if k != "as":
                found |= cards_in(v)
    elif isinstance(value, list):
        for v in value:
            found |= cards_in(v)
    return found


def true_state(store: GameStore, game_id: str) -> GameState:
    doc = json.loads(store.load(game_id).state)
    return GameState.from_dict(doc["state"])


class Table:
    def __init__(self, client: FlaskClient, store: GameStore, variant: str, seed: int) -> None:
        self.client, self.store, self.variant = client, store, variant
        rng = Random(seed)
        players = {"basic": 3, "rummy51": 3, "lebanese14": 2, "dummy": 3, "wrotham": 2}
        rules: dict[str, Any] = {}
        if variant == "dummy":
            rules = {"cut_ins": True}
        created = client.post("/v1/games", json={
            "variant": variant, "players": [f"P{i}" for i in range(players[variant])],
            "rules": rules, "dealer": rng.randrange(players[variant])}).get_json()
        self.game_id = created["game_id"]
        self.tokens = [s["token"] for s in created["seats"]]
        self.rng = rng
        self.seen_openly: set[str] = set()  # cards once shown to everyone
        self.answers = 0

    def auth(self, seat: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[seat]}"}

    def check(self, viewer: int | None, body: Any, state: GameState, what: str,
              also_visible: frozenset[str] = frozenset()) -> None:
        self.answers += 1
        visible = set(self.seen_openly) | also_visible
        visible |= {c for m in state.melds for c in m.cards}
        visible |= set(state.discard)
        if viewer is not None:
            visible |= set(state.hands[viewer])
        hidden = set(state.stock)
        for seat, hand in enumerate(state.hands):
            if seat != viewer:
                hidden |= set(hand)
        leaked = (cards_in(body) & hidden) - visible
        assert not leaked, f"{what} for viewer {viewer} shows {sorted(leaked)}: {body}"

    def check_answer(self, seat: int, body: dict[str, Any], before: GameState,
                     after: GameState, what: str) -> None:
        """Events up to a new deal belong to the hand that ended (judged on the state before
        the move); the view and the new deal, to the state after it."""
        events = body["events"]
        cut = next((i for i, e in enumerate(events) if e["type"] == "dealt"), len(events))
        # the mover's cards before and after the move are its own (a card it drew, say)
        own = frozenset(before.hands[seat]) | (
            frozenset(after.hands[seat]) if cut == len(events) else frozenset())
        self.check(seat, events[:cut], before, what + " (the move)", own | frozenset(
            c for e in events[:cut] if e.get("seat") == seat and e["type"] == "draw"
            for c in cards_in(e)))
        self.check(seat, {"game": body["game"], "events": events[cut:]}, after, what)

    def check_log(self, viewer: int | None, entries: list[dict[str, Any]],
                  raw: dict[int, dict[str, Any]]) -> None:
        """The log as the viewer gets it holds no other seat's private part."""
        for entry in entries:
            self.answers += 1
            stored = raw[entry["version"]]
            for shown, event in zip(entry["events"], stored["events"], strict=True):
                assert "private" not in shown
                for seat, part in event.get("private", {}).items():
                    if viewer is None or int(seat) != viewer:
                        for key, value in part.items():
                            assert shown.get(key) != value or cards_in(value) <= (
                                self.seen_openly), (entry["version"], key)

    def observe_all(self) -> GameState:
        state = true_state(self.store, self.game_id)
        gid = self.game_id
        self.check(None, self.client.get(f"/v1/games/{gid}").get_json(), state, "public view")
        # a long poll of a version the client no longer holds answers at once
        poll = {"If-None-Match": '"999999"', "Prefer": "wait=5"}
        self.check(None, self.client.get(f"/v1/games/{gid}", headers=poll).get_json(), state,
                   "public long poll")
        for seat in range(len(self.tokens)):
            self.check(seat, self.client.get(f"/v1/games/{gid}/me",
                                             headers=self.auth(seat)).get_json(), state, "me")
            self.check(seat, self.client.get(f"/v1/games/{gid}/me", headers={
                **self.auth(seat), **poll}).get_json(), state, "seat long poll")
            self.check(seat, self.client.get(f"/v1/games/{gid}/legal-moves",
                                             headers=self.auth(seat)).get_json(), state,
                       "legal moves")
        return state

    def log_checks(self) -> None:
        records = {v: json.loads(r) for v, r in self.store.log(self.game_id)}
        transport = FlaskTransport(self.client)
        public = log_entries(transport, self.game_id)
        self.check_log(None, public, records)
        for seat in range(len(self.tokens)):
            mine = log_entries(transport, self.game_id, token=self.tokens[seat])
            self.check_log(seat, mine, records)
            if records:  # the seat's stream, opened with a ticket, shows the same log
                self.check_log(seat, self.ticket_stream(seat, max(records)), records)

    def ticket_stream(self, seat: int, last: int) -> list[dict[str, Any]]:
        """The log entries up to version ``last`` on the stream a ticket of ``seat``
        opens."""
        ticket = self.client.post(f"/v1/games/{self.game_id}/stream-tickets",
                                  headers=self.auth(seat)).get_json()["ticket"]
        stream = Stream(self.client.get(f"/v1/games/{self.game_id}/events?ticket={ticket}",
                                        headers={"Accept": "text/event-stream"},
                                        buffered=False))
        try:
            return [frame["data"] for frame in stream.moves_until(last)]
        finally:
            stream.close()

    def step(self) -> bool:
        state = self.observe_all()
        if state.status != "playing":
            return False
        seat = state.turn
        gid = self.game_id
        # a refused move answers nothing hidden either
        for other in range(len(self.tokens)):
            if other != seat:
                refused = self.client.post(f"/v1/games/{gid}/moves",
                                           json={"type": "draw", "source": "stock"},
                                           headers=self.auth(other))
                assert refused.status_code == 422
                self.check(other, refused.get_json(), state, "refusal")
                dry = self.client.post(f"/v1/games/{gid}/moves?dry_run=true",
                                       json={"type": "draw", "source": "stock"},
                                       headers=self.auth(other))
                assert dry.status_code == 422 and dry.get_json() == refused.get_json()
        if self.rng.random() < 0.02:  # a seat ends the match early (C-RESIGN, C-ABORT)
            return self.end_early(state)
        move = choose_move(state, seat, self.rng)
        try:
            apply(state, seat, move, Random(0))
        except Violation:
            # what the referee lists; when only a compound action ends the turn (the
            # opening that uses a taken discard, say), its example
            listed = self.client.get(f"/v1/games/{gid}/legal-moves",
                                     headers=self.auth(seat)).get_json()
            example = (listed["compound"] or {}).get("example")
            moves = [m for m in listed["moves"] if m["type"] not in MATCH_MOVES] + (
                [example] if example else [])  # ending the match early: end_early
            assert moves, f"seat {seat} has no legal move in {state.to_dict()}: {listed}"
            wire = self.rng.choice(moves)
        else:
            wire = move_to_dict(move)
        # a dry run shows the mover nothing it could not see before the move
        dry = self.client.post(f"/v1/games/{gid}/moves?dry_run=true", json=wire,
                               headers=self.auth(seat))
        assert dry.status_code == 200, dry.get_json()
        self.check(seat, dry.get_json(), state, "dry run")
        key = {"Idempotency-Key": f"k{self.rng.random()}"}
        include = "?include=legal_moves" if self.rng.random() < 0.3 else ""
        answer = self.client.post(f"/v1/games/{gid}/moves{include}", json=wire,
                                  headers={**self.auth(seat), **key})
        assert answer.status_code == 200, answer.get_json()
        after = true_state(self.store, gid)
        body = answer.get_json()
        if include:  # the mover's next moves: of its hand after the move
            self.check(seat, body.pop("legal_moves"), after, "the move's legal moves")
        self.check_answer(seat, body, state, after, "move answer")
        replay = self.client.post(f"/v1/games/{gid}/moves{include}", json=wire,
                                  headers={**self.auth(seat), **key})
        assert replay.get_data() == answer.get_data()
        self.check_answer(seat, {k: v for k, v in replay.get_json().items()
                                 if k != "legal_moves"}, state, after, "replay")
        for event in body["events"]:
            if event["type"] in ("discard", "meld", "lay_off", "swap_joker") or (
                    event["type"] == "draw" and event["source"] == "discard"):
                self.seen_openly |= cards_in({k: v for k, v in event.items()
                                              if k not in ("private",)})
        if any(e["type"] == "dealt" for e in body["events"]):
            self.seen_openly = set()  # a new hand: what was open is shuffled back
        return True


    def end_early(self, state: GameState) -> bool:
        """A random seat resigns (or aborts, before the first move); a timeout claimed
        without a clock is refused. No answer shows a hidden card."""
        gid = self.game_id
        ender = self.rng.randrange(len(self.tokens))
        claim = self.client.post(f"/v1/games/{gid}/moves", json={"type": "claim_timeout"},
                                 headers=self.auth(ender))
        assert claim.status_code == 422 and claim.get_json()["code"] == "NO_CLOCK"
        self.check(ender, claim.get_json(), state, "claim refused")
        wire = {"type": "abort" if not state.started else "resign"}
        answer = self.client.post(f"/v1/games/{gid}/moves", json=wire,
                                  headers=self.auth(ender))
        assert answer.status_code == 200, answer.get_json()
        after = true_state(self.store, gid)
        assert after.status in ("finished", "aborted") and after.end is not None
        self.check_answer(ender, answer.get_json(), state, after, wire["type"])
        return True


@pytest.mark.slow  # a long random run
@pytest.mark.parametrize("variant", list(STEPS))
def test_no_answer_shows_a_card_its_viewer_may_not_see(client: FlaskClient, store: GameStore,
                                                       variant: str) -> None:
    states = answers = games = 0
    while states < STEPS[variant]:
        table = Table(client, store, variant, seed=games + 10 * len(variant))
        games += 1
        while states < STEPS[variant]:
            states += 1
            if not table.step():
                break
            if states % 50 == 0:
                table.log_checks()
        table.log_checks()
        answers += table.answers
    print(f"HIDDEN {variant}: {states} states in {games} games, {answers} answers checked")
