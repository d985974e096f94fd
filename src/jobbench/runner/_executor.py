"""Where trials and grading jobs run: the :class:`Executor` interface and its default, the
local pool of threads (:class:`LocalExecutor`).

An executor receives the trials to run (already planned, resume already applied) and
returns one record per trial, in completion order, through a callback. Every
implementation runs the same function per trial, :func:`execute_trial` (one trial with its
in-invocation retries of infrastructure failures), so the records do not depend on where a
trial ran. The run directory is the only shared state: ``trial.json`` and grade records are
written there (atomically) by whoever ran the job.

Implementations:

* :class:`LocalExecutor` (``--executor local``, the default): a thread pool of
  ``--max-trials`` trials in this process.
* ``DaskExecutor`` in ``runner/_dask.py`` (``--executor dask --scheduler ADDRESS`` or
  ``--executor dask-local --dask-workers N``): Dask distributed tasks. Dask is imported only
  there; the base install never needs it.

:func:`jobbench.runner.make_executor` (``runner/_factory.py``) builds one by name; this module
imports neither ``_dask`` nor ``_run``, so the three form no import circle.
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..records import GradeRecord, TrialAttempt, TrialRecord, TrialStatus
from ..sandbox import ResolvedBackend, kill_all_sandboxes, resolve_backend
from ._trial import TrialEnv, run_trial_once

if TYPE_CHECKING:  # pragma: no cover
    from ..agents import Agent
    from ..judge import JudgeConfig, TrialInput
    from ._plan import PlannedTrial

Emit = Callable[[str], None]
EventHook = Callable[[str, "PlannedTrial", TrialRecord | None], None]
ResultHook = Callable[["PlannedTrial", TrialRecord | None], None]


class ExecutorError(RuntimeError):
    """The executor cannot run this run: a missing optional dependency, an unreachable
    scheduler, workers that cannot see the run directory or the dataset, workers without
    the sandbox, or jobs that failed on the cluster. The message says which and how to
    fix it."""


@dataclass
class Preparation:
    """What :meth:`Executor.prepare` found.

    Attributes:
        backend: the sandbox backend trials will use (``bwrap`` or ``none``).
        workers: one description per worker (Dask: address, host, pid, scratch root);
            empty for the local pool.
        notes: remarks worth showing the user (e.g. no sandbox on the workers).
    """

    backend: ResolvedBackend
    workers: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class TrialBatch:
    """What every trial of one invocation shares.

    Attributes:
        env: run directory, dataset, limits, sandbox backend, scratch root, cancel event.
        agents: one agent instance per configuration label (``agent@model``); remote
            executors build their own from ``PlannedTrial.spec`` instead.
        infra_retries: retries of infra-failed attempts within the invocation.
        retry_backoff: seconds before the first retry (doubles, at most 60).
        scratch_explicit: the scratch root was chosen by the user (remote workers use it
            as given); otherwise each worker uses its own default
            (``$JOBBENCH_SCRATCH`` or ``<temp>/jobbench-scratch``).
    """

    env: TrialEnv
    agents: dict[str, Agent]
    infra_retries: int = 2
    retry_backoff: float = 5.0
    scratch_explicit: bool = True


def execute_trial(
    pt: PlannedTrial,
    agent: Agent,
    env: TrialEnv,
    *,
    infra_retries: int,
    retry_backoff: float,
    emit: Emit | None = None,
) -> TrialRecord | None:
    """Run one trial, retrying infrastructure failures ``infra_retries`` times with
    backoff (``retry_backoff`` seconds, doubling, at most 60); a permanent one
    (``details.infra_permanent``: the endpoint rejects the request deterministically) is
    not retried.

    Args:
        pt: the planned trial.
        agent: an instance of ``pt.spec.agent``.
        env: shared trial settings (its ``cancel`` event stops the trial).
        infra_retries, retry_backoff: see above.
        emit: called with ``"start"`` before the first attempt and ``"retry"`` before each
            retry.

    Returns:
        The record written to ``trial.json`` (the last attempt's), or None when the run was
        interrupted (nothing is written then).
    """
    attempts: list[TrialAttempt] = []
    backoff = retry_backoff
    for attempt in range(infra_retries + 1):
        if env.cancel.is_set():
            return None
        if emit:
            emit("start" if attempt == 0 else "retry")
        rec = run_trial_once(pt.task, pt.digest, pt.spec, agent, pt.epoch, env, attempts)
        if rec is None or rec.status != TrialStatus.infra_error or attempt == infra_retries:
            return rec
        if rec.details.get("infra_permanent"):
            return rec  # a deterministic rejection: the same attempt would fail the same way
        attempts.append(TrialAttempt(attempt=attempt + 1, status=rec.status.value, error=rec.error))
        if env.cancel.wait(backoff):
            return None
        backoff = min(backoff * 2, 60.0)
    return None


class Executor:
    """Where the trials and grading jobs of a run execute.

    Use as a context manager (or call :meth:`close`). One executor may serve several calls
    (``jobbench run`` uses the same one for trials and for grading).

    Subclasses implement :meth:`prepare`, :meth:`run_trials` and :meth:`grade`; they must
    return exactly the records :func:`execute_trial` and the judge's ``Grader`` produce, and
    write them to the run directory, so that results never depend on the executor.
    """

    name: str = ""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def prepare(
        self,
        *,
        run_dir: Path,
        dataset_root: Path,
        sandbox: Literal["auto", "bwrap", "none"],
        scratch_root: Path | None,
    ) -> Preparation:
        """Check that this executor can run trials of ``run_dir`` and resolve the sandbox
        backend where trials will run.

        Raises:
            ExecutorError: it cannot (the message says why and how to fix it).
            jobbench.sandbox.SandboxError: ``sandbox="bwrap"`` and bubblewrap does not work.
        """
        raise NotImplementedError

    def run_trials(
        self,
        trials: list[PlannedTrial],
        batch: TrialBatch,
        *,
        on_event: EventHook | None,
        on_result: ResultHook,
    ) -> None:
        """Run ``trials``; call ``on_result(trial, record_or_None)`` in the calling thread as
        each finishes (None: interrupted, nothing recorded), and ``on_event(kind, trial,
        None)`` with ``start``/``retry`` (from any thread). Returns when all are done or,
        after ``batch.env.cancel`` is set, when the running ones have stopped."""
        raise NotImplementedError

    def grade(
        self, inputs: list[TrialInput], config: JudgeConfig, *, progress: bool = False
    ) -> list[GradeRecord]:
        """Grade ``inputs`` (each record is also written to its ``out_path``).

        Returns:
            The records in the order of ``inputs``.
        """
        raise NotImplementedError

    def abort(self) -> None:
        """Stop everything now (Ctrl-C): kill running sandboxes, drop queued jobs."""

    def drain_warnings(self) -> list[str]:
        """Warnings gathered while running (e.g. shared storage lagging), then forgotten."""
        return []

    def close(self) -> None:
        """Release resources (threads, cluster connections, a local cluster)."""


class LocalExecutor(Executor):
    """Trials as threads of this process (``--max-trials`` at once); grading in this
    process with the judge's own pool of LLM calls. The default.

    Args:
        max_trials: trials run concurrently (at least 1).
    """

    name = "local"

    def __init__(self, max_trials: int = 1) -> None:
        self.max_trials = max(1, int(max_trials))

    def prepare(
        self,
        *,
        run_dir: Path,
        dataset_root: Path,
        sandbox: Literal["auto", "bwrap", "none"],
        scratch_root: Path | None,
    ) -> Preparation:
        return Preparation(backend=resolve_backend(sandbox))

    def run_trials(
        self,
        trials: list[PlannedTrial],
        batch: TrialBatch,
        *,
        on_event: EventHook | None,
        on_result: ResultHook,
    ) -> None:
        env = batch.env

        def work(pt: PlannedTrial) -> TrialRecord | None:
            emit = (lambda kind: on_event(kind, pt, None)) if on_event else None
            return execute_trial(
                pt,
                batch.agents[pt.spec.label],
                env,
                infra_retries=batch.infra_retries,
                retry_backoff=batch.retry_backoff,
                emit=emit,
            )

        pool = cf.ThreadPoolExecutor(max_workers=self.max_trials, thread_name_prefix="trial")
        try:
            futures = {pool.submit(work, pt): pt for pt in trials}
            pending = set(futures)
            while pending:
                finished, pending = cf.wait(pending, timeout=0.5, return_when=cf.FIRST_COMPLETED)
                for fut in finished:
                    on_result(futures[fut], fut.result())
                if env.cancel.is_set():
                    kill_all_sandboxes()
        except BaseException:
            env.cancel.set()
            kill_all_sandboxes()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)

    def grade(
        self, inputs: list[TrialInput], config: JudgeConfig, *, progress: bool = False
    ) -> list[GradeRecord]:
        from ..judge import Grader

        grader = Grader(config, progress=progress)
        try:
            return grader.grade(inputs)
        finally:
            grader.close()

    def abort(self) -> None:
        kill_all_sandboxes()


__all__ = [
    "Executor",
    "ExecutorError",
    "LocalExecutor",
    "Preparation",
    "TrialBatch",
    "execute_trial",
]
