"""Harbor trial exceptions → JobBench trial statuses, checked against Harbor's own table."""

from __future__ import annotations

import json
import subprocess

from jobbench.interop.harbor._status import AGENT_FAILURES, trial_status
from jobbench.records import TrialStatus

_TABLE = (
    "import json\n"
    "from harbor.models.trial.error_policy import ERROR_POLICIES\n"
    "print(json.dumps({n: [p.should_retry, p.should_grade, p.has_valid_reward]"
    " for n, p in ERROR_POLICIES.items()}))\n"
)


def test_only_harbors_valid_reward_failures_are_the_agents(harbor_python: str) -> None:
    run = subprocess.run(
        [harbor_python, "-c", _TABLE], capture_output=True, text=True, timeout=120, check=True
    )
    table = json.loads(run.stdout)
    agents = {n for n, (retry, _grade, valid) in table.items() if valid and not retry}
    assert agents == AGENT_FAILURES
    assert len(table) > len(agents) >= 8
    for name in table:
        got = trial_status(name, True)
        if name == "AgentTimeoutError":
            assert got is TrialStatus.agent_timeout
        elif name in agents:
            assert got is TrialStatus.agent_error
        else:  # sandbox, endpoint, auth and verifier failures: never scored as 0
            assert got is TrialStatus.infra_error, name
    for verifier in ("VerifierTimeoutError", "RewardFileNotFoundError", "RewardFileEmptyError"):
        assert verifier in table and trial_status(verifier, False) is TrialStatus.infra_error


def test_no_exception_and_unknown_names() -> None:
    assert trial_status(None, True) is TrialStatus.ok
    assert trial_status(None, False) is TrialStatus.no_deliverable
    assert trial_status("DockerDaemonGone", True) is TrialStatus.infra_error
