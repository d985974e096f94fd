"""Review fixes: Markdown escaping of dataset-derived text, CSV formula guard, report
folders that cannot be written, and `jobbench compare` on two runs of several
configurations."""

from __future__ import annotations

import csv
import importlib.util
import json
import re
from pathlib import Path

import pytest

from jobbench.report import build_report, write_report
from jobbench.report._tables import leaderboard_markdown

_spec = importlib.util.spec_from_file_location("report_fixtures", Path(__file__).with_name("conftest.py"))
fx = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fx)
T1, T2, T3, T4 = fx.T1, fx.T2, fx.T3, fx.T4
P, F = fx.P, fx.F
write_lock, write_trial, write_grade = fx.write_lock, fx.write_trial, fx.write_grade

HOSTILE_OCC = "<script>alert(1)<:script>"
HOSTILE_TASK = f"main/{HOSTILE_OCC}/task1"
ESCAPED_OCC = "&lt;script&gt;alert(1)&lt;:script&gt;"


def _hostile_run(root: Path, dataset: Path) -> Path:
    """A run made with --skip-invalid whose invalid task sits in a hostile occupation folder."""
    run = root / "runs" / "r&[x]"
    write_lock(run, dataset, [("alpha", "m1")], epochs=1)
    for task, verdicts in ((T1, [[P, P]] * 3), (T2, [[P, P]] * 2), (T3, [[P, P]] * 2), (T4, [[P, F]])):
        write_grade(run, "checks", write_trial(run, task, "alpha", "m1", 1), verdicts)
    lock = json.loads((run / "lock.json").read_text())
    lock["invalid_tasks"] = {HOSTILE_TASK: {"problems": [f"{HOSTILE_TASK}/RUBRICS.json: missing <b>|x|</b>"],
                                            "max_points": 10.0}}
    (run / "lock.json").write_text(json.dumps(lock))
    return run


def test_markdown_escapes_every_dataset_string_the_same_way(tmp_path: Path, dataset: Path):
    run = _hostile_run(tmp_path, dataset)
    md = leaderboard_markdown(build_report([run], n_resamples=100))
    assert "<" not in md and ">" not in md  # no raw HTML anywhere
    hits = [line for line in md.splitlines() if "script" in line]
    # the missing-tasks line and the invalid-task warning both name the task, escaped alike
    assert len(hits) == 2 and all(f"main/{ESCAPED_OCC}/task1" in line for line in hits)
    assert hits[0].startswith(f"* alpha@m1: main/{ESCAPED_OCC}/task1 (invalid task, not run: main/{ESCAPED_OCC}"
                              "/task1/RUBRICS.json: missing &lt;b&gt;\\|x\\|&lt;/b&gt;)")
    assert "Runs: r&amp;\\[x\\]. Judge key: checks." in md
    assert "| 1 | alpha@m1 | r&amp;\\[x\\] |" in md  # table cells use the same escape


def test_csv_guards_only_formulas(tmp_path: Path, dataset: Path):
    from jobbench.report._tables import _csv_safe

    assert [_csv_safe(v) for v in ("-", "-0.5", "+3", "1e-3", "-.5", "plain", 7, -0.5, None)] == \
        ["-", "-0.5", "+3", "1e-3", "-.5", "plain", 7, -0.5, None]
    assert [_csv_safe(v) for v in ("=1+1", "+1+1", "-1+2", "@SUM(A1)", "\t=1", "\r-1", "--", "-x", "-1-")] == \
        ["'=1+1", "'+1+1", "'-1+2", "'@SUM(A1)", "'\t=1", "'\r-1", "'--", "'-x", "'-1-"]
    run = tmp_path / "runs" / "csv"
    write_lock(run, dataset, [("null", "-"), ("=cmd", "=1+1")], epochs=1)
    for agent, model in (("null", "-"), ("=cmd", "=1+1")):
        write_grade(run, "checks", write_trial(run, T1, agent, model, 1), [[P, P]] * 3)
    out = write_report([run], tmp_path / "out", n_resamples=100)
    rows = {r["agent"]: r for r in csv.DictReader((out / "leaderboard.csv").open())}
    assert rows["null"]["model"] == "-" and rows["null"]["configuration"] == "null"
    assert rows["'=cmd"]["model"] == "'=1+1"
