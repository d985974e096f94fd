"""Check kind ``file_exists``: a deliverable matching a glob exists and is big enough."""

from __future__ import annotations

from pathlib import Path

from ...extract import FolderExtraction
from ...tasks import FileExistsCheck
from ._common import DELIVERABLE_ERRORS, CheckResult, select_files


def evaluate(
    check: FileExistsCheck, root: Path, extraction: FolderExtraction | None
) -> CheckResult:
    """Pass when some regular file (symlinks never count) matching ``check.file`` has at
    least ``min_bytes`` bytes."""
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
    for rel, size in sizes.items():
        if size >= check.min_bytes:
            return CheckResult(
                passed=True,
                detail=f"{rel} exists ({size} bytes ≥ {check.min_bytes})",
                evidence=rel,
                file=rel,
            )
    listing = ", ".join(f"{r} ({s} bytes)" for r, s in sizes.items())
    return CheckResult(
        passed=False, detail=f"matching file(s) smaller than {check.min_bytes} bytes: {listing}"
    )
