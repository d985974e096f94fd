"""Load + validate a 1,000-task synthetic dataset; print wall time and peak memory.

Target (issue 2): under 2 s. The dataset mimics the public one's shape: the public layout,
35 occupations, ~36 criteria per task in 9 rubrics (the paper's 35.6 average), 4 workspace
files, a search folder on main tasks, and a share of tasks using the extensions (ids,
requires, checks, files).

Usage: PYTHONPATH=src python benchmarks/load_bench.py [--tasks 1000] [--repeat 5] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import resource
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from jobbench.tasks import load_dataset, occupations


def build(root: Path, n_tasks: int) -> None:
    slugs = sorted(occupations())
    for i in range(n_tasks):
        split = "main" if i % 2 == 0 else "easy"
        occ = slugs[i % len(slugs)]
        number = i // (2 * len(slugs)) + 1
        t = root / "dataset" / split / occ / f"task{number}"
        (t / "task_folder").mkdir(parents=True)
        (t / "task_folder" / "TASK_INSTRUCTIONS.txt").write_text(
            "You are a professional. Read every file here, reconcile the conflicting sources and "
            "write your deliverables to the output directory.\n" * 8
        )
        for k, ext in enumerate(("csv", "pdf", "xlsx")):
            (t / "task_folder" / f"source_{k}.{ext}").write_bytes(b"x" * 2048)
        if split == "main":
            (t / "files_required_to_search").mkdir()
            (t / "files_required_to_search" / "reference.txt").write_text("reference\n" * 50)
        (t / "task_card.md").write_text("# Task card\n" + "Background. " * 200)
        rubrics = []
        for r in range(9):
            crit = [
                f"The deliverable states fact {r}.{c} with the value {1000 + c * 7} units."
                for c in range(4)
            ]
            item = {
                "rubric": f"Does the deliverable get part {r} right? " * 3,
                "weight": 5 + r,
                "criterion": crit,
            }
            if i % 3 == 0:
                item["id"] = f"r{r}"
                if r:
                    item["requires"] = [f"r{r - 1}"] if r % 2 else [r - 1]
                item["checks"] = [
                    {"kind": "number", "value": 1000 + c * 7, "abs_tol": 0.5}
                    if c % 2 == 0
                    else None
                    for c in range(4)
                ]
                item["files"] = ["*.md", "*.xlsx"]
            rubrics.append(item)
        (t / "RUBRICS.json").write_text(json.dumps({"rubrics": rubrics}, indent=2))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--profile", action="store_true", help="print the top functions by cumulative time"
    )
    args = ap.parse_args()

    root = Path(tempfile.mkdtemp(prefix="jobbench-load-bench-"))
    try:
        t0 = time.perf_counter()
        build(root, args.tasks)
        print(f"built {args.tasks} tasks in {time.perf_counter() - t0:.2f} s at {root}")

        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            ds = load_dataset(root)
            ok = ds.ok
            times.append(time.perf_counter() - t0)
        assert ok and len(ds.tasks) == args.tasks, (ok, len(ds.tasks), ds.problems[:3])
        criteria = sum(t.criterion_count for t in ds.tasks)
        best, median = min(times), sorted(times)[len(times) // 2]

        tracemalloc.start()
        load_dataset(root)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux

        print(
            f"load + validate {len(ds.tasks)} tasks ({criteria} criteria): best {best:.3f} s, "
            f"median {median:.3f} s over {args.repeat} runs (target < 2 s: {'PASS' if median < 2 else 'FAIL'})"
        )
        print(
            f"peak Python allocations during one load: {peak / 2**20:.1f} MiB; process max RSS {rss:.0f} MiB"
        )
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            load_dataset(root)
            prof.disable()
            pstats.Stats(prof).sort_stats("cumulative").print_stats(15)
        return 0 if median < 2 else 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
