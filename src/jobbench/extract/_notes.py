"""Extractor annotations ("notes"): text the extractor writes about a file, as opposed to
text the file itself holds.

Every extractor wraps what it adds (summaries such as ``[table: 120 rows × 4 columns …]``,
sheet headers, cell coordinates ``A1=``, formulas ``[=SUM(B2:B9)]``, image notes, page and
slide headers, diagnostics, truncation markers, …) with :func:`note`. Internally a note is
delimited by two Unicode noncharacters, :data:`NOTE_OPEN` (U+FDD0) and :data:`NOTE_CLOSE`
(U+FDD1); :func:`split_notes` removes the delimiters and returns the note spans, which
:class:`jobbench.extract.Extraction` keeps in ``notes`` so that
:meth:`~jobbench.extract.Extraction.content` can give the file's own text with every
annotation removed (what the judge's ``number`` and ``regex`` checks read), while ``text``
(what the LLM judge reads) is unchanged.

Why a deliverable cannot forge or hide a note to its advantage:

* :func:`note` deletes both delimiters from whatever it wraps, so file content quoted
  inside a note (a sheet name, a CSV header) cannot close the note early;
* a delimiter written by the file itself is deleted from ``text``; a stray U+FDD1 ends
  nothing, and a stray U+FDD0 starts a span that runs to the next real note's end (or to
  the end of the text). Content can therefore only make *more* text count as annotation,
  which makes checks stricter, never more lenient;
* :func:`balance_cut` re-closes a note cut in two by a truncation, so the tail half of a
  cut note is never read as content.

Only the extractor's own notes are removed from the content view. Text the deliverable
itself holds counts whatever it looks like: a memo line ``[Output: 33 units shipped]`` or
``## Table 1 (34 rows flagged)`` states its number as plainly to a reader (and to the LLM
judge) as any other line, so it is content even if it resembles an annotation.

Noncharacters are "permanently reserved for internal use" (Unicode Standard §23.7); a
deliverable holding U+FDD0 or U+FDD1 loses those two characters from the extracted text.
"""

from __future__ import annotations

NOTE_OPEN = "\ufdd0"
"""Starts an extractor annotation inside an extractor's output (never in final text)."""
NOTE_CLOSE = "\ufdd1"
"""Ends an extractor annotation."""


def note(text: str) -> str:
    """``text`` marked as an extractor annotation (delimiters inside it are removed first).

    An empty ``text`` gives ``''``."""
    text = text.replace(NOTE_OPEN, "").replace(NOTE_CLOSE, "")
    return f"{NOTE_OPEN}{text}{NOTE_CLOSE}" if text else ""


def unmark(text: str) -> str:
    """``text`` with every note delimiter removed (notes kept as plain text)."""
    return text.replace(NOTE_OPEN, "").replace(NOTE_CLOSE, "")


def split_notes(marked: str) -> tuple[str, list[tuple[int, int]]]:
    """Separate an extractor's marked output into plain text and note spans.

    Returns:
        ``(text, spans)``: ``text`` is ``marked`` without delimiters; ``spans`` are sorted,
        non-overlapping, non-adjacent ``(start, end)`` character ranges of ``text`` that are
        annotations. An unclosed note runs to the end of the text; a close without an open
        is ignored.
    """
    if NOTE_OPEN not in marked and NOTE_CLOSE not in marked:
        return marked, []
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = 0  # length of the plain text so far
    start: int | None = None
    i = 0
    n = len(marked)
    while i < n:
        j_open = marked.find(NOTE_OPEN, i)
        j_close = marked.find(NOTE_CLOSE, i)
        cands = [j for j in (j_open, j_close) if j >= 0]
        j = min(cands) if cands else n
        chunk = marked[i:j]
        out.append(chunk)
        pos += len(chunk)
        if j >= n:
            break
        if marked[j] == NOTE_OPEN:
            if start is None:
                start = pos
        elif start is not None:  # NOTE_CLOSE ending an open note
            if pos > start:
                if spans and spans[-1][1] == start:
                    spans[-1] = (spans[-1][0], pos)
                else:
                    spans.append((start, pos))
            start = None
        i = j + 1
    if start is not None and pos > start:
        if spans and spans[-1][1] == start:
            spans[-1] = (spans[-1][0], pos)
        else:
            spans.append((start, pos))
    return "".join(out), spans


def _open_at_end(text: str) -> bool:
    return text.rfind(NOTE_OPEN) > text.rfind(NOTE_CLOSE)


def balance_cut(head: str, tail: str) -> tuple[str, str]:
    """Re-close notes cut by a truncation: ``head`` ending inside a note gets a
    :data:`NOTE_CLOSE`; ``tail`` starting inside a note (a close before any open) gets a
    :data:`NOTE_OPEN` in front."""
    if _open_at_end(head):
        head += NOTE_CLOSE
    first_close = tail.find(NOTE_CLOSE)
    if first_close >= 0:
        first_open = tail.find(NOTE_OPEN)
        if first_open < 0 or first_open > first_close:
            tail = NOTE_OPEN + tail
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
