"""Figures of the selection stage (matplotlib, headless).

Each function writes one image atomically; the format follows the file suffix (``.png``,
``.svg``, ``.pdf``). Point sets carry matplotlib ``gid``s (``zone-green_light``,
``group-13``, ``selected``, ``attention-papers`` …) so SVG output can be inspected.
"""

from __future__ import annotations

import io
import math
from pathlib import Path

from .._io import atomic_write_bytes
from ._attention import AttentionResult, Capability, OccupationAttention
from ._select import OccupationStats
from ._workbank import ZONE_CUT, TaskRating, Zone

ZONE_COLOURS = {
    Zone.green_light: "#2e7d32",
    Zone.red_light: "#c62828",
    Zone.rnd_opportunity: "#1565c0",
    Zone.low_priority: "#757575",
}


def _figure(*args, **kwargs):
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt, plt.subplots(*args, **kwargs)


def _save(plt, fig, path: Path) -> Path:
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower() or "png"
    buf = io.BytesIO()
    fig.savefig(
        buf,
        format=fmt,
        dpi=150,
        bbox_inches="tight",
        metadata={"Software": None} if fmt == "png" else None,
    )
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())
    return path


def plot_desire_capability(
    tasks: list[TaskRating], path: Path | str, highlight: set[str] | None = None
) -> Path:
    """Scatter of per-task mean worker desire (x) against mean expert capability (y), with
    WORKBank's four zones shaded at the 3.0 cut and their task counts.

    Args:
        tasks: :func:`jobbench.selection.task_ratings` output.
        path: output image.
        highlight: occupation titles whose tasks are drawn with a black edge (e.g. the
            JobBench occupations).

    Returns:
        ``path``.
    """
    plt, (fig, ax) = _figure(figsize=(7, 6))
    quadrants = {
        Zone.green_light: ((ZONE_CUT, 5.1), (ZONE_CUT, 5.1)),
        Zone.red_light: ((0.9, ZONE_CUT), (ZONE_CUT, 5.1)),
        Zone.rnd_opportunity: ((ZONE_CUT, 5.1), (0.9, ZONE_CUT)),
        Zone.low_priority: ((0.9, ZONE_CUT), (0.9, ZONE_CUT)),
    }
    counts = {z: sum(t.zone == z for t in tasks) for z in Zone}
    for z, ((x0, x1), (y0, y1)) in quadrants.items():
        ax.add_patch(
            plt.Rectangle((x0, y0), x1 - x0, y1 - y0, color=ZONE_COLOURS[z], alpha=0.08, lw=0)
        )
        ax.text(
            x0 + 0.05 if x0 < ZONE_CUT else x1 - 0.05,
            y1 - 0.08 if y0 >= ZONE_CUT else y0 + 0.08,
            f"{z.value}: {counts[z]}",
            ha="left" if x0 < ZONE_CUT else "right",
            va="top" if y0 >= ZONE_CUT else "bottom",
            color=ZONE_COLOURS[z],
            fontsize=10,
            weight="bold",
        )
    for z in Zone:
        pts = [t for t in tasks if t.zone == z]
        ax.scatter(
            [t.desire for t in pts],
            [t.capability for t in pts],
            s=14,
            color=ZONE_COLOURS[z],
            alpha=0.55,
            lw=0,
            gid=f"zone-{z.name}",
        )
    if highlight:
        pts = [t for t in tasks if t.occupation in highlight]
        ax.scatter(
            [t.desire for t in pts],
            [t.capability for t in pts],
            s=16,
            facecolors="none",
            edgecolors="black",
            lw=0.6,
            label=f"tasks of the {len(highlight)} highlighted occupations",
            gid="highlight",
        )
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), fontsize=8, frameon=False)
    ax.axvline(ZONE_CUT, color="black", lw=0.8)
    ax.axhline(ZONE_CUT, color="black", lw=0.8)
    ax.set_xlim(0.9, 5.1)
    ax.set_ylim(0.9, 5.1)
    ax.set_xlabel("worker automation desire (task mean, 1–5)")
    ax.set_ylabel("expert-rated AI capability (task mean, 1–5)")
    ax.set_title(f"WORKBank desire vs capability ({len(tasks)} tasks)")
    return _save(plt, fig, Path(path))


def plot_exposure_desire(
    table: list[OccupationStats],
    path: Path | str,
    selected: set[str] | None = None,
    marked: set[str] | None = None,
    marked_label: str = "JobBench",
) -> Path:
    """Occupation mean desire (y) against economic exposure (x, log scale, US$ billions per
    year), coloured by SOC major group; ``selected`` occupations circled, ``marked`` ones
    (e.g. JobBench's) crossed. Occupations without exposure are left out.

    Returns:
        ``path``.
    """
    plt, (fig, ax) = _figure(figsize=(9, 6))
    rows = [o for o in table if o.exposure]
    groups = sorted({o.soc_major_code for o in rows})
    cmap = plt.get_cmap("tab20")
    for i, g in enumerate(groups):
        pts = [o for o in rows if o.soc_major_code == g]
        title = pts[0].soc_major_title.replace(" Occupations", "")
        ax.scatter(
            [(o.exposure or 0.0) / 1e9 for o in pts],
            [o.desire_mean for o in pts],
            s=28,
            color=cmap(i % 20),
            label=f"{g[:2]} {title}",
            alpha=0.85,
            gid=f"group-{g[:2]}",
        )
    if selected:
        pts = [o for o in rows if o.occupation in selected]
        ax.scatter(
            [(o.exposure or 0.0) / 1e9 for o in pts],
            [o.desire_mean for o in pts],
            s=90,
            facecolors="none",
            edgecolors="black",
            lw=0.8,
            label=f"selected ({len(pts)})",
            gid="selected",
        )
    if marked:
        pts = [o for o in rows if o.occupation in marked]
        ax.scatter(
            [(o.exposure or 0.0) / 1e9 for o in pts],
            [o.desire_mean for o in pts],
            s=30,
            marker="x",
            color="black",
            lw=0.8,
            label=f"{marked_label} ({len(pts)})",
            gid="marked",
        )
    ax.axhline(ZONE_CUT, color="black", lw=0.6, ls="--")
    ax.set_xscale("log")
    ax.set_xlabel("economic exposure = employment × mean wage (US$ billions per year, log scale)")
    ax.set_ylabel("occupation mean desire (mean of task means)")
    ax.set_title(f"Exposure vs desire by SOC major group ({len(rows)} occupations)")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    return _save(plt, fig, Path(path))


def plot_attention(
    result: AttentionResult,
    capability: Capability,
    attention: list[OccupationAttention],
    path: Path | str,
) -> Path:
    """Two panels: capability per occupation (x, percent) against distinct arXiv papers and
    distinct YC companies (y), with Pearson and Spearman r and their bootstrap intervals.

    Returns:
        ``path``.
    """
    plt, (fig, axes) = _figure(1, 2, figsize=(11, 4.5))
    by_slug = {a.slug: a for a in attention}
    x = [capability.scores[s] for s in result.slugs]
    for ax, target, name in (
        (axes[0], "papers", "arXiv papers"),
        (axes[1], "companies", "YC companies"),
    ):
        y = [getattr(by_slug[s], target) for s in result.slugs]
        ax.scatter(x, y, s=22, color="#1565c0", gid=f"attention-{target}")
        corr = getattr(result, target)
        p, s = corr["pearson"], corr["spearman"]

        def fmt(c) -> str:
            return "n/a" if math.isnan(c.r) else f"{c.r:+.2f} [{c.low:+.2f}, {c.high:+.2f}]"

        ax.set_title(f"{name}: Pearson {fmt(p)}\nSpearman {fmt(s)}", fontsize=9)
        ax.set_xlabel(f"capability per occupation (%), {result.label}", fontsize=8)
        ax.set_ylabel(f"distinct {name} mapped to the occupation's tasks", fontsize=8)
    fig.suptitle(
        f"Attention vs capability ({len(result.slugs)} occupations; public WORKBank mappings)",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    return _save(plt, fig, Path(path))
