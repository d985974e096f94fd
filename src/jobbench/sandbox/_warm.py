"""Watchdogs started ahead of their command, so a sandboxed command does not wait for an
interpreter start.

Every sandboxed command runs under the lifeline watchdog of :mod:`._lifeline` (it dies with
the harness however the harness dies). Started cold, that watchdog is a Python interpreter
start (7-15 ms, more under load) on the path of every command: for a short command, more
than bubblewrap's own start. :class:`WarmPool` keeps watchdogs in *warm mode* (see the
:mod:`._lifeline` docstring): already started, waiting on a Unix socket for the one command
they will run. A command then costs a request over that socket, and the replacement watchdog
starts while the command runs.

A watchdog started for a command is still the harness's own child, the leader of its own
process group, and exits with the command's status, so waiting for it, killing its group on
a timeout and reading its exit code work as for a cold one. Closing the harness's end of the
socket (or the harness dying) kills the command's whole process group.
"""

from __future__ import annotations

import atexit
import os
import select
import socket
import subprocess
import sys
import threading
import weakref
from collections.abc import Mapping, Sequence

from ._lifeline import MAX_FDS, READY, SCRIPT

_open: weakref.WeakSet[WarmWatchdog] = weakref.WeakSet()
"""Every watchdog whose harness-side socket is open (closed in a forked child)."""


def _field(value: str | bytes, what: str) -> bytes:
    raw = os.fsencode(value)
    if b"\0" in raw:
        raise ValueError(f"embedded null byte in {what}")
    return raw


def encode_request(
    argv: Sequence[str | bytes], cwd: str | bytes, env: Mapping[str, str], targets: Sequence[int]
) -> bytes:
    """The payload of a warm request (format in the :mod:`._lifeline` docstring).

    Args:
        argv: the command, at least one item.
        cwd: its working directory.
        env: its whole environment.
        targets: the descriptor number each sent descriptor takes in the command, in the
            order the descriptors are sent.

    Raises:
        ValueError: an item contains a NUL byte, an environment name is empty or contains
            ``=``, ``argv`` is empty, or more than :data:`MAX_FDS` targets.
    """
    if not argv:
        raise ValueError("empty argv")
    if len(targets) > MAX_FDS:
        raise ValueError(f"more than {MAX_FDS} descriptors")
    fields = [_field(cwd, "cwd"), b"%d" % len(targets)]
    fields += [b"%d" % int(t) for t in targets]
    fields.append(b"%d" % len(argv))
    fields += [_field(a, "argv") for a in argv]
    for key, value in env.items():
        k = _field(key, "environment name")
        if not k or b"=" in k:
            raise ValueError(f"illegal environment variable name {key!r}")
        fields.append(k + b"=" + _field(value, "environment value"))
    return b"\0".join(fields)


class WarmWatchdog:
    """One warm watchdog process and the harness's end of its socket.

    Attributes:
        proc: the watchdog process. Once :meth:`start` has sent its command, its process
            group is the command's and its exit status the command's (negative: the signal
            that ended the command; 127: the command could not be started).

    Raises:
        OSError: the watchdog process could not be started.
    """

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-S", "-I", SCRIPT, "--warm", str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                cwd="/",
                start_new_session=True,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._sock: socket.socket | None = ours
        self.sent = False
        _open.add(self)

    def ready(self, timeout: float) -> bool:
        """Whether the watchdog has started and waits for its request, waiting up to
        ``timeout`` seconds for it (False when its socket is closed)."""
        sock = self._sock
        if sock is None:
            return False
        readable, _, _ = select.select([sock], [], [], timeout)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == READY

    def start(
        self,
        argv: Sequence[str | bytes],
        *,
        cwd: str | bytes,
        env: Mapping[str, str],
        fds: Mapping[int, int],
    ) -> None:
        """Send the command: the watchdog starts it as soon as it has started itself.

        Args:
            argv: the command; ``argv[0]`` without a slash is looked up on ``env``'s PATH.
            cwd: its working directory.
            env: its whole environment.
            fds: ``{number in the command: descriptor of the harness}``; the command's
                standard input, output and error are the watchdog's ``/dev/null`` unless
                given. The harness may close its descriptors once this returns.

        Raises:
            ValueError: a malformed command (see :func:`encode_request`); nothing was sent.
            OSError: the watchdog is gone (the request could not be sent).
        """
        if self._sock is None or self.sent:
            raise OSError("this watchdog is closed or already has its command")
        payload = encode_request(argv, cwd, env, list(fds))
        self.sent = True
        socket.send_fds(self._sock, [len(payload).to_bytes(8, "big")], list(fds.values()))
        self._sock.sendall(payload)

    def close(self) -> None:
        """Close the harness's end of the socket (idempotent): a watchdog running its
        command SIGKILLs the command's process group, one still waiting exits with 0."""
        sock, self._sock = self._sock, None
        if sock is not None:
            _open.discard(self)
            sock.close()

    def _forget(self) -> None:
        """In a forked child: drop this copy of the socket, which is the parent's."""
        self.close()


class WarmPool:
    """Warm watchdogs for the sandboxed commands of this process.

    :meth:`start` hands a command to an idle watchdog (or to a new one when none is idle) and
    then tops the idle ones up to as many as commands are running (at least one, at most
    ``cap``), so concurrent trials each find one. Idle watchdogs exit when the pool closes (at
    interpreter exit) or the process dies; in a forked child the pool starts empty.

    Args:
        cap: most idle watchdogs kept.
    """

    def __init__(self, cap: int = 8) -> None:
        self.cap = cap
        self._lock = threading.Lock()
        self._idle: list[WarmWatchdog] = []
        self._busy = 0

    def start(
        self,
        argv: Sequence[str | bytes],
        *,
        cwd: str | bytes,
        env: Mapping[str, str],
        fds: Mapping[int, int],
    ) -> WarmWatchdog:
        """Run ``argv`` under a watchdog (arguments as :meth:`WarmWatchdog.start`).

        Returns:
            The watchdog: wait for and kill ``.proc`` as for the command itself; pass it to
            :meth:`done` once it has exited (or been killed and reaped).

        Raises:
            ValueError: a malformed command.
            OSError: no watchdog process could be started.
        """
        watchdog = self._take()
        try:
            try:
                watchdog.start(argv, cwd=cwd, env=env, fds=fds)
            except OSError:  # it died while idle: one fresh try
                self._discard(watchdog)
                watchdog = WarmWatchdog()
                watchdog.start(argv, cwd=cwd, env=env, fds=fds)
        except BaseException:
            self._discard(watchdog)
            with self._lock:
                self._busy -= 1
            raise
        self._refill()
        return watchdog

    def done(self, watchdog: WarmWatchdog) -> None:
        """A command's watchdog has finished: close its socket."""
        watchdog.close()
        with self._lock:
            self._busy -= 1

    def wait_ready(self, timeout: float = 10.0) -> bool:
        """Wait up to ``timeout`` seconds (for each) until every idle watchdog has started;
        True if all have."""
        with self._lock:
            idle = list(self._idle)
        return all(w.ready(timeout) for w in idle)

    def close(self) -> None:
        """Stop the idle watchdogs and reap them (running commands are not touched)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for w in idle:
            self._discard(w)

    def _take(self) -> WarmWatchdog:
        with self._lock:
            self._busy += 1
            while self._idle:
                w = self._idle.pop()
                if w.proc.poll() is None:
                    return w
                w.close()
        try:
            return WarmWatchdog()
        except BaseException:
            with self._lock:
                self._busy -= 1
            raise

    def _refill(self) -> None:
        with self._lock:
            missing = min(max(self._busy, 1), self.cap) - len(self._idle)
        for _ in range(missing):
            try:
                w = WarmWatchdog()
            except OSError:  # the next command starts one itself (and reports the error)
                return
            with self._lock:
                self._idle.append(w)

    @staticmethod
    def _discard(w: WarmWatchdog) -> None:
        """Close a watchdog that runs no command of ours and reap it."""
        w.close()
        try:
            w.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            w.proc.kill()
            w.proc.wait()

    def _after_fork_in_child(self) -> None:
        self._lock = threading.Lock()
        self._idle = []
        self._busy = 0


POOL = WarmPool()
"""The process's pool, used by :meth:`jobbench.sandbox.Sandbox.run`."""

_inherited: list[WarmWatchdog] = []
"""Watchdogs of the parent seen by a forked child (kept so their ``Popen`` objects are never
collected there: they are not this process's children)."""


def _forget_after_fork() -> None:
    for w in list(_open):
        _inherited.append(w)
        w._forget()
    POOL._after_fork_in_child()


os.register_at_fork(after_in_child=_forget_after_fork)
atexit.register(POOL.close)
