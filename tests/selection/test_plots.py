"""Figures: the points drawn are the data (counted in SVG output by their gid)."""

from __future__ import annotations

import csv
import xml.etree.ElementTree as ET
from pathlib import Path

from jobbench.selection import (
    DataPaths,
    SelectionRule,
    attention_analysis,
    attention_counts,
    load_attention_mapping,
    load_crosswalk,
    load_expert_capability,
    load_leaderboard,
    load_oews,
    load_task_metadata,
    load_worker_desires,
    occupation_table,
    plot_attention,
    plot_desire_capability,
    plot_exposure_desire,
    select_occupations,
    task_ratings,
)

SVG = "{http://www.w3.org/2000/svg}"


def points(svg: Path) -> dict[str, int]:
    """gid → number of markers drawn in that group."""
    root = ET.parse(svg).getroot()
    return {
        g.get("id"): len(list(g.iter(SVG + "use")))
        for g in root.iter(SVG + "g")
        if g.get("id", "").split("-")[0]
        in {"zone", "group", "selected", "marked", "highlight", "attention"}
    }


def test_desire_capability_plot_shows_every_task_in_its_zone(
    shared_data: Path, tmp_path: Path
) -> None:
    p = DataPaths.from_dir(shared_data)
    tasks = task_ratings(load_worker_desires(p.desires), load_expert_capability(p.capability))
    jb = {c.workbank_occupation for c in load_crosswalk()}
    out = plot_desire_capability(tasks, tmp_path / "z.svg", highlight=jb)
    n_jb = sum(t.occupation in jb for t in tasks)
    assert points(out) == {
        "zone-green_light": 364,
        "zone-red_light": 267,
        "zone-rnd_opportunity": 107,
        "zone-low_priority": 106,
        "highlight": n_jb,
    }
    with (shared_data / "jobbench" / "jobbench_35_occupations.csv").open(encoding="utf-8") as f:
        assert n_jb == sum(int(r["wb_n_tasks"]) for r in csv.DictReader(f)) == 290
    png = plot_desire_capability(tasks, tmp_path / "z.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_exposure_plot_groups_and_selection(mini_data: Path, tmp_path: Path) -> None:
    p = DataPaths.from_dir(mini_data)
    meta = load_task_metadata(p.task_metadata)
    tasks = task_ratings(load_worker_desires(p.desires), load_expert_capability(p.capability), meta)
    table = occupation_table(tasks, meta, load_oews(p.oews))
    sel = select_occupations(table, tasks, SelectionRule())
    out = plot_exposure_desire(
        table,
        tmp_path / "e.svg",
        selected={s.stats.occupation for s in sel.selected},
        marked={"Delta Agents"},
    )
    assert points(out) == {"group-13": 3, "group-43": 1, "selected": 3, "marked": 1}


def test_attention_plot(mini_data: Path, tmp_path: Path) -> None:
    p = DataPaths.from_dir(mini_data)
    cw = load_crosswalk(mini_data / "crosswalk.csv")
    counts = attention_counts(
        cw,
        load_attention_mapping(p.papers, "papers"),
        load_attention_mapping(p.companies, "companies"),
    )
    m1 = load_leaderboard(p.leaderboard)[0]
    res = attention_analysis([m1], counts, n_boot=20)
    out = plot_attention(res[0], m1, counts, tmp_path / "a.svg")
    assert points(out) == {"attention-papers": 3, "attention-companies": 3}
