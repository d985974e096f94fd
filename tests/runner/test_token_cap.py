"""Which parameter carries a reply's token cap: ``max_tokens`` at OpenAI-compatible servers
(llama-cpp-python 0.3.36 ignores ``max_completion_tokens``, so a cap sent under that name let
a reply run on until its 8,192-token context was full), ``max_completion_tokens`` at OpenAI's
own API; a 400 naming the parameter sent switches it once."""

from __future__ import annotations

import pytest
from test_builtin import call, run_builtin

from jobbench.agents import ModelSettings
from jobbench.endpoint import PreflightTarget, other_token_cap_param, preflight, token_cap_param
from jobbench.judge._client import classify_rejection
from jobbench.records import TrialStatus
from jobbench.testing import FakeOpenAIServer, ScriptedReply, chat_reply

# OpenAI's answer to max_tokens for its reasoning models (HTTP 400, param "max_tokens")
OPENAI_REJECTS_MAX_TOKENS = ScriptedReply(
    status=400,
    body={
        "error": {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            "type": "invalid_request_error",
            "param": "max_tokens",
            "code": "unsupported_parameter",
        }
    },
)


@pytest.mark.parametrize(
    ("base_url", "param"),
    [
        (None, "max_completion_tokens"),
        ("https://api.openai.com/v1", "max_completion_tokens"),
        ("https://API.OpenAI.com/v1/", "max_completion_tokens"),
        ("http://127.0.0.1:8765/v1", "max_tokens"),
        ("https://api.openai.com.example.net/v1", "max_tokens"),
        ("https://openrouter.ai/api/v1", "max_tokens"),
    ],
)
def test_the_first_parameter_depends_on_the_host(base_url, param):
    assert token_cap_param(base_url) == param


def test_a_rejection_switches_only_when_it_names_the_parameter_sent():
    body = OPENAI_REJECTS_MAX_TOKENS.body
    assert other_token_cap_param("max_tokens", 400, body) == "max_completion_tokens"
    # the same message names max_completion_tokens too ("Use … instead")
    assert other_token_cap_param("max_completion_tokens", 400, body) == "max_tokens"
    only_new = {"error": {"message": "max_completion_tokens must be at most 4096"}}
    assert other_token_cap_param("max_tokens", 400, only_new) is None
    assert other_token_cap_param("max_tokens", 500, body) is None  # not a validation answer
    assert other_token_cap_param("max_tokens", 400, "temperature is not supported") is None
    # FastAPI's validation detail (a list) names the field in its loc
    detail = {"detail": [{"loc": ["body", "max_tokens"], "msg": "extra fields not permitted"}]}
    assert other_token_cap_param("max_tokens", 422, detail) == "max_completion_tokens"
    # the judge reads a rejection of either name as one of its token cap
    assert classify_rejection(400, "'max_completion_tokens' is not supported") == "max_tokens"


def test_builtin_sends_max_tokens_to_a_compatible_server(tmp_path, dataset):
    script = [
        chat_reply(tool_calls=[call("write_file", path="output/a.md", content="x")]),
        chat_reply(tool_calls=[call("finish", summary="done")]),
    ]
    rec, requests, _, _ = run_builtin(
        tmp_path, dataset, script, settings=ModelSettings(max_output_tokens=256)
    )
    assert rec.status == TrialStatus.ok, rec.error
    assert requests[0]["max_tokens"] == 256
    assert "max_completion_tokens" not in requests[0]


def test_builtin_switches_once_when_the_server_names_the_parameter(tmp_path, dataset):
    script = [
        OPENAI_REJECTS_MAX_TOKENS,
        chat_reply(tool_calls=[call("write_file", path="output/a.md", content="x")]),
        chat_reply(tool_calls=[call("finish", summary="done")]),
    ]
    rec, requests, traj, _ = run_builtin(
        tmp_path, dataset, script, settings=ModelSettings(max_output_tokens=300)
    )
    assert rec.status == TrialStatus.ok, rec.error
    assert [sorted(k for k in r if k.startswith("max_")) for r in requests] == [
        ["max_tokens"],
        ["max_completion_tokens"],
        ["max_completion_tokens"],
    ]
    assert requests[1]["max_completion_tokens"] == 300
    downgrades = [ev for ev in traj if ev["type"] == "model_downgrade"]
    assert [d["change"] for d in downgrades] == ["max_tokens sent as max_completion_tokens"]
    assert "Unsupported parameter" in downgrades[0]["error"]


def test_builtin_does_not_switch_back_and_forth(tmp_path, dataset):
    # a server that rejects both names: one switch, then the rejection is final
    rec, requests, _, _ = run_builtin(
        tmp_path,
        dataset,
        [OPENAI_REJECTS_MAX_TOKENS] * 5,
        settings=ModelSettings(max_output_tokens=300),
    )
    assert len(requests) == 2
    assert rec.status == TrialStatus.infra_error
    assert "Unsupported parameter" in rec.error


def test_preflight_of_a_compatible_server_caps_with_max_tokens():
    with FakeOpenAIServer([]) as srv:
        preflight([PreflightTarget("chat", srv.base_url, "fake-model", who="builtin")])
        req = srv.preflight_requests[0][1]
    assert req["max_tokens"] == 16 and "max_completion_tokens" not in req
