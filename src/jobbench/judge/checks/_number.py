"""Check kind ``number``: a number must appear in the deliverable text (with tolerance), and
the deliverable must not also state near-miss values for it (an enumeration of candidates).
"""

from __future__ import annotations

import re
from pathlib import Path

from ...extract import FolderExtraction
from ...tasks import NumberCheck
from ._common import CheckResult, no_file, snippet, texts_for
from ._numbers import NumberToken, close, find_numbers

RIVAL_TOLERANCES = 10.0
"""A near-miss lies within this many tolerances of the expected value (see :func:`band`)."""
RIVAL_RELATIVE = 0.02
"""... or within this fraction of it, whichever is wider."""
MAX_RIVALS = 1
"""Distinct near-miss values a deliverable may state beside the right one (e.g. a superseded
draft figure it explains); one more fails the check as an enumeration."""

_DECIMALS = re.compile(r"[.](\d+)")


def band(check: NumberCheck) -> float:
    """Half-width of the near-miss band around ``check.value``, in its unit: the wider of
    :data:`RIVAL_TOLERANCES` × the tolerance (``max(abs_tol, rel_tol·|value|)``) and
    :data:`RIVAL_RELATIVE` × ``|value|``."""
    tol = max(check.abs_tol, check.rel_tol * abs(check.value))
    return max(RIVAL_TOLERANCES * tol, RIVAL_RELATIVE * abs(check.value))


def _readings(tok: NumberToken, percent: bool) -> list[tuple[float, float]]:
    """(value, precision) of every reading: precision is one unit of the last digit written,
    in the reading's scale (``95.4%`` read as 0.954 has precision 0.001)."""
    m = _DECIMALS.search(tok.text)
    unit = 10.0 ** -len(m.group(1)) if m else 1.0
    base = abs(tok.value) or 1.0
    out = [(c, unit * abs(c) / base if tok.value else unit) for c in tok.candidates]
    if percent and not tok.percent:
        out += [(c * 100.0, p * 100.0) for c, p in out]
    return out


def evaluate(check: NumberCheck, root: Path, extraction: FolderExtraction | None) -> CheckResult:
    """Pass when some number token in the matching deliverables' text is within tolerance of
    ``check.value`` (any candidate reading, see :mod:`._numbers`), when ``near`` is given one
    of its keywords occurs within ``window`` characters of the token, and the deliverables
    (all matching files together) state at most :data:`MAX_RIVALS` distinct near-miss
    values in the same context. A near-miss is a number in context that is not within
    tolerance, not the expected value rounded or cut to the digits it shows (``95%`` for
    95.35), and lies within :func:`band` of the expected value. More near-misses fail the
    check with ``conflict=True``: a grid of candidates around the answer is not an answer."""
    texts = texts_for(root, check.file, extraction)
    if not texts:
        return no_file("number", check.file, "with text")
    near = [k.casefold() for k in check.near if k.strip()]
    width = band(check)
    close_without_keyword: tuple[str, str] | None = None
    hit: tuple[str, NumberToken, str] | None = None
    rivals: dict[float, tuple[str, str]] = {}
    seen = 0
    for rel, text in texts:
        for tok in find_numbers(text):
            seen += 1
            readings = _readings(tok, check.percent)
            matches = any(close(r, check.value, check.abs_tol, check.rel_tol) for r, _ in readings)
            in_band = any(abs(r - check.value) <= width for r, _ in readings)
            if not matches and not in_band:
                continue
            if near:
                a, b = max(0, tok.start - check.window), min(len(text), tok.end + check.window)
                around = text[a:b].casefold()
                if not any(k in around for k in near):
                    if matches:
                        close_without_keyword = close_without_keyword or (rel, tok.text)
                    continue
            if matches:
                hit = hit or (rel, tok, snippet(text, tok.start, tok.end))
            elif not any(abs(r - check.value) < p for r, p in readings):
                rivals.setdefault(round(tok.value, 9), (rel, tok.text))
    if hit is not None and len(rivals) > MAX_RIVALS:
        listed = ", ".join(f"{t!r} ({r})" for r, t in list(rivals.values())[:6])
        more = f" … {len(rivals) - 6} more" if len(rivals) > 6 else ""
        rel, tok, ev = hit
        return CheckResult(
            passed=False,
            conflict=True,
            file=rel,
            evidence=ev,
            detail=f"{tok.text!r} in {rel} matches {check.value:g} but the deliverables also state "
            f"{len(rivals)} other value(s) within {width:g} of it in the same context: "
            f"{listed}{more}; "
            "several candidate values are not an answer",
        )
    if hit is not None:
        rel, tok, ev = hit
        also = ""
        if rivals:
            ((r_rel, r_text),) = rivals.values()
            also = f"; also states {r_text!r} ({r_rel}) in the same context"
        return CheckResult(
            passed=True,
            detail=f"found {tok.text!r} in {rel} (expected {check.value:g}){also}",
            evidence=ev,
            file=rel,
        )
    if close_without_keyword:
        rel, tok_text = close_without_keyword
        return CheckResult(
            passed=False,
            detail=f"{tok_text!r} in {rel} matches {check.value:g} "
            f"but none of {check.near} is within {check.window} characters",
            file=rel,
        )
    return CheckResult(
        passed=False,
        detail=f"no number within tolerance of {check.value:g} among {seen} number(s) in "
        f"{len(texts)} deliverable(s)",
    )
