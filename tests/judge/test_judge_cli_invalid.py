"""`jobbench grade` and invalid tasks: a public-layout dataset with validation errors is
refused unless --skip-invalid; a run whose task became invalid says so, with the problems."""

from __future__ import annotations

import json
from pathlib import Path

from judge_helpers import make_run, make_task, write_files
from typer.testing import CliRunner

from jobbench.cli import app

CHECKED = [
    {
        "rubric": "Total",
        "weight": 1,
        "criterion": ["mentions 42"],
        "checks": [{"kind": "regex", "pattern": "42"}],
    }
]


def _break(task_root: Path) -> None:
    p = task_root / "RUBRICS.json"
    data = json.loads(p.read_text())
    data["rubrics"][0]["weight"] = True
    p.write_text(json.dumps(data))


def _env(tmp: Path) -> dict[str, str]:
    return {
        "JOBBENCH_JUDGE_CACHE": str(tmp / "cache.sqlite"),
        "JUDGE_MODEL": "",
        "JOBBENCH_JUDGE_MODEL": "",
        "JOBBENCH_JUDGE_CONFIG": "",
        "COLUMNS": "300",
    }


def test_grade_public_dataset_refuses_invalid_tasks_unless_skipped(tmp_path: Path) -> None:
    good = make_task(tmp_path, CHECKED, n=1, split="main")
    bad = make_task(tmp_path, CHECKED, n=2, split="main")
    for t in (good, bad):
        write_files(t.root / "model_output" / "agent-x", {"answer.md": "The total is 42."})
    _break(bad.root)
    runner = CliRunner()
    res = runner.invoke(
        app, ["grade", str(tmp_path / "dataset"), "--no-progress"], env=_env(tmp_path)
    )
    assert res.exit_code == 2, res.output
    assert "1 validation error(s) in 1 task(s)" in res.output
    assert (
        "accountants/task2/RUBRICS.json: rubrics[0].weight: must be a finite number ≥ 0, got true"
        in res.output
    )
    assert "--skip-invalid" in res.output
    assert not (good.root / "eval_result").exists()

    res = runner.invoke(
        app,
        ["grade", str(tmp_path / "dataset"), "--no-progress", "--skip-invalid"],
        env=_env(tmp_path),
    )
    assert res.exit_code == 0, res.output
    assert "1 invalid task(s) not graded" in res.output and "rubrics[0].weight" in res.output
    details_file = good.root / "eval_result" / "eval_agent-x" / "checks_judge.json"
    details = json.loads(details_file.read_text())
    assert details["total_score"] == 1 and details["max_score"] == 1.0
    assert not (bad.root / "eval_result").exists()


def test_grade_run_names_a_task_that_became_invalid(tmp_path: Path) -> None:
    good = make_task(tmp_path, CHECKED, n=1)
    bad = make_task(tmp_path, CHECKED, n=2)
    run = make_run(
        tmp_path / "runs" / "r",
        tmp_path / "dataset",
        [
            {"task": t, "agent": "a", "model": "-", "epoch": 1, "files": {"answer.md": "42"}}
            for t in (good, bad)
        ],
    )
    _break(bad.root)
    res = CliRunner().invoke(app, ["grade", str(run), "--no-progress"], env=_env(tmp_path))
    assert res.exit_code == 0, res.output
    assert f"task {bad.id} is invalid in the dataset now" in res.output
    assert (
        "accountants/task2/RUBRICS.json: rubrics[0].weight: must be a finite number ≥ 0, got true"
        in res.output
    )
    assert (
        f"{bad.id}/a@-/epoch-1: task {bad.id} is invalid in the dataset (1 problem(s); see `jobbench validate`); not graded"
        in res.output
    )
    assert "not in the dataset" not in res.output
    assert (run / "grades" / "checks" / f"{good.id}/a@-/epoch-1.json").is_file()
    assert not (run / "grades" / "checks" / f"{bad.id}/a@-/epoch-1.json").exists()
