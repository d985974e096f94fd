"""Benchmark: reading every trial record and grade of a run directory through
:mod:`jobbench.rundir`, on a synthetic run where every trial holds many deliverables.

Builds ``--trials`` trial folders (each with ``--files`` small deliverables spread over a few
sub-folders, a trial.json and a grade), then times, in one process:

* ``RunDir.trials()`` (walk of the layout's depth + one read per trial.json),
* ``RunDir.grades(key)``,
* for comparison, a recursive ``rglob("trial.json")`` over ``trials/`` (how records were found
  before the store; it also walks every deliverable folder),

and prints seconds and the ratio rglob / store (> 1: the store's walk is faster).

    PYTHONPATH=src python benchmarks/rundir_scan.py [--trials 2000] [--files 50]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from jobbench.records import GradeRecord, TrialRecord, TrialStatus
from jobbench.rundir import RunDir, RunLock, trial_id


def build(root: Path, n_trials: int, n_files: int) -> RunDir:
    rd = RunDir(root / "run")
    tasks = {f"main/occ{i % 40}/task{i // 40 + 1}": "0" * 64 for i in range(max(1, n_trials // 4))}
    rd.write_lock(RunLock(tasks=tasks))
    task_ids = sorted(tasks)
    for n in range(n_trials):
        task = task_ids[n % len(task_ids)]
        rest = n // len(task_ids)
        tid = trial_id(task, "agent", f"m{rest % 4}", rest // 4 + 1)
        d = rd.reset_trial_dir(tid) / "deliverables"
        for j in range(n_files):
            p = d / f"part{j % 5}" / f"file{j}.txt"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("x")
        k = tid.split("/")
        rd.write_trial(
            TrialRecord(
                trial_id=tid,
                task_id=task,
                task_digest="0" * 64,
                agent="agent",
                model=k[3].split("@")[1],
                epoch=int(k[4].split("-")[1]),
                status=TrialStatus.ok,
            )
        )
        rd.write_grade(
            "checks",
            GradeRecord(
                trial_id=tid,
                task_id=task,
                judge={},
                rubrics=[],
                score=1.0,
                max_score=1.0,
                passed_weight=1.0,
                status="complete",
            ),
        )
    return rd


def timed(fn) -> tuple[float, int]:
    t0 = time.perf_counter()
    n = fn()
    return time.perf_counter() - t0, n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=2000)
    ap.add_argument("--files", type=int, default=50)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        rd = build(Path(tmp), args.trials, args.files)
        print(
            f"built {args.trials} trials × {args.files} deliverables in "
            f"{time.perf_counter() - t0:.1f} s"
        )
        store, n1 = timed(lambda: len(rd.trials().records))
        grades, n2 = timed(lambda: len(rd.grades("checks").records))
        rglob, n3 = timed(lambda: sum(1 for _ in rd.trials_dir.rglob("trial.json")))
        print(f"RunDir.trials():      {store:.3f} s for {n1} records")
        print(f"RunDir.grades(key):   {grades:.3f} s for {n2} grades")
        print(f"rglob('trial.json'):  {rglob:.3f} s to find {n3} files (no parsing)")
        print(f"ratio rglob / store walk+parse: {rglob / store:.2f}")


if __name__ == "__main__":
    main()
