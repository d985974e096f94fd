"""personal_financial_advisors/task1: 2009 performance report for a client portfolio
(real month-end stock prices via vega_datasets).

Source: ``vega_datasets`` (PyPI 0.9.0) local dataset ``stocks``: month-end closing prices of
AAPL, AMZN, GOOG, IBM and MSFT, January 2000 - March 2010 (the Vega/Protovis example data,
from public market quotes; rows are labelled by the first day of the month they close).

Planted: a custodian statement that prices IBM at the November close; a transactions ledger
with three date formats; a deposit and a withdrawal that a simple return ignores; an IPS
single-security limit that the year-end portfolio breaches.
"""

from __future__ import annotations

from pathlib import Path

from _common import new_workbook, save_workbook, write_csv, write_docx, write_pdf, write_text

SPLIT = "main"
OCCUPATION, NUMBER = "personal_financial_advisors", 1

INSTRUCTIONS = """\
From: Margaret Cole, CFP - Senior Advisor
To: Associate advisor
Re: Annual review pack for the Okafor family account (calendar year 2009)

The Okafors come in next week for their annual review. Please prepare the 2009 performance
report and a draft client letter.

Files:
- holdings_2008-12-31.xlsx: positions and cash at the start of the year.
- transactions_2009.csv: every trade and cash movement during 2009 (exported from two
  systems, so check the formats).
- monthly_prices_2008-2009.csv: our month-end closing prices (our official pricing source).
- custodian_statement_2009-12.pdf: the custodian's year-end statement.
- ips_okafor.docx: the client's investment policy statement, including how we measure returns.

Deliverables (output folder):
1. performance_2009.xlsx with a sheet "Summary" (label in column A, value in column B) with
   exactly these labels: Beginning value, Net external cash flows, Ending value,
   Investment gain, Ending cash, Modified Dietz return; and a sheet "Holdings" with one row
   per security at year end: symbol (column A), shares, price, market value, weight.
2. client_letter.docx: a plain-English letter to the clients with the year's return and
   ending value, anything the IPS requires us to tell them, and an explanation of any
   difference between our figures and the custodian's statement.

Thanks, Margaret
"""

START = {"AAPL": 400, "MSFT": 1200, "IBM": 250, "GOOG": 60, "AMZN": 300}
START_CASH = 30000.00
# (date as exported, action, symbol, quantity, fill price, commission, cash amount)
LEDGER = [
    ("2009-03-16", "BUY", "AAPL", 200, 95.42, 9.95, None),
    ("05/12/2009", "DEPOSIT", "", None, None, 0.0, 25000.00),
    ("06/02/2009", "BUY", "AMZN", 150, 80.11, 9.95, None),
    ("15-Sep-2009", "SELL", "MSFT", 400, 25.02, 9.95, None),
    ("16-Nov-2009", "WITHDRAWAL", "", None, None, 0.0, -10000.00),
]


def prices():
    from vega_datasets import data

    st = data.stocks()
    st = st[(st.date >= "2008-12-01") & (st.date <= "2009-12-01")]
    return {
        (r.symbol, r.date.strftime("%Y-%m")): float(r.price) for r in st.itertuples(index=False)
    }


def build(task_dir: Path) -> None:
    ws = task_dir / "task_folder"
    write_text(ws / "TASK_INSTRUCTIONS.txt", INSTRUCTIONS)
    px = prices()

    rows = []
    for (sym, month), p in sorted(px.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        rows.append([month, sym, f"{p:.2f}"])
    write_csv(ws / "monthly_prices_2008-2009.csv", ["month", "ticker", "close_usd"], rows)

    wb = new_workbook()
    sh = wb.active
    sh.title = "Positions"
    sh.append(["Okafor family joint account - positions as of 31 Dec 2008"])
    sh.append(["Security", "Ticker", "Quantity", "Price 12/31/2008", "Market value"])
    names = {
        "AAPL": "Apple Inc.",
        "MSFT": "Microsoft Corp.",
        "IBM": "Intl Business Machines",
        "GOOG": "Google Inc. Cl A",
        "AMZN": "Amazon.com Inc.",
    }
    for i, (sym, qty) in enumerate(START.items(), start=3):
        q = f"{qty} sh" if sym == "GOOG" else qty
        sh.append([names[sym], sym, q, px[(sym, "2008-12")], f'=IFERROR(C{i}*D{i},"check qty")'])
    n = 2 + len(START)
    sh.append(["Cash (money market)", "CASH", None, None, START_CASH])
    sh.append(["Total", None, None, None, f"=SUM(E3:E{n + 1})"])
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
                date,
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
        crlf=True,
    )

    # Custodian statement: IBM priced at the November close (pricing-feed lag).
    end = dict(START)
    end["AAPL"] += 200
    end["AMZN"] += 150
    end["MSFT"] -= 400
    cash = START_CASH + sum(float(r[6]) for r in tx)
    table = [["Security", "Quantity", "Price", "Market value"]]
    total = 0.0
    for sym, qty in end.items():
        p = px[(sym, "2009-11")] if sym == "IBM" else px[(sym, "2009-12")]
        mv = qty * p
        total += mv
        table.append(
            [
                f"{names[sym]} ({sym})" + (" *" if sym == "IBM" else ""),
                f"{qty:,}",
                f"{p:,.2f}",
                f"{mv:,.2f}",
            ]
        )
    table.append(["Cash (money market)", "", "", f"{cash:,.2f}"])
    total += cash
    table.append(["Total account value", "", "", f"{total:,.2f}"])
    write_pdf(
        ws / "custodian_statement_2009-12.pdf",
        [
            ("h1", "Keystone Custody Services - Account statement"),
            (
                "p",
                "Account: Okafor family joint (xxxx-4471). Statement period: 1 Dec 2009 - 31 Dec 2009.",
            ),
            ("table", table),
            (
                "p",
                "* Price as of 11/30/2009: year-end price not received from the pricing vendor at statement cut-off.",
            ),
            (
                "p",
                "Dividends and interest are paid to the money market sweep and are reported on the annual tax statement.",
            ),
        ],
        title="Account statement December 2009",
    )

    write_docx(
        ws / "ips_okafor.docx",
        [
            ("h1", "Investment Policy Statement - Okafor family joint account"),
            ("p", "Adopted 3 March 2008; reviewed annually."),
            ("h2", "Objectives"),
            (
                "p",
                "Long-term growth with moderate risk; the clients add savings and take occasional withdrawals.",
            ),
            ("h2", "Constraints"),
            (
                "bullet",
                "Concentration: no single security may exceed 35% of total account value (securities plus cash) "
                "at year end. Any breach must be disclosed to the clients in the annual letter together with a "
                "rebalancing proposal.",
            ),
            ("bullet", "Liquidity: keep at least $5,000 in cash."),
            ("h2", "Performance measurement"),
            (
                "p",
                "Returns are reported net of commissions using the Modified Dietz method for the calendar year: "
                "R = (EMV - BMV - F) / (BMV + sum(w_i x F_i)), where F is net external cash flows (deposits positive, "
                "withdrawals negative; trades are not external flows) and w_i = (days from the flow date to 31 December) "
                "/ 365. Values use the firm's month-end closing prices.",
            ),
        ],
        title="IPS Okafor",
    )


def build_decoys(task_dir: Path) -> None:
    """Decoys: (1) takes the custodian's year-end value (IBM at the November close);
    (2) ignores the IPS: a simple return that counts the deposit/withdrawal as performance and
    no concentration disclosure."""
    from _common import decoy_dir, load_solution

    sol = load_solution(task_dir)
    ws = task_dir / "task_folder"
    sol.write(sol.compute(ws, use_custodian=True), decoy_dir(task_dir, "custodian_value"))
    sol.write(sol.compute(ws, ignore_ips=True), decoy_dir(task_dir, "ignored_ips"))
