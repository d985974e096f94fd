"""Benchmark: how long calibration takes, at paper scale and end to end on the sample split.

1. Statistics and analysis on synthetic grades at paper scale: T tasks × ~36 criteria
   (the paper's 4,631 criteria over 130 tasks), J judge keys with seeded random verdicts
   that agree with a reference judge with probability q; times reading the grade files,
   ``calibrate`` (pairs, alpha over all judges, flips) and writing the outputs.
2. End to end: ``jobbench calibrate --expected datasets/sample`` with two scripted LLM judges
   (rubric mode and task mode, ``--decide llm``) on a local fake server that passes every
   criterion; reports wall time, calls and the (meaningless) accuracy of an always-pass judge.

    PYTHONPATH=src python benchmarks/calibrate.py [--tasks 130] [--judges 3] [--agree 0.9]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from jobbench.calibrate import calibrate, read_run_grades, write_calibration
from jobbench.records import CriterionVerdict, GradeRecord, RubricGrade, Usage

SAMPLE = Path(__file__).resolve().parents[1] / "datasets" / "sample"


def synthetic(root: Path, n_tasks: int, n_judges: int, agree: float, seed: int = 0) -> Path:
    rng = random.Random(seed)
    run = root / "run"
    shapes = {
        f"main/occ{i % 35}/task{i // 35 + 1}": [
            (float(rng.choice([5, 10, 20])), rng.randint(2, 7)) for _ in range(8)
        ]
        for i in range(n_tasks)
    }
    truth = {
        t: [[rng.random() < 0.5 for _ in range(n)] for _, n in rub] for t, rub in shapes.items()
    }
    for j in range(n_judges):
        key = f"judge{j}.rubric.llm"
        for task_id, rub in shapes.items():
            trial_id = f"{task_id}/agent@m/epoch-1"
            rubrics = []
            for r, (w, n) in enumerate(rub):
                crits = []
                for c in range(n):
                    v = (
                        truth[task_id][r][c]
                        if (j == 0 or rng.random() < agree)
                        else not truth[task_id][r][c]
                    )
                    crits.append(
                        CriterionVerdict(
                            rubric_index=r,
                            criterion_index=c,
                            verdict="pass" if v else "fail",
                            source="llm",
                            reasoning=f"judge {j} reasoning",
                        )
                    )
                rubrics.append(
                    RubricGrade(
                        index=r,
                        id=str(r),
                        weight=w,
                        criteria=crits,
                        passed=all(x.verdict == "pass" for x in crits),
                    )
                )
            total = sum(w for w, _ in rub)
            passed = sum(g.weight for g in rubrics if g.passed)
            rec = GradeRecord(
                trial_id=trial_id,
                task_id=task_id,
                judge={"key": key},
                rubrics=rubrics,
                score=passed / total,
                max_score=total,
                passed_weight=passed,
                status="complete",
                usage=Usage(
                    calls=8, input_tokens=40_000, output_tokens=2_000, cost_usd=0.01 * (j + 1)
                ),
            )
            p = run / "grades" / key / f"{trial_id}.json"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(rec.model_dump_json())
    return run


def bench_synthetic(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run = synthetic(Path(tmp), args.tasks, args.judges, args.agree)
        t0 = time.perf_counter()
        judges = read_run_grades([run])
        t1 = time.perf_counter()
        report = calibrate(judges)
        t2 = time.perf_counter()
        write_calibration(report, Path(tmp) / "out")
        t3 = time.perf_counter()
    n_crit = report.overall.units
    print(
        f"synthetic: {args.tasks} tasks, {n_crit} criteria, {args.judges} judges, agreement "
        f"p={args.agree}"
    )
    print(f"  read grades      {t1 - t0:7.3f} s")
    print(
        f"  calibrate        {t2 - t1:7.3f} s   (alpha over all judges = "
        f"{report.overall.alpha:.4f}, "
        f"{len(report.flips)} flips)"
    )
    print(f"  write md/json/png{t3 - t2:7.3f} s")
    for p in report.pairs:
        print(
            f"  {p.a} vs {p.b}: agreement {p.percent_agreement:.4f}, kappa {p.kappa:.4f}, "
            f"Δ micro {100 * (p.score.micro_abs_diff or 0):.2f} pp"
        )


def bench_sample() -> None:
    from typer.testing import CliRunner

    from jobbench.cli import app
    from jobbench.testing import FakeOpenAIServer, chat_reply, tail_text

    if not SAMPLE.is_dir():
        print("sample split not found; end-to-end part skipped")
        return

    def reply(req: dict) -> object:
        tail = tail_text(req)
        import re

        if tail.startswith("## Rubrics\n"):
            parts = re.split(r"^### Rubric (\d+)\n", tail, flags=re.M)
            rubs = [
                {
                    "index": int(i),
                    "rubric_passed": True,
                    "criteria": [
                        {"index": int(j), "reasoning": "ok", "evidence": "", "verdict": "pass"}
                        for j in re.findall(r"^Criterion (\d+): ", body, flags=re.M)
                    ],
                }
                for i, body in zip(parts[1::2], parts[2::2])
            ]
            return chat_reply(json.dumps({"rubrics": rubs}))
        crits = [
            {"index": int(j), "reasoning": "ok", "evidence": "", "verdict": "pass"}
            for j in re.findall(r"^Criterion (\d+): ", tail, flags=re.M)
        ]
        return chat_reply(
            json.dumps({"criteria": crits, "overall_reasoning": "ok", "rubric_passed": True})
        )

    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(reply) as srv:
        cfgs = []
        for model, mode in (("bench-a", "rubric"), ("bench-b", "task")):
            p = Path(tmp) / f"{model}.toml"
            p.write_text(
                f'model = "{model}"\napi_base = "{srv.base_url}"\napi_key = "x"\nmode = "{mode}"\n'
                'decide = "llm"\nconcurrency = 8\n'
            )
            cfgs += ["--judge-config", str(p)]
        t0 = time.perf_counter()
        res = CliRunner().invoke(
            app,
            [
                "calibrate",
                "--expected",
                str(SAMPLE),
                *cfgs,
                "--out",
                str(Path(tmp) / "o"),
                "--no-progress",
            ],
        )
        wall = time.perf_counter() - t0
        if res.exit_code != 0:
            print(res.output)
            return
        data = json.loads((Path(tmp) / "o" / "calibration.json").read_text())
    print(
        f"sample end to end: {data['sources']['expected sets']} decoy sets, 2 judges, {srv.calls} "
        "calls, "
        f"{wall:.2f} s wall"
    )
    for e in data["expected"]:
        print(
            f"  {e['judge']}: accuracy of an always-pass judge {e['accuracy']:.3f} "
            f"(= share of expected passes), F1 {e['f1']:.3f}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--tasks", type=int, default=130)
    ap.add_argument("--judges", type=int, default=3)
    ap.add_argument("--agree", type=float, default=0.9)
    args = ap.parse_args()
    bench_synthetic(args)
    bench_sample()


if __name__ == "__main__":
    main()
