"""What counts as a deliverable: the one policy shared by the runner (collecting ``output/``)
and the judge (extraction, checks, grading).

A file the agent left in its output folder is one of:

* **not a deliverable** (:func:`excluded`): its path has a component starting with ``.``
  (dotfiles and dot-directories: ``.notes.md``, ``.DS_Store``, ``.~lock.report.docx#``,
  ``._chart.png``, ``.ipynb_checkpoints/``, ``.git/``), or it is operating-system or editor
  junk (:data:`JUNK_NAMES`, ``~$report.docx`` Office owner files, ``report.txt~`` backups,
  ``#notes.md#`` autosaves, ``__MACOSX/``, ``__pycache__/``, ``*.pyc``). The runner does not
  collect it, extraction does not show it, checks do not see it, and it never makes a grade
  stale. The public JobBench runners move ``output/*`` (Job-Bench/job-bench-eval,
  ``eval/run_benchmark_*.sh``), a shell glob that skips top-level dotfiles; this policy skips
  them too (and, beyond that, dot-directories and junk at any depth), so an output collected
  by either runner is graded the same way.
* **blank** (:func:`is_blank`): empty, or only whitespace (after an optional byte-order
  mark). It is collected and shown (the judge sees that ``summary.csv`` is empty), but it is
  not gradeable content.
* **gradeable**: anything else.

An output with no gradeable file is ``no_deliverable``: the runner gives the trial that
status, and the judge makes no call and scores it 0.

This module imports nothing from the rest of :mod:`jobbench` (the lowest layer).
"""

from __future__ import annotations

import codecs
import fnmatch
import os
from typing import BinaryIO

JUNK_NAMES = frozenset({"thumbs.db", "ehthumbs.db", "ehthumbs_vista.db", "desktop.ini", "icon\r"})
"""File names (compared case-insensitively) that operating systems write beside a user's
files: Windows thumbnail caches and folder settings, the macOS ``Icon\\r`` folder icon."""

JUNK_DIRS = frozenset({"__macosx", "__pycache__"})
"""Directory names whose whole content is junk: macOS resource forks left by zip tools,
Python bytecode caches."""

JUNK_PATTERNS = ("~$*", "*~", "#*#", "*.pyc", "*.pyo")
"""Name patterns of editor junk: Office owner files (``~$report.docx``), backup files
(``report.txt~``), Emacs autosaves (``#notes.md#``), Python bytecode."""

BLANK_SCAN_BYTES = 1 << 20
"""Bytes read per chunk when deciding whether a file is blank (reading stops at the first
non-whitespace character, so only a truly blank file is read to its end)."""

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\ufeff")


def excluded(rel: str) -> str | None:
    """Why ``rel`` (a POSIX path relative to the output folder) is not a deliverable, or
    ``None`` when it is one. Reasons: ``"dotfile"`` (a component starts with ``.``),
    ``"OS or editor junk"``."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if any(p.startswith(".") for p in parts):
        return "dotfile"
    if any(p.lower() in JUNK_DIRS for p in parts[:-1]):
        return "OS or editor junk"
    name = parts[-1] if parts else rel
    low = name.lower()
    if (
        low in JUNK_NAMES
        or low in JUNK_DIRS
        or any(fnmatch.fnmatchcase(low, p) for p in JUNK_PATTERNS)
    ):
        return "OS or editor junk"
    return None


def excluded_dir(name: str) -> bool:
    """Whether a directory called ``name`` holds no deliverable at all (a walker need not
    descend into it)."""
    return name.startswith(".") or name.lower() in JUNK_DIRS


def blank_stream(f: BinaryIO) -> bool:
    """Whether the binary stream holds nothing but whitespace.

    Whitespace is what :meth:`str.isspace` accepts plus zero-width characters; the text is
    decoded as UTF-8, or as UTF-16/UTF-32 when it starts with that byte-order mark. Bytes
    that do not decode make the file non-blank. Reading stops at the first other character.
    """
    head = f.read(BLANK_SCAN_BYTES)
    if not head:
        return True
    encoding = "utf-8"
    for bom, enc in _BOMS:
        if head.startswith(bom):
            head, encoding = head[len(bom) :], enc
            break
    decoder = codecs.getincrementaldecoder(encoding)("strict")
    chunk = head
    while True:
        try:
            text = decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError:
            return False
        if any(not (ch.isspace() or ch in _INVISIBLE) for ch in text):
            return False
        if not chunk:
            return True
        chunk = f.read(BLANK_SCAN_BYTES)


def is_blank(path: str | os.PathLike[str]) -> bool:
    """Whether the regular file at ``path`` is empty or whitespace-only (see
    :func:`blank_stream`). The file is opened without following a final symlink.

    Raises:
        OSError: the file cannot be opened (a symlink among them).
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        return blank_stream(f)
