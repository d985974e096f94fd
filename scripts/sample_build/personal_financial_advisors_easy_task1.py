"""easy/personal_financial_advisors/task1: 2009 performance figures for a client account,
the easy variant of main/personal_financial_advisors/task1 (the same real month-end prices
via vega_datasets and the same account).

What makes it the easy variant: clean quantities in the start-of-year holdings, one date
format in the ledger, the return method written in the instructions (no policy document to
read it from), and no custodian statement whose stale price disagrees with the firm's.
"""

from __future__ import annotations

from pathlib import Path

from _common import new_workbook, save_workbook, write_csv, write_text
from personal_financial_advisors_task1 import LEDGER, START, START_CASH, prices

SPLIT = "easy"
OCCUPATION, NUMBER = "personal_financial_advisors", 1

INSTRUCTIONS = """\
From: Margaret Cole, CFP - Senior Advisor
To: Associate advisor
Re: 2009 performance figures for the Okafor family account

Please compute the account's 2009 performance figures.

Method: value the account (securities plus cash) with our month-end closing prices (the
December 2008 close for 31 Dec 2008, the December 2009 close for 31 Dec 2009). Net external
cash flows are deposits (+) and withdrawals (-); trades are not external flows. Modified
Dietz return R = (EMV - BMV - F) / (BMV + sum of w x flow), with w = (days from the flow
date to 31 December) / 365.

Files:
- holdings_2008-12-31.xlsx: positions and cash on 31 Dec 2008.
- transactions_2009.csv: every trade (with commissions) and cash movement in 2009.
- monthly_prices_2008-2009.csv: our month-end closing prices.

Deliverables (output folder):
1. performance_2009.xlsx with a sheet "Summary" (label in column A, value in column B) with
   exactly these labels: Beginning value, Net external cash flows, Ending value,
   Investment gain, Ending cash, Modified Dietz return (as a fraction).
2. holdings_2009-12-31.csv: one row per security at year end with the columns symbol,
   shares, price, market_value, weight_pct (percent of the ending value).

Thanks, Margaret
"""

ISO = {
    "05/12/2009": "2009-05-12",
    "06/02/2009": "2009-06-02",
    "15-Sep-2009": "2009-09-15",
    "16-Nov-2009": "2009-11-16",
}


def build(task_dir: Path) -> None:
    ws = task_dir / "task_folder"
    write_text(ws / "TASK_INSTRUCTIONS.txt", INSTRUCTIONS)
    px = prices()
    write_csv(
        ws / "monthly_prices_2008-2009.csv",
        ["month", "ticker", "close_usd"],
        [
            [month, sym, f"{p:.2f}"]
            for (sym, month), p in sorted(px.items(), key=lambda kv: (kv[0][1], kv[0][0]))
        ],
    )
    wb = new_workbook()
    sh = wb.active
    sh.title = "Positions"
    sh.append(["Ticker", "Quantity", "Price 12/31/2008", "Market value"])
    for sym, qty in START.items():
        sh.append([sym, qty, px[(sym, "2008-12")], round(qty * px[(sym, "2008-12")], 2)])
    sh.append(["CASH", None, None, START_CASH])
    save_workbook(wb, ws / "holdings_2008-12-31.xlsx")
    tx = []
    for date, action, sym, qty, price, fee, cash in LEDGER:
        if action in ("BUY", "SELL"):
            gross = qty * price
            amount = -(gross + fee) if action == "BUY" else gross - fee
        else:
            amount = cash
        tx.append(
            [
                ISO.get(date, date),
                action,
                sym,
                "" if qty is None else qty,
                "" if price is None else f"{price:.2f}",
                f"{fee:.2f}",
                f"{amount:.2f}",
            ]
        )
    write_csv(
        ws / "transactions_2009.csv",
        ["Trade Date", "Action", "Symbol", "Quantity", "Price", "Commission", "Net Amount"],
        tx,
    )


def build_decoys(task_dir: Path) -> None:
    """Decoys: (1) a simple return that counts the deposit and the withdrawal as
    performance; (2) the year end valued at the November closes."""
    from _common import decoy_dir, load_solution

    sol = load_solution(task_dir)
    ws = task_dir / "task_folder"
    sol.write(sol.compute(ws, simple=True), decoy_dir(task_dir, "flows_as_performance"))
    sol.write(sol.compute(ws, end_month="2009-11"), decoy_dir(task_dir, "november_prices"))
