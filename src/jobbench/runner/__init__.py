"""Trials, resume and the local pool of concurrent trials; ``jobbench run`` chains
run → grade → report.

Public API:
    :func:`run_trials`, :class:`RunConfig`, :class:`RunSummary`, :class:`AgentSpec`,
    :class:`PlannedTrial`, :func:`plan`, :func:`load_finished`, :func:`read_lock`,
    :func:`merge_lock`, :func:`write_lock`, :class:`RunDirLock`, :class:`RunConfigError`,
    :func:`export_official`, :func:`run_trial_once`, :class:`TrialEnv`,
    :func:`find_invalid`, :class:`InvalidTasks`, :class:`InvalidDatasetError`; executors:
    :class:`Executor`, :class:`LocalExecutor`, :func:`make_executor`,
    :class:`ExecutorError`, :data:`EXECUTORS` (the Dask one lives in
    ``jobbench.runner._dask`` and is imported only on request). :func:`trial_id`,
    :func:`safe_name`, :func:`model_label`, :func:`config_label` and :data:`NO_MODEL` are
    :mod:`jobbench.rundir`'s, re-exported; the run directory's layout is that module's.
"""

from ..rundir import NO_MODEL, config_label, model_label, safe_name, trial_id
from ..tasks import (
    InvalidDatasetError,
    InvalidTasks,
    default_dataset,  # the runner's default, owned by the dataset stage
    find_invalid,
)
from ._executor import (
    Executor,
    ExecutorError,
    LocalExecutor,
    Preparation,
    TrialBatch,
    execute_trial,
)
from ._export import ExportSummary, export_official
from ._factory import EXECUTORS, make_executor
from ._lock import RunConfigError, RunDirLock, merge_lock, read_lock, write_lock
from ._run import PlannedTrial, RunConfig, RunSummary, load_finished, plan, run_trials
from ._spec import (
    DEFAULT_SPLIT,
    AgentSpec,
    AgentSpecError,
    agent_specs,
    default_run_name,
)
from ._trial import TrialEnv, run_trial_once

__all__ = [
    "DEFAULT_SPLIT",
    "AgentSpecError",
    "agent_specs",
    "default_dataset",
    "default_run_name",
    "EXECUTORS",
    "Executor",
    "ExecutorError",
    "LocalExecutor",
    "Preparation",
    "TrialBatch",
    "execute_trial",
    "make_executor",
    "NO_MODEL",
    "AgentSpec",
    "ExportSummary",
    "InvalidDatasetError",
    "InvalidTasks",
    "find_invalid",
    "PlannedTrial",
    "RunConfig",
    "RunConfigError",
    "RunDirLock",
    "RunSummary",
    "TrialEnv",
    "config_label",
    "export_official",
    "load_finished",
    "merge_lock",
    "model_label",
    "plan",
    "read_lock",
    "run_trial_once",
    "run_trials",
    "safe_name",
    "trial_id",
    "write_lock",
]
