"""Presentations (pptx/pptm): per slide its title, every shape's text in reading order
(top to bottom, left to right; groups opened recursively), tables as markdown, charts with
their cached data, pictures (listed and attached) and the speaker notes.

A hidden slide (``p:sld/@show="0"``: skipped in a slide show) and a hidden shape
(``p:cNvPr/@hidden``) are shown with every line marked ``[hidden: …]`` (see :mod:`._hidden`).
"""

from __future__ import annotations

import posixpath

from ._base import Context, Source, markdown_table
from ._hidden import hidden_lines, record
from ._notes import note
from ._ooxml import chart_summary


def _position(shape) -> tuple[int, int]:
    top = shape.top if shape.top is not None else 0
    left = shape.left if shape.left is not None else 0
    return (int(top), int(left))


def _text_frame(tf) -> str:
    lines = []
    for p in tf.paragraphs:
        text = p.text.replace("\v", "\n")  # python-pptx renders line breaks (a:br) as \v
        if text.strip():
            lines.append("  " * (p.level or 0) + text)
    return "\n".join(lines)


def _hidden_shape(shape) -> bool:  # noqa: ANN001 - a python-pptx shape
    """Whether the shape's non-visual properties (``p:cNvPr``) mark it hidden."""
    flags = shape._element.xpath("./*[1]/p:cNvPr/@hidden")
    return bool(flags) and flags[0].lower() in ("1", "true")


class _Slides:
    def __init__(self, ctx: Context):
        self.ctx = ctx

    def shapes(
        self, shapes, slide_no: int, skip_id: int | None = None, _reveal: bool = False
    ) -> list[str]:
        from pptx.enum.shapes import MSO_SHAPE_TYPE
        from pptx.shapes.picture import Picture

        out: list[str] = []
        for shape in sorted(shapes, key=_position):
            if skip_id is not None and shape.shape_id == skip_id:
                continue
            if not _reveal and _hidden_shape(shape):
                inner = self.shapes([shape], slide_no, _reveal=True)
                text = "\n".join(inner)
                if text.strip():
                    record(self.ctx.hidden, "hidden shape", text)
                    out.append(hidden_lines(text, "hidden shape"))
                continue
            try:
                st = shape.shape_type
            except NotImplementedError:
                st = None
            if st == MSO_SHAPE_TYPE.GROUP:
                inner = self.shapes(shape.shapes, slide_no)
                if inner:
                    out.append("\n".join(inner))
                continue
            if getattr(shape, "has_table", False) and shape.has_table:
                rows = [[cell.text for cell in row.cells] for row in shape.table.rows]
                out.append(markdown_table(rows))
                continue
            if getattr(shape, "has_chart", False) and shape.has_chart:
                try:
                    out.append(chart_summary(shape.chart_part.blob))
                except Exception:  # noqa: BLE001 - chart parts are optional
                    out.append(note("[chart]"))
                continue
            if isinstance(shape, Picture):
                try:
                    image = shape.image
                    label = f"slide{slide_no}-{posixpath.basename(image.filename or 'image')}"
                    if not label.rsplit("-", 1)[-1].count("."):
                        label += "." + image.ext
                    descr = shape._element.xpath("./p:nvPicPr/p:cNvPr/@descr")
                    alt = descr[0] if descr else ""
                    name = self.ctx.add_image(label, image.blob, caption=alt or shape.name or "")
                    out.append(
                        note(f"[image: {label}" + ("; alt text: " if alt else ""))
                        + alt
                        + note(("" if name else "; not extracted") + "]")
                    )
                except Exception:  # noqa: BLE001 - linked or broken picture
                    out.append(note("[image: unavailable]"))
                if not getattr(shape, "has_text_frame", False):
                    continue
            if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
                text = _text_frame(shape.text_frame)
                if text.strip():
                    out.append(text)
        return out


def extract_pptx(source: Source, ctx: Context) -> str:
    """Extractor entry point for pptx (see module docstring)."""
    from pptx import Presentation

    with source.open() as f:
        prs = Presentation(f)
    walker = _Slides(ctx)
    out = [note(f"Presentation with {len(prs.slides)} slide(s)")]
    for i, slide in enumerate(prs.slides, 1):
        ctx.check_deadline()
        title_shape = slide.shapes.title
        title = (
            title_shape.text_frame.text.strip().replace("\v", " ")
            if title_shape is not None and title_shape.has_text_frame
            else ""
        )
        hidden = (slide._element.get("show") or "1").lower() in ("0", "false")
        body = walker.shapes(
            slide.shapes, i, skip_id=title_shape.shape_id if title_shape is not None else None
        )
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            text = notes.text.strip() if notes is not None else ""
            if text:
                body.append(note("Speaker notes:") + "\n" + text)
        if hidden:
            content = "\n".join(([title] if title else []) + body)
            record(ctx.hidden, "hidden slide", content)
            head = note(f"## Slide {i} (hidden slide: not shown in a slide show)")
            marked = hidden_lines(content, "hidden slide") if content.strip() else ""
            out.append(head + ("\n" + marked if marked else ""))
            continue
        head = note(f"## Slide {i}" + (": " if title else "")) + title
        out.append("\n".join([head] + body))
    return "\n\n".join(out) + "\n"
