"""`jobbench tasks`, `validate`, `gate` and `gate review` use the bundled sample when given no
dataset, as `jobbench run` does (jobbench.tasks.default_dataset)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import jobbench
from jobbench.cli import app

SAMPLE = (Path(jobbench.__file__).resolve().parent / "_datasets" / "sample").resolve()


def _sample_task_count() -> int:
    # counted from the files, independently of the loader: one RUBRICS.json per task
    return len(list(SAMPLE.glob("*/*/task*/RUBRICS.json")))


def test_commands_without_a_dataset_use_the_bundled_sample(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # no datasets/sample here: the packaged one is found
    n = _sample_task_count()
    assert n == 16
    runner = CliRunner()
    res = runner.invoke(app, ["tasks", "--json"])
    assert res.exit_code == 0, res.output
    listing = json.loads(res.stdout)
    assert len(listing["tasks"]) == n
    assert sum(r["tasks"] for r in listing["occupations"]) == n
    res = runner.invoke(app, ["validate", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["tasks"] == n
    res = runner.invoke(app, ["validate"], terminal_width=400)
    # the success line names what it validated, as `tasks` and `gate` do
    assert res.stdout.strip() == f"{n} valid task(s) in {SAMPLE}; valid", res.output
    out = tmp_path / "gate"
    res = runner.invoke(app, ["gate", "--gates", "validate", "--out", str(out)])
    assert res.exit_code == 0, res.output
    gate = json.loads((out / "gates.json").read_text())
    assert len(gate["tasks"]) == n
    assert Path(gate["dataset"]).resolve() == SAMPLE
    res = runner.invoke(app, ["review", "export", "--no-decoys", "--out", str(tmp_path / "r.xlsx")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "r.xlsx").stat().st_size > 0


def test_a_missing_dataset_still_names_the_path(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["validate", "nope"])
    assert res.exit_code == 2
    assert "nope" in res.output
