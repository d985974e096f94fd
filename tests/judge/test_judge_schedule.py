"""How ``Grader.grade`` schedules a trial's judge calls for a provider's prompt-prefix cache
(issue 20): one call of a trial first, the trial's others only after it has returned, while
other trials keep the pool busy; a failing first call still releases the rest; a regrade of
unchanged outputs still costs no call. Every ordering is observed by the scripted server in
jobbench.testing and forced with events (no sleeps decide an outcome)."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from judge_helpers import TableJudge, make_run, make_task, tail_text, user_parts, write_files
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.judge import Grader, JudgeConfig, TrialInput, prefix_cacheable_input
from jobbench.judge._grade import common_prefix_len
from jobbench.records import GradeRecord, PrefixCacheable
from jobbench.testing import FakeOpenAIServer, ScriptedReply, chat_reply

RUBRICS = [
    {"rubric": f"Part {r}", "weight": 1, "criterion": [f"Criterion {r}.{j} holds" for j in (0, 1)]}
    for r in range(4)
]
TABLE = {f"Criterion {r}.{j} holds": ("pass", "") for r in range(4) for j in (0, 1)}
WAIT = 20.0
"""Seconds a scripted reply waits for an event before the test fails (never reached when the
schedule is right)."""


def _trial_of(req: dict[str, Any]) -> str:
    """The trial a request belongs to: the ``TRIAL-<x>`` tag its deliverables carry."""
    first = user_parts(req)[0]
    found = re.search(r"TRIAL-(\w+)", first)
    assert found, first[:200]
    return found.group(1)


def _inputs(tmp_path: Path, names: list[str], rubrics: list[dict] = RUBRICS) -> list[TrialInput]:
    task = make_task(tmp_path, rubrics)
    return [
        TrialInput(
            trial_id=f"t-{name}",
            task=task,
            deliverables_dir=write_files(
                tmp_path / f"deliv-{name}", {"memo.md": f"Memo of TRIAL-{name}.\n"}
            ),
        )
        for name in names
    ]


class Timeline:
    """A scripted judge that records, per trial, the order in which calls arrived and
    completed, and whether any call of a trial arrived before the trial's first call had
    completed (``early``). ``hold`` maps a trial to an event its first call waits for."""

    def __init__(self, answer: Any, hold: dict[str, threading.Event] | None = None):
        self.answer = answer
        self.hold = hold or {}
        self.lock = threading.Lock()
        self.arrived: dict[str, list[str]] = {}
        self.completed: dict[str, int] = {}
        self.inflight: dict[str, int] = {}
        self.early: list[tuple[str, str]] = []
        self.first_arrived: dict[str, threading.Event] = {}

    def event(self, trial: str) -> threading.Event:
        with self.lock:
            return self.first_arrived.setdefault(trial, threading.Event())

    def __call__(self, req: dict[str, Any]) -> ScriptedReply:
        trial = _trial_of(req)
        tail = tail_text(req).splitlines()[1]
        with self.lock:
            calls = self.arrived.setdefault(trial, [])
            if self.inflight.get(trial, 0) and not self.completed.get(trial, 0):
                self.early.append((trial, tail))
            calls.append(tail)
            first = len(calls) == 1
            self.inflight[trial] = self.inflight.get(trial, 0) + 1
        if first:
            self.event(trial).set()
            if trial in self.hold:
                assert self.hold[trial].wait(WAIT), f"trial {trial}: held too long"
        try:
            return self.answer(req, trial, first)
        finally:
            with self.lock:
                self.inflight[trial] -= 1
                self.completed[trial] = self.completed.get(trial, 0) + 1


def _config(srv: FakeOpenAIServer, tmp_path: Path, **kw: Any) -> JudgeConfig:
    values: dict[str, Any] = dict(
        model="gpt-4o-mini",
        api_base=srv.base_url,
        api_key="test",
        backoff_base=0.0,
        backoff_max=0.0,
        timeout=30.0,
        decide="llm",
        cache=False,
        cache_path=tmp_path / "cache.sqlite",
        concurrency=10,
    )
    values.update(kw)
    return JudgeConfig(**values)


def _grade(cfg: JudgeConfig, inputs: list[TrialInput], **kw: Any) -> list:
    grader = Grader(cfg, **kw)
    try:
        return grader.grade(inputs)
    finally:
        grader.close()


def test_first_call_of_a_trial_completes_before_its_others_start_while_trials_overlap(
    tmp_path: Path,
) -> None:
    """Trial A's first call is answered only once trial B's first call has arrived (so the two
    overlap: B was not kept waiting for A), and no other call of either trial arrives before
    that trial's first call has completed, although the pool has room for all eight."""
    judge = TableJudge(TABLE)
    timeline = Timeline(lambda req, trial, first: judge(req))
    timeline.hold = {"A": timeline.event("B")}
    with FakeOpenAIServer(timeline) as srv:
        recs = _grade(_config(srv, tmp_path), _inputs(tmp_path, ["A", "B"]))
    assert [r.status for r in recs] == ["complete", "complete"]
    assert timeline.early == []
    assert {t: len(c) for t, c in timeline.arrived.items()} == {"A": 4, "B": 4}
    # the first unit of a trial is its first rubric
    assert timeline.arrived["A"][0] == timeline.arrived["B"][0] == "Part 0"


def test_old_schedule_sends_a_trials_calls_together(tmp_path: Path) -> None:
    """``schedule="all"`` (the benchmark's baseline) submits every unit at once: the first
    call is held until all four calls of the trial have arrived."""
    judge = TableJudge(TABLE)
    four = threading.Event()

    def answer(req: dict[str, Any], trial: str, first: bool) -> ScriptedReply:
        with timeline.lock:
            if len(timeline.arrived[trial]) == 4:
                four.set()
        assert four.wait(WAIT), "the four calls did not arrive together"
        return judge(req)

    timeline = Timeline(answer)
    with FakeOpenAIServer(timeline) as srv:
        recs = _grade(_config(srv, tmp_path), _inputs(tmp_path, ["A"]), schedule="all")
    assert recs[0].status == "complete"
    assert len(timeline.early) == 3


def test_failing_first_unit_still_releases_the_rest(tmp_path: Path) -> None:
    """The first call of the trial fails (HTTP 500, one attempt): the other three units are
    sent all the same, after it, and the grade ends with a judge_error on that rubric only."""
    judge = TableJudge(TABLE)

    def answer(req: dict[str, Any], trial: str, first: bool) -> ScriptedReply:
        if first:
            return ScriptedReply(status=500, body={"error": {"message": "boom"}})
        return judge(req)

    timeline = Timeline(answer)
    with FakeOpenAIServer(timeline) as srv:
        (rec,) = _grade(_config(srv, tmp_path, max_attempts=1), _inputs(tmp_path, ["A"]))
    assert timeline.early == []
    assert timeline.arrived["A"][0] == "Part 0"
    assert sorted(timeline.arrived["A"][1:]) == ["Part 1", "Part 2", "Part 3"]
    assert rec.status == "judge_error"
    assert [u.error is not None for u in rec.units] == [True, False, False, False]
    assert rec.units[0].cause == "server_error"


def test_first_unit_that_raises_still_releases_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first unit whose run raises (a bug) is recorded as an internal error and the
    trial's other units still run."""
    judge = TableJudge(TABLE)
    original = Grader.run_unit

    def run_unit(self: Grader, unit: Any) -> None:
        if unit.uid == "rubric:0":
            raise RuntimeError("bug")
        original(self, unit)

    monkeypatch.setattr(Grader, "run_unit", run_unit)
    with FakeOpenAIServer(lambda req: judge(req)) as srv:
        (rec,) = _grade(_config(srv, tmp_path), _inputs(tmp_path, ["A"]))
        assert srv.calls == 3
    assert rec.units[0].error == "internal error: RuntimeError: bug"
    assert [u.complete for u in rec.units] == [False, True, True, True]


def test_first_unit_running_past_lead_wait_releases_the_rest(tmp_path: Path) -> None:
    """Trial A's first call is answered only once the trial's three other calls have
    arrived: with ``lead_wait`` 0.2 s they are released while it still runs, every call is
    made once, and the grade is complete (the default wait would hold them for 120 s)."""
    judge = TableJudge(TABLE)
    others = threading.Event()

    def answer(req: dict[str, Any], trial: str, first: bool) -> ScriptedReply:
        with timeline.lock:
            if len(timeline.arrived[trial]) == 4:
                others.set()
        if first:
            assert others.wait(WAIT), "the held units were not released"
        return judge(req)

    timeline = Timeline(answer)
    with FakeOpenAIServer(timeline) as srv:
        (rec,) = _grade(_config(srv, tmp_path), _inputs(tmp_path, ["A"]), lead_wait=0.2)
        assert srv.calls == 4
    assert timeline.arrived["A"][0] == "Part 0"
    assert sorted(timeline.arrived["A"][1:]) == ["Part 1", "Part 2", "Part 3"]
    # the first answer waited for all four arrivals, so the second arrived before any call
    # of the trial had completed
    assert timeline.early[0][0] == "A"
    assert rec.status == "complete"
    assert [u.complete for u in rec.units] == [True] * 4


def test_first_unit_answered_in_time_is_not_released_twice(tmp_path: Path) -> None:
    """Two trials whose first calls return well inside ``lead_wait``: no call arrives early
    and each of the eight is made exactly once (the expired-lead path releases nothing)."""
    judge = TableJudge(TABLE)
    timeline = Timeline(lambda req, trial, first: judge(req))
    with FakeOpenAIServer(timeline) as srv:
        recs = _grade(_config(srv, tmp_path), _inputs(tmp_path, ["A", "B"]), lead_wait=30.0)
        assert srv.calls == 8
    assert timeline.early == []
    assert {t: sorted(c) for t, c in timeline.arrived.items()} == {
        t: [f"Part {r}" for r in range(4)] for t in ("A", "B")
    }
    assert [r.status for r in recs] == ["complete", "complete"]


@pytest.mark.parametrize("wait_s", [0.0, -1.0, float("nan")])
def test_lead_wait_must_be_positive(wait_s: float) -> None:
    cfg = JudgeConfig(model="m", api_base="http://127.0.0.1:9/v1", api_key="k", decide="llm")
    with pytest.raises(ValueError, match="lead_wait must be positive"):
        Grader(cfg, lead_wait=wait_s)


def test_regrade_of_unchanged_outputs_makes_no_call(tmp_path: Path) -> None:
    """With the verdict cache on, the second grade of the same outputs is served whole from
    it (the first unit served from the cache hands the lead to the next one)."""
    judge = TableJudge(TABLE)
    inputs = _inputs(tmp_path, ["A", "B"])
    with FakeOpenAIServer(lambda req: judge(req)) as srv:
        first = _grade(_config(srv, tmp_path, cache=True), inputs)
        assert srv.calls == 8
        second = _grade(_config(srv, tmp_path, cache=True), inputs)
        assert srv.calls == 8
    assert [r.score for r in second] == [r.score for r in first] == [1.0, 1.0]
    assert all(u.cached for r in second for u in r.units)


def test_units_with_another_scope_lead_their_own_group(tmp_path: Path) -> None:
    """Rubrics that read only ``data.csv`` share no deliverable text with the others: each
    group's first call goes alone (the two first calls overlap), then the rest of its
    group."""
    rubrics = [dict(r) for r in RUBRICS]
    rubrics[2]["files"] = ["data.csv"]
    rubrics[3]["files"] = ["data.csv"]
    task = make_task(tmp_path, rubrics)
    deliv = write_files(
        tmp_path / "deliv", {"memo.md": "Memo of TRIAL-A.\n", "data.csv": "x\nTRIAL-A\n"}
    )
    judge = TableJudge(TABLE)
    lock = threading.Lock()
    order: list[tuple[str, str]] = []
    both = threading.Barrier(2, timeout=WAIT)

    def script(req: dict[str, Any]) -> ScriptedReply:
        scope = "csv" if "=== FILE: memo.md" not in user_parts(req)[0] else "all"
        part = tail_text(req).splitlines()[1]
        with lock:
            order.append((scope, part))
            lead = len([o for o in order if o[0] == scope]) == 1
        if lead:
            both.wait()  # the two groups' first calls are in flight together
        return judge(req)

    with FakeOpenAIServer(script) as srv:
        (rec,) = _grade(
            _config(srv, tmp_path), [TrialInput(trial_id="t", task=task, deliverables_dir=deliv)]
        )
    assert rec.status == "complete"
    assert sorted(order[:2]) == [("all", "Part 0"), ("csv", "Part 2")]
    assert sorted(order[2:]) == [("all", "Part 1"), ("csv", "Part 3")]


@pytest.mark.parametrize("mode", ["rubric", "criterion"])
def test_prefix_bytes_identical_across_a_trials_calls(tmp_path: Path, mode: str) -> None:
    """Every request body of a trial is byte-identical up to its last text part (the rubric
    part), which starts with the call's own rubric and holds no reply-format text: that is
    in the system message. Two trials' prefixes differ (their deliverables do)."""
    judge = TableJudge(TABLE)
    with FakeOpenAIServer(lambda req: judge(req)) as srv:
        _grade(_config(srv, tmp_path, mode=mode), _inputs(tmp_path, ["A", "B"]))
        bodies = list(srv.bodies)
    assert len(bodies) == {"rubric": 8, "criterion": 16}[mode]
    marker = b"\\n\\n## Rubric"  # the rubric part, after the blank line joining it on
    prefixes: dict[str, set[bytes]] = {}
    for body in bodies:
        assert body.count(marker) == 1
        cut = body.index(marker)
        req = json.loads(body)
        prefixes.setdefault(_trial_of(req), set()).add(body[:cut])
        last = user_parts(req)[-1]
        assert body[cut:].startswith(marker) and json.dumps(last)[1:-1].encode() in body[cut:]
        assert "Return JSON" not in last and "DELIVERABLES-" not in last
        assert "## Reply format" in req["messages"][0]["content"]
    assert {t: len(p) for t, p in prefixes.items()} == {"A": 1, "B": 1}
    assert prefixes["A"] != prefixes["B"]


def _text_of(req: dict[str, Any]) -> str:
    """The prompt text of a request as received, built here from the JSON body: per message
    ``<role>`` and a newline, then each text part and a newline (these tests attach no
    images)."""
    out = ""
    for m in req["messages"]:
        out += "<" + m["role"] + ">\n"
        content = m["content"]
        for part in [{"text": content}] if isinstance(content, str) else content:
            out += part["text"] + "\n"
    return out


def _shared(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))


def test_prefix_cacheable_equals_the_common_prefix_with_earlier_completed_calls(
    tmp_path: Path,
) -> None:
    """One call at a time (concurrency 1), so every call's earlier completed calls are all
    the calls the server answered before it. The first reply for rubric 1 lacks a criterion,
    so that unit is asked again (the same prompt plus a note). Each reply records the
    longest prefix its prompt shares with an earlier call, computed here from the bodies the
    server received; the grade summary sums them."""
    judge = TableJudge(TABLE, usage=(400, 20, 0))
    lock = threading.Lock()
    seen: list[dict[str, Any]] = []

    def script(req: dict[str, Any]) -> ScriptedReply:
        with lock:
            seen.append(req)
            again = sum("Part 1" in tail_text(r) for r in seen) == 1
        if "## Rubric\nPart 1" in tail_text(req) and again:
            return chat_reply(
                json.dumps({"criteria": [], "overall_reasoning": "", "rubric_passed": False}),
                prompt_tokens=400,
            )
        return judge(req)

    with FakeOpenAIServer(script) as srv:
        (rec,) = _grade(_config(srv, tmp_path, concurrency=1), _inputs(tmp_path, ["A"]))
    assert rec.status == "complete"
    texts = [_text_of(r) for r in seen]
    expected = [max((_shared(t, u) for u in texts[:k]), default=0) for k, t in enumerate(texts)]
    assert expected[0] == 0 and all(e > 0 for e in expected[1:])
    replies = [r for u in rec.units for r in u.replies]
    assert len(replies) == len(seen) == 5
    # replies in the order the server saw them: match each to its request by the rubric part
    got = {}
    for u in rec.units:
        for k, r in enumerate(u.replies):
            got[(u.unit, k)] = r["prefix_cacheable"]
    order: list[tuple[str, int]] = []
    for req in seen:
        uid = "rubric:" + tail_text(req).splitlines()[1].split()[-1]
        order.append((uid, sum(1 for o in order if o[0] == uid)))
    recorded = [got[o]["chars"] for o in order]
    assert recorded == expected
    # the repeated call shares its whole first prompt (it only adds a note at the end)
    retry = order.index(("rubric:1", 1))
    assert expected[retry] == len(texts[order.index(("rubric:1", 0))])
    for o, text in zip(order, texts):
        fig = got[o]
        assert fig["calls"] == 1 and fig["prompt_chars"] == len(text)
        assert fig["tokens"] == round(400 * fig["chars"] / len(text))
    for u in rec.units:
        assert u.prefix_cacheable.chars == sum(r["prefix_cacheable"]["chars"] for r in u.replies)
    assert prefix_cacheable_input(rec).chars == sum(expected)


def test_followers_sent_together_share_only_the_first_calls_prefix(tmp_path: Path) -> None:
    """The three calls released by the first one are all in flight before any returns (the
    server holds them), so each records its common prefix with the first call alone."""
    judge = TableJudge(TABLE)
    followers = threading.Barrier(3, timeout=WAIT)
    lock = threading.Lock()
    seen: list[dict[str, Any]] = []

    def script(req: dict[str, Any]) -> ScriptedReply:
        with lock:
            seen.append(req)
            first = len(seen) == 1
        if not first:
            followers.wait()
        return judge(req)

    with FakeOpenAIServer(script) as srv:
        (rec,) = _grade(_config(srv, tmp_path), _inputs(tmp_path, ["A"]))
    lead = _text_of(seen[0])
    by_uid = {"rubric:" + tail_text(r).splitlines()[1].split()[-1]: _text_of(r) for r in seen}
    assert tail_text(seen[0]).startswith("## Rubric\nPart 0")
    for u in rec.units:
        (reply,) = u.replies
        want = 0 if u.unit == "rubric:0" else _shared(by_uid[u.unit], lead)
        assert reply["prefix_cacheable"]["chars"] == want
    # the shared part is the system message and the deliverables, up to the rubric part
    assert _shared(by_uid["rubric:1"], lead) == lead.index("## Rubric\nPart 0") + len(
        "## Rubric\nPart "
    )


def test_grade_summary_reports_prefix_cacheable_input(tmp_path: Path) -> None:
    """``jobbench grade --json`` and its console summary give the total of this command's
    calls as prefix-cacheable input."""
    task = make_task(tmp_path, RUBRICS)
    run = make_run(
        tmp_path / "run",
        tmp_path / "dataset",
        [
            {"task": task, "agent": a, "model": "-", "epoch": 1, "files": {"m.md": f"TRIAL-{a}"}}
            for a in ("x", "y")
        ],
    )
    runner = CliRunner()
    with FakeOpenAIServer(TableJudge(TABLE)) as srv:
        env = {
            "JUDGE_API_BASE": srv.base_url,
            "JUDGE_API_KEY": "test",
            "JUDGE_MODEL": "gpt-4o-mini",
            "JOBBENCH_JUDGE_CACHE": str(tmp_path / "cache.sqlite"),
        }
        args = [
            "grade",
            str(run),
            "--no-progress",
            "--decide",
            "llm",
            "--no-preflight",
            "--no-cache",
        ]
        res = runner.invoke(app, [*args, "--json"], env=env)
        assert res.exit_code == 0, res.output
        summary = json.loads(res.stdout)
        records = [
            GradeRecord.model_validate_json(p.read_text())
            for p in sorted((run / "grades").rglob("epoch-1.json"))
        ]
        total = sum((prefix_cacheable_input(r) for r in records), PrefixCacheable())
        assert total.calls == 8 and total.chars > 0
        assert summary["prefix_cacheable_input"] == total.model_dump()
        shutil.rmtree(run / "grades")  # a regrade would reuse the recorded verdicts
        res = runner.invoke(app, args, env=env)
        assert res.exit_code == 0, res.output
    line = next(x for x in res.output.splitlines() if x.startswith("prefix-cacheable input:"))
    assert f"in {total.calls} calls" in line and f"{total.chars:,} of" in line


def test_common_prefix_len_agrees_with_commonprefix() -> None:
    rng = random.Random(20)
    for _ in range(300):
        a = "".join(rng.choice("ab") for _ in range(rng.randrange(0, 40)))
        b = a[: rng.randrange(0, len(a) + 1)] + "".join(
            rng.choice("abc") for _ in range(rng.randrange(0, 10))
        )
        assert common_prefix_len(a, b) == len(os.path.commonprefix([a, b])), (a, b)


def test_unknown_schedule_is_refused() -> None:
    with pytest.raises(ValueError, match="schedule"):
        Grader(JudgeConfig(), schedule="sometimes")  # type: ignore[arg-type]
