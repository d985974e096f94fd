"""Correlation coefficients and the bootstrap, checked against the standard library."""

from __future__ import annotations

import math
import random
import statistics

import numpy as np
import pytest

from jobbench.selection import average_ranks, bootstrap_indices, correlate, pearson, spearman


def ranks_by_hand(values: list[float]) -> list[float]:
    """Average ranks (1-based) computed by sorting and walking tie blocks."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def test_average_ranks_with_ties() -> None:
    assert average_ranks(np.array([10, 20, 20, 5, 20])).tolist() == [2.0, 4.0, 4.0, 1.0, 4.0]
    rng = random.Random(3)
    x = [rng.randint(0, 6) for _ in range(40)]
    assert average_ranks(np.array(x, dtype=float)).tolist() == ranks_by_hand(x)


def test_coefficients_match_statistics_module() -> None:
    rng = random.Random(11)
    for _ in range(20):
        x = [rng.randint(0, 9) for _ in range(30)]  # many ties
        y = [xi * 0.3 + rng.gauss(0, 2) for xi in x]
        assert pearson(x, y) == pytest.approx(statistics.correlation(x, y), abs=1e-12)
        assert spearman(x, y) == pytest.approx(
            statistics.correlation(ranks_by_hand(x), ranks_by_hand(y)), abs=1e-12
        )
    assert pearson([1, 2, 3, 4], [2, 4, 6, 8]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [1, 8, 27, 64]) == pytest.approx(1.0)
    assert math.isnan(pearson([1, 1, 1], [1, 2, 3]))


def test_bootstrap_interval_matches_plain_recomputation() -> None:
    rng = random.Random(5)
    x = [rng.uniform(0, 100) for _ in range(25)]
    y = [rng.randint(0, 40) for _ in range(25)]
    for method in ("pearson", "spearman"):
        got = correlate(x, y, method=method, n_boot=400, seed=42, level=0.9)
        idx = np.random.default_rng(42).integers(0, 25, size=(400, 25))  # the documented plan
        values = []
        for row in idx.tolist():
            xs, ys = [x[i] for i in row], [y[i] for i in row]
            if method == "spearman":
                xs, ys = ranks_by_hand(xs), ranks_by_hand(ys)
            try:
                values.append(statistics.correlation(xs, ys))
            except statistics.StatisticsError:  # a constant resample is dropped
                pass
        cuts = statistics.quantiles(values, n=20, method="inclusive")  # 5 % … 95 %
        assert (got.n_valid, got.n_boot, got.seed, got.level) == (len(values), 400, 42, 0.9)
        assert got.low == pytest.approx(cuts[0], abs=1e-9)
        assert got.high == pytest.approx(cuts[-1], abs=1e-9)
        assert got.low <= got.r <= got.high


def test_bootstrap_is_seeded_and_validates() -> None:
    x, y = [1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 6, 5]
    a = correlate(x, y, n_boot=200, seed=1)
    assert a == correlate(x, y, n_boot=200, seed=1, chunk=7)  # chunking does not change results
    assert a != correlate(x, y, n_boot=200, seed=2)
    assert bootstrap_indices(6, 3, 1).shape == (3, 6)
    with pytest.raises(ValueError, match="at least 3 pairs"):
        correlate([1, 2], [1, 2])
    with pytest.raises(ValueError, match="equal length"):
        correlate([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="method"):
        correlate(x, y, method="kendall")
    constant = correlate([1, 1, 1, 1], [1, 2, 3, 4], n_boot=10)
    assert math.isnan(constant.r) and constant.n_valid == 0 and math.isnan(constant.low)
