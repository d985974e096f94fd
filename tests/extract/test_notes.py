"""Extractor annotations are recorded as note spans: ``text`` is unchanged for the judge,
``content()`` drops them, truncation never turns half a note into content, and the spans
survive the worker and the cache."""

from __future__ import annotations

from pathlib import Path

import openpyxl

from jobbench.extract import EXTRACTOR_VERSION, Extraction, extract
from jobbench.extract._budget import head_tail
from jobbench.extract._notes import NOTE_CLOSE, NOTE_OPEN, NOTE_START, note, split_notes


def test_split_notes_spans_and_stray_delimiters() -> None:
    text, spans = split_notes("a" + note("[n 1]") + "b" + NOTE_CLOSE + "c" + NOTE_OPEN + "d\ufdd5e")
    assert text == "a[n 1]bcde"
    assert spans == [(1, 6)]  # a stray close or open (without the secret token) means nothing
    assert (
        note("x" + NOTE_CLOSE + "7") == NOTE_START + "x7" + NOTE_CLOSE
    )  # content cannot close a note
    assert len(NOTE_START) == 17 and all("\ufdd2" <= c <= "\ufdef" for c in NOTE_START[1:])


def test_a_start_sequence_cut_by_truncation_leaves_no_content() -> None:
    from jobbench.extract._notes import balance_cut

    marked = "keep " + note("[note 123]") + " tail"
    cut_at = len("keep ") + 7  # inside the start sequence's token
    head, tail = balance_cut(marked[:cut_at], marked[cut_at:])
    text, spans = split_notes(head + tail)
    assert text == "keep [note 123] tail"
    ext = Extraction(path="x", kind="text", text=text, notes=spans)
    assert ext.content().split() == ["keep", "tail"]


def test_head_tail_cut_inside_a_note_keeps_both_halves_notes() -> None:
    inner = "a " * 400 + "777"
    cut, was_cut = head_tail("start\n" + note(inner), 300)
    assert was_cut
    text, spans = split_notes(cut)
    ext = Extraction(path="x", kind="text", text=text, notes=spans)
    assert "777" in ext.text
    assert ext.content().strip() == "start"


def test_content_drops_notes_and_cache_keeps_them(tmp_path: Path) -> None:
    # output changed (notes, volatile cells, hidden content, markers): no old entry is reused
    assert EXTRACTOR_VERSION == "6"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"], ws["B1"], ws["C1"] = 10, "=A1*0.2", "5"
    p = tmp_path / "w.xlsx"
    wb.save(p)
    first = extract(p, cache=tmp_path / "cache")
    again = extract(p, cache=tmp_path / "cache")
    assert again.cached and again.notes == first.notes and again.text == first.text
    assert 'A1=10 | B1=2 [=A1*0.2] | C1="5" (text)' in first.text
    assert first.content().split() == ["10", "|", "2", "|", '"5"']
    for ex in (first, again):
        assert NOTE_OPEN not in ex.text and NOTE_CLOSE not in ex.text
        assert all(NOTE_OPEN not in d.message for d in ex.diagnostics)
