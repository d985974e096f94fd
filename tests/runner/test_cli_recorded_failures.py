"""The real codex 0.171.0, opencode 1.18.33 and claude-code 2.1.332 against a misconfigured
endpoint (recordings in ``tests/runner/<cli>_recorded/<scenario>/``, made by
``scripts/record_cli_failures.py``), replayed through a fake executable: each is an
``infra_error`` carrying the server's text, classified permanent, never an agent failure."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from runner_helpers import make_executable, python_shebang

from jobbench.agents import AgentLimits, ModelSettings
from jobbench.records import TrialStatus
from jobbench.runner import AgentSpec, RunConfig, run_trials

HERE = Path(__file__).parent

# prints the recorded stdout and stderr, then exits with the recorded code; a recording
# killed at its time limit (exit -9) sleeps instead, past the test's short limit
REPLAY = (
    python_shebang()
    + """
import json, sys, time
from pathlib import Path
if sys.argv[1:] == ["--version"]:  # the adapter's version probe: answer it, do not replay
    print("0.0.0 (replay)")
    sys.exit(0)
d = Path(__file__).parent
cfg = json.loads((d / "replay.json").read_text())
for line in (d / "stdout.jsonl").read_text().splitlines():
    print(line, flush=True)
sys.stderr.write((d / "stderr.txt").read_text())
sys.stderr.flush()
if cfg["timed_out"]:
    time.sleep(60)
sys.exit(cfg["exit_code"])
"""
)

EXECUTABLE = {"codex": "codex", "opencode": "opencode", "claude-code": "claude"}
RECORDINGS = {"codex": "codex", "opencode": "opencode", "claude-code": "claude_code"}

KEY_401 = "Incorrect API key provided: sk-local"
NO_MODEL = "The model `fake-model` does not exist"
CLAUDE_MODEL = "There's an issue with the selected model (fake-model)"
ZERO = "the endpoint answered with 0 tokens"

# (agent, scenario) -> (cause, texts the message must contain); every case is permanent
EXPECTED = {
    ("codex", "not_found_404"): ("not_found", ["HTTP 404", "Not Found"]),
    ("codex", "auth_401"): ("auth", ["HTTP 401", KEY_401]),
    ("codex", "model_not_found"): ("model", [NO_MODEL]),
    ("codex", "zero_tokens"): ("zero_tokens", [ZERO]),
    ("opencode", "not_found_404"): ("not_found", ["HTTP 404", "Not Found"]),
    ("opencode", "auth_401"): ("auth", ["HTTP 401", KEY_401]),
    ("opencode", "model_not_found"): ("model", ["HTTP 404", NO_MODEL]),
    ("opencode", "zero_tokens"): ("zero_tokens", [ZERO]),
    # claude-code prints the same text for a 404 on the path and an unknown model
    ("claude-code", "not_found_404"): ("model", ["HTTP 404", CLAUDE_MODEL]),
    ("claude-code", "auth_401"): ("auth", ["HTTP 401", "authentication_failed", "time limit"]),
    ("claude-code", "model_not_found"): ("model", ["HTTP 404", CLAUDE_MODEL]),
    ("claude-code", "zero_tokens"): ("zero_tokens", [ZERO]),
}


def replay_cli(tmp_path: Path, agent: str, scenario: str) -> Path:
    """A fake ``agent`` executable replaying the recording ``scenario``."""
    rec_dir = HERE / f"{RECORDINGS[agent]}_recorded" / scenario
    outcome = json.loads((rec_dir / "outcome.json").read_text())
    d = tmp_path / "bin"
    exe = make_executable(d / EXECUTABLE[agent], REPLAY)
    for name in ("stdout.jsonl", "stderr.txt"):
        shutil.copyfile(rec_dir / name, d / name)
    cfg = {"exit_code": outcome["exit_code"], "timed_out": outcome["timed_out"]}
    (d / "replay.json").write_text(json.dumps(cfg))
    for p in d.iterdir():
        p.chmod(0o755 if p == exe else 0o644)
    return exe


@pytest.mark.parametrize(("agent", "scenario"), sorted(EXPECTED))
def test_recorded_endpoint_failure_is_an_infra_error(tmp_path, dataset, agent, scenario):
    cause, texts = EXPECTED[(agent, scenario)]
    exe = replay_cli(tmp_path, agent, scenario)
    cfg = RunConfig(
        dataset=dataset,
        agents=[AgentSpec(agent, "fake-model", ModelSettings(), {"executable": str(exe)})],
        run_dir=tmp_path / "runs" / "r",
        task_glob="*task2",
        limits=AgentLimits(timeout=3.0),
        infra_retries=1,
        retry_backoff=0.01,
    )
    rec = run_trials(cfg).records[0]
    assert rec.status == TrialStatus.infra_error, rec.error
    assert rec.error.startswith(f"{agent}: ")
    for text in texts:
        assert text in rec.error
    assert rec.details.get("infra_cause") == cause
    assert rec.details.get("infra_permanent") is True
    assert rec.attempts == []  # permanent: not retried


# --- the same evidence around the recordings: after an answer, transient, no evidence --------

FAKE = (
    python_shebang()
    + """
import json, sys, time
from pathlib import Path
if sys.argv[1:] == ["--version"]:  # the adapter's version probe: answer it, do not replay
    print("0.0.0 (replay)")
    sys.exit(0)
cfg = json.loads((Path(__file__).parent / "replay.json").read_text())
for line in cfg["lines"]:
    print(json.dumps(line), flush=True)
time.sleep(cfg.get("sleep", 0))
sys.exit(cfg.get("exit", 0))
"""
)


def run_lines(tmp_path, dataset, agent, lines, *, exit_code=0, sleep=0, timeout=3.0):
    d = tmp_path / "bin"
    exe = make_executable(d / EXECUTABLE[agent], FAKE)
    (d / "replay.json").write_text(json.dumps({"lines": lines, "exit": exit_code, "sleep": sleep}))
    (d / "replay.json").chmod(0o644)
    cfg = RunConfig(
        dataset=dataset,
        agents=[AgentSpec(agent, "fake-model", ModelSettings(), {"executable": str(exe)})],
        run_dir=tmp_path / "runs" / "r",
        task_glob="*task2",
        limits=AgentLimits(timeout=timeout),
        infra_retries=0,
    )
    return run_trials(cfg).records[0]


CODEX_404 = (
    'unexpected status 404 Not Found: {"detail": "Not Found"}, url: http://127.0.0.1:1/v1/responses'
)


def test_an_endpoint_error_after_the_model_answered_is_the_agents(tmp_path, dataset):
    answered = [
        {"type": "thread.started", "thread_id": "t1"},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "i0", "type": "agent_message", "text": "On it."}},
        {"type": "turn.failed", "error": {"message": CODEX_404}},
    ]
    rec = run_lines(tmp_path, dataset, "codex", answered, exit_code=1)
    assert rec.status == TrialStatus.agent_error
    assert rec.error == CODEX_404
    # the same failure before any answer is the endpoint's
    rec = run_lines(tmp_path / "b", dataset, "codex", answered[:2] + answered[3:], exit_code=1)
    assert rec.status == TrialStatus.infra_error
    assert rec.details["infra_cause"] == "not_found" and rec.details["infra_permanent"]


def test_transient_endpoint_errors_until_the_time_limit_are_transient(tmp_path, dataset):
    retry = {
        "type": "system",
        "subtype": "api_retry",
        "attempt": 1,
        "error_status": 529,
        "error": "overloaded_error",
        "session_id": "s1",
    }
    rec = run_lines(tmp_path, dataset, "claude-code", [retry, retry], sleep=60, timeout=1.5)
    assert rec.status == TrialStatus.infra_error
    assert "HTTP 529: overloaded_error" in rec.error and "time limit of 1.5 s" in rec.error
    assert rec.details["infra_cause"] == "server"
    assert "infra_permanent" not in rec.details


def test_a_zero_token_step_after_real_ones_is_not_an_endpoint_failure(tmp_path, dataset):
    def step(tokens):
        return {
            "type": "step_finish",
            "sessionID": "ses_1",
            "part": {"type": "step-finish", "tokens": {"input": tokens, "output": tokens}},
        }

    rec = run_lines(tmp_path, dataset, "opencode", [step(12), step(0)])
    assert rec.status == TrialStatus.no_deliverable
    rec = run_lines(tmp_path / "b", dataset, "opencode", [step(0), step(0), step(0)])
    assert rec.status == TrialStatus.infra_error
    assert "the endpoint answered with 0 tokens (3 model call(s)" in rec.error
    assert rec.details["infra_cause"] == "zero_tokens"
