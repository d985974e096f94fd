"""Reference solution for easy/supply_chain_managers/task1 (FY2008 forecast accuracy and
safety stock).

Usage: python solve.py --workspace DIR --output DIR

Compares the FY2008 forecast with the actuals month by month and applies the definitions
of TASK_INSTRUCTIONS.txt (MAPE, bias, RMSE; safety stock = 1.65 x RMSE x sqrt(lead time)).
"""

from __future__ import annotations

import argparse
import csv
import math
from pathlib import Path

Z = 1.65


def compute(ws: Path, *, mape_over_forecast: bool = False, use_lead_time: bool = True) -> dict:
    """``mape_over_forecast`` and ``use_lead_time`` exist so that decoys can reproduce
    plausible mistakes."""
    import openpyxl

    actual = {
        (r["product"].strip(), r["month"].strip()): float(r["scripts_thousand"])
        for r in csv.DictReader(
            open(ws / "actual_scripts_fy2008.csv", newline="", encoding="utf-8")
        )
    }
    wb = openpyxl.load_workbook(ws / "forecast_fy2008.xlsx")
    forecast = {}
    for month, a10, h02 in wb["Forecast"].iter_rows(min_row=2, values_only=True):
        forecast[("A10", str(month))], forecast[("H02", str(month))] = float(a10), float(h02)
    settings = {
        str(p): (int(lead), float(cur))
        for p, lead, cur in wb["Settings"].iter_rows(min_row=2, values_only=True)
    }
    rows = []
    for product in ("A10", "H02"):
        pairs = [(forecast[k], actual[k]) for k in sorted(forecast) if k[0] == product]
        errs = [f - a for f, a in pairs]
        mape = (
            100 * sum(abs(f - a) / (f if mape_over_forecast else a) for f, a in pairs) / len(pairs)
        )
        bias = 100 * sum(errs) / sum(a for _, a in pairs)
        rmse = math.sqrt(sum(e * e for e in errs) / len(errs))
        lead, current = settings[product]
        ss = Z * rmse * math.sqrt(lead if use_lead_time else 1)
        rows.append(
            {
                "product": product,
                "mape_pct": mape,
                "bias_pct": bias,
                "rmse_thousand": rmse,
                "safety_stock_thousand": ss,
                "current_safety_stock_thousand": current,
                "change_thousand": ss - current,
            }
        )
    return {"rows": rows}


def write(res: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    cols = [
        "product",
        "mape_pct",
        "bias_pct",
        "rmse_thousand",
        "safety_stock_thousand",
        "current_safety_stock_thousand",
        "change_thousand",
    ]
    with open(out / "forecast_metrics.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in res["rows"]:
            w.writerow([r["product"]] + [f"{r[c]:.2f}" for c in cols[1:]])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--output", type=Path, required=True)
    a = ap.parse_args()
    write(compute(a.workspace), a.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
