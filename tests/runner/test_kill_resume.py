"""SIGKILL a `jobbench run` mid-way, run the same command again: every trial is recorded
exactly once and nothing finished before the kill is lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from runner_helpers import build_dataset

from jobbench.records import TrialRecord

SRC = Path(__file__).resolve().parents[2] / "src"


def test_sigkill_then_rerun_records_every_trial_once(tmp_path):
    dataset = build_dataset(tmp_path / "data", delay=0.7)  # each task2 oracle trial takes ≥ 0.7 s
    runs = tmp_path / "runs"
    scratch = tmp_path / "scratch"
    env = dict(os.environ, PYTHONPATH=str(SRC), JOBBENCH_SCRATCH=str(scratch))
    cmd = [
        sys.executable,
        "-m",
        "jobbench.cli",
        "run",
        str(dataset),
        "--agent",
        "oracle",
        "--agent",
        "null",
        "--epochs",
        "3",
        "--runs-dir",
        str(runs),
        "--run-name",
        "k",
        "--no-progress",
        "--no-grade",
    ]
    total = 2 * 2 * 3
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    trials = runs / "k" / "trials"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if trials.exists() and len(list(trials.rglob("trial.json"))) >= 3:
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = {p: p.read_bytes() for p in trials.rglob("trial.json")}
    assert 3 <= len(before) < total, "the kill must land mid-run"
    time.sleep(0.5)
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(scratch) not in ps, "sandboxes must die with the killed run"

    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{total - len(before)} trial(s) run, {len(before)} already finished" in done.stdout
    records = sorted(trials.rglob("trial.json"))
    assert len(records) == total
    ids = [TrialRecord.model_validate_json(p.read_text()).trial_id for p in records]
    assert len(set(ids)) == total
    for p in records:
        events = [
            json.loads(x)["type"] for x in (p.parent / "trajectory.jsonl").read_text().splitlines()
        ]
        assert events.count("trial_start") == 1 and events.count("trial_end") == 1
    for p, data in before.items():
        assert p.read_bytes() == data  # finished before the kill: untouched
    assert list(scratch.glob("jb-*")) == []  # scratch of the killed run was cleaned up
    json.loads((runs / "k" / "lock.json").read_text())
