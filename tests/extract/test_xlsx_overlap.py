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
