"""Records produced by extraction (deliverable file → what the judge sees)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class ExtractedImage(BaseModel):
    """An image a grader may look at.

    Attributes:
        source: relative path of the deliverable it came from (``report.docx``).
        name: a label unique within the folder (``report.docx#image1.png``).
        media_type: ``image/png``, ``image/jpeg``, ``image/gif``, ``image/webp``, …
        data: the image bytes.
        sha256: hex digest of ``data`` (for deduplication).
        caption: what the deliverable says about the image (alt text, title), '' when
            nothing; the judge matches it against a rubric's words when it must choose
            among more images than it may attach.

    In JSON, ``data`` is base64 as pydantic writes it (URL-safe alphabet, padded).
    """

    model_config = ConfigDict(frozen=True, ser_json_bytes="base64", val_json_bytes="base64")

    source: str
    name: str
    media_type: str
    data: bytes
    sha256: str
    caption: str = ""


class Diagnostic(BaseModel):
    """Something extraction wants the reader to know about one file.

    ``level`` ``error`` means the file could not be (fully) read; ``warning`` means it was
    read with a caveat (stale/volatile values, truncation, unsupported part); ``info`` is
    informational (which recalculation engine ran).
    """

    model_config = ConfigDict(frozen=True)

    level: Literal["info", "warning", "error"]
    message: str


NOT_GRADEABLE_KINDS = frozenset({"empty", "refused", "skipped"})
"""Extraction kinds that hold nothing gradeable (see :attr:`Extraction.gradeable`)."""


class Extraction(BaseModel):
    """What extraction got from one file.

    Attributes:
        path: relative POSIX path inside the deliverable folder (or the file name).
        kind: detected format (``xlsx``, ``pdf``, ``text``, ``unsupported`` …).
        text: the text the judge sees (already capped).
        images: images available to a vision judge.
        diagnostics: warnings and errors for this file.
        sha256: hex digest of the file bytes ('' when the file was refused unread).
        size: file size in bytes.
        truncated: True when ``text`` was cut to the cap.
        cached: True when this result came from the extraction cache.
        notes: ``[start, end)`` character spans of ``text`` that the extractor wrote about
            the file rather than read from it (summaries, headers, cell coordinates,
            formulas, image notes, diagnostics, truncation markers; see
            :mod:`jobbench.extract._notes`). Sorted, non-overlapping. :meth:`content` is
            ``text`` without them.
        hidden: content a reader of the file does not see (hidden or white/tiny text,
            hidden slides, shapes, sheets, rows, columns): ``(why, excerpt)`` per part, at
            most 100. It is in ``text`` marked ``[hidden…]`` and not in :meth:`content`.
    """

    path: str
    kind: str
    text: str = ""
    images: list[ExtractedImage] = Field(default_factory=list)
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    sha256: str = ""
    size: int = 0
    truncated: bool = False
    cached: bool = False
    notes: list[tuple[int, int]] = Field(default_factory=list)
    hidden: list[tuple[str, str]] = Field(default_factory=list)

    def content(self) -> str:
        """The file's own text: :attr:`text` with exactly the extractor's annotations
        (``notes``) removed. Text the file itself holds is kept whatever it looks like (a
        memo line shaped like an annotation is still the memo's text). This is what the
        judge's ``number`` and ``regex`` checks read; a workbook shows its computed values
        here, never its formulas. Lines are kept (a removed span leaves at most a space)."""
        from ._notes import without_spans

        return without_spans(self.text, self.notes)

    @property
    def gradeable(self) -> bool:
        """False for a file with nothing to grade: empty or whitespace-only (``kind`` ``empty``,
        see :mod:`jobbench.deliverable_policy`), refused unread, or skipped past the file
        limit."""
        return self.kind not in NOT_GRADEABLE_KINDS

    @property
    def errors(self) -> list[Diagnostic]:
        """The ``error`` diagnostics."""
        return [d for d in self.diagnostics if d.level == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        """The ``warning`` diagnostics."""
        return [d for d in self.diagnostics if d.level == "warning"]


class FolderExtraction(BaseModel):
    """Extraction of a whole deliverable folder, in a deterministic order.

    Attributes:
        files: one :class:`Extraction` per entry (refused entries included, with an error
            diagnostic), sorted by path.
        text: the concatenation the judge sees: per file a ``=== FILE: rel/path ===``
            header followed by its text; capped by the folder budget with an explicit
            truncation marker that keeps head and tail.
        ignored: ``"rel: reason"`` for every entry of the folder that is not a deliverable
            (dotfiles, OS and editor junk; :func:`jobbench.deliverable_policy.excluded`),
            neither extracted nor shown.
    """

    files: list[Extraction]
    text: str
    truncated: bool = False
    ignored: list[str] = Field(default_factory=list)

    def no_deliverable_reason(self) -> str | None:
        """``None`` when some file is gradeable (:attr:`Extraction.gradeable`); otherwise
        why the folder holds no gradeable deliverable, starting with ``no gradeable
        deliverable``, naming the files present and why each does not count."""
        if any(f.gradeable for f in self.files):
            return None
        why = {
            "empty": "empty or whitespace only",
            "refused": "refused, not read",
            "skipped": "not extracted",
        }
        present = [f"{f.path} ({why.get(f.kind, f.kind)})" for f in self.files]
        present += [
            f"{entry.rsplit(': ', 1)[0]} ({entry.rsplit(': ', 1)[-1]}, not a deliverable)"
            for entry in self.ignored
        ]
        if not present:
            return "no gradeable deliverable: the folder holds no file"
        more = f" and {len(present) - 10} more" if len(present) > 10 else ""
        shown = ", ".join(present[:10]) + more
        return f"no gradeable deliverable: only {shown}"

    @property
    def images(self) -> list[ExtractedImage]:
        """All images of all files, in file order."""
        return [img for f in self.files for img in f.images]

    def file(self, path: str) -> Extraction:
        """The extraction of ``path``; KeyError if absent."""
        for f in self.files:
            if f.path == path:
                return f
        raise KeyError(path)


CellValue = bool | int | float | str | None
"""A cell value as :class:`WorkbookValues` reports it: numbers (integral floats become
``int``), strings, booleans, ``None`` for empty; dates and times as ISO 8601 strings
(``2024-01-31``, ``2024-01-31T08:30:00``, ``08:30:00``); errors as their Excel code
(``#DIV/0!``), also listed in :attr:`WorkbookValues.errors`."""


class WorkbookValues(BaseModel):
    """Every non-empty cell of a workbook after recalculation.

    Attributes:
        path: the file name (or relative path) the values came from.
        sha256: hex digest of the workbook bytes.
        engine: what produced formula values: ``libreoffice`` (headless recalculation),
            ``formulas`` (the ``formulas`` package), or ``cached`` (the values saved in the
            file: no engine available or recalculation failed; see ``diagnostics``).
        sheets: every sheet name in workbook order (chart sheets included, with no cells).
        values: ``{sheet: {"A1": value}}`` for non-empty cells (see :data:`CellValue`).
            Untrusted formula cells (see ``untrusted``) hold the value cached in the file,
            and are absent when it has none (never a value recalculated now).
        formulas: ``{sheet: {"A1": "=SUM(B2:B9)"}}`` for formula cells.
        errors: ``{sheet: {"A1": "#DIV/0!"}}`` for cells whose value is an error.
        hidden_sheets: names of hidden or very hidden sheets.
        untrusted: ``{sheet: {"A1": reason}}`` for formula cells whose value was not
            recalculated (volatile function, external link, macro workbook); their value
            is the one cached in the file, or none.
        diagnostics: info (engine), warnings (stale caches, volatile functions, …) and
            errors (recalculation failures).
    """

    path: str
    sha256: str = ""
    engine: Literal["libreoffice", "formulas", "cached"]
    sheets: list[str]
    values: dict[str, dict[str, CellValue]] = Field(default_factory=dict)
    formulas: dict[str, dict[str, str]] = Field(default_factory=dict)
    errors: dict[str, dict[str, str]] = Field(default_factory=dict)
    hidden_sheets: list[str] = Field(default_factory=list)
    untrusted: dict[str, dict[str, str]] = Field(default_factory=dict)
    diagnostics: list[Diagnostic] = Field(default_factory=list)

    def sheet_name(self, sheet: str | None) -> str:
        """Resolve ``sheet`` (exact, then case-insensitive; ``None`` = first sheet).

        Raises:
            KeyError: naming the sheet and listing the workbook's sheets.
        """
        if sheet is None:
            if not self.sheets:
                raise KeyError(f"{self.path}: workbook has no sheets")
            return self.sheets[0]
        if sheet in self.sheets:
            return sheet
        folded = [s for s in self.sheets if s.casefold() == sheet.casefold()]
        if len(folded) == 1:
            return folded[0]
        raise KeyError(f"{self.path}: no sheet {sheet!r} (sheets: {', '.join(self.sheets)})")

    def get(self, sheet: str | None, cell: str) -> CellValue:
        """The value of ``cell`` (``"B7"``, ``"$B$7"`` or lower case) on ``sheet``;
        ``None`` when the cell is empty.

        Raises:
            KeyError: if the sheet does not exist.
        """
        name = self.sheet_name(sheet)
        return self.values.get(name, {}).get(cell.replace("$", "").upper())
