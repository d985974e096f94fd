"""One chain rule: the same criterion verdicts, undecided ones included, give the same z_r and
s_t through scoring (as the judge calls it), the decoy gate and judge calibration, both from
verdicts in memory and from an ``expected.json`` read by the one reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jobbench.calibrate import expected_score, load_expected
from jobbench.gates import evaluate_decoys, expected_decoy_score
from jobbench.scoring import chain_values, task_score
from jobbench.tasks import load_task

SAMPLE = Path(__file__).resolve().parents[1] / "datasets" / "sample"
TASK = SAMPLE / "easy" / "civil_engineers" / "task1"
# rubrics (weight, criteria, requires): 0 (6, 4, -), 1 (6, 3, -), 2 (8, 2, [0, 1]), 3 (8, 2, -),
# 4 (8, 2, [2, 3]); Σ w = 36.
SHAPE = [4, 3, 2, 2, 2]

CASES = [
    ("all pass", {}, 36 / 36),
    ("rubric 0 fails: 2 and 4 fall with it", {(0, 1): False}, (6 + 8) / 36),
    ("rubric 3 fails: 4 falls with it", {(3, 0): False}, (6 + 6 + 8) / 36),
    ("one unknown criterion", {(1, 2): None}, None),
    # a failed link does not decide a chain that also holds an undecided one (fail-closed)
    ("rubric 0 fails, rubric 1 unknown", {(0, 0): False, (1, 0): None}, None),
    ("rubric 0 fails, rubric 3 unknown", {(0, 0): False, (3, 1): None}, None),
]


def _verdicts(changes: dict) -> dict[tuple[int, int], bool | None]:
    out: dict[tuple[int, int], bool | None] = {
        (r, c): True for r, n in enumerate(SHAPE) for c in range(n)
    }
    out.update(changes)
    return out


def _label(v: bool | None) -> str:
    return "unjudged" if v is None else ("pass" if v else "fail")


@pytest.fixture(scope="module")
def task():
    t = load_task(TASK)
    assert [(r.weight, len(r.criteria), list(r.requires)) for r in t.rubrics] == [
        (6.0, 4, []),
        (6.0, 3, []),
        (8.0, 2, [0, 1]),
        (8.0, 2, []),
        (8.0, 2, [2, 3]),
    ]
    return t


@pytest.mark.parametrize("name, changes, want", CASES, ids=[c[0] for c in CASES])
def test_scoring_gates_and_calibrate_agree(task, name, changes, want) -> None:
    v = _verdicts(changes)
    # scoring, called the way judge/_grade.py calls it: verdict strings per rubric
    values = chain_values(
        [[_label(v[(r, c)]) for c in range(n)] for r, n in enumerate(SHAPE)],
        [list(r.requires) for r in task.rubrics],
    )
    scored = task_score([r.weight for r in task.rubrics], values).score
    gate = expected_decoy_score(task, v)
    point = expected_score(task, v)
    calibrated = None if point is None else point.score
    if want is None:
        assert scored is None and gate is None and calibrated is None
    else:
        assert scored == pytest.approx(want)
        assert gate == pytest.approx(want) and calibrated == pytest.approx(want)


@pytest.mark.parametrize("name, changes, want", CASES, ids=[c[0] for c in CASES])
def test_one_expected_json_reader(task, tmp_path: Path, name, changes, want) -> None:
    v = _verdicts(changes)
    decoy = tmp_path / "solution" / "decoys" / "d"
    decoy.mkdir(parents=True)
    (decoy / "expected.json").write_text(
        json.dumps(
            {
                "rubrics": [
                    {"index": r, "criteria": [v[(r, c)] for c in range(n)]}
                    for r, n in enumerate(SHAPE)
                ]
            }
        )
    )
    verdicts, _ = load_expected(decoy / "expected.json", task)
    assert verdicts == v
    # the gate reads the same file through the same reader and scores it the same way
    copy = task.model_copy(update={"root": tmp_path})
    (outcome,) = evaluate_decoys(copy, lambda check, d, extraction=None: None)
    if want is None:
        assert outcome.expected_score is None
        assert outcome.problems and all("no expected verdict" in p for p in outcome.problems)
    else:
        assert outcome.expected_score == pytest.approx(want)
