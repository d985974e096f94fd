"""Invalid tasks of a dataset: which task each validation error belongs to, and what a run
or a grading pass records about the tasks it could not use.

``jobbench run`` refuses a dataset with validation errors (a silently dropped task changes
every configuration's score); with ``--skip-invalid`` it runs the valid tasks and records
the invalid ones in ``lock.json`` so that the report counts them as missing (0)::

    "invalid_tasks": {"<split>/<occupation>/taskN": {"problems": ["<file>: <json path>: <message>",
    ...],
                                                     "max_points": 10.0}},
    "dataset_problems": ["<file>: <message>", ...]     # errors outside any task directory

``max_points`` is the sum of the finite, non-negative numeric ``weight`` values found in the
task's ``RUBRICS.json`` (a lower bound when some weights are themselves invalid), or null
when none can be read; with null the task cannot enter micro (the report says so).
"""

from __future__ import annotations

import fnmatch
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._load import Dataset, discover_task_dirs
from ._problems import Problem


class InvalidDatasetError(ValueError):
    """The dataset has validation errors and ``skip_invalid`` was not set.

    Attributes:
        invalid: the problems, by task (:class:`InvalidTasks`).
    """

    def __init__(self, message: str, invalid: InvalidTasks) -> None:
        super().__init__(message)
        self.invalid = invalid


@dataclass
class InvalidTasks:
    """Validation errors of a dataset, by task.

    Attributes:
        tasks: task id → its error problems (tasks left out of the dataset).
        other: errors not inside any task directory (e.g. a misnamed task directory or a
            symlinked occupation), which may hide tasks.
        max_points: task id → lenient maximum (see the module docstring), or None.
    """

    tasks: dict[str, list[Problem]] = field(default_factory=dict)
    other: list[Problem] = field(default_factory=list)
    max_points: dict[str, float | None] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.tasks or self.other)

    @property
    def count(self) -> int:
        """Number of error problems."""
        return sum(len(p) for p in self.tasks.values()) + len(self.other)

    def lines(self) -> list[str]:
        """Every problem as ``<file>: <json path>: <message>``, grouped by task."""
        out = []
        for tid in sorted(self.tasks):
            out += [str(p) for p in self.tasks[tid]]
        return out + [str(p) for p in self.other]

    def lock_entries(self) -> dict[str, dict[str, Any]]:
        """``{task_id: {"problems": [str], "max_points": float | None}}`` for lock.json."""
        return {
            tid: {
                "problems": [str(p) for p in self.tasks[tid]],
                "max_points": self.max_points.get(tid),
            }
            for tid in sorted(self.tasks)
        }


def _finite_weight(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def lenient_max_points(task_dir: Path) -> float | None:
    """The sum of the readable weights of ``task_dir/RUBRICS.json`` (``rubrics``, else
    ``evaluation_rubrics``, as the public judge chooses), or None when the file cannot be
    read or no weight is a finite number >= 0 (booleans are not numbers)."""
    try:
        data = json.loads((task_dir / "RUBRICS.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    items = data.get("rubrics") or data.get("evaluation_rubrics")
    if not isinstance(items, list):
        return None
    weights = [
        w
        for w in (_finite_weight(i.get("weight")) for i in items if isinstance(i, dict))
        if w is not None
    ]
    total = sum(weights)
    return total if weights and total > 0 else None


def _within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def find_invalid(
    ds: Dataset, *, splits: list[str] | None = None, task_glob: str | None = None
) -> InvalidTasks:
    """Attribute every error of ``ds`` to the task directory it lies in.

    Args:
        ds: a dataset loaded with the same ``splits`` and ``task_glob``.
        splits, task_glob: the selection (tasks outside it are not reported).

    Returns:
        :class:`InvalidTasks` (empty when the dataset has no error).
    """
    out = InvalidTasks()
    errors = ds.errors
    if not errors:
        return out
    valid = {t.id for t in ds.tasks}
    dirs: dict[str, str] = {}
    for split, occupation, task_dir in discover_task_dirs(ds.root, strict=ds.strict):
        tid = f"{split}/{occupation}/{task_dir.name}"
        if splits and split not in splits:
            continue
        if task_glob and not fnmatch.fnmatchcase(tid, task_glob):
            continue
        dirs[os.path.abspath(task_dir)] = tid
    by_depth = sorted(dirs, key=len, reverse=True)
    for p in errors:
        where = os.path.abspath(p.file)
        owner = next((d for d in by_depth if _within(where, d)), None)
        if owner is None:
            out.other.append(p)
        else:
            out.tasks.setdefault(dirs[owner], []).append(p)
    for d, tid in dirs.items():
        if tid not in valid:
            out.tasks.setdefault(
                tid,
                [
                    Problem(
                        file=d, message="task not loaded (no problem recorded inside its directory)"
                    )
                ],
            )
    for tid in list(out.tasks):
        if (
            tid in valid
        ):  # an error in a file of a loaded task cannot happen; keep it visible anyway
            out.other += out.tasks.pop(tid)
    for d, tid in dirs.items():
        if tid in out.tasks:
            out.max_points[tid] = lenient_max_points(Path(d))
    return out


def invalid_message(
    invalid: InvalidTasks,
    dataset: str,
    *,
    verb: str = "run",
    consequence: str = "the invalid ones are recorded and count as missing, 0, in the report",
) -> str:
    """The refusal message: every problem (file, JSON path, message), then what to do.

    Args:
        invalid: the problems.
        dataset: the dataset as shown to the user.
        verb, consequence: what ``--skip-invalid`` does (``run`` … / ``grade`` …).
    """
    head = (
        f"the dataset {dataset} has {invalid.count} validation error(s)"
        + (f" in {len(invalid.tasks)} task(s)" if invalid.tasks else "")
        + "; a task left out silently would change every configuration's score:"
    )
    tail = (
        f"fix them (`jobbench validate` lists them too), or pass --skip-invalid to {verb} only the "
        "valid tasks "
        f"({consequence})"
    )
    return "\n".join([head] + [f"  {line}" for line in invalid.lines()] + [tail])


__all__ = [
    "InvalidDatasetError",
    "InvalidTasks",
    "find_invalid",
    "invalid_message",
    "lenient_max_points",
]
