"""Per-trial workspaces (a fresh copy of ``task_folder/`` plus an empty ``output/``) and the
collection of deliverables from ``output/`` into the run directory.

Layout of a trial's scratch directory (outside the dataset and the run directory)::

    <scratch_root>/jb-<pid>-<random>/   <pid>: the harness process that made it
        writable/             everything the sandbox can write; the disk quota's folder
                              (a size-limited tmpfs when root, see jobbench.sandbox._quota)
            workspace/        bound at /workspace in the sandbox
                task_folder/  a copy of the task's task_folder/ (TASK_INSTRUCTIONS.txt, ...)
                output/       empty; whatever is here at the end is the deliverable set
            home/             HOME of the agent (bound at /home/agent)
            tmp/, var-tmp/, shm/   bound at /tmp, /var/tmp and /dev/shm
        private/              harness-only files (e.g. the oracle's copy of solution/)

This mirrors the public JobBench runners, which copy ``task_folder`` into a temporary
directory next to an ``output`` directory (Job-Bench/job-bench-eval, eval/run_benchmark_*.sh).
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .._proc import name_owner, owned_prefix, process_exists
from ..deliverable_policy import excluded, excluded_dir
from ..records import DeliverableFile
from . import safefs
from ._quota import WRITABLE, DiskQuota, tree_usage, unmount_under

TASK_FOLDER = "task_folder"
OUTPUT = "output"
SCRATCH_PREFIX = "jb-"
OWNER_FILE = "owner.pid"
"""In a scratch directory named ``jb-<random>`` (made by JobBench before the owner's process
id was part of the name): the owner's process id."""
TMP_DIRS = {"/tmp": "tmp", "/var/tmp": "var-tmp", "/dev/shm": "shm"}
"""Scratch folders of the sandbox (path inside → folder name in ``writable/``)."""


@dataclass
class TrialWorkspace:
    """Host paths of one trial's scratch area.

    Attributes:
        root: the scratch directory (delete it with :meth:`cleanup`).
        workspace: bound writable at ``/workspace``.
        task_folder: ``workspace/task_folder`` (copy of the task's files).
        output: ``workspace/output`` (deliverables).
        home: the agent's HOME.
        private: harness-only files, never bound unless an agent asks for it.
        tmp_dirs: host folders bound at ``/tmp``, ``/var/tmp`` and ``/dev/shm``.
        quota: the disk quota of ``writable/`` (None without one).
    """

    root: Path
    workspace: Path
    task_folder: Path
    output: Path
    home: Path
    private: Path
    tmp_dirs: dict[str, Path] = field(default_factory=dict)
    quota: DiskQuota | None = None

    def cleanup(self) -> None:
        """Detach the quota's tmpfs (and any other mount below the scratch directory, by the
        harness's own mount point paths), then delete the scratch directory (ignores
        errors)."""
        remove_scratch_dir(self.root)


def remove_scratch_dir(root: Path) -> None:
    """Detach every mount at or below ``root`` (:func:`jobbench.sandbox._quota.unmount_under`,
    ``MNT_DETACH``, no symbolic link followed), then delete ``root`` (errors ignored)."""
    unmount_under(root)
    shutil.rmtree(root, ignore_errors=True)


def default_scratch_root() -> Path:
    """``$JOBBENCH_SCRATCH`` or ``<system temp>/jobbench-scratch``."""
    env = os.environ.get("JOBBENCH_SCRATCH")
    return Path(env) if env else Path(tempfile.gettempdir()) / "jobbench-scratch"


def prepare_workspace(
    task_folder: Path,
    scratch_root: Path | None = None,
    *,
    forbidden: list[Path] | None = None,
    disk_quota_bytes: int | None = None,
) -> TrialWorkspace:
    """Create a fresh trial workspace holding a copy of ``task_folder`` and an empty
    ``output/``.

    Args:
        task_folder: the task's ``task_folder`` directory (read only).
        scratch_root: where scratch directories are made (default
            :func:`default_scratch_root`).
        forbidden: directories the scratch area must not be inside (the dataset root and
            the run directory).
        disk_quota_bytes: quota on ``writable/`` beyond the task folder copy, bytes
            (:class:`jobbench.sandbox._quota.DiskQuota`); None for none.

    Returns:
        The :class:`TrialWorkspace`.

    Raises:
        ValueError: the scratch root lies inside a forbidden directory.
        OSError: the copy failed (disk full, permissions).
    """
    scratch_root = Path(os.path.abspath(scratch_root or default_scratch_root()))
    for f in forbidden or []:
        f = Path(os.path.abspath(f))
        if scratch_root.is_relative_to(f):
            raise ValueError(
                f"scratch directory {scratch_root} is inside {f}; choose another (JOBBENCH_SCRATCH)"
            )
    scratch_root.mkdir(parents=True, exist_ok=True)
    # the owner is in the name, so that no moment exists when the directory has no owner
    root = Path(tempfile.mkdtemp(prefix=owned_prefix(SCRATCH_PREFIX), dir=scratch_root))
    os.chmod(root, 0o755)
    try:
        return _fill(root, task_folder, disk_quota_bytes)
    except BaseException:
        remove_scratch_dir(root)
        raise


def _fill(root: Path, task_folder: Path, disk_quota_bytes: int | None) -> TrialWorkspace:
    """The folders of a new scratch directory ``root`` (see :func:`prepare_workspace`)."""
    quota = None
    if disk_quota_bytes is not None:
        base, files = tree_usage(task_folder)
        quota = DiskQuota.create(
            root / WRITABLE, disk_quota_bytes, base_bytes=base, base_files=files
        )
    else:
        (root / WRITABLE).mkdir(mode=0o755)
    ws = root / WRITABLE / "workspace"
    ws.mkdir()
    # copy regular files only; the task loader already refuses symlinks in task_folder
    shutil.copytree(task_folder, ws / TASK_FOLDER, symlinks=True, ignore=_ignore_non_regular)
    (ws / OUTPUT).mkdir()
    home = root / WRITABLE / "home"
    home.mkdir()
    tmp_dirs = {inside: root / WRITABLE / name for inside, name in TMP_DIRS.items()}
    for d in tmp_dirs.values():
        d.mkdir()
        os.chmod(d, 0o1777)
    private = root / "private"
    private.mkdir(mode=0o700)
    for d in (ws, home):
        os.chmod(d, 0o755)
    return TrialWorkspace(
        root=root,
        workspace=ws,
        task_folder=ws / TASK_FOLDER,
        output=ws / OUTPUT,
        home=home,
        private=private,
        tmp_dirs=tmp_dirs,
        quota=quota,
    )


def reset_workspace(ws: TrialWorkspace, task_folder: Path) -> None:
    """Give a trial's workspace a fresh copy of ``task_folder`` and an empty ``output/``
    for another attempt (the published OpenCode runner's retry after a timeout), leaving
    HOME and everything else as it is. Call it only once the agent's processes are gone;
    a ``task_folder`` or ``output`` the agent replaced by a symbolic link or a file is
    unlinked, never followed.

    Raises:
        OSError: the old copy cannot be removed or the new one made.
    """
    for p in (ws.task_folder, ws.output):
        if p.is_symlink() or (p.exists() and not p.is_dir()):
            p.unlink()
        elif p.exists():
            shutil.rmtree(p)
    shutil.copytree(task_folder, ws.task_folder, symlinks=True, ignore=_ignore_non_regular)
    ws.output.mkdir()
    os.chmod(ws.task_folder, 0o755)
    os.chmod(ws.output, 0o755)


def scratch_owner(directory: Path) -> int | None:
    """The process id of the harness that made the scratch directory ``directory``: from its
    name ``jb-<pid>-<random>`` (:func:`jobbench._proc.name_owner`); for a ``jb-<random>`` of
    an earlier JobBench, from its :data:`OWNER_FILE`. None when neither gives one (the file
    missing, empty or not a process id)."""
    pid = name_owner(directory.name, SCRATCH_PREFIX)
    if pid is not None:
        return pid
    try:
        text = (directory / OWNER_FILE).read_text().strip()
    except OSError:
        return None
    return int(text) if text.isascii() and text.isdigit() and 0 < len(text) <= 10 else None


def cleanup_stale_scratch(scratch_root: Path | None = None) -> int:
    """Delete scratch directories whose owner (:func:`scratch_owner`) no longer exists (e.g.
    a run killed with SIGKILL), first detaching the disk quota tmpfs such a run left mounted
    (:func:`remove_scratch_dir`).

    Returns:
        How many were deleted.
    """
    scratch_root = Path(scratch_root or default_scratch_root())
    if not scratch_root.is_dir():
        return 0
    n = 0
    for d in scratch_root.glob(f"{SCRATCH_PREFIX}*"):
        pid = scratch_owner(d)
        if pid is None or process_exists(pid):
            continue
        remove_scratch_dir(d)
        n += 1
    return n


def _ignore_non_regular(directory: str, names: list[str]) -> list[str]:
    out = []
    for n in names:
        st = os.lstat(os.path.join(directory, n))
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            out.append(n)
    return out


@dataclass(frozen=True)
class DeliverableLimits:
    """Caps on what is collected from ``output/``.

    Attributes:
        max_file_bytes: larger files are refused (default 100 MiB).
        max_total_bytes: files past this running total are refused (default 500 MiB).
        max_files: files past this count are refused (default 1000).
    """

    max_file_bytes: int = 100 * 1024 * 1024
    max_total_bytes: int = 500 * 1024 * 1024
    max_files: int = 1000


@dataclass
class Collected:
    """Result of :func:`collect_deliverables`.

    Attributes:
        files: copied files with size and sha256, sorted by path.
        refused: ``"<path>: <reason>"`` for every entry not copied.
        ignored: ``"<path>: <reason>"`` for every file that is not a deliverable (dotfiles,
            OS and editor junk; :func:`jobbench.deliverable_policy.excluded`), not copied.
    """

    files: list[DeliverableFile] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)


def _valid_name(rel: str) -> bool:
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return not any(ord(c) < 32 for c in rel)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "named pipe"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "special file"


_INFRA_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS})
"""Errors writing into the run directory that are the host's problem, not the file's: they
fail the collection (an ``infra_error`` trial, retried) instead of refusing one file."""

PATH_MAX = 4096
"""Longest path (bytes, with the terminating NUL) the kernel accepts in one call
(``PATH_MAX`` of ``<linux/limits.h>``)."""


def collect_deliverables(
    output: Path, dest: Path, limits: DeliverableLimits | None = None
) -> Collected:
    """Copy the regular files under ``output`` into ``dest`` with a sha256 manifest.

    Nothing is followed: the tree is walked from a descriptor of ``output`` one component
    at a time with ``O_NOFOLLOW`` (:func:`jobbench.sandbox.safefs.walk_fd`), and each file
    is opened the same way, so a symbolic link (to a file or a directory, at any depth,
    swapped in at any time) is refused, never read. Symlinks, named pipes, sockets, devices,
    files with unprintable or non-UTF-8 names and files over the limits are not copied and
    are reported in ``refused``. Files that are not deliverables under
    :mod:`jobbench.deliverable_policy` (dotfiles, OS and editor junk) are not copied either
    and are reported in ``ignored``.

    Caps apply in a fixed order: files nearer the top of ``output`` first (by the number of
    ``/`` in the path), then by path; so the same tree always yields the same collection.
    A file that cannot be stored in the run directory (its path would exceed
    :data:`PATH_MAX`, or writing it fails for a reason of its own) is refused with that
    reason and the rest is collected; only a failure of the run directory itself (disk
    full, read-only, I/O error) raises. Call it only once the agent's processes are gone.

    Args:
        output: the trial's ``output/`` directory (untrusted content).
        dest: the run directory's ``deliverables/`` (created).
        limits: size and count caps.

    Returns:
        :class:`Collected`.

    Raises:
        OSError: the run directory cannot be written (``ENOSPC``, ``EDQUOT``, ``EIO``,
            ``EROFS``).
    """
    limits = limits or DeliverableLimits()
    out = Collected()
    dest.mkdir(parents=True, exist_ok=True)
    try:
        ofd = safefs.open_root(output)
    except FileNotFoundError:
        return out
    except OSError:
        out.refused.append("output: not a directory")
        return out
    try:
        entries = _list_output(ofd, out)
        caps = CapTally(limits)
        for rel, size in sorted(entries, key=lambda e: cap_order(e[0])):
            why = caps.refusal(rel, size)
            if why is not None:
                out.refused.append(why)
                continue
            got = _copy_one(ofd, rel, dest, limits, out)
            if got is not None:
                caps.take(got.size)
                out.files.append(got)
    finally:
        os.close(ofd)
    out.files.sort(key=lambda f: f.path)
    out.ignored.sort()
    return out


def cap_order(rel: str) -> tuple[int, str]:
    """The order in which files meet the deliverable caps: top-level files first, then
    deeper ones, each level by path (so the same folder always keeps the same files)."""
    return rel.count("/"), rel


class CapTally:
    """The caps of :class:`DeliverableLimits` over files taken in :func:`cap_order`: per
    file, file count and total bytes. :meth:`refusal` says why a file is refused (a line
    for ``Collected.refused``) or None; :meth:`take` counts a file kept."""

    def __init__(self, limits: DeliverableLimits) -> None:
        self.limits = limits
        self.total = 0
        self.count = 0

    def refusal(self, rel: str, size: int) -> str | None:
        lim = self.limits
        if size > lim.max_file_bytes:
            return f"{rel}: {size} bytes exceeds the per-file limit of {lim.max_file_bytes}"
        if self.count + 1 > lim.max_files:
            return f"{rel}: more than {lim.max_files} files"
        if self.total + size > lim.max_total_bytes:
            return f"{rel}: total size would exceed {lim.max_total_bytes} bytes"
        return None

    def take(self, size: int) -> None:
        self.total += size
        self.count += 1


def _list_output(ofd: int, out: Collected) -> list[tuple[str, int]]:
    """``(rel, size)`` of the candidate regular files under ``ofd``; refusals and ignored
    entries go to ``out``."""
    entries: list[tuple[str, int]] = []

    def prune(rel: str, name: str) -> bool:
        return not _valid_name(rel) or excluded_dir(name)

    for rel, st, problem, dfd, name in safefs.walk_fd(ofd, prune=prune):
        if st is None or problem is not None:
            out.refused.append(f"{rel}: {problem}")
            continue
        if not _valid_name(rel):
            out.refused.append(f"{rel!r}: file name is not printable UTF-8")
            continue
        if stat.S_ISDIR(st.st_mode):
            if excluded_dir(name):  # deliverable policy: nothing inside is a deliverable
                out.ignored.append(f"{rel}/: {excluded(rel + '/x')}")
            continue
        # what counts as a deliverable: the policy the judge applies too
        if (why := excluded(rel)) is not None:
            out.ignored.append(f"{rel}: {why}")
            continue
        if stat.S_ISLNK(st.st_mode):
            try:
                target = os.readlink(name, dir_fd=dfd)
            except OSError:
                target = "?"
            out.refused.append(f"{rel}: symlink refused (points to {target})")
            continue
        if not stat.S_ISREG(st.st_mode):
            out.refused.append(f"{rel}: {_kind(st.st_mode)} refused")
            continue
        entries.append((rel, st.st_size))
    return entries


def _copy_one(
    ofd: int, rel: str, dest: Path, limits: DeliverableLimits, out: Collected
) -> DeliverableFile | None:
    """Copy one file of the output tree into ``dest``; None (and a refusal) if not."""
    target = dest / rel
    if len(os.fsencode(target)) >= PATH_MAX:
        out.refused.append(
            f"{rel}: path too long for the run directory "
            f"({len(os.fsencode(target))} bytes, limit {PATH_MAX - 1})"
        )
        return None
    try:
        fd = safefs.open_file(ofd, rel)
    except OSError as exc:
        why = str(exc) if isinstance(exc, safefs.UnsafePath) else exc.strerror
        out.refused.append(f"{rel}: cannot be read ({why})")
        return None
    h = hashlib.sha256()
    size = 0
    try:
        with os.fdopen(fd, "rb") as src:
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "wb") as dst:
                while block := src.read(1 << 20):
                    size += len(block)
                    if size > limits.max_file_bytes:
                        break
                    h.update(block)
                    dst.write(block)
    except OSError as exc:
        _unlink_quietly(target)
        if exc.errno in _INFRA_ERRNOS:
            raise
        out.refused.append(f"{rel}: cannot be stored in the run directory ({exc.strerror})")
        return None
    if size > limits.max_file_bytes:
        _unlink_quietly(target)
        out.refused.append(f"{rel}: grew past the per-file limit of {limits.max_file_bytes} bytes")
        return None
    os.chmod(target, 0o644)
    return DeliverableFile(path=rel, size=size, sha256=h.hexdigest())


def _unlink_quietly(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def merge_rescued(
    final: Collected,
    dest: Path,
    rescued: Collected,
    rescued_dir: Path,
    limits: DeliverableLimits | None = None,
) -> Collected:
    """Add to ``final`` (files already copied into ``dest``) the files of an earlier,
    timed-out attempt (``rescued``, copied into ``rescued_dir`` by
    :func:`collect_deliverables`) whose path the final attempt did not write: the final
    attempt's files win, as in the published OpenCode runner, which copies the rescued
    output first and moves the retry's output over it. Both directories are harness-owned
    copies; nothing agent-controlled is read. The caps of ``limits`` apply to the union.

    Returns:
        The merged :class:`Collected`: files sorted by path; ``refused`` holds the final
        attempt's refusals, then rescued files left out (clash, limits) and the earlier
        attempt's own refusals, and ``ignored`` both attempts' ignored files, those of the
        earlier attempt marked as coming from the timed-out attempt.
    """
    limits = limits or DeliverableLimits()
    have = {f.path for f in final.files}
    prefixes = {p.rsplit("/", i)[0] for p in have for i in range(1, p.count("/") + 1)}
    files = list(final.files)
    refused = list(final.refused)
    total = sum(f.size for f in files)
    for f in rescued.files:
        if f.path in have:
            continue
        parts = f.path.split("/")
        if f.path in prefixes or any("/".join(parts[:i]) in have for i in range(1, len(parts))):
            refused.append(
                f"{f.path}: from the timed-out attempt, clashes with a file or folder "
                "of the final attempt"
            )
            continue
        if len(files) + 1 > limits.max_files or total + f.size > limits.max_total_bytes:
            refused.append(f"{f.path}: from the timed-out attempt, over the collection limits")
            continue
        target = dest / f.path
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(rescued_dir / f.path, target)
        except OSError as exc:
            _unlink_quietly(target)
            if exc.errno in _INFRA_ERRNOS:
                raise
            refused.append(
                f"{f.path}: from the timed-out attempt, cannot be stored in the run "
                f"directory ({exc.strerror})"
            )
            continue
        os.chmod(target, 0o644)
        files.append(f)
        total += f.size
    refused += [f"{r} (in the timed-out attempt)" for r in rescued.refused]
    ignored = list(final.ignored) + [f"{r} (in the timed-out attempt)" for r in rescued.ignored]
    return Collected(files=sorted(files, key=lambda x: x.path), refused=refused, ignored=ignored)
