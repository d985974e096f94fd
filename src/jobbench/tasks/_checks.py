"""Programmatic check specifications (the ``checks`` rubric extension, DESIGN §3).

A check decides one criterion without an LLM. This module only *describes* checks (their
fields and validation); :mod:`jobbench.judge` evaluates them against deliverables.

Every check has a ``kind`` and an optional ``file`` glob (POSIX-style, relative to the
deliverable folder, e.g. ``"*.xlsx"`` or ``"report/summary.csv"``); when the glob matches
several files, every statement of the checked quantity they hold must agree, and a glob
reads only the files the criterion names (docs/judge.md, "Enumeration and volume").

Expected values (:class:`Expect`) are shared by the kinds that read a value:

* ``equals``: a number (compared with ``abs_tol`` / ``rel_tol``) or a string (compared
  case-insensitively after whitespace folding);
* ``any_of``: several acceptable strings or numbers;
* ``contains``: a substring that the value must contain (case-insensitive).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

CHECK_KINDS: tuple[str, ...] = (
    "number",
    "regex",
    "file_exists",
    "xlsx_cell",
    "csv_value",
    "sqlite_query",
    "json_path",
)
"""Every check kind this version understands."""


_STRICT = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)
"""Checks come from JSON: no type coercion (``"5"`` is not a number, ``true`` is not 1),
no NaN/Infinity, no unknown fields."""

A1_RE = re.compile(r"\$?[A-Za-z]{1,3}\$?[1-9][0-9]*")
"""An A1 cell reference such as ``B7`` or ``$B$7`` (column letters, then a row >= 1)."""


class _CheckBase(BaseModel):
    model_config = _STRICT

    file: str | None = Field(
        default=None, description="Glob of deliverables to look in (default: all files)."
    )


class Expect(BaseModel):
    """An expected value for kinds that read one value (cells, query results, JSON paths).

    Exactly one of ``equals``, ``any_of`` or ``contains`` must be set.
    Tolerances apply to numbers only; ``abs_tol`` and ``rel_tol`` are ORed (either suffices).
    """

    model_config = _STRICT

    equals: float | str | None = None
    any_of: list[float | str] | None = Field(default=None, min_length=1)
    contains: str | None = None
    abs_tol: float = Field(default=0.0, ge=0)
    rel_tol: float = Field(default=0.0, ge=0)

    @model_validator(mode="after")
    def _one_target(self) -> Expect:
        given = [x is not None for x in (self.equals, self.any_of, self.contains)]
        if sum(given) != 1:
            raise ValueError("exactly one of equals, any_of, contains must be given")
        return self


class NumberCheck(_CheckBase):
    """A number must appear in the deliverable text.

    ``value`` in the stated unit; a match is any number in the text (formats such as
    ``20.2%``, ``$1,234.50``, ``1.2e3``, ``(1,234)`` for -1234) within ``abs_tol`` or
    ``rel_tol`` of ``value``. With ``percent=True``, ``0.202`` and ``20.2%`` both match
    ``value=20.2``. ``near``: keywords of which at least one must appear within ``window``
    characters of the number (case-insensitive).
    """

    kind: Literal["number"]
    value: float
    abs_tol: float = Field(default=0.0, ge=0)
    rel_tol: float = Field(default=0.0, ge=0)
    percent: bool = False
    near: list[str] = Field(default_factory=list)
    window: int = Field(default=120, ge=0)


class RegexCheck(_CheckBase):
    """A regular expression (Python ``re`` syntax) must match the deliverable text.

    ``ignore_case`` defaults to True. With ``absent=True`` the pattern must NOT match
    (useful for "does not claim X"); ``min_count`` matches are required otherwise.
    """

    kind: Literal["regex"]
    pattern: str
    ignore_case: bool = True
    absent: bool = False
    min_count: int = Field(default=1, ge=1)

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from None
        return value


class FileExistsCheck(_CheckBase):
    """A deliverable matching ``file`` (required here) must exist and be at least
    ``min_bytes`` long."""

    kind: Literal["file_exists"]
    file: str
    min_bytes: int = Field(default=1, ge=0)


class XlsxCellCheck(_CheckBase):
    """A workbook cell (after recalculation) must hold the expected value.

    ``sheet``: sheet name (default: the first sheet); ``cell``: A1 reference. Alternatively
    ``find``: a label; the value is then read from the cell to the right of the first cell
    whose text equals the label (case-insensitive), or below it with ``direction="below"``.
    """

    kind: Literal["xlsx_cell"]
    sheet: str | None = None
    cell: str | None = None
    find: str | None = None
    direction: Literal["right", "below"] = "right"
    expect: Expect

    @model_validator(mode="after")
    def _cell_or_find(self) -> XlsxCellCheck:
        if (self.cell is None) == (self.find is None):
            raise ValueError("exactly one of cell, find must be given")
        if self.cell is not None and not A1_RE.fullmatch(self.cell):
            raise ValueError(f"cell must be an A1 reference such as B7, got {self.cell!r}")
        return self


class CsvValueCheck(_CheckBase):
    """A value read from a CSV deliverable.

    Either a cell, ``column`` in the rows whose columns equal ``where`` (case-insensitive
    string comparison; every such row must hold the expected value), or an ``aggregate``
    (sum, mean, min, max, count, nunique) of ``column`` over the rows matching ``where`` (all rows
    if empty).
    ``column`` matching is case-insensitive and ignores surrounding whitespace.
    """

    kind: Literal["csv_value"]
    column: str
    where: dict[str, str] = Field(default_factory=dict)
    aggregate: Literal["sum", "mean", "min", "max", "count", "nunique"] | None = None
    expect: Expect


class SqliteQueryCheck(_CheckBase):
    """A read-only SQL query on a SQLite deliverable; the first column of the first row is
    compared with ``expect``."""

    kind: Literal["sqlite_query"]
    query: str
    expect: Expect


class JsonPathCheck(_CheckBase):
    """A value in a JSON deliverable at a dotted path (``totals.net``, ``items[0].name``,
    ``items[*].id`` to test every element; any element passing suffices)."""

    kind: Literal["json_path"]
    path: str
    expect: Expect


Check = Annotated[
    NumberCheck
    | RegexCheck
    | FileExistsCheck
    | XlsxCellCheck
    | CsvValueCheck
    | SqliteQueryCheck
    | JsonPathCheck,
    Field(discriminator="kind"),
]
"""Any programmatic check, discriminated by ``kind``."""
