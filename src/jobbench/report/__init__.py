"""jobbench.report: leaderboards, statistics and the HTML report of one or more runs.

Public API:
    :func:`write_report` (the contract entry point), :func:`build_report` (figures without
    writing), :func:`load_run`, :func:`judge_keys`, :func:`resolve_judge_key`,
    :class:`ReportData`, :class:`ConfigView`, :class:`RunData`, :class:`ReportInputError`,
    :data:`REPORT_FILES`.
"""

from ._build import ConfigView, ReportData, build_report
from ._runs import ReportInputError, RunData, judge_keys, load_run, resolve_judge_key
from ._write import REPORT_FILES, default_out_dir, write_report

__all__ = [
    "ConfigView",
    "ReportData",
    "build_report",
    "ReportInputError",
    "RunData",
    "judge_keys",
    "load_run",
    "resolve_judge_key",
    "REPORT_FILES",
    "default_out_dir",
    "write_report",
]
