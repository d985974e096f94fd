"""Agreement and accuracy statistics for judge calibration (pure functions, no file access).

Conventions used throughout:

* A *label* is any hashable value (the calibration code uses the criterion verdicts
  ``"pass"`` and ``"fail"``); ``None`` means *missing* (the judge gave no verdict, e.g.
  ``judge_error``/``unjudged``, or did not grade that trial).
* A statistic that is undefined for the data (no pairs, no chance disagreement, no positive
  cases) is returned as ``None``, never as 0 or NaN, so a report can print "n/a" and JSON
  stays valid.

Sources:
    * Cohen's kappa: J. Cohen (1960), "A coefficient of agreement for nominal scales",
      *Educational and Psychological Measurement* 20(1): 37-46.
      κ = (p_o − p_e) / (1 − p_e), with p_e = Σ_k p_A(k)·p_B(k).
    * Krippendorff's alpha (nominal): K. Krippendorff (2011), "Computing Krippendorff's
      Alpha-Reliability", Annenberg School for Communication, University of Pennsylvania,
      https://repository.upenn.edu/asc_papers/43 (section C: nominal data, any number of
      observers, missing values). α = 1 − D_o/D_e computed from the coincidence matrix.
    * Precision, recall and F1: the usual definitions with ``pass`` as the positive class;
      F1 = 2·TP / (2·TP + FP + FN).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

Label = Hashable


def _pairs(a: Sequence[Label | None], b: Sequence[Label | None]) -> list[tuple[Label, Label]]:
    if len(a) != len(b):
        raise ValueError(f"the two label sequences differ in length ({len(a)} vs {len(b)})")
    return [(x, y) for x, y in zip(a, b) if x is not None and y is not None]


def percent_agreement(a: Sequence[Label | None], b: Sequence[Label | None]) -> float | None:
    """Share of positions where two judges gave the same label.

    Args:
        a, b: labels of judge A and judge B for the same items, in the same order;
            ``None`` marks a missing label (that item is left out).

    Returns:
        agreements / items with both labels, in [0, 1]; None when no item has both.

    Raises:
        ValueError: the sequences differ in length.
    """
    pairs = _pairs(a, b)
    if not pairs:
        return None
    return sum(1 for x, y in pairs if x == y) / len(pairs)


def cohen_kappa(a: Sequence[Label | None], b: Sequence[Label | None]) -> float | None:
    """Cohen's kappa between two judges (Cohen 1960).

    κ = (p_o − p_e) / (1 − p_e), where p_o is the observed agreement and
    p_e = Σ_k p_A(k) p_B(k) the agreement expected from each judge's own label shares.

    Args:
        a, b: labels of the two judges for the same items; ``None`` = missing (left out).

    Returns:
        κ in [−1, 1]; None when no item has both labels, or when p_e = 1 (both judges gave
        one and the same label to every item: chance explains all agreement and κ is 0/0).

    Raises:
        ValueError: the sequences differ in length.
    """
    pairs = _pairs(a, b)
    n = len(pairs)
    if n == 0:
        return None
    p_o = sum(1 for x, y in pairs if x == y) / n
    ca = Counter(x for x, _ in pairs)
    cb = Counter(y for _, y in pairs)
    p_e = sum(ca[k] * cb.get(k, 0) for k in ca) / (n * n)
    if p_e >= 1.0 - 1e-12:
        return None
    return (p_o - p_e) / (1.0 - p_e)


def coincidence_matrix(units: Iterable[Sequence[Label | None]]) -> dict[tuple[Label, Label], float]:
    """Krippendorff's coincidence matrix o_ck for nominal data.

    Each unit with m_u ≥ 2 values contributes, for every ordered pair of values given by
    two *different* judges, 1/(m_u − 1) to the cell (c, k) of that pair. Units with fewer
    than two values are not pairable and contribute nothing.

    Args:
        units: one row per unit (item), holding each judge's label or None (missing).

    Returns:
        ``{(c, k): o_ck}`` with only non-zero cells; Σ o_ck = n, the number of pairable values.
    """
    o: dict[tuple[Label, Label], float] = defaultdict(float)
    for row in units:
        vals = [v for v in row if v is not None]
        m = len(vals)
        if m < 2:
            continue
        counts = Counter(vals)
        for c, nc in counts.items():
            for k, nk in counts.items():
                # ordered pairs of distinct judges: nc·nk for c≠k, nc·(nc−1) for c=k
                pairs = nc * (nc - 1) if c == k else nc * nk
                if pairs:
                    o[(c, k)] += pairs / (m - 1)
    return dict(o)


def krippendorff_alpha(units: Iterable[Sequence[Label | None]]) -> float | None:
    """Krippendorff's alpha for nominal data, any number of judges, missing values allowed.

    α = 1 − D_o / D_e = 1 − (n − 1) · Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k, where o_ck is the
    coincidence matrix (:func:`coincidence_matrix`), n_c = Σ_k o_ck and n = Σ_c n_c
    (Krippendorff 2011, section C). With two judges and no missing values alpha differs from
    Cohen's kappa only by a small-sample correction.

    Args:
        units: one row per unit (item) with one entry per judge (the rows may differ in
            length); None marks a missing value. Note that this is the transpose of
            Krippendorff's judges-by-units table.

    Returns:
        α ≤ 1 (1 = perfect agreement, 0 = agreement at chance level); None when fewer than
        two pairable values exist or when every pairable value is the same label (D_e = 0).
    """
    o = coincidence_matrix(units)
    n_c: dict[Label, float] = defaultdict(float)
    for (c, _k), v in o.items():
        n_c[c] += v
    n = sum(n_c.values())
    if n < 2:
        return None
    observed = sum(v for (c, k), v in o.items() if c != k)
    expected = sum(n_c[c] * n_c[k] for c in n_c for k in n_c if c != k)
    if expected <= 0:
        return None
    return 1.0 - (n - 1) * observed / expected


def all_agree_rate(units: Iterable[Sequence[Label | None]]) -> float | None:
    """Share of units (with at least two labels) on which every judge gave the same label.

    Args:
        units: one row per unit with one entry per judge; None = missing.

    Returns:
        A share in [0, 1]; None when no unit has two labels.
    """
    n = agree = 0
    for row in units:
        vals = [v for v in row if v is not None]
        if len(vals) < 2:
            continue
        n += 1
        agree += len(set(vals)) == 1
    return agree / n if n else None


@dataclass(frozen=True)
class Confusion:
    """A 2×2 confusion table with ``pass`` as the positive class.

    Attributes:
        tp: expected pass, judged pass; fp: expected fail, judged pass (a false pass: the
            judge is lenient); fn: expected pass, judged fail (a false fail: too strict);
            tn: expected fail, judged fail.
    """

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    @property
    def total(self) -> int:
        """Number of items."""
        return self.tp + self.fp + self.fn + self.tn

    @property
    def accuracy(self) -> float | None:
        """(TP + TN) / total, or None when empty."""
        return (self.tp + self.tn) / self.total if self.total else None

    @property
    def precision(self) -> float | None:
        """TP / (TP + FP), or None when the judge passed nothing."""
        d = self.tp + self.fp
        return self.tp / d if d else None

    @property
    def recall(self) -> float | None:
        """TP / (TP + FN), or None when nothing was expected to pass."""
        d = self.tp + self.fn
        return self.tp / d if d else None

    @property
    def f1(self) -> float | None:
        """2·TP / (2·TP + FP + FN) (the harmonic mean of precision and recall), or None when
        there is neither a positive nor a predicted positive."""
        d = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / d if d else None

    def as_dict(self) -> dict[str, float | int | None]:
        """Counts and the derived figures, for JSON."""
        return {
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "tn": self.tn,
            "total": self.total,
            "accuracy": self.accuracy,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
        }


def confusion(expected: Sequence[bool], predicted: Sequence[bool]) -> Confusion:
    """Count a judge's verdicts against expected verdicts (True = pass).

    Args:
        expected: the known-correct verdicts.
        predicted: the judge's verdicts for the same items (decided ones only: map
            ``judge_error``/``unjudged`` away before calling).

    Returns:
        The :class:`Confusion` table.

    Raises:
        ValueError: the sequences differ in length, or hold something other than booleans.
    """
    if len(expected) != len(predicted):
        raise ValueError(
            f"expected and predicted differ in length ({len(expected)} vs {len(predicted)})"
        )
    tp = fp = fn = tn = 0
    for i, (e, p) in enumerate(zip(expected, predicted)):
        if not isinstance(e, bool) or not isinstance(p, bool):
            raise ValueError(f"item {i}: verdicts must be booleans, got {e!r} and {p!r}")
        if e and p:
            tp += 1
        elif p:
            fp += 1
        elif e:
            fn += 1
        else:
            tn += 1
    return Confusion(tp=tp, fp=fp, fn=fn, tn=tn)


@dataclass(frozen=True)
class ScorePoint:
    """One judge's grade of one trial: points earned and points possible."""

    passed_weight: float
    max_score: float

    @property
    def score(self) -> float:
        """s_t = passed / max (0 when max is 0)."""
        return self.passed_weight / self.max_score if self.max_score else 0.0


@dataclass(frozen=True)
class ScoreDeviation:
    """How far two judges' scores lie apart on the trials both scored.

    Attributes:
        n: trials scored by both.
        mean_abs_diff: mean over those trials of |s_A − s_B| (s in [0, 1]); None when n = 0.
        max_abs_diff: the largest |s_A − s_B|; None when n = 0.
        micro_a, micro_b: Σ passed points / Σ maximum points over those trials, per judge.
        micro_abs_diff: |micro_a − micro_b| (multiply by 100 for percentage points).
        micro_rel_diff: |micro_a − micro_b| / micro_b (relative to judge B, the reference);
            None when micro_b is 0.
        per_trial: trial → (s_A, s_B) for the paired trials.
    """

    n: int
    mean_abs_diff: float | None
    max_abs_diff: float | None
    micro_a: float | None
    micro_b: float | None
    micro_abs_diff: float | None
    micro_rel_diff: float | None
    per_trial: dict[str, tuple[float, float]] = field(default_factory=dict)


def score_deviation(
    a: Mapping[str, ScorePoint | None], b: Mapping[str, ScorePoint | None]
) -> ScoreDeviation:
    """Score deviation between judge A and judge B (B is the reference).

    Args:
        a, b: trial id → :class:`ScorePoint`, or None when that judge has no score for the
            trial (undecided rubrics). Only trials with a score from both judges count.

    Returns:
        The :class:`ScoreDeviation`.
    """
    keys = sorted(k for k in a if a[k] is not None and b.get(k) is not None)
    pa = {k: p for k in keys if (p := a[k]) is not None}
    pb = {k: p for k in keys if (p := b.get(k)) is not None}
    per = {k: (pa[k].score, pb[k].score) for k in keys}
    if not keys:
        return ScoreDeviation(0, None, None, None, None, None, None, {})
    diffs = [abs(x - y) for x, y in per.values()]
    ma = sum(pa[k].passed_weight for k in keys)
    mb = sum(pb[k].passed_weight for k in keys)
    mx_a = sum(pa[k].max_score for k in keys)
    mx_b = sum(pb[k].max_score for k in keys)
    micro_a = ma / mx_a if mx_a else None
    micro_b = mb / mx_b if mx_b else None
    micro_diff = abs(micro_a - micro_b) if micro_a is not None and micro_b is not None else None
    rel = micro_diff / micro_b if micro_diff is not None and micro_b else None
    return ScoreDeviation(
        n=len(keys),
        mean_abs_diff=sum(diffs) / len(diffs),
        max_abs_diff=max(diffs),
        micro_a=micro_a,
        micro_b=micro_b,
        micro_abs_diff=micro_diff,
        micro_rel_diff=rel,
        per_trial=per,
    )
