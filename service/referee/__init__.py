"""The referee's use cases over the rules engine and the store: load → decide → commit.

- :mod:`.games`: :class:`Referee`, the use cases (create a game, its views, its legal
  moves, its log and its verification, a move) and :class:`Answer`, what they answer;
- :mod:`.errors`: :class:`RefereeError` and its kinds, which the HTTP layer maps to statuses;
- :mod:`.documents`: a game's stored document (its state and its seats' token hashes) and
  the JSON codec of everything the referee stores;
- :mod:`.held`: :class:`HeldStates`, the states a worker keeps decoded between moves;
- :mod:`.meter`: :class:`Meter`, the rate-limit counters a use case counts in its store
  round trip, and :data:`UNMETERED`.
- :mod:`.lobby`: :class:`~.lobby.LobbyReferee`, the referee with open seats, join codes,
  host tokens, token rotation and rematches (imported from there, not re-exported here).
"""

from .errors import (
    Contention,
    Forbidden,
    KeyReused,
    RefereeError,
    StaleVersion,
    Unauthorized,
    UnknownGame,
)
from .games import (
    LOG_ONLY_EVENTS,
    MAX_ATTEMPTS,
    VERIFY_CACHE,
    Answer,
    Referee,
    new_game_id,
    redacted_entry,
)
from .held import HELD_STATES, HeldStates
from .meter import UNMETERED, Meter

__all__ = [
    "HELD_STATES",
    "LOG_ONLY_EVENTS",
    "MAX_ATTEMPTS",
    "UNMETERED",
    "VERIFY_CACHE",
    "Answer",
    "Contention",
    "Forbidden",
    "HeldStates",
    "KeyReused",
    "Meter",
    "Referee",
    "RefereeError",
    "StaleVersion",
    "Unauthorized",
    "UnknownGame",
    "new_game_id",
    "redacted_entry",
]
