"""Public entry points: :func:`extract`, :func:`extract_dir`, :func:`workbook_values`.

Every file is checked in this process (regular file, never a symlink, hashed while open),
looked up in the content-addressed cache, and otherwise parsed by an extraction worker
subprocess (time and memory bounded) or, with ``isolation="none"``, in this process.
"""

from __future__ import annotations

import os
import re
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeAlias

from ._base import Refused, Source, describe_mode, safe_display, sha256_of
from ._budget import truncation_marker
from ._cache import ExtractCache, resolve_cache
from ._limits import ExtractLimits, Isolation, XlsxEngine, default_isolation, default_limits
from ._readable import plain
from ._records import Diagnostic, ExtractedImage, Extraction, FolderExtraction, WorkbookValues

WORKER_GRACE = 10.0
"""Seconds the parent waits beyond ``limits.timeout`` before killing a worker (the worker
stops itself at the deadline and reports; the kill is for parsers stuck in C code)."""

CacheArg: TypeAlias = "bool | str | os.PathLike | ExtractCache | None"


def _limits(limits: ExtractLimits | None, engine: XlsxEngine | None, **overrides) -> ExtractLimits:
    if limits is None:
        limits = default_limits()
    update = {k: v for k, v in overrides.items() if v is not None}
    if engine is not None:
        update["xlsx_engine"] = engine
    if update:
        limits = ExtractLimits.model_validate({**limits.model_dump(), **update})
    return limits


def _all_note(text: str) -> list[tuple[int, int]]:
    """Note spans of a text written entirely by the extractor."""
    return [(0, len(text))] if text else []


def _refused(rel: str, message: str, size: int = 0) -> Extraction:
    text = f"[extraction error: {message}]\n[refused: not read]\n"
    return Extraction(
        path=rel,
        kind="refused",
        text=text,
        notes=_all_note(text),
        diagnostics=[Diagnostic(level="error", message=message)],
        size=size,
    )


def _infra_error(rel: str, message: str, sha256: str, size: int) -> Extraction:
    text = f"[extraction error: {message}]\n"
    return Extraction(
        path=rel,
        kind="error",
        text=text,
        notes=_all_note(text),
        diagnostics=[Diagnostic(level="error", message=message)],
        sha256=sha256,
        size=size,
    )


def _extract_verified(
    path: Path, rel: str, limits: ExtractLimits, cache: ExtractCache | None, isolation: Isolation
) -> Extraction:
    """Extract a path that passed the lstat check (re-checked while opening)."""
    from ._dispatch import run_one

    try:
        source = Source(path, name=rel)
        digest = sha256_of(source)
    except Refused as exc:
        return _refused(rel, str(exc))
    except OSError as exc:
        return _infra_error(rel, f"cannot open: {exc.strerror or exc}", "", 0)
    key = cache.key("extract", digest, rel, limits) if cache is not None else ""
    if cache is not None:
        hit = cache.get_extraction(key)
        if hit is not None:
            return hit.model_copy(update={"cached": True})
    workbook = None
    if isolation == "none":
        ext, cacheable, workbook = run_one(
            str(path),
            rel,
            limits,
            timeout=limits.timeout,
            sha256=digest,
            size=source.size,
            want_workbook=cache is not None,
        )
    else:
        from ._pool import POOL, WorkerCrashed, WorkerTimeout

        request = {
            "op": "extract",
            "path": os.fsdecode(path),
            "rel": rel,
            "limits": limits.model_dump(mode="json"),
            "timeout": limits.timeout,
            "sha256": digest,
            "size": source.size,
            "workbook": cache is not None,  # values are only stored, never returned
        }
        try:
            reply = POOL.call(
                request, memory_mb=limits.memory_mb, timeout=limits.timeout + WORKER_GRACE
            )
        except WorkerTimeout:
            return _infra_error(
                rel,
                f"extraction timed out after {limits.timeout:g} s (worker killed)",
                digest,
                source.size,
            )
        except WorkerCrashed as exc:
            return _infra_error(
                rel,
                f"extraction worker crashed on this file ({exc}); possibly out of memory "
                f"(limit {limits.memory_mb:,} MB)",
                digest,
                source.size,
            )
        if not reply.get("ok"):
            return _infra_error(
                rel, f"extraction failed: {reply.get('error')}", digest, source.size
            )
        ext = Extraction.model_validate_json(reply["extraction"])
        cacheable = bool(reply.get("cacheable"))
        if reply.get("workbook"):
            workbook = WorkbookValues.model_validate_json(reply["workbook"])
    if cache is not None and cacheable:
        cache.put_extraction(key, ext)
        if workbook is not None:
            cache.put_workbook(cache.key("workbook", digest, "", limits), workbook)
    return ext


def extract(
    path: Path | str,
    *,
    rel: str | None = None,
    max_chars: int = 200_000,
    limits: ExtractLimits | None = None,
    engine: XlsxEngine | None = None,
    cache: CacheArg = None,
    isolation: Isolation | None = None,
) -> Extraction:
    """Extract one deliverable file: text (and images) the way a careful reviewer reads it.

    Args:
        path: the file. Symlinks and special files are refused (an ``error`` diagnostic,
            ``kind="refused"``), never followed.
        rel: display path (default: the file name).
        max_chars: per-file character cap (head and tail kept around a marker).
        limits: every other budget and limit (:class:`ExtractLimits`; defaults apply
            ``$JOBBENCH_XLSX_ENGINE``). ``max_chars`` and ``engine`` override it.
        engine: workbook recalculation engine: ``auto`` (LibreOffice if installed, else
            ``formulas``), ``libreoffice``, ``formulas`` or ``cached``.
        cache: ``None`` (default cache unless ``$JOBBENCH_NO_CACHE``), ``True``, ``False``
            or a cache directory.
        isolation: ``subprocess`` (default; ``$JOBBENCH_EXTRACT_ISOLATION``) parses in a
            worker process bounded by ``limits.timeout`` and ``limits.memory_mb``;
            ``none`` parses in this process.

    Returns:
        The :class:`Extraction`. Problems with the file (corrupt, unsupported, refused,
        too slow) are diagnostics, never exceptions.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        pydantic.ValidationError: invalid limits.
    """
    path = Path(path)
    lim = _limits(
        limits, engine, max_chars=max_chars if max_chars != 200_000 or limits is None else None
    )
    rel = rel or safe_display(path.name)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    if stat.S_ISLNK(st.st_mode):
        return _refused(rel, "symlink: refused, not followed")
    if not stat.S_ISREG(st.st_mode):
        return _refused(rel, f"not a regular file ({describe_mode(st.st_mode)}): refused")
    return _extract_verified(path, rel, lim, resolve_cache(cache), isolation or default_isolation())


Entry = tuple[str, Path, os.stat_result | None, str | None]
"""One entry of :func:`walk_folder`: ``(rel, path, lstat or None, problem or None)``."""


def walk_folder(folder: Path) -> list[Entry]:
    """Every deliverable entry under ``folder`` as :func:`extract_dir` sees it, sorted by
    ``rel``: ``(rel POSIX path, path, lstat or None, problem or None)``. Nothing is followed:
    directories are descended; symlinks, special files and unreadable entries come back with
    a problem (the reason they are refused); regular files with ``None``. Entries that are
    not deliverables (dotfiles, OS and editor junk: :func:`jobbench.deliverable_policy.excluded`)
    are left out; :func:`scan_folder` also returns them."""
    return scan_folder(folder)[0]


def scan_folder(folder: Path) -> tuple[list[Entry], list[str]]:
    """``(entries, ignored)``: the entries of :func:`walk_folder`, and ``"rel: reason"`` for
    every entry left out as not a deliverable (a dot-directory or junk directory is listed
    once, as ``"dir/: reason"``, and not descended), sorted."""
    from ..deliverable_policy import excluded, excluded_dir

    out: list[tuple[str, Path, os.stat_result | None, str | None]] = []
    ignored: list[str] = []
    stack = [(folder, "")]
    while stack:
        directory, prefix = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            out.append(
                (
                    prefix.rstrip("/") or ".",
                    directory,
                    None,
                    f"directory unreadable: {exc.strerror}",
                )
            )
            continue
        for entry in entries:
            rel = prefix + safe_display(entry.name)
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                out.append((rel, Path(entry.path), None, f"cannot stat: {exc.strerror}"))
                continue
            if stat.S_ISDIR(st.st_mode):
                if excluded_dir(entry.name):
                    ignored.append(f"{rel}/: {excluded(rel + '/x') or 'not a deliverable'}")
                else:
                    stack.append((Path(entry.path), rel + "/"))
                continue
            why = excluded(rel)
            if why is not None:
                ignored.append(f"{rel}: {why}")
            elif stat.S_ISLNK(st.st_mode):
                out.append((rel, Path(entry.path), st, "symlink: refused, not followed"))
            elif stat.S_ISREG(st.st_mode):
                out.append((rel, Path(entry.path), st, None))
            else:
                out.append(
                    (
                        rel,
                        Path(entry.path),
                        st,
                        f"not a regular file ({describe_mode(st.st_mode)}): refused",
                    )
                )
    out.sort(key=lambda item: item[0])
    return out, sorted(ignored)


_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # every line break str.splitlines knows
_SP = rf"[^\S{_BREAKS}]"  # whitespace within a line
_HEADER_LIKE_ASCII = re.compile(
    rf"(?:^|(?<=[{_BREAKS}]))(?={_SP}*={{2,}}{_SP}*FILE{_SP}*:)", re.IGNORECASE
)
_LINE = re.compile(rf"(?:^|(?<=[{_BREAKS}]))[^{_BREAKS}]+")
_HEADER_START = re.compile(r"\s*={2,}\s*FILE\s*:", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _escape_line(m: re.Match[str]) -> str:
    line = m.group()
    return "\\" + line if _HEADER_START.match(plain(line)) else line


def escape_file_headers(text: str) -> str:
    """``text`` with every line that could be read as a file header escaped by a leading
    backslash: ``=== FILE: x.json ===`` becomes ``\\=== FILE: x.json ===``.

    A line counts as header-like when its :func:`~jobbench.extract._readable.plain` form
    (NFKC, invisible format characters dropped, Cyrillic/Greek look-alike letters, Unicode
    dashes and equals and colon look-alikes made ASCII) starts, after optional whitespace,
    with two or more ``=``, then ``FILE`` in any case, then ``:``. So fullwidth equals
    signs, a zero-width space between two ``=``, a Cyrillic capital I in ``FILE`` or
    box-drawing double lines for the ``=`` count. ASCII text takes a single regex. Every line
    break :meth:`str.splitlines` knows ends a line. Applied to each file's content in
    :attr:`FolderExtraction.text`, so a deliverable cannot forge the section of another
    file. Other lines, and the escaped lines' own characters, are unchanged.
    """
    if text.isascii():
        return _HEADER_LIKE_ASCII.sub("\\\\", text)
    return _LINE.sub(_escape_line, text)


def file_header(path: str) -> str:
    """The header line of a file section, ``=== FILE: <path> ===``, with control characters
    and line separators in ``path`` shown as ``\\xNN`` / ``\\uNNNN`` so that a file name
    cannot span lines."""

    def code(m: re.Match[str]) -> str:
        n = ord(m.group())
        return f"\\x{n:02x}" if n < 256 else f"\\u{n:04x}"

    shown = _CONTROL.sub(code, path)
    return f"=== FILE: {shown} ==="


def folder_text(
    files: list[Extraction], max_total_chars: int = 1_000_000, *, boundary: str | None = None
) -> tuple[str, bool]:
    """The concatenated text of ``files`` as the judge reads it, and whether it was cut.

    Each file is a section: its :func:`file_header` line, then its text with header-like
    lines escaped (:func:`escape_file_headers`). With ``boundary`` (a random token the
    caller chose so that it occurs in no file), each section is preceded by a line
    ``--- <boundary> file <i> of <n> ---``, which no deliverable can forge. Sections are
    joined by a newline. Text longer than ``max_total_chars`` keeps its head (3/4) and tail
    (1/4) around a marker naming the files cut or omitted.

    Returns:
        ``(text, truncated)``.
    """
    n = len(files)
    blocks = []
    for i, e in enumerate(files, 1):
        sep = f"--- {boundary} file {i} of {n} ---\n" if boundary else ""
        blocks.append(f"{sep}{file_header(e.path)}\n{escape_file_headers(e.text)}")
    text = "\n".join(blocks)
    budget = max_total_chars
    if len(text) <= budget:
        return text, False
    total = len(text)
    marker_room = len(truncation_marker(total, total, "the deliverable folder")) + 300
    room = max(0, budget - marker_room)
    head_n = int(room * 0.75)
    tail_n = room - head_n
    head_end, tail_start = head_n, total - tail_n
    cut = text.rfind("\n", 0, head_end)
    if cut > head_end * 0.9:
        head_end = cut + 1
    nl = text.find("\n", tail_start)
    if 0 <= nl < tail_start + tail_n * 0.1:
        tail_start = nl + 1
    # which files lose text
    affected = []
    pos = 0
    for e, block in zip(files, blocks):
        start, end = pos, pos + len(block)
        if start < tail_start and end > head_end:
            affected.append(e.path)
        pos = end + 1
    names = ", ".join(affected[:10]) + (
        f" and {len(affected) - 10} more" if len(affected) > 10 else ""
    )
    marker = (
        f"\n[... truncated: {tail_start - head_end:,} of {total:,} characters of the deliverable "
        "folder "
        f"omitted here (folder budget {budget:,}); files cut or omitted: {names} ...]\n"
    )
    return text[:head_end] + marker + text[tail_start:], True


def extract_dir(
    folder: Path | str,
    *,
    max_chars_per_file: int = 200_000,
    max_total_chars: int = 1_000_000,
    max_images: int = 32,
    limits: ExtractLimits | None = None,
    engine: XlsxEngine | None = None,
    cache: CacheArg = None,
    isolation: Isolation | None = None,
    workers: int = 1,
) -> FolderExtraction:
    """Extract every file under ``folder`` in sorted path order.

    Args:
        folder: the deliverable folder. Entries are never followed through symlinks:
            symlinks (to files or directories) and special files appear as ``refused``
            entries with an error diagnostic, and their targets are never read.
        max_chars_per_file: per-file cap (see :func:`extract`).
        max_total_chars: cap on :attr:`FolderExtraction.text`; the head (3/4) and tail
            (1/4) are kept around a marker naming the files cut.
        max_images: images extracted for the whole folder, in file order; later images
            are dropped with a warning on their file.
        limits, engine, cache, isolation: as for :func:`extract` (a keyword cap above
            overrides ``limits`` when it is given a non-default value).
        workers: files extracted concurrently (each by its own worker process).

    Returns:
        A :class:`FolderExtraction` whose ``text`` has a ``=== FILE: rel/path ===`` header
        per file (see :func:`folder_text`: header-like lines inside a file are escaped with
        a leading backslash). At most ``limits.max_files`` files are extracted; the rest are listed
        as
        skipped.

    Raises:
        FileNotFoundError / NotADirectoryError: ``folder`` is missing or not a directory.
    """
    folder = Path(folder)
    if not folder.exists():
        raise FileNotFoundError(f"{folder}: no such directory")
    if not folder.is_dir():
        raise NotADirectoryError(f"{folder}: not a directory")
    lim = _limits(
        limits,
        engine,
        max_chars=max_chars_per_file if limits is None or max_chars_per_file != 200_000 else None,
        max_total_chars=max_total_chars if limits is None or max_total_chars != 1_000_000 else None,
        max_images=max_images if limits is None or max_images != 32 else None,
    )
    store = resolve_cache(cache)
    iso = isolation or default_isolation()
    entries, ignored = scan_folder(folder)

    def one(item) -> Extraction:
        rel, path, st, problem = item
        if problem is not None:
            return _refused(
                rel, problem, size=st.st_size if st is not None and stat.S_ISREG(st.st_mode) else 0
            )
        return _extract_verified(path, rel, lim, store, iso)

    todo = entries[: lim.max_files]
    if workers > 1 and len(todo) > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            files = list(pool.map(one, todo))
    else:
        files = [one(item) for item in todo]
    for rel, _path, _st, _problem in entries[lim.max_files :]:
        msg = f"not extracted: folder file limit of {lim.max_files:,} reached"
        files.append(
            Extraction(
                path=rel,
                kind="skipped",
                text=f"[{msg}]\n",
                notes=_all_note(f"[{msg}]\n"),
                diagnostics=[Diagnostic(level="warning", message=msg)],
            )
        )
    # folder image budget, in file order
    kept = 0
    budgeted = []
    for f in files:
        if not f.images:
            budgeted.append(f)
            continue
        room = max(0, lim.max_images - kept)
        keep: list[ExtractedImage] = f.images[:room]
        kept += len(keep)
        if len(keep) < len(f.images):
            dropped = len(f.images) - len(keep)
            f = f.model_copy(
                update={
                    "images": keep,
                    "diagnostics": f.diagnostics
                    + [
                        Diagnostic(
                            level="warning",
                            message=f"{dropped} image(s) not extracted "
                            f"(folder image budget of {lim.max_images})",
                        )
                    ],
                }
            )
        budgeted.append(f)
    text, truncated = folder_text(budgeted, lim.max_total_chars)
    return FolderExtraction(files=budgeted, text=text, truncated=truncated, ignored=ignored)


def workbook_values(
    path: Path | str,
    *,
    engine: XlsxEngine | None = None,
    limits: ExtractLimits | None = None,
    cache: CacheArg = None,
    isolation: Isolation | None = None,
) -> WorkbookValues:
    """Every cell value of an xlsx/xlsm workbook after recalculation.

    Recalculation uses LibreOffice headless (forced recalculation on load, private
    profile, timeout) when installed, else the ``formulas`` package (``engine`` or
    ``$JOBBENCH_XLSX_ENGINE`` choose); the engine used is :attr:`WorkbookValues.engine`
    and an ``info`` diagnostic. Volatile functions, external links and macros make formula
    cells show their cached values, with a warning. Results are cached by content.

    Args:
        path: the workbook (symlinks refused).
        engine, limits, cache, isolation: as for :func:`extract`.

    Returns:
        :class:`WorkbookValues` (``path`` is the file name).

    Raises:
        FileNotFoundError: no such file.
        ValueError: the file is refused (symlink, special file, zip bomb), is not an
            xlsx/xlsm workbook, cannot be read, or extraction timed out; the message names
            the file.
    """
    from ._base import ExtractionError
    from ._dispatch import run_workbook

    path = Path(path)
    lim = _limits(limits, engine)
    rel = safe_display(path.name)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    if stat.S_ISLNK(st.st_mode):
        raise ValueError(f"{path}: symlink refused, not followed")
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{path}: not a regular file ({describe_mode(st.st_mode)})")
    try:
        source = Source(path, name=rel)
        digest = sha256_of(source)
    except Refused as exc:
        raise ValueError(f"{path}: {exc}") from exc
    store = resolve_cache(cache)
    key = store.key("workbook", digest, "", lim) if store is not None else ""
    if store is not None:
        hit = store.get_workbook(key)
        if hit is not None:
            return hit.model_copy(update={"path": rel})
    iso = isolation or default_isolation()
    if iso == "none":
        try:
            wv, cacheable = run_workbook(str(path), rel, lim, timeout=lim.timeout, sha256=digest)
        except (ExtractionError, Refused) as exc:
            raise ValueError(f"{path}: {exc}") from exc
    else:
        from ._pool import POOL, WorkerCrashed, WorkerTimeout

        request = {
            "op": "workbook",
            "path": os.fsdecode(path),
            "rel": rel,
            "limits": lim.model_dump(mode="json"),
            "timeout": lim.timeout,
            "sha256": digest,
        }
        try:
            reply = POOL.call(request, memory_mb=lim.memory_mb, timeout=lim.timeout + WORKER_GRACE)
        except WorkerTimeout:
            raise ValueError(
                f"{path}: workbook extraction timed out after {lim.timeout:g} s"
            ) from None
        except WorkerCrashed as exc:
            raise ValueError(f"{path}: workbook extraction crashed ({exc})") from None
        if not reply.get("ok"):
            raise ValueError(f"{path}: {reply.get('error')}")
        wv = WorkbookValues.model_validate_json(reply["workbook"])
        cacheable = bool(reply.get("cacheable"))
    if store is not None and cacheable:
        store.put_workbook(key, wv)
    return wv
