"""Terminal tables (rich) for a built report: the leaderboard and the task × configuration
score table. Used by ``jobbench report`` and at the end of ``jobbench run``."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ._build import ReportData
from ._tables import PROVISIONAL_NOTE, ci, pct


def leaderboard_table(data: ReportData) -> Table:
    """One row per configuration: rank, micro and macro (%) with 95 % intervals, tasks
    scored / total, missing tasks, trials not scored."""
    table = Table(title=f"JobBench leaderboard (judge key: {data.judge_key or 'none'})")
    for col in (
        "rank",
        "configuration",
        "micro %",
        "95 % CI",
        "macro %",
        "95 % CI",
        "tasks scored",
        "missing",
        "trials not scored",
    ):
        table.add_column(col, justify="left" if col == "configuration" else "right")
    for c in data.configs:
        o = c.overall
        not_scored = sum(
            n for s, n in o.trials_by_state.items() if s not in ("complete", "no_deliverable")
        )
        star = "*" if c.provisional else ""
        table.add_row(
            str(c.rank),
            escape(c.label),
            pct(o.micro.estimate) + star,
            ci(o.micro),
            pct(o.macro.estimate) + star,
            ci(o.macro),
            f"{o.tasks_scored}/{o.tasks}",
            str(o.tasks_missing),
            str(not_scored),
        )
    if any(c.provisional for c in data.configs):
        table.caption = PROVISIONAL_NOTE
    return table


def task_table(data: ReportData) -> Table:
    """Task score s_t (%) per task (rows) and configuration (columns); a task with no scored
    trial shows its reason (e.g. ``missing: 1 judge_error``)."""
    table = Table(title="Task scores s_t (%)")
    table.add_column("task")
    for c in data.configs:
        table.add_column(escape(c.label), justify="right")
    for task_id in data.task_ids:
        row = [escape(task_id)]
        for c in data.configs:
            r = c.task(task_id)
            if r is None:
                row.append("–")
            elif r.score is None:
                row.append(f"missing: {escape(r.missing_reason or '?')}")
            else:
                row.append(pct(r.score))
        table.add_row(*row)
    return table


def print_summary(data: ReportData, console: Console | None = None, *, tasks: bool = True) -> None:
    """Print the task table (optional), the leaderboard and the definitions line."""
    console = console or Console()
    if tasks:
        console.print(task_table(data))
    console.print(leaderboard_table(data))
    console.print(
        "micro = Σ points / Σ maxima, macro = mean of task scores; missing tasks count 0 in both."
    )
