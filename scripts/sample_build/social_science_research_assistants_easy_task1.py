"""easy/social_science_research_assistants/task1: check a hand-entered state table against
its source and re-run two statistics, the easy variant of
main/social_science_research_assistants/task1 (the same real 2009 state statistics via
statsmodels ``statecrime``, public domain).

What makes it the easy variant: the table holds the 50 states only (no District of
Columbia to exclude, no record keyed twice), one source file holds every published value in
the table's own units and state names, four cells are wrong instead of eight, and there is
no stale draft of findings or codebook rule to reconcile.
"""

from __future__ import annotations

from pathlib import Path

from _common import write_csv, write_sqlite, write_text
from social_science_research_assistants_task1 import source_rows

SPLIT = "easy"
OCCUPATION, NUMBER = "social_science_research_assistants", 1
COLS = ["violent", "murder", "hs_grad", "poverty"]
ERRORS = {
    ("Alabama", "violent"): 495.9,
    ("Alaska", "poverty"): 90.0,
    ("Illinois", "hs_grad"): None,
    ("Texas", "violent"): 419.4,
}
"""Planted cells: two transposed digits, a decimal slip, a skipped cell."""

INSTRUCTIONS = """\
From: Prof. Elena Marsh (PI, State Context Study)
To: Research assistant
Re: Check the state table and re-run two statistics

A student keyed the 2009 figures for the 50 states into study.db (table states) by hand.
Please compare every value with the published figures, correct the database, and re-run
the statistics on the corrected data.

Files:
- study.db: the hand-entered SQLite database.
- state_indicators_2009.csv: the published 2009 figures (same columns and units).

Deliverables (output folder):
1. study_corrected.db: study.db with every wrong or missing value corrected (same table and
   columns).
2. corrections.csv with the columns state, variable, db_value, corrected_value: one row per
   value you changed (state = the state's name, variable = the column name).
3. results.json with the keys n_states, mean_violent (mean violent crime rate per 100,000)
   and r_poverty_violent (Pearson correlation between the poverty rate and the violent crime
   rate, 3 decimals).

Thanks - Elena
"""


def _states() -> list[dict]:
    return [r for r in source_rows() if r["state_name"] != "District of Columbia"]


def build(task_dir: Path) -> None:
    ws = task_dir / "task_folder"
    write_text(ws / "TASK_INSTRUCTIONS.txt", INSTRUCTIONS)
    src = _states()
    table = []
    for i, r in enumerate(src, start=1):
        row = [i, r["state_code"], r["state_name"]]
        row += [ERRORS.get((r["state_name"], c), r[c]) for c in COLS]
        table.append(row)
    write_sqlite(
        ws / "study.db",
        """
    CREATE TABLE states (
        id INTEGER PRIMARY KEY, state_code TEXT NOT NULL, state_name TEXT NOT NULL,
        violent REAL, murder REAL, hs_grad REAL, poverty REAL
    );
    """,
        {"states": (["id", "state_code", "state_name"] + COLS, table)},
    )
    write_csv(
        ws / "state_indicators_2009.csv",
        ["state_name", "state_code"] + COLS,
        [[r["state_name"], r["state_code"]] + [f"{r[c]:.1f}" for c in COLS] for r in src],
    )


def build_decoys(task_dir: Path) -> None:
    """Decoys: (1) statistics re-run on the unchecked table; (2) only the crime rates
    checked (the poverty slip and the missing hs_grad left)."""
    from _common import decoy_dir, load_solution

    sol = load_solution(task_dir)
    ws = task_dir / "task_folder"
    sol.write(sol.compute(ws, check=()), ws, decoy_dir(task_dir, "unchecked"))
    sol.write(
        sol.compute(ws, check=("violent", "murder")), ws, decoy_dir(task_dir, "crime_rates_only")
    )
