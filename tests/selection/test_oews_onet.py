"""OEWS parsing and the O*NET-SOC → OEWS join rules; O*NET loaders."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from jobbench.selection import (
    DataFileError,
    DataPaths,
    crosswalk_mismatches,
    join_oews,
    load_crosswalk,
    load_expert_capability,
    load_oews,
    load_onet_occupations,
    load_onet_tasks,
    load_task_metadata,
    load_worker_desires,
    normalise_onet_code,
    onet_mismatches,
    task_ratings,
)


def test_join_rules_on_real_oews(shared_data: Path) -> None:
    oews = load_oews(shared_data / "oews" / "M2024_bls_wage_data.csv")
    cases = {
        # O*NET specialisation → 6-digit parent (oews/README.md)
        "15-2041.01": ("15-2041", "parent", 29_800, 112_330),
        "13-1199.06": ("13-1199", "parent", 1_128_200, 92_380),
        # published only as the broad aggregate
        "13-1023.00": ("13-1020", "aggregate", 486_900, 81_720),
        # a plain detailed code
        "13-1041.00": ("13-1041", "detailed", 397_770, 84_980),
        "13-2023.00": ("13-2020", "aggregate", None, None),
        "29-2011.00": ("29-2010", "aggregate", None, None),
    }
    for code, (occ, method, emp, wage) in cases.items():
        j = join_oews(code, oews)
        assert (j.occ_code, j.method) == (occ, method), code
        if emp is not None:
            assert (j.employment, j.mean_wage, j.exposure) == (emp, wage, emp * wage)
    assert join_oews("55-1011.00", oews).method == "missing"
    assert len([c for c, g in oews.rows.items() if "detailed" in g]) == 831
    # A_MEAN is "*" on the 7 hourly-only rows: parsed as missing, not as an error
    assert sum(1 for g in oews.rows.values() for r in g.values() if r.mean_wage is None) == 7


def test_join_matches_workbank_and_hand_checked_table(shared_data: Path) -> None:
    """Two independent sources: WORKBank's own OEWS columns (where it filled them) and the
    hand-checked JobBench table (which also covers the `.0x` and aggregated codes)."""
    oews = load_oews(shared_data / "oews" / "M2024_bls_wage_data.csv")
    meta = load_task_metadata(shared_data / "workbank" / "task_statement_with_metadata.csv")
    filled = [m for m in meta if m.employment is not None]
    assert len(filled) == 2131 - 642
    for m in filled:
        j = join_oews(m.onet_soc_code, oews)
        assert (j.method, j.employment, j.mean_wage) == ("detailed", m.employment, m.mean_wage), (
            m.task_id
        )
    # every empty one is a specialisation or an aggregated code, and the join fills it
    for m in meta:
        if m.employment is None:
            assert join_oews(m.onet_soc_code, oews).method in {"parent", "aggregate"}, (
                m.onet_soc_code
            )
    with (shared_data / "jobbench" / "jobbench_35_occupations.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 35
    for r in rows:
        j = join_oews(r["workbank_onet_soc2019_code"], oews)
        assert j.occ_code == r["oews_occ_code"], r["jobbench_slug"]
        assert j.employment == float(r["oews_may2024_tot_emp"])
        assert j.mean_wage == float(r["oews_may2024_a_mean"])
        assert j.exposure == float(r["oews_wage_bill_usd"])


def test_oews_parsing_flags_and_filters(tmp_path: Path, csv_file) -> None:
    write_csv = csv_file
    path = write_csv(
        tmp_path / "o.csv",
        ["AREA", "NAICS", "OCC_CODE", "OCC_TITLE", "OCC_GROUP", "TOT_EMP", "A_MEAN"],
        [
            ["99", "000000", "11-1011", "Chief Executives", "detailed", " 211,230 ", "#"],
            ["99", "000000", "27-2011", "Actors", "detailed", "**", "*"],
            ["99", "000000", "13-1020", "Buyers", "broad", "1,000", "5,000"],
            ["99", "000000", "13-1020", "Buyers", "detailed", "1,000", "5,000"],
            ["01", "000000", "11-1011", "Chief Executives", "detailed", "1", "1"],
            ["99", "541100", "11-1011", "Chief Executives", "detailed", "1", "1"],
        ],
    )
    t = load_oews(path)  # OCC_GROUP is accepted for O_GROUP (older BLS files)
    ceo = t.get("11-1011")
    assert (ceo.employment, ceo.mean_wage, ceo.exposure, ceo.line) == (211_230.0, None, None, 2)
    assert (t.get("27-2011").employment, t.get("27-2011").mean_wage) == (None, None)
    assert set(t.rows["13-1020"]) == {"broad", "detailed"}
    assert join_oews("13-1023", t).exposure == 5_000_000.0

    dup = write_csv(
        tmp_path / "dup.csv",
        ["OCC_CODE", "OCC_TITLE", "O_GROUP", "TOT_EMP", "A_MEAN"],
        [["11-1011", "A", "detailed", "1", "1"], ["11-1011", "A", "detailed", "2", "2"]],
    )
    with pytest.raises(DataFileError) as e:
        load_oews(dup)
    assert (e.value.line, e.value.column) == (3, "OCC_CODE") and "duplicate detailed row" in str(
        e.value
    )

    bad = write_csv(
        tmp_path / "bad.csv",
        ["OCC_CODE", "OCC_TITLE", "O_GROUP", "TOT_EMP", "A_MEAN"],
        [["11-1011", "A", "detailed", "12o", "1"]],
    )
    with pytest.raises(DataFileError) as e:
        load_oews(bad)
    assert str(bad) in str(e.value) and (e.value.line, e.value.column) == (2, "TOT_EMP")
    assert "'12o' is not a number" in str(e.value)


def test_normalise_onet_code() -> None:
    assert normalise_onet_code("15-2041") == "15-2041.00"
    assert normalise_onet_code(" 15-2041.01 ") == "15-2041.01"
    with pytest.raises(ValueError, match="not an O\\*NET-SOC code"):
        normalise_onet_code("152041")


def test_onet_files_agree_with_workbank(shared_data: Path) -> None:
    p = DataPaths.from_dir(shared_data)
    onet = load_onet_tasks(p.onet_tasks)  # the CSV re-upload: BOM, PK column, "Task Title"
    assert len(onet) == 18_796 and len({t.onet_soc_code for t in onet}) == 923
    tasks = task_ratings(
        load_worker_desires(p.desires),
        load_expert_capability(p.capability),
        load_task_metadata(p.task_metadata),
    )
    assert onet_mismatches(tasks, onet) == []
    occ2010 = load_onet_occupations(p.onet_occupations)
    assert (
        len(occ2010) == 1110 and occ2010["11-3031.02"] == "Financial Managers, Branch or Department"
    )
    assert crosswalk_mismatches(load_crosswalk(), occ2010) == []


def test_onet_official_tsv_and_mismatch_messages(mini_data: Path) -> None:
    p = DataPaths.from_dir(mini_data)
    assert p.onet_tasks.name == "Task Statements.txt"
    onet = load_onet_tasks(p.onet_tasks)
    assert [t.task_type for t in onet if t.task_id == "10"] == ["Supplemental"]
    tasks = task_ratings(load_worker_desires(p.desires), load_expert_capability(p.capability))
    assert onet_mismatches(tasks, onet) == []
    trimmed = [t for t in onet if t.task_id != "3"]
    msgs = onet_mismatches(tasks, trimmed)
    assert msgs == ["Task ID 3 (Beta Clerks) is not in the O*NET task statements"]
    cw = load_crosswalk(mini_data / "crosswalk.csv")
    assert crosswalk_mismatches(cw, {"13-1111.00": "Management Analysts"}) == [
        "beta: O*NET-SOC 2010 code 43-9021.00 not in the occupation data",
        "delta: O*NET-SOC 2010 code 13-1023.00 not in the occupation data",
    ]
