"""easy/sales_representatives_wholesale_and_manufacturing_technical_and_scientific_products/
task1: a trip expense report, the easy variant of the main task of the same occupation
(the same synthetic trip; IRS 2024 business mileage rate of 67 cents, IRS Notice 2024-08).

What makes it the easy variant: the policy rules and the mileage rate are in the
instructions (nothing to look up, no manager's note with last year's rate), the card
export marks the personal charge and the client entertainment, the hotel charge holds no
personal incidental, and the trip log gives business miles and cash expenses directly (no
odometer readings with a personal detour, no receipts to read off photos).
"""

from __future__ import annotations

from pathlib import Path

from _common import new_workbook, save_workbook, write_csv, write_text

SPLIT = "easy"
OCCUPATION = "sales_representatives_wholesale_and_manufacturing_technical_and_scientific_products"
NUMBER = 1

INSTRUCTIONS = """\
From: Tom Becker, Regional Sales Manager
To: Jordan Reyes, Technical Sales Representative
Subject: Expense report for the Pittsburgh/Cleveland trip (10-13 June 2024)

Jordan, please prepare your expense report for the trip.

Policy: business miles in your own car are paid at 67 cents per mile; fuel for your own
car is not reimbursed (the mileage rate covers it). Meals are reimbursed up to $75.00 per
day (all meals of the day together); client entertainment has no limit. Personal charges
are not reimbursable. Non-reimbursable charges on the corporate card are deducted from what
we owe you.

Files:
- corporate_card_june2024.csv: your corporate card charges (numbered lines, with a
  category).
- trip_log_june2024.xlsx: business miles per day (sheet "Mileage") and cash you paid
  (sheet "Cash").

Deliverables (output folder):
1. expense_report_june2024.xlsx with a sheet "Summary" (label in column A, amount in
   column B) with exactly these labels: Corporate card charges, Non-reimbursable charges on card,
   Out-of-pocket expenses, Business miles, Mileage reimbursement, Net amount due to employee,
   Total business expense.
2. card_lines.csv with the columns line, amount, reimbursable_amount: one row per card
   line (line as numbered in the card file).

Tom
"""

CARD = [  # (date, description, category, amount)
    ("2024-06-10", "RIVERVIEW HOTEL PITTSBURGH PA", "Lodging", 367.22),
    ("2024-06-10", "STRIP DISTRICT DELI PITTSBURGH", "Meals", 18.75),
    ("2024-06-11", "CARMINE'S STEAKHOUSE PITTSBURGH", "Client entertainment", 212.40),
    ("2024-06-12", "BRUEGGER'S BAGELS PITTSBURGH", "Meals", 11.20),
    ("2024-06-12", "LAKESIDE GRILL CLEVELAND OH", "Meals", 96.50),
    ("2024-06-12", "CUYAHOGA SUITES CLEVELAND OH", "Lodging", 171.85),
    ("2024-06-13", "SPEEDWAY 4471 FUEL MEDINA OH", "Fuel", 48.30),
    ("2024-06-14", "AMAZON.COM*2K4LM1 AMZN.COM/BILL", "Personal", 36.99),
]
MILES = [
    ("2024-06-10", "Columbus OH - Pittsburgh PA", 185),
    ("2024-06-11", "Pittsburgh customer visits", 42),
    ("2024-06-12", "Pittsburgh PA - Cleveland OH", 116),
    ("2024-06-13", "Cleveland OH - Columbus OH", 143),
]
CASH = [
    ("2024-06-10", "PA Turnpike tolls", 14.60),
    ("2024-06-10", "Smithfield-Liberty Garage parking", 24.00),
]


def build(task_dir: Path) -> None:
    ws = task_dir / "task_folder"
    write_text(ws / "TASK_INSTRUCTIONS.txt", INSTRUCTIONS)
    write_csv(
        ws / "corporate_card_june2024.csv",
        ["line", "date", "description", "category", "amount"],
        [[i, d, desc, cat, f"{amt:.2f}"] for i, (d, desc, cat, amt) in enumerate(CARD, start=1)],
    )
    wb = new_workbook()
    sh = wb.active
    sh.title = "Mileage"
    sh.append(["Date", "Trip", "Business miles"])
    for r in MILES:
        sh.append(list(r))
    cash = wb.create_sheet("Cash")
    cash.append(["Date", "Item", "Amount"])
    for r in CASH:
        cash.append(list(r))
    save_workbook(wb, ws / "trip_log_june2024.xlsx")


def build_decoys(task_dir: Path) -> None:
    """Decoys: (1) no daily meal limit; (2) fuel reimbursed on top of the mileage."""
    from _common import decoy_dir, load_solution

    sol = load_solution(task_dir)
    ws = task_dir / "task_folder"
    sol.write(sol.compute(ws, meal_cap=None), decoy_dir(task_dir, "no_meal_limit"))
    sol.write(sol.compute(ws, fuel_reimbursed=True), decoy_dir(task_dir, "fuel_reimbursed"))
