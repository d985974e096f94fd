"""`jobbench grade` on a run directory and on a dataset in the public layout."""

from __future__ import annotations

import json
from pathlib import Path

from judge_helpers import TableJudge, make_run, make_task, write_files
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.records import GradeRecord
from jobbench.testing import FakeOpenAIServer

RUBRICS = [
    {"rubric": "Totals", "weight": 2, "criterion": ["States the total of 42"]},
    {"rubric": "Method", "weight": 1, "criterion": ["Explains the method", "Lists sources"]},
]
TABLE = {
    "States the total of 42": ("pass", "total is 42"),
    "Explains the method": ("pass", "summed"),
    "Lists sources": ("fail", ""),
}


def _env(srv: FakeOpenAIServer, tmp: Path) -> dict[str, str]:
    # the public tool's variable names are honoured
    return {
        "JUDGE_API_BASE": srv.base_url,
        "JUDGE_API_KEY": "test",
        "JUDGE_MODEL": "grok-4.3",
        "JOBBENCH_JUDGE_CACHE": str(tmp / "cache.sqlite"),
    }


def test_grade_public_layout_writes_eval_result(tmp_path: Path) -> None:
    task = make_task(tmp_path, RUBRICS, split="main")
    write_files(
        task.root / "model_output" / "claude-code",
        {"answer.md": "The total is 42; summed the rows."},
    )
    write_files(task.root / "model_output" / "codex", {"answer.md": "No idea."})
    table = TableJudge(TABLE)
    runner = CliRunner()
    with FakeOpenAIServer(table) as srv:
        res = runner.invoke(
            app,
            ["grade", str(tmp_path / "dataset"), "--no-progress", "--output", "claude-code"],
            env=_env(srv, tmp_path),
        )
        assert res.exit_code == 0, res.output
        assert srv.calls == 2
    out = task.root / "eval_result" / "eval_claude-code"
    details = json.loads((out / "grok-4-3_jobbench-rubric-auto_judge.json").read_text())
    assert details["evaluated_model"] == "claude-code" and details["judge_model"] == "grok-4.3"
    # Totals passes (2 points), Method fails on "Lists sources"
    assert (
        details["total_score"],
        details["max_score"],
        details["passed_count"],
        details["total_count"],
    ) == (2, 3.0, 1, 2)
    assert details["pass_rate"] == "50%"
    r1 = details["rubrics"][1]
    assert r1["index"] == 1 and r1["rubric"] == "Method" and r1["weight"] == 1
    assert r1["result"]["passed"] is False and r1["result"]["score"] == 0
    assert (r1["result"]["criteria_count"], r1["result"]["criteria_passed"]) == (2, 1)
    assert r1["result"]["criteria_results"][1] == {
        "index": 1,
        "criterion": "Lists sources",
        "passed": False,
        "reasoning": "judged 1",
        "evidence": "",
    }
    record_file = out / "grok-4-3_jobbench-rubric-auto_judge.jobbench.json"
    rec = GradeRecord.model_validate_json(record_file.read_text())
    assert rec.score == 2 / 3 and rec.trial_id == "main/accountants/task1/claude-code@-/epoch-1"
    assert not (task.root / "eval_result" / "eval_codex").exists()  # filtered by --output

    # a details file not written by us is never overwritten
    (out / "grok-4-3_mine_judge.json").write_text('{"total_score": 1}')
    with FakeOpenAIServer(table) as srv:
        res = runner.invoke(
            app,
            ["grade", str(tmp_path / "dataset"), "--no-progress", "--run-label", "mine"],
            env=_env(srv, tmp_path),
        )
        assert srv.calls == 0
    assert res.exit_code == 2 and "not written by JobBench" in res.output
    assert (out / "grok-4-3_mine_judge.json").read_text() == '{"total_score": 1}'


def test_grade_run_dir_cli_checks_only_and_llm(tmp_path: Path) -> None:
    rubrics = RUBRICS + [
        {
            "rubric": "File",
            "weight": 1,
            "criterion": ["Has a CSV"],
            "checks": [{"kind": "file_exists", "file": "*.csv"}],
        }
    ]
    task = make_task(tmp_path, rubrics)
    run = make_run(
        tmp_path / "run",
        tmp_path / "dataset",
        [
            {
                "task": task,
                "agent": "oracle",
                "model": "-",
                "epoch": 1,
                "files": {"answer.md": "The total is 42; summed.", "t.csv": "a\n1\n"},
            },
            {
                "task": task,
                "agent": "broken",
                "model": "-",
                "epoch": 1,
                "files": {},
                "status": "infra_error",
            },
        ],
    )
    runner = CliRunner()
    env = {"JUDGE_MODEL": "", "JOBBENCH_JUDGE_MODEL": ""}
    res = runner.invoke(app, ["grade", str(run), "--no-progress", "--json"], env=env)
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["judge"]["key"] == "checks"
    assert summary["rows"] == [
        {
            "agent_model": "oracle@-",
            "trials": 1,
            "graded_now": 1,
            "scored": 0,
            "mean_score": None,
            "judge_error": 0,
            "unjudged": 1,
            "no_deliverable": 0,
            "judge_usage": summary["rows"][0]["judge_usage"],
        }
    ]
    rec = GradeRecord.model_validate_json(
        (run / "grades" / "checks" / "sample/accountants/task1/oracle@-/epoch-1.json").read_text()
    )
    assert [g.passed for g in rec.rubrics] == [None, None, True]
    assert not (
        run / "grades" / "checks" / "sample/accountants/task1/broken@-"
    ).exists()  # infra_error: never graded

    with FakeOpenAIServer(TableJudge(TABLE)) as srv:
        env = _env(srv, tmp_path)
        res = runner.invoke(
            app, ["grade", str(run), "--no-progress", "--mode", "task", "--json"], env=env
        )
        assert res.exit_code == 0, res.output
        assert srv.calls == 1
    summary = json.loads(res.stdout)
    assert summary["judge"]["key"] == "grok-4.3.task.auto"
    assert summary["rows"][0]["mean_score"] == (2 + 1) / 4
    assert summary["judge_usage"]["calls"] == 1

    # grading again: nothing to do, so this command spent nothing; the kept record cost 1 call
    with FakeOpenAIServer(TableJudge(TABLE)) as srv:
        res = runner.invoke(
            app,
            ["grade", str(run), "--no-progress", "--mode", "task", "--json"],
            env=_env(srv, tmp_path),
        )
        assert res.exit_code == 0, res.output
        assert srv.calls == 0
    again = json.loads(res.stdout)
    assert again["judge_usage"]["calls"] == 0 and again["recorded_judge_usage"]["calls"] == 1
    assert again["rows"][0]["graded_now"] == 0 and again["rows"][0]["mean_score"] == (2 + 1) / 4
    with FakeOpenAIServer(TableJudge(TABLE)) as srv:
        res = runner.invoke(
            app, ["grade", str(run), "--no-progress", "--mode", "task"], env=_env(srv, tmp_path)
        )
    assert (
        "judge usage of this command: 0 calls" in res.output
        and "0 trial(s) graded now, 1 kept" in res.output
    )


def test_grade_cli_bad_target(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["grade", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "no such directory" in res.output
    make_task(tmp_path, RUBRICS)
    res = runner.invoke(app, ["grade", str(tmp_path / "dataset")])
    assert res.exit_code == 2 and "model_output" in res.output


def test_error_messages_keep_square_brackets(tmp_path: Path) -> None:
    """Paths and messages are printed literally, never read as rich markup: a `[dev]` in a
    path stays in the error message."""
    odd = tmp_path / "w[dev]"
    odd.mkdir()
    res = CliRunner().invoke(app, ["grade", str(odd), "--config", str(odd / "missing[bold].toml")])
    assert res.exit_code == 2
    assert "missing[bold].toml" in res.output.replace("\n", "")
    res = CliRunner().invoke(
        app, ["grade", str(odd)], env={"JUDGE_MODEL": "", "JOBBENCH_JUDGE_MODEL": ""}
    )
    assert res.exit_code == 2 and f"{odd}: neither a run directory" in res.output.replace("\n", "")


def test_grade_summary_says_who_decided(tmp_path: Path) -> None:
    # every criterion has a check: --decide auto sends nothing to the judge, and says so
    rubrics = [
        {
            "rubric": "File",
            "weight": 1,
            "criterion": ["Has a CSV"],
            "checks": [{"kind": "file_exists", "file": "*.csv"}],
        },
        {
            "rubric": "Memo",
            "weight": 1,
            "criterion": ["Has a memo"],
            "checks": [{"kind": "file_exists", "file": "*.md"}],
        },
    ]
    task = make_task(tmp_path, rubrics)
    run = make_run(
        tmp_path / "run",
        tmp_path / "dataset",
        [{"task": task, "agent": "oracle", "model": "-", "epoch": 1, "files": {"t.csv": "a\n1\n"}}],
    )
    runner = CliRunner()
    with FakeOpenAIServer(
        TableJudge({"Has a CSV": ("pass", ""), "Has a memo": ("fail", "")})
    ) as srv:
        res = runner.invoke(app, ["grade", str(run), "--no-progress"], env=_env(srv, tmp_path))
        assert res.exit_code == 0, res.output
        assert srv.calls == 0
        assert (
            "2 criteria decided by checks, 0 by the judge (use --decide llm to ask the judge)"
        ) in res.output
        res = runner.invoke(
            app,
            ["grade", str(run), "--no-progress", "--decide", "llm", "--json"],
            env=_env(srv, tmp_path),
        )
        assert res.exit_code == 0, res.output
        assert srv.calls == 2  # one rubric-mode call per rubric
        summary = json.loads(res.stdout)
        assert (summary["criteria_decided_by_checks"], summary["criteria_sent_to_judge"]) == (
            0,
            2,
        )
        assert summary["criteria_from_verdict_cache"] == 0
        # a regrade with --force asks again: every verdict comes from the verdict cache, and
        # the summary says no call was made
        res = runner.invoke(
            app,
            ["grade", str(run), "--no-progress", "--decide", "llm", "--force"],
            env=_env(srv, tmp_path),
        )
        assert res.exit_code == 0, res.output
        assert srv.calls == 2
        assert (
            "0 criteria decided by checks, 2 by the judge (2 of them from the verdict cache, "
            "no call made)"
        ) in " ".join(res.output.split())


def test_grade_takes_the_judge_base_url_by_its_own_name(tmp_path: Path) -> None:
    # --judge-base-url names the judge's endpoint (run's --api-base is the agent's)
    rubrics = [{"rubric": "Memo", "weight": 1, "criterion": ["Has a memo"]}]
    task = make_task(tmp_path, rubrics)
    run = make_run(
        tmp_path / "run",
        tmp_path / "dataset",
        [{"task": task, "agent": "oracle", "model": "-", "epoch": 1, "files": {"m.md": "memo\n"}}],
    )
    with FakeOpenAIServer(TableJudge({"Has a memo": ("pass", "")})) as srv:
        env = {**_env(srv, tmp_path), "JUDGE_API_BASE": ""}
        res = CliRunner().invoke(
            app,
            ["grade", str(run), "--no-progress", "--judge-base-url", srv.base_url, "--json"],
            env=env,
        )
        assert res.exit_code == 0, res.output
        assert srv.calls == 1
    assert json.loads(res.stdout)["rows"][0]["mean_score"] == 1.0
