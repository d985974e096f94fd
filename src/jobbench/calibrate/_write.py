"""Writing a :class:`CalibrationReport`: ``calibration.json``, ``calibration.md`` and
``cost_vs_agreement.png`` (matplotlib object API, no display needed)."""

from __future__ import annotations

import io
from pathlib import Path

from .._io import atomic_write_bytes, atomic_write_text
from .._markdown import md_text
from ._analysis import CalibrationReport, JudgeSummary

JSON_FILE = "calibration.json"
MD_FILE = "calibration.md"
PLOT_FILE = "cost_vs_agreement.png"


def _f(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _pct(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None else f"{100 * x:.{digits}f} %"


def _pp(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f} pp"


def _usd(x: float | None) -> str:
    return "unknown" if x is None else f"${x:.4f}"


def _cell(text: str | None, limit: int = 300) -> str:
    """Untrusted text (reasoning, evidence, check details, criterion texts) for one Markdown
    table cell or list item: one line, cut to ``limit`` characters, HTML escaped (Markdown
    viewers render raw HTML) and with table pipes escaped."""
    s = " ".join((text or "").split())
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return md_text(s) or "—"


def plot_axes(
    report: CalibrationReport,
) -> tuple[str, str, list[tuple[str, float | None, float | None]]]:
    """What the plot shows: (x label, y label, [(judge key, x, y)]).

    x is the cost of one full grading pass in USD when every judge's cost is known, else its
    tokens. y is accuracy against expected verdicts when every judge was measured against
    them, else percent agreement with the reference judge (1 for the reference itself).
    """
    judges = report.judges
    if all(j.cost_per_pass_usd is not None for j in judges):
        xlabel = "judge cost per full grading pass, USD"
        xs = {j.key: j.cost_per_pass_usd for j in judges}
    else:
        xlabel = "judge tokens per full grading pass (cost unknown for some judges)"
        xs = {j.key: float(j.tokens_per_pass) for j in judges}
    exp = {e.judge: e.accuracy for e in report.expected}
    if report.expected and all(exp.get(j.key) is not None for j in judges):
        ylabel = "accuracy against expected verdicts"
        ys = dict(exp)
    else:
        ylabel = f"percent agreement with {report.reference}"
        ys = {report.reference: 1.0} if report.reference else {}
        for p in report.pairs:
            if p.b == report.reference:
                ys[p.a] = p.percent_agreement
    return xlabel, ylabel, [(j.key, xs.get(j.key), ys.get(j.key)) for j in judges]


def plot_cost_vs_agreement(report: CalibrationReport) -> bytes:
    """PNG bytes: one point per judge, x = cost (or tokens) per full pass, y = accuracy or
    agreement (see :func:`plot_axes`); judges lacking a value are named in a footnote."""
    from matplotlib.figure import Figure

    xlabel, ylabel, pts = plot_axes(report)
    fig = Figure(figsize=(7, 4.5), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    shown = [(k, x, y) for k, x, y in pts if x is not None and y is not None]
    missing = [k for k, x, y in pts if x is None or y is None]
    for i, (k, x, y) in enumerate(shown):
        marker = "*" if k == report.reference else "o"
        ax.scatter(
            [x],
            [100 * y],
            s=120 if marker == "*" else 60,
            marker=marker,
            zorder=3,
            color=f"C{i % 10}",
            label=k + (" (reference)" if k == report.reference else ""),
        )
        ax.annotate(k, (x, 100 * y), textcoords="offset points", xytext=(6, 6), fontsize=8)
    xs = [x for _, x, _ in shown]
    if xs and min(xs) > 0 and max(xs) / min(xs) > 50:
        ax.set_xscale("log")
    ax.margins(x=0.2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel + ", %")
    lo = min([100 * y for _, _, y in shown], default=0.0)
    ax.set_ylim(max(0.0, min(lo - 5, 90.0)), 101)
    ax.grid(alpha=0.3)
    ax.set_title("Judge cost vs agreement", fontsize=11)
    if shown:
        ax.legend(fontsize=8, loc="lower right")
    if missing:
        fig.text(0.01, 0.01, "not plotted (no value): " + ", ".join(missing), fontsize=7)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def _judge_rows(judges: list[JudgeSummary]) -> list[str]:
    out = [
        "| judge | model | mode | decide | trials | criteria decided | undecided | pass rate "
        "| calls / pass | tokens / pass | cost / pass | cached units |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for j in judges:
        out.append(
            f"| {j.key} | {_cell(j.model)} | {_cell(j.mode)} | {_cell(j.decide)} "
            f"| {j.trials} | {j.decided} "
            f"| {j.undecided} | {_pct(j.pass_rate)} | {j.calls_per_pass} | {j.tokens_per_pass:,} "
            f"| {_usd(j.cost_per_pass_usd)} | {j.cached_units} |"
        )
    return out


def render_markdown(report: CalibrationReport, *, max_flips: int = 50) -> str:
    """The report as Markdown (tables; flips and errors listed up to ``max_flips`` each)."""
    L: list[str] = ["# Judge calibration", ""]
    L.append(
        f"Created {report.created_at}. Reference judge: **{report.reference}**. "
        f"Full pass = the {report.judges[0].pass_trials if report.judges else 0} trial(s) "
        "graded by every judge."
    )
    src = report.sources
    if src:
        L.append("")
        for k, v in src.items():
            L.append(f"- {k}: {', '.join(map(str, v)) if isinstance(v, list) else v}")
    if report.warnings:
        L += ["", "**Warnings**", ""] + [f"- {w}" for w in report.warnings]
    L += ["", "## Judges and cost per full grading pass", ""] + _judge_rows(report.judges)

    if report.expected:
        L += [
            "",
            "## Against expected verdicts (`pass` = positive class)",
            "",
            "| judge | sets | criteria | undecided | accuracy | precision | recall | F1 "
            "| TP | FP | FN | TN | mean abs Δ s_t | micro judge | micro expected | Δ micro |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
            "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for e in report.expected:
            L.append(
                f"| {e.judge} | {e.sets} | {e.criteria} | {e.undecided} | {_f(e.accuracy)} "
                f"| {_f(e.precision)} | {_f(e.recall)} | {_f(e.f1)} "
                f"| {e.tp} | {e.fp} | {e.fn} | {e.tn} | {_f(e.score.mean_abs_diff)} "
                f"| {_pct(e.score.micro_a)} | {_pct(e.score.micro_b)} "
                f"| {_pp(e.score.micro_abs_diff)} |"
            )
        L += [
            "",
            "Per deliverable set (accuracy; score / expected score):",
            "",
            "| set | " + " | ".join(e.judge for e in report.expected) + " |",
            "| --- |" + " ---: |" * len(report.expected),
        ]
        rows: dict[str, list[str]] = {}
        for i, e in enumerate(report.expected):
            for t in e.per_trial:
                rows.setdefault(t.trial_id, ["—"] * len(report.expected))[i] = (
                    f"{_f(t.accuracy)} ({_f(t.score, 2)} / {_f(t.expected_score, 2)})"
                )
        for tid, cells in sorted(rows.items()):
            L.append(f"| {_cell(tid, 1000)} | " + " | ".join(cells) + " |")
        for e in report.expected:
            if e.errors:
                L += [
                    "",
                    f"Wrong or undecided verdicts of **{e.judge}** ({len(e.errors)}):",
                    "",
                    "| set | rubric.criterion | criterion | expected | verdict | reasoning |",
                    "| --- | --- | --- | --- | --- | --- |",
                ]
                for err in e.errors[:max_flips]:
                    L.append(
                        f"| {_cell(err.trial_id, 1000)} | {err.rubric}.{err.criterion} "
                        f"| {_cell(err.criterion_text, 160)} "
                        f"| {'pass' if err.expected else 'fail'} | {err.verdict} "
                        f"| {_cell(err.reasoning)} |"
                    )
                if len(e.errors) > max_flips:
                    L.append(
                        f"| … {len(e.errors) - max_flips} more in calibration.json | | | | | |"
                    )

    if report.pairs:
        L += [
            "",
            "## Agreement between judges (per criterion)",
            "",
            "| judge a | judge b | criteria | agree | percent agreement | Cohen's κ "
            "| Krippendorff's α | a pass/b fail | a fail/b pass | undecided a | undecided b |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for p in report.pairs:
            L.append(
                f"| {p.a} | {p.b} | {p.criteria_both} | {p.agree} "
                f"| {_pct(p.percent_agreement)} | {_f(p.kappa)} "
                f"| {_f(p.alpha)} | {p.table.get('pass/fail', 0)} | {p.table.get('fail/pass', 0)} "
                f"| {p.undecided_a} | {p.undecided_b} |"
            )
        o = report.overall
        if len(o.judges) > 2:
            L += [
                "",
                f"All {len(o.judges)} judges: Krippendorff's α = {_f(o.alpha)} "
                f"over {o.units} criteria; "
                f"all agree on {_pct(o.all_agree)}.",
            ]
        L += [
            "",
            "## Score deviation",
            "",
            "| judge a | judge b | trials | mean abs Δ s_t | max abs Δ s_t | micro a | micro b "
            "| Δ micro | Δ micro (relative) |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for p in report.pairs:
            s = p.score
            L.append(
                f"| {p.a} | {p.b} | {s.trials} | {_f(s.mean_abs_diff)} | {_f(s.max_abs_diff)} "
                f"| {_pct(s.micro_a, 2)} "
                f"| {_pct(s.micro_b, 2)} | {_pp(s.micro_abs_diff)} | {_pct(s.micro_rel_diff, 2)} |"
            )
        for p in report.pairs:
            if p.score.per_task:
                L += [
                    "",
                    f"Per task, {p.a} vs {p.b}:",
                    "",
                    "| task | trials | s_t a | s_t b | mean abs Δ |",
                    "| --- | ---: | ---: | ---: | ---: |",
                ]
                for dev in p.score.per_task:
                    L.append(
                        f"| {_cell(dev.task_id, 1000)} | {dev.trials} | {_f(dev.score_a)} "
                        f"| {_f(dev.score_b)} | {_f(dev.mean_abs_diff)} |"
                    )

    if report.flips:
        keys = [j.key for j in report.judges]
        L += ["", f"## Verdict flips ({len(report.flips)} listed)", ""]
        for fl in report.flips[:max_flips]:
            exp = "" if fl.expected is None else f" (expected: {'pass' if fl.expected else 'fail'})"
            L.append(
                f"- **{_cell(fl.trial_id, 1000)}** rubric {fl.rubric}, "
                f"criterion {fl.criterion}{exp}: {_cell(fl.criterion_text, 200)}"
            )
            for k in keys:
                v = fl.verdicts.get(k)
                if v is not None:
                    L.append(f"  - {k}: **{v.verdict}** ({v.source}): {_cell(v.reasoning)}")
        if len(report.flips) > max_flips:
            L.append(f"- … {len(report.flips) - max_flips} more in calibration.json")

    if report.checks_vs_llm:
        L += [
            "",
            "## Programmatic checks vs LLM (same criteria, `second_opinion`)",
            "",
            "| judge | criteria | agree | percent agreement | Cohen's κ "
            "| check pass/LLM fail | check fail/LLM pass | undecided |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for c in report.checks_vs_llm:
            L.append(
                f"| {c.judge} | {c.n} | {c.agree} | {_pct(c.percent_agreement)} | {_f(c.kappa)} "
                f"| {c.table.get('pass/fail', 0)} | {c.table.get('fail/pass', 0)} | {c.undecided} |"
            )
        if any(c.disagreements for c in report.checks_vs_llm):
            L.append("")
        for c in report.checks_vs_llm:
            for d in c.disagreements[:max_flips]:
                L.append(
                    f"- {c.judge} {_cell(d.trial_id, 1000)} rubric {d.rubric}, "
                    f"criterion {d.criterion}: check **{_cell(d.check_verdict)}** "
                    f"({_cell(d.check_detail, 160)}), LLM **{_cell(d.llm_verdict)}** "
                    f"({_cell(d.llm_reasoning, 200)})"
                )

    L += ["", f"![cost vs agreement]({PLOT_FILE})", ""]
    return "\n".join(L)


def write_calibration(
    report: CalibrationReport, out_dir: Path, *, max_flips: int = 50
) -> dict[str, Path]:
    """Write ``calibration.json``, ``calibration.md`` and ``cost_vs_agreement.png`` (atomically).

    Returns:
        ``{"json": path, "markdown": path, "plot": path}``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / JSON_FILE, "markdown": out / MD_FILE, "plot": out / PLOT_FILE}
    atomic_write_text(paths["json"], report.model_dump_json(indent=2) + "\n")
    atomic_write_text(paths["markdown"], render_markdown(report, max_flips=max_flips))
    atomic_write_bytes(paths["plot"], plot_cost_vs_agreement(report))
    return paths
