"""Oracle/null gates on hand-built graded runs, their wiring with stand-in stages, and judge
self-consistency. Tests of the real runner/judge entry points skip until those stages land."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from jobbench.gates import (
    GateOptions,
    GateUnavailable,
    check_oracle_null,
    consistency_gate_results,
    flip_rates,
    render_markdown,
    run_gates,
    run_oracle_null,
    run_self_consistency,
)
from jobbench.tasks import load_dataset


@pytest.fixture
def two_tasks(tmp_path: Path, fx):
    root = tmp_path / "ds"
    t1 = fx.write_task(root, fx.clean_spec(), number=1)
    t2 = fx.write_task(root, fx.clean_spec(), number=2)
    return root, t1, t2


def test_oracle_and_null_pass(two_tasks, rb, tmp_path: Path) -> None:
    root, t1, t2 = two_tasks
    run = tmp_path / "run"
    rb.write_lock(run, root, [t1, t2])
    for t in (t1, t2):
        rb.add_trial(run, t, "oracle", "-", 1, {}, default="pass")
        rb.add_trial(run, t, "null", "-", 1, {})
    res = check_oracle_null(run)
    assert {tid: {g: r.status for g, r in v.items()} for tid, v in res.items()} == {
        t1.id: {"oracle": "pass", "null": "pass"},
        t2.id: {"oracle": "pass", "null": "pass"},
    }
    assert res[t1.id]["oracle"].metrics == {"scores": [1.0]}
    assert res[t1.id]["null"].metrics == {"scores": [0.0]}


def test_oracle_failure_and_vacuous_null(two_tasks, rb, tmp_path: Path) -> None:
    root, t1, t2 = two_tasks
    run = tmp_path / "run"
    rb.write_lock(run, root, [t1, t2])
    rb.add_trial(run, t1, "oracle", "-", 1, {(1, 1): "fail"}, default="pass")  # wrong gold number
    rb.add_trial(
        run, t1, "null", "-", 1, {(2, 0): "pass", (2, 1): "pass"}
    )  # rubric 2 passes vacuously
    rb.add_trial(run, t2, "oracle", "-", 1, {(0, 0): "unjudged"}, default="pass")
    # t2 has no null grade
    res = check_oracle_null(run)
    o1 = res[t1.id]["oracle"]
    assert o1.status == "fail" and [(f.rule, f.where) for f in o1.findings] == [
        ("O1", "rubrics[1].criterion[1]")
    ]
    assert "fail (check): hand-built" in o1.findings[0].message
    n1 = res[t1.id]["null"]
    assert [(f.rule, f.where, f.severity) for f in n1.findings] == [("N1", "rubrics[2]", "error")]
    assert "weight 2" in n1.findings[0].message
    # an unjudged criterion is no verdict on the task: the gate could not establish 100 %
    o2 = res[t2.id]["oracle"]
    assert (o2.status, o2.findings) == ("error", [])
    assert "1 oracle criterion verdict(s)" in o2.reason and "rubrics[0].criterion[0]" in o2.reason
    assert [f.rule for f in res[t2.id]["null"].findings] == ["N2"]


def test_oracle_judge_errors_are_an_error_not_a_failure(two_tasks, rb, tmp_path: Path) -> None:
    # a judge that gave no valid verdict says nothing about the gold answers: the gate is
    # `error` (exit 3), not O1 "fix the gold value"; a real fail next to it still fails
    root, t1, t2 = two_tasks
    run = tmp_path / "run"
    rb.write_lock(run, root, [t1, t2])
    rb.add_trial(run, t1, "oracle", "-", 1, {(0, 0): "judge_error", (1, 0): "judge_error"},
                 default="pass")  # fmt: skip
    rb.add_trial(run, t2, "oracle", "-", 1, {(0, 0): "judge_error", (1, 1): "fail"},
                 default="pass")  # fmt: skip
    for t in (t1, t2):
        rb.add_trial(run, t, "null", "-", 1, {})
    res = check_oracle_null(run)
    o1 = res[t1.id]["oracle"]
    assert (o1.status, o1.findings) == ("error", [])
    assert o1.reason.startswith("2 oracle criterion verdict(s)") and "judge_error" in o1.reason
    o2 = res[t2.id]["oracle"]
    assert o2.status == "fail"
    assert [(f.rule, f.where) for f in o2.findings] == [("O1", "rubrics[1].criterion[1]")]
    rep = run_gates(root, GateOptions(gates=["validate"], oracle_run=run))
    assert rep.exit_code == 1  # t2 fails
    only_t1 = run_gates(root, GateOptions(gates=["validate"], oracle_run=run, task_glob="*task1"))
    assert only_t1.exit_code == 3  # nothing failed, a gate could not run


def test_missing_oracle_grade_with_dataset(two_tasks, rb, tmp_path: Path) -> None:
    root, t1, t2 = two_tasks
    run = tmp_path / "run"
    rb.add_trial(run, t1, "oracle", "-", 1, {}, default="pass")
    rb.add_trial(run, t1, "null", "-", 1, {})
    res = check_oracle_null(run, dataset=load_dataset(root))
    assert res[t1.id]["oracle"].status == "pass"
    assert [f.rule for f in res[t2.id]["oracle"].findings] == ["O2"]
    assert res[t2.id]["oracle"].findings[0].file.endswith("task2/RUBRICS.json")


def test_oracle_gate_in_report(two_tasks, rb, tmp_path: Path) -> None:
    root, t1, t2 = two_tasks
    run = tmp_path / "run"
    for t in (t1, t2):
        rb.add_trial(run, t, "oracle", "-", 1, {}, default="pass")
        rb.add_trial(run, t, "null", "-", 1, {})
    rep = run_gates(root, GateOptions(gates=["oracle"], oracle_run=run))
    assert [(t.gates["oracle"].status, t.gates["null"].status) for t in rep.tasks] == [
        ("pass", "pass")
    ] * 2
    assert rep.exit_code == 0
    rep = run_gates(root, GateOptions(gates=["oracle"]))
    assert rep.tasks[0].gates["oracle"].status == "error" and rep.exit_code == 3
    assert "--oracle-run" in rep.notes[0]


def test_oracle_deliverables_feed_the_leak_check(tmp_path: Path, fx, rb) -> None:
    spec = fx.clean_spec()
    spec.solution = {"solve.py": "# writes summary.md\n"}  # no stored outputs
    spec.workspace["memo_from_ap.md"] = fx.AP_MEMO + fx.SOLUTION_SUMMARY  # the answer leaked
    t = fx.write_task(tmp_path / "ds", spec)
    run = tmp_path / "run"
    rb.add_trial(run, t, "oracle", "-", 1, {}, default="pass")
    rb.add_trial(run, t, "null", "-", 1, {})
    rep = run_gates(tmp_path / "ds", GateOptions(gates=["audit"]))
    assert rep.tasks[0].gates["audit"].status == "pass"  # nothing to compare with
    deliv = run / "trials" / t.id / "oracle@-" / "epoch-1" / "deliverables"
    deliv.mkdir(parents=True)
    (deliv / "summary.md").write_text(fx.SOLUTION_SUMMARY)
    rep = run_gates(tmp_path / "ds", GateOptions(gates=["audit"], oracle_run=run))
    g = rep.tasks[0].gates
    assert g["oracle"].status == "pass" and g["null"].status == "pass"
    (f,) = g["audit"].findings
    assert f.rule == "A6" and "oracle@-/epoch-1/deliverables/summary.md" in f.message


def test_run_oracle_null_with_stand_in_stages(two_tasks, rb, tmp_path: Path) -> None:
    """The wiring: run both agents, grade, check. The stand-ins write what the real stages
    would (trials, then grades); the oracle of task 2 misses one criterion."""
    root, t1, t2 = two_tasks
    calls: list[tuple] = []

    def run_agents(dataset, run_dir, agents, *, task_glob=None):
        calls.append(("run", dataset, agents, task_glob))
        rb.write_lock(run_dir, dataset, [t1, t2])

    def grade_run(run_dir, config):
        calls.append(("grade", config))
        for t in (t1, t2):
            rb.add_trial(
                run_dir, t, "oracle", "-", 1, {(0, 1): "fail"} if t is t2 else {}, default="pass"
            )
            rb.add_trial(run_dir, t, "null", "-", 1, {})
        return []

    res = run_oracle_null(
        root, tmp_path / "run", run_agents=run_agents, grade_run=grade_run, judge_config="cfg"
    )
    assert calls == [("run", root, ["oracle", "null"], None), ("grade", "cfg")]
    assert res[t1.id]["oracle"].status == "pass" and res[t2.id]["oracle"].status == "fail"


def test_runner_adapter_builds_a_run_config(monkeypatch, tmp_path: Path) -> None:
    """With the runner's run_trials/RunConfig/AgentSpec API, the adapter passes dataset,
    agents, run dir and task glob through."""
    import dataclasses

    import jobbench.runner
    from jobbench.gates._oracle import resolve_runner

    @dataclasses.dataclass
    class Spec:
        agent: str
        model: str | None = None

    @dataclasses.dataclass
    class Config:
        dataset: Path
        agents: list
        run_dir: Path
        task_glob: str | None = None

    seen = []
    monkeypatch.delattr(jobbench.runner, "run_agents", raising=False)
    monkeypatch.setattr(jobbench.runner, "AgentSpec", Spec, raising=False)
    monkeypatch.setattr(jobbench.runner, "RunConfig", Config, raising=False)
    monkeypatch.setattr(jobbench.runner, "run_trials", seen.append, raising=False)
    resolve_runner()(tmp_path / "ds", tmp_path / "run", ["oracle", "null"], task_glob="*/x/*")
    assert seen == [
        Config(tmp_path / "ds", [Spec("oracle"), Spec("null")], tmp_path / "run", "*/x/*")
    ]


# --- self-consistency ---------------------------------------------------------------------


def test_flip_rates_by_hand(two_tasks, rb) -> None:
    """3 gradings of 2 trials of task 1. Criterion 0.0 flips in trial a only (1/2);
    criterion 1.1 flips in both (2/2); 2.0 in trial b is judge_error twice (only one decided
    verdict: not counted for b). All other criteria agree. 12 criteria-trials counted minus
    one = 11; flips 3 → overall 3/11."""
    _, t1, _ = two_tasks
    a, b = f"{t1.id}/x@m/epoch-1", f"{t1.id}/x@m/epoch-2"
    reps = [
        [
            rb.grade(t1, a, {(0, 0): "pass", (1, 1): "pass"}),
            rb.grade(t1, b, {(1, 1): "fail", (2, 0): "pass"}),
        ],
        [
            rb.grade(t1, a, {(0, 0): "fail", (1, 1): "fail"}),
            rb.grade(t1, b, {(1, 1): "pass", (2, 0): "judge_error"}),
        ],
        [
            rb.grade(t1, a, {(0, 0): "pass", (1, 1): "pass"}),
            rb.grade(t1, b, {(1, 1): "pass", (2, 0): "judge_error"}),
        ],
    ]
    c = flip_rates(reps)
    got = {(x.rubric, x.criterion): (x.trials, x.flipped) for x in c.criteria}
    assert got == {
        (0, 0): (2, 1),
        (0, 1): (2, 0),
        (1, 0): (2, 0),
        (1, 1): (2, 2),
        (2, 0): (1, 0),
        (2, 1): (2, 0),
    }
    assert c.repeats == 3 and c.flip_rate == pytest.approx(3 / 11)
    res = consistency_gate_results(c)[t1.id]
    assert res.status == "warn"
    assert [(f.rule, f.where) for f in res.findings] == [
        ("C1", "rubrics[0].criterion[0]"),
        ("C1", "rubrics[1].criterion[1]"),
    ]


class _Cfg(BaseModel):
    model: str = "judge"
    cache: bool = True


def test_run_self_consistency_with_stand_in_judge(two_tasks, rb, tmp_path: Path) -> None:
    root, t1, _ = two_tasks
    run = tmp_path / "run"
    rb.write_lock(run, root, [t1])
    rb.add_trial(run, t1, "x", "m", 1, {})
    seen: list[tuple[Path, bool]] = []

    def grade_run(run_dir, config):
        seen.append((run_dir, config.cache))
        assert (run_dir / "trials" / t1.id / "x@m" / "epoch-1" / "trial.json").is_file()
        flip = len(seen) == 2
        return [rb.grade(t1, f"{t1.id}/x@m/epoch-1", {(0, 0): "pass" if flip else "fail"})]

    c = run_self_consistency(run, _Cfg(), 3, tmp_path / "work", grade_run=grade_run)
    assert [p.name for p, _ in seen] == ["repeat-1", "repeat-2", "repeat-3"]
    assert all(cache is False for _, cache in seen)
    assert c.flip_rate == pytest.approx(1 / 6)
    with pytest.raises(ValueError, match="k >= 2"):
        run_self_consistency(run, _Cfg(), 1, tmp_path / "w", grade_run=grade_run)

    class NoCache(BaseModel):
        model: str = "judge"

    with pytest.raises(GateUnavailable, match="cannot bypass the judge cache"):
        run_self_consistency(run, NoCache(), 2, tmp_path / "w", grade_run=grade_run)


def test_self_consistency_with_the_real_judge(two_tasks, rb, tmp_path: Path, fx) -> None:
    """Checks-only grading is deterministic: two gradings of the reference deliverables
    decide all 6 criteria of task 1 the same way (flip rate 0)."""
    import hashlib
    import shutil

    import jobbench.judge
    from jobbench.records import DeliverableFile

    root, t1, _ = two_tasks
    run = tmp_path / "run"
    rb.write_lock(run, root, [t1])
    tdir = run / "trials" / t1.id / "x@m" / "epoch-1"
    shutil.copytree(t1.root / "solution" / "expected", tdir / "deliverables")
    rec = rb.add_trial(run, t1, "x", "m", 1, {})  # writes trial.json (and a grade we drop)
    shutil.rmtree(run / "grades")
    from jobbench.records import TrialRecord

    trial = TrialRecord.model_validate_json((tdir / "trial.json").read_bytes())
    trial.deliverables = [
        DeliverableFile(
            path=p.name, size=p.stat().st_size, sha256=hashlib.sha256(p.read_bytes()).hexdigest()
        )
        for p in sorted((tdir / "deliverables").iterdir())
    ]
    (tdir / "trial.json").write_text(trial.model_dump_json())
    assert rec.task_id == t1.id
    c = run_self_consistency(
        run, jobbench.judge.JudgeConfig(cache_path=tmp_path / "cache.db"), 2, tmp_path / "work"
    )
    assert c.repeats == 2 and c.flip_rate == 0.0
    assert sorted((x.rubric, x.criterion) for x in c.criteria) == [
        (r, j) for r in range(3) for j in range(2)
    ]


def test_consistency_gate_in_report(two_tasks, rb, tmp_path: Path) -> None:
    root, t1, t2 = two_tasks
    run = tmp_path / "run"
    rb.write_lock(run, root, [t1])
    rb.add_trial(run, t1, "x", "m", 1, {})
    n = []

    def grade_run(run_dir, config):
        n.append(run_dir)
        flip = "pass" if len(n) == 1 else "fail"
        return [rb.grade(t1, f"{t1.id}/x@m/epoch-1", {(2, 1): flip})]

    rep = run_gates(
        root,
        GateOptions(gates=[], consistency_run=run, consistency_repeats=2, judge_config=_Cfg()),
        grade_run=grade_run,
    )
    g1, g2 = rep.tasks[0].gates["consistency"], rep.tasks[1].gates["consistency"]
    assert g1.status == "warn" and [(f.rule, f.where) for f in g1.findings] == [
        ("C1", "rubrics[2].criterion[1]")
    ]
    assert g1.metrics == {"flip_rate": pytest.approx(1 / 6)}
    assert g2.status == "skip" and rep.consistency.flip_rate == pytest.approx(1 / 6)
    assert "Verdict flip rate 16.67% over 2 gradings" in render_markdown(rep)
    assert len(n) == 2 and rep.exit_code == 0


def test_gate_report_names_the_judge_key_it_picked(two_tasks, rb, tmp_path: Path) -> None:
    # with several judge keys in the run and no --judge-key, the report says which one the
    # oracle/null gates read and how to pick another (as `jobbench report` warns)
    root, t1, t2 = two_tasks
    run = tmp_path / "run"
    rb.write_lock(run, root, [t1, t2])
    for t in (t1, t2):
        rb.add_trial(run, t, "oracle", "-", 1, {}, default="pass")
        rb.add_trial(run, t, "null", "-", 1, {})
    rep = run_gates(root, GateOptions(gates=["validate"], oracle_run=run))
    assert not [n for n in rep.notes if "judge key" in n]  # one key: nothing to say
    keys = sorted(p.name for p in (run / "grades").iterdir() if p.is_dir())
    assert len(keys) == 1
    import shutil

    shutil.copytree(run / "grades" / keys[0], run / "grades" / "other")
    rep = run_gates(root, GateOptions(gates=["validate"], oracle_run=run))
    (note,) = [n for n in rep.notes if "judge key" in n]
    assert note.startswith("oracle/null gates: judge key ") and "--judge-key KEY" in note
    assert "other" in note and keys[0] in note
    asked = run_gates(root, GateOptions(gates=["validate"], oracle_run=run, judge_key="other"))
    assert not [n for n in asked.notes if "judge key" in n]
