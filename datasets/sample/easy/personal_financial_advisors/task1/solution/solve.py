"""Reference solution for easy/personal_financial_advisors/task1 (2009 performance figures).

Usage: python solve.py --workspace DIR --output DIR

Rolls the 31 Dec 2008 positions forward through the 2009 ledger (trades move shares and
cash, net of commissions), values both year ends at the month-end closes, and computes the
Modified Dietz return as TASK_INSTRUCTIONS.txt defines it.
"""

from __future__ import annotations

import argparse
import csv
from datetime import date
from pathlib import Path


def compute(ws: Path, *, simple: bool = False, end_month: str = "2009-12") -> dict:
    """``simple`` and ``end_month`` exist so that decoys can reproduce plausible mistakes
    (flows counted as performance; the year end valued at the wrong month's closes)."""
    import openpyxl

    px = {
        (r["ticker"].strip(), r["month"].strip()): float(r["close_usd"])
        for r in csv.DictReader(
            open(ws / "monthly_prices_2008-2009.csv", newline="", encoding="utf-8")
        )
    }
    shares: dict[str, float] = {}
    cash = 0.0
    for ticker, qty, _, value in openpyxl.load_workbook(ws / "holdings_2008-12-31.xlsx")[
        "Positions"
    ].iter_rows(min_row=2, values_only=True):
        if ticker == "CASH":
            cash = float(value)
        elif ticker:
            shares[str(ticker)] = float(qty)
    bmv = sum(q * px[(s, "2008-12")] for s, q in shares.items()) + cash
    end = date(2009, 12, 31)
    flows: list[tuple[date, float]] = []
    for r in csv.DictReader(open(ws / "transactions_2009.csv", newline="", encoding="utf-8")):
        amount = float(r["Net Amount"])
        cash += amount
        action = r["Action"].strip().upper()
        if action == "BUY":
            shares[r["Symbol"]] += float(r["Quantity"])
        elif action == "SELL":
            shares[r["Symbol"]] -= float(r["Quantity"])
        else:
            flows.append((date.fromisoformat(r["Trade Date"]), amount))
    holdings = [
        {"symbol": s, "shares": q, "price": px[(s, end_month)], "value": q * px[(s, end_month)]}
        for s, q in shares.items()
    ]
    emv = sum(h["value"] for h in holdings) + cash
    f_total = sum(a for _, a in flows)
    weighted = sum(a * (end - d).days / 365 for d, a in flows)
    ret = (emv - bmv) / bmv if simple else (emv - bmv - f_total) / (bmv + weighted)
    gain = emv - bmv if simple else emv - bmv - f_total
    for h in holdings:
        h["weight"] = 100 * h["value"] / emv
    return {
        "bmv": bmv,
        "emv": emv,
        "flows": f_total,
        "gain": gain,
        "cash": cash,
        "ret": ret,
        "holdings": holdings,
    }


def write(res: dict, out: Path) -> None:
    from openpyxl import Workbook

    out.mkdir(parents=True, exist_ok=True)
    wb = Workbook()
    sm = wb.active
    sm.title = "Summary"
    for label, key, digits in (
        ("Beginning value", "bmv", 2),
        ("Net external cash flows", "flows", 2),
        ("Ending value", "emv", 2),
        ("Investment gain", "gain", 2),
        ("Ending cash", "cash", 2),
        ("Modified Dietz return", "ret", 6),
    ):
        sm.append([label, round(res[key], digits)])
    wb.save(out / "performance_2009.xlsx")
    with open(out / "holdings_2009-12-31.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["symbol", "shares", "price", "market_value", "weight_pct"])
        for h in sorted(res["holdings"], key=lambda h: -h["value"]):
            w.writerow(
                [
                    h["symbol"],
                    f"{h['shares']:g}",
                    f"{h['price']:.2f}",
                    f"{h['value']:.2f}",
                    f"{h['weight']:.2f}",
                ]
            )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--output", type=Path, required=True)
    a = ap.parse_args()
    write(compute(a.workspace), a.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
