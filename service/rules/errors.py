"""Tiers of error raised by the engine.

* :class:`MalformedMove` — the move cannot be understood (unknown card code, a missing
  field): the HTTP layer answers 400.
* :class:`Violation` — the move is well formed but the rules forbid it: 422 with a stable
  :class:`Code` and the id of the rule (``RULES.md``) that forbids it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Code(StrEnum):
    """Stable machine-readable refusal codes (API.md)."""

    GAME_FINISHED = "GAME_FINISHED"
    """The match is over."""
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    """Another seat is to play."""
    WRONG_PHASE = "WRONG_PHASE"
    """The move does not fit the turn's phase (e.g. meld before drawing)."""
    CARD_NOT_IN_HAND = "CARD_NOT_IN_HAND"
    """A named card is not (or not often enough) in the mover's hand."""
    EMPTY_PILE = "EMPTY_PILE"
    """The pile to draw from is empty."""
    INVALID_MELD = "INVALID_MELD"
    """The cards do not form a valid set or run."""
    UNKNOWN_MELD = "UNKNOWN_MELD"
    """No meld on the table has that id."""
    INVALID_LAY_OFF = "INVALID_LAY_OFF"
    """The cards cannot be added to that meld."""
    MELD_LIMIT = "MELD_LIMIT"
    """More new melds this turn than the rules allow."""
    DISCARD_TAKEN_CARD = "DISCARD_TAKEN_CARD"
    """Discarding the card just taken from the discard pile."""
    DISCARD_NOT_USED = "DISCARD_NOT_USED"
    """The taken discard must be put on the table first."""
    DISCARD_DRAW_FORBIDDEN = "DISCARD_DRAW_FORBIDDEN"
    """Taking the discard is not allowed now."""
    NOT_OPENED = "NOT_OPENED"
    """The move needs the player to have opened."""
    OPENING_TOO_LOW = "OPENING_TOO_LOW"
    """The opening is worth too few points."""
    OPENING_NEEDS_CLEAN_RUN = "OPENING_NEEDS_CLEAN_RUN"
    """The opening lacks a run without wilds."""
    TOO_MANY_WILDS = "TOO_MANY_WILDS"
    """More wilds in one meld than allowed."""
    WILD_NOT_ALLOWED = "WILD_NOT_ALLOWED"
    """A wild may not be placed there."""
    SWAP_NOT_ALLOWED = "SWAP_NOT_ALLOWED"
    """That joker may not be swapped."""
    JOKER_NOT_USED = "JOKER_NOT_USED"
    """A swapped joker must go back on the table before the discard."""
    CONTRACT_NOT_MET = "CONTRACT_NOT_MET"
    """The melds do not satisfy the current contract."""
    CONTRACT_ALREADY_MET = "CONTRACT_ALREADY_MET"
    """The contract is already down this hand."""
    PLAYABLE_DISCARD = "PLAYABLE_DISCARD"
    """The discard could be laid off on a table meld."""
    MUST_DISCARD_TO_GO_OUT = "MUST_DISCARD_TO_GO_OUT"
    """The move would leave no card to discard."""
    MUST_MELD_ALL_AT_ONCE = "MUST_MELD_ALL_AT_ONCE"
    """In this deal all cards must go down at once."""
    CUT_IN_NOT_ALLOWED = "CUT_IN_NOT_ALLOWED"
    """A cut-in is not possible now."""
    IDEMPOTENCY_KEY_REUSED = "IDEMPOTENCY_KEY_REUSED"
    """The Idempotency-Key was used with another request body."""


@dataclass(frozen=True)
class Reason:
    """One reason a move or meld is refused."""

    code: Code
    rule: str
    detail: str

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code.value, "rule": self.rule, "detail": self.detail}


class Violation(Exception):
    """An illegal move: ``code`` (:class:`Code`), ``rule`` (RULES.md id) and ``detail``.

    ``reasons`` holds every reason found when there is more than one (the first is the
    headline).
    """

    def __init__(self, code: Code, rule: str, detail: str,
                 reasons: tuple[Reason, ...] = ()) -> None:
        super().__init__(detail)
        self.code = code
        self.rule = rule
        self.detail = detail
        self.reasons = reasons or (Reason(code, rule, detail),)

    @classmethod
    def of(cls, reasons: list[Reason]) -> Violation:
        first = reasons[0]
        return cls(first.code, first.rule, first.detail, tuple(reasons))

    def __repr__(self) -> str:
        return f"Violation({self.code.value!r}, {self.rule!r}, {self.detail!r})"


class MalformedMove(ValueError):
    """A move that cannot be understood; ``field`` names the offending part."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
