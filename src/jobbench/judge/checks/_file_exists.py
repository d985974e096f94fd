"""Check kind ``file_exists``: a deliverable matching a glob exists and is big enough."""

from __future__ import annotations

import os
from pathlib import Path

from ...extract import FolderExtraction
from ...tasks import FileExistsCheck
from ._common import DELIVERABLE_ERRORS, CheckResult, select_files

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp", ".tif", ".tiff")
"""Files with these suffixes count only when they decode as an image."""


def image_problem(path: Path) -> str | None:
    """Why ``path`` (an image by its suffix) does not decode as an image, or None when it
    does (Pillow's ``verify``; symlinks are never opened)."""
    from PIL import Image, UnidentifiedImageError

    errors: tuple[type[BaseException], ...] = (
        UnidentifiedImageError,
        SyntaxError,
        *DELIVERABLE_ERRORS,
    )
    try:
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
        with os.fdopen(fd, "rb") as f, Image.open(f) as im:
            im.verify()
    except errors as exc:
        return f"not a readable image ({type(exc).__name__})"
    return None


def evaluate(
    check: FileExistsCheck, root: Path, extraction: FolderExtraction | None
) -> CheckResult:
    """Pass when some regular file (symlinks never count) matching ``check.file`` has at
    least ``min_bytes`` bytes and, when its suffix names an image format
    (:data:`IMAGE_SUFFIXES`), decodes as an image: bytes named ``chart.png`` are not a
    chart."""
    matches = select_files(root, check.file)
    if not matches:
        return CheckResult(passed=False, detail=f"no deliverable matches {check.file!r}")
    sizes: dict[str, int] = {}
    for rel in matches:
        try:
            sizes[rel] = (Path(root) / rel).stat(follow_symlinks=False).st_size
        except DELIVERABLE_ERRORS:  # vanished since listing: it does not count
            continue
    if not sizes:
        return CheckResult(passed=False, detail=f"no readable deliverable matches {check.file!r}")
    broken: list[str] = []
    for rel, size in sizes.items():
        if size >= check.min_bytes and Path(rel).suffix.lower() in IMAGE_SUFFIXES:
            problem = image_problem(Path(root) / rel)
            if problem:
                broken.append(f"{rel}: {problem}")
                continue
        if size >= check.min_bytes:
            return CheckResult(
                passed=True,
                detail=f"{rel} exists ({size} bytes ≥ {check.min_bytes})",
                evidence=rel,
                file=rel,
            )
    if broken:
        return CheckResult(passed=False, detail="; ".join(broken))
    listing = ", ".join(f"{r} ({s} bytes)" for r, s in sizes.items())
    return CheckResult(
        passed=False, detail=f"matching file(s) smaller than {check.min_bytes} bytes: {listing}"
    )
