"""Occupation statistics, the selection rule, comparison with JobBench, and `jobbench select`."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.selection import (
    DataPaths,
    SelectionRule,
    compare_with_jobbench,
    load_crosswalk,
    load_expert_capability,
    load_oews,
    load_onet_tasks,
    load_task_metadata,
    load_worker_desires,
    occupation_table,
    search_rules,
    select_occupations,
    task_ratings,
)

runner = CliRunner()


@pytest.fixture
def mini(mini_data: Path):
    p = DataPaths.from_dir(mini_data)
    meta = load_task_metadata(p.task_metadata)
    tasks = task_ratings(load_worker_desires(p.desires), load_expert_capability(p.capability), meta)
    cw = load_crosswalk(mini_data / "crosswalk.csv")
    table = occupation_table(
        tasks, meta, load_oews(p.oews), cw, onet_tasks=load_onet_tasks(p.onet_tasks)
    )
    return table, tasks, cw


def _names(selection) -> list[str]:
    return [s.stats.occupation for s in selection.selected]


def test_occupation_table(mini) -> None:
    table, _, _ = mini
    by = {o.occupation: o for o in table}
    assert [o.occupation for o in table] == [
        "Alpha Analysts",
        "Beta Clerks",
        "Gamma Specialists",
        "Delta Agents",
    ]
    assert [o.exposure_rank for o in table] == [1, 2, 3, 4]
    a, b, g, d = (
        by[n] for n in ("Alpha Analysts", "Beta Clerks", "Gamma Specialists", "Delta Agents")
    )
    assert (a.employment, a.mean_wage, a.exposure, a.oews_method) == (
        1000,
        100_000,
        1e8,
        "detailed",
    )
    assert (g.oews_occ_code, g.oews_method, g.exposure) == ("13-1199", "parent", 4e7)
    assert (d.oews_occ_code, d.oews_method, d.exposure) == ("13-1020", "aggregate", 1.5e7)
    # mean of task means (1.5, 3.0) differs from the mean of ratings (3, 3, 3, 1, 2)
    assert (b.desire_mean, b.desire_mean_of_ratings, b.capability_mean) == (2.25, 2.4, 4.0)
    assert (b.n_tasks_desire_ge3, b.desire_max, b.desire_median) == (1, 3.0, 2.25)
    assert (b.soc_major_code, b.soc_major_title) == (
        "43-0000",
        "Office and Administrative Support Occupations",
    )
    assert a.onet_n_tasks == 4 and a.jobbench_slugs == ["alpha"] and g.jobbench_slugs == []
    assert b.zones == {"Green Light": 1, "Red Light": 1, "R&D Opportunity": 0, "Low Priority": 0}


@pytest.mark.parametrize(
    ("params", "selected", "excluded"),
    [
        ({}, ["Alpha Analysts", "Beta Clerks", "Gamma Specialists"], {"Delta Agents": "desire"}),
        (
            {"strict": True},
            ["Alpha Analysts", "Gamma Specialists"],
            {"Beta Clerks": "desire", "Delta Agents": "desire"},
        ),
        ({"min_qualifying_tasks": 2}, ["Gamma Specialists"], {"Alpha Analysts": "desire"}),
        (
            {"desire_cut": 2.0, "top_n": 2},
            ["Alpha Analysts", "Beta Clerks"],
            {"Gamma Specialists": "top_n", "Delta Agents": "top_n"},
        ),
        (
            {"desire_cut": 2.0, "group_quotas": {"13-0000": 1}},
            ["Alpha Analysts", "Beta Clerks"],
            {"Gamma Specialists": "quota", "Delta Agents": "quota"},
        ),
        (
            {"desire_cut": 2.0, "max_per_group": 2},
            ["Alpha Analysts", "Beta Clerks", "Gamma Specialists"],
            {"Delta Agents": "quota"},
        ),
        ({"groups": ["43-0000"]}, ["Beta Clerks"], {"Alpha Analysts": "groups"}),
        (
            {"min_occupation_desire": 3.0},
            ["Alpha Analysts", "Gamma Specialists"],
            {"Beta Clerks": "occupation desire"},
        ),
        (
            {"desire_cut": 2.0, "max_exposure_rank": 2},
            ["Alpha Analysts", "Beta Clerks"],
            {"Gamma Specialists": "exposure rank"},
        ),
    ],
)
def test_rule_parameters(mini, params, selected, excluded) -> None:
    table, tasks, _ = mini
    sel = select_occupations(table, tasks, SelectionRule(**params))
    assert _names(sel) == selected
    assert [s.rank for s in sel.selected] == list(range(1, len(selected) + 1))
    for occ, reason in excluded.items():
        assert sel.excluded[occ] == reason


def test_top_tasks_and_comparison(mini) -> None:
    table, tasks, cw = mini
    sel = select_occupations(table, tasks, SelectionRule(top_tasks=2))
    gamma = next(s for s in sel.selected if s.stats.occupation == "Gamma Specialists")
    assert [(t.task_id, t.desire) for t in gamma.top_tasks] == [("5", 5.0), ("6", 3.5)]
    assert gamma.n_qualifying_tasks == 2
    c = compare_with_jobbench(sel, cw)
    assert (c.overlap, c.misses, c.extras) == (
        ["Alpha Analysts", "Beta Clerks"],
        ["Delta Agents"],
        ["Gamma Specialists"],
    )
    assert c.miss_reasons == {"Delta Agents": "desire"}
    assert (c.precision, c.recall, c.jaccard) == (2 / 3, 2 / 3, 0.5)


def test_search_collapses_equivalent_rules(mini) -> None:
    table, tasks, cw = mini
    res = search_rules(table, tasks, cw, grid={"desire_cut": [2.0, 3.0], "top_n": [None, 2]})
    assert [(r.rule.desire_cut, r.rule.top_n, r.equivalent, r.comparison.jaccard) for r in res] == [
        (2.0, None, 1, 0.75),
        (2.0, 2, 2, 2 / 3),
        (3.0, None, 1, 0.5),
    ]
    with pytest.raises(ValueError, match="unknown rule parameter"):
        search_rules(table, tasks, cw, grid={"desire_threshold": [3.0]})


def test_select_command_outputs(mini_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = runner.invoke(
        app,
        [
            "select",
            "--data-dir",
            str(mini_data),
            "--crosswalk",
            str(mini_data / "crosswalk.csv"),
            "--out",
            str(out),
            "--top-tasks",
            "1",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["selected"] == ["Alpha Analysts", "Beta Clerks", "Gamma Specialists"]
    assert summary["comparison"]["jaccard"] == 0.5 and summary["notes"] == []
    with (out / "occupations.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [(r["occupation"], float(r["exposure"]), r["oews_method"]) for r in rows] == [
        ("Alpha Analysts", 1e8, "detailed"),
        ("Beta Clerks", 8e7, "detailed"),
        ("Gamma Specialists", 4e7, "parent"),
        ("Delta Agents", 1.5e7, "aggregate"),
    ]
    with (out / "candidate_tasks.csv").open(encoding="utf-8") as f:
        cands = list(csv.DictReader(f))
    assert [(c["occupation"], c["task_id"]) for c in cands] == [
        ("Alpha Analysts", "1"),
        ("Beta Clerks", "3"),
        ("Gamma Specialists", "5"),
    ]
    sel = json.loads((out / "selected.json").read_text())
    assert sel["excluded"] == {"Delta Agents": "desire"}
    md = (out / "selected.md").read_text()
    assert "| 1 | Alpha Analysts | 13-0000 | 2 | 1 |" in md and "Delta Agents [desire]" in md
    assert (out / "desire_vs_capability.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "exposure_vs_desire.png").stat().st_size > 10_000


def test_default_rule_on_real_data_matches_independent_ranking(
    shared_data: Path, tmp_path: Path
) -> None:
    """Top 35 by exposure among occupations with a task of mean desire ≥ 3, recomputed with
    plain csv (same join rules written out again), equals `jobbench select`'s list."""
    res = runner.invoke(
        app,
        [
            "select",
            "--data-dir",
            str(shared_data),
            "--out",
            str(tmp_path / "o"),
            "--no-plots",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["notes"] == []

    def rows(path: Path):
        with path.open(encoding="utf-8-sig", newline="") as f:
            return list(csv.DictReader(f))

    wb = shared_data / "workbank"
    oews = {}
    for r in rows(shared_data / "oews" / "M2024_bls_wage_data.csv"):
        if r["O_GROUP"] in ("detailed", "broad") and r["A_MEAN"] not in ("*", "#"):
            oews.setdefault(
                r["OCC_CODE"],
                float(r["TOT_EMP"].replace(",", "")) * float(r["A_MEAN"].replace(",", "")),
            )
    code = {
        r["Occupation (O*NET-SOC Title)"]: r["O*NET-SOC Code"]
        for r in rows(wb / "task_statement_with_metadata.csv")
    }
    des, cap = defaultdict(list), set()
    occ_of = {}
    for r in rows(wb / "domain_worker_desires.csv"):
        des[r["Task ID"]].append(int(r["Automation Desire Rating"]))
        occ_of[r["Task ID"]] = r["Occupation (O*NET-SOC Title)"]
    for r in rows(wb / "expert_rated_technological_capability.csv"):
        cap.add(r["Task ID"])
    high = {occ_of[t] for t, v in des.items() if t in cap and sum(v) / len(v) >= 3}
    exposure = {o: oews.get(code[o][:7], oews.get(code[o][:6] + "0")) for o in high}
    expected = sorted(high, key=lambda o: (-exposure[o], o))[:35]
    assert summary["selected"] == expected
    jobbench = {
        r["workbank_occupation"]
        for r in rows(shared_data / "jobbench" / "jobbench_35_occupations.csv")
    }
    assert len(set(expected) & jobbench) == len(summary["comparison"]["overlap"]) == 21


def test_search_on_real_data(shared_data: Path, tmp_path: Path) -> None:
    res = runner.invoke(
        app,
        [
            "select",
            "--data-dir",
            str(shared_data),
            "--out",
            str(tmp_path / "o"),
            "--no-plots",
            "--no-onet",
            "--search",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    best = json.loads(res.stdout)["search"][0]
    # No exposure-ranked rule recovers JobBench's list: the best distinct selection shares 20 of 35.
    assert (len(best["comparison"]["overlap"]), best["comparison"]["n_selected"]) == (20, 30)
    assert best["comparison"]["jaccard"] == pytest.approx(20 / 45)
    assert (
        json.loads((tmp_path / "o" / "search.json").read_text())[0]["comparison"]["overlap"]
        == best["comparison"]["overlap"]
    )
