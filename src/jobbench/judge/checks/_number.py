"""Check kind ``number``: a number must appear in the deliverable text (with tolerance)."""

from __future__ import annotations

from pathlib import Path

from ...extract import FolderExtraction
from ...tasks import NumberCheck
from ._common import CheckResult, no_file, snippet, texts_for
from ._numbers import close, find_numbers


def evaluate(check: NumberCheck, root: Path, extraction: FolderExtraction | None) -> CheckResult:
    """Pass when some number token in the matching deliverables' text is within tolerance of
    ``check.value`` (any candidate reading, see :mod:`._numbers`) and, when ``near`` is
    given, one of its keywords occurs within ``window`` characters of the token."""
    texts = texts_for(root, check.file, extraction)
    if not texts:
        return no_file("number", check.file, "with text")
    near = [k.casefold() for k in check.near if k.strip()]
    close_without_keyword: tuple[str, str] | None = None
    seen = 0
    for rel, text in texts:
        for tok in find_numbers(text):
            seen += 1
            readings = list(tok.candidates)
            if check.percent and not tok.percent:
                readings += [c * 100.0 for c in tok.candidates]
            if not any(close(r, check.value, check.abs_tol, check.rel_tol) for r in readings):
                continue
            if near:
                a, b = max(0, tok.start - check.window), min(len(text), tok.end + check.window)
                around = text[a:b].casefold()
                if not any(k in around for k in near):
                    close_without_keyword = close_without_keyword or (rel, tok.text)
                    continue
            return CheckResult(
                passed=True,
                detail=f"found {tok.text!r} in {rel} (expected {check.value:g})",
                evidence=snippet(text, tok.start, tok.end),
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
