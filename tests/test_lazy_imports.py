"""The CLI starts without the heavy dependencies, and every lazily exported name resolves."""

import importlib
import subprocess
import sys

import pytest


def test_cli_import_does_not_load_heavy_dependencies() -> None:
    code = (
        "import sys, jobbench.cli\n"
        "print(sorted(m for m in ('openai', 'matplotlib', 'numpy', 'dask', 'pdfplumber') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("package", ["jobbench.judge", "jobbench.report", "jobbench.selection"])
def test_every_public_name_resolves(package: str) -> None:
    mod = importlib.import_module(package)
    missing = [name for name in mod.__all__ if getattr(mod, name, None) is None]
    assert missing == []
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        _ = mod.not_a_name
