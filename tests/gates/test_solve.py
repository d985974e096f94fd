"""The solve trial on a hand-built example with figures worked out by hand.

Task 1 (6 criteria) and task 2 (10 criteria: rubric 2 has 6). Counted trials:

task 1  run A builtin@model-x epoch-1: pass 0.0 0.1 1.0
        run A builtin@model-x epoch-2: pass 0.0 2.0, 1.1 judge_error
        run B claude-code@opus epoch-1: pass 1.0 2.1
        (run A oracle@- epoch-1 passes everything: excluded;
         run B codex@gpt epoch-1 passes 1.1 but was graded on an older task: skipped)
  union = {0.0, 0.1, 1.0, 2.0, 2.1} = 5/6; 1.1 never passed (decided: failed in epoch-1)
  pass counts 0.0:2 0.1:1 1.0:2 1.1:0 2.0:1 2.1:1
task 2  run B claude-code@opus epoch-1: pass all but 2.5 (judge_error)
        run A builtin@model-x epoch-1: 2.5 unjudged, rest fail
  union = 9/10 = 90 % (not flagged: the rule is "< 90 %"); 2.5 undecided
dataset: micro 14/16 = 87.5 %; macro (5/6 + 9/10) / 2 = 26/30 = 86.67 %.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jobbench.gates import GateOptions, render_markdown, run_gates, solve_trial
from jobbench.tasks import load_dataset


@pytest.fixture
def example(tmp_path: Path, fx, rb):
    ds_root = tmp_path / "ds"
    t1 = fx.write_task(ds_root, fx.clean_spec(), number=1)
    spec2 = fx.clean_spec()
    r2 = spec2.rubrics["rubrics"][2]
    for name in ("Birch Logistics", "Cobalt Office", "INV-2001", "INV-3001"):
        r2["criterion"].append(f"The memo summary.md mentions {name}.")
        r2["checks"].append({"kind": "regex", "pattern": name, "file": "summary.md"})
    t2 = fx.write_task(ds_root, spec2, number=2)
    run_a, run_b = tmp_path / "runs" / "A", tmp_path / "runs" / "B"
    for run in (run_a, run_b):
        rb.write_lock(run, ds_root, [t1, t2])
    rb.add_trial(
        run_a, t1, "builtin", "model-x", 1, {(0, 0): "pass", (0, 1): "pass", (1, 0): "pass"}
    )
    rb.add_trial(
        run_a, t1, "builtin", "model-x", 2, {(0, 0): "pass", (2, 0): "pass", (1, 1): "judge_error"}
    )
    rb.add_trial(run_a, t1, "oracle", "-", 1, {}, default="pass")
    rb.add_trial(run_b, t1, "claude-code", "opus", 1, {(1, 0): "pass", (2, 1): "pass"})
    rb.add_trial(run_b, t1, "codex", "gpt", 1, {(1, 1): "pass"}, digest="0" * 64)
    rb.add_trial(run_b, t2, "claude-code", "opus", 1, {(2, 5): "judge_error"}, default="pass")
    rb.add_trial(run_a, t2, "builtin", "model-x", 1, {(2, 5): "unjudged"})
    return ds_root, [run_a, run_b], (t1, t2)


def test_solve_trial_exact_figures(example) -> None:
    ds_root, runs, (t1, t2) = example
    st = solve_trial(runs)
    assert st.judge_key == "checks"
    assert [(t.task_id, t.reached, t.criteria, t.trials) for t in st.tasks] == [
        (t1.id, 5, 6, 3),
        (t2.id, 9, 10, 2),
    ]
    a, b = st.tasks
    assert a.reachability == pytest.approx(5 / 6) and a.flagged
    assert b.reachability == pytest.approx(0.9) and not b.flagged
    assert a.pass_counts == {"0.0": 2, "0.1": 1, "1.0": 2, "1.1": 0, "2.0": 1, "2.1": 1}
    assert [(c.rubric, c.criterion) for c in a.never_passed] == [(1, 1)]
    assert a.never_passed[0].text == t1.rubrics[1].criteria[1].text
    assert a.undecided == [] and b.never_passed == []
    assert [(c.rubric, c.criterion) for c in b.undecided] == [(2, 5)]
    assert a.agents == ["builtin@model-x", "claude-code@opus"]
    assert st.reachability == pytest.approx(14 / 16)
    assert st.mean_task_reachability == pytest.approx(26 / 30)
    assert st.flagged == [t1.id]
    assert sorted(s.split(":")[0] for s in st.skipped) == [
        f"{t1.id}/codex@gpt/epoch-1",
        f"{t1.id}/oracle@-/epoch-1",
    ]


def test_including_the_oracle_reaches_everything(example) -> None:
    _, runs, (t1, _) = example
    st = solve_trial(runs, exclude_agents=())
    assert st.tasks[0].reached == 6 and st.tasks[0].pass_counts["1.1"] == 1


def test_stale_trials_count_without_digest_check(example) -> None:
    _, runs, _ = example
    st = solve_trial(runs, check_digests=False)
    assert st.tasks[0].reached == 6 and st.tasks[0].trials == 4


def test_one_run_alone(example) -> None:
    _, runs, (t1, t2) = example
    st = solve_trial(runs[:1])
    # run A: task 1 epochs 1+2 reach {0.0, 0.1, 1.0, 2.0}; task 2 reaches nothing
    assert [(t.reached, t.criteria) for t in st.tasks] == [(4, 6), (0, 10)]
    assert st.reachability == pytest.approx(4 / 16)


def test_rubric_shape_mismatch_is_skipped(example, fx) -> None:
    ds_root, runs, (t1, t2) = example
    spec = fx.clean_spec()
    spec.rubrics["rubrics"][0]["criterion"].pop()
    spec.rubrics["rubrics"][0]["checks"].pop()
    fx.write_task(ds_root, spec, number=1)  # task 1 now has 5 criteria
    st = solve_trial(runs, dataset=load_dataset(ds_root), check_digests=False)
    assert [t.task_id for t in st.tasks] == [t2.id] and st.unattempted == [t1.id]
    assert any("graded [2, 2, 2] criteria per rubric, task has [1, 2, 2]" in s for s in st.skipped)


def test_several_judge_keys_use_the_last_graded_one_and_say_so(example, rb) -> None:
    """The report's rule (jobbench.rundir.choose_judge_key): with ``checks`` and a second
    judge in run A, the key graded last is read and the gate report names it and the other."""
    _, runs, (t1, _) = example
    rb.add_trial(runs[0], t1, "builtin", "model-x", 1, {}, judge_key="gpt-4o-mini.rubric.auto")
    grades = runs[0] / "grades"
    os.utime(grades / "checks", (1_000, 1_000))
    os.utime(grades / "gpt-4o-mini.rubric.auto", (2_000, 2_000))
    st = solve_trial(runs[:1])
    assert st.judge_key == "gpt-4o-mini.rubric.auto"
    assert st.tasks[0].reached == 0  # that judge's only grade passes nothing
    assert st.judge_key_note == (
        "judge key gpt-4o-mini.rubric.auto chosen (graded last); also graded: checks; "
        "choose with --judge-key KEY"
    )
    os.utime(grades / "checks", (3_000, 3_000))
    assert solve_trial(runs[:1]).judge_key == "checks"
    asked = solve_trial(runs[:1], judge_key="gpt-4o-mini.rubric.auto")
    assert asked.judge_key == "gpt-4o-mini.rubric.auto" and asked.judge_key_note is None
    with pytest.raises(ValueError, match="judge key 'nope' has no grades"):
        solve_trial(runs, judge_key="nope")
    # run B has only checks: the key graded in every run wins whatever the times
    os.utime(grades / "checks", (1_000, 1_000))
    assert solve_trial(runs).judge_key == "checks"


def test_gate_report_shows_the_judge_key_note(example, rb) -> None:
    _, runs, (t1, _) = example
    rb.add_trial(runs[0], t1, "builtin", "model-x", 1, {}, judge_key="m.rubric.auto")
    os.utime(runs[0] / "grades" / "checks", (1_000, 1_000))
    os.utime(runs[0] / "grades" / "m.rubric.auto", (2_000, 2_000))
    st = solve_trial(runs[:1])
    from jobbench.gates import GateReport

    md = render_markdown(GateReport(dataset="ds", gates=["solve"], solve=st))
    assert "Note: judge key m.rubric.auto chosen (graded last); also graded: checks" in md


def test_unreadable_grade_names_the_file(example) -> None:
    _, runs, (t1, _) = example
    bad = runs[0] / "grades" / "checks" / t1.id / "builtin@model-x" / "epoch-1.json"
    bad.write_text('{"trial_id": "x"}')
    with pytest.raises(ValueError, match=r"epoch-1.json: field task_id: Field required"):
        solve_trial(runs)


def test_solve_gate_in_report(example) -> None:
    ds_root, runs, (t1, t2) = example
    rep = run_gates(ds_root, GateOptions(gates=[], runs=runs))
    g1, g2 = rep.tasks[0].gates["solve"], rep.tasks[1].gates["solve"]
    assert g1.status == "fail" and [f.rule for f in g1.findings] == ["S1", "S2"]
    assert "5/6 criteria reached (83.3%)" in g1.findings[0].message
    assert g1.findings[1].where == "rubrics[1].criterion[1]"
    assert g2.status == "pass" and g2.metrics["undecided"] == 1
    assert rep.exit_code == 1
    md = render_markdown(rep)
    assert "Dataset reachability 87.5%" in md and "mean of tasks 86.7%" in md


def test_oracle_and_null_runs_are_explained_not_scored_zero(example, rb, tmp_path) -> None:
    # the same oracle+null run given as --oracle-run and --runs: neither agent is an attempt
    # at solving, so no task gets a 0 % reachability; each is skipped with the reason and
    # what to pass instead
    ds_root, _, (t1, t2) = example
    run = tmp_path / "runs" / "O"
    rb.write_lock(run, ds_root, [t1, t2])
    for t in (t1, t2):
        rb.add_trial(run, t, "oracle", "-", 1, {}, default="pass")
        rb.add_trial(run, t, "null", "-", 1, {}, default="fail")
    st = solve_trial([run])
    assert st.tasks == [] and st.reachability is None
    assert st.unattempted == [t1.id, t2.id]
    assert st.excluded == {t1.id: ["null@-", "oracle@-"], t2.id: ["null@-", "oracle@-"]}
    rep = run_gates(ds_root, GateOptions(gates=[], runs=[run]))
    g = rep.tasks[0].gates["solve"]
    assert g.status == "skip"
    assert g.reason.startswith(
        "only trials of null@-, oracle@- were given, and they do not count: "
        "the oracle passes by construction"
    )
    assert g.reason.endswith(
        "pass graded runs of the agents under study with --runs "
        "(--include-oracle counts the oracle)"
    )
    assert rep.exit_code == 0
    assert any(
        n.startswith("solve trial: every graded trial given is the oracle's or the null")
        for n in rep.notes
    )
    # --include-oracle counts what the user passed (the null agent never counts)
    st = solve_trial([run], exclude_agents=("null",))
    assert [(t.reached, t.criteria, t.trials) for t in st.tasks] == [(6, 6, 1), (10, 10, 1)]
