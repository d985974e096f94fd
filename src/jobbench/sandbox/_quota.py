"""Per-trial disk quota on everything a sandbox can write (the workspace with ``output/``,
HOME and the scratch folders bound at ``/tmp``, ``/var/tmp`` and ``/dev/shm``).

All of these live in one harness-created folder, ``<trial scratch>/writable``. Two
mechanisms, recorded in the trial record as ``details.disk_quota.mechanism``:

* ``tmpfs`` (the harness runs as root and ``mount(2)`` is permitted): a size- and
  inode-limited tmpfs (``size=``, ``nr_inodes=``, ``tmpfs(5)``) is mounted on that folder, so a
  write past the quota fails with ``ENOSPC`` inside the sandbox and nothing past it reaches
  the host. The mount is removed with ``umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW)`` on the
  harness's own mount point path, never on anything inside it. A tmpfs holds its files in
  memory (or swap): with ``--max-trials N`` up to N quotas of memory can be in use.
* ``watchdog`` (not root, or the mount was refused): the folder is an ordinary directory; a
  monitor thread adds up the allocated size of the tree every :data:`POLL_SECONDS` seconds
  (``lstat``, symlinks never followed) and stops the trial once it exceeds the quota, so
  the host may briefly hold up to one poll interval's writes beyond it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_DISK_QUOTA_MB = 2048
"""Default per-trial quota, MiB."""
POLL_SECONDS = 0.25
"""Interval of the usage monitor."""
FULL_MARGIN = 64 * 1024
"""A tmpfs with fewer free bytes than this (or no free inode) counts as full."""
WRITABLE = "writable"
"""Name of the quota folder inside a trial's scratch directory."""

_MNT_DETACH = 2
_UMOUNT_NOFOLLOW = 8
_MS_NOSUID = 2
_MS_NODEV = 4

_libc = None


def _c():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    return _libc


def mount_tmpfs(target: Path, size_bytes: int, inodes: int) -> None:
    """Mount a tmpfs of ``size_bytes`` bytes and ``inodes`` inodes (mode 0755) on ``target``.

    Raises:
        OSError: ``mount(2)`` failed (``EPERM`` when not privileged).
    """
    opts = f"size={int(size_bytes)},nr_inodes={int(inodes)},mode=0755".encode()
    rc = _c().mount(b"tmpfs", os.fsencode(target), b"tmpfs", _MS_NOSUID | _MS_NODEV, opts)
    if rc != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), str(target))


def unmount(target: Path) -> bool:
    """Detach the mount on ``target`` (``MNT_DETACH | UMOUNT_NOFOLLOW``: a symbolic link at
    the last component is not followed).

    Returns:
        True when a mount was removed, False when ``target`` was not a mount point.

    Raises:
        OSError: any other failure (e.g. ``EPERM``).
    """
    rc = _c().umount2(os.fsencode(target), _MNT_DETACH | _UMOUNT_NOFOLLOW)
    if rc == 0:
        return True
    e = ctypes.get_errno()
    if e in (errno.EINVAL, errno.ENOENT):
        return False
    raise OSError(e, os.strerror(e), str(target))


def _unescape(field_: str) -> str:
    """A path of ``/proc/self/mountinfo`` (space, tab, newline, backslash as ``\\ooo``)."""
    out, i = [], 0
    while i < len(field_):
        if field_[i] == "\\" and i + 3 < len(field_) and field_[i + 1 : i + 4].isdigit():
            out.append(chr(int(field_[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field_[i])
            i += 1
    return "".join(out)


def mounts_under(directory: Path) -> list[Path]:
    """Mount points at or below ``directory`` (from ``/proc/self/mountinfo``), deepest first;
    empty when that file cannot be read."""
    root = os.path.abspath(directory)
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    found = set()
    for line in lines:
        parts = line.split(" ")
        if len(parts) > 4:
            mp = _unescape(parts[4])
            if mp == root or mp.startswith(root.rstrip("/") + "/"):
                found.add(mp)
    return [Path(p) for p in sorted(found, key=lambda p: (-p.count("/"), p))]


def unmount_under(directory: Path) -> int:
    """Detach every mount at or below ``directory`` (deepest first; failures ignored).

    Returns:
        How many were removed.
    """
    n = 0
    for mp in mounts_under(directory):
        try:
            n += unmount(mp)
        except OSError:
            continue
    return n


def tree_usage(root: Path, stop_after: int | None = None) -> tuple[int, int]:
    """Allocated bytes (``st_blocks`` × 512) and entries of the tree at ``root``, walked
    with ``lstat`` (symbolic links are counted, never followed; a file's hard links are
    counted once).

    Args:
        stop_after: stop adding once the byte total exceeds this (the answer is then a
            lower bound above it).

    Returns:
        ``(bytes, entries)``; entries that vanish during the walk are skipped.
    """
    total, entries = 0, 0
    seen: set[tuple[int, int]] = set()
    stack = [os.fspath(root)]
    while stack:
        d = stack.pop()
        try:
            it = os.scandir(d)
        except OSError:
            continue
        with it:
            for e in it:
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                entries += 1
                if st.st_nlink > 1 and not stat.S_ISDIR(st.st_mode):
                    if (st.st_dev, st.st_ino) in seen:
                        continue
                    seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
                if stat.S_ISDIR(st.st_mode):
                    stack.append(e.path)
                if stop_after is not None and total > stop_after:
                    return total, entries
    return total, entries


@dataclass
class DiskQuota:
    """The quota of one trial's writable folder.

    Attributes:
        path: the folder (``<trial scratch>/writable``).
        limit_bytes: what the agent may write, bytes (the tmpfs is larger by ``base_bytes``).
        base_bytes: bytes the harness put there before the agent started (the task folder copy).
        inodes: inode limit of the tmpfs (files and folders).
        mechanism: ``tmpfs`` or ``watchdog``.
        mount_error: why the tmpfs could not be mounted (``watchdog`` only).
        peak_bytes: largest usage seen by :meth:`check`, bytes (base included).
        reached: the quota was seen full (tmpfs) or exceeded (watchdog).
    """

    path: Path
    limit_bytes: int
    base_bytes: int = 0
    inodes: int = 0
    mechanism: str = "watchdog"
    mount_error: str | None = None
    peak_bytes: int = 0
    reached: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def create(cls, path: Path, limit_bytes: int, *, base_bytes: int = 0, base_files: int = 0):
        """Make ``path`` (must not exist) and, as root, mount the tmpfs on it.

        Args:
            limit_bytes: quota, bytes (> 0).
            base_bytes, base_files: the size and entry count the harness will copy in (the
                tmpfs is made that much larger, so the agent can write ``limit_bytes``).

        Raises:
            ValueError: ``limit_bytes`` is not positive.
            OSError: the folder cannot be created.
        """
        if limit_bytes <= 0:
            raise ValueError(f"disk quota must be greater than 0, got {limit_bytes} bytes")
        page = os.sysconf("SC_PAGE_SIZE")
        base = -(-base_bytes // page) * page + base_files * page
        inodes = max(4096, limit_bytes // 16384) + base_files + 64
        q = cls(path=path, limit_bytes=limit_bytes, base_bytes=base, inodes=inodes)
        path.mkdir(mode=0o755)
        if os.geteuid() == 0:
            try:
                mount_tmpfs(path, limit_bytes + base, inodes)
                q.mechanism = "tmpfs"
            except OSError as exc:
                q.mount_error = f"mount: {exc.strerror}"
        else:
            q.mount_error = "not root"
        os.chmod(path, 0o755)
        return q

    def usage(self) -> tuple[int, bool]:
        """``(bytes in use, full)``: from ``statvfs`` on the tmpfs, else by walking the tree
        (the walk stops once over the quota)."""
        if self.mechanism == "tmpfs":
            sv = os.statvfs(self.path)
            used = (sv.f_blocks - sv.f_bfree) * sv.f_frsize
            full = sv.f_bavail * sv.f_frsize < FULL_MARGIN or sv.f_favail == 0
            return used, full
        cap = self.limit_bytes + self.base_bytes
        used, entries = tree_usage(self.path, stop_after=cap)
        return used, used > cap or entries > self.inodes

    def check(self) -> bool:
        """Measure once; update :attr:`peak_bytes` and :attr:`reached`.

        Returns:
            True when the quota is reached.
        """
        try:
            used, full = self.usage()
        except OSError:
            return self.reached
        with self._lock:
            self.peak_bytes = max(self.peak_bytes, used)
            self.reached = self.reached or full
            return self.reached

    def release(self) -> None:
        """Detach the tmpfs (its files are gone afterwards); nothing for ``watchdog``."""
        if self.mechanism == "tmpfs":
            try:
                unmount(self.path)
            except OSError:
                pass

    def record(self) -> dict:
        """The ``details.disk_quota`` entry of the trial record."""
        out = {
            "limit_mb": round(self.limit_bytes / 2**20, 3),
            "mechanism": self.mechanism,
            "peak_mb": round(max(self.peak_bytes - self.base_bytes, 0) / 2**20, 3),
            "reached": self.reached,
        }
        if self.mount_error:
            out["mount_error"] = self.mount_error
        return out

    def note(self) -> str:
        """``disk quota reached (N MiB)``."""
        return f"disk quota reached ({self.limit_bytes / 2**20:g} MiB)"


class QuotaMonitor:
    """A thread that calls :meth:`DiskQuota.check` every :data:`POLL_SECONDS`; with the
    ``watchdog`` mechanism it sets ``stop`` once the quota is exceeded (which stops the
    trial's sandboxed commands). ``also`` (the run's cancel event) is passed on to ``stop``
    when set. :meth:`start`, then :meth:`finish` (idempotent; a last check runs)."""

    def __init__(
        self, quota: DiskQuota, stop: threading.Event, also: threading.Event | None = None
    ) -> None:
        self.quota = quota
        self.stop = stop
        self.also = also
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="disk-quota")

    def _loop(self) -> None:
        while not self._done.wait(POLL_SECONDS):
            if self.also is not None and self.also.is_set():
                self.stop.set()
            if self.quota.check() and self.quota.mechanism == "watchdog":
                self.stop.set()

    def start(self) -> None:
        self._thread.start()

    def finish(self) -> None:
        if self._done.is_set():
            return
        self._done.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)
        self.quota.check()
