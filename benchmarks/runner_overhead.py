"""Runner overhead and throughput.

Prints:

* per-trial harness overhead with the ``null`` agent (workspace copy, sandbox probe,
  trajectory, deliverable collection, atomic trial.json), i.e. wall time of a trial that
  does nothing, plus its parts: workspace set-up + collection, and one empty sandboxed
  command (``true``);
* throughput (trials per second) with 1, 2 and 4 concurrent trials, for the ``null``
  agent and for the ``oracle`` agent running a small Python solution (reads a CSV, writes
  a CSV) inside the sandbox.

Usage: ``PYTHONPATH=src python benchmarks/runner_overhead.py [--tasks 8] [--epochs 3]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from jobbench.runner import AgentSpec, RunConfig, run_trials
from jobbench.sandbox import Sandbox, collect_deliverables, prepare_workspace, resolve_backend

SOLVE = """
import argparse, csv
from pathlib import Path
p = argparse.ArgumentParser(); p.add_argument("--workspace"); p.add_argument("--output"); a = p.parse_args()
rows = list(csv.reader(open(Path(a.workspace) / "data.csv")))
with open(Path(a.output) / "sum.csv", "w", newline="") as f:
    csv.writer(f).writerow(["total", sum(float(r[1]) for r in rows[1:])])
"""


def make_dataset(root: Path, n_tasks: int) -> Path:
    split = root / "bench"
    for i in range(1, n_tasks + 1):
        t = split / "budget_analysts" / f"task{i}"
        tf = t / "task_folder"
        tf.mkdir(parents=True)
        (tf / "TASK_INSTRUCTIONS.txt").write_text("Sum the amounts in data.csv into sum.csv.\n")
        (tf / "data.csv").write_text(
            "item,amount\n" + "".join(f"i{k},{k * 1.5}\n" for k in range(200))
        )
        for k in range(3):
            (tf / f"ref{k}.txt").write_text("reference text\n" * 500)
        (t / "RUBRICS.json").write_text(
            json.dumps({"rubrics": [{"rubric": "sum?", "weight": 1, "criterion": ["ok"]}]})
        )
        (t / "task_card.md").write_text("card\n")
        (t / "solution").mkdir()
        (t / "solution" / "solve.py").write_text(SOLVE)
    return split


def timed_run(
    dataset: Path, runs: Path, name: str, agent: str, epochs: int, max_trials: int
) -> tuple[int, float]:
    cfg = RunConfig(
        dataset=dataset,
        agents=[AgentSpec(agent)],
        run_dir=runs / name,
        epochs=epochs,
        max_trials=max_trials,
    )
    t0 = time.perf_counter()
    s = run_trials(cfg)
    return s.ran, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--epochs", type=int, default=3)
    args = ap.parse_args()
    backend = resolve_backend("auto")
    with tempfile.TemporaryDirectory(prefix="jb-bench-") as tmp:
        tmp = Path(tmp)
        ds = make_dataset(tmp / "data", args.tasks)
        runs = tmp / "runs"
        # parts of the overhead
        setup = []
        sandbox_start = []
        for i in range(20):
            t0 = time.perf_counter()
            ws = prepare_workspace(
                ds / "budget_analysts" / "task1" / "task_folder", tmp / "scratch"
            )
            collect_deliverables(ws.output, tmp / f"d{i}")
            t1 = time.perf_counter()
            Sandbox(ws.workspace, home=ws.home, backend=backend).run(["true"])
            t2 = time.perf_counter()
            ws.cleanup()
            setup.append(t1 - t0)
            sandbox_start.append(t2 - t1)
        n, secs = timed_run(ds, runs, "null-seq", "null", args.epochs, 1)
        print(
            f"sandbox backend: {backend}; {args.tasks} tasks x {args.epochs} epochs; python {sys.version.split()[0]}"
        )
        print(f"workspace set-up + collection: median {statistics.median(setup) * 1000:.1f} ms")
        print(
            f"empty sandboxed command (true): median {statistics.median(sandbox_start) * 1000:.1f} ms"
        )
        print(
            f"null-agent trial, end to end (harness overhead): {secs / n * 1000:.1f} ms per trial ({n} trials)"
        )
        print()
        print(f"{'agent':8} {'concurrent':>10} {'trials':>7} {'seconds':>8} {'trials/s':>9}")
        for agent in ("null", "oracle"):
            for j in (1, 2, 4):
                n, secs = timed_run(ds, runs, f"{agent}-{j}", agent, args.epochs, j)
                print(f"{agent:8} {j:>10} {n:>7} {secs:>8.2f} {n / secs:>9.1f}")


if __name__ == "__main__":
    main()
