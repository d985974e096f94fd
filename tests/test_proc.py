"""Process ids in names (``jobbench._proc``): who made a temporary directory, and whether it
is a leftover of a dead process."""

from __future__ import annotations

import os
import subprocess

from jobbench._proc import (
    PID_MAX,
    left_by_dead_process,
    name_owner,
    owned_prefix,
    process_exists,
)


def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_process_exists() -> None:
    assert process_exists(os.getpid()) and process_exists(1)  # pid 1 always exists
    assert not process_exists(_dead_pid())
    for impossible in (0, -1, PID_MAX + 1, 10**20):  # os.kill would raise OverflowError
        assert not process_exists(impossible)


def test_names_state_their_owner() -> None:
    assert owned_prefix("jb-") == f"jb-{os.getpid()}-"
    assert name_owner(f"jb-{os.getpid()}-k930_9sw", "jb-") == os.getpid()
    assert name_owner(".drilldowns-new-12-x", ".drilldowns-new-") == 12
    for other in ("jb-abc_1234", "jb-12", "jb-12-", "jb-012-x", "jb--3-x", "xjb-12-x"):
        assert name_owner(other, "jb-") is None, other
    assert name_owner("jb-99999999999999999999-x", "jb-") is None  # not a process id
    assert name_owner("a.b-7-x", "a.b-") == 7 and name_owner("axb-7-x", "a.b-") is None


def test_only_a_dead_owners_leftover_is_one() -> None:
    assert left_by_dead_process(f"jb-{_dead_pid()}-x", "jb-")
    assert not left_by_dead_process(f"jb-{os.getpid()}-x", "jb-")
    assert not left_by_dead_process("jb-oldstyle", "jb-")  # no owner named: not judged here
    assert left_by_dead_process(f"jb-{PID_MAX + 5}-x", "jb-")
