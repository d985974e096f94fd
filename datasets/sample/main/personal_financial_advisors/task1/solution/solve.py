"""Reference solution for personal_financial_advisors/task1 (2009 performance report).

Usage: python solve.py --workspace DIR --output DIR

Rolls the 31 Dec 2008 positions forward through the 2009 ledger, values both ends at the
firm's month-end prices, computes the Modified Dietz return as the IPS defines it, checks the
IPS concentration limit, and reconciles with the custodian's statement.
"""

from __future__ import annotations

import argparse
import csv
import re
from datetime import date, datetime
from pathlib import Path


def _date(text: str) -> date:
    for fmt in ("%Y-%m-%d", "%m/%d/%Y", "%d-%b-%Y"):
        try:
            return datetime.strptime(text.strip(), fmt).date()
        except ValueError:
            pass
    raise ValueError(f"unrecognised date {text!r}")


def _num(text) -> float:
    return float(re.sub(r"[^\d.\-]", "", str(text)))


def compute(ws: Path, *, use_custodian: bool = False, ignore_ips: bool = False) -> dict:
    """``use_custodian``/``ignore_ips`` let decoys reproduce plausible mistakes."""
    import openpyxl
    import pdfplumber

    px: dict[tuple[str, str], float] = {}
    with open(ws / "monthly_prices_2008-2009.csv", newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            px[(r["ticker"].strip(), r["month"].strip())] = float(r["close_usd"])
    sh = openpyxl.load_workbook(ws / "holdings_2008-12-31.xlsx")["Positions"]
    shares: dict[str, float] = {}
    cash = 0.0
    for row in sh.iter_rows(min_row=3, values_only=True):
        ticker = (row[1] or "").strip()
        if ticker == "CASH":
            cash = float(row[4])
        elif ticker:
            shares[ticker] = _num(row[2])
    bmv = sum(q * px[(s, "2008-12")] for s, q in shares.items()) + cash
    start = date(2008, 12, 31)
    end = date(2009, 12, 31)
    flows: list[tuple[date, float]] = []
    with open(ws / "transactions_2009.csv", newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            d = _date(r["Trade Date"])
            action = r["Action"].strip().upper()
            amount = float(r["Net Amount"])
            cash += amount
            if action == "BUY":
                shares[r["Symbol"].strip()] += float(r["Quantity"])
            elif action == "SELL":
                shares[r["Symbol"].strip()] -= float(r["Quantity"])
            elif action in ("DEPOSIT", "WITHDRAWAL"):
                flows.append((d, amount))
    holdings = []
    for s, q in shares.items():
        p = px[(s, "2009-12")]
        holdings.append({"symbol": s, "shares": q, "price": p, "value": q * p})
    emv = sum(h["value"] for h in holdings) + cash
    with pdfplumber.open(ws / "custodian_statement_2009-12.pdf") as pdf:
        text = "\n".join(p.extract_text() or "" for p in pdf.pages)
    m = re.search(r"Total account value\s+([\d,]+\.\d\d)", text)
    custodian = _num(m.group(1))
    if use_custodian:
        emv = custodian
    for h in holdings:
        h["weight"] = h["value"] / emv
    f_total = sum(a for _, a in flows)
    days = (end - start).days  # 365
    weighted = sum(a * (end - d).days / days for d, a in flows)
    if ignore_ips:  # simple return, flows treated as performance
        ret = (emv - bmv) / bmv
    else:
        ret = (emv - bmv - f_total) / (bmv + weighted)
    top = max(holdings, key=lambda h: h["weight"])
    return {"bmv": bmv, "emv": emv, "flows": f_total, "gain": emv - bmv - f_total, "cash": cash, "ret": ret,
            "holdings": holdings, "top": top, "custodian": custodian, "diff": (emv - custodian),
            "use_custodian": use_custodian, "simple": ignore_ips}


def write(res: dict, out: Path) -> None:
    import docx
    from openpyxl import Workbook

    out.mkdir(parents=True, exist_ok=True)
    wb = Workbook()
    sm = wb.active
    sm.title = "Summary"
    for label, value in (("Beginning value", round(res["bmv"], 2)), ("Net external cash flows", round(res["flows"], 2)),
                         ("Ending value", round(res["emv"], 2)), ("Investment gain", round(res["gain"], 2)),
                         ("Ending cash", round(res["cash"], 2)), ("Modified Dietz return", round(res["ret"], 6))):
        sm.append([label, value])
    sm["B6"].number_format = "0.00%"
    hs = wb.create_sheet("Holdings")
    hs.append(["Symbol", "Shares", "Price", "Market value", "Weight"])
    for h in sorted(res["holdings"], key=lambda h: -h["value"]):
        hs.append([h["symbol"], h["shares"], h["price"], round(h["value"], 2), round(h["weight"], 4)])
    hs.append(["Cash", None, None, round(res["cash"], 2), round(res["cash"] / res["emv"], 4)])
    wb.save(out / "performance_2009.xlsx")

    top = res["top"]
    d = docx.Document()
    d.add_paragraph("Dear Mr. and Mrs. Okafor,")
    label = "return" if res["simple"] else "Modified Dietz return, net of commissions,"
    d.add_paragraph(
        f"Your account ended 2009 at ${res['emv']:,.2f}, up from ${res['bmv']:,.2f} at the start of the year. "
        f"After allowing for your net additions of ${res['flows']:,.2f} (a $25,000 deposit in May and a $10,000 "
        f"withdrawal in November), the investment gain was ${res['gain']:,.2f}, a {label} of {res['ret']:.2%} for the year.")
    if top["weight"] > 0.35 and not res["simple"]:
        d.add_paragraph(
            f"Concentration: {top['symbol']} now makes up {top['weight']:.1%} of the account, above the 35% single-security "
            f"limit in your investment policy statement. We propose trimming {top['symbol']} back below 35% and spreading the "
            "proceeds across your other holdings; we will discuss this at the meeting.")
    if not res["use_custodian"]:
        d.add_paragraph(
            f"Our year-end value is ${res['diff']:,.2f} higher than the custodian's statement (${res['custodian']:,.2f}). "
            "The custodian priced IBM at its 30 November close because its year-end price arrived after the statement "
            "cut-off; at the 31 December close the difference disappears. Share quantities and cash agree.")
    d.add_paragraph("Kind regards,\nMargaret Cole, CFP")
    d.save(out / "client_letter.docx")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--output", type=Path, required=True)
    a = ap.parse_args()
    write(compute(a.workspace), a.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
