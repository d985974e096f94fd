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
from collections.abc import Iterator
from functools import lru_cache
from typing import Any, Literal

from jinja2 import Environment, PackageLoader, select_autoescape

from ..scoring import MACRO_LABEL, MICRO_LABEL, RATIO_FIELDS, STATE_DESCRIPTIONS
from ..tasks import PAPER_CATEGORIES, occupation_for, soc_major_groups
from . import _tables
from ._build import ConfigView, ReportData, anchor_slug, task_slug
from ._comparability import comparability

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

MAX_TEXT = 2000
"""Reasoning and evidence longer than this (characters) are cut in the page (the grade files
keep them whole)."""
MAX_TEXT_LARGE = 400
"""The cut used instead when the report holds more than :data:`LARGE_REPORT` verdicts, to keep
the report and its drill-down pages loadable."""
LARGE_REPORT = 100_000


def _cut(text: str | None, limit: int = MAX_TEXT) -> tuple[str, bool]:
    text = text or ""
    return (text, False) if len(text) <= limit else (text[:limit], True)


def _data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _rubric_views(c: ConfigView, lt, task, trial_anchor: str, limit: int) -> list[dict]:
    grade = lt.grade
    out: list[dict] = []
    if grade is None:
        return out
    for rg in grade.rubrics:
        rub = (
            task.rubrics[rg.index]
            if task is not None and 0 <= rg.index < len(task.rubrics)
            else None
        )
        question = rub.question if rub else "(rubric text unavailable)"
        crits = []
        for cv in rg.criteria:
            crit = (
                rub.criteria[cv.criterion_index]
                if rub and 0 <= cv.criterion_index < len(rub.criteria)
                else None
            )
            reasoning, r_cut = _cut(cv.reasoning, limit)
            evidence, e_cut = _cut(cv.evidence, limit)
            crits.append(
                {
                    "n": cv.criterion_index + 1,
                    "text": crit.text if crit else "(criterion text unavailable)",
                    "verdict": cv.verdict,
                    "source": cv.source,
                    "reasoning": reasoning,
                    "reasoning_cut": r_cut,
                    "evidence": evidence,
                    "evidence_cut": e_cut,
                    "evidence_found": cv.evidence_found,
                    "second_opinion": (cv.second_opinion or {}).get("verdict")
                    if cv.second_opinion
                    else None,
                    "breaks": rg.passed is False
                    and _break_is(rg, f"criterion:{cv.criterion_index}"),
                }
            )
        brk = None
        if rg.passed is False:
            raw = rg.chain_break or next(
                (f"criterion:{x.criterion_index}" for x in rg.criteria if x.verdict == "fail"), None
            )
            if raw and raw.startswith("criterion:") and raw[10:].isdigit():
                brk = f"criterion {int(raw[10:]) + 1}"
            elif raw and raw.startswith("requires:"):
                brk = f"required rubric {raw[9:]}"
            else:
                brk = raw or "unknown"
        out.append(
            {
                "anchor": f"{trial_anchor}-r{rg.index}",
                "index": rg.index,
                "id": rg.id,
                "question": question,
                "weight": rg.weight,
                "passed": rg.passed,
                "chain_break": brk,
                "requires": rg.requires,
                "model_verdict": rg.model_verdict,
                "disagreement": rg.disagreement,
                "criteria": crits,
            }
        )
    return out


def _break_is(rg, key: str) -> bool:
    if rg.chain_break:
        return rg.chain_break == key
    first = next(
        (f"criterion:{x.criterion_index}" for x in rg.criteria if x.verdict == "fail"), None
    )
    return first == key


def page_name(task_id: str) -> str:
    """File name of the drill-down page of ``task_id`` inside :data:`DRILLDOWN_DIR`:
    ``<task_slug>.html`` (``main/lawyers/task2`` → ``main.lawyers.task2.html``). Distinct task
    ids get distinct names, and no name can leave the directory (see
    :func:`jobbench.report._build.task_slug`)."""
    return task_slug(task_id) + ".html"


def text_limit(data: ReportData) -> int:
    """Characters of reasoning and evidence shown per verdict: :data:`MAX_TEXT`, or
    :data:`MAX_TEXT_LARGE` above :data:`LARGE_REPORT` verdicts."""
    verdicts = sum(t.criteria_total for c in data.configs for t in c.trials)
    return MAX_TEXT if verdicts <= LARGE_REPORT else MAX_TEXT_LARGE


def estimate_drilldown_bytes(data: ReportData) -> int:
    """Rough size in bytes of every drill-down's HTML: fixed markup per section, trial,
    rubric item and criterion, plus the texts shown (rubric question, criterion text,
    reasoning and evidence as cut). Within about ±25 % of the rendered size on the test
    fixtures and the benchmark's synthetic grades; used only to choose the layout (``auto``),
    without rendering anything."""
    limit = text_limit(data)
    total = 0
    for c in data.configs:
        total += _SECTION_BYTES * len(c.tasks)
        for lt in c.loaded:
            total += _TRIAL_BYTES
            if lt.grade is None:
                continue
            task = c.run.tasks.get(lt.record.task_id)
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
                    total += (
                        _VERDICT_BYTES
                        + (len(crit.text) if crit else 30)
                        + min(len(cv.reasoning or ""), limit)
                        + min(len(cv.evidence or ""), limit)
                    )
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
    """Builds drill-down views of one report lazily (one task or configuration at a time, so
    that paper-scale reports never hold every view in memory)."""

    def __init__(self, data: ReportData, limit: int) -> None:
        self.data, self.limit = data, limit
        self.loaded = [{lt.record.trial_id: lt for lt in c.loaded} for c in data.configs]
        self.by_task: list[dict[str, list]] = []
        for c in data.configs:
            idx: dict[str, list] = {}
            for t in c.trials:
                idx.setdefault(t.task_id, []).append(t)
            self.by_task.append(idx)

    def view(self, i: int, tr) -> dict:
        """The drill-down of configuration ``i`` (position in ``data.configs``) on task result
        ``tr``."""
        c = self.data.configs[i]
        anchor = c.task_anchor(tr.task_id)
        task = c.run.tasks.get(tr.task_id)
        trials = []
        for t in sorted(self.by_task[i].get(tr.task_id, []), key=lambda t: t.epoch):
            lt = self.loaded[i][t.trial_id]
            t_anchor = f"{anchor}-e{t.epoch}"
            trials.append(
                {
                    "anchor": t_anchor,
                    "row": t,
                    "state_desc": STATE_DESCRIPTIONS[t.state],
                    "rubrics": _rubric_views(c, lt, task, t_anchor, self.limit),
                    "grade_file": None
                    if lt.grade_path is None
                    else lt.grade_path.relative_to(c.run.path).as_posix(),
                }
            )
        occ = occupation_for(tr.occupation)
        return {
            "anchor": anchor,
            "config": c,
            "tr": tr,
            "trials": trials,
            "task": task,
            "occupation": occ.display_name,
            "soc": f"{occ.soc_major_code} {occ.soc_major_title}",
        }

    def all_inline(self) -> Iterator[dict]:
        """Every drill-down, configuration by configuration (the inline order)."""
        for i, c in enumerate(self.data.configs):
            for tr in c.tasks:
                yield self.view(i, tr)

    def for_task(self, task_id: str) -> list[dict]:
        """The drill-downs of ``task_id``, one per configuration that has it, in rank order."""
        out = []
        for i, c in enumerate(self.data.configs):
            tr = c.task(task_id)
            if tr is not None:
                out.append(self.view(i, tr))
        return out


def _page_tasks(data: ReportData) -> list[str]:
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
    return env


def render_html(data: ReportData, drilldowns: DrilldownMode = "inline") -> str:
    """Render ``report.html`` for ``data``.

    Args:
        data: the built report.
        drilldowns: ``inline`` (drill-downs in this page), ``pages`` (links point to
            ``drilldowns/<page_name(task)>#<anchor>``; write those pages with
            :func:`render_drilldown_pages`) or ``auto`` (:func:`resolve_drilldowns`).

    Returns:
        The HTML text.

    Raises:
        ValueError: unknown ``drilldowns``.
    """
    mode = resolve_drilldowns(data, drilldowns)
    pages = mode == "pages"
    page_tasks = _page_tasks(data) if pages else []
    page_set = set(page_tasks)

    def dhref(c: ConfigView, task_id: str, suffix: str = "") -> str:
        frag = f"#{c.task_anchor(task_id)}{suffix}"
        return f"{DRILLDOWN_DIR}/{page_name(task_id)}{frag}" if pages else frag

    def page_href(task_id: str) -> str | None:
        return f"{DRILLDOWN_DIR}/{page_name(task_id)}" if task_id in page_set else None

    figures: list[dict[str, Any]] = []
    if data.configs:
        from . import _plots  # matplotlib: imported only when a figure is drawn

        figures.append(
            {
                "id": "fig-categories",
                "title": "Score per paper category",
                "src": _data_uri(_plots.category_bars(data)),
                "caption": f"{MICRO_LABEL} per paper category column and overall; error bars: "
                f"{_tables.settings_text(data)}.",
            }
        )
        png, xlabel = _plots.cost_scatter(data)
        figures.append(
            {
                "id": "fig-cost",
                "title": "Score vs cost",
                "src": _data_uri(png),
                "caption": f"{MICRO_LABEL} against {xlabel}.",
            }
        )
        png, areas, size = _plots.heatmap(data, href=dhref)
        figures.append(
            {
                "id": "fig-heatmap",
                "title": "Task × configuration heat map",
                "src": _data_uri(png),
                "areas": areas,
                "size": size,
                "caption": "Each cell links to its drill-down (click it).",
            }
        )
        figures.append(
            {
                "id": "fig-chains",
                "title": "Chain breaks",
                "src": _data_uri(_plots.chain_break_bars(data)),
                "caption": "For each failed rubric item, the first link of its chain that failed.",
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
    limit = text_limit(data)
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
            drilldowns=[] if pages else _Drills(data, limit).all_inline(),
            pages=[
                {
                    "task_id": t,
                    "href": page_href(t),
                    "configs": sum(1 for c in data.configs if c.task(t) is not None),
                }
                for t in page_tasks
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


def render_drilldown_pages(data: ReportData) -> Iterator[tuple[str, str]]:
    """The per-task drill-down pages, one at a time: ``(page_name(task_id), html)`` for every
    task some configuration has, each with that task's drill-down for every configuration (in
    rank order). Links back to the report point to ``../report.html#…``; the page has the
    report's Content-Security-Policy, escaping and text cuts."""
    limit = text_limit(data)
    drills = _Drills(data, limit)
    template = _env().get_template("drilldown.html.j2")
    for task_id in _page_tasks(data):
        yield (
            page_name(task_id),
            template.render(
                data=data,
                task_id=task_id,
                drilldowns=drills.for_task(task_id),
                main="../report.html",
                max_text=limit,
            ),
        )


def _break_order(k: str) -> tuple[int, int]:
    if k.startswith("criterion "):
        return (0, int(k.split()[1]))
    return (1, 0 if k == "requires" else 1)
