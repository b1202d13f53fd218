"""Abuse limits: rate limits shared by every worker (window counters in the games' Redis:
one server, the cluster or the Sentinel-managed primary, as configured) and optional API
keys for creating games.

Rate limits count per caller: a seat token (hashed) when the request carries one, else the
client address. ``RUMMY_RATE_LIMITS`` applies to every endpoint; ``RUMMY_CREATE_RATE_LIMITS``
adds a limit per client address on ``POST /v1/games``. A caller over a limit gets ``429``
problem+json with ``Retry-After``. Liveness, readiness, the docs and the web table are not
limited.

Each limit is a fixed window that starts at the caller's first request (a Redis counter
whose expiry is the window, :mod:`service.store.counters`). Counting costs no round trip of
its own where a request loads a game anyway: a seat's requests on its own game (moves, its
view, its legal moves) are counted by the script that loads the game
(:class:`GameMeter`); any other request is counted in one round trip before it is served.
A request that fails before its game is loaded (a malformed move, say) is counted when its
answer leaves, so it still uses up the budget. A worker that sees a caller over a limit
refuses that caller's requests without asking Redis until the window ends. If Redis cannot
be reached for a count, the request is let through (the game store answers 503 anyway).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

from flask import Flask, Response, current_app, g, request

from service.api.problems import Problem
from service.config import LIMIT_PATTERN, Settings
from service.rules.errors import N_, Message
from service.store import Count, GameStore, StoreError, Window

UNLIMITED = ("/healthz", "/readyz", "/docs", "/openapi.json", "/play", "/_bench")
GAME_ENDPOINTS = frozenset({"games.Moves", "games.Me", "games.LegalMoves"})
"""Endpoints whose caller is counted by the load of its own game (:class:`GameMeter`)."""
_GAME_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
_MAX_BLOCKED = 4096
_MAX_CALLERS = 4096

log = logging.getLogger("service.ratelimit")


@dataclass(frozen=True, slots=True)
class Limit:
    """``amount`` requests per ``seconds``, as configured (``text``)."""

    amount: int
    seconds: int
    text: str

    @classmethod
    def parse(cls, text: str) -> Limit:
        match = LIMIT_PATTERN.match(text)
        if match is None:
            raise ValueError(f"not a rate limit: {text!r}")
        amount, count, unit = match.group("amount", "count", "unit")
        return cls(int(amount), int(count or 1) * _SECONDS[unit.lower()], text.strip())


@dataclass(frozen=True, slots=True)
class Caller:
    """Who a request counts against: a seat token's hash or a client address."""

    name: str
    game_id: str | None
    """The game a seat token names (its counters live in that game's hash slot)."""
    windows: tuple[Window, ...]
    """Its counter of each ``RUMMY_RATE_LIMITS`` limit."""


def _address() -> str:
    """The client address, fit for a Redis hash tag (no braces)."""
    return (request.remote_addr or "unknown").replace("{", "(").replace("}", ")")


def _exempt() -> bool:
    return request.path.startswith(UNLIMITED) or request.path == "/"


def _over(counts: Sequence[Count], limits: Sequence[Limit]) -> tuple[Count, Limit] | None:
    """The first count over its limit, if any."""
    for count, limit in zip(counts, limits, strict=False):
        if count.count > limit.amount:
            return count, limit
    return None


def _seconds(millis_left: float) -> str:
    """``Retry-After``: whole seconds until the window ends (at least 1)."""
    return str(max(1, math.ceil(millis_left / 1000)))


def _too_many(limit: Limit, millis_left: float) -> Problem:
    return Problem(429, "Too Many Requests",
                   Message(N_("rate limit exceeded ({limit}); retry after Retry-After seconds"),
                           {"limit": limit.text}),
                   headers={"Retry-After": _seconds(millis_left)})


class RateLimiter:
    """``RUMMY_RATE_LIMITS`` on every request and ``RUMMY_CREATE_RATE_LIMITS`` on creating
    games, counted in the store's Redis."""

    def __init__(self, store: GameStore, limits: Sequence[str],
                 create_limits: Sequence[str]) -> None:
        self.store = store
        self.limits = tuple(Limit.parse(text) for text in limits)
        self.amounts = tuple(limit.amount for limit in self.limits)
        """The most hits each limit's window allows, in the order of ``limits``."""
        self.create_limits = tuple(Limit.parse(text) for text in create_limits)
        self._blocked: dict[str, tuple[float, Limit]] = {}
        """Caller → (monotonic end of its window, the limit it went over), this worker."""
        self._callers: dict[tuple[str, str], Caller] = {}

    # -- the hooks ---------------------------------------------------------------------

    def before_request(self) -> None:
        if not self.limits or _exempt():
            return
        caller = self._caller()
        self._refuse_if_blocked(caller.name)
        if (caller.game_id is not None and request.endpoint in GAME_ENDPOINTS
                and (request.view_args or {}).get("game_id") == caller.game_id):
            g.rate_meter = GameMeter(self, caller)
            return
        self._count(caller)

    def after_request(self, response: Response) -> Response:
        meter: GameMeter | None = g.get("rate_meter")
        if meter is not None and not meter.used:
            # the request ended before its game was loaded: it counts all the same (it has
            # its answer already; when over the limit, the caller's next request is refused)
            with contextlib.suppress(Problem):
                self._count(meter.caller)
        return response

    # -- counting ----------------------------------------------------------------------

    def _caller(self) -> Caller:
        """The request's caller (remembered by header and address: a seat sends the same
        token request after request, and hashing it each time costs)."""
        key = (request.headers.get("Authorization", ""), _address())
        caller = self._callers.get(key)
        if caller is None:
            if len(self._callers) >= _MAX_CALLERS:
                self._callers.clear()
            caller = self._callers[key] = self._caller_of(*key)
        return caller

    def _caller_of(self, header: str, address: str) -> Caller:
        scheme, _, token = header.partition(" ")
        token = token.strip()
        if scheme.lower() == "bearer" and token:
            name = "seat:" + hashlib.sha256(token.encode()).hexdigest()[:32]
            game_id = token.partition(".")[0]
            game = game_id if _GAME_ID.match(game_id) else None
        else:
            name, game = f"addr:{address}", None
        return Caller(name, game, tuple(self._windows(game or name, name, self.limits)))

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

    def _count(self, caller: Caller) -> None:
        """Count a hit on the caller's windows (one round trip); 429 over a limit."""
        counts = self._hit(caller.windows)
        if counts is not None:
            self.judge(counts, caller.name)

    def judge(self, counts: Sequence[Count], caller: str) -> None:
        """429 if a count is over its limit (and the caller is refused here until then)."""
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
        raise _too_many(limit, left * 1000)

    def check_create(self) -> None:
        """``RUMMY_CREATE_RATE_LIMITS``: games created per client address (429 beyond)."""
        if not self.create_limits:
            return
        address = f"addr:{_address()}"
        counts = self._hit(self._windows(address, "create", self.create_limits))
        if counts is None:
            return
        over = _over(counts, self.create_limits)
        if over is not None:
            count, limit = over
            raise Problem(429, "Too Many Requests",
                          Message(N_("at most {limit} new games per client address; retry "
                                     "later"), {"limit": limit.text}),
                          headers={"Retry-After": _seconds(count.millis_left)})


class GameMeter:
    """A seat's request on its own game: its rate-limit windows are counted by the script
    that loads or commits the game (``GameStore.load(windows=…)``, ``GameStore.commit(
    windows=…, limits=…)``), not in a round trip of their own."""

    def __init__(self, limiter: RateLimiter, caller: Caller) -> None:
        self.limiter = limiter
        self.caller = caller
        self.used = False

    def windows(self) -> tuple[Window, ...]:
        return self.caller.windows

    def limits(self) -> tuple[int, ...]:
        return self.limiter.amounts

    def counted(self, counts: Sequence[Count]) -> None:
        """The load or commit counted: 429 if the caller is over a limit (a commit over a
        limit wrote nothing)."""
        self.used = True
        self.limiter.judge(counts, self.caller.name)


def install(app: Flask, settings: Settings, store: GameStore) -> RateLimiter | None:
    """Rate limits on ``app`` (None when every limit is off)."""
    if not settings.rate_limits and not settings.create_rate_limits:
        return None
    limiter = RateLimiter(store, settings.rate_limits, settings.create_rate_limits)
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


def require_api_key(settings: Settings) -> None:
    """When keys are configured, creating a game needs one (``X-API-Key``)."""
    if not settings.api_keys:
        return
    given = request.headers.get("X-API-Key", "")
    if not any(hmac.compare_digest(given.encode(), key.encode()) for key in settings.api_keys):
        raise Problem(401, "Unauthorized",
                      "creating a game needs an API key on this server: X-API-Key header",
                      headers={"WWW-Authenticate": 'ApiKey realm="rummy-referee"'})
