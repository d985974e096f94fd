"""A user's own agent class runs without touching ``AGENTS``: by ``module:Class``, through
the ``jobbench.agents`` entry-point group, and through the library call
:func:`jobbench.evaluate`."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from importlib import invalidate_caches
from pathlib import Path

import pytest
from typer.testing import CliRunner

import jobbench
from jobbench.agents import ENTRY_POINT_GROUP, available_agents, resolve_agent
from jobbench.cli import app
from jobbench.rundir import RunDir

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
TASK = "easy/civil_engineers/task1"

AGENT_MODULE = textwrap.dedent('''
    from jobbench.agents import OracleAgent


    class MyAgent(OracleAgent):
        """Runs the task's solution, after a note that proves this class ran."""

        name = "my-agent"

        def run(self, ctx):
            ctx.trajectory.emit("agent_note", text="user agent class ran")
            return super().run(ctx)


    class NotAnAgent:
        pass
''')


@pytest.fixture
def user_pkg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``mypkg/agents.py`` in a folder on ``sys.path``, with a dist-info registering
    ``MyAgent`` as ``mine`` in the ``jobbench.agents`` entry-point group."""
    root = tmp_path / "site"
    (root / "mypkg").mkdir(parents=True)
    (root / "mypkg" / "__init__.py").write_text("")
    (root / "mypkg" / "agents.py").write_text(AGENT_MODULE)
    dist = root / "mypkg_agents-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mypkg-agents\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nmine = mypkg.agents:MyAgent\n")
    monkeypatch.syspath_prepend(str(root))
    invalidate_caches()
    yield root
    for name in [m for m in sys.modules if m == "mypkg" or m.startswith("mypkg.")]:
        del sys.modules[name]


def _trial(run_dir: Path, agent: str) -> dict:
    tid = f"{TASK}/{agent}@-/epoch-1"
    rec = RunDir(run_dir).read_trial(tid).record
    assert rec is not None, tid
    return json.loads(rec.model_dump_json())


def _note_written(run_dir: Path, agent: str) -> bool:
    traj = RunDir(run_dir).trial_dir(f"{TASK}/{agent}@-/epoch-1")
    return any(
        "user agent class ran" in p.read_text(errors="replace") for p in traj.rglob("*.jsonl")
    )


def test_resolve_by_name_path_and_entry_point(user_pkg: Path) -> None:
    from jobbench.agents import OracleAgent

    assert resolve_agent("oracle") is OracleAgent
    by_path = resolve_agent("mypkg.agents:MyAgent")
    assert by_path.__name__ == "MyAgent" and issubclass(by_path, OracleAgent)
    assert resolve_agent("mine") is by_path
    assert "mine" in available_agents() and "oracle" in available_agents()
    with pytest.raises(TypeError, match="not a subclass of jobbench.agents.Agent"):
        resolve_agent("mypkg.agents:NotAnAgent")
    with pytest.raises(KeyError, match="cannot import 'Missing' from 'mypkg.agents'"):
        resolve_agent("mypkg.agents:Missing")
    with pytest.raises(KeyError, match="unknown agent 'nobody'.*mine.*module:Class"):
        resolve_agent("nobody")


@pytest.mark.parametrize("ref", ["mypkg.agents:MyAgent", "mine"])
def test_cli_runs_a_user_agent_class(user_pkg: Path, tmp_path: Path, ref: str) -> None:
    runs = tmp_path / "runs"
    res = CliRunner().invoke(
        app,
        [
            "run",
            str(SAMPLE),
            "--split",
            "easy",
            "--tasks",
            f"*/{TASK.split('/', 1)[1]}",
            "--agent",
            ref,
            "--runs-dir",
            str(runs),
            "--run-name",
            "r",
            "--no-progress",
        ],
    )
    assert res.exit_code == 0, res.output
    rec = _trial(runs / "r", ref)
    assert rec["status"] == "ok" and rec["agent"] == ref
    assert _note_written(runs / "r", ref)
    grades = RunDir(runs / "r").grades_dir
    (grade_file,) = [p for p in grades.rglob("*.json") if p.name.startswith("epoch-1")]
    assert json.loads(grade_file.read_text())["score"] == 1.0  # the solution passes every rubric


def test_unknown_agent_is_a_usage_error(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        app, ["run", str(SAMPLE), "--agent", "nomod:Nothing", "--runs-dir", str(tmp_path)]
    )
    assert res.exit_code == 2
    flat = re.sub(r"[\s│╭╮╰╯─]+", " ", res.output)  # the usage-error box wraps lines
    assert "cannot import 'Nothing' from 'nomod'" in flat


def test_evaluate_runs_grades_and_reports(user_pkg: Path, tmp_path: Path) -> None:
    result = jobbench.evaluate(
        SAMPLE,
        split="easy",
        tasks=f"*/{TASK.split('/', 1)[1]}",
        agents=["mypkg.agents:MyAgent", "null"],
        runs_dir=tmp_path / "runs",
    )
    assert result.run_dir.name == "sample-easy-mypkg.agents_MyAgent+null"
    assert result.summary.ran == 2 and len(result.grades) == 2
    scores = {g.agent: g.score for g in result.grades}
    assert scores == {"mypkg.agents:MyAgent": 1.0, "null": 0.0}
    board = {row["config"]: (row["micro"], row["macro"]) for row in result.leaderboard}
    assert board == {"mypkg.agents:MyAgent": (1.0, 1.0), "null": (0.0, 0.0)}
    assert result.report is not None and result.report.out_dir is not None
    summary = json.loads((result.report.out_dir / "summary.json").read_text())
    assert "mypkg.agents:MyAgent" in json.dumps(summary)
    # the report call alone reads the same run back
    again = jobbench.report(result.run_dir, write=False)
    assert again.out_dir is None and again.leaderboard == result.leaderboard
