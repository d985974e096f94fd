"""Benchmark: time, peak memory and size of the report of a synthetic run at the paper's scale.

Builds (in a temporary directory) a dataset of N tasks spread over the 35 JobBench
occupations with ~36 criteria per task, and a run of C configurations × E epochs with seeded
random verdicts (reasoning ~165 and evidence ~100 characters each). Then, in a fresh child
process (so that its peak resident set is the report's alone), runs what ``jobbench report``
runs: :func:`jobbench.report.build_report` (read + validate + aggregate + bootstrap) and
:func:`jobbench.report.write_data` (every report file, drill-down layout ``auto`` unless
``--drilldowns`` says otherwise; the report forks helper processes where it can, see
``jobbench.report._fork``). Prints wall seconds per phase, CPU seconds, the child's peak RSS
(and its forked helpers'), the size of every report file (MB = 10^6 bytes) and each figure
against the targets of issue 20 (≤ 15 s, ≤ 600 MB peak RSS, ≤ 60 MB of report files,
``report.html`` ≤ 5 MB).

    PYTHONPATH=src python benchmarks/report.py [--scale 130x36x3 ...] [--resamples 10000]
    [--drilldowns auto|pages|inline]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jobbench.records import (
    CriterionVerdict,
    GradeRecord,
    RubricGrade,
    TrialRecord,
    TrialStatus,
    Usage,
)
from jobbench.tasks import occupations


def build(root: Path, n_tasks: int, n_configs: int, epochs: int, seed: int = 0) -> Path:
    """Write ``root/dataset`` (``n_tasks`` tasks of 8 rubric items with 2–7 criteria each) and
    the run ``root/runs/bench`` (``n_configs`` configurations × ``epochs`` epochs, every trial
    ``ok`` and graded ``complete`` under judge key ``bench``). Returns the run directory."""
    rng = random.Random(seed)
    slugs = sorted(occupations())
    ds, run = root / "dataset", root / "runs" / "bench"
    task_rubrics: dict[str, list[tuple[float, int]]] = {}
    for i in range(n_tasks):
        split = "main" if i % 2 == 0 else "easy"
        task_id = f"{split}/{slugs[i % len(slugs)]}/task{i // len(slugs) + 1}"
        d = ds / task_id
        (d / "task_folder").mkdir(parents=True)
        (d / "task_folder" / "TASK_INSTRUCTIONS.txt").write_text("Do the task.\n")
        (d / "task_card.md").write_text("card\n")
        rubrics = [(float(rng.choice([5, 10, 15, 20])), rng.randint(2, 7)) for _ in range(8)]
        task_rubrics[task_id] = rubrics
        (d / "RUBRICS.json").write_text(
            json.dumps(
                {
                    "rubrics": [
                        {
                            "rubric": f"Is item {j + 1} right?",
                            "weight": w,
                            "criterion": [
                                f"The deliverable states fact {j + 1}.{k + 1} with its source."
                                for k in range(n)
                            ],
                        }
                        for j, (w, n) in enumerate(rubrics)
                    ]
                }
            )
        )
    configs = [(f"agent{c}", f"model-{c}") for c in range(n_configs)]
    run.mkdir(parents=True)
    (run / "lock.json").write_text(
        json.dumps(
            {
                "harness_version": "bench",
                "created_at": "2026-01-01T00:00:00Z",
                "dataset_root": str(ds),
                "tasks": {t: "0" * 64 for t in task_rubrics},
                "agents": [{"agent": a, "model": m, "settings": {}} for a, m in configs],
                "epochs": epochs,
                "config": {},
            }
        )
    )
    for c, (agent, model) in enumerate(configs):
        p_pass = 0.55 + 0.05 * c
        for task_id, rubrics in task_rubrics.items():
            for e in range(1, epochs + 1):
                trial_id = f"{task_id}/{agent}@{model}/epoch-{e}"
                tdir = run / "trials" / trial_id
                tdir.mkdir(parents=True)
                rec = TrialRecord(
                    trial_id=trial_id,
                    task_id=task_id,
                    task_digest="0" * 64,
                    agent=agent,
                    model=model,
                    epoch=e,
                    status=TrialStatus.ok,
                    wall_seconds=rng.uniform(60, 900),
                    turns=rng.randint(5, 80),
                    usage=Usage(calls=10, input_tokens=200_000, output_tokens=20_000, cost_usd=1.5),
                )
                (tdir / "trial.json").write_text(rec.model_dump_json())
                rgs = []
                for j, (w, n) in enumerate(rubrics):
                    vs = ["pass" if rng.random() < p_pass else "fail" for _ in range(n)]
                    rgs.append(
                        RubricGrade(
                            index=j,
                            id=str(j),
                            weight=w,
                            passed=all(v == "pass" for v in vs),
                            criteria=[
                                CriterionVerdict(
                                    rubric_index=j,
                                    criterion_index=k,
                                    verdict=v,
                                    source="llm",
                                    reasoning="The deliverable gives the figure and cites the "
                                    "table. " * 3,
                                    evidence="Table 3 reports 1,234 cases in 2022 (CDC WONDER)."
                                    * 2,
                                )
                                for k, v in enumerate(vs)
                            ],
                        )
                    )
                total = sum(w for w, _ in rubrics)
                got = sum(r.weight for r in rgs if r.passed)
                g = GradeRecord(
                    trial_id=trial_id,
                    task_id=task_id,
                    judge={"model": "bench"},
                    rubrics=rgs,
                    score=got / total,
                    max_score=total,
                    passed_weight=got,
                    status="complete",
                    usage=Usage(calls=8, input_tokens=80_000, output_tokens=4_000, cost_usd=0.05),
                )
                gp = run / "grades" / "bench" / f"{trial_id}.json"
                gp.parent.mkdir(parents=True, exist_ok=True)
                gp.write_text(g.model_dump_json())
    return run


def _mb(n: int) -> str:
    return f"{n / 1e6:.2f} MB"


TARGETS = {"seconds": 15.0, "peak_rss_mb": 600.0, "all_files_mb": 60.0, "report_html_mb": 5.0}
"""Issue 20's "Done when" limits at 130 × 36 × 3 (seconds of wall time, MB = 10^6 bytes)."""

_CHILD = """
import json, resource, sys, time
from pathlib import Path
from jobbench.report import build_report, write_data
run, out, resamples, layout = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
t0 = time.perf_counter()
data = build_report([run], n_resamples=resamples)
t1 = time.perf_counter()
write_data(data, out, drilldowns=layout)
t2 = time.perf_counter()
ru = resource.getrusage(resource.RUSAGE_SELF)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({
    "build": t1 - t0, "write": t2 - t1, "layout": data.drilldown_layout,
    "cpu": ru.ru_utime + ru.ru_stime,
    "cpu_children": kids.ru_utime + kids.ru_stime,
    "trials": sum(len(c.trials) for c in data.configs),
    "verdicts": sum(t.criteria_total for c in data.configs for t in c.trials),
    "peak_rss_kb": ru.ru_maxrss,
    "peak_rss_children_kb": kids.ru_maxrss,
}))
"""
"""The measured process: reads ``run``, writes the report into ``out`` and prints one JSON
object (phase seconds, CPU seconds (user + system) of this process and of the processes it
forked, layout written, counts, peak RSS in KiB as Linux reports it, of this process and of
its largest forked child)."""


def measure(run: Path, out: Path, resamples: int, layout: str) -> dict:
    """Run :data:`_CHILD` in a fresh interpreter (same ``sys.path`` as this one).

    Returns:
        The child's JSON object plus ``wall`` (seconds from start to exit, interpreter start
        and imports included).

    Raises:
        subprocess.CalledProcessError: the child failed (its stderr is printed).
    """
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    t0 = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-c", _CHILD, str(run), str(out), str(resamples), layout],
        capture_output=True,
        text=True,
        env=env,
    )
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        sys.stderr.write(res.stderr)
        res.check_returncode()
    if res.stderr.strip():
        sys.stderr.write(res.stderr)
    return {**json.loads(res.stdout.strip().splitlines()[-1]), "wall": wall}


def _verdict(value: float, limit: float) -> str:
    return f"{'ok' if value <= limit else 'OVER'} (target <= {limit:g})"


def bench(n_tasks: int, n_configs: int, epochs: int, resamples: int, layout: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        run = build(Path(tmp), n_tasks, n_configs, epochs)
        t1 = time.perf_counter()
        out = Path(tmp) / "report"
        m = measure(run, out, resamples, layout)
        files = [p for p in out.rglob("*") if p.is_file()]
        total = sum(p.stat().st_size for p in files)
        html = (out / "report.html").stat().st_size
        pages = sorted((out / "drilldowns").glob("*.html"), key=lambda p: p.stat().st_size)
        rss_mb = m["peak_rss_kb"] * 1024 / 1e6
        print(
            f"== {n_tasks} tasks x {n_configs} configurations x {epochs} epoch(s) = "
            f"{m['trials']:,} trials, {m['verdicts']:,} criterion verdicts (built in "
            f"{t1 - t0:.1f} s; {resamples:,} resamples; layout {m['layout']})"
        )
        print(
            f"wall {m['wall']:.1f} s {_verdict(m['wall'], TARGETS['seconds'])}: "
            f"read + aggregate + bootstrap {m['build']:.1f} s, write {m['write']:.1f} s; CPU "
            f"{m['cpu']:.1f} s here + {m['cpu_children']:.1f} s in forked processes (user + "
            "system)"
        )
        kid_mb = m["peak_rss_children_kb"] * 1024 / 1e6
        print(
            f"peak RSS {rss_mb:.0f} MB {_verdict(rss_mb, TARGETS['peak_rss_mb'])}; largest "
            f"forked child {kid_mb:.0f} MB (pages shared with the parent counted in both)"
        )
        print(
            f"all report files {_mb(total)} in {len(files)} files "
            f"{_verdict(total / 1e6, TARGETS['all_files_mb'])}; report.html {_mb(html)} "
            f"{_verdict(html / 1e6, TARGETS['report_html_mb'])}"
        )
        for name in ("results.jsonl", "summary.json", "leaderboard.md", "leaderboard.csv"):
            print(f"  {name}: {_mb((out / name).stat().st_size)}")
        if pages:
            print(
                f"  drilldowns/: {_mb(sum(p.stat().st_size for p in pages))} in {len(pages)} "
                f"pages (largest {_mb(pages[-1].stat().st_size)}, median "
                f"{_mb(pages[len(pages) // 2].stat().st_size)})"
            )


def _scale(text: str) -> tuple[int, int, int]:
    try:
        t, c, e = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected TASKSxCONFIGSxEPOCHS (e.g. 100x36x3), got {text!r}"
        ) from None
    return t, c, e


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--scale",
        type=_scale,
        action="append",
        help=(
            "TASKSxCONFIGSxEPOCHS, repeatable (default: 130x36x3, the paper's 130 tasks, 36 "
            "configurations and 3 epochs)"
        ),
    )
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument(
        "--drilldowns",
        choices=("auto", "pages", "inline"),
        default="auto",
        help="drill-down layout written (default: auto, as `jobbench report`)",
    )
    args = ap.parse_args()
    for n_tasks, n_configs, epochs in args.scale or [(130, 36, 3)]:
        bench(n_tasks, n_configs, epochs, args.resamples, args.drilldowns)


if __name__ == "__main__":
    main()
