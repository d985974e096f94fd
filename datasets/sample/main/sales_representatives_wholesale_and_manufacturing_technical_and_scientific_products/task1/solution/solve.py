"""Reference solution for the sales representatives' task1 (June 2024 expense report).

Usage: python solve.py --workspace DIR --output DIR

Policy values come from the two reference documents the task withholds
(files_required_to_search/): the 2024 travel & expense policy ($75 daily cap on individual
meals; client entertainment at actual with attendees; hotel incidentals, personal-car fuel
and personal purchases not reimbursable and deducted when on the corporate card) and the IRS
2024 business mileage rate (67 cents per mile, Notice 2024-08). The two receipt photos are
transcribed below as a person reading them would (cash parking $24.00; the Carmine's dinner
of 11 June with four guests); everything else is read from the workspace files.
"""

from __future__ import annotations

import argparse
import csv
import re
from pathlib import Path

IRS_2024_BUSINESS_RATE = 0.67
DAILY_MEAL_CAP = 75.00
RECEIPTS = {
    "parking": {"date": "06/10/2024", "desc": "Smithfield-Liberty Garage parking (cash)", "amount": 24.00},
    "entertainment": {"merchant": "CARMINE'S", "attendees": "Dana Liu, Mark Osei, Priya Nair (Keystone Fabrication) and Jordan Reyes",
                      "purpose": "Q3 sensor order review"},
}


def compute(ws: Path, *, rate: float = IRS_2024_BUSINESS_RATE, split_personal: bool = True) -> dict:
    import docx
    import pdfplumber

    card = list(csv.DictReader(open(ws / "corporate_card_june2024.csv", newline="", encoding="utf-8")))
    with pdfplumber.open(ws / "hotel_folio_riverview_pittsburgh.pdf") as pdf:
        folio = "\n".join(p.extract_text() or "" for p in pdf.pages)
    incidentals = sum(float(m.group(1)) for m in re.finditer(r"In-room movie\s+([\d.]+)", folio))
    itinerary = "\n".join(p.text for p in docx.Document(ws / "trip_itinerary.docx").paragraphs)
    personal_merchants = {w.upper() for w in re.findall(r"(\w+) charge on \d+ \w+ was a personal", itinerary)}

    lines = []
    meals_by_day: dict[str, list[dict]] = {}
    for r in card:
        amt = float(r["Amount"])
        desc = r["Description"].strip()
        line = {"date": r["Trans Date"], "desc": desc, "amount": amt, "paid_by": "corporate card", "personal": 0.0, "note": ""}
        if split_personal:
            if r["Category"] == "Fuel":
                line["personal"], line["note"] = amt, "fuel for personal car: covered by mileage rate"
            elif any(desc.upper().startswith(m) for m in personal_merchants):
                line["personal"], line["note"] = amt, "personal purchase on corporate card"
            elif desc.upper().startswith("RIVERVIEW") and incidentals:
                line["personal"], line["note"] = incidentals, f"in-room movie {incidentals:.2f} is a personal incidental"
            elif r["Category"] == "Restaurants":
                if desc.upper().startswith(RECEIPTS["entertainment"]["merchant"]):
                    line["note"] = "client entertainment: " + RECEIPTS["entertainment"]["attendees"]
                else:
                    meals_by_day.setdefault(r["Trans Date"], []).append(line)
        lines.append(line)
    for day, meals in meals_by_day.items():
        total = sum(m["amount"] for m in meals)
        if total > DAILY_MEAL_CAP:
            excess = round(total - DAILY_MEAL_CAP, 2)
            last = meals[-1]
            last["personal"] += excess
            last["note"] = f"meals {day} total {total:.2f} exceed the {DAILY_MEAL_CAP:.2f} daily limit by {excess:.2f}"

    miles = 0
    tolls = 0.0
    for r in csv.DictReader(open(ws / "mileage_log_june2024.csv", newline="", encoding="utf-8")):
        leg = int(r["odometer_end"]) - int(r["odometer_start"])
        m = re.search(r"(\d+) mi[^\n]*personal", r["notes"])
        if m:
            leg -= int(m.group(1))
        miles += leg
        t = re.search(r"tolls \$([\d.]+)", r["notes"])
        if t:
            tolls += float(t.group(1))
    oop = [{"date": RECEIPTS["parking"]["date"], "desc": RECEIPTS["parking"]["desc"], "amount": RECEIPTS["parking"]["amount"]},
           {"date": "06/10/2024", "desc": "PA Turnpike tolls (cash, per mileage log)", "amount": tolls}]
    card_total = sum(l["amount"] for l in lines)
    personal = sum(l["personal"] for l in lines)
    oop_total = sum(o["amount"] for o in oop)
    mileage = round(miles * rate, 2)
    net_due = oop_total + mileage - personal
    return {"lines": lines, "oop": oop, "card_total": card_total, "personal": personal, "oop_total": oop_total,
            "miles": miles, "rate": rate, "mileage": mileage, "net_due": net_due,
            "business": card_total - personal + oop_total + mileage, "split": split_personal}


def write(res: dict, out: Path) -> None:
    from openpyxl import Workbook

    out.mkdir(parents=True, exist_ok=True)
    wb = Workbook()
    sh = wb.active
    sh.title = "Summary"
    for label, v in (("Corporate card charges", res["card_total"]), ("Non-reimbursable charges on card", res["personal"]),
                     ("Out-of-pocket expenses", res["oop_total"]), ("Business miles", res["miles"]),
                     ("Mileage reimbursement", res["mileage"]), ("Net amount due to employee", res["net_due"]),
                     ("Total business expense", res["business"])):
        sh.append([label, round(v, 2)])
    ln = wb.create_sheet("Lines")
    ln.append(["Date", "Description", "Paid by", "Amount", "Not reimbursable", "Treatment"])
    for l in res["lines"]:
        ln.append([l["date"], l["desc"], l["paid_by"], l["amount"], l["personal"], l["note"] or "business expense"])
    for o in res["oop"]:
        ln.append([o["date"], o["desc"], "employee (cash)", o["amount"], 0, "reimbursable"])
    ln.append(["06/10-06/13", f"Mileage {res['miles']} business miles x ${res['rate']:.3f}", "personal car", res["mileage"], 0,
               "reimbursable"])
    wb.save(out / "expense_report_june2024.xlsx")

    notes = ["# Expense report - Pittsburgh/Cleveland trip, 10-13 June 2024", "",
             f"Net amount due to Jordan Reyes: ${res['net_due']:,.2f} (out-of-pocket ${res['oop_total']:,.2f} plus "
             f"mileage ${res['mileage']:,.2f}, less ${res['personal']:,.2f} of non-reimbursable charges on the corporate card).", ""]
    if res["split"]:
        notes += ["## Non-reimbursable items (deducted)", ""]
        notes += [f"- {l['date']} {l['desc']}: ${l['personal']:,.2f} - {l['note']}." for l in res["lines"] if l["personal"]]
        notes.append("")
    notes += ["## Mileage", "",
              f"{res['miles']} business miles (odometer legs 185 + 42 + 134 + 143, less the 18-mile personal detour on 12 June) "
              f"x ${res['rate']:.3f} per mile = ${res['mileage']:,.2f}."
              + (" The IRS 2024 business rate is 67 cents per mile (Notice 2024-08); the 65.5 cents in the manager's note "
                 "was the 2023 rate." if abs(res["rate"] - 0.67) < 1e-9 else ""), "",
              "## Client entertainment", "",
              f"11 June, Carmine's Steakhouse, $212.40: attendees {RECEIPTS['entertainment']['attendees']}; "
              f"purpose: {RECEIPTS['entertainment']['purpose']}."]
    (out / "approver_note.md").write_text("\n".join(notes) + "\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--output", type=Path, required=True)
    a = ap.parse_args()
    write(compute(a.workspace), a.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
