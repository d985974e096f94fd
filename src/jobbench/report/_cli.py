"""CLI commands of jobbench.report, registered on the main app by :func:`register`.

Import heavy modules inside command functions so that `jobbench --help` stays fast.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

import typer

_SEED_HELP = "Bootstrap seed (same seed, same intervals)."
_RESAMPLES_HELP = "Bootstrap resamples over tasks."


def _named(config) -> str:  # noqa: ANN001 - a report configuration
    """A configuration's label with its run's name, unless the label already holds it."""
    name = config.run.name
    return config.label if f"[{name}]" in config.label else f"{config.label} ({name})"


def _fail(message: str) -> None:
    from rich.console import Console
    from rich.markup import escape

    Console(stderr=True).print(
        f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True
    )
    raise typer.Exit(2)


def _short(c) -> str:
    """The name to pass to --a/--b: ``agent@model`` (``agent`` when the model is ``-``)."""
    from ..scoring import config_label

    return config_label(c.agent, c.model)


def _in_run(data, run_dir: Path) -> list:
    """Configurations of ``run_dir`` in ``lock.json`` order."""
    run_path = run_dir.resolve()
    cands = [c for c in data.configs if c.run.path == run_path]
    order = {k: i for i, k in enumerate(cands[0].run.lock_agents)} if cands else {}
    return sorted(cands, key=lambda c: order.get((c.agent, c.model), len(order)))


def _example(run_a: Path, run_b: Path, a: str, b: str) -> str:
    import shlex

    args = ["jobbench", "compare", str(run_a), str(run_b), "--a", a, "--b", b]
    return " ".join(shlex.quote(x) for x in args)


def _pick(data, run_dir: Path, wanted: str | None, exclude: str | None = None, *, hint: str = ""):
    """The configuration of ``run_dir`` named ``wanted`` (label or agent@model), or the only one."""
    cands = [c for c in _in_run(data, run_dir) if c.label != exclude]
    names = ", ".join(_short(c) for c in cands) or "(none)"
    if wanted is not None:
        hits = [c for c in cands if wanted in (c.label, _short(c), f"{c.agent}@{c.model}")]
        if len(hits) == 1:
            return hits[0]
        _fail(f"no configuration {wanted!r} in {run_dir} (choices: {names}){hint}")
    if len(cands) == 1:
        return cands[0]
    _fail(
        f"{run_dir} has {len(cands)} configurations; choose with --a/--b (choices: {names}){hint}"
    )


def _splits(c) -> str:
    """The splits of a configuration's tasks, e.g. ``main`` or ``easy+main``."""
    return "+".join(sorted({t.split for t in c.tasks})) or "-"


def _across(ca, cb) -> bool:
    """True when A and B share no task id but share ``<occupation>/taskN`` ids (a main run
    against an easy run), so that they can only be compared across splits."""
    ids_a, ids_b = {t.task_id for t in ca.tasks}, {t.task_id for t in cb.tasks}
    if ids_a & ids_b:
        return False
    strip = lambda t: t.task_id.split("/", 1)[1] if "/" in t.task_id else t.task_id  # noqa: E731
    return bool({strip(t) for t in ca.tasks} & {strip(t) for t in cb.tasks})


def _pairs(data, run_a: Path, run_b: Path, a: str | None, b: str | None) -> list[tuple]:
    """The (A, B) configurations to compare.

    Same run and no choice: its two configurations in ``lock.json`` order. Two runs with the
    same configurations (agent@model) and no choice: every configuration against its
    namesake, in ``lock.json`` order. Otherwise one pair chosen with --a/--b (a run with
    one configuration needs no choice); an ambiguous choice fails with exit 2 and an
    example command.
    """
    same = run_a.resolve() == run_b.resolve()
    in_a, in_b = _in_run(data, run_a), _in_run(data, run_b)
    short_a, short_b = [_short(c) for c in in_a], [_short(c) for c in in_b]
    if same and a is None and b is None:
        if len(in_a) != 2:
            hint = f"; e.g. {_example(run_a, run_b, *short_a[:2])}" if len(in_a) > 2 else ""
            _fail(
                f"{run_a} has {len(in_a)} configurations; choose with --a and --b "
                f"(choices: {', '.join(short_a) or '(none)'}){hint}"
            )
        return [(in_a[0], in_a[1])]
    if (
        not same
        and a is None
        and b is None
        and len(in_a) > 1
        and sorted(short_a) == sorted(short_b)
    ):
        return [(ca, in_b[short_b.index(sa)]) for ca, sa in zip(in_a, short_a)]
    ex_a = a if a is not None else (short_a[0] if short_a else "A")
    ex_b = (
        b
        if b is not None
        else (
            ex_a
            if ex_a in short_b and not same
            else next((x for x in short_b if not (same and x == ex_a)), "B")
        )
    )
    hint = f"; e.g. {_example(run_a, run_b, ex_a, ex_b)}"
    ca = _pick(data, run_a, a, hint=hint)
    cb = _pick(data, run_b, b, exclude=ca.label if same else None, hint=hint)
    return [(ca, cb)]


def register(app: typer.Typer) -> None:
    """Add ``report`` and ``compare`` to ``app``."""

    @app.command("report")
    def report_cmd(
        runs: list[Path] = typer.Argument(
            ..., help="Run directories (runs/<name>); several are merged."
        ),
        out: Path | None = typer.Option(
            None,
            "--out",
            "-o",
            help="Report directory (default: RUN/report, "
            "or report-<names> beside the first run when merging).",
        ),
        judge_key: str | None = typer.Option(
            None,
            "--judge-key",
            help="Grades to use (grades/<key>/); default: the only one, else the one graded "
            "last (the report names the others).",
        ),
        seed: int = typer.Option(0, "--seed", help=_SEED_HELP),
        resamples: int = typer.Option(10_000, "--resamples", min=1, help=_RESAMPLES_HELP),
        drilldowns: str = typer.Option(
            "auto",
            "--drilldowns",
            metavar="inline|pages|auto",
            help="Drill-downs inside report.html (inline), as one page per task "
            "under drilldowns/ (pages), or pages only when they would add more "
            "than ~5 MB to report.html (auto).",
        ),
        as_json: bool = typer.Option(
            False,
            "--json",
            help="Print the leaderboard as JSON (report "
            "directory, judge key, one row per configuration, warnings) "
            "instead of the table.",
        ),
    ) -> None:
        """Write leaderboard.md/.csv, results.jsonl, summary.json and report.html (with
        drilldowns/ when paged) for RUN [RUN…]."""
        from rich.console import Console
        from rich.markup import escape

        from . import ReportInputError, ReportWriteError, build_report, default_out_dir
        from ._console import print_summary
        from ._html import DRILLDOWN_MODES
        from ._write import write_data

        if drilldowns not in DRILLDOWN_MODES:
            _fail(f"--drilldowns: expected one of {', '.join(DRILLDOWN_MODES)}, got {drilldowns!r}")
        try:
            data = build_report(runs, judge_key=judge_key, n_resamples=resamples, seed=seed)
        except ReportInputError as exc:
            _fail(str(exc))
        try:
            out_dir = write_data(
                data, out if out is not None else default_out_dir(runs), drilldowns=drilldowns
            )
        except ReportWriteError as exc:
            _fail(str(exc))
        if as_json:
            from ._api import ReportResult

            print(json.dumps(ReportResult(data=data, out_dir=out_dir).as_json(), indent=2))
            return
        console = Console()
        print_summary(data, console, tasks=False)
        err = Console(stderr=True)
        for w in data.warnings:
            err.print(f"[yellow]warning:[/yellow] {escape(w)}", highlight=False, soft_wrap=True)
        pages = out_dir / "drilldowns"
        extra = f" (drill-downs: {pages}{os.sep})" if data.drilldown_layout == "pages" else ""
        console.print(
            f"report: {out_dir / 'report.html'}{extra}",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )

    @app.command("compare")
    def compare_cmd(
        run_a: Path = typer.Argument(..., help="Run directory of configuration A."),
        run_b: Path = typer.Argument(
            ..., help="Run directory of configuration B (may equal RUN_A)."
        ),
        a: str | None = typer.Option(
            None,
            "--a",
            help="Configuration A when RUN_A has several: its label as the report shows it "
            "(e.g. oracle) or agent@model.",
        ),
        b: str | None = typer.Option(
            None,
            "--b",
            help="Configuration B when RUN_B has several: its label as the report shows it "
            "(e.g. null) or agent@model.",
        ),
        judge_key: str | None = typer.Option(
            None,
            "--judge-key",
            help="Grades to use; default: the only one, else the one graded last.",
        ),
        scored_only: bool = typer.Option(
            False,
            "--scored-only",
            help="Only tasks scored for both "
            "(default: missing tasks count 0, as on the leaderboard).",
        ),
        seed: int = typer.Option(0, "--seed", help=_SEED_HELP),
        resamples: int = typer.Option(10_000, "--resamples", min=1, help=_RESAMPLES_HELP),
        as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
        across_splits: bool = typer.Option(
            False,
            "--across-splits",
            help="Pair tasks by <occupation>/taskN whatever their split (main vs easy). Done "
            "automatically when the runs share no task id but do share occupation/taskN.",
        ),
    ) -> None:
        """Paired bootstrap comparison A − B on shared tasks, with effort ratios.

        Two runs with the same configurations (e.g. two `jobbench run` runs of oracle and
        null) are compared configuration by configuration unless --a/--b picks one pair
        (--json then prints a list). A run of the main split against a run of the easy
        split pairs each main task with its easy variant (the paper's main-vs-easy view:
        score difference and runtime ratio)."""
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        from ..scoring import RATIO_FIELDS, compare
        from . import ReportInputError, build_report
        from ._tables import pct, pp, pval, ratio

        dirs = [run_a] if run_a.resolve() == run_b.resolve() else [run_a, run_b]
        try:
            data = build_report(dirs, judge_key=judge_key, n_resamples=resamples, seed=seed)
        except ReportInputError as exc:
            _fail(str(exc))

        def paired(ca, cb):  # noqa: ANN001, ANN202
            pair_by: Literal["task", "occupation_task"] = (
                "occupation_task" if across_splits or _across(ca, cb) else "task"
            )
            return compare(
                ca.tasks,
                cb.tasks,
                ca.trials,
                cb.trials,
                scored_only=scored_only,
                n_resamples=resamples,
                seed=seed,
                pair_by=pair_by,
            )

        results = [(ca, cb, paired(ca, cb)) for ca, cb in _pairs(data, run_a, run_b, a, b)]
        from ..rundir import judge_key_note

        note = judge_key_note(dirs, data.judge_key, judge_key)
        if note is not None:  # the comparison used a key it picked among several: say which
            Console(stderr=True).print(
                f"[yellow]note:[/yellow] {escape(note)}", highlight=False, soft_wrap=True
            )
        if as_json:
            dumped = [cmp.model_dump(mode="json") for _, _, cmp in results]
            print(json.dumps(dumped[0] if len(dumped) == 1 else dumped, indent=2))
            return
        console = Console()
        if len(results) > 1:
            console.print(
                "Both runs have the configurations "
                f"{', '.join(_short(ca) for ca, _, _ in results)}: "
                "each is compared with its namesake (--a/--b picks one pair).",
                highlight=False,
            )
        for ca, cb, cmp in results:
            if cmp.pair_by == "occupation_task":
                console.print(
                    f"Tasks paired across splits by occupation/taskN ({_splits(ca)} "
                    f"vs {_splits(cb)}): each task is compared with its variant in the "
                    "other split.",
                    highlight=False,
                )
            table = Table(title=f"A = {escape(_named(ca))}  vs  B = {escape(_named(cb))}")
            for col in ("statistic", "A %", "B %", "A − B pp", "95 % CI", "p"):
                table.add_column(col, justify="left" if col == "statistic" else "right")
            for p in (cmp.micro, cmp.macro):
                lo_hi = "" if p.low is None else f"[{pp(p.low)}, {pp(p.high)}]"
                name = (
                    "micro (Σ points / Σ maxima)"
                    if p.statistic == "micro"
                    else "macro (mean of task scores)"
                )
                table.add_row(name, pct(p.a), pct(p.b), pp(p.difference), lo_hi, pval(p.p_value))
            console.print(table)
            console.print(
                f"{len(cmp.tasks)} shared task(s){' scored for both' if scored_only else ''}; "
                f"A better on {cmp.macro.wins}, worse on {cmp.macro.losses}, "
                f"tied on {cmp.macro.ties}. "
                f"Missing (count 0): A {len(cmp.missing_in_a)}, B {len(cmp.missing_in_b)}. "
                f"Not shared: A {len(cmp.only_in_a)}, B {len(cmp.only_in_b)}. "
                f"Paired bootstrap over tasks, {resamples:,} resamples, seed {seed}.",
                highlight=False,
            )
            rt = Table(title="Effort ratios A / B (per-trial means on shared tasks)")
            rt.add_column("figure")
            rt.add_column("A / B", justify="right")
            for k, v in RATIO_FIELDS.items():
                rt.add_row(v, ratio(cmp.ratios.get(k)))
            console.print(rt)
