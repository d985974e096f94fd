"""What the runner plans and what counts as finished: :class:`PlannedTrial` and
:func:`load_finished`, shared by the run loop (``_run``) and the executors (``_executor``,
``_dask``), which therefore import neither each other's modules nor ``_run``.

A trial counts as finished when ``trial.json`` holds a readable record of this run whose
status is not ``infra_error`` and whose task digest is the task's current one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..records import TrialRecord, TrialStatus
from ..rundir import RunDir, trial_id
from ..tasks import Task
from ._spec import AgentSpec


@dataclass
class PlannedTrial:
    """One (task, agent configuration, epoch) of the plan."""

    task: Task
    digest: str
    spec: AgentSpec
    epoch: int

    @property
    def trial_id(self) -> str:
        return trial_id(self.task.id, self.spec.agent, self.spec.model, self.epoch)


def load_finished(run_dir: Path, tid: str, digest: str) -> TrialRecord | None:
    """The trial's record if it counts as finished for ``digest`` (see module docstring),
    else None."""
    rec = RunDir(run_dir).read_trial(tid).record  # a missing, unreadable or foreign record: redo
    if rec is None or rec.status == TrialStatus.infra_error or rec.task_digest != digest:
        return None
    return rec
