"""Warm watchdogs (started before their command): a sandboxed command still returns its exit
code and output, is killed on timeout or when the harness dies, and leaves no process behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from runner_helpers import needs_bwrap

from jobbench.sandbox import Limits, Sandbox
from jobbench.sandbox._warm import POOL, WarmPool, WarmWatchdog, encode_request

SRC = Path(__file__).resolve().parents[2] / "src"
ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("backend", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_a_quick_command_returns_its_exit_code_and_output(tmp_path, backend):
    box = Sandbox(tmp_path, backend=backend)
    for _ in range(3):  # the first on a fresh watchdog, the others on warm ones
        r = box.run(["sh", "-c", "echo out; echo err >&2; exit 3"], limits=Limits(timeout=30))
        assert (r.exit_code, r.stdout, r.stderr, r.timed_out) == (3, "out\n", "err\n", False)
    assert box.run(["true"]).exit_code == 0


@pytest.mark.parametrize("backend", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_stdin_and_streamed_stdout_reach_the_command(tmp_path, backend):
    lines: list[str] = []
    r = Sandbox(tmp_path, backend=backend).run(
        ["cat"], stdin=b"a\nb\n", on_stdout_line=lines.append, limits=Limits(timeout=30)
    )
    assert r.exit_code == 0 and lines == ["a", "b"]


def test_a_timeout_still_kills_a_long_command(tmp_path):
    t0 = time.monotonic()
    r = Sandbox(tmp_path, backend="none").run(["sleep", "100"], limits=Limits(timeout=5))
    assert r.timed_out and r.exit_code == -signal.SIGKILL
    assert time.monotonic() - t0 < 60  # killed at the limit, not after the command's 100 s


def test_a_missing_command_exits_127_with_a_message(tmp_path):
    err = tmp_path / "err"
    with open(err, "wb") as f:
        w = POOL.start(["jobbench-no-such-binary"], cwd="/", env=ENV, fds={2: f.fileno()})
    try:
        assert w.proc.wait(timeout=30) == 127
    finally:
        POOL.done(w)
    assert "cannot start jobbench-no-such-binary" in err.read_text()
    r = Sandbox(tmp_path, backend="none").run(["jobbench-no-such-binary"])
    assert r.exit_code == 127 and "jobbench-no-such-binary" in r.stderr


def test_a_signal_and_the_environment_pass_through():
    w = POOL.start(
        ["sh", "-c", 'test "$JB_X" = "a b" && kill -TERM $$'],
        cwd="/",
        env=dict(ENV, JB_X="a b"),
        fds={},
    )
    try:
        assert w.proc.wait(timeout=30) == -signal.SIGTERM
    finally:
        POOL.done(w)


def test_closing_the_socket_kills_the_running_command():
    w = POOL.start(["sleep", "300"], cwd="/", env=ENV, fds={})
    time.sleep(0.3)
    POOL.done(w)
    assert w.proc.wait(timeout=10) == -signal.SIGKILL


def test_an_idle_watchdog_exits_when_its_pool_closes():
    pool = WarmPool()
    w = POOL.start(["true"], cwd="/", env=ENV, fds={})  # a command through the shared pool
    w.proc.wait(timeout=30)
    POOL.done(w)
    pool._refill()
    idle = list(pool._idle)
    assert idle and pool.wait_ready(30)
    pool.close()
    assert all(x.proc.returncode == 0 for x in idle)  # reaped: no zombie left


def test_a_malformed_request_is_refused_before_sending():
    with pytest.raises(ValueError):
        encode_request(["a\0b"], "/", {}, [])
    with pytest.raises(ValueError):
        encode_request(["true"], "/", {"A=B": "x"}, [])
    w = WarmWatchdog()
    with pytest.raises(ValueError):
        w.start([], cwd="/", env=ENV, fds={})
    w.close()
    assert w.proc.wait(timeout=30) == 0


HARNESS = """
import os, sys, time
from jobbench.sandbox._warm import POOL
w = POOL.start(["sleep", "300"], cwd="/", env={"PATH": os.environ["PATH"]}, fds={})
print(w.proc.pid, *(x.proc.pid for x in POOL._idle), flush=True)
time.sleep(300)
"""


def test_command_and_idle_watchdogs_die_when_the_harness_is_sigkilled():
    env = dict(os.environ, PYTHONPATH=str(SRC))
    harness = subprocess.Popen(
        [sys.executable, "-c", HARNESS], stdout=subprocess.PIPE, env=env, text=True
    )
    watchdog, *idle = (int(x) for x in harness.stdout.readline().split())
    deadline = time.monotonic() + 10
    children: list[int] = []
    while time.monotonic() < deadline and not children:  # the watchdog has started `sleep`
        path = Path(f"/proc/{watchdog}/task/{watchdog}/children")
        children = [int(x) for x in path.read_text().split()] if path.exists() else []
        time.sleep(0.02)
    assert children, "the watchdog never started its command"
    sleeper = children[0]
    assert Path(f"/proc/{sleeper}/cmdline").read_bytes().split(b"\0")[0] == b"sleep"
    assert idle, "a replacement watchdog waits for the next command"
    os.kill(harness.pid, signal.SIGKILL)
    harness.wait()
    deadline = time.monotonic() + 10
    pids = [sleeper, watchdog, *idle]
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.02)
    assert not _alive(sleeper), "the sandboxed command outlived the killed harness"
    assert not any(_alive(p) for p in pids)


def test_a_forked_child_does_not_hold_the_parents_watchdogs():
    w = POOL.start(["sleep", "300"], cwd="/", env=ENV, fds={})
    try:
        pid = os.fork()
        if pid == 0:  # the child: its copies of the sockets are closed, its pool is empty
            os._exit(0 if not POOL._idle and w._sock is None else 1)
        assert os.waitpid(pid, 0)[1] == 0
        assert w._sock is not None  # the parent's own copy is untouched
    finally:
        POOL.done(w)
    assert w.proc.wait(timeout=10) == -signal.SIGKILL
