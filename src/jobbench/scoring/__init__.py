"""jobbench.scoring: chained rubric values z_r and task scores s_t, computed in code.

Public API: :func:`chain_values`, :func:`official_values`, :func:`task_score`,
:func:`disagrees`, :class:`ChainValue`, :class:`TaskScore`.
"""

from ._chains import ChainValue, TaskScore, chain_values, disagrees, official_values, task_score

__all__ = ["ChainValue", "TaskScore", "chain_values", "disagrees", "official_values", "task_score"]
