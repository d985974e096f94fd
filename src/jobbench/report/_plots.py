"""Figures of the HTML report, drawn with matplotlib's object API (no pyplot, no display).

Each function returns PNG bytes so the HTML can embed them as ``data:`` URIs (the heat map is
an HTML table, :func:`jobbench.report._html.heatmap_html`).
"""

from __future__ import annotations

import io

from matplotlib.figure import Figure

from ..scoring import MICRO_LABEL, chain_break_order
from ._build import ConfigView, ReportData

DPI = 100
_PALETTE = [
    "#4C72B0",
    "#DD8452",
    "#55A868",
    "#C44E52",
    "#8172B3",
    "#937860",
    "#DA8BC3",
    "#8C8C8C",
    "#CCB974",
    "#64B5CD",
]


def _colour(i: int) -> str:
    return _PALETTE[i % len(_PALETTE)]


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def _pct(x: float | None) -> float:
    return float("nan") if x is None else 100.0 * x


def category_bars(data: ReportData) -> bytes:
    """Grouped bars: micro % per paper category (plus overall) per configuration, with the
    95 % bootstrap interval as error bars."""
    from ..tasks import PAPER_CATEGORIES

    cats = ["Overall"] + list(PAPER_CATEGORIES.values())
    n = max(1, len(data.configs))
    width = 0.8 / n
    # up to 12 configurations: legend to the right; more: below in 3 columns, the figure
    # taller by its rows (at the paper's 36 a legend on the right is taller than the axes)
    below = n > 12
    rows = -(-n // 3) if below else 0
    fig = Figure(figsize=(10, 4.6 + 0.2 * rows), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    for i, c in enumerate(data.configs):
        ys, lo, hi = [], [], []
        for cat in cats:
            agg = c.overall if cat == "Overall" else c.groups["paper_category"].get(cat)
            est = agg.micro.estimate if agg else None
            ys.append(_pct(est))
            low = agg.micro.low if agg and agg.micro.low is not None else est
            high = agg.micro.high if agg and agg.micro.high is not None else est
            lo.append(0.0 if est is None else max(0.0, _pct(est) - _pct(low)))
            hi.append(0.0 if est is None else max(0.0, _pct(high) - _pct(est)))
        xs = [j + (i - (n - 1) / 2) * width for j in range(len(cats))]
        ax.bar(
            xs,
            ys,
            width=width * 0.95,
            color=_colour(i),
            label=c.label,
            yerr=[lo, hi],
            capsize=3,
            error_kw={"elinewidth": 1, "ecolor": "#333333"},
        )
    ax.set_xticks(range(len(cats)))
    ax.set_xticklabels(
        [
            f"{c}\n(no tasks)"
            if c != "Overall" and not any(c in x.groups["paper_category"] for x in data.configs)
            else c
            for c in cats
        ]
    )
    ax.set_ylim(0, 100)
    ax.set_ylabel("micro score, % (95 % CI)")
    ax.set_title("Score per paper category: " + MICRO_LABEL, fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    if data.configs and below:
        fig.legend(fontsize=8, loc="outside lower center", ncol=3)
    elif data.configs:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _png(fig)


def _cost_axis(configs: list[ConfigView]) -> tuple[str, list[float | None]]:
    costs = [
        c.cost.agent_cost_usd / c.cost.agent_cost_trials
        if c.cost.agent_cost_trials and c.cost.agent_cost_usd is not None
        else None
        for c in configs
    ]
    if configs and all(x is not None for x in costs):
        return "agent cost per trial, USD", costs
    tokens = [c.cost.agent_tokens / c.cost.trials if c.cost.trials else None for c in configs]
    if any(t for t in tokens):
        return "agent tokens per trial (cost unknown for some configurations)", tokens
    return "agent wall time per trial, s (no cost or token figures)", [
        c.cost.wall_seconds_mean for c in configs
    ]


def cost_scatter(data: ReportData) -> tuple[bytes, str]:
    """Micro % (with interval) against agent cost per trial; falls back to tokens, then wall
    time, when costs are unknown. Returns (PNG, x-axis description)."""
    label, xs = _cost_axis(data.configs)
    fig = Figure(figsize=(8, 4.6), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    for i, (c, x) in enumerate(zip(data.configs, xs)):
        m = c.overall.micro
        if x is None or m.estimate is None:
            continue
        y = _pct(m.estimate)
        yerr = [
            [max(0.0, y - _pct(m.low if m.low is not None else m.estimate))],
            [max(0.0, _pct(m.high if m.high is not None else m.estimate) - y)],
        ]
        ax.errorbar([x], [y], yerr=yerr, fmt="o", color=_colour(i), capsize=3, label=c.label)
        ax.annotate(c.label, (x, y), textcoords="offset points", xytext=(5, 5), fontsize=8)
    ax.set_xlabel(label)
    ax.set_ylabel("micro score, % (95 % CI)")
    ax.set_ylim(-2, 102)
    ax.set_xlim(left=0, right=max([x for x in xs if x is not None] + [1e-9]) * 1.25)
    ax.set_title("Score vs cost", fontsize=10)
    ax.grid(alpha=0.3)
    return _png(fig), label


def chain_break_bars(data: ReportData) -> bytes:
    """Stacked horizontal bars: for each configuration, where its failed rubric chains broke
    first (criterion 1, 2, …, a required rubric) over complete grades, and the items failed by
    trials without a deliverable (:func:`jobbench.scoring.chain_break_counts`)."""
    keys: list[str] = []
    for c in data.configs:
        for k in c.chain_breaks:
            if k not in keys:
                keys.append(k)

    keys.sort(key=chain_break_order)
    fig = Figure(figsize=(9, 1.4 + 0.45 * max(1, len(data.configs))), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    labels = [c.label for c in data.configs]
    lefts = [0] * len(labels)
    for n, k in enumerate(keys):
        vals = [c.chain_breaks.get(k, 0) for c in data.configs]
        ax.barh(labels, vals, left=lefts, color=_colour(n), label=f"first failed: {k}")
        lefts = [a + b for a, b in zip(lefts, vals)]
    if not keys:
        ax.text(
            0.5,
            0.5,
            "no failed rubric chain in complete grades",
            ha="center",
            va="center",
            transform=ax.transAxes,
        )
    ax.invert_yaxis()
    ax.set_xlabel("failed rubric items (complete and no_deliverable trials)")
    ax.set_title("Chain breaks: the first failed link of each failed rubric", fontsize=10)
    if keys:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _png(fig)
