"""Problems in the caller's language: Flask-Babel with gettext catalogs.

The language is the best of :data:`LANGUAGES` by the request's ``Accept-Language`` (q-values
honoured, a regional tag such as ``pt-BR`` counts for ``pt``; nothing known: English). The
``title`` and ``detail`` of problem documents, the details of their ``reasons``, the
per-field messages of a 400's ``errors`` (:data:`FIELD_MESSAGES`: marshmallow's and ours,
read back from their English text) and the details of a meld check's ``errors`` are
translated; ``code``, ``rule``, field names, card codes and every other member stay as they
are, and the answer says ``Content-Language``.

The rules engine stays free of gettext: a refusal carries a
:class:`~service.rules.errors.Message` (an English template marked with ``N_`` and its
parameters); here the template is looked up in the catalog of the request's language and
formatted with the same parameters.

Catalogs: ``service/translations/<lang>/LC_MESSAGES/messages.po``, compiled to ``.mo`` beside
them (both committed; tests/api/test_i18n.py checks they are complete and in step). After adding
or changing a message::

    pybabel extract -F babel.cfg --no-default-keywords -k N_ --omit-header --no-location \\
        --sort-output -o service/translations/messages.pot service
    pybabel update -i service/translations/messages.pot -d service/translations \\
        --ignore-obsolete
    # translate the new (and any fuzzy) entries of each messages.po, then
    pybabel compile -d service/translations
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterable
from pathlib import Path

import flask_babel  # type: ignore[import-untyped]
from flask import Flask, current_app, has_request_context, request

from service.rules.errors import N_, Message

LANGUAGES = ("en", "da", "pt", "sv", "cs")
"""The languages of the rule sources, English (the default) first."""
DEFAULT = "en"
TRANSLATIONS = Path(__file__).resolve().parent.parent / "translations"

TITLES = (
    N_("Bad Request"), N_("Unauthorized"), N_("Forbidden"), N_("Not Found"),
    N_("Method Not Allowed"), N_("Not Acceptable"), N_("Precondition Failed"),
    N_("Request Entity Too Large"), N_("Unsupported Media Type"), N_("Too Many Requests"),
    N_("Internal Server Error"), N_("Service Unavailable"), N_("Illegal move"),
    N_("Idempotency key reused"), N_("Conflict"), N_("Unprocessable Content"),
    N_("Request Timeout"),
)
"""Problem titles (translated by catalog look-up)."""

FIXED_DETAILS = (
    N_("a seat token is required: Authorization: Bearer <token>"),
    N_("malformed seat token"),
    N_("unknown seat token"),
    N_("this token belongs to another game"),
    N_("this Idempotency-Key was already used with another request"),
    N_('If-Match must be a game version such as "12"'),
    N_("creating a game needs an API key on this server: X-API-Key header"),
    N_("the game store (Redis) is unreachable"),
    N_("the game store could not be reached or a write's outcome is unknown; retry with the "
       "same Idempotency-Key"),
    N_("the game store failed; retry"),
    N_("the game store (Redis) is full: it refuses new games and moves until it has room "
       "again"),
    N_("too many event streams on this server; retry, or poll GET …/events?after=N"),
    N_("malformed stream ticket"),
    N_("unknown stream ticket: used already, expired, or never issued"),
    N_("this stream ticket belongs to another game"),
    N_("this stream ticket's seat token is no longer valid (rotated, or the seat was opened "
       "again)"),
    N_("Last-Event-ID must be the id of an event of this stream (a version)"),
    N_("the referee hit an unexpected error; nothing was changed"),
    # the lobby's (service.referee.lobby)
    N_("the host token is required: Authorization: Bearer <host_token>"),
    N_("malformed host token"), N_("unknown host token"),
    N_("this host token belongs to another game"),
    N_("this game was created without a host token"),
    N_("this is a host token: it manages the game and sees no hand; a seat's own token is "
       "needed here"),
    N_("this is a seat token: only the host token (from POST /v1/games) manages the game"),
    N_("the game was cancelled by its host before it started"),
    N_("the game has not started: it waits for a player in every seat"),
    N_("no free game id; retry"), N_("no free join code; retry"),
    N_("no game has this join code"), N_("no game has this join code (any longer)"),
    N_("not a join code: a join code is 8 letters and digits (ASCII, without 0, O, 1 and I), "
       "as K7QP-M2XD; case, '-' and blanks do not count"),
    N_("the game was cancelled by its host: no seat is open"),
    N_("the game has started: no seat is open"), N_("every seat of this game is taken"),
    N_("the game is cancelled already"),
    N_("a seat can be opened only while the game waits for its players"),
    N_("this seat has taken its rematch token already"),
)
"""Fixed details written as plain strings elsewhere (the referee, routes, the store): a
detail equal to one of these is translated by catalog look-up (tests/api/test_i18n.py checks
each still occurs in the service's source)."""


FIELD_MESSAGES = (
    # marshmallow's (its fields and validators)
    N_("Missing data for required field."), N_("Field may not be null."),
    N_("Invalid value."), N_("Invalid type."), N_("Invalid input type."),
    N_("Not a valid list."), N_("Not a valid string."), N_("Not a valid utf-8 string."),
    N_("Not a valid number."), N_("Number too large."), N_("Not a valid integer."),
    N_("Special numeric values (nan or infinity) are not permitted."),
    N_("Not a valid boolean."), N_("Not a valid mapping type."),
    N_("Must be one of: {choices}."),
    N_("Must be greater than or equal to {min} and less than or equal to {max}."),
    N_("Must be greater than or equal to {min}."), N_("Must be less than or equal to {max}."),
    N_("Shorter than minimum length {min}."), N_("Longer than maximum length {max}."),
    N_("Length must be between {min} and {max}."), N_("Length must be {equal}."),
    N_("String does not match expected pattern."),
    # the schemas' (service.api.schemas)
    N_("unknown field; did you mean {close}? This object takes: {fields}"),
    N_("unknown field; this object takes: {fields}"),
    N_("{card} is not a card (expected a rank A 2-10 J Q K and a suit S H D C or ♠ ♥ ♦ ♣, "
       "e.g. 'QS', '10♥'; JK for a joker)"),
    N_("not a card code: {value}"), N_("unknown field(s): {fields}"),
    N_('"card" is required'), N_('a card code or {{"card": ..., "as": ...}} is required'),
    N_("a name needs a visible character and no control characters"),
    N_("required for a {kind} move"), N_("not a field of a {kind} move"),
    N_("unknown variant {variant}; known: {known}"),
    # the routes' and live tables' (service.api.routes, service.api.streams)
    N_("not a version"), N_("wait must be 0 to 60"),
    N_("a ticket opens a stream only: send Accept: text/event-stream"),
    # the knobs' (service.rules.ruleset)
    N_("must be true or false"), N_("must be one of {choices}"), N_("must be {allowed}"),
    N_("unknown knob"), N_("not a knob of variant {variant}"),
    # moves and deals (service.rules.moves, service.rules.engine)
    N_("a card code string is required"), N_("unknown field(s) {fields}"),
    N_("a non-empty list of cards is required"), N_("a non-empty list of melds is required"),
    N_('an object {{"cards": [...]}} is required'), N_("a list of lay-offs is required"),
    N_("a string is required"), N_('an object {{"meld_id", "cards"}} is required'),
    N_("a non-empty list is required"), N_('an object {{"meld_id", "card"}} is required'),
    N_("{variant} is for {min} to {max} players, got {count}"),
    N_("must be a seat from 0 to {last}"),
    N_("one list of cards per player ({count}) is required"),
    N_("seat {seat} is dealt {want} cards in hand {hand}, got {got}"),
    N_("a list of card codes is required"),
    # score sheets (service.sheets)
    N_("no player {name} on this sheet (players: {players})"),
    N_("a list of the cards this player still holds ([] for none)"),
    N_("at most 120 cards"), N_("true or false"), N_("a list of player names"),
    N_("{player} is named twice"), N_("{player} is given twice"),
    N_("{player} is out of the match: leave them out"), N_("a number of points"),
    N_("a whole number from 0 to 4"), N_("{name} is out of the match"),
    N_("{variant} is for {min} to {max} players, not {count}"),
    N_("{name} is given twice: each player needs a name of their own"),
    N_("{name} is out of the match (R51-END)"), N_("at most {max} points either way"),
    N_("{value} is negative: no score is, under these rules"),
    N_("{value} is not a whole number: every score is, under these rules"),
    N_("{player}'s score for the hand is missing (0 if none)"),
    N_("the cards {player} still holds are missing ([] if none)"),
    N_("true or false: {question}"),
    N_("{name} went out and holds no card (C-OUT): hands are the cards each seat still "
       "holds"),
    # scoring one hand (service.rules.checks, the variants' hand_problem)
    N_("one hand per player: {variant} is for {min} to {max} players"),
    N_("must be a seat from 0 to {last} or null"),
    N_("{card} is not a card of the {variant} deck"),
    N_("more copies than the {variant} deck holds: {copies}"),
    N_("{card} {count} times (the deck holds {held})"),
    N_("{question} ({variant} scoring needs it for this hand)"),
    N_("the knocker's deadwood {dead} is above the knock limit {limit} (GIN-KNOCK): hands "
       "are the cards each seat left unmelded"),
    # arranged deals (service.rules.engine)
    N_("{variant} starts with an upcard: the discard pile needs at least one card"),
    N_("must use exactly the {size}-card deck; {problems}"),
    N_("not in the deck or too many copies: {cards}"), N_("missing: {cards}"),
    # the lobby (service.referee.lobby)
    N_("not a seat of this game (0 to {last})"), N_("not a seat of this game"),
)
"""The messages of a 400's ``errors`` (per field), as ``str.format`` templates of the English
texts marshmallow and the service write: a message is read back into its template and
parameters (:func:`field_message`) and translated as a :class:`Message` is. (A fixed
message written with ``N_`` where it is raised needs no template: a message that is none of
these is looked up in the catalog as it is.)"""

NESTED = {"question": "", "copies": ", ", "problems": "; "}
"""Parameters of :data:`FIELD_MESSAGES` that are messages themselves, read back and translated
too: a question asked (a fact's), or a list of messages with this separator (read as much
as they can take: a question may hold parentheses)."""


def _pattern(template: str) -> re.Pattern[str]:
    parts = []
    for literal, name, _, _ in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if name:
            parts.append(f"(?P<{name}>.+)" if name in NESTED else f"(?P<{name}>.+?)")
    return re.compile("".join(parts), re.DOTALL)


_FIELD_PATTERNS = sorted(
    ((_pattern(t), t) for t in FIELD_MESSAGES),
    key=lambda pair: -sum(len(lit) for lit, *_ in string.Formatter().parse(pair[1])))
"""The templates, the most specific (the most literal text) first."""


class FieldMessage(Message):
    """A per-field message read back from its English text: its template formatted even
    without parameters (``{{`` is a brace), its parameters inserted as they were written."""

    def render(self, translate: Callable[[str], str] = str) -> str:
        values = {name: value.render(translate) if isinstance(value, Message) else value
                  for name, value in self.params.items()}
        return translate(self.template).format(**values)


def field_message(text: str) -> str | Message:
    """``text`` (an English per-field message) as a translatable :class:`Message` when it
    is one of :data:`FIELD_MESSAGES`, else as it is."""
    for pattern, template in _FIELD_PATTERNS:
        found = pattern.fullmatch(text)
        if found:
            params: dict[str, object] = dict(found.groupdict())
            for name, separator in NESTED.items():
                if name in params:
                    parts = str(params[name]).split(separator) if separator else [
                        str(params[name])]
                    params[name] = Message.join([_as_message(field_message(part))
                                                 for part in parts], separator)
            message = FieldMessage(template, params)
            if str(message) == text:
                return message
    return text


def _as_message(text: str | Message) -> Message:
    """A read-back part as a :class:`Message`: a plain text is looked up as it is."""
    return text if isinstance(text, Message) else Message(text)


def choose_language(header: str | None, languages: Iterable[str] = LANGUAGES) -> str:
    """The best of ``languages`` for an ``Accept-Language`` value (RFC 9110 §12.5.4):
    highest q first, the header's order among equals; ``*`` or nothing known: English."""
    known = set(languages)
    ranked: list[tuple[float, int, str]] = []
    for index, item in enumerate((header or "").split(",")):
        tag, _, params = item.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if tag and quality > 0:
            ranked.append((-quality, index, tag.strip().lower()))
    for _, _, tag in sorted(ranked):
        primary = tag.replace("_", "-").split("-")[0]
        if primary in known:
            return primary
        if primary == "*":
            return DEFAULT
    return DEFAULT


def _request_language() -> str:
    languages: tuple[str, ...] = current_app.extensions["languages"]
    return choose_language(request.headers.get("Accept-Language"), languages)


def installed_languages() -> tuple[str, ...]:
    """The :data:`LANGUAGES` that can be answered in: English, and each whose compiled
    catalog is installed (so ``Content-Language`` never lies)."""
    return tuple(lang for lang in LANGUAGES if lang == DEFAULT
                 or (TRANSLATIONS / lang / "LC_MESSAGES" / "messages.mo").is_file())


def init_app(app: Flask) -> None:
    """Install Flask-Babel on ``app`` with the catalogs and the language choice (among
    :func:`installed_languages`)."""
    app.extensions["languages"] = installed_languages()
    flask_babel.Babel(app, configure_jinja=False, locale_selector=_request_language,
                      default_locale=DEFAULT,
                      default_translation_directories=str(TRANSLATIONS))


def language() -> str:
    """The language of this request's problems (English outside a request)."""
    if not has_request_context():
        return DEFAULT
    locale = flask_babel.get_locale()
    return DEFAULT if locale is None else str(locale)


def translate(text: str | Message) -> str:
    """``text`` in this request's language: a :class:`Message`'s templates translated and
    formatted with its parameters; a plain string looked up as it is (never formatted)."""
    if not has_request_context() or language() == DEFAULT or not text:
        return str(text)
    catalog = flask_babel.get_translations()

    def gettext(msgid: str) -> str:
        return str(catalog.gettext(msgid))

    if not isinstance(text, Message):
        return gettext(text)
    try:
        return text.render(gettext)
    except (KeyError, IndexError, ValueError):  # a translation that does not fit its params
        return text.render()
