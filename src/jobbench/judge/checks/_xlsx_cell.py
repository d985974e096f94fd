"""Check kind ``xlsx_cell``: a workbook cell, after recalculation, holds the expected value.

Values come from :func:`jobbench.extract.workbook_values` (recalculated), never from the
values cached in the file alone: a workbook written by a script has no cached values.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...extract import FolderExtraction
from ...tasks import XlsxCellCheck
from ._common import (
    CheckResult,
    describe_expect,
    expect_matches,
    fold,
    no_file,
    select_files,
    show,
    unreadable,
)

XLSX_EXTENSIONS = (".xlsx", ".xlsm")
_A1 = re.compile(r"^\$?([A-Za-z]{1,3})\$?([0-9]+)$")


def split_a1(ref: str) -> tuple[int, int]:
    """``"B12"`` → ``(12, 2)`` (row, column), both 1-based. ValueError for a bad reference."""
    m = _A1.match(ref.strip())
    if not m:
        raise ValueError(f"not an A1 cell reference: {ref!r}")
    col = 0
    for ch in m.group(1).upper():
        col = col * 26 + (ord(ch) - 64)
    return int(m.group(2)), col


def a1(row: int, col: int) -> str:
    """``(12, 2)`` → ``"B12"``."""
    letters = ""
    while col:
        col, rem = divmod(col - 1, 26)
        letters = chr(65 + rem) + letters
    return f"{letters}{row}"


def _read(check: XlsxCellCheck, sheet_values: dict[str, Any]) -> tuple[str | None, Any]:
    """Return (cell reference, value) for the check; (None, None) when ``find`` fails."""
    if check.cell is not None:
        row, col = split_a1(check.cell)
        ref = a1(row, col)
        return ref, sheet_values.get(ref)
    label = fold(check.find or "")
    cells = sorted(((split_a1(k), v) for k, v in sheet_values.items()), key=lambda x: x[0])
    for (row, col), value in cells:
        if isinstance(value, str) and fold(value).rstrip(":").strip() == label.rstrip(":").strip():
            ref = a1(row, col + 1) if check.direction == "right" else a1(row + 1, col)
            return ref, sheet_values.get(ref)
    return None, None


def evaluate(check: XlsxCellCheck, root: Path, extraction: FolderExtraction | None) -> CheckResult:
    """Read the cell (or the neighbour of the ``find`` label) from every matching workbook
    (default ``*.xlsx`` / ``*.xlsm``); pass when one matches ``check.expect``."""
    from ...extract import workbook_values

    if check.cell is not None:
        try:
            split_a1(check.cell)
        except ValueError as exc:
            return CheckResult(passed=False, error=True, detail=f"xlsx_cell: {exc}")
    files = select_files(root, check.file, XLSX_EXTENSIONS)
    if not files:
        return no_file("xlsx_cell", check.file, "workbook (*.xlsx, *.xlsm)")
    reasons: list[str] = []
    for rel in files:
        try:
            wb = workbook_values(Path(root) / rel)
        except Exception as exc:  # any failure to read THIS workbook is the deliverable's fault
            reasons.append(unreadable(rel, exc))
            continue
        if not wb.sheets:
            reasons.append(f"{rel}: no sheets")
            continue
        if check.sheet is None:
            sheet = wb.sheets[0]
        else:
            sheet = next((s for s in wb.sheets if fold(s) == fold(check.sheet)), None)
            if sheet is None:
                reasons.append(f"{rel}: no sheet {check.sheet!r} (sheets: {', '.join(wb.sheets)})")
                continue
        ref, value = _read(check, wb.values.get(sheet, {}))
        if ref is None:
            reasons.append(f"{rel}: label {check.find!r} not found on sheet {sheet!r}")
            continue
        where = f"{rel} {sheet}!{ref}"
        if expect_matches(value, check.expect):
            return CheckResult(
                passed=True,
                detail=f"{where} = {show(value)!r} ({wb.engine})",
                evidence=f"{sheet}!{ref} = {show(value)}",
                file=rel,
            )
        reasons.append(f"{where} = {show(value)!r}, expected {describe_expect(check.expect)}")
    return CheckResult(passed=False, detail="; ".join(reasons))
