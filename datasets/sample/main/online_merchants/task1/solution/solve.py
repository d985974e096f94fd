"""Reference solution for online_merchants/task1 (May 2024 P&L).

Usage: python solve.py --workspace DIR --output DIR

Processor fees follow the Payflow 2024 fee schedule, the reference the task withholds
(files_required_to_search/payflow_merchant_fee_schedule_2024.pdf): cards 2.9 % + $0.30 for
charges before 15 May 2024 and 2.7 % + $0.30 from 15 May; PayPal 3.49 % + $0.49; fees on
the full charged amount, not returned on refunds. The accounting rules come from
accounting_policy.docx (accrual basis; paid orders only; sales tax is a liability).
"""

from __future__ import annotations

import argparse
import csv
import json
from datetime import date, datetime
from pathlib import Path

RATE_CHANGE = date(2024, 5, 15)
FEES = {"card": ((0.029, 0.30), (0.027, 0.30)), "paypal": ((0.0349, 0.49), (0.0349, 0.49))}


def compute(ws: Path, *, april_method: bool = False, clean: bool = True) -> dict:
    """``april_method``/``clean`` let decoys reproduce plausible mistakes."""
    import openpyxl

    wb = openpyxl.load_workbook(ws / "expenses_2024-05.xlsx")
    cost = {str(r[0]).strip(): float(r[3]) for r in wb["Unit costs"].iter_rows(min_row=2, values_only=True) if r[0]}
    orders: dict[str, dict] = {}
    seen: set[tuple[str, str]] = set()
    excluded = {"duplicate lines": 0, "cancelled": set(), "test": set()}
    with open(ws / "orders_2024-05.csv", newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            key = (r["order_id"], r["line_no"])
            if key in seen:
                excluded["duplicate lines"] += 1
                if clean:
                    continue
            seen.add(key)
            status = r["financial_status"].strip().lower()
            if status != "paid" and clean:
                excluded["test" if status == "test" else "cancelled"].add(r["order_id"])
                continue
            o = orders.setdefault(r["order_id"], {"items": 0.0, "discount": 0.0, "shipping": 0.0, "tax": 0.0,
                                                  "cogs": 0.0, "gateway": r["gateway"].strip().lower(),
                                                  "date": datetime.fromisoformat(r["created_at"]).date()})
            qty, price = int(r["quantity"]), float(r["unit_price"])
            o["items"] += qty * price
            o["cogs"] += qty * cost[r["sku"].strip()]
            o["discount"] += float(r["order_discount"])
            o["shipping"] += float(r["order_shipping"])
            o["tax"] += float(r["order_tax"])
    refunds = json.loads((ws / "refunds_2024-05.json").read_text(encoding="utf-8"))["refunds"]
    refund_total = 0.0
    for rf in refunds:
        amount = float(rf["amount"])
        if rf.get("kind") == "full" and rf["order_id"] in orders:
            amount -= orders[rf["order_id"]]["tax"]  # the tax refunded reduces the liability, not revenue
        refund_total += amount
    fees = 0.0
    for o in orders.values():
        charged = o["items"] - o["discount"] + o["shipping"] + o["tax"]
        if april_method:
            pct, fixed = 0.029, 0.30
        else:
            pct, fixed = FEES[o["gateway"]][o["date"] >= RATE_CHANGE]
        fees += charged * pct + fixed
    opex = 0.0
    for r in wb["Expenses"].iter_rows(min_row=2, values_only=True):
        if not r[0] or not isinstance(r[4], (int, float)):
            continue
        when = str(r[0] if april_method else r[1])[:7]
        if when == "2024-05":
            opex += float(r[4])
    gross = sum(o["items"] for o in orders.values())
    disc = sum(o["discount"] for o in orders.values())
    ship = sum(o["shipping"] for o in orders.values())
    tax = sum(o["tax"] for o in orders.values())
    net_sales = gross - disc - refund_total
    revenue = net_sales + ship + (tax if april_method else 0.0)
    cogs = sum(o["cogs"] for o in orders.values())
    gp = revenue - cogs
    return {"gross": gross, "disc": disc, "refunds": refund_total, "net_sales": net_sales, "ship": ship, "tax": tax,
            "revenue": revenue, "cogs": cogs, "gp": gp, "fees": fees, "opex": opex, "net": gp - fees - opex,
            "orders": len(orders), "excluded": excluded, "april_method": april_method, "clean": clean}


def write(res: dict, out: Path) -> None:
    from openpyxl import Workbook

    out.mkdir(parents=True, exist_ok=True)
    wb = Workbook()
    sh = wb.active
    sh.title = "P&L"
    for label, key in (("Gross product sales", "gross"), ("Discounts", "disc"), ("Refunds", "refunds"),
                       ("Net product sales", "net_sales"), ("Shipping income", "ship"), ("Total revenue", "revenue"),
                       ("Cost of goods sold", "cogs"), ("Gross profit", "gp"), ("Payment processing fees", "fees"),
                       ("Operating expenses", "opex"), ("Net income", "net")):
        sh.append([label, round(res[key], 2)])
    wb.save(out / "pnl_2024-05.xlsx")
    ex = res["excluded"]
    lines = ["# May 2024 P&L - summary", "",
             f"- Net income for May: ${res['net']:,.2f} (total revenue ${res['revenue']:,.2f}, gross profit ${res['gp']:,.2f}).",
             f"- Orders counted: {res['orders']} paid orders."]
    if res["clean"]:
        lines.append(f"- Excluded: {len(ex['cancelled'])} cancelled orders, {len(ex['test'])} test orders and "
                     f"{ex['duplicate lines']} duplicated lines from a re-export at month end.")
    if res["april_method"]:
        lines.append("- Same method as April.")
    else:
        lines += [
            f"- Sales tax collected of ${res['tax']:,.2f} is a liability and is not in revenue (April counted it).",
            "- Card fees follow the 2024 fee schedule: 2.9% + $0.30 before 15 May and 2.7% + $0.30 from 15 May; "
            "PayPal 3.49% + $0.49 (April used a flat 2.9% for everything).",
            "- Refunds are recorded when issued, including $46.00 on April order FL-10377; only the product portion "
            "reduces revenue.",
            "- Expenses are by invoice date: the $420.00 Meta Ads invoice of 28 April paid in May belongs to April.",
        ]
    (out / "may_summary.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--output", type=Path, required=True)
    a = ap.parse_args()
    write(compute(a.workspace), a.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
