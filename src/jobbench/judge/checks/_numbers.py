"""Finding and parsing numbers the way people write them in reports.

Handled formats (each value is in the unit as written, percent sign stripped):

* thousands separators: ``1,234,567.5``; also no-break / thin spaces (``1 234``);
* currency symbols before or after the sign: ``$1,234.50``, ``-$5``, ``$-5``, ``€3``;
* scientific notation: ``1.2e3``, ``4E-2``;
* negatives: ``-5``, unicode minus ``−5`` (U+2212) and similar dashes when they are not a
  range (``5–10`` is two positive numbers), and accounting parentheses ``(1,234)``;
* percent: ``20.2%``, ``20.2 percent``;
* scale words: ``3.4M``, ``5 bn``, ``2 million``, ``7k``.

Because parentheses also enclose positive asides ("grew 5 % (20.2%)") and scale words are
sometimes part of the unit, a token yields several *candidate* values: ``(1,234)`` gives
-1234 and 1234, ``3.4M`` gives 3.4 and 3,400,000. A number check passes when any candidate
is within tolerance, so ``value=-1234`` matches ``(1,234)`` but not ``1,234``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

MINUS_CHARS = "-\u2212\u2012\u2013\ufe63\uff0d"
"""Characters read as a minus sign: hyphen-minus, minus, figure dash, en dash, small and
full-width hyphen-minus."""
CURRENCY_CHARS = "$€£¥₹"
_GROUP_SEPS = ",\u00a0\u202f\u2009"

_SCALE = {
    "k": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "mn": 1e6,
    "mm": 1e6,
    "million": 1e6,
    "b": 1e9,
    "bn": 1e9,
    "billion": 1e9,
    "t": 1e12,
    "tn": 1e12,
    "trillion": 1e12,
}

_NUM_LOOSE_RE = re.compile(
    r"""
    (?<![\w.])
    (?P<mant>
        \d{1,3}(?:["""
    + _GROUP_SEPS
    + r"""]\d{3})+(?![\d])(?:\.\d+)?
      | \d+(?:\.\d+)?
      | \.\d+
    )
    (?P<exp>[eE][-+\u2212]?\d+(?![\w]))?
    """,
    re.VERBOSE,
)
_SUFFIX_RE = re.compile(
    r"\s?(?P<pct>%|\s?percent\b|\s?per\s?cent\b|\s?pct\b)|\s?(?P<scale>thousand|million|billion|trillion|mn|mm|bn|tn|[kKmMbBtT])(?![A-Za-z])"
)


@dataclass(frozen=True)
class NumberToken:
    """One number found in a text.

    Attributes:
        text: the token as written (sign, currency, suffix and parentheses included).
        start, end: character span of ``text`` in the searched string.
        value: the primary reading (parentheses read as negative, scale words ignored).
        candidates: every reading a check may compare (see module docstring).
        percent: True when written with ``%`` / ``percent``.
    """

    text: str
    start: int
    end: int
    value: float
    candidates: tuple[float, ...] = field(default_factory=tuple)
    percent: bool = False


def _mantissa(raw: str) -> float:
    for sep in _GROUP_SEPS:
        raw = raw.replace(sep, "")
    return float(raw)


def find_numbers(text: str) -> list[NumberToken]:
    """Every number in ``text``, in order of appearance.

    Args:
        text: any string.

    Returns:
        A list of :class:`NumberToken`; empty when the text holds no number. Digits glued to
        letters (``A1``, ``v2``, ``item5``) are not numbers; ``2024-05-01`` yields 2024, 5
        and 1 (a dash between digits is never a minus).
    """
    out: list[NumberToken] = []
    for m in _NUM_LOOSE_RE.finditer(text):
        start, end = m.start(), m.end()
        mant = m.group("mant")
        exp = m.group("exp") or ""
        try:
            value = _mantissa(mant) * (10 ** int(exp[1:].replace("\u2212", "-")) if exp else 1.0)
        except (ValueError, OverflowError):
            continue
        if not math.isfinite(value):
            continue
        percent = False
        scale = 1.0
        sm = _SUFFIX_RE.match(text, end)
        if sm:
            if sm.group("pct"):
                percent = True
                end = sm.end()
            elif sm.group("scale"):
                word = sm.group("scale")
                # single capital letters only count when glued to the number (5M, not "5 M")
                if len(word) > 1 or not sm.group(0).startswith(" "):
                    scale = _SCALE[word.lower()]
                    end = sm.end()
        if end < len(text) and (text[end].isalnum() or text[end] == "_"):
            continue  # 5kg, 3rd, 10x: not a bare number
        # look left for a currency symbol and a sign: "-$5", "$-5", "−5", "$5"
        i = start
        has_currency = False
        if i > 0 and text[i - 1] in CURRENCY_CHARS:
            i -= 1
            has_currency = True
        negative = False
        if i > 0 and text[i - 1] in MINUS_CHARS:
            before = text[i - 2] if i >= 2 else " "
            if not (before.isalnum() or before in ".,%)"):  # "5-3", "5–10" are not negatives
                negative = True
                i -= 1
                if not has_currency and i > 0 and text[i - 1] in CURRENCY_CHARS:
                    i -= 1
        tok_start = i
        paren = (
            not negative
            and tok_start > 0
            and text[tok_start - 1] == "("
            and end < len(text)
            and text[end] == ")"
        )
        if paren:
            tok_start -= 1
            end += 1
        signed = -value if negative else value
        cands = [signed]
        if paren:
            cands = [-value, value]
        if scale != 1.0:
            cands += [c * scale for c in cands]
        out.append(
            NumberToken(
                text=text[tok_start:end],
                start=tok_start,
                end=end,
                value=-value if (negative or paren) else value,
                candidates=tuple(dict.fromkeys(cands)),
                percent=percent,
            )
        )
    return out


def parse_number(text: str) -> float | None:
    """Parse a string that should hold exactly one number (a cell, a CSV field, a JSON string).

    ``"$1,234.50"`` → 1234.5, ``"20.2%"`` → 20.2, ``"(1,234)"`` → -1234.0, ``"1.2e3"`` →
    1200.0, ``"−5"`` → -5.0; surrounding whitespace is ignored.

    Returns:
        The primary value, or None when the string is not a single number.
    """
    s = text.strip()
    if not s:
        return None
    tokens = find_numbers(s)
    if len(tokens) != 1:
        return None
    tok = tokens[0]
    rest = (s[: tok.start] + s[tok.end :]).strip()
    if rest:
        return None
    return tok.value


def close(a: float, b: float, abs_tol: float = 0.0, rel_tol: float = 0.0) -> bool:
    """True when ``a`` is within ``abs_tol`` OR ``rel_tol`` (relative to ``b``) of ``b``.

    A floor of 1e-9 relative / 1e-12 absolute absorbs binary rounding (``0.202 * 100`` vs
    ``20.2``) so that zero tolerances mean "equal as written".
    """
    if math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12):
        return True
    if abs_tol and abs(a - b) <= abs_tol + 1e-12:
        return True
    if rel_tol and abs(a - b) <= rel_tol * abs(b) + 1e-12:
        return True
    return False
