"""jobbench.rundir: the run directory's owner (layout, records, readers and writers).

Every package reads and writes run directories through this one (see
:mod:`jobbench.rundir._store` for the layout tree and the rules): records are read only from
the paths the run directory owns, a record's identity must match its location, every id is
validated before it becomes a path, writes never pass through a symbolic link, and every
problem is a :class:`RunDirProblem` naming the file and the field.

Public API:
    :class:`RunDir` (layout, readers, writers), :class:`RunLock` / :class:`LockAgent` /
    :class:`LockConfig` / :class:`InvalidTaskEntry` (``lock.json``), :class:`Loaded`,
    :class:`TrialScan`, :class:`GradeScan`, :class:`Listing`, :class:`TrialDeliverables`,
    :class:`GradeWriter`, :class:`RunDirProblem`, :data:`ProblemKind`,
    :class:`RunDirError`, :func:`read_record_file`, :func:`parse_record`,
    :func:`folder_manifest`, :func:`copy_run_records`; ids: :func:`trial_id`,
    :func:`parse_trial_id`, :class:`TrialKey`, :func:`check_component`,
    :func:`check_task_id`, :class:`UnsafeIdError`, :func:`safe_name`, :func:`model_label`,
    :func:`config_label`, :data:`NO_MODEL`; :data:`SCHEMA_VERSION`; which judge's grades to
    read: :func:`choose_judge_key`, :func:`judge_key_note`, :class:`JudgeKeyError`.
"""

from ..records import SCHEMA_VERSION
from ._ids import (
    NO_MODEL,
    TrialKey,
    UnsafeIdError,
    check_component,
    check_task_id,
    config_label,
    model_label,
    parse_trial_id,
    safe_name,
    trial_id,
)
from ._judge_keys import JudgeKeyError, choose_judge_key, judge_key_note
from ._lock import InvalidTaskEntry, LockAgent, LockConfig, RunLock
from ._store import (
    GradeScan,
    GradeWriter,
    Listing,
    Loaded,
    ProblemKind,
    RunDir,
    RunDirError,
    RunDirProblem,
    TrialDeliverables,
    TrialScan,
    copy_run_records,
    folder_manifest,
    parse_record,
    read_record_file,
)

__all__ = [
    "NO_MODEL",
    "SCHEMA_VERSION",
    "GradeScan",
    "GradeWriter",
    "InvalidTaskEntry",
    "JudgeKeyError",
    "Listing",
    "Loaded",
    "LockAgent",
    "LockConfig",
    "ProblemKind",
    "RunDir",
    "RunDirError",
    "RunDirProblem",
    "RunLock",
    "TrialDeliverables",
    "TrialKey",
    "TrialScan",
    "UnsafeIdError",
    "check_component",
    "check_task_id",
    "config_label",
    "copy_run_records",
    "folder_manifest",
    "model_label",
    "parse_record",
    "parse_trial_id",
    "read_record_file",
    "safe_name",
    "trial_id",
    "choose_judge_key",
    "judge_key_note",
]
