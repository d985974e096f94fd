"""Round trips with the public JobBench tools: reports written by ``jobbench grade DATASET``
and ``jobbench export official`` meet the public judge's "report already complete" rule,
partial ones do not, a public file is never overwritten, and each judge mode has its file.

The public rule is rebuilt here from the public tools' documentation (Job-Bench/job-bench-eval
``eval/README.md``: "the judge skips reports with the expected rubric count"; reports at
``eval_result/eval_<label>/<judge model, provider prefix removed, '.' → '-'>_judge.json``,
a run label appended as ``_<label>`` before ``_judge.json``; no report for an output folder
without files), not from their code or ours.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from judge_helpers import TableJudge, make_run, make_task, tail_text, write_files
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.testing import FakeOpenAIServer, ScriptedReply

RUBRICS = [
    {"rubric": "Totals", "weight": 2, "criterion": ["States the total of 42"]},
    {"rubric": "Method", "weight": 1, "criterion": ["Explains the method", "Lists sources"]},
]
TABLE = {
    "States the total of 42": ("pass", "total is 42"),
    "Explains the method": ("pass", "summed"),
    "Lists sources": ("fail", ""),
}
JUDGE_MODEL = "x-ai/grok-4.3"
FOREIGN = {
    "evaluated_model": "agent-x",
    "judge_model": "grok-4.3",
    "total_score": 3,
    "max_score": 3,
    "rubrics": [{"index": 0}, {"index": 1}],
}


# --- the public tools' documented behaviour --------------------------------------------
def public_report_path(task_dir: Path, label: str, judge_model: str, run_label: str = "") -> Path:
    name = judge_model.split("/")[-1].replace(".", "-")
    return (
        task_dir
        / "eval_result"
        / f"eval_{label}"
        / (f"{name}_{run_label}_judge.json" if run_label else f"{name}_judge.json")
    )


def public_rubric_count(task_dir: Path) -> int:
    data = json.loads((task_dir / "RUBRICS.json").read_text())
    return len(data["rubrics"] if "rubrics" in data else data["evaluation_rubrics"])


def public_judge_skips(
    task_dir: Path, label: str, judge_model: str = JUDGE_MODEL, run_label: str = ""
) -> bool:
    """True when the public judge would not judge ``model_output/<label>`` again: its report
    holds as many rubric entries as RUBRICS.json, or the output folder has no file."""
    out = task_dir / "model_output" / label
    if not any(p.is_file() for p in out.rglob("*")):
        return True
    path = public_report_path(task_dir, label, judge_model, run_label)
    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return len(report.get("rubrics") or []) == public_rubric_count(task_dir)


# --- helpers ------------------------------------------------------------------------------
def env(srv: FakeOpenAIServer, tmp: Path, **extra: str) -> dict[str, str]:
    return {
        "JUDGE_API_BASE": srv.base_url,
        "JUDGE_API_KEY": "test",
        "JUDGE_MODEL": JUDGE_MODEL,
        "JOBBENCH_JUDGE_CACHE": str(tmp / "cache.sqlite"),
        "JOBBENCH_JUDGE_MAX_ATTEMPTS": "1",
        **extra,
    }


def failing_method(table: TableJudge):
    """The judge answers every rubric but "Method" (HTTP 500: no verdict, undecided)."""

    def reply(req):
        if "Method" in tail_text(req):
            return ScriptedReply(status=500, body={"error": {"message": "boom"}})
        return table(req)

    return reply


def grade(tmp: Path, target: Path, *args: str, script=None) -> tuple[int, str, int]:
    with FakeOpenAIServer(script or TableJudge(TABLE)) as srv:
        res = CliRunner().invoke(
            app, ["grade", str(target), "--no-progress", *args], env=env(srv, tmp)
        )
        return res.exit_code, res.output, len(srv.requests)


def dataset_with_outputs(tmp: Path) -> tuple[Path, Path]:
    task = make_task(tmp, RUBRICS, split="main")
    write_files(
        task.root / "model_output" / "agent-x", {"answer.md": "The total is 42; summed the rows."}
    )
    (task.root / "model_output" / "agent-empty").mkdir()
    return tmp / "dataset", task.root


# --- jobbench grade DATASET ----------------------------------------------------------------
def test_grade_dataset_official_report_is_complete_by_the_public_rule(tmp_path):
    dataset, task = dataset_with_outputs(tmp_path)
    code, out, calls = grade(tmp_path, dataset, "--mode", "official")
    assert code == 0, out
    assert calls == 2  # one per rubric
    assert public_judge_skips(task, "agent-x")  # found under the plain name, complete
    report = json.loads(public_report_path(task, "agent-x", JUDGE_MODEL).read_text())
    assert (
        report["total_score"],
        report["max_score"],
        report["passed_count"],
        report["total_count"],
    ) == (2, 3, 1, 2)
    assert report["jobbench"]["partial"] is False
    # no report for the empty output, as the public judge
    assert not (task / "eval_result" / "eval_agent-empty").exists()
    assert "1 output folder(s) without files" in out


def test_grade_dataset_partial_report_is_not_complete(tmp_path):
    dataset, task = dataset_with_outputs(tmp_path)
    code, out, _ = grade(
        tmp_path, dataset, "--mode", "official", script=failing_method(TableJudge(TABLE))
    )
    assert code == 1, out  # a judge_error
    report = json.loads(public_report_path(task, "agent-x", JUDGE_MODEL).read_text())
    assert [r["index"] for r in report["rubrics"]] == [0]  # the undecided rubric is left out
    assert report["jobbench"]["partial"] is True and report["jobbench"]["undecided_rubrics"] == [1]
    assert (report["total_score"], report["max_score"], report["total_count"]) == (2, 3, 2)
    assert not public_judge_skips(task, "agent-x")  # the public judge would judge it again
    # a rerun of ours retries only the undecided rubric, and the report becomes complete
    code, out, calls = grade(tmp_path, dataset, "--mode", "official")
    assert code == 0 and calls == 1, out
    assert public_judge_skips(task, "agent-x")


def test_two_judge_modes_give_two_files(tmp_path):
    dataset, task = dataset_with_outputs(tmp_path)
    assert grade(tmp_path, dataset, "--mode", "official")[0] == 0
    official = public_report_path(task, "agent-x", JUDGE_MODEL)
    before = official.read_text()
    code, out, _ = grade(tmp_path, dataset, "--mode", "rubric")
    assert code == 0, out
    rubric = public_report_path(task, "agent-x", JUDGE_MODEL, "jobbench-rubric-auto")
    assert official.read_text() == before  # the official report is untouched
    assert json.loads(rubric.read_text())["jobbench"]["judge_key"] == "x-ai_grok-4.3.rubric.auto"
    assert json.loads(official.read_text())["jobbench"]["judge_key"] == "x-ai_grok-4.3.official"
    reports = sorted(p.name for p in official.parent.glob("*_judge.json"))
    assert reports == ["grok-4-3_jobbench-rubric-auto_judge.json", "grok-4-3_judge.json"]


def test_grade_dataset_never_overwrites_a_public_report(tmp_path):
    dataset, task = dataset_with_outputs(tmp_path)
    path = public_report_path(task, "agent-x", JUDGE_MODEL)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(FOREIGN))
    code, out, calls = grade(tmp_path, dataset, "--mode", "official")
    assert code == 2 and calls == 0  # refused before any judge call
    assert "grok-4-3_judge.json" in out and "not written by JobBench" in out
    assert json.loads(path.read_text()) == FOREIGN
    # --force replaces it and keeps the public file in a backup
    code, out, _ = grade(tmp_path, dataset, "--mode", "official", "--force")
    assert code == 0, out
    assert json.loads(path.read_text())["jobbench"]["judge_key"] == "x-ai_grok-4.3.official"
    [kept] = (task / ".jobbench-backups").rglob("grok-4-3_judge.json")
    assert json.loads(kept.read_text()) == FOREIGN
    assert kept.relative_to(task / ".jobbench-backups").parts[1:] == (
        "eval_result",
        "eval_agent-x",
        "grok-4-3_judge.json",
    )


# --- jobbench export official -------------------------------------------------------------
def run_with_trials(tmp: Path) -> tuple[Path, Path, Path]:
    task = make_task(tmp, RUBRICS, split="main")
    run = make_run(
        tmp / "run",
        tmp / "dataset",
        [
            {
                "task": task,
                "agent": "codex",
                "model": "gpt-5.4",
                "epoch": 1,
                "files": {"answer.md": "The total is 42."},
            },
            {
                "task": task,
                "agent": "null",
                "model": "-",
                "epoch": 1,
                "files": {},
                "status": "no_deliverable",
            },
        ],
    )
    copy = tmp / "copy"
    shutil.copytree(tmp / "dataset", copy)
    return run, copy, copy / "main" / "accountants" / "task1"


def export(run: Path, copy: Path, *args: str):
    return CliRunner().invoke(app, ["export", "official", str(run), str(copy), *args])


def test_export_official_report_is_complete_and_partial_is_not(tmp_path):
    run, copy, task = run_with_trials(tmp_path)
    assert grade(tmp_path, run, "--mode", "official")[0] == 0
    res = export(run, copy)
    assert res.exit_code == 0, res.output
    label = "gpt-5-4-codex"
    assert public_judge_skips(task, label)
    assert (task / "model_output" / label / "answer.md").read_text() == "The total is 42."
    assert not (task / "model_output" / "null").exists()  # nothing to judge, no report
    assert not (task / "eval_result" / "eval_null").exists()
    # a partial grade (one rubric undecided) is exported partial: the public judge redoes it
    copy2 = tmp_path / "copy2"
    shutil.copytree(tmp_path / "dataset", copy2)
    run2, _, _ = run_with_trials(tmp_path / "b")
    assert (
        grade(tmp_path / "b", run2, "--mode", "official", script=failing_method(TableJudge(TABLE)))[
            0
        ]
        == 1
    )
    res = export(run2, copy2)
    assert res.exit_code == 0 and "1 partial" in res.output, res.output
    task2 = copy2 / "main" / "accountants" / "task1"
    assert not public_judge_skips(task2, label)
    report = json.loads(public_report_path(task2, label, JUDGE_MODEL).read_text())
    assert report["jobbench"]["undecided_rubrics"] == [1] and len(report["rubrics"]) == 1


def test_export_two_judge_keys_give_two_files_and_never_overwrite_a_public_file(tmp_path):
    run, copy, task = run_with_trials(tmp_path)
    assert grade(tmp_path, run, "--mode", "official")[0] == 0
    assert grade(tmp_path, run, "--mode", "rubric")[0] == 0
    label = "gpt-5-4-codex"
    public = public_report_path(task, label, JUDGE_MODEL)
    public.parent.mkdir(parents=True)
    public.write_text(json.dumps(FOREIGN))
    res = export(run, copy)
    assert res.exit_code == 2 and "grok-4-3_judge.json (not written by JobBench)" in res.output
    assert json.loads(public.read_text()) == FOREIGN
    assert not (task / "model_output").exists()  # nothing written
    res = export(run, copy, "--force")
    assert res.exit_code == 0, res.output
    assert "eval_result: 2" in res.output
    reports = sorted(p.name for p in public.parent.glob("*_judge.json"))
    assert reports == ["grok-4-3_jobbench-rubric-auto_judge.json", "grok-4-3_judge.json"]
    assert public_judge_skips(task, label)
    assert (
        json.loads(next((task / ".jobbench-backups").rglob("grok-4-3_judge.json")).read_text())
        == FOREIGN
    )
    # a second export replaces only its own files
    res = export(run, copy)
    assert res.exit_code == 0, res.output


def test_export_refuses_an_output_folder_it_did_not_write(tmp_path):
    run, copy, task = run_with_trials(tmp_path)
    theirs = write_files(
        task / "model_output" / "gpt-5-4-codex", {"deliverable.md": "someone else's"}
    )
    res = export(run, copy)
    assert (
        res.exit_code == 2 and "model_output/gpt-5-4-codex (not written by JobBench)" in res.output
    )
    assert (theirs / "deliverable.md").read_text() == "someone else's"


def test_a_reexport_drops_its_own_stale_report_and_keeps_other_keys(tmp_path):
    run, copy, task = run_with_trials(tmp_path)
    assert grade(tmp_path, run, "--mode", "official")[0] == 0
    assert grade(tmp_path, run, "--mode", "rubric")[0] == 0
    assert export(run, copy).exit_code == 0
    label = "gpt-5-4-codex"
    official = public_report_path(task, label, JUDGE_MODEL)
    rubric = public_report_path(task, label, JUDGE_MODEL, "jobbench-rubric-auto")
    assert official.is_file() and rubric.is_file()
    # exporting one key leaves the other key's report alone
    assert export(run, copy, "--judge-key", "x-ai_grok-4.3.rubric.auto").exit_code == 0
    assert official.is_file() and rubric.is_file()
    # the trial's official grade is gone: the re-export removes the report it wrote for it
    (
        run
        / "grades"
        / "x-ai_grok-4.3.official"
        / "main"
        / "accountants"
        / "task1"
        / "codex@gpt-5.4"
        / "epoch-1.json"
    ).unlink()
    assert export(run, copy, "--judge-key", "x-ai_grok-4.3.official").exit_code == 0
    assert not official.exists() and rubric.is_file()
