"""jobbench.selection: occupation selection from WORKBank × O*NET × OEWS, and the
capability-vs-attention analysis.

Public API:
    loaders — :func:`load_worker_desires`, :func:`load_expert_capability`,
    :func:`load_task_metadata`, :func:`load_attention_mapping`, :func:`load_oews`,
    :func:`load_onet_tasks`, :func:`load_onet_occupations`, :func:`load_crosswalk`,
    :func:`load_leaderboard`, :func:`load_run_capability`; paths — :class:`DataPaths`,
    :data:`LAYOUT`, :func:`default_data_dir`; joins — :func:`join_oews`,
    :func:`normalise_onet_code`, :func:`soc_major_code`; analysis — :func:`task_ratings`,
    :func:`workbank_figures`, :func:`zone_of`, :func:`occupation_table`,
    :class:`SelectionRule`, :func:`select_occupations`, :func:`compare_with_jobbench`,
    :func:`search_rules`, :func:`attention_counts`, :func:`attention_analysis`,
    :func:`correlate`, :func:`pearson`, :func:`spearman`; plots; :func:`fetch`.
    Every loader raises :class:`DataFileError` naming the file (and column) on bad input.
"""

from ._attention import (
    PAPER_CORPUS,
    AttentionResult,
    Capability,
    OccupationAttention,
    attention_analysis,
    attention_counts,
    load_leaderboard,
    load_run_capability,
    mean_capability,
    pick_configs,
)
from ._errors import DataFileError
from ._fetch import DEFAULT_ITEMS, FetchItem, FetchOfflineError, FetchReport, Source, fetch
from ._oews import OewsJoin, OewsRow, OewsTable, join_oews, load_oews, normalise_onet_code, soc_major_code
from ._onet import OnetTask, crosswalk_mismatches, load_onet_occupations, load_onet_tasks, onet_mismatches
from ._paths import LAYOUT, DataPaths, default_data_dir
from ._plots import plot_attention, plot_desire_capability, plot_exposure_desire
from ._select import (
    DEFAULT_GRID,
    Comparison,
    CrosswalkRow,
    OccupationStats,
    RuleScore,
    SelectedOccupation,
    Selection,
    SelectionRule,
    compare_with_jobbench,
    load_crosswalk,
    occupation_table,
    search_rules,
    select_occupations,
)
from ._stats import Correlation, average_ranks, bootstrap_indices, correlate, pearson, spearman
from ._workbank import (
    ZONE_CUT,
    MappingRow,
    Rating,
    TaskMeta,
    TaskRating,
    WorkbankFigures,
    Zone,
    load_attention_mapping,
    load_expert_capability,
    load_task_metadata,
    load_worker_desires,
    task_ratings,
    workbank_figures,
    zone_of,
)

__all__ = [
    "PAPER_CORPUS", "AttentionResult", "Capability", "OccupationAttention", "attention_analysis",
    "attention_counts", "load_leaderboard", "load_run_capability", "mean_capability", "pick_configs",
    "DataFileError",
    "DEFAULT_ITEMS", "FetchItem", "FetchOfflineError", "FetchReport", "Source", "fetch",
    "OewsJoin", "OewsRow", "OewsTable", "join_oews", "load_oews", "normalise_onet_code", "soc_major_code",
    "OnetTask", "crosswalk_mismatches", "load_onet_occupations", "load_onet_tasks", "onet_mismatches",
    "LAYOUT", "DataPaths", "default_data_dir",
    "plot_attention", "plot_desire_capability", "plot_exposure_desire",
    "DEFAULT_GRID", "Comparison", "CrosswalkRow", "OccupationStats", "RuleScore", "SelectedOccupation",
    "Selection", "SelectionRule", "compare_with_jobbench", "load_crosswalk", "occupation_table", "search_rules",
    "select_occupations",
    "Correlation", "average_ranks", "bootstrap_indices", "correlate", "pearson", "spearman",
    "ZONE_CUT", "MappingRow", "Rating", "TaskMeta", "TaskRating", "WorkbankFigures", "Zone",
    "load_attention_mapping", "load_expert_capability", "load_task_metadata", "load_worker_desires",
    "task_ratings", "workbank_figures", "zone_of",
]
