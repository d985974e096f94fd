"""Run one command in an isolated sandbox (bubblewrap) with limits and a wall-clock timeout.

Isolation with bubblewrap (``bwrap``, https://github.com/containers/bubblewrap, flags as
documented in ``bwrap(1)`` of bubblewrap 0.8):

* new PID, IPC, UTS, cgroup and (unless the agent needs its model API) network namespaces;
  a fresh ``/proc`` for the new PID namespace, a minimal ``/dev``;
* read-only binds of the system directories (``/usr`` and a short list of ``/etc`` files),
  of the Python installation running the harness, and of whatever an agent adds (its CLI
  install); a private tmpfs ``/tmp``; the trial's workspace bound writable at
  ``/workspace``; nothing else of the host file system (no dataset, no run directory, no
  other trial);
* when the harness runs as root, the command runs as an unprivileged user id
  (``setpriv``) with every capability dropped, so resource limits on processes apply and
  nothing owned by root is writable; otherwise a user namespace with all capabilities
  dropped;
* resource limits (address space, processes, file size, open files) set by ``prlimit``
  inside the sandbox; ``--die-with-parent`` and a process group killed on timeout;
* every command (either backend) runs under the lifeline watchdog of :mod:`._lifeline`, which
  kills it when the harness dies; the watchdog is started ahead of the command
  (:mod:`._warm`), and the harness waits for it on a pidfd, so a short command pays neither
  an interpreter start nor polling sleeps.

Without bubblewrap (or with ``backend="none"``) the command runs as a plain subprocess with
the same limits and timeout but **no isolation**; a loud warning says so.
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import re
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ._warm import POOL as WARM_POOL
from .safefs import lchown_tree

Backend = Literal["auto", "bwrap", "none"]
# what :func:`resolve_backend` picks: a backend trials actually run under
ResolvedBackend = Literal["bwrap", "none"]

WORKSPACE_MOUNT = "/workspace"
HOME_MOUNT = "/home/agent"

# /etc entries an ordinary program needs (name resolution, TLS roots, time zone, dynamic
# linker, fonts); secrets such as /etc/shadow are never bound.
ETC_ENTRIES = (
    "hosts",
    "resolv.conf",
    "nsswitch.conf",
    "host.conf",
    "gai.conf",
    "ssl",
    "ca-certificates",
    "ca-certificates.conf",
    "pki",
    "crypto-policies",
    "localtime",
    "timezone",
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "fonts",
    "mime.types",
    "magic",
    "papersize",
    "java-17-openjdk",
    "libreoffice",
    "ImageMagick-6",
    "matplotlibrc",
)
SYSTEM_DIRS = ("/usr",)


class SandboxError(RuntimeError):
    """The sandbox itself could not be set up (an infrastructure failure, never the
    agent's fault)."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed command.

    Attributes:
        timeout: wall-clock seconds before the whole process group is killed.
        memory_mb: address-space limit (RLIMIT_AS) in MiB, or None for none. Programs that
            reserve large virtual ranges (Node.js, the JVM) need None or a large value.
        max_processes: RLIMIT_NPROC (processes of the sandbox user); only enforceable when
            the sandbox user is not root, which the bubblewrap backend arranges.
        max_file_mb: largest file the command may write (RLIMIT_FSIZE), MiB.
        max_open_files: RLIMIT_NOFILE.
    """

    timeout: float = 3600.0
    memory_mb: int | None = 4096
    max_processes: int | None = 512
    max_file_mb: int | None = 1024
    max_open_files: int = 1024


@dataclass(frozen=True)
class Mount:
    """An extra bind mount: host ``source`` appears at ``dest`` inside the sandbox."""

    source: Path
    dest: str
    writable: bool = False


@dataclass
class SandboxResult:
    """What happened to one sandboxed command.

    Attributes:
        exit_code: the command's exit status (negative: killed by that signal).
        timed_out: True when the wall-clock limit killed it.
        stdout, stderr: captured output as text (capped; see ``stdout_truncated``).
        wall_seconds: elapsed seconds.
        backend: ``bwrap`` or ``none``.
    """

    exit_code: int
    timed_out: bool
    stdout: str
    stderr: str
    wall_seconds: float
    backend: str
    stdout_truncated: bool = False
    stderr_truncated: bool = False


_probe_lock = threading.Lock()
_probe_result: tuple[bool, str] | None = None
_bwrap_version: tuple[int, ...] = (0, 0)
_warned_fallback = False


def bwrap_available() -> tuple[bool, str]:
    """Whether bubblewrap is installed and can create namespaces here.

    Returns:
        ``(True, path)`` or ``(False, reason)``. The probe runs once per process.
    """
    global _probe_result
    with _probe_lock:
        if _probe_result is not None:
            return _probe_result
        exe = shutil.which("bwrap")
        if exe is None:
            _probe_result = (False, "bwrap is not installed (apt-get install bubblewrap)")
            return _probe_result
        global _bwrap_version
        try:
            out = subprocess.run(
                [exe, "--version"], capture_output=True, text=True, timeout=30
            ).stdout
            _bwrap_version = tuple(int(x) for x in re.findall(r"(\d+)\.(\d+)", out)[0])
        except (OSError, subprocess.TimeoutExpired, IndexError, ValueError):
            _bwrap_version = (0, 0)
        if _bwrap_version < (0, 5):
            _probe_result = (
                False,
                f"bwrap {'.'.join(map(str, _bwrap_version))} is too old (0.5 or newer needed)",
            )
            return _probe_result
        argv = [
            exe,
            "--unshare-pid",
            "--unshare-net",
            "--die-with-parent",
            "--ro-bind",
            "/",
            "/",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--",
            "sh",
            "-c",
            "exit 0",
        ]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            _probe_result = (False, f"bwrap failed to start: {exc}")
            return _probe_result
        if proc.returncode != 0:
            _probe_result = (
                False,
                f"bwrap cannot create namespaces here: {proc.stderr.strip()[:300]}",
            )
        else:
            _probe_result = (True, exe)
        return _probe_result


def resolve_backend(backend: Backend = "auto") -> ResolvedBackend:
    """Pick the sandbox backend.

    ``auto`` (or the ``JOBBENCH_SANDBOX`` environment variable when set) uses bubblewrap when
    it works and otherwise falls back to ``none`` with a loud warning; ``bwrap`` raises
    :class:`SandboxError` when bubblewrap does not work, and so does an unknown
    ``JOBBENCH_SANDBOX`` value (the message names the variable).
    """
    global _warned_fallback
    if backend == "auto":
        backend = os.environ.get("JOBBENCH_SANDBOX", "auto") or "auto"  # type: ignore[assignment]
        if backend not in ("auto", "bwrap", "none"):
            raise SandboxError(
                f"environment variable JOBBENCH_SANDBOX={backend!r}: expected auto, bwrap or none"
            )
    if backend == "none":
        return "none"
    ok, info = bwrap_available()
    if ok:
        return "bwrap"
    if backend == "bwrap":
        raise SandboxError(info)
    if not _warned_fallback:
        _warned_fallback = True
        msg = (
            "\n" + "!" * 78 + "\n"
            f"JobBench: NO SANDBOX. {info}.\n"
            "Agents will run as plain subprocesses that can read the dataset (rubrics,\n"
            "solutions), other trials and your files. Install bubblewrap for real runs.\n"
            + "!"
            * 78
        )
        print(msg, file=sys.stderr)
        warnings.warn("JobBench sandbox disabled: " + info, RuntimeWarning, stacklevel=2)
    return "none"


class _UidPool:
    """Unprivileged user ids handed to concurrent sandboxes (one per running sandbox), so
    RLIMIT_NPROC counts each trial's processes separately.

    An id is exclusive across processes, not only threads: two ``jobbench run`` (or two
    pytest-xdist workers) on one host would otherwise hand out the same ids, and one run's
    sandbox processes would count against the other's process limit. Each acquired id holds
    an exclusive ``flock`` on ``<LOCK_DIR>/<uid>.lock``, released with the id or by the kernel
    when its process dies. ``LOCK_DIR`` is created root-only (mode 0700); if it exists but is
    not a directory owned by the harness user with that mode, the ids fall back to being
    exclusive within this process only (with a warning).
    """

    BASE = 160_000
    LOCK_DIR = (
        Path("/run/lock/jobbench-uids")
        if Path("/run/lock").is_dir()
        else Path(tempfile.gettempdir()) / "jobbench-uids"
    )

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._used: dict[int, int] = {}  # uid -> lock file descriptor (-1: not locked)

    def _lock_dir(self) -> Path | None:
        d = self.LOCK_DIR
        try:
            d.mkdir(mode=0o700, exist_ok=True)
            st = os.lstat(d)
        except OSError:
            return None
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
            warnings.warn(
                f"{d} is not a private directory of this user; sandbox user ids are "
                "exclusive within this process only",
                RuntimeWarning,
                stacklevel=3,
            )
            return None
        return d

    def _try_lock(self, d: Path | None, uid: int) -> int | None:
        """An exclusive lock on ``uid`` (its descriptor, -1 without a lock dir), None if held."""
        if d is None:
            return -1
        fd = os.open(
            d / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
        )
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return None
        return fd

    def acquire(self) -> int:
        """The lowest free id at or above :data:`BASE`.

        Raises:
            OSError: the lock directory exists but a lock file in it cannot be opened.
        """
        with self._lock:
            d = self._lock_dir()
            n = 0
            while True:
                uid = self.BASE + n
                if uid not in self._used:
                    fd = self._try_lock(d, uid)
                    if fd is not None:
                        self._used[uid] = fd
                        return uid
                n += 1

    def release(self, uid: int) -> None:
        with self._lock:
            fd = self._used.pop(uid, -1)
        if fd >= 0:
            os.close(fd)  # closing the only descriptor drops the flock


UID_POOL = _UidPool()

_active_lock = threading.Lock()
_active: set[subprocess.Popen] = set()


def kill_all_sandboxes() -> int:
    """SIGKILL the process group of every running sandboxed command (used on Ctrl-C).

    Returns:
        How many were signalled.
    """
    with _active_lock:
        procs = list(_active)
    for p in procs:
        _kill_group(p)
    return len(procs)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.kill()
    except OSError:
        pass


def python_prefixes() -> list[Path]:
    """Directories holding the running Python installation (prefix, base prefix), which
    sandboxed commands need read-only to run ``python`` with the harness's packages."""
    out: list[Path] = []
    for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}:
        rp = Path(os.path.realpath(p))
        if not any(rp.is_relative_to(Path(s)) for s in SYSTEM_DIRS) and rp not in out:
            out.append(rp)
    return sorted(out)


def _python_bin_dirs() -> list[str]:
    dirs = []
    for p in (Path(sys.prefix) / "bin", Path(os.path.realpath(sys.executable)).parent):
        s = str(p)
        if s not in dirs:
            dirs.append(s)
    return dirs


@functools.cache
def _system_binds() -> tuple[str, ...]:
    """bwrap arguments for the system part of every sandbox: ``/usr``, the top-level ``bin``
    and ``lib`` directories (or their symbolic links) and the :data:`ETC_ENTRIES` this host
    has. Looked up once per process (about 70 ``stat`` calls), like the executables found
    on PATH; a system directory appearing later in the run is not bound."""
    a = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = Path("/") / name
        if p.is_symlink():
            a += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            a += ["--ro-bind", str(p), str(p)]
    a += ["--perms", "0755", "--dir", "/etc"]
    for name in ETC_ENTRIES:
        p = Path("/etc") / name
        if p.exists() or p.is_symlink():
            a += ["--ro-bind-try", str(p), str(p)]
    return tuple(a)


class Sandbox:
    """A sandbox for one trial: a workspace, an optional home, extra read-only mounts, a
    network policy and an environment. Each :meth:`run` starts a fresh isolated process
    tree with these settings; files persist only in the workspace and home.

    Args:
        workspace: host directory bound writable at ``/workspace``.
        home: host directory bound writable at ``/home/agent`` (HOME), or None for a tmpfs.
        mounts: extra binds (read-only unless ``writable``).
        network: keep the host network (CLI agents that call their model API); otherwise
            the sandbox has only a loopback device.
        env: environment of the command (on top of PATH, HOME, LANG, TMPDIR).
        mask: host paths that must stay invisible even if under a bound directory (the
            dataset, the run directory, the scratch root); they are covered with an empty
            tmpfs.
        backend: ``auto``, ``bwrap`` or ``none`` (see :func:`resolve_backend`).
        uid: user id to run as when the harness is root (default: one from a pool).
        path_prepend: directories (as seen inside) put first on PATH.
        tmp_root: host directory for each command's own scratch (the sandbox's
            ``/etc/passwd`` and captured output; removed after the command), never visible
            to the agent as a folder. Default: the system temp directory. The runner passes
            the trial's private folder, so a killed run leaves nothing outside its scratch
            root (which the next run sweeps).
        tmp_dirs: host folders bound writable at ``/tmp``, ``/var/tmp`` or ``/dev/shm``
            (keys: those paths), so they count against the trial's disk quota; a path
            without one gets a private tmpfs. Without isolation, ``/tmp``'s folder is TMPDIR.

    Raises:
        SandboxError: ``backend="bwrap"`` and bubblewrap does not work.
    """

    def __init__(
        self,
        workspace: Path,
        *,
        home: Path | None = None,
        mounts: list[Mount] | None = None,
        network: bool = False,
        env: dict[str, str] | None = None,
        mask: list[Path] | None = None,
        backend: Backend = "auto",
        uid: int | None = None,
        path_prepend: list[str] | None = None,
        tmp_root: Path | None = None,
        tmp_dirs: dict[str, Path] | None = None,
    ) -> None:
        self.workspace = Path(os.path.abspath(workspace))
        self.tmp_root = Path(os.path.abspath(tmp_root)) if tmp_root else None
        self.home = Path(os.path.abspath(home)) if home else None
        self.mounts = list(mounts or [])
        self.network = network
        self.env = dict(env or {})
        self.mask = [Path(os.path.abspath(m)) for m in (mask or [])]
        self.backend = resolve_backend(backend)
        self.uid = uid
        self.path_prepend = list(path_prepend or [])
        self.tmp_dirs = {k: Path(os.path.abspath(v)) for k, v in (tmp_dirs or {}).items()}

    # -- paths as the agent sees them ---------------------------------------------------
    @property
    def workspace_path(self) -> str:
        """The workspace as seen from inside (``/workspace``, or the host path without
        isolation)."""
        return WORKSPACE_MOUNT if self.backend == "bwrap" else str(self.workspace)

    @property
    def home_path(self) -> str:
        """HOME as seen from inside."""
        if self.backend == "bwrap":
            return HOME_MOUNT
        return str(self.home) if self.home else str(self.workspace)

    def inside(self, host_path: Path) -> str:
        """Translate a host path under the workspace to the path the agent sees."""
        rel = Path(os.path.abspath(host_path)).relative_to(self.workspace)
        base = self.workspace_path
        return base if str(rel) == "." else f"{base}/{rel.as_posix()}"

    def path_of(self, host_path: Path) -> str:
        """The path the command sees for a host path under the workspace, the home or an
        extra mount (the host path itself without isolation).

        Raises:
            ValueError: the path is not visible inside the sandbox.
        """
        host_path = Path(os.path.abspath(host_path))
        if self.backend != "bwrap":
            return str(host_path)
        roots = [(self.workspace, WORKSPACE_MOUNT)]
        if self.home is not None:
            roots.append((self.home, HOME_MOUNT))
        roots += [(Path(os.path.abspath(m.source)), m.dest) for m in self.mounts]
        roots += [(p, str(p)) for p in python_prefixes()]
        for src, dest in roots:
            if host_path.is_relative_to(src):
                rel = host_path.relative_to(src).as_posix()
                return dest if rel == "." else f"{dest.rstrip('/')}/{rel}"
        if host_path.is_relative_to(Path("/usr")):
            return str(host_path)
        raise ValueError(f"{host_path} is not visible inside the sandbox")

    # -- command line ----------------------------------------------------------------------
    def _env(self) -> dict[str, str]:
        host_tmp = str(self.tmp_dirs.get("/tmp") or tempfile.gettempdir())
        path = ":".join(
            self.path_prepend + _python_bin_dirs() + ["/usr/local/bin", "/usr/bin", "/bin"]
        )
        env = {
            "PATH": path,
            "HOME": self.home_path,
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "TMPDIR": "/tmp" if self.backend == "bwrap" else host_tmp,
            "PYTHONDONTWRITEBYTECODE": "1",
            "MPLCONFIGDIR": "/tmp/matplotlib"
            if self.backend == "bwrap"
            else os.path.join(host_tmp, "jb-mpl"),
        }
        env.update(self.env)
        return env

    def _limit_argv(self, limits: Limits) -> list[str]:
        prlimit = shutil.which("prlimit") or "/usr/bin/prlimit"
        if not os.path.exists(prlimit):
            return []
        args = [prlimit, f"--nofile={limits.max_open_files}", "--core=0"]
        if limits.memory_mb:
            args.append(f"--as={int(limits.memory_mb) * 1024 * 1024}")
        if limits.max_processes:
            args.append(f"--nproc={int(limits.max_processes)}")
        if limits.max_file_mb:
            args.append(f"--fsize={int(limits.max_file_mb) * 1024 * 1024}")
        return args + ["--"]

    def _bwrap_argv(
        self,
        command: list[str],
        limits: Limits,
        cwd: str,
        uid: int | None,
        etc_dir: Path,
        status_fd: int,
    ) -> list[str]:
        exe = bwrap_available()[1]
        a = [
            exe,
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--die-with-parent",
            "--new-session",
            "--json-status-fd",
            str(status_fd),
        ]
        if not self.network:
            a.append("--unshare-net")
        if uid is None:  # not root: an unprivileged user namespace without capabilities
            a += ["--unshare-user", "--cap-drop", "ALL"]
            if _bwrap_version >= (0, 8):
                a.append("--disable-userns")
        a += _system_binds()
        a += [
            "--ro-bind",
            str(etc_dir / "passwd"),
            "/etc/passwd",
            "--ro-bind",
            str(etc_dir / "group"),
            "/etc/group",
        ]
        a += ["--proc", "/proc", "--dev", "/dev"]
        for tmp in ("/dev/shm", "/tmp", "/var/tmp"):
            if tmp in self.tmp_dirs:
                a += ["--bind", str(self.tmp_dirs[tmp]), tmp]
            else:
                a += ["--perms", "1777", "--tmpfs", tmp]
        created: set[str] = {
            "/",
            "/usr",
            "/etc",
            "/tmp",
            "/var",
            "/var/tmp",
            "/proc",
            "/dev",
            "/dev/shm",
        }
        binds: list[tuple[str, str, bool]] = [(str(p), str(p), False) for p in python_prefixes()]
        binds += [(str(Path(os.path.abspath(m.source))), m.dest, m.writable) for m in self.mounts]
        binds.append((str(self.workspace), WORKSPACE_MOUNT, True))
        if self.home is not None:
            binds.append((str(self.home), HOME_MOUNT, True))
        for src, dest, writable in binds:
            # parents created by bwrap default to mode 0700: make them traversable
            parts = Path(dest).parts
            for i in range(2, len(parts)):
                d = str(Path(*parts[:i]))
                if d not in created and not d.startswith("/usr/"):
                    a += ["--perms", "0755", "--dir", d]
                    created.add(d)
            a += ["--bind" if writable else "--ro-bind", src, dest]
            created.add(dest)
        # hide forbidden host paths that happen to sit under a bound directory
        for m in self.mask:
            for src, dest, _ in binds + [("/usr", "/usr", False)]:
                if m.is_relative_to(Path(src)):
                    target = Path(dest) / m.relative_to(src)
                    if m.exists():
                        a += ["--tmpfs", str(target)]
        a += ["--chdir", cwd, "--clearenv"]
        for k, v in self._env().items():
            a += ["--setenv", k, v]
        a.append("--")
        if uid is not None:
            setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
            a += [
                setpriv,
                f"--reuid={uid}",
                f"--regid={uid}",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--no-new-privs",
            ]
        return a + self._limit_argv(limits) + list(command)

    # -- running ---------------------------------------------------------------------------
    def run(
        self,
        command: list[str],
        *,
        limits: Limits | None = None,
        cwd: str | None = None,
        stdin: bytes | None = None,
        on_stdout_line: Callable[[str], None] | None = None,
        max_output_chars: int = 100_000,
        cancel: threading.Event | None = None,
    ) -> SandboxResult:
        """Run ``command`` (argv, paths as seen inside) and wait for it.

        Args:
            command: argv; ``command[0]`` is looked up on the sandbox PATH.
            limits: resource limits and wall-clock timeout.
            cwd: working directory inside (default: the workspace).
            stdin: bytes fed to standard input (default: none, stdin is /dev/null).
            on_stdout_line: when given, stdout is streamed line by line to this callback
                (for JSON event streams) instead of being captured.
            max_output_chars: cap of captured stdout/stderr (head and tail are kept).
            cancel: when set while running, the command is killed (result has
                ``exit_code`` -9).

        Returns:
            :class:`SandboxResult`.

        Raises:
            SandboxError: the sandbox could not be started (bwrap set-up failure, missing
                executable for the plain backend).
        """
        limits = limits or Limits()
        scratch = Path(tempfile.mkdtemp(prefix="jb-sbx-", dir=self.tmp_root))
        uid: int | None = None
        acquired = False
        try:
            stdout_path = scratch / "stdout"
            stderr_path = scratch / "stderr"
            status_r = status_w = -1
            if self.backend == "bwrap":
                if os.geteuid() == 0:
                    if self.uid is None:
                        uid = UID_POOL.acquire()
                        acquired = True
                    else:
                        uid = self.uid
                    _chown_tree(self.workspace, uid)
                    if self.home is not None:
                        _chown_tree(self.home, uid)
                etc = scratch / "etc"
                etc.mkdir()
                shown_uid = uid if uid is not None else os.getuid()
                (etc / "passwd").write_text(
                    f"root:x:0:0:root:/root:/usr/sbin/nologin\nagent:x:{shown_uid}:{shown_uid}:agent:{HOME_MOUNT}:/bin/bash\n"
                    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
                )
                (etc / "group").write_text(f"root:x:0:\nagent:x:{shown_uid}:\nnogroup:x:65534:\n")
                os.chmod(scratch, 0o755)
                for f in (etc, etc / "passwd", etc / "group"):
                    os.chmod(f, 0o755 if f.is_dir() else 0o644)
                status_r, status_w = os.pipe()
                argv = self._bwrap_argv(command, limits, cwd or WORKSPACE_MOUNT, uid, etc, status_w)
                run_cwd = "/"
                env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
            else:
                argv = self._limit_argv(limits) + list(command)
                run_cwd = cwd or str(self.workspace)
                env = self._env()
                env["PATH"] = env["PATH"] + ":" + os.environ.get("PATH", "")
            return self._execute(
                argv,
                run_cwd,
                env,
                stdin,
                on_stdout_line,
                limits,
                stdout_path,
                stderr_path,
                status_r,
                status_w,
                max_output_chars,
                cancel,
            )
        finally:
            if acquired and uid is not None:
                UID_POOL.release(uid)
            shutil.rmtree(scratch, ignore_errors=True)

    def _execute(
        self,
        argv,
        run_cwd,
        env,
        stdin,
        on_line,
        limits,
        stdout_path,
        stderr_path,
        status_r,
        status_w,
        max_chars,
        cancel,
    ) -> SandboxResult:
        start = time.monotonic()
        stream = on_line is not None
        with open(stderr_path, "wb") as err_f, open(stdout_path, "wb") as out_f:
            # descriptors of the command: {number inside: ours}; stdin is /dev/null unless fed
            fds = {1: out_f.fileno(), 2: err_f.fileno()}
            given: list[int] = []  # our copies of the pipe ends the command gets
            kept: list[int] = []  # our ends of those pipes
            if stream:
                out_r, out_w = os.pipe()
                fds[1] = out_w
                given.append(out_w)
                kept.append(out_r)
            if stdin is not None:
                in_r, in_w = os.pipe()
                fds[0] = in_r
                given.append(in_r)
                kept.append(in_w)
            if status_w >= 0:
                fds[status_w] = status_w
                given.append(status_w)
            try:
                watchdog = WARM_POOL.start(argv, cwd=run_cwd, env=env, fds=fds)
            except (OSError, ValueError) as exc:
                for fd in kept + ([status_r] if status_r >= 0 else []):
                    os.close(fd)
                raise SandboxError(f"cannot start {argv[0]}: {exc}") from exc
            finally:
                for fd in given:
                    os.close(fd)
            proc = watchdog.proc
            with _active_lock:
                _active.add(proc)
            reader = None
            if stream:
                reader = threading.Thread(
                    target=_pump_lines, args=(open(out_r, "rb"), on_line), daemon=True
                )
                reader.start()
            if stdin is not None:
                threading.Thread(target=_feed, args=(open(in_w, "wb"), stdin), daemon=True).start()
            timed_out = False
            deadline = start + limits.timeout
            try:
                while True:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        timed_out = True
                        _kill_group(proc)
                        proc.wait()
                        break
                    if cancel is not None and cancel.is_set():
                        _kill_group(proc)
                        proc.wait()
                        break
                    if _wait_exit(proc, min(remaining, 0.25)):
                        break
            finally:
                # the command may have left background processes in its group
                _kill_group(proc)
                WARM_POOL.done(watchdog)
                with _active_lock:
                    _active.discard(proc)
            if reader is not None:
                reader.join(timeout=10)
        status_lines = b""
        if status_r >= 0:
            with os.fdopen(status_r, "rb") as f:
                status_lines = f.read()
        wall = time.monotonic() - start
        stdout, out_trunc = ("", False) if stream else _read_capped(stdout_path, max_chars)
        stderr, err_trunc = _read_capped(stderr_path, max_chars)
        exit_code = proc.returncode
        if status_r >= 0:
            info = _parse_status(status_lines)
            if "child-pid" not in info and not timed_out and not (cancel and cancel.is_set()):
                raise SandboxError(
                    f"bubblewrap could not set up the sandbox: {stderr.strip()[:1000]}"
                )
            if "exit-code" in info:
                exit_code = int(info["exit-code"])
        return SandboxResult(
            exit_code=exit_code,
            timed_out=timed_out,
            stdout=stdout,
            stderr=stderr,
            wall_seconds=wall,
            backend=self.backend,
            stdout_truncated=out_trunc,
            stderr_truncated=err_trunc,
        )


def _wait_exit(proc: subprocess.Popen, timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for ``proc`` to exit; True once it has (and is reaped).

    Sleeps in ``poll(2)`` on a pidfd (Linux >= 5.3), which wakes the moment the process
    exits; ``Popen.wait(timeout)`` would instead sleep between polls (up to 50 ms each, the
    bulk of a short sandboxed command's cost). Falls back to ``Popen.wait`` without pidfds.
    """
    if proc.poll() is not None:
        return True
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # no pidfd support: the polling wait
        try:
            proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        poller.poll(max(0, int(timeout * 1000)))
    finally:
        os.close(pidfd)
    return proc.poll() is not None


def _parse_status(raw: bytes) -> dict:
    out: dict = {}
    for line in raw.decode("utf-8", "replace").splitlines():
        try:
            out.update(json.loads(line))
        except (json.JSONDecodeError, TypeError):
            continue
    return out


def _pump_lines(pipe, on_line: Callable[[str], None], max_line: int = 8_000_000) -> None:
    try:
        for raw in iter(lambda: pipe.readline(max_line), b""):
            try:
                on_line(raw.decode("utf-8", "replace").rstrip("\r\n"))
            except Exception:  # a faulty callback must not stall the pipe
                pass
    finally:
        try:
            pipe.close()
        except OSError:
            pass


def _feed(pipe, data: bytes) -> None:
    try:
        pipe.write(data)
    except (BrokenPipeError, OSError):
        pass
    finally:
        try:
            pipe.close()
        except OSError:
            pass


def _read_capped(path: Path, max_chars: int) -> tuple[str, bool]:
    """Head and tail of a possibly huge output file."""
    size = path.stat().st_size
    half = max(max_chars // 2, 1)
    with open(path, "rb") as f:
        if size <= max_chars * 4:
            text = f.read().decode("utf-8", "replace")
            if len(text) <= max_chars:
                return text, False
            return text[:half] + f"\n[... {len(text) - 2 * half} characters omitted ...]\n" + text[
                -half:
            ], True
        head = f.read(half * 4).decode("utf-8", "replace")[:half]
        f.seek(max(size - half * 4, 0))
        tail = f.read().decode("utf-8", "replace")[-half:]
    return head + f"\n[... output of {size} bytes truncated ...]\n" + tail, True


def _chown_tree(root: Path, uid: int) -> None:
    """Give the sandbox user ownership of a directory tree (symlinks are never followed;
    :func:`jobbench.sandbox.safefs.lchown_tree`)."""
    lchown_tree(root, uid, uid)


def chown_back(root: Path) -> None:
    """Return a tree written by a sandbox user to the harness user (best effort)."""
    if os.geteuid() != 0:
        return
    _chown_tree(root, 0)
