"""Run directory, resume, retries, concurrency and the `jobbench run` command."""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from pathlib import Path

import pytest
from runner_helpers import OCC, build_dataset, expected_memo, ledger_totals
from typer.testing import CliRunner

import jobbench
import jobbench.judge
import jobbench.report
from jobbench.agents import AGENTS, Agent, AgentResult, InfraError, ModelSettings
from jobbench.cli import app
from jobbench.records import TrialRecord, TrialStatus
from jobbench.runner import (
    AgentSpec,
    RunConfig,
    RunConfigError,
    RunDirLock,
    load_finished,
    run_trials,
    trial_id,
)
from jobbench.runner._cli import build_specs, default_run_name
from jobbench.sandbox import bwrap_available
from jobbench.tasks import default_dataset, load_dataset, task_digest

runner = CliRunner()


def cfg(dataset, run_dir, agents=None, **kw) -> RunConfig:
    return RunConfig(
        dataset=dataset,
        agents=agents or [AgentSpec("oracle"), AgentSpec("null")],
        run_dir=run_dir,
        **kw,
    )


def test_run_directory_contract(tmp_path, dataset):
    run_dir = tmp_path / "runs" / "r1"
    s = run_trials(cfg(dataset, run_dir, epochs=2))
    tasks = load_dataset(dataset).tasks
    assert s.ran == 8 and s.skipped == 0
    lock = json.loads((run_dir / "lock.json").read_text())
    assert lock["tasks"] == {t.id: task_digest(t) for t in tasks}
    assert lock["dataset_root"] == str(dataset)
    assert lock["agents"] == [
        {"agent": "oracle", "model": "-", "settings": {}},
        {"agent": "null", "model": "-", "settings": {}},
    ]
    assert lock["epochs"] == 2 and lock["harness_version"] == jobbench.__version__
    ids = sorted(r.trial_id for r in s.records)
    assert ids == sorted(
        trial_id(t.id, a, None, e) for t in tasks for a in ("oracle", "null") for e in (1, 2)
    )
    for rec in s.records:
        tdir = run_dir / "trials" / rec.trial_id
        assert TrialRecord.model_validate_json((tdir / "trial.json").read_text()) == rec
        assert rec.task_digest == lock["tasks"][rec.task_id]
        for d in rec.deliverables:
            data = (tdir / "deliverables" / d.path).read_bytes()
            assert (d.size, d.sha256) == (len(data), hashlib.sha256(data).hexdigest())
        events = [
            json.loads(x)["type"] for x in (tdir / "trajectory.jsonl").read_text().splitlines()
        ]
        assert events[0] == "trial_start" and events[-1] == "trial_end"
        if rec.agent == "oracle":
            assert rec.status == TrialStatus.ok
        else:
            assert rec.status == TrialStatus.no_deliverable and rec.deliverables == []
    t1 = trial_id(f"sample/{OCC}/task1", "oracle", None, 1)
    net = (run_dir / "trials" / t1 / "deliverables" / "net.csv").read_text().splitlines()
    assert net[1:] == [f"{m},{v:.2f}" for m, v in ledger_totals().items()]
    t2 = trial_id(f"sample/{OCC}/task2", "oracle", None, 2)
    assert (run_dir / "trials" / t2 / "deliverables" / "memo.md").read_text() == expected_memo()
    # nothing was written into the dataset
    assert not any(p.name in ("output", "model_output") for p in dataset.rglob("*"))


def test_resume_skips_finished_and_redoes_the_rest(tmp_path, dataset):
    run_dir = tmp_path / "runs" / "r"
    first = run_trials(cfg(dataset, run_dir))
    by_id = {r.trial_id: r for r in first.records}
    t1o = trial_id(f"sample/{OCC}/task1", "oracle", None, 1)
    t1n = trial_id(f"sample/{OCC}/task1", "null", None, 1)
    t2o = trial_id(f"sample/{OCC}/task2", "oracle", None, 1)
    t2n = trial_id(f"sample/{OCC}/task2", "null", None, 1)
    # same command again: nothing runs, records untouched
    again = run_trials(cfg(dataset, run_dir))
    assert (again.ran, again.skipped) == (0, 4)
    assert {r.trial_id: r for r in again.records} == by_id
    # crashed trial (no trial.json, partial files), infra error, unreadable record
    (run_dir / "trials" / t1o / "trial.json").unlink()
    (run_dir / "trials" / t1o / "deliverables" / "stale.txt").write_text("partial")
    rec = by_id[t1n].model_copy(update={"status": TrialStatus.infra_error})
    (run_dir / "trials" / t1n / "trial.json").write_text(rec.model_dump_json())
    (run_dir / "trials" / t2n / "trial.json").write_text("{torn")
    # a stale grade of a redone trial is removed
    grade = run_dir / "grades" / "checks" / f"{t1o}.json"
    grade.parent.mkdir(parents=True)
    grade.write_text("{}")
    third = run_trials(cfg(dataset, run_dir))
    assert (third.ran, third.skipped) == (3, 1)
    assert {r.trial_id: r for r in third.records}[t2o] == by_id[t2o]
    assert not (run_dir / "trials" / t1o / "deliverables" / "stale.txt").exists()
    assert not grade.exists()
    assert all(r.status != TrialStatus.infra_error for r in third.records)
    # a changed task is re-run; the other task is not
    (dataset / OCC / "task2" / "task_folder" / "TASK_INSTRUCTIONS.txt").write_text(
        "Write memo.md again.\n"
    )
    fourth = run_trials(cfg(dataset, run_dir))
    assert (fourth.ran, fourth.skipped) == (2, 2)
    assert any("task sample/" in w and "changed" in w for w in fourth.warnings)
    new_digest = task_digest(load_dataset(dataset).get(f"sample/{OCC}/task2"))
    assert (
        json.loads((run_dir / "lock.json").read_text())["tasks"][f"sample/{OCC}/task2"]
        == new_digest
    )
    assert {r.trial_id: r.task_digest for r in fourth.records}[t2o] == new_digest
    assert load_finished(run_dir, t2o, "0" * 64) is None


def test_lock_conflicts_and_path_rules(tmp_path, dataset):
    run_dir = tmp_path / "runs" / "r"
    spec = AgentSpec("oracle")
    run_trials(cfg(dataset, run_dir, [spec], task_glob="*task2"))
    lock = json.loads((run_dir / "lock.json").read_text())
    lock["agents"][0]["settings"] = {"temperature": 1.0}
    (run_dir / "lock.json").write_text(json.dumps(lock))
    with pytest.raises(RunConfigError, match="already ran here with settings"):
        run_trials(cfg(dataset, run_dir, [spec], task_glob="*task2"))
    other = build_dataset(tmp_path / "other")
    with pytest.raises(RunConfigError, match="was made from dataset"):
        run_trials(cfg(other, tmp_path / "runs" / "r", [AgentSpec("null")], task_glob="*task2"))
    with pytest.raises(RunConfigError, match="inside the dataset"):
        run_trials(cfg(dataset, dataset / "runs" / "x"))
    with pytest.raises(RunConfigError, match="no valid task"):
        run_trials(cfg(dataset, tmp_path / "runs" / "y", task_glob="*nothing*"))
    with pytest.raises(RunConfigError, match="needs a --model"):
        run_trials(cfg(dataset, tmp_path / "runs" / "z", [AgentSpec("builtin")]))
    with RunDirLock(tmp_path / "runs" / "busy"):
        with pytest.raises(RunConfigError, match="in use by another jobbench run"):
            run_trials(cfg(dataset, tmp_path / "runs" / "busy"))


class FlakyAgent(Agent):
    """Fails with an infrastructure error on its first call per trial, then writes a file."""

    name = "flaky"
    seen: set = set()
    lock = threading.Lock()

    def run(self, ctx):
        with self.lock:
            first = ctx.task.id not in self.seen
            self.seen.add(ctx.task.id)
        if first:
            raise InfraError("endpoint unreachable")
        (ctx.workspace.output / "ok.txt").write_text("ok")
        return AgentResult(status="ok", turns=1)


class CrashingAgent(Agent):
    name = "crashing"

    def run(self, ctx):
        raise ZeroDivisionError("bug in the harness")


def test_infra_errors_are_retried_and_harness_bugs_are_infra(tmp_path, dataset, monkeypatch):
    monkeypatch.setitem(AGENTS, "flaky", FlakyAgent)
    monkeypatch.setitem(AGENTS, "crashing", CrashingAgent)
    FlakyAgent.seen = set()
    s = run_trials(
        cfg(
            dataset,
            tmp_path / "runs" / "f",
            [AgentSpec("flaky")],
            infra_retries=1,
            retry_backoff=0.01,
        )
    )
    assert [r.status for r in s.records] == [TrialStatus.ok, TrialStatus.ok]
    assert all(
        [a.model_dump() for a in r.attempts]
        == [{"attempt": 1, "status": "infra_error", "error": "endpoint unreachable"}]
        for r in s.records
    )
    s = run_trials(cfg(dataset, tmp_path / "runs" / "c", [AgentSpec("crashing")], infra_retries=0))
    assert {r.status for r in s.records} == {TrialStatus.infra_error}
    assert all("ZeroDivisionError: bug in the harness" in r.error for r in s.records)


def test_concurrent_trials_are_each_recorded_once(tmp_path, dataset):
    s = run_trials(cfg(dataset, tmp_path / "runs" / "p", epochs=3, max_trials=4))
    ids = [r.trial_id for r in s.records]
    assert len(ids) == 12 == len(set(ids)) and s.ran == 12
    assert len(list((tmp_path / "runs" / "p" / "trials").rglob("trial.json"))) == 12
    assert {r.status for r in s.records if r.agent == "oracle"} == {TrialStatus.ok}


class SlowAgent(Agent):
    name = "slow"

    def run(self, ctx):
        ctx.cancel.wait(30)
        return AgentResult(status="agent_error", error="cancelled")


def test_cancel_leaves_unfinished_trials_unrecorded(tmp_path, dataset, monkeypatch):
    monkeypatch.setitem(AGENTS, "slow", SlowAgent)
    cancel = threading.Event()
    started = threading.Event()

    def on_event(kind, pt, rec):
        if kind == "start":
            started.set()

    def stop():
        started.wait(10)
        cancel.set()

    threading.Thread(target=stop, daemon=True).start()
    s = run_trials(
        cfg(dataset, tmp_path / "runs" / "x", [AgentSpec("slow")]), on_event=on_event, cancel=cancel
    )
    assert s.records == [] and s.ran == 0
    assert list((tmp_path / "runs" / "x" / "trials").rglob("trial.json")) == []


def test_build_specs_and_default_run_name(tmp_path):
    s = ModelSettings(reasoning_effort="low")
    specs = build_specs(["oracle", "builtin", "codex@gpt-5.4"], ["m1", "m2"], s, {})
    assert [(x.agent, x.model, x.settings.as_record()) for x in specs] == [
        ("oracle", None, {}),
        ("builtin", "m1", {"reasoning_effort": "low"}),
        ("builtin", "m2", {"reasoning_effort": "low"}),
        ("codex", "gpt-5.4", {"reasoning_effort": "low"}),
    ]
    assert [x.label for x in build_specs([], [], ModelSettings(), {})] == ["oracle@-", "null@-"]
    name = default_run_name(Path("/d/sample"), specs)
    digest = hashlib.sha256(
        json.dumps([{"reasoning_effort": "low"}] * 3, sort_keys=True).encode()
    ).hexdigest()[:8]
    assert name == f"sample-oracle+builtin@m1+builtin@m2+codex@gpt-5.4-{digest}"
    assert (
        default_run_name(Path("/d/sample"), build_specs([], [], ModelSettings(), {}))
        == "sample-oracle+null"
    )
    # a split choice is part of the name, so main and easy runs never share a run directory
    default = build_specs([], [], ModelSettings(), {})
    assert default_run_name(Path("/d/sample"), default, ["easy"]) == "sample-easy-oracle+null"
    name = default_run_name(Path("/d/sample"), default, ["main", "easy", "main"])
    assert name == "sample-main+easy-oracle+null"


def test_default_dataset_resolution(tmp_path, monkeypatch):
    (tmp_path / "datasets" / "sample").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert default_dataset() == tmp_path / "datasets" / "sample"
    monkeypatch.chdir(tmp_path / "datasets")
    # elsewhere: the sample shipped in the package (in a checkout, jobbench/_datasets/sample
    # links to the repository's datasets/sample)
    packaged = Path(jobbench.__file__).resolve().parent / "_datasets" / "sample"
    assert default_dataset() == packaged.resolve()
    assert (default_dataset() / "main").is_dir() and (default_dataset() / "easy").is_dir()


def test_the_sample_is_package_data():
    # a wheel ships every file of datasets/sample as jobbench/_datasets/sample/** (scripts/
    # check_wheel_install.sh builds one, installs it into a fresh venv and runs `jobbench run`)
    import tomllib

    root = Path(jobbench.__file__).resolve().parents[2]
    link = root / "src" / "jobbench" / "_datasets" / "sample"
    assert link.is_symlink() and link.resolve() == (root / "datasets" / "sample").resolve()
    data = tomllib.loads((root / "pyproject.toml").read_text())
    assert "_datasets/sample/**/*" in data["tool"]["setuptools"]["package-data"]["jobbench"]
    import glob

    # setuptools expands package-data patterns with glob(recursive=True) under the package
    base = root / "src" / "jobbench"
    listed = {
        Path(f).relative_to(base / "_datasets" / "sample").as_posix()
        for f in glob.glob(str(base / "_datasets/sample/**/*"), recursive=True)
        if Path(f).is_file()
    }
    on_disk = {
        p.relative_to(root / "datasets" / "sample").as_posix()
        for p in (root / "datasets" / "sample").rglob("*")
        if p.is_file()
    }
    assert len(on_disk) > 100 and listed == on_disk


def test_cli_run_keeps_trials_when_grading_fails(tmp_path, dataset, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("judge exploded")

    monkeypatch.setattr(jobbench.judge, "grade_run", broken)
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, ["run", str(dataset), "--no-progress"])
    assert r.exit_code == 1, r.output
    assert "Grading failed" in r.output and "judge exploded" in r.output
    run_dir = tmp_path / "runs" / "sample-oracle+null"
    assert len(list(run_dir.rglob("trial.json"))) == 4
    assert not (run_dir / "report").exists()
    r = runner.invoke(app, ["run", str(dataset), "--no-progress"])
    assert "0 trial(s) run, 4 already finished" in r.output


def test_cli_run_says_on_stderr_how_many_trials_a_resume_reused(tmp_path, dataset, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = runner.invoke(app, ["run", str(dataset), "--no-progress", "--no-grade"])
    assert first.exit_code == 0, first.output
    assert "resumed" not in first.stderr
    again = runner.invoke(app, ["run", str(dataset), "--no-progress", "--no-grade"])
    assert again.exit_code == 0, again.output
    assert "resumed: 4 of 4 trial(s) already done in runs/sample-oracle+null, reused" in (
        again.stderr
    )
    assert "resumed" not in again.stdout
    trials = sorted((tmp_path / "runs" / "sample-oracle+null").rglob("trial.json"))
    trials[0].unlink()
    part = runner.invoke(app, ["run", str(dataset), "--no-progress", "--no-grade"])
    assert "resumed: 3 of 4 trial(s) already done" in part.stderr, part.output
    assert "1 trial(s) run, 3 already finished" in part.stdout


def test_cli_run_grades_and_reports(tmp_path, dataset, monkeypatch):
    """The main job end to end on fixture tasks: trials, checks-only grades, report files."""
    for name in ("JUDGE_MODEL", "JUDGE_API_BASE", "JOBBENCH_JUDGE_MODEL", "JOBBENCH_JUDGE_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    r = runner.invoke(
        app,
        [
            "run",
            str(dataset),
            "--runs-dir",
            str(tmp_path / "runs"),
            "--run-name",
            "g",
            "--no-progress",
            "--tasks",
            "*task2",
        ],
        env={"COLUMNS": "200"},
    )
    assert r.exit_code == 0, r.output
    run_dir = tmp_path / "runs" / "g"
    grades = sorted(
        p.relative_to(run_dir / "grades" / "checks").as_posix()
        for p in (run_dir / "grades" / "checks").rglob("*.json")
    )
    trials = sorted(
        p.parent.relative_to(run_dir / "trials").as_posix() + ".json"
        for p in (run_dir / "trials").rglob("trial.json")
    )
    assert grades == trials and len(grades) == 2
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    assert (run_dir / "report" / "report.html").is_file()
    # leaderboard rows: rank, then the configuration
    rows = [line for line in r.output.splitlines() if re.match(r"\s*\d+\s+(oracle|null)\s", line)]
    oracle_row = next(x for x in rows if "oracle" in x and "100.0" in x)
    null_row = next(x for x in rows if "null" in x and "0.0" in x)
    assert oracle_row and null_row
    micro = {c["agent"]: c["overall"]["micro"]["estimate"] for c in summary["configurations"]}
    assert micro == {"oracle": 1.0, "null": 0.0}


def test_cli_rejects_bad_input(tmp_path, dataset):
    r = runner.invoke(app, ["run", str(dataset), "--agent", "nobody", "--runs-dir", str(tmp_path)])
    assert r.exit_code == 2 and "unknown agent 'nobody'" in r.output
    r = runner.invoke(app, ["run", str(dataset), "--agent", "builtin", "--runs-dir", str(tmp_path)])
    assert r.exit_code == 2 and "needs --model" in r.output
    r = runner.invoke(
        app, ["run", str(tmp_path / "missing"), "--runs-dir", str(tmp_path), "--no-progress"]
    )
    assert r.exit_code == 2 and "no such directory" in r.output


def test_oracle_failures_are_agent_errors(tmp_path, dataset):
    (dataset / OCC / "task2" / "solution" / "solve.py").write_text(
        "raise SystemExit('cannot solve')\n"
    )
    s = run_trials(cfg(dataset, tmp_path / "runs" / "o", [AgentSpec("oracle")], task_glob="*task2"))
    rec = s.records[0]
    assert rec.status == TrialStatus.agent_error and "cannot solve" in rec.error
    (dataset / OCC / "task2" / "solution" / "solve.py").write_text("import time\ntime.sleep(30)\n")
    s = run_trials(
        cfg(
            dataset,
            tmp_path / "runs" / "o2",
            [AgentSpec("oracle")],
            task_glob="*task2",
            limits=__import__("jobbench.agents", fromlist=["AgentLimits"]).AgentLimits(timeout=1),
        )
    )
    assert s.records[0].status == TrialStatus.agent_timeout
    import shutil

    shutil.rmtree(dataset / OCC / "task2" / "solution")
    s = run_trials(
        cfg(dataset, tmp_path / "runs" / "o3", [AgentSpec("oracle")], task_glob="*task2")
    )
    assert (
        s.records[0].status == TrialStatus.agent_error
        and "no solution/solve.py" in s.records[0].error
    )


def test_trajectory_is_flushed_while_running(tmp_path, dataset, monkeypatch):
    seen = {}

    class Peek(Agent):
        name = "peek"

        def run(self, ctx):
            ctx.trajectory.emit("note", text="hello")
            time.sleep(0.05)
            seen["lines"] = ctx.trajectory.path.read_text().splitlines()
            return AgentResult()

    monkeypatch.setitem(AGENTS, "peek", Peek)
    run_trials(cfg(dataset, tmp_path / "runs" / "t", [AgentSpec("peek")], task_glob="*task2"))
    assert [json.loads(x)["type"] for x in seen["lines"]] == ["trial_start", "note"]
    assert os.path.exists(tmp_path / "runs" / "t" / "lock.json")


def test_oracle_calling_convention_is_as_documented(tmp_path, dataset):
    s = run_trials(
        cfg(dataset, tmp_path / "runs" / "cc", [AgentSpec("oracle")], task_glob="*task2")
    )
    rec = s.records[0]
    traj = [
        json.loads(x)
        for x in (tmp_path / "runs" / "cc" / "trials" / rec.trial_id / "trajectory.jsonl")
        .read_text()
        .splitlines()
    ]
    argv = next(e["argv"] for e in traj if e["type"] == "command")
    assert rec.sandbox == ("bwrap" if bwrap_available()[0] else "none")
    if rec.sandbox == "bwrap":
        assert argv[1:] == [
            "/solution/solve.py",
            "--workspace",
            "/workspace/task_folder",
            "--output",
            "/workspace/output",
        ]
    assert argv[2:4] == ["--workspace", argv[3]] and argv[3].endswith("/task_folder")
    assert argv[4] == "--output" and argv[5] == argv[3][: -len("task_folder")] + "output"
    start = traj[0]
    # the prompt names the folder the solution was given, whichever the backend
    assert f"Task folder: {argv[3]}" in start["prompt"]
    assert "TASK_INSTRUCTIONS.txt" in start["prompt"]


def test_oracle_scores_full_and_null_zero_when_grading_is_available(tmp_path, dataset):
    run_dir = tmp_path / "runs" / "g"
    run_trials(cfg(dataset, run_dir))
    grades = jobbench.judge.grade_run(run_dir, jobbench.judge.JudgeConfig())
    scores = {
        (g.trial_id.split("/")[2], g.trial_id.split("/")[3].split("@")[0]): g.score for g in grades
    }
    assert scores == {
        ("task1", "oracle"): 1.0,
        ("task2", "oracle"): 1.0,
        ("task1", "null"): 0.0,
        ("task2", "null"): 0.0,
    }
