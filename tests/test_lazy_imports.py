"""The CLI starts without the heavy dependencies, and every lazily exported name resolves."""

import importlib
import subprocess
import sys

import pytest


def test_cli_import_does_not_load_heavy_dependencies() -> None:
    code = (
        "import sys, jobbench.cli\n"
        "print(sorted(m for m in ('openai', 'matplotlib', 'numpy', 'dask', 'pdfplumber') if m in "
        "sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_import_jobbench_loads_only_itself() -> None:
    code = "import sys, jobbench\nprint(sorted(m for m in sys.modules if m.startswith('jobbench')))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "['jobbench', 'jobbench._lazy']"


def test_jobbench_report_is_the_package_and_the_call() -> None:
    import jobbench
    import jobbench.report as package
    from jobbench.report._api import report

    assert jobbench.report is package and callable(package) and package.report is report


@pytest.mark.parametrize(
    "package", ["jobbench", "jobbench.judge", "jobbench.report", "jobbench.selection"]
)
def test_every_public_name_resolves(package: str) -> None:
    mod = importlib.import_module(package)
    missing = [name for name in mod.__all__ if getattr(mod, name, None) is None]
    assert missing == []
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        _ = mod.not_a_name


def _imported_by(argv: list[str], cwd: str | None = None) -> set[str]:
    """Top-level module names that ``python -X importtime ARGV`` reports importing."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", *argv], capture_output=True, text=True, cwd=cwd
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return {
        line.rsplit("|", 1)[-1].strip().split(".")[0]
        for line in run.stderr.splitlines()
        if line.startswith("import time:")
    }


def test_help_imports_neither_openai_nor_matplotlib() -> None:
    names = _imported_by(["-m", "jobbench", "--help"])
    assert "jobbench" in names  # the parse of -X importtime found the imports
    assert {"openai", "matplotlib"} & names == set()
