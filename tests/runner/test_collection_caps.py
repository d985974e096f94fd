"""Deliverable caps are applied in a fixed order (top-level files before deeper ones, then
by path) and every skipped file is listed in the trial record and in the report."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobbench.report import build_report
from jobbench.rundir import RunDir
from jobbench.runner import AgentSpec, RunConfig, run_trials
from jobbench.sandbox import DeliverableLimits

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"

# Sizes in bytes: z.txt 10, a.txt 10, big.txt 200, sub/b.txt 10, sub/a.txt 10, sub/deep/c.txt 10
AGENT_SH = """#!/bin/sh
set -e
cd "$JOBBENCH_OUTPUT_DIR"
mkdir -p sub/deep
printf '0123456789' > sub/deep/c.txt
printf '0123456789' > sub/b.txt
printf '0123456789' > sub/a.txt
printf '0123456789' > z.txt
printf '0123456789' > a.txt
head -c 200 /dev/zero | tr '\\0' x > big.txt
"""


def test_caps_are_deterministic_and_every_skipped_file_is_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").mkdir()
    script = tmp_path / "a" / "agent.sh"
    script.write_text(AGENT_SH)
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path / "a")
    limits = DeliverableLimits(max_file_bytes=100, max_total_bytes=1000, max_files=3)
    run_dir = tmp_path / "runs" / "caps"
    run_trials(
        RunConfig(
            dataset=SAMPLE,
            agents=[AgentSpec("command:./agent.sh")],
            run_dir=run_dir,
            task_glob="*/civil_engineers/task1",
            splits=["easy"],
            deliverable_limits=limits,
        )
    )
    rd = RunDir(run_dir)
    (rec,) = rd.trials().records.values()
    assert rec is not None
    assert rec.status == "ok", rec.error
    # top level first (a, big, z: big is over the per-file cap), then sub/a; 3 files kept
    assert [d.path for d in rec.deliverables] == ["a.txt", "sub/a.txt", "z.txt"]
    assert rec.refused == [
        "big.txt: 200 bytes exceeds the per-file limit of 100",
        "sub/b.txt: more than 3 files",
        "sub/deep/c.txt: more than 3 files",
    ]
    report = build_report([run_dir], n_resamples=50, allow_ungraded=True)
    (cell,) = report.configs
    assert cell.trial_issues()[rec.trial_id].refused == rec.refused
    (shown,) = [w for w in report.warnings if "refused deliverable files" in w]
    assert shown.endswith(f"{rec.trial_id} ({'; '.join(rec.refused)})")
