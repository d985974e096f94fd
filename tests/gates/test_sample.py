"""The gates on the bundled sample split (``datasets/sample``): it must pass, and broken
copies of a sample task must be caught by the right gate. Skipped while the sample split is
not in the tree; the oracle/null test also needs the runner and judge stages."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from jobbench.gates import GateOptions, run_gates
from jobbench.gates._text import file_mentions
from jobbench.tasks import NumberCheck, load_dataset, load_task

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"


def _static_gates() -> list[str]:
    return ["validate", "audit", "lint", "decoy"]


def test_sample_passes_static_gates() -> None:
    rep = run_gates(SAMPLE, GateOptions(gates=_static_gates()))
    failing = {
        t.task_id: {
            g: [str(f) for f in r.findings if f.severity == "error"]
            for g, r in t.gates.items()
            if r.status in ("fail", "error")
        }
        for t in rep.tasks
        if t.status in ("fail", "error")
    }
    assert failing == {}
    assert rep.exit_code == 0


def _copy_first_task(tmp_path: Path):
    ds = load_dataset(SAMPLE)
    task = next(t for t in ds.tasks if t.split == "main")
    dest = tmp_path / "ds" / "sample" / task.occupation / f"task{task.number}"
    shutil.copytree(task.root, dest)
    return load_task(dest, "sample", task.occupation)


def _gate_rules(root: Path, gates: list[str]) -> dict[str, set[str]]:
    rep = run_gates(root, GateOptions(gates=gates))
    (t,) = rep.tasks
    return {g: {f.rule for f in r.findings if f.severity == "error"} for g, r in t.gates.items()}


def test_broken_copy_missing_reference_file(tmp_path: Path) -> None:
    task = _copy_first_task(tmp_path)
    named = [
        m.name
        for m in file_mentions(task.instructions, known=task.workspace_files)
        if m.name in task.workspace_files
        or any(w.endswith("/" + m.name) for w in task.workspace_files)
    ]
    named = [n for n in named if n != "TASK_INSTRUCTIONS.txt"]
    if not named:
        pytest.fail("the first sample task names no workspace file in its instructions")
    victim = next(w for w in task.workspace_files if w == named[0] or w.endswith("/" + named[0]))
    (task.workspace_dir / victim).unlink()
    assert "A1" in _gate_rules(tmp_path / "ds", ["audit"])["audit"]


def test_broken_copy_leaked_answer(tmp_path: Path) -> None:
    task = _copy_first_task(tmp_path)
    criteria = "\n".join(c.text for r in task.rubrics for c in r.criteria)
    (task.workspace_dir / "notes_from_reviewer.txt").write_text(criteria)
    assert "A5" in _gate_rules(tmp_path / "ds", ["audit"])["audit"]


def test_broken_copy_vague_criterion(tmp_path: Path) -> None:
    task = _copy_first_task(tmp_path)
    path = task.root / "RUBRICS.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    key = task.rubrics_key
    doc[key][0]["criterion"][0] = "The deliverable is appropriate and professional."
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    assert "OB1" in _gate_rules(tmp_path / "ds", ["lint"])["lint"]


def test_broken_copy_wrong_gold_number(tmp_path: Path) -> None:
    """Shift the gold value of a numeric check that some decoy is expected to pass: the decoy
    gate must report the mismatch."""
    ds = load_dataset(SAMPLE)
    for task in ds.tasks:
        decoys = (
            sorted((task.root / "solution" / "decoys").glob("*/expected.json"))
            if task.solution_dir
            else []
        )
        for exp in decoys:
            expected = {e["index"]: e["criteria"] for e in json.loads(exp.read_text())["rubrics"]}
            for r in task.rubrics:
                for c in r.criteria:
                    if isinstance(c.check, NumberCheck) and expected[r.index][c.index]:
                        dest = tmp_path / "ds" / "sample" / task.occupation / f"task{task.number}"
                        shutil.copytree(task.root, dest)
                        path = dest / "RUBRICS.json"
                        doc = json.loads(path.read_text(encoding="utf-8"))
                        chk = doc[task.rubrics_key][r.index]["checks"][c.index]
                        chk["value"] = chk["value"] * 1.5 + 7
                        path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
                        assert "D1" in _gate_rules(tmp_path / "ds", ["decoy"])["decoy"]
                        return
    pytest.fail("no sample decoy is expected to pass a numeric check")


def test_sample_oracle_and_null(tmp_path: Path) -> None:
    rep = run_gates(SAMPLE, GateOptions(gates=[], run_oracle_into=tmp_path / "run"))
    bad = {
        t.task_id: {g: r.status for g, r in t.gates.items()}
        for t in rep.tasks
        if any(r.status != "pass" for r in t.gates.values())
    }
    assert bad == {}


def test_broken_copy_wrong_gold_number_caught_by_oracle(tmp_path: Path) -> None:
    task = _copy_first_task(tmp_path)
    path = task.root / "RUBRICS.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    for ri, r in enumerate(doc[task.rubrics_key]):
        for ci, chk in enumerate(r.get("checks") or []):
            if chk and chk.get("kind") == "number":
                chk["value"] = chk["value"] * 1.5 + 7
                path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
                rep = run_gates(
                    tmp_path / "ds", GateOptions(gates=[], run_oracle_into=tmp_path / "run")
                )
                oracle = rep.tasks[0].gates["oracle"]
                assert oracle.status == "fail"
                assert f"rubrics[{ri}].criterion[{ci}]" in [
                    f.where for f in oracle.findings if f.rule == "O1"
                ]
                return
    pytest.fail("the first sample task has no number check")


def test_broken_copy_leaked_oracle_answer(tmp_path: Path) -> None:
    task = _copy_first_task(tmp_path)
    run = tmp_path / "run"
    rep = run_gates(tmp_path / "ds", GateOptions(gates=["audit"], run_oracle_into=run))
    assert rep.tasks[0].gates["audit"].status in ("pass", "warn")
    deliv = sorted(run.glob(f"trials/{task.id}/oracle@*/epoch-*/deliverables"))[0]
    texts = sorted(
        (p for p in deliv.rglob("*") if p.suffix in (".md", ".csv", ".txt")),
        key=lambda p: -p.stat().st_size,
    )
    if not texts:
        pytest.fail("the oracle wrote no text deliverable")
    (task.workspace_dir / "notes.txt").write_text(
        texts[0].read_text(encoding="utf-8"), encoding="utf-8"
    )
    rep = run_gates(tmp_path / "ds", GateOptions(gates=["audit"], oracle_run=run))
    assert "A6" in [f.rule for f in rep.tasks[0].gates["audit"].findings]


def test_sample_text_has_no_past_tense_after_did_not() -> None:
    # "the books did not booked" slipped into a shipped rubric question; "did not" / "didn't"
    # takes the bare verb, so "-ed" right after it is a slip ("need", "exceed" are bare verbs)
    import re

    slip = re.compile(r"\bdid(?: not|n[’']t) \w+[^\We]ed\b", re.IGNORECASE)
    found = [
        (t.id, r.index, s)
        for t in load_dataset(SAMPLE).tasks
        for r in t.rubrics
        for s in [r.question, *(c.text for c in r.criteria)]
        if slip.search(s)
    ]
    assert found == []
