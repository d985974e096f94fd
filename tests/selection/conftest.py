"""Fixtures for the selection tests.

``shared_data``: the project's shared data folder (``<repo>/../shared/data``, or
``$JOBBENCH_SHARED_DATA``); tests that need it are skipped when it is absent.
``mini_data``: a small hand-made data directory in the fetch layout whose every figure is
known by construction (see the comments below).
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def shared_data_dir() -> Path:
    env = os.environ.get("JOBBENCH_SHARED_DATA")
    return Path(env) if env else (REPO / ".." / "shared" / "data").resolve()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    root = shared_data_dir()
    if not (root / "workbank" / "domain_worker_desires.csv").is_file():
        pytest.skip(
            f"shared data not found at {root} (set JOBBENCH_SHARED_DATA to the folder holding "
            "workbank/, oews/, onet/, jobbench/)"
        )
    return root


def write_csv(path: Path, header: list[str], rows: list[list], delimiter: str = ",") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, delimiter=delimiter, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    return path


OCC = "Occupation (O*NET-SOC Title)"

# occupation → (O*NET-SOC code, tasks: task id → (text, worker desires, expert capabilities))
# Per-task means / zones (cut 3.0 inclusive):
#   Alpha 1 (4.0, 4.0) Green; Alpha 2 (2.5, 2.5) Low
#   Beta 3 (3.0, 3.0) Green (both on the cut); Beta 4 (1.5, 5.0) Red
#   Gamma 5 (5.0, 1.5) R&D; Gamma 6 (3.5, 3.5) Green
#   Delta 7 (2.0, 2.0) Low; Delta 8 (2.0, 4.0) Red
# → 8 tasks, 4 occupations, zones G3 R2 D1 L2, desire > 3 for tasks 1, 5, 6 (37.5 %).
MINI = {
    "Alpha Analysts": (
        "13-1111.00",
        {"1": ("Analyse alpha data.", [4, 4], [4]), "2": ("Write alpha memos.", [2, 3], [2, 3])},
    ),
    "Beta Clerks": (
        "43-9021.00",
        {"3": ("Key beta records.", [3, 3, 3], [3]), "4": ("File beta forms.", [1, 2], [5])},
    ),
    "Gamma Specialists": (
        "13-1199.06",
        {
            "5": ("Sell gamma goods online.", [5], [1, 2]),
            "6": ("Track gamma orders.", [3, 4], [3, 4]),
        },
    ),
    "Delta Agents": (
        "13-1023.00",
        {"7": ("Buy delta supplies.", [2], [2]), "8": ("Negotiate delta contracts.", [2, 2], [4])},
    ),
}
# OEWS rows: Alpha 13-1111 1,000 × 100,000 = 1e8; Beta 43-9021 2,000 × 40,000 = 8e7;
# Gamma (parent 13-1199) 500 × 80,000 = 4e7; Delta (aggregate 13-1020) 300 × 50,000 = 1.5e7.
OEWS_ROWS = [
    ["99", "000000", "00-0000", "All Occupations", "total", "10,000", "60,000"],
    [
        "99",
        "000000",
        "13-0000",
        "Business and Financial Operations Occupations",
        "major",
        "1,800",
        "90,000",
    ],
    [
        "99",
        "000000",
        "43-0000",
        "Office and Administrative Support Occupations",
        "major",
        "2,000",
        "40,000",
    ],
    ["99", "000000", "13-1020", "Buyers and Purchasing Agents", "broad", "300", "50,000"],
    ["99", "000000", "13-1020", "Buyers and Purchasing Agents", "detailed", "300", "50,000"],
    ["99", "000000", "13-1111", "Management Analysts", "detailed", "1,000", "100,000"],
    [
        "99",
        "000000",
        "13-1199",
        "Business Operations Specialists, All Other",
        "detailed",
        "500",
        "80,000",
    ],
    ["99", "000000", "43-9021", "Data Entry Keyers", "detailed", "2,000", "40,000"],
    ["99", "000000", "27-2011", "Actors", "detailed", "50", "*"],
    [
        "06",
        "000000",
        "13-1111",
        "Management Analysts",
        "detailed",
        "9",
        "1",
    ],  # a state row: ignored
]
# JobBench crosswalk: alpha → Alpha, beta → Beta, delta → Delta (Gamma is not in JobBench).
CROSSWALK = [
    ["alpha", "13-1111.00", "Management Analysts", "Alpha Analysts", "13-1111.00", "exact"],
    ["beta", "43-9021.00", "Data Entry Keyers", "Beta Clerks", "43-9021.00", "exact"],
    ["delta", "13-1023.00", "Purchasing Agents", "Delta Agents", "13-1023.00", "exact"],
]
# Attention: papers Alpha {p1,p2,p3,p9} (task 1: p1,p2; task 2: p2,p3; unrated task 9: p9),
# Beta {p1}, Delta {p4,p5} — Alpha has 3 papers when only rated tasks count;
# companies Alpha {A}, Beta {A,B,C} ("B; C" on task 3, "A" on task 4), Delta {B,D}.
PAPERS = [
    ["Analyse alpha data.", "Alpha Analysts", 2, "p1,p2"],
    ["Write alpha memos.", "Alpha Analysts", 2, "p2,p3"],
    ["Key beta records.", "Beta Clerks", 1, "p1"],
    ["Buy delta supplies.", "Delta Agents", 2, "p4,p5"],
    ["Expert-only alpha task.", "Alpha Analysts", 1, "p9"],
]
COMPANIES = [
    ["Analyse alpha data.", "Alpha Analysts", 1, "A"],
    ["Key beta records.", "Beta Clerks", 2, "B; C"],
    ["File beta forms.", "Beta Clerks", 1, "A"],
    ["Negotiate delta contracts.", "Delta Agents", 2, "B; D"],
]
# Leaderboard: m1 scores alpha 10, beta 30, delta 20; m2 scores alpha 50, beta 40 (no delta).
LEADERBOARD = {
    "categories": ["alpha", "beta", "delta"],
    "leaderboard": [
        {
            "rank": 1,
            "model": "m1",
            "displayName": "Model One",
            "framework": "Codex CLI",
            "overallScore": 20.0,
            "categoryBreakdown": {
                "alpha": {"score_pct": 10.0},
                "beta": {"score_pct": 30.0},
                "delta": {"score_pct": 20.0},
            },
        },
        {
            "rank": 2,
            "model": "m2",
            "displayName": "Model Two",
            "framework": "Claude Code",
            "overallScore": 15.0,
            "categoryBreakdown": {"alpha": {"score_pct": 50.0}, "beta": {"score_pct": 40.0}},
        },
    ],
}


def build_mini(root: Path) -> Path:
    des, cap, meta, onet = [], [], [], []
    for occ, (code, tasks) in MINI.items():
        for tid, (text, dv, cv) in tasks.items():
            for k, v in enumerate(dv):
                des.append([tid, occ, text, f"w{tid}-{k}", "2025/3/1", v, 3])
            for k, v in enumerate(cv):
                cap.append([tid, occ, text, f"e{k}", "2025/3/2", v])
            meta.append([code, occ, tid, text, "Core", "08/2020", "", ""])
            onet.append([code, occ, tid, text, "Core"])
    cap.append(["9", "Alpha Analysts", "Expert-only alpha task.", "e9", "2025/3/2", 5])
    meta.append(
        ["13-1111.00", "Alpha Analysts", "9", "Expert-only alpha task.", "Core", "08/2020", "", ""]
    )
    onet.append(["13-1111.00", "Alpha Analysts", "9", "Expert-only alpha task.", "Core"])
    onet.append(["13-1111.00", "Alpha Analysts", "10", "An unrated alpha task.", "Supplemental"])
    wb = root / "workbank"
    write_csv(
        wb / "domain_worker_desires.csv",
        ["Task ID", OCC, "Task", "User ID", "Date", "Automation Desire Rating", "Time"],
        des,
    )
    write_csv(
        wb / "expert_rated_technological_capability.csv",
        ["Task ID", OCC, "Task", "User ID", "Date", "Automation Capacity Rating"],
        cap,
    )
    write_csv(
        wb / "task_statement_with_metadata.csv",
        [
            "O*NET-SOC Code",
            OCC,
            "Task ID",
            "Task",
            "Task Type",
            "Date",
            "Occupation Mean Annual Wage",
            "Occupation Employment",
        ],
        meta,
    )
    write_csv(
        wb / "external" / "paper_to_workflow_mapping_aggregated.csv",
        ["task", "occupation", "paper_count", "paper_ids"],
        PAPERS,
    )
    write_csv(
        wb / "external" / "company_to_workflow_aggregation.csv",
        ["task", "occupation", "company_count", "company"],
        COMPANIES,
    )
    write_csv(
        root / "oews" / "M2024_bls_wage_data.csv",
        ["AREA", "NAICS", "OCC_CODE", "OCC_TITLE", "O_GROUP", "TOT_EMP", "A_MEAN"],
        OEWS_ROWS,
    )
    write_csv(
        root / "onet" / "Task Statements.txt",
        ["O*NET-SOC Code", "Title", "Task ID", "Task", "Task Type"],
        onet,
        delimiter="\t",
    )
    write_csv(
        root / "onet" / "onet_soc2010_occupation_data.txt",
        ["O*NET-SOC Code", "Title", "Description"],
        [
            ["13-1111.00", "Management Analysts", "x"],
            ["43-9021.00", "Data Entry Keyers", "x"],
            ["13-1023.00", "Purchasing Agents", "x"],
        ],
        delimiter="\t",
    )
    write_csv(
        root / "crosswalk.csv",
        [
            "jobbench_slug",
            "onet_soc2010_code",
            "onet_soc2010_title",
            "workbank_occupation",
            "workbank_onet_soc2019_code",
            "mapping",
        ],
        CROSSWALK,
    )
    (root / "jobbench").mkdir(parents=True, exist_ok=True)
    (root / "jobbench" / "leaderboard.json").write_text(json.dumps(LEADERBOARD), encoding="utf-8")
    return root


@pytest.fixture
def mini_data(tmp_path: Path) -> Path:
    return build_mini(tmp_path / "data")


@pytest.fixture
def csv_file():
    """The :func:`write_csv` helper (importlib import mode cannot import conftest)."""
    return write_csv
