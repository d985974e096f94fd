"""``jobbench export harbor`` and ``jobbench import harbor`` (nothing here imports harbor)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

err = Console(stderr=True)
out = Console()


def _group(app: typer.Typer, name: str, help_text: str) -> typer.Typer:
    """The sub-command group ``name`` of ``app``, made when no stage has made it yet."""
    for g in app.registered_groups:
        if g.name == name and g.typer_instance is not None:
            return g.typer_instance
    group = typer.Typer(help=help_text, no_args_is_help=True)
    app.add_typer(group, name=name)
    return group


def register_cli(app: typer.Typer) -> None:
    """Add ``export harbor`` and ``import harbor`` to ``app``."""
    export = _group(app, "export", "Export a run to other layouts.")
    imports = _group(app, "import", "Bring runs of other harnesses in as run directories.")

    @imports.command("harbor")
    def import_harbor_cmd(
        job_dir: Path = typer.Argument(..., help="A Harbor job directory (harbor run -o …)."),
        run_dir: Path = typer.Argument(..., help="New or empty folder for the run directory."),
        dataset: Path | None = typer.Option(
            None,
            "--dataset",
            help="The JobBench dataset the tasks were exported from (default: the one the "
            "export's jobbench-export.json names).",
        ),
    ) -> None:
        """A Harbor job's trials as a run directory, graded (checks only) and reported."""
        from ...report import ReportInputError, ReportWriteError, report
        from ...rundir import RunDirError
        from ...tasks import display_path
        from ._import import HarborImportError, import_harbor_job

        try:
            res = import_harbor_job(job_dir, run_dir, dataset=dataset)
        except (HarborImportError, RunDirError) as exc:
            err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from exc
        try:
            rep = report(res.run_dir, judge_key=res.judge_key, allow_ungraded=True)
        except (ReportInputError, ReportWriteError) as exc:
            err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from exc
        out.print(
            f"{len(res.trial_ids)} trial(s) imported into {escape(display_path(res.run_dir))}",
            highlight=False,
            soft_wrap=True,
        )
        if rep.out_dir is not None:
            out.print(
                f"report: {escape(display_path(rep.out_dir))}", highlight=False, soft_wrap=True
            )

    @export.command("harbor")
    def export_harbor_cmd(
        dataset: Path = typer.Argument(..., help="JobBench dataset (any layout)."),
        out_dir: Path = typer.Argument(..., help="Folder for the Harbor tasks (new or empty)."),
        split: list[str] | None = typer.Option(
            None, "--split", help="Only these splits (repeatable)."
        ),
        tasks: str | None = typer.Option(None, "--tasks", help="Only task ids matching this glob."),
        protocol: str = typer.Option(
            "public",
            "--protocol",
            help="public: agent network on, online search allowed (the published runners); "
            "jobbench: agent network off, work only in the workspace.",
        ),
        judge_host: list[str] | None = typer.Option(
            None,
            "--judge-host",
            help="A host the verifier may reach (the LLM judge's API; repeatable). Without "
            "one the verifier has no network, which suits the checks-only judge.",
        ),
        agent_timeout: float = typer.Option(3600.0, "--agent-timeout", help="Seconds."),
        verifier_timeout: float = typer.Option(1800.0, "--verifier-timeout", help="Seconds."),
        requirement: str | None = typer.Option(
            None,
            "--jobbench-requirement",
            help="pip requirement the verifier installs instead of a wheel of this jobbench.",
        ),
    ) -> None:
        """One Harbor task per JobBench task: agent image with only the workspace; a
        separate verifier image with the rubrics that grades with the JobBench judge."""
        from ...tasks import InvalidDatasetError, display_path
        from ._export import ExportError, export_harbor

        try:
            res = export_harbor(
                dataset,
                out_dir,
                splits=split or None,
                tasks=tasks,
                protocol=protocol,
                judge_hosts=judge_host or [],
                agent_timeout=agent_timeout,
                verifier_timeout=verifier_timeout,
                requirement=requirement,
            )
        except (FileNotFoundError, InvalidDatasetError, ExportError) as exc:
            err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from exc
        for t in res.tasks:
            if t.left_out:
                err.print(
                    f"[yellow]note:[/yellow] {escape(t.task_id)}: hidden files left out of the "
                    f"agent image: {escape(', '.join(t.left_out))}",
                    highlight=False,
                    soft_wrap=True,
                )
        shown = display_path(res.out_dir)
        out.print(
            f"{len(res.tasks)} Harbor task(s) in {escape(shown)}", highlight=False, soft_wrap=True
        )
        out.print(
            f"run:   harbor run -p {escape(shown)} -a AGENT -m MODEL",
            highlight=False,
            soft_wrap=True,
        )
