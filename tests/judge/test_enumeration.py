"""Volume does not beat programmatic checks (issue 14, part 3).

An enumerating agent (``enumerator.py``: grids of candidate values around each checked
value, in one file and across many files) scores no more than the null agent plus 5 points
on every sample task under checks-only grading, and its trials are flagged; the reference
solution still scores 100 % with no such flag. Unit tests pin the semantics per kind.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest

from jobbench.judge import JudgeConfig, evaluate_check
from jobbench.judge._grade import CONFLICT_FLAG, OVER_CAP_FLAG, grade_trial
from jobbench.judge.checks._common import check_scope
from jobbench.tasks import Task, load_dataset

sys.path.insert(0, str(Path(__file__).parent))
from enumerator import enumerate_deliverables  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TASKS = load_dataset(ROOT / "datasets" / "sample").tasks
CHECKS_ONLY = JudgeConfig(cache=False)
VALUE_KINDS = {"number", "xlsx_cell", "csv_value", "json_path", "sqlite_query"}


def test_sample_has_both_splits() -> None:
    assert len(TASKS) == 16 and {t.split for t in TASKS} == {"main", "easy"}


@pytest.mark.parametrize("mode", ["one", "many"])
@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_enumerator_scores_at_most_null_plus_5(task: Task, mode: str, tmp_path: Path) -> None:
    null = grade_trial(task, tmp_path / "null", CHECKS_ONLY)
    out = tmp_path / "enum"
    out.mkdir()
    enumerate_deliverables(task, out, mode)
    rec = grade_trial(task, out, CHECKS_ONLY)
    assert null.score == 0.0
    assert rec.score is not None and rec.score <= null.score + 0.05, (rec.score, rec.flags)
    conflicts = {f[len(CONFLICT_FLAG) :] for f in rec.flags if f.startswith(CONFLICT_FLAG)}
    assert conflicts, rec.flags
    if mode == "many":
        # each file states one candidate, so the right value is always among them: every
        # value check saw it AND saw a rival, and the trial is past the volume caps
        value_checks = {
            f"{r.id}/{c.index}"
            for r in task.rubrics
            for c in r.criteria
            if c.check is not None and c.check.kind in VALUE_KINDS
        }
        assert conflicts == value_checks
        assert any(f.startswith(OVER_CAP_FLAG + "files:") for f in rec.flags)
        assert any(f.startswith(OVER_CAP_FLAG + "files_per_check:") for f in rec.flags)


@pytest.fixture(scope="module")
def oracle_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each task's solve.py run on a copy of its workspace only."""
    outputs = {}
    for task in TASKS:
        base = tmp_path_factory.mktemp("oracle")
        ws, sol, out = base / "workspace", base / "solution", base / "output"
        shutil.copytree(task.workspace_dir, ws)
        sol.mkdir()
        shutil.copy2(task.solution_dir / "solve.py", sol / "solve.py")
        proc = subprocess.run(
            [sys.executable, str(sol / "solve.py"), "--workspace", str(ws), "--output", str(out)],
            cwd=base,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        outputs[task.id] = out
    return outputs


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_oracle_keeps_full_score_without_flags(task: Task, oracle_outputs: dict[str, Path]) -> None:
    rec = grade_trial(task, oracle_outputs[task.id], CHECKS_ONLY)
    assert rec.score == 1.0
    assert [f for f in rec.flags if f.startswith((CONFLICT_FLAG, OVER_CAP_FLAG))] == []


# ------------------------------------------------------------------ semantics per kind


def _memo(tmp_path: Path, text: str) -> Path:
    (tmp_path / "memo.md").write_text(text, encoding="utf-8")
    return tmp_path


NET = {"kind": "number", "value": 549.74, "abs_tol": 0.6, "near": ["net income"]}


def test_number_grid_fails_one_superseded_value_passes(tmp_path: Path) -> None:
    grid = "\n".join(f"Net income: ${v:.2f}" for v in (544.24, 549.74, 555.24, 494.77, 604.71))
    res = evaluate_check(NET, _memo(tmp_path, grid))
    # 544.24 and 555.24 are within 10 tolerances (6.0) of 549.74; 494.77/604.71 are not
    assert not res.passed and res.conflict and "2 other value(s)" in res.detail
    honest = "Net income: $549.74 (the April draft said $545.10; superseded). Revenue $6,899.55."
    res = evaluate_check(NET, _memo(tmp_path, honest))
    assert res.passed and not res.conflict and "also states '$545.10'" in res.detail
    # the answer rounded to the digits shown is not a rival: 550 and 549.7 agree with 549.74
    res = evaluate_check(
        {**NET, "abs_tol": 0.01}, _memo(tmp_path, "Net income $549.74, about $550 (549.7).")
    )
    assert res.passed and "also states" not in res.detail


def test_number_grid_across_files_fails(tmp_path: Path) -> None:
    for i, v in enumerate((549.74, 544.0, 556.0)):
        (tmp_path / f"memo{i}.md").write_text(f"Net income: {v}", encoding="utf-8")
    res = evaluate_check({**NET, "file": "*.md"}, tmp_path)
    assert not res.passed and res.conflict


def _book(path: Path, rows: list[list[object]], sheet: str = "Summary") -> None:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = sheet
    for row in rows:
        ws.append(row)
    wb.save(path)


XLSX = {
    "kind": "xlsx_cell",
    "file": "*.xlsx",
    "sheet": "Summary",
    "find": "Ending value",
    "expect": {"equals": 304900.45, "abs_tol": 1},
}


def test_xlsx_label_twice_or_two_books_must_agree(tmp_path: Path) -> None:
    _book(tmp_path / "a.xlsx", [["Ending value", 304900.45], ["Ending value", 304900.45]])
    res = evaluate_check(XLSX, tmp_path)
    assert res.passed and "stated 2×, all agree" in res.detail
    _book(tmp_path / "a.xlsx", [["Ending value", 304900.45], ["Ending value", 303767.95]])
    res = evaluate_check(XLSX, tmp_path)
    assert not res.passed and res.conflict and "a.xlsx Summary!B2 = '303767.95'" in res.detail
    _book(tmp_path / "a.xlsx", [["Ending value", 304900.45]])
    _book(tmp_path / "b.xlsx", [["Ending value", 300000]])
    assert evaluate_check(XLSX, tmp_path).conflict
    _book(tmp_path / "b.xlsx", [["Other", 1]])  # a workbook without the label states nothing
    assert evaluate_check(XLSX, tmp_path).passed


def test_csv_rows_for_the_key_must_agree(tmp_path: Path) -> None:
    check = {
        "kind": "csv_value",
        "column": "shares",
        "where": {"symbol": "AAPL"},
        "expect": {"equals": 600},
    }
    (tmp_path / "h.csv").write_text("symbol,shares\nAAPL,600\nMSFT,800\n", encoding="utf-8")
    assert evaluate_check(check, tmp_path).passed
    (tmp_path / "h.csv").write_text(
        "symbol,shares\nAAPL,600\nAAPL,500\nAAPL,700\n", encoding="utf-8"
    )
    res = evaluate_check(check, tmp_path)
    assert not res.passed and res.conflict and "line 3" in res.detail
    (tmp_path / "h.csv").write_text("symbol,shares,shares\nAAPL,600,650\n", encoding="utf-8")
    assert evaluate_check(check, tmp_path).conflict


def test_json_repeated_key_must_agree(tmp_path: Path) -> None:
    check = {"kind": "json_path", "path": "orders", "expect": {"equals": 113}}
    (tmp_path / "s.json").write_text(
        '{"orders": 113, "orders": 112, "orders": 114}', encoding="utf-8"
    )
    res = evaluate_check(check, tmp_path)
    assert not res.passed and res.conflict and "value 2 of 3" in res.detail
    (tmp_path / "s.json").write_text(json.dumps({"orders": 113}), encoding="utf-8")
    assert evaluate_check(check, tmp_path).passed
    # a wildcard is a membership test: some element matches
    ids = {"kind": "json_path", "path": "items[*].id", "expect": {"equals": "A-1"}}
    (tmp_path / "s.json").write_text(
        json.dumps({"items": [{"id": "B"}, {"id": "A-1"}]}), encoding="utf-8"
    )
    assert evaluate_check(ids, tmp_path).passed


def test_sqlite_unordered_rows_must_agree_ordered_first_row_decides(tmp_path: Path) -> None:
    con = sqlite3.connect(tmp_path / "s.db")
    con.execute("CREATE TABLE states (state_name, violent)")
    con.executemany("INSERT INTO states VALUES (?, ?)", [("Alabama", 459.9), ("Alabama", 495.9)])
    con.commit()
    con.close()
    q = {
        "kind": "sqlite_query",
        "query": "SELECT violent FROM states WHERE state_name = 'Alabama'",
        "expect": {"equals": 459.9, "abs_tol": 0.001},
    }
    res = evaluate_check(q, tmp_path)
    assert not res.passed and res.conflict and "row 2 of 2" in res.detail
    ordered = {**q, "query": q["query"] + " ORDER BY violent"}
    assert evaluate_check(ordered, tmp_path).passed


def test_scope_reads_the_files_the_criterion_names() -> None:
    files = ["findings.md", "notes/findings.md", "grid_1.md", "memo.docx"]
    assert check_scope("*.md", files, "findings.md gives 50 states.", None) == [
        "findings.md",
        "notes/findings.md",
    ]
    assert check_scope("*.md", files, "The memo gives 50 states.", None) is None
    assert check_scope("*.md", files, "summary.md gives 50 states.", None) == []
    assert (
        check_scope("findings.md", files, "grid_1.md says so", None) is None
    )  # exact name decides
    assert check_scope(None, files, "A deliverable says so.", ["*.docx"]) == ["memo.docx"]


def test_grading_scopes_checks_and_flags_volume(tmp_path: Path) -> None:
    from jobbench.tasks import load_task

    task_dir = tmp_path / "ds" / "main" / "demo" / "task1"
    (task_dir / "task_folder").mkdir(parents=True)
    (task_dir / "task_folder" / "TASK_INSTRUCTIONS.txt").write_text(
        "Write findings.md.", encoding="utf-8"
    )
    (task_dir / "task_card.md").write_text("demo", encoding="utf-8")
    rubrics = {
        "rubrics": [
            {
                "rubric": "n",
                "weight": 1,
                "criterion": ["findings.md gives 50 states."],
                "checks": [{"kind": "number", "file": "*.md", "value": 50, "near": ["states"]}],
            }
        ]
    }
    (task_dir / "RUBRICS.json").write_text(json.dumps(rubrics), encoding="utf-8")
    task = load_task(task_dir)
    out = tmp_path / "out"
    out.mkdir()
    (out / "findings.md").write_text("The sample has 52 states.", encoding="utf-8")
    for i in range(60):  # the right value, in files the criterion does not name
        (out / f"alt_{i:02d}.md").write_text("50 states", encoding="utf-8")
    rec = grade_trial(task, out, CHECKS_ONLY)
    assert rec.score == 0.0
    assert f"{OVER_CAP_FLAG}files:61" in rec.flags
    assert not any(
        f.startswith(OVER_CAP_FLAG + "files_per_check:") for f in rec.flags
    )  # scope: 1 file
