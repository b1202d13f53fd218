"""An HTTP-level rummy player for the API tests: it sees only what a real client sees.

It reads the seat views (``GET …/me``: hand, turn, melds), and on its turn it draws (the
top discard when it completes a 3-card meld with two cards of its hand, else the stock),
melds any valid 3-card set or run it finds in its hand (brute force over its 3-card
combinations), lays off every card that fits a meld on the table, and otherwise discards
its highest card. Candidates are found with a small checker of its own for basic rummy
(no wilds; BASIC-SET, C-RUN with the game's ``ace`` knob), independent of the service's
engine; the referee stays the judge: a candidate it refuses with a ``422`` is skipped.

The player talks through a :class:`Transport`, so one player drives both the Flask test
client (:class:`FlaskTransport`) and a real server over HTTP (:class:`RequestsTransport`).
Every applied move is checked: ``200``, ``version`` one more than before, ``ETag`` equal
to it.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

REQUEST_TIMEOUT = 10.0
"""Seconds any one request over real HTTP may take."""


@dataclass(frozen=True)
class Reply:
    status: int
    headers: Mapping[str, str]
    raw: bytes

    @property
    def body(self) -> Any:
        return json.loads(self.raw) if self.raw else None


class Transport(Protocol):
    def request(self, method: str, path: str, *, token: str | None = None,
                body: Any = None, headers: Mapping[str, str] | None = None) -> Reply: ...


def _headers(token: str | None, headers: Mapping[str, str] | None) -> dict[str, str]:
    out = dict(headers or {})
    if token is not None:
        out["Authorization"] = f"Bearer {token}"
    return out


class FlaskTransport:
    """Requests through a Flask test client."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def request(self, method: str, path: str, *, token: str | None = None,
                body: Any = None, headers: Mapping[str, str] | None = None) -> Reply:
        kwargs: dict[str, Any] = {"method": method, "headers": _headers(token, headers)}
        if body is not None:
            kwargs["json"] = body
        resp = self.client.open(path, **kwargs)
        return Reply(resp.status_code, dict(resp.headers), resp.get_data())


def log_entries(transport: Transport, game_id: str, *, token: str | None = None,
                after: int = 0) -> list[dict[str, Any]]:
    """Every entry of a game's move log after version ``after``, page after page
    (``GET …/events`` answers at most ``limit`` entries and says ``has_more``)."""
    entries: list[dict[str, Any]] = []
    while True:
        reply = transport.request("GET", f"/v1/games/{game_id}/events?after={after}&limit=1000",
                                  token=token)
        assert reply.status == 200, reply.raw[:300]
        page = reply.body
        entries += page["entries"]
        after = page["last_version"]
        if not page["has_more"]:
            return entries


class RequestsTransport:
    """Requests over real HTTP with a ``requests.Session``; every request has a timeout.

    Like a well-behaved client, it waits out a ``429`` for the ``Retry-After`` seconds it
    names and sends the request again (a refused request changed nothing), a few times at
    most: a served match at full speed can outrun a seat's default rate limit."""

    RETRIES_AFTER_429 = 5
    """Attempts at most, for a request answered ``429``."""

    def __init__(self, base_url: str, session: Any, timeout: float = REQUEST_TIMEOUT) -> None:
        self.base_url = base_url.rstrip("/")
        self.session = session
        self.timeout = timeout
        self.waited_out = 0
        """The ``429`` answers waited out so far."""

    def request(self, method: str, path: str, *, token: str | None = None,
                body: Any = None, headers: Mapping[str, str] | None = None) -> Reply:
        for attempt in range(1, self.RETRIES_AFTER_429 + 1):
            resp = self.session.request(method, self.base_url + path, json=body,
                                        headers=_headers(token, headers), timeout=self.timeout)
            if (resp.status_code != 429 or "Retry-After" not in resp.headers
                    or attempt == self.RETRIES_AFTER_429):
                break  # answered, or the last attempt (no wait for a request not sent)
            self.waited_out += 1
            time.sleep(min(float(resp.headers["Retry-After"]), 2.0))
        return Reply(resp.status_code, dict(resp.headers), resp.content)


# ---------------------------------------------------------------------------------------

RANKS = "A23456789TJQK"


def rank(card: str) -> int:
    """1 (ace) … 13 (king)."""
    return RANKS.index(card[0]) + 1


def card_count(card: str) -> int:
    """What a card counts left in a hand under basic rummy with ``ace: low``."""
    return min(rank(card), 10)


def is_set(cards: list[str]) -> bool:
    """BASIC-SET: 3 or 4 cards of one rank (one deck: distinct suits)."""
    return (3 <= len(cards) <= 4 and len({rank(c) for c in cards}) == 1
            and len({c[1] for c in cards}) == len(cards))


def is_run(cards: list[str], ace: str) -> bool:
    """C-RUN: 3 or more consecutive cards of one suit, the ace as the ``ace`` knob says."""
    n = len(cards)
    ranks = {rank(c) for c in cards}
    if n < 3 or len({c[1] for c in cards}) != 1 or len(ranks) != n:
        return False
    if ace == "around":
        starts, last = range(1, 14), 10**6
    else:
        last = 14 if ace == "high_or_low" else 13
        starts = range(1, last - n + 2)
    return n <= 13 and any({(p - 1) % 13 + 1 for p in range(s, s + n)} == ranks
                           and s + n - 1 <= last for s in starts)


def is_meld(cards: list[str], ace: str) -> bool:
    return is_set(cards) or is_run(cards, ace)


def find_melds(hand: Iterable[str], ace: str) -> list[list[str]]:
    """Every valid 3-card meld among ``hand`` (brute force over 3-card combinations)."""
    return [list(c) for c in itertools.combinations(sorted(set(hand)), 3)
            if is_meld(list(c), ace)]


def fits(meld: Mapping[str, Any], card: str, ace: str) -> bool:
    """Whether ``card`` can be laid off on the table ``meld`` (a view's meld)."""
    cards = [*meld["cards"], card]
    return is_set(cards) if meld["kind"] == "set" else is_run(cards, ace)


class PlayError(AssertionError):
    """The referee answered something a legal-move player does not expect."""


@dataclass
class HttpPlayer:
    """Plays every seat of one game until the match is over."""

    transport: Transport
    game_id: str
    tokens: list[str]
    max_moves: int = 1500
    time_limit: float = 60.0
    moves: int = 0
    hand_ends: list[dict[str, Any]] = field(default_factory=list)
    refusals: int = 0

    @property
    def base(self) -> str:
        return f"/v1/games/{self.game_id}"

    def _get(self, path: str, token: str | None = None) -> dict[str, Any]:
        reply = self.transport.request("GET", self.base + path, token=token)
        if reply.status != 200:
            raise PlayError(f"GET {path}: {reply.status} {reply.raw[:500]!r}")
        body: dict[str, Any] = reply.body
        return body

    def public(self) -> dict[str, Any]:
        return self._get("")

    def me(self, seat: int) -> dict[str, Any]:
        return self._get("/me", self.tokens[seat])

    def _propose(self, seat: int, move: dict[str, Any], version: int) -> dict[str, Any] | None:
        """The move's answer when applied; None when refused with a 422."""
        reply = self.transport.request("POST", self.base + "/moves", token=self.tokens[seat],
                                       body=move)
        if reply.status == 422:
            self.refusals += 1
            return None
        if reply.status != 200:
            raise PlayError(f"{move}: {reply.status} {reply.raw[:500]!r}")
        answer: dict[str, Any] = reply.body
        game = answer["game"]
        if game["version"] != version + 1:
            raise PlayError(f"{move}: version {version} -> {game['version']}")
        if reply.headers.get("ETag") != f'"{game["version"]}"':
            raise PlayError(f"{move}: ETag {reply.headers.get('ETag')!r} for version "
                            f"{game['version']}")
        self.moves += 1
        self.hand_ends.extend(e for e in answer["events"] if e.get("type") == "hand_end")
        return answer

    def _candidates(self, view: dict[str, Any], taken: str | None) -> list[dict[str, Any]]:
        hand: list[str] = view["hand"]
        ace: str = view["rules"]["ace"]
        moves: list[dict[str, Any]] = []
        if view["turn"]["phase"] == "draw":
            top = view["discard_top"]
            if top is not None and find_melds([*hand, top], ace) != find_melds(hand, ace):
                moves.append({"type": "draw", "source": "discard"})
            moves.append({"type": "draw", "source": "stock"})
            return moves
        moves.extend({"type": "meld", "melds": [{"cards": m}]} for m in find_melds(hand, ace))
        for meld in view["melds"]:
            moves.extend({"type": "lay_off", "meld_id": meld["meld_id"], "cards": [card]}
                         for card in sorted(set(hand)) if fits(meld, card, ace))
        by_value = sorted(set(hand), key=lambda c: (c == taken, -card_count(c), c))
        moves.extend({"type": "discard", "card": c} for c in by_value)
        return moves

    def play_match(self) -> dict[str, Any]:
        """Play until ``status == "finished"``; return the final public view."""
        deadline = time.monotonic() + self.time_limit
        public = self.public()
        if public["variant"] != "basic":
            raise PlayError(f"this player knows basic rummy only, not {public['variant']}")
        version = public["version"]
        view: dict[str, Any] | None = None
        taken: str | None = None
        while public["status"] == "playing":
            if self.moves >= self.max_moves:
                raise PlayError(f"no end after {self.moves} moves")
            if time.monotonic() > deadline:
                raise PlayError(f"no end after {self.time_limit} s ({self.moves} moves)")
            seat = public["turn"]["seat"]
            if view is None or view["seat"] != seat:
                view = self.me(seat)
                if view["version"] != version:
                    raise PlayError(f"/me shows version {view['version']}, not {version}")
            answer = None
            for move in self._candidates(view, taken):
                answer = self._propose(seat, move, version)
                if answer is not None:
                    if move == {"type": "draw", "source": "discard"}:
                        taken = view["discard_top"]
                    elif move["type"] == "discard":
                        taken = None
                    break
            if answer is None:
                raise PlayError(f"seat {seat}: every candidate move refused; view {view}")
            view = answer["game"]
            version = view["version"]
            public = {k: view[k] for k in ("status", "turn", "version")}
            if public["status"] == "playing" and view["hand_number"] != len(self.hand_ends) + 1:
                raise PlayError(f"hand_number {view['hand_number']} after "
                                f"{len(self.hand_ends)} hand ends")
        return self.public()
