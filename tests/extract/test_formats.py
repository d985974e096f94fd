"""Every non-workbook format, built with its library, with exact values asserted."""

from __future__ import annotations

import base64
import io
import json
import sqlite3
import subprocess
import zipfile
from pathlib import Path

from PIL import Image

from jobbench.extract import extract, extract_dir


def _png(color=(255, 0, 0), size=(40, 30), fmt="PNG") -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format=fmt)
    return buf.getvalue()


def _matplotlib_png(path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3, 2), dpi=50)
    ax.bar(["Q1", "Q2"], [3, 5])
    fig.savefig(path)
    plt.close(fig)
    return path


# ----------------------------------------------------------------------------- docx


def test_docx_headings_tables_textboxes_headers_images(tmp_path):
    import docx
    from docx.oxml import parse_xml

    plot = _matplotlib_png(tmp_path / "plot.png")
    d = docx.Document()
    d.add_heading("Audit findings", level=1)
    d.add_heading("Scope", level=2)
    d.add_paragraph("We reviewed 14 invoices.")
    d.add_paragraph("First bullet", style="List Bullet")
    table = d.add_table(rows=3, cols=3)
    for r, row in enumerate(
        [
            ["Vendor", "Amount", "Status"],
            ["Acme | Co", "1,250.00", "paid"],
            ["Globex", "980.10", "overdue"],
        ]
    ):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    d.add_picture(str(plot))
    # a text box (DrawingML wps:txbx inside mc:AlternateContent, with a VML fallback)
    p = d.add_paragraph("Before the box. ")
    ns = (
        'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
        'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
        'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
        'xmlns:v="urn:schemas-microsoft-com:vml"'
    )
    p._p.append(
        parse_xml(
            f'<w:r {ns}><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wps:txbx><w:txbxContent>'
            "<w:p><w:r><w:t>Callout: savings of 4.2%</w:t></w:r></w:p></w:txbxContent></wps:txbx></w:drawing>"
            "</mc:Choice><mc:Fallback><w:pict><v:textbox><w:txbxContent><w:p><w:r><w:t>Callout: savings of 4.2%</w:t>"
            "</w:r></w:p></w:txbxContent></v:textbox></w:pict></mc:Fallback></mc:AlternateContent></w:r>"
        )
    )
    # a tracked deletion must not show, a tracked insertion must
    q = d.add_paragraph("Net total: ")
    q._p.append(
        parse_xml(
            f'<w:del {ns} w:id="1" w:author="a"><w:r><w:delText>999</w:delText></w:r></w:del>'
        )
    )
    q._p.append(parse_xml(f'<w:ins {ns} w:id="2" w:author="a"><w:r><w:t>1,000</w:t></w:r></w:ins>'))
    section = d.sections[0]
    section.header.paragraphs[0].text = "ACME CONFIDENTIAL"
    section.footer.paragraphs[0].text = "Page footer text"
    path = tmp_path / "report.docx"
    d.save(path)

    ext = extract(path)
    assert ext.kind == "docx"
    t = ext.text
    assert "# Audit findings" in t and "## Scope" in t
    assert "We reviewed 14 invoices." in t
    assert "- First bullet" in t
    assert (
        "| Vendor | Amount | Status |\n|---|---|---|\n| Acme \\| Co | 1,250.00 | paid |\n| Globex | 980.10 | overdue |"
        in t
    )
    assert t.count("Callout: savings of 4.2%") == 1  # text box read once (fallback skipped)
    assert "[text box]\nCallout: savings of 4.2%" in t
    assert "Net total: 1,000" in t and "999" not in t
    assert "[header] ACME CONFIDENTIAL" in t and "[footer] Page footer text" in t
    assert t.index("ACME CONFIDENTIAL") < t.index("Audit findings") < t.index("Page footer text")
    assert "[image: image1.png" in t
    assert len(ext.images) == 1 and ext.images[0].media_type == "image/png"
    assert ext.images[0].name == "report.docx#image1.png"
    assert ext.images[0].data == plot.read_bytes()


# ----------------------------------------------------------------------------- pptx


def test_pptx_slides_tables_groups_pictures_notes(tmp_path):
    from pptx import Presentation
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    plot = _matplotlib_png(tmp_path / "plot.png")
    prs = Presentation()
    s1 = prs.slides.add_slide(prs.slide_layouts[1])
    s1.shapes.title.text = "Q3 results"
    s1.placeholders[1].text = "Revenue up 8%"
    s1.notes_slide.notes_text_frame.text = "Say: the 8% excludes FX effects."
    table = s1.shapes.add_table(2, 2, Inches(1), Inches(5), Inches(4), Inches(1)).table
    for (r, c), v in {(0, 0): "Metric", (0, 1): "Value", (1, 0): "Churn", (1, 1): "2.1%"}.items():
        table.cell(r, c).text = v
    s2 = prs.slides.add_slide(prs.slide_layouts[5])
    s2.shapes.title.text = "Details"
    group = s2.shapes.add_group_shape()
    box = group.shapes.add_textbox(Inches(1), Inches(2), Inches(3), Inches(1))
    box.text_frame.text = "Inside a group"
    inner = group.shapes.add_group_shape()
    inner.shapes.add_textbox(
        Inches(1), Inches(3), Inches(3), Inches(1)
    ).text_frame.text = "Nested group text"
    s2.shapes.add_picture(str(plot), Inches(5), Inches(2))
    data = CategoryChartData()
    data.categories = ["North", "South"]
    data.add_series("Sales", (120, 80))
    s2.shapes.add_chart(
        XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(4), Inches(4), Inches(3), data
    )
    path = tmp_path / "deck.pptx"
    prs.save(path)

    ext = extract(path)
    t = ext.text
    assert ext.kind == "pptx"
    assert "## Slide 1: Q3 results" in t and "Revenue up 8%" in t
    assert "Speaker notes:\nSay: the 8% excludes FX effects." in t
    assert "| Metric | Value |\n|---|---|\n| Churn | 2.1% |" in t
    assert "## Slide 2: Details" in t
    assert "Inside a group" in t and "Nested group text" in t
    assert 'series "Sales" (Sheet1!$B$2:$B$3): North=120, South=80' in t
    assert "(column chart)" in t
    assert len(ext.images) == 1 and ext.images[0].data == plot.read_bytes()
    assert t.index("Slide 1") < t.index("Speaker notes") < t.index("Slide 2")


# ----------------------------------------------------------------------------- pdf


def test_pdf_text_and_tables_as_markdown(tmp_path):
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import letter
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Table, TableStyle

    path = tmp_path / "invoice.pdf"
    styles = getSampleStyleSheet()
    tbl = Table([["Item", "Qty", "Unit price"], ["Widget", "3", "9.99"], ["Gadget", "5", "19.50"]])
    tbl.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.black)]))
    SimpleDocTemplate(str(path), pagesize=letter).build(
        [
            Paragraph("Invoice 2024-117", styles["Heading1"]),
            tbl,
            Paragraph("Total due: 127.47 USD", styles["Normal"]),
            PageBreak(),
            Paragraph("Payment terms: net 30", styles["Normal"]),
        ]
    )
    ext = extract(path)
    t = ext.text
    assert ext.kind == "pdf"
    assert "PDF with 2 page(s)" in t
    assert (
        "| Item | Qty | Unit price |\n|---|---|---|\n| Widget | 3 | 9.99 |\n| Gadget | 5 | 19.50 |"
        in t
    )
    assert t.count("Widget") == 1  # table text not repeated as loose text
    assert t.index("Invoice 2024-117") < t.index("| Item") < t.index("Total due: 127.47 USD")
    assert "--- page 2 ---\nPayment terms: net 30" in t


def test_pdf_from_fpdf2_and_page_limit(tmp_path):
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    for i in range(1, 13):
        pdf.add_page()
        pdf.cell(0, 10, f"Page marker {i}")
    path = tmp_path / "long.pdf"
    pdf.output(str(path))
    from jobbench.extract import ExtractLimits

    ext = extract(path, limits=ExtractLimits(pdf_max_pages=8))
    t = ext.text
    assert [f"Page marker {i}" in t for i in range(1, 13)] == [True] * 6 + [False] * 4 + [True] * 2
    assert "[... pages 7–10 not read (page limit) ...]" in t
    assert any("PDF has 12 pages; read pages 1–6 and 11–12" in d.message for d in ext.warnings)


# ----------------------------------------------------------------------------- notebooks


def test_notebook_sources_outputs_errors_images(tmp_path):
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    png = _png((0, 128, 0))
    nb = new_notebook()
    nb.metadata["kernelspec"] = {
        "display_name": "Python 3",
        "name": "python3",
        "language": "python",
    }
    nb.cells = [
        new_markdown_cell("# Churn analysis"),
        new_code_cell(
            "print(40 + 2)",
            execution_count=1,
            outputs=[new_output("stream", name="stdout", text="42\n")],
        ),
        new_code_cell(
            "df.shape",
            execution_count=2,
            outputs=[
                new_output("execute_result", execution_count=2, data={"text/plain": "(1200, 8)"})
            ],
        ),
        new_code_cell(
            "1/0",
            execution_count=3,
            outputs=[
                new_output(
                    "error",
                    ename="ZeroDivisionError",
                    evalue="division by zero",
                    traceback=[
                        "\x1b[0;31mZeroDivisionError\x1b[0m Traceback",
                        "\x1b[0;31m----> 1\x1b[0m 1/0",
                    ],
                )
            ],
        ),
        new_code_cell(
            "plot()",
            execution_count=4,
            outputs=[
                new_output(
                    "display_data",
                    data={
                        "image/png": base64.b64encode(png).decode(),
                        "text/plain": "<Figure size 640x480>",
                    },
                )
            ],
        ),
    ]
    path = tmp_path / "analysis.ipynb"
    nbformat.write(nb, path)
    ext = extract(path)
    t = ext.text
    assert ext.kind == "ipynb"
    assert "Notebook (Python 3), 5 cell(s)" in t
    assert "### Cell 1 (markdown)\n# Churn analysis" in t
    assert "```\nprint(40 + 2)\n```\n[stdout]\n42" in t
    assert "[Out 2]\n(1200, 8)" in t
    assert (
        "[error] ZeroDivisionError: division by zero\nZeroDivisionError Traceback\n----> 1 1/0" in t
    )
    assert "\x1b" not in t
    assert "[image output: cell5-output1.png]" in t
    assert len(ext.images) == 1 and ext.images[0].data == png


def test_notebook_invalid_json_is_a_diagnostic(tmp_path):
    path = tmp_path / "broken.ipynb"
    path.write_text('{"cells": [', encoding="utf-8")
    ext = extract(path)
    assert ext.kind == "ipynb"
    assert ext.errors and "not a valid notebook" in ext.errors[0].message


# ----------------------------------------------------------------------------- sqlite


def test_sqlite_schema_counts_and_row_cap(tmp_path):
    path = tmp_path / "claims.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE claims (id INTEGER PRIMARY KEY, state TEXT, amount REAL, scan BLOB)")
    con.executemany(
        "INSERT INTO claims (state, amount, scan) VALUES (?, ?, ?)",
        [(f"S{i}", i * 0.5, b"\x00\x01" if i == 1 else None) for i in range(1, 701)],
    )
    con.execute("CREATE TABLE empty_table (x TEXT)")
    con.execute("CREATE VIEW big_claims AS SELECT * FROM claims WHERE amount > 100")
    con.commit()
    con.close()
    ext = extract(path)
    t = ext.text
    assert ext.kind == "sqlite"
    assert "SQLite database: 2 table(s), 1 view(s)" in t
    assert "CREATE TABLE claims (id INTEGER PRIMARY KEY, state TEXT, amount REAL, scan BLOB);" in t
    assert "## Table claims (700 rows; first 500 shown)" in t
    assert "| 1 | S1 | 0.5 | <blob 2 bytes> |" in t
    assert "| 500 | S500 | 250 | NULL |" in t
    assert "| 501 |" not in t
    assert "## Table empty_table (0 rows)" in t
    assert "## View big_claims (not queried)" in t
    # the deliverable is untouched (read from a private immutable copy)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["claims.db"]
    ext50 = extract(
        path,
        limits=__import__("jobbench.extract", fromlist=["ExtractLimits"]).ExtractLimits(
            sqlite_rows=50
        ),
    )
    assert "first 50 shown" in ext50.text and "| 51 |" not in ext50.text


# ----------------------------------------------------------------------------- text family


def test_csv_delimiter_encoding_and_summary(tmp_path):
    p = tmp_path / "vendors.csv"
    p.write_bytes("name;city;amount\nJosé;Málaga;1.200,50\nZoë;Köln;80,00\n".encode("cp1252"))
    ext = extract(p)
    assert ext.kind == "csv"
    assert (
        "[table: 3 rows × 3 columns; delimiter semicolon; encoding cp1252; first row: name, city, amount]"
        in ext.text
    )
    assert "José;Málaga;1.200,50" in ext.text
    assert any("not UTF-8; decoded as cp1252" in d.message for d in ext.warnings)
    tsv = tmp_path / "t.tsv"
    tsv.write_text("a\tb\n1\t2\n", encoding="utf-8")
    assert "delimiter tab" in extract(tsv).text


def test_text_formats(tmp_path):
    files = {
        "notes.md": "# Notes\n\n- point one\n",
        "config.yaml": "threshold: 0.75\nitems: [a, b]\n",
        "model.py": "def f(x):\n    return x * 2\n",
        "query.sql": "SELECT region, SUM(amount) FROM sales GROUP BY region;\n",
        "data.xml": "<root><total>42</total></root>\n",
        "README": "plain text without extension\n",
        "analysis.R": "summary(lm(y ~ x))\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    fe = extract_dir(tmp_path)
    for name, text in files.items():
        f = fe.file(name)
        assert f.kind == "text", (name, f.kind)
        assert f.text == text


def test_json_pretty_printed_and_invalid_json_kept(tmp_path):
    p = tmp_path / "result.json"
    p.write_text(
        json.dumps({"total": 1234.5, "regions": [{"name": "North", "share": 0.4}] * 3}),
        encoding="utf-8",
    )
    ext = extract(p)
    assert ext.kind == "json"
    assert '"total": 1234.5' in ext.text and '\n  "regions": [\n' in ext.text
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": 1,,}', encoding="utf-8")
    ext = extract(bad)
    assert ext.text.endswith('{"a": 1,,}')
    assert any("invalid JSON: line 1 column 9" in d.message for d in ext.warnings)
    jl = tmp_path / "events.jsonl"
    jl.write_text('{"id": 1}\n{"id": 2}\nnot json\n', encoding="utf-8")
    ext = extract(jl)
    assert ext.text.startswith(
        "[extraction warning: 1 line(s) are not valid JSON (first: line 3)]\n[jsonl: 2 records, 1 invalid lines]\n"
    )


def test_html_rendered_without_scripts(tmp_path):
    p = tmp_path / "memo.html"
    p.write_text(
        "<html><head><title>Memo</title><style>p{color:red}</style><script>steal()</script></head>"
        "<body><h1>Decision</h1><p>Approve <b>option B</b> (see <a href='https://example.org/x'>annex</a>).</p>"
        "<ul><li>cost 12k</li><li>risk low</li></ul>"
        "<table><tr><th>Option</th><th>Cost</th></tr><tr><td>B</td><td>12,000</td></tr></table></body></html>",
        encoding="utf-8",
    )
    t = extract(p).text
    assert "# Decision" in t
    assert "Approve option B (see annex (https://example.org/x))." in t
    assert "- cost 12k\n- risk low" in t
    assert "| Option | Cost |\n| B | 12,000 |" in t
    assert "steal" not in t and "color:red" not in t


# ----------------------------------------------------------------------------- images


def test_images_attached_and_converted(tmp_path):
    (tmp_path / "a.png").write_bytes(_png())
    (tmp_path / "b.jpg").write_bytes(_png(fmt="JPEG"))
    (tmp_path / "c.gif").write_bytes(_png(fmt="GIF"))
    (tmp_path / "d.webp").write_bytes(_png(fmt="WEBP"))
    (tmp_path / "e.bmp").write_bytes(_png(fmt="BMP"))
    _matplotlib_png(tmp_path / "f.png")
    fe = extract_dir(tmp_path, max_images=10)
    media = {img.name: img.media_type for img in fe.images}
    assert media == {
        "a.png": "image/png",
        "b.jpg": "image/jpeg",
        "c.gif": "image/gif",
        "d.webp": "image/webp",
        "e.bmp": "image/png",
        "f.png": "image/png",
    }
    assert fe.file("a.png").text == "[image: PNG 40×30 px]\n"
    assert fe.file("f.png").text == "[image: PNG 150×100 px]\n"
    bmp = next(i for i in fe.images if i.name == "e.bmp")
    assert Image.open(io.BytesIO(bmp.data)).size == (40, 30)


def test_large_image_is_downscaled(tmp_path):
    from jobbench.extract import ExtractLimits

    p = tmp_path / "huge.png"
    Image.new("RGB", (3000, 1500), (10, 20, 30)).save(p)
    ext = extract(p, limits=ExtractLimits(max_image_side=1000))
    assert Image.open(io.BytesIO(ext.images[0].data)).size == (1000, 500)


def test_svg_text_and_rendering(tmp_path, soffice_draw):
    p = tmp_path / "chart.svg"
    p.write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="60"><rect width="120" height="60" '
        'fill="blue"/><text x="5" y="30">Share 61%</text></svg>',
        encoding="utf-8",
    )
    ext = extract(p)
    assert ext.kind == "svg"
    assert '<text x="5" y="30">Share 61%</text>' in ext.text
    assert "[svg image rendered to PNG: chart.svg#chart.png]" in ext.text
    assert ext.images[0].media_type == "image/png"
    assert Image.open(io.BytesIO(ext.images[0].data)).size[0] >= 100


# ----------------------------------------------------------------------------- archives, legacy, other


def test_zip_listed_and_members_extracted(tmp_path):
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as z:
        z.writestr("deep.txt", "too deep to read")
    p = tmp_path / "bundle.zip"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("summary/readme.txt", "Key number: 77")
        z.writestr("data.csv", "a,b\n1,2\n")
        z.writestr("../escape.txt", "path traversal attempt")
        z.writestr("nested.zip", inner.getvalue())
    ext = extract(p)
    t = ext.text
    assert ext.kind == "zip"
    assert "Zip archive: 4 entries" in t
    assert "--- member: summary/readme.txt (text) ---\nKey number: 77" in t
    assert "--- member: data.csv (csv) ---\n[table: 2 rows × 2 columns" in t
    assert "  ../escape.txt  (22 bytes, UNSAFE NAME: '..' component)" in t
    assert "--- member: nested.zip (zip) ---\nZip archive: 1 entries" in t
    assert "deep.txt  (16 bytes)" in t and "too deep to read" not in t
    assert not (tmp_path.parent / "escape.txt").exists()


def test_xls_recalculated_by_libreoffice(tmp_path, soffice):
    import openpyxl

    wb = openpyxl.Workbook()
    wb.active.title = "Budget"
    wb.active.append(["Line", "Amount"])
    wb.active.append(["Travel", 1250.5])
    wb.active.append(["Total", "=B2*2"])
    src = tmp_path / "budget.xlsx"
    wb.save(src)
    out = tmp_path / "out"
    subprocess.run(
        [
            soffice,
            "--headless",
            f"-env:UserInstallation={(tmp_path / 'profile').as_uri()}",
            "--convert-to",
            "xls",
            "--outdir",
            str(out),
            str(src),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    ext = extract(out / "budget.xls")
    assert ext.kind == "xls"
    assert 'Workbook with 1 sheet(s): "Budget"' in ext.text
    assert "converted to xlsx, recalculation forced on load" in ext.text
    assert "A2=Travel | B2=1250.5" in ext.text and "A3=Total | B3=2501 [=B2*2]" in ext.text
    cached = extract(out / "budget.xls", engine="cached")
    assert 'Workbook (xls) with 1 sheet(s): "Budget"' in cached.text
    assert "A2=Travel | B2=1250.5" in cached.text
    assert "A3=Total | B3=2501 (formula, not recalculated)" in cached.text


def test_odt_converted_with_libreoffice(tmp_path, soffice_writer):
    soffice = soffice_writer
    import docx

    d = docx.Document()
    d.add_heading("Memo", 1)
    d.add_paragraph("Decision: proceed with vendor B.")
    src = tmp_path / "memo.docx"
    d.save(src)
    out = tmp_path / "out"
    subprocess.run(
        [
            soffice,
            "--headless",
            f"-env:UserInstallation={(tmp_path / 'profile').as_uri()}",
            "--convert-to",
            "odt",
            "--outdir",
            str(out),
            str(src),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    ext = extract(out / "memo.odt")
    assert ext.kind == "odt"
    assert "Decision: proceed with vendor B." in ext.text
    assert any("converted from .odt to docx with LibreOffice" in d.message for d in ext.diagnostics)


def test_unsupported_and_mislabelled(tmp_path):
    (tmp_path / "model.bin").write_bytes(bytes(range(256)) * 8)
    (tmp_path / "archive.tar.gz").write_bytes(b"\x1f\x8b\x08\x00" + bytes(200))
    (tmp_path / "actually_pdf.docx").write_bytes((tmp_path / "x").write_bytes(b"") or b"")
    pdf = io.BytesIO()
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(pdf)
    c.drawString(72, 720, "Hidden PDF content 314")
    c.save()
    (tmp_path / "actually_pdf.docx").write_bytes(pdf.getvalue())
    (tmp_path / "x").unlink()
    (tmp_path / "empty.txt").write_bytes(b"")
    fe = extract_dir(tmp_path)
    assert (
        fe.file("model.bin").text
        == "[extraction warning: unsupported format: .bin]\n[unsupported: .bin]\n"
    )
    assert fe.file("archive.tar.gz").kind == "unsupported"
    mis = fe.file("actually_pdf.docx")
    assert mis.kind == "pdf" and "Hidden PDF content 314" in mis.text
    assert any("content is PDF but the name ends in .docx" in d.message for d in mis.warnings)
    assert fe.file("empty.txt").kind == "empty"
