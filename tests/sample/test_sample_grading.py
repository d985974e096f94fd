"""Grading the sample split with the programmatic checks (``jobbench.judge.evaluate_check``).

For every task: the reference solution, run on a copy of the workspace only, passes every
criterion (score 100 %); an empty deliverable folder fails every rubric (score 0 %); and
each decoy's verdicts equal its ``expected.json`` with a score below 60 %.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jobbench.tasks import Task, load_dataset

judge = pytest.importorskip("jobbench.judge")
evaluate_check = getattr(judge, "evaluate_check", None)
if evaluate_check is None:
    pytest.skip(
        "jobbench.judge has no evaluate_check yet (judge stage not merged)", allow_module_level=True
    )

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "datasets" / "sample"
TASKS = load_dataset(SAMPLE).tasks
TEXT_KINDS = {"number", "regex"}


def chain_score(task: Task, verdicts: list[list[bool]]) -> tuple[float, list[bool]]:
    """Task score under the chained rule: z_r = all criteria of r pass and every rubric in
    ``requires`` passes; score = Σ w_r z_r / Σ w_r."""
    z: dict[int, bool] = {}

    def passes(i: int) -> bool:
        if i not in z:
            r = task.rubrics[i]
            z[i] = all(verdicts[i]) and all(passes(j) for j in r.requires)
        return z[i]

    zs = [passes(i) for i in range(len(task.rubrics))]
    return sum(r.weight for r, ok in zip(task.rubrics, zs) if ok) / task.total_weight, zs


def verdicts_for(task: Task, folder: Path) -> tuple[list[list[bool]], list[str]]:
    """Per-criterion verdicts and a description of every failure."""
    out, failures = [], []
    for r in task.rubrics:
        row = []
        for c in r.criteria:
            res = evaluate_check(c.check, folder)
            assert not res.error, (
                f"{task.id} rubric {r.id} criterion {c.index}: check error: {res.detail}"
            )
            row.append(res.passed)
            if not res.passed:
                failures.append(f"{r.id}[{c.index}]: {res.detail}")
        out.append(row)
    return out, failures


def unreadable_formats(task: Task, folder: Path) -> set[str]:
    """Suffixes of deliverables that text checks read but the installed extractor cannot."""
    from jobbench.extract import extract

    bad = set()
    for p in sorted(folder.rglob("*")):
        if p.is_file() and extract(p, rel=p.name).kind == "unsupported":
            bad.add(p.suffix.lower())
    needed = set()
    for r in task.rubrics:
        for c in r.criteria:
            if c.check.kind in TEXT_KINDS:
                pattern = (c.check.file or "*").lower()
                needed |= {s for s in bad if pattern == "*" or pattern.endswith(s)}
    return needed


def skip_if_unreadable(task: Task, folder: Path) -> None:
    missing = unreadable_formats(task, folder)
    if missing:
        pytest.skip(
            f"the installed jobbench.extract cannot read {sorted(missing)} (placeholder extractor; "
            "needs the extraction stage)"
        )


@pytest.fixture(scope="module")
def solution_outputs(tmp_path_factory) -> dict[str, Path]:
    """Run every solve.py with only a copy of its workspace and an output folder."""
    outputs = {}
    for task in TASKS:
        base = tmp_path_factory.mktemp(task.occupation[:40])
        ws, sol, out = base / "workspace", base / "solution", base / "output"
        shutil.copytree(task.workspace_dir, ws)
        sol.mkdir()
        shutil.copy2(task.solution_dir / "solve.py", sol / "solve.py")
        proc = subprocess.run(
            [sys.executable, str(sol / "solve.py"), "--workspace", str(ws), "--output", str(out)],
            cwd=base,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, f"{task.id}: solve.py failed\n{proc.stderr[-3000:]}"
        outputs[task.id] = out
    return outputs


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_solution_passes_every_criterion(task: Task, solution_outputs: dict[str, Path]) -> None:
    out = solution_outputs[task.id]
    skip_if_unreadable(task, out)
    verdicts, failures = verdicts_for(task, out)
    assert failures == []
    assert chain_score(task, verdicts)[0] == 1.0


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_empty_output_fails_every_rubric(task: Task, tmp_path: Path) -> None:
    verdicts, _ = verdicts_for(task, tmp_path)
    assert [all(v) for v in verdicts] == [False] * len(task.rubrics)
    assert chain_score(task, verdicts)[0] == 0.0


DECOYS = [
    (t, d) for t in TASKS for d in sorted((t.solution_dir / "decoys").iterdir()) if d.is_dir()
]


@pytest.mark.parametrize("task,decoy", DECOYS, ids=[f"{t.id}:{d.name}" for t, d in DECOYS])
def test_decoy_verdicts_match_expected(task: Task, decoy: Path) -> None:
    folder = decoy / "deliverables"
    skip_if_unreadable(task, folder)
    expected = json.loads((decoy / "expected.json").read_text(encoding="utf-8"))
    verdicts, _ = verdicts_for(task, folder)
    assert verdicts == [r["criteria"] for r in expected["rubrics"]]
    score, _ = chain_score(task, verdicts)
    assert score < 0.6
    if "score" in expected:
        assert score == pytest.approx(expected["score"], abs=1e-4)
