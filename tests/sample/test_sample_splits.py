"""`jobbench run` on the bundled sample: split ``main`` by default, ``--split easy`` for the
easy variants (each in its own run directory), and `jobbench compare` of the two pairing
each main task with its easy variant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jobbench.cli import app

runner = CliRunner()
TASKS = "*/civil_engineers/*"


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in (
        "JUDGE_MODEL",
        "JUDGE_API_BASE",
        "JOBBENCH_JUDGE_MODEL",
        "JOBBENCH_JUDGE_CONFIG",
        "JOBBENCH_JUDGE_API_BASE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)  # no datasets/sample here: the repository's sample is used
    return tmp_path / "runs"


def _run(runs: Path, *extra: str):
    r = runner.invoke(
        app,
        ["run", "--runs-dir", str(runs), "--tasks", TASKS, "--no-progress", *extra],
        env={"COLUMNS": "200"},
    )
    assert r.exit_code == 0, r.output
    return r


def _scores(run_dir: Path) -> dict[str, float]:
    out = {}
    for p in sorted((run_dir / "grades").rglob("epoch-1.json")):
        g = json.loads(p.read_text())
        out[g["trial_id"]] = g["score"]
    return out


def test_main_by_default_easy_on_request_and_compare(runs: Path) -> None:
    _run(runs)
    _run(runs, "--split", "easy")
    main, easy = runs / "sample-main-oracle+null", runs / "sample-easy-oracle+null"
    assert sorted(json.loads((main / "lock.json").read_text())["tasks"]) == [
        "main/civil_engineers/task1"
    ]
    assert sorted(json.loads((easy / "lock.json").read_text())["tasks"]) == [
        "easy/civil_engineers/task1"
    ]
    assert _scores(main) == {
        "main/civil_engineers/task1/oracle@-/epoch-1": 1.0,
        "main/civil_engineers/task1/null@-/epoch-1": 0.0,
    }
    assert _scores(easy) == {
        "easy/civil_engineers/task1/oracle@-/epoch-1": 1.0,
        "easy/civil_engineers/task1/null@-/epoch-1": 0.0,
    }
    r = runner.invoke(
        app,
        [
            "compare",
            str(main),
            str(easy),
            "--a",
            "oracle",
            "--b",
            "oracle",
            "--json",
            "--resamples",
            "200",
        ],
    )
    assert r.exit_code == 0, r.output
    cmp = json.loads(r.stdout)
    assert cmp["pair_by"] == "occupation_task" and cmp["tasks"] == ["civil_engineers/task1"]
    assert (cmp["micro"]["a"], cmp["micro"]["b"], cmp["micro"]["difference"]) == (1.0, 1.0, 0.0)
    assert cmp["ratios"]["wall_seconds"] is not None and cmp["ratios"]["wall_seconds"] > 0
    r = runner.invoke(
        app, ["compare", str(main), str(easy), "--resamples", "200"], env={"COLUMNS": "200"}
    )
    assert r.exit_code == 0, r.output
    assert "Tasks paired across splits by occupation/taskN (main vs easy)" in r.stdout
    assert "1 shared task(s)" in r.stdout
