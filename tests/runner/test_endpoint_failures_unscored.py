"""Suite-wide guarantee: a trial whose model endpoint failed never ends with a score, and every
report shows it as an infrastructure error (issue 15).

Each case is one graded ``jobbench run`` of one sample task (``--no-preflight``, so the trial
itself meets the failing endpoint) with an adapter whose endpoint fails in one recorded way.
What is checked, for the one trial: ``infra_error`` carrying the server's (or the client's)
own words in results.jsonl; no score, points or task score in results.jsonl; the
configuration's figures in summary.json count it as an infrastructure error and score no
task; the leaderboard and trial-state tables of leaderboard.md and report.html name it as
``infra_error`` ("infrastructure error"), never as a 0 of a scored trial.
"""

from __future__ import annotations

import html as htmllib
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

import pytest
from runner_helpers import make_executable
from test_openclaw import fake_install

from jobbench.testing import FakeOpenAIServer, ScriptedReply

TASK = "sample/bookkeeping_accounting_and_auditing_clerks/task1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def _server(replies: list[ScriptedReply]) -> Iterator[str]:
    with FakeOpenAIServer(replies, preflight="script") as srv:
        yield srv.base_url


def _builtin(replies: list[ScriptedReply] | None) -> Callable[[Path], object]:
    """A case of the builtin agent against a scripted server (None: nothing listens)."""

    @contextmanager
    def setup(tmp_path: Path) -> Iterator[tuple[list[str], dict]]:
        if replies is None:
            base = f"http://127.0.0.1:{_free_port()}/v1"
            ctx = nullcontext(base)
        else:
            ctx = _server(replies)
        with ctx as base:
            yield ["--agent", "builtin", "--model", "fake-model", "--api-base", base], {}

    return setup


def _command_exit_75(tmp_path: Path):
    script = make_executable(
        tmp_path / "bin" / "agent.sh",
        "#!/bin/sh\necho 'upstream model API: HTTP 503 model overloaded' >&2\nexit 75\n",
    )
    return nullcontext(([f"--agent=command:{script}"], {}))


def _openclaw(scenario: str) -> Callable[[Path], object]:
    def setup(tmp_path: Path):
        exe = fake_install(tmp_path, scenario)
        args = ["--agent", "openclaw", "--model", "fake-model", "--agent-bin", f"openclaw={exe}"]
        args += ["--api-base", "http://127.0.0.1:9/v1"]
        return nullcontext((args, {"JOBBENCH_API_KEY": "sk-local-openclaw"}))

    return setup


CASES = {
    "builtin-404": (
        _builtin([ScriptedReply(status=404, body={"detail": "Not Found: no chat route"})] * 3),
        "HTTP 404: Not Found: no chat route",
    ),
    "builtin-401": (
        _builtin([ScriptedReply(status=401, body={"error": {"message": "invalid api key q7"}})]),
        "HTTP 401: invalid api key q7",
    ),
    "builtin-model-not-found": (
        _builtin(
            [ScriptedReply(status=404, body={"error": {"message": "model fake-model not found"}})]
        ),
        "HTTP 404: model fake-model not found",
    ),
    "builtin-hang": (_builtin([ScriptedReply(hang=True)] * 5), "did not answer"),
    "builtin-connection-refused": (_builtin(None), "APIConnectionError"),
    "command-exit-75": (_command_exit_75, "HTTP 503 model overloaded"),
    "openclaw-401": (_openclaw("auth_401"), "invalid api key"),
    "openclaw-404": (_openclaw("not_found_404"), "model fake-model does not exist"),
}


def _text(html: str) -> str:
    return " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", html)).split())


@pytest.mark.parametrize("case", list(CASES))
def test_an_endpoint_failure_is_never_scored_and_reported_as_infrastructure_error(
    tmp_path, dataset, case
):
    setup, words = CASES[case]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JOBBENCH_", "OPENAI_"))}
    with setup(tmp_path) as (agent_args, env_extra):
        env.update(env_extra)
        r = subprocess.run(
            [sys.executable, "-m", "jobbench", "run", str(dataset), *agent_args]
            + ["--runs-dir", str(tmp_path / "runs"), "--tasks", "*task1", "--timeout", "3"]
            + ["--no-preflight", "--infra-retries", "0", "--no-progress", "--json"],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    data = json.loads(r.stdout[r.stdout.index("{") :])
    ((key, trials),) = data["trials"].items()
    assert trials == {"infra_error": 1}, out
    report = Path(data["run_dir"]) / "report"

    # results.jsonl: the trial is an infrastructure error with the endpoint's words, unscored
    (row,) = [json.loads(line) for line in (report / "results.jsonl").read_text().splitlines()]
    label = row["config"]  # the console's key of a model-less agent adds "@-"
    assert key in (label, f"{label}@-") and (row["task_id"], row["epoch"]) == (TASK, 1)
    assert (row["trial_status"], row["state"]) == ("infra_error", "infra_error")
    assert words in row["trial_error"], row["trial_error"]
    assert row["scored"] is False
    assert (row["score"], row["points"], row["task_score"]) == (None, None, None)
    assert row["task_missing"] is True

    # summary.json: counted as an infrastructure error, no task scored
    summary = json.loads((report / "summary.json").read_text())
    (config,) = summary["configurations"]
    assert config["label"] == label and config["provisional"] is True
    assert config["incomplete_trials"] == {"infra_error": 1}
    overall = config["overall"]
    assert overall["trials_by_state"] == {"infra_error": 1}
    assert (overall["tasks_scored"], overall["tasks_missing"]) == (0, 1)
    assert overall["macro_scored_only"] is None and overall["pass_hat_k"] == {"1": None}

    # leaderboard.md: the trial is listed as not scored (infra_error), the task as missing
    # because of it, and the trial-state table puts it in the infra_error column
    md = (report / "leaderboard.md").read_text()
    (lb_row,) = [ln for ln in md.splitlines() if ln.startswith(f"| 1 | {label} |")]
    cells = [c.strip() for c in lb_row.strip("|").split("|")]
    assert cells[7:10] == ["0 / 1", "1", "1 infra_error"], lb_row
    assert f"* {label}: {TASK} (1 infra_error)" in md
    lines = md.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("| configuration | complete"))
    state_row = next(ln for ln in lines[head:] if ln.startswith(f"| {label} |"))
    states = dict(
        zip(
            [c.strip().split(":")[0] for c in lines[head].strip("|").split("|")][1:],
            [c.strip() for c in state_row.strip("|").split("|")][1:],
            strict=True,
        )
    )
    assert states == {
        "complete": "0",
        "no_deliverable": "0",
        "judge_error": "0",
        "unjudged": "0",
        "ungraded": "0",
        "infra_error": "1",
    }

    # report.html: the trial's state and its drill-down say infrastructure error
    html = _text((report / "report.html").read_text())
    assert "Epoch 1 infra_error infrastructure error (not scored, not the agent's fault)" in html
    # the missing task, named in the leaderboard's further columns and in "Missing tasks"
    assert f"{TASK} (1 infra_error)" in html
    assert f"{TASK} — 1 infra_error" in html
    assert words in html
