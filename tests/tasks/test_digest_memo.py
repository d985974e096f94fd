"""task_digest remembers its result per file stamp: unchanged task files are hashed once per
process, a changed file (even at the same size) changes the digest, and files modified in the
last 2 seconds are always hashed again."""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path

import pytest

from jobbench.tasks import _load, load_task, task_digest

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
SAMPLE_TASK = SAMPLE / "main" / "statisticians" / "task1"


@pytest.fixture
def old_task(tmp_path, monkeypatch):
    """A copy of a sample task whose files are all dated one hour ago, and a counter of
    sha256_file calls."""
    root = tmp_path / "main" / "statisticians" / "task1"
    shutil.copytree(SAMPLE_TASK, root, ignore=shutil.ignore_patterns("__pycache__"))
    hour_ago = time.time() - 3600
    for p in root.rglob("*"):
        if p.is_file():
            os.utime(p, (hour_ago, hour_ago))
    calls: list[Path] = []
    real = _load.sha256_file

    def counting(path, *a, **kw):
        calls.append(Path(path))
        return real(path, *a, **kw)

    monkeypatch.setattr(_load, "sha256_file", counting)
    monkeypatch.setattr(_load, "_DIGEST_MEMO", {})
    return root, calls


def _expected_digest(task) -> str:
    """The digest computed independently from the definition (names + file sha256s)."""
    h = hashlib.sha256()
    for name, p in _load._digest_parts(task):
        h.update(
            name.encode() + b"\0" + hashlib.sha256(p.read_bytes()).hexdigest().encode() + b"\n"
        )
    return h.hexdigest()


def test_unchanged_files_are_hashed_once(old_task):
    root, calls = old_task
    task = load_task(root)
    n_files = len(_load._digest_parts(task))
    first = task_digest(task)
    assert len(calls) == n_files and n_files > 5
    assert task_digest(load_task(root)) == first == _expected_digest(task)
    assert len(calls) == n_files  # second call: no file read


def test_same_size_edit_changes_the_digest(old_task):
    root, calls = old_task
    task = load_task(root)
    first = task_digest(task)
    card = root / "task_card.md"
    text = card.read_bytes()
    card.write_bytes(text[:-1] + (b"X" if text[-1:] != b"X" else b"Y"))  # same size
    later = time.time() - 1800
    os.utime(card, (later, later))  # an old but different time
    second = task_digest(load_task(root))
    assert second != first and second == _expected_digest(task)


def test_recently_modified_files_are_always_hashed(old_task):
    root, calls = old_task
    task = load_task(root)
    (root / "task_card.md").write_text("changed just now\n", encoding="utf-8")
    n_files = len(_load._digest_parts(task))
    task_digest(task)
    task_digest(task)
    assert len(calls) == 2 * n_files  # nothing remembered while a file is fresh
