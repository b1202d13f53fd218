"""Tiers of error raised by the engine.

* :class:`MalformedMove` — the move cannot be understood (unknown card code, a missing
  field): the HTTP layer answers 400.
* :class:`Violation` — the move is well formed but the rules forbid it: 422 with a stable
  :class:`Code` and the rule that forbids it, a :class:`~service.rules.rule_ids.RuleId`
  (``docs/rules.md``).

Refusals carry a :class:`Message`: an English template marked with :func:`N_` and its
parameters. ``detail`` is the English text; the HTTP layer translates the template with
gettext for the caller's language and formats it with the same parameters (the engine itself
knows nothing of languages).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum

from mypy_extensions import mypyc_attr

from service.rules.rule_ids import RuleId


def N_(message: str) -> str:
    """Mark ``message`` as a template to translate (``pybabel extract -k N_``); a no-op."""
    return message


def _same(template: str) -> str:
    return template


# The HTTP layer subclasses it (service.api.i18n.FieldMessage): compiled (setup.py), a
# native class makes no instance of a subclass outside the compile unless marked so.
@mypyc_attr(allow_interpreted_subclasses=True)
class Message:
    """An English template (``str.format`` syntax, marked with :func:`N_`) and its
    parameters; ``str()`` is the English text. A parameter may itself be a Message, which is
    translated with the template."""

    __slots__ = ("params", "template")

    def __init__(self, template: str, params: Mapping[str, object] | None = None) -> None:
        self.template = template
        self.params: Mapping[str, object] = params or {}

    @classmethod
    def join(cls, parts: Iterable[Message], separator: str = ", ") -> Message:
        """``parts`` one after another (the separator is not translated)."""
        params = {f"part{i}": part for i, part in enumerate(parts)}
        return cls(separator.join(f"{{{name}}}" for name in params), params)

    def render(self, translate: Callable[[str], str] = _same) -> str:
        """The text, each template passed through ``translate`` first (a template without
        parameters is taken as it is: no ``str.format``)."""
        if not self.params:
            return translate(self.template) if self.template else ""
        values = {name: value.render(translate) if isinstance(value, Message) else value
                  for name, value in self.params.items()}
        return translate(self.template).format(**values)

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return f"Message({self.template!r}, {dict(self.params)!r})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Message) and self.template == other.template
                and dict(self.params) == dict(other.params))

    def __hash__(self) -> int:
        return hash(self.template)


def _message(message: str | Message, params: Mapping[str, object]) -> Message:
    return message if isinstance(message, Message) else Message(message, params)


class Code(StrEnum):
    """Stable machine-readable refusal codes (API.md)."""

    GAME_FINISHED = "GAME_FINISHED"
    """The match is over (or was cancelled by its host)."""
    GAME_NOT_STARTED = "GAME_NOT_STARTED"
    """The game waits for a player in every seat (an open seat): nothing is dealt yet."""
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
    ABORT_TOO_LATE = "ABORT_TOO_LATE"
    """An abort after the first move of the first hand (C-ABORT)."""
    OUT_OF_MATCH = "OUT_OF_MATCH"
    """A seat already out of the match (R51-END eliminate_at) cannot resign or claim."""
    NO_CLOCK = "NO_CLOCK"
    """A timeout claimed in a game without a clock (C-CLOCK)."""
    CLOCK_NOT_EXPIRED = "CLOCK_NOT_EXPIRED"
    """A timeout claimed before the turn's deadline (C-CLOCK)."""
    OWN_TIMEOUT = "OWN_TIMEOUT"
    """The late seat claiming its own timeout (C-CLOCK)."""
    KNOCK_TOO_HIGH = "KNOCK_TOO_HIGH"
    """The knock leaves more deadwood than the hand's knock limit (GIN-KNOCK)."""
    PASS_NOT_ALLOWED = "PASS_NOT_ALLOWED"
    """A pass outside the first upcard's offer and the wall (GIN-FIRST, GIN-WALL)."""
    STOCK_DRAW_FORBIDDEN = "STOCK_DRAW_FORBIDDEN"
    """Drawing from the stock is not allowed now (GIN-FIRST, GIN-WALL)."""
    MUST_KNOCK = "MUST_KNOCK"
    """The discard taken at the wall must be knocked with (GIN-WALL)."""
    IDEMPOTENCY_KEY_REUSED = "IDEMPOTENCY_KEY_REUSED"
    """The Idempotency-Key was used with another request body."""


class Reason:
    """One reason a move or meld is refused: ``Reason(code, rule, template, **params)``
    (or a ready :class:`Message`); ``detail`` is the English text, formatted when first
    asked for (the meld search makes and drops many reasons)."""

    __slots__ = ("_detail", "code", "message", "rule")

    def __init__(self, code: Code, rule: RuleId, message: str | Message, /,
                 **params: object) -> None:
        self.code = code
        self.rule = rule
        self.message = _message(message, params)
        self._detail: str | None = None

    @property
    def detail(self) -> str:
        if self._detail is None:
            self._detail = str(self.message)
        return self._detail

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code.value, "rule": self.rule.value, "detail": self.detail}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Reason) and (self.code, self.rule, self.detail) == (
            other.code, other.rule, other.detail)

    def __hash__(self) -> int:
        return hash((self.code, self.rule, self.detail))

    def __repr__(self) -> str:
        return f"Reason(code={self.code!r}, rule={self.rule.value!r}, detail={self.detail!r})"


class Violation(Exception):
    """An illegal move: ``code`` (:class:`Code`), ``rule`` (:class:`RuleId`), ``message`` (a
    template and its parameters, :class:`Message`) and ``detail`` (its English text):
    ``Violation(code, RuleId.R51_OPEN, "opening worth {points} points", points=48)``.

    ``reasons`` holds every reason found when there is more than one (the first is the
    headline).
    """

    def __init__(self, code: Code, rule: RuleId, message: str | Message, /, *,
                 reasons: tuple[Reason, ...] = (), **params: object) -> None:
        super().__init__()
        self.code = code
        self.rule = rule
        self.message = _message(message, params)
        self.reasons = reasons or (Reason(code, rule, self.message),)

    @property
    def detail(self) -> str:
        """The English text (formatted when asked for: legal-move searches refuse many
        candidate moves nobody reads about)."""
        return self.reasons[0].detail if self.reasons[0].message is self.message else str(
            self.message)

    def __str__(self) -> str:
        return self.detail

    @classmethod
    def of(cls, reasons: list[Reason]) -> Violation:
        first = reasons[0]
        return cls(first.code, first.rule, first.message, reasons=tuple(reasons))

    def __repr__(self) -> str:
        return f"Violation({self.code.value!r}, {self.rule.value!r}, {self.detail!r})"


class MalformedMove(ValueError):
    """A move that cannot be understood; ``field`` names the offending part."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
