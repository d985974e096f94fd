"""A small, hand-computed results set built as real run directories.

Dataset (4 tasks, max points in brackets):
  T1 main/biostatisticians/task1      (15 Comp. Math.)  weights 10, 20, 10  [40]
  T2 main/civil_engineers/task1       (17 Arch. Eng.)   weights 30, 30      [60]
  T3 main/lawyers/task1               (23 Legal)        weights 50, 50      [100]
  T4 main/management_analysts/task1   (13 Bus. Fin.)    weight 20           [20]
Every rubric has 2 criteria.

run-a (epochs 2, judge key ``checks``):
  alpha@m1  T1: 30/40, 40/40 -> s=0.875 | T2: 30/60, 30/60 -> 0.5 | T3: 0, judge_error -> 0
            T4: no trial (missing)
            micro = (35+30+0+0)/220 = 65/220; macro = (0.875+0.5+0+0)/4 = 0.34375
  beta@m2   T1: 10/40, 0 -> 0.125 | T2: 1, 1 | T3: 0.5, infra_error -> 0.5 | T4: 1, 1
            micro = (5+60+50+20)/220 = 135/220; macro = 2.625/4 = 0.65625
run-b (epochs 1):
  gamma (model "-")  T1: 1 | T2: no_deliverable -> 0 | T3: ungraded (missing) | T4: unjudged (missing)
            micro = 40/220; macro = 0.25
Effort: alpha trials 100 s, 10 turns, $0.10; beta trials 240 s, 24 turns, $0.30 (ratio 2.4).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jobbench.records import (
    CriterionVerdict,
    DeliverableFile,
    GradeRecord,
    RubricGrade,
    TrialRecord,
    TrialStatus,
    Usage,
)

T1 = "main/biostatisticians/task1"
T2 = "main/civil_engineers/task1"
T3 = "main/lawyers/task1"
T4 = "main/management_analysts/task1"
WEIGHTS = {T1: [10, 20, 10], T2: [30, 30], T3: [50, 50], T4: [20]}
MAXIMA = {t: sum(w) for t, w in WEIGHTS.items()}

P, F, E, U = "pass", "fail", "judge_error", "unjudged"
HOSTILE_EVIDENCE = '<script>alert("x")</script><img src=x onerror=alert(1)> & "quotes"'
HOSTILE_REASONING = '</div></td></table><h1 id="pwned">pwned</h1>'


def make_dataset(root: Path) -> Path:
    for task_id, weights in WEIGHTS.items():
        d = root / task_id
        (d / "task_folder").mkdir(parents=True)
        (d / "task_folder" / "TASK_INSTRUCTIONS.txt").write_text(f"Do {task_id}.\n")
        (d / "task_card.md").write_text("card\n")
        rubrics = [
            {
                "rubric": f"Rubric {i + 1} of {task_id}?",
                "weight": w,
                "criterion": [
                    f"criterion {i + 1}.1 of {task_id}",
                    f"criterion {i + 1}.2 of {task_id}",
                ],
            }
            for i, w in enumerate(weights)
        ]
        (d / "RUBRICS.json").write_text(json.dumps({"rubrics": rubrics}))
    return root


def write_lock(run: Path, dataset: Path, agents: list[tuple[str, str]], epochs: int) -> None:
    from jobbench.tasks import load_dataset, task_digest

    ds = load_dataset(dataset)
    lock = {
        "harness_version": "test",
        "created_at": "2026-01-01T00:00:00Z",
        "dataset_root": str(dataset),
        "tasks": {t.id: task_digest(t) for t in ds.tasks},
        "agents": [{"agent": a, "model": m, "settings": {}} for a, m in agents],
        "epochs": epochs,
        "config": {},
    }
    run.mkdir(parents=True, exist_ok=True)
    (run / "lock.json").write_text(json.dumps(lock, indent=2))


def write_trial(
    run: Path,
    task_id: str,
    agent: str,
    model: str,
    epoch: int,
    *,
    status: str = "ok",
    deliverables: bool = True,
    wall: float | None = None,
    turns: int | None = None,
    cost: float | None = None,
    tokens: tuple[int, int] = (1000, 200),
) -> str:
    trial_id = f"{task_id}/{agent}@{model}/epoch-{epoch}"
    d = run / "trials" / trial_id
    (d / "deliverables").mkdir(parents=True)
    files = []
    if deliverables:
        (d / "deliverables" / "out.txt").write_text("answer\n")
        files = [DeliverableFile(path="out.txt", size=7, sha256="0" * 64)]
    if turns:
        (d / "trajectory.jsonl").write_text(
            "".join(json.dumps({"turn": i}) + "\n" for i in range(turns))
        )
    rec = TrialRecord(
        trial_id=trial_id,
        task_id=task_id,
        task_digest=json.loads((run / "lock.json").read_text())["tasks"][task_id],
        agent=agent,
        model=model,
        epoch=epoch,
        status=TrialStatus(status),
        deliverables=files,
        wall_seconds=wall,
        turns=turns,
        usage=Usage(
            calls=turns or 0, input_tokens=tokens[0], output_tokens=tokens[1], cost_usd=cost
        ),
        error=None if status == "ok" else f"{status} happened",
    )
    (d / "trial.json").write_text(rec.model_dump_json(indent=2))
    return trial_id


def write_grade(
    run: Path,
    key: str,
    trial_id: str,
    verdicts: list[list[str]],
    *,
    evidence: str = "quote",
    reasoning: str = "because",
) -> GradeRecord:
    task_id = trial_id.rsplit("/", 2)[0]
    weights = WEIGHTS[task_id]
    assert len(verdicts) == len(weights)
    rubrics = []
    for i, (w, vs) in enumerate(zip(weights, verdicts)):
        crits = [
            CriterionVerdict(
                rubric_index=i,
                criterion_index=j,
                verdict=v,
                source="check",
                reasoning=reasoning,
                evidence=evidence,
                evidence_found=True,
            )
            for j, v in enumerate(vs)
        ]
        if any(v in (E, U) for v in vs):
            passed = None
        else:
            passed = all(v == P for v in vs)
        brk = None
        if passed is False:
            brk = f"criterion:{next(j for j, v in enumerate(vs) if v == F)}"
        rubrics.append(
            RubricGrade(
                index=i, id=str(i), weight=w, criteria=crits, passed=passed, chain_break=brk
            )
        )
    if any(r.passed is None for r in rubrics):
        flat = [v for vs in verdicts for v in vs]
        status = "judge_error" if E in flat else "unjudged"
        score = None
    else:
        status, score = "complete", sum(r.weight for r in rubrics if r.passed) / sum(weights)
    g = GradeRecord(
        trial_id=trial_id,
        task_id=task_id,
        judge={"mode": "checks"},
        rubrics=rubrics,
        score=score,
        max_score=float(sum(weights)),
        passed_weight=float(sum(r.weight for r in rubrics if r.passed)),
        status=status,
        usage=Usage(calls=len(weights), input_tokens=1000, output_tokens=100, cost_usd=0.01),
    )
    path = run / "grades" / key / f"{trial_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(g.model_dump_json(indent=2))
    return g


ALL_PASS = {T1: [[P, P]] * 3, T2: [[P, P]] * 2, T3: [[P, P]] * 2, T4: [[P, P]]}


def build_run_a(root: Path, dataset: Path, key: str = "checks") -> Path:
    run = root / "run-a"
    write_lock(run, dataset, [("alpha", "m1"), ("beta", "m2")], epochs=2)

    def alpha(task, epoch, verdicts, **kw):
        tid = write_trial(run, task, "alpha", "m1", epoch, wall=100.0, turns=10, cost=0.10)
        write_grade(run, key, tid, verdicts, **kw)

    def beta(task, epoch, verdicts, status="ok"):
        tid = write_trial(
            run, task, "beta", "m2", epoch, status=status, wall=240.0, turns=24, cost=0.30
        )
        if verdicts is not None:
            write_grade(run, key, tid, verdicts)

    alpha(T1, 1, [[P, P], [P, P], [P, F]], evidence=HOSTILE_EVIDENCE, reasoning=HOSTILE_REASONING)
    alpha(T1, 2, ALL_PASS[T1])
    alpha(T2, 1, [[P, P], [F, P]])
    alpha(T2, 2, [[P, P], [F, F]])
    alpha(T3, 1, [[F, F], [P, F]])
    alpha(T3, 2, [[E, P], [P, P]])
    beta(T1, 1, [[P, P], [P, F], [F, P]])
    beta(T1, 2, [[F, P], [F, F], [P, F]])
    beta(T2, 1, ALL_PASS[T2])
    beta(T2, 2, ALL_PASS[T2])
    beta(T3, 1, [[P, P], [F, P]])
    beta(T3, 2, None, status="infra_error")
    beta(T4, 1, ALL_PASS[T4])
    beta(T4, 2, ALL_PASS[T4])
    return run


def build_run_b(root: Path, dataset: Path, key: str = "checks") -> Path:
    run = root / "run-b"
    write_lock(run, dataset, [("gamma", "-")], epochs=1)
    tid = write_trial(run, T1, "gamma", "-", 1, wall=50.0, turns=5)
    write_grade(run, key, tid, ALL_PASS[T1])
    write_trial(
        run, T2, "gamma", "-", 1, status="no_deliverable", deliverables=False, wall=50.0, turns=5
    )
    write_trial(run, T3, "gamma", "-", 1, wall=50.0, turns=5)
    tid = write_trial(run, T4, "gamma", "-", 1, wall=50.0, turns=5)
    write_grade(run, key, tid, [[P, U]])
    return run


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return make_dataset(tmp_path / "dataset")


@pytest.fixture
def run_a(tmp_path: Path, dataset: Path) -> Path:
    return build_run_a(tmp_path / "runs", dataset)


@pytest.fixture
def run_b(tmp_path: Path, dataset: Path) -> Path:
    return build_run_b(tmp_path / "runs", dataset)
