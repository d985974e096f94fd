"""The gate report: pass/fail per gate per task, as JSON and markdown, with an exit code."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from .. import __version__
from .._io import atomic_write_json, atomic_write_text
from .._markdown import md_code, md_text
from ._findings import RULES, GateResult
from ._oracle import Consistency
from ._solve import SolveTrial

GATE_ORDER: tuple[str, ...] = (
    "validate",
    "audit",
    "lint",
    "llm",
    "decoy",
    "oracle",
    "null",
    "solve",
    "consistency",
)
"""Column order of the report."""

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INFRA = 0, 1, 2, 3
"""Exit codes: every gate passed (warnings and skips allowed); at least one gate failed;
bad input (no tasks, unreadable runs); no failure but some requested gate could not run."""

_MARK = {"pass": "pass", "warn": "warn", "fail": "**FAIL**", "skip": "–", "error": "ERROR"}


class TaskGates(BaseModel):
    """Every gate's result for one task.

    Attributes:
        task_id: ``split/occupation/taskN``.
        path: display path of the task directory.
        gates: gate name -> result.
    """

    task_id: str
    path: str
    gates: dict[str, GateResult] = Field(default_factory=dict)

    @property
    def status(self) -> str:
        """Worst status over gates: fail > error > warn > pass > skip."""
        order = ["fail", "error", "warn", "pass", "skip"]
        st = [g.status for g in self.gates.values()] or ["skip"]
        return min(st, key=order.index)


class GateReport(BaseModel):
    """The whole report.

    Attributes:
        created_at: ISO 8601 UTC.
        harness_version: jobbench version.
        dataset: display path of the dataset given.
        gates: the gates that were requested.
        strict: warnings counted as failures.
        tasks: per-task results, sorted by task id.
        solve: the solve-trial result, when runs were given.
        consistency: self-consistency, when computed.
        notes: dataset-level messages (e.g. why a requested gate could not run).
    """

    created_at: str = Field(
        default_factory=lambda: _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    )
    harness_version: str = __version__
    dataset: str
    gates: list[str]
    strict: bool = False
    tasks: list[TaskGates] = Field(default_factory=list)
    solve: SolveTrial | None = None
    consistency: Consistency | None = None
    notes: list[str] = Field(default_factory=list)

    def counts(self) -> dict[str, dict[str, int]]:
        """gate -> status -> number of tasks."""
        out: dict[str, dict[str, int]] = {}
        for t in self.tasks:
            for name, g in t.gates.items():
                out.setdefault(name, {}).setdefault(g.status, 0)
                out[name][g.status] += 1
        return out

    @property
    def exit_code(self) -> int:
        """:data:`EXIT_FAIL` if any gate failed, else :data:`EXIT_INFRA` if any gate could
        not run, else :data:`EXIT_OK` (also :data:`EXIT_USAGE` when there is no task)."""
        statuses = {g.status for t in self.tasks for g in t.gates.values()}
        if not self.tasks:
            return EXIT_USAGE
        if "fail" in statuses:
            return EXIT_FAIL
        if "error" in statuses:
            return EXIT_INFRA
        return EXIT_OK

    def to_json_dict(self) -> dict[str, Any]:
        """JSON-ready dict (the report model plus ``status`` per task, ``counts`` and
        ``exit_code``)."""
        data = self.model_dump(mode="json")
        for t, td in zip(self.tasks, data["tasks"]):
            td["status"] = t.status
        data["counts"] = self.counts()
        data["exit_code"] = self.exit_code
        return data


_RESULT_WORDS = {EXIT_FAIL: "FAIL", EXIT_INFRA: "ERROR", EXIT_OK: "PASS"}
"""The word of a gate report's result line for its exit code (other codes: "NO TASKS")."""


def _cell(text: str) -> str:
    return md_text(text)


def render_markdown(report: GateReport, *, max_findings: int = 200) -> str:
    """The report as markdown: summary table (tasks × gates), dataset figures, then the
    findings per task (errors first) with rule ids and fix hints."""
    gates = [g for g in GATE_ORDER if g in report.gates or any(g in t.gates for t in report.tasks)]
    n_fail = sum(1 for t in report.tasks if t.status == "fail")
    lines = [
        "# JobBench gate report",
        "",
        f"Dataset {md_code(report.dataset)} · {len(report.tasks)} task(s)"
        f" · gates: {', '.join(gates)}"
        + (" · strict" if report.strict else "")
        + f" · jobbench {report.harness_version} · {report.created_at}",
        "",
        f"**Result: {_RESULT_WORDS.get(report.exit_code, 'NO TASKS')}**"
        f" ({n_fail} task(s) failing, exit code {report.exit_code})",
        "",
    ]
    for note in report.notes:
        lines.append(f"> {note}")
    if report.notes:
        lines.append("")
    lines += ["| task | " + " | ".join(gates) + " |", "|---|" + "---|" * len(gates)]
    for t in report.tasks:
        row = [_MARK[t.gates[g].status] if g in t.gates else "" for g in gates]
        lines.append(f"| {_cell(t.task_id)} | " + " | ".join(row) + " |")
    lines.append("")
    if report.solve is not None:
        s = report.solve
        lines += ["## Solve trial", ""]
        if s.reachability is not None:
            lines.append(
                f"Dataset reachability {s.reachability:.1%} (Σ reached / Σ criteria; mean of tasks "
                f"{s.mean_task_reachability:.1%}) over runs {', '.join(s.runs)}, judge "
                f"{md_code(s.judge_key)}; "
                f"{len(s.flagged)} task(s) under {s.threshold:.0%}."
            )
        else:
            lines.append("No counted graded trial.")
        if s.judge_key_note:
            lines += ["", f"Note: {md_text(s.judge_key_note)}."]
        lines += [
            "",
            "| task | reached | criteria | reachability | trials |",
            "|---|---|---|---|---|",
        ]
        for tr in s.tasks:
            lines.append(
                f"| {tr.task_id} | {tr.reached} | {tr.criteria} | {tr.reachability:.1%}"
                f"{' **<' + format(s.threshold, '.0%') + '**' if tr.flagged else ''}"
                f" | {tr.trials} |"
            )
        if s.unattempted:
            lines += ["", f"Not attempted: {', '.join(s.unattempted)}."]
        lines.append("")
    if report.consistency is not None and report.consistency.flip_rate is not None:
        c = report.consistency
        lines += [
            "## Judge self-consistency",
            "",
            f"Verdict flip rate {c.flip_rate:.2%} over {c.repeats} gradings.",
            "",
        ]
    # a gate that could not run for the same reason on every task is reported once
    common: dict[str, str] = {}
    for g in gates:
        ran = [t.gates[g] for t in report.tasks if g in t.gates]
        reasons = {r.reason for r in ran if r.status == "error"}
        if ran and len(reasons) == 1 and all(r.status == "error" for r in ran):
            common[g] = reasons.pop()
    if common:
        lines += ["## Gates that could not run", ""]
        lines += [f"- {md_code(g)}: {_cell(reason)}" for g, reason in common.items()]
        lines.append("")
    lines += ["## Findings", ""]
    shown = 0
    for t in report.tasks:
        found = [f for g in gates if g in t.gates for f in t.gates[g].findings]
        errored = [
            (g, t.gates[g])
            for g in gates
            if g in t.gates and t.gates[g].status == "error" and g not in common
        ]
        if not found and not errored:
            continue
        lines += [f"### {t.task_id} ({t.status})", ""]
        for g, res in errored:
            lines.append(f"- {md_code(g)} could not run: {_cell(res.reason)}")
        for f in sorted(found, key=lambda f: {"error": 0, "warning": 1, "info": 2}[f.severity]):
            if shown >= max_findings:
                break
            rule = RULES.get(f.rule)
            name = f" {rule.name}" if rule else ""
            loc = f.file or ""
            if f.where and not loc.endswith(f.where):
                loc = f"{loc}: {f.where}" if loc else f.where
            lines.append(f"- **{f.rule}**{name} ({f.severity}) {md_code(loc)}: {_cell(f.message)}")
            if f.hint and f.severity != "info":
                lines.append(f"  - fix: {_cell(f.hint)}")
            shown += 1
        lines.append("")
    if shown >= max_findings:
        lines += [f"(findings cut at {max_findings}; the JSON report has them all)", ""]
    return "\n".join(lines)


def write_gate_report(report: GateReport, out_dir: Path) -> tuple[Path, Path]:
    """Write ``gates.json`` and ``gates.md`` into ``out_dir`` (atomically).

    Returns:
        (markdown path, JSON path).
    """
    out_dir = Path(out_dir)
    md, js = out_dir / "gates.md", out_dir / "gates.json"
    atomic_write_json(js, report.to_json_dict())
    atomic_write_text(md, render_markdown(report, max_findings=10_000))
    return md, js
