"""A streaming SpreadsheetML reader: one pass per worksheet yields, for every cell, its
formula and its stored value (openpyxl needs two full loads for that).

Facts used (ECMA-376 Part 1, §18 SpreadsheetML, and Part 2 (OPC) for relationships):

* the package relationship ``_rels/.rels`` names the workbook part (``officeDocument``);
  ``workbook.xml`` lists ``sheet`` elements (``name``, ``state``, ``r:id``) resolved through
  the workbook part's ``.rels`` to worksheet or chartsheet parts; ``workbookPr/@date1904``
  selects the 1904 date system; ``definedNames/definedName`` holds named ranges (§18.2);
* a cell ``c`` has ``r`` (A1 reference, optional), ``t`` (``n`` default, ``s`` shared
  string index, ``str`` formula string, ``inlineStr`` with ``is``, ``b`` boolean, ``e``
  error, ``d`` ISO 8601 date), ``s`` (index into ``cellXfs``), an optional ``f`` (formula;
  ``t="shared"`` with ``si``/``ref``, ``t="array"`` with ``ref``, ``t="dataTable"``) and
  ``v`` (the stored value) (§18.3.1.4, §18.3.1.40);
* shared strings are ``sst/si`` with text in ``t`` descendants, phonetic runs ``rPh``
  excluded (§18.4); styles map ``cellXfs/xf/@numFmtId`` to ``numFmts/numFmt/@formatCode``
  or to a built-in format (§18.8.30, built-in ids as listed by openpyxl).

Both the transitional and the strict (``purl.oclc.org``) namespaces are accepted.
"""

from __future__ import annotations

import functools
import posixpath
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field

from lxml import etree

_PARSER_KW = dict(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
_CELL_RE = re.compile(r"^\$?([A-Za-z]{1,3})\$?([0-9]+)$")


def _local(tag) -> str:
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


def _parse(zf: zipfile.ZipFile, name: str):
    with zf.open(name) as f:
        return etree.parse(f, etree.XMLParser(**_PARSER_KW)).getroot()


def _find(el, local: str):
    for child in el:
        if _local(child.tag) == local:
            return child
    return None


def _rels(zf: zipfile.ZipFile, part: str) -> dict[str | None, tuple[str, str]]:
    """``{rId: (type, target part)}`` of ``part``'s relationships."""
    folder, base = posixpath.split(part)
    rels_name = posixpath.join(folder, "_rels", base + ".rels")
    if rels_name not in zf.namelist():
        return {}
    out = {}
    for rel in _parse(zf, rels_name):
        target = rel.get("Target") or ""
        if rel.get("TargetMode") == "External":
            continue
        path = (
            target.lstrip("/")
            if target.startswith("/")
            else posixpath.normpath(posixpath.join(folder, target))
        )
        out[rel.get("Id")] = (rel.get("Type") or "", path)
    return out


_col_cache: dict[str, int] = {}


def col_index(letters: str) -> int:
    """``A`` → 1, ``AB`` → 28."""
    idx = _col_cache.get(letters)
    if idx is None:
        idx = 0
        for ch in letters.upper():
            idx = idx * 26 + (ord(ch) - 64)
        _col_cache[letters] = idx
    return idx


_letter_cache: dict[int, str] = {}


def col_letters(idx: int) -> str:
    """1 → ``A``, 28 → ``AB``."""
    s = _letter_cache.get(idx)
    if s is None:
        n, s = idx, ""
        while n:
            n, rem = divmod(n - 1, 26)
            s = chr(65 + rem) + s
        _letter_cache[idx] = s
    return s


@dataclass
class SheetInfo:
    name: str
    state: str
    part: str | None
    chartsheet: bool = False


@dataclass
class Package:
    """Workbook-level facts: sheets, date system, names, shared strings, number formats."""

    sheets: list[SheetInfo]
    date1904: bool
    defined_names: list[tuple[str, str]]
    strings: list[str] = field(default_factory=list)
    formats: list[str] = field(default_factory=list)
    unreadable: list[str | None] = field(default_factory=list)
    """Per ``cellXfs`` entry: why text in that style cannot be read (``"white text"``,
    ``"text in its fill colour"``), or None."""


def read_package(zf: zipfile.ZipFile) -> Package:
    """Read the workbook part, its relationships, shared strings and styles.

    Raises:
        KeyError / lxml.etree.XMLSyntaxError / ValueError: not a readable workbook.
    """
    from openpyxl.styles.numbers import BUILTIN_FORMATS

    root_rels = _rels(zf, "")  # _rels/.rels
    wb_part = next(
        (t for typ, t in root_rels.values() if typ.endswith("/officeDocument")), "xl/workbook.xml"
    )
    wb = _parse(zf, wb_part)
    rels = _rels(zf, wb_part)
    pr = _find(wb, "workbookPr")
    date1904 = pr is not None and (pr.get("date1904") or "").lower() in ("1", "true")
    sheets: list[SheetInfo] = []
    sheets_el = _find(wb, "sheets")
    for sh in sheets_el if sheets_el is not None else []:
        if _local(sh.tag) != "sheet":
            continue
        rid = next((v for k, v in sh.attrib.items() if _local(k) == "id"), None)
        typ, part = rels.get(rid) or ("", None)
        sheets.append(
            SheetInfo(
                name=sh.get("name") or "?",
                state=sh.get("state") or "visible",
                part=part if part in zf.namelist() else None,
                chartsheet=typ.endswith("/chartsheet"),
            )
        )
    names = []
    dn = _find(wb, "definedNames")
    for el in dn if dn is not None else []:
        if _local(el.tag) == "definedName" and not (el.get("name") or "").startswith("_xlnm."):
            names.append((el.get("name") or "", (el.text or "").strip()))
    pkg = Package(sheets=sheets, date1904=date1904, defined_names=names)
    for typ, part in rels.values():
        if typ.endswith("/sharedStrings") and part in zf.namelist():
            pkg.strings = _shared_strings(zf, part)
        elif typ.endswith("/styles") and part in zf.namelist():
            pkg.formats, pkg.unreadable = _cell_formats(zf, part, BUILTIN_FORMATS)
    return pkg


def _shared_strings(zf: zipfile.ZipFile, part: str) -> list[str]:
    out: list[str] = []
    with zf.open(part) as f:
        for _ev, si in etree.iterparse(f, events=("end",), tag="{*}si", **_PARSER_KW):
            parts = []
            for el in si.iter():
                if _local(el.tag) == "t":
                    parent = el.getparent()
                    if parent is not None and _local(parent.tag) == "rPh":
                        continue
                    parts.append(el.text or "")
            out.append("".join(parts))
            si.clear()
    return out


_INDEXED = {0: "000000", 1: "FFFFFF", 2: "FF0000", 3: "00FF00", 4: "0000FF", 5: "FFFF00"}
_INDEXED.update({6: "FF00FF", 7: "00FFFF", 8: "000000", 9: "FFFFFF", 64: "000000"})
_THEME = {0: "FFFFFF", 1: "000000"}


def _colour(el, palette: dict[int, str]) -> str | None:
    """An ``RRGGBB`` for a ``color`` / ``fgColor`` element, or None when unknown.

    ``rgb`` is ``AARRGGBB``; ``indexed`` looks up ``palette`` (the workbook's own
    ``colors/indexedColors`` when it has one, else the legacy entries 0–9 and 64, §18.8.27);
    ``theme`` 0 and 1 are the light and dark text colours of the default Office
    theme (white, black) and are used only without a noticeable ``tint``; anything else is
    unknown (never treated as hidden).
    """
    if el is None:
        return None
    rgb = el.get("rgb")
    if rgb:
        return rgb[-6:].upper()
    try:
        if el.get("indexed") is not None:
            return palette.get(int(el.get("indexed")))
        if el.get("theme") is not None:
            if abs(float(el.get("tint") or 0)) > 0.2:
                return None
            return _THEME.get(int(el.get("theme")))
    except ValueError:
        return None
    return None


def _children(root, local: str) -> list:
    el = _find(root, local)
    return [c for c in el] if el is not None else []


def _cell_formats(
    zf: zipfile.ZipFile, part: str, builtin: dict
) -> tuple[list[str], list[str | None]]:
    """Per ``cellXfs/xf``: its number format code and why its text is unreadable (font
    colour equal to the fill colour, white on an unfilled cell), else None (§18.8.22
    ``font/color``, §18.8.32 ``patternFill/fgColor`` of a ``solid`` fill)."""
    from ._hidden import is_white, same_colour

    root = _parse(zf, part)
    custom = {}
    for el in _children(root, "numFmts"):
        try:
            custom[int(el.get("numFmtId"))] = el.get("formatCode") or "General"
        except (TypeError, ValueError):
            continue
    palette = dict(_INDEXED)
    colors = _find(root, "colors")
    if colors is not None:
        own = [(c.get("rgb") or "")[-6:].upper() for c in _children(colors, "indexedColors")]
        palette.update({k: v for k, v in enumerate(own) if len(v) == 6})
    font_colours = []
    for font in _children(root, "fonts"):
        color = _find(font, "color")
        font_colours.append("000000" if color is None else _colour(color, palette))
    fill_colours: list[str | None] = []
    for fill in _children(root, "fills"):
        pattern = _find(fill, "patternFill")
        kind = (pattern.get("patternType") or "none") if pattern is not None else "none"
        if kind == "none":
            fill_colours.append("FFFFFF")
        elif kind == "solid":
            fill_colours.append(_colour(_find(pattern, "fgColor"), palette))
        else:
            fill_colours.append(None)  # patterns and gradients: not judged
    formats: list[str] = []
    unreadable: list[str | None] = []
    for xf in _children(root, "cellXfs"):
        try:
            fid = int(xf.get("numFmtId") or 0)
            font_id = int(xf.get("fontId") or 0)
            fill_id = int(xf.get("fillId") or 0)
        except ValueError:
            fid, font_id, fill_id = 0, -1, -1
        formats.append(custom.get(fid) or builtin.get(fid) or "General")
        fg = font_colours[font_id] if 0 <= font_id < len(font_colours) else None
        bg = fill_colours[fill_id] if 0 <= fill_id < len(fill_colours) else None
        why = None
        if same_colour(fg, bg):
            why = "white text" if is_white(bg) else "text in its fill colour"
        unreadable.append(why)
    return formats, unreadable


@functools.lru_cache(maxsize=256)
def _sections(fmt: str) -> tuple[str, ...]:
    """A number format code split at ``;`` outside quotes and ``\\`` escapes (cached: it is
    asked once per cell, and a workbook has few formats)."""
    out, cur, quoted, i = [], [], False, 0
    while i < len(fmt):
        ch = fmt[i]
        if ch == "\\" and not quoted and i + 1 < len(fmt):
            cur.append(fmt[i : i + 2])
            i += 2
            continue
        if ch == '"':
            quoted = not quoted
        if ch == ";" and not quoted:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    out.append("".join(cur))
    return tuple(out)


def format_hides(fmt: str, value: object) -> bool:
    """True when number format ``fmt`` shows nothing of ``value`` (§18.8.31: up to four
    sections, positive; negative; zero; text): a number whose section is empty (``;;;``),
    or text when a text section exists and is empty or lacks ``@`` (shows other text)."""
    if ";" not in fmt:
        return False
    secs = _sections(fmt)
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        if value > 0 or len(secs) < 2:
            sec = secs[0]
        elif value < 0:
            sec = secs[1]
        else:
            sec = secs[2] if len(secs) >= 3 else secs[0]
        return sec.strip() == ""
    if isinstance(value, str) and len(secs) >= 4:
        return "@" not in secs[3].replace('"@"', "")
    return False


@dataclass
class RawCell:
    """One cell as stored: ``formula`` is the text without ``=`` (``None`` for constants);
    ``value`` is the decoded stored value (for formula cells: the cached result)."""

    row: int
    col: int
    coord: str
    formula: str | None
    formula_kind: str
    array_ref: str | None
    value: object
    data_type: str
    number_format: str
    hidden: str | None = None


def iter_cells(zf: zipfile.ZipFile, part: str, pkg: Package) -> Iterator[RawCell]:
    """Every non-empty cell of a worksheet part, in file order, with shared formulas
    expanded to each cell (translated from their master cell). A cell in a hidden row
    (``row/@hidden``) or hidden column (``cols/col/@hidden`` over ``min``–``max``,
    §18.3.1.13) has ``hidden`` set to ``"hidden row"`` / ``"hidden column"``.

    Raises:
        lxml.etree.XMLSyntaxError: malformed sheet XML.
    """
    from openpyxl.formula.translate import Translator

    shared: dict[str, tuple[str, str]] = {}
    translators: dict[str, Translator] = {}
    strings, formats = pkg.strings, pkg.formats
    row_no = 0
    col_no = 0
    row_hidden = False
    hidden_cols: list[tuple[int, int]] = []
    ns = None
    row_tag = v_tag = f_tag = is_tag = col_tag = ""
    with zf.open(part) as f:
        tags = ("{*}row", "{*}c", "{*}col")
        for ev, el in etree.iterparse(f, events=("start", "end"), tag=tags, **_PARSER_KW):
            if ns is None:  # the sheet's namespace (transitional or strict), fixed for the part
                ns = el.tag.rpartition("}")[0] + "}" if el.tag.startswith("{") else ""
                row_tag, v_tag, f_tag, is_tag = ns + "row", ns + "v", ns + "f", ns + "is"
                col_tag = ns + "col"
            if el.tag == col_tag:
                if ev == "end" and (el.get("hidden") or "").lower() in ("1", "true"):
                    lo, hi = el.get("min") or "", el.get("max") or el.get("min") or ""
                    if lo.isdigit() and hi.isdigit():
                        hidden_cols.append((int(lo), int(hi)))
                continue
            if el.tag == row_tag:
                if ev == "start":
                    r = el.get("r")
                    row_no = int(r) if r and r.isdigit() else row_no + 1
                    col_no = 0
                    row_hidden = (el.get("hidden") or "").lower() in ("1", "true")
                else:
                    el.clear()
                    parent = el.getparent()
                    if parent is not None:
                        while el.getprevious() is not None:
                            del parent[0]
                continue
            if ev != "end":
                continue
            ref = el.get("r")
            m = _CELL_RE.match(ref) if ref else None
            if m:
                letters = m.group(1).upper()
                col_no = col_index(letters)
                row = int(m.group(2))
            else:
                col_no += 1
                letters = col_letters(col_no)
                row = row_no
            coord = f"{letters}{row}"
            t = el.get("t") or "n"
            s = el.get("s")
            fmt = "General"
            unreadable = None
            if s is not None and formats:
                try:
                    fmt = formats[int(s)]
                    unreadable = pkg.unreadable[int(s)]
                except (ValueError, IndexError):
                    fmt = "General"
            formula = None
            fkind = ""
            array_ref = None
            raw_v = None
            inline = None
            for child in el:
                ctag = child.tag
                if ctag == v_tag:
                    raw_v = child.text
                elif ctag == f_tag:
                    fkind = child.get("t") or "normal"
                    text = child.text
                    if fkind == "shared":
                        si = child.get("si")
                        if text:
                            shared[si] = (text, coord)
                            formula = text
                        elif si in shared:
                            master_text, master_coord = shared[si]
                            tr = translators.get(si)
                            if tr is None:
                                tr = translators[si] = Translator(
                                    "=" + master_text, origin=master_coord
                                )
                            try:
                                formula = tr.translate_formula(coord)[1:]
                            except Exception:  # noqa: BLE001 - keep the master text if translation fails
                                formula = master_text
                        else:
                            formula = ""
                    elif fkind == "array":
                        array_ref = child.get("ref")
                        formula = text or ""
                    elif fkind == "dataTable":
                        formula = text or "TABLE()"
                    else:
                        formula = text or ""
                elif ctag == is_tag:
                    inline = "".join(
                        x.text or ""
                        for x in child.iter()
                        if _local(x.tag) == "t" and _local(x.getparent().tag) != "rPh"
                    )
            el.clear()
            if raw_v is None and inline is None and formula is None:
                continue
            value: object
            if t == "s":
                try:
                    value = strings[int(raw_v)] if raw_v is not None else None
                except (ValueError, IndexError):
                    value = None
            elif t == "inlineStr":
                value = inline if inline is not None else raw_v
            elif t == "str":
                value = raw_v if raw_v is not None else None
            elif t == "b":
                value = None if raw_v is None else raw_v.strip() in ("1", "true")
            elif t == "e":
                value = raw_v
            elif t == "d":
                value = _iso_date(raw_v)
            else:
                value = _number(raw_v)
            if formula is None and value is None:
                continue
            hidden = (
                "hidden row"
                if row_hidden
                else (
                    "hidden column" if any(lo <= col_no <= hi for lo, hi in hidden_cols) else None
                )
            )
            if hidden is None and t not in ("b", "e"):
                if unreadable is not None and value not in (None, ""):
                    hidden = unreadable
                elif format_hides(fmt, value):
                    hidden = "number format hides the value"
            yield RawCell(
                row=row,
                col=col_no,
                coord=coord,
                formula=formula,
                formula_kind=fkind,
                array_ref=array_ref,
                value=value,
                data_type=t,
                number_format=fmt,
                hidden=hidden,
            )


def _number(text: str | None):
    if text is None or text == "":
        return None
    try:
        if text.lstrip("-").isdigit():
            return int(text)
        return float(text)
    except ValueError:
        return text


def _iso_date(text: str | None):
    import datetime as dt

    if not text:
        return None
    try:
        return dt.datetime.fromisoformat(text.replace("Z", ""))
    except ValueError:
        return text
