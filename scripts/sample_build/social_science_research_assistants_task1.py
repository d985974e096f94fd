"""social_science_research_assistants/task1: verify a hand-entered state database against its
published sources (real 2009 state statistics via statsmodels).

Source: ``statsmodels.datasets.statecrime`` (statsmodels 0.14/0.15): 2009 violent-crime and
murder rates per 100,000 (FBI Uniform Crime Reports as tabulated in the Statistical Abstract
of the United States), 2009 American Community Survey shares (high-school graduates, poverty,
single-parent family households, white alone) and the 2010 Census urbanized-area share, for
the 50 states and DC. Public domain.

Planted: eight wrong cells and one duplicated record in the RA-entered SQLite database, and a
stale draft of findings computed from the uncorrected data with DC included.
"""

from __future__ import annotations

from pathlib import Path

from _common import write_csv, write_docx, write_pdf, write_sqlite, write_text

SPLIT = "main"
OCCUPATION, NUMBER = "social_science_research_assistants", 1

INSTRUCTIONS = """\
From: Prof. Elena Marsh (PI, State Context Study)
To: Research assistant
Re: Verify the state database before we re-run the analysis

Our student worker keyed the 2009 state indicators into study.db by hand last spring. Before
we send anything to the journal, I need the database verified value by value against the
published sources, corrected, and the two headline statistics re-run.

In this folder:
- study.db: the hand-entered SQLite database (table states; entry_log has the entry history).
- crime_rates_2009_table.pdf: the published crime-rate table (violent crime and murder rates).
- acs_2009_state_indicators.csv: the Census extract for the other indicators.
- codebook.docx: variable definitions, sources and the analysis rules.
- draft_findings_v1.md: the draft I circulated in May (computed from the database as it stood).

Deliverables (output folder):
1. study_corrected.db: a corrected copy of study.db with the same tables and columns.
2. corrections.csv: one row per value you changed, with the columns
   state, variable, db_value, corrected_value, source
   (state = the full state name, variable = the database column name). Removing a duplicate
   record is not a value change; report it in the findings note instead.
3. findings.md: the number of states in the analysis sample, the mean violent crime rate,
   the Pearson correlation between the poverty rate and the violent crime rate (both per the
   codebook's analysis rules), what was wrong in the database, and how the draft's figures
   change.

Thanks - Elena
"""

CODES = {
    "Alabama": "AL",
    "Alaska": "AK",
    "Arizona": "AZ",
    "Arkansas": "AR",
    "California": "CA",
    "Colorado": "CO",
    "Connecticut": "CT",
    "Delaware": "DE",
    "District of Columbia": "DC",
    "Florida": "FL",
    "Georgia": "GA",
    "Hawaii": "HI",
    "Idaho": "ID",
    "Illinois": "IL",
    "Indiana": "IN",
    "Iowa": "IA",
    "Kansas": "KS",
    "Kentucky": "KY",
    "Louisiana": "LA",
    "Maine": "ME",
    "Maryland": "MD",
    "Massachusetts": "MA",
    "Michigan": "MI",
    "Minnesota": "MN",
    "Mississippi": "MS",
    "Missouri": "MO",
    "Montana": "MT",
    "Nebraska": "NE",
    "Nevada": "NV",
    "New Hampshire": "NH",
    "New Jersey": "NJ",
    "New Mexico": "NM",
    "New York": "NY",
    "North Carolina": "NC",
    "North Dakota": "ND",
    "Ohio": "OH",
    "Oklahoma": "OK",
    "Oregon": "OR",
    "Pennsylvania": "PA",
    "Rhode Island": "RI",
    "South Carolina": "SC",
    "South Dakota": "SD",
    "Tennessee": "TN",
    "Texas": "TX",
    "Utah": "UT",
    "Vermont": "VT",
    "Virginia": "VA",
    "Washington": "WA",
    "West Virginia": "WV",
    "Wisconsin": "WI",
    "Wyoming": "WY",
}
COLS = ["violent", "murder", "hs_grad", "poverty", "single", "white", "urban"]


def source_rows() -> list[dict]:
    """The 51 true records from statsmodels, as dicts."""
    import statsmodels.api as sm

    d = sm.datasets.statecrime.load_pandas().data
    out = []
    for state, r in d.iterrows():
        state = state.strip()  # the statsmodels file has "Kansas " with a trailing space
        out.append(
            {
                "state_name": state,
                "state_code": CODES[state],
                **{c: round(float(r[c]), 2) for c in COLS},
            }
        )
    return out


def entered_rows() -> list[dict]:
    """The database as keyed by hand: the true records plus the planted errors."""
    rows = [dict(r) for r in source_rows()]
    by = {r["state_name"]: r for r in rows}
    by["Alabama"]["violent"] = 495.9  # transposed digits (459.9)
    by["Alaska"]["poverty"] = 90.0  # decimal slip (9.0)
    by["Florida"]["murder"], by["Georgia"]["murder"] = (
        by["Georgia"]["murder"],
        by["Florida"]["murder"],
    )  # swapped
    by["Illinois"]["hs_grad"] = None  # skipped cell
    by["Texas"]["violent"] = 419.4  # transposed digits (491.4)
    by["Nevada"]["state_code"] = "NE"  # wrong postal code (Nebraska's)
    by["Wyoming"]["single"] = by["Wyoming"]["white"]  # value keyed from the neighbouring column
    out = []
    for r in rows:
        out.append(r)
        if r["state_name"] == "Ohio":
            dup = dict(r)
            dup["urban"] = 56.31  # re-keyed in batch 3 with transposed digits
            out.append(dup)
    return out


def draft_stats(rows: list[dict]) -> dict:
    """Statistics as the May draft computed them: all rows, DC included, skipping NULLs."""
    import statistics

    v = [r["violent"] for r in rows]
    pairs = [(r["poverty"], r["violent"]) for r in rows if r["poverty"] is not None]
    return {
        "n": len(rows),
        "mean_violent": statistics.fmean(v),
        "r": statistics.correlation([p for p, _ in pairs], [x for _, x in pairs]),
    }


def build(task_dir: Path) -> None:
    ws = task_dir / "task_folder"
    write_text(ws / "TASK_INSTRUCTIONS.txt", INSTRUCTIONS)
    src = source_rows()
    rows = entered_rows()

    schema = """
    CREATE TABLE states (
        id INTEGER PRIMARY KEY,
        state_code TEXT NOT NULL,
        state_name TEXT NOT NULL,
        violent REAL, murder REAL, hs_grad REAL, poverty REAL, single REAL, white REAL, urban REAL,
        batch INTEGER
    );
    CREATE TABLE entry_log (
        batch INTEGER PRIMARY KEY, entered_by TEXT, entered_on TEXT, rows_entered INTEGER, note TEXT
    );
    """
    table = []
    for i, r in enumerate(rows, start=1):
        batch = 1 if i <= 18 else 2 if i <= 36 else 3
        table.append([i, r["state_code"], r["state_name"]] + [r[c] for c in COLS] + [batch])
    log = [
        [1, "jpark", "2024-03-04", 18, "Alabama-Kentucky"],
        [
            2,
            "jpark",
            "03/11/2024",
            18,
            "Louisiana-Oklahoma (Ohio re-keyed in batch 3 after a crash)",
        ],
        [3, "jpark", "March 18, 2024", len(rows) - 36, "Oregon-Wyoming"],
    ]
    write_sqlite(
        ws / "study.db",
        schema,
        {
            "states": (["id", "state_code", "state_name"] + COLS + ["batch"], table),
            "entry_log": (["batch", "entered_by", "entered_on", "rows_entered", "note"], log),
        },
    )

    pdf_rows = [["State", "Violent crime", "Murder and nonnegligent manslaughter"]]
    for r in src:
        name = r["state_name"] + (" (b)" if r["state_name"] in ("Illinois", "Minnesota") else "")
        pdf_rows.append([name, f"{r['violent']:.1f}", f"{r['murder']:.1f}"])
    write_pdf(
        ws / "crime_rates_2009_table.pdf",
        [
            ("h1", "Crime rates by state, 2009"),
            (
                "p",
                "Rate per 100,000 population. Source: U.S. Department of Justice, Federal Bureau of Investigation, "
                "Crime in the United States 2009 (Uniform Crime Reports), as tabulated in the Statistical Abstract of "
                "the United States (a).",
            ),
            ("table", pdf_rows),
            (
                "p",
                "(a) Violent crimes are murder and nonnegligent manslaughter, forcible rape, robbery and aggravated assault.",
            ),
            (
                "p",
                "(b) The forcible rape data of the Illinois and Minnesota state UCR programs do not comply with national "
                "UCR guidelines; their violent crime rates are shown without forcible rape.",
            ),
        ],
        title="Crime rates by state, 2009",
    )

    csv_rows = []
    for r in sorted(src, key=lambda x: x["state_code"]):
        csv_rows.append(
            [
                r["state_name"].upper(),
                r["state_code"],
                f"{r['hs_grad']:.1f}%",
                f"{r['poverty']:.1f}",
                f"{r['single']:.1f}",
                f"{r['white']:.1f}",
                f"{r['urban']:.2f}",
            ]
        )
    write_csv(
        ws / "acs_2009_state_indicators.csv",
        [
            "Geography",
            "Geo code",
            "Pct HS graduate or higher",
            "Pct below poverty level",
            "Pct single-parent family households",
            "Pct white alone",
            "Pct in urbanized areas (2010 Census)",
        ],
        csv_rows,
        crlf=True,
    )

    write_docx(
        ws / "codebook.docx",
        [
            ("h1", "State Context Study - codebook (state file, 2009)"),
            (
                "p",
                "One record per state plus the District of Columbia (51 records). Key: state_name; state_code is the "
                "USPS two-letter code.",
            ),
            (
                "table",
                [
                    ["Column", "Definition", "Unit", "Source"],
                    [
                        "violent",
                        "Violent crime rate",
                        "per 100,000 population",
                        "FBI UCR 2009 (crime rate table)",
                    ],
                    [
                        "murder",
                        "Murder and nonnegligent manslaughter rate",
                        "per 100,000 population",
                        "FBI UCR 2009 (crime rate table)",
                    ],
                    [
                        "hs_grad",
                        "Persons 25+ with high school diploma or higher",
                        "percent",
                        "ACS 2009 1-year",
                    ],
                    ["poverty", "Persons below the poverty level", "percent", "ACS 2009 1-year"],
                    [
                        "single",
                        "Single-parent family households / all family households",
                        "percent",
                        "ACS 2009 1-year",
                    ],
                    ["white", "White alone", "percent", "ACS 2009 1-year"],
                    ["urban", "Population in urbanized areas", "percent", "2010 Census"],
                    ["batch", "Data-entry batch (see entry_log)", "-", "-"],
                ],
            ),
            ("h2", "Analysis rules"),
            (
                "bullet",
                "The analysis sample is the 50 states. The District of Columbia stays in the database but is "
                "excluded from all summary statistics (it is a single city and an extreme outlier on the crime measures).",
            ),
            (
                "bullet",
                "Correlations are Pearson correlations on the analysis sample, reported to three decimals.",
            ),
            (
                "bullet",
                "Values are stored exactly as published (one decimal; urban two decimals). Never impute a missing "
                "value: look it up in the source.",
            ),
        ],
        title="State Context Study codebook",
    )

    d = draft_stats(rows)
    write_text(
        ws / "draft_findings_v1.md",
        f"""\
# State Context Study - draft findings (v1, May 2024)

*Circulated to co-authors 14 May 2024. Computed from study.db.*

- States analysed: {d["n"]}
- Mean violent crime rate: {d["mean_violent"]:.1f} per 100,000
- Correlation between poverty rate and violent crime rate: r = {d["r"]:.3f}

Poverty shows only a weak association with violent crime at the state level, which motivates
the neighbourhood-level models in section 4.
""",
    )


def build_decoys(task_dir: Path) -> None:
    """Decoys: (1) a corrected database but statistics with DC included (codebook ignored);
    (2) statistics re-run on the uncorrected database (no verification)."""
    from _common import decoy_dir, load_solution

    sol = load_solution(task_dir)
    ws = task_dir / "task_folder"
    sol.write(sol.compute(ws, include_dc=True), ws, decoy_dir(task_dir, "dc_included"))
    sol.write(sol.compute(ws, verify=False), ws, decoy_dir(task_dir, "unverified"))
