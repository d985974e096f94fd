"""The Dask executors give the same records as the local pool, survive a killed worker,
resume like the local pool, and refuse workers that cannot see the run directory."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from dask_helpers import grade_records, trial_records
from runner_helpers import build_dataset

from jobbench.records import TrialRecord, TrialStatus
from jobbench.runner import AgentSpec, ExecutorError, RunConfig, run_trials
from jobbench.sandbox import SCRATCH_PREFIX, scratch_owner

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
SAMPLE = ROOT / "datasets" / "sample"


def _cli(args: list[str], tmp_path: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    env = dict(
        os.environ,
        PYTHONPATH=str(SRC),
        JOBBENCH_SCRATCH=str(tmp_path / "scratch"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    env.pop("JOBBENCH_JUDGE_CONFIG", None)
    for k in (
        "JUDGE_MODEL",
        "JUDGE_API_BASE",
        "JUDGE_API_KEY",
        "JOBBENCH_JUDGE_MODEL",
        "JOBBENCH_JUDGE_API_BASE",
    ):
        env.pop(k, None)
    return subprocess.run(
        [sys.executable, "-m", "jobbench.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=tmp_path,
    )


def test_sample_split_dask_local_gives_the_local_pool_grade_records(tmp_path):
    """`jobbench run` on two tasks of datasets/sample/main (a workbook task and a memo task):
    local pool (-j 2) vs --executor dask-local with two workers; trial and grade records are
    equal except for times (and zip member times)."""
    runs = tmp_path / "runs"
    common = [
        "run",
        str(SAMPLE / "main"),
        "--tasks",
        "*/[os][nt][la]*/*",  # online_merchants, statisticians
        "--agent",
        "oracle",
        "--agent",
        "null",
        "--runs-dir",
        str(runs),
        "--no-progress",
    ]
    local = _cli([*common, "--run-name", "local", "-j", "2"], tmp_path)
    assert local.returncode == 0, local.stdout + local.stderr
    dask = _cli(
        [*common, "--run-name", "dask", "--executor", "dask-local", "--dask-workers", "2"], tmp_path
    )
    assert dask.returncode == 0, dask.stdout + dask.stderr
    assert "Executor: dask-local (2 worker process(es)" in dask.stdout
    assert "4 trial(s) run, 0 already finished (sandbox: bwrap)" in dask.stdout

    t_local, t_dask = trial_records(runs / "local"), trial_records(runs / "dask")
    assert len(t_local) == 4 and t_dask == t_local
    g_local, g_dask = grade_records(runs / "local"), grade_records(runs / "dask")
    assert len(g_local) == 4
    assert sorted(g_dask) == sorted(g_local)
    for tid in g_local:
        assert g_dask[tid] == g_local[tid], tid
    # the records are real grades: null scores 0 everywhere, the oracle passes something
    assert all(g["score"] == 0.0 for t, g in g_dask.items() if "/null@-/" in t)
    assert [g["score"] for t, g in g_dask.items() if "/oracle@-/" in t] == [1.0, 1.0]
    assert (runs / "dask" / "report" / "leaderboard.md").is_file()
    assert not (runs / "dask" / ".jobbench-probe").exists()

    again = _cli(
        [*common, "--run-name", "dask", "--executor", "dask-local", "--dask-workers", "2"], tmp_path
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert "0 trial(s) run, 4 already finished" in again.stdout
    assert trial_records(runs / "dask") == t_dask


def test_resume_on_dask_reruns_exactly_what_the_local_pool_would(tmp_path, dask_executor):
    dataset = build_dataset(tmp_path / "data")
    cfg = RunConfig(
        dataset=dataset,
        agents=[AgentSpec("oracle"), AgentSpec("null")],
        run_dir=tmp_path / "runs" / "r",
        epochs=2,
        scratch_root=tmp_path / "scratch",
    )
    first = run_trials(cfg)
    assert first.ran == 8
    trials = sorted((cfg.run_dir / "trials").rglob("trial.json"))
    gone = [trials[0], trials[5]]
    for p in gone:
        p.unlink()
    infra = trials[3]
    rec = TrialRecord.model_validate_json(infra.read_text())
    infra.write_text(
        rec.model_copy(update={"status": TrialStatus.infra_error, "error": "x"}).model_dump_json()
    )
    kept = {p: p.read_bytes() for p in trials if p not in gone and p != infra}

    ids = []
    second = run_trials(
        cfg, executor=dask_executor, on_event=lambda k, pt, r: ids.append((k, pt.trial_id))
    )
    assert (second.ran, second.skipped) == (3, 5)
    redone = {str(p.parent.relative_to(cfg.run_dir / "trials")) for p in [*gone, infra]}
    assert {t for k, t in ids if k == "end"} == redone
    assert {t for k, t in ids if k == "start"} == redone
    for p, data in kept.items():
        assert p.read_bytes() == data
    assert len(list((cfg.run_dir / "trials").rglob("trial.json"))) == 8
    assert all(r.status in (TrialStatus.ok, TrialStatus.no_deliverable) for r in second.records)
    assert list((tmp_path / "scratch").glob("jb-*")) == []

    from jobbench.judge import JudgeConfig, grade_run

    graded = grade_run(cfg.run_dir, JudgeConfig(), executor=dask_executor, progress=False)
    assert [g.score for g in graded if "/oracle@-/" in g.trial_id] == [1.0] * 4
    assert [g.score for g in graded if "/null@-/" in g.trial_id] == [0.0] * 4


def test_cancel_stops_running_trials_on_the_workers_and_records_nothing_for_them(
    tmp_path, dask_executor
):
    dataset = build_dataset(tmp_path / "data", delay=60.0)  # task2's oracle would sleep a minute
    scratch = tmp_path / "scratch"
    cfg = RunConfig(
        dataset=dataset,
        agents=[AgentSpec("oracle")],
        run_dir=tmp_path / "runs" / "c",
        epochs=2,
        scratch_root=scratch,
    )
    cancel = threading.Event()
    ends: dict[str, object] = {}

    def on_event(kind, pt, rec):
        if kind == "start" and "/task2/" in pt.trial_id:
            threading.Timer(1.0, cancel.set).start()  # once the slow solution is running
        if kind == "end":
            ends[pt.trial_id] = rec

    summary = run_trials(cfg, executor=dask_executor, on_event=on_event, cancel=cancel)
    slow = {t for t in ends if "/task2/" in t}
    recorded = {t for t, r in ends.items() if r is not None}
    assert cancel.is_set() and len(ends) == 4 and len(slow) == 2
    assert not slow & recorded  # interrupted: never recorded
    assert {r.trial_id for r in summary.records} == recorded and summary.ran == len(recorded)
    for t, r in ends.items():
        assert (cfg.run_dir / "trials" / t / "trial.json").exists() == (r is not None)
    # run_trials waited for the running trials to stop: their sandboxes and workspaces are gone
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(scratch) not in ps, "the slow sandboxes must be killed"
    assert list(scratch.glob("jb-*")) == []
    idle = dask_executor.client.run(lambda dask_worker: len(dask_worker.state.executing))
    assert set(idle.values()) == {0}, (
        "no worker thread may still be running a trial of the cancelled run"
    )


def test_llm_grading_on_dask_equals_grading_in_process(tmp_path, dask_executor):
    """Grading jobs with an LLM judge (the scripted OpenAI-compatible server, reached by the
    worker processes over 127.0.0.1) give the same grade records as grading in-process."""
    sys.path.insert(0, str(ROOT / "tests" / "judge"))
    from judge_helpers import TableJudge

    from jobbench.judge import JudgeConfig, grade_run
    from jobbench.testing import FakeOpenAIServer

    dataset = build_dataset(tmp_path / "data")
    cfg = RunConfig(
        dataset=dataset,
        agents=[AgentSpec("oracle"), AgentSpec("null")],
        run_dir=tmp_path / "runs" / "a",
        scratch_root=tmp_path / "scratch",
    )
    run_trials(cfg)
    other = tmp_path / "runs" / "b"
    shutil.copytree(cfg.run_dir, other)
    table = {
        "net.csv gives 900.25 for Jan": ("pass", "Jan,900.25"),
        "net.csv gives 1210.25 for Mar": ("fail", "Mar,1210.25"),
        "memo names Acme Supplies": ("pass", "Acme Supplies"),
    }
    judge = TableJudge(table, usage=(120, 30, 0))
    with FakeOpenAIServer(judge) as srv:
        jc = JudgeConfig(
            model="fake-judge", api_base=srv.base_url, api_key="test", decide="llm", cache=False
        )
        here = grade_run(cfg.run_dir, jc, progress=False)
        calls_here = srv.calls
        there = grade_run(other, jc, executor=dask_executor, progress=False)
        calls_there = srv.calls - calls_here
    assert (
        calls_here == calls_there == 3
    )  # one call per rubric of the two oracle trials; null: none
    assert [g.trial_id for g in there] == [g.trial_id for g in here]
    a, b = grade_records(cfg.run_dir, jc), grade_records(other, jc)
    assert a == b and len(a) == 4
    scores = {t.rsplit("/", 3)[1] + "/" + t.split("/")[-2]: g["score"] for t, g in b.items()}
    assert scores == {
        "task1/oracle@-": 2 / 3,
        "task1/null@-": 0.0,
        "task2/oracle@-": 1.0,
        "task2/null@-": 0.0,
    }
    assert sum(g["usage"]["input_tokens"] for g in b.values()) == 3 * 120


def test_grade_cli_on_dask_local_equals_grading_in_process(tmp_path):
    """`jobbench grade RUN --executor dask-local` writes the same grade records as `jobbench
    grade RUN` in this process; --executor is refused for a public-layout dataset and
    `--executor dask` without a scheduler is a usage error (exit 2, nothing graded)."""
    dataset = build_dataset(tmp_path / "data")
    cfg = RunConfig(
        dataset=dataset,
        agents=[AgentSpec("oracle"), AgentSpec("null")],
        run_dir=tmp_path / "runs" / "a",
        scratch_root=tmp_path / "scratch",
    )
    run_trials(cfg)
    other = tmp_path / "runs" / "b"
    shutil.copytree(cfg.run_dir, other)
    here = _cli(["grade", str(cfg.run_dir), "--no-progress", "--json"], tmp_path)
    assert here.returncode == 0, here.stdout + here.stderr
    there = _cli(
        [
            "grade",
            str(other),
            "--no-progress",
            "--json",
            "--executor",
            "dask-local",
            "--dask-workers",
            "1",
        ],
        tmp_path,
    )
    assert there.returncode == 0, there.stdout + there.stderr
    a, b = grade_records(cfg.run_dir), grade_records(other)
    assert len(a) == 4 and a == b
    assert json.loads(there.stdout)["rows"] == json.loads(here.stdout)["rows"]

    no_sched = _cli(["grade", str(other), "--executor", "dask"], tmp_path)
    assert no_sched.returncode == 2 and "--scheduler" in no_sched.stderr
    public = _cli(["grade", str(dataset), "--executor", "dask-local"], tmp_path)
    assert public.returncode == 2 and "--executor applies to run directories only" in public.stderr


def test_a_worker_seeing_another_dataset_records_infra_error(tmp_path, dask_executor):
    """The task changes between planning and the trial (as when a worker mounts another copy
    of the dataset): the worker refuses it, Dask retries, and the client records
    infra_error (never scored); the next invocation runs it again."""
    dataset = build_dataset(tmp_path / "data")
    cfg = RunConfig(
        dataset=dataset,
        agents=[AgentSpec("oracle")],
        run_dir=tmp_path / "runs" / "m",
        scratch_root=tmp_path / "scratch",
    )
    task2 = (
        dataset
        / "bookkeeping_accounting_and_auditing_clerks"
        / "task2"
        / "task_folder"
        / "TASK_INSTRUCTIONS.txt"
    )

    def on_event(kind, pt, rec):
        if kind == "plan" and "/task2/" in pt.trial_id:
            task2.write_text(task2.read_text() + "Changed after planning.\n")

    summary = run_trials(cfg, executor=dask_executor, on_event=on_event)
    by_task = {r.task_id.rsplit("/", 1)[1]: r for r in summary.records}
    assert by_task["task1"].status == TrialStatus.ok
    bad = by_task["task2"]
    assert bad.status == TrialStatus.infra_error and bad.deliverables == []
    assert bad.error.startswith("dask-local executor: DatasetMismatch: worker on ")
    assert "every worker must see the same dataset at the same path" in bad.error
    tdir = cfg.run_dir / "trials" / bad.trial_id
    assert TrialRecord.model_validate_json((tdir / "trial.json").read_text()) == bad
    events = [json.loads(x) for x in (tdir / "trajectory.jsonl").read_text().splitlines()]
    assert [e["type"] for e in events] == ["executor_error", "trial_end"]

    again = run_trials(cfg, executor=dask_executor)
    assert (again.ran, again.skipped) == (1, 1)
    assert {r.status for r in again.records} == {TrialStatus.ok}
    assert any("changed since it was run" in w for w in again.warnings)


def test_worker_killed_mid_trial_is_retried_and_recorded_once(tmp_path):
    """SIGKILL the worker process running a (slow) oracle trial: Dask reruns the trial on a
    worker, the run completes, every trial has exactly one record and one trajectory, and the
    dead worker's scratch directory is removed."""
    from jobbench.runner._dask import DaskExecutor

    dataset = build_dataset(tmp_path / "data", delay=3.0)  # task2's oracle sleeps 3 s
    scratch = tmp_path / "scratch"
    cfg = RunConfig(
        dataset=dataset,
        agents=[AgentSpec("oracle"), AgentSpec("null")],
        run_dir=tmp_path / "runs" / "k",
        epochs=2,
        scratch_root=scratch,
    )
    killed: dict[str, object] = {}
    stop = threading.Event()

    with DaskExecutor(n_workers=2, threads_per_worker=1, worker_timeout=60) as ex:

        def killer() -> None:
            while not stop.is_set() and not killed:
                pids = {w["pid"] for w in ex.workers().values()}
                for trial_dir in scratch.glob(f"{SCRATCH_PREFIX}*"):
                    # Only task2's *oracle* trial is slow: the null trial of task2 has the same
                    # delay.txt but ends at once, and killing its worker 0.3 s later would hit
                    # whichever trial that worker picked up next. The oracle copies the task's
                    # solution into the private folder before it starts sleeping.
                    if not (
                        (trial_dir / "writable/workspace/task_folder/delay.txt").exists()
                        and (trial_dir / "private" / "solution").exists()
                    ):
                        continue
                    pid = scratch_owner(trial_dir)
                    if pid in pids:
                        time.sleep(0.3)  # well inside the 3 s sleep
                        if not trial_dir.exists():
                            continue  # ended after all; look again
                        os.kill(pid, signal.SIGKILL)
                        killed.update(pid=pid, scratch=trial_dir)
                        return
                time.sleep(0.05)

        events: list[tuple[str, str]] = []
        t = threading.Thread(target=killer, daemon=True)
        t.start()
        try:
            summary = run_trials(
                cfg, executor=ex, on_event=lambda k, pt, r: events.append((k, pt.trial_id))
            )
        finally:
            stop.set()
            t.join(10)
        assert killed, "the killer never found the slow trial"
        workers_after = ex.workers()

    assert summary.ran == 8
    assert sorted(r.status.value for r in summary.records) == ["no_deliverable"] * 4 + ["ok"] * 4
    records = sorted((cfg.run_dir / "trials").rglob("trial.json"))
    ids = [TrialRecord.model_validate_json(p.read_text()).trial_id for p in records]
    assert len(ids) == 8 and len(set(ids)) == 8
    for p in records:
        types = [
            json.loads(x)["type"] for x in (p.parent / "trajectory.jsonl").read_text().splitlines()
        ]
        assert types.count("trial_start") == 1 and types.count("trial_end") == 1, p
        if "task2/oracle" in str(p):
            assert (p.parent / "deliverables" / "memo.md").read_text().count("Acme Supplies") == 1
    retried = [tid for kind, tid in events if kind == "retry"]
    assert len(retried) == 1 and "/task2/oracle@-/" in retried[0]
    assert [tid for kind, tid in events if kind == "end"].count(retried[0]) == 1
    with pytest.raises(ProcessLookupError):
        os.kill(int(killed["pid"]), 0)  # type: ignore[arg-type]
    assert not Path(killed["scratch"]).exists()  # type: ignore[arg-type]
    assert list(scratch.glob("jb-*")) == []
    assert int(killed["pid"]) not in {w["pid"] for w in workers_after.values()}  # type: ignore[arg-type]


def _start_scheduler():
    import logging
    import warnings

    from distributed import LocalCluster

    with warnings.catch_warnings():  # the HTTP port moves when another cluster holds 8787
        warnings.filterwarnings("ignore", message=r"(?s)Port \d+ is already in use")
        return LocalCluster(
            n_workers=0, processes=True, dashboard_address=None, silence_logs=logging.ERROR
        )


def _start_worker(address: str, *wrap: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(SRC))
    return subprocess.Popen(
        [
            *wrap,
            sys.executable,
            "-m",
            "distributed.cli.dask_worker",
            address,
            "--nthreads",
            "1",
            "--no-nanny",
            "--no-dashboard",
            "--death-timeout",
            "30",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def test_existing_cluster_refuses_unshared_run_directory_then_runs_on_shared_one(tmp_path):
    """An existing cluster (`--executor dask --scheduler`). First its only worker sees a
    private directory at the run directory's path (a tmpfs mounted over it by bubblewrap): it
    writes its probe file where the client cannot read it, and the run fails before any trial
    with a message naming the worker and the cause. Then, with a worker that shares the file
    system, `jobbench run --executor dask --scheduler <scheduler file>` runs and grades."""
    if shutil.which("bwrap") is None:
        pytest.skip("needs bubblewrap to give the worker its own view of the file system")
    from jobbench.runner import make_executor

    dataset = build_dataset(tmp_path / "data")
    run_dir = tmp_path / "runs" / "p"
    run_dir.mkdir(parents=True)
    cluster = _start_scheduler()
    worker = _start_worker(
        cluster.scheduler_address,
        "bwrap",
        "--dev-bind",
        "/",
        "/",
        "--tmpfs",
        str(run_dir),
        "--die-with-parent",
    )
    try:
        with make_executor("dask", scheduler=cluster.scheduler_address) as ex:
            cfg = RunConfig(
                dataset=dataset,
                agents=[AgentSpec("null")],
                run_dir=run_dir,
                scratch_root=tmp_path / "scratch",
            )
            with pytest.raises(ExecutorError) as info:
                run_trials(cfg, executor=ex)
            msg = str(info.value)
            assert (
                "this client cannot read it" in msg
                and "not on storage shared by the client and the workers" in msg
            )
            assert str(run_dir) in msg and "worker tcp://" in msg
            assert (
                sorted(p.name for p in run_dir.iterdir()) == []
            )  # no lock.json, no trials, no probe left

            worker.terminate()
            worker.wait(20)
            worker = _start_worker(cluster.scheduler_address)
            deadline = time.monotonic() + 60
            while len(ex.client.scheduler_info()["workers"]) != 1 and time.monotonic() < deadline:
                time.sleep(0.2)
            ex.client.write_scheduler_file(str(tmp_path / "scheduler.json"))
        r = _cli(
            [
                "run",
                str(dataset),
                "--agent",
                "oracle",
                "--agent",
                "null",
                "--runs-dir",
                str(tmp_path / "runs"),
                "--run-name",
                "p",
                "--executor",
                "dask",
                "--scheduler",
                str(tmp_path / "scheduler.json"),
                "-j",
                "3",
                "--no-progress",
            ],
            tmp_path,
        )
    finally:
        worker.terminate()
        worker.wait(20)
        cluster.close()
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"Executor: dask ({tmp_path / 'scheduler.json'}); -j is ignored" in r.stdout
    assert "4 trial(s) run, 0 already finished (sandbox: bwrap)" in r.stdout
    grades = grade_records(run_dir)
    assert {t: g["score"] for t, g in grades.items()} == {
        "sample/bookkeeping_accounting_and_auditing_clerks/task1/oracle@-/epoch-1": 1.0,
        "sample/bookkeeping_accounting_and_auditing_clerks/task1/null@-/epoch-1": 0.0,
        "sample/bookkeeping_accounting_and_auditing_clerks/task2/oracle@-/epoch-1": 1.0,
        "sample/bookkeeping_accounting_and_auditing_clerks/task2/null@-/epoch-1": 0.0,
    }


def test_dask_executor_needs_a_scheduler_and_reports_unreachable_ones(tmp_path):
    from jobbench.runner import make_executor

    with pytest.raises(ExecutorError, match="needs --scheduler"):
        make_executor("dask")
    with pytest.raises(ExecutorError, match="unknown executor 'spark'"):
        make_executor("spark")
    from jobbench.runner._dask import DaskExecutor

    with pytest.raises(
        ExecutorError, match="cannot connect to the Dask scheduler at tcp://127.0.0.1:1"
    ):
        DaskExecutor("tcp://127.0.0.1:1", connect_timeout=2)


def test_sandbox_policy_across_workers():
    from jobbench.runner._dask import DaskExecutor

    bw = {"host": "a", "backend": "bwrap"}
    no = {"host": "b", "backend": None, "sandbox_error": "bwrap: not found"}
    problems: list[str] = []
    assert (
        DaskExecutor._backend({"w1": bw, "w2": dict(bw)}, "auto", problems) == "bwrap"
        and problems == []
    )
    assert DaskExecutor._backend({"w1": no}, "auto", problems) == "none" and problems == []
    assert DaskExecutor._backend({"w1": no}, "none", problems) == "none" and problems == []
    DaskExecutor._backend({"w1": bw, "w2": no}, "auto", problems)
    assert len(problems) == 1 and "not on w2" in problems[0] and "--sandbox none" in problems[0]
    problems.clear()
    DaskExecutor._backend({"w1": bw, "w2": no}, "bwrap", problems)
    assert len(problems) == 1 and problems[0].startswith(
        "worker w2 (host b): bubblewrap does not work there (bwrap: not found)"
    )


def test_base_install_never_imports_dask(tmp_path):
    code = (
        "import sys; import jobbench.cli, jobbench.runner, jobbench.judge\n"
        "from jobbench.runner import make_executor\n"
        "ex = make_executor('local', max_trials=3)\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed'))\n"
        "print(type(ex).__name__, ex.max_trials, loaded)\n"
        "sys.modules['distributed'] = None\n"
        "try:\n"
        "    make_executor('dask-local')\n"
        "except Exception as e:\n"
        "    print(type(e).__name__, e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=dict(os.environ, PYTHONPATH=str(SRC)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()[:2]
    assert first == "LocalExecutor 3 []"
    assert second.startswith("ExecutorError the Dask executors need Dask distributed")
    assert "pip install 'jobbench[dask]'" in second
