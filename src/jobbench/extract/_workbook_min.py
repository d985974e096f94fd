"""Minimal workbook values (stand-in until the extraction stage's full version lands).

Contract (COMMON.md): ``workbook_values(path) -> WorkbookValues`` exposing, after
recalculation, ``sheets``, ``values`` (``{sheet: {A1: value}}``), ``engine`` and
``diagnostics``. This stand-in reads the values Excel/LibreOffice cached in the file
(openpyxl ``data_only=True``); when any formula cell has no cached value (a workbook written
by a script, e.g. openpyxl), it recomputes the whole workbook with the ``formulas`` package.
The extraction stage replaces it with a LibreOffice-first implementation; the judge only
depends on the contract.
"""

from __future__ import annotations

import contextlib
import io
import re
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ._records import Diagnostic

_FORMULAS_LOCK = threading.Lock()  # stdout/stderr redirection is process-wide
_CELL_RE = re.compile(r"^(?:'?\[[^\]]*\](?P<sheet>.*?)'?)!(?P<ref>\$?[A-Z]{1,3}\$?[0-9]+)$")


class WorkbookValues(BaseModel):
    """Every non-empty cell value of a workbook after recalculation.

    Attributes:
        sheets: sheet names in workbook order.
        values: ``{sheet: {"A1": value}}`` with Python scalars (float/int/str/bool/
            datetime); empty cells are absent.
        engine: ``cached`` (values stored in the file were complete) or ``formulas``
            (recomputed with the ``formulas`` package).
        diagnostics: warnings (e.g. formulas that could not be recomputed).
    """

    sheets: list[str]
    values: dict[str, dict[str, Any]]
    engine: str
    diagnostics: list[Diagnostic] = Field(default_factory=list)


def _scalar(value: Any) -> Any:
    """Unwrap numpy / formulas values into plain Python scalars (None for empty/errors)."""
    try:
        import numpy as np  # formulas depends on numpy

        if isinstance(value, np.ndarray):
            value = value.ravel()[0] if value.size else None
        if isinstance(value, np.generic):
            value = value.item()
    except ImportError:  # pragma: no cover - numpy ships with formulas
        pass
    cls = type(value).__name__
    if cls in {"XlError", "_XlError"} or (isinstance(value, str) and value.startswith("#") and value.endswith(("!", "?", "A"))):
        return str(value)
    if cls == "EmptyValue" or value is None:
        return None
    return value


def workbook_values(path: Path | str) -> WorkbookValues:
    """Read a workbook's cell values, recomputing formulas when the file has no cached values.

    Args:
        path: an ``.xlsx`` / ``.xlsm`` file.

    Returns:
        :class:`WorkbookValues`.

    Raises:
        ValueError: naming the file when it is not a readable workbook.
    """
    import openpyxl

    path = Path(path)
    try:
        wb_vals = openpyxl.load_workbook(path, data_only=True, read_only=True)
        wb_form = openpyxl.load_workbook(path, data_only=False, read_only=True)
    except Exception as exc:  # openpyxl raises many types for bad files
        raise ValueError(f"{path.name}: not a readable workbook ({type(exc).__name__}: {exc})") from exc
    sheets = list(wb_vals.sheetnames)
    values: dict[str, dict[str, Any]] = {}
    missing: list[tuple[str, str]] = []
    try:
        for name in sheets:
            out: dict[str, Any] = {}
            for row_v, row_f in zip(wb_vals[name].iter_rows(), wb_form[name].iter_rows()):
                for cv, cf in zip(row_v, row_f):
                    coord = getattr(cv, "coordinate", None)
                    if coord is None:
                        continue
                    is_formula = isinstance(cf.value, str) and cf.value.startswith("=")
                    if cv.value is None:
                        if is_formula:
                            missing.append((name, coord))
                        continue
                    out[coord] = cv.value
            values[name] = out
    finally:
        wb_vals.close()
        wb_form.close()
    diagnostics: list[Diagnostic] = []
    if not missing:
        return WorkbookValues(sheets=sheets, values=values, engine="cached")

    try:
        import formulas

        with _FORMULAS_LOCK, contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            model = formulas.ExcelModel().loads(str(path)).finish()
            solution = model.calculate()
    except Exception as exc:  # the formulas package raises assorted errors
        diagnostics.append(
            Diagnostic(level="warning", message=f"{len(missing)} formula cell(s) have no cached value and "
                       f"could not be recomputed ({type(exc).__name__}: {exc})")
        )
        return WorkbookValues(sheets=sheets, values=values, engine="cached", diagnostics=diagnostics)
    by_upper = {s.upper(): s for s in sheets}
    for key, ranges in solution.items():
        m = _CELL_RE.match(str(key))
        if not m:
            continue
        sheet = by_upper.get(m.group("sheet").upper())
        if sheet is None:
            continue
        coord = m.group("ref").replace("$", "")
        val = _scalar(getattr(ranges, "value", ranges))
        if val is not None:
            values[sheet][coord] = val
    still = [f"{s}!{c}" for s, c in missing if c not in values[s]]
    if still:
        diagnostics.append(Diagnostic(level="warning", message=f"no value for formula cell(s): {', '.join(still[:10])}"))
    return WorkbookValues(sheets=sheets, values=values, engine="formulas", diagnostics=diagnostics)
