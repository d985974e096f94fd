"""CLI conventions: help printed literally with meaningful metavars, ``--version``, ``--json``
on ``run`` and ``report`` (parseable, figures as the report files have them), and console
tables that stay within 80 columns when piped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from jobbench import __version__
from jobbench.cli import app

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "rundir-v1"
SAMPLE = ROOT / "datasets" / "sample"


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "100"})


def test_version_flag_and_command() -> None:
    for args in (["--version"], ["version"]):
        res = _invoke(*args)
        assert res.exit_code == 0 and res.stdout.strip() == __version__


def test_run_help_is_literal_with_named_metavars() -> None:
    res = _invoke("run", "--help")
    assert res.exit_code == 0
    text = " ".join(res.stdout.split())  # help is wrapped to the terminal width
    assert "pip install 'jobbench[dask]'" in text
    assert "[default: runs]" in text and "--runs-dir RUNS_DIR" in text and "--agent AGENT" in text
    assert "<list[str]>" not in text and "<bool>" not in text and "<str>" not in text
    assert "module:Class" in text


def test_selection_help_keeps_its_defaults() -> None:
    res = _invoke("select", "--help")
    assert res.exit_code == 0
    assert "[default: " in res.stdout and "<bool>" not in res.stdout


@pytest.fixture()
def fixture_run(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE / "sample", tmp_path / "sample")
    shutil.copytree(FIXTURE / "run", tmp_path / "run")
    lock_path = tmp_path / "run" / "lock.json"
    lock = json.loads(lock_path.read_text(encoding="utf-8"))
    lock["dataset_root"] = str(tmp_path / "sample")
    lock_path.write_text(json.dumps(lock, indent=2) + "\n", encoding="utf-8")
    return tmp_path / "run"


def test_report_json_matches_the_report_files(fixture_run: Path, tmp_path: Path) -> None:
    res = _invoke(
        "report",
        str(fixture_run),
        "--judge-key",
        "checks",
        "--out",
        str(tmp_path / "rep"),
        "--json",
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["judge_key"] == "checks" and out["out_dir"] == str(tmp_path / "rep")
    expected = json.loads((FIXTURE / "expected" / "checks" / "summary.json").read_text())
    want = [
        (c["label"], c["overall"]["micro"]["estimate"], c["overall"]["macro"]["estimate"])
        for c in expected["configurations"]
    ]
    assert [(r["config"], r["micro"], r["macro"]) for r in out["leaderboard"]] == want
    assert len(want) >= 2 and (tmp_path / "rep" / "summary.json").is_file()


def test_run_json_is_the_only_stdout(tmp_path: Path) -> None:
    res = _invoke(
        "run",
        str(SAMPLE),
        "--split",
        "easy",
        "--tasks",
        "*/civil_engineers/task1",
        "--runs-dir",
        str(tmp_path / "runs"),
        "--run-name",
        "r",
        "--no-progress",
        "--json",
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["run_dir"].endswith("/runs/r") and out["ran"] == 2 and out["exit_code"] == 0
    assert out["trials"] == {"null@-": {"no_deliverable": 1}, "oracle@-": {"ok": 1}}
    rows = out["report"]["leaderboard"]
    board = {r["config"]: (r["micro"], r["macro"], r["tasks"]) for r in rows}
    assert board == {"oracle": (1.0, 1.0, 1), "null": (0.0, 0.0, 1)}


def test_leaderboard_fits_80_columns_when_piped(fixture_run: Path) -> None:
    from jobbench.report import build_report
    from jobbench.report._console import leaderboard_table

    data = build_report([fixture_run], judge_key="checks", n_resamples=200)
    console = Console(width=80, record=True, force_terminal=False, color_system=None)
    console.print(leaderboard_table(data))
    lines = console.export_text().splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in "\n".join(lines)
    assert "configuration" in "\n".join(lines) and "oracle" in "\n".join(lines)


def test_task_scores_never_fold_a_task_id(fixture_run: Path) -> None:
    """At 80 columns a task id too long for the table is printed whole on a line of its
    own (``<task>: <config> <s_t>, …``); a wide console gets the table."""
    from jobbench.report import build_report
    from jobbench.report._console import print_summary

    data = build_report([fixture_run], judge_key="checks", n_resamples=200)
    long_id = max(data.task_ids, key=len)
    narrow = Console(width=40, record=True, force_terminal=False, color_system=None)
    print_summary(data, narrow)
    text = narrow.export_text()
    assert any(line.startswith(f"{long_id}: ") for line in text.splitlines()), text
    wide = Console(width=400, record=True, force_terminal=False, color_system=None)
    print_summary(data, wide)
    assert "Task scores s_t (%)" in wide.export_text()
    assert not any(line.startswith(f"{long_id}: ") for line in wide.export_text().splitlines())
