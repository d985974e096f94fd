"""Fixtures for judge tests; helpers live in judge_helpers.py (importable: this folder is put
on sys.path here, since --import-mode=importlib does not do it)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from jobbench.judge import JudgeConfig  # noqa: E402


@pytest.fixture
def judge_config(tmp_path: Path) -> Callable[..., JudgeConfig]:
    """Factory: a JudgeConfig pointed at a fake server, fast backoff, cache in tmp."""

    def make(base_url: str, **kw: Any) -> JudgeConfig:
        values: dict[str, Any] = dict(
            model="gpt-4o-mini",
            api_base=base_url,
            api_key="test",
            backoff_base=0.0,
            backoff_max=0.0,
            timeout=5.0,
            cache_path=tmp_path / "cache.sqlite",
            concurrency=4,
        )
        values.update(kw)
        return JudgeConfig(**values)

    return make


@pytest.fixture(autouse=True)
def _isolated_judge_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No user judge settings leak into tests, and no test writes to ~/.cache."""
    import os

    for name in list(os.environ):
        if name.startswith(("JUDGE_", "JOBBENCH_JUDGE_")) or name == "OPENAI_API_KEY":
            monkeypatch.delenv(name, raising=False)
    # outside tmp_path: tests use tmp_path as a deliverable folder, and caches must not appear in it
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
