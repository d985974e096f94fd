"""`jobbench extract PATH` prints what the judge sees; `--json` gives diagnostics."""

from __future__ import annotations

import json

import openpyxl
from typer.testing import CliRunner

from jobbench.cli import app


def _folder(tmp_path):
    d = tmp_path / "deliverables"
    d.mkdir()
    wb = openpyxl.Workbook()
    wb.active["A1"] = 4
    wb.active["A2"] = "=A1*10"
    wb.save(d / "calc.xlsx")
    (d / "summary.md").write_text("# Summary\nTotal is 40.\n")
    (d / "broken.pdf").write_bytes(b"%PDF-1.4\ngarbage")
    return d


def test_extract_prints_judge_text(tmp_path):
    d = _folder(tmp_path)
    result = CliRunner().invoke(app, ["extract", str(d), "--engine", "formulas", "--no-cache"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "=== FILE: calc.xlsx ===" in out and "A2=40 [=A1*10]" in out
    assert "=== FILE: summary.md ===\n# Summary\nTotal is 40.\n" in out
    assert "=== FILE: broken.pdf ===\n[extraction error: " in out


def test_extract_json_reports_diagnostics(tmp_path):
    d = _folder(tmp_path)
    images = tmp_path / "imgs"
    result = CliRunner().invoke(
        app,
        [
            "extract",
            str(d),
            "--json",
            "--engine",
            "formulas",
            "--no-cache",
            "--images-dir",
            str(images),
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    files = {f["path"]: f for f in payload["files"]}
    assert list(files) == ["broken.pdf", "calc.xlsx", "summary.md"]
    assert files["broken.pdf"]["diagnostics"][0]["level"] == "error"
    assert files["calc.xlsx"]["kind"] == "xlsx"
    assert any("formulas package" in d["message"] for d in files["calc.xlsx"]["diagnostics"])
    assert "A2=40" in payload["text"]


def test_extract_single_file_and_missing_path(tmp_path):
    d = _folder(tmp_path)
    result = CliRunner().invoke(app, ["extract", str(d / "summary.md"), "--no-cache"])
    assert result.exit_code == 0
    assert result.stdout == "=== FILE: summary.md ===\n# Summary\nTotal is 40.\n"
    missing = CliRunner().invoke(app, ["extract", str(tmp_path / "nope")])
    assert missing.exit_code == 2
    bad = CliRunner().invoke(app, ["extract", str(d), "--engine", "excel"])
    assert bad.exit_code == 2
