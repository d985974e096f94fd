"""PDF: per page its text (pdfplumber) with the tables pdfplumber finds rendered as
markdown in place (the table's characters are not repeated in the text). No OCR: a page
without a text layer gets a warning, a note saying so and, when it holds an image or a
drawing (within the image budget), a rendered page image; the note says exactly whether the
page was rendered and under which image name, or why not.

Long PDFs: at most ``limits.pdf_max_pages`` pages are read, the first 3/4 and the last 1/4
of that budget, with a marker for the pages skipped.
"""

from __future__ import annotations

import io

from ._base import Context, ExtractionError, Source, markdown_table
from ._notes import note

RENDER_DPI = 100
MAX_RENDERED_PAGES = 4


def _inside(obj, bbox) -> bool:
    x0, top, x1, bottom = bbox
    cx = (obj["x0"] + obj["x1"]) / 2
    cy = (obj["top"] + obj["bottom"]) / 2
    return x0 <= cx <= x1 and top <= cy <= bottom


def _page_text(page, ctx: Context) -> str:
    try:
        tables = page.find_tables()
    except Exception:  # noqa: BLE001 - table detection is best effort
        tables = []
    if not tables:
        return page.extract_text() or ""
    bboxes = [t.bbox for t in tables]
    outside = page.filter(
        lambda obj: obj.get("object_type") != "char" or not any(_inside(obj, b) for b in bboxes)
    )
    parts = []
    prev = page.bbox[1]
    ordered = sorted(tables, key=lambda t: (t.bbox[1], t.bbox[0]))
    for _k, table in enumerate(ordered):
        top = table.bbox[1]
        if top > prev:
            try:
                band = outside.crop((page.bbox[0], prev, page.bbox[2], top), strict=False)
                text = band.extract_text() or ""
            except Exception:  # noqa: BLE001
                text = ""
            if text.strip():
                parts.append(text)
        rows = table.extract()
        if rows:
            parts.append(markdown_table([["" if c is None else c for c in row] for row in rows]))
        prev = max(prev, table.bbox[3])
    if prev < page.bbox[3]:
        try:
            band = outside.crop((page.bbox[0], prev, page.bbox[2], page.bbox[3]), strict=False)
            text = band.extract_text() or ""
        except Exception:  # noqa: BLE001
            text = ""
        if text.strip():
            parts.append(text)
    return "\n\n".join(parts)


def _render_page(page, i: int, ctx: Context, rendered: int) -> tuple[str, bool]:  # noqa: ANN001
    """Render a page without a text layer as an image when it has drawn content, and say
    exactly what happened: ``page rendered as image <name>`` or ``page not rendered: <why>``
    (whether an image reaches the judge is stated by the judge prompt, per call).

    Returns:
        ``(what happened, whether an image was added)``."""
    if not (page.images or page.rects or page.curves or page.lines):
        return "page not rendered: it holds no image or drawing (blank page)", False
    if rendered >= MAX_RENDERED_PAGES:
        return f"page not rendered: at most {MAX_RENDERED_PAGES} pages are rendered per PDF", False
    try:
        buf = io.BytesIO()
        page.to_image(resolution=RENDER_DPI).original.save(buf, format="PNG")
    except Exception as exc:  # noqa: BLE001 - pdfplumber/pypdfium2 raise many types
        ctx.warn(f"page {i + 1}: could not be rendered ({type(exc).__name__}: {exc})")
        return "page not rendered: rendering failed", False
    name = ctx.add_image(f"page-{i + 1}.png", buf.getvalue(), caption=f"page {i + 1}")
    if not name:
        limit = ctx.limits.max_images
        return (
            f"page not rendered: image limit of {limit} per file reached or image unreadable",
            False,
        )
    return f"page rendered as image {name}", True


def extract_pdf(source: Source, ctx: Context) -> str:
    """Extractor entry point for PDF (see module docstring)."""
    import pdfplumber
    from pdfminer.pdfdocument import PDFPasswordIncorrect

    with source.open() as f:
        data = f.read()
    try:
        pdf = pdfplumber.open(io.BytesIO(data))
    except PDFPasswordIncorrect as exc:
        raise ExtractionError("encrypted PDF: a password is required to read it") from exc
    except Exception as exc:  # noqa: BLE001 - pdfminer raises many types for corrupt files
        if "password" in str(exc).lower() or type(exc).__name__ == "PDFPasswordIncorrect":
            raise ExtractionError("encrypted PDF: a password is required to read it") from exc
        raise
    with pdf:
        n = len(pdf.pages)
        limit = ctx.limits.pdf_max_pages
        if n > limit:
            head_n = max(1, (limit * 3) // 4)
            tail_n = limit - head_n
            selected = list(range(head_n)) + list(range(n - tail_n, n))
            ctx.warn(
                f"PDF has {n} pages; read pages 1–{head_n} and {n - tail_n + 1}–{n} (page limit "
                f"{limit})"
            )
            ctx.truncated = True
        else:
            selected = list(range(n))
        meta_title = (pdf.metadata or {}).get("Title")
        has_title = isinstance(meta_title, str) and meta_title.strip()
        out = [
            note(f"PDF with {n} page(s)")
            + (note('; title "') + str(meta_title) + note('"') if has_title else "")
        ]
        empty_pages = []
        rendered = 0
        chars = 0
        previous = -1
        for i in selected:
            ctx.check_deadline()
            if i != previous + 1:
                out.append(note(f"[... pages {previous + 2}–{i} not read (page limit) ...]"))
            previous = i
            page = pdf.pages[i]
            try:
                text = _page_text(page, ctx)
            except Exception as exc:  # noqa: BLE001 - one bad page must not lose the others
                ctx.warn(f"page {i + 1}: could not read text ({type(exc).__name__}: {exc})")
                text = ""
            block = note(f"--- page {i + 1} ---") + f"\n{text.strip()}"
            if not text.strip():
                empty_pages.append(i + 1)
                said, done = _render_page(page, i, ctx, rendered)
                block += note(f"[no text layer; {said}]")
                rendered += done
            out.append(block)
            chars += len(block)
            page.flush_cache()
            if hasattr(page, "close"):
                page.close()
        if empty_pages:
            shown = ", ".join(str(p) for p in empty_pages[:20]) + (
                " …" if len(empty_pages) > 20 else ""
            )
            ctx.warn(
                f"{len(empty_pages)} page(s) have no text layer (scanned? no OCR is done): {shown}"
            )
    return "\n\n".join(out) + "\n"
