"""Numbers read from request text: a header, the path, the query string.

Python's ``str.isdigit()`` accepts every script's digits and more (``²``, ``¹``, ``١``,
``１``), and ``int()`` reads some of them as numbers (``int("١") == 1``), fails on others
(``int("²")`` raises ``ValueError``) and takes signs, blanks and underscores
(``int(" +1_0") == 10``). A number a client sends is read here instead: ASCII digits
``0``-``9`` only, and not too many of them.
"""

from __future__ import annotations

MAX_DIGITS = 18
"""Digits of the longest number read by default: every such number fits in 63 bits (game
versions, counts)."""


def natural(text: str, max_digits: int = MAX_DIGITS) -> int | None:
    """The whole number ``text`` spells in 1 to ``max_digits`` ASCII digits, else None."""
    if not 0 < len(text) <= max_digits or not text.isascii() or not text.isdigit():
        return None
    return int(text)


def integer(text: str, max_digits: int = MAX_DIGITS) -> int | None:
    """As :func:`natural`, with an optional leading ``-``."""
    if text.startswith("-"):
        value = natural(text[1:], max_digits)
        return None if value is None else -value
    return natural(text, max_digits)
