"""easy/bookkeeping_accounting_and_auditing_clerks/task1: March 2024 bank reconciliation,
the easy variant of main/bookkeeping_accounting_and_auditing_clerks/task1 (the same
synthetic March books, generated with the same seed).

What makes it the easy variant: February's reconciliation is fully cleared (the bank and
the ledger open March at the same balance, nothing carried over), the ledger holds values
with no book errors (no duplicate posting, no mis-keyed deposit), and there is no
controller's note voiding a check. What is left is the core of a reconciliation: deposits
in transit, outstanding checks and the bank-only items to book.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from _common import new_workbook, save_workbook, write_csv, write_text
from bookkeeping_accounting_and_auditing_clerks_task1 import START_BANK, _signed, ledger

SPLIT = "easy"
OCCUPATION, NUMBER = "bookkeeping_accounting_and_auditing_clerks", 1

INSTRUCTIONS = """\
To: Accounting clerk
From: Lena Ortiz, Controller, Ortiz & Hale Landscape Architects
Subject: March bank reconciliation - operating account

Please reconcile the operating account (GL 1010) for March 2024. February reconciled with
nothing outstanding, so the bank and the ledger both open March at 48,215.60.

Files:
- bank_statement_2024-03.csv: the bank's March statement.
- gl_1010_cash_2024-03.xlsx: our ledger detail for account 1010 in March.

Deliverables (output folder):
1. bank_reconciliation_2024-03.xlsx with a sheet "Reconciliation" (label in column A, amount
   in column B) with exactly these labels: Balance per bank statement, Deposits in transit,
   Outstanding checks, Adjusted bank balance, Balance per general ledger,
   Net book adjustments, Adjusted book balance, Unreconciled difference.
2. adjusting_entries.csv: the entries to post to the books for items the bank recorded and
   we did not, one row per entry, with the columns entry, description, amount (amount =
   effect on cash: positive increases the book balance, negative decreases it).

Thanks, Lena
"""


def _items() -> list[dict]:
    """March's items without February's carry-overs and without the main task's book
    errors (the duplicate posting, the mis-keyed deposit)."""
    out = []
    for it in ledger():
        if it["date"] < date(2024, 3, 1):
            continue
        it = dict(it, dup=False, gl_amount=None)
        it["payee"] = it["payee"].replace(" (replaces 1038)", "")
        out.append(it)
    return out


def build(task_dir: Path) -> None:
    ws = task_dir / "task_folder"
    write_text(ws / "TASK_INSTRUCTIONS.txt", INSTRUCTIONS)
    items = _items()
    bank = sorted(
        (it for it in items if it["bank_date"]),
        key=lambda it: (it["bank_date"], it["kind"] != "deposit", it["ref"], it["amount"]),
    )
    bal = START_BANK
    rows = [["03/01/2024", "BEGINNING BALANCE", "", "", f"{bal:.2f}"]]
    for it in bank:
        s = _signed(it)
        bal = round(bal + s, 2)
        desc = (
            f"CHECK #{it['ref']}"
            if it["kind"] == "check"
            else ("DEPOSIT" if it["kind"] == "deposit" else it["payee"])
        )
        rows.append(
            [
                it["bank_date"].strftime("%m/%d/%Y"),
                desc,
                f"{-s:.2f}" if s < 0 else "",
                f"{s:.2f}" if s > 0 else "",
                f"{bal:.2f}",
            ]
        )
    write_csv(
        ws / "bank_statement_2024-03.csv",
        ["Date", "Description", "Debit", "Credit", "Balance"],
        rows,
    )

    wb = new_workbook()
    sh = wb.active
    sh.title = "GL 1010"
    sh.append(["Date", "Ref", "Description", "Debit", "Credit", "Balance"])
    bal = START_BANK
    sh.append(["2024-03-01", "", "Opening balance", None, None, bal])
    for it in sorted((it for it in items if it["gl"]), key=lambda it: (it["date"], it["ref"])):
        bal = round(bal + _signed(it), 2)
        ref = f"CK{it['ref']}" if it["kind"] == "check" else "DEP"
        sh.append(
            [
                it["date"].isoformat(),
                ref,
                it["payee"],
                it["amount"] if it["kind"] == "deposit" else None,
                it["amount"] if it["kind"] == "check" else None,
                bal,
            ]
        )
    save_workbook(wb, ws / "gl_1010_cash_2024-03.xlsx")


def build_decoys(task_dir: Path) -> None:
    """Decoys: (1) the bank-only items not booked (the difference left unreconciled); (2)
    the deposit in transit left out of the bank side."""
    from _common import decoy_dir, load_solution

    sol = load_solution(task_dir)
    ws = task_dir / "task_folder"
    sol.write(sol.compute(ws, book_bank_items=False), decoy_dir(task_dir, "bank_items_not_booked"))
    sol.write(
        sol.compute(ws, deposits_in_transit=False), decoy_dir(task_dir, "deposit_in_transit_missed")
    )
