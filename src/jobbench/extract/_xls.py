"""Legacy Excel 97–2003 workbooks (.xls).

With LibreOffice (engine ``auto`` or ``libreoffice``), the workbook is converted to xlsx by
LibreOffice, which recalculates its formulas, and read like an xlsx (formulas shown, volatile
cells with the value cached in the xls, never a value recalculated now; see :mod:`._xlsx`).

Otherwise (engine ``cached`` or ``formulas``, LibreOffice missing or failing) every sheet's
cell values are shown as saved, read with xlrd; a formula cell whose file holds no result
(files written by xlwt store an empty string) is shown ``(formula, no cached value)``, and a
warning says the formulas were not recalculated. xlrd reads no formulas, so formula cells
are found in the BIFF8 records themselves ([MS-XLS]: a ``BOF`` record 0x0809 starts each
substream, ``BoundSheet8`` 0x0085 gives each sheet's stream offset, ``Formula`` 0x0006
holds row, column and an 8-byte cached result whose last two bytes 0xFFFF mark a
non-numeric result, type byte 3 being an empty string).
"""

from __future__ import annotations

import datetime as dt
import io
import struct
import tempfile
from pathlib import Path

from ._base import Context, ExtractionError, Source
from ._budget import fair_shares, head_tail
from ._notes import note
from ._records import CellValue

# xlrd error codes (xlrd.biffh.error_text_from_code; [MS-XLS] 2.5.10 BErr)
_ERRORS = {
    0x00: "#NULL!",
    0x07: "#DIV/0!",
    0x0F: "#VALUE!",
    0x17: "#REF!",
    0x1D: "#NAME?",
    0x24: "#NUM!",
    0x2A: "#N/A",
}
NO_CACHED = "(formula, no cached value)"


def formula_cells(data: bytes) -> dict[int, dict[tuple[int, int], bool]]:
    """Formula cells of an xls per worksheet, ``{sheet index: {(row, col): has a cached
    result}}`` (0-based, sheets in ``BoundSheet8`` order); ``{}`` when the records cannot be
    read."""
    from xlrd.compdoc import CompDoc

    try:
        cd = CompDoc(data, logfile=io.StringIO())
        stream = None
        for name in ("Workbook", "Book"):
            mem, base, size = cd.locate_named_stream(name)
            if mem is not None:
                stream = mem[base : base + size]
                break
    except Exception:  # noqa: BLE001 - xlrd reports the corrupt file itself
        return {}
    if stream is None:
        return {}
    offsets: list[int] = []
    pos = 0
    records: list[tuple[int, int, int]] = []  # (record type, data offset, length)
    while pos + 4 <= len(stream):
        rtype, length = struct.unpack_from("<HH", stream, pos)
        records.append((rtype, pos, length))
        if rtype == 0x0085 and length >= 4:
            offsets.append(struct.unpack_from("<I", stream, pos + 4)[0])
        pos += 4 + length
    sheet_of = {off: i for i, off in enumerate(offsets)}
    out: dict[int, dict[tuple[int, int], bool]] = {}
    current: int | None = None
    for rtype, at, length in records:
        if rtype == 0x0809:
            current = sheet_of.get(at)
        elif rtype == 0x0006 and current is not None and length >= 14:
            row, col = struct.unpack_from("<HH", stream, at + 4)
            result = stream[at + 10 : at + 18]
            empty = result[6:8] == b"\xff\xff" and result[0] == 3
            out.setdefault(current, {})[(row, col)] = not empty
    return out


def _value(book, cell) -> tuple[CellValue, bool, str]:  # noqa: ANN001 - xlrd objects
    """``(value, is_error, text)`` of an xlrd cell."""
    import xlrd

    t, v = cell.ctype, cell.value
    if t in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
        return None, False, ""
    if t == xlrd.XL_CELL_NUMBER:
        if float(v).is_integer() and abs(v) < 2**53:
            return int(v), False, str(int(v))
        return v, False, format(v, ".15g")
    if t == xlrd.XL_CELL_DATE:
        try:
            when = xlrd.xldate_as_datetime(v, book.datemode)
            text = when.date().isoformat() if when.time() == dt.time(0) else when.isoformat()
        except (ValueError, OverflowError):
            text = str(v)
        return text, False, text
    if t == xlrd.XL_CELL_BOOLEAN:
        return bool(v), False, "TRUE" if v else "FALSE"
    if t == xlrd.XL_CELL_ERROR:
        code = _ERRORS.get(v, "#ERROR")
        return code, True, code + note(" (error)")
    return str(v), False, str(v).replace("\n", "\\n")


def _via_libreoffice(source: Source, ctx: Context, book, formulas: dict) -> str:  # noqa: ANN001
    """Convert with LibreOffice and read the recalculated xlsx, with the xls's own cached
    values as the file's cached values."""
    from . import _soffice
    from ._xlsx import read_workbook, render_workbook

    cached: dict[str, dict[str, tuple[CellValue, bool]]] = {}
    from openpyxl.utils import get_column_letter

    for index in range(book.nsheets):
        sh = book.sheet_by_index(index)
        got: dict[str, tuple[CellValue, bool]] = {}
        for (r, c), has in formulas.get(index, {}).items():
            if has and r < sh.nrows and c < sh.ncols:
                value, err, _text = _value(book, sh.cell(r, c))
                if value is not None:
                    got[f"{get_column_letter(c + 1)}{r + 1}"] = (value, err)
        cached[sh.name] = got
    with tempfile.TemporaryDirectory(prefix="jobbench-xls-") as tmp:
        (Path(tmp) / "in").mkdir()
        (Path(tmp) / "out").mkdir()
        src = source.copy_to(Path(tmp) / "in" / "book.xls")
        timeout = ctx.limits.soffice_timeout
        if ctx.remaining() is not None:
            timeout = max(1.0, min(timeout, (ctx.remaining() or 0) - 5.0))
        out = _soffice.convert(
            src, "xlsx", Path(tmp) / "out", timeout=timeout, limit_resources=ctx.limit_resources
        )
        wb = read_workbook(
            Source(out, name=ctx.rel),
            ctx,
            ctx.limits,
            limit_resources=ctx.limit_resources,
            converted_from=cached,
        )
    ctx.diagnostics.extend(wb.diagnostics)
    return render_workbook(wb, ctx, ctx.limits.max_chars)


def extract_xls(source: Source, ctx: Context) -> str:
    """Extractor entry point for xls (see module docstring)."""
    import xlrd
    from openpyxl.utils import get_column_letter

    from ._soffice import soffice_unavailable_reason
    from ._xlsx import _resolve_engine

    data = source.read_bytes()
    formulas = formula_cells(data)
    n_formulas = sum(len(f) for f in formulas.values())
    missing_lo = soffice_unavailable_reason()
    engine = _resolve_engine(ctx.limits.xlsx_engine, missing_lo is None)
    book = xlrd.open_workbook(file_contents=data, on_demand=True)
    try:
        why_cached = "recalculation disabled (engine cached)" if engine == "cached" else None
        if n_formulas and engine == "libreoffice" and missing_lo is None:
            try:
                return _via_libreoffice(source, ctx, book, formulas)
            except ExtractionError as exc:
                why_cached = f"LibreOffice failed: {exc}"
                ctx.cacheable = False
        elif n_formulas and why_cached is None:
            why_cached = missing_lo or "LibreOffice is needed to recalculate xls formulas"
        texts = []
        names = []
        no_value = 0
        for sheet_index in range(book.nsheets):
            ctx.check_deadline()
            sh = book.sheet_by_index(sheet_index)
            names.append(sh.name)
            in_sheet = formulas.get(sheet_index, {})
            lines = [note(f'## Sheet "{sh.name}" ({sh.nrows:,} rows × {sh.ncols:,} columns)')]
            rows = max([sh.nrows] + [r + 1 for r, _c in in_sheet])
            for r in range(rows):
                parts = []
                cols = max(
                    [sh.ncols if r < sh.nrows else 0] + [c + 1 for rr, c in in_sheet if rr == r]
                )
                for c in range(cols):
                    text = _value(book, sh.cell(r, c))[2] if r < sh.nrows and c < sh.ncols else ""
                    has = in_sheet.get((r, c))
                    if has is None and not text:
                        continue
                    if has is False or (has and not text):
                        text = note(NO_CACHED)
                        no_value += 1
                    elif has:
                        text += note(" (formula, not recalculated)")
                    parts.append(note(f"{get_column_letter(c + 1)}{r + 1}=") + text)
                if parts:
                    lines.append(" | ".join(parts))
            texts.append("\n".join(lines) + "\n")
            book.unload_sheet(sheet_index)
    finally:
        book.release_resources()
    if n_formulas:
        ctx.warn(
            f"{n_formulas:,} xls formula cell(s) not recalculated ({why_cached}); values are those "
            f"saved in the file"
            + (f"; {no_value:,} have no cached value, marked {NO_CACHED}" if no_value else "")
        )
    else:
        ctx.info("xls values are those saved in the file (no formulas)")
    header = (
        note(f"Workbook (xls) with {len(names)} sheet(s): " + ", ".join(f'"{n}"' for n in names))
        + "\n"
    )
    shares = fair_shares(
        [len(t) for t in texts], max(1000, ctx.limits.max_chars - len(header) - 2 * len(texts))
    )
    out = [header]
    for name, text, share in zip(names, texts, shares):
        cut, was_cut = head_tail(text, share, what=f'sheet "{name}"')
        ctx.truncated |= was_cut
        out.append(cut)
    return "\n".join(out)
