"""jobbench.judge: grade deliverables against chained rubrics.

Pipeline per trial: extraction → programmatic checks → LLM units (cache first) →
criterion verdicts → z_r and s_t in code (:mod:`jobbench.scoring`) → one
:class:`jobbench.records.GradeRecord` per (trial, judge).

Public API:
    :func:`grade_run` (a run directory), :func:`grade_trial` (one folder),
    :func:`grade_public_dataset` (``model_output/<label>/`` in the public layout),
    :class:`JudgeConfig` / :func:`load_judge_config`, :class:`Grader`, :class:`JudgeClient`,
    :class:`JudgeCache`, :func:`load_prices` / :class:`PriceTable`,
    :func:`evaluate_check` / :class:`CheckResult`, :func:`details_from_record` /
    :func:`write_public_details`, :func:`recover_json`, :func:`detect_injection`,
    :func:`needs_vision`, :data:`PROMPT_VERSION`.
"""

from ._cache import JudgeCache, unit_key
from ._client import ChatReply, JudgeCallError, JudgeClient
from ._config import PROMPT_VERSION, JudgeConfig, load_judge_config, safe_name
from ._evidence import detect_injection, evidence_found, normalise
from ._grade import Grader, TrialInput, grade_trial, inputs_digest, needs_vision
from ._jsonfix import recover_json
from ._prices import Price, PriceTable, load_prices
from ._public import (
    OverwriteRefused,
    details_from_record,
    grade_public_dataset,
    public_judge_name,
    write_public_details,
)
from ._run import RunDirError, grade_path, grade_run, usage_summary
from .checks import CheckResult, evaluate_check

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
    "Price",
    "PriceTable",
    "RunDirError",
    "TrialInput",
    "details_from_record",
    "detect_injection",
    "evaluate_check",
    "evidence_found",
    "grade_path",
    "grade_public_dataset",
    "grade_run",
    "grade_trial",
    "inputs_digest",
    "load_judge_config",
    "load_prices",
    "needs_vision",
    "normalise",
    "public_judge_name",
    "recover_json",
    "safe_name",
    "unit_key",
    "usage_summary",
    "write_public_details",
]
