"""Reference solution for easy/civil_engineers/task1 (slab mix and April concrete order).

Usage: python solve.py --workspace DIR --output DIR

Screens every mix of the lab register against the limits stated in TASK_INSTRUCTIONS.txt,
prices it with the April price sheet (USD per tonne of each material), picks the cheapest
compliant mix and sizes the order: net volume = sum of length x width x thickness of the
April pours, order = net x (1 + allowance).
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

LIMITS = {"min_strength_mpa": 41.5, "max_wcm": 0.45, "max_fly_ash_pct": 25.0}
ALLOWANCE = 0.04
COLUMNS = {
    "cement": "Cement",
    "slag": "GGBS",
    "fly_ash": "Fly ash",
    "water": "Water",
    "sp": "Superplasticizer",
    "coarse": "Coarse agg",
    "fine": "Fine agg",
}
PRICE_NAMES = {
    "cement": "portland cement",
    "slag": "ggbs",
    "fly_ash": "fly ash",
    "water": "water",
    "sp": "superplasticizer",
    "coarse": "coarse",
    "fine": "fine",
}


def compute(ws: Path, *, allowance: float = ALLOWANCE, strength_only: bool = False) -> dict:
    """``allowance`` and ``strength_only`` exist so that decoys can reproduce plausible
    mistakes (allowance left out; w/cm and fly-ash limits ignored)."""
    import openpyxl

    prices = {}
    for name, price in openpyxl.load_workbook(ws / "material_prices.xlsx")["Prices"].iter_rows(
        min_row=2, values_only=True
    ):
        key = next(k for k, label in PRICE_NAMES.items() if label in str(name).lower())
        prices[key] = float(price) / 1000  # USD per kg
    rows = []
    with open(ws / "lab_mix_register.csv", newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        cols = {
            k: next(h for h in reader.fieldnames or [] if h.startswith(v))
            for k, v in COLUMNS.items()
        }
        for r in reader:
            m = {k: float(r[h]) for k, h in cols.items()}
            cm = m["cement"] + m["slag"] + m["fly_ash"]
            strength = float(r["Strength 28d (MPa)"])
            wcm, fa = m["water"] / cm, 100 * m["fly_ash"] / cm
            ok = strength >= LIMITS["min_strength_mpa"] and (
                strength_only or (wcm <= LIMITS["max_wcm"] and fa <= LIMITS["max_fly_ash_pct"])
            )
            rows.append(
                {
                    "mix_id": r["Mix ID"].strip(),
                    "strength": strength,
                    "w_cm": wcm,
                    "fly_ash_pct": fa,
                    "compliant": ok,
                    "cost": sum(m[k] * prices[k] for k in COLUMNS),
                    "cement": m["cement"],
                }
            )
    best = min((r for r in rows if r["compliant"]), key=lambda r: r["cost"])
    net = 0.0
    for row in openpyxl.load_workbook(ws / "pour_schedule.xlsx")["Pours"].iter_rows(
        min_row=2, values_only=True
    ):
        if row[0]:
            net += float(row[3]) * float(row[4]) * float(row[5]) / 1000
    order = net * (1 + allowance)
    return {
        "rows": rows,
        "best": best,
        "net": net,
        "order": order,
        "total": order * best["cost"],
        "cement_t": order * best["cement"] / 1000,
    }


def write(res: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "mix_evaluation.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(
            ["mix_id", "strength_28d_mpa", "w_cm", "fly_ash_pct", "compliant", "cost_per_m3"]
        )
        for r in res["rows"]:
            w.writerow(
                [
                    r["mix_id"],
                    f"{r['strength']:.2f}",
                    f"{r['w_cm']:.3f}",
                    f"{r['fly_ash_pct']:.1f}",
                    "Yes" if r["compliant"] else "No",
                    f"{r['cost']:.2f}",
                ]
            )
    b = res["best"]
    est = {
        "recommended_mix": b["mix_id"],
        "cost_per_m3": round(b["cost"], 2),
        "net_volume_m3": round(res["net"], 2),
        "order_volume_m3": round(res["order"], 2),
        "total_material_cost": round(res["total"], 2),
        "cement_tonnes": round(res["cement_t"], 2),
    }
    (out / "concrete_estimate.json").write_text(json.dumps(est, indent=2) + "\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--output", type=Path, required=True)
    a = ap.parse_args()
    write(compute(a.workspace), a.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
