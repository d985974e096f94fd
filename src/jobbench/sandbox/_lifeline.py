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
bare interpreter start (about 7 ms on an idle 2-core machine, 15 ms or more under load) per
sandboxed command.

**Warm mode** (``python -S -I _lifeline.py --warm FD``) takes that start off a command's
path: :mod:`jobbench.sandbox._warm` starts the watchdog before it is needed, with ``FD`` one
end of a Unix stream socket pair whose other end the harness keeps (close-on-exec). The
socket is the lifeline (end of file means the harness is gone) and also carries the one
request, so the watchdog started for a command is still the harness's own child, alone in
its process group, exiting with the command's status. The watchdog

1. writes one byte ``+`` (it is ready; the harness need not read it);
2. reads the request (:func:`read_request`): an 8-byte big-endian length sent together with
   the descriptors (``SCM_RIGHTS``), then that many bytes of NUL-separated fields: the
   working directory, the count ``n`` of descriptors, ``n`` target numbers (the descriptor
   number each received descriptor takes in the command: 0, 1, 2, bubblewrap's status
   descriptor), the count ``m`` of argv items, the ``m`` items, then the environment as
   ``KEY=VALUE`` items. End of file or a reset connection instead of a request (the harness
   closed an unused watchdog, or died) ends the watchdog with status 0;
3. puts the descriptors in place, replaces its environment with the request's, changes to the
   directory and starts the command, then supervises it exactly like the cold watchdog.
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
MAX_FDS = 16
"""Most descriptors one warm request may carry."""
READY = b"+"
"""The byte a warm watchdog writes once it waits for its request."""


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


def _start(command: list[str] | list[bytes]) -> int:
    """Start ``command`` (looked up on the PATH of this process's environment when its first
    item has no slash) in this process group; on failure say why on stderr and exit 127."""
    try:
        spawn = os.posix_spawn if os.fsencode(command[0]).find(b"/") >= 0 else os.posix_spawnp
        return spawn(command[0], command, os.environ)
    except OSError as exc:
        print(f"jobbench lifeline: cannot start {os.fsdecode(command[0])}: {exc}", file=sys.stderr)
        os._exit(127)


def _supervise(pid: int, fd: int) -> None:
    """Wait for the command ``pid`` or for readability of the lifeline ``fd`` (end of file:
    the harness is gone), whichever comes first: exit like the command, or SIGKILL this
    whole process group. Never returns."""
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
        if fd in ready:  # nothing is written after a request: readable means end of file
            os.killpg(os.getpgrp(), SIGKILL)
        if pidfd in ready:
            _exit_like(os.waitpid(pid, 0)[1])


def _own_group() -> None:
    if os.getpgrp() != os.getpid():  # the caller did not start a new session for us
        os.setpgid(0, 0)


def main(argv: list[str]) -> None:
    """Watchdog entry point: ``argv`` is ``[script, FD, "--", command...]`` (cold) or
    ``[script, "--warm", FD]`` (warm: the command comes over the socket ``FD``)."""
    if argv[1] == "--warm":
        _warm(int(argv[2]))
    fd = int(argv[1])
    os.set_inheritable(fd, False)
    _own_group()
    _supervise(_start(argv[3:]), fd)


def read_request(fd: int) -> tuple[bytes, list[tuple[int, int]], list[bytes], list[bytes]] | None:
    """Read one warm request from the socket ``fd`` (format in the module docstring).

    Returns:
        ``(cwd, [(received descriptor, target number), ...], argv, environment items)``, or
        None at end of file before a request.

    Raises:
        ValueError: a malformed request (short, too many descriptors, bad counts).
    """
    import _socket  # what ``socket`` wraps, without its enums

    sock = _socket.socket(-1, -1, -1, fd)
    try:
        head, ancillary, _flags, _addr = sock.recvmsg(8, _socket.CMSG_SPACE(MAX_FDS * 4))
        received: list[int] = []
        for level, kind, data in ancillary:
            if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
                usable = len(data) - len(data) % 4
                received += [
                    int.from_bytes(data[i : i + 4], sys.byteorder) for i in range(0, usable, 4)
                ]
        if not head and not received:
            return None
        while len(head) < 8:
            more = sock.recv(8 - len(head))
            if not more:
                raise ValueError("short request header")
            head += more
        size = int.from_bytes(head, "big")
        chunks, got = [], 0
        while got < size:
            more = sock.recv(min(size - got, 1 << 20))
            if not more:
                raise ValueError("short request")
            chunks.append(more)
            got += len(more)
    finally:
        sock.detach()
    fields = b"".join(chunks).split(b"\0")
    n = int(fields[1])
    targets = [int(x) for x in fields[2 : 2 + n]]
    if n != len(received) or n > MAX_FDS:
        raise ValueError(f"{len(received)} descriptors for {n} targets")
    m = int(fields[2 + n])
    argv = fields[3 + n : 3 + n + m]
    if m < 1 or len(argv) != m:
        raise ValueError("bad argv count")
    return fields[0], list(zip(received, targets)), argv, fields[3 + n + m :]


def _warm(fd: int) -> None:
    """Warm watchdog: wait for the request on the socket ``fd``, then run and supervise it.
    Never returns."""
    import fcntl

    os.set_inheritable(fd, False)
    _own_group()
    try:
        os.write(fd, READY)
        request = read_request(fd)
    except (BrokenPipeError, ConnectionResetError):  # closed unused (the ready byte unread)
        os._exit(0)
    except (OSError, ValueError) as exc:
        print(f"jobbench lifeline: bad request: {exc}", file=sys.stderr)
        os._exit(127)
    if request is None:
        os._exit(0)
    cwd, fds, command, env = request
    # move every descriptor of ours above the targets, so no dup2 below overwrites one
    floor = max([3] + [t + 1 for _, t in fds])
    fd_high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, floor)
    os.close(fd)
    moved = []
    for got, target in fds:
        moved.append((fcntl.fcntl(got, fcntl.F_DUPFD_CLOEXEC, floor), target))
        os.close(got)
    for got, target in moved:
        os.dup2(got, target, inheritable=True)
        os.close(got)
    os.environb.clear()
    for item in env:
        key, _, value = item.partition(b"=")
        os.environb[key] = value
    try:
        os.chdir(cwd)
    except OSError as exc:
        print(f"jobbench lifeline: cannot start {os.fsdecode(command[0])}: {exc}", file=sys.stderr)
        os._exit(127)
    _supervise(_start(command), fd_high)


if __name__ == "__main__":
    main(sys.argv)
