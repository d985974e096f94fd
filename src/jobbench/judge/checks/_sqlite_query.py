"""Check kind ``sqlite_query``: a read-only query on a SQLite deliverable.

Safety: the database is opened with the URI ``mode=ro`` (no journal or file is ever
written), ``PRAGMA query_only`` is on, an authorizer allows only reading statements (no
ATTACH, no PRAGMA, no writes), and a progress handler aborts a query after
:data:`QUERY_SECONDS` seconds so a hostile deliverable cannot hang the judge.
"""

from __future__ import annotations

import sqlite3
import time
import urllib.parse
from pathlib import Path

from ...extract import FolderExtraction
from ...tasks import SqliteQueryCheck
from ._common import CheckResult, describe_expect, expect_matches, no_file, select_files, show

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


def run_query(path: Path, query: str, seconds: float = QUERY_SECONDS) -> tuple[object, bool]:
    """Run ``query`` read-only and return (first column of the first row, had_row).

    Raises:
        sqlite3.Error: the query failed, was denied, or ran out of time (``interrupted``).
    """
    uri = "file:" + urllib.parse.quote(str(Path(path).resolve())) + "?mode=ro"
    con = sqlite3.connect(uri, uri=True, timeout=1.0, isolation_level=None, check_same_thread=False)
    try:
        con.execute("PRAGMA query_only = ON")
        deadline = time.monotonic() + seconds
        con.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 10_000)
        con.set_authorizer(_authorizer)
        row = con.execute(query).fetchone()
    finally:
        con.close()
    if row is None:
        return None, False
    return (row[0] if len(row) else None), True


def evaluate(check: SqliteQueryCheck, root: Path, extraction: FolderExtraction | None) -> CheckResult:
    """Run ``check.query`` on every matching deliverable that is a SQLite 3 database
    (default: any file with the SQLite header); pass when the first column of the first row
    of one of them matches ``check.expect``. A query that fails on the deliverable (missing
    table, time-out) fails the check."""
    files = [f for f in select_files(root, check.file) if is_sqlite(Path(root) / f)]
    if not files:
        return no_file("sqlite_query", check.file, "SQLite database")
    reasons = []
    for rel in files:
        try:
            value, had_row = run_query(Path(root) / rel, check.query)
        except sqlite3.Error as exc:
            msg = str(exc)
            if msg == "interrupted":
                msg = f"query exceeded {QUERY_SECONDS:g} s"
            reasons.append(f"{rel}: query failed ({msg})")
            continue
        if not had_row:
            reasons.append(f"{rel}: query returned no rows")
            continue
        if expect_matches(value, check.expect):
            return CheckResult(passed=True, detail=f"{rel}: query returned {show(value)!r}",
                               evidence=f"{check.query} → {show(value)}", file=rel)
        reasons.append(f"{rel}: query returned {show(value)!r}, expected {describe_expect(check.expect)}")
    return CheckResult(passed=False, detail="; ".join(reasons))
