"""Statistics over task scores: weighted means, bootstrap intervals, paired bootstrap, pass^k.

Everything here works on one number per task (a task score s_t in [0, 1], already averaged
over epochs) and an optional weight per task (its maximum in points, Σ_r w_r):

* **micro** = Σ_t w_t s_t / Σ_t w_t = Σ points / Σ maxima (the public JobBench leaderboard's
  overall score);
* **macro** = mean_t s_t (every task counts the same).

Intervals are percentile bootstrap intervals over tasks (Efron & Tibshirani, *An Introduction
to the Bootstrap*, 1993, ch. 13): tasks are drawn with replacement ``n_resamples`` times with a
seeded :func:`numpy.random.default_rng`, the statistic is recomputed on every resample, and the
interval is the (α/2, 1 − α/2) quantiles (numpy's default linear interpolation) of those
values. The procedure is exactly::

    rng = numpy.random.default_rng(seed)
    idx = rng.integers(0, n_tasks, size=(n_resamples, n_tasks))
    replicate[b] = statistic(scores[idx[b]], weights[idx[b]])

so anyone can reproduce the figures from ``results.jsonl``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from math import comb
from typing import Literal

import numpy as np
from pydantic import BaseModel

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0
DEFAULT_CONFIDENCE = 0.95

Statistic = Literal["micro", "macro"]


class Interval(BaseModel):
    """A point estimate with its bootstrap confidence interval.

    Attributes:
        estimate: the statistic on the observed tasks (a fraction in [0, 1]), or None when
            there are no tasks.
        low, high: interval bounds (fractions), or None when there are no tasks.
        confidence: e.g. 0.95.
        n: number of tasks resampled.
        n_resamples, seed: bootstrap settings (reproducible).
    """

    estimate: float | None
    low: float | None
    high: float | None
    confidence: float
    n: int
    n_resamples: int
    seed: int


class PairedComparison(BaseModel):
    """A paired bootstrap comparison of configurations A and B on the same tasks.

    Attributes:
        statistic: ``micro`` or ``macro``.
        n: number of tasks compared (each task scored for both, missing ones as 0 unless the
            caller removed them).
        a, b: the statistic for A and for B (fractions).
        difference: a − b (fraction; multiply by 100 for percentage points).
        low, high: percentile bootstrap interval of the difference.
        p_value: two-sided bootstrap p-value of "no difference":
            ``(1 + #{|d*_b − d| ≥ |d|}) / (n_resamples + 1)`` where d*_b is the difference on
            resample b (the replicate distribution shifted to the null). 1.0 when d = 0.
        wins, losses, ties: tasks where A's score is higher / lower / equal.
        confidence, n_resamples, seed: bootstrap settings.
    """

    statistic: Statistic
    n: int
    a: float | None
    b: float | None
    difference: float | None
    low: float | None
    high: float | None
    p_value: float | None
    wins: int
    losses: int
    ties: int
    confidence: float
    n_resamples: int
    seed: int


def _arrays(
    scores: Sequence[float] | np.ndarray, weights: Sequence[float] | np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=float)
    if s.ndim != 1:
        raise ValueError("scores must be one number per task")
    w = np.ones_like(s) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != s.shape:
        raise ValueError(f"weights has {w.size} values for {s.size} scores")
    if not (np.all(np.isfinite(s)) and np.all(np.isfinite(w))):
        raise ValueError("scores and weights must be finite (drop or zero missing tasks first)")
    if np.any(w < 0):
        raise ValueError("weights must be >= 0")
    return s, w


def weighted_mean(
    scores: Sequence[float] | np.ndarray, weights: Sequence[float] | np.ndarray | None = None
) -> float | None:
    """Σ w_t s_t / Σ w_t (micro when ``weights`` are task maxima; macro when None).

    Returns:
        A fraction, or None when there are no tasks or the weights sum to 0.

    Raises:
        ValueError: lengths differ, a value is not finite, or a weight is negative.
    """
    s, w = _arrays(scores, weights)
    total = w.sum()
    if s.size == 0 or total <= 0:
        return None
    return float((s * w).sum() / total)


def _replicates(s: np.ndarray, w: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The statistic on every resample: ``Σ_j s[idx[b, j]] w[idx[b, j]] / Σ_j w[idx[b, j]]``
    for each row ``b`` of ``idx`` (``(n_resamples, n)`` task positions), NaN where the
    resampled weights sum to 0. Returns ``(n_resamples,)`` floats.

    Bit for bit the values of gathering ``s[idx] * w[idx]`` and ``w[idx]`` and summing each
    row: the products ``s_t w_t`` are formed once per task (the same products, each
    multiplication exact to the same rounding), and with unit weights (macro) each row's
    weight sum is the number of tasks, which a sum of ones gives exactly. The positions are
    gathered as ``intp`` (:func:`_wide`): the same values, gathered faster."""
    idx = _wide(idx)
    num = (s * w)[idx].sum(axis=1)
    n = idx.shape[1] if idx.ndim == 2 else 0
    if n and np.all(w == 1.0):
        return num / float(n)
    den = w[idx].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


_LAST_WIDE: tuple[np.ndarray, np.ndarray] | None = None
"""The last (narrow index array, its ``intp`` copy) made by :func:`_wide`."""


def _wide(idx: np.ndarray) -> np.ndarray:
    """``idx`` as ``intp`` (numpy gathers fastest with it; the cached draws are narrower to
    save memory), the copy of the last array asked for kept for the next call: a report
    bootstraps micro and macro of each group, and both sides of a paired comparison, with
    the same draws one after the other. Returns ``idx`` itself when already ``intp``."""
    global _LAST_WIDE
    if idx.dtype == np.intp:
        return idx
    last = _LAST_WIDE
    if last is not None and last[0] is idx:
        return last[1]
    wide = idx.astype(np.intp)
    _LAST_WIDE = (idx, wide)
    return wide


def _resample_indices(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """The bootstrap's resampled task positions: ``(n_resamples, n)`` integers in [0, n)
    drawn from ``default_rng(seed)``; read-only, shared by every call with the same
    arguments (a report bootstraps many groups of the same size with the same seed).

    Raises:
        ValueError: ``n_resamples < 1``.
    """
    if n_resamples < 1:
        raise ValueError("n_resamples must be >= 1")
    return _cached_indices(n, n_resamples, seed)


@lru_cache(maxsize=32)
def _cached_indices(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """The draw of :func:`_resample_indices`, stored in the narrowest integer type that holds
    ``n - 1`` (the same values: 16-bit for up to 32,768 tasks, a quarter of the memory)."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_resamples, n))
    narrow = idx.astype(np.min_scalar_type(max(n - 1, 0)).newbyteorder("="), copy=False)
    narrow.flags.writeable = False
    return narrow


def _bounds(values: np.ndarray, confidence: float) -> tuple[float, float]:
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    values = values[np.isfinite(values)]
    alpha = 1.0 - confidence
    lo, hi = np.quantile(values, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def bootstrap_ci(
    scores: Sequence[float],
    weights: Sequence[float] | None = None,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> Interval:
    """Percentile bootstrap interval over tasks of the (weighted) mean score.

    Args:
        scores: one task score per task, fractions in [0, 1] (missing tasks as 0 if they
            should count as 0).
        weights: task maxima in points for **micro**; None for **macro**.
        n_resamples, confidence, seed: see the module docstring for the exact procedure.

    Returns:
        An :class:`Interval`; bounds are None when there are no tasks, and equal to the
        estimate when there is one task.

    Raises:
        ValueError: bad lengths, non-finite values, negative weights, ``n_resamples < 1`` or
            ``confidence`` outside (0, 1).
    """
    s, w = _arrays(scores, weights)
    est = weighted_mean(s, w)
    if est is None:
        return Interval(
            estimate=None,
            low=None,
            high=None,
            confidence=confidence,
            n=int(s.size),
            n_resamples=n_resamples,
            seed=seed,
        )
    reps = _replicates(s, w, _resample_indices(s.size, n_resamples, seed))
    lo, hi = _bounds(reps, confidence)
    return Interval(
        estimate=est,
        low=lo,
        high=hi,
        confidence=confidence,
        n=int(s.size),
        n_resamples=n_resamples,
        seed=seed,
    )


def paired_bootstrap(
    a_scores: Sequence[float],
    b_scores: Sequence[float],
    weights: Sequence[float] | None = None,
    *,
    statistic: Statistic | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> PairedComparison:
    """Paired bootstrap of the difference A − B over the same tasks.

    The same resampled task indices are applied to A and B (pairing keeps the task
    difficulty out of the variance), the difference of the statistic is recomputed on each
    resample, and the interval and p-value come from those replicates (see
    :class:`PairedComparison`).

    Args:
        a_scores, b_scores: task scores of A and B, aligned (same task at the same position).
        weights: task maxima for **micro**, None for **macro**.
        statistic: label stored in the result; defaults to ``micro`` when weights are given.
        n_resamples, confidence, seed: bootstrap settings.

    Raises:
        ValueError: lengths differ or values are invalid (see :func:`bootstrap_ci`).
    """
    a, w = _arrays(a_scores, weights)
    b, _ = _arrays(b_scores, weights)
    if a.shape != b.shape:
        raise ValueError(f"A has {a.size} tasks and B has {b.size}; pair them first")
    stat: Statistic = statistic or ("macro" if weights is None else "micro")
    wins = int(np.sum(a > b))
    losses = int(np.sum(a < b))
    ties = int(a.size - wins - losses)
    ea, eb = weighted_mean(a, w), weighted_mean(b, w)
    if ea is None or eb is None:
        return PairedComparison(
            statistic=stat,
            n=int(a.size),
            a=ea,
            b=eb,
            difference=None,
            low=None,
            high=None,
            p_value=None,
            wins=wins,
            losses=losses,
            ties=ties,
            confidence=confidence,
            n_resamples=n_resamples,
            seed=seed,
        )
    diff = ea - eb
    idx = _resample_indices(a.size, n_resamples, seed)
    reps = _replicates(a, w, idx) - _replicates(b, w, idx)
    reps = reps[np.isfinite(reps)]
    lo, hi = _bounds(reps, confidence)
    # Tolerance so that floating-point noise in exact ties is not counted as "less extreme".
    extreme = np.abs(reps - diff) >= abs(diff) - 1e-12
    p = (1 + int(extreme.sum())) / (reps.size + 1)
    return PairedComparison(
        statistic=stat,
        n=int(a.size),
        a=ea,
        b=eb,
        difference=diff,
        low=lo,
        high=hi,
        p_value=min(1.0, p),
        wins=wins,
        losses=losses,
        ties=ties,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of pass^k for one task: the chance that k trials drawn without
    replacement from the n observed all succeed, C(c, k) / C(n, k) (Yao et al., τ-bench,
    2024, arXiv:2406.12045).

    Args:
        n: trials observed (>= k); c: successful ones (0 <= c <= n); k: >= 1.

    Raises:
        ValueError: when ``k < 1``, ``n < k`` or ``c`` is outside [0, n].
    """
    if k < 1 or n < k or not 0 <= c <= n:
        raise ValueError(f"pass^k needs 1 <= k <= n and 0 <= c <= n (n={n}, c={c}, k={k})")
    return comb(c, k) / comb(n, k)
