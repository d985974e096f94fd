"""Correlation coefficients and seeded bootstrap intervals (numpy only)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel


def _pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r along the last axis; NaN where either row is constant."""
    xc = x - x.mean(axis=-1, keepdims=True)
    yc = y - y.mean(axis=-1, keepdims=True)
    num = (xc * yc).sum(axis=-1)
    den = np.sqrt((xc * xc).sum(axis=-1) * (yc * yc).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = num / den
    r = np.where(den > 0, r, np.nan)
    return np.clip(r, -1.0, 1.0)


def average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n along the last axis, ties getting the mean of the ranks they span.

    rank(v) = #(values < v) + (#(values == v) + 1) / 2. Memory is O(n²) per row, fine for
    the few dozen occupations correlated here.
    """
    x = np.asarray(x, dtype=float)
    less = (x[..., None, :] < x[..., :, None]).sum(axis=-1)
    equal = (x[..., None, :] == x[..., :, None]).sum(axis=-1)
    return less + (equal + 1) / 2.0


def pearson(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Pearson product-moment correlation of two equal-length sequences.

    Returns:
        r in [-1, 1], or NaN when either sequence is constant.

    Raises:
        ValueError: lengths differ or fewer than 3 pairs.
    """
    a, b = _pair(x, y)
    return float(_pearson_rows(a, b))


def spearman(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Spearman rank correlation = Pearson r of the average ranks (ties averaged).

    Raises:
        ValueError: lengths differ or fewer than 3 pairs.
    """
    a, b = _pair(x, y)
    return float(_pearson_rows(average_ranks(a), average_ranks(b)))


def _pair(x, y) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"need two 1-D sequences of equal length, got {a.shape} and {b.shape}")
    if len(a) < 3:
        raise ValueError(f"need at least 3 pairs, got {len(a)}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("values must be finite")
    return a, b


class Correlation(BaseModel):
    """A correlation with its bootstrap interval.

    Attributes:
        method: ``pearson`` or ``spearman``.
        n: number of pairs.
        r: the coefficient on the full sample (NaN if undefined).
        low, high: percentile bootstrap interval bounds (``level``, e.g. 0.95).
        level: the interval's nominal coverage.
        n_boot: resamples drawn; ``n_valid``: resamples where r was defined (resamples with
            a constant variable are dropped).
        seed: the numpy ``default_rng`` seed.
    """

    method: str
    n: int
    r: float
    low: float
    high: float
    level: float
    n_boot: int
    n_valid: int
    seed: int


def bootstrap_indices(n: int, n_boot: int, seed: int) -> np.ndarray:
    """The resampling plan: ``numpy.random.default_rng(seed).integers(0, n, size=(n_boot,
    n))`` — row b holds the indices of the pairs in resample b (with replacement)."""
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))


def correlate(
    x: Sequence[float],
    y: Sequence[float],
    *,
    method: str = "pearson",
    n_boot: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
    chunk: int = 2_000,
) -> Correlation:
    """Correlation of paired samples with a percentile bootstrap interval.

    Pairs are resampled with replacement following :func:`bootstrap_indices`; the
    coefficient is recomputed on each resample (Spearman re-ranks every resample, ties
    averaged); the interval is the ``(1-level)/2`` and ``(1+level)/2`` quantiles
    (``numpy.quantile``, linear interpolation) of the defined resample coefficients.

    Args:
        x, y: paired values (same length ≥ 3, finite).
        method: ``pearson`` or ``spearman``.
        n_boot: number of resamples (≥ 1).
        seed: seed of ``numpy.random.default_rng``.
        level: interval coverage in (0, 1).
        chunk: resamples processed at once (memory only; no effect on results).

    Raises:
        ValueError: bad method, level, n_boot, or inputs (see :func:`pearson`).
    """
    if method not in {"pearson", "spearman"}:
        raise ValueError(f"method must be 'pearson' or 'spearman', not {method!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be ≥ 1, got {n_boot}")
    a, b = _pair(x, y)
    r = pearson(a, b) if method == "pearson" else spearman(a, b)
    idx = bootstrap_indices(len(a), n_boot, seed)
    values = []
    for start in range(0, n_boot, chunk):
        ix = idx[start : start + chunk]
        xa, yb = a[ix], b[ix]
        if method == "spearman":
            xa, yb = average_ranks(xa), average_ranks(yb)
        values.append(_pearson_rows(xa, yb))
    boot = np.concatenate(values)
    boot = boot[np.isfinite(boot)]
    if len(boot):
        low, high = np.quantile(boot, [(1 - level) / 2, (1 + level) / 2])
    else:
        low = high = math.nan
    return Correlation(
        method=method,
        n=len(a),
        r=r,
        low=float(low),
        high=float(high),
        level=level,
        n_boot=n_boot,
        n_valid=int(len(boot)),
        seed=seed,
    )
