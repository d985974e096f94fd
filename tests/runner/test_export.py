"""`jobbench export official`: the public model_output / model_traj / eval_result layout."""

from __future__ import annotations

import json
import shutil

import pytest
from runner_helpers import OCC
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.records import CriterionVerdict, GradeRecord, RubricGrade
from jobbench.runner import (
    AgentSpec,
    RunConfig,
    RunConfigError,
    export_official,
    run_trials,
    trial_id,
)
from jobbench.runner._export import export_label

KEY = "openai_gpt-4.1-mini.official"


def grade_for(tid: str, task_id: str) -> GradeRecord:
    return GradeRecord(
        trial_id=tid,
        task_id=task_id,
        judge={"key": KEY, "model": "openai/gpt-4.1-mini", "mode": "official"},
        rubrics=[
            RubricGrade(
                index=0,
                id="0",
                weight=2,
                passed=True,
                criteria=[
                    CriterionVerdict(
                        rubric_index=0,
                        criterion_index=0,
                        verdict="pass",
                        source="check",
                        reasoning="Jan is 900.25",
                        evidence="Jan,900.25",
                    )
                ],
            ),
            RubricGrade(
                index=1,
                id="1",
                weight=1,
                passed=False,
                chain_break="criterion:0",
                criteria=[
                    CriterionVerdict(
                        rubric_index=1,
                        criterion_index=0,
                        verdict="fail",
                        source="llm",
                        reasoning="no",
                    )
                ],
            ),
        ],
        score=2 / 3,
        max_score=3,
        passed_weight=2,
        status="complete",
        created_at="2026-01-01T00:00:00+00:00",
    )


def test_export_official_layout(tmp_path, dataset):
    run_dir = tmp_path / "runs" / "r"
    specs = [AgentSpec("oracle"), AgentSpec("null")]
    run_trials(RunConfig(dataset=dataset, agents=specs, run_dir=run_dir, epochs=2))
    task1 = f"sample/{OCC}/task1"
    t = trial_id(task1, "oracle", None, 1)
    gp = run_dir / "grades" / KEY / f"{t}.json"
    gp.parent.mkdir(parents=True)
    gp.write_text(grade_for(t, task1).model_dump_json())
    copy = tmp_path / "copy" / "sample"
    shutil.copytree(dataset, copy)
    r = CliRunner().invoke(app, ["export", "official", str(run_dir), str(tmp_path / "copy")])
    assert r.exit_code == 0, r.output
    assert "model_output: 4  model_traj: 8  eval_result: 1" in r.output
    tdir = copy / OCC / "task1"
    # the null agent left nothing: no output folder (as the public runners), but its trajectory
    assert sorted(p.name for p in (tdir / "model_output").iterdir()) == ["oracle", "oracle-epoch2"]
    assert sorted(p.name for p in (tdir / "model_traj").iterdir()) == [
        "null",
        "null-epoch2",
        "oracle",
        "oracle-epoch2",
    ]
    src = run_dir / "trials" / t / "deliverables" / "net.csv"
    assert (tdir / "model_output" / "oracle" / "net.csv").read_bytes() == src.read_bytes()
    rec = json.loads((run_dir / "trials" / t / "trial.json").read_text())
    stamp = rec["started_at"][:19].replace("-", "").replace(":", "").replace("T", "_")
    traj = tdir / "model_traj" / "oracle" / f"{OCC}_task1_oracle_attempt1_{stamp}.jsonl"
    assert traj.read_text() == (run_dir / "trials" / t / "trajectory.jsonl").read_text()
    index = (tdir / "model_traj" / "oracle" / "attempt_index.tsv").read_text().splitlines()
    assert index[0].split("\t") == [
        "task_name",
        "model_id",
        "model_name",
        "attempt",
        "status",
        "exit_code",
        "timeout_seconds",
        "session_id",
        "started_at",
        "finished_at",
        "traj_file",
    ]
    assert index[1].split("\t") == [
        f"{OCC}_task1",
        "-",
        "oracle",
        "1",
        "success",
        "0",
        "3600",
        "",
        rec["started_at"][:19] + "Z",
        rec["finished_at"][:19] + "Z",
        str(traj),
    ]
    null_index = tdir / "model_traj" / "null" / "attempt_index.tsv"
    null = null_index.read_text().splitlines()[1].split("\t")
    assert null[4:6] == ["failed", "1"]  # finished without deliverables: a failed attempt
    judge = json.loads(
        (tdir / "eval_result" / "eval_oracle" / "gpt-4-1-mini_judge.json").read_text()
    )
    assert judge["evaluated_model"] == "oracle" and judge["judge_model"] == "openai/gpt-4.1-mini"
    assert (
        judge["total_score"],
        judge["max_score"],
        judge["pass_rate"],
        judge["passed_count"],
        judge["total_count"],
    ) == (2, 3, "50%", 1, 2)
    r0 = judge["rubrics"][0]
    assert r0["rubric"] == "Is the January net correct?" and r0["result"]["score"] == 2
    assert r0["result"]["criteria_results"][0] == {
        "index": 0,
        "criterion": "net.csv gives 900.25 for Jan",
        "passed": True,
        "reasoning": "Jan is 900.25",
        "evidence": "Jan,900.25",
    }
    assert judge["rubrics"][1]["result"]["overall_reasoning"] == "chain broken at criterion:0"
    # the dataset the run used is never written to
    with pytest.raises(RunConfigError, match="overlaps the dataset"):
        export_official(run_dir, dataset)
    assert not (dataset / OCC / "task1" / "model_output").exists()


def test_export_labels_and_cli_raw_events(tmp_path, dataset):
    assert export_label("codex", "gpt-5.4", 1) == "gpt-5-4-codex"
    assert export_label("opencode", "openai/gpt-5.4", 3) == "openai_gpt-5-4-opencode-epoch3"
    assert export_label("null", "-", 1) == "null"
    run_dir = tmp_path / "runs" / "r"
    run_trials(
        RunConfig(
            dataset=dataset, agents=[AgentSpec("oracle")], run_dir=run_dir, task_glob="*task2"
        )
    )
    t = trial_id(f"sample/{OCC}/task2", "oracle", None, 1)
    with open(run_dir / "trials" / t / "trajectory.jsonl", "a") as f:
        f.write(
            json.dumps({"type": "cli_event", "t": 1.0, "event": {"type": "result", "num_turns": 2}})
            + "\n"
        )
    copy = tmp_path / "copy"
    shutil.copytree(dataset, copy / "sample")
    s = export_official(run_dir, copy)
    traj_dir = copy / "sample" / OCC / "task2" / "model_traj" / "oracle"
    [out] = traj_dir.glob(f"{OCC}_task2_oracle_attempt1_*.jsonl")
    assert out.read_text() == '{"type": "result", "num_turns": 2}\n'
    assert (s.outputs, s.missing_tasks) == (1, [])
    empty = tmp_path / "empty"
    (empty / "sample" / "x" / "task9" / "task_folder").mkdir(parents=True)
    with pytest.raises(
        RunConfigError, match=f"none of the run's 1 task\\(s\\) \\(sample/{OCC}/task2\\)"
    ):
        export_official(run_dir, empty)  # nothing matches: an error, not a silent empty export
