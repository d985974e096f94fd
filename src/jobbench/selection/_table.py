"""Reading the delimited text files of the selection data (CSV / TSV) with clear errors."""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ._errors import DataFileError

FETCH_HINT = "get the public files with `jobbench selection fetch` or pass the path explicitly"

MISSING_FLAGS = {"*": "not available", "**": "not published", "#": "top-coded", "~": "below 0.5"}
"""OEWS special values (BLS field descriptions): ``*`` wage not available, ``**`` employment
not published, ``#`` wage ≥ the top-coding threshold, ``~`` less than 0.5 %."""


@dataclass
class Table:
    """Rows of one delimited text file, keyed by canonical column names.

    Attributes:
        path: the file read.
        columns: the header as found in the file (BOM stripped).
        rows: one dict per record, canonical column name → raw string (stripped of the
            surrounding whitespace only for the key lookup; values are kept as read).
        lines: the 1-based line number on which each record ends (header = line 1).
    """

    path: Path
    columns: list[str]
    rows: list[dict[str, str]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)

    def error(self, index: int, column: str | None, message: str) -> DataFileError:
        """A :class:`DataFileError` for record ``index`` (0-based) and ``column``."""
        return DataFileError(self.path, message, column=column, line=self.lines[index])


def _delimiter(path: Path, header: str, delimiter: str | None) -> str:
    if delimiter:
        return delimiter
    if path.suffix.lower() in {".tsv", ".txt"} or header.count("\t") > header.count(","):
        return "\t"
    return ","


def read_table(
    path: Path | str,
    required: Sequence[str],
    *,
    aliases: Mapping[str, Sequence[str]] | None = None,
    optional: Iterable[str] = (),
    delimiter: str | None = None,
    what: str = "data file",
) -> Table:
    """Read a CSV/TSV file and check that it has the ``required`` columns.

    Args:
        path: the file. ``.txt``/``.tsv`` files (and files whose header has more tabs
            than commas) are read as tab-separated, others as comma-separated; a UTF-8
            BOM is stripped.
        required: canonical names of the columns that must be present.
        aliases: canonical name → other accepted header spellings (e.g. ``Task`` ←
            ``Task Title``); the rows are keyed by the canonical name.
        optional: further canonical columns to keep when present (missing ones are absent
            from the rows, not an error).
        delimiter: force a delimiter instead of guessing.
        what: a short description used in error messages ("OEWS national wage file").

    Returns:
        a :class:`Table` with the required and optional columns of every record.

    Raises:
        DataFileError: the file is missing, is a directory, is not UTF-8, is empty, or
            lacks a required column (the message lists the missing and the found columns).
    """
    path = Path(path)
    if not path.exists():
        raise DataFileError(path, f"{what} not found", hint=FETCH_HINT)
    if not path.is_file():
        raise DataFileError(path, f"{what} is not a regular file")
    aliases = dict(aliases or {})
    try:
        with path.open(encoding="utf-8-sig", newline="") as f:
            header_line = f.readline()
            if not header_line.strip():
                raise DataFileError(
                    path, f"{what} is empty; expected a header with columns {list(required)}"
                )
            f.seek(0)
            reader = csv.reader(f, delimiter=_delimiter(path, header_line, delimiter))
            header = [h.strip() for h in next(reader)]
            index: dict[str, int] = {}
            for canon in [*required, *optional]:
                for name in (canon, *aliases.get(canon, ())):
                    if name in header:
                        index[canon] = header.index(name)
                        break
            missing = [c for c in required if c not in index]
            if missing:
                shown = ", ".join(repr(c) for c in missing)
                raise DataFileError(
                    path,
                    f"{what} lacks column(s) {shown}; found columns {header}",
                    column=missing[0],
                )
            table = Table(path=path, columns=header)
            width = len(header)
            for raw in reader:
                if not raw or (len(raw) == 1 and not raw[0].strip()):
                    continue
                if len(raw) < width:
                    raw = raw + [""] * (width - len(raw))
                table.rows.append({c: raw[i] for c, i in index.items()})
                table.lines.append(reader.line_num)
            return table
    except UnicodeDecodeError as exc:
        raise DataFileError(
            path, f"{what} is not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from exc
    except csv.Error as exc:
        raise DataFileError(path, f"{what} is not valid CSV/TSV: {exc}") from exc


def parse_number(
    table: Table,
    index: int,
    column: str,
    *,
    allow_empty: bool = False,
    allow_flags: bool = False,
) -> tuple[float | None, str | None]:
    """Parse one numeric cell: thousands separators and surrounding spaces are removed.

    Args:
        table, index, column: which cell (record ``index`` is 0-based).
        allow_empty: an empty cell gives ``(None, None)`` instead of an error.
        allow_flags: an OEWS special value (see :data:`MISSING_FLAGS`) gives
            ``(None, flag)`` instead of an error.

    Returns:
        ``(value, flag)``; ``value`` is a finite float or None.

    Raises:
        DataFileError: naming file, line and column, when the cell is not a number (or
            is empty / flagged when that is not allowed).
    """
    raw = table.rows[index].get(column, "")
    text = raw.strip().replace(",", "")
    if not text:
        if allow_empty:
            return None, None
        raise table.error(index, column, "empty value where a number is required")
    if text in MISSING_FLAGS:
        if allow_flags:
            return None, text
        raise table.error(
            index,
            column,
            f"special value {text!r} ({MISSING_FLAGS[text]}) where a number is required",
        )
    try:
        value = float(text)
    except ValueError:
        raise table.error(index, column, f"{raw!r} is not a number") from None
    if not math.isfinite(value):
        raise table.error(index, column, f"{raw!r} is not a finite number")
    return value, None


def parse_rating(table: Table, index: int, column: str, low: int = 1, high: int = 5) -> int:
    """Parse a Likert rating that must be an integer in ``[low, high]``.

    Raises:
        DataFileError: naming file, line and column, for anything else.
    """
    value, _ = parse_number(table, index, column)
    assert value is not None
    if value != int(value) or not low <= value <= high:
        raise table.error(
            index, column, f"rating {table.rows[index][column]!r} is not an integer {low}–{high}"
        )
    return int(value)
