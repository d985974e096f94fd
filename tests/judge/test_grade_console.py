"""`jobbench grade`'s summary never cuts a header or a name: a table when it fits the
console, else one line per agent@model (a piped console is 80 columns wide)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    cmd = [sys.executable, "-m", "jobbench", "run", "--split", "easy", "--tasks",
           "easy/civil_engineers/*", "--runs-dir", str(out), "--run-name", "r",
           "--no-grade", "--no-progress"]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True)
    return out / "r"


def _grade(run, columns: int) -> str:
    env = {"COLUMNS": str(columns), "PATH": "/usr/bin:/bin", "HOME": str(run.parent)}
    res = subprocess.run(
        [sys.executable, "-m", "jobbench", "grade", str(run)],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    return res.stdout


def test_piped_grade_summary_keeps_every_header_and_name(sample_run) -> None:
    out = _grade(sample_run, 80)
    assert "…" not in out
    lines = out.splitlines()
    assert lines[0] == "grades by judge checks"
    # "graded now" is 1 on the first grade of the run and 0 after (the other test may go first)
    assert re.match(r"  null@-: trials 1, graded now [01], scored 1, mean score 0\.0, ", lines[1])
    assert re.match(r"  oracle@-: trials 1, graded now [01], scored 1, mean score 100\.0", lines[2])
    assert lines[2].endswith("judge_error 0, unjudged 0, judge calls now 0, judge cost now -")


def test_wide_console_gets_the_table(sample_run) -> None:
    out = _grade(sample_run, 200)
    assert "…" not in out
    header = next(line for line in out.splitlines() if "agent@model" in line)
    assert "judge calls now" in header and "judge cost now" in header
