"""CLI of jobbench.calibrate: ``jobbench calibrate``.

Import heavy modules inside the command function so that ``jobbench --help`` stays fast.
"""

from __future__ import annotations

import os
from pathlib import Path

import typer

_KEY_ENV = ("JUDGE_API_KEY", "JOBBENCH_JUDGE_API_KEY")


def _fail(message: str) -> None:
    from rich.console import Console
    from rich.markup import escape

    Console(stderr=True, soft_wrap=True).print(
        f"[red]error:[/red] {escape(message)}", highlight=False
    )
    raise typer.Exit(2)


def _configs(
    judge_configs: list[Path], judge_models: list[str], checks_judge: bool, common: dict
) -> list:
    """Judge configurations for the deliverable sets.

    Each ``--judge-config`` TOML file and each ``--judge-model`` defines one configuration
    completely; from the environment only the API key is taken (so JUDGE_MODEL in the
    environment cannot silently turn every configuration into the same judge). Without any
    of these flags, the judge configured as for ``jobbench grade`` (environment, then
    JOBBENCH_JUDGE_CONFIG) is used.
    """
    from ..judge import load_judge_config

    key_env = {k: os.environ[k] for k in _KEY_ENV if os.environ.get(k)}
    out = []
    for path in judge_configs:
        if not Path(path).is_file():
            raise ValueError(f"--judge-config {path}: no such file")
        out.append(load_judge_config(path, env=key_env, **common))
    for model in judge_models:
        out.append(load_judge_config(None, env=key_env, model=model, **common))
    if checks_judge:
        out.append(
            load_judge_config(
                None,
                env={},
                model=None,
                **{k: v for k, v in common.items() if k not in ("api_base", "mode", "decide")},
            )
        )
    if not out:
        out.append(load_judge_config(None, **common))
    return out


def register(app: typer.Typer) -> None:
    """Add ``calibrate`` to ``app``."""

    @app.command("calibrate")
    def calibrate_cmd(
        runs: list[Path] | None = typer.Argument(
            None,
            help="Run directories graded by two or more judges "
            "(grades/<judge-key>/); their grades are paired by trial.",
        ),
        judge_key: list[str] | None = typer.Option(
            None,
            "--judge-key",
            "-k",
            help="Only these judge keys of the runs, in this order (repeatable; default: all).",
        ),
        reference: str | None = typer.Option(
            None, "--reference", help="Reference judge key (default: the first)."
        ),
        expected: list[Path] | None = typer.Option(
            None,
            "--expected",
            help="Dataset, split or task folder: grade "
            "every solution/**/ set with deliverables/ and expected.json "
            "(e.g. the sample split's decoys). Repeatable.",
        ),
        sets: Path | None = typer.Option(
            None,
            "--sets",
            help="A folder of <name>/deliverables/ + "
            "<name>/expected.json sets for the task given by --task.",
        ),
        task: Path | None = typer.Option(None, "--task", help="The task folder the --sets answer."),
        judge_config: list[Path] | None = typer.Option(
            None,
            "--judge-config",
            help="TOML judge configuration to grade the sets with (repeatable).",
        ),
        judge_model: list[str] | None = typer.Option(
            None,
            "--judge-model",
            help="Grade the sets with this model (repeatable; shares --api-base/--mode/--decide).",
        ),
        checks_judge: bool = typer.Option(
            False,
            "--checks-judge",
            help="Also grade the sets with programmatic checks only (no LLM).",
        ),
        api_base: str | None = typer.Option(
            None, "--api-base", help="OpenAI-compatible base URL for --judge-model."
        ),
        mode: str | None = typer.Option(
            None, "--mode", help="rubric | task | criterion | official."
        ),
        decide: str | None = typer.Option(None, "--decide", help="auto | llm | checks."),
        concurrency: int | None = typer.Option(
            None, "--concurrency", help="Parallel LLM calls per judge."
        ),
        max_attempts: int | None = typer.Option(None, "--max-attempts", help="Tries per call."),
        timeout: float | None = typer.Option(None, "--timeout", help="Seconds per HTTP request."),
        prices: Path | None = typer.Option(
            None, "--prices", help="TOML price table merged over the defaults."
        ),
        cache: bool = typer.Option(
            False,
            "--cache/--no-cache",
            help="Use the verdict cache when grading sets "
            "(default off: cost and tokens then measure a fresh pass).",
        ),
        reuse_grades: bool = typer.Option(
            False,
            "--reuse-grades",
            help="Do not grade the sets again: read the "
            "grades an earlier calibrate wrote to OUT/grades/.",
        ),
        out: Path = typer.Option(Path("calibration-results"), "--out", "-o", help="Output folder."),
        max_flips: int | None = typer.Option(
            None,
            "--max-flips",
            min=0,
            help="List at most this many verdict flips in calibration.json (default: all).",
        ),
        progress: bool = typer.Option(
            True, "--progress/--no-progress", help="Progress bar while grading sets."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print calibration.json to stdout."),
    ) -> None:
        """Measure judges: agreement (percent, Cohen's kappa, Krippendorff's alpha), score deviation,
        accuracy/precision/recall/F1 against expected verdicts, verdict flips, checks vs LLM, and
        cost per grading pass. Writes calibration.md, calibration.json and cost_vs_agreement.png."""
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        from ._expected import ExpectedFileError
        from ._grades import CalibrateInputError
        from ._run import collect_sets, run_calibration

        runs = list(runs or [])
        try:
            found_sets, warnings = collect_sets(list(expected or []), sets, task)
            configs = []
            if found_sets and not reuse_grades:
                common = {
                    "api_base": api_base,
                    "mode": mode,
                    "decide": decide,
                    "concurrency": concurrency,
                    "max_attempts": max_attempts,
                    "timeout": timeout,
                    "prices_file": prices,
                    "cache": cache,
                }
                configs = _configs(
                    list(judge_config or []), list(judge_model or []), checks_judge, common
                )
            elif judge_config or judge_model or checks_judge:
                raise CalibrateInputError(
                    "--judge-config/--judge-model/--checks-judge grade deliverable sets: "
                    "give --expected or --sets too"
                )
            report, paths = run_calibration(
                runs,
                judge_keys=judge_key or None,
                reference=reference,
                sets=found_sets,
                configs=configs,
                out_dir=out,
                max_flips=max_flips,
                progress=progress,
                warnings=warnings,
                reuse_grades=reuse_grades,
            )
        except (CalibrateInputError, ExpectedFileError, ValueError, FileNotFoundError) as exc:
            _fail(str(exc))
            return
        if as_json:
            print(paths["json"].read_text(encoding="utf-8"), end="")
            return
        console = Console(soft_wrap=True, width=max(120, Console().width))
        acc = {e.judge: e for e in report.expected}
        vs_ref = {p.a: p for p in report.pairs if p.b == report.reference}
        table = Table(title=f"Judge calibration (reference: {report.reference})")
        for col in (
            "judge",
            "accuracy",
            "F1",
            "agreement",
            "kappa",
            "Δ micro pp",
            "calls/pass",
            "tokens/pass",
            "USD/pass",
        ):
            table.add_column(col, justify="left" if col == "judge" else "right")

        def f(x: float | None, d: int = 3) -> str:
            return "n/a" if x is None else f"{x:.{d}f}"

        for j in report.judges:
            e = acc.get(j.key)
            p = vs_ref.get(j.key)
            table.add_row(
                escape(j.key),
                f(e.accuracy) if e else "—",
                f(e.f1) if e else "—",
                f(p.percent_agreement) if p else ("ref" if j.key == report.reference else "—"),
                f(p.kappa) if p else "—",
                f(100 * p.score.micro_abs_diff, 2)
                if p and p.score.micro_abs_diff is not None
                else "—",
                str(j.calls_per_pass),
                f"{j.tokens_per_pass:,}",
                "unknown" if j.cost_per_pass_usd is None else f"${j.cost_per_pass_usd:.4f}",
            )
        console.print(table)
        for w in report.warnings:
            console.print(f"[yellow]warning:[/yellow] {escape(w)}", highlight=False)
        console.print(
            f"{len(report.flips)} verdict flip(s). Wrote {escape(str(paths['markdown']))}, "
            f"{escape(str(paths['json']))}, {escape(str(paths['plot']))}",
            highlight=False,
        )
