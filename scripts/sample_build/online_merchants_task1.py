"""online_merchants/task1: May 2024 P&L for a small web shop (synthetic store data, fixed
seed; the processor fee schedule must be found by search).

Planted: test orders, cancelled orders and re-exported duplicate lines in the order export;
sales tax that the April template counts as revenue; a processor rate change on 15 May that
the April template's flat 2.9 % misses; a refund of an April order issued in May; an April
invoice paid in May in the expense ledger.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

from _common import (
    new_workbook,
    save_workbook,
    write_csv,
    write_docx,
    write_json,
    write_pdf,
    write_text,
)

SPLIT = "main"
OCCUPATION, NUMBER = "online_merchants", 1

INSTRUCTIONS = """\
Hi,

Can you put together the May 2024 profit and loss for the shop? Our accountant wants it by
Friday and I need to know whether May was actually profitable after the ad push.

What you have:
- orders_2024-05.csv: order lines exported from the storefront for May.
- refunds_2024-05.json: refunds issued through the payment processor in May.
- expenses_2024-05.xlsx: expense ledger and our unit costs per SKU.
- pnl_2024-04.xlsx: the April P&L I built myself; use it as a layout guide.
- accounting_policy.docx: the rules our accountant gave us.
- Payment processor fees: use the processor's current published fee schedule (not in this
  folder; look it up).

Please send back:
1. pnl_2024-05.xlsx with a sheet "P&L" (label in column A, amount in column B) with exactly
   these labels: Gross product sales, Discounts, Refunds, Net product sales, Shipping income,
   Total revenue, Cost of goods sold, Gross profit, Payment processing fees,
   Operating expenses, Net income. Show discounts, refunds and expenses as positive amounts
   that are subtracted.
2. may_summary.md: a few lines for me and the accountant: net income, how many orders
   counted, what you excluded and why, and anything that differs from how I did April.

Thanks!
Sam (owner, Fernleaf Paper Goods)
"""

SKUS = [
    ("FL-NB-A5", "A5 dot-grid notebook", 18.00, 6.10),
    ("FL-NB-A6", "A6 pocket notebook", 12.00, 3.85),
    ("FL-PL-WK", "Weekly planner 2024", 28.00, 9.40),
    ("FL-PN-GEL", "Gel pen set (5)", 9.50, 2.75),
    ("FL-ST-SET", "Sticker sheet set", 7.00, 1.60),
    ("FL-WC-BOX", "Washi tape box", 22.00, 7.90),
    ("FL-JR-LTH", "Leather journal", 46.00, 17.25),
    ("FL-CD-BDY", "Birthday card pack", 14.00, 4.20),
]
TAX_RATE = 0.0825


def orders():
    """Order header dicts with their lines (the true May orders plus planted noise)."""
    rng = random.Random(52024)
    out = []
    start = datetime(2024, 5, 1, 8, 0)
    for n in range(1, 119):
        ts = start + timedelta(minutes=int(rng.uniform(0, 30 * 24 * 60 + 15 * 60)))
        lines = []
        for sku in rng.sample(SKUS, rng.choice([1, 1, 2, 2, 3])):
            lines.append((sku[0], rng.choice([1, 1, 1, 2, 3]), sku[2]))
        sub = sum(q * p for _, q, p in lines)
        code = "WELCOME10" if rng.random() < 0.2 else ""
        disc = round(sub * 0.10, 2) if code else 0.0
        ship = 5.95 if sub - disc < 50 else 0.0
        taxed = rng.random() < 0.35
        tax = round((sub - disc) * TAX_RATE, 2) if taxed else 0.0
        pay = "paypal" if rng.random() < 0.25 else "card"
        status = "paid"
        email = f"customer{n:03d}@mail.example"
        out.append(
            dict(
                order_id=f"FL-{10400 + n}",
                ts=ts,
                lines=lines,
                code=code,
                discount=disc,
                shipping=ship,
                tax=tax,
                payment=pay,
                status=status,
                email=email,
            )
        )
    # Noise.
    out[10]["status"] = "cancelled"
    out[57]["status"] = "cancelled"
    for i, k in ((20, 1), (64, 2), (99, 3)):
        out[i]["status"] = "test"
        out[i]["email"] = f"sam+test{k}@fernleaf.example"
    return sorted(out, key=lambda o: o["ts"])


def build(task_dir: Path) -> None:
    ws = task_dir / "task_folder"
    write_text(ws / "TASK_INSTRUCTIONS.txt", INSTRUCTIONS)
    ords = orders()
    rows = []
    for o in ords:
        for i, (sku, qty, price) in enumerate(o["lines"], start=1):
            first = i == 1
            rows.append(
                [
                    o["order_id"],
                    i,
                    o["ts"].strftime("%Y-%m-%dT%H:%M:%S-07:00"),
                    o["status"],
                    o["email"],
                    sku,
                    qty,
                    f"{price:.2f}",
                    o["code"] if first else "",
                    f"{o['discount']:.2f}" if first else "0.00",
                    f"{o['shipping']:.2f}" if first else "0.00",
                    f"{o['tax']:.2f}" if first else "0.00",
                    o["payment"],
                ]
            )
    # A re-export appended the lines of the last day and a half again.
    dup = [r for r in rows if r[2] >= "2024-05-30T12"]
    rows += dup
    write_csv(
        ws / "orders_2024-05.csv",
        [
            "order_id",
            "line_no",
            "created_at",
            "financial_status",
            "email",
            "sku",
            "quantity",
            "unit_price",
            "discount_code",
            "order_discount",
            "order_shipping",
            "order_tax",
            "gateway",
        ],
        rows,
    )

    paid = [o for o in ords if o["status"] == "paid"]
    rng = random.Random(7)
    picks = rng.sample(paid[:-5], 4)
    refunds = []
    for k, o in enumerate(sorted(picks, key=lambda o: o["ts"])):
        sub = sum(q * p for _, q, p in o["lines"]) - o["discount"]
        amount = round(sub + o["tax"], 2) if k % 2 == 0 else round(o["lines"][0][2], 2)
        refunds.append(
            {
                "refund_id": f"re_{9100 + k}",
                "order_id": o["order_id"],
                "created": (o["ts"] + timedelta(days=3)).strftime("%Y-%m-%d"),
                "amount": amount,
                "kind": "full" if k % 2 == 0 else "partial",
                "note": "item damaged in transit" if k % 2 == 0 else "one item out of stock",
            }
        )
    refunds.append(
        {
            "refund_id": "re_9104",
            "order_id": "FL-10377",
            "created": "2024-05-02",
            "amount": 46.00,
            "kind": "partial",
            "note": "April order; journal arrived scratched",
        }
    )
    write_json(
        ws / "refunds_2024-05.json", {"processor": "Payflow", "currency": "USD", "refunds": refunds}
    )

    wb = new_workbook()
    sh = wb.active
    sh.title = "Expenses"
    sh.append(["Date paid", "Invoice date", "Vendor", "Category", "Amount"])
    exp = [
        ("2024-05-02", "2024-04-28", "Meta Ads", "Advertising", 420.00),
        ("2024-05-06", "2024-05-06", "Meta Ads", "Advertising", 1850.00),
        ("2024-05-07", "2024-05-07", "Google Ads", "Advertising", 640.00),
        ("2024-05-01", "2024-05-01", "Storefront platform", "Software", 89.00),
        ("2024-05-01", "2024-05-01", "Email marketing app", "Software", 29.00),
        ("2024-05-15", "2024-05-15", "ShipEasy labels", "Shipping labels", 612.40),
        ("2024-05-20", "2024-05-20", "Packaging Depot", "Packaging", 184.75),
        ("2024-05-31", "2024-05-31", "Self-storage unit 14B", "Rent", 300.00),
    ]
    for r in exp:
        sh.append(list(r))
    sh.append([])
    sh.append(["Total", None, None, None, f"=SUM(E2:E{len(exp) + 1})"])
    uc = wb.create_sheet("Unit costs")
    uc.append(["SKU", "Description", "Retail price", "Unit cost (landed)"])
    for sku, desc, price, cost in SKUS:
        uc.append([sku, desc, price, cost])
    save_workbook(wb, ws / "expenses_2024-05.xlsx")

    wb = new_workbook()
    sh = wb.active
    sh.title = "April P&L"
    lines = [
        ("Product sales", 4212.50),
        ("Shipping charged", 261.80),
        ("Sales tax collected", 118.40),
        ("Total revenue", "=B2+B3+B4"),
        ("Cost of goods sold", 1398.20),
        ("Gross profit", "=B5-B6"),
        ("Processor fees (2.9% + $0.30 x 121 orders)", "=ROUND(0.029*B5+0.3*121,2)"),
        ("Ads", 980.00),
        ("Software", 118.00),
        ("Other", 402.15),
        ("Net income", "=B7-B8-B9-B10-B11"),
    ]
    sh.append(["Line", "April 2024"])
    for label, v in lines:
        sh.append([label, v])
    save_workbook(wb, ws / "pnl_2024-04.xlsx")

    write_docx(
        ws / "accounting_policy.docx",
        [
            ("h1", "Fernleaf Paper Goods - accounting rules (from Dana Kim, CPA)"),
            (
                "bullet",
                "Accrual basis: revenue in the month the order is placed (order date, shop time zone); expenses in the "
                "month of the invoice or service date, not the payment date.",
            ),
            ("bullet", "Only paid orders count. Cancelled orders and test orders are not revenue."),
            (
                "bullet",
                "Sales tax collected is owed to the state: it is a liability, never revenue.",
            ),
            (
                "bullet",
                "Product sales are recorded gross; discounts are shown separately. Shipping charged to customers is "
                "shipping income.",
            ),
            (
                "bullet",
                "Refunds reduce revenue in the month the refund is issued, whatever month the order was placed; "
                "record the product portion only (any sales tax refunded reduces the tax liability).",
            ),
            (
                "bullet",
                "Cost of goods sold = units of paid orders x landed unit cost. Refunded items are not restocked.",
            ),
            (
                "bullet",
                "Payment processing fees are an expense of the month of the charge; fees on refunded charges are not "
                "returned by the processor.",
            ),
        ],
        title="Accounting rules",
    )


def build_search(task_dir: Path) -> None:
    sd = task_dir / "files_required_to_search"
    write_pdf(
        sd / "payflow_merchant_fee_schedule_2024.pdf",
        [
            ("h1", "Payflow merchant fee schedule - 2024"),
            (
                "p",
                "Applies to US merchants on the Standard plan. Fees are charged per successful charge on the full charged "
                "amount (items, shipping and tax).",
            ),
            (
                "table",
                [
                    [
                        "Payment type",
                        "Charges created before 15 May 2024",
                        "Charges created on or after 15 May 2024",
                    ],
                    ["Cards (online)", "2.9% + $0.30", "2.7% + $0.30"],
                    ["PayPal wallet", "3.49% + $0.49", "3.49% + $0.49"],
                ],
            ),
            ("p", "Refunds: the fees of the original charge are not returned."),
            ("p", "Dates are based on the merchant's account time zone."),
        ],
        title="Payflow fee schedule 2024",
    )
    write_pdf(
        sd / "payflow_merchant_fee_schedule_2023.pdf",
        [
            ("h1", "Payflow merchant fee schedule - 2023"),
            ("p", "Applies to US merchants on the Standard plan."),
            (
                "table",
                [
                    ["Payment type", "Fee"],
                    ["Cards (online)", "2.9% + $0.30"],
                    ["PayPal wallet", "3.49% + $0.49"],
                ],
            ),
            ("p", "Superseded by the 2024 schedule."),
        ],
        title="Payflow fee schedule 2023",
    )


def build_decoys(task_dir: Path) -> None:
    """Decoys: (1) the April template's method (sales tax in revenue, flat 2.9 % card fee,
    expenses by payment date); (2) no clean-up of test/cancelled orders and duplicate lines."""
    from _common import decoy_dir, load_solution

    sol = load_solution(task_dir)
    ws = task_dir / "task_folder"
    sol.write(sol.compute(ws, april_method=True), decoy_dir(task_dir, "april_template"))
    sol.write(sol.compute(ws, clean=False), decoy_dir(task_dir, "no_cleanup"))
