"""The judge's preflight is lazy: ``jobbench grade`` checks the judge endpoint only when the
grade will ask it something, and a preflight that fails still stops the grade with exit 2."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from judge_helpers import TableJudge, make_run, make_task
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.testing import FakeOpenAIServer

RUBRICS = [
    {"rubric": "Totals", "weight": 2, "criterion": ["States the total of 42"]},
    {"rubric": "Method", "weight": 1, "criterion": ["Explains the method"]},
]
TABLE = {"States the total of 42": ("pass", "total is 42"), "Explains the method": ("fail", "")}
SKIPPED = "preflight: skipped: nothing was asked of the judge"


def _env(base_url: str, cache: Path) -> dict[str, str]:
    return {
        "JUDGE_API_BASE": base_url,
        "JUDGE_API_KEY": "test",
        "JUDGE_MODEL": "grok-4.3",
        "JOBBENCH_JUDGE_CACHE": str(cache),
    }


def _run(tmp_path: Path) -> Path:
    task = make_task(tmp_path, RUBRICS)
    trial = {"task": task, "agent": "oracle", "model": "-", "epoch": 1}
    trial["files"] = {"answer.md": "The total is 42."}
    return make_run(tmp_path / "run", tmp_path / "dataset", [trial])


def _grade(run: Path, env: dict[str, str], *extra: str):
    args = ["grade", str(run), "--no-progress", "--mode", "task", "--json", *extra]
    return CliRunner().invoke(app, args, env=env)


def test_a_regrade_of_unchanged_outputs_makes_no_request(tmp_path: Path) -> None:
    run = _run(tmp_path)
    cache = tmp_path / "cache.sqlite"
    with FakeOpenAIServer(TableJudge(TABLE)) as srv:
        res = _grade(run, _env(srv.base_url, cache))
        first = (srv.calls, len(srv.preflight_requests))
    assert res.exit_code == 0, res.output
    assert first == (1, 1)  # the grade asks the judge, so the endpoint is checked first
    assert "preflight: judge endpoint" in res.stderr
    score = json.loads(res.stdout)["rows"][0]["mean_score"]
    assert score == 2 / 3

    # up to date, and --force (every unit answered from the cache): no request of any kind
    for extra in ((), ("--force",)):
        with FakeOpenAIServer(TableJudge(TABLE)) as srv:
            res = _grade(run, _env(srv.base_url, cache), *extra)
            again = (srv.calls, len(srv.preflight_requests))
        assert res.exit_code == 0, res.output
        assert again == (0, 0), extra
        assert SKIPPED in " ".join(res.stderr.split())
        assert json.loads(res.stdout)["rows"][0]["mean_score"] == score


def test_a_grade_that_must_ask_preflights_and_a_wrong_url_exits_2(tmp_path: Path) -> None:
    run = _run(tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    res = _grade(run, _env(f"http://127.0.0.1:{port}/v1", tmp_path / "cache.sqlite"))
    assert res.exit_code == 2, res.output
    assert "judge preflight failed" in res.stderr and str(port) in res.stderr
    assert list(run.glob("grades/**/epoch-1.json")) == []  # nothing graded

    # with an empty cache the grade must ask the judge: it checks the endpoint first
    with FakeOpenAIServer(TableJudge(TABLE)) as srv:
        res = _grade(run, _env(srv.base_url, tmp_path / "other.sqlite"))
        seen = (srv.calls, len(srv.preflight_requests))
    assert res.exit_code == 0, res.output
    assert seen == (1, 1) and SKIPPED not in res.stderr


def test_criteria_all_decided_by_checks_need_no_judge_endpoint(tmp_path: Path) -> None:
    """Under ``--decide auto`` a rubric whose every criterion a check decides asks the judge
    nothing: the grade neither preflights nor fails on an endpoint nobody listens at."""
    rubrics = [
        {
            "rubric": "File",
            "weight": 1,
            "criterion": ["Has a CSV"],
            "checks": [{"kind": "file_exists", "file": "*.csv"}],
        }
    ]
    task = make_task(tmp_path, rubrics)
    trial = {"task": task, "agent": "oracle", "model": "-", "epoch": 1}
    trial["files"] = {"t.csv": "a\n1\n"}
    run = make_run(tmp_path / "run", tmp_path / "dataset", [trial])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = _env(f"http://127.0.0.1:{port}/v1", tmp_path / "cache.sqlite")
    res = _grade(run, env, "--decide", "auto")
    assert res.exit_code == 0, res.output
    assert SKIPPED in " ".join(res.stderr.split())
    assert json.loads(res.stdout)["rows"][0]["mean_score"] == 1.0
