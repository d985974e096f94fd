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

from jobbench.extract import Extraction, extract
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

X14_WHITE = (
    '<extLst><ext uri="{78C0D931-6437-407d-A8EE-F0AAD7539E65}" '
    'xmlns:x14="http://schemas.microsoft.com/office/spreadsheetml/2009/9/main">'
    "<x14:conditionalFormattings><x14:conditionalFormatting "
    'xmlns:xm="http://schemas.microsoft.com/office/excel/2006/main">'
    '<x14:cfRule type="expression" priority="1" id="{00000000-0000-0000-0000-000000000001}">'
    '<xm:f>TRUE</xm:f><x14:dxf><font><color rgb="FFFFFFFF"/></font></x14:dxf></x14:cfRule>'
    "<xm:sqref>B2</xm:sqref></x14:conditionalFormatting></x14:conditionalFormattings>"
    "</ext></extLst>"
)
BLACK_SCALE = (
    '<conditionalFormatting sqref="B2"><cfRule type="colorScale" priority="1"><colorScale>'
    '<cfvo type="min"/><cfvo type="max"/><color rgb="FF000000"/><color rgb="FF000000"/>'
    "</colorScale></cfRule></conditionalFormatting>"
)


def _after_sheet_data(xml: str) -> Callable[[str], str]:
    return lambda s: s.replace("</sheetData>", "</sheetData>" + xml, 1)


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
    (
        "theme before rgb, as LibreOffice reads a colour",
        SECRET,
        None,
        (
            (
                STYLES,
                lambda s: s.replace('<color theme="1"/>', '<color rgb="FF000000" theme="0"/>', 1),
            ),
        ),
        "white text",
    ),
    (
        "solid fill without a colour is black",
        SECRET,
        _set(font=Font(color="000000"), fill=PatternFill("solid", fgColor="123456")),
        ((STYLES, lambda s: s.replace('<fgColor rgb="00123456"/>', "")),),
        "text in its fill colour",
    ),
    (
        "font and fill the same unknown colour",
        SECRET,
        _set(
            font=Font(color=Color(indexed=80)),
            fill=PatternFill("solid", fgColor=Color(indexed=80)),
        ),
        (),
        "text in its fill colour",
    ),
    (
        "gradient of near-whites",
        SECRET,
        _set(font=Font(color="FFFFFF"), fill=GradientFill(stop=("FFFFFF", "FEFEFE"))),
        (),
        "white text",
    ),
    (
        "column narrower than a character",
        SECRET,
        None,
        (
            (
                SHEET,
                lambda s: s.replace(
                    "<sheetData>",
                    '<cols><col min="2" max="2" width="0.5" customWidth="1"/></cols><sheetData>',
                ),
            ),
        ),
        "hidden column",
    ),
    (
        "an error cell's text in white",
        SECRET,
        _set(font=Font(color="FFFFFF")),
        (
            (
                SHEET,
                lambda s: s.replace(
                    't="inlineStr"><is><t>zq987654</t></is>', f't="e"><v>{SECRET}</v>'
                ),
            ),
        ),
        "white text",
    ),
    (
        "the first of two formats with one id",
        NUMBER,
        _set(number_format="0.000"),
        (
            (
                STYLES,
                lambda s: s.replace(
                    '<numFmts count="1">',
                    '<numFmts count="2"><numFmt numFmtId="164" formatCode=";;;"/>',
                ),
            ),
        ),
        "number format hides the value",
    ),
    (
        "Excel 2010 conditional format with its own style",
        SECRET,
        None,
        ((SHEET, lambda s: s.replace("</worksheet>", X14_WHITE + "</worksheet>")),),
        "conditional format can hide the value",
    ),
    (
        "colour scale to the font's colour",
        NUMBER,
        None,
        ((SHEET, _after_sheet_data(BLACK_SCALE)),),
        "conditional format can hide the value",
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


ZERO_HEIGHT = ((SHEET, lambda s: re.sub(r"<sheetFormatPr ", '<sheetFormatPr zeroHeight="1" ', s)),)
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
    (
        "rgb white with theme black",
        SECRET,
        _set(font=Font(color=Color(theme=1))),
        (
            (
                STYLES,
                lambda s: s.replace(
                    '<color theme="1"/></font></fonts>',
                    '<color rgb="FFFFFFFF" theme="1"/></font></fonts>',
                ),
            ),
        ),
    ),
    ("rows written on a sheet hiding unused rows", SECRET, None, ZERO_HEIGHT),
    ("East Asian date codes", 45000, _set(number_format='[$-411]ggge"年"')),
]


@pytest.mark.parametrize(
    ("value", "style", "edits"),
    [(c[1], c[2], c[3] if len(c) > 3 else ()) for c in VISIBLE_CASES],
    ids=[c[0] for c in VISIBLE_CASES],
)
def test_a_cell_a_reader_sees_stays_content(tmp_path: Path, value, style, edits) -> None:
    ext = extract(_book(tmp_path, "case", value, style, edits), cache=False)
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


def test_conditional_formats_whose_condition_is_known_hide_only_matching_cells(
    tmp_path: Path,
) -> None:
    """ "Hide zeros" (cellIs equal 0 → white) hides the zero only; "hide errors"
    (ISERROR → white) hides no number; a rule whose condition is not evaluated here (an
    arbitrary expression) is taken to apply."""
    from openpyxl.formatting.rule import CellIsRule

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Label", 0, 41, 42, 43])
    white = Font(color="FFFFFF")
    ws.conditional_formatting.add("B1:C1", CellIsRule(operator="equal", formula=["0"], font=white))
    ws.conditional_formatting.add("D1", FormulaRule(formula=["ISERROR(D1)"], font=white))
    ws.conditional_formatting.add("E1", FormulaRule(formula=["MOD(E1,2)=1"], font=white))
    path = tmp_path / "cf.xlsx"
    wb.save(path)
    ext = extract(path, cache=False)
    assert "A1=Label | C1=41 | D1=42" in ext.text.splitlines(), ext.text
    assert (
        "[hidden: conditional format can hide the value] B1=0 | E1=43" in ext.text.splitlines()
    ), ext.text


def test_a_white_table_header_is_not_hidden(tmp_path: Path) -> None:
    """A table style draws a band under its header row: white header text stays content."""
    from openpyxl.worksheet.table import Table, TableStyleInfo

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Region", "Sales"])
    ws.append(["North", 120])
    for cell in ws[1]:
        cell.font = Font(bold=True, color="FFFFFF")
    table = Table(displayName="T1", ref="A1:B2")
    table.tableStyleInfo = TableStyleInfo(name="TableStyleMedium2", showRowStripes=True)
    ws.add_table(table)
    ws["D1"] = SECRET
    ws["D1"].font = Font(color="FFFFFF")
    path = tmp_path / "table.xlsx"
    wb.save(path)
    ext = extract(path, cache=False)
    assert "Region" in ext.content() and "Sales" in ext.content()
    assert SECRET not in ext.content()


def test_array_formula_members_are_recalculated_not_read_stale(tmp_path: Path) -> None:
    """B3 lies in the range of the array formula in B2:B3: its stored value is the formula's,
    recalculated like any formula cell (a stale 987654 left in the file is not content)."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A2"], ws["A3"] = 1, 2
    from openpyxl.worksheet.formula import ArrayFormula

    ws["B2"] = ArrayFormula("B2:B3", "=A2:A3*10")
    path = tmp_path / "array.xlsx"
    wb.save(path)
    _rewrite(
        path,
        SHEET,
        lambda s: s.replace(
            '<c r="A3" t="n"><v>2</v></c>',
            f'<c r="A3" t="n"><v>2</v></c><c r="B3"><v>{NUMBER}</v></c>',
        ),
    )
    ext = extract(path, cache=False)
    assert str(NUMBER) not in ext.content(), ext.text
    assert "B3=20" in ext.text, ext.text


def test_charts_a_reader_cannot_see_are_hidden_and_chart_caches_are_not_content(
    tmp_path: Path,
) -> None:
    from openpyxl.chart import BarChart, Reference

    def book(name: str, *, hide_sheet: bool = False) -> Path:
        wb = openpyxl.Workbook()
        ws = wb.active
        ws.title = "S"
        ws.append(["Header"])
        ws.append([1])
        ws.append([2])
        chart = BarChart()
        chart.title = SECRET
        chart.add_data(Reference(ws, min_col=1, min_row=2, max_row=3))
        holder = ws
        if hide_sheet:
            holder = wb.create_sheet("H")
            holder.sheet_state = "hidden"
        holder.add_chart(chart, "D2")
        path = tmp_path / f"{name}.xlsx"
        wb.save(path)
        return path

    shown = extract(book("shown"), cache=False)
    assert SECRET in shown.content() and shown.hidden == []
    on_hidden = extract(book("on_hidden", hide_sheet=True), cache=False)
    assert SECRET not in on_hidden.content()
    assert [w for w, t in on_hidden.hidden if SECRET in t] == ["chart on a hidden sheet"]
    frame = book("frame")
    _rewrite(
        frame,
        "xl/drawings/drawing1.xml",
        lambda s: s.replace('name="Chart 1"', 'name="Chart 1" hidden="1"'),
    )
    assert [w for w, t in extract(frame, cache=False).hidden if SECRET in t] == ["hidden chart"]
    stale = book("stale")
    _rewrite(
        stale,
        "xl/charts/chart1.xml",
        lambda s: s.replace(
            "<numRef><f>'S'!$A$2:$A$3</f>",
            '<numRef><f>\'S\'!$A$2:$A$3</f><numCache><ptCount val="2"/><pt idx="0"><v>555111</v>'
            '</pt><pt idx="1"><v>2</v></pt></numCache>',
        ),
    )
    ext = extract(stale, cache=False)
    assert "555111" in ext.text and "555111" not in ext.content()


def test_past_the_layout_limits_every_cell_of_the_sheet_is_hidden(
    tmp_path: Path, monkeypatch
) -> None:
    """More merged ranges than the extractor checks: a rule past the limit could hide any
    cell, so none is content (fail closed), and a warning says so."""
    from jobbench.extract import _xlsx_read

    monkeypatch.setattr(_xlsx_read, "LAYOUT_MAX_RANGES", 3)
    monkeypatch.setenv("JOBBENCH_EXTRACT_ISOLATION", "none")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"] = SECRET
    for r in range(3, 8):
        ws.merge_cells(f"A{r}:B{r}")
    path = tmp_path / "many.xlsx"
    wb.save(path)
    ext = extract(path, cache=False)
    assert SECRET not in ext.content()
    assert [w for w, t in ext.hidden if SECRET in t] == [
        "too many merged ranges or conditional formats to check"
    ]
    assert "every cell there is marked hidden" in ext.text


def test_conditions_not_evaluable_here_are_taken_to_apply(tmp_path: Path) -> None:
    """``ISERROR`` of another cell, ``cellIs`` on text, and rules on formula cells judged on
    their recalculated value (not the value cached in the file)."""
    from openpyxl.formatting.rule import CellIsRule

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Label", "text here", "other", "=1/0", "=2+3", "=2-2"])
    white = Font(color="FFFFFF")
    ws.conditional_formatting.add("B1", CellIsRule(operator="notEqual", formula=["0"], font=white))
    ws.conditional_formatting.add("C1", FormulaRule(formula=["ISERROR($D$1)"], font=white))
    ws.conditional_formatting.add("E1:F1", CellIsRule(operator="equal", formula=["0"], font=white))
    path = tmp_path / "cf.xlsx"
    wb.save(path)
    # a stale cached 0 on E1 must not decide for its recalculated 5
    _rewrite(path, SHEET, lambda s: s.replace("<f>2+3</f><v></v>", "<f>2+3</f><v>0</v>"))
    ext = extract(path, cache=False)
    why = "conditional format can hide the value"
    lines = ext.text.splitlines()
    assert f"[hidden: {why}] B1=text here | C1=other | F1=0 [=2-2]" in lines, ext.text
    assert "A1=Label | D1=#DIV/0! (error) [=1/0] | E1=5 [=2+3]" in lines, ext.text


def test_rules_that_hide_only_together_hide(tmp_path: Path) -> None:
    """One rule sets a red font, another a red fill: Excel lays both over the cell."""
    from openpyxl.formatting.rule import CellIsRule

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Label", NUMBER])
    ws.conditional_formatting.add(
        "B1", CellIsRule(operator="greaterThan", formula=["0"], font=Font(color="FF0000"))
    )
    ws.conditional_formatting.add(
        "B1",
        CellIsRule(
            operator="greaterThan", formula=["0"], fill=PatternFill("solid", bgColor="FF0000")
        ),
    )
    path = tmp_path / "two.xlsx"
    wb.save(path)
    ext = extract(path, cache=False)
    assert str(NUMBER) not in ext.content(), ext.text


def test_only_a_dark_table_band_exempts_white_text(tmp_path: Path) -> None:
    """White text counts as readable on the header band of a Medium/Dark table style, not
    on a table without a style, nor on the body rows of a Medium style."""
    from openpyxl.worksheet.table import Table, TableStyleInfo

    def book(name: str, style: str | None) -> Extraction:
        wb = openpyxl.Workbook()
        ws = wb.active
        ws.append(["Region", "Sales"])
        ws.append(["North", "bodysecret"])
        for cell in (*ws[1], *ws[2]):
            cell.font = Font(color="FFFFFF")
        table = Table(displayName="T1", ref="A1:B2")
        if style:
            table.tableStyleInfo = TableStyleInfo(name=style, showRowStripes=False)
        ws.add_table(table)
        path = tmp_path / f"{name}.xlsx"
        wb.save(path)
        return extract(path, cache=False)

    medium = book("medium", "TableStyleMedium2")
    assert "Region" in medium.content() and "bodysecret" not in medium.content()
    plain = book("plain", None)
    assert "Region" not in plain.content() and "bodysecret" not in plain.content()
    dark = book("dark", "TableStyleDark1")
    assert "Region" in dark.content() and "bodysecret" in dark.content()


def test_charts_out_of_sight_and_cell_names_are_not_content(tmp_path: Path) -> None:
    from openpyxl.chart import BarChart, Reference

    def book(name: str) -> Path:
        wb = openpyxl.Workbook()
        ws = wb.active
        ws.title = "S"
        ws.append(["Header", "zqname"])
        ws.append([1, 1])
        chart = BarChart()
        chart.title = SECRET
        chart.add_data(Reference(ws, min_col=2, min_row=1, max_row=2), titles_from_data=True)
        ws.add_chart(chart, "D2")
        path = tmp_path / f"{name}.xlsx"
        wb.save(path)
        return path

    drawing = "xl/drawings/drawing1.xml"
    zero = book("zero")
    _rewrite(
        zero,
        drawing,
        lambda s: re.sub(r'<(\w+:)?ext cx="\d+" cy="\d+"', r'<\1ext cx="0" cy="0"', s),
    )
    assert [w for w, t in extract(zero, cache=False).hidden if SECRET in t] == [
        "chart of zero size"
    ]
    orphan = book("orphan")
    _rewrite(orphan, SHEET, lambda s: re.sub(r"<drawing [^>]*/>", "", s))
    assert [w for w, t in extract(orphan, cache=False).hidden if SECRET in t] == [
        "chart no sheet shows"
    ]
    shown = extract(book("shown"), cache=False)
    assert SECRET in shown.content()
    # the series name comes from cell B1: the chart's copy is annotation, the cell content
    assert shown.content().count("zqname") == 1, shown.text


def test_a_broken_member_no_sheet_uses_does_not_break_the_workbook(tmp_path: Path) -> None:
    path = _book(tmp_path, "orphan", "=1+1", None)
    with zipfile.ZipFile(path, "a") as z:
        z.writestr("xl/worksheets/sheet99.xml", "<worksheet><sheetData/></worksheet>")
    data = bytearray(path.read_bytes())
    at = data.find(b"<worksheet><sheetData/></worksheet>")
    if at < 0:  # stored compressed: corrupt its compressed bytes instead
        at = data.rfind(b"xl/worksheets/sheet99.xml") - 200
    data[at + 2] ^= 0xFF
    path.write_bytes(bytes(data))
    ext = extract(path, cache=False)
    assert "Header" in ext.content(), ext.diagnostics


def test_ranges_of_one_rule_count_toward_the_layout_limit(tmp_path: Path, monkeypatch) -> None:
    """One conditional format listing more ranges than the limit (each range counts, not
    each element) fails closed at once, without walking them."""
    from jobbench.extract import _xlsx_read

    monkeypatch.setattr(_xlsx_read, "LAYOUT_MAX_RANGES", 3)
    monkeypatch.setenv("JOBBENCH_EXTRACT_ISOLATION", "none")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"] = SECRET
    ws.conditional_formatting.add(
        "C1 C2 C3 C4 C5", FormulaRule(formula=["FALSE"], font=Font(color="FF0000"))
    )
    path = tmp_path / "many.xlsx"
    wb.save(path)
    ext = extract(path, cache=False)
    assert SECRET not in ext.content()
    assert [w for w, t in ext.hidden if SECRET in t] == [
        "too many merged ranges or conditional formats to check"
    ]
