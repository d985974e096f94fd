"""A deliverable that cannot be read or parsed fails the check FOR THAT FILE (the reason in
the detail); a check passes when any matching file passes; only a broken check is an error.

Regression tests for a junk file making a whole task unscorable (``check crashed`` →
``judge_error`` → no score, on every regrade)."""

from __future__ import annotations

import json
import os
import random
import sqlite3
from pathlib import Path

import openpyxl
import pytest
from judge_helpers import make_task

from jobbench.judge import JudgeConfig, evaluate_check, grade_trial
from jobbench.judge.checks import _common

MIX_CSV = "mix,strength_mpa,cost_per_m3\nM20,21.4,88.5\nM25,26.1,94.0\nM30,31.7,101.25\n"
CSV_CHECK = {
    "kind": "csv_value",
    "file": "*.csv",
    "column": "cost_per_m3",
    "where": {"mix": "M25"},
    "expect": {"equals": 94.0},
}


def garbage(seed: int, n: int = 20_000, *, nul: bool = True) -> bytes:
    """Reproducible random bytes (with or without NUL bytes)."""
    rng = random.Random(seed)
    data = bytes(rng.randrange(256) for _ in range(n))
    return data if nul else data.replace(b"\x00", b"\x01")


def deep_json(levels: int) -> str:
    return "[" * levels + "]" * levels


# ---------------------------------------------------------------- csv_value


@pytest.mark.parametrize("nul", [True, False])
def test_csv_binary_garbage_beside_the_right_file_still_passes(tmp_path: Path, nul: bool) -> None:
    (tmp_path / "binary_garbage.csv").write_bytes(garbage(7, nul=nul))  # sorts before the real file
    (tmp_path / "mix_evaluation.csv").write_text(MIX_CSV, encoding="utf-8")
    res = evaluate_check(CSV_CHECK, tmp_path)
    assert (res.passed, res.error, res.file) == (True, False, "mix_evaluation.csv")
    assert res.evidence == "mix_evaluation.csv cost_per_m3 where mix='M25' = 94.0"


@pytest.mark.parametrize(
    "nul, reason",
    [(True, "binary content (NUL bytes)"), (False, "binary content (control characters)")],
)
def test_csv_binary_garbage_alone_is_a_plain_fail_naming_the_file(
    tmp_path: Path, nul: bool, reason: str
) -> None:
    (tmp_path / "binary_garbage.csv").write_bytes(garbage(7, nul=nul))
    res = evaluate_check(CSV_CHECK, tmp_path)
    assert (res.passed, res.error) == (False, False)
    assert res.detail.startswith("binary_garbage.csv: ") and reason in res.detail
    assert "crashed" not in res.detail


def test_csv_field_over_the_csv_size_limit_fails_that_file_only(tmp_path: Path) -> None:
    (tmp_path / "a_huge_field.csv").write_text(
        'mix,cost_per_m3\n"' + "x" * 200_000 + '",1\n', encoding="utf-8"
    )
    res = evaluate_check(CSV_CHECK, tmp_path)
    assert (res.passed, res.error) == (False, False)
    assert res.detail.startswith(
        "a_huge_field.csv: unreadable (csv.Error: field larger than field limit"
    )
    (tmp_path / "mix_evaluation.csv").write_text(MIX_CSV, encoding="utf-8")
    assert evaluate_check(CSV_CHECK, tmp_path).passed


def test_csv_blank_rows_only_is_a_plain_fail(tmp_path: Path) -> None:
    (tmp_path / "empty_grid.csv").write_text(",,,\n , ,\n", encoding="utf-8")
    res = evaluate_check(CSV_CHECK, tmp_path)
    assert (res.passed, res.error, res.detail) == (
        False,
        False,
        "empty_grid.csv: unreadable (ValueError: no non-blank row)",
    )


@pytest.mark.parametrize(
    "data",
    [
        MIX_CSV.replace("\n", "\r").encode("ascii"),  # classic Mac line ends
        MIX_CSV.replace("\n", "\r\n").encode("ascii"),
        MIX_CSV.encode("utf-16"),  # "Unicode text" export of spreadsheet programs (BOM + UTF-16)
    ],
    ids=["cr", "crlf", "utf16"],
)
def test_csv_line_ends_and_utf16_are_read(tmp_path: Path, data: bytes) -> None:
    (tmp_path / "mix_evaluation.csv").write_bytes(data)
    res = evaluate_check(CSV_CHECK, tmp_path)
    assert (res.passed, res.error) == (True, False), res.detail


# ---------------------------------------------------------------- json_path


def test_json_nested_200000_levels_is_a_plain_fail_for_that_file(tmp_path: Path) -> None:
    spec = {"kind": "json_path", "path": "estimate.total", "expect": {"equals": 1250.0}}
    (tmp_path / "a_deep.json").write_text(deep_json(200_000), encoding="utf-8")
    res = evaluate_check(spec, tmp_path)
    assert (res.passed, res.error, res.detail) == (
        False,
        False,
        "a_deep.json: not valid JSON (nested too deeply to parse)",
    )
    (tmp_path / "concrete_estimate.json").write_text(
        json.dumps({"estimate": {"total": 1250}}), encoding="utf-8"
    )
    res = evaluate_check(spec, tmp_path)
    assert (res.passed, res.error, res.file) == (True, False, "concrete_estimate.json")


def test_json_invalid_utf8_is_a_plain_fail(tmp_path: Path) -> None:
    (tmp_path / "out.json").write_bytes(b'{"a": "\xff\xfe"}')
    res = evaluate_check({"kind": "json_path", "path": "a", "expect": {"equals": 1}}, tmp_path)
    assert (res.passed, res.error) == (False, False)
    assert res.detail.startswith("out.json: not valid JSON (UnicodeDecodeError: ")


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-32"])
def test_json_with_a_byte_order_mark_is_read(tmp_path: Path, encoding: str) -> None:
    (tmp_path / "out.json").write_bytes(json.dumps({"estimate": {"total": 1250}}).encode(encoding))
    res = evaluate_check(
        {"kind": "json_path", "path": "estimate.total", "expect": {"equals": 1250}}, tmp_path
    )
    assert (res.passed, res.error) == (True, False), res.detail


# ---------------------------------------------------------------- sqlite_query


def make_db(path: Path, *, wal: bool = False) -> None:
    con = sqlite3.connect(path)
    if wal:
        con.execute("PRAGMA journal_mode=WAL")
    con.execute("CREATE TABLE mixes (mix TEXT, cost REAL)")
    con.executemany("INSERT INTO mixes VALUES (?, ?)", [("M20", 88.5), ("M25", 94.0)])
    con.commit()
    con.close()


SQL_CHECK = {
    "kind": "sqlite_query",
    "query": "SELECT cost FROM mixes WHERE mix = 'M25'",
    "expect": {"equals": 94},
}


def test_sqlite_header_with_garbage_body_fails_that_file_only(tmp_path: Path) -> None:
    (tmp_path / "a_corrupt.db").write_bytes(b"SQLite format 3\x00" + garbage(3, 8192))
    res = evaluate_check(SQL_CHECK, tmp_path)
    assert (res.passed, res.error) == (False, False)
    assert res.detail.startswith("a_corrupt.db: query failed (")
    make_db(tmp_path / "mixes.db")
    res = evaluate_check(SQL_CHECK, tmp_path)
    assert (res.passed, res.error, res.file) == (True, False, "mixes.db")


def test_sqlite_wal_database_is_read_without_writing_beside_it(tmp_path: Path) -> None:
    make_db(tmp_path / "mixes.db", wal=True)
    before = sorted(os.listdir(tmp_path))
    res = evaluate_check(SQL_CHECK, tmp_path)
    assert (res.passed, res.file) == (True, "mixes.db")
    assert (
        sorted(os.listdir(tmp_path)) == before == ["mixes.db"]
    )  # no -shm / -wal left in the deliverables


def test_sqlite_odd_file_name_is_quoted(tmp_path: Path) -> None:
    make_db(tmp_path / "mixes #1 ?v=2%.db")
    assert evaluate_check(SQL_CHECK, tmp_path).passed


# ---------------------------------------------------------------- xlsx_cell


def test_xlsx_corrupt_zip_beside_a_good_workbook(tmp_path: Path) -> None:
    spec = {"kind": "xlsx_cell", "cell": "B2", "expect": {"equals": 94}}
    (tmp_path / "a_broken.xlsx").write_bytes(b"PK\x03\x04" + garbage(5, 4096))
    res = evaluate_check(spec, tmp_path)
    assert (res.passed, res.error) == (False, False) and res.detail.startswith(
        "a_broken.xlsx: unreadable ("
    )
    wb = openpyxl.Workbook()
    wb.active.append(["mix", "cost"])
    wb.active.append(["M25", 94])
    wb.save(tmp_path / "mixes.xlsx")
    res = evaluate_check(spec, tmp_path)
    assert (res.passed, res.error, res.file) == (True, False, "mixes.xlsx")


# ---------------------------------------------------------------- number / regex / file_exists


def test_text_checks_skip_a_file_whose_extraction_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """number/regex extract on demand when no extraction is given; a file that cannot be
    opened any more (vanished, permissions) must not crash the check."""
    import jobbench.extract as ex

    (tmp_path / "a_gone.md").write_text("cost 94", encoding="utf-8")
    (tmp_path / "summary.md").write_text("M25 costs 94.00 per m3", encoding="utf-8")
    real = ex.extract

    def flaky(path, *a, **kw):  # type: ignore[no-untyped-def]
        if Path(path).name == "a_gone.md":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *a, **kw)

    monkeypatch.setattr(ex, "extract", flaky)
    res = evaluate_check({"kind": "number", "value": 94, "near": ["M25"]}, tmp_path)
    assert (res.passed, res.error, res.file) == (True, False, "summary.md")
    res = evaluate_check({"kind": "regex", "pattern": r"cost"}, tmp_path)
    assert (res.passed, res.error, res.file) == (True, False, "summary.md")


def test_file_exists_skips_a_file_that_vanished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "report.pdf").write_bytes(b"%PDF-1.4 " + b"x" * 2000)
    monkeypatch.setattr(_common, "list_deliverables", lambda root: ["gone.pdf", "report.pdf"])
    res = evaluate_check({"kind": "file_exists", "file": "*.pdf", "min_bytes": 1000}, tmp_path)
    assert (res.passed, res.error, res.file) == (True, False, "report.pdf")
    monkeypatch.setattr(_common, "list_deliverables", lambda root: ["gone.pdf"])
    res = evaluate_check({"kind": "file_exists", "file": "*.pdf", "min_bytes": 1000}, tmp_path)
    assert (res.passed, res.error, res.detail) == (
        False,
        False,
        "no readable deliverable matches '*.pdf'",
    )


# ---------------------------------------------------------------- the rule itself


def test_a_bug_in_a_check_is_still_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jobbench.judge.checks import _csv_value

    (tmp_path / "mix_evaluation.csv").write_text(MIX_CSV, encoding="utf-8")

    def broken(*a, **kw):  # type: ignore[no-untyped-def]
        raise KeyError("internal")

    monkeypatch.setattr(_csv_value, "expect_matches", broken)
    res = evaluate_check(CSV_CHECK, tmp_path)
    assert (res.passed, res.error) == (False, True) and "check crashed (KeyError" in res.detail


def test_junk_file_leaves_the_task_scorable(tmp_path: Path) -> None:
    """End to end (checks only): the oracle's right CSV plus a junk CSV scores 1.0, complete."""
    task = make_task(
        tmp_path,
        [
            {
                "rubric": "Is the M25 mix costed right?",
                "weight": 2,
                "criterion": ["M25 costs 94.00 per m3"],
                "checks": [CSV_CHECK],
            },
            {
                "rubric": "Is the estimate total right?",
                "weight": 1,
                "criterion": ["total is 1250"],
                "checks": [
                    {"kind": "json_path", "path": "estimate.total", "expect": {"equals": 1250}}
                ],
            },
        ],
    )
    deliv = tmp_path / "deliverables"
    deliv.mkdir()
    (deliv / "binary_garbage.csv").write_bytes(garbage(11))
    (deliv / "mix_evaluation.csv").write_text(MIX_CSV, encoding="utf-8")
    (deliv / "deep.json").write_text(deep_json(200_000), encoding="utf-8")
    (deliv / "estimate.json").write_text(
        json.dumps({"estimate": {"total": 1250}}), encoding="utf-8"
    )
    rec = grade_trial(task, deliv, JudgeConfig())
    assert (rec.status, rec.score, rec.passed_weight, rec.max_score) == ("complete", 1.0, 3.0, 3.0)
    verdicts = [(c.verdict, c.source) for g in rec.rubrics for c in g.criteria]
    assert verdicts == [("pass", "check"), ("pass", "check")]


def test_csv_missing_column_detail_stays_short(tmp_path: Path) -> None:
    header = [f"column_{i}_" + "x" * 60 for i in range(30)]
    (tmp_path / "wide.csv").write_text(
        ",".join(header) + "\n" + ",".join("1" * 30) + "\n", encoding="utf-8"
    )
    res = evaluate_check(CSV_CHECK, tmp_path)
    assert (res.passed, res.error) == (False, False)
    assert res.detail.endswith(", … (30 columns))") and len(res.detail) < 700
    assert ("column_11_" in res.detail, "column_12_" in res.detail) == (True, False)
