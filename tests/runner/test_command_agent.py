"""``--agent command:CMD``: a user's executable runs in the sandbox under the documented
contract (environment, working directory, exit status, events file) and is graded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from runner_helpers import SAMPLE, run_easy_civil

from jobbench.agents import CommandAgent, make_agent, resolve_agent
from jobbench.rundir import RunDir

TASK = "easy/civil_engineers/task1"

# Copies the files of ./answer (beside this script) into the output directory, records what
# it was told, and writes a message and one model call's usage to the events file.
AGENT_SH = textwrap.dedent("""\
    #!/bin/sh
    set -e
    here=$(dirname "$0")
    cp -R "$here/answer/." "$JOBBENCH_OUTPUT_DIR/"
    {
      echo "cwd=$(pwd)"
      echo "task_dir=$JOBBENCH_TASK_DIR"
      echo "instructions=$(test -f "$JOBBENCH_TASK_DIR/TASK_INSTRUCTIONS.txt" && echo yes)"
      same=$(printf '%s' "$JOBBENCH_PROMPT" | cmp -s - "$JOBBENCH_PROMPT_FILE" && echo yes)
      echo "prompt_file_same=$same"
      echo "prompt_names_output=$(echo "$JOBBENCH_PROMPT" | grep -c "$JOBBENCH_OUTPUT_DIR")"
      echo "model=${JOBBENCH_MODEL:-}"
      echo "timeout=$JOBBENCH_TIMEOUT"
      echo "rubrics_visible=$(ls "$JOBBENCH_TASK_DIR/../RUBRICS.json" 2>/dev/null || echo no)"
    } > "$HOME/told.txt"
    cp "$HOME/told.txt" "$JOBBENCH_OUTPUT_DIR/.told.txt"
    cat >> "$JOBBENCH_EVENTS_FILE" <<'EOF'
    {"type": "session", "id": "sess-42"}
    @TOOL_CALL@
    {"type": "message", "role": "tool", "tool_call_id": "c1", "content": "done"}
    not json
    {"type": "usage", "input_tokens": 1200, "cached_input_tokens": 200, "output_tokens": 34}
    {"type": "usage", "input_tokens": 800, "output_tokens": 16, "cost_usd": 0.01}
    EOF
    exit "${EXIT_WITH:-0}"
""").replace(
    "@TOOL_CALL@",
    json.dumps(
        {
            "type": "message",
            "role": "assistant",
            "content": "copying",
            "tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "cp -R a/. o/"}}],
        }
    ),
)


def _answer(dst: Path) -> None:
    """The reference solution's deliverables of TASK, made by running its solve.py."""
    task = SAMPLE / TASK
    dst.mkdir(parents=True)
    subprocess.run(
        [
            sys.executable,
            str(task / "solution" / "solve.py"),
            "--workspace",
            str(task / "task_folder"),
            "--output",
            str(dst),
        ],
        check=True,
        capture_output=True,
    )
    assert any(dst.iterdir())


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    d = tmp_path / "myagent"
    d.mkdir()
    script = d / "my_agent.sh"
    script.write_text(AGENT_SH)
    script.chmod(0o755)
    _answer(d / "answer")
    return d


def _run(tmp_path: Path, cwd: Path, *extra: str) -> tuple[int, str]:
    return run_easy_civil(cwd, tmp_path / "runs", *extra)


def test_resolve_command_reference() -> None:
    assert resolve_agent("command:./x.sh --fast") is CommandAgent
    agent = make_agent("command:./x.sh --fast 'two words'")
    assert isinstance(agent, CommandAgent)
    assert agent.argv == ["./x.sh", "--fast", "two words"]
    assert agent.executable == os.path.abspath("x.sh")
    with pytest.raises(KeyError, match="needs a command"):
        make_agent("command:")


def test_command_agent_runs_end_to_end_and_is_graded(tmp_path: Path, agent_dir: Path) -> None:
    ref = "command:./my_agent.sh"
    code, out = _run(tmp_path, agent_dir, "--agent", f"{ref}@my-model")
    assert code == 0, out
    rd = RunDir(tmp_path / "runs" / "r")
    tid = f"{TASK}/command:._my_agent.sh@my-model/epoch-1"
    rec = rd.read_trial(tid).record
    assert rec is not None, list(rd.trials_dir.rglob("trial.json"))
    assert rec.status == "ok" and rec.agent == ref and rec.model == "my-model"
    assert rec.session_id == "sess-42" and rec.turns == 2
    assert rec.usage.input_tokens == 2000 and rec.usage.output_tokens == 50
    assert rec.usage.cached_input_tokens == 200 and rec.usage.cost_usd == pytest.approx(0.01)
    # the dotfile is not a deliverable; the answer files are
    names = {d.path for d in rec.deliverables}
    assert names == {p.name for p in (agent_dir / "answer").iterdir()}
    events = [json.loads(x) for x in rd.trajectory_file(tid).read_text().splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds.count("agent_event") == 5 and "agent_events_skipped" in kinds
    cmd = next(e for e in events if e["type"] == "command")
    assert cmd["cwd"].endswith("task_folder")
    assert {"JOBBENCH_OUTPUT_DIR", "JOBBENCH_PROMPT", "JOBBENCH_EVENTS_FILE"} <= set(
        cmd["env_names"]
    )
    grades = [p for p in rd.grades_dir.rglob("epoch-1.json")]
    assert len(grades) == 1
    assert json.loads(grades[0].read_text())["score"] == 1.0


def test_command_agent_is_told_the_contract(tmp_path: Path, agent_dir: Path) -> None:
    """The environment the script saw, checked from inside (through a non-dot copy)."""
    script = agent_dir / "my_agent.sh"
    script.write_text(
        AGENT_SH.replace('"$JOBBENCH_OUTPUT_DIR/.told.txt"', '"$JOBBENCH_OUTPUT_DIR/told.txt"')
    )
    code, out = _run(tmp_path, agent_dir, "--agent", "command:./my_agent.sh@m1", "--no-grade")
    assert code == 0, out
    rd = RunDir(tmp_path / "runs" / "r")
    told_file = rd.trial_dir(f"{TASK}/command:._my_agent.sh@m1/epoch-1") / "deliverables"
    told = dict(line.split("=", 1) for line in (told_file / "told.txt").read_text().splitlines())
    assert told["cwd"] == told["task_dir"] and told["task_dir"].endswith("/task_folder")
    assert told["instructions"] == "yes" and told["prompt_file_same"] == "yes"
    assert int(told["prompt_names_output"]) >= 1
    assert told["model"] == "m1" and told["timeout"] == "3600"
    assert told["rubrics_visible"] == "no"


@pytest.mark.parametrize(("exit_with", "status"), [("3", "agent_error"), ("75", "infra_error")])
def test_exit_status_meaning(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch, exit_with: str, status: str
) -> None:
    monkeypatch.setenv("EXIT_WITH", exit_with)
    code, out = _run(
        tmp_path,
        agent_dir,
        "--agent",
        "command:./my_agent.sh",
        "--agent-env",
        "EXIT_WITH",
        "--infra-retries",
        "0",
        "--no-grade",
    )
    assert code == (1 if status == "infra_error" else 0), out
    rec = RunDir(tmp_path / "runs" / "r").read_trial(f"{TASK}/command:._my_agent.sh@-/epoch-1")
    assert rec.record is not None and rec.record.status == status
    want = "(exit 75)" if status == "infra_error" else f"command exited with {exit_with}"
    assert want in (rec.record.error or "")


def test_model_option_reaches_a_command_agent(tmp_path: Path, agent_dir: Path) -> None:
    """``--model`` gives a command agent one configuration per model, and each run is told
    its model (``JOBBENCH_MODEL``); ``command:CMD@MODEL`` keeps its own."""
    from jobbench.runner import agent_specs

    specs = agent_specs(["command:./a.sh", "command:./b.sh@fixed", "null"], ["m1", "m2"])
    assert [(s.agent, s.model) for s in specs] == [
        ("command:./a.sh", "m1"),
        ("command:./a.sh", "m2"),
        ("command:./b.sh", "fixed"),
        ("null", None),
    ]
    assert [(s.agent, s.model) for s in agent_specs(["command:./a.sh"], [])] == [
        ("command:./a.sh", None)
    ]
    script = agent_dir / "my_agent.sh"
    script.write_text(
        AGENT_SH.replace('"$JOBBENCH_OUTPUT_DIR/.told.txt"', '"$JOBBENCH_OUTPUT_DIR/told.txt"')
    )
    code, out = _run(
        tmp_path, agent_dir, "--agent", "command:./my_agent.sh", "--model", "m2", "--no-grade"
    )
    assert code == 0, out
    rd = RunDir(tmp_path / "runs" / "r")
    tid = f"{TASK}/command:._my_agent.sh@m2/epoch-1"
    rec = rd.read_trial(tid).record
    assert rec is not None and rec.model == "m2"
    told_file = rd.trial_dir(tid) / "deliverables" / "told.txt"
    told = dict(line.split("=", 1) for line in told_file.read_text().splitlines())
    assert told["model"] == "m2"
