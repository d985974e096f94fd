"""WORKBank (Shao et al., 2025, arXiv:2506.06576) loaders and per-task aggregation.

WORKBank's public files (Hugging Face dataset ``SALT-NLP/WORKBank``, CC BY 4.0) hold one
row per worker × task (automation desire, 1–5), one row per expert × task (automation
capability, 1–5) and one row per candidate O*NET task (metadata). This module reads them
and computes, per task, the mean worker desire ``A_w(t)`` and the mean expert capability
``A_e(t)``, and the four WORKBank zones.

Aggregation that reproduces the paper (checked in ``tests/selection``): tasks are keyed by
``Task ID``; ``A_w`` = mean of every ``Automation Desire Rating`` row of the task, ``A_e`` =
mean of every ``Automation Capacity Rating`` row (duplicate expert rows included, as
upstream); only tasks having both kinds of rating are kept (844 tasks, 104 occupations);
zones cut both axes at 3.0 inclusive. Grouping by the ``Task`` text instead, as the upstream
notebooks do, yields the same 844 tasks because every rated text has a single id.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from enum import Enum
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ._errors import DataFileError
from ._table import parse_number, parse_rating, read_table

OCC = "Occupation (O*NET-SOC Title)"
DESIRE = "Automation Desire Rating"
CAPABILITY = "Automation Capacity Rating"
ZONE_CUT = 3.0
"""WORKBank's fixed cut on both axes (inclusive: a mean of exactly 3.0 counts as high)."""


class Zone(str, Enum):
    """WORKBank's desire–capability zones (paper §4; cut 3.0 inclusive on both axes)."""

    green_light = "Green Light"
    red_light = "Red Light"
    rnd_opportunity = "R&D Opportunity"
    low_priority = "Low Priority"


def zone_of(desire: float, capability: float, cut: float = ZONE_CUT) -> Zone:
    """The zone of a task with mean desire ``desire`` and mean capability ``capability``.

    Green Light: capability ≥ cut and desire ≥ cut; Red Light: capability ≥ cut, desire <
    cut; R&D Opportunity: capability < cut, desire ≥ cut; Low Priority: both < cut.
    """
    if capability >= cut:
        return Zone.green_light if desire >= cut else Zone.red_light
    return Zone.rnd_opportunity if desire >= cut else Zone.low_priority


class Rating(BaseModel):
    """One rating row (worker desire or expert capability).

    Attributes:
        task_id: O*NET Task ID as text.
        occupation: O*NET-SOC 2019 title.
        task: the task statement.
        rater: ``User ID`` (worker uuid or expert pseudonym).
        value: the 1–5 rating.
        line: 1-based line in the source file.
    """

    model_config = ConfigDict(frozen=True)

    task_id: str
    occupation: str
    task: str
    rater: str
    value: int
    line: int


class TaskMeta(BaseModel):
    """One candidate task of ``task_statement_with_metadata.csv``.

    Attributes:
        onet_soc_code: O*NET-SOC 2019 code ``NN-NNNN.NN``.
        occupation, task_id, task, task_type: as in the file.
        importance: O*NET task importance (1–5) or None.
        employment, mean_wage: OEWS May 2024 ``TOT_EMP`` and ``A_MEAN`` (jobs, US dollars
            per year) as WORKBank copied them; None where WORKBank left them empty (every
            ``.01``–``.11`` code and the OEWS-aggregated codes; see
            :func:`jobbench.selection.join_oews`).
    """

    model_config = ConfigDict(frozen=True)

    onet_soc_code: str
    occupation: str
    task_id: str
    task: str
    task_type: str
    importance: float | None = None
    employment: float | None = None
    mean_wage: float | None = None


class TaskRating(BaseModel):
    """Aggregated ratings of one task.

    Attributes:
        task_id, occupation, task: as in the worker file.
        desire: mean worker ``Automation Desire Rating`` (1–5).
        capability: mean expert ``Automation Capacity Rating`` (1–5).
        n_workers, n_experts: number of rating rows averaged.
        zone: :func:`zone_of` at the 3.0 cut.
        onet_soc_code: from the task metadata, or None when no metadata was given.
    """

    model_config = ConfigDict(frozen=True)

    task_id: str
    occupation: str
    task: str
    desire: float
    capability: float
    n_workers: int
    n_experts: int
    zone: Zone
    onet_soc_code: str | None = None


def _check_text(path: Path, line: int, column: str, value: str) -> str:
    value = value.strip()
    if not value:
        raise DataFileError(path, "empty value", column=column, line=line)
    return value


def _load_ratings(path: Path | str, column: str, what: str) -> list[Rating]:
    table = read_table(path, ["Task ID", OCC, "Task", "User ID", column], what=what)
    out: list[Rating] = []
    text_of: dict[str, tuple[str, str, int]] = {}
    for i, row in enumerate(table.rows):
        line = table.lines[i]
        tid = _check_text(table.path, line, "Task ID", row["Task ID"])
        occ = _check_text(table.path, line, OCC, row[OCC])
        task = _check_text(table.path, line, "Task", row["Task"])
        seen = text_of.setdefault(tid, (occ, task, line))
        if seen[:2] != (occ, task):
            raise DataFileError(
                table.path,
                f"Task ID {tid} has a different occupation/task text than on line {seen[2]}",
                column="Task",
                line=line,
            )
        out.append(
            Rating(
                task_id=tid,
                occupation=occ,
                task=task,
                rater=row["User ID"].strip(),
                value=parse_rating(table, i, column),
                line=line,
            )
        )
    if not out:
        raise DataFileError(table.path, f"{what} has no rating rows", column=column)
    return out


def load_worker_desires(path: Path | str) -> list[Rating]:
    """Read ``domain_worker_desires.csv`` (one row per worker × task).

    Required columns: ``Task ID``, ``Occupation (O*NET-SOC Title)``, ``Task``, ``User ID``,
    ``Automation Desire Rating`` (integer 1–5). Other columns are ignored.

    Raises:
        DataFileError: missing file or column, a rating that is not an integer 1–5, an empty
            key, or a Task ID whose text/occupation changes between rows.
    """
    return _load_ratings(path, DESIRE, "WORKBank worker desire file")


def load_expert_capability(path: Path | str) -> list[Rating]:
    """Read ``expert_rated_technological_capability.csv`` (one row per expert × task).

    Required columns: ``Task ID``, ``Occupation (O*NET-SOC Title)``, ``Task``, ``User ID``,
    ``Automation Capacity Rating`` (integer 1–5). Errors as :func:`load_worker_desires`.
    """
    return _load_ratings(path, CAPABILITY, "WORKBank expert capability file")


def load_task_metadata(path: Path | str) -> list[TaskMeta]:
    """Read ``task_statement_with_metadata.csv`` (one row per candidate task, 2,131 rows).

    Required columns: ``O*NET-SOC Code``, ``Occupation (O*NET-SOC Title)``, ``Task ID``,
    ``Task``, ``Task Type``; optional ``Importance``, ``Occupation Employment``,
    ``Occupation Mean Annual Wage`` (empty cells allowed).

    Raises:
        DataFileError: missing file or column, a malformed O*NET-SOC code, a duplicate
            Task ID, an occupation title with two codes, or a non-numeric optional value.
    """
    table = read_table(
        path,
        ["O*NET-SOC Code", OCC, "Task ID", "Task", "Task Type"],
        optional=["Importance", "Occupation Employment", "Occupation Mean Annual Wage"],
        what="WORKBank task metadata file",
    )
    out: list[TaskMeta] = []
    seen: dict[str, int] = {}
    code_of: dict[str, tuple[str, int]] = {}
    from ._oews import normalise_onet_code

    for i, row in enumerate(table.rows):
        line = table.lines[i]
        tid = _check_text(table.path, line, "Task ID", row["Task ID"])
        if tid in seen:
            raise DataFileError(
                table.path,
                f"duplicate Task ID {tid} (first on line {seen[tid]})",
                column="Task ID",
                line=line,
            )
        seen[tid] = line
        try:
            code = normalise_onet_code(row["O*NET-SOC Code"])
        except ValueError as exc:
            raise DataFileError(table.path, str(exc), column="O*NET-SOC Code", line=line) from None
        occ = _check_text(table.path, line, OCC, row[OCC])
        prev = code_of.setdefault(occ, (code, line))
        if prev[0] != code:
            raise DataFileError(
                table.path,
                f"occupation {occ!r} has code {code} here but {prev[0]} on line {prev[1]}",
                column="O*NET-SOC Code",
                line=line,
            )
        opt = {
            key: parse_number(table, i, col, allow_empty=True)[0] if col in row else None
            for key, col in (
                ("importance", "Importance"),
                ("employment", "Occupation Employment"),
                ("mean_wage", "Occupation Mean Annual Wage"),
            )
        }
        out.append(
            TaskMeta(
                onet_soc_code=code,
                occupation=occ,
                task_id=tid,
                task=_check_text(table.path, line, "Task", row["Task"]),
                task_type=row["Task Type"].strip(),
                **opt,
            )
        )
    return out


def occupation_codes(metadata: Iterable[TaskMeta]) -> dict[str, str]:
    """Map O*NET-SOC 2019 title → code from the task metadata."""
    return {m.occupation: m.onet_soc_code for m in metadata}


def task_ratings(
    desires: list[Rating],
    capability: list[Rating],
    metadata: list[TaskMeta] | None = None,
) -> list[TaskRating]:
    """Per-task mean desire and capability for the tasks that have both kinds of rating.

    Args:
        desires: :func:`load_worker_desires` rows.
        capability: :func:`load_expert_capability` rows.
        metadata: optional :func:`load_task_metadata` rows, to attach O*NET-SOC codes.

    Returns:
        one :class:`TaskRating` per Task ID present in both files, sorted by occupation
        then Task ID (numerically when the id is a number). Tasks rated by experts only
        (ids 1252 and 21448 in the public release) or by workers only are left out.
    """
    des: dict[str, list[int]] = defaultdict(list)
    cap: dict[str, list[int]] = defaultdict(list)
    info: dict[str, Rating] = {}
    for r in desires:
        des[r.task_id].append(r.value)
        info.setdefault(r.task_id, r)
    for r in capability:
        cap[r.task_id].append(r.value)
    code_of = {m.task_id: m.onet_soc_code for m in metadata or []}
    out = []
    for tid, values in des.items():
        if tid not in cap:
            continue
        d = sum(values) / len(values)
        c = sum(cap[tid]) / len(cap[tid])
        r = info[tid]
        out.append(
            TaskRating(
                task_id=tid,
                occupation=r.occupation,
                task=r.task,
                desire=d,
                capability=c,
                n_workers=len(values),
                n_experts=len(cap[tid]),
                zone=zone_of(d, c),
                onet_soc_code=code_of.get(tid),
            )
        )
    out.sort(key=lambda t: (t.occupation, int(t.task_id) if t.task_id.isdigit() else 0, t.task_id))
    return out


class WorkbankFigures(BaseModel):
    """WORKBank's headline figures recomputed from the public files.

    Attributes:
        n_tasks, n_occupations: tasks with both ratings and their distinct occupations.
        n_ratings_worker, n_ratings_expert: rating rows behind those tasks.
        n_desire_gt3, pct_desire_gt3: tasks with mean desire strictly above 3 (paper: 46.1 %).
        pct_desire_ge4, pct_desire_le2: shares (%) with mean desire ≥ 4 and ≤ 2.
        zones: zone name → number of tasks.
        top_task: ``"<occupation>: <task>"`` with the highest mean desire (ties: first in
            :func:`task_ratings` order), and ``top_desire`` its mean.
    """

    n_tasks: int
    n_occupations: int
    n_ratings_worker: int
    n_ratings_expert: int
    n_desire_gt3: int
    pct_desire_gt3: float
    pct_desire_ge4: float
    pct_desire_le2: float
    zones: dict[str, int]
    top_task: str
    top_desire: float


def workbank_figures(tasks: list[TaskRating]) -> WorkbankFigures:
    """Compute :class:`WorkbankFigures` from :func:`task_ratings` output.

    Raises:
        ValueError: if ``tasks`` is empty.
    """
    if not tasks:
        raise ValueError("no rated tasks")
    n = len(tasks)
    gt3 = sum(t.desire > 3 for t in tasks)
    top = max(tasks, key=lambda t: t.desire)
    zones = {z.value: 0 for z in Zone}
    for t in tasks:
        zones[t.zone.value] += 1
    return WorkbankFigures(
        n_tasks=n,
        n_occupations=len({t.occupation for t in tasks}),
        n_ratings_worker=sum(t.n_workers for t in tasks),
        n_ratings_expert=sum(t.n_experts for t in tasks),
        n_desire_gt3=gt3,
        pct_desire_gt3=100 * gt3 / n,
        pct_desire_ge4=100 * sum(t.desire >= 4 for t in tasks) / n,
        pct_desire_le2=100 * sum(t.desire <= 2 for t in tasks) / n,
        zones=zones,
        top_task=f"{top.occupation}: {top.task}",
        top_desire=top.desire,
    )


class MappingRow(BaseModel):
    """One row of a WORKBank external attention mapping (YC companies or arXiv papers).

    Attributes:
        task, occupation: the task statement and O*NET-SOC 2019 title it maps to.
        items: distinct company names / arXiv ids mapped to the task.
        line: 1-based line in the source file.
    """

    model_config = ConfigDict(frozen=True)

    task: str
    occupation: str
    items: tuple[str, ...]
    line: int


MAPPING_FORMATS = {
    "companies": ("company_count", "company", "; "),
    "papers": ("paper_count", "paper_ids", ","),
}
"""kind → (count column, list column, separator) of WORKBank's ``external_data`` files."""


def load_attention_mapping(path: Path | str, kind: str) -> list[MappingRow]:
    """Read ``company_to_workflow_aggregation.csv`` (kind ``companies``) or
    ``paper_to_workflow_mapping_aggregated.csv`` (kind ``papers``).

    Columns: ``task``, ``occupation``, and ``company_count`` + ``company`` (``; ``-separated
    names) or ``paper_count`` + ``paper_ids`` (``,``-separated arXiv ids).

    Raises:
        DataFileError: missing file/column, or a count that differs from the number of
            listed items.
        ValueError: for an unknown ``kind``.
    """
    if kind not in MAPPING_FORMATS:
        raise ValueError(
            f"unknown mapping kind {kind!r}; expected one of {sorted(MAPPING_FORMATS)}"
        )
    count_col, list_col, sep = MAPPING_FORMATS[kind]
    what = "WORKBank YC-company mapping" if kind == "companies" else "WORKBank arXiv-paper mapping"
    table = read_table(path, ["task", "occupation", count_col, list_col], what=what)
    out = []
    for i, row in enumerate(table.rows):
        items = (
            [x.strip() for x in row[list_col].split(sep.strip())] if row[list_col].strip() else []
        )
        items = [x for x in items if x]
        count, _ = parse_number(table, i, count_col)
        if count != len(items):
            raise table.error(
                i, count_col, f"says {count:g} but {list_col!r} lists {len(items)} item(s)"
            )
        out.append(
            MappingRow(
                task=row["task"].strip(),
                occupation=row["occupation"].strip(),
                items=tuple(dict.fromkeys(items)),
                line=table.lines[i],
            )
        )
    return out
