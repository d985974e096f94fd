"""Every check kind, passing and failing, against real files in a temp deliverable folder."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import openpyxl
import pytest

from jobbench.judge import evaluate_check
from jobbench.judge.checks import find_numbers, parse_number
from jobbench.judge.checks._sqlite_query import run_query


def write(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


# ---------------------------------------------------------------- number parsing


@pytest.mark.parametrize(
    "text, value",
    [
        ("20.2%", 20.2),
        ("$1,234.50", 1234.5),
        ("1.2e3", 1200.0),
        ("(1,234)", -1234.0),
        ("1,234,567", 1234567.0),
        ("\u22125.5", -5.5),  # unicode minus
        ("-$5", -5.0),
        ("$-5", -5.0),
        ("4E-2", 0.04),
        ("€3,000", 3000.0),
        ("12\u202f345", 12345.0),  # narrow no-break space as thousands separator
    ],
)
def test_parse_number_formats(text: str, value: float) -> None:
    assert parse_number(text) == pytest.approx(value, rel=0, abs=1e-12)


def test_parse_number_rejects_non_numbers() -> None:
    assert parse_number("5 apples") is None
    assert parse_number("A1") is None
    assert parse_number("") is None


def test_find_numbers_dates_ranges_and_words() -> None:
    # a dash between digits is never a minus; digits glued to letters are not numbers
    got = [(t.text, t.value) for t in find_numbers("2024-05-01, 5–10, item5, 5kg, x = −3")]
    assert got == [
        ("2024", 2024.0),
        ("05", 5.0),
        ("01", 1.0),
        ("5", 5.0),
        ("10", 10.0),
        ("−3", -3.0),
    ]
    tok = find_numbers("revenue $3.4M")[0]
    assert tok.candidates == (3.4, 3_400_000.0)


# ---------------------------------------------------------------- number


@pytest.mark.parametrize(
    "spec, text, passed",
    [
        ({"value": 20.2}, "Growth was 20.2% year on year.", True),
        ({"value": 20.2, "percent": True}, "growth rate 0.202", True),
        ({"value": 20.2}, "growth rate 0.202", False),
        ({"value": 1234.5}, "Total: $1,234.50", True),
        ({"value": 1200}, "about 1.2e3 units", True),
        ({"value": -1234}, "Net income (1,234)", True),
        ({"value": -1234}, "Net income 1,234", False),
        ({"value": -7.5}, "change \u22127.5 points", True),
        ({"value": 1000, "abs_tol": 5}, "roughly 1,004 people", True),
        ({"value": 1000, "abs_tol": 3}, "roughly 1,004 people", False),
        ({"value": 1000, "rel_tol": 0.01}, "roughly 1,009 people", True),
        ({"value": 42, "near": ["median"]}, "The median age is 42.", True),
        (
            {"value": 42, "near": ["median"], "window": 10},
            "The median of everything we found is 42.",
            False,
        ),
        ({"value": 3}, "nothing numeric here except A3", False),
    ],
)
def test_number_check(tmp_path: Path, spec: dict, text: str, passed: bool) -> None:
    write(tmp_path, "report.md", text)
    res = evaluate_check({"kind": "number", **spec}, tmp_path)
    assert res.passed is passed, res.detail
    assert not res.error


def test_number_check_file_glob_scopes_files(tmp_path: Path) -> None:
    write(tmp_path, "notes.txt", "draft says 99")
    write(tmp_path, "final/summary.md", "final answer 100")
    assert evaluate_check({"kind": "number", "value": 100, "file": "*.md"}, tmp_path).passed
    res = evaluate_check({"kind": "number", "value": 99, "file": "*.md"}, tmp_path)
    assert not res.passed
    res = evaluate_check({"kind": "number", "value": 99, "file": "*.pdf"}, tmp_path)
    assert not res.passed and "no deliverable" in res.detail


# ---------------------------------------------------------------- regex


def test_regex_check(tmp_path: Path) -> None:
    write(tmp_path, "memo.txt", "We recommend Vendor B.\nVendor B is cheaper.")
    assert evaluate_check({"kind": "regex", "pattern": r"recommend\s+vendor b"}, tmp_path).passed
    assert not evaluate_check(
        {"kind": "regex", "pattern": r"recommend\s+vendor b", "ignore_case": False}, tmp_path
    ).passed
    assert evaluate_check({"kind": "regex", "pattern": "vendor b", "min_count": 2}, tmp_path).passed
    assert not evaluate_check(
        {"kind": "regex", "pattern": "vendor b", "min_count": 3}, tmp_path
    ).passed
    assert evaluate_check({"kind": "regex", "pattern": "vendor a", "absent": True}, tmp_path).passed
    res = evaluate_check({"kind": "regex", "pattern": "cheaper", "absent": True}, tmp_path)
    assert not res.passed and "cheaper" in res.evidence


def test_regex_invalid_pattern_is_an_error_not_a_fail(tmp_path: Path) -> None:
    write(tmp_path, "memo.txt", "x")
    res = evaluate_check({"kind": "regex", "pattern": "("}, tmp_path)
    assert res.error and not res.passed


# ---------------------------------------------------------------- file_exists


def test_file_exists_check(tmp_path: Path) -> None:
    from PIL import Image

    (tmp_path / "out").mkdir()
    Image.new("RGB", (4, 4)).save(tmp_path / "out" / "chart.png")
    size = (tmp_path / "out" / "chart.png").stat().st_size
    write(tmp_path, "empty.csv", "")
    assert evaluate_check({"kind": "file_exists", "file": "*.png"}, tmp_path).passed
    assert not evaluate_check(
        {"kind": "file_exists", "file": "*.png", "min_bytes": size + 1}, tmp_path
    ).passed
    assert not evaluate_check({"kind": "file_exists", "file": "empty.csv"}, tmp_path).passed
    assert not evaluate_check({"kind": "file_exists", "file": "*.pdf"}, tmp_path).passed


def test_file_exists_image_must_decode(tmp_path: Path) -> None:
    # PNG signature, then junk: the size is there, the chart is not
    (tmp_path / "chart.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40)
    res = evaluate_check({"kind": "file_exists", "file": "*.png", "min_bytes": 5000}, tmp_path)
    assert not res.passed and "chart.png: not a readable image" in res.detail
    write(tmp_path, "notes.txt", "x" * 10)  # other suffixes: existence and size only
    assert evaluate_check({"kind": "file_exists", "file": "*.txt"}, tmp_path).passed


def test_file_exists_ignores_symlinks(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    d = tmp_path / "deliv"
    d.mkdir()
    os.symlink(outside, d / "link.txt")
    assert not evaluate_check({"kind": "file_exists", "file": "*.txt"}, d).passed


# ---------------------------------------------------------------- xlsx_cell


def make_workbook(path: Path) -> None:
    """A workbook written by a script: formulas have NO cached values."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Summary"
    ws["A1"], ws["B1"] = "Item", "Amount"
    ws["A2"], ws["B2"] = "Rent", 1200
    ws["A3"], ws["B3"] = "Food", 350.5
    ws["A4"], ws["B4"] = "Total", "=SUM(B2:B3)"
    other = wb.create_sheet("Notes")
    other["A1"] = "Status"
    other["A2"] = "Approved"
    wb.save(path)


def test_xlsx_cell_reads_recalculated_values(tmp_path: Path) -> None:
    make_workbook(tmp_path / "budget.xlsx")
    spec = {"kind": "xlsx_cell", "cell": "B4", "expect": {"equals": 1550.5}}
    res = evaluate_check(spec, tmp_path)
    assert res.passed, res.detail  # a cached-values-only reader would see None here
    assert not evaluate_check({**spec, "expect": {"equals": 1550}}, tmp_path).passed
    assert evaluate_check({**spec, "expect": {"equals": 1550, "abs_tol": 1}}, tmp_path).passed


def test_check_details_say_where_a_value_came_from_and_show_patterns_as_written(
    tmp_path: Path, monkeypatch
) -> None:
    """A reader of the report sees "recalculated by LibreOffice" / "value cached in the
    workbook", not an engine's name, and a regex with one backslash, not repr's two."""
    make_workbook(tmp_path / "budget.xlsx")
    (tmp_path / "memo.md").write_text("Total 1550.5\n")
    spec = {"kind": "xlsx_cell", "cell": "B2", "expect": {"equals": 1200}}
    assert "(recalculated by LibreOffice)" in evaluate_check(spec, tmp_path).detail
    monkeypatch.setenv("JOBBENCH_XLSX_ENGINE", "cached")
    assert "(value cached in the workbook)" in evaluate_check(spec, tmp_path).detail
    res = evaluate_check({"kind": "regex", "pattern": r"Total\s+1550"}, tmp_path)
    assert res.passed and res.detail.startswith("pattern /Total\\s+1550/ matched 1×"), res.detail


def test_xlsx_cell_find_label_and_sheet(tmp_path: Path) -> None:
    make_workbook(tmp_path / "budget.xlsx")
    assert evaluate_check(
        {"kind": "xlsx_cell", "find": "total", "expect": {"equals": 1550.5}}, tmp_path
    ).passed
    assert evaluate_check(
        {
            "kind": "xlsx_cell",
            "sheet": "notes",
            "find": "Status",
            "direction": "below",
            "expect": {"equals": "approved"},
        },
        tmp_path,
    ).passed
    assert not evaluate_check(
        {
            "kind": "xlsx_cell",
            "sheet": "Notes",
            "find": "Status",
            "direction": "below",
            "expect": {"equals": "rejected"},
        },
        tmp_path,
    ).passed
    res = evaluate_check(
        {"kind": "xlsx_cell", "sheet": "Missing", "cell": "A1", "expect": {"contains": "x"}},
        tmp_path,
    )
    assert not res.passed and "no sheet 'Missing'" in res.detail


def test_xlsx_cell_no_workbook_fails(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "1550.5")
    assert not evaluate_check(
        {"kind": "xlsx_cell", "cell": "B4", "expect": {"equals": 1550.5}}, tmp_path
    ).passed


# ---------------------------------------------------------------- csv_value


CSV = 'Region,Month,Sales\nNorth,Jan,"1,000"\nSouth,Jan,250\nNorth,Feb,500\nnorth,Mar,\n'


def test_csv_value_cell(tmp_path: Path) -> None:
    write(tmp_path, "sales.csv", CSV)
    spec = {
        "kind": "csv_value",
        "column": "sales",
        "where": {"region": "SOUTH", "month": "jan"},
        "expect": {"equals": 250},
    }
    assert evaluate_check(spec, tmp_path).passed
    assert not evaluate_check({**spec, "expect": {"equals": 251}}, tmp_path).passed
    res = evaluate_check({**spec, "where": {"region": "West"}}, tmp_path)
    assert not res.passed and "no row" in res.detail


@pytest.mark.parametrize(
    "aggregate, where, expected",
    [
        ("sum", {}, 1750.0),  # 1,000 + 250 + 500 (blank skipped)
        ("sum", {"region": "north"}, 1500.0),
        ("mean", {}, 1750.0 / 3),
        ("min", {}, 250.0),
        ("max", {}, 1000.0),
        ("count", {}, 3),
        ("nunique", {}, 3),
    ],
)
def test_csv_value_aggregates(tmp_path: Path, aggregate: str, where: dict, expected: float) -> None:
    write(tmp_path, "sales.csv", CSV)
    spec = {
        "kind": "csv_value",
        "column": "Sales",
        "where": where,
        "aggregate": aggregate,
        "expect": {"equals": expected, "abs_tol": 1e-9},
    }
    assert evaluate_check(spec, tmp_path).passed
    wrong = {**spec, "expect": {"equals": expected + 1}}
    assert not evaluate_check(wrong, tmp_path).passed


def test_csv_value_semicolon_and_missing_column(tmp_path: Path) -> None:
    write(tmp_path, "eu.csv", "name;amount\nA;10\nB;20\n")
    assert evaluate_check(
        {"kind": "csv_value", "column": "amount", "aggregate": "sum", "expect": {"equals": 30}},
        tmp_path,
    ).passed
    res = evaluate_check(
        {"kind": "csv_value", "column": "price", "expect": {"equals": 30}}, tmp_path
    )
    assert not res.passed and "no column" in res.detail


# ---------------------------------------------------------------- sqlite_query


def make_db(path: Path) -> None:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE claims (id INTEGER, status TEXT, amount REAL)")
    con.executemany(
        "INSERT INTO claims VALUES (?,?,?)",
        [(1, "open", 10.0), (2, "closed", 32.5), (3, "open", 7.5)],
    )
    con.commit()
    con.close()


def test_sqlite_query_check(tmp_path: Path) -> None:
    make_db(tmp_path / "claims.db")
    spec = {
        "kind": "sqlite_query",
        "query": "SELECT SUM(amount) FROM claims WHERE status='open'",
        "expect": {"equals": 17.5},
    }
    assert evaluate_check(spec, tmp_path).passed
    assert not evaluate_check({**spec, "expect": {"equals": 18}}, tmp_path).passed
    res = evaluate_check({**spec, "query": "SELECT x FROM missing_table"}, tmp_path)
    assert not res.passed and "no such table" in res.detail
    res = evaluate_check({**spec, "query": "SELECT id FROM claims WHERE id > 99"}, tmp_path)
    assert not res.passed and "no rows" in res.detail


def test_sqlite_query_is_read_only(tmp_path: Path) -> None:
    db = tmp_path / "claims.db"
    make_db(db)
    before = db.read_bytes()
    for q in (
        "DELETE FROM claims",
        "ATTACH DATABASE 'x.db' AS x",
        "PRAGMA journal_mode=WAL",
        "CREATE TABLE t(x)",
    ):
        res = evaluate_check(
            {"kind": "sqlite_query", "query": q, "expect": {"equals": 0}}, tmp_path
        )
        assert not res.passed and "query failed" in res.detail, q
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "claims.db"
    ]  # no journal, no attached file


def test_sqlite_query_time_bound(tmp_path: Path) -> None:
    make_db(tmp_path / "claims.db")
    endless = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    )
    with pytest.raises(sqlite3.OperationalError, match="interrupted"):
        run_query(tmp_path / "claims.db", endless, seconds=0.2)


def test_sqlite_ignores_non_database_files(tmp_path: Path) -> None:
    write(tmp_path, "fake.db", "not a database")
    res = evaluate_check(
        {"kind": "sqlite_query", "query": "SELECT 1", "expect": {"equals": 1}}, tmp_path
    )
    assert not res.passed and "no deliverable" in res.detail


# ---------------------------------------------------------------- json_path


def test_json_path_check(tmp_path: Path) -> None:
    doc = {
        "totals": {"net": "$1,234.50", "count": 3},
        "items": [{"id": "A-1", "name": "Desk"}, {"id": "B-2", "name": "Chair"}],
    }
    write(tmp_path, "result.json", json.dumps(doc))
    assert evaluate_check(
        {"kind": "json_path", "path": "totals.net", "expect": {"equals": 1234.5}}, tmp_path
    ).passed
    assert evaluate_check(
        {"kind": "json_path", "path": "$.items[1].name", "expect": {"equals": "chair"}}, tmp_path
    ).passed
    assert evaluate_check(
        {"kind": "json_path", "path": "items[*].id", "expect": {"equals": "B-2"}}, tmp_path
    ).passed
    assert evaluate_check(
        {"kind": "json_path", "path": "items[*].id", "expect": {"any_of": ["Z-9", "a-1"]}}, tmp_path
    ).passed
    assert not evaluate_check(
        {"kind": "json_path", "path": "items[*].id", "expect": {"equals": "C-3"}}, tmp_path
    ).passed
    res = evaluate_check(
        {"kind": "json_path", "path": "totals.gross", "expect": {"equals": 1}}, tmp_path
    )
    assert not res.passed and "nothing at" in res.detail
    assert evaluate_check(
        {"kind": "json_path", "path": "totals.count", "expect": {"contains": "3"}}, tmp_path
    ).passed


def test_json_path_malformed_json_fails(tmp_path: Path) -> None:
    write(tmp_path, "result.json", "{not json")
    res = evaluate_check({"kind": "json_path", "path": "a", "expect": {"equals": 1}}, tmp_path)
    assert not res.passed and not res.error


def test_invalid_spec_is_an_error(tmp_path: Path) -> None:
    res = evaluate_check({"kind": "number"}, tmp_path)
    assert res.error and not res.passed
