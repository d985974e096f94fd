"""Helpers for judge tests (imported by the test modules): tiny tasks on disk and a scripted judge
that answers from
a table keyed by criterion text (driving the real openai client over HTTP)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from jobbench.judge import grade_trial
from jobbench.tasks import Task, load_task
from jobbench.testing import FakeOpenAIServer, ScriptedReply, chat_reply
from jobbench.testing import tail_text as tail_text  # re-exported for the judge tests
from jobbench.testing import user_parts as user_parts


def make_task(
    root: Path,
    rubrics: list[dict[str, Any]],
    occupation: str = "accountants",
    n: int = 1,
    split: str = "sample",
) -> Task:
    """Write a valid task directory and load it."""
    d = root / "dataset" / split / occupation / f"task{n}"
    (d / "task_folder").mkdir(parents=True, exist_ok=True)
    (d / "task_folder" / "TASK_INSTRUCTIONS.txt").write_text("Do the thing.", encoding="utf-8")
    (d / "task_card.md").write_text("card", encoding="utf-8")
    (d / "RUBRICS.json").write_text(json.dumps({"rubrics": rubrics}), encoding="utf-8")
    return load_task(d, split=split, occupation=occupation)


def write_files(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return folder


CRIT_RE = re.compile(r"^Criterion (\d+): (.*)$", re.MULTILINE)


def asked(req: dict[str, Any]) -> list[tuple[int | None, int, str]]:
    """[(rubric index or None, criterion index, criterion text)] asked in a request."""
    t = tail_text(req)
    out: list[tuple[int | None, int, str]] = []
    if t.startswith("## Rubrics"):
        parts = re.split(r"^### Rubric (\d+)\n", t, flags=re.MULTILINE)
        for i in range(1, len(parts), 2):
            r = int(parts[i])
            for m in CRIT_RE.finditer(parts[i + 1]):
                out.append((r, int(m.group(1)), m.group(2).strip()))
        return out
    return [(None, int(m.group(1)), m.group(2).strip()) for m in CRIT_RE.finditer(t)]


class TableJudge:
    """Answers every judge request from ``table[criterion text] = (verdict, evidence)``.

    ``overall`` optionally overrides the rubric_passed value per rubric question substring.
    Usage numbers per reply are scripted (``usage``) so tests can sum them independently.
    """

    def __init__(
        self,
        table: dict[str, tuple[str, str]],
        overall: dict[str, bool] | None = None,
        usage: tuple[int, int, int] = (100, 20, 0),
    ):
        self.table = table
        self.overall = overall or {}
        self.usage = usage
        self.replies: list[dict[str, Any]] = []

    def item(self, j: int, text: str) -> dict[str, Any]:
        verdict, evidence = self.table[text]
        return {"index": j, "reasoning": f"judged {j}", "evidence": evidence, "verdict": verdict}

    def __call__(self, req: dict[str, Any]) -> ScriptedReply:
        t = tail_text(req)
        items = asked(req)
        p, c, cached = self.usage
        if t.startswith("## Rubrics"):
            rubrics: dict[int, list[dict[str, Any]]] = {}
            for r, j, text in items:
                rubrics.setdefault(r, []).append(self.item(j, text))
            body = {
                "rubrics": [
                    {
                        "index": r,
                        "criteria": cs,
                        "rubric_passed": all(x["verdict"] == "pass" for x in cs),
                    }
                    for r, cs in rubrics.items()
                ]
            }
        elif "## Criterion to judge" in t:
            ((_, j, text),) = items
            it = self.item(j, text)
            body = {
                "reasoning": it["reasoning"],
                "evidence": it["evidence"],
                "verdict": it["verdict"],
            }
        else:
            cs = [self.item(j, text) for _, j, text in items]
            passed = all(x["verdict"] == "pass" for x in cs)
            for frag, value in self.overall.items():
                if frag in t:
                    passed = value
            body = {"criteria": cs, "overall_reasoning": "ok", "rubric_passed": passed}
        self.replies.append(body)
        return chat_reply(
            json.dumps(body), prompt_tokens=p, completion_tokens=c, cached_tokens=cached
        )


def make_run(run_dir: Path, dataset_root: Path, trials: list[dict[str, Any]]) -> Path:
    """Write a run directory per the COMMON.md contract.

    Each trial dict: ``task`` (Task), ``agent``, ``model``, ``epoch``, ``files`` (rel → text),
    optional ``status``.
    """
    import hashlib

    from jobbench.records import DeliverableFile, TrialRecord
    from jobbench.tasks import task_digest

    run_dir.mkdir(parents=True, exist_ok=True)
    tasks = {t["task"].id: task_digest(t["task"]) for t in trials}
    (run_dir / "lock.json").write_text(
        json.dumps(
            {
                "harness_version": "test",
                "created_at": "2026-01-01T00:00:00Z",
                "dataset_root": str(dataset_root),
                "tasks": tasks,
                "agents": [],
                "epochs": 1,
                "config": {},
            }
        ),
        encoding="utf-8",
    )
    for t in trials:
        task = t["task"]
        trial_id = f"{task.id}/{t['agent']}@{t['model']}/epoch-{t['epoch']}"
        tdir = run_dir / "trials" / trial_id
        deliv = write_files(tdir / "deliverables", t["files"])
        manifest = [
            DeliverableFile(
                path=rel, size=len(text.encode()), sha256=hashlib.sha256(text.encode()).hexdigest()
            )
            for rel, text in sorted(t["files"].items())
        ]
        rec = TrialRecord(
            trial_id=trial_id,
            task_id=task.id,
            task_digest=tasks[task.id],
            agent=t["agent"],
            model=t["model"],
            epoch=t["epoch"],
            status=t.get("status", "ok"),
            deliverables=manifest,
        )
        (tdir / "trial.json").write_text(rec.model_dump_json(indent=2), encoding="utf-8")
        assert deliv.is_dir()
    return run_dir


def grade_replies(
    tmp_path: Path,
    judge_config: Any,
    replies: list[ScriptedReply],
    rubrics: list[dict[str, Any]],
    **config: Any,
) -> tuple[Any, list[dict]]:
    """Grade a one-file deliverable ("We recommend Vendor A.") of a task with ``rubrics``
    against a scripted server answering ``replies`` in order (the last one repeated).

    Returns:
        ``(grade record, requests the server saw)``.
    """
    task = make_task(tmp_path, rubrics)
    deliv = write_files(tmp_path / "deliv", {"report.md": "We recommend Vendor A."})
    seen: list[dict] = []

    def script(req: dict) -> ScriptedReply:
        seen.append(req)
        return replies[min(len(seen), len(replies)) - 1]

    with FakeOpenAIServer(script) as srv:
        rec = grade_trial(task, deliv, judge_config(srv.base_url, **config))
    return rec, seen
