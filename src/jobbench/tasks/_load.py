"""Loading tasks and datasets from disk (read-only; nothing is ever written).

Layouts understood (DESIGN §2):

* public: ``<root>/dataset/<split>/<occupation>/taskN/``;
* raw Hugging Face: ``<root>/dataset/<occupation>/taskN`` (split ``main``) and
  ``<root>/dataset_easy/<occupation>/taskN`` (split ``easy``);
* any directory of the form ``<split>/<occupation>/taskN`` (e.g. ``datasets/sample``), an
  occupation directory, or a single task directory.

Split directory names ``dataset`` and ``dataset_easy`` map to ``main`` and ``easy``.

Loading is tolerant like the public tools unless ``strict`` is asked for: a ``taskN``
directory holding none of a task's sources (``task_card.md``, ``RUBRICS.json``,
``task_folder/``, ``files_required_to_search/``; e.g. one left with only ``model_output/``
or ``eval_result/``) is skipped with a warning, as the public dataset sync treats such a
directory as local data (``scripts/sync_dataset.py`` of ``Job-Bench/job-bench-eval``), and
malformed extension keys in ``RUBRICS.json`` are warnings (see :mod:`._rubrics`). Strict
loading reports both as errors.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
import stat
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from .._io import display_path
from ._model import Rubric, Task
from ._problems import Problem, TaskLoadError
from ._rubrics import parse_rubrics

TASK_DIR_RE = re.compile(r"task[1-9][0-9]*")
"""Task directory names: ``task`` then N >= 1 without leading zeros (DESIGN §2)."""
LOOSE_TASK_RE = re.compile(r"(?i)task[ ._-]?[0-9]+")
"""Names that are probably meant as task directories (``task01``, ``Task1``, ``task_2``)."""
SLUG_RE = re.compile(r"[a-z0-9][a-z0-9_-]*")
"""Occupation slugs (DESIGN §2)."""
SPLIT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
"""Split names: safe as one path component of trial ids."""
SPLIT_ALIASES = {"dataset": "main", "dataset_easy": "easy"}

WORKSPACE = "task_folder"
INSTRUCTIONS = "TASK_INSTRUCTIONS.txt"
RUBRICS = "RUBRICS.json"
TASK_CARD = "task_card.md"
SEARCH = "files_required_to_search"
SOLUTION = "solution"
SOURCES = (TASK_CARD, RUBRICS, WORKSPACE, SEARCH)
"""A task's managed sources (DESIGN §8): a ``taskN`` directory holding none of them is not
a task."""


class Dataset(BaseModel):
    """Tasks found under a path, with every problem met while loading.

    Attributes:
        root: the path given to :func:`load_dataset` (absolute).
        tasks: loaded tasks sorted by (split, occupation, number); invalid tasks are absent.
        problems: all errors and warnings, invalid tasks' errors included.
        strict: whether it was loaded strictly (see the module docstring).
    """

    model_config = ConfigDict(frozen=True)

    root: Path
    tasks: list[Task]
    problems: list[Problem]
    strict: bool = False

    @property
    def warnings(self) -> list[Problem]:
        """Problems of severity ``warning`` (skipped directories, ignored keys)."""
        return [p for p in self.problems if p.severity == "warning"]

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


def _ignored(name: str) -> bool:
    """Hidden entries (``.git``, ``.cache`` left by ``huggingface_hub``) and ``__MACOSX``
    (zip debris) are never part of a dataset."""
    return name.startswith(".") or name == "__MACOSX"


def _scan(path: Path) -> tuple[list[Path], list[Path]]:
    """``(directories, symlinks)`` directly under ``path``, sorted by name, ignored names
    skipped. Symlinks are never followed; unreadable directories give empty lists."""
    dirs: list[Path] = []
    links: list[Path] = []
    try:
        with os.scandir(path) as it:
            for entry in it:
                if _ignored(entry.name):
                    continue
                if entry.is_symlink():
                    links.append(Path(entry.path))
                elif entry.is_dir(follow_symlinks=False):
                    dirs.append(Path(entry.path))
    except OSError:
        pass
    return sorted(dirs), sorted(links)


def _subdirs(path: Path) -> list[Path]:
    return _scan(path)[0]


def _looks_like_task(path: Path) -> bool:
    """A directory that is probably a task although not named ``taskN``: ``task01``,
    ``Task1``, ``task_2`` …, or any directory holding ``RUBRICS.json`` or ``task_folder``."""
    if LOOSE_TASK_RE.fullmatch(path.name):
        return True
    return (path / RUBRICS).is_file() or (path / WORKSPACE).is_dir()


def _holds_no_source(path: Path) -> bool:
    """True when ``path`` holds none of :data:`SOURCES` (symlinks count as present: they
    are reported when the task is loaded)."""
    return not any(os.path.lexists(path / name) for name in SOURCES)


def _not_a_task(path: Path) -> Problem:
    return Problem(
        file=display_path(path),
        message=f"holds none of {', '.join(SOURCES)}: not a task (local data such as "
        "model_output/ or eval_result/); skipped (--strict refuses it)",
        severity="warning",
    )


def _symlink_problem(link: Path) -> Problem:
    try:
        target = os.readlink(link)
    except OSError:
        target = "?"
    return Problem(
        file=display_path(link), message=f"symlink not allowed (points to {target}); not followed"
    )


def _link_to_dir(link: Path) -> bool:
    """True for a symlink to a directory or a dangling one (a file link is not a task)."""
    return link.is_dir() or not link.exists()


_Found = list[tuple[str, str, Path]]
_Scoped = list[tuple[str | None, Problem]]
"""Discovery problems with the task id they concern (``split/occupation/name``), or None
when they concern no single task, so that split and task filters apply to them too."""


class _Occupation:
    """The task directories of one occupation directory, with what was skipped."""

    def __init__(self, path: Path, strict: bool = False):
        self.path = path
        self.tasks: list[Path] = []
        self.problems: list[tuple[str, Problem]] = []  # (directory name, problem)
        dirs, links = _scan(path)
        for d in dirs:
            if TASK_DIR_RE.fullmatch(d.name) and not strict and _holds_no_source(d):
                self.problems.append((d.name, _not_a_task(d)))
            elif TASK_DIR_RE.fullmatch(d.name):
                self.tasks.append(d)
            elif _looks_like_task(d):
                self.problems.append(
                    (
                        d.name,
                        Problem(
                            file=display_path(d),
                            message="looks like a task directory but is not named taskN "
                            "(N = 1, 2, … without leading zeros)"
                            + (
                                " (--strict refuses it)"
                                if strict
                                else "; skipped (--strict refuses it)"
                            ),
                            severity="error" if strict else "warning",
                        ),
                    )
                )
        for link in links:
            if TASK_DIR_RE.fullmatch(link.name) or LOOSE_TASK_RE.fullmatch(link.name):
                self.problems.append((link.name, _symlink_problem(link)))

    def scoped(self, split: str) -> _Scoped:
        return [(f"{split}/{self.path.name}/{name}", p) for name, p in self.problems]

    @property
    def found(self) -> bool:
        return bool(self.tasks or self.problems)


def _split_level(path: Path, split: str, strict: bool) -> tuple[_Found, _Scoped]:
    """Occupations directly under a split directory ``path``."""
    found: _Found = []
    problems: _Scoped = []
    dirs, links = _scan(path)
    for d in dirs:
        occ = _Occupation(d, strict)
        found += [(split, d.name, t) for t in occ.tasks]
        problems += occ.scoped(split)
    if found or problems:
        problems += [
            (f"{split}/{link.name}/*", _symlink_problem(link))
            for link in links
            if _link_to_dir(link)
        ]
    return found, problems


def _discover(path: Path, strict: bool = False) -> tuple[_Found, _Scoped]:
    # a task directory given directly, even misnamed (loading then names the problem)
    if TASK_DIR_RE.fullmatch(path.name) or _looks_like_task(path):
        split = _split_name(path.parent.parent.name)
        if TASK_DIR_RE.fullmatch(path.name) and not strict and _holds_no_source(path):
            return [], [(f"{split}/{path.parent.name}/{path.name}", _not_a_task(path))]
        return [(split, path.parent.name, path)], []
    occ = _Occupation(path, strict)
    if occ.found:
        split = _split_name(path.parent.name)
        return [(split, path.name, t) for t in occ.tasks], occ.scoped(split)
    found, problems = _split_level(path, _split_name(path.name), strict)
    if found or problems:
        return found, problems
    return _root_level(path, strict)


def _root_level(path: Path, strict: bool) -> tuple[_Found, _Scoped]:
    """Split directories under a dataset root. A ``dataset/`` child holding split
    directories (public layout) is looked into as well, even beside a raw ``dataset_easy/``;
    deeper nesting is not searched (it could be anything, e.g. run directories)."""
    found: _Found = []
    problems: _Scoped = []
    dirs, links = _scan(path)
    for split_dir in dirs:
        f, p = _split_level(split_dir, _split_name(split_dir.name), strict)
        if not (f or p) and split_dir.name == "dataset":
            f, p = _root_level(split_dir, strict)
        found += f
        problems += p
    if found or problems:
        problems += [(None, _symlink_problem(link)) for link in links if _link_to_dir(link)]
    return found, problems


def _sort_key(item: tuple[str, str, Path]) -> tuple[str, str, int]:
    return (item[0], item[1], int(item[2].name[4:]) if TASK_DIR_RE.fullmatch(item[2].name) else 0)


def discover_task_dirs(path: Path, *, strict: bool = False) -> list[tuple[str, str, Path]]:
    """Find task directories under ``path`` without reading any task file.

    Layouts: a dataset root (public ``dataset/<split>/<occupation>/taskN`` or raw Hugging
    Face ``dataset/<occupation>/taskN`` + ``dataset_easy/…``), a split, an occupation or a
    task directory. Hidden entries and ``__MACOSX`` are ignored; symlinks are not followed.
    Misnamed task directories and symlinks are reported by :func:`load_dataset`.

    Args:
        path: a dataset root, split, occupation or task directory.
        strict: also return ``taskN`` directories that hold no task source (tolerant
            discovery leaves them out, see the module docstring).

    Returns:
        ``[(split, occupation, task_dir), ...]`` sorted by (split, occupation, N), with
        ``dataset`` / ``dataset_easy`` split names mapped to ``main`` / ``easy``; empty when
        nothing is found.

    Raises:
        FileNotFoundError: ``path`` does not exist or is not a directory.
    """
    path = Path(os.path.abspath(path))
    if not path.is_dir():
        raise FileNotFoundError(f"{display_path(path)}: no such directory")
    return sorted(_discover(path, strict)[0], key=_sort_key)


def _walk_files(base: Path, problems: list[Problem]) -> list[str]:
    """Relative POSIX paths of regular files under ``base``, sorted; symlinks, special
    files and unreadable directories become problems (links are never followed)."""
    out: list[str] = []

    def walk(directory: str, rel: str) -> None:
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            problems.append(
                Problem(file=display_path(directory), message=f"cannot be read ({exc.strerror})")
            )
            return
        subdirs = []
        for e in entries:
            if e.is_symlink():
                problems.append(_symlink_problem(Path(e.path)))
            elif e.is_file(follow_symlinks=False):
                out.append(rel + e.name)
            elif e.is_dir(follow_symlinks=False):
                subdirs.append(e)
            else:
                problems.append(Problem(file=display_path(e.path), message="not a regular file"))
        for e in subdirs:
            walk(e.path, f"{rel}{e.name}/")

    walk(os.fspath(base), "")
    return sorted(out)


def _kind(path: Path) -> str | None:
    """``link``, ``dir``, ``file``, ``other`` or None (absent), from one ``lstat``."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError:
        return "other"
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "other"


def _read_text(
    path: Path, problems: list[Problem], *, required_nonblank: bool = False
) -> str | None:
    """UTF-8 text of ``path`` (a BOM is dropped), or None with a problem recorded."""
    kind = _kind(path)
    if kind == "link":
        problems.append(_symlink_problem(path))
        return None
    if kind is None:
        problems.append(Problem(file=display_path(path), message="missing"))
        return None
    if kind != "file":
        problems.append(Problem(file=display_path(path), message="must be a regular file"))
        return None
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        problems.append(
            Problem(file=display_path(path), message=f"cannot be read ({exc.strerror})")
        )
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        problems.append(
            Problem(
                file=display_path(path),
                message=f"not valid UTF-8 ({exc.reason} at byte {exc.start}, line {line})",
            )
        )
        return None
    if required_nonblank and not text.strip():
        problems.append(Problem(file=display_path(path), message="is empty"))
        return None
    return text


def load_task(
    task_dir: Path, split: str | None = None, occupation: str | None = None, *, strict: bool = False
) -> Task:
    """Load and validate one task directory (read-only).

    Args:
        task_dir: the ``taskN`` directory.
        split: split name; default: the grandparent directory name (``dataset`` → ``main``,
            ``dataset_easy`` → ``easy``).
        occupation: occupation slug; default: the parent directory name.
        strict: malformed extension keys are errors instead of warnings (the extension is
            then ignored; see :func:`jobbench.tasks.parse_rubrics`).

    Returns:
        The task.

    Raises:
        TaskLoadError: with every error found (missing files, invalid RUBRICS.json, symlinks,
            bad names). Warnings alone do not raise.
    """
    task, problems = _load_task(Path(task_dir), split, occupation, strict)
    errors = [p for p in problems if p.severity == "error"]
    if errors or task is None:
        raise TaskLoadError(errors)
    return task


def _load_task(
    task_dir: Path, split: str | None, occupation: str | None, strict: bool = False
) -> tuple[Task | None, list[Problem]]:
    task_dir = Path(os.path.abspath(task_dir))
    split = split or _split_name(task_dir.parent.parent.name)
    occupation = occupation or task_dir.parent.name
    problems: list[Problem] = []
    shown = display_path(task_dir)
    m = TASK_DIR_RE.fullmatch(task_dir.name)
    if not m:
        problems.append(
            Problem(file=shown, message="task directory must be named taskN (N = 1, 2, …)")
        )
    if not SLUG_RE.fullmatch(occupation):
        problems.append(
            Problem(
                file=display_path(task_dir.parent),
                message=f"occupation slug {occupation!r} must match [a-z0-9][a-z0-9_-]*",
            )
        )
    if not SPLIT_RE.fullmatch(split):
        problems.append(
            Problem(
                file=display_path(task_dir.parent.parent),
                message=f"split name {split!r} must match [A-Za-z0-9][A-Za-z0-9._-]*",
            )
        )
    kind = _kind(task_dir)
    if kind == "link":
        problems.append(_symlink_problem(task_dir))
        return None, problems
    if kind != "dir":
        problems.append(Problem(file=shown, message="no such directory"))
        return None, problems

    workspace = task_dir / WORKSPACE
    workspace_files: list[str] = []
    instructions: str | None = None
    kind = _kind(workspace)
    if kind == "link":
        problems.append(_symlink_problem(workspace))
    elif kind is None:
        problems.append(
            Problem(
                file=display_path(workspace), message="missing (the agent's workspace directory)"
            )
        )
    elif kind != "dir":
        problems.append(Problem(file=display_path(workspace), message="must be a directory"))
    else:
        workspace_files = _walk_files(workspace, problems)
        instructions = _read_text(workspace / INSTRUCTIONS, problems, required_nonblank=True)

    task_card = _read_text(task_dir / TASK_CARD, problems, required_nonblank=True)

    rubrics: list[Rubric] = []
    key = "rubrics"
    rubrics_path = task_dir / RUBRICS
    raw = _read_text(rubrics_path, problems)
    if raw is not None:
        try:
            data = json.loads(raw)  # accepts NaN/Infinity, which validation then names
        except json.JSONDecodeError as exc:
            problems.append(
                Problem(
                    file=display_path(rubrics_path),
                    message=f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
                )
            )
        except RecursionError:
            problems.append(
                Problem(file=display_path(rubrics_path), message="invalid JSON: nested too deeply")
            )
        else:
            rubrics, key, found = parse_rubrics(data, display_path(rubrics_path), strict=strict)
            problems += found

    search_dir = task_dir / SEARCH
    search_files: list[str] = []
    search_dir_opt = None
    kind = _kind(search_dir)
    if kind == "link":
        problems.append(_symlink_problem(search_dir))
    elif kind == "dir":
        search_files = _walk_files(search_dir, problems)
        search_dir_opt = search_dir
    elif kind is not None:
        problems.append(Problem(file=display_path(search_dir), message="must be a directory"))

    solution = task_dir / SOLUTION
    solution_opt = None
    kind = _kind(solution)
    if kind == "link":
        problems.append(_symlink_problem(solution))
    elif kind == "dir":
        _walk_files(solution, problems)
        solution_opt = solution

    if (
        any(p.severity == "error" for p in problems)
        or instructions is None
        or task_card is None
        or not m
    ):
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
    strict: bool = False,
) -> Dataset:
    """Load every task under ``path``, collecting problems instead of stopping.

    Args:
        path: a dataset root (public or raw Hugging Face layout), a split directory, an
            occupation directory or a task directory.
        splits: keep only these split names (after aliasing), e.g. ``["main"]``.
        task_glob: keep only task ids matching this fnmatch pattern, e.g. ``"*/lawyers/*"``.
        strict: report as errors what tolerant loading (the default, like the public
            tools) skips or ignores with a warning: ``taskN`` directories holding no task
            source, and malformed extension keys in ``RUBRICS.json``.

    Returns:
        A :class:`Dataset`; invalid tasks (and every task sharing an id with another) are
        left out of ``tasks`` and their errors are in ``problems`` (each distinct problem
        once, in discovery order). Nothing is written anywhere.

    Raises:
        FileNotFoundError: ``path`` is not a directory, or holds nothing that looks like a
            task.
    """
    root = Path(os.path.abspath(path))
    if not root.is_dir():
        raise FileNotFoundError(f"{display_path(root)}: no such directory")
    found, scoped = _discover(root, strict)
    if not found and not scoped:
        raise FileNotFoundError(
            f"{display_path(root)}: no tasks found (expected <split>/<occupation>/taskN/ "
            "directories, or dataset/ and dataset_easy/ from Hugging Face)"
        )

    def wanted(split: str | None, task_id: str | None) -> bool:
        if split is not None and splits and split not in splits:
            return False
        return not (
            task_glob and task_id is not None and not fnmatch.fnmatchcase(task_id, task_glob)
        )

    problems: list[Problem] = [
        p for scope, p in scoped if scope is None or wanted(scope.split("/", 1)[0], scope)
    ]
    loaded: list[Task] = []
    for split, occupation, task_dir in sorted(found, key=_sort_key):
        if not wanted(split, f"{split}/{occupation}/{task_dir.name}"):
            continue
        task, found_problems = _load_task(task_dir, split, occupation, strict)
        problems += found_problems
        if task is not None:
            loaded.append(task)

    by_id: dict[str, list[Task]] = {}
    for t in loaded:
        by_id.setdefault(t.id, []).append(t)
    tasks: list[Task] = []
    for task_id, same in by_id.items():
        if len(same) == 1:
            tasks.append(same[0])
            continue
        for t in same:
            others = ", ".join(display_path(o.root) for o in same if o is not t)
            problems.append(
                Problem(
                    file=display_path(t.root),
                    message=f"duplicate task id {task_id} (also {others})",
                )
            )
    tasks.sort(key=lambda t: (t.split, t.occupation, t.number))
    return Dataset(root=root, tasks=tasks, problems=list(dict.fromkeys(problems)), strict=strict)


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


_DIGEST_MEMO: dict[tuple, str] = {}
_DIGEST_MEMO_MAX = 4096


def task_digest(task: Task) -> str:
    """A sha256 over everything that defines a task: every file of ``task_folder``,
    ``RUBRICS.json``, ``task_card.md``, ``files_required_to_search`` and ``solution``.

    A run computes the digest of a task several times (planning, grading, reporting); the
    result is remembered in this process per (file names, sizes, modification times in ns,
    inodes), so the files are hashed again only when one of them changes (files modified in
    the last 2 seconds are always hashed).

    Returns:
        Hex digest; it changes when any of those files' bytes or names change.

    Raises:
        OSError: a file cannot be read.
    """
    parts = _digest_parts(task)
    stamp = tuple((name, _stat_key(p)) for name, p in parts)
    hit = _DIGEST_MEMO.get(stamp)
    if hit is not None:
        return hit
    h = hashlib.sha256()
    for name, p in parts:
        h.update(name.encode() + b"\0" + sha256_file(p).encode() + b"\n")
    digest = h.hexdigest()
    # File times tick in coarse steps (a few ms), so a file rewritten at the same size just
    # after it was hashed could keep its stamp: files changed in the last 2 s are never
    # remembered (the "racily clean" rule git uses for its index).
    newest = max((k[2] for _, k in stamp), default=0)
    if newest < time.time_ns() - 2_000_000_000:
        if len(_DIGEST_MEMO) >= _DIGEST_MEMO_MAX:
            _DIGEST_MEMO.clear()
        _DIGEST_MEMO[stamp] = digest
    return digest


def _stat_key(path: Path) -> tuple[str, int, int, int]:
    st = path.stat()
    return (os.path.abspath(path), st.st_size, st.st_mtime_ns, st.st_ino)


def _digest_parts(task: Task) -> list[tuple[str, Path]]:
    """``[(name inside the task, path)]`` of every file :func:`task_digest` covers, sorted."""
    parts: list[tuple[str, Path]] = [
        (f"{WORKSPACE}/{f}", task.workspace_dir / f) for f in task.workspace_files
    ]
    parts += [(RUBRICS, task.root / RUBRICS), (TASK_CARD, task.root / TASK_CARD)]
    if task.search_dir is not None:
        parts += [(f"{SEARCH}/{f}", task.search_dir / f) for f in task.search_files]
    if task.solution_dir is not None:
        for dirpath, dirnames, filenames in os.walk(task.solution_dir):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                p = Path(dirpath) / name
                parts.append((f"{SOLUTION}/{p.relative_to(task.solution_dir).as_posix()}", p))
    return sorted(parts)
