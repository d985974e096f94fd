"""CLI commands of jobbench.selection, registered on the main app by :func:`register`.

Import heavy modules inside command functions so that `jobbench --help` stays fast.
"""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this stage's commands to `app`."""
