"""CLI commands of jobbench.judge: ``jobbench grade`` and ``jobbench cache stats|clear``.

Import heavy modules inside command functions so that `jobbench --help` stays fast.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

_GRADE_COLUMNS = (
    "agent@model",
    "trials",
    "graded now",
    "scored",
    "mean score",
    "no deliverable",
    "judge_error",
    "unjudged",
    "judge calls now",
    "judge cost now",
)
"""The grade summary's columns, per agent@model."""


def _console(stderr: bool = False):  # noqa: ANN202
    from rich.console import Console

    return Console(stderr=stderr, soft_wrap=True)


def register(app: typer.Typer, make_executor: Callable[..., Any] | None = None) -> None:
    """Add this stage's commands to `app`.

    Args:
        app: the root Typer app.
        make_executor: ``make_executor(name, scheduler=…, workers=…) -> Executor`` for
            ``grade --executor`` (the root CLI passes :func:`jobbench.runner.make_executor`,
            so the judge imports nothing from the runner, which runs above it); it raises
            a ``RuntimeError`` (``jobbench.runner.ExecutorError``) naming what is missing.
            None: only ``--executor local`` is available.
    """
    cache_app = typer.Typer(help="The judge's verdict cache (SQLite).", no_args_is_help=True)
    app.add_typer(cache_app, name="cache")

    @app.command("grade")
    def grade_cmd(
        target: Path = typer.Argument(
            ...,
            help="A run directory (with lock.json), or a dataset in the public layout "
            "whose tasks hold model_output/<label>/ folders.",
        ),
        judge_model: str | None = typer.Option(
            None,
            "--judge-model",
            help="Judge model (env JUDGE_MODEL / "
            "JOBBENCH_JUDGE_MODEL). Without one, only programmatic checks run.",
        ),
        api_base: str | None = typer.Option(
            None,
            "--judge-base-url",
            "--api-base",
            help="The judge's OpenAI-compatible base URL (env JUDGE_API_BASE); --api-base is "
            "the older spelling.",
        ),
        mode: str | None = typer.Option(
            None, "--mode", help="rubric (default) | task | criterion | official."
        ),
        decide: str | None = typer.Option(
            None,
            "--decide",
            help="auto | llm | checks (default: auto with a judge model, checks without).",
        ),
        config: Path | None = typer.Option(
            None, "--config", help="TOML judge config (env JOBBENCH_JUDGE_CONFIG)."
        ),
        concurrency: int | None = typer.Option(
            None, "--concurrency", help="Parallel LLM calls (default 10)."
        ),
        strict_evidence: bool = typer.Option(
            False,
            "--strict-evidence",
            help="A pass whose quote is not found in the deliverables becomes a fail.",
        ),
        max_attempts: int | None = typer.Option(
            None, "--max-attempts", help="Tries per call (default 3)."
        ),
        timeout: float | None = typer.Option(
            None, "--timeout", help="Seconds per HTTP request (default 300)."
        ),
        seed: int | None = typer.Option(
            None, "--seed", help="Sampling seed sent to the endpoint (default 0)."
        ),
        response_format: str | None = typer.Option(
            None, "--response-format", help="json_schema (default) | json_object | none."
        ),
        prices: Path | None = typer.Option(
            None, "--prices", help="TOML price table merged over the defaults."
        ),
        cache_path: Path | None = typer.Option(None, "--cache-path", help="Verdict cache file."),
        no_cache: bool = typer.Option(
            False, "--no-cache", help="Neither read nor write the verdict cache."
        ),
        cache_share: str | None = typer.Option(
            None,
            "--judge-cache-share",
            help="Share cached verdicts across endpoints under this name (env "
            "JOBBENCH_JUDGE_CACHE_SHARE; default: verdicts are cached per endpoint: base URL "
            "and the model id it reports).",
        ),
        no_vision: bool = typer.Option(False, "--no-vision", help="Never attach images."),
        label: str | None = typer.Option(
            None, "--label", help="Suffix of the judge key (keeps configs apart)."
        ),
        run_label: str | None = typer.Option(
            None,
            "--run-label",
            help="Public layout only: the report's run label, <judge>_<label>_judge.json (default: "
            "none for --mode official and checks only, so the public tools recognise the "
            "report; jobbench-<judge key> otherwise).",
        ),
        output_label: list[str] | None = typer.Option(
            None,
            "--output",
            help="Public layout only: grade only these model_output labels (repeatable).",
        ),
        force: bool = typer.Option(
            False,
            "--force",
            help="Regrade up-to-date trials too (the cache still applies); in the public layout "
            "also replace reports JobBench did not write, after moving them to "
            "<task>/.jobbench-backups/.",
        ),
        skip_invalid: bool = typer.Option(
            False,
            "--skip-invalid",
            help="Public layout only: grade the valid tasks "
            "of a dataset with validation errors (default: refuse it).",
        ),
        strict: bool = typer.Option(
            False,
            "--strict",
            help="Load the dataset strictly: taskN directories holding no task source and "
            "extension keys of the wrong shape are validation errors (by default they are "
            "skipped or ignored with a warning, as the public tools do). A run directory made "
            "with `jobbench run --strict` is graded strictly anyway.",
        ),
        progress: bool = typer.Option(
            True, "--progress/--no-progress", help="Show a progress bar."
        ),
        no_preflight: bool = typer.Option(
            False,
            "--no-preflight",
            help="Skip the judge preflight (one cheap request with the response format the "
            "judge will send, made before grading; a failure stops with exit 2).",
        ),
        as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
        executor_name: str = typer.Option(
            "local",
            "--executor",
            help="Run directories only: where grading runs: "
            "local (this process), dask (an existing Dask cluster, --scheduler; one "
            "job per trial) or dask-local (a LocalCluster of --dask-workers "
            "processes). The run directory must be on storage shared by every worker.",
        ),
        scheduler: str | None = typer.Option(
            None,
            "--scheduler",
            envvar="JOBBENCH_DASK_SCHEDULER",
            help="Dask scheduler address or scheduler file, for --executor dask.",
        ),
        dask_workers: int = typer.Option(
            2, "--dask-workers", min=1, help="Worker processes of --executor dask-local."
        ),
    ) -> None:
        """Grade deliverables with programmatic checks and/or an LLM judge (chained rubrics)."""
        import sys

        from rich.markup import escape

        from ..rundir import RunDir
        from ..tasks import discover_task_dirs, display_path
        from ._config import load_judge_config
        from ._public import OverwriteRefused, grade_public_dataset
        from ._run import RunDirError, explain_invalid_tasks, grade_run

        err = _console(stderr=True)
        try:
            cfg = load_judge_config(
                config,
                model=judge_model,
                api_base=api_base,
                mode=mode,
                decide=decide,
                concurrency=concurrency,
                strict_evidence=strict_evidence or None,
                max_attempts=max_attempts,
                timeout=timeout,
                seed=seed,
                response_format=response_format,
                prices_file=prices,
                cache_path=cache_path,
                cache=False if no_cache else None,
                vision=False if no_vision else None,
                label=label,
                cache_share=cache_share,
            )
        except (ValueError, FileNotFoundError) as exc:
            err.print(f"[red]error:[/red] {escape(str(exc))}")
            raise typer.Exit(2) from exc
        if cfg.decide is not None and cfg.decide != "checks" and not cfg.model:
            err.print(
                "[red]error:[/red] --decide auto/llm needs a judge model "
                "(--judge-model or JUDGE_MODEL)"
            )
            raise typer.Exit(2)
        show = progress and sys.stderr.isatty()
        is_run = RunDir(target).is_run_dir()
        executor = None
        if executor_name != "local":
            if not is_run:
                err.print(
                    "[red]error:[/red] --executor applies to run directories only "
                    "(a dataset in the public layout is graded in this process)"
                )
                raise typer.Exit(2)
            if make_executor is None:
                err.print(
                    f"[red]error:[/red] --executor {escape(executor_name)} is not available here"
                )
                raise typer.Exit(2)
            try:
                executor = make_executor(executor_name, scheduler=scheduler, workers=dask_workers)
            except RuntimeError as exc:
                err.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True, highlight=False)
                raise typer.Exit(2) from exc
        fresh: set[str] = set()
        empty: list[str] = []
        backups: list[Path] = []
        grader = None
        preflight = None
        if cfg.uses_llm and not no_preflight:
            from ._client import JudgeClient
            from ._grade import Grader
            from ._preflight import PreflightError, preflight_judge
            from ._prices import load_prices

            price_table = load_prices(cfg.prices_file)
            client = JudgeClient(cfg, price_table)
            if executor is None:
                # lazy: the preflight runs before the first request to the judge, on the
                # client the grade then uses (so it starts with the downgrades the preflight
                # decided); a grade that asks the judge nothing (every unit cached, every
                # criterion decided by checks) makes no request at all
                def run_preflight() -> None:
                    nonlocal preflight
                    preflight = preflight_judge(client)
                    err.print(preflight.line(), markup=False, highlight=False, soft_wrap=True)

                grader = Grader(
                    cfg,
                    prices=price_table,
                    client=client,
                    progress=show,
                    before_first_call=run_preflight,
                )
            else:  # the workers have their own clients: check the endpoint here, first
                try:
                    preflight = preflight_judge(client)
                except PreflightError as exc:
                    err.print(
                        f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True, highlight=False
                    )
                    executor.close()
                    raise typer.Exit(2) from exc
                err.print(preflight.line(), markup=False, highlight=False, soft_wrap=True)
        try:
            if is_run:
                dataset, _ = explain_invalid_tasks(target, err, strict=True if strict else None)
                records = grade_run(
                    target,
                    cfg,
                    dataset=dataset,
                    progress=show,
                    force=force,
                    executor=executor,
                    fresh=fresh,
                    grader=grader,
                )
                kind = "run"
            else:
                try:
                    found = discover_task_dirs(target)
                except FileNotFoundError as exc:
                    err.print(f"[red]error:[/red] {escape(str(exc))}")
                    raise typer.Exit(2) from exc
                if not any((d / "model_output").is_dir() for _, _, d in found):
                    err.print(
                        f"[red]error:[/red] {escape(display_path(target))}: "
                        "neither a run directory (no lock.json) nor "
                        "a dataset with <task>/model_output/<label>/ folders"
                    )
                    raise typer.Exit(2)
                if skip_invalid:
                    _warn_skipped_invalid(target, err, strict)
                from ..tasks import warnings_report

                def show_warnings(found) -> None:  # noqa: ANN001
                    for i, line in enumerate(warnings_report(found)):
                        head = "[yellow]warning:[/yellow] " if i == 0 else ""
                        err.print(head + escape(line), highlight=False)

                records = grade_public_dataset(
                    target,
                    cfg,
                    labels=output_label or None,
                    run_label=run_label,
                    progress=show,
                    force=force,
                    skip_invalid=skip_invalid,
                    fresh=fresh,
                    strict=strict,
                    on_dataset_warnings=show_warnings,
                    empty=empty,
                    backups=backups,
                    grader=grader,
                )
                kind = "public"
                if empty:
                    shown = escape("; ".join(empty[:10]))
                    err.print(
                        f"[yellow]note:[/yellow] {len(empty)} output folder(s) without "
                        f"files, no report written (as the public judge): {shown}",
                        highlight=False,
                    )
                for b in backups:
                    err.print(
                        "[yellow]note:[/yellow] replaced a report not written by this "
                        f"judge; backup: {escape(display_path(b))}",
                        highlight=False,
                    )
        except (RunDirError, OverwriteRefused, FileNotFoundError, ValueError) as exc:
            err.print(f"[red]error:[/red] {escape(str(exc))}")
            raise typer.Exit(2) from exc
        except Exception as exc:
            from ._preflight import PreflightError

            if not isinstance(exc, PreflightError):
                raise
            err.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True, highlight=False)
            raise typer.Exit(2) from exc
        finally:
            if executor is not None:
                executor.close()
            if grader is not None:
                grader.close()
        if grader is not None and grader.before_first_call is not None and preflight is None:
            err.print(
                "preflight: skipped: nothing was asked of the judge (every unit cached or "
                "decided by checks)",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
        _summary(records, cfg, kind, as_json, fresh, preflight)
        if any(r.status == "judge_error" for r in records):
            raise typer.Exit(1)

    @cache_app.command("stats")
    def cache_stats(
        cache_path: Path | None = typer.Option(
            None, "--cache-path", help="Cache file (default: the judge's)."
        ),
        as_json: bool = typer.Option(False, "--json"),
    ) -> None:
        """Entries, size and the tokens/cost the stored replies originally cost, per model."""
        import json

        from rich.table import Table

        from ._cache import JudgeCache
        from ._config import load_judge_config

        path = cache_path or load_judge_config().resolved_cache_path()
        if not path.exists():
            stats: dict[str, Any] = {"path": str(path), "entries": 0, "bytes": 0, "models": {}}
        else:
            cache = JudgeCache(path)
            stats = cache.stats()
            cache.close()
        if as_json:
            print(json.dumps(stats, indent=2))
            return
        con = _console()
        con.print(f"{stats['path']}: {stats['entries']} entries, {stats['bytes'] / 1e6:.2f} MB")
        if stats["models"]:
            t = Table("model", "entries", "input tokens", "output tokens", "cost (USD)")
            for m, v in stats["models"].items():
                t.add_row(
                    m,
                    str(v["entries"]),
                    str(v["input_tokens"]),
                    str(v["output_tokens"]),
                    "-" if v["cost_usd"] is None else f"{v['cost_usd']:.4f}",
                )
            con.print(t)

    @cache_app.command("clear")
    def cache_clear(
        cache_path: Path | None = typer.Option(
            None, "--cache-path", help="Cache file (default: the judge's)."
        ),
        model: str | None = typer.Option(None, "--model", help="Only this judge model's entries."),
    ) -> None:
        """Delete cached judge replies (all, or one model's)."""
        from ._cache import JudgeCache
        from ._config import load_judge_config

        path = cache_path or load_judge_config().resolved_cache_path()
        if not path.exists():
            print(f"{path}: no cache")
            return
        cache = JudgeCache(path)
        n = cache.clear(model)
        cache.close()
        print(f"{path}: deleted {n} entries")


def _warn_skipped_invalid(target: Path, err, strict: bool = False) -> None:  # noqa: ANN001
    """``--skip-invalid`` on a public-layout dataset: list the tasks left ungraded."""
    from rich.markup import escape

    from ..tasks import find_invalid, load_dataset

    invalid = find_invalid(load_dataset(target, strict=strict))
    if not invalid:
        return
    err.print(
        f"[yellow]warning:[/yellow] --skip-invalid: {len(invalid.tasks)} invalid task(s) "
        "not graded "
        f"({invalid.count} problem(s)):",
        highlight=False,
    )
    for line in invalid.lines():
        err.print(f"  {escape(line)}", highlight=False)


def _summary(records, cfg, kind: str, as_json: bool, fresh: set[str], preflight=None) -> None:  # noqa: ANN001
    """Print the grades per agent@model. Judge usage is what THIS command spent (records in
    ``fresh``); ``recorded_judge_usage`` (JSON) is what every current record cost when it
    was made, kept records included."""
    import json
    from collections import defaultdict

    from rich.table import Table

    from ..records import PrefixCacheable, Usage
    from ._run import prefix_cacheable_input

    groups: dict[str, dict] = defaultdict(
        lambda: {
            "trials": 0,
            "graded_now": 0,
            "scores": [],
            "judge_error": 0,
            "unjudged": 0,
            "no_deliverable": 0,
            "usage": Usage(),
        }
    )
    total = Usage()
    recorded = Usage()
    prefix = PrefixCacheable()
    for r in records:
        who = f"{r.agent or '-'}@{r.model or '-'}"
        g = groups[who]
        g["trials"] += 1
        if r.status == "no_deliverable":
            g["no_deliverable"] += 1
        if r.score is not None:
            g["scores"].append(r.score)
        elif r.status == "judge_error":
            g["judge_error"] += 1
        else:
            g["unjudged"] += 1
        recorded = recorded + r.usage
        if r.trial_id in fresh:
            g["graded_now"] += 1
            g["usage"] = g["usage"] + r.usage
            total = total + r.usage
            prefix = prefix + prefix_cacheable_input(r)
    rows = []
    for who, g in sorted(groups.items()):
        mean = sum(g["scores"]) / len(g["scores"]) if g["scores"] else None
        rows.append(
            {
                "agent_model": who,
                "trials": g["trials"],
                "graded_now": g["graded_now"],
                "scored": len(g["scores"]),
                "mean_score": mean,
                "judge_error": g["judge_error"],
                "unjudged": g["unjudged"],
                "no_deliverable": g["no_deliverable"],
                "judge_usage": g["usage"].model_dump(),
            }
        )
    if as_json:
        from ._errors import downgrade_counts, judge_error_groups

        checks, judged, from_cache = _decided_counts(records)
        print(
            json.dumps(
                {
                    "judge": cfg.identity(),
                    "target": kind,
                    "rows": rows,
                    "judge_usage": total.model_dump(),
                    "recorded_judge_usage": recorded.model_dump(),
                    "prefix_cacheable_input": prefix.model_dump(),
                    "criteria_decided_by_checks": checks,
                    "criteria_sent_to_judge": judged,  # decided by the judge, cache included
                    "criteria_from_verdict_cache": from_cache,
                    "judge_errors": judge_error_groups(records),
                    "judge_downgrades": downgrade_counts(records),
                    "preflight": preflight.as_dict() if preflight is not None else None,
                },
                indent=2,
            )
        )
        return
    con = _console()
    cells = [
        {
            "agent@model": r["agent_model"],
            "trials": str(r["trials"]),
            "graded now": str(r["graded_now"]),
            "scored": str(r["scored"]),
            "mean score": "-" if r["mean_score"] is None else f"{100 * r['mean_score']:.1f}",
            "no deliverable": str(r["no_deliverable"]),
            "judge_error": str(r["judge_error"]),
            "unjudged": str(r["unjudged"]),
            "judge calls now": str(r["judge_usage"]["calls"]),
            "judge cost now": "-"
            if r["judge_usage"]["cost_usd"] is None
            else f"${r['judge_usage']['cost_usd']:.4f}",
        }
        for r in rows
    ]
    t = Table(title=f"grades by judge {cfg.key}")
    for col in _GRADE_COLUMNS:
        t.add_column(col)
    for c in cells:
        t.add_row(*(c[col] for col in _GRADE_COLUMNS))
    # the box's width: each column's widest text plus a space either side and one rule each
    needed = 1 + sum(3 + max(len(col), *(len(c[col]) for c in cells)) for col in _GRADE_COLUMNS)
    if needed <= con.width:
        con.print(t)
    else:  # the table would cut names and headers (a piped console is 80 wide): a line each
        con.print(f"grades by judge {cfg.key}", markup=False, highlight=False)
        for c in cells:
            fields = ", ".join(f"{col} {c[col]}" for col in _GRADE_COLUMNS[1:])
            con.print(f"  {c['agent@model']}: {fields}", markup=False, highlight=False)
    cost = (
        "unknown (no price for this model)"
        if total.cost_usd is None and total.calls
        else f"${total.cost_usd or 0:.4f}"
    )
    kept = len(records) - sum(r["graded_now"] for r in rows)
    con.print(
        f"judge usage of this command: {total.calls} calls, {total.input_tokens} input tokens "
        f"({total.cached_input_tokens} cached), {total.output_tokens} output tokens, cost {cost}; "
        f"{len(records) - kept} trial(s) graded now, {kept} kept (up to date)"
    )
    if prefix.calls:  # nothing to say when no judge call was made
        con.print(_prefix_line(prefix), markup=False, highlight=False)
    con.print(_decided_line(records, cfg), highlight=False)
    from ._errors import judge_error_lines

    for line in judge_error_lines(records):
        con.print(line, markup=False, highlight=False)
    if any(r["judge_error"] for r in rows):
        con.print(
            "[yellow]some trials have judge_error verdicts and no score; "
            "run the same command again to retry only those[/yellow]"
        )


def _prefix_line(prefix) -> str:  # noqa: ANN001
    """The summary line of :class:`jobbench.records.PrefixCacheable` ``prefix`` (this
    command's calls), e.g. ``"prefix-cacheable input: ~1,234 tokens (4,936 of 6,000 prompt
    characters, 82 %) in 8 calls"``."""
    share = f", {100 * prefix.chars / prefix.prompt_chars:.0f} %" if prefix.prompt_chars else ""
    return (
        f"prefix-cacheable input: ~{prefix.tokens:,} tokens ({prefix.chars:,} of "
        f"{prefix.prompt_chars:,} prompt characters{share}) in {prefix.calls} calls"
    )


def _decided_counts(records) -> tuple[int, int, int]:  # noqa: ANN001
    """``(criteria decided by a programmatic check, criteria decided by the LLM judge, those
    of the latter answered from the verdict cache or reused from an earlier grade)`` over
    the criterion verdicts of ``records`` (GradeRecord list): a verdict whose ``source`` is
    ``check`` counts as the first, ``llm`` as the second, ``none`` (unjudged) as neither."""
    checks = judged = cached = 0
    for r in records:
        for rubric in r.rubrics:
            for c in rubric.criteria:
                if c.source == "check":
                    checks += 1
                elif c.source == "llm":
                    judged += 1
                    cached += bool(c.cached)
    return checks, judged, cached


def _decided_line(records, cfg) -> str:  # noqa: ANN001
    """The summary line saying who decided the criteria, e.g. ``"24 criteria decided by
    checks, 0 by the judge (use --decide llm to ask the judge)"``; the hint appears
    when a judge model is set, nothing was sent to it and checks decided something."""
    checks, judged, cached = _decided_counts(records)
    line = f"{checks} criteria decided by checks, {judged} by the judge"
    if cached:
        line += f" ({cached} of them from the verdict cache, no call made)"
    if cfg.model and judged == 0 and checks and cfg.effective_decide == "auto":
        line += " (use --decide llm to ask the judge)"
    elif not cfg.model and any(
        c.source == "none" for r in records for rb in r.rubrics for c in rb.criteria
    ):
        line += " (no judge model: --judge-model M grades the criteria without a check)"
    return line
