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


from importlib import import_module
from typing import Any

# Names are imported on first use (PEP 562) so that ``jobbench --help`` stays fast.
_LAZY: dict[str, str] = {
    "PAPER_CORPUS": "._attention",
    "AttentionResult": "._attention",
    "Capability": "._attention",
    "OccupationAttention": "._attention",
    "attention_analysis": "._attention",
    "attention_counts": "._attention",
    "load_leaderboard": "._attention",
    "load_run_capability": "._attention",
    "mean_capability": "._attention",
    "pick_configs": "._attention",
    "DataFileError": "._errors",
    "DEFAULT_ITEMS": "._fetch",
    "FetchItem": "._fetch",
    "FetchOfflineError": "._fetch",
    "FetchReport": "._fetch",
    "Source": "._fetch",
    "fetch": "._fetch",
    "OewsJoin": "._oews",
    "OewsRow": "._oews",
    "OewsTable": "._oews",
    "join_oews": "._oews",
    "load_oews": "._oews",
    "normalise_onet_code": "._oews",
    "soc_major_code": "._oews",
    "OnetTask": "._onet",
    "crosswalk_mismatches": "._onet",
    "load_onet_occupations": "._onet",
    "load_onet_tasks": "._onet",
    "onet_mismatches": "._onet",
    "LAYOUT": "._paths",
    "DataPaths": "._paths",
    "default_data_dir": "._paths",
    "plot_attention": "._plots",
    "plot_desire_capability": "._plots",
    "plot_exposure_desire": "._plots",
    "DEFAULT_GRID": "._select",
    "Comparison": "._select",
    "CrosswalkRow": "._select",
    "OccupationStats": "._select",
    "RuleScore": "._select",
    "SelectedOccupation": "._select",
    "Selection": "._select",
    "SelectionRule": "._select",
    "compare_with_jobbench": "._select",
    "load_crosswalk": "._select",
    "occupation_table": "._select",
    "search_rules": "._select",
    "select_occupations": "._select",
    "Correlation": "._stats",
    "average_ranks": "._stats",
    "bootstrap_indices": "._stats",
    "correlate": "._stats",
    "pearson": "._stats",
    "spearman": "._stats",
    "ZONE_CUT": "._workbank",
    "MappingRow": "._workbank",
    "Rating": "._workbank",
    "TaskMeta": "._workbank",
    "TaskRating": "._workbank",
    "WorkbankFigures": "._workbank",
    "Zone": "._workbank",
    "load_attention_mapping": "._workbank",
    "load_expert_capability": "._workbank",
    "load_task_metadata": "._workbank",
    "load_worker_desires": "._workbank",
    "task_ratings": "._workbank",
    "workbank_figures": "._workbank",
    "zone_of": "._workbank",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


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
