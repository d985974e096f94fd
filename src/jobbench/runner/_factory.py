"""Build an executor by name: :func:`make_executor` (``local``, ``dask``, ``dask-local``).

Kept apart from ``_executor`` (the interface and the local pool) so that the interface does
not import its Dask implementation, which imports the interface.
"""

from __future__ import annotations

from ._executor import Executor, ExecutorError, LocalExecutor

EXECUTORS = ("local", "dask", "dask-local")
"""Executor names accepted by ``jobbench run --executor``."""


def make_executor(
    name: str = "local",
    *,
    max_trials: int = 1,
    scheduler: str | None = None,
    workers: int = 2,
    threads_per_worker: int = 1,
    retries: int = 2,
) -> Executor:
    """The executor called ``name``.

    Args:
        name: ``local`` (thread pool of ``max_trials``), ``dask`` (connect to the scheduler
            at ``scheduler``: an address such as ``tcp://host:8786`` or the path of a
            scheduler file) or ``dask-local`` (start a ``LocalCluster`` of ``workers``
            processes with ``threads_per_worker`` trials each).
        retries: Dask ``retries`` of a job that raised (a killed worker is rescheduled by
            Dask itself, up to ``distributed.scheduler.allowed-failures`` times).

    Raises:
        ExecutorError: unknown name, missing scheduler, Dask not installed, scheduler
            unreachable.
    """
    if name == "local":
        return LocalExecutor(max_trials)
    if name not in EXECUTORS:
        raise ExecutorError(f"unknown executor {name!r}; expected one of {', '.join(EXECUTORS)}")
    if name == "dask" and not scheduler:
        raise ExecutorError(
            "--executor dask needs --scheduler ADDRESS (e.g. tcp://head-node:8786, "
            "or the path of a scheduler file); use --executor dask-local to start "
            "a cluster on this machine"
        )
    try:
        from ._dask import DaskExecutor
    except ImportError as exc:
        raise ExecutorError(
            f"the Dask executors need Dask distributed ({exc}); install it with "
            "pip install 'jobbench[dask]'"
        ) from None
    if name == "dask":
        return DaskExecutor(scheduler, retries=retries)
    return DaskExecutor(
        None, n_workers=workers, threads_per_worker=threads_per_worker, retries=retries
    )
