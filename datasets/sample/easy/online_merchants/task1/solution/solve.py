"""Reference solution for easy/online_merchants/task1 (May 2024 P&L).

Usage: python solve.py --workspace DIR --output DIR

Applies the rules of TASK_INSTRUCTIONS.txt: sales tax is not revenue; refunds (product
amounts) reduce revenue; cost of goods sold = units x unit cost; processor fees = 2.9 % of
each order's charged amount (items - discount + shipping + tax) + $0.30 per order.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

FEE_PCT, FEE_FIXED = 0.029, 0.30


def compute(ws: Path, *, tax_as_sales: bool = False, refunds: bool = True) -> dict:
    """``tax_as_sales`` and ``refunds`` exist so that decoys can reproduce plausible
    mistakes."""
    import openpyxl

    wb = openpyxl.load_workbook(ws / "expenses_2024-05.xlsx")
    cost = {
        str(r[0]): float(r[2])
        for r in wb["Unit costs"].iter_rows(min_row=2, values_only=True)
        if r[0]
    }
    orders: dict[str, dict] = {}
    units = 0
    for r in csv.DictReader(open(ws / "orders_2024-05.csv", newline="", encoding="utf-8")):
        o = orders.setdefault(
            r["order_id"], {"items": 0.0, "discount": 0.0, "shipping": 0.0, "tax": 0.0, "cogs": 0.0}
        )
        qty = int(r["quantity"])
        units += qty
        o["items"] += qty * float(r["unit_price"])
        o["cogs"] += qty * cost[r["sku"]]
        o["discount"] += float(r["order_discount"])
        o["shipping"] += float(r["order_shipping"])
        o["tax"] += float(r["order_tax"])
    refund = (
        sum(
            float(x["product_amount"])
            for x in json.loads((ws / "refunds_2024-05.json").read_text(encoding="utf-8"))[
                "refunds"
            ]
        )
        if refunds
        else 0.0
    )
    gross = sum(o["items"] + (o["tax"] if tax_as_sales else 0.0) for o in orders.values())
    disc = sum(o["discount"] for o in orders.values())
    ship = sum(o["shipping"] for o in orders.values())
    cogs = sum(o["cogs"] for o in orders.values())
    fees = sum(
        (o["items"] - o["discount"] + o["shipping"] + o["tax"]) * FEE_PCT + FEE_FIXED
        for o in orders.values()
    )
    opex = sum(float(r[3]) for r in wb["Expenses"].iter_rows(min_row=2, values_only=True) if r[0])
    net_sales = gross - disc - refund
    revenue = net_sales + ship
    gp = revenue - cogs
    return {
        "lines": [
            ("Gross product sales", gross),
            ("Discounts", disc),
            ("Refunds", refund),
            ("Net product sales", net_sales),
            ("Shipping income", ship),
            ("Total revenue", revenue),
            ("Cost of goods sold", cogs),
            ("Gross profit", gp),
            ("Payment processing fees", fees),
            ("Operating expenses", opex),
            ("Net income", gp - fees - opex),
        ],
        "orders": len(orders),
        "units": units,
    }


def write(res: dict, out: Path) -> None:
    from openpyxl import Workbook

    out.mkdir(parents=True, exist_ok=True)
    wb = Workbook()
    sh = wb.active
    sh.title = "P&L"
    for label, value in res["lines"]:
        sh.append([label, round(value, 2)])
    wb.save(out / "pnl_2024-05.xlsx")
    (out / "order_summary.json").write_text(
        json.dumps({"orders": res["orders"], "units_sold": res["units"]}, indent=2) + "\n",
        encoding="utf-8",
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
