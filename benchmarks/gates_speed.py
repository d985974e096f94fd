"""Speed of the quality gates.

Prints, for a synthetic dataset (or ``datasets/sample`` when given as argument):
- static gates (validate + audit + lint) seconds per task;
- solve trial seconds per 1,000 grade records.

Usage: PYTHONPATH=src python benchmarks/gates_speed.py [DATASET] [--tasks N] [--rows R]
The synthetic tasks each hold a ledger CSV of R rows (default 20,000, about 1 MB), a memo
and 3 rubrics × 4 criteria; the solve trial reads N tasks × 3 agents × 4 epochs grades.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from jobbench._io import atomic_write_json
from jobbench.gates import GateOptions, run_gates, solve_trial
from jobbench.records import CriterionVerdict, GradeRecord, RubricGrade
from jobbench.tasks import load_dataset

OCC = "bookkeeping_accounting_and_auditing_clerks"


def make_dataset(root: Path, n_tasks: int, rows: int) -> None:
    rng = random.Random(7)
    vendors = [f"Vendor {i:03d}" for i in range(200)]
    for n in range(1, n_tasks + 1):
        d = root / "sample" / OCC / f"task{n}"
        ws = d / "task_folder"
        ws.mkdir(parents=True)
        (ws / "TASK_INSTRUCTIONS.txt").write_text(
            "Reconcile ledger.csv against the note in memo.md.\n\nDeliverables:\n"
            "- summary.md: the total overpayment in US dollars and the vendor paid twice.\n"
        )
        lines = ["date,vendor,amount,reference"] + [
            f"2024-03-{rng.randint(1, 28):02d},{rng.choice(vendors)},{rng.randint(100, 99999) / 100:.2f},INV-{i}"
            for i in range(rows)
        ]
        (ws / "ledger.csv").write_text("\n".join(lines) + "\n")
        (ws / "memo.md").write_text("We think one vendor was paid twice in March. " * 50)
        (d / "task_card.md").write_text("card")
        rubrics = [
            {
                "rubric": f"Question {k}?",
                "weight": 2,
                "criterion": [
                    f"The memo summary.md names Vendor {k:03d} as the vendor paid twice in March {j}."
                    for j in range(4)
                ],
            }
            for k in range(3)
        ]
        (d / "RUBRICS.json").write_text(json.dumps({"rubrics": rubrics}))
        sol = d / "solution" / "expected"
        sol.mkdir(parents=True)
        (sol / "summary.md").write_text(
            "The duplicate payment went to Vendor 001 and totals $1,250.00. " * 20
        )


def make_runs(run: Path, ds_root: Path) -> int:
    ds = load_dataset(ds_root)
    rng = random.Random(3)
    n = 0
    for t in ds.tasks:
        for agent in ("a", "b", "c"):
            for epoch in range(1, 5):
                trial = f"{t.id}/{agent}@m/epoch-{epoch}"
                rubrics = [
                    RubricGrade(
                        index=r.index,
                        id=r.id,
                        weight=r.weight,
                        passed=False,
                        criteria=[
                            CriterionVerdict(
                                rubric_index=r.index,
                                criterion_index=c.index,
                                verdict=rng.choice(["pass", "fail", "fail"]),
                                source="check",
                            )
                            for c in r.criteria
                        ],
                    )
                    for r in t.rubrics
                ]
                atomic_write_json(
                    run / "grades" / "checks" / f"{trial}.json",
                    GradeRecord(
                        trial_id=trial,
                        task_id=t.id,
                        judge={},
                        rubrics=rubrics,
                        score=0.0,
                        max_score=t.total_weight,
                        passed_weight=0.0,
                        status="complete",
                    ),
                )
                n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset", nargs="?")
    ap.add_argument("--tasks", type=int, default=20)
    ap.add_argument("--rows", type=int, default=20_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.dataset) if args.dataset else Path(tmp) / "ds"
        if not args.dataset:
            make_dataset(root, args.tasks, args.rows)
        n_tasks = len(load_dataset(root).tasks)
        t0 = time.perf_counter()
        rep = run_gates(root, GateOptions(gates=["validate", "audit", "lint"]))
        dt = time.perf_counter() - t0
        print(
            f"static gates (validate+audit+lint): {n_tasks} tasks in {dt:.2f} s = {dt / n_tasks * 1000:.0f} ms/task "
            f"(exit code {rep.exit_code})"
        )
        run = Path(tmp) / "run"
        n = make_runs(run, root)
        t0 = time.perf_counter()
        st = solve_trial([run], check_digests=False)
        dt = time.perf_counter() - t0
        print(
            f"solve trial: {n} grade records in {dt:.2f} s = {dt / n * 1000 * 1000:.0f} ms per 1,000 records "
            f"(reachability {st.reachability:.1%})"
        )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
