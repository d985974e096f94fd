"""BLS OEWS May 2024 national wages and the join from O*NET-SOC codes to OEWS rows.

Source: U.S. Bureau of Labor Statistics, Occupational Employment and Wage Statistics,
May 2024, national cross-industry estimates (``national_M2024_dl.xlsx``, public domain);
WORKBank used the same table saved as CSV (``M2024_bls_wage_data.csv``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ._errors import DataFileError
from ._table import parse_number, read_table

_ONET = re.compile(r"^(\d{2})-(\d{4})(?:\.(\d{2}))?$")

JoinMethod = Literal["detailed", "parent", "aggregate", "missing"]


def normalise_onet_code(code: str) -> str:
    """``15-2041.01`` → ``15-2041.01``; a bare SOC code ``15-2041`` → ``15-2041.00``.

    Raises:
        ValueError: when ``code`` is not ``NN-NNNN`` or ``NN-NNNN.NN``.
    """
    m = _ONET.match(code.strip())
    if not m:
        raise ValueError(f"{code!r} is not an O*NET-SOC code (NN-NNNN.NN)")
    return f"{m.group(1)}-{m.group(2)}.{m.group(3) or '00'}"


def soc_major_code(code: str) -> str:
    """The 2018 SOC major group of a SOC or O*NET-SOC code: first two digits + ``-0000``."""
    return code.strip()[:2] + "-0000"


class OewsRow(BaseModel):
    """One OEWS national row.

    Attributes:
        occ_code: SOC 2018 code ``NN-NNNN``.
        title: ``OCC_TITLE``.
        group: ``O_GROUP`` (``total``/``major``/``minor``/``broad``/``detailed``).
        employment: ``TOT_EMP`` (jobs) or None when not published (``**``).
        mean_wage: ``A_MEAN`` (US dollars per year) or None when not published (``*``:
            hourly-only occupations).
        line: 1-based line in the file.
    """

    model_config = ConfigDict(frozen=True)

    occ_code: str
    title: str
    group: str
    employment: float | None
    mean_wage: float | None
    line: int

    @property
    def exposure(self) -> float | None:
        """Economic exposure = employment × annual mean wage (US dollars per year), or None."""
        if self.employment is None or self.mean_wage is None:
            return None
        return self.employment * self.mean_wage


class OewsTable(BaseModel):
    """The national OEWS table: ``rows[occ_code][group]``; ``path`` is the file read."""

    path: Path
    rows: dict[str, dict[str, OewsRow]]

    def get(self, occ_code: str, groups: tuple[str, ...] = ("detailed", "broad")) -> OewsRow | None:
        """The row for ``occ_code``, preferring the first of ``groups`` present."""
        by_group = self.rows.get(occ_code, {})
        for g in groups:
            if g in by_group:
                return by_group[g]
        return None

    def major_groups(self) -> dict[str, str]:
        """SOC major code → title from the ``major`` rows."""
        return {c: g["major"].title for c, g in self.rows.items() if "major" in g}


def load_oews(path: Path | str) -> OewsTable:
    """Read the OEWS national table (CSV as saved by WORKBank, or a CSV export of the BLS
    ``national_M2024_dl.xlsx``).

    Required columns: ``OCC_CODE``, ``OCC_TITLE``, ``O_GROUP`` (alias ``OCC_GROUP``),
    ``TOT_EMP``, ``A_MEAN``. Numbers may carry thousands separators; ``*``/``**``/``#``
    flags become None. When ``AREA``/``NAICS`` columns are present only national
    (``AREA`` 99) cross-industry (``NAICS`` 000000) rows are kept.

    Raises:
        DataFileError: missing file or column, a malformed number or code, a duplicate
            (code, group), or no national cross-industry row.
    """
    table = read_table(
        path,
        ["OCC_CODE", "OCC_TITLE", "O_GROUP", "TOT_EMP", "A_MEAN"],
        aliases={"O_GROUP": ("OCC_GROUP",)},
        optional=["AREA", "NAICS"],
        what="OEWS national wage file",
    )
    rows: dict[str, dict[str, OewsRow]] = {}
    for i, row in enumerate(table.rows):
        if "AREA" in row and row["AREA"].strip().lstrip("0") not in {"99", ""}:
            continue
        if "NAICS" in row and row["NAICS"].strip() not in {"000000", "0", ""}:
            continue
        code = row["OCC_CODE"].strip()
        if not re.fullmatch(r"\d{2}-\d{4}", code):
            raise table.error(i, "OCC_CODE", f"{code!r} is not a SOC code (NN-NNNN)")
        group = row["O_GROUP"].strip().lower()
        if group in rows.get(code, {}):
            first = rows[code][group].line
            raise table.error(
                i,
                "OCC_CODE",
                f"duplicate {group} row for {code} (first on line {first}); "
                "is this the national file?",
            )
        emp, _ = parse_number(table, i, "TOT_EMP", allow_empty=True, allow_flags=True)
        wage, _ = parse_number(table, i, "A_MEAN", allow_empty=True, allow_flags=True)
        rows.setdefault(code, {})[group] = OewsRow(
            occ_code=code,
            title=row["OCC_TITLE"].strip(),
            group=group,
            employment=emp,
            mean_wage=wage,
            line=table.lines[i],
        )
    if not rows:
        raise DataFileError(
            table.path, "no national cross-industry rows (AREA 99, NAICS 000000)", column="AREA"
        )
    return OewsTable(path=table.path, rows=rows)


class OewsJoin(BaseModel):
    """The OEWS row used for one O*NET-SOC occupation.

    Attributes:
        onet_soc_code: the O*NET-SOC code joined.
        occ_code, title: the OEWS row used (None when ``method`` is ``missing``).
        method: ``detailed`` (own 6-digit row), ``parent`` (an O*NET ``.01``–``.99``
            specialisation gets its 6-digit SOC parent, so it shares the parent's whole
            employment), ``aggregate`` (OEWS publishes only the broad aggregate, e.g.
            13-1023 → 13-1020), ``missing`` (no row, e.g. 55-xxxx military).
        employment, mean_wage, exposure: from that row (jobs; US dollars per year;
            employment × mean wage), None when unavailable.
    """

    onet_soc_code: str
    occ_code: str | None
    title: str | None
    method: JoinMethod
    employment: float | None
    mean_wage: float | None
    exposure: float | None


def join_oews(onet_soc_code: str, oews: OewsTable) -> OewsJoin:
    """Find the OEWS national row for an O*NET-SOC 2019 code.

    Rules (in order): the 6-digit SOC code (first 7 characters) as a ``detailed`` row
    (method ``detailed`` for ``.00`` codes, ``parent`` for specialisations); else the SOC
    broad code (last digit replaced by 0) that OEWS publishes instead of some detailed
    codes — 13-1021/13-1023 → 13-1020, 13-2023 → 13-2020, 29-2011/29-2012 → 29-2010
    (method ``aggregate``); else ``missing``.

    Raises:
        ValueError: for a malformed code.
    """
    code = normalise_onet_code(onet_soc_code)
    soc = code[:7]
    row = oews.get(soc, ("detailed",))
    method: JoinMethod = "detailed" if code.endswith(".00") else "parent"
    if row is None:
        row = oews.get(soc[:6] + "0", ("detailed", "broad"))
        method = "aggregate"
    if row is None:
        return OewsJoin(
            onet_soc_code=code,
            occ_code=None,
            title=None,
            method="missing",
            employment=None,
            mean_wage=None,
            exposure=None,
        )
    return OewsJoin(
        onet_soc_code=code,
        occ_code=row.occ_code,
        title=row.title,
        method=method,
        employment=row.employment,
        mean_wage=row.mean_wage,
        exposure=row.exposure,
    )
