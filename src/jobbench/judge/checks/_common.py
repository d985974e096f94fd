"""Helpers shared by the check kinds: results, deliverable selection, expected values."""

from __future__ import annotations

import contextlib
import contextvars
import csv
import fnmatch
import math
import os
import re
import sqlite3
import zipfile
from collections.abc import Callable, Iterable, Iterator
from datetime import date, datetime, time
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import ParseError as XmlParseError
from xml.parsers.expat import ExpatError

from pydantic import BaseModel

from ...deliverable_policy import excluded
from ...extract import FolderExtraction
from ...tasks import Expect
from ._numbers import close, parse_number


class CheckResult(BaseModel):
    """The outcome of one programmatic check.

    Attributes:
        passed: True when the deliverables satisfy the check.
        detail: one sentence saying why (what was read, what was expected).
        evidence: the text, cell or value that decided, quoted from the deliverable.
        error: True when the check could not be evaluated for a reason that is not the
            deliverable's fault (a bug or a broken check); the judge records such a
            criterion as ``judge_error``, never as a pass or a fail.
        file: the deliverable (relative POSIX path) the evidence came from, if any.
        conflict: True when the deliverables state the checked quantity more than once
            with values that disagree (an enumeration of candidates); such a check fails
            (``number``: two or more distinct near-miss values) and the judge flags the
            trial ``conflicting_values:<rubric>/<criterion>``.
    """

    passed: bool
    detail: str
    evidence: str = ""
    error: bool = False
    file: str | None = None
    conflict: bool = False


DELIVERABLE_ERRORS: tuple[type[BaseException], ...] = (
    OSError,  # unreadable, vanished, permission denied
    ValueError,  # UnicodeDecodeError, json.JSONDecodeError, "larger than …", "empty"
    csv.Error,  # "new-line character seen in unquoted field", "field larger than field limit"
    RecursionError,  # JSON nested deeper than the parser's recursion limit
    OverflowError,
    sqlite3.Error,  # "file is not a database", malformed image, undecodable text column
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    XmlParseError,
    ExpatError,
)
"""Exceptions that reading or parsing ONE deliverable may raise because of its content.

A check catches them per file and records that file as a plain fail with the reason in
the detail (the check may still pass on another matching file). Any other exception is a
defect of the check itself and becomes ``error=True`` in :func:`jobbench.judge.evaluate_check`."""


def unreadable(rel: str, exc: BaseException, what: str = "unreadable") -> str:
    """The per-file reason for a deliverable that could not be read or parsed:
    ``"out.csv: unreadable (csv.Error: new-line character seen …)"``."""
    if isinstance(exc, RecursionError):
        msg = "nested too deeply to parse"
    else:
        name = type(exc).__name__
        if isinstance(exc, csv.Error):
            name = "csv.Error"
        elif isinstance(exc, sqlite3.Error):
            name = f"sqlite3.{name}"
        text = str(exc).strip()
        if len(text) > 200:
            text = text[:200] + "…"
        msg = f"{name}: {text}" if text else name
    return f"{rel}: {what} ({msg})"


def list_deliverables(root: Path) -> list[str]:
    """Relative POSIX paths of every regular file under ``root`` (sorted).

    Symlinks (files or directories) are never followed nor listed; a missing ``root``
    yields an empty list. Files that are not deliverables (dotfiles, OS and editor junk:
    :func:`jobbench.deliverable_policy.excluded`) are left out.
    """
    root = Path(root)
    if not root.is_dir():
        return []
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        d = Path(dirpath)
        dirnames[:] = sorted(n for n in dirnames if not (d / n).is_symlink())
        for name in filenames:
            p = d / name
            if not p.is_symlink() and p.is_file():
                out.append(p.relative_to(root).as_posix())
    return sorted(rel for rel in out if excluded(rel) is None)


_SCOPE: contextvars.ContextVar[frozenset[str] | None] = contextvars.ContextVar(
    "jobbench_check_scope", default=None
)
"""Deliverables (relative POSIX paths) a check may read, set by :func:`scoped`; None = all."""


@contextlib.contextmanager
def scoped(files: Iterable[str] | None) -> Iterator[None]:
    """Within the block, checks read only ``files`` (relative POSIX paths) among the
    deliverables their ``file`` glob selects; None leaves the selection alone."""
    token = _SCOPE.set(None if files is None else frozenset(files))
    try:
        yield
    finally:
        _SCOPE.reset(token)


def in_scope(rel: str) -> bool:
    """Whether deliverable ``rel`` is inside the current :func:`scoped` selection."""
    scope = _SCOPE.get()
    return scope is None or rel in scope


def glob_match(rel: str, pattern: str | None) -> bool:
    """Whether deliverable ``rel`` matches ``pattern`` (case-insensitive fnmatch).

    A pattern without ``/`` is also tried against the base name, so ``*.csv`` matches
    ``out/summary.csv``. None matches everything.
    """
    if pattern is None:
        return True
    p = pattern.replace("\\", "/").lower()
    if p.startswith("./"):
        p = p[2:]
    r = rel.lower()
    if fnmatch.fnmatchcase(r, p):
        return True
    if "/" not in p:
        return fnmatch.fnmatchcase(r.rsplit("/", 1)[-1], p)
    return False


def select_files(
    root: Path, pattern: str | None, extensions: Iterable[str] | None = None
) -> list[str]:
    """Deliverables under ``root`` matching ``pattern``; with no pattern, those whose
    extension (lower-case, with dot) is in ``extensions`` (all files when None)."""
    files = [f for f in list_deliverables(root) if in_scope(f)]
    if pattern is not None:
        return [f for f in files if glob_match(f, pattern)]
    if extensions is None:
        return files
    exts = {e.lower() for e in extensions}
    return [f for f in files if Path(f).suffix.lower() in exts]


def texts_for(
    root: Path, pattern: str | None, extraction: FolderExtraction | None
) -> list[tuple[str, str]]:
    """``[(rel_path, content)]`` of the deliverables matching ``pattern``.

    ``content`` is the file's own text, :meth:`jobbench.extract.Extraction.content`: the
    extracted text with exactly the extractor's annotations removed (CSV/JSONL summaries,
    sheet headers, cell coordinates, formulas, image notes, page/slide/cell headers, zip
    member names, diagnostics, truncation markers), so a number or pattern found there is
    stated by the deliverable itself (for a workbook: a computed value, never
    a formula's constant). Files whose content is empty are left out.

    Uses ``extraction`` when given (the files the judge saw), else extracts each file with
    :func:`jobbench.extract.extract`.
    """
    if extraction is not None:
        out = [
            (f.path, f.content())
            for f in extraction.files
            if glob_match(f.path, pattern) and in_scope(f.path) and f.text
        ]
        return [(rel, text) for rel, text in out if text.strip()]
    from ...extract import extract

    out = []
    for rel in select_files(root, pattern):
        try:
            ex = extract(Path(root) / rel, rel=rel)
        except DELIVERABLE_ERRORS:  # vanished or unreadable: this file has no text
            continue
        content = ex.content() if ex.text else ""
        if content.strip():
            out.append((rel, content))
    return out


def snippet(text: str, start: int, end: int, pad: int = 40) -> str:
    """``text[start:end]`` with ``pad`` characters of context, whitespace folded."""
    a, b = max(0, start - pad), min(len(text), end + pad)
    s = re.sub(r"\s+", " ", text[a:b]).strip()
    return ("…" if a > 0 else "") + s + ("…" if b < len(text) else "")


def fold(s: str) -> str:
    """Case-fold and collapse whitespace (the string comparison used by every check)."""
    return re.sub(r"\s+", " ", s).strip().casefold()


def show(value: Any) -> str:
    """A value as a person would read it in a cell (``2024`` not ``2024.0``)."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if (
        isinstance(value, float)
        and math.isfinite(value)
        and value == int(value)
        and abs(value) < 1e15
    ):
        return str(int(value))
    if isinstance(value, datetime):
        return (
            value.isoformat(sep=" ")
            if (value.hour or value.minute or value.second)
            else value.date().isoformat()
        )
    if isinstance(value, (date, time)):
        return value.isoformat()
    if value is None:
        return ""
    return str(value)


def as_number(value: Any) -> float | None:
    """A numeric reading of a cell/field/JSON value, or None (strings are parsed with
    :func:`jobbench.judge.checks.parse_number`; booleans are not numbers)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(float(value)) else None
    if isinstance(value, str):
        return parse_number(value)
    return None


def _one(value: Any, target: float | str, expect: Expect) -> bool:
    if isinstance(target, (int, float)) and not isinstance(target, bool):
        num = as_number(value)
        return num is not None and close(num, float(target), expect.abs_tol, expect.rel_tol)
    if fold(show(value)) == fold(str(target)):
        return True
    # a numeric-looking string target ("1,234") against a number
    t_num, v_num = parse_number(str(target)), as_number(value)
    return (
        t_num is not None
        and v_num is not None
        and close(v_num, t_num, expect.abs_tol, expect.rel_tol)
    )


def expect_matches(value: Any, expect: Expect) -> bool:
    """Whether ``value`` satisfies ``expect`` (see :class:`jobbench.tasks.Expect`).

    Numbers compare within ``abs_tol`` OR ``rel_tol``; strings compare case-insensitively
    after whitespace folding; ``contains`` is a case-insensitive substring test on the
    value as displayed.
    """
    if expect.contains is not None:
        return fold(expect.contains) in fold(show(value))
    if expect.any_of is not None:
        return any(_one(value, t, expect) for t in expect.any_of)
    assert expect.equals is not None
    return _one(value, expect.equals, expect)


def agreeing(
    statements: list[tuple[str, Any]],
    expect: Expect,
    match: Callable[[Any, Expect], bool] | None = None,
) -> tuple[bool, list[tuple[str, Any]]]:
    """Whether every statement of a quantity satisfies ``expect``.

    Args:
        statements: ``[(where, value)]``: every place the deliverables state the checked
            quantity (a labelled cell, a CSV row, a JSON value, a query row, per file).
        expect: the expected value.
        match: the comparison (default :func:`expect_matches`).

    Returns:
        ``(all_agree, conflicting)``: ``all_agree`` is True when there is at least one
        statement and each satisfies ``expect``; ``conflicting`` lists the statements that
        do not, when at least one other does (an enumeration of candidate values).
    """
    match = match or expect_matches
    good = [st for st in statements if match(st[1], expect)]
    bad = [st for st in statements if not match(st[1], expect)]
    return bool(good) and not bad, (bad if good else [])


def conflict_result(
    kind: str,
    good: list[tuple[str, Any]],
    bad: list[tuple[str, Any]],
    expect: Expect,
    file: str | None = None,
) -> CheckResult:
    """The failing result for a quantity stated with disagreeing values."""
    shown = "; ".join(f"{w} = {show(v)!r}" for w, v in bad[:5])
    more = f" (… {len(bad) - 5} more)" if len(bad) > 5 else ""
    where, value = good[0]
    return CheckResult(
        passed=False,
        conflict=True,
        detail=f"{kind}: conflicting values for the checked quantity: {where} = {show(value)!r} "
        f"matches {describe_expect(expect)} but {shown}{more} do(es) not; a deliverable must "
        "state one value",
        evidence=f"{where} = {show(value)}",
        file=file,
    )


NAMED_FILE_RE = re.compile(
    r"(?<![\w./-])([A-Za-z0-9_][\w.-]*\.(?:md|txt|csv|tsv|xlsx|xlsm|xls|docx|doc|pptx|pdf|json|jsonl|db|"
    r"sqlite|sqlite3|png|jpe?g|svg|html|ipynb|zip))\b",
    re.IGNORECASE,
)
"""A deliverable file name written in a criterion (``summary.md``, ``study_corrected.db``)."""


def named_files(text: str) -> list[str]:
    """File names (case-folded base names) that ``text`` mentions, in order, no repeats."""
    return list(dict.fromkeys(m.group(1).casefold() for m in NAMED_FILE_RE.finditer(text)))


def check_scope(
    pattern: str | None,
    deliverables: list[str],
    criterion: str,
    rubric_files: list[str] | None,
) -> list[str] | None:
    """The deliverables a check reads (see docs/judge.md, "Which files a check reads").

    A check whose ``file`` is an exact name (no ``*``, ``?`` or ``[``) reads the files of
    that name. A check whose ``file`` is a glob, or absent, reads only the deliverables the
    criterion names (file names in ``criterion`` that the glob accepts, matched on base
    name, case-insensitively); when the criterion names none, a check without ``file``
    reads the rubric's declared ``files``; otherwise every file the glob selects.

    Returns:
        The relative paths in scope, or None when the check's own glob decides alone.
        An empty list means the named files are absent (the check then fails).
    """
    if pattern is not None and not any(ch in pattern for ch in "*?["):
        return None
    names = [n for n in named_files(criterion) if pattern is None or glob_match(n, pattern)]
    if names:
        return [f for f in deliverables if f.rsplit("/", 1)[-1].casefold() in names]
    if pattern is None and rubric_files:
        return [f for f in deliverables if any(glob_match(f, g) for g in rubric_files)]
    return None


def describe_expect(expect: Expect) -> str:
    """Human-readable form of ``expect`` for details (``= 1234 ± 0.5``)."""
    tol = ""
    if expect.abs_tol:
        tol += f" ± {expect.abs_tol:g}"
    if expect.rel_tol:
        tol += f" (± {expect.rel_tol:g} rel.)"
    if expect.contains is not None:
        return f"containing {expect.contains!r}"
    if expect.any_of is not None:
        return "one of " + ", ".join(repr(v) for v in expect.any_of) + tol
    return f"= {expect.equals!r}{tol}"


def no_file(kind: str, pattern: str | None, what: str) -> CheckResult:
    """The failing result when no deliverable matches."""
    where = f"matching {pattern!r}" if pattern else what
    return CheckResult(passed=False, detail=f"{kind}: no deliverable {where}")
