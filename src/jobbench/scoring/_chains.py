"""Chained rubric scoring, computed in code from criterion verdicts (paper §grading).

A rubric item r earns its weight w_r only if every criterion in its chain C_r passes and
every rubric it ``requires`` (DESIGN §3) passes:

    z_r = Π_{c ∈ C_r} 1[c passes] · Π_{q ∈ requires(r)} z_q,
    s_t = Σ_r w_r z_r / Σ_r w_r.

Fail-closed three-valued logic: a verdict is ``pass``, ``fail`` or undecided
(``judge_error``: no valid verdict after retries; ``unjudged``: nobody was asked). z_r is
None ("undecided") when any verdict on its extended chain (its own criteria and, transitively,
the criteria of the rubrics it requires) is undecided, even if another link failed; s_t is
None when any z_r is None. An undecided verdict is never read as a pass nor as a fail, so a
regrade can only fill in, never silently change, a decided score.

``official`` rule: reproduces the public JobBench judge, where the judge model's own overall
rubric verdict decides z_r (criteria and ``requires`` do not enter; public RUBRICS.json files
have no ``requires``). A missing model verdict is undecided.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

UNDECIDED = ("judge_error", "unjudged")


@dataclass(frozen=True)
class ChainValue:
    """z_r of one rubric.

    Attributes:
        passed: True/False, or None when undecided.
        chain_break: ``criterion:<j>`` or ``requires:<index>`` for the first failed link
            (own criteria first, then requirements), or None; set even when ``passed`` is
            None because another link is undecided.
        undecided: ``judge_error`` or ``unjudged`` when ``passed`` is None (judge_error wins
            when both occur on the extended chain), else None.
    """

    passed: bool | None
    chain_break: str | None = None
    undecided: str | None = None


@dataclass(frozen=True)
class TaskScore:
    """s_t of one task.

    Attributes:
        score: Σ w_r z_r / Σ w_r in [0, 1], or None when any z_r is undecided or Σ w_r = 0.
        passed_weight: Σ w_r over rubrics with z_r True (points).
        max_score: Σ w_r (points).
        undecided_weight: Σ w_r over rubrics with z_r None (points).
        passed_count, decided_count, total_count: rubric counts.
    """

    score: float | None
    passed_weight: float
    max_score: float
    undecided_weight: float
    passed_count: int
    decided_count: int
    total_count: int


def _merge_undecided(a: str | None, b: str | None) -> str | None:
    if "judge_error" in (a, b):
        return "judge_error"
    return a or b


def chain_values(
    verdicts: Sequence[Sequence[str]],
    requires: Sequence[Sequence[int]] | None = None,
) -> list[ChainValue]:
    """Compute z_r for every rubric of a task.

    Args:
        verdicts: per rubric, its criterion verdicts in order (``pass``, ``fail``,
            ``judge_error``, ``unjudged``).
        requires: per rubric, 0-based indexes of the rubrics it requires (default none).

    Returns:
        One :class:`ChainValue` per rubric, in order.

    Raises:
        ValueError: a verdict string is unknown, a required index is out of range, a rubric
            has no criteria, or ``requires`` has a cycle (naming the rubric).
    """
    n = len(verdicts)
    reqs = [list(r) for r in (requires or [[] for _ in range(n)])]
    if len(reqs) != n:
        raise ValueError(f"requires has {len(reqs)} entries for {n} rubrics")
    memo: dict[int, ChainValue] = {}
    visiting: set[int] = set()

    def value(r: int) -> ChainValue:
        if r in memo:
            return memo[r]
        if r in visiting:
            raise ValueError(f"rubric {r}: requires cycle")
        visiting.add(r)
        crit = list(verdicts[r])
        if not crit:
            raise ValueError(f"rubric {r}: no criterion verdicts")
        undecided: str | None = None
        chain_break: str | None = None
        for j, v in enumerate(crit):
            if v == "fail":
                chain_break = chain_break or f"criterion:{j}"
            elif v in UNDECIDED:
                undecided = _merge_undecided(undecided, v)
            elif v != "pass":
                raise ValueError(f"rubric {r} criterion {j}: unknown verdict {v!r}")
        for q in reqs[r]:
            if not 0 <= q < n:
                raise ValueError(f"rubric {r}: requires unknown rubric index {q}")
            sub = value(q)
            if sub.passed is None:
                undecided = _merge_undecided(undecided, sub.undecided)
            elif sub.passed is False:
                chain_break = chain_break or f"requires:{q}"
        visiting.discard(r)
        if undecided:
            out = ChainValue(passed=None, chain_break=chain_break, undecided=undecided)
        else:
            out = ChainValue(passed=chain_break is None, chain_break=chain_break)
        memo[r] = out
        return out

    return [value(r) for r in range(n)]


def official_values(
    model_verdicts: Sequence[bool | None], errored: Sequence[bool] | None = None
) -> list[ChainValue]:
    """z_r under the public judge's rule: the judge model's overall rubric verdict decides.

    Args:
        model_verdicts: per rubric, the model's ``rubric_passed`` (None when it gave none).
        errored: per rubric, True when its call ended in judge_error (then undecided).

    Returns:
        One :class:`ChainValue` per rubric (``chain_break`` = ``model`` when it failed).
    """
    out = []
    for r, mv in enumerate(model_verdicts):
        if (errored and errored[r]) or mv is None:
            out.append(ChainValue(passed=None, undecided="judge_error"))
        else:
            out.append(ChainValue(passed=bool(mv), chain_break=None if mv else "model"))
    return out


def task_score(weights: Sequence[float], values: Sequence[ChainValue | bool | None]) -> TaskScore:
    """s_t = Σ w_r z_r / Σ w_r.

    Args:
        weights: w_r per rubric (points, ≥ 0).
        values: z_r per rubric (:class:`ChainValue` or bool/None).

    Returns:
        :class:`TaskScore`; ``score`` is None when any rubric is undecided or the weights sum
        to 0.

    Raises:
        ValueError: lengths differ.
    """
    if len(weights) != len(values):
        raise ValueError(f"{len(weights)} weights for {len(values)} rubric values")
    zs = [v.passed if isinstance(v, ChainValue) else v for v in values]
    max_score = float(sum(weights))
    passed_weight = float(sum(w for w, z in zip(weights, zs) if z is True))
    undecided_weight = float(sum(w for w, z in zip(weights, zs) if z is None))
    any_undecided = any(z is None for z in zs)
    score = None if any_undecided or max_score <= 0 else passed_weight / max_score
    return TaskScore(
        score=score,
        passed_weight=passed_weight,
        max_score=max_score,
        undecided_weight=undecided_weight,
        passed_count=sum(1 for z in zs if z is True),
        decided_count=sum(1 for z in zs if z is not None),
        total_count=len(zs),
    )


def disagrees(model_verdict: bool | None, criterion_verdicts: Sequence[str]) -> bool:
    """True when the model's overall rubric verdict contradicts the criteria it judged.

    The criteria imply ``pass`` when all pass and ``fail`` when any fails; undecided
    criteria make the implication unknown unless one fails. No model verdict → False.
    """
    if model_verdict is None or not criterion_verdicts:
        return False
    if any(v == "fail" for v in criterion_verdicts):
        implied: bool | None = False
    elif all(v == "pass" for v in criterion_verdicts):
        implied = True
    else:
        implied = None
    return implied is not None and implied != model_verdict
