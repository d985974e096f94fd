"""Annotator review round-trip (the paper's second gate: annotators prune weak criteria).

``export_review`` writes a workbook with two sheets:

* ``criteria``: one row per criterion with the task, rubric, weight, criterion text, its
  check, lint findings, solve-trial pass count, oracle verdict and decoy verdicts, then the
  reviewer's columns **decision** (a dropdown: keep / edit / prune), **edited text** and
  **comment**;
* ``rubrics``: one row per rubric with ``requires`` / ``required by`` and a decision
  dropdown (keep / prune) to drop a whole rubric item.

Each row carries a fingerprint of the text it was exported from, so a sheet can only be
applied to the RUBRICS.json it was made from.

``apply_review`` reads the sheet back and, if every decision is valid, writes the revised
RUBRICS.json files atomically and a changelog (markdown + JSON). It refuses (and writes
nothing) when a decision would leave a rubric with no criteria, remove a rubric that a kept
rubric ``requires``, leave a task without positive weight, or when the revised file does not
validate with :func:`jobbench.tasks.parse_rubrics`. After writing, each task is re-loaded
with :func:`jobbench.tasks.load_task`.
"""

from __future__ import annotations

import copy
import datetime as _dt
import hashlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from .._io import atomic_write_bytes, atomic_write_json, atomic_write_text
from ..tasks import RUBRICS, Dataset, Task, display_path, load_task, parse_rubrics

CRITERIA_SHEET = "criteria"
RUBRICS_SHEET = "rubrics"
README_SHEET = "README"
CRITERION_DECISIONS = ("keep", "edit", "prune")
RUBRIC_DECISIONS = ("keep", "prune")

CRITERIA_COLUMNS: tuple[str, ...] = (
    "task",
    "rubric",
    "rubric id",
    "rubric question",
    "weight",
    "criterion",
    "criterion text",
    "check",
    "lint",
    "solve passes",
    "oracle",
    "decoys",
    "decision",
    "edited text",
    "comment",
    "fingerprint",
)
"""Header of the ``criteria`` sheet; ``rubric`` and ``criterion`` are 0-based indexes."""

RUBRIC_COLUMNS: tuple[str, ...] = (
    "task",
    "rubric",
    "rubric id",
    "rubric question",
    "weight",
    "criteria",
    "requires",
    "required by",
    "decision",
    "comment",
    "fingerprint",
)
"""Header of the ``rubrics`` sheet."""


def fingerprint(text: str) -> str:
    """First 16 hex digits of sha256 of ``text`` (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _rubric_fingerprint(task: Task, index: int) -> str:
    r = task.rubrics[index]
    return fingerprint(
        json.dumps([r.question, r.weight, [c.text for c in r.criteria]], ensure_ascii=False)
    )


def _check_summary(check: Any) -> str:
    if check is None:
        return ""
    data = check.model_dump(exclude_none=True, exclude_defaults=True)
    data = {"kind": check.kind, **{k: v for k, v in data.items() if k != "kind"}}
    return json.dumps(data, ensure_ascii=False)


@dataclass
class ReviewContext:
    """What the export shows beside each criterion (all optional).

    Attributes:
        lint: task id -> JSON path (``rubrics[i].criterion[j]``) -> finding lines.
        solve: task id -> ``"i.j"`` -> (passes, trials).
        oracle: task id -> ``"i.j"`` -> verdict text.
        decoys: task id -> ``"i.j"`` -> decoy verdict texts.
    """

    lint: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    solve: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)
    oracle: dict[str, dict[str, str]] = field(default_factory=dict)
    decoys: dict[str, dict[str, list[str]]] = field(default_factory=dict)


def export_review(dataset: Dataset, out: Path, context: ReviewContext | None = None) -> Path:
    """Write the review workbook.

    Args:
        dataset: the tasks to review (invalid tasks are not in it).
        out: the ``.xlsx`` path to write (atomically; parent folders are created).
        context: lint findings, solve-trial counts, oracle and decoy verdicts to show.

    Returns:
        ``out``.
    """
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font, PatternFill
    from openpyxl.worksheet.datavalidation import DataValidation

    ctx = context or ReviewContext()
    wb = Workbook()
    ws = wb.active
    ws.title = CRITERIA_SHEET
    ws.append(list(CRITERIA_COLUMNS))
    for t in dataset.tasks:
        for r in t.rubrics:
            for c in r.criteria:
                key = f"{r.index}.{c.index}"
                where = f"rubrics[{r.index}].criterion[{c.index}]"
                solve = ctx.solve.get(t.id, {}).get(key)
                ws.append(
                    [
                        t.id,
                        r.index,
                        r.id,
                        r.question,
                        r.weight,
                        c.index,
                        c.text,
                        _check_summary(c.check),
                        "\n".join(ctx.lint.get(t.id, {}).get(where, [])),
                        f"{solve[0]}/{solve[1]}" if solve else "",
                        ctx.oracle.get(t.id, {}).get(key, ""),
                        "\n".join(ctx.decoys.get(t.id, {}).get(key, [])),
                        None,
                        None,
                        None,
                        fingerprint(c.text),
                    ]
                )
    rws = wb.create_sheet(RUBRICS_SHEET)
    rws.append(list(RUBRIC_COLUMNS))
    for t in dataset.tasks:
        for r in t.rubrics:
            required_by = [o.index for o in t.rubrics if r.index in o.requires]
            rws.append(
                [
                    t.id,
                    r.index,
                    r.id,
                    r.question,
                    r.weight,
                    len(r.criteria),
                    ", ".join(map(str, r.requires)),
                    ", ".join(map(str, required_by)),
                    None,
                    None,
                    _rubric_fingerprint(t, r.index),
                ]
            )

    header_fill = PatternFill("solid", fgColor="DDEBF7")
    review_fill = PatternFill("solid", fgColor="FFF2CC")
    widths = {
        "rubric question": 40,
        "criterion text": 60,
        "check": 30,
        "lint": 40,
        "decoys": 30,
        "edited text": 60,
        "comment": 40,
        "oracle": 20,
        "task": 32,
    }
    for sheet, cols, decisions, editable in (
        (ws, CRITERIA_COLUMNS, CRITERION_DECISIONS, ("decision", "edited text", "comment")),
        (rws, RUBRIC_COLUMNS, RUBRIC_DECISIONS, ("decision", "comment")),
    ):
        sheet.freeze_panes = "A2"
        for k, name in enumerate(cols, start=1):
            cell = sheet.cell(row=1, column=k)
            cell.font = Font(bold=True)
            cell.fill = review_fill if name in editable else header_fill
            letter = cell.column_letter
            sheet.column_dimensions[letter].width = widths.get(name, 12)
            if name == "fingerprint":
                sheet.column_dimensions[letter].hidden = True
        for row in sheet.iter_rows(min_row=2):
            for cell in row:
                cell.alignment = Alignment(wrap_text=True, vertical="top")
        col = cols.index("decision") + 1
        letter = sheet.cell(row=1, column=col).column_letter
        dv = DataValidation(
            type="list",
            formula1='"' + ",".join(decisions) + '"',
            allow_blank=True,
            showErrorMessage=True,
            errorTitle="decision",
            error="Choose " + ", ".join(decisions) + " (empty = keep).",
        )
        dv.add(f"{letter}2:{letter}{max(sheet.max_row, 2)}")
        sheet.add_data_validation(dv)
        sheet.auto_filter.ref = sheet.dimensions

    readme = wb.create_sheet(README_SHEET)
    for line in (
        ["JobBench rubric review"],
        [
            f"exported {_dt.datetime.now(_dt.UTC).isoformat(timespec='seconds')} from "
            f"{display_path(dataset.root)}"
        ],
        [""],
        ["criteria sheet: set decision to keep, edit or prune (empty = keep)."],
        [
            "edit: write the new criterion in 'edited text'. prune: the criterion is removed from "
            "its rubric."
        ],
        [
            "rubrics sheet: prune removes a whole rubric item (refused if another kept rubric "
            "requires it)."
        ],
        ["A rubric may not lose all its criteria; prune the rubric instead."],
        ["Apply with: jobbench review apply PATH THIS_FILE  (re-export after applying)."],
        ["Do not edit the task, rubric, criterion or fingerprint columns."],
    ):
        readme.append(line)
    readme.column_dimensions["A"].width = 110

    buf = io.BytesIO()
    wb.save(buf)
    out = Path(out)
    atomic_write_bytes(out, buf.getvalue())
    return out


# --- apply --------------------------------------------------------------------------------


class ReviewError(ValueError):
    """The sheet cannot be applied; ``problems`` lists every reason (sheet, row, column)."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


class Change(BaseModel):
    """One change applied to a task's rubrics.

    Attributes:
        action: ``edit``, ``prune`` (a criterion) or ``prune-rubric``.
        rubric, criterion: positions in the file *before* the change (criterion None for
            rubric pruning).
        old, new: old and new text ('' for new when pruning).
        comment: the reviewer's comment.
    """

    action: str
    rubric: int
    criterion: int | None = None
    old: str
    new: str = ""
    comment: str = ""


class TaskChanges(BaseModel):
    """Changes to one task with the file's digests before and after."""

    task_id: str
    file: str
    changes: list[Change] = Field(default_factory=list)
    sha256_before: str = ""
    sha256_after: str = ""
    requires_renumbered: bool = False


class ReviewResult(BaseModel):
    """What ``apply_review`` did.

    Attributes:
        sheet: the workbook applied.
        tasks: tasks whose RUBRICS.json changed (or would change with ``dry_run``).
        kept: criteria explicitly or implicitly (empty decision) kept.
        comments: reviewer comments on kept criteria (task, location, text).
        changelog: paths written (markdown, JSON); empty for a dry run.
        dry_run: nothing was written.
    """

    sheet: str
    tasks: list[TaskChanges] = Field(default_factory=list)
    kept: int = 0
    comments: list[dict[str, str]] = Field(default_factory=list)
    changelog: list[str] = Field(default_factory=list)
    dry_run: bool = False


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v).strip()


def _read_sheet(
    wb: Any, name: str, columns: tuple[str, ...], required: tuple[str, ...], problems: list[str]
) -> list[tuple[int, dict[str, str]]]:
    if name not in wb.sheetnames:
        return []
    ws = wb[name]
    rows = list(ws.iter_rows(values_only=True))
    if not rows:
        return []
    header = [_cell(h).lower() for h in rows[0]]
    missing = [c for c in required if c not in header]
    if missing:
        problems.append(f"sheet {name!r}: missing column(s) {', '.join(missing)}")
        return []
    idx = {c: header.index(c) for c in columns if c in header}
    out: list[tuple[int, dict[str, str]]] = []
    for n, row in enumerate(rows[1:], start=2):
        vals = {c: _cell(row[i]) if i < len(row) else "" for c, i in idx.items()}
        if not any(vals.values()):
            continue
        out.append((n, vals))
    return out


def _int(v: str) -> int | None:
    try:
        return int(v)
    except ValueError:
        return None


def apply_review(
    dataset: Dataset, sheet: Path, *, dry_run: bool = False, changelog: Path | None = None
) -> ReviewResult:
    """Apply a filled-in review workbook to the dataset's RUBRICS.json files.

    Args:
        dataset: the tasks the sheet was exported from.
        sheet: the ``.xlsx`` workbook.
        dry_run: validate and report, write nothing.
        changelog: base path of the changelog (default: next to the sheet,
            ``<sheet stem>.changelog``); ``<base>.md`` and ``<base>.json`` are written (a
            given ``.md``/``.json`` suffix is dropped first).

    Returns:
        A :class:`ReviewResult`.

    Raises:
        FileNotFoundError: the workbook does not exist.
        ReviewError: any decision is invalid or unsafe; nothing was written.
    """
    from openpyxl import load_workbook

    sheet = Path(sheet)
    if not sheet.is_file():
        raise FileNotFoundError(f"{display_path(sheet)}: no such file")
    try:
        wb = load_workbook(sheet, read_only=True, data_only=True)
    except Exception as exc:  # noqa: BLE001 - openpyxl raises several types for bad files
        raise ReviewError(
            [f"{display_path(sheet)}: not a readable .xlsx workbook ({exc})"]
        ) from exc
    problems: list[str] = []
    sname = display_path(sheet)
    if CRITERIA_SHEET not in wb.sheetnames:
        raise ReviewError([f"{sname}: no sheet named {CRITERIA_SHEET!r}"])
    crit_rows = _read_sheet(
        wb,
        CRITERIA_SHEET,
        CRITERIA_COLUMNS,
        ("task", "rubric", "criterion", "decision", "edited text", "fingerprint"),
        problems,
    )
    rub_rows = _read_sheet(
        wb, RUBRICS_SHEET, RUBRIC_COLUMNS, ("task", "rubric", "decision", "fingerprint"), problems
    )
    wb.close()
    tasks = {t.id: t for t in dataset.tasks}

    # decisions[task][rubric][criterion] = (decision, text, comment)
    crit_dec: dict[str, dict[tuple[int, int], tuple[str, str, str]]] = {}
    rub_dec: dict[str, dict[int, tuple[str, str]]] = {}
    result = ReviewResult(sheet=sname, dry_run=dry_run)

    for n, row in crit_rows:
        loc = f"{sname}: {CRITERIA_SHEET}!row {n}"
        tid = row["task"]
        t = tasks.get(tid)
        r, j = _int(row["rubric"]), _int(row["criterion"])
        if t is None:
            problems.append(f"{loc}: task {tid!r} is not in {display_path(dataset.root)}")
            continue
        if (
            r is None
            or j is None
            or not 0 <= r < len(t.rubrics)
            or not 0 <= j < len(t.rubrics[r].criteria)
        ):
            problems.append(
                f"{loc}: rubric {row['rubric']!r} / criterion {row['criterion']!r} does not exist "
                f"in {tid}"
            )
            continue
        current = t.rubrics[r].criteria[j].text
        if row["fingerprint"] != fingerprint(current):
            problems.append(
                f"{loc}: {tid} rubrics[{r}].criterion[{j}] changed since the export "
                "(fingerprint mismatch); re-export and review again"
            )
            continue
        decision = row["decision"].lower()
        text = row.get("edited text", "")
        comment = row.get("comment", "")
        if decision == "":
            decision = "keep"
        if decision not in CRITERION_DECISIONS:
            problems.append(
                f"{loc}: decision {row['decision']!r} is not one of "
                f"{', '.join(CRITERION_DECISIONS)}"
            )
            continue
        if decision == "edit" and not text:
            problems.append(f"{loc}: decision 'edit' needs the new text in 'edited text'")
            continue
        if decision != "edit" and text:
            problems.append(
                f"{loc}: 'edited text' is filled in but the decision is {decision!r}; "
                "set the decision to 'edit' or clear the text"
            )
            continue
        if decision == "edit" and " ".join(text.split()) == " ".join(current.split()):
            problems.append(f"{loc}: 'edited text' equals the current criterion; use 'keep'")
            continue
        key = (r, j)
        if key in crit_dec.setdefault(tid, {}):
            problems.append(f"{loc}: {tid} rubrics[{r}].criterion[{j}] appears twice in the sheet")
            continue
        crit_dec[tid][key] = (decision, text, comment)

    for n, row in rub_rows:
        loc = f"{sname}: {RUBRICS_SHEET}!row {n}"
        tid = row["task"]
        t = tasks.get(tid)
        r = _int(row["rubric"])
        if t is None:
            problems.append(f"{loc}: task {tid!r} is not in {display_path(dataset.root)}")
            continue
        if r is None or not 0 <= r < len(t.rubrics):
            problems.append(f"{loc}: rubric {row['rubric']!r} does not exist in {tid}")
            continue
        if row["fingerprint"] != _rubric_fingerprint(t, r):
            problems.append(
                f"{loc}: {tid} rubrics[{r}] changed since the export (fingerprint mismatch)"
            )
            continue
        decision = row["decision"].lower() or "keep"
        if decision not in RUBRIC_DECISIONS:
            problems.append(
                f"{loc}: decision {row['decision']!r} is not one of {', '.join(RUBRIC_DECISIONS)}"
            )
            continue
        if r in rub_dec.setdefault(tid, {}):
            problems.append(f"{loc}: {tid} rubrics[{r}] appears twice in the sheet")
            continue
        rub_dec[tid][r] = (decision, row.get("comment", ""))

    # --- plan per task -------------------------------------------------------------------
    plans: list[tuple[Task, dict[str, Any], TaskChanges]] = []
    for tid in sorted(set(crit_dec) | set(rub_dec)):
        t = tasks[tid]
        cdec = crit_dec.get(tid, {})
        rdec = rub_dec.get(tid, {})
        pruned_rubrics = {r for r, (d, _) in rdec.items() if d == "prune"}
        for (r, j), (d, _, comment) in sorted(cdec.items()):
            if d == "keep":
                result.kept += 1
                if comment:
                    result.comments.append(
                        {"task": tid, "where": f"rubrics[{r}].criterion[{j}]", "comment": comment}
                    )
        if not any(d != "keep" for d, _, _ in cdec.values()) and not pruned_rubrics:
            continue
        rubric_path = t.root / RUBRICS
        loc = display_path(rubric_path)
        for r in sorted(pruned_rubrics):
            for other in t.rubrics:
                if other.index not in pruned_rubrics and r in other.requires:
                    problems.append(
                        f"{loc}: pruning rubrics[{r}] breaks the requires chain of kept "
                        f"rubrics[{other.index}] ({other.question[:60]!r}); prune or edit both"
                    )
        for rub in t.rubrics:
            if rub.index in pruned_rubrics:
                continue
            left = [
                c
                for c in rub.criteria
                if cdec.get((rub.index, c.index), ("keep", "", ""))[0] != "prune"
            ]
            if not left:
                problems.append(
                    f"{loc}: the decisions prune every criterion of rubrics[{rub.index}] "
                    f"({rub.question[:60]!r}); a rubric cannot be empty (prune the rubric on the "
                    f"{RUBRICS_SHEET!r} sheet instead)"
                )
        if len(pruned_rubrics) == len(t.rubrics):
            problems.append(f"{loc}: the decisions prune every rubric of {tid}")
            continue
        raw_bytes = rubric_path.read_bytes()
        try:
            doc = json.loads(raw_bytes.decode("utf-8-sig"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            problems.append(f"{loc}: cannot be re-read ({exc})")
            continue
        new_doc, changes, renumbered = _revise(doc, t, cdec, rdec)
        tc = TaskChanges(
            task_id=tid,
            file=loc,
            changes=changes,
            sha256_before=hashlib.sha256(raw_bytes).hexdigest(),
            requires_renumbered=renumbered,
        )
        _, _, found = parse_rubrics(new_doc, loc)
        for p in found:
            if p.severity == "error":
                problems.append(f"revised {p}")
        plans.append((t, new_doc, tc))

    if problems:
        raise ReviewError(problems)

    # --- write ---------------------------------------------------------------------------
    for t, new_doc, tc in plans:
        text = json.dumps(new_doc, indent=2, ensure_ascii=False) + "\n"
        tc.sha256_after = hashlib.sha256(text.encode("utf-8")).hexdigest()
        result.tasks.append(tc)
        if not dry_run:
            atomic_write_text(t.root / RUBRICS, text)
    if not dry_run:
        reload_errors = []
        for t, _, _ in plans:
            try:
                load_task(t.root, t.split, t.occupation)
            except Exception as exc:  # noqa: BLE001 - report every reload failure
                reload_errors.append(f"{display_path(t.root)}: revised task no longer loads: {exc}")
        base = Path(changelog) if changelog else sheet.with_name(f"{sheet.stem}.changelog")
        if base.suffix.lower() in (".md", ".json"):
            base = base.with_suffix("")
        md, js = base.with_name(base.name + ".md"), base.with_name(base.name + ".json")
        result.changelog = [display_path(md), display_path(js)]
        atomic_write_json(js, result)
        atomic_write_text(md, changelog_markdown(result))
        if reload_errors:  # pragma: no cover - parse_rubrics validated the same document
            raise ReviewError(reload_errors)
    return result


def _revise(
    doc: dict[str, Any],
    task: Task,
    cdec: dict[tuple[int, int], tuple[str, str, str]],
    rdec: dict[int, tuple[str, str]],
) -> tuple[dict[str, Any], list[Change], bool]:
    """Apply decisions to a parsed RUBRICS.json, keeping unknown keys, ids and key order."""
    new = copy.deepcopy(doc)
    key = task.rubrics_key
    items: list[dict[str, Any]] = new[key]
    changes: list[Change] = []
    pruned = sorted(r for r, (d, _) in rdec.items() if d == "prune")
    for r in range(len(items)):
        if r in pruned:
            continue
        item = items[r]
        crit = item["criterion"]
        checks = item.get("checks") if isinstance(item.get("checks"), list) else None
        keep_idx: list[int] = []
        for j in range(len(crit)):
            d, text, comment = cdec.get((r, j), ("keep", "", ""))
            if d == "prune":
                changes.append(
                    Change(action="prune", rubric=r, criterion=j, old=crit[j], comment=comment)
                )
                continue
            if d == "edit":
                changes.append(
                    Change(
                        action="edit", rubric=r, criterion=j, old=crit[j], new=text, comment=comment
                    )
                )
                crit[j] = text
            keep_idx.append(j)
        item["criterion"] = [crit[j] for j in keep_idx]
        if checks is not None:
            item["checks"] = [checks[j] for j in keep_idx if j < len(checks)]
    renumbered = False
    if pruned:
        old_to_new: dict[int, int] = {}
        for r in range(len(items)):
            if r not in pruned:
                old_to_new[r] = len(old_to_new)
        for r in pruned:
            changes.append(
                Change(
                    action="prune-rubric",
                    rubric=r,
                    old=task.rubrics[r].question,
                    comment=rdec[r][1],
                )
            )
        kept_items = []
        for r, item in enumerate(items):
            if r in pruned:
                continue
            req = item.get("requires")
            if isinstance(req, list):
                new_req = []
                for target in req:
                    if isinstance(target, int) and not isinstance(target, bool):
                        if target in old_to_new:
                            if old_to_new[target] != target:
                                renumbered = True
                            new_req.append(old_to_new[target])
                        # a pruned target was refused earlier; nothing to keep
                    else:
                        new_req.append(target)
                item["requires"] = new_req
            kept_items.append(item)
        new[key] = kept_items
    return new, changes, renumbered


def changelog_markdown(result: ReviewResult) -> str:
    """The changelog as markdown (one section per task)."""
    lines = [
        "# Rubric review changelog",
        "",
        f"Applied {result.sheet} on {_dt.datetime.now(_dt.UTC).isoformat(timespec='seconds')}.",
        "",
    ]
    n_changes = sum(len(t.changes) for t in result.tasks)
    lines += [
        f"{len(result.tasks)} task(s) changed, {n_changes} change(s); {result.kept} criteria kept.",
        "",
    ]
    for t in result.tasks:
        lines += [
            f"## {t.task_id}",
            "",
            f"`{t.file}` sha256 {t.sha256_before[:12]} → {t.sha256_after[:12]}"
            + (" (integer `requires` renumbered)" if t.requires_renumbered else ""),
            "",
        ]
        for c in t.changes:
            where = f"rubrics[{c.rubric}]" + (
                f".criterion[{c.criterion}]" if c.criterion is not None else ""
            )
            if c.action == "edit":
                lines.append(f"- **edit** {where}: ~~{c.old}~~ → {c.new}")
            elif c.action == "prune":
                lines.append(f"- **prune** {where}: ~~{c.old}~~")
            else:
                lines.append(f"- **prune rubric** {where}: ~~{c.old}~~")
            if c.comment:
                lines.append(f"  - comment: {c.comment}")
        lines.append("")
    if result.comments:
        lines += ["## Comments on kept criteria", ""]
        lines += [f"- {c['task']} {c['where']}: {c['comment']}" for c in result.comments]
        lines.append("")
    return "\n".join(lines)
