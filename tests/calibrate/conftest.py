"""A small run graded by three judges, with every figure worked out by hand.

Dataset (split ``main``, occupation ``clerks``):
  T1 = main/clerks/task1: rubric 0 (weight 2, criteria 0.0 0.1), rubric 1 (weight 1, criterion 1.0)
  T2 = main/clerks/task2: rubric 0 (weight 3, criteria 0.0 0.1)

Verdicts (P pass, F fail, U unjudged), in the order T1 0.0, 0.1, 1.0 | T2 0.0, 0.1:
  big    (gpt-big.rubric.llm, the reference):  P P F | P F   scores T1 2/3, T2 0/3
         second opinions (checks): T1 0.0 check pass, T2 0.0 check fail
  cheap  (gpt-cheap.rubric.auto):              P F F | P F   scores T1 0/3, T2 0/3
  checks (checks):                             P U U | F U   no scores (unjudged)

Expected verdicts (the same as big): T1 P P F, T2 P F.

Usage per trial (calls, input, output, USD):
  big   T1 (2, 1000, 100, 0.02)   T2 (1, 500, 50, 0.01)    -> pass: 3 calls, 1650 tokens, $0.03
  cheap T1 (2, 1000, 100, 0.001)  T2 (1, 500, 50, 0.0005)  -> pass: 3 calls, 1650 tokens, $0.0015
  checks: no calls, $0
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jobbench.records import CriterionVerdict, GradedDeliverable, GradeRecord, RubricGrade, Usage

T1 = "main/clerks/task1"
T2 = "main/clerks/task2"
TR1 = f"{T1}/agent@m/epoch-1"
TR2 = f"{T2}/agent@m/epoch-1"
RUBRICS = {T1: [(2, 2), (1, 1)], T2: [(3, 2)]}  # (weight, number of criteria)
P, F, U, E = "pass", "fail", "unjudged", "judge_error"

BIG, CHEAP, CHECKS = "gpt-big.rubric.llm", "gpt-cheap.rubric.auto", "checks"
VERDICTS = {
    BIG: {TR1: [[P, P], [F]], TR2: [[P, F]]},
    CHEAP: {TR1: [[P, F], [F]], TR2: [[P, F]]},
    CHECKS: {TR1: [[P, U], [U]], TR2: [[F, U]]},
}
SECOND = {BIG: {(TR1, 0, 0): P, (TR2, 0, 0): F}}
USAGE = {
    BIG: {
        TR1: Usage(calls=2, input_tokens=1000, output_tokens=100, cost_usd=0.02),
        TR2: Usage(calls=1, input_tokens=500, output_tokens=50, cost_usd=0.01),
    },
    CHEAP: {
        TR1: Usage(calls=2, input_tokens=1000, output_tokens=100, cost_usd=0.001),
        TR2: Usage(calls=1, input_tokens=500, output_tokens=50, cost_usd=0.0005),
    },
    CHECKS: {TR1: Usage(), TR2: Usage()},
}
IDENTITY = {
    BIG: {"key": BIG, "model": "gpt-big", "mode": "rubric", "decide": "llm"},
    CHEAP: {"key": CHEAP, "model": "gpt-cheap", "mode": "rubric", "decide": "auto"},
    CHECKS: {"key": CHECKS, "model": None, "mode": None, "decide": "checks"},
}
EXPECTED = {TR1: {(0, 0): True, (0, 1): True, (1, 0): False}, TR2: {(0, 0): True, (0, 1): False}}


def criterion_text(task_id: str, r: int, c: int) -> str:
    return f"criterion {r}.{c} of {task_id}"


def make_dataset(root: Path) -> Path:
    for task_id, rubs in RUBRICS.items():
        d = root / task_id
        (d / "task_folder").mkdir(parents=True)
        (d / "task_folder" / "TASK_INSTRUCTIONS.txt").write_text(f"Do {task_id}.\n")
        (d / "task_card.md").write_text("card\n")
        rubrics = [
            {
                "rubric": f"Rubric {i} of {task_id}?",
                "weight": w,
                "criterion": [criterion_text(task_id, i, j) for j in range(n)],
            }
            for i, (w, n) in enumerate(rubs)
        ]
        (d / "RUBRICS.json").write_text(json.dumps({"rubrics": rubrics}))
    return root


def make_record(
    key: str,
    trial_id: str,
    verdicts: list[list[str]],
    *,
    usage: Usage | None = None,
    second: dict | None = None,
    reasoning: str | None = None,
    sha: str = "a" * 64,
) -> GradeRecord:
    task_id = trial_id.rsplit("/", 2)[0]
    weights = [w for w, _ in RUBRICS[task_id]]
    rubrics = []
    for i, (w, vs) in enumerate(zip(weights, verdicts)):
        crits = []
        for j, v in enumerate(vs):
            source = "none" if v == U else ("check" if key == CHECKS else "llm")
            cv = CriterionVerdict(
                rubric_index=i,
                criterion_index=j,
                verdict=v,
                source=source,
                reasoning=reasoning or f"{key} says {v} on {i}.{j}",
                evidence=f"quote {i}.{j}",
            )
            so = (second or {}).get((trial_id, i, j))
            if so is not None:
                cv.second_opinion = {
                    "source": "check",
                    "verdict": so,
                    "detail": f"check detail {i}.{j}",
                    "evidence": "",
                }
            crits.append(cv)
        passed = None if any(v in (U, E) for v in vs) else all(v == P for v in vs)
        rubrics.append(RubricGrade(index=i, id=str(i), weight=w, criteria=crits, passed=passed))
    if any(r.passed is None for r in rubrics):
        score, status = None, "unjudged"
    else:
        score, status = sum(r.weight for r in rubrics if r.passed) / sum(weights), "complete"
    return GradeRecord(
        trial_id=trial_id,
        task_id=task_id,
        judge=IDENTITY.get(key, {"key": key}),
        rubrics=rubrics,
        score=score,
        max_score=float(sum(weights)),
        passed_weight=float(sum(r.weight for r in rubrics if r.passed)),
        status=status,
        usage=usage or Usage(),
        deliverables=[GradedDeliverable(path="out.txt", sha256=sha, size=3)],
    )


def write_record(run: Path, key: str, rec: GradeRecord) -> Path:
    path = run / "grades" / key / f"{rec.trial_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(rec.model_dump_json(indent=2))
    return path


def build_run(root: Path, dataset: Path) -> Path:
    run = root / "run-x"
    run.mkdir(parents=True)
    (run / "lock.json").write_text(
        json.dumps({"dataset_root": str(dataset), "tasks": {}, "epochs": 1})
    )
    for key, per in VERDICTS.items():
        for tid, vs in per.items():
            write_record(
                run, key, make_record(key, tid, vs, usage=USAGE[key][tid], second=SECOND.get(key))
            )
    return run


@pytest.fixture(autouse=True)
def _isolated_judge_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No user judge settings leak into tests, and no test writes to ~/.cache."""
    import os

    for name in list(os.environ):
        if name.startswith(("JUDGE_", "JOBBENCH_JUDGE_")) or name == "OPENAI_API_KEY":
            monkeypatch.delenv(name, raising=False)
    # outside tmp_path: tests use tmp_path as a deliverable folder, and caches must not appear in it
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return make_dataset(tmp_path / "dataset")


@pytest.fixture
def run(tmp_path: Path, dataset: Path) -> Path:
    return build_run(tmp_path / "runs", dataset)
