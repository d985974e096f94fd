"""The statistics of jobbench.calibrate against values worked out by hand (in the comments)
and against published worked examples."""

from __future__ import annotations

import pytest

from jobbench.calibrate import (
    Confusion,
    ScorePoint,
    all_agree_rate,
    cohen_kappa,
    coincidence_matrix,
    confusion,
    krippendorff_alpha,
    percent_agreement,
    score_deviation,
)

P, F = "pass", "fail"


# ----------------------------------------------------------------------------- two judges


def test_two_judges_small_example_by_hand():
    a = [P, P, F, F]
    b = [P, F, F, F]
    # agreement: items 1, 3, 4 -> 3/4
    assert percent_agreement(a, b) == pytest.approx(0.75)
    # kappa: p_o = 0.75; p_A(pass) = 2/4, p_B(pass) = 1/4
    # p_e = 0.5*0.25 + 0.5*0.75 = 0.5; kappa = (0.75 - 0.5) / (1 - 0.5) = 0.5
    assert cohen_kappa(a, b) == pytest.approx(0.5)
    # alpha: 8 pairable values, n_pass = 3, n_fail = 5; the one disagreeing unit puts
    # 1/(2-1) = 1 in o_pf and 1 in o_fp, so sum_{c!=k} o_ck = 2 and
    # sum_{c!=k} n_c n_k = 2*3*5 = 30: alpha = 1 - (8-1)*2/30 = 16/30
    assert krippendorff_alpha(list(zip(a, b))) == pytest.approx(16 / 30)


def test_kappa_cohen_textbook_example():
    # The worked example of the Wikipedia article "Cohen's kappa": 50 proposals, both say
    # yes 20, A yes/B no 5, A no/B yes 10, both no 15. p_o = 35/50 = 0.7;
    # p_yes = 0.5*0.6 = 0.3, p_no = 0.5*0.4 = 0.2, p_e = 0.5; kappa = 0.2/0.5 = 0.4.
    a = ["y"] * 20 + ["y"] * 5 + ["n"] * 10 + ["n"] * 15
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert percent_agreement(a, b) == pytest.approx(0.7)


def test_kappa_edges():
    # total disagreement with balanced labels: p_o = 0, p_e = 0.5 -> kappa = -1
    assert cohen_kappa([P, F, P, F], [F, P, F, P]) == pytest.approx(-1.0)
    # one judge always passes, the other always fails: p_o = 0, p_e = 1*0 + 0*1 = 0 -> 0
    assert cohen_kappa([P, P, P], [F, F, F]) == pytest.approx(0.0)
    # both always pass: p_e = 1, kappa = 0/0 -> undefined (None), agreement is 1
    assert cohen_kappa([P, P], [P, P]) is None
    assert percent_agreement([P, P], [P, P]) == 1.0
    # missing labels are left out: only items 2 and 3 count -> p_o = 1/2,
    # p_A(pass) = 1/2, p_B(pass) = 1/2, p_e = 1/2 -> kappa 0
    assert percent_agreement([None, P, F, P], [P, P, P, None]) == pytest.approx(0.5)
    assert cohen_kappa([None, P, F, P], [P, P, P, None]) == pytest.approx(0.0)
    assert percent_agreement([None], [P]) is None
    assert cohen_kappa([], []) is None
    with pytest.raises(ValueError, match="length"):
        percent_agreement([P], [P, F])


# ----------------------------------------------------------------------------- alpha


def test_alpha_three_judges_with_missing_values_by_hand():
    units = [
        [P, P, P],  # m=3: o_pp += 3*2/(3-1) = 3
        [P, F, None],  # m=2: o_pf += 1, o_fp += 1
        [F, F, F],  # o_ff += 3
        [P, None, None],  # one value: not pairable
        [F, F, P],  # m=3, counts f=2, p=1: o_ff += 2*1/2 = 1, o_fp += 2*1/2 = 1, o_pf += 1
    ]
    o = coincidence_matrix(units)
    assert o == pytest.approx({(P, P): 3.0, (P, F): 2.0, (F, P): 2.0, (F, F): 4.0})
    # n_p = 3 + 2 = 5, n_f = 4 + 2 = 6, n = 11
    # alpha = 1 - (n-1) * sum_{c!=k} o_ck / sum_{c!=k} n_c n_k = 1 - 10*4 / (2*5*6) = 1/3
    assert krippendorff_alpha(units) == pytest.approx(1 / 3)
    # units with two or more values: 1, 2, 3, 5; all agree on 1 and 3
    assert all_agree_rate(units) == pytest.approx(0.5)


def test_alpha_krippendorff_2011_worked_example():
    # K. Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C
    # (nominal data, four observers, twelve units, missing values),
    # https://repository.upenn.edu/asc_papers/43 : n = 40 pairable values, alpha = 0.743.
    N = None
    obs_a = [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N]
    obs_b = [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3]
    obs_c = [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N]
    obs_d = [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N]
    units = list(zip(obs_a, obs_b, obs_c, obs_d))
    o = coincidence_matrix(units)
    assert sum(o.values()) == pytest.approx(40.0)
    # marginals n_c from the same matrix: 9, 13, 10, 5, 3; the diagonal holds 32 of the 40
    margins = {c: sum(v for (x, _), v in o.items() if x == c) for c in range(1, 6)}
    assert margins == pytest.approx({1: 9, 2: 13, 3: 10, 4: 5, 5: 3})
    # 1 - 39 * 8 / (40^2 - (81 + 169 + 100 + 25 + 9)) = 1 - 312/1216
    alpha = krippendorff_alpha(units)
    assert alpha == pytest.approx(1 - 312 / 1216)
    assert round(alpha, 3) == 0.743


def test_alpha_wikipedia_worked_example():
    # The computational example of the Wikipedia article "Krippendorff's alpha"
    # (three coders, fifteen units, '*' = missing): nominal alpha = 0.691.
    rows = [
        "*  *  *  *  *  3  4  1  2  1  1  3  3  *  3",
        "1  *  2  1  3  3  4  3  *  *  *  *  *  *  *",
        "*  *  2  1  3  4  4  *  2  1  1  3  3  *  4",
    ]
    coders = [[None if v == "*" else int(v) for v in r.split()] for r in rows]
    assert round(krippendorff_alpha(list(zip(*coders))), 3) == 0.691


def test_alpha_edges():
    assert krippendorff_alpha([[P, P], [P, P]]) is None  # one label only: D_e = 0
    assert krippendorff_alpha([[P, None], [None, F]]) is None  # nothing pairable
    assert krippendorff_alpha([[P, P], [F, F]]) == pytest.approx(1.0)
    assert all_agree_rate([[P, None]]) is None


# ----------------------------------------------------------------------------- confusion


def test_confusion_by_hand():
    expected = [True, True, True, False, False, False, False]
    judged = [True, True, False, True, False, False, False]
    c = confusion(expected, judged)
    # TP = items 1, 2; FN = item 3; FP = item 4; TN = items 5-7
    assert (c.tp, c.fp, c.fn, c.tn) == (2, 1, 1, 3)
    assert c.accuracy == pytest.approx(5 / 7)
    assert c.precision == pytest.approx(2 / 3)
    assert c.recall == pytest.approx(2 / 3)
    assert c.f1 == pytest.approx(2 / 3)  # 2*2 / (2*2 + 1 + 1)

    c = confusion([True, True, True, True, False], [True, False, False, True, True])
    # TP 2, FN 2, FP 1, TN 0: precision 2/3, recall 1/2, F1 = 2*(2/3)(1/2)/(2/3+1/2) = 4/7
    assert (c.tp, c.fp, c.fn, c.tn) == (2, 1, 2, 0)
    assert (c.accuracy, c.precision, c.recall) == pytest.approx((0.4, 2 / 3, 0.5))
    assert c.f1 == pytest.approx(4 / 7)


def test_confusion_edges():
    c = confusion([False, False], [False, False])
    assert c.accuracy == 1.0 and c.precision is None and c.recall is None and c.f1 is None
    c = confusion([True], [False])
    assert c.precision is None and c.recall == 0.0 and c.f1 == 0.0
    assert Confusion().accuracy is None
    with pytest.raises(ValueError, match="booleans"):
        confusion([True], ["pass"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="length"):
        confusion([True], [])


# ----------------------------------------------------------------------------- scores


def test_score_deviation_by_hand():
    a = {"t1": ScorePoint(3, 4), "t2": ScorePoint(0, 2), "t3": ScorePoint(10, 10), "t4": None}
    b = {
        "t1": ScorePoint(4, 4),
        "t2": ScorePoint(1, 2),
        "t3": ScorePoint(10, 10),
        "t4": ScorePoint(1, 1),
    }
    d = score_deviation(a, b)
    # paired: t1 (0.75 vs 1), t2 (0 vs 0.5), t3 (1 vs 1); t4 has no score from a
    assert d.n == 3
    assert d.per_trial == {"t1": (0.75, 1.0), "t2": (0.0, 0.5), "t3": (1.0, 1.0)}
    assert d.mean_abs_diff == pytest.approx((0.25 + 0.5 + 0) / 3)
    assert d.max_abs_diff == pytest.approx(0.5)
    # micro a = (3+0+10)/(4+2+10) = 13/16, micro b = 15/16
    assert d.micro_a == pytest.approx(13 / 16)
    assert d.micro_b == pytest.approx(15 / 16)
    assert d.micro_abs_diff == pytest.approx(2 / 16)
    assert d.micro_rel_diff == pytest.approx((2 / 16) / (15 / 16))


def test_score_deviation_empty():
    d = score_deviation({"t": None}, {"t": ScorePoint(1, 1)})
    assert d.n == 0 and d.mean_abs_diff is None and d.micro_a is None
