"""jobbench.interop.inspect: JobBench with UK AISI's Inspect AI (``jobbench[inspect]``).

* :func:`export_inspect` (``jobbench export inspect RUN OUT_DIR``): a run directory as
  Inspect eval logs, one per agent configuration, for ``inspect view`` and
  ``inspect_ai.log.read_eval_log``.
* :func:`jobbench_task` (``inspect eval jobbench/jobbench``): JobBench tasks as an Inspect
  task, registered through the ``inspect_ai`` entry-point group (:mod:`._registry`).

``inspect_ai`` is imported only when one of these is used, never by the CLI at start.
"""

from ..._lazy import lazy_attributes

_LAZY: dict[str, str] = {
    "InspectExport": "._export",
    "InspectExportError": "._export",
    "export_inspect": "._export",
    "trajectory_messages": "._export",
    "register_cli": "._cli",
    "jobbench_task": "._task",
    "jobbench_scorer": "._scorer",
}

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)

__all__ = sorted(_LAZY)
