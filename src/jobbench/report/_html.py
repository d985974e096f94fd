"""The single self-contained ``report.html`` (jinja2 template, inline CSS, PNGs as data URIs).

The page loads nothing: a Content-Security-Policy forbids every network fetch and script, and
all text that comes from deliverables (reasoning, evidence) or from run files is escaped by
jinja2's autoescaping.
"""

from __future__ import annotations

import base64

from jinja2 import Environment, PackageLoader, select_autoescape

from ..scoring import MACRO_LABEL, MICRO_LABEL, STATE_DESCRIPTIONS
from ..scoring._aggregate import RATIO_FIELDS
from ..tasks import PAPER_CATEGORIES, occupation_for, soc_major_groups
from . import _plots, _tables
from ._build import ConfigView, ReportData, anchor_slug

MAX_TEXT = 2000
"""Reasoning and evidence longer than this (characters) are cut in the page (the grade files
keep them whole)."""
MAX_TEXT_LARGE = 400
"""The cut used instead when the report holds more than :data:`LARGE_REPORT` verdicts, to keep
one self-contained page loadable."""
LARGE_REPORT = 100_000


def _cut(text: str | None, limit: int = MAX_TEXT) -> tuple[str, bool]:
    text = text or ""
    return (text, False) if len(text) <= limit else (text[:limit], True)


def _data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _rubric_views(c: ConfigView, lt, task, trial_anchor: str, limit: int) -> list[dict]:
    grade = lt.grade
    out = []
    if grade is None:
        return out
    for rg in grade.rubrics:
        rub = task.rubrics[rg.index] if task is not None and 0 <= rg.index < len(task.rubrics) else None
        question = rub.question if rub else (rg.model_extra or {}).get("question") or "(rubric text unavailable)"
        crits = []
        for cv in rg.criteria:
            crit = rub.criteria[cv.criterion_index] if rub and 0 <= cv.criterion_index < len(rub.criteria) else None
            reasoning, r_cut = _cut(cv.reasoning, limit)
            evidence, e_cut = _cut(cv.evidence, limit)
            crits.append({
                "n": cv.criterion_index + 1,
                "text": crit.text if crit else "(criterion text unavailable)",
                "verdict": cv.verdict,
                "source": cv.source,
                "reasoning": reasoning, "reasoning_cut": r_cut,
                "evidence": evidence, "evidence_cut": e_cut,
                "evidence_found": cv.evidence_found,
                "second_opinion": (cv.second_opinion or {}).get("verdict") if cv.second_opinion else None,
                "breaks": rg.passed is False and _break_is(rg, f"criterion:{cv.criterion_index}"),
            })
        brk = None
        if rg.passed is False:
            raw = rg.chain_break or next((f"criterion:{x.criterion_index}" for x in rg.criteria if x.verdict == "fail"), None)
            if raw and raw.startswith("criterion:") and raw[10:].isdigit():
                brk = f"criterion {int(raw[10:]) + 1}"
            elif raw and raw.startswith("requires:"):
                brk = f"required rubric {raw[9:]}"
            else:
                brk = raw or "unknown"
        out.append({
            "anchor": f"{trial_anchor}-r{rg.index}",
            "index": rg.index, "id": rg.id, "question": question, "weight": rg.weight,
            "passed": rg.passed, "chain_break": brk, "requires": rg.requires,
            "model_verdict": rg.model_verdict, "disagreement": rg.disagreement,
            "criteria": crits,
        })
    return out


def _break_is(rg, key: str) -> bool:
    if rg.chain_break:
        return rg.chain_break == key
    first = next((f"criterion:{x.criterion_index}" for x in rg.criteria if x.verdict == "fail"), None)
    return first == key


def _drilldowns(data: ReportData, limit: int) -> list[dict]:
    out = []
    for c in data.configs:
        loaded = {lt.record.trial_id: lt for lt in c.loaded}
        by_task: dict[str, list] = {}
        for t in c.trials:
            by_task.setdefault(t.task_id, []).append(t)
        for tr in c.tasks:
            anchor = c.task_anchor(tr.task_id)
            task = c.run.tasks.get(tr.task_id)
            trials = []
            for t in sorted(by_task.get(tr.task_id, []), key=lambda t: t.epoch):
                lt = loaded[t.trial_id]
                t_anchor = f"{anchor}-e{t.epoch}"
                trials.append({
                    "anchor": t_anchor, "row": t, "state_desc": STATE_DESCRIPTIONS[t.state],
                    "rubrics": _rubric_views(c, lt, task, t_anchor, limit),
                    "grade_file": None if lt.grade_path is None else lt.grade_path.relative_to(c.run.path).as_posix(),
                })
            occ = occupation_for(tr.occupation)
            out.append({"anchor": anchor, "config": c, "tr": tr, "trials": trials, "task": task,
                        "occupation": occ.display_name, "soc": f"{occ.soc_major_code} {occ.soc_major_title}"})
    return out


def render_html(data: ReportData) -> str:
    """Render the report page for ``data`` (see the module docstring)."""
    env = Environment(
        loader=PackageLoader("jobbench.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(pct=_tables.pct, ci=_tables.ci, pp=_tables.pp, pval=_tables.pval, num=_tables.num,
                       usd=_tables.usd, ratio=_tables.ratio, slug=anchor_slug, sandboxes=_tables.sandboxes_text)
    figures = []
    if data.configs:
        figures.append({"id": "fig-categories", "title": "Score per paper category",
                        "src": _data_uri(_plots.category_bars(data)),
                        "caption": f"{MICRO_LABEL} per paper category column and overall; error bars: "
                                   f"{_tables.settings_text(data)}."})
        png, xlabel = _plots.cost_scatter(data)
        figures.append({"id": "fig-cost", "title": "Score vs cost", "src": _data_uri(png),
                        "caption": f"{MICRO_LABEL} against {xlabel}."})
        png, areas, size = _plots.heatmap(data)
        figures.append({"id": "fig-heatmap", "title": "Task × configuration heat map", "src": _data_uri(png),
                        "areas": areas, "size": size,
                        "caption": "Each cell links to its drill-down (click it)."})
        figures.append({"id": "fig-chains", "title": "Chain breaks", "src": _data_uri(_plots.chain_break_bars(data)),
                        "caption": "For each failed rubric item, the first link of its chain that failed."})
    soc_titles = soc_major_groups()
    groups = {
        "paper_category": [g for g in PAPER_CATEGORIES.values() if any(g in c.groups["paper_category"] for c in data.configs)],
        "soc_major_group": sorted({g for c in data.configs for g in c.groups["soc_major_group"]}),
        "occupation": sorted({g for c in data.configs for g in c.groups["occupation"]}),
    }
    group_names = {
        "paper_category": {g: g for g in groups["paper_category"]},
        "soc_major_group": {g: f"{g} {soc_titles.get(g, 'Unknown')}" for g in groups["soc_major_group"]},
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
    verdicts = sum(t.criteria_total for c in data.configs for t in c.trials)
    limit = MAX_TEXT if verdicts <= LARGE_REPORT else MAX_TEXT_LARGE
    template = env.get_template("report.html.j2")
    return template.render(
        data=data,
        micro_label=MICRO_LABEL,
        macro_label=MACRO_LABEL,
        settings_text=_tables.settings_text(data),
        figures=figures,
        groups=groups,
        group_names=group_names,
        states=STATE_DESCRIPTIONS,
        ratio_fields=RATIO_FIELDS,
        drilldowns=_drilldowns(data, limit),
        not_scored=_tables.not_scored,
        K=data.max_epochs,
        max_text=limit,
        break_keys=sorted(break_keys, key=_break_order),
        task_max=task_max,
        provisional_note=_tables.PROVISIONAL_NOTE,
    )


def _break_order(k: str) -> tuple[int, int]:
    if k.startswith("criterion "):
        return (0, int(k.split()[1]))
    return (1, 0 if k == "requires" else 1)
