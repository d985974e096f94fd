"""The ``jobbench`` command line (typer + rich).

Each stage's commands live next to the stage; this module only wires them together.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from . import __version__
from .tasks import Dataset, default_dataset, display_path, load_dataset

app = typer.Typer(
    name="jobbench",
    help="JobBench: evaluate AI agents on professional desk work with chained binary rubrics.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # help is printed literally: Rich markup would eat "[dask]" and "[default: …]"
    rich_markup_mode=None,
)
console = Console()
err_console = Console(stderr=True)


def _load_or_exit(
    path: Path | None,
    split: list[str] | None = None,
    tasks: str | None = None,
    strict: bool = False,
) -> Dataset:
    """Load ``path`` (None: :func:`jobbench.tasks.default_dataset`); exit 2 naming the path
    when it is not there."""
    try:
        if path is None:
            path = default_dataset()
        return load_dataset(path, splits=split or None, task_glob=tasks, strict=strict)
    except FileNotFoundError as exc:
        err_console.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from exc


def _ext(name: str) -> str:
    suffix = Path(name).suffix.lower().lstrip(".")
    return suffix or "(none)"


@app.command("tasks")
def tasks_cmd(
    path: Path | None = typer.Argument(
        None,
        help="Dataset root, split, occupation or task directory (default: the bundled sample).",
    ),
    split: list[str] | None = typer.Option(None, "--split", help="Only these splits (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Summarise tasks per occupation: tasks, rubrics, criteria, total weight, file formats.

    On a terminal the table fits its width; piped, it is printed at its natural width
    (full occupation names, one line per row)."""
    ds = _load_or_exit(path, split)
    groups: dict[tuple[str, str], dict] = defaultdict(
        lambda: {"tasks": 0, "rubrics": 0, "criteria": 0, "total_weight": 0.0, "formats": Counter()}
    )
    for t in ds.tasks:
        g = groups[(t.split, t.occupation)]
        g["tasks"] += 1
        g["rubrics"] += len(t.rubrics)
        g["criteria"] += t.criterion_count
        g["total_weight"] += t.total_weight
        g["formats"].update(_ext(f) for f in t.workspace_files if f != "TASK_INSTRUCTIONS.txt")
    rows = []
    for (split_name, occ), g in sorted(groups.items()):
        info = next(t for t in ds.tasks if t.occupation == occ).occupation_info
        rows.append(
            {
                "split": split_name,
                "occupation": occ,
                "soc_major_code": info.soc_major_code,
                "soc_major_title": info.soc_major_title,
                "tasks": g["tasks"],
                "rubrics": g["rubrics"],
                "criteria": g["criteria"],
                "total_weight": g["total_weight"],
                "formats": dict(sorted(g["formats"].items())),
            }
        )
    if as_json:
        print(
            json.dumps(
                {
                    "tasks": [t.id for t in ds.tasks],
                    "occupations": rows,
                    "problems": [str(p) for p in ds.problems],
                },
                indent=2,
            )
        )
        return
    table = Table(title=escape(f"{len(ds.tasks)} tasks in {display_path(ds.root)}"))
    for col in (
        "split",
        "occupation",
        "SOC group",
        "tasks",
        "rubrics",
        "criteria",
        "weight",
        "files by format",
    ):
        table.add_column(
            col, justify="right" if col in {"tasks", "rubrics", "criteria", "weight"} else "left"
        )
    for r in rows:
        fmt = ", ".join(f"{k} {v}" for k, v in r["formats"].items())
        table.add_row(
            r["split"],
            r["occupation"],
            r["soc_major_code"],
            str(r["tasks"]),
            str(r["rubrics"]),
            str(r["criteria"]),
            f"{r['total_weight']:g}",
            fmt,
        )
    if console.is_terminal:
        console.print(table)
    else:  # piped: the natural width, so no name is cut to fit a pretend 80 columns
        from rich.measure import Measurement

        natural = Measurement.get(console, console.options.update_width(10_000), table).maximum
        wide = Console(width=max(natural, console.width))
        wide.print(table)
    n_occ = len({r["occupation"] for r in rows})
    n_groups = len({r["soc_major_code"] for r in rows} - {"unknown"})
    console.print(f"{n_occ} occupations, {n_groups} SOC major groups")
    if ds.errors:
        err_console.print(
            f"[yellow]{len(ds.errors)} problem(s) left tasks out; run `jobbench validate "
            f"{display_path(ds.root)}`[/yellow]"
        )


@app.command("validate")
def validate_cmd(
    path: Path | None = typer.Argument(
        None,
        help="Dataset root, split, occupation or task directory (default: the bundled sample).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print problems as JSON."),
    strict: bool = typer.Option(
        False,
        "--strict",
        help="Refuse what the public tools tolerate and JobBench skips or ignores with a "
        "warning by default: taskN directories holding no task source, and extension keys "
        "(id, requires, checks, files, vision) of the wrong shape.",
    ),
) -> None:
    """Validate tasks; list every problem with file and JSON path. Exit 1 if any error."""
    ds = _load_or_exit(path, strict=strict)
    if as_json:
        print(
            json.dumps(
                {"tasks": len(ds.tasks), "problems": [p.model_dump() for p in ds.problems]},
                indent=2,
            )
        )
    else:
        for p in ds.problems:
            colour = "red" if p.severity == "error" else "yellow"
            console.print(f"[{colour}]{escape(str(p))}[/{colour}]", highlight=False, soft_wrap=True)
        n_err, n_warn = len(ds.errors), len(ds.warnings)
        verdict = "[green]valid[/green]" if n_err == 0 else f"[red]{n_err} error(s)[/red]"
        extra = f"; {n_warn} warning(s)" if n_warn else ""
        where = escape(display_path(ds.root))
        console.print(f"{len(ds.tasks)} valid task(s) in {where}; {verdict}{extra}", soft_wrap=True)
    raise typer.Exit(0 if ds.ok else 1)


def _print_version(value: bool) -> None:
    if value:
        print(__version__)
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_print_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
) -> None:
    """JobBench: evaluate AI agents on professional desk work with chained binary rubrics."""


@app.command("version")
def version_cmd() -> None:
    """Print the harness version."""
    print(__version__)


def _register_stages() -> None:
    from .calibrate._cli import register as calibrate_cli
    from .extract._cli import register as extract_cli
    from .gates._cli import register as gates_cli
    from .judge._cli import register as judge_cli
    from .report._cli import register as report_cli
    from .runner._cli import register as runner_cli
    from .selection._cli import register as selection_cli
    from .tasks._cli import register as tasks_cli

    def make_executor(*args: Any, **kwargs: Any) -> Any:
        # the composition root hands the runner's executors to the judge's CLI, so the judge
        # never imports the runner (which runs above it); imported on use to start fast
        from .runner import make_executor as make

        return make(*args, **kwargs)

    tasks_cli(app)
    extract_cli(app)
    judge_cli(app, make_executor=make_executor)
    for register in (runner_cli, report_cli, gates_cli, calibrate_cli, selection_cli):
        register(app)
    from .interop.harbor import register_cli as harbor_cli

    harbor_cli(app)  # after runner_cli: `export harbor` joins its `export` group
    from .interop.inspect import register_cli as inspect_cli

    inspect_cli(app)  # `export inspect`; inspect_ai is imported only when it runs


_register_stages()


def _plain_metavars(typer_app: typer.Typer) -> None:
    """Give every option and argument without a metavar its name as one (``--runs-dir
    RUNS_DIR``, ``DATASET``) instead of the type Typer would print (``<path>``,
    ``<list[str]>``). Flags show none."""
    import inspect

    from typer.models import ArgumentInfo, OptionInfo

    for cmd in typer_app.registered_commands:
        if cmd.callback is None:
            continue
        for name, param in inspect.signature(cmd.callback).parameters.items():
            info = param.default
            if not isinstance(info, (OptionInfo, ArgumentInfo)) or info.metavar is not None:
                continue
            if isinstance(info, OptionInfo):
                longs = [d for d in (info.param_decls or ()) if d.startswith("--")]
                label = longs[0][2:] if longs else name
            else:
                label = name
            info.metavar = label.upper().replace("-", "_")
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _plain_metavars(group.typer_instance)


_plain_metavars(app)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
