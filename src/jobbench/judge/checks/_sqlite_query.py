"""Check kind ``sqlite_query``: a read-only query on a SQLite deliverable.

Safety: the query runs on a private copy of the database (with its ``-wal`` file when
the deliverables hold one) in a temporary folder, so the deliverable folder is never
written (SQLite creates ``-shm``/``-wal`` files beside a WAL-mode database even when it is
opened read-only); the copy is opened with the URI ``mode=ro``, ``PRAGMA query_only`` is
on, an authorizer allows only reading statements (no ATTACH, no PRAGMA, no writes), and a
progress handler aborts a query after :data:`QUERY_SECONDS` seconds so a hostile
deliverable cannot hang the judge.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import stat
import tempfile
import time
import urllib.parse
from pathlib import Path

from ...extract import FolderExtraction
from ...tasks import SqliteQueryCheck
from ._common import (
    DELIVERABLE_ERRORS,
    CheckResult,
    agreeing,
    conflict_result,
    describe_expect,
    expect_matches,
    no_file,
    select_files,
    show,
    unreadable,
)

QUERY_SECONDS = 5.0
"""Wall-clock budget of one check query, in seconds."""
SQLITE_MAGIC = b"SQLite format 3\x00"

_ALLOWED = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    getattr(sqlite3, "SQLITE_RECURSIVE", 33),
}


def _authorizer(action: int, *_: object) -> int:
    return sqlite3.SQLITE_OK if action in _ALLOWED else sqlite3.SQLITE_DENY


def is_sqlite(path: Path) -> bool:
    """Whether ``path`` starts with the SQLite 3 file header."""
    try:
        with open(path, "rb") as f:
            return f.read(16) == SQLITE_MAGIC
    except OSError:
        return False


MAX_ROWS = 1000
"""Rows of a query's result read to see whether an unordered result disagrees with itself."""
_ORDER_BY = re.compile(r"\border\s+by\b", re.IGNORECASE)


def _query_file(path: Path, query: str, seconds: float) -> tuple[list[object], bool]:
    uri = "file:" + urllib.parse.quote(os.fsencode(Path(path).resolve())) + "?mode=ro"
    con = sqlite3.connect(uri, uri=True, timeout=1.0, isolation_level=None, check_same_thread=False)
    try:
        con.execute("PRAGMA query_only = ON")
        deadline = time.monotonic() + seconds
        con.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 10_000)
        con.set_authorizer(_authorizer)
        rows = con.execute(query).fetchmany(MAX_ROWS if not _ORDER_BY.search(query) else 1)
    finally:
        con.close()
    if not rows:
        return [], False
    return [(row[0] if len(row) else None) for row in rows], True


def run_query(path: Path, query: str, seconds: float = QUERY_SECONDS) -> tuple[list[object], bool]:
    """Run ``query`` read-only on a private copy of the database at ``path`` (and of
    ``<path>-wal`` if present; symlinks are not followed) and return (first column of the
    result rows, had_row): only the first row when the query has ``ORDER BY`` (the first
    row is then defined), else up to :data:`MAX_ROWS` rows (an unordered result has no
    first row; every row is a statement). Nothing is written beside ``path``.

    Raises:
        sqlite3.Error: the query failed, was denied, or ran out of time (``interrupted``),
            or the file is not a database.
        OSError: the file cannot be read or copied.
    """
    path = Path(path)
    with tempfile.TemporaryDirectory(prefix="jobbench-sqlite-") as tmp:
        copy = Path(tmp) / "db.sqlite"
        _copy_regular(path, copy)
        wal = path.with_name(path.name + "-wal")
        if wal.is_file() and not wal.is_symlink():
            _copy_regular(wal, copy.with_name(copy.name + "-wal"))
        return _query_file(copy, query, seconds)


def _copy_regular(src: Path, dst: Path) -> None:
    """Copy a regular file without following a symlink (OSError otherwise)."""
    fd = os.open(src, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f_in:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{src}: not a regular file")
        with open(dst, "wb") as f_out:
            shutil.copyfileobj(f_in, f_out, 1 << 20)


def evaluate(
    check: SqliteQueryCheck, root: Path, extraction: FolderExtraction | None
) -> CheckResult:
    """Run ``check.query`` on every matching deliverable that is a SQLite 3 database
    (default: any file with the SQLite header); pass when at least one row is returned and
    the first column of every row read (see :func:`run_query`) of every database matches
    ``check.expect``; values that disagree fail with ``conflict=True``. A query that fails
    on a deliverable (missing table, time-out) fails for that file."""
    files = [f for f in select_files(root, check.file) if is_sqlite(Path(root) / f)]
    if not files:
        return no_file("sqlite_query", check.file, "SQLite database")
    reasons: list[str] = []
    statements: list[tuple[str, object]] = []
    rels: dict[str, str] = {}
    for rel in files:
        try:
            values, had_row = run_query(Path(root) / rel, check.query)
        except sqlite3.Error as exc:  # missing table, not a database, time-out: this file fails
            msg = str(exc)
            if msg == "interrupted":
                msg = f"query exceeded {QUERY_SECONDS:g} s"
            reasons.append(f"{rel}: query failed ({msg})")
            continue
        except DELIVERABLE_ERRORS as exc:  # unreadable file: this file fails
            reasons.append(unreadable(rel, exc))
            continue
        if not had_row:
            reasons.append(f"{rel}: query returned no rows")
            continue
        for n, value in enumerate(values):
            where = f"{rel}: query" + (
                f" (row {n + 1} of {len(values)})" if len(values) > 1 else ""
            )
            statements.append((where, value))
            rels[where] = rel
    if not statements:
        return CheckResult(passed=False, detail="; ".join(reasons))
    ok, conflicting = agreeing(statements, check.expect, expect_matches)
    if ok:
        where, value = statements[0]
        more = f" (stated {len(statements)}×, all agree)" if len(statements) > 1 else ""
        return CheckResult(
            passed=True,
            detail=f"{rels[where]}: query returned {show(value)!r}{more}",
            evidence=f"{check.query} → {show(value)}",
            file=rels[where],
        )
    if conflicting:
        good = [st for st in statements if expect_matches(st[1], check.expect)]
        return conflict_result(
            "sqlite_query", good, conflicting, check.expect, file=rels[good[0][0]]
        )
    for where, value in statements:
        reasons.append(
            f"{where} returned {show(value)!r}, expected {describe_expect(check.expect)}"
        )
    return CheckResult(passed=False, detail="; ".join(reasons))
