"""Runner test configuration: makes ``runner_helpers`` importable and provides fixtures."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from runner_helpers import build_dataset  # noqa: E402


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """A two-task fixture dataset (``<tmp>/data/sample``)."""
    return build_dataset(tmp_path / "data")
