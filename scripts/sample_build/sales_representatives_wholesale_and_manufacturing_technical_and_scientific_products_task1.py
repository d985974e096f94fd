"""sales_representatives_wholesale_and_manufacturing_technical_and_scientific_products/task1:
June 2024 trip expense report (synthetic trip; the real IRS 2024 business mileage rate,
67 cents per mile from IRS Notice 2024-08, must be found by search; the manager's note quotes
the 2023 rate, 65.5 cents).

Planted: personal charges on the corporate card (hotel movie, fuel for a car claimed by
mileage, an online purchase), a day over the individual meal cap, a personal detour in the
mileage log, cash items only on photographed receipts (PNG), and a stale mileage rate.
"""

from __future__ import annotations

from pathlib import Path

from _common import write_csv, write_docx, write_pdf, write_png_chart, write_text

SPLIT = "main"
OCCUPATION, NUMBER = (
    "sales_representatives_wholesale_and_manufacturing_technical_and_scientific_products",
    1,
)

INSTRUCTIONS = """\
From: Tom Becker, Regional Sales Manager
To: Jordan Reyes, Technical Sales Representative
Subject: Expense report for the Pittsburgh/Cleveland trip (10-13 June 2024)

Jordan,

Finance closes June on Friday. Please prepare your expense report for the Pittsburgh and
Cleveland customer trip so I can approve it. Follow the 2024 travel & expense policy and use
the current IRS business mileage rate (neither document is in this folder; look them up).

Your files:
- corporate_card_june2024.csv: your corporate card transactions for June.
- mileage_log_june2024.csv: your mileage log for the trip (personal car).
- hotel_folio_riverview_pittsburgh.pdf: the Pittsburgh hotel folio.
- receipt_carmines_2024-06-11.png and receipt_parking_2024-06-10.png: photos of receipts.
- trip_itinerary.docx: the itinerary and meeting notes.
- manager_note.md: my note from last week.

Deliverables (output folder):
1. expense_report_june2024.xlsx with a sheet "Summary" (label in column A, amount in
   column B) with exactly these labels: Corporate card charges, Non-reimbursable charges on card,
   Out-of-pocket expenses, Business miles, Mileage reimbursement, Net amount due to employee,
   Total business expense. Add a sheet "Lines" with every expense line and how you treated it.
2. approver_note.md: a short note to me explaining the non-reimbursable items, the mileage
   calculation, and the client entertainment details the policy requires.

Tom
"""

CARD = [
    ("06/10/2024", "RIVERVIEW HOTEL PITTSBURGH PA", 389.22),
    ("06/10/2024", "STRIP DISTRICT DELI PITTSBURGH", 18.75),
    ("06/11/2024", "CARMINE'S STEAKHOUSE PITTSBURGH", 212.40),
    ("06/12/2024", "BRUEGGER'S BAGELS PITTSBURGH", 11.20),
    ("06/12/2024", "LAKESIDE GRILL CLEVELAND OH", 96.50),
    ("06/12/2024", "CUYAHOGA SUITES CLEVELAND OH", 171.85),
    ("06/13/2024", "SPEEDWAY 4471 FUEL MEDINA OH", 48.30),
    ("06/14/2024", "AMAZON.COM*2K4LM1 AMZN.COM/BILL", 36.99),
]


def _post(d: str) -> str:
    """Posting date: two days after the transaction."""
    from datetime import datetime, timedelta

    return (datetime.strptime(d, "%m/%d/%Y") + timedelta(days=2)).strftime("%m/%d/%Y")


def build(task_dir: Path) -> None:
    ws = task_dir / "task_folder"
    write_text(ws / "TASK_INSTRUCTIONS.txt", INSTRUCTIONS)
    write_csv(
        ws / "corporate_card_june2024.csv",
        ["Trans Date", "Post Date", "Description", "Amount", "Category"],
        [
            [
                d,
                _post(d),
                desc,
                f"{amt:.2f}",
                {"RIV": "Lodging", "CUY": "Lodging", "SPE": "Fuel", "AMA": "Merchandise"}.get(
                    desc[:3], "Restaurants"
                ),
            ]
            for d, desc, amt in CARD
        ],
        crlf=True,
    )
    write_csv(
        ws / "mileage_log_june2024.csv",
        ["date", "from", "to", "odometer_start", "odometer_end", "notes"],
        [
            [
                "2024-06-10",
                "Columbus OH (home)",
                "Pittsburgh PA - Allegheny Instruments",
                48211,
                48396,
                "PA Turnpike tolls $14.60 cash",
            ],
            [
                "2024-06-11",
                "Pittsburgh hotel",
                "Keystone Fabrication; Three Rivers Labs; back to hotel",
                48396,
                48438,
                "",
            ],
            [
                "2024-06-12",
                "Pittsburgh hotel",
                "Cleveland OH - Erie Precision",
                48438,
                48572,
                "incl. 18 mi round trip personal detour to outlet mall",
            ],
            ["2024-06-13", "Cleveland OH", "Columbus OH (home)", 48572, 48715, ""],
        ],
    )

    write_pdf(
        ws / "hotel_folio_riverview_pittsburgh.pdf",
        [
            ("h1", "Riverview Hotel Pittsburgh - guest folio"),
            (
                "p",
                "Guest: Jordan Reyes. Arrival 06/10/2024, departure 06/12/2024. Room 1412. Rate: 159.00 per night.",
            ),
            (
                "table",
                [
                    ["Date", "Description", "Charges"],
                    ["06/10/2024", "Room charge", "159.00"],
                    ["06/10/2024", "Room tax (15.48%)", "24.61"],
                    ["06/10/2024", "In-room movie", "22.00"],
                    ["06/11/2024", "Room charge", "159.00"],
                    ["06/11/2024", "Room tax (15.48%)", "24.61"],
                    ["06/12/2024", "Payment - corporate card ending 0457", "(389.22)"],
                    ["", "Balance", "0.00"],
                ],
            ),
        ],
        title="Guest folio",
    )

    def receipt(lines):
        def draw(fig, ax):
            ax.axis("off")
            fig.set_size_inches(4, 0.32 * len(lines) + 0.6)
            for i, text in enumerate(lines):
                ax.text(
                    0.02,
                    1 - (i + 0.5) / len(lines),
                    text,
                    family="DejaVu Sans Mono",
                    fontsize=10,
                    va="center",
                    transform=ax.transAxes,
                )

        return draw

    write_png_chart(
        ws / "receipt_carmines_2024-06-11.png",
        receipt(
            [
                "CARMINE'S STEAKHOUSE",
                "1022 Penn Ave, Pittsburgh PA",
                "06/11/2024  19:42   Table 14   Guests: 4",
                "Food                        152.00",
                "Beverages                    23.00",
                "Subtotal                    175.00",
                "Tax                          12.25",
                "Tip                          25.15",
                "TOTAL                       212.40",
                "Visa ****0457",
                "Guests: J. Reyes; Dana Liu, Mark Osei,",
                "Priya Nair (Keystone Fabrication)",
                "Purpose (handwritten): Q3 sensor order review",
            ]
        ),
    )
    write_png_chart(
        ws / "receipt_parking_2024-06-10.png",
        receipt(
            [
                "SMITHFIELD-LIBERTY GARAGE",
                "Pittsburgh PA",
                "IN  06/10/2024 10:05",
                "OUT 06/10/2024 15:40",
                "AMOUNT PAID (CASH)   $24.00",
                "Thank you",
            ]
        ),
    )

    write_docx(
        ws / "trip_itinerary.docx",
        [
            ("h1", "Trip itinerary - Jordan Reyes - 10 to 13 June 2024"),
            (
                "table",
                [
                    ["Date", "Plan", "Notes"],
                    [
                        "Mon 10 Jun",
                        "Drive Columbus - Pittsburgh; Allegheny Instruments demo",
                        "Parked downtown (cash)",
                    ],
                    [
                        "Tue 11 Jun",
                        "Keystone Fabrication, Three Rivers Labs",
                        "Client dinner with Keystone team",
                    ],
                    [
                        "Wed 12 Jun",
                        "Drive to Cleveland; Erie Precision site visit",
                        "Dinner alone at hotel restaurant",
                    ],
                    ["Thu 13 Jun", "Drive home", "Filled up on the way home"],
                ],
            ),
            (
                "p",
                "Customers visited: Allegheny Instruments, Keystone Fabrication, Three Rivers Labs, Erie Precision.",
            ),
            (
                "p",
                "Amazon charge on 14 June was a personal order placed on the wrong card by mistake.",
            ),
        ],
        title="Trip itinerary",
    )

    write_text(
        ws / "manager_note.md",
        """\
Jordan - quick reminders for the report:

* Mileage: same as last time, 65.5 cents a mile.
* Put the hotel, meals and the client dinner in; card charges still go on the report so
  finance can reconcile the card.
* Get it to me before Friday.

Tom
""",
    )


def build_search(task_dir: Path) -> None:
    sd = task_dir / "files_required_to_search"
    write_pdf(
        sd / "travel_expense_policy_2024.pdf",
        [
            ("h1", "Travel & Expense Policy - effective 1 January 2024"),
            ("h2", "3. Meals"),
            (
                "p",
                "3.1 Individual meals while travelling are reimbursed at actual cost up to $75.00 per traveller per day "
                "(breakfast, lunch, dinner and tips combined). Amounts above the daily limit are not reimbursable.",
            ),
            (
                "p",
                "3.2 Client entertainment is reimbursed at actual cost and does not count toward the daily meal limit. The "
                "report must list every attendee (name and company) and the business purpose.",
            ),
            ("h2", "4. Lodging"),
            (
                "p",
                "4.1 Room and room taxes are reimbursable. Personal incidentals (in-room movies, minibar, spa, laundry on "
                "stays under five nights) are not.",
            ),
            ("h2", "5. Personal vehicle"),
            (
                "p",
                "5.1 Business miles driven in a personal vehicle are reimbursed at the IRS standard business mileage rate in "
                "effect on the date of travel. Personal detours and commuting are excluded. Fuel, maintenance and "
                "insurance for a personal vehicle are covered by the mileage rate and are not reimbursed separately.",
            ),
            (
                "p",
                "5.2 Parking and tolls are reimbursed at actual cost with a receipt or log entry.",
            ),
            ("h2", "6. Corporate card"),
            (
                "p",
                "6.1 All corporate card charges must appear on the expense report. Non-reimbursable or personal charges on "
                "the corporate card are owed by the employee and are deducted from the reimbursement due to the employee.",
            ),
        ],
        title="Travel and expense policy 2024",
    )
    write_text(
        sd / "irs_standard_mileage_rates_2024.md",
        """\
# IRS standard mileage rates for 2024 (summary of IRS Notice 2024-08)

Beginning on January 1, 2024, the standard mileage rates for the use of a car (also vans,
pickups or panel trucks) are:

- **67 cents per mile** driven for business use, up 1.5 cents from 2023 (65.5 cents);
- 21 cents per mile driven for medical or moving purposes (qualified active-duty members of
  the Armed Forces), down 1 cent from 2023;
- 14 cents per mile driven in service of charitable organizations (set by statute).

Source: Internal Revenue Service, IR-2023-239 (December 14, 2023) and Notice 2024-08.
""",
    )


def build_decoys(task_dir: Path) -> None:
    """Decoys: (1) the manager's stale 65.5-cent rate; (2) every card charge treated as a
    business expense (no personal split, no meal cap)."""
    from _common import decoy_dir, load_solution

    sol = load_solution(task_dir)
    ws = task_dir / "task_folder"
    sol.write(sol.compute(ws, rate=0.655), decoy_dir(task_dir, "last_year_rate"))
    sol.write(sol.compute(ws, split_personal=False), decoy_dir(task_dir, "no_personal_split"))
