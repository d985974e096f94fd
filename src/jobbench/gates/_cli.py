"""CLI commands of jobbench.gates, registered on the main app by :func:`register`.

* ``jobbench gate PATH``: run the quality gates and print/write the gate report;
* ``jobbench review export PATH`` / ``jobbench review apply PATH SHEET``: the annotator
  review round-trip.

Import heavy modules inside command functions so that `jobbench --help` stays fast.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from ..tasks import default_dataset


def _err(msg: str) -> None:
    from rich.console import Console
    from rich.markup import escape

    Console(stderr=True).print(f"[red]error:[/red] {escape(msg)}", highlight=False, soft_wrap=True)


class _GateProgress:
    """``run_gates``'s ``on_progress``: a bar per stage (:func:`jobbench._progress.
    stderr_progress`) when stderr is a terminal, else a line per task on stderr
    (``gate [3/16] audit, lint, decoy: main/occ/task1``); silent when disabled."""

    def __init__(self, enabled: bool) -> None:
        from rich.console import Console

        self.console = Console(stderr=True)
        self.enabled = enabled
        self.live = None
        self.bars: dict[str, Any] = {}
        if enabled and self.console.is_terminal:
            from .._progress import stderr_progress

            self.live = stderr_progress(True)

    def __enter__(self) -> _GateProgress:
        if self.live is not None:
            self.live.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.live is not None:
            self.live.stop()

    def __call__(self, stage: str, done: int, total: int, task_id: str | None) -> None:
        if not self.enabled:
            return
        if self.live is not None:
            if stage not in self.bars:
                self.bars[stage] = self.live.add_task(f"gates: {stage}", total=total)
            self.live.update(self.bars[stage], completed=done)
        elif task_id is not None:
            self.console.print(
                f"gate [{done}/{total}] {stage}: {task_id}",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )


def gate_cmd(
    path: Path | None = typer.Argument(
        None,
        help="Dataset root, split, occupation or task directory (default: the bundled sample).",
    ),
    gates: str | None = typer.Option(
        None,
        "--gates",
        help="Comma-separated gates (validate,audit,lint,llm,decoy,oracle,solve,consistency). "
        "Default: validate,audit,lint,decoy plus those whose inputs you give.",
    ),
    split: list[str] | None = typer.Option(None, "--split", help="Only these splits (repeatable)."),
    tasks: str | None = typer.Option(None, "--tasks", help="Only task ids matching this glob."),
    runs: list[Path] | None = typer.Option(
        None, "--runs", help="Graded run directory for the solve trial (repeatable)."
    ),
    judge: str | None = typer.Option(
        None,
        "--judge-key",
        "--judge",
        help="Judge key under runs/<run>/grades/ (default: the only one, else the one graded "
        "last; as in `jobbench report`). --judge is the older spelling.",
    ),
    include_oracle: bool = typer.Option(
        False,
        "--include-oracle",
        help="Count the oracle agent in the solve trial (the null agent never counts).",
    ),
    oracle_run: Path | None = typer.Option(
        None, "--oracle-run", help="A graded run of the oracle and null agents."
    ),
    run_oracle: Path | None = typer.Option(
        None,
        "--run-oracle",
        help="Run the oracle and null agents into this new run directory (needs the runner).",
    ),
    consistency: Path | None = typer.Option(
        None,
        "--consistency",
        help="Grade this run's trials several times (judge cache off) and report verdict flips.",
    ),
    repeats: int = typer.Option(3, "--repeats", help="Gradings for --consistency (>= 2)."),
    judge_config: Path | None = typer.Option(
        None,
        "--judge-config",
        help="Judge TOML config for --consistency (default: the judge's file/environment).",
    ),
    llm: bool = typer.Option(
        False, "--llm", help="Also ask a model to review each criterion (advisory)."
    ),
    llm_model: str | None = typer.Option(
        None, "--llm-model", help="Model for --llm (default: $JUDGE_MODEL)."
    ),
    llm_base_url: str | None = typer.Option(
        None,
        "--llm-base-url",
        "--judge-base-url",
        help="OpenAI-compatible base URL for --llm (default: $JUDGE_API_BASE); "
        "--judge-base-url is accepted as in `jobbench grade`.",
    ),
    llm_api_key: str | None = typer.Option(
        None, "--llm-api-key", help="API key (default: $JUDGE_API_KEY)."
    ),
    rubric_threshold: float = typer.Option(
        0.6,
        "--leak-threshold",
        help="Share of a criterion's 5-word sequences in a workspace file that counts as a leak.",
    ),
    reference_threshold: float = typer.Option(
        0.8,
        "--reference-threshold",
        help=(
            "Share of a reference deliverable's 8-word sequences in a workspace file that counts "
            "as a leak."
        ),
    ),
    solve_threshold: float = typer.Option(
        0.9, "--solve-threshold", help="Minimum task reachability in the solve trial."
    ),
    strict: bool = typer.Option(False, "--strict", help="Warnings fail a gate."),
    out: Path | None = typer.Option(
        None, "--out", help="Write gates.md and gates.json into this folder."
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print the JSON report instead of markdown."
    ),
    no_progress: bool = typer.Option(
        False,
        "--no-progress",
        help="No progress on stderr (default: a bar on a terminal, else a line per task).",
    ),
) -> None:
    """Run the quality gates on tasks and report pass/fail per gate per task.

    Exit code: 0 all gates pass (warnings allowed), 1 a gate failed, 2 bad input,
    3 a requested gate could not run (e.g. an endpoint or a stage is missing).
    """
    from . import (
        AuditConfig,
        GateOptions,
        LLMReviewConfig,
        render_markdown,
        run_gates,
        write_gate_report,
    )
    from ._run import STATIC_GATES

    chosen = [g.strip() for g in gates.split(",") if g.strip()] if gates else list(STATIC_GATES)
    llm_cfg = None
    if llm or "llm" in chosen:
        try:
            llm_cfg = LLMReviewConfig.from_env(
                base_url=llm_base_url, api_key=llm_api_key, model=llm_model
            )
        except ValueError as exc:
            _err(str(exc))
            raise typer.Exit(2) from exc
    for label, value in (
        ("--leak-threshold", rubric_threshold),
        ("--reference-threshold", reference_threshold),
        ("--solve-threshold", solve_threshold),
    ):
        if not 0.0 < value <= 1.0:
            _err(f"{label} must be in (0, 1], got {value}")
            raise typer.Exit(2)
    if consistency is not None and repeats < 2:
        _err(f"--repeats must be at least 2, got {repeats}")
        raise typer.Exit(2)
    judge_cfg = None
    if judge_config is not None:
        try:
            from ..judge import load_judge_config

            judge_cfg = load_judge_config(judge_config)
        except ImportError as exc:
            _err("--judge-config needs the judge stage (jobbench.judge.load_judge_config)")
            raise typer.Exit(2) from exc
        except (FileNotFoundError, ValueError) as exc:
            _err(str(exc))
            raise typer.Exit(2) from exc
    opts = GateOptions(
        gates=chosen,
        splits=split or None,
        task_glob=tasks,
        audit=AuditConfig(
            rubric_threshold=rubric_threshold, reference_threshold=reference_threshold
        ),
        llm=llm_cfg,
        runs=list(runs or []),
        judge_key=judge,
        oracle_run=oracle_run,
        run_oracle_into=run_oracle,
        exclude_agents=("null",) if include_oracle else ("oracle", "null"),
        solve_threshold=solve_threshold,
        strict=strict,
        consistency_run=consistency,
        consistency_repeats=max(repeats, 2),
        judge_config=judge_cfg,
    )
    try:
        with _GateProgress(not no_progress) as progress:
            report = run_gates(
                path if path is not None else default_dataset(), opts, on_progress=progress
            )
    except (FileNotFoundError, ValueError) as exc:
        _err(str(exc))
        raise typer.Exit(2) from exc
    if out is not None:
        md, js = write_gate_report(report, out)
        from rich.console import Console

        Console(stderr=True).print(f"wrote {md} and {js}", highlight=False, markup=False)
    if as_json:
        print(json.dumps(report.to_json_dict(), indent=2, ensure_ascii=False))
    else:
        print(render_markdown(report))
    raise typer.Exit(report.exit_code)


review_app = typer.Typer(
    help="Annotator review of criteria: export a workbook, apply the decisions.",
    no_args_is_help=True,
)


@review_app.command("export")
def review_export_cmd(
    path: Path | None = typer.Argument(
        None,
        help="Dataset root, split, occupation or task directory (default: the bundled sample).",
    ),
    out: Path = typer.Option(Path("review.xlsx"), "--out", "-o", help="Workbook to write."),
    split: list[str] | None = typer.Option(None, "--split", help="Only these splits (repeatable)."),
    tasks: str | None = typer.Option(None, "--tasks", help="Only task ids matching this glob."),
    runs: list[Path] | None = typer.Option(
        None, "--runs", help="Graded runs: solve-trial pass counts (repeatable)."
    ),
    judge: str | None = typer.Option(
        None, "--judge-key", "--judge", help="Judge key in the runs (--judge: older spelling)."
    ),
    oracle_run: Path | None = typer.Option(
        None, "--oracle-run", help="A graded oracle run: its verdicts."
    ),
    no_decoys: bool = typer.Option(
        False, "--no-decoys", help="Do not evaluate decoys for the decoy column."
    ),
) -> None:
    """Write a review workbook (one row per criterion, keep/edit/prune columns).

    Each row shows the criterion with its lint findings, solve-trial pass count, oracle and
    decoy verdicts; the reviewer fills in decision, edited text and comment.
    """
    from ..tasks import load_dataset
    from . import (
        GateUnavailable,
        ReviewContext,
        evaluate_decoys,
        export_review,
        lint_task,
        read_grades,
        resolve_judge_key,
        solve_trial,
    )

    try:
        if path is None:
            path = default_dataset()
        ds = load_dataset(path, splits=split or None, task_glob=tasks)
    except FileNotFoundError as exc:
        _err(str(exc))
        raise typer.Exit(2) from exc
    if not ds.tasks:
        _err(f"no valid task under {path}; run `jobbench validate {path}`")
        raise typer.Exit(2)
    ctx = ReviewContext()
    for t in ds.tasks:
        lint: dict[str, list[str]] = {}
        for f in lint_task(t):
            lint.setdefault(f.where or "", []).append(f"{f.rule} ({f.severity}): {f.message}")
        ctx.lint[t.id] = lint
        if not no_decoys:
            try:
                outcomes = evaluate_decoys(t)
            except GateUnavailable:
                outcomes = []
            for o in outcomes:
                for v in o.verdicts:
                    got = "unchecked" if v.got is None else ("pass" if v.got else "fail")
                    mark = "" if v.got is None or v.got == v.expected else " MISMATCH"
                    ctx.decoys.setdefault(t.id, {}).setdefault(
                        f"{v.rubric}.{v.criterion}", []
                    ).append(
                        f"{o.name}: expected {'pass' if v.expected else 'fail'}, check {got}{mark}"
                    )
    try:
        if runs:
            st = solve_trial(list(runs), judge_key=judge, dataset=ds)
            for tr in st.tasks:
                ctx.solve[tr.task_id] = {k: (v, tr.trials) for k, v in tr.pass_counts.items()}
        if oracle_run:
            key = resolve_judge_key([oracle_run], judge)
            for g in read_grades(oracle_run, key):
                if g.agent != "oracle":
                    continue
                for rg in g.grade.rubrics:
                    for cv in rg.criteria:
                        k = f"{rg.index}.{cv.criterion_index}"
                        prev = ctx.oracle.setdefault(g.grade.task_id, {}).get(k)
                        ctx.oracle[g.grade.task_id][k] = (
                            cv.verdict if prev in (None, cv.verdict) else "mixed"
                        )
    except (FileNotFoundError, ValueError) as exc:
        _err(str(exc))
        raise typer.Exit(2) from exc
    export_review(ds, out, ctx)
    n = sum(t.criterion_count for t in ds.tasks)
    print(f"wrote {out}: {n} criteria in {len(ds.tasks)} task(s)")


@review_app.command("apply")
def review_apply_cmd(
    path: Path = typer.Argument(..., help="The dataset the sheet was exported from."),
    sheet: Path = typer.Argument(..., help="The filled-in review workbook."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Check the decisions and show the changes; write nothing."
    ),
    changelog: Path | None = typer.Option(
        None, "--changelog", help="Changelog base path (default: next to the sheet)."
    ),
) -> None:
    """Apply reviewer decisions to RUBRICS.json files, with a changelog.

    Files are written atomically. Refuses, writing nothing, when a decision would empty a
    rubric, break a `requires` chain or fail validation (exit 1).
    """
    from ..tasks import load_dataset
    from . import ReviewError, apply_review

    try:
        ds = load_dataset(path)
        result = apply_review(ds, sheet, dry_run=dry_run, changelog=changelog)
    except FileNotFoundError as exc:
        _err(str(exc))
        raise typer.Exit(2) from exc
    except ReviewError as exc:
        _err(f"review not applied ({len(exc.problems)} problem(s)); nothing was written:")
        for p in exc.problems:
            print(f"  {p}")
        raise typer.Exit(1) from exc
    n = sum(len(t.changes) for t in result.tasks)
    verb = "would change" if dry_run else "changed"
    print(f"{verb} {len(result.tasks)} task(s), {n} change(s); {result.kept} criteria kept")
    for t in result.tasks:
        for c in t.changes:
            where = f"rubrics[{c.rubric}]" + (
                f".criterion[{c.criterion}]" if c.criterion is not None else ""
            )
            print(f"  {t.task_id} {c.action} {where}")
    if result.changelog:
        print("changelog: " + ", ".join(result.changelog))


def register(app: typer.Typer) -> None:
    """Add this stage's commands to `app`: ``gate`` and the ``review`` group."""
    app.command("gate")(gate_cmd)
    app.add_typer(review_app, name="review")
