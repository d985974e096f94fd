"""A path with a NUL byte in a file tool's arguments is the agent's mistake: the tool answers
with an error and the trial goes on (it must not end the trial as an error, which would drop
or retry a trial the agent is failing)."""

from __future__ import annotations

from runner_helpers import needs_bwrap

from jobbench.agents import AgentLimits, Endpoint, ModelSettings
from jobbench.records import TrialStatus
from jobbench.runner import AgentSpec, RunConfig, run_trials
from jobbench.testing import FakeOpenAIServer, chat_reply


@needs_bwrap
def test_nul_byte_path_is_a_tool_error_not_a_trial_error(tmp_path, dataset):
    script = [
        chat_reply(
            tool_calls=[
                {"name": "write_file", "arguments": {"path": "output/a\x00b", "content": "x"}},
                {"name": "read_file", "arguments": {"path": "output/a\x00b"}},
                {"name": "write_file", "arguments": {"path": "output/memo.md", "content": "m"}},
            ]
        ),
        chat_reply(tool_calls=[{"name": "finish", "arguments": {"summary": "done"}}]),
    ]
    with FakeOpenAIServer(script) as srv:
        cfg = RunConfig(
            dataset=dataset,
            agents=[AgentSpec("builtin", "fake-model", ModelSettings(), {"client_retries": 0})],
            run_dir=tmp_path / "runs" / "r",
            task_glob="*task1",
            limits=AgentLimits(),
            endpoint=Endpoint(base_url=srv.base_url, api_key="test-key"),
            infra_retries=0,
        )
        summary = run_trials(cfg)
        calls = srv.calls
    rec = summary.records[0]
    assert rec.status == TrialStatus.ok, rec.error
    assert calls == 2
