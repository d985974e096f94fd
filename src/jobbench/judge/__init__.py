"""jobbench.judge: grade deliverables against chained rubrics.

Pipeline per trial: extraction → programmatic checks → LLM units (cache first) →
criterion verdicts → z_r and s_t in code (:mod:`jobbench.scoring`) → one
:class:`jobbench.records.GradeRecord` per (trial, judge).

Public API:
    :func:`grade_run` (a run directory), :func:`grade_trial` (one folder),
    :func:`grade_public_dataset` (``model_output/<label>/`` in the public layout),
    :class:`JudgeConfig` / :func:`load_judge_config`, :class:`Grader`, :class:`JudgeClient`,
    :class:`JudgeCache`, :func:`load_prices` / :class:`PriceTable`,
    :func:`evaluate_check` / :class:`CheckResult`, the public-layout report writer
    (:func:`public_report`, :func:`public_report_name`, :func:`public_run_label`,
    :func:`public_judge_name`, :class:`ReportWriter`, :class:`OverwriteRefused`,
    :func:`owner_key`, :func:`has_files`, :func:`backup`, :func:`rubric_texts`,
    :func:`details_from_record`, :func:`write_public_details`), :func:`recover_json`,
    :func:`detect_injection`,
    :func:`needs_vision`, :data:`PROMPT_VERSION`, :func:`usage_summary` /
    :func:`cached_usage` (judge usage, live and originally paid for cached verdicts),
    :func:`prefix_cacheable_input` (the prompt part a provider's prefix cache could serve),
    :func:`explain_invalid_tasks` (a run's dataset, warning about tasks invalid now),
    :func:`judge_error_groups` / :func:`judge_error_lines` (judge errors by cause, for the
    console).
"""

from .._lazy import lazy_attributes

# Names are imported on first use (PEP 562) so that ``jobbench --help`` and commands that
# do not need this stage stay fast (the heavy dependencies load only when used).
_LAZY: dict[str, str] = {
    "JudgeCache": "._cache",
    "unit_key": "._cache",
    "ChatReply": "._client",
    "JudgeCallError": "._client",
    "JudgeClient": "._client",
    "PROMPT_VERSION": "._config",
    "JudgeConfig": "._config",
    "load_judge_config": "._config",
    "safe_name": "._config",
    "judge_error_groups": "._errors",
    "judge_error_lines": "._errors",
    "detect_injection": "._evidence",
    "evidence_found": "._evidence",
    "normalise": "._evidence",
    "Grader": "._grade",
    "TrialInput": "._grade",
    "grade_trial": "._grade",
    "inputs_digest": "._grade",
    "needs_vision": "._grade",
    "recover_json": "._jsonfix",
    "Price": "._prices",
    "PriceTable": "._prices",
    "load_prices": "._prices",
    "OverwriteRefused": "._public",
    "ReportWriter": "._public",
    "backup": "._public",
    "details_from_record": "._public",
    "grade_public_dataset": "._public",
    "has_files": "._public",
    "owner_key": "._public",
    "public_judge_name": "._public",
    "public_report": "._public",
    "public_report_name": "._public",
    "public_run_label": "._public",
    "rubric_texts": "._public",
    "write_public_details": "._public",
    "RunDirError": "._run",
    "cached_usage": "._run",
    "explain_invalid_tasks": "._run",
    "grade_path": "._run",
    "grade_run": "._run",
    "prefix_cacheable_input": "._run",
    "usage_summary": "._run",
    "CheckResult": ".checks",
    "evaluate_check": ".checks",
}


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)


__all__ = [
    "PROMPT_VERSION",
    "ChatReply",
    "CheckResult",
    "Grader",
    "JudgeCache",
    "JudgeCallError",
    "JudgeClient",
    "JudgeConfig",
    "OverwriteRefused",
    "ReportWriter",
    "backup",
    "has_files",
    "owner_key",
    "public_report",
    "public_report_name",
    "public_run_label",
    "rubric_texts",
    "Price",
    "PriceTable",
    "RunDirError",
    "TrialInput",
    "cached_usage",
    "details_from_record",
    "detect_injection",
    "evaluate_check",
    "explain_invalid_tasks",
    "evidence_found",
    "grade_path",
    "grade_public_dataset",
    "grade_run",
    "grade_trial",
    "inputs_digest",
    "judge_error_groups",
    "judge_error_lines",
    "load_judge_config",
    "load_prices",
    "needs_vision",
    "normalise",
    "prefix_cacheable_input",
    "public_judge_name",
    "recover_json",
    "safe_name",
    "unit_key",
    "usage_summary",
    "write_public_details",
]
