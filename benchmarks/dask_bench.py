"""Throughput of the local pool and of Dask workers over the sample split.

For the ``null`` and ``oracle`` agents over ``datasets/sample/main`` (8 tasks, repeated over
``--epochs`` epochs so that each measurement has enough trials), prints trials per second
of :func:`jobbench.runner.run_trials` with

* the local pool (``--executor local``) with 1 and 2 concurrent trials, and
* ``--executor dask-local`` with 2 worker processes of 1 thread each (cluster start-up is
  measured separately and not counted in the throughput),

and the grading throughput (programmatic checks only, trials graded per second) of the
oracle trials in this process and on the 2 Dask workers. Each figure is the median of
``--repeats`` runs in fresh run directories, with the range.

Usage: ``PYTHONPATH=src python benchmarks/dask_bench.py [--repeats 3] [--null-epochs 6] [--oracle-epochs 2]``
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from jobbench.judge import JudgeConfig, grade_run
from jobbench.runner import AgentSpec, RunConfig, run_trials
from jobbench.runner._executor import LocalExecutor

SAMPLE = Path(__file__).resolve().parents[1] / "datasets" / "sample" / "main"


def run_once(
    executor, runs: Path, name: str, agent: str, epochs: int, scratch: Path
) -> tuple[int, float, Path]:
    cfg = RunConfig(
        dataset=SAMPLE,
        agents=[AgentSpec(agent)],
        run_dir=runs / name,
        epochs=epochs,
        max_trials=getattr(executor, "max_trials", 1),
        scratch_root=scratch,
    )
    t0 = time.perf_counter()
    s = run_trials(cfg, executor=executor)
    dt = time.perf_counter() - t0
    assert s.ran == 8 * epochs, s.ran
    return s.ran, dt, cfg.run_dir


def grade_once(executor, run_dir: Path) -> tuple[int, float]:
    t0 = time.perf_counter()
    graded = grade_run(run_dir, JudgeConfig(), executor=executor, progress=False)
    return len(graded), time.perf_counter() - t0


def fmt(rates: list[float]) -> str:
    return f"{statistics.median(rates):7.2f}  ({min(rates):.2f}–{max(rates):.2f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--null-epochs", type=int, default=6)
    ap.add_argument("--oracle-epochs", type=int, default=2)
    args = ap.parse_args()
    from jobbench.runner._dask import DaskExecutor

    with tempfile.TemporaryDirectory(prefix="jb-dask-bench-") as tmp:
        root = Path(tmp)
        scratch = root / "scratch"
        t0 = time.perf_counter()
        dask = DaskExecutor(n_workers=2, threads_per_worker=1)
        dask.client.wait_for_workers(2)
        startup = time.perf_counter() - t0
        executors = {
            "local pool, 1 trial": LocalExecutor(1),
            "local pool, 2 trials": LocalExecutor(2),
            "dask-local, 2 workers": dask,
        }
        rows: dict[tuple[str, str], list[float]] = {}
        grading: dict[str, list[float]] = {}
        n = 0
        try:
            for _rep in range(args.repeats):
                for agent, epochs in (("null", args.null_epochs), ("oracle", args.oracle_epochs)):
                    for label, ex in executors.items():
                        n += 1
                        count, dt, run_dir = run_once(
                            ex, root / "runs", f"r{n}", agent, epochs, scratch
                        )
                        rows.setdefault((agent, label), []).append(count / dt)
                        if agent == "oracle" and label != "local pool, 2 trials":
                            g_label = "this process" if ex is not dask else "dask-local, 2 workers"
                            graded, gdt = grade_once(ex if ex is dask else None, run_dir)
                            grading.setdefault(g_label, []).append(graded / gdt)
        finally:
            dask.close()
    print(f"Dask LocalCluster start-up (2 worker processes, until both joined): {startup:.2f} s")
    print(
        f"\nTrial throughput over datasets/sample/main, trials/s: median (range) of "
        f"{args.repeats} runs"
    )
    print(f"{'agent':8} {'executor':24} trials/run  trials/s")
    for (agent, label), rates in rows.items():
        epochs = args.null_epochs if agent == "null" else args.oracle_epochs
        print(f"{agent:8} {label:24} {8 * epochs:10d}  {fmt(rates)}")
    print(f"\nGrading throughput (checks only, {8 * args.oracle_epochs} oracle trials), trials/s")
    for label, rates in grading.items():
        print(f"{'':8} {label:24} {'':10}  {fmt(rates)}")


if __name__ == "__main__":
    main()
