"""The report as a library call: :func:`report` (build and write) and :class:`ReportResult`.
``jobbench.report(...)`` is this function (the package itself is callable, see
``report/__init__.py``), as is ``jobbench.report.report(...)``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._build import ReportData, build_report
from ._write import default_out_dir, write_data


@dataclass
class ReportResult:
    """What :func:`report` built and wrote.

    Attributes:
        data: every figure (:class:`jobbench.report.ReportData`).
        out_dir: the report directory (``<run>/report`` by default), or None when nothing
            was written.
    """

    data: ReportData
    out_dir: Path | None

    @property
    def leaderboard(self) -> list[dict[str, Any]]:
        """One row per configuration, ranked: ``config`` (``agent@model``), ``micro`` and
        ``macro`` (estimates in [0, 1], or None; missing tasks count 0), ``tasks`` and
        ``tasks_scored``, ``incomplete`` (trials whose result is still to come, by state)."""
        return [
            {
                "config": c.label,
                "micro": c.overall.micro.estimate,
                "macro": c.overall.macro.estimate,
                "tasks": c.overall.tasks,
                "tasks_scored": c.overall.tasks_scored,
                "incomplete": c.incomplete_trials,
            }
            for c in self.data.configs
        ]

    def as_json(self) -> dict[str, Any]:
        """What ``jobbench report --json`` prints: ``out_dir`` (str or None), ``judge_key``,
        ``leaderboard`` (:attr:`leaderboard`) and ``warnings``."""
        return {
            "out_dir": str(self.out_dir) if self.out_dir else None,
            "judge_key": self.data.judge_key,
            "leaderboard": self.leaderboard,
            "warnings": list(self.data.warnings),
        }


def report(
    run_dirs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    judge_key: str | None = None,
    out: str | os.PathLike[str] | None = None,
    write: bool = True,
    allow_ungraded: bool = False,
) -> ReportResult:
    """Build the report of one or more runs (merged into one leaderboard) and write it.

    Args:
        run_dirs: a run directory or several.
        judge_key: grades to use (default: the only key of the runs).
        out: report directory (default: ``<run>/report`` for one run).
        write: False builds the figures only.
        allow_ungraded: accept a ``judge_key`` graded in no run (a run whose every trial
            ended ``infra_error``): its trials are reported as not scored.

    Returns:
        :class:`ReportResult`.

    Raises:
        jobbench.report.ReportInputError: no readable run, or several judge keys, none
            graded in every run, and none chosen.
        jobbench.report.ReportWriteError: the report directory cannot be written.
    """
    if isinstance(run_dirs, (str, os.PathLike)):
        dirs = [Path(run_dirs)]
    else:
        dirs = [Path(d) for d in run_dirs]
    data = build_report(dirs, judge_key=judge_key, allow_ungraded=allow_ungraded)
    if not write:
        return ReportResult(data=data, out_dir=None)
    out_dir = write_data(data, Path(out) if out else default_out_dir(dirs))
    return ReportResult(data=data, out_dir=out_dir)
