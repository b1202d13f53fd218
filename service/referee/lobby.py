"""Seats for remote players: open seats, join codes, the host token, token rotation and
rematches (API.md "Seats for remote players (lobby)").

:class:`LobbyReferee` is the :class:`~.games.Referee` with these use cases. A
game created with an open seat (``None`` in ``players``) is *waiting*: its stored
document holds its setup and tokens but no engine state, ``{"lobby": {variant, rules,
players, dealer, deals}, "tokens": [<hash> | None], "host": <hash>}``. Every change to a
waiting game (a seat taken, a seat opened) is committed like a move, with one
compare-and-set on the game's version (the store's commit script), so two people taking
the last seat at once cannot both get it: the second commit finds the version moved on,
reads the game again and finds the seat taken. When the last seat is taken the game is
dealt (the engine's ``new_game``; a ``dealt`` event in the log) and plays on as any other.

Every change of a game's tokens (a join, a reopened seat, a rotated token, a rematch
claimed) moves its version on and is logged (``"move": null``): a worker holding the
game's previous state and tokens (:class:`~.held.HeldStates`) commits against
that version and so learns of the change before it accepts a token that is no longer
valid, and an open event stream of a seat, which checks its token again at each such
entry (:mod:`service.api.streams`), ends before it shows anything to a token no longer
valid. Nothing else changes a game's tokens.

Host tokens are ``<game_id>.host.<secret>``, seat tokens ``<game_id>.<seat>.<secret>``;
only their SHA-256 hashes are stored. A rematch is created with no seat token at all
(``null`` for each hash): a seat's token is made when that seat asks for the rematch, and
only its hash is written, into the rematch's document (one compare-and-set on the
rematch, logged there as ``rematch_joined``); the finished game's document holds only the
rematch's id. A rematch has no host token.

A join, a rematch or a token rotation with an ``Idempotency-Key`` keeps its answer with
the commit (the store's idempotency records, as a move's): a retry with the same key and
body gets the same seat and token again. The record's scope holds a hash of the key, not
the key, and the token in it is sealed with the key (XOR with a SHAKE-256 stream of it),
so that what Redis holds does not give the token away. A rotation's record is bound to the
token it replaced as well (:meth:`Retry.bound`): its scope is a hash of that token and the
key, and its seal needs both, so only the holder of the old token, with the same key, is
answered the new token again; any other caller finds no record and is answered as without
a key (the old token: ``401``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from service.rules import Code, GameState, new_game
from service.rules.errors import N_, Message
from service.rules.views import public_view, seat_view
from service.store import GameExists, GameNotFound, IdempotentReplay, Loaded, VersionConflict
from service.store.records import IdempotencyRecord

from . import games as _games
from .documents import decode as _decode
from .documents import encode as _encode
from .documents import token_hash as _token_hash
from .errors import Contention, Forbidden, KeyReused, RefereeError, Unauthorized, UnknownGame
from .games import MAX_ATTEMPTS, Answer, Referee, live_facts
from .meter import Meter

CODE_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
"""The join codes' letters: digits and capitals without 0, O, 1 and I (read aloud or
typed without mixing them up); 32 letters, 5 bits each."""
CODE_LENGTH = 8
"""Letters of a join code: 40 bits of entropy, written ``K7QP-M2XD``."""
HOST = "host"
"""The middle part of a host token (a seat token has the seat's number there)."""
ALIAS_PREFIX = "join-"
"""What the store's alias of a join code starts with."""
NOT_A_CODE = ("not a join code: a join code is 8 letters and digits (ASCII, without 0, O, 1 "
              "and I), as K7QP-M2XD; case, '-' and blanks do not count")
"""The detail of a join code refused for its form (no game looked up)."""
STATUS_WORDS = {"waiting": N_("waiting"), "playing": N_("playing"),
                "finished": N_("finished"), "aborted": N_("aborted")}
"""A game's ``status`` as a refusal words it (translated; ``status`` itself never is)."""


def _status(status: str) -> Message:
    return Message(STATUS_WORDS.get(status, status))


class LobbyError(RefereeError):
    """A lobby request refused: ``status``, a stable ``code`` and what is wrong (a fixed
    text of :data:`service.api.i18n.FIXED_DETAILS` or a :class:`Message`: translated)."""

    status = 409
    code = "CONFLICT"

    def __init__(self, message: str | Message, **extra: Any) -> None:
        super().__init__(message)
        self.extra = extra


class NoSuchCode(LobbyError):
    status = 404
    code = "UNKNOWN_JOIN_CODE"


class SeatTaken(LobbyError):
    status = 409
    code = "SEAT_TAKEN"


class GameStarted(LobbyError):
    """Only a waiting game allows it (reopening a seat)."""

    status = 409
    code = "GAME_STARTED"


class GameNotFinished(LobbyError):
    status = 409
    code = "GAME_NOT_FINISHED"


class AlreadyOver(LobbyError):
    """Cancelling a game that is finished or cancelled already."""

    status = 409
    code = "GAME_FINISHED"


class RematchClaimed(LobbyError):
    status = 409
    code = "REMATCH_CLAIMED"


class BadSeat(LobbyError):
    """A seat index the game does not have (400, naming the field)."""

    status = 400
    code = "MALFORMED_REQUEST"


class NotStarted(RefereeError):
    """A move or a seat's legal moves in a waiting game (422 ``GAME_NOT_STARTED``; one
    cancelled before it started: ``GAME_FINISHED``)."""

    def __init__(self, doc: Mapping[str, Any], version: int) -> None:
        if doc.get("aborted"):
            super().__init__("the game was cancelled by its host before it started")
            self.code = Code.GAME_FINISHED
        else:
            super().__init__("the game has not started: it waits for a player in every "
                             "seat")
            self.code = Code.GAME_NOT_STARTED
        self.doc = doc
        self.version = version
        """The version of the document ``doc``."""


def new_join_code() -> str:
    """A fresh join code, ``XXXX-XXXX`` (:data:`CODE_ALPHABET`, ``secrets``)."""
    letters = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
    return f"{letters[:4]}-{letters[4:]}"


def normal_code(text: str) -> str | None:
    """A join code as typed (any case, ``-`` and blanks anywhere) in its stored form, or
    None when it cannot be one."""
    letters = "".join(c for c in text if c != "-" and not c.isspace())
    if not letters.isascii():  # "ſ".upper() is "S", "８" no digit of a code: refused
        return None
    letters = letters.upper()
    if len(letters) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in letters):
        return None
    return letters


def _is_waiting(doc: Mapping[str, Any]) -> bool:
    return "lobby" in doc


def _seat_token(game_id: str, seat: int) -> str:
    return f"{game_id}.{seat}.{secrets.token_urlsafe(24)}"


def _first_dealer(doc: Mapping[str, Any], state: GameState) -> int:
    if "first_dealer" in doc:
        return int(doc["first_dealer"])
    return (state.dealer - (state.hand_number - 1)) % state.players_count


def waiting_view(doc: Mapping[str, Any], game_id: str, version: int) -> dict[str, Any]:
    """The public view of a waiting (or cancelled before it started) game: nothing dealt."""
    setup = doc["lobby"]
    players: list[str | None] = setup["players"]
    return {
        "game_id": game_id, "variant": setup["variant"], "rules": setup["rules"],
        "status": "aborted" if doc.get("aborted") else "waiting",
        "hand_number": 0, "dealer": setup["dealer"], "turn": None, "discard_only": False,
        "version": version, "stock_count": 0, "discard_top": None, "discard_count": 0,
        "seats": [{"seat": i, "name": name, "open": name is None, "hand_count": 0,
                   "opened": False, "total": 0, "out_of_match": False}
                  for i, name in enumerate(players)],
        "melds": [], "hands_played": [], "winners": None,
        "arranged": bool(setup["deals"]), "deal_commitment": None, "end": None,
    }


def _waiting_seat_view(doc: Mapping[str, Any], game_id: str, version: int,
                       seat: int) -> dict[str, Any]:
    view = waiting_view(doc, game_id, version)
    view.update(seat=seat, hand=[], taken_discard=None)
    return view


def _decorated(view: dict[str, Any], doc: Mapping[str, Any]) -> dict[str, Any]:
    """A view of a dealt game with what only the document knows: each seat's ``open``
    (never, once dealt) and, once made, the ``rematch``'s game id."""
    for seat in view["seats"]:
        seat.setdefault("open", False)
    rematch = doc.get("rematch")
    if rematch:
        view["rematch"] = rematch["game_id"]
    return view


def _lobby_record(version: int, seat: int | None, events: list[dict[str, Any]]) -> bytes:
    return _encode({"version": version, "seat": seat, "move": None, "events": events})


class Retry:
    """A join's, a rematch's or a token rotation's ``Idempotency-Key`` and the fingerprint
    of its request; ``secret`` (:meth:`bound`) binds its record to a token too."""

    def __init__(self, key: str, fingerprint: str, secret: str = "") -> None:
        self.key = key
        self.fingerprint = fingerprint
        self.secret = secret

    def bound(self, secret: str) -> Retry:
        """This key bound to ``secret`` (the token a rotation replaces): the scope is a hash
        of both and the kept token is sealed with both, so a record is found, and opened,
        only by a request with the same key and the same ``secret``."""
        return Retry(self.key, self.fingerprint, secret)

    def _material(self) -> bytes:
        if not self.secret:
            return self.key.encode()
        return self.secret.encode() + b"\n" + self.key.encode()  # no key holds a line break

    def scope(self, what: str) -> str:
        """The store's idempotency scope: ``what`` and a hash of the key (and of the token
        it is bound to; never either as it was sent)."""
        return f"{what}:{hashlib.sha256(self._material()).hexdigest()}"

    def _pad(self, size: int) -> bytes:
        return hashlib.shake_256(b"rummy-referee seat token|" + self._material()).digest(size)

    def record(self, answer: Answer) -> tuple[str, bytes]:
        """The fingerprint and the kept answer (its token sealed with the key)."""
        body = dict(answer.body)
        plain = str(body["token"]).encode()
        body["token"] = base64.urlsafe_b64encode(
            bytes(a ^ b for a, b in zip(plain, self._pad(len(plain)), strict=True))).decode()
        return self.fingerprint, _encode({"version": answer.version, "body": body})

    def replay(self, record: IdempotencyRecord) -> Answer:
        """The first answer again; :class:`KeyReused` when the request differs."""
        if not hmac.compare_digest(record.fingerprint, self.fingerprint):
            raise KeyReused("this Idempotency-Key was already used with another request")
        kept = _decode(record.response)
        body = dict(kept["body"])
        sealed = base64.urlsafe_b64decode(str(body["token"]))
        body["token"] = bytes(a ^ b for a, b in zip(sealed, self._pad(len(sealed)),
                                                    strict=True)).decode()
        return Answer(body, int(kept["version"]), replayed=True)


class LobbyReferee(Referee):
    """The referee with open seats, join codes, host tokens, rotation and rematches."""

    # -- creating ------------------------------------------------------------------------

    def create(self, variant: str, players: Sequence[str | None],
               rules: Mapping[str, Any] | None, dealer: int | None,
               deals: Sequence[Mapping[str, Any]] | None) -> Answer:
        """Create a game; open seats (``None``) make it wait for its players. The answer
        holds ``host_token``, the named seats' tokens and, with a seat open,
        ``join_code``. Raises the engine's ``SetupError`` / ``RulesError``."""
        names = [p if p is not None else f"seat {i}" for i, p in enumerate(players)]
        state, _events = new_game(variant, names, rules, dealer, deals)  # checks it all
        host = None
        now: int | None = None
        for _attempt in range(MAX_ATTEMPTS):
            game_id = _games.new_game_id()
            if None not in players and state.rules.get("clock") is not None:
                # the first turn's clock starts now, by the store's clock (C-CLOCK)
                now = self.store.now_ms(game_id)
                state, _events = new_game(variant, names, rules, state.dealer, deals, now=now)
            host = f"{game_id}.{HOST}.{secrets.token_urlsafe(24)}"
            tokens = [None if p is None else _seat_token(game_id, i)
                      for i, p in enumerate(players)]
            hashes = [None if t is None else _token_hash(t) for t in tokens]
            doc: dict[str, Any]
            if None in players:
                doc = {"lobby": {"variant": state.variant, "rules": state.rules,
                                 "players": list(players), "dealer": state.dealer,
                                 "deals": [dict(d) for d in deals or []]},
                       "tokens": hashes, "host": _token_hash(host),
                       "first_dealer": state.dealer}
            else:
                doc = {"state": state.to_compact(), "tokens": hashes,
                       "host": _token_hash(host), "first_dealer": state.dealer}
            try:
                self.store.create(game_id, _encode(doc))
            except GameExists:
                continue
            break
        else:
            raise Contention("no free game id; retry")
        assert host is not None
        body: dict[str, Any] = {
            "game_id": game_id, "host_token": host,
            "seats": [{"seat": i, "name": name, "token": tokens[i]}
                      for i, name in enumerate(players) if name is not None],
        }
        if None in players:
            body["join_code"] = self._new_code(game_id)
            body["game"] = waiting_view(doc, game_id, 0)
        else:
            body["game"] = _decorated(public_view(state, game_id, 0, now), doc)
        return Answer(body, 0)

    def _new_code(self, game_id: str) -> str:
        for _attempt in range(MAX_ATTEMPTS):
            code = new_join_code()
            if self.store.alias(ALIAS_PREFIX + code.replace("-", ""), game_id):
                return code
        raise Contention("no free join code; retry")

    # -- reading (a waiting game has no engine state) ------------------------------------

    def _hold(self, game_id: str, version: int, doc: Mapping[str, Any]) -> GameState:
        if _is_waiting(doc):
            raise NotStarted(doc, version)
        return super()._hold(game_id, version, doc)

    def public(self, game_id: str) -> Answer:
        try:
            loaded, _, state, extras = self._current(game_id)
        except NotStarted as waiting:
            return Answer(waiting_view(waiting.doc, game_id, waiting.version), waiting.version)
        now = self._now(game_id, state, loaded.now_ms)
        return Answer(_decorated(public_view(state, game_id, loaded.version, now), extras),
                      loaded.version)

    def seat(self, game_id: str, token: str | None, meter: Meter | None = None) -> Answer:
        try:
            loaded, tokens, state, extras = self._current(game_id, meter=meter)
        except NotStarted as waiting:
            seat = self._authenticate(game_id, waiting.doc, token)
            return Answer(_waiting_seat_view(waiting.doc, game_id, waiting.version, seat),
                          waiting.version)
        seat = self._authenticate(game_id, {"tokens": tokens}, token)
        now = self._now(game_id, state, loaded.now_ms)
        return Answer(_decorated(seat_view(state, game_id, loaded.version, seat, now),
                                 extras), loaded.version)

    def play(self, game_id: str, token: str | None, move: Any, **options: Any) -> Answer:
        return self._seated(game_id, token, lambda: super(LobbyReferee, self).play(
            game_id, token, move, **options))

    def legal(self, game_id: str, token: str | None, limit: int,
              meter: Meter | None = None) -> Answer:
        return self._seated(game_id, token, lambda: super(LobbyReferee, self).legal(
            game_id, token, limit, meter))

    def _seated(self, game_id: str, token: str | None, call: Callable[[], Answer]) -> Answer:
        """``call()``, a seat's request; in a waiting game the token is checked first (401 /
        403 before the 422 that the game has not started)."""
        try:
            return call()
        except NotStarted as waiting:
            self._authenticate(game_id, waiting.doc, token)
            raise

    def verify(self, game_id: str, before_replay: Any = None) -> dict[str, Any]:
        try:
            return super().verify(game_id, before_replay)
        except NotStarted:  # nothing dealt, no move made: nothing to replay yet
            return {"verified": True, "hands_verified": 0, "moves_replayed": 0,
                    "moves_pending": 0, "problems": [], "game_id": game_id,
                    "version": self._fetch(game_id).version}

    # -- tokens ---------------------------------------------------------------------------

    def _token_seat(self, token: str | None) -> tuple[str, int]:
        """The game and seat a seat token claims. A token shaped as a host token is
        :class:`Forbidden` only when it is the host token of the game it names (that game
        is read to tell); a made-up one is an unknown token (:class:`Unauthorized`), as a
        made-up seat token is."""
        parts = (token or "").split(".")
        if len(parts) == 3 and parts[1] == HOST:
            assert token is not None
            if self._hosts(parts[0], token):
                raise Forbidden("this is a host token: it manages the game and sees no hand; "
                                "a seat's own token is needed here")
            raise Unauthorized("unknown seat token")
        return super()._token_seat(token)

    def _host(self, game_id: str, doc: Mapping[str, Any], token: str | None) -> None:
        """Check that ``token`` is the game's host token (401 / 403 otherwise)."""
        if not token:
            raise Unauthorized("the host token is required: Authorization: Bearer <host_token>")
        parts = token.split(".")
        if len(parts) != 3:
            raise Unauthorized("malformed host token")
        if parts[1] != HOST:
            raise Forbidden("this is a seat token: only the host token (from POST /v1/games) "
                            "manages the game")
        if parts[0] != game_id:
            raise Forbidden("this host token belongs to another game") if self._hosts(
                parts[0], token) else Unauthorized("unknown host token")
        stored = doc.get("host")
        if not isinstance(stored, str):
            raise Forbidden("this game was created without a host token")
        if not hmac.compare_digest(stored, _token_hash(token)):
            raise Unauthorized("unknown host token")

    def _hosts(self, game_id: str, token: str) -> bool:
        try:
            _, doc = self._load(game_id)
        except UnknownGame:
            return False
        stored = doc.get("host")
        return isinstance(stored, str) and hmac.compare_digest(stored, _token_hash(token))

    def _commit(self, game_id: str, version: int, doc: Mapping[str, Any],
                record: bytes, kept: tuple[str, str, bytes] | None = None) -> bool:
        """Write ``doc`` as the game's next version: False when it moved on meanwhile.
        ``kept``: an idempotency record (scope, fingerprint, answer) to store with it
        (``IdempotentReplay`` when the scope has one already)."""
        view = (waiting_view(doc, game_id, version + 1) if _is_waiting(doc)
                else public_view(GameState.from_dict(doc["state"]), game_id, version + 1))
        record = _encode({**_decode(record), **live_facts(view)})
        try:
            self.store.commit(game_id, expected_version=version, state=_encode(doc),
                              log_record=record, idempotency=kept)
        except VersionConflict:
            return False
        except GameNotFound:
            self.held.drop(game_id)
            raise UnknownGame(game_id) from None
        if not _is_waiting(doc):
            self._hold(game_id, version + 1, doc)
        return True

    def rotate(self, game_id: str, token: str | None, retry: Retry | None = None) -> Answer:
        """Replace the token's seat's token: the answer holds the new one; the old one is
        refused from then on (by every worker: the version moves on). With ``retry`` (an
        ``Idempotency-Key``) the answer is kept, bound to the old token: the same old token
        with the same key is answered it again (the old token no longer opens anything
        else), any other request as without a key."""
        self._token_seat(token)  # 401 / 403 before anything is looked up
        assert token is not None
        bound = retry.bound(token) if retry is not None else None
        scope = bound.scope("rotate") if bound is not None else None
        for _attempt in range(MAX_ATTEMPTS):
            loaded, doc = self._load(game_id, scope)
            if bound is not None and loaded.idempotency is not None:
                return bound.replay(loaded.idempotency)
            seat = self._authenticate(game_id, doc, token)
            fresh = _seat_token(game_id, seat)
            tokens = list(doc["tokens"])
            tokens[seat] = _token_hash(fresh)
            new_doc = {**doc, "tokens": tokens}
            record = _lobby_record(loaded.version + 1, seat,
                                   [{"type": "token_rotated", "seat": seat}])
            done = self._commit_answer(
                game_id, loaded.version, new_doc, record,
                Answer({"game_id": game_id, "seat": seat, "token": fresh}, loaded.version + 1),
                scope, bound)
            if done is not None:
                return done
        raise Contention.busy(game_id)

    # -- joining ----------------------------------------------------------------------------

    def _code_game(self, code: str) -> str:
        """The game id join code ``code`` names (as typed); raise :class:`NoSuchCode`
        (naming the field ``code`` when it cannot be a join code at all)."""
        letters = normal_code(code)
        if letters is None:
            raise NoSuchCode(NOT_A_CODE, errors=[{"field": "code", "message": NOT_A_CODE}])
        game_id = self.store.resolve(ALIAS_PREFIX + letters)
        if game_id is None:
            raise NoSuchCode("no game has this join code")
        return game_id

    def _waiting(self, game_id: str, scope: str | None = None
                 ) -> tuple[Loaded, dict[str, Any]]:
        """A game a join code names, loaded while it still waits for players; raise
        :class:`NoSuchCode` when it is gone, :class:`SeatTaken` when it has started, ended
        or been cancelled (unless ``scope``, an idempotency scope, has a record: the
        retry of a join that was made)."""
        try:
            loaded, doc = self._load(game_id, scope)
        except UnknownGame:
            raise NoSuchCode("no game has this join code (any longer)") from None
        if loaded.idempotency is not None:
            return loaded, doc
        if doc.get("aborted"):
            raise SeatTaken("the game was cancelled by its host: no seat is open")
        if not _is_waiting(doc):
            status = GameState.from_dict(doc["state"]).status
            raise SeatTaken("the game has started: no seat is open" if status == "playing"
                            else Message(N_("the game is {status}: no seat is open"),
                                         {"status": _status(status)}))
        return loaded, doc

    def preview(self, code: str) -> Answer:
        """What a person is told before joining with ``code``: the waiting game's public
        view (variant, rules, who sits where, which seats are open, and ``arranged``: its
        creator may know every card of an arranged deal)."""
        game_id = self._code_game(code)
        loaded, doc = self._waiting(game_id)
        return Answer({"game_id": game_id, "game": waiting_view(doc, game_id, loaded.version)},
                      loaded.version)

    def join(self, code: str, name: str, seat: int | None = None,
             retry: Retry | None = None) -> Answer:
        """Take a seat of the waiting game of join code ``code`` (the lowest open one when
        ``seat`` is None); when it is the last open seat the game is dealt at once. With
        ``retry`` (an ``Idempotency-Key``) a repeated join answers as the first did."""
        game_id = self._code_game(code)
        scope = retry.scope("join") if retry is not None else None
        for _attempt in range(MAX_ATTEMPTS):
            loaded, doc = self._waiting(game_id, scope)
            if retry is not None and loaded.idempotency is not None:
                return retry.replay(loaded.idempotency)
            players: list[str | None] = list(doc["lobby"]["players"])
            if seat is not None and not 0 <= seat < len(players):
                raise BadSeat(Message(N_("seat: this game has seats 0 to {last}"),
                                      {"last": len(players) - 1}),
                              errors=[{"field": "seat", "message":
                                       f"not a seat of this game (0 to {len(players) - 1})"}])
            if seat is None:
                open_seats = [i for i, p in enumerate(players) if p is None]
                if not open_seats:
                    raise SeatTaken("every seat of this game is taken", game_id=game_id)
                taken = open_seats[0]
            elif players[seat] is not None:
                raise SeatTaken(Message(N_("seat {seat} is taken"), {"seat": seat}),
                                game_id=game_id, seat=seat)
            else:
                taken = seat
            token = _seat_token(game_id, taken)
            players[taken] = name
            tokens = list(doc["tokens"])
            tokens[taken] = _token_hash(token)
            version = loaded.version + 1
            events: list[dict[str, Any]] = [{"type": "seat_taken", "seat": taken,
                                             "name": name}]
            state: GameState | None = None
            now: int | None = None
            if None in players:
                new_doc: dict[str, Any] = {**doc, "lobby": {**doc["lobby"], "players": players},
                                           "tokens": tokens}
            else:
                setup = doc["lobby"]
                now = (self.store.now_ms(game_id) if setup["rules"].get("clock") is not None
                       else None)  # the first turn's clock starts as the game deals
                state, dealt = new_game(setup["variant"], [p for p in players if p is not None],
                                        setup["rules"], setup["dealer"], setup["deals"] or None,
                                        now=now)
                events.extend(dealt)
                new_doc = {key: value for key, value in doc.items() if key != "lobby"}
                new_doc.update(state=state.to_compact(), tokens=tokens)
            view = (_waiting_seat_view(new_doc, game_id, version, taken) if state is None
                    else _decorated(seat_view(state, game_id, version, taken, now), new_doc))
            answer = Answer({"game_id": game_id, "seat": taken, "token": token, "game": view},
                            version)
            done = self._commit_answer(game_id, loaded.version, new_doc,
                                       _lobby_record(version, taken, events), answer,
                                       scope, retry)
            if done is not None:
                return done
        raise Contention.busy(game_id)

    def _commit_answer(self, game_id: str, version: int, doc: Mapping[str, Any],
                       record: bytes, answer: Answer, scope: str | None,
                       retry: Retry | None) -> Answer | None:
        """:meth:`_commit`, keeping ``answer`` for a retry: ``answer`` once committed, None
        when the game moved on meanwhile, and the first answer when a retry of the same
        key committed first."""
        kept = None
        if retry is not None and scope is not None:
            kept = (scope, *retry.record(answer))
        try:
            return answer if self._commit(game_id, version, doc, record, kept) else None
        except IdempotentReplay as replay:
            assert retry is not None
            return retry.replay(replay.record)

    # -- the host -------------------------------------------------------------------------

    def cancel(self, game_id: str, token: str | None) -> Answer:
        """The host cancels a game that has not finished: ``status`` ``"aborted"``, no
        winner, every move refused."""
        for _attempt in range(MAX_ATTEMPTS):
            loaded, doc = self._load(game_id)
            self._host(game_id, doc, token)
            version = loaded.version + 1
            record = _lobby_record(version, None, [{"type": "game_cancelled"}])
            if _is_waiting(doc):
                if doc.get("aborted"):
                    raise AlreadyOver("the game is cancelled already")
                new_doc = {**doc, "aborted": True}
                if self._commit(game_id, loaded.version, new_doc, record):
                    return Answer(waiting_view(new_doc, game_id, version), version)
                continue
            state = GameState.from_dict(doc["state"])
            if state.status != "playing":
                raise AlreadyOver(Message(N_("the game is {status} already"),
                                          {"status": _status(state.status)}))
            state.status = "aborted"
            state.winners = []
            new_doc = {**doc, "state": state.to_compact()}
            if self._commit(game_id, loaded.version, new_doc, record):
                return Answer(_decorated(public_view(state, game_id, version), new_doc),
                              version)
        raise Contention.busy(game_id)

    def reopen(self, game_id: str, seat: int, token: str | None) -> Answer:
        """The host opens a seat of a waiting game again: its token stops working."""
        for _attempt in range(MAX_ATTEMPTS):
            loaded, doc = self._load(game_id)
            self._host(game_id, doc, token)
            if not _is_waiting(doc) or doc.get("aborted"):
                raise GameStarted("a seat can be opened only while the game waits for its "
                                  "players")
            players: list[str | None] = list(doc["lobby"]["players"])
            if not 0 <= seat < len(players):
                raise BadSeat(
                    Message(N_("seat: this game has seats 0 to {last}"),
                            {"last": len(players) - 1}),
                    errors=[{"field": "seat", "message": "not a seat of this game"}])
            if players[seat] is None:
                return Answer(waiting_view(doc, game_id, loaded.version), loaded.version)
            players[seat] = None
            tokens = list(doc["tokens"])
            tokens[seat] = None
            version = loaded.version + 1
            new_doc = {**doc, "lobby": {**doc["lobby"], "players": players}, "tokens": tokens}
            record = _lobby_record(version, None, [{"type": "seat_opened", "seat": seat}])
            if self._commit(game_id, loaded.version, new_doc, record):
                return Answer(waiting_view(new_doc, game_id, version), version)
        raise Contention.busy(game_id)

    # -- rematch ----------------------------------------------------------------------------

    def rematch(self, game_id: str, token: str | None, retry: Retry | None = None
                ) -> Answer:
        """The next match of a finished game, made once for every seat: same variant,
        rules and names, the first dealer one seat to the left. Each seat that asks gets
        its own token of it, once (:meth:`_claim_rematch`; with ``retry``, an
        ``Idempotency-Key``, a repeated request answers as the first did)."""
        _, claimed = self._token_seat(token)
        scope = retry.scope(f"rematch-{claimed}") if retry is not None else None
        for _attempt in range(MAX_ATTEMPTS):
            loaded, doc = self._load(game_id)
            seat = self._authenticate(game_id, doc, token)
            status = ("aborted" if doc.get("aborted") else "waiting") if _is_waiting(doc) \
                else GameState.from_dict(doc["state"]).status
            if status != "finished":
                raise GameNotFinished(Message(N_("a rematch follows a finished game; this one "
                                                 "is {status}"), {"status": _status(status)}))
            rematch = doc.get("rematch")
            if rematch is None:
                new_id = self._create_rematch(doc, GameState.from_dict(doc["state"]))
                new_doc = {**doc, "rematch": {"game_id": new_id}}
                record = _lobby_record(loaded.version + 1, seat,
                                       [{"type": "rematch", "game_id": new_id, "seat": seat}])
                if not self._commit(game_id, loaded.version, new_doc, record):
                    continue  # another seat made one meanwhile: that is the rematch (this
                    # one, which nobody can enter, expires as an unplayed game does)
                rematch = new_doc["rematch"]
            return self._claim_rematch(str(rematch["game_id"]), seat, scope, retry)
        raise Contention.busy(game_id)

    def _claim_rematch(self, new_id: str, seat: int, scope: str | None,
                       retry: Retry | None) -> Answer:
        """Seat ``seat``'s token of rematch ``new_id``, made now: its hash goes into the
        rematch's document (one compare-and-set, logged as ``rematch_joined``), with the
        answer kept for ``retry``; :class:`RematchClaimed` when the seat has one already."""
        for _attempt in range(MAX_ATTEMPTS):
            loaded, doc = self._load(new_id, scope)
            if retry is not None and loaded.idempotency is not None:
                return retry.replay(loaded.idempotency)
            tokens: list[str | None] = list(doc["tokens"])
            if tokens[seat] is not None:
                raise RematchClaimed("this seat has taken its rematch token already",
                                     game_id=new_id)
            token = _seat_token(new_id, seat)
            tokens[seat] = _token_hash(token)
            version = loaded.version + 1
            record = _lobby_record(version, seat, [{"type": "rematch_joined",
                                                    "game_id": new_id, "seat": seat}])
            done = self._commit_answer(
                new_id, loaded.version, {**doc, "tokens": tokens}, record,
                Answer({"game_id": new_id, "seat": seat, "token": token}, version),
                scope, retry)
            if done is not None:
                return done
        raise Contention.busy(new_id)

    def _create_rematch(self, doc: Mapping[str, Any], old: GameState) -> str:
        """Create the next match of ``old`` (its document ``doc``) and answer its id: no
        seat has a token of it yet (each is made as its seat asks), and with a clock its
        first turn's deadline starts now, by the store's clock."""
        n = old.players_count
        dealer = (_first_dealer(doc, old) + 1) % n
        clocked = old.rules.get("clock") is not None
        for _attempt in range(MAX_ATTEMPTS):
            new_id = _games.new_game_id()
            now = self.store.now_ms(new_id) if clocked else None
            state, _events = new_game(old.variant, old.players, old.rules, dealer, None,
                                      now=now)
            new_doc = {"state": state.to_compact(), "tokens": [None] * n,
                       "first_dealer": dealer}  # no host: its seats play it out
            try:
                self.store.create(new_id, _encode(new_doc))
            except GameExists:
                continue
            return new_id
        raise Contention("no free game id; retry")


__all__ = ["LobbyReferee", "NotStarted", "Retry", "new_join_code", "normal_code", "waiting_view"]
