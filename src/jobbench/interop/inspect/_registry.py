"""Target of the ``inspect_ai`` entry point (pyproject.toml ``[project.entry-points.inspect_ai]``).

Inspect imports this module when it resolves a ``jobbench/…`` name (``inspect eval
jobbench/jobbench``, ``--scorer jobbench/jobbench``); importing it registers the
task, its setup solver, the scorer and the metrics in Inspect's registry. It imports
``inspect_ai``.
"""

from ._scorer import jobbench_scorer, macro, micro
from ._task import jobbench, jobbench_setup

__all__ = ["jobbench", "jobbench_scorer", "jobbench_setup", "macro", "micro"]
