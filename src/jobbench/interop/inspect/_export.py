"""``jobbench export inspect RUN OUT_DIR``: a run directory as Inspect AI eval logs.

One log per agent configuration (``agent@model``), written with ``inspect_ai.log``'s own
types and writer (:func:`inspect_ai.log.write_eval_log`), so the file format is the
installed Inspect version's and ``inspect view`` and ``read_eval_log`` open it:

* one :class:`~inspect_ai.log.EvalSample` per finished trial: ``id`` = task id, ``epoch``
  = our epoch; the standard prompt as the input; the trajectory as chat messages
  (:func:`trajectory_messages`); the trial's wall time, start and end; the agent's usage
  under its model (``model_usage``) and the judge's under the ``grader`` role
  (``role_usage``); ``infra_error`` and other failed trials carry an ``error``;
* the score ``jobbench`` of each graded sample is the task score s_t in [0, 1]
  (:attr:`jobbench.records.GradeRecord.score`), with every rubric's and criterion's verdict,
  reasoning and evidence in its ``metadata`` (``rubrics``), the grade status, points and
  maximum; a trial without a decided grade has no score (``metadata.grade_status`` says
  why);
* the log's results hold micro and macro over the run's tasks (missing tasks count 0,
  :func:`jobbench.scoring.aggregate`), overall and per SOC major group (``micro/<code>``).

Grades come from one judge key (:func:`jobbench.report.resolve_judge_key`: the only one, or
the one graded last, or the one asked for).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ...records import GradeRecord, TrialRecord, Usage

SCORER = "jobbench"
"""Name of the score of each sample (and of the log's scorer)."""
GRADER_ROLE = "grader"
"""Inspect model role under which the judge's usage is recorded."""
NO_MODEL = "none/none"
"""Inspect's name for "no model", used for agents that ran without one (oracle, null)."""


class InspectExportError(ValueError):
    """The run cannot be exported (the message names the file or the cause)."""


@dataclass
class InspectExport:
    """What :func:`export_inspect` wrote: ``logs`` (configuration label → log file),
    ``samples`` (label → sample count) and the judge key whose grades were used."""

    out_dir: Path
    logs: dict[str, Path] = field(default_factory=dict)
    samples: dict[str, int] = field(default_factory=dict)
    judge_key: str | None = None


def _read_events(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a trial's trajectory file (unreadable lines skipped; missing: [])."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(ev, dict):
            out.append(ev)
    return out


def _arguments(raw: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict: a JSON object string is parsed, another value is kept
    under ``value``."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            return {"value": raw}
        return parsed if isinstance(parsed, dict) else {"value": parsed}
    return {} if raw is None else {"value": raw}


def _tool_calls(items: Any) -> list[Any]:
    """Inspect ``ToolCall`` items from OpenAI-style (``function.name``) or flat (``name``,
    ``arguments``) tool calls."""
    from inspect_ai.tool import ToolCall

    calls = []
    for i, tc in enumerate(items or []):
        if not isinstance(tc, dict):
            continue
        fn = tc.get("function")
        if not isinstance(fn, dict):  # flat: name and arguments on the call itself
            fn = tc
        calls.append(
            ToolCall(
                id=str(tc.get("id") or f"call-{i}"),
                function=str(fn.get("name") or "tool"),
                arguments=_arguments(fn.get("arguments")),
            )
        )
    return calls


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _message(role: Any, content: Any, ev: dict[str, Any], model: str | None) -> Any | None:
    """One Inspect chat message from an OpenAI-style message dict (None for unknown roles)."""
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
    )

    text = _text(content)
    if role == "system":
        return ChatMessageSystem(content=text)
    if role == "user":
        return ChatMessageUser(content=text)
    if role == "assistant":
        return ChatMessageAssistant(
            content=text, tool_calls=_tool_calls(ev.get("tool_calls")) or None, model=model
        )
    if role == "tool":
        return ChatMessageTool(
            content=text,
            tool_call_id=str(ev.get("tool_call_id") or "") or None,
            function=ev.get("name") if isinstance(ev.get("name"), str) else None,
        )
    return None


def trajectory_messages(events: list[dict[str, Any]], model: str | None = None) -> list[Any]:
    """The chat messages of a trial's ``trajectory.jsonl`` events, in order.

    Mapping: ``trial_start.prompt`` → the user message (replaced by the agent's own
    ``messages`` event when it has one: the builtin agent's system and user messages);
    ``model_response`` → an assistant message with its tool calls; ``tool_result`` → a tool
    message; ``nudge`` → a user message; ``command`` (oracle, ``command:CMD``) → an
    assistant ``bash`` tool call of the command line and ``command_result`` → its tool
    message (exit code, stdout, stderr); ``agent_event`` messages of a command agent → the
    message they describe. Other events (CLI agents' raw streams, notes) give no message.

    Returns:
        ``inspect_ai.model.ChatMessage`` items.
    """
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
    from inspect_ai.tool import ToolCall

    messages: list[Any] = []
    pending: str | None = None  # id of the open ``command`` tool call
    n_commands = 0
    for ev in events:
        kind = ev.get("type")
        if kind == "trial_start" and isinstance(ev.get("prompt"), str) and not messages:
            messages.append(ChatMessageUser(content=ev["prompt"]))
        elif kind == "messages" and isinstance(ev.get("messages"), list):
            first = [_message(m.get("role"), m.get("content"), m, model) for m in ev["messages"]]
            messages = [m for m in first if m is not None]
        elif kind == "model_response":
            messages.append(
                ChatMessageAssistant(
                    content=_text(ev.get("content")),
                    tool_calls=_tool_calls(ev.get("tool_calls")) or None,
                    model=model,
                )
            )
        elif kind == "tool_result":
            messages.append(
                ChatMessageTool(
                    content=_text(ev.get("output")),
                    tool_call_id=str(ev.get("id") or "") or None,
                    function=ev.get("name") if isinstance(ev.get("name"), str) else None,
                )
            )
        elif kind == "nudge":
            messages.append(ChatMessageUser(content=_text(ev.get("content"))))
        elif kind == "command" and isinstance(ev.get("argv"), list):
            n_commands += 1
            pending = f"command-{n_commands}"
            cmd = shlex.join(str(a) for a in ev["argv"])
            messages.append(
                ChatMessageAssistant(
                    content="",
                    tool_calls=[ToolCall(id=pending, function="bash", arguments={"cmd": cmd})],
                    model=model,
                )
            )
        elif kind == "command_result" and pending is not None:
            parts = [f"exit code {ev.get('exit_code')}"]
            if ev.get("timed_out"):
                parts.append("timed out")
            for name in ("stdout", "stderr"):
                if ev.get(name):
                    parts.append(f"{name}:\n{ev[name]}")
            messages.append(
                ChatMessageTool(content="\n".join(parts), tool_call_id=pending, function="bash")
            )
            pending = None
        elif kind == "agent_event" and isinstance(ev.get("event"), dict):
            inner = ev["event"]
            if inner.get("type") == "message":
                msg = _message(inner.get("role"), inner.get("content"), inner, model)
                if msg is not None:
                    messages.append(msg)
    return messages


def _model_usage(u: Usage) -> Any:
    from inspect_ai.model import ModelUsage

    return ModelUsage(
        input_tokens=u.input_tokens,
        output_tokens=u.output_tokens,
        total_tokens=u.input_tokens + u.output_tokens,
        input_tokens_cache_read=u.cached_input_tokens or None,
        total_cost=u.cost_usd,
    )


def _rubrics_detail(grade: GradeRecord) -> list[dict[str, Any]]:
    """Per rubric: id, weight, passed (z_r), chain break, and per criterion the verdict,
    its source, reasoning and evidence."""
    return [
        {
            "index": r.index,
            "id": r.id,
            "weight": r.weight,
            "passed": r.passed,
            "undecided": r.undecided,
            "chain_break": r.chain_break,
            "overall_reasoning": r.overall_reasoning,
            "criteria": [
                {
                    "index": c.criterion_index,
                    "verdict": c.verdict,
                    "source": c.source,
                    "reasoning": c.reasoning,
                    "evidence": c.evidence,
                }
                for c in r.criteria
            ],
        }
        for r in grade.rubrics
    ]


def _score(grade: GradeRecord) -> Any:
    from inspect_ai.scorer import Score

    passed = sum(1 for r in grade.rubrics if r.passed)
    return Score(
        value=float(grade.score or 0.0),
        answer=", ".join(d.path for d in (grade.deliverables or [])) or None,
        explanation=(
            f"{grade.passed_weight:g} of {grade.max_score:g} points; "
            f"{passed} of {len(grade.rubrics)} rubrics passed ({grade.status})"
        ),
        metadata={
            "status": grade.status,
            "passed_weight": grade.passed_weight,
            "max_score": grade.max_score,
            "judge": grade.judge,
            "rubrics": _rubrics_detail(grade),
        },
    )


def _iso(text: str | None) -> str | None:
    return text or None


def _sample(trial: TrialRecord, grade: GradeRecord | None, events: list[dict[str, Any]]) -> Any:
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.model import ModelOutput

    model = trial.model if trial.model and trial.model != "-" else None
    start = next((e for e in events if e.get("type") == "trial_start"), {})
    prompt = start.get("prompt") if isinstance(start.get("prompt"), str) else trial.task_id
    delivered = [d.path for d in trial.deliverables]
    metadata: dict[str, Any] = {
        "trial_id": trial.trial_id,
        "task_id": trial.task_id,
        "task_digest": trial.task_digest,
        "agent": trial.agent,
        "model": trial.model,
        "status": trial.status.value,
        "deliverables": delivered,
        "turns": trial.turns,
        "sandbox": trial.sandbox,
        "protocol": trial.protocol,
        "grade_status": grade.status if grade is not None else "ungraded",
    }
    scores = None
    if grade is not None and grade.score is not None:
        scores = {SCORER: _score(grade)}
    elif grade is not None:
        metadata["rubrics"] = _rubrics_detail(grade)
    error = None
    if trial.status.value not in ("ok", "no_deliverable"):
        error = EvalError(
            message=f"{trial.status.value}: {trial.error or ''}".strip(),
            traceback="",
            traceback_ansi="",
        )
    model_usage = {model: _model_usage(trial.usage)} if model and trial.usage.calls else {}
    role_usage = {}
    if grade is not None and (grade.usage.input_tokens or grade.usage.output_tokens):
        role_usage[GRADER_ROLE] = _model_usage(grade.usage)
    return EvalSample(
        id=trial.task_id,
        epoch=trial.epoch,
        input=prompt,
        target="",
        messages=trajectory_messages(events, model),
        output=ModelOutput.from_content(
            model or NO_MODEL, "Deliverables: " + (", ".join(delivered) or "(none)")
        ),
        scores=scores,
        metadata=metadata,
        model_usage=model_usage,
        role_usage=role_usage,
        started_at=_iso(trial.started_at),
        completed_at=_iso(trial.finished_at),
        total_time=trial.wall_seconds,
        working_time=trial.wall_seconds,
        error=error,
    )


def _file_name(created: str, label: str, run_name: str) -> str:
    """``<created>_jobbench_<run>_<label>.eval`` (Inspect's ``<time>_<task>_<id>`` naming;
    characters outside ``[A-Za-z0-9.-]`` become ``-``)."""
    stamp = re.sub(r"[^0-9T]", "-", created[:19])
    safe = re.sub(r"[^A-Za-z0-9.-]+", "-", f"{run_name}_{label}").strip("-")
    return f"{stamp}_jobbench_{safe}.eval"


def _metrics(results: list[Any], config: str) -> dict[str, Any]:
    """``micro``, ``macro`` overall and ``micro/<SOC major code>``, ``macro/<code>`` per
    group, as Inspect metrics (fractions in [0, 1]; a value that is undefined is left out)."""
    from inspect_ai.log import EvalMetric

    from ...scoring import aggregate, group_results

    out: dict[str, Any] = {}
    groups = [("", results)] + [
        (f"/{code}", rs) for code, rs in sorted(group_results(results, "soc_major_group").items())
    ]
    for suffix, rs in groups:
        agg = aggregate(rs, config=config, with_ci=False)
        for name, interval in (("micro", agg.micro), ("macro", agg.macro)):
            if interval.estimate is not None:
                out[name + suffix] = EvalMetric(name=name + suffix, value=interval.estimate)
    return out


def export_inspect(
    run_dir: Path | str, out_dir: Path | str, *, judge_key: str | None = None
) -> InspectExport:
    """Write one Inspect eval log per agent configuration of ``run_dir`` into ``out_dir``.

    Args:
        run_dir: a JobBench run directory (``runs/<name>``).
        out_dir: folder for the ``.eval`` files (made when missing; a log of the same name
            is replaced).
        judge_key: the grades to use (default: see :func:`jobbench.report.resolve_judge_key`).

    Returns:
        :class:`InspectExport` with the file written per configuration label.

    Raises:
        InspectExportError: ``run_dir`` is not a readable run directory, or it has no
            finished trial.
        ImportError: ``inspect_ai`` is not installed (``pip install 'jobbench[inspect]'``).
    """
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalPlan,
        EvalPlanStep,
        EvalResults,
        EvalScore,
        EvalSpec,
        EvalStats,
        write_eval_log,
    )

    from ... import __version__
    from ...report import ReportInputError, load_run, resolve_judge_key
    from ...rundir import RunDir, config_label
    from ...scoring import task_results, trial_result

    run_dir = Path(run_dir)
    rd = RunDir(run_dir)
    try:
        key = resolve_judge_key([run_dir], judge_key)
        run = load_run(run_dir, key)
    except ReportInputError as exc:
        raise InspectExportError(str(exc)) from exc
    if not run.trials:
        raise InspectExportError(f"{run_dir}: no finished trial to export")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    result = InspectExport(out_dir=out, judge_key=key)
    by_config: dict[str, list[Any]] = {}
    for lt in run.trials:
        label = config_label(lt.record.agent, lt.record.model)
        by_config.setdefault(label, []).append(lt)
    created = run.lock.created_at or datetime.now(UTC).isoformat(timespec="seconds")
    metas = [run.metas[t] for t in run.task_ids if t in run.metas]
    for label, loaded in by_config.items():
        first = loaded[0].record
        model = first.model if first.model != "-" else None
        samples = []
        for lt in loaded:
            events = _read_events(rd.trajectory_file(lt.record.trial_id))
            samples.append(_sample(lt.record, lt.grade, events))
        joined = [
            trial_result(
                lt.record,
                lt.grade,
                run=run.name,
                config=label,
                judge_key=key,
                task=run.metas.get(lt.record.task_id),
            )
            for lt in loaded
        ]
        metrics = _metrics(task_results(joined, metas, config=label, run=run.name), label)
        agent_usage, judge_usage = Usage(), Usage()
        for lt in loaded:
            agent_usage = agent_usage + lt.record.usage
            if lt.grade is not None:
                judge_usage = judge_usage + lt.grade.usage
        stats = EvalStats(
            started_at=min((lt.record.started_at or "" for lt in loaded), default=""),
            completed_at=max((lt.record.finished_at or "" for lt in loaded), default=""),
            model_usage={model: _model_usage(agent_usage)} if model else {},
            role_usage=(
                {GRADER_ROLE: _model_usage(judge_usage)}
                if judge_usage.input_tokens or judge_usage.output_tokens
                else {}
            ),
        )
        log = EvalLog(
            status="success",
            eval=EvalSpec(
                created=created,
                task="jobbench",
                task_id=f"{run.name}/{label}",
                task_version=0,
                task_args={"run": run.name, "splits": run.lock.config.splits},
                solver=first.agent,
                dataset=EvalDataset(
                    name=Path(str(run.lock.dataset_root)).name,
                    location=str(run.lock.dataset_root),
                    samples=len({lt.record.task_id for lt in loaded}),
                    sample_ids=sorted({lt.record.task_id for lt in loaded}),
                ),
                model=model or NO_MODEL,
                config=EvalConfig(epochs=run.epochs),
                packages={"jobbench": __version__},
                metadata={
                    "jobbench_run": run.name,
                    "agent": first.agent,
                    "model": first.model,
                    "judge_key": key,
                    "harness_version": run.lock.harness_version,
                },
            ),
            plan=EvalPlan(name="jobbench", steps=[EvalPlanStep(solver=first.agent, params={})]),
            results=EvalResults(
                total_samples=len(samples),
                completed_samples=sum(1 for s in samples if s.error is None),
                scores=[
                    EvalScore(
                        name=SCORER,
                        scorer=SCORER,
                        scored_samples=sum(1 for s in samples if s.scores),
                        metrics=metrics,
                    )
                ],
            ),
            stats=stats,
            samples=samples,
        )
        path = out / _file_name(created, label, run.name)
        write_eval_log(log, str(path))
        result.logs[label] = path
        result.samples[label] = len(samples)
    return result
