"""Symlinks are never followed and always reported; special files are rejected.

Symlinks are created at runtime in a temporary copy (git symlinks are awkward)."""

import os
import shutil
from pathlib import Path

import pytest

from jobbench.tasks import load_dataset

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "datasets"


@pytest.fixture
def public_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(FIXTURES / "public", tmp_path / "public")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "public"


T1 = "public/dataset/main/lawyers/task1"
T2 = "public/dataset/main/lawyers/task2"


def _msg(path: str, target: str) -> str:
    return f"{path}: symlink not allowed (points to {target}); not followed"


def test_symlinks_inside_a_task(public_copy: Path) -> None:
    t1 = public_copy / "dataset/main/lawyers/task1"
    os.symlink("/etc/hostname", t1 / "task_folder/link.csv")
    os.symlink("../../task2/task_folder", t1 / "task_folder/exhibits/other")
    os.symlink("/etc", t1 / "files_required_to_search/etc")
    os.symlink("../../../../../../outside.py", t1 / "solution/helper.py")
    ds = load_dataset("public")
    assert [str(p) for p in ds.problems] == [
        _msg(f"{T1}/task_folder/link.csv", "/etc/hostname"),  # walk order: top level first
        _msg(f"{T1}/task_folder/exhibits/other", "../../task2/task_folder"),
        _msg(f"{T1}/files_required_to_search/etc", "/etc"),
        _msg(f"{T1}/solution/helper.py", "../../../../../../outside.py"),
    ]
    assert "main/lawyers/task1" not in [t.id for t in ds.tasks]
    assert len(ds.tasks) == 4


def test_symlinked_task_files_reported_once(public_copy: Path) -> None:
    t2 = public_copy / "dataset/main/lawyers/task2"
    for name in ("RUBRICS.json", "task_card.md"):
        (t2 / name).unlink()
        os.symlink(f"../task1/{name}", t2 / name)
    (t2 / "task_folder/TASK_INSTRUCTIONS.txt").unlink()
    os.symlink("/etc/hostname", t2 / "task_folder/TASK_INSTRUCTIONS.txt")
    ds = load_dataset("public")
    assert [str(p) for p in ds.problems] == [
        _msg(f"{T2}/task_folder/TASK_INSTRUCTIONS.txt", "/etc/hostname"),
        _msg(f"{T2}/task_card.md", "../task1/task_card.md"),
        _msg(f"{T2}/RUBRICS.json", "../task1/RUBRICS.json"),
    ]


def test_symlinked_workspace_and_search_dirs(public_copy: Path) -> None:
    t2 = public_copy / "dataset/main/lawyers/task2"
    shutil.rmtree(t2 / "task_folder")
    os.symlink("../task1/task_folder", t2 / "task_folder")
    os.symlink("../task1/files_required_to_search", t2 / "files_required_to_search")
    ds = load_dataset("public")
    assert [str(p) for p in ds.problems] == [
        _msg(f"{T2}/task_folder", "../task1/task_folder"),
        _msg(f"{T2}/files_required_to_search", "../task1/files_required_to_search"),
    ]


def test_symlinked_task_occupation_and_split_dirs(public_copy: Path) -> None:
    main = public_copy / "dataset/main"
    os.symlink("task1", main / "lawyers/task9")
    os.symlink("lawyers", main / "notaries")
    os.symlink("main", public_copy / "dataset/extra")
    os.symlink("/etc/hostname", main / "lawyers/README.md")  # a file link is not a task: ignored
    ds = load_dataset("public")
    assert [str(p) for p in ds.problems] == [
        _msg("public/dataset/main/lawyers/task9", "task1"),
        _msg("public/dataset/main/notaries", "lawyers"),
        _msg("public/dataset/extra", "main"),
    ]
    assert len(ds.tasks) == 5  # nothing reached through a link


def test_symlinks_in_extra_entries_and_hidden_dirs_are_ignored(public_copy: Path) -> None:
    t1 = public_copy / "dataset/main/lawyers/task1"
    os.symlink("/etc/hostname", t1 / "model_output/leak.txt")
    os.symlink("/etc", t1 / "eval_result/etc")
    hidden = public_copy / ".cache/huggingface/download/dataset/lawyers/task1"
    hidden.mkdir(parents=True)
    (hidden / "RUBRICS.json.metadata").write_text("x")
    ds = load_dataset("public")
    assert ds.problems == [] and len(ds.tasks) == 5


def test_symlinked_dataset_root_is_allowed(public_copy: Path, tmp_path: Path) -> None:
    os.symlink(public_copy, tmp_path / "link-to-public")
    ds = load_dataset(tmp_path / "link-to-public")
    assert ds.problems == [] and len(ds.tasks) == 5


def test_fifo_in_workspace_is_not_a_regular_file(public_copy: Path) -> None:
    os.mkfifo(public_copy / "dataset/main/lawyers/task2/task_folder/pipe")
    ds = load_dataset("public")
    assert [str(p) for p in ds.problems] == [f"{T2}/task_folder/pipe: not a regular file"]
