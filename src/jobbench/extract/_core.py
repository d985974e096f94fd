"""Minimal placeholder dispatcher (plain text only); the full extractor replaces it."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ._records import Diagnostic, Extraction, FolderExtraction

TEXT_EXT = {".txt", ".md", ".csv", ".tsv", ".json", ".jsonl", ".py", ".sql", ".html", ".xml", ".yaml", ".yml"}


def extract(path: Path | str, *, rel: str | None = None, max_chars: int = 200_000) -> Extraction:
    """Extract one file (placeholder: UTF-8 text formats only)."""
    path = Path(path)
    rel = rel or path.name
    if path.is_symlink() or not path.is_file():
        return Extraction(path=rel, kind="refused", diagnostics=[Diagnostic(level="error", message="not a regular file")])
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if path.suffix.lower() not in TEXT_EXT:
        return Extraction(path=rel, kind="unsupported", text=f"[unsupported: {path.suffix.lower() or '(none)'}]",
                          sha256=digest, size=len(data))
    text = data.decode("utf-8", errors="replace")
    return Extraction(path=rel, kind="text", text=text[:max_chars], sha256=digest, size=len(data),
                      truncated=len(text) > max_chars)


def extract_dir(folder: Path | str, *, max_chars_per_file: int = 200_000, max_total_chars: int = 1_000_000,
                max_images: int = 8) -> FolderExtraction:
    """Extract every file under ``folder`` in sorted order with ``=== FILE: rel ===`` headers."""
    folder = Path(folder)
    files = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in sorted(filenames):
            p = Path(dirpath) / name
            files.append(extract(p, rel=p.relative_to(folder).as_posix(), max_chars=max_chars_per_file))
    files.sort(key=lambda e: e.path)
    text = "\n".join(f"=== FILE: {e.path} ===\n{e.text}" for e in files)
    return FolderExtraction(files=files, text=text[:max_total_chars])
