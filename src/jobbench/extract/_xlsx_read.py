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

import io
import posixpath
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import unescape

from lxml import etree

from ._xlsx_style import (  # the XML helpers are shared with the style reader
    SHEET_WHITE,
    Look,
    Palette,
    _children,
    _find,
    _local,
    fill_colour,
    font_look,
    read_theme,
)

_PARSER_KW = dict(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
_CELL_RE = re.compile(r"^\$?([A-Za-z]{1,3})\$?([0-9]+)$")


def _parse(zf: zipfile.ZipFile, name: str):
    with zf.open(name) as f:
        return etree.parse(f, etree.XMLParser(**_PARSER_KW)).getroot()


def _release(el) -> None:
    """Free a streamed element and the siblings parsed before it (iterparse keeps them)."""
    el.clear()
    parent = el.getparent()
    if parent is not None:
        while el.getprevious() is not None:
            del parent[0]


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
    runs: dict[int, list[Run]] = field(default_factory=dict)
    """Shared strings (by index) with runs of their own colour or size (rich text)."""
    looks: list[Look] = field(default_factory=list)
    """One per ``cellXfs`` entry (see :mod:`._xlsx_style`)."""
    dxfs: list = field(default_factory=list)
    """The ``dxfs/dxf`` elements (conditional formats' styles), laid over a cell's own look
    by :func:`over`."""
    palette: Palette = field(default_factory=Palette)

    def look(self, s: str | None) -> Look:
        """The look of style index ``s`` (``c/@s``; absent, negative or out of range: 0)."""
        try:
            i = int(s) if s is not None else 0
        except ValueError:
            i = 0
        if not 0 <= i < len(self.looks):
            i = 0
        return self.looks[i]


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
    parts = {typ.rpartition("/")[2]: part for typ, part in rels.values() if part in zf.namelist()}
    palette = Palette()
    if "theme" in parts:
        palette.theme.update(read_theme(_parse(zf, parts["theme"])))
    if "styles" in parts:
        _read_styles(zf, parts["styles"], BUILTIN_FORMATS, palette, pkg)
    pkg.palette = palette
    if not pkg.looks:
        pkg.looks = [Look("General", "000000", SHEET_WHITE, None, palette)]
    if "sharedStrings" in parts:
        pkg.strings, pkg.runs = _shared_strings(zf, parts["sharedStrings"], palette)
    return pkg


@dataclass(frozen=True)
class Run:
    """A run of rich text: its text, and the colour and size its ``rPr`` states (None: the
    cell's own)."""

    text: str
    colour: str | None
    size: float | None
    styled: bool


def _runs(si, palette: Palette) -> tuple[str, list[Run] | None]:
    """The text of a shared string ``si`` or an inline ``is`` (phonetic ``rPh`` left out),
    and its runs when some run states its own colour or size (else None)."""
    if len(si) == 1 and _local(si[0].tag) == "t":  # plain text: the common case
        return si[0].text or "", None
    parts: list[str] = []
    runs: list[Run] = []
    styled = False
    for child in si:
        kind = _local(child.tag)
        if kind == "t":
            parts.append(child.text or "")
            runs.append(Run(child.text or "", None, None, False))
        elif kind == "r":
            text = "".join(t.text or "" for t in child if _local(t.tag) == "t")
            parts.append(text)
            rpr = _find(child, "rPr")
            if rpr is None:
                runs.append(Run(text, None, None, False))
                continue
            colour, size = font_look(rpr, palette)
            has_colour = any(_local(c.tag) == "color" for c in rpr)
            styled = True
            runs.append(Run(text, colour if has_colour else None, size, True))
    return "".join(parts), (runs if styled else None)


def _shared_strings(
    zf: zipfile.ZipFile, part: str, palette: Palette
) -> tuple[list[str], dict[int, list[Run]]]:
    out: list[str] = []
    rich: dict[int, list[Run]] = {}
    with zf.open(part) as f:
        for _ev, si in etree.iterparse(f, events=("end",), tag="{*}si", **_PARSER_KW):
            text, runs = _runs(si, palette)
            if runs is not None:
                rich[len(out)] = runs
            out.append(text)
            si.clear()
    return out, rich


def _read_styles(zf: zipfile.ZipFile, part: str, builtin: dict, palette: Palette, pkg) -> None:
    """Fill ``pkg.looks`` (per ``cellXfs/xf``: its number format, font colour and size and
    fill colour) and ``pkg.dxfs``; ``palette`` takes the workbook's own
    ``colors/indexedColors`` (§18.8.27)."""
    root = _parse(zf, part)
    custom: dict[int, str] = {}
    for el in _children(root, "numFmts"):
        try:  # the first of two formats with one id counts, as in LibreOffice
            custom.setdefault(int(el.get("numFmtId")), el.get("formatCode") or "General")
        except (TypeError, ValueError):
            continue
    colors = _find(root, "colors")
    if colors is not None:
        own = [(c.get("rgb") or "")[-6:].upper() for c in _children(colors, "indexedColors")]
        palette.indexed.update({k: v for k, v in enumerate(own) if len(v) == 6})
    fonts = [font_look(font, palette) for font in _children(root, "fonts")]
    fills = [fill_colour(fill, palette) for fill in _children(root, "fills")]
    looks: list[Look] = []
    for xf in _children(root, "cellXfs"):
        try:
            fid = int(xf.get("numFmtId") or 0)
            font_id = int(xf.get("fontId") or 0)
            fill_id = int(xf.get("fillId") or 0)
        except ValueError:
            fid, font_id, fill_id = 0, -1, -1
        fmt = custom.get(fid) or builtin.get(fid) or "General"
        colour, size = fonts[font_id] if 0 <= font_id < len(fonts) else (None, None)
        bg = fills[fill_id] if 0 <= fill_id < len(fills) else None
        looks.append(Look(fmt, colour, bg, size, palette))
    pkg.looks = looks
    pkg.dxfs = _children(root, "dxfs")
    pkg.palette = palette


def over(look: Look, dxf, builtin: dict | None = None) -> Look:
    """``look`` with a conditional format's ``dxf`` laid over it (its font colour and size,
    fill and number format where it states them, §18.8.17)."""
    colour, size, fill, fmt = look.font, look.size, look.fill, look.number_format
    font = _find(dxf, "font")
    if font is not None:
        c, sz = font_look(font, look.palette)
        if any(_local(x.tag) == "color" for x in font):
            colour = c
        size = sz if sz is not None else size
    fill_el = _find(dxf, "fill")
    if fill_el is not None:
        fill = fill_colour(fill_el, look.palette, differential=True)
    num = _find(dxf, "numFmt")
    if num is not None and num.get("formatCode") is not None:
        fmt = num.get("formatCode") or "General"
    return Look(fmt, colour, fill, size, look.palette)


@dataclass(slots=True)
class RawCell:
    """One cell as stored: ``formula`` is the text without ``=`` (``None`` for constants);
    ``value`` is the decoded stored value (for formula cells: the cached result; for rich
    text: the runs a reader can see). ``hidden``: why a reader cannot see the cell (its row
    or column, or, for a constant, its style), else None; ``hidden_runs``: ``(why, text)``
    of rich-text runs a reader cannot see. A formula cell's style is judged on its final
    value by the caller, with ``look``."""

    row: int
    col: int
    coord: str
    formula: str | None
    formula_kind: str
    array_ref: str | None
    value: object
    data_type: str
    number_format: str
    look: Look
    hidden: str | None = None
    hidden_runs: list[tuple[str, str]] | None = None


Box = tuple[int, int, int, int]
"""A cell range ``(first row, first column, last row, last column)``, 1-based, inclusive."""

LAYOUT_MAX_RANGES = 100_000
"""Merged ranges and conditional formats read per sheet. A sheet with more has all its
cells marked hidden (fail closed: a rule past the limit could hide any of them)."""
LAYOUT_MAX_STEPS = 10_000_000
"""Cells visited per sheet to apply merged ranges and conditional formats (past it, as
past :data:`LAYOUT_MAX_RANGES`)."""
LAYOUT_TOO_LARGE = "too many merged ranges or conditional formats to check"
ARRAY_MAX = 1_000
"""Array formulas per sheet whose member cells are read as formula cells."""

_CELL_IS = {
    "equal": lambda v, a, b: v == a,
    "notEqual": lambda v, a, b: v != a,
    "greaterThan": lambda v, a, b: v > a,
    "lessThan": lambda v, a, b: v < a,
    "greaterThanOrEqual": lambda v, a, b: v >= a,
    "lessThanOrEqual": lambda v, a, b: v <= a,
    "between": lambda v, a, b: b is not None and min(a, b) <= v <= max(a, b),
    "notBetween": lambda v, a, b: b is not None and not min(a, b) <= v <= max(a, b),
}
_ISERROR_RE = re.compile(r"^\s*=?\s*ISERR(?:OR)?\(\s*([A-Za-z]{1,3}[0-9]+)\s*\)\s*$")
"""``ISERROR(<relative reference>)``: evaluated only when the reference is the rule's first
cell (then it names each cell of the range itself); ``$`` references name one fixed cell."""


@dataclass
class Rule:
    """One conditional-format rule that can hide a value (§18.3.1.10 ``cfRule``; Excel
    2010's ``x14:cfRule`` in ``extLst`` alike).

    ``dxf``: the style it lays over a cell (``dxfs/dxf`` or an inline ``x14:dxf``), or None;
    ``no_value``: a ``dataBar`` / ``iconSet`` with ``showValue="0"`` (draws no value);
    ``scale``: the fill colours of a ``colorScale``; ``when``: the rule's condition on
    ``(value, is_error)`` where it can be evaluated without a formula engine (``cellIs``
    with number operands, ``containsErrors``, ``notContainsErrors``, ``containsBlanks``,
    ``ISERROR(cell)``), else None: the rule is taken to apply.
    """

    boxes: list[Box]
    dxf: object | None = None
    no_value: bool = False
    scale: list[str | None] = field(default_factory=list)
    when: Callable[[object, bool], bool] | None = None


@dataclass
class SheetLayout:
    """What can hide a worksheet's cells besides their own style: merged ranges (§18.3.1.55:
    only the first cell of a range is drawn), conditional formats, and the sheet's tables
    (``tableParts``: a table style may draw a band under white text)."""

    merged: list[Box] = field(default_factory=list)
    conditional: list[Rule] = field(default_factory=list)
    table_ids: list[str] = field(default_factory=list)
    """``tableParts/tablePart/@r:id``: the tables the sheet shows."""
    drawing_ids: list[str] = field(default_factory=list)
    """``drawing/@r:id``: the drawing the sheet shows."""
    truncated: bool = False
    ranges: int = 0
    """Ranges read so far (each merged range, each range of each rule), at most
    :data:`LAYOUT_MAX_RANGES`."""


def _box(ref: str) -> Box | None:
    a, _, b = ref.partition(":")
    ma, mb = _CELL_RE.match(a), _CELL_RE.match(b or a)
    if not ma or not mb:
        return None
    r1, c1 = int(ma.group(2)), col_index(ma.group(1).upper())
    r2, c2 = int(mb.group(2)), col_index(mb.group(1).upper())
    return min(r1, r2), min(c1, c2), max(r1, r2), max(c1, c2)


def _truthy(v: str | None) -> bool:
    return (v or "").lower() in ("1", "true")


def _float(v: str | None) -> float | None:
    try:
        return float(v) if v is not None else None
    except ValueError:
        return None


MIN_WIDTH = 1.0
"""A column narrower than this many characters shows no value (``###`` or a clipped
sliver in LibreOffice): it counts as hidden."""
MIN_HEIGHT = 1.0
"""A row with a custom height under this many points counts as hidden."""


class _Columns:
    """Which columns are hidden: ``col`` elements with ``hidden`` or a width under
    :data:`MIN_WIDTH`, and every column without a width of its own when the sheet's default
    width is 0."""

    def __init__(self) -> None:
        self.hidden: list[tuple[int, int]] = []
        self.wide: list[tuple[int, int]] = []
        self.default_zero = False
        self._memo: dict[int, bool] = {}
        self._sorted: tuple[list[int], list[int], list[int], list[int]] | None = None

    def add(self, el) -> None:
        lo, hi = el.get("min") or "", el.get("max") or el.get("min") or ""
        if not (lo.isdigit() and hi.isdigit()):
            return
        width = _float(el.get("width"))
        if _truthy(el.get("hidden")) or (width is not None and width < MIN_WIDTH):
            self.hidden.append((int(lo), int(hi)))
        elif width is not None:
            self.wide.append((int(lo), int(hi)))

    def __call__(self, col: int) -> bool:
        got = self._memo.get(col)
        if got is None:
            import bisect

            if self._sorted is None:
                h, w = sorted(self.hidden), sorted(self.wide)
                self._sorted = (
                    [a for a, _ in h],
                    _running_max(h),
                    [a for a, _ in w],
                    _running_max(w),
                )
            hs, he, ws, we = self._sorted
            i = bisect.bisect_right(hs, col)
            got = i > 0 and he[i - 1] >= col
            if not got and self.default_zero:
                j = bisect.bisect_right(ws, col)
                got = not (j > 0 and we[j - 1] >= col)
            self._memo[col] = got
        return got


def _running_max(intervals: list[tuple[int, int]]) -> list[int]:
    out, top = [], 0
    for _lo, hi in intervals:
        top = max(top, hi)
        out.append(top)
    return out


def _visible_runs(runs: list[Run], look: Look) -> tuple[str, list[tuple[str, str]]]:
    """The text of the runs a reader can see and ``(why, text)`` of the others."""
    shown: list[str] = []
    hidden: list[tuple[str, str]] = []
    for run in runs:
        why = look.text_reason(run.colour or look.font, run.size) if run.styled else None
        if why is not None and run.text.strip():
            hidden.append((why, run.text))
        else:
            shown.append(run.text)
    return "".join(shown), hidden


class _NotRegular(Exception):
    """The worksheet text leaves the shape :func:`_fast_sheet` reads (the caller then reads
    the part with lxml alone)."""


@dataclass
class _Pass:
    """The state of one pass over a worksheet part's cells (:func:`iter_cells`)."""

    pkg: Package
    layout: SheetLayout | None
    shared: dict[str | None, tuple[str, str]] = field(default_factory=dict)
    translators: dict[str | None, Any] = field(default_factory=dict)
    looks: dict[str | None, Look] = field(default_factory=dict)
    row_no: int = 0
    col_no: int = 0
    row_hidden: bool = False
    columns: _Columns = field(default_factory=_Columns)
    arrays: list[tuple[Box, str, str]] = field(default_factory=list)
    """``(range, formula, master)`` of the array formulas seen."""

    def row(self, r: str | None, ht: str | None, custom: str | None, hidden: str | None) -> None:
        """A ``row`` element starts (its ``r``, ``ht``, ``customHeight``, ``hidden``)."""
        self.row_no = int(r) if r and r.isdigit() else self.row_no + 1
        self.col_no = 0
        height = _float(ht)
        self.row_hidden = _truthy(hidden) or (
            _truthy(custom) and height is not None and height < MIN_HEIGHT
        )
        if self.arrays:
            self.arrays = [a for a in self.arrays if a[0][2] >= self.row_no]

    def place(self, ref: str | None) -> tuple[int, int, str]:
        """``(row, column, coordinate)`` of a cell with ``r`` attribute ``ref`` (None or
        unreadable: the next column of the current row)."""
        m = _CELL_RE.match(ref) if ref else None
        if m:
            letters = m.group(1).upper()
            self.col_no = col_index(letters)
            row = int(m.group(2))
        else:
            self.col_no += 1
            letters = col_letters(self.col_no)
            row = self.row_no
        return row, self.col_no, f"{letters}{row}"

    def formula(
        self, kind: str | None, text: str | None, si: str | None, ref: str | None, coord: str
    ) -> tuple[str, str, str | None]:
        """``(formula, kind, array_ref)`` of an ``f`` element (its ``t``, text, ``si``,
        ``ref``) in cell ``coord``: a shared formula's master is kept and its other cells
        translated from it; an array formula's range is kept for its member cells."""
        fkind = kind or "normal"
        array_ref = None
        if fkind == "shared":
            if text:
                self.shared[si] = (text, coord)
                formula = text
            elif si in self.shared:
                from openpyxl.formula.translate import Translator

                master_text, master_coord = self.shared[si]
                tr = self.translators.get(si)
                if tr is None:
                    tr = self.translators[si] = Translator("=" + master_text, origin=master_coord)
                try:
                    formula = tr.translate_formula(coord)[1:]
                except Exception:  # noqa: BLE001 - keep the master text if translation fails
                    formula = master_text
            else:
                formula = ""
        elif fkind == "array":
            array_ref = ref
            formula = text or ""
            box = _box(array_ref or "")
            if box is not None and box[:2] != box[2:] and len(self.arrays) < ARRAY_MAX:
                self.arrays.append((box, formula, coord))
        elif fkind == "dataTable":
            formula = text or "TABLE()"
        else:
            formula = text or ""
        return formula, fkind, array_ref

    def cell(
        self,
        row: int,
        coord: str,
        t: str | None,
        s: str | None,
        formula: str | None,
        fkind: str,
        array_ref: str | None,
        raw_v: str | None,
        inline: str | None,
        inline_runs: list[Run] | None,
    ) -> RawCell | None:
        """The :class:`RawCell` of a cell read (None: an empty cell)."""
        col_no = self.col_no
        t = t or "n"
        look = self.looks.get(s)
        if look is None:
            look = self.looks[s] = self.pkg.look(s)
        if formula is None and self.arrays:
            # a member of an array formula's range holds a value the formula computes:
            # it is a formula cell (recalculated), not a constant the file may have
            # left stale
            for (r1, c1, r2, c2), text, master in self.arrays:
                if r1 <= row <= r2 and c1 <= col_no <= c2 and coord != master:
                    formula, fkind, array_ref = text, "array", f"{master} member"
                    break
        if raw_v is None and inline is None and formula is None:
            return None
        value: object
        runs = None
        if t == "n":
            value = _number(raw_v)
        elif t == "s":
            try:
                idx = int(raw_v) if raw_v is not None else -1
                value = self.pkg.strings[idx] if idx >= 0 else None
                runs = self.pkg.runs.get(idx)
            except (ValueError, IndexError):
                value = None
        elif t == "inlineStr":
            value = inline if inline is not None else raw_v
            runs = inline_runs
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
            return None
        hidden = (
            "hidden row" if self.row_hidden else ("hidden column" if self.columns(col_no) else None)
        )
        hidden_runs = None
        if hidden is None and formula is None and not look.plain:
            hidden = look.hides(value)  # an error value is drawn like text
        if hidden is None and runs is not None:
            shown, hidden_runs = _visible_runs(runs, look)
            if hidden_runs and not shown.strip():
                hidden, hidden_runs = hidden_runs[0][0], None
            elif hidden_runs:
                value = shown
            else:
                hidden_runs = None
        return RawCell(  # by position: the fields' order
            row,
            col_no,
            coord,
            formula,
            fkind,
            array_ref,
            value,
            t,
            look.number_format,
            look,
            hidden,
            hidden_runs,
        )

    def element(self, el, v_tag: str, f_tag: str, is_tag: str) -> RawCell | None:
        """The :class:`RawCell` of a ``c`` element parsed by lxml (its children in the
        sheet's namespace: ``v_tag``, ``f_tag``, ``is_tag``); the element is cleared."""
        row, _col, coord = self.place(el.get("r"))
        t, s = el.get("t"), el.get("s")
        formula = None
        fkind = ""
        array_ref = None
        raw_v = None
        inline = None
        inline_runs = None
        for child in el:
            ctag = child.tag
            if ctag == v_tag:
                raw_v = child.text
            elif ctag == f_tag:
                formula, fkind, array_ref = self.formula(
                    child.get("t"), child.text, child.get("si"), child.get("ref"), coord
                )
            elif ctag == is_tag:
                inline, inline_runs = _runs(child, self.pkg.palette)
        el.clear()
        return self.cell(row, coord, t, s, formula, fkind, array_ref, raw_v, inline, inline_runs)


_SHEET_TAGS = (
    "{*}row",
    "{*}c",
    "{*}col",
    "{*}sheetFormatPr",
    "{*}mergeCell",
    "{*}conditionalFormatting",
    "{*}tablePart",
    "{*}drawing",
)
"""The elements :func:`iter_cells` reads, in any namespace."""


def iter_cells(
    zf: zipfile.ZipFile, part: str, pkg: Package, layout: SheetLayout | None = None
) -> Iterator[RawCell]:
    """Every non-empty cell of a worksheet part, in file order, with shared formulas
    expanded to each cell (translated from their master cell).

    A cell in a hidden row (``row/@hidden``, a custom height of 0, or no height of its own
    on a sheet whose rows are hidden by default: ``sheetFormatPr/@zeroHeight`` or a default
    height of 0) or a hidden column (``cols/col`` with ``hidden`` or width 0 over
    ``min``–``max``, or no width of its own when ``sheetFormatPr/@defaultColWidth`` is 0)
    has ``hidden`` set to ``"hidden row"`` / ``"hidden column"`` (§18.3.1.13, §18.3.1.73,
    §18.3.1.81). A constant whose style makes it invisible has the style's reason
    (:meth:`._xlsx_style.Look.hides`); rich-text runs a reader cannot see are moved from the
    value to ``hidden_runs``. Merged ranges and conditional formats, which follow the cells,
    are put in ``layout`` when given.

    A part of the regular shape :func:`_fast_sheet` accepts has its ``sheetData`` read by
    regular expressions and the rest by lxml, with the same result as lxml alone; when the
    text turns out irregular part-way, the part is read again by lxml alone, the cells
    already yielded skipped.

    Raises:
        lxml.etree.XMLSyntaxError: malformed sheet XML.
    """
    fast = _fast_sheet(zf, part)
    done = 0
    if fast is not None:
        try:
            for cell in _scan(fast[0], pkg, layout, fast[1:]):
                yield cell
                done += 1
            return
        except (_NotRegular, etree.XMLSyntaxError):
            if layout is not None:  # read again from the start
                layout.__dict__.update(SheetLayout().__dict__)
    with zf.open(part) as f:
        for i, cell in enumerate(_scan(f, pkg, layout, None)):
            if i >= done:
                yield cell


FAST_SHEET_MAX_BYTES = 64 << 20
"""Largest uncompressed worksheet part :func:`iter_cells` reads whole with regular
expressions (larger ones are streamed through lxml)."""
_MARK = b"<jobbench-cells/>"
"""Stands for the cells of ``sheetData`` in the text lxml reads in :func:`_fast_sheet`."""
_XML_DECL = re.compile(rb"<\?xml[^>]*encoding=[\"']utf-8[\"']|<\?xml(?![^>]*encoding)", re.I)
_ROOT_TAG = re.compile(rb"<(?!\?)([^>]*)>")
_NS_DECL = re.compile(rb"[ \t\r\n](xmlns(?::[A-Za-z_][\w.-]*)?)[ \t\r\n]*=[ \t\r\n]*\"([^\"<&]*)\"")
_ANY_NS_DECL = re.compile(rb"xmlns[ \t\r\n]*[:=]")
_BODY_BAD_BYTES = bytes(range(9)) + b"\x0b\x0c" + bytes(range(14, 32)) + b"\r"
"""The ASCII controls XML forbids, and the carriage return (which lxml would normalise)."""


def _fast_sheet(zf: zipfile.ZipFile, part: str) -> tuple[io.BytesIO, str, str, str] | None:
    """A worksheet part of the regular shape :func:`_scan_body` reads, split for
    :func:`_scan`: ``(the part's text with the content of its sheetData replaced by a
    marker element, as a file; that content; the root element's namespace declarations as
    attribute text; the default namespace)``, or None for another shape.

    The shape: at most :data:`FAST_SHEET_MAX_BYTES`, UTF-8 (an XML declaration, if any,
    names UTF-8 or no encoding), no comment, CDATA section, DTD or processing instruction
    but the XML declaration, every namespace declared on the root element (one default
    namespace, double-quoted), one ``<sheetData>`` element without attributes holding no
    carriage return, ``]]>`` or character XML forbids."""
    info = zf.getinfo(part)
    if info.file_size > FAST_SHEET_MAX_BYTES:
        return None
    data = zf.read(part)
    if data.startswith(b"<?xml") and not _XML_DECL.match(data):
        return None
    start = data.find(b"<sheetData>")
    end = data.find(b"</sheetData>")
    if start < 0 or end < start or data.count(b"sheetData") != 2 or b"jobbench-cells" in data:
        return None
    if b"<!" in data or data.count(b"<?") > data.startswith(b"<?xml"):
        return None
    root = _ROOT_TAG.search(data, data.find(b"?>") + 2 if data.startswith(b"<?xml") else 0)
    if root is None or root.start() > start:
        return None
    decls = _NS_DECL.findall(root.group(1))
    if len(_ANY_NS_DECL.findall(data)) != len(decls) or [n for n, _u in decls].count(b"xmlns") != 1:
        return None  # every declaration on the root (so in scope everywhere), one default
    raw = data[start + len(b"<sheetData>") : end]
    if (
        len(raw.translate(None, _BODY_BAD_BYTES)) != len(raw)
        or b"]]>" in raw
        or b"\xef\xbf\xbe" in raw  # U+FFFE, U+FFFF: not XML characters
        or b"\xef\xbf\xbf" in raw
    ):
        return None
    try:
        body = raw.decode("utf-8")
        decl_text = " ".join(f'{n.decode()}="{u.decode()}"' for n, u in decls)
        default = next(u for n, u in decls if n == b"xmlns").decode("utf-8")
    except UnicodeDecodeError:
        return None
    rest = data[: start + len(b"<sheetData>")] + _MARK + data[end:]
    return io.BytesIO(rest), body, decl_text, default


def _scan(
    source, pkg: Package, layout: SheetLayout | None, fast: tuple[str, str, str] | None
) -> Iterator[RawCell]:
    """The cells of a worksheet part read by lxml from the file ``source``; with ``fast``
    (``(sheetData content, root namespace declarations, default namespace)``, see
    :func:`_fast_sheet`), ``source`` holds a marker element in place of that content,
    whose cells :func:`_scan_body` reads where the marker stands.

    Raises:
        lxml.etree.XMLSyntaxError: malformed sheet XML.
        _NotRegular: ``fast`` content of another shape than :func:`_scan_body` reads, the
            marker's namespaces in scope other than the declarations (those found in the
            root's text were not all real ones), cells in another namespace than the first
            element lxml reported, or no marker read.
    """
    st = _Pass(pkg, layout)
    columns = st.columns
    ns = None
    row_tag = v_tag = f_tag = is_tag = c_tag = col_tag = fmt_tag = merge_tag = cf_tag = ""
    body, decls, default = fast if fast is not None else ("", "", "")
    body_ns = "{%s}" % default if default else ""
    mark_tag = body_ns + "jobbench-cells" if fast is not None else None
    marked = False
    tags = _SHEET_TAGS + (("{*}jobbench-cells",) if fast is not None else ())
    for ev, el in etree.iterparse(source, events=("start", "end"), tag=tags, **_PARSER_KW):
        tag = el.tag
        if tag == mark_tag:
            if ev == "end":
                marked = True
                if el.nsmap != _nsmap(decls):
                    raise _NotRegular("namespaces in scope other than the root's declarations")
                if not body.strip(" \t\n"):
                    continue  # no row or cell
                if ns is None:  # the first row or cell sets it
                    ns = body_ns
                    row_tag, v_tag, f_tag, is_tag = ns + "row", ns + "v", ns + "f", ns + "is"
                    c_tag, col_tag, fmt_tag = ns + "c", ns + "col", ns + "sheetFormatPr"
                    merge_tag, cf_tag = ns + "mergeCell", ns + "conditionalFormatting"
                elif ns != body_ns:
                    raise _NotRegular("cells in another namespace than the part's first element")
                yield from _scan_body(st, body, decls, v_tag, f_tag, is_tag)
            continue
        if ns is None:  # the sheet's namespace (transitional or strict), fixed for the part
            ns = tag.rpartition("}")[0] + "}" if tag.startswith("{") else ""
            row_tag, v_tag, f_tag, is_tag = ns + "row", ns + "v", ns + "f", ns + "is"
            c_tag, col_tag, fmt_tag = ns + "c", ns + "col", ns + "sheetFormatPr"
            merge_tag, cf_tag = ns + "mergeCell", ns + "conditionalFormatting"
        if tag != c_tag:  # a cell (the common case) skips the other tags' tests
            if tag == col_tag:
                if ev == "end":
                    columns.add(el)
                continue
            if tag == fmt_tag:
                # zeroHeight hides the rows the file leaves out, never the rows it writes
                # (LibreOffice and Excel show those): no row rule here
                if ev == "end":
                    columns.default_zero = _float(el.get("defaultColWidth")) == 0
                continue
            if tag.endswith("}tablePart") or tag.endswith("}drawing"):
                if ev == "end" and layout is not None:
                    rid = next((v for k, v in el.attrib.items() if _local(k) == "id"), None)
                    ids = layout.table_ids if tag.endswith("}tablePart") else layout.drawing_ids
                    if rid and len(ids) < TABLES_MAX:
                        ids.append(rid)
                continue
            if tag == merge_tag or tag == cf_tag or tag.endswith("}conditionalFormatting"):
                if ev == "end" and layout is not None:
                    if layout.ranges >= LAYOUT_MAX_RANGES:
                        layout.truncated = True
                    elif tag == merge_tag:
                        box = _box(el.get("ref") or "")
                        if box is not None:
                            layout.merged.append(box)
                            layout.ranges += 1
                    else:
                        _conditional(el, pkg, layout)
                    el.clear()
                continue
            if tag == row_tag:
                if ev == "start":
                    st.row(el.get("r"), el.get("ht"), el.get("customHeight"), el.get("hidden"))
                else:
                    _release(el)
                continue
            if ev != "end":
                continue
        elif ev != "end":
            continue
        cell = st.element(el, v_tag, f_tag, is_tag)
        if cell is not None:
            yield cell
    if fast is not None and not marked:
        raise _NotRegular("the cells' marker was not read")


def _nsmap(decls: str) -> dict[str | None, str]:
    """``{prefix (None: default): namespace}`` of namespace declarations as attribute text
    (``xmlns="…" xmlns:r="…"``, as :func:`_fast_sheet` writes them)."""
    out: dict[str | None, str] = {}
    for name, uri in re.findall(r'xmlns(?::([^=]+))?="([^"]*)"', decls):
        out[name or None] = uri
    return out


_TEXT = r"([^<]*)"
"""Element text (one with ``&`` is read by :func:`_unescape` when its every ``&`` starts one
of XML's predefined entities, else by lxml)."""
_ENTITIES = re.compile(r"[^&]*(?:&(?:amp|lt|gt|quot|apos);[^&]*)*")
_BODY_TOKEN = re.compile(
    # a cell of the common shapes: r, s, t attributes; an f, a v, an inline string
    r'<c r="([A-Z]{1,3})([1-9][0-9]{0,6})"(?: s="([0-9]{1,9})")?(?: t="([a-zA-Z]{1,9})")?'
    r"(?:(/)>|>"
    r'(?:<f((?: [A-Za-z][A-Za-z0-9]{0,15}="[^"<&\t\n]*")*)(?:>' + _TEXT + r"</f>|(/)>))?"
    r"(?:<v>" + _TEXT + r"</v>|<v/>)?"
    r'(?:<is><t(?: xml:space="preserve")?>' + _TEXT + r"</t></is>)?"
    r"</c>)"
    # a row's start (its attributes double-quoted, no entity), a row's end
    r"|<row((?:[ \t\n]+[A-Za-z_][A-Za-z0-9_.-]*(?::[A-Za-z_][A-Za-z0-9_.-]*)?[ \t\n]*=[ \t\n]*"
    r'"[^"<&\t\n]*")*)[ \t\n]*(/?)>'
    r"|(</row>)"
    # any other cell: lxml reads it
    r"|(<c(?:[ \t\n][^>]*)?/>|<c[ \t\n>].*?</c>)"
    r"|[ \t\n]+",
    re.S,
)
_ATTR = re.compile(
    r'([A-Za-z_][A-Za-z0-9_.-]*(?::[A-Za-z_][A-Za-z0-9_.-]*)?)[ \t\n]*=[ \t\n]*"([^"]*)"'
)


ODD_CELLS_MIN = 256
ODD_CELLS_SHARE = 200
"""Past :data:`ODD_CELLS_MIN` cells of other shapes than :data:`_BODY_TOKEN`'s (each parsed
by lxml on its own), more than one per :data:`ODD_CELLS_SHARE` characters read so far (a
pretty-printed sheet, say) hands the part to lxml alone, which reads such text faster."""


_QUOTE_ENTITIES = {"&quot;": '"', "&apos;": "'"}


def _unescape(text: str) -> str:
    """``text`` with XML's five predefined entities decoded
    (:func:`xml.sax.saxutils.unescape`, which decodes ``&amp;`` last, with the two quote
    entities it leaves out by default)."""
    return unescape(text, _QUOTE_ENTITIES)


def _scan_body(
    st: _Pass, body: str, decls: str, v_tag: str, f_tag: str, is_tag: str
) -> Iterator[RawCell]:
    """The cells of a ``sheetData`` element's content ``body`` (see :func:`_fast_sheet`),
    read as lxml reads them: rows and cells of the shapes :data:`_BODY_TOKEN` matches by
    their text, any other cell by lxml (wrapped in the root's namespace declarations
    ``decls``).

    Raises:
        _NotRegular: text of another shape (text between elements, an element other than
            a row or a cell, a row attribute with an entity, unbalanced rows, a cell holding
            a row or a cell, ...).
        lxml.etree.XMLSyntaxError: a malformed cell.
    """
    uris = {"xml": "http://www.w3.org/XML/1998/namespace"}
    for name, uri in re.findall(r'xmlns:([^=]+)="([^"]*)"', decls):
        uris[name] = uri
    pos = 0
    depth = 0
    n_odd = 0
    formula, cell = st.formula, st.cell
    columns_of = _col_cache
    token = _BODY_TOKEN.match
    size = len(body)
    while pos < size:
        # one attempt where the last token ended (a search onwards could retry the
        # unbounded cell alternative at every "<c" of a hostile text: quadratic time)
        m = token(body, pos)
        if m is None:
            raise _NotRegular("text between elements, or an element of another shape")
        pos = m.end()
        (
            letters,
            digits,
            s,
            t,
            _closed,
            f_attrs,
            f_text,
            _f_closed,
            v,
            inline,
            row_attrs,
            row_closed,
            row_end,
            odd,
        ) = m.groups()
        if (
            letters is not None
            and "&" in m[0]  # in its texts: the attributes matched hold none
            and not all(x is None or _ENTITIES.fullmatch(x) for x in (f_text, v, inline))
        ):
            odd, letters = m[0], None  # a character reference or an unknown entity: lxml
        if letters is not None:  # as st.place reads r: a canonical coordinate here
            if f_text and "&" in f_text:
                f_text = _unescape(f_text)
            if v and "&" in v:
                v = _unescape(v)
            if inline and "&" in inline:
                inline = _unescape(inline)
            col = columns_of.get(letters)
            st.col_no = col if col is not None else col_index(letters)
            row, coord = int(digits), letters + digits
            fml, fkind, array_ref = None, "", None
            if f_attrs is not None:
                if f_attrs:
                    pairs = _ATTR.findall(f_attrs)
                    attrs = dict(pairs)
                    if len(attrs) != len(pairs) or any(k.startswith("xmlns") for k in attrs):
                        raise _NotRegular("f attributes")
                    fml, fkind, array_ref = formula(
                        attrs.get("t"), f_text or None, attrs.get("si"), attrs.get("ref"), coord
                    )
                else:
                    fml, fkind, array_ref = formula(None, f_text or None, None, None, coord)
            got = cell(row, coord, t, s, fml, fkind, array_ref, v or None, inline, None)
            if got is not None:
                yield got
        elif row_attrs is not None:
            pairs = _ATTR.findall(row_attrs)
            attrs = dict(pairs)
            if len(attrs) != len(pairs) or any(k.startswith("xmlns") for k in attrs):
                raise _NotRegular("row attributes")
            if ":" in row_attrs:  # a prefixed attribute: its prefix declared, its name unique
                expanded = [
                    (uris.get(k.split(":", 1)[0]), k.split(":", 1)[1]) for k in attrs if ":" in k
                ]
                if any(u is None for u, _n in expanded) or len(set(expanded)) != len(expanded):
                    raise _NotRegular("row attributes")
            st.row(attrs.get("r"), attrs.get("ht"), attrs.get("customHeight"), attrs.get("hidden"))
            if not row_closed:
                depth += 1
        elif row_end is not None:
            depth -= 1
            if depth < 0:
                raise _NotRegular("unbalanced rows")
        elif odd is not None:
            n_odd += 1
            if n_odd > ODD_CELLS_MIN and n_odd * ODD_CELLS_SHARE > pos:
                raise _NotRegular("many cells of other shapes: lxml alone reads them faster")
            wrapper = etree.fromstring(
                f"<jobbench-cell {decls}>{odd}</jobbench-cell>".encode(),
                etree.XMLParser(**_PARSER_KW),
            )
            if len(wrapper) != 1 or wrapper.text or wrapper[0].tail:
                raise _NotRegular("not one cell")
            el = wrapper[0]
            if next(el.iterdescendants(*_SHEET_TAGS), None) is not None:
                raise _NotRegular("a cell holding an element the pass reads")
            got = st.element(el, v_tag, f_tag, is_tag)
            if got is not None:
                yield got
    if depth:
        raise _NotRegular("unbalanced rows")


def _number_operand(el) -> float | None:
    try:
        return float((el.text or "").strip().lstrip("="))
    except (TypeError, ValueError):
        return None


def _condition(rule, first: Box) -> Callable[[object, bool], bool] | None:
    """The condition of ``rule`` (of a range whose first cell is ``first``'s top left) as a
    function of a cell's ``(value, is_error)``, or None when it cannot be evaluated here (see
    :class:`Rule`). Only a number is compared with ``cellIs`` operands: text, booleans and
    dates compare by rules of their own (Excel ranks text above every number), so the rule
    is taken to apply to them."""
    kind = rule.get("type") or ""
    formulas = [c for c in rule if _local(c.tag) == "formula"]
    if kind == "containsErrors":
        return lambda v, err: err
    if kind == "notContainsErrors":
        return lambda v, err: not err
    if kind == "containsBlanks":
        return lambda v, err: v is None or (isinstance(v, str) and not v.strip())
    m = _ISERROR_RE.match(formulas[0].text or "") if len(formulas) == 1 else None
    if kind == "expression" and m and m.group(1).upper() == f"{col_letters(first[1])}{first[0]}":
        return lambda v, err: err
    if kind == "cellIs":
        test = _CELL_IS.get(rule.get("operator") or "")
        nums = [_number_operand(f) for f in formulas]
        if test is None or not nums or any(n is None for n in nums):
            return None
        a, b = nums[0], (nums[1] if len(nums) > 1 else None)

        def cell_is(v: object, err: bool) -> bool:
            if err:
                return False  # an error value satisfies no comparison
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                return True  # not evaluated here: taken to apply
            return bool(test(float(v), a, b))

        return cell_is
    return None


def _conditional(el, pkg: Package, layout: SheetLayout) -> None:
    """Add the rules of a ``conditionalFormatting`` element (or an ``x14:`` one, whose
    ranges are an ``xm:sqref`` child and whose style may be inline) that can hide a value."""
    refs = el.get("sqref") or " ".join(c.text or "" for c in el if _local(c.tag) == "sqref")
    room = LAYOUT_MAX_RANGES - layout.ranges
    words = refs.split(None, room) if room > 0 else [refs]
    if room <= 0 or len(words) > room:
        layout.truncated = True
        return
    boxes = [b for b in (_box(r) for r in words) if b is not None]
    if not boxes:
        return
    for rule in el:
        if _local(rule.tag) != "cfRule":
            continue
        if layout.ranges + len(boxes) > LAYOUT_MAX_RANGES:
            layout.truncated = True
            return
        layout.ranges += len(boxes)
        when = _condition(rule, boxes[0])
        for child in rule:
            kind = _local(child.tag)
            if kind in ("dataBar", "iconSet") and child.get("showValue") in ("0", "false"):
                layout.conditional.append(Rule(boxes, no_value=True, when=when))
            elif kind == "colorScale":
                colours = [pkg.palette.colour(c) for c in child if _local(c.tag) == "color"]
                layout.conditional.append(Rule(boxes, scale=colours, when=when))
            elif kind == "dxf":
                layout.conditional.append(Rule(boxes, dxf=child, when=when))
        dxf_id = rule.get("dxfId")
        if dxf_id is not None and dxf_id.isdigit() and int(dxf_id) < len(pkg.dxfs):
            layout.conditional.append(Rule(boxes, dxf=pkg.dxfs[int(dxf_id)], when=when))


def rule_reason(rule: Rule) -> str:
    """The hidden reason a conditional-format ``rule`` gives a cell."""
    return (
        "conditional format hides the value"
        if rule.no_value
        else "conditional format can hide the value"
    )


def _rule_hides(rule: Rule, look: Look, memo: dict) -> bool:
    """True when ``rule`` laid over ``look`` can make a value invisible."""
    key = (id(rule), id(look))
    got = memo.get(key)
    if got is None:
        if rule.no_value:
            got = True
        elif rule.scale:
            got = any(look.text_reason(look.font, None, fill=c) for c in rule.scale)
        else:
            got = rule.dxf is not None and over(look, rule.dxf).could_hide_any()
        memo[key] = got
    return got


def layout_hidden(
    cells: list[tuple[int, int, str]],
    looks: list[Look],
    values: list[tuple[object, bool] | None],
    layout: SheetLayout,
    check_deadline: Callable[[], None] | None = None,
) -> tuple[dict[str, str], dict[str, list[Rule]]]:
    """Why cells are hidden by ``layout``: ``"covered by a merged cell"`` (every cell of a
    merged range but its first), ``"conditional format hides the value"`` (``showValue="0"``)
    and ``"conditional format can hide the value"`` (a rule whose style laid over the
    cell's, or one of whose colour-scale fills, makes some value invisible, when its
    condition holds for the cell's stored value or cannot be evaluated here). Past
    :data:`LAYOUT_MAX_RANGES` or :data:`LAYOUT_MAX_STEPS` every cell is hidden with the
    reason ``"too many merged ranges or conditional formats to check"``.

    Args:
        cells: ``(row, column, coordinate)`` of a sheet's cells; ``looks``: their looks;
            ``values``: their stored ``(value, is_error)``, None for a formula cell (its
            value is known only after recalculation); all in the same order.
        check_deadline: called every few thousand steps (raises past the deadline).

    Returns:
        ``({coordinate: why}, {coordinate: rules})``: the second maps formula cells to the
        rules that hide them if their condition holds for the recalculated value
        (:attr:`Rule.when`; the caller evaluates it).
    """
    import bisect

    out: dict[str, str] = {}
    deferred: dict[str, list[Rule]] = {}
    if not layout.merged and not layout.conditional and not layout.truncated:
        return out, deferred
    order = sorted(range(len(cells)), key=lambda i: (cells[i][0], cells[i][1]))
    keys = [(cells[i][0], cells[i][1]) for i in order]
    steps = 0

    def inside(box: Box) -> Iterator[int]:
        nonlocal steps
        r1, c1, r2, c2 = box
        steps += 1  # an empty range costs a step too
        if check_deadline is not None and steps % 4096 == 0:
            check_deadline()
        i = bisect.bisect_left(keys, (r1, c1))
        while i < len(keys) and keys[i][0] <= r2 and steps < LAYOUT_MAX_STEPS:
            steps += 1
            if check_deadline is not None and steps % 4096 == 0:
                check_deadline()
            r, c = keys[i]
            if c < c1:
                i = bisect.bisect_left(keys, (r, c1), i)
            elif c > c2:
                i = bisect.bisect_left(keys, (r + 1, c1), i)
            else:
                yield order[i]
                i += 1

    for box in layout.merged:
        for i in inside(box):
            if (cells[i][0], cells[i][1]) != (box[0], box[1]):
                out.setdefault(cells[i][2], "covered by a merged cell")
    memo: dict = {}
    styles: dict[int, list[Rule]] = {}  # cell -> the style rules that apply to it
    for rule in layout.conditional:
        for box in rule.boxes:
            for i in inside(box):
                coord = cells[i][2]
                if coord in out:
                    continue
                stored = values[i]
                if rule.when is not None and stored is not None and not rule.when(*stored):
                    continue
                if rule.dxf is not None and stored is not None:
                    styles.setdefault(i, []).append(rule)
                if not _rule_hides(rule, looks[i], memo):
                    continue
                if rule.when is not None and stored is None:
                    deferred.setdefault(coord, []).append(rule)
                    continue
                out[coord] = rule_reason(rule)
    # Excel lays every rule that applies over the cell (one may set the font, another the
    # fill): rules harmless one by one can hide a value together
    combined: dict[tuple[int, ...], bool] = {}
    for i, rules in styles.items():
        coord = cells[i][2]
        if len(rules) < 2 or coord in out:
            continue
        key = (id(looks[i]), *(id(r.dxf) for r in rules))
        hides = combined.get(key)
        if hides is None:
            look = looks[i]
            for rule in rules:
                look = over(look, rule.dxf)
            hides = combined[key] = look.could_hide_any()
        if hides:
            out[coord] = "conditional format can hide the value"
    if layout.truncated or steps >= LAYOUT_MAX_STEPS:
        return {coord: out.get(coord, LAYOUT_TOO_LARGE) for _r, _c, coord in cells}, {}
    return out, deferred


def _frame_hidden(frame) -> str | None:
    """Why a drawing's ``graphicFrame`` is not seen: its own ``cNvPr/@hidden`` or a hidden
    enclosing group (``grpSp``), or an anchor of zero size; None when it is seen."""
    groups = [frame] + [a for a in frame.iterancestors() if _local(a.tag) == "grpSp"]
    for node in groups:
        for nv in node:
            if not _local(nv.tag).startswith("nv"):
                continue
            if any(_local(el.tag) == "cNvPr" and _truthy(el.get("hidden")) for el in nv):
                return "hidden chart"
    anchor = next((a for a in frame.iterancestors() if _local(a.tag).endswith("Anchor")), None)
    if anchor is not None:
        ext = next((el for el in anchor if _local(el.tag) == "ext"), None)
        if ext is not None and (ext.get("cx") == "0" or ext.get("cy") == "0"):
            return "chart of zero size"
        ends = [el for el in anchor if _local(el.tag) in ("from", "to")]
        if len(ends) == 2:
            corner = [tuple((c.text or "").strip() for c in end) for end in ends]
            if corner[0] == corner[1]:
                return "chart of zero size"
    return None


def drawing_ids(zf: zipfile.ZipFile, part: str) -> list[str]:
    """The ``r:id`` of the ``drawing`` elements of a (chart)sheet part (its whole XML is
    read: for chartsheets, which hold little else)."""
    try:
        root = _parse(zf, part)
    except (etree.XMLSyntaxError, KeyError):
        return []
    out = []
    for el in root.iter("{*}drawing"):
        rid = next((v for k, v in el.attrib.items() if _local(k) == "id"), None)
        if rid:
            out.append(rid)
    return out[:TABLES_MAX]


def chart_visibility(
    zf: zipfile.ZipFile, pkg: Package, drawings: dict[str, list[str]]
) -> dict[str, str | None]:
    """For every chart part a sheet shows (its ``drawing`` element's relationship →
    drawing part → ``chart`` relationships, §20.5 SpreadsheetML drawing): None when a
    reader can see it, else why not (``"chart on a hidden sheet"``, ``"hidden chart"``,
    ``"chart of zero size"``, see :func:`_frame_hidden`). Chart parts no sheet shows are
    absent (the caller marks them).

    Args:
        drawings: per worksheet part, the ``r:id`` of its ``drawing`` element(s)
            (:attr:`SheetLayout.drawing_ids`).
    """
    out: dict[str, str | None] = {}
    for info in pkg.sheets:
        if info.part is None:
            continue
        sheet_hidden = info.state != "visible"
        rels = _rels(zf, info.part)
        for rid in drawings.get(info.part, []):
            typ, drawing = rels.get(rid) or ("", "")
            if not typ.endswith("/drawing") or drawing not in zf.namelist():
                continue
            charts = {
                rid: target
                for rid, (t, target) in _rels(zf, drawing).items()
                if t.endswith("/chart")
            }
            if not charts:
                continue
            try:
                root = _parse(zf, drawing)
            except (etree.XMLSyntaxError, KeyError):
                continue
            for frame in root.iter("{*}graphicFrame"):
                hidden = _frame_hidden(frame)
                for el in frame.iter("{*}chart"):
                    chart_rid = next((v for k, v in el.attrib.items() if _local(k) == "id"), None)
                    target = charts.get(chart_rid)
                    if target is None:
                        continue
                    why = "chart on a hidden sheet" if sheet_hidden else hidden
                    if target not in out or out[target] is not None:
                        out[target] = why
    return out


TABLES_MAX = 1_000


class MissingCoordinate(ValueError):
    """A cell without an ``r`` attribute: its position needs :func:`iter_cells`."""


def stored_values(
    zf: zipfile.ZipFile, part: str, pkg: Package, wanted: set[str]
) -> Iterator[tuple[str, object, str, str]]:
    """``(coordinate, stored value, cell type, number format)`` of the cells of a worksheet
    part whose coordinate is in ``wanted``, decoded as :func:`iter_cells` decodes them, without the
    work :func:`iter_cells` does for every cell (styles, formulas, visibility): for reading
    the values LibreOffice stored after recalculating.

    Raises:
        MissingCoordinate: a cell has no ``r`` attribute (LibreOffice writes one on every
            cell; read such a part with :func:`iter_cells`).
        lxml.etree.XMLSyntaxError: malformed sheet XML.
    """
    return _stored_values(zf, part, pkg, wanted)


FAST_MAX_BYTES = 512 << 20
"""Largest uncompressed worksheet part :func:`stored_values` reads whole with its fast path
(larger ones are streamed through lxml)."""
_FAST_CELL = re.compile(
    r'<c r="([A-Z]{1,3}[0-9]{1,7})"(?: s="([0-9]{1,9})")?(?: t="([a-zA-Z]{1,9})")?'
    r"(?:/>|>(?:(?:<f[^>]*>[^<]*</f>|<f[^>]*/>)?<v>([^<&\r]*)</v></c>|(.*?)</c>))",
    re.S,
)
"""A cell as LibreOffice writes it: coordinate, style, type, then either a plain ``v``
(after an optional ``f``) or any other content."""
_FAST_ANY_CELL = re.compile(r"<c[\s/>]")
_FAST_UNSAFE = re.compile(
    r"<!--|<!\[CDATA\[|<\?(?!xml\s)|<!DOCTYPE|<!ENTITY|<[A-Za-z_][\w.-]*:c[\s/>]"
)


_DEFAULT_NS = re.compile(r'\sxmlns="([^"]*)"')


def _declared_default(text: str) -> list[str]:
    """``_DEFAULT_NS.findall(text)`` (the default namespace declarations' values); with one
    ``xmlns="`` in the text, by matching where it stands rather than scanning the text."""
    if text.count('xmlns="') != 1:
        return _DEFAULT_NS.findall(text)
    i = text.find('xmlns="')
    m = _DEFAULT_NS.match(text, i - 1) if i > 0 else None
    return [m.group(1)] if m else []


def _decode(t: str, raw_v: str | None, inline: str | None, strings: list[str]) -> object:
    """A cell's stored value from its type ``t``, ``v`` text and inline-string text."""
    if t == "s":
        try:
            return strings[int(raw_v)] if raw_v is not None else None
        except (ValueError, IndexError):
            return None
    if t == "inlineStr":
        return inline if inline is not None else raw_v
    if t in ("str", "e"):
        return raw_v
    if t == "b":
        return None if raw_v is None else raw_v.strip() in ("1", "true")
    if t == "d":
        return _iso_date(raw_v)
    return _number(raw_v)


def _fast_stored_values(
    zf: zipfile.ZipFile, part: str, pkg: Package, wanted: set[str]
) -> list[tuple[str, object, str, str]] | None:
    """:func:`stored_values` by scanning the part's text, for the regular XML LibreOffice
    writes: every ``c`` element unprefixed in the default namespace, ``r`` its first
    attribute, UTF-8, no comments, CDATA, DTD or processing instructions. A cell whose
    content is not a plain ``f`` and ``v`` (an inline string, an entity or a carriage
    return in its value, other children) is decoded by lxml from its own text, so every
    value decodes as lxml decodes it. Returns None when the part does not have that shape
    (the caller then streams it through lxml)."""
    info = zf.getinfo(part)
    if info.file_size > FAST_MAX_BYTES:
        return None
    data = zf.read(part)
    head = data[:200]
    if head.startswith(b"<?xml") and not re.match(
        rb'<\?xml[^>]*encoding=["\']utf-8["\']', head, re.I
    ):
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    del data
    if _FAST_UNSAFE.search(text):
        return None
    declared = _declared_default(text)
    if len(declared) != 1:
        return None  # one default namespace, the root's: every unprefixed c is a cell
    ns = declared[0]
    strings = pkg.strings
    out: list[tuple[str, object, str, str]] = []
    n = 0
    look = pkg.look
    formats: dict[str | None, str] = {}  # style index -> number format
    for n, m in enumerate(_FAST_CELL.finditer(text), 1):  # noqa: B007 - n is read after it
        coord = m[1]
        if coord not in wanted:
            continue
        style, t, plain, body = m.group(2, 3, 4, 5)
        t = t or "n"
        if plain is not None and t == "n":
            value = _number(plain)  # _decode's last case
        elif plain is not None or not body:
            value = _decode(t, plain, None, strings)
        else:
            attrs = (f' s="{style}"' if style else "") + (f' t="{t}"' if m.group(3) else "")
            try:
                el = etree.fromstring(
                    f'<c xmlns="{ns}"{attrs}>{body}</c>'.encode(), etree.XMLParser(**_PARSER_KW)
                )
            except etree.XMLSyntaxError:
                return None
            raw_v = inline = None
            for child in el:
                if child.tag == "{%s}v" % ns:
                    raw_v = child.text
                elif child.tag == "{%s}is" % ns:
                    inline = _runs(child, pkg.palette)[0]
            value = _decode(t, raw_v, inline, strings)
        fmt = formats.get(style)
        if fmt is None:
            fmt = formats[style] = look(style).number_format
        out.append((coord, value, t, fmt))
    if n != len(_FAST_ANY_CELL.findall(text)):
        return None  # a cell this scan did not match (no coordinate, other quoting)
    return out


def _stored_values(
    zf: zipfile.ZipFile, part: str, pkg: Package, wanted: set[str]
) -> Iterator[tuple[str, object, str, str]]:
    fast = _fast_stored_values(zf, part, pkg, wanted)
    if fast is not None:
        yield from fast
        return
    strings = pkg.strings
    row_tag = v_tag = is_tag = ""
    with zf.open(part) as f:
        for _ev, el in etree.iterparse(f, events=("end",), tag=("{*}c", "{*}row"), **_PARSER_KW):
            if not row_tag:  # the part's namespace, fixed for the part
                ns = el.tag.rpartition("}")[0] + "}" if el.tag.startswith("{") else ""
                row_tag, v_tag, is_tag = ns + "row", ns + "v", ns + "is"
            if el.tag == row_tag:
                _release(el)
                continue
            ref = el.get("r")
            if ref is None:
                raise MissingCoordinate(f"{part}: a cell without a coordinate")
            coord = ref.replace("$", "").upper()
            if coord in wanted:
                t = el.get("t") or "n"
                raw_v = None
                inline = None
                for child in el:
                    if child.tag == v_tag:
                        raw_v = child.text
                    elif child.tag == is_tag:
                        inline = _runs(child, pkg.palette)[0]
                value: object
                if t == "s":
                    try:
                        value = strings[int(raw_v)] if raw_v is not None else None
                    except (ValueError, IndexError):
                        value = None
                elif t == "inlineStr":
                    value = inline if inline is not None else raw_v
                elif t in ("str", "e"):
                    value = raw_v
                elif t == "b":
                    value = None if raw_v is None else raw_v.strip() in ("1", "true")
                elif t == "d":
                    value = _iso_date(raw_v)
                else:
                    value = _number(raw_v)
                yield coord, value, t, pkg.look(el.get("s")).number_format
            el.clear()


def table_boxes(zf: zipfile.ZipFile, part: str, ids: list[str]) -> list[Box]:
    """Where the tables a worksheet shows (``ids``: its ``tablePart`` relationship ids,
    §18.5.1) draw a dark band under their text: the header rows of a ``TableStyleMedium*``
    or ``TableStyleDark*`` table, and every row of a ``TableStyleDark*`` one (Excel's
    built-in styles; a table without a style draws none). At most :data:`TABLES_MAX`;
    unreadable table parts are left out."""
    out: list[Box] = []
    rels = _rels(zf, part)
    for rid in ids[:TABLES_MAX]:
        typ, target = rels.get(rid) or ("", "")
        if not typ.endswith("/table") or target not in zf.namelist():
            continue
        try:
            root = _parse(zf, target)
        except (etree.XMLSyntaxError, KeyError, ValueError):
            continue
        box = _box(root.get("ref") or "")
        style = next(
            (el.get("name") or "" for el in root if _local(el.tag) == "tableStyleInfo"), ""
        )
        if box is None or not style.startswith(("TableStyleMedium", "TableStyleDark")):
            continue
        if style.startswith("TableStyleDark"):
            out.append(box)
            continue
        try:
            header = int(root.get("headerRowCount") or 1)
        except ValueError:
            header = 1
        if header > 0:
            out.append((box[0], box[1], min(box[2], box[0] + header - 1), box[3]))
    return out


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
