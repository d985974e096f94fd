"""jobbench.scoring: chained rubric values z_r and task scores s_t computed in code
(``_chains``), and aggregation with statistics over tasks (``_aggregate``, ``_stats``).

Public API: :func:`chain_values`, :func:`official_values`, :func:`task_score`,
:func:`disagrees`, :func:`verdict_score`, :class:`ChainValue`, :class:`TaskScore`;
:func:`aggregate`,
:func:`task_results`, :func:`compare`, :func:`bootstrap_ci`, :func:`paired_bootstrap`,
:func:`pass_hat_k` and the records they return.
"""

from ._aggregate import (
    MACRO_LABEL,
    MICRO_LABEL,
    RATIO_FIELDS,
    SCORED_STATES,
    STATE_DESCRIPTIONS,
    Aggregate,
    Comparison,
    CostSummary,
    TaskMeta,
    TaskResult,
    TrialResult,
    TrialState,
    aggregate,
    chain_break_counts,
    compare,
    config_label,
    cost_summary,
    effort_ratios,
    group_results,
    task_results,
    trial_result,
)
from ._chains import (
    ChainValue,
    TaskScore,
    chain_values,
    disagrees,
    official_values,
    task_score,
    verdict_score,
)
from ._stats import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
)
from ._stats import Interval, PairedComparison, bootstrap_ci, paired_bootstrap, pass_hat_k, weighted_mean

__all__ = [
    "MACRO_LABEL",
    "MICRO_LABEL",
    "RATIO_FIELDS",
    "DEFAULT_CONFIDENCE",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "SCORED_STATES",
    "STATE_DESCRIPTIONS",
    "Aggregate",
    "Comparison",
    "CostSummary",
    "TaskMeta",
    "TaskResult",
    "TrialResult",
    "TrialState",
    "aggregate",
    "chain_break_counts",
    "compare",
    "config_label",
    "cost_summary",
    "effort_ratios",
    "group_results",
    "task_results",
    "trial_result",
    "ChainValue",
    "TaskScore",
    "chain_values",
    "disagrees",
    "official_values",
    "task_score",
    "verdict_score",
    "Interval",
    "PairedComparison",
    "bootstrap_ci",
    "paired_bootstrap",
    "pass_hat_k",
    "weighted_mean",
]
