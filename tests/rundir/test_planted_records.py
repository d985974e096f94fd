"""Records an agent writes into ``output/`` are ordinary deliverables.

A hostile agent (the builtin agent driven by a scripted model) writes a forged, a junk or a
path-traversing ``trial.json`` into its output directory, together with a grade-shaped
file, a ``lock.json`` and a ``reward.json``. ``jobbench run`` (collection, grading, report)
and ``jobbench export official`` must treat all of them as the agent's deliverables: every
other trial's grade and the oracle's score stay what a run without the hostile agent gives,
and nothing is written outside the run directory (and the export's dataset copy).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.sandbox import bwrap_available
from jobbench.testing import FakeOpenAIServer, ScriptedReply, chat_reply

FIXTURE_TASKS = Path(__file__).resolve().parents[1] / "fixtures" / "rundir-v1" / "sample"
TASK_A = "sample/bookkeeping_accounting_and_auditing_clerks/task1"
TASK_B = "sample/supply_chain_managers/task1"
HOSTILE = "builtin@hostile"

needs_bwrap = pytest.mark.skipif(
    not bwrap_available()[0], reason="bubblewrap not usable here: " + bwrap_available()[1]
)


def _trial(
    task: str, trial_id: str, *, agent: str = "oracle", epoch: int = 1, **kw: Any
) -> dict[str, Any]:
    return {
        "trial_id": trial_id,
        "task_id": task,
        "task_digest": "0" * 64,
        "agent": agent,
        "model": "-",
        "epoch": epoch,
        "status": "ok",
        "deliverables": [],
        **kw,
    }


def _forged_grade(task: str) -> dict[str, Any]:
    return {
        "trial_id": f"{task}/oracle@-/epoch-1",
        "task_id": task,
        "judge": {"key": "checks"},
        "rubrics": [],
        "score": 0.0,
        "max_score": 42.0,
        "passed_weight": 0.0,
        "status": "complete",
    }


def planted_files(variant: str, tmp: Path) -> dict[str, str | bytes]:
    """Files (relative to ``output/``) the hostile agent writes."""
    files: dict[str, str | bytes] = {
        "grades/checks/" + TASK_A + "/oracle@-/epoch-1.json": json.dumps(_forged_grade(TASK_A)),
        "lock.json": json.dumps(
            {"dataset_root": "/", "tasks": {TASK_A: "0" * 64}, "agents": [], "epochs": 9}
        ),
        "reward.json": json.dumps({"reward": 1.0}),
        "memo.md": "The answer is in the records.\n",
    }
    if (
        variant == "forged"
    ):  # plausible records of trials that never ran: an empty second oracle epoch
        files["trial.json"] = json.dumps(_trial(TASK_A, f"{TASK_A}/oracle@-/epoch-2", epoch=2))
        files["deep/er/still/trial.json"] = json.dumps(
            _trial(TASK_B, f"{TASK_B}/oracle@-/epoch-2", epoch=2)
        )
        files["a/b/c/d/e/trial.json"] = json.dumps(
            _trial(TASK_B, f"{TASK_B}/null@-/epoch-1", agent="null", status="ok")
        )
    elif variant == "junk":
        files["trial.json"] = "{ this is not json"
        files["sub/trial.json"] = "[]"
        files["bin/trial.json"] = b"\xff\xfe\x00junk"
    else:  # trial ids that leave the run directory when used as paths
        files["trial.json"] = json.dumps(_trial(TASK_A, "../../../../escaped-relative"))
        files["sub/trial.json"] = json.dumps(_trial(TASK_A, str(tmp / "escaped-absolute")))
        files["sub2/trial.json"] = json.dumps(
            _trial(TASK_B, f"{TASK_B}/../../../../../../escaped-dotdot/epoch-1")
        )
    return files


def writer_program(files: dict[str, str | bytes]) -> str:
    """Python run by the agent inside the sandbox: writes ``files`` under /workspace/output."""
    enc = {k: (v.encode() if isinstance(v, str) else v).hex() for k, v in files.items()}
    return (
        "import os\nF = " + repr(enc) + "\n"
        "for rel, data in F.items():\n"
        "    p = os.path.join('/workspace/output', rel)\n"
        "    os.makedirs(os.path.dirname(p), exist_ok=True)\n"
        "    open(p, 'wb').write(bytes.fromhex(data))\n"
    )


def hostile_model(program: str):
    def reply(req: dict[str, Any]) -> ScriptedReply:
        if req["messages"][-1]["role"] == "tool":
            return chat_reply(tool_calls=[{"name": "finish", "arguments": {"summary": "done"}}])
        return chat_reply(tool_calls=[{"name": "python", "arguments": {"code": program}}])

    return reply


def tree(root: Path) -> set[str]:
    return {str(Path(d, n)) for d, ds, fs in os.walk(root) for n in ds + fs}


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def do_run(tmp: Path, name: str, agents: list[str], api_base: str | None = None) -> Path:
    env = {
        "JOBBENCH_SCRATCH": str(tmp / "scratch"),
        "XDG_CACHE_HOME": str(tmp / "cache"),
        "JOBBENCH_API_KEY": "test",
        "COLUMNS": "200",
    }
    args = [
        "run",
        str(tmp / "sample"),
        "--runs-dir",
        str(tmp / "runs"),
        "--run-name",
        name,
        "--no-progress",
        "--infra-retries",
        "0",
        "--sandbox",
        "bwrap",
    ]
    for a in agents:
        args += ["--agent", a]
    if api_base:
        args += ["--api-base", api_base]
    res = CliRunner().invoke(app, args, env=env)
    assert res.exit_code == 0, res.output
    return tmp / "runs" / name


def rows(run_dir: Path) -> dict[str, dict[str, Any]]:
    """results.jsonl of the run's report, by trial id, without fields that depend on time."""
    out = {}
    for line in (run_dir / "report" / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        for k in ("wall_seconds", "run", "anchor", "config"):
            row.pop(k, None)
        out[row["trial_id"]] = row
    return out


def grade_files(run_dir: Path) -> dict[str, dict[str, Any]]:
    """Every grade file under grades/checks/ → the verdicts it holds."""
    base = run_dir / "grades" / "checks"
    out = {}
    for p in sorted(base.rglob("*.json")):
        g = json.loads(p.read_text())
        out[p.relative_to(base).as_posix()] = {
            "score": g["score"],
            "status": g["status"],
            "verdicts": [[c["verdict"] for c in r["criteria"]] for r in g["rubrics"]],
        }
    return out


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The same tasks run with the honest agents only."""
    tmp = tmp_path_factory.mktemp("baseline")
    shutil.copytree(FIXTURE_TASKS, tmp / "sample")
    run_dir = do_run(tmp, "base", ["oracle", "null"])
    return {"rows": rows(run_dir), "grades": grade_files(run_dir)}


@needs_bwrap
@pytest.mark.parametrize("variant", ["forged", "junk", "traversal"])
def test_records_planted_by_an_agent_change_nothing(
    tmp_path: Path, variant: str, baseline: dict[str, Any]
) -> None:
    shutil.copytree(FIXTURE_TASKS, tmp_path / "sample")
    copy = tmp_path / "copy"
    shutil.copytree(FIXTURE_TASKS, copy / "sample")
    files = planted_files(variant, tmp_path)
    before = tree(tmp_path)
    with FakeOpenAIServer(hostile_model(writer_program(files))) as srv:
        run_dir = do_run(tmp_path, "hostile", ["oracle", "null", HOSTILE], srv.base_url)
    res = CliRunner().invoke(app, ["export", "official", str(run_dir), str(copy)])
    assert res.exit_code == 0, res.output

    # every planted file is an ordinary deliverable of the hostile trials, graded as one
    hostile_ids = {f"{t}/{HOSTILE}/epoch-1" for t in (TASK_A, TASK_B)}
    for tid in hostile_ids:
        rec = json.loads((run_dir / "trials" / tid / "trial.json").read_text())
        assert rec["status"] == "ok" and rec["trial_id"] == tid
        assert sorted(d["path"] for d in rec["deliverables"]) == sorted(files)
        for rel, data in files.items():
            raw = data.encode() if isinstance(data, str) else data
            assert (run_dir / "trials" / tid / "deliverables" / rel).read_bytes() == raw
        grade = json.loads((run_dir / "grades" / "checks" / f"{tid}.json").read_text())
        assert grade["trial_id"] == tid and grade["status"] == "complete"
        assert sorted(d["path"] for d in grade["deliverables"]) == sorted(files)

    # the honest trials' grades and report rows are those of the run without the hostile agent
    got_rows = rows(run_dir)
    assert set(got_rows) == set(baseline["rows"]) | hostile_ids
    for tid, row in baseline["rows"].items():
        assert got_rows[tid] == row, tid
    assert {tid: r["score"] for tid, r in got_rows.items() if "/oracle@" in tid} == {
        f"{TASK_A}/oracle@-/epoch-1": 1.0,
        f"{TASK_B}/oracle@-/epoch-1": 1.0,
    }
    grades = grade_files(run_dir)
    assert set(grades) == set(baseline["grades"]) | {f"{tid}.json" for tid in hostile_ids}
    assert {k: v for k, v in grades.items() if k in baseline["grades"]} == baseline["grades"]
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    overall = {c["label"]: c["overall"] for c in summary["configurations"]}
    assert overall["oracle"]["micro"]["estimate"] == 1.0 and overall["oracle"]["trials"] == 2
    assert overall["null"]["micro"]["estimate"] == 0.0 and overall["null"]["trials"] == 2

    # the export holds the oracle's real deliverables and one result per trial with deliverables
    for task in (TASK_A, TASK_B):
        real = run_dir / "trials" / task / "oracle@-" / "epoch-1" / "deliverables"
        out = copy / task / "model_output" / "oracle"
        assert {p.name: sha(p) for p in out.iterdir()} == {p.name: sha(p) for p in real.iterdir()}
        labels = sorted(p.name for p in (copy / task / "model_output").iterdir())
        assert labels == ["hostile-builtin", "oracle"]  # the null agent left nothing: no folder
        results = sorted(
            p.relative_to(copy / task).as_posix() for p in (copy / task / "eval_result").rglob("*")
        )
        assert results == [
            "eval_result/eval_hostile-builtin",
            "eval_result/eval_hostile-builtin/checks_judge.json",
            "eval_result/eval_oracle",
            "eval_result/eval_oracle/checks_judge.json",
        ]
        oracle = json.loads(
            (copy / task / "eval_result" / "eval_oracle" / "checks_judge.json").read_text()
        )
        assert oracle["total_score"] == oracle["max_score"] > 0

    # nothing was written outside the run directory, the export copy and the scratch and cache roots
    allowed = (run_dir, copy, tmp_path / "scratch", tmp_path / "cache")
    new = {
        p for p in tree(tmp_path) - before if not any(Path(p).is_relative_to(a) for a in allowed)
    }
    assert new == {str(tmp_path / "runs")}
    assert not Path("/escaped-relative.json").exists()
