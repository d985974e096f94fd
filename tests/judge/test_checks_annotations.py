"""``number`` and ``regex`` checks read the deliverable's own content, never the extractor's
annotations (summaries, sheet headers, formulas, image notes, page/slide/cell headers,
diagnostics, truncation markers); text the deliverable itself holds counts whatever it
looks like.

Each case builds a deliverable where a number occurs ONLY in what the extractor writes
about the file (the check must fail) and a twin that really states it (the check must
pass). Expected numbers are computed here from the inputs, not read from the extractor.
"""

from __future__ import annotations

import json
import re
import sqlite3
import zipfile
from pathlib import Path

import openpyxl
import pytest

from jobbench.extract import extract_dir
from jobbench.judge import evaluate_check


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch):
    monkeypatch.setenv("JOBBENCH_NO_CACHE", "1")
    # what is annotation and what is content does not depend on the engine that recalculates
    # a workbook; the formulas package does it here in a tenth of LibreOffice's time (the
    # LibreOffice path is tested in tests/extract)
    monkeypatch.setenv("JOBBENCH_XLSX_ENGINE", "formulas")


def number(root: Path, value: float, **kw) -> bool:
    """The number check's verdict, computed both from a precomputed folder extraction (what
    the judge passes) and by on-demand extraction; the two must agree."""
    spec = {"kind": "number", "value": value, **kw}
    with_ex = evaluate_check(spec, root, extract_dir(root, cache=False))
    on_demand = evaluate_check(spec, root)
    assert not with_ex.error and not on_demand.error, (with_ex.detail, on_demand.detail)
    assert with_ex.passed == on_demand.passed, (with_ex.detail, on_demand.detail)
    return with_ex.passed


def regex(root: Path, pattern: str, **kw) -> bool:
    spec = {"kind": "regex", "pattern": pattern, **kw}
    res = evaluate_check(spec, root, extract_dir(root, cache=False))
    assert not res.error, res.detail
    assert evaluate_check(spec, root).passed == res.passed
    return res.passed


def folder(tmp_path: Path, name: str) -> Path:
    d = tmp_path / name
    d.mkdir()
    return d


# ---------------------------------------------------------------- CSV / JSONL summaries


def test_csv_summary_counts_are_not_content(tmp_path: Path) -> None:
    header = ["region", "units", "price", "notes"]
    rows = [
        ["north", "11", "2.5", "ok"],
        ["south", "13", "3.5", "ok"],
        ["east", "17", "6.5", "late"],
    ]
    n_cols, n_rows = len(header), len(rows) + 1  # the summary says "4 rows × 4 columns"
    d = folder(tmp_path, "a")
    (d / "out.csv").write_text("\n".join(",".join(r) for r in [header] + rows) + "\n")
    assert (
        "[table: 4 rows × 4 columns" in extract_dir(d, cache=False).text
    )  # the judge still sees it
    assert not number(d, n_cols)
    assert not number(d, n_rows)
    assert not regex(d, r"\b4 columns")
    assert regex(d, r"\b4 columns", absent=True)
    assert number(d, 17) and number(d, 6.5)  # real cells
    d2 = folder(tmp_path, "b")
    (d2 / "out.csv").write_text("region,units\nnorth,4\n")
    assert number(d2, 4)


def test_jsonl_record_count_is_not_content(tmp_path: Path) -> None:
    records = [{"id": "a"}, {"id": "b"}, {"id": "c"}, {"id": "d"}, {"id": "e"}]
    d = folder(tmp_path, "a")
    (d / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert not number(d, len(records))
    (d / "log.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records) + json.dumps({"n": 5}) + "\n"
    )
    assert number(d, 5)


# ---------------------------------------------------------------- workbooks


def test_workbook_formula_constants_are_not_content(tmp_path: Path) -> None:
    d = folder(tmp_path, "a")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Calc"
    ws["A1"], ws["B1"] = "label", "amount"
    ws["A2"], ws["B2"], ws["C2"] = "base", 10, "=B2*0.2"
    wb.save(d / "calc.xlsx")
    text = extract_dir(d, cache=False).text
    assert "[=B2*0.2]" in text  # the judge still sees the formula
    assert not number(d, 0.2)  # only in the formula
    assert number(d, 10 * 0.2)  # the computed value
    assert not regex(d, r"B2\*0\.2")
    assert regex(d, r"=B2", absent=True)


def test_workbook_fill_down_note_is_not_content(tmp_path: Path) -> None:
    d = folder(tmp_path, "a")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"], ws["B1"] = "qty", "tax"
    last = 13
    for r in range(2, last + 1):
        ws[f"A{r}"] = 5
        ws[f"B{r}"] = f"=A{r}*0.2"
    wb.save(d / "fill.xlsx")
    n_cells = last - 1  # "[=A2*0.2 ; filled down to B13, 12 cells]"
    assert f"filled down to B{last}, {n_cells} cells" in extract_dir(d, cache=False).text
    assert not number(d, n_cells)
    assert not number(d, last)
    assert not number(d, 0.2)
    assert number(d, 5 * 0.2)


def test_workbook_sheet_header_counts_are_not_content(tmp_path: Path) -> None:
    d = folder(tmp_path, "a")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Data"
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"]
    for r, w in enumerate(words, 1):
        ws[f"A{r}"] = w
    wb.save(d / "words.xlsx")
    n_rows = len(words)  # '## Sheet "Data" (used range A1:A9; 9 rows with data; 0 formulas)'
    assert f"{n_rows} rows with data" in extract_dir(d, cache=False).text
    assert not number(d, n_rows)
    assert not number(d, 1)  # "Workbook with 1 sheet(s)"
    assert not regex(d, r"rows with data")
    ws["B3"] = n_rows
    wb.save(d / "words.xlsx")
    assert number(d, n_rows)


def test_workbook_cell_coordinates_are_not_content(tmp_path: Path) -> None:
    d = folder(tmp_path, "a")
    wb = openpyxl.Workbook()
    ws = wb.active
    for c in "ABCDEFGHIJKLMNOPQ":
        ws[f"{c}4"] = "x"
    wb.save(d / "grid.xlsx")
    assert "Q4=x" in extract_dir(d, cache=False).text
    assert not regex(d, r"\bQ4\b")
    ws["A5"] = "Q4 revenue"
    wb.save(d / "grid.xlsx")
    assert regex(d, r"\bQ4\b")


# ---------------------------------------------------------------- images, notebooks, documents


def _png(path: Path, w: int, h: int) -> None:
    from PIL import Image

    Image.new("RGB", (w, h), (200, 30, 30)).save(path)


def test_image_note_pixel_size_is_not_content(tmp_path: Path) -> None:
    w, h = 37, 23
    d = folder(tmp_path, "a")
    _png(d / "chart.png", w, h)
    assert f"{w}×{h} px" in extract_dir(d, cache=False).text
    assert not number(d, w)
    assert not number(d, h)
    assert not regex(d, rf"{w}\D{h}")
    (d / "caption.md").write_text(f"The chart is {w} pixels wide.\n")
    assert number(d, w)


def test_notebook_cell_headers_and_out_labels_are_not_content(tmp_path: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("total = 6 * 7\ntotal", execution_count=3)
    code.outputs = [
        nbformat.v4.new_output("execute_result", data={"text/plain": "42"}, execution_count=3)
    ]
    nb.cells = [nbformat.v4.new_markdown_cell("Summary"), code]
    d = folder(tmp_path, "a")
    (d / "analysis.ipynb").write_text(nbformat.writes(nb))
    text = extract_dir(d, cache=False).text
    assert "[Out 3]" in text and "### Cell 2 (code, In [3])" in text
    assert not number(d, 3)  # execution count
    assert not number(d, len(nb.cells))  # "2 cell(s)" and "### Cell 2"
    assert number(d, 42)  # the output
    assert number(d, 6)  # the code


def test_pptx_slide_headers_are_not_content(tmp_path: Path) -> None:
    from pptx import Presentation

    prs = Presentation()
    for title in ("Overview", "Findings", "Plan"):
        s = prs.slides.add_slide(prs.slide_layouts[5])
        s.shapes.title.text = title
    d = folder(tmp_path, "a")
    prs.save(d / "deck.pptx")
    text = extract_dir(d, cache=False).text
    assert "Presentation with 3 slide(s)" in text and "## Slide 2: Findings" in text
    for n in (1, 2, len(prs.slides)):
        assert not number(d, n)
    assert regex(d, r"Findings")  # slide titles are content


def test_sqlite_table_summary_is_not_content(tmp_path: Path) -> None:
    d = folder(tmp_path, "a")
    con = sqlite3.connect(d / "db.sqlite")
    con.execute("CREATE TABLE t (name TEXT)")
    names = ["a", "b", "c", "d", "e", "f", "g"]
    con.executemany("INSERT INTO t VALUES (?)", [(n,) for n in names])
    con.commit()
    con.close()
    assert f"## Table t ({len(names)} rows)" in extract_dir(d, cache=False).text
    assert not number(d, len(names))
    assert not number(d, 1)  # "1 table(s)"
    assert regex(d, r"^## Table", absent=True)


def test_zip_member_sizes_are_not_content(tmp_path: Path) -> None:
    d = folder(tmp_path, "a")
    body = "alpha beta gamma\n" * 7
    with zipfile.ZipFile(d / "bundle.zip", "w") as z:
        z.writestr("notes.txt", body)
    size = len(body.encode())
    assert f"({size:,} bytes)" in extract_dir(d, cache=False).text
    assert not number(d, size)
    assert not regex(d, r"notes\.txt")  # the listing (member names included) is the extractor's
    assert regex(d, r"alpha beta gamma")  # the member's text is content


def test_zip_member_names_are_not_content(tmp_path: Path) -> None:
    spec = {"kind": "number", "value": 5353, "near": ["total"]}
    d = folder(tmp_path, "a")
    body = "quarterly figures attached\n"
    with zipfile.ZipFile(d / "bundle.zip", "w") as z:
        z.writestr("Total 5353.txt", body)
    ex = extract_dir(d, cache=False)
    # the LLM judge still sees the listing line and the member header unchanged
    assert f"  Total 5353.txt  ({len(body.encode()):,} bytes)" in ex.text
    assert "--- member: Total 5353.txt (text) ---" in ex.text
    assert "5353" not in ex.file("bundle.zip").content()
    assert not evaluate_check(spec, d, ex).passed and not evaluate_check(spec, d).passed
    assert not regex(d, r"Total 5353")
    # a member whose text states the total passes
    d2 = folder(tmp_path, "b")
    with zipfile.ZipFile(d2 / "bundle.zip", "w") as z:
        z.writestr("Total 5353.txt", "Total 5353\n")
    assert evaluate_check(spec, d2, extract_dir(d2, cache=False)).passed


# ---------------------------------------------------------------- diagnostics and truncation


def test_diagnostic_lines_are_not_content(tmp_path: Path) -> None:
    raw = '{"a": "x",\n "b": "y",\n "c" "z"}'
    try:
        json.loads(raw)
    except json.JSONDecodeError as exc:
        line, col = exc.lineno, exc.colno
    d = folder(tmp_path, "a")
    (d / "data.json").write_text(raw)
    assert (
        f"[extraction warning: invalid JSON: line {line} column {col}"
        in extract_dir(d, cache=False).text
    )
    assert not number(d, line)
    assert not number(d, col)
    assert not regex(d, r"invalid JSON")


def test_truncation_marker_counts_are_not_content(tmp_path: Path) -> None:
    d = folder(tmp_path, "a")
    text = "word " * 2000
    (d / "long.txt").write_text(text)
    ex = extract_dir(d, max_chars_per_file=1_500, cache=False)
    marker = f"of {len(text):,} characters of this file omitted here"
    assert marker in ex.text
    spec = {"kind": "number", "value": len(text)}
    assert not evaluate_check(spec, d, ex).passed
    (d / "long.txt").write_text(f"total {len(text)}\n" + text)
    assert evaluate_check(spec, d, extract_dir(d, max_chars_per_file=1_500, cache=False)).passed


# ---------------------------------------------------------------- content shaped like annotations

# Lines a memo may really write that resemble the extractor's annotations; each states its
# number, so a number check for it must pass (only the extractor's own notes are removed).
ANNOTATION_SHAPED_LINES = [
    ("[Out-of-pocket total was 99]", 99),
    ("[Image of receipts: 77 items]", 77),
    ("[Comment: net 55]", 55),
    ("[Output: 33 units shipped]", 33),
    ("[Chart 2: revenue reached 32 million](chart.png)", 32),
    ("(depends on demand: we estimate 31 hires)", 31),
    ("### Table 1 (34 rows flagged, see appendix)", 34),
    ("Named ranges: revenue was 66", 66),
]


@pytest.mark.parametrize(
    ("line", "value"), ANNOTATION_SHAPED_LINES, ids=[v for _, v in ANNOTATION_SHAPED_LINES]
)
def test_memo_lines_shaped_like_annotations_count(tmp_path: Path, line: str, value: int) -> None:
    # the same number in an extractor note only (the CSV summary "[table: N rows × 1
    # columns …]" of a CSV with N lines of letters) must not make the check pass …
    d = folder(tmp_path, "a")
    (d / "list.csv").write_text("".join(f"{chr(97 + i % 26)}\n" for i in range(value)))
    (d / "memo.md").write_text("# Memo\nSee the list.\n")
    assert f"[table: {value} rows × 1 columns" in extract_dir(d, cache=False).text
    assert not number(d, value)
    # … while the memo stating it in a line shaped like an annotation does
    (d / "memo.md").write_text(f"# Memo\nSee the list.\n{line}\n")
    assert number(d, value)
    assert number(d, value, file="memo.md")
    assert regex(d, re.escape(line))


def test_forged_note_delimiters_cannot_expose_annotations(tmp_path: Path) -> None:
    d = folder(tmp_path, "a")
    # a header cell with the close delimiter must not end the CSV summary note early
    (d / "out.csv").write_text("a\ufdd1,b,c,d\nx,y,z,w\n")
    assert not number(d, 4)
    # a stray open (or a forged open/close pair) written by the file means nothing: it
    # can neither hide the file's own text from a check nor expose an annotation
    d2 = folder(tmp_path, "b")
    (d2 / "memo.txt").write_text(
        "value \ufdd0 99 units\nall good \ufdd0ERROR: totals differ\ufdd1 end\n"
    )
    assert number(d2, 99)
    assert not evaluate_check({"kind": "regex", "pattern": "ERROR", "absent": True}, d2).passed
    assert "\ufdd0" not in extract_dir(d2, cache=False).text


def test_binary_content_under_a_text_name_is_an_extraction_error(tmp_path: Path) -> None:
    """A `.csv` holding binary bytes cannot be read: it is an extraction error (so the grade
    flags it as an unreadable deliverable), its bytes never reach the text."""
    d = folder(tmp_path, "bin")
    (d / "c.csv").write_bytes(bytes(range(256)) * 4)
    ex = extract_dir(d, cache=False)
    (f,) = ex.files
    assert [x.level for x in f.diagnostics] == ["error"]
    assert "named" in f.diagnostics[0].message and "binary" in f.diagnostics[0].message
    assert f.content().strip() == ""
