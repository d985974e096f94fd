"""Legacy Excel 97–2003 workbooks (.xls) read with xlrd: every sheet's cell values as saved
by the application (xlrd reads values, not formulas; .xls files written by Excel carry
their computed values). Dates become ISO strings; errors keep their Excel code."""

from __future__ import annotations

import datetime as dt

from ._base import Context, Source
from ._budget import fair_shares, head_tail
from ._notes import note

# xlrd error codes (xlrd.biffh.error_text_from_code; [MS-XLS] 2.5.10 BErr)
_ERRORS = {0x00: "#NULL!", 0x07: "#DIV/0!", 0x0F: "#VALUE!", 0x17: "#REF!", 0x1D: "#NAME?", 0x24: "#NUM!",
           0x2A: "#N/A"}


def extract_xls(source: Source, ctx: Context) -> str:
    """Extractor entry point for xls."""
    import xlrd
    from openpyxl.utils import get_column_letter

    book = xlrd.open_workbook(file_contents=source.read_bytes(), on_demand=True)
    try:
        texts = []
        names = []
        for sheet_index in range(book.nsheets):
            ctx.check_deadline()
            sh = book.sheet_by_index(sheet_index)
            names.append(sh.name)
            lines = [note(f'## Sheet "{sh.name}" ({sh.nrows:,} rows × {sh.ncols:,} columns)')]
            for r in range(sh.nrows):
                parts = []
                for c in range(sh.ncols):
                    cell = sh.cell(r, c)
                    t, v = cell.ctype, cell.value
                    if t in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
                        continue
                    if t == xlrd.XL_CELL_NUMBER:
                        text = str(int(v)) if float(v).is_integer() and abs(v) < 2**53 else format(v, ".15g")
                    elif t == xlrd.XL_CELL_DATE:
                        try:
                            when = xlrd.xldate_as_datetime(v, book.datemode)
                            text = when.date().isoformat() if when.time() == dt.time(0) else when.isoformat()
                        except (ValueError, OverflowError):
                            text = str(v)
                    elif t == xlrd.XL_CELL_BOOLEAN:
                        text = "TRUE" if v else "FALSE"
                    elif t == xlrd.XL_CELL_ERROR:
                        text = _ERRORS.get(v, "#ERROR") + note(" (error)")
                    else:
                        text = str(v).replace("\n", "\\n")
                    parts.append(note(f"{get_column_letter(c + 1)}{r + 1}=") + text)
                if parts:
                    lines.append(" | ".join(parts))
            texts.append("\n".join(lines) + "\n")
            book.unload_sheet(sheet_index)
    finally:
        book.release_resources()
    ctx.info("xls values are those saved in the file (xlrd reads no formulas; not recalculated)")
    header = note(f"Workbook (xls) with {len(names)} sheet(s): " + ", ".join(f'"{n}"' for n in names)) + "\n"
    shares = fair_shares([len(t) for t in texts], max(1000, ctx.limits.max_chars - len(header) - 2 * len(texts)))
    out = [header]
    for name, text, share in zip(names, texts, shares):
        cut, was_cut = head_tail(text, share, what=f'sheet "{name}"')
        ctx.truncated |= was_cut
        out.append(cut)
    return "\n".join(out)
