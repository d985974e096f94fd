"""CLI adapters (claude-code, codex, opencode) against fake executables emitting
recorded-format JSON event streams."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runner_helpers import make_executable, python_shebang

from jobbench.agents import (
    AgentLimits,
    ClaudeCodeParser,
    CodexParser,
    ModelSettings,
    OpenCodeParser,
    Pricing,
    cli_version,
    install_mounts,
    looks_like_infra,
)
from jobbench.records import TrialStatus
from jobbench.runner import AgentSpec, RunConfig, run_trials
from jobbench.sandbox import bwrap_available

# --- recorded-format event streams (shapes per the sources in _cli_agents.py) ----------
SID = "5f1c2d9e-8a77-4d0b-9d3e-1c2b3a4d5e6f"
CLAUDE_OK = [
    {
        "type": "system",
        "subtype": "init",
        "session_id": SID,
        "cwd": "/workspace",
        "model": "claude-sonnet-4-6",
        "tools": ["Bash", "Read", "Write"],
        "permissionMode": "bypassPermissions",
    },
    {
        "type": "assistant",
        "session_id": SID,
        "message": {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [
                {"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {"command": "ls"}}
            ],
            "usage": {
                "input_tokens": 12,
                "cache_creation_input_tokens": 3000,
                "cache_read_input_tokens": 0,
                "output_tokens": 40,
            },
        },
    },
    {
        "type": "user",
        "session_id": SID,
        "message": {
            "role": "user",
            "content": [
                {"tool_use_id": "toolu_01", "type": "tool_result", "content": "task_folder\noutput"}
            ],
        },
    },
    {
        "type": "assistant",
        "session_id": SID,
        "message": {
            "id": "msg_02",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [{"type": "text", "text": "Saved memo.md."}],
            "usage": {
                "input_tokens": 8,
                "cache_creation_input_tokens": 100,
                "cache_read_input_tokens": 3000,
                "output_tokens": 25,
            },
        },
    },
    {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "duration_ms": 5230,
        "duration_api_ms": 4100,
        "num_turns": 2,
        "result": "Saved memo.md.",
        "session_id": SID,
        "total_cost_usd": 0.0123,
        "usage": {
            "input_tokens": 20,
            "cache_creation_input_tokens": 3100,
            "cache_read_input_tokens": 3000,
            "output_tokens": 65,
        },
    },
]
# Codex 0.171.0 (observed live, 2026-11-29): a non-fatal warning arrives as an item of type
# "error"; commands run as `/bin/bash -lc …`; usage adds cache_write_input_tokens and
# reasoning_output_tokens (a part of output_tokens)
CODEX_OK = [
    {"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"},
    {
        "type": "item.completed",
        "item": {
            "id": "item_w",
            "type": "error",
            "message": "Model metadata for `gpt-5.4` "
            "not found. Defaulting to fallback metadata; this can degrade performance.",
        },
    },
    {"type": "turn.started"},
    {
        "type": "item.completed",
        "item": {"id": "item_0", "type": "reasoning", "text": "**Reading the task**"},
    },
    {
        "type": "item.started",
        "item": {
            "id": "item_1",
            "type": "command_execution",
            "command": "/bin/bash -lc ls",
            "aggregated_output": "",
            "exit_code": None,
            "status": "in_progress",
        },
    },
    {
        "type": "item.completed",
        "item": {
            "id": "item_1",
            "type": "command_execution",
            "command": "/bin/bash -lc ls",
            "aggregated_output": "output\ntask_folder\n",
            "exit_code": 0,
            "status": "completed",
        },
    },
    {
        "type": "item.completed",
        "item": {"id": "item_2", "type": "agent_message", "text": "Wrote the memo."},
    },
    {
        "type": "turn.completed",
        "usage": {
            "input_tokens": 24763,
            "cached_input_tokens": 24448,
            "cache_write_input_tokens": 0,
            "output_tokens": 122,
            "reasoning_output_tokens": 64,
        },
    },
]
OPENCODE_OK = [
    {
        "type": "step_start",
        "timestamp": 1768191337567,
        "sessionID": "ses_44f9562d4ffe",
        "part": {
            "id": "prt_1",
            "sessionID": "ses_44f9562d4ffe",
            "messageID": "msg_1",
            "type": "step-start",
        },
    },
    {
        "type": "tool_use",
        "timestamp": 1768191338001,
        "sessionID": "ses_44f9562d4ffe",
        "part": {
            "id": "prt_2",
            "type": "tool",
            "tool": "bash",
            "callID": "call_1",
            "state": {
                "status": "completed",
                "input": {"command": "ls"},
                "output": "output\ntask_folder\n",
            },
        },
    },
    {
        "type": "step_finish",
        "timestamp": 1768191338100,
        "sessionID": "ses_44f9562d4ffe",
        "part": {
            "id": "prt_3",
            "type": "step-finish",
            "reason": "tool-calls",
            "cost": 0.0021,
            "tokens": {
                "input": 1500,
                "output": 80,
                "reasoning": 20,
                "cache": {"read": 500, "write": 0},
            },
        },
    },
    {
        "type": "step_start",
        "timestamp": 1768191338200,
        "sessionID": "ses_44f9562d4ffe",
        "part": {"id": "prt_4", "type": "step-start"},
    },
    {
        "type": "text",
        "timestamp": 1768191339000,
        "sessionID": "ses_44f9562d4ffe",
        "part": {"id": "prt_5", "type": "text", "text": "Memo written."},
    },
    {
        "type": "step_finish",
        "timestamp": 1768191339100,
        "sessionID": "ses_44f9562d4ffe",
        "part": {
            "id": "prt_6",
            "type": "step-finish",
            "reason": "stop",
            "cost": 0.0009,
            "tokens": {
                "input": 300,
                "output": 15,
                "reasoning": 0,
                "cache": {"read": 1600, "write": 40},
            },
        },
    },
]

FAKE = (
    python_shebang()
    + """
import json, os, re, sys, time
from pathlib import Path
cfg = json.loads((Path(__file__).parent / "fake.json").read_text())
keep = ["IS_SANDBOX", "ANTHROPIC_API_KEY", "CODEX_API_KEY", "OPENAI_API_KEY", "OPENCODE_PERMISSION",
        "OPENCODE_CONFIG_CONTENT", "CLAUDE_CODE_MAX_OUTPUT_TOKENS", "HOME", "JOBBENCH_API_KEY", \
"ANTHROPIC_BASE_URL"]
print(json.dumps({"type": "fake.argv", "argv": sys.argv[1:], "env": {k: os.environ[k] for k in \
keep if k in os.environ}}),
      flush=True)
prompt = " ".join(sys.argv[1:])
out = re.search(r"Output directory: (\\S+)", prompt).group(1)
for line in cfg.get("lines", []):
    print(line if isinstance(line, str) else json.dumps(line), flush=True)
if cfg.get("write"):
    Path(out, cfg["write"][0]).write_text(cfg["write"][1])
time.sleep(cfg.get("sleep", 0))
sys.stderr.write(cfg.get("stderr", ""))
sys.exit(cfg.get("exit", 0))
"""
)


def fake_cli(tmp_path: Path, name: str, **cfg) -> Path:
    d = tmp_path / f"bin-{name}"
    exe = make_executable(d / name, FAKE)
    (d / "fake.json").write_text(json.dumps(cfg))
    (d / "fake.json").chmod(0o644)
    return exe


def run_one(
    tmp_path,
    dataset,
    agent,
    model,
    exe,
    *,
    settings=None,
    timeout=120.0,
    max_turns=30,
    retries=0,
    options=None,
    pricing=None,
):
    spec = AgentSpec(
        agent, model, settings or ModelSettings(), {"executable": str(exe), **(options or {})}
    )
    cfg = RunConfig(
        dataset=dataset,
        agents=[spec],
        run_dir=tmp_path / "runs" / f"r-{agent}",
        task_glob="*task2",
        limits=AgentLimits(timeout=timeout, max_turns=max_turns),
        infra_retries=retries,
        retry_backoff=0.01,
        pricing=pricing,
    )
    summary = run_trials(cfg)
    assert len(summary.records) == 1
    rec = summary.records[0]
    traj = [
        json.loads(line)
        for line in (summary.run_dir / "trials" / rec.trial_id / "trajectory.jsonl")
        .read_text()
        .splitlines()
    ]
    fake = next(
        e["event"]
        for e in traj
        if e["type"] == "cli_event" and e["event"].get("type") == "fake.argv"
    )
    return rec, traj, fake, summary.run_dir


def test_claude_code_adapter(tmp_path, dataset, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    exe = fake_cli(tmp_path, "claude", lines=CLAUDE_OK, write=["memo.md", "Acme Supplies\n"])
    rec, traj, fake, run_dir = run_one(
        tmp_path,
        dataset,
        "claude-code",
        "claude-sonnet-4-6",
        exe,
        settings=ModelSettings(reasoning_effort="high", max_output_tokens=4000),
        max_turns=7,
    )
    assert rec.status == TrialStatus.ok
    assert [d.path for d in rec.deliverables] == ["memo.md"]
    assert rec.session_id == SID
    assert rec.turns == 2
    assert (rec.usage.input_tokens, rec.usage.cached_input_tokens, rec.usage.output_tokens) == (
        20 + 3100 + 3000,
        3000,
        65,
    )
    assert rec.usage.cost_usd == pytest.approx(0.0123)
    assert rec.usage.calls == 2
    argv = fake["argv"]
    assert argv[0] == "-p" and "Task folder:" in argv[1]
    for flag in (
        ["--output-format", "stream-json"],
        ["--verbose"],
        ["--model", "claude-sonnet-4-6"],
        ["--permission-mode", "bypassPermissions"],
        ["--max-turns", "7"],
        ["--effort", "high"],
    ):
        i = argv.index(flag[0])
        assert argv[i : i + len(flag)] == flag
    assert fake["env"]["ANTHROPIC_API_KEY"] == "sk-ant-test"
    assert fake["env"]["IS_SANDBOX"] == "1"
    assert fake["env"]["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] == "4000"
    events = [e["event"]["type"] for e in traj if e["type"] == "cli_event"]
    assert events == ["fake.argv", "system", "assistant", "user", "assistant", "result"]
    lock = json.loads((run_dir / "lock.json").read_text())
    assert lock["agents"] == [
        {
            "agent": "claude-code",
            "model": "claude-sonnet-4-6",
            "settings": {"reasoning_effort": "high", "max_output_tokens": 4000},
        }
    ]
    assert rec.settings == {"reasoning_effort": "high", "max_output_tokens": 4000}
    # the key is passed by name and never written into the run directory
    assert "sk-ant-test" not in (run_dir / "lock.json").read_text()
    assert "sk-ant-test" not in json.dumps([e for e in traj if e["type"] == "command"])


def test_codex_adapter(tmp_path, dataset, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("CODEX_API_KEY", raising=False)
    exe = fake_cli(tmp_path, "codex", lines=CODEX_OK, write=["memo.md", "Acme Supplies\n"])
    rec, traj, fake, _ = run_one(
        tmp_path,
        dataset,
        "codex",
        "gpt-5.4",
        exe,
        settings=ModelSettings(reasoning_effort="xhigh", temperature=0.3, max_output_tokens=4000),
    )
    assert rec.status == TrialStatus.ok
    assert rec.session_id == "0199a213-81c0-7800-8aa1-bbab2a035a53"
    assert (rec.usage.input_tokens, rec.usage.cached_input_tokens, rec.usage.output_tokens) == (
        24763,
        24448,
        122,
    )
    assert rec.usage.cost_usd is None  # codex reports no cost and no price was given
    assert rec.turns == 2  # one command execution + one agent message (the warning item is neither)
    assert rec.error is None
    argv = fake["argv"]
    assert argv[:2] == ["exec", "--json"]
    assert argv[argv.index("--model") + 1] == "gpt-5.4"
    assert "--dangerously-bypass-approvals-and-sandbox" in argv and "--skip-git-repo-check" in argv
    # the workspace codex is pointed at is the one the prompt names, /workspace in bwrap
    ws = argv[argv.index("-C") + 1]
    assert rec.sandbox == ("bwrap" if bwrap_available()[0] else "none")
    assert ws == "/workspace" if rec.sandbox == "bwrap" else ws.endswith("/workspace")
    assert 'model_reasoning_effort="xhigh"' in argv
    assert argv[-1].startswith(f"Task folder: {ws}/task_folder")
    assert fake["env"]["CODEX_API_KEY"] == "sk-test"
    command = next(e for e in traj if e["type"] == "command")
    assert command["ignored_settings"] == ["temperature", "max_output_tokens"]
    assert not any("max_output_tokens" in a for a in argv)  # no such Codex 0.171 config key


def test_opencode_adapter(tmp_path, dataset, monkeypatch):
    exe = fake_cli(
        tmp_path, "opencode", lines=["booting opencode…", *OPENCODE_OK], write=["memo.md", "Acme\n"]
    )
    rec, traj, fake, _ = run_one(
        tmp_path,
        dataset,
        "opencode",
        "openai/gpt-5.4",
        exe,
        settings=ModelSettings(reasoning_effort="low", temperature=0.2),
    )
    assert rec.status == TrialStatus.ok
    assert rec.session_id == "ses_44f9562d4ffe"
    assert rec.turns == 2
    assert rec.usage.input_tokens == (1500 + 500 + 0) + (300 + 1600 + 40)
    assert rec.usage.cached_input_tokens == 500 + 1600
    assert rec.usage.output_tokens == (80 + 20) + 15
    assert rec.usage.cost_usd == pytest.approx(0.0030)
    # --pure: no plugin install from npm at start; --title: no hidden title-generation call
    assert fake["argv"][:8] == [
        "run",
        "--format",
        "json",
        "--pure",
        "--title",
        "jobbench trial",
        "--model",
        "openai/gpt-5.4",
    ]
    assert json.loads(fake["env"]["OPENCODE_CONFIG_CONTENT"]) == {
        "agent": {"build": {"temperature": 0.2, "reasoningEffort": "low"}}
    }
    assert json.loads(fake["env"]["OPENCODE_PERMISSION"])["bash"] == "allow"
    assert [e["text"] for e in traj if e["type"] == "cli_output"] == ["booting opencode…"]
    # model folder name is path-safe, trial.json keeps the real name
    assert rec.model == "openai/gpt-5.4" and "/opencode@openai_gpt-5.4/" in rec.trial_id


def test_claude_max_turns_is_a_budget_stop(tmp_path, dataset):
    result = {
        "type": "result",
        "subtype": "error_max_turns",
        "is_error": True,
        "num_turns": 3,
        "session_id": SID,
        "total_cost_usd": 0.5,
        "usage": {"input_tokens": 1, "output_tokens": 2},
    }
    exe = fake_cli(tmp_path, "claude", lines=[result], write=["memo.md", "partial\n"])
    rec, *_ = run_one(tmp_path, dataset, "claude-code", "m", exe)
    assert rec.status == TrialStatus.agent_timeout
    assert "max-turns" in rec.error
    assert [d.path for d in rec.deliverables] == ["memo.md"]  # what was written is still collected


def test_api_overload_is_an_infrastructure_error(tmp_path, dataset):
    result = {
        "type": "result",
        "subtype": "success",
        "is_error": True,
        "api_error_status": 529,
        "num_turns": 1,
        "result": "API Error: Overloaded",
        "session_id": SID,
        "usage": {},
    }
    exe = fake_cli(tmp_path, "claude", lines=[result], exit=1)
    rec, *_ = run_one(tmp_path, dataset, "claude-code", "m", exe, retries=1)
    assert rec.status == TrialStatus.infra_error
    assert "Overloaded" in rec.error
    assert len(rec.attempts) == 1 and rec.attempts[0].status == "infra_error"


def test_agent_failure_is_an_agent_error(tmp_path, dataset):
    lines = [
        CODEX_OK[0],
        {"type": "turn.failed", "error": {"message": "model produced an invalid patch"}},
    ]
    exe = fake_cli(tmp_path, "codex", lines=lines, exit=1)
    rec, *_ = run_one(tmp_path, dataset, "codex", "m", exe)
    assert rec.status == TrialStatus.agent_error
    assert rec.error == "model produced an invalid patch"


def test_cli_timeout_and_missing_executable(tmp_path, dataset):
    exe = fake_cli(tmp_path, "opencode", lines=OPENCODE_OK[:1], sleep=60)
    rec, traj, *_ = run_one(tmp_path, dataset, "opencode", "p/m", exe, timeout=1.5)
    assert rec.status == TrialStatus.agent_timeout
    assert rec.session_id == "ses_44f9562d4ffe"
    assert next(e for e in traj if e["type"] == "cli_exit")["timed_out"] is True
    spec = AgentSpec(
        "codex", "m", ModelSettings(), {"executable": str(tmp_path / "nope" / "codex")}
    )
    cfg = RunConfig(
        dataset=dataset,
        agents=[spec],
        run_dir=tmp_path / "runs" / "missing",
        task_glob="*task2",
        infra_retries=0,
    )
    rec = run_trials(cfg).records[0]
    assert rec.status == TrialStatus.infra_error and "not found" in rec.error


def test_parsers_directly():
    p = ClaudeCodeParser()
    for ev in CLAUDE_OK[:4]:  # no result event yet: usage from the assistant messages
        p.feed(ev)
    assert (p.usage.input_tokens, p.usage.output_tokens, p.turns) == (
        12 + 3000 + 8 + 100 + 3000,
        65,
        2,
    )
    p = CodexParser()
    for ev in CODEX_OK + [
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 10, "cached_input_tokens": 0, "output_tokens": 5},
        }
    ]:
        p.feed(ev)
    assert (p.usage.calls, p.usage.input_tokens, p.usage.output_tokens) == (2, 24773, 127)
    p = OpenCodeParser()
    p.feed(
        {
            "type": "error",
            "sessionID": "s",
            "error": {"name": "APIError", "data": {"message": "Rate limit reached"}},
        }
    )
    assert p.error == "APIError: Rate limit reached" and p.infra
    assert looks_like_infra("stream disconnected before completion") and not looks_like_infra(
        "syntax error in patch"
    )


def test_install_mounts_for_node_packages(tmp_path):
    pkg = tmp_path / "lib" / "node_modules" / "@openai" / "codex"
    exe = make_executable(pkg / "bin" / "codex.js", "#!/usr/bin/env node\n")
    link = tmp_path / "bin" / "codex"
    link.parent.mkdir()
    link.symlink_to(exe)
    # the native binary of @openai/codex 0.171 lives in the sibling @openai/codex-linux-x64
    # package, so the whole node_modules directory is bound
    real, mounts, _ = install_mounts(link)
    assert real == exe
    assert [m.source for m in mounts][0] == tmp_path / "lib" / "node_modules"


def test_cli_version_comes_from_the_npm_package(tmp_path):
    pkg = tmp_path / "lib" / "node_modules" / "@openai" / "codex"
    exe = make_executable(pkg / "bin" / "codex.js", "#!/usr/bin/env node\n")
    (pkg / "package.json").write_text(json.dumps({"name": "@openai/codex", "version": "0.171.0"}))
    link = tmp_path / "bin" / "codex"
    link.parent.mkdir()
    link.symlink_to(exe)
    assert cli_version(link) == "0.171.0"
    # outside an npm tree (a fake, a native install) the version is unknown, never guessed
    assert cli_version(make_executable(tmp_path / "opt" / "codex", "#!/bin/sh\n")) is None
    assert cli_version(tmp_path / "missing") is None


# --- a custom model endpoint (api_base / --api-base) ------------------------------------
def test_codex_api_base_is_a_custom_responses_provider(tmp_path, dataset, monkeypatch):
    monkeypatch.setenv("JOBBENCH_API_KEY", "sk-endpoint")
    exe = fake_cli(tmp_path, "codex", lines=CODEX_OK, write=["memo.md", "Acme Supplies\n"])
    rec, traj, fake, run_dir = run_one(
        tmp_path,
        dataset,
        "codex",
        "qwen3-coder",
        exe,
        options={"api_base": "http://10.0.0.5:8000/v1/"},
    )
    assert rec.status == TrialStatus.ok
    argv = fake["argv"]
    i = argv.index('model_provider="jobbench"')
    assert argv[i - 1] == "-c" and argv[i + 1] == "-c"
    assert argv[i + 2] == (
        'model_providers.jobbench={name="JobBench endpoint", base_url="http://10.0.0.5:8000/v1", '
        'env_key="JOBBENCH_API_KEY", wire_api="responses"}'
    )
    assert argv[argv.index("--model") + 1] == "qwen3-coder"
    assert fake["env"]["JOBBENCH_API_KEY"] == "sk-endpoint"
    agents = json.loads((run_dir / "lock.json").read_text())["config"]["agents"]
    assert [a["api_base"] for a in agents.values()] == ["http://10.0.0.5:8000/v1"]
    assert "sk-endpoint" not in json.dumps(traj[:2])


def test_opencode_api_base_registers_an_openai_compatible_provider(tmp_path, dataset, monkeypatch):
    monkeypatch.delenv("JOBBENCH_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-oa")
    # cost 0 in every step (OpenCode 1.18.33 for a model without a catalog price) is unknown
    lines = [
        dict(e, part={**e["part"], "cost": 0}) if e["type"] == "step_finish" else e
        for e in OPENCODE_OK
    ]
    exe = fake_cli(tmp_path, "opencode", lines=lines, write=["memo.md", "Acme\n"])
    rec, traj, fake, _ = run_one(
        tmp_path,
        dataset,
        "opencode",
        "qwen3-coder",
        exe,
        settings=ModelSettings(temperature=0.0, max_output_tokens=4000),
        options={"api_base": "http://h:1/v1"},
        pricing=Pricing(input_per_mtok=1.0, output_per_mtok=2.0),
    )
    assert rec.status == TrialStatus.ok
    argv = fake["argv"]
    assert argv[argv.index("--model") + 1] == "jobbench/qwen3-coder"
    assert json.loads(fake["env"]["OPENCODE_CONFIG_CONTENT"]) == {
        "agent": {"build": {"temperature": 0.0}},
        "provider": {
            "jobbench": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "JobBench endpoint",
                "options": {"baseURL": "http://h:1/v1", "apiKey": "{env:JOBBENCH_API_KEY}"},
                "models": {
                    "qwen3-coder": {
                        "name": "qwen3-coder",
                        "temperature": True,
                        "limit": {"context": 0, "output": 4000},
                    }
                },
            }
        },
    }
    assert next(e for e in traj if e["type"] == "command")["ignored_settings"] == []
    assert fake["env"]["JOBBENCH_API_KEY"] == "sk-oa"
    # the given prices apply: (input 1500+500 + 300+1600+40) at $1/M + (output 100 + 15) at $2/M
    assert rec.usage.cost_usd == pytest.approx((3940 * 1.0 + 115 * 2.0) / 1e6)


def test_claude_code_api_base_sets_anthropic_base_url(tmp_path, dataset, monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JOBBENCH_API_KEY", "sk-gw")
    exe = fake_cli(tmp_path, "claude", lines=CLAUDE_OK, write=["memo.md", "Acme Supplies\n"])
    rec, _, fake, _ = run_one(
        tmp_path,
        dataset,
        "claude-code",
        "claude-sonnet-4-6",
        exe,
        options={"api_base": "http://gw:4000"},
    )
    assert rec.status == TrialStatus.ok
    assert fake["env"]["ANTHROPIC_BASE_URL"] == "http://gw:4000"
    assert fake["env"]["ANTHROPIC_API_KEY"] == "sk-gw"


def test_run_command_passes_api_base_to_codex_and_opencode(tmp_path, dataset, monkeypatch):
    from typer.testing import CliRunner

    from jobbench.cli import app

    monkeypatch.delenv("JOBBENCH_API_BASE", raising=False)
    exe = fake_cli(tmp_path, "codex", lines=CODEX_OK, write=["memo.md", "Acme Supplies\n"])
    r = CliRunner().invoke(
        app,
        [
            "run",
            "--no-preflight",
            str(dataset),
            "--runs-dir",
            str(tmp_path / "runs"),
            "--run-name",
            "ab",
            "--no-progress",
            "--no-grade",
            "--tasks",
            "*task2",
            "--agent",
            "codex@m",
            "--agent-bin",
            f"codex={exe}",
            "--api-base",
            "http://127.0.0.1:9/v1",
        ],
    )
    assert r.exit_code == 0, r.output
    trial = next((tmp_path / "runs" / "ab" / "trials").rglob("trajectory.jsonl"))
    fake = next(
        json.loads(line)["event"]
        for line in trial.read_text().splitlines()
        if '"fake.argv"' in line
    )
    assert any('base_url="http://127.0.0.1:9/v1"' in a for a in fake["argv"])


# --- error shapes observed live (2026-11-29; codex 0.171.0, opencode 1.18.33, claude 2.1.332) ---
CODEX_RECONNECT = {
    "type": "error",
    "message": "Reconnecting... 1/5 (unexpected status 401 Unauthorized: transient, "
    "url: http://127.0.0.1:44983/v1/responses)",
}


def test_codex_recovered_retry_is_not_an_error(tmp_path, dataset):
    lines = CODEX_OK[:3] + [CODEX_RECONNECT] + CODEX_OK[3:]
    exe = fake_cli(tmp_path, "codex", lines=lines, write=["memo.md", "Acme Supplies\n"])
    rec, *_ = run_one(tmp_path, dataset, "codex", "m", exe)
    assert rec.status == TrialStatus.ok and rec.error is None
    assert rec.usage.output_tokens == 122


def test_codex_error_events_explain_a_failed_exit(tmp_path, dataset):
    lines = [
        CODEX_OK[0],
        {"type": "turn.started"},
        {"type": "error", "message": "stream disconnected before completion: connection reset"},
    ]
    exe = fake_cli(tmp_path, "codex", lines=lines, exit=1)
    rec, *_ = run_one(tmp_path, dataset, "codex", "m", exe)
    assert rec.status == TrialStatus.infra_error
    assert (
        rec.error
        == "codex: codex exited with 1: stream disconnected before completion: connection reset"
    )


def test_opencode_http_status_decides_infra(tmp_path, dataset):
    ev = {
        "type": "error",
        "timestamp": 1795954851000,
        "sessionID": "ses_dd8b",
        "error": {
            "name": "APIError",
            "data": {
                "message": "invalid x-api-key",
                "statusCode": 401,
                "isRetryable": False,
                "metadata": {"url": "http://127.0.0.1:40143/v1/chat/completions"},
            },
        },
    }
    p = OpenCodeParser()
    p.feed(ev)
    assert p.error == "APIError: invalid x-api-key (HTTP 401)" and p.infra
    p = OpenCodeParser()
    p.feed(
        {
            **ev,
            "error": {
                "name": "APIError",
                "data": {"message": "context too long", "statusCode": 400},
            },
        }
    )
    assert p.error == "APIError: context too long (HTTP 400)" and not p.infra


def test_claude_synthetic_error_message_is_not_a_model_call():
    synthetic = {
        "type": "assistant",
        "session_id": SID,
        "error": "authentication_failed",
        "is_api_error_message": True,
        "api_error_status": 401,
        "message": {
            "id": "dc5e59cc",
            "model": "<synthetic>",
            "role": "assistant",
            "type": "message",
            "content": [{"type": "text", "text": "Invalid API key · Fix external API key"}],
            "usage": {
                "input_tokens": 0,
                "output_tokens": 0,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        },
    }
    result = {
        "type": "result",
        "subtype": "success",
        "is_error": True,
        "num_turns": 1,
        "session_id": SID,
        "total_cost_usd": 0,
        "api_error_status": 401,
        "api_error_type": "authentication_error",
        "terminal_reason": "api_error",
        "result": "Invalid API key · Fix external API key",
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }
    p = ClaudeCodeParser()
    p.feed(synthetic)
    assert p.usage.calls == 0
    p.feed(result)
    assert p.usage.calls == 1  # falls back to num_turns when no real message was seen
    assert p.error == "Invalid API key · Fix external API key" and p.infra


def test_codex_openai_base_url_becomes_a_custom_provider(tmp_path, dataset, monkeypatch):
    # codex 0.171 ignores OPENAI_BASE_URL (it called api.openai.com, then waited for the network)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://proxy.local:8080/v1/")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proxy")
    monkeypatch.delenv("JOBBENCH_API_KEY", raising=False)
    monkeypatch.delenv("CODEX_API_KEY", raising=False)
    exe = fake_cli(tmp_path, "codex", lines=CODEX_OK, write=["memo.md", "Acme Supplies\n"])
    rec, _, fake, _ = run_one(tmp_path, dataset, "codex", "m", exe)
    assert rec.status == TrialStatus.ok
    assert any('base_url="http://proxy.local:8080/v1"' in a for a in fake["argv"])
    assert fake["env"]["JOBBENCH_API_KEY"] == "sk-proxy"


def test_timeout_without_any_model_response_after_network_notices_is_infra(tmp_path, dataset):
    lines = [
        CODEX_OK[0],
        {"type": "turn.started"},
        {
            "type": "error",
            "message": "Reconnecting... waiting for network (Connection failed: error sending "
            "request)",
        },
    ]
    exe = fake_cli(tmp_path, "codex", lines=lines, sleep=60)
    rec, *_ = run_one(tmp_path, dataset, "codex", "m", exe, timeout=1.5)
    assert rec.status == TrialStatus.infra_error
    assert "no model response within 1.5 s" in rec.error and "waiting for network" in rec.error
    # the same wait after the model has answered once is the agent's time
    exe = fake_cli(tmp_path / "b", "codex", lines=lines + [CODEX_OK[-1]], sleep=60)
    rec, *_ = run_one(tmp_path / "b", dataset, "codex", "m", exe, timeout=1.5)
    assert rec.status == TrialStatus.agent_timeout


def test_cli_prefix_is_honoured_and_the_missing_cli_error_says_how_to_name_it(
    tmp_path, monkeypatch
):
    from jobbench.agents import make_agent

    for var in ("JOBBENCH_CODEX_BIN", "JOBBENCH_OPENCODE_BIN", "JOBBENCH_CLI_PREFIX"):
        monkeypatch.delenv(var, raising=False)
    assert make_agent("codex").executable == "codex"  # looked up on PATH at trial start
    bin_dir = tmp_path / "prefix" / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    make_executable(bin_dir / "codex", "#!/bin/sh\n")
    monkeypatch.setenv("JOBBENCH_CLI_PREFIX", str(tmp_path / "prefix"))
    assert make_agent("codex").executable == str(bin_dir / "codex")
    # a prefix without that CLI falls back to PATH; the per-CLI variable wins over the prefix
    assert make_agent("opencode").executable == "opencode"
    monkeypatch.setenv("JOBBENCH_CODEX_BIN", "/opt/codex")
    assert make_agent("codex").executable == "/opt/codex"
    with pytest.raises(Exception) as exc:
        install_mounts(Path("no-such-codex"), "codex")
    msg = str(exc.value)
    assert msg.startswith(
        "agent executable no-such-codex not found on PATH (name it with "
        "--agent-bin codex=PATH or JOBBENCH_CODEX_BIN, or set JOBBENCH_CLI_PREFIX"
    )
