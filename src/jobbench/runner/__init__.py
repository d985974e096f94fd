"""Trials, resume and the local pool of concurrent trials; ``jobbench run`` chains
run → grade → report.

Public API:
    :func:`run_trials`, :class:`RunConfig`, :class:`RunSummary`, :class:`AgentSpec`,
    :class:`PlannedTrial`, :func:`plan`, :func:`load_finished`, :func:`trial_id`,
    :func:`safe_name`, :func:`model_label`, :func:`read_lock`, :class:`RunConfigError`,
    :func:`export_official`, :func:`run_trial_once`, :class:`TrialEnv`,
    :func:`find_invalid`, :class:`InvalidTasks`, :class:`InvalidDatasetError`; executors:
    :class:`Executor`, :class:`LocalExecutor`, :func:`make_executor`,
    :class:`ExecutorError`, :data:`EXECUTORS` (the Dask one lives in
    ``jobbench.runner._dask`` and is imported only on request).
"""

from ._executor import (
    EXECUTORS,
    Executor,
    ExecutorError,
    LocalExecutor,
    Preparation,
    TrialBatch,
    execute_trial,
    make_executor,
)
from ._export import ExportSummary, export_official
from ..tasks import InvalidDatasetError, InvalidTasks, find_invalid
from ._lock import RunConfigError, RunDirLock, merge_lock, read_lock, write_lock
from ._paths import (
    DELIVERABLES,
    GRADES,
    LOCK_FILE,
    NO_MODEL,
    REPORT,
    TRAJECTORY,
    TRIAL_JSON,
    TRIALS,
    AgentSpec,
    config_label,
    model_label,
    safe_name,
    trial_dir,
    trial_id,
)
from ._run import PlannedTrial, RunConfig, RunSummary, load_finished, plan, run_trials
from ._trial import TrialEnv, remove_stale_grades, run_trial_once

__all__ = [
    "DELIVERABLES",
    "EXECUTORS",
    "Executor",
    "ExecutorError",
    "LocalExecutor",
    "Preparation",
    "TrialBatch",
    "execute_trial",
    "make_executor",
    "GRADES",
    "LOCK_FILE",
    "NO_MODEL",
    "REPORT",
    "TRAJECTORY",
    "TRIAL_JSON",
    "TRIALS",
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
    "remove_stale_grades",
    "run_trial_once",
    "run_trials",
    "safe_name",
    "trial_dir",
    "trial_id",
    "write_lock",
]
