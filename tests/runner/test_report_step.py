"""The report step at the end of `jobbench run`: a report directory that cannot be written
is one clear error (exit 2), and the trials and grades are kept."""

from __future__ import annotations

import errno
from pathlib import Path

from typer.testing import CliRunner

import jobbench.report._write as report_write
from jobbench.cli import app

runner = CliRunner()


def test_run_with_unwritable_report_folder_exits_2_and_keeps_trials_and_grades(
    tmp_path, dataset, monkeypatch
):
    for name in ("JUDGE_MODEL", "JUDGE_API_BASE", "JOBBENCH_JUDGE_MODEL", "JOBBENCH_JUDGE_CONFIG"):
        monkeypatch.delenv(name, raising=False)

    def read_only(path, text):
        path = Path(path)
        raise OSError(
            errno.EROFS, "Read-only file system", str(path.parent / f".{path.name}.abc.tmp")
        )

    monkeypatch.setattr(report_write, "atomic_write_text", read_only)
    r = runner.invoke(
        app,
        [
            "run",
            str(dataset),
            "--runs-dir",
            str(tmp_path / "runs"),
            "--run-name",
            "ro",
            "--no-progress",
            "--tasks",
            "*task2",
        ],
        env={"COLUMNS": "300"},
    )
    run_dir = tmp_path / "runs" / "ro"
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    text = " ".join(r.output.split())
    assert (
        f"error: cannot write the report to {run_dir / 'report'}: Read-only file system "
        f"({run_dir / 'report'}/.leaderboard.md.abc.tmp)"
    ) in text
    assert (
        f"The trials and grades are saved in {run_dir}; `jobbench report {run_dir} --out DIR`"
        in text
    )
    assert "Grading failed" not in text and "jobbench grade" not in text
    trials = sorted(
        p.parent.relative_to(run_dir / "trials").as_posix()
        for p in (run_dir / "trials").rglob("trial.json")
    )
    grades = sorted(
        p.relative_to(run_dir / "grades" / "checks").as_posix()[: -len(".json")]
        for p in (run_dir / "grades" / "checks").rglob("*.json")
    )
    assert len(trials) == 2 and grades == trials
    monkeypatch.undo()
    r = runner.invoke(app, ["report", str(run_dir), "--resamples", "50"])
    assert r.exit_code == 0 and (run_dir / "report" / "report.html").is_file()


def test_run_whose_every_trial_is_infra_error_still_writes_a_report(tmp_path, dataset, monkeypatch):
    # the agent CLI is missing: every trial ends infra_error, nothing is graded, and the run
    # still leaves a report that shows the trials (no ReportInputError about missing grades)
    for name in (
        "JUDGE_MODEL",
        "JUDGE_API_BASE",
        "JOBBENCH_JUDGE_MODEL",
        "JOBBENCH_JUDGE_CONFIG",
        "JOBBENCH_CLI_PREFIX",
    ):
        monkeypatch.delenv(name, raising=False)
    r = runner.invoke(
        app,
        [
            "run",
            str(dataset),
            "--runs-dir",
            str(tmp_path / "runs"),
            "--run-name",
            "infra",
            "--no-progress",
            "--agent",
            "codex",
            "--model",
            "gpt-x",
            "--agent-bin",
            "codex=no-such-codex-binary",
            "--infra-retries",
            "0",
        ],
        env={"COLUMNS": "300"},
    )
    run_dir = tmp_path / "runs" / "infra"
    text = " ".join(r.output.split())
    assert r.exit_code == 1, r.output
    assert (
        "Reporting failed" not in text
        and "ReportInputError" not in text
        and "Traceback" not in text
    )
    assert "2 trial(s) ended with infrastructure errors" in text
    # the missing-executable message tells how to point at the CLI
    assert (
        "agent executable no-such-codex-binary not found on PATH" in text and "--agent-bin" in text
    )
    leaderboard = (run_dir / "report" / "leaderboard.md").read_text()
    assert "| codex@gpt-x | infra |" in leaderboard and "2 infra_error" in leaderboard
    assert (run_dir / "report" / "report.html").is_file()
    assert not (run_dir / "grades" / "checks").exists()  # nothing was graded
    # and the report does not call infrastructure errors "ungraded" trials
    assert "its trials are ungraded" not in text and "its trials are ungraded" not in leaderboard
