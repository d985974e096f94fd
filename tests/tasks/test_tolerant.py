"""A dataset the public tools accept loads, validates, runs and grades, with every skipped or
ignored thing named; ``--strict`` keeps the refusals.

The fixture ``thirdparty/`` (tests/fixtures/datasets/README.md) is what the public tools
accept: a ``taskN`` directory holding only local outputs (``main/lawyers/task3``: the
public sync treats a ``taskN`` directory without any task source as local data) and
third-party keys named like our extensions but shaped otherwise (``id: 7``,
``vision: "yes"``, a string ``files`` and ``checks``, a duplicated string id that another
rubric ``requires``), which the public tools never read.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.tasks import find_invalid, load_dataset, load_task

T = "thirdparty/dataset/main/lawyers"
NOTE = "as the public tools ignore it (--strict refuses the file)"
WARNINGS = [
    f"{T}/task3: warning: holds none of task_card.md, RUBRICS.json, task_folder, "
    "files_required_to_search: not a task (local data such as model_output/ or eval_result/); "
    "skipped (--strict refuses it)",
    f"{T}/task1/RUBRICS.json: rubrics[0].id: warning: must be a non-empty string, got 7; "
    f"`id` ignored for rubrics[0], {NOTE}",
    f"{T}/task1/RUBRICS.json: rubrics[0].files: warning: must be a non-empty list of non-empty "
    f'glob strings, got "memo.md"; `files` ignored for rubrics[0], {NOTE}',
    f'{T}/task1/RUBRICS.json: rubrics[0].vision: warning: must be true or false, got "yes"; '
    f"`vision` ignored for rubrics[0], {NOTE}",
    f"{T}/task1/RUBRICS.json: rubrics[1].checks: warning: must be a list aligned with criterion, "
    f'got "manual review by a paralegal"; `checks` ignored for rubrics[1], {NOTE}',
    f'{T}/task2/RUBRICS.json: rubrics[1].id: warning: duplicate id "deadline" (also rubrics[0]); '
    f"`id` ignored for rubrics[0], rubrics[1], {NOTE}",
    f'{T}/task2/RUBRICS.json: rubrics[2].requires[0]: warning: unknown rubric "deadline" (give an '
    f"existing id or a 0-based index below 3); `requires` ignored for rubrics[2], {NOTE}",
]
STRICT_ERRORS = [
    f"{T}/task1/RUBRICS.json: rubrics[0].id: must be a non-empty string, got 7",
    f"{T}/task1/RUBRICS.json: rubrics[0].files: must be a non-empty list of non-empty glob "
    'strings, got "memo.md"',
    f'{T}/task1/RUBRICS.json: rubrics[0].vision: must be true or false, got "yes"',
    f"{T}/task1/RUBRICS.json: rubrics[1].checks: must be a list aligned with criterion, got "
    '"manual review by a paralegal"',
    f'{T}/task2/RUBRICS.json: rubrics[1].id: duplicate id "deadline" (also rubrics[0])',
    f"{T}/task3/task_folder: missing (the agent's workspace directory)",
    f"{T}/task3/task_card.md: missing",
    f"{T}/task3/RUBRICS.json: missing",
]
runner = CliRunner()


def test_loads_with_warnings_and_public_semantics(fixtures: Path) -> None:
    ds = load_dataset("thirdparty")
    assert [t.id for t in ds.tasks] == [
        "easy/lawyers/task1",
        "main/lawyers/task1",
        "main/lawyers/task2",
    ]
    assert ds.errors == [] and ds.ok
    assert [str(p) for p in ds.problems] == WARNINGS
    assert not find_invalid(ds)  # the stray directory is not an invalid task
    t1, t2 = ds.get("main/lawyers/task1"), ds.get("main/lawyers/task2")
    # the rubrics behave as the public tools read them: position identity, no extension
    assert [(r.id, r.files, r.vision) for r in t1.rubrics] == [("0", None, None), ("1", None, None)]
    assert all(c.check is None for r in t1.rubrics for c in r.criteria)
    assert [(r.id, r.requires) for r in t2.rubrics] == [("0", []), ("1", []), ("2", [])]
    assert [r.weight for r in t2.rubrics] == [6.0, 4.0, 2.0]


def test_strict_refuses_them(fixtures: Path) -> None:
    ds = load_dataset("thirdparty", strict=True)
    assert [t.id for t in ds.tasks] == ["easy/lawyers/task1"]
    assert [str(p) for p in ds.problems] == STRICT_ERRORS
    assert sorted(find_invalid(ds).tasks) == [
        "main/lawyers/task1",
        "main/lawyers/task2",
        "main/lawyers/task3",
    ]
    with pytest.raises(ValueError, match=r"rubrics\[0\]\.vision: must be true or false"):
        load_task(Path(T) / "task1", strict=True)
    assert load_task(Path(T) / "task1").rubrics[0].vision is None


def test_a_stray_task_directory_given_directly(fixtures: Path) -> None:
    ds = load_dataset(f"{T}/task3")
    assert (ds.tasks, [str(p) for p in ds.problems]) == ([], WARNINGS[:1])
    assert [str(p) for p in load_dataset(f"{T}/task3", strict=True).problems] == STRICT_ERRORS[5:]


def test_validate_cli(fixtures: Path) -> None:
    r = runner.invoke(app, ["validate", "thirdparty"], terminal_width=400)
    assert r.exit_code == 0, r.output
    done = "3 valid task(s) in thirdparty; valid; 7 warning(s)"
    assert r.stdout.strip().splitlines() == WARNINGS + [done]
    r = runner.invoke(app, ["validate", "thirdparty", "--strict"], terminal_width=400)
    assert r.exit_code == 1
    refused = "1 valid task(s) in thirdparty; 8 error(s)"
    assert r.stdout.strip().splitlines() == STRICT_ERRORS + [refused]


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "datasets"


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    dest = tmp_path / "thirdparty"
    shutil.copytree(FIXTURES / "thirdparty", dest)
    return dest


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        "COLUMNS": "400",
        "JUDGE_MODEL": "",
        "JOBBENCH_JUDGE_MODEL": "",
        "JOBBENCH_JUDGE_CONFIG": "",
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }


def test_run_names_what_it_ignores_and_strict_refuses(copy: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    r = runner.invoke(
        app,
        [
            "run",
            str(copy),
            "--agent",
            "null",
            "--runs-dir",
            str(runs),
            "--run-name",
            "tp",
            "--no-progress",
            "--no-grade",
        ],
        env=_env(tmp_path),
    )
    assert r.exit_code == 0, r.output
    head = "7 thing(s) in the dataset are skipped or ignored, as the public tools do"
    assert f"{head} (--strict refuses them):" in r.output
    for w in WARNINGS:  # display paths are absolute here (the copy is outside the cwd)
        assert f"{copy}/{w.removeprefix('thirdparty/')}" in r.output
    assert "3 trial(s) run, 0 already finished" in r.output
    r = runner.invoke(
        app,
        [
            "run",
            str(copy),
            "--agent",
            "null",
            "--runs-dir",
            str(runs),
            "--run-name",
            "tp-strict",
            "--no-progress",
            "--no-grade",
            "--strict",
        ],
        env=_env(tmp_path),
    )
    assert r.exit_code == 2, r.output
    assert "8 validation error(s) in 3 task(s)" in r.output and "--skip-invalid" in r.output
    assert 'rubrics[0].vision: must be true or false, got "yes"' in r.output
    assert not (runs / "tp-strict" / "lock.json").exists()
    # a strict run of what is valid strictly records it, grades and resumes under it
    strict_easy = [
        "run",
        str(copy),
        "--agent",
        "null",
        "--runs-dir",
        str(runs),
        "--run-name",
        "tp-strict-easy",
        "--no-progress",
        "--strict",
        "--split",
        "easy",
    ]
    r = runner.invoke(app, strict_easy, env=_env(tmp_path))
    assert r.exit_code == 0, r.output
    assert "skipped or ignored" not in r.output  # the easy task has nothing to ignore
    lock = json.loads((runs / "tp-strict-easy" / "lock.json").read_text())
    assert lock["config"]["strict"] is True and list(lock["tasks"]) == ["easy/lawyers/task1"]
    r = runner.invoke(app, strict_easy, env=_env(tmp_path))
    assert r.exit_code == 0, r.output
    assert "0 trial(s) run, 1 already finished" in r.output


def test_grade_of_public_layout_outputs_names_what_it_ignores_and_strict_refuses(
    copy: Path, tmp_path: Path
) -> None:
    out = copy / "dataset" / "main" / "lawyers" / "task1" / "model_output" / "gpt-5"
    out.mkdir(parents=True)
    (out / "memo.md").write_text("The deadline is 14 March 2025 (Rule 12(a)).\n")
    r = runner.invoke(app, ["grade", str(copy), "--strict", "--no-progress"], env=_env(tmp_path))
    assert r.exit_code == 2, r.output
    assert (
        "validation error(s)" in r.output
        and "rubrics[1].checks: must be a list aligned" in r.output
    )
    r = runner.invoke(app, ["grade", str(copy), "--no-progress"], env=_env(tmp_path))
    assert r.exit_code == 0, r.output
    assert "7 thing(s) in the dataset are skipped or ignored" in r.output
    assert "rubrics[0].id: warning: must be a non-empty string, got 7" in r.output
    assert (out.parents[1] / "eval_result" / "eval_gpt-5").is_dir()
