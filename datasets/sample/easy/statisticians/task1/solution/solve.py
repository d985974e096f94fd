"""Reference solution for easy/statisticians/task1 (EWR Q4 2013 on-time arrivals).

Usage: python solve.py --workspace DIR --output DIR

Classifies every flight of the export with the definitions of TASK_INSTRUCTIONS.txt
(cancelled: no DEP_TIME; diverted: no ARR_DELAY; on time: ARR_DELAY < 15 minutes over
completed flights), counts per carrier and overall, and ranks the carriers with at least
500 completed flights.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

THRESHOLD = 15  # minutes: on time when the arrival delay is below it
MIN_COMPLETED = 500


def compute(ws: Path, *, late_from: int = THRESHOLD, over_scheduled: bool = False) -> dict:
    """``late_from`` and ``over_scheduled`` exist so that decoys can reproduce plausible
    mistakes (a 15-minute delay counted as on time; the rate over scheduled flights)."""
    import openpyxl

    names = {
        str(c).strip(): str(n).strip()
        for c, n in openpyxl.load_workbook(ws / "carrier_codes.xlsx")["Carriers"].iter_rows(
            min_row=2, values_only=True
        )
    }
    per: dict[str, dict[str, int]] = {}
    with open(ws / "ewr_flights_q4_2013.csv", newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            c = per.setdefault(
                r["CARRIER"].strip(),
                dict.fromkeys(("scheduled", "cancelled", "diverted", "completed", "ontime"), 0),
            )
            c["scheduled"] += 1
            if not r["DEP_TIME"].strip():
                c["cancelled"] += 1
            elif not r["ARR_DELAY"].strip():
                c["diverted"] += 1
            else:
                c["completed"] += 1
                c["ontime"] += int(r["ARR_DELAY"]) < late_from

    def rate(c: dict) -> float:
        return c["ontime"] / (c["scheduled"] if over_scheduled else c["completed"])

    rows = sorted(
        (
            {"carrier": k, "carrier_name": names.get(k, k), **c, "ontime_rate": rate(c)}
            for k, c in per.items()
        ),
        key=lambda r: -r["scheduled"],
    )
    total = {
        k: sum(r[k] for r in rows)
        for k in ("scheduled", "cancelled", "diverted", "completed", "ontime")
    }
    total["ontime_rate"] = rate(total)
    ranked = [r for r in rows if r["completed"] >= MIN_COMPLETED]
    return {
        "rows": rows,
        "total": total,
        "best": max(ranked, key=lambda r: r["ontime_rate"])["carrier"],
        "worst": min(ranked, key=lambda r: r["ontime_rate"])["carrier"],
    }


def write(res: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    cols = [
        "carrier",
        "carrier_name",
        "scheduled",
        "cancelled",
        "diverted",
        "completed",
        "ontime",
        "ontime_rate",
    ]
    with open(out / "ontime_by_carrier.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in res["rows"]:
            w.writerow([r[c] if c != "ontime_rate" else f"{r[c]:.4f}" for c in cols])
    summary = {
        **res["total"],
        "ontime_rate": round(res["total"]["ontime_rate"], 4),
        "best_carrier": res["best"],
        "worst_carrier": res["worst"],
    }
    (out / "ontime_summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--output", type=Path, required=True)
    a = ap.parse_args()
    write(compute(a.workspace), a.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
