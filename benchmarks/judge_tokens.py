"""Prompt tokens of one full grading pass per judging mode, and what prefix caching saves.

Usage:
    PYTHONPATH=src python benchmarks/judge_tokens.py [--task TASK_DIR --deliverables DIR]

Without arguments it uses the first task of ``datasets/sample/main`` that ships static
deliverables (``solution/decoys/<name>/deliverables/``), else a synthetic accounting task
built in a temporary directory (8 rubrics, 30 criteria, a ~6 kB memo, a ~4 kB CSV and a small
JSON file).

Method: the real judge (``jobbench.judge.Grader``) grades the deliverables once per mode with
``--decide llm`` (every criterion goes to the LLM, as in the public judge) and the cache off,
against a local scripted OpenAI-compatible server that answers every criterion; the script
records every request. Token estimate: **characters / 4** over all text in the messages
(system prompt, fenced deliverables, rubric part; image parts are not counted). "Shared
prefix" is, for each call after the first of a trial, the longest text prefix it shares with
an earlier call of the same trial — the part a provider's prompt-prefix cache (OpenAI, xAI,
DeepSeek, vLLM automatic prefix caching) can serve; "uncached" = total − shared.

The public judge's layout (Job-Bench/job-bench-eval ``eval/judge.py``: one call per rubric,
rubric description and criteria FIRST, then the text of every deliverable, then rules) is
emulated by sending the same content in that order (rubric part, deliverables, then the
system message with its rules and reply format), so the difference is the layout alone.

``benchmarks/judge_cache.py`` measures what the call schedule adds: how much of this shared
prefix a provider's cache actually serves when calls run concurrently.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from jobbench.judge import Grader, JudgeConfig, TrialInput
from jobbench.judge._prompts import system_prompt
from jobbench.tasks import load_dataset, load_task
from jobbench.testing import FakeOpenAIServer, chat_reply, tail_text

CHARS_PER_TOKEN = 4


def _texts(req: dict[str, Any]) -> list[str]:
    out = []
    for m in req["messages"]:
        c = m["content"]
        if isinstance(c, str):
            out.append(c)
        else:
            out.extend(p["text"] for p in c if p.get("type") == "text")
    return out


def _answer(req: dict[str, Any]) -> Any:
    tail = tail_text(req)
    crit = lambda s: [int(m) for m in re.findall(r"^Criterion (\d+):", s, flags=re.M)]  # noqa: E731
    item = lambda j: {"index": j, "reasoning": "ok", "evidence": "", "verdict": "pass"}  # noqa: E731
    if tail.startswith("## Rubrics"):
        parts = re.split(r"^### Rubric (\d+)\n", tail, flags=re.M)
        body: dict[str, Any] = {
            "rubrics": [
                {
                    "index": int(parts[i]),
                    "criteria": [item(j) for j in crit(parts[i + 1])],
                    "rubric_passed": True,
                }
                for i in range(1, len(parts), 2)
            ]
        }
    elif "## Criterion to judge" in tail:
        body = {"reasoning": "ok", "evidence": "", "verdict": "pass"}
    else:
        body = {
            "criteria": [item(j) for j in crit(tail)],
            "overall_reasoning": "ok",
            "rubric_passed": True,
        }
    return chat_reply(json.dumps(body))


def _common(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _figures(prompts: list[str]) -> dict[str, float]:
    total = sum(len(p) for p in prompts)
    shared = sum(
        max((_common(p, q) for q in prompts[:i]), default=0) for i, p in enumerate(prompts)
    )
    return {
        "calls": len(prompts),
        "tokens": total / CHARS_PER_TOKEN,
        "shared": shared / CHARS_PER_TOKEN,
        "uncached": (total - shared) / CHARS_PER_TOKEN,
    }


def measure(
    task, deliverables: Path, mode: str, decide: str = "llm"
) -> tuple[dict[str, float], list[dict]]:
    with FakeOpenAIServer(_answer) as srv:
        cfg = JudgeConfig(
            model="gpt-4o-mini",
            api_base=srv.base_url,
            api_key="bench",
            mode=mode,
            decide=decide,
            cache=False,
            concurrency=1,
            backoff_base=0,
        )
        grader = Grader(cfg)
        grader.grade([TrialInput(trial_id="bench", task=task, deliverables_dir=deliverables)])
        reqs = list(srv.requests)
    return _figures(["\n".join(_texts(r)) for r in reqs]), reqs


def public_layout(reqs: list[dict]) -> dict[str, float]:
    """Re-order our rubric-mode requests as the public judge lays them out: rubric first,
    then the deliverables, then the rules (our system message)."""
    prompts = []
    for r in reqs:
        texts = _texts(r)
        system, deliverables, rubric = texts[0], texts[1], texts[-1]
        prompts.append("\n".join([rubric, deliverables, system]))
    return _figures(prompts)


def synthetic_task(root: Path):
    d = root / "dataset" / "sample" / "accountants_and_auditors" / "task1"
    (d / "task_folder").mkdir(parents=True)
    (d / "task_folder" / "TASK_INSTRUCTIONS.txt").write_text(
        "Reconcile March cash and write a memo."
    )
    (d / "task_card.md").write_text("synthetic benchmark task")
    rubrics = []
    n = 0
    for r in range(8):
        k = [3, 4, 5, 4, 3, 4, 4, 3][r]
        rubrics.append(
            {
                "rubric": f"Question {r}: is part {r} of the reconciliation correct and justified?",
                "weight": 1 + r % 3,
                "criterion": [
                    f"The memo states line item {n + j} with its amount and the source document "
                    f"that supports it, consistent with the bank statement."
                    for j in range(k)
                ],
            }
        )
        n += k
    (d / "RUBRICS.json").write_text(json.dumps({"rubrics": rubrics}))
    deliv = root / "deliverables"
    deliv.mkdir()
    memo = "\n".join(
        f"Line item {i}: amount ${1000 + 37 * i:,}.{i % 100:02d}, per bank statement row {i}; "
        f"the ledger shows the same figure after adjustment {i}."
        for i in range(60)
    )
    (deliv / "reconciliation_memo.md").write_text("# March cash reconciliation\n\n" + memo)
    (deliv / "entries.csv").write_text(
        "date,description,amount\n"
        + "\n".join(
            f"2024-03-{1 + i % 28:02d},adjustment {i},{(-1) ** i * (12.5 * i):.2f}"
            for i in range(110)
        )
    )
    (deliv / "summary.json").write_text(
        json.dumps({"adjusted_balance": 25859.19, "difference": 0.0})
    )
    return load_task(d), deliv


def pick_sample() -> tuple[Any, Path] | None:
    root = Path(__file__).resolve().parent.parent / "datasets" / "sample" / "main"
    if not root.is_dir():
        return None
    ds = load_dataset(root)
    for t in ds.tasks:
        if t.solution_dir is None:
            continue
        for d in sorted((t.solution_dir / "decoys").glob("*/deliverables")):
            return t, d
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--task", type=Path, help="a task directory")
    ap.add_argument("--deliverables", type=Path, help="its deliverables folder")
    args = ap.parse_args()
    tmp = None
    if args.task and args.deliverables:
        task, deliv = load_task(args.task), args.deliverables
        source = f"{task.id} with {args.deliverables}"
    else:
        picked = pick_sample()
        if picked:
            task, deliv = picked
            source = f"{task.id} with {deliv}"
        else:
            tmp = tempfile.TemporaryDirectory()
            task, deliv = synthetic_task(Path(tmp.name))
            source = "synthetic task (8 rubrics) built in a temp dir"
    from jobbench.extract import extract_dir

    text_chars = len(extract_dir(deliv).text)
    print(f"task: {source}")
    print(
        f"rubrics: {len(task.rubrics)}, criteria: {task.criterion_count}, "
        f"extracted deliverable text: {text_chars:,} chars (~{text_chars // CHARS_PER_TOKEN:,} "
        "tokens), "
        f"system message (rubric mode): ~{len(system_prompt('rubric')) // CHARS_PER_TOKEN} tokens"
    )
    print(
        f"token estimate: characters / {CHARS_PER_TOKEN}; one full grading pass, --decide llm, "
        "cache off\n"
    )
    rows = []
    rubric_reqs: list[dict] = []
    for mode in ("rubric", "task", "criterion", "official"):
        fig, reqs = measure(task, deliv, mode)
        rows.append((mode, fig))
        if mode == "rubric":
            rubric_reqs = reqs
    rows.append(("public layout (rubric first)", public_layout(rubric_reqs)))
    if any(c.check is not None for r in task.rubrics for c in r.criteria):
        fig, _ = measure(task, deliv, "rubric", decide="auto")
        rows.append(("rubric, --decide auto (checks)", fig))
    head = (
        f"{'mode':32} {'calls':>5} {'prompt tok':>11} {'per call':>9} {'shared prefix':>14} "
        f"{'uncached':>9}"
    )
    print(head)
    print("-" * len(head))
    for name, f in rows:
        per = f["tokens"] / f["calls"] if f["calls"] else 0
        print(
            f"{name:32} {f['calls']:>5.0f} {f['tokens']:>11,.0f} {per:>9,.0f} "
            f"{f['shared']:>14,.0f} {f['uncached']:>9,.0f}"
        )
    base = dict(rows)
    pub, ours = base["public layout (rubric first)"], base["rubric"]
    print(
        f"\nSame calls and content as the public judge, but deliverables first: "
        f"{ours['shared'] / ours['tokens']:.0%} of prompt tokens are a shared prefix "
        f"(public layout: {pub['shared'] / pub['tokens']:.0%}); "
        f"task mode sends {base['task']['tokens'] / pub['tokens']:.0%} of the public layout's "
        "prompt tokens."
    )
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    sys.exit(main())
