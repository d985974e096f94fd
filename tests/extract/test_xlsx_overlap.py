"""LibreOffice recalculates a workbook while the formula pass reads it (issue 20): the
conversion starts first, only for a workbook that has formulas, and is stopped whatever
happens to the extraction. Extraction runs in-process here so the probes see the calls."""

from __future__ import annotations

import zipfile
from pathlib import Path

import openpyxl
import pytest

from jobbench.extract import ExtractLimits, _soffice, _xlsx, extract
from jobbench.extract._base import Source

from .conftest import needs_soffice

LIMITS = ExtractLimits(xlsx_engine="libreoffice")


def _book(path: Path, formula: bool) -> Path:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"], ws["A2"] = 2, 3
    ws["A3"] = "=A1*A2" if formula else 6
    wb.save(path)
    return path


class _Probe:
    """Wraps _soffice.Conversion and _xlsx._formula_pass, recording the order of events."""

    def __init__(self, monkeypatch) -> None:
        self.events: list[str] = []
        real_conversion, real_pass = _soffice.Conversion, _xlsx._formula_pass
        probe = self

        class Conversion(real_conversion):  # type: ignore[misc, valid-type]
            def __init__(self, *a, **kw) -> None:
                probe.events.append("libreoffice started")
                super().__init__(*a, **kw)

            def wait(self):
                probe.events.append("libreoffice awaited")
                return super().wait()

            def cancel(self) -> None:
                probe.events.append("libreoffice stopped")
                super().cancel()

        def formula_pass(*a, **kw):
            probe.events.append("formula pass")
            return real_pass(*a, **kw)

        monkeypatch.setattr(_soffice, "Conversion", Conversion)
        monkeypatch.setattr(_xlsx, "_formula_pass", formula_pass)


@needs_soffice
def test_libreoffice_starts_before_the_formula_pass_and_is_stopped(tmp_path, monkeypatch):
    probe = _Probe(monkeypatch)
    ext = extract(_book(tmp_path / "f.xlsx", True), cache=False, limits=LIMITS, isolation="none")
    assert "A3=6 [=A1*A2]" in ext.text, ext.text
    assert probe.events == [
        "libreoffice started",
        "formula pass",
        "libreoffice awaited",
        "libreoffice stopped",  # closing a finished conversion only cleans up
    ]


@needs_soffice
def test_a_workbook_without_formulas_never_starts_libreoffice(tmp_path, monkeypatch):
    probe = _Probe(monkeypatch)
    ext = extract(_book(tmp_path / "c.xlsx", False), cache=False, limits=LIMITS, isolation="none")
    assert "A3=6" in ext.text
    assert probe.events == ["formula pass"]


@needs_soffice
def test_a_failing_formula_pass_stops_the_running_conversion(tmp_path, monkeypatch):
    probe = _Probe(monkeypatch)

    def broken(*a, **kw):
        probe.events.append("formula pass")
        raise zipfile.BadZipFile("boom")

    monkeypatch.setattr(_xlsx, "_formula_pass", broken)
    ext = extract(_book(tmp_path / "f.xlsx", True), cache=False, limits=LIMITS, isolation="none")
    assert any("boom" in d.message for d in ext.diagnostics), ext.diagnostics
    assert probe.events == ["libreoffice started", "formula pass", "libreoffice stopped"]


@pytest.mark.parametrize(
    ("xml", "expected"),
    [
        ('<c r="A3"><f>A1*A2</f><v>6</v></c>', True),
        ('<x:c r="A3"><x:f>A1*A2</x:f></x:c>', True),  # a prefixed namespace
        ('<c r="A3"><f t="shared" si="0"/></c>', True),
        ('<c r="A3" t="inlineStr"><is><t>f of x</t></is></c>', False),
        ('<c r="A3"><v>6</v></c><font/>', False),
    ],
)
def test_the_formula_scan_finds_every_formula_element(tmp_path, xml, expected) -> None:
    path = tmp_path / "b.xlsx"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(
            "xl/worksheets/sheet1.xml",
            f"<worksheet><sheetData><row>{xml}</row></sheetData></worksheet>",
        )
    assert _xlsx.may_have_formulas(Source(path)) is expected


_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def _sheet_zip(path: Path, cells: str, root: str = f'<worksheet xmlns="{_NS}">') -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(
            "xl/worksheets/sheet1.xml",
            '<?xml version="1.0" encoding="UTF-8"?>'
            f'{root}<sheetData><row r="1">{cells}</row></sheetData></worksheet>',
        )
    return path


@pytest.mark.parametrize(
    "cells",
    [
        '<c r="A1" s="0" t="n"><f aca="false">B1*2</f><v>37.5</v></c>'
        '<c r="B1" s="0" t="str"><f>X</f><v>a &amp; b&#13;c</v></c>'
        '<c r="C1" t="inlineStr"><is><t>in</t><r><t>line</t></r></is></c>'
        '<c r="D1" t="b"><v>1</v></c><c r="E1" t="e"><f>1/0</f><v>#DIV/0!</v></c>'
        '<c r="F1" s="0" t="n"/><c r="G1" t="n"><v xml:space="preserve"> 7</v></c>',
    ],
)
def test_the_fast_values_scan_decodes_as_lxml_does(tmp_path, cells, monkeypatch) -> None:
    from jobbench.extract import _xlsx_read as r

    zf = zipfile.ZipFile(_sheet_zip(tmp_path / "b.xlsx", cells))
    pkg = r.Package(sheets=[], date1904=False, defined_names=[])
    pkg.looks = [r.Look("General", "000000", None, None, pkg.palette)]
    wanted = {"A1", "B1", "C1", "D1", "E1", "F1", "G1"}
    fast = r._fast_stored_values(zf, "xl/worksheets/sheet1.xml", pkg, wanted)
    monkeypatch.setattr(r, "FAST_MAX_BYTES", -1)  # the streaming lxml reader
    slow = list(r.stored_values(zf, "xl/worksheets/sheet1.xml", pkg, wanted))
    assert fast == slow
    assert [v for _c, v, _t, _f in slow] == [37.5, "a & b\rc", "inline", True, "#DIV/0!", None, 7.0]


@pytest.mark.parametrize(
    ("cells", "root"),
    [
        ('<x:c r="A1"><x:v>1</x:v></x:c>', f'<x:worksheet xmlns:x="{_NS}">'),  # prefixed
        ("<c><v>1</v></c>", f'<worksheet xmlns="{_NS}">'),  # no coordinate
        ('<c r="A1" cm="1"><v>1</v></c>', f'<worksheet xmlns="{_NS}">'),  # other attribute
        ('<!-- <c r="A1"><v>9</v></c> --><c r="A1"><v>1</v></c>', f'<worksheet xmlns="{_NS}">'),
    ],
)
def test_the_fast_values_scan_leaves_other_shapes_to_lxml(tmp_path, cells, root) -> None:
    from jobbench.extract import _xlsx_read as r

    zf = zipfile.ZipFile(_sheet_zip(tmp_path / "b.xlsx", cells, root))
    pkg = r.Package(sheets=[], date1904=False, defined_names=[])
    pkg.looks = [r.Look("General", "000000", None, None, pkg.palette)]
    assert r._fast_stored_values(zf, "xl/worksheets/sheet1.xml", pkg, {"A1"}) is None


def _filled(path: Path) -> Path:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["units", "price", "revenue"])
    for i in range(2, 40):
        ws.append([i, 1.5, f"=A{i}*B{i}"])
    ws["E1"] = "=SUM(C2:C39)"
    wb.save(path)
    return path


@needs_soffice
def test_rendering_prepared_while_libreoffice_works_reads_the_same(tmp_path, monkeypatch):
    probe = _Probe(monkeypatch)
    real = _xlsx.prepare_render

    def prepare(sheets):
        probe.events.append("render prepared")
        return real(sheets)

    monkeypatch.setattr(_xlsx, "prepare_render", prepare)
    book = _filled(tmp_path / "f.xlsx")
    ext = extract(book, cache=False, limits=LIMITS, isolation="none")
    assert probe.events[:4] == [
        "libreoffice started",
        "formula pass",
        "render prepared",
        "libreoffice awaited",
    ]
    assert "C2=3 [=A2*B2 ; filled down to C39, 38 cells]" in ext.text, ext.text
    monkeypatch.setattr(_xlsx, "prepare_render", lambda sheets: None)
    assert extract(book, cache=False, limits=LIMITS, isolation="none").text == ext.text
