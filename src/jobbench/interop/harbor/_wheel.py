"""A wheel of the running ``jobbench`` package, for the verifier image of exported tasks.

The verifier environment must install this package at the version that exported the tasks,
which need not be on any index; so the export writes a pure-Python wheel of the installed
package (every regular file under the ``jobbench`` package folder except ``__pycache__``
and symbolic links, e.g. the bundled sample dataset of an editable install) with the
distribution's own ``METADATA``. Format: PEP 427 (``WHEEL``, ``RECORD`` with urlsafe
base64 sha256 digests without padding).
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import os
import zipfile
from pathlib import Path

_ZIP_DATE = (2020, 1, 1, 0, 0, 0)


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode("ascii")


def _package_files(pkg: Path) -> list[tuple[str, Path]]:
    out: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(pkg):  # os.walk never follows links
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d != "__pycache__" and not os.path.islink(os.path.join(dirpath, d))
        )
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.is_symlink() or not path.is_file() or name.endswith((".pyc", ".pyo")):
                continue
            out.append((path.relative_to(pkg.parent).as_posix(), path))
    return out


def wheel_name() -> str:
    """``jobbench-<version>-py3-none-any.whl`` of the installed distribution."""
    version = importlib.metadata.version("jobbench")
    return f"jobbench-{version}-py3-none-any.whl"


def build_wheel(dest_dir: Path) -> Path:
    """Write the wheel (see the module docstring) into ``dest_dir``.

    The archive is reproducible: entries sorted, fixed timestamps, so two exports of the
    same source give the same bytes.

    Returns:
        The wheel's path (``dest_dir/`` :func:`wheel_name`).

    Raises:
        importlib.metadata.PackageNotFoundError: ``jobbench`` is not installed as a
            distribution (imported from a bare source tree).
    """
    import jobbench

    dist = importlib.metadata.distribution("jobbench")
    version = dist.version
    metadata = dist.read_text("METADATA")
    if metadata is None:
        raise importlib.metadata.PackageNotFoundError("jobbench (no METADATA)")
    pkg = Path(jobbench.__file__).resolve().parent
    info = f"jobbench-{version}.dist-info"
    entries: list[tuple[str, bytes]] = [
        (rel, path.read_bytes()) for rel, path in _package_files(pkg)
    ]
    wheel_meta = (
        "Wheel-Version: 1.0\nGenerator: jobbench.interop.harbor\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n"
    )
    entry_points = dist.read_text("entry_points.txt")
    entries.append((f"{info}/METADATA", metadata.encode("utf-8")))
    entries.append((f"{info}/WHEEL", wheel_meta.encode("utf-8")))
    if entry_points:
        entries.append((f"{info}/entry_points.txt", entry_points.encode("utf-8")))
    record = "".join(f"{name},{_record_hash(data)},{len(data)}\n" for name, data in entries)
    record += f"{info}/RECORD,,\n"
    entries.append((f"{info}/RECORD", record.encode("utf-8")))
    dest_dir.mkdir(parents=True, exist_ok=True)
    out = dest_dir / wheel_name()
    tmp = out.with_name(out.name + ".part")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries:
            zi = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = 0o644 << 16
            zf.writestr(zi, data)
    os.replace(tmp, out)
    return out
