"""Helpers shared by the Office Open XML readers (xlsx, docx, pptx): a safe XML parser and
a chart summariser that reads the data cached inside DrawingML chart parts.

Facts used: ECMA-376 Part 1 §21.2 (DrawingML charts): ``c:chartSpace/c:chart`` holds an
optional ``c:title`` and a ``c:plotArea`` whose ``c:*Chart`` children contain ``c:ser``
series; a series names itself in ``c:tx``, its categories in ``c:cat`` (or ``c:xVal``) and
its values in ``c:val`` (or ``c:yVal``), each as a reference ``c:f`` plus a cache of
``c:pt/c:v`` points.
"""

from __future__ import annotations

from lxml import etree

from ._notes import note

NS = {
    "c": "http://schemas.openxmlformats.org/drawingml/2006/chart",
    "a": "http://schemas.openxmlformats.org/drawingml/2006/main",
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "w": "http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    "mc": "http://schemas.openxmlformats.org/markup-compatibility/2006",
    "wp": "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing",
    "v": "urn:schemas-microsoft-com:vml",
    "p": "http://schemas.openxmlformats.org/presentationml/2006/main",
    "x": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
}

MAX_POINTS = 60
"""Data points shown per chart series."""


def parse_xml(data: bytes) -> etree._Element:
    """Parse untrusted XML: no entity expansion, no network, no DTD loading.

    Raises:
        lxml.etree.XMLSyntaxError: malformed XML.
    """
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )
    return etree.fromstring(data, parser=parser)


def _texts(el, path: str) -> str:
    return "".join(el.xpath(path, namespaces=NS)).strip()


def _points(el) -> list[str]:
    if el is None:
        return []
    pts = el.xpath(".//c:pt", namespaces=NS)
    out = []
    for pt in sorted(pts, key=lambda p: int(p.get("idx", "0"))):
        out.append(_texts(pt, "./c:v/text()"))
    return out


def _fmt_num(s: str) -> str:
    try:
        f = float(s)
    except ValueError:
        return s
    if f.is_integer() and abs(f) < 2**53:
        return str(int(f))
    return format(f, ".10g")


def chart_summary(data: bytes, *, cached_points: bool = True) -> str:
    """One readable block for a chart part: title, chart types, axis titles, and every
    series with its reference and cached points (categories paired with values).

    ``cached_points=False``: the points of a series that refers to cells (``c:f``), and its
    name when that refers to a cell, are annotation, not content (in a workbook the chart is
    drawn from those cells, which are content themselves; the cache may be stale). An axis
    marked deleted (``c:delete``) is left out with its title.

    Returns ``[chart: unreadable]`` for malformed XML instead of raising.
    """
    try:
        root = parse_xml(data)
    except etree.XMLSyntaxError:
        return note("[chart: unreadable chart XML]")
    chart = root.find("c:chart", NS)
    if chart is None:
        return note("[chart]")
    title = _texts(chart, "./c:title//a:t/text()")
    plot = chart.find("c:plotArea", NS)
    types = []
    series_lines = []
    axes = []
    if plot is not None:
        for child in plot:
            tag = etree.QName(child).localname
            if tag.endswith("Chart"):
                kind = tag[:-5]
                if kind == "bar":
                    bar_dir = child.find("c:barDir", NS)
                    kind = (
                        "column" if bar_dir is not None and bar_dir.get("val") == "col" else "bar"
                    )
                types.append(kind)
                for ser in child.findall("c:ser", NS):
                    name = _texts(ser, "./c:tx//c:v/text()") or _texts(ser, "./c:tx//c:f/text()")
                    cat_el = ser.find("c:cat", NS)
                    if cat_el is None:
                        cat_el = ser.find("c:xVal", NS)
                    val_el = ser.find("c:val", NS)
                    if val_el is None:
                        val_el = ser.find("c:yVal", NS)
                    ref = _texts(val_el, ".//c:f/text()") if val_el is not None else ""
                    cats = _points(cat_el)
                    vals = [_fmt_num(v) for v in _points(val_el)]
                    if cats and len(cats) == len(vals):
                        pairs = [f"{c}={v}" for c, v in zip(cats, vals)]
                    else:
                        pairs = vals
                    more = (
                        note(f", … ({len(pairs) - MAX_POINTS} more)")
                        if len(pairs) > MAX_POINTS
                        else ""
                    )
                    # a name or categories taken from cells are cached copies too
                    name_from_cells = bool(_texts(ser, "./c:tx//c:f/text()"))
                    if name and name_from_cells and not cached_points:
                        name = note(name)
                    label = note('  series "') + name + note('"') if name else note("  series")
                    points = ", ".join(pairs[:MAX_POINTS])
                    if ref and not cached_points:
                        points = note(points)
                    series_lines.append(
                        label + (note(f" ({ref})") if ref else "") + ": " + points + more
                    )
            elif tag.endswith("Ax"):
                deleted = child.find("c:delete", NS)
                if deleted is not None and deleted.get("val") in ("1", "true"):
                    continue  # a deleted axis draws neither itself nor its title
                t = _texts(child, "./c:title//a:t/text()")
                if t:
                    axes.append(
                        note(f'{"x" if tag in ("catAx", "dateAx") else "y"} axis "') + t + note('"')
                    )
    head = note("[chart" + (': "' if title else "")) + (title + note('"') if title else "")
    head += note(f" ({', '.join(types)} chart)") if types else ""
    if axes:
        head += note("; ") + note("; ").join(axes)
    head += note("]")
    return "\n".join([head] + series_lines)
