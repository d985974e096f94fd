"""``jobbench calibrate RUN`` on a real run directory graded by ``jobbench.judge.grade_run``
under three judge configurations: programmatic checks only, a scripted LLM that answers
correctly (``--decide llm``, rubric mode) and one that errs on three known criteria (task
mode). Trials are decoys of two sample tasks, copied in as an agent's deliverables."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jobbench.calibrate import krippendorff_alpha
from jobbench.cli import app
from jobbench.judge import JudgeConfig, grade_run
from jobbench.records import DeliverableFile, TrialRecord, TrialStatus
from jobbench.tasks import sha256_file, task_digest
from jobbench.testing import FakeOpenAIServer

from .fakejudge import Truth

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
TASKS = ("civil_engineers", "statisticians")
ERRORS = {
    ("civil_engineers", "january_prices", 4, 0): True,
    ("civil_engineers", "january_prices", 2, 0): False,
    ("statisticians", "stale_v1_definition", 6, 1): True,
}
pytestmark = pytest.mark.skipif(
    not SAMPLE.is_dir(), reason="the sample split is not in this checkout"
)


def _make_run(tmp: Path) -> tuple[Path, Truth, list[str]]:
    root = tmp / "data" / "sample"
    for occ in TASKS:
        shutil.copytree(SAMPLE / "main" / occ, root / occ)
    truth = Truth(root, ERRORS)
    run = tmp / "runs" / "decoys"
    trial_ids = []
    lock_tasks = {}
    for _occ, task in sorted(truth.tasks.items()):
        lock_tasks[task.id] = task_digest(task)
        for d in sorted((task.root / "solution" / "decoys").iterdir()):
            tid = f"{task.id}/decoy@{d.name}/epoch-1"
            trial_dir = run / "trials" / tid
            shutil.copytree(d / "deliverables", trial_dir / "deliverables")
            files = sorted(p for p in (trial_dir / "deliverables").rglob("*") if p.is_file())
            manifest = [
                DeliverableFile(
                    path=p.relative_to(trial_dir / "deliverables").as_posix(),
                    size=p.stat().st_size,
                    sha256=sha256_file(p),
                )
                for p in files
            ]
            rec = TrialRecord(
                trial_id=tid,
                task_id=task.id,
                task_digest=lock_tasks[task.id],
                agent="decoy",
                model=d.name,
                epoch=1,
                status=TrialStatus.ok,
                deliverables=manifest,
            )
            (trial_dir / "trial.json").write_text(rec.model_dump_json(indent=2))
            trial_ids.append(tid)
    (run / "lock.json").write_text(
        json.dumps(
            {
                "harness_version": "test",
                "created_at": "2026-01-01T00:00:00Z",
                "dataset_root": str(root.parent),
                "tasks": lock_tasks,
                "agents": [{"agent": "decoy", "model": "-", "settings": {}}],
                "epochs": 1,
                "config": {},
            }
        )
    )
    return run, truth, trial_ids


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("runjudges")
    run, truth, trial_ids = _make_run(tmp)
    with FakeOpenAIServer(truth.reply) as srv:
        common = dict(
            api_base=srv.base_url,
            api_key="test",
            decide="llm",
            cache=False,
            backoff_base=0.0,
            backoff_max=0.0,
            timeout=30.0,
            concurrency=4,
        )
        configs = [
            JudgeConfig(),
            JudgeConfig(model="judge-right", mode="rubric", **common),
            JudgeConfig(model="judge-wrong", mode="task", **common),
        ]
        for cfg in configs:
            grade_run(run, cfg, progress=False)
    assert truth.problems == []
    keys = [c.key for c in configs]
    assert keys == ["checks", "judge-right.rubric.llm", "judge-wrong.task.llm"]
    assert (run / "grades" / "checks.usage.json").is_file()  # written by the judge, not a grade
    out = tmp / "cal"
    res = CliRunner().invoke(
        app, ["calibrate", str(run), "--reference", keys[1], "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    return json.loads((out / "calibration.json").read_text()), run, truth, trial_ids, keys


def _verdicts(run: Path, key: str) -> dict[tuple[str, int, int], str]:
    """Criterion verdicts read straight from the grade files."""
    out = {}
    for p in (run / "grades" / key).rglob("*.json"):
        rec = json.loads(p.read_text())
        for rg in rec["rubrics"]:
            for cv in rg["criteria"]:
                out[(rec["trial_id"], cv["rubric_index"], cv["criterion_index"])] = cv
    return out


def test_pairs_and_alpha_from_the_grade_files(graded):
    data, run, truth, trial_ids, (checks, right, wrong) = graded
    v = {k: _verdicts(run, k) for k in (checks, right, wrong)}
    crits = sorted(v[right])
    n_rubrics = sum(len(truth.tasks[o].rubrics) for o in TASKS)
    assert len(trial_ids) == 4 and len(crits) == 2 * sum(
        t.criterion_count for t in truth.tasks.values()
    )
    pairs = {(p["a"], p["b"]): p for p in data["pairs"]}
    assert set(pairs) == {(checks, right), (wrong, right), (checks, wrong)}

    # wrong vs right: exactly the three scripted errors
    p = pairs[(wrong, right)]
    assert p["criteria_both"] == len(crits) and p["flips"] == 3
    flips = {
        (f["trial_id"], f["rubric"], f["criterion"])
        for f in data["flips"]
        if set(f["verdicts"]) >= {wrong, right}
        and f["verdicts"][wrong]["verdict"] != f["verdicts"][right]["verdict"]
    }
    assert flips == {(f"sample/{o}/task1/decoy@{d}/epoch-1", r, c) for (o, d, r, c) in ERRORS}

    # checks (its own judge key) vs right: the same comparison as right's second opinions,
    # since --decide llm stores each check's verdict beside the LLM's
    (cv_right,) = [c for c in data["checks_vs_llm"] if c["judge"] == right]
    assert pairs[(checks, right)]["table"] == cv_right["table"]
    assert pairs[(checks, right)]["kappa"] == pytest.approx(cv_right["kappa"])

    # Krippendorff's alpha over the three judges, recomputed from the files
    label = {"pass": "pass", "fail": "fail"}
    units = [[label.get(v[k][c]["verdict"]) for k in (checks, right, wrong)] for c in crits]
    assert data["overall"]["alpha"] == pytest.approx(krippendorff_alpha(units))
    assert data["overall"]["units"] == len(crits)

    j = {x["key"]: x for x in data["judges"]}
    assert j[right]["calls_per_pass"] == 2 * n_rubrics  # one call per rubric, two decoys per task
    assert j[wrong]["calls_per_pass"] == 4  # one call per trial
    assert j[checks]["calls_per_pass"] == 0 and j[checks]["cost_per_pass_usd"] == 0.0
    assert j[right]["cost_per_pass_usd"] is None  # no price for the scripted models
    assert any("no price known" in w for w in data["warnings"])


def test_regrade_reuses_grades_and_calibrate_says_so(graded, tmp_path: Path):
    # grade_run keeps up-to-date grades: their usage is that of the original pass, so the
    # cost per pass does not change and nothing is marked cached
    data, run, truth, _, (checks, right, wrong) = graded
    before = {x["key"]: x["tokens_per_pass"] for x in data["judges"]}
    with FakeOpenAIServer(truth.reply) as srv:
        grade_run(
            run,
            JudgeConfig(
                model="judge-right",
                mode="rubric",
                api_base=srv.base_url,
                api_key="t",
                decide="llm",
                cache=False,
            ),
            progress=False,
        )
        assert srv.calls == 0
    res = CliRunner().invoke(
        app, ["calibrate", str(run), "-k", right, "-k", wrong, "--json", "--out", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    again = json.loads(res.stdout)
    assert {x["key"]: x["tokens_per_pass"] for x in again["judges"]} == {
        right: before[right],
        wrong: before[wrong],
    }
    assert all(x["cached_units"] == 0 for x in again["judges"])
