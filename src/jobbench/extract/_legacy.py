"""Legacy and OpenDocument office files (doc, ppt, rtf, odt, ods, odp): converted by
LibreOffice (same private profile, timeout and sandbox as workbook recalculation) to
docx/pptx/xlsx and read by those extractors. Without LibreOffice they are unsupported."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from ._base import Context, ExtractionError, Source

TARGETS = {
    ".doc": ("docx", "docx"),
    ".rtf": ("docx", "docx"),
    ".odt": ("docx", "docx"),
    ".ppt": ("pptx", "pptx"),
    ".odp": ("pptx", "pptx"),
    ".ods": ("xlsx", "xlsx"),
}


def convertible(suffix: str) -> bool:
    """True when files with this extension can be converted (and LibreOffice is present)."""
    from ._soffice import find_soffice

    return suffix in TARGETS and find_soffice() is not None


def extract_legacy(
    source: Source, ctx: Context, *, dispatch_kind: Callable[[str, Source, Context], str]
) -> tuple[str, str]:
    """Convert with LibreOffice, then extract the converted copy.

    Returns:
        ``(kind, text)`` where kind names the original format (``doc``, ``odt`` …).

    Raises:
        ExtractionError: unknown extension, LibreOffice missing or failing.
    """
    from . import _soffice

    if source.suffix not in TARGETS:
        raise ExtractionError(f"unsupported: {source.suffix or '(no extension)'}")
    target, kind = TARGETS[source.suffix]
    with tempfile.TemporaryDirectory(prefix="jobbench-legacy-") as tmp:
        (Path(tmp) / "in").mkdir()
        (Path(tmp) / "out").mkdir()
        src = source.copy_to(Path(tmp) / "in" / f"document{source.suffix}")
        timeout = ctx.limits.soffice_timeout
        if ctx.remaining() is not None:
            timeout = max(1.0, min(timeout, (ctx.remaining() or 0.0) - 5.0))
        out = _soffice.convert(
            src, target, Path(tmp) / "out", timeout=timeout, limit_resources=ctx.limit_resources
        )
        ctx.info(f"converted from {source.suffix} to {target} with LibreOffice before reading")
        converted = Source(out, name=ctx.rel)
        text = dispatch_kind(kind, converted, ctx)
    return source.suffix.lstrip("."), text
