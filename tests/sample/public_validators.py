"""The public tools' dataset validators, rebuilt from their documented behaviour (DESIGN §8
and the descriptions in ``Job-Bench/job-bench-eval``), not from their code: what the dataset
sync (``scripts/sync_dataset.py``) and Harbor's task preparation
(``harbor/jobbench_harbor/prepare.py``) refuse. Each function returns every reason it would
refuse a dataset (an empty list: accepted).

Dataset sync (input: a dataset in the public layout, ``<root>/<split>/<occupation>/taskN``):

* the managed sources are ``task_card.md``, ``RUBRICS.json``, ``task_folder/**`` and
  ``files_required_to_search/**`` of ``<split>/<occupation slug>/task<N>`` paths; a task is a
  ``<split>/<occupation>/taskN`` that has at least one of them;
* both splits ``main`` and ``easy`` must hold tasks;
* every task has ``task_card.md``, ``RUBRICS.json`` and ``task_folder/TASK_INSTRUCTIONS.txt``;
  the card and the instructions are not blank;
* ``RUBRICS.json`` holds a non-empty ``rubrics`` list (the sync reads no other key) of
  objects with a non-blank ``rubric`` string, a non-empty ``criterion`` list of non-blank
  strings and a finite, non-boolean number ``weight`` >= 0; the weights add up to more than 0;
* no symlink and no special file among the sources.

Harbor's preparation (input: each split directory, in its raw Hugging Face name
``dataset`` / ``dataset_easy``):

* every entry of a split directory (hidden ones included) is a real directory named like an
  occupation slug ``[a-z0-9][a-z0-9_-]*``, and every entry of an occupation directory is a
  real directory named ``task[1-9][0-9]*``: a build folder or a stray file among them is
  refused;
* every task has regular files ``RUBRICS.json`` and ``task_card.md`` and a ``task_folder``
  of regular files (no symlinks) holding ``TASK_INSTRUCTIONS.txt``; ``RUBRICS.json`` is an
  object with a ``rubrics`` list whose entries follow the sync's rules, with a positive total;
* at least one task in all.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

SLUG = re.compile(r"[a-z0-9][a-z0-9_-]*")
TASK = re.compile(r"task[1-9][0-9]*")
SOURCE_FILES = ("task_card.md", "RUBRICS.json")
SOURCE_DIRS = ("task_folder", "files_required_to_search")
REQUIRED = ("task_card.md", "RUBRICS.json", "task_folder/TASK_INSTRUCTIONS.txt")


def _rubric_reasons(path: Path) -> list[str]:
    """Why a RUBRICS.json fails the shared rubric rules (empty: it passes)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return [f"{path}: unreadable ({exc})"]
    items = doc.get("rubrics") if isinstance(doc, dict) else None
    if not isinstance(items, list) or not items:
        return [f"{path}: no non-empty 'rubrics' list"]
    total = 0.0
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            out.append(f"{path}: rubrics[{i}] is not an object")
            continue
        text, crit, weight = item.get("rubric"), item.get("criterion"), item.get("weight")
        if not isinstance(text, str) or not text.strip():
            out.append(f"{path}: rubrics[{i}] has no rubric text")
        if (
            not isinstance(crit, list)
            or not crit
            or any(not isinstance(c, str) or not c.strip() for c in crit)
        ):
            out.append(f"{path}: rubrics[{i}] has invalid criteria")
        if (
            isinstance(weight, bool)
            or not isinstance(weight, (int, float))
            or not math.isfinite(weight)
            or weight < 0
        ):
            out.append(f"{path}: rubrics[{i}] has an invalid weight")
        else:
            total += weight
    if not out and total <= 0:
        out.append(f"{path}: the weights do not add up to more than 0")
    return out


def _walk_sources(base: Path) -> tuple[list[Path], list[str]]:
    """Regular files under ``base`` and the reasons (symlinks, special files) to refuse."""
    files, bad = [], []
    for dirpath, dirnames, filenames in os.walk(base):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            if p.is_symlink():
                bad.append(f"{p}: symlink")
            elif not (p.is_dir() or p.is_file()):
                bad.append(f"{p}: not a regular file")
            elif p.is_file():
                files.append(p)
        dirnames[:] = [d for d in dirnames if not (Path(dirpath) / d).is_symlink()]
    return files, bad


def sync_refusals(root: Path) -> list[str]:
    """Every reason the public dataset sync would refuse the public-layout dataset ``root``."""
    out: list[str] = []
    tasks: dict[str, Path] = {}
    for split in sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink()):
        for occ in sorted(p for p in split.iterdir() if p.is_dir() and SLUG.fullmatch(p.name)):
            for task in sorted(p for p in occ.iterdir() if p.is_dir() and TASK.fullmatch(p.name)):
                if any(os.path.lexists(task / n) for n in SOURCE_FILES + SOURCE_DIRS):
                    tasks[f"{split.name}/{occ.name}/{task.name}"] = task
    for split in ("main", "easy"):
        if not any(t.startswith(split + "/") for t in tasks):
            out.append(f"no tasks in the {split} split")
    for tid, task in sorted(tasks.items()):
        for name in SOURCE_FILES:
            if (task / name).is_symlink():
                out.append(f"{tid}/{name}: symlink")
        for name in SOURCE_DIRS:
            if (task / name).is_symlink():
                out.append(f"{tid}/{name}: symlink")
            elif (task / name).is_dir():
                out += _walk_sources(task / name)[1]
        for name in REQUIRED:
            if not (task / name).is_file():
                out.append(f"{tid}: missing {name}")
        for name in ("task_card.md", "task_folder/TASK_INSTRUCTIONS.txt"):
            p = task / name
            if p.is_file() and not p.read_text(encoding="utf-8").strip():
                out.append(f"{tid}: {name} is empty")
        if (task / "RUBRICS.json").is_file():
            out += _rubric_reasons(task / "RUBRICS.json")
    return out


def harbor_refusals(split_dirs: list[Path]) -> list[str]:
    """Every reason Harbor's task preparation would refuse split directories ``split_dirs``
    (each a ``dataset``/``dataset_easy`` directory of the raw layout, or its equivalent)."""
    out: list[str] = []
    n = 0
    for split in split_dirs:
        if split.is_symlink() or not split.is_dir():
            out.append(f"{split}: not a directory")
            continue
        for occ in sorted(split.iterdir()):
            if occ.is_symlink() or not occ.is_dir():
                out.append(f"{occ}: unexpected entry among the occupations")
                continue
            if not SLUG.fullmatch(occ.name):
                out.append(f"{occ}: invalid occupation directory name")
                continue
            for task in sorted(occ.iterdir()):
                if task.is_symlink() or not task.is_dir() or not TASK.fullmatch(task.name):
                    out.append(f"{task}: invalid task directory")
                    continue
                n += 1
                for name in ("RUBRICS.json", "task_card.md"):
                    if (task / name).is_symlink() or not (task / name).is_file():
                        out.append(f"{task}: missing required file {name}")
                folder = task / "task_folder"
                if folder.is_symlink() or not folder.is_dir():
                    out.append(f"{task}: missing task_folder")
                else:
                    files, bad = _walk_sources(folder)
                    out += bad
                    if folder / "TASK_INSTRUCTIONS.txt" not in files:
                        out.append(f"{task}: missing TASK_INSTRUCTIONS.txt")
                if (task / "RUBRICS.json").is_file():
                    out += _rubric_reasons(task / "RUBRICS.json")
    if n == 0:
        out.append("no tasks")
    return out
