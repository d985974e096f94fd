"""The decoy gate: each decoy deliverable set must get the verdicts its author expects.

A decoy is a plausible but wrong set of deliverables at ``taskN/solution/decoys/<name>/``
(e.g. one that uses the stale figure), with ``expected.json``::

    {"rubrics": [{"index": 0, "criteria": [true, false, …]}, …]}

giving the expected verdict of every criterion of every rubric (read by
:func:`jobbench.tasks.read_expected`, the reader judge calibration uses too; the gate also
requires every criterion to be stated, so a ``null`` or a rubric left out is a D2 problem).
The deliverables are the
decoy folder's files except ``expected.json`` (or, when present, the files under
``<name>/deliverables/``). Every criterion with a programmatic check is evaluated with
:func:`jobbench.judge.evaluate_check` and compared; criteria without a check are counted as
*unchecked* (only an LLM judge can decide them). This gate needs no runner and no LLM.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..tasks import (
    EXPECTED,
    SOLUTION,
    ExpectedVerdicts,
    Task,
    display_path,
    read_expected,
    unknown_problems,
)
from ._findings import Finding, GateResult, GateUnavailable, make_finding

DECOY_SCORE_LIMIT = 0.6
"""A decoy whose expected score reaches this share of the weight barely separates right from
wrong (sample-split rule: decoys score below 60 %)."""

Evaluate = Callable[..., Any]
"""``evaluate(check, deliverables_dir, extraction=None)`` returning
``CheckResult(passed, detail, evidence)``."""


def resolve_evaluate() -> Evaluate:
    """``jobbench.judge.evaluate_check`` (imported lazily to keep the gates import light)."""
    from ..judge import evaluate_check

    return evaluate_check


class DecoyVerdict(BaseModel):
    """Expected vs evaluated verdict of one criterion on one decoy."""

    rubric: int
    criterion: int
    expected: bool
    got: bool | None = None
    detail: str = ""
    evidence: str = ""


class DecoyOutcome(BaseModel):
    """One decoy's comparison.

    Attributes:
        name: decoy folder name.
        expected_score: chained score s_t implied by ``expected.json`` (0..1), or None when
            the file is invalid or leaves a criterion unknown.
        checked, unchecked, mismatches: criterion counts.
        verdicts: one entry per criterion (``got`` None when unchecked or unevaluable).
        problems: ``expected.json`` problems (D2 messages).
    """

    name: str
    expected_score: float | None = None
    checked: int = 0
    unchecked: int = 0
    mismatches: int = 0
    verdicts: list[DecoyVerdict] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)


def expected_decoy_score(task: Task, verdicts: ExpectedVerdicts) -> float | None:
    """s_t implied by a decoy's expected verdicts, by the chain rule of
    :func:`jobbench.scoring.verdict_score` (an unknown verdict makes it None).

    Args:
        task: the task (weights and requires).
        verdicts: (rubric index, criterion index) → True / False / None (not known), as
            :func:`jobbench.tasks.read_expected` returns them.
    """
    from ..scoring import verdict_score

    return verdict_score(task.rubrics, verdicts)[1].score


def decoy_dirs(task: Task) -> list[Path]:
    """``solution/decoys/<name>/`` folders of a task, sorted (symlinks ignored)."""
    d = task.root / SOLUTION / "decoys"
    if not d.is_dir() or d.is_symlink():
        return []
    return sorted(p for p in d.iterdir() if p.is_dir() and not p.is_symlink())


def _deliverables(decoy: Path, tmp: Path) -> Path:
    sub = decoy / "deliverables"
    if sub.is_dir() and not sub.is_symlink():
        return sub
    dest = tmp / decoy.name
    shutil.copytree(
        decoy,
        dest,
        symlinks=True,
        ignore=lambda d, names: [n for n in names if n == EXPECTED and Path(d) == decoy],
    )
    return dest


def evaluate_decoys(task: Task, evaluate: Evaluate | None = None) -> list[DecoyOutcome]:
    """Evaluate every decoy of ``task``.

    Args:
        task: the task.
        evaluate: the check evaluator (default: :func:`resolve_evaluate`).

    Returns:
        One :class:`DecoyOutcome` per decoy folder (empty when the task has none).

    Raises:
        GateUnavailable: no evaluator is available and the task has decoys.
    """
    dirs = decoy_dirs(task)
    if not dirs:
        return []
    evaluate = evaluate or resolve_evaluate()
    from ..extract import extract_dir

    outcomes: list[DecoyOutcome] = []
    with tempfile.TemporaryDirectory(prefix="jobbench-decoy-") as tmp:
        for d in dirs:
            parsed = read_expected(d / EXPECTED, task)
            expected = parsed.verdicts
            out = DecoyOutcome(name=d.name, problems=parsed.problems)
            if parsed.problems:
                outcomes.append(out)
                continue
            out.expected_score = expected_decoy_score(task, expected)
            out.problems = unknown_problems(d / EXPECTED, task, expected)
            if out.problems:  # a decoy states every criterion: nothing to compare otherwise
                outcomes.append(out)
                continue
            deliverables = _deliverables(d, Path(tmp))
            extraction = extract_dir(deliverables)
            for r in task.rubrics:
                for c in r.criteria:
                    v = DecoyVerdict(
                        rubric=r.index,
                        criterion=c.index,
                        expected=bool(expected[(r.index, c.index)]),
                    )
                    if c.check is None:
                        out.unchecked += 1
                    else:
                        out.checked += 1
                        try:
                            res = evaluate(c.check, deliverables, extraction)
                            v.got = bool(res.passed)
                            v.detail = str(getattr(res, "detail", "") or "")
                            v.evidence = str(getattr(res, "evidence", "") or "")
                        except Exception as exc:  # noqa: BLE001 - reported, never a pass
                            v.detail = f"check raised {type(exc).__name__}: {exc}"
                        if v.got is None or v.got != v.expected:
                            out.mismatches += 1
                    out.verdicts.append(v)
            outcomes.append(out)
    return outcomes


def decoy_gate(task: Task, evaluate: Evaluate | None = None) -> GateResult:
    """The decoy gate for one task: ``D1`` per mismatching criterion, ``D2`` per invalid
    ``expected.json``, ``D4`` when a decoy's expected score is ≥ 60 %, ``D3`` (info) per
    decoy with unchecked criteria. ``skip`` when the task has no decoys; ``error`` when no
    evaluator is available."""
    if not decoy_dirs(task):
        return GateResult.skipped("decoy", "no solution/decoys/ folder")
    try:
        outcomes = evaluate_decoys(task, evaluate)
    except GateUnavailable as exc:
        return GateResult.errored("decoy", str(exc))
    findings: list[Finding] = []
    base = task.root / SOLUTION / "decoys"
    for o in outcomes:
        file = display_path(base / o.name / EXPECTED)
        for p in o.problems:
            findings.append(make_finding("D2", p, task_id=task.id, file=file, where=o.name))
        for v in o.verdicts:
            if v.got is None and task.rubrics[v.rubric].criteria[v.criterion].check is None:
                continue
            if v.got != v.expected:
                got = "no verdict" if v.got is None else ("pass" if v.got else "fail")
                findings.append(
                    make_finding(
                        "D1",
                        f"decoy {o.name!r}: rubrics[{v.rubric}].criterion[{v.criterion}] expected "
                        f"{'pass' if v.expected else 'fail'}, check says {got}"
                        + (f" ({v.detail})" if v.detail else ""),
                        task_id=task.id,
                        file=file,
                        where=f"rubrics[{v.rubric}].criterion[{v.criterion}]",
                    )
                )
        if o.expected_score is not None and o.expected_score >= DECOY_SCORE_LIMIT:
            findings.append(
                make_finding(
                    "D4",
                    f"decoy {o.name!r} is expected to score {o.expected_score:.0%}",
                    task_id=task.id,
                    file=file,
                    where=o.name,
                )
            )
        if o.unchecked:
            findings.append(
                make_finding(
                    "D3",
                    f"decoy {o.name!r}: {o.unchecked} criterion(s) have no check",
                    task_id=task.id,
                    file=file,
                    where=o.name,
                )
            )
    metrics = {
        "decoys": {
            o.name: {
                "expected_score": o.expected_score,
                "checked": o.checked,
                "unchecked": o.unchecked,
                "mismatches": o.mismatches,
            }
            for o in outcomes
        }
    }
    return GateResult.from_findings("decoy", findings, metrics=metrics)
