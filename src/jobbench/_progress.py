"""Progress displays on stderr shared by the stages (grading, gates).

:func:`stderr_progress` is a rich progress bar (description, bar, done/total, elapsed) on
stderr, or a stand-in whose ``with`` block yields None when disabled, so callers write
``with stderr_progress(on) as prog: ... if prog: prog.update(...)``.
"""

from __future__ import annotations

from typing import Any


class _NoProgress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def stderr_progress(enabled: bool) -> Any:
    """A ``rich.progress.Progress`` on stderr (not transient: its last state stays on
    screen) when ``enabled``; otherwise a context manager yielding None."""
    if not enabled:
        return _NoProgress()
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=False,
    )
