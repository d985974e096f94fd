"""The run directory: its layout, and the only readers and writers of its records.

Layout (``<id>`` parts are validated by :mod:`jobbench.rundir._ids`)::

    <run>/
      lock.json                              RunLock: what the run was made of
      preflight.json                         each invocation's endpoint preflight (calls,
                                             tokens, checks; jobbench.endpoint)
      .run.lock                              flock held while a process runs trials
      .jobbench-probe/                       Dask workers' visibility probes (transient)
      trials/<split>/<occupation>/taskN/<agent>@<model>/epoch-<N>/
          trial.json                         TrialRecord, written last (its presence = finished)
          trajectory.jsonl                   the trial's events
          deliverables/                      the agent's collected output (agent-controlled)
      grades/<judge-key>.usage.json          judge usage of the key's current grades
      grades/<judge-key>/<split>/<occupation>/taskN/<agent>@<model>/epoch-<N>.json
                                             GradeRecord of that trial by that judge
      report/                                the report's own files (jobbench.report)

Rules:

* Records are read only at the paths above: a trial record only at
  ``trials/<trial_id>/trial.json`` and a grade only at ``grades/<key>/<trial_id>.json``,
  found by a walk of exactly that depth over names that validate (never a recursive glob),
  so nothing under ``deliverables/`` is ever taken for a record: a deliverable called
  ``trial.json``, ``lock.json``, ``reward.json`` or ``grades/…`` is an ordinary deliverable.
* A record's identity must match its location (``trial_id`` and ``task_id`` of a trial
  record and of a grade, the epoch of a trial record); otherwise it is a ``foreign``
  problem and the record is not used.
* Every id taken from a record, a lock or a caller is validated before it becomes a path,
  and every write creates its folders one at a time below the run directory, refusing any
  component that is a symbolic link; files are written atomically (:mod:`jobbench._io`).
* One error policy: every reader returns the record and/or :class:`RunDirProblem` items
  that name the file, the field and the kind of problem (``missing``, ``corrupt``,
  ``foreign``, ``unsafe``); callers decide which are fatal.
* Schema 1 files (no ``schema_version``, written before it existed) are read through a
  migration in memory; files are never rewritten by reading. A ``schema_version`` newer
  than :data:`jobbench.records.SCHEMA_VERSION` is a ``foreign`` problem.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from .._io import atomic_write_bytes, atomic_write_json
from ..records import SCHEMA_VERSION, GradeRecord, TrialRecord
from ._ids import UnsafeIdError, check_component, epoch_of, parse_config, parse_trial_id
from ._lock import RunLock, lock_field_problems, migrate_lock_v1

LOCK_FILE = "lock.json"
PREFLIGHT_FILE = "preflight.json"
FLOCK_FILE = ".run.lock"
PROBE_DIR = ".jobbench-probe"
TRIALS = "trials"
GRADES = "grades"
REPORT = "report"
TRIAL_FILE = "trial.json"
TRAJECTORY_FILE = "trajectory.jsonl"
DELIVERABLES = "deliverables"
USAGE_SUFFIX = ".usage.json"

ProblemKind = Literal["missing", "corrupt", "foreign", "unsafe"]
"""``missing``: the file is absent. ``corrupt``: unreadable, not JSON, or not a valid record
(the field is named). ``foreign``: a valid file that is not this location's record (its
identity differs from its path, or a newer schema). ``unsafe``: a path that would leave the
run directory or pass through a symbolic link, or an id that is not safe as a path."""

R = TypeVar("R", bound=BaseModel)
T = TypeVar("T")


def _shown(path: Path) -> str:
    from ..tasks import display_path

    return display_path(path)


@dataclass(frozen=True)
class RunDirProblem:
    """One problem with a file of a run directory.

    Attributes:
        path: the file (or folder).
        kind: see :data:`ProblemKind`.
        message: what is wrong.
        field: the JSON field at fault (dotted path; ``(top level)`` for the whole file), or
            None when the problem is not about a field.
    """

    path: Path
    kind: ProblemKind
    message: str
    field: str | None = None

    def __str__(self) -> str:
        where = _shown(self.path)
        return (
            f"{where}: field {self.field}: {self.message}"
            if self.field
            else f"{where}: {self.message}"
        )


class RunDirError(ValueError):
    """A run directory cannot be used as asked; ``problems`` lists each file and field at
    fault (the message has one line per problem)."""

    def __init__(self, problems: list[RunDirProblem] | RunDirProblem | str) -> None:
        if isinstance(problems, RunDirProblem):
            problems = [problems]
        self.problems: list[RunDirProblem] = [] if isinstance(problems, str) else list(problems)
        super().__init__(
            problems if isinstance(problems, str) else "\n".join(str(p) for p in self.problems)
        )


@dataclass(frozen=True)
class Loaded(Generic[R]):
    """What a reader found at one path.

    Attributes:
        path: the file.
        record: the record, or None when it cannot be used (see ``problems``).
        problems: why not (empty when ``record`` is set).
        schema_version: the schema of the file as written (1 for files without
            ``schema_version``), or None when it was not read.
        sha256: SHA-256 (hex) of the file's bytes as read, or None when it was not read.
    """

    path: Path
    record: R | None
    problems: tuple[RunDirProblem, ...] = ()
    schema_version: int | None = None
    sha256: str | None = None

    @property
    def missing(self) -> bool:
        return any(p.kind == "missing" for p in self.problems)

    def get(self) -> R:
        """The record.

        Raises:
            RunDirError: with the problems when there is none.
        """
        if self.record is None:
            raise RunDirError(list(self.problems))
        return self.record


def _validation_problems(path: Path, exc: ValidationError) -> tuple[RunDirProblem, ...]:
    out = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err.get("loc", ())) or "(top level)"
        out.append(RunDirProblem(path, "corrupt", str(err.get("msg")), loc))
    return tuple(out)


def _read_json(path: Path) -> tuple[Any, RunDirProblem | None]:
    """Parse the JSON file at ``path`` without following a symbolic link at its name."""
    data, problem, _ = _read_json_bytes(path)
    return data, problem


def _read_json_bytes(path: Path) -> tuple[Any, RunDirProblem | None, bytes | None]:
    """:func:`_read_json` plus the file's bytes (None when it could not be read)."""
    raw, problem = _read_bytes(path)
    if raw is None:
        return None, problem, None
    data, problem = _parse_json(path, raw)
    return data, problem, raw


def _read_bytes(path: Path) -> tuple[bytes | None, RunDirProblem | None]:
    """The bytes of the regular file at ``path``, never following a symbolic link at its
    name; ``(None, problem)`` when it is missing, a link, not a regular file or unreadable."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None, RunDirProblem(path, "missing", "missing")
    except OSError as exc:
        return None, RunDirProblem(path, "corrupt", f"cannot read ({exc.strerror or exc})")
    if stat.S_ISLNK(st.st_mode):
        return None, RunDirProblem(
            path, "unsafe", "is a symbolic link (JobBench never writes one; not followed)"
        )
    if not stat.S_ISREG(st.st_mode):
        return None, RunDirProblem(path, "corrupt", "is not a regular file")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            return f.read(), None
    except OSError as exc:
        return None, RunDirProblem(path, "corrupt", f"cannot read ({exc.strerror or exc})")


def _parse_json(path: Path, raw: bytes) -> tuple[Any, RunDirProblem | None]:
    """``raw`` (the bytes of ``path``) parsed as UTF-8 JSON, or ``(None, problem)``."""
    try:
        return json.loads(raw.decode("utf-8")), None
    except UnicodeDecodeError:
        return None, RunDirProblem(
            path, "corrupt", "not valid JSON (not UTF-8 text)", "(top level)"
        )
    except json.JSONDecodeError as exc:
        return None, RunDirProblem(
            path, "corrupt", f"not valid JSON (line {exc.lineno}: {exc.msg})", "(top level)"
        )
    except RecursionError:
        return None, RunDirProblem(
            path, "corrupt", "not valid JSON (nested too deeply)", "(top level)"
        )


def _drop_undeclared(model: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k in model.model_fields}


def parse_record(path: Path, data: Any, model: type[R]) -> Loaded[R]:
    """Validate parsed JSON ``data`` (read from ``path``) as ``model``, through the schema-1
    migration when it has no ``schema_version``."""
    if not isinstance(data, dict):
        return Loaded(
            path, None, (RunDirProblem(path, "corrupt", "expected a JSON object", "(top level)"),)
        )
    version = data.get("schema_version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        return Loaded(
            path,
            None,
            (RunDirProblem(path, "corrupt", "expected an integer >= 1", "schema_version"),),
        )
    if version > SCHEMA_VERSION:
        return Loaded(
            path,
            None,
            (
                RunDirProblem(
                    path,
                    "foreign",
                    f"written by a newer JobBench (schema {version}; this version reads up to "
                    f"{SCHEMA_VERSION}); upgrade JobBench to read it",
                    "schema_version",
                ),
            ),
            version,
        )
    if model is RunLock:
        bad = lock_field_problems(data)
        if bad:
            return Loaded(
                path, None, tuple(RunDirProblem(path, "corrupt", m, f) for f, m in bad), version
            )
    if version == 1:
        data = migrate_lock_v1(data) if model is RunLock else _drop_undeclared(model, data)
        data = {**data, "schema_version": SCHEMA_VERSION}
    try:
        return Loaded(path, model.model_validate(data), (), version)
    except ValidationError as exc:
        return Loaded(path, None, _validation_problems(path, exc), version)


def read_record_file(path: Path | str, model: type[R]) -> Loaded[R]:
    """The record of type ``model`` in the JSON file ``path`` (any location; e.g. a grade
    kept beside a public-layout ``model_output/`` folder). A symbolic link at ``path`` is
    not followed (an ``unsafe`` problem).

    A trial record or grade that states the current ``schema_version`` is validated once,
    straight from its bytes (pydantic's JSON mode, no intermediate Python objects); any other
    file, and any file that fails that validation, goes through :func:`parse_record`, so that
    migrations and problems are exactly as described there."""
    path = path if isinstance(path, Path) else Path(path)
    raw, problem = _read_bytes(path)
    if raw is None:
        assert problem is not None  # set whenever there are no bytes
        return Loaded(path, None, (problem,))
    digest = hashlib.sha256(raw).hexdigest()
    if model in _CURRENT_SCHEMA_MODELS:
        record = _validate_current(raw, model)
        if record is not None:
            return Loaded(path, record, (), SCHEMA_VERSION, digest)
    data, problem = _parse_json(path, raw)
    if problem is not None:
        return Loaded(path, None, (problem,))
    loaded = parse_record(path, data, model)
    return dataclasses.replace(loaded, sha256=digest)


_CURRENT_SCHEMA_MODELS: tuple[type[BaseModel], ...] = (TrialRecord, GradeRecord)
"""Records whose files of the current schema need no migration and no check beyond their
model (``lock.json`` has :func:`jobbench.rundir._lock.lock_field_problems`)."""


def _validate_current(raw: bytes, model: type[R]) -> R | None:
    """``raw`` validated as ``model`` in JSON mode when it is a record of the current schema:
    the file states ``schema_version`` (a strict integer in the model, so ``2.0`` or ``true``
    do not pass) equal to :data:`jobbench.records.SCHEMA_VERSION`. None otherwise, or when
    validation fails (the caller then reads the file the long way and names each problem)."""
    try:
        record = model.model_validate_json(raw)
    except ValidationError:
        return None
    if "schema_version" not in record.model_fields_set:
        return None
    if getattr(record, "schema_version", None) != SCHEMA_VERSION:
        return None
    return record


def folder_manifest(folder: Path) -> list[tuple[str, str]]:
    """``[(relative POSIX path, sha256 hex)]`` of the regular files under ``folder`` now,
    plus ``(path, "refused:<reason>")`` for each entry the extractor refuses (symlinks,
    special files; :func:`jobbench.extract.walk_folder`, the walker the judge reads
    deliverables with), sorted; a missing folder gives ``[]``."""
    from ..extract import walk_folder
    from ..tasks import sha256_file

    if not folder.is_dir():
        return []
    return [
        (rel, sha256_file(path) if problem is None else f"refused:{problem}")
        for rel, path, _, problem in walk_folder(folder)
    ]


@dataclass(frozen=True)
class TrialDeliverables:
    """A trial's ``deliverables/`` folder as the run directory holds it now.

    Attributes:
        dir: the folder (it may be absent: a trial that collected nothing).
        problem: set when the folder must not be read (a symbolic link, not a folder).
    """

    dir: Path
    problem: RunDirProblem | None = None

    def manifest(self) -> list[tuple[str, str]]:
        """See :func:`folder_manifest` (``[]`` when the folder is absent or refused)."""
        return [] if self.problem is not None else folder_manifest(self.dir)

    def copy_to(self, dest: Path) -> list[str]:
        """Copy every regular file (never following a symbolic link) to the same relative
        path under ``dest`` (created; it must not exist). Returns the paths copied; entries
        the extractor refuses are not copied."""
        from ..extract import walk_folder

        dest.mkdir(parents=True)
        if self.problem is not None or not self.dir.is_dir():
            return []
        copied = []
        for rel, path, st, problem in walk_folder(self.dir):
            if problem is not None or st is None:
                continue
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as src, open(target, "xb") as out:
                shutil.copyfileobj(src, out)
            shutil.copystat(path, target, follow_symlinks=False)
            copied.append(rel)
        return copied


@dataclass
class TrialScan:
    """Every finished trial of a run directory.

    Attributes:
        records: trial id → record, for trial records that are usable, in trial-id order.
        dirs: trial id → its folder.
        sha256: trial id → SHA-256 (hex) of its ``trial.json`` bytes as read (usable ones).
        unfinished: trial ids whose folder has no ``trial.json`` (never finished or
            interrupted), sorted.
        problems: files that could not be used (corrupt, foreign or unsafe).
    """

    records: dict[str, TrialRecord] = field(default_factory=dict)
    dirs: dict[str, Path] = field(default_factory=dict)
    sha256: dict[str, str] = field(default_factory=dict)
    unfinished: list[str] = field(default_factory=list)
    problems: list[RunDirProblem] = field(default_factory=list)


@dataclass(frozen=True)
class Listing:
    """What a walk of the run directory found for a scan: ``ids`` (trial ids, sorted) and
    ``problems`` (entries left out on the way)."""

    ids: list[str]
    problems: list[RunDirProblem]


@dataclass
class GradeScan:
    """Every grade of one judge key in a run directory.

    Attributes:
        records: trial id → grade, for usable grade files, in trial-id order.
        paths: trial id → the grade file.
        sha256: trial id → SHA-256 (hex) of the grade file's bytes as read.
        problems: files that could not be used (corrupt, foreign or unsafe).
    """

    records: dict[str, GradeRecord] = field(default_factory=dict)
    paths: dict[str, Path] = field(default_factory=dict)
    sha256: dict[str, str] = field(default_factory=dict)
    problems: list[RunDirProblem] = field(default_factory=list)


def part_of(items: list[T], part: tuple[int, int]) -> list[T]:
    """The ``i``-th of ``n`` contiguous slices of ``items`` (``part = (i, n)``), sizes
    differing by at most one; the slices ``0 … n-1`` joined in order are ``items``.

    Raises:
        ValueError: not ``0 <= i < n``.
    """
    i, n = part
    if not 0 <= i < n:
        raise ValueError(f"part {i} of {n} does not exist")
    return items[len(items) * i // n : len(items) * (i + 1) // n]


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _subdirs(folder: Path | str) -> list[tuple[str, str, bool]]:
    """``(name, path, is_symlink)`` of the sub-folders (and symlinks) of ``folder``, sorted
    by name; ``path`` is ``folder`` joined with the name, as a string."""
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
    out = []
    for e in entries:
        if e.is_symlink():
            out.append((e.name, e.path, True))
        elif e.is_dir(follow_symlinks=False):
            out.append((e.name, e.path, False))
    return out


def _is_component(name: str) -> bool:
    try:
        check_component(name)
        return True
    except UnsafeIdError:
        return False


@dataclass(frozen=True)
class RunDir:
    """A run directory (see the module docstring for its layout and rules).

    Args:
        root: its path (made absolute; it may not exist yet).
    """

    root: Path

    def __init__(self, root: Path | str) -> None:
        object.__setattr__(self, "root", Path(os.path.abspath(root)))

    # -------------------------------------------------------------- layout

    @property
    def lock_file(self) -> Path:
        """``lock.json``."""
        return self.root / LOCK_FILE

    @property
    def preflight_file(self) -> Path:
        """``preflight.json``: the endpoint preflights of ``jobbench run`` invocations."""
        return self.root / PREFLIGHT_FILE

    @property
    def flock_file(self) -> Path:
        """``.run.lock`` (see :class:`jobbench.runner.RunDirLock`)."""
        return self.root / FLOCK_FILE

    @property
    def probe_dir(self) -> Path:
        """``.jobbench-probe/``: where Dask workers prove they see the run directory."""
        return self.root / PROBE_DIR

    @property
    def trials_dir(self) -> Path:
        return self.root / TRIALS

    @property
    def grades_dir(self) -> Path:
        return self.root / GRADES

    @property
    def report_dir(self) -> Path:
        """``report/``, the report's default output folder."""
        return self.root / REPORT

    def is_run_dir(self) -> bool:
        """Whether ``lock.json`` exists (as a regular file, not a link)."""
        st = _lstat(self.lock_file)
        return st is not None and stat.S_ISREG(st.st_mode)

    def trial_dir(self, tid: str) -> Path:
        """``trials/<trial_id>/``.

        Raises:
            UnsafeIdError: ``tid`` is not a valid trial id.
        """
        # one string join and one Path (a report makes a few per trial)
        return Path(os.path.join(self.root, TRIALS, *parse_trial_id(tid).parts))

    def trial_file(self, tid: str) -> Path:
        """``trials/<trial_id>/trial.json``."""
        return Path(os.path.join(self.root, TRIALS, *parse_trial_id(tid).parts, TRIAL_FILE))

    def trajectory_file(self, tid: str) -> Path:
        """``trials/<trial_id>/trajectory.jsonl``."""
        return Path(os.path.join(self.root, TRIALS, *parse_trial_id(tid).parts, TRAJECTORY_FILE))

    def trajectory_events(self, tid: str) -> int | None:
        """How many events (non-blank lines) ``trials/<tid>/trajectory.jsonl`` holds; None
        when it is missing, a symbolic link, not a regular file (a FIFO is never waited on)
        or unreadable.

        Raises:
            UnsafeIdError: ``tid`` is not a valid trial id.
        """
        path = self.trajectory_file(tid)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as f:
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return None
                return sum(1 for line in f if line.strip())
            except OSError:
                return None

    def deliverables_dir(self, tid: str) -> Path:
        """``trials/<trial_id>/deliverables/``."""
        return self.trial_dir(tid) / DELIVERABLES

    def judge_dir(self, key: str) -> Path:
        """``grades/<judge-key>/``.

        Raises:
            UnsafeIdError: ``key`` is not a safe path component.
        """
        return self.grades_dir / check_component(key, "judge key")

    def grade_file(self, key: str, tid: str) -> Path:
        """``grades/<judge-key>/<trial_id>.json``.

        Raises:
            UnsafeIdError: ``key`` or ``tid`` is not valid.
        """
        k = parse_trial_id(tid)
        check_component(key, "judge key")
        return Path(os.path.join(self.root, GRADES, key, *k.parts[:4], f"{k.epoch_name}.json"))

    def usage_file(self, key: str) -> Path:
        """``grades/<judge-key>.usage.json`` (beside the key's folder, never inside it)."""
        return self.grades_dir / f"{check_component(key, 'judge key')}{USAGE_SUFFIX}"

    # -------------------------------------------------------------- confinement

    def _rel_parts(self, path: Path) -> tuple[str, ...]:
        """The components of ``path`` (normalised) below the run directory.

        Raises:
            RunDirError: an ``unsafe`` problem when ``path`` is not inside the run directory.
        """
        norm = os.path.normpath(path)
        root = str(self.root)
        prefix = root if root.endswith(os.sep) else root + os.sep
        if norm == root:
            return ()
        if not norm.startswith(prefix):
            raise RunDirError(
                RunDirProblem(path, "unsafe", f"outside the run directory {self.root}")
            )
        parts = tuple(norm[len(prefix) :].split(os.sep))
        if any(p in ("", ".", "..") for p in parts):
            raise RunDirError(
                RunDirProblem(path, "unsafe", f"outside the run directory {self.root}")
            )
        return parts

    def _ensure_dir(self, path: Path) -> None:
        """Create ``path`` (a folder inside the run directory) and its parents one at a time,
        refusing any existing component that is a symbolic link or not a folder.

        Raises:
            RunDirError: an ``unsafe`` problem naming the component.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        cur = self.root
        for part in self._rel_parts(path):
            cur = cur / part
            st = _lstat(cur)
            if st is None:
                try:
                    os.mkdir(cur)
                except FileExistsError:
                    pass
                st = os.lstat(cur)
            if stat.S_ISLNK(st.st_mode):
                raise RunDirError(
                    RunDirProblem(
                        cur, "unsafe", "is a symbolic link; JobBench never writes through one"
                    )
                )
            if not stat.S_ISDIR(st.st_mode):
                raise RunDirError(RunDirProblem(cur, "unsafe", "is not a folder"))

    def _unlinked_path(
        self, path: Path, *, itself: bool = False, seen: set[str] | None = None
    ) -> RunDirProblem | None:
        """A problem when a folder on the way from the run directory to ``path`` (and
        ``path`` itself when ``itself``) is a symbolic link: then ``path`` is not a location
        the run directory owns. ``seen`` (kept by one scan of many files) holds the folders
        (as strings) already found not to be links, which are not looked at again: a path
        whose folder is among them is known to have none on its way."""
        if seen is not None and not itself:
            folder, name = os.path.split(path)
            if name not in ("", os.curdir, os.pardir):
                if folder in seen:
                    return None
                up, last = os.path.split(folder)
                if up in seen and last not in ("", os.curdir, os.pardir):
                    return self._link_problem(folder, seen)[0]
        try:
            parts = self._rel_parts(path)
        except RunDirError as exc:
            return exc.problems[0]
        cur = str(self.root)
        for part in parts if itself else parts[:-1]:
            cur = os.path.join(cur, part)
            if seen is not None and cur in seen:
                continue
            problem, exists = self._link_problem(cur, seen)
            if problem is not None or not exists:
                return problem
        return None

    @staticmethod
    def _link_problem(folder: str, seen: set[str] | None) -> tuple[RunDirProblem | None, bool]:
        """One step of :meth:`_unlinked_path`: ``(a problem when folder is a symbolic link,
        whether it exists)``; a folder that exists and is no link joins ``seen``."""
        try:
            st = os.lstat(folder)
        except FileNotFoundError:
            return None, False
        if stat.S_ISLNK(st.st_mode):
            return (
                RunDirProblem(
                    Path(folder),
                    "unsafe",
                    "is a symbolic link (JobBench never writes one; not followed)",
                ),
                True,
            )
        if seen is not None:
            seen.add(folder)
        return None, True

    def _write_json(self, path: Path, obj: Any) -> None:
        self._ensure_dir(path.parent)
        atomic_write_json(path, obj)

    # -------------------------------------------------------------- lock

    def read_lock(self) -> Loaded[RunLock]:
        """``lock.json`` (``missing`` when absent: not a run directory)."""
        loaded = self._read(self.lock_file, RunLock)
        if loaded.missing:
            return Loaded(
                self.lock_file,
                None,
                (
                    RunDirProblem(
                        self.lock_file, "missing", "missing (not a JobBench run directory)"
                    ),
                ),
            )
        return loaded

    def write_lock(self, lock: RunLock) -> None:
        """Write ``lock.json`` atomically (as the current schema)."""
        self._write_json(self.lock_file, lock.model_copy(update={"schema_version": SCHEMA_VERSION}))

    def add_preflight(self, record: dict[str, Any]) -> None:
        """Append one invocation's preflight ``record`` (:func:`jobbench.endpoint.
        preflight_record` plus ``at``) to ``preflight.json`` ``{"preflights": [...]}``
        (an unreadable file is replaced)."""
        data, problem = _read_json(self.preflight_file)
        runs = data.get("preflights") if isinstance(data, dict) and problem is None else None
        runs = [r for r in runs if isinstance(r, dict)] if isinstance(runs, list) else []
        self._write_json(self.preflight_file, {"preflights": [*runs, record]})

    def read_preflights(self) -> list[dict[str, Any]]:
        """The records of ``preflight.json``, oldest first (empty when absent or unreadable)."""
        data, problem = _read_json(self.preflight_file)
        runs = data.get("preflights") if isinstance(data, dict) and problem is None else None
        return [r for r in runs if isinstance(r, dict)] if isinstance(runs, list) else []

    # -------------------------------------------------------------- trials

    def _read(self, path: Path, model: type[R], seen: set[str] | None = None) -> Loaded[R]:
        problem = self._unlinked_path(path, seen=seen)
        if problem is not None:
            return Loaded(path, None, (problem,))
        return read_record_file(path, model)

    def read_trial(self, tid: str, *, _seen: set[str] | None = None) -> Loaded[TrialRecord]:
        """``trials/<tid>/trial.json``; a record whose ``trial_id``, ``task_id`` or ``epoch``
        is not this location's is a ``foreign`` problem (and not returned). ``_seen``: see
        :meth:`_unlinked_path` (for scans).

        Raises:
            UnsafeIdError: ``tid`` is not a valid trial id.
        """
        key = parse_trial_id(tid)
        path = self.trial_file(tid)
        loaded = self._read(path, TrialRecord, _seen)
        if loaded.record is None:
            return loaded
        rec = loaded.record
        wrong = None
        if rec.trial_id != tid:
            wrong = ("trial_id", f"{rec.trial_id!r} is not the trial id of its folder, {tid!r}")
        elif rec.task_id != key.task_id:
            wrong = ("task_id", f"{rec.task_id!r} is not the task of its trial id {tid!r}")
        elif rec.epoch != key.epoch:
            wrong = ("epoch", f"{rec.epoch} is not the epoch of its trial id {tid!r}")
        if wrong:
            return Loaded(
                path,
                None,
                (RunDirProblem(path, "foreign", wrong[1], wrong[0]),),
                loaded.schema_version,
            )
        return loaded

    def trial_ids(self) -> list[str]:
        """Every trial folder ``trials/<split>/<occupation>/taskN/<agent>@<model>/epoch-<N>/``
        whose names validate, finished or not, sorted; symbolic links are not followed."""
        return self._walk_trials([])

    def _walk_trials(self, problems: list[RunDirProblem]) -> list[str]:
        out: list[str] = []

        def walk(folder: Path | str, parts: list[str]) -> None:
            for name, path, link in _subdirs(folder):
                depth = len(parts)
                ok = (
                    _is_component(name)
                    and (depth != 3 or parse_config(name) is not None)
                    and (depth != 4 or epoch_of(name) is not None)
                )
                if not ok:
                    continue
                if link:
                    problems.append(
                        RunDirProblem(
                            Path(path),
                            "unsafe",
                            "is a symbolic link (JobBench never writes one; not followed)",
                        )
                    )
                    continue
                if depth == 4:
                    out.append("/".join(parts + [name]))
                else:
                    walk(path, parts + [name])

        walk(self.trials_dir, [])
        return sorted(out)

    def trial_listing(self) -> Listing:
        """The trial folders a scan reads (:meth:`trials`): their ids, sorted, and the
        problems found on the way (symbolic links, not followed)."""
        problems: list[RunDirProblem] = []
        return Listing(self._walk_trials(problems), problems)

    def trials(
        self, *, part: tuple[int, int] = (0, 1), listing: Listing | None = None
    ) -> TrialScan:
        """Every trial record at its own path (see :meth:`read_trial`), found by a walk of
        exactly the layout's depth: nothing under ``deliverables/`` is ever looked at.

        Args:
            part: ``(i, n)``: read only the ``i``-th of ``n`` contiguous slices of the
                sorted trial ids (:func:`part_of`); problems found by the walk itself belong
                to part 0. The scans of parts ``0 … n-1`` joined in order equal the scan of
                ``(0, 1)``, so that separate processes can each read some.
            listing: :meth:`trial_listing` made earlier (default: made now), so that the
                parts of one scan share one walk.
        """
        scan = TrialScan()
        seen: set[str] = set()
        listing = listing if listing is not None else self.trial_listing()
        tids = part_of(listing.ids, part)
        if part[0] == 0:
            scan.problems.extend(listing.problems)
        for tid in tids:
            scan.dirs[tid] = self.trial_dir(tid)
            loaded = self.read_trial(tid, _seen=seen)
            if loaded.record is not None:
                scan.records[tid] = loaded.record
                if loaded.sha256 is not None:
                    scan.sha256[tid] = loaded.sha256
            elif loaded.missing:
                scan.unfinished.append(tid)
            else:
                scan.problems.extend(loaded.problems)
        return scan

    def reset_trial_dir(self, tid: str) -> Path:
        """Remove whatever ``trials/<tid>/`` holds and create it empty (a trial about to be
        run, or redone from scratch). A symbolic link there is removed, never followed.

        Raises:
            UnsafeIdError: ``tid`` is not a valid trial id.
            RunDirError: a folder on the way is a symbolic link.
        """
        tdir = self.trial_dir(tid)
        self._ensure_dir(tdir.parent)
        st = _lstat(tdir)
        if st is not None:
            if stat.S_ISDIR(st.st_mode):
                shutil.rmtree(tdir)
            else:
                os.unlink(tdir)
        self._ensure_dir(tdir)
        return tdir

    def write_trial(self, record: TrialRecord) -> Path:
        """Write ``trials/<record.trial_id>/trial.json`` atomically (as the current schema).

        Raises:
            UnsafeIdError: the record's trial id is not valid.
            RunDirError: a folder on the way is a symbolic link.
        """
        path = self.trial_file(record.trial_id)
        self._write_json(path, record.model_copy(update={"schema_version": SCHEMA_VERSION}))
        return path

    def deliverables(self, tid: str) -> TrialDeliverables:
        """The trial's ``deliverables/`` folder, with a problem when it must not be read (a
        symbolic link or not a folder: the runner never makes one, so the run directory was
        altered)."""
        d = self.deliverables_dir(tid)
        problem = self._unlinked_path(d)
        if problem is None:
            st = _lstat(d)
            if st is not None and stat.S_ISLNK(st.st_mode):
                problem = RunDirProblem(
                    d,
                    "unsafe",
                    "is a symlink (the runner never writes one; the run directory was altered)",
                )
            elif st is not None and not stat.S_ISDIR(st.st_mode):
                problem = RunDirProblem(d, "unsafe", "is not a folder")
        return TrialDeliverables(d, problem)

    # -------------------------------------------------------------- grades

    def judge_keys(self) -> list[str]:
        """Judge keys graded here: the folders of ``grades/`` whose names are safe and do not
        start with ``.`` (symbolic links are not followed), sorted."""
        return [
            n
            for n, _, link in _subdirs(self.grades_dir)
            if not link and not n.startswith(".") and _is_component(n)
        ]

    def graded_at(self, key: str) -> float | None:
        """When ``key`` was last graded here: the modification time (seconds since the epoch)
        of ``grades/<key>.usage.json``, which every grading pass rewrites at its end, else of
        the key's folder; None when neither exists (symbolic links are not followed).

        Raises:
            UnsafeIdError: ``key`` is not a safe path component.
        """
        for path in (self.usage_file(key), self.judge_dir(key)):
            try:
                return path.lstat().st_mtime
            except OSError:
                continue
        return None

    def read_grade(
        self, key: str, tid: str, *, _seen: set[str] | None = None
    ) -> Loaded[GradeRecord]:
        """``grades/<key>/<tid>.json``; a grade whose ``trial_id`` or ``task_id`` is not this
        location's is a ``foreign`` problem (and not returned). ``_seen``: see
        :meth:`_unlinked_path` (for scans).

        Raises:
            UnsafeIdError: ``key`` or ``tid`` is not valid.
        """
        k = parse_trial_id(tid)
        path = self.grade_file(key, tid)
        loaded = self._read(path, GradeRecord, _seen)
        rec = loaded.record
        if rec is None:
            return loaded
        wrong = None
        if rec.trial_id != tid:
            wrong = ("trial_id", f"{rec.trial_id!r} is not the trial id of its path, {tid!r}")
        elif rec.task_id != k.task_id:
            wrong = ("task_id", f"{rec.task_id!r} is not the task of its trial id {tid!r}")
        if wrong:
            return Loaded(
                path,
                None,
                (RunDirProblem(path, "foreign", wrong[1], wrong[0]),),
                loaded.schema_version,
            )
        return loaded

    def grade_listing(self, key: str) -> Listing:
        """The grade files of ``key`` a scan reads (:meth:`grades`): their trial ids, sorted,
        and the problems found on the way (symbolic links, not followed).

        Raises:
            UnsafeIdError: ``key`` is not a safe path component.
        """
        base = self.judge_dir(key)
        found: list[str] = []
        problems: list[RunDirProblem] = []

        def walk(folder: Path | str, parts: list[str]) -> None:
            for name, path, link in _subdirs(folder):
                if not _is_component(name) or (len(parts) == 3 and parse_config(name) is None):
                    continue
                if link:
                    problems.append(
                        RunDirProblem(
                            Path(path),
                            "unsafe",
                            "is a symbolic link (JobBench never writes one; not followed)",
                        )
                    )
                elif len(parts) < 3:
                    walk(path, parts + [name])
                else:
                    try:
                        names = sorted(os.listdir(path))
                    except OSError:
                        continue
                    for n in names:
                        if n.endswith(".json") and epoch_of(n[: -len(".json")]) is not None:
                            found.append("/".join(parts + [name, n[: -len(".json")]]))

        problem = self._unlinked_path(base, itself=True)
        if problem is not None:
            problems.append(problem)
        else:
            walk(base, [])
        return Listing(sorted(found), problems)

    def grades(
        self,
        key: str,
        *,
        transform: Callable[[GradeRecord], GradeRecord] | None = None,
        part: tuple[int, int] = (0, 1),
        listing: Listing | None = None,
    ) -> GradeScan:
        """Every grade file of ``key`` at its own path (see :meth:`read_grade`), found by a
        walk of exactly the layout's depth. ``transform``, when given, is applied to each
        usable grade as soon as it is read (e.g. to keep less of it in memory); the scan
        holds what it returns. ``part`` and ``listing`` (:meth:`grade_listing`): as for
        :meth:`trials`.

        Raises:
            UnsafeIdError: ``key`` is not a safe path component.
        """
        scan = GradeScan()
        listing = listing if listing is not None else self.grade_listing(key)
        if part[0] == 0:
            scan.problems.extend(listing.problems)
        seen: set[str] = set()
        for tid in part_of(listing.ids, part):
            loaded = self.read_grade(key, tid, _seen=seen)
            if loaded.record is not None:
                rec = loaded.record
                scan.records[tid] = transform(rec) if transform is not None else rec
                scan.paths[tid] = loaded.path
                if loaded.sha256 is not None:
                    scan.sha256[tid] = loaded.sha256
            else:
                scan.problems.extend(loaded.problems)
        return scan

    def write_grade(self, key: str, record: GradeRecord) -> Path:
        """Write ``grades/<key>/<record.trial_id>.json`` atomically (as the current schema).

        Raises:
            UnsafeIdError: ``key`` or the record's trial id is not valid.
            RunDirError: a folder on the way is a symbolic link.
        """
        path = self.grade_file(key, record.trial_id)
        self._write_json(path, record.model_copy(update={"schema_version": SCHEMA_VERSION}))
        return path

    def grade_writer(self, key: str) -> GradeWriter:
        """A picklable callable that writes a grade of ``key`` (for grading jobs that run
        elsewhere, e.g. on Dask workers)."""
        check_component(key, "judge key")
        return GradeWriter(self, key)

    def remove_grade(self, key: str, tid: str) -> bool:
        """Delete ``grades/<key>/<tid>.json`` (a link there is removed, never followed).
        Returns whether something was removed."""
        path = self.grade_file(key, tid)
        if self._unlinked_path(path) is not None:
            return False
        st = _lstat(path)
        if st is None or stat.S_ISDIR(st.st_mode):
            return False
        os.unlink(path)
        return True

    def remove_trial_grades(self, tid: str) -> None:
        """Delete the grades of ``tid`` under every judge key (they graded an earlier attempt)."""
        parse_trial_id(tid)
        for key in self.judge_keys():
            self.remove_grade(key, tid)

    def write_usage(self, key: str, summary: dict[str, Any]) -> Path:
        """Write ``grades/<key>.usage.json`` atomically."""
        path = self.usage_file(key)
        self._write_json(path, summary)
        return path

    # -------------------------------------------------------------- probes

    def write_probe(self, name: str, data: dict[str, Any]) -> Path:
        """Write ``.jobbench-probe/<name>`` (``name``: a safe component)."""
        path = self.probe_dir / check_component(name, "probe file name")
        self._ensure_dir(self.probe_dir)
        atomic_write_bytes(path, json.dumps(data).encode())
        return path


@dataclass(frozen=True)
class GradeWriter:
    """Writes grade records of one judge key into a run directory (:meth:`RunDir.write_grade`)."""

    run_dir: RunDir
    key: str

    def __call__(self, record: GradeRecord) -> None:
        self.run_dir.write_grade(self.key, record)


def copy_run_records(src: RunDir, dest: RunDir) -> None:
    """Copy ``lock.json`` and every trial folder (records, trajectories, deliverables) of
    ``src`` into the new run directory ``dest``, without its grades or report, never
    following a symbolic link (a copy to grade again from scratch).

    Raises:
        RunDirError: ``src`` has no ``lock.json`` or ``dest`` already has one.
    """
    lock = src.read_lock().get()
    if dest.lock_file.exists():
        raise RunDirError(
            RunDirProblem(dest.lock_file, "foreign", "exists; copy into a new folder")
        )
    dest.write_lock(lock)
    for tid in src.trial_ids():
        s, d = src.trial_dir(tid), dest.trial_dir(tid)
        dest._ensure_dir(d.parent)
        shutil.copytree(s, d, symlinks=True)
