"""Reference solution for civil_engineers/task1 (mix selection and April concrete order).

Usage: python solve.py --workspace DIR --output DIR

Specification limits come from Section 03 30 00 Revision B, the reference document the task
withholds (files_required_to_search/spec_03_30_00_cast_in_place_concrete_revB.md); if a copy
is in the workspace it is read from there, otherwise the values below (copied from it) apply.
Prices come from the January price list (PDF) with the cement price from the supplier's
notice effective 1 March (the April pours are after it).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
from pathlib import Path

SPEC = {"min_strength_mpa": 41.5, "max_wcm": 0.45, "max_fly_ash_pct": 25.0, "psi_per_mpa": 145.04, "allowance": 0.04}
COLS = {"cement": "Cement", "slag": "GGBS", "fly_ash": "Fly ash", "water": "Water", "sp": "Superplasticizer",
        "coarse": "Coarse agg", "fine": "Fine agg"}
PRICE_KEYS = {"cement": "portland cement", "slag": "slag", "fly_ash": "fly ash", "water": "water",
              "sp": "superplasticizer", "coarse": "coarse aggregate", "fine": "fine aggregate"}


def read_spec(ws: Path) -> dict:
    spec = dict(SPEC)
    for p in list(ws.glob("**/spec_03_30_00*")):
        text = p.read_text(encoding="utf-8", errors="replace")
        for key, pat in (("min_strength_mpa", r"at least \*\*([\d.]+) MPa"), ("max_wcm", r"\(w/cm\): \*\*([\d.]+)"),
                         ("max_fly_ash_pct", r"exceed \*\*([\d.]+) %"), ("psi_per_mpa", r"1 MPa = ([\d.]+) psi")):
            m = re.search(pat, text)
            if m:
                spec[key] = float(m.group(1))
        m = re.search(r"\*\*([\d.]+) %\*\* allowance", text)
        if m:
            spec["allowance"] = float(m.group(1)) / 100
    return spec


def read_prices(ws: Path, cement_price: float | None = None) -> dict[str, float]:
    """USD per kg of each component."""
    import pdfplumber

    per_kg: dict[str, float] = {}
    density = 1.2
    with pdfplumber.open(ws / "supplier_price_list_jan2024.pdf") as pdf:
        rows = [r for page in pdf.pages for t in page.extract_tables() for r in t]
    for name, price, unit in (r[:3] for r in rows if r and len(r) >= 3):
        lname = (name or "").lower()
        for key, label in PRICE_KEYS.items():
            if label in lname:
                value = float(price.replace(",", ""))
                if "tonne" in unit:
                    per_kg[key] = value / 1000
                elif "m3" in unit:  # water: 1 m3 = 1000 kg
                    per_kg[key] = value / 1000
                elif "litre" in unit:
                    m = re.search(r"density ([\d.]+) kg/L", name)
                    per_kg[key] = value / float(m.group(1) if m else density)
    if cement_price is None:
        text = (ws / "supplier_email_2024-02-20.md").read_text(encoding="utf-8")
        m = re.search(r"cement will be \*\*\$([\d,.]+) per tonne", text)
        cement_price = float(m.group(1).replace(",", ""))
    per_kg["cement"] = cement_price / 1000
    return per_kg


def read_volume(ws: Path, sheet_total: bool = False) -> float:
    import openpyxl

    sh = openpyxl.load_workbook(ws / "pour_schedule.xlsx")["Pours"]
    net = 0.0
    for row in sh.iter_rows(min_row=2, values_only=True):
        if not row[0] or not str(row[0]).startswith("P-"):
            continue
        length, width, thk, status = float(row[3]), float(row[4]), float(row[5]), str(row[7] or "")
        if not sheet_total:
            if status.lower() != "scheduled":
                continue
            if thk < 10:  # keyed in metres in the millimetre column (e.g. 0.3 for the 300 mm ramp)
                thk *= 1000
        net += length * width * thk / 1000
    return net


def compute(ws: Path, *, cement_price: float | None = None, drop_psi: bool = False, sheet_total: bool = False) -> dict:
    spec = read_spec(ws)
    price = read_prices(ws, cement_price)
    mixes: dict[str, dict] = {}
    with open(ws / "lab_mix_register.csv", newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        colmap = {k: next(h for h in header if h.startswith(v)) for k, v in COLS.items()}
        for r in reader:
            mix = r["Mix ID"].strip()
            m = mixes.setdefault(mix, {k: float(r[h]) for k, h in colmap.items()})
            if int(r["Test age (days)"]) != 28:
                continue
            value = float(r["Mean strength"].replace(",", ""))
            if r["Unit"].strip().lower() == "psi":
                if drop_psi:
                    continue
                value /= spec["psi_per_mpa"]
            m["strength"] = value
    rows = []
    for mix, m in mixes.items():
        cm = m["cement"] + m["slag"] + m["fly_ash"]
        wcm = m["water"] / cm
        fa = 100 * m["fly_ash"] / cm
        strength = m.get("strength")
        ok = (strength is not None and strength >= spec["min_strength_mpa"] and wcm <= spec["max_wcm"]
              and fa <= spec["max_fly_ash_pct"])
        cost = sum(m[k] * price[k] for k in COLS)
        rows.append({"mix_id": mix, "strength_28d_mpa": strength, "w_cm": wcm, "fly_ash_pct": fa, "compliant": ok,
                     "cost_per_m3": cost, "cement": m["cement"]})
    best = min((r for r in rows if r["compliant"]), key=lambda r: r["cost_per_m3"])
    net = read_volume(ws, sheet_total)
    order = net * (1 + spec["allowance"])
    return {"rows": rows, "best": best, "net": net, "order": order, "spec": spec, "price": price,
            "total": order * best["cost_per_m3"], "cement_t": order * best["cement"] / 1000,
            "flags": {"cement_rise": cement_price is None, "psi": not drop_psi, "schedule": not sheet_total}}


def write(res: dict, out: Path) -> None:
    import docx

    out.mkdir(parents=True, exist_ok=True)
    with open(out / "mix_evaluation.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["mix_id", "strength_28d_mpa", "w_cm", "fly_ash_pct", "compliant", "cost_per_m3"])
        for r in res["rows"]:
            w.writerow([r["mix_id"], "" if r["strength_28d_mpa"] is None else f"{r['strength_28d_mpa']:.2f}",
                        f"{r['w_cm']:.3f}", f"{r['fly_ash_pct']:.1f}", "Yes" if r["compliant"] else "No",
                        f"{r['cost_per_m3']:.2f}"])
    b = res["best"]
    est = {"recommended_mix": b["mix_id"], "cost_per_m3": round(b["cost_per_m3"], 2),
           "net_volume_m3": round(res["net"], 2), "order_volume_m3": round(res["order"], 2),
           "total_material_cost": round(res["total"], 2), "cement_tonnes": round(res["cement_t"], 2)}
    (out / "concrete_estimate.json").write_text(json.dumps(est, indent=2) + "\n", encoding="utf-8")

    s, p = res["spec"], res["price"]
    d = docx.Document()
    d.add_heading("Memo: structural slab mix and April concrete order", level=1)
    d.add_paragraph("To: Raj Patel, Project Manager. From: Project engineer.")
    d.add_paragraph(
        f"Recommendation: mix {b['mix_id']} at ${b['cost_per_m3']:.2f} per m3 (materials). It is the cheapest mix in "
        f"the lab register that meets Section 03 30 00 Rev. B: 28-day strength {b['strength_28d_mpa']:.2f} MPa "
        f"(minimum {s['min_strength_mpa']} MPa), w/cm {b['w_cm']:.3f} (maximum {s['max_wcm']}), fly ash "
        f"{b['fly_ash_pct']:.1f}% of cementitious (maximum {s['max_fly_ash_pct']:.0f}%).")
    d.add_paragraph(
        f"Order: net volume of the April pours {res['net']:.2f} m3; with the {s['allowance']:.0%} ordering allowance the "
        f"order is {res['order']:.2f} m3, about ${res['total']:,.2f} of materials and {res['cement_t']:.2f} tonnes of cement.")
    t = d.add_table(rows=1, cols=6)
    for c, h in zip(t.rows[0].cells, ["Mix", "28-day MPa", "w/cm", "Fly ash %", "Compliant", "USD/m3"]):
        c.text = h
    for r in sorted(res["rows"], key=lambda r: r["cost_per_m3"]):
        cells = t.add_row().cells
        vals = [r["mix_id"], "-" if r["strength_28d_mpa"] is None else f"{r['strength_28d_mpa']:.2f}", f"{r['w_cm']:.3f}",
                f"{r['fly_ash_pct']:.1f}", "Yes" if r["compliant"] else "No", f"{r['cost_per_m3']:.2f}"]
        for c, v in zip(cells, vals):
            c.text = v
    d.add_heading("What changed from the 12 February memo", level=2)
    f = res["flags"]
    if f["cement_rise"]:
        d.add_paragraph(f"Cement is priced at ${p['cement'] * 1000:.2f} per tonne: the supplier's notice raises it from "
                        "$150.00 from 1 March 2024, which applies to the April deliveries. This moves the cheapest "
                        "compliant mix away from the cement-rich M-04.")
    if f["psi"]:
        d.add_paragraph(f"Results reported in psi (M-06, M-09) were converted at 1 MPa = {s['psi_per_mpa']} psi instead "
                        "of being set aside; only 28-day results count for approval.")
    if f["schedule"]:
        d.add_paragraph("Pour schedule: the ramp P-03 thickness was keyed as 0.3 in the millimetre column (300 mm ramp), "
                        "so the sheet total understates it; P-06 is deferred to phase 2 and is excluded from the April order.")
    if not any(f.values()):
        d.add_paragraph("Nothing material.")
    d.save(out / "recommendation_memo.docx")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--output", type=Path, required=True)
    a = ap.parse_args()
    write(compute(a.workspace), a.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
