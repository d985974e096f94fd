"""Run integrity: the sandbox is recorded per trial, invalid tasks are refused or counted
missing, incomplete grades make figures provisional, export finds the tasks of a renamed
copy, and orphaned sandboxes are killed."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from runner_helpers import OCC, needs_bwrap
from typer.testing import CliRunner

from jobbench.report import build_report
from jobbench.runner import AgentSpec, RunConfig, RunConfigError, run_trials

runner = CliRunner()


def cfg(dataset, run_dir, agents=None, **kw) -> RunConfig:
    return RunConfig(dataset=dataset, agents=agents or [AgentSpec("null")], run_dir=run_dir, **kw)


def _records(run_dir: Path) -> dict[str, dict]:
    return {
        json.loads(p.read_text())["task_id"]: json.loads(p.read_text())
        for p in run_dir.rglob("trial.json")
    }


@needs_bwrap
def test_sandbox_is_recorded_per_trial_and_mixing_is_warned(tmp_path, dataset):
    run_dir = tmp_path / "runs" / "mix"
    first = run_trials(cfg(dataset, run_dir, sandbox="bwrap", task_glob="*task1"))
    assert first.ran == 1 and not any("sandbox" in w for w in first.warnings)
    lock = json.loads((run_dir / "lock.json").read_text())
    assert lock["sandboxes"] == ["bwrap"] and "sandbox" not in lock["config"]
    second = run_trials(cfg(dataset, run_dir, sandbox="none", task_glob="*task2"))
    assert second.ran == 1
    assert any(
        "runs 1 trial(s) without a sandbox while earlier trials of this run used bwrap" in w
        for w in second.warnings
    ), second.warnings
    lock = json.loads((run_dir / "lock.json").read_text())
    assert lock["sandboxes"] == ["bwrap", "none"] and "sandbox" not in lock["config"]
    recs = _records(run_dir)
    assert {t.rsplit("/", 1)[1]: r["sandbox"] for t, r in recs.items()} == {
        "task1": "bwrap",
        "task2": "none",
    }
    # a resume that runs nothing records no new sandbox and warns about none
    third = run_trials(cfg(dataset, run_dir, sandbox="none"))
    assert third.ran == 0 and not any("sandbox" in w for w in third.warnings)
    data = build_report([run_dir], n_resamples=50)
    assert any(
        "mix: mixes sandboxed (bwrap: 1) and unsandboxed (none: 1) trials" in w
        for w in data.warnings
    )
    assert any(
        "mix: 1 of 2 trial(s) ran WITHOUT a sandbox" in w and f"sample/{OCC}/task2" in w
        for w in data.warnings
    )


def _judge_env(tmp_path: Path, base_url: str) -> dict[str, str]:
    return {
        "JUDGE_MODEL": "fake-model",
        "JUDGE_API_BASE": base_url,
        "JUDGE_API_KEY": "test",
        "JOBBENCH_JUDGE_MAX_ATTEMPTS": "1",
        "JOBBENCH_JUDGE_CACHE": str(tmp_path / "judge-cache.sqlite"),
        "JOBBENCH_JUDGE_CONFIG": "",
        "JOBBENCH_JUDGE_MODEL": "",
        "COLUMNS": "220",
    }


def test_run_exits_1_and_marks_figures_provisional_when_the_judge_fails(
    tmp_path, dataset, monkeypatch
):
    """A judge endpoint that always answers 500: the run exits 1 and says to re-run; the
    report warns and the console marks the affected micro/macro as provisional."""
    from jobbench.cli import app
    from jobbench.testing import FakeOpenAIServer, ScriptedReply

    for name in (
        "JOBBENCH_JUDGE_API_BASE",
        "JOBBENCH_JUDGE_API_KEY",
        "JOBBENCH_JUDGE_DECIDE",
        "JOBBENCH_JUDGE_MODE",
    ):
        monkeypatch.delenv(name, raising=False)
    rub = dataset / OCC / "task2" / "RUBRICS.json"
    data = json.loads(rub.read_text())
    for r in data["rubrics"]:
        r.pop("checks", None)  # only the LLM can decide this criterion
    rub.write_text(json.dumps(data))
    with FakeOpenAIServer(
        lambda req: ScriptedReply(status=500, body={"error": {"message": "boom"}})
    ) as srv:
        r = runner.invoke(
            app,
            [
                "run",
                str(dataset),
                "--runs-dir",
                str(tmp_path / "runs"),
                "--run-name",
                "je",
                "--no-progress",
                "--tasks",
                "*task2",
                "--agent",
                "oracle",
                "--agent",
                "null",
            ],
            env=_judge_env(tmp_path, srv.base_url),
        )
        assert srv.calls >= 1
    assert r.exit_code == 1, r.output
    out = r.output
    assert "have incomplete grades (judge_error)" in out and "run the same command again" in out
    # the leaderboard row: rank, then the configuration
    oracle_row = next(line for line in out.splitlines() if re.match(r"\s*\d+\s+oracle\s", line))
    assert "0.0*" in oracle_row  # micro and macro of the provisional configuration are starred
    assert "* provisional" in out
    summary = json.loads((tmp_path / "runs" / "je" / "report" / "summary.json").read_text())
    conf = {c["agent"]: c for c in summary["configurations"]}
    assert conf["oracle"]["provisional"] is True and conf["oracle"]["incomplete_trials"] == {
        "judge_error": 1
    }
    assert summary["warnings"][0].startswith(
        "1 trial(s) have incomplete grades or results (1 judge_error)"
    )
    assert "oracle" in summary["warnings"][0] and "provisional" in summary["warnings"][0]
    md = (tmp_path / "runs" / "je" / "report" / "leaderboard.md").read_text()
    assert "| oracle | je | 0.0* |" in md and "\\* provisional" in md
    html = (tmp_path / "runs" / "je" / "report" / "report.html").read_text()
    assert "provisional" in html.split('id="warnings"', 1)[1].split("</div>", 1)[0]


def _break_task1(dataset: Path) -> str:
    """Make task1 invalid (``"weight": true`` on its first rubric; the second keeps weight 1)."""
    p = dataset / OCC / "task1" / "RUBRICS.json"
    data = json.loads(p.read_text())
    data["rubrics"][0]["weight"] = True
    p.write_text(json.dumps(data))
    return f"sample/{OCC}/task1"


def _no_judge(monkeypatch):
    for name in (
        "JUDGE_MODEL",
        "JUDGE_API_BASE",
        "JOBBENCH_JUDGE_MODEL",
        "JOBBENCH_JUDGE_CONFIG",
        "JOBBENCH_JUDGE_API_BASE",
    ):
        monkeypatch.delenv(name, raising=False)


def test_run_refuses_a_dataset_with_invalid_tasks(tmp_path, dataset, monkeypatch):
    from jobbench.cli import app

    _no_judge(monkeypatch)
    bad = _break_task1(dataset)
    r = runner.invoke(
        app,
        [
            "run",
            str(dataset),
            "--runs-dir",
            str(tmp_path / "runs"),
            "--run-name",
            "inv",
            "--no-progress",
        ],
        env={"COLUMNS": "300"},
    )
    assert r.exit_code == 2, r.output
    assert "1 validation error(s) in 1 task(s)" in r.output
    assert (
        f"{OCC}/task1/RUBRICS.json: rubrics[0].weight: must be a finite number ≥ 0, got true"
        in r.output
    )
    assert "--skip-invalid" in r.output
    assert not (tmp_path / "runs" / "inv" / "lock.json").exists()
    with __import__("pytest").raises(Exception, match="rubrics\\[0\\].weight"):
        run_trials(cfg(dataset, tmp_path / "runs" / "api"))
    assert bad not in str(list((tmp_path / "runs").rglob("trial.json")))


def test_skip_invalid_records_the_tasks_and_the_report_counts_them_missing(
    tmp_path, dataset, monkeypatch
):
    from jobbench.cli import app

    _no_judge(monkeypatch)
    bad = _break_task1(dataset)
    good = f"sample/{OCC}/task2"
    r = runner.invoke(
        app,
        [
            "run",
            str(dataset),
            "--runs-dir",
            str(tmp_path / "runs"),
            "--run-name",
            "inv",
            "--no-progress",
            "--skip-invalid",
            "--agent",
            "oracle",
        ],
        env={"COLUMNS": "300"},
    )
    assert r.exit_code == 0, r.output
    assert "1 invalid task(s) not run" in r.output and "rubrics[0].weight" in r.output
    run_dir = tmp_path / "runs" / "inv"
    lock = json.loads((run_dir / "lock.json").read_text())
    assert list(lock["tasks"]) == [good]
    assert list(lock["invalid_tasks"]) == [bad]
    entry = lock["invalid_tasks"][bad]
    assert entry["max_points"] == 1.0  # the readable weight of the second rubric
    assert len(entry["problems"]) == 1 and entry["problems"][0].endswith(
        "task1/RUBRICS.json: rubrics[0].weight: must be a finite number ≥ 0, got true"
    )
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    conf = summary["configurations"][0]
    # oracle solves task2 (1 of 1 point); the invalid task1 counts 0 of 1 point: micro 1/2, macro
    # 1/2
    assert conf["overall"]["tasks"] == 2 and conf["overall"]["tasks_scored"] == 1
    assert conf["overall"]["missing_tasks"] == [bad]
    assert (
        conf["overall"]["micro"]["estimate"] == 0.5 and conf["overall"]["macro"]["estimate"] == 0.5
    )
    assert any(
        w.startswith("inv: 1 task(s) were invalid and not run") and bad in w
        for w in summary["warnings"]
    )
    md = (run_dir / "report" / "leaderboard.md").read_text()
    assert (
        f"* oracle: {bad} (invalid task, not run: " in md and "rubrics\\[0\\].weight" in md
    )  # Markdown-escaped
    assert "| 1 / 2 |" in md
    # once the task is fixed, a resume without --skip-invalid runs it and forgets the problem
    p = dataset / OCC / "task1" / "RUBRICS.json"
    data = json.loads(p.read_text())
    data["rubrics"][0]["weight"] = 2
    p.write_text(json.dumps(data))
    s = run_trials(cfg(dataset, run_dir, [AgentSpec("oracle")]))
    assert s.ran == 1 and s.skipped == 1 and not s.invalid
    lock = json.loads((run_dir / "lock.json").read_text())
    assert sorted(lock["tasks"]) == [bad, good] and lock["invalid_tasks"] == {}


def test_export_matches_tasks_in_a_copy_with_another_split_name(tmp_path, dataset):
    import shutil

    from jobbench.cli import app

    run_dir = tmp_path / "runs" / "ex"
    run_trials(cfg(dataset, run_dir, [AgentSpec("oracle")]))
    copy = tmp_path / "dscopy"  # a copy of datasets/sample under another folder name
    shutil.copytree(dataset, copy)
    r = runner.invoke(app, ["export", "official", str(run_dir), str(copy)])
    assert r.exit_code == 0, r.output
    assert "model_output: 2  model_traj: 2  eval_result: 0" in r.output
    out = copy / OCC / "task2" / "model_output" / "oracle" / "memo.md"
    assert out.read_text() == "# Memo\nThe approved vendor is Acme Supplies.\n"
    assert (copy / OCC / "task1" / "model_output" / "oracle" / "net.csv").is_file()
    assert "not in" not in r.output  # nothing reported missing


def test_export_with_nothing_matching_fails_loudly(tmp_path, dataset):
    import shutil

    from jobbench.cli import app

    run_dir = tmp_path / "runs" / "ex"
    run_trials(cfg(dataset, run_dir, [AgentSpec("oracle")], task_glob="*task2"))
    other = tmp_path / "other" / "main" / "lawyers"
    shutil.copytree(dataset / OCC / "task1", other / "task1")
    r = runner.invoke(app, ["export", "official", str(run_dir), str(tmp_path / "other")])
    assert r.exit_code == 2, r.output
    assert f"none of the run's 1 task(s) (sample/{OCC}/task2) is in" in r.output
    assert not list((tmp_path / "other").rglob("model_output"))


def test_export_picks_the_copy_whose_task_digest_matches_when_names_are_ambiguous(
    tmp_path, dataset
):
    import shutil

    from jobbench.runner import export_official

    run_dir = tmp_path / "runs" / "ex"
    run_trials(cfg(dataset, run_dir, [AgentSpec("oracle")], task_glob="*task2"))
    copy = tmp_path / "copy"
    shutil.copytree(dataset, copy / "alpha")
    shutil.copytree(dataset, copy / "beta")
    (copy / "alpha" / OCC / "task2" / "task_card.md").write_text("a different version\n")
    s = export_official(run_dir, copy)
    assert s.outputs == 1 and s.missing_tasks == []
    assert (copy / "beta" / OCC / "task2" / "model_output" / "oracle" / "memo.md").is_file()
    assert not (copy / "alpha" / OCC / "task2" / "model_output").exists()
    # both copies identical to the run's task: ambiguous, nothing written, the reason is given
    shutil.copy(
        copy / "beta" / OCC / "task2" / "task_card.md",
        copy / "alpha" / OCC / "task2" / "task_card.md",
    )
    shutil.rmtree(copy / "beta" / OCC / "task2" / "model_output")
    with pytest.raises(RunConfigError, match="ambiguous") as exc:
        export_official(run_dir, copy)
    assert "alpha" in str(exc.value) and "beta" in str(exc.value)
    assert not list(copy.rglob("model_output"))


def _dead_pid() -> int:
    import subprocess

    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def _scratch_dir(root: Path, name: str, owner: int | None) -> Path:
    d = root / name
    (d / "workspace").mkdir(parents=True)
    if owner is not None:
        (d / "owner.pid").write_text(str(owner))
    return d


def test_leftover_sandboxes_of_a_dead_run_are_killed_at_run_start(tmp_path, dataset):
    """A process started as ``bwrap`` naming a stale scratch directory (its owner is dead)
    is killed and the directory removed when a run starts; look-alikes are left alone."""
    import os
    import subprocess
    import sys

    scratch = tmp_path / "scratch"
    stale = _scratch_dir(scratch, "jb-stale0001", _dead_pid())
    live = _scratch_dir(scratch, "jb-live00001", os.getpid())
    fake = tmp_path / "bin" / "bwrap"  # argv[0] ends in bwrap: a simulated leftover sandbox
    fake.parent.mkdir()
    fake.symlink_to(sys.executable)
    sleep = ["-c", "import time; time.sleep(600)"]
    orphan = subprocess.Popen(
        [str(fake), *sleep, "--bind", str(stale / "workspace"), "/workspace"],
        start_new_session=True,
    )
    keep = subprocess.Popen([str(fake), *sleep, "--bind", str(live / "workspace"), "/workspace"])
    other = subprocess.Popen(
        [sys.executable, *sleep, "--bind", str(stale / "workspace"), "/workspace"]
    )
    try:
        time.sleep(0.2)
        assert orphan.poll() is None
        s = run_trials(
            cfg(dataset, tmp_path / "runs" / "o", scratch_root=scratch, task_glob="*task2")
        )
        assert orphan.wait(timeout=10) == -9
        assert keep.poll() is None and other.poll() is None  # a live owner; not a sandbox
        assert not stale.exists() and live.is_dir()
        assert any(
            f"killed 1 leftover sandbox process(es) of an interrupted run (pid {orphan.pid})" in w
            for w in s.warnings
        ), s.warnings
    finally:
        for p in (orphan, keep, other):
            p.kill()
            p.wait()


@needs_bwrap
def test_a_real_leftover_bwrap_is_killed_by_the_sweep(tmp_path):
    import subprocess

    from jobbench.runner._orphans import sweep_scratch

    scratch = tmp_path / "scratch"
    stale = _scratch_dir(scratch, "jb-realbwrap", _dead_pid())
    ws = str(stale / "workspace")
    proc = subprocess.Popen(
        ["bwrap", "--ro-bind", "/", "/", "--bind", ws, ws, "--unshare-pid", "--", "sleep", "600"],
        start_new_session=True,
    )
    try:
        time.sleep(0.3)
        assert proc.poll() is None
        sweep = sweep_scratch(scratch)
        assert proc.wait(timeout=10) == -9
        # the outer bwrap and its pid-namespace init (same command line) are both killed
        assert proc.pid in [pid for pid, _ in sweep.killed] and {d for _, d in sweep.killed} == {
            stale
        }
        assert sweep.removed == 1 and not stale.exists()
    finally:
        proc.kill()
        proc.wait()


def test_an_ownerless_empty_scratch_directory_is_stale_only_after_a_grace_period(tmp_path):
    import os

    from jobbench.runner._orphans import EMPTY_OWNER_GRACE, stale_scratch_dirs, sweep_scratch

    scratch = tmp_path / "scratch"
    old = scratch / "jb-killedearly"  # killed between mkdtemp and writing owner.pid
    old.mkdir(parents=True)
    (old / "owner.pid").write_text("")
    past = time.time() - EMPTY_OWNER_GRACE - 5
    os.utime(old, (past, past))
    fresh = scratch / "jb-justcreated"
    fresh.mkdir()
    used = _scratch_dir(
        scratch, "jb-noownerbut", None
    )  # has a workspace: never judged without an owner
    os.utime(used, (past, past))
    assert stale_scratch_dirs(scratch) == [old]
    assert sweep_scratch(scratch).removed == 1
    assert not old.exists() and fresh.is_dir() and used.is_dir()


def test_the_owner_of_a_scratch_directory_is_in_its_name_from_the_start(tmp_path):
    """``prepare_workspace`` names its directory ``jb-<pid>-<random>`` (no moment without an
    owner, however the harness dies); a named owner that is dead makes the directory stale at
    once, empty or not; a live one never; names of an earlier JobBench keep ``owner.pid``."""
    import os

    from jobbench.runner._orphans import stale_scratch_dirs
    from jobbench.sandbox import prepare_workspace, scratch_owner

    scratch = tmp_path / "scratch"
    task_folder = tmp_path / "task_folder"
    task_folder.mkdir()
    (task_folder / "TASK_INSTRUCTIONS.txt").write_text("do it\n")
    ws = prepare_workspace(task_folder, scratch_root=scratch)
    assert ws.root.name.startswith(f"jb-{os.getpid()}-")
    assert scratch_owner(ws.root) == os.getpid()
    assert not (ws.root / "owner.pid").exists()
    dead = _dead_pid()
    killed_at_once = scratch / f"jb-{dead}-abc123"  # made, then killed before anything else
    killed_at_once.mkdir()
    old = _scratch_dir(scratch, "jb-oldstyle1", dead)
    garbage = _scratch_dir(scratch, "jb-garbage1", None)
    (garbage / "owner.pid").write_text("not a pid")
    assert scratch_owner(killed_at_once) == dead and scratch_owner(old) == dead
    assert scratch_owner(garbage) is None
    assert stale_scratch_dirs(scratch) == sorted([killed_at_once, old])
    huge = scratch / "jb-99999999999999999999-x"  # no process id: never raises, never matches
    huge.mkdir()
    (scratch / "jb-oldbig1").mkdir()
    (scratch / "jb-oldbig1" / "owner.pid").write_text("99999999999999999999")
    assert scratch_owner(huge) is None and scratch_owner(scratch / "jb-oldbig1") is None
    assert stale_scratch_dirs(scratch) == sorted([killed_at_once, old])
    ws.cleanup()
