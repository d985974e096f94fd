"""Word documents (docx/docm): body in reading order with headings, lists, tables as
markdown, text boxes, tracked insertions (deletions dropped), headers/footers, footnotes,
comments, charts (cached data) and embedded images (listed in place and attached).

The document is opened with python-docx; text is read from the WordprocessingML tree
directly (ECMA-376 Part 1 §17): ``w:t`` text, ``w:tab``, ``w:br``/``w:cr`` breaks,
``w:delText`` (deleted text, skipped), ``w:instrText`` (field codes, skipped),
``w:txbxContent`` (text boxes), ``mc:AlternateContent`` (``mc:Fallback`` skipped so
drawings are not read twice), ``a:blip/@r:embed`` and ``v:imagedata/@r:id`` (images).

Hidden text (see :mod:`._hidden`) is shown marked ``[hidden text (…): "…"]``: runs whose
effective run properties (direct ``w:rPr``, then the character style ``w:rStyle``, then the
paragraph style, each with its ``w:basedOn`` chain, then ``w:docDefaults``; §17.7.2) set
``w:vanish`` or ``w:specVanish`` (hidden), a font size ``w:sz`` under 4 pt (tiny), or a
white or near-white ``w:color`` (white; unless the run is highlighted or shaded, sits in a
table cell or text box, or the document has a background colour, where white text may be
visible).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any

from lxml import etree

from ._base import Context, Source, markdown_table
from ._hidden import hidden_inline, is_white, record
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


TINY_HALF_POINTS = 8
"""Text smaller than this many half-points (4 pt) counts as hidden (tiny)."""


@dataclass(frozen=True)
class RunLook:
    """The run properties that decide whether text is visible (None: not set here)."""

    vanish: bool | None = None
    color: str | None = None
    size: int | None = None
    shaded: bool | None = None

    def over(self, base: RunLook) -> RunLook:
        """These properties, falling back to ``base`` where unset."""
        mine: tuple[Any, ...] = (self.vanish, self.color, self.size, self.shaded)
        theirs: tuple[Any, ...] = (base.vanish, base.color, base.size, base.shaded)
        return RunLook(*(a if a is not None else b for a, b in zip(mine, theirs)))


def _on(el) -> bool:  # noqa: ANN001 - an lxml element
    return (el.get(W + "val") or "true").lower() not in ("0", "false", "off")


def run_look(rpr) -> RunLook:  # noqa: ANN001 - an lxml w:rPr element or None
    """The :class:`RunLook` a ``w:rPr`` sets."""
    if rpr is None:
        return RunLook()
    vanish = None
    for tag in ("vanish", "specVanish"):
        el = rpr.find(W + tag)
        if el is not None:
            vanish = bool(vanish) or _on(el)
    color = None
    el = rpr.find(W + "color")
    if el is not None:
        theme = (el.get(W + "themeColor") or "").lower()
        value = (el.get(W + "val") or "auto").upper()
        color = "FFFFFF" if theme in ("background1", "light1") else value
    size = None
    el = rpr.find(W + "sz")
    if el is not None and (el.get(W + "val") or "").isdigit():
        size = int(el.get(W + "val"))
    shaded = None
    hl = rpr.find(W + "highlight")
    shd = rpr.find(W + "shd")
    if hl is not None or shd is not None:
        fill = (shd.get(W + "fill") or "auto").upper() if shd is not None else "AUTO"
        shaded = (
            hl is not None and (hl.get(W + "val") or "none") not in ("none", "white")
        ) or fill not in ("AUTO", "FFFFFF")
    return RunLook(vanish=vanish, color=color, size=size, shaded=shaded)


class Styles:
    """Run properties of a document's styles (``word/styles.xml``), resolved through
    ``w:basedOn`` chains, and of its ``w:docDefaults``."""

    def __init__(self, root):  # noqa: ANN001 - the styles part root or None
        self.own: dict[str, tuple[RunLook, str | None]] = {}
        self.defaults = RunLook()
        self.paragraph_default: str | None = None
        self._cache: dict[str | None, RunLook] = {}
        if root is None:
            return
        d = root.find(f"{W}docDefaults/{W}rPrDefault/{W}rPr")
        self.defaults = run_look(d)
        for st in root.findall(W + "style"):
            sid = st.get(W + "styleId")
            if not sid:
                continue
            based = st.find(W + "basedOn")
            parent = based.get(W + "val") if based is not None else None
            self.own[sid] = (run_look(st.find(W + "rPr")), parent)
            if st.get(W + "type") == "paragraph" and _on_default(st):
                self.paragraph_default = sid

    def look(self, style_id: str | None) -> RunLook:
        """Properties of ``style_id`` with its ancestors' (not the defaults)."""
        if style_id in self._cache:
            return self._cache[style_id]
        out = RunLook()
        seen: set[str] = set()
        sid = style_id
        while sid and sid in self.own and sid not in seen:
            seen.add(sid)
            mine, sid = self.own[sid]
            out = out.over(mine)
        self._cache[style_id] = out
        return out


def _on_default(style) -> bool:  # noqa: ANN001
    return (style.get(W + "default") or "").lower() in ("1", "true")


class _Doc:
    """Walks one part's XML with access to its relationships (images, charts)."""

    def __init__(
        self,
        part,
        ctx: Context,
        source_label: str,
        styles: Styles | None = None,
        white_visible: bool = False,
    ):
        self.part = part
        self.ctx = ctx
        self.label = source_label
        self.style_names: dict[str, str] = {}
        self.styles = styles or Styles(None)
        self.white_visible = white_visible
        self.framed = 0  # inside a table cell or a text box, where white text may sit on a fill

    def hidden_reason(self, run, pstyle: str | None, boxed: bool) -> str | None:  # noqa: ANN001
        """Why a ``w:r`` is not visible to a reader (``w:vanish``, ``tiny text``, ``white
        text``), or None."""
        rpr = run.find(W + "rPr")
        rstyle = rpr.find(W + "rStyle") if rpr is not None else None
        char_style = rstyle.get(W + "val") if rstyle is not None else None
        look = run_look(rpr).over(self.styles.look(char_style))
        look = look.over(self.styles.look(pstyle or self.styles.paragraph_default))
        look = look.over(self.styles.defaults)
        if look.vanish:
            return "w:vanish"
        if look.size is not None and look.size < TINY_HALF_POINTS:
            return f"tiny text, {look.size / 2:g} pt"
        if is_white(look.color) and not look.shaded and not boxed and not self.white_visible:
            return "white text"
        return None

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
        name = self.ctx.add_image(base, target.blob, caption=alt or "")
        return (
            note(f"[image: {base}" + ("; alt text: " if alt else ""))
            + (alt or "")
            + note(("" if name else "; not extracted") + "]")
        )

    def chart_marker(self, rid: str) -> str:
        target = self._rel_target(rid)
        if target is None:
            return note("[chart]")
        return chart_summary(target.blob)

    # -- text
    def inline_text(self, el, boxes: list[str], pstyle: str | None = None) -> str:
        """Text of a paragraph-level element in document order (hidden runs marked, runs
        hidden for the same reason in a row joined into one)."""
        out: list[str] = []
        alt: str | None = None
        pending: list[str] = []
        pending_why: list[str] = []

        def flush() -> None:
            if pending:
                text = "".join(pending)
                if text.strip():
                    out.append(hidden_inline(text, pending_why[0]))
                    record(self.ctx.hidden, pending_why[0], text)
                pending.clear()
                pending_why.clear()

        def walk(node, sink: list[str]) -> None:
            nonlocal alt
            for child in node:
                tag = child.tag
                if not isinstance(tag, str):
                    continue
                if tag == MC_FALLBACK:
                    continue
                if tag == W + "r" and sink is out:
                    why = self.hidden_reason(child, pstyle, self.framed > 0)
                    if why is not None:
                        if pending_why and pending_why[0] != why:
                            flush()
                        pending_why[:1] = [why]
                        walk(child, pending)
                        continue
                    flush()
                    walk(child, sink)
                    continue
                if tag == W + "t":
                    sink.append(child.text or "")
                elif tag == W + "tab":
                    sink.append("\t")
                elif tag in (W + "br", W + "cr"):
                    sink.append("\n")
                elif tag in (W + "delText", W + "instrText", W + "del", W + "moveFrom"):
                    continue
                elif tag == W + "noBreakHyphen":
                    sink.append("-")
                elif tag == W + "footnoteReference":
                    sink.append(note(f"[^{child.get(W + 'id')}]"))
                elif tag == W + "endnoteReference":
                    sink.append(note(f"[^e{child.get(W + 'id')}]"))
                elif tag == W + "txbxContent":
                    self.framed += 1
                    try:
                        text = self.block_text(child)
                    finally:
                        self.framed -= 1
                    if text.strip():
                        boxes.append(text.strip())
                elif tag == WP_DOCPR:
                    alt = child.get("descr") or child.get("title") or alt
                elif tag == A_BLIP:
                    rid = child.get(R_EMBED) or child.get(R_LINK)
                    if rid:
                        sink.append(self.image_marker(rid, alt))
                        alt = None
                elif tag == V_IMAGEDATA:
                    rid = child.get(R_ID)
                    if rid:
                        sink.append(self.image_marker(rid, child.get("title")))
                elif tag == C_CHART:
                    rid = child.get(R_ID)
                    if rid:
                        sink.append("\n" + self.chart_marker(rid) + "\n")
                else:
                    walk(child, sink)

        walk(el, out)
        flush()
        return "".join(out)

    def paragraph(self, p) -> str:
        boxes: list[str] = []
        ppr = p.find(W + "pPr")
        pstyle_el = ppr.find(W + "pStyle") if ppr is not None else None
        pstyle = pstyle_el.get(W + "val") if pstyle_el is not None else None
        text = self.inline_text(p, boxes, pstyle)
        prefix = ""
        if ppr is not None:
            style = ppr.find(W + "pStyle")
            style_name = (
                self.style_names.get(style.get(W + "val"), style.get(W + "val"))
                if style is not None
                else ""
            )
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
                depth = (
                    int(ilvl.get(W + "val", "0"))
                    if ilvl is not None and (ilvl.get(W + "val") or "0").isdigit()
                    else 0
                )
                prefix = "  " * depth + "- "
        line = prefix + text if text.strip() else text.strip()
        for box in boxes:
            line += "\n" + note("[text box]") + f"\n{box}\n" + note("[end text box]")
        return line

    def table(self, tbl) -> str:
        self.framed += 1
        try:
            return self._table(tbl)
        finally:
            self.framed -= 1

    def _table(self, tbl) -> str:
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
                    self.framed += 1
                    rows = [
                        note(" | ").join(
                            self.block_text(tc, nested=True).strip().replace("\n", " ")
                            for tc in tr.findall(W + "tc")
                        )
                        for tr in child.findall(W + "tr")
                    ]
                    self.framed -= 1
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


def _notes_part(
    doc, suffix: str, ctx: Context, styles: Styles, white_visible: bool
) -> list[tuple[str, str]]:
    """(id, text) of footnotes/endnotes/comments parts found in the package."""
    out = []
    for part in doc.part.package.iter_parts():
        if str(part.partname).endswith(suffix):
            try:
                root = parse_xml(part.blob)
            except etree.XMLSyntaxError:
                ctx.warn(f"{part.partname}: unreadable XML")
                continue
            walker = _Doc(part, ctx, "", styles, white_visible)
            for note in root:
                if not isinstance(note.tag, str):
                    continue
                if note.get(W + "type") in (
                    "separator",
                    "continuationSeparator",
                    "continuationNotice",
                ):
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
    try:
        styles = Styles(doc.styles.element)
    except Exception:  # noqa: BLE001 - a broken style part: direct formatting still counts
        styles = Styles(None)
    background = doc.element.find(W + "background")
    page = (background.get(W + "color") or "FFFFFF").upper() if background is not None else "FFFFFF"
    white_visible = not is_white(page)
    walker = _Doc(doc.part, ctx, ctx.rel, styles, white_visible)
    try:
        walker.style_names = {s.style_id: s.name for s in doc.styles if s.style_id and s.name}
    except Exception:  # noqa: BLE001 - style table is optional
        walker.style_names = {}
    body = walker.block_text(doc.element.body)
    parts = []
    seen: set[str] = set()
    for section in doc.sections:
        for label, hf in (
            ("header", section.header),
            ("first-page header", section.first_page_header),
            ("even-page header", section.even_page_header),
            ("footer", section.footer),
            ("first-page footer", section.first_page_footer),
            ("even-page footer", section.even_page_footer),
        ):
            try:
                if hf.is_linked_to_previous:
                    continue
                hw = _Doc(hf.part, ctx, ctx.rel, styles, white_visible)
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
    for suffix, title, mark in (
        ("/footnotes.xml", "Footnotes", "^"),
        ("/endnotes.xml", "Endnotes", "^e"),
        ("/comments.xml", "Comments", "comment "),
    ):
        notes = _notes_part(doc, suffix, ctx, styles, white_visible)
        if notes:
            out.append(
                note(f"{title}:")
                + "\n"
                + "\n".join(note(f"[{mark}{nid}] ") + text for nid, text in notes)
            )
    return "\n\n".join(o for o in out if o.strip()) + "\n"


def _collapse_blank(text: str) -> str:
    lines = text.split("\n")
    out: list[str] = []
    for ln in lines:
        if not ln.strip() and out and not out[-1].strip():
            continue
        out.append(ln.rstrip())
    return "\n".join(out).strip()
