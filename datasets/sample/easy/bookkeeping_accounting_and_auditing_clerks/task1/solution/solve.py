"""Reference solution for easy/bookkeeping_accounting_and_auditing_clerks/task1 (March bank
reconciliation).

Usage: python solve.py --workspace DIR --output DIR

Matches the bank statement against the ledger (checks by number, deposits by date and
amount): ledger items the bank has not cleared are deposits in transit and outstanding
checks; bank items the ledger lacks (fees, interest, a returned check, an auto-debit) are
the book adjustments. Writes the reconciliation workbook and the adjusting entries.
"""

from __future__ import annotations

import argparse
import csv
import re
from pathlib import Path


def _amt(text) -> float:
    text = str(text or "").strip().replace(",", "")
    return float(text) if text else 0.0


def compute(ws: Path, *, book_bank_items: bool = True, deposits_in_transit: bool = True) -> dict:
    """``book_bank_items`` and ``deposits_in_transit`` exist so that decoys can reproduce
    plausible mistakes."""
    import openpyxl

    bank_rows = list(
        csv.DictReader(open(ws / "bank_statement_2024-03.csv", newline="", encoding="utf-8"))
    )
    bank_end = _amt(bank_rows[-1]["Balance"])
    checks: dict[str, float] = {}
    deposits: list[tuple[str, float]] = []
    other: list[tuple[str, float]] = []
    for r in bank_rows[1:]:
        amount = _amt(r["Credit"]) - _amt(r["Debit"])
        m = re.fullmatch(r"CHECK #(\d+)", r["Description"].strip())
        if m:
            checks[m.group(1)] = -amount
        elif r["Description"].strip() == "DEPOSIT":
            deposits.append((r["Date"], amount))
        else:
            other.append((r["Description"].strip(), amount))
    sh = openpyxl.load_workbook(ws / "gl_1010_cash_2024-03.xlsx")["GL 1010"]
    gl_end = 0.0
    outstanding: dict[str, float] = {}
    in_transit: list[tuple[str, float]] = []
    remaining = [(d.split("/")[2] + "-" + d[:2] + "-" + d[3:5], a) for d, a in deposits]
    for row in sh.iter_rows(min_row=2, values_only=True):
        gl_end = float(row[5])
        if not row[1]:
            continue
        if str(row[1]).startswith("CK"):
            if str(row[1])[2:] not in checks:
                outstanding[str(row[1])[2:]] = float(row[4])
        else:
            hit = next(
                (x for x in remaining if x[0] == str(row[0]) and abs(x[1] - float(row[3])) < 0.005),
                None,
            )
            if hit is None:
                in_transit.append((str(row[0]), float(row[3])))
            else:
                remaining.remove(hit)
    adjustments = (
        [(f"Record bank item: {d.title()}", a) for d, a in other] if book_bank_items else []
    )
    dit = sum(a for _, a in in_transit) if deposits_in_transit else 0.0
    os_total = sum(outstanding.values())
    adj_bank = bank_end + dit - os_total
    net = sum(a for _, a in adjustments)
    adj_book = gl_end + net
    return {
        "bank_end": bank_end,
        "dit": dit,
        "os_total": os_total,
        "adj_bank": adj_bank,
        "gl_end": gl_end,
        "net": net,
        "adj_book": adj_book,
        "diff": adj_bank - adj_book,
        "adjustments": adjustments,
    }


def write(res: dict, out: Path) -> None:
    from openpyxl import Workbook

    out.mkdir(parents=True, exist_ok=True)
    wb = Workbook()
    sh = wb.active
    sh.title = "Reconciliation"
    for label, key in (
        ("Balance per bank statement", "bank_end"),
        ("Deposits in transit", "dit"),
        ("Outstanding checks", "os_total"),
        ("Adjusted bank balance", "adj_bank"),
        ("Balance per general ledger", "gl_end"),
        ("Net book adjustments", "net"),
        ("Adjusted book balance", "adj_book"),
        ("Unreconciled difference", "diff"),
    ):
        sh.append([label, round(res[key], 2)])
    wb.save(out / "bank_reconciliation_2024-03.xlsx")
    with open(out / "adjusting_entries.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["entry", "description", "amount"])
        for i, (desc, amt) in enumerate(res["adjustments"], start=1):
            w.writerow([f"AJE-03-{i:02d}", desc, f"{amt:.2f}"])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--output", type=Path, required=True)
    a = ap.parse_args()
    write(compute(a.workspace), a.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
