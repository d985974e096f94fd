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
    agreeing,
    as_number,
    conflict_result,
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
    """Read ``column`` from every row matching ``where`` (or aggregate it over all matching
    rows) in every matching CSV (default ``*.csv`` / ``*.tsv``); pass when at least one value
    is read and every value read matches ``check.expect`` (several rows for the ``where``
    key, several files, or a column name written twice, with values that disagree: fail
    with ``conflict=True``).

    Aggregates: ``sum``/``mean``/``min``/``max`` over numeric cells (blank cells skipped; a
    non-blank non-numeric cell fails the check), ``count`` of non-blank cells, ``nunique``
    distinct non-blank cells (case-insensitive).
    """
    files = select_files(root, check.file, CSV_EXTENSIONS)
    if not files:
        return no_file("csv_value", check.file, "CSV (*.csv, *.tsv)")
    reasons: list[str] = []
    statements: list[tuple[str, object]] = []
    rels: dict[str, str] = {}
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
                f"{rel}: no column(s) {', '.join(repr(m) for m in missing)} "
                f"(columns: {_columns(rows[0])})"
            )
            continue
        # a column name written twice states the quantity twice: every such column is read
        cols = [i for i, h in enumerate(header) if h == fold(check.column)]
        conds = [(header.index(fold(k)), v) for k, v in check.where.items()]
        body = [r + [""] * (len(header) - len(r)) for r in rows[1:]]
        numbered = [(n + 2, r) for n, r in enumerate(body) if all(_eq(r[i], v) for i, v in conds)]
        matching = [r for _, r in numbered]
        cond_text = (
            (" where " + ", ".join(f"{k}={v!r}" for k, v in check.where.items()))
            if check.where
            else ""
        )
        if check.aggregate is None:
            if not matching:
                reasons.append(f"{rel}: no row{cond_text}")
                continue
            label = f"{rel} {check.column}{cond_text}"
            for line, r in numbered:
                for col in cols:
                    where = (
                        label
                        if len(matching) * len(cols) == 1
                        else f"{label} (line {line}, column {col + 1})"
                    )
                    statements.append((where, r[col]))
                    rels[where] = rel
            continue
        label = f"{rel} {check.aggregate}({check.column}){cond_text}"
        for col in cols:
            cells = [r[col] for r in matching if r[col].strip()]
            value: object
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
            statements.append((label, value))
            rels[label] = rel
    if not statements:
        return CheckResult(passed=False, detail="; ".join(reasons))
    ok, conflicting = agreeing(statements, check.expect, expect_matches)
    if ok:
        where, value = statements[0]
        more = f" (stated {len(statements)}×, all agree)" if len(statements) > 1 else ""
        return CheckResult(
            passed=True,
            detail=f"{where} = {show(value)!r}{more}",
            evidence=f"{where} = {show(value)}",
            file=rels[where],
        )
    if conflicting:
        good = [st for st in statements if expect_matches(st[1], check.expect)]
        return conflict_result("csv_value", good, conflicting, check.expect, file=rels[good[0][0]])
    for where, value in statements:
        reasons.append(f"{where} = {show(value)!r}, expected {describe_expect(check.expect)}")
    return CheckResult(passed=False, detail="; ".join(reasons))
