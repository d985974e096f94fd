"""Benchmark: time and size of `write_report` on synthetic runs, inline vs per-task drill-down pages.

Builds (in a temporary directory) a dataset of N tasks spread over the 35 JobBench
occupations with ~36 criteria per task, and a run of C configurations × E epochs with seeded
random verdicts (reasoning ~165 and evidence ~100 characters each), then times reading +
aggregation + bootstrap and each output, and compares the two drill-down layouts: the whole
report in one `report.html` (inline, the only layout before drill-down pages) and `report.html`
plus one page per task under `drilldowns/` (pages). Prints sizes in MB (10^6 bytes).

    PYTHONPATH=src python benchmarks/report.py [--scale 130x6x1 --scale 100x36x3] [--resamples 10000] [--skip-inline]
"""

from __future__ import annotations

import argparse
import json
import random
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
from jobbench.report import build_report, write_data
from jobbench.report._html import estimate_drilldown_bytes, render_html, resolve_drilldowns
from jobbench.report._tables import (
    leaderboard_csv,
    leaderboard_markdown,
    results_jsonl,
    summary_json,
)
from jobbench.tasks import occupations


def build(root: Path, n_tasks: int, n_configs: int, epochs: int, seed: int = 0) -> Path:
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
                                    reasoning="The deliverable gives the figure and cites the table. "
                                    * 3,
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


def bench(n_tasks: int, n_configs: int, epochs: int, resamples: int, skip_inline: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        run = build(Path(tmp), n_tasks, n_configs, epochs)
        t1 = time.perf_counter()
        data = build_report([run], n_resamples=resamples)
        t2 = time.perf_counter()
        outputs = {
            "leaderboard.md": leaderboard_markdown(data),
            "leaderboard.csv": leaderboard_csv(data),
            "results.jsonl": results_jsonl(data),
            "summary.json": json.dumps(summary_json(data)),
        }
        t3 = time.perf_counter()
        trials = sum(len(c.trials) for c in data.configs)
        crits = sum(t.criteria_total for c in data.configs for t in c.trials)
        print(
            f"== {n_tasks} tasks x {n_configs} configurations x {epochs} epoch(s) = {trials:,} trials, "
            f"{crits:,} criterion verdicts (built in {t1 - t0:.1f} s)"
        )
        print(
            f"read + aggregate + bootstrap ({resamples:,} resamples): {t2 - t1:.2f} s; "
            f"md/csv/jsonl/summary: {t3 - t2:.2f} s"
        )
        for name, text in outputs.items():
            print(f"  {name}: {_mb(len(text.encode()))}")
        t4 = time.perf_counter()
        est = estimate_drilldown_bytes(data)
        t5 = time.perf_counter()
        print(
            f"estimated drill-down size {_mb(est)} ({t5 - t4:.2f} s); auto layout: {resolve_drilldowns(data, 'auto')}"
        )
        if not skip_inline:
            t6 = time.perf_counter()
            inline = render_html(data, "inline")
            t7 = time.perf_counter()
            print(f"inline: report.html {_mb(len(inline.encode()))} (render {t7 - t6:.1f} s)")
            del inline
        out = Path(tmp) / "report"
        t8 = time.perf_counter()
        write_data(data, out, drilldowns="pages")
        t9 = time.perf_counter()
        pages = sorted((out / "drilldowns").glob("*.html"), key=lambda p: p.stat().st_size)
        total = sum(p.stat().st_size for p in pages)
        print(
            f"pages:  report.html {_mb((out / 'report.html').stat().st_size)} + drilldowns/ {_mb(total)} in "
            f"{len(pages)} pages (largest {_mb(pages[-1].stat().st_size) if pages else '-'}, "
            f"median {_mb(pages[len(pages) // 2].stat().st_size) if pages else '-'}); "
            f"all report files written in {t9 - t8:.1f} s"
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
        help="TASKSxCONFIGSxEPOCHS, repeatable (default: 8x2x1 (the sample), 130x6x1, 100x36x3 (the paper))",
    )
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--skip-inline", action="store_true", help="do not render the one-page layout")
    args = ap.parse_args()
    for n_tasks, n_configs, epochs in args.scale or [(8, 2, 1), (130, 6, 1), (100, 36, 3)]:
        bench(n_tasks, n_configs, epochs, args.resamples, args.skip_inline)


if __name__ == "__main__":
    main()
