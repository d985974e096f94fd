"""Helpers and fixture tasks for the runner tests (built in a temporary directory at test time).

Dataset layout: ``<root>/sample/<occupation>/taskN/`` with ``task_folder/``,
``RUBRICS.json``, ``task_card.md``, ``solution/solve.py`` (the oracle calling convention:
``python solve.py --workspace DIR --output DIR``) and, for task1,
``files_required_to_search/``.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import openpyxl
import pytest

from jobbench.sandbox import bwrap_available

OCC = "bookkeeping_accounting_and_auditing_clerks"
SECRET = "RUBRIC-SECRET-7f3a"  # planted in hidden files; must never reach an agent

LEDGER = [("Jan", 1200.50, 300.25), ("Feb", 980.00, 410.00), ("Mar", 1430.75, 220.50)]


def ledger_totals() -> dict[str, float]:
    return {m: round(inc - exp, 2) for m, inc, exp in LEDGER}


SOLVE_TASK1 = """
import argparse, csv, os, time
from pathlib import Path
import openpyxl
p = argparse.ArgumentParser()
p.add_argument("--workspace", required=True)
p.add_argument("--output", required=True)
a = p.parse_args()
delay = float(os.environ.get("JB_TEST_SOLVE_DELAY", "0") or 0)
wb = openpyxl.load_workbook(Path(a.workspace) / "ledger.xlsx")
ws = wb["Ledger"]
rows = [r for r in ws.iter_rows(min_row=2, values_only=True)]
with open(Path(a.output) / "net.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["month", "net"])
    for month, inc, exp in rows:
        w.writerow([month, f"{inc - exp:.2f}"])
"""

SOLVE_TASK2 = """
import argparse, time
from pathlib import Path
p = argparse.ArgumentParser()
p.add_argument("--workspace", required=True)
p.add_argument("--output", required=True)
a = p.parse_args()
text = (Path(a.workspace) / "TASK_INSTRUCTIONS.txt").read_text()
time.sleep(float(Path(a.workspace, "delay.txt").read_text()) if Path(a.workspace, \
"delay.txt").exists() else 0)
(Path(a.output) / "memo.md").write_text("# Memo\\nThe approved vendor is Acme Supplies.\\n")
"""


def _rubrics(items: list[tuple[str, float, list[str], list[dict] | None]]) -> dict:
    out = []
    for q, w, c, checks in items:
        r: dict = {"rubric": q, "weight": w, "criterion": c}
        if checks:
            r["checks"] = checks
        out.append(r)
    return {"rubrics": out, "note": SECRET}


def _net_check(month: str, value: float) -> dict:
    return {
        "kind": "csv_value",
        "file": "net.csv",
        "column": "net",
        "where": {"month": month},
        "expect": {"equals": value, "abs_tol": 0.005},
    }


def build_dataset(root: Path, *, delay: float = 0.0) -> Path:
    """Create a two-task fixture dataset under ``root/sample`` and return ``root/sample``."""
    split = root / "sample"
    t1 = split / OCC / "task1"
    (t1 / "task_folder").mkdir(parents=True)
    (t1 / "task_folder" / "TASK_INSTRUCTIONS.txt").write_text(
        "Compute the net amount (income minus expenses) per month from ledger.xlsx and save "
        "net.csv "
        "with columns month,net.\nReference Files: ledger.xlsx\n"
    )
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Ledger"
    ws.append(["month", "income", "expenses"])
    for row in LEDGER:
        ws.append(list(row))
    wb.save(t1 / "task_folder" / "ledger.xlsx")
    (t1 / "RUBRICS.json").write_text(
        json.dumps(
            _rubrics(
                [
                    (
                        "Is the January net correct?",
                        2,
                        ["net.csv gives 900.25 for Jan"],
                        [_net_check("Jan", 900.25)],
                    ),
                    (
                        "Is the March net correct?",
                        1,
                        ["net.csv gives 1210.25 for Mar"],
                        [_net_check("Mar", 1210.25)],
                    ),
                ]
            )
        )
    )
    (t1 / "task_card.md").write_text(f"# Card\nAnswer: Jan 900.25. {SECRET}\n")
    (t1 / "solution").mkdir()
    (t1 / "solution" / "solve.py").write_text(SOLVE_TASK1)
    (t1 / "solution" / "answers.txt").write_text(SECRET + "\n")
    (t1 / "files_required_to_search").mkdir()
    (t1 / "files_required_to_search" / "expense_policy.txt").write_text(
        "Expense policy 2024: travel expenses above 500 dollars need written approval from the "
        "controller.\n"
    )
    (t1 / "files_required_to_search" / "holiday_calendar.txt").write_text(
        "Office holidays: New Year, Independence Day, Thanksgiving.\n"
    )

    t2 = split / OCC / "task2"
    (t2 / "task_folder").mkdir(parents=True)
    (t2 / "task_folder" / "TASK_INSTRUCTIONS.txt").write_text(
        "Write memo.md naming the approved vendor.\n"
    )
    if delay:
        (t2 / "task_folder" / "delay.txt").write_text(str(delay))
    (t2 / "RUBRICS.json").write_text(
        json.dumps(
            _rubrics(
                [
                    (
                        "Names the vendor?",
                        1,
                        ["memo names Acme Supplies"],
                        [{"kind": "regex", "pattern": r"Acme\s+Supplies"}],
                    )
                ]
            )
        )
    )
    (t2 / "task_card.md").write_text(f"Card {SECRET}\n")
    (t2 / "solution").mkdir()
    (t2 / "solution" / "solve.py").write_text(SOLVE_TASK2)
    return split


def make_executable(path: Path, text: str) -> Path:
    """Write an executable script and make its directory traversable by the sandbox user."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    path.parent.chmod(0o755)
    return path


def python_shebang() -> str:
    return f"#!{sys.executable}\n"


needs_bwrap = pytest.mark.skipif(
    not bwrap_available()[0], reason="bubblewrap not usable here: " + bwrap_available()[1]
)


def tree_digest(root: Path) -> dict[str, tuple[int, int]]:
    """{relative path: (size, mtime_ns)} of every entry under ``root`` (for "nothing changed")."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = Path(dirpath) / n
            st = os.lstat(p)
            out[p.relative_to(root).as_posix()] = (
                st.st_size if not stat.S_ISDIR(st.st_mode) else 0,
                st.st_mtime_ns,
            )
    return out


def expected_memo() -> str:
    """What the task2 reference solution writes."""
    return "# Memo\nThe approved vendor is Acme Supplies.\n"


SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
"""The bundled sample dataset of this checkout."""


def run_easy_civil(
    cwd: Path, runs_dir: Path, *extra: str, env: dict[str, str] | None = None
) -> tuple[int, str]:
    """``jobbench run`` of the sample's ``easy`` civil-engineers task (run name ``r``, no
    progress) from ``cwd`` (where a ``command:./…`` agent is looked up), through Typer's
    CliRunner; ``extra`` options are appended. Returns (exit code, console output)."""
    from typer.testing import CliRunner

    from jobbench.cli import app

    args = ["run", str(SAMPLE), "--split", "easy", "--tasks", "*/civil_engineers/task1",
            "--runs-dir", str(runs_dir), "--run-name", "r", "--no-progress", *extra]  # fmt: skip
    old = os.getcwd()
    os.chdir(cwd)
    try:
        res = CliRunner().invoke(app, args, env=env)
    finally:
        os.chdir(old)
    return res.exit_code, res.output
