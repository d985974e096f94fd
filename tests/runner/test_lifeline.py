"""The lifeline watchdog: a sandboxed command dies with the harness however the harness dies,
and otherwise reports the command's own exit status."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from jobbench.sandbox import Lifeline

SRC = Path(__file__).resolve().parents[2] / "src"

HARNESS = """
import subprocess, sys, time
from jobbench.sandbox import Lifeline
line = Lifeline()
proc = subprocess.Popen(line.wrap(["sleep", "300"]), pass_fds=line.pass_fds,
                        start_new_session=True)
line.started()
print(proc.pid, flush=True)
time.sleep(300)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


def test_command_dies_when_the_harness_is_sigkilled():
    env = dict(os.environ, PYTHONPATH=str(SRC))
    harness = subprocess.Popen(
        [sys.executable, "-c", HARNESS], stdout=subprocess.PIPE, env=env, text=True
    )
    watchdog = int(harness.stdout.readline())
    deadline = time.monotonic() + 10
    children: list[int] = []
    while time.monotonic() < deadline and not children:  # the watchdog has started `sleep`
        path = Path(f"/proc/{watchdog}/task/{watchdog}/children")
        children = [int(x) for x in path.read_text().split()] if path.exists() else []
        time.sleep(0.02)
    assert children, "the watchdog never started its command"
    sleeper = children[0]
    assert Path(f"/proc/{sleeper}/cmdline").read_bytes().split(b"\0")[0] == b"sleep"
    os.kill(harness.pid, signal.SIGKILL)
    harness.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (_alive(sleeper) or _alive(watchdog)):
        time.sleep(0.02)
    assert not _alive(sleeper), "the sandboxed command outlived the killed harness"
    assert not _alive(watchdog)


def _run(argv: list[str]) -> int:
    line = Lifeline()
    proc = subprocess.Popen(line.wrap(argv), pass_fds=line.pass_fds, start_new_session=True)
    line.started()
    try:
        return proc.wait(timeout=30)
    finally:
        line.close()


def test_exit_status_passes_through():
    assert _run([sys.executable, "-c", "raise SystemExit(3)"]) == 3
    assert _run(["true"]) == 0
    assert (
        _run([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"])
        == -signal.SIGTERM
    )


def test_a_missing_command_exits_127():
    assert _run(["/nonexistent/jobbench-no-such-binary"]) == 127


def test_closing_the_lifeline_stops_a_running_command():
    line = Lifeline()
    proc = subprocess.Popen(
        line.wrap(["sleep", "300"]), pass_fds=line.pass_fds, start_new_session=True
    )
    line.started()
    time.sleep(0.3)
    line.close()
    assert proc.wait(timeout=10) == -signal.SIGKILL


def test_the_watchdog_script_imports_only_the_bare_standard_library():
    # one interpreter start per sandboxed command: no pathlib, no enum-based signal module
    line = Lifeline()
    argv = line.wrap(["true"])
    try:
        run = subprocess.run(
            [argv[0], "-X", "importtime", *argv[1:]],
            pass_fds=line.pass_fds,
            capture_output=True,
            text=True,
            timeout=30,
        )
    finally:
        line.close()
    assert run.returncode == 0, run.stderr
    imported = {row.rsplit("|", 1)[-1].strip() for row in run.stderr.splitlines()}
    assert "os" in imported
    assert not imported & {"pathlib", "signal", "enum", "re", "jobbench"}
