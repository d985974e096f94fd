"""Shared fixtures for the extraction tests: a private cache per test, workbook builders."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from jobbench.extract._soffice import find_soffice

SOFFICE = (
    find_soffice()
)  # honours JOBBENCH_SOFFICE=none, which simulates a machine without LibreOffice
needs_soffice = pytest.mark.skipif(
    SOFFICE is None,
    reason="LibreOffice (soffice) is not installed; CI installs it with scripts/setup.sh "
    "(apt libreoffice-calc-nogui), so the LibreOffice path runs there",
)
ENGINES = [
    pytest.param("libreoffice", marks=needs_soffice, id="libreoffice"),
    pytest.param("formulas", id="formulas"),
]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Every test gets its own empty extraction cache and no engine override."""
    monkeypatch.setenv("JOBBENCH_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("JOBBENCH_XLSX_ENGINE", raising=False)
    monkeypatch.delenv("JOBBENCH_NO_CACHE", raising=False)
    monkeypatch.delenv("JOBBENCH_EXTRACT_ISOLATION", raising=False)


def set_cached_values(path: Path, sheet_xml: str, cached: dict[str, str]) -> None:
    """Rewrite an openpyxl-written workbook so formula cells carry the given cached values
    (``{"C2": "999"}``), as a workbook saved by an application with stale caches would.

    openpyxl writes a formula cell as ``<c r="C2"><f>…</f><v></v></c>`` (empty cache);
    the cached value goes into ``<v>``.
    """
    import re

    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == sheet_xml:
                text = data.decode()
                for cell, value in cached.items():
                    pattern = re.compile(r'(<c r="%s"[^>]*>)(<f>[^<]*</f>)<v\s*/?>(?:</v>)?' % cell)
                    text, n = pattern.subn(
                        lambda m, value=value: f"{m.group(1)}{m.group(2)}<v>{value}</v>", text
                    )
                    assert n == 1, f"cell {cell} not found as a formula cell in {sheet_xml}"
                data = text.encode()
            out.writestr(info, data)
    tmp.replace(path)


def add_zip_member(
    path: Path, name: str, data: bytes, compress: int = zipfile.ZIP_DEFLATED
) -> None:
    """Append a member to an existing zip container (xlsx/docx/pptx/zip)."""
    with zipfile.ZipFile(path, "a", compression=compress) as z:
        z.writestr(name, data)


@pytest.fixture(params=ENGINES)
def engine(request) -> str:
    """Each workbook test runs with both recalculation engines (LibreOffice skipped, with a
    reason, only when soffice is absent)."""
    return request.param


@pytest.fixture
def soffice() -> str:
    """Path of soffice; skips the test (with the reason) when LibreOffice is absent."""
    if SOFFICE is None:
        pytest.skip("LibreOffice (soffice) is not installed; CI installs it with scripts/setup.sh")
    return SOFFICE


@pytest.fixture
def stale():
    """The :func:`set_cached_values` helper."""
    return set_cached_values


@pytest.fixture
def add_member():
    """The :func:`add_zip_member` helper."""
    return add_zip_member


def _can_convert(tmp_dir: Path, name: str, content: str, target: str) -> bool:
    import subprocess

    src = tmp_dir / name
    src.write_text(content, encoding="utf-8")
    out = tmp_dir / "out"
    try:
        subprocess.run(
            [
                SOFFICE,
                "--headless",
                f"-env:UserInstallation={(tmp_dir / 'profile').as_uri()}",
                "--convert-to",
                target,
                "--outdir",
                str(out),
                str(src),
            ],
            capture_output=True,
            timeout=120,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return (out / f"{src.stem}.{target}").is_file()


@pytest.fixture(scope="session")
def soffice_draw(tmp_path_factory) -> str:
    """soffice with the Draw component (SVG rendering); skips with the reason otherwise."""
    if SOFFICE is None:
        pytest.skip("LibreOffice (soffice) is not installed; CI installs it with scripts/setup.sh")
    ok = _can_convert(
        tmp_path_factory.mktemp("probe-draw"),
        "p.svg",
        '<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20"><rect width="20" height="20" fill="red"/></svg>',
        "png",
    )
    if not ok:
        pytest.skip(
            "LibreOffice Draw is not installed (apt: libreoffice-draw-nogui); SVG rendering unavailable"
        )
    return SOFFICE


@pytest.fixture(scope="session")
def soffice_writer(tmp_path_factory) -> str:
    """soffice with the Writer component (doc/odt/rtf); skips with the reason otherwise."""
    if SOFFICE is None:
        pytest.skip("LibreOffice (soffice) is not installed; CI installs it with scripts/setup.sh")
    if not _can_convert(tmp_path_factory.mktemp("probe-writer"), "p.txt", "probe", "odt"):
        pytest.skip(
            "LibreOffice Writer is not installed (apt: libreoffice-writer-nogui); doc/odt/rtf unavailable"
        )
    return SOFFICE
