"""Aggregation of the hand-computed run fixtures (see conftest for every expected figure)."""

from __future__ import annotations

import numpy as np
import pytest

from jobbench.records import TrialRecord, TrialStatus
from jobbench.report import build_report
from jobbench.scoring import aggregate, compare, task_results, trial_result

T1, T2, T3, T4 = (
    "main/biostatisticians/task1",
    "main/civil_engineers/task1",
    "main/lawyers/task1",
    "main/management_analysts/task1",
)


def _cfg(data, label):
    return data.config(label)


def test_micro_and_macro_by_hand(run_a, run_b):
    data = build_report([run_a, run_b], n_resamples=2000)
    alpha, beta, gamma = _cfg(data, "alpha@m1"), _cfg(data, "beta@m2"), _cfg(data, "gamma")
    assert alpha.overall.micro.estimate == pytest.approx(65 / 220)
    assert alpha.overall.macro.estimate == pytest.approx(0.34375)
    assert beta.overall.micro.estimate == pytest.approx(135 / 220)
    assert beta.overall.macro.estimate == pytest.approx(0.65625)
    assert gamma.overall.micro.estimate == pytest.approx(40 / 220)
    assert gamma.overall.macro.estimate == pytest.approx(0.25)
    assert [c.label for c in data.configs] == ["beta@m2", "alpha@m1", "gamma"]
    assert alpha.overall.points == pytest.approx(65) and alpha.overall.max_points == pytest.approx(
        220
    )


def test_missing_task_counts_zero_in_micro_and_is_listed(run_a):
    data = build_report([run_a], n_resamples=200)
    alpha = _cfg(data, "alpha@m1")
    t4 = alpha.task(T4)
    assert t4.missing and t4.missing_reason == "no trial" and t4.trials == 0
    assert t4.counted_score == 0.0 and t4.max_points == 20.0
    assert alpha.overall.missing_tasks == [T4]
    assert alpha.overall.tasks_missing == 1 and alpha.overall.tasks_scored == 3
    # Micro denominator includes T4's 20 points; dropping it would give 65/200 instead.
    assert alpha.overall.micro.estimate == pytest.approx(65 / 220)
    assert alpha.overall.micro.estimate != pytest.approx(65 / 200)
    # The macro over scored tasks only is kept for reference: (0.875 + 0.5 + 0) / 3.
    assert alpha.overall.macro_scored_only == pytest.approx(1.375 / 3)


def test_incomplete_grades_are_never_zero(run_a, run_b):
    data = build_report([run_a, run_b], n_resamples=200)
    alpha, beta, gamma = _cfg(data, "alpha@m1"), _cfg(data, "beta@m2"), _cfg(data, "gamma")
    t3 = alpha.task(T3)  # epoch 1 scored 0, epoch 2 judge_error -> mean over epoch 1 only
    assert t3.epoch_scores == {1: 0.0, 2: None}
    assert (
        t3.scored_trials == 1
        and t3.states == {"complete": 1, "judge_error": 1}
        and t3.judge_errors == 1
    )
    b3 = beta.task(T3)  # 0.5 and infra_error -> 0.5, not 0.25
    assert b3.score == pytest.approx(0.5) and b3.states == {"complete": 1, "infra_error": 1}
    assert gamma.task(T2).score == 0.0 and gamma.task(T2).states == {"no_deliverable": 1}
    assert gamma.task(T3).missing and gamma.task(T3).missing_reason == "1 ungraded"
    assert gamma.task(T4).missing and gamma.task(T4).missing_reason == "1 unjudged"
    assert gamma.overall.trials_by_state == {
        "complete": 1,
        "no_deliverable": 1,
        "ungraded": 1,
        "unjudged": 1,
    }
    assert any(
        "gamma: 2 trial(s) without a score (1 ungraded, 1 unjudged)" in w for w in data.warnings
    )


def test_task_level_rates_and_epochs(run_a):
    data = build_report([run_a], n_resamples=200)
    alpha, beta = _cfg(data, "alpha@m1"), _cfg(data, "beta@m2")
    t1 = alpha.task(T1)
    assert t1.score == pytest.approx(0.875) and t1.epoch_scores == {1: 0.75, 2: 1.0}
    # rubric pass rate: epoch 1 2/3, epoch 2 3/3 -> 5/6; criterion pass: 5/6 and 6/6 -> 11/12
    assert t1.rubric_pass_rate == pytest.approx(5 / 6)
    assert t1.criterion_pass_rate == pytest.approx(11 / 12)
    b1 = beta.task(T1)  # criteria passed: 4/6 then 2/6
    assert b1.criterion_pass_rate == pytest.approx(0.5)
    assert b1.rubric_pass_rate == pytest.approx(1 / 6)
    # pass^k, success = full score: alpha T1 (n=2,c=1), T2 (2,0), T3 (1,0)
    assert alpha.overall.pass_hat_k == {1: pytest.approx(0.5 / 3), 2: 0.0}
    assert alpha.overall.pass_hat_k_tasks == {1: 3, 2: 2}
    # beta T1 (2,0), T2 (2,2), T3 (1,0), T4 (2,2)
    assert beta.overall.pass_hat_k == {1: pytest.approx(0.5), 2: pytest.approx(2 / 3)}


def test_groups_categories_and_occupations(run_a):
    data = build_report([run_a], n_resamples=500)
    beta = _cfg(data, "beta@m2")
    cats = beta.groups["paper_category"]
    assert list(cats) == [
        "Bus. Fin.",
        "Comp. Math.",
        "Arch. Eng.",
    ]  # the paper's column order; Legal has none
    assert cats["Comp. Math."].micro.estimate == pytest.approx(0.125)
    assert beta.groups["soc_major_group"]["23-0000"].micro.estimate == pytest.approx(0.5)
    assert set(beta.groups["occupation"]) == {
        "biostatisticians",
        "civil_engineers",
        "lawyers",
        "management_analysts",
    }
    assert beta.groups["occupation"]["lawyers"].micro.low is None  # no interval for occupations
    alpha = _cfg(data, "alpha@m1")
    assert alpha.groups["paper_category"]["Bus. Fin."].missing_tasks == [T4]
    assert alpha.groups["paper_category"]["Bus. Fin."].micro.estimate == 0.0


def test_chain_breaks(run_a):
    data = build_report([run_a], n_resamples=200)
    # alpha: T1e1 R3 [P,F] -> 2; T2e1 R2 [F,P] -> 1; T2e2 R2 [F,F] -> 1; T3e1 R1 [F,F] -> 1, R2 [P,F] -> 2
    assert _cfg(data, "alpha@m1").chain_breaks == {"criterion 1": 3, "criterion 2": 2}
    # beta: T1e1 R2 [P,F] -> 2, R3 [F,P] -> 1; T1e2 R1 -> 1, R2 -> 1, R3 [P,F] -> 2; T3e1 R2 [F,P] -> 1
    assert _cfg(data, "beta@m2").chain_breaks == {"criterion 1": 4, "criterion 2": 2}


def test_cost_and_effort_ratios(run_a):
    data = build_report([run_a], n_resamples=200)
    alpha, beta = _cfg(data, "alpha@m1"), _cfg(data, "beta@m2")
    assert alpha.cost.agent_cost_usd == pytest.approx(0.6) and alpha.cost.trials == 6
    assert beta.cost.agent_cost_usd == pytest.approx(2.4)
    assert beta.cost.judge_cost_usd == pytest.approx(0.07) and beta.cost.judge_cost_trials == 7
    assert alpha.cost.agent_input_tokens == 6000 and alpha.cost.judge_input_tokens == 6000
    assert beta.cost.wall_seconds_mean == pytest.approx(
        240
    ) and beta.cost.turns_mean == pytest.approx(24)
    cmp = data.comparisons[0]
    assert (cmp.a, cmp.b) == ("beta@m2", "alpha@m1")
    assert cmp.ratios["wall_seconds"] == pytest.approx(2.4)
    assert cmp.ratios["turns"] == pytest.approx(2.4)
    assert cmp.ratios["trajectory_events"] == pytest.approx(2.4)
    assert cmp.ratios["agent_cost_usd"] == pytest.approx(3.0)


def test_paired_comparison_of_runs(run_a):
    data = build_report([run_a], n_resamples=3000, seed=4)
    beta, alpha = _cfg(data, "beta@m2"), _cfg(data, "alpha@m1")
    cmp = compare(beta.tasks, alpha.tasks, n_resamples=3000, seed=4)
    assert cmp.micro.difference == pytest.approx(70 / 220)
    assert cmp.macro.difference == pytest.approx(0.3125)
    assert cmp.missing_in_b == [T4] and cmp.missing_in_a == []
    rng = np.random.default_rng(4)
    idx = rng.integers(0, 4, size=(3000, 4))
    d = np.array([0.125, 1.0, 0.5, 1.0]) - np.array([0.875, 0.5, 0.0, 0.0])
    reps = d[idx].mean(axis=1)
    assert (cmp.macro.low, cmp.macro.high) == tuple(
        pytest.approx(x) for x in np.quantile(reps, [0.025, 0.975])
    )
    # scored_only drops T4 (missing for alpha): (-0.75 + 0.5 + 0.5) / 3
    only = compare(beta.tasks, alpha.tasks, scored_only=True, n_resamples=200)
    assert only.tasks == [T1, T2, T3] and only.macro.difference == pytest.approx(0.25 / 3)
    # The report's own comparison uses the same figures.
    assert data.comparisons[0].micro.difference == pytest.approx(70 / 220)


def test_trial_result_rejects_foreign_grade_and_infra_is_not_scored(run_a):
    rec = TrialRecord(
        trial_id="main/lawyers/task1/x@-/epoch-1",
        task_id="main/lawyers/task1",
        task_digest="d",
        agent="x",
        model="-",
        epoch=1,
        status=TrialStatus.infra_error,
    )
    row = trial_result(rec, None, run="r")
    assert row.state == "infra_error" and not row.scored and row.score is None
    assert row.config == "x"
    rs = task_results([row], [], config="x")
    assert rs[0].missing and rs[0].missing_reason == "1 infra_error"
    agg = aggregate(rs, ks=(1,), with_ci=False)
    assert agg.macro.estimate == 0.0 and agg.tasks_unknown_max == ["main/lawyers/task1"]
