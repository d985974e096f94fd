"""``jobbench import harbor``: a Harbor job directory written with Harbor's own models
(``harbor_probe.py job``) becomes a graded run directory and report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.interop.harbor import HarborImportError, import_harbor_job
from jobbench.rundir import RunDir
from jobbench.tasks import load_dataset

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "datasets" / "sample"
T0 = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


def _at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat()


def _timings(start: float, agent_seconds: float) -> dict[str, list[str]]:
    """Harbor's four phases from ``start``: setup 5 s, agent setup 2 s, the agent
    ``agent_seconds``, the verifier 3 s."""
    a = start + 7
    return {
        "environment_setup": [_at(start), _at(start + 5)],
        "agent_setup": [_at(start + 5), _at(a)],
        "agent_execution": [_at(a), _at(a + agent_seconds)],
        "verifier": [_at(a + agent_seconds), _at(a + agent_seconds + 3)],
    }


def _trial(task_dir: Path, name: str, agent: str, start: float, agent_s: float, **kw) -> dict:
    return {
        "task_dir": str(task_dir),
        "trial_name": name,
        "agent": agent,
        "artifact_source": "/workspace/output",
        "timings": _timings(start, agent_s),
        "started_at": _at(start),
        "finished_at": _at(start + 7 + agent_s + 3),
        **kw,
    }


def _oracle_output(task_dir: Path, out: Path) -> Path:
    """What the exported ``solution/solve.sh`` writes, run on the exported workspace."""
    subprocess.run(
        [
            sys.executable,
            str(task_dir / "solution" / "solve.py"),
            "--workspace",
            str(task_dir / "environment" / "task_folder"),
            "--output",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    return out


@pytest.fixture(scope="module")
def harbor_job(sample_export: Path, harbor_probe, tmp_path_factory) -> Path:
    """Oracle and nop over every exported sample task; a second oracle attempt of the first
    task that ended in a verifier timeout; a model agent that timed out with token usage."""
    base = tmp_path_factory.mktemp("harbor-job")
    empty = base / "empty"
    empty.mkdir()
    dirs = sorted(p for p in sample_export.iterdir() if p.is_dir())
    trials = []
    for i, d in enumerate(dirs):
        out = _oracle_output(d, base / "oracle" / d.name)
        trials.append(
            _trial(
                d,
                f"{d.name}__oracle",
                "oracle",
                100 * i,
                20 + i,
                output_dir=str(out),
                reward={"reward": 1.0},
            )
        )
        trials.append(
            _trial(
                d,
                f"{d.name}__nop",
                "nop",
                100 * i + 50,
                1,
                output_dir=str(empty),
                reward={"reward": 0.0},
            )
        )
    first = dirs[0]
    trials.append(
        _trial(
            first,
            f"{first.name}__oracle2",
            "oracle",
            5000,
            21,
            output_dir=str(base / "oracle" / first.name),
            exception={
                "type": "VerifierTimeoutError",
                "message": "verifier timed out after 1800 s",
                "occurred_at": _at(5031),
            },
        )
    )
    trials.append(
        _trial(
            first,
            f"{first.name}__terminus",
            "terminus-2",
            6000,
            3600,
            model={"name": "gpt-5-mini", "provider": "openai"},
            version="2.0.0",
            output_dir=str(empty),
            tokens={
                "n_input_tokens": 1200,
                "n_cache_tokens": 200,
                "n_output_tokens": 300,
                "cost_usd": 0.25,
            },
            exception={
                "type": "AgentTimeoutError",
                "message": "agent timed out",
                "occurred_at": _at(6007 + 3600),
            },
        )
    )
    spec = base / "spec.json"
    spec.write_text(json.dumps({"job_name": "sample-job", "trials": trials}))
    job = base / "jobs" / "sample-job"
    harbor_probe("job", str(spec), str(job))
    return job


def _rows(report_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (report_dir / "results.jsonl").read_text().splitlines()]


def test_import_reports_oracle_100_and_nop_0_with_harbor_facts(
    harbor_job: Path, tmp_path: Path
) -> None:
    tasks = load_dataset(SAMPLE).tasks
    run_dir = tmp_path / "run"
    res = CliRunner().invoke(app, ["import", "harbor", str(harbor_job), str(run_dir)])
    assert res.exit_code == 0, res.output
    report_dir = run_dir / "report"
    summary = json.loads((report_dir / "summary.json").read_text())
    by_label = {c["label"]: c for c in summary["configurations"]}
    assert set(by_label) == {"oracle", "nop", "terminus-2@openai/gpt-5-mini"}
    for label, want in (("oracle", 1.0), ("nop", 0.0)):
        overall = by_label[label]["overall"]
        assert overall["micro"]["estimate"] == want
        assert overall["macro"]["estimate"] == want
    rows = _rows(report_dir)
    first = min(t.id for t in tasks)
    oracle = [r for r in rows if r["agent"] == "oracle"]
    nop = [r for r in rows if r["agent"] == "nop"]
    assert len(nop) == len(tasks) and len(oracle) == len(tasks) + 1
    assert all(r["score"] == 0.0 and r["trial_status"] == "no_deliverable" for r in nop)
    scored = [r for r in oracle if r["epoch"] == 1]
    assert all(r["score"] == 1.0 and r["trial_status"] == "ok" for r in scored)
    (retry,) = [r for r in oracle if r["epoch"] == 2]
    assert retry["task_id"] == first and retry["trial_status"] == "infra_error"
    assert retry["scored"] is False and retry["score"] is None
    assert retry["trial_error"].startswith("VerifierTimeoutError: verifier timed out")
    (model_row,) = [r for r in rows if r["agent"] == "terminus-2"]
    assert model_row["model"] == "openai/gpt-5-mini"
    assert model_row["trial_status"] == "agent_timeout"
    assert model_row["agent_input_tokens"] == 1200
    assert model_row["agent_cached_input_tokens"] == 200
    assert model_row["agent_output_tokens"] == 300
    assert model_row["agent_cost_usd"] == 0.25
    # Harbor's agent info and timings in the trial records
    rd = RunDir(run_dir)
    rec = rd.read_trial(model_row["trial_id"]).get()
    assert rec.details["harbor_agent_version"] == "2.0.0"
    assert rec.details["harbor_exception"] == "AgentTimeoutError"
    assert rec.details["harbor_timings"] == {
        "environment_setup": 5.0,
        "agent_setup": 2.0,
        "agent_execution": 3600.0,
        "verifier": 3.0,
    }
    assert rec.wall_seconds == 3600.0 and rec.sandbox == "harbor"
    # ... and in results.jsonl
    assert model_row["harbor"]["agent_version"] == "2.0.0"
    assert model_row["harbor"]["agent"] == "terminus-2"
    assert model_row["harbor"]["exception"] == "AgentTimeoutError"
    assert model_row["harbor"]["timings"] == rec.details["harbor_timings"]
    assert all(r["harbor"]["agent_version"] == "1.0.0" for r in scored)
    assert rec.started_at == _at(6000)
    ordered = sorted(tasks, key=lambda t: t.id.replace("/", "--"))
    for i, t in enumerate(ordered):
        (row,) = [r for r in scored if r["task_id"] == t.id]
        o = rd.read_trial(row["trial_id"]).get()
        assert o.details["harbor_agent_version"] == "1.0.0"
        assert o.details["harbor_timings"]["agent_execution"] == 20.0 + i
        assert o.details["harbor_rewards"] == {"reward": 1.0}
    lock = rd.read_lock().get()
    assert lock.dataset_root == str(SAMPLE.resolve()) and lock.epochs == 2


def _one_trial_job(sample_export: Path, harbor_probe, base: Path, **kw) -> tuple[Path, Path]:
    d = sorted(p for p in sample_export.iterdir() if p.is_dir())[0]
    out = _oracle_output(d, base / "oracle")
    spec = base / "spec.json"
    trial = _trial(d, "t1", "oracle", 0, 10, output_dir=str(out), **kw)
    spec.write_text(json.dumps({"job_name": "j", "trials": [trial]}))
    job = base / "job"
    harbor_probe("job", str(spec), str(job))
    return job, d


def test_a_linked_output_folder_is_refused_not_followed(
    sample_export: Path, harbor_probe, tmp_path: Path
) -> None:
    job, d = _one_trial_job(sample_export, harbor_probe, tmp_path)
    workspace = job / "t1" / "artifacts" / "workspace"
    real = tmp_path / "elsewhere"
    workspace.rename(real)
    os.symlink(real, workspace)
    res = import_harbor_job(job, tmp_path / "run", dataset=SAMPLE)
    rec = RunDir(tmp_path / "run").read_trial(res.trial_ids[0]).get()
    assert rec.deliverables == [] and rec.status.value == "no_deliverable"
    assert rec.refused and rec.refused[0].startswith("workspace/output: ")
    kept = RunDir(tmp_path / "run").deliverables_dir(res.trial_ids[0])
    assert not kept.exists() or not any(kept.iterdir())


def test_hostile_results_are_refused_before_anything_is_written(
    sample_export: Path, harbor_probe, tmp_path: Path
) -> None:
    job, _ = _one_trial_job(sample_export, harbor_probe, tmp_path)
    result = job / "t1" / "result.json"
    data = json.loads(result.read_text())
    for bad, why in (
        ({**data, "task_name": "other/thing"}, "is not an exported JobBench task"),
        ({**data, "trial_name": "../t2"}, "is not the folder's"),
        (
            {**data, "agent_info": {**data["agent_info"], "name": "../../x"}},
            "agent name '../../x' is not safe",
        ),
        (
            {**data, "agent_info": {**data["agent_info"], "name": "oracle\n"}},
            "agent name 'oracle\\\\n' is not safe",
        ),
    ):
        result.write_text(json.dumps(bad))
        with pytest.raises(HarborImportError, match=why):
            import_harbor_job(job, tmp_path / "run", dataset=SAMPLE)
        assert not (tmp_path / "run").exists()
    target = tmp_path / "result-elsewhere.json"
    target.write_text(json.dumps(data))
    result.unlink()
    os.symlink(target, result)
    with pytest.raises(HarborImportError, match="t1/result.json"):
        import_harbor_job(job, tmp_path / "run", dataset=SAMPLE)
    assert not (tmp_path / "run").exists()


def test_tasks_changed_since_the_export_are_refused(
    sample_export: Path, harbor_probe, tmp_path: Path
) -> None:
    import shutil

    job, d = _one_trial_job(sample_export, harbor_probe, tmp_path)
    copy = tmp_path / "dataset"
    shutil.copytree(SAMPLE, copy)
    (task,) = [t for t in load_dataset(copy).tasks if t.id.replace("/", "--") == d.name]
    card = task.root / "task_card.md"
    card.write_text(card.read_text() + "\nchanged\n")
    with pytest.raises(HarborImportError, match=f"differ from the ones exported.*{task.id}"):
        import_harbor_job(job, tmp_path / "run", dataset=copy)
    assert not (tmp_path / "run").exists()
    res = import_harbor_job(job, tmp_path / "run2", dataset=SAMPLE)
    assert len(res.trial_ids) == 1
