"""Check kind ``csv_value``: a cell or an aggregate of a CSV deliverable."""

from __future__ import annotations

import codecs
import csv
import io
import statistics
from pathlib import Path

from ...extract import FolderExtraction
from ...tasks import CsvValueCheck
from ._common import (
    DELIVERABLE_ERRORS,
    CheckResult,
    as_number,
    describe_expect,
    expect_matches,
    fold,
    no_file,
    select_files,
    show,
    unreadable,
)

CSV_EXTENSIONS = (".csv", ".tsv")
MAX_CSV_BYTES = 50_000_000


def read_table(path: Path) -> list[list[str]]:
    """Rows of a CSV/TSV file (delimiter sniffed among ``, ; \\t |``; UTF-16 when it starts
    with a UTF-16 byte-order mark, else UTF-8 with or without BOM, then cp1252 as a fallback
    encoding; ``\\n``, ``\\r\\n`` and ``\\r`` line ends). Blank rows are dropped.

    Raises:
        ValueError: the file is larger than 50 MB, empty, has no non-blank row, or is
            binary (holds NUL characters, or more than 1 % control characters other than
            tab, line feed, carriage return and form feed in its first 64 Ki characters).
        csv.Error: the text is not a well-formed table (e.g. a field over the csv
            module's size limit).
        OSError: the file cannot be read.
    """
    data = path.read_bytes()
    if len(data) > MAX_CSV_BYTES:
        raise ValueError(f"larger than {MAX_CSV_BYTES} bytes")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = data.decode("utf-16", errors="replace")
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = data.decode("cp1252", errors="replace")
    if not text.strip():
        raise ValueError("empty")
    if "\x00" in text:
        raise ValueError("binary content (NUL bytes), not a text table")
    if _looks_binary(text[:65_536]):
        raise ValueError("binary content (control characters), not a text table")
    if path.suffix.lower() == ".tsv":
        delim = "\t"
    else:
        try:
            delim = csv.Sniffer().sniff(text[:20_000], delimiters=",;\t|").delimiter
        except csv.Error:
            delim = ","
    rows = [
        row
        for row in csv.reader(io.StringIO(text, newline=""), delimiter=delim)
        if any(c.strip() for c in row)
    ]
    if not rows:
        raise ValueError("no non-blank row")
    return rows


def _looks_binary(sample: str) -> bool:
    controls = sum(1 for ch in sample if (ord(ch) < 32 and ch not in "\t\n\r\f") or ch == "\ufffd")
    return controls > max(1, len(sample) // 100)


def _columns(header: list[str], limit: int = 12) -> str:
    """The header for a detail message, kept short (long or many names are cut)."""
    names = [h if len(h) <= 40 else h[:40] + "…" for h in header[:limit]]
    return ", ".join(names) + (f", … ({len(header)} columns)" if len(header) > limit else "")


def _eq(cell: str, wanted: str) -> bool:
    if fold(cell) == fold(wanted):
        return True
    a, b = as_number(cell), as_number(wanted)
    return a is not None and b is not None and a == b


def evaluate(check: CsvValueCheck, root: Path, extraction: FolderExtraction | None) -> CheckResult:
    """Read ``column`` from the first row matching ``where`` (or aggregate it over all
    matching rows) in every matching CSV (default ``*.csv`` / ``*.tsv``); pass when one
    matches ``check.expect``.

    Aggregates: ``sum``/``mean``/``min``/``max`` over numeric cells (blank cells skipped; a
    non-blank non-numeric cell fails the check), ``count`` of non-blank cells, ``nunique``
    distinct non-blank cells (case-insensitive).
    """
    files = select_files(root, check.file, CSV_EXTENSIONS)
    if not files:
        return no_file("csv_value", check.file, "CSV (*.csv, *.tsv)")
    reasons: list[str] = []
    for rel in files:
        try:
            rows = read_table(Path(root) / rel)
        except DELIVERABLE_ERRORS as exc:  # this file only: another matching file may still pass
            reasons.append(unreadable(rel, exc))
            continue
        header = [fold(h) for h in rows[0]]
        wanted = [fold(check.column)] + [fold(k) for k in check.where]
        missing = [w for w in wanted if w not in header]
        if missing:
            reasons.append(
                f"{rel}: no column(s) {', '.join(repr(m) for m in missing)} (columns: {_columns(rows[0])})"
            )
            continue
        col = header.index(fold(check.column))
        conds = [(header.index(fold(k)), v) for k, v in check.where.items()]
        body = [r + [""] * (len(header) - len(r)) for r in rows[1:]]
        matching = [r for r in body if all(_eq(r[i], v) for i, v in conds)]
        cond_text = (
            (" where " + ", ".join(f"{k}={v!r}" for k, v in check.where.items()))
            if check.where
            else ""
        )
        if check.aggregate is None:
            if not matching:
                reasons.append(f"{rel}: no row{cond_text}")
                continue
            value: object = matching[0][col]
            label = f"{rel} {check.column}{cond_text}"
        else:
            cells = [r[col] for r in matching if r[col].strip()]
            label = f"{rel} {check.aggregate}({check.column}){cond_text}"
            if check.aggregate == "count":
                value = len(cells)
            elif check.aggregate == "nunique":
                value = len({fold(c) for c in cells})
            else:
                nums = [as_number(c) for c in cells]
                bad = [c for c, n in zip(cells, nums) if n is None]
                if bad:
                    reasons.append(f"{label}: non-numeric cell(s) {bad[:3]}")
                    continue
                if not nums:
                    reasons.append(f"{label}: no numeric cells")
                    continue
                fn = {"sum": sum, "mean": statistics.fmean, "min": min, "max": max}[check.aggregate]
                value = float(fn(nums))  # type: ignore[operator]
        if expect_matches(value, check.expect):
            return CheckResult(
                passed=True,
                detail=f"{label} = {show(value)!r}",
                evidence=f"{label} = {show(value)}",
                file=rel,
            )
        reasons.append(f"{label} = {show(value)!r}, expected {describe_expect(check.expect)}")
    return CheckResult(passed=False, detail="; ".join(reasons))
