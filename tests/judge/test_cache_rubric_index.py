"""A rubric inserted in front of a task moves the others' indexes; their cached verdicts
are stored by index, so a cache hit that lacks the asked verdicts is asked again instead of
becoming a judge_error no regrade can fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from judge_helpers import TableJudge, make_task, write_files

from jobbench.judge import Grader, JudgeConfig, TrialInput
from jobbench.testing import FakeOpenAIServer

A = {"rubric": "Part A", "weight": 1, "criterion": ["A holds", "A2 holds"]}
B = {"rubric": "Part B", "weight": 1, "criterion": ["B holds"]}
X = {"rubric": "Part X", "weight": 1, "criterion": ["X holds"]}
TABLE = {t: ("pass", "") for t in ["A holds", "A2 holds", "B holds", "X holds"]}


def _grade(config: JudgeConfig, task, deliv: Path):
    grader = Grader(config)
    try:
        (rec,) = grader.grade([TrialInput(trial_id="t", task=task, deliverables_dir=deliv)])
    finally:
        grader.close()
    return rec


@pytest.mark.parametrize("mode", ["rubric", "criterion", "official"])
def test_a_rubric_inserted_in_front_is_graded_not_stuck(tmp_path: Path, mode: str) -> None:
    deliv = write_files(tmp_path / "deliv", {"memo.md": "Memo.\n"})
    with FakeOpenAIServer(TableJudge(TABLE)) as srv:
        config = JudgeConfig(
            model="gpt-4o-mini",
            api_base=srv.base_url,
            api_key="test",
            backoff_base=0.0,
            decide="llm",
            cache=True,
            cache_path=tmp_path / "cache.sqlite",
            mode=mode,
        )
        first = _grade(config, make_task(tmp_path / "v1", [A, B]), deliv)
        assert first.status == "complete" and first.score == 1.0
        moved = make_task(tmp_path / "v2", [X, A, B])
        second = _grade(config, moved, deliv)
        assert second.status == "complete" and second.score == 1.0
        assert [c.verdict for r in second.rubrics for c in r.criteria] == ["pass"] * 4
        calls = srv.calls
        third = _grade(config, moved, deliv)  # now cached under the new indexes
        assert third.status == "complete" and srv.calls == calls
