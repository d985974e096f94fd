"""Work of the report split over forked processes (Linux), with the same result in one.

The report reads and computes in parts that do not depend on each other (slices of a run's
records; groups of configurations). :func:`in_parts` runs part 0 here and the others in
forked worker processes of a :class:`concurrent.futures.ProcessPoolExecutor`, whose results
come back pickled (what the parts share is inherited through the fork, never pickled); a
part whose worker fails or dies is computed again here, so a result never depends on the
fork. :func:`can_fork` is the one rule for when the report forks.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

S = TypeVar("S")
T = TypeVar("T")

MAX_PARTS = 4
"""At most this many processes (this one included) share one piece of work by default."""


def can_fork() -> bool:
    """Whether the report may fork: on Linux, in a process with no other Python thread (a
    fork copies only the calling thread; a lock another thread holds would never be released
    in the child), that is not a daemonic :mod:`multiprocessing` worker (which may not have
    children) and does not ignore SIGCHLD (its children could not be waited for), unless
    ``JOBBENCH_REPORT_FORK=0``."""
    return (
        sys.platform == "linux"
        and os.environ.get("JOBBENCH_REPORT_FORK", "1") != "0"
        and threading.active_count() == 1
        and not multiprocessing.current_process().daemon
        and signal.getsignal(signal.SIGCHLD) is not signal.SIG_IGN
    )


def die_with_parent(parent: int) -> None:
    """In a forked child of process ``parent``: ask the kernel to SIGKILL this process when
    its parent is gone (Linux ``prctl(PR_SET_PDEATHSIG)``), and leave at once if it is gone
    already. A child killed with its parent never blocks on a pipe nobody reads."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # no prctl here: the parent's own clean-up must do
        pass
    if os.getppid() != parent:
        os._exit(1)


_PR_SET_PDEATHSIG = 1
"""``PR_SET_PDEATHSIG`` of ``<linux/prctl.h>``."""


def parts_available() -> int:
    """How many processes :func:`in_parts` uses by default: the CPUs this process may run
    on, at most :data:`MAX_PARTS`; 1 when :func:`can_fork` is false."""
    if not can_fork():
        return 1
    return max(1, min(MAX_PARTS, len(os.sched_getaffinity(0))))


def processes_for(items: int, per_process: int) -> int:
    """How many processes share ``items`` items of work when each forked process should get
    at least ``per_process`` of them (a fork and its pickled result cost about as much as a
    few milliseconds of work): at most :func:`parts_available`, at least 1."""
    return max(1, min(parts_available(), items // max(1, per_process)))


def in_parts(
    work: Callable[[S, tuple[int, int]], T], shared: S, processes: int | None = None
) -> list[T]:
    """``[work(shared, (0, n)), …, work(shared, (n-1, n))]`` for ``n`` processes, parts
    ``1 … n-1`` computed in forked workers while this process computes part 0; one part
    ``(0, 1)`` computed here when there is one process (or :func:`can_fork` is false).

    Args:
        work: a module-level function (it is pickled by name) taking ``shared`` and
            ``(i, n)``; its result must pickle.
        shared: what every part reads; never pickled: a forked worker inherits it.
        processes: ``n`` (default :func:`parts_available`).

    Returns:
        The results in part order. A part whose worker raised or died is computed here
        again (so its exception, if any, is raised from here); when no worker can be
        started, one part ``(0, 1)`` is computed here. Workers die with this process
        (:func:`die_with_parent`).
    """
    global _SHARED
    n = parts_available() if processes is None else processes
    if n <= 1 or not can_fork():
        return [work(shared, (0, 1))]
    _SHARED = shared
    try:
        ex = None
        try:
            ex = ProcessPoolExecutor(
                max_workers=n - 1,
                mp_context=multiprocessing.get_context("fork"),
                initializer=die_with_parent,
                initargs=(os.getpid(),),
            )
            futures = [ex.submit(_inherited, work, (i, n)) for i in range(1, n)]
        except Exception:  # no worker could be started (e.g. a process limit): all here
            if ex is not None:
                with contextlib.suppress(Exception):
                    ex.shutdown(wait=False, cancel_futures=True)
            return [work(shared, (0, 1))]
        with ex:
            results = [work(shared, (0, n))]
            for i, fut in enumerate(futures, 1):
                try:
                    results.append(fut.result())
                except Exception:  # the worker raised, died or could not return its result
                    results.append(work(shared, (i, n)))
    finally:
        _SHARED = None
    return results


_SHARED: Any = None
"""What :func:`in_parts` shares with its forked workers while it runs."""


def _inherited(work: Callable[[Any, tuple[int, int]], T], part: tuple[int, int]) -> T:
    """In a forked worker: ``work`` on the ``shared`` of the :func:`in_parts` call that
    forked it."""
    return work(_SHARED, part)
