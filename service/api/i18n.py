"""Problems in the caller's language: Flask-Babel with gettext catalogs.

The language is the best of :data:`LANGUAGES` by the request's ``Accept-Language`` (q-values
honoured, a regional tag such as ``pt-BR`` counts for ``pt``; nothing known: English). Only
the ``title`` and ``detail`` of problem documents (and the details of their ``reasons``),
and the details of a meld check's ``errors``, are translated; ``code``, ``rule``, card codes
and every other member stay as they are, and the answer says ``Content-Language``.

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

from collections.abc import Iterable
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
    N_("Idempotency key reused"),
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
    N_("the referee hit an unexpected error; nothing was changed"),
)
"""Fixed details written as plain strings elsewhere (the referee, routes, the store): a
detail equal to one of these is translated by catalog look-up (tests/api/test_i18n.py checks
each still occurs in the service's source)."""


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


def init_app(app: Flask) -> None:
    """Install Flask-Babel on ``app`` with the catalogs and the language choice (only the
    languages whose compiled catalog is installed: ``Content-Language`` never lies)."""
    app.extensions["languages"] = tuple(
        lang for lang in LANGUAGES
        if lang == DEFAULT or (TRANSLATIONS / lang / "LC_MESSAGES" / "messages.mo").is_file())
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
