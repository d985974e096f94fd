"""Report safety: Markdown escaping of dataset-derived text, CSV formula guard, report
folders that cannot be written, and `jobbench compare` on two runs of several
configurations."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import pytest

from jobbench.report import build_report, write_report
from jobbench.report._tables import leaderboard_markdown

_spec = importlib.util.spec_from_file_location(
    "report_fixtures", Path(__file__).with_name("conftest.py")
)
fx = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fx)
T1, T2, T3, T4 = fx.T1, fx.T2, fx.T3, fx.T4
P, F = fx.P, fx.F
write_lock, write_trial, write_grade = fx.write_lock, fx.write_trial, fx.write_grade

HOSTILE_OCC = "<script>alert(1)<:script>"
HOSTILE_TASK = f"main/{HOSTILE_OCC}/task1"
ESCAPED_OCC = "&lt;script&gt;alert(1)&lt;:script&gt;"


def _hostile_run(root: Path, dataset: Path) -> Path:
    """A run made with --skip-invalid whose invalid task sits in a hostile occupation folder."""
    run = root / "runs" / "r&[x]"
    write_lock(run, dataset, [("alpha", "m1")], epochs=1)
    for task, verdicts in (
        (T1, [[P, P]] * 3),
        (T2, [[P, P]] * 2),
        (T3, [[P, P]] * 2),
        (T4, [[P, F]]),
    ):
        write_grade(run, "checks", write_trial(run, task, "alpha", "m1", 1), verdicts)
    lock = json.loads((run / "lock.json").read_text())
    lock["invalid_tasks"] = {
        HOSTILE_TASK: {
            "problems": [f"{HOSTILE_TASK}/RUBRICS.json: missing <b>|x|</b>"],
            "max_points": 10.0,
        }
    }
    (run / "lock.json").write_text(json.dumps(lock))
    return run


def test_markdown_escapes_every_dataset_string_the_same_way(tmp_path: Path, dataset: Path):
    run = _hostile_run(tmp_path, dataset)
    md = leaderboard_markdown(build_report([run], n_resamples=100))
    assert "<" not in md and ">" not in md  # no raw HTML anywhere
    hits = [line for line in md.splitlines() if "script" in line]
    # the comparability deviation, the missing-tasks line and the invalid-task warning all
    # name the task, escaped alike
    assert len(hits) == 3 and all(f"main/{ESCAPED_OCC}/task1" in line for line in hits)
    assert hits[0].startswith("  * missing tasks: 1 without a scored trial")
    assert hits[1].startswith(
        f"* alpha@m1: main/{ESCAPED_OCC}/task1 (invalid task, not run: "
        f"main/{ESCAPED_OCC}/task1/RUBRICS.json: missing "
        "&lt;b&gt;\\|x\\|&lt;/b&gt;)"
    )
    assert "Runs: r&amp;\\[x\\]. Judge key: checks." in md
    assert "| 1 | alpha@m1 | r&amp;\\[x\\] |" in md  # table cells use the same escape


def test_csv_guards_only_formulas(tmp_path: Path, dataset: Path):
    from jobbench.report._tables import _csv_safe

    assert [_csv_safe(v) for v in ("-", "-0.5", "+3", "1e-3", "-.5", "plain", 7, -0.5, None)] == [
        "-",
        "-0.5",
        "+3",
        "1e-3",
        "-.5",
        "plain",
        7,
        -0.5,
        None,
    ]
    assert [
        _csv_safe(v)
        for v in ("=1+1", "+1+1", "-1+2", "@SUM(A1)", "\t=1", "\r-1", "--", "-x", "-1-")
    ] == ["'=1+1", "'+1+1", "'-1+2", "'@SUM(A1)", "'\t=1", "'\r-1", "'--", "'-x", "'-1-"]
    run = tmp_path / "runs" / "csv"
    write_lock(run, dataset, [("null", "-"), ("=cmd", "=1+1")], epochs=1)
    for agent, model in (("null", "-"), ("=cmd", "=1+1")):
        write_grade(run, "checks", write_trial(run, T1, agent, model, 1), [[P, P]] * 3)
    out = write_report([run], tmp_path / "out", n_resamples=100)
    rows = {r["agent"]: r for r in csv.DictReader((out / "leaderboard.csv").open())}
    assert rows["null"]["model"] == "-" and rows["null"]["configuration"] == "null"
    assert rows["'=cmd"]["model"] == "'=1+1"


def _cli():
    from typer.testing import CliRunner

    from jobbench.cli import app

    return CliRunner(), app


def test_report_into_a_path_that_is_not_a_directory_is_one_clear_error(run_a: Path, tmp_path: Path):
    runner, app = _cli()
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a directory\n")
    res = runner.invoke(
        app, ["report", str(run_a), "--out", str(blocker / "report"), "--resamples", "50"]
    )
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and isinstance(res.exception, SystemExit)
    assert "cannot write the report to" in res.output and str(
        blocker / "report"
    ) in res.output.replace("\n", "")
    assert blocker.read_text() == "a file, not a directory\n"


def test_read_only_report_folder_is_one_clear_error_and_keeps_the_old_report(
    run_a: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import errno

    import jobbench.report._write as w

    runner, app = _cli()
    out = tmp_path / "rep"
    res = runner.invoke(app, ["report", str(run_a), "--out", str(out), "--resamples", "50"])
    assert res.exit_code == 0, res.output
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}

    def read_only(path, text):
        path = Path(path)
        raise OSError(
            errno.EROFS, "Read-only file system", str(path.parent / f".{path.name}.abc.tmp")
        )

    monkeypatch.setattr(w, "atomic_write_text", read_only)
    # other options, so the report must be rewritten (unchanged inputs are not rewritten)
    res = runner.invoke(app, ["report", str(run_a), "--out", str(out), "--resamples", "60"])
    assert res.exit_code == 2, res.output
    assert isinstance(res.exception, SystemExit) and "Traceback" not in res.output
    text = " ".join(res.output.split())
    assert text.startswith(
        f"error: cannot write the report to {out}: Read-only file system ({out}/.leaderboard.md"
    )
    assert len(res.output.strip().splitlines()) <= 3  # one message (wrapped), no traceback
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    # the old report is kept; its inputs stamp is gone, so the next report rebuilds it
    assert after == {k: v for k, v in before.items() if k != ".inputs.json"}


def test_inline_report_warns_when_old_drilldown_pages_cannot_be_removed(
    run_a: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import jobbench.report._write as w

    runner, app = _cli()
    out = tmp_path / "rep"
    res = runner.invoke(
        app, ["report", str(run_a), "--out", str(out), "--resamples", "50", "--drilldowns", "pages"]
    )
    assert res.exit_code == 0, res.output
    pages = out / "drilldowns"
    assert pages.is_dir() and "(drill-downs:" in res.output

    def stuck(path, onerror=None, onexc=None, **kw):
        err = PermissionError(13, "Permission denied", str(Path(path) / "x.html"))
        if onexc is not None:
            onexc(Path.unlink, str(Path(path) / "x.html"), err)
        else:
            onerror(Path.unlink, str(Path(path) / "x.html"), (PermissionError, err, None))

    monkeypatch.setattr(w.shutil, "rmtree", stuck)
    res = runner.invoke(
        app,
        ["report", str(run_a), "--out", str(out), "--resamples", "50", "--drilldowns", "inline"],
    )
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert pages.is_dir()
    assert (
        f"warning: the drill-down pages of an earlier report in {pages} could not be removed "
        f"({pages}/x.html: Permission denied)"
    ) in text
    assert "(drill-downs:" not in text  # the layout written is inline: no claim about pages
    assert f"report: {out / 'report.html'}" in text
    monkeypatch.undo()
    res = runner.invoke(
        app,
        ["report", str(run_a), "--out", str(out), "--resamples", "50", "--drilldowns", "inline"],
    )
    assert res.exit_code == 0 and not pages.exists() and "could not be removed" not in res.output


def _main_job_run(root: Path, dataset: Path, name: str, oracle: dict, null: dict) -> Path:
    """A run as `jobbench run` makes it: configurations oracle and null (model ``-``)."""
    run = root / name
    write_lock(run, dataset, [("oracle", "-"), ("null", "-")], epochs=1)
    for agent, verdicts in (("oracle", oracle), ("null", null)):
        for task, vs in verdicts.items():
            write_grade(run, "checks", write_trial(run, task, agent, "-", 1), vs)
    return run


def test_compare_two_main_job_runs_pairs_matching_configurations(tmp_path: Path, dataset: Path):
    all_fail = {T1: [[F, F]] * 3, T2: [[F, F]] * 2, T3: [[F, F]] * 2, T4: [[F, F]]}
    all_pass = {T1: [[P, P]] * 3, T2: [[P, P]] * 2, T3: [[P, P]] * 2, T4: [[P, P]]}
    ra = _main_job_run(tmp_path / "runs", dataset, "a", all_pass, all_fail)
    # run b: oracle loses T2's second rubric (30 of 60 points); null passes T4 (20 points)
    rb = _main_job_run(
        tmp_path / "runs",
        dataset,
        "b",
        {**all_pass, T2: [[P, P], [F, P]]},
        {**all_fail, T4: [[P, P]]},
    )
    runner, app = _cli()
    res = runner.invoke(app, ["compare", str(ra), str(rb), "--json", "--resamples", "200"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    assert [(c["a"], c["b"]) for c in got] == [
        ("oracle [a]", "oracle [b]"),
        ("null [a]", "null [b]"),
    ]
    assert got[0]["micro"]["difference"] == pytest.approx(30 / 220)
    assert got[0]["macro"]["difference"] == pytest.approx(0.5 / 4)
    assert got[1]["micro"]["difference"] == pytest.approx(-20 / 220)
    assert (got[0]["macro"]["wins"], got[1]["macro"]["losses"]) == (1, 1)
    res = runner.invoke(
        app, ["compare", str(ra), str(rb), "--resamples", "200"], env={"COLUMNS": "200"}
    )
    assert res.exit_code == 0, res.output
    assert "each is compared with its namesake" in res.output
    assert (
        "A = oracle [a]  vs  B = oracle [b]" in res.output
        and "A = null [a]  vs  B = null [b]" in res.output
    )
    assert "+13.6" in res.output and "-9.1" in res.output  # 30/220 and -20/220 in percentage points
    res = runner.invoke(
        app,
        [
            "compare",
            str(ra),
            str(rb),
            "--a",
            "null",
            "--b",
            "oracle",
            "--json",
            "--resamples",
            "200",
        ],
    )
    assert res.exit_code == 0, res.output
    one = json.loads(res.output)
    assert (one["a"], one["b"]) == ("null [a]", "oracle [b]") and one["micro"][
        "difference"
    ] == pytest.approx(-190 / 220)


def test_compare_ambiguous_choice_shows_the_command_to_use(run_a: Path, run_b: Path):
    runner, app = _cli()
    res = runner.invoke(app, ["compare", str(run_a), str(run_b)], env={"COLUMNS": "400"})
    assert res.exit_code == 2
    text = " ".join(res.output.split())
    assert (
        f"{run_a} has 2 configurations; choose with --a/--b (choices: alpha@m1, beta@m2); "
        f"e.g. jobbench compare {run_a} {run_b} --a alpha@m1 --b gamma"
    ) in text
    res = runner.invoke(
        app, ["compare", str(run_b), str(run_a), "--a", "gamma"], env={"COLUMNS": "400"}
    )
    assert res.exit_code == 2
    assert (
        f"{run_a} has 2 configurations; choose with --a/--b (choices: alpha@m1, beta@m2); "
        f"e.g. jobbench compare {run_b} {run_a} --a gamma --b alpha@m1"
    ) in " ".join(res.output.split())
