"""Real-endpoint behaviour: preflight, permanent vs transient failures, strict servers,
a hanging endpoint bounded by the trial's time limit, and reports of endpoint failures."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jobbench.agents import AgentLimits, Endpoint, ModelSettings
from jobbench.endpoint import (
    PreflightError,
    PreflightTarget,
    classify_failure,
    preflight,
    server_message,
)
from jobbench.records import TrialStatus
from jobbench.runner import AgentSpec, RunConfig, run_trials
from jobbench.testing import FakeOpenAIServer, ScriptedReply, chat_reply, strict_problems

# llama-cpp-python 0.3.x's answer to a body its request model refuses (errors.py wraps the
# RequestValidationError as a 500 internal_server_error; the message is str(errors))
LLAMA_CPP_500 = {
    "error": {
        "message": "[{'type': 'string_type', 'loc': ('body', 'messages', 2, 'typed-dict', "
        "'content'), 'msg': 'Input should be a valid string', 'input': None}]",
        "type": "internal_server_error",
        "param": None,
        "code": None,
    }
}

# llama-cpp-python's answer when the model's jinja2 chat template fails on the messages
# (errors.py wraps the template's UndefinedError as a 500 internal_server_error)
LLAMA_CPP_TEMPLATE_500 = {
    "error": {
        "message": "UndefinedError: 'dict object' has no attribute 'content'",
        "type": "internal_server_error",
        "param": None,
        "code": None,
    }
}


def call(name: str, **args) -> dict:
    return {"name": name, "arguments": args}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def builtin_config(tmp_path, dataset, base_url, *, name="r", limits=None, **kw) -> RunConfig:
    return RunConfig(
        dataset=dataset,
        agents=[AgentSpec("builtin", "fake-model", ModelSettings(), kw.pop("options", {}))],
        run_dir=tmp_path / "runs" / name,
        task_glob="*task1",
        limits=limits or AgentLimits(),
        endpoint=Endpoint(base_url=base_url, api_key="test-key"),
        infra_retries=kw.pop("infra_retries", 0),
        retry_backoff=0.01,
        **kw,
    )


# -- classification (item 3) ---------------------------------------------------------------


@pytest.mark.parametrize(
    "status, body, transient, kind",
    [
        (None, "Connection refused", True, "connection"),
        (408, "", True, "server"),
        (409, "", True, "server"),
        (429, {"error": {"message": "slow down"}}, True, "rate_limit"),
        (503, {"error": {"message": "overloaded, retry later"}}, True, "server"),
        (500, LLAMA_CPP_500, False, "validation"),
        (500, LLAMA_CPP_TEMPLATE_500, False, "template"),
        (
            500,
            {"error": {"message": "'NoneType' object has no attribute 'get'"}},
            False,
            "template",
        ),
        (502, "<html>Bad Gateway</html>", True, "server"),
        (
            400,
            {"object": "error", "message": "bad", "type": "BadRequestError"},
            False,
            "validation",
        ),
        (401, {"error": {"message": "invalid api key"}}, False, "auth"),
        (403, "forbidden", False, "auth"),
        (404, {"detail": "Not Found"}, False, "not_found"),
        (404, {"error": {"message": "The model `gpt-x` does not exist"}}, False, "model"),
        (
            400,
            {"error": {"message": "maximum context length is 8192 tokens"}},
            False,
            "context_length",
        ),
        (413, "too large", False, "rejected"),
    ],
)
def test_failures_are_classified_from_their_evidence(status, body, transient, kind):
    f = classify_failure(status, body)
    assert (f.transient, f.kind) == (transient, kind)
    assert f.message == server_message(body)
    if not transient:
        assert "again" not in f.hint  # says what to change, never "retry"


def test_server_message_reads_every_error_shape():
    assert server_message({"error": {"message": "  a\n b "}}) == "a b"
    assert server_message(b'{"detail": "Not Found"}') == "Not Found"
    assert server_message('{"message": "m"}') == "m"
    assert server_message("<html>nope</html>") == "<html>nope</html>"
    assert server_message("x" * 2000, limit=10) == "x" * 10 + "…"


# -- strict servers (item 4) ---------------------------------------------------------------


def test_strict_problems_follow_the_servers_request_models():
    ok = {
        "messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "u"},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "r"},
            {"role": "assistant", "content": "done"},
        ]
    }
    assert strict_problems(ok, "vllm") == []
    # llama-cpp-python's chatml-function-calling template reads message.content (HTTP 500)
    assert strict_problems(ok, "llama-cpp") == [
        "messages.2: 'dict object' has no attribute 'content'"
    ]
    ok["messages"][2]["content"] = ""
    assert strict_problems(ok, "llama-cpp") == []
    null = json.loads(json.dumps(ok))
    null["messages"][2]["content"] = None
    assert strict_problems(null, "llama-cpp") == [
        "messages.2.content: Input should be a valid string"
    ]
    assert strict_problems(null, "vllm") == []
    no_id = json.loads(json.dumps(ok))
    del no_id["messages"][3]["tool_call_id"]
    assert "messages.3.tool_call_id: Field required" in strict_problems(no_id, "llama-cpp")
    # vLLM's CustomChatCompletionMessageParam makes tool_call_id optional; the call stays
    # unanswered (the shared rule)
    assert strict_problems(no_id, "vllm") == [
        "messages.4: tool calls ['c1'] of an earlier assistant message were not answered by "
        "tool messages"
    ]
    unanswered = {"messages": ok["messages"][:3] + [{"role": "user", "content": "x"}]}
    assert any("not answered" in p for p in strict_problems(unanswered, "llama-cpp"))
    empty = {"messages": [{"role": "user", "content": "u"}, {"role": "assistant"}]}
    assert strict_problems(empty, "vllm") == []
    custom = {"messages": [{"role": "reviewer"}, {"role": "user", "content": "u"}]}
    assert strict_problems(custom, "vllm") == []
    assert strict_problems(custom, "llama-cpp") == [
        "messages.0.role: Input should be one of system, developer, user, assistant, tool"
    ]
    bad_call = json.loads(json.dumps(ok))
    del bad_call["messages"][2]["tool_calls"][0]["id"]
    assert "messages.2.tool_calls.0.id: Field required" in strict_problems(bad_call, "vllm")


@pytest.mark.parametrize("server", ["llama-cpp", "vllm"])
def test_builtin_agent_messages_pass_a_strict_server(tmp_path, dataset, server):
    script = [
        chat_reply(None, tool_calls=[call("list_files")]),  # content null beside a tool call
        chat_reply("", tool_calls=[call("write_file", path="output/a.md", content="# A\n")]),
        chat_reply(None),  # neither text nor tool call: nudged
        chat_reply("Saving.", tool_calls=[call("finish", summary="done")]),
    ]
    with FakeOpenAIServer(script, strict=server) as srv:
        summary = run_trials(builtin_config(tmp_path, dataset, srv.base_url))
        rejections = list(srv.rejections)
        requests = list(srv.requests)
    assert rejections == []
    assert len(requests) == 4
    rec = summary.records[0]
    assert rec.status == TrialStatus.ok, rec.error
    last = requests[-1]["messages"]
    assert all(m.get("content", "") is not None for m in last)
    assistants = [m for m in last if m["role"] == "assistant"]
    # no text beside a tool call is "" (llama-cpp-python's template needs the key)
    assert [a["content"] for a in assistants] == ["", "", ""]
    tool_ids = [m["tool_call_id"] for m in last if m["role"] == "tool"]
    call_ids = [tc["id"] for m in assistants for tc in m.get("tool_calls", [])]
    assert tool_ids == call_ids and len(tool_ids) == 2


def test_a_strict_rejection_is_not_retried_and_says_what_to_change(tmp_path, dataset):
    """The llama-cpp-python answer to a refused body (HTTP 500 naming the validation error)
    ends the trial at once: no client retry, no trial retry, a message naming the fix."""
    script = [
        chat_reply(tool_calls=[call("list_files")]),
        ScriptedReply(status=500, body=LLAMA_CPP_500),
        chat_reply(tool_calls=[call("finish", summary="")]),
    ]
    with FakeOpenAIServer(script) as srv:
        cfg = builtin_config(
            tmp_path, dataset, srv.base_url, options={"client_retries": 4}, infra_retries=3
        )
        summary = run_trials(cfg)
        calls = srv.calls
    rec = summary.records[0]
    assert calls == 2  # one agent call, one rejected call: no retries of either kind
    assert rec.status == TrialStatus.infra_error and rec.attempts == []
    assert rec.details["infra_permanent"] is True and rec.details["infra_cause"] == "validation"
    assert "Input should be a valid string" in rec.error
    assert "retrying the same request cannot succeed" in rec.error


def test_a_chat_template_500_is_not_retried_and_says_what_to_change(tmp_path, dataset):
    """A 500 whose body names a jinja2 template error (llama-cpp-python rendering a template
    that cannot handle the messages) fails the same way every time: one request, no retries."""
    script = [ScriptedReply(status=500, body=LLAMA_CPP_TEMPLATE_500)] * 6
    with FakeOpenAIServer(script, strict="llama-cpp") as srv:
        cfg = builtin_config(
            tmp_path, dataset, srv.base_url, options={"client_retries": 4}, infra_retries=3
        )
        summary = run_trials(cfg)
        calls = srv.calls
    rec = summary.records[0]
    assert calls == 1
    assert rec.status == TrialStatus.infra_error and rec.attempts == []
    assert rec.details["infra_permanent"] is True and rec.details["infra_cause"] == "template"
    assert "has no attribute 'content'" in rec.error
    assert "chat template" in rec.error


def test_transient_failures_are_retried_within_the_deadline(tmp_path, dataset):
    script = [
        ScriptedReply(
            status=503, body={"error": {"message": "loading"}}, headers={"retry-after": "0"}
        ),
        ScriptedReply(status=429, headers={"retry-after": "0"}),
        chat_reply(tool_calls=[call("write_file", path="output/a.md", content="x")]),
        chat_reply(tool_calls=[call("finish", summary="")]),
    ]
    with FakeOpenAIServer(script) as srv:
        summary = run_trials(
            builtin_config(tmp_path, dataset, srv.base_url, options={"client_retries": 2})
        )
        calls = srv.calls
    assert summary.records[0].status == TrialStatus.ok and calls == 4


@pytest.mark.parametrize(
    "reply, cause",
    [
        (ScriptedReply(status=404, body={"detail": "Not Found"}), "not_found"),
        (ScriptedReply(status=401, body={"error": {"message": "invalid api key"}}), "auth"),
        (
            ScriptedReply(status=404, body={"error": {"message": "model fake-model not found"}}),
            "model",
        ),
    ],
)
def test_endpoint_rejections_are_permanent_infra_errors(tmp_path, dataset, reply, cause):
    with FakeOpenAIServer([reply] * 5) as srv:
        summary = run_trials(
            builtin_config(
                tmp_path, dataset, srv.base_url, options={"client_retries": 3}, infra_retries=2
            )
        )
        calls = srv.calls
    rec = summary.records[0]
    assert calls == 1
    assert rec.status == TrialStatus.infra_error and rec.details["infra_cause"] == cause
    assert server_message(reply.body) in rec.error


# -- limits end to end (item 5) ------------------------------------------------------------


def test_a_hanging_endpoint_ends_a_15s_trial_within_20s(tmp_path, dataset):
    script = [chat_reply(tool_calls=[call("list_files")])] + [ScriptedReply(hang=True)] * 10
    with FakeOpenAIServer(script) as srv:
        cfg = builtin_config(
            tmp_path,
            dataset,
            srv.base_url,
            limits=AgentLimits(timeout=15),
            options={"client_retries": 4, "request_timeout": 600},
        )
        t0 = time.monotonic()
        summary = run_trials(cfg)
        took = time.monotonic() - t0
        calls = srv.calls
    rec = summary.records[0]
    assert took < 20, took
    assert rec.status == TrialStatus.infra_error
    assert rec.error.startswith("model endpoint did not answer")
    assert rec.details["infra_cause"] == "no_answer"
    assert calls == 2  # the first answer, then one request that hung to the deadline


# -- preflight (item 1) --------------------------------------------------------------------


def test_preflight_makes_one_request_per_distinct_endpoint():
    with FakeOpenAIServer([]) as srv:
        t = PreflightTarget("chat", srv.base_url, "fake-model", api_key="k", who="builtin")
        checks = preflight([t, t, PreflightTarget("chat", srv.base_url + "/", "fake-model")])
        got = list(srv.preflight_requests)
    assert len(checks) == 1 and checks[0].ok and checks[0].status == 200
    assert (checks[0].input_tokens, checks[0].output_tokens) == (8, 1)
    assert len(got) == 1 and got[0][1]["tools"][0]["function"]["name"] == "finish"


def _judge_target(base_url: str, fmt: dict) -> PreflightTarget:
    return PreflightTarget(
        "chat", base_url, "judge-model", tools=False, response_format=fmt, who="judge"
    )


def test_preflight_with_a_response_format_sends_it_and_names_the_failure():
    fmt = {"type": "json_schema", "json_schema": {"name": "v", "schema": {"type": "object"}}}
    with FakeOpenAIServer([]) as srv:
        checks = preflight([_judge_target(srv.base_url, fmt)], timeout=60.0)
        req = srv.preflight_requests[0][1]
    assert checks[0].ok and req["response_format"] == fmt and "tools" not in req
    rejection = ScriptedReply(
        status=500, body={"error": {"message": "json_schema grammar failed to compile"}}
    )
    with FakeOpenAIServer([rejection] * 2, preflight="script") as srv:
        with pytest.raises(PreflightError) as info:
            preflight([_judge_target(srv.base_url, fmt)], timeout=60.0)
    msg = str(info.value)
    assert "for judge" in msg and srv.base_url in msg and "HTTP 500" in msg
    assert "json_schema grammar failed to compile" in msg and "Chat Completions API" in msg


def test_preflight_failure_stops_run_trials_before_anything_is_written(tmp_path, dataset):
    base = f"http://127.0.0.1:{free_port()}/v1"
    cfg = builtin_config(tmp_path, dataset, base, preflight=True)
    with pytest.raises(PreflightError) as info:
        run_trials(cfg)
    assert "no HTTP answer" in str(info.value) and base in str(info.value)
    assert not cfg.run_dir.exists()


def test_preflight_is_recorded_in_the_run_directory(tmp_path, dataset):
    script = [
        chat_reply(tool_calls=[call("write_file", path="output/a.md", content="x")]),
        chat_reply(tool_calls=[call("finish", summary="")]),
    ]
    with FakeOpenAIServer(script) as srv:
        summary = run_trials(builtin_config(tmp_path, dataset, srv.base_url, preflight=True))
        assert srv.calls == 2 and len(srv.preflight_requests) == 1
    from jobbench.rundir import RunDir

    (entry,) = RunDir(summary.run_dir).read_preflights()
    assert entry["calls"] == 1 and entry["input_tokens"] == 8 and entry["output_tokens"] == 1
    assert entry["checks"][0]["who"] == "builtin@fake-model" and entry["checks"][0]["ok"]
    assert "test-key" not in json.dumps(entry)


def _jobbench(args: list[str], env_extra: dict | None = None, timeout: float = 60):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JOBBENCH_", "OPENAI_"))}
    env.update(env_extra or {})
    t0 = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "jobbench", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    return r, time.monotonic() - t0


@pytest.mark.parametrize("wrong", ["refused", "404"])
def test_wrong_base_url_stops_jobbench_run_in_under_10s_with_exit_2(tmp_path, dataset, wrong):
    not_found = ScriptedReply(status=404, body="<html><body>File not found</body></html>")
    with FakeOpenAIServer([not_found] * 3, preflight="script") as srv:
        base = srv.base_url if wrong == "404" else f"http://127.0.0.1:{free_port()}/v1"
        r, took = _jobbench(
            [
                "run",
                str(dataset),
                "--agent",
                "builtin",
                "--model",
                "fake-model",
                "--api-base",
                base,
                "--runs-dir",
                str(tmp_path / "runs"),
                "--no-progress",
                "--no-grade",
            ]
        )
        calls = srv.calls
    out = " ".join((r.stdout + r.stderr).split())
    assert r.returncode == 2, out
    assert took < 10, took
    assert "preflight failed for builtin@fake-model" in out and base in out
    assert "Chat Completions API" in out
    if wrong == "404":
        assert "HTTP 404:" in out and "File not found" in out and calls == 1
        assert "check the base URL" in out
    else:
        assert "no HTTP answer" in out
    assert not list((tmp_path / "runs").glob("*/trials/**/trial.json"))


def test_no_preflight_skips_it_and_the_trial_records_the_endpoint_error(tmp_path, dataset):
    not_found = ScriptedReply(status=404, body="<html><body>File not found</body></html>")
    with FakeOpenAIServer([not_found] * 5, preflight="script") as srv:
        r, _ = _jobbench(
            [
                "run",
                str(dataset),
                "--agent",
                "builtin",
                "--model",
                "fake-model",
                "--api-base",
                srv.base_url,
                "--runs-dir",
                str(tmp_path / "runs"),
                "--no-progress",
                "--no-preflight",
                "--tasks",
                "*task1",
                "--json",
            ],
            timeout=120,
        )
        calls = srv.calls
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert calls == 1  # the trial's first request: permanent, neither retried nor re-run
    data = json.loads(r.stdout[r.stdout.index("{") :])
    assert data["trials"] == {"builtin@fake-model": {"infra_error": 1}}
    assert "rejected deterministically" in " ".join(r.stderr.split())
    run_dir = Path(data["run_dir"])
    assert not (run_dir / "preflight.json").exists()
    # item 6: no score for the endpoint failure; the report shows it as an infrastructure
    # error
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    text = json.dumps(summary)
    assert "infra_error" in text
    (config,) = [c for c in summary["configurations"] if c["label"] == "builtin@fake-model"]
    grades = (
        list((run_dir / "grades").rglob("epoch-1.json")) if (run_dir / "grades").exists() else []
    )
    for g in grades:
        rec = json.loads(g.read_text())
        assert rec.get("trial_id", "").find("builtin") < 0 or rec.get("score") is None
    assert config.get("incomplete_trials", {}).get(
        "infra_error"
    ) == 1 or "infra_error" in json.dumps(config)
