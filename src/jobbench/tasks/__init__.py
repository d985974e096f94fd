"""Tasks, rubrics and criteria: the model, loading and validation of the public format.

Public API:
    :func:`load_dataset`, :func:`load_task`, :func:`discover_task_dirs`,
    :func:`parse_rubrics`, :func:`rubrics_schema`, :func:`task_digest`, :class:`Task`, :class:`Rubric`,
    :class:`Criterion`, :class:`Dataset`, :class:`Problem`, :class:`TaskLoadError`,
    :func:`warnings_report`,
    invalid-task attribution (:func:`find_invalid`, :class:`InvalidTasks`,
    :class:`InvalidDatasetError`),
    occupation metadata (:func:`occupation_for`, :func:`occupations`,
    :func:`soc_major_groups`), check specifications (:data:`Check` and its kinds), the
    JSON Schema of RUBRICS.json (:func:`rubrics_schema`) and the verified, pinned download
    of the public dataset (:func:`pull_dataset`, :class:`PullManifest`, :class:`PullRefresh`).
"""

from ._checks import (
    CHECK_KINDS,
    Check,
    CsvValueCheck,
    Expect,
    FileExistsCheck,
    JsonPathCheck,
    NumberCheck,
    RegexCheck,
    SqliteQueryCheck,
    XlsxCellCheck,
)
from ._invalid import (
    InvalidDatasetError,
    InvalidTasks,
    find_invalid,
    invalid_message,
    lenient_max_points,
)
from ._load import (
    INSTRUCTIONS,
    RUBRICS,
    SEARCH,
    SOLUTION,
    TASK_CARD,
    WORKSPACE,
    Dataset,
    discover_task_dirs,
    display_path,
    load_dataset,
    load_task,
    sha256_file,
    task_digest,
)
from ._model import Criterion, Rubric, Task
from ._occupations import (
    PAPER_CATEGORIES,
    UNKNOWN_GROUP,
    Occupation,
    occupation_for,
    occupations,
    soc_major_groups,
)
from ._problems import Problem, TaskLoadError, warnings_report
from ._pull import (
    DEFAULT_REPO_ID,
    MANIFEST,
    DatasetPullError,
    PulledFile,
    PullManifest,
    PullRefresh,
    pull_dataset,
    read_manifest,
)
from ._rubrics import parse_rubrics, rubrics_schema

__all__ = [
    "InvalidDatasetError",
    "InvalidTasks",
    "find_invalid",
    "invalid_message",
    "lenient_max_points",
    "CHECK_KINDS",
    "Check",
    "CsvValueCheck",
    "Expect",
    "FileExistsCheck",
    "JsonPathCheck",
    "NumberCheck",
    "RegexCheck",
    "SqliteQueryCheck",
    "XlsxCellCheck",
    "INSTRUCTIONS",
    "RUBRICS",
    "SEARCH",
    "SOLUTION",
    "TASK_CARD",
    "WORKSPACE",
    "Dataset",
    "discover_task_dirs",
    "display_path",
    "load_dataset",
    "load_task",
    "sha256_file",
    "task_digest",
    "Criterion",
    "Rubric",
    "Task",
    "PAPER_CATEGORIES",
    "UNKNOWN_GROUP",
    "Occupation",
    "occupation_for",
    "occupations",
    "soc_major_groups",
    "Problem",
    "TaskLoadError",
    "warnings_report",
    "parse_rubrics",
    "rubrics_schema",
    "DEFAULT_REPO_ID",
    "MANIFEST",
    "DatasetPullError",
    "PulledFile",
    "PullManifest",
    "PullRefresh",
    "pull_dataset",
    "read_manifest",
]
