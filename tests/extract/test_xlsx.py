"""Workbooks: recalculation (LibreOffice and formulas), stale caches, volatile functions,
errors, fill-down compaction, sheets, budgets and workbook_values."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from pathlib import Path

import openpyxl
import pytest

from jobbench.extract import extract, workbook_values
from jobbench.extract._xlsx import relative_form


def _sales_book(path: Path) -> Path:
    """Data rows with a filled-down formula column and a total; no cached values."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Sales"
    ws.append(["Region", "Units", "Price", "Revenue"])
    rows = [("North", 12, 2.5), ("South", 7, 4.0), ("East", 3, 10.0), ("West", 20, 1.25)]
    for i, (region, units, price) in enumerate(rows, start=2):
        ws.append([region, units, price, f"=B{i}*C{i}"])
    ws["A7"] = "Total"
    ws["D7"] = "=SUM(D2:D5)"
    summary = wb.create_sheet("Q3 Summary")
    summary["A1"] = "Grand total x2"
    summary["B1"] = "='Sales'!D7*2"
    summary["A2"] = "Label"
    summary["B2"] = '=IF(B1>100,"large","small")'
    wb.save(path)
    return path


# Independently computed: 12*2.5=30, 7*4=28, 3*10=30, 20*1.25=25 → 113; x2 = 226
EXPECTED = {"D2": 30, "D3": 28, "D4": 30, "D5": 25, "D7": 113}


def test_script_written_workbook_shows_computed_values(tmp_path, engine):
    path = _sales_book(tmp_path / "sales.xlsx")
    # openpyxl writes no cached values: a naive reader sees nothing
    cached = openpyxl.load_workbook(path, data_only=True)["Sales"]
    assert cached["D7"].value is None

    ext = extract(path, engine=engine)
    assert ext.kind == "xlsx"
    for cell, value in EXPECTED.items():
        assert f"{cell}={value}" in ext.text
    assert "B1=226" in ext.text and "B2=large" in ext.text
    assert "D7=113 [=SUM(D2:D5)]" in ext.text
    engine_name = "LibreOffice" if engine == "libreoffice" else "formulas package"
    infos = [d.message for d in ext.diagnostics if d.level == "info"]
    assert any(engine_name in m for m in infos), infos
    assert ext.errors == []

    wv = workbook_values(path, engine=engine)
    assert wv.engine == engine
    assert wv.sheets == ["Sales", "Q3 Summary"]
    assert {c: wv.values["Sales"][c] for c in EXPECTED} == EXPECTED
    assert wv.get("q3 summary", "$B$1") == 226
    assert wv.get(None, "A1") == "Region"
    assert wv.formulas["Sales"]["D7"] == "=SUM(D2:D5)"
    assert wv.formulas["Q3 Summary"]["B1"] == "='Sales'!D7*2"
    with pytest.raises(KeyError, match="no sheet 'Nope'"):
        wv.get("Nope", "A1")


def test_stale_cached_values_are_recomputed(tmp_path, engine, stale):
    path = _sales_book(tmp_path / "stale.xlsx")
    stale(path, "xl/worksheets/sheet1.xml", {"D2": "999", "D7": "12345"})
    assert openpyxl.load_workbook(path, data_only=True)["Sales"]["D7"].value == 12345

    ext = extract(path, engine=engine)
    assert "D2=30" in ext.text and "D7=113" in ext.text
    assert "12345" not in ext.text.split("\n## ")[1]  # not in the sheet rows
    warning = next(d.message for d in ext.warnings if "stale" in d.message)
    assert "2 formula cell(s) had stale cached values" in warning
    assert "Sales!D7 saved 12345 → 113" in warning
    assert workbook_values(path, engine=engine).get("Sales", "D7") == 113


def test_cached_engine_shows_saved_values_and_says_so(tmp_path, stale):
    path = _sales_book(tmp_path / "stale.xlsx")
    stale(path, "xl/worksheets/sheet1.xml", {"D7": "12345"})
    wv = workbook_values(path, engine="cached")
    assert wv.engine == "cached"
    assert wv.get("Sales", "D7") == 12345
    assert wv.get("Sales", "D2") is None  # no cached value, not recalculated
    assert any("cached values saved in the file" in d.message for d in wv.diagnostics)
    assert any(
        "have no cached value and could not be recalculated" in d.message for d in wv.diagnostics
    )


def test_volatile_functions_are_flagged_and_show_cached_values(tmp_path, engine, stale):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Report"
    ws["A1"] = "As of"
    ws["B1"] = "=TODAY()"
    ws["A2"] = "Noise"
    ws["B2"] = "=RAND()*0+5"
    ws["A3"] = "Plain"
    ws["B3"] = "=2+3"
    ws["B4"] = "=B2+B3"
    ws["B5"] = "=B3+1"
    path = tmp_path / "volatile.xlsx"
    wb.save(path)
    stale(path, "xl/worksheets/sheet1.xml", {"B2": "4.5", "B4": "9.5"})

    ext = extract(path, engine=engine)
    volatile = next(d.message for d in ext.warnings if "volatile" in d.message)
    assert "Report!B1 (TODAY)" in volatile and "Report!B2 (RAND)" in volatile
    assert "Report!B3" not in volatile
    # the cached value is shown for the volatile cell, never a value recalculated now
    cached = "value cached in the file, not recalculated"
    assert f"B2=4.5 [=RAND()*0+5] (volatile RAND: {cached})" in ext.text, ext.text
    none = "no value cached in the file, not recalculated"
    assert f"B1= [=TODAY()] (volatile TODAY: {none})" in ext.text
    assert "B3=5 [=2+3]" in ext.text
    assert f"B4=9.5 [=B2+B3] (depends on Report!B2: {cached})" in ext.text
    assert "B5=6 [=B3+1]" in ext.text
    wv = workbook_values(path, engine=engine)
    assert wv.get("Report", "B2") == 4.5
    assert wv.untrusted["Report"]["B2"].startswith("volatile RAND")
    assert "B3" not in wv.untrusted["Report"]


def test_errors_are_errors_not_zeros(tmp_path, engine):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"] = 10
    ws["A2"] = 0
    ws["B1"] = "=A1/A2"
    ws["B2"] = '=VLOOKUP("zz",A1:A2,1,FALSE)'
    ws["C1"] = "#DIV/0!"  # openpyxl stores this constant as an error cell
    ws["C2"] = "123"  # a number stored as text
    path = tmp_path / "errors.xlsx"
    wb.save(path)
    ext = extract(path, engine=engine)
    assert "B1=#DIV/0! (error) [=A1/A2]" in ext.text
    assert "B2=#N/A (error)" in ext.text
    assert "C1=#DIV/0! (error)" in ext.text
    assert 'C2="123" (text)' in ext.text
    wv = workbook_values(path, engine=engine)
    assert wv.errors["Sheet"] == {"B1": "#DIV/0!", "B2": "#N/A", "C1": "#DIV/0!"}
    assert wv.get("Sheet", "B1") == "#DIV/0!"
    assert wv.get("Sheet", "C2") == "123"
    assert any("3 cell(s) hold error values" in d.message for d in ext.warnings)


def test_long_fill_down_is_compacted(tmp_path, engine):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["x", "double", "running"])
    n = 300
    for i in range(2, n + 2):
        ws.append([i - 1, f"=A{i}*2", f"=C{i - 1}+A{i}" if i > 2 else "=A2"])
    ws[f"B{n + 3}"] = f"=SUM(B2:B{n + 1})"
    path = tmp_path / "fill.xlsx"
    wb.save(path)
    ext = extract(path, engine=engine)
    # formula shown once for the run, with its extent; values in every row
    assert f"B2=2 [=A2*2 ; filled down to B{n + 1}, {n:,} cells]" in ext.text
    assert ext.text.count("=A") == 2  # =A2*2 once, =A2 (C2) once
    assert f"C3=3 [=C2+A3 ; filled down to C{n + 1}, {n - 1:,} cells]" in ext.text
    assert f"B{n + 1}={2 * n} | C{n + 1}={n * (n + 1) // 2}" in ext.text
    assert f"B{n + 3}={n * (n + 1)} [=SUM(B2:B{n + 1})]" in ext.text


def test_relative_form_identifies_fill_down():
    assert relative_form("=A2*2", 2, 2) == relative_form("=A3*2", 3, 2)
    assert relative_form("=$A$1+A2", 2, 2) == relative_form("=$A$1+A3", 3, 2)
    assert relative_form("=$A$1+A2", 2, 2) != relative_form("=$A$2+A3", 3, 2)
    assert relative_form('="A2"&A2', 2, 2) == '="A2"&R[0]C[-1]'  # strings untouched
    assert relative_form("=LOG10(A2)", 2, 2) == "=LOG10(R[0]C[-1])"


def test_sheets_dates_hidden_and_names_kept(tmp_path, engine):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Inputs & Notes (v2)"
    ws["A1"] = dt.date(2024, 1, 31)
    ws["A2"] = "=A1+1"
    ws["A2"].number_format = "yyyy-mm-dd"
    ws["B1"] = 0.125
    ws["B1"].number_format = "0.0%"
    hidden = wb.create_sheet("Workings")
    hidden.sheet_state = "hidden"
    hidden["A1"] = "=1+1"
    wb.create_sheet("Empty")
    path = tmp_path / "sheets.xlsx"
    wb.save(path)
    ext = extract(path, engine=engine)
    assert (
        'Workbook with 3 sheet(s): "Inputs & Notes (v2)", "Workings" (hidden), "Empty"' in ext.text
    )
    assert "A1=2024-01-31" in ext.text and "A2=2024-02-01" in ext.text
    assert "B1=0.125 (12.5%)" in ext.text
    assert '## Sheet "Workings"' in ext.text and "A1=2 [=1+1]" in ext.text
    assert '## Sheet "Empty" (empty)' in ext.text
    wv = workbook_values(path, engine=engine)
    assert wv.hidden_sheets == ["Workings"]
    assert wv.get("Inputs & Notes (v2)", "A2") == "2024-02-01"


def test_deliverable_is_never_modified(tmp_path, engine):
    path = _sales_book(tmp_path / "sales.xlsx")
    before = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
    extract(path, engine=engine, cache=False)
    workbook_values(path, engine=engine, cache=False)
    assert (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sales.xlsx"]


def test_auto_engine_falls_back_to_formulas_without_libreoffice(tmp_path, monkeypatch):
    path = _sales_book(tmp_path / "sales.xlsx")
    monkeypatch.setenv("JOBBENCH_SOFFICE", "none")  # LibreOffice disabled (installed or not)
    wv = workbook_values(path, isolation="none", cache=False)
    assert wv.engine == "formulas"
    assert wv.get("Sales", "D7") == 113
    messages = [d.message for d in wv.diagnostics]
    assert (
        "values recalculated with the formulas package (LibreOffice disabled by JOBBENCH_SOFFICE=none)"
        in messages
    )
    assert not any("not installed" in m for m in messages)  # disabled, which is not "not installed"
    # asking for LibreOffice explicitly also falls back, with a warning
    ext = extract(path, engine="libreoffice", isolation="none", cache=False)
    assert "D7=113" in ext.text
    assert any(
        d.message
        == "LibreOffice requested but not available (LibreOffice disabled by JOBBENCH_SOFFICE=none)"
        for d in ext.warnings
    )


def test_reason_libreoffice_is_unavailable(tmp_path, monkeypatch):
    from jobbench.extract._cache import engine_fingerprint
    from jobbench.extract._limits import ExtractLimits
    from jobbench.extract._soffice import soffice_unavailable_reason

    path = _sales_book(tmp_path / "sales.xlsx")
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    fingerprints = set()
    for value, expected in [
        ("off", "LibreOffice disabled by JOBBENCH_SOFFICE=off"),
        ("", "LibreOffice disabled by JOBBENCH_SOFFICE="),
        (str(tmp_path / "nope"), f"JOBBENCH_SOFFICE={tmp_path / 'nope'} is not an executable"),
        (None, "LibreOffice not installed"),
    ]:
        if value is None:  # a machine without LibreOffice: nothing on PATH, no variable
            monkeypatch.delenv("JOBBENCH_SOFFICE", raising=False)
            monkeypatch.setenv("PATH", str(empty_bin))
        else:
            monkeypatch.setenv("JOBBENCH_SOFFICE", value)
        assert soffice_unavailable_reason() == expected
        wv = workbook_values(path, isolation="none", cache=False)
        assert f"values recalculated with the formulas package ({expected})" in [
            d.message for d in wv.diagnostics
        ]
        fingerprints.add(engine_fingerprint(ExtractLimits()))
    assert len(fingerprints) == 4  # a cached note never quotes another reason


def test_engine_from_environment(tmp_path, monkeypatch):
    path = _sales_book(tmp_path / "sales.xlsx")
    monkeypatch.setenv("JOBBENCH_XLSX_ENGINE", "formulas")
    assert workbook_values(path).engine == "formulas"
    monkeypatch.setenv("JOBBENCH_XLSX_ENGINE", "bogus")
    with pytest.raises(ValueError):
        workbook_values(path)


def test_macros_and_vba_are_flagged(tmp_path, add_member):
    path = _sales_book(tmp_path / "macro.xlsm")
    add_member(path, "xl/vbaProject.bin", b"\xd0\xcf\x11\xe0 not really vba")
    ext = extract(path, engine="formulas")
    assert "D7=113" in ext.text
    assert any("contains macros (vbaProject.bin), never run" in d.message for d in ext.warnings)


def test_big_sheet_does_not_crowd_out_small_sheets(tmp_path):
    wb = openpyxl.Workbook()
    data = wb.active
    data.title = "Data"
    for i in range(1, 3001):
        data.append([f"row {i}", i, i * 3])
    summary = wb.create_sheet("Summary")
    summary["A1"] = "Key finding"
    summary["B1"] = 424242
    path = tmp_path / "big.xlsx"
    wb.save(path)
    ext = extract(path, max_chars=20_000, engine="cached")
    assert len(ext.text) <= 20_000
    assert ext.truncated
    assert "B1=424242" in ext.text  # the small sheet keeps all of its text
    assert "A1=row 1 " in ext.text and "A3000=row 3000 " in ext.text  # head and tail of the big one
    assert re.search(
        r'\[\.\.\. truncated: [0-9,]+ rows of sheet "Data" \(rows [0-9]+–[0-9]+\) omitted here',
        ext.text,
    )
    assert "A1500=row 1500 " not in ext.text


def test_workbook_values_rejects_non_workbooks(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("hello")
    with pytest.raises(ValueError, match="notes.txt: not an xlsx/xlsm workbook"):
        workbook_values(p)
    q = tmp_path / "fake.xlsx"
    q.write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    with pytest.raises(ValueError, match="fake.xlsx"):
        workbook_values(q)
    with pytest.raises(FileNotFoundError, match="missing.xlsx"):
        workbook_values(tmp_path / "missing.xlsx")


def test_formulas_fallback_skips_very_large_workbooks(tmp_path, stale):
    from jobbench.extract import ExtractLimits

    path = _sales_book(tmp_path / "sales.xlsx")
    stale(path, "xl/worksheets/sheet1.xml", {"D7": "113"})
    wv = workbook_values(path, limits=ExtractLimits(xlsx_engine="formulas", formulas_max_cells=3))
    assert wv.engine == "cached"
    assert wv.get("Sales", "D7") == 113 and wv.get("Sales", "D2") is None
    msgs = [d.message for d in wv.diagnostics if d.level == "warning"]
    assert "formulas recalculation skipped: 7 formula cells exceed its limit of 3" in msgs[0]


def test_external_links_show_cached_values(tmp_path, engine, stale):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Links"
    ws["A1"] = "From the budget file"
    ws["B1"] = "=[1]Budget!C7"
    ws["B2"] = "=B1*2"
    path = tmp_path / "linked.xlsx"
    wb.save(path)
    stale(path, "xl/worksheets/sheet1.xml", {"B1": "250", "B2": "500"})
    ext = extract(path, engine=engine)
    assert "B1=250 [=[1]Budget!C7] (external link: value cached in the file" in ext.text
    # its dependent is not recalculated from an unresolvable link either
    assert "B2=500 [=B1*2] (depends on Links!B1: value cached in the file" in ext.text
    assert any(d.message.startswith("external links in 1 cell(s): Links!B1") for d in ext.warnings)
    assert any(
        d.message.startswith("1 formula cell(s) depend on those cells") for d in ext.warnings
    )
    wv = workbook_values(path, engine=engine)
    assert (wv.get("Links", "B1"), wv.get("Links", "B2")) == (250, 500)
    assert sorted(wv.untrusted["Links"]) == ["B1", "B2"]
    assert not wv.errors


def test_untrusted_propagates_through_chains_ranges_and_names(monkeypatch):
    from jobbench.extract import _xlsx
    from jobbench.extract._xlsx import SheetData, formula_refs, propagate_untrusted

    assert formula_refs(
        "=SUM(A1:B3)+'My Sheet'!$D$5+A:A+Rate+\"C9\"", "S", {"RATE": "Inputs!$B$2"}
    ) == [
        ("S", 1, 1, 3, 2),
        ("My Sheet", 5, 4, 5, 4),
        ("S", 1, 1, 1_048_576, 1),
        ("Inputs", 2, 2, 2, 2),
    ]
    data = SheetData(name="Data", formulas={"A1": "=NOW()"})
    for r in range(2, 2001):  # a running chain: A2 = A1+1, A3 = A2+1, …
        data.formulas[f"A{r}"] = f"=A{r - 1}+1"
    data.formulas["C1"] = "=SUM(A1:A5)"
    data.formulas["D1"] = "=7"
    other = SheetData(name="Out", formulas={"A1": "=Data!C1", "B1": "=Stamp*2", "C1": "=Data!D1"})
    reasons, complete = propagate_untrusted(
        [data, other], {("Data", "A1"): "volatile NOW"}, [("Stamp", "Data!$A$1")]
    )
    assert complete
    assert reasons[("Data", "A2000")] == "depends on Data!A1"
    assert reasons[("Out", "A1")] == "depends on Data!A1"
    assert reasons[("Out", "B1")] == "depends on Data!A1"
    assert ("Data", "D1") not in reasons and ("Out", "C1") not in reasons
    monkeypatch.setattr(_xlsx, "PROPAGATION_WORK", 10)
    reasons, complete = propagate_untrusted([data, other], {("Data", "A1"): "volatile NOW"}, [])
    assert not complete and ("Out", "C1") in reasons
