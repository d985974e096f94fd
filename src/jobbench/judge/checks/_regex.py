"""Check kind ``regex``: a regular expression must (or must not) match the deliverable text."""

from __future__ import annotations

import re
from pathlib import Path

from ...extract import FolderExtraction
from ...tasks import RegexCheck
from ._common import CheckResult, no_file, snippet, texts_for


def evaluate(check: RegexCheck, root: Path, extraction: FolderExtraction | None) -> CheckResult:
    """Count matches of ``check.pattern`` over every matching deliverable's text.

    Passes when the total is at least ``min_count``, or, with ``absent=True``, when it is 0.
    An invalid pattern is a broken check (``error=True``).
    """
    try:
        flags = re.MULTILINE | (re.IGNORECASE if check.ignore_case else 0)
        rx = re.compile(check.pattern, flags)
    except re.error as exc:
        return CheckResult(
            passed=False, error=True, detail=f"regex: invalid pattern /{check.pattern}/: {exc}"
        )
    texts = texts_for(root, check.file, extraction)
    if not texts:
        if check.absent:
            return CheckResult(
                passed=True, detail="regex: no deliverable text, so the pattern is absent"
            )
        return no_file("regex", check.file, "with text")
    count = 0
    first: tuple[str, str] | None = None
    for rel, text in texts:
        for m in rx.finditer(text):
            count += 1
            if first is None:
                first = (rel, snippet(text, m.start(), m.end()))
    if check.absent:
        if count == 0:
            return CheckResult(
                passed=True,
                detail=f"pattern /{check.pattern}/ absent from {len(texts)} deliverable(s)",
            )
        assert first is not None
        return CheckResult(
            passed=False,
            detail=f"pattern /{check.pattern}/ must be absent but matched {count}×",
            evidence=first[1],
            file=first[0],
        )
    if count >= check.min_count and first is not None:
        return CheckResult(
            passed=True,
            detail=f"pattern /{check.pattern}/ matched {count}× (need {check.min_count})",
            evidence=first[1],
            file=first[0],
        )
    return CheckResult(
        passed=False,
        detail=f"pattern /{check.pattern}/ matched {count}× (need {check.min_count})",
        evidence=first[1] if first else "",
        file=first[0] if first else None,
    )
