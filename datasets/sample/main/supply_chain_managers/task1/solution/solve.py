"""Reference solution for supply_chain_managers/task1 (FY2008 forecast review).

Usage: python solve.py --workspace DIR --output DIR

Recomputes the forecast of record (the workbook holds formulas only: History x (1 + growth);
the December S&OP minutes set H02 growth to 0 % from January 2008), compares it with actuals
converted to thousands of scripts, and resets safety stock with the minutes' rule and lead
times. Current settings come from last year's deck.
"""

from __future__ import annotations

import argparse
import csv
import math
import re
from pathlib import Path

MONTH = {m: i for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)}


def _key(text: str) -> tuple[int, int]:
    text = text.strip()
    m = re.fullmatch(r"(\d{4})-(\d{2})(?:-\d{2})?", text)
    if m:
        return int(m.group(1)), int(m.group(2))
    m = re.fullmatch(r"([A-Za-z]{3})-(\d{4})", text)
    return int(m.group(2)), MONTH[m.group(1).lower()]


def read_actuals(ws: Path, convert: bool = True) -> dict[str, dict[tuple[int, int], float]]:
    out: dict[str, dict] = {}
    for path in sorted(ws.glob("scripts_*.csv")):
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            header = next(reader)
            factor = 1000.0 if ("million" in header[2].lower() and convert) else 1.0
            for row in reader:
                out.setdefault(row[1].strip(), {})[_key(row[0])] = float(row[2]) * factor
    return out


def compute(ws: Path, *, apply_revision: bool = True, convert_units: bool = True) -> dict:
    import docx
    import openpyxl
    from pptx import Presentation

    actual = read_actuals(ws, convert_units)
    wb = openpyxl.load_workbook(ws / "forecast_fy2008.xlsx")
    growth = {r[0]: float(r[1]) for r in wb["Assumptions"].iter_rows(min_row=2, values_only=True) if r[0]}
    hist = [r for r in wb["History"].iter_rows(min_row=2, values_only=True) if r[0]]
    minutes = "\n".join(p.text for p in docx.Document(ws / "sop_minutes_2007-12-14.docx").paragraphs)
    z = float(re.search(r"Safety stock = ([\d.]+) x RMSE", minutes).group(1))
    lead = {p: int(n) for p, n in re.findall(r"\b(A10|H02) (\d+) months?\b", minutes.split("Lead times:")[1])}
    revised_from = (2008, 1) if apply_revision and "0% growth" in minutes else None

    current: dict[str, float] = {}
    for slide in Presentation(ws / "fy2007_forecast_review.pptx").slides:
        for shape in slide.shapes:
            if shape.has_table and "Safety stock" in shape.table.cell(0, 2).text:
                for r in list(shape.table.rows)[1:]:
                    current[r.cells[0].text.strip()] = float(r.cells[2].text.replace(",", ""))

    rows = []
    for col, product in ((1, "A10"), (2, "H02")):
        errs, ape, tot_a = [], [], 0.0
        for h in hist:
            y, m = _key(str(h[0]))
            target = (y + 1, m)
            g = growth[product]
            if product == "H02" and revised_from and target >= revised_from:
                g = 0.0
            f = float(h[col]) * (1 + g)
            if not convert_units and product == "A10":
                f /= 1000.0  # history is in thousands; the decoy keeps A10 in millions
            a = actual[product][target]
            errs.append(f - a)
            ape.append(abs(f - a) / a)
            tot_a += a
        rmse = math.sqrt(sum(e * e for e in errs) / len(errs))
        ss = z * rmse * math.sqrt(lead[product])
        rows.append({"product": product, "mape_pct": 100 * sum(ape) / len(ape), "bias_pct": 100 * sum(errs) / tot_a,
                     "rmse_thousand": rmse, "safety_stock_thousand": ss, "current_safety_stock_thousand": current[product],
                     "change_thousand": ss - current[product], "lead": lead[product]})
    return {"rows": rows, "revised": revised_from is not None, "z": z}


def write(res: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    cols = ["product", "mape_pct", "bias_pct", "rmse_thousand", "safety_stock_thousand", "current_safety_stock_thousand",
            "change_thousand"]
    with open(out / "forecast_metrics.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in res["rows"]:
            w.writerow([r["product"]] + [f"{r[c]:.2f}" for c in cols[1:]])
    lines = ["# FY2008 forecast review - A10 and H02", ""]
    for r in res["rows"]:
        verdict = "misses" if r["mape_pct"] > 10 else "meets"
        lines.append(f"- {r['product']}: MAPE {r['mape_pct']:.2f}% ({verdict} the 10% target), bias {r['bias_pct']:+.2f}% "
                     f"(within the +/-5% tolerance), RMSE {r['rmse_thousand']:,.1f} thousand scripts.")
    lines += ["", "## What was evaluated", ""]
    if res["revised"]:
        lines.append("H02 is evaluated against the forecast of record approved at the 14 December 2007 S&OP: 0% growth "
                     "(last year's actual) from January 2008 because of generic entry; the workbook still applies +4% "
                     "and was not updated. A10 uses the +12% workbook forecast.")
    else:
        lines.append("Both products are evaluated against the FY2008 forecast workbook.")
    lines += ["", "## Safety stock", ""]
    for r in res["rows"]:
        lines.append(f"- {r['product']}: {res['z']} x {r['rmse_thousand']:,.1f} x sqrt({r['lead']}) = "
                     f"{r['safety_stock_thousand']:,.0f} thousand scripts, versus {r['current_safety_stock_thousand']:,.0f} now "
                     f"(change {r['change_thousand']:+,.0f} thousand).")
    lines.append("The A10 increase reflects the new 2-month lead time from the importer change as well as the forecast error.")
    (out / "review_memo.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--output", type=Path, required=True)
    a = ap.parse_args()
    write(compute(a.workspace), a.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
