"""Parent side of the extraction workers: start, call with a timeout, kill, reuse.

Workers are reused across calls (one per concurrent caller, created on demand) and killed
at interpreter exit. A worker that times out or crashes is killed with its process group
and replaced on the next call.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from ._worker import HEADER, decode_reply

STARTUP_TIMEOUT = 120.0
"""Seconds a new worker may take to start and answer its first ping."""


class WorkerTimeout(Exception):
    """The worker did not answer within the time budget (it has been killed)."""


class WorkerCrashed(Exception):
    """The worker died or broke the protocol (it has been killed)."""


def _package_root() -> str:
    return str(Path(__file__).resolve().parents[2])


class Worker:
    """One extraction worker process."""

    def __init__(self, memory_mb: int):
        env = dict(os.environ)
        root = _package_root()
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.setdefault("TQDM_DISABLE", "1")
        debug = bool(os.environ.get("JOBBENCH_EXTRACT_DEBUG"))
        self.tmpdir = tempfile.mkdtemp(prefix="jobbench-worker-")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jobbench.extract._worker", str(memory_mb), self.tmpdir],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None if debug else subprocess.DEVNULL,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
        self.memory_mb = memory_mb
        # start-up (interpreter, pydantic) must not eat into the first file's time budget
        self.call({"op": "ping"}, timeout=STARTUP_TIMEOUT)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _read_exact(self, n: int, deadline: float) -> bytes:
        assert self.proc.stdout is not None  # opened with stdout=PIPE
        fd = self.proc.stdout.fileno()
        buf = bytearray()
        while len(buf) < n:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerTimeout()
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                raise WorkerTimeout()
            chunk = os.read(fd, min(n - len(buf), 1 << 20))
            if not chunk:
                raise WorkerCrashed(f"extraction worker exited (code {self.proc.poll()})")
            buf += chunk
        return bytes(buf)

    def call(self, request: dict, timeout: float) -> dict:
        """Send ``request`` and wait at most ``timeout`` seconds for the reply.

        Raises:
            WorkerTimeout, WorkerCrashed: the worker has been killed.
        """
        data = json.dumps(request, ensure_ascii=True).encode("ascii")
        deadline = time.monotonic() + timeout
        assert self.proc.stdin is not None  # opened with stdin=PIPE
        try:
            self.proc.stdin.write(HEADER.pack(len(data)) + data)
            self.proc.stdin.flush()
            (n,) = HEADER.unpack(self._read_exact(HEADER.size, deadline))
            reply = decode_reply(self._read_exact(n, deadline))
        except WorkerTimeout:
            self.kill()
            raise
        except (OSError, ValueError, WorkerCrashed) as exc:
            code = self.proc.poll()
            self.kill()
            if isinstance(exc, WorkerCrashed):
                raise
            raise WorkerCrashed(
                f"extraction worker failed ({type(exc).__name__}; exit code {code})"
            ) from exc
        return reply

    def kill(self) -> None:
        """Terminate the worker's process group (SIGTERM, then SIGKILL after 2 s)."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except OSError:
                pass
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is None:
                continue
            try:
                stream.close()
            except OSError:
                pass
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    def close(self) -> None:
        """Ask the worker to exit (stdin EOF), killing it if it lingers."""
        assert self.proc.stdin is not None  # opened with stdin=PIPE
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.kill()


class WorkerPool:
    """Idle workers per memory limit; thread-safe."""

    def __init__(self) -> None:
        self._idle: dict[int, list[Worker]] = {}
        self._all: set[Worker] = set()
        self._lock = threading.Lock()
        atexit.register(self.shutdown)

    def acquire(self, memory_mb: int) -> Worker:
        with self._lock:
            idle = self._idle.setdefault(memory_mb, [])
            while idle:
                w = idle.pop()
                if w.alive():
                    return w
                self._all.discard(w)
        w = Worker(memory_mb)
        with self._lock:
            self._all.add(w)
        return w

    def release(self, worker: Worker) -> None:
        with self._lock:
            if worker.alive():
                self._idle.setdefault(worker.memory_mb, []).append(worker)
            else:
                self._all.discard(worker)

    def shutdown(self) -> None:
        """Stop every worker (called at exit)."""
        with self._lock:
            workers = list(self._all)
            self._all.clear()
            self._idle.clear()
        for w in workers:
            w.close()

    def call(self, request: dict, *, memory_mb: int, timeout: float) -> dict:
        """Run ``request`` on an idle (or new) worker."""
        w = self.acquire(memory_mb)
        try:
            return w.call(request, timeout)
        finally:
            self.release(w)


POOL = WorkerPool()
