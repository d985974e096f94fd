"""Reference solution for social_science_research_assistants/task1.

Usage: python solve.py --workspace DIR --output DIR

Verifies every cell of study.db (table states) against the published crime-rate table (PDF)
and the Census extract (CSV), resolves the duplicated record, writes a corrected copy of the
database, a corrections log and a findings note with the statistics recomputed on the
codebook's analysis sample (the 50 states; DC excluded).
"""

from __future__ import annotations

import argparse
import csv
import re
import shutil
import sqlite3
import statistics
from pathlib import Path

COLS = ["violent", "murder", "hs_grad", "poverty", "single", "white", "urban"]
CSV_COLS = {"hs_grad": "graduate", "poverty": "poverty", "single": "single-parent", "white": "white", "urban": "urbanized"}


def _f(text: str) -> float:
    return float(str(text).replace("%", "").replace(",", "").strip())


def read_sources(ws: Path) -> dict[str, dict]:
    """state name -> {"state_code", column values..., "_src": {column: source name}}."""
    import pdfplumber

    truth: dict[str, dict] = {}
    with pdfplumber.open(ws / "crime_rates_2009_table.pdf") as pdf:
        for page in pdf.pages:
            for table in page.extract_tables():
                for row in table:
                    if not row or not row[0] or row[0].strip() == "State":
                        continue
                    name = re.sub(r"\s*\([a-z]\)\s*$", "", row[0]).strip()
                    try:
                        truth[name] = {"violent": _f(row[1]), "murder": _f(row[2])}
                    except (ValueError, IndexError):
                        continue
    with open(ws / "acs_2009_state_indicators.csv", newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        colmap = {c: next(h for h in header if key in h.lower()) for c, key in CSV_COLS.items()}
        for r in reader:
            name = next((n for n in truth if n.upper() == r["Geography"].strip().upper()), None)
            if name is None:
                continue
            truth[name]["state_code"] = r["Geo code"].strip()
            for c, h in colmap.items():
                truth[name][c] = _f(r[h])
    return truth


def compute(ws: Path, *, include_dc: bool = False, verify: bool = True) -> dict:
    """Corrections and statistics. ``include_dc``/``verify`` let decoys reproduce mistakes."""
    truth = read_sources(ws)
    con = sqlite3.connect(f"file:{ws / 'study.db'}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    rows = [dict(r) for r in con.execute("SELECT * FROM states ORDER BY id")]
    con.close()
    src_name = {c: "crime_rates_2009_table.pdf" if c in ("violent", "murder") else "acs_2009_state_indicators.csv" for c in COLS}
    src_name["state_code"] = "acs_2009_state_indicators.csv"

    def mismatches(r: dict) -> list[str]:
        t = truth[r["state_name"]]
        bad = [c for c in COLS if r[c] is None or abs(r[c] - t[c]) > 1e-9]
        if r["state_code"] != t["state_code"]:
            bad.append("state_code")
        return bad

    deletes: list[dict] = []
    updates: list[dict] = []
    kept = rows
    if verify:
        groups: dict[str, list[dict]] = {}
        for r in rows:
            groups.setdefault(r["state_name"], []).append(r)
        kept = []
        for name, g in groups.items():
            g = sorted(g, key=lambda r: (len(mismatches(r)), r["id"]))
            kept.append(g[0])
            deletes += g[1:]
        for r in kept:
            for c in mismatches(r):
                updates.append({"id": r["id"], "state": r["state_name"], "variable": c, "db_value": r[c],
                                "corrected_value": truth[r["state_name"]][c], "source": src_name[c]})
                r[c] = truth[r["state_name"]][c]
        kept.sort(key=lambda r: r["id"])
    sample = [r for r in kept if include_dc or r["state_name"] != "District of Columbia"]
    pairs = [(r["poverty"], r["violent"]) for r in sample if r["poverty"] is not None and r["violent"] is not None]
    stats = {"n": len(sample), "mean_violent": statistics.fmean(r["violent"] for r in sample if r["violent"] is not None),
             "r": statistics.correlation([p for p, _ in pairs], [v for _, v in pairs])}
    draft = {}
    text = (ws / "draft_findings_v1.md").read_text(encoding="utf-8")
    for key, pat in (("n", r"States analysed:\s*(\d+)"), ("mean_violent", r"Mean violent crime rate:\s*([\d.]+)"),
                     ("r", r"r\s*=\s*(-?[\d.]+)")):
        m = re.search(pat, text)
        draft[key] = float(m.group(1)) if m else None
    return {"updates": updates, "deletes": deletes, "stats": stats, "draft": draft, "include_dc": include_dc}


def write(res: dict, ws: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    db = out / "study_corrected.db"
    shutil.copyfile(ws / "study.db", db)
    con = sqlite3.connect(db)
    for d in res["deletes"]:
        con.execute("DELETE FROM states WHERE id = ?", (d["id"],))
    for u in res["updates"]:
        con.execute(f"UPDATE states SET {u['variable']} = ? WHERE id = ?", (u["corrected_value"], u["id"]))
    con.commit()
    con.close()
    with open(out / "corrections.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["state", "variable", "db_value", "corrected_value", "source"])
        for u in res["updates"]:
            w.writerow([u["state"], u["variable"], "" if u["db_value"] is None else u["db_value"], u["corrected_value"], u["source"]])
    s, d = res["stats"], res["draft"]
    sample = "District of Columbia included" if res["include_dc"] else "the District of Columbia excluded, per the codebook"
    lines = ["# State Context Study - verified findings", "",
             f"- Analysis sample: {s['n']} states ({sample}).",
             f"- Mean violent crime rate: {s['mean_violent']:.1f} per 100,000.",
             f"- Pearson correlation, poverty rate vs violent crime rate: r = {s['r']:.3f}.", "",
             "## What was wrong in study.db", ""]
    if res["updates"] or res["deletes"]:
        for u in res["updates"]:
            lines.append(f"- {u['state']}, {u['variable']}: {u['db_value'] if u['db_value'] is not None else 'missing'} "
                         f"-> {u['corrected_value']} ({u['source']}).")
        for dd in res["deletes"]:
            lines.append(f"- {dd['state_name']} was entered twice (record id {dd['id']}, batch {dd['batch']}); the duplicate "
                         "record was removed, keeping the one that matches the sources.")
    else:
        lines.append("- No changes were made.")
    lines += ["", "## Change from the May draft", "",
              f"The draft (v1) reported {d['n']:.0f} states, a mean violent crime rate of {d['mean_violent']:.1f} and "
              f"r = {d['r']:.3f}. It was computed on the uncorrected database, with the duplicated Ohio record and "
              f"the District of Columbia included; those figures are superseded by the ones above."]
    (out / "findings.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--output", type=Path, required=True)
    a = ap.parse_args()
    write(compute(a.workspace), a.workspace, a.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
