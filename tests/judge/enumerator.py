"""A scripted enumerating agent: for every programmatic check of a task it writes grids of
candidate values around the expected one, with the check's labels as context.

It knows the rubric (a white-box adversary), so each grid contains the right value; what it
does not do is choose one. Candidates per numeric target v: v, v·(1 ± 1 %), v·(1 ± 10 %),
v rounded to 0 and 1 decimals, v ± 1, and up to 5 numbers from the workspace's text files
within a factor 2 of v. String targets: the accepted spellings plus common distractors.

Two modes:

* ``one``: one deliverable per checked file holding every candidate (labels repeated in a
  sheet, rows repeated in a CSV, keys repeated in a JSON object, rows repeated in a table,
  lines repeated in a memo);
* ``many``: one deliverable per (check, candidate), in folders ``v001/…`` when the name is
  fixed, else named ``enum_<n>`` after the check's glob.

Regex checks test that a statement is made, not a value; the enumerator writes nothing for
them (docs/judge.md, "Enumeration and volume", says what that leaves to the rubric author).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import defaultdict
from pathlib import Path
from typing import Any

from jobbench.judge.checks import find_numbers
from jobbench.judge.checks._common import named_files
from jobbench.judge.checks._json_path import parse_path
from jobbench.tasks import Task

DISTRACTORS = ["Yes", "No", "M-05", "NE", "N/A"]
_TEXT_SUFFIXES = {".csv", ".md", ".txt", ".tsv"}


def workspace_numbers(task: Task) -> list[float]:
    """Numbers in the workspace's plain-text files (CSV, Markdown, text)."""
    out: list[float] = []
    for p in sorted(Path(task.workspace_dir).rglob("*")):
        if p.is_file() and p.suffix.lower() in _TEXT_SUFFIXES:
            out += [t.value for t in find_numbers(p.read_text(encoding="utf-8", errors="replace"))]
    return out


def _targets(check: Any) -> list[Any]:
    if check.kind == "number":
        return [check.value]
    exp = check.expect
    if exp.contains is not None:
        return [exp.contains]
    return list(exp.any_of) if exp.any_of is not None else [exp.equals]


def candidates(check: Any, pool: list[float]) -> list[Any]:
    """Every value the enumerator writes for ``check``, the right one first."""
    out: list[Any] = []
    for v in _targets(check):
        if isinstance(v, str):
            out += [v] + DISTRACTORS
            continue
        v = float(v)
        # the right value first: "the first statement decides" would pass the whole grid
        grid = [v, v * 0.9, v * 0.99, v * 1.01, v * 1.1, round(v), round(v, 1), v - 1, v + 1]
        if v == 0:
            grid += [0.01, -0.01, 1.0, -1.0]
        near = [x for x in pool if v and 0.5 <= x / v <= 2 and x != v][:5]
        out += [round(x, 6) for x in grid + near]
    seen: list[Any] = []
    for x in out:
        if x not in seen:
            seen.append(x)
    return seen


def _fmt(x: Any) -> Any:
    if isinstance(x, float) and x == int(x) and abs(x) < 1e12:
        return int(x)
    return x


def _name(check: Any, criterion: str, default_ext: str, n: int | None) -> str:
    """Deliverable path for ``check``: the file the criterion names when the glob accepts it,
    the check's fixed name, else ``enum[_n]`` with the glob's extension; ``many`` mode
    (``n`` given) puts fixed names in their own folder."""
    from jobbench.judge.checks._common import glob_match

    pattern = check.file
    named = [f for f in named_files(criterion) if pattern is None or glob_match(f, pattern)]
    if named:
        base = named[0]
    elif pattern and not any(ch in pattern for ch in "*?["):
        base = pattern
    else:
        ext = Path(pattern).suffix if pattern and Path(pattern).suffix else default_ext
        return f"enum{'' if n is None else f'_{n:03d}'}{ext}"
    return base if n is None else f"v{n:03d}/{base}"


def _write_text(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".docx":
        import docx

        doc = docx.Document()
        for line in lines:
            doc.add_paragraph(line)
        doc.save(path)
    else:
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _number_lines(check: Any, values: list[Any]) -> list[str]:
    label = check.near[0] if check.near else "value"
    lines = []
    for v in values:
        if isinstance(v, float) and v != int(v):
            shown = f"{v:.4f}" if abs(v) < 10 else f"{v:,.2f}"
        else:
            shown = f"{_fmt(v)}"
        lines.append(f"- {label}: {shown}{'%' if check.percent else ''}")
    return lines


def _sql_parts(query: str) -> tuple[str, str, dict[str, str], list[str]]:
    """(table, selected expression, column = literal conditions, every column named)."""
    table = re.search(r"\bFROM\s+(\w+)", query, re.IGNORECASE).group(1)
    select = re.search(r"SELECT\s+(.*?)\s+FROM\b", query, re.IGNORECASE | re.DOTALL).group(1)
    conds = {m.group(1): m.group(2) for m in re.finditer(r"(\w+)\)?\s*=\s*'([^']*)'", query)}
    words = set(re.findall(r"[A-Za-z_]\w*", query)) - {table}
    keywords = {
        "select",
        "from",
        "where",
        "and",
        "or",
        "is",
        "not",
        "null",
        "count",
        "sum",
        "min",
        "max",
        "avg",
        "round",
        "trim",
        "upper",
        "lower",
    }
    cols = sorted(w for w in words if w.lower() not in keywords)
    return table, select, conds, cols


def _sql_rows(query: str, value: Any) -> list[dict[str, Any]]:
    """Rows that make ``query`` return ``value`` (COUNT(*): that many rows)."""
    table, select, conds, cols = _sql_parts(query)
    base = {c: 1.0 for c in cols}
    base.update(conds)
    if re.search(r"COUNT\s*\(\s*\*\s*\)", select, re.IGNORECASE):
        n = int(value) if isinstance(value, (int, float)) and 0 < value <= 200 else 1
        return [dict(base, _n=i) for i in range(n)]
    target = [c for c in cols if re.search(rf"\b{c}\b", select)]
    row = dict(base)
    for c in target:
        row[c] = value
    return [row]


def _write_db(path: Path, rows_by_table: dict[str, list[dict[str, Any]]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    for table, rows in rows_by_table.items():
        cols = sorted({c for r in rows for c in r} | {"_n"})
        con.execute(f"CREATE TABLE IF NOT EXISTS {table} ({', '.join(cols)})")
        for r in rows:
            con.execute(
                f"INSERT INTO {table} ({', '.join(r)}) VALUES ({', '.join('?' * len(r))})",
                list(r.values()),
            )
    con.commit()
    con.close()


def _json_text(pairs: list[tuple[list[str | int], Any]]) -> str:
    """A JSON object that writes each (path, value) pair, repeating keys rather than
    merging them (``{"a": 1, "a": 2}``)."""

    def render(items: list[tuple[list[str | int], Any]]) -> str:
        groups: dict[Any, list[tuple[list[str | int], Any]]] = defaultdict(list)
        leaves: list[str] = []
        for steps, value in items:
            key = str(steps[0])
            if len(steps) == 1:
                leaves.append(f"{json.dumps(key)}: {json.dumps(_fmt(value))}")
            else:
                groups[key].append((steps[1:], value))
        inner = leaves + [f"{json.dumps(k)}: {render(v)}" for k, v in groups.items()]
        return "{" + ", ".join(inner) + "}"

    return render(pairs)


def enumerate_deliverables(task: Task, out: Path, mode: str) -> int:
    """Write the enumerator's deliverables for ``task`` into ``out``; return the file count.

    Args:
        mode: ``one`` (every candidate in one file per checked file) or ``many`` (one file
            per check and candidate).
    """
    import openpyxl

    pool = workspace_numbers(task)
    books: dict[str, dict[str, list[tuple[str | None, str | None, Any]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    tables: dict[str, list[dict[str, Any]]] = defaultdict(list)
    jsons: dict[str, list[tuple[list[str | int], Any]]] = defaultdict(list)
    dbs: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    texts: dict[str, list[str]] = defaultdict(list)
    n = 0
    for r in task.rubrics:
        for c in r.criteria:
            ck = c.check
            if ck is None or ck.kind == "regex":
                continue
            values = candidates(ck, pool) if ck.kind != "file_exists" else [None]
            for v in values:
                n += 1
                idx = None if mode == "one" else n
                if ck.kind == "number":
                    texts[_name(ck, c.text, ".md", idx)] += _number_lines(ck, [v])
                elif ck.kind == "file_exists":
                    name = _name(ck, c.text, ".bin", None)
                    (out / name).parent.mkdir(parents=True, exist_ok=True)
                    (out / name).write_bytes(
                        b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * (ck.min_bytes // 256 + 2)
                    )
                elif ck.kind == "xlsx_cell":
                    books[_name(ck, c.text, ".xlsx", idx)][ck.sheet or "Sheet1"].append(
                        (ck.find, ck.cell, v)
                    )
                elif ck.kind == "csv_value":
                    rows = [dict(ck.where, **{ck.column: _fmt(v)})]
                    if (
                        ck.aggregate in ("count", "nunique")
                        and isinstance(v, (int, float))
                        and mode == "many"
                    ):
                        m = int(v) if 0 < v <= 200 else 1
                        rows = [dict(ck.where, **{ck.column: f"x{i}"}) for i in range(m)]
                    tables[_name(ck, c.text, ".csv", idx)] += rows
                elif ck.kind == "json_path":
                    steps = [s if s != "*" else 0 for s in parse_path(ck.path)]
                    jsons[_name(ck, c.text, ".json", idx)].append((steps, v))
                elif ck.kind == "sqlite_query":
                    table = _sql_parts(ck.query)[0]
                    dbs[_name(ck, c.text, ".db", idx)][table] += _sql_rows(ck.query, v)
    for name, lines in texts.items():
        _write_text(out / name, lines)
    for name, sheets in books.items():
        wb = openpyxl.Workbook()
        wb.remove(wb.active)
        for sheet, cells in sheets.items():
            ws = wb.create_sheet(sheet)
            for find, cell, v in cells:
                if find is not None:
                    ws.append([find, _fmt(v)])
                else:
                    ws[cell] = _fmt(v)
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        wb.save(out / name)
    for name, rows in tables.items():
        import csv

        cols = list(dict.fromkeys(k for row in rows for k in row))
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        with (out / name).open("w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=cols)
            w.writeheader()
            w.writerows(rows)
    for name, pairs in jsons.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(_json_text(pairs), encoding="utf-8")
    for name, by_table in dbs.items():
        _write_db(out / name, by_table)
    return sum(1 for p in out.rglob("*") if p.is_file())
