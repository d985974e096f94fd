"""Word documents (docx/docm): body in reading order with headings, lists, tables as
markdown, text boxes, tracked insertions (deletions dropped), headers/footers, footnotes,
comments, charts (cached data) and embedded images (listed in place and attached).

The document is opened with python-docx; text is read from the WordprocessingML tree
directly (ECMA-376 Part 1 §17): ``w:t`` text, ``w:tab``, ``w:br``/``w:cr`` breaks,
``w:delText`` (deleted text, skipped), ``w:instrText`` (field codes, skipped),
``w:txbxContent`` (text boxes), ``mc:AlternateContent`` (``mc:Fallback`` skipped so
drawings are not read twice), ``a:blip/@r:embed`` and ``v:imagedata/@r:id`` (images).
"""

from __future__ import annotations

import posixpath

from lxml import etree

from ._base import Context, Source, markdown_table
from ._notes import note
from ._ooxml import NS, chart_summary, parse_xml

W = "{%s}" % NS["w"]
MC_FALLBACK = "{%s}Fallback" % NS["mc"]
R_EMBED = "{%s}embed" % NS["r"]
R_ID = "{%s}id" % NS["r"]
R_LINK = "{%s}link" % NS["r"]
C_CHART = "{%s}chart" % NS["c"]
A_BLIP = "{%s}blip" % NS["a"]
V_IMAGEDATA = "{%s}imagedata" % NS["v"]
WP_DOCPR = "{%s}docPr" % NS["wp"]


class _Doc:
    """Walks one part's XML with access to its relationships (images, charts)."""

    def __init__(self, part, ctx: Context, source_label: str):
        self.part = part
        self.ctx = ctx
        self.label = source_label
        self.style_names: dict[str, str] = {}

    # -- relationships
    def _rel_target(self, rid: str):
        try:
            rel = self.part.rels[rid]
        except KeyError:
            return None
        if rel.is_external:
            return None
        return rel.target_part

    def image_marker(self, rid: str, alt: str | None) -> str:
        target = self._rel_target(rid)
        if target is None:
            return note("[image: linked or missing]")
        base = posixpath.basename(str(target.partname))
        name = self.ctx.add_image(base, target.blob)
        return (note(f"[image: {base}" + ("; alt text: " if alt else "")) + (alt or "")
                + note(("" if name else "; not attached") + "]"))

    def chart_marker(self, rid: str) -> str:
        target = self._rel_target(rid)
        if target is None:
            return note("[chart]")
        return chart_summary(target.blob)

    # -- text
    def inline_text(self, el, boxes: list[str]) -> str:
        """Text of a paragraph-level element in document order."""
        out: list[str] = []
        alt: str | None = None

        def walk(node) -> None:
            nonlocal alt
            for child in node:
                tag = child.tag
                if not isinstance(tag, str):
                    continue
                if tag == MC_FALLBACK:
                    continue
                if tag == W + "t":
                    out.append(child.text or "")
                elif tag == W + "tab":
                    out.append("\t")
                elif tag in (W + "br", W + "cr"):
                    out.append("\n")
                elif tag in (W + "delText", W + "instrText", W + "del", W + "moveFrom"):
                    continue
                elif tag == W + "noBreakHyphen":
                    out.append("-")
                elif tag == W + "footnoteReference":
                    out.append(note(f"[^{child.get(W + 'id')}]"))
                elif tag == W + "endnoteReference":
                    out.append(note(f"[^e{child.get(W + 'id')}]"))
                elif tag == W + "txbxContent":
                    text = self.block_text(child)
                    if text.strip():
                        boxes.append(text.strip())
                elif tag == WP_DOCPR:
                    alt = child.get("descr") or child.get("title") or alt
                elif tag == A_BLIP:
                    rid = child.get(R_EMBED) or child.get(R_LINK)
                    if rid:
                        out.append(self.image_marker(rid, alt))
                        alt = None
                elif tag == V_IMAGEDATA:
                    rid = child.get(R_ID)
                    if rid:
                        out.append(self.image_marker(rid, child.get("title")))
                elif tag == C_CHART:
                    rid = child.get(R_ID)
                    if rid:
                        out.append("\n" + self.chart_marker(rid) + "\n")
                else:
                    walk(child)

        walk(el)
        return "".join(out)

    def paragraph(self, p) -> str:
        boxes: list[str] = []
        text = self.inline_text(p, boxes)
        ppr = p.find(W + "pPr")
        prefix = ""
        if ppr is not None:
            style = ppr.find(W + "pStyle")
            style_name = self.style_names.get(style.get(W + "val"), style.get(W + "val")) if style is not None else ""
            level = None
            low = (style_name or "").lower()
            if low == "title":
                level = 1
            elif low.startswith("heading") and low[7:].strip().isdigit():
                level = min(6, int(low[7:].strip()))
            outline = ppr.find(W + "outlineLvl")
            if level is None and outline is not None and (outline.get(W + "val") or "").isdigit():
                level = min(6, int(outline.get(W + "val")) + 1)
            if level and text.strip():
                prefix = "#" * level + " "
            elif ppr.find(W + "numPr") is not None or "list" in low:
                ilvl = ppr.find(f"{W}numPr/{W}ilvl")
                depth = int(ilvl.get(W + "val", "0")) if ilvl is not None and (ilvl.get(W + "val") or "0").isdigit() else 0
                prefix = "  " * depth + "- "
        line = prefix + text if text.strip() else text.strip()
        for box in boxes:
            line += "\n" + note("[text box]") + f"\n{box}\n" + note("[end text box]")
        return line

    def table(self, tbl) -> str:
        rows = []
        for tr in tbl.findall(W + "tr"):
            cells = []
            for tc in tr.findall(W + "tc"):
                text = self.block_text(tc, nested=True).strip()
                cells.append(text)
                span = tc.find(f"{W}tcPr/{W}gridSpan")
                if span is not None and (span.get(W + "val") or "1").isdigit():
                    cells.extend([""] * (int(span.get(W + "val")) - 1))
            rows.append(cells)
        return markdown_table(rows)

    def block_text(self, el, nested: bool = False) -> str:
        """Text of a container of paragraphs and tables (body, cell, text box, header)."""
        parts: list[str] = []
        for child in el:
            tag = child.tag
            if tag == W + "p":
                parts.append(self.paragraph(child))
            elif tag == W + "tbl":
                if nested:
                    rows = [note(" | ").join(self.block_text(tc, nested=True).strip().replace("\n", " ")
                                       for tc in tr.findall(W + "tc")) for tr in child.findall(W + "tr")]
                    parts.append(note("[table: ") + note(" / ").join(rows) + note("]"))
                else:
                    parts.append("\n" + self.table(child) + "\n")
            elif tag in (W + "sdt",):
                content = child.find(W + "sdtContent")
                if content is not None:
                    parts.append(self.block_text(content, nested))
            elif tag in (W + "customXml", W + "ins", W + "smartTag"):
                parts.append(self.block_text(child, nested))
            elif tag == "{%s}AlternateContent" % NS["mc"]:
                choice = child.find("{%s}Choice" % NS["mc"])
                if choice is not None:
                    parts.append(self.block_text(choice, nested))
        text = "\n".join(parts)
        return text


def _notes_part(doc, suffix: str, ctx: Context) -> list[tuple[str, str]]:
    """(id, text) of footnotes/endnotes/comments parts found in the package."""
    out = []
    for part in doc.part.package.iter_parts():
        if str(part.partname).endswith(suffix):
            try:
                root = parse_xml(part.blob)
            except etree.XMLSyntaxError:
                ctx.warn(f"{part.partname}: unreadable XML")
                continue
            walker = _Doc(part, ctx, "")
            for note in root:
                if not isinstance(note.tag, str):
                    continue
                if note.get(W + "type") in ("separator", "continuationSeparator", "continuationNotice"):
                    continue
                nid = note.get(W + "id", "")
                author = note.get(W + "author")
                text = walker.block_text(note).strip()
                if text:
                    out.append((nid if author is None else f"{nid}, {author}", text))
    return out


def extract_docx(source: Source, ctx: Context) -> str:
    """Extractor entry point for docx (see module docstring)."""
    import docx

    with source.open() as f:
        doc = docx.Document(f)
    walker = _Doc(doc.part, ctx, ctx.rel)
    try:
        walker.style_names = {s.style_id: s.name for s in doc.styles if s.style_id and s.name}
    except Exception:  # noqa: BLE001 - style table is optional
        walker.style_names = {}
    body = walker.block_text(doc.element.body)
    parts = []
    seen: set[str] = set()
    for section in doc.sections:
        for label, hf in (("header", section.header), ("first-page header", section.first_page_header),
                          ("even-page header", section.even_page_header), ("footer", section.footer),
                          ("first-page footer", section.first_page_footer), ("even-page footer", section.even_page_footer)):
            try:
                if hf.is_linked_to_previous:
                    continue
                hw = _Doc(hf.part, ctx, ctx.rel)
                hw.style_names = walker.style_names
                text = hw.block_text(hf._element).strip()
            except Exception:  # noqa: BLE001 - a broken header must not lose the body
                continue
            if text and text not in seen:
                seen.add(text)
                parts.append(note(f"[{label}] ") + text)
    out = []
    if parts:
        out.append("\n".join(p for p in parts if "header" in p.split("]")[0]))
    out.append(_collapse_blank(body))
    footers = [p for p in parts if "footer" in p.split("]")[0]]
    if footers:
        out.append("\n".join(footers))
    for suffix, title, mark in (("/footnotes.xml", "Footnotes", "^"), ("/endnotes.xml", "Endnotes", "^e"),
                                ("/comments.xml", "Comments", "comment ")):
        notes = _notes_part(doc, suffix, ctx)
        if notes:
            out.append(note(f"{title}:") + "\n" + "\n".join(note(f"[{mark}{nid}] ") + text for nid, text in notes))
    return "\n\n".join(o for o in out if o.strip()) + "\n"


def _collapse_blank(text: str) -> str:
    lines = text.split("\n")
    out: list[str] = []
    for ln in lines:
        if not ln.strip() and out and not out[-1].strip():
            continue
        out.append(ln.rstrip())
    return "\n".join(out).strip()
