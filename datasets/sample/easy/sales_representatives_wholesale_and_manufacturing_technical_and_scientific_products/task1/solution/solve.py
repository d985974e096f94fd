"""Reference solution for the easy sales representatives' task1 (trip expense report).

Usage: python solve.py --workspace DIR --output DIR

Applies the policy stated in TASK_INSTRUCTIONS.txt to every card line (personal charges
and own-car fuel are not reimbursable; meals are capped per day, client entertainment is
not), adds the cash expenses and the business miles at 67 cents, and nets the
non-reimbursable card charges against what is owed to the employee.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

RATE = 0.67  # USD per business mile
MEAL_CAP = 75.00  # USD per day


def compute(ws: Path, *, meal_cap: float | None = MEAL_CAP, fuel_reimbursed: bool = False) -> dict:
    """``meal_cap`` and ``fuel_reimbursed`` exist so that decoys can reproduce plausible
    mistakes."""
    import openpyxl

    lines = list(
        csv.DictReader(open(ws / "corporate_card_june2024.csv", newline="", encoding="utf-8"))
    )
    meals_by_day: dict[str, float] = {}
    out = []
    for r in lines:
        amount = float(r["amount"])
        cat = r["category"].strip().lower()
        if cat == "personal" or (cat == "fuel" and not fuel_reimbursed):
            ok = 0.0
        elif cat == "meals" and meal_cap is not None:
            left = max(0.0, meal_cap - meals_by_day.get(r["date"], 0.0))
            ok = min(amount, left)
            meals_by_day[r["date"]] = meals_by_day.get(r["date"], 0.0) + amount
        else:
            ok = amount
        out.append({"line": int(r["line"]), "amount": amount, "reimbursable": ok})
    wb = openpyxl.load_workbook(ws / "trip_log_june2024.xlsx")
    miles = sum(float(r[2]) for r in wb["Mileage"].iter_rows(min_row=2, values_only=True) if r[0])
    cash = sum(float(r[2]) for r in wb["Cash"].iter_rows(min_row=2, values_only=True) if r[0])
    card = sum(x["amount"] for x in out)
    nonreimb = card - sum(x["reimbursable"] for x in out)
    mileage = round(miles * RATE, 2)
    return {
        "lines": out,
        "card": card,
        "nonreimb": nonreimb,
        "cash": cash,
        "miles": miles,
        "mileage": mileage,
        "net": mileage + cash - nonreimb,
        "total": card - nonreimb + cash + mileage,
    }


def write(res: dict, out: Path) -> None:
    from openpyxl import Workbook

    out.mkdir(parents=True, exist_ok=True)
    wb = Workbook()
    sh = wb.active
    sh.title = "Summary"
    for label, key in (
        ("Corporate card charges", "card"),
        ("Non-reimbursable charges on card", "nonreimb"),
        ("Out-of-pocket expenses", "cash"),
        ("Business miles", "miles"),
        ("Mileage reimbursement", "mileage"),
        ("Net amount due to employee", "net"),
        ("Total business expense", "total"),
    ):
        sh.append([label, round(res[key], 2)])
    wb.save(out / "expense_report_june2024.xlsx")
    with open(out / "card_lines.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["line", "amount", "reimbursable_amount"])
        for x in res["lines"]:
            w.writerow([x["line"], f"{x['amount']:.2f}", f"{x['reimbursable']:.2f}"])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--output", type=Path, required=True)
    a = ap.parse_args()
    write(compute(a.workspace), a.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
