"""O*NET task statements and occupation data (O*NET® by USDOL/ETA, CC BY 4.0).

Accepts the official tab-separated text files (``Task Statements.txt``, ``Occupation
Data.txt`` of an O*NET database release) and the comma-separated re-upload kept in the
project's shared data (``task_statements.csv``: extra ``PK`` column, ``Task Title`` instead
of ``Task``).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ._errors import DataFileError
from ._oews import normalise_onet_code
from ._table import read_table


class OnetTask(BaseModel):
    """One O*NET task statement: code (O*NET-SOC), occupation title, Task ID, statement,
    ``Task Type`` (``Core``/``Supplemental``/empty)."""

    model_config = ConfigDict(frozen=True)

    onet_soc_code: str
    title: str
    task_id: str
    task: str
    task_type: str


def _code(table, i: int) -> str:
    try:
        return normalise_onet_code(table.rows[i]["O*NET-SOC Code"])
    except ValueError as exc:
        raise table.error(i, "O*NET-SOC Code", str(exc)) from None


def load_onet_tasks(path: Path | str) -> list[OnetTask]:
    """Read O*NET Task Statements (29.x: 18,796 tasks over 923 occupations).

    Required columns: ``O*NET-SOC Code``, ``Title``, ``Task ID``, ``Task`` (alias ``Task
    Title``); optional ``Task Type``.

    Raises:
        DataFileError: missing file or column, a malformed code, or a duplicate Task ID.
    """
    table = read_table(
        path,
        ["O*NET-SOC Code", "Title", "Task ID", "Task"],
        aliases={"Task": ("Task Title",)},
        optional=["Task Type"],
        what="O*NET task statements file",
    )
    out: list[OnetTask] = []
    seen: dict[str, int] = {}
    for i, row in enumerate(table.rows):
        tid = row["Task ID"].strip()
        if not tid:
            raise table.error(i, "Task ID", "empty value")
        if tid in seen:
            raise table.error(i, "Task ID", f"duplicate Task ID {tid} (first on line {seen[tid]})")
        seen[tid] = table.lines[i]
        out.append(
            OnetTask(
                onet_soc_code=_code(table, i),
                title=row["Title"].strip(),
                task_id=tid,
                task=row["Task"].strip(),
                task_type=row.get("Task Type", "").strip(),
            )
        )
    if not out:
        raise DataFileError(table.path, "no task statements", column="Task")
    return out


def load_onet_occupations(path: Path | str) -> dict[str, str]:
    """Read O*NET Occupation Data (any taxonomy): code → title.

    Required columns: ``O*NET-SOC Code``, ``Title`` (``Description`` is ignored).

    Raises:
        DataFileError: missing file or column, or a malformed code.
    """
    table = read_table(path, ["O*NET-SOC Code", "Title"], what="O*NET occupation data file")
    out = {_code(table, i): row["Title"].strip() for i, row in enumerate(table.rows)}
    if not out:
        raise DataFileError(table.path, "no occupations", column="O*NET-SOC Code")
    return out


def onet_mismatches(tasks, onet_tasks: list[OnetTask]) -> list[str]:
    """Rated WORKBank tasks that do not match O*NET task statements on Task ID, code (when
    known) and text (whitespace-normalised). Returns one message per mismatch; the public
    release against O*NET 29.x gives none.

    Args:
        tasks: objects with ``task_id``, ``task`` and optional ``onet_soc_code`` (e.g.
            :class:`jobbench.selection.TaskRating`).
        onet_tasks: :func:`load_onet_tasks` output.
    """
    by_id = {t.task_id: t for t in onet_tasks}
    out = []
    for t in tasks:
        o = by_id.get(t.task_id)
        if o is None:
            out.append(f"Task ID {t.task_id} ({t.occupation}) is not in the O*NET task statements")
        elif " ".join(o.task.split()) != " ".join(t.task.split()):
            out.append(
                f"Task ID {t.task_id}: text differs from O*NET ({o.task[:60]!r} vs {t.task[:60]!r})"
            )
        elif getattr(t, "onet_soc_code", None) and t.onet_soc_code != o.onet_soc_code:
            out.append(
                f"Task ID {t.task_id}: code {t.onet_soc_code} differs from O*NET {o.onet_soc_code}"
            )
    return out


def crosswalk_mismatches(crosswalk, occupations_2010: dict[str, str]) -> list[str]:
    """Crosswalk rows whose O*NET-SOC 2010 code is absent from ``occupations_2010`` or whose
    title differs from it. One message per problem."""
    out = []
    for c in crosswalk:
        if not c.onet_soc2010_code:
            continue
        try:
            code = normalise_onet_code(c.onet_soc2010_code)
        except ValueError as exc:
            out.append(f"{c.slug}: {exc}")
            continue
        title = occupations_2010.get(code)
        if title is None:
            out.append(f"{c.slug}: O*NET-SOC 2010 code {code} not in the occupation data")
        elif c.onet_soc2010_title and title != c.onet_soc2010_title:
            out.append(f"{c.slug}: title {c.onet_soc2010_title!r} differs from O*NET {title!r}")
    return out
