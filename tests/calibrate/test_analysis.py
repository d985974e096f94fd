"""calibrate() on the hand-computed three-judge run of conftest.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jobbench.calibrate import (
    CalibrationReport,
    calibrate,
    plot_cost_vs_agreement,
    read_run_grades,
    render_markdown,
    tasks_of_runs,
    write_calibration,
)
from jobbench.calibrate._write import plot_axes
from jobbench.records import JudgeUnit

from .conftest import BIG, CHEAP, CHECKS, EXPECTED, T1, T2, TR1, TR2


@pytest.fixture
def report(run: Path) -> CalibrationReport:
    judges = read_run_grades([run])
    assert list(judges) == [CHECKS, BIG, CHEAP]  # sorted keys
    return calibrate(judges, reference=BIG, expected=EXPECTED, tasks=tasks_of_runs([run]))


def _pair(report: CalibrationReport, a: str, b: str):
    (p,) = [p for p in report.pairs if (p.a, p.b) == (a, b)]
    return p


def test_pairs_put_the_reference_second(report):
    assert [(p.a, p.b) for p in report.pairs] == [(CHECKS, BIG), (CHEAP, BIG), (CHECKS, CHEAP)]


def test_cheap_vs_big(report):
    p = _pair(report, CHEAP, BIG)
    # cheap P F F | P F vs big P P F | P F: 4 of 5 agree
    assert (p.criteria_both, p.agree, p.flips) == (5, 4, 1)
    assert p.percent_agreement == pytest.approx(0.8)
    assert p.table == {"pass/pass": 2, "pass/fail": 0, "fail/pass": 1, "fail/fail": 2}
    # p_e = (2/5)(3/5) + (3/5)(2/5) = 0.48; kappa = (0.8 - 0.48)/(1 - 0.48) = 8/13
    assert p.kappa == pytest.approx(8 / 13)
    # alpha: n = 10, n_pass = 5, n_fail = 5, one disagreement -> 1 - 9*2/(2*5*5) = 0.64
    assert p.alpha == pytest.approx(0.64)
    s = p.score
    # T1: 0/3 vs 2/3, T2: 0 vs 0 -> mean |diff| 1/3, max 2/3; micro 0/6 vs 2/6
    assert s.trials == 2
    assert s.mean_abs_diff == pytest.approx(1 / 3)
    assert s.max_abs_diff == pytest.approx(2 / 3)
    assert (s.micro_a, s.micro_b) == pytest.approx((0.0, 1 / 3))
    assert s.micro_abs_diff == pytest.approx(1 / 3)
    assert s.micro_rel_diff == pytest.approx(1.0)
    assert [(t.task_id, t.trials, t.score_a, t.score_b) for t in s.per_task] == [
        (T1, 1, 0.0, pytest.approx(2 / 3)),
        (T2, 1, 0.0, 0.0),
    ]


def test_checks_vs_big_counts_only_criteria_both_decided(report):
    p = _pair(report, CHECKS, BIG)
    # decided by both: T1 0.0 (pass/pass), T2 0.0 (fail/pass); checks left 3 unjudged
    assert (p.criteria_both, p.agree, p.undecided_a, p.undecided_b) == (2, 1, 3, 0)
    assert p.percent_agreement == pytest.approx(0.5)
    # checks [P, F], big [P, P]: p_e = 0.5*1 + 0.5*0 = 0.5, p_o = 0.5 -> kappa 0
    assert p.kappa == pytest.approx(0.0)
    # alpha: n = 4, n_pass = 3, n_fail = 1: 1 - 3*2/(2*3*1) = 0
    assert p.alpha == pytest.approx(0.0)
    assert p.score.trials == 0 and p.score.mean_abs_diff is None  # checks has no complete score


def test_overall_alpha_three_judges(report):
    o = report.overall
    # units (big, cheap, checks): PPP, PF-, FF-, PPF, FF-
    # o_pp = 3 + 1, o_ff = 2 + 2, o_pf = o_fp = 1 + 1 -> n_p = n_f = 6, n = 12
    # alpha = 1 - 11*4 / (2*6*6) = 28/72
    assert o.units == 5
    assert o.alpha == pytest.approx(28 / 72)
    assert o.all_agree == pytest.approx(3 / 5)


def test_flips_carry_every_reasoning(report):
    assert [(f.trial_id, f.rubric, f.criterion) for f in report.flips] == [(TR1, 0, 1), (TR2, 0, 0)]
    f1 = report.flips[0]
    assert f1.criterion_text == "criterion 0.1 of main/clerks/task1"
    assert f1.expected is True
    assert (
        f1.verdicts[BIG].verdict == "pass"
        and f1.verdicts[BIG].reasoning == f"{BIG} says pass on 0.1"
    )
    assert (
        f1.verdicts[CHEAP].verdict == "fail"
        and f1.verdicts[CHEAP].reasoning == f"{CHEAP} says fail on 0.1"
    )
    assert f1.verdicts[CHECKS].verdict == "unjudged"
    assert report.flips[1].verdicts[CHECKS].verdict == "fail"


def test_checks_vs_llm_from_second_opinions(report):
    (c,) = report.checks_vs_llm
    assert c.judge == BIG
    assert (c.n, c.agree) == (2, 1)
    assert c.table == {"pass/pass": 1, "pass/fail": 0, "fail/pass": 1, "fail/fail": 0}
    assert c.kappa == pytest.approx(0.0)
    (d,) = c.disagreements
    assert (d.trial_id, d.rubric, d.criterion, d.check_verdict, d.llm_verdict) == (
        TR2,
        0,
        0,
        "fail",
        "pass",
    )
    assert d.check_detail == "check detail 0.0"


def test_judges_and_cost_per_pass(report):
    j = {s.key: s for s in report.judges}
    assert (j[BIG].criteria, j[BIG].decided, j[BIG].pass_rate) == (5, 5, pytest.approx(3 / 5))
    assert (j[BIG].calls_per_pass, j[BIG].tokens_per_pass) == (3, 1650)
    assert j[BIG].cost_per_pass_usd == pytest.approx(0.03)
    assert j[CHEAP].cost_per_pass_usd == pytest.approx(0.0015)
    assert (j[CHECKS].decided, j[CHECKS].undecided, j[CHECKS].pass_rate) == (
        2,
        3,
        pytest.approx(0.5),
    )
    assert j[CHECKS].cost_per_pass_usd == 0.0 and j[CHECKS].calls_per_pass == 0
    assert j[CHECKS].by_source == {"check": 2, "none": 3}
    assert j[BIG].pass_trials == 2 and report.warnings == []


def test_expected_figures(report):
    e = {x.judge: x for x in report.expected}
    big = e[BIG]
    assert (big.accuracy, big.precision, big.recall, big.f1) == (1.0, 1.0, 1.0, 1.0)
    assert big.errors == [] and big.score.mean_abs_diff == 0.0
    # expected scores: T1 rubric 0 passes (2 of 3 points), T2 rubric 0 fails
    assert [(t.trial_id, t.expected_score) for t in big.per_trial] == [
        (TR1, pytest.approx(2 / 3)),
        (TR2, 0.0),
    ]

    cheap = e[CHEAP]
    # expected T T F | T F, cheap T F F | T F: TP 2, FN 1, FP 0, TN 2
    assert (cheap.tp, cheap.fp, cheap.fn, cheap.tn) == (2, 0, 1, 2)
    assert cheap.accuracy == pytest.approx(0.8)
    assert cheap.precision == pytest.approx(1.0)
    assert cheap.recall == pytest.approx(2 / 3)
    assert cheap.f1 == pytest.approx(0.8)  # 2*2 / (2*2 + 0 + 1)
    assert [(x.trial_id, x.rubric, x.criterion, x.expected, x.verdict) for x in cheap.errors] == [
        (TR1, 0, 1, True, "fail")
    ]
    assert cheap.score.mean_abs_diff == pytest.approx(1 / 3)
    assert (cheap.score.micro_a, cheap.score.micro_b) == pytest.approx((0.0, 1 / 3))

    checks = e[CHECKS]
    # decided: T1 0.0 pass (expected pass: TP), T2 0.0 fail (expected pass: FN); 3 unjudged
    assert (checks.criteria, checks.decided, checks.undecided) == (5, 2, 3)
    assert (checks.tp, checks.fp, checks.fn, checks.tn) == (1, 0, 1, 0)
    assert checks.accuracy == pytest.approx(0.5)
    assert checks.f1 == pytest.approx(2 / 3)
    assert checks.accuracy_all == pytest.approx(1 / 5)
    assert len(checks.errors) == 4


def test_outputs(report, tmp_path: Path):
    paths = write_calibration(report, tmp_path / "out")
    again = CalibrationReport.model_validate_json(paths["json"].read_text())
    assert again == report
    md = paths["markdown"].read_text()
    assert "| gpt-cheap.rubric.auto | gpt-big.rubric.llm | 5 | 4 | 80.0 % | 0.615 | 0.640 |" in md
    assert (
        "| gpt-cheap.rubric.auto | 2 | 5 | 0 | 0.800 | 1.000 | 0.667 | 0.800 | 2 | 0 | 1 | 2 |"
        in md
    )
    assert f"{CHEAP} says fail on 0.1" in md and f"{BIG} says pass on 0.1" in md
    assert "Krippendorff's α = 0.389 over 5 criteria" in md
    assert paths["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert md == render_markdown(report)
    # the plot: cost per pass on x, accuracy on y (every judge was measured against expected)
    xlabel, ylabel, pts = plot_axes(report)
    assert xlabel.startswith("judge cost per full grading pass")
    assert ylabel == "accuracy against expected verdicts"
    assert pts == [
        (CHECKS, 0.0, 0.5),
        (BIG, pytest.approx(0.03), 1.0),
        (CHEAP, pytest.approx(0.0015), 0.8),
    ]


def test_plot_without_expected_uses_agreement_and_tokens(run: Path):
    judges = read_run_grades([run], [BIG, CHEAP])
    judges[CHEAP].records[TR2].usage.cost_usd = None  # an unknown price
    rep = calibrate(judges)
    assert rep.reference == BIG  # the first key given
    xlabel, ylabel, pts = plot_axes(rep)
    assert xlabel.startswith("judge tokens per full grading pass")
    assert ylabel == f"percent agreement with {BIG}"
    assert pts == [(BIG, 1650.0, 1.0), (CHEAP, 1650.0, pytest.approx(0.8))]
    assert any("no price known" in w for w in rep.warnings)
    assert plot_cost_vs_agreement(rep)[:4] == b"\x89PNG"


def test_cached_units_are_reported(run: Path):
    judges = read_run_grades([run], [BIG, CHEAP])
    judges[CHEAP].records[TR1].units = [
        JudgeUnit(unit="r0", cached=True),
        JudgeUnit(unit="r1", cached=False),
    ]
    rep = calibrate(judges)
    assert {j.key: j.cached_units for j in rep.judges} == {BIG: 0, CHEAP: 1}
    assert any(w.startswith(f"{CHEAP}: 1 LLM unit(s)") for w in rep.warnings)


def test_partial_coverage_and_bad_reference(run: Path):
    judges = read_run_grades([run], [BIG, CHEAP])
    del judges[CHEAP].records[TR2]
    rep = calibrate(judges, max_flips=0)
    assert any("1 of 2 trial(s) are not graded by every judge" in w for w in rep.warnings)
    assert rep.judges[0].pass_trials == 1 and rep.judges[0].cost_per_pass_usd == pytest.approx(0.02)
    assert rep.flips == [] and rep.pairs[0].flips == 1  # the listing is cut, the count is not
    with pytest.raises(ValueError, match="not among the judges"):
        calibrate(judges, reference="nope")
    with pytest.raises(ValueError, match="no judge"):
        calibrate({})


def test_json_is_plain_json(report, tmp_path: Path):
    paths = write_calibration(report, tmp_path)
    data = json.loads(paths["json"].read_text())
    assert data["reference"] == BIG
    assert data["expected"][1]["judge"] == BIG and data["expected"][1]["accuracy"] == 1.0


def test_markdown_escapes_untrusted_text(run: Path, tmp_path: Path):
    from .conftest import VERDICTS, make_record, write_record

    hostile = "</td><script>alert(1)</script> | `code` \n\n# heading"
    write_record(run, CHEAP, make_record(CHEAP, TR1, VERDICTS[CHEAP][TR1], reasoning=hostile))
    md = render_markdown(calibrate(read_run_grades([run], [BIG, CHEAP])))
    assert "<script>" not in md and "</td>" not in md
    assert "&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt; \\| \\`code\\` # heading" in md
