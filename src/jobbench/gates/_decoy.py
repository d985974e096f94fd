"""The decoy gate: each decoy deliverable set must get the verdicts its author expects.

A decoy is a plausible but wrong set of deliverables at ``taskN/solution/decoys/<name>/``
(e.g. one that uses the stale figure), with ``expected.json``::

    {"rubrics": [{"index": 0, "criteria": [true, false, …]}, …]}

giving the expected verdict of every criterion of every rubric. The deliverables are the
decoy folder's files except ``expected.json`` (or, when present, the files under
``<name>/deliverables/``). Every criterion with a programmatic check is evaluated with
:func:`jobbench.judge.evaluate_check` and compared; criteria without a check are counted as
*unchecked* (only an LLM judge can decide them). This gate needs no runner and no LLM.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..tasks import SOLUTION, Task, display_path
from ._findings import Finding, GateResult, GateUnavailable, make_finding

EXPECTED = "expected.json"
DECOY_SCORE_LIMIT = 0.6
"""A decoy whose expected score reaches this share of the weight barely separates right from
wrong (sample-split rule: decoys score below 60 %)."""

Evaluate = Callable[..., Any]
"""``evaluate(check, deliverables_dir, extraction=None) -> CheckResult(passed, detail, evidence)``."""


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
            the file is invalid.
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


def chained_score(task: Task, verdicts: dict[int, list[bool]]) -> float:
    """s_t = Σ w_r z_r / Σ w_r with z_r = all criteria of r pass and every rubric in
    ``requires`` (transitively) passes (DESIGN §1 step 4, §3).

    Args:
        task: the task (weights and requires).
        verdicts: rubric index -> one bool per criterion; a missing rubric counts as failed.
    """
    memo: dict[int, bool] = {}

    def z(i: int, stack: frozenset[int] = frozenset()) -> bool:
        if i in memo:
            return memo[i]
        if i in stack:  # cycles are rejected by validation; be safe
            return False
        r = task.rubrics[i]
        own = verdicts.get(i)
        ok = bool(own) and len(own) == len(r.criteria) and all(own)
        ok = ok and all(z(k, stack | {i}) for k in r.requires)
        memo[i] = ok
        return ok

    total = task.total_weight
    if total <= 0:
        return 0.0
    return sum(r.weight for r in task.rubrics if z(r.index)) / total


def read_expected(task: Task, path: Path) -> tuple[dict[int, list[bool]], list[str]]:
    """Parse a decoy's ``expected.json`` against the task's rubrics.

    Returns:
        ``(verdicts, problems)``: rubric index -> bools, and every problem found (each
        naming the JSON path). Verdicts are usable only when ``problems`` is empty.
    """
    problems: list[str] = []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, [f"{display_path(path)}: missing"]
    except (OSError, UnicodeDecodeError) as exc:
        return {}, [f"{display_path(path)}: cannot be read ({exc})"]
    except json.JSONDecodeError as exc:
        return {}, [
            f"{display_path(path)}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ]
    items = data.get("rubrics") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return {}, [f"{display_path(path)}: rubrics: must be a list of {{index, criteria}} objects"]
    out: dict[int, list[bool]] = {}
    attempted: set[int] = set()
    for k, item in enumerate(items):
        where = f"rubrics[{k}]"
        if not isinstance(item, dict):
            problems.append(f"{display_path(path)}: {where}: must be an object")
            continue
        idx = item.get("index")
        if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx < len(task.rubrics):
            problems.append(
                f"{display_path(path)}: {where}.index: must be a rubric index below "
                f"{len(task.rubrics)}, got {idx!r}"
            )
            continue
        if idx in attempted:
            problems.append(f"{display_path(path)}: {where}.index: rubric {idx} listed twice")
            continue
        attempted.add(idx)
        crit = item.get("criteria")
        n = len(task.rubrics[idx].criteria)
        if not isinstance(crit, list) or not all(isinstance(x, bool) for x in crit):
            problems.append(f"{display_path(path)}: {where}.criteria: must be a list of true/false")
            continue
        if len(crit) != n:
            problems.append(
                f"{display_path(path)}: {where}.criteria: has {len(crit)} verdicts, "
                f"rubric {idx} has {n} criteria"
            )
            continue
        out[idx] = crit
    for r in task.rubrics:
        if r.index not in attempted:
            problems.append(f"{display_path(path)}: no expected verdicts for rubric {r.index}")
    return out, problems


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
            expected, problems = read_expected(task, d / EXPECTED)
            out = DecoyOutcome(name=d.name, problems=problems)
            if problems:
                outcomes.append(out)
                continue
            out.expected_score = chained_score(task, expected)
            deliverables = _deliverables(d, Path(tmp))
            extraction = extract_dir(deliverables)
            for r in task.rubrics:
                for c in r.criteria:
                    v = DecoyVerdict(
                        rubric=r.index, criterion=c.index, expected=expected[r.index][c.index]
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
