"""Reference solution for easy/social_science_research_assistants/task1 (check a state table
against its source).

Usage: python solve.py --workspace DIR --output DIR

Compares every cell of study.db's states table with state_indicators_2009.csv (matched by
state name), writes a corrected copy of the database, one corrections.csv row per changed
value, and the mean violent crime rate and the Pearson correlation of poverty and violent
crime over the corrected table.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import sqlite3
import statistics
from pathlib import Path

COLS = ("violent", "murder", "hs_grad", "poverty")


def compute(ws: Path, *, check: tuple[str, ...] = COLS) -> dict:
    """``check`` limits the columns compared, so that decoys can reproduce an incomplete
    verification."""
    source = {
        r["state_name"].strip(): r
        for r in csv.DictReader(
            open(ws / "state_indicators_2009.csv", newline="", encoding="utf-8")
        )
    }
    con = sqlite3.connect(f"file:{ws / 'study.db'}?mode=ro", uri=True)
    try:
        rows = con.execute(
            f"SELECT id, state_name, {', '.join(COLS)} FROM states ORDER BY id"
        ).fetchall()
    finally:
        con.close()
    corrections = []
    table = []
    for rid, name, *values in rows:
        fixed = dict(zip(COLS, values))
        for col in check:
            want = float(source[name][col])
            if fixed[col] is None or abs(fixed[col] - want) > 1e-9:
                corrections.append(
                    {
                        "id": rid,
                        "state": name,
                        "variable": col,
                        "db_value": fixed[col],
                        "corrected_value": want,
                    }
                )
                fixed[col] = want
        table.append(fixed)
    violent = [r["violent"] for r in table]
    pairs = [
        (r["poverty"], r["violent"])
        for r in table
        if r["poverty"] is not None and r["violent"] is not None
    ]
    return {
        "corrections": corrections,
        "n": len(table),
        "mean_violent": statistics.fmean(violent),
        "r": statistics.correlation([p for p, _ in pairs], [v for _, v in pairs]),
    }


def write(res: dict, ws: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    db = out / "study_corrected.db"
    shutil.copyfile(ws / "study.db", db)
    con = sqlite3.connect(db)
    try:
        for c in res["corrections"]:
            con.execute(
                f"UPDATE states SET {c['variable']} = ? WHERE id = ?",
                (c["corrected_value"], c["id"]),
            )
        con.commit()
    finally:
        con.close()
    with open(out / "corrections.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["state", "variable", "db_value", "corrected_value"])
        for c in res["corrections"]:
            w.writerow(
                [
                    c["state"],
                    c["variable"],
                    "" if c["db_value"] is None else c["db_value"],
                    c["corrected_value"],
                ]
            )
    (out / "results.json").write_text(
        json.dumps(
            {
                "n_states": res["n"],
                "mean_violent": round(res["mean_violent"], 2),
                "r_poverty_violent": round(res["r"], 3),
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--output", type=Path, required=True)
    a = ap.parse_args()
    write(compute(a.workspace), a.workspace, a.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
