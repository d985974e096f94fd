"""The regular-expression reading of a worksheet's cells (``_xlsx_read._fast_sheet`` /
``_scan_body``) gives what lxml alone gives, for regular sheets, for sheets it hands to lxml
part-way, and for malformed ones (the same exception).

Each case is a hand-written ``xl/worksheets/sheet1.xml`` in a package openpyxl wrote."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import openpyxl
import pytest

from jobbench.extract import _xlsx_read as xr

NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
R = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
X14 = 'xmlns:x14ac="http://schemas.microsoft.com/office/spreadsheetml/2009/9/ac"'
DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
ROWS = "".join(
    f'<row r="{i}"><c r="A{i}" t="n"><v>{i}</v></c><c r="B{i}"><f>A{i}*2</f><v></v></c>'
    f'<c r="C{i}" t="inlineStr"><is><t>s{i}</t></is></c></row>'
    for i in range(1, 8)
)


def _sheet(body: str, root: str = f"{NS} {R}", head: str = "", tail: str = "") -> str:
    return f"{DECL}<worksheet {root}>{head}<sheetData>{body}</sheetData>{tail}</worksheet>"


CASES = {
    # regular
    "plain": _sheet(ROWS),
    "empty": _sheet(""),
    "cells outside rows": _sheet('<c r="A1"><v>1</v></c><row r="2"><c><v>2</v></c></row>'),
    "values of every type": _sheet(
        '<row r="1"><c r="A1"><v></v></c><c r="B1"><f/></c><c r="C1"><f></f><v/></c>'
        '<c r="D1" t="inlineStr"><is><t xml:space="preserve"> pad </t></is></c>'
        '<c r="E1" t="b"><v>1</v></c><c r="F1" t="e"><v>#DIV/0!</v></c>'
        '<c r="G1" t="d"><v>2024-01-02T00:00:00</v></c><c r="H1" t="s"><v>0</v></c>'
        '<c r="I1"><v>007</v></c><c r="A01"><v>1</v></c><c r="ZZZ9999999"><v>2</v></c>'
        '<c r="J1" t="str"><f>K1</f><v></v></c><c r="K1" t="e"><v></v></c></row>'
    ),
    "another namespace first": _sheet(
        ROWS, root=f'{NS} xmlns:y="urn:y"', head='<y:cols><y:col min="1" max="1"/></y:cols>'
    ),
    "shared and array formulas": _sheet(
        '<row r="1"><c r="A1"><f t="shared" ref="A1:A3" si="0">B1*2</f><v>2</v></c>'
        '<c r="B1"><f t="array" ref="B1:C2">{1,2;3,4}</f><v>1</v></c><c r="C1"><v>2</v></c></row>'
        '<row r="2"><c r="A2"><f t="shared" si="0"/></c><c r="B2"><v>3</v></c></row>'
        '<row r="3" hidden="1"><c r="A3"><f t="shared" si="0"/></c></row>'
    ),
    "hidden rows and columns": _sheet(
        ROWS.replace('<row r="2">', '<row r="2" hidden="1">').replace(
            '<row r="4">', '<row r="4" ht="0.5" customHeight="1">'
        ),
        head='<cols><col min="2" max="2" hidden="1"/></cols>',
        tail='<mergeCells count="1"><mergeCell ref="A1:C2"/></mergeCells>',
    ),
    "prefixed row attributes": _sheet(
        ROWS.replace('<row r="3">', '<row r="3" spans="1:3" x14ac:dyDescent="0.25">'),
        root=f"{NS} {R} {X14}",
    ),
    "pretty printed": _sheet(ROWS.replace("<row", "\n  <row").replace("<c ", "\n    <c ")),
    # cells lxml reads one by one
    "entities": _sheet(
        '<row r="1"><c r="A1"><f>IF(B1&lt;&gt;2,&quot;a&amp;b&quot;,1)</f></c>'
        '<c r="B1" t="str"><v>a&amp;b&#65;</v></c></row>'
    ),
    "predefined entities": _sheet(
        '<row r="1"><c r="A1"><f>A2&amp;"&amp;lt;"&amp;&apos;x&apos;</f><v>a&amp;amp;b</v></c>'
        '<c r="B1" t="inlineStr"><is><t>&lt;&gt;&quot;&amp;</t></is></c>'
        '<c r="C1" t="str"><f>"&amp;"</f><v>&amp;quot;</v></c></row>'
    ),
    "unknown entity": _sheet('<row r="1"><c r="A1" t="str"><v>a&bogus;b</v></c></row>'),
    "other attributes and children": _sheet(
        '<row r="1"><c r="A1" s="0" t="n" cm="1"><v>5</v></c><c r="B1"><v>1</v><v>2</v></c>'
        '<c r="C1" t="inlineStr"><is><r><rPr><color rgb="FFFFFFFF"/></rPr><t>x</t></r>'
        '<r><t>y</t></r></is></c><c r="D1" xmlns="urn:other"><v>1</v></c></row>'
    ),
    # read again by lxml alone (irregular part-way), or not read by expressions at all
    "many cells of other shapes": _sheet(
        "".join(f'<row r="{i}">\n <c r="A{i}">\n  <v>{i}</v>\n </c>\n</row>' for i in range(1, 400))
    ),
    "a cell inside a cell": _sheet(ROWS + '<row r="9"><c r="A9"><c r="B9"><v>3</v></c></c></row>'),
    "text between cells": _sheet(ROWS + '<row r="9">junk<c r="A9"><v>1</v></c></row>'),
    "single quotes": _sheet(ROWS.replace('<row r="3">', "<row r='3'>")),
    "row in another namespace": _sheet(ROWS.replace('<row r="3">', '<row r="3" xmlns="urn:o">')),
    "comment": _sheet(ROWS.replace("</row>", "<!-- x --></row>", 1)),
    "carriage return": _sheet(ROWS + '<row r="9"><c r="A9" t="str"><v>a\r\nb</v></c></row>'),
    "declaration inside an attribute": _sheet(
        ROWS.replace('<row r="3">', '<row r="3" x:foo="1">'), root=f'{NS} a="q xmlns:x=" b="v"'
    ),
    # malformed: the same exception either way
    "undeclared prefix": _sheet(ROWS.replace('<row r="3">', '<row r="3" zz:a="1">')),
    "duplicate attribute": _sheet(ROWS.replace('<row r="3">', '<row r="3" r="4">')),
    "unbalanced rows": _sheet(ROWS + '<row r="9"><c r="A9"><v>1</v></c>'),
    "mismatched cell": _sheet(ROWS + '<row r="9"><c r="A9"><v>1</c></v></row>'),
    "cdata end": _sheet(ROWS + '<row r="9"><c r="A9" t="str"><v>a]]>b</v></c></row>'),
    "name character": _sheet(ROWS.replace('<row r="3">', '<row r="3" a\u00b2="1">')),
    # unclosed cells: one attempt per token (a search onwards would rescan the text from
    # every "<c": quadratic); lxml then stops at its nesting limit
    "unclosed cells": _sheet('<row r="1">' + "<c>" * 20_000),
}


def _book(tmp_path: Path, xml: str) -> Path:
    wb = openpyxl.Workbook()
    wb.active["A1"] = "x"
    buf = io.BytesIO()
    wb.save(buf)
    path = tmp_path / "book.xlsx"
    with zipfile.ZipFile(buf) as zin, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = xml.encode()
            zout.writestr(item, data)
    return path


def _read(read, zf: zipfile.ZipFile, pkg: xr.Package):  # noqa: ANN001, ANN202
    """The cells and layout ``read`` gives, or its exception's type and text."""
    layout = xr.SheetLayout()
    try:
        cells = list(read(zf, "xl/worksheets/sheet1.xml", pkg, layout))
    except Exception as exc:  # noqa: BLE001 - the exception is the result compared
        return type(exc).__name__, str(exc)
    return cells, layout


def _lxml_only(zf: zipfile.ZipFile, part: str, pkg: xr.Package, layout: xr.SheetLayout):  # noqa: ANN202
    with zf.open(part) as f:
        yield from xr._scan(f, pkg, layout, None)


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_reading_is_lxml_reading(tmp_path: Path, case: str) -> None:
    path = _book(tmp_path, CASES[case])
    with zipfile.ZipFile(path) as zf:
        pkg = xr.read_package(zf)
        assert _read(xr.iter_cells, zf, pkg) == _read(_lxml_only, zf, pkg)


def test_regular_sheets_take_the_fast_path(tmp_path: Path) -> None:
    """The benchmark's shape (openpyxl) and LibreOffice's shape are read by expressions."""
    for case in ("plain", "shared and array formulas", "prefixed row attributes", "entities"):
        with zipfile.ZipFile(_book(tmp_path, CASES[case])) as zf:
            fast = xr._fast_sheet(zf, "xl/worksheets/sheet1.xml")
            assert fast is not None, case
            pkg = xr.read_package(zf)
            assert list(xr._scan(fast[0], pkg, None, fast[1:])), case
    for case in ("comment", "carriage return", "cdata end", "single quotes"):
        with zipfile.ZipFile(_book(tmp_path, CASES[case])) as zf:
            fast = xr._fast_sheet(zf, "xl/worksheets/sheet1.xml")
            if fast is not None:  # accepted by the gate: irregular part-way
                pkg = xr.read_package(zf)
                with pytest.raises(xr._NotRegular):
                    list(xr._scan(fast[0], pkg, None, fast[1:]))
