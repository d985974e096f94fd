"""``jobbench export inspect`` (inspect_ai is imported when the command runs)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

err = Console(stderr=True)
out = Console()


def register_cli(app: typer.Typer) -> None:
    """Add ``export inspect`` to ``app``'s ``export`` group (made by the runner's CLI)."""
    from ..harbor._cli import _group

    export = _group(app, "export", "Export a run to other layouts.")

    @export.command("inspect")
    def export_inspect_cmd(
        run_dir: Path = typer.Argument(..., help="JobBench run directory (runs/<name>)."),
        out_dir: Path = typer.Argument(..., help="Folder for the Inspect logs (.eval files)."),
        judge_key: str | None = typer.Option(
            None, "--judge-key", help="Grades to use (default: the only or last graded key)."
        ),
    ) -> None:
        """One Inspect AI eval log per agent configuration (needs jobbench[inspect]); open
        them with: inspect view --log-dir OUT_DIR."""
        from importlib.util import find_spec

        from ._export import InspectExportError, export_inspect

        if find_spec("inspect_ai") is None:
            err.print(
                "[red]error:[/red] inspect_ai is not installed; pip install 'jobbench[inspect]'",
                highlight=False,
                soft_wrap=True,
            )
            raise typer.Exit(2)
        try:
            res = export_inspect(run_dir, out_dir, judge_key=judge_key)
        except InspectExportError as exc:
            err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from exc
        for label, path in res.logs.items():
            out.print(
                f"{escape(label)}: {res.samples[label]} sample(s) -> {escape(str(path))}",
                highlight=False,
                soft_wrap=True,
            )
        out.print(
            f"view:  inspect view --log-dir {escape(str(res.out_dir))}",
            highlight=False,
            soft_wrap=True,
        )
