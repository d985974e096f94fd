"""Deliverable extraction: file → text (and images) the way a careful reviewer reads it.

Public API (stable contract used by the judge, the builtin agent and the gates):

* ``extract(path, *, rel=None, max_chars=200_000, ...) -> Extraction``
* ``extract_dir(folder, *, max_chars_per_file=200_000, max_total_chars=1_000_000,
  max_images=32, ...) -> FolderExtraction``
* ``folder_text(files, max_total_chars=1_000_000, *, boundary=None) -> (text, truncated)``
  (the folder text format; header-like lines inside a file are escaped, see
  ``escape_file_headers`` and ``file_header``)
* ``Extraction.content()``: the file's own text without the extractor's annotations (``notes``
  spans; read by the judge's number/regex checks)
* ``walk_folder(folder)``: every entry as ``extract_dir`` sees it (refused ones with their
  reason; files that are not deliverables left out, see :mod:`jobbench.deliverable_policy`);
  ``scan_folder(folder)`` also returns those (``"rel: reason"``)
* ``workbook_values(path, *, engine=None, ...) -> WorkbookValues`` (recalculated cells,
  used by the judge's ``xlsx_cell`` check)
* :class:`ExtractLimits` (budgets, safety limits, engine) and :class:`ExtractCache`.
* ``readable(text)``, ``plain(text)``, :data:`LOOKALIKES`, :data:`DASHES`: text as a reader
  sees it (NFKC, invisible characters dropped, look-alikes made ASCII); one owner, shared with
  the judge's injection detector.

See ``docs/extract.md`` for formats, budgets, safety rules and environment variables.
"""

from ._cache import EXTRACTOR_VERSION, ExtractCache, default_cache_root
from ._core import (
    escape_file_headers,
    extract,
    extract_dir,
    file_header,
    folder_text,
    scan_folder,
    walk_folder,
    workbook_values,
)
from ._limits import ExtractLimits
from ._readable import DASHES, LOOKALIKES, plain, readable
from ._records import (
    CellValue,
    Diagnostic,
    ExtractedImage,
    Extraction,
    FolderExtraction,
    WorkbookValues,
)

__all__ = [
    "CellValue",
    "DASHES",
    "Diagnostic",
    "EXTRACTOR_VERSION",
    "ExtractCache",
    "ExtractLimits",
    "ExtractedImage",
    "Extraction",
    "FolderExtraction",
    "LOOKALIKES",
    "WorkbookValues",
    "default_cache_root",
    "escape_file_headers",
    "extract",
    "extract_dir",
    "file_header",
    "folder_text",
    "plain",
    "readable",
    "scan_folder",
    "walk_folder",
    "workbook_values",
]
