"""The ``jobbench/jobbench`` Inspect task run by the real ``inspect_ai`` (``eval``, the
``local`` sandbox, the ReAct agent, our scorer and metrics); no part of Inspect is mocked.

The agent's model is Inspect's ``mockllm/model`` with scripted outputs (a callable that
reads the conversation, so concurrent samples share it safely). Every scripted output
carries its usage: without one mockllm counts tokens with tiktoken, which downloads its
encoding.

* the oracle replay: ``ls -laR .`` in the working directory (the listing the hidden-file
  test reads), then the task's own ``solution/solve.py`` run by the bash tool (the test
  knows the host path; the sandbox never received it), then an answer without a tool
  call, which ends the ReAct loop;
* the model that does nothing answers mockllm's default text at once.

Expected values come from the dataset (rubric counts and weights, workspace files, the
files ``solve.py`` writes), never from the scorer.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest

from jobbench.tasks import load_dataset, load_task

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "datasets" / "sample"
TWO = ["main/online_merchants/*", "main/supply_chain_managers/*"]
GROUPS = {"main/online_merchants/task1": "13-0000", "main/supply_chain_managers/task1": "11-0000"}
HIDDEN = ("RUBRICS.json", "task_card.md", "solution", "files_required_to_search", "solve.py")
DEFAULT_OUTPUT = "Default output from mockllm/model"


def _usage() -> Any:
    from inspect_ai.model import ModelUsage

    return ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)


def _text(content: str) -> Any:
    from inspect_ai.model import ModelOutput

    out = ModelOutput.from_content("mockllm/model", content)
    out.usage = _usage()
    return out


def _bash(command: str) -> Any:
    from inspect_ai.model import ModelOutput

    out = ModelOutput.for_tool_call("mockllm/model", "bash", {"command": command})
    out.usage = _usage()
    return out


def _tool_texts(messages: list[Any]) -> list[str]:
    return [m.text for m in messages if m.role == "tool"]


def _section(listing: str, folder: str) -> list[str]:
    """The names ``ls -laR`` lists under ``folder`` (its ``folder:`` block)."""
    for block in listing.strip().split("\n\n"):
        head, *lines = block.splitlines()
        if head == f"{folder}:":
            return [line.split()[-1] for line in lines if not line.startswith("total ")]
    raise AssertionError(f"no {folder} in the listing:\n{listing}")


def _solve_for(listing: str, tasks: list[Any]) -> Path:
    """The solve.py of the one task whose workspace files all appear in ``listing``."""
    names = set(re.split(r"\s+", listing))
    found = [t for t in tasks if all(Path(f).name in names for f in t.workspace_files)]
    assert len(found) == 1, [t.id for t in found]
    return found[0].solution_dir / "solve.py"


def _oracle(tasks: list[Any]) -> Any:
    """Scripted agent model: list the working directory, run the task's solve.py, stop."""

    def outputs(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        done = _tool_texts(input)
        if not done:
            return _bash("ls -laR .")
        if len(done) == 1:
            solve = _solve_for(done[0], tasks)
            return _bash(f"{sys.executable} {solve} --workspace task_folder --output output")
        return _text("The deliverables are saved in the output directory.")

    return outputs


def _nothing(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
    return _text(DEFAULT_OUTPUT)


def _run(task: Any, outputs: Any, log_dir: Path, **kwargs: Any) -> tuple[Any, float]:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    t0 = time.monotonic()
    (log,) = inspect_eval(
        task,
        model=get_model("mockllm/model", custom_outputs=outputs),
        log_dir=str(log_dir),
        display="none",
        **kwargs,
    )
    return log, time.monotonic() - t0


def _metrics(log: Any) -> dict[str, float]:
    (score,) = log.results.scores
    return {key: m.value for key, m in score.metrics.items()}


@pytest.fixture(scope="module")
def sample_tasks() -> list[Any]:
    ds = load_dataset(SAMPLE, splits=["main"])
    return [t for t in ds.tasks if t.id in GROUPS]


@pytest.fixture(scope="module")
def oracle_log(tmp_path_factory: pytest.TempPathFactory, sample_tasks: list[Any]) -> Any:
    from jobbench.interop.inspect import jobbench_task

    task = jobbench_task(dataset=str(SAMPLE), split="main", tasks=TWO)
    log, seconds = _run(task, _oracle(sample_tasks), tmp_path_factory.mktemp("oracle"))
    print(f"oracle replay: {len(log.samples)} samples in {seconds:.1f} s")
    return log


def test_oracle_replay_scores_full_marks(oracle_log: Any, sample_tasks: list[Any]) -> None:
    log = oracle_log
    assert log.status == "success", log.error
    assert sorted(s.id for s in log.samples) == sorted(GROUPS)
    by_id = {t.id: t for t in sample_tasks}
    for s in log.samples:
        t = by_id[s.id]
        score = s.scores["jobbench"]
        assert score.value == 1.0, score.explanation
        meta = score.metadata
        assert meta["state"] == "complete" and meta["scored"] is True
        assert meta["max_score"] == pytest.approx(t.total_weight)
        assert meta["passed_weight"] == pytest.approx(t.total_weight)
        assert len(meta["rubrics"]) == len(t.rubrics)
        assert all(r["passed"] for r in meta["rubrics"])
        verdicts = [c for r in meta["rubrics"] for c in r["criteria"]]
        assert len(verdicts) == t.criterion_count
        assert {c["verdict"] for c in verdicts} == {"pass"}
        assert {c["source"] for c in verdicts} == {"check"}
        assert s.metadata["task_id"] == t.id
        assert s.metadata["occupation"] == t.occupation
        assert s.metadata["soc_major_code"] == GROUPS[t.id]
        assert meta["refused"] == [] and meta["deliverables"]
    metrics = _metrics(log)
    assert metrics["micro"] == 1.0 and metrics["macro"] == 1.0
    for code in GROUPS.values():
        assert metrics[f"micro/{code}"] == 1.0
        assert metrics[f"macro/{code}"] == 1.0


def test_deliverables_are_those_solve_py_writes(
    oracle_log: Any, sample_tasks: list[Any], tmp_path: Path
) -> None:
    """The scorer graded exactly the files the oracle's solution writes."""
    by_id = {t.id: t for t in sample_tasks}
    for s in oracle_log.samples:
        t = by_id[s.id]
        out = tmp_path / t.occupation
        shutil.copytree(t.workspace_dir, out / "task_folder")
        (out / "output").mkdir()
        subprocess.run(
            [sys.executable, str(t.solution_dir / "solve.py"), "--workspace", "task_folder"]
            + ["--output", "output"],
            cwd=out,
            check=True,
            capture_output=True,
        )
        written = sorted(p.name for p in (out / "output").iterdir())
        assert s.scores["jobbench"].metadata["deliverables"] == written


def test_prompt_is_the_standard_prompt_with_sandbox_paths(oracle_log: Any) -> None:
    from jobbench.agents import standard_prompt

    for s in oracle_log.samples:
        user = next(m for m in s.messages if m.role == "user").text
        first = user.splitlines()[0]
        assert first.startswith("Task folder: /") and first.endswith("/task_folder")
        cwd = first.removeprefix("Task folder: ").removesuffix("/task_folder")
        assert user == standard_prompt(f"{cwd}/task_folder", f"{cwd}/output")
        assert s.input == standard_prompt("task_folder", "output")


def test_hidden_files_never_enter_the_sandbox(oracle_log: Any, sample_tasks: list[Any]) -> None:
    """The agent's own listing of its working directory (its first tool call, before any
    output exists) shows every workspace file and none of the task's hidden files."""
    by_id = {t.id: t for t in sample_tasks}
    for s in oracle_log.samples:
        t = by_id[s.id]
        listing = _tool_texts(s.messages)[0]
        names = set(re.split(r"\s+", listing))
        for rel in t.workspace_files:
            assert Path(rel).name in names
        hidden = list(HIDDEN) + [Path(f).name for f in t.search_files]
        for name in hidden:
            assert name not in names, f"{name} is in the sandbox of {t.id}"
        assert _section(listing, "./output") == [".", ".."]  # made by the setup step, empty
        assert s.metadata["jobbench_task_dir"] == str(t.root)  # host side only
    # at least one of the two has search references to withhold
    assert any(t.search_files for t in sample_tasks)


def test_a_model_that_does_nothing_scores_zero(tmp_path: Path) -> None:
    from jobbench.interop.inspect import jobbench_task

    task = jobbench_task(dataset=str(SAMPLE), split="main", tasks=TWO)
    log, seconds = _run(task, _nothing, tmp_path)
    print(f"null model: {len(log.samples)} samples in {seconds:.1f} s")
    assert log.status == "success", log.error
    assert len(log.samples) == 2
    for s in log.samples:
        assert [m.role for m in s.messages] == ["system", "user", "assistant"]
        assert s.messages[-1].text == DEFAULT_OUTPUT
        score = s.scores["jobbench"]
        assert score.value == 0.0
        assert score.metadata["state"] == "no_deliverable"
        assert score.metadata["deliverables"] == []
    metrics = _metrics(log)
    assert metrics["micro"] == 0.0 and metrics["macro"] == 0.0
    assert all(metrics[f"micro/{code}"] == 0.0 for code in GROUPS.values())


def test_symlinks_and_junk_in_output_are_not_collected(tmp_path: Path) -> None:
    from jobbench.interop.inspect import jobbench_task

    def outputs(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        if _tool_texts(input):
            return _text("done")
        return _bash(
            "echo note > output/note.md && ln -s /etc/hostname output/link.txt"
            " && echo x > output/.hidden && mkfifo output/pipe"
        )

    task = jobbench_task(dataset=str(SAMPLE), split="main", tasks="main/online_merchants/*")
    log, _ = _run(task, outputs, tmp_path)
    assert log.status == "success", log.error
    (s,) = log.samples
    meta = s.scores["jobbench"].metadata
    assert meta["deliverables"] == ["note.md"]
    assert meta["refused"] == ["link.txt: symlink refused", "pipe: named pipe refused"]
    assert meta["ignored"] == [".hidden: dotfile"]


def _without_check(tmp_path: Path) -> tuple[Path, str]:
    """A copy of the sample's online_merchants task whose first criterion has no check
    (only an LLM judge can decide it); returns the dataset root and that criterion."""
    src = SAMPLE / "main" / "online_merchants" / "task1"
    dst = tmp_path / "ds" / "main" / "online_merchants" / "task1"
    shutil.copytree(src, dst)
    path = dst / "RUBRICS.json"
    data = json.loads(path.read_text())
    assert data["rubrics"][0]["checks"][0] is not None
    data["rubrics"][0]["checks"][0] = None
    path.write_text(json.dumps(data, indent=2))
    task = load_task(dst)
    assert task.rubrics[0].criteria[0].check is None
    return tmp_path / "ds", task.rubrics[0].criteria[0].text


def _grader(calls: list[str]) -> Any:
    """Scripted judge: every criterion it is asked about passes (rubric-mode replies)."""

    def outputs(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        text = input[-1].text
        calls.append(text)
        m = re.search(r"with indexes ([0-9, ]+)\.", text)
        assert m, text[-500:]
        idx = [int(i) for i in m.group(1).split(",")]
        body = {
            "criteria": [
                {"index": i, "reasoning": "stated", "evidence": "", "verdict": "pass"} for i in idx
            ],
            "overall_reasoning": "all criteria hold",
            "rubric_passed": True,
        }
        return _text(json.dumps(body))

    return outputs


def test_llm_criteria_go_to_the_grader_role(tmp_path: Path) -> None:
    """A criterion without a check is decided by the ``grader`` model role (one call for
    its rubric); the verdict is recorded as the LLM's and the grader's usage as its role's.
    Without the role (judge ``auto``) that criterion is unjudged: not a pass, the sample
    scores 0 with reason ``grader_failed``."""
    from inspect_ai.model import get_model

    from jobbench.interop.inspect import jobbench_task

    root, criterion = _without_check(tmp_path)
    tasks = load_dataset(root).tasks

    calls: list[str] = []
    grader = get_model("mockllm/model", custom_outputs=_grader(calls))
    log, seconds = _run(
        jobbench_task(dataset=str(root)),
        _oracle(tasks),
        tmp_path / "with",
        model_roles={"grader": grader},
    )
    print(f"grader role: 1 sample in {seconds:.1f} s, {len(calls)} grader call(s)")
    assert log.status == "success", log.error
    (s,) = log.samples
    score = s.scores["jobbench"]
    assert score.value == 1.0, score.explanation
    first = score.metadata["rubrics"][0]["criteria"][0]
    assert first["source"] == "llm" and first["verdict"] == "pass"
    others = [c for r in score.metadata["rubrics"] for c in r["criteria"]][1:]
    assert {c["source"] for c in others} == {"check"}
    assert len(calls) == 1 and criterion in calls[0]
    assert "grader" in s.role_usage and s.role_usage["grader"].input_tokens == 100

    log, _ = _run(jobbench_task(dataset=str(root)), _oracle(tasks), tmp_path / "without")
    (s,) = log.samples
    score = s.scores["jobbench"]
    assert score.value == 0.0
    assert score.reason == "grader_failed"
    assert score.metadata["scored"] is False and score.metadata["state"] == "unjudged"
    first = score.metadata["rubrics"][0]["criteria"][0]
    assert first["verdict"] == "unjudged"
    assert _metrics(log)["micro"] == 0.0


def test_judge_grader_without_the_role_is_an_error(tmp_path: Path) -> None:
    from jobbench.interop.inspect import jobbench_task

    task = jobbench_task(
        dataset=str(SAMPLE), split="main", tasks="main/online_merchants/*", judge="grader"
    )
    log, _ = _run(task, _nothing, tmp_path)
    (s,) = log.samples
    assert s.error is not None and "grader model role" in s.error.message


def test_selection_and_invalid_datasets(tmp_path: Path) -> None:
    from jobbench.interop.inspect import jobbench_task
    from jobbench.tasks import InvalidDatasetError

    task = jobbench_task(dataset=str(SAMPLE), split="easy")
    assert len(task.dataset) == 8
    assert all(str(s.id).startswith("easy/") for s in task.dataset)
    with pytest.raises(ValueError, match="no task matches"):
        jobbench_task(dataset=str(SAMPLE), tasks="main/nobody/*")
    bad = tmp_path / "bad" / "main" / "online_merchants" / "task1"
    shutil.copytree(SAMPLE / "main" / "online_merchants" / "task1", bad)
    (bad / "RUBRICS.json").write_text("{not json")
    with pytest.raises(InvalidDatasetError):
        jobbench_task(dataset=str(tmp_path / "bad"))


def test_entry_point_names_the_registry_module() -> None:
    """pyproject's ``inspect_ai`` entry point imports the module that registers
    ``jobbench/jobbench`` (Inspect resolves ``jobbench/…`` names by loading the entry
    point named ``jobbench``); the installed metadata may predate the entry point, so the
    target is imported here as Inspect would import it."""
    import importlib

    from inspect_ai._util.registry import registry_lookup

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    eps = meta["project"]["entry-points"]["inspect_ai"]
    assert list(eps) == ["jobbench"]
    module = importlib.import_module(eps["jobbench"])
    found = registry_lookup("task", "jobbench/jobbench")
    assert found is not None and found is module.jobbench
    assert registry_lookup("scorer", "jobbench/jobbench") is module.jobbench_scorer


def test_cli_start_does_not_import_inspect() -> None:
    code = (
        "import sys, jobbench, jobbench.cli, jobbench.interop.inspect\n"
        "print('inspect_ai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
