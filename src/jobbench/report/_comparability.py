"""Whether each configuration of a report is comparable with the published JobBench
leaderboard, and every way it is not.

A configuration is *comparable* only when nothing below differs from how the leaderboard
numbers were made (facts in :mod:`jobbench.agents._protocol`, read from
Job-Bench/job-bench-eval):

* the agent is one of the published runners (claude-code, codex, opencode) run under the
  ``public`` protocol with their settings (turn cap, reasoning effort, time limit, retries,
  OpenCode's output cap, provider timeouts, context and permissions) and, where the
  leaderboard's CLI version is published (OpenCode 1.14.18), that version;
* the grades follow the public judge rule: ``--mode official`` (the judge's own
  ``rubric_passed`` decides), judge model ``grok-4.3``, no ``--strict-evidence``;
* the tasks are the 65 of the ``main`` split, one trial each, none missing.

Each difference is named in one sentence (:attr:`Comparability.deviations`); the same
verdict appears in ``report.html``, ``leaderboard.md`` and ``summary.json``. The task set
is compared by split and count only: that the tasks are the leaderboard's revision is not
checked.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..agents import (
    LEADERBOARD_JUDGE_MODE,
    LEADERBOARD_JUDGE_MODEL,
    LEADERBOARD_MAIN_TASKS,
    LEADERBOARD_SPLIT,
    PUBLISHED_RUNNERS,
    protocol_deviations,
)
from ..rundir import config_label

if TYPE_CHECKING:  # pragma: no cover
    from ._build import ConfigView, ReportData

TITLE = "Comparable with the published leaderboard"


@dataclass
class Comparability:
    """The leaderboard-comparability verdict of one configuration.

    Attributes:
        label: the configuration.
        protocol: the trials' protocol (``mixed: a, b`` when they differ; ``-`` without trials).
        cli_version: the CLI versions the trials recorded (``unknown`` when not recorded;
            ``-`` for agents without a CLI), and published_version the leaderboard's (or a
            note that it is not published).
        judge_mode, judge_model: of the grades (``checks`` and None for programmatic checks
            only; both None without grades).
        splits: the splits of the configuration's tasks; tasks: how many; missing_tasks:
            task ids without a scored trial.
        deviations: every difference from the leaderboard's setup, one sentence each.
    """

    label: str
    protocol: str
    cli_version: str
    published_version: str
    judge_mode: str | None
    judge_model: str | None
    splits: list[str]
    tasks: int
    missing_tasks: list[str]
    deviations: list[str] = field(default_factory=list)

    @property
    def comparable(self) -> bool:
        return not self.deviations

    @property
    def verdict(self) -> str:
        """``comparable`` or ``not comparable (N deviations)``."""
        n = len(self.deviations)
        return "comparable" if not n else f"not comparable ({n} deviation{'s' if n != 1 else ''})"

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (``summary.json``)."""
        return {
            "comparable": self.comparable,
            "verdict": self.verdict,
            "protocol": self.protocol,
            "cli_version": self.cli_version,
            "published_cli_version": self.published_version,
            "judge_mode": self.judge_mode,
            "judge_model": self.judge_model,
            "splits": self.splits,
            "tasks": self.tasks,
            "missing_tasks": self.missing_tasks,
            "deviations": self.deviations,
        }


def _judge(c: ConfigView) -> dict[str, Any] | None:
    for lt in c.loaded:
        if lt.grade is not None and isinstance(lt.grade.judge, dict):
            return lt.grade.judge
    return None


def _count(msgs: Counter, order: list[str], total: int) -> list[str]:
    return [m if msgs[m] == total else f"{m} ({msgs[m]} of {total} trials)" for m in order]


def config_comparability(c: ConfigView, judge_key: str | None) -> Comparability:
    """The verdict of one configuration (see the module docstring)."""
    records = [lt.record for lt in c.loaded]
    lock = c.run.lock
    facts = (lock.config.agents or {}).get(
        config_label(c.agent, None if c.model == "-" else c.model), {}
    )
    custom_endpoint = bool(facts.get("api_base"))
    protocols = Counter(r.protocol or "jobbench" for r in records)
    if not records:
        protocol = lock.protocol or "jobbench"
    elif len(protocols) == 1:
        protocol = next(iter(protocols))
    else:
        protocol = "mixed: " + ", ".join(f"{p} ({n})" for p, n in sorted(protocols.items()))
    runner = PUBLISHED_RUNNERS.get(c.agent)
    versions = (
        Counter(str(r.details.get("cli_version") or "unknown") for r in records)
        if runner
        else Counter()
    )
    cli_version = ", ".join(sorted(versions)) if versions else "-"
    published = (runner.version or runner.version_note) if runner else "-"
    deviations: list[str] = []
    if len(protocols) > 1:
        deviations.append(f"protocol: the trials mix protocols ({protocol})")
    seen: Counter = Counter()
    order: list[str] = []
    for r in records:
        limits = r.limits if r.limits is not None else lock.config.limits
        for msg in protocol_deviations(
            c.agent,
            None if c.model == "-" else c.model,
            r.protocol,
            r.settings,
            limits,
            custom_endpoint=custom_endpoint,
            cli_version=r.details.get("cli_version"),
        ):
            if msg not in seen:
                order.append(msg)
            seen[msg] += 1
    if not records:
        deviations.append("no finished trials")
    deviations += _count(seen, order, len(records))
    judge = _judge(c)
    mode = judge.get("mode") if judge else None
    model = judge.get("model") if judge else None
    if judge_key is None or judge is None:
        deviations.append(
            "judge: no grades (the leaderboard's grades come from the grok-4.3 judge in the public "
            "rule)"
        )
    elif not model:
        deviations.append(
            f"judge: programmatic checks only (published: the {LEADERBOARD_JUDGE_MODEL} LLM judge, "
            "whose own rubric_passed decides: --mode official)"
        )
    else:
        if mode != LEADERBOARD_JUDGE_MODE:
            deviations.append(
                f"judge mode: {mode} with decide={judge.get('decide')} (published: the judge's own "
                "rubric_passed decides: --mode official)"
            )
        if str(model).rsplit("/", 1)[-1] != LEADERBOARD_JUDGE_MODEL:
            deviations.append(f"judge model: {model} (published: {LEADERBOARD_JUDGE_MODEL})")
        if judge.get("strict_evidence"):
            deviations.append(
                "judge: --strict-evidence turns unquoted passes into fails (published: not done)"
            )
    splits = sorted({t.task_id.split("/", 1)[0] for t in c.tasks})
    if splits != [LEADERBOARD_SPLIT]:
        deviations.append(
            f"split: {', '.join(splits) or 'none'} (the leaderboard: {LEADERBOARD_SPLIT})"
        )
    n = len(c.tasks)
    if n != LEADERBOARD_MAIN_TASKS:
        deviations.append(
            f"tasks: {n} (the leaderboard: the {LEADERBOARD_MAIN_TASKS} tasks of the "
            f"{LEADERBOARD_SPLIT} split)"
        )
    missing = [t.task_id for t in c.tasks if t.missing]
    if missing:
        deviations.append(
            f"missing tasks: {len(missing)} without a scored trial, counted 0: "
            + ", ".join(missing[:10])
            + (f", … {len(missing) - 10} more" if len(missing) > 10 else "")
        )
    epochs = max((r.epoch for r in records), default=1)
    if epochs > 1:
        deviations.append(
            f"epochs: {epochs} per task, scores averaged (the leaderboard: one trial per task)"
        )
    return Comparability(
        label=c.label,
        protocol=protocol,
        cli_version=cli_version,
        published_version=published,
        judge_mode=(mode or "checks") if judge else None,
        judge_model=model,
        splits=splits,
        tasks=n,
        missing_tasks=missing,
        deviations=deviations,
    )


def comparability(data: ReportData) -> list[Comparability]:
    """One :class:`Comparability` per configuration of ``data``, in rank order."""
    return [config_comparability(c, data.judge_key) for c in data.configs]


def comparability_markdown(data: ReportData, md_text) -> list[str]:  # noqa: ANN001
    """The section's Markdown lines (``md_text`` escapes text for Markdown)."""
    lines = [f"## {TITLE}", ""]
    for v in comparability(data):
        judge = (
            "no grades" if v.judge_mode is None else f"{v.judge_mode} / {v.judge_model or 'no LLM'}"
        )
        lines.append(
            f"* **{md_text(v.label)}**: {md_text(v.verdict)}. Protocol {md_text(v.protocol)}; CLI "
            "version "
            f"{md_text(v.cli_version)} (leaderboard: {md_text(v.published_version)}); judge "
            f"{md_text(judge)}; split {md_text(', '.join(v.splits) or '-')}; {v.tasks} task(s), "
            f"{len(v.missing_tasks)} missing."
        )
        lines += [f"  * {md_text(d)}" for d in v.deviations]
    if not data.configs:
        lines.append("(no configurations)")
    return lines + [""]
