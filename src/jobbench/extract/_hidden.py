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

WHITE_MIN = 0xF0
"""A colour whose red, green and blue are all at least this is white or near-white."""
SAME_COLOUR_MAX = 0x18
"""Text whose colour differs from its background by at most this in each of red, green and
blue is drawn in the background's colour (unreadable)."""

HIDDEN_KEEP = 100
"""Hidden parts recorded per file (each cut to :data:`HIDDEN_EXCERPT` characters)."""
HIDDEN_EXCERPT = 2000


def _rgb(color: str | None) -> tuple[int, int, int] | None:
    """``RRGGBB`` or ``AARRGGBB`` (alpha ignored) as three integers; None otherwise."""
    if not color or len(color) not in (6, 8):
        return None
    try:
        c = color[-6:]
        return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)
    except ValueError:
        return None


def is_white(color: str | None) -> bool:
    """True for an ``RRGGBB`` / ``AARRGGBB`` colour at or above :data:`WHITE_MIN` in each
    channel."""
    rgb = _rgb(color)
    return rgb is not None and all(v >= WHITE_MIN for v in rgb)


def same_colour(a: str | None, b: str | None) -> bool:
    """True when two ``RRGGBB`` / ``AARRGGBB`` colours differ by at most
    :data:`SAME_COLOUR_MAX` in every channel."""
    x, y = _rgb(a), _rgb(b)
    return (
        x is not None and y is not None and all(abs(p - q) <= SAME_COLOUR_MAX for p, q in zip(x, y))
    )


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
