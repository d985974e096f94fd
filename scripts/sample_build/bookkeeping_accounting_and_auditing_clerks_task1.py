"""bookkeeping_accounting_and_auditing_clerks/task1: March 2024 bank reconciliation
(synthetic books of a small firm, generated with a fixed seed).

Planted: bank-only items (service fee, interest, a returned customer check with its fee, an
unrecorded insurance auto-debit), two book errors (a deposit keyed 2,540.00 for 2,450.00 and a
check posted twice), a check voided per the controller's note but still on February's
outstanding list, three new outstanding checks and a deposit in transit.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from pathlib import Path

from _common import new_workbook, save_workbook, write_csv, write_docx, write_pdf, write_text

SPLIT = "main"
OCCUPATION, NUMBER = "bookkeeping_accounting_and_auditing_clerks", 1

INSTRUCTIONS = """\
To: Accounting clerk
From: Lena Ortiz, Controller, Ortiz & Hale Landscape Architects
Subject: March bank reconciliation - operating account

Please reconcile the operating account (GL 1010) for March 2024.

In this folder:
- bank_statement_2024-03.csv: the bank's March statement export.
- gl_1010_cash_2024-03.xlsx: our general ledger detail for account 1010.
- bank_rec_2024-02.pdf: last month's reconciliation.
- controller_note_2024-03-15.docx: my note about a check that went missing.

Deliverables (output folder):
1. bank_reconciliation_2024-03.xlsx with a sheet "Reconciliation" (label in column A, amount
   in column B) using exactly these labels: Balance per bank statement, Deposits in transit,
   Outstanding checks, Adjusted bank balance, Balance per general ledger,
   Net book adjustments, Adjusted book balance, Unreconciled difference.
2. adjusting_entries.csv: the journal entries we need to post to the books, one row per entry,
   with the columns entry, description, amount (amount = effect on cash: positive increases
   the book balance, negative decreases it).
3. reconciliation_memo.md: a short memo to me: what you found, the entries to post, and any
   follow-up needed.

Thanks, Lena
"""

START_BANK = 48215.60
FEB_OUTSTANDING = [
    (1038, date(2024, 1, 22), "Northside Office Supply", 310.00),
    (1041, date(2024, 2, 27), "Greenline Nursery", 1250.00),
]
FEB_DIT = (date(2024, 2, 29), 3400.00)


def _business_days():
    d = date(2024, 3, 1)
    while d.month == 3:
        if d.weekday() < 5:
            yield d
        d += timedelta(days=1)


def ledger():
    """All March items: dict(date, kind, ref, payee, amount, bank_date or None, gl: bool, gl_amount, dup)."""
    rng = random.Random(20240331)
    days = list(_business_days())
    payees = [
        "Greenline Nursery",
        "Cascade Stone Supply",
        "City of Fairview - permits",
        "Pacific Irrigation Co.",
        "Summit Equipment Rental",
        "Brightway Printing",
        "Office lease - Harbor Plaza",
        "Evergreen Mulch",
        "Timberline Lumber",
        "Coastal Courier",
    ]
    clients = [
        "Riverside HOA",
        "Maple Ridge School District",
        "Dunmore Residence",
        "Westgate Mall LLC",
        "Fairview Parks Dept",
    ]
    items = []
    # February carry-overs clearing in March.
    items.append(
        dict(
            date=FEB_DIT[0],
            kind="deposit",
            ref="DEP",
            payee="Deposit 2/29",
            amount=FEB_DIT[1],
            bank_date=date(2024, 3, 1),
            gl=False,
            gl_amount=None,
            dup=False,
        )
    )
    items.append(
        dict(
            date=FEB_OUTSTANDING[1][1],
            kind="check",
            ref="1041",
            payee=FEB_OUTSTANDING[1][2],
            amount=FEB_OUTSTANDING[1][3],
            bank_date=date(2024, 3, 4),
            gl=False,
            gl_amount=None,
            dup=False,
        )
    )
    check_no = 1042
    for i, d in enumerate(days[:-2]):
        if check_no <= 1069:
            for _ in range(2 if i % 2 == 0 else 1):
                if check_no > 1069:
                    break
                amt = round(rng.uniform(120, 3800), 2)
                if check_no == 1067:
                    amt = 418.30
                items.append(
                    dict(
                        date=d,
                        kind="check",
                        ref=str(check_no),
                        payee=rng.choice(payees),
                        amount=amt,
                        bank_date=d + timedelta(days=rng.choice([1, 2, 3])),
                        gl=True,
                        gl_amount=None,
                        dup=check_no == 1067,
                    )
                )
                check_no += 1
        if i % 3 == 1:
            amt = round(rng.uniform(1500, 9500), -1)
            items.append(
                dict(
                    date=d,
                    kind="deposit",
                    ref="DEP",
                    payee=rng.choice(clients),
                    amount=amt,
                    bank_date=d,
                    gl=True,
                    gl_amount=None,
                    dup=False,
                )
            )
    # Specials.
    items += [
        dict(
            date=date(2024, 3, 12),
            kind="deposit",
            ref="DEP",
            payee="Dunmore Residence (check 2207)",
            amount=1240.00,
            bank_date=date(2024, 3, 12),
            gl=True,
            gl_amount=None,
            dup=False,
        ),
        dict(
            date=date(2024, 3, 18),
            kind="bank_debit",
            ref="",
            payee="RETURNED ITEM - NSF CHECK 2207 DUNMORE",
            amount=1240.00,
            bank_date=date(2024, 3, 18),
            gl=False,
            gl_amount=None,
            dup=False,
        ),
        dict(
            date=date(2024, 3, 18),
            kind="bank_debit",
            ref="",
            payee="RETURNED ITEM FEE",
            amount=25.00,
            bank_date=date(2024, 3, 18),
            gl=False,
            gl_amount=None,
            dup=False,
        ),
        dict(
            date=date(2024, 3, 15),
            kind="check",
            ref="1070",
            payee="Northside Office Supply (replaces 1038)",
            amount=310.00,
            bank_date=date(2024, 3, 19),
            gl=True,
            gl_amount=None,
            dup=False,
        ),
        dict(
            date=date(2024, 3, 20),
            kind="bank_debit",
            ref="",
            payee="ACH DEBIT HARTWELL MUTUAL INS PREM",
            amount=862.15,
            bank_date=date(2024, 3, 20),
            gl=False,
            gl_amount=None,
            dup=False,
        ),
        dict(
            date=date(2024, 3, 22),
            kind="deposit",
            ref="DEP",
            payee="Westgate Mall LLC",
            amount=2450.00,
            bank_date=date(2024, 3, 22),
            gl=True,
            gl_amount=2540.00,
            dup=False,
        ),
        dict(
            date=date(2024, 3, 27),
            kind="check",
            ref="1071",
            payee="Summit Equipment Rental",
            amount=2150.00,
            bank_date=None,
            gl=True,
            gl_amount=None,
            dup=False,
        ),
        dict(
            date=date(2024, 3, 28),
            kind="check",
            ref="1072",
            payee="Coastal Courier",
            amount=96.40,
            bank_date=None,
            gl=True,
            gl_amount=None,
            dup=False,
        ),
        dict(
            date=date(2024, 3, 29),
            kind="check",
            ref="1073",
            payee="Timberline Lumber",
            amount=1308.75,
            bank_date=None,
            gl=True,
            gl_amount=None,
            dup=False,
        ),
        dict(
            date=date(2024, 3, 29),
            kind="deposit",
            ref="DEP",
            payee="Riverside HOA",
            amount=4125.00,
            bank_date=None,
            gl=True,
            gl_amount=None,
            dup=False,
        ),
        dict(
            date=date(2024, 3, 29),
            kind="bank_debit",
            ref="",
            payee="MONTHLY SERVICE FEE",
            amount=35.00,
            bank_date=date(2024, 3, 29),
            gl=False,
            gl_amount=None,
            dup=False,
        ),
        dict(
            date=date(2024, 3, 29),
            kind="bank_credit",
            ref="",
            payee="INTEREST PAID",
            amount=12.47,
            bank_date=date(2024, 3, 29),
            gl=False,
            gl_amount=None,
            dup=False,
        ),
    ]
    return items


def _signed(it) -> float:
    return it["amount"] if it["kind"] in ("deposit", "bank_credit") else -it["amount"]


def build(task_dir: Path) -> None:
    ws = task_dir / "task_folder"
    write_text(ws / "TASK_INSTRUCTIONS.txt", INSTRUCTIONS)
    items = ledger()

    bank = sorted(
        (it for it in items if it["bank_date"]),
        key=lambda it: (it["bank_date"], it["kind"] != "deposit", it["ref"], it["amount"]),
    )
    bal = START_BANK
    rows = [["03/01/2024", "BEGINNING BALANCE", "", "", f"{bal:.2f}"]]
    for it in bank:
        s = _signed(it)
        bal = round(bal + s, 2)
        if it["kind"] == "check":
            desc = f"CHECK #{it['ref']}" if int(it["ref"]) % 2 else f"CHK {it['ref']}"
        elif it["kind"] == "deposit":
            desc = "DEPOSIT" if it["ref"] == "DEP" else it["payee"]
        else:
            desc = it["payee"]
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
        crlf=True,
    )

    gl_open = START_BANK + FEB_DIT[1] - sum(a for *_, a in FEB_OUTSTANDING)
    wb = new_workbook()
    sh = wb.active
    sh.title = "GL 1010"
    sh.append(["Ortiz & Hale - GL detail, account 1010 Cash - Operating, March 2024"])
    sh.append(["Date", "Ref", "Description", "Debit", "Credit", "Balance"])
    sh.append(["2024-03-01", "", "Opening balance", None, None, round(gl_open, 2)])
    gl_items = sorted((it for it in items if it["gl"]), key=lambda it: (it["date"], it["ref"]))
    out = []
    for it in gl_items:
        out.append(it)
        if it["dup"]:
            out.append(it)
    for r, it in enumerate(out, start=4):
        amt = it["gl_amount"] or it["amount"]
        debit = amt if it["kind"] == "deposit" else None
        credit = amt if it["kind"] == "check" else None
        d = it["date"].isoformat() if r % 7 else it["date"].strftime("%m/%d/%y")
        ref = f"CK{it['ref']}" if it["kind"] == "check" else "DEP"
        sh.append([d, ref, it["payee"], debit, credit, f"=F{r - 1}+N(D{r})-N(E{r})"])
    save_workbook(wb, ws / "gl_1010_cash_2024-03.xlsx")

    write_pdf(
        ws / "bank_rec_2024-02.pdf",
        [
            ("h1", "Bank reconciliation - GL 1010 Operating - February 29, 2024"),
            ("p", "Prepared by: K. Dunn. Reviewed by: L. Ortiz."),
            (
                "table",
                [
                    ["Item", "Amount"],
                    ["Balance per bank statement", f"{START_BANK:,.2f}"],
                    ["Add: deposit in transit (2/29)", f"{FEB_DIT[1]:,.2f}"],
                    [
                        "Less: outstanding check #1038 (1/22, Northside Office Supply)",
                        f"({FEB_OUTSTANDING[0][3]:,.2f})",
                    ],
                    [
                        "Less: outstanding check #1041 (2/27, Greenline Nursery)",
                        f"({FEB_OUTSTANDING[1][3]:,.2f})",
                    ],
                    ["Adjusted bank balance", f"{gl_open:,.2f}"],
                    ["Balance per general ledger", f"{gl_open:,.2f}"],
                    ["Difference", "0.00"],
                ],
            ),
            (
                "p",
                "Note: #1038 is over 30 days old; follow up with the vendor if it has not cleared by the March reconciliation.",
            ),
        ],
        title="Bank reconciliation February 2024",
    )

    write_docx(
        ws / "controller_note_2024-03-15.docx",
        [
            ("p", "Note to file / accounting - 15 March 2024"),
            (
                "p",
                "Northside Office Supply called: check #1038 ($310.00, 22 January) never arrived. I placed a stop payment, "
                "voided #1038 and issued replacement check #1070 today for the same amount. The replacement is in the "
                "ledger; please make sure the void of #1038 gets booked and that it comes off the outstanding list.",
            ),
            ("p", "- L.O."),
        ],
        title="Controller note",
    )


def build_decoys(task_dir: Path) -> None:
    """Decoys: (1) February's outstanding list carried over (void of #1038 ignored) - the
    reconciliation still ties; (2) book errors not found, difference left unreconciled."""
    from _common import decoy_dir, load_solution

    sol = load_solution(task_dir)
    ws = task_dir / "task_folder"
    sol.write(sol.compute(ws, apply_void=False), decoy_dir(task_dir, "void_ignored"))
    sol.write(sol.compute(ws, find_book_errors=False), decoy_dir(task_dir, "book_errors_missed"))
