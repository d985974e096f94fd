"""The JobBench trial status of a Harbor trial (used by the job import).

Harbor records a trial's failure as ``exception_info.exception_type`` in the trial's
``result.json`` and classifies it by that name (``harbor`` 0.26,
``harbor/models/trial/error_policy.py``). Only the failures Harbor itself grades with a
valid reward are the agent's own (:data:`AGENT_FAILURES`); every other exception — sandbox,
endpoint, authentication, the verifier (timeout, missing or unparsable reward) and any name
Harbor does not list — is the harness's fault and becomes ``infra_error``, so it is never
scored as a 0.
"""

from __future__ import annotations

from ...records import TrialStatus

AGENT_TIMEOUT = "AgentTimeoutError"

AGENT_FAILURES = frozenset(
    {
        "NonZeroAgentExitCodeError",
        AGENT_TIMEOUT,
        "ContextWindowExceededError",
        "OutputTokenExceededError",
        "ContextLengthExceededError",
        "OutputLengthExceededError",
        "AgentSafetyRefusalError",
        "ContentPolicyViolationError",
    }
)
"""Harbor's exception names with ``has_valid_reward=True`` and ``should_retry=False``: the
agent ran and failed on its own; what it delivered is graded."""


def trial_status(exception_type: str | None, has_deliverables: bool) -> TrialStatus:
    """The status of a Harbor trial.

    Args:
        exception_type: ``exception_info.exception_type`` of the trial's ``result.json``
            (None when the trial ended without an exception).
        has_deliverables: whether any deliverable was collected from its artifacts.

    Returns:
        ``ok`` or ``no_deliverable`` without an exception; ``agent_timeout`` for
        :data:`AGENT_TIMEOUT`; ``agent_error`` for the other :data:`AGENT_FAILURES`;
        ``infra_error`` for every other name.
    """
    if exception_type is None:
        return TrialStatus.ok if has_deliverables else TrialStatus.no_deliverable
    if exception_type == AGENT_TIMEOUT:
        return TrialStatus.agent_timeout
    if exception_type in AGENT_FAILURES:
        return TrialStatus.agent_error
    return TrialStatus.infra_error
