"""SQLite databases: schema, row count per table and the first ``limits.sqlite_rows`` rows
of each table (500 like the public judge) as markdown; views are listed with their SQL but
not queried.

The database is read from a private copy opened ``mode=ro&immutable=1`` (no journal, no
locks, nothing written), with ``trusted_schema`` off and a progress handler that aborts a
query once the file's time budget is spent.
"""

from __future__ import annotations

import sqlite3
import tempfile
import time
from pathlib import Path

from ._base import Context, DeadlineExceeded, ExtractionError, Source, markdown_table
from ._notes import note


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _cell(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return note(f"<blob {len(value):,} bytes>")
    if isinstance(value, float):
        return format(value, ".15g")
    return str(value)


def extract_sqlite(source: Source, ctx: Context) -> str:
    """Extractor entry point for SQLite (see module docstring)."""
    with tempfile.TemporaryDirectory(prefix="jobbench-sqlite-") as tmp:
        path = source.copy_to(Path(tmp) / "db.sqlite")
        uri = path.resolve().as_uri() + "?mode=ro&immutable=1"
        try:
            con = sqlite3.connect(uri, uri=True)
        except sqlite3.Error as exc:
            raise ExtractionError(f"not a readable SQLite database: {exc}") from exc
        timed_out = False

        def progress() -> int:
            nonlocal timed_out
            if ctx.deadline is not None and time.monotonic() > ctx.deadline:
                timed_out = True
                return 1
            return 0

        con.set_progress_handler(progress, 10_000)
        try:
            return _render(con, ctx)
        except sqlite3.DatabaseError as exc:
            if timed_out:
                raise DeadlineExceeded(f"time budget exceeded ({ctx.limits.timeout:g} s)") from exc
            raise ExtractionError(f"not a readable SQLite database: {exc}") from exc
        finally:
            con.close()


def _render(con: sqlite3.Connection, ctx: Context) -> str:
    try:
        con.execute("PRAGMA trusted_schema=OFF")
    except sqlite3.Error:
        pass
    con.text_factory = lambda b: b.decode("utf-8", "replace")
    objects = con.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name"
    ).fetchall()
    tables = [o for o in objects if o[0] == "table"]
    views = [o for o in objects if o[0] == "view"]
    others = [o for o in objects if o[0] not in ("table", "view")]
    out = [
        note(
            f"SQLite database: {len(tables)} table(s), {len(views)} view(s), {len(others)} index(es)/trigger(s)"
        )
    ]
    schema = [o[3].strip() + ";" for o in objects if o[3]]
    if schema:
        out.append(note("Schema:") + "\n" + "\n".join(schema))
    limit = ctx.limits.sqlite_rows
    for _type, name, _tbl, _sql in tables:
        ctx.check_deadline()
        q = _quote(name)
        try:
            count = con.execute(f"SELECT COUNT(*) FROM {q}").fetchone()[0]
            cur = con.execute(f"SELECT * FROM {q} LIMIT {int(limit)}")
            cols = [d[0] for d in cur.description or []]
            rows = cur.fetchall()
        except sqlite3.Error as exc:
            if "interrupted" in str(exc).lower():
                raise
            ctx.warn(f"table {name}: could not be read ({exc})")
            out.append(note("## Table ") + name + note(f": unreadable ({exc})"))
            continue
        shown = f"; first {len(rows):,} shown" if count > len(rows) else ""
        block = note("## Table ") + name + note(f" ({count:,} rows{shown})")
        if cols:
            block += "\n" + markdown_table([cols] + [[_cell(v) for v in r] for r in rows])
        out.append(block)
    for _type, name, _tbl, _sql in views:
        out.append(note("## View ") + name + note(" (not queried)"))
    return "\n\n".join(out) + "\n"
