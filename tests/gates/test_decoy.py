"""The decoy gate: check verdicts on solution/decoys/<name>/ against expected.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jobbench.gates import chained_score, decoy_gate, evaluate_decoys, read_expected


def test_clean_decoy_matches(clean_task, fx) -> None:
    res = decoy_gate(clean_task, fx.fake_evaluate)
    assert res.status == "pass" and res.findings == []
    assert res.metrics == {
        "decoys": {
            "trusts_ap_note": {"expected_score": 0.0, "checked": 6, "unchecked": 0, "mismatches": 0}
        }
    }


def test_expected_json_is_hidden_from_checks(tmp_path: Path, fx) -> None:
    # a regex that would match expected.json's text must not see it
    spec = fx.clean_spec()
    spec.rubrics["rubrics"][2]["checks"][1] = {"kind": "regex", "pattern": "criteria"}
    task = fx.write_task(tmp_path, spec)
    (o,) = evaluate_decoys(task, fx.fake_evaluate)
    assert o.verdicts[-1].got is False and o.mismatches == 0


def test_d1_wrong_gold_number(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    spec.rubrics["rubrics"][1]["checks"][1]["value"] = 1000.0  # the decoy's (stale) figure
    res = decoy_gate(fx.write_task(tmp_path, spec), fx.fake_evaluate)
    assert res.status == "fail"
    assert [(f.rule, f.where) for f in res.findings] == [("D1", "rubrics[1].criterion[1]")]
    assert "expected fail, check says pass (found 1,000.00)" in res.findings[0].message


def test_d1_check_that_raises(clean_task) -> None:
    def boom(check, deliverables, extraction=None):
        raise RuntimeError("bad spec")

    res = decoy_gate(clean_task, boom)
    assert res.status == "fail" and len(res.findings) == 6
    assert "check says no verdict (check raised RuntimeError: bad spec)" in res.findings[0].message


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "missing"),
        ("{not json", "invalid JSON at line 1 column 2"),
        (
            json.dumps(
                {
                    "rubrics": [
                        {"index": 0, "criteria": [True]},
                        {"index": 1, "criteria": [True, False]},
                        {"index": 2, "criteria": [False, False]},
                    ]
                }
            ),
            "rubrics[0].criteria: has 1 verdicts, rubric 0 has 2 criteria",
        ),
        (
            json.dumps(
                {
                    "rubrics": [
                        {"index": 0, "criteria": [True, False]},
                        {"index": 0, "criteria": [True, False]},
                    ]
                }
            ),
            "rubrics[1].index: rubric 0 listed twice",
        ),
        (
            json.dumps({"rubrics": [{"index": 5, "criteria": []}]}),
            "rubrics[0].index: must be a rubric index below 3",
        ),
        (
            json.dumps(
                {
                    "rubrics": [
                        {"index": 0, "criteria": [True, False]},
                        {"index": 1, "criteria": [True, "no"]},
                        {"index": 2, "criteria": [False, False]},
                    ]
                }
            ),
            "rubrics[1].criteria: must be a list of true/false",
        ),
        (
            json.dumps(
                {
                    "rubrics": [
                        {"index": 0, "criteria": [True, False]},
                        {"index": 1, "criteria": [True, False]},
                    ]
                }
            ),
            "no expected verdicts for rubric 2",
        ),
        (json.dumps([]), "rubrics: must be a list"),
    ],
)
def test_d2_invalid_expected(tmp_path: Path, fx, content, message) -> None:
    spec = fx.clean_spec()
    if content is None:
        del spec.solution["decoys/trusts_ap_note/expected.json"]
    else:
        spec.solution["decoys/trusts_ap_note/expected.json"] = content
    res = decoy_gate(fx.write_task(tmp_path, spec), fx.fake_evaluate)
    assert res.status == "fail"
    assert {f.rule for f in res.findings} == {"D2"}
    assert any(message in f.message for f in res.findings), [f.message for f in res.findings]
    assert all(f.file.endswith("trusts_ap_note/expected.json") for f in res.findings)


def test_d3_unchecked_criterion_is_info(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    spec.rubrics["rubrics"][2]["checks"][1] = None
    res = decoy_gate(fx.write_task(tmp_path, spec), fx.fake_evaluate)
    assert res.status == "pass"
    assert [(f.rule, f.severity) for f in res.findings] == [("D3", "info")]
    assert res.metrics["decoys"]["trusts_ap_note"]["unchecked"] == 1


def test_d4_decoy_too_good(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    spec.solution["decoys/no_trust/summary.md"] = fx.SOLUTION_SUMMARY.replace(
        "I trust the ledger", "I use the ledger"
    )
    spec.solution["decoys/no_trust/reconciliation.csv"] = fx.SOLUTION_RECON
    spec.solution["decoys/no_trust/expected.json"] = json.dumps(
        {
            "rubrics": [
                {"index": 0, "criteria": [True, True]},
                {"index": 1, "criteria": [True, True]},
                {"index": 2, "criteria": [True, False]},
            ]
        }
    )
    res = decoy_gate(fx.write_task(tmp_path, spec), fx.fake_evaluate)
    assert res.status == "warn"
    assert [(f.rule, f.where) for f in res.findings] == [("D4", "no_trust")]
    assert "expected to score 75%" in res.findings[0].message  # (2 + 4) / 8
    # and a decoy that only fails the heaviest rubric passes the 60 % rule: (2 + 2) / 8 = 50 %
    spec.solution["decoys/no_trust/summary.md"] = fx.SOLUTION_SUMMARY.replace(
        "$1,250.00", "$1,000.00"
    )
    spec.solution["decoys/no_trust/expected.json"] = json.dumps(
        {
            "rubrics": [
                {"index": 0, "criteria": [True, True]},
                {"index": 1, "criteria": [True, False]},
                {"index": 2, "criteria": [True, True]},
            ]
        }
    )
    res = decoy_gate(fx.write_task(tmp_path / "b", spec), fx.fake_evaluate)
    assert res.status == "pass", [str(f) for f in res.findings]


def test_deliverables_subfolder(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    for name in ("summary.md", "reconciliation.csv"):
        spec.solution[f"decoys/trusts_ap_note/deliverables/{name}"] = spec.solution.pop(
            f"decoys/trusts_ap_note/{name}"
        )
    res = decoy_gate(fx.write_task(tmp_path, spec), fx.fake_evaluate)
    assert res.status == "pass" and res.metrics["decoys"]["trusts_ap_note"]["checked"] == 6


def test_skip_without_decoys(tmp_path: Path, fx) -> None:
    spec = fx.clean_spec()
    spec.solution = {"solve.py": "# fixture\n"}
    assert decoy_gate(fx.write_task(tmp_path / "a", spec)).status == "skip"


def test_chained_score_follows_requires(clean_task) -> None:
    # weights 2, 4 (requires rubric 0), 2
    v = {0: [True, True], 1: [True, True], 2: [True, True]}
    assert chained_score(clean_task, v) == 1.0
    assert chained_score(clean_task, {**v, 0: [True, False]}) == pytest.approx(
        2 / 8
    )  # rubric 1 falls with 0
    assert chained_score(clean_task, {**v, 2: [False, True]}) == pytest.approx(6 / 8)
    assert chained_score(clean_task, {1: [True, True]}) == 0.0


def test_read_expected_ok(clean_task) -> None:
    path = clean_task.root / "solution" / "decoys" / "trusts_ap_note" / "expected.json"
    verdicts, problems = read_expected(clean_task, path)
    assert problems == [] and verdicts == {0: [True, False], 1: [True, False], 2: [False, False]}


def test_with_the_real_judge_evaluator(clean_task) -> None:
    judge = pytest.importorskip("jobbench.judge")
    if not hasattr(judge, "evaluate_check"):
        pytest.skip("jobbench.judge.evaluate_check not available yet (judge stage not merged)")
    res = decoy_gate(clean_task)
    assert res.status == "pass", [str(f) for f in res.findings]
