"""Reading grades and expected verdicts: pairing, pooling and clear errors on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jobbench.calibrate import (
    CalibrateInputError,
    ExpectedFileError,
    discover_sets,
    expected_score,
    load_expected,
    read_run_grades,
    sets_in_folder,
)
from jobbench.calibrate._run import run_calibration
from jobbench.cli import app
from jobbench.tasks import load_dataset, load_task

from .conftest import BIG, CHEAP, CHECKS, TR1, TR2, USAGE, VERDICTS, make_record, write_record

# ----------------------------------------------------------------------------- grades


def test_pooling_two_runs_and_pairing_by_trial(tmp_path: Path, dataset: Path):
    # judge big graded trial 1 in run A and trial 2 in run B: pooled under one key
    ra, rb = tmp_path / "A", tmp_path / "B"
    write_record(ra, BIG, make_record(BIG, TR1, VERDICTS[BIG][TR1]))
    write_record(rb, BIG, make_record(BIG, TR2, VERDICTS[BIG][TR2]))
    write_record(ra, CHEAP, make_record(CHEAP, TR1, VERDICTS[CHEAP][TR1]))
    write_record(rb, CHEAP, make_record(CHEAP, TR2, VERDICTS[CHEAP][TR2]))
    judges = read_run_grades([ra, rb])
    assert sorted(judges[BIG].records) == [TR1, TR2]
    assert judges[BIG].paths[TR2] == rb / "grades" / BIG / f"{TR2}.json"


def test_same_trial_twice_under_one_key_names_both_files(tmp_path: Path):
    ra, rb = tmp_path / "A", tmp_path / "B"
    write_record(ra, BIG, make_record(BIG, TR1, VERDICTS[BIG][TR1]))
    write_record(rb, BIG, make_record(BIG, TR1, VERDICTS[BIG][TR1]))
    with pytest.raises(CalibrateInputError) as exc:
        read_run_grades([ra, rb])
    msg = str(exc.value)
    assert "two grades of trial" in msg and "A/grades" in msg and "B/grades" in msg


def test_malformed_grade_names_file_and_field(run: Path):
    bad = run / "grades" / BIG / "main/clerks/task9/agent@m/epoch-1.json"
    bad.parent.mkdir(parents=True)
    bad.write_text(
        json.dumps(
            {
                "trial_id": "x",
                "task_id": "y",
                "judge": {},
                "rubrics": [],
                "score": "high",
                "max_score": 1,
                "passed_weight": 0,
                "status": "complete",
            }
        )
    )
    with pytest.raises(CalibrateInputError) as exc:
        read_run_grades([run])
    assert "task9/agent@m/epoch-1.json: field score:" in str(exc.value)


def test_unknown_key_and_ungraded_run(run: Path, tmp_path: Path):
    with pytest.raises(
        CalibrateInputError, match=r"judge key 'nope' has no grades .*found: checks, gpt-big"
    ):
        read_run_grades([run], ["nope"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CalibrateInputError, match="no grades/ folder"):
        read_run_grades([empty])


def test_different_deliverables_are_not_paired(run: Path, tmp_path: Path):
    # cheap graded trial 1 from other files than big did: trial 1 is left out of every figure
    write_record(
        run,
        CHEAP,
        make_record(CHEAP, TR1, VERDICTS[CHEAP][TR1], usage=USAGE[CHEAP][TR1], sha="b" * 64),
    )
    report, _ = run_calibration([run], judge_keys=[BIG, CHEAP], out_dir=tmp_path / "out")
    assert any("graded from different deliverables" in w and TR1 in w for w in report.warnings)
    (p,) = report.pairs
    assert p.criteria_both == 2 and p.score.trials == 1  # trial 2 only: P F vs P F


# ----------------------------------------------------------------------------- expected


def _task_with_sets(root: Path) -> Path:
    """A task whose rubric 1 requires rubric 0 (weights 2 and 3, two criteria each), with
    three sets under solution/decoys (one malformed) and one folder lacking deliverables."""
    d = root / "main" / "clerks" / "task1"
    (d / "task_folder").mkdir(parents=True)
    (d / "task_folder" / "TASK_INSTRUCTIONS.txt").write_text("Do it.\n")
    (d / "task_card.md").write_text("card\n")
    rubrics = [
        {"id": "a", "rubric": "A?", "weight": 2, "criterion": ["a1", "a2"]},
        {"id": "b", "rubric": "B?", "weight": 3, "criterion": ["b1", "b2"], "requires": ["a"]},
    ]
    (d / "RUBRICS.json").write_text(json.dumps({"rubrics": rubrics}))
    sets = {
        "good": {
            "rubrics": [
                {"index": 0, "criteria": [True, True]},
                {"index": 1, "criteria": [True, False]},
            ]
        },
        "a_fails": {
            "rubrics": [
                {"index": 0, "criteria": [True, False]},
                {"index": 1, "criteria": [True, True]},
            ],
            "note": "b is right but requires a",
        },
        "broken": {"rubrics": [{"index": 0, "criteria": [True]}]},
    }
    for name, exp in sets.items():
        s = d / "solution" / "decoys" / name
        (s / "deliverables").mkdir(parents=True)
        (s / "deliverables" / "out.txt").write_text(name)
        (s / "expected.json").write_text(json.dumps(exp))
    (d / "solution" / "decoys" / "no_deliverables").mkdir()
    (d / "solution" / "decoys" / "no_deliverables" / "expected.json").write_text("{}")
    return d


def test_discover_sets(tmp_path: Path):
    d = _task_with_sets(tmp_path / "ds")
    ds = load_dataset(tmp_path / "ds")
    sets, problems = discover_sets(ds.tasks)
    assert [s.name for s in sets] == ["decoys/a_fails", "decoys/good"]
    assert sets[0].trial_id == "main/clerks/task1/expected@decoys.a_fails/epoch-1"
    assert sets[0].deliverables_dir == d / "solution" / "decoys" / "a_fails" / "deliverables"
    assert sets[0].note == "b is right but requires a"
    (msg,) = problems
    assert (
        "broken/expected.json: field rubrics[0].criteria: must list 2 verdict(s) for rubric 0"
        in msg
    )
    # expected scores by the chain rule: good -> a passes (2), b fails; a_fails -> a fails, b
    # requires a so it fails too although its own criteria pass
    assert (sets[1].expected_score.passed_weight, sets[1].expected_score.max_score) == (2.0, 5.0)
    assert sets[0].expected_score.passed_weight == 0.0


def test_sets_in_folder(tmp_path: Path):
    d = _task_with_sets(tmp_path / "ds")
    task = load_task(d)
    sets = sets_in_folder(d / "solution" / "decoys" / "good", task)
    assert [s.name for s in sets] == ["good"]
    with pytest.raises(ExpectedFileError, match="no folder with deliverables/ and expected.json"):
        sets_in_folder(d / "task_folder", task)


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "invalid JSON at line 1"),
        ('{"rubrics": {}}', "field rubrics: must be a list"),
        (
            '{"rubrics": [{"index": "0", "criteria": [true, true]}]}',
            "field rubrics[0].index: must be an integer",
        ),
        (
            '{"rubrics": [{"index": 5, "criteria": [true, true]}]}',
            "rubrics[0].index: 5 is not a rubric of main/clerks/task1",
        ),
        (
            '{"rubrics": [{"index": 0, "criteria": [true, true]}, {"index": 0, "criteria": [true, true]}]}',
            "rubrics[1].index: rubric 0 listed twice",
        ),
        (
            '{"rubrics": [{"index": 1, "criteria": ["yes", true]}]}',
            "rubrics[0].criteria[0]: must be true, false or null, got 'yes'",
        ),
    ],
)
def test_expected_file_errors(tmp_path: Path, content: str, message: str):
    d = _task_with_sets(tmp_path / "ds")
    task = load_task(d)
    p = tmp_path / "expected.json"
    p.write_text(content)
    with pytest.raises(ExpectedFileError) as exc:
        load_expected(p, task)
    assert message in str(exc.value) and "expected.json" in str(exc.value)


def test_partial_expectations(tmp_path: Path):
    d = _task_with_sets(tmp_path / "ds")
    task = load_task(d)
    p = tmp_path / "expected.json"
    p.write_text('{"rubrics": [{"index": 0, "criteria": [true, null]}]}')
    verdicts, note = load_expected(p, task)
    assert verdicts == {(0, 0): True, (0, 1): None, (1, 0): None, (1, 1): None} and note == ""
    assert expected_score(task, verdicts) is None  # unknown criteria: no expected score


# ----------------------------------------------------------------------------- CLI on runs


def test_cli_on_a_run(run: Path, tmp_path: Path):
    out = tmp_path / "cal"
    res = CliRunner().invoke(app, ["calibrate", str(run), "--reference", BIG, "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "Judge calibration (reference: gpt-big.rubric.llm)" in res.output
    assert "2 verdict flip(s)" in res.output
    data = json.loads((out / "calibration.json").read_text())
    pair = next(p for p in data["pairs"] if p["a"] == CHEAP)
    assert pair["b"] == BIG and pair["percent_agreement"] == pytest.approx(0.8)
    assert (out / "calibration.md").is_file() and (out / "cost_vs_agreement.png").is_file()
    assert data["sources"]["judges"] == [CHECKS, BIG, CHEAP]

    res = CliRunner().invoke(
        app, ["calibrate", str(run), "-k", CHEAP, "-k", BIG, "--json", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["reference"] == CHEAP and [(p["a"], p["b"]) for p in data["pairs"]] == [
        (BIG, CHEAP)
    ]


def test_cli_bad_input_exits_2(run: Path, tmp_path: Path):
    r = CliRunner()
    res = r.invoke(app, ["calibrate", str(tmp_path / "missing"), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "no grades/ folder" in res.output
    res = r.invoke(app, ["calibrate", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "nothing to calibrate" in res.output
    res = r.invoke(app, ["calibrate", str(run), "--judge-model", "m", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "give --expected or --sets too" in res.output
    res = r.invoke(
        app, ["calibrate", str(run), "--reference", "nope", "--out", str(tmp_path / "o")]
    )
    assert res.exit_code == 2 and "reference judge 'nope'" in res.output
    res = r.invoke(
        app, ["calibrate", "--expected", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o")]
    )
    assert res.exit_code == 2 and "no such file or folder" in res.output
    res = r.invoke(app, ["calibrate", "--sets", str(tmp_path), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "--sets and --task go together" in res.output


def test_cli_sets_folder_with_the_checks_judge(tmp_path: Path):
    """``--sets DIR --task T`` with programmatic checks only, figures worked out by hand.

    Task: rubric 0 (weight 1) 'hello' + 'world', rubric 1 (weight 1, requires 0) '42', each
    criterion decided by a regex check. Sets (file out.txt; expected verdicts; check verdicts):
      s1 'hello world 42'  expected T T | T   checks P P | P   (3 right)
      s2 'hello there'     expected T F | F   checks P F | F   (3 right)
      s3 'HELLO wrld 42'   expected T T | T   checks P F | P   (a reader forgives the typo; the regex does not)
    Confusion (pass positive): TP 6, FN 1, FP 0, TN 2 -> accuracy 8/9, precision 1,
    recall 6/7, F1 12/13. Scores: expected 1, 0, 1; checks 1, 0, 0 (s3: rubric 0 fails, so
    rubric 1 fails by its requires) -> mean |diff| 1/3, micro 4/6 vs 2/6.
    """
    d = tmp_path / "ds" / "main" / "clerks" / "task1"
    (d / "task_folder").mkdir(parents=True)
    (d / "task_folder" / "TASK_INSTRUCTIONS.txt").write_text("Greet.\n")
    (d / "task_card.md").write_text("card\n")
    rubrics = [
        {
            "id": "greet",
            "rubric": "Greeting?",
            "weight": 1,
            "criterion": ["says hello", "says world"],
            "checks": [
                {"kind": "regex", "pattern": "hello"},
                {"kind": "regex", "pattern": "world"},
            ],
        },
        {
            "id": "answer",
            "rubric": "Answer?",
            "weight": 1,
            "criterion": ["gives 42"],
            "requires": ["greet"],
            "checks": [{"kind": "regex", "pattern": "42"}],
        },
    ]
    (d / "RUBRICS.json").write_text(json.dumps({"rubrics": rubrics}))
    sets = {
        "s1": ("hello world 42", [[True, True], [True]]),
        "s2": ("hello there", [[True, False], [False]]),
        "s3": ("HELLO wrld 42", [[True, True], [True]]),
    }
    for name, (text, exp) in sets.items():
        s = tmp_path / "sets" / name
        (s / "deliverables").mkdir(parents=True)
        (s / "deliverables" / "out.txt").write_text(text)
        (s / "expected.json").write_text(
            json.dumps({"rubrics": [{"index": i, "criteria": c} for i, c in enumerate(exp)]})
        )
    out = tmp_path / "out"
    res = CliRunner().invoke(
        app,
        [
            "calibrate",
            "--sets",
            str(tmp_path / "sets"),
            "--task",
            str(d),
            "--checks-judge",
            "--out",
            str(out),
            "--no-progress",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads((out / "calibration.json").read_text())
    (e,) = data["expected"]
    assert e["judge"] == "checks" and e["sets"] == 3
    assert (e["tp"], e["fp"], e["fn"], e["tn"]) == (6, 0, 1, 2)
    assert e["accuracy"] == pytest.approx(8 / 9)
    assert e["precision"] == 1.0
    assert e["recall"] == pytest.approx(6 / 7)
    assert e["f1"] == pytest.approx(12 / 13)
    assert [(x["trial_id"], x["rubric"], x["criterion"]) for x in e["errors"]] == [
        ("main/clerks/task1/expected@s3/epoch-1", 0, 1)
    ]
    assert [(t["score"], t["expected_score"]) for t in e["per_trial"]] == [
        (1.0, 1.0),
        (0.0, 0.0),
        (0.0, 1.0),
    ]
    assert e["score"]["mean_abs_diff"] == pytest.approx(1 / 3)
    assert (e["score"]["micro_a"], e["score"]["micro_b"]) == pytest.approx((2 / 6, 4 / 6))
    assert (
        data["pairs"] == [] and data["overall"]["alpha"] is None
    )  # one judge: no agreement figures
    grade = out / "grades" / "checks" / "main/clerks/task1/expected@s3/epoch-1.json"
    assert grade.is_file()

    # --reuse-grades: the same figures from the stored grades, nothing graded again
    grade.write_text(grade.read_text().replace('"created_at": "', '"created_at": "reused-marker '))
    res = CliRunner().invoke(
        app,
        [
            "calibrate",
            "--sets",
            str(tmp_path / "sets"),
            "--task",
            str(d),
            "--reuse-grades",
            "--out",
            str(out),
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    again = json.loads(res.stdout)
    assert again["expected"] == data["expected"]
    assert '"created_at": "reused-marker ' in grade.read_text()  # not overwritten by a new grade
    assert again["sources"]["reused grades"].endswith("out/grades")
    res = CliRunner().invoke(
        app,
        [
            "calibrate",
            "--sets",
            str(tmp_path / "sets"),
            "--task",
            str(d),
            "--reuse-grades",
            "--out",
            str(tmp_path / "elsewhere"),
        ],
    )
    assert res.exit_code == 2 and "no grades to reuse" in res.output
