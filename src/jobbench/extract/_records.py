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
    """

    model_config = ConfigDict(frozen=True)

    source: str
    name: str
    media_type: str
    data: bytes
    sha256: str


class Diagnostic(BaseModel):
    """Something extraction wants the reader to know about one file.

    ``level`` ``error`` means the file could not be (fully) read; ``warning`` means it was
    read with a caveat (stale/volatile values, truncation, unsupported part); ``info`` is
    informational (which recalculation engine ran).
    """

    model_config = ConfigDict(frozen=True)

    level: Literal["info", "warning", "error"]
    message: str


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
    """

    path: str
    kind: str
    text: str = ""
    images: list[ExtractedImage] = Field(default_factory=list)
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    sha256: str = ""
    size: int = 0
    truncated: bool = False


class FolderExtraction(BaseModel):
    """Extraction of a whole deliverable folder, in a deterministic order.

    Attributes:
        files: one :class:`Extraction` per entry (refused entries included, with an error
            diagnostic), sorted by path.
        text: the concatenation the judge sees: per file a ``=== FILE: rel/path ===``
            header followed by its text; capped by the folder budget with an explicit
            truncation marker that keeps head and tail.
    """

    files: list[Extraction]
    text: str

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
