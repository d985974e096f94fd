"""Names shared by the Harbor export, its verifier and the job import (one owner for each).

Harbor task layout (``harbor`` 0.26, ``harbor/models/task/paths.py``)::

    <task>/task.toml  instruction.md  environment/  tests/test.sh  solution/solve.sh

Container paths of the exported tasks: the agent starts in :data:`WORKSPACE` with the
task's files under :data:`TASK_FOLDER` and writes deliverables to :data:`OUTPUT`, which
``task.toml`` declares as an artifact; Harbor collects it into the trial's
``artifacts/workspace/output/`` (``TrialPaths.host_artifact_path``: the absolute container
path mirrored under ``artifacts/``) and uploads it to the same path of the separate verifier
environment, whose image holds the tests at ``/tests`` and the grading inputs at
``/tests/grading/dataset/<split>/<occupation>/taskN/``. The verifier writes
``/logs/verifier/reward.json`` and :data:`DETAILS_FILE` beside it.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

WORKSPACE = "/workspace"
TASK_FOLDER = "/workspace/task_folder"
OUTPUT = "/workspace/output"
SOLUTION = "/solution"
TESTS = "/tests"
VERIFIER_LOGS = "/logs/verifier"

TESTS_DATA = "grading"
"""Folder of ``tests/`` holding the grading inputs (``dataset/``) and the wheel."""
REWARD_FILE = "reward.json"
DETAILS_FILE = "jobbench-grade.json"
"""The verifier's full :class:`jobbench.records.GradeRecord` (every verdict)."""
MANIFEST_FILE = "jobbench-export.json"
"""Written at the top of an export: what was exported from where (see ``_export.py``)."""

HARBOR_ORG = "jobbench"
"""The ``org`` part of the exported tasks' Harbor names (``jobbench/<dir name>``)."""

HARBOR_RANGE = ">=0.26,<0.27"
"""The Harbor versions the exported files are tested against (pyproject ``harbor`` extra)."""

OUTPUT_ARTIFACT_DIR = PurePosixPath(*PurePosixPath(OUTPUT).parts[1:])
"""Where Harbor puts the collected :data:`OUTPUT` inside a trial's ``artifacts/``."""

_DIR_NAME = re.compile(
    r"^(?P<split>[a-z0-9][a-z0-9_-]*)--(?P<occ>[a-z0-9][a-z0-9_-]*)--task(?P<n>[1-9][0-9]*)$"
)


def task_dir_name(task_id: str) -> str:
    """``main/civil_engineers/task1`` → ``main--civil_engineers--task1`` (the exported
    task's folder name; Harbor's task name is ``jobbench/<that>``)."""
    return task_id.replace("/", "--")


def task_id_of(name: str) -> str | None:
    """The JobBench task id of an exported task folder or Harbor task name
    (``jobbench/main--civil_engineers--task1`` or its last part), or None when it is not one."""
    last = name.rsplit("/", 1)[-1]
    m = _DIR_NAME.match(last)
    if m is None:
        return None
    return f"{m['split']}/{m['occ']}/task{m['n']}"
