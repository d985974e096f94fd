"""Workbook cells a reader of the sheet cannot see are marked hidden and kept out of what
the number and regex checks read (issue 14); cells a reader does see stay content.

Each workbook is written by openpyxl, then, where openpyxl cannot write the trick, its XML
is edited the way a hostile agent would. Every case holds one marker value; the expected
reason is the one :mod:`jobbench.extract._xlsx_style` / ``_xlsx_read`` documents."""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable
from pathlib import Path

import openpyxl
import pytest
from openpyxl.cell.rich_text import CellRichText, TextBlock
from openpyxl.cell.text import InlineFont
from openpyxl.formatting.rule import FormulaRule
from openpyxl.styles import Font, GradientFill, PatternFill
from openpyxl.styles.colors import Color

from jobbench.extract import extract
from jobbench.extract._xlsx_style import _tinted

SECRET = "zq987654"
NUMBER = 987654


def _rewrite(path: Path, part: str, edit: Callable[[str], str]) -> None:
    with zipfile.ZipFile(path) as zin:
        items = [(i, zin.read(i.filename)) for i in zin.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zout:
        for info, data in items:
            if info.filename == part:
                new = edit(data.decode())
                assert new != data.decode(), f"the edit of {part} changed nothing"
                data = new.encode()
            zout.writestr(info, data)


def _book(tmp_path: Path, name: str, value, style=None, edits=()) -> Path:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "S"
    ws["A1"] = "Header"  # a style, and a row height, of its own: the cases change style 0
    ws["A1"].font = Font(name="Arial", color="FF000000")
    ws.row_dimensions[1].height = 15
    ws["B2"] = value
    if style is not None:
        style(ws["B2"], ws)
    path = tmp_path / f"{name}.xlsx"
    wb.save(path)
    for part, edit in edits:
        _rewrite(path, part, edit)
    return path


def _set(**attrs):
    def apply(cell, _ws) -> None:
        for k, v in attrs.items():
            setattr(cell, k, v)

    return apply


SHEET = "xl/worksheets/sheet1.xml"
STYLES = "xl/styles.xml"
THEME = "xl/theme/theme1.xml"

HIDDEN_CASES = [
    ("tiny font", SECRET, _set(font=Font(sz=1, color="DDDDDD")), (), "tiny text, 1 pt"),
    (
        "black tinted to near-white",
        SECRET,
        _set(font=Font(color=Color(theme=1, tint=0.95))),
        (),
        "white text",
    ),
    (
        "accent on the same accent",
        SECRET,
        _set(font=Font(color=Color(theme=4)), fill=PatternFill("solid", fgColor=Color(theme=4))),
        (),
        "text in its fill colour",
    ),
    (
        "system background colour",
        SECRET,
        _set(font=Font(color=Color(indexed=65))),
        (),
        "white text",
    ),
    (
        "gradient of the font's colour",
        SECRET,
        _set(font=Font(color="000000"), fill=GradientFill(stop=("000000", "000000"))),
        (),
        "text in its fill colour",
    ),
    ("[White] text section", SECRET, _set(number_format="[White]@"), (), "white text"),
    ("[Color2] is white", NUMBER, _set(number_format="[Color2]General"), (), "white text"),
    (
        "quoted spaces",
        NUMBER,
        _set(number_format='" ";" ";" "'),
        (),
        "number format hides the value",
    ),
    ("one literal section", NUMBER, _set(number_format='"-"'), (), "number format hides the value"),
    (
        "colour-only sections",
        NUMBER,
        _set(number_format="[Red];[Red];[Red]"),
        (),
        "number format hides the value",
    ),
    ("padding only", NUMBER, _set(number_format="_-;_-;_-"), (), "number format hides the value"),
    (
        "escaped @ is a literal",
        SECRET,
        _set(number_format=";;;\\@"),
        (),
        "number format hides the value",
    ),
    (
        "condition picks an empty section",
        NUMBER,
        _set(number_format='[>0]"";0'),
        (),
        "number format hides the value",
    ),
    (
        "rich text, every run white",
        CellRichText(TextBlock(InlineFont(color="FFFFFF"), SECRET)),
        None,
        (),
        "white text",
    ),
    (
        "style 0 white, no s attribute",
        SECRET,
        None,
        ((STYLES, lambda s: s.replace('<color theme="1"/>', '<color rgb="FFFFFFFF"/>', 1)),),
        "white text",
    ),
    (
        "custom theme: dark 1 is white",
        SECRET,
        _set(font=Font(color=Color(theme=1))),
        (
            (
                THEME,
                lambda s: re.sub(
                    r"<a:dk1>.*?</a:dk1>",
                    '<a:dk1><a:srgbClr val="FFFFFF"/></a:dk1>',
                    s,
                    flags=re.S,
                ),
            ),
        ),
        "white text",
    ),
    (
        "zero-width column",
        SECRET,
        None,
        (
            (
                SHEET,
                lambda s: s.replace(
                    "<sheetData>",
                    '<cols><col min="2" max="2" width="0" customWidth="1"/></cols><sheetData>',
                ),
            ),
        ),
        "hidden column",
    ),
    (
        "zero-height row",
        SECRET,
        None,
        ((SHEET, lambda s: s.replace('<row r="2">', '<row r="2" ht="0" customHeight="1">')),),
        "hidden row",
    ),
    (
        "rows hidden by default",
        SECRET,
        None,
        ((SHEET, lambda s: re.sub(r"<sheetFormatPr ", '<sheetFormatPr zeroHeight="1" ', s)),),
        "hidden row",
    ),
    (
        "negative style index is style 0",
        SECRET,
        None,
        (
            (STYLES, lambda s: s.replace('<color theme="1"/>', '<color rgb="FFFFFFFF"/>', 1)),
            (
                SHEET,
                lambda s: s.replace('<c r="B2" t="inlineStr">', '<c r="B2" s="-1" t="inlineStr">'),
            ),
        ),
        "white text",
    ),
]


@pytest.mark.parametrize(
    ("value", "style", "edits", "why"),
    [c[1:] for c in HIDDEN_CASES],
    ids=[c[0] for c in HIDDEN_CASES],
)
def test_a_cell_a_reader_cannot_see_is_hidden(tmp_path: Path, value, style, edits, why) -> None:
    path = _book(tmp_path, "case", value, style, edits)
    ext = extract(path, cache=False)
    marker = str(NUMBER) if value == NUMBER else SECRET
    assert marker not in ext.content(), ext.text
    assert "Header" in ext.content()
    assert [w for w, text in ext.hidden if marker in text] == [why], (ext.hidden, ext.text)
    assert f"[hidden: {why}] B2=" in ext.text


VISIBLE_CASES = [
    (
        "white on black",
        SECRET,
        _set(font=Font(color="FFFFFF"), fill=PatternFill("solid", fgColor="000000")),
    ),
    (
        "white on a two-colour gradient",
        SECRET,
        _set(font=Font(color="FFFFFF"), fill=GradientFill(stop=("FFFFFF", "1F4E79"))),
    ),
    ("black tinted to grey", SECRET, _set(font=Font(color=Color(theme=1, tint=0.5)))),
    ("text format on a number", NUMBER, _set(number_format="@")),
    ("number format on text", SECRET, _set(number_format="0.00")),
    ("red negatives", -NUMBER, _set(number_format="#,##0;[Red]-#,##0")),
    ("blue number", NUMBER, _set(number_format="[Blue]0")),
    ("currency literal", NUMBER, _set(number_format="[$€-407] #,##0.00")),
    ("elapsed hours", 1.5, _set(number_format="[h]:mm")),
    ("date", 45000, _set(number_format="yyyy-mm-dd")),
    ("condition picks a shown section", NUMBER, _set(number_format='[<0]"neg";0')),
    ("default font size", SECRET, _set(font=Font(sz=11))),
    (
        "dark pattern on white",
        SECRET,
        _set(fill=PatternFill("darkGray", fgColor="000000", bgColor="FFFFFF")),
    ),
]


@pytest.mark.parametrize(
    ("value", "style"), [c[1:] for c in VISIBLE_CASES], ids=[c[0] for c in VISIBLE_CASES]
)
def test_a_cell_a_reader_sees_stays_content(tmp_path: Path, value, style) -> None:
    ext = extract(_book(tmp_path, "case", value, style), cache=False)
    assert ext.hidden == [], ext.hidden
    assert "[hidden" not in ext.text


def test_the_accountants_zero_is_a_shown_value(tmp_path: Path) -> None:
    """``"-"`` in the zero section states zero; an empty zero section hides it."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Label", 0, 0, 5])
    ws["B1"].number_format = '#,##0;[Red]-#,##0;"-"'
    ws["C1"].number_format = "0;-0;;@"
    ws["D1"].number_format = '#,##0;[Red]-#,##0;"-"'
    path = tmp_path / "zero.xlsx"
    wb.save(path)
    ext = extract(path, cache=False)
    assert "A1=Label | B1=0 | D1=5" in ext.text.splitlines(), ext.text
    assert "[hidden: number format hides the value] C1=0" in ext.text.splitlines()


def test_rich_text_keeps_its_visible_runs_and_marks_the_others(tmp_path: Path) -> None:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"] = CellRichText("Total ", TextBlock(InlineFont(color="FFFFFF"), SECRET), " due")
    path = tmp_path / "rich.xlsx"
    wb.save(path)
    ext = extract(path, cache=False)
    assert SECRET not in ext.content()
    assert "Total  due" in ext.content()
    assert f'A1=Total  due [hidden text (white text): "{SECRET}"]' in ext.text, ext.text
    assert [w for w, t in ext.hidden if SECRET in t] == ["white text"]


def test_inline_rich_text_runs_are_judged_too(tmp_path: Path) -> None:
    """An inline string (``t="inlineStr"``) with a white run, written by hand."""
    path = _book(
        tmp_path,
        "inline",
        "placeholder",
        None,
        (
            (
                SHEET,
                lambda s: s.replace(
                    "<is><t>placeholder</t></is>",
                    '<is><r><t>Total</t></r><r><rPr><color rgb="FFFFFFFF"/></rPr>'
                    f"<t>{SECRET}</t></r></is>",
                ),
            ),
        ),
    )
    ext = extract(path, cache=False)
    assert SECRET not in ext.content() and "Total" in ext.content()
    assert f'B2=Total [hidden text (white text): "{SECRET}"]' in ext.text, ext.text


def test_a_formula_cell_is_judged_on_its_recalculated_value(tmp_path: Path) -> None:
    """A formula without a cached value (openpyxl saves none) gets its value from the
    recalculation; its white font still hides it. A formula whose cached value the format
    hid but whose recalculated value it shows is content."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"] = "Header"
    ws["B1"] = f'="{SECRET}"'
    ws["B1"].font = Font(color="FFFFFF")
    ws["C1"] = "=2+3"
    ws["C1"].number_format = "0;-0;;@"  # zero hidden, 5 shown
    path = tmp_path / "formula.xlsx"
    wb.save(path)
    _rewrite(path, SHEET, lambda s: s.replace("<f>2+3</f><v></v>", "<f>2+3</f><v>0</v>"))
    ext = extract(path, cache=False)
    assert SECRET not in ext.content(), ext.text
    assert [w for w, t in ext.hidden if SECRET in t] == ["white text"]
    assert "Header | 5" in ext.content()
    assert "C1=5" in ext.text


def test_cells_under_a_merged_range_and_a_hiding_conditional_format(tmp_path: Path) -> None:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"] = "Header"
    ws["B3"], ws["D5"] = "shown", "under a rule"
    ws.merge_cells("B3:C3")
    ws.conditional_formatting.add("D5", FormulaRule(formula=["TRUE"], font=Font(color="FFFFFF")))
    ws["F5"] = "plain"
    ws.conditional_formatting.add("F5", FormulaRule(formula=["TRUE"], font=Font(color="FF0000")))
    path = tmp_path / "layout.xlsx"
    wb.save(path)
    # openpyxl empties the covered cell; a hostile file keeps a value there
    _rewrite(
        path,
        SHEET,
        lambda s: (
            s.replace('<c r="C3"/>', f'<c r="C3" t="inlineStr"><is><t>{SECRET}</t></is></c>')
            if '<c r="C3"/>' in s
            else s.replace(
                '</row><row r="5"',
                f'<c r="C3" t="inlineStr"><is><t>{SECRET}</t></is></c></row><row r="5"',
                1,
            )
        ),
    )
    ext = extract(path, cache=False)
    hidden = dict((t.split(": ", 1)[1], w) for w, t in ext.hidden)
    assert hidden == {
        SECRET: "covered by a merged cell",
        "under a rule": "conditional format can hide the value",
    }, ext.hidden
    assert "shown" in ext.content() and "plain" in ext.content()


@pytest.mark.parametrize(
    ("rgb", "tint", "expected"),
    [
        ("000000", 0.95, "F2F2F2"),  # L 0 → 0.95
        ("FFFFFF", -0.05, "F2F2F2"),  # L 1 → 0.95
        ("FFFFFF", -0.5, "808080"),  # L 1 → 0.5 (127.5 rounds to 128)
        ("4472C4", 0.0, "4472C4"),
    ],
)
def test_tint_moves_luminance_as_the_standard_says(rgb: str, tint: float, expected: str) -> None:
    """ECMA-376 §18.8.19: L·(1+t) for t<0, L·(1−t)+t for t>0 (values computed by hand)."""
    assert _tinted(rgb, tint) == expected
