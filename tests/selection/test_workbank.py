"""WORKBank loaders, per-task aggregation and the paper's published figures."""

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
    Zone,
    load_expert_capability,
    load_task_metadata,
    load_worker_desires,
    task_ratings,
    workbank_figures,
    zone_of,
)

runner = CliRunner()


def _independent_task_means(path: Path, column: str) -> dict[str, list[float]]:
    """Group rating rows by the Task text, as WORKBank's upstream notebooks do."""
    out: dict[str, list[float]] = defaultdict(list)
    with path.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            out[row["Task"]].append(float(row[column]))
    return out


def test_published_figures_reproduce_exactly(shared_data: Path) -> None:
    p = DataPaths.from_dir(shared_data)
    tasks = task_ratings(
        load_worker_desires(p.desires),
        load_expert_capability(p.capability),
        load_task_metadata(p.task_metadata),
    )
    f = workbank_figures(tasks)
    # WORKBank paper (arXiv:2506.06576): 844 tasks over 104 occupations, 46.1 % with desire > 3
    assert (f.n_tasks, f.n_occupations) == (844, 104)
    assert f.n_desire_gt3 == 389 and round(f.pct_desire_gt3, 1) == 46.1
    assert (round(f.pct_desire_ge4, 2), round(f.pct_desire_le2, 2)) == (7.11, 6.16)
    # zone counts of the upstream notebook
    assert f.zones == {
        "Green Light": 364,
        "Red Light": 267,
        "R&D Opportunity": 107,
        "Low Priority": 106,
    }
    assert (
        f.top_task == "Tax Preparers: Schedule appointments with clients." and f.top_desire == 5.0
    )
    assert (f.n_ratings_worker, f.n_ratings_expert) == (
        5731,
        2052,
    )  # 2,057 expert rows minus 5 on expert-only tasks
    assert all(t.onet_soc_code for t in tasks)


def test_text_keyed_aggregation_agrees(shared_data: Path) -> None:
    """Upstream groups by the Task text; keying by Task ID (ours) gives the same tasks and means."""
    p = DataPaths.from_dir(shared_data)
    des = _independent_task_means(p.desires, "Automation Desire Rating")
    cap = _independent_task_means(p.capability, "Automation Capacity Rating")
    both = {t: (sum(des[t]) / len(des[t]), sum(cap[t]) / len(cap[t])) for t in des if t in cap}
    ours = {
        t.task: (t.desire, t.capability)
        for t in task_ratings(load_worker_desires(p.desires), load_expert_capability(p.capability))
    }
    assert len(both) == 844
    assert ours.keys() == both.keys()
    assert all(ours[t] == pytest.approx(both[t], abs=1e-12) for t in both)
    zones = defaultdict(int)
    for d, c in both.values():
        zones[("high" if c >= 3 else "low", "high" if d >= 3 else "low")] += 1
    assert dict(zones) == {
        ("high", "high"): 364,
        ("high", "low"): 267,
        ("low", "high"): 107,
        ("low", "low"): 106,
    }


def test_other_aggregations_do_not_reproduce(shared_data: Path) -> None:
    """Why the inclusive 3.0 cut on task means is the one: a strict cut gives other counts."""
    p = DataPaths.from_dir(shared_data)
    tasks = task_ratings(load_worker_desires(p.desires), load_expert_capability(p.capability))
    strict = defaultdict(int)
    for t in tasks:
        strict[(t.capability > 3, t.desire > 3)] += 1
    assert dict(strict) == {
        (True, True): 259,
        (True, False): 236,
        (False, True): 130,
        (False, False): 219,
    }
    assert sum(t.desire >= 3 for t in tasks) == 471  # 55.8 %, not 46.1 %


def test_mini_aggregation(mini_data: Path) -> None:
    p = DataPaths.from_dir(mini_data)
    tasks = task_ratings(
        load_worker_desires(p.desires),
        load_expert_capability(p.capability),
        load_task_metadata(p.task_metadata),
    )
    got = {t.task_id: (t.desire, t.capability, t.zone, t.n_workers, t.n_experts) for t in tasks}
    assert got == {
        "1": (4.0, 4.0, Zone.green_light, 2, 1),
        "2": (2.5, 2.5, Zone.low_priority, 2, 2),
        "3": (3.0, 3.0, Zone.green_light, 3, 1),
        "4": (1.5, 5.0, Zone.red_light, 2, 1),
        "5": (5.0, 1.5, Zone.rnd_opportunity, 1, 2),
        "6": (3.5, 3.5, Zone.green_light, 2, 2),
        "7": (2.0, 2.0, Zone.low_priority, 1, 1),
        "8": (2.0, 4.0, Zone.red_light, 2, 1),
    }
    assert "9" not in got  # expert-only task
    assert {t.task_id: t.onet_soc_code for t in tasks}["5"] == "13-1199.06"
    f = workbank_figures(tasks)
    assert (f.n_tasks, f.n_occupations, f.n_desire_gt3, f.pct_desire_gt3) == (8, 4, 3, 37.5)
    assert f.zones == {"Green Light": 3, "Red Light": 2, "R&D Opportunity": 1, "Low Priority": 2}


@pytest.mark.parametrize(
    ("desire", "capability", "zone"),
    [
        (3.0, 3.0, Zone.green_light),
        (2.999, 3.0, Zone.red_light),
        (3.0, 2.999, Zone.rnd_opportunity),
        (1.0, 1.0, Zone.low_priority),
        (5.0, 5.0, Zone.green_light),
    ],
)
def test_zone_edges(desire: float, capability: float, zone: Zone) -> None:
    assert zone_of(desire, capability) is zone


def test_figures_command(shared_data: Path) -> None:
    res = runner.invoke(app, ["selection", "figures", "--data-dir", str(shared_data), "--json"])
    assert res.exit_code == 0, res.output
    f = json.loads(res.stdout)
    assert (f["n_tasks"], f["n_occupations"], f["n_desire_gt3"]) == (844, 104, 389)
    assert list(f["zones"].values()) == [364, 267, 107, 106]
    text = runner.invoke(app, ["selection", "figures", "--data-dir", str(shared_data)]).stdout
    assert "389 tasks = 46.1 %" in text and "Green Light 364" in text
