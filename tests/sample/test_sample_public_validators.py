"""The bundled sample passes the public tools' dataset validators (rebuilt in
``public_validators.py`` from their documented behaviour), and those validators refuse what
the public tools refuse (so that passing them means something)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from public_validators import harbor_refusals, sync_refusals  # noqa: E402

from jobbench.tasks import load_dataset  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"


def test_sample_passes_the_dataset_sync() -> None:
    assert sync_refusals(SAMPLE) == []


def test_sample_splits_pass_harbor_preparation() -> None:
    # the public layout's main/ and easy/ are Harbor's dataset/ and dataset_easy/
    assert harbor_refusals([SAMPLE / "main", SAMPLE / "easy"]) == []
    assert sorted(p.name for p in SAMPLE.iterdir()) == ["easy", "main"]


def test_sample_tasks_are_the_ones_the_validators_see() -> None:
    ds = load_dataset(SAMPLE)
    assert ds.ok and not ds.warnings
    main = sorted(t.occupation for t in ds.tasks if t.split == "main")
    easy = sorted(t.occupation for t in ds.tasks if t.split == "easy")
    assert len(main) == 8 and easy == main  # one easy variant per main task


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    dest = tmp_path / "sample"
    shutil.copytree(SAMPLE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def test_the_old_layout_is_refused(copy: Path) -> None:
    """The sample as it was: no split level, the build scripts among the occupations."""
    old = copy.parent / "old"
    shutil.copytree(copy / "main", old)
    (old / "build").mkdir()
    (old / "build" / "build.py").write_text("print('build')\n")
    # build/ looks like an occupation to Harbor; its files are not task directories
    assert harbor_refusals([old]) == [f"{old / 'build' / 'build.py'}: invalid task directory"]
    assert sync_refusals(old.parent) == ["no tasks in the main split", "no tasks in the easy split"]


def test_the_validators_refuse_what_the_public_tools_refuse(copy: Path) -> None:
    task = next(p for p in sorted((copy / "easy").glob("*/task1")))
    (task / "task_card.md").write_text("  \n")
    rub = task / "RUBRICS.json"
    doc = json.loads(rub.read_text())
    doc["evaluation_rubrics"] = doc.pop("rubrics")  # the sync reads only "rubrics"
    rub.write_text(json.dumps(doc))
    (copy / "main" / ".DS_Store").write_bytes(b"\0")
    tid = f"easy/{task.parent.name}/task1"
    assert sync_refusals(copy) == [
        f"{tid}: task_card.md is empty",
        f"{rub}: no non-empty 'rubrics' list",
    ]
    assert harbor_refusals([copy / "main", copy / "easy"]) == [
        f"{copy / 'main' / '.DS_Store'}: unexpected entry among the occupations",
        f"{rub}: no non-empty 'rubrics' list",
    ]
    shutil.rmtree(copy / "easy")
    assert "no tasks in the easy split" in sync_refusals(copy)
