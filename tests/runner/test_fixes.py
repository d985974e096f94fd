"""Runner fixes: per-trial sandbox record, invalid tasks, incomplete grades, export to a
renamed copy, orphaned sandboxes."""

from __future__ import annotations

import json
from pathlib import Path

from runner_helpers import OCC, needs_bwrap
from typer.testing import CliRunner

from jobbench.report import build_report
from jobbench.runner import AgentSpec, RunConfig, run_trials

runner = CliRunner()


def cfg(dataset, run_dir, agents=None, **kw) -> RunConfig:
    return RunConfig(dataset=dataset, agents=agents or [AgentSpec("null")], run_dir=run_dir, **kw)


def _records(run_dir: Path) -> dict[str, dict]:
    return {json.loads(p.read_text())["task_id"]: json.loads(p.read_text()) for p in run_dir.rglob("trial.json")}


@needs_bwrap
def test_sandbox_is_recorded_per_trial_and_mixing_is_warned(tmp_path, dataset):
    run_dir = tmp_path / "runs" / "mix"
    first = run_trials(cfg(dataset, run_dir, sandbox="bwrap", task_glob="*task1"))
    assert first.ran == 1 and not any("sandbox" in w for w in first.warnings)
    lock = json.loads((run_dir / "lock.json").read_text())
    assert lock["sandboxes"] == ["bwrap"] and "sandbox" not in lock["config"]
    second = run_trials(cfg(dataset, run_dir, sandbox="none", task_glob="*task2"))
    assert second.ran == 1
    assert any("runs 1 trial(s) without a sandbox while earlier trials of this run used bwrap" in w
               for w in second.warnings), second.warnings
    lock = json.loads((run_dir / "lock.json").read_text())
    assert lock["sandboxes"] == ["bwrap", "none"] and "sandbox" not in lock["config"]
    recs = _records(run_dir)
    assert {t.rsplit("/", 1)[1]: r["sandbox"] for t, r in recs.items()} == {"task1": "bwrap", "task2": "none"}
    # a resume that runs nothing records no new sandbox and warns about none
    third = run_trials(cfg(dataset, run_dir, sandbox="none"))
    assert third.ran == 0 and not any("sandbox" in w for w in third.warnings)
    data = build_report([run_dir], n_resamples=50)
    assert any("mix: mixes sandboxed (bwrap: 1) and unsandboxed (none: 1) trials" in w for w in data.warnings)
    assert any(f"mix: 1 of 2 trial(s) ran WITHOUT a sandbox" in w and f"sample/{OCC}/task2" in w
               for w in data.warnings)
