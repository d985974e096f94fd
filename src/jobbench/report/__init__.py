"""jobbench.report: leaderboards, statistics and the HTML report of one or more runs.

Public API:
    :func:`report` (build and write, the library call; the package itself is callable),
    :func:`write_report` (the contract entry point), :func:`build_report` (figures without
    writing), :func:`load_run`, :func:`judge_keys`, :func:`resolve_judge_key`,
    :class:`ReportData`, :class:`ConfigView`, :class:`RunData`, :class:`ReportInputError`,
    :class:`ReportWriteError`,
    :data:`REPORT_FILES`, :func:`write_data` (write an already built report) and
    :func:`print_summary` (the terminal task table and leaderboard).
"""

import sys
import types
from typing import Any

from .._lazy import lazy_attributes

# Names are imported on first use (PEP 562) so that ``jobbench --help`` and commands that
# do not need this stage stay fast (the heavy dependencies load only when used).
_LAZY: dict[str, str] = {
    "ReportResult": "._api",
    "report": "._api",
    "ConfigView": "._build",
    "ReportData": "._build",
    "build_report": "._build",
    "ReportInputError": "._runs",
    "RunData": "._runs",
    "judge_keys": "._runs",
    "load_run": "._runs",
    "resolve_judge_key": "._runs",
    "REPORT_FILES": "._write",
    "ReportWriteError": "._write",
    "default_out_dir": "._write",
    "write_report": "._write",
    "write_data": "._write",
    "print_summary": "._console",
}


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)


class _CallableModule(types.ModuleType):
    """This package, callable: ``jobbench.report(run_dirs, …)`` is :func:`report`
    (``jobbench.report`` names both the package and the library call)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.report(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule


__all__ = [
    "ReportResult",
    "report",
    "ConfigView",
    "ReportData",
    "build_report",
    "ReportInputError",
    "RunData",
    "judge_keys",
    "load_run",
    "resolve_judge_key",
    "REPORT_FILES",
    "ReportWriteError",
    "default_out_dir",
    "write_report",
    "write_data",
    "print_summary",
]
