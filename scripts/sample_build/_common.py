"""Deterministic writers shared by the sample-split build scripts.

Every Office/PDF/PNG file written here has fixed metadata so that a rebuild reproduces the
committed bytes (OOXML zips are rewritten with fixed entry dates and fixed ``dcterms``
timestamps; PDFs use ReportLab's invariant mode; PNGs carry no software/date chunks).
"""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
import zipfile
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

FIXED_DT = datetime(2024, 1, 15, 9, 0, 0)
"""Timestamp written into every generated document's metadata."""
_ZIP_DT = (2024, 1, 15, 9, 0, 0)
AUTHOR = "JobBench sample build"


def _normalise_ooxml(path: Path) -> None:
    """Rewrite an OOXML zip with sorted-stable entries, fixed dates and fixed core props."""
    stamp = FIXED_DT.strftime("%Y-%m-%dT%H:%M:%SZ")
    with zipfile.ZipFile(path) as zin:
        items = [(info.filename, zin.read(info.filename)) for info in zin.infolist()]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zout:
        for name, data in items:
            if name == "docProps/core.xml":
                text = data.decode("utf-8")
                text = re.sub(
                    r"(<dcterms:created[^>]*>)[^<]*(</dcterms:created>)",
                    rf"\g<1>{stamp}\g<2>",
                    text,
                )
                text = re.sub(
                    r"(<dcterms:modified[^>]*>)[^<]*(</dcterms:modified>)",
                    rf"\g<1>{stamp}\g<2>",
                    text,
                )
                data = text.encode("utf-8")
            info = zipfile.ZipInfo(name, date_time=_ZIP_DT)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zout.writestr(info, data)
    path.write_bytes(buf.getvalue())


def write_text(path: Path, text: str) -> None:
    """UTF-8 text with ``\\n`` line ends."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def write_csv(
    path: Path, header: Sequence[str], rows: Iterable[Sequence[Any]], *, crlf: bool = False
) -> None:
    """CSV with a header row; ``crlf`` mimics an export from a Windows tool."""
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n" if crlf else "\n")
    w.writerow(header)
    for r in rows:
        w.writerow(["" if v is None else v for v in r])
    path.write_bytes(buf.getvalue().encode("utf-8"))


def write_json(path: Path, data: Any) -> None:
    """Indented JSON, keys in insertion order."""
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def new_workbook():
    """An empty openpyxl workbook with fixed properties (caller adds sheets)."""
    from openpyxl import Workbook

    wb = Workbook()
    wb.properties.creator = AUTHOR
    wb.properties.created = FIXED_DT
    wb.properties.modified = FIXED_DT
    return wb


def save_workbook(wb, path: Path) -> None:
    """Save and normalise an openpyxl workbook."""
    path.parent.mkdir(parents=True, exist_ok=True)
    wb.properties.modified = FIXED_DT
    wb.save(path)
    _normalise_ooxml(path)


def write_docx(path: Path, blocks: list[tuple[str, Any]], *, title: str = "") -> None:
    """A Word document from blocks: ("h1"|"h2"|"p"|"bullet", text) or ("table", rows)
    where rows[0] is the header row."""
    import docx

    d = docx.Document()
    cp = d.core_properties
    cp.author = AUTHOR
    cp.last_modified_by = AUTHOR
    cp.title = title
    cp.created = FIXED_DT
    cp.modified = FIXED_DT
    cp.revision = 1
    for kind, content in blocks:
        if kind == "h1":
            d.add_heading(content, level=1)
        elif kind == "h2":
            d.add_heading(content, level=2)
        elif kind == "p":
            d.add_paragraph(content)
        elif kind == "bullet":
            d.add_paragraph(content, style="List Bullet")
        elif kind == "table":
            t = d.add_table(rows=0, cols=len(content[0]))
            t.style = "Table Grid"
            for row in content:
                cells = t.add_row().cells
                for c, v in zip(cells, row):
                    c.text = str(v)
        else:
            raise ValueError(f"unknown docx block kind {kind!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    d.save(path)
    _normalise_ooxml(path)


def write_pptx(path: Path, slides: list[dict[str, Any]]) -> None:
    """A deck; each slide dict has ``title``, optional ``bullets`` (list of str), optional
    ``table`` (rows, first = header), optional ``notes``."""
    from pptx import Presentation
    from pptx.util import Inches, Pt

    prs = Presentation()
    cp = prs.core_properties
    cp.author = AUTHOR
    cp.last_modified_by = AUTHOR
    cp.created = FIXED_DT
    cp.modified = FIXED_DT
    cp.revision = 1
    for s in slides:
        layout = prs.slide_layouts[5] if s.get("table") else prs.slide_layouts[1]
        slide = prs.slides.add_slide(layout)
        slide.shapes.title.text = s["title"]
        if s.get("bullets") and not s.get("table"):
            body = slide.placeholders[1].text_frame
            body.text = s["bullets"][0]
            for b in s["bullets"][1:]:
                body.add_paragraph().text = b
        if s.get("table"):
            rows = s["table"]
            shape = slide.shapes.add_table(
                len(rows),
                len(rows[0]),
                Inches(0.5),
                Inches(1.6),
                Inches(9),
                Inches(0.4) * len(rows),
            )
            for i, row in enumerate(rows):
                for j, v in enumerate(row):
                    cell = shape.table.cell(i, j)
                    cell.text = str(v)
                    for p in cell.text_frame.paragraphs:
                        for r in p.runs:
                            r.font.size = Pt(12)
            if s.get("bullets"):
                tb = slide.shapes.add_textbox(
                    Inches(0.5),
                    Inches(1.6) + Inches(0.4) * len(rows) + Inches(0.3),
                    Inches(9),
                    Inches(1),
                )
                tb.text_frame.text = s["bullets"][0]
                for b in s["bullets"][1:]:
                    tb.text_frame.add_paragraph().text = b
        if s.get("notes"):
            slide.notes_slide.notes_text_frame.text = s["notes"]
    path.parent.mkdir(parents=True, exist_ok=True)
    prs.save(path)
    _normalise_ooxml(path)


def write_pdf(path: Path, blocks: list[tuple[str, Any]], *, title: str = "") -> None:
    """A PDF (ReportLab, invariant mode) from blocks like :func:`write_docx`."""
    from reportlab import rl_config

    rl_config.invariant = 1
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import letter
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

    styles = getSampleStyleSheet()
    story: list[Any] = []
    for kind, content in blocks:
        if kind == "h1":
            story.append(Paragraph(content, styles["Heading1"]))
        elif kind == "h2":
            story.append(Paragraph(content, styles["Heading2"]))
        elif kind == "p":
            story.append(Paragraph(content, styles["BodyText"]))
        elif kind == "bullet":
            story.append(Paragraph("• " + content, styles["BodyText"]))
        elif kind == "table":
            t = Table([[str(v) for v in row] for row in content], repeatRows=1)
            t.setStyle(
                TableStyle(
                    [
                        ("GRID", (0, 0), (-1, -1), 0.5, colors.grey),
                        ("BACKGROUND", (0, 0), (-1, 0), colors.lightgrey),
                        ("FONTSIZE", (0, 0), (-1, -1), 8),
                    ]
                )
            )
            story.append(t)
        elif kind == "space":
            story.append(Spacer(1, 8))
        else:
            raise ValueError(f"unknown pdf block kind {kind!r}")
        story.append(Spacer(1, 4))
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = SimpleDocTemplate(
        str(path),
        pagesize=letter,
        title=title,
        author=AUTHOR,
        creator=AUTHOR,
        producer=AUTHOR,
        invariant=1,
    )
    doc.build(story)


def write_png_chart(path: Path, draw) -> None:
    """Render ``draw(fig, ax)`` with matplotlib (Agg) to a PNG without metadata."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    draw(fig, ax)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", metadata={"Software": None})
    plt.close(fig)


def write_sqlite(
    path: Path, script: str, tables: dict[str, tuple[Sequence[str], list[Sequence[Any]]]]
) -> None:
    """A fresh SQLite file: run ``script`` (DDL) then insert ``tables[name] = (cols, rows)``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    con = sqlite3.connect(path)
    try:
        con.executescript(script)
        for name, (cols, rows) in tables.items():
            marks = ",".join("?" * len(cols))
            con.executemany(f"INSERT INTO {name} ({','.join(cols)}) VALUES ({marks})", rows)
        con.commit()
        con.execute("VACUUM")
    finally:
        con.close()


def load_solution(task_dir: Path):
    """Import ``task_dir/solution/solve.py`` as a module (decoys reuse its functions with one
    deliberate mistake each)."""
    import importlib.util

    path = task_dir / "solution" / "solve.py"
    spec = importlib.util.spec_from_file_location(
        f"solve_{task_dir.parent.name}_{task_dir.name}", path
    )
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def decoy_dir(task_dir: Path, name: str) -> Path:
    """``solution/decoys/<name>/deliverables`` (created empty)."""
    d = task_dir / "solution" / "decoys" / name / "deliverables"
    d.mkdir(parents=True, exist_ok=True)
    return d
