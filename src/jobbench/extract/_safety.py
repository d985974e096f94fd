"""Zip-bomb guard for every zip container (zip, xlsx, xlsm, docx, pptx).

The guard reads only the end-of-central-directory record and the central directory (no
member is inflated) and refuses an archive whose *declared* uncompressed size, entry count
or compression ratio exceeds the limits. Python's :mod:`zipfile` never inflates more than a
member's declared size, so the declared sizes bound what openpyxl, python-docx and
python-pptx will inflate. LibreOffice has its own unzip: it runs under a timeout, a memory
limit and a file-size limit.

Facts used: ZIP application note (PKWARE APPNOTE.TXT), sections 4.3.16 (end of central
directory record, signature ``PK\\x05\\x06``, entry count at offset 10, central directory size
at offset 12) and 4.3.14/4.3.15 (zip64 end of central directory record and locator).
"""

from __future__ import annotations

import struct
import zipfile
from dataclasses import dataclass

from ._base import Refused, Source
from ._limits import ExtractLimits

EOCD_SIG = b"PK\x05\x06"
ZIP64_LOCATOR_SIG = b"PK\x06\x07"
ZIP64_EOCD_SIG = b"PK\x06\x06"
MAX_CENTRAL_DIRECTORY = 64 << 20


@dataclass(frozen=True)
class ZipSummary:
    """What the guard learnt: entry count and declared sizes (bytes)."""

    entries: int
    uncompressed: int
    compressed: int


def human_bytes(n: float) -> str:
    """``1536`` → ``1.5 KiB``."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def _declared_entries(source: Source) -> int | None:
    """Entry count from the end-of-central-directory record, without parsing the directory."""
    tail = source.read_tail(65_535 + 22)
    pos = tail.rfind(EOCD_SIG)
    if pos < 0 or pos + 22 > len(tail):
        return None
    entries, cd_size = struct.unpack("<HI", tail[pos + 10 : pos + 16])
    if cd_size != 0xFFFFFFFF and cd_size > MAX_CENTRAL_DIRECTORY:
        raise Refused(
            f"zip central directory of {human_bytes(cd_size)} refused (limit {human_bytes(MAX_CENTRAL_DIRECTORY)})"
        )
    if entries != 0xFFFF:
        return entries
    loc = tail.rfind(ZIP64_LOCATOR_SIG, 0, pos)
    if loc < 0:
        return None
    (eocd64_offset,) = struct.unpack("<Q", tail[loc + 8 : loc + 16])
    with source.open() as f:
        f.seek(eocd64_offset)
        rec = f.read(56)
    if not rec.startswith(ZIP64_EOCD_SIG) or len(rec) < 56:
        return None
    (total_entries,) = struct.unpack("<Q", rec[32:40])
    return total_entries


def check_zip(source: Source, limits: ExtractLimits, *, what: str = "archive") -> ZipSummary:
    """Refuse ``source`` if it is a zip bomb; return its declared sizes otherwise.

    Args:
        source: the verified file.
        limits: ``zip_max_members``, ``zip_max_total``, ``zip_max_ratio`` are applied.
        what: the format name used in messages (``xlsx``, ``docx``, ``archive``).

    Raises:
        Refused: too many entries, too large declared size, or too high a ratio.
        zipfile.BadZipFile: not a readable zip (the caller reports it as corrupt).
    """
    declared = _declared_entries(source)
    if declared is not None and declared > limits.zip_max_members:
        raise Refused(
            f"{what} refused: {declared:,} zip entries (limit {limits.zip_max_members:,})"
        )
    with source.open() as f, zipfile.ZipFile(f) as zf:
        infos = zf.infolist()
    if len(infos) > limits.zip_max_members:
        raise Refused(
            f"{what} refused: {len(infos):,} zip entries (limit {limits.zip_max_members:,})"
        )
    total = sum(i.file_size for i in infos)
    compressed = sum(i.compress_size for i in infos)
    if total > limits.zip_max_total:
        raise Refused(
            f"{what} refused as a possible zip bomb: declares {human_bytes(total)} uncompressed "
            f"(limit {human_bytes(limits.zip_max_total)})"
        )
    for info in infos:
        if info.file_size > (1 << 20) and info.file_size > limits.zip_max_ratio * max(
            info.compress_size, 1
        ):
            ratio = info.file_size / max(info.compress_size, 1)
            raise Refused(
                f"{what} refused as a possible zip bomb: member {info.filename!r} inflates "
                f"{ratio:,.0f}:1 to {human_bytes(info.file_size)} (ratio limit {limits.zip_max_ratio:g}:1)"
            )
    if total > (1 << 20) and total > limits.zip_max_ratio * max(source.size, 1):
        raise Refused(
            f"{what} refused as a possible zip bomb: {human_bytes(source.size)} inflates to "
            f"{human_bytes(total)} (ratio limit {limits.zip_max_ratio:g}:1)"
        )
    return ZipSummary(entries=len(infos), uncompressed=total, compressed=compressed)
