"""Runner test configuration: makes ``runner_helpers`` importable and provides fixtures.

``test_cli_agents_real.py`` drives the real agent CLIs (about 2 GB of npm packages that CI
does not install): it is collected only when ``JOBBENCH_REAL_CLIS=1``, which
``scripts/verify_cli_agents.sh`` sets after installing them; then a CLI it cannot find is a
failure, not a skip.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from runner_helpers import build_dataset  # noqa: E402

REAL_CLIS = os.environ.get("JOBBENCH_REAL_CLIS") == "1"
collect_ignore = [] if REAL_CLIS else ["test_cli_agents_real.py"]


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """A two-task fixture dataset (``<tmp>/data/sample``)."""
    return build_dataset(tmp_path / "data")
