"""``report.html`` and its drill-down pages (jinja2 templates, inline CSS, PNGs as data URIs).

Layout: ``report.html`` holds the leaderboard, figures and tables. The drill-downs (every
trial's rubric items, criteria, verdicts, reasoning and evidence) are either part of it
(*inline*) or written as one static page per task under ``drilldowns/`` (*pages*,
:func:`page_name`), each showing every configuration that ran the task; ``auto`` picks pages
when the drill-downs would add more than :data:`AUTO_INLINE_MAX_BYTES` to the page.

No page loads anything: a Content-Security-Policy forbids every network fetch and script,
and all text that comes from deliverables (reasoning, evidence) or from run files is escaped
by jinja2's autoescaping.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from html import escape
from pathlib import Path
from typing import Any, Literal

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from ..scoring import (
    MACRO_LABEL,
    MICRO_LABEL,
    RATIO_FIELDS,
    STATE_DESCRIPTIONS,
    chain_break_order,
)
from ..tasks import PAPER_CATEGORIES, occupation_for, soc_major_groups
from . import _drill, _tables
from ._build import ConfigView, ReportData, anchor_slug, task_slug
from ._comparability import comparability
from ._drill import drill_plan
from ._runs import TEXT_CAP, TextStats

DrilldownMode = Literal["inline", "pages", "auto"]
DRILLDOWN_MODES = ("inline", "pages", "auto")
DRILLDOWN_DIR = "drilldowns"
"""Directory (inside the report directory) of the per-task drill-down pages."""
AUTO_INLINE_MAX_BYTES = 5_000_000
"""``auto`` keeps the drill-downs inside ``report.html`` up to this estimated size (bytes of
HTML, :func:`estimate_drilldown_bytes`); above, it writes per-task pages."""
_SECTION_BYTES, _TRIAL_BYTES, _RUBRIC_BYTES, _VERDICT_BYTES = 900, 1_000, 330, 110
"""Markup per drill-down section, trial, rubric item row and criterion row besides their
texts (bytes; fitted on rendered pages, see :func:`estimate_drilldown_bytes`)."""

MAX_TEXT = TEXT_CAP
"""Reasoning and evidence longer than this (characters) are cut in the page (the grade files
keep them whole); large reports cut shorter (:func:`jobbench.report._drill.drill_plan`)."""


def _data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def page_name(task_id: str) -> str:
    """File name of the drill-down page of ``task_id`` inside :data:`DRILLDOWN_DIR`:
    ``<task_slug>.html`` (``main/lawyers/task2`` → ``main.lawyers.task2.html``). Distinct task
    ids get distinct names, and no name can leave the directory (see
    :func:`jobbench.report._build.task_slug`)."""
    return task_slug(task_id) + ".html"


def text_limit(data: ReportData) -> int:
    """Characters of reasoning and evidence shown per verdict (see
    :func:`jobbench.report._drill.drill_plan`)."""
    return drill_plan(data).limit


_SECTION_BYTES, _TRIAL_BYTES, _RUBRIC_BYTES, _VERDICT_BYTES = 900, 800, 330, 200
"""Markup per drill-down section, trial, rubric item row and criterion row besides their
texts (bytes; fitted on rendered pages, see :func:`estimate_drilldown_bytes`)."""
_COMPACT_RUBRIC_BYTES = 30
"""Markup of one rubric item's marks in a compact drill-down, besides one byte per mark."""


def estimate_drilldown_bytes(data: ReportData) -> int:
    """Rough size in bytes of every drill-down's HTML: fixed markup per section, trial,
    rubric item and criterion row shown, plus the texts shown (rubric question, criterion
    text, reasoning and evidence as cut; :func:`jobbench.report._drill.drill_plan` says
    which rows a report shows). Within about ±25 % of the rendered size on the test
    fixtures and the benchmark's synthetic grades; used only to choose the layout
    (``auto``), without rendering anything."""
    plan = drill_plan(data)
    total = 0
    for c in data.configs:
        total += _SECTION_BYTES * len(c.tasks)
        for lt in c.loaded:
            total += _TRIAL_BYTES
            if lt.grade is None:
                continue
            task = c.run.tasks.get(lt.record.task_id)
            stats = lt.text_stats or TextStats.of(lt.grade)
            if plan.compact:
                for rg in lt.grade.rubrics:
                    total += _COMPACT_RUBRIC_BYTES + 3 * len(rg.criteria)
                total += stats.detail * (_VERDICT_BYTES + 60 + _RUBRIC_BYTES)
                total += min(stats.detail_chars, 2 * plan.limit * stats.detail)
                continue
            for rg in lt.grade.rubrics:
                rub = (
                    task.rubrics[rg.index]
                    if task is not None and 0 <= rg.index < len(task.rubrics)
                    else None
                )
                total += _RUBRIC_BYTES + (len(rub.question) if rub else 30)
                for cv in rg.criteria:
                    crit = (
                        rub.criteria[cv.criterion_index]
                        if rub and 0 <= cv.criterion_index < len(rub.criteria)
                        else None
                    )
                    total += _VERDICT_BYTES + (len(crit.text) if crit else 30)
            total += stats.chars
    return total


def resolve_drilldowns(data: ReportData, mode: str = "auto") -> Literal["inline", "pages"]:
    """The layout for ``mode``: ``inline`` and ``pages`` as given; ``auto`` = ``pages`` when
    :func:`estimate_drilldown_bytes` exceeds :data:`AUTO_INLINE_MAX_BYTES`, else ``inline``.

    Raises:
        ValueError: ``mode`` is not one of :data:`DRILLDOWN_MODES`.
    """
    if mode not in DRILLDOWN_MODES:
        raise ValueError(f"drilldowns: expected one of {', '.join(DRILLDOWN_MODES)}, got {mode!r}")
    if mode != "auto":
        return mode  # type: ignore[return-value]
    return "pages" if estimate_drilldown_bytes(data) > AUTO_INLINE_MAX_BYTES else "inline"


class _Drills:
    """Renders the drill-down sections of one report lazily (one task or configuration at a
    time, reading verdict texts back from the grade files as it goes, so that a paper-scale
    report never holds every verdict's texts in memory)."""

    def __init__(self, data: ReportData) -> None:
        self.data = data
        self.plan = drill_plan(data)
        self.memo = _drill.DrillMemo()
        self.loaded = [{lt.record.trial_id: lt for lt in c.loaded} for c in data.configs]
        self.by_task: list[dict[str, list]] = []
        for c in data.configs:
            idx: dict[str, list] = {}
            for t in c.trials:
                idx.setdefault(t.task_id, []).append(t)
            self.by_task.append(idx)

    def trials(self, i: int, task_id: str) -> list[tuple[Any, Any]]:
        """``(TrialResult, LoadedTrial)`` of configuration ``i`` on ``task_id``, by epoch."""
        return [
            (t, self.loaded[i][t.trial_id])
            for t in sorted(self.by_task[i].get(task_id, []), key=lambda t: t.epoch)
        ]

    def section(self, i: int, tr, main: str, page_dir: Path | None) -> Markup:
        """The drill-down of configuration ``i`` (position in ``data.configs``) on task result
        ``tr`` (:func:`jobbench.report._drill.section`)."""
        c = self.data.configs[i]
        html = _drill.section(
            c,
            tr,
            self.trials(i, tr.task_id),
            self.plan,
            main=main,
            page_dir=page_dir,
            summary=not main,  # a drill-down page's index table shows the figures
            memo=self.memo,
        )
        return Markup(html)  # noqa: S704 (every text in it is escaped by _drill)

    def rubric_list(self, task_id: str) -> Markup:
        """The task's rubric texts, once, for compact drill-downs (empty otherwise)."""
        if not self.plan.compact:
            return Markup("")
        task = next(
            (c.run.tasks[task_id] for c in self.data.configs if task_id in c.run.tasks), None
        )
        return Markup(_drill.rubric_list(task_id, task))  # noqa: S704 (escaped by _drill)

    def all_inline(self, page_dir: Path | None) -> Iterator[Markup]:
        """Every drill-down, configuration by configuration (the inline order); a compact
        report puts each task's rubric texts before its first section."""
        listed: set[str] = set()
        for i, c in enumerate(self.data.configs):
            for tr in c.tasks:
                if tr.task_id not in listed:
                    listed.add(tr.task_id)
                    yield self.rubric_list(tr.task_id)
                yield self.section(i, tr, "", page_dir)

    def index(self, task_id: str) -> list[dict]:
        """The configurations that have ``task_id``, in rank order: ``anchor``, ``label``,
        ``tr`` (TaskResult) and ``epochs`` (``(anchor, score or state)`` per trial)."""
        out = []
        for i, c in enumerate(self.data.configs):
            tr = c.task(task_id)
            if tr is None:
                continue
            anchor = c.task_anchor(task_id)
            epochs = [
                (f"{anchor}-e{t.epoch}", _tables.pct(t.score) if t.score is not None else t.state)
                for t, _ in self.trials(i, task_id)
            ]
            out.append({"anchor": anchor, "label": c.label, "tr": tr, "epochs": epochs})
        return out

    def for_task(self, task_id: str, page_dir: Path | None) -> Iterator[Markup]:
        """The drill-downs of ``task_id``, one per configuration that has it, in rank order."""
        for i, c in enumerate(self.data.configs):
            tr = c.task(task_id)
            if tr is not None:
                yield self.section(i, tr, "../report.html", page_dir)


HEAT_COLOURS = (
    "#440154",
    "#482878",
    "#3e4989",
    "#31688e",
    "#26828e",
    "#1f9e89",
    "#35b779",
    "#6ece58",
    "#b5de2b",
    "#d8e219",
    "#fde725",
)
"""Viridis at 0, 10, …, 100 %: the colour of a heat-map cell is that of its score rounded to
the nearest 10 % (white text below 60 %, black from 60 %)."""


def heatmap_css() -> str:
    """The heat map's cell classes ``h0`` … ``h10`` (one per entry of :data:`HEAT_COLOURS`)."""
    return " ".join(
        f".heatmap td.h{i} {{ background: {c}; }}"
        + (f" .heatmap td.h{i} a {{ color: #fff; }}" if i < 6 else "")
        for i, c in enumerate(HEAT_COLOURS)
    )


def heatmap_html(data: ReportData, href) -> Markup:
    """The task × configuration heat map as an HTML table sized to its content (no image):
    one row per task (its id in full), one column per configuration (its label written
    vertically), each cell the task score s_t in % on a :data:`HEAT_COLOURS` background,
    linking to its drill-down (``href(config, task_id)``); ``missing`` cells are grey and
    link too, tasks a configuration did not run are blank. Text is escaped."""
    out = ['<div class="scroll"><table class="heatmap"><thead><tr><th>task</th>']
    out += [f'<th class="hc"><span>{escape(c.label)}</span></th>' for c in data.configs]
    out.append("</tr></thead><tbody>")
    for task_id in data.task_ids:
        out.append(f"<tr><th>{escape(task_id)}</th>")
        for c in data.configs:
            tr = c.task(task_id)
            if tr is None:
                out.append('<td class="hn"></td>')
            elif tr.missing:
                out.append(f'<td class="hm"><a href="{escape(href(c, task_id))}">missing</a></td>')
            else:
                score = tr.score or 0.0
                out.append(
                    f'<td class="h{int(score * 10 + 0.5)}"><a href="{escape(href(c, task_id))}">'
                    f"{100 * score:.0f}</a></td>"
                )
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return Markup("".join(out))  # noqa: S704 (every text in it is escaped above)


def page_tasks(data: ReportData) -> list[str]:
    """Tasks that get a drill-down page: those some configuration has, in report order."""
    return [t for t in data.task_ids if any(c.task(t) is not None for c in data.configs)]


@lru_cache(maxsize=1)
def _env() -> Environment:
    env = Environment(
        loader=PackageLoader("jobbench.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        pct=_tables.pct,
        ci=_tables.ci,
        pp=_tables.pp,
        pval=_tables.pval,
        num=_tables.num,
        usd=_tables.usd,
        ratio=_tables.ratio,
        slug=anchor_slug,
        sandboxes=_tables.sandboxes_text,
    )
    env.globals["integrity_columns"] = _tables.INTEGRITY_COLUMNS
    env.globals["heatmap_css"] = heatmap_css
    return env


@dataclass(frozen=True)
class FigureImages:
    """The report's drawn figures (PNG bytes): ``categories`` (micro per paper category),
    ``cost`` (score against ``cost_axis``, the x axis described) and ``chains`` (chain
    breaks). The heat map is HTML (:func:`heatmap_html`)."""

    categories: bytes
    cost: bytes
    cost_axis: str
    chains: bytes


def draw_figures(data: ReportData) -> FigureImages | None:
    """The figures of ``data`` drawn with matplotlib (imported here, only when a figure is
    drawn); None when there is no configuration to draw."""
    if not data.configs:
        return None
    from . import _plots

    cost, axis = _plots.cost_scatter(data)
    return FigureImages(
        categories=_plots.category_bars(data),
        cost=cost,
        cost_axis=axis,
        chains=_plots.chain_break_bars(data),
    )


def render_html(
    data: ReportData,
    drilldowns: DrilldownMode = "inline",
    out_dir: Path | None = None,
    images: FigureImages | None = None,
) -> str:
    """Render ``report.html`` for ``data``.

    Args:
        data: the built report.
        drilldowns: ``inline`` (drill-downs in this page), ``pages`` (links point to
            ``drilldowns/<page_name(task)>#<anchor>``; write those pages with
            :func:`render_drilldown_pages`) or ``auto`` (:func:`resolve_drilldowns`).
        out_dir: the directory ``report.html`` is written to (inline drill-downs link each
            trial's grade file relative to it); None names grade files without a link.
        images: the figures when already drawn (:func:`draw_figures` of ``data``); drawn
            here when None.

    Returns:
        The HTML text.

    Raises:
        ValueError: unknown ``drilldowns``.
    """
    mode = resolve_drilldowns(data, drilldowns)
    pages = mode == "pages"
    paged = page_tasks(data) if pages else []
    page_set = set(paged)

    def dhref(c: ConfigView, task_id: str, suffix: str = "") -> str:
        frag = f"#{c.task_anchor(task_id)}{suffix}"
        return f"{DRILLDOWN_DIR}/{page_name(task_id)}{frag}" if pages else frag

    def page_href(task_id: str) -> str | None:
        return f"{DRILLDOWN_DIR}/{page_name(task_id)}" if task_id in page_set else None

    figures: list[dict[str, Any]] = []
    if images is None:
        images = draw_figures(data)
    if images is not None:
        figures.append(
            {
                "id": "fig-categories",
                "title": "Score per paper category",
                "src": _data_uri(images.categories),
                "caption": f"{MICRO_LABEL} per paper category column and overall; error bars: "
                f"{_tables.settings_text(data)}.",
            }
        )
        figures.append(
            {
                "id": "fig-cost",
                "title": "Score vs cost",
                "src": _data_uri(images.cost),
                "caption": f"{MICRO_LABEL} against {images.cost_axis}.",
            }
        )
        figures.append(
            {
                "id": "fig-heatmap",
                "title": "Task × configuration heat map",
                "html": heatmap_html(data, dhref),
                "caption": Markup(
                    "Task score s<sub>t</sub> (%, mean over scored epochs); grey = missing "
                    "(counts 0), blank = not run. Each cell links to its drill-down."
                ),
            }
        )
        figures.append(
            {
                "id": "fig-chains",
                "title": "Chain breaks",
                "src": _data_uri(images.chains),
                "caption": "For each failed rubric item, the first link of its chain that "
                "failed; trials without a deliverable fail every item (counted under "
                "no deliverable).",
            }
        )
    soc_titles = soc_major_groups()
    groups = {
        "paper_category": [
            g
            for g in PAPER_CATEGORIES.values()
            if any(g in c.groups["paper_category"] for c in data.configs)
        ],
        "soc_major_group": sorted({g for c in data.configs for g in c.groups["soc_major_group"]}),
        "occupation": sorted({g for c in data.configs for g in c.groups["occupation"]}),
    }
    group_names = {
        "paper_category": {g: g for g in groups["paper_category"]},
        "soc_major_group": {
            g: f"{g} {soc_titles.get(g, 'Unknown')}" for g in groups["soc_major_group"]
        },
        "occupation": {g: occupation_for(g).display_name for g in groups["occupation"]},
    }
    break_keys: list[str] = []
    for c in data.configs:
        break_keys += [k for k in c.chain_breaks if k not in break_keys]
    task_max: dict[str, float] = {}
    for c in data.configs:
        for t in c.tasks:
            if t.max_points is not None:
                task_max.setdefault(t.task_id, t.max_points)
    drills = _Drills(data)
    limit = drills.plan.limit
    return (
        _env()
        .get_template("report.html.j2")
        .render(
            data=data,
            micro_label=MICRO_LABEL,
            macro_label=MACRO_LABEL,
            settings_text=_tables.settings_text(data),
            figures=figures,
            groups=groups,
            group_names=group_names,
            states=STATE_DESCRIPTIONS,
            ratio_fields=RATIO_FIELDS,
            drilldowns=[] if pages else drills.all_inline(out_dir),
            compact=drills.plan.compact,
            marks_legend=_drill.MARKS_LEGEND,
            pages=[
                {
                    "task_id": t,
                    "href": page_href(t),
                    "configs": sum(1 for c in data.configs if c.task(t) is not None),
                }
                for t in paged
            ],
            dhref=dhref,
            page_href=page_href,
            not_scored=_tables.not_scored,
            K=data.max_epochs,
            max_text=limit,
            break_keys=sorted(break_keys, key=_break_order),
            task_max=task_max,
            provisional_note=_tables.PROVISIONAL_NOTE,
            comparability=comparability(data),
        )
    )


def render_drilldown_pages(
    data: ReportData, out_dir: Path | None = None, tasks: Sequence[str] | None = None
) -> Iterator[tuple[str, str]]:
    """The per-task drill-down pages, one at a time (each rendered when asked for):
    ``(page_name(task_id), html)`` for every task some configuration has
    (:func:`page_tasks`), or for ``tasks`` (some of those, in the order given), each with
    that task's drill-down for every configuration (in rank order). Links back to the
    report point to ``../report.html#…``; the page has the report's
    Content-Security-Policy, escaping and text cuts. With ``out_dir`` (the report
    directory) each trial links its grade file relative to ``out_dir/drilldowns/``."""
    drills = _Drills(data)
    page_dir = out_dir / DRILLDOWN_DIR if out_dir is not None else None
    template = _env().get_template("drilldown.html.j2")
    for task_id in page_tasks(data) if tasks is None else tasks:
        index = drills.index(task_id)
        yield (
            page_name(task_id),
            template.render(
                data=data,
                task_id=task_id,
                index=index,
                occupation=Markup(  # noqa: S704 (escaped by _drill)
                    _drill.occupation_line(index[0]["tr"]) if index else ""
                ),
                rubric_list=drills.rubric_list(task_id),
                drilldowns=drills.for_task(task_id, page_dir),
                main="../report.html",
                max_text=drills.plan.limit,
                compact=drills.plan.compact,
                marks_legend=_drill.MARKS_LEGEND,
            ),
        )


_break_order = chain_break_order
