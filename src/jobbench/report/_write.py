"""``write_report``: every report file for one or more runs, written atomically."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .._io import atomic_write_json, atomic_write_text
from ..scoring._stats import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED
from ._build import ReportData, build_report
from ._html import render_html
from ._tables import leaderboard_csv, leaderboard_markdown, results_jsonl, summary_json

REPORT_FILES = ("leaderboard.md", "leaderboard.csv", "results.jsonl", "summary.json", "report.html")


def default_out_dir(run_dirs: list[Path]) -> Path:
    """``<run>/report`` for one run; ``<parent of first run>/report-<run names>`` for several
    (names joined with ``+``; a hash replaces them when that would exceed 100 characters)."""
    paths = [Path(r).resolve() for r in run_dirs]
    if len(paths) == 1:
        return paths[0] / "report"
    name = "+".join(p.name for p in paths)
    if len(name) > 100:
        name = f"{paths[0].name}+{len(paths) - 1}-more-{hashlib.sha256(name.encode()).hexdigest()[:10]}"
    return paths[0].parent / f"report-{name}"


def write_data(data: ReportData, out_dir: Path) -> Path:
    """Write the files of :data:`REPORT_FILES` for already built ``data`` into ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out_dir / "leaderboard.md", leaderboard_markdown(data))
    atomic_write_text(out_dir / "leaderboard.csv", leaderboard_csv(data))
    atomic_write_text(out_dir / "results.jsonl", results_jsonl(data))
    atomic_write_json(out_dir / "summary.json", summary_json(data))
    atomic_write_text(out_dir / "report.html", render_html(data))
    _readable(out_dir)
    return out_dir


def _readable(out_dir: Path) -> None:
    """Atomic writes leave temp-file permissions (0600); give report files the usual mode
    under the process umask, since reports are meant to be shared."""
    umask = os.umask(0)
    os.umask(umask)
    for name in REPORT_FILES:
        try:
            os.chmod(out_dir / name, 0o666 & ~umask)
        except OSError:
            pass


def write_report(
    run_dirs: list[Path] | Path,
    out_dir: Path | None = None,
    *,
    judge_key: str | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> Path:
    """Read trials and grades of ``run_dirs`` and write the report.

    Files: ``leaderboard.md``, ``leaderboard.csv`` (one row per configuration),
    ``results.jsonl`` (one row per trial with every figure), ``summary.json`` (every
    aggregate) and ``report.html`` (self-contained page with figures and drill-downs).

    Args:
        run_dirs: run directories (``runs/<name>``); several are merged into one leaderboard.
        out_dir: where to write; default :func:`default_out_dir` (``<run>/report``).
        judge_key: grades to use (``grades/<judge_key>/``); None = the only key present.
        n_resamples, confidence, seed: bootstrap settings (reproducible for a given seed).

    Returns:
        The report directory.

    Raises:
        jobbench.report.ReportInputError: unreadable run files (each named with its field),
            or several judge keys and none chosen.
    """
    runs = [Path(run_dirs)] if isinstance(run_dirs, (str, Path)) else [Path(r) for r in run_dirs]
    data = build_report(runs, judge_key=judge_key, n_resamples=n_resamples, confidence=confidence, seed=seed)
    return write_data(data, Path(out_dir) if out_dir is not None else default_out_dir(runs))
