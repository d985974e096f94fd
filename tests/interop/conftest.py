"""Harbor bridge tests: the interpreter that has the real ``harbor`` package.

Harbor needs Python >= 3.12; the project supports 3.11. The tests therefore check exported
tasks and write job directories with ``harbor_probe.py`` run by an interpreter that imports
``harbor``: ``$JOBBENCH_HARBOR_PYTHON``, else this interpreter when it has harbor, else
``.venv-harbor/bin/python`` (made by ``bash scripts/setup.sh --dev``). Without one the tests
fail with that instruction; they never skip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = Path(__file__).with_name("harbor_probe.py")
SAMPLE = ROOT / "datasets" / "sample"


def _has_harbor(python: str) -> bool:
    try:
        run = subprocess.run(
            [python, "-c", "import harbor.models.task.task"], capture_output=True, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return run.returncode == 0


@pytest.fixture(scope="session")
def harbor_python() -> str:
    candidates = [os.environ.get("JOBBENCH_HARBOR_PYTHON"), sys.executable]
    candidates.append(str(ROOT / ".venv-harbor" / "bin" / "python"))
    for c in candidates:
        if c and _has_harbor(c):
            return c
    pytest.fail(
        "no Python with the harbor package: run `bash scripts/setup.sh --dev` (it makes "
        ".venv-harbor with harbor>=0.26,<0.27 on Python >= 3.12) or set JOBBENCH_HARBOR_PYTHON"
    )


@pytest.fixture(scope="session")
def harbor_probe(harbor_python: str) -> Callable[..., Any]:
    """Run ``harbor_probe.py ARGS…`` with the Harbor interpreter; its JSON output (or None)."""

    def probe(*args: str) -> Any:
        run = subprocess.run(
            [harbor_python, str(PROBE), *args], capture_output=True, text=True, timeout=600
        )
        assert run.returncode == 0, run.stderr[-4000:]
        return json.loads(run.stdout) if run.stdout.strip() else None

    return probe


@pytest.fixture(scope="session")
def sample_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample (main and easy) exported once for the session."""
    from jobbench.interop.harbor import export_harbor

    out = tmp_path_factory.mktemp("harbor") / "tasks"
    export_harbor(SAMPLE, out)
    return out
