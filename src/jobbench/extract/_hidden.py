"""Content a reader of the file does not see: hidden runs (``w:vanish``), white or tiny text
in docx, hidden slides and shapes in pptx, hidden sheets, rows and columns in xlsx.

It is shown to the judge, always marked, never as ordinary text, in one of two forms that a
deliverable cannot imitate to pass hidden text off as visible:

* a **hidden line** (:func:`hidden_lines`): every line of a hidden block starts with
  ``[hidden: <why>]``; the block is split at every line break :meth:`str.splitlines` knows,
  so no hidden character ends up on an unmarked line;
* an **inline hidden run** (:func:`hidden_inline`): ``[hidden text (<why>): "<JSON string>"]``
  where the text is a JSON string literal (quotes and line breaks escaped), so the run
  cannot close its own quotes early.

Both are extractor notes (:mod:`._notes`), so hidden content is not part of
:meth:`jobbench.extract.Extraction.content` (what the ``number`` and ``regex`` checks read:
what the file states to a reader). Each hidden part is also recorded on the context
(:attr:`Context.hidden`, then :attr:`jobbench.extract.Extraction.hidden`), where the judge
looks for prompt injection.
"""

from __future__ import annotations

import json

from ._notes import note

HIDDEN_KEEP = 100
"""Hidden parts recorded per file (each cut to :data:`HIDDEN_EXCERPT` characters)."""
HIDDEN_EXCERPT = 2000


def hidden_lines(text: str, why: str) -> str:
    """``text`` with every line marked ``[hidden: why]`` (one note per line)."""
    lines = text.splitlines() or [""]
    return "\n".join(note(f"[hidden: {why}] {line}") for line in lines)


def hidden_inline(text: str, why: str) -> str:
    """``text`` as one inline note ``[hidden text (why): "…"]`` (a JSON string literal)."""
    return note(f"[hidden text ({why}): {json.dumps(text, ensure_ascii=False)}]")


def record(hidden: list[tuple[str, str]], why: str, text: str) -> None:
    """Add a hidden part ``(why, excerpt)`` to ``hidden`` (bounded by :data:`HIDDEN_KEEP`)."""
    if text.strip() and len(hidden) < HIDDEN_KEEP:
        hidden.append((why, text[:HIDDEN_EXCERPT]))
