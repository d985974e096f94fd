"""Report fixes: graded empty outputs stay ``no_deliverable``; incomplete grades are flagged
as provisional; prompt-injection flags, refused deliverables and unsandboxed trials are
warned about; invalid tasks count as missing."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import importlib.util
import pytest

from jobbench.report import build_report, write_report
from jobbench.report._console import leaderboard_table

_spec = importlib.util.spec_from_file_location("report_fixtures", Path(__file__).with_name("conftest.py"))
fx = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fx)
T1, T2, T3, T4 = fx.T1, fx.T2, fx.T3, fx.T4
P, F, E = fx.P, fx.F, fx.E
write_lock, write_trial, write_grade = fx.write_lock, fx.write_trial, fx.write_grade


def _trial_states(md: str) -> dict[str, dict[str, str]]:
    """The "Trial states" table of leaderboard.md as {configuration: {state: count}}."""
    section = md.split("## Trial states", 1)[1].split("##", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| ")]
    header = [c.strip().split(":")[0] for c in lines[0].strip("|").split("|")]
    out = {}
    for line in lines[1:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        out[cells[0]] = dict(zip(header[1:], cells[1:]))
    return out


def test_graded_empty_output_stays_no_deliverable(tmp_path: Path, dataset: Path):
    """A no_deliverable trial that the judge graded anyway is reported as no_deliverable
    (scored 0) everywhere, not as complete."""
    run = tmp_path / "runs" / "nd"
    write_lock(run, dataset, [("null", "-")], epochs=1)
    tid = write_trial(run, T2, "null", "-", 1, status="no_deliverable", deliverables=False)
    write_grade(run, "checks", tid, [[F, F], [F, F]])
    # a rubric that passes on nothing (defective rubric) must not give the empty output points
    tid4 = write_trial(run, T4, "null", "-", 1, status="no_deliverable", deliverables=False)
    write_grade(run, "checks", tid4, [[P, P]])
    out = write_report([run], tmp_path / "out", n_resamples=100)
    data = build_report([run], n_resamples=100)
    c = data.config("null")
    assert c.overall.trials_by_state == {"no_deliverable": 2}
    assert [(t.trial_id, t.state, t.score, t.scored) for t in c.trials] == [
        (tid, "no_deliverable", 0.0, True), (tid4, "no_deliverable", 0.0, True)]
    assert c.task(T2).score == 0.0 and c.task(T4).score == 0.0 and not c.task(T2).missing
    md = (out / "leaderboard.md").read_text()
    cells = _trial_states(md)["null"]
    assert cells["complete"] == "0" and cells["no_deliverable"] == "2"
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert {r["trial_id"]: (r["state"], r["score"], r["grade_status"]) for r in rows} == {
        tid: ("no_deliverable", 0.0, "complete"), tid4: ("no_deliverable", 0.0, "complete")}
    lb = next(csv.DictReader((out / "leaderboard.csv").open()))
    assert (lb["trials_complete"], lb["trials_no_deliverable"]) == ("0", "2")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["configurations"][0]["overall"]["trials_by_state"] == {"no_deliverable": 2}
    assert c.overall.micro.estimate == 0.0
