"""Billed judge input and wall time under a provider prefix cache: old vs new call schedule.

Usage:
    PYTHONPATH=src python benchmarks/judge_cache.py [--trials 6 --rubrics 9 --reps 3]

Method: the real judge (``jobbench.judge.Grader``, ``rubric`` mode, ``--decide llm``, verdict
cache off, concurrency 10) grades ``--trials`` synthetic trials of one task with ``--rubrics``
rubrics (3–4 criteria each); each trial's deliverables are a memo of 5–20 kB, a CSV and a
small workbook. It does so once per schedule and repetition, alternating: ``old`` submits every
unit of a trial at once (``Grader(schedule="all")``, the behaviour before issue 20), ``new``
sends one unit of the trial first and the rest when it has returned (``schedule="prefix"``).

The endpoint is a scripted server on 127.0.0.1 (``jobbench.testing.FakeOpenAIServer``) that
models a provider's prompt-prefix cache:

* a request's prompt is the text of its messages (:func:`jobbench.judge._grade.prompt_text`),
  counted in tokens as characters / 4;
* its cached part is the longest prefix it shares with a request that has COMPLETED (been
  answered) before it arrived, across all trials, rounded down to ``--block`` tokens and
  counted only from ``--min-cached`` tokens on (OpenAI's documented 128 / 1,024); the reply
  reports it as ``prompt_tokens_details.cached_tokens``;
* it answers after ``--base`` seconds + uncached input tokens / ``--prefill`` tokens per
  second + output tokens / ``--decode`` tokens per second (a cached prefix is not prefilled
  again), every criterion passing with a one-sentence reasoning.

Figures per schedule (medians over ``--reps``; token counts are the same every repetition of
a schedule up to the timing of completions):

* ``uncached``: input tokens billed at the full price; ``cached``: input tokens billed at
  the cached price;
* ``billed @ r``: uncached + r × cached, i.e. the input bill in full-price tokens when the
  cached price is r times the full one (r = 0.1: gpt-5 family; 0.25: gpt-4.1 family; 0.5:
  gpt-4o family, per ``jobbench/judge/data/prices.toml``);
* ``limit``: the physical limit, each deliverable read once plus the rubric text: the size of
  the prefix tree of every prompt of the pass (the system message and each trial's
  deliverables once, each call's own rubric part once), in tokens;
* ``prefix-cacheable``: the judge's own record of the same (``prefix_cacheable_input``),
  which does not round to blocks;
* ``wall``: seconds for the full pass (planning, extraction, every call).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import openpyxl

from jobbench.judge import Grader, JudgeConfig, TrialInput, prefix_cacheable_input
from jobbench.judge._grade import common_prefix_len, prompt_text
from jobbench.records import PrefixCacheable
from jobbench.tasks import Task, load_task
from jobbench.testing import FakeOpenAIServer, ScriptedReply, chat_reply, tail_text

CHARS_PER_TOKEN = 4
RATIOS = (0.1, 0.25, 0.5)


class PrefixCacheServer:
    """The scripted endpoint's answers and bill (see the module docstring).

    Args:
        block, min_cached: cache granularity and minimum, in tokens.
        base, prefill, decode: latency model (seconds; tokens per second).

    Attributes:
        calls: one ``(prompt chars, cached tokens, input tokens)`` per request answered.
        prompts: the prompt text of every request answered, in completion order.
    """

    def __init__(self, *, block: int, min_cached: int, base: float, prefill: float, decode: float):
        self.block, self.min_cached = block, min_cached
        self.base, self.prefill, self.decode = base, prefill, decode
        self.lock = threading.Lock()
        self.prompts: list[str] = []
        self.calls: list[tuple[int, int, int]] = []

    def cached_tokens(self, prompt: str) -> int:
        with self.lock:
            done = list(self.prompts)
        chars = max((common_prefix_len(prompt, p) for p in done), default=0)
        tokens = chars // CHARS_PER_TOKEN
        if tokens < self.min_cached:
            return 0
        return tokens // self.block * self.block

    def __call__(self, req: dict[str, Any]) -> ScriptedReply:
        prompt = prompt_text(req["messages"])
        tokens = len(prompt) // CHARS_PER_TOKEN
        cached = self.cached_tokens(prompt)
        body = _answer(req)
        out = len(body) // CHARS_PER_TOKEN
        time.sleep(self.base + (tokens - cached) / self.prefill + out / self.decode)
        with self.lock:  # completed: its prefix is cached for every later request
            self.prompts.append(prompt)
            self.calls.append((len(prompt), cached, tokens))
        return chat_reply(body, prompt_tokens=tokens, completion_tokens=out, cached_tokens=cached)


def _answer(req: dict[str, Any]) -> str:
    """Every criterion of a rubric-mode request passes, each with a one-sentence reasoning."""
    tail = tail_text(req)
    asked = [int(j) for j in re.findall(r"^Criterion (\d+):", tail, flags=re.M)]
    return json.dumps(
        {
            "criteria": [
                {
                    "index": j,
                    "reasoning": f"The memo states the figure for criterion {j} with its "
                    "source document, consistent with the bank statement and the ledger.",
                    "evidence": "",
                    "verdict": "pass",
                }
                for j in asked
            ],
            "overall_reasoning": "Every criterion is met by the memo and the workbook.",
            "rubric_passed": True,
        }
    )


def prefix_tree_size(prompts: list[str]) -> int:
    """Characters in the prefix tree of ``prompts``: each string adds what it does not share
    with an earlier one (the total does not depend on the order)."""
    return sum(
        len(p) - max((common_prefix_len(p, q) for q in prompts[:i]), default=0)
        for i, p in enumerate(prompts)
    )


def synthetic_task(root: Path, rubrics: int) -> Task:
    d = root / "dataset" / "sample" / "accountants_and_auditors" / "task1"
    (d / "task_folder").mkdir(parents=True)
    (d / "task_folder" / "TASK_INSTRUCTIONS.txt").write_text(
        "Reconcile March cash, write a memo and keep the workbook."
    )
    (d / "task_card.md").write_text("synthetic benchmark task")
    out, n = [], 0
    for r in range(rubrics):
        k = 3 + r % 2
        out.append(
            {
                "rubric": f"Question {r}: is part {r} of the reconciliation correct, complete "
                "and justified by the source documents?",
                "weight": 1 + r % 3,
                "criterion": [
                    f"The memo states line item {n + j} with its amount and the source "
                    "document that supports it, consistent with the bank statement."
                    for j in range(k)
                ],
            }
        )
        n += k
    (d / "RUBRICS.json").write_text(json.dumps({"rubrics": out}))
    return load_task(d)


def synthetic_deliverables(folder: Path, trial: int, memo_bytes: int) -> Path:
    folder.mkdir(parents=True)
    lines, i = ["# March cash reconciliation (draft " + str(trial) + ")", ""], 0
    while sum(len(x) + 1 for x in lines) < memo_bytes:
        lines.append(
            f"Line item {i}: amount ${1000 + 37 * i + trial:,}.{i % 100:02d}, per bank "
            f"statement row {i}; the ledger shows the same figure after adjustment {i}."
        )
        i += 1
    (folder / "reconciliation_memo.md").write_text("\n".join(lines))
    (folder / "entries.csv").write_text(
        "date,description,amount\n"
        + "\n".join(
            f"2024-03-{1 + i % 28:02d},adjustment {i},{(-1) ** i * (12.5 * i + trial):.2f}"
            for i in range(80)
        )
    )
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["account", "opening", "closing"])
    for i in range(60):
        ws.append([f"account {i}", 1000 + i * 7 + trial, 1100 + i * 5])
    wb.save(folder / "balances.xlsx")
    return folder


def one_pass(schedule: str, inputs: list[TrialInput], args: argparse.Namespace) -> dict[str, float]:
    model = PrefixCacheServer(
        block=args.block,
        min_cached=args.min_cached,
        base=args.base,
        prefill=args.prefill,
        decode=args.decode,
    )
    with FakeOpenAIServer(model) as srv:
        cfg = JudgeConfig(
            model="bench-model",
            api_base=srv.base_url,
            api_key="bench",
            mode="rubric",
            decide="llm",
            cache=False,
            concurrency=args.concurrency,
            backoff_base=0,
        )
        grader = Grader(cfg, schedule=schedule)  # type: ignore[arg-type]
        t0 = time.monotonic()
        records = grader.grade(inputs)
        wall = time.monotonic() - t0
        grader.close()
    assert all(r.status == "complete" for r in records), [r.status for r in records]
    cached = sum(c for _, c, _ in model.calls)
    total = sum(t for _, _, t in model.calls)
    recorded = sum((prefix_cacheable_input(r) for r in records), PrefixCacheable())
    fig = {
        "calls": len(model.calls),
        "input": total,
        "cached": cached,
        "uncached": total - cached,
        "limit": prefix_tree_size(model.prompts) / CHARS_PER_TOKEN,
        "prefix_cacheable": recorded.tokens,
        "wall": wall,
    }
    for r in RATIOS:
        fig[f"billed@{r}"] = fig["uncached"] + r * cached
    return fig


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=6)
    ap.add_argument("--rubrics", type=int, default=9)
    ap.add_argument("--reps", type=int, default=3, help="passes per schedule (medians)")
    ap.add_argument("--concurrency", type=int, default=10)
    ap.add_argument("--block", type=int, default=128, help="cache granularity (tokens)")
    ap.add_argument("--min-cached", type=int, default=1024, help="smallest cached prefix")
    ap.add_argument("--base", type=float, default=0.05, help="seconds per call")
    ap.add_argument("--prefill", type=float, default=50_000, help="uncached tokens/s")
    ap.add_argument("--decode", type=float, default=1_000, help="output tokens/s")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["XDG_CACHE_HOME"] = str(root / "xdg")  # the extraction cache stays here
        task = synthetic_task(root, args.rubrics)
        inputs = [
            TrialInput(
                trial_id=f"bench/{t}",
                task=task,
                deliverables_dir=synthetic_deliverables(
                    root / f"deliv{t}", t, 5_000 + 15_000 * t // max(1, args.trials - 1)
                ),
            )
            for t in range(args.trials)
        ]
        print(
            f"{args.trials} trials x {args.rubrics} rubrics ({task.criterion_count} criteria), "
            f"rubric mode, concurrency {args.concurrency}, memo 5-20 kB + CSV + workbook; "
            f"cache: completed prefixes, {args.block}-token blocks from {args.min_cached}; "
            f"latency {args.base} s + uncached/{args.prefill:,.0f} tok/s + "
            f"output/{args.decode:,.0f} tok/s; tokens = chars/4; medians of {args.reps}"
        )
        one_pass("prefix", inputs, args)  # warm-up: imports, extraction cache
        runs: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
        for _ in range(args.reps):
            runs["old"].append(one_pass("all", inputs, args))
            runs["new"].append(one_pass("prefix", inputs, args))
    med = {
        name: {k: statistics.median(f[k] for f in figs) for k in figs[0]}
        for name, figs in runs.items()
    }
    head = (
        f"{'schedule':9} {'calls':>5} {'input':>8} {'cached':>8} {'uncached':>8} "
        + " ".join(f"{'billed@' + str(r):>11}" for r in RATIOS)
        + f" {'limit':>7} {'pfx-cacheable':>13} {'wall s':>7}"
    )
    print(head)
    print("-" * len(head))
    for name, f in med.items():
        print(
            f"{name:9} {f['calls']:>5.0f} {f['input']:>8,.0f} {f['cached']:>8,.0f} "
            f"{f['uncached']:>8,.0f} "
            + " ".join(f"{f[f'billed@{r}']:>11,.0f}" for r in RATIOS)
            + f" {f['limit']:>7,.0f} {f['prefix_cacheable']:>13,.0f} {f['wall']:>7.2f}"
        )
    print()
    for name, f in med.items():
        ratios = ", ".join(f"billed@{r} {f[f'billed@{r}'] / f['limit']:.2f}x" for r in RATIOS)
        print(
            f"{name}: uncached input {f['uncached'] / f['limit']:.2f}x the physical limit; {ratios}"
        )
    print(
        f"wall time new/old: {med['new']['wall']:.2f} s / {med['old']['wall']:.2f} s = "
        f"{med['new']['wall'] / med['old']['wall']:.2f}x "
        f"(per repetition: {[round(f['wall'], 2) for f in runs['old']]} old, "
        f"{[round(f['wall'], 2) for f in runs['new']]} new)"
    )


if __name__ == "__main__":
    sys.exit(main())
