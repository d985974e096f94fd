"""``--protocol public``: each CLI adapter builds the command line and configuration of the
published JobBench runner (Job-Bench/job-bench-eval, ``eval/run_benchmark_*.sh``; the
expected values below are the published settings, written out here, not taken from
``jobbench.agents._protocol``), against fake executables that record their argv,
environment and working directory. Also: the OpenCode retry after a timeout with the
partial output rescued, the protocol in ``lock.json`` and ``trial.json``, and resume
refusing to mix protocols."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from runner_helpers import make_executable, python_shebang

from jobbench.agents import AgentLimits, ModelSettings
from jobbench.records import TrialStatus
from jobbench.runner import AgentSpec, RunConfig, RunConfigError, run_trials
from jobbench.runner._cli import DEFAULT_SPLIT
from jobbench.tasks import default_dataset

# a fake CLI: answers --version; otherwise records argv, selected environment variables and
# its working directory, then follows the per-attempt script in fake.json (the attempt
# number is counted in $HOME, which survives a retry as it does on the public runner's host)
FAKE = (
    python_shebang()
    + r"""
import json, os, re, sys, time
from pathlib import Path
cfg = json.loads((Path(__file__).parent / "fake.json").read_text())
if sys.argv[1:] == ["--version"]:
    print(cfg.get("version", "0.0.0"))
    sys.exit(0)
keep = ["CLAUDE_NONINTERACTIVE", "IS_SANDBOX", "OPENCODE_PERMISSION", "OPENCODE_CONFIG_CONTENT",
        "OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX", "JOBBENCH_API_KEY"]
counter = Path(os.environ["HOME"], "attempts")
n = int(counter.read_text()) + 1 if counter.exists() else 1
counter.write_text(str(n))
print(json.dumps({"type": "fake.argv", "argv": sys.argv[1:], "cwd": os.getcwd(), "attempt": n,
                  "env": {k: os.environ[k] for k in keep if k in os.environ}}), flush=True)
prompt = " ".join(sys.argv[1:])
out = Path(re.search(r"Output directory: (\S+)", prompt).group(1))
folder = Path(re.search(r"Task folder: (\S+)", prompt).group(1))
step = cfg["attempts"][min(n, len(cfg["attempts"])) - 1]
for line in step.get("lines", []):
    print(json.dumps(line), flush=True)
if step.get("seen"):  # report what this attempt found in its task folder
    (out / step["seen"]).write_text("\n".join(sorted(p.name for p in folder.iterdir())))
for name, text in step.get("write", {}).items():
    (out / name).write_text(text)
if step.get("scribble"):  # leave a mark in the task folder (a retry must not see it)
    (folder / "scribble.txt").write_text("x")
time.sleep(step.get("sleep", 0))
sys.exit(step.get("exit", 0))
"""
)


def fake_cli(tmp_path: Path, name: str, *attempts: dict, version: str = "1.0.0") -> Path:
    d = tmp_path / f"bin-{name}"
    exe = make_executable(d / name, FAKE)
    (d / "fake.json").write_text(
        json.dumps({"attempts": list(attempts) or [{}], "version": version})
    )
    (d / "fake.json").chmod(0o644)
    return exe


def run(
    tmp_path,
    dataset,
    agent,
    model,
    exe,
    *,
    protocol="public",
    limits=None,
    settings=None,
    options=None,
    run_name=None,
    task_glob="*task2",
    splits=None,
):
    spec = AgentSpec(
        agent, model, settings or ModelSettings(), {"executable": str(exe), **(options or {})}
    )
    cfg = RunConfig(
        dataset=dataset,
        agents=[spec],
        run_dir=tmp_path / "runs" / (run_name or f"r-{agent}"),
        task_glob=task_glob,
        limits=limits or AgentLimits(),
        infra_retries=0,
        protocol=protocol,
        splits=splits,
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
    fakes = [
        e["event"]
        for e in traj
        if e["type"] == "cli_event" and e["event"].get("type") == "fake.argv"
    ]
    return rec, traj, fakes, summary.run_dir


def flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


PUBLIC_RULE = "you may look for it online"


# --- the command lines of the published runners ------------------------------------------
def test_public_claude_code(tmp_path, dataset):
    exe = fake_cli(tmp_path, "claude", {"write": {"memo.md": "Acme\n"}}, version="2.1.332")
    rec, traj, fakes, run_dir = run(tmp_path, dataset, "claude-code", "claude-sonnet-4-6", exe)
    assert rec.status == TrialStatus.ok and rec.protocol == "public"
    argv, env = fakes[0]["argv"], fakes[0]["env"]
    workspace = fakes[0]["cwd"]  # the runner starts claude in the workspace
    assert argv[0] == "-p" and PUBLIC_RULE in argv[1]
    assert flag(argv, "--model") == "claude-sonnet-4-6"
    assert flag(argv, "--add-dir") == workspace
    assert flag(argv, "--permission-mode") == "bypassPermissions"
    assert flag(argv, "--output-format") == "stream-json" and "--verbose" in argv
    assert "--max-turns" not in argv  # published: no turn cap
    assert "--effort" not in argv  # published: no effort flag
    assert env["CLAUDE_NONINTERACTIVE"] == "1"
    assert rec.limits["timeout"] == 3600 and rec.limits["max_turns"] is None
    assert rec.details["cli_version"] == "2.1.332"
    lock = json.loads((run_dir / "lock.json").read_text())
    assert lock["protocol"] == "public" and lock["config"]["prompt_version"] == "public-1"


def test_public_claude_code_explicit_turn_cap_wins(tmp_path, dataset):
    exe = fake_cli(tmp_path, "claude", {"write": {"memo.md": "Acme\n"}})
    rec, _, fakes, _ = run(
        tmp_path, dataset, "claude-code", "m", exe, limits=AgentLimits(max_turns=40)
    )
    assert flag(fakes[0]["argv"], "--max-turns") == "40" and rec.limits["max_turns"] == 40
    assert rec.limits["timeout"] == 3600  # not given: the published runner's


@pytest.mark.parametrize(
    ("model", "effort"),
    [
        ("gpt-5.4", "xhigh"),
        ("gpt-5.3-codex", "xhigh"),
        ("gpt-5", "high"),
        ("gpt-5.1", "high"),
        ("gpt-5.1-codex-mini", "high"),
    ],
)
def test_public_codex_effort_rule(tmp_path, dataset, model, effort, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    exe = fake_cli(tmp_path, "codex", {"write": {"memo.md": "Acme\n"}})
    rec, _, fakes, _ = run(tmp_path, dataset, "codex", model, exe)
    argv = fakes[0]["argv"]
    assert [a for a in argv if a.startswith("model_reasoning_effort=")] == [
        f'model_reasoning_effort="{effort}"'
    ]
    assert argv[:2] == ["exec", "--json"] and flag(argv, "--model") == model
    for f in ("--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--ephemeral"):
        assert f in argv
    assert flag(argv, "-C") == flag(argv, "--add-dir") == fakes[0]["cwd"]
    assert PUBLIC_RULE in argv[-1]
    assert rec.limits["timeout"] == 3600


def test_public_codex_explicit_effort_wins(tmp_path, dataset, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    exe = fake_cli(tmp_path, "codex", {"write": {"memo.md": "Acme\n"}})
    _, _, fakes, _ = run(
        tmp_path, dataset, "codex", "gpt-5.4", exe, settings=ModelSettings(reasoning_effort="low")
    )
    assert 'model_reasoning_effort="low"' in fakes[0]["argv"]


def test_public_opencode(tmp_path, dataset):
    exe = fake_cli(tmp_path, "opencode", {"write": {"memo.md": "Acme\n"}}, version="1.14.18")
    rec, _, fakes, _ = run(tmp_path, dataset, "opencode", "openai/gpt-5.4", exe)
    argv, env = fakes[0]["argv"], fakes[0]["env"]
    workspace = fakes[0]["cwd"]
    assert (
        argv[0] == "run"
        and flag(argv, "--format") == "json"
        and flag(argv, "--model") == "openai/gpt-5.4"
    )
    assert "--pure" not in argv  # the published runner loads plugins
    assert flag(argv, "--title").endswith("| openai/gpt-5.4 | attempt 1")
    assert PUBLIC_RULE in argv[-1]
    assert json.loads(env["OPENCODE_PERMISSION"]) == {
        "external_directory": {
            "*": "deny",
            "/tmp": "allow",
            "/tmp/*": "allow",
            "/tmp/**": "allow",
            workspace: "allow",
            f"{workspace}/**": "allow",
        }
    }
    assert env["OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX"] == "131072"
    assert json.loads(env["OPENCODE_CONFIG_CONTENT"]) == {
        "provider": {"openai": {"options": {"timeout": False, "chunkTimeout": 300000}}}
    }
    assert rec.limits["timeout"] == 7200  # published: 7,200 s per attempt
    assert rec.details["cli_version"] == "1.14.18"


def test_public_opencode_custom_endpoint_assumes_a_1m_context(tmp_path, dataset, monkeypatch):
    monkeypatch.setenv("JOBBENCH_API_KEY", "sk-x")
    exe = fake_cli(tmp_path, "opencode", {"write": {"memo.md": "Acme\n"}})
    _, _, fakes, _ = run(
        tmp_path, dataset, "opencode", "qwen3", exe, options={"api_base": "http://h:1/v1"}
    )
    config = json.loads(fakes[0]["env"]["OPENCODE_CONFIG_CONTENT"])
    provider = config["provider"]["jobbench"]
    assert provider["options"] == {
        "baseURL": "http://h:1/v1",
        "apiKey": "{env:JOBBENCH_API_KEY}",
        "timeout": False,
        "chunkTimeout": 300000,
    }
    assert provider["models"]["qwen3"]["limit"] == {"context": 1_000_000, "output": 131072}
    assert flag(fakes[0]["argv"], "--model") == "jobbench/qwen3"


def test_default_protocol_keeps_the_jobbench_settings(tmp_path, dataset):
    exe = fake_cli(tmp_path, "claude", {"write": {"memo.md": "Acme\n"}})
    rec, _, fakes, run_dir = run(tmp_path, dataset, "claude-code", "m", exe, protocol="jobbench")
    argv = fakes[0]["argv"]
    assert flag(argv, "--max-turns") == "100" and "--add-dir" not in argv
    assert "CLAUDE_NONINTERACTIVE" not in fakes[0]["env"]
    assert PUBLIC_RULE not in argv[1] and "Work only inside the task folder" in argv[1]
    assert rec.protocol == "jobbench" and rec.limits["timeout"] == 3600
    assert json.loads((run_dir / "lock.json").read_text())["protocol"] == "jobbench"


# --- OpenCode: one retry after a timeout, partial output rescued --------------------------
def test_public_opencode_retries_a_timeout_and_keeps_partial_output(tmp_path, dataset):
    exe = fake_cli(
        tmp_path,
        "opencode",
        {"write": {"partial.md": "first\n", "shared.md": "v1\n"}, "scribble": True, "sleep": 30},
        {"seen": "seen.txt", "write": {"shared.md": "v2\n", "final.md": "done\n"}},
    )
    rec, traj, fakes, run_dir = run(
        tmp_path, dataset, "opencode", "p/m", exe, limits=AgentLimits(timeout=2.0)
    )
    assert [f["attempt"] for f in fakes] == [1, 2]
    assert flag(fakes[1]["argv"], "--title").endswith("attempt 2")
    assert rec.status == TrialStatus.ok
    deliverables = run_dir / "trials" / rec.trial_id / "deliverables"
    assert sorted(d.path for d in rec.deliverables) == [
        "final.md",
        "partial.md",
        "seen.txt",
        "shared.md",
    ]
    assert (deliverables / "shared.md").read_text() == "v2\n"  # the retry's file wins
    assert (
        deliverables / "partial.md"
    ).read_text() == "first\n"  # rescued from the timed-out attempt
    assert (
        "scribble.txt" not in (deliverables / "seen.txt").read_text()
    )  # the retry got a fresh task folder
    attempts = rec.details["agent_attempts"]
    assert [a["status"] for a in attempts] == ["timeout", "success"]
    assert [a["timeout_seconds"] for a in attempts] == [2.0, 2.0]
    assert attempts[0]["rescued_files"] == ["partial.md", "shared.md"]
    assert [e["attempt"] for e in traj if e["type"] == "agent_attempt"] == [1, 2]


def test_public_opencode_second_timeout_gives_up_with_both_outputs(tmp_path, dataset):
    exe = fake_cli(
        tmp_path,
        "opencode",
        {"write": {"a.md": "1\n"}, "sleep": 30},
        {"write": {"b.md": "2\n"}, "sleep": 30},
    )
    rec, _, fakes, _ = run(
        tmp_path, dataset, "opencode", "p/m", exe, limits=AgentLimits(timeout=1.5)
    )
    assert len(fakes) == 2  # one retry, not more
    assert rec.status == TrialStatus.agent_timeout
    assert sorted(d.path for d in rec.deliverables) == ["a.md", "b.md"]
    assert [a["status"] for a in rec.details["agent_attempts"]] == ["timeout", "timeout"]


def test_jobbench_protocol_does_not_retry_a_timeout(tmp_path, dataset):
    exe = fake_cli(
        tmp_path, "opencode", {"write": {"a.md": "1\n"}, "sleep": 30}, {"write": {"b.md": "2\n"}}
    )
    rec, _, fakes, _ = run(
        tmp_path,
        dataset,
        "opencode",
        "p/m",
        exe,
        protocol="jobbench",
        limits=AgentLimits(timeout=1.5),
    )
    assert len(fakes) == 1 and rec.status == TrialStatus.agent_timeout
    assert [d.path for d in rec.deliverables] == ["a.md"] and "agent_attempts" not in rec.details


# --- the protocol is recorded, and a run directory never mixes two -------------------------
def test_resume_refuses_another_protocol(tmp_path, dataset):
    spec = AgentSpec("null")
    base = dict(
        dataset=dataset, agents=[spec], run_dir=tmp_path / "runs" / "mix", task_glob="*task2"
    )
    rec = run_trials(RunConfig(**base, protocol="public")).records[0]
    assert rec.protocol == "public"
    trial = tmp_path / "runs" / "mix" / "trials" / rec.trial_id / "trial.json"
    assert json.loads(trial.read_text())["protocol"] == "public"
    with pytest.raises(RunConfigError, match="protocol 'public', not 'jobbench'"):
        run_trials(RunConfig(**base))
    run_trials(RunConfig(**base, protocol="public"))  # the same protocol resumes


def test_a_lock_from_before_protocols_is_a_jobbench_run(tmp_path, dataset):
    base = dict(
        dataset=dataset,
        agents=[AgentSpec("null")],
        run_dir=tmp_path / "runs" / "old",
        task_glob="*task2",
    )
    run_trials(RunConfig(**base))
    lock_path = tmp_path / "runs" / "old" / "lock.json"
    lock = json.loads(lock_path.read_text())
    del lock["protocol"]
    lock_path.write_text(json.dumps(lock))
    with pytest.raises(RunConfigError, match="protocol 'jobbench', not 'public'"):
        run_trials(RunConfig(**base, protocol="public"))
    run_trials(RunConfig(**base))


def test_unknown_protocol_is_refused(tmp_path, dataset):
    with pytest.raises(RunConfigError, match="unknown protocol 'leaderboard'"):
        run_trials(
            RunConfig(
                dataset=dataset,
                agents=[AgentSpec("null")],
                run_dir=tmp_path / "r",
                protocol="leaderboard",
            )
        )


def test_cli_protocol_public_has_its_own_default_run_directory(tmp_path, dataset):
    from typer.testing import CliRunner

    from jobbench.cli import app

    args = [
        "run",
        str(dataset),
        "--runs-dir",
        str(tmp_path / "runs"),
        "--no-progress",
        "--no-grade",
        "--tasks",
        "*task2",
        "--agent",
        "null",
    ]
    assert CliRunner().invoke(app, args).exit_code == 0
    r = CliRunner().invoke(app, args + ["--protocol", "public"])
    assert r.exit_code == 0, r.output
    names = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert names == ["sample-null", "sample-null-public"]
    assert (
        json.loads((tmp_path / "runs" / "sample-null-public" / "lock.json").read_text())["protocol"]
        == "public"
    )
    r = CliRunner().invoke(app, args + ["--protocol", "leaderboard"])
    assert r.exit_code == 2 and "--protocol" in r.output


# --- each CLI adapter on the bundled sample ------------------------------------------------
@pytest.mark.parametrize("agent", ["claude-code", "codex", "opencode"])
def test_public_protocol_on_the_sample(tmp_path, agent, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    exe = fake_cli(tmp_path, agent, {"write": {"memo.md": "done\n"}})
    rec, _, fakes, _ = run(
        tmp_path,
        default_dataset(),
        agent,
        "gpt-5.4",
        exe,
        task_glob="*/civil_engineers/task1",
        splits=[DEFAULT_SPLIT],
    )
    argv = fakes[0]["argv"]
    prompt = argv[1] if agent == "claude-code" else argv[-1]
    assert PUBLIC_RULE in prompt and rec.protocol == "public"
    assert rec.task_id.endswith("/civil_engineers/task1")
    expected_timeout = 7200 if agent == "opencode" else 3600
    assert rec.limits["timeout"] == expected_timeout
    assert ("--max-turns" in argv) is False
    assert (agent != "codex") or 'model_reasoning_effort="xhigh"' in argv
    assert (agent != "opencode") or fakes[0]["env"][
        "OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX"
    ] == "131072"
    assert os.path.isabs(fakes[0]["cwd"])


def test_export_writes_one_trajectory_and_index_row_per_attempt(tmp_path, dataset):
    import shutil

    from jobbench.runner import export_official

    exe = fake_cli(
        tmp_path, "opencode", {"write": {"a.md": "1\n"}, "sleep": 30}, {"write": {"b.md": "2\n"}}
    )
    rec, _, _, run_dir = run(
        tmp_path, dataset, "opencode", "p/m", exe, limits=AgentLimits(timeout=1.5)
    )
    copy = tmp_path / "copy"
    shutil.copytree(dataset, copy / dataset.name)
    export_official(run_dir, copy)
    occ, task = rec.task_id.split("/")[1:3]
    traj_dir = copy / dataset.name / occ / task / "model_traj" / "p_m-opencode"
    rows = [
        line.split("\t") for line in (traj_dir / "attempt_index.tsv").read_text().splitlines()[1:]
    ]
    assert [(r[3], r[4], r[6]) for r in rows] == [("1", "timeout", "1.5"), ("2", "success", "1.5")]
    for r in rows:
        events = [json.loads(line) for line in Path(r[10]).read_text().splitlines()]
        assert Path(r[10]).name.startswith(f"{occ}_{task}_p_m-opencode_attempt{r[3]}_")
        assert [e["attempt"] for e in events if e.get("type") == "fake.argv"] == [int(r[3])]
