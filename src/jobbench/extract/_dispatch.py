"""Dispatch one verified file to its format extractor and turn every outcome into an
:class:`Extraction` (this runs inside the extraction worker, or in-process)."""

from __future__ import annotations

import time
import zipfile

from ._base import Context, DeadlineExceeded, ExtractionError, Refused, Source, looks_binary
from ._budget import head_tail
from ._limits import ExtractLimits
from ._notes import note, split_notes
from ._records import Extraction, WorkbookValues
from ._sniff import describe_kind, extension_kind, magic_kind, zip_kind

ZIP_KINDS = {"xlsx", "docx", "pptx", "zip"}
BINARY_KINDS = ZIP_KINDS | {"pdf", "sqlite", "xls", "image"}


def run_kind(kind: str, source: Source, ctx: Context) -> str:
    """Run the extractor for ``kind`` on ``source`` and return its text."""
    ctx.kind = kind
    if kind == "xlsx":
        from ._xlsx import extract_xlsx

        return extract_xlsx(source, ctx, sha256=ctx.sha256, limit_resources=ctx.limit_resources)
    if kind == "xls":
        from ._xls import extract_xls

        return extract_xls(source, ctx)
    if kind in ("csv", "tsv"):
        from ._text import extract_csv

        return extract_csv(source, ctx, default_delimiter="\t" if kind == "tsv" else ",")
    if kind == "json":
        from ._text import extract_json

        return extract_json(source, ctx)
    if kind == "jsonl":
        from ._text import extract_jsonl

        return extract_jsonl(source, ctx)
    if kind == "html":
        from ._text import extract_html

        return extract_html(source, ctx)
    if kind == "text":
        from ._text import extract_text

        return extract_text(source, ctx)
    if kind == "svg":
        from ._images import extract_svg

        return extract_svg(source, ctx)
    if kind == "image":
        from ._images import extract_image

        return extract_image(source, ctx)
    if kind == "ipynb":
        from ._notebook import extract_ipynb

        return extract_ipynb(source, ctx)
    if kind == "pdf":
        from ._pdf import extract_pdf

        return extract_pdf(source, ctx)
    if kind == "docx":
        from ._docx import extract_docx

        return extract_docx(source, ctx)
    if kind == "pptx":
        from ._pptx import extract_pptx

        return extract_pptx(source, ctx)
    if kind == "sqlite":
        from ._sqlite import extract_sqlite

        return extract_sqlite(source, ctx)
    if kind == "zip":
        from ._archive import extract_zip

        return extract_zip(source, ctx, dispatch=extract_source)
    raise ExtractionError(f"no extractor for {kind}")


def _unsupported(source: Source, ctx: Context, what: str | None = None) -> tuple[str, str]:
    label = what or source.suffix or "(no extension)"
    ctx.kind = "unsupported"
    ctx.warn(f"unsupported format: {label}")
    return "unsupported", note(f"[unsupported: {label}]") + "\n"


def extract_source(source: Source, ctx: Context) -> tuple[str, str]:
    """Detect the format of ``source`` (content first, then extension) and extract it.

    Returns:
        ``(kind, text)``.

    Raises:
        Refused, ExtractionError, or whatever a parser raises for a corrupt file; the
        caller (:func:`run_one`) turns them into diagnostics.
    """
    if source.size == 0:
        ctx.kind = "empty"
        ctx.warn("empty file (0 bytes)")
        return "empty", note("[empty file]") + "\n"
    from ..deliverable_policy import blank_stream

    with source.open() as f:
        blank = blank_stream(f)
    if blank:
        ctx.kind = "empty"
        ctx.warn(f"blank file ({source.size:,} bytes of whitespace only)")
        return "empty", note(f"[blank file: {source.size:,} bytes of whitespace only]") + "\n"
    head = source.read_bytes(8192)
    ext_kind = extension_kind(source.suffix)
    magic = magic_kind(head)
    label = source.suffix or "(no extension)"
    ctx.kind = magic if magic in ("pdf", "sqlite", "image") else (ext_kind or magic or "unknown")

    if magic == "zip":
        from ._safety import check_zip

        what = ext_kind if ext_kind in ZIP_KINDS else "zip container"
        try:
            check_zip(source, ctx.limits, what=what)
            with source.open() as f, zipfile.ZipFile(f) as zf:
                names = zf.namelist()
        except zipfile.BadZipFile as exc:
            raise ExtractionError(f"corrupt {what} file (bad zip structure: {exc})") from exc
        kind = zip_kind(names)
        if kind in ("xlsb", "odf"):
            from ._legacy import convertible, extract_legacy

            if kind == "odf" and convertible(source.suffix):
                return extract_legacy(source, ctx, dispatch_kind=run_kind)
            return _unsupported(
                source,
                ctx,
                f"{label} ({'Excel binary workbook' if kind == 'xlsb' else 'OpenDocument'})",
            )
        if ext_kind in ZIP_KINDS and ext_kind != kind:
            if ext_kind == "zip":
                pass  # a .zip that is really an Office file: read it as that
            elif kind == "zip":
                ctx.error(
                    f"not a valid {ext_kind} file: a zip archive without the {ext_kind} parts; "
                    "listed as an archive"
                )
            else:
                ctx.warn(
                    f"content is {kind.upper()} but the name ends in {label}; read as "
                    f"{kind.upper()}"
                )
        elif ext_kind not in ZIP_KINDS and ext_kind is not None:
            ctx.warn(
                f"content is {describe_kind(kind)} but the name ends in {label}; read by content"
            )
        return kind, run_kind(kind, source, ctx)

    if magic == "ole":
        if ext_kind == "xls" or ext_kind is None:
            return "xls", run_kind("xls", source, ctx)
        if ext_kind == "legacy":
            from ._legacy import convertible, extract_legacy

            if convertible(source.suffix):
                return extract_legacy(source, ctx, dispatch_kind=run_kind)
        return _unsupported(source, ctx, f"{label} (legacy Office binary format)")

    if magic is not None:
        if ext_kind is not None and ext_kind != magic and not (ext_kind == "legacy"):
            ctx.warn(
                f"content is {describe_kind(magic)} but the name ends in {label}; read by content"
            )
        return magic, run_kind(magic, source, ctx)

    # no strong magic: decide by extension
    if ext_kind == "image" and source.suffix == ".bmp" and head.startswith(b"BM"):
        return "image", run_kind("image", source, ctx)
    if ext_kind == "image":
        from ._images import is_svg

        if is_svg(head):
            ctx.warn(f"content is SVG but the name ends in {label}; read as SVG")
            return "svg", run_kind("svg", source, ctx)
        ctx.kind = "image"
        what = "text" if not looks_binary(head) else "binary data"
        raise ExtractionError(
            f"unreadable: named {label} but the content is not an image ({what}); not shown"
        )
    if ext_kind in BINARY_KINDS:
        kinds = {
            "xlsx": "xlsx workbook (zip container)",
            "docx": "docx document (zip container)",
            "pptx": "pptx presentation (zip container)",
            "zip": "zip archive",
            "pdf": "PDF (%PDF- header)",
            "sqlite": "SQLite database (header)",
            "xls": "xls workbook (OLE2 container)",
            "image": "image",
        }
        ctx.kind = ext_kind
        msg = (
            f"corrupt or mislabelled file: named {label} but its content is not a {kinds[ext_kind]}"
        )
        if not looks_binary(head):
            ctx.error(msg + "; shown as text")
            from ._text import extract_text

            return ext_kind, extract_text(source, ctx)
        raise ExtractionError(msg)
    if ext_kind == "legacy":
        from ._legacy import convertible, extract_legacy

        if source.suffix == ".rtf" and convertible(source.suffix):
            return extract_legacy(source, ctx, dispatch_kind=run_kind)
        if source.suffix == ".rtf":
            from ._soffice import soffice_unavailable_reason
            from ._text import extract_text

            ctx.warn(
                "RTF shown as raw markup "
                f"({soffice_unavailable_reason() or 'LibreOffice unavailable'})"
            )
            return "text", extract_text(source, ctx)
        return _unsupported(source, ctx)
    if looks_binary(head):
        if ext_kind is not None:
            ctx.error(f"named {label} but the content is binary; not shown")
            ctx.kind = "binary"
            return "binary", note("[binary content not shown]") + "\n"
        return _unsupported(source, ctx)
    if ext_kind is not None:
        return ext_kind, run_kind(ext_kind, source, ctx)
    return "text", run_kind("text", source, ctx)


def diagnostic_lines(ext: Extraction) -> str:
    """The warning/error lines shown to the judge above a file's text (one note, see
    :mod:`._notes`)."""
    lines = [
        f"[extraction {d.level}: {d.message}]"
        for d in ext.diagnostics
        if d.level in ("error", "warning")
    ]
    return (note("\n".join(lines)) + "\n") if lines else ""


def run_one(
    path: str,
    rel: str,
    limits: ExtractLimits,
    *,
    timeout: float | None = None,
    sha256: str = "",
    size: int = 0,
    limit_resources: bool = False,
    want_workbook: bool = True,
) -> tuple[Extraction, bool, WorkbookValues | None]:
    """Extract one file, never raising for the file's sake.

    Args:
        path: file system path (opened without following symlinks).
        rel: the display path.
        limits: budgets and limits.
        timeout: seconds from now after which extractors stop (``None`` = no deadline).
        sha256, size: known digest and size (set on the result).
        limit_resources: apply rlimits to LibreOffice (worker only).
        want_workbook: build the :class:`WorkbookValues` of a workbook (False: the third item
            is always None; for callers that do not cache it).

    Returns:
        ``(extraction, cacheable, workbook_values_or_None)``.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    ctx = Context(
        rel=rel,
        limits=limits,
        deadline=deadline,
        sha256=sha256,
        limit_resources=limit_resources,
        want_workbook=want_workbook,
    )
    text = ""
    kind = "unknown"
    try:
        source = Source(path, name=rel)
        kind, text = extract_source(source, ctx)
    except Refused as exc:
        kind = "refused"
        ctx.error(str(exc))
    except DeadlineExceeded as exc:
        kind = ctx.kind
        ctx.error(f"extraction stopped: {exc}")
        ctx.cacheable = False
    except ExtractionError as exc:
        kind = ctx.kind
        ctx.error(str(exc))
    except MemoryError:
        kind = ctx.kind
        ctx.error(f"extraction ran out of memory (limit {limits.memory_mb:,} MB)")
        ctx.cacheable = False
    except RecursionError:
        kind = ctx.kind
        ctx.error("structure nested too deeply to read")
    except FileNotFoundError as exc:
        kind = "missing"
        ctx.error(f"file disappeared while being read ({exc.strerror})")
        ctx.cacheable = False
    except Exception as exc:  # noqa: BLE001 - a corrupt file of any format must become a diagnostic
        kind = ctx.kind
        detail = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
        ctx.error(
            f"could not read this {kind} file (corrupt or unsupported variant): "
            f"{type(exc).__name__}" + (f": {detail}" if detail else "")
        )
    if ctx.images_dropped:
        ctx.warn(
            f"{ctx.images_dropped} image(s) not extracted (limit {limits.max_images} per file)"
        )
    if ctx.hidden:
        kinds = sorted({why for why, _text in ctx.hidden})
        ctx.warn(
            f"hidden content ({len(ctx.hidden)} part(s): {', '.join(kinds)}); shown marked "
            "[hidden…], not visible to a reader of the file"
        )
    ext = Extraction(
        path=rel,
        kind=kind,
        diagnostics=ctx.diagnostics,
        images=ctx.images,
        sha256=sha256,
        size=size,
        hidden=ctx.hidden,
    )
    # a text already read in part states the omitted bytes; a second cut counts its characters
    what = "the text extracted from this file" if ctx.truncated else "this file"
    body, cut = head_tail(text, max(0, limits.max_chars - len(diagnostic_lines(ext))), what=what)
    ext.text, ext.notes = split_notes(diagnostic_lines(ext) + body)
    ext.truncated = cut or ctx.truncated
    workbook = ctx.workbook if kind == "xlsx" else None
    return ext, ctx.cacheable, workbook


def run_workbook(
    path: str,
    rel: str,
    limits: ExtractLimits,
    *,
    timeout: float | None = None,
    sha256: str = "",
    limit_resources: bool = False,
) -> tuple[WorkbookValues, bool]:
    """:class:`WorkbookValues` of one workbook.

    Raises:
        Refused: symlink, special file or zip bomb.
        ExtractionError: not an xlsx/xlsm workbook, or unreadable.
    """
    from ._safety import check_zip
    from ._xlsx import workbook_values_of

    deadline = None if timeout is None else time.monotonic() + timeout
    ctx = Context(
        rel=rel, limits=limits, deadline=deadline, sha256=sha256, limit_resources=limit_resources
    )
    source = Source(path, name=rel)
    head = source.read_bytes(8)
    if magic_kind(head) != "zip":
        raise ExtractionError(f"{rel}: not an xlsx/xlsm workbook (not a zip container)")
    check_zip(source, limits, what="xlsx")
    with source.open() as f, zipfile.ZipFile(f) as zf:
        kind = zip_kind(zf.namelist())
    if kind != "xlsx":
        raise ExtractionError(f"{rel}: not an xlsx/xlsm workbook (detected {kind})")
    try:
        wv = workbook_values_of(
            source, ctx, limits, rel=rel, sha256=sha256, limit_resources=limit_resources
        )
    except (ExtractionError, Refused):
        raise
    except Exception as exc:  # noqa: BLE001 - report corrupt workbooks uniformly
        raise ExtractionError(f"{rel}: unreadable workbook: {type(exc).__name__}: {exc}") from exc
    cacheable = not any(
        "recalculation failed" in d.message or d.level == "error" for d in wv.diagnostics
    )
    return wv, cacheable
