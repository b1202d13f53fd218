"""What a use case refuses with: :class:`RefereeError` and its kinds, each of which the HTTP
layer maps to a status (``service/app.py``). The engine's own refusals (``Violation``,
``SetupError``, ``RulesError``) and the store's errors pass through as they are."""

from __future__ import annotations

from service.rules.errors import N_, Message


class RefereeError(Exception):
    """Base of the errors the HTTP layer maps to a status."""


class UnknownGame(RefereeError):
    def __init__(self, game_id: str) -> None:
        super().__init__(Message(N_("no game {game_id!r}"), {"game_id": game_id}))
        self.game_id = game_id


class Unauthorized(RefereeError):
    """Missing, malformed or unknown token (401)."""


class Forbidden(RefereeError):
    """A valid token of another game (403)."""


class StaleVersion(RefereeError):
    """``If-Match`` names another version than the current one (412)."""

    def __init__(self, expected: int, current: int) -> None:
        super().__init__(Message(N_("If-Match is version {expected}, the game is at version "
                                    "{current}"), {"expected": expected, "current": current}))
        self.expected = expected
        self.current = current


class KeyReused(RefereeError):
    """The idempotency key was used with another request (422)."""


class Contention(RefereeError):
    """Too many concurrent writers on one game (503, retry)."""

    @classmethod
    def busy(cls, game_id: str) -> Contention:
        """Every compare-and-set on ``game_id`` lost to another writer: its (translatable)
        detail names the game."""
        return cls(Message(N_("game {game_id!r} is busy; retry"), {"game_id": game_id}))
