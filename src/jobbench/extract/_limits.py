"""Budgets, safety limits and engine choice for extraction, with environment overrides."""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

XlsxEngine = Literal["auto", "libreoffice", "formulas", "cached"]
Isolation = Literal["subprocess", "none"]

ENV_ENGINE = "JOBBENCH_XLSX_ENGINE"
ENV_SOFFICE = "JOBBENCH_SOFFICE"
ENV_ISOLATION = "JOBBENCH_EXTRACT_ISOLATION"
ENV_CACHE_DIR = "JOBBENCH_CACHE_DIR"
ENV_NO_CACHE = "JOBBENCH_NO_CACHE"


class ExtractLimits(BaseModel):
    """Every budget and safety limit extraction applies (all have defaults).

    Character budgets count Python ``str`` characters. Sizes are bytes, times seconds.

    Attributes:
        max_chars: per-file text cap (200,000 like the public judge); longer text keeps its
            head and tail around an explicit ``[... truncated ...]`` marker.
        max_total_chars: cap on the whole folder text (same head + tail rule).
        max_images: images extracted per folder (and per file), in file order: the
            candidates from which the judge attaches at most its own ``max_images`` (8 like
            the public judge) per call, chosen by relevance to the rubric.
        max_image_bytes: images larger than this (or wider/taller than
            ``max_image_side`` pixels) are downscaled and re-encoded.
        max_image_side: longest side in pixels after downscaling.
        max_image_pixels: decoded pixel count above which an image is refused
            (decompression bombs).
        sqlite_rows: rows shown per SQLite table (500 like the public judge).
        pdf_max_pages: pages read per PDF (the first 3/4 and the last 1/4 of this budget
            when a PDF is longer).
        max_files: files extracted per folder; further files are listed as skipped.
        zip_max_total: refuse a zip container (xlsx/docx/pptx/zip) whose declared
            uncompressed size exceeds this.
        zip_max_ratio: refuse a zip container whose uncompressed/compressed ratio exceeds
            this (checked per member over 1 MiB and over the whole archive).
        zip_max_members: refuse a zip container with more entries than this.
        archive_depth: how many levels of nested archives are opened (1 = members of a
            top-level zip are extracted, archives inside them are only listed).
        archive_members: members of one zip that are extracted (the rest are listed).
        timeout: wall-clock bound per file in subprocess isolation (the worker is killed
            and the file gets an error diagnostic).
        soffice_timeout: bound on one LibreOffice conversion.
        memory_mb: address-space limit (RLIMIT_AS) of the extraction worker; 0 = none.
        xlsx_engine: ``auto`` (LibreOffice if installed, else ``formulas``),
            ``libreoffice``, ``formulas`` or ``cached`` (no recalculation).
        formulas_max_cells: the ``formulas`` fallback is not attempted on workbooks with
            more formula cells than this (it takes several milliseconds and tens of KB per
            formula cell); such workbooks show their cached values with a warning.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_chars: int = Field(200_000, ge=1)
    max_total_chars: int = Field(1_000_000, ge=1)
    max_images: int = Field(32, ge=0)
    max_image_bytes: int = Field(4_000_000, ge=10_000)
    max_image_side: int = Field(2048, ge=64)
    max_image_pixels: int = Field(60_000_000, ge=10_000)
    sqlite_rows: int = Field(500, ge=1)
    pdf_max_pages: int = Field(200, ge=1)
    max_files: int = Field(1_000, ge=1)
    zip_max_total: int = Field(1 << 30, ge=1 << 16)
    zip_max_ratio: float = Field(200.0, ge=2.0)
    zip_max_members: int = Field(20_000, ge=1)
    archive_depth: int = Field(1, ge=0)
    archive_members: int = Field(50, ge=0)
    timeout: float = Field(180.0, gt=0)
    soffice_timeout: float = Field(120.0, gt=0)
    memory_mb: int = Field(4096, ge=0)
    xlsx_engine: XlsxEngine = "auto"
    formulas_max_cells: int = Field(20_000, ge=0)

    def cache_relevant(self) -> dict:
        """The fields that change an extraction's output (part of the cache key)."""
        return self.model_dump(exclude={"max_total_chars", "max_files", "timeout", "memory_mb"})


def default_limits(**overrides) -> ExtractLimits:
    """Default limits with ``$JOBBENCH_XLSX_ENGINE`` applied, then ``overrides``.

    Raises:
        pydantic.ValidationError: if an override (or the environment variable) is invalid.
    """
    values: dict = {}
    env_engine = os.environ.get(ENV_ENGINE, "").strip().lower()
    if env_engine:
        values["xlsx_engine"] = env_engine
    values.update({k: v for k, v in overrides.items() if v is not None})
    return ExtractLimits(**values)


def default_isolation() -> Isolation:
    """``$JOBBENCH_EXTRACT_ISOLATION`` (``subprocess`` or ``none``), default ``subprocess``."""
    value = os.environ.get(ENV_ISOLATION, "subprocess").strip().lower() or "subprocess"
    if value not in ("subprocess", "none"):
        raise ValueError(f"${ENV_ISOLATION} must be 'subprocess' or 'none', not {value!r}")
    return value  # type: ignore[return-value]
