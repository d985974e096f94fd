"""``jobbench export harbor``: exported tasks load with the real Harbor models, the agent
environment holds only the workspace, and the verifier grades oracle 1.0 and null 0.0."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.interop.harbor import ExportError, export_harbor
from jobbench.tasks import load_dataset

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "datasets" / "sample"
TASKS = load_dataset(SAMPLE).tasks


def _dirs(out: Path) -> list[Path]:
    return sorted(p for p in out.iterdir() if p.is_dir())


def test_every_sample_task_loads_with_harbors_models(sample_export: Path, harbor_probe) -> None:
    dirs = _dirs(sample_export)
    assert [d.name for d in dirs] == sorted(t.id.replace("/", "--") for t in TASKS)
    assert {t.split for t in TASKS} == {"main", "easy"} and len(dirs) == 16
    found = harbor_probe("tasks", *map(str, dirs))
    by_id = {t.id: t for t in TASKS}
    for d in dirs:
        r = found[str(d)]
        assert r["ok"], r
        task = by_id[r["metadata"]["jobbench_task_id"]]
        assert r["name"] == f"jobbench/{d.name}"
        assert r["dropped_keys"] == [] and r["round_trip"] and r["warnings"] == []
        assert (r["verifier_mode"], r["verifier_dir"], r["verifier_bundled"]) == (
            "separate",
            "tests",
            True,
        )
        assert (r["agent_network"], r["verifier_network"]) == ("public", "no-network")
        assert r["artifacts"] == ["/workspace/output"]
        assert (r["solve"], r["test"]) == ("solve.sh", "test.sh")
        assert r["instruction_chars"] > 200
        assert r["metadata"]["criteria"] == task.criterion_count
        assert r["metadata"]["search_files"] == task.search_files
    # the main sample withholds search references: recorded by name, never copied
    assert any(found[str(d)]["metadata"]["search_files"] for d in dirs if d.name[:4] == "main")


def test_protocol_and_judge_host_load_with_harbor(tmp_path: Path, harbor_probe) -> None:
    out = tmp_path / "x"
    export_harbor(
        SAMPLE,
        out,
        tasks="easy/civil_engineers/*",
        protocol="jobbench",
        judge_hosts=["api.example.org"],
    )
    (d,) = _dirs(out)
    r = harbor_probe("tasks", str(d))[str(d)]
    assert r["ok"] and r["dropped_keys"] == [], r
    assert (r["agent_network"], r["verifier_network"]) == ("no-network", "allowlist")
    assert "Work only inside the task folder" in (d / "instruction.md").read_text()


def test_environment_holds_only_the_workspace_and_no_hidden_file(sample_export: Path) -> None:
    by_dir = {t.id.replace("/", "--"): t for t in TASKS}
    for d in _dirs(sample_export):
        task = by_dir[d.name]
        env = d / "environment"
        assert sorted(p.name for p in env.iterdir()) == ["Dockerfile", "task_folder"]
        files = []
        for dirpath, dirnames, filenames in os.walk(env):
            for name in dirnames + filenames:
                assert not name.startswith("."), Path(dirpath) / name
                assert not (Path(dirpath) / name).is_symlink()
            files += [
                (Path(dirpath) / n).relative_to(env / "task_folder").as_posix()
                for n in filenames
                if Path(dirpath) != env
            ]
        assert sorted(files) == task.workspace_files
        for rel in task.workspace_files:
            assert (env / "task_folder" / rel).read_bytes() == (
                task.workspace_dir / rel
            ).read_bytes()
        # rubrics, the card and the solution only outside the agent's image
        data = (
            d
            / "tests"
            / "grading"
            / "dataset"
            / task.split
            / task.occupation
            / f"task{task.number}"
        )
        assert (data / "RUBRICS.json").read_bytes() == (task.root / "RUBRICS.json").read_bytes()
        assert (data / "task_card.md").read_text() == task.task_card
        assert not (d / "solution" / "decoys").exists() and (d / "solution" / "solve.py").is_file()
        assert "COPY task_folder/" in (env / "Dockerfile").read_text()
        assert "grading/jobbench-" in (d / "tests" / "Dockerfile").read_text()


def _verify(task_dir: Path, output: Path, logs: Path) -> subprocess.CompletedProcess[str]:
    """Run the exported tests/test.sh as Harbor would, with the container paths redirected
    and this interpreter (which has jobbench) as python3."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUDGE_", "JOBBENCH_JUDGE"))}
    env.update(
        JOBBENCH_HARBOR_TESTS=str(task_dir / "tests"),
        JOBBENCH_HARBOR_OUTPUT=str(output),
        JOBBENCH_HARBOR_LOGS=str(logs),
        JOBBENCH_HARBOR_PYTHON=sys.executable,
    )
    return subprocess.run(
        ["bash", str(task_dir / "tests" / "test.sh")],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_verifier_gives_oracle_1_and_null_0(sample_export: Path, tmp_path: Path, task) -> None:
    # one test per exported task (the 16 verifier runs of each kind spread over the workers)
    d = sample_export / task.id.replace("/", "--")
    solve = (d / "solution" / "solve.sh").read_text()
    assert "/solution/solve.py" in solve and "--output /workspace/output" in solve
    oracle_out, null_out = tmp_path / d.name / "oracle", tmp_path / d.name / "null"
    null_out.mkdir(parents=True)
    # what solve.sh does in the container, on the exported workspace
    subprocess.run(
        [
            sys.executable,
            str(d / "solution" / "solve.py"),
            "--workspace",
            str(d / "environment" / "task_folder"),
            "--output",
            str(oracle_out),
        ],
        check=True,
        capture_output=True,
    )
    for out, want, status in ((oracle_out, 1.0, "complete"), (null_out, 0.0, "no_deliverable")):
        logs = out.parent / f"logs-{out.name}"
        run = _verify(d, out, logs)
        assert run.returncode == 0, run.stderr
        reward = json.loads((logs / "reward.json").read_text())
        assert reward["reward"] == want and reward["rubric_pass_rate"] == want
        assert reward["criteria_total"] == task.criterion_count
        assert reward["criteria_passed"] == (task.criterion_count if want else 0)
        assert reward["max_points"] == task.total_weight
        assert all(isinstance(v, int | float) for v in reward.values())
        details = json.loads((logs / "jobbench-grade.json").read_text())
        assert details["status"] == status and details["task_id"] == task.id
        verdicts = [c for r in details["rubrics"] for c in r["criteria"]]
        assert len(verdicts) == task.criterion_count


def test_verifier_writes_no_reward_when_it_cannot_decide(tmp_path: Path) -> None:
    # a criterion without a check and no LLM judge: unjudged, so no reward (never a 0)
    ds = tmp_path / "ds"
    src = SAMPLE / "easy" / "civil_engineers" / "task1"
    shutil.copytree(src, ds / "easy" / "civil_engineers" / "task1")
    rubrics = ds / "easy" / "civil_engineers" / "task1" / "RUBRICS.json"
    data = json.loads(rubrics.read_text())
    data["rubrics"][0].pop("checks", None)
    rubrics.write_text(json.dumps(data))
    out = tmp_path / "out"
    export_harbor(ds, out)
    (d,) = _dirs(out)
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "answer.txt").write_text("something")
    run = _verify(d, tmp_path / "o", tmp_path / "logs")
    assert run.returncode == 1 and "unjudged" in run.stderr
    assert not (tmp_path / "logs" / "reward.json").exists()
    assert (tmp_path / "logs" / "jobbench-grade.json").is_file()


def test_hidden_workspace_files_are_left_out_and_recorded(tmp_path: Path) -> None:
    ds = tmp_path / "ds"
    shutil.copytree(SAMPLE / "easy" / "civil_engineers", ds / "easy" / "civil_engineers")
    (ds / "easy" / "civil_engineers" / "task1" / "task_folder" / ".notes").write_text("x")
    out = tmp_path / "out"
    res = export_harbor(ds, out)
    assert res.tasks[0].left_out == [".notes"]
    assert not (res.tasks[0].dir / "environment" / "task_folder" / ".notes").exists()
    manifest = json.loads((out / "jobbench-export.json").read_text())
    entry = manifest["tasks"]["easy--civil_engineers--task1"]
    assert entry["left_out"] == [".notes"] and entry["task_id"] == "easy/civil_engineers/task1"
    assert manifest["dataset_root"] == str(ds)


def test_export_refuses_a_foreign_directory_and_bad_options(tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "mine.txt").write_text("keep")
    with pytest.raises(ExportError, match="not empty and not an earlier export"):
        export_harbor(SAMPLE, tmp_path / "busy")
    with pytest.raises(ExportError, match="--protocol"):
        export_harbor(SAMPLE, tmp_path / "p", protocol="open")
    with pytest.raises(ExportError, match="no task matches"):
        export_harbor(SAMPLE, tmp_path / "n", tasks="*/nobody/*")
    assert (tmp_path / "busy" / "mine.txt").read_text() == "keep"


def test_cli_export_harbor(tmp_path: Path) -> None:
    out = tmp_path / "t"
    res = CliRunner().invoke(
        app,
        [
            "export",
            "harbor",
            str(SAMPLE),
            str(out),
            "--split",
            "easy",
            "--tasks",
            "*/statisticians/*",
        ],
    )
    assert res.exit_code == 0, res.output
    assert [d.name for d in _dirs(out)] == ["easy--statisticians--task1"]
    assert "harbor run" in res.output
    bad = CliRunner().invoke(app, ["export", "harbor", str(tmp_path / "none"), str(out)])
    assert bad.exit_code == 2
