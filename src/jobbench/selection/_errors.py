"""The error raised for a missing or malformed selection data file."""

from __future__ import annotations

from pathlib import Path


class DataFileError(ValueError):
    """A data file is missing, unreadable, lacks a column, or holds a bad value.

    The message always names the file (display path) and, when known, the column and the
    1-based line of the offending value, so a user can fix the file by hand.

    Attributes:
        path: the offending file.
        column: the offending column name, or None.
        line: 1-based line number in the file (header = line 1), or None.
        hint: a suggestion such as "run `jobbench selection fetch`", or None.
    """

    def __init__(
        self,
        path: Path | str,
        message: str,
        *,
        column: str | None = None,
        line: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.column = column
        self.line = line
        self.hint = hint
        self.detail = message
        where = str(self.path)
        if line is not None:
            where += f", line {line}"
        if column is not None:
            where += f", column {column!r}"
        text = f"{where}: {message}"
        if hint:
            text += f" ({hint})"
        super().__init__(text)
