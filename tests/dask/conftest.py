"""Dask executor tests: skip when Dask distributed is not installed (it is in the ``dev``
extra); reuse the runner's fixture tasks; one shared two-process LocalCluster."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("distributed")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runner"))
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="module")
def dask_executor():
    """A :class:`DaskExecutor` on a LocalCluster of two nanny-supervised worker processes."""
    from jobbench.runner._dask import DaskExecutor

    ex = DaskExecutor(n_workers=2, threads_per_worker=1, worker_timeout=60)
    try:
        yield ex
    finally:
        ex.close()
