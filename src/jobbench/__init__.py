"""JobBench: an open, reproducible toolkit to evaluate AI agents on professional desk work.

Data flows one way: dataset → workspace → agent → deliverables → extraction → judge →
scores → report. See the README for the commands and DESIGN notes for the formats.

Library API (imported on first use, so ``import jobbench`` stays cheap):
:func:`evaluate` (run → grade → report, returns a :class:`RunResult`), :func:`grade`,
:func:`report` (returns a :class:`ReportResult`; ``jobbench.report`` is also the report
package, made callable), in ``jobbench/_api.py`` and ``jobbench/report/_api.py``.
"""

from typing import Any

from ._lazy import lazy_attributes

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    "evaluate": "._api",
    "grade": "._api",
    "RunResult": "._api",
    "ReportResult": "._api",
}

_getattr, __dir__ = lazy_attributes(__name__, _LAZY)


def __getattr__(name: str) -> Any:  # as lazy_attributes: the lazy names differ in type
    # ``jobbench.report`` is the subpackage, which is callable (report/__init__.py): the
    # library call and ``import jobbench.report`` then name one object
    if name == "report":
        from importlib import import_module

        return import_module(".report", __name__)
    return _getattr(name)


__all__ = ["__version__", "evaluate", "grade", "report", "RunResult", "ReportResult"]
