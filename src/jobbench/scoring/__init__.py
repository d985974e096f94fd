"""jobbench.scoring (see the README for the pipeline)."""

from ._aggregate import (
    MACRO_LABEL,
    MICRO_LABEL,
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
from ._stats import Interval, PairedComparison, bootstrap_ci, paired_bootstrap, pass_hat_k, weighted_mean
