"""Shared plumbing for the per-format extractors: the verified source file, the extraction
context (diagnostics, images, deadline), text decoding and small renderers."""

from __future__ import annotations

import hashlib
import io
import os
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from ._limits import ExtractLimits
from ._records import Diagnostic, ExtractedImage, WorkbookValues


class ExtractionError(Exception):
    """A file could not be read; the message becomes an ``error`` diagnostic."""


class Refused(ExtractionError):
    """A file was refused for safety (symlink, special file, archive bomb, …)."""


class DeadlineExceeded(ExtractionError):
    """The per-file time budget ran out inside an extractor."""


def safe_display(name: str) -> str:
    """``name`` with undecodable bytes (surrogate escapes) shown as U+FFFD."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def open_nofollow(path: str | os.PathLike) -> int:
    """Open ``path`` read-only without following a final symlink and without blocking on
    FIFOs; return the fd after checking it is a regular file.

    Raises:
        Refused: for symlinks and anything that is not a regular file.
        OSError: if the file cannot be opened.
    """
    flags = (
        os.O_RDONLY
        | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_NONBLOCK", 0)
        | getattr(os, "O_CLOEXEC", 0)
    )
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno in (40, 62):  # ELOOP (Linux), ELOOP (BSD/macOS): final component is a symlink
            raise Refused("symlink: refused, not followed") from exc
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise Refused(f"not a regular file ({describe_mode(st.st_mode)}): refused")
    return fd


def describe_mode(mode: int) -> str:
    """Human name of a file type from ``st_mode``."""
    for test, name in (
        (stat.S_ISLNK, "symlink"),
        (stat.S_ISDIR, "directory"),
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISREG, "regular file"),
    ):
        if test(mode):
            return name
    return "special file"


class Source:
    """A deliverable file verified to be a regular file (never a symlink).

    Every :meth:`open` re-opens the path with ``O_NOFOLLOW`` and checks that it is still
    the same inode, so a file swapped for a symlink after the check is refused rather than
    followed.

    Attributes:
        path: the file system path.
        name: display name (relative path inside the folder).
        size: bytes.
        suffix: lower-case extension of ``name`` including the dot (``.xlsx``) or ``''``.
    """

    def __init__(self, path: str | os.PathLike, name: str | None = None):
        self.path = os.fspath(path)
        fd = open_nofollow(self.path)
        try:
            st = os.fstat(fd)
        finally:
            os.close(fd)
        self._ident = (st.st_dev, st.st_ino)
        self.size = st.st_size
        self.name = name or safe_display(os.path.basename(self.path))
        self.suffix = Path(self.name).suffix.lower()

    def open(self) -> BinaryIO:
        """A new independent binary file object positioned at 0.

        Raises:
            Refused: if the path now names something else (swapped file or symlink).
        """
        fd = open_nofollow(self.path)
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != self._ident:
            os.close(fd)
            raise Refused("file changed while being read: refused")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")

    def read_bytes(self, limit: int | None = None) -> bytes:
        """The first ``limit`` bytes (all when ``None``)."""
        with self.open() as f:
            return f.read() if limit is None else f.read(limit)

    def read_tail(self, n: int) -> bytes:
        """The last ``n`` bytes."""
        with self.open() as f:
            f.seek(max(0, self.size - n))
            return f.read()

    def copy_to(self, dest: Path) -> Path:
        """Copy the verified bytes to ``dest`` (a private temp path); return ``dest``."""
        with self.open() as f, open(dest, "wb") as out:
            while chunk := f.read(1 << 20):
                out.write(chunk)
        return dest


def sha256_of(source: Source) -> str:
    """Hex SHA-256 of the file (streamed)."""
    h = hashlib.sha256()
    with source.open() as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


IMAGE_MEDIA_TYPES = {
    "PNG": "image/png",
    "JPEG": "image/jpeg",
    "GIF": "image/gif",
    "WEBP": "image/webp",
}
"""Pillow format → media type of the raster formats vision judges accept as they are."""


@dataclass
class Context:
    """State of one file's extraction, shared with the format extractor.

    Extractors return the text and report through the context: :meth:`info`,
    :meth:`warn`, :meth:`error`, :meth:`add_image`; call :meth:`check_deadline` inside
    long loops.
    """

    rel: str
    limits: ExtractLimits
    deadline: float | None = None
    depth: int = 0
    diagnostics: list[Diagnostic] = field(default_factory=list)
    images: list[ExtractedImage] = field(default_factory=list)
    truncated: bool = False
    cacheable: bool = True
    workbook: WorkbookValues | None = None
    want_workbook: bool = True
    """Whether a workbook extractor sets :attr:`workbook` (False when nobody stores it, e.g.
    with the cache off: building it costs a pass over every cell)."""
    images_dropped: int = 0
    sha256: str = ""
    limit_resources: bool = False
    kind: str = "unknown"
    line_count: int | None = None
    """Lines of a text file read only in part (head and tail), when counted."""
    hidden: list[tuple[str, str]] = field(default_factory=list)
    """Hidden content found so far: ``(why, excerpt)`` (see :mod:`._hidden`)."""

    def child(self, rel: str) -> Context:
        """A context for a member of an archive: same limits and deadline, one level deeper."""
        return Context(
            rel=rel,
            limits=self.limits,
            deadline=self.deadline,
            depth=self.depth + 1,
            limit_resources=self.limit_resources,
        )

    def info(self, message: str) -> None:
        """Record an ``info`` diagnostic."""
        self.diagnostics.append(Diagnostic(level="info", message=message))

    def warn(self, message: str) -> None:
        """Record a ``warning`` diagnostic."""
        self.diagnostics.append(Diagnostic(level="warning", message=message))

    def error(self, message: str) -> None:
        """Record an ``error`` diagnostic."""
        self.diagnostics.append(Diagnostic(level="error", message=message))

    def remaining(self) -> float | None:
        """Seconds left before the deadline (``None`` without a deadline)."""
        return None if self.deadline is None else self.deadline - time.monotonic()

    def check_deadline(self) -> None:
        """Raise :class:`DeadlineExceeded` once the per-file time budget is spent."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise DeadlineExceeded(f"time budget exceeded ({self.limits.timeout:g} s)")

    def add_image(
        self, label: str | None, data: bytes, media_type: str | None = None, caption: str = ""
    ) -> str | None:
        """Offer an image to the vision judge.

        The image is decoded with Pillow (refusing decompression bombs); BMP/TIFF/… are
        re-encoded as PNG and images over the byte or side limits are downscaled. At most
        ``limits.max_images`` images are kept per file.

        Args:
            label: name unique within the file (``image1.png``); the image is named
                ``<rel>#<label>``, or just ``<rel>`` when ``label`` is None (the file is
                itself the image).
            data: encoded image bytes.
            media_type: the declared type, if known (``image/svg+xml`` is rasterised by
                the caller, not here).
            caption: alt text or title the deliverable gives the image (at most 300
                characters are kept).

        Returns:
            The image name, or ``None`` if the image was dropped (cap reached or
            undecodable, with a diagnostic).
        """
        name = self.rel if label is None else f"{self.rel}#{label}"
        label = label or Path(self.rel).name
        if len(self.images) >= self.limits.max_images:
            self.images_dropped += 1
            return None
        try:
            data, media_type = normalise_image(data, self.limits)
        except ExtractionError as exc:
            self.warn(f"image {label}: {exc}")
            return None
        digest = hashlib.sha256(data).hexdigest()
        if any(img.sha256 == digest for img in self.images):
            return name
        self.images.append(
            ExtractedImage(
                source=self.rel,
                name=name,
                media_type=media_type,
                data=data,
                sha256=digest,
                caption=" ".join(caption.split())[:300],
            )
        )
        return name


def normalise_image(data: bytes, limits: ExtractLimits) -> tuple[bytes, str]:
    """Decode ``data`` and return bytes + media type a vision judge accepts.

    Raises:
        ExtractionError: undecodable image or decompression bomb.
    """
    import warnings

    from PIL import Image

    Image.MAX_IMAGE_PIXELS = limits.max_image_pixels
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            im: Image.Image = Image.open(io.BytesIO(data))
            fmt = im.format or ""
            w, h = im.size
            if w * h > limits.max_image_pixels:
                raise ExtractionError(
                    f"{w}×{h} pixels exceeds the {limits.max_image_pixels:,}-pixel limit (refused)"
                )
            media = IMAGE_MEDIA_TYPES.get(fmt)
            if media and len(data) <= limits.max_image_bytes and max(w, h) <= limits.max_image_side:
                im.verify()
                return data, media
            im.load()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ExtractionError(f"decompression bomb refused ({exc})") from exc
    except ExtractionError:
        raise
    except Exception as exc:  # noqa: BLE001 - Pillow raises many types for bad data
        raise ExtractionError(f"not a readable image ({type(exc).__name__}: {exc})") from exc
    if getattr(im, "n_frames", 1) > 1:
        im.seek(0)
    if max(w, h) > limits.max_image_side:
        im.thumbnail((limits.max_image_side, limits.max_image_side))
    if im.mode not in ("RGB", "RGBA", "L", "LA"):
        im = im.convert("RGBA" if "A" in im.getbands() or im.mode == "P" else "RGB")
    out = io.BytesIO()
    im.save(out, format="PNG", optimize=True)
    png = out.getvalue()
    if len(png) > limits.max_image_bytes:
        out = io.BytesIO()
        im.convert("RGB").save(out, format="JPEG", quality=85)
        return out.getvalue(), "image/jpeg"
    return png, "image/png"


# ----------------------------------------------------------------------------- text helpers


def decode_text(data: bytes, ctx: Context | None = None, *, what: str = "text") -> tuple[str, str]:
    """Decode bytes to ``str``: BOMs first, then strict UTF-8, then charset-normalizer
    (on at most the first 1 MiB), else cp1252 with replacement.

    Returns:
        ``(text, encoding)``. A non-UTF-8 guess adds a warning to ``ctx``.
    """
    boms = (
        (b"\xef\xbb\xbf", "utf-8-sig"),
        (b"\xff\xfe\x00\x00", "utf-32-le"),
        (b"\x00\x00\xfe\xff", "utf-32-be"),
        (b"\xff\xfe", "utf-16-le"),
        (b"\xfe\xff", "utf-16-be"),
    )
    enc: str | None
    for bom, enc in boms:
        if data.startswith(bom):
            return data[len(bom) :].decode(enc.replace("-sig", ""), errors="replace"), enc
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as exc:
        # a multibyte sequence cut at the end of a chunk is still UTF-8
        if exc.start >= len(data) - 3 and exc.reason == "unexpected end of data":
            return data[: exc.start].decode("utf-8"), "utf-8"
    enc = "cp1252" if _mostly_western(data[: 1 << 20]) else None
    if enc is None:
        try:
            from charset_normalizer import from_bytes

            best = from_bytes(data[: 1 << 20]).best()
            enc = best.encoding if best is not None else None
        except Exception:  # noqa: BLE001 - detection is best effort
            enc = None
    enc = enc or "cp1252"
    try:
        text = data.decode(enc, errors="replace")
    except LookupError:
        enc = "cp1252"
        text = data.decode(enc, errors="replace")
    if ctx is not None:
        ctx.warn(f"{what} is not UTF-8; decoded as {enc} (detected)")
    return text, enc


def _mostly_western(data: bytes) -> bool:
    """True for text that is mostly ASCII with occasional bytes that cp1252 decodes to
    Latin letters or punctuation (accented Western European text). Statistical detectors
    misjudge such short samples (e.g. as Johab); Cyrillic or CJK legacy encodings are
    mostly high bytes and fail the ratio test."""
    import unicodedata

    high = [b for b in data if b >= 0x80]
    letters = sum(1 for b in data if (0x41 <= b <= 0x5A) or (0x61 <= b <= 0x7A)) + len(high)
    if not high or letters == 0 or len(high) > 0.3 * letters:
        return False
    if any(b in (0x81, 0x8D, 0x8F, 0x90, 0x9D) for b in high):  # undefined in cp1252
        return False
    decoded = bytes(high).decode("cp1252")
    latin = sum(1 for ch in decoded if unicodedata.category(ch)[0] in "LPSZN")
    return latin == len(decoded)


def looks_binary(head: bytes) -> bool:
    """True when ``head`` has NUL bytes or is mostly control characters (not UTF-16 text)."""
    if not head:
        return False
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False
    if b"\x00" in head:
        return True
    control = sum(1 for b in head if b < 9 or 13 < b < 32)
    return control > len(head) * 0.1


def md_cell(value: object) -> str:
    """Text for one markdown table cell (pipes escaped, newlines as ``<br>``)."""
    text = "" if value is None else str(value)
    return (
        text.replace("\\", "\\\\")
        .replace("|", "\\|")
        .replace("\r\n", "\n")
        .replace("\n", "<br>")
        .strip()
    )


def markdown_table(rows: Iterable[Iterable[object]]) -> str:
    """Render rows (first row = header) as a GitHub-flavoured markdown table.

    Rows are padded to the widest row; an empty input gives ``''``.
    """
    cells = [[md_cell(c) for c in r] for r in rows]
    if not cells:
        return ""
    width = max(len(r) for r in cells) or 1
    cells = [r + [""] * (width - len(r)) for r in cells]
    lines = ["| " + " | ".join(cells[0]) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(r) + " |" for r in cells[1:]]
    return "\n".join(lines)


def strip_ansi(text: str) -> str:
    """Remove ANSI escape sequences (notebook tracebacks are coloured)."""
    import re

    return re.sub(r"\x1b\[[0-9;?]*[ -/]*[@-~]", "", text)
