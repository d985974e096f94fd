"""Content-addressed cache of extractions and workbook values.

A key is the SHA-256 of: the file's SHA-256, :data:`EXTRACTOR_VERSION`, the versions of
the parsing libraries, the display path and extension, every output-relevant limit and the
recalculation engine that would run. Entries are JSON files written atomically
(``<root>/<key[:2]>/<key>.json``); an unreadable entry is a miss. Results that depend on
an infrastructure accident (timeouts, a crashed worker, a failed LibreOffice run) are never
stored.

Location: ``$JOBBENCH_CACHE_DIR/extract`` if set, else ``$XDG_CACHE_HOME/jobbench/extract``,
else ``~/.cache/jobbench/extract``. ``JOBBENCH_NO_CACHE=1`` disables the default cache.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path

from .._io import atomic_write_text
from ._limits import ENV_CACHE_DIR, ENV_NO_CACHE, ExtractLimits
from ._records import Extraction, WorkbookValues

EXTRACTOR_VERSION = "6"
"""Bump when extraction output changes for the same input and library versions (2: note spans,
``Extraction.notes``; 3: zip member names are notes; 4: notes start with a secret token; 5:
volatile cells never show a value recalculated now, hidden content is marked, blank files
are ``empty``, non-images under image names are unreadable, SVG is rendered by resvg, xls is
recalculated by LibreOffice, truncation markers state the real omitted size, unsafe zip
member names are flagged, images carry captions; 6: workbook cells a reader cannot see (white,
tiny or fill-coloured text, number formats and conditional formats that hide the value,
zero-width columns, zero-height rows, cells under a merged range, invisible rich-text runs)
are marked hidden)."""

_LIBRARIES = (
    "openpyxl",
    "formulas",
    "pdfplumber",
    "pdfminer.six",
    "python-docx",
    "python-pptx",
    "nbformat",
    "xlrd",
    "charset-normalizer",
    "pillow",
    "lxml",
    "resvg-py",
)


@lru_cache(maxsize=1)
def library_versions() -> str:
    """``name=version`` of every parsing library, ``;``-joined (missing ones as ``-``)."""
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for name in _LIBRARIES:
        try:
            out.append(f"{name}={version(name)}")
        except PackageNotFoundError:
            out.append(f"{name}=-")
    return ";".join(out)


def default_cache_root() -> Path:
    """Where the cache lives by default (see module docstring)."""
    env = os.environ.get(ENV_CACHE_DIR)
    if env:
        return Path(env).expanduser() / "extract"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "jobbench" / "extract"


def resolve_cache(cache: bool | str | os.PathLike | ExtractCache | None) -> ExtractCache | None:
    """Turn the public ``cache`` argument into a cache (or ``None`` = disabled).

    ``None`` → the default location unless ``$JOBBENCH_NO_CACHE`` is set; ``True`` → the
    default location; ``False`` → disabled; a path → that directory.
    """
    if isinstance(cache, ExtractCache):
        return cache
    if cache is False:
        return None
    if cache is None:
        if os.environ.get(ENV_NO_CACHE, "").strip() not in ("", "0", "false"):
            return None
        return ExtractCache(default_cache_root())
    if cache is True:
        return ExtractCache(default_cache_root())
    return ExtractCache(Path(cache))


def engine_fingerprint(limits: ExtractLimits) -> str:
    """Which recalculation engine would run (LibreOffice presence changes xlsx output; when
    it is absent, so does the reason, which diagnostics and notes quote)."""
    from ._soffice import soffice_unavailable_reason

    missing = soffice_unavailable_reason()
    present = missing is None
    suffix = "" if present else f" ({missing})"
    if limits.xlsx_engine == "auto":
        return "libreoffice" if present else "formulas" + suffix
    if limits.xlsx_engine == "libreoffice" and not present:
        return "libreoffice-missing" + suffix
    return limits.xlsx_engine + suffix


class ExtractCache:
    """A directory of cached results (see module docstring)."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def key(self, kind: str, sha256: str, rel: str, limits: ExtractLimits) -> str:
        """Cache key for ``kind`` (``extract`` or ``workbook``) of a file.

        Workbook values do not depend on the display path or the text budgets, so their
        key leaves those out (the judge and the extractor share entries)."""
        parts = {
            "kind": kind,
            "sha256": sha256,
            "version": EXTRACTOR_VERSION,
            "libraries": library_versions(),
            "rel": rel if kind == "extract" else "",
            "limits": limits.cache_relevant()
            if kind == "extract"
            else {"engine": limits.xlsx_engine},
            "engine": engine_fingerprint(limits),
        }
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def _get(self, key: str) -> str | None:
        try:
            return self._path(key).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def _put(self, key: str, text: str) -> None:
        try:
            atomic_write_text(self._path(key), text)
        except OSError:
            pass  # a read-only or full cache must never fail extraction

    def get_extraction(self, key: str) -> Extraction | None:
        """The cached extraction, or ``None``."""
        text = self._get(key)
        if text is None:
            return None
        try:
            return Extraction.model_validate_json(text)
        except ValueError:
            return None

    def put_extraction(self, key: str, extraction: Extraction) -> None:
        """Store ``extraction`` (errors writing are ignored)."""
        self._put(key, extraction.model_copy(update={"cached": False}).model_dump_json())

    def get_workbook(self, key: str) -> WorkbookValues | None:
        """The cached workbook values, or ``None``."""
        text = self._get(key)
        if text is None:
            return None
        try:
            return WorkbookValues.model_validate_json(text)
        except ValueError:
            return None

    def put_workbook(self, key: str, values: WorkbookValues) -> None:
        """Store ``values`` (errors writing are ignored)."""
        self._put(key, values.model_dump_json())
