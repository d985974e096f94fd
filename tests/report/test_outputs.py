"""Report files, HTML safety and links, judge-key choice, bad input and the CLI."""

from __future__ import annotations

import csv
import json
import os
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jobbench.cli import app
from jobbench.report import ReportInputError, build_report, write_report

T1, T2, T3, T4 = (
    "main/biostatisticians/task1",
    "main/civil_engineers/task1",
    "main/lawyers/task1",
    "main/management_analysts/task1",
)


class PageIndex(HTMLParser):
    """ids, internal links, images, and the text of task-number cells found outside links."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.tags: list[str] = []
        self.imgs: list[dict] = []
        self.tn_cells = 0
        self.tn_unlinked: list[str] = []
        self.tn_links = 0
        self._in_tn = 0
        self._in_a = 0
        self.tables: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if "id" in a:
            self.ids.add(a["id"])
        if tag in ("a", "area") and (a.get("href") or "").startswith("#"):
            self.links.append(a["href"][1:])
        if tag == "img":
            self.imgs.append(a)
        if tag == "table":
            self.tables.update((a.get("class") or "").split())
        if tag == "td" and "tn" in (a.get("class") or "").split():
            self._in_tn, self.tn_cells = 1, self.tn_cells + 1
        if tag == "a" and self._in_tn:
            self._in_a = 1
            self.tn_links += 1

    def handle_endtag(self, tag):
        if tag == "a":
            self._in_a = 0
        if tag == "td":
            self._in_tn = 0

    def handle_data(self, data):
        if self._in_tn and not self._in_a and data.strip(" ,\n"):
            self.tn_unlinked.append(data)


def index_html(text: str) -> PageIndex:
    p = PageIndex()
    p.feed(text)
    return p


@pytest.fixture
def report_dir(run_a: Path, run_b: Path, tmp_path: Path) -> Path:
    return write_report([run_a, run_b], tmp_path / "out", n_resamples=500)


def test_files_and_default_location(run_a: Path):
    out = write_report([run_a], n_resamples=200)
    assert out == run_a / "report"
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [
            "leaderboard.md",
            "leaderboard.csv",
            "results.jsonl",
            "summary.json",
            "report.html",
            ".inputs.json",
        ]
    )


def test_csv_and_markdown_figures(report_dir: Path):
    rows = {r["configuration"]: r for r in csv.DictReader((report_dir / "leaderboard.csv").open())}
    assert list(rows) == ["beta@m2", "alpha@m1", "gamma"]
    alpha = rows["alpha@m1"]
    assert float(alpha["micro_pct"]) == pytest.approx(100 * 65 / 220, abs=1e-4)
    assert float(alpha["macro_pct"]) == pytest.approx(34.375)
    assert alpha["missing_tasks"] == T4 and alpha["tasks_missing"] == "1"
    assert alpha["trials_judge_error"] == "1" and alpha["rubric_pass_rate_pct"] != ""
    assert float(rows["gamma"]["micro_pct"]) == pytest.approx(100 * 40 / 220, abs=1e-4)
    assert rows["gamma"]["missing_tasks"] == f"{T3};{T4}"
    assert float(rows["beta@m2"]["wall_seconds_mean"]) == 240.0
    assert (
        float(rows["alpha@m1"]["micro_pct_comp_math"]) == 87.5
        and rows["alpha@m1"]["micro_pct_mgmt"] == ""
    )
    assert float(rows["beta@m2"]["pass_hat_2_pct"]) == pytest.approx(200 / 3, abs=1e-4)
    md = (report_dir / "leaderboard.md").read_text()
    assert "| 2 | alpha@m1 | run-a | 29.5* |" in md  # provisional: a judge_error trial
    assert f"* alpha@m1: {T4} (no trial)" in md
    assert "micro (Σ points / Σ maxima; missing tasks count 0)" in md
    assert "macro (mean of task scores; missing tasks count 0)" in md
    assert "<script>" not in md


def test_results_jsonl_one_row_per_trial(report_dir: Path):
    rows = [json.loads(line) for line in (report_dir / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 6 + 8 + 4
    by_id = {r["trial_id"]: r for r in rows}
    je = by_id[f"{T3}/alpha@m1/epoch-2"]
    assert je["state"] == "judge_error" and je["score"] is None and je["criteria_judge_error"] == 1
    assert je["task_score"] == 0.0 and je["judge_key"] == "checks"
    ok = by_id[f"{T1}/alpha@m1/epoch-1"]
    assert ok["score"] == 0.75 and ok["points"] == 30.0 and ok["max_points"] == 40.0
    assert ok["chain_breaks"] == {"2": "criterion:1"} and ok["agent_cost_usd"] == 0.1
    assert (
        ok["judge_cost_usd"] == 0.01
        and ok["trajectory_events"] == 10
        and ok["task_digest_matches"] is True
    )
    assert ok["paper_category"] == "Comp. Math." and ok["soc_major_code"] == "15-0000"
    nd = by_id[f"{T2}/gamma@-/epoch-1"]
    assert nd["state"] == "no_deliverable" and nd["score"] == 0.0 and nd["rubric_pass_rate"] == 0.0
    summary = json.loads((report_dir / "summary.json").read_text())
    assert summary["configurations"][1]["overall"]["micro"]["estimate"] == pytest.approx(65 / 220)


def test_html_escapes_deliverable_text_and_links_resolve(report_dir: Path):
    html = (report_dir / "report.html").read_text()
    page = index_html(html)
    assert "script" not in page.tags and "pwned" not in page.ids
    assert "&lt;script&gt;alert(" in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "&lt;/div&gt;&lt;/td&gt;&lt;/table&gt;&lt;h1" in html
    assert "default-src 'none'" in html  # CSP: no network, no scripts
    assert "http://" not in html and "https://" not in html
    assert {"leaderboard", "task-matrix", "per-task"} <= page.tables
    assert len([i for i in page.imgs if i.get("src", "").startswith("data:image/png;base64,")]) >= 3
    missing = [link for link in page.links if link not in page.ids]
    assert not missing, missing[:5]
    # Every number shown for a task is a link to its drill-down.
    assert page.tn_cells > 0 and not page.tn_unlinked, page.tn_unlinked[:5]
    # 3 configurations x 4 tasks in the matrix + 6 linked figures per row of the per-task table
    assert page.tn_cells == 12 + 12 * 6
    for c, t in (("c2", T1), ("c1", T4), ("c3", T3)):
        assert f"{c}-{t.replace('/', '.')}" in page.ids
    assert "criterion 3.2 of main/biostatisticians/task1" in html  # criterion text from the dataset
    assert "first failed link" in html


def test_heatmap_areas_point_at_drilldowns(report_dir: Path):
    html = (report_dir / "report.html").read_text()
    page = index_html(html)
    areas = [link for link in page.links if link.startswith("c") and "-main." in link]
    assert {"c2-main.management_analysts.task1", "c1-main.lawyers.task1"} <= set(areas)


def _graded_at(run: Path, key: str, when: float) -> None:
    # what `jobbench grade` leaves: grades/<key>/ and grades/<key>.usage.json, written at its end
    usage = run / "grades" / f"{key}.usage.json"
    usage.write_text("{}")
    for p in (run / "grades" / key, usage):
        os.utime(p, (when, when))


def test_judge_key_choice(run_a: Path, run_b: Path):
    shutil.copytree(run_a / "grades" / "checks", run_a / "grades" / "llm.other")
    _graded_at(run_a, "checks", 1_000_000)
    _graded_at(run_a, "llm.other", 2_000_000)  # `jobbench grade --judge-model` after the run
    data = build_report([run_a], n_resamples=100)
    assert data.judge_key == "llm.other"
    note = "judge key llm.other chosen (graded last); also graded: checks; choose with --judge-key"
    assert any(w.startswith(note) for w in data.warnings)
    _graded_at(run_a, "checks", 3_000_000)  # regraded with checks: now the latest
    assert build_report([run_a], n_resamples=100).judge_key == "checks"
    data = build_report([run_a], judge_key="llm.other", n_resamples=100)
    assert data.judge_key == "llm.other"
    assert not any("chosen (graded last)" in w for w in data.warnings)  # asked for: no note
    assert data.config("alpha@m1").overall.micro.estimate == pytest.approx(65 / 220)
    with pytest.raises(ReportInputError, match="judge key 'nope' has no grades"):
        build_report([run_a], judge_key="nope")
    # several keys, none graded in every run: refused, every run's keys listed
    shutil.move(run_a / "grades" / "checks", run_a / "grades" / "only.a")
    (run_a / "grades" / "checks.usage.json").unlink()
    shutil.move(run_b / "grades" / "checks", run_b / "grades" / "only.b")
    with pytest.raises(
        ReportInputError,
        match=r"no judge key is graded in every run; choose one with --judge-key KEY "
        r"\(.*run-a: llm\.other, only\.a; .*run-b: only\.b\)",
    ):
        build_report([run_a, run_b])


def test_cli_report_after_a_second_judge_names_the_key_it_chose(run_a: Path, tmp_path: Path):
    shutil.copytree(run_a / "grades" / "checks", run_a / "grades" / "m1.rubric.llm")
    _graded_at(run_a, "checks", 1_000_000)
    _graded_at(run_a, "m1.rubric.llm", 2_000_000)
    out = tmp_path / "rep"
    res = CliRunner().invoke(app, ["report", str(run_a), "-o", str(out), "--resamples", "100"])
    assert res.exit_code == 0, res.output
    assert "judge key m1.rubric.llm chosen (graded last); also graded: checks" in res.stderr
    assert json.loads((out / "summary.json").read_text())["judge_key"] == "m1.rubric.llm"


def test_no_grades_means_ungraded_not_zero(run_a: Path):
    shutil.rmtree(run_a / "grades")
    data = build_report([run_a], n_resamples=100)
    alpha = data.config("alpha@m1")
    assert data.judge_key is None
    assert alpha.overall.tasks_scored == 0 and alpha.overall.trials_by_state == {"ungraded": 6}
    assert alpha.overall.max_points == 220  # maxima come from the dataset
    assert any("no grades found" in w for w in data.warnings)


def test_bad_records_are_named_with_file_and_field(run_a: Path):
    path = run_a / "trials" / T1 / "alpha@m1" / "epoch-1" / "trial.json"
    rec = json.loads(path.read_text())
    rec["epoch"] = "first"
    path.write_text(json.dumps(rec))
    grade = run_a / "grades" / "checks" / T2 / "beta@m2" / "epoch-1.json"
    grade.write_text("{not json")
    with pytest.raises(ReportInputError) as err:
        build_report([run_a])
    msg = str(err.value)
    assert "alpha@m1/epoch-1/trial.json: field epoch:" in msg
    assert "beta@m2/epoch-1.json: field (top level)" in msg or "beta@m2/epoch-1.json: field" in msg
    (run_a / "lock.json").unlink()
    with pytest.raises(ReportInputError, match="lock.json: missing"):
        build_report([run_a])


def test_cli_report_and_compare(run_a: Path, run_b: Path, tmp_path: Path):
    runner = CliRunner()
    res = runner.invoke(
        app, ["report", str(run_a), str(run_b), "--out", str(tmp_path / "o"), "--resamples", "200"]
    )
    assert res.exit_code == 0, res.output
    assert "29.5" in res.output and (tmp_path / "o" / "report.html").is_file()
    res = runner.invoke(app, ["compare", str(run_a), str(run_a), "--json", "--resamples", "300"])
    assert res.exit_code == 0, res.output
    cmp = json.loads(res.output)
    assert (cmp["a"], cmp["b"]) == ("alpha@m1", "beta@m2")  # lock.json order
    assert cmp["micro"]["difference"] == pytest.approx(-70 / 220)
    assert cmp["ratios"]["wall_seconds"] == pytest.approx(100 / 240)
    res = runner.invoke(
        app, ["compare", str(run_a), str(run_b), "--a", "beta@m2", "--json", "--resamples", "300"]
    )
    assert res.exit_code == 0, res.output
    cmp = json.loads(res.output)
    assert cmp["micro"]["difference"] == pytest.approx(95 / 220) and cmp["missing_in_b"] == [T3, T4]
    res = runner.invoke(app, ["compare", str(run_a), str(run_b)])
    assert res.exit_code == 2
    assert "choose with --a/--b" in res.output
    res = runner.invoke(
        app, ["compare", str(run_a), str(run_b), "--a", "beta@m2", "--resamples", "300"]
    )
    assert res.exit_code == 0 and "+43.2" in res.output  # 95/220 in percentage points


def test_same_configuration_in_two_runs_is_kept_apart(run_a: Path):
    twin = run_a.parent / "run-a-again"
    shutil.copytree(run_a, twin)
    lock = json.loads((twin / "lock.json").read_text())
    del lock["tasks"][T4]  # this run covers fewer tasks
    (twin / "lock.json").write_text(json.dumps(lock))
    for d in (twin / "trials" / T4, twin / "grades" / "checks" / T4):
        shutil.rmtree(d)
    out = write_report([run_a, twin], n_resamples=300)
    assert out == run_a.parent / "report-run-a+run-a-again"
    data = build_report([run_a, twin], n_resamples=300)
    labels = {c.label for c in data.configs}
    assert {
        "alpha@m1 [run-a]",
        "alpha@m1 [run-a-again]",
        "beta@m2 [run-a]",
        "beta@m2 [run-a-again]",
    } == labels
    a1, a2 = data.config("alpha@m1 [run-a]"), data.config("alpha@m1 [run-a-again]")
    assert a1.overall.micro.estimate == pytest.approx(65 / 220)
    assert a2.overall.micro.estimate == pytest.approx(65 / 200) and a2.overall.tasks == 3
    assert any("different task sets" in w for w in data.warnings)
    same = next(c for c in data.comparisons if {c.a, c.b} == {a1.label, a2.label})
    assert same.tasks == [T1, T2, T3] and same.only_in_a + same.only_in_b == [T4]
    assert same.macro.difference == 0.0 and same.macro.p_value == 1.0
