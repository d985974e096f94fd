"""The builtin tool-calling agent against a scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import os

import pytest
from runner_helpers import LEDGER, OCC, ledger_totals

import jobbench.judge
import jobbench.report
from jobbench.agents import (
    AgentLimits,
    Endpoint,
    ModelSettings,
    Pricing,
    SearchIndex,
    WorkspaceTools,
)
from jobbench.agents._builtin import ToolError
from jobbench.extract import extract
from jobbench.records import TrialStatus
from jobbench.runner import AgentSpec, RunConfig, run_trials
from jobbench.sandbox import bwrap_available
from jobbench.testing import FakeOpenAIServer, ScriptedReply, chat_reply


def call(name: str, **args) -> dict:
    return {"name": name, "arguments": args}


def run_builtin(
    tmp_path,
    dataset,
    script,
    *,
    task="*task1",
    limits=None,
    settings=None,
    pricing=None,
    options=None,
    name="r",
):
    with FakeOpenAIServer(script) as srv:
        spec = AgentSpec(
            "builtin", "fake-model", settings or ModelSettings(), options or {"client_retries": 0}
        )
        cfg = RunConfig(
            dataset=dataset,
            agents=[spec],
            run_dir=tmp_path / "runs" / name,
            task_glob=task,
            limits=limits or AgentLimits(),
            endpoint=Endpoint(base_url=srv.base_url, api_key="test-key"),
            pricing=pricing,
            infra_retries=0,
        )
        summary = run_trials(cfg)
        requests = list(srv.requests)
    rec = summary.records[0]
    tdir = summary.run_dir / "trials" / rec.trial_id
    traj = [json.loads(x) for x in (tdir / "trajectory.jsonl").read_text().splitlines()]
    return rec, requests, traj, tdir


def tool_messages(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def expected_csv() -> str:
    return "month,net\n" + "".join(f"{m},{v:.2f}\n" for m, v in ledger_totals().items())


PY_CODE = (
    "import openpyxl\n"
    "wb = openpyxl.load_workbook('task_folder/ledger.xlsx')\n"
    "for month, inc, exp in wb['Ledger'].iter_rows(min_row=2, values_only=True):\n"
    "    print(month, f'{inc - exp:.2f}')\n"
)


def test_builtin_completes_a_task_with_real_tool_calls(tmp_path, dataset):
    script = [
        chat_reply(tool_calls=[call("list_files", path=".")]),
        chat_reply(tool_calls=[call("read_file", path="task_folder/ledger.xlsx")]),
        chat_reply("Computing the nets.", tool_calls=[call("python", code=PY_CODE)]),
        chat_reply(tool_calls=[call("write_file", path="output/net.csv", content=expected_csv())]),
        chat_reply(tool_calls=[call("finish", summary="net.csv written")]),
    ]
    settings = ModelSettings(
        temperature=0.1, reasoning_effort="low", max_output_tokens=1000, extra={"top_p": 0.5}
    )
    pricing = Pricing(input_per_mtok=2.0, output_per_mtok=8.0)
    rec, requests, traj, tdir = run_builtin(
        tmp_path, dataset, script, settings=settings, pricing=pricing
    )

    assert rec.status == TrialStatus.ok, rec.error
    assert [d.path for d in rec.deliverables] == ["net.csv"]
    assert (tdir / "deliverables" / "net.csv").read_text() == expected_csv()
    assert len(requests) == 5 and rec.turns == 5
    # settings pass through to the API and are recorded
    first = requests[0]
    assert (
        first["temperature"],
        first["reasoning_effort"],
        first["max_tokens"],
        first["top_p"],
    ) == (0.1, "low", 1000, 0.5)
    assert [t["function"]["name"] for t in first["tools"]] == [
        "bash",
        "python",
        "read_file",
        "write_file",
        "list_files",
        "search",
        "finish",
    ]
    assert rec.settings == {
        "temperature": 0.1,
        "reasoning_effort": "low",
        "max_output_tokens": 1000,
        "extra": {"top_p": 0.5},
    }
    # list_files saw the workspace copy with the right size
    size = (dataset / OCC / "task1" / "task_folder" / "ledger.xlsx").stat().st_size
    listing = tool_messages(requests[1])[0]
    assert f"task_folder/ledger.xlsx\t{size}" in listing
    assert "output/\t(empty directory)" in listing
    # read_file returned our extraction of the xlsx
    expected_text = extract(
        dataset / OCC / "task1" / "task_folder" / "ledger.xlsx",
        rel="task_folder/ledger.xlsx",
        max_chars=50_000,
    ).text
    assert tool_messages(requests[2])[1].startswith(expected_text) and expected_text
    # the python tool ran in the sandbox on the copy
    py_out = tool_messages(requests[3])[2]
    assert py_out.startswith("exit code: 0")
    for month, inc, exp in LEDGER:
        assert f"{month} {inc - exp:.2f}" in py_out
    assert (
        tool_messages(requests[4])[3]
        == f"wrote {len(expected_csv())} bytes to {requests_inside(rec)}/output/net.csv"
    )
    # usage and cost: 5 calls × (10 prompt, 5 completion) tokens as scripted
    assert (rec.usage.calls, rec.usage.input_tokens, rec.usage.output_tokens) == (5, 50, 25)
    assert rec.usage.cost_usd == pytest.approx((50 * 2.0 + 25 * 8.0) / 1e6)
    names = [e["name"] for e in traj if e["type"] == "tool_call"]
    assert names == ["list_files", "read_file", "python", "write_file", "finish"]
    assert traj[0]["type"] == "trial_start" and traj[-1]["type"] == "trial_end"
    # the API key is never written to disk
    run_dir = tdir.parents[5]
    assert all(
        "test-key" not in p.read_text(errors="replace") for p in run_dir.rglob("*") if p.is_file()
    )


def requests_inside(rec) -> str:
    return "/workspace" if rec.sandbox == "bwrap" else ""


def test_builtin_deliverable_is_graded(tmp_path, dataset):
    script = [
        chat_reply(tool_calls=[call("write_file", path="output/net.csv", content=expected_csv())]),
        chat_reply(tool_calls=[call("finish", summary="done")]),
    ]
    rec, _, _, tdir = run_builtin(tmp_path, dataset, script)
    run_dir = tdir.parents[5]
    grades = jobbench.judge.grade_run(run_dir, jobbench.judge.JudgeConfig())
    assert [(g.trial_id, g.score) for g in grades] == [(rec.trial_id, 1.0)]


def test_search_tool_finds_and_downloads_without_revealing_the_directory(tmp_path, dataset):
    script = [
        chat_reply(tool_calls=[call("search", query="travel expenses approval")]),
        chat_reply(tool_calls=[call("search", download="R1")]),
        chat_reply(
            tool_calls=[
                call(
                    "bash",
                    command="cp task_folder/search_downloads/expense_policy.txt output/policy.txt",
                )
            ]
        ),
        chat_reply(tool_calls=[call("finish", summary="done")]),
    ]
    rec, requests, _, tdir = run_builtin(tmp_path, dataset, script)
    results = tool_messages(requests[1])[0]
    assert results.splitlines()[0] == "[R1] expense_policy.txt"
    assert "travel expenses above 500 dollars" in results
    assert "holiday_calendar" not in results  # no query word in it
    assert tool_messages(requests[2])[1].endswith("task_folder/search_downloads/expense_policy.txt")
    src = dataset / OCC / "task1" / "files_required_to_search" / "expense_policy.txt"
    assert (tdir / "deliverables" / "policy.txt").read_text() == src.read_text()
    sent = json.dumps(requests)
    assert "files_required_to_search" not in sent and str(dataset) not in sent


def test_search_index_ranking(tmp_path):
    root = tmp_path / "refs"
    root.mkdir()
    (root / "a.txt").write_text("budget budget budget report")
    (root / "b.txt").write_text("budget variance")
    (root / "budget_notes.txt").write_text("nothing relevant here")
    idx = SearchIndex(root, ["a.txt", "b.txt", "budget_notes.txt"])
    hits = idx.search("budget variance")
    # b has both terms; a has the common term three times; the file-name match counts once
    assert [h.name for h in hits] == ["b.txt", "a.txt", "budget_notes.txt"]
    assert idx.resolve("R2") == "b.txt" and idx.resolve("nope") is None
    assert idx.search("") == [] and idx.search("zebra") == []


def test_budgets_stop_the_agent(tmp_path, dataset):
    loop = [chat_reply(tool_calls=[call("list_files")]) for _ in range(6)]
    rec, requests, traj, _ = run_builtin(
        tmp_path, dataset, loop, limits=AgentLimits(max_turns=2), name="turns"
    )
    assert rec.status == TrialStatus.agent_timeout
    assert rec.error == "turn limit of 2 model calls reached" and len(requests) == 2
    rec, requests, *_ = run_builtin(
        tmp_path, dataset, loop, limits=AgentLimits(max_total_tokens=40), name="tokens"
    )
    assert (
        rec.error == "token budget of 40 tokens reached" and len(requests) == 3
    )  # 15 tokens per call
    rec, requests, *_ = run_builtin(
        tmp_path,
        dataset,
        loop,
        limits=AgentLimits(max_cost_usd=0.015),
        name="cost",
        pricing=Pricing(input_per_mtok=1000.0, output_per_mtok=0.0),
    )
    assert rec.error == "cost budget of $0.015 reached" and len(requests) == 2  # $0.01 per call
    assert rec.usage.cost_usd == pytest.approx(0.02)


def test_api_failures_are_infrastructure_errors(tmp_path, dataset):
    rec, requests, *_ = run_builtin(
        tmp_path,
        dataset,
        [ScriptedReply(status=500), ScriptedReply(status=500)],
        name="500",
        options={"client_retries": 1},
    )
    assert (
        rec.status == TrialStatus.infra_error
        and "InternalServerError" in rec.error
        and len(requests) == 2
    )
    ok_after_429 = [
        ScriptedReply(status=429, headers={"retry-after": "0"}),
        chat_reply(tool_calls=[call("write_file", path="output/a.txt", content="x")]),
        chat_reply(tool_calls=[call("finish", summary="")]),
    ]
    rec, requests, *_ = run_builtin(
        tmp_path, dataset, ok_after_429, name="429", options={"client_retries": 1}
    )
    assert rec.status == TrialStatus.ok and len(requests) == 3
    rec, *_ = run_builtin(
        tmp_path, dataset, [ScriptedReply(status=200, body="{not json")], name="bad"
    )
    assert rec.status == TrialStatus.infra_error and "malformed" in rec.error
    rec, *_ = run_builtin(
        tmp_path,
        dataset,
        [ScriptedReply(status=400, body={"error": {"message": "bad param"}})],
        name="400first",
    )
    assert rec.status == TrialStatus.infra_error and "configuration" in rec.error
    later = [
        chat_reply(tool_calls=[call("list_files")]),
        ScriptedReply(status=400, body={"error": {"message": "context length exceeded"}}),
    ]
    rec, *_ = run_builtin(tmp_path, dataset, later, name="400later")
    assert rec.status == TrialStatus.agent_error and "context length exceeded" in rec.error


def test_client_timeout_is_an_infrastructure_error(tmp_path, dataset):
    slow = [ScriptedReply(delay=2.0, body=chat_reply("late").body)]
    rec, *_ = run_builtin(
        tmp_path, dataset, slow, name="slow", options={"client_retries": 0, "request_timeout": 0.5}
    )
    assert rec.status == TrialStatus.infra_error and "Timeout" in rec.error


def test_text_reply_gets_one_nudge_then_stops(tmp_path, dataset):
    rec, requests, *_ = run_builtin(
        tmp_path, dataset, [chat_reply("I think I am done."), chat_reply("Done.")]
    )
    assert len(requests) == 2
    assert requests[1]["messages"][-1]["content"].startswith("Continue with the task")
    assert rec.status == TrialStatus.no_deliverable


def test_bad_tool_calls_are_reported_to_the_model(tmp_path, dataset):
    script = [
        chat_reply(
            tool_calls=[
                {"name": "bash", "arguments": "{not json"},
                call("teleport", to="mars"),
                call("write_file", path="../escape.txt", content="x"),
                call("read_file", path="/etc/passwd"),
            ]
        ),
        chat_reply(tool_calls=[call("finish", summary="")]),
    ]
    rec, requests, *_ = run_builtin(tmp_path, dataset, script)
    msgs = tool_messages(requests[1])
    assert msgs[0].startswith("ERROR: arguments are not valid JSON")
    assert msgs[1].startswith("ERROR: unknown tool 'teleport'")
    assert rec.sandbox == ("bwrap" if bwrap_available()[0] else "none")
    if rec.sandbox == "bwrap":
        assert msgs[2] == "ERROR: ../escape.txt: outside the workspace (/workspace)"
    else:  # no sandbox: the message names the trial's host workspace, an absolute path
        assert msgs[2].startswith("ERROR: ../escape.txt: outside the workspace (/")
        assert msgs[2].endswith(")")
    assert msgs[3].startswith("ERROR: /etc/passwd: outside the workspace")
    assert not (tmp_path / "escape.txt").exists()


def test_workspace_tools_confinement(tmp_path):
    ws = tmp_path / "ws"
    (ws / "output").mkdir(parents=True)
    (ws / "note.txt").write_text("hello")
    os.symlink("/etc", ws / "etc_link")
    os.symlink("/etc/hostname", ws / "output" / "host")
    t = WorkspaceTools(ws, "/workspace", SearchIndex(None, []), ws / "dl")
    assert t.resolve("/workspace/note.txt") == ws / "note.txt"
    assert t.read_file("note.txt").startswith("hello")
    for bad in ("../x", "/workspace/../x", "/tmp/x", "etc_link/passwd", "output/host"):
        with pytest.raises(ToolError):
            t.read_file(bad)
    with pytest.raises(ToolError):
        t.write_file("etc_link/evil", "x")
    with pytest.raises(ToolError):
        t.write_file("output/host", "x")
    assert (
        t.write_file("output/deep/er/r.txt", "ok")
        == "wrote 2 bytes to /workspace/output/deep/er/r.txt"
    )
    assert (ws / "output" / "deep" / "er" / "r.txt").read_text() == "ok"
    listing = t.list_files("/workspace")
    assert "/workspace/etc_link\t" in listing and "symlink" in listing
    assert t.search("anything") == "No results."
