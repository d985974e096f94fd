"""Drill-down sections (one configuration on one task: every trial's rubric items, criteria,
verdicts, reasoning and evidence), rendered in Python from compact data.

The report keeps its grades slim (:func:`jobbench.report._runs.slim_grade`: verdicts without
texts); a section reads the texts of its trials again from their grade files, one section at
a time, and uses them only when the file's SHA-256 is still the one read (and validated)
when the report was built. A compact section reads again only the grades with a verdict to
show in full (the others are marks only). Every text is escaped here (:func:`html.escape`).

Two presentations, chosen per report by :func:`drill_plan`:

* *full* (the texts of every verdict fit :data:`DETAIL_BUDGET`): one row per rubric item
  and one per criterion with its verdict, reasoning and evidence;
* *compact* (larger reports): per trial, one line of marks (one per criterion, in order:
  ``+`` pass, ``x`` fail, ``!`` judge_error, ``?`` unjudged) per rubric item, then rows
  only for the criteria :func:`jobbench.report._runs.needs_detail` selects (every verdict but a pass
  whose quote was found, failing criteria first within their rubric item), without the
  rubric and criterion texts: those are listed once per task (:func:`rubric_list`). Each
  trial links its grade file, which holds every reasoning and evidence whole.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

import pydantic_core

from ..scoring import STATE_DESCRIPTIONS, TrialResult
from ..tasks import Task, occupation_for
from . import _tables
from ._build import ConfigView, ReportData, anchor_slug
from ._runs import TEXT_CAP, LoadedTrial, TextStats

DETAIL_BUDGET = 12_000_000
"""Characters of reasoning and evidence (each text counted up to :data:`TEXT_CAP`) that the
drill-downs of one report may hold: below it every verdict is shown in full, above it the
presentation is compact and the texts shown are cut to fit (not below :data:`MIN_TEXT`)."""
MIN_TEXT = 160
"""Shortest cut (characters) of a reasoning or evidence text in a compact report."""

_MARKS = {"pass": "+", "fail": "x", "judge_error": "!", "unjudged": "?"}
MARKS_LEGEND = "+ pass, x fail, ! judge_error, ? unjudged"


@dataclass(frozen=True)
class DrillPlan:
    """How one report's drill-downs are shown.

    Attributes:
        compact: passing criteria as marks only (see the module docstring).
        limit: characters of each reasoning and evidence text shown (longer ones end in
            ``[…]``; the grade file keeps them whole).
        verdicts: criterion verdicts in the report's grades.
    """

    compact: bool
    limit: int
    verdicts: int


def _stats(lt: LoadedTrial) -> TextStats:
    if lt.text_stats is not None:
        return lt.text_stats
    return TextStats.of(lt.grade) if lt.grade is not None else TextStats()


def drill_plan(data: ReportData) -> DrillPlan:
    """The :class:`DrillPlan` of ``data``: full when every verdict's texts fit
    :data:`DETAIL_BUDGET`; else compact, with texts cut to
    ``max(MIN_TEXT, DETAIL_BUDGET // (2 × detailed verdicts))`` characters (at most
    :data:`TEXT_CAP`)."""
    chars = detail_chars = detail = verdicts = 0
    for c in data.configs:
        for t in c.trials:
            verdicts += t.criteria_total
        for lt in c.loaded:
            s = _stats(lt)
            chars, detail_chars, detail = (
                chars + s.chars,
                detail_chars + s.detail_chars,
                detail + s.detail,
            )
    if chars <= DETAIL_BUDGET:
        return DrillPlan(False, TEXT_CAP, verdicts)
    if detail_chars <= DETAIL_BUDGET:
        return DrillPlan(True, TEXT_CAP, verdicts)
    return DrillPlan(True, min(TEXT_CAP, max(MIN_TEXT, DETAIL_BUDGET // (2 * detail))), verdicts)


@dataclass(frozen=True)
class _Texts:
    """One verdict's texts as read from its grade file."""

    reasoning: str
    evidence: str
    evidence_found: bool | None
    second_opinion: str | None


def _verdict_texts(lt: LoadedTrial) -> tuple[list[list[_Texts]] | None, str | None]:
    """Per rubric item (in the grade's order), per criterion, the verdict texts of ``lt``'s
    grade; ``(None, why)`` when they cannot be shown (the grade file changed or vanished
    since the report read it)."""
    grade = lt.grade
    if grade is None:
        return None, None
    if lt.text_stats is None:  # a whole grade: its texts are at hand
        return [
            [
                _Texts(
                    cv.reasoning,
                    cv.evidence,
                    cv.evidence_found,
                    (cv.second_opinion or {}).get("verdict") if cv.second_opinion else None,
                )
                for cv in rg.criteria
            ]
            for rg in grade.rubrics
        ], None
    if lt.grade_path is None or lt.grade_sha256 is None:
        return None, "the grade file is not known"
    try:
        fd = os.open(lt.grade_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            raw = f.read()
    except OSError as exc:
        return None, f"the grade file cannot be read again ({exc.strerror or exc})"
    if hashlib.sha256(raw).hexdigest() != lt.grade_sha256:
        return None, "the grade file changed after the report read it; run the report again"
    # The same bytes were parsed and validated (GradeRecord) when the report was built,
    # in pydantic's JSON mode (current schema) or through json (older files): parse them the
    # same way, the faster first.
    try:
        doc: dict[str, Any] = pydantic_core.from_json(raw)
    except ValueError:
        doc = json.loads(raw)
    out: list[list[_Texts]] = []
    for rg in doc.get("rubrics") or []:
        row = []
        for cv in rg.get("criteria") or []:
            so = cv.get("second_opinion")
            row.append(
                _Texts(
                    cv.get("reasoning") or "",
                    cv.get("evidence") or "",
                    cv.get("evidence_found"),
                    so.get("verdict") if isinstance(so, dict) else None,
                )
            )
        out.append(row)
    return out, None


def _cut(text: str, limit: int) -> str:
    return escape(text) if len(text) <= limit else escape(text[:limit]) + " […]"


def _requires(indexes: list[int]) -> str:
    """``requires`` as shown everywhere: the same 1-based ``R<n>`` names as the rubric items."""
    return ", ".join(f"R{i + 1}" for i in indexes)


def _first_failed(rg) -> str | None:
    """The first failed link of a failed rubric item, as a key: ``criterion:<j>`` (0-based)
    or ``requires:<index>`` (the grade's ``chain_break``, else its first failed criterion)."""
    if rg.chain_break:
        return str(rg.chain_break)
    return next(
        (f"criterion:{x.criterion_index}" for x in rg.criteria if x.verdict == "fail"), None
    )


def _break_text(rg) -> str:
    raw = _first_failed(rg)
    if raw and raw.startswith("criterion:") and raw[10:].isdigit():
        return f"criterion {int(raw[10:]) + 1}"
    if raw and raw.startswith("requires:") and raw[9:].isdigit():
        return f"required rubric R{int(raw[9:]) + 1}"
    return escape(raw or "unknown")


def rubric_list(task_id: str, task: Task | None) -> str:
    """The task's rubric items and criteria, once (compact drill-downs refer to them by
    number): an HTML table with id ``rubrics-<task slug>``; empty when the task's texts are
    unavailable."""
    if task is None:
        return ""
    out = [
        f'<h3 id="rubrics-{anchor_slug(task_id)}">Rubric items of {escape(task_id)}</h3>',
        '<table class="rubric-list"><thead><tr><th>#</th><th>rubric item / criterion</th>'
        '<th class="n">weight</th></tr></thead><tbody>',
    ]
    for i, rub in enumerate(task.rubrics):
        req = f' <span class="small muted">(requires {_requires(rub.requires)})</span>'
        out.append(
            f'<tr class="rubric"><td>R{i + 1}</td><td><b>{escape(rub.question)}</b>'
            f'{req if rub.requires else ""}</td><td class="n">{_tables.num(rub.weight, 2)}</td>'
            "</tr>"
        )
        for j, crit in enumerate(rub.criteria):
            out.append(f"<tr><td>R{i + 1}.{j + 1}</td><td>{escape(crit.text)}</td><td></td></tr>")
    out.append("</tbody></table>")
    return "".join(out)


@dataclass
class DrillMemo:
    """What the drill-downs of one report compute once and reuse (keep one per report; its
    keys are object ids and paths of that report's data, which stays alive meanwhile).

    Attributes:
        marks: ``id(rubric grade)`` → (that rubric grade, its :func:`_marks` HTML); the slim
            rubric grades are shared across trials (:func:`jobbench.report._runs.slim_grade`),
            so most trials find theirs here. The object is kept so that its id stays its own.
        rel_dirs: (page folder, grade file's folder) → the link prefix of the files in that
            folder: the folder relative to the page folder (:func:`os.path.relpath`), POSIX,
            escaped for an attribute, ending in ``/`` (empty for the page folder itself).
    """

    marks: dict[int, tuple[Any, str]] = field(default_factory=dict)
    rel_dirs: dict[tuple[str, str], str] = field(default_factory=dict)


def _grade_href(lt: LoadedTrial, page_dir: Path | None, memo: DrillMemo) -> str | None:
    """Relative link (escaped for an attribute) from a page in ``page_dir`` to the trial's
    grade file (None without one, or without ``page_dir``): the ``memo.rel_dirs`` prefix of
    the file's folder (computed once per folder) and the file's name."""
    if lt.grade_path is None or page_dir is None:
        return None
    folder, name = os.path.split(lt.grade_path)
    key = (str(page_dir), folder)
    prefix = memo.rel_dirs.get(key)
    if prefix is None:
        rel_dir = os.path.relpath(folder, page_dir)
        prefix = "" if rel_dir == os.curdir else escape(Path(rel_dir).as_posix(), quote=True) + "/"
        memo.rel_dirs[key] = prefix
    return prefix + escape(name, quote=True)


def _trial_meta(
    t: TrialResult, lt: LoadedTrial, c: ConfigView, href: str | None, compact: bool
) -> str:
    """The trial's status, cost and sandbox line (escaped HTML); ``compact`` leaves out the
    trial id (the section and epoch name it) and names the grade file by its link only."""
    num, usd = _tables.num, _tables.usd
    err = f" ({escape(t.trial_error)})" if t.trial_error else ""
    score = f"{_tables.pct(t.score)} %" if t.score is not None else "none"
    grade = ""
    if lt.grade_path is not None and compact and href:
        grade = f' · <a href="{href}">grade file</a>'
    elif lt.grade_path is not None:
        rel = escape(lt.grade_path.relative_to(c.run.path).as_posix())
        grade = (
            f' · grade file <a href="{href}"><code>{rel}</code></a>'
            if href
            else f" · grade file <code>{rel}</code>"
        )
    sandbox = escape(t.sandbox or "unknown")
    bare = ' <span class="v-fail">(no isolation)</span>' if t.sandbox == "none" else ""
    flags = ""
    if t.flags:
        flags = ' · <span class="v-fail">flags:</span> ' + " ".join(
            f"<code>{escape(f)}</code>" for f in t.flags
        )
    if compact:
        return (
            f"trial status {escape(t.trial_status)}{err} · score {score} · wall "
            f"{num(t.wall_seconds)} s · {num(t.turns)} turns · agent {num(t.agent_input_tokens)}"
            f"/{num(t.agent_output_tokens)} tokens {usd(t.agent_cost_usd)} · judge "
            f"{num(t.judge_input_tokens)}/{num(t.judge_output_tokens)} tokens "
            f"{usd(t.judge_cost_usd)} · sandbox <b>{sandbox}</b>{bare}{flags}{grade}"
        )
    return (
        f"trial {escape(t.trial_id)} · trial status {escape(t.trial_status)}{err} · score "
        f"{score} · wall {num(t.wall_seconds)} s · turns {num(t.turns)} · agent "
        f"{num(t.agent_input_tokens)} in / {num(t.agent_output_tokens)} out tokens, "
        f"{usd(t.agent_cost_usd)} · judge {num(t.judge_input_tokens)} in / "
        f"{num(t.judge_output_tokens)} out tokens, {usd(t.judge_cost_usd)}{grade} · sandbox "
        f"<b>{sandbox}</b>{bare}{flags}"
    )


_HEAD = (
    '<table class="rubrics"><thead><tr><th>#</th><th>rubric item / criterion</th>'
    '<th class="n">weight</th><th>verdict</th><th>source</th><th>reasoning</th>'
    "<th>evidence</th></tr></thead><tbody>"
)


_HEAD_COMPACT = (
    '<table class="rubrics"><thead><tr><th>#</th><th>verdict</th><th>source</th>'
    "<th>reasoning</th><th>evidence</th></tr></thead><tbody>"
)
"""Compact detail rows: no rubric or criterion text (listed once per task) and no weight
column (the rubric row names it)."""


def _rubric_row(rg, task: Task | None, anchor: str, compact: bool = False) -> str:
    rub = task.rubrics[rg.index] if task is not None and 0 <= rg.index < len(task.rubrics) else None
    question = escape(rub.question) if rub else "(rubric text unavailable)"
    req = (
        f' <span class="small muted">(requires {_requires(rg.requires)})</span>'
        if rg.requires
        else ""
    )
    if rg.passed is True:
        verdict = '<span class="v-pass">passed</span>'
    elif rg.passed is False:
        verdict = (
            '<span class="v-fail">failed</span> <span class="small">chain broke at '
            f"{_break_text(rg)}</span>"
        )
    else:
        verdict = '<span class="v-judge_error">undecided</span>'
    if rg.disagreement:
        verdict += (
            '<br><span class="small v-judge_error">judge\'s overall verdict disagrees ('
            f"{'pass' if rg.model_verdict else 'fail'})</span>"
        )
    if compact:
        return (
            f'<tr class="rubric"><td>R{rg.index + 1}</td><td colspan="4">weight '
            f"{_tables.num(rg.weight, 2)}{req} · {verdict}</td></tr>"
        )
    return (
        f'<tr class="rubric" id="{anchor}-r{rg.index}"><td>R{rg.index + 1}</td><td><b>{question}'
        f'</b>{req}</td><td class="n">{_tables.num(rg.weight, 2)}</td><td>{verdict}</td><td></td>'
        "<td></td><td></td></tr>"
    )


def _criterion_row(
    rg, cv, tx: _Texts | None, task: Task | None, limit: int, compact: bool = False
) -> str:
    rub = task.rubrics[rg.index] if task is not None and 0 <= rg.index < len(task.rubrics) else None
    crit = (
        rub.criteria[cv.criterion_index]
        if rub is not None and 0 <= cv.criterion_index < len(rub.criteria)
        else None
    )
    text = escape(crit.text) if crit else "(criterion text unavailable)"
    breaks = rg.passed is False and _first_failed(rg) == f"criterion:{cv.criterion_index}"
    verdict = f'<b class="v-{escape(cv.verdict)}">{escape(cv.verdict)}</b>'
    if breaks:
        verdict += " (first failed link)"
    if tx is None:
        reasoning = evidence = "<i>not shown (see the note above)</i>"
    else:
        if tx.second_opinion:
            verdict += f"<br><i>second opinion: {escape(str(tx.second_opinion))}</i>"
        reasoning = _cut(tx.reasoning, limit)
        evidence = _cut(tx.evidence, limit)
        if tx.evidence_found is False:
            evidence += "<br><i>quote NOT found in deliverables</i>"
        elif tx.evidence_found:
            evidence += "<br><i>quote found</i>"
    cls = ' class="break"' if breaks else ""
    if compact:
        return (
            f"<tr{cls}><td>R{rg.index + 1}.{cv.criterion_index + 1}</td><td>{verdict}</td>"
            f'<td>{escape(cv.source)}</td><td class="q">{reasoning}</td><td class="q">'
            f"{evidence}</td></tr>"
        )
    return (
        f"<tr{cls}><td>R{rg.index + 1}.{cv.criterion_index + 1}"
        f"</td><td>{text}</td><td></td><td>{verdict}</td><td>{escape(cv.source)}</td>"
        f'<td class="q">{reasoning}</td><td class="q">{evidence}</td></tr>'
    )


def _marks(rg) -> str:
    """One rubric item's marks: ``R<n>`` and one mark per criterion; a passed item is plain
    text, a failed (``rf``) or undecided (``ru``) one a coloured span."""
    marks = "".join(
        _MARKS["pass"] if cv.verdict == "pass" else f"<b>{_MARKS.get(cv.verdict, '?')}</b>"
        for cv in rg.criteria
    )
    if rg.passed is True:
        return f"R{rg.index + 1} {marks}"
    return f'<span class="{"rf" if rg.passed is False else "ru"}">R{rg.index + 1} {marks}</span>'


def _trial_html(
    out: list[str],
    c: ConfigView,
    t: TrialResult,
    lt: LoadedTrial,
    task: Task | None,
    anchor: str,
    plan: DrillPlan,
    page_dir: Path | None,
    memo: DrillMemo,
) -> None:
    # compact: the state's description is left out (the section's states and the report's
    # legend name it); 40 bytes a trial at paper scale
    desc = (
        ""
        if plan.compact
        else f' <span class="small muted">{escape(STATE_DESCRIPTIONS[t.state])}</span>'
    )
    meta = _trial_meta(t, lt, c, _grade_href(lt, page_dir, memo), plan.compact)
    out.append(
        f'<div id="{anchor}"><h4>Epoch {t.epoch} <span class="state s-{t.state}">{t.state}</span>'
        f'{desc}</h4><p class="small">{meta}</p>'
    )
    if t.refused:
        out.append(
            '<p class="small"><span class="v-fail">Refused deliverable files (not graded; the '
            'rest of the trial was):</span></p><ul class="small">'
            + "".join(f"<li><code>{escape(r)}</code></li>" for r in t.refused)
            + "</ul>"
        )
    grade = lt.grade
    if grade is None or not grade.rubrics:
        if t.state == "no_deliverable":
            out.append(
                '<p class="small">No deliverable and no grade: scored 0 as an agent failure.</p>'
            )
        else:
            out.append('<p class="small">No grade to show.</p>')
        out.append("</div>")
        return
    if t.state == "no_deliverable":
        out.append(
            '<p class="small">No deliverable: scored 0 as an agent failure, whatever the grade of '
            "the empty output below says.</p>"
        )
    if plan.compact and lt.text_stats is not None and lt.text_stats.detail == 0:
        # every verdict is a pass shown as a mark only: no text is shown, so the grade file
        # is not read again
        texts, why = None, None
    else:
        texts, why = _verdict_texts(lt)
    if why:
        out.append(
            f'<p class="small v-judge_error">Reasoning and evidence not shown: {escape(why)}.</p>'
        )

    def tx(ri: int, ci: int) -> _Texts | None:
        if texts is None or ri >= len(texts) or ci >= len(texts[ri]):
            return None
        return texts[ri][ci]

    if not plan.compact:
        out.append(_HEAD)
        for ri, rg in enumerate(grade.rubrics):
            out.append(_rubric_row(rg, task, anchor))
            for ci, cv in enumerate(rg.criteria):
                out.append(_criterion_row(rg, cv, tx(ri, ci), task, plan.limit))
        out.append("</tbody></table></div>")
        return
    out.append(
        '<p class="marks">' + " ".join(_marks_memo(rg, memo) for rg in grade.rubrics) + "</p>"
    )
    rows: list[str] = []
    for ri, rg in enumerate(grade.rubrics):
        shown = []
        row_texts = texts[ri] if texts is not None and ri < len(texts) else None
        for ci, cv in enumerate(rg.criteria):
            t_ = row_texts[ci] if row_texts is not None and ci < len(row_texts) else None
            if cv.verdict != "pass" or (t_ is not None and _needs(cv, t_)):
                shown.append((0 if cv.verdict == "fail" else 1, ci, cv, t_))
        if shown or rg.passed is not True:
            rows.append(_rubric_row(rg, task, anchor, compact=True))
            for _, _, cv, t_ in sorted(shown, key=lambda x: (x[0], x[1])):
                rows.append(_criterion_row(rg, cv, t_, task, plan.limit, compact=True))
    if rows:
        out.append(_HEAD_COMPACT + "".join(rows) + "</tbody></table>")
    out.append("</div>")


def _marks_memo(rg, memo: DrillMemo) -> str:
    """:func:`_marks` of ``rg``, computed once per rubric grade object (``memo``)."""
    hit = memo.marks.get(id(rg))
    if hit is not None and hit[0] is rg:
        return hit[1]
    html = _marks(rg)
    memo.marks[id(rg)] = (rg, html)
    return html


def _needs(cv, tx: _Texts) -> bool:
    """:func:`jobbench.report._runs.needs_detail` for a slim verdict and its texts read again
    (the texts hold what the slim verdict lost: quote found, second opinion)."""
    if cv.verdict != "pass" or tx.evidence_found is False:
        return True
    return tx.second_opinion is not None and tx.second_opinion != cv.verdict


def occupation_line(tr) -> str:
    """The occupation, SOC major group and paper column of task result ``tr`` (escaped
    HTML, one line)."""
    occ = occupation_for(tr.occupation)
    cat = f" · paper column {escape(tr.paper_category)}" if tr.paper_category else ""
    return (
        f"{escape(occ.display_name)} · SOC {escape(occ.soc_major_code)} "
        f"{escape(occ.soc_major_title)}{cat}"
    )


def section(
    c: ConfigView,
    tr,
    trials: list[tuple[TrialResult, LoadedTrial]],
    plan: DrillPlan,
    *,
    main: str,
    page_dir: Path | None,
    summary: bool = True,
    memo: DrillMemo | None = None,
) -> str:
    """The drill-down ``<section>`` of configuration ``c`` on task result ``tr``.

    Args:
        c: the configuration; tr: its :class:`jobbench.scoring.TaskResult` on the task.
        trials: the task's trials of ``c`` with their loaded records, by epoch.
        plan: :func:`drill_plan` of the report.
        main: link prefix of ``report.html`` (``""`` inline, ``"../report.html"`` on a page).
        page_dir: directory of the HTML file the section goes into (for relative links to
            grade files; None: grade files are named, not linked).
        summary: open with the task's occupation line (:func:`occupation_line`) and figures
            (s_t, points, pass rates, verdict and trial counts); a drill-down page, whose
            header and index table show them, leaves them out.
        memo: reused across the sections of one report (a fresh one when None).

    Returns:
        HTML text (every run-file and deliverable text escaped).
    """
    num, pct = _tables.num, _tables.pct
    anchor = c.task_anchor(tr.task_id)
    task = c.run.tasks.get(tr.task_id)
    slug = anchor_slug(tr.task_id)
    states = (
        " ".join(f'<span class="state s-{s}">{n} {s}</span>' for s, n in tr.states.items())
        or f"no trial ({escape(tr.missing_reason or '')})"
    )
    # a drill-down page names the task's occupation once, above its sections
    where = f"{occupation_line(tr)} · " if summary else ""
    out = [
        f'<section class="drill" id="{anchor}"><h3>{escape(tr.task_id)} — {escape(c.label)}</h3>'
        f'<p class="small">{where}run {escape(c.run.name)} · '
        f'<a href="{main}#task-{slug}">task row</a> · <a href="{main}#{c.anchor}">leaderboard '
        "row</a></p>"
    ]
    if summary:
        out.append(
            "<table><tr><th>s<sub>t</sub> %</th><th>points / max</th><th>rubric pass %</th>"
            "<th>criterion pass %</th><th>judge_error verdicts</th><th>unjudged verdicts</th>"
            "<th>trials</th></tr>"
            f'<tr><td class="n">{"missing (counts 0)" if tr.missing else pct(tr.score)}</td>'
            f'<td class="n">{num(tr.points, 2)} / {num(tr.max_points, 2)}</td>'
            f'<td class="n">{pct(tr.rubric_pass_rate)}</td><td class="n">'
            f'{pct(tr.criterion_pass_rate)}</td><td class="n">{tr.judge_errors}</td>'
            f'<td class="n">{tr.unjudged}</td><td>{states}</td></tr></table>'
        )
    memo = memo if memo is not None else DrillMemo()
    for t, lt in trials:
        _trial_html(out, c, t, lt, task, f"{anchor}-e{t.epoch}", plan, page_dir, memo)
    out.append('<p class="small"><a href="#top">top</a></p></section>')
    return "".join(out)
