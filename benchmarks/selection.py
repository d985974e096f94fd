"""Speed of the selection stage on the public data (prints figures; not a test).

Usage: PYTHONPATH=src python benchmarks/selection.py [DATA_DIR]
DATA_DIR defaults to $JOBBENCH_SHARED_DATA or <repo>/../shared/data.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from jobbench.selection import (
    DEFAULT_GRID,
    DataPaths,
    SelectionRule,
    attention_analysis,
    attention_counts,
    load_attention_mapping,
    load_crosswalk,
    load_expert_capability,
    load_leaderboard,
    load_oews,
    load_onet_tasks,
    load_task_metadata,
    load_worker_desires,
    occupation_table,
    pick_configs,
    search_rules,
    select_occupations,
    task_ratings,
)


def timed(label: str, fn):
    t0 = time.perf_counter()
    out = fn()
    print(f"{label:<58} {time.perf_counter() - t0:8.3f} s")
    return out


def main() -> None:
    repo = Path(__file__).resolve().parents[1]
    root = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else Path(os.environ.get("JOBBENCH_SHARED_DATA", repo / ".." / "shared" / "data"))
    )
    p = DataPaths.from_dir(root)
    des = timed("load worker desires (5,731 rows)", lambda: load_worker_desires(p.desires))
    cap = timed("load expert capability (2,057 rows)", lambda: load_expert_capability(p.capability))
    meta = timed("load task metadata (2,131 rows)", lambda: load_task_metadata(p.task_metadata))
    oews = timed("load OEWS national (1,403 rows)", lambda: load_oews(p.oews))
    onet = timed("load O*NET task statements (18,796 rows)", lambda: load_onet_tasks(p.onet_tasks))
    tasks = timed("aggregate per task (844 tasks)", lambda: task_ratings(des, cap, meta))
    cw = load_crosswalk()
    table = timed(
        "occupation table (104 occupations, OEWS join)",
        lambda: occupation_table(tasks, meta, oews, cw, onet_tasks=onet),
    )
    timed("select (default rule)", lambda: select_occupations(table, tasks, SelectionRule()))
    n_rules = 1
    for v in DEFAULT_GRID.values():
        n_rules *= len(v)
    timed(f"search {n_rules} rules against JobBench's 35", lambda: search_rules(table, tasks, cw))
    papers = timed("load arXiv-paper mapping", lambda: load_attention_mapping(p.papers, "papers"))
    companies = timed(
        "load YC-company mapping", lambda: load_attention_mapping(p.companies, "companies")
    )
    counts = attention_counts(cw, papers, companies)
    configs = pick_configs(load_leaderboard(p.leaderboard), [])
    timed(
        f"attention: {len(configs)} configurations x 4 correlations, 10,000 resamples",
        lambda: attention_analysis(configs, counts, n_boot=10_000),
    )


if __name__ == "__main__":
    main()
