"""Workbooks (xlsx/xlsm): recalculate, then read formulas and values in two passes.

Reading order:

1. the file's formulas, constants and the values cached in it, in one streaming pass
   (:mod:`._xlsx_read`);
2. recalculated values: LibreOffice headless on a private copy with a profile that forces
   recalculation on load (:mod:`._soffice`), else the ``formulas`` package, else none.
   LibreOffice is started before pass 1 when a worksheet holds a formula element
   (:func:`may_have_formulas`), so both run at once; its output is then read for the
   formula cells only (:func:`._xlsx_read.stored_values`).

A formula cell shows the recalculated value, except an *untrusted* cell (a volatile
function such as NOW/TODAY/RAND, an external reference, or, in a workbook with macros, a
cell that recalculates only to an error, e.g. a user-defined function) and every formula
that depends on one: it shows the value cached in the file, or no value when the file has
none, flagged in the text and in a warning. It is never recalculated: recalculation cannot
reproduce what the author saw, and its result would change from run to run and day to day
(the same deliverable must always read the same).
Errors (``#DIV/0!``) stay errors.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import io
import math
import re
import tempfile
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from ._base import Context, ExtractionError, Source
from ._budget import HEAD_FRACTION, fair_shares, head_tail
from ._hidden import hidden_inline, hidden_lines, record
from ._limits import ExtractLimits
from ._notes import note, split_notes
from ._records import CellValue, Diagnostic, WorkbookValues
from ._xlsx_style import Look, looks_date

ERROR_CODES = frozenset(
    {
        "#NULL!",
        "#DIV/0!",
        "#VALUE!",
        "#REF!",
        "#NAME?",
        "#NUM!",
        "#N/A",
        "#GETTING_DATA",
        "#SPILL!",
        "#CALC!",
        "#FIELD!",
        "#BLOCKED!",
        "#UNKNOWN!",
        "#CONNECT!",
        "#BUSY!",
    }
)
"""Excel error values (Microsoft: "How to correct a #… error")."""

UNTRUSTED_FUNCTIONS = (
    "NOW",
    "TODAY",
    "RAND",
    "RANDBETWEEN",
    "RANDARRAY",
    "WEBSERVICE",
    "FILTERXML",
    "INFO",
    "CELL",
    "RTD",
)
"""Functions whose recalculated value depends on the clock, chance or the environment, so a
recalculation cannot reproduce the value the author saw (Excel documents NOW, TODAY, RAND,
RANDBETWEEN, RANDARRAY, INFO and CELL as volatile; WEBSERVICE/FILTERXML/RTD read external
data). OFFSET and INDIRECT are volatile too but deterministic, so they are recalculated."""

_UNTRUSTED_RE = re.compile(
    r"(?<![A-Za-z0-9_.])(?:_xlfn\.)?(" + "|".join(UNTRUSTED_FUNCTIONS) + r")\s*\(", re.I
)
_STRING_RE = re.compile(r'"(?:[^"]|"")*"')
_EXTERNAL_RE = re.compile(r"\[\d+\]")
_REF_RE = re.compile(r"(?<![A-Za-z0-9_.\"])(\$?)([A-Z]{1,3})(\$?)([0-9]{1,7})(?![0-9A-Za-z_(])")
FILL_RUN_MIN = 3
"""A column run of at least this many identical relative formulas is shown once."""


@dataclass
class SheetData:
    """One sheet after the passes: cells in file order and their final values."""

    name: str
    state: str = "visible"
    chartsheet: bool = False
    cells: list[tuple[int, int, str]] = field(default_factory=list)
    formulas: dict[str, str] = field(default_factory=dict)
    values: dict[str, CellValue] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    formats: dict[str, str] = field(default_factory=dict)
    cached: dict[str, CellValue] = field(default_factory=dict)
    untrusted: dict[str, str] = field(default_factory=dict)
    hidden: dict[str, str] = field(default_factory=dict)
    """Cells a reader cannot see: coordinate → why (see :mod:`._hidden`)."""
    hidden_runs: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """Rich-text runs a reader cannot see: coordinate → ``[(why, text)]`` (the cell's value
    holds the other runs)."""
    looks: dict[str, Look] = field(default_factory=dict)
    """Formula cells whose style can hide a value, judged on the final value."""
    banded: list[tuple[int, int, int, int]] = field(default_factory=list)
    """Ranges where a table style draws a dark band (:func:`._xlsx_read.table_boxes`)."""
    deferred: dict[str, list] = field(default_factory=dict)
    """Formula cells → conditional-format rules (:class:`._xlsx_read.Rule`) that hide them
    when their condition holds for the final value."""
    layout_incomplete: bool = False
    memo: dict[str, object] = field(default_factory=dict)
    """What rendering computes from the cells and formulas alone (header, formula notes,
    rows, length bound), kept once computed (:func:`prepare_render`)."""


@dataclass
class Workbook:
    """Everything the renderer and :class:`WorkbookValues` need."""

    sheets: list[SheetData]
    engine: str
    engine_note: str
    diagnostics: list[Diagnostic]
    defined_names: list[tuple[str, str]] = field(default_factory=list)
    charts: list[tuple[str, bytes]] = field(default_factory=list)
    chart_hidden: dict[str, str] = field(default_factory=dict)
    """Chart part → why a reader cannot see it (hidden sheet, hidden frame, shown by no
    sheet)."""
    media: list[tuple[str, bytes]] = field(default_factory=list)
    epoch_1904: bool = False

    def values(self, path: str, sha256: str) -> WorkbookValues:
        return WorkbookValues(
            path=path,
            sha256=sha256,
            engine=self.engine,
            sheets=[s.name for s in self.sheets],
            values={s.name: dict(s.values) for s in self.sheets},
            formulas={s.name: dict(s.formulas) for s in self.sheets if s.formulas},
            errors={s.name: dict(s.errors) for s in self.sheets if s.errors},
            hidden_sheets=[s.name for s in self.sheets if s.state != "visible"],
            untrusted={s.name: dict(s.untrusted) for s in self.sheets if s.untrusted},
            diagnostics=list(self.diagnostics),
        )


# --------------------------------------------------------------------------- value helpers


def _to_date(serial: float, epoch_1904: bool) -> dt.datetime | None:
    from openpyxl.utils.datetime import CALENDAR_MAC_1904, CALENDAR_WINDOWS_1900, from_excel

    try:
        return from_excel(serial, CALENDAR_MAC_1904 if epoch_1904 else CALENDAR_WINDOWS_1900)
    except (ValueError, OverflowError, TypeError):
        return None


@functools.lru_cache(maxsize=1024)
def _is_date_format(number_format: str) -> bool:
    from openpyxl.styles.numbers import is_date_format

    return bool(is_date_format(number_format))


def normalise(
    value: object,
    data_type: str | None = None,
    number_format: str | None = None,
    epoch_1904: bool = False,
) -> tuple[CellValue, bool]:
    """A cell value as :data:`CellValue` plus whether it is an error.

    Integral floats become ``int``; NumPy scalars become Python scalars; dates become ISO
    strings (a number with a date format is converted using the workbook's epoch); error
    codes stay strings and are flagged.
    """
    if value is None:
        return None, False
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (ValueError, AttributeError):
            pass
    cls = type(value).__name__
    if cls == "XlError":  # formulas package error object
        return str(value), True
    if isinstance(value, bool):
        return value, False
    if isinstance(value, (int, float)):
        if number_format and data_type != "d":
            if _is_date_format(number_format):
                when = _to_date(float(value), epoch_1904)
                if when is not None:
                    return normalise(when)
        if isinstance(value, float):
            if math.isnan(value) or math.isinf(value):
                return "#NUM!", True
            if value.is_integer() and abs(value) < 2**53:
                return int(value), False
        return value, False
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0):
            return value.date().isoformat(), False
        return value.replace(
            microsecond=0
        ).isoformat() if value.microsecond < 1000 else value.isoformat(), False
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat(), False
    if isinstance(value, dt.timedelta):
        return str(value), False
    if isinstance(value, str):
        if data_type == "e" or (data_type is None and value in ERROR_CODES):
            return value, True
        return value, False
    if cls in ("Empty", "EmptyCell") or str(value) == "empty":
        return None, False
    return str(value), False


def _normalise_read(
    value: object, data_type: str, number_format: str, epoch_1904: bool
) -> tuple[CellValue, bool]:
    """:func:`normalise` of a value a sheet reader decoded (None, text, a number, ...) with
    its cell type, its common cases spelt out: the same result, with less work per cell."""
    if value is None:
        return None, False
    if type(value) is str:
        return value, data_type == "e"
    if (
        (type(value) is int or type(value) is float)
        and number_format
        and number_format != "General"
        and data_type != "d"
        and _is_date_format(number_format)
    ):
        return normalise(value, data_type, number_format, epoch_1904)  # perhaps a date
    if type(value) is int:
        return value, False
    if type(value) is float:
        if math.isnan(value) or math.isinf(value):
            return "#NUM!", True
        if value.is_integer() and abs(value) < 2**53:
            return int(value), False
        return value, False
    return normalise(value, data_type, number_format, epoch_1904)


def _same(a: CellValue, b: CellValue) -> bool:
    if (
        isinstance(a, (int, float))
        and isinstance(b, (int, float))
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    ):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    if a in (None, "") and b in (None, ""):
        return True
    return a == b


def show(
    value: CellValue,
    is_error: bool = False,
    number_format: str | None = None,
    *,
    marked: bool = False,
) -> str:
    """How a cell value reads in the extracted text. With ``marked``, the ``(error)`` and
    ``(text)`` tags are extractor notes (:mod:`._notes`); a percent-formatted number also
    shows its displayed form (``0.25 (25%)``), which is the file's content."""
    tag = note if marked else (lambda s: s)
    if value is None:
        return ""
    if is_error:
        return f"{value}" + tag(" (error)")
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        text = format(value, ".15g")
    else:
        s = str(value).replace("\r\n", "\n").replace("\n", "\\n")
        if (
            re.fullmatch(r"\s*[-+]?[0-9][0-9,]*(\.[0-9]+)?\s*", s)
            or s in ERROR_CODES
            or s in ("TRUE", "FALSE")
        ):
            return f'"{s}"' + tag(" (text)")
        return s
    if number_format and "%" in number_format and isinstance(value, (int, float)):
        m = re.search(r"0(?:\.(0+))?\s*%", number_format)
        decimals = len(m.group(1) or "") if m else 0
        text += f" ({value * 100:.{decimals}f}%)"
    return text


def relative_form(formula: str, row: int, col: int) -> str:
    """``formula`` with relative A1 references rewritten as offsets from (row, col), so
    that a formula filled down a column has the same form in every cell."""
    if '"' not in formula:  # no string literal: one piece
        return _relative_refs(formula, row, col)
    parts = []
    last = 0
    for m in _STRING_RE.finditer(formula):
        parts.append(_relative_refs(formula[last : m.start()], row, col))
        parts.append(m.group(0))
        last = m.end()
    parts.append(_relative_refs(formula[last:], row, col))
    return "".join(parts)


def _relative_refs(text: str, row: int, col: int) -> str:
    """The references :data:`_REF_RE` finds in ``text`` (no string literal) as ``R[dr]C[dc]``
    offsets from (row, col), or ``R<row>`` / ``C<column>`` where absolute."""
    from ._xlsx_read import col_index

    pieces = _REF_RE.split(text)  # text, then per reference its 4 groups and the text after
    if len(pieces) == 1:
        return text
    out = [pieces[0]]
    for i in range(1, len(pieces), 5):
        cabs, cletters, rabs, rdigits, after = pieces[i : i + 5]
        c = col_index(cletters)  # 1 to 3 capitals: always a column (A to ZZZ)
        out.append(f"R{rdigits}" if rabs else f"R[{int(rdigits) - row}]")
        out.append(f"C{c}" if cabs else f"C[{c - col}]")
        out.append(after)
    return "".join(out)


def _banded(sd: SheetData, r: int, c: int) -> bool:
    return any(r1 <= r <= r2 and c1 <= c <= c2 for r1, c1, r2, c2 in sd.banded)


def _in_tables(sd: SheetData) -> None:
    """White text where a table's style draws a dark band (:attr:`SheetData.banded`) is
    not "white text"."""
    if not sd.banded:
        return
    for r, c, coord in sd.cells:
        if sd.hidden.get(coord) == "white text" and _banded(sd, r, c):
            del sd.hidden[coord]


def _judge_look(sd: SheetData, coord: str, val: CellValue, err: bool) -> None:
    """Mark formula cell ``coord`` hidden when its style, or a conditional format whose
    condition holds for its final value ``val``, hides it."""
    from ._xlsx_read import rule_reason

    if coord in sd.hidden:
        return
    for rule in sd.deferred.get(coord, ()):
        if rule.when(val, err):
            sd.hidden[coord] = rule_reason(rule)
            return
    look = sd.looks.get(coord)
    if look is None or err:
        return
    number = not isinstance(val, str) or (looks_date(val) and _is_date_format(look.number_format))
    why = look.hides(val, number=number)
    if why == "white text" and sd.banded:
        from ._xlsx_read import _CELL_RE, col_index

        m = _CELL_RE.match(coord)
        if m and _banded(sd, int(m.group(2)), col_index(m.group(1).upper())):
            return  # white on a table's dark band is readable
    if why is not None:
        sd.hidden[coord] = why


def _formula_text(raw) -> str:
    """Display text of a stored formula: ``=…``, ``{=…} (array B1:B9)`` or ``=TABLE(…)``."""
    if raw.formula_kind == "array":
        return f"{{={raw.formula}}}" + (f" (array {raw.array_ref})" if raw.array_ref else "")
    return "=" + raw.formula


# --------------------------------------------------------------------------- passes


def _read_file(fileobj, ctx: Context | None):
    from ._xlsx_read import read_package

    zf = zipfile.ZipFile(fileobj)
    return zf, read_package(zf)


def _formula_pass(source: Source, ctx: Context | None):
    """Formulas, constants, number formats and cached values of every cell, in one pass.

    Returns:
        ``(sheets, defined_names, epoch_1904, cached, charts)`` where ``cached`` maps sheet →
        coordinate → ``(value, is_error)`` for formula cells and ``charts`` maps the chart
        parts the sheets show to why a reader cannot see them, or None
        (:func:`._xlsx_read.chart_visibility`).
    """
    from ._xlsx_read import (
        LAYOUT_TOO_LARGE,
        SheetLayout,
        chart_visibility,
        drawing_ids,
        iter_cells,
        layout_hidden,
        table_boxes,
    )

    cached: dict[str, dict[str, tuple[CellValue, bool]]] = {}
    drawings: dict[str, list[str]] = {}
    with source.open() as f:
        zf, pkg = _read_file(f, ctx)
        with zf:
            sheets: list[SheetData] = []
            for info in pkg.sheets:
                sd = SheetData(name=info.name, state=info.state, chartsheet=info.chartsheet)
                sheets.append(sd)
                if info.chartsheet and info.part is not None:
                    drawings[info.part] = drawing_ids(zf, info.part)
                if info.chartsheet or info.part is None:
                    continue
                got: dict[str, tuple[CellValue, bool]] = {}
                layout = SheetLayout()
                looks: list[Look] = []
                stored: list[tuple[object, bool] | None] = []  # for conditional formats
                hidden, formulas, values = sd.hidden, sd.formulas, sd.values
                add_cell, add_look, add_stored = sd.cells.append, looks.append, stored.append
                epoch = pkg.date1904
                for n, raw in enumerate(iter_cells(zf, info.part, pkg, layout)):
                    if ctx is not None and n % 5000 == 0:
                        ctx.check_deadline()
                    coord = raw.coord
                    add_cell((raw.row, raw.col, coord))
                    add_look(raw.look)
                    formula = raw.formula
                    value, data_type = raw.value, raw.data_type
                    # a formula's value is known after recalculation: its conditions wait
                    add_stored(None if formula is not None else (value, data_type == "e"))
                    if raw.hidden:
                        hidden[coord] = raw.hidden
                    elif formula is not None and not raw.look.plain:
                        sd.looks[coord] = raw.look
                    if raw.hidden_runs:
                        sd.hidden_runs[coord] = raw.hidden_runs
                    fmt = raw.number_format
                    if fmt and fmt != "General":
                        sd.formats[coord] = fmt
                    if value is None:
                        val, err = None, False
                    else:
                        val, err = _normalise_read(value, data_type, fmt, epoch)
                    if formula is not None:
                        formulas[coord] = (
                            "=" + formula if raw.formula_kind != "array" else _formula_text(raw)
                        )
                        got[coord] = (val, err)
                        # its place in file order; the final value replaces it
                        values.setdefault(coord, None)
                    else:
                        values[coord] = val
                        if err:
                            sd.errors[coord] = str(val)
                cached[sd.name] = got
                covered, sd.deferred = layout_hidden(
                    sd.cells,
                    looks,
                    stored,
                    layout,
                    ctx.check_deadline if ctx is not None else None,
                )
                for coord, why in covered.items():
                    sd.hidden.setdefault(coord, why)
                sd.layout_incomplete = LAYOUT_TOO_LARGE in sd.hidden.values()
                sd.banded = table_boxes(zf, info.part, layout.table_ids)
                drawings[info.part] = layout.drawing_ids
                _in_tables(sd)
            shown = chart_visibility(zf, pkg, drawings) if drawings else {}
    return sheets, pkg.defined_names, pkg.date1904, cached, shown


def _values_pass(
    fileobj, sheets: list[SheetData], epoch_1904: bool, ctx: Context | None
) -> dict[str, dict[str, tuple[CellValue, bool]]]:
    """Stored values of the formula cells of ``sheets`` in another copy of the workbook
    (the one LibreOffice wrote after recalculating), matched by sheet name. Only the
    formula cells are decoded (:func:`._xlsx_read.stored_values`)."""
    from ._xlsx_read import MissingCoordinate, iter_cells, stored_values

    out: dict[str, dict[str, tuple[CellValue, bool]]] = {}
    zf, pkg = _read_file(fileobj, ctx)
    parts = {info.name: info.part for info in pkg.sheets if not info.chartsheet}
    with zf:
        for sd in sheets:
            part = parts.get(sd.name)
            if sd.chartsheet or part is None or not sd.formulas:
                continue
            want = sd.formulas
            got: dict[str, tuple[CellValue, bool]] = {}
            try:
                formats, epoch = sd.formats, pkg.date1904
                for n, (coord, value, t, fmt) in enumerate(stored_values(zf, part, pkg, set(want))):
                    if ctx is not None and n % 5000 == 0:
                        ctx.check_deadline()
                    got[coord] = _normalise_read(value, t, formats.get(coord) or fmt, epoch)
            except MissingCoordinate:
                got = {}
                for n, raw in enumerate(iter_cells(zf, part, pkg)):
                    if ctx is not None and n % 5000 == 0:
                        ctx.check_deadline()
                    if raw.coord in want:
                        got[raw.coord] = normalise(
                            raw.value,
                            raw.data_type,
                            sd.formats.get(raw.coord) or raw.number_format,
                            pkg.date1904,
                        )
            out[sd.name] = got
    return out


_FORMULA_TAG = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?f[\s>/]")


def may_have_formulas(source: Source) -> bool:
    """False only when no worksheet part of the workbook holds an ``f`` element (a cheap
    scan of the raw XML; a ``True`` may be wrong, a ``False`` never is)."""
    with source.open() as f, zipfile.ZipFile(f) as zf:
        for name in zf.namelist():
            if not (name.startswith("xl/worksheets/") and name.endswith(".xml")):
                continue
            tail = b""
            try:
                with zf.open(name) as part:
                    while chunk := part.read(1 << 20):
                        if _FORMULA_TAG.search(tail + chunk):
                            return True
                        tail = chunk[-64:]
            except (zipfile.BadZipFile, OSError, EOFError, zlib.error):
                continue  # a broken member (perhaps one no sheet uses): the passes judge it
    return False


class _Recalc:
    """LibreOffice's recalculating conversion of a workbook, started before the formula
    pass so that both run at once (:meth:`values` waits for it; :meth:`close` stops it and
    removes its folder).

    Raises:
        ExtractionError: LibreOffice could not start (from the constructor).
    """

    def __init__(
        self, source: Source, ctx: Context | None, limits: ExtractLimits, limit_resources: bool
    ) -> None:
        from . import _soffice

        self._tmp = tempfile.TemporaryDirectory(prefix="jobbench-xlsx-")
        try:
            tmpdir = Path(self._tmp.name)
            (tmpdir / "in").mkdir()
            (tmpdir / "out").mkdir()
            suffix = source.suffix if source.suffix in (".xlsx", ".xlsm") else ".xlsx"
            src = source.copy_to(tmpdir / "in" / ("book" + suffix))
            timeout = limits.soffice_timeout
            if ctx is not None and ctx.remaining() is not None:
                timeout = max(1.0, min(timeout, (ctx.remaining() or 0.0) - 5.0))
            self._conversion = _soffice.Conversion(
                src, "xlsx", tmpdir / "out", timeout=timeout, limit_resources=limit_resources
            )
        except BaseException:
            self._tmp.cleanup()
            raise

    def values(self, sheets, epoch_1904, ctx: Context | None):  # noqa: ANN001
        """The formula cells' recalculated values, as :func:`_values_pass` returns them.

        Raises:
            ExtractionError: LibreOffice timed out, failed or wrote nothing.
        """
        out = self._conversion.wait()
        with open(out, "rb") as f:
            return _values_pass(f, sheets, epoch_1904, ctx)

    def close(self) -> None:
        self._conversion.cancel()
        self._tmp.cleanup()


_FORMULAS_KEY = re.compile(
    r"^'?\[(?P<book>[^\]]+)\](?P<sheet>.+?)'?!(?P<cell>\$?[A-Z]{1,3}\$?[0-9]+)$"
)


def _recalc_formulas(source: Source, sheets, epoch_1904, ctx: Context | None):
    import warnings

    with tempfile.TemporaryDirectory(prefix="jobbench-xlsx-") as tmp:
        path = source.copy_to(Path(tmp) / "book.xlsx")
        sink = io.StringIO()
        with (
            contextlib.redirect_stderr(sink),
            contextlib.redirect_stdout(sink),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("ignore")
            import formulas

            model = formulas.ExcelModel().loads(str(path))
            try:
                model.finish()
            except Exception:  # noqa: BLE001 - retry allowing circular references
                model = formulas.ExcelModel().loads(str(path))
                model.finish(circular=True)
            solution = model.calculate()
    by_upper = {sd.name.upper(): sd for sd in sheets}
    out: dict[str, dict[str, tuple[CellValue, bool]]] = {sd.name: {} for sd in sheets}
    for key, ranges in solution.items():
        m = _FORMULAS_KEY.match(str(key))
        if not m:
            continue
        sheet_name = m.group("sheet").replace("''", "'")
        sd = by_upper.get(sheet_name.upper())
        if sd is None:
            continue
        coord = m.group("cell").replace("$", "")
        if coord not in sd.formulas:
            continue
        value = getattr(ranges, "value", ranges)
        try:
            value = (
                value[0][0]
                if hasattr(value, "__getitem__") and not isinstance(value, str)
                else value
            )
        except (IndexError, TypeError):
            pass
        out[sd.name][coord] = normalise(value, None, sd.formats.get(coord), epoch_1904)
    return out


def _package_parts(
    source: Source,
) -> tuple[set[str], list[tuple[str, bytes]], list[tuple[str, bytes]]]:
    """Part names, chart parts and media parts."""
    with source.open() as f, zipfile.ZipFile(f) as zf:
        names = set(zf.namelist())
        charts = [
            (n, zf.read(n)) for n in sorted(names) if re.fullmatch(r"xl/charts/chart\d+\.xml", n)
        ]
        media = [(n, zf.read(n)) for n in sorted(names) if n.startswith("xl/media/")]
    return names, charts, media


_QUALIFIED_REF = re.compile(
    r"(?<![A-Za-z0-9_.$])(?:(?P<sheet>'(?:[^']|'')+'|[A-Za-z_][A-Za-z0-9_.]*)!)?"
    r"(?:(?P<c1>\$?[A-Z]{1,3})(?P<r1>\$?[0-9]{1,7})(?::(?P<c2>\$?[A-Z]{1,3})(?P<r2>\$?[0-9]{1,7}))?"
    r"|(?P<cc1>\$?[A-Z]{1,3}):(?P<cc2>\$?[A-Z]{1,3})"
    r"|(?P<rr1>\$?[0-9]{1,7}):(?P<rr2>\$?[0-9]{1,7}))"
    r"(?![A-Za-z0-9_(!])"
)
_NAME_TOKEN = re.compile(r"(?<![A-Za-z0-9_.$'!])([A-Za-z_][A-Za-z0-9_.]*)(?![A-Za-z0-9_.(!])")
MAX_ROW, MAX_COL = 1_048_576, 16_384
PROPAGATION_WORK = 20_000_000
"""Range-membership checks allowed when propagating untrusted cells to their dependents."""


def formula_refs(
    formula: str, own_sheet: str, names: dict[str, str] | None = None, _depth: int = 0
) -> list[tuple[str, int, int, int, int]]:
    """Cell ranges a formula reads: ``(sheet, row1, col1, row2, col2)``, inclusive.

    Unqualified references are on ``own_sheet``; whole columns (``A:A``) and rows (``3:3``)
    span the sheet; defined names are expanded (one level of nesting). References to
    other workbooks are included under their sheet name (they can only over-approximate).
    """
    from openpyxl.utils import column_index_from_string

    body = _STRING_RE.sub('""', formula)
    out = []
    for m in _QUALIFIED_REF.finditer(body):
        sheet = m.group("sheet")
        sheet = (
            own_sheet
            if sheet is None
            else (sheet[1:-1].replace("''", "'") if sheet.startswith("'") else sheet)
        )
        try:
            if m.group("c1"):
                c1 = column_index_from_string(m.group("c1").lstrip("$"))
                r1 = int(m.group("r1").lstrip("$"))
                c2 = column_index_from_string(m.group("c2").lstrip("$")) if m.group("c2") else c1
                r2 = int(m.group("r2").lstrip("$")) if m.group("r2") else r1
            elif m.group("cc1"):
                c1 = column_index_from_string(m.group("cc1").lstrip("$"))
                c2 = column_index_from_string(m.group("cc2").lstrip("$"))
                r1, r2 = 1, MAX_ROW
            else:
                r1, r2 = int(m.group("rr1").lstrip("$")), int(m.group("rr2").lstrip("$"))
                c1, c2 = 1, MAX_COL
        except ValueError:
            continue
        out.append((sheet, min(r1, r2), min(c1, c2), max(r1, r2), max(c1, c2)))
    if names and _depth == 0:
        for m in _NAME_TOKEN.finditer(body):
            target = names.get(m.group(1).upper())
            if target:
                out.extend(formula_refs(target, own_sheet, names, _depth + 1))
    return out


def propagate_untrusted(
    sheets: list[SheetData],
    direct: dict[tuple[str, str], str],
    defined_names: list[tuple[str, str]],
) -> tuple[dict[tuple[str, str], str], bool]:
    """Extend the untrusted cells to every formula that reads one, transitively.

    Returns:
        ``(reasons, complete)``: reason per untrusted ``(sheet, coord)``; ``complete`` is
        False when the work limit stopped the analysis, in which case every formula cell
        is returned as untrusted.
    """
    from ._xlsx_read import col_index

    names = {n.upper(): t for n, t in defined_names if t}
    single: dict[tuple[str, int, int], list[tuple[str, str]]] = {}
    ranges: dict[str, list[tuple[int, int, int, int, str, str]]] = {}
    for sd in sheets:
        for coord, formula in sd.formulas.items():
            for sheet, r1, c1, r2, c2 in formula_refs(formula, sd.name, names):
                if r1 == r2 and c1 == c2:
                    single.setdefault((sheet.upper(), r1, c1), []).append((sd.name, coord))
                else:
                    ranges.setdefault(sheet.upper(), []).append((r1, c1, r2, c2, sd.name, coord))
    reasons = dict(direct)
    work = 0
    queue = list(direct)
    while queue:
        sheet, coord = queue.pop()
        m = _CELL_ONLY.match(coord)
        assert m is not None  # queued coordinates are single cells
        row, col = int(m.group(2)), col_index(m.group(1))
        origin = reasons[(sheet, coord)]
        because = origin if origin.startswith("depends on") else f"depends on {sheet}!{coord}"
        key = sheet.upper()
        dependents = list(single.get((key, row, col), ()))
        for r1, c1, r2, c2, dsheet, dcoord in ranges.get(key, ()):
            if r1 <= row <= r2 and c1 <= col <= c2:
                dependents.append((dsheet, dcoord))
        work += len(ranges.get(key, ())) + 1
        if work > PROPAGATION_WORK:
            return {
                (sd.name, c): reasons.get((sd.name, c), "untrusted workbook")
                for sd in sheets
                for c in sd.formulas
            }, False
        for dep in dependents:
            if dep not in reasons:
                reasons[dep] = because
                queue.append(dep)
    return reasons, True


_CELL_ONLY = re.compile(r"^([A-Z]{1,3})([0-9]+)$")


def _resolve_engine(requested: str, soffice_present: bool) -> str:
    if requested == "auto":
        return "libreoffice" if soffice_present else "formulas"
    return requested


def read_workbook(
    source: Source,
    ctx: Context | None,
    limits: ExtractLimits,
    *,
    limit_resources: bool = False,
    converted_from: dict[str, dict[str, tuple[CellValue, bool]]] | None = None,
) -> Workbook:
    """Run the passes and the recalculation; see the module docstring.

    Args:
        source: a verified xlsx/xlsm (already past the zip-bomb guard).
        ctx: for deadline checks (``None`` = no deadline).
        limits: ``xlsx_engine`` and ``soffice_timeout`` are used.
        limit_resources: apply rlimits to LibreOffice (worker only).
        converted_from: set when ``source`` is LibreOffice's recalculated conversion of
            another workbook (an xls): the values cached in that original file, ``{sheet:
            {coord: (value, is_error)}}`` for its formula cells (absent: no cached value).
            The values stored in ``source`` are then the recalculated ones, and no engine
            runs again.

    Raises:
        ExtractionError / openpyxl, zipfile errors: unreadable workbook (the caller turns
        them into an error diagnostic).
    """
    from ._soffice import soffice_unavailable_reason

    soffice_missing = soffice_unavailable_reason()  # None when LibreOffice can run
    early: _Recalc | ExtractionError | None = None
    if (
        converted_from is None
        and soffice_missing is None
        and _resolve_engine(limits.xlsx_engine, True) == "libreoffice"
        and may_have_formulas(source)
    ):
        try:  # LibreOffice recalculates while the formula pass reads the file
            early = _Recalc(source, ctx, limits, limit_resources)
        except ExtractionError as exc:
            early = exc
    try:
        return _read_workbook(
            source, ctx, limits, converted_from, soffice_missing, early, limit_resources
        )
    finally:
        if isinstance(early, _Recalc):
            early.close()


def _read_workbook(
    source: Source,
    ctx: Context | None,
    limits: ExtractLimits,
    converted_from: dict[str, dict[str, tuple[CellValue, bool]]] | None,
    soffice_missing: str | None,
    early: _Recalc | ExtractionError | None,
    limit_resources: bool,
) -> Workbook:
    """:func:`read_workbook` once LibreOffice has been started (``early``: the running
    conversion, or why it could not start; None: not started)."""
    diags: list[Diagnostic] = []
    names, charts, media = _package_parts(source)
    sheets, defined_names, epoch_1904, cached, shown = _formula_pass(source, ctx)
    if isinstance(early, _Recalc):
        prepare_render(sheets)  # while LibreOffice works
    chart_hidden = {}  # chart part -> why a reader cannot see it
    for name, _data in charts:
        why = shown.get(name, "chart no sheet shows")
        if why is not None:
            chart_hidden[name] = why

    n_formulas = sum(len(s.formulas) for s in sheets)
    cut = [sd.name for sd in sheets if sd.layout_incomplete]
    if cut:
        diags.append(
            Diagnostic(
                level="warning",
                message="more merged ranges or conditional formats than the extractor checks "
                f"(limits in extract/_xlsx_read.py) on sheet(s) {', '.join(cut)}: every cell "
                "there is marked hidden",
            )
        )
    soffice_present = soffice_missing is None
    requested = limits.xlsx_engine
    engine = _resolve_engine(requested, soffice_present)
    recalculated = None
    engine_note = ""
    failures: list[tuple[str | None, str]] = []
    if n_formulas == 0:
        engine, engine_note = "cached", "no formulas"
    elif converted_from is not None:
        recalculated = cached
        cached = {
            sd.name: {
                coord: converted_from.get(sd.name, {}).get(coord, (None, False))
                for coord in sd.formulas
            }
            for sd in sheets
        }
        engine = "libreoffice"
        engine_note = (
            "values recalculated with LibreOffice (converted to xlsx, recalculation forced on load)"
        )
        diags.append(Diagnostic(level="info", message=engine_note))
    else:
        order = [engine] + (["formulas"] if engine == "libreoffice" else [])
        if engine == "libreoffice" and not soffice_present:
            failures.append(
                ("warning", f"LibreOffice requested but not available ({soffice_missing})")
            )
            order = ["formulas"]
        for candidate in order:
            if candidate == "cached":
                break
            try:
                if candidate == "libreoffice":
                    if isinstance(early, ExtractionError):
                        raise early
                    recalc = early or _Recalc(source, ctx, limits, limit_resources)
                    try:
                        recalculated = recalc.values(sheets, epoch_1904, ctx)
                    finally:
                        if recalc is not early:
                            recalc.close()
                elif n_formulas > limits.formulas_max_cells:
                    failures.append(
                        (
                            "warning",
                            f"formulas recalculation skipped: {n_formulas:,} formula cells exceed "
                            "its limit of "
                            f"{limits.formulas_max_cells:,} (install LibreOffice to recalculate "
                            "large workbooks)",
                        )
                    )
                    continue
                else:
                    recalculated = _recalc_formulas(source, sheets, epoch_1904, ctx)
                engine = candidate
                break
            except Exception as exc:  # noqa: BLE001 - any engine failure falls through to the next
                if type(exc).__name__ == "DeadlineExceeded":
                    raise
                failures.append(
                    (
                        None,
                        f"{'LibreOffice' if candidate == 'libreoffice' else 'formulas'} "
                        "recalculation "
                        f"failed: {type(exc).__name__}: {str(exc)[:300]}",
                    )
                )
        if recalculated is None:
            engine = "cached"
        for level, msg in failures:
            level = level or ("warning" if recalculated is not None else "error")
            diags.append(Diagnostic(level=level, message=msg))
        if engine == "libreoffice":
            engine_note = (
                "values recalculated with LibreOffice (headless, recalculation forced on load)"
            )
        elif engine == "formulas":
            why = (
                soffice_missing
                if not soffice_present
                else (
                    "LibreOffice failed"
                    if requested in ("auto", "libreoffice")
                    else "engine chosen"
                )
            )
            engine_note = f"values recalculated with the formulas package ({why})"
        else:
            engine_note = (
                "values are the cached values saved in the file (recalculation disabled)"
                if requested == "cached"
                else "values are the cached values saved in the file (no engine could recalculate)"
            )
        diags.append(Diagnostic(level="info", message=engine_note))

    # cells whose recalculation cannot be trusted: volatile functions, external
    # references, and (in a workbook with macros) cells that only recalculate to an error;
    # then every formula that depends on one of them
    has_macros = "xl/vbaProject.bin" in names
    has_links = any(n.startswith("xl/externalLinks/") for n in names)
    volatile_cells: list[str] = []
    external_cells: list[str] = []
    macro_cells: list[str] = []
    direct: dict[tuple[str, str], str] = {}
    for sd in sheets:
        rec = (recalculated or {}).get(sd.name, {})
        cac = cached.get(sd.name, {})
        for coord, formula in sd.formulas.items():
            bare = _STRING_RE.sub('""', formula) if '"' in formula else formula
            m = _UNTRUSTED_RE.search(bare) if "(" in bare else None
            if m:
                direct[(sd.name, coord)] = f"volatile {m.group(1).upper()}"
                volatile_cells.append(f"{sd.name}!{coord} ({m.group(1).upper()})")
            elif "[" in bare and _EXTERNAL_RE.search(bare):
                direct[(sd.name, coord)] = "external link"
                external_cells.append(f"{sd.name}!{coord}")
            elif has_macros and recalculated is not None:
                c_val, c_err = cac.get(coord, (None, False))
                if rec.get(coord, (None, False))[1] and not c_err and c_val is not None:
                    direct[(sd.name, coord)] = "macro workbook"
                    macro_cells.append(f"{sd.name}!{coord}")
    reasons, complete = (
        propagate_untrusted(sheets, direct, defined_names)
        if direct and recalculated is not None
        else (direct, True)
    )
    n_dependent = len(reasons) - len(direct)
    stale = []
    missing = 0
    for sd in sheets:
        rec = (recalculated or {}).get(sd.name, {})
        cac = cached.get(sd.name, {})
        for coord in sd.formulas:
            c_val, c_err = cac.get(coord, (None, False))
            r_val, r_err = (
                rec.get(coord, (None, False)) if recalculated is not None else (c_val, c_err)
            )
            sd.cached[coord] = c_val
            if c_val is None:
                missing += 1
            reason = reasons.get((sd.name, coord))
            if recalculated is None:
                val, err = c_val, c_err
            elif reason is not None:
                # never a value recalculated now: it would differ from run to run and day to day
                if c_val is not None:
                    val, err = c_val, c_err
                    sd.untrusted[coord] = f"{reason}: value cached in the file, not recalculated"
                else:
                    val, err = None, False
                    sd.untrusted[coord] = f"{reason}: no value cached in the file, not recalculated"
            else:
                val, err = r_val, r_err
                if c_val is not None and not _same(c_val, r_val):
                    stale.append((sd.name, coord, c_val, r_val))
            sd.values[coord] = val
            if err:
                sd.errors[coord] = str(val)
            if sd.deferred or sd.looks:
                _judge_look(sd, coord, val, err)

    def _eg(cells: list[str]) -> str:
        return ", ".join(cells[:10]) + (" …" if len(cells) > 10 else "")

    if volatile_cells:
        diags.append(
            Diagnostic(
                level="warning",
                message=(
                    f"volatile functions in {len(volatile_cells)} cell(s), not recalculated: "
                    f"{_eg(volatile_cells)}; these cells show the value cached in the file, or "
                    "none "
                    "when the file has none"
                ),
            )
        )
    if external_cells or has_links:
        diags.append(
            Diagnostic(
                level="warning",
                message=(
                    "external links"
                    + (
                        f" in {len(external_cells)} cell(s): {_eg(external_cells)}"
                        if external_cells
                        else ""
                    )
                    + "; links are never updated, cells show the value cached in the file"
                ),
            )
        )
    if n_dependent:
        diags.append(
            Diagnostic(
                level="warning",
                message=(
                    f"{n_dependent} formula cell(s) depend on those cells and also show their "
                    "cached value "
                    "(none when the file has none)"
                    + (
                        ""
                        if complete
                        else " (dependency analysis stopped at its work limit: every formula cell "
                        "with a "
                        "cached value shows it)"
                    )
                ),
            )
        )
    if has_macros:
        diags.append(
            Diagnostic(
                level="warning",
                message=(
                    "workbook contains macros (vbaProject.bin), never run"
                    + (
                        f"; {len(macro_cells)} cell(s) that recalculate only to an error show "
                        "their cached value: "
                        f"{_eg(macro_cells)}"
                        if macro_cells
                        else ""
                    )
                ),
            )
        )
    if stale:
        eg = ", ".join(f"{s}!{c} saved {show(a)} → {show(b)}" for s, c, a, b in stale[:5])
        diags.append(
            Diagnostic(
                level="warning",
                message=(
                    f"{len(stale)} formula cell(s) had stale cached values, recalculated values "
                    f"are shown (e.g. {eg})"
                ),
            )
        )
    if missing and n_formulas:
        if engine == "cached":
            diags.append(
                Diagnostic(
                    level="warning",
                    message=(
                        f"{missing} of {n_formulas} formula cell(s) have no cached value and could "
                        "not be recalculated "
                        "(shown empty)"
                    ),
                )
            )
        else:
            diags.append(
                Diagnostic(
                    level="info",
                    message=(
                        f"{missing} of {n_formulas} formula cell(s) had no cached value (workbook "
                        "saved without "
                        "calculation, e.g. written by a script); recalculated values are shown"
                    ),
                )
            )
    n_err = sum(len(s.errors) for s in sheets)
    if n_err:
        eg = ", ".join(f"{s.name}!{c} {v}" for s in sheets for c, v in list(s.errors.items())[:3])
        diags.append(
            Diagnostic(level="warning", message=f"{n_err} cell(s) hold error values (e.g. {eg})")
        )
    return Workbook(
        sheets=sheets,
        engine=engine,
        engine_note=engine_note,
        diagnostics=diags,
        defined_names=defined_names,
        charts=charts,
        chart_hidden=chart_hidden,
        media=media,
        epoch_1904=epoch_1904,
    )


# --------------------------------------------------------------------------- rendering


def _annotations(sd: SheetData) -> dict[str, str]:
    """Formula annotation per formula cell; a long fill-down run is shown once."""
    from openpyxl.utils import coordinate_to_tuple

    # a formula cell's row and column, as its coordinate states them (sd.cells holds both);
    # past column ZZZ (cells without a coordinate) coordinate_to_tuple raises, as it did
    place: dict[str, tuple[int, int]] = {}
    formulas = sd.formulas
    for r, c, coord in sd.cells:
        if c <= 18_278 and coord in formulas:
            place[coord] = (r, c)
    by_col: dict[int, list[tuple[int, str]]] = {}
    for coord in formulas:
        got = place.get(coord)
        r, c = got if got is not None else coordinate_to_tuple(coord)
        by_col.setdefault(c, []).append((r, coord))
    notes: dict[str, str] = {}
    for c, cells in by_col.items():
        cells.sort()
        i = 0
        end = len(cells)
        while i < end:
            r0, coord0 = cells[i]
            form = relative_form(formulas[coord0], r0, c)
            j = i + 1
            prev = r0
            while j < end:
                r, coord = cells[j]
                if r != prev + 1 or relative_form(formulas[coord], r, c) != form:
                    break
                prev = r
                j += 1
            formula = formulas[coord0]
            formula = formula if formula.startswith(("=", "{")) else "=" + formula
            if j - i >= FILL_RUN_MIN:
                notes[coord0] = note(
                    f"[{formula} ; filled down to {cells[j - 1][1]}, {j - i:,} cells]"
                )
                for _r, coord in cells[i + 1 : j]:
                    notes[coord] = ""
            else:
                for _r, coord in cells[i:j]:
                    f = formulas[coord]
                    notes[coord] = note(f"[{f if f.startswith(('=', '{')) else '=' + f}]")
            i = j
    return notes


def _sheet_header(sd: SheetData) -> str:
    state = "" if sd.state == "visible" else f", {sd.state}"
    if sd.chartsheet:
        return note(f'## Chart sheet "{sd.name}"')
    if not sd.cells:
        return note(f'## Sheet "{sd.name}" (empty{state})')
    from openpyxl.utils import get_column_letter

    row_nos = [r for r, _c, _coord in sd.cells]
    col_nos = [c for _r, c, _coord in sd.cells]
    first_row, last_row = min(row_nos), max(row_nos)
    min_c, max_c = min(col_nos), max(col_nos)
    rows = set(row_nos)
    used = f"{get_column_letter(min_c)}{first_row}:{get_column_letter(max_c)}{last_row}"
    return note(
        f'## Sheet "{sd.name}" (used range {used}; {len(rows):,} rows with data; '
        f"{len(sd.formulas):,} formulas{state})"
    )


def _rows(sd: SheetData) -> list[list[str]]:
    """Coordinates grouped by row, in file order."""
    rows: list[list[str]] = []
    current = None
    for r, _c, coord in sd.cells:
        if r != current:
            rows.append([])
            current = r
        rows[-1].append(coord)
    return rows


def _row_line(sd: SheetData, coords: list[str], notes: dict[str, str]) -> str:
    """One row ``A1=… | B1=…``; cells of hidden rows or columns go on a line of their own,
    marked ``[hidden: …]`` (see :mod:`._hidden`)."""
    hidden = [c for c in coords if c in sd.hidden]
    if not hidden:
        return _cells_line(sd, coords, notes)
    shown = [c for c in coords if c not in sd.hidden]
    lines = [_cells_line(sd, shown, notes)] if shown else []
    for why in dict.fromkeys(sd.hidden[c] for c in hidden):
        cells = [c for c in hidden if sd.hidden[c] == why]
        lines.append(hidden_lines(_cells_line(sd, cells, notes), why))
    return "\n".join(lines)


def _cells_line(sd: SheetData, coords: list[str], notes: dict[str, str]) -> str:
    parts = []
    for coord in coords:
        text = note(f"{coord}=") + show(
            sd.values.get(coord), coord in sd.errors, sd.formats.get(coord), marked=True
        )
        formula = notes.get(coord)
        if formula:
            text += note(" ") + formula
        flag = sd.untrusted.get(coord)
        if flag:
            text += note(f" ({flag})")
        for why, run in sd.hidden_runs.get(coord, ()):
            text += note(" ") + hidden_inline(run, why)
        parts.append(text)
    return " | ".join(parts)


def render_sheet(sd: SheetData, budget: int | None = None) -> tuple[str, bool]:
    """The text of one sheet: a header, then one line per row ``A1=… | B1=…``.

    With a ``budget``, only the rows that fit are rendered: the first rows (3/4 of the
    budget) and the last rows (1/4) around a marker naming the rows left out, so a
    50,000-row sheet costs what its visible part costs.

    Returns:
        ``(text, truncated)``.
    """
    header = _memo(sd, "header", _sheet_header)
    if sd.chartsheet or not sd.cells:
        return header + "\n", False
    notes = _memo(sd, "notes", _annotations)
    rows = _memo(sd, "rows", _rows)
    if budget is None:
        return header + "\n" + "\n".join(_row_line(sd, r, notes) for r in rows) + "\n", False
    room = budget - len(header) - 200
    head_room = int(room * HEAD_FRACTION)
    tail_room = room - head_room
    head_lines: list[str] = []
    used = 0
    i = 0
    while i < len(rows):
        line = _row_line(sd, rows[i], notes)
        if used + len(line) + 1 > head_room:
            break
        head_lines.append(line)
        used += len(line) + 1
        i += 1
    if i == len(rows):
        return header + "\n" + "\n".join(head_lines) + "\n", False
    tail_lines: list[str] = []
    used = 0
    j = len(rows) - 1
    while j >= i:
        line = _row_line(sd, rows[j], notes)
        if used + len(line) + 1 > tail_room:
            break
        tail_lines.append(line)
        used += len(line) + 1
        j -= 1
    if j < i:  # everything fitted after all
        return header + "\n" + "\n".join(head_lines + tail_lines[::-1]) + "\n", False
    r0 = re.sub(r"^[A-Z]+", "", rows[i][0])
    r1 = re.sub(r"^[A-Z]+", "", rows[j][0])
    marker = note(
        f'[... truncated: {j - i + 1:,} rows of sheet "{sd.name}" (rows {r0}–{r1}) omitted here; '
        "head and tail kept ...]"
    )
    text = header + "\n" + "\n".join(head_lines + [marker] + tail_lines[::-1]) + "\n"
    return text, True


def _memo(sd: SheetData, key: str, compute):  # noqa: ANN001, ANN202
    """``compute(sd)``, computed once per sheet (:attr:`SheetData.memo`)."""
    if key not in sd.memo:
        sd.memo[key] = compute(sd)
    return sd.memo[key]


def prepare_render(sheets: list[SheetData]) -> None:
    """Compute what rendering needs from the cells and formulas alone (not their values):
    run while LibreOffice recalculates, so that less work waits for it."""
    for sd in sheets:
        _memo(sd, "header", _sheet_header)
        _memo(sd, "min_length", _min_length)
        if not sd.chartsheet and sd.cells:
            _memo(sd, "notes", _annotations)
            _memo(sd, "rows", _rows)


def _min_length(sd: SheetData) -> int:
    """A cheap lower bound of a sheet's rendered length (``A1=x | `` per cell)."""
    return sum(len(coord) + 4 for _r, _c, coord in sd.cells)


def _record_hidden(sd: SheetData, ctx: Context) -> None:
    """Record the sheet's hidden content on ``ctx`` (for the judge's injection check)."""

    def values(coords) -> str:  # noqa: ANN001
        shown = (show(sd.values.get(c)) for c in coords if sd.values.get(c) not in (None, ""))
        return " | ".join(shown)

    if sd.state != "visible":
        every = values(c for _r, _c, c in sd.cells)
        record(ctx.hidden, f"{sd.state} sheet", f'sheet "{sd.name}": {every}')
        return
    for why in sorted(set(sd.hidden.values())):
        text = values(c for _r, _c, c in sd.cells if sd.hidden.get(c) == why)
        if text:
            record(ctx.hidden, why, f'sheet "{sd.name}": {text}')
    for coord, runs in sd.hidden_runs.items():
        for why, run in runs:
            record(ctx.hidden, why, f'sheet "{sd.name}" {coord}: {run}')


def render_workbook(wb: Workbook, ctx: Context, budget: int) -> str:
    """The whole workbook's text within ``budget`` characters: a header line, every sheet
    (a fair share of the budget each, head and tail kept), named ranges and charts."""
    from ._ooxml import chart_summary

    names = ", ".join(
        f'"{s.name}"' + (" (hidden)" if s.state != "visible" else "") for s in wb.sheets
    )
    header = (
        note(
            f"Workbook with {len(wb.sheets)} sheet(s): {names}\n[{wb.engine_note or 'no formulas'}]"
        )
        + "\n"
    )
    tail_parts = []
    if wb.defined_names:
        tail_parts.append(
            note("Named ranges: " + "; ".join(f"{n} = {t}" for n, t in wb.defined_names[:100]))
        )
    for name, data in wb.charts:
        # a chart's points are the cells it refers to (Excel and LibreOffice redraw it
        # from them): the values cached in the chart part are annotation, not content
        summary = note(f"{name}: ") + chart_summary(data, cached_points=False)
        why = wb.chart_hidden.get(name)
        if why is not None:
            plain = split_notes(summary)[0]
            tail_parts.append(hidden_lines(plain, why))
            record(ctx.hidden, why, plain)
        else:
            tail_parts.append(summary)
    for name, data in wb.media:
        label = ctx.add_image(name.rsplit("/", 1)[-1], data)
        tail_parts.append(note(f"[image: {name}" + ("" if label else ", not extracted") + "]"))
    tail = ("\n" + "\n".join(tail_parts) + "\n") if tail_parts else ""
    tail, cut_tail = head_tail(tail, max(1000, budget // 5), what="charts and names")
    room = max(1000, budget - len(header) - len(tail) - 2 * len(wb.sheets))
    # sheets that certainly exceed the whole budget are rendered lazily (head and tail rows
    # only); the others are rendered in full to learn their length
    texts: list[str | None] = []
    text: str | None
    lengths = []
    for sd in wb.sheets:
        lower = _memo(sd, "min_length", _min_length)
        if lower > room:
            texts.append(None)
            lengths.append(lower)
        else:
            text, _cut = render_sheet(sd)
            texts.append(text)
            lengths.append(len(text))
    shares = fair_shares(lengths, room)
    out = [header]
    for sd, text, share in zip(wb.sheets, texts, shares):
        if text is None or len(text) > share:
            cut, was_cut = render_sheet(sd, budget=share)
            if len(cut) > share:  # a single row longer than the share
                cut, was_cut = head_tail(cut, share, what=f'sheet "{sd.name}"')
        else:
            cut, was_cut = text, False
        ctx.truncated |= was_cut
        if sd.state != "visible" and not sd.chartsheet and sd.cells:
            head, _nl, rest = cut.partition("\n")
            cut = head + "\n" + hidden_lines(rest.rstrip("\n"), f"{sd.state} sheet") + "\n"
        _record_hidden(sd, ctx)
        out.append(cut)
    ctx.truncated |= cut_tail
    return "\n".join(out) + tail


def extract_xlsx(
    source: Source, ctx: Context, *, sha256: str = "", limit_resources: bool = False
) -> str:
    """Extractor entry point for xlsx/xlsm (see module docstring)."""
    wb = read_workbook(source, ctx, ctx.limits, limit_resources=limit_resources)
    ctx.diagnostics.extend(wb.diagnostics)
    if ctx.want_workbook:
        ctx.workbook = wb.values(ctx.rel, sha256)
    if any(d.level == "error" for d in wb.diagnostics) or any(
        "recalculation failed" in d.message for d in wb.diagnostics
    ):
        ctx.cacheable = False
    return render_workbook(wb, ctx, ctx.limits.max_chars)


def workbook_values_of(
    source: Source,
    ctx: Context | None,
    limits: ExtractLimits,
    *,
    rel: str,
    sha256: str,
    limit_resources: bool = False,
) -> WorkbookValues:
    """:class:`WorkbookValues` of a verified workbook (no rendering)."""
    wb = read_workbook(source, ctx, limits, limit_resources=limit_resources)
    return wb.values(rel, sha256)


def raise_if_not_workbook(kind: str, rel: str) -> None:
    """Raise :class:`ExtractionError` unless ``kind`` is a workbook kind."""
    if kind != "xlsx":
        raise ExtractionError(f"{rel}: not an xlsx/xlsm workbook (detected {kind})")
