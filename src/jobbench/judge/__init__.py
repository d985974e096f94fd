"""jobbench.judge: grade deliverables against chained rubrics.

Public API so far: :func:`evaluate_check` and :class:`CheckResult` (programmatic checks).
"""

from .checks import CheckResult, evaluate_check

__all__ = ["CheckResult", "evaluate_check"]
