"""LibreOffice headless conversion with a private profile that forces recalculation.

LibreOffice keeps the values cached in an xlsx by default (``OOXMLRecalcMode`` = 1,
"never recalculate"); a workbook written by a script then shows empty or stale numbers. Each
conversion here runs ``soffice --headless --convert-to`` with its *own* user profile (one per
concurrent caller: two instances sharing a profile would hand the job to each other) whose
``registrymodifications.xcu`` sets:

* ``/org.openoffice.Office.Calc/Formula/Load``: ``OOXMLRecalcMode`` = 0 and
  ``ODFRecalcMode`` = 0 (always recalculate on load);
* ``/org.openoffice.Office.Calc/Content/Update``: ``Link`` = 1 (never update links);
* ``/org.openoffice.Office.Common/Security/Scripting``: ``MacroSecurityLevel`` = 3 and
  ``DisableMacrosExecution`` = true (macros never run).

The values and paths are those of LibreOffice's own configuration schema (``main.xcd``:
``Calc/Formula/Load``; recalc modes 0 = always, 1 = never, 2 = ask; link update modes
0 = always, 1 = never, 2 = on request).

When ``bwrap`` (bubblewrap) works, soffice runs with ``--unshare-net --unshare-pid
--die-with-parent``, i.e. without network and killed with its caller. Every run has a
timeout after which its whole process group is killed, and (in the extraction worker) an
address-space and file-size limit.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from ..sandbox import Lifeline
from ._base import ExtractionError
from ._limits import ENV_SOFFICE

REGISTRY = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry"
 xmlns:xs="http://www.w3.org/2001/XMLSchema"
 xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">
 <prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">
 <prop oor:name="ODFRecalcMode" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Content/Update">
 <prop oor:name="Link" oor:op="fuse"><value>1</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting">
 <prop oor:name="MacroSecurityLevel" oor:op="fuse"><value>3</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting">
 <prop oor:name="DisableMacrosExecution" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc">
 <prop oor:name="FirstRun" oor:op="fuse"><value>false</value></prop></item>
</oor:items>
"""

SOFFICE_MEMORY_MB = 8192
"""Address-space limit of a LibreOffice process (it maps far more than it uses)."""
SOFFICE_MAX_OUTPUT = 2 << 30
"""RLIMIT_FSIZE of a LibreOffice process: no file it writes can exceed 2 GiB."""


def find_soffice() -> str | None:
    """Path of the LibreOffice binary: ``$JOBBENCH_SOFFICE`` if set (``none`` or empty
    disables LibreOffice), else ``soffice`` or ``libreoffice`` on ``PATH``."""
    env = os.environ.get(ENV_SOFFICE)
    if env is not None:
        env = env.strip()
        if not env or env.lower() in _DISABLED_VALUES:
            return None
        return shutil.which(env) or (
            env if os.path.isfile(env) and os.access(env, os.X_OK) else None
        )
    return shutil.which("soffice") or shutil.which("libreoffice")


_DISABLED_VALUES = ("none", "0", "false", "off")


def soffice_unavailable_reason() -> str | None:
    """Why :func:`find_soffice` finds no LibreOffice, for diagnostics; ``None`` when it
    finds one.

    Returns one of ``"LibreOffice disabled by JOBBENCH_SOFFICE=none"`` (the variable is
    empty or ``none``/``0``/``false``/``off``; the value is quoted as set),
    ``"JOBBENCH_SOFFICE=/x/soffice is not an executable"`` (the variable names nothing
    runnable) or ``"LibreOffice not installed"`` (no ``soffice``/``libreoffice`` on
    ``PATH``)."""
    if find_soffice() is not None:
        return None
    env = os.environ.get(ENV_SOFFICE)
    if env is not None:
        value = env.strip()
        if not value or value.lower() in _DISABLED_VALUES:
            return f"LibreOffice disabled by {ENV_SOFFICE}={value}"
        return f"{ENV_SOFFICE}={value} is not an executable"
    return "LibreOffice not installed"


_bwrap_state: dict[str, bool] = {}
_lock = threading.Lock()


def bwrap_works() -> bool:
    """True when ``bwrap --unshare-net --unshare-pid`` can run here (probed once)."""
    with _lock:
        if "ok" not in _bwrap_state:
            exe = shutil.which("bwrap")
            ok = False
            if exe:
                try:
                    ok = (
                        subprocess.run(
                            [
                                exe,
                                "--unshare-net",
                                "--unshare-pid",
                                "--die-with-parent",
                                "--dev-bind",
                                "/",
                                "/",
                                "true",
                            ],
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL,
                            timeout=10,
                        ).returncode
                        == 0
                    )
                except (OSError, subprocess.SubprocessError):
                    ok = False
            _bwrap_state["ok"] = ok
        return _bwrap_state["ok"]


class _Profiles:
    """Private LibreOffice profiles, one per concurrent conversion, reused afterwards."""

    def __init__(self) -> None:
        self._free: list[Path] = []
        self._all: list[Path] = []
        self._lock = threading.Lock()
        atexit.register(self.cleanup)

    def acquire(self) -> Path:
        with self._lock:
            if self._free:
                return self._free.pop()
        root = Path(tempfile.mkdtemp(prefix="jobbench-lo-"))
        user = root / "user"
        user.mkdir()
        (user / "registrymodifications.xcu").write_text(REGISTRY, encoding="utf-8")
        with self._lock:
            self._all.append(root)
        return root

    def release(self, root: Path, *, broken: bool = False) -> None:
        with self._lock:
            if broken:
                shutil.rmtree(root, ignore_errors=True)
                if root in self._all:
                    self._all.remove(root)
            else:
                self._free.append(root)

    def cleanup(self) -> None:
        with self._lock:
            for root in self._all:
                shutil.rmtree(root, ignore_errors=True)
            self._all.clear()
            self._free.clear()


PROFILES = _Profiles()
ACTIVE_GROUPS: set[int] = set()
"""Process groups of running soffice conversions (killed by the worker's SIGTERM handler)."""


def kill_active() -> None:
    """SIGKILL every running conversion's process group."""
    for pgid in list(ACTIVE_GROUPS):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass


def _limit_resources() -> None:  # runs in the child between fork and exec
    import resource

    as_bytes = SOFFICE_MEMORY_MB << 20
    resource.setrlimit(resource.RLIMIT_AS, (as_bytes, as_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (SOFFICE_MAX_OUTPUT, SOFFICE_MAX_OUTPUT))


class Conversion:
    """A LibreOffice headless conversion started at once and awaited later, so the caller
    can work while LibreOffice does (:meth:`wait` for its result, :meth:`cancel` to stop it;
    as a context manager, leaving without :meth:`wait` cancels it). It must be created from
    the thread that owns the process (``limit_resources`` forks with a ``preexec_fn``).

    Args:
        src: a private copy of the input (never the deliverable itself).
        target: a ``--convert-to`` spec such as ``xlsx``, ``png``, ``docx:"MS Word 2007 XML"``.
        outdir: an empty directory for the output.
        timeout: seconds from the start before the conversion's process group is killed.
        limit_resources: apply address-space and file-size rlimits to soffice (only safe
            from a single-threaded process such as the extraction worker).
        soffice: binary to run (default :func:`find_soffice`).

    Raises:
        ExtractionError: LibreOffice missing or could not start.
    """

    def __init__(
        self,
        src: Path,
        target: str,
        outdir: Path,
        *,
        timeout: float,
        limit_resources: bool = False,
        soffice: str | None = None,
    ) -> None:
        exe = soffice or find_soffice()
        if not exe:
            raise ExtractionError("LibreOffice (soffice) not found")
        self.src, self.target, self.outdir, self.timeout = src, target, outdir, timeout
        self._deadline = time.monotonic() + timeout
        self._done = False
        self._broken = False
        self._profile = PROFILES.acquire()
        cmd = [
            exe,
            "--headless",
            "--invisible",
            "--norestore",
            "--nologo",
            "--nodefault",
            "--nolockcheck",
            "--nofirststartwizard",
            f"-env:UserInstallation={self._profile.as_uri()}",
            "--convert-to",
            target,
            "--outdir",
            str(outdir),
            str(src),
        ]
        if bwrap_works():
            cmd = [
                shutil.which("bwrap") or "bwrap",
                "--unshare-net",
                "--unshare-pid",
                "--die-with-parent",
                "--dev-bind",
                "/",
                "/",
                "--",
            ] + cmd
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self._profile),
            "TMPDIR": str(outdir),
            "LANG": "C.UTF-8",
            "SAL_USE_VCLPLUGIN": "svp",
        }
        self._lifeline = Lifeline()
        try:
            self._proc = subprocess.Popen(
                self._lifeline.wrap(cmd),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                start_new_session=True,
                pass_fds=self._lifeline.pass_fds,
                preexec_fn=_limit_resources if limit_resources else None,
            )
        except OSError as exc:
            self._lifeline.close()
            PROFILES.release(self._profile, broken=True)
            self._done = True
            raise ExtractionError(f"could not start LibreOffice: {exc}") from exc
        self._lifeline.started()
        ACTIVE_GROUPS.add(self._proc.pid)

    def _finish(self) -> None:
        """Kill what is left of the process group and give the profile back (once)."""
        if self._done:
            return
        self._done = True
        ACTIVE_GROUPS.discard(self._proc.pid)
        self._lifeline.close()
        try:  # leftovers of the group (oosplash → soffice.bin) must not outlive the call
            os.killpg(self._proc.pid, signal.SIGKILL)
        except OSError:
            pass
        PROFILES.release(self._profile, broken=self._broken)

    def cancel(self) -> None:
        """Stop the conversion (no effect once it has finished)."""
        if self._done:
            return
        self._broken = True
        try:
            os.killpg(self._proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self._proc.communicate()
        self._finish()

    def wait(self) -> Path:
        """The converted file (``outdir/<stem>.<ext>``), waiting until the time-out counted
        from the start.

        Raises:
            ExtractionError: LibreOffice timed out, failed or wrote nothing.
        """
        if self._done:
            raise ExtractionError("LibreOffice conversion was cancelled")
        try:
            try:
                remaining = max(0.0, self._deadline - time.monotonic())
                out, err = self._proc.communicate(timeout=remaining)
            except subprocess.TimeoutExpired:
                self._broken = True
                try:
                    os.killpg(self._proc.pid, signal.SIGKILL)
                except OSError:
                    pass
                self._proc.communicate()
                raise ExtractionError(f"LibreOffice timed out after {self.timeout:g} s") from None
        finally:
            self._finish()
        proc = self._proc
        ext = self.target.split(":", 1)[0]
        result = self.outdir / f"{self.src.stem}.{ext}"
        if proc.returncode != 0 or not result.is_file() or result.stat().st_size == 0:
            detail = (err or out or b"").decode("utf-8", "replace").strip().splitlines()
            detail = [ln for ln in detail if "javaldx" not in ln]
            raise ExtractionError(
                f"LibreOffice conversion to {ext} failed (exit {proc.returncode})"
                + (f": {detail[-1][:300]}" if detail else "")
            )
        return result

    def __enter__(self) -> Conversion:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()


def convert(
    src: Path,
    target: str,
    outdir: Path,
    *,
    timeout: float,
    limit_resources: bool = False,
    soffice: str | None = None,
) -> Path:
    """Convert ``src`` with LibreOffice headless into ``outdir`` and wait for it (see
    :class:`Conversion` for the arguments).

    Returns:
        The converted file (``outdir/<stem>.<ext>``).

    Raises:
        ExtractionError: LibreOffice missing, timed out, failed or wrote nothing.
    """
    with Conversion(
        src, target, outdir, timeout=timeout, limit_resources=limit_resources, soffice=soffice
    ) as conversion:
        return conversion.wait()
