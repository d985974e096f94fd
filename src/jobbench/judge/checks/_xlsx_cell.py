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
    agreeing,
    conflict_result,
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


VALUE_SOURCE = {
    "cached": "value cached in the workbook",
    "libreoffice": "recalculated by LibreOffice",
    "formulas": "recalculated by the formulas package",
}
"""How a check's detail names where a cell's value came from (the workbook engine)."""


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


def _read(check: XlsxCellCheck, sheet_values: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every (cell reference, value) the check reads: the ``cell``, or the neighbour of
    EVERY cell whose text equals the ``find`` label (a label written twice states the
    quantity twice); [] when the label is not found."""
    if check.cell is not None:
        row, col = split_a1(check.cell)
        ref = a1(row, col)
        return [(ref, sheet_values.get(ref))]
    label = fold(check.find or "").rstrip(":").strip()
    cells = sorted(((split_a1(k), v) for k, v in sheet_values.items()), key=lambda x: x[0])
    out = []
    for (row, col), value in cells:
        if isinstance(value, str) and fold(value).rstrip(":").strip() == label:
            ref = a1(row, col + 1) if check.direction == "right" else a1(row + 1, col)
            out.append((ref, sheet_values.get(ref)))
    return out


def evaluate(check: XlsxCellCheck, root: Path, extraction: FolderExtraction | None) -> CheckResult:
    """Read the cell (or the neighbour of every ``find`` label) from every matching
    workbook (default ``*.xlsx`` / ``*.xlsm``); pass when at least one is read and every
    value read matches ``check.expect``. Values that disagree (two workbooks, or a label
    written twice, with different values) fail with ``conflict=True``."""
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
    statements: list[tuple[str, Any]] = []
    engines: dict[str, str] = {}
    rels: dict[str, str] = {}
    for rel in files:
        try:
            wb = workbook_values(Path(root) / rel)
        except Exception as exc:  # any failure to read THIS workbook is the deliverable's fault
            reasons.append(unreadable(rel, exc))
            continue
        if not wb.sheets:
            reasons.append(f"{rel}: no sheets")
            continue
        sheet: str | None
        if check.sheet is None:
            sheet = wb.sheets[0]
        else:
            sheet = next((s for s in wb.sheets if fold(s) == fold(check.sheet)), None)
            if sheet is None:
                reasons.append(f"{rel}: no sheet {check.sheet!r} (sheets: {', '.join(wb.sheets)})")
                continue
        found = _read(check, wb.values.get(sheet, {}))
        if not found:
            reasons.append(f"{rel}: label {check.find!r} not found on sheet {sheet!r}")
            continue
        for ref, value in found:
            statements.append((f"{rel} {sheet}!{ref}", value))
            engines[f"{rel} {sheet}!{ref}"] = VALUE_SOURCE.get(wb.engine, wb.engine)
            rels[f"{rel} {sheet}!{ref}"] = rel
    if not statements:
        return CheckResult(passed=False, detail="; ".join(reasons))
    ok, bad = agreeing(statements, check.expect, expect_matches)
    if ok:
        where, value = statements[0]
        rel = rels[where]
        more = f" (stated {len(statements)}×, all agree)" if len(statements) > 1 else ""
        return CheckResult(
            passed=True,
            detail=f"{where} = {show(value)!r} ({engines[where]}){more}",
            evidence=f"{where[len(rel) + 1 :]} = {show(value)}",
            file=rel,
        )
    if bad:
        good = [st for st in statements if expect_matches(st[1], check.expect)]
        return conflict_result("xlsx_cell", good, bad, check.expect, file=rels[good[0][0]])
    for where, value in statements:
        reasons.append(f"{where} = {show(value)!r}, expected {describe_expect(check.expect)}")
    return CheckResult(passed=False, detail="; ".join(reasons))
