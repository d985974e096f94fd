"""Bad input to `jobbench run` is named before the first trial (exit 2, no trial run)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from jobbench.cli import app

runner = CliRunner()


def _run(tmp_path, dataset, *extra, env=None):
    r = runner.invoke(
        app,
        [
            "run",
            str(dataset),
            "--runs-dir",
            str(tmp_path / "runs"),
            "--run-name",
            "x",
            "--no-progress",
            *extra,
        ],
        env={"COLUMNS": "300", **(env or {})},
    )
    return r, " ".join(r.output.split())


@pytest.mark.parametrize(
    "option,value",
    [
        ("--timeout", "0"),
        ("--timeout", "-5"),
        ("--memory-mb", "0"),
        ("--memory-mb", "-1"),
        ("--command-timeout", "0"),
    ],
)
def test_non_positive_limits_are_refused(tmp_path, dataset, option, value):
    r, text = _run(tmp_path, dataset, option, value)
    assert r.exit_code == 2, r.output
    assert (
        option in text
        and f"must be greater than 0, got {float(value) if 'timeout' in option else int(value)}"
        in text
    )
    assert not (tmp_path / "runs" / "x" / "trials").exists()


def test_repeated_tasks_is_refused_not_last_wins(tmp_path, dataset):
    r, text = _run(tmp_path, dataset, "--tasks", "*task1", "--tasks", "*task2")
    assert r.exit_code == 2, r.output
    assert "--tasks" in text and "given 2 times ('*task1', '*task2'); give one glob" in text
    assert not (tmp_path / "runs" / "x").exists()


def test_unknown_sandbox_variable_is_refused(tmp_path, dataset, monkeypatch):
    monkeypatch.setenv("JOBBENCH_SANDBOX", "bwarp")
    r, text = _run(tmp_path, dataset, "--no-grade")
    assert r.exit_code == 2, r.output
    assert "environment variable JOBBENCH_SANDBOX='bwarp': expected auto, bwrap or none" in text
    assert not list((tmp_path / "runs").rglob("trial.json"))


def test_bad_judge_settings_are_refused_before_the_first_trial(tmp_path, dataset, monkeypatch):
    for name in ("JUDGE_MODEL", "JOBBENCH_JUDGE_MODEL", "JOBBENCH_JUDGE_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JOBBENCH_JUDGE_TIMEOUT", "abc")
    r, text = _run(tmp_path, dataset)
    assert r.exit_code == 2, r.output
    assert (
        "judge configuration: invalid judge setting from environment variable "
        "JOBBENCH_JUDGE_TIMEOUT" in text
    )
    assert not list((tmp_path / "runs").rglob("trial.json"))
    monkeypatch.delenv("JOBBENCH_JUDGE_TIMEOUT")
    bad = tmp_path / "judge.toml"
    bad.write_text("[judge\nmodel = 1\n")
    monkeypatch.setenv("JOBBENCH_JUDGE_CONFIG", str(bad))
    r, text = _run(tmp_path, dataset)
    assert r.exit_code == 2 and f"judge configuration: {bad}: invalid TOML" in text
    bad.write_text('[judge]\nmode = "everything"\n')
    r, text = _run(tmp_path, dataset)
    assert r.exit_code == 2 and f"invalid judge setting from {bad}: mode" in text
    assert not list((tmp_path / "runs").rglob("trial.json"))
