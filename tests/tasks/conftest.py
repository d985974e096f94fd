from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "datasets"


@pytest.fixture
def fixtures(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fixture datasets directory, made the current directory so that problem paths
    read ``invalid/dataset/main/lawyers/task3/RUBRICS.json``."""
    monkeypatch.chdir(FIXTURES)
    return FIXTURES
