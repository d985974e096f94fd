"""Processes: whether one exists, and names that record the process that made them.

A temporary file or directory named ``<prefix><pid>-<random>`` states its owner in the same
step that creates it, so no moment exists when it has none; whoever finds it later can tell
a leftover of a dead process (safe to remove) from the work of a live one. The pull staging
directories (``jobbench/tasks/_pull.py``), trial scratch directories
(``jobbench/sandbox/_workspace.py``) and the report's new drill-down directory
(``jobbench/report/_write.py``) are named so.
"""

from __future__ import annotations

import os
import re

PID_MAX = 2**22
"""Largest process id Linux hands out (``PID_MAX_LIMIT`` on 64-bit kernels); a larger number
in a name is no process's."""


def process_exists(pid: int) -> bool:
    """Whether a process with id ``pid`` exists (one of another user counts); False for a
    number no process can have (0, negative, above :data:`PID_MAX`)."""
    if not 0 < pid <= PID_MAX:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    return True


def owned_prefix(prefix: str) -> str:
    """``<prefix><pid of this process>-``: the start of a name owned by this process (give it
    to :func:`tempfile.mkdtemp` as ``prefix``)."""
    return f"{prefix}{os.getpid()}-"


def name_owner(name: str, prefix: str) -> int | None:
    """The process id in ``name`` when it is ``<prefix><pid>-<anything>`` (see
    :func:`owned_prefix`), else None (a pid of more than 10 digits is not one)."""
    m = re.fullmatch(rf"{re.escape(prefix)}([1-9][0-9]{{0,9}})-.+", name, re.DOTALL)
    return int(m.group(1)) if m else None


def left_by_dead_process(name: str, prefix: str) -> bool:
    """Whether ``name`` was made by a process (:func:`name_owner`) that no longer exists."""
    pid = name_owner(name, prefix)
    return pid is not None and not process_exists(pid)
