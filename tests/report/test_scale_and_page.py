"""Drill-downs at scale (compact presentation, texts read back from grade files, every link
resolves) and the page fixes of issue 20: chain breaks count ``no_deliverable`` trials, one
numbering for rubric items and ``requires``, the heat map as an HTML table."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from jobbench.report import _drill, build_report, write_data, write_report

_spec = importlib.util.spec_from_file_location(
    "report_fixtures_scale", Path(__file__).with_name("conftest.py")
)
fx = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fx)
_pages_spec = importlib.util.spec_from_file_location(
    "report_pages_scale", Path(__file__).with_name("test_drilldown_pages.py")
)
pages = importlib.util.module_from_spec(_pages_spec)
_pages_spec.loader.exec_module(pages)
T1, T2, T3, T4 = fx.T1, fx.T2, fx.T3, fx.T4
P, F = fx.P, fx.F


@pytest.mark.parametrize("layout", ["pages", "inline"])
def test_compact_drilldowns_reach_every_verdict(
    run_a: Path, run_b: Path, tmp_path: Path, monkeypatch, layout: str
):
    """Above the text budget: passing criteria are marks, the others full rows, every link
    resolves (pages, anchors, grade files) and each grade file linked holds the texts."""
    monkeypatch.setattr(_drill, "DETAIL_BUDGET", 0)
    data = build_report([run_a, run_b], n_resamples=100)
    assert _drill.drill_plan(data).compact
    out = write_data(data, tmp_path / "out", drilldowns=layout)
    assert pages.check_links(out) > 50
    # every drill-down (configuration x task that has a result) is reachable from report.html
    assert pages.check_reachable(out) == sum(len(c.tasks) for c in data.configs) == 12
    files = [out / "report.html", *sorted((out / "drilldowns").glob("*.html"))]
    html = "\n".join(p.read_text(encoding="utf-8") for p in files)
    # alpha epoch 1 on T1: R1 +, R2 +, R3 passes its first criterion and fails the second
    assert 'R1 ++ R2 ++ <span class="rf">R3 +<b>x</b></span>' in html
    # the failing criterion keeps its row, reasoning and evidence (hostile text escaped)
    assert "&lt;/div&gt;&lt;/td&gt;&lt;/table&gt;&lt;h1" in html and 'id="pwned"' not in html
    # the rubric and criterion texts are listed once per task
    assert html.count(f'id="rubrics-{T1.replace("/", ".")}"') == 1
    assert "criterion 3.2 of main/biostatisticians/task1" in html
    # every trial with a grade links its grade file, which holds every verdict's texts
    links = set(re.findall(r'href="([^"#]+\.json)"', html))
    graded = sum(1 for c in data.configs for lt in c.loaded if lt.grade is not None)
    assert len(links) == graded
    base = out / "drilldowns" if layout == "pages" else out
    for href in links:
        doc = json.loads((base / href).read_text())
        assert all(cv["reasoning"] for r in doc["rubrics"] for cv in r["criteria"])


def test_changed_grade_file_is_named_not_shown(run_a: Path, tmp_path: Path):
    """Texts are read back only from the bytes that were validated: a grade file changed
    after the report read it shows its verdicts without texts, and says why."""
    data = build_report([run_a], n_resamples=100)
    grade = run_a / "grades" / "checks" / T1 / "alpha@m1" / "epoch-1.json"
    doc = json.loads(grade.read_text())
    doc["rubrics"][2]["criteria"][1]["reasoning"] = "written after the report read the file"
    grade.write_text(json.dumps(doc))
    out = write_data(data, tmp_path / "out", drilldowns="pages")
    page = (out / "drilldowns" / "main.biostatisticians.task1.html").read_text()
    assert "written after the report read the file" not in page
    assert "the grade file changed after the report read it" in page


def test_compact_drilldowns_read_again_only_grades_with_texts_to_show(
    run_a: Path, run_b: Path, tmp_path: Path, monkeypatch
):
    """A compact drill-down reads a grade file again only for a trial with a verdict to
    show in full: every grade file changed after the report read it is named for those
    trials only (the others show marks, which the report already holds)."""
    monkeypatch.setattr(_drill, "DETAIL_BUDGET", 0)
    data = build_report([run_a, run_b], n_resamples=100)
    for grade in [
        *(run_a / "grades").rglob("epoch-*.json"),
        *(run_b / "grades").rglob("epoch-*.json"),
    ]:
        grade.write_text(grade.read_text() + " ")  # the same JSON, other bytes
    out = write_data(data, tmp_path / "out", drilldowns="pages")
    html = "".join(p.read_text() for p in (out / "drilldowns").glob("*.html"))
    stats = [lt.text_stats for c in data.configs for lt in c.loaded if lt.grade is not None]
    shown = sum(1 for s in stats if s is not None and s.detail)
    assert shown and len(stats) > shown  # both kinds of trial are there
    assert html.count("the grade file changed after the report read it") == shown


def test_chain_breaks_count_no_deliverable_trials(run_a: Path, run_b: Path, tmp_path: Path):
    """gamma delivered nothing on T2 (2 rubric items): both count as failed items."""
    out = write_report([run_a, run_b], tmp_path / "out", n_resamples=100)
    data = build_report([run_a, run_b], n_resamples=100)
    gamma = data.config("gamma")
    assert gamma.chain_breaks == {"no deliverable": 2}
    html = (out / "report.html").read_text()
    assert "first failed: no deliverable" in html
    summary = json.loads((out / "summary.json").read_text())
    assert any(c["chain_breaks"] == {"no deliverable": 2} for c in summary["configurations"])


def test_requires_uses_the_rubric_items_numbering(tmp_path: Path, dataset: Path):
    """Rubric items are R1, R2, …; ``requires`` (0-based in the files) is shown the same way."""
    run = tmp_path / "runs" / "req"
    fx.write_lock(run, dataset, [("alpha", "m1")], epochs=1)
    tid = fx.write_trial(run, T1, "alpha", "m1", 1)
    fx.write_grade(run, "checks", tid, [[F, P], [P, P], [P, P]])
    path = run / "grades" / "checks" / f"{tid}.json"
    doc = json.loads(path.read_text())
    doc["rubrics"][1].update(requires=[0], passed=False, chain_break="requires:0")
    path.write_text(json.dumps(doc))
    out = write_report([run], tmp_path / "out", n_resamples=100, drilldowns="inline")
    html = (out / "report.html").read_text()
    assert "(requires R1)" in html and "chain broke at required rubric R1" in html
    assert "(requires 0)" not in html and "required rubric 0" not in html


def test_heatmap_is_an_html_table_linking_every_cell(run_a: Path, run_b: Path, tmp_path: Path):
    """One row per task with its full id, one linked cell per configuration that ran it."""
    out = write_report([run_a, run_b], tmp_path / "out", n_resamples=100, drilldowns="pages")
    html = (out / "report.html").read_text()
    start = html.index('<table class="heatmap">')
    table = html[start : html.index("</table>", start)]
    assert "<img" not in html[html.index('id="fig-heatmap"') : start]
    for task in (T1, T2, T3, T4):
        assert f"<tr><th>{task}</th>" in table
    cells = re.findall(r'<td class="h(\d+|m)"><a href="drilldowns/[^"]+#c\d-[^"]+">', table)
    assert len(cells) == 12  # 3 configurations x 4 tasks, all run
