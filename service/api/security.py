"""Abuse limits: rate limits shared by every worker (window counters in the games' Redis:
one server, the cluster or the Sentinel-managed primary, as configured) and optional API
keys for creating games.

``RUMMY_RATE_LIMITS`` applies to every endpoint, per caller; ``RUMMY_CREATE_RATE_LIMITS``
adds a limit per client address on ``POST /v1/games``. A caller over a limit gets ``429``
problem+json with ``Retry-After``. Liveness, readiness, the docs and the web table are not
limited.

What is counted when:

- A request counts against its client address, unless it carries a seat token that the
  worker serving it has verified: a token is only a claim until then, and an unknown,
  forged or malformed one (a new one on each request, say) never earns an allowance of its
  own. The address is counted in one round trip before the request is served.
- A seat token is verified, without asking Redis, against the game it names as this worker
  holds it, and once verified it is remembered (:data:`_MAX_VERIFIED` seats per worker).
  This verification only decides what the request counts against: a token replaced since
  (``POST …/me/token``) is still refused by the game itself. A worker's first request of a seat
  whose game it does not hold yet therefore counts against the address; the ones after it
  count against the seat, from any address.
- A verified seat's requests on its own game (moves, its view, its legal moves) are counted
  by the script that loads or commits the game (:class:`GameMeter`): no round trip of their
  own, so the common move is still one script call. Its other requests are counted in one
  round trip before they are served.
- A request that fails before its game is loaded (a malformed move, say) is counted when its
  answer leaves, so it still uses up the budget.

Every answer of a limited endpoint tells the caller its limits as the IETF httpapi draft
"RateLimit header fields for HTTP" (draft-ietf-httpapi-ratelimit-headers-10) defines them,
from the Redis counters the request was counted with (so every worker tells the same):
``RateLimit-Policy`` lists each limit the request counted against (``"requests";q=120;w=60``:
its quota ``q`` and window ``w`` in seconds) and ``RateLimit`` what is left of each
(``"requests";r=37;t=21``: ``r`` requests remaining for ``t`` more seconds). The policies are
named by the setting they come from (:data:`POLICY_NAMES`; ``-2``, ``-3`` … after the first
when a setting holds several limits). A ``429`` also names the limit in its body (``policy``,
``limit``) and when to retry (``retry_after`` seconds, as ``Retry-After``). An answer whose
count Redis could not make carries no ``RateLimit`` (it was not counted).

Each limit is a fixed window that starts at the caller's first request (a Redis counter
whose expiry is the window, :mod:`service.store.counters`). A worker that sees a caller over
a limit refuses that caller's requests without asking Redis until the window ends (an
address over its limit: every request of it but a verified seat's). If Redis cannot be
reached for a count, the request is let through (the game store answers 503 anyway).
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from flask import Flask, Request, Response, current_app, g, request

from service.api.context import bearer_token, current_g, current_request, header
from service.api.problems import Problem
from service.config import LIMIT_PATTERN, Settings
from service.referee.documents import token_hash
from service.rules.errors import N_, Message
from service.store import Count, GameStore, StoreError, Window

if TYPE_CHECKING:
    from service.referee import Referee

UNLIMITED = ("/healthz", "/readyz", "/docs", "/openapi.json", "/play")
"""Path prefixes no rate limit counts (and ``/``): :attr:`RateLimiter.unlimited`."""
GAME_ENDPOINTS = frozenset({"games.Moves", "games.Me", "games.LegalMoves"})
"""Endpoints whose caller is counted by the load of its own game (:class:`GameMeter`)."""
_SEAT_TOKEN = re.compile(r"^(?P<game>[A-Za-z0-9_-]{1,64})\.(?P<seat>[0-9]{1,2})\.[^.]+$")
"""A well-formed seat token: ``<game id>.<seat>.<secret>`` (ASCII digits only)."""
_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
_MAX_BLOCKED = 4096
_MAX_CALLERS = 4096
_MAX_VERIFIED = 16384
"""Seats whose tokens a worker remembers having verified (the oldest is forgotten)."""

POLICY_NAMES = {"requests": "RUMMY_RATE_LIMITS", "create": "RUMMY_CREATE_RATE_LIMITS",
                "join": "RUMMY_JOIN_RATE_LIMITS", "verify": "RUMMY_VERIFY_RATE_LIMITS",
                "streams": "RUMMY_SSE_PER_ADDRESS", "seat-streams": "RUMMY_SSE_PER_SEAT"}
"""The ``RateLimit-Policy`` names of each setting's limits."""

log = logging.getLogger("service.ratelimit")


@dataclass(frozen=True, slots=True)
class Limit:
    """``amount`` requests per ``seconds``, as configured (``text``)."""

    amount: int
    seconds: int
    text: str
    policy: str = "requests"
    """Its name in ``RateLimit-Policy`` and ``RateLimit`` (:func:`parse_limits`)."""
    header: str = field(init=False, repr=False, compare=False)
    """Its item of ``RateLimit-Policy``, written once (every counted answer names it)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "header", f'"{self.policy}";q={self.amount};w={self.seconds}')

    @classmethod
    def parse(cls, text: str, policy: str = "requests") -> Limit:
        match = LIMIT_PATTERN.match(text)
        if match is None:
            raise ValueError(f"not a rate limit: {text!r}")
        amount, count, unit = match.group("amount", "count", "unit")
        return cls(int(amount), int(count or 1) * _SECONDS[unit.lower()], text.strip(),
                   policy)


def parse_limits(texts: Sequence[str], scope: str) -> tuple[Limit, ...]:
    """The limits of one setting, named ``scope``, ``scope-2``, … (:data:`POLICY_NAMES`)."""
    return tuple(Limit.parse(text, scope if i == 0 else f"{scope}-{i + 1}")
                 for i, text in enumerate(texts))


@dataclass(frozen=True, slots=True)
class Seat:
    """The seat a bearer token claims: not to be trusted before the token is verified."""

    name: str
    """The caller name its counters go by (``seat:`` and part of the token's hash)."""
    game_id: str
    """The game the token names (its counters live in that game's hash slot)."""
    index: int
    token_hash: str
    """The token's SHA-256, as the game stores it."""
    windows: tuple[Window, ...]
    """Its counter of each ``RUMMY_RATE_LIMITS`` limit."""


@dataclass(frozen=True, slots=True)
class Caller:
    """Who a request may count against: its client address, and the seat its token claims
    (if it carries a well-formed seat token)."""

    address: str
    windows: tuple[Window, ...]
    """The address's counter of each ``RUMMY_RATE_LIMITS`` limit."""
    seat: Seat | None


def _address(req: Request) -> str:
    """The client address, fit for a Redis hash tag (no braces)."""
    return (req.remote_addr or "unknown").replace("{", "(").replace("}", ")")


def _over(counts: Sequence[Count], limits: Sequence[Limit]) -> tuple[Count, Limit] | None:
    """The first count over its limit, if any."""
    for count, limit in zip(counts, limits, strict=False):
        if count.count > limit.amount:
            return count, limit
    return None


def _seconds(millis_left: float) -> str:
    """``Retry-After``: whole seconds until the window ends (at least 1)."""
    return str(max(1, math.ceil(millis_left / 1000)))


def _too_many(limit: Limit, millis_left: float, message: str = N_(
        "rate limit exceeded ({limit}); retry after Retry-After seconds")) -> Problem:
    """429 naming the limit (``policy``, ``limit``) and when to retry (``retry_after``,
    ``Retry-After``)."""
    seconds = _seconds(millis_left)
    return Problem(429, "Too Many Requests", Message(message, {"limit": limit.text}),
                   headers={"Retry-After": seconds}, policy=limit.policy, limit=limit.text,
                   retry_after=int(seconds))


def too_many_open(policy: str, amount: int, retry_after: int, detail: str | Message
                  ) -> Problem:
    """429 for a limit on what a caller holds open at once (event streams and waiting long
    polls), shaped as every other 429: ``policy``, ``limit`` and ``retry_after`` in the body,
    ``Retry-After``, and ``RateLimit-Policy`` / ``RateLimit`` naming the limit (a quota of
    ``amount`` in the draft's unit ``concurrent-requests``, no window) with none left."""
    return Problem(429, "Too Many Requests", detail, code="TOO_MANY_STREAMS", headers={
        "Retry-After": str(retry_after),
        "RateLimit-Policy": f'"{policy}";q={amount};qu="concurrent-requests"',
        "RateLimit": f'"{policy}";r=0;t={retry_after}'},
        policy=policy, limit=f"{amount} open at once", retry_after=retry_after)


def _note(limits: Sequence[Limit], counts: Sequence[Count]) -> None:
    """Keep what the request counted for its ``RateLimit`` headers (:func:`_headers`)."""
    noted: list[tuple[Limit, int, int]] = g.setdefault("rate_noted", [])
    for limit, count in zip(limits, counts, strict=False):
        noted.append((limit, max(0, limit.amount - count.count),
                      max(0, math.ceil(count.millis_left / 1000))))


def _headers(response: Response, noted: list[tuple[Limit, int, int]] | None) -> None:
    """``RateLimit-Policy`` and ``RateLimit`` (draft-ietf-httpapi-ratelimit-headers) of
    what the request counted against (``noted``)."""
    if not noted:
        return
    # after any the answer names already (a 429 of a limit on streams open at once);
    # getlist, as get raises and catches an exception for a header the answer has not; and
    # added when it has none (setting looks through every header the answer has)
    headers = response.headers
    for name, items in (
            ("RateLimit-Policy", [limit.header for limit, _, _ in noted]),
            ("RateLimit", [f'"{limit.policy}";r={left};t={seconds}'
                           for limit, left, seconds in noted])):
        named = headers.getlist(name)
        if named:
            headers[name] = ", ".join(items + [v for v in named[:1] if v])
        else:
            headers.add(name, ", ".join(items))


class RateLimiter:
    """``RUMMY_RATE_LIMITS`` on every request and ``RUMMY_CREATE_RATE_LIMITS`` on creating
    games, counted in the store's Redis."""

    def __init__(self, store: GameStore, limits: Sequence[str],
                 create_limits: Sequence[str], verify_limits: Sequence[str] = (),
                 join_limits: Sequence[str] = ()) -> None:
        self.store = store
        self.limits = parse_limits(limits, "requests")
        self.amounts = tuple(limit.amount for limit in self.limits)
        """The most hits each limit's window allows, in the order of ``limits``."""
        self.create_limits = parse_limits(create_limits, "create")
        self.verify_limits = parse_limits(verify_limits, "verify")
        self.join_limits = parse_limits(join_limits, "join")
        self._blocked: dict[str, tuple[float, Limit]] = {}
        """Caller → (monotonic end of its window, the limit it went over), this worker."""
        self._callers: dict[tuple[str, str], Caller] = {}
        self._verified: dict[str, None] = {}
        """The seats (their names) whose tokens this worker has verified, oldest first."""
        self._verified_lock = threading.Lock()
        self.unlimited: tuple[str, ...] = UNLIMITED
        """The path prefixes this limiter does not count (an app that adds routes of its
        own may add to them)."""

    # -- the hooks ---------------------------------------------------------------------

    def before_request(self) -> None:
        if not self.limits:
            return
        req = current_request()
        path = req.path
        if path.startswith(self.unlimited) or path == "/":
            return
        caller = self._caller(req)
        seat = caller.seat
        if seat is not None and self._is_verified(seat):
            self._refuse_if_blocked(seat.name)
            if (req.endpoint in GAME_ENDPOINTS
                    and (req.view_args or {}).get("game_id") == seat.game_id):
                g.rate_meter = GameMeter(self, seat.name, seat.windows)
            else:
                self._count(seat.name, seat.windows)
            return
        self._refuse_if_blocked(caller.address)
        self._count(caller.address, caller.windows)
        if seat is not None:
            g.rate_seat = seat  # verified by the game it names, perhaps: see after_request

    def after_request(self, response: Response) -> Response:
        request_g = current_g()
        meter: GameMeter | None = request_g.get("rate_meter")
        if meter is not None and not meter.used:
            # the request ended before its game was loaded: it counts all the same (it has
            # its answer already; when over the limit, the caller's next request is refused)
            with contextlib.suppress(Problem):
                self._count(meter.name, meter.windows())
        seat: Seat | None = request_g.get("rate_seat")
        if seat is not None and self._holds(seat):
            self._remember(seat)
        _headers(response, request_g.get("rate_noted"))
        return response

    # -- callers and seats -------------------------------------------------------------

    def _caller(self, req: Request) -> Caller:
        """The request's caller (remembered by header and address: a seat sends the same
        token request after request, and hashing it each time costs)."""
        key = (header(req, "Authorization"), _address(req))
        caller = self._callers.get(key)
        if caller is None:
            if len(self._callers) >= _MAX_CALLERS:
                self._callers.clear()
            caller = self._callers[key] = self._caller_of(*key)
        return caller

    def _caller_of(self, authorization: str, address: str) -> Caller:
        name = f"addr:{address}"
        return Caller(name, tuple(self._windows(name, name, self.limits)),
                      self._seat_of(authorization))

    def _seat_of(self, authorization: str) -> Seat | None:
        """The seat a well-formed seat token in ``authorization`` (the header's value) claims
        (``<game>.<seat>.<secret>``), else None."""
        token = bearer_token(authorization)
        if token is None:
            return None
        match = _SEAT_TOKEN.match(token)
        if match is None:
            return None
        digest = token_hash(token)
        name = "seat:" + digest[:32]
        game_id = match.group("game")
        return Seat(name, game_id, int(match.group("seat")), digest,
                    tuple(self._windows(game_id, name, self.limits)))

    def _is_verified(self, seat: Seat) -> bool:
        """Whether this worker knows the seat's token to be its game's: verified by an
        earlier request, or by the game as this worker holds it."""
        if seat.name in self._verified:
            return True
        if self._holds(seat):
            self._remember(seat)
            return True
        return False

    @staticmethod
    def _holds(seat: Seat) -> bool:
        """Whether the game the seat's token names, as this worker holds it (its last
        loaded state), has that token at that seat (its stored token hashes never
        change). No Redis call."""
        referee: Referee | None = current_app.extensions.get("referee")
        held = referee.held.get(seat.game_id) if referee is not None else None
        if held is None:
            return False
        hashes = held[1]
        return seat.index < len(hashes) and hmac.compare_digest(hashes[seat.index],
                                                                seat.token_hash)

    def _remember(self, seat: Seat) -> None:
        with self._verified_lock:
            if seat.name in self._verified:
                return
            if len(self._verified) >= _MAX_VERIFIED:
                del self._verified[next(iter(self._verified))]
            self._verified[seat.name] = None

    # -- counting ----------------------------------------------------------------------

    def _windows(self, tag: str, name: str, limits: Sequence[Limit]) -> list[Window]:
        """The counters of ``limits`` for ``name``, in the hash slot of ``tag``."""
        return [Window(self.store.counter(tag, f"{name}:{i}"), limit.seconds * 1000)
                for i, limit in enumerate(limits)]

    def _hit(self, windows: Sequence[Window]) -> list[Count] | None:
        """Count a hit on ``windows`` (one round trip); None when Redis failed (the request
        is let through)."""
        try:
            return self.store.hit(windows)
        except StoreError as exc:
            log.warning("rate limit not counted: %s", type(exc).__name__)
            return None

    def _count(self, name: str, windows: Sequence[Window]) -> None:
        """Count a hit on a caller's windows (one round trip); 429 over a limit."""
        counts = self._hit(windows)
        if counts is not None:
            self.judge(counts, name)

    def judge(self, counts: Sequence[Count], caller: str) -> None:
        """429 if a count is over its limit (and the caller is refused here until then)."""
        _note(self.limits, counts)
        over = _over(counts, self.limits)
        if over is not None:
            count, limit = over
            self._block(caller, count.millis_left, limit)
            raise _too_many(limit, count.millis_left)

    def _block(self, caller: str, millis_left: int, limit: Limit) -> None:
        now = time.monotonic()
        if len(self._blocked) >= _MAX_BLOCKED:
            self._blocked = {k: v for k, v in self._blocked.items() if v[0] > now}
            if len(self._blocked) >= _MAX_BLOCKED:
                self._blocked.clear()
        self._blocked[caller] = (now + millis_left / 1000, limit)

    def _refuse_if_blocked(self, caller: str) -> None:
        blocked = self._blocked.get(caller)
        if blocked is None:
            return
        until, limit = blocked
        left = until - time.monotonic()
        if left <= 0:
            self._blocked.pop(caller, None)
            return
        _note((limit,), (Count(limit.amount + 1, math.ceil(left * 1000)),))
        raise _too_many(limit, left * 1000)

    def check_create(self) -> None:
        """``RUMMY_CREATE_RATE_LIMITS``: games created per client address (429 beyond)."""
        self._per_address("create", self.create_limits, N_(
            "at most {limit} new games per client address; retry later"))

    def check_join(self) -> None:
        """``RUMMY_JOIN_RATE_LIMITS``: attempts to join a game by its code per client
        address (429 beyond; the code is not looked at)."""
        self._per_address("join", self.join_limits, N_(
            "at most {limit} attempts to join a game per client address; retry after "
            "Retry-After seconds"))

    def check_replay(self) -> None:
        """``RUMMY_VERIFY_RATE_LIMITS``: replays of a game's log per client address (429
        beyond; nothing is replayed)."""
        self._per_address("verify", self.verify_limits, N_(
            "at most {limit} verifications that replay a game's log per client address; "
            "retry after Retry-After seconds"))

    def _per_address(self, name: str, limits: Sequence[Limit], message: str) -> None:
        """Count a hit on the client address's ``name`` windows of ``limits`` (one round
        trip); 429 with ``message`` when a count is over its limit."""
        if not limits:
            return
        address = f"addr:{_address(current_request())}"
        counts = self._hit(self._windows(address, name, limits))
        if counts is None:
            return
        _note(limits, counts)
        over = _over(counts, limits)
        if over is not None:
            count, limit = over
            raise _too_many(limit, count.millis_left, message)


class GameMeter:
    """A verified seat's request on its own game: its rate-limit windows are counted by the
    script that loads or commits the game (``GameStore.load(windows=…)``,
    ``GameStore.commit(windows=…, limits=…)``), not in a round trip of their own."""

    def __init__(self, limiter: RateLimiter, name: str, windows: tuple[Window, ...]) -> None:
        self.limiter = limiter
        self.name = name
        self._windows = windows
        self.used = False

    def windows(self) -> tuple[Window, ...]:
        return self._windows

    def limits(self) -> tuple[int, ...]:
        return self.limiter.amounts

    def counted(self, counts: Sequence[Count]) -> None:
        """The load or commit counted: 429 if the caller is over a limit (a commit over a
        limit wrote nothing)."""
        self.used = True
        self.limiter.judge(counts, self.name)


def install(app: Flask, settings: Settings, store: GameStore) -> RateLimiter | None:
    """Rate limits on ``app`` (None when every limit is off)."""
    if not (settings.rate_limits or settings.create_rate_limits
            or settings.verify_rate_limits or settings.join_rate_limits):
        return None
    limiter = RateLimiter(store, settings.rate_limits, settings.create_rate_limits,
                          settings.verify_rate_limits, settings.join_rate_limits)
    app.extensions["rate_limiter"] = limiter
    app.before_request(limiter.before_request)
    app.after_request(limiter.after_request)
    return limiter


def game_meter() -> GameMeter | None:
    """The request's :class:`GameMeter`, when its rate limits are counted with its game."""
    meter: GameMeter | None = g.get("rate_meter")
    return meter


def check_create_limit() -> None:
    """``RUMMY_CREATE_RATE_LIMITS``: games created per client address (429 beyond)."""
    limiter: RateLimiter | None = current_app.extensions.get("rate_limiter")
    if limiter is not None:
        limiter.check_create()


def check_join_limit() -> None:
    """``RUMMY_JOIN_RATE_LIMITS``: joins per client address (429 beyond)."""
    limiter: RateLimiter | None = current_app.extensions.get("rate_limiter")
    if limiter is not None:
        limiter.check_join()


def replay_guard() -> Callable[[], None] | None:
    """What to call before ``GET …/verify`` replays a game's log: ``RUMMY_VERIFY_RATE_LIMITS``
    (None when off)."""
    limiter: RateLimiter | None = current_app.extensions.get("rate_limiter")
    if limiter is None or not limiter.verify_limits:
        return None
    return limiter.check_replay


def require_api_key(settings: Settings) -> None:
    """When keys are configured, creating a game needs one (``X-API-Key``)."""
    if not settings.api_keys:
        return
    given = request.headers.get("X-API-Key", "")
    if not any(hmac.compare_digest(given.encode(), key.encode()) for key in settings.api_keys):
        raise Problem(401, "Unauthorized",
                      "creating a game needs an API key on this server: X-API-Key header",
                      headers={"WWW-Authenticate": 'ApiKey realm="rummy-referee"'})
