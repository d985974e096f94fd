"""Judge usage stays honest (what this grading spent) AND keeps what cached or reused
verdicts originally cost, so that a forced regrade served from the cache still lets the
report show the cost of a full grading pass."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from judge_helpers import TableJudge, make_run, make_task, tail_text

from jobbench.judge import JudgeCache, grade_run
from jobbench.records import Usage
from jobbench.testing import FakeOpenAIServer, ScriptedReply

REPORT = "Revenue: $1,234.50\nThe variance is 20.2% above plan.\nWe recommend Vendor B because it is cheaper."
RUBRICS = [
    {
        "rubric": "Revenue figure",
        "weight": 3,
        "criterion": ["States revenue of $1,234.50", "Names the data source"],
    },
    {
        "rubric": "Variance",
        "weight": 2,
        "criterion": ["Reports variance 20.2%", "Explains the cause"],
    },
    {"rubric": "Recommendation", "weight": 4, "criterion": ["Recommends Vendor B"]},
]
TABLE = {
    "States revenue of $1,234.50": ("pass", "Revenue: $1,234.50"),
    "Names the data source": ("pass", ""),
    "Reports variance 20.2%": ("pass", "variance is 20.2%"),
    "Explains the cause": ("fail", ""),
    "Recommends Vendor B": ("pass", "We recommend Vendor B"),
}
# per rubric (by question): prompt, completion, cached prompt tokens of its reply
USAGE = {
    "Revenue figure": (1100, 60, 0),
    "Variance": (1300, 70, 512),
    "Recommendation": (900, 40, 256),
}


def _cost(p: int, c: int, cached: int) -> float:
    """gpt-4o-mini: $0.15 / 1M input, $0.075 / 1M cached input, $0.60 / 1M output."""
    return ((p - cached) * 0.15 + cached * 0.075 + c * 0.60) / 1e6


def _scripted(table: TableJudge, fail_variance: dict[str, bool] | None = None):
    def script(req):
        tail = tail_text(req)
        question = tail.split("\n", 2)[1]
        if fail_variance is not None and fail_variance["on"] and question == "Variance":
            return ScriptedReply(status=500, body={"error": {"message": "boom"}})
        table.usage = USAGE[question]
        return table(req)

    return script


def _usage(d: dict) -> tuple:
    return (
        d["calls"],
        d["input_tokens"],
        d["cached_input_tokens"],
        d["output_tokens"],
        pytest.approx(d["cost_usd"]),
    )


def _expected(*questions: str) -> tuple:
    us = [USAGE[q] for q in questions]
    p, c, k = sum(u[0] for u in us), sum(u[1] for u in us), sum(u[2] for u in us)
    return (len(us), p, k, c, pytest.approx(sum(_cost(*u) for u in us), rel=1e-12))


@pytest.fixture
def run(tmp_path: Path) -> Path:
    task = make_task(tmp_path, RUBRICS)
    return make_run(
        tmp_path / "run",
        tmp_path / "dataset",
        [
            {
                "task": task,
                "agent": "oracle",
                "model": "-",
                "epoch": 1,
                "files": {"report.md": REPORT},
            }
        ],
    )


def test_forced_regrade_from_cache_keeps_the_original_usage(
    tmp_path: Path, run: Path, judge_config
) -> None:
    with FakeOpenAIServer(_scripted(TableJudge(TABLE))) as srv:
        cfg = judge_config(srv.base_url)
        first = grade_run(run, cfg, progress=False)[0]
        assert srv.calls == 3
        # the grade record is gone (or stale): the regrade is served by the verdict cache
        shutil.rmtree(run / "grades" / cfg.key)
        cached = grade_run(run, cfg, progress=False, force=True)[0]
        # the record itself is kept: --force reuses its verdicts
        forced = grade_run(run, cfg, progress=False, force=True)[0]
        assert srv.calls == 3  # no new call at all
    full = _expected("Revenue figure", "Variance", "Recommendation")
    assert _usage(first.usage.model_dump()) == full
    assert _usage(first.cached_usage.model_dump()) == (0, 0, 0, 0, None)  # nothing was cached
    for rec in (cached, forced):
        assert rec.score == first.score
        # honest live usage: this grading spent nothing
        assert (rec.usage.calls, rec.usage.input_tokens, rec.usage.output_tokens) == (0, 0, 0)
        # ... and the original cost of its verdicts is kept beside it
        assert _usage(rec.cached_usage.model_dump()) == full
        units = rec.units
        assert sum(u.cached_usage.calls for u in units) == 3
        assert sum(u.usage.calls for u in units) == 0
    summary = json.loads((run / "grades" / f"{cfg.key}.usage.json").read_text())
    assert _usage(summary["total"]) == (0, 0, 0, 0, None)  # the last grading spent nothing
    assert _usage(summary["cached_usage"]["total"]) == full
    assert _usage(summary["full_pass_total"]) == full
    trial = "sample/accountants/task1/oracle@-/epoch-1"
    assert _usage(summary["cached_usage"]["by_trial"][trial]) == full
    assert _usage(summary["cached_usage"]["by_agent_model"]["oracle@-"]) == full
    assert _usage(summary["cached_usage"]["by_task"]["sample/accountants/task1"]) == full


def test_resume_after_judge_error_splits_live_and_carried_usage(run: Path, judge_config) -> None:
    broken = {"on": True}
    cfg = judge_config("", cache=False)  # the carried verdicts come from the grade record itself
    with FakeOpenAIServer(_scripted(TableJudge(TABLE), broken)) as srv:
        cfg = cfg.model_copy(update={"api_base": srv.base_url})
        first = grade_run(run, cfg, progress=False)[0]
    assert first.status == "judge_error"
    assert _usage(first.usage.model_dump()) == _expected("Revenue figure", "Recommendation")
    broken["on"] = False
    with FakeOpenAIServer(_scripted(TableJudge(TABLE), broken)) as srv:
        cfg = cfg.model_copy(update={"api_base": srv.base_url})
        second = grade_run(run, cfg, progress=False)[0]
        assert srv.calls == 1
    assert second.status == "complete"
    assert _usage(second.usage.model_dump()) == _expected("Variance")
    assert _usage(second.cached_usage.model_dump()) == _expected("Revenue figure", "Recommendation")
    summary = json.loads((run / "grades" / f"{cfg.key}.usage.json").read_text())
    assert _usage(summary["full_pass_total"]) == _expected(
        "Revenue figure", "Variance", "Recommendation"
    )


def test_cache_entries_keep_their_usage_and_old_caches_still_open(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)  # the schema written before the call count was stored
    con.execute(
        "CREATE TABLE replies (key TEXT PRIMARY KEY, model TEXT, created_at TEXT, payload TEXT NOT NULL, "
        "input_tokens INTEGER, cached_input_tokens INTEGER, output_tokens INTEGER, cost_usd REAL)"
    )
    payload = {
        "verdicts": {"0:0": {"verdict": "pass"}},
        "model_verdicts": {},
        "overall": {},
        "raw": ["{}", "{}"],
    }
    con.execute(
        "INSERT INTO replies VALUES ('k-old', 'm', 't', ?, 2000, 100, 90, 0.5)",
        (json.dumps(payload),),
    )
    con.commit()
    con.close()
    cache = JudgeCache(path)
    try:
        got = cache.get_entry("k-old")
        assert got is not None and got[0] == payload
        assert got[1] == {
            "calls": 2,
            "input_tokens": 2000,
            "cached_input_tokens": 100,
            "output_tokens": 90,
            "cost_usd": 0.5,
        }
        u = Usage(
            calls=7,
            input_tokens=26050,
            cached_input_tokens=1000,
            output_tokens=700,
            cost_usd=0.0123,
        )
        cache.put("k-new", "m", payload, u.model_dump())
        assert cache.get_entry("k-new")[1] == u.model_dump()
        assert cache.get("k-new") == payload
        assert cache.stats()["models"]["m"]["calls"] == 7  # the old entry has no stored count
    finally:
        cache.close()
