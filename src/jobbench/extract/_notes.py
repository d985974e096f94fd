"""Extractor annotations ("notes"): text the extractor writes about a file, as opposed to
text the file itself holds.

Every extractor wraps what it adds (summaries such as ``[table: 120 rows × 4 columns …]``,
sheet headers, cell coordinates ``A1=``, formulas ``[=SUM(B2:B9)]``, image notes, page and
slide headers, diagnostics, truncation markers, …) with :func:`note`. Internally a note is
delimited by Unicode noncharacters, :data:`NOTE_START` (U+FDD0 and a secret token) and
:data:`NOTE_CLOSE` (U+FDD1); :func:`split_notes` removes them and returns the note spans, which
:class:`jobbench.extract.Extraction` keeps in ``notes`` so that
:meth:`~jobbench.extract.Extraction.content` can give the file's own text with every
annotation removed (what the judge's ``number`` and ``regex`` checks read), while ``text``
(what the LLM judge reads) is unchanged.

Why a deliverable cannot forge, hide or break a note:

* a note starts with :data:`NOTE_OPEN` followed by a secret token of 16 noncharacters drawn
  at random in each process (:data:`NOTE_START`), which a file cannot guess; a U+FDD0 or
  U+FDD1 written by the file itself therefore starts or ends nothing;
* every character of the reserved block U+FDD0–U+FDEF is deleted from the text, from the
  file's content as from inside notes (:func:`note` deletes them from whatever it wraps, so
  content quoted inside a note, such as a sheet name, cannot end the note early);
* :func:`balance_cut` re-closes a note cut in two by a truncation (even inside its start
  sequence), so the tail half of a cut note is never read as content.

Only the extractor's own notes are removed from the content view. Text the deliverable
itself holds counts whatever it looks like: a memo line ``[Output: 33 units shipped]`` or
``## Table 1 (34 rows flagged)`` states its number as plainly to a reader (and to the LLM
judge) as any other line, so it is content even if it resembles an annotation.

Noncharacters are "permanently reserved for internal use" (Unicode Standard §23.7,
U+FDD0–U+FDEF); a deliverable holding any of them loses those characters from the extracted
text.
"""

from __future__ import annotations

import re
import secrets

NOTE_OPEN = "\ufdd0"
"""First character of a note's start sequence (alone, it means nothing)."""
NOTE_CLOSE = "\ufdd1"
"""Ends an extractor annotation."""
_TOKEN_ALPHABET = [chr(c) for c in range(0xFDD2, 0xFDF0)]
NOTE_START = NOTE_OPEN + "".join(secrets.choice(_TOKEN_ALPHABET) for _ in range(16))
"""Starts an extractor annotation: U+FDD0 and a per-process secret token (30^16 choices),
so file content cannot start a note. Marking and splitting happen in the same process."""
RESERVED = re.compile("[\ufdd0-\ufdef]")
"""Any character of the reserved block U+FDD0–U+FDEF (note marks and their token)."""
_RESERVED = RESERVED
_MARKS = re.compile(re.escape(NOTE_START) + "|" + NOTE_CLOSE)


def note(text: str) -> str:
    """``text`` marked as an extractor annotation (reserved characters inside it are removed
    first). An empty ``text`` gives ``''``."""
    text = _RESERVED.sub("", text)
    return f"{NOTE_START}{text}{NOTE_CLOSE}" if text else ""


def split_notes(marked: str) -> tuple[str, list[tuple[int, int]]]:
    """Separate an extractor's marked output into plain text and note spans.

    Returns:
        ``(text, spans)``: ``text`` is ``marked`` without marks and without any character
        of U+FDD0–U+FDEF; ``spans`` are sorted, non-overlapping, non-adjacent ``(start,
        end)`` character ranges of ``text`` that are annotations. Only :data:`NOTE_START`
        opens a note; a note left open runs to the end of the text; a close outside a note
        is ignored.
    """
    if not _RESERVED.search(marked):
        return marked, []
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = 0  # length of the plain text so far
    start: int | None = None

    def close(end: int) -> None:
        if start is not None and end > start:
            if spans and spans[-1][1] == start:
                spans[-1] = (spans[-1][0], end)
            else:
                spans.append((start, end))

    i = 0
    for m in _MARKS.finditer(marked):
        chunk = _RESERVED.sub("", marked[i : m.start()])
        out.append(chunk)
        pos += len(chunk)
        if m.group() == NOTE_CLOSE:
            close(pos)
            start = None
        elif start is None:
            start = pos
        i = m.end()
    chunk = _RESERVED.sub("", marked[i:])
    out.append(chunk)
    pos += len(chunk)
    close(pos)
    return "".join(out), spans


def _open_at_end(text: str) -> bool:
    return text.rfind(NOTE_START) > text.rfind(NOTE_CLOSE)


def balance_cut(head: str, tail: str) -> tuple[str, str]:
    """Re-close notes cut by a truncation: ``head`` ending inside a note gets a
    :data:`NOTE_CLOSE`; ``tail`` starting inside a note (a close before any start) gets a
    :data:`NOTE_START` in front. A start sequence cut in two leaves only reserved
    characters, which :func:`split_notes` deletes."""
    if _open_at_end(head):
        head += NOTE_CLOSE
    first_close = tail.find(NOTE_CLOSE)
    if first_close >= 0:
        first_open = tail.find(NOTE_START)
        if first_open < 0 or first_open > first_close:
            tail = NOTE_START + tail
    return head, tail


def without_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with every span removed. A removed span leaves one space where it would
    otherwise glue two non-space characters together (``5[note]3`` → ``5 3``, never
    ``53``); otherwise it leaves nothing, so line structure is kept."""
    if not spans:
        return text
    parts: list[str] = []
    last = 0
    for a, b in spans:
        a, b = max(a, last), min(b, len(text))
        if b <= a:
            continue
        parts.append(text[last:a])
        before = text[a - 1] if a > 0 else " "
        after = text[b] if b < len(text) else " "
        if not before.isspace() and not after.isspace():
            parts.append(" ")
        last = b
    parts.append(text[last:])
    return "".join(parts)
