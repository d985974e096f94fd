"""Loading tasks and datasets from disk (read-only; nothing is ever written).

Layouts understood (DESIGN §2):

* public: ``<root>/dataset/<split>/<occupation>/taskN/``;
* raw Hugging Face: ``<root>/dataset/<occupation>/taskN`` (split ``main``) and
  ``<root>/dataset_easy/<occupation>/taskN`` (split ``easy``);
* any directory of the form ``<split>/<occupation>/taskN`` (e.g. ``datasets/sample``), an
  occupation directory, or a single task directory.

Split directory names ``dataset`` and ``dataset_easy`` map to ``main`` and ``easy``.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ._model import Task
from ._problems import Problem, TaskLoadError
from ._rubrics import parse_rubrics

TASK_DIR_RE = re.compile(r"task[1-9][0-9]*")
SLUG_RE = re.compile(r"[a-z0-9][a-z0-9_-]*")
SPLIT_ALIASES = {"dataset": "main", "dataset_easy": "easy"}

WORKSPACE = "task_folder"
INSTRUCTIONS = "TASK_INSTRUCTIONS.txt"
RUBRICS = "RUBRICS.json"
TASK_CARD = "task_card.md"
SEARCH = "files_required_to_search"
SOLUTION = "solution"


def display_path(path: Path) -> str:
    """``path`` relative to the current directory when below it, else absolute (POSIX)."""
    path = Path(os.path.abspath(path))
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_posix()


class Dataset(BaseModel):
    """Tasks found under a path, with every problem met while loading.

    Attributes:
        root: the path given to :func:`load_dataset` (absolute).
        tasks: loaded tasks sorted by (split, occupation, number); invalid tasks are absent.
        problems: all errors and warnings, invalid tasks' errors included.
    """

    model_config = ConfigDict(frozen=True)

    root: Path
    tasks: list[Task]
    problems: list[Problem]

    @property
    def errors(self) -> list[Problem]:
        """Problems of severity ``error``."""
        return [p for p in self.problems if p.severity == "error"]

    @property
    def ok(self) -> bool:
        """True when no error was found."""
        return not self.errors

    def get(self, task_id: str) -> Task:
        """The task with ``task_id`` (``split/occupation/taskN``); KeyError if absent."""
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise KeyError(f"no task {task_id!r} in {display_path(self.root)}")


def _split_name(name: str) -> str:
    return SPLIT_ALIASES.get(name, name)


def _subdirs(path: Path) -> list[Path]:
    try:
        return sorted(p for p in path.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return []


def _has_tasks(path: Path) -> bool:
    return any(TASK_DIR_RE.fullmatch(p.name) for p in _subdirs(path))


def discover_task_dirs(path: Path) -> list[tuple[str, str, Path]]:
    """Find task directories under ``path``.

    Args:
        path: a dataset root, split, occupation or task directory.

    Returns:
        ``[(split, occupation, task_dir), ...]`` sorted; empty when nothing is found.

    Raises:
        FileNotFoundError: ``path`` does not exist or is not a directory.
    """
    path = Path(os.path.abspath(path))
    if not path.is_dir():
        raise FileNotFoundError(f"{display_path(path)}: no such directory")
    found: list[tuple[str, str, Path]] = []
    if TASK_DIR_RE.fullmatch(path.name):
        return [(_split_name(path.parent.parent.name), path.parent.name, path)]
    if _has_tasks(path):
        return [
            (_split_name(path.parent.name), path.name, t)
            for t in _subdirs(path)
            if TASK_DIR_RE.fullmatch(t.name)
        ]
    occ_level = [o for o in _subdirs(path) if _has_tasks(o)]
    if occ_level:
        split = _split_name(path.name)
        for occ in occ_level:
            found += [(split, occ.name, t) for t in _subdirs(occ) if TASK_DIR_RE.fullmatch(t.name)]
        return found
    for split_dir in _subdirs(path):
        for occ in _subdirs(split_dir):
            if _has_tasks(occ):
                found += [
                    (_split_name(split_dir.name), occ.name, t)
                    for t in _subdirs(occ)
                    if TASK_DIR_RE.fullmatch(t.name)
                ]
    if not found and (path / "dataset").is_dir():
        return discover_task_dirs(path / "dataset")
    return sorted(found, key=lambda x: (x[0], x[1], int(x[2].name[4:])))


def _walk_files(base: Path, problems: list[Problem]) -> list[str]:
    """Relative POSIX paths of regular files under ``base``; symlinks and special files
    become problems (never followed)."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        d = Path(dirpath)
        for name in list(dirnames):
            p = d / name
            if p.is_symlink():
                problems.append(
                    Problem(file=display_path(p), message=f"symlink not allowed (points to {os.readlink(p)})")
                )
                dirnames.remove(name)
        dirnames.sort()
        for name in sorted(filenames):
            p = d / name
            if p.is_symlink():
                problems.append(
                    Problem(file=display_path(p), message=f"symlink not allowed (points to {os.readlink(p)})")
                )
            elif not p.is_file():
                problems.append(Problem(file=display_path(p), message="not a regular file"))
            else:
                out.append(p.relative_to(base).as_posix())
    return out


def _read_text(path: Path, problems: list[Problem]) -> str | None:
    if path.is_symlink():
        problems.append(Problem(file=display_path(path), message="symlink not allowed"))
        return None
    if not path.is_file():
        problems.append(Problem(file=display_path(path), message="missing"))
        return None
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        problems.append(Problem(file=display_path(path), message=f"not valid UTF-8 ({exc.reason} at byte {exc.start})"))
    except OSError as exc:
        problems.append(Problem(file=display_path(path), message=f"cannot be read ({exc.strerror})"))
    return None


def load_task(task_dir: Path, split: str | None = None, occupation: str | None = None) -> Task:
    """Load and validate one task directory.

    Args:
        task_dir: the ``taskN`` directory.
        split: split name; default: inferred from the grandparent directory name.
        occupation: occupation slug; default: the parent directory name.

    Returns:
        The task.

    Raises:
        TaskLoadError: with every error found (missing files, invalid RUBRICS.json, symlinks,
            bad names). Warnings alone do not raise.
    """
    task, problems = _load_task(Path(task_dir), split, occupation)
    errors = [p for p in problems if p.severity == "error"]
    if errors or task is None:
        raise TaskLoadError(errors)
    return task


def _load_task(task_dir: Path, split: str | None, occupation: str | None) -> tuple[Task | None, list[Problem]]:
    task_dir = Path(os.path.abspath(task_dir))
    split = split or _split_name(task_dir.parent.parent.name)
    occupation = occupation or task_dir.parent.name
    problems: list[Problem] = []
    shown = display_path(task_dir)
    m = TASK_DIR_RE.fullmatch(task_dir.name)
    if not m:
        problems.append(Problem(file=shown, message="task directory must be named taskN (N = 1, 2, …)"))
    if not SLUG_RE.fullmatch(occupation):
        problems.append(
            Problem(file=display_path(task_dir.parent), message=f"occupation slug {occupation!r} must match [a-z0-9][a-z0-9_-]*")
        )
    if task_dir.is_symlink():
        problems.append(Problem(file=shown, message="symlink not allowed"))
        return None, problems

    for name in (RUBRICS, TASK_CARD):
        p = task_dir / name
        if p.is_symlink():
            problems.append(Problem(file=display_path(p), message="symlink not allowed"))

    workspace = task_dir / WORKSPACE
    workspace_files: list[str] = []
    instructions: str | None = None
    if workspace.is_symlink() or not workspace.is_dir():
        problems.append(Problem(file=display_path(workspace), message="missing (the agent's workspace directory)"))
    else:
        workspace_files = _walk_files(workspace, problems)
        instructions = _read_text(workspace / INSTRUCTIONS, problems)

    task_card = _read_text(task_dir / TASK_CARD, problems)

    rubrics = []
    key = "rubrics"
    rubrics_path = task_dir / RUBRICS
    raw = _read_text(rubrics_path, problems) if not rubrics_path.is_symlink() else None
    if raw is not None:
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(
                Problem(file=display_path(rubrics_path), message=f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")
            )
        else:
            rubrics, key, found = parse_rubrics(data, display_path(rubrics_path))
            problems += found

    search_dir = task_dir / SEARCH
    search_files: list[str] = []
    if search_dir.is_symlink():
        problems.append(Problem(file=display_path(search_dir), message="symlink not allowed"))
        search_dir_opt = None
    elif search_dir.is_dir():
        search_files = _walk_files(search_dir, problems)
        search_dir_opt = search_dir
    else:
        search_dir_opt = None

    solution = task_dir / SOLUTION
    solution_opt = None
    if solution.is_symlink():
        problems.append(Problem(file=display_path(solution), message="symlink not allowed"))
    elif solution.is_dir():
        _walk_files(solution, problems)
        solution_opt = solution

    if any(p.severity == "error" for p in problems) or instructions is None or task_card is None or not m:
        return None, problems
    task = Task(
        split=split,
        occupation=occupation,
        number=int(task_dir.name[4:]),
        root=task_dir,
        workspace_dir=workspace,
        instructions=instructions,
        workspace_files=workspace_files,
        search_dir=search_dir_opt,
        search_files=search_files,
        task_card=task_card,
        rubrics=rubrics,
        solution_dir=solution_opt,
        rubrics_key=key,
    )
    return task, problems


def load_dataset(
    path: Path | str,
    *,
    splits: list[str] | None = None,
    task_glob: str | None = None,
) -> Dataset:
    """Load every task under ``path``, collecting problems instead of stopping.

    Args:
        path: a dataset root (public or raw Hugging Face layout), a split directory, an
            occupation directory or a task directory.
        splits: keep only these split names (after aliasing), e.g. ``["main"]``.
        task_glob: keep only task ids matching this fnmatch pattern, e.g. ``"*/lawyers/*"``.

    Returns:
        A :class:`Dataset`; invalid tasks are left out of ``tasks`` and their errors are in
        ``problems``.

    Raises:
        FileNotFoundError: ``path`` is not a directory, or holds no ``taskN`` directory.
    """
    root = Path(os.path.abspath(path))
    found = discover_task_dirs(root)
    if not found:
        raise FileNotFoundError(
            f"{display_path(root)}: no tasks found (expected <split>/<occupation>/taskN/ "
            "directories, or dataset/ and dataset_easy/ from Hugging Face)"
        )
    tasks: list[Task] = []
    problems: list[Problem] = []
    for split, occupation, task_dir in found:
        if splits and split not in splits:
            continue
        task_id = f"{split}/{occupation}/{task_dir.name}"
        if task_glob and not fnmatch.fnmatchcase(task_id, task_glob):
            continue
        task, found_problems = _load_task(task_dir, split, occupation)
        problems += found_problems
        if task is not None:
            tasks.append(task)
    seen: dict[str, Path] = {}
    for t in tasks:
        if t.id in seen:
            problems.append(Problem(file=display_path(t.root), message=f"duplicate task id {t.id} (also {display_path(seen[t.id])})"))
        seen[t.id] = t.root
    tasks.sort(key=lambda t: (t.split, t.occupation, t.number))
    return Dataset(root=root, tasks=tasks, problems=problems)


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def task_digest(task: Task) -> str:
    """A sha256 over everything that defines a task: every file of ``task_folder``,
    ``RUBRICS.json``, ``task_card.md``, ``files_required_to_search`` and ``solution``.

    Returns:
        Hex digest; it changes when any of those files' bytes or names change.
    """
    h = hashlib.sha256()
    parts: list[tuple[str, Path]] = [(f"{WORKSPACE}/{f}", task.workspace_dir / f) for f in task.workspace_files]
    parts += [(RUBRICS, task.root / RUBRICS), (TASK_CARD, task.root / TASK_CARD)]
    if task.search_dir is not None:
        parts += [(f"{SEARCH}/{f}", task.search_dir / f) for f in task.search_files]
    if task.solution_dir is not None:
        for dirpath, dirnames, filenames in os.walk(task.solution_dir):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                p = Path(dirpath) / name
                parts.append((f"{SOLUTION}/{p.relative_to(task.solution_dir).as_posix()}", p))
    for name, p in sorted(parts):
        h.update(name.encode() + b"\0" + sha256_file(p).encode() + b"\n")
    return h.hexdigest()
