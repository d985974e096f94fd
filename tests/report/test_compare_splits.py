"""``compare`` across splits: a main-split run against an easy-split run pairs each task with
its variant of the same occupation and number (the paper's main-vs-easy view)."""

from __future__ import annotations

import pytest

from jobbench.report import build_report
from jobbench.scoring import compare


def _as_easy(items):
    """The same results under the ``easy`` split (task ids ``easy/<occupation>/taskN``)."""
    return [
        x.model_copy(update={"task_id": "easy/" + x.task_id.split("/", 1)[1], "split": "easy"})
        for x in items
    ]


def test_pairing_by_occupation_and_task_number(run_a):
    data = build_report([run_a], n_resamples=200)
    beta, alpha = data.config("beta@m2"), data.config("alpha@m1")
    same = compare(beta.tasks, alpha.tasks, beta.trials, alpha.trials, n_resamples=500, seed=1)
    easy_tasks, easy_trials = _as_easy(alpha.tasks), _as_easy(alpha.trials)
    # by task id, a main run and an easy run share nothing
    none = compare(beta.tasks, easy_tasks, beta.trials, easy_trials, n_resamples=500, seed=1)
    assert none.tasks == [] and len(none.only_in_a) == 4 and none.micro.difference is None
    across = compare(
        beta.tasks,
        easy_tasks,
        beta.trials,
        easy_trials,
        n_resamples=500,
        seed=1,
        pair_by="occupation_task",
    )
    assert across.pair_by == "occupation_task"
    assert across.tasks == [t.split("/", 1)[1] for t in same.tasks]
    assert across.missing_in_b == [t.split("/", 1)[1] for t in same.missing_in_b]
    assert across.only_in_a == [] and across.only_in_b == []
    for field in ("micro", "macro"):
        got, want = getattr(across, field), getattr(same, field)
        assert (got.a, got.b, got.difference, got.low, got.high) == pytest.approx(
            (want.a, want.b, want.difference, want.low, want.high)
        )
    assert across.ratios == pytest.approx(same.ratios)
    assert across.ratios["wall_seconds"] == pytest.approx(2.4)
