"""``jobbench export inspect``: a run of the bundled sample read back with the real
``inspect_ai`` (``read_eval_log``) and served by ``inspect view``; no part of Inspect is mocked.

The run (easy split, checks-only grades) has three configurations: the oracle (every task
1.0), the null agent (0.0) and a command agent that exits 75 (``infra_error``: no score).
Expected values come from the run's own records (``report/results.jsonl``,
``report/leaderboard.csv``, the trials' ``trajectory.jsonl``), never from the exporter.
"""

from __future__ import annotations

import csv
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.rundir import RunDir

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "datasets" / "sample"
FAIL = "command:./fail.sh"
# exits with the contract's infrastructure-failure status (75) and a reason on stderr
FAIL_SH = "#!/bin/sh\necho 'sandbox image missing' >&2\nexit 75\n"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The sample's easy split run with oracle, null and FAIL, exported to ``out``."""
    base = tmp_path_factory.mktemp("inspect")
    agent_dir = base / "agent"  # the agent's own folder, apart from the run directory
    agent_dir.mkdir()
    script = agent_dir / "fail.sh"
    script.write_text(FAIL_SH)
    script.chmod(0o755)
    old = os.getcwd()
    os.chdir(agent_dir)
    try:
        res = CliRunner().invoke(
            app,
            [
                "run",
                str(SAMPLE),
                "--split",
                "easy",
                "--agent",
                "oracle",
                "--agent",
                "null",
                "--agent",
                FAIL,
                "--infra-retries",
                "0",
                "--runs-dir",
                str(base / "runs"),
                "--run-name",
                "r",
                "--no-progress",
            ],
        )
    finally:
        os.chdir(old)
    run_dir = base / "runs" / "r"
    assert (RunDir(run_dir).report_dir / "results.jsonl").is_file(), res.output
    out = base / "logs"
    exp = CliRunner().invoke(app, ["export", "inspect", str(run_dir), str(out)])
    assert exp.exit_code == 0, exp.output
    return {"run_dir": run_dir, "out": out, "cli_output": exp.output}


def _rows(run_dir: Path) -> list[dict[str, Any]]:
    text = (RunDir(run_dir).report_dir / "results.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _logs(out: Path) -> dict[str, Any]:
    """agent → the EvalLog read back by inspect_ai from each ``.eval`` file of ``out``."""
    from inspect_ai.log import read_eval_log

    logs = {}
    for path in sorted(out.glob("*.eval")):
        log = read_eval_log(str(path))
        logs[log.eval.metadata["agent"]] = log
    return logs


def test_logs_read_back_with_one_sample_per_trial_and_our_scores(exported) -> None:
    rows = _rows(exported["run_dir"])
    logs = _logs(exported["out"])
    assert sorted(logs) == sorted({"oracle", "null", FAIL})
    assert len(rows) == 24  # 8 easy tasks x 3 configurations x 1 epoch
    for agent, log in logs.items():
        mine = {(r["task_id"], r["epoch"]): r for r in rows if r["agent"] == agent}
        assert len(mine) == 8
        assert log.status == "success"
        assert len(log.samples) == len(mine) == log.results.total_samples
        got = {(s.id, s.epoch): s for s in log.samples}
        assert set(got) == set(mine)
        for key, row in mine.items():
            s = got[key]
            assert (s.error is None) == (row["trial_status"] in ("ok", "no_deliverable"))
            if row["scored"]:
                assert s.scores["jobbench"].value == pytest.approx(row["score"])
                meta = s.scores["jobbench"].metadata
                assert meta["passed_weight"] == pytest.approx(row["points"])
                assert meta["max_score"] == pytest.approx(row["max_points"])
                assert len(meta["rubrics"]) == row["rubrics_total"]
                n_criteria = sum(len(rb["criteria"]) for rb in meta["rubrics"])
                assert n_criteria == row["criteria_total"]
            else:
                assert not s.scores
            assert s.metadata["trial_id"] == row["trial_id"]
            assert s.metadata["status"] == row["trial_status"]


def test_log_metrics_match_the_leaderboard(exported) -> None:
    """micro and macro of each log equal our leaderboard's (a percentage there, a fraction
    here), and micro also equals Σ points / Σ maxima of the run's rows (unscored: 0 points)."""
    rows = _rows(exported["run_dir"])
    with (RunDir(exported["run_dir"]).report_dir / "leaderboard.csv").open() as f:
        board = {r["agent"]: r for r in csv.DictReader(f)}
    for agent, log in _logs(exported["out"]).items():
        metrics = log.results.scores[0].metrics
        mine = [r for r in rows if r["agent"] == agent]
        micro = sum(r["points"] or 0.0 for r in mine) / sum(r["max_points"] for r in mine)
        assert metrics["micro"].value == pytest.approx(micro)
        assert metrics["micro"].value == pytest.approx(float(board[agent]["micro_pct"]) / 100)
        assert metrics["macro"].value == pytest.approx(float(board[agent]["macro_pct"]) / 100)
    assert _logs(exported["out"])["oracle"].results.scores[0].metrics["micro"].value == 1.0


def test_oracle_trajectory_is_prompt_tool_call_and_result(exported) -> None:
    rd = RunDir(exported["run_dir"])
    rows = [r for r in _rows(exported["run_dir"]) if r["agent"] == "oracle"]
    log = _logs(exported["out"])["oracle"]
    by_id = {s.id: s for s in log.samples}
    for row in rows:
        events = [
            json.loads(line)
            for line in rd.trajectory_file(row["trial_id"]).read_text().splitlines()
        ]
        start = next(e for e in events if e["type"] == "trial_start")
        command = next(e for e in events if e["type"] == "command")
        result = next(e for e in events if e["type"] == "command_result")
        msgs = by_id[row["task_id"]].messages
        assert [m.role for m in msgs] == ["user", "assistant", "tool"]
        assert msgs[0].text == start["prompt"]
        (call,) = msgs[1].tool_calls
        assert call.function == "bash"
        assert call.arguments["cmd"].split() == [str(a) for a in command["argv"]]
        assert "solve.py" in call.arguments["cmd"]
        assert msgs[2].tool_call_id == call.id
        assert msgs[2].text.startswith(f"exit code {result['exit_code']}")


def test_infra_error_trial_has_an_error_and_no_score(exported) -> None:
    rows = [r for r in _rows(exported["run_dir"]) if r["agent"] == FAIL]
    assert {r["trial_status"] for r in rows} == {"infra_error"}
    log = _logs(exported["out"])[FAIL]
    assert log.results.scores[0].scored_samples == 0
    assert log.results.completed_samples == 0
    for s in log.samples:
        assert not s.scores
        assert s.error is not None
        assert s.error.message.startswith("infra_error:")
        assert "sandbox image missing" in s.error.message
        assert s.metadata["grade_status"] != "complete"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, origin: str) -> Any:
    """JSON of a GET sent as the viewer's own page would send it (same origin)."""
    req = urllib.request.Request(
        url,
        headers={"Origin": origin, "Sec-Fetch-Site": "same-origin", "Sec-Fetch-Dest": "empty"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def test_inspect_view_serves_the_exported_logs(exported) -> None:
    """``inspect view`` (the real server) lists the logs and returns the oracle's log with
    its samples' scores; a cross-site request is refused."""
    out = exported["out"]
    port = _free_port()
    origin = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "inspect_ai", "view", "--log-dir", str(out)]
    proc = subprocess.Popen(
        [*cmd, "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        listing = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                q = urllib.parse.urlencode({"log_dir": str(out)})
                listing = _get(f"{origin}/api/log-files?{q}", origin)
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.5)
        assert listing is not None, "inspect view did not answer within 60 s"
        names = [f["name"] for f in listing["files"]]
        assert sorted(Path(urllib.parse.urlparse(n).path).name for n in names) == sorted(
            p.name for p in out.glob("*.eval")
        )
        (oracle,) = [n for n in names if n.endswith("_jobbench_r-oracle.eval")]
        log = _get(f"{origin}/api/logs/{urllib.parse.quote(oracle, safe='')}", origin)
        assert log["eval"]["metadata"]["agent"] == "oracle"
        assert len(log["samples"]) == 8
        assert {s["scores"]["jobbench"]["value"] for s in log["samples"]} == {1.0}
        req = urllib.request.Request(
            f"{origin}/api/log-files", headers={"Sec-Fetch-Site": "cross-site"}
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(req, timeout=30)
        assert refused.value.code == 403
    finally:
        proc.kill()
        proc.wait(timeout=30)


def test_cli_prints_each_log_path_and_the_view_command_on_one_line(exported) -> None:
    """Paths longer than the console (80 columns under CliRunner) are not folded, so the
    printed ``inspect view`` command can be copied whole."""
    out = exported["out"]
    lines = exported["cli_output"].splitlines()
    view = f"view:  inspect view --log-dir {out}"
    assert len(view) > 80
    assert view in lines
    logged = [line for line in lines if " sample(s) -> " in line]
    assert sorted(line.split(" -> ")[1] for line in logged) == sorted(
        str(p) for p in out.glob("*.eval")
    )
