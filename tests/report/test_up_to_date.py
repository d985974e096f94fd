"""A report whose inputs are unchanged is not written again; a changed input rebuilds it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from jobbench.report import REPORT_FILES, write_report

from .conftest import ALL_PASS, T2, write_grade

ALPHA_T2_E2 = f"{T2}/alpha@m1/epoch-2"  # graded [[P, P], [F, F]] by build_run_a: 30 of 60


def _state(out: Path) -> dict[str, tuple[int, int, bytes]]:
    """Inode, mtime (ns) and bytes of every report file: an atomic rewrite changes the inode."""
    out_files = {}
    for name in REPORT_FILES:
        st = os.stat(out / name)
        out_files[name] = (st.st_ino, st.st_mtime_ns, (out / name).read_bytes())
    return out_files


def _row(out: Path, trial_id: str) -> dict:
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return next(r for r in rows if r["trial_id"] == trial_id)


def test_unchanged_inputs_leave_the_report_files_alone(run_a: Path, tmp_path: Path):
    out = tmp_path / "out"
    write_report([run_a], out, n_resamples=100)
    before = _state(out)
    write_report([run_a], out, n_resamples=100)  # a fresh build (its own generated_at)
    assert _state(out) == before


def test_a_changed_grade_rebuilds_the_report(run_a: Path, tmp_path: Path):
    out = tmp_path / "out"
    write_report([run_a], out, n_resamples=100)
    row = _row(out, ALPHA_T2_E2)
    assert (row["points"], row["score"]) == (30.0, 0.5)
    before = _state(out)
    write_report([run_a], out, n_resamples=100)
    assert _state(out) == before
    write_grade(run_a, "checks", ALPHA_T2_E2, ALL_PASS[T2])
    write_report([run_a], out, n_resamples=100)
    row = _row(out, ALPHA_T2_E2)
    assert (row["points"], row["score"]) == (60.0, 1.0)
    after = _state(out)
    assert all(after[name][0] != before[name][0] for name in REPORT_FILES)  # all rewritten
    write_report([run_a], out, n_resamples=100)
    assert _state(out) == after


def test_changed_options_or_a_missing_file_rebuild_the_report(run_a: Path, tmp_path: Path):
    out = tmp_path / "out"
    write_report([run_a], out, n_resamples=100, drilldowns="inline")
    before = _state(out)
    write_report([run_a], out, n_resamples=100, drilldowns="inline")
    assert _state(out) == before
    assert not (out / "drilldowns").exists()
    write_report([run_a], out, n_resamples=100, drilldowns="pages")
    assert len(list((out / "drilldowns").iterdir())) == 4  # one page per task of the run
    summary = json.loads((out / "summary.json").read_text())
    write_report([run_a], out, n_resamples=200, drilldowns="pages")
    assert json.loads((out / "summary.json").read_text()) != summary
    (out / "report.html").unlink()
    write_report([run_a], out, n_resamples=200, drilldowns="pages")
    assert "drilldowns/" in (out / "report.html").read_text()


def _imports(argv: list[str]) -> set[str]:
    run = subprocess.run(
        [sys.executable, "-X", "importtime", *argv], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return {
        line.rsplit("|", 1)[-1].strip().split(".")[0]
        for line in run.stderr.splitlines()
        if line.startswith("import time:")
    }


def test_an_up_to_date_report_imports_no_matplotlib(run_a: Path, tmp_path: Path):
    argv = ["-m", "jobbench", "report", str(run_a), "--out", str(tmp_path / "out")]
    argv += ["--resamples", "100"]
    assert "matplotlib" in _imports(argv)  # the first report draws its figures
    assert "matplotlib" not in _imports(argv)


def test_a_report_written_by_other_report_code_is_rebuilt(run_a: Path, tmp_path: Path, monkeypatch):
    """Same inputs, same harness version, but other templates or report code (a changed
    checkout): the report is written again, not kept as up to date."""
    from jobbench.report import _write

    out = tmp_path / "out"
    write_report([run_a], out, n_resamples=100)
    before = _state(out)
    monkeypatch.setattr(_write, "_RENDERER_DIGEST", "0" * 64)
    write_report([run_a], out, n_resamples=100)
    after = _state(out)
    assert after["report.html"][0] != before["report.html"][0]  # rewritten (new inode)


def test_the_renderer_digest_follows_the_report_sources(tmp_path: Path, monkeypatch):
    """A byte-identical copy of jobbench/report gives the same digest; one changed template
    byte or code file gives another."""
    import shutil

    from jobbench.report import _write

    real = _write.renderer_digest()
    copy = tmp_path / "report"
    shutil.copytree(
        Path(_write.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__")
    )
    monkeypatch.setattr(_write, "__file__", str(copy / "_write.py"))

    def fresh() -> str:
        monkeypatch.setattr(_write, "_RENDERER_DIGEST", None)
        return _write.renderer_digest()

    assert fresh() == real
    template = copy / "templates" / "report.html.j2"
    template.write_bytes(template.read_bytes() + b" ")
    changed = fresh()
    assert changed != real
    (copy / "_plots.py").write_bytes((copy / "_plots.py").read_bytes() + b"\n")
    assert fresh() not in (real, changed)
