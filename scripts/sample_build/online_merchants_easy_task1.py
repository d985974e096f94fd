"""easy/online_merchants/task1: May 2024 profit and loss for a web shop, the easy variant of
main/online_merchants/task1 (the same synthetic May orders, generated with the same seed).

What makes it the easy variant: the order export holds only the paid orders, once each;
the refunds are of May orders and give the product amount only; the expense ledger holds
May's invoices only; and the accounting rules and the processor's fee are in the
instructions (no fee schedule to find, no accountant's rules contradicting the owner's
April template).
"""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

from _common import new_workbook, save_workbook, write_csv, write_json, write_text
from online_merchants_task1 import SKUS, orders

SPLIT = "easy"
OCCUPATION, NUMBER = "online_merchants", 1

INSTRUCTIONS = """\
Hi,

Can you put together the May 2024 profit and loss for the shop?

Rules from our accountant: sales tax we collect is not revenue. Refunds reduce revenue in
May (the refund file gives the product amount refunded). Cost of goods sold = units sold x
unit cost (refunded items are not restocked). The payment processor charges 2.9 % of each
order's charged amount (items less discount, plus shipping and tax) plus $0.30 per order.

Files:
- orders_2024-05.csv: the lines of May's paid orders.
- refunds_2024-05.json: the refunds issued in May.
- expenses_2024-05.xlsx: May's expense invoices and our unit cost per SKU.

Please send back:
1. pnl_2024-05.xlsx with a sheet "P&L" (label in column A, amount in column B) with exactly
   these labels: Gross product sales, Discounts, Refunds, Net product sales, Shipping income,
   Total revenue, Cost of goods sold, Gross profit, Payment processing fees,
   Operating expenses, Net income. Show discounts, refunds and expenses as positive amounts
   that are subtracted.
2. order_summary.json with the keys orders (number of orders) and units_sold.

Thanks!
Sam (owner, Fernleaf Paper Goods)
"""

EXPENSES = [
    ("2024-05-06", "Meta Ads", "Advertising", 1850.00),
    ("2024-05-07", "Google Ads", "Advertising", 640.00),
    ("2024-05-01", "Storefront platform", "Software", 89.00),
    ("2024-05-01", "Email marketing app", "Software", 29.00),
    ("2024-05-15", "ShipEasy labels", "Shipping labels", 612.40),
    ("2024-05-20", "Packaging Depot", "Packaging", 184.75),
    ("2024-05-31", "Self-storage unit 14B", "Rent", 300.00),
]


def build(task_dir: Path) -> None:
    ws = task_dir / "task_folder"
    write_text(ws / "TASK_INSTRUCTIONS.txt", INSTRUCTIONS)
    paid = [o for o in orders() if o["status"] == "paid"]
    rows = []
    for o in paid:
        for i, (sku, qty, price) in enumerate(o["lines"], start=1):
            first = i == 1
            rows.append(
                [
                    o["order_id"],
                    i,
                    o["ts"].strftime("%Y-%m-%d"),
                    sku,
                    qty,
                    f"{price:.2f}",
                    f"{o['discount']:.2f}" if first else "0.00",
                    f"{o['shipping']:.2f}" if first else "0.00",
                    f"{o['tax']:.2f}" if first else "0.00",
                ]
            )
    write_csv(
        ws / "orders_2024-05.csv",
        [
            "order_id",
            "line_no",
            "order_date",
            "sku",
            "quantity",
            "unit_price",
            "order_discount",
            "order_shipping",
            "order_tax",
        ],
        rows,
    )
    rng = random.Random(7)
    refunds = []
    for k, o in enumerate(sorted(rng.sample(paid[:-5], 4), key=lambda o: o["ts"])):
        amount = (
            sum(q * p for _, q, p in o["lines"]) - o["discount"] if k % 2 == 0 else o["lines"][0][2]
        )
        refunds.append(
            {
                "refund_id": f"re_{9100 + k}",
                "order_id": o["order_id"],
                "date": (o["ts"] + timedelta(days=3)).strftime("%Y-%m-%d"),
                "product_amount": round(amount, 2),
            }
        )
    write_json(ws / "refunds_2024-05.json", {"currency": "USD", "refunds": refunds})
    wb = new_workbook()
    sh = wb.active
    sh.title = "Expenses"
    sh.append(["Invoice date", "Vendor", "Category", "Amount"])
    for r in EXPENSES:
        sh.append(list(r))
    uc = wb.create_sheet("Unit costs")
    uc.append(["SKU", "Description", "Unit cost"])
    for sku, desc, _, cost in SKUS:
        uc.append([sku, desc, cost])
    save_workbook(wb, ws / "expenses_2024-05.xlsx")


def build_decoys(task_dir: Path) -> None:
    """Decoys: (1) sales tax counted as product sales; (2) the refunds left out."""
    from _common import decoy_dir, load_solution

    sol = load_solution(task_dir)
    ws = task_dir / "task_folder"
    sol.write(sol.compute(ws, tax_as_sales=True), decoy_dir(task_dir, "tax_as_sales"))
    sol.write(sol.compute(ws, refunds=False), decoy_dir(task_dir, "refunds_left_out"))
