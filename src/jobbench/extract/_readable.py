"""Text as a reader (or a judge model) reads it: the one place that says which characters
look alike.

Two stages, both pure functions of a ``str``:

- :func:`readable`: NFKC-normalised (fullwidth and other compatibility forms made plain,
  ``＝`` to ``=``, ``Ｆ`` to ``F``) with every invisible format character (Unicode category
  Cf: zero-width space and joiner, soft hyphen, word joiner, bidi marks, BOM) dropped;
- :func:`plain`: :func:`readable`, then the look-alikes of :data:`LOOKALIKES` made ASCII
  (Cyrillic and Greek letters that render like Latin ones, Unicode dashes, equals and colon
  look-alikes).

Used by :func:`jobbench.extract.escape_file_headers` (header-like lines) and by the judge's
injection detector (``jobbench.judge._evidence``), which imports it from
:mod:`jobbench.extract`.
"""

from __future__ import annotations

import functools
import unicodedata

DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"
"""Unicode hyphens, dashes and minus signs that read as ``-``."""

EQUALS_LIKE = "\u2550\u2261\ua78a\u30a0\u2e40\u1400"
"""Characters that render like ``=`` and that NFKC leaves alone: box-drawing double
horizontal ``═``, identical-to ``≡``, modifier letter short equals ``꞊``, katakana-hiragana
double hyphen ``゠``, double hyphen ``⹀``, Canadian syllabics hyphen ``᐀`` (fullwidth ``＝``,
small ``﹦``, super- and subscript equals are made ``=`` by NFKC)."""

COLON_LIKE = "\u02d0\u02f8\u0589\u05c3\u2236\ua789"
"""Characters that render like ``:`` and that NFKC leaves alone: modifier letters triangular
colon ``ː`` and raised colon ``˸``, Armenian full stop ``։``, Hebrew sof pasuq ``׃``, ratio
``∶``, modifier letter colon ``꞉`` (fullwidth ``：`` and small ``﹕`` are made ``:`` by NFKC)."""

LOOKALIKES = str.maketrans(
    {
        **dict.fromkeys(DASHES, "-"),
        **dict.fromkeys(EQUALS_LIKE, "="),
        **dict.fromkeys(COLON_LIKE, ":"),
        **dict(zip("АВЕЅІЈКМНОРСТХУӀ", "ABESIJKMHOPCTXYI", strict=True)),  # Cyrillic capitals
        **dict(zip("аеѕіјорсухԁԛԝһӏ", "aesijopcyxdqwhl", strict=True)),  # Cyrillic small
        **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧϜ", "ABEZHIKMNOPTYXF", strict=True)),  # Greek capitals
        **dict(zip("οιν", "oiv", strict=True)),  # Greek small
        **dict(zip("ꜰʟɪᴇ", "FLIE", strict=True)),  # Latin small capitals
        **dict(zip("ᎬᏞ", "EL", strict=True)),  # Cherokee
    }
)
"""Translation table (for :meth:`str.translate`) of characters that render like ASCII ones,
each mapped to the ASCII a reader sees: Cyrillic, Greek, Cherokee and small-capital letters
from the Unicode confusables list of UTS #39, :data:`DASHES` to ``-``, :data:`EQUALS_LIKE` to
``=`` and :data:`COLON_LIKE` to ``:``. ``ЕND DELIVERABLES‐…`` with a Cyrillic Е and U+2010
reads as ``END DELIVERABLES-…``; ``=== FІLE:`` with a Cyrillic І as ``=== FILE:``."""


@functools.cache
def _format_chars() -> dict[int, None]:
    """Deletion table of every code point of Unicode category Cf (all lie below U+20000 or in
    plane 14), built on first use (a few milliseconds)."""
    ranges = (range(0x20000), range(0xE0000, 0xE1000))
    return {c: None for r in ranges for c in r if unicodedata.category(chr(c)) == "Cf"}


def readable(text: str) -> str:
    """``text`` NFKC-normalised, with every Unicode category Cf character dropped. The result
    can be shorter or longer than ``text`` (NFKC expands some characters)."""
    return unicodedata.normalize("NFKC", text).translate(_format_chars())


def plain(text: str) -> str:
    """:func:`readable` ``text`` with :data:`LOOKALIKES` made ASCII."""
    return readable(text).translate(LOOKALIKES)
