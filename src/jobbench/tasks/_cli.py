"""CLI commands of jobbench.tasks, registered on the main app by :func:`register`.

Import heavy modules inside command functions so that `jobbench --help` stays fast.
"""

from __future__ import annotations

from pathlib import Path

import typer

dataset_app = typer.Typer(
    name="dataset",
    help="Get the public JobBench dataset.",
    no_args_is_help=True,
    add_completion=False,
)

DEFAULT_DEST = Path("data/jobbench")


@dataset_app.command("pull")
def pull_cmd(
    revision: str = typer.Option(
        "main", "--revision", help="Branch, tag or commit to pull (pinned to its commit)."
    ),
    repo_id: str = typer.Option(
        "JobBench/job-bench", "--repo-id", help="Hugging Face dataset repository."
    ),
    dest: Path = typer.Option(DEFAULT_DEST, "--dest", help="Where to install the dataset."),
    endpoint: str | None = typer.Option(
        None, "--endpoint", help="Hub URL (default: $HF_ENDPOINT or https://huggingface.co)."
    ),
    timeout: float = typer.Option(
        5.0, "--timeout", min=0.1, help="Seconds to wait for each Hub request."
    ),
    workers: int = typer.Option(8, "--workers", min=1, help="Parallel downloads."),
    force: bool = typer.Option(
        False, "--force", help="Download even if DEST already holds that commit intact."
    ),
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="Print every file as it is verified."
    ),
) -> None:
    """Download the dataset pinned to an exact commit, verify every file's hash, install it
    atomically and write a provenance manifest (jobbench-dataset.json)."""
    from rich.console import Console
    from rich.markup import escape

    from ._load import display_path
    from ._pull import MANIFEST, DatasetPullError, pull_dataset

    out, err = Console(), Console(stderr=True)
    shown = display_path(dest)
    try:
        with err.status(f"pulling {escape(repo_id)}@{escape(revision)} into {escape(shown)} …"):
            m = pull_dataset(
                dest,
                repo_id=repo_id,
                revision=revision,
                endpoint=endpoint,
                timeout=timeout,
                workers=workers,
                force=force,
                progress=(lambda line: err.print(escape(line), highlight=False))
                if verbose
                else None,
            )
    except DatasetPullError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from exc
    except KeyboardInterrupt:
        err.print(f"[yellow]interrupted[/yellow]; {escape(shown)} is unchanged", soft_wrap=True)
        raise typer.Exit(130) from None
    tasks = ", ".join(f"{n} {split}" for split, n in m.tasks.items()) or "no"
    verb = "installed" if m.changed else "already up to date"
    out.print(
        escape(
            f"{m.repo_id}@{m.revision} = {m.commit}: {len(m.files)} files verified, {tasks} tasks; "
            f"{verb} at {shown} (provenance: {shown}/{MANIFEST})"
        ),
        highlight=False,
        soft_wrap=True,
    )
    for line in refresh_lines(m.refresh):
        out.print(escape(line), highlight=False, soft_wrap=True)


def refresh_lines(refresh) -> list[str]:  # noqa: ANN001
    """What a re-pull did (:class:`~jobbench.tasks.PullRefresh`), as lines for the user."""
    if refresh is None:
        return []
    from ._load import display_path

    r = refresh
    lines = [
        f"from {r.from_commit[:12]}: {len(r.added)} source file(s) added, "
        f"{len(r.updated)} updated, {len(r.deleted)} deleted; {len(r.kept)} local file(s) "
        "kept in place (outputs, results, notes)"
    ]
    if r.backup:
        lines.append(
            f"{len(r.backed_up)} replaced or unlisted source file(s) backed up and "
            f"{len(r.retired_tasks)} retired task(s) moved aside with their results, to "
            f"{display_path(r.backup)}/ (refresh.json lists them)"
        )
    lines += [f"  retired: {t}" for t in r.retired_tasks]
    return lines


def register(app: typer.Typer) -> None:
    """Add this stage's commands to `app`: ``jobbench dataset pull``."""
    app.add_typer(dataset_app, name="dataset")
