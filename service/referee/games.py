"""The referee's use cases: create a game, show it, list its legal moves, read and verify its
log, play a move.

:class:`Referee` joins the pure rules engine (:mod:`service.rules`) to the store
(:mod:`service.store`): it loads a game's document (:mod:`.documents`) or takes the state
this process holds of it (:class:`~.held.HeldStates`), authenticates the seat, asks the
engine, and commits the new state with one compare-and-set, counting the caller's rate
limits in the same round trip (:mod:`.meter`). It knows nothing of HTTP; it raises
:class:`~.errors.RefereeError` subclasses that the HTTP layer maps to statuses.

Tokens are ``<game_id>.<seat>.<secret>``; only their hashes are stored.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from service import answers
from service.numbers import natural
from service.rules import GameState, Move, Violation, apply, move_to_dict, new_game
from service.rules.legal import legal_moves
from service.rules.verify import verify as verify_log
from service.rules.views import dry_run_answer, public_view, redact_event, seat_view
from service.store import (
    GameNotFound,
    GameStore,
    IdempotentReplay,
    Loaded,
    StoreCorrupted,
    StoreError,
    VersionConflict,
)

from .documents import decode as _decode
from .documents import document, holds, holds_hash, token_hash
from .documents import encode as _encode
from .documents import extras as _extras
from .errors import Contention, Forbidden, KeyReused, StaleVersion, Unauthorized, UnknownGame
from .held import HeldStates
from .meter import UNMETERED, Meter

LOG_ONLY_EVENTS = frozenset({"deal_revealed"})
"""Events kept for the move log only: a finished hand's revealed deal is for auditing
(``GET …/events``, ``…/verify``), not part of a move's answer."""

HAND_END = "hand_end"
"""The event of a move that ends a hand: the log so far is archived after it
(:meth:`GameStore.archive`: one compressed chunk per hand, read back by the log and verify
as before), so that a long match's log takes little memory."""

MAX_ATTEMPTS = 8
"""Compare-and-set attempts for a move without ``If-Match`` before giving up (503)."""

VERIFY_CACHE = "verify"
"""The name ``GET …/verify``'s report is cached under beside its game, for one version."""


def new_game_id() -> str:
    return secrets.token_urlsafe(9)


def _clocked(state: GameState) -> bool:
    """Whether the game has a turn clock (knob ``clock``, C-CLOCK)."""
    return state.rules.get("clock") is not None


@dataclass(frozen=True)
class Answer:
    """A view or move answer: the body and the version it shows."""

    body: dict[str, Any]
    version: int
    replayed: bool = False
    raw: bytes | None = None
    """The stored bytes of a replayed answer (returned byte for byte)."""


def redacted_entry(record: Mapping[str, Any], viewer: int | None) -> dict[str, Any]:
    """A log record as ``viewer`` (a seat, or None for the public) may see it (``record``
    itself unchanged: the live hub hands one record to many watchers)."""
    return {**record, "events": [redact_event(e, viewer) for e in record["events"]]}


def live_facts(view: Mapping[str, Any]) -> dict[str, Any]:
    """What a log entry and a move's answer tell of the game after it (docs/api.md, "Live
    tables"): its ``version``, ``status`` and ``turn``, as ``view`` (a view of the game
    then) shows them."""
    return {"version": view["version"], "status": view["status"], "turn": view["turn"]}


class Referee:
    """Use cases over one :class:`GameStore`."""

    def __init__(self, store: GameStore, held: HeldStates | None = None) -> None:
        self.store = store
        self.held = held if held is not None else HeldStates()

    # -- games -------------------------------------------------------------------------

    def create(self, variant: str, players: Sequence[str], rules: Mapping[str, Any] | None,
               dealer: int | None, deals: Sequence[Mapping[str, Any]] | None) -> Answer:
        """Create a game (raises engine ``SetupError`` / ``RulesError`` for bad input)."""
        game_id = new_game_id()
        now = None
        if rules and rules.get("clock") is not None:  # the first turn's clock starts now
            now = self.store.now_ms(game_id)
        state, _events = new_game(variant, players, rules, dealer, deals, now=now)
        tokens = [f"{game_id}.{seat}.{secrets.token_urlsafe(24)}" for seat in range(len(players))]
        self.store.create(game_id, _encode(document(state, [token_hash(t) for t in tokens])))
        body = {
            "game_id": game_id,
            "seats": [{"seat": i, "name": name, "token": tokens[i]}
                      for i, name in enumerate(players)],
            "game": public_view(state, game_id, 0, now),
        }
        return Answer(body, 0)

    def _fetch(self, game_id: str, scope: str | None = None, meter: Meter | None = None,
               held: int | None = None, timed: bool = False) -> Loaded:
        counting = UNMETERED if meter is None else meter
        try:
            loaded = self.store.load(game_id, scope, counting.windows(), held, timed)
        except GameNotFound as missing:
            counting.counted(missing.counts)
            raise UnknownGame(game_id) from None
        except ValueError:  # not a possible game id
            raise UnknownGame(game_id) from None
        counting.counted(loaded.counts)
        return loaded

    def _load(self, game_id: str, scope: str | None = None, meter: Meter | None = None
              ) -> tuple[Loaded, dict[str, Any]]:
        loaded = self._fetch(game_id, scope, meter)
        assert loaded.state is not None
        return loaded, _decode(loaded.state)

    def _current(self, game_id: str, scope: str | None = None, meter: Meter | None = None
                 ) -> tuple[Loaded, list[str], GameState, dict[str, Any]]:
        """The game as stored now: what its load read, its seats' token hashes, its state and
        its document's other parts. One round trip; when this process holds the state of the
        version stored (:class:`HeldStates`), Redis does not send it and it is not decoded
        again; else the stored one is decoded, and held."""
        held = self.held.get(game_id)
        loaded = self._fetch(game_id, scope, meter, held[0] if held is not None else None,
                             timed=held is not None and _clocked(held[2]))
        if loaded.state is None and held is not None:  # still at the version held
            return loaded, held[1], held[2], held[3]
        assert loaded.state is not None
        doc = _decode(loaded.state)
        return loaded, doc["tokens"], self._hold(game_id, loaded.version, doc), _extras(doc)

    def _hold(self, game_id: str, version: int, doc: Mapping[str, Any]) -> GameState:
        """The state of a stored document at ``version``, held for the game's next move or read."""
        state = GameState.from_dict(doc["state"])
        self.held.put(game_id, version, doc["tokens"], state, _extras(doc))
        return state

    def _now(self, game_id: str, state: GameState, loaded: int | None) -> int | None:
        """The store's clock for a game with a turn clock (as ``loaded`` read it in the
        round trip that loaded the game, else asked now); None for a game without one,
        which pays nothing for it."""
        if not _clocked(state):
            return None
        return loaded if loaded is not None else self.store.now_ms(game_id)

    def public(self, game_id: str) -> Answer:
        loaded, _, state, _ = self._current(game_id)
        now = self._now(game_id, state, loaded.now_ms)
        return Answer(public_view(state, game_id, loaded.version, now), loaded.version)

    def seat(self, game_id: str, token: str | None, meter: Meter | None = None) -> Answer:
        loaded, tokens, state, _ = self._current(game_id, meter=meter)
        seat = self._authenticate(game_id, {"tokens": tokens}, token)
        now = self._now(game_id, state, loaded.now_ms)
        return Answer(seat_view(state, game_id, loaded.version, seat, now), loaded.version)

    # -- auth ----------------------------------------------------------------------------

    def _token_seat(self, token: str | None) -> tuple[str, int]:
        """The game and seat a token claims (not yet verified)."""
        if not token:
            raise Unauthorized("a seat token is required: Authorization: Bearer <token>")
        parts = token.split(".")
        seat = natural(parts[1], max_digits=2) if len(parts) == 3 else None
        if seat is None:
            raise Unauthorized("malformed seat token")
        return parts[0], seat

    def _authenticate(self, game_id: str, doc: Mapping[str, Any], token: str | None) -> int:
        """The seat ``token`` belongs to; raise :class:`Unauthorized` / :class:`Forbidden`."""
        token_game, seat = self._token_seat(token)
        assert token is not None
        if token_game != game_id:
            if self._valid_elsewhere(token_game, seat, token):
                raise Forbidden("this token belongs to another game")
            raise Unauthorized("unknown seat token")
        if not holds(doc, seat, token):
            raise Unauthorized("unknown seat token")
        return seat

    def _valid_elsewhere(self, game_id: str, seat: int, token: str) -> bool:
        try:
            _, doc = self._load(game_id)
        except UnknownGame:
            return False
        return holds(doc, seat, token)

    # -- bots and the move log -------------------------------------------------------------

    def legal(self, game_id: str, token: str | None, limit: int,
              meter: Meter | None = None) -> Answer:
        """Every legal move of the token's seat now (``rules.legal``)."""
        loaded, tokens, state, _ = self._current(game_id, meter=meter)
        seat = self._authenticate(game_id, {"tokens": tokens}, token)
        now = self._now(game_id, state, loaded.now_ms)
        body = legal_moves(state, seat, limit, now).as_dict()
        body["version"] = loaded.version
        return Answer(body, loaded.version)

    def viewer(self, game_id: str, token: str | None) -> int | None:
        """The seat a (verified) token belongs to, or None for the public."""
        if token is None:
            self._load(game_id)  # 404 for an unknown game
            return None
        _, doc = self._load(game_id)
        return self._authenticate(game_id, doc, token)

    def holder_version(self, game_id: str, seat: int, digest: str) -> int | None:
        """The game's version now if ``digest`` (a token's hash) is ``seat``'s token hash
        in its current document, else None: the token was rotated, or its seat opened
        again by the host (:mod:`.lobby`). An open stream of a seat and a stream ticket,
        checked when issued, ask this again before they show the seat anything later
        (:class:`UnknownGame` for a game gone)."""
        loaded, doc = self._load(game_id)
        return loaded.version if holds_hash(doc, seat, digest) else None

    def events(self, game_id: str, viewer: int | None, after: int,
               limit: int | None) -> list[dict[str, Any]]:
        """Log entries after version ``after``, redacted for ``viewer``."""
        try:
            records = self.store.log(game_id, after, limit)
        except GameNotFound:
            raise UnknownGame(game_id) from None
        return [redacted_entry(json.loads(raw), viewer) for _version, raw in records]

    def verify(self, game_id: str, before_replay: Callable[[], None] | None = None
               ) -> dict[str, Any]:
        """Replay the game's log through the engine and check its deal commitments.

        The report can only change with the game's version, so it is cached beside the game
        for that version (:data:`VERIFY_CACHE`): asked again before the next move, it is
        answered from Redis without a replay, by any worker. ``before_replay`` is called
        before a replay, never for a cached report (a cost limit raises there)."""
        try:
            cached = self.store.cached(game_id, VERIFY_CACHE)
        except (GameNotFound, ValueError):  # no such game, or not a possible game id
            raise UnknownGame(game_id) from None
        if cached.value is not None:
            report: dict[str, Any] = _decode(cached.value)
            return report
        if before_replay is not None:
            before_replay()
        loaded, doc = self._load(game_id)
        state = self._hold(game_id, loaded.version, doc)
        try:
            records = self.store.log(game_id, 0, loaded.version)
        except GameNotFound:
            raise UnknownGame(game_id) from None
        moves = [entry for entry in map(json.loads, (raw for _, raw in records))
                 if entry["move"] is not None]  # not the lobby's entries (service.referee.lobby)
        report = verify_log(state, moves).as_dict()
        report["game_id"] = game_id
        report["version"] = loaded.version
        with contextlib.suppress(StoreError):  # a report that cannot be kept is still given
            self.store.cache(game_id, VERIFY_CACHE, loaded.version, _encode(report))
        return report

    # -- moves ---------------------------------------------------------------------------

    def play(self, game_id: str, token: str | None, move: Move, *,
             if_match: int | None = None, idempotency_key: str | None = None,
             fingerprint: str = "", dry_run: bool = False, meter: Meter | None = None
             ) -> Answer:
        """Apply ``move`` for the token's seat; raise ``Violation`` when it is illegal.

        Without ``if_match`` the move applies to whatever version is current (retrying the
        compare-and-set a few times under contention). With an ``idempotency_key`` a
        repeated request returns the first answer and applies nothing twice. ``meter`` is
        counted by the first store call only.

        When this process holds the game's state (:class:`HeldStates`), the move is applied
        to it and committed at once: one round trip, the compare-and-set telling whether
        the state held was still the current one. If it was not, the commit answers with
        the current state and the move is applied again to that. A move the held state
        refuses is checked again against the stored state before it is refused.
        """
        _, claimed_seat = self._token_seat(token)
        scope = None
        if idempotency_key is not None and not dry_run:
            scope = f"{claimed_seat}:{idempotency_key}"
        pending = UNMETERED if meter is None else meter  # counted by the next store call
        candidate = None if dry_run else self.held.get(game_id)
        for _attempt in range(MAX_ATTEMPTS):
            now = None
            if candidate is not None and if_match in (None, candidate[0]) \
                    and not _clocked(candidate[2]):  # a clock needs the store's time: load
                fresh = False
                version, tokens, state, extras = candidate
            else:
                fresh = True
                loaded, tokens, state, extras = self._current(game_id, scope, pending)
                pending = UNMETERED
                version = loaded.version
                now = self._now(game_id, state, loaded.now_ms)
            candidate = None
            try:
                seat = self._authenticate(game_id, {"tokens": tokens}, token)
            except Unauthorized:
                if not fresh:
                    continue  # refused by the stored game only, as a move is
                raise
            if fresh:
                if loaded.idempotency is not None:
                    record = loaded.idempotency
                    return self._replay(record.fingerprint, record.response, fingerprint)
                if if_match is not None and if_match != version:
                    raise StaleVersion(if_match, version)
            try:
                new_state, events = apply(state, seat, move, now=now)
            except Violation as refusal:
                if not fresh:
                    continue  # the held state may be behind: ask the stored one
                refusal.variant = state.variant  # type: ignore[attr-defined]  # for metrics
                raise
            if dry_run:  # what the seat may know before the move (views.dry_run_answer)
                shown = dry_run_answer(state, new_state, events, game_id, version, seat, now)
                shown.update(live_facts(shown["game"]))  # the game's as it is: nothing applied
                return Answer(shown, int(shown["game"]["version"]))
            view = seat_view(new_state, game_id, version + 1, seat, now)
            facts = live_facts(view)
            body = {"game": view,
                    "events": [redact_event(e, seat) for e in events
                               if e["type"] not in LOG_ONLY_EVENTS], **facts}
            response = _encode(body)
            new_doc = {**extras, "state": new_state.to_compact(), "tokens": tokens}
            entry: dict[str, Any] = {"version": version + 1, "seat": seat,
                                     "move": move_to_dict(move), "events": events, **facts}
            if now is not None:
                entry["now"] = now  # the time the engine was given, for a replay (verify)
            log_record = _encode(entry)
            idem = ((scope, fingerprint, answers.pack(response, new_state.variant))
                    if scope is not None else None)
            counting, pending = pending, UNMETERED
            try:
                self.store.commit(
                    game_id, expected_version=version, state=_encode(new_doc),
                    log_record=log_record, idempotency=idem, windows=counting.windows(),
                    limits=counting.limits(), counted=counting.counted, conflict_state=True)
            except VersionConflict as conflict:
                if if_match is not None:
                    raise StaleVersion(if_match, conflict.current) from None
                if conflict.state is not None:
                    doc = _decode(conflict.state)
                    candidate = (conflict.current, doc["tokens"],
                                 self._hold(game_id, conflict.current, doc), _extras(doc))
                continue
            except IdempotentReplay as replay:
                return self._replay(replay.record.fingerprint, replay.record.response,
                                    fingerprint)
            except GameNotFound:
                self.held.drop(game_id)
                raise UnknownGame(game_id) from None
            self.held.put(game_id, version + 1, tokens, new_state, extras)
            if any(e["type"] == HAND_END for e in events):
                with contextlib.suppress(StoreError):  # else archived at the next hand's end
                    self.store.archive(game_id)
            return Answer(body, version + 1, raw=response)
        raise Contention.busy(game_id)

    @staticmethod
    def _replay(stored_fingerprint: str, stored: bytes, fingerprint: str) -> Answer:
        """The first answer of a key (kept compressed: :mod:`service.answers`)."""
        if not hmac.compare_digest(stored_fingerprint, fingerprint):
            raise KeyReused("this Idempotency-Key was already used with another request")
        try:
            response = answers.unpack(stored)
        except ValueError as exc:
            raise StoreCorrupted(f"an idempotency record's answer: {exc}") from None
        body = _decode(response)
        return Answer(body, int(body["game"]["version"]), replayed=True, raw=response)
