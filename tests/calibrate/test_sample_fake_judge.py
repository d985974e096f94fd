"""Done-when: ``jobbench calibrate`` on the sample split's decoys against a scripted judge
server, through the real CLI, judge, openai client and HTTP.

One server plays two judge models:

* ``judge-right`` (rubric mode, one call per rubric) answers every criterion with the verdict
  of the set's ``expected.json``: calibrate must report accuracy 1.0 and score deviation 0.
* ``judge-wrong`` (task mode, one call per task) answers the same except on three known
  criteria (two false fails, one false pass): calibrate must report exactly the lower
  figures worked out below from the raw ``expected.json`` and ``RUBRICS.json`` files.

The server learns which criteria are asked by parsing the prompt (``Criterion j: ...`` lines
under the rubric question, or ``### Rubric i`` blocks in task mode). To know *which* decoy
it is reading, each decoy in a copy of the sample gets one extra deliverable file holding a
letters-only marker, so the scripted judge does not depend on how the decoys' DOCX/XLSX/PDF
files extract (``jobbench extract`` reads them all and the decoys' texts differ:
tests/calibrate/test_inputs.py or ``jobbench extract`` show it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.testing import FakeOpenAIServer

from .fakejudge import Truth

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
PRICES = {"judge-right": (2.0, 8.0), "judge-wrong": (0.1, 0.4)}  # USD per 1M input / output tokens

CIVIL, STATS = "civil_engineers", "statisticians"
# (occupation, decoy, rubric, criterion) -> the expected verdict judge-wrong contradicts
ERRORS = {
    (
        CIVIL,
        "january_prices",
        4,
        0,
    ): True,  # 'volume' (weight 6 of 40), no passing dependant: -6 points
    (
        CIVIL,
        "january_prices",
        2,
        0,
    ): False,  # 'cost' stays failed through criterion 1: no score change
    (
        STATS,
        "stale_v1_definition",
        6,
        1,
    ): True,  # 'files' (weight 2 of 30), nothing requires it: -2 points
}

pytestmark = pytest.mark.skipif(
    not SAMPLE.is_dir(), reason="the sample split is not in this checkout"
)


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("cal")
    root = tmp / "sample"
    shutil.copytree(SAMPLE / "main", root, ignore=shutil.ignore_patterns("__pycache__"))
    truth = Truth(root, ERRORS)
    prices = tmp / "prices.toml"
    prices.write_text(
        "".join(f'[models."{m}"]\ninput = {i}\noutput = {o}\n' for m, (i, o) in PRICES.items())
    )
    with pytest.MonkeyPatch.context() as mp, FakeOpenAIServer(truth.reply) as srv:
        for name in list(os.environ):  # module scope: the autouse isolation has not run yet
            if name.startswith(("JUDGE_", "JOBBENCH_JUDGE_")) or name == "OPENAI_API_KEY":
                mp.delenv(name)
        mp.setenv("XDG_CACHE_HOME", str(tmp / "xdg-cache"))
        cfgs = []
        for model, mode in (("judge-right", "rubric"), ("judge-wrong", "task")):
            p = tmp / f"{model}.toml"
            p.write_text(
                f'[judge]\nmodel = "{model}"\napi_base = "{srv.base_url}"\napi_key = "test"\n'
                f'mode = "{mode}"\ndecide = "llm"\nbackoff_base = 0\nbackoff_max = 0\ntimeout = '
                "30\n"
                "concurrency = 4\n"
            )
            cfgs += ["--judge-config", str(p)]
        out = tmp / "out"
        res = CliRunner().invoke(
            app,
            [
                "calibrate",
                "--expected",
                str(root),
                *cfgs,
                "--prices",
                str(prices),
                "--out",
                str(out),
                "--no-progress",
            ],
        )
        calls = srv.calls
    assert res.exit_code == 0, res.output
    assert truth.problems == []
    data = json.loads((out / "calibration.json").read_text())
    return data, root, out, calls, res.output


def _raw_figures(root: Path) -> dict[str, Any]:
    """Counts straight from the files: criteria, expected passes, rubrics, weights, scores."""
    n = positives = rubrics = 0
    max_points = 0.0
    scores = {}
    for exp in sorted(root.glob("*/task1/solution/decoys/*/expected.json")):
        raw = json.loads(exp.read_text())
        flat = [v for r in raw["rubrics"] for v in r["criteria"]]
        n += len(flat)
        positives += sum(flat)
        rub = json.loads((exp.parents[3] / "RUBRICS.json").read_text())["rubrics"]
        rubrics += len(rub)
        max_points += sum(r["weight"] for r in rub)
        scores[(exp.parents[4].name, exp.parent.name)] = raw["score"]
    return {
        "n": n,
        "p": positives,
        "rubrics": rubrics,
        "max_points": max_points,
        "scores": scores,
        "sets": len(scores),
    }


def _judge(data: dict, key: str, section: str) -> dict:
    return next(x for x in data[section] if x.get("judge", x.get("key")) == key)


RIGHT, WRONG = "judge-right.rubric.llm", "judge-wrong.task.llm"


def test_right_judge_scores_accuracy_one(calibrated):
    data, root, out, _, output = calibrated
    raw = _raw_figures(root)
    assert raw["sets"] == 16 and raw["n"] == 278  # 8 tasks x 2 decoys, 139 criteria per pass
    e = _judge(data, RIGHT, "expected")
    assert (e["sets"], e["criteria"], e["undecided"]) == (16, raw["n"], 0)
    assert (e["tp"], e["fp"], e["fn"], e["tn"]) == (raw["p"], 0, 0, raw["n"] - raw["p"])
    assert (e["accuracy"], e["precision"], e["recall"], e["f1"]) == (1.0, 1.0, 1.0, 1.0)
    assert e["errors"] == []
    # the judge's chained scores (jobbench.scoring) equal the expected ones (calibrate's own
    # chain rule) and the 'score' the sample's authors wrote into each expected.json
    assert e["score"]["mean_abs_diff"] == 0.0 and e["score"]["micro_abs_diff"] == 0.0
    for t in e["per_trial"]:
        occ = t["trial_id"].split("/")[1]
        decoy = t["trial_id"].split("expected@decoys.")[1].split("/")[0]
        assert t["score"] == pytest.approx(t["expected_score"])
        assert t["expected_score"] == pytest.approx(raw["scores"][(occ, decoy)], abs=5e-5)
    md = (out / "calibration.md").read_text()
    assert (
        f"| {RIGHT} | 16 | {raw['n']} | 0 | 1.000 | 1.000 | 1.000 | 1.000 | {raw['p']} | 0 | 0 |"
        in md
    )
    assert re.search(r"judge-right\.rubric\.llm\s+│\s+1\.000\s+│\s+1\.000\s+│\s+ref", output)


def test_wrong_judge_gets_exactly_the_lower_figures(calibrated):
    data, root, _, _, _ = calibrated
    raw = _raw_figures(root)
    n, p = raw["n"], raw["p"]
    e = _judge(data, WRONG, "expected")
    # two expected passes answered fail (FN), one expected fail answered pass (FP)
    assert (e["tp"], e["fp"], e["fn"], e["tn"]) == (p - 2, 1, 2, n - p - 1)
    assert e["accuracy"] == pytest.approx((n - 3) / n)
    assert e["precision"] == pytest.approx((p - 2) / (p - 1))
    assert e["recall"] == pytest.approx((p - 2) / p)
    assert e["f1"] == pytest.approx(2 * (p - 2) / (2 * (p - 2) + 1 + 2))
    got = {
        (
            x["trial_id"].split("/")[1],
            x["trial_id"].split("expected@decoys.")[1].split("/")[0],
            x["rubric"],
            x["criterion"],
        ): x["expected"]
        for x in e["errors"]
    }
    assert got == ERRORS
    # scores: january_prices loses 'volume' (6 of 40 points), stale_v1_definition 'files'
    # (2 of 30); the false pass sits in a rubric failed by its other criterion
    s = e["score"]
    assert s["trials"] == 16
    assert s["max_abs_diff"] == pytest.approx(6 / 40)
    assert s["mean_abs_diff"] == pytest.approx((6 / 40 + 2 / 30) / 16)
    assert s["micro_abs_diff"] == pytest.approx(8 / raw["max_points"])


def test_agreement_flips_and_cost(calibrated):
    data, root, out, calls, _ = calibrated
    raw = _raw_figures(root)
    n, p = raw["n"], raw["p"]
    assert data["reference"] == RIGHT
    (pair,) = data["pairs"]
    assert (pair["a"], pair["b"]) == (WRONG, RIGHT)
    assert pair["criteria_both"] == n and pair["agree"] == n - 3
    assert pair["table"] == {
        "pass/pass": p - 2,
        "pass/fail": 1,
        "fail/pass": 2,
        "fail/fail": n - p - 1,
    }
    # kappa from the 2x2 table: p_o = (n-3)/n; wrong passes p-1, right passes p
    p_o = (n - 3) / n
    p_e = ((p - 1) * p + (n - p + 1) * (n - p)) / n**2
    assert pair["kappa"] == pytest.approx((p_o - p_e) / (1 - p_e))
    assert pair["percent_agreement"] == pytest.approx(p_o)
    assert pair["score"]["micro_abs_diff"] == pytest.approx(8 / raw["max_points"])
    # the three flips, each with both judges' reasoning
    assert len(data["flips"]) == 3
    for f in data["flips"]:
        decoy = f["trial_id"].split("expected@decoys.")[1].split("/")[0]
        occ = f["trial_id"].split("/")[1]
        assert (occ, decoy, f["rubric"], f["criterion"]) in ERRORS
        want = "pass" if f["expected"] else "fail"
        other = "fail" if f["expected"] else "pass"
        assert (
            f["verdicts"][RIGHT]["reasoning"]
            == f"judge-right on {decoy} {f['rubric']}.{f['criterion']}: {want}"
        )
        assert (
            f["verdicts"][WRONG]["reasoning"]
            == f"judge-wrong on {decoy} {f['rubric']}.{f['criterion']}: {other}"
        )
    md = (out / "calibration.md").read_text()
    assert (
        "judge-wrong on january_prices 4.0: fail" in md
        and "judge-right on january_prices 4.0: pass" in md
    )
    # one call per rubric vs one per task; every reply reports 1000 + 100 tokens
    right, wrong = _judge(data, RIGHT, "judges"), _judge(data, WRONG, "judges")
    assert right["calls_per_pass"] == raw["rubrics"] == 110
    assert wrong["calls_per_pass"] == raw["sets"] == 16
    assert calls == 110 + 16
    assert right["tokens_per_pass"] == 110 * 1100 and wrong["tokens_per_pass"] == 16 * 1100
    assert right["cost_per_pass_usd"] == pytest.approx(110 * (1000 * 2.0 + 100 * 8.0) / 1e6)
    assert wrong["cost_per_pass_usd"] == pytest.approx(16 * (1000 * 0.1 + 100 * 0.4) / 1e6)
    assert right["cached_units"] == 0 and wrong["cached_units"] == 0
    assert (out / "cost_vs_agreement.png").read_bytes()[:4] == b"\x89PNG"
    # grades are written like a run's
    assert len(list((out / "grades" / RIGHT).rglob("epoch-1.json"))) == 16


def test_checks_vs_llm_matches_the_records(calibrated):
    # --decide llm keeps every check's verdict as second_opinion; calibrate's disagreement
    # list must be exactly the criteria whose recorded check verdict differs from the LLM's
    data, _, out, _, _ = calibrated
    c = _judge(data, RIGHT, "checks_vs_llm")
    want = set()
    n = 0
    for path in (out / "grades" / RIGHT).rglob("epoch-1.json"):
        rec = json.loads(path.read_text())
        for rg in rec["rubrics"]:
            for cv in rg["criteria"]:
                so = cv.get("second_opinion")
                if so and so["verdict"] in ("pass", "fail"):
                    n += 1
                    if so["verdict"] != cv["verdict"]:
                        want.add((rec["trial_id"], cv["rubric_index"], cv["criterion_index"]))
    assert n == 278  # every sample criterion has a check
    assert c["n"] == n
    assert {(d["trial_id"], d["rubric"], d["criterion"]) for d in c["disagreements"]} == want
    assert c["agree"] == n - len(want)
