"""Hidden information stays hidden, checked over many random reachable states of every
variant: at each state, every seat's and the public's every kind of answer — views (also
as long polls answer them), move answers (also with ``?include=legal_moves``), dry runs
(for the seat that moves, judged on what it could see before the move), refusals (real and
dry run), idempotent replays, legal moves, the move log (also on a stream a ticket opens)
— is compared with the true state in Redis. A card is *hidden* from a viewer when it is
in another seat's hand or in the stock and no copy of it is visible on the table, on the
discard pile, in the viewer's hand or in what was already shown openly (discards, drawn
discards, melds, a gin knocker's deadwood).

The games are random too: some wait for players in open seats, who join by the join code
(the host may open a joined seat again: the stream its removed player opened must show
nothing of the next player's hand); some have a turn clock, whose deadline a seat lets
pass (the store's clock is moved on, nothing sleeps) for another to claim the match; seats
rotate their tokens (a stream and a ticket of the old token show nothing after it); a host
cancels a game in play; a finished game goes on as its rematch."""

from __future__ import annotations

import json
import re
from collections import Counter
from random import Random
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.app import create_app
from service.config import Settings
from service.rules import GameState, Violation, apply
from service.rules.moves import MATCH_MOVES, move_to_dict
from service.store import GameStore
from tests.support.bot import choose_move
from tests.support.http_player import FlaskTransport, log_entries
from tests.support.streams import SSE, Stream

CARD = re.compile(r"^(JK|[A2-9TJQK][SHDC])$")
STEPS = {"basic": 500, "rummy51": 500, "lebanese14": 400, "dummy": 400, "wrotham": 400,
         "gin": 400}
PLAYERS = {"basic": 3, "rummy51": 3, "lebanese14": 2, "dummy": 3, "wrotham": 2, "gin": 2}
TURN_SECONDS = 60
"""The turn clock of the clocked games."""
SHOWN_OPENLY = ("discard", "meld", "lay_off", "swap_joker", "knock", "lay_out")
"""Events whose cards everyone sees (a gin knock and lay-out show the seat's deadwood)."""


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


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class Table:
    def __init__(self, client: FlaskClient, store: GameStore, variant: str, seed: int,
                 first: bool = False) -> None:
        """A random game; the ``first`` of a run waits for every player and has a clock,
        and its host opens a joined seat again."""
        self.client, self.store, self.variant = client, store, variant
        rng = Random(seed)
        count = PLAYERS[variant]
        rules: dict[str, Any] = {}
        if variant == "dummy":
            rules = {"cut_ins": True}
        if first or rng.random() < 0.4:
            rules["clock"] = {"turn_seconds": TURN_SECONDS}
        open_seats = set(range(count)) if first else {
            i for i in range(count) if rng.random() < 0.5} if rng.random() < 0.5 else set()
        players = [None if i in open_seats else f"P{i}" for i in range(count)]
        resp = client.post("/v1/games", json={
            "variant": variant, "players": players, "rules": rules,
            "dealer": rng.randrange(count)})
        assert resp.status_code == 201, resp.get_json()
        created = resp.get_json()
        self.game_id = created["game_id"]
        self.host: str | None = created["host_token"]
        self.clocked = "clock" in rules
        self.tokens: list[str] = [""] * count
        for seat in created["seats"]:
            self.tokens[seat["seat"]] = seat["token"]
        self.rng = rng
        self.seen_openly: set[str] = set()  # cards once shown to everyone
        self.answers = 0
        self.rematched = False
        self.tally: Counter[str] = Counter()  # what the table did, for the summary
        self.tally["clocked"] += self.clocked
        if open_seats:
            self.nothing(created, "the creation of a waiting game")
            self.fill(created["join_code"], open_seats, reopen=first)
        else:
            self.check(None, created, true_state(store, self.game_id), "the creation")

    @property
    def clock(self) -> GameStore:
        """The app's store, whose clock (``clock_offset_ms``) the table moves on."""
        app: Flask = self.client.application
        store: GameStore = app.extensions["referee"].store
        return store

    def auth(self, seat: int) -> dict[str, str]:
        return _bearer(self.tokens[seat])

    def nothing(self, body: Any, what: str) -> None:
        """An answer of a game not dealt yet (or no game's): no card at all."""
        self.answers += 1
        assert not cards_in(body), f"{what} shows {sorted(cards_in(body))}: {body}"

    # -- the lobby --------------------------------------------------------------------------

    def fill(self, code: str, open_seats: set[int], reopen: bool = False) -> None:
        """Players join the open seats by the join code (typed in any case, with blanks),
        some naming their seat; the host may open a joined seat again first, after its
        player opened a stream. Nothing shows a card before the deal; the last joiner sees
        its own hand only, and the removed players' streams show nothing of anyone's."""
        gid = self.game_id
        evicted: list[Stream] = []
        left = sorted(open_seats)
        while left:
            self.nothing(self.client.get(f"/v1/join/{code.lower()}").get_json(), "preview")
            self.nothing(self.client.get(f"/v1/games/{gid}").get_json(), "waiting view")
            for seat, token in enumerate(self.tokens):
                if token:
                    self.nothing(self.client.get(f"/v1/games/{gid}/me",
                                                 headers=self.auth(seat)).get_json(),
                                 "waiting seat view")
            seat = self.rng.choice(left)
            body: dict[str, Any] = {"code": " ".join(code.lower()), "name": f"J{seat}"}
            if seat != left[0] or self.rng.random() < 0.5:
                body["seat"] = seat
            resp = self.client.post("/v1/join", json=body)
            assert resp.status_code == 201, resp.get_json()
            joined = resp.get_json()
            assert joined["seat"] == seat
            self.tokens[seat] = joined["token"]
            self.tally["joined"] += 1
            left.remove(seat)
            if left and (reopen or self.rng.random() < 0.3):  # the host opens it again
                reopen = False
                evicted.append(self.seat_stream(seat))
                opened = self.client.post(f"/v1/games/{gid}/seats/{seat}/open",
                                          headers=_bearer(self.host or ""))
                assert opened.status_code == 200, opened.get_json()
                self.nothing(opened.get_json(), "a seat opened again")
                gone = self.client.get(f"/v1/games/{gid}/me", headers=self.auth(seat))
                assert gone.status_code == 401
                self.tokens[seat] = ""
                self.tally["reopened"] += 1
                left.append(seat)
                left.sort()
            elif left:
                self.nothing(joined, "a join answer")
        state = true_state(self.store, gid)
        self.check(seat, joined, state, "the last join's answer")
        for stream in evicted:  # a removed player is the public now
            shown = [f["data"] for f in self.drain(stream)]
            assert shown == [], "a removed player's stream went on"
            self.check(None, shown, state, "a removed player's stream")

    def seat_stream(self, seat: int) -> Stream:
        """The seat's stream, opened with a ticket (or its token), read up to now."""
        gid = self.game_id
        if self.rng.random() < 0.5:
            ticket = self.client.post(f"/v1/games/{gid}/stream-tickets",
                                      headers=self.auth(seat)).get_json()["ticket"]
            resp = self.client.get(f"/v1/games/{gid}/events?ticket={ticket}", headers=SSE,
                                   buffered=False)
        else:
            resp = self.client.get(f"/v1/games/{gid}/events",
                                   headers={**SSE, **self.auth(seat)}, buffered=False)
        stream = Stream(resp)
        version = self.client.get(f"/v1/games/{gid}").get_json()["version"]
        if version:
            stream.moves_until(version)
        else:
            next(stream.frames())  # "retry": the stream has started
        return stream

    @staticmethod
    def drain(stream: Stream) -> list[dict[str, Any]]:
        """The move frames the stream still sends, until it ends."""
        try:
            return [f for f in stream.frames() if f.get("event") == "move"]
        finally:
            stream.close()

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
            return self.rematch(state)
        seat = state.turn
        gid = self.game_id
        roll = self.rng.random()
        if roll < 0.015 and self.clocked:  # the mover lets its time pass (C-CLOCK)
            return self.claim_timeout(state)
        if 0.015 <= roll < 0.02 and self.host is not None:  # the host calls it off
            return self.cancel(state)
        revoked = self.rotate(state) if roll > 0.98 else None
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
            if event["type"] in SHOWN_OPENLY or (
                    event["type"] == "draw" and event["source"] == "discard"):
                self.seen_openly |= cards_in({k: v for k, v in event.items()
                                              if k not in ("private",)})
        if any(e["type"] == "dealt" for e in body["events"]):
            self.seen_openly = set()  # a new hand: what was open is shuffled back
        if revoked is not None:  # the old token's stream ended at its rotation
            stream, rotated, version = revoked
            shown = [f["data"] for f in self.drain(stream)]
            assert [e["version"] for e in shown if e["version"] >= version] == [], \
                f"seat {rotated}'s old token's stream went on past its rotation"
        return True

    def rotate(self, state: GameState) -> tuple[Stream, int, int]:
        """A seat replaces its token, while a stream of the old one is open: the answer
        shows no card; the old token, and a ticket issued with it, are refused. The stream
        (and the version it must not reach) for the move's end to check."""
        gid = self.game_id
        seat = self.rng.randrange(len(self.tokens))
        stream = self.seat_stream(seat)
        spare = self.client.post(f"/v1/games/{gid}/stream-tickets",
                                 headers=self.auth(seat)).get_json()["ticket"]
        old = self.tokens[seat]
        resp = self.client.post(f"/v1/games/{gid}/me/token", headers=self.auth(seat))
        assert resp.status_code == 200, resp.get_json()
        self.check(seat, resp.get_json(), state, "a rotated token")
        self.tokens[seat] = resp.get_json()["token"]
        self.tally["rotated"] += 1
        refused = self.client.get(f"/v1/games/{gid}/me", headers=_bearer(old))
        assert refused.status_code == 401
        self.check(seat, refused.get_json(), state, "the old token refused")
        used = self.client.get(f"/v1/games/{gid}/events?ticket={spare}", headers=SSE)
        assert used.status_code == 401, used.get_data(as_text=True)[:300]
        version: int = self.client.get(f"/v1/games/{gid}").get_json()["version"]
        return stream, seat, version

    def claim_timeout(self, state: GameState) -> bool:
        """Another seat claims the match once the mover's deadline has passed (the store's
        clock is moved past it); before that its claim is refused."""
        gid, late = self.game_id, state.turn
        seats = [s for s in range(len(self.tokens)) if s != late and not (
            state.out_of_match and state.out_of_match[s])]
        claimer = self.rng.choice(seats)
        claim = {"type": "claim_timeout"}
        early = self.client.post(f"/v1/games/{gid}/moves", json=claim,
                                 headers=self.auth(claimer))
        assert early.status_code == 422 and early.get_json()["code"] == "CLOCK_NOT_EXPIRED"
        self.check(claimer, early.get_json(), state, "an early claim")
        self.clock.clock_offset_ms += (TURN_SECONDS + 1) * 1000
        expired = self.observe_all()  # every view says the turn's time is up
        assert self.client.get(f"/v1/games/{gid}").get_json()["turn"]["expired"] is True
        answer = self.client.post(f"/v1/games/{gid}/moves", json=claim,
                                  headers=self.auth(claimer))
        assert answer.status_code == 200, answer.get_json()
        after = true_state(self.store, gid)
        assert after.status == "finished" and after.end == {"reason": "timeout", "seat": late}
        self.check_answer(claimer, answer.get_json(), expired, after, "claim_timeout")
        self.tally["claimed"] += 1
        return True

    def cancel(self, state: GameState) -> bool:
        """The host cancels the game in play: its answer, the public view, shows no hidden
        card; a rematch of it is refused."""
        gid = self.game_id
        resp = self.client.delete(f"/v1/games/{gid}", headers=_bearer(self.host or ""))
        assert resp.status_code == 200, resp.get_json()
        self.check(None, resp.get_json(), state, "the host's cancel")
        assert resp.get_json()["status"] == "aborted"
        self.tally["cancelled"] += 1
        refused = self.client.post(f"/v1/games/{gid}/rematch", headers=self.auth(0))
        assert refused.status_code == 409
        self.check(0, refused.get_json(), state, "a rematch refused")
        return True

    def rematch(self, state: GameState) -> bool:
        """A finished game may go on as its rematch: every seat asks (some with an
        Idempotency-Key, asked twice), each answer shows no card, and the table plays the
        rematch on with the seats' new tokens. False when the table is done."""
        if state.status != "finished" or self.rematched or self.rng.random() < 0.4:
            return False
        self.log_checks()
        gid = self.game_id
        tokens: list[str] = [""] * len(self.tokens)
        for seat in self.rng.sample(range(len(self.tokens)), len(self.tokens)):
            headers = self.auth(seat)
            if self.rng.random() < 0.5:
                headers["Idempotency-Key"] = f"r{self.rng.random()}"
            resp = self.client.post(f"/v1/games/{gid}/rematch", headers=headers)
            assert resp.status_code == 201, resp.get_json()
            self.check(seat, resp.get_json(), state, "a rematch answer")
            if "Idempotency-Key" in headers:
                again = self.client.post(f"/v1/games/{gid}/rematch", headers=headers)
                assert again.status_code == 201 and again.get_json() == resp.get_json()
            tokens[seat] = resp.get_json()["token"]
            new_id = resp.get_json()["game_id"]
        self.observe_all()  # the views of the finished game name the rematch
        self.game_id, self.tokens, self.host = new_id, tokens, None
        self.seen_openly, self.rematched = set(), True
        self.tally["rematched"] += 1
        return True


    def end_early(self, state: GameState) -> bool:
        """A random seat resigns (or aborts, before the first move); a timeout claimed
        without a clock, or before the deadline, is refused. No answer shows a hidden
        card."""
        gid = self.game_id
        ender = self.rng.choice([s for s in range(len(self.tokens)) if not (
            state.out_of_match and state.out_of_match[s])])
        claim = self.client.post(f"/v1/games/{gid}/moves", json={"type": "claim_timeout"},
                                 headers=self.auth(ender))
        refusals = {"CLOCK_NOT_EXPIRED", "OWN_TIMEOUT"} if self.clocked else {"NO_CLOCK"}
        assert claim.status_code == 422 and claim.get_json()["code"] in refusals, \
            claim.get_json()
        self.check(ender, claim.get_json(), state, "claim refused")
        wire = {"type": "abort" if not state.started else "resign"}
        answer = self.client.post(f"/v1/games/{gid}/moves", json=wire,
                                  headers=self.auth(ender))
        assert answer.status_code == 200, answer.get_json()
        after = true_state(self.store, gid)
        assert after.status in ("finished", "aborted") and after.end is not None
        self.check_answer(ender, answer.get_json(), state, after, wire["type"])
        return True


@pytest.fixture
def hidden_app(redis_url: str) -> Flask:
    """The app without rate limits, whose streams end within seconds (a stream that went
    on where it must not ends, and fails the test, soon)."""
    return create_app(Settings(redis_url=redis_url, rate_limits=(), create_rate_limits=(),
                               verify_rate_limits=(), join_rate_limits=(),
                               sse_max_seconds=10, sse_heartbeat_seconds=1,
                               sse_max_streams=16))


@pytest.mark.random_run
@pytest.mark.parametrize("variant", list(STEPS))
def test_no_answer_shows_a_card_its_viewer_may_not_see(hidden_app: Flask, store: GameStore,
                                                       variant: str) -> None:
    client = hidden_app.test_client()
    states = answers = games = 0
    tally: Counter[str] = Counter()
    try:
        while states < STEPS[variant]:
            table = Table(client, store, variant, seed=games + 10 * len(variant),
                          first=games == 0)
            games += 1
            while states < STEPS[variant]:
                states += 1
                if not table.step():
                    break
                if states % 50 == 0:
                    table.log_checks()
            table.log_checks()
            answers += table.answers
            tally += table.tally
    finally:
        hidden_app.extensions["referee"].store.clock_offset_ms = 0
    assert min(tally["joined"], tally["reopened"], tally["clocked"]) > 0, tally
    print(f"HIDDEN {variant}: {states} states in {games} games, {answers} answers checked,"
          f" {dict(sorted(tally.items()))}")
