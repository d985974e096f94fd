"""Terminal tables (rich) for a built report: the leaderboard and the task × configuration
score table. Used by ``jobbench report`` and at the end of ``jobbench run``."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ._build import ReportData
from ._tables import PROVISIONAL_NOTE, ci, pct


def _value_ci(value: str, interval: str) -> str:
    # the interval goes on its own line, so the column stays narrow (80-column terminals, CI logs)
    return f"{value}\n{interval}" if interval else value


def leaderboard_table(data: ReportData) -> Table:
    """One row per configuration: rank, micro and macro (%) each with its 95 % interval
    below it, tasks scored / total, missing tasks, trials not scored. Fits 80 columns (the
    width Rich assumes when output is piped) for labels up to ~13 characters; longer labels
    and the intervals wrap, never cut."""
    table = Table(
        title=f"JobBench leaderboard (judge key: {data.judge_key or 'none'})", box=box.SIMPLE_HEAD
    )
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("configuration", overflow="fold", min_width=len("configuration"))
    for col in ("micro %\n95 % CI", "macro %\n95 % CI"):
        table.add_column(col, justify="right")
    for col in ("tasks\nscored", "tasks\nmissing", "trials\nunscored"):
        table.add_column(col, justify="right", no_wrap=True)
    for c in data.configs:
        o = c.overall
        not_scored = sum(
            n for s, n in o.trials_by_state.items() if s not in ("complete", "no_deliverable")
        )
        star = "*" if c.provisional else ""
        table.add_row(
            str(c.rank),
            escape(c.label),
            _value_ci(pct(o.micro.estimate) + star, ci(o.micro)),
            _value_ci(pct(o.macro.estimate) + star, ci(o.macro)),
            f"{o.tasks_scored}/{o.tasks}",
            str(o.tasks_missing),
            str(not_scored),
        )
    if any(c.provisional for c in data.configs):
        table.caption = PROVISIONAL_NOTE
    return table


def _task_cells(data: ReportData, task_id: str) -> list[str]:
    """The task's s_t (%) per configuration, ``–`` when absent, or why it is missing."""
    row = []
    for c in data.configs:
        r = c.task(task_id)
        if r is None:
            row.append("–")
        elif r.score is None:
            row.append(f"missing: {r.missing_reason or '?'}")
        else:
            row.append(pct(r.score))
    return row


def task_table(data: ReportData) -> Table:
    """Task score s_t (%) per task (rows) and configuration (columns); a task with no scored
    trial shows its reason (e.g. ``missing: 1 judge_error``)."""
    table = Table(title="Task scores s_t (%)", box=box.SIMPLE_HEAD)
    table.add_column("task", overflow="fold")
    for c in data.configs:
        table.add_column(escape(c.label), justify="right", overflow="fold")
    for task_id in data.task_ids:
        table.add_row(escape(task_id), *(escape(x) for x in _task_cells(data, task_id)))
    return table


def task_lines(data: ReportData) -> list[str]:
    """The task table as lines, one per task (``<task>: <config> <s_t>, …``), for a console
    too narrow for the table (a task id is never cut or folded)."""
    return [
        f"{task_id}: "
        + ", ".join(f"{c.label} {x}" for c, x in zip(data.configs, _task_cells(data, task_id)))
        for task_id in data.task_ids
    ]


def _table_fits(data: ReportData, width: int) -> bool:
    longest = max((len(t) for t in data.task_ids), default=0)
    columns = sum(max(len(c.label), 6) + 3 for c in data.configs)
    return longest + columns + 4 <= width


def print_summary(data: ReportData, console: Console | None = None, *, tasks: bool = True) -> None:
    """Print the task table (optional), the leaderboard and the definitions line."""
    console = console or Console()
    if tasks and _table_fits(data, console.width):
        console.print(task_table(data))
    elif tasks:
        console.print("Task scores s_t (%)", highlight=False)
        for line in task_lines(data):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    console.print(leaderboard_table(data))
    console.print(
        "micro = Σ points / Σ maxima, macro = mean of task scores; missing tasks count 0 in both."
    )
