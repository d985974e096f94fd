"""z_r and s_t computed in code (jobbench.scoring), on hand-computed examples."""

from __future__ import annotations

import pytest

from jobbench.scoring import ChainValue, chain_values, disagrees, official_values, task_score


def test_chain_with_transitive_requires() -> None:
    # r0: pass,pass -> 1 ; r1: pass,fail -> 0 ; r2 requires r1 -> 0 ; r3 requires r0 -> 1 ;
    # r4 requires r3 (which requires r0) -> 1 ; r5 requires r2 -> 0 (break at requires:2)
    verdicts = [
        ["pass", "pass"],
        ["pass", "fail"],
        ["pass"],
        ["pass"],
        ["pass", "pass", "pass"],
        ["pass"],
    ]
    requires = [[], [], [1], [0], [3], [2]]
    vals = chain_values(verdicts, requires)
    assert [v.passed for v in vals] == [True, False, False, True, True, False]
    assert [v.chain_break for v in vals] == [
        None,
        "criterion:1",
        "requires:1",
        None,
        None,
        "requires:2",
    ]
    weights = [3, 2, 4, 1, 5, 0.5]
    ts = task_score(weights, vals)
    # passed weight 3 + 1 + 5 = 9 of 15.5
    assert ts.passed_weight == 9.0
    assert ts.max_score == 15.5
    assert ts.score == pytest.approx(9 / 15.5)
    assert (ts.passed_count, ts.decided_count, ts.total_count) == (3, 6, 6)


def test_undecided_is_never_pass_nor_fail() -> None:
    vals = chain_values(
        [["pass", "judge_error"], ["fail", "judge_error"], ["pass"], ["unjudged"], ["pass"]],
        [[], [], [0], [], [3]],
    )
    assert vals[0] == ChainValue(passed=None, chain_break=None, undecided="judge_error")
    # a known fail does not decide while another link is undecided (fail closed)
    assert (
        vals[1].passed is None
        and vals[1].chain_break == "criterion:0"
        and vals[1].undecided == "judge_error"
    )
    assert vals[2].passed is None and vals[2].undecided == "judge_error"  # inherits via requires
    assert vals[3].undecided == "unjudged" and vals[4].undecided == "unjudged"
    ts = task_score([1, 1, 1, 1, 1], vals)
    assert ts.score is None and ts.undecided_weight == 5.0 and ts.passed_weight == 0.0


def test_judge_error_wins_over_unjudged_on_a_chain() -> None:
    vals = chain_values([["unjudged", "judge_error"]])
    assert vals[0].undecided == "judge_error"


def test_official_rule_uses_model_verdict_only() -> None:
    vals = official_values([True, False, None])
    assert [v.passed for v in vals] == [True, False, None]
    ts = task_score([2, 3, 5], official_values([True, False, True]))
    assert ts.score == pytest.approx(7 / 10)


def test_disagreement() -> None:
    assert disagrees(True, ["pass", "fail"])
    assert disagrees(False, ["pass", "pass"])
    assert not disagrees(True, ["pass", "pass"])
    assert not disagrees(None, ["fail"])
    assert not disagrees(True, ["pass", "judge_error"])  # unknown implication
    assert disagrees(True, ["fail", "judge_error"])


def test_errors() -> None:
    with pytest.raises(ValueError, match="cycle"):
        chain_values([["pass"], ["pass"]], [[1], [0]])
    with pytest.raises(ValueError, match="unknown verdict"):
        chain_values([["maybe"]])
    with pytest.raises(ValueError, match="unknown rubric index 5"):
        chain_values([["pass"]], [[5]])
    assert task_score([0.0], [True]).score is None  # zero total weight has no score
