"""Where the selection data files live: one data directory with a fixed layout, and an
explicit path for any single file."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from pathlib import Path

DATA_DIR_ENV = "JOBBENCH_DATA_DIR"
DEFAULT_DATA_DIR = Path("data") / "selection"

LAYOUT: dict[str, tuple[str, ...]] = {
    "desires": ("workbank/domain_worker_desires.csv",),
    "capability": ("workbank/expert_rated_technological_capability.csv",),
    "task_metadata": ("workbank/task_statement_with_metadata.csv",),
    "companies": ("workbank/external/company_to_workflow_aggregation.csv",),
    "papers": ("workbank/external/paper_to_workflow_mapping_aggregated.csv",),
    "oews": ("oews/M2024_bls_wage_data.csv",),
    "onet_tasks": ("onet/Task Statements.txt", "onet/task_statements.csv"),
    "onet_occupations": ("onet/onet_soc2010_occupation_data.txt", "onet/Occupation Data.txt"),
    "leaderboard": ("jobbench/leaderboard.json",),
}
"""File key → candidate paths relative to the data directory (first existing one wins;
the first one, which is what ``fetch`` writes, is reported when none exists). The layout of
``jobbench selection fetch`` and of the project's shared data folder."""


def default_data_dir() -> Path:
    """``$JOBBENCH_DATA_DIR`` if set, else ``data/selection`` (relative to the current
    directory)."""
    env = os.environ.get(DATA_DIR_ENV)
    return Path(env) if env else DEFAULT_DATA_DIR


@dataclass(frozen=True)
class DataPaths:
    """Paths of every input file of the selection stage.

    Build it with :meth:`from_dir` (layout :data:`LAYOUT`) and override single files with
    :meth:`with_overrides`. Nothing is read here; loaders raise
    :class:`~jobbench.selection.DataFileError` naming the path when a file is missing.
    """

    desires: Path
    capability: Path
    task_metadata: Path
    companies: Path
    papers: Path
    oews: Path
    onet_tasks: Path
    onet_occupations: Path
    leaderboard: Path

    @classmethod
    def from_dir(cls, root: Path | str) -> DataPaths:
        """Paths under ``root`` following :data:`LAYOUT`."""
        root = Path(root)
        chosen: dict[str, Path] = {}
        for key, candidates in LAYOUT.items():
            found = next((root / c for c in candidates if (root / c).exists()), None)
            chosen[key] = found if found is not None else root / candidates[0]
        return cls(**chosen)

    def with_overrides(self, **paths: Path | str | None) -> DataPaths:
        """A copy with the given files replaced (None values are ignored).

        Raises:
            TypeError: for an unknown file key.
        """
        names = {f.name for f in fields(self)}
        unknown = set(paths) - names
        if unknown:
            raise TypeError(f"unknown data file key(s): {sorted(unknown)}")
        return replace(self, **{k: Path(v) for k, v in paths.items() if v is not None})
