"""A sandbox dies with the harness even when the kernel's parent-death signal misses.

``bwrap --die-with-parent`` asks the kernel for SIGKILL when its parent thread exits, but the
request is made by ``bwrap`` after it has started: a harness killed between the ``fork`` and
that ``prctl`` leaves a sandbox that runs on unsupervised (``tests/runner/test_kill_resume.py``
caught one alive after a SIGKILL of ``jobbench run``). The lifeline closes that gap without
relying on timing:

- the harness opens a pipe and keeps its write end (close-on-exec, so no other child holds
  it); every sandbox command is started as ``python -S -I _lifeline.py FD -- argv...``;
- this watchdog starts ``argv`` in its own process group and waits for whichever comes first:
  the command exits (the watchdog exits with the same status), or the pipe reports end of
  file, which the kernel delivers the moment the harness process is gone, however it died
  (the watchdog then SIGKILLs its whole process group, the command included).

The module runs as a script that imports only ``os``, ``select``, ``sys`` and ``_signal`` (no
``jobbench``, no ``pathlib``, no ``signal``: its enums alone cost about 5 ms), so it costs one
bare interpreter start (about 7 ms on a 2-core machine) per sandboxed command.
"""

from __future__ import annotations

import os
import select
import sys

try:  # the C module behind ``signal``, without the enum wrappers that make ``signal`` slow
    from _signal import SIG_DFL, SIGKILL  # type: ignore[import-not-found]
    from _signal import signal as _set_handler
except ImportError:  # pragma: no cover - an interpreter without ``_signal``
    from signal import SIG_DFL, SIGKILL
    from signal import signal as _set_handler

SCRIPT = os.path.realpath(__file__)
"""Path of this file, run as the watchdog script."""


class Lifeline:
    """One sandbox command's lifeline pipe on the harness side.

    Usage: ``line = Lifeline(); argv = line.wrap(argv)``; pass ``line.pass_fds`` to
    :class:`subprocess.Popen`; call :meth:`started` after ``Popen`` returns and :meth:`close`
    when the command has finished (or failed to start).
    """

    def __init__(self) -> None:
        self._read, self._write = os.pipe()  # both close-on-exec (PEP 446)

    @property
    def pass_fds(self) -> tuple[int, ...]:
        """The file descriptors the watchdog must inherit (the pipe's read end)."""
        return (self._read,)

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` run under the watchdog by the current interpreter."""
        return [sys.executable, "-S", "-I", SCRIPT, str(self._read), "--", *argv]

    def started(self) -> None:
        """Drop the harness's copy of the read end once the watchdog holds its own."""
        if self._read >= 0:
            os.close(self._read)
            self._read = -1

    def close(self) -> None:
        """Close both ends (idempotent); the watchdog, if still alive, kills its command."""
        self.started()
        if self._write >= 0:
            os.close(self._write)
            self._write = -1


def _exit_like(status: int) -> None:
    """Leave with the wait ``status`` of the command: its exit code, or its signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        _set_handler(sig, SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def main(argv: list[str]) -> None:
    """Watchdog entry point: ``argv`` is ``[script, FD, "--", command...]``."""
    fd = int(argv[1])
    command = argv[3:]
    os.set_inheritable(fd, False)
    if os.getpgrp() != os.getpid():  # the caller did not start a new session for us
        os.setpgid(0, 0)
    try:
        spawn = os.posix_spawn if "/" in command[0] else os.posix_spawnp
        pid = spawn(command[0], command, os.environ)
    except OSError as exc:
        print(f"jobbench lifeline: cannot start {command[0]}: {exc}", file=sys.stderr)
        os._exit(127)
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    try:  # wakes the moment the command exits (Linux >= 5.3)
        pidfd = os.pidfd_open(pid)
        poller.register(pidfd, select.POLLIN)
        tick = None
    except (AttributeError, OSError):
        pidfd, tick = -1, 100
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            _exit_like(status)
        ready = {f for f, _ in poller.poll(tick)}
        if fd in ready:  # nothing is ever written: readable means the harness is gone
            os.killpg(os.getpgrp(), SIGKILL)
        if pidfd in ready:
            _exit_like(os.waitpid(pid, 0)[1])


if __name__ == "__main__":
    main(sys.argv)
