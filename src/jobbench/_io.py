"""Crash-safe file writing shared by every stage.

Every record the harness keeps is written with :func:`atomic_write_text` /
:func:`atomic_write_json`: the bytes go to a temporary file in the same directory, are
fsynced, and the file is renamed over the target, so a reader (or a run killed with SIGKILL)
sees either the old complete file or the new complete file, never a torn one.
:func:`display_path` is how every message shows a path.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# Read once at import (os.umask is process-wide; toggling it later would race other threads).
_UMASK = _read_umask()


def atomic_write_bytes(path: Path | str, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file + fsync + rename).

    Raises:
        OSError: if the directory cannot be created or written.
    """
    _atomic_write_chunks(path, (data,))


def atomic_write_lines(path: Path | str, lines: Iterable[str]) -> None:
    """Write the UTF-8 text ``lines`` (each with its own line end) to ``path`` atomically,
    one at a time, so that the whole text is never held in memory.

    Raises:
        OSError: if the directory cannot be created or written.
    """
    _atomic_write_chunks(path, (line.encode("utf-8") for line in lines))


def _atomic_write_chunks(path: Path | str, chunks: Iterable[bytes]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp makes 0600; give records normal modes
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def atomic_write_text(path: Path | str, text: str) -> None:
    """UTF-8 text variant of :func:`atomic_write_bytes`."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path | str, obj: Any) -> None:
    """Write ``obj`` (a pydantic model or JSON-able value) as indented JSON, atomically."""
    if isinstance(obj, BaseModel):
        text = obj.model_dump_json(indent=2)
    else:
        text = json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False, default=str)
    atomic_write_text(path, text + "\n")


def append_jsonl(path: Path | str, obj: Any) -> None:
    """Append one JSON line and fsync. A crash can at worst leave a torn *last* line,
    which :func:`read_jsonl` skips."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (
        obj.model_dump_json()
        if isinstance(obj, BaseModel)
        else json.dumps(obj, ensure_ascii=False, default=str)
    )
    with open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


def read_jsonl(path: Path | str) -> list[Any]:
    """Read a JSONL file written by :func:`append_jsonl`, skipping a torn final line.

    Raises:
        ValueError: naming the file and line if a line other than the last is not JSON.
    """
    path = Path(path)
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[Any] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if n == len(lines):
                break
            raise ValueError(f"{path}: line {n}: not JSON ({exc.msg})") from exc
    return out


def display_path(path: Path | str) -> str:
    """``path`` relative to the current directory when below it, else absolute (POSIX)."""
    full = os.path.abspath(path)
    cwd = os.getcwd()
    if full == cwd:
        return "."
    prefix = cwd if cwd.endswith(os.sep) else cwd + os.sep
    shown = full[len(prefix) :] if full.startswith(prefix) else full
    return shown.replace(os.sep, "/") if os.sep != "/" else shown
