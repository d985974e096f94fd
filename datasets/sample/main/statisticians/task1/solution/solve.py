"""Reference solution for statisticians/task1 (EWR Q4 2013 on-time report).

Usage: python solve.py --workspace DIR --output DIR

Reads the flight export, normalises the two source systems' date/time formats, removes the
duplicated 30 November rows, classifies flights per methodology v2.1 (read from the DOCX:
on time = arrival delay below the stated threshold; cancelled/diverted excluded; ranking
threshold from carrier_codes.xlsx) and writes the workbook, CSV, chart and board note.
"""

from __future__ import annotations

import argparse
import csv
import re
from datetime import date, datetime
from pathlib import Path


def _date(text: str) -> date:
    text = text.strip()
    for fmt in ("%Y-%m-%d", "%m/%d/%Y"):
        try:
            return datetime.strptime(text, fmt).date()
        except ValueError:
            pass
    raise ValueError(f"unrecognised date {text!r}")


def _hhmm(text: str) -> int | None:
    text = text.strip()
    if not text:
        return None
    if ":" in text:
        h, m = text.split(":")
        return int(h) * 100 + int(m)
    return int(text)


def read_method(ws: Path) -> dict:
    """Threshold (minutes) from the methodology DOCX and ranking minimum from the workbook."""
    import docx
    import openpyxl

    text = "\n".join(p.text for p in docx.Document(ws / "ontime_methodology_v2.1.docx").paragraphs)
    m = re.search(r"less than (\d+) minutes after", text)
    threshold = int(m.group(1)) if m else 15
    wb = openpyxl.load_workbook(ws / "carrier_codes.xlsx")
    min_completed = None
    for row in wb["Parameters"].iter_rows(values_only=True):
        if row[0] and str(row[0]).lower().startswith("minimum completed flights"):
            min_completed = int(row[1])
    names = {}
    for row in wb["Carriers"].iter_rows(min_row=2, values_only=True):
        if row[0] and row[1] and not str(row[1]).startswith("="):
            names[str(row[0]).strip().upper()] = str(row[1]).strip()
    return {"threshold": threshold, "min_completed": min_completed, "names": names}


def compute(ws: Path, *, rule: str = "v2.1", dedupe: bool = True) -> dict:
    """Per-carrier counts and rates. ``rule``/``dedupe`` exist so decoys can reproduce
    plausible mistakes (v1.0 definition, no de-duplication)."""
    method = read_method(ws)
    seen: set[tuple] = set()
    dups = 0
    per: dict[str, dict[str, int]] = {}
    with open(ws / "ewr_departures_oct-dec_2013.csv", newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            d = _date(r["FL_DATE"])
            if not (date(2013, 10, 1) <= d <= date(2013, 12, 31)):
                continue
            carrier = r["CARRIER"].strip().upper()
            key = (d, carrier, int(r["FLIGHT_NUM"]), _hhmm(r["CRS_DEP_TIME"]))
            if key in seen:
                dups += 1
                if dedupe:
                    continue
            seen.add(key)
            c = per.setdefault(carrier, {"scheduled": 0, "cancelled": 0, "diverted": 0, "completed": 0, "ontime": 0})
            c["scheduled"] += 1
            dep = _hhmm(r["DEP_TIME"])
            delay = r["ARR_DELAY"].strip()
            if dep is None:
                c["cancelled"] += 1
            elif delay == "":
                c["diverted"] += 1
            else:
                c["completed"] += 1
                late = int(delay)
                if rule == "v2.1":
                    c["ontime"] += late < method["threshold"]
                else:  # v1.0: at or before schedule
                    c["ontime"] += late <= 0
    rows = []
    for code, c in per.items():
        denom = c["completed"] if rule == "v2.1" else c["scheduled"]
        rows.append({"carrier": code, "carrier_name": method["names"].get(code, code), **c,
                     "ontime_rate": c["ontime"] / denom if denom else 0.0})
    rows.sort(key=lambda x: -x["scheduled"])
    tot = {k: sum(r[k] for r in rows) for k in ("scheduled", "cancelled", "diverted", "completed", "ontime")}
    tot["ontime_rate"] = tot["ontime"] / (tot["completed"] if rule == "v2.1" else tot["scheduled"])
    eligible = [r for r in rows if r["completed"] >= method["min_completed"]]
    best = max(eligible, key=lambda r: r["ontime_rate"])
    worst = min(eligible, key=lambda r: r["ontime_rate"])
    return {"rows": rows, "total": tot, "duplicates": dups if dedupe else 0, "best": best, "worst": worst,
            "method": method, "eligible": {r["carrier"] for r in eligible}, "rule": rule}


def write(res: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from openpyxl import Workbook

    out.mkdir(parents=True, exist_ok=True)
    cols = ["carrier", "carrier_name", "scheduled", "cancelled", "diverted", "completed", "ontime", "ontime_rate"]
    wb = Workbook()
    sh = wb.active
    sh.title = "By carrier"
    sh.append(["Carrier code", "Carrier name", "Scheduled flights", "Cancelled", "Diverted", "Completed flights",
               "On-time arrivals", "On-time rate", "Ranked"])
    for r in res["rows"]:
        sh.append([r[c] for c in cols] + ["yes" if r["carrier"] in res["eligible"] else "no (< minimum)"])
        sh.cell(sh.max_row, 8).number_format = "0.0%"
    t = res["total"]
    sm = wb.create_sheet("Summary")
    for label, value in (("Scheduled flights", t["scheduled"]), ("Duplicate rows removed", res["duplicates"]),
                         ("Cancelled flights", t["cancelled"]), ("Diverted flights", t["diverted"]),
                         ("Completed flights", t["completed"]), ("On-time arrivals", t["ontime"]),
                         ("On-time rate", round(t["ontime_rate"], 4))):
        sm.append([label, value])
    sm["B7"].number_format = "0.0%"
    wb.save(out / "ewr_q4_2013_ontime.xlsx")

    with open(out / "ontime_by_carrier.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in res["rows"]:
            w.writerow([r[c] if c != "ontime_rate" else f"{r[c]:.4f}" for c in cols])

    fig, ax = plt.subplots(figsize=(8, 4))
    ax.bar([r["carrier"] for r in res["rows"]], [100 * r["ontime_rate"] for r in res["rows"]], color="#4472c4")
    ax.set_ylabel("On-time arrival rate (%)")
    ax.set_title("EWR departures, Q4 2013: on-time arrival rate by carrier")
    fig.tight_layout()
    fig.savefig(out / "ontime_rate_by_carrier.png")
    plt.close(fig)

    b, w_ = res["best"], res["worst"]
    thr = res["method"]["threshold"]
    if res["rule"] == "v2.1":
        method = [
            f"On time means arriving less than {thr} minutes after schedule (methodology v2.1). Carriers with fewer "
            f"than {res['method']['min_completed']} completed flights are shown but not ranked.",
            "The Q3 2013 deck used the superseded v1.0 definition (arrival at or before schedule, cancellations "
            "counted as late), so its rates are not comparable with these figures; Q3 would need to be restated "
            "under v2.1 before any quarter-on-quarter comparison.",
        ]
    else:
        method = ["On time means arriving at or before the scheduled time, as in the Q3 2013 deck, so the two "
                  "quarters can be read side by side."]
    lines = [
        "# EWR on-time arrivals, Q4 2013 (October-December)",
        "",
        f"- Overall on-time arrival rate: {t['ontime_rate']:.1%} ({t['ontime']:,} of {t['completed']:,} completed flights).",
        f"- Best carrier among those ranked: {b['carrier']} ({b['carrier_name']}), {b['ontime_rate']:.1%} on time.",
        f"- Worst carrier among those ranked: {w_['carrier']} ({w_['carrier_name']}), {w_['ontime_rate']:.1%} on time.",
        f"- Duplicate rows removed: {res['duplicates']}" + (" (the December export re-included 30 November)." if res["duplicates"] else "."),
        f"- Cancelled flights: {t['cancelled']}; diverted flights: {t['diverted']} (both excluded from the rate).",
        "",
        "## Method and comparability",
        "",
        *method,
    ]
    (out / "summary.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--output", type=Path, required=True)
    a = ap.parse_args()
    write(compute(a.workspace), a.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
