"""Plain-text outputs: ``leaderboard.md``, ``leaderboard.csv``, ``results.jsonl``,
``summary.json``."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from typing import Any

from .._markdown import md_text
from ..scoring import MACRO_LABEL, MICRO_LABEL, RATIO_FIELDS, STATE_DESCRIPTIONS, Interval
from ..tasks import PAPER_CATEGORIES
from ._build import ConfigView, ReportData
from ._comparability import comparability, comparability_markdown

PROVISIONAL_NOTE = (
    "* provisional: some trials of this configuration have no result yet (judge_error, ungraded or "
    "infra_error); their tasks count 0 until retried"
)


INTEGRITY_COLUMNS = {
    "trials_prompt_injection": "trials flagged by the judge for possible prompt injection",
    "trials_with_unreadable_files": "trials with deliverables the extractor could not read",
    "trials_with_refused_files": "trials with refused deliverable files",
    "trials_other_flags": "trials with other judge flags",
    "trials_without_sandbox": "trials without sandbox",
}
"""Integrity counts (keys of :attr:`ConfigView.integrity`, columns of ``leaderboard.csv``)
and their headings in ``leaderboard.md`` and ``report.html``."""


def pct(x: float | None, digits: int = 1) -> str:
    """A fraction as a percentage string (``0.4591`` → ``45.9``); ``–`` for None."""
    return "–" if x is None else f"{100 * x:.{digits}f}"


def ci(iv: Interval | None) -> str:
    """``[low, high]`` in percent, or empty when there is no interval."""
    if iv is None or iv.low is None or iv.high is None:
        return ""
    return f"[{100 * iv.low:.1f}, {100 * iv.high:.1f}]"


def pp(x: float | None) -> str:
    """A difference of fractions in signed percentage points."""
    return "–" if x is None else f"{100 * x:+.1f}"


def pval(p: float | None) -> str:
    """A p-value with 3 decimals (``<0.001`` below)."""
    if p is None:
        return "–"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def num(x: float | int | None, digits: int = 1) -> str:
    """A number with thousands separators; ``–`` for None."""
    if x is None:
        return "–"
    if isinstance(x, int):
        return f"{x:,}"
    return f"{x:,.{digits}f}"


def usd(x: float | None) -> str:
    return "–" if x is None else f"${x:,.4f}" if x < 1 else f"${x:,.2f}"


def ratio(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}×"


def not_scored(c: ConfigView) -> dict[str, int]:
    """Trials per state that carry no score (judge_error, unjudged, ungraded, infra_error)."""
    return {
        s: n
        for s, n in c.overall.trials_by_state.items()
        if s not in ("complete", "no_deliverable")
    }


def sandboxes_text(counts: dict[str, int]) -> str:
    """``{"bwrap": 3, "none": 1}`` → ``bwrap: 3, none: 1`` (``–`` when empty)."""
    return ", ".join(f"{k}: {n}" for k, n in counts.items()) or "–"


def pass_k_text(c: ConfigView, k: int) -> str:
    v = c.overall.pass_hat_k.get(k)
    return "–" if v is None else f"{100 * v:.1f} ({c.overall.pass_hat_k_tasks.get(k, 0)} tasks)"


def settings_text(data: ReportData) -> str:
    s = data.settings
    return (
        f"{int(100 * s['confidence'])} % percentile bootstrap over tasks, {s['n_resamples']:,} "
        "resamples, "
        f"seed {s['seed']}"
    )


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(md_text(h) for h in header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(md_text(str(c)) for c in row) + " |" for row in rows]
    return "\n".join(out)


def leaderboard_markdown(data: ReportData) -> str:
    """The leaderboard, missing tasks, categories, comparisons, cost and warnings as Markdown."""
    K = data.max_epochs
    lines = [
        "# JobBench leaderboard",
        "",
        f"Runs: {md_text(', '.join(r.name for r in data.runs))}. Judge key: "
        f"{md_text(data.judge_key or '(no grades)')}. "
        f"Generated {data.generated_at} by jobbench {data.version}.",
        "",
        f"* **{MICRO_LABEL}**: Σ over tasks of s_t × maximum / Σ maxima (the public leaderboard's "
        "overall score).",
        f"* **{MACRO_LABEL}**.",
        "* s_t = Σ passed rubric weights / Σ weights, averaged over the scored epochs of the "
        f"task; intervals: {settings_text(data)}.",
        "* A trial without a complete grade (judge_error, unjudged, ungraded, infra_error) is "
        "never counted as 0; "
        "a task with no scored epoch is *missing* and counts 0, listed below.",
        "",
    ]
    header = (
        [
            "rank",
            "configuration",
            "run",
            "micro %",
            "micro 95 % CI",
            "macro %",
            "macro 95 % CI",
            "tasks scored / total",
            "missing tasks",
            "trials not scored",
            "rubric pass %",
            "criterion pass %",
            "pass^1 %",
        ]
        + ([f"pass^{K} %"] if K > 1 else [])
        + ["agent cost", "judge cost", "wall s / trial", "turns / trial"]
    )
    rows = []
    for c in data.configs:
        o = c.overall
        ns = not_scored(c)
        star = "*" if c.provisional else ""
        rows.append(
            [
                str(c.rank),
                c.label,
                c.run.name,
                pct(o.micro.estimate) + star,
                ci(o.micro),
                pct(o.macro.estimate) + star,
                ci(o.macro),
                f"{o.tasks_scored} / {o.tasks}",
                str(o.tasks_missing),
                ", ".join(f"{n} {s}" for s, n in ns.items()) or "0",
                pct(o.rubric_pass_rate),
                pct(o.criterion_pass_rate),
                pass_k_text(c, 1),
            ]
            + ([pass_k_text(c, K)] if K > 1 else [])
            + [
                usd(c.cost.agent_cost_usd),
                usd(c.cost.judge_cost_usd),
                num(c.cost.wall_seconds_mean),
                num(c.cost.turns_mean),
            ]
        )
    lines += [_md_table(header, rows), ""]
    if any(c.provisional for c in data.configs):
        lines += [md_text(PROVISIONAL_NOTE).replace("*", "\\*", 1) + " (see Warnings).", ""]
    lines += comparability_markdown(data, md_text)

    lines += ["## Missing tasks (count 0 in micro and macro)", ""]
    any_missing = False
    for c in data.configs:
        missing = [t for t in c.tasks if t.missing]
        if missing:
            any_missing = True
            lines.append(
                f"* {md_text(c.label)}: "
                + "; ".join(f"{md_text(t.task_id)} ({md_text(t.missing_reason)})" for t in missing)
            )
    lines += (["(none)"] if not any_missing else []) + [""]

    lines += ["## Trial states", ""]
    states = list(STATE_DESCRIPTIONS)
    lines += [
        _md_table(
            ["configuration"] + [f"{s}: {STATE_DESCRIPTIONS[s]}" for s in states],
            [
                [c.label] + [str(c.overall.trials_by_state.get(s, 0)) for s in states]
                for c in data.configs
            ],
        ),
        "",
    ]

    cats = list(PAPER_CATEGORIES.values())
    for stat, label in (("micro", MICRO_LABEL), ("macro", MACRO_LABEL)):
        lines += [f"## Paper categories: {label}, % [95 % CI]", ""]
        rows = []
        for c in data.configs:
            row = [c.label]
            for cat in cats:
                agg = c.groups["paper_category"].get(cat)
                if agg:
                    iv = getattr(agg, stat)
                    row.append(f"{pct(iv.estimate)} {ci(iv)} (n={agg.tasks})")
                else:
                    row.append("–")
            rows.append(row)
        lines += [_md_table(["configuration"] + cats, rows), ""]

    lines += ["## SOC major groups: " + MICRO_LABEL + ", % (tasks)", ""]
    soc = sorted({g for c in data.configs for g in c.groups["soc_major_group"]})
    rows = [
        [c.label]
        + [
            f"{pct(c.groups['soc_major_group'][g].micro.estimate)} "
            f"({c.groups['soc_major_group'][g].tasks})"
            if g in c.groups["soc_major_group"]
            else "–"
            for g in soc
        ]
        for c in data.configs
    ]
    lines += [_md_table(["configuration"] + soc, rows), ""]

    if data.comparisons:
        lines += [
            "## Paired comparisons (A − B, percentage points; paired bootstrap over shared tasks)",
            "",
        ]
        header = [
            "A",
            "B",
            "tasks",
            "Δ micro pp",
            "95 % CI",
            "p",
            "Δ macro pp",
            "95 % CI",
            "p",
            "A wins / losses / ties",
        ] + [f"ratio {v}" for v in RATIO_FIELDS.values()]
        rows = []
        for cmp in data.comparisons:
            rows.append(
                [
                    cmp.a,
                    cmp.b,
                    str(cmp.micro.n),
                    pp(cmp.micro.difference),
                    _ci_pp(cmp.micro),
                    pval(cmp.micro.p_value),
                    pp(cmp.macro.difference),
                    _ci_pp(cmp.macro),
                    pval(cmp.macro.p_value),
                    f"{cmp.macro.wins} / {cmp.macro.losses} / {cmp.macro.ties}",
                ]
                + [ratio(cmp.ratios.get(k)) for k in RATIO_FIELDS]
            )
        lines += [_md_table(header, rows), ""]

    lines += ["## Cost and effort (agent and judge separately)", ""]
    header = [
        "configuration",
        "trials",
        "agent tokens in",
        "agent tokens out",
        "agent cost",
        "judge tokens in",
        "judge tokens out",
        "judge cost",
        "wall s total",
        "wall s / trial",
        "turns / trial",
        "trajectory events / trial",
    ]
    rows = [
        [
            c.label,
            str(c.cost.trials),
            num(c.cost.agent_input_tokens),
            num(c.cost.agent_output_tokens),
            _cost_known(c.cost.agent_cost_usd, c.cost.agent_cost_trials, c.cost.trials),
            num(c.cost.judge_input_tokens),
            num(c.cost.judge_output_tokens),
            _cost_known(c.cost.judge_cost_usd, c.cost.judge_cost_trials, c.cost.trials),
            num(c.cost.wall_seconds_total),
            num(c.cost.wall_seconds_mean),
            num(c.cost.turns_mean),
            num(c.cost.trajectory_events_mean),
        ]
        for c in data.configs
    ]
    lines += [_md_table(header, rows), ""]

    lines += ["## Integrity (check before trusting the figures)", ""]
    header = ["configuration"] + list(INTEGRITY_COLUMNS.values()) + ["trials per sandbox"]
    rows = []
    for c in data.configs:
        i = c.integrity
        rows.append(
            [c.label] + [str(i[k]) for k in INTEGRITY_COLUMNS] + [sandboxes_text(i["sandboxes"])]
        )
    lines += [_md_table(header, rows), ""]

    lines += ["## Warnings", ""] + ([f"* {md_text(w)}" for w in data.warnings] or ["(none)"]) + [""]
    return "\n".join(lines)


def _ci_pp(cmp) -> str:
    if cmp.low is None or cmp.high is None:
        return ""
    return f"[{100 * cmp.low:+.1f}, {100 * cmp.high:+.1f}]"


def _cost_known(cost: float | None, known: int, trials: int) -> str:
    if cost is None:
        return "–"
    return usd(cost) + ("" if known == trials else f" ({known} of {trials} trials priced)")


_PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _csv_safe(v: Any) -> Any:
    """Neutralise spreadsheet formulas in text cells: text starting with ``=``, ``+``,
    ``-``, ``@``, a tab or a carriage return gets a leading ``'`` unless it is a plain
    number (``-0.5``, ``+3``, ``1e-3``) or a lone ``-`` (the model of agents without one),
    which a spreadsheet does not evaluate. Non-text values are returned unchanged.
    Source: OWASP, "CSV Injection" (https://owasp.org/www-community/attacks/CSV_Injection).
    """
    if not isinstance(v, str) or v[:1] not in ("=", "+", "-", "@", "\t", "\r"):
        return v
    if v == "-" or _PLAIN_NUMBER.fullmatch(v):
        return v
    return "'" + v


def leaderboard_rows(data: ReportData) -> list[dict[str, Any]]:
    """One dict per configuration with every leaderboard figure (fractions as percentages)."""
    K = data.max_epochs
    out = []
    for c in data.configs:
        o, cost = c.overall, c.cost

        def p(x: float | None) -> float | None:
            return None if x is None else round(100 * x, 4)

        row: dict[str, Any] = {
            "rank": c.rank,
            "configuration": c.label,
            "run": c.run.name,
            "agent": c.agent,
            "model": c.model,
            "judge_key": data.judge_key,
            "micro_pct": p(o.micro.estimate),
            "micro_ci_low_pct": p(o.micro.low),
            "micro_ci_high_pct": p(o.micro.high),
            "macro_pct": p(o.macro.estimate),
            "macro_ci_low_pct": p(o.macro.low),
            "macro_ci_high_pct": p(o.macro.high),
            "macro_scored_only_pct": p(o.macro_scored_only),
            "points": round(o.points, 6),
            "max_points": round(o.max_points, 6),
            "tasks": o.tasks,
            "tasks_scored": o.tasks_scored,
            "tasks_missing": o.tasks_missing,
            "missing_tasks": ";".join(o.missing_tasks),
            "trials": o.trials,
            "provisional": c.provisional,
        }
        for s in STATE_DESCRIPTIONS:
            row[f"trials_{s}"] = o.trials_by_state.get(s, 0)
        row.update(
            {
                "criterion_judge_errors": o.judge_errors,
                "criterion_unjudged": o.unjudged,
                "rubric_pass_rate_pct": p(o.rubric_pass_rate),
                "criterion_pass_rate_pct": p(o.criterion_pass_rate),
            }
        )
        integrity = c.integrity
        row.update({k: integrity[k] for k in INTEGRITY_COLUMNS})
        for k in range(1, K + 1):
            row[f"pass_hat_{k}_pct"] = p(o.pass_hat_k.get(k))
            row[f"pass_hat_{k}_tasks"] = o.pass_hat_k_tasks.get(k, 0)
        for cat in PAPER_CATEGORIES.values():
            agg = c.groups["paper_category"].get(cat)
            key = cat.lower().replace(". ", "_").replace(".", "")  # "Bus. Fin." -> "bus_fin"
            row[f"micro_pct_{key}"] = p(agg.micro.estimate) if agg else None
            row[f"macro_pct_{key}"] = p(agg.macro.estimate) if agg else None
        row.update(
            {
                "agent_input_tokens": cost.agent_input_tokens,
                "agent_cached_input_tokens": cost.agent_cached_input_tokens,
                "agent_output_tokens": cost.agent_output_tokens,
                "agent_cost_usd": cost.agent_cost_usd,
                "agent_cost_trials": cost.agent_cost_trials,
                "judge_input_tokens": cost.judge_input_tokens,
                "judge_cached_input_tokens": cost.judge_cached_input_tokens,
                "judge_output_tokens": cost.judge_output_tokens,
                "judge_cost_usd": cost.judge_cost_usd,
                "judge_cost_trials": cost.judge_cost_trials,
                "wall_seconds_total": cost.wall_seconds_total,
                "wall_seconds_mean": cost.wall_seconds_mean,
                "turns_mean": cost.turns_mean,
                "trajectory_events_mean": cost.trajectory_events_mean,
            }
        )
        out.append(row)
    return out


def leaderboard_csv(data: ReportData) -> str:
    """:func:`leaderboard_rows` as CSV (header row first; empty cell = unknown)."""
    rows = leaderboard_rows(data)
    buf = io.StringIO()
    if not rows:
        return ""
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if v is None else _csv_safe(v)) for k, v in r.items()})
    return buf.getvalue()


JSON_SEPARATORS = (",", ":")
"""Item and key separators of ``results.jsonl`` and ``summary.json``: no spaces (the
files are for programs; a paper-scale report saves ~5 MB)."""


def results_jsonl(data: ReportData) -> str:
    """One JSON line per trial (:class:`jobbench.scoring.TrialResult` plus the task score and
    drill-down anchor; a trial imported from a Harbor job also has ``harbor``: its trial
    name, agent, agent version, per-phase timings in seconds, rewards and exception type)."""
    return "".join(results_jsonl_lines(data))


def results_jsonl_lines(data: ReportData) -> Iterator[str]:
    """The lines of :func:`results_jsonl`, one at a time, each ending in a newline."""
    for c in data.configs:
        tasks = {t.task_id: t for t in c.tasks}
        details = {lt.record.trial_id: lt.record.details or {} for lt in c.loaded}
        for t in c.trials:
            row = t.model_dump(mode="json")
            tr = tasks.get(t.task_id)
            row["task_score"] = tr.score if tr else None
            row["task_missing"] = tr.missing if tr else None
            row["anchor"] = c.task_anchor(t.task_id)
            harbor = {
                k.removeprefix("harbor_"): v
                for k, v in details.get(t.trial_id, {}).items()
                if k.startswith("harbor_")
            }
            if harbor:  # a trial imported from a Harbor job (jobbench import harbor)
                row["harbor"] = harbor
            yield json.dumps(row, ensure_ascii=False, separators=JSON_SEPARATORS) + "\n"


def summary_json(data: ReportData) -> dict[str, Any]:
    """Every aggregated figure as one JSON-able dict (fractions, not percentages)."""
    verdicts = {v.label: v.as_dict() for v in comparability(data)}
    return {
        "jobbench_version": data.version,
        "generated_at": data.generated_at,
        "runs": [
            {"name": r.name, "path": str(r.path), "epochs": r.epochs, "tasks": len(r.task_ids)}
            for r in data.runs
        ],
        "judge_key": data.judge_key,
        "definitions": {
            "micro": MICRO_LABEL,
            "macro": MACRO_LABEL,
            "bootstrap": settings_text(data),
        },
        "settings": data.settings,
        "configurations": [
            {
                "rank": c.rank,
                "label": c.label,
                "run": c.run.name,
                "agent": c.agent,
                "model": c.model,
                "anchor": c.anchor,
                "provisional": c.provisional,
                "incomplete_trials": c.incomplete_trials,
                "comparability": verdicts[c.label],
                "overall": c.overall.model_dump(mode="json"),
                "groups": {
                    k: {g: a.model_dump(mode="json") for g, a in gs.items()}
                    for k, gs in c.groups.items()
                },
                "cost": c.cost.model_dump(mode="json"),
                "integrity": c.integrity,
                "chain_breaks": c.chain_breaks,
                "tasks": [t.model_dump(mode="json") for t in c.tasks],
            }
            for c in data.configs
        ],
        "comparisons": [cmp.model_dump(mode="json") for cmp in data.comparisons],
        "warnings": data.warnings,
    }
