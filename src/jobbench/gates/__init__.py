"""Quality gates: audit tasks before they count (JobBench paper, §3 quality gates).

Gates (each a function on loaded tasks or graded runs; ``jobbench gate PATH`` runs them):

* :func:`audit_task`: static audit of instructions, files, deliverable names, leaks and
  readability (rules ``A1``–``A11``);
* :func:`lint_task`: rubric lint for the four principles plus exact-phrase traps
  (``SC1``/``SC2``, ``BI1``, ``OB1``/``OB2``, ``UN1``–``UN4``, ``EX1``/``EX2``, ``CK1``);
  :func:`llm_review_task`: optional model review (``LLM1``);
* :func:`decoy_gate`: programmatic checks on ``solution/decoys/<name>/`` vs ``expected.json``;
* :func:`check_oracle_null` / :func:`run_oracle_null`: oracle scores 100 %, null 0 %;
* :func:`solve_trial`: union over graded trials of passed criteria per task (≥ 90 %);
* :func:`flip_rates` / :func:`run_self_consistency`: judge verdict flip rate;
* :func:`export_review` / :func:`apply_review`: the annotator review workbook round-trip;
* :func:`run_gates`, :class:`GateReport`, :func:`write_gate_report`: the report.

Every finding has a rule id from :data:`RULES`, a severity and a fix hint.
"""

from ._audit import AuditConfig, audit_task, decoy_files, reference_files
from ._decoy import (
    DecoyOutcome,
    DecoyVerdict,
    chained_score,
    decoy_gate,
    evaluate_decoys,
    read_expected,
)
from ._findings import RULES, Finding, GateResult, GateUnavailable, Rule, make_finding, rules_for
from ._grades import GradedTrial, judge_keys, read_grades, resolve_judge_key
from ._lint import LINT_RULES, LintContext, lint_task, lint_text
from ._llm import LLMReview, LLMReviewConfig, llm_review_task
from ._oracle import (
    Consistency,
    CriterionFlips,
    check_oracle_null,
    consistency_gate_results,
    flip_rates,
    run_oracle_null,
    run_self_consistency,
)
from ._report import (
    EXIT_FAIL,
    EXIT_INFRA,
    EXIT_OK,
    EXIT_USAGE,
    GateReport,
    TaskGates,
    render_markdown,
    write_gate_report,
)
from ._review import ReviewContext, ReviewError, ReviewResult, apply_review, export_review
from ._run import ALL_GATES, STATIC_GATES, GateOptions, run_gates
from ._solve import (
    SOLVE_THRESHOLD,
    CriterionRef,
    SolveTrial,
    TaskReachability,
    solve_gate_results,
    solve_trial,
)

__all__ = [
    "AuditConfig",
    "audit_task",
    "decoy_files",
    "reference_files",
    "DecoyOutcome",
    "DecoyVerdict",
    "chained_score",
    "decoy_gate",
    "evaluate_decoys",
    "read_expected",
    "RULES",
    "Finding",
    "GateResult",
    "GateUnavailable",
    "Rule",
    "make_finding",
    "rules_for",
    "GradedTrial",
    "judge_keys",
    "read_grades",
    "resolve_judge_key",
    "LINT_RULES",
    "LintContext",
    "lint_task",
    "lint_text",
    "LLMReview",
    "LLMReviewConfig",
    "llm_review_task",
    "Consistency",
    "CriterionFlips",
    "check_oracle_null",
    "consistency_gate_results",
    "flip_rates",
    "run_oracle_null",
    "run_self_consistency",
    "EXIT_FAIL",
    "EXIT_INFRA",
    "EXIT_OK",
    "EXIT_USAGE",
    "GateReport",
    "TaskGates",
    "render_markdown",
    "write_gate_report",
    "ReviewContext",
    "ReviewError",
    "ReviewResult",
    "apply_review",
    "export_review",
    "ALL_GATES",
    "STATIC_GATES",
    "GateOptions",
    "run_gates",
    "SOLVE_THRESHOLD",
    "CriterionRef",
    "SolveTrial",
    "TaskReachability",
    "solve_gate_results",
    "solve_trial",
]
