"""The --llm review pass, driving the real openai client against a scripted local server."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from jobbench.gates import GateOptions, LLMReviewConfig, llm_review_task, run_gates
from jobbench.gates._llm import parse_reply
from jobbench.testing import FakeOpenAIServer, ScriptedReply, chat_reply


def cfg(srv: FakeOpenAIServer, **kw) -> LLMReviewConfig:
    base = dict(
        base_url=srv.base_url,
        api_key="test",
        model="reviewer-1",
        backoff=0.0,
        concurrency=1,
        timeout=5,
    )
    base.update(kw)
    return LLMReviewConfig(**base)


def verdicts(*items: tuple[int, bool, str]) -> str:
    return json.dumps(
        {
            "criteria": [
                {
                    "criterion": n,
                    "ok": ok,
                    "principle": "" if ok else "objective",
                    "problem": "" if ok else why,
                    "fix": "" if ok else f"rewrite {n}",
                }
                for n, ok, why in items
            ]
        }
    )


ALL_OK = verdicts((1, True, ""), (2, True, ""))


def by_rubric(replies: dict[str, str]):
    """A script choosing the reply from the rubric question in the request."""

    def script(req: dict) -> ScriptedReply:
        user = req["messages"][-1]["content"]
        q = re.search(r"RUBRIC QUESTION: (.*)", user).group(1)
        return chat_reply(replies.get(q, ALL_OK), prompt_tokens=100, completion_tokens=20)

    return script


def test_findings_requests_and_usage(clean_task) -> None:
    q2 = clean_task.rubrics[2].question
    with FakeOpenAIServer(
        by_rubric({q2: verdicts((1, True, ""), (2, False, "'trusts' is not defined"))})
    ) as srv:
        res = llm_review_task(clean_task, cfg(srv, concurrency=3))
        reqs = list(srv.requests)
    assert [(f.rule, f.where, f.severity) for f in res.findings] == [
        ("LLM1", "rubrics[2].criterion[1]", "warning")
    ]
    f = res.findings[0]
    assert f.message == "objective: 'trusts' is not defined" and f.hint == "suggested: rewrite 2"
    assert res.errors == [] and res.reviewed == 6
    assert res.usage.calls == 3 and res.usage.input_tokens == 300 and res.usage.output_tokens == 60
    assert len(reqs) == 3
    for r in reqs:
        assert r["model"] == "reviewer-1" and r["temperature"] == 0
        assert r["response_format"] == {"type": "json_object"}
        assert "reconcile the March vendor payments" in r["messages"][1]["content"]
    questions = sorted(
        re.search(r"RUBRIC QUESTION: (.*)", r["messages"][1]["content"]).group(1) for r in reqs
    )
    assert questions == sorted(r.question for r in clean_task.rubrics)


def test_429_then_success_is_retried(clean_task) -> None:
    script = [
        ScriptedReply(
            status=429, body={"error": {"message": "slow down"}}, headers={"retry-after": "0"}
        ),
        chat_reply(ALL_OK),
        chat_reply(ALL_OK),
        chat_reply(ALL_OK),
    ]
    with FakeOpenAIServer(script) as srv:
        res = llm_review_task(clean_task, cfg(srv))
        assert srv.calls == 4
    assert res.errors == [] and res.findings == [] and res.reviewed == 6 and res.usage.calls == 3


def test_500_three_times_is_an_error_not_a_finding(clean_task) -> None:
    fail = ScriptedReply(status=500, body={"error": {"message": "down"}})
    script = [fail, fail, fail, chat_reply(ALL_OK), chat_reply(ALL_OK)]
    with FakeOpenAIServer(script) as srv:
        res = llm_review_task(clean_task, cfg(srv, tries=3))
        assert srv.calls == 5
    assert res.findings == [] and res.reviewed == 4
    assert res.errors == ["rubrics[0]: no usable reply after 3 attempt(s) (last: HTTP 500)"]


def test_malformed_json_is_retried_and_fenced_json_is_read(clean_task) -> None:
    fenced = "Here you go:\n```json\n" + ALL_OK + "\n```"
    script = [chat_reply("{not json"), chat_reply(fenced), chat_reply(ALL_OK), chat_reply(ALL_OK)]
    with FakeOpenAIServer(script) as srv:
        res = llm_review_task(clean_task, cfg(srv))
        assert srv.calls == 4
    assert res.errors == [] and res.reviewed == 6 and res.usage.calls == 4


def test_timeout_is_retried(clean_task) -> None:
    script = [
        ScriptedReply(delay=1.5, body={}),
        chat_reply(ALL_OK),
        chat_reply(ALL_OK),
        chat_reply(ALL_OK),
    ]
    with FakeOpenAIServer(script) as srv:
        res = llm_review_task(clean_task, cfg(srv, timeout=0.5))
    assert res.errors == [] and res.reviewed == 6


def test_client_error_is_not_retried(clean_task) -> None:
    script = [
        ScriptedReply(status=400, body={"error": {"message": "bad model"}}),
        chat_reply(ALL_OK),
        chat_reply(ALL_OK),
    ]
    with FakeOpenAIServer(script) as srv:
        res = llm_review_task(clean_task, cfg(srv))
        assert srv.calls == 3
    assert len(res.errors) == 1 and res.errors[0].startswith(
        "rubrics[0]: endpoint refused the request (HTTP 400"
    )


def test_missing_and_out_of_range_verdicts(clean_task) -> None:
    partial = json.dumps(
        {
            "criteria": [
                {"criterion": 1, "ok": True},
                {"criterion": 7, "ok": False},
                {"criterion": "x", "ok": False},
            ]
        }
    )
    with FakeOpenAIServer([chat_reply(partial), chat_reply(ALL_OK), chat_reply(ALL_OK)]) as srv:
        res = llm_review_task(clean_task, cfg(srv))
    assert res.findings == [] and res.reviewed == 5
    assert res.errors == ["rubrics[0]: the model gave no verdict on criteria 1"]


def test_parse_reply_errors() -> None:
    with pytest.raises(ValueError, match="empty"):
        parse_reply("")
    with pytest.raises(ValueError, match="lacks a 'criteria' list"):
        parse_reply('{"verdicts": []}')
    assert parse_reply('noise {"criteria": []} noise') == {"criteria": []}


def test_config_from_env(monkeypatch) -> None:
    monkeypatch.setenv("JUDGE_API_BASE", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("JUDGE_API_KEY", "k")
    monkeypatch.setenv("JUDGE_MODEL", "m")
    c = LLMReviewConfig.from_env()
    assert (c.base_url, c.api_key, c.model) == ("http://127.0.0.1:9/v1", "k", "m")
    assert LLMReviewConfig.from_env(model="other").model == "other"
    monkeypatch.delenv("JUDGE_MODEL")
    with pytest.raises(ValueError, match="JUDGE_MODEL"):
        LLMReviewConfig.from_env()


def test_llm_gate_in_report(tmp_path: Path, fx) -> None:
    fx.write_task(tmp_path, fx.clean_spec())
    fail = ScriptedReply(status=500, body={})
    q0 = fx.base_rubrics()["rubrics"][0]["rubric"]

    def script(req):
        user = req["messages"][-1]["content"]
        if q0 in user:
            return chat_reply(verdicts((1, False, "vague"), (2, True, "")))
        return chat_reply(ALL_OK)

    with FakeOpenAIServer(script) as srv:
        rep = run_gates(tmp_path, GateOptions(gates=["llm"], llm=cfg(srv)))
    g = rep.tasks[0].gates["llm"]
    assert g.status == "warn" and [f.where for f in g.findings] == ["rubrics[0].criterion[0]"]
    assert rep.exit_code == 0
    with FakeOpenAIServer([fail] * 9) as srv:
        rep = run_gates(tmp_path, GateOptions(gates=["llm"], llm=cfg(srv, tries=3)))
    assert rep.tasks[0].gates["llm"].status == "error" and rep.exit_code == 3
