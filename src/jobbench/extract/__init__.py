"""Deliverable extraction: file → text (and images) the way a careful reviewer reads it.

Public API (stable contract used by the judge, the builtin agent and the gates):

* ``extract(path, *, rel=None, max_chars=200_000) -> Extraction``
* ``extract_dir(folder, *, max_chars_per_file=200_000, max_total_chars=..., max_images=...)
  -> FolderExtraction``
"""

from ._records import Diagnostic, ExtractedImage, Extraction, FolderExtraction
from ._core import extract, extract_dir

__all__ = ["Diagnostic", "ExtractedImage", "Extraction", "FolderExtraction", "extract", "extract_dir"]
