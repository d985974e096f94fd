"""Reference solution for bookkeeping_accounting_and_auditing_clerks/task1 (March bank rec).

Usage: python solve.py --workspace DIR --output DIR

Matches the bank statement against GL 1010 (checks by number, deposits by date and amount),
carries February's outstanding items forward, applies the controller's void, and derives
deposits in transit, outstanding checks and the book adjustments (bank-only items and book
errors). Writes the reconciliation workbook, the adjusting entries and a memo.
"""

from __future__ import annotations

import argparse
import csv
import re
from datetime import date, datetime
from pathlib import Path


def _d(v) -> date:
    if isinstance(v, datetime):
        return v.date()
    for fmt in ("%Y-%m-%d", "%m/%d/%Y", "%m/%d/%y"):
        try:
            return datetime.strptime(str(v).strip(), fmt).date()
        except ValueError:
            pass
    raise ValueError(f"unrecognised date {v!r}")


def _amt(text) -> float:
    text = str(text).strip().replace(",", "").replace("$", "")
    if text.startswith("(") and text.endswith(")"):
        return -float(text[1:-1])
    return float(text) if text else 0.0


def compute(ws: Path, *, apply_void: bool = True, find_book_errors: bool = True) -> dict:
    import docx
    import openpyxl
    import pdfplumber

    bank_rows = list(csv.DictReader(open(ws / "bank_statement_2024-03.csv", newline="", encoding="utf-8")))
    bank_end = _amt(bank_rows[-1]["Balance"])
    bank_checks: dict[str, float] = {}
    bank_deps: list[tuple[date, float]] = []
    bank_other: list[tuple[str, float]] = []
    for r in bank_rows:
        desc = r["Description"].strip()
        if desc == "BEGINNING BALANCE":
            continue
        amount = _amt(r["Credit"]) - _amt(r["Debit"])
        m = re.fullmatch(r"(?:CHECK #|CHK )(\d+)", desc)
        if m:
            bank_checks[m.group(1)] = -amount
        elif desc == "DEPOSIT":
            bank_deps.append((_d(r["Date"]), amount))
        else:
            bank_other.append((desc, amount))

    sh = openpyxl.load_workbook(ws / "gl_1010_cash_2024-03.xlsx")["GL 1010"]
    gl_open = None
    gl_checks: dict[str, list[tuple[float, str]]] = {}
    gl_deps: list[tuple[date, float, str]] = []
    for row in sh.iter_rows(min_row=3, values_only=True):
        if row[2] == "Opening balance":
            gl_open = float(row[5])
            continue
        if not row[1]:
            continue
        if str(row[1]).startswith("CK"):
            gl_checks.setdefault(str(row[1])[2:], []).append((float(row[4]), str(row[2])))
        else:
            gl_deps.append((_d(row[0]), float(row[3]), str(row[2])))
    gl_end = gl_open + sum(a for _, a, _ in gl_deps) - sum(a for v in gl_checks.values() for a, _ in v)

    with pdfplumber.open(ws / "bank_rec_2024-02.pdf") as pdf:
        text = "\n".join(p.extract_text() or "" for p in pdf.pages)
    feb_os = {m.group(1): _amt(m.group(2)) for m in re.finditer(r"outstanding check #(\d+)[^\n]*?\(([\d,]+\.\d\d)\)", text)}
    feb_dit = [_amt(m.group(1)) for m in re.finditer(r"deposit in transit[^\n]*?([\d,]+\.\d\d)", text)]
    note = "\n".join(p.text for p in docx.Document(ws / "controller_note_2024-03-15.docx").paragraphs)
    voided = set(re.findall(r"voided #(\d+)", note)) if apply_void else set()

    adjustments: list[tuple[str, float]] = []
    findings: list[str] = []
    # Checks.
    outstanding: dict[str, float] = {}
    for no, amt in feb_os.items():
        if no in voided:
            adjustments.append((f"Void check #{no} (stop payment; replaced by a new check per controller note)", amt))
            findings.append(f"Check #{no} ({amt:,.2f}) was voided per the controller's note; booked the void and removed it from outstanding checks.")
        elif no not in bank_checks:
            outstanding[no] = amt
    for no, entries in gl_checks.items():
        amt = entries[0][0]
        if len(entries) > 1 and find_book_errors:
            for a, _ in entries[1:]:
                adjustments.append((f"Reverse duplicate posting of check #{no}", a))
            findings.append(f"Check #{no} ({amt:,.2f}) is posted twice in the GL; the duplicate must be reversed.")
        if no not in bank_checks:
            outstanding[no] = amt
        elif abs(bank_checks[no] - amt) > 0.005 and find_book_errors:
            adjustments.append((f"Correct check #{no} amount", amt - bank_checks[no]))
    # Deposits: February's deposit in transit, then GL deposits by date and amount.
    remaining = list(bank_deps)
    for amt in feb_dit:
        hit = next((b for b in remaining if abs(b[1] - amt) < 0.005), None)
        if hit:
            remaining.remove(hit)
    in_transit: list[tuple[date, float, str]] = []
    for d, amt, desc in gl_deps:
        hit = next((b for b in remaining if b[0] == d and abs(b[1] - amt) < 0.005), None)
        if hit is None:
            hit = next((b for b in remaining if b[0] == d and abs(b[1] - amt) <= 0.1 * amt), None)
            if hit is not None and find_book_errors:
                adjustments.append((f"Correct deposit of {d:%m/%d} ({desc}) recorded as {amt:,.2f}; bank credited {hit[1]:,.2f}", hit[1] - amt))
                findings.append(f"The {d:%m/%d} deposit from {desc} was recorded as {amt:,.2f} but the bank credited {hit[1]:,.2f} (transposed digits).")
        if hit is None:
            in_transit.append((d, amt, desc))
        else:
            remaining.remove(hit)
    # Bank-only items.
    for desc, amount in bank_other:
        adjustments.append((f"Record bank item: {desc.title()}", amount))
    for d, amount in remaining:
        adjustments.append((f"Record unidentified deposit of {d:%m/%d}", amount))

    dit = sum(a for _, a, _ in in_transit)
    os_total = sum(outstanding.values())
    adj_bank = bank_end + dit - os_total
    net_adj = sum(a for _, a in adjustments)
    adj_book = gl_end + net_adj
    return {"bank_end": bank_end, "gl_end": gl_end, "dit": dit, "in_transit": in_transit, "os": outstanding,
            "os_total": os_total, "adj_bank": adj_bank, "adjustments": adjustments, "net_adj": net_adj,
            "adj_book": adj_book, "diff": adj_bank - adj_book, "findings": findings, "bank_other": bank_other}


def write(res: dict, out: Path) -> None:
    from openpyxl import Workbook

    out.mkdir(parents=True, exist_ok=True)
    wb = Workbook()
    sh = wb.active
    sh.title = "Reconciliation"
    for label, value in (("Balance per bank statement", res["bank_end"]), ("Deposits in transit", res["dit"]),
                         ("Outstanding checks", res["os_total"]), ("Adjusted bank balance", res["adj_bank"]),
                         ("Balance per general ledger", res["gl_end"]), ("Net book adjustments", res["net_adj"]),
                         ("Adjusted book balance", res["adj_book"]), ("Unreconciled difference", res["diff"])):
        sh.append([label, round(value, 2)])
        sh.cell(sh.max_row, 2).number_format = "#,##0.00;(#,##0.00)"
    det = wb.create_sheet("Detail")
    det.append(["Type", "Reference", "Amount"])
    for no, amt in sorted(res["os"].items()):
        det.append(["Outstanding check", f"#{no}", round(amt, 2)])
    for d, amt, desc in res["in_transit"]:
        det.append(["Deposit in transit", f"{d:%m/%d} {desc}", round(amt, 2)])
    for desc, amt in res["adjustments"]:
        det.append(["Book adjustment", desc, round(amt, 2)])
    wb.save(out / "bank_reconciliation_2024-03.xlsx")

    with open(out / "adjusting_entries.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["entry", "description", "amount"])
        for i, (desc, amt) in enumerate(res["adjustments"], start=1):
            w.writerow([f"AJE-03-{i:02d}", desc, f"{amt:.2f}"])

    lines = ["# March 2024 bank reconciliation - GL 1010", "",
             f"Adjusted bank balance {res['adj_bank']:,.2f}; adjusted book balance {res['adj_book']:,.2f}; "
             f"unreconciled difference {res['diff']:,.2f}.", "",
             f"- Deposits in transit: {res['dit']:,.2f} (" + ", ".join(f"{d:%m/%d} {a:,.2f}" for d, a, _ in res["in_transit"]) + ").",
             f"- Outstanding checks: {res['os_total']:,.2f} (" + ", ".join(f"#{n} {a:,.2f}" for n, a in sorted(res["os"].items())) + ")."]
    lines += [f"- {f}" for f in res["findings"]]
    lines += ["", "## Entries to post", ""]
    lines += [f"- {desc}: {amt:,.2f}" for desc, amt in res["adjustments"]]
    lines += ["", "## Follow-up", "",
              "- Contact Dunmore Residence about the returned (NSF) check 2207 and re-bill the 1,240.00 plus the 25.00 fee.",
              "- The Hartwell Mutual insurance premium is now paid by ACH auto-debit; set up a recurring entry so it is recorded each month."]
    if abs(res["diff"]) > 0.005:
        lines.append(f"- An unreconciled difference of {res['diff']:,.2f} remains and needs investigation.")
    (out / "reconciliation_memo.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--output", type=Path, required=True)
    a = ap.parse_args()
    write(compute(a.workspace), a.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
