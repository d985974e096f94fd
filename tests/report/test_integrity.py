"""Report fixes: graded empty outputs stay ``no_deliverable``; incomplete grades are flagged
as provisional; prompt-injection flags, refused deliverables and unsandboxed trials are
warned about; invalid tasks count as missing."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import pytest

from jobbench.report import ReportInputError, build_report, write_report
from jobbench.report._console import leaderboard_table

_spec = importlib.util.spec_from_file_location(
    "report_fixtures", Path(__file__).with_name("conftest.py")
)
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
        (tid, "no_deliverable", 0.0, True),
        (tid4, "no_deliverable", 0.0, True),
    ]
    assert c.task(T2).score == 0.0 and c.task(T4).score == 0.0 and not c.task(T2).missing
    md = (out / "leaderboard.md").read_text()
    cells = _trial_states(md)["null"]
    assert cells["complete"] == "0" and cells["no_deliverable"] == "2"
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert {r["trial_id"]: (r["state"], r["score"], r["grade_status"]) for r in rows} == {
        tid: ("no_deliverable", 0.0, "complete"),
        tid4: ("no_deliverable", 0.0, "complete"),
    }
    lb = next(csv.DictReader((out / "leaderboard.csv").open()))
    assert (lb["trials_complete"], lb["trials_no_deliverable"]) == ("0", "2")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["configurations"][0]["overall"]["trials_by_state"] == {"no_deliverable": 2}
    assert c.overall.micro.estimate == 0.0


def _set_record(run: Path, trial_id: str, **fields) -> None:
    p = run / "trials" / trial_id / "trial.json"
    rec = json.loads(p.read_text())
    rec.update(fields)
    p.write_text(json.dumps(rec))


def _set_grade(run: Path, trial_id: str, **fields) -> None:
    p = run / "grades" / "checks" / f"{trial_id}.json"
    g = json.loads(p.read_text())
    g.update(fields)
    p.write_text(json.dumps(g))


def test_flags_refused_files_and_missing_sandbox_are_warned_everywhere(
    tmp_path: Path, dataset: Path
):
    run = tmp_path / "runs" / "sec"
    write_lock(run, dataset, [("alpha", "m1")], epochs=1)
    ids = {}
    for task, verdicts in (
        (T1, [[P, P]] * 3),
        (T2, [[P, P]] * 2),
        (T3, [[P, P]] * 2),
        (T4, [[P, P]]),
    ):
        ids[task] = write_trial(run, task, "alpha", "m1", 1)
        write_grade(run, "checks", ids[task], verdicts)
        _set_record(run, ids[task], sandbox="bwrap")
    _set_grade(run, ids[T1], flags=["prompt_injection:out.txt"])
    _set_record(
        run,
        ids[T2],
        refused=[
            "link.txt: symlink refused (points to /etc/passwd)",
            "big.bin: 200000000 bytes exceeds the per-file limit of 104857600",
        ],
    )
    _set_record(run, ids[T3], sandbox="none")
    out = write_report([run], tmp_path / "out", n_resamples=100)
    data = build_report([run], n_resamples=100)

    warnings = "\n".join(data.warnings)
    assert (
        f"alpha@m1: 1 trial(s) flagged by the judge for possible prompt injection: {ids[T1]} "
        "(out.txt): a "
        "deliverable may be trying to steer the judge"
    ) in warnings
    assert (
        "alpha@m1: 1 trial(s) with refused deliverable files (those files were not graded; the "
        f"rest of each trial was): {ids[T2]} "
        "(link.txt: symlink refused (points to /etc/passwd); big.bin: 200000000 bytes"
    ) in warnings
    assert "sec: 1 of 4 trial(s) ran WITHOUT a sandbox" in warnings and ids[T3] in warnings
    assert "sec: mixes sandboxed (bwrap: 3) and unsandboxed (none: 1) trials" in warnings

    rows = {
        r["trial_id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())
    }
    assert rows[ids[T1]]["flags"] == ["prompt_injection:out.txt"] and rows[ids[T2]]["flags"] == []
    assert (
        rows[ids[T2]]["refused"][0].startswith("link.txt: symlink refused")
        and rows[ids[T1]]["refused"] == []
    )
    assert {t: rows[i]["sandbox"] for t, i in ids.items()} == {
        T1: "bwrap",
        T2: "bwrap",
        T3: "none",
        T4: "bwrap",
    }

    summary = json.loads((out / "summary.json").read_text())
    assert summary["configurations"][0]["integrity"] == {
        "trials_prompt_injection": 1,
        "trials_with_unreadable_files": 0,
        "trials_with_refused_files": 1,
        "trials_other_flags": 0,
        "trials_without_sandbox": 1,
        "sandboxes": {"bwrap": 3, "none": 1},
    }
    assert any("flagged by the judge" in w for w in summary["warnings"])
    assert any("WITHOUT a sandbox" in w for w in summary["warnings"])
    lb = next(csv.DictReader((out / "leaderboard.csv").open()))
    assert (
        lb["trials_prompt_injection"],
        lb["trials_with_unreadable_files"],
        lb["trials_with_refused_files"],
        lb["trials_other_flags"],
        lb["trials_without_sandbox"],
    ) == ("1", "0", "1", "0", "1")

    md = (out / "leaderboard.md").read_text()
    warn = md.split("## Warnings", 1)[1]
    assert (
        "flagged by the judge" in warn
        and "refused deliverable files" in warn
        and "WITHOUT a sandbox" in warn
    )
    assert "| alpha@m1 | 1 | 0 | 1 | 0 | 1 | bwrap: 3, none: 1 |" in md

    html = (out / "report.html").read_text()
    box = html.split('id="warnings"', 1)[1].split("</div>", 1)[0]
    assert (
        "flagged by the judge" in box
        and "refused deliverable files" in box
        and "WITHOUT a sandbox" in box
    )
    assert "sandbox <b>none</b>" in html and "link.txt: symlink refused" in html


def test_a_clean_run_has_no_integrity_warning(tmp_path: Path, dataset: Path):
    run = tmp_path / "runs" / "clean"
    write_lock(run, dataset, [("alpha", "m1")], epochs=1)
    tid = write_trial(run, T1, "alpha", "m1", 1)
    write_grade(run, "checks", tid, [[P, P]] * 3)
    _set_record(run, tid, sandbox="bwrap")
    data = build_report([run], n_resamples=100)
    text = "\n".join(data.warnings)
    assert "flagged" not in text and "refused" not in text and "sandbox" not in text
    assert "provisional" not in text and not data.config("alpha@m1").provisional
    assert "*" not in leaderboard_table(data).columns[2]._cells[0].split("\n")[0]


def test_invalid_tasks_of_the_lock_count_as_missing(tmp_path: Path, dataset: Path):
    """lock.json ``invalid_tasks`` (a run made with --skip-invalid): the task is missing,
    counts 0 of its recorded maximum, and is named with its problem; a trial it had from an
    earlier valid version is left out."""
    run = tmp_path / "runs" / "inv"
    write_lock(run, dataset, [("alpha", "m1")], epochs=1)
    for task, verdicts in ((T1, [[P, P]] * 3), (T2, [[P, P]] * 2), (T3, [[P, P]] * 2)):
        write_grade(run, "checks", write_trial(run, task, "alpha", "m1", 1), verdicts)
    old = write_trial(run, T4, "alpha", "m1", 1)  # ran while T4 was still valid
    write_grade(run, "checks", old, [[P, P]])
    lock = json.loads((run / "lock.json").read_text())
    del lock["tasks"][T4]
    problem = f"{T4}/RUBRICS.json: rubrics[0].weight: must be a finite number ≥ 0, got true"
    lock["invalid_tasks"] = {T4: {"problems": [problem], "max_points": 20.0}}
    (run / "lock.json").write_text(json.dumps(lock))
    data = build_report([run], n_resamples=100)
    c = data.config("alpha@m1")
    t4 = c.task(T4)
    assert t4.missing and t4.trials == 0 and t4.max_points == 20.0
    assert t4.missing_reason == f"invalid task, not run: {problem}"
    assert c.overall.micro.estimate == pytest.approx(200 / 220)  # T4 counts 0 of 20 points
    assert c.overall.macro.estimate == pytest.approx(3 / 4)
    assert c.overall.missing_tasks == [T4] and c.overall.tasks == 4
    text = "\n".join(data.warnings)
    assert (
        "inv: 1 task(s) were invalid and not run (--skip-invalid); each counts as missing (0)"
        in text
    )
    assert (
        "inv: 1 trial(s) of task(s) now listed as invalid in lock.json are left out" in text
        and old in text
    )
    assert "not in dataset" not in text

    lock["invalid_tasks"] = {T4: {"problems": "oops", "max_points": True}}
    (run / "lock.json").write_text(json.dumps(lock))
    with pytest.raises(ReportInputError, match=f"field invalid_tasks.{T4}: expected"):
        build_report([run], n_resamples=100)


def test_grade_flags_are_classified_by_prefix(tmp_path: Path, dataset: Path):
    """An unreadable deliverable (``extraction_error:``) is not reported as prompt injection;
    a file the extractor refused (kind ``refused`` in the grade) counts as refused; an
    unknown flag is listed as such."""
    run = tmp_path / "runs" / "flags"
    write_lock(run, dataset, [("alpha", "m1")], epochs=1)
    ids = {}
    for task, verdicts in (
        (T1, [[P, P]] * 3),
        (T2, [[P, P]] * 2),
        (T3, [[P, P]] * 2),
        (T4, [[P, P]]),
    ):
        ids[task] = write_trial(run, task, "alpha", "m1", 1)
        write_grade(run, "checks", ids[task], verdicts)
        _set_record(run, ids[task], sandbox="bwrap")
    # what the judge writes for `echo junk > deliverables/broken.xlsx` and a symlink link.txt
    _set_grade(
        run,
        ids[T1],
        flags=["extraction_error:broken.xlsx"],
        deliverables=[
            {"path": "broken.xlsx", "sha256": "0" * 64, "size": 5, "kind": "xlsx"},
            {"path": "out.txt", "sha256": "0" * 64, "size": 7, "kind": "text"},
        ],
    )
    _set_grade(
        run,
        ids[T2],
        flags=["extraction_error:link.txt"],
        deliverables=[{"path": "link.txt", "sha256": "", "size": 0, "kind": "refused"}],
    )
    _set_grade(
        run,
        ids[T3],
        flags=["prompt_injection:memo.txt", "extraction_error:memo.txt"],
        deliverables=[{"path": "memo.txt", "sha256": "0" * 64, "size": 9, "kind": "text"}],
    )
    _set_grade(run, ids[T4], flags=["odd_flag:x", "conflicting_values:0/1", "over_cap:files:61"])
    out = write_report([run], tmp_path / "out", n_resamples=100)
    data = build_report([run], n_resamples=100)
    warnings = data.warnings
    inj = [w for w in warnings if "prompt injection" in w]
    assert inj == [
        f"alpha@m1: 1 trial(s) flagged by the judge for possible prompt injection: {ids[T3]} "
        "(memo.txt): "
        "a deliverable may be trying to steer the judge; check these grades by hand"
    ]
    assert (
        "alpha@m1: 2 trial(s) with deliverables the extractor could not read (corrupt, "
        "mislabelled or "
        f"unsupported; graded on what could be read): {ids[T1]} (broken.xlsx); {ids[T3]} (memo.txt)"
    ) in warnings
    assert (
        "alpha@m1: 1 trial(s) with refused deliverable files (those files were not graded; the "
        "rest of each trial was): "
        f"{ids[T2]} (link.txt: refused when graded)"
    ) in warnings
    assert f"alpha@m1: 1 trial(s) with other judge flags: {ids[T4]} (odd_flag:x)" in warnings
    assert (
        f"alpha@m1: 1 trial(s) flagged for enumeration or volume (a checked quantity stated with "
        "disagreeing values, or deliverables past the documented caps; the checks failed those "
        "quantities): "
        f"{ids[T4]} (conflicting_values:0/1; over_cap:files:61)"
    ) in warnings
    expected = {
        "trials_prompt_injection": 1,
        "trials_with_unreadable_files": 2,
        "trials_with_refused_files": 1,
        "trials_other_flags": 1,
        "trials_without_sandbox": 0,
        "sandboxes": {"bwrap": 4},
    }
    assert data.config("alpha@m1").integrity == expected
    summary = json.loads((out / "summary.json").read_text())
    assert summary["configurations"][0]["integrity"] == expected
    lb = next(csv.DictReader((out / "leaderboard.csv").open()))
    assert [lb[k] for k in expected if k != "sandboxes"] == ["1", "2", "1", "1", "0"]
    md = (out / "leaderboard.md").read_text()
    integrity = md.split("## Integrity", 1)[1].split("##", 1)[0]
    assert "| trials with deliverables the extractor could not read |" in integrity
    assert "| alpha@m1 | 1 | 2 | 1 | 1 | 0 | bwrap: 4 |" in integrity
    html = (out / "report.html").read_text()
    table = html.split('<table class="integrity">', 1)[1].split("</table>", 1)[0]
    assert '<th class="n">trials with deliverables the extractor could not read</th>' in table
    assert (
        '<td>alpha@m1</td><td class="n">1</td><td class="n">2</td><td class="n">1</td><td '
        'class="n">1</td>'
        '<td class="n">0</td><td>bwrap: 4</td>'
    ) in table
    # the enumeration/volume warning reaches every output
    assert "flagged for enumeration or volume" in md and "conflicting_values:0/1" in md
    assert "flagged for enumeration or volume" in html
    assert any("flagged for enumeration or volume" in w for w in summary["warnings"])
