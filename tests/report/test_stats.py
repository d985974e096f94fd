"""Bootstrap intervals, paired bootstrap and pass^k against independent computations."""

from __future__ import annotations

import itertools
from math import comb

import numpy as np
import pytest

from jobbench.scoring import bootstrap_ci, paired_bootstrap, pass_hat_k, weighted_mean

# The run fixtures' task scores (see conftest): maxima and beta/alpha counted scores.
MAX = [40.0, 60.0, 100.0, 20.0]
ALPHA = [0.875, 0.5, 0.0, 0.0]
BETA = [0.125, 1.0, 0.5, 1.0]


def _exact_distribution(scores, weights=None):
    """All n^n equally likely ordered resamples, enumerated (no random numbers)."""
    s = np.asarray(scores, float)
    w = np.ones_like(s) if weights is None else np.asarray(weights, float)
    n = len(s)
    vals = []
    for idx in itertools.product(range(n), repeat=n):
        idx = list(idx)
        vals.append((s[idx] * w[idx]).sum() / w[idx].sum())
    return np.sort(np.asarray(vals))


def _exact_quantile(sorted_vals, q):
    """Smallest value whose cumulative probability reaches q."""
    k = int(np.ceil(q * len(sorted_vals))) - 1
    return sorted_vals[max(0, k)]


def test_weighted_mean_is_micro_and_macro():
    assert weighted_mean(ALPHA, MAX) == pytest.approx(65 / 220)
    assert weighted_mean(BETA, MAX) == pytest.approx(135 / 220)
    assert weighted_mean(ALPHA) == pytest.approx(0.34375)
    assert weighted_mean([]) is None


def test_bootstrap_matches_the_documented_procedure_exactly():
    B, seed = 3000, 7
    iv = bootstrap_ci(BETA, MAX, n_resamples=B, seed=seed)
    rng = np.random.default_rng(seed)
    s, w = np.array(BETA), np.array(MAX)
    idx = rng.integers(0, 4, size=(B, 4))
    reps = [float(np.dot(s[row], w[row]) / w[row].sum()) for row in idx]
    lo, hi = np.quantile(reps, [0.025, 0.975])
    assert iv.estimate == pytest.approx(135 / 220)
    assert (iv.low, iv.high) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
    assert iv.n == 4 and iv.n_resamples == B and iv.seed == seed


def test_replicates_are_bit_identical_to_the_gathered_formula():
    """The replicates equal, bit for bit, gathering both arrays per resample and summing each
    row (the procedure before the products were formed once per task), for micro weights,
    unit weights (macro) and weights with zeros, at the paper's 130 tasks and below."""
    from jobbench.scoring._stats import _replicates, _resample_indices

    rng = np.random.default_rng(3)
    for n in (1, 4, 13, 130):
        s = rng.random(n)
        for w in (rng.choice([5.0, 10.0, 15.0, 20.0], n), np.ones(n), rng.choice([0.0, 3.0], n)):
            idx = _resample_indices(n, 2000, 11)
            ws = w[idx]
            den = ws.sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                want = np.where(den > 0, (s[idx] * ws).sum(axis=1) / den, np.nan)
            got = _replicates(s, w, idx)
            assert got.shape == (2000,)
            assert np.array_equal(got, want, equal_nan=True), (n, w[:3])


def test_bootstrap_is_reproducible_and_seed_dependent():
    a = bootstrap_ci(ALPHA, MAX, n_resamples=500, seed=1)
    b = bootstrap_ci(ALPHA, MAX, n_resamples=500, seed=1)
    assert a == b
    others = {(bootstrap_ci(BETA, MAX, n_resamples=50, seed=s).low) for s in range(6)}
    assert len(others) > 1


def test_three_task_interval_is_min_and_max_by_hand():
    # With 3 tasks, the all-lowest resample has probability 1/27 = 3.7 % > 2.5 %, so the
    # 95 % percentile interval of the mean is exactly [min, max].
    iv = bootstrap_ci([0.2, 0.5, 0.9], n_resamples=10_000, seed=0)
    assert iv.estimate == pytest.approx(1.6 / 3)
    assert iv.low == pytest.approx(0.2) and iv.high == pytest.approx(0.9)


def test_interval_agrees_with_exact_enumeration():
    for scores, weights in ((BETA, MAX), (ALPHA, MAX), (BETA, None), (ALPHA, None)):
        exact = _exact_distribution(scores, weights)
        iv = bootstrap_ci(scores, weights, n_resamples=20_000, seed=3)
        # Monte Carlo quantile lies between the exact 1.5 % and 3.5 % (resp. 96.5 %, 98.5 %)
        # quantiles.
        assert (
            _exact_quantile(exact, 0.015) - 1e-12 <= iv.low <= _exact_quantile(exact, 0.035) + 1e-12
        )
        assert (
            _exact_quantile(exact, 0.965) - 1e-12
            <= iv.high
            <= _exact_quantile(exact, 0.985) + 1e-12
        )


def test_degenerate_inputs():
    one = bootstrap_ci([0.4], [10.0])
    assert (one.estimate, one.low, one.high) == (
        pytest.approx(0.4),
        pytest.approx(0.4),
        pytest.approx(0.4),
    )
    empty = bootstrap_ci([], [])
    assert empty.estimate is None and empty.low is None and empty.n == 0
    with pytest.raises(ValueError, match="weights has 1 values for 2 scores"):
        bootstrap_ci([0.1, 0.2], [1.0])
    with pytest.raises(ValueError, match="finite"):
        bootstrap_ci([float("nan")])
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci([0.1, 0.2], confidence=1.5)


def test_paired_bootstrap_figures():
    B, seed = 4000, 11
    res = paired_bootstrap(BETA, ALPHA, MAX, n_resamples=B, seed=seed)
    assert res.statistic == "micro"
    assert res.difference == pytest.approx(70 / 220)
    assert (res.a, res.b) == (pytest.approx(135 / 220), pytest.approx(65 / 220))
    assert (res.wins, res.losses, res.ties) == (3, 1, 0)
    # Independent replication of the documented procedure.
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, 4, size=(B, 4))
    a, b, w = np.array(BETA), np.array(ALPHA), np.array(MAX)
    d = np.array([(a[i] * w[i]).sum() / w[i].sum() - (b[i] * w[i]).sum() / w[i].sum() for i in idx])
    lo, hi = np.quantile(d, [0.025, 0.975])
    p = (1 + np.sum(np.abs(d - 70 / 220) >= 70 / 220 - 1e-12)) / (B + 1)
    assert res.low == pytest.approx(lo) and res.high == pytest.approx(hi)
    assert res.p_value == pytest.approx(p)


def test_paired_p_value_agrees_with_exact_enumeration():
    diffs = np.array(BETA) - np.array(ALPHA)  # macro: the mean of differences
    d_hat = diffs.mean()
    exact = _exact_distribution(diffs)
    p_exact = np.mean(np.abs(exact - d_hat) >= abs(d_hat) - 1e-12)
    res = paired_bootstrap(BETA, ALPHA, None, n_resamples=20_000, seed=5)
    assert res.statistic == "macro" and res.difference == pytest.approx(0.3125)
    assert res.p_value == pytest.approx(p_exact, abs=0.015)


def test_paired_bootstrap_edge_cases_by_hand():
    # Identical configurations: difference 0, interval [0, 0], p = 1.
    same = paired_bootstrap(ALPHA, ALPHA, MAX, n_resamples=200)
    assert (same.difference, same.low, same.high, same.p_value) == (0.0, 0.0, 0.0, 1.0)
    assert same.ties == 4
    # A constant gain of 0.25 on every task: every resample shows +0.25, so the interval is
    # [0.25, 0.25] and no resample is as extreme as the null: p = 1 / (B + 1).
    gain = paired_bootstrap([0.5, 0.75, 1.0], [0.25, 0.5, 0.75], n_resamples=999)
    assert gain.difference == pytest.approx(0.25)
    assert gain.low == pytest.approx(0.25) and gain.high == pytest.approx(0.25)
    assert gain.p_value == pytest.approx(1 / 1000)
    with pytest.raises(ValueError, match="pair them first"):
        paired_bootstrap([0.1, 0.2], [0.1])


def test_pass_hat_k_by_hand():
    assert pass_hat_k(2, 1, 1) == 0.5
    assert pass_hat_k(2, 1, 2) == 0.0
    assert pass_hat_k(2, 2, 2) == 1.0
    assert pass_hat_k(5, 3, 2) == pytest.approx(comb(3, 2) / comb(5, 2))  # 3/10
    assert pass_hat_k(5, 3, 2) == pytest.approx(0.3)
    with pytest.raises(ValueError):
        pass_hat_k(1, 1, 2)
    with pytest.raises(ValueError):
        pass_hat_k(3, 4, 1)
