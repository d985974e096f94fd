"""Leftovers of interrupted runs: sandbox processes still running in the scratch directory
of a dead harness process, and the scratch directories themselves.

A run killed with SIGKILL cannot clean up. Its sandboxes die with it (the lifeline of
``jobbench/sandbox/_lifeline.py`` kills each sandbox's process group when the harness is gone,
and ``bwrap --die-with-parent`` asks the kernel for the same), but a harness can also die
while a scratch directory is being set up, and a sandbox started by an older version had only
the parent-death signal, which has been seen to miss. So every run (and every resume, and
every Dask worker before a trial) first sweeps the scratch root:

1. a scratch directory ``<scratch_root>/jb-*`` is *stale* when its owner process
   (:func:`jobbench.sandbox.scratch_owner`: named in ``jb-<pid>-<random>``, made in one
   step with the directory) no longer exists; a ``jb-<random>`` of an earlier JobBench
   whose ``owner.pid`` is missing or empty (its owner died between creating the directory
   and recording itself) is stale when it holds nothing else and has not changed for
   :data:`EMPTY_OWNER_GRACE` seconds;
2. every process whose command line is a ``bwrap`` invocation naming a stale directory (the
   sandbox binds ``<dir>/workspace``; ``/proc/<pid>/cmdline`` shows it) is killed with
   SIGKILL, with its process group when it leads one; nothing else is ever signalled;
3. the disk quota tmpfs a stale directory may still have mounted is detached
   (``MNT_DETACH`` on the mount point path, nothing inside followed) and the stale
   directories are deleted.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from .._proc import process_exists
from ..sandbox import (
    OWNER_FILE,
    SCRATCH_PREFIX,
    cleanup_stale_scratch,
    default_scratch_root,
    remove_scratch_dir,
    scratch_owner,
)

EMPTY_OWNER_GRACE = 2.0
"""Seconds an ownerless, otherwise empty scratch directory must be left unchanged before it
counts as stale (a live harness fills it within microseconds)."""
SANDBOX_EXECUTABLES = frozenset({"bwrap"})
"""Base names of argv[0] that identify a sandbox process."""


@dataclass
class Sweep:
    """What :func:`sweep_scratch` did.

    Attributes:
        killed: ``(pid, stale directory)`` of every sandbox process killed.
        removed: stale scratch directories deleted.
    """

    killed: list[tuple[int, Path]] = field(default_factory=list)
    removed: int = 0

    def warning(self) -> str | None:
        """A line for the user when sandboxes were killed, else None."""
        if not self.killed:
            return None
        pids = ", ".join(str(p) for p, _ in self.killed[:10])
        return (
            f"killed {len(self.killed)} leftover sandbox process(es) of an interrupted run (pid "
            f"{pids}); "
            "their scratch directories were removed"
        )


def stale_scratch_dirs(scratch_root: Path, *, now: float | None = None) -> list[Path]:
    """Scratch directories of ``scratch_root`` whose owner is gone (see module docstring).

    Returns:
        Absolute paths, sorted; empty when ``scratch_root`` does not exist.
    """
    root = Path(os.path.abspath(scratch_root))
    if not root.is_dir():
        return []
    now = time.time() if now is None else now
    out = []
    for d in sorted(root.glob(f"{SCRATCH_PREFIX}*")):
        if d.is_symlink() or not d.is_dir():
            continue
        pid = scratch_owner(d)
        if pid is not None:
            if not process_exists(pid):
                out.append(d)
            continue
        try:
            text = (d / OWNER_FILE).read_text().strip()
        except OSError:
            text = ""
        if text:
            continue  # an owner.pid that is not a number: not ours to judge
        try:
            entries = [e for e in os.listdir(d) if e != OWNER_FILE]
            age = now - os.lstat(d).st_mtime
        except OSError:
            continue
        if not entries and age >= EMPTY_OWNER_GRACE:
            out.append(d)
    return out


def _cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read()
    except OSError:
        return []
    return [a.decode("utf-8", "surrogateescape") for a in raw.split(b"\0") if a]


def _names(argv: list[str], directory: str) -> bool:
    prefix = directory.rstrip("/") + "/"
    return any(a == directory or a.startswith(prefix) for a in argv[1:])


def sandbox_processes(dirs: list[Path]) -> list[tuple[int, Path]]:
    """Running sandbox processes (argv[0] base name in :data:`SANDBOX_EXECUTABLES`) whose
    command line names one of ``dirs`` or a path below it; zombies are skipped.

    Returns:
        ``[(pid, directory)]`` sorted by pid (empty without ``/proc``).
    """
    if not dirs or not os.path.isdir("/proc"):
        return []
    wanted = [str(Path(os.path.abspath(d))) for d in dirs]
    me = os.getpid()
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        pid = int(entry)
        argv = _cmdline(pid)
        if not argv or os.path.basename(argv[0]) not in SANDBOX_EXECUTABLES:
            continue
        hit = next((d for d in wanted if _names(argv, d)), None)
        if hit is not None and not _is_zombie(pid):
            out.append((pid, Path(hit)))
    return sorted(out)


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return True  # gone
    # the state follows the command name, which is in parentheses and may hold spaces
    return stat[stat.rfind(b")") + 2 :][:1] in (b"Z", b"X")


def _kill(pid: int) -> None:
    try:
        if os.getpgid(pid) == pid:  # it leads its own group (start_new_session): take the group
            os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_orphaned_sandboxes(scratch_root: Path, *, wait: float = 5.0) -> list[tuple[int, Path]]:
    """SIGKILL the sandbox processes of stale scratch directories and wait (at most
    ``wait`` seconds) until they are gone.

    Returns:
        ``[(pid, directory)]`` of the processes signalled.
    """
    found = sandbox_processes(stale_scratch_dirs(scratch_root))
    for pid, _ in found:
        _kill(pid)
    deadline = time.monotonic() + wait
    while found and time.monotonic() < deadline and not all(_is_zombie(pid) for pid, _ in found):
        time.sleep(0.05)
    return found


def sweep_scratch(scratch_root: Path | None = None) -> Sweep:
    """Kill leftover sandboxes of stale scratch directories, then delete those directories
    (see the module docstring).

    Args:
        scratch_root: default :func:`jobbench.sandbox.default_scratch_root`.

    Returns:
        :class:`Sweep`.
    """
    root = Path(os.path.abspath(scratch_root or default_scratch_root()))
    sweep = Sweep(killed=kill_orphaned_sandboxes(root))
    sweep.removed = cleanup_stale_scratch(root)
    for d in stale_scratch_dirs(root):  # the ownerless ones cleanup_stale_scratch leaves alone
        remove_scratch_dir(d)
        sweep.removed += not d.exists()
    return sweep


__all__ = [
    "Sweep",
    "kill_orphaned_sandboxes",
    "sandbox_processes",
    "stale_scratch_dirs",
    "sweep_scratch",
]
